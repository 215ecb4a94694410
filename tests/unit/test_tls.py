"""Unit tests for dispatchcore.tls: defaults, guards, restoration, thread and asyncio isolation."""

from __future__ import annotations

import asyncio
import threading
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatchcore.tls as tls_module
from dispatchcore.keys import DispatchKey
from dispatchcore.keyset import (
    BACKEND_MASK,
    DEFAULT_EXCLUDED,
    DEFAULT_INCLUDED,
    FULL,
    DispatchKeySet,
    key_bits,
)
from dispatchcore.tls import (
    AutoDispatchBelowADInplaceOrView,
    AutoDispatchBelowAutograd,
    AutoDispatchSkipFunctionalize,
    AutoNonVariableTypeMode,
    DisableTorchDispatch,
    ExcludeDispatchKeyGuard,
    ForceDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    tls_get,
    tls_is_dispatch_key_excluded,
    tls_is_dispatch_key_included,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
    tls_set_dispatch_key_included,
)

D = DispatchKey
KS = DispatchKeySet
DEFAULTS = (0x404000000, 0x1FF8000000000)
TIMEOUT = 10  # seconds; a barrier that times out fails the test instead of hanging it


def raw() -> tuple[int, int]:
    """(included, excluded) raw values of this thread's TLS."""
    return int(tls_local_include_set()), int(tls_local_exclude_set())


def assert_keep_consistent() -> None:
    """The cached keep-mask must always equal BACKEND_MASK | ~excluded."""
    included, excluded, keep = tls_get()
    assert keep == (BACKEND_MASK | ~excluded) & FULL


# --- defaults ----------------------------------------------------------------------------------


def test_defaults_raw_values():
    assert raw() == DEFAULTS
    assert (DEFAULT_INCLUDED, DEFAULT_EXCLUDED) == DEFAULTS
    assert_keep_consistent()


def test_defaults_print_like_pytorch():
    assert repr(tls_local_include_set()) == "DispatchKeySet(BackendSelect, ADInplaceOrView)"
    assert repr(tls_local_exclude_set()) == (
        "DispatchKeySet(AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, AutocastIPU, AutocastHPU, "
        "AutocastXLA, AutocastMPS, AutocastCUDA, AutocastPrivateUse1)"
    )


def test_default_membership_queries():
    assert tls_is_dispatch_key_included(D.BackendSelect)
    assert tls_is_dispatch_key_included("ADInplaceOrView")
    assert not tls_is_dispatch_key_included(D.Python)
    assert tls_is_dispatch_key_excluded(D.AutocastCUDA)
    assert not tls_is_dispatch_key_excluded(D.AutogradCPU)


# --- each guard: inside values, exact restoration ----------------------------------------------

GUARDS = {
    "BelowAutograd": (AutoDispatchBelowAutograd, (0x404000000, 0x1FFB800000000)),
    "BelowADInplaceOrView": (AutoDispatchBelowADInplaceOrView, (0x404000000, 0x1FFBC00000000)),
    "SkipFunctionalize": (AutoDispatchSkipFunctionalize, (0x404000000, 0x1FF8040000000)),
    "DisableTorchDispatch": (DisableTorchDispatch, (0x404000000, 0x1101FF8010000000)),
    "Exclude(AutogradCPU)": (
        lambda: ExcludeDispatchKeyGuard(KS(D.AutogradCPU)), (0x404000000, 0x1FF9000000001)
    ),
    "Exclude('Python')": (lambda: ExcludeDispatchKeyGuard("Python"), (0x404000000, 0x1FF8010000000)),
    "Include(Python)": (lambda: IncludeDispatchKeyGuard(D.Python), (0x414000000, 0x1FF8000000000)),
    "Include(CPU)": (lambda: IncludeDispatchKeyGuard(KS(D.CPU)), (0x404010001, 0x1FF8000000000)),
    "Force": (
        lambda: ForceDispatchKeyGuard(KS([D.Python, D.CPU]), KS(D.AutogradCPU)),
        (0x10010001, 0x1000000001),
    ),
    "Force(empty)": (lambda: ForceDispatchKeyGuard(KS(), KS()), (0, 0)),
}
guard_params = pytest.mark.parametrize(("make", "inside"), list(GUARDS.values()), ids=list(GUARDS))


@guard_params
def test_guard_sets_raw_values_inside_and_restores_them_after(make, inside):
    guard = make()
    assert raw() == DEFAULTS, "constructing a guard must not touch TLS"
    with guard as entered:
        assert entered is guard
        assert raw() == inside
        assert_keep_consistent()
    assert raw() == DEFAULTS
    assert_keep_consistent()


@guard_params
def test_guard_restores_when_an_exception_passes_through(make, inside):
    with pytest.raises(KeyError, match="boom"):
        with make():
            assert raw() == inside
            raise KeyError("boom")
    assert raw() == DEFAULTS
    assert_keep_consistent()


@guard_params
def test_guard_object_can_be_reentered_sequentially(make, inside):
    guard = make()
    for _ in range(2):
        with guard:
            assert raw() == inside
        assert raw() == DEFAULTS


def test_below_autograd_exclude_set_hides_autograd_functionality_when_printed():
    """AutogradFunctionality is in the raw value but has no backend bit, so it prints nothing."""
    with AutoDispatchBelowAutograd():
        printed = repr(tls_local_exclude_set())
        assert printed.startswith("DispatchKeySet(AutogradOther, AutogradNestedTensor, AutocastCPU,")
        assert tls_is_dispatch_key_excluded(D.AutogradFunctionality)
        assert not tls_is_dispatch_key_excluded(D.AutogradCPU)  # no CPUBit in the exclude set


def test_exclude_autograd_cpu_excludes_the_autograd_functionality_for_every_backend():
    with ExcludeDispatchKeyGuard(KS(D.AutogradCPU)):
        excluded = tls_local_exclude_set()
        assert excluded.has(D.AutogradCPU)
        assert int(KS([D.CUDA, D.AutogradCUDA]) - excluded) == int(KS(D.CUDA))


def test_below_adinplaceorview_leaves_the_include_set_alone():
    """ADInplaceOrView stays included; the exclude set wins over it."""
    with AutoDispatchBelowADInplaceOrView():
        assert tls_is_dispatch_key_included(D.ADInplaceOrView)
        assert tls_is_dispatch_key_excluded(D.ADInplaceOrView)


def test_guard_reprs():
    assert repr(AutoDispatchBelowAutograd()) == "AutoDispatchBelowAutograd()"
    assert repr(ExcludeDispatchKeyGuard(D.Python)) == "ExcludeDispatchKeyGuard(DispatchKeySet(Python))"
    assert repr(IncludeDispatchKeyGuard("CPU")) == "IncludeDispatchKeyGuard(DispatchKeySet(CPU))"


# --- nesting -----------------------------------------------------------------------------------


def test_nested_include_of_the_same_key_keeps_it_while_outer_is_alive():
    with IncludeDispatchKeyGuard(D.Python):
        with IncludeDispatchKeyGuard(D.Python):
            assert raw()[0] == 0x414000000
        assert raw()[0] == 0x414000000
    assert raw() == DEFAULTS


def test_nested_exclude_guards_restore_the_outer_state():
    with AutoDispatchBelowAutograd():
        with AutoDispatchBelowADInplaceOrView():
            assert raw()[1] == 0x1FFBC00000000
        assert raw()[1] == 0x1FFB800000000
        with AutoDispatchBelowAutograd():
            assert raw()[1] == 0x1FFB800000000
        assert raw()[1] == 0x1FFB800000000
    assert raw() == DEFAULTS


def test_mixed_kinds_nest_and_each_restores_only_its_own_set():
    with IncludeDispatchKeyGuard(D.Python):
        with AutoDispatchBelowAutograd():
            assert raw() == (0x414000000, 0x1FFB800000000)
            with ForceDispatchKeyGuard(KS(D.CPU), KS()):
                assert raw() == (0x10001, 0)
                with ExcludeDispatchKeyGuard(KS(D.AutogradCPU)):
                    assert raw() == (0x10001, 0x1000000001)
                    assert_keep_consistent()
                assert raw() == (0x10001, 0)
            assert raw() == (0x414000000, 0x1FFB800000000)
            assert_keep_consistent()
        assert raw() == (0x414000000, 0x1FF8000000000)
    assert raw() == DEFAULTS


def test_exception_unwinds_a_whole_stack_of_guards():
    with pytest.raises(ZeroDivisionError):
        with IncludeDispatchKeyGuard(D.Python), AutoDispatchBelowADInplaceOrView():
            with ForceDispatchKeyGuard(KS(), KS()), DisableTorchDispatch():
                _ = 1 / 0
    assert raw() == DEFAULTS


def test_include_guard_restores_a_snapshot_not_a_delta():
    """An include-set edit made inside an include guard is undone on exit (torch 2.13 does the same)."""
    with IncludeDispatchKeyGuard(D.Python):
        tls_set_dispatch_key_included(D.Functionalize, True)
        assert tls_is_dispatch_key_included(D.Functionalize)
    assert raw() == DEFAULTS


def test_exclude_guard_keeps_include_edits_made_inside():
    with ForceDispatchKeyGuard(KS.from_raw(DEFAULTS[0]), KS.from_raw(DEFAULTS[1])):
        with AutoDispatchBelowAutograd():
            tls_set_dispatch_key_included(D.Python, True)
            tls_set_dispatch_key_excluded(D.Functionalize, True)
        assert raw() == (0x414000000, DEFAULTS[1])
        assert_keep_consistent()
    assert raw() == DEFAULTS


# --- tls_set_dispatch_key_included / _excluded -------------------------------------------------


@pytest.fixture
def forced_defaults():
    """Run the test under a Force guard so direct TLS edits cannot leak out of it."""
    with ForceDispatchKeyGuard(KS.from_raw(DEFAULTS[0]), KS.from_raw(DEFAULTS[1])):
        yield


@pytest.mark.usefixtures("forced_defaults")
def test_set_included_adds_and_removes_a_key():
    tls_set_dispatch_key_included(D.Python, True)
    assert raw()[0] == 0x414000000
    tls_set_dispatch_key_included("Python", False)
    assert raw() == DEFAULTS


@pytest.mark.usefixtures("forced_defaults")
def test_set_excluded_false_clears_only_the_functionality_bit():
    """As c10, which uses DispatchKeySet::remove: the backend bit stays in the set."""
    tls_set_dispatch_key_excluded(D.AutogradCPU, True)
    assert raw()[1] == 0x1FF9000000001
    tls_set_dispatch_key_excluded(D.AutogradCPU, False)
    assert raw()[1] == 0x1FF8000000001
    assert_keep_consistent()


@pytest.mark.usefixtures("forced_defaults")
def test_set_included_false_keeps_backend_bits_of_other_keys():
    tls_set_dispatch_key_included(D.CPU, True)
    tls_set_dispatch_key_included(D.CUDA, True)
    tls_set_dispatch_key_included(D.CPU, False)
    assert raw()[0] == 0x404000003


@pytest.mark.usefixtures("forced_defaults")
def test_set_is_a_no_op_when_has_already_matches_the_requested_state():
    """{AutogradFunctionality, CPUBit} does not 'have' AutogradCUDA, so removing it changes nothing."""
    tls_set_dispatch_key_excluded(D.AutogradCPU, True)
    tls_set_dispatch_key_excluded(D.AutogradCUDA, False)
    assert raw()[1] == 0x1FF9000000001
    tls_set_dispatch_key_excluded(D.Autograd, False)  # alias: no bits, always "has"
    tls_set_dispatch_key_included(D.Undefined, True)
    assert raw() == (DEFAULTS[0], 0x1FF9000000001)


@pytest.mark.usefixtures("forced_defaults")
def test_set_excluded_updates_the_cached_keep_mask():
    tls_set_dispatch_key_excluded(D.AutocastCPU, False)
    assert_keep_consistent()
    tls_set_dispatch_key_excluded(D.Python, True)
    assert_keep_consistent()
    assert tls_get()[2] & key_bits(D.Python) == 0


# --- AutoNonVariableTypeMode -------------------------------------------------------------------


def test_auto_non_variable_type_mode_warns_once_and_acts_like_below_autograd(monkeypatch):
    monkeypatch.setattr(tls_module, "_warned_non_variable", False)
    with pytest.warns(DeprecationWarning, match="^AutoNonVariableTypeMode is deprecated") as record:
        with AutoNonVariableTypeMode():
            assert raw() == (0x404000000, 0x1FFB800000000)
    assert len(record) == 1
    assert record[0].filename == __file__
    assert raw() == DEFAULTS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with AutoNonVariableTypeMode():
            assert raw()[1] == 0x1FFB800000000
    assert raw() == DEFAULTS


# --- model-based property: random guard stacks -------------------------------------------------

GUARD_KEYS = [D.Python, D.CPU, D.AutogradCPU, D.Meta, D.ADInplaceOrView, D.AutocastCPU, D.Functionalize,
              D.SparseCUDA, D.AutogradOther, D.Autograd, D.Undefined]
key_st = st.sampled_from(GUARD_KEYS)
raw_st = st.integers(0, FULL)
op_st = st.one_of(
    st.tuples(st.just("include"), key_st),
    st.tuples(st.just("exclude"), key_st),
    st.tuples(st.just("force"), raw_st, raw_st),
    st.tuples(st.sampled_from(["below_autograd", "below_adiov", "skip_func", "disable_td"])),
    st.tuples(st.just("set_inc"), key_st, st.booleans()),
    st.tuples(st.just("set_exc"), key_st, st.booleans()),
)
EXCLUDE_GUARDS = {
    "below_autograd": (AutoDispatchBelowAutograd, 0x3800000000),
    "below_adiov": (AutoDispatchBelowADInplaceOrView, 0x3C00000000),
    "skip_func": (AutoDispatchSkipFunctionalize, key_bits(D.Functionalize)),
    "disable_td": (DisableTorchDispatch, key_bits(D.Python) | key_bits(D.PythonTLSSnapshot)
                   | key_bits(D.PreDispatch)),
}


def _model_set(current: int, bits: int, state: bool) -> int:
    if (current & bits == bits) == state:
        return current
    return current | bits if state else current & ~(bits & ~BACKEND_MASK)


def _run(ops):
    """Apply ops[0], nesting the rest inside it when it is a guard; check against a tiny model."""
    if not ops:
        return
    op, rest = ops[0], ops[1:]
    inc, exc = raw()
    kind = op[0]
    if kind in ("set_inc", "set_exc"):
        bits = key_bits(op[1])
        if kind == "set_inc":
            tls_set_dispatch_key_included(op[1], op[2])
            assert raw() == (_model_set(inc, bits, op[2]), exc)
        else:
            tls_set_dispatch_key_excluded(op[1], op[2])
            assert raw() == (inc, _model_set(exc, bits, op[2]))
        assert_keep_consistent()
        _run(rest)
        return
    if kind == "include":
        guard, inside = IncludeDispatchKeyGuard(op[1]), (inc | key_bits(op[1]), exc)
    elif kind == "exclude":
        guard, inside = ExcludeDispatchKeyGuard(op[1]), (inc, exc | key_bits(op[1]))
    elif kind == "force":
        guard, inside = ForceDispatchKeyGuard(KS.from_raw(op[1]), KS.from_raw(op[2])), (op[1], op[2])
    else:
        make, bits = EXCLUDE_GUARDS[kind]
        guard, inside = make(), (inc, exc | bits)
    with guard:
        assert raw() == inside
        assert_keep_consistent()
        _run(rest)
        after_inner = raw()
    after = raw()
    if kind == "include":
        assert after == (inc, after_inner[1])
    elif kind == "force":
        assert after == (inc, exc)
    else:
        assert after == (after_inner[0], exc)
    assert_keep_consistent()


@settings(max_examples=150, deadline=None)
@given(st.lists(op_st, max_size=8))
def test_random_guard_stacks_follow_the_snapshot_model(ops):
    with ForceDispatchKeyGuard(KS.from_raw(DEFAULTS[0]), KS.from_raw(DEFAULTS[1])):
        _run(ops)
    assert raw() == DEFAULTS


# --- thread isolation --------------------------------------------------------------------------


def _in_thread(target, *args):
    errors: list[BaseException] = []

    def wrapper():
        try:
            target(*args)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    thread = threading.Thread(target=wrapper)
    thread.start()
    return thread, errors


def test_guard_in_one_thread_is_invisible_to_another():
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    seen = {}

    def worker():
        with AutoDispatchBelowAutograd(), IncludeDispatchKeyGuard(D.Python):
            seen["worker_inside"] = raw()
            barrier.wait()  # 1: guard active in the worker
            barrier.wait()  # 2: main thread has looked
        seen["worker_after"] = raw()

    thread, errors = _in_thread(worker)
    barrier.wait()
    seen["main_while_worker_guarded"] = raw()
    barrier.wait()
    thread.join(TIMEOUT)
    assert not errors, errors
    assert seen == {
        "worker_inside": (0x414000000, 0x1FFB800000000),
        "main_while_worker_guarded": DEFAULTS,
        "worker_after": DEFAULTS,
    }


def test_new_thread_starts_from_defaults_even_when_parent_has_a_guard_active():
    seen = []
    with ExcludeDispatchKeyGuard(KS(D.AutogradCPU)), IncludeDispatchKeyGuard(D.Python):
        thread, errors = _in_thread(lambda: seen.append(raw()))
        thread.join(TIMEOUT)
        assert raw() == (0x414000000, 0x1FF9000000001)
    assert not errors, errors
    assert seen == [DEFAULTS]


def test_two_threads_with_different_guards_overlap_without_interference():
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    seen: dict[str, list] = {"a": [], "b": []}

    def worker(name, make):
        with make():
            seen[name].append(raw())
            barrier.wait()  # both guards active at once
            seen[name].append(raw())
            barrier.wait()
        seen[name].append(raw())

    ta, ea = _in_thread(worker, "a", AutoDispatchBelowADInplaceOrView)
    tb, eb = _in_thread(worker, "b", lambda: ForceDispatchKeyGuard(KS(D.CPU), KS()))
    ta.join(TIMEOUT)
    tb.join(TIMEOUT)
    assert not ea and not eb, (ea, eb)
    assert seen["a"] == [(0x404000000, 0x1FFBC00000000)] * 2 + [DEFAULTS]
    assert seen["b"] == [(0x10001, 0)] * 2 + [DEFAULTS]
    assert raw() == DEFAULTS


# --- asyncio tasks share their thread's sets (c10's thread_local) -------------------------------


def test_asyncio_tasks_on_one_thread_see_each_others_guards_as_in_torch():
    seen: dict[str, list] = {"a": [], "b": []}

    async def worker(name, make, mine: asyncio.Event, other: asyncio.Event):
        with make():
            seen[name].append(raw())
            mine.set()
            await other.wait()  # the other task is now inside its own guard
            await asyncio.sleep(0)
            seen[name].append(raw())
        seen[name].append(raw())

    async def main():
        ea, eb = asyncio.Event(), asyncio.Event()
        await asyncio.gather(
            worker("a", AutoDispatchBelowAutograd, ea, eb),
            worker("b", lambda: IncludeDispatchKeyGuard(D.Python), eb, ea),
        )
        return raw()

    assert asyncio.run(main()) == DEFAULTS
    # b enters inside a's guard and leaves first; each guard restores only the set it edited
    a_only, both = (0x404000000, 0x1FFB800000000), (0x414000000, 0x1FFB800000000)
    assert seen["a"] == [a_only, a_only, DEFAULTS]
    assert seen["b"] == [both, both, a_only]
    assert raw() == DEFAULTS
