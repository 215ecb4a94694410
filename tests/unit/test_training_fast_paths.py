"""The training step's shortcuts give exactly what the general paths give.

Each fast path (the positional call path for ``Tensor?`` arguments, the CPU kernels of
``_log_softmax``, ``nll_loss_forward``/``nll_loss_backward``, ``_log_softmax_backward_data``,
``addmm`` and ``threshold_backward``, ``quiet()``) is compared with the general path it skips, on
a call that takes the shortcut and a twin that cannot: same values bit for bit, same dtype and
strides, same graph, same trace.
"""

from __future__ import annotations

import numpy as np
import pytest
from dispatchcore_backends.cpu import kernels as K

import dispatchcore as dc
from dispatchcore.ops import aten


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _same(a, b):
    """Bit-for-bit equal results: dtype, shape, strides and every bit of the data."""
    x, y = a._data, b._data
    assert x.dtype == y.dtype and x.shape == y.shape and a.stride() == b.stride()
    assert x.tobytes() == np.ascontiguousarray(y).tobytes() or np.array_equal(x, y, equal_nan=True)
    assert np.array_equal(np.signbit(x), np.signbit(y))


def _rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --- the positional path for Tensor? arguments (Note [Optional Tensors on the fast path]) -----------------
def test_a_none_weight_given_positionally_dispatches_as_the_keyword_call_does():
    x = dc.tensor(_rand((5, 4), 0)).log_softmax(1)
    t = dc.tensor([0, 3, 1, 1, 2])
    fast = aten.nll_loss_forward.default(x, t, None, 1, -100)
    general = aten.nll_loss_forward.default(x, t, weight=None, reduction=1, ignore_index=-100)
    for a, b in zip(fast, general):
        _same(a, b)


def test_a_tensor_in_an_optional_slot_adds_its_keys_and_a_bad_value_gets_binds_error():
    x = dc.tensor(_rand((3, 4), 1)).log_softmax(1)
    t = dc.tensor([0, 3, 1])
    w = dc.tensor([1.0, 2.0, 0.5, 1.0])
    with dc.LoggingMode() as log:
        aten.nll_loss_forward.default(x, t, w, 1, -100)
    assert log.ops == ["aten.nll_loss_forward.default"]
    with pytest.raises(RuntimeError, match="Expected a value of type 'Optional\\[Tensor\\]' for argument 'weight'"):
        aten.nll_loss_forward.default(x, t, [1.0], 1, -100)


def test_an_optional_tensor_on_meta_picks_the_meta_kernel_on_the_positional_path():
    x = dc.empty(3, 4, device="meta")
    t = dc.empty(3, dtype=dc.int64, device="meta")
    out, total = aten.nll_loss_forward.default(x, t, None, 1, -100)
    assert out.device.type == "meta" and total.shape == ()


# --- cross_entropy's kernels ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", [1, 2])
def test_nll_loss_fast_path_equals_the_weighted_general_path(dtype, reduction):
    logits = dc.tensor(_rand((33, 5), 2, dtype))
    x = aten._log_softmax.default(logits, 1, False)
    t = dc.tensor(np.random.default_rng(3).integers(0, 5, 33))
    ones = dc.ones(5, dtype=x.dtype)  # a weight takes the general path; weights of one change nothing
    fast, fast_total = aten.nll_loss_forward.default(x, t, None, reduction, -100)
    general, general_total = aten.nll_loss_forward.default(x, t, ones, reduction, -100)
    _same(fast, general)
    _same(fast_total, general_total)
    g = dc.tensor(np.array(0.75, dtype))
    _same(aten.nll_loss_backward.default(g, x, t, None, reduction, -100, fast_total),
          aten.nll_loss_backward.default(g, x, t, ones, reduction, -100, general_total))


def test_nll_loss_leaves_the_fast_path_for_ignored_and_out_of_range_targets():
    x = dc.tensor(_rand((4, 3), 4)).log_softmax(1)
    assert not K.nll_targets_in_range(x._data, np.array([0, 1, 2, 1]), 1)  # ignore_index is a class
    assert not K.nll_targets_in_range(x._data, np.array([0, -1, 2, 1]), -100)
    assert not K.nll_targets_in_range(x._data, np.array([0, 3, 2, 1]), -100)
    assert K.nll_targets_in_range(x._data, np.array([0, 1, 2, 1]), -100)
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        aten.nll_loss_forward.default(x, dc.tensor([0, 3, 2, 1]), None, 1, -100)
    loss, total = aten.nll_loss_forward.default(x, dc.tensor([0, 1, 2, 1]), None, 1, 1)
    assert total.item() == 2.0  # the two targets equal to ignore_index do not count


def test_an_overflowing_nll_sum_leaves_the_fast_path_quietly():
    x = dc.tensor(np.full((3, 2), -3e38, np.float32))
    loss, _ = aten.nll_loss_forward.default(x, dc.tensor([0, 1, 0]), None, 2, -100)
    assert loss.item() == float("inf")


@pytest.mark.parametrize("dim", [1, -1, 0])
def test_log_softmax_fast_path_equals_the_general_path_on_a_strided_twin(dim):
    data = _rand((6, 7), 5)
    fast = aten._log_softmax.default(dc.tensor(data), dim, False)
    twin = dc.tensor(np.ascontiguousarray(data.T)).t()  # same values, not contiguous: general path
    _same(fast.contiguous(), aten._log_softmax.default(twin, dim, False).contiguous())
    assert fast.stride() == (7, 1)


def test_log_softmax_of_infinities_takes_the_quiet_general_path():
    x = dc.tensor([[float("-inf"), float("-inf")], [0.0, float("inf")]])
    out = aten._log_softmax.default(x, 1, False)
    assert np.isnan(out._data).all()


def test_log_softmax_backward_fast_path_equals_the_general_path_on_a_strided_twin():
    g, o = _rand((6, 7), 6), aten._log_softmax.default(dc.tensor(_rand((6, 7), 7)), 1, False)._data
    fast = aten._log_softmax_backward_data.default(dc.tensor(g), dc.tensor(o), 1, dc.float32)
    slow = aten._log_softmax_backward_data.default(dc.tensor(np.ascontiguousarray(g.T)).t(),
                                                   dc.tensor(np.ascontiguousarray(o.T)).t(), 1, dc.float32)
    _same(fast, slow)


# --- addmm and threshold_backward -------------------------------------------------------------------------
@pytest.mark.parametrize("bias_shape", [(5,), (4, 5)])
def test_addmm_fast_path_equals_the_general_path(bias_shape):
    b, m1, m2 = dc.tensor(_rand(bias_shape, 8)), dc.tensor(_rand((4, 3), 9)), dc.tensor(_rand((5, 3), 10)).t()
    fast = aten.addmm.default(b, m1, m2)
    general = aten.addmm.default(b, m1, m2, beta=1.0, alpha=1.0)  # floats: the general path
    _same(fast, general)


def test_threshold_backward_fast_path_equals_the_general_path():
    g, x = _rand((5, 6), 11), _rand((5, 6), 12)
    x[0, :3] = 0.0
    fast = aten.threshold_backward.default(dc.tensor(g), dc.tensor(x), 0)
    slow = aten.threshold_backward.default(dc.tensor(np.ascontiguousarray(g.T)).t(),
                                           dc.tensor(np.ascontiguousarray(x.T)).t(), 0)
    _same(fast, slow.contiguous())
    assert not np.signbit(fast._data[x <= 0]).any()  # +0 where the input was at or below the threshold


# --- quiet() --------------------------------------------------------------------------------------------
def test_quiet_silences_floating_point_warnings_and_restores_the_callers_state():
    before = np.geterr()
    with np.errstate(divide="raise"):
        with K.quiet():
            assert np.float32(1) / np.float32(0) == np.inf
        with pytest.raises(FloatingPointError):
            np.float32(1) / np.float32(0)
    assert np.geterr() == before


def test_quiet_restores_the_state_when_an_exception_passes_through():
    with np.errstate(divide="raise"):
        with pytest.raises(KeyError), K.quiet():
            raise KeyError("x")
        assert np.geterr()["divide"] == "raise"


# --- the whole step -------------------------------------------------------------------------------------
def test_a_training_step_records_the_same_graph_and_trace_on_fast_and_general_paths():
    """cross_entropy with weight=None (fast kernels) against the same step with a weight of ones."""
    def step(weight):
        dc.manual_seed(0)
        model = dc.nn.Sequential(dc.nn.Linear(4, 6), dc.nn.ReLU(), dc.nn.Linear(6, 3))
        x, y = dc.randn(8, 4), dc.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        with dc.LoggingMode() as log:
            loss = dc.nn.functional.cross_entropy(model(x), y, weight=weight)
            loss.backward()
        return loss, [p.grad for p in model.parameters()], log.ops, type(loss.grad_fn).__name__

    fast, general = step(None), step(dc.ones(3))
    _same(fast[0], general[0])
    for a, b in zip(fast[1], general[1]):
        _same(a, b)
    assert fast[2] == general[2] and fast[3] == general[3] == "NllLossBackward0"
