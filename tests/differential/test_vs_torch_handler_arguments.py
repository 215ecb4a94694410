"""What a dispatch mode's handler receives: torch's boxing drops defaulted arguments (modes.py, Note
[Defaults a handler does not see]); checked call by call against torch 2.13."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dispatchcore as dc  # noqa: E402
from tests.differential._observers import recording_mode  # noqa: E402

pytestmark = pytest.mark.differential

PROGRAMS = [
    "x.sum(0)", "x.sum(0, keepdim=True)", "x.sum(0, dtype=lib.float64)", "x.mean(0)", "x.std(0)", "x.max(0)",
    "x.cumsum(0)", "x.argmax()", "x.topk(2)", "x.to(lib.float64)", "x.clone()", "x.contiguous()",
    "x.softmax(0)", "x.add(x, alpha=1)", "x.add(x, alpha=2)", "x.expand(3, 4)", "x.transpose(0, 1)",
    "lib.ops.aten.sum.dim_IntList(x, [0], False)", "lib.ops.aten.sum.dim_IntList(x, [0], True)",
    "x.clamp(min=0)", "x.flatten()", "x.sort()", "x.var(0, unbiased=False)", "x.norm()",
]


def _summary(value: Any) -> Any:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return ("T", tuple(value.shape))
    if isinstance(value, (list, tuple)):
        return [_summary(v) for v in value]
    if isinstance(value, (bool, int, float)) or value is None:
        return (type(value).__name__, value)
    return str(value).rpartition(".")[2]  # dtype, layout, memory format


def _calls(lib: Any, program: str) -> list[Any]:
    calls: list[Any] = []
    mode = recording_mode(lib, lambda func, types, args, kwargs: calls.append(
        (str(func), _summary(args), {k: _summary(v) for k, v in kwargs.items()})))
    with mode:
        eval(program, {"x": lib.ones(3, 4), "lib": lib})
    return calls


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_handler_receives_torchs_arguments_without_the_defaults(program):
    assert _calls(dc, program) == _calls(torch, program)
