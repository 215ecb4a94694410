"""Tracing costs nothing when off: the call path after a trace is the path before it.

See Note [Zero-cost tracing] in dispatchcore/trace.py. The first case times `add` on (10,) on
tables that were never traced; the second times it again after a trace was switched on and off
(so every table was rebuilt twice); the third while a trace is recording, for scale.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc
from dispatchcore import operator as _operator
from dispatchcore.operator import OperatorHandle


@pytest.fixture(scope="module")
def operands():
    dc.load_backends()
    return dc.ones(10), dc.ones(10)


def _check(result):
    assert result.tolist() == [2.0] * 10


@pytest.mark.benchmark(group="trace: zero cost when off")
def test_add_call_path_before_any_trace(benchmark, operands):
    a, b = operands
    add = dc.ops.aten.add.Tensor
    assert _operator.slot_wrapper is None
    _check(benchmark(add, a, b))


@pytest.mark.benchmark(group="trace: zero cost when off")
def test_add_call_path_after_a_trace_was_switched_off(benchmark, operands):
    a, b = operands
    add = dc.ops.aten.add.Tensor
    original_call = OperatorHandle.__call__
    with dc.trace() as t:
        add(a, b)
    assert t.find("aten::add.Tensor")
    # the plain tables and call path are back: nothing of the tracer is left on the hot path
    assert _operator.slot_wrapper is None and OperatorHandle.__call__ is original_call
    assert not any(getattr(slot[0], "__wrapped__", None) for slot in add._dispatch[1] if slot)
    _check(benchmark(add, a, b))


@pytest.mark.benchmark(group="trace: zero cost when off")
def test_add_call_path_while_recording(benchmark, operands):
    a, b = operands
    add = dc.ops.aten.add.Tensor
    with dc.trace():
        _check(benchmark(add, a, b))
