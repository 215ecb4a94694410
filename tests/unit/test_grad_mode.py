"""Grad mode and inference mode (``GradMode.h``, ``InferenceMode.h``): guards, decorators, TLS, inference tensors."""

from __future__ import annotations

import pytest

import dispatchcore as dc
from dispatchcore.keyset import AUTOGRAD_KEYSET, DEFAULT_EXCLUDED, key_bits
from dispatchcore.tls import inference_active, per_thread, tls_get

INPLACE_INFERENCE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
    "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
    "more details.")
SAVE_INFERENCE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


@pytest.fixture(autouse=True)
def _grad_state_restored():
    """Every test must leave grad mode on and inference mode off."""
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()
    yield
    assert dc.is_grad_enabled(), "a test leaked grad mode"
    assert not dc.is_inference_mode_enabled(), "a test leaked inference mode"


def state():
    return dc.is_grad_enabled(), dc.is_inference_mode_enabled()


def raw_tls():
    included, excluded, _ = tls_get()
    return included, excluded


# --- no_grad / enable_grad / set_grad_enabled as context managers ----------------------------
def test_defaults_grad_on_inference_off():
    assert state() == (True, False)


def test_no_grad_disables_and_restores():
    with dc.no_grad():
        assert state() == (False, False)
    assert state() == (True, False)


def test_enable_grad_inside_no_grad_and_back():
    with dc.no_grad():
        with dc.enable_grad():
            assert dc.is_grad_enabled()
        assert not dc.is_grad_enabled()


def test_set_grad_enabled_takes_effect_at_construction():
    guard = dc.set_grad_enabled(False)
    try:
        assert not dc.is_grad_enabled()  # torch flips the mode in __init__, before any `with`
    finally:
        with guard:
            pass
    assert dc.is_grad_enabled()


@pytest.mark.parametrize("mode", [True, False])
def test_set_grad_enabled_context_restores_previous(mode):
    with dc.no_grad():
        with dc.set_grad_enabled(mode):
            assert dc.is_grad_enabled() is mode
        assert not dc.is_grad_enabled()


def test_set_grad_enabled_enter_reapplies_its_mode():
    guard = dc.set_grad_enabled(False)
    dc.set_grad_enabled(True)  # used as a function: mode back on before the `with`
    with guard:
        assert not dc.is_grad_enabled()  # __enter__ sets the mode again, as torch does
    assert dc.is_grad_enabled()


def test_nesting_restores_each_level():
    seen = []
    with dc.no_grad():
        seen.append(dc.is_grad_enabled())
        with dc.enable_grad():
            seen.append(dc.is_grad_enabled())
            with dc.set_grad_enabled(False):
                seen.append(dc.is_grad_enabled())
            seen.append(dc.is_grad_enabled())
        seen.append(dc.is_grad_enabled())
    seen.append(dc.is_grad_enabled())
    assert seen == [False, True, False, True, False, True]


@pytest.mark.parametrize("guard", [dc.no_grad, dc.enable_grad, lambda: dc.set_grad_enabled(False),
                                   dc.inference_mode, lambda: dc.inference_mode(False)],
                         ids=["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                              "inference_mode_false"])
def test_exception_passes_through_and_state_is_restored(guard):
    before_tls = tls_get()
    with pytest.raises(KeyError, match="boom"):
        with guard():
            raise KeyError("boom")
    assert state() == (True, False)
    assert tls_get() == before_tls


def test_guard_does_not_swallow_exceptions_from_nested_guards():
    with pytest.raises(ValueError):
        with dc.no_grad(), dc.inference_mode(), dc.enable_grad():
            raise ValueError
    assert state() == (True, False)


def test_prebuilt_guard_can_be_reused():
    guard = dc.no_grad()
    for _ in range(3):
        with guard:
            assert not dc.is_grad_enabled()
        assert dc.is_grad_enabled()


def test_same_guard_instance_reentered_keeps_torch_quirk():
    """torch's no_grad keeps one saved mode per instance: re-entering it nested loses the outer one."""
    guard = dc.no_grad()
    try:
        with guard:
            with guard:
                assert not dc.is_grad_enabled()
            assert not dc.is_grad_enabled()
        assert not dc.is_grad_enabled()  # torch 2.13: still False here too
    finally:
        dc.set_grad_enabled(True)


# --- decorators -------------------------------------------------------------------------------
def test_no_grad_decorator_with_and_without_parentheses():
    @dc.no_grad()
    def f():
        return dc.is_grad_enabled()

    @dc.no_grad
    def g():
        return dc.is_grad_enabled()

    assert f() is False and g() is False
    assert dc.is_grad_enabled()
    assert g.__name__ == "g"  # functools.wraps


def test_enable_grad_decorator_inside_no_grad():
    @dc.enable_grad
    def f():
        return dc.is_grad_enabled()

    with dc.no_grad():
        assert f() is True
        assert not dc.is_grad_enabled()


def test_set_grad_enabled_decorator_restores_mode_after_decorating():
    decorator = dc.set_grad_enabled(False)
    assert not dc.is_grad_enabled()

    @decorator
    def f():
        return dc.is_grad_enabled()

    assert dc.is_grad_enabled()  # decorating undid the constructor's change
    assert f() is False
    assert dc.is_grad_enabled()


def test_inference_mode_decorator_forms():
    @dc.inference_mode
    def bare():
        return state()

    @dc.inference_mode()
    def called():
        return state()

    @dc.inference_mode(False)
    def off():
        return state()

    assert bare() == (False, True)
    assert called() == (False, True)
    assert off() == (True, False)


def test_decorator_restores_state_when_function_raises():
    @dc.no_grad()
    def f():
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError, match="inside"):
        f()
    assert dc.is_grad_enabled()


def test_decorated_generator_runs_each_step_under_the_guard():
    @dc.no_grad()
    def gen():
        yield dc.is_grad_enabled()
        yield dc.is_grad_enabled()
        return "done"

    it = gen()
    assert next(it) is False
    assert dc.is_grad_enabled()  # between steps the caller's mode is back
    assert next(it) is False
    with pytest.raises(StopIteration) as info:
        next(it)
    assert info.value.value == "done"
    assert dc.is_grad_enabled()


def test_decorated_generator_send_throw_close():
    @dc.inference_mode()
    def gen():
        got = yield "first"
        try:
            yield (got, dc.is_inference_mode_enabled())
        except ValueError:
            yield ("caught", dc.is_inference_mode_enabled())

    it = gen()
    assert next(it) == "first"
    assert it.send(5) == (5, True)
    assert it.throw(ValueError) == ("caught", True)
    it.close()
    assert state() == (True, False)


# --- no_grad leaves the dispatch TLS alone (c10/core/GradMode.h) --------------------------------------
@pytest.mark.parametrize("guard", [dc.no_grad, dc.enable_grad, lambda: dc.set_grad_enabled(False)],
                         ids=["no_grad", "enable_grad", "set_grad_enabled"])
def test_grad_mode_guards_leave_dispatch_tls_untouched(guard):
    before = tls_get()
    with guard():
        assert tls_get() == before
        assert dc.tls_local_include_set() == dc.DispatchKeySet(["BackendSelect", "ADInplaceOrView"])
        assert not dc.tls_is_dispatch_key_excluded("AutogradFunctionality")


def test_no_grad_autograd_kernel_still_runs_but_records_nothing():
    x = dc.ones(2, requires_grad=True)
    with dc.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert (x * 2).grad_fn is not None


# --- inference mode: TLS and autograd state (c10/core/InferenceMode.h) -------------------------------------
def test_inference_mode_tls_raw_values():
    included, excluded = raw_tls()
    with dc.inference_mode():
        inc, exc = raw_tls()
        assert inc == included & ~key_bits(dc.DispatchKey.ADInplaceOrView)
        assert dc.tls_local_include_set() == dc.DispatchKeySet(dc.DispatchKey.BackendSelect)
        assert inc == 0x4000000  # BackendSelect only
        assert exc == excluded | AUTOGRAD_KEYSET
        assert exc == 0x1FFB800000000  # torch's raw value: autocast + AutogradFunctionality/Other/NestedTensor
        assert dc.tls_is_dispatch_key_excluded("AutogradFunctionality")
        # as in torch: the per-key query also wants the CPU backend bit, which is not excluded
        assert not dc.tls_is_dispatch_key_excluded("AutogradCPU")
        assert not dc.tls_is_dispatch_key_excluded("ADInplaceOrView")  # never put in excluded
    assert raw_tls() == (included, excluded)


def test_inference_mode_exclude_set_prints_like_torch():
    with dc.inference_mode():
        text = repr(dc.tls_local_exclude_set())
    assert text.startswith("DispatchKeySet(AutogradOther, AutogradNestedTensor, AutocastCPU")


def test_inference_mode_false_restores_defaults_inside_inference_mode():
    default = raw_tls()
    with dc.inference_mode():
        with dc.inference_mode(False):
            assert state() == (True, False)
            assert raw_tls() == default
            assert not dc.ones(1).is_inference()
        assert state() == (False, True)
    assert raw_tls() == default


def test_inference_mode_false_outside_adds_nothing_new():
    with dc.inference_mode(False):
        inc, exc = raw_tls()
        assert inc & key_bits(dc.DispatchKey.ADInplaceOrView)
        assert exc == DEFAULT_EXCLUDED
        assert state() == (True, False)


def test_inference_mode_exit_restores_grad_mode_of_outer_no_grad():
    with dc.no_grad():
        with dc.inference_mode():
            assert state() == (False, True)
        assert state() == (False, False)


def test_no_grad_inside_inference_mode_keeps_inference():
    with dc.inference_mode():
        with dc.no_grad():
            assert state() == (False, True)
        with dc.enable_grad():
            assert state() == (True, True)
        assert state() == (False, True)


def test_enable_grad_inside_inference_mode_records_nothing():
    x = dc.ones(2, requires_grad=True)
    with dc.inference_mode():
        with dc.enable_grad():
            assert dc.is_grad_enabled()
            y = x * 2
    assert y.grad_fn is None and not y.requires_grad


def test_inference_mode_prebuilt_reuse():
    guard = dc.inference_mode()
    before = tls_get()
    for _ in range(2):
        with guard:
            assert state() == (False, True)
        assert tls_get() == before and state() == (True, False)


def test_inference_mode_instance_reentered_keeps_torch_quirk():
    """As in torch, a nested re-entry of one instance restores the inner saved state at both exits."""
    guard = dc.inference_mode()
    before = tls_get()
    with guard:
        inside = tls_get()
        with guard:
            pass
    try:
        assert state() == (False, True) and tls_get() == inside  # torch 2.13 leaks the same way
    finally:
        per_thread.state.keys = before
        per_thread.state.autograd = (True, False)
        inference_active.clear()  # the leaked guard never popped its Note [Inference mode anywhere] entry
    assert tls_get() == before


# --- inference tensors ------------------------------------------------------------------------
def test_tensors_allocated_inside_are_inference_tensors():
    normal = dc.ones(2)
    with dc.inference_mode():
        t = dc.ones(2)
        r = normal * 2
    assert t.is_inference() and r.is_inference()
    assert not normal.is_inference()
    assert dc.dispatch_keys(t) == dc.DispatchKeySet(["CPU", "AutocastCPU"])
    assert dc.dispatch_keys(normal) == dc.DispatchKeySet(["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"])


def test_inference_tensor_has_no_version_counter():
    with dc.inference_mode():
        t = dc.ones(2)
    with pytest.raises(RuntimeError, match="^Inference tensors do not track version counter.$"):
        _ = t._version


def test_normal_tensor_inside_inference_mode_still_bumps_version_and_makes_views():
    t = dc.ones(2)
    with dc.inference_mode():
        t.add_(1)
        v = t.view(2)
    assert t._version == 1
    assert v._base is t and not v.is_inference()


def test_inplace_on_inference_tensor_outside_raises():
    with dc.inference_mode():
        t = dc.ones(2)
    with pytest.raises(RuntimeError) as info:
        t.add_(1)
    assert str(info.value) == INPLACE_INFERENCE


def test_inplace_on_view_of_inference_tensor_outside_raises():
    with dc.inference_mode():
        t = dc.ones(2)
    with pytest.raises(RuntimeError) as info:
        t.view(2).add_(1)
    assert str(info.value) == INPLACE_INFERENCE


def test_inplace_on_inference_tensor_inside_is_fine():
    with dc.inference_mode():
        t = dc.ones(2)
        t.add_(1)
    assert t.tolist() == [2.0, 2.0]


def test_functional_op_on_inference_tensor_outside_gives_normal_tensor():
    with dc.inference_mode():
        t = dc.ones(2)
    r = t * 2
    assert not r.is_inference() and r._version == 0


def test_requires_grad_on_inference_tensor_outside_raises():
    with dc.inference_mode():
        t = dc.ones(2)
    with pytest.raises(RuntimeError) as info:
        t.requires_grad_()
    assert str(info.value) == "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
    t.requires_grad_(False)  # turning it off is allowed


def test_requires_grad_on_inference_tensor_inside_is_allowed():
    with dc.inference_mode():
        t = dc.ones(2).requires_grad_()
        assert t.requires_grad
        assert not (t * 2).requires_grad  # autograd keys are excluded: nothing recorded


def test_saving_inference_tensor_for_backward_raises():
    with dc.inference_mode():
        t = dc.ones(2)
    x = dc.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x * t  # mul saves both operands
    assert str(info.value) == SAVE_INFERENCE


def test_unsaved_inference_tensor_in_graph_is_fine():
    with dc.inference_mode():
        t = dc.ones(2)
    x = dc.ones(2, requires_grad=True)
    y = x + t  # add saves no tensors
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
