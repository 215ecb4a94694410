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
}


def _message(fn: Any) -> str:
    with pytest.raises(TypeError) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_combination_message_is_torchs(name):
    x, y = torch.tensor([3.0, 1.0, 2.0]), dc.tensor([3.0, 1.0, 2.0])
    assert _message(lambda: CASES[name](dc, y)) == _message(lambda: CASES[name](torch, x))
