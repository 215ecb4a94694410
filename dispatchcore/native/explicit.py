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

import warnings
from collections.abc import Callable
from typing import Any

from .. import dtypes
from .._composites import wrapped_number
from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES, TYPEMETA_NAMES, _wrapped_dtype
from ..ops import aten
from ..shapes import dense_strides_like, expand_geometry, infer_size, wrap_dim
from ..tensor import Tensor
from .stubs import COPY_STUB_DEVICES, copy_stub

__all__ = ["KERNELS", "check_to_copy_layout", "linspace_dtype", "register", "resize_eye_out", "resize_range_out"]

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


# --- copies: copy_ hands the elements to a device's copy_stub, or to _copy_from ------------------------
def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """``copy_impl`` (Copy.cpp): the meta shortcut, then ``copy_stub`` or ``_copy_from`` by device type."""
    if self is src:
        return self
    device, src_device = self.device.type, src.device.type
    if device == "meta":  # copies into meta are checked and otherwise ignored, like any meta in-place op
        shape = infer_size(tuple(self.shape), tuple(src.shape))
        if shape != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
        return self
    if src_device == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if device not in COPY_STUB_DEVICES or src_device not in COPY_STUB_DEVICES:
        aten._copy_from.default(src, self, non_blocking)  # dispatches to the device copy_ cannot reach
        return self
    copy_stub("cuda" if src_device == "cuda" else device, self, src, non_blocking)
    return self


_LAYOUT_NAMES = ("Strided", "Sparse", "SparseCsr", "Mkldnn", "SparseCsc", "SparseBsr", "SparseBsc", "Jagged")


def check_to_copy_layout(layout: Any) -> None:
    """``_to_copy`` keeps the (strided) layout: another one is refused in torch's words."""
    if layout is not None and getattr(layout, "value", layout) != 0:
        raise RuntimeError("to(options) doesn't support converting to a different layout, but got self.layout "
                           f"being Strided and options.layout set as {_LAYOUT_NAMES[getattr(layout, 'value', layout)]}")


def _to_copy(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
             non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    """``empty_strided`` (or ``empty`` in a memory format) on the target device, then ``copy_``."""
    check_to_copy_layout(layout)
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if memory_format is None or getattr(memory_format, "name", memory_format) in ("preserve_format", 1):
        strides = dense_strides_like(tuple(self.shape), self.stride())
        out = aten.empty_strided.default(list(self.shape), list(strides), dtype=dtype, device=device,
                                         pin_memory=pin_memory)
    else:
        out = aten.empty.memory_format(list(self.shape), dtype=dtype, device=device, pin_memory=pin_memory,
                                       memory_format=memory_format)
    return aten.copy_.default(out, self, non_blocking)


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


def eye(n: int, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return aten.eye.out(n, out=_factory([0], dtype, layout, device, pin_memory))


def eye_m(n: int, m: int, *, dtype: Any = None, layout: Any = None, device: Any = None,
          pin_memory: Any = None) -> Tensor:
    return aten.eye.m_out(n, m, out=_factory([0], dtype, layout, device, pin_memory))


def resize_eye_out(out: Tensor, n: int, m: int) -> None:
    """``eye_out``'s checks, then ``out.resize_({n, m})`` (no warning): the backends' kernels share it."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    aten.resize_.default(out, [n, m])


# --- ranges: an empty tensor, then the out= kernel sizes and fills it -----------------------------------
def arange_start_step(start: Any, end: Any, step: Any = 1, *, dtype: Any = None, layout: Any = None,
                      device: Any = None, pin_memory: Any = None) -> Tensor:
    if dtype is None and all(_is_integral(v) for v in (start, end, step)):  # bool counts as integral
        dtype = dtypes.int64
    out = _factory([0], dtype, layout, device, pin_memory)
    return aten.arange.start_out(start, end, step, out=out)


def arange(end: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return arange_start_step(0, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def arange_start(start: Any, end: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                 pin_memory: Any = None) -> Tensor:
    return arange_start_step(start, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def arange_out(end: Any, *, out: Tensor) -> Tensor:
    return aten.arange.start_out(0, end, 1, out=out)


def resize_range_out(out: Tensor, size: int, warn: bool) -> None:
    """The out tensor of ``arange``/``linspace`` is resized (``resize_``) when its numel differs."""
    numel = out.numel()
    if numel != size:
        if warn and numel > 0:  # arange only: a size computed from floats may be off by one
            warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {numel} which "
                          f"does not match the computed number of elements {size}. Note that this may occur as a "
                          f"result of rounding error. The out tensor will be resized to a tensor of shape "
                          f"({size},).", UserWarning, stacklevel=4)
        aten.resize_.default(out, [size])


def _is_integral(value: Any) -> bool:
    if isinstance(value, Tensor):
        return not (value.dtype.is_floating_point or value.dtype.is_complex)
    return isinstance(value, int)


def linspace_dtype(start: Any, end: Any, dtype: Any, name: str = "torch.linspace()") -> Any:
    """``linspace_logspace_infer_options``: complex ends ask for a complex dtype; else the default."""
    if any(isinstance(v, complex) or (isinstance(v, Tensor) and v.dtype.is_complex) for v in (start, end)):
        inferred = dtypes.complex128 if dtypes.get_default_dtype() is dtypes.float64 else dtypes.complex64
        if dtype is not None and not dtype.is_complex:
            raise RuntimeError(f"{name}: inferred dtype {TYPEMETA_NAMES[inferred.name]} can't be safely cast to "
                               f"passed dtype {SCALAR_TYPE_NAMES[dtype.name]}")
        return dtype or inferred
    return dtype or dtypes.get_default_dtype()


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    out = _factory([steps], linspace_dtype(start, end, dtype), layout, device, pin_memory)
    return aten.linspace.out(start, end, steps, out=out)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> Tensor:
    """``at::logspace``: an empty tensor of the inferred dtype, filled by ``logspace.out``."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    out = _factory([steps], linspace_dtype(start, end, dtype, "torch.logspace()"), layout, device, pin_memory)
    return aten.logspace.out(start, end, steps, base, out=out)


KERNELS: dict[str, Callable[..., Any]] = {
    "t": t, "transpose.int": transpose_int, "permute": permute, "expand": expand, "squeeze": squeeze,
    "squeeze.dim": squeeze_dim, "squeeze.dims": squeeze_dims, "unsqueeze": unsqueeze, "select.int": select_int,
    "slice.Tensor": slice_tensor, "alias": alias,
    **_scalar_overloads("add"), **_scalar_overloads("sub"), **_scalar_overloads("mul"), **_scalar_overloads("div"),
    "div.Scalar_mode": div_scalar_mode, "div_.Scalar_mode": div__scalar_mode,
    "abs": abs, "abs_": abs_, "sum": sum, "mean": mean, "stack": stack, "clone": clone, "_unsafe_view": _unsafe_view,
    "eye": eye, "eye.m": eye_m,
    "zeros": zeros, "ones": ones, "full": full, "scalar_tensor": scalar_tensor, "copy_": copy_, "_to_copy": _to_copy,
    "arange": arange, "arange.start": arange_start, "arange.start_step": arange_start_step, "arange.out": arange_out,
    "linspace": linspace, "logspace": logspace,
}


def register(lib: Library) -> None:
    """Register every kernel above at ``CompositeExplicitAutograd``."""
    for name, kernel in KERNELS.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
