"""The CPU speed kernels compute what torch's CompositeExplicitAutograd kernels compute.

Where torch registers an operator only at CompositeExplicitAutograd, the CPU backend keeps a numpy
kernel of its own for speed (``dispatchcore_backends.cpu.SPEED_KERNELS``; docs/notes.md). Each such
operator here runs both ways on CPU tensors: through the dispatcher (the speed kernel) and through
the composite of ``dispatchcore/native/explicit.py`` called directly (what Meta, CUDA and a new
device run), and the results must agree in values, dtype, shape, strides, storage offset and, for
views, in the memory they share with their input.
"""

from __future__ import annotations

import numpy as np
import pytest
from dispatchcore_backends import cpu

import dispatchcore as dc
from dispatchcore.native import explicit
from dispatchcore.ops import aten


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _x():
    return dc.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))


CALLS = {
    "sum": lambda f: f(_x()),
    "mean": lambda f: f(_x(), dtype=dc.float64),
    "add.Scalar": lambda f: f(_x(), 2, 3),
    "add_.Scalar": lambda f: f(_x(), 2.5, 2),
    "sub.Scalar": lambda f: f(_x().to(dc.int32), 2, 3),
    "sub_.Scalar": lambda f: f(_x(), 1),
    "mul.Scalar": lambda f: f(_x().to(dc.int64), 2.5),
    "mul_.Scalar": lambda f: f(_x(), 3),
    "div.Scalar": lambda f: f(_x().to(dc.int64), 4),
    "div_.Scalar": lambda f: f(_x(), 4),
    "div.Scalar_mode": lambda f: f(_x(), 3, rounding_mode="floor"),
    "div_.Scalar_mode": lambda f: f(_x(), -3, rounding_mode="trunc"),
    "clone": lambda f: f(_x().transpose(0, 2)),
    "t": lambda f: f(_x()[0]),
    "transpose.int": lambda f: f(_x(), 0, -1),
    "permute": lambda f: f(_x(), [2, 0, 1]),
    "expand": lambda f: f(_x()[:, :1], [5, 2, 3, 4]),
    "squeeze": lambda f: f(_x()[:, :1]),
    "squeeze.dim": lambda f: f(_x()[:, :1], 1),
    "unsqueeze": lambda f: f(_x(), -1),
    "select.int": lambda f: f(_x(), 1, -1),
    "slice.Tensor": lambda f: f(_x(), 2, 1, None, 2),
    "alias": lambda f: f(_x()),
    "zeros": lambda f: f([2, 3], dtype=dc.int32),
    "ones": lambda f: f([2, 3]),
    "full": lambda f: f([2], 7),
    "scalar_tensor": lambda f: f(2.5, dtype=dc.float64),
    "_to_copy": lambda f: f(_x().transpose(0, 2)[:, ::2], dtype=dc.float64),  # not dense: inferred strides
}
VIEWS = {"t", "transpose.int", "permute", "expand", "squeeze", "squeeze.dim", "unsqueeze", "select.int",
         "slice.Tensor", "alias"}


def test_every_speed_kernel_with_a_composite_is_compared():
    with_composite = {name for name in cpu.SPEED_KERNELS if name in explicit.KERNELS}
    assert with_composite == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_speed_kernel_and_composite_agree_on_cpu(name):
    base, _, overload = name.partition(".")
    op = getattr(getattr(aten, base), overload or "default")
    assert op.has_kernel_for_dispatch_key("CPU") and op.has_kernel_for_dispatch_key("CompositeExplicitAutograd")
    fast, composite = CALLS[name](op), CALLS[name](explicit.KERNELS[name])
    assert (fast.dtype, fast.shape, fast.stride(), fast.storage_offset()) == \
        (composite.dtype, composite.shape, composite.stride(), composite.storage_offset())
    np.testing.assert_array_equal(fast.numpy(), composite.numpy())
    if name in VIEWS:
        for t in (fast, composite):
            assert np.shares_memory(t._data, t._base._data if t._base is not None else t._data)


def test_views_of_the_composite_share_the_inputs_memory():
    x = _x()
    for name in sorted(VIEWS - {"t", "expand", "squeeze", "squeeze.dim"}):
        args = {"transpose.int": (0, 1), "permute": ([1, 0, 2],), "unsqueeze": (0,), "select.int": (0, 1),
                "slice.Tensor": (1, 0, 2), "alias": ()}[name]
        v = explicit.KERNELS[name](x, *args)
        assert np.shares_memory(v._data, x._data), name
