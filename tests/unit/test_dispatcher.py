"""dispatcher.py: lookup, built-in fallbacks, fallback registration, dumps, autograd fallback mode."""

from __future__ import annotations

import sys
import threading
import time

import pytest

import dispatchcore as dc
from dispatchcore import dispatcher as dispatcher_module
from dispatchcore.dumps import DUMP_ORDER
from dispatchcore.keys import RUNTIME_KEYS, DispatchKey
from dispatchcore.operator import OperatorHandle
from dispatchcore.resolution import compute_table_entry

D = DispatchKey


@pytest.fixture(autouse=True)
def _no_backend_discovery(monkeypatch):
    """Registry tests must not depend on which backends are installed: no lazy discovery."""
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)


@pytest.fixture
def global_lib():
    library = dc.Library("_", "IMPL")
    yield library
    library._destroy()


@pytest.fixture
def mode_nothing():
    previous = dc.get_autograd_fallback_mode()
    dc.set_autograd_fallback_mode("nothing")
    yield
    dc.set_autograd_fallback_mode(previous)


# --- lookup -------------------------------------------------------------------------------------
def test_find_op_and_default_overload(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.ov(Tensor x, Tensor y) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    assert dc.find_op(f"{lib.ns}::f.default") is op
    assert dc.get_dispatcher().find_op(f"{lib.ns}::f.ov").overload_name == "ov"
    assert dc.get_dispatcher().overloads(lib.ns, "f") == [op, dc.find_op(f"{lib.ns}::f.ov")]


def test_find_op_of_an_undefined_operator(ns):
    """torch's findSchemaOrThrow text, then how to define it; no internal exception chained."""
    with pytest.raises(LookupError, match=rf"^Could not find schema for {ns}::nope\.\n\(dispatchcore: no "
                                          rf"operator named '{ns}::nope' is defined\. Define it with "
                                          r"Library\(ns, 'DEF' or 'FRAGMENT'\)\.define\(schema\)") as info:
        dc.find_op(f"{ns}::nope")
    assert info.value.__context__ is None
    with pytest.raises(LookupError, match=rf"^Could not find schema for {ns}::nope\.ov\n"):
        dc.find_op(f"{ns}::nope.ov")


def test_operator_names_and_operators(lib):
    lib.define("b(Tensor x) -> Tensor")
    lib.define("a(Tensor x) -> Tensor")
    names = dc.get_dispatcher().operator_names()
    assert names == sorted(names)
    assert {f"{lib.ns}::a", f"{lib.ns}::b"} <= set(names)
    ops = {op.qualname for op in dc.get_dispatcher().operators()}
    assert {f"{lib.ns}::a", f"{lib.ns}::b"} <= ops
    lib._destroy()
    assert f"{lib.ns}::a" not in dc.get_dispatcher().operator_names()
    assert f"{lib.ns}::a" not in {op.qualname for op in dc.get_dispatcher().operators()}


def test_dumps_by_name_and_unknown_names(lib):
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    assert dc.dump_table(f"{lib.ns}::f") == dc.dump_table(op) == op.dump_table()
    assert dc.dump_state(f"{lib.ns}::f.default") == op.dump_state()
    for dump in (dc.dump_table, dc.dump_state):  # torch prints "" for an unknown operator
        assert dump(f"{lib.ns}::nope") == ""


def test_dump_order_is_undefined_then_full_iteration():
    assert DUMP_ORDER[0] == D.Undefined
    assert DUMP_ORDER[1:] == tuple(dc.DispatchKeySet.full())
    assert set(DUMP_ORDER) == set(RUNTIME_KEYS)
    assert DUMP_ORDER.index(D.CPU) < DUMP_ORDER.index(D.Meta) < DUMP_ORDER.index(D.FPGA)
    assert DUMP_ORDER.index(D.NestedTensorMeta) < DUMP_ORDER.index(D.BackendSelect)


# --- built-in fallbacks (OperatorEntry.cpp, VariableFallbackKernel.cpp) -----------------------------------------------
FALLTHROUGH = {"BackendSelect", "ADInplaceOrView", "AutocastCPU", "AutocastMTIA", "AutocastMAIA",
               "AutocastXPU", "AutocastMPS", "AutocastCUDA", "FuncTorchVmapMode", "VmapMode"}
AUTOGRAD = {"AutogradOther", "AutogradCPU", "AutogradXPU", "AutogradCUDA", "AutogradMTIA", "AutogradMAIA",
            "AutogradXLA", "AutogradLazy", "AutogradMPS", "AutogradMeta", "AutogradHPU",
            "AutogradPrivateUse1"}
REAL = {"Meta", "Python", "FuncTorchDynamicLayerBackMode", "Functionalize", "Conjugate", "Negative",
        "ZeroTensor", "Tracer", "FuncTorchBatched", "BatchedNestedTensor", "Batched", "FuncTorchGradWrapper",
        "PythonTLSSnapshot", "FuncTorchDynamicLayerFrontMode", "PreDispatch", "PythonDispatcher"}


def test_builtin_fallbacks_are_pytorchs():
    fallbacks = dc.get_dispatcher().fallbacks
    owners = {"dispatchcore/dispatcher.py", "dispatchcore/modes.py"}
    builtin = {k.name: reg for k, reg in fallbacks.items() if reg.where.file in owners}
    assert set(builtin) == FALLTHROUGH | AUTOGRAD | REAL
    assert {name for name, reg in builtin.items() if reg.fallthrough} == FALLTHROUGH
    for absent in ("Fake", "AutogradHIP", "AutogradVE", "AutogradPrivateUse2", "AutogradNestedTensor",
                   "CPU", "Undefined"):
        assert D[absent] not in fallbacks
    assert all(reg.boxed_fallback and reg.library == "_" for reg in builtin.values())


def test_the_python_key_registers_its_fallback_through_library_from_modes():
    reg = dc.get_dispatcher().fallbacks[D.Python]
    assert reg.where.file == "dispatchcore/modes.py"  # the module that owns the key, as a backend would
    assert reg.library == "_" and reg.with_keyset and reg.bind is not None  # the bound fast form


def test_fallbacks_property_is_a_snapshot():
    snapshot = dc.get_dispatcher().fallbacks
    snapshot.pop(D.Meta)
    assert D.Meta in dc.get_dispatcher().fallbacks


def test_schema_only_op_table_lists_the_autograd_fallbacks(lib):
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    autograd = {k.name for k in RUNTIME_KEYS if op.table_entry(k)[1] == "backend fallback"
                and k.name.startswith("Autograd")}
    assert autograd == AUTOGRAD
    assert op.table_entry(D.CPU) == (None, "missing")
    assert op.table_entry(D.Undefined) == (None, "missing")


def test_autograd_fallback_redispatches_below_autograd(lib, carrier, mode_nothing):
    lib.define("f(Tensor x) -> Tensor")
    seen = []
    lib.impl("f", lambda ks, x: seen.append(ks) or "cpu", "CPU", with_keyset=True)
    lib.impl("f", lambda ks, x: seen.append(ks) or "meta", "Meta", with_keyset=True)
    op = dc.find_op(f"{lib.ns}::f")
    assert op(carrier("CPU")) == "cpu"
    assert op(carrier("Meta")) == "meta"
    assert seen == [dc.DispatchKeySet("CPU"), dc.DispatchKeySet("Meta")]


def test_autograd_fallback_modes():
    assert dc.get_autograd_fallback_mode() in ("warn", "nothing")
    previous = dc.get_autograd_fallback_mode()
    try:
        dc.set_autograd_fallback_mode("nothing")
        assert dc.get_autograd_fallback_mode() == "nothing"
        with pytest.raises(RuntimeError, match=r"^NYI: mode='error'$"):
            dc.set_autograd_fallback_mode("error")
        with pytest.raises(ValueError, match="Unsupported autograd fallback mode 'loud'"):
            dc.set_autograd_fallback_mode("loud")
        assert dc.get_autograd_fallback_mode() == "nothing"
    finally:
        dc.set_autograd_fallback_mode(previous)


@pytest.mark.parametrize("key", sorted(REAL - {"Meta"}))
def test_pass_through_fallbacks_behave_as_if_the_feature_were_off(lib, carrier, key):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda ks, x: ks, "CPU", with_keyset=True)
    op = dc.find_op(f"{lib.ns}::f")
    with dc.IncludeDispatchKeyGuard(key):
        assert op(carrier("CPU")) == dc.DispatchKeySet("CPU")


def test_meta_fallback_raises_dispatch_error(lib, carrier):
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(dc.DispatchError) as info:
        dc.find_op(f"{lib.ns}::f")(carrier("Meta"))
    assert isinstance(info.value, NotImplementedError)
    assert str(info.value).startswith(
        f"{lib.ns}::f: attempted to run this operator with Meta tensors, but there was no fake impl or "
        "Meta kernel registered. You may have run into this message while using an operator with PT2 "
        "compilation APIs (torch.compile/torch.export); in order to use this operator with those APIs "
        "you'll need to add a fake impl. Please see the following for next steps:  "
        "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html\n")
    assert f"Library('{lib.ns}', 'IMPL').impl('f', meta_kernel, 'Meta')" in str(info.value)


# --- fallback registration ----------------------------------------------------------------------
def test_registering_a_fallback_refreshes_every_op(lib, global_lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: "g", "AutogradNestedTensor")
    lib.impl("f", lambda x: "cia", "CompositeImplicitAutograd")
    lib.define("h(Tensor x) -> Tensor")
    ops = [dc.find_op(f"{lib.ns}::{n}") for n in "fgh"]
    handle = global_lib.fallback(lambda op, *args: "fb", "AutogradNestedTensor")
    fallthrough = global_lib.fallback(dc.fallthrough_kernel, "Fake")
    for op in ops:
        masks, table = op._dispatch[:2]
        assert masks == OperatorHandle._compute_masks(op._entries)
        assert {k for k in RUNTIME_KEYS if table[k] is not None} == set(op._entries)
    assert all(not op._dispatch[0][1] & dc.DispatchKeySet("Fake").raw_repr() for op in ops)
    fallthrough.remove()
    assert all(op._dispatch[0][1] & dc.DispatchKeySet("Fake").raw_repr() for op in ops)
    labels = [op.table_entry("AutogradNestedTensor")[1] for op in ops]
    assert labels == ["math kernel", "kernel", "backend fallback"]
    for op in ops:
        fallbacks = dc.get_dispatcher()._fallbacks
        assert all(op.table_entry(k) == compute_table_entry(op._kernels, fallbacks, k) for k in RUNTIME_KEYS)
    handle.remove()
    assert [op.table_entry("AutogradNestedTensor")[1] for op in ops] == ["math kernel", "kernel", "missing"]


def test_fallback_reaches_ops_defined_later(global_lib, lib, carrier):
    global_lib.fallback(lambda op, *args: f"fallback for {op.qualname}", "Fake")
    lib.define("late(Tensor x) -> Tensor")
    assert dc.find_op(f"{lib.ns}::late")(carrier(dc.DispatchKeySet(["Fake", "CPU"]))) == (
        f"fallback for {lib.ns}::late")


def test_deregister_fallback_ignores_a_stale_registration(global_lib):
    handle = global_lib.fallback(lambda op, *args: 1, "Fake")
    reg = dc.get_dispatcher().fallbacks[D.Fake]
    handle.remove()
    other = global_lib.fallback(lambda op, *args: 2, "Fake")
    dc.get_dispatcher().deregister_fallback(reg)  # not the current one: nothing happens
    assert dc.get_dispatcher().fallbacks[D.Fake] is not reg
    other.remove()
    assert D.Fake not in dc.get_dispatcher().fallbacks


def test_dispatcher_module_exports():
    assert dispatcher_module.get_dispatcher() is dc.get_dispatcher()
    assert set(dispatcher_module.__all__) <= set(dir(dispatcher_module))


# --- registry reads while another thread registers ---------------------------------------------
def test_registry_reads_are_safe_while_another_thread_registers(ns):
    """operator_names/operators/overloads/fallbacks/registrations/dumps walk the registry under
    its lock: no "dictionary changed size during iteration" from a concurrent define/destroy."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:
        i = 0
        try:
            while not stop.is_set():
                with dc.Library(f"{ns}_{i}", "DEF") as lib:
                    lib.define("f(Tensor x) -> Tensor")
                    lib.impl("f", lambda x: x, "CPU")
                    lib.impl("f", lambda x: x, "AutogradCPU")
                i += 1
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    with dc.Library(ns, "DEF") as lib:
        lib.define("g(Tensor x) -> Tensor")
        op = dc.find_op(f"{ns}::g")
        dispatcher = dc.get_dispatcher()
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # switch threads as often as possible
        worker = threading.Thread(target=churn)
        worker.start()
        try:
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                dispatcher.operator_names()
                list(dispatcher.operators())
                dispatcher.overloads(ns, "g")
                dispatcher.fallbacks  # noqa: B018 - the read is the test
                op.registrations  # noqa: B018
                op.dump_state()
                getattr(dc.ops, ns).g  # noqa: B018
        finally:
            stop.set()
            worker.join()
            sys.setswitchinterval(interval)
    assert errors == []
