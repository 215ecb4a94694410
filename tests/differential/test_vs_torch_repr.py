"""``repr`` of tensors as torch 2.13 prints them, ``torch.`` read as ``dispatchcore.``.

Tensors whose elements show their kind (an int64 or bool tensor with elements) leave the dtype
out; meta tensors and empty tensors have no elements to show it, so they name every dtype but
the default floating one, and an empty tensor prints ``[]`` with its size unless it is ``(0,)``.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

CASES = {
    "float": lambda t: t.tensor([1.5, 2.0]),
    "int64": lambda t: t.tensor([1, 2]),
    "bool": lambda t: t.tensor([True, False]),
    "int32": lambda t: t.tensor([1, 2], dtype=t.int32),
    "float64": lambda t: t.tensor([1.0], dtype=t.float64),
    "requires-grad": lambda t: t.ones(2, requires_grad=True),
    "empty-float": lambda t: t.zeros(0),
    "empty-int64": lambda t: t.zeros(0, dtype=t.int64),
    "empty-bool": lambda t: t.zeros(0, dtype=t.bool),
    "empty-2d-int64": lambda t: t.zeros(2, 0, dtype=t.int64),
    "empty-2d-float": lambda t: t.zeros(0, 3),
    "empty-float16": lambda t: t.zeros(0, 3, dtype=t.float16),
    "empty-requires-grad": lambda t: t.zeros(0, requires_grad=True),
    "meta-float": lambda t: t.zeros(2, 3, device="meta"),
    "meta-int64": lambda t: t.zeros(2, dtype=t.int64, device="meta"),
    "meta-bool": lambda t: t.zeros(2, dtype=t.bool, device="meta"),
    "meta-int32": lambda t: t.zeros(2, dtype=t.int32, device="meta"),
    "meta-complex64": lambda t: t.zeros(2, dtype=t.complex64, device="meta"),
    "meta-empty-int64": lambda t: t.zeros(0, dtype=t.int64, device="meta"),
    "tril_indices-on-meta": lambda t: t.tril_indices(3, 3, device="meta"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_torch(name):
    assert repr(CASES[name](dc)) == repr(CASES[name](torch)).replace("torch.", "dispatchcore.")


@pytest.mark.parametrize("name", ["meta-float", "meta-int64", "empty-float", "float64"])
def test_repr_follows_the_default_dtype_as_torch(name):
    def under_float64(lib):
        before = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            return repr(CASES[name](lib)), repr(lib.zeros(0, dtype=lib.float32)), repr(lib.zeros(2, device="meta"))
        finally:
            lib.set_default_dtype(before)

    assert under_float64(dc) == tuple(r.replace("torch.", "dispatchcore.") for r in under_float64(torch))
