"""Conformance entries of the transformations family: rot90, fliplr/flipud, the stacks and splits,
tile, ravel, broadcast_to/broadcast_tensors, atleast_*d, meshgrid."""

from __future__ import annotations

from tests.conformance.framework import OpInfo, Sample, make


def _samples_rot90(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), name="default")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(2, [0, 2]), name="half-turn-noncontig")
    yield Sample(make((2, 3, 4), dtype, rng), args=(-1, [-1, 1]), name="negative")
    yield Sample(make((2, 3), dtype, rng), args=(4,), name="full-turn")
    yield Sample(make((3,), dtype, rng), name="error-1d")


def _samples_fliplr(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), name="matrix")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((3,), dtype, rng), name="error-1d")


def _samples_flipud(rng, dtype):
    yield Sample(make((3,), dtype, rng), name="vector")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((), dtype, rng), name="error-0d")


def _samples_stack(rng, dtype):
    yield Sample([make((3,), dtype, rng), make((2,), dtype, rng)], name="vectors")
    yield Sample([make((2, 3), dtype, rng), make((2, 3), dtype, rng, noncontig=True)], name="matrices")
    yield Sample([make((), dtype, rng), make((), dtype, rng)], name="scalars")
    yield Sample([make((2, 3, 1), dtype, rng), make((2, 3, 2), dtype, rng)], name="three-d")


def _samples_vstack(rng, dtype):
    yield Sample([make((3,), dtype, rng), make((2, 3), dtype, rng)], name="vector-and-matrix")
    yield Sample([make((), dtype, rng), make((1,), dtype, rng)], name="scalars")
    yield Sample([make((2, 3), dtype, rng, noncontig=True), make((1, 3), dtype, rng)], name="noncontig")


def _samples_dstack(rng, dtype):
    yield Sample([make((3,), dtype, rng), make((3,), dtype, rng)], name="vectors")
    yield Sample([make((2, 3), dtype, rng), make((2, 3, 2), dtype, rng, noncontig=True)], name="mixed")


def _samples_column_stack(rng, dtype):
    yield Sample([make((3,), dtype, rng), make((3, 2), dtype, rng)], name="vector-and-matrix")
    yield Sample([make((), dtype, rng), make((1,), dtype, rng)], name="scalar-and-vector")
    yield Sample([make((3,), dtype, rng), make((2,), dtype, rng)], name="error-lengths")


def _samples_hsplit(rng, dtype):
    yield Sample(make((2, 4), dtype, rng), args=(2,), name="sections")
    yield Sample(make((6,), dtype, rng), args=([1, 4],), name="vector-indices")
    yield Sample(make((2, 6, 3), dtype, rng, noncontig=True), args=(3,), name="noncontig")
    yield Sample(make((2, 3), dtype, rng), args=(2,), name="error-indivisible")


def _samples_vsplit(rng, dtype):
    yield Sample(make((4, 2), dtype, rng), args=(2,), name="sections")
    yield Sample(make((5, 2, 3), dtype, rng, noncontig=True), args=([2, 3],), name="indices")
    yield Sample(make((4,), dtype, rng), args=(2,), name="error-1d")


def _samples_dsplit(rng, dtype):
    yield Sample(make((2, 2, 4), dtype, rng), args=(2,), name="sections")
    yield Sample(make((2, 2, 5), dtype, rng, noncontig=True), args=([1],), name="indices")
    yield Sample(make((2, 4), dtype, rng), args=(2,), name="error-2d")


def _samples_tile(rng, dtype):
    yield Sample(make((2, 3), dtype, rng), args=((2,),), name="fewer-dims")
    yield Sample(make((3,), dtype, rng, noncontig=True), args=((2, 2),), name="more-dims")
    yield Sample(make((), dtype, rng), args=((3,),), name="scalar")


def _samples_ravel(rng, dtype):
    yield Sample(make((2, 3), dtype, rng), name="contiguous")
    yield Sample(make((2, 3, 2), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((), dtype, rng), name="scalar")


def _samples_broadcast_to(rng, dtype):
    yield Sample(make((3,), dtype, rng), args=((2, 3),), name="new-dim")
    yield Sample(make((2, 1), dtype, rng), args=((2, 4),), name="size-one")
    yield Sample(make((3,), dtype, rng), args=((2, 2),), name="error-mismatch")


def _samples_broadcast_tensors(rng, dtype):
    yield Sample(make((3,), dtype, rng), args=(make((2, 1), dtype, rng),), name="two")
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), dtype, rng), make((), dtype, rng)), name="three")


def _samples_atleast(rng, dtype):
    yield Sample(make((), dtype, rng), name="scalar")
    yield Sample(make((3,), dtype, rng), name="vector")
    yield Sample(make((2, 3), dtype, rng, noncontig=True), name="matrix")


def _samples_meshgrid(rng, dtype):
    yield Sample(make((3,), dtype, rng), args=(make((2,), dtype, rng),), kwargs={"indexing": "ij"}, name="ij")
    yield Sample(make((3,), dtype, rng), args=(make((2,), dtype, rng), make((), dtype, rng)),
                 kwargs={"indexing": "xy"}, name="xy")


_ALL = ("float32", "float64", "int64", "bool")
_STACK_DTYPES = ("float32", "float64", "int64")


def _splat(name):
    """``f(lib, x, *rest)`` calling ``lib.<name>(x, *rest)``: the sample's input is the first tensor."""
    return lambda lib, x, *rest, **kwargs: getattr(lib, name)(x, *rest, **kwargs)


OPS = [
    OpInfo("rot90", call="rot90", samples=_samples_rot90, dtypes=_ALL, method_variant="Tensor.rot90", grad=True,
           gradgrad=True),
    OpInfo("fliplr", call="fliplr", samples=_samples_fliplr, dtypes=_ALL, method_variant="Tensor.fliplr",
           grad=True, gradgrad=True),
    OpInfo("flipud", call="flipud", samples=_samples_flipud, dtypes=_ALL, method_variant="Tensor.flipud",
           grad=True, gradgrad=True),
    OpInfo("hstack", call="hstack", samples=_samples_stack, dtypes=_STACK_DTYPES, grad=True, gradgrad=True,
           supports_out=True),
    OpInfo("vstack", call="vstack", samples=_samples_vstack, dtypes=_STACK_DTYPES, grad=True, supports_out=True),
    OpInfo("row_stack", call="row_stack", samples=_samples_vstack, dtypes=("float64",), grad=True),
    OpInfo("dstack", call="dstack", samples=_samples_dstack, dtypes=_STACK_DTYPES, grad=True, supports_out=True),
    OpInfo("column_stack", call="column_stack", samples=_samples_column_stack, dtypes=_STACK_DTYPES, grad=True,
           supports_out=True),
    OpInfo("hsplit", call="hsplit", samples=_samples_hsplit, dtypes=_ALL, method_variant="Tensor.hsplit",
           grad=True, gradgrad=True),
    OpInfo("vsplit", call="vsplit", samples=_samples_vsplit, dtypes=_ALL, method_variant="Tensor.vsplit", grad=True),
    OpInfo("dsplit", call="dsplit", samples=_samples_dsplit, dtypes=_ALL, method_variant="Tensor.dsplit", grad=True),
    OpInfo("tile", call="tile", samples=_samples_tile, dtypes=_ALL, method_variant="Tensor.tile", grad=True,
           gradgrad=True),
    OpInfo("ravel", call="ravel", samples=_samples_ravel, dtypes=_ALL, method_variant="Tensor.ravel", grad=True,
           gradgrad=True),
    OpInfo("broadcast_to", call="broadcast_to", samples=_samples_broadcast_to, dtypes=_ALL,
           method_variant="Tensor.broadcast_to", grad=True, gradgrad=True),
    OpInfo("broadcast_tensors", call=_splat("broadcast_tensors"), samples=_samples_broadcast_tensors,
           dtypes=_ALL, grad=True, grad_args=(0, 1)),
    *(OpInfo(f"atleast_{n}d", call=f"atleast_{n}d", samples=_samples_atleast, dtypes=_ALL, grad=True)
      for n in (1, 2, 3)),
    OpInfo("meshgrid", call=_splat("meshgrid"), samples=_samples_meshgrid, dtypes=_ALL, grad=True,
           grad_args=(0, 1)),
]
