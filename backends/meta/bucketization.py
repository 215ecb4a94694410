"""Meta kernels of bucketization: ``searchsorted`` and ``bucketize``, as torch's Python meta kernels.

Mirrors ``meta_searchsorted``, ``meta_bucketize`` and ``meta_bucketize_scalar`` of
``torch/_meta_registrations.py``: fewer checks than the CPU kernels (the boundaries' leading
dimensions, the sorter's shape, ``side="left"`` with ``right=True``), then a contiguous result of
the values' shape in int32 or int64. Their ``out=`` forms are torch's ``out_wrapper``: ``out`` is
resized, then must be a dtype the result casts to safely. Invariant: the same geometry as the CPU
result, and torch's meta texts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import dtypes as _dt
from dispatchcore.tensor import Tensor

from .kernels import meta_tensor, python_out_wrapper

__all__ = ["KERNELS"]


def _index_dtype(out_int32: bool) -> _dt.dtype:
    return _dt.int32 if out_int32 else _dt.int64


def _sizes(shape: Any) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def searchsorted_meta(sorted_sequence: Tensor, self: Any, *, out_int32: bool = False, right: bool = False,
                      side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """``meta_searchsorted``: its three checks, then the result's geometry (``()`` for a number)."""
    values_shape = tuple(self.shape) if isinstance(self, Tensor) else ()
    if sorted_sequence.dim() > 1 and tuple(sorted_sequence.shape[:-1]) != values_shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           f"tensor {_sizes(sorted_sequence.shape)} and input value tensor {_sizes(values_shape)}")
    if sorter is not None and tuple(sorter.shape) != tuple(sorted_sequence.shape):
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {_sizes(sorted_sequence.shape)} and got sorter tensor {_sizes(sorter.shape)}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    return meta_tensor(values_shape, _index_dtype(out_int32))


def bucketize_meta(self: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """``meta_bucketize``/``meta_bucketize_scalar``: no checks, the values' shape (``()`` for a number)."""
    return meta_tensor(tuple(self.shape) if isinstance(self, Tensor) else (), _index_dtype(out_int32))


KERNELS: dict[str, Callable[..., Any]] = {
    "searchsorted.Tensor": searchsorted_meta, "searchsorted.Scalar": searchsorted_meta,
    "searchsorted.Tensor_out": python_out_wrapper(searchsorted_meta),
    "searchsorted.Scalar_out": python_out_wrapper(searchsorted_meta),
    "bucketize.Tensor": bucketize_meta, "bucketize.Scalar": bucketize_meta,
    "bucketize.Tensor_out": python_out_wrapper(bucketize_meta),
    # torch registers meta_bucketize_scalar here too, which takes no ``out`` (a TypeError): see docs/notes.md
    "bucketize.Scalar_out": python_out_wrapper(bucketize_meta),
}
