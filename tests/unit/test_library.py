"""library.py: DEF/FRAGMENT/IMPL rules, kernel checks, fallbacks, overrides, lifetime (torch/library.py)."""

from __future__ import annotations

import gc
import re
import sys
import warnings

import pytest

import dispatchcore as dc
from dispatchcore.keys import RUNTIME_KEYS, DispatchKey
from dispatchcore.library import RegistrationHandle

D = DispatchKey


@pytest.fixture(autouse=True)
def _no_backend_discovery(monkeypatch):
    """Registry tests must not depend on which backends are installed: no lazy discovery."""
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)


@pytest.fixture
def quiet_override():
    """Pretend the once-per-process override warning was already issued."""
    dispatcher = dc.get_dispatcher()
    previous = dispatcher._warned_override
    dispatcher._warned_override = True
    yield
    dispatcher._warned_override = previous


@pytest.fixture
def fresh_override():
    """Let the next override warn again, as in a fresh process."""
    dispatcher = dc.get_dispatcher()
    previous = dispatcher._warned_override
    dispatcher._warned_override = False
    yield
    dispatcher._warned_override = previous


@pytest.fixture
def global_lib():
    library = dc.Library("_", "IMPL")
    yield library
    library._destroy()


def snapshot(*ops: dc.OperatorHandle) -> tuple:
    """Everything a registration may touch: registrations, tables, masks, fallbacks, bookkeeping."""
    dispatcher = dc.get_dispatcher()
    per_op = tuple(
        (op.schema, op.def_location, {k: list(v) for k, v in op._kernels.items()}, dict(op._entries),
         list(op._dispatch[0]), [e if e is None else e[1] for e in op._dispatch[1]])
        for op in ops
    )
    return (per_op, dict(dispatcher._fallbacks), set(dispatcher._python_impls),
            dict(dispatcher._def_libraries), dispatcher.operator_names())


def loc(library: dc.Library) -> str:
    return str(library.location)


def loc_of_line(offset: int) -> str:
    """``file:line`` of the caller's line ``offset`` lines away (negative: above)."""
    frame = sys._getframe(1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno + offset}"


# --- Library kinds ------------------------------------------------------------------------------
def test_bad_kind(ns):
    with pytest.raises(ValueError, match=r"^Unsupported kind: BLAH$"):
        dc.Library(ns, "BLAH")


@pytest.mark.parametrize("kind", ["DEF", "FRAGMENT"])
def test_prim_is_reserved_for_definitions(kind):
    with pytest.raises(ValueError, match=r"^prim is a reserved namespace\. Please try creating a library "
                                         r"with another name\.$"):
        dc.Library("prim", kind)


def test_prim_impl_is_allowed():
    dc.Library("prim", "IMPL")._destroy()


def test_second_def_library(ns):
    first = dc.Library(ns, "DEF")
    try:
        with pytest.raises(RuntimeError) as info:
            dc.Library(ns, "DEF")
        assert re.fullmatch(
            rf"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all "
            r"of your definitions in a single TORCH_LIBRARY block\.  If you were trying to specify "
            r"implementations, consider using TORCH_LIBRARY_IMPL \(which can be duplicated\)\.  If you "
            r"really intended to define operators for a single namespace in a distributed way, you can "
            r"use TORCH_LIBRARY_FRAGMENT to explicitly indicate this\.  Previous registration of "
            rf"TORCH_LIBRARY was registered at {re.escape(loc(first))}; latest registration was "
            r"registered at \S+test_library\.py:\d+", str(info.value))
        assert isinstance(info.value, dc.RegistrationError)
    finally:
        first._destroy()
    dc.Library(ns, "DEF")._destroy()  # destroying the first frees the namespace


def test_fragments_may_repeat_and_define(ns, carrier):
    with dc.Library(ns, "DEF") as lib, dc.Library(ns, "FRAGMENT") as a, dc.Library(ns, "FRAGMENT") as b:
        lib.define("f(Tensor x) -> Tensor")
        assert a.define("g(Tensor x) -> Tensor") == "g"
        assert b.define(f"{ns}::h.ov(Tensor x) -> Tensor") == "h"
        a.impl("h.ov", lambda x: "h", "CPU")
        assert dc.ops.__getattr__(ns).h.ov(carrier()) == "h"


def test_define_returns_the_name_without_overload(lib):
    assert lib.define("scale.Tensor(Tensor x, Tensor s, *, float eps=0.0) -> Tensor") == "scale"
    assert dc.find_op(f"{lib.ns}::scale.Tensor").schema.overload_name == "Tensor"


@pytest.mark.parametrize("kind", ["DEF", "FRAGMENT"])
def test_duplicate_define(ns, kind):
    with dc.Library(ns, kind) as lib:
        lib.define("foo(Tensor x) -> Tensor")
        first = dc.find_op(f"{ns}::foo").def_location
        with pytest.raises(RuntimeError) as info:
            lib.define("foo(Tensor x) -> Tensor")
        assert re.fullmatch(
            rf"Tried to register an operator \({ns}::foo\(Tensor x\) -> Tensor\) with the same name and "
            r"overload name multiple times\. Each overload's schema should only be registered with a "
            r"single call to def\(\)\. Duplicate registration: registered at \S+test_library\.py:\d+\. "
            rf"Original registration: registered at {re.escape(str(first))}", str(info.value))


def test_define_inside_impl(ns):
    with dc.Library(ns, "IMPL") as lib, pytest.raises(RuntimeError) as info:
        lib.define("bar(Tensor x) -> Tensor")
    assert str(info.value) == (
        'def("bar"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  All def()s should '
        "be placed in the (unique) TORCH_LIBRARY block for their namespace.  (Error occurred while "
        f"processing TORCH_LIBRARY_IMPL block at {loc(lib)})")


@pytest.mark.parametrize("kind,block", [("DEF", "TORCH_LIBRARY"), ("FRAGMENT", "TORCH_LIBRARY_FRAGMENT")])
def test_define_namespace_mismatch(ns, kind, block):
    with dc.Library(ns, kind) as lib, pytest.raises(RuntimeError) as info:
        lib.define("other::zz(Tensor x) -> Tensor")
    assert str(info.value) == (
        f"Explicitly provided namespace (other) in schema string does not match namespace of enclosing "
        f"{block} block ({ns}).  Move this definition to the (unique) TORCH_LIBRARY block "
        "corresponding to this namespace (and consider deleting the namespace from your schema "
        f"string.)  (Error occurred while processing {block} block at {loc(lib)})")


def test_invalid_alias_analysis(lib):
    with pytest.raises(RuntimeError, match=r"^Invalid alias_analysis type PURE_FUNCTION$"):
        lib.define("f(Tensor x) -> Tensor", alias_analysis="PURE_FUNCTION")
    lib.define("g(Tensor x) -> Tensor", alias_analysis="CONSERVATIVE")
    assert "alias analysis kind: CONSERVATIVE\n" in dc.dump_state(f"{lib.ns}::g")


def test_schema_syntax_error_registers_nothing(lib):
    before = snapshot()
    with pytest.raises(dc.SchemaError):
        lib.define("f(Tensor x -> Tensor")
    assert snapshot() == before


@pytest.mark.parametrize("kind,block", [("IMPL", "TORCH_LIBRARY_IMPL"), ("DEF", "TORCH_LIBRARY"),
                                        ("FRAGMENT", "TORCH_LIBRARY_FRAGMENT")])
def test_impl_namespace_mismatch(ns, kind, block):
    with dc.Library(ns, kind) as lib, pytest.raises(RuntimeError) as info:
        lib.impl("other::foo", lambda x: x, "CPU")
    assert str(info.value) == (
        f'impl("other::foo", ...): Explicitly provided namespace (other) in operator name does not match '
        f"namespace of enclosing {block} block ({ns}).  Move this definition to the {block} block "
        "corresponding to this namespace (and consider deleting the namespace from your schema string.)"
        f"  (Error occurred while processing {block} block at {loc(lib)})")


def test_impl_library_key_mismatch(lib, carrier, quiet_override):
    lib.define("foo(Tensor x) -> Tensor")
    with dc.Library(lib.ns, "IMPL", "CPU") as cpu:
        with pytest.raises(RuntimeError) as info:
            cpu.impl("foo", lambda x: x, "CUDA")
        assert str(info.value) == (
            'impl("foo", ...): Explicitly provided dispatch key (CUDA) is inconsistent with the dispatch '
            "key of the enclosing TORCH_LIBRARY_IMPL block (CPU).  Please declare a separate "
            "TORCH_LIBRARY_IMPL block for this dispatch key and move your impl() there.  (Error occurred "
            f"while processing TORCH_LIBRARY_IMPL block at {loc(cpu)})")
        cpu.impl("foo", lambda x: "cpu")  # no key: the library's
        cpu.impl(f"{lib.ns}::foo", lambda x: "cpu2", "CPU")
        assert dc.find_op(f"{lib.ns}::foo").has_kernel_for_dispatch_key("CPU")
        assert repr(cpu) == f"Library(kind=IMPL, ns={lib.ns}, dispatch_key=CPU)"


def test_unknown_dispatch_key(lib):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=r"^could not parse dispatch key: NotAKey"):
        lib.impl("foo", lambda x: x, "NotAKey")
    with pytest.raises(RuntimeError, match=r"^could not parse dispatch key: NotAKey"):
        dc.Library(lib.ns, "IMPL", "NotAKey")


def test_impl_without_key_is_composite_implicit(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x)
    assert list(dc.find_op(f"{lib.ns}::foo").registrations) == [D.CompositeImplicitAutograd]


def test_impl_to_undefined_is_a_catch_all(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "Undefined")
    assert list(dc.find_op(f"{lib.ns}::foo").registrations) == [D.CompositeImplicitAutograd]


@pytest.mark.parametrize("key", ["Dense", "AutogradFunctionality", "Sparse"])
def test_impl_at_a_per_backend_functionality_key_is_kept_but_fills_no_slot(lib, key):
    """As in torch: dump_state lists the kernel; no runtime key's entry is that kernel."""
    lib.define("foo(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::foo")
    table = op.dump_table()
    lib.impl("foo", lambda x: x, key)
    assert op.dump_state().splitlines()[4] == f"{key}: registered at {loc_of_line(-1)} :: (none) [ boxed ]"
    assert op.dump_table() == table


def test_a_dense_kernel_counts_as_a_backend_kernel_for_autograd_keys(lib):
    """torch 2.13: CompositeImplicitAutograd + Dense leaves AutogradCPU at its backend fallback."""
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "CompositeImplicitAutograd")
    op = dc.find_op(f"{lib.ns}::foo")
    assert op.table_entry("AutogradCPU")[1] == "math kernel"
    handle = lib.impl("foo", lambda x: x, "Dense")
    assert op.table_entry("AutogradCPU")[1] == op.table_entry("AutogradCUDA")[1] == "backend fallback"
    assert op.table_entry("CPU")[1] == op.table_entry("AutogradOther")[1] == "math kernel"
    handle.remove()
    assert op.table_entry("AutogradCPU")[1] == "math kernel"


@pytest.mark.parametrize("key", ["CatchAll", "DefaultBackend", "StartOfDenseBackends", "EndOfFunctionalityKeys"])
def test_key_names_torch_cannot_parse_are_refused(lib, key):
    """CatchAll and DefaultBackend are enum aliases, the others range markers: torch parses none."""
    lib.define("foo(Tensor x) -> Tensor")
    before = snapshot(dc.find_op(f"{lib.ns}::foo"))
    with pytest.raises(dc.RegistrationError, match=rf"^could not parse dispatch key: {key}$") as info:
        lib.impl("foo", lambda x: x, key)
    assert info.value.__context__ is None and info.value.__cause__ is None
    assert snapshot(dc.find_op(f"{lib.ns}::foo")) == before
    with pytest.raises(RuntimeError, match=rf"^could not parse dispatch key: {key}$"):
        dc.Library(lib.ns, "IMPL", key)


def test_impl_before_def_makes_a_schema_less_entry(ns, carrier):
    impl = dc.Library(ns, "IMPL")
    impl.impl("foo", lambda x: "cpu", "CPU")
    op = dc.get_dispatcher()._ops[f"{ns}::foo"]
    assert op.dump_state() == (f"name: {ns}::foo\nschema: (none)\n"
                               f"CPU: registered at {loc_of_line(-3)} :: (none) [ boxed ]\n")
    assert dc.dump_table(f"{ns}::foo").splitlines()[0] == f"CPU: registered at {loc_of_line(-4)} [kernel]"
    assert f"{ns}::foo" not in dc.get_dispatcher().operator_names()
    with pytest.raises(LookupError, match=rf"^Could not find schema for {ns}::foo\. but we found an "
                                          r"implementation; did you forget to def\(\) the operator\?"):
        dc.find_op(f"{ns}::foo")
    assert not hasattr(getattr(dc.ops, ns), "foo")
    with pytest.raises(RuntimeError, match="has no schema"):
        op(carrier())
    lib = dc.Library(ns, "DEF")
    lib.define("foo(Tensor x) -> Tensor")
    assert dc.find_op(f"{ns}::foo") is op and getattr(dc.ops, ns).foo(carrier()) == "cpu"
    lib._destroy()
    assert op.dump_state().splitlines()[1] == "schema: (none)" and not hasattr(getattr(dc.ops, ns), "foo")
    impl._destroy()
    assert dc.dump_state(f"{ns}::foo") == dc.dump_table(f"{ns}::foo") == op.dump_state() == ""


def test_define_checks_kernels_registered_before_it(ns, carrier):
    impl = dc.Library(ns, "IMPL")
    impl.impl("foo", lambda x, n=1: "cpu", "CPU")
    op = dc.get_dispatcher()._ops[f"{ns}::foo"]
    lib = dc.Library(ns, "DEF")
    before = snapshot(op)
    with pytest.raises(dc.RegistrationError) as at_define:
        lib.define("foo(Tensor x, int n=2) -> Tensor")
    assert snapshot(op) == before and lib._handles[1:] == []
    assert at_define.value.__context__ is None
    with dc.Library(ns + "x", "DEF") as other:  # the same kernel, impl after def: the same text
        other.define("foo(Tensor x, int n=2) -> Tensor")
        with pytest.raises(dc.RegistrationError) as at_impl:
            other.impl("foo", lambda x, n=1: "cpu", "CPU")
    assert str(at_define.value) == str(at_impl.value)
    assert str(at_define.value).startswith("impl('foo', ..., 'CPU'): kernel ")
    lib.define("foo(Tensor x, int n=1) -> Tensor")  # a schema the kernel fits
    assert op(carrier()) == "cpu"
    lib._destroy()
    impl._destroy()


def test_a_redefinition_after_the_def_was_removed_checks_the_remaining_kernels(ns):
    impl = dc.Library(ns, "IMPL")
    with dc.Library(ns, "DEF") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        impl.impl("foo", lambda x: x, "CPU")
    with dc.Library(ns, "FRAGMENT") as lib:
        with pytest.raises(dc.RegistrationError, match=r"accepts 1 positional argument\(s\)"):
            lib.define("foo(Tensor x, Tensor y) -> Tensor")
        assert dc.dump_state(f"{ns}::foo").splitlines()[1] == "schema: (none)"
    impl._destroy()


def test_impl_takes_a_name_not_a_schema(lib):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(dc.RegistrationError, match=r"takes an operator name such as 'add.Tensor'"):
        lib.impl("foo(Tensor x) -> Tensor", lambda x: x, "CPU")


def test_impl_dot_default_names_the_unnamed_overload(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo.default", lambda x: "ok", "CPU")
    assert dc.find_op(f"{lib.ns}::foo")(carrier()) == "ok"


# --- decorator, with_keyset ---------------------------------------------------------------------
def test_decorator_forms_return_the_function(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")

    @lib.impl("foo", dispatch_key="CPU")
    def cpu(x):
        return "cpu"

    @lib.impl("foo", "Meta")
    def meta(x):
        return "meta"

    @lib.impl("foo", "AutogradCPU", with_keyset=True)
    def autograd(ks, x):
        return ks

    assert cpu(None) == "cpu" and meta(None) == "meta"
    op = dc.find_op(f"{lib.ns}::foo")
    assert op(carrier("Meta")) == "meta"
    assert op(carrier("CPU")) == dc.DispatchKeySet(["CPU", "AutogradCPU"])


def test_decorator_on_library_key(ns, carrier):
    with dc.Library(ns, "DEF") as lib, dc.Library(ns, "IMPL", "Meta") as meta_lib:
        lib.define("foo(Tensor x) -> Tensor")

        @meta_lib.impl("foo")
        def meta(x):
            return "meta"

        assert dc.find_op(f"{ns}::foo")(carrier("Meta")) == "meta"


# --- fallbacks ------------------------------------------------------------------------------------
def test_fallback_only_in_the_global_namespace(lib):
    with pytest.raises(RuntimeError) as info:
        lib.fallback(lambda op, *args: None, "Fake")
    assert str(info.value) == ('Fallback can only be registered using library fragment on the global '
                               f'namespace "_" but it is {lib.ns}')


def test_duplicate_fallback(global_lib):
    first = global_lib.fallback(lambda op, *args: None, "Fake")
    before = snapshot()
    with pytest.raises(RuntimeError) as info:
        global_lib.fallback(lambda op, *args: None, "Fake")
    assert re.match(
        r"Tried to register multiple backend fallbacks for the same dispatch key Fake; previous "
        r"registration registered at \S+test_library\.py:\d+, new registration registered at "
        r"\S+test_library\.py:\d+", str(info.value))
    assert first.active
    assert snapshot() == before


def test_fallback_on_a_builtin_key_is_a_duplicate(global_lib):
    with pytest.raises(RuntimeError, match=r"^Tried to register multiple backend fallbacks for the same "
                                           r"dispatch key AutogradCPU; previous registration registered at "
                                           r"dispatchcore/dispatcher\.py:\d+, new registration"):
        global_lib.fallback(lambda op, *args: None, "AutogradCPU")


def test_fallback_refuses_alias_keys_and_non_callables(global_lib):
    with pytest.raises(dc.RegistrationError, match="alias key Autograd"):
        global_lib.fallback(lambda op, *args: None, "Autograd")
    with pytest.raises(dc.RegistrationError, match="fallback kernel must be callable"):
        global_lib.fallback(3, "Fake")


def test_boxed_fallback_signatures(lib, global_lib, carrier):
    lib.define("foo(Tensor x, *, int n=1) -> Tensor")
    lib.define("bar(Tensor x) -> Tensor")
    lib.impl("bar", lambda x: "bar's own Fake kernel", "Fake")
    calls = []
    global_lib.fallback(lambda op, *args, **kwargs: calls.append((op, args, kwargs)) or "plain", "Fake")
    fake = carrier(dc.DispatchKeySet(["Fake", "CPU"]))
    foo, bar = dc.find_op(f"{lib.ns}::foo"), dc.find_op(f"{lib.ns}::bar")
    assert foo(fake, n=3) == "plain"
    assert calls == [(foo, (fake,), {"n": 3})]
    assert bar(fake) == "bar's own Fake kernel"  # the fallback serves only ops without a kernel
    assert foo.table_entry("Fake")[1] == "backend fallback"
    assert bar.table_entry("Fake")[1] == "kernel"


def test_boxed_fallback_with_keyset(lib, global_lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    calls = []
    global_lib.fallback(lambda ks, op, *args: calls.append((ks, op, args)) or "ks", "Fake",
                        with_keyset=True)
    fake = carrier(dc.DispatchKeySet(["Fake", "CPU"]))
    foo = dc.find_op(f"{lib.ns}::foo")
    assert foo(fake) == "ks"
    assert calls == [(dc.DispatchKeySet(["CPU", "Fake"]), foo, (fake,))]


def test_fallthrough_fallback_skips_the_key_for_every_op(lib, global_lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: "cpu", "CPU")
    foo = dc.find_op(f"{lib.ns}::foo")
    fake = carrier(dc.DispatchKeySet(["Fake", "CPU"]))
    with pytest.raises(NotImplementedError, match="'Fake' backend"):
        foo(fake)
    handle = global_lib.fallback(dc.fallthrough_kernel, "Fake")
    assert foo(fake) == "cpu"
    assert re.search(r"^Fake: fallthrough registered at \S+test_library\.py:\d+ \[backend fallback\]$",
                     foo.dump_table(), re.M)
    handle.remove()
    assert "Fake:" not in foo.dump_table()
    with pytest.raises(NotImplementedError, match="'Fake' backend"):
        foo(fake)


# --- fallthrough semantics (c10's fallthrough_kernel) ---------------------------------------------------------------
@pytest.mark.parametrize("key", ["AutogradCPU", "Autograd"])
def test_per_op_autograd_fallthrough_runs_backend_with_autograd_not_excluded(lib, carrier, key):
    lib.define("foo(Tensor x) -> Tensor")
    seen = []
    lib.impl("foo", lambda ks, x: seen.append((ks, dc.tls_is_dispatch_key_excluded("AutogradCPU"))) or 1,
             "CPU", with_keyset=True)
    lib.impl("foo", dc.fallthrough_kernel, key)
    assert dc.find_op(f"{lib.ns}::foo")(carrier("CPU")) == 1
    assert seen == [(dc.DispatchKeySet("CPU"), False)]


def test_fallthrough_at_the_lowest_key_leaves_undefined(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", dc.fallthrough_kernel, "CPU")
    with pytest.raises(NotImplementedError, match=r"^There were no tensor arguments to this function"):
        dc.find_op(f"{lib.ns}::foo")(carrier("CPU"))


def test_per_backend_fallthrough_applies_to_its_backend_only(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: "cpu", "CPU")
    lib.impl("foo", lambda x: "meta", "Meta")
    lib.impl("foo", lambda x: "autograd meta", "AutogradMeta")
    lib.impl("foo", lambda x: "autograd cpu", "AutogradCPU")
    foo = dc.find_op(f"{lib.ns}::foo")
    assert foo(carrier("CPU")) == "autograd cpu"
    with dc.Library(lib.ns, "IMPL") as ft:
        with_warning_suppressed(lambda: ft.impl("foo", dc.fallthrough_kernel, "AutogradCPU"))
        assert foo(carrier("CPU")) == "cpu"
        assert foo(carrier("Meta")) == "autograd meta"
    assert foo(carrier("CPU")) == "autograd cpu"


def with_warning_suppressed(fn):
    dispatcher = dc.get_dispatcher()
    previous = dispatcher._warned_override
    dispatcher._warned_override = True
    try:
        return fn()
    finally:
        dispatcher._warned_override = previous


def test_redispatch_onto_a_fallthrough_raises_the_internal_assert(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: "cpu", "CPU")
    foo = dc.find_op(f"{lib.ns}::foo")
    with pytest.raises(RuntimeError, match=r"^0 INTERNAL ASSERT FAILED at \"aten/src/ATen/core/boxing/"
                                           r"KernelFunction\.cpp\":14, please report a bug to PyTorch\. "
                                           r"fallthrough_kernel was executed but it should have been "
                                           r"short-circuited by the dispatcher\."):
        foo.redispatch(dc.tensor_keyset("CPU"), carrier("CPU"))


# --- overrides ----------------------------------------------------------------------------------
def test_override_warns_once_per_process_with_torchs_text(lib, fresh_override, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("bar(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: 1, "CPU")
    op = dc.find_op(f"{lib.ns}::foo")
    with pytest.warns(UserWarning) as record:
        lib.impl("foo", lambda x: 2, "CPU")  # the line the warning points at
    assert len(record) == 1
    new = op.registrations[D.CPU][0]
    assert str(record[0].message) == (
        "Warning only once for all operators,  other operators may also be overridden.\n"
        "  Overriding a previously registered kernel for the same operator and the same dispatch key\n"
        f"  operator: {lib.ns}::foo(Tensor x) -> Tensor\n"
        f"    registered at {op.def_location}\n"
        "  dispatch key: CPU\n"
        "  previous kernel: no debug info\n"
        f"       new kernel: {new.debug} (Triggered internally at "
        "aten/src/ATen/core/dispatch/OperatorEntry.cpp:208.)")
    assert record[0].filename == __file__ and record[0].lineno == new.where.line
    assert op(carrier()) == 2
    lib.impl("bar", lambda x: 1, "CPU")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib.impl("foo", lambda x: 3, "CPU")  # once per process: silent now
        lib.impl("bar", lambda x: 2, "CPU")
    assert [r.kernel(None) for r in op.registrations[D.CPU]] == [3, 2, 1]


@pytest.mark.parametrize("key", ["Meta", "MTIA"])
def test_override_warning_is_suppressed_for_meta_and_mtia(lib, fresh_override, key):
    lib.define("foo(Tensor x) -> Tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib.impl("foo", lambda x: 1, key)
        lib.impl("foo", lambda x: 2, key)
    assert dc.get_dispatcher()._warned_override is False


def test_allow_override_false(lib, quiet_override):
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("ov.two(Tensor x) -> Tensor")
    with dc.Library(lib.ns, "IMPL") as first:
        first.impl("foo", lambda x: 1, "CPU")
        first.impl("ov.two", lambda x: 1, "CPU")
        before = snapshot(dc.find_op(f"{lib.ns}::foo"))
        with pytest.raises(RuntimeError) as info:
            lib.impl("foo", lambda x: 2, "CPU", allow_override=False)
        assert str(info.value) == (
            "This is not allowed since there's already a kernel registered from python overriding foo's "
            f"behavior for CPU dispatch key and {lib.ns} namespace.")
        assert snapshot(dc.find_op(f"{lib.ns}::foo")) == before
        with pytest.raises(RuntimeError, match=r"overriding ov\.two's behavior for CPU dispatch key"):
            lib.impl("ov.two", lambda x: 2, "CPU", allow_override=False)
        lib.impl("foo", lambda x: 2, "Meta", allow_override=False)  # another key is fine
        lib.impl("foo", lambda x: 3, "CPU")  # allow_override=True (default) overrides
    # the CPU kernel of lib remains; destroying it frees the key
    handle = dc.find_op(f"{lib.ns}::foo").registrations[D.CPU]
    assert len(handle) == 1
    lib._destroy()


def test_allow_override_after_the_kernel_is_gone(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: 1, "CPU").remove()
    lib.impl("foo", lambda x: 2, "CPU", allow_override=False)


# --- failed registrations change nothing ----------------------------------------------------------
@pytest.mark.parametrize("case", [
    "arity", "bad default", "CatchAll", "unknown key", "key mismatch", "namespace", "not callable",
    "non-runtime key", "kwarg-only missing", "meta over composite", "packet",
])
def test_failed_impl_leaves_registry_and_tables_unchanged(lib, case):
    lib.define("foo(Tensor x, int n=1, *, bool flag=False) -> Tensor")
    lib.impl("foo", lambda x, n=1, *, flag=False: 0, "CPU")
    op = dc.find_op(f"{lib.ns}::foo")
    impl_lib = dc.Library(lib.ns, "IMPL", "Meta")
    attempts = {
        "arity": lambda: lib.impl("foo", lambda x: 1, "Meta"),
        "bad default": lambda: lib.impl("foo", lambda x, n=2, *, flag=False: 1, "Meta"),
        "CatchAll": lambda: lib.impl("foo", lambda x, n=1, *, flag=False: 1, "CatchAll"),
        "meta over composite": lambda: lib.impl("foo", lambda x, n=1, *, flag=False: 1, "Meta"),
        "packet": lambda: lib.impl(getattr(dc.ops, lib.ns).foo, lambda x, n=1, *, flag=False: 1, "Meta"),
        "unknown key": lambda: lib.impl("foo", lambda x, n=1, *, flag=False: 1, "NotAKey"),
        "key mismatch": lambda: impl_lib.impl("foo", lambda x, n=1, *, flag=False: 1, "CPU"),
        "namespace": lambda: lib.impl("zz::foo", lambda x, n=1, *, flag=False: 1, "CPU"),
        "not callable": lambda: lib.impl("foo", 3, "Meta"),
        "non-runtime key": lambda: lib.impl("foo", lambda x, n=1, *, flag=False: 1, "StartOfDenseBackends"),
        "kwarg-only missing": lambda: lib.impl("foo", lambda x, n=1: 1, "Meta"),
    }
    if case == "meta over composite":
        lib.impl("foo", lambda x, n=1, *, flag=False: 0, "CompositeImplicitAutograd")
    before = snapshot(op)
    handles = list(lib._handles)
    with pytest.raises((RuntimeError, TypeError)):
        attempts[case]()
    assert snapshot(op) == before
    assert lib._handles == handles
    impl_lib._destroy()


# --- kernel signature checks ----------------------------------------------------------------------
SCHEMA = "foo(Tensor x, int n=1, int[2] k=1, Tensor? y=None, *, bool flag=False, str mode='a') -> Tensor"


def good(x, n=1, k=(1, 1), y=None, *, flag=False, mode="a"):
    return "good"


def good_args(*args, **kwargs):
    return "args"


def good_keyset(ks, x, n=1, k=(1, 1), y=None, *, flag=False, mode="a"):
    return ks


@pytest.mark.parametrize("kernel,with_keyset,message", [
    (good, False, None),
    (good_args, False, None),
    (good_keyset, True, None),
    (lambda *args, **kw: 1, True, None),
    (max, False, None),  # no signature: nothing to check
    (lambda x: 1, False, r"accepts 1 positional argument\(s\) but the schema .* passes up to 4\. Give the "
                         r"kernel one parameter per schema argument"),
    (lambda x, n, k=(1, 1), y=None, *, flag=False, mode="a": 1, False,
     r"requires parameter 'n', but the schema .* lets callers omit 'n'\. Give 'n' the schema's default\."),
    (lambda x, n=1, k=(1, 1), y=None, z=None, *, flag=False, mode="a", req: 1, False,
     r"requires keyword 'req', which .* never passes\."),
    (lambda x, n=1, k=(1, 1), y=None, extra=None, *, flag=False, mode="a": 1, False, None),
    (lambda x, n=2, k=(1, 1), y=None, *, flag=False, mode="a": 1, False,
     r"gives 'n' the default 2, but the schema's default is 1\. Use the schema's default"),
    (lambda x, n=1, k=(2, 2), y=None, *, flag=False, mode="a": 1, False,
     r"gives 'k' the default \(2, 2\), but the schema's default is \[1, 1\]"),
    (lambda x, n=1, k=(1, 1), y=None, *, flag=False: 1, False,
     r"has no parameter 'mode' for the keyword-only argument of .*\. Add it \(after \*\) or accept "
     r"\*\*kwargs\."),
    (lambda x, n=1, k=(1, 1), y=None, *, flag, mode="a": 1, False,
     r"requires 'flag', but the schema .* lets callers omit it\. Give it the schema's default\."),
    (lambda x, n=1, k=(1, 1), y=None, *, flag=True, mode="a": 1, False,
     r"gives 'flag' the default True, but the schema's default is False"),
    (lambda x, n=1, k=(1, 1), y=None, *, mode="b", **kw: 1, False,
     r"gives 'mode' the default 'b', but the schema's default is 'a'"),
    (lambda *, ks, x=None: 1, True, r"with_keyset=True kernels take the DispatchKeySet first\."),
    (lambda: 1, True, r"with_keyset=True kernels take the DispatchKeySet first\."),
    (good, True, r"requires parameter|accepts|gives"),  # the keyset eats x: the rest shifts
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_kernel_signature_checks(lib, kernel, with_keyset, message):
    lib.define(SCHEMA)
    if message is None:
        lib.impl("foo", kernel, "CPU", with_keyset=with_keyset)
        assert dc.find_op(f"{lib.ns}::foo").has_kernel_for_dispatch_key("CPU")
    else:
        with pytest.raises(dc.RegistrationError, match=r"^impl\('foo', \.\.\., 'CPU'\): .*" + message):
            lib.impl("foo", kernel, "CPU", with_keyset=with_keyset)


def test_kernel_with_an_extra_required_parameter_is_refused(lib):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(dc.RegistrationError, match=r"requires parameter 'y', but the schema .* has no "
                                                   r"argument for it\."):
        lib.impl("foo", lambda x, y: 1, "CPU")


def test_kernel_check_hook_replaces_the_signature_check(lib):
    lib.define("foo(Tensor x) -> Tensor")
    calls = []

    def kernel(*args):
        return None

    kernel.__dispatchcore_kernel_check__ = lambda op, key, with_keyset: calls.append((op, key, with_keyset))
    lib.impl("foo", kernel, "CPU", with_keyset=True)
    assert calls == [(dc.find_op(f"{lib.ns}::foo"), D.CPU, True)]

    def refusing(*args):
        return None

    def refuse(op, key, with_keyset):
        raise dc.RegistrationError("refused by hook")

    refusing.__dispatchcore_kernel_check__ = refuse
    with pytest.raises(dc.RegistrationError, match="refused by hook"):
        lib.impl("foo", refusing, "Meta")
    assert not dc.find_op(f"{lib.ns}::foo").has_kernel_for_dispatch_key("Meta")


def test_fallthrough_kernel_skips_the_signature_check(lib):
    lib.define("foo(Tensor x, *, int n) -> Tensor")
    lib.impl("foo", dc.fallthrough_kernel, "AutogradCPU")


def test_kernels_are_checked_against_kwarg_only_tensors(lib):
    lib.define("foo(Tensor x, *, Tensor out) -> Tensor")
    lib.impl("foo", lambda x, *, out: out, "CPU")
    with pytest.raises(dc.RegistrationError, match="no parameter 'out'"):
        lib.impl("foo", lambda x: x, "Meta")


# --- lifetime -----------------------------------------------------------------------------------
def test_handles_remove_is_idempotent(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    handle = lib.impl("foo", lambda x: "cpu", "CPU")
    assert isinstance(handle, RegistrationHandle) and handle.active
    assert repr(handle) == f"<RegistrationHandle impl {lib.ns}::foo at CPU (active)>"
    handle.remove()
    handle.remove()
    assert not handle.active and repr(handle).endswith("(removed)>")
    assert not dc.find_op(f"{lib.ns}::foo").has_kernel_for_dispatch_key("CPU")
    lib._destroy()
    lib._destroy()


def test_destroy_removes_newest_first_and_restores_every_table(lib, quiet_override, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: "base", "CPU")
    op = dc.find_op(f"{lib.ns}::foo")
    before = snapshot(op)
    libs = []
    for i in range(3):
        extra = dc.Library(lib.ns, "IMPL")
        extra.impl("foo", lambda x, i=i: f"override {i}", "CPU")
        extra.impl("foo", lambda x, i=i: f"cia {i}", "CompositeImplicitAutograd")
        libs.append(extra)
    assert op(carrier()) == "override 2"
    libs[2]._destroy()
    assert op(carrier()) == "override 1"
    libs[0]._destroy()  # out of order: the newest remaining stays active
    assert op(carrier()) == "override 1"
    assert [r.kernel(None) for r in op.registrations[D.CPU]] == ["override 1", "base"]
    libs[1]._destroy()
    assert op(carrier()) == "base"
    assert snapshot(op) == before


def test_context_manager_destroys(ns, carrier):
    with dc.Library(ns, "DEF") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        op = dc.find_op(f"{ns}::foo")
    assert not op.is_defined
    with pytest.raises(LookupError):
        dc.find_op(f"{ns}::foo")


def test_unreferenced_libraries_are_garbage_collected(ns, carrier):
    """Like torch.library: dropping the last reference removes the registrations."""
    lib = dc.Library(ns, "DEF")
    lib.define("foo(Tensor x) -> Tensor")
    op = dc.find_op(f"{ns}::foo")
    impl = dc.Library(ns, "IMPL")
    impl.impl("foo", lambda x: "cpu", "CPU")
    fallbacks = dc.Library("_", "IMPL")
    fallbacks.fallback(lambda op, *args: "fake", "Fake")
    assert op(carrier()) == "cpu" and op.table_entry("Fake")[1] == "backend fallback"
    del impl, fallbacks
    gc.collect()
    assert not op.has_kernel_for_dispatch_key("CPU")
    assert D.Fake not in dc.get_dispatcher().fallbacks
    assert op.table_entry("Fake") == (None, "missing")
    del lib
    gc.collect()
    assert not op.is_defined and ns not in dc.get_dispatcher()._def_libraries
    dc.Library(ns, "DEF")._destroy()  # the namespace is free again


def test_destroying_the_def_keeps_other_libraries_kernels(ns, carrier):
    lib = dc.Library(ns, "DEF")
    lib.define("foo(Tensor x) -> Tensor")
    with dc.Library(ns, "IMPL") as impl:
        impl.impl("foo", lambda x: "cpu", "CPU")
        lib._destroy()
        assert dc.dump_state(f"{ns}::foo").splitlines()[:2] == [f"name: {ns}::foo", "schema: (none)"]
        assert "CPU: registered at" in dc.dump_state(f"{ns}::foo")
    assert dc.dump_state(f"{ns}::foo") == dc.dump_table(f"{ns}::foo") == ""  # torch prints "" too


def test_every_table_is_restored_after_a_library_with_fallbacks_and_overrides(lib, quiet_override):
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("bar(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: 1, "CompositeImplicitAutograd")
    lib.impl("bar", lambda x: 1, "CPU")
    ops = [dc.find_op(f"{lib.ns}::foo"), dc.find_op(f"{lib.ns}::bar")]
    before = snapshot(*ops)
    tables = [{k: op.table_entry(k) for k in RUNTIME_KEYS} for op in ops]
    extra = dc.Library(lib.ns, "FRAGMENT")
    extra.define("baz(Tensor x) -> Tensor")
    extra.impl("foo", lambda x: 2, "CompositeExplicitAutograd")
    extra.impl("bar", lambda x: 2, "CPU")
    extra.impl("bar", dc.fallthrough_kernel, "Autograd")
    global_lib = dc.Library("_", "IMPL")
    global_lib.fallback(dc.fallthrough_kernel, "Fake")
    global_lib._destroy()
    extra._destroy()
    assert snapshot(*ops) == before
    assert [{k: op.table_entry(k) for k in RUNTIME_KEYS} for op in ops] == tables


# --- operator objects and qualified names (torch's Library._resolve_op_name) ---------------------
def test_impl_takes_an_operator_object(lib, carrier):
    lib.define("foo.ov(Tensor x) -> Tensor")
    lib.define("foo(Tensor x) -> Tensor")
    ops = getattr(dc.ops, lib.ns)
    lib.impl(ops.foo.default, lambda x: "default", "CPU")
    lib.impl(ops.foo.ov, lambda x: "ov", "CPU")
    assert ops.foo.default(carrier()) == "default" and ops.foo.ov(carrier()) == "ov"


def test_impl_takes_a_qualified_name_of_its_namespace(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl(f"{lib.ns}::foo", lambda x: "cpu", "CPU")
    assert dc.find_op(f"{lib.ns}::foo")(carrier()) == "cpu"


def test_impl_of_another_namespaces_operator_object_is_refused_as_a_name(lib):
    with pytest.raises(dc.RegistrationError, match=r'^impl\("aten::neg", \.\.\.\): Explicitly provided '
                                                   r"namespace \(aten\) in operator name does not match "
                                                   rf"namespace of enclosing TORCH_LIBRARY block \({lib.ns}\)"):
        lib.impl(dc.ops.aten.neg.default, lambda x: x, "AutogradCPU")


def test_impl_of_a_packet_is_refused_with_torchs_text(lib):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(dc.RegistrationError, match=r"^impl should be passed either a name or an OpOverload "
                                                   r"object as the first argument, got <class "
                                                   r"'dispatchcore\.ops\.OpOverloadPacket'>$"):
        lib.impl(getattr(dc.ops, lib.ns).foo, lambda x: x, "CPU")


@pytest.mark.parametrize("kernel", [[], None, 3])
def test_a_non_callable_kernel_is_a_type_error_and_registers_nothing(lib, kernel):
    lib.define("foo(Tensor x) -> Tensor")
    before = snapshot(dc.find_op(f"{lib.ns}::foo"))
    if kernel is None:  # lib.impl(name, None, key) is the decorator form; torch has none
        return
    with pytest.raises(TypeError, match=r"^Input function is required to be a callable but found type "
                                        rf"<class '{type(kernel).__name__}'>$"):
        lib.impl("foo", kernel, "CPU")
    assert snapshot(dc.find_op(f"{lib.ns}::foo")) == before


# --- Meta over CompositeImplicitAutograd (torch/library.py's refusal) ----------------------------
def test_meta_kernel_for_an_operator_with_a_composite_implicit_kernel_is_refused(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "CompositeImplicitAutograd")
    op = dc.find_op(f"{lib.ns}::foo")
    before = snapshot(op)
    for name in ("foo", f"{lib.ns}::foo"):
        with pytest.raises(dc.RegistrationError, match=rf"^We should not register a meta kernel directly to "
                                                       rf"the operator '{name}', because it has a "
                                                       r"CompositeImplicitAutograd kernel in core\. Instead we "
                                                       r"should let the operator decompose, and ensure that we "
                                                       r"have meta kernels for the base ops that it decomposes "
                                                       r"into\.$"):
            lib.impl(name, lambda x: x, "Meta")
    with dc.Library(lib.ns, "IMPL", "Meta") as meta_lib:  # the library's key counts too
        with pytest.raises(dc.RegistrationError, match="We should not register a meta kernel"):
            meta_lib.impl("foo", lambda x: x)
    assert snapshot(op) == before


def test_meta_kernel_for_an_operator_nothing_was_registered_to_is_refused(ns):
    """torch.library's check asks the dispatcher about the operator first."""
    with dc.Library(ns, "FRAGMENT") as lib:
        with pytest.raises(dc.RegistrationError, match=rf"^operator {ns}::foo does not exist$"):
            lib.impl("foo", lambda x: x, "Meta")
        lib.impl("foo", lambda x: x, "CPU")
        lib.impl("foo", lambda x: x, "Meta")  # now it exists (schema-less), as in torch
        assert list(dc.get_dispatcher()._ops[f"{ns}::foo"].registrations) == [D.CPU, D.Meta]


# --- destroyed libraries -------------------------------------------------------------------------
def test_a_destroyed_library_refuses_registrations(ns):
    lib = dc.Library(ns, "FRAGMENT")
    lib._destroy()
    for register in (lambda: lib.define("foo(Tensor x) -> Tensor"), lambda: lib.impl("foo", lambda x: x, "CPU")):
        with pytest.raises(AssertionError, match=r"^Library object has been destroyed\. \(dispatchcore: "
                                                 rf"Library\(kind=FRAGMENT, ns={ns}, dispatch_key=\), created "
                                                 r"at .*Create a new Library"):
            register()
    with pytest.raises(TypeError, match="Input function is required"):  # torch checks this first
        lib.impl("foo", 3, "CPU")
    with pytest.raises(RuntimeError, match="Invalid alias_analysis type BAD"):
        lib.define("foo(Tensor x) -> Tensor", "BAD")
    assert dc.dump_state(f"{ns}::foo") == ""
    lib._destroy()  # idempotent
    with pytest.raises(AssertionError, match="Library object has been destroyed"):
        _destroyed_global().fallback(lambda op, *a: 0, "Fake")


def _destroyed_global() -> dc.Library:
    lib = dc.Library("_", "IMPL")
    lib._destroy()
    return lib


# --- module-level torch.library functions --------------------------------------------------------
def test_module_define_and_impl_keep_their_library_alive(ns, carrier):
    kept = len(dc.library._keep_alive)
    dc.library.define(f"{ns}::foo", "(Tensor x) -> Tensor")
    dc.library.impl(f"{ns}::foo", "cpu", lambda x: "cpu")
    dc.library.impl(f"{ns}::foo", ["AutogradCPU", "meta"], lambda x: "both")
    gc.collect()
    op = dc.find_op(f"{ns}::foo")
    assert op(carrier()) == "both"
    assert set(op.registrations) == {D.CPU, D.Meta, D.AutogradCPU}
    assert op.dump_state().splitlines()[2] == f"debug: registered at {loc_of_line(-7)}"
    assert len(dc.library._keep_alive) == kept + 3
    for library in dc.library._keep_alive[kept:]:
        library._destroy()
    assert dc.dump_state(f"{ns}::foo") == ""


def test_module_impl_as_a_decorator_and_default_means_composite_explicit(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")

    @dc.library.impl(f"{lib.ns}::foo", "default", lib=lib)
    def foo(x):
        return "cea"

    assert foo is None  # torch's decorator returns what register_ returns: None
    assert list(dc.find_op(f"{lib.ns}::foo").registrations) == [D.CompositeExplicitAutograd]


def test_module_define_with_lib_ties_the_operator_to_it(ns):
    with dc.Library(ns, "FRAGMENT") as lib:
        dc.library.define(f"{ns}::foo.ov", "(Tensor x) -> Tensor", lib=lib)
        assert dc.find_op(f"{ns}::foo.ov").overload_name == "ov"
    assert dc.dump_state(f"{ns}::foo.ov") == ""


@pytest.mark.parametrize("call,error,message", [
    (lambda: dc.library.define("nons", "(Tensor x) -> Tensor"), ValueError,
     r'^Expected `qualname` to be of the form "namespace::name", but got nons\. The qualname passed to the '
     r"torch\.library APIs must consist of a namespace and a name, e\.g\. aten::sin$"),
    (lambda: dc.library.define(3, "(Tensor x) -> Tensor"), ValueError,
     r"^define\(qualname, schema\): expected qualname to be instance of str, got <class 'int'>$"),
    (lambda: dc.library.define("a::foo", "foo(Tensor x) -> Tensor"), ValueError,
     r'^define\(qualname, schema, \.\.\.\): expected schema to look like e\.g\. "\(Tensor x\) -> Tensor" but '
     r'got "foo\(Tensor x\) -> Tensor"$'),
    (lambda: dc.library.impl("nons", "cpu", lambda x: x), ValueError, r"^Expected `qualname` to be of the form"),
    (lambda: dc.library.impl("a::foo", "blah", lambda x: x), RuntimeError,
     r"^Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
     r"vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: blah$"),
    (lambda: dc.library.impl("a::foo", "CPU:0", lambda x: x), RuntimeError,
     r"^Expected device_type string to not have a device index; got CPU:0$"),
    (lambda: dc.library.impl("a::foo", "", lambda x: x), RuntimeError, r"^Device string must not be empty$"),
])
def test_module_functions_raise_torchs_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_module_impl_without_namespace_fails_when_it_registers():
    """torch parses the namespace inside the decorator: building it succeeds."""
    register = dc.library.impl("nons", "cpu")
    with pytest.raises(ValueError, match="Expected `qualname`"):
        register(lambda x: x)


def test_legacy_module_define_and_impl_forms(lib, carrier):
    @dc.library.define(lib, "foo(Tensor x) -> Tensor")
    def foo(x):
        return "cia"

    @dc.library.impl(lib, "foo", "CPU")
    def foo_cpu(x):
        return "cpu"

    assert foo(None) == "cia" and foo_cpu(None) == "cpu"  # both return the function
    op = dc.find_op(f"{lib.ns}::foo")
    assert list(op.registrations) == [D.CompositeImplicitAutograd, D.CPU]
    assert op(carrier()) == "cpu"


def test_library_docstring_examples_run():
    import doctest

    from dispatchcore import library as library_module

    failures, attempted = doctest.testmod(library_module, optionflags=doctest.ELLIPSIS)
    assert attempted and not failures


def test_a_destroy_racing_an_impl_leaves_no_registration_behind(ns, monkeypatch):
    """``_destroy`` in another thread waits for an impl in flight, then removes its kernel too."""
    import threading

    import dispatchcore._library as library

    lib = dc.Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    destroyer = threading.Thread(target=lib._destroy)
    real_handle = library.RegistrationHandle

    def handle_while_destroying(*args, **kwargs):  # the impl has registered; now the destroy starts
        destroyer.start()
        destroyer.join(timeout=0.2)  # it must wait for the registry lock (before: it ran here)
        return real_handle(*args, **kwargs)

    monkeypatch.setattr(library, "RegistrationHandle", handle_while_destroying)
    lib.impl("f", lambda x: x, "CPU")
    monkeypatch.setattr(library, "RegistrationHandle", real_handle)
    destroyer.join()
    assert dc.dump_table(f"{ns}::f") == "" and not lib._handles


def test_destroy_is_public_torchs_underscore_name_is_its_alias_and_with_blocks_destroy():
    assert dc.Library.destroy is dc.Library._destroy
    with dc.Library("destroy_alias_ns", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        assert "destroy_alias_ns::f" in dc.get_dispatcher().operator_names()
    assert "destroy_alias_ns::f" not in dc.get_dispatcher().operator_names()
    lib.destroy()  # idempotent
    with pytest.raises(AssertionError):
        lib.define("g(Tensor x) -> Tensor")
