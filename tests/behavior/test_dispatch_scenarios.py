"""The registration scenarios of PyTorch's ``test/test_dispatch.py``, replayed on dispatchcore.

Each scenario is a set of registrations, each made by its own ``FRAGMENT`` Library (a ``def``, an
``impl`` at a runtime or alias key, a fallthrough, or a ``def`` together with a
``CompositeImplicitAutograd`` kernel). For every order of registering them and every order of
destroying their libraries (every order up to four registrations, a deterministic sample of
orders beyond), the ``dump_state`` and ``dump_table`` texts after each step must equal what torch
2.13 prints for the registrations then in effect: the result depends on the set in effect, never
on the path (torch's ``commute()``), and when the last registration goes, the operator is gone
(torch's ``_dispatch_dump`` then prints ``""``).

torch accepts an ``impl`` before the operator's ``def``: the entry then has no schema
(``schema: (none)``, no ``debug:``/``alias analysis kind:`` lines) and its table is computed from
the kernels alone. The orders that register an impl while no schema is in effect are tested
separately (``test_impl_before_def_...``).

A registration refused by torch is refused here with torch's text, and the state is unchanged
(two defs of one name). test_dispatch.py's cases that need C++ (a def or impl whose schema is
inferred from a C++ function; the dangling-impl and per-key registration listings) have no
Python form; its schema-mismatch case is kept for dispatchcore's kernel check (see
``test_kernel_that_does_not_fit_the_schema_is_refused_whichever_comes_second``).

The expected texts were printed by torch 2.13.0 (``torch._C._dispatch_dump`` and
``_dispatch_dump_table``) for these very registrations and are written out below, so this file
needs no torch; ``tests/differential/test_vs_torch_dispatch_scenarios.py`` replays the same
orders on torch itself. Every registration is made from a frame whose code is named after it
(``@CPU``, ``@def``, ...; line 1), so both libraries print ``registered at @CPU:1`` for it; the
locations of built-in fallbacks differ (torch's C++ files, dispatchcore's Python) and read
``registered at LOC``. The namespace reads ``test``, as in torch's test.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import dispatchcore as dc

CIA, CEA = "CompositeImplicitAutograd", "CompositeExplicitAutograd"

# label -> the steps its Library performs: ("def", schema, alias_analysis), ("impl", key),
# ("fallthrough", key). The label names the registration in the dumps (``registered at @label:1``).
REGISTRATIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "def": (("def", "foo(Tensor x) -> Tensor", ""),),
    "def_xy": (("def", "foo(Tensor x, Tensor y) -> Tensor", ""),),
    "def_xy_2": (("def", "foo(Tensor x, Tensor y) -> Tensor", ""),),
    "def_conservative": (("def", "foo(Tensor x) -> Tensor", "CONSERVATIVE"),),
    # torch's m.def("foo", fn): a schema and a catch-all (CompositeImplicitAutograd) kernel at once
    "def_cia": (("def", "foo(Tensor x) -> Tensor", ""), ("impl", CIA)),
    "CPU": (("impl", "CPU"),),
    "XLA": (("impl", "XLA"),),
    "Lazy": (("impl", "Lazy"),),
    "QuantizedCPU": (("impl", "QuantizedCPU"),),
    "AutogradCPU": (("impl", "AutogradCPU"),),
    "Autograd": (("impl", "Autograd"),),
    "CIA": (("impl", CIA),),
    "CIA_2": (("impl", CIA),),
    "CEA": (("impl", CEA),),
    "CPU_ft": (("fallthrough", "CPU"),),
    "AutogradCPU_ft": (("fallthrough", "AutogradCPU"),),
    "Autograd_ft": (("fallthrough", "Autograd"),),
}


class Scenario:
    """Registrations whose effects must commute; ``ctor_order`` fixes the registration order
    (torch's test does so where registering does not commute: two kernels on one key)."""

    def __init__(self, labels: list[str], *, ctor_order: tuple[int, ...] | None = None,
                 raises: bool = False) -> None:
        self.labels = labels
        self.ctor_order = ctor_order
        self.raises = raises


SCENARIOS: dict[str, Scenario] = {
    # test_dispatch.py, TestDispatch
    "def + CIA + CPU + Autograd + AutogradCPU": Scenario(["def", "CIA", "CPU", "Autograd", "AutogradCPU"]),
    "def with kernel + CPU + Autograd + AutogradCPU": Scenario(["def_cia", "CPU", "Autograd", "AutogradCPU"]),
    "def only": Scenario(["def_xy"]),
    "impls only, no def": Scenario(["CIA", "CPU", "Autograd", "AutogradCPU"]),
    "def with kernel + CPU + XLA + Autograd + AutogradCPU": Scenario(
        ["def_cia", "CPU", "XLA", "Autograd", "AutogradCPU"]),
    "def with kernel + CPU": Scenario(["def_cia", "CPU"]),
    "def + CIA": Scenario(["def", "CIA"]),
    "def + CPU + CIA": Scenario(["def", "CPU", "CIA"]),
    "def + Autograd": Scenario(["def", "Autograd"]),
    "def + CPU + Autograd + CIA": Scenario(["def", "CPU", "Autograd", "CIA"]),
    "def + CIA + QuantizedCPU (ambiguous AutogradOther)": Scenario(["def", "CIA", "QuantizedCPU"]),
    "def + CPU + CEA": Scenario(["def", "CPU", "CEA"]),
    "def + CPU + Autograd + CEA": Scenario(["def", "CPU", "Autograd", "CEA"]),
    "def + CPU + Autograd + CIA + CEA": Scenario(["def", "CPU", "Autograd", "CIA", "CEA"]),
    "def twice": Scenario(["def_xy", "def_xy_2"], raises=True),
    "def with explicit alias analysis": Scenario(["def_conservative"]),
    "def twice, alias analysis differs": Scenario(["def", "def_conservative"], raises=True),
    "CIA kernel overwritten, no def": Scenario(["CIA", "CIA_2"], ctor_order=(0, 1)),
    # test_dispatch.py, TestPythonDispatcher: its operator is defined, so the def is one more
    # registration here; its XLA and Lazy kernels play the same part, XLA is above, so Lazy only
    "def + CPU + Lazy + CIA": Scenario(["def", "CPU", "Lazy", "CIA"]),
    "def + CPU + Lazy + CIA + AutogradCPU": Scenario(["def", "CPU", "Lazy", "CIA", "AutogradCPU"]),
    "def + CPU + Lazy + CEA + AutogradCPU": Scenario(["def", "CPU", "Lazy", "CEA", "AutogradCPU"]),
    "def + CPU + QuantizedCPU + CIA": Scenario(["def", "CPU", "QuantizedCPU", "CIA"]),
    # fallthrough kernels on one operator
    "def + CPU + AutogradCPU fallthrough + Autograd": Scenario(["def", "CPU", "AutogradCPU_ft", "Autograd"]),
    "def + CIA + Autograd fallthrough": Scenario(["def", "CIA", "Autograd_ft"]),
    "def + CPU fallthrough + CIA": Scenario(["def", "CPU_ft", "CIA"]),
}


# --- orders ---------------------------------------------------------------------------------------
def orders(scenario: Scenario) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(registration order, destruction order) pairs.

    Up to three registrations: every pair. Four: every registration order with two destruction
    orders, each destruction order used twice. Five: every registration order, each with one
    destruction order, every destruction order used once. Six or more: 120 sampled
    orders of each (the identity and the reversed order among them). All deterministic.
    """
    n = len(scenario.labels)
    perms = list(itertools.permutations(range(n)))
    rng = random.Random(2130 + n)
    if scenario.ctor_order is not None:
        return [(scenario.ctor_order, d) for d in perms]
    if n <= 3:
        return list(itertools.product(perms, perms))
    if n > 5:
        ends = [perms[0], perms[-1]]
        perms = ends + rng.sample(perms[1:-1], 118)
    pairs = []
    for _ in range(2 if n == 4 else 1):
        dtors = list(perms)
        rng.shuffle(dtors)
        pairs += zip(perms, dtors)
    return pairs


def impl_before_def(scenario: Scenario, ctor: tuple[int, ...]) -> bool:
    """Whether this registration order makes an impl while the operator has no schema."""
    defined = False
    for index in ctor:
        for step in REGISTRATIONS[scenario.labels[index]]:
            if step[0] == "def":
                defined = True
            elif not defined:
                return True
    return False


# --- running registrations --------------------------------------------------------------------------
def run_as(label: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call ``fn(*args)`` from a frame whose code is ``@label``, line 1.

    torch records the ``Library(...)`` caller's file and line, dispatchcore the ``define``/
    ``impl`` caller's: made this way, both print ``registered at @label:1``.
    """
    return eval(_caller_code(label), {"fn": fn, "args": args})


@functools.cache
def _caller_code(label: str) -> Any:
    return compile("fn(*args)", "@" + label, "eval")


def identity(x):
    return x


_LOCATION = re.compile(r"registered at (?!@)\S+:\d+")


def normalize(text: str, ns: str) -> str:
    return _LOCATION.sub("registered at LOC", text.replace(ns + "::", "test::"))


class DispatchcoreSide:
    """Makes the registrations with ``dispatchcore.Library``; reads the dumps."""

    def __init__(self, ns: str) -> None:
        self.ns = ns
        self.qualname = f"{ns}::foo"

    def register(self, label: str) -> dc.Library:
        lib = dc.Library(self.ns, "FRAGMENT")
        try:
            for step in REGISTRATIONS[label]:
                if step[0] == "def":
                    run_as(label, lib.define, step[1], step[2])
                else:
                    kernel = dc.fallthrough_kernel if step[0] == "fallthrough" else identity
                    run_as(label, lib.impl, "foo", kernel, step[1])
        except Exception:
            lib._destroy()
            raise
        return lib

    @staticmethod
    def destroy(lib: dc.Library) -> None:
        lib._destroy()

    def dumps(self) -> tuple[str, str]:
        """(state, table); for an operator with no registration left, torch prints ``""`` twice."""
        return (normalize(dc.dump_state(self.qualname), self.ns),
                normalize(dc.dump_table(self.qualname), self.ns))


_namespaces = itertools.count()


def fresh_ns() -> str:
    return f"dscn{next(_namespaces)}_{id(object()) % 100000}"


def subset_key(labels: Iterator[str] | set[str]) -> str:
    """The registrations in effect, in ``REGISTRATIONS`` order: ``"def + CPU"``; ``""`` for none."""
    chosen = set(labels)
    return " + ".join(label for label in REGISTRATIONS if label in chosen)


def replay(scenario: Scenario, ctor: tuple[int, ...], dtor: tuple[int, ...], make_side,
           check: Callable[[str, tuple[str, str] | str, str], None]) -> None:
    """Register in ``ctor`` order, destroy in ``dtor`` order; ``check(key, result, where)``
    after every step: ``key`` names the registrations in effect and ``result`` is
    ``(state, table)``; for a refused registration, ``key`` is ``"<label> after <in effect>"``
    and ``result`` its error text (the next check then sees the state unchanged)."""
    side = make_side(fresh_ns())
    labels = scenario.labels
    libs: dict[int, Any] = {}
    active: set[str] = set()
    check("", side.dumps(), "initial state")
    try:
        for step, index in enumerate(ctor):
            where = f"after registering {[labels[i] for i in ctor[:step + 1]]}"
            try:
                libs[index] = side.register(labels[index])
            except RuntimeError as error:
                if not scenario.raises:
                    raise AssertionError(f"{where}: {error}") from error
                check(f"{labels[index]} after {subset_key(active)}", normalize(str(error), side.ns), where)
                check(subset_key(active), side.dumps(), where + " (refused: nothing changed)")
                break
            active.add(labels[index])
            check(subset_key(active), side.dumps(), where)
        else:
            assert not scenario.raises, f"no registration was refused in order {ctor}"
        for step, index in enumerate(dtor):
            if index not in libs:
                continue
            side.destroy(libs.pop(index))
            active.discard(labels[index])
            where = f"after registering {[labels[i] for i in ctor]}, destroying {[labels[i] for i in dtor[:step + 1]]}"
            check(subset_key(active), side.dumps(), where)
    finally:
        for lib in libs.values():
            side.destroy(lib)


# --- the expectations, as torch printed them --------------------------------------------------------
def expand(tokens: str) -> list[str]:
    """Runtime key names from ``"*Autograd -AutogradCPU XLA"``: ``*G`` is every key of
    ``KEY_GROUPS[G]``, ``-K`` takes ``K`` out, a plain name adds it."""
    keys: list[str] = []
    for token in tokens.split():
        if token.startswith("*"):
            keys += KEY_GROUPS[token[1:]]
        elif token.startswith("-"):
            keys.remove(token[1:])
        else:
            keys.append(token)
    return keys


def expected_table(key: str) -> str:
    """The bare table (built-in fallbacks only) with the entries recorded for ``key`` over it."""
    overlay = {}
    for entry, tokens in TABLES[key].items():
        for name in expand(tokens):
            overlay[name] = entry
    bare = dict(line.split(": ", 1) for line in BARE_TABLE.splitlines())
    lines = [f"{name}: {overlay.get(name) or bare[name]}" for name in KEY_ORDER if name in overlay or name in bare]
    return "\n".join(lines) + "\n"


@functools.cache
def expected(key: str) -> tuple[str, str]:
    if key == "":
        return "", ""
    return STATES[key], expected_table(key)


def check_against_torch(scenario_name: str):
    seen: dict[str, tuple[str, str] | str] = {}

    def check(key: str, result, where: str) -> None:
        if isinstance(result, str):  # a refused registration
            assert result == ERRORS[key], f"{scenario_name}: {where}"
            return
        state, table = result
        want_state, want_table = expected(key)
        assert state == want_state, f"{scenario_name}: {where}: state of {{{key}}}"
        assert table == want_table, f"{scenario_name}: {where}: table of {{{key}}}"
        # path independence, as torch's commute(): the first text seen for a set is the text
        assert seen.setdefault(key, result) == result, where

    return check


@pytest.fixture(autouse=True)
def _quiet_override_warning():
    """Two kernels on one key warn once per process; keep that once for the tests that check it."""
    dispatcher = dc.get_dispatcher()
    warned = dispatcher._warned_override
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Warning only once for all operators", UserWarning)
        yield
    dispatcher._warned_override = warned


@pytest.fixture(autouse=True)
def _no_backend_discovery(monkeypatch):
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)


def _split(name: str, with_impl_before_def: bool) -> list:
    scenario = SCENARIOS[name]
    return [(c, d) for c, d in orders(scenario) if impl_before_def(scenario, c) == with_impl_before_def]


@pytest.mark.parametrize("name", [n for n in SCENARIOS if _split(n, False)])
def test_registrations_after_def_commute_and_dump_as_torch(name):
    """Orders where every impl comes after the def: each intermediate state as in torch."""
    check = check_against_torch(name)
    for ctor, dtor in _split(name, False):
        replay(SCENARIOS[name], ctor, dtor, DispatchcoreSide, check)


@pytest.mark.parametrize("name", [n for n in SCENARIOS if _split(n, True)])
def test_impl_before_def_registrations_commute_and_dump_as_torch(name):
    """Orders that register an impl while no schema is in effect (torch accepts them)."""
    check = check_against_torch(name)
    for ctor, dtor in _split(name, True):
        replay(SCENARIOS[name], ctor, dtor, DispatchcoreSide, check)


def test_every_scenario_subset_has_a_recorded_expectation():
    """The recorded texts cover every set of registrations the orders reach (the data is whole)."""
    for name, scenario in SCENARIOS.items():
        for subset in itertools.chain.from_iterable(
                itertools.combinations(scenario.labels, r) for r in range(1, len(scenario.labels) + 1)):
            key = subset_key(set(subset))
            if scenario.raises and len(subset) == len(scenario.labels):
                for label in subset:
                    assert f"{label} after {subset_key(set(subset) - {label})}" in ERRORS, name
            else:
                assert key in STATES and key in TABLES, (name, key)


def test_orders_cover_every_registration_and_destruction_order_up_to_five():
    for scenario in SCENARIOS.values():
        pairs = orders(scenario)
        n = len(scenario.labels)
        if n <= 5:
            perms = set(itertools.permutations(range(n)))
            assert {d for _, d in pairs} == perms
            if scenario.ctor_order is None:
                assert {c for c, _ in pairs} == perms
        else:
            assert len({c for c, _ in pairs}) == len({d for _, d in pairs}) == 120


@pytest.mark.parametrize("order", [("def_xy", "CPU"), ("CPU", "def_xy")], ids=["def first", "impl first"])
def test_kernel_that_does_not_fit_the_schema_is_refused_whichever_comes_second(order):
    """test_dispatch.py's test_def_impl_schema_mismatch: a C++ kernel carries an inferred schema,
    and c10 refuses the def or the impl, whichever comes second, leaving the state as it was.
    torch.library's Python kernels carry none, so torch accepts both orders; dispatchcore checks a
    Python kernel's parameters against the schema instead (docs/notes.md), and refuses as c10 does."""
    side = DispatchcoreSide(fresh_ns())
    first = side.register(order[0])
    try:
        with pytest.raises(RuntimeError, match=r"foo\(Tensor x, Tensor y\)"):
            side.register(order[1])
        assert side.dumps() == expected(order[0])
    finally:
        first._destroy()
    assert side.dumps() == ("", "")


def test_second_backend_fallback_for_a_key_is_refused_and_the_first_stays():
    """test_dispatch.py's test_multiple_fallback, on XLA (no built-in fallback in torch 2.13)."""
    side = DispatchcoreSide(fresh_ns())
    lib = side.register("def")
    first, second = dc.Library("_", "IMPL"), dc.Library("_", "IMPL")
    try:
        run_as("fallback_1", first.fallback, dc.fallthrough_kernel, "XLA")
        with pytest.raises(RuntimeError) as info:
            run_as("fallback_2", second.fallback, dc.fallthrough_kernel, "XLA")
        assert str(info.value).startswith(
            "Tried to register multiple backend fallbacks for the same dispatch key XLA; previous "
            "registration registered at @fallback_1:1, new registration registered at @fallback_2:1")
        assert "XLA: fallthrough registered at @fallback_1:1 [backend fallback]\n" in side.dumps()[1]
        first._destroy()
        assert side.dumps() == expected("def")
    finally:
        first._destroy()
        second._destroy()
        lib._destroy()


# --- recorded from torch 2.13.0 ------------------------------------------------------------------------
# Generated by replaying ``orders()`` of every scenario on torch 2.13.0 (the differential test's
# TorchSide), keeping the first text seen for each set of registrations in effect (torch's texts were
# path independent for every one), then written out as follows. KEY_ORDER: the runtime keys in
# torch's dump order. BARE_TABLE: the table of an operator with a schema and no kernel (the built-in
# fallbacks). STATES: ``_dispatch_dump`` per set in effect, verbatim. TABLES: per set in effect, the
# ``_dispatch_dump_table`` entries that differ from BARE_TABLE, grouped by entry text; the keys are
# written with ``expand``'s notation, where KEY_GROUPS are the keys torch gives the
# CompositeImplicitAutograd, CompositeExplicitAutograd and Autograd kernels of a lone registration.
# ERRORS: the refusals, keyed "<refused registration> after <registrations in effect>".
KEY_ORDER: list[str] = [
    'Undefined', 'CPU', 'CUDA', 'HIP', 'XLA', 'MPS', 'IPU', 'XPU', 'HPU', 'VE', 'Lazy', 'MTIA', 'MAIA',
    'PrivateUse1', 'PrivateUse2', 'PrivateUse3', 'Meta', 'FPGA', 'Vulkan', 'Metal', 'QuantizedCPU',
    'QuantizedCUDA', 'QuantizedHIP', 'QuantizedXLA', 'QuantizedMPS', 'QuantizedIPU', 'QuantizedXPU',
    'QuantizedHPU', 'QuantizedVE', 'QuantizedLazy', 'QuantizedMTIA', 'QuantizedMAIA',
    'QuantizedPrivateUse1', 'QuantizedPrivateUse2', 'QuantizedPrivateUse3', 'QuantizedMeta',
    'CustomRNGKeyId', 'MkldnnCPU', 'SparseCPU', 'SparseCUDA', 'SparseHIP', 'SparseXLA', 'SparseMPS',
    'SparseIPU', 'SparseXPU', 'SparseHPU', 'SparseVE', 'SparseLazy', 'SparseMTIA', 'SparseMAIA',
    'SparsePrivateUse1', 'SparsePrivateUse2', 'SparsePrivateUse3', 'SparseMeta', 'SparseCsrCPU',
    'SparseCsrCUDA', 'SparseCsrHIP', 'SparseCsrXLA', 'SparseCsrMPS', 'SparseCsrIPU', 'SparseCsrXPU',
    'SparseCsrHPU', 'SparseCsrVE', 'SparseCsrLazy', 'SparseCsrMTIA', 'SparseCsrMAIA',
    'SparseCsrPrivateUse1', 'SparseCsrPrivateUse2', 'SparseCsrPrivateUse3', 'SparseCsrMeta',
    'NestedTensorCPU', 'NestedTensorCUDA', 'NestedTensorHIP', 'NestedTensorXLA', 'NestedTensorMPS',
    'NestedTensorIPU', 'NestedTensorXPU', 'NestedTensorHPU', 'NestedTensorVE', 'NestedTensorLazy',
    'NestedTensorMTIA', 'NestedTensorMAIA', 'NestedTensorPrivateUse1', 'NestedTensorPrivateUse2',
    'NestedTensorPrivateUse3', 'NestedTensorMeta', 'BackendSelect', 'Python',
    'FuncTorchDynamicLayerBackMode', 'Functionalize', 'Conjugate', 'Negative', 'ZeroTensor',
    'ADInplaceOrView', 'AutogradOther', 'AutogradCPU', 'AutogradCUDA', 'AutogradHIP', 'AutogradXLA',
    'AutogradMPS', 'AutogradIPU', 'AutogradXPU', 'AutogradHPU', 'AutogradVE', 'AutogradLazy',
    'AutogradMTIA', 'AutogradMAIA', 'AutogradPrivateUse1', 'AutogradPrivateUse2', 'AutogradPrivateUse3',
    'AutogradMeta', 'AutogradNestedTensor', 'Tracer', 'AutocastCPU', 'AutocastMTIA', 'AutocastMAIA',
    'AutocastXPU', 'AutocastMPS', 'AutocastCUDA', 'FuncTorchBatched', 'BatchedNestedTensor',
    'FuncTorchVmapMode', 'Batched', 'VmapMode', 'FuncTorchGradWrapper', 'PythonTLSSnapshot',
    'FuncTorchDynamicLayerFrontMode', 'PreDispatch', 'PythonDispatcher',
]
KEY_GROUPS: dict[str, list[str]] = {
    'CompositeImplicitAutograd': [
        'Undefined', 'CPU', 'CUDA', 'HIP', 'XLA', 'MPS', 'IPU', 'XPU', 'HPU', 'VE', 'Lazy', 'MTIA',
        'MAIA', 'PrivateUse1', 'PrivateUse2', 'PrivateUse3', 'Meta', 'FPGA', 'Vulkan', 'Metal',
        'QuantizedCPU', 'QuantizedCUDA', 'QuantizedHIP', 'QuantizedXLA', 'QuantizedMPS', 'QuantizedIPU',
        'QuantizedXPU', 'QuantizedHPU', 'QuantizedVE', 'QuantizedLazy', 'QuantizedMTIA',
        'QuantizedMAIA', 'QuantizedPrivateUse1', 'QuantizedPrivateUse2', 'QuantizedPrivateUse3',
        'QuantizedMeta', 'CustomRNGKeyId', 'MkldnnCPU', 'SparseCPU', 'SparseCUDA', 'SparseHIP',
        'SparseXLA', 'SparseMPS', 'SparseIPU', 'SparseXPU', 'SparseHPU', 'SparseVE', 'SparseLazy',
        'SparseMTIA', 'SparseMAIA', 'SparsePrivateUse1', 'SparsePrivateUse2', 'SparsePrivateUse3',
        'SparseMeta', 'SparseCsrCPU', 'SparseCsrCUDA', 'SparseCsrHIP', 'SparseCsrXLA', 'SparseCsrMPS',
        'SparseCsrIPU', 'SparseCsrXPU', 'SparseCsrHPU', 'SparseCsrVE', 'SparseCsrLazy', 'SparseCsrMTIA',
        'SparseCsrMAIA', 'SparseCsrPrivateUse1', 'SparseCsrPrivateUse2', 'SparseCsrPrivateUse3',
        'SparseCsrMeta', 'NestedTensorCPU', 'NestedTensorCUDA', 'NestedTensorHIP', 'NestedTensorXLA',
        'NestedTensorMPS', 'NestedTensorIPU', 'NestedTensorXPU', 'NestedTensorHPU', 'NestedTensorVE',
        'NestedTensorLazy', 'NestedTensorMTIA', 'NestedTensorMAIA', 'NestedTensorPrivateUse1',
        'NestedTensorPrivateUse2', 'NestedTensorPrivateUse3', 'NestedTensorMeta', 'AutogradOther',
        'AutogradCPU', 'AutogradCUDA', 'AutogradHIP', 'AutogradXLA', 'AutogradMPS', 'AutogradIPU',
        'AutogradXPU', 'AutogradHPU', 'AutogradVE', 'AutogradLazy', 'AutogradMTIA', 'AutogradMAIA',
        'AutogradPrivateUse1', 'AutogradPrivateUse2', 'AutogradPrivateUse3', 'AutogradMeta',
        'AutogradNestedTensor',
    ],
    'CompositeExplicitAutograd': [
        'Undefined', 'CPU', 'CUDA', 'HIP', 'XLA', 'MPS', 'IPU', 'XPU', 'HPU', 'VE', 'Lazy', 'MTIA',
        'MAIA', 'PrivateUse1', 'PrivateUse2', 'PrivateUse3', 'Meta', 'FPGA', 'Vulkan', 'Metal',
        'QuantizedCPU', 'QuantizedCUDA', 'QuantizedHIP', 'QuantizedXLA', 'QuantizedMPS', 'QuantizedIPU',
        'QuantizedXPU', 'QuantizedHPU', 'QuantizedVE', 'QuantizedLazy', 'QuantizedMTIA',
        'QuantizedMAIA', 'QuantizedPrivateUse1', 'QuantizedPrivateUse2', 'QuantizedPrivateUse3',
        'QuantizedMeta', 'CustomRNGKeyId', 'MkldnnCPU', 'SparseCPU', 'SparseCUDA', 'SparseHIP',
        'SparseXLA', 'SparseMPS', 'SparseIPU', 'SparseXPU', 'SparseHPU', 'SparseVE', 'SparseLazy',
        'SparseMTIA', 'SparseMAIA', 'SparsePrivateUse1', 'SparsePrivateUse2', 'SparsePrivateUse3',
        'SparseMeta', 'SparseCsrCPU', 'SparseCsrCUDA', 'SparseCsrHIP', 'SparseCsrXLA', 'SparseCsrMPS',
        'SparseCsrIPU', 'SparseCsrXPU', 'SparseCsrHPU', 'SparseCsrVE', 'SparseCsrLazy', 'SparseCsrMTIA',
        'SparseCsrMAIA', 'SparseCsrPrivateUse1', 'SparseCsrPrivateUse2', 'SparseCsrPrivateUse3',
        'SparseCsrMeta',
    ],
    'Autograd': [
        'AutogradOther', 'AutogradCPU', 'AutogradCUDA', 'AutogradHIP', 'AutogradXLA', 'AutogradMPS',
        'AutogradIPU', 'AutogradXPU', 'AutogradHPU', 'AutogradVE', 'AutogradLazy', 'AutogradMTIA',
        'AutogradMAIA', 'AutogradPrivateUse1', 'AutogradPrivateUse2', 'AutogradPrivateUse3',
        'AutogradMeta', 'AutogradNestedTensor',
    ],
}
BARE_TABLE = """\
Meta: registered at LOC [backend fallback]
BackendSelect: fallthrough registered at LOC [backend fallback]
Python: registered at LOC [backend fallback]
FuncTorchDynamicLayerBackMode: registered at LOC [backend fallback]
Functionalize: registered at LOC [backend fallback]
Conjugate: registered at LOC [backend fallback]
Negative: registered at LOC [backend fallback]
ZeroTensor: registered at LOC [backend fallback]
ADInplaceOrView: fallthrough registered at LOC [backend fallback]
AutogradOther: registered at LOC [backend fallback]
AutogradCPU: registered at LOC [backend fallback]
AutogradCUDA: registered at LOC [backend fallback]
AutogradXLA: registered at LOC [backend fallback]
AutogradMPS: registered at LOC [backend fallback]
AutogradXPU: registered at LOC [backend fallback]
AutogradHPU: registered at LOC [backend fallback]
AutogradLazy: registered at LOC [backend fallback]
AutogradMTIA: registered at LOC [backend fallback]
AutogradMAIA: registered at LOC [backend fallback]
AutogradPrivateUse1: registered at LOC [backend fallback]
AutogradMeta: registered at LOC [backend fallback]
Tracer: registered at LOC [backend fallback]
AutocastCPU: fallthrough registered at LOC [backend fallback]
AutocastMTIA: fallthrough registered at LOC [backend fallback]
AutocastMAIA: fallthrough registered at LOC [backend fallback]
AutocastXPU: fallthrough registered at LOC [backend fallback]
AutocastMPS: fallthrough registered at LOC [backend fallback]
AutocastCUDA: fallthrough registered at LOC [backend fallback]
FuncTorchBatched: registered at LOC [backend fallback]
BatchedNestedTensor: registered at LOC [backend fallback]
FuncTorchVmapMode: fallthrough registered at LOC [backend fallback]
Batched: registered at LOC [backend fallback]
VmapMode: fallthrough registered at LOC [backend fallback]
FuncTorchGradWrapper: registered at LOC [backend fallback]
PythonTLSSnapshot: registered at LOC [backend fallback]
FuncTorchDynamicLayerFrontMode: registered at LOC [backend fallback]
PreDispatch: registered at LOC [backend fallback]
PythonDispatcher: registered at LOC [backend fallback]
"""
STATES: dict[str, str] = {
    "def": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
""",
    "def_xy": """\
name: test::foo
schema: test::foo(Tensor x, Tensor y) -> Tensor
debug: registered at @def_xy:1
alias analysis kind: FROM_SCHEMA
""",
    "def_xy_2": """\
name: test::foo
schema: test::foo(Tensor x, Tensor y) -> Tensor
debug: registered at @def_xy_2:1
alias analysis kind: FROM_SCHEMA
""",
    "def_conservative": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_conservative:1
alias analysis kind: CONSERVATIVE
""",
    "def_cia": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "CPU": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
""",
    "XLA": """\
name: test::foo
schema: (none)
XLA: registered at @XLA:1 :: (none) [ boxed ]
""",
    "Lazy": """\
name: test::foo
schema: (none)
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
""",
    "QuantizedCPU": """\
name: test::foo
schema: (none)
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
""",
    "AutogradCPU": """\
name: test::foo
schema: (none)
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "Autograd": """\
name: test::foo
schema: (none)
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "CIA": """\
name: test::foo
schema: (none)
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CIA_2": """\
name: test::foo
schema: (none)
CompositeImplicitAutograd[alias]: registered at @CIA_2:1 :: (none) [ boxed ]
""",
    "CEA": """\
name: test::foo
schema: (none)
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "CPU_ft": """\
name: test::foo
schema: (none)
CPU: registered at @CPU_ft:1 :: (none) [ fallthrough boxed ]
""",
    "AutogradCPU_ft": """\
name: test::foo
schema: (none)
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
""",
    "Autograd_ft": """\
name: test::foo
schema: (none)
Autograd[alias]: registered at @Autograd_ft:1 :: (none) [ fallthrough boxed ]
""",
    "def + CPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
""",
    "def + Lazy": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
""",
    "def + QuantizedCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
""",
    "def + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "def + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "def + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU_ft:1 :: (none) [ fallthrough boxed ]
""",
    "def + AutogradCPU_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
""",
    "def + Autograd_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Autograd[alias]: registered at @Autograd_ft:1 :: (none) [ fallthrough boxed ]
""",
    "def_cia + CPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + XLA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
XLA: registered at @XLA:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "CPU + XLA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
""",
    "CPU + Lazy": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
""",
    "CPU + QuantizedCPU": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
""",
    "CPU + AutogradCPU": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "CPU + Autograd": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "CPU + CIA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CPU + CEA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "CPU + AutogradCPU_ft": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
""",
    "XLA + AutogradCPU": """\
name: test::foo
schema: (none)
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "XLA + Autograd": """\
name: test::foo
schema: (none)
XLA: registered at @XLA:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "Lazy + AutogradCPU": """\
name: test::foo
schema: (none)
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "Lazy + CIA": """\
name: test::foo
schema: (none)
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "Lazy + CEA": """\
name: test::foo
schema: (none)
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "QuantizedCPU + CIA": """\
name: test::foo
schema: (none)
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "AutogradCPU + Autograd": """\
name: test::foo
schema: (none)
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "AutogradCPU + CIA": """\
name: test::foo
schema: (none)
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "AutogradCPU + CEA": """\
name: test::foo
schema: (none)
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "Autograd + CIA": """\
name: test::foo
schema: (none)
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "Autograd + CEA": """\
name: test::foo
schema: (none)
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "Autograd + AutogradCPU_ft": """\
name: test::foo
schema: (none)
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "CIA + CIA_2": """\
name: test::foo
schema: (none)
CompositeImplicitAutograd[alias]: registered at @CIA_2:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias] (inactive): registered at @CIA:1 :: (none) [ boxed ]
""",
    "CIA + CEA": """\
name: test::foo
schema: (none)
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "CIA + CPU_ft": """\
name: test::foo
schema: (none)
CPU: registered at @CPU_ft:1 :: (none) [ fallthrough boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CIA + Autograd_ft": """\
name: test::foo
schema: (none)
Autograd[alias]: registered at @Autograd_ft:1 :: (none) [ fallthrough boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + Lazy": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
""",
    "def + CPU + QuantizedCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
""",
    "def + CPU + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "def + CPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "def + CPU + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU + AutogradCPU_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
""",
    "def + Lazy + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "def + Lazy + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + Lazy + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + QuantizedCPU + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + AutogradCPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "def + AutogradCPU + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + AutogradCPU + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + Autograd + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + Autograd + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + Autograd + AutogradCPU_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "def + CIA + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CIA + CPU_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU_ft:1 :: (none) [ fallthrough boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CIA + Autograd_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Autograd[alias]: registered at @Autograd_ft:1 :: (none) [ fallthrough boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def_cia + CPU + XLA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + CPU + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + CPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + XLA + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + XLA + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
XLA: registered at @XLA:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + AutogradCPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "CPU + XLA + AutogradCPU": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "CPU + XLA + Autograd": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "CPU + Lazy + AutogradCPU": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "CPU + Lazy + CIA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CPU + Lazy + CEA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "CPU + QuantizedCPU + CIA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CPU + AutogradCPU + Autograd": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "CPU + AutogradCPU + CIA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CPU + AutogradCPU + CEA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "CPU + Autograd + CIA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CPU + Autograd + CEA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "CPU + Autograd + AutogradCPU_ft": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "CPU + CIA + CEA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "XLA + AutogradCPU + Autograd": """\
name: test::foo
schema: (none)
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "Lazy + AutogradCPU + CIA": """\
name: test::foo
schema: (none)
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "Lazy + AutogradCPU + CEA": """\
name: test::foo
schema: (none)
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "AutogradCPU + Autograd + CIA": """\
name: test::foo
schema: (none)
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "Autograd + CIA + CEA": """\
name: test::foo
schema: (none)
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU + Lazy + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
""",
    "def + CPU + Lazy + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + Lazy + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU + QuantizedCPU + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
QuantizedCPU: registered at @QuantizedCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + AutogradCPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "def + CPU + AutogradCPU + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + AutogradCPU + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU + Autograd + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + Autograd + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU + Autograd + AutogradCPU_ft": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU_ft:1 :: (none) [ fallthrough boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "def + CPU + CIA + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + Lazy + AutogradCPU + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + Lazy + AutogradCPU + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + AutogradCPU + Autograd + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + Autograd + CIA + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def_cia + CPU + XLA + AutogradCPU": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + CPU + XLA + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + CPU + AutogradCPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "def_cia + XLA + AutogradCPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
    "CPU + XLA + AutogradCPU + Autograd": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
""",
    "CPU + Lazy + AutogradCPU + CIA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CPU + Lazy + AutogradCPU + CEA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "CPU + AutogradCPU + Autograd + CIA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "CPU + Autograd + CIA + CEA": """\
name: test::foo
schema: (none)
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU + Lazy + AutogradCPU + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + Lazy + AutogradCPU + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Lazy: registered at @Lazy:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def + CPU + AutogradCPU + Autograd + CIA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
""",
    "def + CPU + Autograd + CIA + CEA": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @CIA:1 :: (none) [ boxed ]
CompositeExplicitAutograd[alias]: registered at @CEA:1 :: (none) [ boxed ]
""",
    "def_cia + CPU + XLA + AutogradCPU + Autograd": """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at @def_cia:1
alias analysis kind: FROM_SCHEMA
CPU: registered at @CPU:1 :: (none) [ boxed ]
XLA: registered at @XLA:1 :: (none) [ boxed ]
AutogradCPU: registered at @AutogradCPU:1 :: (none) [ boxed ]
Autograd[alias]: registered at @Autograd:1 :: (none) [ boxed ]
CompositeImplicitAutograd[alias]: registered at @def_cia:1 :: (none) [ boxed ]
""",
}
TABLES: dict[str, dict[str, str]] = {
    "def": {},
    "def_xy": {},
    "def_xy_2": {},
    "def_conservative": {},
    "def_cia": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "CPU": {
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "XLA": {
        "registered at @XLA:1 [kernel]": "XLA",
    },
    "Lazy": {
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "QuantizedCPU": {
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
    },
    "AutogradCPU": {
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "Autograd": {
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "CIA_2": {
        "registered at @CIA_2:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
    },
    "CPU_ft": {
        "fallthrough registered at @CPU_ft:1 [kernel]": "CPU",
    },
    "AutogradCPU_ft": {
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "Autograd_ft": {
        "fallthrough registered at @Autograd_ft:1 [autograd kernel]": "*Autograd",
    },
    "def + CPU": {
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "def + Lazy": {
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "def + QuantizedCPU": {
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
    },
    "def + AutogradCPU": {
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + Autograd": {
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "def + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
    },
    "def + CPU_ft": {
        "fallthrough registered at @CPU_ft:1 [kernel]": "CPU",
    },
    "def + AutogradCPU_ft": {
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "def + Autograd_ft": {
        "fallthrough registered at @Autograd_ft:1 [autograd kernel]": "*Autograd",
    },
    "def_cia + CPU": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "def_cia + XLA": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -XLA -AutogradXLA",
        "registered at @XLA:1 [kernel]": "XLA",
    },
    "def_cia + AutogradCPU": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def_cia + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "CPU + XLA": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
    },
    "CPU + Lazy": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "CPU + QuantizedCPU": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
    },
    "CPU + AutogradCPU": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + Autograd": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "CPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "CPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "CPU + AutogradCPU_ft": {
        "registered at @CPU:1 [kernel]": "CPU",
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "XLA + AutogradCPU": {
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "XLA + Autograd": {
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "Lazy + AutogradCPU": {
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "Lazy + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -Lazy -AutogradLazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "Lazy + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -Lazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "QuantizedCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -QuantizedCPU -AutogradOther",
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
        "ambiguous_autogradother [ambiguous autogradother]": "AutogradOther",
    },
    "AutogradCPU + Autograd": {
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "Autograd + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "Autograd + AutogradCPU_ft": {
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "CIA + CIA_2": {
        "registered at @CIA_2:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
    },
    "CIA + CPU_ft": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "fallthrough registered at @CPU_ft:1 [kernel]": "CPU",
    },
    "CIA + Autograd_ft": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "def + CPU + Lazy": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "def + CPU + QuantizedCPU": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
    },
    "def + CPU + AutogradCPU": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + Autograd": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def + CPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "def + CPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "def + CPU + AutogradCPU_ft": {
        "registered at @CPU:1 [kernel]": "CPU",
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "def + Lazy + AutogradCPU": {
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + Lazy + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -Lazy -AutogradLazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "def + Lazy + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -Lazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "def + QuantizedCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -QuantizedCPU -AutogradOther",
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
        "ambiguous_autogradother [ambiguous autogradother]": "AutogradOther",
    },
    "def + AutogradCPU + Autograd": {
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "def + Autograd + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def + Autograd + AutogradCPU_ft": {
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "def + CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
    },
    "def + CIA + CPU_ft": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "fallthrough registered at @CPU_ft:1 [kernel]": "CPU",
    },
    "def + CIA + Autograd_ft": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd",
    },
    "def_cia + CPU + XLA": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -XLA -AutogradCPU -AutogradXLA",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
    },
    "def_cia + CPU + AutogradCPU": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def_cia + CPU + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "AutogradCPU",
    },
    "def_cia + XLA + AutogradCPU": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -XLA -AutogradCPU -AutogradXLA",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def_cia + XLA + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -XLA -AutogradXLA",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @Autograd:1 [autograd kernel]": "AutogradXLA",
    },
    "def_cia + AutogradCPU + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + XLA + AutogradCPU": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + XLA + Autograd": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "CPU + Lazy + AutogradCPU": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + Lazy + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -Lazy -AutogradCPU -AutogradLazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "CPU + Lazy + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU -Lazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "CPU + QuantizedCPU + CIA": {
        "registered at @CIA:1 [math kernel]":
            "*CompositeImplicitAutograd -CPU -QuantizedCPU -AutogradOther -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
        "ambiguous_autogradother [ambiguous autogradother]": "AutogradOther",
    },
    "CPU + AutogradCPU + Autograd": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "AutogradCPU",
    },
    "CPU + Autograd + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "CPU + Autograd + AutogradCPU_ft": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "CPU + CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "XLA + AutogradCPU + Autograd": {
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "Lazy + AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -Lazy -AutogradCPU -AutogradLazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "Lazy + AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -Lazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "AutogradCPU + Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "Autograd + CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def + CPU + Lazy + AutogradCPU": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + Lazy + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -Lazy -AutogradCPU -AutogradLazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "def + CPU + Lazy + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU -Lazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
    },
    "def + CPU + QuantizedCPU + CIA": {
        "registered at @CIA:1 [math kernel]":
            "*CompositeImplicitAutograd -CPU -QuantizedCPU -AutogradOther -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @QuantizedCPU:1 [kernel]": "QuantizedCPU",
        "ambiguous_autogradother [ambiguous autogradother]": "AutogradOther",
    },
    "def + CPU + AutogradCPU + Autograd": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "AutogradCPU",
    },
    "def + CPU + Autograd + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def + CPU + Autograd + AutogradCPU_ft": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "fallthrough registered at @AutogradCPU_ft:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
    },
    "def + Lazy + AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -Lazy -AutogradCPU -AutogradLazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + Lazy + AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -Lazy",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + AutogradCPU + Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + Autograd + CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def_cia + CPU + XLA + AutogradCPU": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -XLA -AutogradCPU -AutogradXLA",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def_cia + CPU + XLA + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -XLA -AutogradCPU -AutogradXLA",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @Autograd:1 [autograd kernel]": "AutogradCPU AutogradXLA",
    },
    "def_cia + CPU + AutogradCPU + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def_cia + XLA + AutogradCPU + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -XLA -AutogradCPU -AutogradXLA",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
        "registered at @Autograd:1 [autograd kernel]": "AutogradXLA",
    },
    "CPU + XLA + AutogradCPU + Autograd": {
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd -AutogradCPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + Lazy + AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -Lazy -AutogradCPU -AutogradLazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + Lazy + AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU -Lazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + AutogradCPU + Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "CPU + Autograd + CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def + CPU + Lazy + AutogradCPU + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -Lazy -AutogradCPU -AutogradLazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + Lazy + AutogradCPU + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU -Lazy",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Lazy:1 [kernel]": "Lazy",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + AutogradCPU + Autograd + CIA": {
        "registered at @CIA:1 [math kernel]": "*CompositeImplicitAutograd -CPU -AutogradCPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
    },
    "def + CPU + Autograd + CIA + CEA": {
        "registered at @CEA:1 [default backend kernel]": "*CompositeExplicitAutograd -CPU",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @Autograd:1 [autograd kernel]": "*Autograd",
    },
    "def_cia + CPU + XLA + AutogradCPU + Autograd": {
        "registered at @def_cia:1 [math kernel]": "*CompositeImplicitAutograd -CPU -XLA -AutogradCPU -AutogradXLA",
        "registered at @CPU:1 [kernel]": "CPU",
        "registered at @XLA:1 [kernel]": "XLA",
        "registered at @AutogradCPU:1 [kernel]": "AutogradCPU",
        "registered at @Autograd:1 [autograd kernel]": "AutogradXLA",
    },
}
ERRORS: dict[str, str] = {
    'def_xy_2 after def_xy': (
        'Tried to register an operator (test::foo(Tensor x, Tensor y) -> Tensor) with the same name and '
        "overload name multiple times. Each overload's schema should only be registered with a single "
        'call to def(). Duplicate registration: registered at @def_xy_2:1. Original registration: '
        'registered at @def_xy:1'
    ),
    'def_xy after def_xy_2': (
        'Tried to register an operator (test::foo(Tensor x, Tensor y) -> Tensor) with the same name and '
        "overload name multiple times. Each overload's schema should only be registered with a single "
        'call to def(). Duplicate registration: registered at @def_xy:1. Original registration: '
        'registered at @def_xy_2:1'
    ),
    'def_conservative after def': (
        'Tried to register an operator (test::foo(Tensor x) -> Tensor) with the same name and overload '
        "name multiple times. Each overload's schema should only be registered with a single call to "
        'def(). Duplicate registration: registered at @def_conservative:1. Original registration: '
        'registered at @def:1'
    ),
    'def after def_conservative': (
        'Tried to register an operator (test::foo(Tensor x) -> Tensor) with the same name and overload '
        "name multiple times. Each overload's schema should only be registered with a single call to "
        'def(). Duplicate registration: registered at @def:1. Original registration: registered at '
        '@def_conservative:1'
    ),
}
