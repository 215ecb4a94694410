"""CPU kernels of the indexing family: gather/scatter, ``index``/``_index_put_impl_``, masks, ``nonzero``.

Mirrors the CPU entries of ``TensorAdvancedIndexing.cpp`` (``gather``, ``scatter*``,
``index_select``, ``index_add``, ``index``, ``_index_put_impl_``, ``masked_fill_``, ``masked_scatter_``,
``masked_select``, ``take``, ``put_``), ``TensorCompare.cpp`` (``where.self_out``) and ``Scalar.cpp``
(``_local_scalar_dense``); the family's composites (``index_put``, ``masked_fill``, ...) live in
``dispatchcore/native/indexing.py``. Checks and result geometry come from there too, so the Meta
backend agrees. Invariant: every kernel is numpy in, tensor out; an index is checked against its
dimension's size before any element is written, and a result is laid out as torch lays it out.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dispatchcore.native import indexing as _ix
from dispatchcore.tensor import Tensor, wrap_cpu

from .kernels import (
    _CPP_NAME,
    _TORCH_NAME,
    _checked_scalar,
    _empty_strided,
    _item,
    _new,
    _not_implemented,
    _np_dtype,
    _resize_out,
    _scalar_array,
    _wrap_dim,
    quiet,
    where_self_cpu,
)
from .overlap import MemOverlap, assert_no_internal_overlap, has_internal_overlap

__all__ = ["KERNELS"]

_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)
_ALIAS_ERROR = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                "single memory location. Please clone() the tensor before performing the operation.")


def _fresh(r: np.ndarray, strides: Sequence[int] | None = None) -> np.ndarray:
    """``r`` copied into new memory: contiguous, or with the given element strides."""
    out = _new(r.shape, r.dtype) if strides is None else _empty_strided(r.shape, tuple(strides), r.dtype)
    np.copyto(out, r)
    return out


def _check_out_dtype(out: Any, dt: np.dtype) -> None:
    if out._data.dtype != dt:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAME[dt]}, but got {_CPP_NAME[out._data.dtype]} "
                           "instead")


def _into_out(result: Any, out: Any) -> Any:
    """Write a functional kernel's result into ``out`` (resized as ``resize_output`` does)."""
    r = result._data
    _check_out_dtype(out, r.dtype)
    np.copyto(_resize_out(out, r.shape, (r,)), r)
    return out


def _out_kernel(functional: Callable[..., Any]) -> Callable[..., Any]:
    def out_kernel(*args: Any, out: Any, **kwargs: Any) -> Any:
        return _into_out(functional(*args, **kwargs), out)
    out_kernel.__name__ = functional.__name__.replace("_cpu", "_out_cpu")
    return out_kernel


def _first_bad(bad: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))


# --- advanced indexing ------------------------------------------------------------------------------
def _positions(self: Any, indices: Sequence[Any]) -> list[np.ndarray | None]:
    """The indices as int64 positions, one per indexed dim (masks become their nonzero positions)."""
    _ix.check_indices(tuple(self._data.shape), indices)
    found: list[np.ndarray | None] = []
    for t in indices:
        if t is None:
            found.append(None)
        elif t._data.dtype.kind in "bu" and t._data.dtype.itemsize == 1:  # bool or uint8: a mask
            found.extend(p.astype(_I64) for p in np.nonzero(t._data.astype(bool)))
        else:
            found.append(t._data.astype(_I64, copy=False))
    if all(p is None for p in found):
        raise IndexError("at least one index must be provided")
    return found


def _wrapped_key(shape: tuple[int, ...], positions: list[np.ndarray | None]) -> tuple[Any, ...]:
    """Numpy's index tuple for ``positions``, after torch's bounds check (in element order)."""
    defined = [(d, p) for d, p in enumerate(positions) if p is not None]
    bshape = _ix.broadcast_indices([p.shape for _, p in defined])
    bad = [np.broadcast_to((p < -shape[d]) | (p >= shape[d]), bshape) for d, p in defined]
    if any(b.any() for b in bad):
        where = _first_bad(np.logical_or.reduce(bad)) if bshape else ()
        k = next(k for k, b in enumerate(bad) if b[where])
        d, p = defined[k]
        raise _ix.index_out_of_bounds(int(np.broadcast_to(p, bshape)[where]), k, shape[d])
    return tuple(slice(None) if p is None else np.where(p < 0, p + shape[d], p) for d, p in enumerate(positions))


def _index_layout(a: np.ndarray, positions: list[np.ndarray | None]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    item = a.dtype.itemsize
    entries = [None if p is None else (p.shape, tuple(s // p.dtype.itemsize for s in p.strides)) for p in positions]
    shape, strides, _ = _ix.index_geometry(a.shape, tuple(s // item for s in a.strides), entries)
    return shape, strides


def index_tensor_cpu(self, indices):
    a = self._data
    if len(indices) == 1 and a.ndim and indices[0] is not None and a.flags.c_contiguous \
            and (i := indices[0]._data).dtype is _I64 and i.flags.c_contiguous:
        # ``x[i]``, one contiguous int64 index for dim 0 of a contiguous tensor: numpy's take is
        # torch's gather there, and a non-empty result has the C-contiguous layout index_geometry
        # gives (test_cpu_indexing checks both); out of bounds: torch's error below
        try:
            r = np.take(a, i, axis=0)
        except IndexError:
            pass  # Note [No chained errors]: the general path raises torch's error after the handler
        else:
            if r.size:
                return wrap_cpu(r)
    if len(indices) == 1 and indices[0] is not None and a.flags.c_contiguous \
            and (m := indices[0]._data).dtype is _BOOL and 0 < m.ndim and m.shape == a.shape[:m.ndim] \
            and m.flags.c_contiguous:
        # ``x[mask]``, one bool mask over x's leading dims: numpy's mask selection, in the same
        # row-major order, C-contiguous as index_geometry lays a non-empty result out
        r = a[m]
        if r.size:
            return wrap_cpu(r)
    positions = _positions(self, indices)
    key = _wrapped_key(a.shape, positions)
    _, strides = _index_layout(a, positions)
    return wrap_cpu(_fresh(a[key], strides))


def _index_put_impl__cpu(self, indices, values, accumulate=False, unsafe=False):
    a, v = self._data, values._data
    if len(indices) > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim} (got {len(indices)})")
    if 0 in a.strides and has_internal_overlap(a) is MemOverlap.Yes:
        warnings.warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = "
                      "tensor", UserWarning, stacklevel=3)
    if _ix.is_mask_fill(indices, values, accumulate):  # canDispatchToMaskedFill: one mask, one value
        _ix.check_indices(a.shape, indices)
        first = next(d for d, t in enumerate(indices) if t is not None)
        mask = indices[first]._data.astype(bool)
        mask = mask.reshape((1,) * first + mask.shape + (1,) * (a.ndim - first - mask.ndim))
        a[np.broadcast_to(mask, a.shape)] = _checked_scalar(values, a.dtype)
        return self
    for other in (v, *(t._data for t in indices if t is not None)):
        if np.may_share_memory(a, other) and np.shares_memory(a, other):
            raise RuntimeError(_ALIAS_ERROR)
    positions = _positions(self, indices)
    shape = _ix.index_geometry(a.shape, (0,) * a.ndim,
                               [None if p is None else (p.shape, (0,) * p.ndim) for p in positions])[0]
    _ix.check_index_put(self.dtype, shape, v.shape, values.dtype)
    key = _wrapped_key(a.shape, positions)
    if accumulate:
        if a.dtype == np.bool_:
            np.logical_or.at(a, key, np.broadcast_to(v, shape))
        else:
            np.add.at(a, key, np.broadcast_to(v, shape))
    else:
        a[key] = v
    return self


# --- gather, scatter, index_select, take ------------------------------------------------------------
def _along(shape: tuple[int, ...], dim: int, index: np.ndarray) -> tuple[Any, ...]:
    """The numpy index that picks ``index``'s positions along ``dim`` (``take_along_axis``'s)."""
    key: list[Any] = []
    for d, n in enumerate(index.shape):
        if d == dim:
            key.append(index)
        else:
            key.append(np.arange(n).reshape((1,) * d + (n,) + (1,) * (index.ndim - d - 1)))
    return tuple(key)


def _check_range(index: np.ndarray, dim: int, size: int) -> np.ndarray:
    """Gather/scatter positions: in ``[0, size)`` (no negative wrap), else torch's RuntimeError."""
    idx = index.astype(_I64, copy=False)
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        raise RuntimeError(f"index {int(idx[_first_bad(bad)])} is out of bounds for dimension {dim} with size {size}")
    return idx


def _as_1d(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


def gather_cpu(self, dim, index, *, sparse_grad=False):
    d = _ix.gather_check(self, dim, index)
    a, idx = _as_1d(self._data), index._data
    out = _new(idx.shape, a.dtype)
    if idx.size:
        i = _check_range(_as_1d(idx), d, a.shape[d])
        np.copyto(out, a[_along(a.shape, d, i)].reshape(idx.shape))
    return wrap_cpu(out)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _reduce_identity(reduce: str, dt: np.dtype) -> Any:
    if reduce in _IDENTITY:
        return _IDENTITY[reduce]
    if dt.kind == "b":
        return reduce == "amin"
    if dt.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dt)
    return info.min if reduce == "amax" else info.max


_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _scatter_into(a: np.ndarray, dim: int, index: Any, src: Any, reduce: str | None,
                  include_self: bool = True) -> None:
    """Write ``src`` (a tensor, or a number) into ``a`` at ``index`` along ``dim``, reducing."""
    idx = index._data
    if idx.size == 0:
        return
    a1 = _as_1d(a)
    i = _check_range(_as_1d(idx), dim, a1.shape[dim])
    key = _along(a1.shape, dim, i)
    if hasattr(src, "_data"):
        s = _as_1d(src._data)
        vals = s[tuple(slice(0, n) for n in i.shape)]
    else:
        vals = np.broadcast_to(_checked_scalar(src, a.dtype), i.shape)
    if reduce is None:
        a1[key] = vals
        return
    if reduce == "mean" and a.dtype.kind == "b":
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'")
    if not include_self:
        a1[key] = _reduce_identity(reduce, a.dtype)
    ufunc = np.logical_or if reduce == "sum" and a.dtype.kind == "b" else _UFUNC[reduce]
    if reduce == "prod" and a.dtype.kind == "b":
        ufunc = np.logical_and
    ufunc.at(a1, key, vals)
    if reduce == "mean":
        count = np.full(a1.shape, 1 if include_self else 0, _I64)
        np.add.at(count, key, 1)
        count[count == 0] = 1
        if a.dtype.kind == "f":
            a1[...] = a1 / count
        else:
            a1[...] = np.floor_divide(a1, count)


def _scatter_family(name: str, src_kind: str, reduce_kind: str) -> dict[str, Callable[..., Any]]:
    """The functional, in-place and out= kernels of one scatter overload.

    ``src_kind`` is "src" (a tensor) or "value" (a number); ``reduce_kind`` is "" (plain
    scatter), "reduce" (add/multiply) or "two" (scatter_reduce's five reductions).
    """
    def run(self: Any, a: np.ndarray, dim: int, index: Any, src: Any, reduce: Any, include_self: bool) -> None:
        d = _ix.scatter_check("scatter", self, dim, index, src if src_kind == "src" else None)
        how = None
        if reduce_kind == "plain_add":
            how = "sum"
        elif reduce_kind:
            how = _ix.scatter_reduce_name(reduce, reduce_kind == "two")
            if reduce_kind == "reduce" and src_kind == "src":
                _ix.scatter_reduce_warning()
        _scatter_into(a, d, index, src, how, include_self)

    def functional(self, dim, index, src, reduce=None, *, include_self=True):
        out = _new(self._data.shape, self._data.dtype)
        np.copyto(out, self._data)
        run(self, out, dim, index, src, reduce, include_self)
        return wrap_cpu(out)

    def inplace(self, dim, index, src, reduce=None, *, include_self=True):
        run(self, self._data, dim, index, src, reduce, include_self)
        return self

    def out_kernel(self, dim, index, src, reduce=None, *, include_self=True, out):
        _check_out_dtype(out, self._data.dtype)
        data = _resize_out(out, self._data.shape, (self._data,))
        np.copyto(data, self._data)
        run(self, data, dim, index, src, reduce, include_self)
        return out

    base, _, overload = name.partition(".")
    suffix = f".{overload}" if overload else ""
    out_name = {"": f"{base}.out", "two": f"{base}.two_out"}.get(overload, f"{base}.{overload}_out")
    return {name: functional, f"{base}_{suffix}": inplace, out_name: out_kernel}


def index_select_cpu(self, dim, index):
    a, idx = self._data, index._data
    d = _ix.index_select_check(self, dim, index)
    flat = idx.reshape(-1).astype(_I64, copy=False)
    size = a.shape[d] if a.ndim else 1
    bad = (flat < 0) | (flat >= size)
    if bad.any():
        raise _ix.index_select_out_of_range(int(flat[int(np.argmax(bad))]), d, a.ndim, size)
    if a.ndim == 0:
        return wrap_cpu(_fresh(a))
    return wrap_cpu(_fresh(np.take(a, flat, axis=d)))


def _check_written(target: np.ndarray, *inputs: Any) -> None:
    """``assert_no_internal_overlap(self)`` and ``assert_no_overlap(self, input)`` of an in-place or out= write."""
    if 0 in target.strides:
        assert_no_internal_overlap(target)
    for t in inputs:
        other = t._data
        if np.may_share_memory(target, other) and np.shares_memory(target, other):
            raise RuntimeError(_ALIAS_ERROR)


def _index_add_into(target: np.ndarray, d: int, index: Any, source: Any, alpha: Any) -> None:
    """``target[..., index[i], ...] += alpha * source[..., i, ...]`` along ``d``, in index order (duplicates add up)."""
    idx = index._data.reshape(-1).astype(_I64, copy=False)
    if target.ndim > 1 and (idx.size == 0 or target.size == 0):  # the slice path returns before its checks
        return
    t1 = _as_1d(target)
    size = t1.shape[d]
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        raise _ix.index_add_out_of_range(int(idx[int(np.argmax(bad))]), d, target.ndim, size)
    src = _as_1d(source._data)
    key = (slice(None),) * d + (idx,)
    a = _scalar_array(_item(alpha), target.dtype)  # alpha.to<scalar_t>(): truncated, wrapped
    with quiet():
        if target.dtype.kind == "b":
            np.logical_or.at(t1, key, np.logical_and(src, a))
        else:
            np.add.at(t1, key, src if a == 1 else src * a)


# --- index_fill_ (index_fill_kernel), _unique (Unique.cpp) ------------------------------------------------
def index_fill__scalar_cpu(self, dim, index, value):
    a = self._data
    d = _ix.index_fill_check(self, dim, index)
    other = index._data
    if np.may_share_memory(a, other) and np.shares_memory(a, other):  # assert_no_overlap(self, index)
        raise RuntimeError(_ALIAS_ERROR)
    if 0 in a.strides and has_internal_overlap(a) is MemOverlap.Yes:
        warnings.warn("Use of index_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
                      "scalar", UserWarning, stacklevel=3)
    number = _item(value)
    if isinstance(number, complex) and a.dtype.kind != "c":
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    fill = _checked_scalar(number, a.dtype)  # source.to<scalar_t>(), before any index is read
    target = a.reshape(1) if a.ndim == 0 else a  # a 0-d self is filled as its one-element view
    size = target.shape[d]
    idx = other.reshape(-1)
    bad = (idx < -size) | (idx >= size)
    if bad.any():
        raise IndexError(f"index {int(idx[int(np.argmax(bad))])} is out of bounds for dimension {d} with size {size}")
    target[(slice(None),) * d + (idx,)] = fill  # negative indices count from the end, as torch's kernel
    return self


def index_fill__tensor_cpu(self, dim, index, value):
    _ix.index_fill_value_check(value)
    return index_fill__scalar_cpu(self, dim, index, _item(value))


def _unique_cpu(self, sorted=True, return_inverse=False):
    """``_unique_cpu``: the distinct elements, sorted (torch's CPU sorts either way); NaNs stay distinct."""
    flat = self._data.reshape(-1)
    if return_inverse:
        values, inverse = np.unique(flat, return_inverse=True, equal_nan=False)
        return wrap_cpu(_fresh(values)), wrap_cpu(_fresh(inverse.reshape(self._data.shape).astype(_I64)))
    return wrap_cpu(_fresh(np.unique(flat, equal_nan=False))), wrap_cpu(_new((0,), np.dtype(_I64)))


# --- isin (TensorCompare.cpp) -----------------------------------------------------------------------
def _number_dtype(value: Any) -> Any:
    """The dtype a Scalar argument's type names (``Scalar::type()``)."""
    from dispatchcore import dtypes

    return (dtypes.bool_ if isinstance(value, bool) else dtypes.int64 if isinstance(value, int)
            else dtypes.complex128 if isinstance(value, complex) else dtypes.float64)


def _isin(elements: Any, test: Any, assume_unique: bool, invert: bool) -> Any:
    """The structured meta's dtype checks, then torch's choice of kernel and its answer (a bool tensor).

    Few test elements (fewer than ``10 * numel ** 0.145``) compare each element with all of them;
    more take torch's sorting kernel, whose ``assume_unique`` path answers as torch's does even for
    repeated elements (an element equal to its sorted neighbour counts as found).
    """
    from dispatchcore import dtypes

    shape = np.shape(elements._data) if isinstance(elements, Tensor) else ()
    for value in (elements, test):
        _ix.isin_dtype_check(value.dtype if isinstance(value, Tensor) else _number_dtype(value))
    common = _np_dtype(dtypes.result_type(elements, test))
    e = np.asarray(elements._data if isinstance(elements, Tensor) else _item(elements)).astype(common).reshape(-1)
    t = np.asarray(test._data if isinstance(test, Tensor) else _item(test)).astype(common).reshape(-1)
    if t.size < int(10.0 * float(e.size) ** 0.145) or not assume_unique or not (e.size + t.size):
        found = np.isin(e, t, invert=invert)
    else:  # torch's sort kernel on the raw elements: a stable sort, then neighbours compared
        joined = np.concatenate([e, t])
        order = np.argsort(joined, kind="stable")
        ranked = joined[order]
        marks = np.empty(ranked.shape, bool)
        marks[:-1] = (ranked[1:] != ranked[:-1]) if invert else (ranked[1:] == ranked[:-1])
        marks[-1] = invert
        mask = np.empty_like(marks)
        mask[order] = marks
        found = mask[:e.size]
    return wrap_cpu(_fresh(found.reshape(shape)))


def _isin_kernels() -> dict[str, Callable[..., Any]]:
    def functional(first, second, *, assume_unique=False, invert=False):
        return _isin(first, second, assume_unique, invert)

    def out_kernel(first, second, *, assume_unique=False, invert=False, out):
        result = _isin(first, second, assume_unique, invert)
        _check_out_dtype(out, result._data.dtype)
        np.copyto(_resize_out(out, result._data.shape), result._data)
        return out

    return {f"isin.{overload}{suffix}": kernel for overload in ("Tensor_Tensor", "Tensor_Scalar", "Scalar_Tensor")
            for suffix, kernel in (("", functional), ("_out", out_kernel))}


def _long(array: Any) -> Any:
    return wrap_cpu(_fresh(np.asarray(array, _I64)))


def _no_long() -> Any:
    return wrap_cpu(_new((0,), np.dtype(_I64)))


def _unique2_cpu(self, sorted=True, return_inverse=False, return_counts=False):
    """``_unique2_cpu``: the distinct elements, sorted either way (NaNs distinct).

    The inverse and the counts come when asked for; empty int64 tensors stand in otherwise.
    """
    a = self._data
    if a.dtype.kind == "c":
        raise _not_implemented("unique", a.dtype)
    values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    return (wrap_cpu(_fresh(values)), _long(inverse.reshape(a.shape)) if return_inverse else _no_long(),
            _long(counts) if return_counts else _no_long())


def _unique_consecutive_flat(a: Any, return_inverse: bool, return_counts: bool) -> tuple[Any, Any, Any]:
    """``unique_consecutive_cpu_template``: the first element of each run (``!=`` starts one: NaNs too)."""
    flat = a.reshape(-1)
    starts = np.ones(flat.shape, bool)
    starts[1:] = flat[1:] != flat[:-1]
    first = np.flatnonzero(starts)
    inverse = (np.cumsum(starts) - 1).reshape(a.shape) if return_inverse else None
    counts = np.diff(np.append(first, flat.size)) if return_counts else None
    return (wrap_cpu(_fresh(flat[first])), _long(inverse) if return_inverse else _no_long(),
            _long(counts) if return_counts else _no_long())


def _unique_dim(a: Any, dim: int, consecutive: bool, name: str) -> tuple[Any, Any, Any]:
    """``_unique_dim_cpu_template``: the distinct slices along ``dim``, with their inverse and counts.

    Slices are ranked lexicographically unless ``consecutive``; the inverse and the counts are always
    computed; the values are stacked along dim 0, then moved back to ``dim`` (not contiguous).
    """
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    zeros = a.shape.count(0)
    if a.shape[d] == 0:
        if zeros != 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
        return wrap_cpu(_fresh(np.empty(a.shape, a.dtype))), _no_long(), _no_long()
    if zeros:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    if a.dtype.kind == "c":
        raise _not_implemented(name, a.dtype)
    moved = np.moveaxis(a, d, 0)
    rows = np.ascontiguousarray(moved).reshape(moved.shape[0], -1)
    order = np.arange(len(rows)) if consecutive else np.lexsort(rows.T[::-1])
    ranked = rows[order]
    new = np.ones(len(ranked), bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)  # at::equal: NaN differs from itself
    group = np.cumsum(new) - 1
    inverse = np.empty(len(rows), _I64)
    inverse[order] = group
    counts = np.bincount(group)
    values = ranked[new].reshape((-1,) + moved.shape[1:])
    return wrap_cpu(np.moveaxis(_fresh(values), 0, d)), _long(inverse), _long(counts)


def unique_consecutive_cpu(self, return_inverse=False, return_counts=False, dim=None):
    a = self._data
    if dim is None or (dim == 0 and a.ndim == 1):
        if a.dtype.kind == "c":
            raise _not_implemented("unique", a.dtype)
        return _unique_consecutive_flat(a, return_inverse, return_counts)
    return _unique_dim(a, dim, True, "unique_dim_consecutive")


def unique_dim_cpu(self, dim, sorted=True, return_inverse=False, return_counts=False):
    return _unique_dim(self._data, dim, False, "unique_dim")


def unique_dim_consecutive_cpu(self, dim, return_inverse=False, return_counts=False):
    return _unique_dim(self._data, dim, True, "unique_dim_consecutive")


def index_add_cpu(self, dim, index, source, *, alpha=1):
    d = _ix.index_add_check(self, dim, index, source)
    out = _new(self._data.shape, self._data.dtype)  # a new result is contiguous (no strides given)
    np.copyto(out, self._data)
    _index_add_into(out, d, index, source, alpha)
    return wrap_cpu(out)


def index_add__cpu(self, dim, index, source, *, alpha=1):
    d = _ix.index_add_check(self, dim, index, source)
    _check_written(self._data, index, source)
    _index_add_into(self._data, d, index, source, alpha)
    return self


def index_add_out_cpu(self, dim, index, source, *, alpha=1, out):
    d = _ix.index_add_check(self, dim, index, source)
    _check_out_dtype(out, self._data.dtype)
    data = _resize_out(out, self._data.shape)
    _check_written(data, index, source)
    if data is not self._data:
        np.copyto(data, self._data)
    _index_add_into(data, d, index, source, alpha)
    return out


def put__cpu(self, index, source, accumulate=False):
    _ix.put_check(self, index, source)
    a = self._data
    _check_written(a, index, source)
    idx = index._data.reshape(-1)
    if idx.size == 0:
        return self
    n = a.size
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[int(np.argmax(bad))])} on a tensor of {n} "
                         "elements.")
    idx = np.where(idx < 0, idx + n, idx)
    key = np.unravel_index(idx, a.shape) if a.ndim else (np.zeros(idx.size, _I64),)  # positions in row-major order
    target = a if a.ndim else a.reshape(1)
    vals = source._data.reshape(-1)
    if not accumulate:
        target[key] = vals  # duplicates: the last write wins, as torch's serial loop
    else:
        with quiet():
            (np.logical_or if a.dtype.kind == "b" else np.add).at(target, key, vals)
    return self


def take_cpu(self, index):
    _ix.take_check(self, index)
    a, idx = self._data, index._data
    flat = a.reshape(-1)
    n = flat.size
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[_first_bad(bad)])} on a tensor of {n} "
                         "elements.")
    return wrap_cpu(_fresh(np.asarray(flat[idx])))


# --- masks ------------------------------------------------------------------------------------------
def masked_fill__scalar_cpu(self, mask, value):
    _ix.masked_fill_check(mask)
    a = self._data
    _ix.inplace_broadcast_check(a.shape, mask._data.shape)
    np.copyto(a, _checked_scalar(value, a.dtype), where=mask._data)  # the mask broadcasts as ``where``
    return self


def masked_fill__tensor_cpu(self, mask, value):
    _ix.masked_fill_check(mask, value)
    return masked_fill__scalar_cpu(self, mask, value._data.item())


def masked_scatter__cpu(self, mask, source):
    _ix.masked_scatter_check(self, mask, source)
    a = self._data
    _ix.inplace_broadcast_check(a.shape, mask._data.shape)
    m = np.broadcast_to(mask._data, a.shape)
    count = int(m.sum())
    src = source._data.reshape(-1)
    if src.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    a[m] = src[:count]
    return self


def masked_select_cpu(self, mask):
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = np.broadcast_shapes(self._data.shape, m.shape)
    return wrap_cpu(_fresh(np.broadcast_to(self._data, shape)[np.broadcast_to(m, shape)]))


# --- nonzero, single elements, where ----------------------------------------------------------------
def _nonzero(a: np.ndarray) -> np.ndarray:
    return np.argwhere(a.reshape(1) if a.ndim == 0 else a)[:, :a.ndim].astype(_I64)


def nonzero_cpu(self):
    r = _nonzero(self._data)
    n = r.shape[0]
    return wrap_cpu(_fresh(r, (1, n)))  # torch's nonzero is laid out column by column


def nonzero_out_cpu(self, *, out):
    r = _nonzero(self._data)
    if out._data.dtype != _I64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type "
                           f"{_TORCH_NAME[out._data.dtype]}")
    np.copyto(_resize_out(out, r.shape), r)
    return out


def nonzero_static_cpu(self, *, size, fill_value=-1):
    _ix.nonzero_static_check(size)
    r = _nonzero(self._data)[:size]
    out = np.full((size, self._data.ndim), fill_value, _I64)
    out[:r.shape[0]] = r
    return wrap_cpu(_fresh(out))


def _local_scalar_dense_cpu(self):
    a = self._data
    if a.size != 1:
        raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
    return a.reshape(()).item()


def where_self_out_cpu(condition, self, other, *, out):
    r = where_self_cpu(condition, self, other)._data
    if out._data.dtype != r.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAME[r.dtype]}, but got "
                           f"{_CPP_NAME[out._data.dtype]} instead")
    np.copyto(_resize_out(out, r.shape, (r,)), r)
    return out


KERNELS: dict[str, Callable[..., Any]] = {
    "gather": gather_cpu, "gather.out": _out_kernel(gather_cpu),
    **_scatter_family("scatter.src", "src", ""), **_scatter_family("scatter.value", "value", ""),
    **_scatter_family("scatter.reduce", "src", "reduce"), **_scatter_family("scatter.value_reduce", "value", "reduce"),
    **_scatter_family("scatter_add", "src", "plain_add"), **_scatter_family("scatter_reduce.two", "src", "two"),
    "index_select": index_select_cpu, "index_select.out": _out_kernel(index_select_cpu),
    "index.Tensor": index_tensor_cpu, "index.Tensor_out": _out_kernel(index_tensor_cpu),
    "_index_put_impl_": _index_put_impl__cpu,
    "masked_fill_.Scalar": masked_fill__scalar_cpu, "masked_fill_.Tensor": masked_fill__tensor_cpu,
    "masked_scatter_": masked_scatter__cpu,
    "masked_select": masked_select_cpu, "masked_select.out": _out_kernel(masked_select_cpu),
    "nonzero": nonzero_cpu, "nonzero.out": nonzero_out_cpu,
    "nonzero_static": nonzero_static_cpu, "nonzero_static.out": _out_kernel(nonzero_static_cpu),
    "take": take_cpu, "take.out": _out_kernel(take_cpu),
    "index_add": index_add_cpu, "index_add_": index_add__cpu, "index_add.out": index_add_out_cpu,
    "put_": put__cpu,
    "index_fill_.int_Scalar": index_fill__scalar_cpu, "index_fill_.int_Tensor": index_fill__tensor_cpu,
    **_isin_kernels(),
    "_unique": _unique_cpu, "_unique2": _unique2_cpu, "unique_consecutive": unique_consecutive_cpu,
    "unique_dim": unique_dim_cpu, "unique_dim_consecutive": unique_dim_consecutive_cpu,
    "_local_scalar_dense": _local_scalar_dense_cpu,
    "where.self_out": where_self_out_cpu,
}
