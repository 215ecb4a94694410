"""autocast.py: the TLS flip, the AutocastCPU kernels and their policies, the cast cache."""

from __future__ import annotations

import sys
import threading
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.keys import DispatchKey as D
from dispatchcore.tls import tls_get

ac = sys.modules["dispatchcore.autocast"]  # the module (dc.autocast is the class, as torch.autocast)
aten = dc.ops.aten
AUTOCAST_CPU = int(dc.DispatchKeySet(D.AutocastCPU))
AUTOCAST_CUDA = int(dc.DispatchKeySet(D.AutocastCUDA))


@pytest.fixture(autouse=True)
def _autocast_state_restored():
    before = (dc.is_autocast_enabled("cpu"), dc.get_autocast_dtype("cpu"), dc.is_autocast_cache_enabled())
    yield
    assert (dc.is_autocast_enabled("cpu"), dc.get_autocast_dtype("cpu"), dc.is_autocast_cache_enabled()) == before
    assert not ac._state().cache and ac._state().nesting == 0


def f32(*shape):
    return dc.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10)


# --- the TLS flip ---------------------------------------------------------------------------------
def test_autocast_only_removes_autocastcpu_from_the_exclude_set():
    before = tls_get()
    assert not dc.is_autocast_enabled("cpu")
    with dc.autocast("cpu") as region:
        inc, exc, _ = tls_get()
        assert inc == before[0]
        assert exc == before[1] & ~AUTOCAST_CPU
        assert hex(exc) == "0x1ff0000000000"  # torch's raw value inside torch.autocast("cpu")
        assert dc.is_autocast_enabled("cpu") and not dc.is_autocast_enabled("cuda")
        assert dc.get_autocast_dtype("cpu") is dc.float16
        assert isinstance(region, dc.autocast)
    assert tls_get() == before


def test_default_dtype_is_float16_the_documented_deviation():
    assert dc.get_autocast_dtype("cpu") is dc.float16  # torch: bfloat16, which numpy lacks
    assert "bfloat16" in ac.__doc__ and "float16" in ac.__doc__


def test_nested_enabled_false_turns_it_off_and_restores():
    a = f32(2, 2)
    with dc.autocast("cpu"):
        assert (a @ a).dtype is dc.float16
        with dc.autocast("cpu", enabled=False):
            assert not dc.is_autocast_enabled("cpu")
            assert tls_get()[1] & AUTOCAST_CPU
            assert (a @ a).dtype is dc.float32
            assert dc.get_autocast_dtype("cpu") is dc.float16
        assert dc.is_autocast_enabled("cpu")
        assert (a @ a).dtype is dc.float16
    assert not dc.is_autocast_enabled("cpu")


def test_exception_restores_the_state():
    before = tls_get()
    with pytest.raises(ZeroDivisionError):
        with dc.autocast("cpu"):
            raise ZeroDivisionError
    assert tls_get() == before


def test_other_device_types_toggle_their_own_key():
    with dc.autocast("cuda"):
        assert dc.is_autocast_enabled("cuda") and not dc.is_autocast_enabled("cpu")
        assert not tls_get()[1] & AUTOCAST_CUDA
        assert (f32(2, 2) @ f32(2, 2)).dtype is dc.float32  # CPU tensors: AutocastCPU still excluded
    assert tls_get()[1] & AUTOCAST_CUDA


def test_decorator_form():
    @dc.autocast("cpu")
    def f(a, b):
        assert dc.is_autocast_enabled("cpu")
        return a @ b

    assert f.__name__ == "f"
    assert f(f32(2, 3), f32(3, 2)).dtype is dc.float16
    assert not dc.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="requires a callable"):
        dc.autocast("cpu")(3)


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'foo'"):
        dc.autocast("foo")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        dc.autocast(1)
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
        region = dc.autocast("cpu", dtype=dc.float32)
    with region:
        assert not dc.is_autocast_enabled("cpu")


def test_set_functions():
    dc.set_autocast_enabled("cpu", True)
    try:
        assert dc.is_autocast_enabled("cpu")
    finally:
        dc.set_autocast_enabled("cpu", False)
    assert dc.is_autocast_available("cpu") and not dc.is_autocast_available("meta")


def test_autocast_does_not_leak_into_other_threads():
    seen = {}

    def worker():
        seen["enabled"] = dc.is_autocast_enabled("cpu")
        seen["dtype"] = (f32(2, 2) @ f32(2, 2)).dtype

    with dc.autocast("cpu"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == {"enabled": False, "dtype": dc.float32}


# --- the policies -------------------------------------------------------------------------------
def test_lower_precision_ops_run_in_float16():
    a, b = f32(2, 3), f32(3, 4)
    with dc.autocast("cpu"):
        out = aten.mm.default(a, b)
        assert out.dtype is dc.float16
        assert aten.bmm.default(f32(2, 2, 3), f32(2, 3, 4)).dtype is dc.float16
        assert (a @ b).dtype is dc.float16               # matmul 2-D
        assert (f32(3) @ f32(3, 2)).dtype is dc.float16  # matmul 1-D @ 2-D
        assert (f32(2, 2, 3) @ b).dtype is dc.float16    # matmul folded to mm
    expected = (a.numpy().astype(np.float16) @ b.numpy().astype(np.float16))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3)


def test_float64_and_integer_inputs_are_not_cast():
    d = dc.tensor(np.ones((2, 2)))
    with dc.autocast("cpu"):
        assert aten.mm.default(d, d).dtype is dc.float64
        h = f32(2, 2).to(dc.float16)
        assert aten.mm.default(h, f32(2, 2)).dtype is dc.float16


def test_softmax_falls_through_on_cpu():
    a = f32(2, 3)
    with dc.autocast("cpu"):
        assert a.softmax(0).dtype is dc.float32
        assert a.log_softmax(1).dtype is dc.float32
        assert a.to(dc.float16).softmax(0).dtype is dc.float16  # not on CPU's fp32 list
        assert a.sum().dtype is dc.float32
    for name in ("_softmax", "softmax.int", "sum", "add.Tensor", "relu"):
        reg, label = dc.find_op(f"aten::{name}").table_entry("AutocastCPU")
        assert reg.fallthrough and label == "backend fallback", name


def test_fp32_ops_run_in_float32():
    h = f32(2, 3).to(dc.float16)
    with dc.autocast("cpu"):
        assert aten.mse_loss.default(h, h).dtype is dc.float32
        target = dc.tensor([0, 2])
        assert aten.nll_loss.default(h.log_softmax(1), target).dtype is dc.float32


def test_promote_ops_use_the_widest_type():
    a = f32(2, 2)
    h = a.to(dc.float16)
    d = dc.tensor(np.ones((2, 2)))
    with dc.autocast("cpu"):
        assert aten.cat.default([a, h]).dtype is dc.float32
        assert aten.cat.default([h, h]).dtype is dc.float16
        assert aten.cat.default([d, a]).dtype is dc.float64
        assert aten.stack.default([h, a]).dtype is dc.float32


def test_ops_outside_the_lists_keep_their_dtypes():
    a = f32(3)
    with dc.autocast("cpu"), dc.trace() as t:
        out = a + a
    assert out.dtype is dc.float32
    assert not t.find(key="AutocastCPU")  # fallthrough: no hop at all


def test_the_seven_kernels_are_registered_at_autocastcpu():
    for name in ("mm", "bmm", "matmul", "mse_loss", "nll_loss", "cat", "stack"):
        reg, label = dc.find_op(f"aten::{name}").table_entry("AutocastCPU")
        assert label == "kernel" and reg.where.file.endswith("autocast.py"), name
        assert f"AutocastCPU: registered at {reg.where}" in dc.dump_table(f"aten::{name}")


# --- autograd and the cast cache ---------------------------------------------------------------
def test_autograd_flows_back_through_the_casts():
    x = f32(2, 3).requires_grad_()
    w = f32(3, 4)
    with dc.autocast("cpu"):
        y = x @ w
    assert y.dtype is dc.float16
    y.sum().backward()
    assert x.grad.dtype is dc.float32
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(w.numpy().sum(1), (2, 3)), rtol=1e-3)


def test_weight_casts_are_cached_within_the_outermost_region():
    w = f32(2, 2).requires_grad_()
    a = f32(2, 2)
    with dc.LoggingMode() as log, dc.autocast("cpu"):
        aten.mm.default(a, w)
        with dc.autocast("cpu"):
            aten.mm.default(a, w)
        assert len(ac._state().cache) == 1
    casts = [r for r in log.records if r.name == "aten._to_copy.default"]
    assert sum(r.args[0] is w for r in casts) == 1  # cast once, reused
    assert sum(r.args[0] is a for r in casts) == 2  # not a leaf that requires grad: every time


def test_cache_disabled_casts_every_time():
    w = f32(2, 2).requires_grad_()
    with dc.LoggingMode() as log, dc.autocast("cpu", cache_enabled=False):
        assert not dc.is_autocast_cache_enabled()
        aten.mm.default(w, w)
    assert log.ops.count("aten._to_copy.default") == 2


def test_trace_shows_the_autocast_hop_then_mm_at_cpu_with_float16_inputs():
    a, b = f32(2, 3), f32(3, 4)
    seen = []

    class Dtypes(dc.DispatchMode):  # sits at the Python key, below Autocast and Autograd
        def __dispatch__(self, func, types, args=(), kwargs=None):
            if str(func) == "aten.mm.default":
                seen.append([x.dtype for x in args])
            return func(*args, **(kwargs or {}))

    with dc.autocast("cpu"), dc.trace() as t:
        out = aten.mm.default(a, b)
    hops = t.hops()
    first = hops[0]
    assert (first.kind, first.op, first.key.name, first.label) == ("call", "aten::mm", "AutocastCPU", "kernel")
    assert [e.detail for e in first.events] == ["ExcludeDispatchKeyGuard", "ExcludeDispatchKeyGuard"]
    enter = first.events[0]
    assert enter.data["excluded_after"] & AUTOCAST_CPU and not enter.data["excluded_before"] & AUTOCAST_CPU
    children = [(h.op, h.key.name) for h in first.children]
    assert children == [("aten::to.dtype", "AutogradCPU"), ("aten::to.dtype", "AutogradCPU"),
                        ("aten::mm", "AutogradCPU")]
    mm_cpu = [h for h in hops if h.op == "aten::mm" and h.key.name == "CPU"]
    assert len(mm_cpu) == 1 and mm_cpu[0].parent is first.children[2]
    assert mm_cpu[0].excluded & AUTOCAST_CPU  # the wrapper's guard is active below it
    assert out.dtype is dc.float16

    with dc.autocast("cpu"), Dtypes(), dc.trace() as t:
        aten.mm.default(a, b)
    keys = [h.key.name for h in t.hops() if h.op == "aten::mm"]
    # PythonTLSSnapshot (included by the mode) is above AutocastCPU; the wrapper's own call
    # passes it again, then Autograd, then the mode at Python, then the CPU kernel
    assert keys == ["PythonTLSSnapshot", "AutocastCPU", "PythonTLSSnapshot", "AutogradCPU", "Python", "CPU"]
    assert seen == [[dc.float16, dc.float16]]


def test_warnings_from_the_decorator_are_not_repeated():
    with pytest.warns(UserWarning):
        deco = dc.autocast("cpu", dtype=dc.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert deco(lambda: dc.is_autocast_enabled("cpu"))() is False
