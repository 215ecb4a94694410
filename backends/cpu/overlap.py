"""Internal memory overlap of a written-to array: torch's ``has_internal_overlap``.

Mirrors ``aten/src/ATen/MemoryOverlap.cpp``. TensorIterator checks every output of an in-place or
``out=`` op with ``assert_no_internal_overlap`` before it writes (``fill_`` and ``zero_`` do not
build one and are not checked; meta tensors are not checked). The answer is ``YES`` only for a
dimension of size > 1 and stride 0 (an ``expand``-ed dimension): other overlaps, such as
``as_strided`` with strides smaller than the sizes, are ``TOO_HARD`` and pass.

Kernels call ``assert_no_internal_overlap`` only when ``0 in a.strides``, so contiguous arrays pay
one tuple scan and no call (Note [Fast paths]).
"""

from __future__ import annotations

import enum

import numpy as np

from ..meta.shapes import is_non_overlapping_and_dense  # TensorImpl's rule, shared with Meta

__all__ = ["OVERLAP_MESSAGE", "MemOverlap", "assert_no_internal_overlap", "has_internal_overlap",
           "is_non_overlapping_and_dense"]

OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation.")


class MemOverlap(enum.Enum):
    """``at::MemOverlap``."""

    No = 0
    Yes = 1
    TooHard = 2


def has_internal_overlap(a: np.ndarray) -> MemOverlap:
    """Whether two elements of ``a`` share memory: ``No``, ``Yes`` or ``TooHard`` (don't know)."""
    shape, strides = a.shape, a.strides
    if is_non_overlapping_and_dense(shape, _element_strides(a)):
        return MemOverlap.No
    for size, stride in zip(shape, strides):
        if size > 1 and stride == 0:
            return MemOverlap.Yes
    return MemOverlap.TooHard


def assert_no_internal_overlap(a: np.ndarray) -> None:
    """Raise torch's RuntimeError when ``a`` certainly has internal overlap (``assert_no_internal_overlap``)."""
    if has_internal_overlap(a) is MemOverlap.Yes:
        raise RuntimeError(OVERLAP_MESSAGE)


def _element_strides(a: np.ndarray) -> tuple[int, ...]:
    itemsize = a.dtype.itemsize
    return tuple(s // itemsize for s in a.strides)
