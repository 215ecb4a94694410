"""``mode`` against torch 2.13: values and indices among ties (torch's sort replayed), out=, meta, errors.

Which copy of the most frequent value torch reports comes from the order its unstable
``std::sort`` leaves equal values in, so random rows full of ties, short and long (introsort's
partitions), are compared besides the single cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

CASES = {
    "vector": lambda t: t.mode(t.tensor([2.0, 1.0, 1.0, 2.0, 3.0])),
    "dim-keepdim": lambda t: t.mode(t.tensor([[2, 1, 1, 2, 3], [5, 5, 4, 4, 4]]), 1, True),
    "dim-0": lambda t: t.mode(t.tensor([[2, 1], [1, 2]]), 0),
    "distinct-values-give-the-minimum": lambda t: t.mode(t.tensor([[3.0, 1.0, 2.0]]), 1),
    "transposed": lambda t: t.mode(t.tensor([[1.0, 2.0], [3.0, 4.0]]).t(), 0),
    "bool": lambda t: t.mode(t.tensor([True, False, True])),
    "nan-runs-stay-apart": lambda t: t.mode(t.tensor([float("nan"), 1.0, float("nan")])),
    "zero-dim": lambda t: t.mode(t.tensor(3.0)),
    "zero-dim-keepdim": lambda t: t.mode(t.tensor(3.0), 0, True),
    "empty-other-dim": lambda t: t.mode(t.empty(2, 0), 0),
    "empty-refused": lambda t: t.mode(t.empty(0)),
    "empty-dim-refused": lambda t: t.mode(t.empty(2, 0), 1),
    "complex-refused": lambda t: t.mode(t.tensor([1j])),
    "method": lambda t: t.tensor([3, 3, 1]).mode(),
    "out": lambda t: t.mode(t.tensor([1.0, 2.0, 2.0]), out=(t.empty(0), t.empty(0, dtype=t.long))),
    "out-values-dtype": lambda t: t.mode(t.tensor([1.0, 2.0]), out=(t.empty(0, dtype=t.double), t.empty(0))),
    "out-indices-dtype": lambda t: t.mode(t.tensor([1.0, 2.0]), out=(t.empty(0), t.empty(0))),
    "out-one-dim-short-warns-unsqueezed": lambda t: t.mode(t.tensor([[1.0, 2.0]]), 1, out=(
        t.empty(5), t.empty(0, dtype=t.long))),
    "out-keepdim-resized-warns": lambda t: t.mode(t.tensor([[1.0, 2.0]]), 1, True, out=(
        t.empty(5), t.empty(0, dtype=t.long))),
    "out-any-shape-unsqueezed-first": lambda t: t.mode(t.tensor([[1.0, 2.0], [3.0, 3.0]]), 1, out=(
        t.empty(7, 3), t.empty(0, dtype=t.long))),
    "out-kept-shape-squeezed": lambda t: t.mode(t.tensor([[1.0, 2.0], [3.0, 3.0]]), 1, out=(
        t.empty(2, 1), t.empty(2, 1, dtype=t.long))),
    "out-empty-input-resized": lambda t: t.mode(t.empty(2, 0), 0, out=(t.empty(5), t.empty(0, dtype=t.long))),
    "out-zero-dim-input": lambda t: t.mode(t.tensor(3.0), out=(t.empty(2), t.empty(2, dtype=t.long))),
    "meta": lambda t: t.mode(t.empty(2, 3, device="meta").t(), 1),
    "meta-empty-dim-not-refused": lambda t: t.mode(t.empty(2, 0, device="meta"), 1),
    "meta-out-float-indices": lambda t: t.mode(t.empty(2, 3, device="meta"), 1, out=(
        t.empty(0, device="meta"), t.empty(0, device="meta"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mode_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


@pytest.mark.parametrize("length", [1, 2, 7, 16, 17, 33, 64, 200])
def test_random_rows_of_ties_give_torchs_indices(length):
    rng = np.random.default_rng(length)
    for high in (2, 3, 20):
        data = rng.integers(0, high, (6, length))
        mine, theirs = dc.mode(dc.tensor(data), 1), torch.mode(torch.tensor(data), 1)
        assert mine.values.tolist() == theirs.values.tolist()
        assert mine.indices.tolist() == theirs.indices.tolist()


def test_the_gradient_and_the_calls_as_torchs():
    def run(t):
        x = t.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 0.0]], requires_grad=True)
        calls = mode_calls(t, lambda: (t.mode(x), t.mode(x, 0, True)))
        y = t.mode(x, 1).values
        seen = mode_calls(t, lambda: y.backward(t.ones_like(y)))
        return calls, type(y.grad_fn).__name__, x.grad.tolist(), seen

    assert run(dc) == run(torch)
