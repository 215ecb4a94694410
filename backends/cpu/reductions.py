"""CPU kernels of the reductions family (``dispatchcore.native.reductions``): numpy in, tensor out.

Mirrors the CPU kernels of ``ReduceOps.cpp``, ``Sorting.cpp``, ``TensorCompare.cpp`` and
``LinearAlgebra.cpp``: result dtypes, checks and warnings come from the family's shared rules
(so Meta agrees), numpy does the arithmetic. Reductions return contiguous results (``_result``);
``sort`` keeps a dense input's strides (its values start as a ``preserve_format`` clone).
Invariant: NaN propagates as in torch: ``amin``/``min`` return NaN, ``argmin``/``min.dim`` and
``sort``/``topk`` treat NaN as larger than every number, the first NaN winning a tie.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import parse_schema
from dispatchcore.dtypes import SCALAR_TYPE_NAMES, TYPEMETA_NAMES, from_numpy_dtype
from dispatchcore.native import reductions as R
from dispatchcore.native.structured import out_arguments
from dispatchcore.tensor import wrap_cpu

from .kernels import (
    _BOOL,
    _F16,
    _F32,
    _I64,
    _TORCH_NAME,
    _U8,
    _all_message,
    _check_reduction_size,
    _empty_like_format,
    _item,
    _new,
    _not_implemented,
    _np_dtype,
    _reduce_dims,
    _resize_out,
    _result,
    _sum,
    _sum_dtypes,
    _wrap_dim,
    quiet,
)
from .overlap import assert_no_internal_overlap

__all__ = ["KERNELS"]


def _dc(dt: np.dtype) -> Any:
    return from_numpy_dtype(dt)


def _acc(dt: np.dtype) -> np.dtype:
    """The accumulation dtype: half accumulates in float."""
    return _F32 if dt == _F16 else dt


# --- min, amin, argmin ---------------------------------------------------------------------------------
def amin_cpu(self, dim=[], keepdim=False):  # noqa: B006 - the schema's default, never mutated
    a = self._data
    if a.dtype.kind == "c":  # complex numbers have no order
        raise _not_implemented("min_values_cpu", a.dtype)
    dims = _reduce_dims(dim, a.ndim)
    _check_reduction_size(a, dims, "amin", _all_message("amin"))
    return wrap_cpu(_result(np.minimum.reduce(a, dims, keepdims=keepdim)))


def aminmax_cpu(self, *, dim=None, keepdim=False):
    """``aminmax``: structured meta's checks, then both extrema (NaN wins, as torch's kernels)."""
    a = self._data
    if dim is None:
        if a.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims, shape = None, (1,) * a.ndim if keepdim else ()
    else:
        d = _wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            dims, shape = None, ()
        else:
            if a.shape[d] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
            dims, shape = (d,), None
    if a.dtype.kind == "c":
        if a.ndim == 0 and dim is not None:  # the stub's 0-d fill, before its dtype dispatch
            raise RuntimeError(f"aminmax not implemented for {_TORCH_NAME[a.dtype]}")
        raise _not_implemented("aminmax_cpu", a.dtype)
    results = []
    for ufunc in (np.minimum, np.maximum):  # each propagates NaN
        r = ufunc.reduce(a, dims, keepdims=keepdim and dims is not None)
        results.append(wrap_cpu(_result(r if shape is None else np.reshape(r, shape))))
    return tuple(results)


# --- median, nanmedian ---------------------------------------------------------------------------------
def _median_all(name, ignore_nan):
    """``median()``/``nanmedian()`` (``median_impl``): the lower median of all elements, 0-d.

    An empty input gives NaN converted to its dtype; ``median`` returns NaN when there is one,
    ``nanmedian`` the median of the other elements (NaN when all are).
    """
    def kernel(self):
        a = self._data
        if a.size == 0:
            with np.errstate(invalid="ignore"):
                return wrap_cpu(np.array(np.nan).astype(a.dtype))
        if a.dtype.kind == "c" or a.dtype == _BOOL:
            raise _not_implemented("median_cpu", a.dtype)
        flat = a.reshape(-1)
        if a.dtype.kind == "f":
            nan = np.isnan(flat)
            if nan.any():
                if not ignore_nan or nan.all():
                    return wrap_cpu(np.array(np.nan, a.dtype))
                flat = flat[~nan]
        k = (flat.size - 1) // 2
        return wrap_cpu(np.array(np.partition(flat, k)[k], a.dtype))

    kernel.__name__ = f"{name}_cpu"
    return kernel


def _legacy(t) -> str:
    return f"torch.{SCALAR_TYPE_NAMES[t.dtype.name]}Tensor"


@functools.cache
def _nth_of_equivalents(n: int) -> int:
    """The index torch's ``nanmedian`` gives an all-NaN row of ``n``: what ``nth_element`` leaves in front.

    ``std::nth_element(first, first, last)`` of libstdc++ when no element compares less than
    another (NaNs under torch's comparator). Its introselect, with a comparator that is always
    false: each round moves the middle element to the front, partitions by swapping the ends
    inward, and keeps the left part.
    """
    order = list(range(n))
    last, depth = n, 2 * (n.bit_length() - 1)
    while last > 3 and depth:
        depth -= 1
        mid = last // 2
        order[0], order[mid] = order[mid], order[0]
        lo, hi = 1, last
        while True:
            hi -= 1
            if lo >= hi:
                break
            order[lo], order[hi] = order[hi], order[lo]
            lo += 1
        last = lo
    return order[0]


def _median_along(a, d, keepdim, ignore_nan):
    """Values and int64 indices of the lower median along ``d`` (``median_with_indices_impl``).

    torch partitions each row with ``nth_element`` under a comparator that breaks ties by index,
    so the answer is the element of that rank in a stable sort (NaN last). ``median`` returns a
    row's first NaN; ``nanmedian`` ranks the other elements, and an all-NaN row gives the index
    ``nth_element`` leaves in front (``_nth_of_equivalents``).
    """
    if a.ndim == 0:
        return a.copy(), np.zeros((), _I64)
    rows = np.moveaxis(a, d, -1)
    n = rows.shape[-1]
    order = np.argsort(rows, axis=-1, kind="stable")
    nan = np.isnan(rows) if a.dtype.kind == "f" else None
    if not ignore_nan:
        idx = order[..., (n - 1) // 2]
        if nan is not None:
            has = nan.any(-1)
            idx = np.where(has, nan.argmax(-1), idx)
    else:
        count = n - nan.sum(-1) if nan is not None else np.full(rows.shape[:-1], n)
        rank = np.where(count > 0, (count - 1) // 2, 0)  # C++'s (count - 1) / 2 truncates -1 / 2 to 0
        idx = np.take_along_axis(order, rank[..., None], -1)[..., 0]
        if nan is not None:
            idx = np.where(count == 0, _nth_of_equivalents(n), idx)
    idx = np.asarray(idx, _I64)
    values = np.take_along_axis(rows, idx[..., None], -1)[..., 0]
    if keepdim:
        values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
    return values, idx


def _median_dim_values(name, ignore_nan):
    """``median.dim_values``/``nanmedian.dim_values``: torch's checks in its order, resize, then compute."""
    def kernel(self, dim, keepdim=False, *, values, indices):
        a = self._data
        d = _wrap_dim(dim, a.ndim)
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        if indices.dtype.name != "int64":
            raise RuntimeError("Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                               f"{_legacy(indices)} instead (while checking arguments for median)")
        if values.dtype is not self.dtype:
            raise RuntimeError("Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; "
                               f"but type {_legacy(values)} does not equal {_legacy(self)} (while checking "
                               "arguments for median)")
        shape = a.shape if a.ndim == 0 else a.shape[:d] + ((1,) if keepdim else ()) + a.shape[d + 1:]
        v_out, i_out = _resize_out(values, shape), _resize_out(indices, shape)
        if a.dtype.kind == "c" or a.dtype == _BOOL:
            raise _not_implemented("median_out", a.dtype)
        v, i = _median_along(a, d, keepdim, ignore_nan)
        np.copyto(v_out, v)
        np.copyto(i_out, i)
        return values, indices

    kernel.__name__ = f"{name}_dim_values_cpu"
    return kernel


# --- kthvalue -----------------------------------------------------------------------------------------
def _quick_select(row: list, k: int) -> int:
    """The original position torch's ``quick_select_template`` leaves at ``k`` (SortingUtils.h).

    The median-of-three partitioning select, run as torch runs it with kthvalue's ``gt_or_nan``
    (NaN above every number, NaNs equal): which of several equal elements ends at ``k`` depends
    on its swaps, so this replays them.
    """
    arr, idx = list(row), list(range(len(row)))

    def gt(x: Any, y: Any) -> bool:
        return (x != x and y == y) or x > y  # noqa: PLR0124 - x != x is isnan(x)

    def swap(i: int, j: int) -> None:
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(pivot, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def _kth_along(a, k, d):
    """Values and int64 indices of the ``k``-th smallest along ``d`` (NaN largest), kept dims.

    The value is the stable sort's; so is the index when that value occurs once in its row.
    Rows where it repeats replay torch's select (``_quick_select``) for its index.
    """
    moved = np.moveaxis(a, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    order = np.argsort(rows, axis=-1, kind="stable")
    idx = np.array(order[:, k - 1], _I64)
    values = rows[np.arange(len(rows)), idx]
    same = rows == values[:, None]
    if a.dtype.kind == "f":
        same |= np.isnan(rows) & np.isnan(values)[:, None]
    for r in np.flatnonzero(same.sum(-1) > 1):
        idx[r] = _quick_select(rows[r].tolist(), k - 1)
    shape = moved.shape[:-1]
    return (np.expand_dims(values.reshape(shape), d), np.expand_dims(idx.reshape(shape), d))


def kthvalue_values_cpu(self, k, dim=-1, keepdim=False, *, values, indices):
    """``kthvalue_out_impl_cpu``: its checks in its order, then the outs resized and written.

    The outs are resized as ``_reduction_with_indices_allocate_or_resize_output`` does: an out one
    dim short is unsqueezed first (its warning prints that shape), and squeezed again at the end.
    """
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.ndim and a.shape[d] == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= (a.shape[d] if a.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    kept = a.shape[:d] + (1,) + a.shape[d + 1:] if a.ndim else ()
    for out, message in ((values, "output values must be of same type as input"),
                         (indices, "output indices must be of scalar type Long")):
        if out.dtype is not (self.dtype if out is values else _dc(_I64)):
            raise RuntimeError(message)
        if a.ndim and not keepdim and out._data.ndim == a.ndim - 1:
            out._data = np.expand_dims(out._data, d)  # values.unsqueeze_(dim)
        _resize_out(out, kept)
    if a.ndim == 0:
        v, i = a.copy(), np.zeros((), _I64)
    else:
        if a.dtype.kind == "c" or a.dtype == _BOOL:
            raise _not_implemented("kthvalue_cpu", a.dtype)
        v, i = _kth_along(a, k, d)
    np.copyto(values._data, v)
    np.copyto(indices._data, i)
    if a.ndim and not keepdim:
        values._data, indices._data = values._data.squeeze(d), indices._data.squeeze(d)
    return values, indices


# --- mode ---------------------------------------------------------------------------------------------
def _std_sort_by_value(pairs: list) -> list:
    """libstdc++'s ``std::sort`` of ``(value, index)`` pairs compared by value only, replayed.

    Introsort (median-of-three partitions above 16 elements, heapsort past the depth limit), then
    the final insertion sort: equal values end in the order these moves leave them, which is the
    order torch's ``mode`` reads its index from.
    """
    a = list(pairs)

    def less(x: Any, y: Any) -> bool:
        return x[0] < y[0]

    def swap(i: int, j: int) -> None:
        a[i], a[j] = a[j], a[i]

    def adjust_heap(first: int, hole: int, length: int, value: Any) -> None:
        top = second = hole
        while second < (length - 1) // 2:
            second = 2 * (second + 1)
            if less(a[first + second], a[first + second - 1]):
                second -= 1
            a[first + hole] = a[first + second]
            hole = second
        if length % 2 == 0 and second == (length - 2) // 2:
            second = 2 * (second + 1)
            a[first + hole] = a[first + second - 1]
            hole = second - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heap_sort(first: int, last: int) -> None:
        length = last - first
        for parent in range((length - 2) // 2, -1, -1):  # make_heap
            adjust_heap(first, parent, length, a[first + parent])
        while last - first > 1:  # sort_heap
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def partition_pivot(first: int, last: int) -> int:
        # __move_median_to_first(first, first + 1, mid, last - 1), then __unguarded_partition
        x, y, z = first + 1, first + (last - first) // 2, last - 1
        if less(a[x], a[y]):
            swap(first, y if less(a[y], a[z]) else z if less(a[x], a[z]) else x)
        else:
            swap(first, x if less(a[x], a[z]) else z if less(a[y], a[z]) else y)
        lo, hi = first + 1, last
        while True:
            while less(a[lo], a[first]):
                lo += 1
            hi -= 1
            while less(a[first], a[hi]):
                hi -= 1
            if lo >= hi:
                return lo
            swap(lo, hi)
            lo += 1

    def introsort(first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            cut = partition_pivot(first, last)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(i: int) -> None:
        value, j = a[i], i - 1
        while j >= 0 and less(value, a[j]):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = value

    n = len(a)
    if n:
        introsort(0, n, 2 * (n.bit_length() - 1))
        for i in range(1, n):  # the final insertion sort (its guarded and unguarded halves move alike)
            if less(a[i], a[0]):
                a.insert(0, a.pop(i))
            else:
                linear_insert(i)
    return a


def _mode_row(row: list) -> tuple[Any, int]:
    """``mode_kernel``'s scan of one sorted row: the first value with the highest count, its run's last index."""
    ranked = _std_sort_by_value([(v, i) for i, v in enumerate(row)])
    mode, index, run, best = 0, 0, 0, 0
    for i, (value, position) in enumerate(ranked):
        run += 1
        if i == len(ranked) - 1 or value != ranked[i + 1][0]:
            if run > best:
                mode, index, best = value, position, run
            run = 0
    return mode, index


def mode_cpu(self, dim=-1, keepdim=False):
    """``mode``: the most frequent value along ``dim`` (the smallest of equally frequent ones) and an index.

    A row of distinct values has its minimum as mode; others replay torch's sort (``_std_sort_by_value``).
    """
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.size == 0:
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
        shape = a.shape[:d] + ((1,) if keepdim else ()) + a.shape[d + 1:]
        return wrap_cpu(_new(shape, a.dtype)), wrap_cpu(_new(shape, _I64))
    if a.ndim == 0:
        return wrap_cpu(a.copy()), wrap_cpu(np.zeros((), _I64))
    if a.dtype.kind == "c":
        raise _not_implemented("mode_cpu", a.dtype)
    moved = np.moveaxis(a, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    idx = np.argmin(rows, axis=-1).astype(_I64)  # the answer for rows of distinct values
    values = rows[np.arange(len(rows)), idx]
    ranked = np.sort(rows, axis=-1)
    repeated = (ranked[:, 1:] == ranked[:, :-1]).any(axis=-1) | np.isnan(ranked.astype(float)).any(axis=-1)
    for r in np.flatnonzero(repeated):
        values[r], idx[r] = _mode_row(rows[r].tolist())
    shape = moved.shape[:-1]
    values, idx = values.reshape(shape), idx.reshape(shape)
    if keepdim:
        values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
    return wrap_cpu(_result(values)), wrap_cpu(_result(idx))


# --- nansum -------------------------------------------------------------------------------------------
def _nansum(self, dim, keepdim, dtype, out_dtype=None):
    """``nansum_out``'s arithmetic: integers and bool as ``sum``; NaN summed as 0 (cast to ``dtype`` first).

    ``out_dtype``: the out tensor's dtype, the computation's when no ``dtype`` is given.
    """
    a = self._data
    dims = _reduce_dims(dim, a.ndim)
    if a.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if a.dtype.kind in "biu":  # no NaN: torch calls sum_out
        acc, dt = _sum_dtypes(a, dtype if dtype is not None else out_dtype)
        return _sum(a, dims, keepdim, acc, dt)
    if dtype is None and out_dtype is not None and not (out_dtype.is_floating_point or out_dtype.is_complex):
        raise _not_implemented("nansum_cpu", _np_dtype(out_dtype))
    zeroed = np.where(np.isnan(a), a.dtype.type(0), a)
    acc, dt = _sum_dtypes(zeroed, dtype if dtype is not None else out_dtype)
    return _sum(zeroed, dims, keepdim, acc, dt)


def nansum_cpu(self, dim=None, keepdim=False, *, dtype=None):
    return wrap_cpu(_nansum(self, dim, keepdim, dtype))


def nansum_out_cpu(self, dim=None, keepdim=False, *, dtype=None, out):
    """``nansum_out``: ``dtype``, when given, must be out's; the result resized into out and written."""
    if dtype is not None and dtype is not out.dtype:
        if self._data.dtype.kind in "biu":  # sum_out's structured check
            raise RuntimeError(f"Expected out tensor to have dtype {TYPEMETA_NAMES[dtype.name]}, but got "
                               f"{TYPEMETA_NAMES[out.dtype.name]} instead")
        if self._data.dtype.kind != "c":  # make_reduction's
            raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got "
                               f"{SCALAR_TYPE_NAMES[out.dtype.name]} and {SCALAR_TYPE_NAMES[dtype.name]}.")
    r = _nansum(self, dim, keepdim, dtype, out.dtype)
    if 0 in out._data.strides:
        assert_no_internal_overlap(out._data)
    np.copyto(_resize_out(out, r.shape, [r]), r, casting="unsafe")
    return out


def min_cpu(self):
    a = self._data
    if a.dtype.kind == "c":
        raise _not_implemented("min_all", a.dtype)
    _check_reduction_size(a, None, "min", _all_message("min"))
    return wrap_cpu(np.asarray(np.minimum.reduce(a, None)).reshape(()).copy())


def min_dim_cpu(self, dim, keepdim=False):
    a = self._data
    if a.dtype.kind == "c":
        raise RuntimeError("min(): does not support complex input")
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return wrap_cpu(a.copy()), wrap_cpu(np.zeros((), _I64))
    _check_reduction_size(a, (d,), "min", "")
    idx = np.argmin(a, axis=d, keepdims=True)  # the first minimum, or the first NaN
    values = np.take_along_axis(a, idx, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return wrap_cpu(_result(values)), wrap_cpu(_result(idx).astype(_I64, copy=False))


def argmin_cpu(self, dim=None, keepdim=False):
    a = self._data
    if a.dtype == _BOOL or a.dtype.kind == "c":
        raise RuntimeError(f"argmin(): does not support {'bool' if a.dtype == _BOOL else 'complex'} input")
    if dim is None:
        if a.size == 0:
            raise IndexError("argmin(): Expected reduction dim to be specified for input.numel() == 0.")
        r = np.array(np.argmin(a), _I64)
        return wrap_cpu(r.reshape((1,) * a.ndim) if keepdim else r)
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return wrap_cpu(np.zeros((), _I64))
    _check_reduction_size(a, (d,), "argmin", "")
    return wrap_cpu(_result(np.argmin(a, axis=d, keepdims=keepdim)).astype(_I64, copy=False))


# --- any, all ------------------------------------------------------------------------------------------
def _logical(ufunc: Any, a: np.ndarray, dims: Any, keepdim: bool) -> Any:
    """any/all over ``dims`` (None: all); bool, or uint8 for a uint8 input, as torch."""
    r = _result(ufunc(a != 0, axis=dims, keepdims=keepdim))
    return wrap_cpu(r.astype(_U8) if a.dtype == _U8 else r)


def _logical_family(name: str, ufunc: Any) -> dict[str, Callable[..., Any]]:
    def full(self):
        return _logical(ufunc, self._data, None, False)

    def one(self, dim, keepdim=False):
        a = self._data
        d = _wrap_dim(dim, a.ndim)
        return _logical(ufunc, a, (d,) if a.ndim else None, keepdim)

    def dims(self, dim=None, keepdim=False):
        a = self._data
        if dim is not None and len(dim) == 0:  # no dim listed: each element on its own
            return _logical(ufunc, a, (), False)
        wrapped = R.reduction_dims(dim, a.ndim)
        return _logical(ufunc, a, wrapped if a.ndim else None, keepdim)

    for kernel, overload in ((full, ""), (one, "_dim"), (dims, "_dims")):
        kernel.__name__ = kernel.__qualname__ = f"{name}{overload}_cpu"  # out_call names the op from it
    return {name: full, f"{name}.dim": one, f"{name}.dims": dims}


# --- prod, cumsum, cumprod -----------------------------------------------------------------------------
def _prod(a: np.ndarray, dims: Any, keepdim: bool, dtype: Any) -> Any:
    dt = R.cum_dtype(_dc(a.dtype), dtype).np if dtype is None else _np_dtype(dtype)
    with quiet():
        r = np.prod(a.astype(_acc(dt)), axis=dims, keepdims=keepdim)
    return wrap_cpu(_result(r).astype(dt, copy=False))


def prod_cpu(self, *, dtype=None):
    return _prod(self._data, None, False, dtype)


def prod_dim_int_cpu(self, dim, keepdim=False, *, dtype=None):
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    return _prod(a, (d,) if a.ndim else (), keepdim, dtype)


# cpu_cum_base_kernel's running value is at::acc_type<T, /*is_cuda=*/false>: double for float
# (and complex<double> for complex<float>), float for half; each output is rounded from it
_SCAN_ACC = {_F16: _F32, _F32: np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128)}


def _scan(name: str, ufunc: Any, self: Any, dim: int, dtype: Any) -> np.ndarray:
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    dt = R.cum_dtype(_dc(a.dtype), None).np if dtype is None else _np_dtype(dtype)
    if dt == _BOOL:
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
    with quiet():
        if a.ndim == 0:
            return a.astype(dt)  # a copy, -0.0 included
        # the input becomes ``dtype`` first (torch's ``self.to(dtype)``), then runs in the wider type
        r = _result(ufunc.accumulate(a.astype(dt, copy=False).astype(_SCAN_ACC.get(dt, dt)), axis=d)
                    .astype(dt, copy=False))
        if name == "cumsum" and dt.kind in "fc":  # torch sums from a +0 accumulator: a -0.0 prefix sums to +0.0
            np.add(r, 0, out=r)
        return r


def _scan_family(name: str, ufunc: Any) -> dict[str, Callable[..., Any]]:
    def functional(self, dim, *, dtype=None):
        return wrap_cpu(_scan(name, ufunc, self, dim, dtype))

    def inplace(self, dim, *, dtype=None):
        a = self._data
        if dtype is not None and _np_dtype(dtype) != a.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {_cpp(a.dtype)} and output tensor dtype "
                               f"{_cpp(_np_dtype(dtype))} should match")
        np.copyto(a, _scan(name, ufunc, self, dim, a.dtype), casting="unsafe")
        return self

    return {name: functional, f"{name}_": inplace}


def _cpp(dt: np.dtype) -> str:
    from dispatchcore.dtypes import TYPEMETA_NAMES

    return TYPEMETA_NAMES[_dc(dt).name]


# --- var, std ------------------------------------------------------------------------------------------
def _moments(name: str, self: Any, dim: Any, correction: Any, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """(variance, mean) over ``dim``, with torch's dtype check and degrees-of-freedom warning."""
    a = self._data
    result_dt = R.var_dtype(_dc(a.dtype)).np
    dims = R.reduction_dims(dim, a.ndim)
    count = 1
    for d in dims:
        count *= a.shape[d]
    c = 1.0 if correction is None else float(_item(correction))
    R.dof_warning(name, count, c)
    axes = dims if a.ndim else None
    with quiet():
        x = a.astype(_acc(a.dtype))
        # np.mean's and np.sum's arithmetic (the same pairwise sum, divided in place by the count
        # as an intp), without their Python wrappers (~3 us of a small std's ~20)
        if a.size:
            mean = np.add.reduce(x, axes, keepdims=True)
            if mean.__class__ is np.ndarray:
                np.true_divide(mean, np.intp(count), out=mean, casting="unsafe")
            else:  # a 0-d input's sum is a numpy scalar
                mean = mean.dtype.type(mean / np.intp(count))
        else:
            mean = np.full(tuple(1 if i in dims else s for i, s in enumerate(a.shape)), np.nan, x.dtype)
        centered = x - mean
        squares = (centered * np.conj(centered)).real if x.dtype.kind == "c" else centered * centered
        var = np.add.reduce(squares, axes, keepdims=keepdim) / max(0.0, count - c)
        if not keepdim and a.ndim:
            mean = np.squeeze(mean, axis=dims)
        elif not a.ndim:
            mean = mean.reshape(())
    return _result(np.asarray(var).astype(result_dt)), _result(np.asarray(mean).astype(a.dtype))


def var_correction_cpu(self, dim=None, *, correction=None, keepdim=False):
    return wrap_cpu(_moments("var", self, dim, correction, keepdim)[0])


def std_correction_cpu(self, dim=None, *, correction=None, keepdim=False):
    with quiet():
        return wrap_cpu(_result(np.sqrt(_moments("std", self, dim, correction, keepdim)[0])))


def var_mean_correction_cpu(self, dim=None, *, correction=None, keepdim=False):
    var, mean = _moments("var_mean", self, dim, correction, keepdim)
    return wrap_cpu(var), wrap_cpu(mean)


def std_mean_correction_cpu(self, dim=None, *, correction=None, keepdim=False):
    var, mean = _moments("std_mean", self, dim, correction, keepdim)
    with quiet():
        return wrap_cpu(_result(np.sqrt(var))), wrap_cpu(mean)


# --- sort, topk ----------------------------------------------------------------------------------------
def _order(a: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along ``d`` (NaN is the largest value; ties keep their order)."""
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    n = a.shape[d]
    flipped = np.flip(a, axis=d)
    return n - 1 - np.flip(np.argsort(flipped, axis=d, kind="stable"), axis=d)


def sort_stable_cpu(self, *, stable, dim=-1, descending=False):
    a = self._data
    if a.dtype.kind == "c":  # torch's message starts with a space
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    d = _wrap_dim(dim, a.ndim)
    values = _empty_like_format(a, "preserve_format", "sort")
    indices = _empty_like_format(a, "preserve_format", "sort", _I64)
    if a.ndim == 0:
        np.copyto(values, a)
        indices[...] = 0
    else:
        order = _order(a, d, descending)
        np.copyto(values, np.take_along_axis(a, order, d))
        np.copyto(indices, order)
    return wrap_cpu(values), wrap_cpu(indices)


def topk_cpu(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - the schema's name
    a = self._data
    if a.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    d = _wrap_dim(dim, a.ndim)
    R.topk_check(_dc(a.dtype), k, a.shape[d] if a.ndim else 1)
    if a.ndim == 0:
        return wrap_cpu(a.copy()), wrap_cpu(np.zeros((), _I64))
    order = np.take(_order(a, d, largest), np.arange(k), axis=d)
    return (wrap_cpu(_result(np.take_along_axis(a, order, d))),
            wrap_cpu(_result(order).astype(_I64, copy=False)))


# --- norms, count_nonzero ------------------------------------------------------------------------------
def _vector_norm(a: np.ndarray, ord: Any, dim: Any, keepdim: bool, dt: np.dtype) -> np.ndarray:  # noqa: A002
    """The ``ord``-norm of ``a`` over ``dim`` (None or []: every dim), computed in ``dt``."""
    p = float(_item(ord))
    dims = R.reduction_dims(dim, a.ndim)
    R.vector_norm_empty_check(p, tuple(a.shape), dims, dim is not None and len(dim) > 0)
    axes = dims if a.ndim else None
    x = np.abs(a.astype(dt))
    with quiet():
        if p == math.inf:
            r = np.max(x, axis=axes, keepdims=keepdim, initial=0)  # NaN propagates
        elif p == -math.inf:
            r = np.min(x, axis=axes, keepdims=keepdim)
        elif p == 0:
            r = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
        elif p == 1:
            r = np.sum(x, axis=axes, keepdims=keepdim)
        elif p == 2:
            r = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
        else:
            r = np.power(np.sum(np.power(x, p), axis=axes, keepdims=keepdim), 1.0 / p)
    return _result(np.asarray(r).astype(dt.type(0).real.dtype if dt.kind == "c" else dt))


def linalg_vector_norm_cpu(self, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    a = self._data
    dt = R.vector_norm_check(_dc(a.dtype), dtype).np
    return wrap_cpu(_vector_norm(a, ord, dim, keepdim, dt))


def norm_scalar_opt_dim_cpu(self, p, dim, keepdim=False):
    a = self._data
    dt = R.norm_dtype(_dc(a.dtype), None).np
    return wrap_cpu(_vector_norm(a, 2 if p is None else p, dim, keepdim, dt))


def norm_scalar_opt_dim_dtype_cpu(self, p, dim, keepdim, *, dtype):
    a = self._data
    dt = R.norm_dtype(_dc(a.dtype), dtype).np
    return wrap_cpu(_vector_norm(a, 2 if p is None else p, dim, keepdim, dt))


def count_nonzero_dim_intlist_cpu(self, dim):
    a = self._data
    dims = R.reduction_dims(dim, a.ndim)
    return wrap_cpu(_result(np.asarray(np.count_nonzero(a, axis=dims if a.ndim else None)).astype(_I64)))


# --- the table -----------------------------------------------------------------------------------------
def trace_cpu(self):
    """``trace_cpu``: the diagonal summed in order, in acc_type (double for floats, int64 for integers)."""
    a = self._data
    if a.dtype == np.bool_:  # AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(Half, BFloat16), before the check
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    R.trace_check(self)
    result = np.int64 if a.dtype.kind in "iu" else a.dtype
    acc = np.int64 if a.dtype.kind in "iu" else np.complex128 if a.dtype.kind == "c" else np.float64
    diagonal = np.diagonal(a).astype(acc)
    total = np.cumsum(diagonal)[-1] if diagonal.size else acc(0)  # cumsum: one running sum, as the loop
    return wrap_cpu(_result(np.asarray(total).astype(result)))


def _cumulative_extremum(name: str, better: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., Any]:
    """``cummax_helper_cpu``/``cummin_helper_cpu``: the running extremum along ``dim`` and where it was.

    As torch's loop: a NaN takes over and stays, and a tie moves the index to the later element
    (``x >= out`` for cummax, ``x <= out`` for cummin).
    """
    def kernel(self, values, indices, dim):
        a = self._data
        if a.dtype.kind == "c":  # AT_DISPATCH_ALL_TYPES_AND3(Bool, Half, BFloat16)
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_TORCH_NAME[a.dtype]}\'')
        source = np.moveaxis(a, dim, -1)
        out_values, out_indices = np.moveaxis(values._data, dim, -1), np.moveaxis(indices._data, dim, -1)
        floating = a.dtype.kind == "f"
        current = source[..., 0].copy()
        where = np.zeros(current.shape, np.int64)
        for k in range(source.shape[-1]):  # one step per position along dim, all slices at once
            x = source[..., k]
            take = better(x, current)
            if floating:
                take = np.isnan(x) | (~np.isnan(current) & take)
            current = np.where(take, x, current)
            where = np.where(take, k, where)
            out_values[..., k] = current
            out_indices[..., k] = where

    kernel.__name__ = f"_{name}_helper_cpu"
    return kernel


def _logcumsumexp_into(self, dim, out):
    """``logcumsumexp_cpu_kernel``: a running ``_log_add_exp_helper`` in acc_type along ``dim``.

    As torch's helper: the smaller and larger of the element and the running value (NaN in the
    running value wins), ``log1p(exp(min - max)) + max`` unless both are the same infinity (then
    the element). Float32 runs in double, half in float.
    """
    a = self._data
    if a.dtype.kind != "f":  # AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2 (complex is not modelled here)
        if a.dtype.kind == "c":
            raise NotImplementedError("logcumsumexp of a complex tensor is not modelled by dispatchcore")
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{_TORCH_NAME[a.dtype]}\'')
    d = _wrap_dim(dim, a.ndim)
    source = np.moveaxis(a.reshape(1) if a.ndim == 0 else a, d, -1)
    target = np.moveaxis(out.reshape(1) if out.ndim == 0 else out, d, -1)
    acc = np.float64 if a.dtype != _F16 else np.float32
    running = np.full(source.shape[:-1], -np.inf, acc)
    with quiet():
        for k in range(source.shape[-1]):  # one step per position along dim, all slices at once
            x = source[..., k].astype(acc)
            nan = np.isnan(running)
            low = np.where(nan, running, np.where(running < x, running, x))
            high = np.where(nan, running, np.where(x < running, running, x))
            running = np.where((low != high) | np.isfinite(low), np.log1p(np.exp(low - high)) + high, x)
            target[..., k] = running
    return out


def _logcumsumexp_cpu(self, dim):
    return wrap_cpu(_logcumsumexp_into(self, dim, _new(self._data.shape, self._data.dtype)))


def _logcumsumexp_out_cpu(self, dim, *, out):
    data = _resize_out(out, self._data.shape)
    _logcumsumexp_into(self, dim, data)
    return out


FUNCTIONAL: dict[str, Callable[..., Any]] = {
    "_logcumsumexp": _logcumsumexp_cpu, "_logcumsumexp.out": _logcumsumexp_out_cpu,
    "_cummax_helper": _cumulative_extremum("cummax", np.greater_equal),
    "_cummin_helper": _cumulative_extremum("cummin", np.less_equal),
    "trace": trace_cpu,
    "amin": amin_cpu, "aminmax": aminmax_cpu, "nansum": nansum_cpu, "nansum.out": nansum_out_cpu,
    "median": _median_all("median", False), "nanmedian": _median_all("nanmedian", True),
    "median.dim_values": _median_dim_values("median", False), "kthvalue.values": kthvalue_values_cpu,
    "mode": mode_cpu,
    "nanmedian.dim_values": _median_dim_values("nanmedian", True),
    "min": min_cpu, "min.dim": min_dim_cpu, "argmin": argmin_cpu,
    **_logical_family("any", np.any), **_logical_family("all", np.all),
    "prod": prod_cpu, "prod.dim_int": prod_dim_int_cpu,
    **_scan_family("cumsum", np.add), **_scan_family("cumprod", np.multiply),
    "var.correction": var_correction_cpu, "std.correction": std_correction_cpu,
    "var_mean.correction": var_mean_correction_cpu, "std_mean.correction": std_mean_correction_cpu,
    "sort.stable": sort_stable_cpu, "topk": topk_cpu,
    "linalg_vector_norm": linalg_vector_norm_cpu, "norm.ScalarOpt_dim": norm_scalar_opt_dim_cpu,
    "norm.ScalarOpt_dim_dtype": norm_scalar_opt_dim_dtype_cpu,
    "count_nonzero.dim_IntList": count_nonzero_dim_intlist_cpu,
}


def _out_kernel(functional: Callable[..., Any], rule: str, outs: tuple[str, ...]) -> Callable[..., Any]:
    """An ``out=`` kernel: the functional kernel, ``out`` checked by ``rule``, resized, written."""
    def out_cpu(*args: Any, **kwargs: Any) -> Any:
        targets = tuple(kwargs.pop(name) for name in outs)
        results = R.out_call(rule, functional, args, kwargs, targets)
        for r, out in zip(results, targets):
            if 0 in out._data.strides:  # an expanded output: TensorIterator's overlap check
                assert_no_internal_overlap(out._data)
            np.copyto(_resize_out(out, r._data.shape, [r._data]), r._data, casting="unsafe")
        return targets[0] if len(targets) == 1 else targets

    return out_cpu


def _kernels() -> dict[str, Callable[..., Any]]:
    from . import KERNELS as CORE  # max, for max.unary_out

    functional: dict[str, Any] = {**dict(CORE), **FUNCTIONAL}
    schemas = {s.partition("(")[0]: s for s in R.SCHEMAS}
    outs = {name: _out_kernel(functional[of], rule, out_arguments(parse_schema(f"aten::{schemas[name]}")))
            for name, (of, rule) in R.OUTS.items()}
    return {**FUNCTIONAL, **outs}


KERNELS = _kernels()
