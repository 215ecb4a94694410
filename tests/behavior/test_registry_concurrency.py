"""Threads that define, impl, look up and destroy operators while other threads call operators.

Registrar threads each make operators in namespaces of their own (an impl before its def, two
overloads, kernels at CPU and Autograd), look them up every way the registry offers
(``dc.ops.<ns>.<op>``, ``operator_names()``, ``overloads()``, ``operators()``, ``find_op``,
``dump_table``/``dump_state``), call them, and destroy them; one more thread registers and removes
a global fallback, which rebuilds every operator's table. Meanwhile caller threads run ``aten``
operators and a custom operator on tensors. Bounded in time; afterwards no thread may have raised,
every result must have been right, and the registry must be as it was (the same operator names,
the same tables for every ``aten`` operator).

When the last registration of an operator goes, torch 2.13 removes its entry: ``_dispatch_dump``
prints ``""`` and ``_dispatch_get_all_op_names()`` is back to its old length (checked live: fifty
define/impl/destroy rounds in fresh namespaces leave no entry; ``torch.ops`` keeps its namespace
objects, as ``dc.ops`` does). The last test asks the same of dispatchcore's registry, so that a
process that makes and destroys operators in fresh namespaces (a test suite, a notebook) keeps a
registry of constant size: a handle kept for a gone operator still holds its computed table.
"""

from __future__ import annotations

import itertools
import sys
import threading
import traceback

import pytest

import dispatchcore as dc

RUN_SECONDS = 1.5
_uid = itertools.count()


@pytest.fixture(autouse=True)
def _racy_and_quiet(monkeypatch):
    """Switch threads often; the once-per-process override warning stays unspent."""
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)
    dispatcher = dc.get_dispatcher()
    warned = dispatcher._warned_override
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)
    dispatcher._warned_override = warned


def run_for(seconds: float, workers: list) -> None:
    """Run each ``worker(stop)`` in a thread until ``stop`` is set after ``seconds``; a thread that
    fails ends, the others run on; report every distinct failure with its first traceback."""
    stop = threading.Event()
    failures: list[str] = []

    def guard(worker):
        def run():
            try:
                worker(stop)
            except BaseException:  # noqa: BLE001 - reported to the test; the others run on
                failures.append(traceback.format_exc())
        return run

    threads = [threading.Thread(target=guard(w), daemon=True) for w in workers]
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    distinct = {f.strip().splitlines()[-1]: f for f in failures}
    assert not failures, f"{len(failures)} thread(s) failed:\n" + "\n".join(distinct.values())


def registry_snapshot() -> tuple[list[str], dict[str, str]]:
    dispatcher = dc.get_dispatcher()
    names = dispatcher.operator_names()
    return names, {name: dc.dump_table(name) for name in names if name.startswith("aten::")}


def empty_handles() -> int:
    """Handles with neither schema nor kernels: torch keeps no entry for such an operator."""
    with dc.get_dispatcher()._lock:
        return sum(1 for op in dc.get_dispatcher()._ops.values() if op.schema is None and not op._kernels)


def values(t) -> list[float]:
    return [float(v) for v in t.tolist()]


# --- the workers ---------------------------------------------------------------------------------
def registrar(tid: int, rounds: list[int], *, impl_before_def: bool):
    """Make, use and destroy operators in a fresh namespace per round. With ``impl_before_def``,
    ``g``'s CPU kernel is registered before its def and outlives it, and what is left after the
    destroys is checked against torch (``ops.<ns>.f`` raises AttributeError; the dumps show a
    schema-less ``g``, then ``""``)."""
    dispatcher = dc.get_dispatcher()

    def work(stop: threading.Event) -> None:
        x, y = dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0])
        while not stop.is_set():
            ns = f"regconc{tid}x{next(_uid)}"
            libs = []
            try:
                early = dc.Library(ns, "FRAGMENT")
                libs.append(early)
                if impl_before_def:
                    early.impl("g", lambda x: dc.ops.aten.mul.Scalar(x, 5.0), "CPU")
                lib = dc.Library(ns, "DEF")
                libs.append(lib)
                lib.define("f(Tensor x) -> Tensor")
                lib.define("f.two(Tensor x, Tensor y) -> Tensor")
                lib.define("g(Tensor x) -> Tensor")
                if not impl_before_def:
                    early.impl("g", lambda x: dc.ops.aten.mul.Scalar(x, 5.0), "CPU")
                lib.impl("f", lambda x: dc.ops.aten.mul.Scalar(x, 3.0), "CPU")
                lib.impl("f.two", lambda x, y: dc.ops.aten.sub.Tensor(x, y), "CPU")
                lib.impl("f.two", dc.fallthrough_kernel, "Autograd")
                names = dispatcher.operator_names()
                assert {f"{ns}::f", f"{ns}::f.two", f"{ns}::g"} <= set(names)
                assert [op.overload_name for op in dispatcher.overloads(ns, "f")] == ["", "two"]
                assert dc.find_op(f"{ns}::f.two") in set(dispatcher.operators())
                assert "CPU: registered at" in dc.dump_table(f"{ns}::f")
                assert "AutogradCPU: fallthrough registered at" in dc.dump_table(f"{ns}::f.two")
                ops = getattr(dc.ops, ns)
                assert values(ops.f(x)) == [3.0, 6.0]
                assert values(ops.f.two(x, y)) == [-2.0, -2.0]
                assert values(ops.f(x, y)) == [-2.0, -2.0]  # the packet picks the overload
                assert values(ops.g.default(y)) == [15.0, 20.0]
                lib._destroy()  # the defs go; g keeps its kernel, schema-less
                assert not {f"{ns}::f", f"{ns}::f.two", f"{ns}::g"} & set(dispatcher.operator_names())
                assert dispatcher.overloads(ns, "f") == []
                with pytest.raises(LookupError):
                    dc.find_op(f"{ns}::g")
                if impl_before_def:  # torch's views of what is left: no f; g schema-less, then nothing
                    with pytest.raises(AttributeError):
                        getattr(dc.ops, ns).f  # noqa: B018 - the lookup is the test
                    assert dc.dump_state(f"{ns}::f") == ""
                    assert dc.dump_state(f"{ns}::g").startswith(f"name: {ns}::g\nschema: (none)\nCPU: ")
                early._destroy()
                if impl_before_def:
                    assert dc.dump_state(f"{ns}::g") == dc.dump_table(f"{ns}::g") == ""
            finally:
                for library in reversed(libs):
                    library._destroy()
            rounds[tid] += 1

    return work


def fallback_toggler(rounds: list[int], index: int):
    """Register and remove a global fallback at XLA: every operator's XLA entry is rebuilt."""

    def work(stop: threading.Event) -> None:
        while not stop.is_set():
            with dc.Library("_", "IMPL") as lib:
                lib.fallback(dc.fallthrough_kernel, "XLA")
            rounds[index] += 1

    return work


def caller(custom: str, calls: list[int], index: int):
    """Call aten operators and a custom operator; every result must be right."""

    def work(stop: threading.Event) -> None:
        x, y = dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0])
        twice = dc.find_op(custom)
        while not stop.is_set():
            assert values(dc.ops.aten.add.Tensor(x, y)) == [4.0, 6.0]
            assert values(x * y) == [3.0, 8.0]
            assert values(dc.ops.aten.mul.Scalar(y, 2.0)) == [6.0, 8.0]
            assert values(twice(y)) == [6.0, 8.0]
            calls[index] += 1

    return work


@pytest.fixture
def custom_op(lib):
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: dc.ops.aten.add.Tensor(x, x), "CPU")
    return f"{lib.ns}::twice"


def test_threads_defining_and_destroying_operators_while_others_call_leave_the_registry_as_it_was(custom_op):
    dc.dump_table("aten::add.Tensor")  # backends loaded before the snapshot
    before = registry_snapshot()
    rounds = [0, 0, 0, 0]
    calls = [0, 0, 0]
    workers = [registrar(i, rounds, impl_before_def=i == 0) for i in range(3)] + [fallback_toggler(rounds, 3)]
    workers += [caller(custom_op, calls, i) for i in range(3)]
    run_for(RUN_SECONDS, workers)
    assert all(rounds) and all(calls), (rounds, calls)  # every thread made progress
    after = registry_snapshot()
    assert after[0] == before[0]
    assert after[1] == before[1]


def test_destroyed_operators_leave_no_entries_behind():
    """Registries of constant size: the handles of gone operators do not pile up (torch removes
    the entry when its last registration goes)."""
    dc.dump_table("aten::add.Tensor")
    dispatcher = dc.get_dispatcher()
    with dispatcher._lock:
        handles_before = len(dispatcher._ops)
    empty_before = empty_handles()
    rounds = [0, 0]
    run_for(0.5, [registrar(i, rounds, impl_before_def=i == 0) for i in range(2)])
    assert all(rounds)
    with dispatcher._lock:
        handles_after = len(dispatcher._ops)
    assert (empty_handles(), handles_after) == (empty_before, handles_before), (
        f"{sum(rounds)} rounds of 3 operators each left {empty_handles() - empty_before} empty handles")
