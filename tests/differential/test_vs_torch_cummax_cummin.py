"""``cummax``, ``cummin`` and ``logcumsumexp`` against torch 2.13: values (ties, NaN, inf), out=, meta, grads.

Each case runs on both libraries and compares the (values, indices) pair (dtype, shape, strides,
elements, the namedtuple's name), or the error; gradients with node names and the operators a mode
sees in the forward and the backward are compared too.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

NAN = float("nan")


def _run(lib, fn):
    return outcome(lib, fn)


CASES = {
    f"{name}-{case}": (lambda t, _n=name, _c=call: _c(t, getattr(t, _n)))
    for name in ("cummax", "cummin")
    for case, call in {
        "ties-take-the-later-index": lambda t, f: f(t.tensor([1.0, 3.0, 2.0, 3.0, 3.0, 0.0]), 0),
        "nan-stays": lambda t, f: f(t.tensor([1.0, NAN, 4.0, -1.0]), 0),
        "nan-first": lambda t, f: f(t.tensor([NAN, 1.0, NAN]), 0),
        "matrix-rows": lambda t, f: f(t.tensor([[1, 3, 2], [2, 0, 5]]), 1),
        "matrix-columns-negative-dim": lambda t, f: f(t.tensor([[1, 3, 2], [2, 0, 5]]), -2),
        "transposed-gives-contiguous": lambda t, f: f(t.arange(6.0).reshape(2, 3).t(), 0),
        "bool": lambda t, f: f(t.tensor([False, True, False]), 0),
        "half": lambda t, f: f(t.tensor([1.0, 0.5, 2.0], dtype=t.float16), 0),
        "zero-dim": lambda t, f: f(t.tensor(5.0), 0),
        "empty": lambda t, f: f(t.zeros(0, 3), 1),
        "dim-out-of-range": lambda t, f: f(t.ones(2, 3), 2),
        "complex-refused": lambda t, f: f(t.ones(2, dtype=t.complex64), 0),
        "out": lambda t, f: f(t.tensor([2.0, 1.0, 3.0]), 0, out=(t.empty(0), t.empty(0, dtype=t.int64))),
        "out-resized-warns": lambda t, f: f(t.tensor([2.0, 1.0]), 0, out=(t.empty(3), t.empty(3, dtype=t.int64))),
        "out-values-dtype": lambda t, f: f(t.ones(2), 0, out=(t.empty(0, dtype=t.float64),
                                                             t.empty(0, dtype=t.int64))),
        "out-indices-dtype": lambda t, f: f(t.ones(2), 0, out=(t.empty(0), t.empty(0, dtype=t.int32))),
        "method": lambda t, f: getattr(t.tensor([3.0, 1.0, 2.0]), f.__name__)(0),
        "meta": lambda t, f: f(t.empty(2, 3, device="meta").t(), 0),
        "meta-dim-checked": lambda t, f: f(t.empty(2, 3, device="meta"), 5),
        "meta-empty-dim-unchecked": lambda t, f: f(t.empty(0, 3, device="meta"), 5),
        "meta-out-casts": lambda t, f: f(t.empty(3, device="meta"), 0, out=(
            t.empty(0, dtype=t.float64, device="meta"), t.empty(0, dtype=t.int64, device="meta"))),
    }.items()
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cummax_and_cummin_match_torch(name):
    assert _run(dc, CASES[name]) == _run(torch, CASES[name])


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1])
def test_gradients_flow_to_each_running_extremum_as_torchs(name, dim):
    data = np.array([[1.0, 3.0, 3.0], [0.0, 3.0, -1.0], [2.0, 2.0, 5.0]])

    def run(t):
        x = t.tensor(data, requires_grad=True)
        values, indices = getattr(t, name)(x, dim)
        (values * t.arange(9.0).reshape(3, 3)).sum().backward()
        return type(values.grad_fn).__name__, indices.requires_grad, x.grad.tolist()

    assert run(dc) == run(torch)


def _calls(lib, name):
    x = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
    return mode_calls(lib, lambda: getattr(lib, name)(x, 0)[0].sum().backward())


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_a_mode_sees_the_operator_and_its_backwards_scatter_add(name):
    assert _calls(dc, name) == _calls(torch, name)


# --- logcumsumexp: _logcumsumexp's running log-add-exp (acc_type), LogcumsumexpBackward0 -------------------
INF = float("inf")
LOGCUMSUMEXP = {
    "values": lambda t: t.logcumsumexp(t.tensor([0.0, 1.0, 2.0, -INF, INF, 3.0]), 0),
    "minus-infinities": lambda t: t.logcumsumexp(t.tensor([-INF, -INF, 1.0]), 0),
    "nan": lambda t: t.logcumsumexp(t.tensor([1.0, NAN, 2.0]), 0),
    "float64": lambda t: t.logcumsumexp(t.tensor([[0.1, 0.2, 0.3], [1.0, -1.0, 5.0]], dtype=t.float64), 1),
    "half": lambda t: t.logcumsumexp(t.ones(2, 3, dtype=t.float16), 1),
    "transposed-gives-contiguous": lambda t: t.logcumsumexp(t.arange(6.0).reshape(2, 3).t(), 0),
    "zero-dim": lambda t: t.logcumsumexp(t.tensor(2.0), 0),
    "zero-dim-dim-minus-one": lambda t: t.logcumsumexp(t.tensor(2.0), -1),
    "empty": lambda t: t.logcumsumexp(t.zeros(0, 2), 0),
    "int-refused": lambda t: t.logcumsumexp(t.tensor([1, 2]), 0),
    "dim-out-of-range": lambda t: t.logcumsumexp(t.ones(2, 3), 2),
    "method": lambda t: t.ones(3).logcumsumexp(0),
    "out": lambda t: t.logcumsumexp(t.ones(2), 0, out=t.empty(0)),
    "out-dtype": lambda t: t.logcumsumexp(t.ones(2), 0, out=t.empty(0, dtype=t.float64)),
    "meta": lambda t: t.logcumsumexp(t.empty(2, 3, device="meta").t(), 0),
    "meta-int-passes": lambda t: t.logcumsumexp(t.ones(2, dtype=t.int64, device="meta"), 0),
    "meta-dim-checked": lambda t: t.logcumsumexp(t.empty(2, 3, device="meta"), 5),
    "meta-out-casts": lambda t: t.logcumsumexp(t.empty(3, device="meta"), 0,
                                               out=t.empty(0, dtype=t.float64, device="meta")),
}


@pytest.mark.parametrize("name", sorted(LOGCUMSUMEXP))
def test_logcumsumexp_matches_torch(name):
    assert _run(dc, LOGCUMSUMEXP[name]) == _run(torch, LOGCUMSUMEXP[name])


@pytest.mark.parametrize("dim", [0, 1])
def test_logcumsumexp_gradient_and_its_operators_match_torchs(dim):
    data = np.array([[0.5, -1.0, 2.0], [0.0, 3.0, -2.0]])
    weights = np.array([[1.0, -2.0, 0.5], [0.0, 1.5, -1.0]])

    def run(t):
        x = t.tensor(data, requires_grad=True)
        y = t.logcumsumexp(x, dim)
        seen = mode_calls(t, lambda: y.backward(t.tensor(weights)))
        return type(y.grad_fn).__name__, np.round(np.asarray(x.grad.tolist()), 12).tolist(), seen

    assert run(dc) == run(torch)
