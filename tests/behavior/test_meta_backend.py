"""Meta backend: every operator computes CPU's shape, dtype and strides without any data.

One table of cases covers every operator with a Meta kernel. Each case is checked three ways:
against expectations recorded from PyTorch 2.13's CPU results (always), against dispatchcore's own
CPU backend (fails until ``dispatchcore_backends.cpu`` exists: that is the integration check), and,
in the ``differential`` run, the recorded expectations against live torch. When meta and CPU
disagree, the recorded torch result (shown in the failure) says which side is wrong.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from dispatchcore_backends import meta as meta_backend
from dispatchcore_backends.meta import shapes
from dispatchcore_backends.meta.kernels import MetaData, meta_tensor

import dispatchcore as dc
from dispatchcore import DispatchKey, Library
from dispatchcore.ops import aten
from dispatchcore.tensor import wrap

# Operators that are CompositeImplicitAutograd decompositions (dispatchcore/_composites.py):
# they need no Meta kernel, their parts have one.
# --- backends --------------------------------------------------------------------------------------
# Backends registered here stay for the process, as load_backends() keeps them: a Library that
# is garbage-collected unregisters its kernels.
_LIBRARIES: list[Library] = []


def _has_kernel(qualname: str, key: str) -> bool:
    return dc.find_op(qualname).has_kernel_for_dispatch_key(key)


@pytest.fixture(scope="module", autouse=True)
def backends_loaded():
    """Discover the installed backends once, then register by hand whatever discovery missed.

    Discovery first, so that a later discovery (the dispatcher retries it when a kernel is
    missing) does not register a backend twice. It fails while a backend is half-written, or
    when the entry points are not installed; the hand registration covers Meta then.
    """
    try:
        dc.load_backends()
    except (ImportError, AttributeError):
        pass
    if not _has_kernel("aten::add.Tensor", "Meta"):
        _LIBRARIES.append(meta_backend.register())


@pytest.fixture(scope="module")
def cpu_backend():
    """dispatchcore's CPU backend; None while it does not exist yet."""
    try:
        from dispatchcore_backends import cpu
    except ImportError:
        return None
    if not hasattr(cpu, "register"):  # a half-written package is not a backend yet
        return None
    if not _has_kernel("aten::add.Tensor", "CPU"):
        _LIBRARIES.append(cpu.register())
    return cpu


# --- argument makers: the same case builds meta, dispatchcore-CPU or torch arguments -----------------
def _storage_elements(shape, strides, offset):
    return offset + (shapes.storage_nbytes(shape, strides, 1) or 1)


class MetaMaker:
    """Meta tensors with any geometry, built directly (no kernel runs to make an input)."""

    device = "meta"

    def t(self, shape, dtype="float32", strides=None, offset=0, fill="pos"):
        shape = tuple(shape)
        strides = shapes.contiguous_strides(shape) if strides is None else tuple(strides)
        d = getattr(dc, dtype)
        nbytes = _storage_elements(shape, strides, offset) * d.itemsize
        return meta_tensor(shape, d, strides, offset, nbytes)

    def dtype(self, name):
        return getattr(dc, name)

    def mf(self, name):
        return {"contiguous": 0, "preserve": 1, "channels_last": 2}[name]

    def run(self, op, args, kwargs):
        name, _, overload = op.partition(".")
        return getattr(getattr(aten, name), overload or "default")(*args, **kwargs)


def _values(n, dtype, fill):
    """Harmless data: positive (no log/sqrt/div warnings), or zeros for class indices."""
    np_dtype = np.dtype(dtype if dtype != "bool_" else "bool")
    if fill == "zeros":
        return np.zeros(n, np_dtype)
    if np_dtype.kind == "b":
        return np.ones(n, np_dtype)
    if np_dtype.kind in "iu":
        return (np.arange(n) % 3 + 1).astype(np_dtype)
    base = np.linspace(0.5, 1.5, n)
    return (base + 0.5j * base).astype(np_dtype) if np_dtype.kind == "c" else base.astype(np_dtype)


class CpuMaker(MetaMaker):
    """ndarrays over a flat buffer, viewed with the case's strides and storage offset."""

    device = "cpu"

    def t(self, shape, dtype="float32", strides=None, offset=0, fill="pos"):
        shape = tuple(shape)
        strides = shapes.contiguous_strides(shape) if strides is None else tuple(strides)
        base = _values(_storage_elements(shape, strides, offset), dtype, fill)
        itemsize = base.dtype.itemsize
        # np.ndarray over the buffer keeps ``base`` as the root, so storage_offset() sees the offset
        array = np.ndarray(shape, base.dtype, buffer=base, offset=offset * itemsize,
                           strides=[s * itemsize for s in strides])
        return wrap(array)


class TorchMaker:
    """The same arguments for real torch (differential run only)."""

    def __init__(self, device="cpu"):
        import torch

        self.torch = torch
        self.device = device

    def t(self, shape, dtype="float32", strides=None, offset=0, fill="pos"):
        torch = self.torch
        shape = tuple(shape)
        strides = shapes.contiguous_strides(shape) if strides is None else tuple(strides)
        n = _storage_elements(shape, strides, offset)
        base = torch.tensor(_values(n, dtype, fill), device=self.device)
        return torch.as_strided(base, shape, strides, offset)

    def dtype(self, name):
        return getattr(self.torch, {"bool_": "bool"}.get(name, name))

    def mf(self, name):
        return getattr(self.torch, {"contiguous": "contiguous_format", "preserve": "preserve_format"}
                       .get(name, name))

    def run(self, op, args, kwargs):
        name, _, overload = op.partition(".")
        return getattr(getattr(self.torch.ops.aten, name), overload or "default")(*args, **kwargs)


def summary(result):
    """(shape, dtype, strides, storage offset) of a result, or a list of them for tuples."""
    if isinstance(result, (tuple, list)):
        return [summary(r) for r in result]
    dtype = str(result.dtype).rpartition(".")[2]
    return (tuple(result.shape), "bool_" if dtype == "bool" else dtype, tuple(result.stride()),
            result.storage_offset())


# --- the case table ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    op: str
    build: Callable[[Any], tuple[tuple, dict]]
    returns: str = "new"  # "new", "self" (in-place: args[0]) or "out" (kwargs["out"])
    warns: bool = False  # an out= tensor with elements gets resized

    def args(self, maker):
        return self.build(maker)


F = (3, 1)  # strides of a (3, 4) float tensor in column-major ("Fortran") order, i.e. x.t() of (4, 3)
CASES: list[Case] = []


def case(id, op, build, **kw):
    CASES.append(Case(id, op, build, **kw))


# pointwise arithmetic: the four ops share their overload set
for name in ("add", "sub", "mul", "div"):
    case(f"{name}.Tensor", f"{name}.Tensor", lambda T: ((T.t((3, 4)), T.t((3, 4))), {}))
    case(f"{name}.Tensor-broadcast-promote", f"{name}.Tensor",
         lambda T: ((T.t((3, 1), "int64"), T.t((4,))), {}))
    case(f"{name}.Tensor-column-major", f"{name}.Tensor",
         lambda T: ((T.t((3, 4), strides=(1, 3)), T.t((3, 4))), {}))
    case(f"{name}.Tensor-int", f"{name}.Tensor", lambda T: ((T.t((2, 3), "int64"), T.t((2, 3), "int64")), {}))
    case(f"{name}.Scalar", f"{name}.Scalar", lambda T: ((T.t((3, 4), strides=(1, 3)), 2), {}))
    case(f"{name}.Scalar-float", f"{name}.Scalar", lambda T: ((T.t((3, 4), "int64"), 2.5), {}))
    case(f"{name}_.Tensor", f"{name}_.Tensor", lambda T: ((T.t((3, 4)), T.t((4,))), {}), returns="self")
    case(f"{name}_.Scalar", f"{name}_.Scalar", lambda T: ((T.t((3, 4), strides=(1, 3)), 2), {}),
         returns="self")
    case(f"{name}.out-resized", f"{name}.out",
         lambda T: ((T.t((3, 4), strides=(1, 3)), T.t((3, 4), strides=(1, 3))), {"out": T.t((0,))}),
         returns="out")
    case(f"{name}.out-kept", f"{name}.out",
         lambda T: ((T.t((3, 4)), T.t((3, 4))), {"out": T.t((3, 4), "float64", strides=(1, 3))}),
         returns="out")
case("add.Tensor-alpha", "add.Tensor", lambda T: ((T.t((2, 3)), T.t((2, 3))), {"alpha": 2}))
case("add.out-warns", "add.out", lambda T: ((T.t((3, 4)), T.t((3, 4))), {"out": T.t((5,))}),
     returns="out", warns=True)
case("mul.Tensor-0dim-first", "mul.Tensor", lambda T: ((T.t((), "float64"), T.t((3, 4), strides=(1, 3))), {}))
case("mul.Tensor-expanded", "mul.Tensor",
     lambda T: ((T.t((3, 4), strides=(0, 1)), T.t((3, 4), strides=(1, 3))), {}))
case("add.Tensor-permuted-3d", "add.Tensor",
     lambda T: ((T.t((4, 2, 3), strides=(1, 12, 4)), T.t((4, 1, 3))), {}))
case("add.Tensor-sliced", "add.Tensor",
     lambda T: ((T.t((4, 3), strides=(6, 2)), T.t((4, 3), strides=(6, 2))), {}))
case("add.Tensor-channels-last", "add.Tensor",
     lambda T: ((T.t((2, 3, 4, 5), strides=(60, 1, 15, 3)), T.t((2, 3, 4, 5), strides=(60, 1, 15, 3))), {}))
case("add.Tensor-mixed-itemsize", "add.Tensor",
     lambda T: ((T.t((3, 4), "int8", strides=(1, 3)), T.t((3, 4), "float64")), {}))

# pow
case("pow.Tensor_Tensor", "pow.Tensor_Tensor", lambda T: ((T.t((3, 4), "int64", strides=F), T.t((4,))), {}))
case("pow.Tensor_Scalar", "pow.Tensor_Scalar", lambda T: ((T.t((3, 4), "int64"), 2), {}))
case("pow.Tensor_Scalar-float", "pow.Tensor_Scalar", lambda T: ((T.t((3, 4), "int64", strides=F), 2.5), {}))
case("pow.Scalar", "pow.Scalar", lambda T: ((2, T.t((3, 4), strides=F)), {}))
case("pow.Scalar-int", "pow.Scalar", lambda T: ((2, T.t((3, 4), "int64")), {}))
case("pow_.Scalar", "pow_.Scalar", lambda T: ((T.t((3, 4), strides=F), 2), {}), returns="self")
case("pow_.Tensor", "pow_.Tensor", lambda T: ((T.t((3, 4)), T.t((4,), "int64")), {}), returns="self")

# unary
for name in ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"):
    case(name, name, lambda T: ((T.t((3, 4), strides=F),), {}))
    case(f"{name}_", f"{name}_", lambda T: ((T.t((3, 4), strides=F),), {}), returns="self")
    if name != "relu":
        case(f"{name}.out", f"{name}.out", lambda T: ((T.t((3, 4), strides=F),), {"out": T.t((0,))}),
             returns="out")
for name in ("exp", "sigmoid", "sqrt"):
    case(f"{name}-int", name, lambda T: ((T.t((2, 3), "int64"),), {}))
case("exp.out-double", "exp.out", lambda T: ((T.t((3, 4)),), {"out": T.t((3, 4), "float64")}), returns="out")
case("abs-complex", "abs", lambda T: ((T.t((3, 4), "complex64", strides=F),), {}))
case("abs.out-complex", "abs.out", lambda T: ((T.t((3,), "complex64"),), {"out": T.t((0,))}), returns="out")
case("neg-expanded", "neg", lambda T: ((T.t((3, 4), strides=(1, 0)),), {}))
case("neg-sliced", "neg", lambda T: ((T.t((4, 3), strides=(6, 2)),), {}))
case("neg-sliced-transposed", "neg", lambda T: ((T.t((4, 3), strides=(1, 8)),), {}))
case("relu-int", "relu", lambda T: ((T.t((3, 4), "int64"),), {}))

# clamp, where, comparisons
case("clamp-int-float-bound", "clamp", lambda T: ((T.t((3, 4), "int64"), 0.5), {}))
case("clamp", "clamp", lambda T: ((T.t((3, 4), strides=F), 0, 1), {}))
case("clamp-max-only", "clamp", lambda T: ((T.t((3, 4), "int64"),), {"max": 2}))
case("clamp-bool", "clamp", lambda T: ((T.t((3, 4), "bool_"), 0), {}))
case("clamp_", "clamp_", lambda T: ((T.t((3, 4), strides=F), 0), {}), returns="self")
case("clamp_min", "clamp_min", lambda T: ((T.t((3, 4), "int64"), 0.5), {}))
case("clamp_min-float", "clamp_min", lambda T: ((T.t((3, 4), strides=F), 0), {}))
case("clamp_min_", "clamp_min_", lambda T: ((T.t((3, 4)), 0.5), {}), returns="self")
case("clamp.Tensor", "clamp.Tensor", lambda T: ((T.t((3, 4), "int64", strides=F), T.t((4,)), T.t((3, 1))), {}))
case("clamp.Tensor-min-only", "clamp.Tensor", lambda T: ((T.t((3, 4), strides=F), T.t(())), {}))
case("clamp_.Tensor", "clamp_.Tensor", lambda T: ((T.t((3, 4), strides=F), None, T.t((4,))), {}),
     returns="self")
case("clamp_min.Tensor", "clamp_min.Tensor", lambda T: ((T.t((3, 4), "int64"), T.t((3, 1), "int32")), {}))
case("clamp_min_.Tensor", "clamp_min_.Tensor", lambda T: ((T.t((3, 4), strides=F), T.t((4,))), {}),
     returns="self")
case("clamp_max", "clamp_max", lambda T: ((T.t((3, 4), "int64"), 0.5), {}))
case("clamp_max_", "clamp_max_", lambda T: ((T.t((3, 4), strides=F), 0.5), {}), returns="self")
case("clamp_max.Tensor", "clamp_max.Tensor", lambda T: ((T.t((3, 4), "int32", strides=F), T.t((3, 1), "int64")), {}))
case("clamp_max_.Tensor", "clamp_max_.Tensor", lambda T: ((T.t((3, 4)), T.t((4,))), {}), returns="self")
case("maximum", "maximum", lambda T: ((T.t((3, 1), "int64"), T.t((4,), strides=(1,))), {}))
case("minimum", "minimum", lambda T: ((T.t((3, 4), strides=F), T.t((3, 4), "float64")), {}))
case("div.Tensor_mode", "div.Tensor_mode",
     lambda T: ((T.t((3, 4), "int64", strides=F), T.t((4,), "int64")), {"rounding_mode": "floor"}))
case("div.Tensor_mode-none", "div.Tensor_mode",
     lambda T: ((T.t((3, 4), "int64"), T.t((4,), "int64")), {"rounding_mode": None}))
case("div.Scalar_mode", "div.Scalar_mode", lambda T: ((T.t((3, 4), "int64"), 2), {"rounding_mode": "trunc"}))
case("div_.Tensor_mode", "div_.Tensor_mode",
     lambda T: ((T.t((3, 4), strides=F), T.t((4,))), {"rounding_mode": "trunc"}), returns="self")
case("div_.Scalar_mode", "div_.Scalar_mode",
     lambda T: ((T.t((3, 4), "int64"), 3), {"rounding_mode": "floor"}), returns="self")
case("rsub.Tensor", "rsub.Tensor", lambda T: ((T.t((3, 4), strides=F), T.t((4,), "int64")), {"alpha": 2}))
case("rsub.Scalar", "rsub.Scalar", lambda T: ((T.t((3, 4), "int64", strides=F), 2.5), {}))
case("reciprocal", "reciprocal", lambda T: ((T.t((3, 4), strides=F),), {}))
case("reciprocal-int", "reciprocal", lambda T: ((T.t((3, 4), "int64"),), {}))
case("where.self", "where.self",
     lambda T: ((T.t((3, 1), "bool_"), T.t((4,), "int64"), T.t((3, 4), strides=F)), {}))
case("where.self-column-major", "where.self",
     lambda T: ((T.t((3, 4), "bool_", strides=F), T.t((3, 4), strides=F), T.t((3, 4), strides=F)), {}))
for name in ("eq", "ne", "lt", "le", "gt", "ge"):
    case(f"{name}.Tensor", f"{name}.Tensor", lambda T: ((T.t((3, 1), "int64"), T.t((4,))), {}))
    case(f"{name}.Scalar", f"{name}.Scalar", lambda T: ((T.t((3, 4), strides=F), 1.5), {}))
    case(f"{name}_.Tensor", f"{name}_.Tensor", lambda T: ((T.t((3, 4), "int64"), T.t((4,))), {}), returns="self")
    case(f"{name}_.Scalar", f"{name}_.Scalar", lambda T: ((T.t((3, 4), strides=F), 1.5), {}), returns="self")

# reductions
case("sum", "sum", lambda T: ((T.t((3, 4), "int64"),), {}))
case("sum-bool", "sum", lambda T: ((T.t((3, 4), "bool_"),), {}))
case("sum-dtype", "sum", lambda T: ((T.t((3, 4)),), {"dtype": T.dtype("float64")}))
case("sum.dim_IntList", "sum.dim_IntList", lambda T: ((T.t((3, 4), strides=F), [0], True), {}))
case("sum.dim_IntList-none", "sum.dim_IntList", lambda T: ((T.t((3, 4)), None), {}))
case("sum.dim_IntList-empty", "sum.dim_IntList", lambda T: ((T.t((3, 4)), []), {}))
case("sum.dim_IntList-negative", "sum.dim_IntList", lambda T: ((T.t((2, 3, 4)), [-1, 0]), {}))
case("sum.dim_IntList-0dim", "sum.dim_IntList", lambda T: ((T.t(()), [0]), {}))
case("mean", "mean", lambda T: ((T.t((3, 4)),), {}))
case("mean-dtype", "mean", lambda T: ((T.t((3, 4), "int64"),), {"dtype": T.dtype("float64")}))
case("mean.dim", "mean.dim", lambda T: ((T.t((3, 4), strides=F), [1], True), {}))
case("amax", "amax", lambda T: ((T.t((3, 4), strides=F),), {}))
case("amax-dim", "amax", lambda T: ((T.t((3, 4), strides=F), [0], True), {}))
case("amax-empty-other-dim", "amax", lambda T: ((T.t((0, 3)), [1]), {}))
case("max", "max", lambda T: ((T.t((3, 4), "int64"),), {}))
case("max.dim", "max.dim", lambda T: ((T.t((3, 4), strides=F), 1), {}))
case("max.dim-keepdim", "max.dim", lambda T: ((T.t((3, 4), strides=F), 1, True), {}))
case("max.dim-0dim", "max.dim", lambda T: ((T.t(()), 0), {}))
case("argmax", "argmax", lambda T: ((T.t((3, 4), strides=F),), {}))
case("argmax-keepdim", "argmax", lambda T: ((T.t((3, 4)), None, True), {}))
case("argmax-dim", "argmax", lambda T: ((T.t((3, 4)), 0, True), {}))

# linear algebra, softmax, losses
case("mm", "mm", lambda T: ((T.t((3, 4)), T.t((4, 5))), {}))
case("mm-column-major", "mm", lambda T: ((T.t((3, 4), strides=F), T.t((4, 5), strides=(1, 4))), {}))
case("bmm", "bmm", lambda T: ((T.t((2, 3, 4)), T.t((2, 4, 5))), {}))
case("_softmax", "_softmax", lambda T: ((T.t((3, 4), strides=F), 1, False), {}))
case("_log_softmax", "_log_softmax", lambda T: ((T.t((2, 3, 4)), -1, False), {}))
case("mse_loss", "mse_loss", lambda T: ((T.t((3, 4)), T.t((3, 4))), {}))
case("mse_loss-none", "mse_loss", lambda T: ((T.t((3, 4), strides=F), T.t((3, 4)), 0), {}))
case("mse_loss-none-broadcast", "mse_loss", lambda T: ((T.t((3, 1)), T.t((4,)), 0), {}))
case("mse_loss-sum-promote", "mse_loss", lambda T: ((T.t((3, 4), "int64"), T.t((3, 4)), 2), {}))
case("nll_loss_forward", "nll_loss_forward",
     lambda T: ((T.t((3, 5)), T.t((3,), "int64", fill="zeros"), None, 1, -100), {}))
case("nll_loss_forward-none", "nll_loss_forward",
     lambda T: ((T.t((3, 5)), T.t((3,), "int64", fill="zeros"), None, 0, -100), {}))
case("nll_loss_forward-1d", "nll_loss_forward",
     lambda T: ((T.t((5,), "float64"), T.t((), "int64", fill="zeros"), None, 0, -100), {}))
case("nll_loss_forward-weight", "nll_loss_forward",
     lambda T: ((T.t((5, 3), strides=(1, 5)), T.t((5,), "int64", fill="zeros"), T.t((3,)), 2, -100), {}))

# joining
case("cat", "cat", lambda T: (([T.t((2, 4)), T.t((3, 4), strides=F)], 0), {}))
case("cat-promote", "cat", lambda T: (([T.t((3, 4), "int64"), T.t((3, 2))], 1), {}))
case("cat-legacy-empty", "cat", lambda T: (([T.t((3, 4)), T.t((0,), "float64")],), {}))
case("cat-negative-dim", "cat", lambda T: (([T.t((3, 4), strides=F), T.t((3, 4), strides=F)], -1), {}))
case("cat-channels-last", "cat",
     lambda T: (([T.t((2, 3, 4, 5), strides=(60, 1, 15, 3))] * 2, 1), {}))
case("stack", "stack", lambda T: (([T.t((3, 4)), T.t((3, 4), "int64")], 1), {}))
case("stack-last", "stack", lambda T: (([T.t((3, 4), strides=F), T.t((3, 4))], -1), {}))
case("stack-channels-last", "stack",
     lambda T: (([T.t((2, 3, 4, 5), strides=(60, 1, 15, 3))] * 2, 1), {}))

# copies
case("clone", "clone", lambda T: ((T.t((3, 4), strides=F),), {}))
case("clone-sliced", "clone", lambda T: ((T.t((4, 3), strides=(6, 2)),), {}))
case("clone-expanded", "clone", lambda T: ((T.t((3, 4), strides=(1, 0)),), {}))
case("clone-contiguous", "clone",
     lambda T: ((T.t((3, 4), strides=F),), {"memory_format": T.mf("contiguous")}))
case("clone-channels-last", "clone",
     lambda T: ((T.t((2, 3, 4, 5)),), {"memory_format": T.mf("channels_last")}))
case("copy_", "copy_", lambda T: ((T.t((3, 4), strides=F), T.t((4,), "int64")), {}), returns="self")
case("_to_copy", "_to_copy", lambda T: ((T.t((3, 4), strides=F),), {"dtype": T.dtype("float64")}))
case("_to_copy-same-device", "_to_copy", lambda T: ((T.t((3, 4), strides=F),), {"device": T.device}))
case("_to_copy-contiguous", "_to_copy",
     lambda T: ((T.t((3, 4), strides=F),), {"memory_format": T.mf("contiguous")}))
case("_to_copy-sliced", "_to_copy", lambda T: ((T.t((4, 3), strides=(6, 2)),), {}))
case("fill_.Scalar", "fill_.Scalar", lambda T: ((T.t((3, 4), strides=F), 2.5), {}), returns="self")
case("fill_.Scalar-int", "fill_.Scalar", lambda T: ((T.t((3, 4), "int64"), 2.5), {}), returns="self")
case("fill_.Tensor", "fill_.Tensor", lambda T: ((T.t((3, 4), strides=F), T.t(())), {}), returns="self")
case("zero_", "zero_", lambda T: ((T.t((3, 4), strides=F),), {}), returns="self")

# views
case("view", "view", lambda T: ((T.t((3, 4)), [2, -1]), {}))
case("view-column-major", "view", lambda T: ((T.t((3, 4), strides=F), [3, 2, 2]), {}))
case("view-offset", "view", lambda T: ((T.t((2, 2, 4), strides=(12, 4, 1), offset=4), [2, 8]), {}))
case("view-scalar", "view", lambda T: ((T.t((1,)), []), {}))
case("view-empty", "view", lambda T: ((T.t((0, 3)), [-1, 3]), {}))
case("_unsafe_view", "_unsafe_view", lambda T: ((T.t((3, 4)), [2, -1]), {}))
case("_reshape_alias", "_reshape_alias",
     lambda T: ((T.t((2, 2, 4), strides=(12, 4, 1), offset=4), [2, 8], [12, 1]), {}))
case("t", "t", lambda T: ((T.t((3, 4)),), {}))
case("t-1d", "t", lambda T: ((T.t((3,)),), {}))
case("transpose.int", "transpose.int", lambda T: ((T.t((2, 3, 4)), 0, -1), {}))
case("permute", "permute", lambda T: ((T.t((2, 3, 4)), [2, 0, 1]), {}))
case("expand", "expand", lambda T: ((T.t((3, 1)), [2, 3, 4]), {}))
case("expand-minus-one", "expand", lambda T: ((T.t((3, 1)), [-1, 4]), {}))
case("expand-new-unit-dim", "expand", lambda T: ((T.t((3, 1)), [1, 3, 1]), {}))
case("expand-0dim", "expand", lambda T: ((T.t(()), [1, 1]), {}))
case("squeeze", "squeeze", lambda T: ((T.t((1, 3, 1, 2)),), {}))
case("squeeze-permuted", "squeeze", lambda T: ((T.t((2, 1, 3), strides=(1, 2, 2)),), {}))
case("squeeze.dim", "squeeze.dim", lambda T: ((T.t((1, 3, 1, 2)), 2), {}))
case("squeeze.dim-not-one", "squeeze.dim", lambda T: ((T.t((1, 3, 1, 2)), 1), {}))
case("squeeze.dims", "squeeze.dims", lambda T: ((T.t((1, 3, 1, 2)), [0, -2, 1]), {}))
case("squeeze.dims-transposed", "squeeze.dims", lambda T: ((T.t((2, 1, 3), strides=(1, 6, 2)), [1]), {}))
case("unsqueeze", "unsqueeze", lambda T: ((T.t((3, 4), strides=F), 1), {}))
case("unsqueeze-front", "unsqueeze", lambda T: ((T.t((3, 4), strides=F), 0), {}))
case("unsqueeze-back", "unsqueeze", lambda T: ((T.t((3, 4), strides=F), -1), {}))
case("select.int", "select.int", lambda T: ((T.t((3, 4), strides=F), 1, 2), {}))
case("select.int-negative", "select.int", lambda T: ((T.t((3, 4), strides=F), 1, -1), {}))
case("slice.Tensor", "slice.Tensor", lambda T: ((T.t((2, 3, 4)), 2, 1, None, 2), {}))
case("slice.Tensor-defaults", "slice.Tensor", lambda T: ((T.t((2, 3, 4)),), {}))
case("slice.Tensor-negative", "slice.Tensor", lambda T: ((T.t((2, 3, 4)), 1, -2, -1), {}))
case("slice.Tensor-clamped", "slice.Tensor", lambda T: ((T.t((2, 3, 4)), 1, -10, 100), {}))
case("slice.Tensor-empty", "slice.Tensor", lambda T: ((T.t((2, 3, 4)), 1, 2, 1), {}))
case("as_strided", "as_strided", lambda T: ((T.t((2, 3, 4)), [2, 2], [1, 3], 1), {}))
case("as_strided-inherits-offset", "as_strided",
     lambda T: ((T.t((3, 4), offset=12), [2, 2], [1, 3]), {}))
case("alias", "alias", lambda T: ((T.t((3, 4), offset=12),), {}))

# factories (the device argument picks the backend through BackendSelect)
case("empty.memory_format", "empty.memory_format", lambda T: (([2, 3],), {"device": T.device}))
case("empty.memory_format-zero-size", "empty.memory_format", lambda T: (([2, 0, 3],), {"device": T.device}))
case("empty.memory_format-channels-last", "empty.memory_format",
     lambda T: (([2, 3, 4, 5],), {"device": T.device, "memory_format": T.mf("channels_last")}))
case("empty.memory_format-dtype", "empty.memory_format",
     lambda T: (([2, 3],), {"dtype": T.dtype("int64"), "device": T.device}))
case("empty_strided", "empty_strided", lambda T: (([2, 3], [1, 2]), {"device": T.device}))
case("zeros", "zeros", lambda T: (([2, 3],), {"device": T.device}))
case("ones", "ones", lambda T: (([2, 3],), {"dtype": T.dtype("int32"), "device": T.device}))
case("full-int", "full", lambda T: (([2], 3), {"device": T.device}))
case("full-float", "full", lambda T: (([2], 3.0), {"device": T.device}))
case("full-bool", "full", lambda T: (([2], True), {"device": T.device}))
case("full-complex", "full", lambda T: (([2], 1j), {"device": T.device}))
case("arange.start_step", "arange.start_step", lambda T: ((0, 10, 3), {"device": T.device}))
case("arange.start_step-float", "arange.start_step", lambda T: ((0, 10, 0.5), {"device": T.device}))
case("arange.start_step-down", "arange.start_step", lambda T: ((10, 0, -3), {"device": T.device}))
case("arange.start_step-dtype", "arange.start_step",
     lambda T: ((0, 10, 1), {"dtype": T.dtype("float64"), "device": T.device}))
case("linspace", "linspace", lambda T: ((0, 10, 5), {"device": T.device}))
case("linspace-dtype", "linspace", lambda T: ((0, 10, 5), {"dtype": T.dtype("int64"), "device": T.device}))
case("arange.start_out-resized", "arange.start_out", lambda T: ((0, 10, 3), {"out": T.t((3,), "int64")}),
     returns="out", warns=True)
case("linspace.out-kept-shape", "linspace.out", lambda T: ((0, 1, 6), {"out": T.t((2, 3))}), returns="out")
case("arange", "arange", lambda T: ((2.5,), {"device": T.device}))
case("arange.start", "arange.start", lambda T: ((-2, 3), {"device": T.device}))
case("arange.out", "arange.out", lambda T: ((4,), {"out": T.t((0,), "int32")}), returns="out")
case("rand", "rand", lambda T: (([2, 3],), {"device": T.device}))
case("randn", "randn", lambda T: (([2, 3],), {"dtype": T.dtype("float64"), "device": T.device}))
case("scalar_tensor", "scalar_tensor", lambda T: ((5,), {"device": T.device}))
case("eye", "eye", lambda T: ((3,), {"device": T.device}))
case("eye.m-int64", "eye.m", lambda T: ((2, 3), {"dtype": T.dtype("int64"), "device": T.device}))
case("eye.out-resized", "eye.out", lambda T: ((2,), {"out": T.t((5,))}), returns="out")
case("eye.m_out-kept-shape", "eye.m_out", lambda T: ((2, 3), {"out": T.t((2, 3))}), returns="out")
case("logspace-int32", "logspace", lambda T: ((0, 2, 5, 2.0), {"dtype": T.dtype("int32"), "device": T.device}))
case("logspace.out-resized", "logspace.out", lambda T: ((0, 2, 4), {"out": T.t((0,))}), returns="out")
case("scalar_tensor-dtype", "scalar_tensor",
     lambda T: ((5,), {"dtype": T.dtype("int64"), "device": T.device}))

CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS), "duplicate case ids"

# Recorded from torch 2.13.0 CPU (shape, dtype, strides, storage offset); regenerate with
# `python tests/behavior/test_meta_backend.py` and check the diff. test_expectations_match_torch
# re-verifies them live in the differential run.
EXPECTED: dict[str, Any] = {'add.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'add.Tensor-broadcast-promote': ((3, 4), 'float32', (4, 1), 0),
 'add.Tensor-column-major': ((3, 4), 'float32', (1, 3), 0),
 'add.Tensor-int': ((2, 3), 'int64', (3, 1), 0),
 'add.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'add.Scalar-float': ((3, 4), 'float32', (4, 1), 0),
 'add_.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'add_.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'add.out-resized': ((3, 4), 'float32', (1, 3), 0),
 'add.out-kept': ((3, 4), 'float64', (1, 3), 0),
 'sub.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'sub.Tensor-broadcast-promote': ((3, 4), 'float32', (4, 1), 0),
 'sub.Tensor-column-major': ((3, 4), 'float32', (1, 3), 0),
 'sub.Tensor-int': ((2, 3), 'int64', (3, 1), 0),
 'sub.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'sub.Scalar-float': ((3, 4), 'float32', (4, 1), 0),
 'sub_.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'sub_.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'sub.out-resized': ((3, 4), 'float32', (1, 3), 0),
 'sub.out-kept': ((3, 4), 'float64', (1, 3), 0),
 'mul.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'mul.Tensor-broadcast-promote': ((3, 4), 'float32', (4, 1), 0),
 'mul.Tensor-column-major': ((3, 4), 'float32', (1, 3), 0),
 'mul.Tensor-int': ((2, 3), 'int64', (3, 1), 0),
 'mul.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'mul.Scalar-float': ((3, 4), 'float32', (4, 1), 0),
 'mul_.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'mul_.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'mul.out-resized': ((3, 4), 'float32', (1, 3), 0),
 'mul.out-kept': ((3, 4), 'float64', (1, 3), 0),
 'div.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'div.Tensor-broadcast-promote': ((3, 4), 'float32', (4, 1), 0),
 'div.Tensor-column-major': ((3, 4), 'float32', (1, 3), 0),
 'div.Tensor-int': ((2, 3), 'float32', (3, 1), 0),
 'div.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'div.Scalar-float': ((3, 4), 'float32', (4, 1), 0),
 'div_.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'div_.Scalar': ((3, 4), 'float32', (1, 3), 0),
 'div.out-resized': ((3, 4), 'float32', (1, 3), 0),
 'div.out-kept': ((3, 4), 'float64', (1, 3), 0),
 'add.Tensor-alpha': ((2, 3), 'float32', (3, 1), 0),
 'add.out-warns': ((3, 4), 'float32', (4, 1), 0),
 'mul.Tensor-0dim-first': ((3, 4), 'float32', (1, 3), 0),
 'mul.Tensor-expanded': ((3, 4), 'float32', (1, 3), 0),
 'add.Tensor-permuted-3d': ((4, 2, 3), 'float32', (1, 12, 4), 0),
 'add.Tensor-sliced': ((4, 3), 'float32', (3, 1), 0),
 'add.Tensor-channels-last': ((2, 3, 4, 5), 'float32', (60, 1, 15, 3), 0),
 'add.Tensor-mixed-itemsize': ((3, 4), 'float64', (1, 3), 0),
 'pow.Tensor_Tensor': ((3, 4), 'float32', (4, 1), 0),
 'pow.Tensor_Scalar': ((3, 4), 'int64', (4, 1), 0),
 'pow.Tensor_Scalar-float': ((3, 4), 'float32', (4, 1), 0),
 'pow.Scalar': ((3, 4), 'float32', (4, 1), 0),
 'pow.Scalar-int': ((3, 4), 'int64', (4, 1), 0),
 'pow_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'pow_.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'neg': ((3, 4), 'float32', (4, 1), 0),
 'neg_': ((3, 4), 'float32', (3, 1), 0),
 'neg.out': ((3, 4), 'float32', (4, 1), 0),
 'abs': ((3, 4), 'float32', (4, 1), 0),
 'abs_': ((3, 4), 'float32', (3, 1), 0),
 'abs.out': ((3, 4), 'float32', (4, 1), 0),
 'exp': ((3, 4), 'float32', (4, 1), 0),
 'exp_': ((3, 4), 'float32', (3, 1), 0),
 'exp.out': ((3, 4), 'float32', (4, 1), 0),
 'log': ((3, 4), 'float32', (4, 1), 0),
 'log_': ((3, 4), 'float32', (3, 1), 0),
 'log.out': ((3, 4), 'float32', (4, 1), 0),
 'sqrt': ((3, 4), 'float32', (4, 1), 0),
 'sqrt_': ((3, 4), 'float32', (3, 1), 0),
 'sqrt.out': ((3, 4), 'float32', (4, 1), 0),
 'sin': ((3, 4), 'float32', (4, 1), 0),
 'sin_': ((3, 4), 'float32', (3, 1), 0),
 'sin.out': ((3, 4), 'float32', (4, 1), 0),
 'cos': ((3, 4), 'float32', (4, 1), 0),
 'cos_': ((3, 4), 'float32', (3, 1), 0),
 'cos.out': ((3, 4), 'float32', (4, 1), 0),
 'tanh': ((3, 4), 'float32', (4, 1), 0),
 'tanh_': ((3, 4), 'float32', (3, 1), 0),
 'tanh.out': ((3, 4), 'float32', (4, 1), 0),
 'sigmoid': ((3, 4), 'float32', (4, 1), 0),
 'sigmoid_': ((3, 4), 'float32', (3, 1), 0),
 'sigmoid.out': ((3, 4), 'float32', (4, 1), 0),
 'relu': ((3, 4), 'float32', (4, 1), 0),
 'relu_': ((3, 4), 'float32', (3, 1), 0),
 'exp-int': ((2, 3), 'float32', (3, 1), 0),
 'sigmoid-int': ((2, 3), 'float32', (3, 1), 0),
 'sqrt-int': ((2, 3), 'float32', (3, 1), 0),
 'exp.out-double': ((3, 4), 'float64', (4, 1), 0),
 'abs-complex': ((3, 4), 'float32', (4, 1), 0),
 'abs.out-complex': ((3,), 'float32', (1,), 0),
 'neg-expanded': ((3, 4), 'float32', (4, 1), 0),
 'neg-sliced': ((4, 3), 'float32', (3, 1), 0),
 'neg-sliced-transposed': ((4, 3), 'float32', (1, 4), 0),
 'relu-int': ((3, 4), 'int64', (4, 1), 0),
 'clamp-int-float-bound': ((3, 4), 'float32', (4, 1), 0),
 'clamp': ((3, 4), 'float32', (4, 1), 0),
 'clamp-max-only': ((3, 4), 'int64', (4, 1), 0),
 'clamp-bool': ((3, 4), 'int64', (4, 1), 0),
 'clamp_': ((3, 4), 'float32', (3, 1), 0),
 'clamp_min': ((3, 4), 'float32', (4, 1), 0),
 'clamp_min-float': ((3, 4), 'float32', (4, 1), 0),
 'clamp_min_': ((3, 4), 'float32', (4, 1), 0),
 'where.self': ((3, 4), 'float32', (4, 1), 0),
 'where.self-column-major': ((3, 4), 'float32', (4, 1), 0),
 'eq.Tensor': ((3, 4), 'bool_', (4, 1), 0),
 'eq.Scalar': ((3, 4), 'bool_', (4, 1), 0),
 'eq_.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'eq_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'ne.Tensor': ((3, 4), 'bool_', (4, 1), 0),
 'ne.Scalar': ((3, 4), 'bool_', (4, 1), 0),
 'ne_.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'ne_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'lt.Tensor': ((3, 4), 'bool_', (4, 1), 0),
 'lt.Scalar': ((3, 4), 'bool_', (4, 1), 0),
 'lt_.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'lt_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'le.Tensor': ((3, 4), 'bool_', (4, 1), 0),
 'le.Scalar': ((3, 4), 'bool_', (4, 1), 0),
 'le_.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'le_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'gt.Tensor': ((3, 4), 'bool_', (4, 1), 0),
 'gt.Scalar': ((3, 4), 'bool_', (4, 1), 0),
 'gt_.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'gt_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'ge.Tensor': ((3, 4), 'bool_', (4, 1), 0),
 'ge.Scalar': ((3, 4), 'bool_', (4, 1), 0),
 'ge_.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'ge_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'sum': ((), 'int64', (), 0),
 'sum-bool': ((), 'int64', (), 0),
 'sum-dtype': ((), 'float64', (), 0),
 'sum.dim_IntList': ((1, 4), 'float32', (4, 1), 0),
 'sum.dim_IntList-none': ((), 'float32', (), 0),
 'sum.dim_IntList-empty': ((), 'float32', (), 0),
 'sum.dim_IntList-negative': ((3,), 'float32', (1,), 0),
 'sum.dim_IntList-0dim': ((), 'float32', (), 0),
 'mean': ((), 'float32', (), 0),
 'mean-dtype': ((), 'float64', (), 0),
 'mean.dim': ((3, 1), 'float32', (1, 1), 0),
 'amax': ((), 'float32', (), 0),
 'amax-dim': ((1, 4), 'float32', (4, 1), 0),
 'amax-empty-other-dim': ((0,), 'float32', (1,), 0),
 'max': ((), 'int64', (), 0),
 'max.dim': [((3,), 'float32', (1,), 0), ((3,), 'int64', (1,), 0)],
 'max.dim-keepdim': [((3, 1), 'float32', (1, 1), 0), ((3, 1), 'int64', (1, 1), 0)],
 'max.dim-0dim': [((), 'float32', (), 0), ((), 'int64', (), 0)],
 'argmax': ((), 'int64', (), 0),
 'argmax-keepdim': ((1, 1), 'int64', (1, 1), 0),
 'argmax-dim': ((1, 4), 'int64', (4, 1), 0),
 'mm': ((3, 5), 'float32', (5, 1), 0),
 'mm-column-major': ((3, 5), 'float32', (5, 1), 0),
 'bmm': ((2, 3, 5), 'float32', (15, 5, 1), 0),
 '_softmax': ((3, 4), 'float32', (4, 1), 0),
 '_log_softmax': ((2, 3, 4), 'float32', (12, 4, 1), 0),
 'mse_loss': ((), 'float32', (), 0),
 'mse_loss-none': ((3, 4), 'float32', (4, 1), 0),
 'mse_loss-none-broadcast': ((3, 4), 'float32', (4, 1), 0),
 'mse_loss-sum-promote': ((), 'float32', (), 0),
 'nll_loss_forward': [((), 'float32', (), 0), ((), 'float32', (), 0)],
 'nll_loss_forward-none': [((3,), 'float32', (1,), 0), ((), 'float32', (), 0)],
 'nll_loss_forward-1d': [((), 'float64', (), 0), ((), 'float64', (), 0)],
 'nll_loss_forward-weight': [((), 'float32', (), 0), ((), 'float32', (), 0)],
 'cat': ((5, 4), 'float32', (4, 1), 0),
 'cat-promote': ((3, 6), 'float32', (6, 1), 0),
 'cat-legacy-empty': ((3, 4), 'float64', (4, 1), 0),
 'cat-negative-dim': ((3, 8), 'float32', (8, 1), 0),
 'cat-channels-last': ((2, 6, 4, 5), 'float32', (120, 1, 30, 6), 0),
 'stack': ((3, 2, 4), 'float32', (8, 4, 1), 0),
 'stack-last': ((3, 4, 2), 'float32', (8, 2, 1), 0),
 'stack-channels-last': ((2, 2, 3, 4, 5), 'float32', (120, 3, 1, 30, 6), 0),
 'clone': ((3, 4), 'float32', (4, 1), 0),
 'clone-sliced': ((4, 3), 'float32', (3, 1), 0),
 'clone-expanded': ((3, 4), 'float32', (4, 1), 0),
 'clone-contiguous': ((3, 4), 'float32', (4, 1), 0),
 'clone-channels-last': ((2, 3, 4, 5), 'float32', (60, 1, 15, 3), 0),
 'copy_': ((3, 4), 'float32', (3, 1), 0),
 '_to_copy': ((3, 4), 'float64', (4, 1), 0),
 '_to_copy-same-device': ((3, 4), 'float32', (4, 1), 0),
 '_to_copy-contiguous': ((3, 4), 'float32', (4, 1), 0),
 '_to_copy-sliced': ((4, 3), 'float32', (3, 1), 0),
 'fill_.Scalar': ((3, 4), 'float32', (3, 1), 0),
 'fill_.Scalar-int': ((3, 4), 'int64', (4, 1), 0),
 'fill_.Tensor': ((3, 4), 'float32', (3, 1), 0),
 'zero_': ((3, 4), 'float32', (3, 1), 0),
 'view': ((2, 6), 'float32', (6, 1), 0),
 'view-column-major': ((3, 2, 2), 'float32', (3, 2, 1), 0),
 'view-offset': ((2, 8), 'float32', (12, 1), 4),
 'view-scalar': ((), 'float32', (), 0),
 'view-empty': ((0, 3), 'float32', (3, 1), 0),
 '_unsafe_view': ((2, 6), 'float32', (6, 1), 0),
 '_reshape_alias': ((2, 8), 'float32', (12, 1), 4),
 't': ((4, 3), 'float32', (1, 4), 0),
 't-1d': ((3,), 'float32', (1,), 0),
 'transpose.int': ((4, 3, 2), 'float32', (1, 4, 12), 0),
 'permute': ((4, 2, 3), 'float32', (1, 12, 4), 0),
 'expand': ((2, 3, 4), 'float32', (0, 1, 0), 0),
 'expand-minus-one': ((3, 4), 'float32', (1, 0), 0),
 'expand-new-unit-dim': ((1, 3, 1), 'float32', (3, 1, 1), 0),
 'expand-0dim': ((1, 1), 'float32', (0, 0), 0),
 'squeeze': ((3, 2), 'float32', (2, 1), 0),
 'squeeze-permuted': ((2, 3), 'float32', (1, 2), 0),
 'squeeze.dim': ((1, 3, 2), 'float32', (6, 2, 1), 0),
 'squeeze.dim-not-one': ((1, 3, 1, 2), 'float32', (6, 2, 2, 1), 0),
 'unsqueeze': ((3, 1, 4), 'float32', (3, 4, 1), 0),
 'unsqueeze-front': ((1, 3, 4), 'float32', (9, 3, 1), 0),
 'unsqueeze-back': ((3, 4, 1), 'float32', (3, 1, 1), 0),
 'select.int': ((3,), 'float32', (3,), 2),
 'select.int-negative': ((3,), 'float32', (3,), 3),
 'slice.Tensor': ((2, 3, 2), 'float32', (12, 4, 2), 1),
 'slice.Tensor-defaults': ((2, 3, 4), 'float32', (12, 4, 1), 0),
 'slice.Tensor-negative': ((2, 1, 4), 'float32', (12, 4, 1), 4),
 'slice.Tensor-clamped': ((2, 3, 4), 'float32', (12, 4, 1), 0),
 'slice.Tensor-empty': ((2, 0, 4), 'float32', (12, 4, 1), 8),
 'as_strided': ((2, 2), 'float32', (1, 3), 1),
 'as_strided-inherits-offset': ((2, 2), 'float32', (1, 3), 12),
 'alias': ((3, 4), 'float32', (4, 1), 12),
 'empty.memory_format': ((2, 3), 'float32', (3, 1), 0),
 'empty.memory_format-zero-size': ((2, 0, 3), 'float32', (3, 3, 1), 0),
 'empty.memory_format-channels-last': ((2, 3, 4, 5), 'float32', (60, 1, 15, 3), 0),
 'empty.memory_format-dtype': ((2, 3), 'int64', (3, 1), 0),
 'empty_strided': ((2, 3), 'float32', (1, 2), 0),
 'zeros': ((2, 3), 'float32', (3, 1), 0),
 'ones': ((2, 3), 'int32', (3, 1), 0),
 'full-int': ((2,), 'int64', (1,), 0),
 'full-float': ((2,), 'float32', (1,), 0),
 'full-bool': ((2,), 'bool_', (1,), 0),
 'full-complex': ((2,), 'complex64', (1,), 0),
 'arange.start_step': ((4,), 'int64', (1,), 0),
 'arange.start_step-float': ((20,), 'float32', (1,), 0),
 'arange.start_step-down': ((4,), 'int64', (1,), 0),
 'arange.start_step-dtype': ((10,), 'float64', (1,), 0),
 'linspace': ((5,), 'float32', (1,), 0),
 'linspace-dtype': ((5,), 'int64', (1,), 0),
 'arange.start_out-resized': ((4,), 'int64', (1,), 0),
 'linspace.out-kept-shape': ((2, 3), 'float32', (3, 1), 0),
 'arange': ((3,), 'float32', (1,), 0),
 'arange.start': ((5,), 'int64', (1,), 0),
 'arange.out': ((4,), 'int32', (1,), 0),
 'eye': ((3, 3), 'float32', (3, 1), 0),
 'eye.m-int64': ((2, 3), 'int64', (3, 1), 0),
 'eye.out-resized': ((2, 2), 'float32', (2, 1), 0),
 'eye.m_out-kept-shape': ((2, 3), 'float32', (3, 1), 0),
 'logspace-int32': ((5,), 'int32', (1,), 0),
 'logspace.out-resized': ((4,), 'float32', (1,), 0),
 'rand': ((2, 3), 'float32', (3, 1), 0),
 'randn': ((2, 3), 'float64', (3, 1), 0),
 'scalar_tensor': ((), 'float32', (), 0),
 'scalar_tensor-dtype': ((), 'int64', (), 0),
 'clamp.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'clamp.Tensor-min-only': ((3, 4), 'float32', (4, 1), 0),
 'clamp_.Tensor': ((3, 4), 'float32', (3, 1), 0),
 'clamp_min.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'clamp_min_.Tensor': ((3, 4), 'float32', (3, 1), 0),
 'clamp_max': ((3, 4), 'float32', (4, 1), 0),
 'clamp_max_': ((3, 4), 'float32', (3, 1), 0),
 'clamp_max.Tensor': ((3, 4), 'int64', (4, 1), 0),
 'clamp_max_.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'maximum': ((3, 4), 'float32', (4, 1), 0),
 'minimum': ((3, 4), 'float64', (4, 1), 0),
 'div.Tensor_mode': ((3, 4), 'int64', (4, 1), 0),
 'div.Tensor_mode-none': ((3, 4), 'float32', (4, 1), 0),
 'div.Scalar_mode': ((3, 4), 'int64', (4, 1), 0),
 'div_.Tensor_mode': ((3, 4), 'float32', (3, 1), 0),
 'div_.Scalar_mode': ((3, 4), 'int64', (4, 1), 0),
 'rsub.Tensor': ((3, 4), 'float32', (4, 1), 0),
 'rsub.Scalar': ((3, 4), 'float32', (4, 1), 0),
 'reciprocal': ((3, 4), 'float32', (4, 1), 0),
 'reciprocal-int': ((3, 4), 'float32', (4, 1), 0),
 'squeeze.dims': ((3, 2), 'float32', (2, 1), 0),
 'squeeze.dims-transposed': ((2, 3), 'float32', (1, 2), 0)}


# --- (a) the op table ---------------------------------------------------------------------------------
def _run(case_, maker):
    args, kwargs = case_.args(maker)
    if case_.warns and not isinstance(maker, TorchMaker):
        with pytest.warns(UserWarning, match="An output with one or more elements was resized|The out tensor will "
                                             "be resized"):  # the second: arange's own text
            result = maker.run(case_.op, args, kwargs)
    else:
        result = maker.run(case_.op, args, kwargs)
    return args, kwargs, result


def test_every_meta_kernel_has_a_case():
    """The table covers every kernel of meta/kernels.py (the families and out= kernels test their own)."""
    from dispatchcore_backends.meta.kernels import kernel_table

    covered = {c.op for c in CASES}  # some ops reach meta through a composite (views, clone): cases too
    assert set(kernel_table()) - covered == set()
    assert covered <= {op.qualname[6:] for op in dc.get_dispatcher().operators() if op.qualname.startswith("aten::")}


def test_every_aten_op_runs_on_meta_through_a_kernel_or_a_composite():
    from dispatchcore.native.torch_keys import TORCH_KEYS

    composites = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
    for op in dc.get_dispatcher().operators():
        if not op.qualname.startswith("aten::") or op.schema is None:
            continue
        if not set(TORCH_KEYS[op.qualname[6:]]) & set("MENI"):  # masked_select, ...: none in torch either
            continue
        assert op.has_kernel_for_dispatch_key("Meta") or any(op.has_kernel_for_dispatch_key(k) for k in composites), \
            op.qualname


@pytest.mark.parametrize("case_", CASES, ids=CASE_IDS)
def test_meta_matches_recorded_cpu_result(case_):
    args, kwargs, result = _run(case_, MetaMaker())
    for r in result if isinstance(result, tuple) else (result,):
        assert r.device.type == "meta" and isinstance(r._data, MetaData)
    if case_.returns == "self":
        assert result is args[0]
    elif case_.returns == "out":
        assert result is kwargs["out"]
    assert summary(result) == EXPECTED[case_.id]


@pytest.mark.parametrize("case_", CASES, ids=CASE_IDS)
def test_meta_matches_cpu_backend(case_, cpu_backend):
    if cpu_backend is None:
        pytest.fail("dispatchcore_backends.cpu is not importable yet; this comparison runs once "
                    "the CPU backend is integrated")
    _, _, meta_result = _run(case_, MetaMaker())
    _, _, cpu_result = _run(case_, CpuMaker())
    assert summary(meta_result) == summary(cpu_result), f"torch 2.13 CPU gives {EXPECTED[case_.id]}"


def test_cpu_leaf_kernels_call_no_operator(cpu_backend):
    """Note [Leaf kernels]: no kernel the CPU backend marks as a leaf makes a dispatcher call or
    reads the thread's dispatch keys, on any case of the op table."""
    from dispatchcore.tls import per_thread

    kernels = dict(cpu_backend.KERNELS)
    cases = [c for c in CASES if dc.is_leaf_kernel(kernels.get(c.op))]
    assert len(cases) > 200
    calls, reads = {}, []

    class KeysWatch:  # the thread's state, with reads of its dispatch keys counted
        def __init__(self, state):
            self._state = state

        @property
        def keys(self):
            reads.append(case_.id)
            return self._state.keys

        def __getattr__(self, name):
            return getattr(self._state, name)

    with warnings.catch_warnings(), dc.trace() as t:  # one trace: enabling one rebuilds every table
        warnings.simplefilter("ignore")  # out= resize warnings are not the point here
        for case_ in cases:
            args, kwargs = case_.args(CpuMaker())
            before, state = len(t.hops()), per_thread.state
            per_thread.state = KeysWatch(state)
            try:
                kernels[case_.op](*args, **kwargs)
            finally:
                per_thread.state = state
            calls[case_.id] = [h.op for h in t.hops()[before:]]
    assert {id: ops for id, ops in calls.items() if ops} == {}
    assert reads == []
    with dc.trace() as t:  # the kernels left unmarked do call operators, and a trace sees them
        kernels["arange.start_out"](0, 3, 1, out=dc.empty(0))
    assert "aten::resize_" in [h.op for h in t.hops()]


@pytest.mark.differential
@pytest.mark.parametrize("case_", CASES, ids=CASE_IDS)
def test_expectations_match_torch(case_):
    pytest.importorskip("torch")
    _, _, result = _run(case_, TorchMaker())
    assert summary(result) == EXPECTED[case_.id]


# --- errors: PyTorch's checks and messages ----------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ErrorCase:
    id: str
    op: str
    build: Callable[[Any], tuple[tuple, dict]]
    exc: type
    message: str
    torch_device: str = "cpu"  # the device whose torch message this is (meta names its own type)


ERRORS = [
    ErrorCase("broadcast", "add.Tensor", lambda T: ((T.t((3,)), T.t((4,))), {}), RuntimeError,
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
    ErrorCase("broadcast-3", "where.self",
              lambda T: ((T.t((2, 1), "bool_"), T.t((3, 1)), T.t((4,))), {}), RuntimeError,
              "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ErrorCase("inplace-broadcast", "add_.Tensor", lambda T: ((T.t((3,)), T.t((2, 3))), {}), RuntimeError,
              "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ErrorCase("inplace-cast", "add_.Tensor", lambda T: ((T.t((3,), "int64"), T.t((3,))), {}), RuntimeError,
              "result type Float can't be cast to the desired output type Long"),
    ErrorCase("inplace-unary-float-cast", "exp_", lambda T: ((T.t((3,), "int64"),), {}), RuntimeError,
              "result type Float can't be cast to the desired output type Long"),
    ErrorCase("inplace-true-div", "div_.Tensor", lambda T: ((T.t((3,), "int64"), T.t((3,), "int64")), {}),
              RuntimeError, "result type Float can't be cast to the desired output type Long"),
    ErrorCase("inplace-bool", "mul_.Scalar", lambda T: ((T.t((3,), "bool_"), 2), {}), RuntimeError,
              "result type Long can't be cast to the desired output type Bool"),
    ErrorCase("out-cast", "add.out", lambda T: ((T.t((3,)), T.t((3,))), {"out": T.t((3,), "int64")}),
              RuntimeError, "result type Float can't be cast to the desired output type Long"),
    ErrorCase("out-same-dtype", "neg.out", lambda T: ((T.t((3,)),), {"out": T.t((3,), "int64")}),
              RuntimeError, "Found dtype Long but expected Float"),
    ErrorCase("sub-bool", "sub.Tensor", lambda T: ((T.t((3,), "bool_"), T.t((3,), "bool_")), {}),
              RuntimeError, "Subtraction, the `-` operator, with two bool tensors is not supported. "
              "Use the `^` or `logical_xor()` operator instead."),
    ErrorCase("sub-bool-scalar", "sub.Scalar", lambda T: ((T.t((3,), "bool_"), 1), {}), RuntimeError,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
              "to invert a mask, use the `~` or `logical_not()` operator instead."),
    ErrorCase("alpha-float", "add.Tensor",
              lambda T: ((T.t((3,), "int64"), T.t((3,), "int64")), {"alpha": 1.5}), RuntimeError,
              "For integral input tensors, argument alpha must not be a floating point number."),
    ErrorCase("alpha-bool", "add.Tensor", lambda T: ((T.t((3,)), T.t((3,))), {"alpha": True}), RuntimeError,
              "Boolean alpha only supported for Boolean results."),
    ErrorCase("neg-bool", "neg", lambda T: ((T.t((3,), "bool_"),), {}), RuntimeError,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
              "invert a mask, use the `~` or `logical_not()` operator instead."),
    ErrorCase("relu-bool", "relu", lambda T: ((T.t((3,), "bool_"),), {}), RuntimeError,
              "Boolean inputs not supported for relu"),
    ErrorCase("abs_-complex", "abs_", lambda T: ((T.t((3,), "complex64"),), {}), RuntimeError,
              "In-place abs is not supported for complex tensors."),
    ErrorCase("pow-negative-int", "pow.Tensor_Scalar", lambda T: ((T.t((3,), "int64"), -2), {}), RuntimeError,
              "Integers to negative integer powers are not allowed."),
    ErrorCase("clamp-none", "clamp", lambda T: ((T.t((3,)),), {}), RuntimeError,
              "torch.clamp: At least one of 'min' or 'max' must not be None"),
    ErrorCase("clamp-complex", "clamp", lambda T: ((T.t((3,), "complex64"), 0), {}), NotImplementedError,
              "clamp is not supported for complex types"),
    ErrorCase("clamp_-promote", "clamp_min_", lambda T: ((T.t((3,), "int64"), 0.5), {}), RuntimeError,
              "result type Float can't be cast to the desired output type long int"),
    ErrorCase("where-condition", "where.self", lambda T: ((T.t((3,)), T.t((3,)), T.t((3,))), {}),
              RuntimeError,
              "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    ErrorCase("mean-int", "mean", lambda T: ((T.t((3,), "int64"),), {}), RuntimeError,
              "mean(): could not infer output dtype. Input dtype must be either a floating point or "
              "complex dtype. Got: Long"),
    ErrorCase("sum-duplicate-dim", "sum.dim_IntList", lambda T: ((T.t((2, 3, 4)), [1, 1]), {}), RuntimeError,
              "dim 1 appears multiple times in the list of dims"),
    ErrorCase("sum-dim-range", "sum.dim_IntList", lambda T: ((T.t((2, 3, 4)), [3]), {}), IndexError,
              "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    ErrorCase("amax-empty", "amax", lambda T: ((T.t((0, 3)), [0]), {}), IndexError,
              "amax(): Expected reduction dim 0 to have non-zero size."),
    ErrorCase("max-empty", "max", lambda T: ((T.t((0,)),), {}), RuntimeError,
              "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument."),
    ErrorCase("max.dim-empty", "max.dim", lambda T: ((T.t((0, 3)), 0), {}), IndexError,
              "max(): Expected reduction dim 0 to have non-zero size."),
    ErrorCase("argmax-bool", "argmax", lambda T: ((T.t((3,), "bool_"),), {}), RuntimeError,
              "argmax(): does not support bool input"),
    ErrorCase("argmax-empty", "argmax", lambda T: ((T.t((0, 3)),), {}), IndexError,
              "argmax(): Expected reduction dim to be specified for input.numel() == 0."),
    ErrorCase("mm-vector", "mm", lambda T: ((T.t((3,)), T.t((3, 5))), {}), RuntimeError,
              "self must be a matrix"),
    ErrorCase("mm-shapes", "mm", lambda T: ((T.t((3, 4)), T.t((3, 5))), {}), RuntimeError,
              "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x5)"),
    ErrorCase("mm-dtype", "mm", lambda T: ((T.t((3, 4)), T.t((4, 5), "float64")), {}), RuntimeError,
              "expected m1 and m2 to have the same dtype, but got: float != double"),
    ErrorCase("bmm-2d", "bmm", lambda T: ((T.t((3, 4)), T.t((2, 4, 5))), {}), RuntimeError,
              "batch1 must be a 3D tensor"),
    ErrorCase("bmm-shapes", "bmm", lambda T: ((T.t((2, 3, 4)), T.t((2, 3, 5))), {}), RuntimeError,
              "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 3]."),
    ErrorCase("bmm-dtype", "bmm", lambda T: ((T.t((2, 3, 4)), T.t((2, 4, 5), "float64")), {}), RuntimeError,
              "expected scalar type Float but found Double"),
    ErrorCase("softmax-dim", "_softmax", lambda T: ((T.t((3, 4)), 2, False), {}), IndexError,
              "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ErrorCase("softmax-half-to-float", "_softmax", lambda T: ((T.t((3, 4)), 1, True), {}), RuntimeError,
              "softmax with half to float conversion is not supported on CPU"),
    ErrorCase("mse-broadcast", "mse_loss", lambda T: ((T.t((3,)), T.t((4,)), 0), {}), RuntimeError,
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
    ErrorCase("nll-3d", "nll_loss_forward",
              lambda T: ((T.t((3, 5, 2)), T.t((3,), "int64", fill="zeros"), None, 1, -100), {}),
              RuntimeError, "input tensor should be 1D or 2D"),
    ErrorCase("nll-batch", "nll_loss_forward",
              lambda T: ((T.t((3, 5)), T.t((4,), "int64", fill="zeros"), None, 1, -100), {}),
              RuntimeError, "size mismatch (got input: [3, 5], target: [4])"),
    ErrorCase("nll-weight", "nll_loss_forward",
              lambda T: ((T.t((3, 5)), T.t((3,), "int64", fill="zeros"), T.t((4,)), 1, -100), {}),
              RuntimeError, "weight tensor should be defined either for all 5 classes or no classes but "
              "got weight tensor of shape: [4]"),
    ErrorCase("nll-target-dtype", "nll_loss_forward",
              lambda T: ((T.t((3, 5)), T.t((3,), fill="zeros"), None, 1, -100), {}),
              RuntimeError, "expected target dtype to be Long or Byte, but got Float"),
    ErrorCase("cat-0dim", "cat", lambda T: (([T.t((3, 4)), T.t(())],), {}), RuntimeError,
              "zero-dimensional tensor (at position 1) cannot be concatenated"),
    ErrorCase("cat-ndim", "cat", lambda T: (([T.t((3, 4)), T.t((4,))],), {}), RuntimeError,
              "Tensors must have same number of dimensions: got 2 and 1"),
    ErrorCase("cat-sizes", "cat", lambda T: (([T.t((3, 4)), T.t((2, 3))], 0), {}), RuntimeError,
              "Sizes of tensors must match except in dimension 0. Expected size 4 but got size 3 for "
              "tensor number 1 in the list."),
    ErrorCase("stack-sizes", "stack", lambda T: (([T.t((3, 4)), T.t((3, 5))],), {}), RuntimeError,
              "stack expects each tensor to be equal size, but got [3, 4] at entry 0 and [3, 5] at entry 1"),
    ErrorCase("copy_-broadcast", "copy_", lambda T: ((T.t((4,)), T.t((3, 4))), {}), RuntimeError,
              "output with shape [4] doesn't match the broadcast shape [3, 4]"),
    ErrorCase("copy_-sizes", "copy_", lambda T: ((T.t((3, 4)), T.t((3,))), {}), RuntimeError,
              "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"),
    ErrorCase("to_copy-out-of-meta", "_to_copy", lambda T: ((T.t((3,)),), {"device": "cpu"}),
              NotImplementedError, "Cannot copy out of meta tensor; no data!", torch_device="meta"),
    ErrorCase("fill_-overflow", "fill_.Scalar", lambda T: ((T.t((2,), "int8"), 300), {}), RuntimeError,
              "value cannot be converted to type int8_t without overflow"),
    ErrorCase("fill_-complex", "fill_.Scalar", lambda T: ((T.t((2,)), 1j), {}), RuntimeError,
              "value cannot be converted to type float without overflow"),
    ErrorCase("view-numel", "view", lambda T: ((T.t((3, 4)), [5, -1]), {}), RuntimeError,
              "shape '[5, -1]' is invalid for input of size 12"),
    ErrorCase("view-two-inferred", "view", lambda T: ((T.t((3, 4)), [-1, -1]), {}), RuntimeError,
              "only one dimension can be inferred"),
    ErrorCase("view-negative", "view", lambda T: ((T.t((3, 4)), [-2, 6]), {}), RuntimeError,
              "invalid shape dimension -2 at index 0 of shape [-2, 6]"),
    ErrorCase("view-ambiguous", "view", lambda T: ((T.t((0, 3)), [0, -1]), {}), RuntimeError,
              "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified "
              "dimension size -1 can be any value and is ambiguous"),
    ErrorCase("view-strides", "view", lambda T: ((T.t((3, 4), strides=F), [12]), {}), RuntimeError,
              "view size is not compatible with input tensor's size and stride (at least one dimension "
              "spans across two contiguous subspaces). Use .reshape(...) instead."),
    ErrorCase("t-3d", "t", lambda T: ((T.t((2, 3, 4)),), {}), RuntimeError,
              "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    ErrorCase("permute-length", "permute", lambda T: ((T.t((2, 3, 4)), [0, 1]), {}), RuntimeError,
              "permute(sparse_coo): number of dimensions in the tensor input does not match the length "
              "of the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2"),
    ErrorCase("permute-duplicate", "permute", lambda T: ((T.t((2, 3, 4)), [0, 1, 1]), {}), RuntimeError,
              "permute(): duplicate dims are not allowed."),
    ErrorCase("expand-size", "expand", lambda T: ((T.t((3, 2)), [3, 4]), {}), RuntimeError,
              "The expanded size of the tensor (4) must match the existing size (2) at non-singleton "
              "dimension 1.  Target sizes: [3, 4].  Tensor sizes: [3, 2]"),
    ErrorCase("expand-too-few", "expand", lambda T: ((T.t((3, 2)), [2]), {}), RuntimeError,
              "expand(MetaFloatType{[3, 2]}, size=[2]): the number of sizes provided (1) must be greater "
              "or equal to the number of dimensions in the tensor (2)", torch_device="meta"),
    ErrorCase("expand-leading-minus-one", "expand", lambda T: ((T.t((3, 2)), [-1, 3, 2]), {}), RuntimeError,
              "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"),
    ErrorCase("unsqueeze-range", "unsqueeze", lambda T: ((T.t((3, 4)), 3), {}), IndexError,
              "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    ErrorCase("select-range", "select.int", lambda T: ((T.t((3, 4)), 1, 4), {}), IndexError,
              "select(): index 4 out of range for tensor of size [3, 4] at dimension 1"),
    ErrorCase("select-0dim", "select.int", lambda T: ((T.t(()), 0, 0), {}), IndexError,
              "select() cannot be applied to a 0-dim tensor."),
    ErrorCase("slice-step", "slice.Tensor", lambda T: ((T.t((2, 3)), 1, 0, 2, 0), {}), RuntimeError,
              "slice step must be positive"),
    ErrorCase("as_strided-bounds", "as_strided", lambda T: ((T.t((2, 3, 4)), [10, 10], [10, 1]), {}),
              RuntimeError, "setStorage: sizes [10, 10], strides [10, 1], storage offset 0, and itemsize 4 "
              "requiring a storage size of 400 are out of bounds for storage of size 96"),
    ErrorCase("as_strided-negative", "as_strided", lambda T: ((T.t((2, 3, 4)), [2, 2], [-1, 1]), {}),
              RuntimeError,
              "as_strided: Negative strides are not supported at the moment, got strides: [-1, 1]"),
    ErrorCase("empty-negative", "empty.memory_format", lambda T: (([2, -1],), {"device": T.device}),
              RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]"),
    ErrorCase("empty-channels-last-rank", "empty.memory_format",
              lambda T: (([2, 3, 4],), {"device": T.device, "memory_format": T.mf("channels_last")}),
              RuntimeError, "required rank 4 tensor to use channels_last format"),
    ErrorCase("empty_strided-rank", "empty_strided", lambda T: (([2, 3], [1]), {"device": T.device}),
              RuntimeError, "dimensionality of sizes (2) must match dimensionality of strides (1)"),
    ErrorCase("arange-step", "arange.start_step", lambda T: ((0, 10, 0), {"device": T.device}), RuntimeError,
              "step must be nonzero"),
    ErrorCase("arange-sign", "arange.start_step", lambda T: ((0, 10, -1), {"device": T.device}), RuntimeError,
              "upper bound and lower bound inconsistent with step sign"),
    ErrorCase("linspace-steps", "linspace", lambda T: ((0, 10, -1), {"device": T.device}), RuntimeError,
              "number of steps must be non-negative"),
    ErrorCase("full-overflow", "full",
              lambda T: (([2], 300), {"dtype": T.dtype("uint8"), "device": T.device}),
              RuntimeError, "value cannot be converted to type uint8_t without overflow"),
]
ERROR_IDS = [e.id for e in ERRORS]


@pytest.mark.parametrize("err", ERRORS, ids=ERROR_IDS)
def test_meta_raises_torch_error(err):
    args, kwargs = err.build(MetaMaker())
    with pytest.raises(err.exc) as info:
        MetaMaker().run(err.op, args, kwargs)
    assert str(info.value) == err.message


@pytest.mark.differential
@pytest.mark.parametrize("err", ERRORS, ids=ERROR_IDS)
def test_error_texts_match_torch(err):
    pytest.importorskip("torch")
    maker = TorchMaker(err.torch_device)
    args, kwargs = err.build(maker)
    with pytest.raises(err.exc) as info:
        maker.run(err.op, args, kwargs)
    assert str(info.value) == err.message


# --- (b) an operator without a Meta kernel -----------------------------------------------------------
META_FALLBACK = (
    "{qualname}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta "
    "kernel registered. You may have run into this message while using an operator with PT2 "
    "compilation APIs (torch.compile/torch.export); in order to use this operator with those APIs "
    "you'll need to add a fake impl. Please see the following for next steps:  "
    "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html"
)


@pytest.mark.parametrize("schema, wrap_arg", [
    ("foo(Tensor x) -> Tensor", lambda t: ((t,), {})),
    ("foo(Tensor? x) -> Tensor", lambda t: ((t,), {})),
    ("foo(Tensor[] xs) -> Tensor", lambda t: (([t],), {})),
    ("foo(Tensor?[] xs) -> Tensor", lambda t: (([None, t],), {})),
    ("foo(int n, *, Tensor x) -> Tensor", lambda t: ((2,), {"x": t})),
], ids=["Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "kwarg-only"])
def test_op_without_meta_kernel_raises_meta_fallback_error(lib, ns, schema, wrap_arg):
    lib.define(schema)
    lib.impl("foo", lambda *args, **kwargs: "cpu kernel ran", "CPU")
    args, kwargs = wrap_arg(meta_tensor((2,), dc.float32))
    with pytest.raises(NotImplementedError) as info:
        getattr(dc.ops, ns).foo(*args, **kwargs)
    assert str(info.value).splitlines()[0] == META_FALLBACK.format(qualname=f"{ns}::foo")
    assert isinstance(info.value, dc.DispatchError)


def test_meta_fallback_is_what_the_table_shows(lib, ns):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "CPU")
    line = next(ln for ln in dc.dump_table(f"{ns}::foo").splitlines() if ln.startswith("Meta:"))
    assert line.endswith("[backend fallback]")


def test_registering_a_meta_kernel_replaces_the_fallback(lib, ns):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: meta_tensor(tuple(x.shape) + (2,), x.dtype), "Meta")
    out = getattr(dc.ops, ns).foo(meta_tensor((3,), dc.int32))
    assert (tuple(out.shape), out.dtype, out.device.type) == ((3, 2), dc.int32, "meta")


# --- (c) a whole program on meta ------------------------------------------------------------------------
def test_program_runs_wholly_on_meta():
    """Factories, pointwise ops, a reduction, views and cat: every intermediate stays on meta."""
    seen = []

    def check(t):
        assert t.device.type == "meta" and isinstance(t._data, MetaData), t
        seen.append(t)
        return t

    x = check(aten.empty.memory_format([4, 3], device=dc.device("meta")))
    b = check(aten.ones.default([3], dtype=dc.float32, device=dc.device("meta")))
    h = check(aten.relu.default(check(aten.add.Tensor(x, b, alpha=2))))
    h = check(aten.mul.Scalar(h, 0.5))
    h_t = check(aten.t.default(h))                       # (3, 4), strides (1, 3)
    y = check(aten.exp.default(h_t))                     # keeps the transposed layout
    assert y.stride() == (1, 3)
    zeros = check(aten.zeros.default([2, 4], device=dc.device("meta")))
    both = check(aten.cat.default([y, zeros], 0))
    v = check(aten.view.default(check(aten.clone.default(both, memory_format=0)), [5, 2, 2]))
    s = check(aten.sum.dim_IntList(v, [1], True, dtype=dc.float64))
    values, indices = aten.max.dim(check(aten.squeeze.dim(s, 1)), -1)
    check(values), check(indices)
    assert [tuple(t.shape) for t in (both, v, s, values)] == [(5, 4), (5, 2, 2), (5, 1, 2), (5,)]
    assert (s.dtype, indices.dtype) == (dc.float64, dc.int64)
    inplace = aten.add_.Tensor(values, values)
    assert inplace is values
    assert len(seen) == 15


def test_program_catches_shape_error_without_data():
    x = meta_tensor((1024, 1024), dc.float32)
    w = meta_tensor((512, 10), dc.float32)
    with pytest.raises(RuntimeError,
                       match=r"mat1 and mat2 shapes cannot be multiplied \(1024x1024 and 512x10\)"):
        aten.mm.default(aten.relu.default(x), w)


# --- registration ---------------------------------------------------------------------------------------
def test_register_returns_a_library_that_only_removes_its_own_kernels():
    op = dc.find_op("aten::neg")
    before = dc.dump_table(op)
    lib = meta_backend.register()
    try:
        assert isinstance(lib, Library)
        assert len(op.registrations[DispatchKey.Meta]) >= 2  # stacked on the first registration
    finally:
        lib._destroy()
    assert dc.dump_table(op) == before
    assert "Meta: " in before and "[kernel]" in next(
        ln for ln in before.splitlines() if ln.startswith("Meta:"))


def test_register_into_a_given_library():
    lib = Library("aten", "IMPL", dispatch_key="Meta")
    try:
        assert meta_backend.register(lib) is lib
    finally:
        lib._destroy()


def test_meta_data_follows_the_backend_data_protocol():
    t = meta_tensor((2, 3), dc.float64, (1, 2), storage_offset=1)
    assert (t.shape, t.stride(), t.storage_offset(), t.dtype, t.dim(), t.numel()) == (
        dc.Size([2, 3]), (1, 2), 1, dc.float64, 2, 6)
    assert t._data.strides == (8, 16) and t._data.dtype == np.dtype("float64")
    assert not t.is_contiguous() and t.is_meta
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        meta_tensor((), dc.float32).item()


def test_out_resize_leaves_earlier_aliases_alone():
    out = meta_tensor((0,), dc.float32)
    alias = aten.alias.default(out)
    aten.add.out(meta_tensor((2, 3), dc.float32), meta_tensor((3,), dc.float32), out=out)
    assert tuple(out.shape) == (2, 3) and tuple(alias.shape) == (0,)


if __name__ == "__main__":  # regenerate EXPECTED from live torch
    import pprint

    recorded = {c.id: summary(_run(c, TorchMaker())[2]) for c in CASES}
    print("EXPECTED: dict[str, Any] = " + pprint.pformat(recorded, width=110, sort_dicts=False))


def test_a_meta_factory_works_first_thing_in_a_fresh_interpreter():
    """The Meta key's error fallback loads the pending backends and runs the call again."""
    import subprocess
    import sys

    code = ("import dispatchcore as dc\n"
            "t = dc.zeros(2, 3, device='meta')\n"
            "print(t.device.type, tuple(t.shape), t.stride())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "meta (2, 3) (3, 1)"
