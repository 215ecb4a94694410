"""The linalg and special families, and index_add/put, without torch: calls, values, derivatives.

``dot``/``vdot``/``mv`` (``native/linalg.py``), ``xlogy``/``logit`` (``native/special.py``) and
``index_add``/``put`` (``native/indexing.py``); torch's own results are compared in
``tests/differential/test_vs_torch_vector_products_and_special.py`` and the conformance entries.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import gradcheck, gradgradcheck


def _ops(fn):
    with dc.LoggingMode() as log:
        fn()
    return [name.removeprefix("aten.") for name in log.ops]


def test_matmul_lowers_vectors_to_dot_and_mv_and_matrices_to_mm_only():
    v, m, batch, n = dc.ones(3), dc.ones(2, 3), dc.ones(4, 2, 3), dc.ones(3, 2)
    assert _ops(lambda: v @ v) == ["dot.default"]
    assert _ops(lambda: m @ v) == ["mv.default"]
    assert _ops(lambda: batch @ v) == ["view.default", "mv.default", "_unsafe_view.default"]
    assert _ops(lambda: m @ n) == ["mm.default"]


def test_dot_and_mv_values():
    a, b = np.arange(1.0, 4.0), np.array([2.0, -1.0, 0.5])
    assert dc.dot(dc.tensor(a), dc.tensor(b)).item() == a @ b
    assert dc.vdot(dc.tensor(a), dc.tensor(b)).item() == a @ b
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(dc.mv(dc.tensor(m), dc.tensor(b)).numpy(), m @ b)
    assert dc.dot(dc.tensor([2**62, 2**62]), dc.tensor([2, 2])).item() == 0  # int64 wraps
    assert dc.mv(dc.zeros(2, 0), dc.zeros(0)).tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("call", "error", "text"), [
    (lambda: dc.dot(dc.ones(3, 1), dc.ones(3)), RuntimeError, "1D tensors expected, but got 2D and 1D tensors"),
    (lambda: dc.dot(dc.ones(3), dc.ones(2)), RuntimeError, "inconsistent tensor size"),
    (lambda: dc.dot(dc.ones(3, dtype=dc.bool), dc.ones(3, dtype=dc.bool)), NotImplementedError, "\"dot\""),
    (lambda: dc.mv(dc.ones(2, 3), dc.ones(2)), RuntimeError, r"size mismatch, got input \(2\), mat \(2x3\), vec \(2\)"),
    (lambda: dc.mv(dc.ones(2, 3, dtype=dc.float64), dc.ones(3)), RuntimeError,
     "addmv input tensors must have the same dtype, but got Float, Double, and Float"),
    (lambda: dc.ones(3).index_add(0, dc.tensor([3]), dc.ones(1)), IndexError, "index out of range in self"),
    (lambda: dc.ones(2, 3).index_add(0, dc.tensor([2]), dc.ones(1, 3)), RuntimeError,
     "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: dc.ones(3).put(dc.tensor([3]), dc.ones(1)), IndexError,
     "out of range: tried to access index 3 on a tensor of 3 elements."),
    (lambda: dc.ones(3).put(dc.tensor([0, 1]), dc.ones(1)), IndexError, "put_\\(\\): Expected source and index"),
])
def test_the_checks_raise_torchs_errors(call, error, text):
    with pytest.raises(error, match=text):
        call()


def test_index_add_accumulates_duplicates_times_alpha_into_a_contiguous_result():
    x = dc.zeros(3, 2).t()
    r = x.index_add(1, dc.tensor([0, 2, 2]), dc.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), alpha=2)
    assert r.tolist() == [[2.0, 0.0, 10.0], [8.0, 0.0, 22.0]] and r.stride() == (3, 1)
    y = dc.zeros(3, dtype=dc.int64)
    assert y.index_add_(0, dc.tensor([1, 1]), dc.tensor([1, 1]), alpha=1.5) is y and y.tolist() == [0, 2, 0]


def test_put_writes_in_row_major_order_and_accumulates_on_request():
    x = dc.zeros(3, 2).t()
    r = x.put(dc.tensor([1, -1]), dc.tensor([5.0, 7.0]))
    assert r.tolist() == [[0.0, 5.0, 0.0], [0.0, 0.0, 7.0]] and r.stride() == x.stride()
    assert dc.zeros(3).put(dc.tensor([0, 0]), dc.tensor([1.0, 2.0]), True).tolist() == [3.0, 0.0, 0.0]


def test_xlogy_is_zero_where_x_is_zero_and_nan_where_y_is():
    r = dc.xlogy(dc.tensor([0.0, 0.0, 2.0, 1.0]), dc.tensor([0.0, math.nan, math.e, -1.0])).tolist()
    assert r[0] == 0.0 and math.isnan(r[1]) and r[2] == pytest.approx(2.0) and math.isnan(r[3])
    assert dc.xlogy(dc.tensor([1, 2]), 2).dtype is dc.float32  # integers compute in the default float
    assert dc.xlogy(2, dc.tensor([1.0])).tolist() == [0.0]


def test_logit_clamps_to_eps_and_its_backward_is_zero_outside():
    assert dc.logit(dc.tensor([0.0, 1.0])).tolist() == [-math.inf, math.inf]
    assert dc.logit(dc.tensor([0.0, 0.5, 1.0]), 0.25).tolist() == pytest.approx([math.log(1 / 3), 0.0, math.log(3)])
    g = dc.ops.aten.logit_backward.default(dc.ones(4), dc.tensor([0.1, 0.5, 0.0, 1.5]), 0.2).tolist()
    assert g == [0.0, 4.0, 0.0, 0.0]
    nan_outside = dc.ops.aten.logit_backward.default(dc.ones(2), dc.tensor([-0.5, 0.0])).tolist()
    assert math.isnan(nan_outside[0]) and nan_outside[1] == math.inf


def _double(*shape, low=-1.0, high=1.0, seed=0):
    return dc.tensor(np.random.default_rng(seed).uniform(low, high, shape)).requires_grad_()


@pytest.mark.parametrize("name", ["dot", "vdot", "mv", "xlogy", "xlogy-scalars", "logit", "index_add", "put"])
def test_the_derivatives_pass_gradcheck_and_gradgradcheck(name):
    cases = {
        "dot": (lambda a, b: dc.dot(a, b), (_double(4), _double(4, seed=1))),
        "vdot": (lambda a, b: dc.vdot(a, b), (_double(4), _double(4, seed=1))),
        "mv": (lambda a, b: dc.mv(a, b), (_double(2, 4), _double(4, seed=1))),
        "xlogy": (lambda a, b: dc.xlogy(a, b), (_double(2, 3, low=0.1), _double(3, low=0.5, high=2, seed=1))),
        "xlogy-scalars": (lambda b: dc.xlogy(1.5, b) + dc.xlogy(b, 0.5), (_double(3, low=0.5, high=2),)),
        "logit": (lambda a: dc.logit(a) + dc.logit(a, 0.3), (_double(5, low=0.05, high=0.95),)),
        "index_add": (lambda a, s: a.index_add(1, dc.tensor([0, 2, 0]), s, alpha=2),
                      (_double(2, 3), _double(2, 3, seed=1))),
        "put": (lambda a, s: a.put(dc.tensor([0, 5]), s) + a.put(dc.tensor([1, 1]), s, True),
                (_double(2, 3), _double(2, seed=1))),
    }
    fn, inputs = cases[name]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_logit_backward_has_no_derivative():
    g, x = _double(3), _double(3, low=0.1, high=0.9, seed=1)
    y = dc.ops.aten.logit_backward.default(g, x)
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::logit_backward is not implemented"):
        y.sum().backward()


def test_as_strided_backward_sums_over_an_overlapping_output_and_shares_over_an_overlapping_input():
    x = dc.arange(1.0, 7.0, dtype=dc.float64).requires_grad_()
    (g,) = dc.autograd.grad(x.as_strided((2, 2), (1, 1), 1), x, dc.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                                           dtype=dc.float64))
    assert g.tolist() == [0.0, 1.0, 5.0, 4.0, 0.0, 0.0]
    (g,) = dc.autograd.grad(x[:3].expand(2, 3).as_strided((2,), (1,), 1), x, dc.tensor([2.0, 4.0],
                                                                                      dtype=dc.float64))
    assert g.tolist() == [0.0, 2.0, 4.0, 0.0, 0.0, 0.0]
