"""End to end: which kernel a call reaches (arguments, TLS, fallthrough, redispatch, BackendSelect)."""

from __future__ import annotations

import pytest

import dispatchcore as dc

KS = dc.DispatchKeySet


@pytest.fixture(autouse=True)
def _no_backend_discovery(monkeypatch):
    """Registry tests must not depend on which backends are installed: no lazy discovery."""
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)


@pytest.fixture
def ops(lib):
    """The ``dc.ops.<ns>`` namespace of the test's library."""
    return getattr(dc.ops, lib.ns)


def by_backend(lib, name, keys=("CPU", "Meta", "SparseCPU", "QuantizedCPU")):
    """Register one kernel per backend key that returns the key's name."""
    for key in keys:
        lib.impl(name, lambda *args, _k=key, **kwargs: _k, key)


# --- argument extraction (DispatchKeyExtractor.h) --------------------------------------------------------------
def test_positional_keyword_and_default_arguments(lib, ops, carrier):
    lib.define("f(Tensor x, Tensor y, int n=1) -> Tensor")
    lib.impl("f", lambda x, y, n=1: ("CPU", n), "CPU")
    lib.impl("f", lambda x, y, n=1: ("Meta", n), "Meta")
    cpu, meta = carrier("CPU"), carrier("Meta")
    assert ops.f(cpu, cpu) == ("CPU", 1)
    assert ops.f(cpu, meta, 3) == ("Meta", 3)
    assert ops.f(cpu, y=meta) == ("Meta", 1)
    assert ops.f(y=cpu, x=meta, n=2) == ("Meta", 2)
    assert ops.f(x=cpu, y=cpu) == ("CPU", 1)


def test_optional_tensor_none_is_skipped(lib, ops, carrier):
    lib.define("f(Tensor x, Tensor? y=None) -> Tensor")
    by_backend(lib, "f")
    assert ops.f(carrier("CPU")) == "CPU"
    assert ops.f(carrier("CPU"), None) == "CPU"
    assert ops.f(carrier("CPU"), carrier("Meta")) == "Meta"
    assert ops.f(carrier("CPU"), y=carrier("Meta")) == "Meta"


def test_tensor_list_contributes_the_union_of_its_elements(lib, ops, carrier):
    lib.define("f(Tensor[] xs) -> Tensor")
    by_backend(lib, "f")
    assert ops.f([carrier("CPU"), carrier("CPU")]) == "CPU"
    assert ops.f([carrier("CPU"), carrier("Meta")]) == "Meta"
    assert ops.f((carrier("CPU"), carrier("SparseCPU"))) == "SparseCPU"
    with pytest.raises(NotImplementedError, match=r"^There were no tensor arguments to this function "
                                                  r"\(e\.g\., you passed an empty list of Tensors\)"):
        ops.f([])


def test_optional_tensor_list_skips_none_elements(lib, ops, carrier):
    lib.define("f(Tensor?[] xs) -> Tensor")
    by_backend(lib, "f")
    assert ops.f([None, carrier("Meta"), None]) == "Meta"
    with pytest.raises(NotImplementedError, match=r"^There were no tensor arguments"):
        ops.f([None])


def test_kwarg_only_tensors_are_dispatch_arguments(lib, ops, carrier):
    lib.define("f(Tensor x, *, Tensor[] more, Tensor? out=None) -> Tensor")
    lib.impl("f", lambda x, *, more, out=None: "CPU", "CPU")
    lib.impl("f", lambda x, *, more, out=None: "Meta", "Meta")
    assert ops.f(carrier("CPU"), more=[]) == "CPU"
    assert ops.f(carrier("CPU"), more=[], out=carrier("Meta")) == "Meta"
    assert ops.f(carrier("CPU"), more=[carrier("Meta")]) == "Meta"


def test_non_tensor_arguments_never_contribute(lib, ops, carrier):
    lib.define("f(Tensor x, Scalar s, int[] sizes, str mode, Device? device=None) -> Tensor")
    lib.impl("f", lambda x, s, sizes, mode, device=None: "CPU", "CPU")
    assert ops.f(carrier("CPU"), 2.0, [1], "meta", device="meta") == "CPU"


def test_mixed_cpu_and_meta_arguments_pick_meta(lib, ops, carrier):
    """Meta is the highest backend bit (c10/core/DispatchKey.h)."""
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    by_backend(lib, "f")
    assert ops.f(carrier("CPU"), carrier("Meta")) == "Meta"
    assert ops.f(carrier("Meta"), carrier("CPU")) == "Meta"
    lib.define("g(Tensor x, Tensor y) -> Tensor")
    lib.impl("g", lambda x, y: "CPU", "CPU")
    with pytest.raises(NotImplementedError, match=r"attempted to run this operator with Meta tensors"):
        ops.g(carrier("CPU"), carrier("Meta"))


@pytest.mark.parametrize("call,message", [
    (lambda f, c: f(), r"{ns}::f\(\) is missing value for argument 'x'\. Declaration: {ns}::f\(Tensor x, "
                       r"int n=1\) -> Tensor$"),
    (lambda f, c: f(3), r"{ns}::f\(\) Expected a value of type 'Tensor' for argument 'x' but instead "
                        r"found type 'int'\.\nPosition: 0\nValue: 3\nDeclaration: {ns}::f\(Tensor x, "
                        r"int n=1\) -> Tensor\nCast error details: Unable to cast 3 to Tensor$"),
    (lambda f, c: f(c, 1, 2), r"{ns}::f\(\) expected at most 2 argument\(s\) but received 3 argument\(s\)\. "
                              r"Declaration: {ns}::f\(Tensor x, int n=1\) -> Tensor$"),
    (lambda f, c: f(c, m=2), r"Unknown keyword argument 'm' for operator '{ns}::f'\. Schema: "
                             r"{ns}::f\(Tensor x, int n=1\) -> Tensor$"),
    (lambda f, c: f(c, x=c), r"Argument 'x' specified both as positional and keyword argument\. Schema: "
                             r"{ns}::f\(Tensor x, int n=1\) -> Tensor$"),
])
def test_binding_errors_in_torchs_words(lib, ops, carrier, call, message):
    lib.define("f(Tensor x, int n=1) -> Tensor")
    lib.impl("f", lambda x, n=1: "CPU", "CPU")
    with pytest.raises(RuntimeError, match="^" + message.replace("{ns}", lib.ns)):
        call(ops.f.default, carrier())


def test_positional_value_for_a_kwarg_only_argument(lib, ops, carrier):
    lib.define("f(Tensor x, *, int n=1) -> Tensor")
    lib.impl("f", lambda x, *, n=1: n, "CPU")
    with pytest.raises(RuntimeError, match=rf"^{lib.ns}::f\(\) takes 1 positional argument\(s\) but 2 "
                                           r"was/were given\.  Declaration:"):
        ops.f.default(carrier(), 3)
    assert ops.f(carrier(), n=3) == 3


# --- thread-local state (c10/core/impl/LocalDispatchKeySet.h) ---------------------------------------------------------
def test_tls_include_dispatches_to_the_key_even_without_tensors(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    lib.define("make(int n) -> Tensor")
    by_backend(lib, "f")
    by_backend(lib, "make")
    with dc.IncludeDispatchKeyGuard("Meta"):
        assert ops.f(carrier("CPU")) == "Meta"
        assert ops.make(3) == "Meta"
    assert ops.f(carrier("CPU")) == "CPU"


def test_exclude_autograd_routes_past_the_autograd_kernel(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    by_backend(lib, "f")
    lib.impl("f", lambda x: "AutogradCPU", "AutogradCPU")
    lib.impl("f", lambda x: "AutogradMeta", "AutogradMeta")
    assert ops.f(carrier("CPU")) == "AutogradCPU"
    with dc.AutoDispatchBelowAutograd():
        assert ops.f(carrier("CPU")) == "CPU"
    with dc.ExcludeDispatchKeyGuard(KS("AutogradCPU")):  # clears the AutogradFunctionality bit
        assert ops.f(carrier("CPU")) == "CPU"
        assert ops.f(carrier("Meta")) == "Meta"


def test_exclusion_wins_over_inclusion(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    by_backend(lib, "f")
    lib.impl("f", lambda x: "Python", "Python")
    with dc.IncludeDispatchKeyGuard("Python"), dc.ExcludeDispatchKeyGuard(KS("Python")):
        assert ops.f(carrier("CPU")) == "CPU"
    with dc.IncludeDispatchKeyGuard("Python"):
        assert ops.f(carrier("CPU")) == "Python"


def test_autograd_beats_python_and_batched_beats_cpu(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    for key in ("CPU", "AutogradCPU", "Python", "FuncTorchBatched"):
        lib.impl("f", lambda x, _k=key: _k, key)
    assert ops.f(carrier(KS(["Python", "CPU", "AutogradCPU"]))) == "AutogradCPU"
    assert ops.f(carrier(KS(["FuncTorchBatched", "CPU"]))) == "FuncTorchBatched"
    assert ops.f(carrier(KS(["Python", "CPU"]))) == "Python"


def test_dispatch_never_edits_tls(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    seen = []
    lib.impl("f", lambda x: seen.append((dc.tls_local_include_set(), dc.tls_local_exclude_set())) or 1, "CPU")
    lib.impl("f", lambda x: seen.append((dc.tls_local_include_set(), dc.tls_local_exclude_set()))
             or ops.f.default.redispatch(KS("CPU"), x), "AutogradCPU")
    outside = (dc.tls_local_include_set(), dc.tls_local_exclude_set())
    ops.f(carrier())
    assert seen == [outside, outside]


# --- fallthrough --------------------------------------------------------------------------------
def test_per_op_fallthrough_walks_down(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    by_backend(lib, "f")
    lib.impl("f", lambda x: "Python", "Python")
    dispatcher = dc.get_dispatcher()
    warned, dispatcher._warned_override = dispatcher._warned_override, True
    try:
        with dc.Library(lib.ns, "IMPL") as overriding, dc.IncludeDispatchKeyGuard("Python"):
            overriding.impl("f", dc.fallthrough_kernel, "Python")  # newest wins: now a fallthrough
            assert ops.f(carrier("CPU")) == "CPU"
            assert ops.f(carrier("Meta")) == "Meta"
    finally:
        dispatcher._warned_override = warned
    with dc.IncludeDispatchKeyGuard("Python"):
        assert ops.f(carrier("CPU")) == "Python"


# --- redispatch (c10/core/DispatchKeySet.h) -----------------------------------------------------------------------
def test_redispatch_ignores_tls_and_the_fallthrough_mask(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    by_backend(lib, "f")
    lib.impl("f", lambda x: "AutogradCPU", "AutogradCPU")
    op = ops.f.default
    with dc.AutoDispatchBelowAutograd():
        assert op.redispatch(KS(["AutogradCPU", "CPU"]), carrier()) == "AutogradCPU"
    with dc.IncludeDispatchKeyGuard("Meta"):
        assert op.redispatch(KS("CPU"), carrier()) == "CPU"
    assert op.redispatch(KS(["CPU", "Meta"]), carrier()) == "Meta"
    with pytest.raises(RuntimeError, match=r"fallthrough_kernel was executed but it should have been "
                                           r"short-circuited by the dispatcher"):
        op.redispatch(KS(["CPU", "BackendSelect"]), carrier())


def test_redispatch_skip_myself_pattern(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    seen = []
    lib.impl("f", lambda ks, x: seen.append(("CPU", ks)) or "done", "CPU", with_keyset=True)

    def autograd(ks, x):
        seen.append(("AutogradCPU", ks))
        return ops.f.default.redispatch(ks & KS.full_after("AutogradCPU"), x)

    lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
    assert ops.f(carrier()) == "done"
    assert seen == [("AutogradCPU", KS(["CPU", "AutogradCPU"])), ("CPU", KS("CPU"))]


def test_redispatch_to_a_missing_kernel_reports_it(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match=rf"^Could not run '{lib.ns}::f' with arguments from the "
                                                  r"'CPU' backend\."):
        ops.f.default.redispatch(KS("CPU"), carrier())


# --- BackendSelect and calls without tensors (BackendSelectFallbackKernel.cpp) ----------------------------------------
def test_factory_without_backend_select_kernel_has_no_tensor_arguments(lib, ops):
    lib.define("make(int n, *, Device? device=None) -> Tensor")
    lib.impl("make", lambda n, *, device=None: "CPU", "CPU")
    with pytest.raises(NotImplementedError) as info:
        ops.make(3)
    assert str(info.value).startswith(
        "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), "
        f"but no fallback function is registered for schema {lib.ns}::make.  This usually means that this "
        "function requires a non-empty list of Tensors, or that you (the operator writer) forgot to "
        "register a fallback function.  Available functions are [CPU, Meta, BackendSelect, ")


def test_backend_select_kernel_redispatches_to_a_backend(lib, ops):
    lib.define("make(int n, *, Device? device=None) -> Tensor")
    seen = []
    lib.impl("make", lambda ks, n, *, device=None: seen.append(ks) or ("CPU", n), "CPU", with_keyset=True)
    lib.impl("make", lambda ks, n, *, device=None: seen.append(ks) or ("Meta", n), "Meta", with_keyset=True)

    def backend_select(ks, n, *, device=None):
        seen.append(ks)
        target = KS("Meta") if device == "meta" else KS("CPU")
        return ops.make.default.redispatch(target, n, device=device)

    lib.impl("make", backend_select, "BackendSelect", with_keyset=True)
    assert ops.make(3) == ("CPU", 3)
    assert seen == [KS("BackendSelect"), KS("CPU")]
    assert ops.make(4, device="meta") == ("Meta", 4)


@pytest.mark.parametrize("key", ["CompositeImplicitAutograd", "CompositeExplicitAutograd",
                                 "CompositeExplicitAutogradNonFunctional"])
def test_composite_kernels_serve_calls_without_tensors(lib, ops, key):
    lib.define("cia0(int n) -> int")
    lib.impl("cia0", lambda n: n * 2, key)
    assert ops.cia0(3) == 6
    assert ops.cia0.default.table_entry("Undefined")[0].key.name == key


def test_nested_composite_does_not_serve_calls_without_tensors(lib, ops):
    lib.define("f(int n) -> int")
    lib.impl("f", lambda n: n, "CompositeImplicitAutogradNestedTensor")
    with pytest.raises(NotImplementedError, match="There were no tensor arguments"):
        ops.f(3)


# --- the ops namespace --------------------------------------------------------------------------
def test_ops_packet_overload_resolution(lib, ops, carrier):
    lib.define("add.Tensor(Tensor x, Tensor y) -> Tensor")
    lib.define("add.Scalar(Tensor x, Scalar y) -> Tensor")
    lib.define("add(Tensor x, int y, int z) -> Tensor")
    lib.impl("add.Tensor", lambda x, y: "Tensor", "CPU")
    lib.impl("add.Scalar", lambda x, y: "Scalar", "CPU")
    lib.impl("add", lambda x, y, z: "default", "CPU")
    assert ops.add(carrier(), carrier()) == "Tensor"
    assert ops.add(carrier(), 2.5) == "Scalar"
    assert ops.add(carrier(), 1, 2) == "default"
    assert ops.add.overloads() == ["Tensor", "Scalar", "default"]
    assert ops.add.default is dc.find_op(f"{lib.ns}::add")
    assert ops.add.Tensor is dc.find_op(f"{lib.ns}::add.Tensor")
    assert repr(ops.add) == f"{lib.ns}.add"
    with pytest.raises(RuntimeError) as info:  # torch's text: each overload's binding error
        ops.add("a", "b")
    lines = str(info.value).split("\n")
    assert lines[0] == "Overloaded torch operator invoked from Python failed to match any schema:"
    assert lines[1] == (f"{lib.ns}::add() Expected a value of type 'Tensor' for argument 'x' but instead "
                        "found type 'str'.")
    assert str(info.value).count("Declaration: ") == 3 and str(info.value).endswith("\n\n")


def test_ops_packet_with_a_single_overload_calls_it_directly(lib, ops, carrier):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "CPU", "CPU")
    assert ops.f(carrier()) == "CPU"
    with pytest.raises(RuntimeError, match=r"expected at most 1 argument"):
        ops.f(carrier(), carrier())


def test_ops_attribute_errors(lib, ops):
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(AttributeError, match=rf"^'_OpNamespace' '{lib.ns}' object has no attribute 'nope'$"):
        ops.nope  # noqa: B018
    with pytest.raises(AttributeError, match=rf"^The underlying op of '{lib.ns}\.f' has no overload name "
                                             r"'nope'$"):
        ops.f.nope  # noqa: B018
    with pytest.raises(AttributeError):
        ops.__wrapped__  # noqa: B018
    assert getattr(dc.ops, lib.ns) is ops  # namespaces are cached


def test_ops_handles_are_the_operator_handles(lib, ops, carrier):
    lib.define("f.ov(Tensor x) -> Tensor")
    lib.impl("f.ov", lambda x: "ov", "CPU")
    assert isinstance(ops.f.ov, dc.OperatorHandle)
    assert ops.f.ov(carrier()) == "ov"
    assert ops.f.overloads() == ["ov"]
