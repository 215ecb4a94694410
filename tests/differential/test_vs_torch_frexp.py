"""``frexp`` against torch 2.13: mantissas and exponents, dtypes and layouts, out=, meta, the gradient.

Each case runs on both libraries and compares the (mantissa, exponent) pair (class name, dtypes,
shapes, strides, elements), or the error; the gradient, its node and the operators a mode sees.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

INF, NAN = float("inf"), float("nan")
CASES = {
    "float32": lambda t: t.frexp(t.tensor([0.0, 1.0, 8.0, -3.5, 0.1, INF, -INF, NAN, 1e-40, -0.0])),
    "float64": lambda t: t.frexp(t.tensor([1e-310, 3.0, 2.0**60], dtype=t.float64)),
    "half": lambda t: t.frexp(t.tensor([1.0, 2.0, 0.001], dtype=t.float16)),
    "transposed-keeps-its-layout": lambda t: t.frexp(t.arange(1.0, 7.0).reshape(2, 3).t()),
    "zero-dim": lambda t: t.frexp(t.tensor(12.0)),
    "method": lambda t: t.tensor([6.0]).frexp(),
    "int-refused": lambda t: t.frexp(t.tensor([1, 2])),
    "out": lambda t: t.frexp(t.tensor([6.0, 0.25]), out=(t.empty(0), t.empty(0, dtype=t.int32))),
    "out-mantissa-dtype": lambda t: t.frexp(t.ones(2), out=(t.empty(0, dtype=t.float64), t.empty(0, dtype=t.int32))),
    "out-exponent-dtype": lambda t: t.frexp(t.ones(2), out=(t.empty(0), t.empty(0, dtype=t.int64))),
    "meta": lambda t: t.frexp(t.empty(2, 3, device="meta").t()),
    "meta-int-refused": lambda t: t.frexp(t.empty(2, dtype=t.int64, device="meta")),
    "meta-out": lambda t: t.frexp(t.empty(3, device="meta"), out=(t.empty(0, device="meta"),
                                                                  t.empty(0, dtype=t.int32, device="meta"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_frexp_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


def test_the_mantissas_gradient_divides_by_two_to_the_exponent_as_torchs():
    def run(t):
        x = t.tensor([3.0, 0.5, -10.0], requires_grad=True)
        mantissa, exponent = t.frexp(x)
        seen = mode_calls(t, lambda: mantissa.backward(t.tensor([1.0, 2.0, 3.0])))
        return type(mantissa.grad_fn).__name__, exponent.requires_grad, x.grad.tolist(), seen

    assert run(dc) == run(torch)
