"""Dispatch errors: PyTorch's text verbatim (OperatorEntry.cpp), the table dump, then dispatchcore's explanation."""

from __future__ import annotations

import pytest

import dispatchcore as dc

KS = dc.DispatchKeySet

# OperatorEntry.cpp, verbatim: the keys a Meta-only operator has entries for
META_ONLY_AVAILABLE = (
    "[Meta, BackendSelect, Python, FuncTorchDynamicLayerBackMode, Functionalize, Conjugate, Negative, "
    "ZeroTensor, ADInplaceOrView, AutogradOther, AutogradCPU, AutogradCUDA, AutogradXLA, AutogradMPS, "
    "AutogradXPU, AutogradHPU, AutogradLazy, AutogradMTIA, AutogradMAIA, AutogradPrivateUse1, AutogradMeta, "
    "Tracer, AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, AutocastMPS, AutocastCUDA, "
    "FuncTorchBatched, BatchedNestedTensor, FuncTorchVmapMode, Batched, VmapMode, FuncTorchGradWrapper, "
    "PythonTLSSnapshot, "
    "FuncTorchDynamicLayerFrontMode, PreDispatch, PythonDispatcher]"
)


@pytest.fixture(autouse=True)
def _no_backend_discovery(monkeypatch):
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)


def could_not_run(qualname: str, key: str, available: str) -> str:
    return (
        f"Could not run '{qualname}' with arguments from the '{key}' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
        "(if using custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        f"https://fburl.com/ptmfixes for possible resolutions. '{qualname}' is only available for these "
        f"backends: {available}."
    )


def parts(error: BaseException) -> tuple[str, str, list[str]]:
    """(head, table dump, explanation lines) of a dispatch error."""
    text = str(error)
    head, rest = text.split("\n\n", 1)
    table, explanation = rest.split("\ndispatchcore: why no kernel was found\n", 1)
    return head, table, explanation.splitlines()


def test_dispatch_error_is_a_not_implemented_error():
    assert issubclass(dc.DispatchError, NotImplementedError)


def test_could_not_run_verbatim_then_table_then_explanation(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "Meta")
    op = dc.find_op(f"{lib.ns}::foo")
    with pytest.raises(dc.DispatchError) as info:
        op(carrier("CPU"))
    head, table, explanation = parts(info.value)
    assert head == could_not_run(f"{lib.ns}::foo", "CPU", META_ONLY_AVAILABLE)
    assert table == op.dump_table()
    ns = lib.ns
    assert explanation == [
        "  argument 'x' contributed DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)",
        "  thread-local include set added DispatchKeySet(BackendSelect)",
        "  thread-local exclude set masked DispatchKeySet(AutocastCPU)",
        "  fallthrough keys skipped DispatchKeySet(BackendSelect, ADInplaceOrView)",
        "  dispatched first on DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU, whose kernel redispatched",
        "  dispatched on DispatchKeySet(CPU) -> CPU",
        f"  kernels registered for {ns}::foo: Meta",
        f"  smallest fix: Library('{ns}', 'IMPL').impl('foo', kernel, 'CPU')",
    ]


def test_available_list_is_every_valid_entry_in_dump_order(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "CPU")
    lib.impl("foo", dc.fallthrough_kernel, "AutogradCPU")
    op = dc.find_op(f"{lib.ns}::foo")
    with pytest.raises(dc.DispatchError) as info:
        op(carrier("SparseCPU"))
    head, _, _ = parts(info.value)
    names = [line.split(":")[0] for line in op.dump_table().splitlines()]
    assert head == could_not_run(f"{lib.ns}::foo", "SparseCPU", "[" + ", ".join(names) + "]")
    assert names[:3] == ["CPU", "Meta", "BackendSelect"] and "AutogradCPU" in names


def test_no_tensor_arguments_verbatim(lib):
    lib.define("make(int n) -> Tensor")
    lib.impl("make", lambda n: n, "CPU")
    op = dc.find_op(f"{lib.ns}::make")
    with pytest.raises(dc.DispatchError) as info:
        op(3)
    head, table, explanation = parts(info.value)
    available = "[CPU, " + META_ONLY_AVAILABLE[1:]
    assert head == (
        "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), but no "
        f"fallback function is registered for schema {lib.ns}::make.  This usually means that this function "
        "requires a non-empty list of Tensors, or that you (the operator writer) forgot to register a "
        f"fallback function.  Available functions are {available}.")
    assert table == op.dump_table()
    assert explanation[:3] == [
        "  thread-local include set added DispatchKeySet(BackendSelect, ADInplaceOrView)",
        "  thread-local exclude set masked DispatchKeySet()",
        "  fallthrough keys skipped DispatchKeySet(BackendSelect, ADInplaceOrView)",
    ]
    assert "  dispatched on DispatchKeySet() -> Undefined" in explanation
    assert explanation[-1] == (
        "  smallest fix: give the call a tensor argument, or register a kernel that serves calls without "
        f"tensors: Library('{lib.ns}', 'IMPL').impl('make', kernel, 'CompositeExplicitAutograd') (or a "
        "'BackendSelect' kernel that picks a backend)")


def test_explanation_names_each_argument_and_the_tls_edits(lib, carrier):
    lib.define("foo(Tensor x, Tensor[] ys, *, Tensor? z=None) -> Tensor")
    lib.impl("foo", lambda x, ys, *, z=None: x, "Meta")
    op = dc.find_op(f"{lib.ns}::foo")
    with dc.AutoDispatchBelowAutograd(), dc.IncludeDispatchKeyGuard("Python"):
        with pytest.raises(dc.DispatchError) as info:
            op(carrier("CPU"), [carrier("SparseCPU"), carrier("CPU")], z=None)
    head, _, explanation = parts(info.value)
    assert head.startswith(f"Could not run '{lib.ns}::foo' with arguments from the 'SparseCPU' backend.")
    assert explanation == [
        "  argument 'x' contributed DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)",
        "  argument 'ys' contributed DispatchKeySet(CPU, SparseCPU, ADInplaceOrView, AutogradCPU, "
        "AutocastCPU)",
        "  argument 'z' contributed DispatchKeySet()",
        "  thread-local include set added DispatchKeySet(BackendSelect, Python)",
        "  thread-local exclude set masked DispatchKeySet(AutogradCPU, AutocastCPU)",
        "  fallthrough keys skipped DispatchKeySet(BackendSelect, ADInplaceOrView)",
        "  dispatched first on DispatchKeySet(CPU, SparseCPU, Python) -> Python, whose kernel redispatched",
        "  dispatched on DispatchKeySet(CPU, SparseCPU) -> SparseCPU",
        f"  kernels registered for {lib.ns}::foo: Meta",
        f"  smallest fix: Library('{lib.ns}', 'IMPL').impl('foo', kernel, 'SparseCPU')",
    ]


def test_explanation_lists_per_op_fallthrough_keys(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "Meta")
    lib.impl("foo", dc.fallthrough_kernel, "AutogradCPU")
    with pytest.raises(dc.DispatchError) as info:
        dc.find_op(f"{lib.ns}::foo")(carrier("CPU"))
    _, _, explanation = parts(info.value)
    skipped = "  fallthrough keys skipped DispatchKeySet(BackendSelect, ADInplaceOrView, AutogradCPU)"
    assert skipped in explanation
    assert "  dispatched on DispatchKeySet(CPU) -> CPU" in explanation
    assert not any(line.startswith("  dispatched first") for line in explanation)
    assert f"  kernels registered for {lib.ns}::foo: Meta, AutogradCPU" in explanation


def test_tls_include_of_a_backend_shows_as_added(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "CPU")
    with dc.IncludeDispatchKeyGuard("QuantizedCPU"), pytest.raises(dc.DispatchError) as info:
        dc.find_op(f"{lib.ns}::foo")(carrier("CPU"))
    _, _, explanation = parts(info.value)
    assert "  thread-local include set added DispatchKeySet(QuantizedCPU, BackendSelect)" in explanation
    assert explanation[-1].endswith("impl('foo', kernel, 'QuantizedCPU')")


def test_no_kernels_at_all(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(dc.DispatchError) as info:
        dc.find_op(f"{lib.ns}::foo")(carrier("CPU"))
    assert f"  kernels registered for {lib.ns}::foo: none" in parts(info.value)[2]


def test_redispatch_error_uses_the_redispatched_key(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "CPU")
    with pytest.raises(dc.DispatchError) as info:
        dc.find_op(f"{lib.ns}::foo").redispatch(KS("QuantizedCPU"), carrier("CPU"))
    head, _, explanation = parts(info.value)
    assert head.startswith(f"Could not run '{lib.ns}::foo' with arguments from the 'QuantizedCPU' backend.")
    assert "  dispatched on DispatchKeySet(QuantizedCPU) -> QuantizedCPU" in explanation


def test_ambiguous_autogradother(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: "cia", "CompositeImplicitAutograd")
    lib.impl("foo", lambda x: "sparse", "SparseCPU")
    op = dc.find_op(f"{lib.ns}::foo")
    assert op(carrier("SparseCPU")) == "cia"  # at AutogradCPU: CPU has no kernel, so CIA serves it
    with dc.AutoDispatchBelowAutograd():
        assert op(carrier("SparseCPU")) == "sparse"
    with pytest.raises(RuntimeError) as info:
        op(carrier("MkldnnCPU"))
    assert not isinstance(info.value, NotImplementedError)
    assert str(info.value) == (
        '0 INTERNAL ASSERT FAILED at "aten/src/ATen/core/boxing/KernelFunction.cpp":23, please report a bug '
        f"to PyTorch. {lib.ns}::foo has kernels registered to both CompositeImplicitAutograd and a backend "
        "mapped to AutogradOther. This makes the backend kernel unreachable; the dispatcher will always "
        "prefer the CompositeImplicitAutograd lowering (see Note [Ambiguity in AutogradOther kernel]). If "
        "you want to override CompositeImplicitAutograd, please open an issue to request a dedicated "
        "Autograd dispatch key for the backend.\nIf you only want to run inference instead of training, in "
        "C++, add `c10::InferenceMode mode;` before model.forward(); in Python, use "
        "`torch.inference_mode()` as a context manager (see https://pytorch.org/docs/stable/generated/"
        "torch.autograd.grad_mode.inference_mode.html).\nCanonical state\n~~~~~~~~~~~\n"
        + op.dump_state() + "\n\n")
    assert "AutogradOther: ambiguous_autogradother [ambiguous autogradother]" in op.dump_table()
    with dc.AutoDispatchBelowAutograd():
        assert op(carrier("MkldnnCPU")) == "cia"


def test_schema_less_operator_errors(ns, carrier):
    lib = dc.Library(ns, "DEF")
    lib.define("foo(Tensor x) -> Tensor")
    op = dc.find_op(f"{ns}::foo")
    with dc.Library(ns, "IMPL") as impl:
        impl.impl("foo", lambda x: x, "Meta")
        lib._destroy()
        with pytest.raises(RuntimeError, match="has no schema"):
            op(carrier("CPU"))
        with pytest.raises(dc.DispatchError, match=rf"^Could not run '{ns}::foo'") as info:
            op.redispatch(KS("CPU"), carrier("CPU"))
        assert f"  kernels registered for {ns}::foo: Meta" in parts(info.value)[2]


# --- no internal exception chained (Note [No chained errors] in operator.py) -------------------
def _raise(exc):
    raise exc


def _under_guard(fn):
    with dc.AutoDispatchBelowAutograd():
        return fn()


CALL_PATH_ERRORS = {
    # name: (provoke(ops), expected exception type); ops = (meta_only, binary, raising, ambiguous)
    "first call, missing kernel": (lambda o, c: o.f(c()), dc.DispatchError),
    "call under a guard, missing kernel": (lambda o, c: _under_guard(lambda: o.f(c())), dc.DispatchError),
    "keyword call, missing kernel": (lambda o, c: o.f(x=c()), dc.DispatchError),
    "entry of one argument": (lambda o, c: o.f.entry(1)(c()), dc.DispatchError),
    "entry of two tensors": (lambda o, c: o.g.entry(2, tensors=2)(c(), c()), dc.DispatchError),
    "entry of two arguments": (lambda o, c: o.g.entry(2)(c(), c()), dc.DispatchError),
    "redispatch": (lambda o, c: o.f.redispatch(KS("CPU"), c()), dc.DispatchError),
    "redispatch onto a fallthrough": (lambda o, c: o.t.redispatch(KS("CPU"), c()), RuntimeError),
    "no tensor arguments": (lambda o, c: o.f.redispatch(KS(), c()), dc.DispatchError),
    "Meta fallback": (lambda o, c: o.g(c("Meta"), c("Meta")), dc.DispatchError),
    "ambiguous AutogradOther": (lambda o, c: o.a(c("MkldnnCPU")), RuntimeError),
    "a kernel's own error, first call": (lambda o, c: o.h(c()), ValueError),
    "a kernel's own error, under a guard": (lambda o, c: _under_guard(lambda: o.h(c())), ValueError),
    "a kernel's own error, redispatched": (lambda o, c: o.h.redispatch(KS("CPU"), c()), ValueError),
    "binding: missing argument": (lambda o, c: o.f(), RuntimeError),
    "binding: not a tensor": (lambda o, c: o.f(3), RuntimeError),
    "packet: not a tensor": (lambda o, c: o.packet(3), RuntimeError),
    "schema-less operator": (lambda o, c: o.schemaless(c()), RuntimeError),
}


@pytest.mark.parametrize("case", sorted(CALL_PATH_ERRORS))
def test_call_path_errors_chain_no_internal_exception(ns, carrier, case):
    """No memo KeyError or extraction AttributeError as __context__/__cause__, on any try."""
    lib = dc.Library(ns, "DEF")
    for schema in ("f(Tensor x) -> Tensor", "g(Tensor x, Tensor y) -> Tensor", "h(Tensor x) -> Tensor",
                   "a(Tensor x) -> Tensor", "t(Tensor x) -> Tensor"):
        lib.define(schema)
    lib.impl("f", lambda x: x, "Meta")
    lib.impl("h", lambda x: _raise(ValueError("kernel says no")), "CPU")
    lib.impl("a", lambda x: x, "CompositeImplicitAutograd")
    lib.impl("a", lambda x: x, "MkldnnCPU")
    lib.impl("t", dc.fallthrough_kernel, "CPU")
    impl = dc.Library(ns + "sl", "IMPL")
    impl.impl("s", lambda x: x, "CPU")

    class Ops:
        f, g, h, a, t = (dc.find_op(f"{ns}::{n}") for n in "fghat")
        packet = getattr(dc.ops, ns).f
        schemaless = dc.get_dispatcher()._ops[f"{ns}sl::s"]

    provoke, expected = CALL_PATH_ERRORS[case]
    try:
        for _ in range(3):  # the first call misses every memo; later ones may hit
            with pytest.raises(expected) as info:
                provoke(Ops, carrier)
            assert info.value.__context__ is None and info.value.__cause__ is None, info.value.__context__
    finally:
        impl._destroy()
        lib._destroy()


REGISTRATION_ERRORS = {
    "unknown key": lambda lib: lib.impl("f", lambda x: x, "NotAKey"),
    "CatchAll": lambda lib: lib.impl("f", lambda x: x, "CatchAll"),
    "Library with an unknown key": lambda lib: dc.Library(lib.ns, "IMPL", "NotAKey"),
    "not callable": lambda lib: lib.impl("f", [], "CPU"),
    "kernel does not fit": lambda lib: lib.impl("f", lambda: 0, "CPU"),
    "packet": lambda lib: lib.impl(getattr(dc.ops, lib.ns).f, lambda x: x, "CPU"),
    "duplicate define": lambda lib: lib.define("f(Tensor x) -> Tensor"),
    "schema syntax": lambda lib: lib.define("f(Tensor x -> Tensor"),
    "find_op": lambda lib: dc.find_op(f"{lib.ns}::nope"),
    "module define without namespace": lambda lib: dc.library.define("nope", "(Tensor x) -> Tensor"),
    "module impl on an unknown device": lambda lib: dc.library.impl(f"{lib.ns}::f", "blah", lambda x: x),
    "leaf_kernel of a builtin": lambda lib: dc.leaf_kernel(len),
}


@pytest.mark.parametrize("case", sorted(REGISTRATION_ERRORS))
def test_registration_errors_chain_no_internal_exception(lib, case):
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises((RuntimeError, TypeError, ValueError, LookupError)) as info:
        REGISTRATION_ERRORS[case](lib)
    assert info.value.__context__ is None and info.value.__cause__ is None, info.value.__context__


def test_the_suite_refuses_an_error_that_chains_an_internal_one():
    """conftest wraps pytest.raises: a dispatchcore error chaining another of its own fails the test."""
    try:
        dc.find_op("nochain::first")
    except LookupError as e:
        inner = e
    try:
        dc.find_op("nochain::second")
    except LookupError as e:
        outer = e
    outer.__context__ = inner  # what raising inside dispatchcore's own except block would do
    with pytest.raises(AssertionError, match="chains the internal LookupError"):
        with pytest.raises(LookupError):
            raise outer
    outer.__context__ = None
    with pytest.raises(LookupError):
        raise outer
