"""Calls that take the fast binding and dispatch paths of this session, against torch 2.13.

Note [Binding plans] binds a Python binding's call once per classes of its values; Note [Keyword
calls] and Note [Optional Tensors on the fast path] skip the schema binder for keyword and
tensor-list calls. Each sequence below calls one function several times with values of the same
classes but different meanings (a 0-d tensor where a wider one was, an out-of-range dim, an
overflowing size), so a plan or a memo made by an earlier call must not decide a later one:
every outcome (result or error) must be torch's.
"""

from __future__ import annotations

from typing import Any

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def _outcome(call: Any) -> Any:
    try:
        r = call()
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc).split("\n")[0]
    if isinstance(r, (tuple, list)):
        return [_outcome(lambda v=v: v) for v in r]
    if hasattr(r, "tolist"):
        return str(r.dtype).rpartition(".")[2], tuple(r.shape), tuple(r.stride()), r.tolist()
    return r


def _x(m: Any) -> Any:
    return m.arange(12, dtype=m.float32).reshape(3, 4)


SEQUENCES: dict[str, list[Any]] = {
    "max-dim-then-out-of-range": [lambda m: _x(m).max(dim=1), lambda m: _x(m).max(dim=0), lambda m: _x(m).max(dim=5)],
    "add-wide-then-0d-other": [lambda m: m.add(_x(m), _x(m)), lambda m: m.add(_x(m), m.tensor(2)),
                               lambda m: m.add(_x(m), m.ones(4, dtype=m.float64))],
    "where-then-0d": [lambda m: m.where(_x(m) > 5, _x(m), -_x(m)), lambda m: m.where(_x(m) > 5, _x(m), m.tensor(0.5))],
    "new-zeros-varargs-then-overflow": [lambda m: _x(m).new_zeros(2, 3), lambda m: _x(m).new_zeros(4),
                                        lambda m: _x(m).new_zeros(2**63, 1), lambda m: _x(m).new_zeros(-1, 2),
                                        lambda m: _x(m).new_ones(-1), lambda m: _x(m).new_full((-2,), 1.0),
                                        lambda m: _x(m).new_full((2,), 1e40, dtype=m.float16)],
    "zeros-then-dtype-keyword": [lambda m: m.zeros(2, 3), lambda m: m.zeros(2, 3, dtype=m.int64),
                                 lambda m: m.zeros(2, 3, dtype=m.float64).stride()],
    "flatten-then-bad-dims": [lambda m: _x(m).flatten(), lambda m: _x(m).flatten(0, 1), lambda m: _x(m).flatten(1, 0),
                              lambda m: _x(m).flatten(0, 7)],
    "cumsum-then-dtype": [lambda m: _x(m).cumsum(dim=1), lambda m: _x(m).cumsum(dim=0, dtype=m.float64)],
    "add-alpha-keyword": [lambda m: m.ops.aten.add.Tensor(_x(m), _x(m), alpha=2),
                          lambda m: m.ops.aten.add.Tensor(_x(m), 3, alpha=2),
                          lambda m: m.ops.aten.add_.Tensor(_x(m), _x(m), alpha=0.5),
                          lambda m: m.ops.aten.add.Tensor(_x(m).long(), _x(m).long(), alpha=0.5)],
    "out-keyword": [lambda m: m.ops.aten.add.out(_x(m), _x(m), alpha=2, out=m.empty(3, 4)),
                    lambda m: m.ops.aten.abs.out(-_x(m), out=m.empty(0)),
                    lambda m: m.ops.aten.abs.out(-_x(m), out=m.empty(0, dtype=m.int64))],
    "cat-lists": [lambda m: m.ops.aten.cat.default([_x(m), _x(m)]), lambda m: m.ops.aten.cat.default((_x(m), _x(m)), 1),
                  lambda m: m.ops.aten.cat.default([_x(m), m.ones(2, 5)]), lambda m: m.ops.aten.cat.default([])],
    "index-one-int64-then-mask": [lambda m: _x(m)[m.tensor([2, 0, -1])], lambda m: _x(m)[m.tensor([[1], [2]])],
                                  lambda m: _x(m)[_x(m) > 6], lambda m: _x(m)[m.tensor([True, False, True])],
                                  lambda m: _x(m)[m.tensor([3])]],
    "to-dtype": [lambda m: _x(m).to(m.float64), lambda m: _x(m).t().to(m.int32), lambda m: _x(m)[:1].to(m.float16)],
    "unsqueeze": [lambda m: _x(m).unsqueeze(0), lambda m: _x(m).t().unsqueeze(1), lambda m: _x(m)[:, ::2].unsqueeze(2)],
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_each_call_of_a_sequence_matches_torch(name):
    for _ in range(2):  # the second pass runs on plans and memos the first made
        for i, call in enumerate(SEQUENCES[name]):
            assert _outcome(lambda c=call: c(dc)) == _outcome(lambda c=call: c(torch)), (name, i)


@pytest.mark.parametrize("call", ["x.new_zeros(2, 3)", "x.new_ones(2)", "x.new_full((2,), 3.0)", "x.new_empty(2)"])
def test_new_factories_make_torchs_inner_calls(call):
    # torch 2.13's new_zeros/new_ones/new_full are new_empty, then zero_ or fill_: its profiler
    # lists the aten calls a dispatchcore trace shows as hops
    tx, dx = torch.ones(2), dc.ones(2)
    with torch.profiler.profile() as prof:
        eval(call, {"x": tx})
    expected = [e.name for e in prof.events()]
    with dc.trace() as t:
        eval(call, {"x": dx})
    assert [h.op.partition(".")[0] for h in t.hops() if h.kind == "call"] == expected
