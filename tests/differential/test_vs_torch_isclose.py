"""``isclose``, ``allclose`` and ``equal`` against torch 2.13: results, the operators a mode sees, errors.

``isclose`` is CompositeImplicitAutograd (its operators, in torch's order, reach a dispatch mode),
``allclose`` CompositeExplicitAutograd over it (one call, a Python bool), ``equal`` a CPU kernel.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import outcome, outcome_and_calls  # noqa: E402

pytestmark = pytest.mark.differential

NAN, INF = float("nan"), float("inf")
A_VALUES = [1.0, NAN, 3.0, INF, -INF, 0.0]
B_VALUES = [1.0000001, NAN, 4.0, INF, INF, 1e-9]
CALLS = {
    "isclose": lambda t, a, b: t.isclose(a, b),
    "isclose-equal-nan": lambda t, a, b: t.isclose(a, b, equal_nan=True),
    "isclose-zero-tolerances": lambda t, a, b: t.isclose(a, b, rtol=0, atol=0),
    "isclose-tolerances": lambda t, a, b: t.isclose(a, b, 0.5, 1e-3),
    "isclose-method": lambda t, a, b: a.isclose(b, atol=1.0),
    "isclose-broadcast": lambda t, a, b: t.isclose(a.reshape(2, 3), b[:3]),
    "isclose-bool": lambda t, a, b: t.isclose(t.tensor([True, False]), t.tensor([False, False])),
    "isclose-int": lambda t, a, b: t.isclose(t.tensor([1, 5]), t.tensor([2, 5])),
    "isclose-uint8-tolerance": lambda t, a, b: t.isclose(t.tensor([1, 2], dtype=t.uint8),
                                                         t.tensor([2, 1], dtype=t.uint8), atol=1),
    "isclose-complex-equal-nan": lambda t, a, b: t.isclose(t.tensor([1j, complex(NAN, 0)]),
                                                           t.tensor([1j, complex(NAN, 0)]), equal_nan=True),
    "allclose": lambda t, a, b: t.allclose(a, b),
    "allclose-equal-nan-true": lambda t, a, b: t.allclose(a[:2], b[:2], equal_nan=True),
    "allclose-method": lambda t, a, b: a.allclose(b, atol=10.0, equal_nan=True),
    "equal": lambda t, a, b: t.equal(a, a),
    "equal-finite": lambda t, a, b: t.equal(a[::2][:1], t.tensor([1.0])),
    "equal-promotes": lambda t, a, b: t.equal(t.tensor([1.0, 3.0]), t.tensor([1, 3])),
    "equal-sizes-differ": lambda t, a, b: t.equal(t.ones(2), t.ones(3)),
    "equal-method-strided": lambda t, a, b: t.ones(2, 3).t().equal(t.ones(3, 2)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_and_the_operators_a_mode_sees_match_torch(name):
    def call(t):
        return CALLS[name](t, t.tensor(A_VALUES), t.tensor(B_VALUES))

    assert outcome_and_calls(dc, call) == outcome_and_calls(torch, call)


ERRORS = {
    "dtypes-differ": lambda t: t.isclose(t.ones(2), t.ones(2, dtype=t.double)),
    "negative-rtol": lambda t: t.isclose(t.ones(2), t.ones(2), rtol=-1),
    "negative-atol": lambda t: t.isclose(t.ones(2), t.ones(2), atol=-0.5),
    "no-broadcast": lambda t: t.allclose(t.ones(2), t.ones(3)),
    "allclose-dtypes-differ": lambda t: t.allclose(t.ones(2), t.ones(2, dtype=t.double)),
    "allclose-on-meta": lambda t: t.allclose(t.ones(2, device="meta"), t.ones(2, device="meta")),
    "isclose-on-meta": lambda t: t.isclose(t.ones(2, 3, device="meta"), t.ones(3, device="meta")),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_and_meta_match_torch(name):
    assert outcome(dc, ERRORS[name]) == outcome(torch, ERRORS[name])


def test_the_results_never_require_grad():
    def run(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        return t.isclose(x, x).requires_grad, t.allclose(x, x), t.equal(x, x)

    assert run(dc) == run(torch)
