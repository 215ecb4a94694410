"""Keyword entries (Note [Keyword entries], operator.py) behave exactly like the general path they short-cut.

``x.addcmul_(a, b, value=v)`` (the optimizers' call) goes through ``OperatorHandle.keyword_entry``;
the in-place ternary CPU kernel's same-dtype fast lane (``backends/cpu/pointwise.py``) and the
fused ADInplaceOrView bookkeeping with keyword arguments (autograd/kernels.py) ride along.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.ops import aten
from dispatchcore.trace import trace


def test_a_keyword_entry_computes_what_the_operator_computes():
    entry = aten.addcmul.default.keyword_entry(3, ("value",))
    a, b, c = dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0]), dc.tensor([5.0, 6.0])
    for _ in range(2):  # the first call fills the memo, the second reads it
        assert entry(a, b, c, value=0.5).tolist() == aten.addcmul.default(a, b, c, value=0.5).tolist() == [8.5, 14.0]
    assert entry(a, b, c).tolist() == [16.0, 26.0]  # value's default


def test_a_keyword_entry_refuses_an_operator_whose_schema_does_not_fit():
    with pytest.raises(ValueError, match="no keyword entry"):
        aten.clamp.default.keyword_entry(1, ("min",))  # min is positional (and optional)
    with pytest.raises(ValueError, match="no keyword entry"):
        aten.addcmul.default.keyword_entry(2, ("value",))


def test_a_keyword_entry_raises_the_general_paths_errors():
    entry = aten.addcmul_.default.keyword_entry(3, ("value",))
    a = dc.ones(2)
    with pytest.raises(Exception) as general:
        aten.addcmul_.default(a, a, a, value="x")
    with pytest.raises(type(general.value)) as mine:
        entry(a, a, a, value="x")
    assert str(mine.value) == str(general.value)
    with pytest.raises(Exception) as general:
        aten.addcmul_.default(a, a, a, scale=1)
    with pytest.raises(type(general.value)) as mine:
        entry(a, a, a, scale=1)
    assert str(mine.value) == str(general.value)


def test_a_keyword_entry_sees_a_kernel_registered_after_its_first_call(aten_impl):
    a = dc.ones(2)
    a.addcmul_(a, a, value=1.0)  # memoised
    seen = []

    def spy(self, tensor1, tensor2, *, value=1):
        seen.append(value)
        return self

    aten_impl.impl("addcmul_", spy, "CPU")
    a.addcmul_(a, a, value=2.0)
    assert seen == [2.0]


def test_a_traced_keyword_call_shows_every_hop():
    a, b = dc.ones(2), dc.ones(2)
    b.addcdiv_(a, a, value=1.0)  # memoised before the trace
    with trace() as t:
        b.addcdiv_(a, a, value=1.0)
    assert [h.key.name for h in t.find("aten::addcdiv_")] == ["AutogradCPU", "ADInplaceOrView", "CPU"]


def test_an_in_place_keyword_call_bumps_the_version_once_and_records_history():
    x = dc.ones(3)
    before = x._version
    x.addcmul_(dc.ones(3), dc.ones(3), value=0.5)
    assert x._version == before + 1
    w = dc.ones(3, requires_grad=True)
    y = w * 1
    y.addcmul_(w, w, value=0.5)
    assert type(y.grad_fn).__name__ == "AddcmulBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]  # 1 + 0.5 * 2w


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_in_place_fast_lane_matches_the_general_kernel(dtype):
    rng = np.random.default_rng(3)
    x, z = rng.standard_normal((4, 5)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
    row = rng.standard_normal(5).astype(dtype)
    full = np.broadcast_to(row, (4, 5)).copy()
    for call in (lambda s, a, b: s.addcmul_(a, b, value=0.3), lambda s, a, b: s.addcdiv_(a, b, value=-0.7),
                 lambda s, a, b: s.lerp_(a, 0.25), lambda s, a, b: s.lerp_(a, 0.75), lambda s, a, b: s.lerp_(a, b)):
        fast, general = dc.tensor(x), dc.tensor(x)
        call(fast, dc.tensor(full), dc.tensor(z))  # same shapes and dtype: the fast lane
        call(general, dc.tensor(row), dc.tensor(z))  # a broadcast operand: the general kernel
        np.testing.assert_array_equal(fast.numpy(), general.numpy())
