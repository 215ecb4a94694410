"""OpInfo entries of the reductions family (``dispatchcore.native.reductions``).

amin/min/argmin, any (full, dim, dims)/all, prod, var/std, cumsum/cumprod, diff, sort/argsort/msort/topk,
logsumexp, norm and count_nonzero, over shapes (0-d, empty, non-contiguous), negative dims and keyword forms.
"""

from __future__ import annotations

import numpy as np

from tests.conformance.framework import OpInfo, Sample, TorchDtype, make

FLOATS = ("float32", "float64")
ALL = ("float32", "float64", "int32", "int64", "bool")


def _reduce_dim(rng, dtype):
    """Samples of ``f(input, dim, keepdim)`` with one dim."""
    x = make((3, 4), dtype, rng)
    yield Sample(x, args=(1,), name="dim1")
    yield Sample(x, args=(-2, True), name="negative-dim-keepdim")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(0,), name="noncontig")
    yield Sample(make((), dtype, rng), args=(0,), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=(1,), name="empty-other-dim")
    yield Sample(x, kwargs={"dim": 0, "keepdim": True}, name="keywords")


def _reduce_full(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), name="all")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), name="noncontig")


def _reduce_dims(rng, dtype):
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, args=((0, 2),), name="dims")
    yield Sample(x, args=((-1,), True), name="negative-keepdim")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), kwargs={"dim": 1}, name="noncontig-keyword")
    yield Sample(make((), dtype, rng), args=(0,), name="zero-d")


def _any_full(rng, dtype):
    yield from _reduce_full(rng, dtype)
    yield Sample(make((0, 3), dtype, rng), name="empty")
    yield Sample(np.zeros((2, 3), dtype), name="all-zero")


def _var(rng, dtype):
    x = make((3, 5), dtype, rng)
    yield Sample(x, name="all")
    yield Sample(x, args=(1,), name="dim")
    yield Sample(x, args=((0, 1), False, True), name="unbiased-false-keepdim")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), kwargs={"dim": -1, "correction": 0}, name="correction")


def _scan(rng, dtype):
    x = make((3, 4), dtype, rng)
    yield Sample(x, args=(1,), name="dim1")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(-2,), name="noncontig-negative")
    yield Sample(make((), dtype, rng), args=(0,), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=(0,), name="empty")
    yield Sample(x, args=(0,), kwargs={"dtype": TorchDtype("float64")}, name="dtype")


def _sort(rng, dtype):
    x = make((3, 5), dtype, rng)
    yield Sample(x, name="last-dim")
    yield Sample(x, args=(0, True), name="dim0-descending")
    yield Sample(make((4, 3), dtype, rng, noncontig=True), kwargs={"dim": -1}, name="noncontig")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(x, kwargs={"stable": True, "descending": True}, name="stable")


def _msort(rng, dtype):
    yield Sample(make((4, 3), dtype, rng), name="matrix")
    yield Sample(make((5,), dtype, rng, noncontig=True), name="noncontig-vector")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((0, 2), dtype, rng), name="empty")


def _diff(rng, dtype):
    x = make((3, 4), dtype, rng)
    yield Sample(x, name="last-dim")
    yield Sample(x, args=(2, 0), name="second-order-dim0")
    yield Sample(make((4, 3), dtype, rng, noncontig=True), kwargs={"dim": -1}, name="noncontig")
    yield Sample(x, kwargs={"prepend": make((3, 1), dtype, rng), "append": make((3, 2), dtype, rng)},
                 name="prepend-append")
    yield Sample(x, kwargs={"n": 0}, name="order-zero")
    yield Sample(make((0, 3), dtype, rng), args=(1, 0), name="empty")
    yield Sample(make((), dtype, rng), name="error-zero-d")


def _topk(rng, dtype):
    x = make((3, 5), dtype, rng)
    yield Sample(x, args=(2,), name="k2")
    yield Sample(x, args=(2, 0, False), name="smallest-dim0")
    yield Sample(make((4, 3), dtype, rng, noncontig=True), args=(1,), kwargs={"dim": -1}, name="noncontig")
    yield Sample(make((), dtype, rng), args=(1,), name="zero-d")


def _logsumexp(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1,), name="dim1")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=((0, -1), True), name="dims-keepdim")


def _norm(rng, dtype):
    x = make((3, 4), dtype, rng)
    yield Sample(x, name="fro")
    yield Sample(x, args=(1, 1), name="p1-dim1")
    yield Sample(x, args=(3, (0, 1), True), name="p3-keepdim")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), kwargs={"p": 1.5, "dim": -1}, name="noncontig")


def _count_nonzero(rng, dtype):
    x = make((3, 4), dtype, rng)
    yield Sample(x, name="all")
    yield Sample(x, args=(1,), name="dim")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=((0, 2),), name="dims")


def _prod(rng, dtype):
    yield from _reduce_full(rng, dtype)
    yield Sample(make((3, 4), dtype, rng), args=(1,), name="dim")
    yield Sample(make((3, 4), dtype, rng), args=(-1, True), name="keepdim")
    yield Sample(make((0, 3), dtype, rng), name="empty")


def _min_other(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(make((4,), dtype, rng),), name="broadcast")


OPS = [
    OpInfo("amin", call="amin", samples=_reduce_dims, dtypes=ALL, aten=("amin",), grad=True, gradgrad=True),
    OpInfo("min", call="min", samples=_reduce_full, dtypes=ALL, aten=("min",), grad=True, gradgrad=True),
    OpInfo("min.dim", call="min", samples=_reduce_dim, dtypes=ALL, aten=("min.dim",), grad=True, gradgrad=True),
    OpInfo("min.other", call="min", samples=_min_other, dtypes=ALL, aten=("min.other",), grad=True, gradgrad=True),
    OpInfo("max.dim", call="Tensor.max", samples=_reduce_dim, dtypes=ALL, aten=("max.dim",), grad=True),
    OpInfo("argmin", call="argmin", samples=_reduce_dim, dtypes=("float32", "float64", "int64"), aten=("argmin",)),
    OpInfo("any", call="any", samples=_reduce_dims, dtypes=ALL + ("uint8",), aten=("any.dims",)),
    OpInfo("any.dim", call="any", samples=_reduce_dim, dtypes=ALL, aten=("any.dim",)),
    OpInfo("any.full", call="any", samples=_any_full, dtypes=ALL + ("uint8",), aten=("any",),
           method_variant="Tensor.any", supports_out=True),
    OpInfo("all", call="all", samples=_reduce_full, dtypes=ALL + ("uint8",), aten=("all",)),
    OpInfo("prod", call="prod", samples=_prod, dtypes=ALL, aten=("prod", "prod.dim_int"), grad=True, gradgrad=True,
           xfails={f"float64/{name}@gradgradcheck": "a product of 12 values up to 9 (~1e11) is beyond finite "
                   "differences: torch.autograd.gradgradcheck fails on this sample too"
                   for name in ("all", "noncontig")}),
    OpInfo("var", call="var", samples=_var, dtypes=FLOATS, aten=("var.correction", "var.dim"), grad=True,
           gradgrad=True),
    OpInfo("std", call="Tensor.std", samples=_var, dtypes=FLOATS, aten=("std.correction",), grad=True),
    OpInfo("var_mean", call="var_mean", samples=_var, dtypes=FLOATS, aten=("var_mean.correction",), grad=True),
    OpInfo("cumsum", call="cumsum", samples=_scan, dtypes=ALL, aten=("cumsum",), grad=True, gradgrad=True),
    OpInfo("cumprod", call="Tensor.cumprod", samples=_scan, dtypes=FLOATS, aten=("cumprod",), grad=True,
           gradgrad=True),
    OpInfo("sort", call="sort", samples=_sort, dtypes=("float32", "float64", "int64"),
           aten=("sort", "sort.stable"), grad=True, gradgrad=True),
    OpInfo("argsort", call="argsort", samples=_sort, dtypes=("float32", "float64", "int64"),
           aten=("sort", "sort.stable"), method_variant="Tensor.argsort"),
    OpInfo("msort", call="msort", samples=_msort, dtypes=("float32", "float64", "int64"), aten=("sort",),
           grad=True, gradgrad=True, method_variant="Tensor.msort", supports_out=True),
    OpInfo("diff", call="diff", samples=_diff, dtypes=("float32", "float64", "int64", "bool"), aten=("slice.Tensor",),
           grad=True, gradgrad=True, method_variant="Tensor.diff", supports_out=True),
    OpInfo("topk", call="topk", samples=_topk, dtypes=("float32", "float64", "int64"), aten=("topk",), grad=True,
           gradgrad=True),
    OpInfo("logsumexp", call="logsumexp", samples=_logsumexp, dtypes=FLOATS, aten=("logsumexp",), grad=True,
           gradgrad=True),
    OpInfo("norm", call="norm", samples=_norm, dtypes=FLOATS, aten=("linalg_vector_norm",), grad=True,
           gradgrad=True),
    OpInfo("count_nonzero", call="count_nonzero", samples=_count_nonzero, dtypes=ALL,
           aten=("count_nonzero.dim_IntList",)),
]
