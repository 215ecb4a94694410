"""The CPU backend's internal-overlap check (``dispatchcore_backends/cpu/overlap.py``, torch's MemoryOverlap.cpp)."""

from __future__ import annotations

import numpy as np
import pytest
from dispatchcore_backends.cpu.overlap import (
    OVERLAP_MESSAGE,
    MemOverlap,
    assert_no_internal_overlap,
    has_internal_overlap,
    is_non_overlapping_and_dense,
)

import dispatchcore as dc


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def strided(size, stride):
    return np.lib.stride_tricks.as_strided(np.zeros(64), size, tuple(s * 8 for s in stride))


@pytest.mark.parametrize(("size", "stride", "expected"), [
    ((2, 3), (3, 1), MemOverlap.No),       # contiguous
    ((3, 2), (1, 3), MemOverlap.No),       # transposed: dense in another order
    ((2, 3), (0, 1), MemOverlap.Yes),      # expanded
    ((5,), (0,), MemOverlap.Yes),
    ((1, 3), (0, 1), MemOverlap.No),       # a stride-0 dimension of size 1 repeats nothing
    ((2, 0), (0, 1), MemOverlap.No),       # empty
    ((3, 3), (1, 1), MemOverlap.TooHard),  # overlapping windows: torch does not look further
    ((4,), (2,), MemOverlap.TooHard),      # gaps only
    ((), (), MemOverlap.No),
])
def test_has_internal_overlap(size, stride, expected):
    assert has_internal_overlap(strided(size, stride)) is expected


def test_dense_orders():
    assert is_non_overlapping_and_dense((2, 1, 3), (3, 7, 1))
    assert not is_non_overlapping_and_dense((2, 2), (1, 1))
    assert is_non_overlapping_and_dense((4,), (1,)) and not is_non_overlapping_and_dense((4,), (2,))


def test_assert_raises_only_for_yes():
    assert_no_internal_overlap(strided((3, 3), (1, 1)))
    with pytest.raises(RuntimeError, match="^unsupported operation: more than one element"):
        assert_no_internal_overlap(strided((2, 3), (0, 1)))
    assert OVERLAP_MESSAGE.endswith("Please clone() the tensor before performing the operation.")


@pytest.mark.parametrize("write", [
    lambda e: e.add_(1.0), lambda e: e.add_(dc.ones(2, 3)), lambda e: e.mul_(2), lambda e: e.exp_(),
    lambda e: e.clamp_(0, 1), lambda e: e.copy_(dc.zeros(2, 3)), lambda e: dc.add(dc.ones(2, 3), 1, out=e),
    lambda e: dc.exp(dc.ones(2, 3), out=e), lambda e: e.sub_(dc.ones(3)), lambda e: e.pow_(2),
], ids=["add_-number", "add_-tensor", "mul_", "exp_", "clamp_", "copy_", "add-out", "exp-out", "sub_", "pow_"])
def test_cpu_in_place_and_out_kernels_refuse_an_expanded_output_before_writing(write):
    base = dc.ones(1, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        write(base.expand(2, 3))
    assert base.tolist() == [[1.0, 1.0, 1.0]]


def test_fill_zero_and_meta_tensors_are_not_checked():
    e = dc.ones(1, 3).expand(2, 3)
    e.fill_(2.0)
    assert e.tolist() == [[2.0] * 3] * 2
    e.zero_()
    dc.ones(1, 3, device="meta").expand(2, 3).add_(1.0)  # torch's meta kernels do not check either
