"""Differential tests: keys, key sets and TLS guards against torch 2.13's own dispatcher objects."""

from __future__ import annotations

import contextlib
import random
import threading
import warnings

import pytest

from dispatchcore import tls as tls_module
from dispatchcore.keys import (
    RUNTIME_KEYS,
    DispatchKey,
    alias_expansion,
    is_alias_key,
    parse_dispatch_key,
)
from dispatchcore.keyset import (
    AUTOGRAD_KEYSET,
    DEFAULT_EXCLUDED,
    DEFAULT_INCLUDED,
    FULL,
    DispatchKeySet,
    full_after_bits,
    key_bits,
    tensor_keyset,
)
from dispatchcore.tls import (
    AutoDispatchBelowADInplaceOrView,
    AutoDispatchBelowAutograd,
    AutoDispatchSkipFunctionalize,
    AutoNonVariableTypeMode,
    DisableTorchDispatch,
    ExcludeDispatchKeyGuard,
    ForceDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
    tls_set_dispatch_key_included,
)

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

C = torch._C
TK = C.DispatchKey
TS = C.DispatchKeySet
D = DispatchKey
KS = DispatchKeySet
ALL_VALUES = range(int(D.EndOfAliasKeys) + 1)  # 0..155
# DispatchKeySet(EndOfFunctionalityKeys) is bit 62 in c10 (outside FULL); dispatchcore maps it to
# the empty set. Nothing can register or dispatch on it, so it is left out of the bit comparisons.
COMPARABLE_VALUES = [v for v in ALL_VALUES if v != int(D.EndOfFunctionalityKeys)]


def tkey(key) -> object:
    """The torch DispatchKey with the same value (works for keys missing from torch's Python enum)."""
    return TK(int(key))


def tset(bits: int) -> object:
    return TS.from_raw_repr(int(bits))


def torch_raw() -> tuple[int, int]:
    return (C._dispatch_tls_local_include_set().raw_repr(), C._dispatch_tls_local_exclude_set().raw_repr())


def our_raw() -> tuple[int, int]:
    return int(tls_local_include_set()), int(tls_local_exclude_set())


@pytest.fixture(autouse=True)
def _torch_tls_restored():
    """Every test must leave torch's thread-local dispatch state as it found it, too."""
    before = torch_raw()
    yield
    assert torch_raw() == before, "a test leaked torch thread-local dispatch state"


# --- keys --------------------------------------------------------------------------------------


def test_every_torch_enum_member_exists_with_the_same_value():
    members = TK.__members__
    assert len(members) > 140
    mismatched = {n: (int(k), DispatchKey[n] if n in DispatchKey.__members__ else None)
                  for n, k in members.items()
                  if n not in DispatchKey.__members__ or int(DispatchKey[n]) != int(k)}
    assert mismatched == {}


def test_canonical_name_of_every_value_matches_torch():
    """Value order = name order. Only torch's names for the StartOf markers and 47 differ."""
    start_names = {48: "Undefined", 65: "QuantizedUndefined", 82: "SparseUndefined",
                   99: "SparseCsrUndefined", 116: "NestedTensorUndefined", 133: "AutogradUndefined"}
    for v in ALL_VALUES:
        theirs = C._dispatch_key_name(TK(v))
        ours = DispatchKey(v).name
        if v in start_names:
            assert (theirs, ours.startswith("StartOf")) == (start_names[v], True)
        elif v == int(D.EndOfFunctionalityKeys):
            assert (theirs, ours) == ("UnknownUnknown", "EndOfFunctionalityKeys")
        else:
            assert theirs == ours, v


def test_every_name_torch_parses_parses_to_the_same_value():
    parsed = 0
    for name, key in DispatchKey.__members__.items():
        theirs = C._parse_dispatch_key(name)
        if theirs is not None:
            parsed += 1
            assert int(theirs) == int(parse_dispatch_key(name)) == int(key), name
    assert parsed > 100


def test_parse_error_text_matches_torch():
    with pytest.raises(RuntimeError) as theirs:
        C._dispatch_key_parse("NotAKey")
    with pytest.raises(RuntimeError) as ours:
        parse_dispatch_key("NotAKey")
    assert str(ours.value) == str(theirs.value) == "could not parse dispatch key: NotAKey"


def test_is_alias_key_matches_torch():
    assert [v for v in ALL_VALUES if is_alias_key(v)] == [
        v for v in ALL_VALUES if C._dispatch_is_alias_key(TK(v))
    ]


@pytest.mark.parametrize("alias", [k for k in DispatchKey if is_alias_key(k)], ids=lambda k: k.name)
def test_alias_expansion_matches_is_included_in_alias_for_every_runtime_key(alias):
    expansion = alias_expansion(alias)
    theirs = {k for k in RUNTIME_KEYS if C._dispatch_is_included_in_alias(tkey(k), tkey(alias))}
    assert expansion == theirs


def test_key_bits_of_every_key_match_torch():
    assert {v: hex(key_bits(DispatchKey(v))) for v in COMPARABLE_VALUES} == {
        v: hex(TS(TK(v)).raw_repr()) for v in COMPARABLE_VALUES
    }


def test_full_and_full_after_match_torch_for_every_key():
    assert C._dispatch_keyset_full().raw_repr() == FULL == int(KS.full())
    assert {v: hex(full_after_bits(DispatchKey(v))) for v in ALL_VALUES} == {
        v: hex(C._dispatch_keyset_full_after(TK(v)).raw_repr()) for v in ALL_VALUES
    }


def test_full_set_iterates_the_136_non_undefined_runtime_keys_like_torch():
    names = str(C._dispatch_keyset_full())[len("DispatchKeySet("):-1].split(", ")
    assert names == [k.name for k in KS.full()]
    assert len(names) + 1 == len(RUNTIME_KEYS) == 137
    assert [k.name for k in RUNTIME_KEYS if k is not D.Undefined] == sorted(
        names, key=lambda n: int(DispatchKey[n])
    )


# --- key sets on random raw values -------------------------------------------------------------


def _random_raws(n: int, seed: int = 213) -> list[int]:
    rng = random.Random(seed)
    raws = [0, FULL, 0x9400010001, 0x10000, 0xFFFF, 0x3FFFFFFFFFFF0000, 0x1000010003]
    raws += [key_bits(DispatchKey(v)) for v in COMPARABLE_VALUES]
    while len(raws) < n:
        x = rng.getrandbits(62)
        for _ in range(rng.randrange(4)):  # thin out: sparse sets hit the edge cases
            x &= rng.getrandbits(62)
        raws.append(x)
    return raws


RAWS = _random_raws(400)


def test_str_matches_torch():
    diffs = [(hex(x), str(tset(x)), str(KS.from_raw(x))) for x in RAWS if str(tset(x)) != str(KS.from_raw(x))]
    assert diffs[:5] == []


def test_highest_priority_type_id_matches_torch():
    diffs = [
        (hex(x), int(tset(x).highestPriorityTypeId()), int(KS.from_raw(x).highest_priority_key()))
        for x in RAWS
        if int(tset(x).highestPriorityTypeId()) != int(KS.from_raw(x).highest_priority_key())
    ]
    assert diffs[:5] == []


@pytest.mark.parametrize("method", ["has", "remove", "add"])
def test_key_methods_match_torch_for_every_key(method):
    diffs = []
    for x in RAWS[:200]:
        theirs_set, ours_set = tset(x), KS.from_raw(x)
        for v in COMPARABLE_VALUES:
            theirs = getattr(theirs_set, method)(TK(v))
            ours = getattr(ours_set, method)(DispatchKey(v))
            if method != "has":
                theirs, ours = theirs.raw_repr(), int(ours)
            if theirs != ours:
                diffs.append((hex(x), DispatchKey(v).name, theirs, ours))
    assert diffs[:5] == []


def test_binary_operators_match_torch():
    diffs = []
    for x, y in zip(RAWS, RAWS[1:] + RAWS[:1]):
        for op in ("__or__", "__and__", "__sub__"):
            theirs = getattr(tset(x), op)(tset(y)).raw_repr()
            ours = int(getattr(KS.from_raw(x), op)(KS.from_raw(y)))
            if theirs != ours:
                diffs.append((hex(x), hex(y), op, hex(theirs), hex(ours)))
    assert diffs[:5] == []


def _tensors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized/CSR creation warns on 2.13
        yield "CPU", False, torch.randn(2)
        yield "CPU", False, torch.randn(2, requires_grad=True)
        yield "Meta", False, torch.empty(2, device="meta")
        yield "SparseCPU", False, torch.randn(2).to_sparse()
        yield "SparseCsrCPU", False, torch.randn(2, 2).to_sparse_csr()
        yield "QuantizedCPU", False, torch.quantize_per_tensor(torch.randn(2), 0.1, 0, torch.qint8)
        yield "MkldnnCPU", False, torch.randn(2, 2).to_mkldnn()
        with torch.inference_mode():
            yield "CPU", True, torch.randn(2)
            yield "Meta", True, torch.empty(2, device="meta")


def test_tensor_keyset_matches_torch_dispatch_keys():
    for backend, inference, tensor in _tensors():
        theirs = C._dispatch_keys(tensor)
        ours = tensor_keyset(backend, inference=inference)
        assert (hex(int(ours)), str(ours)) == (hex(theirs.raw_repr()), str(theirs)), (backend, inference)


# --- TLS ---------------------------------------------------------------------------------------


def test_default_tls_matches_torch():
    assert our_raw() == torch_raw() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    assert str(tls_local_include_set()) == str(C._dispatch_tls_local_include_set())
    assert str(tls_local_exclude_set()) == str(C._dispatch_tls_local_exclude_set())


GUARD_PAIRS = {
    "BelowAutograd": (AutoDispatchBelowAutograd, lambda: C._AutoDispatchBelowAutograd()),
    "BelowADInplaceOrView": (
        AutoDispatchBelowADInplaceOrView, lambda: C._AutoDispatchBelowADInplaceOrView()
    ),
    "DisableTorchDispatch": (DisableTorchDispatch, lambda: C._DisableTorchDispatch()),
    "SkipFunctionalize": (
        AutoDispatchSkipFunctionalize, lambda: C._ExcludeDispatchKeyGuard(TS(TK.Functionalize))
    ),
    "AutoNonVariableTypeMode": (AutoNonVariableTypeMode, lambda: C._AutoDispatchBelowAutograd()),
    "Exclude(AutogradCPU)": (
        lambda: ExcludeDispatchKeyGuard(KS(D.AutogradCPU)),
        lambda: C._ExcludeDispatchKeyGuard(TS(TK.AutogradCPU)),
    ),
    "Exclude(CPU tensor)": (
        lambda: ExcludeDispatchKeyGuard(KS.from_raw(0x9400010001)),
        lambda: C._ExcludeDispatchKeyGuard(tset(0x9400010001)),
    ),
    "Include(Python)": (
        lambda: IncludeDispatchKeyGuard(D.Python), lambda: C._IncludeDispatchKeyGuard(TK.Python)
    ),
    "Include(CPU)": (lambda: IncludeDispatchKeyGuard(D.CPU), lambda: C._IncludeDispatchKeyGuard(TK.CPU)),
    "Include(Meta)": (lambda: IncludeDispatchKeyGuard(D.Meta), lambda: C._IncludeDispatchKeyGuard(TK.Meta)),
    "Force": (
        lambda: ForceDispatchKeyGuard(KS([D.Python, D.CPU]), KS(D.AutogradCPU)),
        lambda: C._ForceDispatchKeyGuard(TS(TK.Python) | TS(TK.CPU), TS(TK.AutogradCPU)),
    ),
}


@pytest.fixture
def no_deprecation_warning(monkeypatch):
    monkeypatch.setattr(tls_module, "_warned_non_variable", True)


@pytest.mark.usefixtures("no_deprecation_warning")
@pytest.mark.parametrize(("ours", "theirs"), list(GUARD_PAIRS.values()), ids=list(GUARD_PAIRS))
def test_guard_raw_values_match_torch_inside_and_after(ours, theirs):
    with theirs():
        expected_inside = torch_raw()
        expected_str = str(C._dispatch_tls_local_exclude_set())
    with ours():
        assert our_raw() == expected_inside
        assert str(tls_local_exclude_set()) == expected_str
    assert our_raw() == torch_raw()


def test_inference_mode_raw_values_are_the_documented_formula():
    """dispatchcore has no InferenceMode guard; torch's numbers pin the formula (c10/core/InferenceMode.h)."""
    with torch.inference_mode():
        inside = torch_raw()
        with torch.inference_mode(False):
            inside_disabled = torch_raw()
    assert inside == (DEFAULT_INCLUDED & ~key_bits(D.ADInplaceOrView), DEFAULT_EXCLUDED | AUTOGRAD_KEYSET)
    assert inside_disabled == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    with ForceDispatchKeyGuard(KS.from_raw(inside[0]), KS.from_raw(inside[1])):
        assert our_raw() == inside


def test_grad_mode_leaves_dispatch_tls_untouched_in_torch():
    with torch.no_grad():
        assert torch_raw() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


TLS_KEYS = [D.Python, D.CPU, D.CUDA, D.AutogradCPU, D.AutogradCUDA, D.Meta, D.ADInplaceOrView,
            D.AutocastCPU, D.Functionalize, D.SparseCPU, D.AutogradOther, D.BackendSelect]


def _random_program(rng: random.Random, length: int) -> list[tuple]:
    ops = []
    for _ in range(length):
        kind = rng.choice(["include", "exclude", "force", "below_autograd", "below_adiov", "disable",
                           "set_inc", "set_exc", "set_inc", "set_exc", "exit"])
        key = rng.choice(TLS_KEYS)
        ops.append((kind, key, rng.random() < 0.5, rng.getrandbits(62) & rng.getrandbits(62),
                    rng.getrandbits(62) & rng.getrandbits(62)))
    return ops


def _guard(kind, key, a, b, *, torch_side: bool):
    if torch_side:
        return {
            "include": lambda: C._IncludeDispatchKeyGuard(tkey(key)),
            "exclude": lambda: C._ExcludeDispatchKeyGuard(TS(tkey(key))),
            "force": lambda: C._ForceDispatchKeyGuard(tset(a), tset(b)),
            "below_autograd": lambda: C._AutoDispatchBelowAutograd(),
            "below_adiov": lambda: C._AutoDispatchBelowADInplaceOrView(),
            "disable": lambda: C._DisableTorchDispatch(),
        }[kind]()
    return {
        "include": lambda: IncludeDispatchKeyGuard(key),
        "exclude": lambda: ExcludeDispatchKeyGuard(KS(key)),
        "force": lambda: ForceDispatchKeyGuard(KS.from_raw(a), KS.from_raw(b)),
        "below_autograd": AutoDispatchBelowAutograd,
        "below_adiov": AutoDispatchBelowADInplaceOrView,
        "disable": DisableTorchDispatch,
    }[kind]()


def _trace(program, *, torch_side: bool) -> list[tuple[int, int]]:
    """Run a program of guard enters/exits and TLS edits; record the raw TLS after every step."""
    read = torch_raw if torch_side else our_raw
    set_inc = C._dispatch_tls_set_dispatch_key_included if torch_side else tls_set_dispatch_key_included
    set_exc = C._dispatch_tls_set_dispatch_key_excluded if torch_side else tls_set_dispatch_key_excluded
    conv = tkey if torch_side else (lambda k: k)
    force = (lambda: C._ForceDispatchKeyGuard(tset(DEFAULT_INCLUDED), tset(DEFAULT_EXCLUDED))) if torch_side \
        else (lambda: ForceDispatchKeyGuard(KS.from_raw(DEFAULT_INCLUDED), KS.from_raw(DEFAULT_EXCLUDED)))
    trace = []
    with force(), contextlib.ExitStack() as outer:
        stacks = [outer]
        for kind, key, state, a, b in program:
            if kind == "set_inc":
                set_inc(conv(key), state)
            elif kind == "set_exc":
                set_exc(conv(key), state)
            elif kind == "exit":
                if len(stacks) > 1:
                    stacks.pop().close()
            else:
                stack = contextlib.ExitStack()
                stack.__enter__()
                stack.enter_context(_guard(kind, key, a, b, torch_side=torch_side))
                stacks.append(stack)
            trace.append(read())
        while len(stacks) > 1:
            stacks.pop().close()
            trace.append(read())
    trace.append(read())
    return trace


def test_random_guard_programs_leave_the_same_tls_trace_as_torch():
    rng = random.Random(2130)
    for i in range(150):
        program = _random_program(rng, rng.randrange(1, 12))
        theirs = _trace(program, torch_side=True)
        ours = _trace(program, torch_side=False)
        assert [(hex(x), hex(y)) for x, y in ours] == [(hex(x), hex(y)) for x, y in theirs], (i, program)


def test_new_thread_starts_from_defaults_in_both_even_when_the_parent_is_guarded():
    barrier = threading.Barrier(2, timeout=10)
    seen = []

    def worker():
        seen.append((torch_raw(), our_raw()))
        barrier.wait()

    with C._AutoDispatchBelowAutograd(), AutoDispatchBelowAutograd():
        with C._IncludeDispatchKeyGuard(TK.Python), IncludeDispatchKeyGuard(D.Python):
            thread = threading.Thread(target=worker)
            thread.start()
            barrier.wait()  # the worker has read its TLS while both guards are active here
            thread.join(10)
            assert our_raw() == torch_raw() == (0x414000000, 0x1FFB800000000)
    defaults = (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    assert seen == [(defaults, defaults)]
