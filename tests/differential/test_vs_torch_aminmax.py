"""``aminmax`` against torch 2.13: both extrema, over a dim or all, out=, meta, errors, the gradient.

Each case runs on both libraries and compares the ``(min, max)`` pair (class name, dtypes, shapes,
strides, elements) or the error, and the warnings; the gradient, its node and the operators a
dispatch mode sees during backward.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

NAN = float("nan")
CASES = {
    "all": lambda t: t.aminmax(t.tensor([[1.0, 5.0, 2.0], [3.0, 3.0, 0.0]])),
    "all-keepdim": lambda t: t.aminmax(t.tensor([[1.0, 5.0], [3.0, 0.0]]), keepdim=True),
    "dim": lambda t: t.aminmax(t.tensor([[1.0, 5.0, 2.0], [3.0, 3.0, 0.0]]), dim=1),
    "negative-dim-keepdim": lambda t: t.aminmax(t.arange(24.0).reshape(2, 3, 4), dim=-2, keepdim=True),
    "permuted-input-gives-contiguous": lambda t: t.aminmax(t.ones(2, 3, 4).permute(2, 0, 1), dim=1),
    "transposed-all": lambda t: t.aminmax(t.arange(6).reshape(2, 3).t()),
    "nan-propagates": lambda t: t.aminmax(t.tensor([[1.0, NAN], [2.0, 3.0]]), dim=1),
    "nan-all": lambda t: t.aminmax(t.tensor([1.0, NAN, 0.0])),
    "int64": lambda t: t.aminmax(t.tensor([[4, -2], [7, 1]]), dim=0),
    "bool": lambda t: t.aminmax(t.tensor([True, False])),
    "half": lambda t: t.aminmax(t.tensor([1.0, 2.0], dtype=t.float16), dim=0),
    "zero-dim": lambda t: t.aminmax(t.tensor(3.0)),
    "zero-dim-dim-keepdim": lambda t: t.aminmax(t.tensor(3.0), dim=0, keepdim=True),
    "empty-other-dim": lambda t: t.aminmax(t.empty(0, 2), dim=1),
    "method": lambda t: t.tensor([3, 1, 2]).aminmax(),
    "method-dim": lambda t: t.tensor([[3, 1], [0, 9]]).aminmax(dim=1, keepdim=True),
    "positional-dim-refused": lambda t: t.aminmax(t.ones(3), 0),
    "empty-all-refused": lambda t: t.aminmax(t.empty(0)),
    "empty-dim-refused": lambda t: t.aminmax(t.empty(2, 0), dim=1),
    "dim-out-of-range": lambda t: t.aminmax(t.ones(2), dim=3),
    "complex-refused": lambda t: t.aminmax(t.tensor([1j]), dim=0),
    "complex-all-refused": lambda t: t.aminmax(t.tensor([1j])),
    "complex-zero-dim-refused": lambda t: t.aminmax(t.tensor(1j), dim=0),
    "out": lambda t: t.aminmax(t.tensor([[1.0, 2.0], [0.0, 5.0]]), dim=0, out=(t.empty(0), t.empty(0))),
    "out-resized-warns": lambda t: t.aminmax(t.tensor([1, 2]), dim=0,
                                             out=(t.empty(3, dtype=t.long), t.empty(0, dtype=t.long))),
    "out-dtype-refused": lambda t: t.aminmax(t.tensor([1, 2]), out=(t.empty(0, dtype=t.long),
                                                                     t.empty(0, dtype=t.int))),
    "meta": lambda t: t.aminmax(t.empty(2, 3, 4, device="meta").permute(2, 0, 1), dim=1),
    "meta-all-keepdim": lambda t: t.aminmax(t.empty(2, 3, device="meta"), keepdim=True),
    "meta-empty-dim-refused": lambda t: t.aminmax(t.empty(2, 0, device="meta"), dim=1),
    "meta-empty-all-refused": lambda t: t.aminmax(t.empty(0, device="meta")),
    "meta-complex": lambda t: t.aminmax(t.empty(2, dtype=t.complex64, device="meta")),
    "meta-out-casts-safely": lambda t: t.aminmax(t.empty(2, device="meta"), out=(
        t.empty(3, dtype=t.float64, device="meta"), t.empty(0, dtype=t.float64, device="meta"))),
    "meta-out-unsafe-cast-refused": lambda t: t.aminmax(t.empty(2, device="meta"), out=(
        t.empty(0, dtype=t.int64, device="meta"), t.empty(0, dtype=t.int64, device="meta"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_aminmax_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


@pytest.mark.parametrize("dim, keepdim, which", [
    (None, False, "both"), (1, False, "both"), (1, True, "both"), (None, True, "both"),
    (0, False, "min"), (1, False, "max"),
])
def test_the_gradient_splits_evenly_between_tied_extrema_as_torchs(dim, keepdim, which):
    def run(t):
        x = t.tensor([[1.0, 5.0, 5.0], [0.0, 3.0, 0.0]], requires_grad=True)
        low, high = t.aminmax(x, dim=dim, keepdim=keepdim)
        roots = {"both": [low, high], "min": [low], "max": [high]}[which]
        seen = mode_calls(t, lambda: t.autograd.backward(roots, [t.ones_like(r) * 2 for r in roots]))
        return type(low.grad_fn).__name__, low.grad_fn is high.grad_fn, x.grad.tolist(), seen

    assert run(dc) == run(torch)


def test_a_zero_dim_inputs_gradient_as_torchs():
    def run(t):
        x = t.tensor(2.0, requires_grad=True)
        low, high = t.aminmax(x)
        t.autograd.backward([low, high], [t.tensor(1.0), t.tensor(3.0)])
        return x.grad.tolist()

    assert run(dc) == run(torch)
