"""``kthvalue`` against torch 2.13: values, indices among ties and NaNs, out=, meta, errors, the gradient.

Which of several equal elements torch reports depends on the swaps of its select, which
dispatchcore replays; random rows full of ties and NaNs check that, besides the single cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

NAN = float("nan")
ROWS = [[3.0, 1.0, 2.0, 1.0], [NAN, 1.0, NAN, 0.0]]
CASES = {
    "last-dim": lambda t: t.kthvalue(t.tensor(ROWS), 2),
    "largest-keepdim": lambda t: t.kthvalue(t.tensor(ROWS), 4, 1, True),
    "nan-is-largest": lambda t: t.kthvalue(t.tensor(ROWS), 3, 1),
    "dim-0": lambda t: t.kthvalue(t.tensor(ROWS), 1, 0),
    "int": lambda t: t.kthvalue(t.tensor([[5, 2, 2, 9, 2, 1, 2, 2]]), 4),
    "half": lambda t: t.kthvalue(t.tensor([1.0, 3.0, 2.0], dtype=t.float16), 2),
    "transposed": lambda t: t.kthvalue(t.arange(12.0).reshape(3, 4).t() % 3, 2, 1),
    "zero-dim": lambda t: t.kthvalue(t.tensor(2.0), 1, 0),
    "zero-dim-complex-is-copied": lambda t: t.kthvalue(t.tensor(1j), 1),
    "method": lambda t: t.tensor([3, 1, 2]).kthvalue(1),
    "method-keywords": lambda t: t.tensor(ROWS).kthvalue(k=2, dim=0, keepdim=True),
    "k-too-large": lambda t: t.kthvalue(t.tensor(ROWS), 5),
    "k-zero": lambda t: t.kthvalue(t.tensor(ROWS), 0),
    "zero-dim-k-two": lambda t: t.kthvalue(t.tensor(2.0), 2),
    "empty-dim-refused": lambda t: t.kthvalue(t.empty(0, 3), 1, 0),
    "dim-out-of-range": lambda t: t.kthvalue(t.tensor(ROWS), 1, 2),
    "complex-refused": lambda t: t.kthvalue(t.tensor([1j]), 1),
    "bool-refused": lambda t: t.kthvalue(t.tensor([True]), 1),
    "out": lambda t: t.kthvalue(t.tensor(ROWS), 1, 1, out=(t.empty(0), t.empty(0, dtype=t.long))),
    "out-values-dtype-refused": lambda t: t.kthvalue(t.tensor(ROWS), 1, 1, out=(
        t.empty(0, dtype=t.double), t.empty(0, dtype=t.long))),
    "out-indices-dtype-refused": lambda t: t.kthvalue(t.tensor(ROWS), 1, 1, out=(t.empty(0), t.empty(0))),
    "out-one-dim-short-warns-unsqueezed": lambda t: t.kthvalue(t.tensor(ROWS), 1, 1, out=(
        t.empty(5), t.empty(5, dtype=t.long))),
    "out-keepdim": lambda t: t.kthvalue(t.tensor(ROWS), 2, 1, True, out=(t.empty(0), t.empty(0, dtype=t.long))),
    "meta": lambda t: t.kthvalue(t.empty(2, 3, device="meta"), 2),
    "meta-k-refused": lambda t: t.kthvalue(t.empty(2, 3, device="meta"), 4),
    "meta-empty-dim-not-refused": lambda t: t.kthvalue(t.empty(2, 0, device="meta"), 1, 0),
    "meta-out-casts-safely": lambda t: t.kthvalue(t.empty(2, 3, device="meta"), 1, out=(
        t.empty(0, dtype=t.float64, device="meta"), t.empty(0, device="meta"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kthvalue_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


@pytest.mark.parametrize("seed", range(6))
def test_random_rows_with_ties_and_nans_give_torchs_indices(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    data = rng.integers(0, 3, (25, n)).astype(np.float32)
    data[rng.random((25, n)) < 0.15] = np.nan
    for k in sorted({1, (n + 1) // 2, n}):
        mine = dc.kthvalue(dc.tensor(data), k, 1)
        theirs = torch.kthvalue(torch.tensor(data), k, 1)
        np.testing.assert_array_equal(mine.values.numpy(), theirs.values.numpy())
        assert mine.indices.tolist() == theirs.indices.tolist()


def test_the_gradient_and_the_calls_as_torchs():
    def run(t):
        x = t.tensor([[2.0, 1.0, 2.0], [0.0, 3.0, 4.0]], requires_grad=True)
        calls = mode_calls(t, lambda: t.kthvalue(x, 2))
        y = t.kthvalue(x, 2, 1).values
        seen = mode_calls(t, lambda: y.backward(t.ones_like(y)))
        return calls, type(y.grad_fn).__name__, x.grad.tolist(), seen

    assert run(dc) == run(torch)
