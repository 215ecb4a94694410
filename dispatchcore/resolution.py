"""The readable reference resolver: which kernel serves one runtime key of one operator, and why.

Mirrors ``OperatorEntry::computeDispatchTableEntryWithDebug`` in
``aten/src/ATen/core/dispatch/OperatorEntry.cpp``. Pure functions over immutable inputs: the
operator's registrations (newest first per key) and the global backend fallbacks. The fast table
in ``operator.py`` is derived from these rules at registration time, and a test checks that the
two agree for every operator and key. See Note [Table is derived state] in ``operator.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from .keys import (
    RUNTIME_KEYS,
    DispatchKey,
    alias_expansion,
    is_alias_key,
    is_per_backend_functionality,
    runtime_key,
    to_backend_component,
    to_functionality_key,
)
from .keyset import BACKEND_MASK, key_bits

__all__ = ["TableEntry", "backend_keys_for_autograd", "compute_table_entry"]

_D = DispatchKey
TableEntry = tuple[Any, str]  # (registration or None, label printed by dump_table)

# Backends whose Autograd<B> key has a "backend kernel" counterpart (getBackendKeySetFromAutograd).
# Not MTIA (nor HIP, VE): in 2.13, CIA + MTIA leaves AutogradMTIA at [math kernel] (checked live).
_AUTOGRAD_BACKENDS = {
    "CPU", "CUDA", "XLA", "Lazy", "Meta", "MPS", "HPU", "IPU", "XPU", "MAIA",
    "PrivateUse1", "PrivateUse2", "PrivateUse3",
}
# c10's autogradother_backends: the non-customizable functionalities plus every backend bit.
AUTOGRADOTHER_BACKENDS = (
    sum(key_bits(k) for k in (_D.FPGA, _D.Vulkan, _D.Metal, _D.CustomRNGKeyId, _D.MkldnnCPU,
                              _D.Sparse, _D.SparseCsr, _D.Quantized))
    | BACKEND_MASK
)


def backend_keys_for_autograd(key: DispatchKey) -> int:
    """Mirror ``getBackendKeySetFromAutograd`` as raw bits (0 for non-autograd keys)."""
    bits = _BACKEND_KEYS_FOR_AUTOGRAD.get(key)
    return _backend_keys_for_autograd(key) if bits is None else bits


def _backend_keys_for_autograd(key: DispatchKey) -> int:
    if key == _D.AutogradOther:
        return AUTOGRADOTHER_BACKENDS
    if key == _D.AutogradNestedTensor:
        return key_bits(_D.NestedTensor) | BACKEND_MASK
    if to_functionality_key(key) == _D.AutogradFunctionality:
        backend = to_backend_component(key)
        if backend.name[:-3] in _AUTOGRAD_BACKENDS:
            return key_bits(runtime_key(_D.Dense, backend))
    return 0


# Computed once per runtime key: a table rebuild asks it for every key it recomputes
_BACKEND_KEYS_FOR_AUTOGRAD = {k: _backend_keys_for_autograd(k) for k in RUNTIME_KEYS}


def _has_kernel_in(kernels: Mapping[DispatchKey, Sequence[Any]], bits: int) -> bool:
    """Mirror ``hasKernelForAnyDispatchKey``: a non-alias key whose bits all lie in ``bits``."""
    for k, registered in kernels.items():
        kb = key_bits(k)
        if registered and not is_alias_key(k) and kb and kb & bits == kb:
            return True
    return False


def _first(kernels: Mapping[DispatchKey, Sequence[Any]], key: DispatchKey) -> Any:
    registered = kernels.get(key)
    return registered[0] if registered else None


def _in_alias(key: DispatchKey, alias: DispatchKey) -> bool:
    return key != _D.Undefined and key in alias_expansion(alias)


def compute_table_entry(
    kernels: Mapping[DispatchKey, Sequence[Any]],
    fallbacks: Mapping[DispatchKey, Any],
    key: DispatchKey,
) -> TableEntry:
    """Return ``(registration, label)`` for one runtime key; first matching rule wins.

    Args:
        kernels: the operator's registrations per key (runtime or alias), newest first.
        fallbacks: the global backend fallback per runtime key.
        key: a runtime key (or ``Undefined``).

    Returns:
        The winning registration (``None`` when missing) and the label ``dump_table`` prints.

    Example:
        >>> compute_table_entry({DispatchKey.CompositeImplicitAutograd: ["cia"]}, {}, DispatchKey.CPU)
        ('cia', 'math kernel')
    """
    direct = _first(kernels, key)
    if direct is not None:  # 1. a kernel registered directly at this runtime key
        return direct, "kernel"
    cea_nf = _first(kernels, _D.CompositeExplicitAutogradNonFunctional)
    if cea_nf is not None and (key == _D.Undefined or _in_alias(key, _D.CompositeExplicitAutogradNonFunctional)):
        return cea_nf, "default backend kernel"  # 2.1 CompositeExplicitAutogradNonFunctional
    cea = _first(kernels, _D.CompositeExplicitAutograd)
    if cea is not None and (key == _D.Undefined or _in_alias(key, _D.CompositeExplicitAutograd)):
        return cea, "default backend kernel"  # 2.2 CompositeExplicitAutograd
    # has_backend_kernel: the backend under this autograd key (or CEA) already has a kernel
    has_backend_kernel = _has_kernel_in(kernels, backend_keys_for_autograd(key)) or cea is not None
    nested = _first(kernels, _D.CompositeImplicitAutogradNestedTensor)
    if nested is not None and _in_alias(key, _D.CompositeImplicitAutogradNestedTensor):
        # unconditional in c10 (no has_backend_kernel check), unlike the math kernel below
        return nested, "nested kernel"  # 2.3 (nested) CompositeImplicitAutogradNestedTensor
    math = _first(kernels, _D.CompositeImplicitAutograd)
    if math is not None and (key == _D.Undefined or _in_alias(key, _D.CompositeImplicitAutograd)):
        if key == _D.AutogradOther and _has_kernel_in(kernels, AUTOGRADOTHER_BACKENDS):
            return AMBIGUOUS_AUTOGRADOTHER, "ambiguous autogradother"  # 2.3 ambiguity
        if not has_backend_kernel:
            return math, "math kernel"  # 2.3 CompositeImplicitAutograd
    autograd = _first(kernels, _D.Autograd)
    if autograd is not None and _in_alias(key, _D.Autograd):
        return autograd, "autograd kernel"  # 2.4 Autograd alias
    batched = _first(kernels, _D.FuncTorchBatchedDecomposition)
    if batched is not None and key == _D.FuncTorchBatched:
        return batched, "batched kernel"  # 2.5 FuncTorchBatchedDecomposition
    fallback = fallbacks.get(key)
    if fallback is not None:
        return fallback, "backend fallback"  # 3. global backend fallback
    return None, "missing"  # 4. nothing: calling reports an error


class _AmbiguousAutogradOther:
    """Marker registration for the erroring AutogradOther kernel (c10's ambiguousAutogradOtherKernel)."""

    debug = "ambiguous_autogradother"
    fallthrough = False

    def __repr__(self) -> str:
        return "AMBIGUOUS_AUTOGRADOTHER"


AMBIGUOUS_AUTOGRADOTHER = _AmbiguousAutogradOther()


@functools.cache  # a pure function of one key, asked once per kernel registration
def affected_keys(registered_key: DispatchKey) -> frozenset[DispatchKey]:
    """Runtime keys whose entry can change when a kernel at ``registered_key`` comes or goes.

    Like ``OperatorEntry::updateDispatchTable``: the alias expansion, ``Undefined`` for the
    composite aliases, and the autograd key whose has_backend_kernel flag the kernel feeds
    (``Autograd<B>`` for a Dense key, AutogradOther for its backends, AutogradNestedTensor for
    NestedTensor keys). CompositeExplicitAutograd feeds every key's flag, so it affects all keys.
    """
    if registered_key == _D.CompositeExplicitAutograd:
        return ALL_RUNTIME_KEYS
    if is_per_backend_functionality(registered_key):
        # Dense, Sparse, ... themselves (PyTorch accepts kernels there): no table slot of their
        # own, but their bits lie inside backend key sets, so they feed has_backend_kernel
        kb = key_bits(registered_key)
        return frozenset(k for k in RUNTIME_KEYS if kb & backend_keys_for_autograd(k) == kb)
    keys = set(alias_expansion(registered_key))
    if registered_key in (_D.CompositeImplicitAutograd, _D.CompositeExplicitAutogradNonFunctional):
        keys.add(_D.Undefined)
    for k in list(keys):
        if is_alias_key(k):
            continue
        kb = key_bits(k)
        if kb and kb & AUTOGRADOTHER_BACKENDS == kb:
            keys.add(_D.AutogradOther)
        functionality = to_functionality_key(k)
        if functionality == _D.NestedTensor:
            keys.add(_D.AutogradNestedTensor)
        elif functionality == _D.Dense:
            keys.add(runtime_key(_D.AutogradFunctionality, to_backend_component(k)))
    return frozenset(keys)


ALL_RUNTIME_KEYS = frozenset(RUNTIME_KEYS)
