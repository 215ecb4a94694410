"""Unit tests for dispatchcore.keys: numbering, parsing, runtime-key arithmetic, alias expansion."""

from __future__ import annotations

import pytest

from dispatchcore.keys import (
    NUM_BACKENDS,
    PER_BACKEND_FUNCTIONALITIES,
    RUNTIME_KEYS,
    BackendComponent,
    DispatchKey,
    UnknownDispatchKeyError,
    alias_expansion,
    is_alias_key,
    is_per_backend_functionality,
    is_runtime_key,
    parse_dispatch_key,
    runtime_key,
    to_backend_component,
    to_functionality_key,
)

D = DispatchKey
B = BackendComponent

FUNCTIONALITY_ORDER = [
    "Undefined", "Dense", "FPGA", "Vulkan", "Metal", "Quantized", "CustomRNGKeyId", "MkldnnCPU",
    "Sparse", "SparseCsr", "NestedTensor", "BackendSelect", "Fake", "Python",
    "FuncTorchDynamicLayerBackMode", "Functionalize", "Conjugate", "Negative", "ZeroTensor",
    "ADInplaceOrView", "AutogradOther", "AutogradFunctionality", "AutogradNestedTensor", "Tracer",
    "AutocastCPU", "AutocastMTIA", "AutocastMAIA", "AutocastXPU", "AutocastIPU", "AutocastHPU",
    "AutocastXLA", "AutocastMPS", "AutocastCUDA", "AutocastPrivateUse1", "FuncTorchBatched",
    "BatchedNestedTensor", "FuncTorchVmapMode", "Batched", "VmapMode", "FuncTorchGradWrapper",
    "DeferredInit", "PythonTLSSnapshot", "FuncTorchDynamicLayerFrontMode",
    "TESTING_ONLY_GenericWrapper", "TESTING_ONLY_GenericMode", "PreDispatch", "PythonDispatcher",
    "EndOfFunctionalityKeys",
]
BACKENDS = [
    "CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "MTIA", "MAIA",
    "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta",
]
# (functionality, StartOf<F>Backends value, runtime-key prefix), c10/core/DispatchKey.h
PB_BLOCKS = [
    ("Dense", 48, ""),
    ("Quantized", 65, "Quantized"),
    ("Sparse", 82, "Sparse"),
    ("SparseCsr", 99, "SparseCsr"),
    ("NestedTensor", 116, "NestedTensor"),
    ("AutogradFunctionality", 133, "Autograd"),
]
ALIASES = [
    ("Autograd", 150),
    ("CompositeImplicitAutograd", 151),
    ("FuncTorchBatchedDecomposition", 152),
    ("CompositeImplicitAutogradNestedTensor", 153),
    ("CompositeExplicitAutograd", 154),
    ("CompositeExplicitAutogradNonFunctional", 155),
]


# --- numbering ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Undefined", 0),
        ("Dense", 1),
        ("ADInplaceOrView", 19),
        ("AutogradOther", 20),
        ("AutogradFunctionality", 21),
        ("AutocastCPU", 24),
        ("PythonDispatcher", 46),
        ("EndOfFunctionalityKeys", 47),
        ("StartOfDenseBackends", 48),
        ("CPU", 49),
        ("CUDA", 50),
        ("Meta", 64),
        ("QuantizedCPU", 66),
        ("SparseCPU", 83),
        ("SparseCsrCPU", 100),
        ("NestedTensorCPU", 117),
        ("StartOfAutogradFunctionalityBackends", 133),
        ("AutogradCPU", 134),
        ("AutogradMeta", 149),
        ("EndOfRuntimeBackendKeys", 149),
        ("Autograd", 150),
        ("CompositeExplicitAutogradNonFunctional", 155),
    ],
)
def test_key_values_match_pytorch(name, value):
    assert int(DispatchKey[name]) == value


def test_functionality_keys_are_numbered_in_priority_order():
    assert [DispatchKey(v).name for v in range(48)] == FUNCTIONALITY_ORDER


def test_backend_components_are_numbered_from_cpu_to_meta():
    assert B.InvalidBit == 0
    assert [c.name for c in B][1:] == [b + "Bit" for b in BACKENDS]
    assert [int(c) for c in B] == list(range(NUM_BACKENDS + 1))
    assert NUM_BACKENDS == 16


@pytest.mark.parametrize(("functionality", "start", "prefix"), PB_BLOCKS)
def test_runtime_blocks_follow_start_marker_in_backend_order(functionality, start, prefix):
    assert int(DispatchKey[f"StartOf{functionality}Backends"]) == start
    names = [DispatchKey(start + i).name for i in range(1, NUM_BACKENDS + 1)]
    assert names == [prefix + b for b in BACKENDS]
    assert DispatchKey[f"EndOf{functionality}Backends"] is DispatchKey(start + NUM_BACKENDS)


@pytest.mark.parametrize(("name", "value"), ALIASES)
def test_alias_keys_are_numbered_after_runtime_keys(name, value):
    assert int(DispatchKey[name]) == value
    assert is_alias_key(DispatchKey[name])


def test_enum_aliases_resolve_to_canonical_members():
    assert D.CatchAll is D.Undefined
    assert D.DefaultBackend is D.CompositeExplicitAutograd
    assert D.EndOfDenseBackends is D.Meta
    assert D.EndOfRuntimeBackendKeys is D.AutogradMeta
    assert D.StartOfAliasKeys is D.Autograd
    assert D.EndOfAliasKeys is D.CompositeExplicitAutogradNonFunctional


def test_enum_iterates_canonical_members_in_value_order():
    values = [int(k) for k in DispatchKey]
    assert values == sorted(values) == list(range(156))


def _c10_layout() -> list[tuple[str, int]]:
    """The (name, value) list c10's layout rules produce, in declaration order (the oracle).

    Functionality keys 0..47; then per per-backend functionality a StartOf<F>Backends marker, its
    NUM_BACKENDS runtime keys in BackendComponent order and an EndOf<F>Backends enum alias;
    EndOfRuntimeBackendKeys; the alias keys; and finally the remaining enum aliases.
    """
    members = [(name, value) for value, name in enumerate(FUNCTIONALITY_ORDER)]
    value = len(FUNCTIONALITY_ORDER)
    for functionality, _, prefix in PB_BLOCKS:
        members.append((f"StartOf{functionality}Backends", value))
        for i, backend in enumerate(BACKENDS, start=1):
            members.append((prefix + backend, value + i))
        members.append((f"EndOf{functionality}Backends", value + NUM_BACKENDS))
        value += NUM_BACKENDS + 1
    members.append(("EndOfRuntimeBackendKeys", value - 1))
    alias_names = [name for name, _ in ALIASES]
    for i, name in enumerate(alias_names):
        members.append((name, value + i))
    members += [
        ("StartOfAliasKeys", value),
        ("EndOfAliasKeys", value + len(alias_names) - 1),
        ("CatchAll", 0),
        ("DefaultBackend", value + alias_names.index("CompositeExplicitAutograd")),
    ]
    return members


def test_explicit_enum_matches_c10_layout_rules():
    """DispatchKey is written out by hand; every name, value and the declaration order must follow c10."""
    declared = [(name, int(key)) for name, key in DispatchKey.__members__.items()]
    assert declared == _c10_layout()


def test_explicit_enum_aliases_are_exactly_the_repeated_values():
    """A name is an enum alias iff its value was already declared; the first name declared is canonical."""
    first: dict[int, str] = {}
    for name, value in _c10_layout():
        first.setdefault(value, name)
        assert DispatchKey[name].name == first[value]
    assert [k.name for k in DispatchKey] == [first[v] for v in sorted(first)]


def test_parse_is_a_static_method_of_the_enum_not_a_member():
    assert "parse" not in DispatchKey.__members__
    assert DispatchKey.parse is parse_dispatch_key
    assert DispatchKey.CPU.parse("Meta") is D.Meta


# --- parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["CPU", "AutogradCPU", "CompositeImplicitAutograd", "FPGA", "Tracer"])
def test_parse_dispatch_key_returns_the_named_member(name):
    assert parse_dispatch_key(name) is DispatchKey[name]
    assert DispatchKey.parse(name) is DispatchKey[name]


def test_parse_dispatch_key_passes_keys_through():
    assert parse_dispatch_key(D.AutogradCPU) is D.AutogradCPU


def test_parse_dispatch_key_error_text_is_pytorchs():
    with pytest.raises(RuntimeError) as info:
        parse_dispatch_key("NotAKey")
    assert str(info.value) == "could not parse dispatch key: NotAKey"


def test_parse_dispatch_key_error_is_both_runtime_and_value_error():
    with pytest.raises(ValueError, match="^could not parse dispatch key: cpu$"):
        parse_dispatch_key("cpu")
    assert issubclass(UnknownDispatchKeyError, RuntimeError)


# --- functionality / backend arithmetic --------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "functionality"),
    [
        (D.CPU, D.Dense),
        (D.Meta, D.Dense),
        (D.QuantizedCUDA, D.Quantized),
        (D.SparseCPU, D.Sparse),
        (D.SparseCsrMeta, D.SparseCsr),
        (D.NestedTensorCPU, D.NestedTensor),
        (D.AutogradCPU, D.AutogradFunctionality),
        (D.AutogradMeta, D.AutogradFunctionality),
        (D.StartOfDenseBackends, D.Dense),
        (D.StartOfAutogradFunctionalityBackends, D.AutogradFunctionality),
        (D.Python, D.Python),
        (D.Dense, D.Dense),
        (D.Undefined, D.Undefined),
        (D.EndOfFunctionalityKeys, D.EndOfFunctionalityKeys),
        (D.Autograd, D.Undefined),
        (D.CompositeImplicitAutograd, D.Undefined),
    ],
)
def test_to_functionality_key(key, functionality):
    assert to_functionality_key(key) is functionality


@pytest.mark.parametrize(
    ("key", "backend"),
    [
        (D.CPU, B.CPUBit),
        (D.Meta, B.MetaBit),
        (D.AutogradCUDA, B.CUDABit),
        (D.SparseCsrPrivateUse1, B.PrivateUse1Bit),
        (D.AutogradMeta, B.MetaBit),
        (D.StartOfDenseBackends, B.InvalidBit),
        (D.StartOfQuantizedBackends, B.InvalidBit),
        (D.Dense, B.InvalidBit),
        (D.AutogradOther, B.InvalidBit),
        (D.MkldnnCPU, B.InvalidBit),
        (D.Autograd, B.InvalidBit),
    ],
)
def test_to_backend_component(key, backend):
    assert to_backend_component(key) is backend


def test_runtime_key_combines_functionality_and_backend():
    assert runtime_key(D.AutogradFunctionality, B.CPUBit) is D.AutogradCPU
    assert runtime_key(D.Dense, B.MetaBit) is D.Meta
    assert runtime_key(D.Sparse, 1) is D.SparseCPU
    assert runtime_key(D.Dense, B.InvalidBit) is D.StartOfDenseBackends


@pytest.mark.parametrize(("functionality", "start", "prefix"), PB_BLOCKS)
def test_runtime_key_round_trips_through_its_parts(functionality, start, prefix):
    for b in list(B)[1:]:
        k = runtime_key(DispatchKey[functionality], b)
        assert int(k) == start + int(b)
        assert to_functionality_key(k) is DispatchKey[functionality]
        assert to_backend_component(k) is b


def test_per_backend_functionalities_are_exactly_six():
    assert PER_BACKEND_FUNCTIONALITIES == {
        D.Dense, D.Quantized, D.Sparse, D.SparseCsr, D.NestedTensor, D.AutogradFunctionality,
    }
    assert [k for k in DispatchKey if is_per_backend_functionality(k)] == sorted(PER_BACKEND_FUNCTIONALITIES)


def test_there_are_137_runtime_slots():
    """47 + 6*15: every non-PB functionality incl. Undefined, plus 16 runtime keys per PB functionality."""
    assert len(RUNTIME_KEYS) == 137
    assert len(set(RUNTIME_KEYS)) == 137
    assert list(RUNTIME_KEYS) == sorted(RUNTIME_KEYS)
    assert all(is_runtime_key(k) for k in RUNTIME_KEYS)


@pytest.mark.parametrize("key", [D.Undefined, D.Python, D.AutogradOther, D.PythonDispatcher, D.CPU,
                                 D.AutogradMeta, D.NestedTensorCPU, D.FPGA])
def test_is_runtime_key_true(key):
    assert is_runtime_key(key)


@pytest.mark.parametrize("key", [D.Dense, D.AutogradFunctionality, D.EndOfFunctionalityKeys,
                                 D.StartOfDenseBackends, D.StartOfAutogradFunctionalityBackends,
                                 D.Autograd, D.CompositeExplicitAutogradNonFunctional])
def test_is_runtime_key_false(key):
    assert not is_runtime_key(key)


def test_is_alias_key_only_for_150_to_155():
    assert [int(k) for k in DispatchKey if is_alias_key(k)] == list(range(150, 156))


# --- alias expansion (c10/core/DispatchKeySet.cpp) ---------------------------------------------------------------


def _block(prefix, backends=BACKENDS):
    return {DispatchKey[prefix + b] for b in backends}


NON_CUSTOMIZABLE = {D.FPGA, D.Vulkan, D.Metal, D.CustomRNGKeyId, D.MkldnnCPU}
AUTOGRAD = _block("Autograd") | {D.AutogradOther, D.AutogradNestedTensor}
CEA = _block("") | _block("Quantized") | _block("Sparse") | _block("SparseCsr") | NON_CUSTOMIZABLE
NOT_XLA_LAZY = [b for b in BACKENDS if b not in ("XLA", "Lazy")]
CEA_NONFUNCTIONAL = (
    _block("", NOT_XLA_LAZY) | _block("Quantized", NOT_XLA_LAZY) | _block("SparseCsr", NOT_XLA_LAZY)
    | NON_CUSTOMIZABLE
)


@pytest.mark.parametrize(
    ("alias", "expected"),
    [
        ("Autograd", AUTOGRAD),
        ("CompositeExplicitAutograd", CEA),
        ("CompositeExplicitAutogradNonFunctional", CEA_NONFUNCTIONAL),
        ("CompositeImplicitAutograd", CEA | _block("NestedTensor") | AUTOGRAD),
        ("CompositeImplicitAutogradNestedTensor", _block("NestedTensor") | {D.AutogradNestedTensor}),
        ("FuncTorchBatchedDecomposition", {D.FuncTorchBatched}),
    ],
)
def test_alias_expansion_matches_spec_table(alias, expected):
    assert alias_expansion(alias) == expected
    assert alias_expansion(DispatchKey[alias]) == expected


def test_alias_expansion_sizes():
    sizes = {name: len(alias_expansion(name)) for name, _ in ALIASES}
    assert sizes == {
        "Autograd": 18,
        "CompositeImplicitAutograd": 103,
        "FuncTorchBatchedDecomposition": 1,
        "CompositeImplicitAutogradNestedTensor": 17,
        "CompositeExplicitAutograd": 69,
        "CompositeExplicitAutogradNonFunctional": 47,
    }


@pytest.mark.parametrize(("alias", "_"), ALIASES)
def test_alias_expansion_is_runtime_keys_only_and_never_undefined(alias, _):
    """Undefined is special-cased by the table rules, not by the expansion."""
    expansion = alias_expansion(alias)
    assert all(is_runtime_key(k) for k in expansion)
    assert D.Undefined not in expansion


@pytest.mark.parametrize("key", [D.CPU, D.AutogradCPU, D.Python, D.Undefined, D.Dense])
def test_alias_expansion_of_a_non_alias_key_is_itself(key):
    assert alias_expansion(key) == {key}
    assert alias_expansion(key.name) == {key}


def test_alias_expansion_rejects_unknown_names():
    with pytest.raises(RuntimeError, match="could not parse dispatch key: Nope"):
        alias_expansion("Nope")
