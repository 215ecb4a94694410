"""operator.py: the incremental table against the reference resolver, the call path, the dumps."""

from __future__ import annotations

import itertools
import random
import re
import textwrap

import pytest

import dispatchcore as dc
from dispatchcore.keys import (
    RUNTIME_KEYS,
    DispatchKey,
    is_per_backend_functionality,
    to_backend_component,
    to_functionality_key,
)
from dispatchcore.keyset import BACKEND_MASK, DEFAULT_EXCLUDED, DEFAULT_INCLUDED, FULL, key_bits
from dispatchcore.operator import KernelRegistration, OperatorHandle, is_dispatch_arg
from dispatchcore.resolution import compute_table_entry

D = DispatchKey

REG_KEYS = [
    "CPU", "Meta", "SparseCPU", "NestedTensorCPU", "QuantizedCPU", "MkldnnCPU", "AutogradCPU",
    "Autograd", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutogradNestedTensor",
    "FuncTorchBatchedDecomposition", "AutogradOther", "AutogradNestedTensor", "BackendSelect",
    "ADInplaceOrView", "XLA", "MTIA", "SparseCsrCPU", "AutocastCPU", "Python", "FuncTorchBatched",
]


def _combos() -> list[tuple[tuple[str, bool], ...]]:
    combos = [((k, False),) for k in REG_KEYS] + [((k, True),) for k in REG_KEYS]
    combos += [((a, False), (b, False)) for a, b in itertools.combinations(REG_KEYS[:16], 2)]
    rng = random.Random(1234)
    for _ in range(80):
        keys = rng.sample(REG_KEYS, rng.choice((3, 4)))
        combos.append(tuple((k, rng.random() < 0.25) for k in keys))
    return combos


COMBOS = _combos()


def register(lib: dc.Library, regs, name: str = "f") -> OperatorHandle:
    for key, fallthrough in regs:
        lib.impl(name, dc.fallthrough_kernel if fallthrough else (lambda x, _k=key: _k), key)
    return dc.find_op(f"{lib.ns}::{name}")


def fallthrough_keys(op: OperatorHandle) -> list[D]:
    """The runtime keys whose reference entry is a fallthrough."""
    fallbacks = dc.get_dispatcher()._fallbacks
    return [k for k in RUNTIME_KEYS if k != D.Undefined
            and getattr(compute_table_entry(op._kernels, fallbacks, k)[0], "fallthrough", False)]


def reference_key(fallthroughs: list[D], bits: int) -> D:
    """highestPriorityTypeId after clearing the fallthrough keys the resolver reports."""
    backend = (bits & BACKEND_MASK).bit_length()
    for key in fallthroughs:
        functionality = to_functionality_key(key)
        if is_per_backend_functionality(functionality) and int(to_backend_component(key)) != backend:
            continue
        bits &= ~key_bits(functionality)
    return dc.DispatchKeySet.from_raw(bits).highest_priority_key()


def assert_dispatch_state_consistent(op: OperatorHandle) -> None:
    """The call path's (masks, slots) agree with the entries, however they were updated."""
    masks, table = op._dispatch[:2]
    assert masks == OperatorHandle._compute_masks(op._entries)
    assert {k for k in RUNTIME_KEYS if table[k] is not None} == set(op._entries)


def _probe_bits() -> list[int]:
    tensors = ["CPU", "Meta", "SparseCPU", "QuantizedCPU", "NestedTensorCPU", "MkldnnCPU", "CUDA",
               "XLA", "SparseCsrCPU", "MTIA"]
    sets = [int(dc.tensor_keyset(t)) for t in tensors]
    sets += [int(dc.tensor_keyset("CPU")) | int(dc.tensor_keyset("Meta")), 0,
             int(dc.tensor_keyset("CPU", inference=True))]
    sets += [key_bits(k) | int(dc.tensor_keyset("CPU")) for k in RUNTIME_KEYS[::3]]
    return [((s | DEFAULT_INCLUDED) & ~DEFAULT_EXCLUDED) | (s & BACKEND_MASK) for s in sets]


PROBES = _probe_bits()


# --- 1. the incremental table equals the reference resolver --------------------------------------
@pytest.mark.parametrize("regs", COMBOS, ids=lambda regs: "+".join(k + ("~" if f else "") for k, f in regs))
def test_table_equals_resolver_and_call_path_equals_highest_priority_key(lib, regs):
    lib.define("f(Tensor x) -> Tensor")
    op = register(lib, regs)
    fallbacks = dc.get_dispatcher()._fallbacks
    for key in RUNTIME_KEYS:
        assert op.table_entry(key) == compute_table_entry(op._kernels, fallbacks, key), key
    assert_dispatch_state_consistent(op)
    fallthroughs = fallthrough_keys(op)
    for bits in PROBES:
        assert op.key_for(bits) == reference_key(fallthroughs, bits), dc.DispatchKeySet.from_raw(bits)


PB_COMBOS = [(("CompositeImplicitAutograd", False), (pb, False)) for pb in
             ("Dense", "Sparse", "Quantized", "SparseCsr", "NestedTensor", "AutogradFunctionality")]
PB_COMBOS += [tuple(reversed(c)) for c in PB_COMBOS] + [(("CompositeImplicitAutograd", False), ("Dense", False),
                                                         ("CPU", False), ("Autograd", False))]


@pytest.mark.parametrize("regs", PB_COMBOS, ids=lambda regs: "+".join(k for k, _ in regs))
def test_per_backend_functionality_kernels_keep_the_table_equal_to_the_resolver(lib, regs):
    """Registering and removing them, in either order with a composite, never leaves a stale slot."""
    lib.define("f(Tensor x) -> Tensor")
    fallbacks = dc.get_dispatcher()._fallbacks
    handles = []
    for key, _ in regs:
        handles.append(lib.impl("f", lambda x, _k=key: _k, key))
        op = dc.find_op(f"{lib.ns}::f")
        for k in RUNTIME_KEYS:
            assert op.table_entry(k) == compute_table_entry(op._kernels, fallbacks, k), (key, k)
        assert_dispatch_state_consistent(op)
    for handle in handles:
        handle.remove()
        for k in RUNTIME_KEYS:
            assert op.table_entry(k) == compute_table_entry(op._kernels, fallbacks, k), k


def test_table_returns_to_empty_after_removing_everything(lib):
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    baseline = {k: op.table_entry(k) for k in RUNTIME_KEYS}
    handles = [lib.impl("f", lambda x: x, k) for k in REG_KEYS[:12]]
    for handle in handles:
        handle.remove()
        assert_dispatch_state_consistent(op)
    assert {k: op.table_entry(k) for k in RUNTIME_KEYS} == baseline
    assert op.registrations == {}


def test_table_entry_accepts_key_names_and_reports_missing(lib):
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    assert op.table_entry("CPU") == (None, "missing")
    reg, label = op.table_entry("AutogradCPU")
    assert label == "backend fallback" and reg.boxed_fallback


# --- the call path ------------------------------------------------------------------------------
def test_fast_and_general_paths_pick_the_same_kernel(lib, carrier):
    lib.define("f(Tensor x, int n=1) -> Tensor")
    lib.impl("f", lambda x, n=1: ("CPU", n), "CPU")
    lib.impl("f", lambda x, n=1: ("Meta", n), "Meta")
    op = dc.find_op(f"{lib.ns}::f")
    for t in ("CPU", "Meta"):
        assert op(carrier(t)) == op(x=carrier(t)) == op(carrier(t), n=1) == (t, 1)
        assert op(carrier(t), 4) == op(carrier(t), n=4) == (t, 4)


def test_positional_arguments_given_by_keyword_reach_the_kernel_by_position(lib, carrier):
    """torch passes schema-positional arguments positionally, whatever their kernel parameter names."""
    lib.define("f(Tensor x, int n=1, *, int k=2) -> Tensor")
    lib.impl("f", lambda a, m=1, *, k=2: (m, k), "CPU")
    op = dc.find_op(f"{lib.ns}::f")
    assert op(x=carrier(), n=5) == (5, 2)
    assert op(carrier(), n=5, k=3) == (5, 3)
    assert op(carrier(), k=3) == (1, 3)


def test_with_keyset_kernel_gets_the_masked_keyset(lib, carrier):
    """computeDispatchKeySet: only CPU and AutogradCPU are non-fallthrough, so those are all the kernel sees."""
    lib.define("f(Tensor x) -> Tensor")
    seen = []
    op = dc.find_op(f"{lib.ns}::f")

    def autograd(ks, x):
        seen.append(ks)
        return op.redispatch(ks & dc.DispatchKeySet.full_after("AutogradCPU"), x)

    lib.impl("f", lambda ks, x: seen.append(ks) or "cpu", "CPU", with_keyset=True)
    lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
    assert op(carrier("CPU")) == "cpu"
    assert seen == [dc.DispatchKeySet(["CPU", "AutogradCPU"]), dc.DispatchKeySet("CPU")]
    assert all(type(ks) is dc.DispatchKeySet for ks in seen)


def test_redispatch_accepts_raw_ints_and_keysets(lib, carrier):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "meta", "Meta")
    op = dc.find_op(f"{lib.ns}::f")
    assert op.redispatch(dc.DispatchKeySet("CPU"), carrier()) == "cpu"
    assert op.redispatch(int(dc.DispatchKeySet("Meta")), carrier()) == "meta"
    assert op.redispatch(dc.DispatchKeySet("CPU"), x=carrier()) == "cpu"


def test_key_for_uses_the_op_fallthrough_mask(lib, carrier):
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::f")
    cpu = (int(dc.tensor_keyset("CPU")) | DEFAULT_INCLUDED) & (BACKEND_MASK | ~DEFAULT_EXCLUDED)
    assert op.key_for(cpu) == D.AutogradCPU
    lib.impl("f", dc.fallthrough_kernel, "AutogradCPU")
    assert op.key_for(cpu) == D.CPU
    assert op.key_for(dc.DispatchKeySet(["Meta", "AutogradMeta"])) == D.AutogradMeta  # per backend
    assert op.key_for(0) == D.Undefined


def test_is_dispatch_arg():
    class Bits:
        _key_bits = 1

    class NotBits:
        _key_bits = "1"

    assert is_dispatch_arg(Bits()) and not is_dispatch_arg(NotBits()) and not is_dispatch_arg(3)


# --- introspection and dumps ---------------------------------------------------------------------
def _normalize(text: str) -> str:
    text = re.sub(r"registered at \S*test_operator\.py:\d+", "registered at HERE", text)
    return re.sub(r"registered at dispatchcore/(dispatcher|modes)\.py:\d+", "registered at BUILTIN", text)


def test_dump_state_snapshot(lib):
    lib.define("mysin(Tensor x) -> Tensor")
    lib.impl("mysin", lambda x: x, "CPU")
    lib.impl("mysin", lambda x: x, "Autograd")
    lib.impl("mysin", dc.fallthrough_kernel, "AutogradCPU")
    assert _normalize(dc.dump_state(f"{lib.ns}::mysin")) == textwrap.dedent(f"""\
        name: {lib.ns}::mysin
        schema: {lib.ns}::mysin(Tensor x) -> Tensor
        debug: registered at HERE
        alias analysis kind: FROM_SCHEMA
        CPU: registered at HERE :: (none) [ boxed ]
        AutogradCPU: registered at HERE :: (none) [ fallthrough boxed ]
        Autograd[alias]: registered at HERE :: (none) [ boxed ]
        """)


def test_dump_table_snapshot(lib):
    """The example table of OperatorEntry.cpp's dump: CPU kernel plus an Autograd alias kernel."""
    lib.define("mysin(Tensor x) -> Tensor")
    lib.impl("mysin", lambda x: x, "CPU")
    lib.impl("mysin", lambda x: x, "Autograd")
    autograd = [f"{k}: registered at HERE [autograd kernel]" for k in (
        "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradHIP", "AutogradXLA", "AutogradMPS",
        "AutogradIPU", "AutogradXPU", "AutogradHPU", "AutogradVE", "AutogradLazy", "AutogradMTIA",
        "AutogradMAIA", "AutogradPrivateUse1", "AutogradPrivateUse2", "AutogradPrivateUse3",
        "AutogradMeta", "AutogradNestedTensor")]
    fallback = "registered at BUILTIN [backend fallback]"
    fallthrough = "fallthrough registered at BUILTIN [backend fallback]"
    expected = [
        "CPU: registered at HERE [kernel]",
        f"Meta: {fallback}",
        f"BackendSelect: {fallthrough}",
        *(f"{k}: {fallback}" for k in ("Python", "FuncTorchDynamicLayerBackMode", "Functionalize",
                                         "Conjugate", "Negative", "ZeroTensor")),
        f"ADInplaceOrView: {fallthrough}",
        *autograd,
        f"Tracer: {fallback}",
        *(f"{k}: {fallthrough}" for k in ("AutocastCPU", "AutocastMTIA", "AutocastMAIA", "AutocastXPU",
                                            "AutocastMPS", "AutocastCUDA")),
        f"FuncTorchBatched: {fallback}",
        f"BatchedNestedTensor: {fallback}",
        f"FuncTorchVmapMode: {fallthrough}",
        f"Batched: {fallback}",
        f"VmapMode: {fallthrough}",
        *(f"{k}: {fallback}" for k in ("FuncTorchGradWrapper", "PythonTLSSnapshot",
                                         "FuncTorchDynamicLayerFrontMode", "PreDispatch",
                                         "PythonDispatcher")),
    ]
    table = _normalize(dc.find_op(f"{lib.ns}::mysin").dump_table())
    assert table.splitlines() == expected
    assert table.endswith("\n")


def test_dump_table_fallthrough_via_alias(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", dc.fallthrough_kernel, "Autograd")
    lines = _normalize(dc.dump_table(f"{lib.ns}::f")).splitlines()
    assert "AutogradCPU: fallthrough registered at HERE [autograd kernel]" in lines


def test_registrations_snapshot_newest_first(lib, quiet_override):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: 1, "CPU")
    lib.impl("f", lambda x: 2, "CPU")
    op = dc.find_op(f"{lib.ns}::f")
    regs = op.registrations
    assert [r.kernel(None) for r in regs[D.CPU]] == [2, 1]
    assert isinstance(regs[D.CPU], tuple) and all(isinstance(r, KernelRegistration) for r in regs[D.CPU])
    regs[D.CPU] = ()
    assert len(op.registrations[D.CPU]) == 2  # a snapshot
    assert op.has_kernel_for_dispatch_key("CPU") and not op.has_kernel_for_dispatch_key(D.Meta)


def test_handle_names(lib):
    lib.define("f.ov(Tensor x) -> Tensor")
    lib.define("g(Tensor x) -> Tensor")
    f = dc.find_op(f"{lib.ns}::f.ov")
    g = dc.find_op(f"{lib.ns}::g.default")
    assert (f.name, f.overload_name, f.qualname) == (f"{lib.ns}::f", "ov", f"{lib.ns}::f.ov")
    assert str(f) == f"{lib.ns}.f.ov" and str(g) == f"{lib.ns}.g.default"
    assert repr(g) == f"<OperatorHandle {lib.ns}::g>"
    assert f.is_defined


def test_calling_an_undefined_handle_says_how_to_define_it(ns, carrier):
    lib = dc.Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    op = dc.find_op(f"{ns}::f")
    lib._destroy()
    assert not op.is_defined
    with pytest.raises(RuntimeError, match=rf"{ns}::f has no schema: it was never defined, or its "
                                           r"Library was destroyed"):
        op(carrier())


def test_kernel_registration_debug():
    reg = KernelRegistration(key=D.CPU, kernel=len)
    assert reg.debug == "no debug info" and not reg.fallthrough
    reg = KernelRegistration(key=D.CPU, kernel=dc.fallthrough_kernel, where=dc.SourceLocation("a.py", 3))
    assert reg.debug == "registered at a.py:3" and reg.fallthrough
    reg = KernelRegistration(key=D.CPU, kernel=len, debug_override="custom")
    assert reg.debug == "custom"


def test_fallthrough_kernel_raises_the_internal_assert_when_called():
    with pytest.raises(RuntimeError, match=r"^0 INTERNAL ASSERT FAILED at \"aten/src/ATen/core/boxing/"
                                           r"KernelFunction.cpp\":14, please report a bug to PyTorch\. "
                                           r"fallthrough_kernel was executed"):
        dc.fallthrough_kernel(1, a=2)


def test_masks_cover_the_full_keyset():
    assert FULL == 0x3FFFFFFFFFFFFFFF


@pytest.fixture
def quiet_override():
    dispatcher = dc.get_dispatcher()
    previous = dispatcher._warned_override
    dispatcher._warned_override = True
    yield
    dispatcher._warned_override = previous


def test_dispatch_memo_is_replaced_on_registration_and_on_library_destroy():
    import dispatchcore as dc

    lib = dc.Library("memo_t", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    x = dc.ones(1)
    op = dc.ops.memo_t.f.default
    assert op(x) == "cpu" and op._dispatch[2]  # memoised after the first call
    extra = dc.Library("memo_t", "IMPL")
    extra.impl("f", lambda x: "autograd", "AutogradCPU")
    call1 = op.entry(1)
    assert op(x) == "autograd" and call1(x) == "autograd"
    extra._destroy()
    assert op(x) == "cpu" and call1(x) == "cpu"
    lib._destroy()


def test_fast_entries_refuse_operators_that_dispatch_on_other_arguments():
    import dispatchcore as dc
    from dispatchcore._tensor_methods import fast
    from dispatchcore.ops import aten

    a, b = dc.ones(2), dc.ones(2)
    assert fast(aten.add.Tensor, 2)(a, b).tolist() == [2.0, 2.0]
    assert fast(aten.select.int, 1, 3)(dc.arange(3.0), 0, 1).item() == 1.0
    with pytest.raises(AssertionError, match="3 positional"):
        fast(aten.relu.default, 1, 3)
    with pytest.raises(AssertionError, match="first 2"):
        fast(aten.add.Scalar, 2)
    with pytest.raises(AssertionError, match="first 1"):
        fast(aten.where.self, 1)


def test_operator_module_docstring_examples_run():
    import doctest

    from dispatchcore import operator as operator_module

    failures, attempted = doctest.testmod(operator_module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0


# --- SourceLocation: one rule for the printed file ----------------------------------------------
@pytest.mark.parametrize("module_globals,filename,shown", [
    ({"__name__": "dispatchcore.dispatcher"}, "/site/dispatchcore/dispatcher.py", "dispatchcore/dispatcher.py"),
    ({"__name__": "dispatchcore_backends.cpu"}, "/repo/backends/cpu/__init__.py",
     "dispatchcore_backends/cpu/__init__.py"),
    ({"__name__": "dispatchcore.autograd.derivatives"}, "C:\\\\x\\\\dispatchcore\\\\autograd\\\\derivatives.py",
     "dispatchcore/autograd/derivatives.py"),
    ({"__name__": "__main__", "__spec__": type("Spec", (), {"name": "dispatchcore.__main__"})()},
     "/site/dispatchcore/__main__.py", "dispatchcore/__main__.py"),
    ({"__name__": "__main__"}, "example.py", "example.py"),  # a user's script: as Python gives it
    ({"__name__": "mypkg.ops"}, "/home/me/mypkg/ops.py", "/home/me/mypkg/ops.py"),
    ({"__name__": "dispatchcore_extra"}, "/x/dispatchcore_extra.py", "/x/dispatchcore_extra.py"),
    ({"__name__": "dispatchcore.doc"}, "<doctest dispatchcore.doc[0]>", "<doctest dispatchcore.doc[0]>"),
])
def test_source_location_prints_package_files_relative_and_user_files_as_given(module_globals, filename, shown):
    from dispatchcore.operator import _display_path

    assert _display_path(module_globals, filename) == shown


def test_every_builtin_registration_location_is_package_relative():
    dc.load_backends()
    files = {reg.where.file for op in dc.get_dispatcher().operators()
             for stack in op.registrations.values() for reg in stack if reg.where is not None}
    files |= {reg.where.file for reg in dc.get_dispatcher().fallbacks.values()}
    files |= {op.def_location.file for op in dc.get_dispatcher().operators() if op.def_location is not None}
    assert files and all(f.startswith(("dispatchcore/", "dispatchcore_backends/")) for f in files
                         if "dispatchcore" in f), sorted(files)
    assert "dispatchcore_backends/cpu/__init__.py" in files and "dispatchcore/aten.py" in files


# --- Note [Bind on failure]: handles raise torch.ops's binding errors on every path ---------

def _define_f(lib, schema, kernel):
    lib.define(schema)
    lib.impl("f", kernel, "CPU")
    return dc.find_op(f"{lib.ns}::f")


def test_bad_positional_value_raises_the_binding_error_cold_and_memoised(lib, carrier):
    seen = []
    op = _define_f(lib, "f(Tensor x, int n) -> Tensor", lambda x, n: seen.append(n) or x)
    c = carrier()
    for memo_state in ("cold", "filled", "filled"):
        with pytest.raises(dc.SchemaError) as info:
            op(c, "a")
        assert str(info.value).startswith(
            f"{lib.ns}::f() Expected a value of type 'int' for argument 'n' but instead found type "
            "'str'.\nPosition: 1\nValue: 'a'\nDeclaration: "), memo_state
        assert info.value.__context__ is None and info.value.__cause__ is None
        op(c, 1)  # fills the memo for the next round
    assert seen == [1, 1, 1]  # the kernel never saw the bad value


def test_kernel_errors_propagate_unchanged_when_the_values_fit(lib, carrier):
    raised = []

    def kernel(x, n):
        raised.append(TypeError(f"kernel refuses {n}"))
        raise raised[-1]

    op = _define_f(lib, "f(Tensor x, int n) -> Tensor", kernel)
    for _ in range(2):  # memo miss, then hit
        with pytest.raises(TypeError, match="kernel refuses 3") as info:
            op(carrier(), 3)
        assert info.value is raised[-1] and info.value.__context__ is None


def test_kernel_failing_on_bad_list_items_gives_the_binding_error(lib, carrier):
    op = _define_f(lib, "f(Tensor x, int[] s) -> int", lambda x, s: sum(s))
    c = carrier()
    assert op(c, [1, 2]) == 3 and op(c, (4,)) == 4
    with pytest.raises(dc.SchemaError, match=r"Expected a value of type 'List\[int\]' for argument 's' "
                                             r"but instead found type 'list'\.\nPosition: 1\nValue: \['a'\]") as info:
        op(c, ["a"])
    assert info.value.__context__ is None


def test_values_of_other_fitting_classes_reach_the_kernel(lib, carrier):
    import numpy as np

    op = _define_f(lib, "f(Tensor x, int n, ScalarType t, float w) -> Tensor", lambda x, n, t, w: (n, t, w))
    c = carrier()
    assert op(c, np.int64(2), dc.float32, 1) == (2, dc.float32, 1)
    assert op(c, True, 6, np.float32(0.5)) == (True, 6, np.float32(0.5))
    with pytest.raises(dc.SchemaError, match="for argument 't' but instead found type 'str'"):
        op(c, 1, "float32", 1.0)


def test_keyword_calls_check_every_value(lib, carrier):
    op = _define_f(lib, "f(Tensor x, *, ScalarType? dtype=None, Scalar alpha=1) -> Tensor",
                   lambda x, dtype=None, alpha=1: (dtype, alpha))
    c = carrier()
    assert op(c, dtype=dc.int64, alpha=2.5) == (dc.int64, 2.5)
    with pytest.raises(dc.SchemaError, match=r"Expected a value of type 'Optional\[int\]' for argument "
                                             r"'dtype' but instead found type 'str'"):
        op(c, dtype="int64")
    with pytest.raises(dc.SchemaError, match="Cast error details: Cannot cast a to number"):
        op(c, alpha="a")


def test_entries_give_the_binding_error_only_when_the_kernel_fails():
    view = dc.ops.aten.view.default.entry(2)
    x = dc.ones(2, 3)
    for _ in range(2):
        with pytest.raises(dc.SchemaError, match="aten::view.. Expected a value of type 'List.int.'") as info:
            view(x, "a")
        assert info.value.__context__ is None
        with pytest.raises(RuntimeError, match=r"shape '\[4\]' is invalid for input of size 6"):
            view(x, [4])  # the kernel's own error: the values fit
    assert view(x, [6]).shape == (6,)


def test_handles_of_a_dotted_namespace_split_at_the_last_separator(ns, carrier):
    lib = dc.Library(f"{ns}.sub", "DEF")  # torch 2.13 accepts dots in a namespace
    try:
        lib.define("f.ov(Tensor x) -> Tensor")
        lib.impl("f.ov", lambda x: "ran", "CPU")
        op = dc.find_op(f"{ns}.sub::f.ov")
        assert (op.name, op.overload_name, str(op)) == (f"{ns}.sub::f", "ov", f"{ns}.sub.f.ov")
        assert getattr(dc.ops, f"{ns}.sub").f.ov(carrier()) == "ran"
    finally:
        lib._destroy()


@pytest.mark.parametrize(("kind", "message"), [
    ("DEF", "bad optional access"),
    ("FRAGMENT", "cannot define TORCH_LIBRARY_FRAGMENT with the wildcard namespace _"),
])
def test_the_wildcard_namespace_defines_nothing(kind, message):
    with pytest.raises(dc.RegistrationError, match=message):
        dc.Library("_", kind)


@pytest.mark.parametrize("ns", ["", "a::b", None])
def test_namespaces_that_cannot_be_qualified_are_refused(ns):
    with pytest.raises(ValueError, match="Invalid namespace"):
        dc.Library(ns, "FRAGMENT")


# --- Note [Keyword calls] ------------------------------------------------------------------------------
def test_keyword_calls_of_plain_keyword_only_arguments_reach_the_kernel_as_given(lib):
    lib.define("kw(Tensor x, int[] size, *, int n=1, ScalarType? dtype=None) -> Tensor")
    seen = []
    # a kernel that reads its list (as real ones do): a bad item fails it, then the values are checked
    lib.impl("kw", lambda x, size, *, n=1, dtype=None: seen.append(([s + 0 for s in size], n, dtype)) or x, "CPU")
    op = dc.find_op(f"{lib.ns}::kw")
    assert op._kw_plain == frozenset({"n", "dtype"})
    x = dc.ones(2)
    assert op(x, [1, 2], n=3, dtype=dc.float64) is x
    assert op(x, size=[4], n=5) is x  # a positional argument by name: the binder, same result
    assert seen == [([1, 2], 3, dc.float64), ([4], 5, None)]
    with pytest.raises(dc.SchemaError, match=r"Expected a value of type 'int' for argument 'n' but instead found "
                                             r"type 'str'") as info:
        op(x, [1], n="three")
    assert info.value.__context__ is None  # no chained KeyError or fast-path error
    with pytest.raises(dc.SchemaError, match=r"Expected a value of type 'List\[int\]' for argument 'size'") as info:
        op(x, ["a"], n=1)  # See Note [Bind on failure]: the kernel raised, so the items were checked
    assert info.value.__context__ is None
    with pytest.raises(dc.SchemaError, match="Unknown keyword argument 'm'"):
        op(x, [1], m=1)


def test_keyword_calls_give_out_tensors_keys_and_bind_when_out_is_missing():
    add_out = dc.ops.aten.add.out
    assert (add_out._kw_plain, add_out._kw_tensors) == (frozenset({"alpha", "out"}), ("out",))
    x, out = dc.tensor([1.0, 2.0]), dc.empty(2)
    assert add_out(x, x, alpha=2, out=out) is out and out.tolist() == [3.0, 6.0]
    with pytest.raises(dc.SchemaError, match="missing value for argument 'out'") as info:
        add_out(x, x, alpha=2)
    assert info.value.__context__ is None
    # out's keys join the dispatch key set: with a Meta out the Meta kernel runs (and refuses the CPU inputs)
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta"):
        add_out(x, x, out=dc.empty(2, device="meta"))
    assert dc.ops.aten.searchsorted.Tensor._kw_plain is None  # a keyword-only Tensor? (sorter): the binder
    assert dc.ops.aten.empty_strided.default._kw_plain == frozenset({"dtype", "layout", "device", "pin_memory"})
    t = dc.ops.aten.empty_strided.default([2, 3], [3, 1], dtype=dc.float64, device="cpu")
    assert (tuple(t.shape), t.stride(), t.dtype) == ((2, 3), (3, 1), dc.float64)


def test_keyword_calls_of_number_taking_operators_wrap_a_positional_number_as_the_binder_does():
    # add.Tensor takes numbers for its Tensors (Note [Numbers for Tensors]); its only keyword,
    # alpha, is a Scalar, so ``add_(g, alpha=-lr)`` (SGD's update) skips the binder
    add = dc.ops.aten.add.Tensor
    assert add._kw_plain == frozenset({"alpha"})
    x, y = dc.tensor([1.0, 2.0]), dc.tensor([10.0, 20.0])
    assert add(x, y, alpha=2).tolist() == [21.0, 42.0]
    r = add(x, 3, alpha=2)  # a number where a Tensor goes: wrapped, then promoted as a number
    assert (r.tolist(), r.dtype) == ([7.0, 8.0], dc.float32)
    assert add(x, other=y, alpha=2).tolist() == [21.0, 42.0]  # a positional argument by name: the binder
    assert dc.ops.aten.add_.Tensor(x, y, alpha=0.5).tolist() == [6.0, 12.0]
    assert x._version == 1
    with pytest.raises(dc.SchemaError, match=r"Expected a value of type 'number' for argument 'alpha'"):
        add(x, y, alpha="a")
    with pytest.raises(dc.SchemaError, match="Unknown keyword argument 'beta'"):
        add(x, y, beta=2)


def test_a_list_of_tensors_dispatches_on_the_union_of_its_items_keys_on_the_positional_path(lib):
    # See Note [Optional Tensors on the fast path]: required positional Tensor[] arguments too
    lib.define("f(Tensor[] xs, int n=0) -> str")
    lib.impl("f", lambda xs, n=0: ("CPU", len(xs), n), "CPU")
    lib.impl("f", lambda xs, n=0: ("Meta", len(xs), n), "Meta")
    op = dc.find_op(f"{lib.ns}::f")
    assert op._list_pos == (0,) and op._lo <= 1 <= op._hi
    cpu, meta = dc.ones(2), dc.ones(2, device="meta")
    for _ in range(2):  # cold, then from the memo
        assert op([cpu, cpu]) == ("CPU", 2, 0)
        assert op((cpu, meta), 3) == ("Meta", 2, 3)  # a tuple is a list here, as in torch
    with pytest.raises(dc.SchemaError, match=r"Expected a value of type 'List\[Tensor\]' for argument 'xs'"):
        op(cpu)  # a Tensor is iterable, but no list: it binds, and fails there
    with pytest.raises(dc.SchemaError, match=r"Expected a value of type 'List\[Tensor\]' for argument 'xs'"):
        op([cpu, 2])
    seen = []

    class Seen(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), len(args[0])))
            return func(*args, **(kwargs or {}))

    with Seen():
        assert op([cpu, cpu, cpu]) == ("CPU", 3, 0)
    assert seen == [(f"{lib.ns}.f.default", 3)]


def test_the_handle_of_cat_with_no_tensors_raises_torchs_error_not_a_recursion():
    # no tensor: the dispatch key set is empty (Undefined), whose slot is the structured
    # CompositeExplicitAutogradNonFunctional kernel; its out= kernel raises cat's check
    with pytest.raises(ValueError, match=r"^torch\.cat\(\): expected a non-empty list of Tensors$"):
        dc.ops.aten.cat.default([])
    with pytest.raises(ValueError, match=r"expected a non-empty list of Tensors"):
        dc.ops.aten.cat.default([], 1)
