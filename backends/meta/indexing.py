"""Meta kernels of the indexing family: the geometry of gathers, scatters, ``index`` and masks.

Mirrors the Meta entries torch 2.13 has for these operators (``torch/_meta_registrations.py`` and
the structured meta functions of ``TensorAdvancedIndexing.cpp``): the result's shape, strides and
dtype, with the CPU kernel's checks and error texts (``dispatchcore.native.indexing``). Operators
whose result shape depends on the data (``nonzero``, ``index`` with a mask) raise torch's
NotImplementedError; ``masked_select`` has no Meta kernel in torch, and none here. The
composites torch also gives a Meta kernel (``index_put``, ``masked_fill``, ``masked_scatter``)
run on meta tensors. Invariant: a meta result has exactly the geometry the CPU result has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore.native import indexing as _ix
from dispatchcore.native import shape as _shape
from dispatchcore.shapes import broadcast_shapes
from dispatchcore.tensor import Tensor

from .kernels import _dt_of, _resize_out, _tm, meta_tensor, python_out_wrapper, where_self_meta

__all__ = ["KERNELS"]


def _exact_out(out: Tensor, dtype: Any) -> None:
    if out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_tm(dtype)}, but got {_tm(out.dtype)} instead")


def _out_kernel(functional: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def out_kernel(*args: Any, out: Tensor, **kwargs: Any) -> Tensor:
        result = functional(*args, **kwargs)
        _exact_out(out, result.dtype)
        return _resize_out(out, tuple(result.shape), tuple(result.stride()))
    return out_kernel


def gather_meta(self: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    _ix.gather_check(self, dim, index)
    return meta_tensor(tuple(index.shape), self.dtype)


def _scatter_family(name: str, has_src: bool, reduce_kind: str) -> dict[str, Callable[..., Any]]:
    def check(self: Tensor, dim: int, index: Tensor, src: Any, reduce: Any) -> None:
        _ix.scatter_check("scatter", self, dim, index, src if has_src else None)
        if reduce_kind in ("reduce", "two"):
            _ix.scatter_reduce_name(reduce, reduce_kind == "two")

    def functional(self: Tensor, dim: int, index: Tensor, src: Any, reduce: Any = None, *,
                   include_self: bool = True) -> Tensor:
        check(self, dim, index, src, reduce)
        return meta_tensor(tuple(self.shape), self.dtype)

    def inplace(self: Tensor, dim: int, index: Tensor, src: Any, reduce: Any = None, *,
                include_self: bool = True) -> Tensor:
        check(self, dim, index, src, reduce)
        return self

    def out_kernel(self: Tensor, dim: int, index: Tensor, src: Any, reduce: Any = None, *,
                   include_self: bool = True, out: Tensor) -> Tensor:
        check(self, dim, index, src, reduce)
        _exact_out(out, self.dtype)
        return _resize_out(out, tuple(self.shape))

    base, _, overload = name.partition(".")
    suffix = f".{overload}" if overload else ""
    out_name = {"": f"{base}.out", "two": f"{base}.two_out"}.get(overload, f"{base}.{overload}_out")
    return {name: functional, f"{base}_{suffix}": inplace, out_name: out_kernel}


def index_select_meta(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d = _ix.index_select_check(self, dim, index)
    if self.dim() == 0:
        return meta_tensor((), self.dtype)
    shape = list(self.shape)
    shape[d] = index.numel()
    return meta_tensor(shape, self.dtype)


def _long_entries(self: Tensor, indices: Any) -> list[Any]:
    _ix.check_indices(tuple(self.shape), indices)
    entries = []
    for t in indices:
        if t is not None and t.dtype.name in ("bool", "uint8"):
            raise NotImplementedError(_ix.NONZERO_META_ERROR)
        entries.append(None if t is None else (tuple(t.shape), tuple(t.stride())))
    if all(e is None for e in entries):
        raise IndexError("at least one index must be provided")
    return entries


def index_tensor_meta(self: Tensor, indices: Any) -> Tensor:
    entries = _long_entries(self, indices)
    shape, strides, _ = _ix.index_geometry(tuple(self.shape), tuple(self.stride()), entries)
    return meta_tensor(shape, self.dtype, strides)


def _index_put_impl__meta(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False,
                          unsafe: bool = False) -> Tensor:
    if len(indices) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {len(indices)})")
    if _ix.is_mask_fill(indices, values, accumulate):
        _ix.check_indices(tuple(self.shape), indices)
        return self
    shape = _ix.index_geometry(tuple(self.shape), tuple(self.stride()), _long_entries(self, indices))[0]
    _ix.check_index_put(self.dtype, shape, tuple(values.shape), values.dtype)
    return self


def masked_fill__scalar_meta(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    _ix.masked_fill_check(mask)
    _ix.inplace_broadcast_check(tuple(self.shape), tuple(mask.shape))
    return self


def masked_fill__tensor_meta(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    _ix.masked_fill_check(mask, value)
    _ix.inplace_broadcast_check(tuple(self.shape), tuple(mask.shape))
    return self


def masked_scatter__meta(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    _ix.masked_scatter_check(self, mask, source)
    _ix.inplace_broadcast_check(tuple(self.shape), tuple(mask.shape))
    return self


def _index_fill_meta(self: Tensor, dim: int, index: Tensor, value: Any, inplace: bool) -> Tensor:
    """The Meta kernel of torch's ref ``_index_fill``: two checks, then self or a clone of its geometry."""
    if index.dim() > 1:
        raise RuntimeError(f"Index should have dimension 1 or 0 (got {index.dim()})")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"Only supports 0-dimensional value tensor. Got a tensor with {value.dim()} dimensions.")
    shape = list(self.shape) or [1]
    shape[dim] = index.numel()  # the ref's expand shape: an out-of-range dim fails here, as there
    if inplace:
        return self
    return meta_tensor(tuple(self.shape), self.dtype, _shape.like_strides(self, None))


def _masked_result(self: Tensor, mask: Tensor) -> Tensor:
    return meta_tensor(tuple(broadcast_shapes(tuple(mask.shape), tuple(self.shape))), self.dtype)


def masked_fill_scalar_meta(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    return masked_fill__scalar_meta(_masked_result(self, mask), mask, value)


def masked_fill_tensor_meta(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    return masked_fill__tensor_meta(_masked_result(self, mask), mask, value)


def masked_scatter_meta(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return masked_scatter__meta(_masked_result(self, mask), mask, source)


def nonzero_meta(self: Tensor) -> Tensor:
    raise NotImplementedError(_ix.NONZERO_META_ERROR)


def nonzero_out_meta(self: Tensor, *, out: Tensor) -> Tensor:
    raise NotImplementedError(_ix.NONZERO_META_ERROR)


def nonzero_static_meta(self: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    _ix.nonzero_static_check(size)
    return meta_tensor((size, self.dim()), _dt_of("int64"), (1, size))


def index_add_meta(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    _ix.index_add_check(self, dim, index, source)
    return meta_tensor(tuple(self.shape), self.dtype)  # set_output_raw_strided with no strides: contiguous


def index_add__meta(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    _ix.index_add_check(self, dim, index, source)
    return self


def index_add_out_meta(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1,
                       out: Tensor) -> Tensor:
    _ix.index_add_check(self, dim, index, source)
    _exact_out(out, self.dtype)
    return _resize_out(out, tuple(self.shape))


def put__meta(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    _ix.put_check(self, index, source)
    return self


def take_meta(self: Tensor, index: Tensor) -> Tensor:
    _ix.take_check(self, index)
    return meta_tensor(tuple(index.shape), self.dtype)


def _local_scalar_dense_meta(self: Tensor) -> Any:
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")


def where_self_out_meta(condition: Tensor, self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    result = where_self_meta(condition, self, other)
    _exact_out(out, result.dtype)
    return _resize_out(out, tuple(result.shape), tuple(result.stride()))


def isin_meta(first: Any, second: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """The Python meta ``isin`` of torch: numbers made tensors, both dtypes checked, ``empty_like(elements)`` bool."""
    from dispatchcore import dtypes
    from dispatchcore.shapes import is_non_overlapping_and_dense

    def dtype_of(value: Any) -> Any:  # torch.tensor(number): bool, int64, the default dtype, complex64
        if isinstance(value, Tensor):
            return value.dtype
        return (dtypes.bool_ if isinstance(value, bool) else dtypes.int64 if isinstance(value, int)
                else dtypes.complex64 if isinstance(value, complex) else dtypes.get_default_dtype())

    _ix.isin_dtype_check(dtype_of(first), python=True)
    _ix.isin_dtype_check(dtype_of(second), python=True)
    if not isinstance(first, Tensor):
        return meta_tensor((), dtypes.bool_)
    shape, strides = tuple(first.shape), first.stride()
    return meta_tensor(shape, dtypes.bool_, strides if is_non_overlapping_and_dense(shape, strides) else None)


KERNELS: dict[str, Callable[..., Any]] = {
    **{f"isin.{overload}{suffix}": kernel for overload in ("Tensor_Tensor", "Tensor_Scalar", "Scalar_Tensor")
       for suffix, kernel in (("", isin_meta), ("_out", python_out_wrapper(isin_meta)))},
    "gather": gather_meta, "gather.out": _out_kernel(gather_meta),
    **_scatter_family("scatter.src", True, ""), **_scatter_family("scatter.value", False, ""),
    **_scatter_family("scatter.reduce", True, "reduce"), **_scatter_family("scatter.value_reduce", False, "reduce"),
    **_scatter_family("scatter_add", True, ""), **_scatter_family("scatter_reduce.two", True, "two"),
    "index_select": index_select_meta, "index_select.out": _out_kernel(index_select_meta),
    "index.Tensor": index_tensor_meta, "index.Tensor_out": _out_kernel(index_tensor_meta),
    "_index_put_impl_": _index_put_impl__meta,
    # composites torch also registers at Meta: they run on meta tensors
    "index_put": lambda self, indices, values, accumulate=False: _index_put_impl__meta(
        meta_tensor(tuple(self.shape), self.dtype, _shape.like_strides(self, None)), indices, values, accumulate),
    "index_put_": _ix.index_put_,
    "masked_fill.Scalar": masked_fill_scalar_meta, "masked_fill.Tensor": masked_fill_tensor_meta,
    "masked_fill_.Scalar": masked_fill__scalar_meta, "masked_fill_.Tensor": masked_fill__tensor_meta,
    "masked_fill.Scalar_out": _out_kernel(masked_fill_scalar_meta),
    "masked_fill.Tensor_out": _out_kernel(masked_fill_tensor_meta),
    "masked_scatter": masked_scatter_meta, "masked_scatter_": masked_scatter__meta,
    "masked_scatter.out": _out_kernel(masked_scatter_meta),
    "masked_scatter_backward": lambda grad_output, mask, sizes: meta_tensor(tuple(sizes), grad_output.dtype),
    "nonzero": nonzero_meta, "nonzero.out": nonzero_out_meta,
    "nonzero_static": nonzero_static_meta, "nonzero_static.out": _out_kernel(nonzero_static_meta),
    "take": take_meta, "take.out": _out_kernel(take_meta),
    "index_add": index_add_meta, "index_add_": index_add__meta, "index_add.out": index_add_out_meta,
    "put_": put__meta,
    **{f"index_fill{suffix}.int_{kind}": (lambda inplace: lambda self, dim, index, value: _index_fill_meta(
        self, dim, index, value, inplace))(suffix == "_") for suffix in ("", "_") for kind in ("Scalar", "Tensor")},
    **{f"index_fill.int_{kind}_out": python_out_wrapper(lambda self, dim, index, value: _index_fill_meta(
        self, dim, index, value, False)) for kind in ("Scalar", "Tensor")},
    "_local_scalar_dense": _local_scalar_dense_meta,
    "where.self_out": where_self_out_meta,
}
