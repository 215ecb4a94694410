"""CPU kernels of the shape family: flips, rolls, triangles, ``randperm``, the triangle indices, ``resize_``.

Covers ``flip``, ``roll``, ``tril``/``triu``, ``randperm``'s draws, ``tril_indices``/``triu_indices``
and ``resize_``. Mirrors the CPU entries of ``TensorShape.cpp``, ``TensorTransformations.cpp``
(flip, roll), ``TriangularOps.cpp``, ``TensorFactories.cpp`` (randperm, tril_indices,
triu_indices) and ``Resize.cpp`` (resize_). The family's other operators are composites
(``dispatchcore/native/shape.py``) that reach this backend through ``as_strided``, ``empty``,
``fill_`` and ``copy_``. Invariant: results are laid out as torch lays them out (``flip``
preserves its input's layout, ``roll`` and ``tril`` are contiguous), and every kernel is numpy in,
tensor out, except ``resize_``, which gives its tensor new data over the same storage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore.native.shape import resize_restride, resize_sizes, roll_check, tril_check, wrap_dims
from dispatchcore.shapes import contiguous_strides
from dispatchcore.tensor import wrap_cpu

from .kernels import (
    _CPP_NAME,
    _TORCH_NAME,
    _address,
    _check_layout,
    _copyto,
    _empty_like_format,
    _new,
    _np_dtype,
    _resize_out,
    _restride,
    _rng,
    _storage_root,
    _wrap_dim,
)

__all__ = ["KERNELS", "flip_cpu", "randperm_generator_out_cpu", "resize__cpu", "roll_cpu"]


def flip_cpu(self, dims):
    a = self._data
    axes = tuple(wrap_dims(dims, a.ndim))
    out = _empty_like_format(a, "preserve_format", "flip")
    _copyto(out, np.flip(a, axes) if a.ndim else a)
    return wrap_cpu(out)


def roll_cpu(self, shifts, dims=()):
    a = self._data
    shifts, dims = [int(s) for s in shifts], [int(d) for d in dims]
    roll_check(shifts, dims)
    out = _new(a.shape, a.dtype)
    if not dims:  # one shift of the flattened tensor
        _copyto(out, np.roll(a.reshape(-1), shifts[0]).reshape(a.shape) if a.size else a)
    else:
        axes = tuple(_wrap_dim(d, a.ndim) for d in dims)
        _copyto(out, np.roll(a, shifts, axes) if a.ndim else a)
    return wrap_cpu(out)


def _triangle(name: str, keep: Callable[..., np.ndarray]) -> dict[str, Callable[..., Any]]:
    """``name``, ``name_`` and ``name.out``: ``keep`` selects the triangle of the last two dims."""

    def functional(self, diagonal=0):
        a = self._data
        tril_check(name, a.ndim)
        out = _new(a.shape, a.dtype)
        _copyto(out, keep(a, diagonal))
        return wrap_cpu(out)

    def inplace(self, diagonal=0):
        a = self._data
        tril_check(name, a.ndim)
        _copyto(a, keep(a, diagonal))
        return self

    def out_kernel(self, diagonal=0, *, out):
        a = self._data
        tril_check(name, a.ndim)
        if out._data.dtype != a.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAME[a.dtype]}, but got "
                               f"{_CPP_NAME[out._data.dtype]} instead")
        _copyto(_resize_out(out, a.shape, (a,)), keep(a, diagonal))
        return out

    functional.__name__, inplace.__name__, out_kernel.__name__ = f"{name}_cpu", f"{name}__cpu", f"{name}_out_cpu"
    return {name: functional, f"{name}_": inplace, f"{name}.out": out_kernel}


def _randperm_check(n: int, dt: np.dtype) -> None:
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if dt.kind == "b":
        raise NotImplementedError(f'"randperm" not implemented for \'{_TORCH_NAME[dt]}\'')
    if dt == np.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if dt.kind in "iu" and n > 0 and n - 1 > np.iinfo(dt).max:
        raise RuntimeError(f"value cannot be converted to type {_CTYPE[dt.name]} without overflow")


def _trilu_indices(name: str) -> Callable[..., Any]:
    """``tril_indices_cpu``/``triu_indices_cpu``: the row and column indices, in row-major order."""
    lower = name == "tril_indices"

    def kernel(row, col, offset=0, *, dtype=4, layout=None, device=None, pin_memory=None):
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")  # torch's text, no space
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        _check_layout(layout, name)
        dt = _np_dtype(dtype)
        if dt not in (np.int32, np.int64):  # AT_DISPATCH_INDEX_TYPES
            raise NotImplementedError(f'"{name}" not implemented for \'{_TORCH_NAME[dt]}\'')
        # np.tri: ones on and below diagonal ``offset``; the upper triangle is what lies above offset - 1
        inside = np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1, dtype=bool)
        return wrap_cpu(np.array(np.nonzero(inside), dtype=dt).reshape(2, -1))

    kernel.__name__ = f"{name}_cpu"
    return kernel


_CTYPE = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}


def randperm_generator_out_cpu(n, *, generator=None, out):
    dt = out._data.dtype
    _randperm_check(n, dt)
    data = _resize_out(out, (n,))
    data[...] = _rng(generator).permutation(n).astype(dt)
    return out


# --- resize_ ---------------------------------------------------------------------------------------
# Note [resize_ and storage]: a CPU tensor's storage is the ndarray owning its memory (the end of
# its ``base`` chain), its storage offset the distance from there. resize_ keeps both, as torch
# does: the new geometry views the same memory, so a shrunk tensor still aliases its base, and a
# non-contiguous tensor reads its storage from its offset on (not its old elements in order).
# When the geometry needs more bytes than the storage has, the storage is reallocated with its
# old bytes first and uninitialised memory after (resize_bytes_cpu). Two things torch has that
# this model does not: one storage object shared by every alias (after a reallocation, torch's
# other views of the old storage follow it to the new memory; here they keep the old memory),
# and non-resizable storages (torch refuses to grow a tensor made by from_numpy; here every
# storage can grow).
def _storage_bytes(root: np.ndarray) -> np.ndarray:
    """The storage's bytes in memory order (a copy only for a root that is not one block)."""
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        root = np.ascontiguousarray(root)
    return root.reshape(-1, order="A").view(np.uint8)


def _set_geometry(t: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
    """Give ``t`` new sizes and strides at its storage offset, growing the storage if it must."""
    a = t._data
    itemsize = a.dtype.itemsize
    root = _storage_root(a)
    offset = 0 if root is a else (_address(a) - _address(root)) // itemsize
    needed = 0 if 0 in shape else itemsize * (offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides)))
    if needed > root.nbytes:
        grown = np.empty(-(-needed // itemsize), a.dtype)  # uninitialised beyond the old bytes, as a realloc
        old = _storage_bytes(root)
        grown.view(np.uint8)[:old.size] = old
        a = grown
    t._data = _restride(a, shape, strides, offset)


def resize__cpu(self, size, *, memory_format=None):
    """``resize_``: new sizes (contiguous strides) over the same storage; see Note [resize_ and storage].

    Sizes equal to the current ones keep the strides; ``memory_format`` then restrides
    (``empty_tensor_restride``), after the resize, as torch orders its checks.
    """
    shape = resize_sizes(size)
    if shape != self._data.shape:
        _set_geometry(self, shape, contiguous_strides(shape))
    strides = resize_restride(shape, memory_format)
    if strides is not None:
        _set_geometry(self, shape, strides)
    return self


KERNELS: dict[str, Callable[..., Any]] = {
    "flip": flip_cpu, "roll": roll_cpu,
    **_triangle("tril", lambda a, k: np.tril(a, k)), **_triangle("triu", lambda a, k: np.triu(a, k)),
    "randperm.generator_out": randperm_generator_out_cpu,
    "tril_indices": _trilu_indices("tril_indices"), "triu_indices": _trilu_indices("triu_indices"),
    "resize_": resize__cpu,
}
