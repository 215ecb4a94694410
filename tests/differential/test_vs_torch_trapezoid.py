"""``trapezoid``, ``trapz`` and ``cumulative_trapezoid`` against torch 2.13: values, the operators they call, errors.

All three are CompositeImplicitAutograd: a dispatch mode sees the operators their C++ calls, in
its order (GCC evaluates operands right to left), so those are compared along with the results.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import outcome, outcome_and_calls  # noqa: E402

pytestmark = pytest.mark.differential

Y = [[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]]
X = [0.0, 1.0, 3.0]
CALLS = {
    "trapezoid": lambda t, y, x: t.trapezoid(y),
    "trapezoid-dx": lambda t, y, x: t.trapezoid(y, dx=2),
    "trapezoid-dim": lambda t, y, x: t.trapezoid(y, dim=0),
    "trapezoid-x": lambda t, y, x: t.trapezoid(y, x),
    "trapezoid-x-same-rank": lambda t, y, x: t.trapezoid(y, y),
    "trapezoid-x-lower-rank": lambda t, y, x: t.trapezoid(t.ones(2, 3, 4), t.ones(3, 4), dim=1),
    "trapezoid-empty": lambda t, y, x: t.trapezoid(t.empty(2, 0)),
    "trapz": lambda t, y, x: t.trapz(y, dx=0.5),
    "trapz-x": lambda t, y, x: t.trapz(y, x, dim=-1),
    "cumulative": lambda t, y, x: t.cumulative_trapezoid(y),
    "cumulative-x": lambda t, y, x: t.cumulative_trapezoid(y, x),
    "cumulative-dx-dim": lambda t, y, x: t.cumulative_trapezoid(y, dx=0.5, dim=0),
    "cumulative-empty": lambda t, y, x: t.cumulative_trapezoid(t.empty(2, 0)),
    "int-samples": lambda t, y, x: t.trapezoid(t.tensor([1, 2, 4])),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_the_operators_a_mode_sees_match_torch(name):
    def call(t):
        return CALLS[name](t, t.tensor(Y), t.tensor(X))

    assert outcome_and_calls(dc, call) == outcome_and_calls(torch, call)


ERRORS = {
    "bool-y": lambda t: t.trapezoid(t.tensor([True])),
    "bool-x": lambda t: t.trapezoid(t.tensor(Y), t.tensor([True, False, True])),
    "cumulative-bool-y": lambda t: t.cumulative_trapezoid(t.tensor([True])),
    "cumulative-bool-x": lambda t: t.cumulative_trapezoid(t.tensor(Y), t.tensor([True, False, True])),
    "complex-dx": lambda t: t.trapezoid(t.tensor(Y), dx=1j),
    "bool-dx": lambda t: t.trapezoid(t.tensor(Y), dx=True),
    "cumulative-complex-dx": lambda t: t.cumulative_trapezoid(t.tensor(Y), dx=1j),
    "x-length": lambda t: t.trapezoid(t.tensor(Y), t.tensor([1.0, 2.0])),
    "cumulative-x-length": lambda t: t.cumulative_trapezoid(t.tensor(Y), t.tensor([1.0, 2.0])),
    "zero-dim": lambda t: t.trapezoid(t.tensor(1.0)),
    "zero-dim-x-broadcast": lambda t: t.trapezoid(t.tensor(Y), t.tensor(1.0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert outcome(dc, ERRORS[name]) == outcome(torch, ERRORS[name])


def test_the_gradient_flows_through_the_composite_as_torchs():
    def run(t):
        y = t.tensor(Y, requires_grad=True)
        x = t.tensor(X, requires_grad=True)
        t.trapezoid(y, x).sum().backward()
        return y.grad.tolist(), x.grad.tolist()

    assert run(dc) == run(torch)
