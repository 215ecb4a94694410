"""``cross`` and ``linalg_cross`` against torch 2.13: products, dims, broadcasting, out=, meta, errors, gradients.

``cross`` is CompositeImplicitAutograd (a default dim, then ``linalg_cross``), so the operators a
dispatch mode sees are compared too; its deprecation warning is given once per process, as torch's.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

A_ROWS = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
B_ROWS = [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def _ones(t, *shape, dtype=None, device="cpu"):
    return t.ones(*shape, dtype=dtype, device=device)


CASES = {
    "linalg": lambda t: t.ops.aten.linalg_cross(t.tensor(A_ROWS), t.tensor(B_ROWS)),
    "linalg-dim-0-transposed": lambda t: t.ops.aten.linalg_cross(t.tensor(A_ROWS).t(), t.tensor(B_ROWS).t(), dim=0),
    "linalg-broadcast": lambda t: t.ops.aten.linalg_cross(t.tensor(A_ROWS), t.tensor([[0.0, 0.0, 2.0]])),
    "linalg-int-wraps": lambda t: t.ops.aten.linalg_cross(t.tensor([2 ** 62, 3, 1]), t.tensor([4, 5, 6])),
    "linalg-half": lambda t: t.ops.aten.linalg_cross(t.tensor(A_ROWS, dtype=t.half), t.tensor(B_ROWS, dtype=t.half)),
    "linalg-ranks-differ": lambda t: t.ops.aten.linalg_cross(t.tensor(A_ROWS), t.tensor(B_ROWS[0])),
    "linalg-length-not-3": lambda t: t.ops.aten.linalg_cross(t.tensor(A_ROWS), _ones(t, 2, 4)),
    "linalg-no-broadcast": lambda t: t.ops.aten.linalg_cross(_ones(t, 2, 3), _ones(t, 4, 3)),
    "linalg-dim-length": lambda t: t.ops.aten.linalg_cross(_ones(t, 3, 2), _ones(t, 3, 2), dim=1),
    "linalg-dim-out-of-range": lambda t: t.ops.aten.linalg_cross(_ones(t, 3), _ones(t, 3), dim=3),
    "linalg-zero-dim": lambda t: t.ops.aten.linalg_cross(t.tensor(1.0), t.tensor(1.0)),
    "linalg-dtypes-differ": lambda t: t.ops.aten.linalg_cross(_ones(t, 3), _ones(t, 3, dtype=t.double)),
    "linalg-bool-refused": lambda t: t.ops.aten.linalg_cross(_ones(t, 3, dtype=t.bool), _ones(t, 3, dtype=t.bool)),
    "linalg-out": lambda t: t.ops.aten.linalg_cross.out(t.tensor(A_ROWS), t.tensor(B_ROWS), out=t.empty(0)),
    "linalg-out-dtype-refused": lambda t: t.ops.aten.linalg_cross.out(_ones(t, 3), _ones(t, 3),
                                                                      out=t.empty(0, dtype=t.double)),
    "cross-dim": lambda t: t.cross(t.tensor(A_ROWS), t.tensor(B_ROWS), dim=1),
    "cross-negative-dim": lambda t: t.cross(t.tensor(A_ROWS), t.tensor(B_ROWS), -1),
    "cross-method": lambda t: t.tensor(A_ROWS).cross(t.tensor(B_ROWS), dim=1),
    "cross-out": lambda t: t.cross(t.tensor(A_ROWS), t.tensor(B_ROWS), dim=1, out=t.empty(0)),
    "cross-dim-of-length-2": lambda t: t.cross(_ones(t, 2, 2), _ones(t, 2, 2), 0),
    "meta": lambda t: t.ops.aten.linalg_cross(_ones(t, 2, 1, 3, device="meta"), _ones(t, 5, 3, device="meta")
                                              .expand(2, 5, 3)),
    "meta-no-broadcast": lambda t: t.ops.aten.linalg_cross(_ones(t, 2, 1, 3, device="meta"),
                                                           _ones(t, 4, 5, 3, device="meta")),
    "meta-dtypes-not-checked": lambda t: t.ops.aten.linalg_cross(_ones(t, 3, device="meta"),
                                                                 _ones(t, 3, dtype=t.double, device="meta")),
    "meta-length-not-3": lambda t: t.ops.aten.linalg_cross(_ones(t, 3, 2, device="meta"),
                                                           _ones(t, 3, 2, device="meta"), dim=1),
    "meta-out-casts-safely": lambda t: t.ops.aten.linalg_cross.out(
        _ones(t, 3, device="meta"), _ones(t, 3, device="meta"), out=t.empty(0, dtype=t.double, device="meta")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cross_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


def test_without_a_dim_the_first_of_size_3_is_taken_and_the_warning_comes_once_per_process():
    def run(t):
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = t.cross(t.tensor(A_ROWS), t.tensor(B_ROWS))
            second = t.cross(_ones(t, 3, 3), t.eye(3)).tolist()
            try:
                t.cross(_ones(t, 2, 2), _ones(t, 2, 2))
            except RuntimeError as e:
                second = (second, str(e))
        texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        return first.tolist(), second, texts

    mine, theirs = run(dc), run(torch)
    assert mine[:2] == theirs[:2]
    assert len(mine[2]) <= 1 and len(theirs[2]) <= 1  # once per process: an earlier test may have had it
    assert not mine[2] or mine[2][0].startswith("Using torch.cross without specifying the dim arg is deprecated.")


def test_the_operators_a_mode_sees_are_torchs():
    def run(t):
        x, y = t.tensor(A_ROWS), t.tensor(B_ROWS[0])
        return mode_calls(t, lambda: (t.cross(x, y.expand(2, 3), dim=1), t.cross(x, y.expand(2, 3), -1)))

    assert run(dc) == run(torch)


def test_the_gradients_and_their_calls_as_torchs():
    def run(t):
        x = t.tensor(A_ROWS, requires_grad=True)
        y = t.tensor(B_ROWS[0], requires_grad=True)
        z = t.cross(x, y.expand(2, 3), dim=1)
        seen = mode_calls(t, lambda: z.backward(t.tensor([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]])))
        return type(z.grad_fn).__name__, seen, x.grad.tolist(), y.grad.tolist()

    mine, theirs = run(dc), run(torch)
    assert mine[:2] == theirs[:2]
    np.testing.assert_allclose(mine[2], theirs[2])
    np.testing.assert_allclose(mine[3], theirs[3])
