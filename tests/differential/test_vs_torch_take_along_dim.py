"""``take_along_dim`` against torch 2.13: values, broadcasting, wrapped indices, out=, meta, errors, calls.

It is CompositeImplicitAutograd in both, so besides the result (dtype, shape, strides, elements)
or the error, the operators a dispatch mode sees are compared, and the gradient through ``gather``.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential


def _x(t):
    return t.arange(12.0).reshape(3, 4)


CASES = {
    "dim": lambda t: t.take_along_dim(_x(t), t.tensor([[0], [2], [1]]), 1),
    "dim-0-broadcasts-the-input": lambda t: t.take_along_dim(_x(t), t.tensor([[1, 0, 2, 3]]), 0),
    "indices-broadcast": lambda t: t.take_along_dim(_x(t), t.tensor([[0, 3]]), 1),
    "negative-and-large-indices-wrap": lambda t: t.take_along_dim(_x(t), t.tensor([[-1, 9]]), 1),
    "sorted-order": lambda t: t.take_along_dim(t.tensor([[3.0, 1.0, 2.0]]), t.tensor([[1, 2, 0]]), 1),
    "flat": lambda t: t.take_along_dim(_x(t), t.tensor([5, 0])),
    "flat-int32-indices": lambda t: t.take_along_dim(_x(t), t.tensor([0], dtype=t.int32)),
    "flat-zero-dim": lambda t: t.take_along_dim(t.tensor(5.0), t.tensor(0)),
    "method": lambda t: _x(t).take_along_dim(t.tensor([[0]]), 1),
    "method-flat": lambda t: _x(t).take_along_dim(t.tensor([11])),
    "out": lambda t: t.take_along_dim(_x(t), t.tensor([[0], [2], [1]]), dim=1, out=t.empty(0)),
    "out-dtype-refused": lambda t: t.take_along_dim(_x(t), t.tensor([[0]]), 1, out=t.empty(0, dtype=t.float64)),
    "flat-non-viewable-refused": lambda t: t.take_along_dim(_x(t).t(), t.tensor([0])),
    "ndim-mismatch": lambda t: t.take_along_dim(_x(t), t.tensor([0]), 1),
    "ndim-checked-before-dtype": lambda t: t.take_along_dim(_x(t), t.tensor([0], dtype=t.int32), 1),
    "int32-indices-refused": lambda t: t.take_along_dim(_x(t), t.tensor([[0]], dtype=t.int32), 1),
    "dim-out-of-range": lambda t: t.take_along_dim(_x(t), t.tensor([[0]]), 5),
    "zero-dim-with-dim": lambda t: t.take_along_dim(t.tensor(5.0), t.tensor(0), 0),
    "shapes-do-not-broadcast": lambda t: t.take_along_dim(_x(t), t.zeros(2, 1, dtype=t.long), 1),
    "device-mismatch": lambda t: t.take_along_dim(_x(t), t.zeros(3, 1, dtype=t.long, device="meta"), 1),
    "out-device-mismatch": lambda t: t.take_along_dim(_x(t), t.tensor([[0]]), 1, out=t.empty(0, device="meta")),
    "meta": lambda t: t.take_along_dim(t.empty(3, 4, device="meta"), t.zeros(1, 2, dtype=t.long, device="meta"), 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_take_along_dim_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


CALLS = {
    "dim": lambda t, x: t.take_along_dim(x, t.tensor([[0], [2], [1]]), 1),
    "flat": lambda t, x: t.take_along_dim(x, t.tensor([5, 0])),
    "out": lambda t, x: t.take_along_dim(x, t.tensor([[1, 0, 2, 3]]), 0, out=x.new_empty(0)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_operators_a_mode_sees_are_torchs(name):
    def run(t):
        x = _x(t)
        return mode_calls(t, lambda: CALLS[name](t, x))

    assert run(dc) == run(torch)


def test_the_gradient_goes_back_through_gather_as_torchs():
    def run(t):
        x = _x(t).requires_grad_()
        y = t.take_along_dim(x, t.tensor([[0, -1]]), 1)
        y.sum().backward()
        return type(y.grad_fn).__name__, x.grad.tolist()

    assert run(dc) == run(torch)
