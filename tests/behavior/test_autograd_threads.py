"""Grad mode, inference mode and the engine are per thread: guards in one thread never leak into another.

The threads truly overlap: each test parks the thread that holds a guard at a ``threading.Barrier``
while the other one checks its own state, and the switch interval is shortened.
"""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

import dispatchcore as dc
from dispatchcore.tls import tls_get

TIMEOUT = 30.0


@pytest.fixture(autouse=True)
def _racy():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()


def run_threads(*targets):
    errors = []

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported to the test
                errors.append(e)
        return run

    threads = [threading.Thread(target=guard(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
        assert not t.is_alive(), "thread hung"
    if errors:
        raise errors[0]


def test_no_grad_in_one_thread_does_not_leak_into_another():
    inside, checked = threading.Barrier(2, timeout=TIMEOUT), threading.Barrier(2, timeout=TIMEOUT)
    seen = {}

    def holder():
        with dc.no_grad():
            inside.wait()  # the other thread checks while this guard is active
            checked.wait()
            seen["holder"] = dc.is_grad_enabled()
            x = dc.ones(1, requires_grad=True)
            seen["holder_records"] = (x * 2).grad_fn is not None

    def other():
        inside.wait()
        seen["other"] = dc.is_grad_enabled()
        x = dc.ones(1, requires_grad=True)
        seen["other_records"] = (x * 2).grad_fn is not None
        checked.wait()

    run_threads(holder, other)
    assert seen == {"holder": False, "holder_records": False, "other": True, "other_records": True}


def test_enable_grad_in_one_thread_while_another_is_in_no_grad():
    both_inside, done = threading.Barrier(2, timeout=TIMEOUT), threading.Barrier(2, timeout=TIMEOUT)
    seen = {}

    def a():
        with dc.no_grad():
            both_inside.wait()
            seen["a"] = dc.is_grad_enabled()
            done.wait()

    def b():
        with dc.no_grad(), dc.enable_grad():
            both_inside.wait()
            seen["b"] = dc.is_grad_enabled()
            done.wait()

    run_threads(a, b)
    assert seen == {"a": False, "b": True}


def test_inference_mode_in_one_thread_does_not_leak_into_another():
    inside, checked = threading.Barrier(2, timeout=TIMEOUT), threading.Barrier(2, timeout=TIMEOUT)
    default = tls_get()
    seen = {}

    def holder():
        with dc.inference_mode():
            inside.wait()
            checked.wait()
            seen["holder_tensor_is_inference"] = dc.ones(1).is_inference()
            seen["holder_state"] = (dc.is_grad_enabled(), dc.is_inference_mode_enabled())
        seen["holder_after"] = tls_get() == default

    def other():
        inside.wait()
        seen["other_tls"] = tls_get() == default
        seen["other_state"] = (dc.is_grad_enabled(), dc.is_inference_mode_enabled())
        seen["other_tensor_is_inference"] = dc.ones(1).is_inference()
        x = dc.ones(1, requires_grad=True)
        seen["other_records"] = (x * 2).grad_fn is not None
        checked.wait()

    run_threads(holder, other)
    assert seen == {
        "holder_tensor_is_inference": True, "holder_state": (False, True), "holder_after": True,
        "other_tls": True, "other_state": (True, False), "other_tensor_is_inference": False,
        "other_records": True,
    }


def test_new_thread_starts_from_defaults_not_the_parents_guards():
    seen = {}

    def child():
        seen["state"] = (dc.is_grad_enabled(), dc.is_inference_mode_enabled())
        seen["tls"] = tls_get()

    default = tls_get()
    with dc.inference_mode(), dc.no_grad():
        run_threads(child)
    assert seen == {"state": (True, False), "tls": default}


def test_concurrent_backward_passes_are_independent():
    start = threading.Barrier(4, timeout=TIMEOUT)
    results = {}

    def worker(i):
        def run():
            x = dc.tensor([float(i + 1)], requires_grad=True)
            start.wait()
            for _ in range(30):
                x.grad = None
                y = x * x * x
                if i % 2:
                    (g,) = dc.autograd.grad(y.sum(), x, create_graph=True)  # grad mode on in the engine
                    assert g.requires_grad
                else:
                    y.sum().backward()
                    g = x.grad
                    assert not g.requires_grad
                assert dc.is_grad_enabled()
            results[i] = g.tolist()
        return run

    run_threads(*(worker(i) for i in range(4)))
    assert results == {i: [3.0 * (i + 1) ** 2] for i in range(4)}


def test_function_kernel_reentry_marker_is_per_thread(lib, ns):
    """One thread parked inside a Function kernel's forward does not make another thread's call re-entrant."""
    lib.define("slow(Tensor x) -> Tensor")
    op = getattr(dc.ops, ns).slow.default
    lib.impl("slow", lambda x: x * 1, "CPU")
    parked, released = threading.Barrier(2, timeout=TIMEOUT), threading.Barrier(2, timeout=TIMEOUT)
    first = threading.Event()

    class Slow(dc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if not first.is_set():
                first.set()
                parked.wait()
                released.wait()
            with dc.AutoDispatchBelowADInplaceOrView():
                return op(x)

        @staticmethod
        def backward(ctx, g):
            return g

    lib.impl("slow", Slow, "Autograd")
    out = {}

    def holder():
        out["holder"] = op(dc.ones(1, requires_grad=True)).grad_fn

    def other():
        parked.wait()
        out["other"] = op(dc.ones(1, requires_grad=True)).grad_fn
        released.wait()

    run_threads(holder, other)
    assert type(out["holder"]).__name__ == type(out["other"]).__name__ == "SlowBackward"


def test_asyncio_tasks_on_one_thread_share_grad_mode_as_in_torch():
    """Grad mode is per thread (torch prints [False, False] for the same program)."""
    async def in_no_grad(event_in, event_out):
        with dc.no_grad():
            event_in.set()
            await event_out.wait()
            return dc.is_grad_enabled()

    async def checker(event_in, event_out):
        await event_in.wait()
        state = dc.is_grad_enabled()
        event_out.set()
        return state

    async def main():
        event_in, event_out = asyncio.Event(), asyncio.Event()
        return await asyncio.gather(in_no_grad(event_in, event_out), checker(event_in, event_out))

    assert asyncio.run(main()) == [False, False]
