"""A third-party device that trains a model with fifteen kernels: ``mydev`` on PrivateUse1.

PyTorch reserves the PrivateUse1 backend for out-of-tree devices: name it with
``torch.utils.rename_privateuse1_backend("mydev")``, register kernels for the ``PrivateUse1`` key
with ``torch.library.Library("aten", "IMPL")``, and tensors on ``device("mydev")`` dispatch to
them. A device writes few kernels, because of where torch registers the rest:

* **structured operators** (``add``, ``sub``, ``mul``, ``mm``, ``gt``, ``mse_loss``, ``sum.dim_IntList``,
  ...) have a ``CompositeExplicitAutogradNonFunctional`` kernel for the functional and in-place
  forms: it computes the result's geometry with the Meta kernel, allocates it with
  ``empty_strided`` on the device and calls the ``out=`` overload. The device writes ``add.out``;
  ``add.Tensor`` and ``add_.Tensor`` come free.
* **CompositeExplicitAutograd** kernels call other operators: every view is ``as_strided`` with new
  sizes, strides and offset (``t``, ``transpose``, ``expand``, ``select``, ``slice``, ...), the
  ``.Scalar`` arithmetic is the ``.Tensor`` overload with a wrapped number, ``sum`` is
  ``sum.dim_IntList``, ``clone`` is ``empty_strided`` + ``copy_``, ``ones``/``zeros`` are
  ``empty`` + ``fill_``/``zero_``.
* **CompositeImplicitAutograd** kernels decompose above autograd (``matmul`` is ``mm`` here).

This script uses dispatchcore's public API (and ``dispatchcore.shapes``, the view-stride rule every
backend shares):

1. names the device and gives its tensors memory of their own: a flat Python list (the storage)
   read through sizes, strides and an offset, so that a view is new geometry over the same list;
2. trains a two-layer MLP for three SGD steps, starting from *no* kernel: each "Could not run
   'aten::X' with arguments from the 'PrivateUse1' backend" names the next kernel, which is
   registered from the device's ``KERNELS`` before the loop starts again. It ends when the loop
   runs, and every kernel in ``KERNELS`` was asked for;
3. prints how each operator the loop ran reached the device, by the ``dump_table`` label of its
   PrivateUse1 entry: ``[kernel]`` (written by the device), ``[default backend kernel]``
   (CompositeExplicitAutograd or ...NonFunctional) or ``[math kernel]`` (CompositeImplicitAutograd),
   with the operators each composite called;
4. shows that views share the device's memory, compares the losses with the same loop on CPU,
   and destroys the Library, which restores every table it changed.

Run it with ``python docs/examples/privateuse1_device.py``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

import dispatchcore as dc
from dispatchcore.shapes import compute_stride, infer_size_dv

DEVICE = "mydev"

# --- 1. the device and its memory ---------------------------------------------------------------
# torch.utils.rename_privateuse1_backend("mydev"): tensors on device("mydev") get the key set
# {PrivateUse1, ADInplaceOrView, AutogradPrivateUse1, AutocastPrivateUse1}.
mydev = dc.rename_privateuse1_backend(DEVICE)


class MyDevData:
    """A tensor's data on mydev: a flat list shared with its views, read through geometry.

    dispatchcore reads numpy's array attributes from a tensor's data (Note [Backend data
    protocol] in ``dispatchcore/tensor.py``): ``shape``, ``strides`` (bytes), ``dtype``, ``ndim``
    and ``storage_offset`` (elements). A view is another ``MyDevData`` over the same ``storage``
    list, with its own sizes, strides and offset (c10's StorageImpl and TensorImpl).
    ``to_numpy`` lets ``Tensor.tolist()`` and ``item()`` read it.
    """

    __slots__ = ("storage", "shape", "strides", "dtype", "ndim", "storage_offset")

    def __init__(self, storage: list, shape: Any, stride: Any, offset: int, dtype: Any) -> None:
        self.storage = storage
        self.shape = tuple(int(s) for s in shape)
        self.ndim = len(self.shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(int(s) * self.dtype.itemsize for s in stride)
        self.storage_offset = int(offset)

    def positions(self) -> list[int]:
        """The storage index of each element, in row-major order."""
        stride = [s // self.dtype.itemsize for s in self.strides]
        return [self.storage_offset + sum(i * s for i, s in zip(index, stride))
                for index in itertools.product(*(range(n) for n in self.shape))]

    def to_numpy(self) -> np.ndarray:
        """A host copy with the same strides (so numpy sees the layout the CPU backend would)."""
        flat = np.array(self.storage, dtype=self.dtype)
        return np.lib.stride_tricks.as_strided(flat[self.storage_offset:], self.shape, self.strides)


def contiguous_strides(shape: Any) -> list[int]:
    strides, n = [], 1
    for size in reversed(shape):
        strides.append(n)
        n *= max(size, 1)
    return strides[::-1]


def allocate(shape: Any, stride: Any, dtype: dc.dtype) -> dc.Tensor:
    """A new tensor on mydev over fresh storage just large enough for ``shape`` and ``stride``."""
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
    return dc.wrap(MyDevData([0] * extent, shape, stride, 0, dtype.np), DEVICE)


def host(value: Any) -> np.ndarray:
    """A tensor's values as an ndarray (cpu or mydev), or a number as a 0-d array."""
    if not isinstance(value, dc.Tensor):
        return np.asarray(value)
    data = value._data
    return data if isinstance(data, np.ndarray) else data.to_numpy()


def store(dst: dc.Tensor, values: Any) -> dc.Tensor:
    """Write ``values`` (broadcast to ``dst``'s shape, cast to its dtype) into ``dst``'s elements."""
    if dst.device.type == "cpu":  # a copy from mydev into a CPU tensor
        np.copyto(dst._data, values, casting="unsafe")
        return dst
    data = dst._data
    flat = np.broadcast_to(values, data.shape).astype(data.dtype).ravel().tolist()
    for position, value in zip(data.positions(), flat):
        data.storage[position] = value
    return dst


def store_out(out: dc.Tensor, values: np.ndarray) -> dc.Tensor:
    """An ``out=`` kernel's result: ``out`` is resized first when its shape differs (``resize_output``).

    The structured composites always pass an ``out`` of the right shape; a user's ``out=`` may not.
    """
    values = np.asarray(values)
    if tuple(out.shape) != values.shape:
        out._data = allocate(values.shape, contiguous_strides(values.shape), out.dtype)._data
    return store(out, values)


# --- 2. the kernels mydev writes -------------------------------------------------------------------
# Parameter names and defaults follow the aten schemas, as Library.impl checks at registration.
# Allocation, views and data movement: the primitives every composite ends in.
def empty_mydev(size, *, dtype=None):
    """A contiguous buffer for the device's own kernels (``relu`` below); no aten operator."""
    return allocate(size, contiguous_strides(size), dtype or dc.get_default_dtype())


def empty_strided_mydev(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    return allocate(size, stride, dtype or dc.get_default_dtype())


def as_strided_mydev(self, size, stride, storage_offset=None):
    """How mydev returns a view: new geometry over the same storage list, no copy."""
    data = self._data
    offset = data.storage_offset if storage_offset is None else storage_offset
    return dc.wrap(MyDevData(data.storage, size, stride, offset, data.dtype), DEVICE)


def view_mydev(self, size):
    """``view`` is a per-backend kernel in torch too; its strides follow ``computeStride``."""
    shape = infer_size_dv(size, self.numel())
    stride = compute_stride(tuple(self.shape), self.stride(), shape)
    if stride is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return as_strided_mydev(self, shape, stride)


def copy_from_mydev(self, dst, non_blocking=False):
    """``dst.copy_(self)`` where either side is on mydev: how data reaches the device and leaves it.

    ``copy_`` is CompositeExplicitAutograd; it copies cpu and cuda memory itself and hands every
    other device to ``_copy_from`` (note the argument order: source first). ``Tensor.to`` is
    ``_to_copy``, ``empty_strided`` on the target device then ``copy_``, so it ends here too.
    """
    store(dst, host(self))
    return dst


def fill_mydev(self, value):
    return store(self, value)


def zero_mydev(self):
    return store(self, 0)


# Compute: the out= kernels of structured operators, plus relu (per-backend in torch as well).
# Operands are cast to the common dtype first: a Python number (a wrapped number) does not
# widen a float32 computation, as in torch.
def _binary_out(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., Any]:
    def kernel(self, other, *, out):
        common = dc.result_type(self, other).np
        return store_out(out, fn(host(self).astype(common), host(other).astype(common)))

    return kernel


def add_out_mydev(self, other, *, alpha=1, out):
    return _binary_out(lambda a, b: a + alpha * b)(self, other, out=out)


def sub_out_mydev(self, other, *, alpha=1, out):
    return _binary_out(lambda a, b: a - alpha * b)(self, other, out=out)


mul_out_mydev = _binary_out(np.multiply)


def threshold_backward_mydev(grad_output, self, threshold, *, grad_input):
    """The derivative of relu: the gradient where the input is above the threshold, else 0."""
    return store_out(grad_input, np.where(host(self) <= threshold, 0, host(grad_output)))


def mm_out_mydev(self, mat2, *, out):
    return store_out(out, host(self) @ host(mat2))


def sum_out_mydev(self, dim, keepdim=False, *, dtype=None, out):
    axis = tuple(dim) if dim else None  # None or [] reduce every dimension
    return store_out(out, host(self).sum(axis=axis, keepdims=keepdim, dtype=(dtype or out.dtype).np))


def mse_loss_out_mydev(self, target, reduction=1, *, out):
    common = dc.result_type(self, target).np
    squared = (host(self).astype(common) - host(target).astype(common)) ** 2
    return store_out(out, {0: squared, 1: squared.mean(), 2: squared.sum()}[reduction])


def mse_loss_backward_mydev(grad_output, self, target, reduction):
    """mse_loss's derivative, a kernel of its own in torch (not structured): ``norm * (self - target) * grad``."""
    diff = host(self) - host(target)
    norm = 2.0 / diff.size if reduction == 1 else 2.0
    values = norm * diff * host(grad_output)
    return store(empty_mydev(values.shape, dtype=self.dtype), values)


def relu_mydev(self):
    values = host(self)
    return store(empty_mydev(values.shape, dtype=self.dtype), np.maximum(values, 0))


KERNELS: dict[str, Callable[..., Any]] = {
    "empty_strided": empty_strided_mydev, "as_strided": as_strided_mydev,
    "view": view_mydev, "_copy_from": copy_from_mydev, "fill_.Scalar": fill_mydev,
    "zero_": zero_mydev, "add.out": add_out_mydev, "sub.out": sub_out_mydev, "mul.out": mul_out_mydev,
    "mm.out": mm_out_mydev, "threshold_backward.grad_input": threshold_backward_mydev, "sum.IntList_out": sum_out_mydev,
    "mse_loss.out": mse_loss_out_mydev, "mse_loss_backward": mse_loss_backward_mydev, "relu": relu_mydev,
}


# --- the program: a two-layer MLP, three SGD steps ---------------------------------------------------
_rng = np.random.default_rng(0)
DATA = {name: _rng.standard_normal(shape).astype(np.float32)
        for name, shape in (("x", (8, 3)), ("y", (8, 1)), ("w1", (3, 4)), ("b1", (4,)), ("w2", (4, 1)), ("b2", (1,)))}


def train(device: str, steps: int = 3, lr: float = 0.1) -> list[float]:
    """``relu(x @ w1 + b1) @ w2 + b2``, mse_loss, backward, ``w.sub_(lr * w.grad)``; the losses."""
    x, y = dc.tensor(DATA["x"], device=device), dc.tensor(DATA["y"], device=device)
    params = [dc.tensor(DATA[name], device=device, requires_grad=True) for name in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params
    losses = []
    for _ in range(steps):
        loss = dc.nn.functional.mse_loss((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        with dc.no_grad():
            for p in params:
                assert p.grad is not None  # backward() gave every parameter a gradient
                p.sub_(lr * p.grad)
                p.grad.zero_()
        losses.append(loss.to("cpu").item())
    return losses


_MISSING = re.compile(r"Could not run 'aten::(\S+)' with arguments from the 'PrivateUse1' backend")


def register_as_needed(lib: dc.Library, program: Callable[[], Any]) -> tuple[Any, list[str]]:
    """Run ``program`` until it succeeds, registering each missing PrivateUse1 kernel it names."""
    needed: list[str] = []
    while True:
        try:
            return program(), needed
        except dc.DispatchError as e:
            missing = _MISSING.match(str(e))
            if missing is None or missing.group(1) not in KERNELS:
                raise
            needed.append(missing.group(1))
            lib.impl(missing.group(1), KERNELS[missing.group(1)], "PrivateUse1")


# --- 3. how each operator reached the device -----------------------------------------------------------
def _lands(hop: Any) -> Any:
    """The key at which a call ends, after its redispatches."""
    while (below := [c for c in hop.children if c.kind == "redispatch"]):
        hop = below[0]
    return hop.key


def _origin(qualname: str, label: str) -> str:
    if label == "kernel":
        return "written by mydev"
    if label == "math kernel":
        return "CompositeImplicitAutograd"
    if dc.find_op(qualname).has_kernel_for_dispatch_key("CompositeExplicitAutogradNonFunctional"):
        return "CompositeExplicitAutogradNonFunctional"
    return "CompositeExplicitAutograd"


def how_reached(trace: Any) -> dict[str, tuple[str, str, list[str]]]:
    """``{op: (label, origin, ops its composite called on mydev)}`` for every op the trace ran on mydev."""
    found: dict[str, tuple[str, str, list[str]]] = {}
    for hop in trace.hops():
        on_device = hop.key.name == "PrivateUse1" or (hop.key.name == "AutogradPrivateUse1"
                                                      and hop.label == "math kernel")
        if not on_device or hop.op in found:
            continue
        calls = [c.op for c in hop.children if c.kind == "call" and _lands(c).name != "Meta"]
        found[hop.op] = (hop.label, _origin(hop.op, hop.label), list(dict.fromkeys(calls)))
    return found


def show_views() -> None:
    """Views are as_strided over the same storage: writing through one changes the base."""
    x = dc.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=mydev)
    col = x.t()[1]  # t -> transpose -> as_strided, then select -> as_strided
    print(f"  x.t()[1]: sizes {list(col.shape)}, strides {list(col.stride())}, offset {col.storage_offset()}, "
          f"same storage as x: {col._data.storage is x._data.storage}, base is x: {col._base is x}")
    col.fill_(0.0)
    print(f"  after x.t()[1].fill_(0): x = {x.tolist()}")


def main() -> None:
    print(f"device {mydev}: its tensors carry {dc.tensor_keyset('PrivateUse1')}")
    touched = [f"aten::{name}" for name in KERNELS]
    before = {q: dc.dump_table(q) for q in touched}

    # One IMPL library with no default key: each impl names its key; destroying it undoes all.
    lib = dc.Library("aten", "IMPL")
    try:
        print("training on mydev, starting from no kernel; the loop asked for:")
        _, needed = register_as_needed(lib, lambda: train(DEVICE))
        print("  " + ", ".join(needed))
        print(f"{len(needed)} kernels, every one in KERNELS: {sorted(needed) == sorted(KERNELS)}")

        print("how each operator of the loop reached mydev (its PrivateUse1 entry in dump_table):")
        with dc.trace() as trace:
            losses = train(DEVICE)
        reached = how_reached(trace)
        for label, origin in (("kernel", "written by mydev"),
                              ("default backend kernel", "CompositeExplicitAutogradNonFunctional"),
                              ("default backend kernel", "CompositeExplicitAutograd"),
                              ("math kernel", "CompositeImplicitAutograd")):
            print(f"  [{label}] {origin}:")
            for op, (_, o, calls) in sorted(reached.items()):
                if o == origin:
                    print(f"    {op}" + (f" -> {', '.join(calls)}" if calls and label != "kernel" else ""))

        print("views on mydev:")
        show_views()
        cpu = train("cpu")
        print(f"losses on mydev: {[round(v, 6) for v in losses]}")
        print(f"losses on cpu:   {[round(v, 6) for v in cpu]}")
        print(f"equal: {losses == cpu}")
    finally:
        # --- 4. clean up: every table the library touched is recomputed without it -------------
        lib.destroy()
    print(f"tables restored: {all(dc.dump_table(q) == before[q] for q in touched)}")


if __name__ == "__main__":
    main()
