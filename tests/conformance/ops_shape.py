"""Conformance entries of the shape family: views, splits, flips, pads, triangles, scatters, copy, randperm, resize_."""

from __future__ import annotations

import numpy as np

from tests.conformance.framework import OpInfo, Sample, TorchDtype, make


def _samples_flip(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=([0],), name="dim0")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=([0, -1],), name="noncontig-negative")
    yield Sample(make((), dtype, rng), args=([],), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=([1],), name="empty")


def _samples_roll(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, 0), name="dim0")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=((1, -2), (0, -1)), name="two-dims")
    yield Sample(make((3, 4), dtype, rng), args=(5,), name="flattened")
    yield Sample(make((), dtype, rng), args=(1,), name="zero-d")


def _samples_repeat(rng, dtype):
    yield Sample(make((2, 3), dtype, rng), args=(2, 1), name="same-rank")
    yield Sample(make((2, 3), dtype, rng, noncontig=True), args=(1, 2, 3), name="new-leading-dim")
    yield Sample(make((), dtype, rng), args=(3,), name="zero-d")
    yield Sample(make((0, 2), dtype, rng), args=(2, 2), name="empty")


def _samples_pad(rng, dtype):
    yield Sample(make((2, 3), dtype, rng), args=([1, 2],), name="last-dim")
    yield Sample(make((2, 3), dtype, rng, noncontig=True), args=([1, 0, 0, 2],), kwargs={"value": 1}, name="value")
    yield Sample(make((3, 4), dtype, rng), args=([-1, 1, -1, 0],), name="negative-crops")
    yield Sample(make((0, 3), dtype, rng), args=([1, 1],), name="empty")


def _samples_diagonal(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), name="main")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), kwargs={"offset": 1}, name="offset")
    yield Sample(make((2, 3, 4), dtype, rng), args=(-1, -1, 0), name="negative-dims")
    yield Sample(make((0, 3), dtype, rng), name="empty")


def _samples_split(rng, dtype):
    yield Sample(make((5, 2), dtype, rng), args=(2,), name="even-int")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=([1, 3],), kwargs={"dim": -1}, name="sizes")
    yield Sample(make((0, 2), dtype, rng), args=(2,), name="empty")


def _samples_chunk(rng, dtype):
    yield Sample(make((5, 2), dtype, rng), args=(2,), name="uneven")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(3, -1), name="last-dim")


def _samples_unbind(rng, dtype):
    yield Sample(make((3, 2), dtype, rng), name="dim0")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-1,), name="last-dim")


def _samples_narrow(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, 1, 2), name="middle")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-2, -2, 2), name="negative")


def _samples_flatten(rng, dtype):
    yield Sample(make((2, 3, 4), dtype, rng), name="all")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(1,), name="noncontig-copies")
    yield Sample(make((), dtype, rng), name="zero-d")


def _samples_unflatten(rng, dtype):
    yield Sample(make((2, 6), dtype, rng), args=(1, (2, 3)), name="sizes")
    yield Sample(make((2, 6), dtype, rng), args=(-1, (3, -1)), name="inferred")


def _samples_tril(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), name="main")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(1,), name="batched-offset")
    yield Sample(make((3, 3), dtype, rng), kwargs={"diagonal": -1}, name="below")
    yield Sample(make((0, 3), dtype, rng), name="empty")


def _samples_movedim(rng, dtype):
    yield Sample(make((2, 3, 4), dtype, rng), args=(0, -1), name="int")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=((0, 1), (2, 0)), name="lists")


def _samples_swapaxes(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(0, 1), name="matrix")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(-1, 0), name="negative")


def _samples_batched_matrix(rng, dtype):
    yield Sample(make((2, 3, 4), dtype, rng), name="batch")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="matrix")


def _samples_as(rng, dtype):
    yield Sample(make((1, 4), dtype, rng), args=(make((3, 4), dtype, rng),), name="broadcast")


def _samples_view_as(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(make((2, 6), dtype, rng),), name="same-numel")


def _samples_select_scatter(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(make((4,), dtype, rng), 0, 1), name="row")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((3,), dtype, rng), -1, -1), name="negative")


def _samples_slice_scatter(rng, dtype):
    yield Sample(make((4, 3), dtype, rng), args=(make((2, 3), dtype, rng), 0, 1, 3), name="rows")
    yield Sample(make((3, 6), dtype, rng), args=(make((3, 2), dtype, rng),),
                 kwargs={"dim": 1, "start": 0, "step": 3}, name="step")


def _samples_diagonal_scatter(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(make((3,), dtype, rng),), name="main")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((3,), dtype, rng), 1), name="offset")


def _samples_like(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), name="contiguous")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((), dtype, rng), name="zero-d")


def _samples_full_like(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1,), name="one")
    yield Sample(make((2, 3), dtype, rng, noncontig=True), args=(0,), name="noncontig")


def _samples_new(rng, dtype):
    yield Sample(make((3,), dtype, rng), args=((2, 3),), name="size")
    yield Sample(make((3,), dtype, rng), args=((0,),), name="empty")


def _samples_fill(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1,), name="scalar")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(np.array(1, dtype=dtype),), name="tensor")


def _samples_copy(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(make((3, 4), dtype, rng),), name="same-shape")
    yield Sample(make((3, 4), dtype, rng), args=(make((4,), dtype, rng),), name="broadcast-src")
    yield Sample(make((2, 3), dtype, rng, noncontig=True), args=(make((2, 3), np.int64, rng),),
                 name="noncontig-self-int-src")
    yield Sample(make((3, 2), dtype, rng).T, args=(make((1, 3), np.float64, rng, low=0, high=1),),
                 kwargs={"non_blocking": True}, name="transposed-self-float-src")
    yield Sample(make((), dtype, rng), args=(make((), dtype, rng),), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=(make((3,), dtype, rng),), name="empty")
    yield Sample(make((2, 3), dtype, rng), args=(make((3, 2), dtype, rng),), name="error-shape")


def _samples_randperm(rng, dtype):
    as_dtype = TorchDtype(dtype.name)
    yield Sample(5, kwargs={"dtype": as_dtype}, name="five")
    yield Sample(1, kwargs={"dtype": as_dtype}, name="one")
    yield Sample(0, kwargs={"dtype": as_dtype}, name="empty")
    yield Sample(-1, kwargs={"dtype": as_dtype}, name="error-negative")


def _samples_resize(rng, dtype):
    """Sizes within the storage only: torch cannot grow the storage of a tensor made by ``from_numpy``.

    ``TorchDtype`` resolves any attribute of the library by name: here, memory formats.
    """
    yield Sample(make((3, 4), dtype, rng), args=(2, 5), name="shrink")
    yield Sample(make((3, 4), dtype, rng), args=([4, 3],), name="same-numel-list")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(5,), name="noncontig-reads-storage")
    yield Sample(make((4, 3), dtype, rng).T, args=((3, 4),), name="same-size-keeps-strides")
    yield Sample(make((4, 3), dtype, rng).T, args=((3, 4),), kwargs={"memory_format": TorchDtype("contiguous_format")},
                 name="same-size-contiguous-format")
    yield Sample(make((2, 3, 2, 2), dtype, rng), args=(1, 3, 2, 2),
                 kwargs={"memory_format": TorchDtype("channels_last")}, name="channels-last")
    yield Sample(make((2, 3), dtype, rng), args=([],), name="zero-d")
    yield Sample(make((2, 3), dtype, rng), args=(0, 4), name="empty")
    yield Sample(make((2, 3), dtype, rng), args=(2, -1), name="error-negative")
    yield Sample(make((2, 3), dtype, rng), args=(3,), kwargs={"memory_format": TorchDtype("channels_last")},
                 name="error-channels-last-rank")


_ALL = ("float32", "float64", "int64", "bool")
_FLOAT = ("float32", "float64")

OPS = [
    OpInfo("flip", call="flip", samples=_samples_flip, dtypes=_ALL, aten=("flip",), grad=True, gradgrad=True),
    OpInfo("roll", call="roll", samples=_samples_roll, dtypes=_ALL, aten=("roll",), grad=True, gradgrad=True),
    OpInfo("repeat", call="Tensor.repeat", samples=_samples_repeat, dtypes=_ALL, aten=("repeat",), grad=True,
           gradgrad=True),
    OpInfo("constant_pad_nd", call="constant_pad_nd", samples=_samples_pad, dtypes=("float32", "float64", "int64"),
           aten=("constant_pad_nd",), grad=True, gradgrad=True),
    OpInfo("diagonal", call="diagonal", samples=_samples_diagonal, dtypes=_ALL, aten=("diagonal",), grad=True,
           gradgrad=True),
    OpInfo("split", call="split", samples=_samples_split, dtypes=_ALL, aten=("split.Tensor", "split_with_sizes"),
           grad=True, gradgrad=True),
    OpInfo("chunk", call="chunk", samples=_samples_chunk, dtypes=_ALL, aten=("chunk",), grad=True, gradgrad=True),
    OpInfo("unbind", call="unbind", samples=_samples_unbind, dtypes=_ALL, aten=("unbind.int",), grad=True,
           gradgrad=True),
    OpInfo("narrow", call="narrow", samples=_samples_narrow, dtypes=_ALL, aten=("narrow",), grad=True, gradgrad=True),
    OpInfo("flatten", call="flatten", samples=_samples_flatten, dtypes=_ALL, aten=("flatten.using_ints",), grad=True,
           gradgrad=True),
    OpInfo("unflatten", call="unflatten", samples=_samples_unflatten, dtypes=_ALL, aten=("unflatten.int",),
           grad=True, gradgrad=True),
    OpInfo("tril", call="tril", samples=_samples_tril, dtypes=_ALL, aten=("tril",), grad=True, gradgrad=True),
    OpInfo("triu", call="triu", samples=_samples_tril, dtypes=_ALL, aten=("triu",), grad=True, gradgrad=True),
    OpInfo("movedim", call="movedim", samples=_samples_movedim, dtypes=_ALL,
           aten=("movedim.int", "movedim.intlist"), grad=True, gradgrad=True),
    OpInfo("swapaxes", call="swapaxes", samples=_samples_swapaxes, dtypes=_ALL, aten=("swapaxes",), grad=True,
           gradgrad=True),
    OpInfo("adjoint", call="adjoint", samples=_samples_batched_matrix, dtypes=_ALL, aten=("adjoint",), grad=True,
           gradgrad=True),
    OpInfo("expand_as", call="Tensor.expand_as", samples=_samples_as, dtypes=_ALL, aten=("expand_as",), grad=True,
           gradgrad=True),
    OpInfo("view_as", call="Tensor.view_as", samples=_samples_view_as, dtypes=_ALL, aten=("view_as",), grad=True,
           gradgrad=True),
    OpInfo("reshape_as", call="Tensor.reshape_as", samples=_samples_view_as, dtypes=_ALL, aten=("reshape_as",),
           grad=True, gradgrad=True),
    OpInfo("select_scatter", call="select_scatter", samples=_samples_select_scatter, dtypes=_ALL,
           aten=("select_scatter",), grad=True, gradgrad=True, grad_args=(0, 1)),
    OpInfo("slice_scatter", call="slice_scatter", samples=_samples_slice_scatter, dtypes=_ALL,
           aten=("slice_scatter",), grad=True, gradgrad=True, grad_args=(0, 1)),
    OpInfo("diagonal_scatter", call="diagonal_scatter", samples=_samples_diagonal_scatter, dtypes=_ALL,
           aten=("diagonal_scatter",), grad=True, gradgrad=True, grad_args=(0, 1)),
    OpInfo("fill", call="fill", samples=_samples_fill, dtypes=_FLOAT, aten=("fill.Scalar", "fill.Tensor"),
           grad=True, gradgrad=True),
    OpInfo("zeros_like", call="zeros_like", samples=_samples_like, dtypes=_ALL, aten=("zeros_like",)),
    OpInfo("ones_like", call="ones_like", samples=_samples_like, dtypes=_ALL, aten=("ones_like",)),
    OpInfo("full_like", call="full_like", samples=_samples_full_like, dtypes=_ALL, aten=("full_like",)),
    OpInfo("new_zeros", call="Tensor.new_zeros", samples=_samples_new, dtypes=_ALL, aten=("new_zeros",)),
    OpInfo("new_ones", call="Tensor.new_ones", samples=_samples_new, dtypes=_ALL, aten=("new_ones",)),
    # torch has no derivative for aten::copy (a NotImplemented node: tests/unit/test_native_shape.py)
    OpInfo("copy", call="ops.aten.copy.default", samples=_samples_copy, dtypes=_ALL, aten=("copy",)),
    # in place (the mutated input compares too); growing storages: tests/differential/test_vs_torch_shape.py
    OpInfo("resize_", call="Tensor.resize_", samples=_samples_resize, dtypes=_ALL, aten=("resize_",)),
    # random: dtype, shape and strides compare; tests/unit/test_native_shape.py checks the permutation
    OpInfo("randperm", call="randperm", samples=_samples_randperm, dtypes=("int64", "int32", "float32", "bool"),
           aten=("randperm",), compare_values=False),
]
