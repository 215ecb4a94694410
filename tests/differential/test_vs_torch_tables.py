"""dispatchcore's tables, dumps, call routing and error texts against live torch 2.13.

The same kernels are registered on a torch operator (``torch.library.Library`` in a fresh
namespace, destroyed afterwards) and on a dispatchcore operator; ``registered at`` locations are
ignored (dispatchcore records the registering call, torch the ``Library(...)`` line).
"""

from __future__ import annotations

import itertools
import random
import re
import warnings

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

from torch.library import Library as TorchLibrary  # noqa: E402

CI_PREFIX = "/__w/pytorch/pytorch/"
_counter = itertools.count()

# The override warning is once per process in both: this file checks it first (see below).


@pytest.fixture(autouse=True)
def _no_backend_discovery(monkeypatch):
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)


def fresh_ns() -> str:
    return f"dcdiff{next(_counter)}_{id(object()) % 100000}"


# --- normalization ------------------------------------------------------------------------------
TABLE_LINE = re.compile(r"^(\w+): (fallthrough )?(.*?) \[([a-z ]+)\]$")
STATE_LINE = re.compile(r"^(\w+)(\[alias\])?( \(inactive\))?: (.*?) :: (.*?) \[ (.*) \]$")


def table_rows(text: str) -> list[tuple[str, bool, str]]:
    """(key, fallthrough, label) per dump_table line."""
    rows = []
    for line in text.strip().splitlines():
        m = TABLE_LINE.match(line)
        assert m, line
        rows.append((m.group(1), bool(m.group(2)), m.group(4)))
    return rows


def state_rows(text: str) -> list:
    """Header fields without locations, then (key, alias, inactive, kind) per registration."""
    rows = []
    for line in text.strip().splitlines():
        m = STATE_LINE.match(line)
        if m:
            rows.append((m.group(1), bool(m.group(2)), bool(m.group(3)), m.group(5), m.group(6)))
        elif line.startswith("debug: "):
            rows.append("debug: registered at LOC")
        else:
            rows.append(line)
    return rows


def strip_locations(text: str) -> str:
    text = text.replace(CI_PREFIX, "")
    return re.sub(r"(registered|block) at \S+:\d+", r"\1 at LOC", text)


def error_signature(error: BaseException):
    """Exception class family, head text, and for dispatch errors the table that follows."""
    kind = ("NotImplementedError" if isinstance(error, NotImplementedError)
            else "RuntimeError" if isinstance(error, RuntimeError) else type(error).__name__)
    text = str(error).replace(CI_PREFIX, "")
    if text.startswith(("Could not run", "There were no tensor arguments")):
        head, rest = text.split("\n\n", 1)
        table = rest.split("\ndispatchcore: why no kernel was found\n")[0]
        return kind, head, table_rows(table)
    if "fallthrough_kernel was executed" in text:
        return kind, text.split("bug tracker.")[0]
    return kind, text.split("\n")[0]


# --- paired registration --------------------------------------------------------------------------
class Pair:
    """One operator defined in torch and in dispatchcore, in the same fresh namespace."""

    def __init__(self, schema: str = "f(Tensor x) -> Tensor") -> None:
        self.ns = fresh_ns()
        self.name = schema.split("(")[0]
        self.torch_lib = TorchLibrary(self.ns, "DEF")
        self.torch_lib.define(schema)
        self.dc_lib = dc.Library(self.ns, "DEF")
        self.dc_lib.define(schema)
        self.torch_log: list[str] = []
        self.dc_log: list[str] = []

    @property
    def qualname(self) -> str:
        return f"{self.ns}::{self.name}"

    def register(self, regs) -> None:
        # torch.library refuses a Meta kernel after a CompositeImplicitAutograd one: backends first
        for key, fallthrough in sorted(regs, key=lambda r: r[0].startswith("Composite")):
            if fallthrough:
                self.torch_lib.impl(self.name, torch.library.fallthrough_kernel, key)
                self.dc_lib.impl(self.name, dc.fallthrough_kernel, key)
            else:
                self.torch_lib.impl(self.name, self._logger(self.torch_log, key), key)
                self.dc_lib.impl(self.name, self._logger(self.dc_log, key), key)

    @staticmethod
    def _logger(log, key):
        def kernel(x):
            log.append(key)
            return x
        return kernel

    def refresh_torch(self) -> None:
        """Make torch's cached table canonical (OperatorEntry.cpp quirk): a CIA registration refreshes every
        key whose entry can depend on others; its removal recomputes them from the real state."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refresh = TorchLibrary(self.ns, "IMPL")
            refresh.impl(self.name, lambda x: x, "CompositeImplicitAutograd")
            refresh._destroy()

    def tables(self):
        return (table_rows(torch._C._dispatch_dump_table(self.qualname)),
                table_rows(dc.dump_table(self.qualname)))

    def states(self):
        return state_rows(torch._C._dispatch_dump(self.qualname)), state_rows(dc.dump_state(self.qualname))

    def close(self) -> None:
        self.torch_lib._destroy()
        self.dc_lib._destroy()


@pytest.fixture
def pair():
    pairs = []

    def make(schema: str = "f(Tensor x) -> Tensor") -> Pair:
        p = Pair(schema)
        pairs.append(p)
        return p

    yield make
    for p in pairs:
        p.close()


def torch_tensors() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nested tensors are a prototype API
        tensors = {
            "cpu": torch.randn(2, 2),
            "meta": torch.empty(2, 2, device="meta"),
            "sparse": torch.randn(2, 2).to_sparse(),
            "csr": torch.randn(2, 2).to_sparse_csr(),
            "quantized": torch.quantize_per_tensor(torch.randn(2, 2), 0.1, 0, torch.qint8),
            "nested": torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]),
            "mkldnn": torch.randn(2, 2).to_mkldnn(),
        }
        with torch.inference_mode():
            tensors["inference"] = torch.randn(2)
    return tensors


TENSORS = torch_tensors()


class Mirror:
    """A dispatchcore argument carrying a torch tensor's exact key set."""

    def __init__(self, t) -> None:
        self._key_bits = torch._C._dispatch_keys(t).raw_repr()


def call_both(p: Pair, tensor) -> tuple:
    """What each side did: the kernels that ran, or the error's signature."""
    results = []
    for log, call, arg in ((p.torch_log, getattr(getattr(torch.ops, p.ns), p.name).default, tensor),
                           (p.dc_log, dc.find_op(p.qualname), Mirror(tensor))):
        log.clear()
        try:
            call(arg)
            results.append(tuple(log))
        except Exception as e:  # noqa: BLE001 - compared below
            results.append(error_signature(e))
    return tuple(results)


# --- the override warning (first: once per process in torch) ------------------------------------
def test_override_warning_text_matches_torch():
    p = Pair()
    dispatcher = dc.get_dispatcher()
    warned, dispatcher._warned_override = dispatcher._warned_override, False
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            p.torch_lib.impl("f", lambda x: x, "CPU")
            p.torch_lib.impl("f", lambda x: x, "CPU")
            p.dc_lib.impl("f", lambda x: x, "CPU")
            p.dc_lib.impl("f", lambda x: x, "CPU")
        messages = [strip_locations(str(w.message)) for w in record if "Overriding" in str(w.message)]
        if len(messages) < 2:
            pytest.skip("torch's once-per-process override warning was already issued in this process")
        torch_text, dc_text = messages
        assert dc_text == torch_text
        assert torch_text.endswith(
            "(Triggered internally at aten/src/ATen/core/dispatch/OperatorEntry.cpp:208.)")
    finally:
        dispatcher._warned_override = warned
        p.close()


# --- tables and dumps (test/test_dispatch.py scenarios and more) ----------------------------------------------
CIA, CEA = "CompositeImplicitAutograd", "CompositeExplicitAutograd"
CEANF, CIANT = "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutogradNestedTensor"

SCENARIOS = {
    "CIA": [CIA],
    "CIA + CPU": [CIA, "CPU"],
    "CEA": [CEA],
    "CEA + CIA": [CEA, CIA],
    "CEANonFunctional": [CEANF],
    "CEA + Autograd": [CEA, "Autograd"],
    "Autograd + CPU": ["Autograd", "CPU"],
    "AutogradCPU + Autograd": ["AutogradCPU", "Autograd"],
    "CIA + Autograd": [CIA, "Autograd"],
    "CIA + SparseCPU": [CIA, "SparseCPU"],
    "CIANestedTensor": [CIANT],
    # more
    "schema only": [],
    "CPU": ["CPU"],
    "Meta": ["Meta"],
    "CIA + MkldnnCPU": [CIA, "MkldnnCPU"],
    "CIA + QuantizedCPU": [CIA, "QuantizedCPU"],
    "CIA + MTIA": [CIA, "MTIA"],
    "CIA + MAIA": [CIA, "MAIA"],
    "CIA + HIP": [CIA, "HIP"],
    "CIA + NestedTensorCPU": [CIA, "NestedTensorCPU"],
    "CIANested + NestedTensorCPU + CEA": [CIANT, "NestedTensorCPU", CEA],
    "CIANested + CIA": [CIANT, CIA],
    "CEANF + CEA": [CEANF, CEA],
    "CEANF + CIA + XLA": [CEANF, CIA, "XLA"],
    "batched decomposition": ["FuncTorchBatchedDecomposition"],
    "BackendSelect + ADInplaceOrView": ["BackendSelect", "ADInplaceOrView"],
    "AutogradOther + AutogradNestedTensor": ["AutogradOther", "AutogradNestedTensor"],
    "fallthrough AutogradCPU": ["CPU", "AutogradCPU~"],
    "fallthrough Autograd": ["CPU", "Autograd~"],
    "fallthrough CPU + CIA": ["CPU~", CIA],
    "fallthrough CIA": [CIA + "~"],
    "fallthrough Python + AutocastCPU kernel": ["Python~", "AutocastCPU"],
}


def parse(regs: list[str]) -> list[tuple[str, bool]]:
    return [(r.rstrip("~"), r.endswith("~")) for r in regs]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_tables_and_states_match_torch(pair, name):
    p = pair()
    p.register(parse(SCENARIOS[name]))
    torch_table, dc_table = p.tables()
    assert dc_table == torch_table
    torch_state, dc_state = p.states()
    assert dc_state == torch_state


PAIR_KEYS = ["CPU", "Meta", "SparseCPU", "NestedTensorCPU", "QuantizedCPU", "MkldnnCPU", "AutogradCPU",
             "Autograd", CIA, CEA, CEANF, CIANT, "FuncTorchBatchedDecomposition", "AutogradOther",
             "AutogradNestedTensor", "XLA", "MTIA", "SparseCsrCPU", "Fake", "FuncTorchBatched"]


@pytest.mark.parametrize("keys", list(itertools.combinations(PAIR_KEYS, 2)), ids="+".join)
def test_pairwise_tables_match_torch(pair, keys):
    fallthrough = hash(keys) % 3  # 0: none, 1/2: that registration is a fallthrough
    p = pair()
    p.register([(k, i + 1 == fallthrough) for i, k in enumerate(keys)])
    torch_table, dc_table = p.tables()
    assert dc_table == torch_table


# --- which kernel a call reaches ----------------------------------------------------------------
CALL_KEYS = ["CPU", "Meta", "SparseCPU", "NestedTensorCPU", "QuantizedCPU", "MkldnnCPU", "AutogradCPU",
             "Autograd", CIA, CEA, CEANF, CIANT, "AutogradOther", "AutogradNestedTensor", "SparseCsrCPU",
             "ADInplaceOrView", "AutocastCPU"]


def _call_combos():
    combos = [((k, False),) for k in CALL_KEYS] + [((k, True),) for k in CALL_KEYS]
    combos += [((a, False), (b, False)) for a, b in itertools.combinations(CALL_KEYS, 2)]
    rng = random.Random(2130)
    for _ in range(60):
        keys = rng.sample(CALL_KEYS, 3)
        combos.append(tuple((k, rng.random() < 0.3) for k in keys))
    return combos


@pytest.mark.parametrize("regs", _call_combos(), ids=lambda regs: "+".join(k + "~" * f for k, f in regs))
def test_calls_reach_the_same_kernel_or_error_as_torch(pair, regs):
    p = pair()
    p.register(list(regs))
    p.refresh_torch()
    for name, tensor in TENSORS.items():
        torch_result, dc_result = call_both(p, tensor)
        assert dc_result == torch_result, name


def test_known_divergence_stale_cached_entries(pair):
    """OperatorEntry.cpp: torch refreshes only some keys per registration, so a CEA kernel registered after
    a CIA one leaves AutogradCPU at the math kernel in torch's cache (its recomputing dump shows the
    backend fallback). dispatchcore keeps the table canonical."""
    p = pair()
    p.register([(CIA, False)])
    p.register([(CEA, False)])
    torch_table, dc_table = p.tables()
    assert dc_table == torch_table  # the dumps recompute in torch: they agree
    torch_result, dc_result = call_both(p, TENSORS["cpu"])
    assert torch_result == (CIA,)  # stale
    assert dc_result == (CEA,)  # canonical
    p.refresh_torch()
    assert call_both(p, TENSORS["cpu"]) == ((CEA,), (CEA,))


# --- keysets seen by kernels, BackendSelect, no-tensor calls --------------------------------------
def test_with_keyset_kernels_see_the_same_keysets(pair):
    p = pair()
    seen = {"torch": [], "dc": []}
    top = None

    def torch_cpu(ks, x):
        seen["torch"].append(str(ks))
        return x

    def torch_autograd(ks, x):
        seen["torch"].append(str(ks))
        return top.redispatch(ks & torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.AutogradCPU), x)

    p.torch_lib.impl("f", torch_cpu, "CPU", with_keyset=True)
    p.torch_lib.impl("f", torch_autograd, "AutogradCPU", with_keyset=True)
    top = getattr(torch.ops, p.ns).f.default
    dop = dc.find_op(p.qualname)
    p.dc_lib.impl("f", lambda ks, x: seen["dc"].append(str(ks)) or x, "CPU", with_keyset=True)
    p.dc_lib.impl("f", lambda ks, x: seen["dc"].append(str(ks)) or dop.redispatch(
        ks & dc.DispatchKeySet.full_after("AutogradCPU"), x), "AutogradCPU", with_keyset=True)
    top(TENSORS["cpu"])
    dop(Mirror(TENSORS["cpu"]))
    assert seen["dc"] == seen["torch"] == ["DispatchKeySet(CPU, AutogradCPU)", "DispatchKeySet(CPU)"]


def test_backend_select_matches_torch(pair):
    p = pair("make(int n, *, Device? device=None) -> Tensor")
    p.torch_lib.impl("make", lambda n, *, device=None: torch.zeros(n), "CPU")
    p.dc_lib.impl("make", lambda n, *, device=None: "cpu", "CPU")
    errors = []
    for call in (lambda: getattr(torch.ops, p.ns).make(3), lambda: dc.find_op(p.qualname)(3)):
        with pytest.raises(NotImplementedError) as info:
            call()
        errors.append(error_signature(info.value))
    assert errors[1] == errors[0]
    seen = {"torch": [], "dc": []}
    top, dop = getattr(torch.ops, p.ns).make.default, dc.find_op(p.qualname)
    cpu_keyset = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    p.torch_lib.impl("make", lambda ks, n, *, device=None: seen["torch"].append(str(ks))
                     or top.redispatch(cpu_keyset, n, device=device), "BackendSelect", with_keyset=True)
    p.dc_lib.impl("make", lambda ks, n, *, device=None: seen["dc"].append(str(ks))
                  or dop.redispatch(dc.DispatchKeySet("CPU"), n, device=device), "BackendSelect",
                  with_keyset=True)
    assert top(3).shape == (3,) and dop(3) == "cpu"
    assert seen["dc"] == seen["torch"] == ["DispatchKeySet(BackendSelect)"]


@pytest.mark.parametrize("key", [CIA, CEA, CEANF])
def test_composites_serve_no_tensor_calls_like_torch(pair, key):
    p = pair("cia0(int n) -> int")
    p.torch_lib.impl("cia0", lambda n: n * 2, key)
    p.dc_lib.impl("cia0", lambda n: n * 2, key)
    assert getattr(torch.ops, p.ns).cia0(3) == dc.find_op(p.qualname)(3) == 6


# --- error texts ----------------------------------------------------------------------------------
def test_could_not_run_and_meta_errors_match_torch(pair):
    p = pair()
    p.register([("Meta", False), ("AutogradCPU", True)])
    for name in ("cpu", "sparse", "quantized", "nested", "mkldnn", "inference"):
        torch_result, dc_result = call_both(p, TENSORS[name])
        assert dc_result == torch_result, name
        assert torch_result[0] == "NotImplementedError"
    q = pair()
    q.register([("CPU", False)])
    torch_result, dc_result = call_both(q, TENSORS["meta"])
    assert dc_result == torch_result
    assert "attempted to run this operator with Meta tensors" in torch_result[1]


def test_ambiguous_autogradother_error_matches_torch(pair):
    p = pair()
    p.register([("SparseCPU", False), (CIA, False)])  # this order: torch's cache is canonical too
    messages = []
    for call, arg in ((getattr(torch.ops, p.ns).f, TENSORS["mkldnn"]), (dc.find_op(p.qualname),
                                                                        Mirror(TENSORS["mkldnn"]))):
        with pytest.raises(RuntimeError) as info:
            call(arg)
        messages.append(strip_locations(str(info.value)).replace(p.ns, "NS"))
    assert messages[1] == messages[0]


def test_redispatch_onto_a_fallthrough_matches_torch(pair):
    p = pair()
    p.register([("CPU", False)])
    tensor = TENSORS["cpu"]
    errors = []
    with pytest.raises(RuntimeError) as info:
        getattr(torch.ops, p.ns).f.default.redispatch(torch._C._dispatch_keys(tensor), tensor)
    errors.append(str(info.value).replace(CI_PREFIX, ""))
    with pytest.raises(RuntimeError) as info:
        mirror = Mirror(tensor)
        dc.find_op(p.qualname).redispatch(dc.DispatchKeySet.from_raw(mirror._key_bits), mirror)
    errors.append(str(info.value))
    assert errors[1].startswith(errors[0])


@pytest.mark.parametrize("call", [
    lambda f, t: f(),
    lambda f, t: f(3),
    lambda f, t: f(t, 1, 2),
    lambda f, t: f(t, m=2),
    lambda f, t: f(t, x=t),
    lambda f, t: f(t, 1, True, 4),
])
def test_binding_errors_match_torch(pair, call):
    p = pair("f(Tensor x, int n=1, *, bool flag=False) -> Tensor")
    p.torch_lib.impl("f", lambda x, n=1, *, flag=False: x, "CPU")
    p.dc_lib.impl("f", lambda x, n=1, *, flag=False: x, "CPU")
    messages = []
    for f, t in ((getattr(torch.ops, p.ns).f.default, TENSORS["cpu"]),
                 (dc.find_op(p.qualname), Mirror(TENSORS["cpu"]))):
        with pytest.raises(RuntimeError) as info:
            call(f, t)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def _library_errors(lib_module, ns: str):
    """Provoke each Library error of torch/library.py through one Library implementation."""
    Library = lib_module  # noqa: N806
    out = {}

    def record(name, fn):
        try:
            fn()
            out[name] = None
        except Exception as e:  # noqa: BLE001 - compared below
            kind = "ValueError" if isinstance(e, ValueError) else "RuntimeError"
            out[name] = (kind, strip_locations(str(e)))

    keep = []
    definition = Library(ns, "DEF")
    keep.append(definition)
    definition.define("foo(Tensor x) -> Tensor")
    definition.define("ov.two(Tensor x) -> Tensor")
    fragment = Library(ns, "FRAGMENT")
    impl = Library(ns, "IMPL")
    impl_cpu = Library(ns, "IMPL", "CPU")
    keep += [fragment, impl, impl_cpu]
    record("second DEF", lambda: keep.append(Library(ns, "DEF")))
    record("bad kind", lambda: Library(ns, "BLAH"))
    record("prim DEF", lambda: Library("prim", "DEF"))
    record("prim FRAGMENT", lambda: Library("prim", "FRAGMENT"))
    record("duplicate define", lambda: definition.define("foo(Tensor x) -> Tensor"))
    record("duplicate define in fragment", lambda: fragment.define("foo(Tensor x) -> Tensor"))
    record("define in IMPL", lambda: impl.define("bar(Tensor x) -> Tensor"))
    record("define namespace", lambda: definition.define("zzz::bar(Tensor x) -> Tensor"))
    record("fragment define namespace", lambda: fragment.define("zzz::bar(Tensor x) -> Tensor"))
    record("impl namespace", lambda: impl.impl("zzz::foo", lambda x: x, "CPU"))
    record("def impl namespace", lambda: definition.impl("zzz::foo", lambda x: x, "CPU"))
    record("fragment impl namespace", lambda: fragment.impl("zzz::foo", lambda x: x, "CPU"))
    record("impl key mismatch", lambda: impl_cpu.impl("foo", lambda x: x, "CUDA"))
    record("unknown key", lambda: definition.impl("foo", lambda x: x, "NotAKey"))
    record("alias analysis",
           lambda: definition.define("g(Tensor x) -> Tensor", alias_analysis="PURE_FUNCTION"))
    record("fallback namespace", lambda: definition.fallback(lambda op, *a: None, "Fake"))
    global_lib = Library("_", "IMPL")
    keep.append(global_lib)
    record("fallback", lambda: global_lib.fallback(lambda op, *a: None, "Fake"))
    record("duplicate fallback", lambda: global_lib.fallback(lambda op, *a: None, "Fake"))
    record("builtin fallback", lambda: global_lib.fallback(lambda op, *a: None, "AutogradOther"))
    record("impl", lambda: definition.impl("foo", lambda x: x, "CPU"))
    record("impl overload", lambda: definition.impl("ov.two", lambda x: x, "CPU"))
    record("allow_override", lambda: definition.impl("foo", lambda x: x, "CPU", allow_override=False))
    record("allow_override overload",
           lambda: definition.impl("ov.two", lambda x: x, "CPU", allow_override=False))
    for library in reversed(keep):
        library._destroy()
    return out


# dispatchcore continues these after torch's text with a hint of its own
HINTED = {"unknown key", "duplicate fallback", "builtin fallback"}


def test_library_errors_match_torch():
    ns = fresh_ns()
    torch_errors = _library_errors(TorchLibrary, ns)
    dc_errors = _library_errors(dc.Library, ns)
    assert dc_errors.keys() == torch_errors.keys()
    for name in HINTED:
        (dc_kind, dc_text), (torch_kind, torch_text) = dc_errors.pop(name), torch_errors.pop(name)
        assert dc_kind == torch_kind and dc_text.startswith(torch_text), name
    assert dc_errors == torch_errors
    assert torch_errors["second DEF"][1].startswith("Only a single TORCH_LIBRARY")
    assert torch_errors["impl"] is None and torch_errors["fallback"] is None
