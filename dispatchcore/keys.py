"""Dispatch keys and backend components, with c10's numbering, names and order.

Mirrors ``c10/core/DispatchKey.h``: functionality keys 0..47 (priority rises with the value),
then one block of runtime keys per per-backend functionality (``CPU``, ``AutogradCPU``, ...),
then the alias keys 150..155, which exist only for registration. Member names are PyTorch's,
verbatim and in CamelCase (a deliberate exception to PEP 8, so that readers can grep for them).
"""

from __future__ import annotations

import enum

__all__ = [
    "BackendComponent",
    "DispatchKey",
    "NUM_BACKENDS",
    "PER_BACKEND_FUNCTIONALITIES",
    "alias_expansion",
    "is_alias_key",
    "is_per_backend_functionality",
    "is_runtime_key",
    "UnknownDispatchKeyError",
    "parse_dispatch_key",
    "runtime_key",
    "to_backend_component",
    "to_functionality_key",
]


class BackendComponent(enum.IntEnum):
    """A backend bit (``c10::BackendComponent``); component ``c`` occupies raw key-set bit ``c - 1``."""

    InvalidBit = 0
    CPUBit = 1
    CUDABit = 2
    HIPBit = 3
    XLABit = 4
    MPSBit = 5
    IPUBit = 6
    XPUBit = 7
    HPUBit = 8
    VEBit = 9
    LazyBit = 10
    MTIABit = 11
    MAIABit = 12
    PrivateUse1Bit = 13
    PrivateUse2Bit = 14
    PrivateUse3Bit = 15
    MetaBit = 16


NUM_BACKENDS = 16

# (functionality value, functionality name) of the per-backend ("building block") functionalities,
# in the order their runtime blocks appear in DispatchKey.
_PB_BLOCKS = [
    (1, "Dense"),
    (5, "Quantized"),
    (8, "Sparse"),
    (9, "SparseCsr"),
    (10, "NestedTensor"),
    (21, "AutogradFunctionality"),
]


class UnknownDispatchKeyError(RuntimeError, ValueError):
    """Raised for a key name PyTorch would not parse either."""


def parse_dispatch_key(name: str | DispatchKey) -> DispatchKey:
    """Return the key named ``name`` (``c10::parseDispatchKey``).

    Raises:
        ValueError: ``could not parse dispatch key: <name>`` (PyTorch raises RuntimeError with this
            text; dispatchcore's error subclasses both so either ``except`` works).
    """
    if isinstance(name, DispatchKey):
        return name
    try:
        return DispatchKey[name]
    except KeyError:
        # PyTorch's text verbatim; `python -m dispatchcore keys` lists the valid names.
        raise UnknownDispatchKeyError(f"could not parse dispatch key: {name}") from None


class DispatchKey(enum.IntEnum):
    """A dispatch key (``c10::DispatchKey``), numbered exactly as in PyTorch 2.13.

    Values 0..47 are functionality keys (higher value = higher priority); 48..149 are the runtime
    per-backend keys (``CPU`` = 49, ``AutogradCPU`` = 134); 150..155 are alias keys, which can be
    registered to but never appear in a key set.

    Example:
        >>> DispatchKey.AutogradCPU.value
        134
        >>> DispatchKey.parse("CompositeImplicitAutograd")
        <DispatchKey.CompositeImplicitAutograd: 151>
    """

    # Members are listed in c10's order: a later name with an earlier value is an enum alias
    # (``DispatchKey.EndOfDenseBackends is DispatchKey.Meta``). tests/unit/test_keys.py checks
    # this list against the layout rules.

    # --- functionality keys, lowest priority first (c10: 0..EndOfFunctionalityKeys) ---
    Undefined = 0
    Dense = 1
    FPGA = 2
    Vulkan = 3
    Metal = 4
    Quantized = 5
    CustomRNGKeyId = 6
    MkldnnCPU = 7
    Sparse = 8
    SparseCsr = 9
    NestedTensor = 10
    BackendSelect = 11
    Fake = 12
    Python = 13
    FuncTorchDynamicLayerBackMode = 14
    Functionalize = 15
    Conjugate = 16
    Negative = 17
    ZeroTensor = 18
    ADInplaceOrView = 19
    AutogradOther = 20
    AutogradFunctionality = 21
    AutogradNestedTensor = 22
    Tracer = 23
    AutocastCPU = 24
    AutocastMTIA = 25
    AutocastMAIA = 26
    AutocastXPU = 27
    AutocastIPU = 28
    AutocastHPU = 29
    AutocastXLA = 30
    AutocastMPS = 31
    AutocastCUDA = 32
    AutocastPrivateUse1 = 33
    FuncTorchBatched = 34
    BatchedNestedTensor = 35
    FuncTorchVmapMode = 36
    Batched = 37
    VmapMode = 38
    FuncTorchGradWrapper = 39
    DeferredInit = 40
    PythonTLSSnapshot = 41
    FuncTorchDynamicLayerFrontMode = 42
    TESTING_ONLY_GenericWrapper = 43
    TESTING_ONLY_GenericMode = 44
    PreDispatch = 45
    PythonDispatcher = 46
    EndOfFunctionalityKeys = 47

    # --- runtime per-backend keys: one block of NUM_BACKENDS keys per per-backend functionality,
    # each after its StartOf<F>Backends marker, in BackendComponent order ---
    StartOfDenseBackends = 48
    CPU = 49
    CUDA = 50
    HIP = 51
    XLA = 52
    MPS = 53
    IPU = 54
    XPU = 55
    HPU = 56
    VE = 57
    Lazy = 58
    MTIA = 59
    MAIA = 60
    PrivateUse1 = 61
    PrivateUse2 = 62
    PrivateUse3 = 63
    Meta = 64
    EndOfDenseBackends = 64  # alias of Meta

    StartOfQuantizedBackends = 65
    QuantizedCPU = 66
    QuantizedCUDA = 67
    QuantizedHIP = 68
    QuantizedXLA = 69
    QuantizedMPS = 70
    QuantizedIPU = 71
    QuantizedXPU = 72
    QuantizedHPU = 73
    QuantizedVE = 74
    QuantizedLazy = 75
    QuantizedMTIA = 76
    QuantizedMAIA = 77
    QuantizedPrivateUse1 = 78
    QuantizedPrivateUse2 = 79
    QuantizedPrivateUse3 = 80
    QuantizedMeta = 81
    EndOfQuantizedBackends = 81  # alias of QuantizedMeta

    StartOfSparseBackends = 82
    SparseCPU = 83
    SparseCUDA = 84
    SparseHIP = 85
    SparseXLA = 86
    SparseMPS = 87
    SparseIPU = 88
    SparseXPU = 89
    SparseHPU = 90
    SparseVE = 91
    SparseLazy = 92
    SparseMTIA = 93
    SparseMAIA = 94
    SparsePrivateUse1 = 95
    SparsePrivateUse2 = 96
    SparsePrivateUse3 = 97
    SparseMeta = 98
    EndOfSparseBackends = 98  # alias of SparseMeta

    StartOfSparseCsrBackends = 99
    SparseCsrCPU = 100
    SparseCsrCUDA = 101
    SparseCsrHIP = 102
    SparseCsrXLA = 103
    SparseCsrMPS = 104
    SparseCsrIPU = 105
    SparseCsrXPU = 106
    SparseCsrHPU = 107
    SparseCsrVE = 108
    SparseCsrLazy = 109
    SparseCsrMTIA = 110
    SparseCsrMAIA = 111
    SparseCsrPrivateUse1 = 112
    SparseCsrPrivateUse2 = 113
    SparseCsrPrivateUse3 = 114
    SparseCsrMeta = 115
    EndOfSparseCsrBackends = 115  # alias of SparseCsrMeta

    StartOfNestedTensorBackends = 116
    NestedTensorCPU = 117
    NestedTensorCUDA = 118
    NestedTensorHIP = 119
    NestedTensorXLA = 120
    NestedTensorMPS = 121
    NestedTensorIPU = 122
    NestedTensorXPU = 123
    NestedTensorHPU = 124
    NestedTensorVE = 125
    NestedTensorLazy = 126
    NestedTensorMTIA = 127
    NestedTensorMAIA = 128
    NestedTensorPrivateUse1 = 129
    NestedTensorPrivateUse2 = 130
    NestedTensorPrivateUse3 = 131
    NestedTensorMeta = 132
    EndOfNestedTensorBackends = 132  # alias of NestedTensorMeta

    StartOfAutogradFunctionalityBackends = 133
    AutogradCPU = 134
    AutogradCUDA = 135
    AutogradHIP = 136
    AutogradXLA = 137
    AutogradMPS = 138
    AutogradIPU = 139
    AutogradXPU = 140
    AutogradHPU = 141
    AutogradVE = 142
    AutogradLazy = 143
    AutogradMTIA = 144
    AutogradMAIA = 145
    AutogradPrivateUse1 = 146
    AutogradPrivateUse2 = 147
    AutogradPrivateUse3 = 148
    AutogradMeta = 149
    EndOfAutogradFunctionalityBackends = 149  # alias of AutogradMeta
    EndOfRuntimeBackendKeys = 149  # alias of AutogradMeta

    # --- alias keys: registration only, never in a key set ---
    Autograd = 150
    CompositeImplicitAutograd = 151
    FuncTorchBatchedDecomposition = 152
    CompositeImplicitAutogradNestedTensor = 153
    CompositeExplicitAutograd = 154
    CompositeExplicitAutogradNonFunctional = 155

    # --- enum aliases (same value as a member above) ---
    StartOfAliasKeys = 150  # alias of Autograd
    EndOfAliasKeys = 155  # alias of CompositeExplicitAutogradNonFunctional
    CatchAll = 0  # alias of Undefined
    DefaultBackend = 154  # alias of CompositeExplicitAutograd

    # ``DispatchKey.parse("CPU")``; ``nonmember`` says explicitly (for readers and type checkers)
    # that this is a class attribute, not a key.
    parse = enum.nonmember(staticmethod(parse_dispatch_key))


END_OF_FUNCTIONALITY = 47
END_OF_RUNTIME = int(DispatchKey.EndOfRuntimeBackendKeys)  # 149
PER_BACKEND_FUNCTIONALITIES = frozenset(DispatchKey(v) for v, _ in _PB_BLOCKS)
_PB_START = {v: int(DispatchKey[f"StartOf{name}Backends"]) for v, name in _PB_BLOCKS}


def is_per_backend_functionality(key: DispatchKey | int) -> bool:
    """True for Dense, Quantized, Sparse, SparseCsr, NestedTensor and AutogradFunctionality."""
    return int(key) in _PB_START


_START_OF_ALIAS = int(DispatchKey.StartOfAliasKeys)
_END_OF_ALIAS = int(DispatchKey.EndOfAliasKeys)


def is_alias_key(key: DispatchKey | int) -> bool:
    """True for the registration-only alias keys (``Autograd``, ``CompositeImplicitAutograd``, ...)."""
    return _START_OF_ALIAS <= key <= _END_OF_ALIAS


def _functionality_key(k: int) -> DispatchKey:
    if 0 <= k <= END_OF_FUNCTIONALITY:
        return DispatchKey(k)
    for functionality, start in _PB_START.items():
        if start <= k <= start + NUM_BACKENDS:
            return DispatchKey(functionality)
    return DispatchKey.Undefined


def _backend_component(k: int) -> BackendComponent:
    for start in _PB_START.values():
        if start < k <= start + NUM_BACKENDS:
            return BackendComponent(k - start)
    return BackendComponent.InvalidBit


# The two mappings below, computed once per key value: registering a kernel asks them ~100
# times per key (a table rebuild), and every interpreter registers ~2,000 kernels at import.
_FUNCTIONALITY_OF = tuple(_functionality_key(k) for k in range(_END_OF_ALIAS + 1))
_BACKEND_OF = tuple(_backend_component(k) for k in range(_END_OF_ALIAS + 1))


def to_functionality_key(key: DispatchKey | int) -> DispatchKey:
    """Mirror ``toFunctionalityKey``: a runtime key's per-backend functionality, else the key."""
    k = int(key)
    return _FUNCTIONALITY_OF[k] if 0 <= k <= _END_OF_ALIAS else DispatchKey.Undefined


def to_backend_component(key: DispatchKey | int) -> BackendComponent:
    """Mirror ``toBackendComponent``: ``k - StartOf<F>Backends`` for runtime keys, else InvalidBit."""
    k = int(key)
    return _BACKEND_OF[k] if 0 <= k <= _END_OF_ALIAS else BackendComponent.InvalidBit


def runtime_key(functionality: DispatchKey | int, backend: BackendComponent | int) -> DispatchKey:
    """Mirror ``toRuntimePerBackendFunctionalityKey``: e.g. (AutogradFunctionality, CPUBit) -> AutogradCPU."""
    return DispatchKey(_PB_START[int(functionality)] + int(backend))


def is_runtime_key(key: DispatchKey | int) -> bool:
    """True for keys that can index a dispatch table: non-PB functionality keys and runtime PB keys.

    ``Undefined`` counts (it has its own table slot); the ``StartOf*`` markers and the PB
    functionality keys themselves do not.
    """
    k = int(key)
    if k <= END_OF_FUNCTIONALITY:
        return k not in _PB_START and k != END_OF_FUNCTIONALITY
    return k <= END_OF_RUNTIME and k not in _PB_START.values()


RUNTIME_KEYS: tuple[DispatchKey, ...] = tuple(
    DispatchKey(k) for k in range(END_OF_RUNTIME + 1) if is_runtime_key(k)
)


def _block(functionality: DispatchKey) -> set[DispatchKey]:
    start = _PB_START[int(functionality)]
    return {DispatchKey(start + b) for b in range(1, NUM_BACKENDS + 1)}


def _backend_block(functionality: DispatchKey, backends: set[str]) -> set[DispatchKey]:
    return {k for k in _block(functionality) if to_backend_component(k).name[:-3] in backends}


_D = DispatchKey
_NON_CUSTOMIZABLE = {_D.FPGA, _D.Vulkan, _D.Metal, _D.CustomRNGKeyId, _D.MkldnnCPU}
_AUTOGRAD_RUNTIME = _block(_D.AutogradFunctionality) | {_D.AutogradOther, _D.AutogradNestedTensor}
_CEA_RUNTIME = (
    _block(_D.Dense) | _block(_D.Quantized) | _block(_D.Sparse) | _block(_D.SparseCsr) | _NON_CUSTOMIZABLE
)
_CEA_NONFUNCTIONAL_RUNTIME = (
    _CEA_RUNTIME - _block(_D.Sparse) - _backend_block(_D.Dense, {"XLA", "Lazy"})
    - _backend_block(_D.Quantized, {"XLA", "Lazy"}) - _backend_block(_D.SparseCsr, {"XLA", "Lazy"})
)
_CIA_NESTED_RUNTIME = _block(_D.NestedTensor) | {_D.AutogradNestedTensor}

_ALIAS_EXPANSION: dict[DispatchKey, frozenset[DispatchKey]] = {
    _D.Autograd: frozenset(_AUTOGRAD_RUNTIME),
    _D.CompositeExplicitAutograd: frozenset(_CEA_RUNTIME),
    _D.CompositeExplicitAutogradNonFunctional: frozenset(_CEA_NONFUNCTIONAL_RUNTIME),
    _D.CompositeImplicitAutograd: frozenset(
        _CEA_RUNTIME | _block(_D.NestedTensor) | _AUTOGRAD_RUNTIME
    ),
    _D.CompositeImplicitAutogradNestedTensor: frozenset(_CIA_NESTED_RUNTIME),
    _D.FuncTorchBatchedDecomposition: frozenset({_D.FuncTorchBatched}),
}


def alias_expansion(key: DispatchKey | str) -> frozenset[DispatchKey]:
    """Mirror ``getRuntimeDispatchKeySet``: the runtime keys a registration at ``key`` populates.

    An alias key expands to the runtime keys it covers (``getRuntimeDispatchKeySet`` in
    ``c10/core/DispatchKeySet.cpp``; ``Undefined`` is handled separately by the table rules); any
    other key stands for itself.

    Example:
        >>> DispatchKey.AutogradCPU in alias_expansion(DispatchKey.Autograd)
        True
        >>> alias_expansion("CPU")
        frozenset({<DispatchKey.CPU: 49>})
    """
    key = parse_dispatch_key(key)
    expansion = _ALIAS_EXPANSION.get(key)
    if expansion is not None:
        return expansion
    return frozenset({key})
