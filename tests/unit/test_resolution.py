"""resolution.py: the reference rules of computeDispatchTableEntry, on plain dicts (OperatorEntry.cpp)."""

from __future__ import annotations

import itertools

import pytest

from dispatchcore.keys import RUNTIME_KEYS, DispatchKey, alias_expansion
from dispatchcore.keyset import BACKEND_MASK, key_bits
from dispatchcore.resolution import (
    ALL_RUNTIME_KEYS,
    AMBIGUOUS_AUTOGRADOTHER,
    AUTOGRADOTHER_BACKENDS,
    affected_keys,
    backend_keys_for_autograd,
    compute_table_entry,
)

D = DispatchKey
CIA = D.CompositeImplicitAutograd
CEA = D.CompositeExplicitAutograd
CEANF = D.CompositeExplicitAutogradNonFunctional
CIANT = D.CompositeImplicitAutogradNestedTensor
FALLBACKS = {
    D.AutogradCPU: "fb:AutogradCPU",
    D.AutogradOther: "fb:AutogradOther",
    D.AutogradCUDA: "fb:AutogradCUDA",
    D.AutogradMTIA: "fb:AutogradMTIA",
    D.AutogradMAIA: "fb:AutogradMAIA",
    D.Meta: "fb:Meta",
    D.FuncTorchBatched: "fb:FuncTorchBatched",
}


def kernels(*keys: D) -> dict[D, list[str]]:
    """One registration per key, named after the key."""
    return {k: [k.name] for k in keys}


def entry(regs: dict, key: D, fallbacks: dict | None = None):
    return compute_table_entry(regs, FALLBACKS if fallbacks is None else fallbacks, key)


# --- rule by rule -------------------------------------------------------------------------------
def test_direct_kernel_wins_over_every_alias():
    regs = kernels(D.CPU, CIA, CEA, CEANF, D.Autograd)
    assert entry(regs, D.CPU) == ("CPU", "kernel")


def test_direct_kernel_uses_the_newest_registration():
    assert entry({D.CPU: ["new", "old"]}, D.CPU) == ("new", "kernel")


def test_an_empty_registration_list_counts_as_absent():
    assert entry({D.CPU: []}, D.CPU) == (None, "missing")
    assert entry({D.CPU: [], CIA: ["cia"]}, D.AutogradCPU) == ("cia", "math kernel")


def test_cia_alone_serves_backends_autograd_nested_and_undefined():
    regs = kernels(CIA)
    for key in (D.Undefined, D.CPU, D.SparseCPU, D.NestedTensorCPU, D.MkldnnCPU, D.AutogradCPU,
                D.AutogradCUDA, D.AutogradOther, D.AutogradNestedTensor, D.QuantizedCPU):
        assert entry(regs, key) == ("CompositeImplicitAutograd", "math kernel"), key
    assert entry(regs, D.FuncTorchBatched) == ("fb:FuncTorchBatched", "backend fallback")
    assert entry(regs, D.Python, {}) == (None, "missing")


def test_cia_plus_cpu_sends_autogradcpu_to_the_backend_fallback():
    """computeDispatchTableEntry's consequence: AutogradCPU has a backend kernel, so CIA does not serve it."""
    regs = kernels(CIA, D.CPU)
    assert entry(regs, D.AutogradCPU) == ("fb:AutogradCPU", "backend fallback")
    assert entry(regs, D.AutogradCUDA) == ("CompositeImplicitAutograd", "math kernel")
    assert entry(regs, D.AutogradOther) == ("CompositeImplicitAutograd", "math kernel")
    assert entry(regs, D.AutogradCPU, {}) == (None, "missing")


@pytest.mark.parametrize("backend,autograd_has_backend", [
    ("CPU", True), ("CUDA", True), ("XLA", True), ("Lazy", True), ("Meta", True), ("MPS", True),
    ("HPU", True), ("IPU", True), ("XPU", True), ("MAIA", True), ("PrivateUse1", True),
    ("PrivateUse2", True), ("PrivateUse3", True),
    # getBackendKeySetFromAutograd has no case for these in 2.13 (MTIA checked live)
    ("MTIA", False), ("HIP", False), ("VE", False),
])
def test_cia_plus_backend_kernel_per_backend(backend, autograd_has_backend):
    autograd = D[f"Autograd{backend}"]
    regs = kernels(CIA, D[backend])
    reg, label = entry(regs, autograd, {})
    if autograd_has_backend:
        assert (reg, label) == (None, "missing")
    else:
        assert (reg, label) == ("CompositeImplicitAutograd", "math kernel")


def test_cea_serves_backends_and_undefined_but_not_nested_or_autograd():
    regs = kernels(CEA)
    for key in (D.Undefined, D.CPU, D.SparseCPU, D.QuantizedCPU, D.SparseCsrCUDA, D.MkldnnCPU,
                D.FPGA, D.Vulkan, D.Metal, D.CustomRNGKeyId, D.XLA, D.Meta):
        assert entry(regs, key) == ("CompositeExplicitAutograd", "default backend kernel"), key
    assert entry(regs, D.NestedTensorCPU) == (None, "missing")
    assert entry(regs, D.AutogradCPU) == ("fb:AutogradCPU", "backend fallback")
    assert entry(regs, D.AutogradOther) == ("fb:AutogradOther", "backend fallback")


def test_cea_disables_cia_everywhere():
    """test_dispatch.py's case "CEA (± CIA)": CEA counts as a backend kernel for every key."""
    regs = kernels(CEA, CIA)
    assert entry(regs, D.CPU) == ("CompositeExplicitAutograd", "default backend kernel")
    assert entry(regs, D.Undefined) == ("CompositeExplicitAutograd", "default backend kernel")
    assert entry(regs, D.NestedTensorCPU) == (None, "missing")
    assert entry(regs, D.AutogradCUDA) == ("fb:AutogradCUDA", "backend fallback")
    assert entry(regs, D.AutogradNestedTensor, {}) == (None, "missing")


def test_cea_nonfunctional_skips_sparse_xla_and_lazy():
    regs = kernels(CEANF)
    for key in (D.Undefined, D.CPU, D.QuantizedCPU, D.SparseCsrCPU, D.MkldnnCPU, D.CUDA):
        assert entry(regs, key) == ("CompositeExplicitAutogradNonFunctional", "default backend kernel")
    for key in (D.SparseCPU, D.SparseMeta, D.XLA, D.Lazy, D.QuantizedXLA, D.SparseCsrLazy,
                D.NestedTensorCPU):
        assert entry(regs, key, {}) == (None, "missing"), key
    # CEANF is not CEA: it does not count as a backend kernel for autograd keys
    assert entry(kernels(CEANF, CIA), D.AutogradCPU) == ("CompositeImplicitAutograd", "math kernel")


def test_cea_nonfunctional_beats_cea():
    regs = kernels(CEANF, CEA)
    assert entry(regs, D.CPU) == ("CompositeExplicitAutogradNonFunctional", "default backend kernel")
    assert entry(regs, D.Undefined) == ("CompositeExplicitAutogradNonFunctional", "default backend kernel")
    assert entry(regs, D.SparseCPU) == ("CompositeExplicitAutograd", "default backend kernel")


def test_cia_nested_serves_nested_keys_only():
    regs = kernels(CIANT)
    assert entry(regs, D.NestedTensorCPU) == ("CompositeImplicitAutogradNestedTensor", "nested kernel")
    assert entry(regs, D.AutogradNestedTensor) == ("CompositeImplicitAutogradNestedTensor", "nested kernel")
    for key in (D.Undefined, D.CPU, D.SparseCPU):
        assert entry(regs, key, {}) == (None, "missing"), key
    assert entry(regs, D.AutogradCPU) == ("fb:AutogradCPU", "backend fallback")


def test_cia_nested_ignores_backend_kernels():
    """c10 checks has_backend_kernel for the math kernel only, not for the nested one (live)."""
    regs = kernels(CIANT, D.NestedTensorCPU, CEA)
    assert entry(regs, D.NestedTensorCPU) == ("NestedTensorCPU", "kernel")
    assert entry(regs, D.NestedTensorCUDA) == ("CompositeImplicitAutogradNestedTensor", "nested kernel")
    assert entry(regs, D.AutogradNestedTensor) == ("CompositeImplicitAutogradNestedTensor", "nested kernel")


def test_cia_nested_beats_cia_on_nested_keys():
    regs = kernels(CIANT, CIA)
    assert entry(regs, D.NestedTensorCPU) == ("CompositeImplicitAutogradNestedTensor", "nested kernel")
    assert entry(regs, D.Undefined) == ("CompositeImplicitAutograd", "math kernel")
    assert entry(regs, D.CPU) == ("CompositeImplicitAutograd", "math kernel")


@pytest.mark.parametrize("backend_key", [D.SparseCPU, D.QuantizedCPU, D.MkldnnCPU, D.SparseCsrCUDA,
                                         D.FPGA, D.Vulkan, D.Metal, D.CustomRNGKeyId])
def test_cia_plus_autogradother_backend_is_ambiguous(backend_key):
    regs = kernels(CIA, backend_key)
    assert entry(regs, D.AutogradOther) == (AMBIGUOUS_AUTOGRADOTHER, "ambiguous autogradother")
    assert entry(regs, D.AutogradCUDA) == ("CompositeImplicitAutograd", "math kernel")


def test_cia_plus_dense_or_nested_backend_is_not_ambiguous():
    for backend_key in (D.CPU, D.CUDA, D.Meta, D.NestedTensorCPU):
        regs = kernels(CIA, backend_key)
        assert entry(regs, D.AutogradOther) == ("CompositeImplicitAutograd", "math kernel"), backend_key


def test_ambiguity_marker_prints_like_c10():
    assert AMBIGUOUS_AUTOGRADOTHER.debug == "ambiguous_autogradother"
    assert AMBIGUOUS_AUTOGRADOTHER.fallthrough is False
    assert repr(AMBIGUOUS_AUTOGRADOTHER) == "AMBIGUOUS_AUTOGRADOTHER"


def test_autograd_alias_serves_every_autograd_key_and_nothing_else():
    regs = kernels(D.Autograd)
    for key in alias_expansion(D.Autograd):
        assert entry(regs, key) == ("Autograd", "autograd kernel"), key
    assert entry(regs, D.CPU, {}) == (None, "missing")
    assert entry(regs, D.Undefined, {}) == (None, "missing")


def test_autograd_runtime_kernel_beats_autograd_alias():
    regs = kernels(D.AutogradCPU, D.Autograd)
    assert entry(regs, D.AutogradCPU) == ("AutogradCPU", "kernel")
    assert entry(regs, D.AutogradCUDA) == ("Autograd", "autograd kernel")


def test_cia_beats_autograd_alias_until_a_backend_kernel_exists():
    regs = kernels(CIA, D.Autograd)
    assert entry(regs, D.AutogradCPU) == ("CompositeImplicitAutograd", "math kernel")
    regs = kernels(CIA, D.Autograd, D.CPU)
    assert entry(regs, D.AutogradCPU) == ("Autograd", "autograd kernel")
    assert entry(regs, D.AutogradCUDA) == ("CompositeImplicitAutograd", "math kernel")


def test_batched_decomposition_serves_functorch_batched_only():
    regs = kernels(D.FuncTorchBatchedDecomposition)
    assert entry(regs, D.FuncTorchBatched) == ("FuncTorchBatchedDecomposition", "batched kernel")
    assert entry(regs, D.BatchedNestedTensor, {}) == (None, "missing")
    assert entry(kernels(D.FuncTorchBatched, D.FuncTorchBatchedDecomposition), D.FuncTorchBatched) == (
        "FuncTorchBatched", "kernel")


def test_backend_fallback_is_last_and_missing_is_reported():
    assert entry({}, D.Meta) == ("fb:Meta", "backend fallback")
    assert entry({}, D.CPU) == (None, "missing")
    assert entry(kernels(D.Meta), D.Meta) == ("Meta", "kernel")


def test_undefined_is_served_by_composites_only():
    assert entry(kernels(D.CPU, D.Autograd, CIANT), D.Undefined, {}) == (None, "missing")
    assert entry(kernels(CIA), D.Undefined) == ("CompositeImplicitAutograd", "math kernel")
    assert entry(kernels(CIA, D.CPU), D.Undefined) == ("CompositeImplicitAutograd", "math kernel")
    assert entry({}, D.Undefined, {D.Undefined: "fb"}) == ("fb", "backend fallback")


# --- helpers ------------------------------------------------------------------------------------
def test_backend_keys_for_autograd():
    assert backend_keys_for_autograd(D.AutogradCPU) == key_bits(D.CPU)
    assert backend_keys_for_autograd(D.AutogradMeta) == key_bits(D.Meta)
    assert backend_keys_for_autograd(D.AutogradPrivateUse3) == key_bits(D.PrivateUse3)
    assert backend_keys_for_autograd(D.AutogradOther) == AUTOGRADOTHER_BACKENDS
    assert backend_keys_for_autograd(D.AutogradNestedTensor) == key_bits(D.NestedTensor) | BACKEND_MASK
    for key in (D.AutogradMTIA, D.AutogradHIP, D.AutogradVE, D.CPU, D.Undefined, D.Python):
        assert backend_keys_for_autograd(key) == 0, key


def test_autogradother_backends_contents():
    for key in (D.FPGA, D.Vulkan, D.Metal, D.CustomRNGKeyId, D.MkldnnCPU, D.SparseCPU,
                D.SparseCsrMeta, D.QuantizedCUDA):
        assert key_bits(key) & AUTOGRADOTHER_BACKENDS == key_bits(key), key
    for key in (D.CPU, D.NestedTensorCPU, D.AutogradCPU, D.BackendSelect):
        assert key_bits(key) & AUTOGRADOTHER_BACKENDS != key_bits(key), key


def test_affected_keys_of_per_backend_functionality_keys_are_the_autograd_keys_they_feed():
    """A Dense/Sparse/... kernel fills no slot; it only counts for has_backend_kernel."""
    assert D.AutogradCPU in affected_keys(D.Dense) and D.AutogradCUDA in affected_keys(D.Dense)
    assert all(k.name.startswith("Autograd") for k in affected_keys(D.Dense))
    assert affected_keys(D.Sparse) == affected_keys(D.Quantized) == {D.AutogradOther}
    assert affected_keys(D.NestedTensor) == {D.AutogradNestedTensor}
    assert affected_keys(D.AutogradFunctionality) == frozenset()


def test_affected_keys_examples():
    assert affected_keys(D.CPU) == {D.CPU, D.AutogradCPU}
    assert affected_keys(D.Meta) == {D.Meta, D.AutogradMeta}
    assert affected_keys(D.SparseCPU) == {D.SparseCPU, D.AutogradOther}
    assert affected_keys(D.MkldnnCPU) == {D.MkldnnCPU, D.AutogradOther}
    assert affected_keys(D.NestedTensorCPU) == {D.NestedTensorCPU, D.AutogradNestedTensor}
    assert affected_keys(D.AutogradCPU) == {D.AutogradCPU}
    assert affected_keys(D.Python) == {D.Python}
    assert affected_keys(CEA) == ALL_RUNTIME_KEYS
    assert D.Undefined in affected_keys(CIA)
    assert D.Undefined in affected_keys(CEANF)
    assert D.Undefined not in affected_keys(CIANT)
    assert affected_keys(D.Autograd) == alias_expansion(D.Autograd)
    assert affected_keys(D.FuncTorchBatchedDecomposition) == {D.FuncTorchBatched}


_REG_KEYS = [D.CPU, D.Meta, D.SparseCPU, D.NestedTensorCPU, D.QuantizedCPU, D.MkldnnCPU,
             D.AutogradCPU, D.Autograd, CIA, CEA, CEANF, CIANT, D.FuncTorchBatchedDecomposition,
             D.AutogradOther, D.AutogradNestedTensor, D.MTIA, D.XLA]


def test_affected_keys_is_sound():
    """Adding a registration changes no entry outside affected_keys (the incremental table is exact)."""
    bases = [()] + [(k,) for k in _REG_KEYS] + list(itertools.combinations(_REG_KEYS[::2], 2))
    for base in bases:
        before_regs = kernels(*base)
        before = {k: entry(before_regs, k) for k in RUNTIME_KEYS}
        for added in _REG_KEYS:
            if added in base:
                continue
            after_regs = {**before_regs, added: ["new"]}
            changed = {k for k in RUNTIME_KEYS if entry(after_regs, k) != before[k]}
            assert changed <= affected_keys(added), (base, added, changed - affected_keys(added))
