"""Registration order does not matter (torch test_dispatch.py ``commute()``), and undo restores.

For a set of registrations, every order of registering yields the same table, and removing them
one by one, in any order, passes through exactly the tables a fresh operator with the remaining
registrations has. Tables are compared by kernel identity and label, with the fallthrough masks,
``dump_table`` and ``dump_state`` (registration locations normalized). The ``define`` is one of
the registrations too: impls may come before it and outlive it (Note [Impl before def]).
"""

from __future__ import annotations

import itertools
import re

import pytest

import dispatchcore as dc
from dispatchcore.keys import RUNTIME_KEYS


def k_cpu(x):
    return "CPU"


def k_meta(x):
    return "Meta"


def k_sparse(x):
    return "SparseCPU"


def k_quantized(x):
    return "QuantizedCPU"


def k_mkldnn(x):
    return "MkldnnCPU"


def k_nested(x):
    return "NestedTensorCPU"


def k_autograd_cpu(x):
    return "AutogradCPU"


def k_autograd(x):
    return "Autograd"


def k_autograd_other(x):
    return "AutogradOther"


def k_autograd_nested(x):
    return "AutogradNestedTensor"


def k_cia(x):
    return "CIA"


def k_cea(x):
    return "CEA"


def k_ceanf(x):
    return "CEANF"


def k_cia_nested(x):
    return "CIANested"


def k_batched(x):
    return "Batched"


def fb_fake(op, *args):
    return "fallback Fake"


def fb_nested(op, *args):
    return "fallback AutogradNestedTensor"


FT = dc.fallthrough_kernel

# (what, key, kernel): what is "impl" (on the operator) or "fallback" (global)
SETS = {
    "cpu-cia-autograd-sparse": [("impl", "CPU", k_cpu), ("impl", "CompositeImplicitAutograd", k_cia),
                                ("impl", "Autograd", k_autograd), ("impl", "SparseCPU", k_sparse)],
    "cea-cia-nested": [("impl", "CompositeExplicitAutograd", k_cea),
                       ("impl", "CompositeImplicitAutograd", k_cia),
                       ("impl", "NestedTensorCPU", k_nested),
                       ("impl", "CompositeImplicitAutogradNestedTensor", k_cia_nested)],
    "fallthrough-autograd-ceanf": [("impl", "CPU", FT), ("impl", "AutogradCPU", k_autograd_cpu),
                                   ("impl", "Autograd", FT),
                                   ("impl", "CompositeExplicitAutogradNonFunctional", k_ceanf)],
    "autogradother-ambiguity": [("impl", "MkldnnCPU", k_mkldnn), ("impl", "CompositeImplicitAutograd", k_cia),
                                ("impl", "QuantizedCPU", k_quantized),
                                ("impl", "AutogradOther", k_autograd_other)],
    # no CompositeImplicitAutograd with Meta: torch.library refuses Meta after it (one order only;
    # see test_meta_after_composite_implicit_is_refused_but_not_before)
    "batched-cea-meta": [("impl", "FuncTorchBatchedDecomposition", k_batched),
                         ("impl", "Autograd", k_autograd),
                         ("impl", "CompositeExplicitAutograd", k_cea), ("impl", "Meta", k_meta)],
    "nested-autograd": [("impl", "AutogradNestedTensor", k_autograd_nested),
                        ("impl", "NestedTensorCPU", k_nested), ("impl", "CompositeImplicitAutograd", k_cia)],
    "fallbacks": [("fallback", "AutogradNestedTensor", fb_nested),
                  ("impl", "CompositeImplicitAutograd", k_cia),
                  ("fallback", "Fake", FT), ("impl", "NestedTensorCPU", k_nested)],
    "fallback-vs-kernel": [("fallback", "Fake", fb_fake), ("impl", "Fake", FT),
                           ("impl", "CompositeExplicitAutograd", k_cea)],
}


@pytest.fixture(autouse=True)
def _no_backend_discovery(monkeypatch):
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False, raising=False)


def _ident(reg):
    return getattr(reg, "kernel", reg)


def _normalize(text: str) -> str:
    return re.sub(r"registered at \S+:\d+", "registered at LOC", text)


def state(op: dc.OperatorHandle) -> tuple:
    table = {}
    for key in RUNTIME_KEYS:
        reg, label = op.table_entry(key)
        if reg is not None:
            table[key] = (_ident(reg), label)
    dump_state = _normalize(op.dump_state()).split("alias analysis kind: FROM_SCHEMA\n", 1)[1]
    return table, tuple(op._dispatch[0]), _normalize(op.dump_table()), dump_state


class Registrar:
    """Applies registrations to ``ns::f`` (one DEF library at a time) and to the global namespace."""

    def __init__(self, ns: str) -> None:
        self.ns = ns
        self.lib: dc.Library | None = None
        self.global_lib: dc.Library | None = None

    def fresh(self) -> dc.OperatorHandle:
        self.close()
        self.lib = dc.Library(self.ns, "DEF")
        self.lib.define("f(Tensor x) -> Tensor")
        self.global_lib = dc.Library("_", "IMPL")
        return dc.find_op(f"{self.ns}::f")

    def apply(self, item, *, fallbacks: bool = True):
        what, key, kernel = item
        if what == "fallback":
            return self.global_lib.fallback(kernel, key) if fallbacks else None
        return self.lib.impl("f", kernel, key)

    def close(self) -> None:
        for library in (self.lib, self.global_lib):
            if library is not None:
                library._destroy()
        self.lib = self.global_lib = None


@pytest.fixture
def registrar(ns):
    r = Registrar(ns)
    yield r
    r.close()


@pytest.fixture
def scratch():
    r = Registrar(f"scratch_{id(object())}")
    yield r
    r.close()


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_registration_order_gives_the_same_table(registrar, name):
    items = SETS[name]
    states = []
    for order in itertools.permutations(items):
        op = registrar.fresh()
        for item in order:
            registrar.apply(item)
        states.append(state(op))
    registrar.close()
    assert all(s == states[0] for s in states)


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_removal_order_passes_through_from_scratch_tables(registrar, scratch, name):
    items = SETS[name]
    for order in itertools.permutations(range(len(items))):
        op = registrar.fresh()
        handles = [registrar.apply(item) for item in items]
        remaining = list(range(len(items)))
        for index in order:
            handles[index].remove()
            remaining.remove(index)
            # the operator-level registrations again, on a fresh operator; the global fallbacks
            # still registered are shared, so the scratch op sees exactly the remaining state
            fresh = scratch.fresh()
            for i in remaining:
                scratch.apply(items[i], fallbacks=False)
            assert state(op) == state(fresh), (order, index)
        assert state(op) == state(scratch.fresh())  # nothing left
        registrar.close()


def test_destroying_stacked_override_libraries_in_any_order_restores_tables(ns, scratch):
    dispatcher = dc.get_dispatcher()
    warned, dispatcher._warned_override = dispatcher._warned_override, True
    kernels = [(k_cpu, k_cia), (k_meta, k_cea), (k_sparse, k_autograd)]
    try:
        for order in itertools.permutations(range(3)):
            with dc.Library(ns, "DEF") as lib:
                lib.define("f(Tensor x) -> Tensor")
                op = dc.find_op(f"{ns}::f")
                libs = []
                for cpu_kernel, alias_kernel in kernels:
                    extra = dc.Library(ns, "IMPL")
                    extra.impl("f", cpu_kernel, "CPU")
                    extra.impl("f", alias_kernel, "CompositeImplicitAutograd")
                    libs.append(extra)
                alive = [0, 1, 2]
                for index in order:
                    libs[index]._destroy()
                    alive.remove(index)
                    fresh = scratch.fresh()
                    for i in alive:  # oldest first, as they were registered
                        scratch.lib.impl("f", kernels[i][0], "CPU")
                        scratch.lib.impl("f", kernels[i][1], "CompositeImplicitAutograd")
                    assert state(op) == state(fresh), (order, index)
                    if alive:
                        assert op.table_entry("CPU")[0].kernel is kernels[alive[-1]][0]
                assert op.registrations == {}
    finally:
        dispatcher._warned_override = warned


def test_override_three_times_then_destroy_newest(ns, carrier):
    dispatcher = dc.get_dispatcher()
    warned, dispatcher._warned_override = dispatcher._warned_override, True
    try:
        with dc.Library(ns, "DEF") as lib:
            lib.define("f(Tensor x) -> Tensor")
            op = dc.find_op(f"{ns}::f")
            libs = [dc.Library(ns, "IMPL") for _ in range(3)]
            for i, extra in enumerate(libs):
                extra.impl("f", lambda x, i=i: i, "CPU")
            assert op(carrier()) == 2
            assert dc.dump_state(op).count("CPU (inactive)") == 2
            libs[2]._destroy()
            assert op(carrier()) == 1
            assert dc.dump_state(op).count("CPU (inactive)") == 1
            libs[1]._destroy()
            libs[0]._destroy()
            assert op.table_entry("CPU") == (None, "missing")
    finally:
        dispatcher._warned_override = warned


def test_meta_after_composite_implicit_is_refused_but_not_before(ns):
    """torch.library checks at the Meta impl only, so this pair does not commute."""
    with dc.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("f", k_meta, "Meta")
        lib.impl("f", k_cia, "CompositeImplicitAutograd")
        lib.impl("g", k_cia, "CompositeImplicitAutograd")
        with pytest.raises(dc.RegistrationError, match=r"^We should not register a meta kernel directly to "
                                                       r"the operator 'g', because it has a "
                                                       r"CompositeImplicitAutograd kernel in core\."):
            lib.impl("g", k_meta, "Meta")
        assert list(dc.find_op(f"{ns}::f").registrations) == [dc.DispatchKey.Meta,
                                                               dc.DispatchKey.CompositeImplicitAutograd]
        assert list(dc.find_op(f"{ns}::g").registrations) == [dc.DispatchKey.CompositeImplicitAutograd]


# --- the define among the registrations (Note [Impl before def]) --------------------------------
WITH_DEF = [("def", "", None), ("impl", "CPU", k_cpu), ("impl", "Autograd", k_autograd),
            ("impl", "CompositeImplicitAutograd", k_cia)]


def _apply_alone(ns: str, item) -> dc.Library:
    """One registration in a Library of its own, so that any of them can be destroyed first."""
    what, key, kernel = item
    lib = dc.Library(ns, "FRAGMENT")
    if what == "def":
        lib.define("f(Tensor x) -> Tensor")
    else:
        lib.impl("f", kernel, key)
    return lib


def _dumps(ns: str) -> tuple[str, str]:
    name = f"{ns}::f"
    return (_normalize(dc.dump_state(name)).replace(ns, "NS"), _normalize(dc.dump_table(name)).replace(ns, "NS"))


_scratch_dumps: dict[frozenset[int], tuple[str, str]] = {}


def _from_scratch(remaining: frozenset[int]) -> tuple[str, str]:
    """The dumps of a fresh operator given just these registrations, oldest first."""
    if remaining not in _scratch_dumps:
        ns = f"scratchdef_{len(_scratch_dumps)}_{id(object())}"
        libs = [_apply_alone(ns, WITH_DEF[i]) for i in sorted(remaining)]
        _scratch_dumps[remaining] = _dumps(ns)
        for lib in reversed(libs):
            lib._destroy()
        assert _dumps(ns) == ("", "")
    return _scratch_dumps[remaining]


@pytest.mark.parametrize("order", list(itertools.permutations(range(len(WITH_DEF)))),
                         ids=lambda order: "-".join(WITH_DEF[i][1] or "def" for i in order))
def test_define_and_impls_commute_and_destroying_them_in_any_order_restores(ns, order):
    """Every order of def and impls gives the same dumps; removing them first-in-first-out or
    last-in-first-out passes through the dumps of a fresh operator with what remains."""
    for removal in (order, order[::-1]):
        libs = {i: _apply_alone(ns, WITH_DEF[i]) for i in order}
        assert _dumps(ns) == _from_scratch(frozenset(range(len(WITH_DEF)))), order
        remaining = set(order)
        for index in removal:
            libs[index]._destroy()
            remaining.discard(index)
            assert _dumps(ns) == _from_scratch(frozenset(remaining)), (order, removal, index)
        assert _dumps(ns) == ("", "")
