"""Conformance entries of the indexing family: gather/scatter, index_add, index/index_put, take/put, masks, item.

Samples cover 0-d, empty and non-contiguous inputs, negative dims, broadcasting (masks, index_put
values) and keyword forms; ``__getitem__``/``__setitem__`` with advanced indices have entries of
their own (``Tensor.__getitem__``), which lower to ``index.Tensor``/``index_put_`` as torch does.
"""

from __future__ import annotations

import numpy as np

from tests.conformance.framework import OpInfo, Sample, make

_ALL = ("float32", "float64", "int64", "bool")
_I = np.int64


def _idx(*rows):
    return np.array(rows, dtype=_I)


def _gather(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, _idx([0, 1], [2, 3], [1, 1])), name="dim1")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-2, _idx([0, 2, 1, 0])), name="noncontig-negdim")
    yield Sample(make((), dtype, rng), args=(0, np.array(0, _I)), name="zero-d")
    yield Sample(make((3, 4), dtype, rng), args=(1, np.zeros((3, 0), _I)), name="empty-index")
    yield Sample(make((3, 4), dtype, rng), args=(1, _idx([0, 1], [2, 3], [1, 1])), kwargs={"sparse_grad": False},
                 name="keyword")


def _scatter_src(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, _idx([0, 1], [2, 3], [1, 3]), make((3, 2), dtype, rng)),
                 name="dim1")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(0, _idx([2, 0, 1, 0]), make((2, 4), dtype, rng)),
                 name="noncontig-smaller-index")
    yield Sample(make((), dtype, rng), args=(0, np.array(0, _I), make((), dtype, rng)), name="zero-d")
    yield Sample(make((3, 4), dtype, rng), args=(-1, np.zeros((3, 0), _I), make((3, 2), dtype, rng)),
                 name="empty-index")


def _scatter_value(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, _idx([0, 1], [2, 3], [1, 3]), 1), name="dim1")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-2, _idx([2, 0, 1, 0])), kwargs={"value": 0},
                 name="noncontig-keyword")


def _scatter_add(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, _idx([0, 0], [3, 3], [1, 2]), make((3, 2), dtype, rng)),
                 name="duplicates")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-2, _idx([2, 0, 2, 0]), make((2, 4), dtype, rng)),
                 name="noncontig-negdim")
    yield Sample(make((), dtype, rng), args=(0, np.array(0, _I), make((), dtype, rng)), name="zero-d")


def _scatter_reduce(rng, dtype):
    index = _idx([0, 0], [3, 3], [1, 2])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        if reduce == "mean" and np.dtype(dtype) == np.bool_:
            continue
        for include_self in (True, False):
            yield Sample(make((3, 4), dtype, rng, noncontig=include_self),
                         args=(1, index, make((3, 2), dtype, rng), reduce),
                         kwargs={"include_self": include_self}, name=f"{reduce}-{include_self}")


def _index_select(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, np.array([3, 0, 3], _I)), name="dim1")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-2, np.array([2, 0], _I)), name="noncontig-negdim")
    yield Sample(make((), dtype, rng), args=(0, np.array([0], _I)), name="zero-d")
    yield Sample(make((3, 4), dtype, rng), args=(0, np.zeros(0, _I)), name="empty-index")


def _index(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=([np.array([2, 0, 2], _I)],), name="rows")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=([None, np.array([[0, 1], [1, 0]], _I)],),
                 name="noncontig-second-dim")
    yield Sample(make((2, 3, 4), dtype, rng), args=([np.array([0, 1], _I), None, np.array([3, 0], _I)],),
                 name="non-adjacent")
    yield Sample(make((3, 4), dtype, rng), args=([np.array([True, False, True])],), name="mask")
    yield Sample(make((3, 4), dtype, rng), args=([np.array([-1, 0], _I), np.array([[1], [2]], _I)],),
                 name="broadcast-negative")
    yield Sample(make((3, 4), dtype, rng), args=([np.zeros(0, _I)],), name="empty")


def _index_put(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=([np.array([2, 0], _I)], make((2, 4), dtype, rng)), name="rows")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=([None, np.array([1, 3], _I)], make((2,), dtype, rng)),
                 name="noncontig-broadcast-values")
    yield Sample(make((3, 4), dtype, rng), args=([np.array([0, 0], _I)], make((), dtype, rng), True),
                 name="accumulate-duplicates")
    yield Sample(make((3, 4), dtype, rng), args=([np.array([[True, False, True, False]] * 3)], make((), dtype, rng)),
                 name="mask-scalar")
    yield Sample(make((2, 3, 4), dtype, rng), args=([np.array([0, 1], _I), None, np.array([3, 0], _I)],
                                                    make((2, 3), dtype, rng)), kwargs={"accumulate": False},
                 name="non-adjacent-keyword")


def _masked_scatter(rng, dtype):
    mask = rng.random((3, 4)) > 0.5
    yield Sample(make((3, 4), dtype, rng), args=(mask, make((12,), dtype, rng)), name="same-shape")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(np.array([True, False, True, False]),
                                                                 make((3, 4), dtype, rng)), name="broadcast-mask")
    yield Sample(make((), dtype, rng), args=(np.array(True), make((2,), dtype, rng)), name="zero-d")


def _masked_fill(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(rng.random((3, 4)) > 0.5, 1), name="scalar")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(np.array([True, False, True, False]),
                                                                 make((), dtype, rng)), name="tensor-broadcast")
    yield Sample(make((0, 4), dtype, rng), args=(np.zeros(4, bool), 0), name="empty")


def _nonzero(rng, dtype):
    yield Sample(make((3, 4), dtype, rng, low=-1, high=2), name="matrix")
    yield Sample(make((3, 4), dtype, rng, low=-1, high=2, noncontig=True), name="noncontig")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), name="empty")


def _take(rng, dtype):
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(np.array([[0, -1], [5, 5]], _I),), name="negative")
    yield Sample(make((), dtype, rng), args=(np.array(0, _I),), name="zero-d")


def _index_add(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(1, np.array([3, 0, 3], _I), make((3, 3), dtype, rng)),
                 name="dim1-duplicates")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-2, np.array([2, 0], _I), make((2, 4), dtype, rng)),
                 kwargs={"alpha": 2}, name="noncontig-negdim-alpha")
    yield Sample(make((5,), dtype, rng), args=(0, np.array([4, 4, 1], np.int32), make((3,), dtype, rng)),
                 name="vector-int32-index")
    yield Sample(make((), dtype, rng), args=(0, np.array([0], _I), make((), dtype, rng)), name="zero-d")
    yield Sample(make((3, 4), dtype, rng), args=(0, np.zeros(0, _I), make((0, 4), dtype, rng)), name="empty-index")
    yield Sample(make((3, 4), dtype, rng), args=(0, np.array([3], _I), make((1, 4), dtype, rng)), name="error-index")
    yield Sample(make((3,), dtype, rng), args=(0, np.array([-1], _I), make((1,), dtype, rng)),
                 name="error-index-vector")
    yield Sample(make((3, 4), dtype, rng), args=(1, np.array([0], _I), make((3, 2), dtype, rng)), name="error-count")
    yield Sample(make((3, 4), dtype, rng), args=(1, np.array([0, 1], _I), make((2, 2), dtype, rng)),
                 name="error-shape")


def _put(rng, dtype):
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(np.array([[0, -1], [5, 10]], _I),
                                                                 make((2, 2), dtype, rng)), name="noncontig-negative")
    yield Sample(make((3, 4), dtype, rng), args=(np.array([1, 1, 7], _I), make((3,), dtype, rng), True),
                 name="accumulate-duplicates")
    yield Sample(make((2, 3), dtype, rng), args=(np.array([4, 0], _I), make((2,), dtype, rng)),
                 kwargs={"accumulate": False}, name="keyword")
    yield Sample(make((), dtype, rng), args=(np.array(0, _I), make((), dtype, rng)), name="zero-d")
    yield Sample(make((3,), dtype, rng), args=(np.array([3], _I), make((1,), dtype, rng)), name="error-index")
    yield Sample(make((3,), dtype, rng), args=(np.array([0, 1], _I), make((1,), dtype, rng)), name="error-count")


def _item(rng, dtype):
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((1, 1), dtype, rng), name="one-element")


def _getitem(rng, dtype):
    x = make((3, 4), dtype, rng)
    yield Sample(x, args=(np.array([2, 0, 2], _I),), name="tensor")
    yield Sample(x, args=(np.array([True, False, True]),), name="mask")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=((slice(None), [0, 3]),), name="slice-list")
    yield Sample(make((2, 3, 4), dtype, rng), args=(([0, 1], slice(None), [1, 2]),), name="non-adjacent")
    yield Sample(make((2, 3, 4), dtype, rng), args=((Ellipsis, [0, 1], None),), name="ellipsis-none")
    yield Sample(x, args=((1, [0, 1]),), name="int-list")


def _setitem(lib, input, index, value):  # noqa: A002 - the framework's name
    out = input.clone()
    out[index] = value
    return out


def _setitem_samples(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(np.array([2, 0], _I), make((2, 4), dtype, rng)), name="rows")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=((slice(1, None), [0, 3]), make((), dtype, rng)),
                 name="view-then-index")
    yield Sample(make((3, 4), dtype, rng), args=(np.array([True, False, True]), make((1, 4), dtype, rng)),
                 name="mask-broadcast")


# torch's own backward refuses these: src's gradient (grad.gather(dim, index)) has index's shape,
# which does not expand to a larger src ("ScatterBackward0 returned an invalid gradient ...")
_SRC_REASON = "src larger than index: torch's backward raises the same 'invalid gradient' error"
_SRC_LARGER_THAN_INDEX = {f"{name}@{check}": _SRC_REASON for name in ("noncontig-smaller-index", "empty-index")
                          for check in ("gradcheck", "gradgradcheck")}

OPS = [
    OpInfo("gather", call="gather", samples=_gather, dtypes=_ALL, aten=("gather",), grad=True, gradgrad=True),
    OpInfo("scatter.src", call="scatter", samples=_scatter_src, dtypes=_ALL, aten=("scatter.src",), grad=True,
           gradgrad=True, grad_args=(0, 3), xfails=_SRC_LARGER_THAN_INDEX),
    OpInfo("scatter.value", call="scatter", samples=_scatter_value, dtypes=_ALL, aten=("scatter.value",), grad=True,
           gradgrad=True),
    OpInfo("scatter_add", call="scatter_add", samples=_scatter_add, dtypes=_ALL, aten=("scatter_add",), grad=True,
           gradgrad=True, grad_args=(0, 3), xfails={"noncontig-negdim@gradcheck": _SRC_REASON,
                                                     "noncontig-negdim@gradgradcheck": _SRC_REASON}),
    OpInfo("scatter_reduce.two", call="scatter_reduce", samples=_scatter_reduce, dtypes=_ALL,
           aten=("scatter_reduce.two",), grad=True, grad_args=(0, 3)),
    OpInfo("index_select", call="index_select", samples=_index_select, dtypes=_ALL, aten=("index_select",),
           grad=True, gradgrad=True),
    OpInfo("index.Tensor", call="ops.aten.index.Tensor", samples=_index, dtypes=_ALL, aten=("index.Tensor",),
           grad=True, gradgrad=True),
    OpInfo("index_put", call="ops.aten.index_put.default", samples=_index_put, dtypes=_ALL, aten=("index_put",),
           grad=True, gradgrad=True, grad_args=(0, 2)),
    OpInfo("masked_scatter", call="Tensor.masked_scatter", samples=_masked_scatter, dtypes=_ALL,
           aten=("masked_scatter",), grad=True, gradgrad=True, grad_args=(0, 2)),
    OpInfo("masked_fill", call="Tensor.masked_fill", samples=_masked_fill, dtypes=_ALL, grad=True, gradgrad=True),
    OpInfo("nonzero", call="nonzero", samples=_nonzero, dtypes=_ALL, aten=("nonzero",)),
    OpInfo("take", call="take", samples=_take, dtypes=_ALL, grad=True, gradgrad=True),
    OpInfo("index_add", call="index_add", samples=_index_add, dtypes=_ALL, aten=("index_add", "index_add_",
                                                                                "index_add.out"),
           grad=True, gradgrad=True, grad_args=(0, 3), method_variant="Tensor.index_add",
           inplace_variant="Tensor.index_add_", supports_out=True),
    OpInfo("put", call="put", samples=_put, dtypes=_ALL, aten=("put", "put_"), grad=True, gradgrad=True,
           grad_args=(0, 2), method_variant="Tensor.put", inplace_variant="Tensor.put_"),
    OpInfo("_local_scalar_dense", call="ops.aten._local_scalar_dense.default", samples=_item, dtypes=_ALL,
           aten=("_local_scalar_dense",)),
    OpInfo("Tensor.__getitem__-advanced", call="Tensor.__getitem__", samples=_getitem, dtypes=_ALL, grad=True,
           gradgrad=True),
    OpInfo("Tensor.__setitem__-advanced", call=_setitem, samples=_setitem_samples, dtypes=_ALL, grad=True,
           gradgrad=True, grad_args=(0, 2)),
]
