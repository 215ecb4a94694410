"""Bad input: dispatchcore raises torch's exception types and texts, without torch installed.

Runs each case of the corpus (``tests/_bad_inputs.py``) with ``t = dispatchcore`` and checks it
against the expectation recorded from torch 2.13 (``test_vs_torch_bad_inputs.py`` re-checks the
recording against torch itself): the same exception family, the key words of torch's message,
and no internal exception chained. Known differences are strict xfails (``KNOWN_OPEN``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import dispatchcore as dc

_spec = importlib.util.spec_from_file_location("_bad_inputs", Path(__file__).parents[1] / "_bad_inputs.py")
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


@pytest.mark.parametrize("case", corpus.params(pytest))
def test_bad_input_raises_what_torch_raises(case: tuple[str, Any, Any, tuple[str, ...]]) -> None:
    for _ in ("cold", "warm"):  # the first call of each operator and a memoised one
        corpus.cold_memos(dc) if _ == "cold" else None
        exc = corpus.run(corpus.programs(case)[1], dc, dc.Library)
        corpus.check(case, case[2], exc, "dispatchcore")


def test_factories_take_every_torch_keyword() -> None:
    """dtype, layout, device, pin_memory, requires_grad, memory_format, generator and out=."""
    common = dict(dtype=dc.float32, layout=dc.strided, device="cpu", pin_memory=False)
    assert dc.empty((2, 2), memory_format=dc.contiguous_format, requires_grad=True, **common).requires_grad
    assert dc.zeros(2, **common).tolist() == [0.0, 0.0]
    assert dc.ones(2, **common).tolist() == [1.0, 1.0]
    assert dc.full((2,), 3.0, **common).tolist() == [3.0, 3.0]
    assert dc.arange(0, 3, 1, **common).tolist() == [0.0, 1.0, 2.0]
    assert dc.linspace(0, 1, 3, **common).tolist() == [0.0, 0.5, 1.0]
    assert dc.rand(2, generator=None, **common).shape == (2,)
    assert dc.randn(2, generator=None, **common).shape == (2,)
    assert dc.empty_strided((2, 3), (1, 2), **common).stride() == (1, 2)
    x = dc.ones(1, 2, 3, 4)
    for like in (dc.empty_like, dc.zeros_like, dc.ones_like, dc.rand_like, dc.randn_like):
        y = like(x, memory_format=dc.channels_last, **common)
        assert y.shape == x.shape
    assert dc.empty_like(x, memory_format=dc.channels_last).stride() == (24, 1, 8, 2)
    assert dc.full_like(x, 2.0, memory_format=dc.preserve_format, **common).shape == x.shape
    assert dc.tensor([1.0], dtype=dc.float64, device="cpu", pin_memory=False).dtype is dc.float64
    out = dc.empty(3)
    assert dc.arange(3, out=out) is out and out.tolist() == [0.0, 1.0, 2.0]
    assert dc.zeros(2, dtype=float).dtype is dc.float64 and dc.zeros(2, dtype=int).dtype is dc.int64


def test_layout_and_memory_format_objects_print_like_torch() -> None:
    assert repr(dc.strided) == "dispatchcore.strided" and str(dc.channels_last) == "dispatchcore.channels_last"
    assert type(dc.strided).__name__ == "layout" and type(dc.preserve_format).__name__ == "memory_format"
    assert isinstance(dc.sparse_coo, dc.layout) and isinstance(dc.contiguous_format, dc.memory_format)
    import pickle

    assert pickle.loads(pickle.dumps(dc.channels_last)) is dc.channels_last


def test_unmodelled_layout_is_refused_by_name() -> None:
    with pytest.raises(NotImplementedError, match="layout=dispatchcore.sparse_coo is not modelled"):
        dc.zeros(2, layout=dc.sparse_coo)
