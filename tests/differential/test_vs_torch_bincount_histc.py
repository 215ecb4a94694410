"""``bincount`` and ``histc`` against torch 2.13: counts, weights and their dtypes, bins and ranges, errors.

Each case runs on both libraries and compares the result (dtype, shape, strides, elements) or the
error, and the warnings; then the gradient behaviour (``bincount``'s NotImplemented node, ``histc``
not differentiable) and the operators a dispatch mode sees.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

NAN, INF = float("nan"), float("inf")
CASES = {
    "bincount": lambda t: t.bincount(t.tensor([1, 1, 3])),
    "bincount-minlength": lambda t: t.bincount(t.tensor([1, 1, 3]), minlength=6),
    "bincount-float-weights-stay-float": lambda t: t.bincount(t.tensor([1, 1, 3]), t.tensor([0.5, 1.0, 2.0])),
    "bincount-double-weights": lambda t: t.bincount(t.tensor([1, 1, 3]), t.tensor([0.5, 1.0, 2.0], dtype=t.double)),
    "bincount-int-weights-as-double": lambda t: t.bincount(t.tensor([1, 1, 3]), t.tensor([1, 2, 3])),
    "bincount-bool-weights-as-double": lambda t: t.bincount(t.tensor([1, 1, 3]), t.tensor([True, False, True])),
    "bincount-half-weights-as-double": lambda t: t.bincount(t.tensor([0, 2]), t.tensor([1.5, 2.0], dtype=t.half)),
    "bincount-empty": lambda t: t.bincount(t.tensor([], dtype=t.long)),
    "bincount-empty-minlength-ignores-weights": lambda t: t.bincount(t.tensor([], dtype=t.long), t.tensor([]),
                                                                     minlength=3),
    "bincount-uint8": lambda t: t.bincount(t.tensor([1, 2], dtype=t.uint8)),
    "bincount-int32-float-weights": lambda t: t.bincount(t.tensor([1, 2], dtype=t.int32), t.tensor([1.0, 2.0])),
    "bincount-method": lambda t: t.tensor([0, 2]).bincount(minlength=4),
    "bincount-negative-refused": lambda t: t.bincount(t.tensor([-1, 2])),
    "bincount-2d-refused": lambda t: t.bincount(t.tensor([[1]])),
    "bincount-float-refused": lambda t: t.bincount(t.tensor([1.0])),
    "bincount-bool-refused": lambda t: t.bincount(t.tensor([True, True])),
    "bincount-negative-minlength": lambda t: t.bincount(t.tensor([1, 2]), minlength=-1),
    "bincount-weights-length": lambda t: t.bincount(t.tensor([1, 2]), t.tensor([1.0])),
    "histc": lambda t: t.histc(t.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3),
    "histc-default-range-is-the-data": lambda t: t.histc(t.tensor([1.0, 2.0, 1.0, 5.0, -1.0])),
    "histc-three-bins": lambda t: t.histc(t.tensor([1.0, 2.0, 1.0]), bins=3),
    "histc-constant-data-widened": lambda t: t.histc(t.tensor([2.0, 2.0]), bins=3),
    "histc-float32-edges": lambda t: t.histc(t.tensor([0.1, 0.2, 0.3, 0.7, 1.0]), bins=10, min=0, max=1),
    "histc-out-of-range-and-nan-skipped": lambda t: t.histc(t.tensor([1.0, 2.0, NAN, -5.0, 9.0]), bins=2, min=0,
                                                            max=3),
    "histc-equal-bounds-read-the-data": lambda t: t.histc(t.tensor([1.0, 4.0]), bins=3, min=2, max=2),
    "histc-double": lambda t: t.histc(t.tensor([1.0, 2.0], dtype=t.double), bins=2),
    "histc-half": lambda t: t.histc(t.tensor([1.0, 2.0], dtype=t.half), bins=2),
    "histc-empty": lambda t: t.histc(t.empty(0), bins=2),
    "histc-2d": lambda t: t.histc(t.tensor([[1.0, 2.0], [3.0, 4.0]]), bins=2),
    "histc-method": lambda t: t.tensor([1.0, 2.0, 2.5]).histc(bins=3, min=1, max=3),
    "histc-int-refused": lambda t: t.histc(t.tensor([1, 2])),
    "histc-zero-bins": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=0),
    "histc-max-below-min": lambda t: t.histc(t.tensor([1.0, 2.0]), min=3, max=1),
    "histc-nan-data": lambda t: t.histc(t.tensor([1.0, NAN])),
    "histc-infinite-data": lambda t: t.histc(t.tensor([1.0, INF])),
    "histc-nan-min": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=2, min=NAN, max=3),
    "histc-out": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=2, out=t.empty(0)),
    "histc-out-resized-warns": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=2, out=t.empty(5)),
    "histc-out-dtype-refused": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=2, out=t.empty(0, dtype=t.double)),
    "histc-meta": lambda t: t.histc(t.empty(3, device="meta"), bins=5),
    "histc-meta-max-below-min": lambda t: t.histc(t.empty(3, device="meta"), bins=5, min=2, max=1),
    "histc-meta-zero-bins": lambda t: t.histc(t.empty(3, device="meta"), bins=0),
    "histc-meta-out-casts-safely": lambda t: t.histc(t.empty(3, device="meta"), bins=2,
                                                     out=t.empty(0, dtype=t.double, device="meta")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bincount_histc_match_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


@pytest.mark.parametrize("seed", range(4))
def test_random_data_falls_in_torchs_bins(seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(200).astype(np.float32)
    for bins, low, high in ((7, 0, 0), (10, -1, 1), (3, -0.5, 2.25)):
        assert dc.histc(dc.tensor(data), bins, low, high).tolist() == torch.histc(torch.tensor(data), bins, low,
                                                                                  high).tolist()
    index = rng.integers(0, 9, 50)
    weights = rng.standard_normal(50).astype(np.float32)
    np.testing.assert_array_equal(dc.bincount(dc.tensor(index), dc.tensor(weights)).numpy(),
                                  torch.bincount(torch.tensor(index), torch.tensor(weights)).numpy())


def test_bincounts_weights_get_a_not_implemented_node_and_histc_none_as_torch():
    def run(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = t.bincount(t.tensor([0, 1]), x)
        try:
            y.sum().backward()
            error = None
        except RuntimeError as e:
            error = str(e)
        return type(y.grad_fn).__name__, error, t.histc(x, bins=2).requires_grad

    assert run(dc) == run(torch)


def test_the_operators_a_mode_sees_are_torchs():
    def run(t):
        x, i = t.tensor([1.0, 2.0]), t.tensor([0, 2])
        return mode_calls(t, lambda: (t.bincount(i), t.bincount(i, x), t.bincount(i, minlength=5), t.histc(x),
                                      t.histc(x, 4), t.histc(x, 4, 0, 3)))

    assert run(dc) == run(torch)
