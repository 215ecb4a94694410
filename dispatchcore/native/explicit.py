"""CompositeExplicitAutograd kernels of the core ops: what torch gives every backend for free.

Mirrors the ``CompositeExplicitAutograd`` entries of ``native_functions.yaml`` for the core ops:
views (``TensorShape.cpp``: a view is new sizes and strides over the same storage, which every
strided backend reaches through ``as_strided``), the ``.Scalar`` arithmetic overloads (a wrapped
number and the ``.Tensor`` overload), ``abs`` through ``abs.out``, ``mean``/``sum`` through their
``dim`` overloads, ``stack``, ``clone``, ``_unsafe_view`` and the filled factories (``empty`` then
``fill_``/``zero_``). They call dispatched operators only, so a new device that implements the
primitives (``empty.memory_format``, ``empty_strided``, ``as_strided``, ``copy_``, ``fill_.Scalar``,
``zero_`` and the ``out=`` kernels) gets all of these.

Invariant: registered at ``CompositeExplicitAutograd`` for exactly the operators for which torch
registers there (``torch_keys.TORCH_KEYS``). Where the CPU backend keeps a kernel of its own for
speed (``dispatchcore_backends.cpu.SPEED_KERNELS``), that kernel computes what the composite
computes (``tests/behavior/test_registrations.py`` checks both against each other).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes
from .._composites import wrapped_number
from ..dtypes import SCALAR_TYPE_NAMES, _wrapped_dtype
from ..library import Library
from ..ops import aten
from ..shapes import dense_strides_like, expand_geometry, wrap_dim
from ..tensor import Tensor

__all__ = ["KERNELS", "register"]

_INT64_MAX = 2**63 - 1


def _view(self: Tensor, shape: Any, strides: Any, offset: int) -> Tensor:
    return aten.as_strided.default(self, list(shape), list(strides), offset)


# --- views -------------------------------------------------------------------------------------------
def transpose_int(self: Tensor, dim0: int, dim1: int) -> Tensor:
    ndim = self.dim()
    dim0, dim1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    shape, strides = list(self.shape), list(self.stride())
    if ndim:
        shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
        strides[dim0], strides[dim1] = strides[dim1], strides[dim0]
    return _view(self, shape, strides, self.storage_offset())


def t(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return transpose_int(self, 0, 1) if self.dim() == 2 else alias(self)


def permute(self: Tensor, dims: Any) -> Tensor:
    ndim = self.dim()
    dims = list(dims)
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = [wrap_dim(d, ndim) for d in dims]
    if len(set(wrapped)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    shape, strides = self.shape, self.stride()
    return _view(self, [shape[d] for d in wrapped], [strides[d] for d in wrapped], self.storage_offset())


def _type_string(t: Tensor) -> str:
    """``toString(self.options())``: ``CPUFloatType``, ``MetaFloatType``, ..."""
    backend = {"cpu": "CPU", "meta": "Meta", "cuda": "CUDA"}.get(t.device.type, "PrivateUse1")
    return f"{backend}{SCALAR_TYPE_NAMES[t.dtype.name]}Type"


def expand(self: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    sizes = tuple(int(s) for s in size)
    if len(sizes) < self.dim():
        raise RuntimeError(
            f"expand({_type_string(self)}{{{list(self.shape)}}}, size={list(sizes)}): the number of "
            f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({self.dim()})")
    shape, strides = expand_geometry(tuple(self.shape), self.stride(), sizes)
    return _view(self, shape, strides, self.storage_offset())


def squeeze(self: Tensor) -> Tensor:
    keep = [d for d, s in enumerate(self.shape) if s != 1]
    strides = self.stride()
    return _view(self, [self.shape[d] for d in keep], [strides[d] for d in keep], self.storage_offset())


def squeeze_dim(self: Tensor, dim: int) -> Tensor:
    return squeeze_dims(self, [dim])


def squeeze_dims(self: Tensor, dim: Any) -> Tensor:
    ndim = self.dim()
    dims: set[int] = set()
    for d in dim:
        w = wrap_dim(d, ndim)
        if w in dims:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        dims.add(w)
    shape, strides = self.shape, self.stride()
    keep = [i for i in range(ndim) if not (i in dims and shape[i] == 1)]
    return _view(self, [shape[i] for i in keep], [strides[i] for i in keep], self.storage_offset())


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    ndim = self.dim()
    dim = wrap_dim(dim, ndim + 1)
    shape, strides = list(self.shape), list(self.stride())
    new_stride = 1 if dim >= ndim else shape[dim] * strides[dim]
    shape.insert(dim, 1)
    strides.insert(dim, new_stride)
    return _view(self, shape, strides, self.storage_offset())


def select_int(self: Tensor, dim: int, index: int) -> Tensor:
    ndim = self.dim()
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, ndim)
    size = self.shape[dim]
    if size <= -1 - index or size <= index:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                         f"dimension {dim}")
    if index < 0:
        index += size
    strides = self.stride()
    keep = [d for d in range(ndim) if d != dim]
    return _view(self, [self.shape[d] for d in keep], [strides[d] for d in keep],
                 self.storage_offset() + index * strides[dim])


def slice_tensor(self: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                 step: int = 1) -> Tensor:
    ndim = self.dim()
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, ndim)
    shape, strides = list(self.shape), list(self.stride())
    start_val = 0 if start is None else start
    end_val = _INT64_MAX if end is None else end
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    if start_val == _INT64_MAX:
        start_val = 0
    size = shape[dim]
    if start_val < 0:
        start_val += size
    if end_val < 0:
        end_val += size
    start_val = 0 if start_val < 0 else min(start_val, size)
    end_val = start_val if end_val < start_val else min(end_val, size)
    offset = self.storage_offset() + start_val * strides[dim]
    shape[dim] = (end_val - start_val + step - 1) // step  # round up
    strides[dim] *= step
    return _view(self, shape, strides, offset)


def alias(self: Tensor) -> Tensor:
    return _view(self, self.shape, self.stride(), self.storage_offset())


# --- arithmetic through the .Tensor overloads and out= ------------------------------------------------
def _scalar_overloads(name: str) -> dict[str, Callable[..., Any]]:
    """``name.Scalar``/``name_.Scalar``: the ``.Tensor`` overload with the number wrapped (torch's CEA)."""
    functional = getattr(aten, name).Tensor
    inplace = getattr(aten, name + "_").Tensor

    def scalar(self: Tensor, other: Any) -> Tensor:
        return functional(self, wrapped_number(other))

    def scalar_(self: Tensor, other: Any) -> Tensor:
        return inplace(self, wrapped_number(other))

    def scalar_alpha(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        return functional(self, wrapped_number(other), alpha=alpha)

    def scalar_alpha_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        return inplace(self, wrapped_number(other), alpha=alpha)

    if name in ("add", "sub"):  # the schemas with alpha
        return {f"{name}.Scalar": scalar_alpha, f"{name}_.Scalar": scalar_alpha_}
    return {f"{name}.Scalar": scalar, f"{name}_.Scalar": scalar_}


def div_scalar_mode(self: Tensor, other: Any, *, rounding_mode: Any) -> Tensor:
    return aten.div.Tensor_mode(self, wrapped_number(other), rounding_mode=rounding_mode)


def div__scalar_mode(self: Tensor, other: Any, *, rounding_mode: Any) -> Tensor:
    return aten.div_.Tensor_mode(self, wrapped_number(other), rounding_mode=rounding_mode)


_REAL = {"complex64": "float32", "complex128": "float64"}


def abs(self: Tensor) -> Tensor:  # noqa: A001 - the operator's name
    """``abs.out`` into a new tensor; of a complex tensor, a real one (``unary_op_impl_with_complex_to_float``)."""
    real = _REAL.get(self.dtype.name)
    dtype = getattr(dtypes, real) if real else self.dtype
    return aten.abs.out(self, out=aten.empty.memory_format([0], dtype=dtype, device=self.device))


def abs_(self: Tensor) -> Tensor:
    return aten.abs.out(self, out=self)


def sum(self: Tensor, *, dtype: Any = None) -> Tensor:  # noqa: A001 - the operator's name
    return aten.sum.dim_IntList(self, None, False, dtype=dtype)


def mean(self: Tensor, *, dtype: Any = None) -> Tensor:
    return aten.mean.dim(self, None, False, dtype=dtype)


def stack(tensors: list[Tensor], dim: int = 0) -> Tensor:
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(tensors[0].shape)
    for i, t in enumerate(tensors[1:], 1):
        if tuple(t.shape) != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}")
    dim = wrap_dim(dim, len(first) + 1)
    if dim < len(first):  # cat, then split the new dimension out with a view (always possible)
        sizes = list(first)
        sizes.insert(dim, len(tensors))
        return aten.view.default(aten.cat.default(tensors, dim), sizes)
    return aten.cat.default([aten.unsqueeze.default(t, dim) for t in tensors], dim)


def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    """``empty_like(self, memory_format)`` then ``copy_``: preserve_format keeps a dense layout."""
    if memory_format is None or getattr(memory_format, "name", memory_format) in ("preserve_format", 1):
        strides = dense_strides_like(tuple(self.shape), self.stride())
        out = aten.empty_strided.default(list(self.shape), list(strides), dtype=self.dtype, device=self.device)
    else:
        out = aten.empty.memory_format(list(self.shape), dtype=self.dtype, device=self.device,
                                       memory_format=memory_format)
    return aten.copy_.default(out, self)


def _unsafe_view(self: Tensor, size: Any) -> Tensor:
    return aten.view.default(self, size)


# --- factories: empty, then fill ------------------------------------------------------------------------
def _factory(size: Any, dtype: Any, layout: Any, device: Any, pin_memory: Any) -> Tensor:
    return aten.empty.memory_format(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def zeros(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return aten.zero_.default(_factory(size, dtype, layout, device, pin_memory))


def ones(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return aten.fill_.Scalar(_factory(size, dtype, layout, device, pin_memory), 1)


def full(size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
         pin_memory: Any = None) -> Tensor:
    if dtype is None:  # at::full infers the dtype from the fill value, as torch.full does
        dtype = _wrapped_dtype(fill_value)
    return aten.fill_.Scalar(_factory(size, dtype, layout, device, pin_memory), fill_value)


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: Any = None) -> Tensor:
    return aten.fill_.Scalar(_factory([], dtype, layout, device, pin_memory), s)


KERNELS: dict[str, Callable[..., Any]] = {
    "t": t, "transpose.int": transpose_int, "permute": permute, "expand": expand, "squeeze": squeeze,
    "squeeze.dim": squeeze_dim, "squeeze.dims": squeeze_dims, "unsqueeze": unsqueeze, "select.int": select_int,
    "slice.Tensor": slice_tensor, "alias": alias,
    **_scalar_overloads("add"), **_scalar_overloads("sub"), **_scalar_overloads("mul"), **_scalar_overloads("div"),
    "div.Scalar_mode": div_scalar_mode, "div_.Scalar_mode": div__scalar_mode,
    "abs": abs, "abs_": abs_, "sum": sum, "mean": mean, "stack": stack, "clone": clone, "_unsafe_view": _unsafe_view,
    "zeros": zeros, "ones": ones, "full": full, "scalar_tensor": scalar_tensor,
}


def register(lib: Library) -> None:
    """Register every kernel above at ``CompositeExplicitAutograd``."""
    for name, kernel in KERNELS.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
