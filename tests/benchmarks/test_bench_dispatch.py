"""pytest-benchmark cases for the dispatcher goals of docs/performance.md (G15, G17, G18) + registration.

Groups are named after the goal ids. Every case first checks that the path it times is the one
it claims (which key the call dispatches to, what the kernel returned, what a guard changed),
so a broken path fails instead of being benchmarked. The default run (``--benchmark-disable``)
executes each case once, untimed; ``--benchmark-enable`` times them. The same-process
comparison with torch and the must/target verdicts are in ``bench/compare.py``; torch anchor
cases here are skipped when torch is missing.

The autograd goals (G10-G14, G16, G20) are in test_bench_autograd.py.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc
from dispatchcore.tls import tls_get

G15 = "G15 kernel overhead"
G17 = "G17 grad-mode guards"
G18 = "G18 dispatch-key guards"
REG = "registration: table rebuild (no goal)"

R = object()  # what every no-op kernel returns


def nop1(a):
    return R


def nop2(a, b):
    return R


def nopks(ks, a):
    return ks


def route(op, *args) -> str:
    """Name of the key a call with ``args`` dispatches to first, under the current TLS."""
    included, _, keep = tls_get()
    bits = included
    for a in args:
        bits |= a._key_bits
    return op.key_for(bits & keep).name


@pytest.fixture
def ops(lib, ns, carrier):
    """No-op kernels at CPU for a 1-arg, a 2-arg and a with_keyset op in a fresh namespace."""
    lib.define("nop1(Tensor a) -> Tensor")
    lib.define("nop2(Tensor a, Tensor b) -> Tensor")
    lib.define("nopks(Tensor a) -> Tensor")
    lib.impl("nop1", nop1, "CPU")
    lib.impl("nop2", nop2, "CPU")
    lib.impl("nopks", nopks, "CPU", with_keyset=True)
    namespace = getattr(dc.ops, ns)
    c = carrier("CPU")
    return {
        "1arg": (namespace.nop1.default, nop1, (c,)),
        "2arg": (namespace.nop2.default, nop2, (c, c)),
        "keyset": (namespace.nopks.default, nopks, (c,)),
    }


KS_CPU = dc.DispatchKeySet(dc.DispatchKey.CPU)


def _expected(which: str):
    return KS_CPU if which == "keyset" else R


def _direct_args(which: str, args: tuple) -> tuple:
    return (KS_CPU, *args) if which == "keyset" else args


# --- G15: a Python kernel called through the dispatcher vs directly -------------------------
@pytest.mark.parametrize("which", ["1arg", "2arg", "keyset"])
def test_g15_dispatch_default_path(benchmark, ops, which):
    """No autograd kernel: AutogradCPU (built-in fallback) -> redispatch -> CPU, as torch.library."""
    benchmark.group = G15
    op, _, args = ops[which]
    assert route(op, *args) == "AutogradCPU"
    assert op.table_entry("AutogradCPU")[1] == "backend fallback"
    assert benchmark(op, *args) == _expected(which)


@pytest.mark.parametrize("which", ["1arg", "2arg", "keyset"])
def test_g15_dispatch_below_autograd(benchmark, ops, which):
    """Autograd excluded (inside AutoDispatchBelowAutograd): one hop, straight to CPU."""
    benchmark.group = G15
    op, _, args = ops[which]
    with dc.AutoDispatchBelowAutograd():
        assert route(op, *args) == "CPU"
        assert benchmark(op, *args) == _expected(which)


@pytest.mark.parametrize("which", ["1arg", "2arg", "keyset"])
def test_g15_direct_call(benchmark, ops, which):
    """The baseline: the same kernel function called directly."""
    benchmark.group = G15
    _, fn, args = ops[which]
    assert benchmark(fn, *_direct_args(which, args)) == _expected(which)


@pytest.fixture(scope="module")
def torch_ops():
    """The same no-op kernels registered through torch.library (the G15 anchor); one thread."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    lib = torch.library.Library("dc_bench_anchor", "DEF")
    lib.define("nop1(Tensor a) -> Tensor")
    lib.define("nop2(Tensor a, Tensor b) -> Tensor")
    out = torch.zeros(10)

    def t_nop1(a):
        return out

    def t_nop2(a, b):
        return out

    lib.impl("nop1", t_nop1, "CPU")
    lib.impl("nop2", t_nop2, "CPU")
    a = torch.randn(10)
    yield {
        "torch": torch, "out": out,
        "1arg": (torch.ops.dc_bench_anchor.nop1.default, t_nop1, (a,)),
        "2arg": (torch.ops.dc_bench_anchor.nop2.default, t_nop2, (a, a)),
    }
    lib._destroy()
    torch.set_num_threads(threads)


@pytest.mark.parametrize("which", ["1arg", "2arg"])
@pytest.mark.parametrize("path", ["dispatch", "direct"])
def test_g15_torch_anchor(benchmark, torch_ops, which, path):
    """torch.library op with a Python CPU kernel (through AutogradCPU's fallback) vs direct call."""
    benchmark.group = G15
    op, fn, args = torch_ops[which]
    assert benchmark(op if path == "dispatch" else fn, *args) is torch_ops["out"]


# --- G18: dispatch-key guards, constructed each time, enter+exit -----------------------------
_KS_AUTOGRAD_CPU = dc.DispatchKeySet(dc.DispatchKey.AutogradCPU)
_FORCE_EXCLUDE = dc.tls_local_exclude_set() | _KS_AUTOGRAD_CPU
_FORCE_INCLUDE = dc.tls_local_include_set()


def below_autograd():
    with dc.AutoDispatchBelowAutograd():
        pass


def below_adinplaceorview():
    with dc.AutoDispatchBelowADInplaceOrView():
        pass


def exclude_guard(ks=_KS_AUTOGRAD_CPU):
    with dc.ExcludeDispatchKeyGuard(ks):
        pass


def include_guard(key=dc.DispatchKey.CPU):
    with dc.IncludeDispatchKeyGuard(key):
        pass


def force_guard(include=_FORCE_INCLUDE, exclude=_FORCE_EXCLUDE):
    with dc.ForceDispatchKeyGuard(include, exclude):
        pass


GUARDS = {
    # name: (timed function: construct + enter + exit, the guard class, its arguments)
    "AutoDispatchBelowAutograd": (below_autograd, dc.AutoDispatchBelowAutograd, ()),
    "AutoDispatchBelowADInplaceOrView": (below_adinplaceorview, dc.AutoDispatchBelowADInplaceOrView, ()),
    "ExcludeDispatchKeyGuard": (exclude_guard, dc.ExcludeDispatchKeyGuard, (_KS_AUTOGRAD_CPU,)),
    "IncludeDispatchKeyGuard": (include_guard, dc.IncludeDispatchKeyGuard, (dc.DispatchKey.CPU,)),
    "ForceDispatchKeyGuard": (force_guard, dc.ForceDispatchKeyGuard, (_FORCE_INCLUDE, _FORCE_EXCLUDE)),
}


@pytest.mark.parametrize("name", list(GUARDS))
def test_g18_guard_enter_exit(benchmark, ops, carrier, name):
    benchmark.group = G18
    timed, guard, args = GUARDS[name]
    op = ops["1arg"][0]
    c = carrier("CPU")
    keyless = carrier(dc.DispatchKeySet())
    before = tls_get()
    with guard(*args):
        if name == "IncludeDispatchKeyGuard":
            assert route(op, keyless) == "CPU"  # the included CPU key alone selects the kernel
        else:
            assert route(op, c) == "CPU"  # autograd excluded: straight to the kernel
        if name == "AutoDispatchBelowADInplaceOrView":
            assert dc.tls_is_dispatch_key_excluded("ADInplaceOrView")
    assert tls_get() == before
    assert route(op, c) == "AutogradCPU" and route(op, keyless) == "Undefined"
    assert benchmark(timed) is None
    assert tls_get() == before


@pytest.fixture(scope="module")
def torch_guards():
    torch = pytest.importorskip("torch")
    C = torch._C
    ks = C.DispatchKeySet(C.DispatchKey.AutogradCPU)
    inc, exc = C._dispatch_tls_local_include_set(), C._dispatch_tls_local_exclude_set() | ks

    def t_below_autograd():
        with C._AutoDispatchBelowAutograd():
            pass

    def t_below_adinplaceorview():
        with C._AutoDispatchBelowADInplaceOrView():
            pass

    def t_exclude_guard(ks=ks):
        with C._ExcludeDispatchKeyGuard(ks):
            pass

    def t_include_guard(key=C.DispatchKey.CPU):
        with C._IncludeDispatchKeyGuard(key):
            pass

    def t_force_guard(include=inc, exclude=exc):
        with C._ForceDispatchKeyGuard(include, exclude):
            pass

    return {
        "C": C,
        "AutoDispatchBelowAutograd": t_below_autograd,
        "AutoDispatchBelowADInplaceOrView": t_below_adinplaceorview,
        "ExcludeDispatchKeyGuard": t_exclude_guard,
        "IncludeDispatchKeyGuard": t_include_guard,
        "ForceDispatchKeyGuard": t_force_guard,
    }


@pytest.mark.parametrize("name", list(GUARDS))
def test_g18_torch_anchor(benchmark, torch_guards, name):
    benchmark.group = G18
    C = torch_guards["C"]
    before = (C._dispatch_tls_local_include_set(), C._dispatch_tls_local_exclude_set())
    assert benchmark(torch_guards[name]) is None
    assert (C._dispatch_tls_local_include_set(), C._dispatch_tls_local_exclude_set()) == before


# --- G17: grad-mode guards, constructed each time, enter+exit --------------------------------
def no_grad_guard():
    with dc.no_grad():
        pass


def inference_mode_guard():
    with dc.inference_mode():
        pass


@pytest.mark.parametrize("name", ["no_grad", "inference_mode"])
def test_g17_grad_mode_guard(benchmark, name):
    benchmark.group = G17
    before = tls_get()
    if name == "no_grad":
        with dc.no_grad():
            assert not dc.is_grad_enabled()
            assert tls_get() == before  # grad mode is not a dispatch key (c10/core/GradMode.h)
        timed = no_grad_guard
    else:
        with dc.inference_mode():
            assert dc.is_inference_mode_enabled() and not dc.is_grad_enabled()
            assert dc.tls_is_dispatch_key_excluded("AutogradFunctionality")
            assert not dc.tls_is_dispatch_key_included("ADInplaceOrView")
        timed = inference_mode_guard
    assert benchmark(timed) is None
    assert tls_get() == before
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()


@pytest.mark.parametrize("name", ["no_grad", "inference_mode"])
def test_g17_torch_anchor(benchmark, name):
    torch = pytest.importorskip("torch")
    benchmark.group = G17
    guard = torch.no_grad if name == "no_grad" else torch.inference_mode

    def timed():
        with guard():
            pass

    assert benchmark(timed) is None
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


# --- registration: what one impl + remove costs (each rebuilds the affected table slots) ----
@pytest.mark.parametrize("key", ["CPU", "AutogradCPU", "CompositeImplicitAutograd"])
def test_registration_impl_and_remove(benchmark, lib, ns, carrier, key):
    benchmark.group = REG
    lib.define("reg(Tensor a) -> Tensor")
    op = getattr(dc.ops, ns).reg.default
    c = carrier("CPU")
    handle = lib.impl("reg", nop1, key)
    assert op(c) is R  # the new kernel is reachable from a CPU call
    handle.remove()
    assert op.table_entry("CPU")[1] == "missing" and op.registrations == {}

    def impl_and_remove():
        lib.impl("reg", nop1, key).remove()

    benchmark(impl_and_remove)
    assert op.table_entry("CPU")[1] == "missing" and op.registrations == {}
    assert op.table_entry("AutogradCPU")[1] == "backend fallback"
