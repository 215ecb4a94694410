"""Threads: calls racing registrations always see a whole table; concurrent registrations compose."""

from __future__ import annotations

import sys
import threading

import pytest

import dispatchcore as dc
from dispatchcore.keys import RUNTIME_KEYS
from dispatchcore.resolution import compute_table_entry

KS = dc.DispatchKeySet


@pytest.fixture(autouse=True)
def _racy_and_quiet(monkeypatch):
    """Switch threads often; overrides are expected here, so the once-only warning is spent."""
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)
    dispatcher = dc.get_dispatcher()
    warned, dispatcher._warned_override = dispatcher._warned_override, True
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)
    dispatcher._warned_override = warned


def run_threads(targets, timeout=30.0):
    errors = []

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported to the test
                errors.append(e)
        return run

    threads = [threading.Thread(target=guard(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def assert_table_matches_resolver(op):
    fallbacks = dc.get_dispatcher()._fallbacks
    for key in RUNTIME_KEYS:
        assert op.table_entry(key) == compute_table_entry(op._kernels, fallbacks, key), key


def test_calls_racing_registrations_return_a_valid_kernels_result(lib, carrier):
    lib.define("f(Tensor x, int n=1) -> Tensor")
    lib.impl("f", lambda x, n=1: "base", "CPU")
    op = dc.find_op(f"{lib.ns}::f")
    rounds = 150
    valid = {"base", "cia", "autograd"} | {f"cpu {i}" for i in range(rounds)}
    done = threading.Event()
    seen: list[set] = []

    def caller(kwargs: bool):
        results = set()
        cpu = carrier("CPU")
        while not done.is_set():
            result = op(cpu, n=2) if kwargs else op(cpu)
            if result not in valid:
                raise AssertionError(f"invalid result {result!r}")
            results.add(result)
        seen.append(results)

    def registrar():
        try:
            with dc.Library(lib.ns, "IMPL") as extra:
                for i in range(rounds):
                    handles = [
                        extra.impl("f", lambda x, n=1, i=i: f"cpu {i}", "CPU"),
                        extra.impl("f", lambda x, n=1: "autograd", "AutogradCPU"),
                        extra.impl("f", dc.fallthrough_kernel, "AutogradCPU"),
                        extra.impl("f", lambda x, n=1: "cia", "CompositeImplicitAutograd"),
                    ]
                    for handle in handles[i % 4:] + handles[:i % 4]:
                        handle.remove()
        finally:
            done.set()

    run_threads([lambda: caller(False), lambda: caller(True), lambda: caller(False), registrar])
    assert all("base" in results for results in seen)
    assert op(carrier("CPU")) == "base"
    assert_table_matches_resolver(op)


def test_calls_racing_fallback_registration(lib, carrier):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    op = dc.find_op(f"{lib.ns}::f")
    fake = carrier(KS(["Fake", "CPU"]))
    done = threading.Event()

    def caller():
        while not done.is_set():
            try:
                result = op(fake)
            except NotImplementedError as e:  # no Fake fallback at this instant: a whole-table answer
                assert str(e).startswith(f"Could not run '{lib.ns}::f' with arguments from the 'Fake'")
                continue
            assert result in ("cpu", "fallback"), result

    def registrar():
        try:
            with dc.Library("_", "IMPL") as global_lib:
                for i in range(15):
                    kernel = dc.fallthrough_kernel if i % 2 else (lambda op, *args: "fallback")
                    global_lib.fallback(kernel, "Fake").remove()
        finally:
            done.set()

    run_threads([caller, caller, registrar])
    assert_table_matches_resolver(op)


def test_concurrent_registrations_on_one_operator(lib):
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    baseline = {k: op.table_entry(k) for k in RUNTIME_KEYS}
    keys = ["CPU", "XLA", "SparseCPU", "AutogradCPU", "Autograd", "CompositeImplicitAutograd",
            "CompositeExplicitAutograd", "NestedTensorCPU", "CPU", "CompositeImplicitAutograd"]
    barrier = threading.Barrier(len(keys))

    def registrar(key):
        def run():
            with dc.Library(lib.ns, "IMPL") as extra:
                barrier.wait()
                for i in range(30):
                    handle = extra.impl("f", lambda x, i=i: i, key)
                    if i % 3:
                        handle.remove()
                # the survivors stay until the library is destroyed
        return run

    run_threads([registrar(k) for k in keys])
    assert op.registrations == {}
    assert {k: op.table_entry(k) for k in RUNTIME_KEYS} == baseline
    assert_table_matches_resolver(op)


def test_concurrent_registrations_keep_every_table_consistent(lib):
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    keys = ["CPU", "SparseCPU", "CompositeImplicitAutograd", "MkldnnCPU", "Autograd",
            "CompositeExplicitAutograd"]
    libraries = [dc.Library(lib.ns, "IMPL") for _ in keys]

    def registrar(library, key):
        return lambda: [library.impl("f", lambda x, i=i: i, key) for i in range(10)]

    try:
        run_threads([registrar(library, key) for library, key in zip(libraries, keys)])
        assert {k: len(v) for k, v in op.registrations.items()} == {dc.DispatchKey[k]: 10 for k in keys}
        assert_table_matches_resolver(op)
    finally:
        for library in libraries:
            library._destroy()
    assert op.registrations == {}


def test_concurrent_definitions_in_many_namespaces(ns, carrier):
    names = [f"{ns}_{i}" for i in range(8)]
    libraries = {}

    def define(name):
        def run():
            library = dc.Library(name, "DEF")
            library.define("f(Tensor x) -> Tensor")
            library.impl("f", lambda x, name=name: name, "CPU")
            libraries[name] = library
        return run

    run_threads([define(n) for n in names])
    try:
        for name in names:
            assert dc.find_op(f"{name}::f")(carrier()) == name
    finally:
        for library in libraries.values():
            library._destroy()


def test_threads_start_from_default_tls_and_keep_their_own(lib, carrier):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "autograd", "AutogradCPU")
    op = dc.find_op(f"{lib.ns}::f")
    results = {}
    inside = threading.Event()
    checked = threading.Event()

    def below():
        with dc.AutoDispatchBelowAutograd():
            results["below"] = op(carrier())
            inside.set()
            checked.wait(10)
            results["below again"] = op(carrier())

    def normal():
        inside.wait(10)
        results["normal"] = op(carrier())
        checked.set()

    with dc.AutoDispatchBelowAutograd():  # not inherited by new threads
        run_threads([below, normal])
    assert results == {"below": "cpu", "normal": "autograd", "below again": "cpu"}
