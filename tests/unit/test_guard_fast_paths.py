"""The fast paths of the key-set and grad-mode guards give the state the general path gives.

Covers Note [Guard memos] (tls.py): the per-class memo of the exclude-style guards, the memos of
``ExcludeDispatchKeyGuard``, ``IncludeDispatchKeyGuard`` and ``ForceDispatchKeyGuard`` and the
per-mode memos of ``inference_mode``; the inline key-to-bits conversions of the guard
constructors; and Note [Guard closures]: the ``__enter__`` generated for each exclude-style and
grad-mode guard class, with its bits or states and its memo in the closure. Each is checked against
a from-scratch model of the thread-local state, on a memo miss and on a hit, nested, with
exceptions passing through, and in several threads at once (the memos are shared by threads).
"""

from __future__ import annotations

import random
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatchcore as dc
import dispatchcore.tls as tls
from dispatchcore.autograd import grad_mode
from dispatchcore.keys import DispatchKey
from dispatchcore.keyset import (
    AUTOGRAD_KEYSET,
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
    DisableTorchDispatch,
    ExcludeDispatchKeyGuard,
    ForceDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    inference_active,
    per_thread,
    tls_get,
)

D = DispatchKey
KS = DispatchKeySet
ADIOV = key_bits(D.ADInplaceOrView)
TIMEOUT = 20  # seconds


class Boom(Exception):
    pass


def expected(included: int, excluded: int) -> tuple[int, int, int]:
    """The keys tuple the general path builds for these sets (``keep`` from scratch)."""
    return (included, excluded, (BACKEND_MASK | ~excluded) & FULL)


def check_keys(included: int, excluded: int) -> None:
    """This thread's keys equal the model, and the default state is the one default object."""
    state = tls_get()
    assert state == expected(included, excluded)
    if (included, excluded) == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED):
        assert state is tls._DEFAULT_STATE


def autograd() -> tuple[bool, bool]:
    return per_thread.state.autograd


EXCLUDE_CLASSES = [
    (AutoDispatchBelowAutograd, AUTOGRAD_KEYSET),
    (AutoDispatchBelowADInplaceOrView, AUTOGRAD_KEYSET | ADIOV),
    (AutoDispatchSkipFunctionalize, key_bits(D.Functionalize)),
    (DisableTorchDispatch, key_bits(D.Python) | key_bits(D.PythonTLSSnapshot) | key_bits(D.PreDispatch)),
]
# entry states: defaults, below autograd, nothing at all, everything, and a backend-bits mix
START_STATES = [
    (DEFAULT_INCLUDED, DEFAULT_EXCLUDED),
    (DEFAULT_INCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET),
    (0, 0),
    (FULL, FULL),
    (key_bits(D.CPU) | ADIOV, key_bits(D.AutogradCUDA)),
]


def forced(included: int, excluded: int) -> ForceDispatchKeyGuard:
    return ForceDispatchKeyGuard(KS.from_raw(included), KS.from_raw(excluded))


def clear_memos() -> None:
    """Forget every guard memo, so the next enter takes the general (miss) path."""
    for cls, _ in EXCLUDE_CLASSES:
        cls.__enter__.forget()
    tls._exclude_last = (None, 0, None)
    tls._include_last = (None, None, None)
    tls._force_last = (-1, -1, None)
    grad_mode._inference_on = (None, None)
    grad_mode._inference_off = (None, None)


@pytest.fixture(autouse=True)
def _fresh_memos():
    clear_memos()
    before = (tls_get(), autograd(), len(inference_active))
    yield
    clear_memos()
    assert (tls_get(), autograd(), len(inference_active)) == before


# --- the guards' methods, generated per class, are the ones trace.py wraps ---------------------------
GRAD_CLASSES = [grad_mode.no_grad, grad_mode.enable_grad]


@pytest.mark.parametrize("cls", [c for c, _ in EXCLUDE_CLASSES] + GRAD_CLASSES)
def test_each_guard_class_has_its_own_generated_enter(cls):
    enter = cls.__dict__["__enter__"]
    assert enter.guard_closure
    others = [c for c, _ in EXCLUDE_CLASSES] + GRAD_CLASSES
    assert all(other.__dict__["__enter__"] is not enter for other in others if other is not cls)


@pytest.mark.parametrize("cls", [c for c, _ in EXCLUDE_CLASSES] + GRAD_CLASSES)
def test_trace_records_each_generated_enter_once(cls):
    with dc.trace() as t:
        with cls():
            pass
    events = [(e.kind, e.detail) for e in t.events if e.kind.startswith("guard")]
    assert events == [("guard_enter", cls.__name__), ("guard_exit", cls.__name__)]
    assert "wrapped" not in cls.__dict__["__enter__"].__qualname__  # unwrapped again after tracing


def test_trace_records_a_subclass_guard_made_after_import_once():
    class Mine(AutoDispatchBelowAutograd):
        __slots__ = ()

    with dc.trace() as t:
        with Mine():
            check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET)
    assert [e.detail for e in t.events if e.kind.startswith("guard")] == ["Mine", "Mine"]


def test_deprecated_guard_warns_when_made_and_records_once(recwarn):
    with dc.trace() as t:
        guard = dc.AutoNonVariableTypeMode()
        with guard:
            check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET)
    assert [e.kind for e in t.events if e.kind.startswith("guard")] == ["guard_enter", "guard_exit"]


# --- exclude-style guards: the per-class memo ------------------------------------------------------
@pytest.mark.parametrize("cls, bits", EXCLUDE_CLASSES)
@pytest.mark.parametrize("start", START_STATES)
def test_exclude_guard_memo_hit_equals_miss(cls, bits, start):
    inc, exc = start
    with forced(inc, exc):
        with cls():  # miss: computed, remembered
            check_keys(inc, exc | bits)
            first = tls_get()
        check_keys(inc, exc)
        with cls():  # hit: the remembered tuple itself
            assert tls_get() is first
        check_keys(inc, exc)


@pytest.mark.parametrize("cls, bits", EXCLUDE_CLASSES)
def test_exclude_guard_memo_follows_a_changed_entry_state(cls, bits):
    for inc, exc in START_STATES + START_STATES[::-1]:
        with forced(inc, exc), cls():
            check_keys(inc, exc | bits)


@pytest.mark.parametrize("cls, bits", EXCLUDE_CLASSES)
def test_nested_exclude_guard_keeps_the_outer_memo(cls, bits):
    with cls():
        outer = tls_get()
        memo = cls.__enter__.memo()
        with cls():
            assert tls_get() is outer  # nothing more to exclude: the same object
        assert cls.__enter__.memo() is memo and tls_get() is outer
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


def test_exclude_guard_classes_have_separate_memos():
    with AutoDispatchBelowAutograd():
        check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET)
    with AutoDispatchBelowADInplaceOrView():
        check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET | ADIOV)
    with AutoDispatchBelowAutograd():  # a hit on its own memo, not the other class's
        check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET)


def test_exclude_guard_subclass_gets_its_own_memo():
    class Mine(AutoDispatchBelowAutograd):
        __slots__ = ()

    assert Mine.__dict__["__enter__"] is not AutoDispatchBelowAutograd.__dict__["__enter__"]
    with Mine():
        assert Mine.__enter__.memo()[1] is tls_get()
        check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET)


def test_excluding_default_excluded_bits_keeps_the_default_object():
    some_default_bit = DEFAULT_EXCLUDED & -DEFAULT_EXCLUDED
    with ExcludeDispatchKeyGuard(KS.from_raw(some_default_bit)):
        assert tls_get() is tls._DEFAULT_STATE


@pytest.mark.parametrize("cls, bits", EXCLUDE_CLASSES)
def test_exclude_guard_restores_on_exception_and_keeps_inner_include_changes(cls, bits):
    with pytest.raises(Boom), cls():
        check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | bits)
        raise Boom
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    # restores only the exclude set: an include change made inside (and not undone) stays
    with cls():
        dc.tls_set_dispatch_key_included(D.Python, True)
    check_keys(DEFAULT_INCLUDED | key_bits(D.Python), DEFAULT_EXCLUDED)
    dc.tls_set_dispatch_key_included(D.Python, False)
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


# --- ExcludeDispatchKeyGuard / IncludeDispatchKeyGuard / ForceDispatchKeyGuard memos ----------------
KEY_ARGS = [D.AutogradCPU, D.CPU, D.Python, "Meta", KS(D.AutogradCUDA), KS([D.CPU, D.Functionalize])]


@pytest.mark.parametrize("key", KEY_ARGS, ids=str)
@pytest.mark.parametrize("start", START_STATES)
def test_exclude_and_include_memo_hit_equals_miss(key, start):
    inc, exc = start
    bits = tls._as_bits(key)
    with forced(inc, exc):
        for _ in range(2):  # a miss, then a hit
            with ExcludeDispatchKeyGuard(key):
                check_keys(inc, exc | bits)
            check_keys(inc, exc)
            with IncludeDispatchKeyGuard(key):
                check_keys(inc | bits, exc)
            check_keys(inc, exc)


def test_memo_is_keyed_by_the_keys_not_just_the_state():
    for key in [D.CPU, D.Python, D.CPU, KS(D.Meta)]:
        bits = tls._as_bits(key)
        with ExcludeDispatchKeyGuard(key):
            check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | bits)
        with IncludeDispatchKeyGuard(key):
            check_keys(DEFAULT_INCLUDED | bits, DEFAULT_EXCLUDED)


def test_equal_key_sets_built_apart_share_the_memo():
    with ExcludeDispatchKeyGuard(KS(D.AutogradCPU)):
        first = tls_get()
    with ExcludeDispatchKeyGuard(KS(D.AutogradCPU)):  # another object, equal bits: a hit
        assert tls_get() is first


def test_nested_include_and_exclude_keep_their_memos():
    with IncludeDispatchKeyGuard(D.Python):
        outer, memo = tls_get(), tls._include_last
        with IncludeDispatchKeyGuard(D.Python):
            assert tls_get() is outer
        assert tls._include_last is memo
    with ExcludeDispatchKeyGuard(D.Python):
        outer, memo = tls_get(), tls._exclude_last
        with ExcludeDispatchKeyGuard(D.Python):
            assert tls_get() is outer
        assert tls._exclude_last is memo
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


def test_include_guard_restores_on_exception_and_keeps_inner_exclude_changes():
    with pytest.raises(Boom), IncludeDispatchKeyGuard(D.CPU):
        raise Boom
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    with IncludeDispatchKeyGuard(D.CPU):
        dc.tls_set_dispatch_key_excluded(D.Python, True)
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED | key_bits(D.Python))
    dc.tls_set_dispatch_key_excluded(D.Python, False)


@pytest.mark.parametrize("bad", ["NotAKey", 3.5, None])
def test_constructors_still_reject_bad_keys_when_built(bad):
    for cls in (ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard):
        with pytest.raises((TypeError, ValueError, KeyError)):
            cls(bad)
    with pytest.raises((TypeError, ValueError, KeyError)):
        ForceDispatchKeyGuard(bad, KS())


def test_guard_reprs_unchanged():
    assert repr(ExcludeDispatchKeyGuard(D.AutogradCPU)) == "ExcludeDispatchKeyGuard(DispatchKeySet(AutogradCPU))"
    assert repr(IncludeDispatchKeyGuard(D.CPU)) == "IncludeDispatchKeyGuard(DispatchKeySet(CPU))"
    assert repr(AutoDispatchBelowAutograd()) == "AutoDispatchBelowAutograd()"


@pytest.mark.parametrize("pair", [(0, 0), (FULL, FULL), (DEFAULT_INCLUDED, DEFAULT_EXCLUDED),
                                  (key_bits(D.CPU), AUTOGRAD_KEYSET)])
def test_force_memo_hit_equals_miss(pair):
    inc, exc = pair
    for _ in range(2):  # a miss, then a hit
        with ForceDispatchKeyGuard(KS.from_raw(inc), KS.from_raw(exc)):
            check_keys(inc, exc)
        with ForceDispatchKeyGuard(D.Python, D.CPU):  # other sets in between
            check_keys(key_bits(D.Python), key_bits(D.CPU))
        check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


def test_force_restores_on_exception():
    with pytest.raises(Boom), forced(0, FULL):
        check_keys(0, FULL)
        raise Boom
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


# --- model-based: random nested programs of key-set guards, with exceptions -------------------------
_KEYS = [D.Python, D.CPU, D.AutogradCPU, D.ADInplaceOrView, D.Functionalize, D.AutogradOther]
guard_st = st.one_of(
    st.tuples(st.sampled_from(["exclude", "include"]), st.sampled_from(_KEYS)),
    st.tuples(st.just("force"), st.sampled_from([0, FULL, DEFAULT_INCLUDED]),
              st.sampled_from([0, FULL, DEFAULT_EXCLUDED])),
    st.tuples(st.sampled_from(range(len(EXCLUDE_CLASSES)))),
    st.tuples(st.sampled_from(["infer_on", "infer_off"])),
)
step_st = st.tuples(guard_st, st.booleans())  # (guard, raise inside it)


def run_keys_program(steps: list) -> None:
    """Enter steps[0], run the rest nested inside it, raising where asked; check against a model."""
    if not steps:
        return
    (op, fail), rest = steps[0], steps[1:]
    inc, exc, _ = tls_get()
    kind = op[0]
    if kind == "exclude":
        guard, inside = ExcludeDispatchKeyGuard(op[1]), (inc, exc | key_bits(op[1]))
    elif kind == "include":
        guard, inside = IncludeDispatchKeyGuard(op[1]), (inc | key_bits(op[1]), exc)
    elif kind == "force":
        guard, inside = forced(op[1], op[2]), (op[1], op[2])
    elif kind == "infer_on":
        guard, inside = dc.inference_mode(), (inc & ~ADIOV, exc | AUTOGRAD_KEYSET)
    elif kind == "infer_off":
        guard, inside = dc.inference_mode(False), (inc | ADIOV, exc & ~AUTOGRAD_KEYSET)
    else:
        cls, bits = EXCLUDE_CLASSES[kind]
        guard, inside = cls(), (inc, exc | bits)
    try:
        with guard:
            check_keys(*inside)
            run_keys_program(rest)
            check_keys(*inside)
            if fail:
                raise Boom
    except Boom:
        assert fail or any(f for _, f in rest)
    check_keys(inc, exc)


@settings(max_examples=200, deadline=None)
@given(st.lists(step_st, max_size=7), st.lists(step_st, max_size=7))
def test_random_key_guard_programs_match_the_model(first, second):
    try:
        run_keys_program(first)
        run_keys_program(second)  # runs against the memos the first program left
        run_keys_program(first)
    except Boom:
        pass
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


# --- grad mode: no_grad / enable_grad ---------------------------------------------------------------
AUTOGRAD_STATES = [(True, False), (False, False), (True, True), (False, True)]


@pytest.mark.parametrize("guard_cls, mode", [(dc.no_grad, False), (dc.enable_grad, True)])
@pytest.mark.parametrize("start", AUTOGRAD_STATES)
def test_grad_mode_guard_state_from_every_start(guard_cls, mode, start):
    keys = tls_get()
    per_thread.state.autograd = start
    try:
        with guard_cls():
            assert autograd() == (mode, start[1])
            assert tls_get() is keys
        assert autograd() == start
        with pytest.raises(Boom), guard_cls():
            raise Boom
        assert autograd() == start
        # torch's AutoGradMode destructor: saved grad mode, current inference flag
        with guard_cls():
            per_thread.state.autograd = (True, not start[1])
        assert autograd() == (start[0], not start[1])
    finally:
        per_thread.state.autograd = (True, False)


@pytest.mark.parametrize("base, mode", [(dc.no_grad, False), (dc.enable_grad, True)])
def test_grad_mode_subclasses_get_an_enter_for_their_own_mode(base, mode):
    class Sub(base):  # inherits _mode: the same states, its own generated __enter__
        __slots__ = ()

    class Flipped(base):
        __slots__ = ()
        _mode = not mode

    per_thread.state.autograd = (not mode, False)
    try:
        with Sub():
            assert autograd() == (mode, False)
        with Flipped():
            assert autograd() == (not mode, False)
        assert autograd() == (not mode, False)
    finally:
        per_thread.state.autograd = (True, False)


def test_nested_grad_mode_guards_restore_each_level():
    with dc.no_grad():
        with dc.enable_grad():
            with dc.no_grad():
                assert autograd() == (False, False)
            assert autograd() == (True, False)
        assert autograd() == (False, False)
    assert autograd() == (True, False)


# --- inference_mode: per-mode memos ------------------------------------------------------------------
@pytest.mark.parametrize("start", START_STATES)
@pytest.mark.parametrize("grad_start", AUTOGRAD_STATES)
@pytest.mark.parametrize("mode", [True, False])
def test_inference_mode_memo_hit_equals_miss(start, grad_start, mode):
    inc, exc = start
    inside = (inc & ~ADIOV, exc | AUTOGRAD_KEYSET) if mode else (inc | ADIOV, exc & ~AUTOGRAD_KEYSET)
    n = len(inference_active)
    with forced(inc, exc):
        per_thread.state.autograd = grad_start
        try:
            for _ in range(2):  # a miss, then a hit
                with dc.inference_mode(mode):
                    check_keys(*inside)
                    assert autograd() == (not mode, mode)
                    assert len(inference_active) == n + (mode and not grad_start[1])
                check_keys(inc, exc)
                assert autograd() == grad_start and len(inference_active) == n
        finally:
            per_thread.state.autograd = (True, False)


def test_nested_inference_mode_keeps_the_memo_and_the_object():
    with dc.inference_mode():
        outer, memo = tls_get(), grad_mode._inference_on
        with dc.inference_mode():
            assert tls_get() is outer
            assert len(inference_active) == 1  # the nested guard entered from inference mode
        assert grad_mode._inference_on is memo
        with dc.inference_mode(False):
            check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
            assert autograd() == (True, False) and len(inference_active) == 1
        assert tls_get() is outer and autograd() == (False, True)
    assert not inference_active and autograd() == (True, False)


def test_inference_mode_restores_on_exception():
    for mode in (True, False, True):
        with pytest.raises(Boom), dc.no_grad(), dc.inference_mode(mode):
            raise Boom
        check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
        assert autograd() == (True, False) and not inference_active


def test_inference_mode_exit_pops_only_when_leaving_inference_mode():
    with dc.inference_mode():
        per_thread.state.autograd = (False, False)  # left inference mode by hand inside
    assert autograd() == (True, False)
    # as the general path: the exit saw no inference mode to leave, so the entry stays (only slower)
    assert inference_active == [None]
    inference_active.clear()


def test_inference_mode_decorator_and_generator_take_the_fast_path():
    @dc.inference_mode
    def f():
        return tls_get(), autograd()

    @dc.inference_mode(False)
    def gen():
        yield autograd()
        yield autograd()

    keys, state = f()
    assert keys == expected(DEFAULT_INCLUDED & ~ADIOV, DEFAULT_EXCLUDED | AUTOGRAD_KEYSET)
    assert state == (False, True)
    with dc.inference_mode():
        assert list(gen()) == [(True, False), (True, False)]
        assert autograd() == (False, True)
    assert repr(dc.inference_mode()).startswith("<dispatchcore.autograd.grad_mode.inference_mode object")


# --- threads: the memos are shared, the states are not ------------------------------------------------
def _thread_program(seed: int, errors: list, barrier: threading.Barrier) -> None:
    rng = random.Random(seed)
    try:
        barrier.wait()
        for _ in range(300):
            start = rng.choice(START_STATES)
            with forced(*start):
                steps = [((rng.choice(["exclude", "include"]), rng.choice(_KEYS)), rng.random() < 0.2)
                         if rng.random() < 0.4 else
                         ((rng.choice(["infer_on", "infer_off", 0, 1, 2, 3]),), rng.random() < 0.2)
                         for _ in range(rng.randint(1, 4))]
                try:
                    run_keys_program(steps)
                except Boom:
                    pass
                check_keys(*start)
            grad = rng.choice([dc.no_grad, dc.enable_grad])
            with grad():
                assert autograd()[0] is (grad is dc.enable_grad)
            assert autograd() == (True, False)
    except BaseException as e:  # reported by the main thread
        errors.append(e)


def test_threads_share_memos_but_never_state():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, mid-guard
    try:
        errors: list[BaseException] = []
        barrier = threading.Barrier(4, timeout=TIMEOUT)
        threads = [threading.Thread(target=_thread_program, args=(seed, errors, barrier)) for seed in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)


def test_guard_exits_on_the_thread_it_entered_on():
    guard = AutoDispatchBelowAutograd()
    infer = dc.inference_mode()
    ng = dc.no_grad()
    guard.__enter__()
    infer.__enter__()
    ng.__enter__()
    seen = {}

    def other():
        seen["before"] = (tls_get(), autograd())
        ng.__exit__(None, None, None)  # restores the entering thread's state, not this one's
        infer.__exit__(None, None, None)
        guard.__exit__(None, None, None)
        seen["after"] = (tls_get(), autograd())

    t = threading.Thread(target=other)
    t.start()
    t.join(TIMEOUT)
    default = (expected(DEFAULT_INCLUDED, DEFAULT_EXCLUDED), (True, False))
    assert seen == {"before": default, "after": default}
    check_keys(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    assert autograd() == (True, False) and not inference_active
