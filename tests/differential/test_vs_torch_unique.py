"""``torch.unique``/``unique_consecutive`` and their operators against torch 2.13.

``_unique2``, ``unique_dim``, ``unique_consecutive`` and ``unique_dim_consecutive``: values, inverse
indices and counts (dtypes, shapes, strides, elements), NaNs, bool, 0-d and empty inputs, the
errors, the out= forms, the operators a dispatch mode sees, and the not-implemented derivatives.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

NAN = float("nan")
ROWS = [[1, 2], [1, 2], [0, 3], [1, 2]]
CASES = {
    "unique": lambda t: t.unique(t.tensor([3, 1, 2, 3, 1, 5])),
    "unique-unsorted-sorts-on-cpu": lambda t: t.unique(t.tensor([3, 1, 2]), sorted=False),
    "unique-inverse": lambda t: t.unique(t.tensor([[3, 1], [2, 3]]), return_inverse=True),
    "unique-counts": lambda t: t.unique(t.tensor([3, 1, 2, 3]), return_counts=True),
    "unique-both": lambda t: t.unique(t.tensor([3, 1, 2, 3, 1, 5]), return_inverse=True, return_counts=True),
    "unique-nans-stay-distinct": lambda t: t.unique(t.tensor([NAN, 1.0, NAN, 1.0]), return_inverse=True,
                                                    return_counts=True),
    "unique-bool": lambda t: t.unique(t.tensor([True, False, True]), return_inverse=True, return_counts=True),
    "unique-zero-dim": lambda t: t.unique(t.tensor(5), return_inverse=True, return_counts=True),
    "unique-empty": lambda t: t.unique(t.empty(0, 3), return_inverse=True, return_counts=True),
    "unique-complex-refused": lambda t: t.unique(t.tensor([1j])),
    "unique-method": lambda t: t.tensor([2.0, 1.0, 2.0]).unique(return_counts=True),
    "unique-dim": lambda t: t.unique(t.tensor(ROWS), dim=0, return_inverse=True, return_counts=True),
    "unique-dim-1-not-contiguous": lambda t: t.unique(t.tensor([[1, 2], [1, 2], [0, 3]]), dim=1, return_inverse=True),
    "unique-dim-3d": lambda t: t.unique(t.tensor([[[1, 0], [2, 2]], [[1, 0], [2, 2]], [[0, 9], [9, 9]]]), dim=-3,
                                        return_counts=True),
    "unique-dim-bool": lambda t: t.unique(t.tensor([[True, False], [True, False]]), dim=0, return_inverse=True),
    "unique-dim-zero-dim-refused": lambda t: t.unique(t.tensor(3), dim=0),
    "unique-dim-empty-selected": lambda t: t.unique(t.empty(0, 3), dim=0, return_inverse=True, return_counts=True),
    "unique-dim-empty-other-refused": lambda t: t.unique(t.empty(2, 0), dim=0),
    "unique-dim-two-empty-refused": lambda t: t.unique(t.empty(0, 0), dim=0),
    "unique-dim-complex-refused": lambda t: t.unique(t.tensor([[1j]]), dim=0),
    "unique-dim-out-of-range": lambda t: t.unique(t.tensor(ROWS), dim=2),
    "consecutive": lambda t: t.unique_consecutive(t.tensor([1, 1, 2, 2, 3, 1, 1])),
    "consecutive-both": lambda t: t.unique_consecutive(t.tensor([[1, 1], [2, 1]]), return_inverse=True,
                                                       return_counts=True),
    "consecutive-nans": lambda t: t.unique_consecutive(t.tensor([NAN, NAN, 1.0]), return_counts=True),
    "consecutive-zero-dim": lambda t: t.unique_consecutive(t.tensor(3), return_inverse=True, return_counts=True),
    "consecutive-empty": lambda t: t.unique_consecutive(t.empty(0), return_inverse=True, return_counts=True),
    "consecutive-dim": lambda t: t.unique_consecutive(t.tensor(ROWS), dim=0, return_inverse=True,
                                                      return_counts=True),
    "consecutive-1d-dim": lambda t: t.unique_consecutive(t.tensor([1, 1, 2]), dim=0, return_counts=True),
    "consecutive-complex-refused": lambda t: t.unique_consecutive(t.tensor([1j, 1j])),
    "consecutive-method": lambda t: t.tensor([1, 1, 2]).unique_consecutive(return_inverse=True),
    "op-unique2-all-outputs": lambda t: t._unique2(t.tensor([[3, 1], [2, 3]])),
    "op-unique-dim-always-counts": lambda t: t.ops.aten.unique_dim(t.tensor(ROWS), 0),
    "op-unique-dim-consecutive": lambda t: t.ops.aten.unique_dim_consecutive(t.tensor(ROWS), 0, True, True),
    "op-unique2-out": lambda t: t.ops.aten._unique2.out(
        t.tensor([3, 1, 3]), True, True, True, out0=t.empty(0, dtype=t.long), out1=t.empty(0, dtype=t.long),
        out2=t.empty(0, dtype=t.long)),
    "op-unique2-out-dtype-refused": lambda t: t.ops.aten._unique2.out(
        t.tensor([3, 1, 3]), out0=t.empty(0), out1=t.empty(0, dtype=t.long), out2=t.empty(0, dtype=t.long)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_unique_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


@pytest.mark.parametrize("seed", range(4))
def test_random_slices_along_a_dim_give_torchs_values_inverse_and_counts(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 2, (12, 3, 2))
    for dim in (0, 1, 2):
        mine = dc.unique(dc.tensor(data), dim=dim, return_inverse=True, return_counts=True)
        theirs = torch.unique(torch.tensor(data), dim=dim, return_inverse=True, return_counts=True)
        assert [m.tolist() for m in mine] == [t.tolist() for t in theirs]


CALLS = {
    "unique": lambda t, x: t.unique(x),
    "unique-counts": lambda t, x: t.unique(x, return_counts=True),
    "unique-unsorted": lambda t, x: x.unique(sorted=False),
    "unique-dim": lambda t, x: t.unique(x, dim=0),
    "consecutive": lambda t, x: t.unique_consecutive(x),
    "consecutive-dim": lambda t, x: t.unique_consecutive(x, dim=0),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_operators_a_mode_sees_are_torchs(name):
    def run(t):
        x = t.tensor([3, 1, 2, 3, 1, 5])
        return mode_calls(t, lambda: CALLS[name](t, x))

    assert run(dc) == run(torch)


@pytest.mark.parametrize("call", [
    lambda t, x: t.unique(x), lambda t, x: t.unique(x, dim=0), lambda t, x: t.unique_consecutive(x),
    lambda t, x: t.ops.aten.unique_dim_consecutive(x, 0)[0],
])
def test_the_derivatives_are_not_implemented_as_torchs(call):
    def run(t):
        y = call(t, t.tensor([2.0, 1.0, 2.0], requires_grad=True))
        try:
            y.sum().backward()
        except NotImplementedError as e:
            return type(y.grad_fn).__name__, str(e)
        return type(y.grad_fn).__name__, None

    assert run(dc) == run(torch)
