"""A Function subclass as an operator's Autograd kernel (torchvision's roi_align) and the autograd fallback.

The fallback is torch's ``autograd_not_implemented_fallback.cpp``.
"""

from __future__ import annotations

import warnings

import pytest

import dispatchcore as dc
from dispatchcore.keyset import DEFAULT_EXCLUDED
from dispatchcore.tls import tls_get

WARN_TEXT = (
    "{op}: an autograd kernel was not registered to the Autograd key(s) but we are trying to backprop "
    "through it. This may lead to silently incorrect behavior. This behavior is deprecated and will be "
    "removed in a future version of PyTorch. If your operator is differentiable, please ensure you have "
    "registered an autograd kernel to the correct Autograd key (e.g. DispatchKey::Autograd, "
    "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or to squash this "
    "warning and use the previous behavior, please register torch::CppFunction::makeFallthrough() to "
    "DispatchKey::Autograd.")


@pytest.fixture(autouse=True)
def _clean_state():
    mode = dc.get_autograd_fallback_mode()
    yield
    dc.set_autograd_fallback_mode(mode)
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()


def table_line(qualname: str, key: str) -> str:
    for line in dc.dump_table(qualname).splitlines():
        if line.startswith(f"{key}: "):
            return line
    raise AssertionError(f"no {key} line")


@pytest.fixture
def scale_op(lib, ns):
    """``ns::scale(Tensor x, float s)``: a CPU kernel that records what it saw; a Function at Autograd."""
    seen: dict = {"cpu_calls": 0}
    lib.define("scale(Tensor x, float s) -> Tensor")
    op = getattr(dc.ops, ns).scale.default

    def scale_cpu(x, s):
        seen["cpu_calls"] += 1
        seen["cpu_excluded"] = dc.tls_local_exclude_set()
        with dc.no_grad():
            return x * s

    class ScaleFn(dc.autograd.Function):
        @staticmethod
        def forward(ctx, x, s):
            seen["forward_tls"] = tls_get()
            seen["forward_grad_mode"] = dc.is_grad_enabled()
            ctx.saved_data["s"] = s
            with dc.AutoDispatchBelowADInplaceOrView():
                out = op(x, s)
            seen["out_keys"] = dc.dispatch_keys(out)
            return out

        @staticmethod
        def backward(ctx, g):
            seen["backward_calls_cpu_before"] = seen["cpu_calls"]
            return op(g, ctx.saved_data["s"]), None  # back through the dispatcher

    lib.impl("scale", scale_cpu, "CPU")
    return op, ScaleFn, seen


def test_function_registered_at_autograd_alias_shows_autograd_kernel(lib, ns, scale_op):
    op, ScaleFn, _ = scale_op
    lib.impl("scale", ScaleFn, "Autograd")
    qual = f"{ns}::scale"
    assert table_line(qual, "AutogradCPU").endswith("[autograd kernel]")
    assert table_line(qual, "AutogradCUDA").endswith("[autograd kernel]")
    assert table_line(qual, "CPU").endswith("[kernel]")


def test_function_registered_at_runtime_key_shows_kernel(lib, ns, scale_op):
    op, ScaleFn, _ = scale_op
    lib.impl("scale", ScaleFn, "AutogradCPU")
    qual = f"{ns}::scale"
    assert table_line(qual, "AutogradCPU").endswith("[kernel]")
    assert table_line(qual, "AutogradCUDA").endswith("[backend fallback]")


@pytest.mark.parametrize("key", ["Autograd", "AutogradCPU"])
def test_function_kernel_flow(lib, scale_op, key):
    op, ScaleFn, seen = scale_op
    lib.impl("scale", ScaleFn, key)
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    before = tls_get()
    y = op(x, 3.0)
    # 1. the Autograd kernel ran ScaleFn.apply with only the default (autocast) keys excluded
    assert seen["forward_tls"] == before
    assert seen["forward_tls"][1] == DEFAULT_EXCLUDED
    assert seen["forward_grad_mode"] is False
    # 2. under the guard the call went straight to CPU and made a normal tensor
    assert seen["cpu_calls"] == 1
    assert dc.DispatchKey.AutogradOther in seen["cpu_excluded"]
    assert seen["out_keys"] == dc.DispatchKeySet(["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"])
    # 3. the output carries the Function's node
    assert type(y.grad_fn).__name__ == "ScaleFnBackward"
    assert y.tolist() == [3.0, 6.0] and not y.is_inference()
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert seen["cpu_calls"] == 2  # backward called the op again, through the dispatcher


def test_function_kernel_without_grad_records_nothing(lib, scale_op):
    op, ScaleFn, seen = scale_op
    lib.impl("scale", ScaleFn, "Autograd")
    y = op(dc.ones(2), 2.0)
    assert y.grad_fn is None and seen["cpu_calls"] == 1
    with dc.no_grad():
        assert op(dc.ones(2, requires_grad=True), 2.0).grad_fn is None


def test_function_kernel_under_inference_mode_skips_autograd(lib, scale_op):
    op, ScaleFn, seen = scale_op
    lib.impl("scale", ScaleFn, "Autograd")
    with dc.inference_mode():
        y = op(dc.ones(2, requires_grad=True), 2.0)
    assert "forward_tls" not in seen  # the autograd keys are excluded: straight to CPU
    assert y.is_inference() and y.grad_fn is None


def test_forward_calling_the_op_without_guard_raises_clear_error(lib, ns):
    lib.define("loop(Tensor x) -> Tensor")
    op = getattr(dc.ops, ns).loop.default
    lib.impl("loop", lambda x: x, "CPU")

    class Loop(dc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return op(x)  # no AutoDispatchBelowADInplaceOrView: back into this kernel

        @staticmethod
        def backward(ctx, g):
            return g

    lib.impl("loop", Loop, "Autograd")
    before = tls_get()
    for x in (dc.ones(1, requires_grad=True), dc.ones(1)):
        with pytest.raises(RuntimeError) as info:
            op(x)
        assert not isinstance(info.value, RecursionError)
        message = str(info.value)
        assert message.startswith(f"dispatchcore: {ns}::loop's Autograd kernel Loop.apply was re-entered from "
                                  "inside Loop.forward.")
        assert "AutoDispatchBelowADInplaceOrView" in message
        assert tls_get() == before
    with dc.AutoDispatchBelowADInplaceOrView():  # the re-entry marker was reset by the error
        assert op(dc.ones(1)).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="was re-entered"):
        op(dc.ones(1))  # and the next call detects the loop again, rather than a stale state


def test_function_kernel_backward_sees_grad_mode_off_and_normal_tls(lib, ns):
    seen = {}
    lib.define("twice(Tensor x) -> Tensor")
    op = getattr(dc.ops, ns).twice.default
    lib.impl("twice", lambda x: x * 2, "CPU")

    class Twice(dc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with dc.AutoDispatchBelowADInplaceOrView():
                return op(x)

        @staticmethod
        def backward(ctx, g):
            seen["tls"] = tls_get()
            seen["grad"] = dc.is_grad_enabled()
            return g * 2

    lib.impl("twice", Twice, "Autograd")
    before = tls_get()
    x = dc.ones(1, requires_grad=True)
    op(x).sum().backward()
    assert seen == {"tls": before, "grad": False}
    assert x.grad.tolist() == [2.0]


# --- the autograd fallback for ops without an autograd kernel (autograd_not_implemented_fallback.cpp) -----------------
@pytest.fixture
def plain_op(lib, ns):
    """``ns::foo(Tensor x)`` with only a CPU kernel (no autograd kernel)."""
    lib.define("foo(Tensor x) -> Tensor")

    def foo_cpu(x):
        with dc.no_grad():
            return x * 2

    lib.impl("foo", foo_cpu, "CPU")
    return getattr(dc.ops, ns).foo.default, f"{ns}::foo"


def test_fallback_mode_default_is_warn():
    assert dc.get_autograd_fallback_mode() == "warn"


def test_fallback_warn_attaches_node_and_warns_at_backward(plain_op):
    op, qual = plain_op
    assert table_line(qual, "AutogradCPU").endswith("[backend fallback]")
    x = dc.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at forward
        y = op(x)
    assert y.requires_grad
    assert type(y.grad_fn).__name__ == "WarnNotImplemented"
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]
    with pytest.warns(UserWarning) as record:
        y.sum().backward()
    assert [str(w.message) for w in record] == [WARN_TEXT.format(op=qual)]
    assert x.grad is None  # the node returns undefined gradients


def test_fallback_warn_without_requires_grad_or_under_no_grad_records_nothing(plain_op):
    op, _ = plain_op
    assert op(dc.ones(2)).grad_fn is None
    with dc.no_grad():
        y = op(dc.ones(2, requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad


def test_fallback_nothing_mode_gives_no_grad_fn(plain_op):
    op, _ = plain_op
    dc.set_autograd_fallback_mode("nothing")
    assert dc.get_autograd_fallback_mode() == "nothing"
    y = op(dc.ones(2, requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad


def test_fallback_error_mode_is_not_implemented():
    with pytest.raises(RuntimeError) as info:
        dc.set_autograd_fallback_mode("error")
    assert str(info.value) == "NYI: mode='error'"
    assert dc.get_autograd_fallback_mode() == "warn"


def test_fallback_does_not_guard_the_kernel_below(lib, ns):
    """No TLS guard in the fallback: aten ops inside the CPU kernel record a graph of their own."""
    lib.define("bar(Tensor x) -> Tensor")
    lib.impl("bar", lambda x: x * 2, "CPU")
    op = getattr(dc.ops, ns).bar.default
    x = dc.ones(2, requires_grad=True)
    y = op(x)
    assert type(y.grad_fn).__name__ == "MulBackward0"  # recorded by the inner aten::mul (x * 2: mul.Tensor)
    with pytest.warns(UserWarning, match=f"^{ns}::bar: an autograd kernel was not registered"):
        y.sum().backward()  # the fallback put a warning hook on the output that already required grad
    assert x.grad.tolist() == [2.0, 2.0]


def test_registering_a_function_replaces_the_fallback(lib, ns, plain_op):
    op, qual = plain_op

    class Foo(dc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with dc.AutoDispatchBelowADInplaceOrView():
                return op(x)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    handle = lib.impl("foo", Foo, "Autograd")
    x = dc.ones(2, requires_grad=True)
    op(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    handle.remove()
    assert table_line(qual, "AutogradCPU").endswith("[backend fallback]")
    assert type(op(x).grad_fn).__name__ == "WarnNotImplemented"
