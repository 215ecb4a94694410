"""A third-party device in ~150 lines: ``mydev`` on the PrivateUse1 dispatch key.

PyTorch reserves the PrivateUse1 backend for out-of-tree devices: name it with
``torch.utils.rename_privateuse1_backend("mydev")``, register kernels with
``torch.library.Library("aten", "IMPL")`` for the ``PrivateUse1`` key (and, if the device
wants its own autograd behaviour, ``AutogradPrivateUse1``), and tensors on ``device("mydev")``
dispatch to them. This script does the same with dispatchcore, through its public API only:

1. name the device and give its tensors a data class of their own ("device memory");
2. register kernels for ``empty.memory_format``, ``copy_``, ``_to_copy``, ``add.Tensor``,
   ``mul.Tensor`` and ``sum`` at PrivateUse1, and an AutogradPrivateUse1 kernel for ``add``
   that redispatches below autograd, as generated VariableType kernels do;
3. run a small program on the device and print the computed dispatch tables;
4. destroy the Library, which restores every table it changed.

Run it with ``python docs/examples/privateuse1_device.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

try:
    import dispatchcore as dc
except ModuleNotFoundError:  # run from a source checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import dispatchcore as dc

DispatchKey, DispatchKeySet, Library, ops = dc.DispatchKey, dc.DispatchKeySet, dc.Library, dc.ops

# Names used beyond the core API: ``wrap`` (make a tensor over backend data) and
# ``register_device``. They live in ``dispatchcore.tensor``; use the top-level exports when the
# package has them. (For the maintainers: keep both in ``dispatchcore.__all__``, so that
# third-party backends never need to import ``dispatchcore.tensor``.)
if hasattr(dc, "wrap"):
    wrap = dc.wrap
else:  # pragma: no cover - older dispatchcore
    from dispatchcore.tensor import wrap

aten = ops.aten
DEVICE = "mydev"

# --- 1. the device --------------------------------------------------------------------------
# torch.utils.rename_privateuse1_backend("mydev"): tensors on device("mydev") get the key set
# {PrivateUse1, ADInplaceOrView, AutogradPrivateUse1, AutocastPrivateUse1}.
if hasattr(dc, "rename_privateuse1_backend"):
    mydev = dc.rename_privateuse1_backend(DEVICE)
else:  # pragma: no cover - shim until dispatchcore has it; same effect on dispatch
    from dispatchcore.tensor import register_device

    mydev = register_device(DEVICE, "PrivateUse1")


class MyDevData:
    """The device's own "memory": a flat Python list plus geometry, never a numpy array.

    dispatchcore reads only numpy's array attributes from a tensor's data (Note [Backend data
    protocol] in ``dispatchcore/tensor.py``): ``shape``, ``strides`` (bytes), ``dtype``, ``ndim``
    and ``storage_offset``. ``to_numpy`` lets ``Tensor.tolist()`` read it back.
    """

    __slots__ = ("values", "shape", "dtype", "ndim", "strides", "storage_offset")

    def __init__(self, values: list, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.values = list(values)
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(self.shape)
        self.storage_offset = 0
        strides, acc = [], self.dtype.itemsize
        for size in reversed(self.shape):  # always contiguous: this device has no views
            strides.append(acc)
            acc *= max(size, 1)
        self.strides = tuple(reversed(strides))

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> MyDevData:
        return cls(array.ravel().tolist(), array.shape, array.dtype)

    def to_numpy(self) -> np.ndarray:
        return np.array(self.values, dtype=self.dtype).reshape(self.shape)


def _host(t):
    """A tensor's values as an ndarray, whether it lives on cpu or on mydev."""
    return t._data if isinstance(t._data, np.ndarray) else t._data.to_numpy()


def _on_mydev(array):
    return wrap(MyDevData.from_numpy(np.asarray(array)), DEVICE)


# --- 2. kernels ---------------------------------------------------------------------------------
# Parameter names and defaults follow the aten schemas, as Library.impl checks at registration.
def empty_mydev(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    dtype = dtype if dtype is not None else dc.get_default_dtype()
    return _on_mydev(np.zeros(size, dtype=dtype.np))


def copy_mydev(self, src, non_blocking=False):
    """Copy into device memory from cpu or mydev: how data reaches the device."""
    values = np.broadcast_to(_host(src), self.shape).astype(self._data.dtype)
    self._data.values[:] = values.ravel().tolist()
    return self


def to_copy_mydev(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                  non_blocking=False, memory_format=None):
    """Copy out of the device (``device="cpu"``) or within it, with an optional dtype change."""
    array = _host(self).astype((dtype or self.dtype).np)
    if device is not None and dc.device(device).type == "cpu":
        return wrap(array)  # a CPU tensor over an ndarray
    return _on_mydev(array)


def _binary(fn, self, other):
    dtype = dc.result_type(self, other)
    return _on_mydev(fn(_host(self), _host(other)).astype(dtype.np))


def add_mydev(self, other, *, alpha=1):
    return _binary(lambda a, b: a + alpha * b, self, other)


def mul_mydev(self, other):
    return _binary(np.multiply, self, other)


def sum_mydev(self, *, dtype=None):
    if dtype is None:  # integers and bools sum to int64, as in torch
        dtype = self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else dc.int64
    return _on_mydev(np.asarray(_host(self).sum(dtype=dtype.np)))


def add_autograd_mydev(keyset, self, other, *, alpha=1):
    """AutogradPrivateUse1: a real device would record its graph here; this one traces and passes on.

    Like a generated VariableType kernel, it masks itself (and every key above it) off the key
    set and redispatches, so the call continues at the next key down: PrivateUse1.
    """
    below = keyset & DispatchKeySet.full_after(DispatchKey.AutogradPrivateUse1)
    print(f"  AutogradPrivateUse1 kernel: add.Tensor got {keyset}, redispatching with {below}")
    return aten.add.Tensor.redispatch(below, self, other, alpha=alpha)


KERNELS = [("empty.memory_format", empty_mydev), ("copy_", copy_mydev), ("_to_copy", to_copy_mydev),
           ("add.Tensor", add_mydev), ("mul.Tensor", mul_mydev), ("sum", sum_mydev)]


def table_lines(qualname: str) -> list[str]:
    """The PrivateUse1 and AutogradPrivateUse1 lines of ``dump_table(qualname)``."""
    keep = ("PrivateUse1", "AutogradPrivateUse1")
    return [line for line in dc.dump_table(qualname).splitlines() if line.split(":")[0] in keep]


def show(title: str, lines: list[str]) -> None:
    print(title)
    for line in lines or ["(no entries)"]:
        print("  " + line)


def main() -> None:
    print(f"device {mydev}: its tensors carry {dc.tensor_keyset('PrivateUse1')}")
    before = table_lines("aten::add.Tensor")
    show("aten::add.Tensor before registration:", before)

    # One IMPL library with no default key, so each impl names its key; destroying it undoes all.
    lib = Library("aten", "IMPL")
    try:
        for name, kernel in KERNELS:
            lib.impl(name, kernel, DispatchKey.PrivateUse1)
        lib.impl("add.Tensor", add_autograd_mydev, DispatchKey.AutogradPrivateUse1, with_keyset=True)
        show("aten::add.Tensor with the mydev kernels:", table_lines("aten::add.Tensor"))

        # --- 3. a program on the device ---------------------------------------------------
        print("running on mydev:")
        host = wrap(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32))
        x = aten.empty.memory_format([2, 3], device=mydev)  # BackendSelect routes on device=
        aten.copy_.default(x, host)                          # cpu -> mydev: PrivateUse1 outranks CPU
        y = aten.add.Tensor(x, x, alpha=2)                   # AutogradPrivateUse1, then PrivateUse1
        z = aten.mul.Tensor(y, x)
        total = aten.sum.default(z)
        back = aten._to_copy.default(z, device="cpu")      # mydev -> cpu
        print(f"  x is on {x.device}, held in {type(x._data).__name__}")
        print(f"  (x + 2*x) * x copied to {back.device}: {back._data.tolist()}")
        print(f"  sum on {total.device}: {total._data.values[0]} ({total.dtype})")
    finally:
        # --- 4. clean up: every table the library touched is recomputed without it ---------
        lib._destroy()

    after = table_lines("aten::add.Tensor")
    show("aten::add.Tensor after lib._destroy():", after)
    print(f"tables restored: {after == before}")


if __name__ == "__main__":
    main()
