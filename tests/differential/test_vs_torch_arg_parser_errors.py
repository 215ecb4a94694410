"""The binding's "invalid combination of arguments" messages, torch 2.13 against dispatchcore, word for word.

torch builds them in ``format_invalid_args`` (torch/csrc/utils/invalid_arguments.cpp) by
re-reading each printed signature: a signature explains itself only when it lists exactly as
many arguments as were given (``*`` counts, ``()`` counts one); arguments with a default never
match by type or by keyword (their printed ``int dim = -1`` reads as an argument named ``-1``);
keywords are listed in the order a libstdc++ ``unordered_map`` iterates them, and with no positional
argument each one keeps its trailing ", " (``got (dim=float, )``). Each case runs the
same call on both libraries and compares the whole message.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

CASES: dict[str, Any] = {
    "argsort-bool-dim": lambda m, x: m.argsort(x, True),
    "argsort-float-dim": lambda m, x: m.argsort(x, 1.5),
    "argsort-all-positional": lambda m, x: m.argsort(x, 1.5, False),
    "argsort-defaulted-keywords": lambda m, x: m.argsort(x, dim=1.5, descending=False),
    "argsort-stable-none": lambda m, x: m.argsort(x, stable=None),
    "argsort-keyword-order": lambda m, x: m.argsort(x, stable=None, dim="a"),
    "argsort-out-without-stable": lambda m, x: m.argsort(x, 0, out=m.empty(0, dtype=m.int64)),
    "argsort-out-none": lambda m, x: m.argsort(x, "a", out=None),
    "method-argsort-bool": lambda m, x: x.argsort(True),
    "method-argsort-keywords-only": lambda m, x: x.argsort(dim=1.5, descending=False),
    "sort-three-keywords": lambda m, x: m.sort(x, stable=1.5, dim=(1, 2), descending=[1]),
    "sort-all-positional": lambda m, x: m.sort(x, 1.5, False),
    "method-sort": lambda m, x: x.sort(1.5, False),
    "method-sort-one": lambda m, x: x.sort(1.5),
    "method-sort-three": lambda m, x: x.sort(0, True, False),
    "max-tuple-keepdim": lambda m, x: m.max(x, (1,), True),
    "max-float-keepdim": lambda m, x: m.max(x, 1.5, True),
    "max-keywords": lambda m, x: m.max(x, dim=1.5, keepdim=True),
    "max-out-none": lambda m, x: m.max(x, "a", out=None),
    "method-max-str": lambda m, x: x.max("a"),
    "min-str-keepdim": lambda m, x: m.min(x, 1, "a"),
    "view-list-of-float": lambda m, x: x.view([1.5]),
    "view-str": lambda m, x: x.view("a"),
    "var-str": lambda m, x: m.var(x, "a"),
    "var-dim-str": lambda m, x: m.var(x, 0, "a"),
    # a given value's type is named by its tp_name: numpy's scalars print with their module
    "argsort-numpy-float": lambda m, x: m.argsort(x, np.float64(1.5), False),
    "argsort-numpy-keyword": lambda m, x: m.argsort(x, dim=np.float64(1.5), descending=False),
    "view-numpy-float": lambda m, x: x.view(np.float32(1.5)),
}


# the shape family's bindings (``native.Bindings``): a str or a bool where torch wants ints
SHAPE_CASES: dict[str, Any] = {
    "flip-str": lambda m, x: m.flip(x, "a"), "method-flip-bool": lambda m, x: x.flip(True),
    "method-flip-str": lambda m, x: x.flip("a"), "method-flip-vararg-str": lambda m, x: x.flip(0, "a"),
    "roll-str": lambda m, x: m.roll(x, "a"), "method-roll-bool": lambda m, x: x.roll(True),
    "method-roll-dims-str": lambda m, x: x.roll(1, "a"),
    "method-repeat-bool": lambda m, x: x.repeat(True, 1), "method-repeat-str": lambda m, x: x.repeat("a"),
    "chunk-str": lambda m, x: m.chunk(x, "a"), "method-chunk-bool": lambda m, x: x.chunk(True),
    "chunk-dim-object": lambda m, x: m.chunk(x, 2, object()),
    "method-narrow-str": lambda m, x: x.narrow(0, "a", 1), "method-narrow-bool": lambda m, x: x.narrow(0, True, 1),
    "narrow-str-dim": lambda m, x: m.narrow(x, "a", 0, 1),
    "method-flatten-str": lambda m, x: x.flatten("a"), "flatten-bool": lambda m, x: m.flatten(x, True),
    "flatten-too-many": lambda m, x: m.flatten(x, 0, 1, 2),
    "tril-str": lambda m, x: m.tril(x, "a"), "method-triu-bool": lambda m, x: x.triu(True),
    "method-tril_-str": lambda m, x: x.tril_("a"), "tril-too-many": lambda m, x: m.tril(x, 0, 1),
    "movedim-str": lambda m, x: m.movedim(x, "a", 0), "method-movedim-bool": lambda m, x: x.movedim(True, 0),
    "moveaxis-object": lambda m, x: m.moveaxis(x, object(), object()),
    "method-swapaxes-str": lambda m, x: x.swapaxes("a", 0), "swapdims-bool": lambda m, x: m.swapdims(x, True, 0),
    "chunk-numpy-float": lambda m, x: m.chunk(x, np.float64(2)),
    "chunk-numpy-keyword": lambda m, x: m.chunk(x, chunks=np.float64(2)),
    "method-flip-numpy-element": lambda m, x: x.flip([0, np.float64(1)]),
    "method-flip-numpy-first": lambda m, x: x.flip([np.float64(1)]),
    "zeros-numpy-vararg": lambda m, x: m.zeros(2, np.float32(1)),
    # the fast view methods parse only when the call fails (Note [Method arguments])
    "method-transpose-str": lambda m, x: x.transpose("a", 0), "method-unsqueeze-str": lambda m, x: x.unsqueeze("a"),
    "method-select-str": lambda m, x: x.select(0, "a"), "method-permute-str": lambda m, x: x.permute("a"),
    "method-permute-object": lambda m, x: x.permute(object()), "method-expand-str": lambda m, x: x.expand("a"),
    "method-squeeze-str": lambda m, x: x.squeeze("a"), "method-squeeze-keyword": lambda m, x: x.squeeze(dim=1.5),
    "method-permute-both": lambda m, x: x.permute(1, 0, dims=[1, 0]),
    "method-permute-bad-keyword": lambda m, x: x.permute(dim=[1, 0]),
    "method-expand-both": lambda m, x: x.expand(2, 3, size=[2, 3]),
    "method-expand-str-implicit": lambda m, x: x.expand("a", implicit=True),
    "method-transpose-one": lambda m, x: x.transpose(0, "a"),
    # the varargs form of an int list is taken only when its first value is an int
    "zeros-str-first": lambda m, x: m.zeros("a", 2), "ones-float-first": lambda m, x: m.ones(1.5, 2),
    "method-flip-bool-first": lambda m, x: x.flip(True, 1), "method-repeat-bool-first": lambda m, x: x.repeat(True, 1),
}


def _message(fn: Any) -> str:
    with pytest.raises(TypeError) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_combination_message_is_torchs(name):
    x, y = torch.tensor([3.0, 1.0, 2.0]), dc.tensor([3.0, 1.0, 2.0])
    assert _message(lambda: CASES[name](dc, y)) == _message(lambda: CASES[name](torch, x))


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_shape_binding_refuses_as_torchs(name):
    x, y = torch.ones(2, 3), dc.ones(2, 3)
    assert _message(lambda: SHAPE_CASES[name](dc, y)) == _message(lambda: SHAPE_CASES[name](torch, x))


def test_an_int_list_unpacks_a_later_bool_as_an_int_as_torch():
    """Only an int list's first value is checked strictly; the others unpack through ``__index__``."""
    assert tuple(dc.zeros(2, True).shape) == tuple(torch.zeros(2, True).shape) == (2, 1)
    assert tuple(dc.zeros([2, True]).shape) == tuple(torch.zeros([2, True]).shape) == (2, 1)
    assert dc.ones(2, 3).flip(1, False).tolist() == torch.ones(2, 3).flip(1, False).tolist()


def test_view_methods_keep_torchs_keywords():
    for lib in (torch, dc):
        x = lib.ones(1, 3)
        assert tuple(x.expand(size=[2, 3], implicit=False).shape) == (2, 3)
        assert tuple(x.permute(dims=[1, 0]).shape) == (3, 1)
        assert tuple(x.transpose(dim0=0, dim1=1).shape) == (3, 1)
        assert tuple(x.unsqueeze(dim=0).shape) == (1, 1, 3)
        assert tuple(x.select(dim=1, index=2).shape) == (1,)
