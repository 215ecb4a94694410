"""Unit tests for dispatchcore.keyset: raw layout, set algebra, priority, printing, named sets."""

from __future__ import annotations

import copy
import operator
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchcore.keys import (
    NUM_BACKENDS,
    PER_BACKEND_FUNCTIONALITIES,
    BackendComponent,
    DispatchKey,
    to_backend_component,
    to_functionality_key,
)
from dispatchcore.keyset import (
    AFTER_ADINPLACEORVIEW,
    AFTER_AUTOGRAD,
    AFTER_FUNCTIONALIZE,
    AUTOCAST_KEYSET,
    AUTOGRAD_KEYSET,
    AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW,
    BACKEND_FUNCTIONALITY_KEYS,
    BACKEND_MASK,
    DEFAULT_EXCLUDED,
    DEFAULT_INCLUDED,
    FULL,
    PYTHON_KEYSET,
    DispatchKeySet,
    highest_priority_index,
    key_bits,
    tensor_keyset,
)

D = DispatchKey
B = BackendComponent
KS = DispatchKeySet
CPU_TENSOR = KS(["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"])
PB_BITS = sum(1 << (NUM_BACKENDS + int(f) - 1) for f in PER_BACKEND_FUNCTIONALITIES)
FUNCTIONALITY_MASK = FULL & ~BACKEND_MASK

# --- construction and raw values (c10/core/DispatchKeySet.h) ---------------------------------------------------


@pytest.mark.parametrize(
    ("key", "raw"),
    [
        ("CPU", 0x10001),
        ("Meta", 0x18000),
        ("SparseCPU", 0x800001),
        ("AutogradCPU", 0x1000000001),
        ("ADInplaceOrView", 0x400000000),
        ("PythonDispatcher", 0x2000000000000000),
        ("Dense", 0x10000),
        ("AutogradOther", 0x800000000),
        ("StartOfDenseBackends", 0x10000),
        ("Undefined", 0),
        ("Autograd", 0),
        ("CompositeImplicitAutograd", 0),
    ],
)
def test_single_key_raw_values_match_pytorch(key, raw):
    assert int(KS(key)) == raw
    assert KS(DispatchKey[key]).raw_repr() == raw
    assert key_bits(key) == raw


def test_cpu_tensor_raw_value():
    assert int(CPU_TENSOR) == 0x9400010001


def test_backend_component_occupies_bit_c_minus_1():
    assert int(KS(B.CPUBit)) == 0x1
    assert int(KS(B.MetaBit)) == 0x8000
    assert int(KS(B.InvalidBit)) == 0
    assert [key_bits(b) for b in list(B)[1:]] == [1 << i for i in range(NUM_BACKENDS)]


def test_empty_set_constructions():
    assert int(KS()) == 0
    assert int(KS([])) == 0
    assert KS().is_empty()
    assert not KS()
    assert KS(["CPU"])


def test_construct_from_iterable_of_mixed_key_kinds():
    assert KS([D.CPU, "AutogradCPU", B.CUDABit]) == KS.from_raw(0x1000010003)


def test_construct_from_keyset_copies_it():
    assert KS(CPU_TENSOR) == CPU_TENSOR


def test_construct_from_unknown_name_raises():
    with pytest.raises(RuntimeError, match="^could not parse dispatch key: NotAKey$"):
        KS("NotAKey")


@pytest.mark.parametrize("raw", [-1, FULL + 1, 1 << 63])
def test_from_raw_rejects_values_outside_62_bits(raw):
    with pytest.raises(ValueError, match="outside"):
        KS.from_raw(raw)


# --- algebra (c10/core/DispatchKeySet.h) -----------------------------------------------------------------------


def test_union_intersection_xor_are_plain_bit_ops():
    a, b = KS.from_raw(0x9400010001), KS.from_raw(0x1000010003)
    assert int(a | b) == 0x9400010001 | 0x1000010003
    assert int(a & b) == 0x9400010001 & 0x1000010003
    assert int(a ^ b) == 0x9400010001 ^ 0x1000010003


def test_operators_accept_keys_and_names():
    assert KS("CPU") | D.AutogradCPU == KS(["CPU", "AutogradCPU"])
    assert D.AutogradCPU | KS("CPU") == KS(["CPU", "AutogradCPU"])
    assert CPU_TENSOR & "ADInplaceOrView" == KS("ADInplaceOrView")


def test_operators_reject_plain_ints():
    with pytest.raises(TypeError, match="expected a DispatchKeySet"):
        KS("CPU") | 5


def test_minus_spares_backend_bits():
    assert int(CPU_TENSOR - KS("CPU")) == 0x9400000001
    assert int(KS("CPU") - KS("CPU")) == 0x1
    assert int(KS(["CPU", "CUDA"]) - KS(B.CPUBit)) == 0x10003


def test_minus_autograd_cpu_clears_every_autograd_backend():
    ks = KS(["CPU", "CUDA", "AutogradCPU", "AutogradCUDA"])
    assert ks - KS("AutogradCPU") == KS(["CPU", "CUDA"])


def test_remove_autograd_cuda_also_removes_autograd_cpu():
    """remove() clears only the functionality bit, which AutogradCPU shares."""
    assert CPU_TENSOR.remove(D.AutogradCUDA) == KS(["CPU", "ADInplaceOrView", "AutocastCPU"])
    assert repr(CPU_TENSOR.remove(D.AutogradCUDA)) == "DispatchKeySet(CPU, ADInplaceOrView, AutocastCPU)"


def test_remove_cpu_keeps_cpu_bit():
    assert int(CPU_TENSOR.remove(D.CPU)) == 0x9400000001
    assert int(CPU_TENSOR.remove("CPU")) == 0x9400000001


def test_remove_of_absent_or_bitless_key_is_identity():
    assert CPU_TENSOR.remove(D.Python) == CPU_TENSOR
    assert CPU_TENSOR.remove(D.Autograd) == CPU_TENSOR
    assert CPU_TENSOR.remove(D.Undefined) == CPU_TENSOR


def test_remove_backend_is_the_only_way_to_clear_a_backend_bit():
    assert int(CPU_TENSOR.remove_backend(B.CPUBit)) == 0x9400010000
    assert int(CPU_TENSOR.remove_backend(1)) == 0x9400010000
    assert CPU_TENSOR.remove_backend(B.CUDABit) == CPU_TENSOR


def test_add_is_union_with_the_key():
    assert int(KS().add(D.CPU).add("AutogradCPU")) == 0x1000010001
    assert int(KS("CPU").add(B.CUDABit)) == 0x10003


def test_has_with_shared_bits():
    """{CPU, AutogradCUDA, CUDA} has AutogradCPU: both its bits are present."""
    assert KS(["CPU", "AutogradCUDA", "CUDA"]).has(D.AutogradCPU)
    assert KS(["CPU", "AutogradCUDA"]).has(D.CUDA)  # Dense from CPU, CUDABit from AutogradCUDA
    assert not KS(["CUDA", "AutogradCUDA"]).has(D.AutogradCPU)


def test_has_functionality_key_on_cpu_tensor():
    assert CPU_TENSOR.has(D.Dense)
    assert CPU_TENSOR.has(D.AutogradFunctionality)
    assert CPU_TENSOR.has(B.CPUBit)
    assert not CPU_TENSOR.has(D.Python)
    assert not CPU_TENSOR.has(D.Meta)


@pytest.mark.parametrize(
    "key", [D.Undefined, D.Autograd, D.CompositeImplicitAutograd, "CompositeExplicitAutograd"]
)
def test_has_bitless_key_is_true_as_in_pytorch(key):
    """DispatchKeySet(alias or Undefined) is empty, and has_all(empty) is True (checked on torch 2.13)."""
    assert KS().has(key)
    assert CPU_TENSOR.has(key)


def test_contains_follows_has_and_rejects_non_keys():
    assert "AutogradCPU" in CPU_TENSOR
    assert D.AutocastCPU in CPU_TENSOR
    assert D.Python not in CPU_TENSOR
    assert 49 not in CPU_TENSOR
    assert None not in CPU_TENSOR


def test_has_any_and_has_all():
    assert CPU_TENSOR.has_any(KS(["Python", "CPU"]))
    assert CPU_TENSOR.has_any(KS(B.CPUBit))
    assert not CPU_TENSOR.has_any(KS(["Python", "Meta"]) - KS(B.MetaBit) - KS("Dense"))
    assert not CPU_TENSOR.has_any(KS())
    assert CPU_TENSOR.has_all(KS(["CPU", "AutogradCPU"]))
    assert not CPU_TENSOR.has_all(KS(["CPU", "Python"]))
    assert CPU_TENSOR.has_all(KS())


def test_has_backend():
    assert CPU_TENSOR.has_backend(B.CPUBit)
    assert not CPU_TENSOR.has_backend(B.MetaBit)
    assert KS("Meta").has_backend(16)


# --- priority (c10/core/DispatchKeySet.h) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["Python", "CPU", "AutogradCPU"], D.AutogradCPU),
        (["FuncTorchBatched", "CPU"], D.FuncTorchBatched),
        (["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"], D.AutocastCPU),
        (["CPU", "Meta"], D.Meta),
        (["CPU", "CUDA", "AutogradCPU"], D.AutogradCUDA),
        (["SparseCPU", "CPU"], D.SparseCPU),
        (["AutogradOther", "MkldnnCPU"], D.AutogradOther),
        (["PythonDispatcher", "CPU"], D.PythonDispatcher),
        ([], D.Undefined),
    ],
)
def test_highest_priority_key(keys, expected):
    assert KS(keys).highest_priority_key() is expected


@pytest.mark.parametrize(
    ("functionality", "start"),
    [
        (D.Dense, D.StartOfDenseBackends),
        (D.Quantized, D.StartOfQuantizedBackends),
        (D.Sparse, D.StartOfSparseBackends),
        (D.SparseCsr, D.StartOfSparseCsrBackends),
        (D.NestedTensor, D.StartOfNestedTensorBackends),
        (D.AutogradFunctionality, D.StartOfAutogradFunctionalityBackends),
    ],
)
def test_per_backend_functionality_without_backend_gives_start_marker(functionality, start):
    """c10 quirk: toRuntimePerBackendFunctionalityKey(F, InvalidBit) == StartOf<F>Backends."""
    assert KS(functionality).highest_priority_key() is start


def test_highest_functionality_and_backend():
    assert CPU_TENSOR.highest_functionality_key() is D.AutocastCPU
    assert CPU_TENSOR.highest_backend() is B.CPUBit
    assert KS(["CPU", "Meta"]).highest_backend() is B.MetaBit
    assert KS().highest_functionality_key() is D.Undefined
    assert KS().highest_backend() is B.InvalidBit
    assert KS(B.CUDABit).highest_functionality_key() is D.Undefined
    assert KS(B.CUDABit).highest_priority_key() is D.Undefined


# --- iteration and printing --------------------------------------------------------------------


def test_cpu_tensor_repr():
    assert repr(CPU_TENSOR) == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    assert str(CPU_TENSOR) == repr(CPU_TENSOR)


def test_empty_repr():
    assert repr(KS()) == "DispatchKeySet()"


def test_per_backend_bit_without_backend_prints_nothing():
    assert repr(KS("Dense")) == "DispatchKeySet()"
    assert list(KS("AutogradFunctionality")) == []
    assert repr(KS(["AutogradFunctionality", "AutogradOther"])) == "DispatchKeySet(AutogradOther)"


def test_backend_bits_alone_print_nothing():
    assert list(KS([B.CPUBit, B.MetaBit])) == []


def test_per_backend_functionality_expands_over_every_backend_bit():
    """Bits are shared: {CPU, CUDA, AutogradCPU} iterates AutogradCUDA too."""
    assert list(KS(["CPU", "CUDA", "AutogradCPU"])) == [D.CPU, D.CUDA, D.AutogradCPU, D.AutogradCUDA]


def test_iteration_is_ascending_functionality_then_backend():
    ks = KS(["Meta", "CPU", "PythonDispatcher", "Python", "SparseCPU", "AutogradMeta"])
    assert list(ks) == [
        D.CPU, D.Meta, D.SparseCPU, D.SparseMeta, D.Python, D.AutogradCPU, D.AutogradMeta,
        D.PythonDispatcher,
    ]


def test_full_iterates_every_runtime_key_but_undefined():
    keys = list(KS.full())
    assert len(keys) == 136
    assert keys[:3] == [D.CPU, D.CUDA, D.HIP]
    assert keys[-1] is D.PythonDispatcher
    assert D.Undefined not in keys and D.StartOfDenseBackends not in keys


# --- FULL, FULL_AFTER and named sets (c10/core/DispatchKeySet.h) -----------------------------------------------


def test_full_value():
    assert FULL == 0x3FFFFFFFFFFFFFFF
    assert int(KS.full()) == FULL


@pytest.mark.parametrize(
    ("key", "raw"),
    [
        (D.AutogradOther, 0x20000007FFFFFFFF),
        (D.ADInplaceOrView, 0x20000003FFFFFFFF),
        (D.AutogradCPU, 0x2000000FFFFFFFFF),
        (D.CPU, 0x200000000000FFFF),
        (D.Undefined, 0x2000000000007FFF),
        (D.Functionalize, 0x200000003FFFFFFF),
        ("AutogradOther", 0x20000007FFFFFFFF),
    ],
)
def test_full_after_values(key, raw):
    assert int(KS.full_after(key)) == raw


def test_full_after_autograd_cpu_includes_autograd_other():
    assert KS.full_after(D.AutogradCPU).has(D.AutogradOther)
    assert not KS.full_after(D.AutogradOther).has(D.AutogradOther)


def test_named_sets():
    assert AUTOGRAD_KEYSET == 0x3800000000
    autograd = KS(["AutogradFunctionality", "AutogradOther", "AutogradNestedTensor"])
    assert KS.from_raw(AUTOGRAD_KEYSET) == autograd
    assert AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW == 0x3C00000000
    assert AFTER_AUTOGRAD == 0x20000007FFFFFFFF
    assert AFTER_ADINPLACEORVIEW == 0x20000003FFFFFFFF
    assert AFTER_FUNCTIONALIZE == 0x200000003FFFFFFF
    assert AUTOCAST_KEYSET == DEFAULT_EXCLUDED == 0x1FF8000000000
    assert len(list(KS.from_raw(AUTOCAST_KEYSET))) == 10
    assert PYTHON_KEYSET == 0x100000010000000
    assert DEFAULT_INCLUDED == 0x404000000
    assert BACKEND_FUNCTIONALITY_KEYS == 0x191FFFF
    assert BACKEND_MASK == 0xFFFF


# --- a tensor's key set (c10/core/TensorImpl.cpp) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "inference", "printed"),
    [
        ("CPU", False, "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"),
        ("CPU", True, "DispatchKeySet(CPU, AutocastCPU)"),
        ("Meta", False, "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"),
        ("Meta", True, "DispatchKeySet(Meta)"),
        ("CUDA", False, "DispatchKeySet(CUDA, ADInplaceOrView, AutogradCUDA, AutocastCUDA)"),
        ("HIP", False, "DispatchKeySet(HIP, ADInplaceOrView, AutogradOther)"),
        ("SparseCPU", False, "DispatchKeySet(SparseCPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"),
        ("QuantizedCPU", False, "DispatchKeySet(QuantizedCPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"),
        ("MkldnnCPU", False, "DispatchKeySet(MkldnnCPU, ADInplaceOrView, AutogradOther)"),
    ],
)
def test_tensor_keyset(backend, inference, printed):
    assert repr(tensor_keyset(backend, inference=inference)) == printed


def test_tensor_keyset_raw_values():
    assert int(tensor_keyset("CPU")) == 0x9400010001
    assert int(tensor_keyset(D.CPU, inference=True)) == 0x8000010001
    assert int(tensor_keyset("Meta")) == 0x1400018000


# --- protocols ---------------------------------------------------------------------------------


def test_equality_and_hash():
    a = KS(["CPU", "AutogradCPU"])
    b = KS.from_raw(0x1000010001)
    assert a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    assert a != KS("CPU")
    assert a != 0x1000010001
    assert (a == "CPU") is False


def test_int_index_and_raw_repr():
    assert int(CPU_TENSOR) == operator.index(CPU_TENSOR) == CPU_TENSOR.raw_repr() == 0x9400010001
    assert hex(CPU_TENSOR) == "0x9400010001"


def test_pickle_and_copy_round_trip():
    for ks in (KS(), CPU_TENSOR, KS.full(), KS("Dense")):
        assert pickle.loads(pickle.dumps(ks)) == ks
        assert copy.deepcopy(ks) == ks


def test_keyset_is_immutable():
    with pytest.raises(AttributeError):
        CPU_TENSOR.foo = 1  # type: ignore[attr-defined]


# --- properties over random raw values ---------------------------------------------------------

raw_sets = st.integers(min_value=0, max_value=FULL).map(KS.from_raw)
# sparser sets hit empty blocks and lone PB bits more often
sparse_raw = st.builds(lambda a, b: KS.from_raw(a & b), st.integers(0, FULL), st.integers(0, FULL))
keysets = st.one_of(raw_sets, sparse_raw, st.just(KS()), st.just(KS.full()))
keys = st.sampled_from(list(DispatchKey))
FAST = settings(max_examples=150, deadline=None)


@FAST
@given(keysets, keysets)
def test_minus_never_clears_backend_bits_of_lhs(a, b):
    assert int(a - b) & BACKEND_MASK == int(a) & BACKEND_MASK
    assert int(a - b) & int(b) & FUNCTIONALITY_MASK == 0
    assert int(a - b) | (int(a) & int(b) & FUNCTIONALITY_MASK) == int(a)


@FAST
@given(keysets, keysets)
def test_union_contains_both_and_ops_commute(a, b):
    assert (a | b).has_all(a) and (a | b).has_all(b)
    assert a & b == b & a
    assert a | b == b | a
    assert a ^ b == b ^ a
    assert int(a ^ b) == int(a) ^ int(b)
    assert a.has_any(b) == bool(int(a) & int(b))
    assert a.has_all(a & b)


@FAST
@given(keysets)
def test_from_raw_round_trips(x):
    assert KS.from_raw(int(x)) == x
    assert pickle.loads(pickle.dumps(x)) == x


@FAST
@given(keysets, keys)
def test_key_operations_agree_with_set_operations(a, k):
    assert a.remove(k) == a - KS(k)
    assert a.add(k) == a | KS(k)
    assert a.add(k).has(k)
    assert a.has(k) == a.has_all(KS(k))
    assert int(a.remove(k)) & BACKEND_MASK == int(a) & BACKEND_MASK


@FAST
@given(keysets)
def test_iteration_yields_only_contained_runtime_keys_in_order(a):
    keys_ = list(a)
    assert all(a.has(k) for k in keys_)
    order = [(int(to_functionality_key(k)), int(to_backend_component(k))) for k in keys_]
    assert order == sorted(order) and len(set(order)) == len(order)
    functionality = int(a) >> NUM_BACKENDS
    pb_count = bin(functionality & (PB_BITS >> NUM_BACKENDS)).count("1")
    non_pb_count = bin(functionality & ~(PB_BITS >> NUM_BACKENDS)).count("1")
    assert len(keys_) == non_pb_count + pb_count * bin(int(a) & BACKEND_MASK).count("1")
    assert repr(a) == "DispatchKeySet(" + ", ".join(k.name for k in keys_) + ")"


@st.composite
def rebuildable(draw):
    """Sets where PB bits and backend bits come together: iteration loses nothing."""
    functionality = draw(st.integers(0, FUNCTIONALITY_MASK)) & FUNCTIONALITY_MASK
    backends = draw(st.integers(1, BACKEND_MASK))
    if functionality & PB_BITS:
        return KS.from_raw(functionality | backends)
    return KS.from_raw(functionality)


@FAST
@given(rebuildable())
def test_iterating_then_rebuilding_reproduces_the_set(a):
    assert KS(list(a)) == a


@FAST
@given(keysets)
def test_highest_priority_key_is_the_last_key_iterated_when_backend_bits_exist(a):
    keys_ = list(a)
    if int(a) & BACKEND_MASK and keys_:
        brute = max(keys_, key=lambda k: (int(to_functionality_key(k)), int(to_backend_component(k))))
        assert a.highest_priority_key() is brute is keys_[-1]
    assert int(a.highest_priority_key()) == highest_priority_index(int(a))


@FAST
@given(keysets)
def test_highest_priority_key_formula(a):
    f = a.highest_functionality_key()
    expected = f
    if f in PER_BACKEND_FUNCTIONALITIES:
        start = int(DispatchKey[f"StartOf{f.name}Backends"])
        expected = DispatchKey(start + int(a.highest_backend()))
    assert a.highest_priority_key() is expected


def test_full_after_keeps_everything_strictly_below_plus_python_dispatcher():
    for k in DispatchKey:
        if int(k) > int(D.EndOfRuntimeBackendKeys):
            continue
        after = KS.full_after(k)
        f = int(to_functionality_key(k))
        assert after.has(D.PythonDispatcher)
        assert int(after) == ((1 << (NUM_BACKENDS + f - 1)) - 1) | key_bits(D.PythonDispatcher)
        assert KS.full().has_all(after)
