"""The data of a CUDA tensor: geometry over one device allocation (``CudaStorage``) shared by views.

Follows Note [Backend data protocol] (``dispatchcore/tensor.py``): numpy's ``shape``, ``strides``
(bytes), ``dtype``, ``ndim``, ``size`` and ``itemsize``, plus ``storage_offset`` (elements) and
``to_numpy()``, which copies the viewed elements to the host (``repr``, ``item``, ``tolist``).
A view is a new ``CudaData`` over the same ``CudaStorage`` (as a view's TensorImpl shares its
Storage); the tensors' version counter is shared by the ADInplaceOrView kernels, as on CPU.
Imports no pycuda: the allocation is whatever the runtime returns (``int(allocation)`` is the
device address).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dispatchcore import dtypes as _dt
from dispatchcore.tensor import Tensor, wrap

from ..meta import shapes
from . import runtime

__all__ = ["CUDA", "CudaData", "CudaStorage", "cuda_empty", "cuda_tensor", "from_numpy", "to_numpy"]

CUDA = _dt.device("cuda", 0)  # dispatchcore uses device 0 only; tensors report cuda:0 as torch's do


class CudaStorage:
    """One device allocation (``c10::Storage``): ``nbytes`` bytes at ``ptr``, freed with the last view."""

    __slots__ = ("allocation", "nbytes", "ptr", "__weakref__")

    def __init__(self, nbytes: int) -> None:
        self.nbytes = int(nbytes)
        self.allocation = runtime.get_runtime().alloc(self.nbytes)
        self.ptr = int(self.allocation)

    def __repr__(self) -> str:
        return f"CudaStorage(nbytes={self.nbytes}, ptr=0x{self.ptr:x})"


class CudaData:
    """Geometry and dtype of a CUDA tensor over a ``CudaStorage`` (See Note [Backend data protocol]).

    Never mutated in place except by ``out=`` resizing, which swaps a tensor's ``_data``.
    """

    __slots__ = ("shape", "strides", "dtype", "ndim", "size", "itemsize", "storage_offset", "storage")

    def __init__(self, storage: CudaStorage, shape: Sequence[int], strides: Sequence[int], dtype: Any,
                 storage_offset: int = 0) -> None:
        self.dtype = np.dtype(dtype)
        self.itemsize = self.dtype.itemsize
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) * self.itemsize for s in strides)  # strides are given in elements
        self.ndim = len(self.shape)
        self.size = shapes.numel(self.shape)
        self.storage_offset = int(storage_offset)
        self.storage = storage

    @property
    def ptr(self) -> int:
        """The device address of element [0, ..., 0]."""
        return self.storage.ptr + self.storage_offset * self.itemsize

    def element_strides(self) -> tuple[int, ...]:
        return tuple(s // self.itemsize for s in self.strides)

    def to_numpy(self) -> np.ndarray:
        """The viewed elements copied to a new host array (dense layouts keep their strides)."""
        return to_numpy(self)

    # Element access for host-side tools that poke a tensor's data as numpy allows (gradcheck
    # perturbs ``data[index]``): one element per call, copied synchronously. Integer indices only.
    def _element_ptr(self, index: Any) -> int:
        index = index if isinstance(index, tuple) else (index,)
        if len(index) != self.ndim or not all(isinstance(i, (int, np.integer)) for i in index):
            raise TypeError("CudaData supports element indexing with one integer per dimension only; "
                            "use tensor operations for anything else")
        offset = 0
        for i, size, stride in zip(index, self.shape, self.element_strides()):
            i = int(i)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension with size {size}")
            offset += (i % size) * stride
        return self.ptr + offset * self.itemsize

    def __getitem__(self, index: Any) -> np.ndarray:
        host = np.empty(1, self.dtype)
        runtime.get_runtime().dtoh(host, self._element_ptr(index))
        return host.reshape(())

    def __setitem__(self, index: Any, value: Any) -> None:
        runtime.get_runtime().htod(self._element_ptr(index), np.asarray(value).astype(self.dtype).reshape(1))

    def reshape(self, *shape: Any) -> CudaData:
        """A view with another shape; contiguous data only (``ndarray.reshape`` without a copy)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not shapes.is_contiguous(self.shape, self.element_strides()):
            raise ValueError("CudaData.reshape needs contiguous data; use Tensor.reshape")
        new = shapes.infer_view_shape([int(s) for s in shape], self.size)
        return CudaData(self.storage, new, shapes.contiguous_strides(new), self.dtype, self.storage_offset)

    def __repr__(self) -> str:
        return (f"CudaData(shape={self.shape}, strides={self.element_strides()}, dtype={self.dtype}, "
                f"storage_offset={self.storage_offset})")


def cuda_tensor(data: CudaData) -> Tensor:
    """A new CUDA tensor over ``data`` (``wrap``, then the device index torch reports)."""
    t = wrap(data, "cuda")
    t._device = CUDA
    return t


def cuda_empty(shape: Sequence[int], dtype: Any, strides: Sequence[int] | None = None) -> Tensor:
    """A new uninitialised CUDA tensor; ``strides`` in elements (contiguous when omitted)."""
    shape = tuple(int(s) for s in shape)
    dt = np.dtype(dtype)
    strides = shapes.contiguous_strides(shape) if strides is None else tuple(strides)
    nbytes = shapes.storage_nbytes(shape, strides, dt.itemsize)
    return cuda_tensor(CudaData(CudaStorage(nbytes), shape, strides, dt))


def _span(data: CudaData) -> tuple[int, int]:
    """(first, last + 1) element offsets, relative to ``data.ptr``, that the view touches."""
    lo = hi = 0
    for size, stride in zip(data.shape, data.element_strides()):
        if size == 0:
            return 0, 0
        if stride >= 0:
            hi += stride * (size - 1)
        else:
            lo += stride * (size - 1)
    return lo, hi + 1


def to_numpy(data: CudaData, strides: Sequence[int] | None = None) -> np.ndarray:
    """Copy a CUDA view to the host: a new array with element ``strides`` (default: dense like it)."""
    shape, dt = data.shape, data.dtype
    if strides is None:
        strides = shapes.dense_strides_like(shape, data.element_strides())
    host = np.empty(max(shapes.numel(shape), 1), dt)
    out = np.ndarray(shape, dt, host, 0, tuple(s * dt.itemsize for s in strides))
    if data.size == 0:
        return out
    lo, hi = _span(data)
    span = np.empty(hi - lo, dt)
    runtime.get_runtime().dtoh(span, data.ptr + lo * dt.itemsize)
    src = np.lib.stride_tricks.as_strided(span[-lo:] if lo else span, shape, data.strides)
    np.copyto(out, src)
    return out


def from_numpy(array: np.ndarray, dst: CudaData) -> None:
    """Copy a host array (already broadcast to ``dst.shape`` and of its dtype) into a CUDA view."""
    rt = runtime.get_runtime()
    if dst.size == 0:
        return
    if shapes.is_contiguous(dst.shape, dst.element_strides()):
        rt.htod(dst.ptr, np.ascontiguousarray(array, dst.dtype))
        return
    from .launch import copy_into  # a strided destination: upload densely, then a copy kernel

    tmp = cuda_empty(dst.shape, dst.dtype)
    rt.htod(tmp._data.ptr, np.ascontiguousarray(array, dst.dtype))
    copy_into(dst, tmp._data)
