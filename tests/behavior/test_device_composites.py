"""A PrivateUse1 device with only the primitives and ``out=`` kernels gets the rest from composites.

The device ``stridedev`` keeps each tensor as geometry (sizes, strides, offset) over a flat
storage shared with its views, and registers only allocation (``empty.memory_format``,
``empty_strided``), views (``as_strided``, ``view``), data movement (``copy_``, ``_to_copy``),
fills (``fill_.Scalar``, ``zero_``), the ``out=`` kernels of structured operators and ``relu``.
Everything else it runs reaches it through torch's composite kernels: the functional and in-place
forms of structured operators (CompositeExplicitAutogradNonFunctional), views, ``.Scalar``
arithmetic, ``sum``/``mean``, ``clone`` and the filled factories (CompositeExplicitAutograd), and
decompositions such as ``matmul`` (CompositeImplicitAutograd). Values are checked against the
same calls on CPU.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.ops import aten
from dispatchcore.shapes import compute_stride, infer_size_dv

DEVICE = "stridedev"


class StridedData:
    """Device data: geometry over a flat storage (an ndarray standing for device memory)."""

    __slots__ = ("storage", "shape", "strides", "dtype", "ndim", "storage_offset")

    def __init__(self, storage: np.ndarray, shape, stride, offset: int = 0) -> None:
        self.storage, self.shape, self.ndim = storage, tuple(shape), len(shape)
        self.dtype, self.storage_offset = storage.dtype, int(offset)
        self.strides = tuple(int(s) * storage.itemsize for s in stride)

    def to_numpy(self) -> np.ndarray:
        """The elements, as a writable window on the storage."""
        return np.lib.stride_tricks.as_strided(self.storage[self.storage_offset:], self.shape, self.strides)


def _contiguous(shape) -> list[int]:
    strides, n = [], 1
    for size in reversed(shape):
        strides.append(n)
        n *= max(size, 1)
    return strides[::-1]


def _values(x) -> np.ndarray:
    if not isinstance(x, dc.Tensor):
        return np.asarray(x)
    return x._data if x.device.type == "cpu" else x._data.to_numpy()


def _window(t: dc.Tensor) -> np.ndarray:
    return t._data if t.device.type == "cpu" else t._data.to_numpy()


# --- the device's kernels ------------------------------------------------------------------------
def empty_strided_dev(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    storage = np.zeros(extent, (dtype or dc.get_default_dtype()).np)
    return dc.wrap(StridedData(storage, size, stride), DEVICE)


def empty_dev(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return empty_strided_dev(size, _contiguous(size), dtype=dtype)


def as_strided_dev(self, size, stride, storage_offset=None):
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return dc.wrap(StridedData(self._data.storage, size, stride, offset), DEVICE)


def view_dev(self, size):
    size = infer_size_dv(size, self.numel())
    stride = compute_stride(tuple(self.shape), self.stride(), size)
    if stride is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride")
    return as_strided_dev(self, size, stride)


def copy_dev(self, src, non_blocking=False):
    _window(self)[...] = _values(src)
    return self


def to_copy_dev(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                memory_format=None):
    array = _values(self).astype((dtype or self.dtype).np)
    if device is not None and dc.device(device).type == "cpu":
        return dc.wrap(array)
    return copy_dev(empty_dev(array.shape, dtype=dtype or self.dtype), dc.wrap(array))


def fill_dev(self, value):
    _window(self)[...] = _values(value)
    return self


def zero_dev(self):
    return fill_dev(self, 0)


def _store_out(out, result):
    result = np.asarray(result)
    if tuple(out.shape) != result.shape:  # resize_output
        out._data = empty_dev(result.shape, dtype=out.dtype)._data
    _window(out)[...] = result
    return out


def _common(self, other):
    dtype = dc.result_type(self, other).np
    return _values(self).astype(dtype), _values(other).astype(dtype)


def add_out(self, other, *, alpha=1, out):
    a, b = _common(self, other)
    return _store_out(out, a + alpha * b)


def sub_out(self, other, *, alpha=1, out):
    a, b = _common(self, other)
    return _store_out(out, a - alpha * b)


def mul_out(self, other, *, out):
    a, b = _common(self, other)
    return _store_out(out, a * b)


def gt_scalar_out(self, other, *, out):
    return _store_out(out, _values(self) > other)


def threshold_backward_out(grad_output, self, threshold, *, grad_input):
    return _store_out(grad_input, np.where(_values(self) <= threshold, 0, _values(grad_output)))


def mm_out(self, mat2, *, out):
    return _store_out(out, _values(self) @ _values(mat2))


def _axis(dim):
    return tuple(dim) if dim else None


def sum_out(self, dim, keepdim=False, *, dtype=None, out):
    return _store_out(out, _values(self).sum(axis=_axis(dim), keepdims=keepdim, dtype=(dtype or out.dtype).np))


def mean_out(self, dim, keepdim=False, *, dtype=None, out):
    return _store_out(out, _values(self).mean(axis=_axis(dim), keepdims=keepdim, dtype=(dtype or out.dtype).np))


def mse_loss_out(self, target, reduction=1, *, out):
    a, b = _common(self, target)
    squared = (a - b) ** 2
    return _store_out(out, [squared, squared.mean(), squared.sum()][reduction])


def mse_loss_backward_dev(grad_output, self, target, reduction):
    """A kernel of its own in torch (CPU/CUDA/MPS dispatch entries), so a device writes it too."""
    a, b = _common(self, target)
    norm = 2.0 / a.size if reduction == 1 else 2.0
    return _store_out(empty_dev(self.shape, dtype=self.dtype), norm * (a - b) * _values(grad_output))


def relu_dev(self):
    return _store_out(empty_dev(self.shape, dtype=self.dtype), np.maximum(_values(self), 0))


PRIMITIVES = {"empty.memory_format": empty_dev, "empty_strided": empty_strided_dev, "as_strided": as_strided_dev,
              "view": view_dev, "copy_": copy_dev, "_to_copy": to_copy_dev, "fill_.Scalar": fill_dev,
              "zero_": zero_dev}
OUT_KERNELS = {"add.out": add_out, "sub.out": sub_out, "mul.out": mul_out, "gt.Scalar_out": gt_scalar_out,
               "mm.out": mm_out, "sum.IntList_out": sum_out, "mean.out": mean_out, "mse_loss.out": mse_loss_out,
               "threshold_backward.grad_input": threshold_backward_out}  # relu's derivative


@pytest.fixture(scope="module")
def dev():
    """The device, its kernels registered at PrivateUse1 for this module, then removed."""
    device = dc.register_device(DEVICE, "PrivateUse1")
    dc.load_backends()  # the structured composites run the Meta kernels
    lib = dc.Library("aten", "IMPL")
    kernels = {**PRIMITIVES, **OUT_KERNELS, "relu": relu_dev, "mse_loss_backward": mse_loss_backward_dev}
    for name, kernel in kernels.items():
        lib.impl(name, kernel, "PrivateUse1")
    yield device
    lib._destroy()


def on_dev(values, dtype=np.float32) -> dc.Tensor:
    return dc.tensor(np.asarray(values, dtype=dtype), device=DEVICE)


def cpu(t: dc.Tensor) -> list:
    assert t.device.type == DEVICE
    return t.to("cpu").tolist()


def _label(qualname: str) -> str:
    line = next(ln for ln in dc.dump_table(qualname).splitlines() if ln.startswith("PrivateUse1:"))
    return line.rsplit(" [", 1)[1].rstrip("]")


A = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]
B = [[0.5, 1.5, -1.0], [2.0, -3.0, 0.25]]


# --- tables --------------------------------------------------------------------------------------
def test_device_registers_primitives_and_out_kernels_only_and_the_rest_is_composite(dev):
    for name in (*PRIMITIVES, *OUT_KERNELS):
        assert _label(f"aten::{name}") == "kernel", name
    for name in ("add.Tensor", "add_.Tensor", "sub.Tensor", "mul.Tensor", "mm", "sum.dim_IntList", "mean.dim"):
        assert _label(f"aten::{name}") == "default backend kernel", name
        assert dc.find_op(f"aten::{name}").has_kernel_for_dispatch_key("CompositeExplicitAutogradNonFunctional")
    for name in ("add.Scalar", "mul.Scalar", "t", "expand", "select.int", "clone", "sum", "mean", "ones"):
        assert _label(f"aten::{name}") == "default backend kernel", name
        assert dc.find_op(f"aten::{name}").has_kernel_for_dispatch_key("CompositeExplicitAutograd")
    assert _label("aten::matmul") == "math kernel"


# --- structured operators: functional and in-place forms from out= --------------------------------
@pytest.mark.parametrize("name", ["add", "sub", "mul"])
def test_tensor_and_scalar_overloads_run_through_the_out_kernel(dev, name):
    x, y = on_dev(A), on_dev(B)
    fn, ref = getattr(aten, name), getattr(aten, name)
    expected = ref.Tensor(dc.tensor(A), dc.tensor(B)).tolist()
    result = fn.Tensor(x, y)
    assert result.device == dev and result.dtype == dc.float32 and cpu(result) == expected
    scalar = fn.Scalar(x, 2.5)
    assert scalar.dtype == dc.float32 and cpu(scalar) == ref.Scalar(dc.tensor(A), 2.5).tolist()
    ints = fn.Scalar(on_dev([1, 2, 3], np.int64), 2)  # promotion: int64 tensor, int scalar -> int64
    assert ints.dtype == dc.int64 and cpu(ints) == ref.Scalar(dc.tensor([1, 2, 3]), 2).tolist()


@pytest.mark.parametrize("name", ["add_", "sub_", "mul_"])
def test_inplace_overloads_write_into_self(dev, name):
    x = on_dev(A)
    storage, version = x._data.storage, x._version
    result = getattr(aten, name).Tensor(x, on_dev(B))
    assert result is x and x._data.storage is storage and x._version == version + 1
    assert cpu(x) == getattr(aten, name).Tensor(dc.tensor(A), dc.tensor(B)).tolist()
    getattr(aten, name).Scalar(x, 2)
    assert x._version == version + 2


def test_alpha_and_broadcasting_reach_the_out_kernel(dev):
    x, b = on_dev(A), on_dev([10.0, 20.0, 30.0])
    assert cpu(aten.add.Tensor(x, b, alpha=2)) == aten.add.Tensor(dc.tensor(A), dc.tensor([10.0, 20.0, 30.0]),
                                                                   alpha=2).tolist()
    assert cpu(x - 1) == (dc.tensor(A) - 1).tolist() and cpu(3 * x) == (3 * dc.tensor(A)).tolist()


def test_matmul_decomposes_to_mm_then_mm_out(dev):
    x, w = on_dev(A), on_dev([[1.0], [2.0], [3.0]])
    with dc.trace() as t:
        y = x @ w
    assert cpu(y) == (dc.tensor(A) @ dc.tensor([[1.0], [2.0], [3.0]])).tolist()
    assert [(h.op, h.label) for h in t.hops() if h.key.name.endswith("PrivateUse1") and h.op != "aten::empty_strided"
            ] == [("aten::matmul", "math kernel"), ("aten::mm", "autograd kernel"),
                  ("aten::mm", "default backend kernel"), ("aten::mm.out", "kernel")]


# --- views ----------------------------------------------------------------------------------------
VIEWS = {
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 2),
    "permute": lambda x: x.permute(2, 0, 1),
    "expand": lambda x: x[:, :1].expand(2, 4, 4),
    "select": lambda x: x.select(1, 2),
    "slice": lambda x: x[:, 1:3, ::2],
    "unsqueeze": lambda x: x.unsqueeze(1),
    "squeeze": lambda x: x[:, :1].squeeze(1),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_storage_with_their_base(dev, name):
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    base = dc.tensor(host, device=DEVICE)
    view_of = VIEWS[name]
    if name == "t":
        host, base = host[0], base[0]
    v, ref = view_of(base), view_of(dc.tensor(host))
    assert v._data.storage is base._data.storage
    assert v._base is (base if base._base is None else base._base)
    assert (v.shape, v.stride(), v.storage_offset()) == (ref.shape, ref.stride(), ref.storage_offset())
    assert cpu(v) == ref.tolist()


def test_writing_through_a_view_changes_the_base(dev):
    x = on_dev(A)
    col = x.t()[1]  # t, then select: both as_strided
    col.fill_(0.0)
    assert cpu(x) == [[1.0, 0.0, 3.0], [4.0, 0.0, -6.0]]
    assert x._version == col._version == 1  # the view shares the base's version counter
    x[0, 1:].zero_()
    assert cpu(x) == [[1.0, 0.0, 0.0], [4.0, 0.0, -6.0]]


def test_view_of_a_non_contiguous_tensor_follows_compute_stride(dev):
    x = on_dev(np.arange(6.0).reshape(2, 3))
    assert cpu(x.view(3, 2)) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(6)
    assert cpu(x.t().reshape(6)) == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]  # reshape copies: clone, then view


# --- clone, reductions, factories -----------------------------------------------------------------
def test_clone_copies_into_new_storage(dev):
    x = on_dev(A)
    c = x.t().clone()
    assert c._data.storage is not x._data.storage
    assert c.stride() == dc.tensor(A).t().clone().stride()  # preserve_format: strides as on CPU
    assert cpu(c) == dc.tensor(A).t().tolist()
    x.zero_()
    assert cpu(c) == dc.tensor(A).t().tolist()


def test_sum_and_mean_reach_their_out_kernels(dev):
    x, ref = on_dev(A), dc.tensor(A)
    assert cpu(x.sum()) == ref.sum().tolist() and x.sum().dim() == 0
    assert cpu(x.sum(1)) == ref.sum(1).tolist()
    assert cpu(x.sum(0, keepdim=True)) == ref.sum(0, keepdim=True).tolist()
    assert cpu(x.mean()) == ref.mean().tolist()
    assert cpu(x.mean(-1, keepdim=True)) == ref.mean(-1, keepdim=True).tolist()
    ints = on_dev([[1, 2], [3, 4]], np.int64)
    assert ints.sum().dtype == dc.int64 and cpu(ints.sum()) == 10
    assert cpu(aten.sum.default(ints, dtype=dc.float64)) == 10.0


def test_factories_fill_an_empty_tensor_on_the_device(dev):
    z, o = dc.zeros(2, 3, device=DEVICE), dc.ones(2, device=DEVICE, dtype=dc.int64)
    assert (z.device, z.dtype, cpu(z)) == (dev, dc.float32, [[0.0] * 3] * 2)
    assert (o.dtype, cpu(o)) == (dc.int64, [1, 1])
    f = dc.full((2,), 7, device=DEVICE)  # the dtype comes from the fill value, as in torch
    assert (f.dtype, cpu(f)) == (dc.int64, [7, 7])
    assert cpu(dc.full((1,), 0.5, device=DEVICE)) == [0.5]
    s = aten.scalar_tensor.default(3.0, device=DEVICE)
    assert s.dim() == 0 and cpu(s) == 3.0


# --- a training loop ---------------------------------------------------------------------------------
def _train(device: str) -> tuple[list[float], list[list]]:
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in [(8, 3), (8, 1), (3, 4), (4,), (4, 1), (1,)]]
    x, y, *params = [dc.tensor(a, device=device) for a in data]
    for p in params:
        p.requires_grad_()
    w1, b1, w2, b2 = params
    losses = []
    for _ in range(3):
        loss = dc.nn.functional.mse_loss((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        with dc.no_grad():
            for p in params:
                assert p.grad is not None
                p.sub_(0.1 * p.grad)
                p.grad.zero_()
        losses.append(loss.to("cpu").item())
    return losses, [p.detach().to("cpu").tolist() for p in params]


def test_training_loop_on_the_device_matches_cpu(dev):
    losses, params = _train(DEVICE)
    assert (losses, params) == _train("cpu")
    assert losses[2] < losses[0]


# --- the trace and the missing-kernel error ------------------------------------------------------------
def test_trace_shows_the_structured_composite_at_privateuse1_then_the_out_kernel(dev):
    x = on_dev(A)
    with dc.trace() as t:
        x + x
    composite = next(h for h in t.hops() if h.op == "aten::add.Tensor" and h.key.name == "PrivateUse1")
    ceanf = re.search(r"^CompositeExplicitAutogradNonFunctional\[alias\]: (registered at \S+)",
                      dc.dump_state("aten::add.Tensor"), re.M)
    assert ceanf and composite.label == "default backend kernel" and composite.kernel == ceanf.group(1)
    assert composite.parent.key.name == "AutogradPrivateUse1"  # below autograd: AddBackward0 records
    calls = [(c.op, c.key.name) for c in composite.children if c.kind == "call"]
    assert ("aten::add.Tensor", "Meta") in calls  # the geometry
    assert calls[-1] == ("aten::add.out", "PrivateUse1")
    out_hop = composite.children[-1]
    assert out_hop.label == "kernel" and "test_device_composites.py" in out_hop.kernel
    allocation = [h for c in composite.children if c.op == "aten::empty_strided" for h in c.walk()]
    assert [h.key.name for h in allocation if h.kind == "redispatch"] == ["Meta", "Meta", "PrivateUse1"]


def test_a_structured_op_without_its_out_kernel_names_the_out_overload(dev):
    x = on_dev(A)
    with pytest.raises(dc.DispatchError, match=r"^Could not run 'aten::div\.out' with arguments from the "
                                               r"'PrivateUse1' backend\."):
        x / x
