"""``isin`` against torch 2.13: its three overloads, promotion, NaN, both CPU kernels, out=, meta, errors.

torch picks a kernel by size (compare all, or sort): with ``assume_unique`` the sorting one answers
as torch's does even for repeated elements, so those cases are compared too.
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
    "tensors": lambda t: t.isin(t.tensor([1, 2, 3, 4]), t.tensor([2, 4, 6])),
    "invert": lambda t: t.isin(t.tensor([1, 2, 3, 4]), t.tensor([2, 4]), invert=True),
    "promoted-to-float": lambda t: t.isin(t.tensor([1, 2, 3]), t.tensor([2.0, 2.5])),
    "float-elements-int-tests": lambda t: t.isin(t.tensor([1.5, 2.0]), t.tensor([2, 3])),
    "int64-vs-float32-compares-in-float32": lambda t: t.isin(t.tensor([2 ** 24 + 1]), t.tensor([2.0 ** 24])),
    "nan-never-found": lambda t: t.isin(t.tensor([NAN, 1.0]), t.tensor([NAN, 1.0])),
    "nan-sorting-kernel": lambda t: t.isin(t.tensor([NAN, 1.0]), t.tensor([NAN] + list(range(100)), dtype=t.float)),
    "sorting-kernel": lambda t: t.isin(t.arange(10), t.arange(0, 200, 3)),
    "sorting-kernel-invert": lambda t: t.isin(t.arange(10), t.arange(0, 200, 3), invert=True),
    "assume-unique-repeats-as-torch": lambda t: t.isin(t.tensor([1, 2, 3, 2, 5, 5]), t.arange(0, 100, 2),
                                                       assume_unique=True),
    "assume-unique-repeats-inverted": lambda t: t.isin(t.tensor([7, 7, 4]), t.arange(0, 100, 2), assume_unique=True,
                                                       invert=True),
    "tensor-scalar": lambda t: t.isin(t.tensor([1, 2]), 2),
    "tensor-float-scalar-promotes": lambda t: t.isin(t.tensor([1, 2]), 2.5),
    "scalar-tensor": lambda t: t.isin(2, t.tensor([1, 2])),
    "keywords": lambda t: t.isin(elements=t.tensor([1, 2]), test_elements=t.tensor([1])),
    "transposed-gives-contiguous": lambda t: t.isin(t.tensor([[1, 2], [3, 4]]).t(), t.tensor([[4]])),
    "empty-tests": lambda t: t.isin(t.tensor([1, 2]), t.tensor([], dtype=t.long)),
    "empty-elements": lambda t: t.isin(t.tensor([], dtype=t.long), t.tensor([1])),
    "zero-dim": lambda t: t.isin(t.tensor(3), t.tensor([3])),
    "half": lambda t: t.isin(t.tensor([1.0], dtype=t.half), t.tensor([1.0])),
    "bool-refused": lambda t: t.isin(t.tensor([True]), t.tensor([True])),
    "bool-test-scalar-refused": lambda t: t.isin(t.tensor([1]), True),
    "complex-refused": lambda t: t.isin(t.tensor([1.0]), t.tensor([1j])),
    "out": lambda t: t.isin(t.tensor([1, 2]), t.tensor([2]), out=t.empty(0, dtype=t.bool)),
    "out-resized-warns": lambda t: t.isin(t.tensor([1, 2]), t.tensor([2]), out=t.empty(3, dtype=t.bool)),
    "out-dtype-refused": lambda t: t.isin(t.tensor([1, 2]), t.tensor([2]), out=t.empty(0)),
    "meta": lambda t: t.isin(t.empty(2, 3, dtype=t.long, device="meta").t(), t.empty(4, dtype=t.long, device="meta")),
    "meta-scalar-tensor": lambda t: t.isin(2, t.empty(4, dtype=t.long, device="meta")),
    "meta-complex-refused": lambda t: t.isin(t.empty(2, device="meta"), 1j),
    "meta-bool-refused": lambda t: t.isin(t.empty(2, dtype=t.bool, device="meta"), t.empty(2, device="meta")),
    "meta-out-casts-safely": lambda t: t.isin(t.empty(2, device="meta"), t.empty(2, device="meta"),
                                              out=t.empty(0, device="meta")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_isin_matches_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


@pytest.mark.parametrize("seed", range(5))
def test_random_sizes_across_both_kernels_match_torch(seed):
    rng = np.random.default_rng(seed)
    elements = rng.integers(0, 30, int(rng.integers(1, 60)))
    tests = rng.integers(0, 30, int(rng.integers(0, 60)))
    for assume_unique in (False, True):
        for invert in (False, True):
            mine = dc.isin(dc.tensor(elements), dc.tensor(tests), assume_unique=assume_unique, invert=invert)
            theirs = torch.isin(torch.tensor(elements), torch.tensor(tests), assume_unique=assume_unique,
                                invert=invert)
            assert mine.tolist() == theirs.tolist()


def test_the_operators_a_mode_sees_are_torchs():
    def run(t):
        x = t.tensor([1, 2])
        return mode_calls(t, lambda: (t.isin(x, 2), t.isin(2, x), t.isin(x, x, invert=True),
                                      t.isin(x, x, assume_unique=True)))

    assert run(dc) == run(torch)


def test_the_result_never_requires_grad():
    def run(t):
        return t.isin(t.tensor([1.0, 2.0], requires_grad=True), t.tensor([1.0])).requires_grad

    assert run(dc) is run(torch) is False
