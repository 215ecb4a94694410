"""A third-party backend on PrivateUse1, built from the public API only.

Runs the documented example (docs/examples/privateuse1_device.py) and checks what it prints,
then registers a toy backend here: calls on its tensors reach its kernels, the computed tables
show them, and destroying its Library restores every table it changed.
"""

from __future__ import annotations

import itertools
import re
import runpy
import warnings
from pathlib import Path

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import DispatchKey, DispatchKeySet, Library
from dispatchcore.ops import aten

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "privateuse1_device.py"


def _lines(qualname: str, *keys: str) -> list[str]:
    return [ln for ln in dc.dump_table(qualname).splitlines() if ln.split(":")[0] in keys]


# --- the documented example ----------------------------------------------------------------------
def _section(out: str, title: str) -> list[str]:
    """The indented lines under ``title`` in the example's output."""
    body = out.split(f"  {title}:\n")[1]
    return [ln.strip() for ln in itertools.takewhile(lambda ln: ln.startswith("    "), body.splitlines())]


def test_example_trains_with_a_minimal_kernel_set_and_explains_itself(capsys):
    tables_before = {q: dc.dump_table(q) for q in ("aten::add.Tensor", "aten::add.out", "aten::as_strided")}
    namespace = runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    kernels = namespace["KERNELS"]
    assert ("device mydev: its tensors carry DispatchKeySet(PrivateUse1, ADInplaceOrView, "
            "AutogradPrivateUse1, AutocastPrivateUse1)\n") in out
    # every kernel the device wrote was asked for by a "Could not run" error, and no other
    needed = out.split("the loop asked for:\n  ")[1].split("\n")[0].split(", ")
    assert sorted(needed) == sorted(kernels) and len(needed) == 15
    assert "15 kernels, every one in KERNELS: True\n" in out

    assert _section(out, "[kernel] written by mydev") == sorted(f"aten::{name}" for name in kernels)
    ceanf = _section(out, "[default backend kernel] CompositeExplicitAutogradNonFunctional")
    assert "aten::add.Tensor -> aten::empty_strided, aten::add.out" in ceanf
    assert "aten::sub_.Tensor -> aten::sub.out" in ceanf
    assert "aten::mm -> aten::empty_strided, aten::mm.out" in ceanf
    cea = _section(out, "[default backend kernel] CompositeExplicitAutograd")
    assert "aten::t -> aten::as_strided" in cea  # mm's derivative transposes
    assert "aten::detach" in cea  # AccumulateGrad takes each unshared gradient over
    # data movement: copy_ hands a device it cannot reach to _copy_from; Tensor.to is empty_strided + copy_
    assert "aten::copy_ -> aten::_copy_from" in cea
    assert "aten::_to_copy -> aten::empty_strided, aten::copy_" in cea
    assert "aten::ones_like -> aten::empty_like, aten::fill_.Scalar" in cea  # backward's seed
    assert "aten::empty_like -> aten::empty_strided" in cea
    assert "aten::matmul -> aten::mm" in _section(out, "[math kernel] CompositeImplicitAutograd")

    assert ("  x.t()[1]: sizes [2], strides [3], offset 1, same storage as x: True, base is x: True\n"
            "  after x.t()[1].fill_(0): x = [[1.0, 0.0, 3.0], [4.0, 0.0, 6.0]]\n") in out
    on_mydev = re.search(r"^losses on mydev: (\[.*\])$", out, re.M)
    on_cpu = re.search(r"^losses on cpu: +(\[.*\])$", out, re.M)
    assert on_mydev and on_cpu and on_mydev.group(1) == on_cpu.group(1) and on_cpu.group(1).count(",") == 2
    assert "equal: True\n" in out
    assert out.endswith("tables restored: True\n")
    # the example cleaned up after itself
    assert {q: dc.dump_table(q) for q in tables_before} == tables_before
    for name in kernels:
        assert not dc.find_op(f"aten::{name}").has_kernel_for_dispatch_key("PrivateUse1"), name


def test_example_can_run_twice(capsys):
    """Renaming PrivateUse1 to the same name again is allowed, and the first run left no kernels."""
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert capsys.readouterr().out.count("tables restored: True") == 2


# --- a toy backend, registered here ----------------------------------------------------------------
class ToyData:
    """Backend data: numpy's array attributes over a private copy (Note [Backend data protocol])."""

    __slots__ = ("array", "shape", "strides", "dtype", "ndim", "storage_offset")

    def __init__(self, array: np.ndarray) -> None:
        self.array = np.array(array)  # a copy: "device memory"
        self.shape, self.strides = self.array.shape, self.array.strides
        self.dtype, self.ndim, self.storage_offset = self.array.dtype, self.array.ndim, 0


@pytest.fixture(scope="module")
def toy_device():
    """The device type ``toy`` on PrivateUse1 (next to whatever name PrivateUse1 was given)."""
    return dc.register_device("toy", "PrivateUse1")


def toy(values, dtype=np.float32):
    return dc.wrap(ToyData(np.asarray(values, dtype=dtype)), "toy")


def test_toy_tensors_carry_the_privateuse1_keys(toy_device):
    t = toy([1.0, 2.0])
    assert DispatchKeySet.from_raw(t._key_bits) == dc.tensor_keyset("PrivateUse1")
    assert t.device == toy_device and t.shape == dc.Size([2]) and t.dtype == dc.float32


def test_dispatch_reaches_toy_kernels_and_destroy_restores_tables(toy_device):
    calls = []

    def add_toy(self, other, *, alpha=1):
        calls.append(("add", self, other, alpha))
        return toy(self._data.array + alpha * other._data.array)

    def empty_toy(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        calls.append(("empty", tuple(size), device))
        return toy(np.zeros(size), (dtype or dc.get_default_dtype()).np)

    touched = ("aten::add.Tensor", "aten::empty.memory_format")
    before = {q: dc.dump_table(q) for q in touched}
    lib = Library("aten", "IMPL", dispatch_key="PrivateUse1")
    try:
        lib.impl("add.Tensor", add_toy)
        lib.impl("empty.memory_format", empty_toy)
        x = toy([1.0, 2.0, 3.0])
        y = aten.add.Tensor(x, x, alpha=2)
        assert calls[-1] == ("add", x, x, 2)
        assert y.device == toy_device and y._data.array.tolist() == [3.0, 6.0, 9.0]
        e = aten.empty.memory_format([2, 2], device=toy_device)  # BackendSelect -> PrivateUse1
        assert calls[-1] == ("empty", (2, 2), toy_device) and e.device == toy_device

        for q in touched:
            added = [ln for ln in dc.dump_table(q).splitlines() if ln not in before[q].splitlines()]
            assert len(added) == 1, added
            assert re.fullmatch(r"PrivateUse1: registered at .*test_third_party_backend\.py:\d+ \[kernel\]",
                                added[0])
            # the autograd entry is untouched: the toy backend registered no autograd kernel
            assert _lines(q, "AutogradPrivateUse1") == [
                ln for ln in before[q].splitlines() if ln.startswith("AutogradPrivateUse1:")]
    finally:
        lib._destroy()
    assert {q: dc.dump_table(q) for q in touched} == before


def test_privateuse1_outranks_cpu_in_mixed_calls(lib, ns, toy_device):
    lib.define("f(Tensor a, Tensor b) -> str")
    lib.impl("f", lambda a, b: "cpu", "CPU")
    lib.impl("f", lambda a, b: "toy", "PrivateUse1")
    cpu = dc.wrap(np.zeros(2, np.float32))
    f = getattr(dc.ops, ns).f
    assert f(cpu, cpu) == "cpu"
    assert f(cpu, toy([0.0])) == "toy"  # the highest backend bit wins (PrivateUse1Bit > CPUBit)
    assert f(toy([0.0]), toy([0.0])) == "toy"


def test_autograd_privateuse1_kernel_redispatches_below_autograd(lib, ns, toy_device):
    seen = []

    def autograd_toy(keyset, x):
        seen.append(keyset)
        below = keyset & DispatchKeySet.full_after(DispatchKey.AutogradPrivateUse1)
        return ("autograd", getattr(dc.ops, ns).f.default.redispatch(below, x))

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "toy kernel", "PrivateUse1")
    lib.impl("f", autograd_toy, "AutogradPrivateUse1", with_keyset=True)
    assert getattr(dc.ops, ns).f(toy([1.0])) == ("autograd", "toy kernel")
    assert seen == [DispatchKeySet(["PrivateUse1", "AutogradPrivateUse1"])]
    table = dc.dump_table(f"{ns}::f")
    assert re.search(r"^PrivateUse1: registered at .*\[kernel\]$", table, re.M)
    assert re.search(r"^AutogradPrivateUse1: registered at .*\[kernel\]$", table, re.M)
    with dc.AutoDispatchBelowAutograd():  # excluding autograd skips the device's autograd kernel
        assert getattr(dc.ops, ns).f(toy([1.0])) == "toy kernel"


def test_destroying_the_library_restores_the_previous_kernel(lib, ns, toy_device):
    """A second Library overriding the toy kernel, once destroyed, gives the first one back."""
    lib.define("f(Tensor x) -> str")
    lib.impl("f", lambda x: "first", "PrivateUse1")
    first_table = dc.dump_table(f"{ns}::f")
    override = Library(ns, "IMPL", dispatch_key="PrivateUse1")
    try:
        with warnings.catch_warnings():  # PyTorch warns once per process about overrides
            warnings.simplefilter("ignore", UserWarning)
            override.impl("f", lambda x: "second")
        assert getattr(dc.ops, ns).f(toy([1.0])) == "second"
        assert "(inactive)" in dc.dump_state(f"{ns}::f")
    finally:
        override._destroy()
    assert getattr(dc.ops, ns).f(toy([1.0])) == "first"
    assert dc.dump_table(f"{ns}::f") == first_table
