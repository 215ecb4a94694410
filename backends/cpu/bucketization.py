"""CPU kernels of bucketization: ``searchsorted`` and ``bucketize`` (their functional and ``out=`` forms).

Mirrors ``searchsorted_out_cpu``/``bucketize_out_cpu`` of ``aten/src/ATen/native/Bucketization.cpp``:
``searchsorted_pre_check`` (``dispatchcore.native.bucketization``), ``resize_output`` of the
result to the values' shape, then, unless there are no values, the positions in the dtype
``result_type(values, boundaries)`` (a number counts as a wrapped number). Invariant: each
position is what torch's binary search (``cus_lower_bound``/``cus_upper_bound``) returns, run
here on all values at once, step for step: the same probes, so NaN boundaries and unsorted
inputs give torch's indices, not numpy's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import dtypes
from dispatchcore.native.bucketization import bucketize_check, searchsorted_pre_check
from dispatchcore.tensor import wrap_cpu

from .kernels import _TORCH_NAME, _cast, _item, _new, _resize_out

__all__ = ["KERNELS"]


_NUMBER_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
                  complex: np.dtype(np.complex128)}


def _number(value: Any) -> Any:
    """A Scalar argument as torch's ``searchsorted_scalar_tensor``: a 0-d wrapped-number tensor."""
    number = _item(value)
    t = wrap_cpu(np.array(number, _NUMBER_DTYPES[type(number)]))
    t._meta = dtypes.WrappedNumber(number)
    return t


def _positions(boundaries: np.ndarray, values: np.ndarray, sorter: np.ndarray | None, right: bool) -> np.ndarray:
    """Each value's position among its row of boundaries (the last dimension), as an int64 array."""
    n = boundaries.shape[-1]
    if n == 0:  # nothing to search: every value goes first
        return np.zeros(values.shape, np.int64)
    rows = boundaries.reshape(-1, n)  # one row of boundaries, or one per leading index
    vals = values.reshape(rows.shape[0], -1)
    if sorter is not None:  # bd[sort[mid] + row start]: the sorted order, read through the sorter
        rows = np.take_along_axis(rows, sorter.reshape(rows.shape), axis=1)
    start = np.zeros(vals.shape, np.int64)
    end = np.full(vals.shape, n, np.int64)
    row = np.arange(rows.shape[0])[:, None]
    active = start < end
    while active.any():  # every value halves its range at once; a finished one stays put
        mid = start + ((end - start) >> 1)
        mid_val = rows[row, np.minimum(mid, n - 1)]
        # torch's tests, negated as written, so that comparisons with NaN go right as in torch
        up = ~(mid_val > vals) if right else ~(mid_val >= vals)
        start = np.where(active & up, mid + 1, start)
        end = np.where(active & ~up, mid, end)
        active = start < end
    return start.reshape(values.shape)


# TORCH_WARN_ONCE of searchsorted_maybe_trim_input_tensors: each of these once per program
_WARNED: set[str] = set()


def _warn_if_strided(what: str, t: Any) -> None:
    if what not in _WARNED and t is not None and not t.is_contiguous():
        _WARNED.add(what)
        warnings.warn(f"torch.searchsorted(): {what} tensor is non-contiguous, this will lower the performance due to "
                      "extra data copy when converting non-contiguous tensor to contiguous, please use contiguous "
                      f"{what} tensor if possible. This message will only appear once per program.", UserWarning,
                      stacklevel=4)


def _search_into(out: Any, boundaries: Any, values: Any, out_int32: bool, right: bool, side: Any,
                 sorter: Any) -> Any:
    """``searchsorted_out_cpu``: checks, resize, then the positions written into ``out``."""
    searchsorted_pre_check(boundaries, values, out.dtype, out_int32, right, side, sorter)
    data = _resize_out(out, tuple(values.shape))
    if values.numel() == 0:
        return out
    for what, t in (("input value", values), ("boundary", boundaries), ("sorter", sorter)):
        _warn_if_strided(what, t)
    common = dtypes.result_type(values, boundaries)
    if common.name == "bool" or common.is_complex:  # AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16)
        raise NotImplementedError(f'"searchsorted_out_cpu" not implemented for \'{_TORCH_NAME[common.np]}\'')
    np_common = common.np
    found = _positions(_cast(boundaries._cpu_data(), np_common), _cast(values._cpu_data(), np_common),
                       None if sorter is None else sorter._cpu_data(), right or side == "right")
    data[...] = found
    return out


def _empty(out_int32: bool) -> Any:
    """The result ``searchsorted_cpu`` starts from: empty, int32 or int64."""
    return wrap_cpu(_new((0,), np.dtype(np.int32 if out_int32 else np.int64)))


def searchsorted_tensor_cpu(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    return _search_into(_empty(out_int32), sorted_sequence, self, out_int32, right, side, sorter)


def searchsorted_tensor_out_cpu(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None,
                                out):
    return _search_into(out, sorted_sequence, self, out_int32, right, side, sorter)


def searchsorted_scalar_cpu(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    return searchsorted_tensor_cpu(sorted_sequence, _number(self), out_int32=out_int32, right=right, side=side,
                                   sorter=sorter)


def searchsorted_scalar_out_cpu(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None,
                                out):
    return _search_into(out, sorted_sequence, _number(self), out_int32, right, side, sorter)


def bucketize_tensor_out_cpu(self, boundaries, *, out_int32=False, right=False, out):
    bucketize_check(boundaries)
    return _search_into(out, boundaries, self, out_int32, right, None, None)


def bucketize_tensor_cpu(self, boundaries, *, out_int32=False, right=False):
    return bucketize_tensor_out_cpu(self, boundaries, out_int32=out_int32, right=right,
                                    out=_empty(out_int32))


def bucketize_scalar_cpu(self, boundaries, *, out_int32=False, right=False):
    return bucketize_tensor_cpu(_number(self), boundaries, out_int32=out_int32, right=right)


KERNELS: dict[str, Callable[..., Any]] = {
    "searchsorted.Tensor": searchsorted_tensor_cpu, "searchsorted.Tensor_out": searchsorted_tensor_out_cpu,
    "searchsorted.Scalar": searchsorted_scalar_cpu, "searchsorted.Scalar_out": searchsorted_scalar_out_cpu,
    "bucketize.Tensor": bucketize_tensor_cpu, "bucketize.Tensor_out": bucketize_tensor_out_cpu,
    "bucketize.Scalar": bucketize_scalar_cpu,
}
