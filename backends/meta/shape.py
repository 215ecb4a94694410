"""Meta kernels of the shape family: the geometry of flips, rolls, repeats, triangles and factories.

Covers ``flip``, ``roll``, ``repeat``, ``tril``/``triu``, the ``*_like``/``new_*`` factories,
``randperm``, ``tril_indices``/``triu_indices``, the ``*_scatter``/``copy``/``fill`` ops, and
``resize_`` (new geometry in place).

Mirrors the Meta entries torch 2.13 has for these operators (``torch/_meta_registrations.py`` and
the structured ``tril``/``triu`` meta functions): the result's shape, strides and dtype, with the
CPU kernel's checks and error texts. The scatter ops, ``copy`` and ``fill`` run their composite
(``dispatchcore.native.shape``) on meta tensors, as torch's meta registrations decompose them.
Invariant: a meta result has exactly the geometry the CPU result has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore.native import shape as _shape
from dispatchcore.tensor import Tensor

from .kernels import (
    MetaData,
    _check_fits,
    _check_sizes,
    _dt_of,
    _factory_dtype,
    _resize_out,
    _scalar,
    _size_list,
    _storage_nbytes,
    _tm,
    empty_strided_meta,
    meta_tensor,
)
from .shapes import contiguous_strides, storage_nbytes

__all__ = ["KERNELS"]


def flip_meta(self: Tensor, dims: Any) -> Tensor:
    _shape.wrap_dims(dims, self.dim())
    return meta_tensor(tuple(self.shape), self.dtype, _shape.like_strides(self, None))


def roll_meta(self: Tensor, shifts: Any, dims: Any = ()) -> Tensor:
    _shape.roll_check(_size_list(shifts), _size_list(dims))
    for d in _size_list(dims):
        _shape.wrap_dim(d, self.dim())
    return meta_tensor(tuple(self.shape), self.dtype)


def repeat_meta(self: Tensor, repeats: Any) -> Tensor:
    target = tuple(_shape.repeat_shape(tuple(self.shape), _size_list(repeats)))
    _check_sizes(target)
    return meta_tensor(target, self.dtype)


def _triangle(name: str) -> dict[str, Callable[..., Any]]:
    def functional(self: Tensor, diagonal: int = 0) -> Tensor:
        _shape.tril_check(name, self.dim())
        return meta_tensor(tuple(self.shape), self.dtype)

    def inplace(self: Tensor, diagonal: int = 0) -> Tensor:
        _shape.tril_check(name, self.dim())
        return self

    def out_kernel(self: Tensor, diagonal: int = 0, *, out: Tensor) -> Tensor:
        _shape.tril_check(name, self.dim())
        if out.dtype is not self.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {_tm(self.dtype)}, but got {_tm(out.dtype)} "
                               "instead")
        return _resize_out(out, tuple(self.shape))

    return {name: functional, f"{name}_": inplace, f"{name}.out": out_kernel}


def _like(self: Tensor, dtype: Any, memory_format: Any) -> Tensor:
    d = self.dtype if dtype is None else _dt_of(dtype)
    return meta_tensor(tuple(self.shape), d, _shape.like_strides(self, memory_format))


def empty_like_meta(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
                    pin_memory: Any = None, memory_format: Any = None) -> Tensor:
    return _like(self, dtype, memory_format)


def _new(self: Tensor, size: Any, dtype: Any) -> Tensor:
    shape = _size_list(size)
    _check_sizes(shape)
    return meta_tensor(shape, self.dtype if dtype is None else _dt_of(dtype))


def new_empty_meta(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> Tensor:
    return _new(self, size, dtype)


def new_empty_strided_meta(self: Tensor, size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                           device: Any = None, pin_memory: Any = None) -> Tensor:
    return empty_strided_meta(size, stride, dtype=self.dtype if dtype is None else dtype)


def new_full_meta(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, pin_memory: Any = None) -> Tensor:
    out = _new(self, size, dtype)
    _check_fits(_scalar(fill_value), out.dtype)
    return out


def randperm_meta(n: int, *, dtype: Any = 4, layout: Any = None, device: Any = None,
                  pin_memory: Any = None) -> Tensor:
    _check_sizes((n,))
    return meta_tensor((n,), _factory_dtype(dtype))


def randperm_generator_out_meta(n: int, *, generator: Any = None, out: Tensor) -> Tensor:
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return _resize_out(out, (n,))


def _trilu_indices(name: str) -> dict[str, Callable[..., Any]]:
    """``name`` and ``name.out`` as torch's Python meta kernels: its checks, then a (2, N) tensor."""

    def functional(row: int, col: int, offset: int = 0, *, dtype: Any = 4, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> Tensor:
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got {row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got {col}")
        d = _factory_dtype(dtype)
        if d.name not in ("int32", "int64"):
            raise RuntimeError(f"\"{name}\" not implemented for 'torch.{d.name}'")
        return meta_tensor((2, _shape.trilu_indices_size(name, row, col, offset)), d)

    def out_kernel(row: int, col: int, offset: int = 0, *, out: Tensor) -> Tensor:
        result = functional(row, col, offset, dtype=out.dtype)  # torch's out_wrapper: out's dtype
        return _resize_out(out, tuple(result.shape), python_meta=True)

    functional.__name__, out_kernel.__name__ = f"{name}_meta", f"{name}_out_meta"
    return {name: functional, f"{name}.out": out_kernel}


def _set_geometry(t: Tensor, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
    """New sizes and strides at ``t``'s storage offset; the storage grows to what they need."""
    offset, itemsize = t.storage_offset(), t.element_size()
    nbytes = max(_storage_nbytes(t), storage_nbytes(shape, strides, itemsize, offset))
    t._data = MetaData(shape, [s * itemsize for s in strides], t._data.dtype, offset, nbytes)


def resize__meta(self: Tensor, size: Any, *, memory_format: Any = None) -> Tensor:
    """``resize_``: the CPU kernel's geometry (same storage offset, contiguous or restrided)."""
    shape = _shape.resize_sizes(size)
    if shape != tuple(self.shape):
        _set_geometry(self, shape, contiguous_strides(shape))
    strides = _shape.resize_restride(shape, memory_format)
    if strides is not None:
        _set_geometry(self, shape, strides)
    return self


KERNELS: dict[str, Callable[..., Any]] = {
    "flip": flip_meta, "roll": roll_meta, "repeat": repeat_meta, **_triangle("tril"), **_triangle("triu"),
    "empty_like": empty_like_meta,
    "zeros_like": empty_like_meta, "ones_like": empty_like_meta,  # their values are not kept on meta
    "new_empty": new_empty_meta, "new_empty_strided": new_empty_strided_meta,
    "new_zeros": new_empty_meta, "new_ones": new_empty_meta, "new_full": new_full_meta,
    "randperm": randperm_meta, "randperm.generator_out": randperm_generator_out_meta,
    **_trilu_indices("tril_indices"), **_trilu_indices("triu_indices"),
    "resize_": resize__meta,
    # composites run on meta tensors: a copy with the input's strides, then a write into it
    "select_scatter": _shape.select_scatter, "slice_scatter": _shape.slice_scatter,
    "diagonal_scatter": _shape.diagonal_scatter, "copy": _shape.copy,
    "diag_embed": _shape.diag_embed, "diagonal_copy": _shape.diagonal_copy,
    "diag_embed.out": _shape.KERNELS_EXPLICIT["diag_embed.out"],
    "diagonal_copy.out": _shape.KERNELS_EXPLICIT["diagonal_copy.out"],
    "fill.Scalar": _shape.fill_scalar, "fill.Tensor": _shape.fill_tensor,
    # the view backward ops: zeros of the input's sizes, the view written (torch's meta decomposes them too)
    "select_backward": _shape.select_backward, "slice_backward": _shape.slice_backward,
    "diagonal_backward": _shape.diagonal_backward,
    **{f"{name}.out": _shape.generated_out(getattr(_shape, name))
       for name in ("select_backward", "slice_backward", "diagonal_backward")},
}
