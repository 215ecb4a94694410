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
_BACKEND_NAMES = [c.name[:-3] for c in BackendComponent if c != BackendComponent.InvalidBit]

# (functionality value, runtime-key prefix) for the per-backend ("building block") functionalities,
# in the order their runtime blocks appear in the enum.
_PB_BLOCKS = [
    (1, "Dense", ""),
    (5, "Quantized", "Quantized"),
    (8, "Sparse", "Sparse"),
    (9, "SparseCsr", "SparseCsr"),
    (10, "NestedTensor", "NestedTensor"),
    (21, "AutogradFunctionality", "Autograd"),
]

_FUNCTIONALITY_NAMES = [
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

_ALIAS_NAMES = [
    "Autograd", "CompositeImplicitAutograd", "FuncTorchBatchedDecomposition",
    "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
]


def _enum_members() -> list[tuple[str, int]]:
    """Build the member list in c10's order; later duplicates of a value become enum aliases."""
    members = [(name, value) for value, name in enumerate(_FUNCTIONALITY_NAMES)]
    value = len(_FUNCTIONALITY_NAMES)
    for _, fname, prefix in _PB_BLOCKS:
        members.append((f"StartOf{fname}Backends", value))
        for i, backend in enumerate(_BACKEND_NAMES, start=1):
            members.append((prefix + backend, value + i))
        members.append((f"EndOf{fname}Backends", value + NUM_BACKENDS))
        value += NUM_BACKENDS + 1
    members.append(("EndOfRuntimeBackendKeys", value - 1))
    for i, name in enumerate(_ALIAS_NAMES):
        members.append((name, value + i))
    members += [
        ("StartOfAliasKeys", value),
        ("EndOfAliasKeys", value + len(_ALIAS_NAMES) - 1),
        ("CatchAll", 0),
        ("DefaultBackend", value + _ALIAS_NAMES.index("CompositeExplicitAutograd")),
    ]
    return members


DispatchKey = enum.IntEnum("DispatchKey", _enum_members(), module=__name__)
DispatchKey.__doc__ = """A dispatch key (``c10::DispatchKey``), numbered exactly as in PyTorch 2.13.

Values 0..47 are functionality keys (higher value = higher priority); 48..149 are the runtime
per-backend keys (``CPU`` = 49, ``AutogradCPU`` = 134); 150..155 are alias keys, which can be
registered to but never appear in a key set.

Example:
    >>> DispatchKey.AutogradCPU.value
    134
    >>> DispatchKey.parse("CompositeImplicitAutograd")
    <DispatchKey.CompositeImplicitAutograd: 151>
"""

END_OF_FUNCTIONALITY = 47
END_OF_RUNTIME = int(DispatchKey.EndOfRuntimeBackendKeys)  # 149
PER_BACKEND_FUNCTIONALITIES = frozenset(DispatchKey(v) for v, _, _ in _PB_BLOCKS)
_PB_START = {v: int(DispatchKey[f"StartOf{name}Backends"]) for v, name, _ in _PB_BLOCKS}


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


DispatchKey.parse = staticmethod(parse_dispatch_key)


def is_per_backend_functionality(key: DispatchKey | int) -> bool:
    """True for Dense, Quantized, Sparse, SparseCsr, NestedTensor and AutogradFunctionality."""
    return int(key) in _PB_START


def is_alias_key(key: DispatchKey | int) -> bool:
    """True for the registration-only alias keys (``Autograd``, ``CompositeImplicitAutograd``, ...)."""
    return int(DispatchKey.StartOfAliasKeys) <= int(key) <= int(DispatchKey.EndOfAliasKeys)


def to_functionality_key(key: DispatchKey | int) -> DispatchKey:
    """Mirror ``toFunctionalityKey``: a runtime key's per-backend functionality, else the key."""
    k = int(key)
    if k <= END_OF_FUNCTIONALITY:
        return DispatchKey(k)
    for functionality, start in _PB_START.items():
        if start <= k <= start + NUM_BACKENDS:
            return DispatchKey(functionality)
    return DispatchKey.Undefined


def to_backend_component(key: DispatchKey | int) -> BackendComponent:
    """Mirror ``toBackendComponent``: ``k - StartOf<F>Backends`` for runtime keys, else InvalidBit."""
    k = int(key)
    for start in _PB_START.values():
        if start < k <= start + NUM_BACKENDS:
            return BackendComponent(k - start)
    return BackendComponent.InvalidBit


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

    An alias key expands to the runtime keys it covers (spec table §1.4; ``Undefined`` is handled
    separately by the table rules); any other key stands for itself.

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
