"""``median`` and ``nanmedian`` against torch 2.13: values, indices among ties and NaNs, out=, meta, errors.

Each case runs on both libraries and compares the result (dtype, shape, strides, elements; a
``(values, indices)`` pair by class name too) or the error, and the warnings; then the gradients,
their nodes and the operators a dispatch mode sees.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

NAN = float("nan")
CASES = {
    "all": lambda t: t.median(t.tensor([[3.0, 1.0], [2.0, 5.0]])),
    "all-even-count-takes-the-lower": lambda t: t.median(t.tensor([4.0, 1.0, 3.0, 2.0])),
    "all-nan": lambda t: t.median(t.tensor([1.0, NAN, 0.0])),
    "all-int": lambda t: t.median(t.tensor([5, 2, 2, 9, 2, 1, 2, 2])),
    "all-half": lambda t: t.median(t.tensor([1.0, 3.0, 2.0], dtype=t.float16)),
    "all-empty-is-nan": lambda t: t.median(t.empty(0)),
    "all-empty-int": lambda t: t.median(t.tensor([], dtype=t.long)),
    "all-complex-refused": lambda t: t.median(t.tensor([1j])),
    "all-bool-refused": lambda t: t.median(t.tensor([True])),
    "dim": lambda t: t.median(t.tensor([[3.0, 1.0, 2.0], [4.0, 6.0, 5.0]]), 1),
    "dim-ties-take-the-stable-rank": lambda t: t.median(t.tensor([5, 2, 2, 9, 2, 1, 2, 2]), 0),
    "dim-all-equal": lambda t: t.median(t.tensor([[1.0, 1.0, 1.0, 1.0, 1.0]]), 1),
    "dim-first-nan-wins": lambda t: t.median(t.tensor([[2.0, NAN, 1.0, NAN], [NAN] * 4]), 1),
    "dim-keepdim-transposed": lambda t: t.median(t.arange(12.0).reshape(3, 4).t(), 1, True),
    "dim-negative": lambda t: t.median(t.arange(24).reshape(2, 3, 4) % 5, -2),
    "dim-uint8": lambda t: t.median(t.tensor([[1, 5, 2], [4, 4, 4]], dtype=t.uint8), 1),
    "dim-zero-dim": lambda t: t.median(t.tensor(4.0), 0),
    "dim-zero-dim-keepdim": lambda t: t.median(t.tensor(4.0), -1, True),
    "dim-empty-other-dim": lambda t: t.median(t.empty(0, 3), 1),
    "dim-empty-refused": lambda t: t.median(t.empty(0, 3), 0),
    "dim-out-of-range": lambda t: t.median(t.tensor(3.0), 1),
    "dim-complex-refused": lambda t: t.median(t.tensor([1j]), 0),
    "method": lambda t: t.tensor([3, 1, 2]).median(),
    "method-dim": lambda t: t.tensor([[3, 1, 2]]).median(dim=1, keepdim=True),
    "full-out-refused-by-the-binding": lambda t: t.median(t.tensor([1.0, 2.0]), out=t.empty(0)),
    "out": lambda t: t.median(t.tensor([[1.0, 2.0], [0.0, 5.0]]), 0, out=(t.empty(0), t.empty(0, dtype=t.long))),
    "out-resized-warns": lambda t: t.median(t.tensor([1.0, 2.0]), 0, out=(t.empty(3), t.empty(3, dtype=t.long))),
    "out-indices-dtype-refused": lambda t: t.median(t.tensor([1.0, 2.0]), 0, out=(t.empty(0), t.empty(0))),
    "out-values-dtype-refused": lambda t: t.median(t.tensor([1.0, 2.0]), 0, out=(
        t.empty(0, dtype=t.double), t.empty(0, dtype=t.long))),
    "ops-full-out": lambda t: t.ops.aten.median.out(t.tensor([1.0, 3.0, 2.0]), out=t.empty(0)),
    "ops-full-out-dtype-refused": lambda t: t.ops.aten.median.out(t.tensor([1.0, 3.0]), out=t.empty(0, dtype=t.double)),
    "nanmedian-all": lambda t: t.nanmedian(t.tensor([NAN, 1.0, 3.0, NAN, 2.0])),
    "nanmedian-all-nans": lambda t: t.nanmedian(t.tensor([NAN, NAN])),
    "nanmedian-dim": lambda t: t.nanmedian(t.tensor([[2.0, NAN, 1.0, NAN, 2.0, 2.0], [1.0] + [NAN] * 5]), 1),
    "nanmedian-int": lambda t: t.nanmedian(t.tensor([[4, 1, 3]]), 1),
    "nanmedian-out": lambda t: t.nanmedian(t.tensor([[NAN, 2.0]]), 1, out=(t.empty(0), t.empty(0, dtype=t.long))),
    "nanmedian-empty-refused": lambda t: t.nanmedian(t.empty(0, 3), 0),
    "nanmedian-complex-refused": lambda t: t.nanmedian(t.tensor([1j]), 0),
    "meta": lambda t: t.median(t.empty(3, 4, device="meta").t(), 1, True),
    "meta-all": lambda t: t.median(t.empty(3, 4, device="meta")),
    "meta-empty-dim-not-refused": lambda t: t.median(t.empty(2, 0, device="meta"), 1),
    "meta-out-casts-safely": lambda t: t.median(t.empty(2, 3, device="meta"), 0, out=(
        t.empty(5, dtype=t.float64, device="meta"), t.empty(0, dtype=t.long, device="meta"))),
    "meta-out-float-indices": lambda t: t.median(t.empty(2, 3, device="meta"), 0, out=(
        t.empty(0, device="meta"), t.empty(0, device="meta"))),
    "meta-nanmedian-dim": lambda t: t.nanmedian(t.empty(2, 3, device="meta"), -1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_median_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


@pytest.mark.parametrize("n", range(1, 40))
def test_an_all_nan_rows_nanmedian_index_is_the_one_torchs_nth_element_leaves(n):
    def run(t):
        return t.nanmedian(t.full((2, n), NAN), 1).indices.tolist()

    assert run(dc) == run(torch)


def test_random_rows_with_ties_and_nans_give_torchs_values_and_indices():
    rng = np.random.default_rng(7)
    data = rng.integers(0, 4, (40, 9)).astype(np.float32)
    data[rng.random((40, 9)) < 0.2] = np.nan
    for name in ("median", "nanmedian"):
        for dim in (0, 1):
            mine = getattr(dc, name)(dc.tensor(data), dim)
            theirs = getattr(torch, name)(torch.tensor(data), dim)
            np.testing.assert_array_equal(mine.values.numpy(), theirs.values.numpy())
            assert mine.indices.tolist() == theirs.indices.tolist()


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dim", [None, 1])
def test_the_gradient_as_torchs(name, dim):
    def run(t):
        x = t.tensor([[2.0, 1.0, 2.0], [0.0, 3.0, 4.0]], requires_grad=True)
        y = getattr(t, name)(x) if dim is None else getattr(t, name)(x, dim).values
        seen = mode_calls(t, lambda: y.backward(t.ones_like(y)))
        return type(y.grad_fn).__name__, x.grad.tolist(), seen

    assert run(dc) == run(torch)


def test_the_dim_form_calls_what_torchs_calls():
    def run(t):
        x = t.tensor([[2.0, 1.0, 2.0]])
        return mode_calls(t, lambda: (t.median(x, 1), t.median(x, 1, True), t.nanmedian(x), x.median(dim=0)))

    assert run(dc) == run(torch)
