"""Side-by-side comparison of dispatchcore with its performance anchors (docs/performance.md).

Run:  python bench/compare.py [--only G15,G18] [--rounds N] [--quick] [--no-torch] [--json PATH]
      python bench/compare.py --only G1,G2,G3,G5,G6,G8,G9 --together --target 0.002 --rounds 200

Every row of ``CASES`` is measured in this one process: the dispatchcore statements and the
anchor (torch) statements of a row are sampled interleaved, in rotated rounds, with
``bench/_harness.py`` (timeit-style, min and median, torch and OpenBLAS pinned to one thread).
Without torch (or with ``--no-torch``) the anchor column shows the number recorded in
docs/performance.md, marked ``(rec)``; ratios against recorded numbers come from another machine
and are only indicative.

Kinds of rows:

* ``ratio``: ``dispatchcore / anchor`` of the min times; ``must``/``target`` are ratios;
* ``delta``: a "+us" goal: each side is ``stmt - base`` (e.g. an op call minus calling its kernel
  directly); ``must``/``target`` bound the dispatchcore overhead in ns, and the "vs anchor"
  column shows ``dispatchcore - anchor``;
* ``info``: no goal, printed for reference; the ``OPS`` rows (``--only OPS``) time ~55 everyday
  calls (factories, reductions, indexing, views, losses) on small tensors, the same text on both
  sides, to show where the Tensor API is far from torch's per-call cost.

Adding a row: append a ``Case`` to ``CASES``. A ``Side`` names a setup function (called once,
cached; it returns the statement's globals), the statement, for ``delta`` rows the base
statement, ``per`` when the statement loops (use ``inner()``), and a ``check`` statement that
is executed once before timing and must not raise (so a broken path is never benchmarked).
A torch setup calls ``_torch()``, which raises ``Unavailable`` when torch is missing.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import asdict, dataclass

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(1, os.path.dirname(_HERE))  # the repository root, for an uninstalled dispatchcore

from _harness import Entry, env_info, fmt_ns, measure, pin_threads  # noqa: E402

INNER = 100  # calls per guard entry in inner-loop statements


class Unavailable(Exception):
    """A side cannot be measured here (torch missing or disabled)."""


# --- rows -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """How to measure one side (dispatchcore or anchor) of a row."""

    setup: Callable[[], dict]
    stmt: str
    base: str | None = None  # delta rows: subtract this statement's time (same globals)
    per: int = 1  # stmt and base each perform `per` operations (inner loop)
    check: str | None = None  # executed once in the globals before timing; must not raise
    label: str = ""  # what the statement is, for the details block


@dataclass(frozen=True)
class Case:
    """One row of the comparison table."""

    goal: str
    metric: str
    kind: str  # "ratio" | "delta" | "info"
    dc: Side | None  # None: dispatchcore cannot do this yet (see na)
    anchor: Side | None
    must: float | None = None  # ratio, or ns for delta rows
    target: float | None = None
    recorded: float | None = None  # the anchor's value in docs/performance.md (ns)
    recorded_note: str = ""
    na: str = ""  # why dispatchcore has no number yet
    gc_enabled: bool = False
    alone: bool = False  # measured by itself even with --together (big tensors: caches, page faults)


def inner(stmt: str, guard: str | None = None) -> str:
    """``stmt`` run INNER times, inside ``with guard:`` entered once when given (pair with per=INNER).

    Use the same form without a guard for the base statement so the loop cost cancels.
    """
    body = f"for _ in _R:\n    {stmt}"
    if guard is None:
        return body
    return f"with {guard}:\n" + textwrap.indent(body, "    ")


# --- setups (cached: one Library per process) -----------------------------------------------
_NO_TORCH = False


def _torch():
    if _NO_TORCH:
        raise Unavailable("--no-torch")
    try:
        import torch
    except ImportError as e:
        raise Unavailable(f"torch not importable: {e}") from None
    return torch


@functools.cache
def dc_ops() -> dict:
    """No-op Python kernels registered at CPU for 1-arg, 2-arg and with_keyset ops."""
    import dispatchcore as dc
    from dispatchcore.tls import tls_get

    lib = dc.Library("dc_compare", "DEF")
    lib.define("nop1(Tensor a) -> Tensor")
    lib.define("nop2(Tensor a, Tensor b) -> Tensor")
    lib.define("nopks(Tensor a) -> Tensor")
    lib.define("reg(Tensor a) -> Tensor")  # no kernel: the registration row adds and removes one
    R = object()

    def nop1(a):
        return R

    def nop2(a, b):
        return R

    def nopks(ks, a):
        return ks

    def regk(a):
        return R

    lib.impl("nop1", nop1, "CPU")
    lib.impl("nop2", nop2, "CPU")
    lib.impl("nopks", nopks, "CPU", with_keyset=True)

    class Carrier:
        __slots__ = ("_key_bits",)

        def __init__(self, bits: int) -> None:
            self._key_bits = bits

    def route(op, *args):
        """Name of the key a call with ``args`` dispatches to first, under the current TLS."""
        included, _, keep = tls_get()
        bits = included
        for a in args:
            bits |= a._key_bits
        return op.key_for(bits & keep).name

    ops = dc.ops.dc_compare
    return {
        "dc": dc, "lib": lib, "R": R, "route": route,
        "c": Carrier(int(dc.tensor_keyset("CPU"))), "e": Carrier(0),
        "op1": ops.nop1.default, "op2": ops.nop2.default, "opks": ops.nopks.default,
        "reg": ops.reg.default, "nop1": nop1, "nop2": nop2, "nopks": nopks, "regk": regk,
        "KS_CPU": dc.DispatchKeySet(dc.DispatchKey.CPU),
        "B": dc.AutoDispatchBelowAutograd, "BA": dc.AutoDispatchBelowADInplaceOrView,
        "E": dc.ExcludeDispatchKeyGuard, "I": dc.IncludeDispatchKeyGuard, "F": dc.ForceDispatchKeyGuard,
        "ks": dc.DispatchKeySet(dc.DispatchKey.AutogradCPU), "K": dc.DispatchKey.CPU,
        "inc": dc.tls_local_include_set(),
        "exc": dc.tls_local_exclude_set() | dc.DispatchKeySet(dc.DispatchKey.AutogradCPU),
    }


@functools.cache
def torch_ops() -> dict:
    """The same no-op kernels registered through torch.library (the G15 anchor)."""
    torch = _torch()
    C = torch._C
    lib = torch.library.Library("dc_compare", "DEF")
    lib.define("nop1(Tensor a) -> Tensor")
    lib.define("nop2(Tensor a, Tensor b) -> Tensor")
    lib.define("nopks(Tensor a) -> Tensor")
    OUT = torch.zeros(10)

    def t_nop1(a):
        return OUT

    def t_nop2(a, b):
        return OUT

    def t_nopks(ks, a):
        return OUT

    lib.impl("nop1", t_nop1, "CPU")
    lib.impl("nop2", t_nop2, "CPU")
    lib.impl("nopks", t_nopks, "CPU", with_keyset=True)
    a = torch.randn(10)
    ops = torch.ops.dc_compare
    return {
        "torch": torch, "C": C, "lib": lib, "OUT": OUT, "a": a, "b": torch.randn(10),
        "op1": ops.nop1.default, "op2": ops.nop2.default, "opks": ops.nopks.default,
        "t_nop1": t_nop1, "t_nop2": t_nop2, "t_nopks": t_nopks,
        "TKS_CPU": C.DispatchKeySet(C.DispatchKey.CPU),
        "has_kernel": C._dispatch_has_kernel_for_dispatch_key,
    }


@functools.cache
def torch_guards() -> dict:
    """The grad-mode and dispatch-key guards of torch (the G17 and G18 anchors)."""
    torch = _torch()
    C = torch._C
    ks = C.DispatchKeySet(C.DispatchKey.AutogradCPU)
    return {
        "torch": torch, "C": C, "tks": ks, "tK": C.DispatchKey.CPU,
        "tinc": C._dispatch_tls_local_include_set(),
        "texc": C._dispatch_tls_local_exclude_set() | ks,
        "excluded": C._dispatch_tls_is_dispatch_key_excluded,
        "included": C._dispatch_tls_is_dispatch_key_included,
    }


# --- autograd setups (G10-G14, G16, G17, G20) -------------------------------------------------
def mlp_data(seed: int = 0):
    """The tiny MLP of bench/anchors/mlp_engines.py: x (32, 64), W1 (64, 64), W2 (64, 10), y (32, 10)."""
    import numpy as np

    r = np.random.default_rng(seed)
    x = r.standard_normal((32, 64)).astype(np.float32)
    w1 = (r.standard_normal((64, 64)) * 0.1).astype(np.float32)
    w2 = (r.standard_normal((64, 10)) * 0.1).astype(np.float32)
    y = r.standard_normal((32, 10)).astype(np.float32)
    return x, w1, w2, y


def mlp_reference():
    """The step's loss and gradients for W1 and W2, by hand in float64 numpy (the check)."""
    import numpy as np

    x, w1, w2, y = (a.astype(np.float64) for a in mlp_data())
    h_pre = x @ w1
    mask = h_pre > 0
    h = h_pre * mask
    d = h @ w2 - y
    gd = d * (2.0 / d.size)
    return float(np.mean(d * d)), (x.T @ ((gd @ w2.T) * mask), h.T @ gd)


def _close(got, ref) -> bool:
    import numpy as np

    return all(np.allclose(np.asarray(g, dtype=np.float64), r, rtol=1e-4, atol=1e-6) for g, r in zip(got, ref))


@functools.cache
def dc_autograd() -> dict:
    """The dispatchcore side of the autograd rows.

    Requires-grad tensors, the tiny MLP, a Python Function (relu with save_for_backward) and a
    differentiable custom op (Library def + CPU kernel + Function registered at Autograd).
    """
    import dispatchcore as dc
    from dispatchcore.ops import aten

    add, mul = aten.add.Tensor, aten.mul.Tensor
    a, b = dc.randn(10), dc.randn(10)
    ag, bg = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    go = dc.ones(10)

    def fb():  # G13: one backward on a 1-op graph
        mul(ag, b).backward(go)
        ag.grad = None

    xn, w1n, w2n, yn = mlp_data()
    x, y = dc.tensor(xn), dc.tensor(yn)
    W1, W2 = dc.tensor(w1n.copy(), requires_grad=True), dc.tensor(w2n.copy(), requires_grad=True)
    W1c, W2c = dc.tensor(w1n.copy()), dc.tensor(w2n.copy())

    def mlp_step():  # G11, gc on
        d = (x @ W1).relu() @ W2 - y
        (d * d).mean().backward()
        g1, g2 = W1.grad, W2.grad
        W1.grad = None
        W2.grad = None
        return g1, g2

    def mlp_fwd():  # G12
        d = (x @ W1c).relu() @ W2c - y
        return (d * d).mean()

    class MyReLU(dc.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * (t > 0)

    def relu_fb():  # G14 fwd+bwd
        MyReLU.apply(ag).backward(go)
        ag.grad = None

    lib = dc.Library("dc_compare_ag", "DEF")
    lib.define("myadd(Tensor a, Tensor b) -> Tensor")
    myadd = dc.ops.dc_compare_ag.myadd.default
    below = dc.AutoDispatchBelowADInplaceOrView

    def myadd_cpu(a, b):
        return add(a, b)

    class MyAdd(dc.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            with below():
                return myadd(a, b)

        @staticmethod
        def backward(ctx, g):
            return g, g

    lib.impl("myadd", myadd_cpu, "CPU")
    lib.impl("myadd", MyAdd, "Autograd")

    def custom_fb():  # G16
        myadd(ag, bg).backward(go)
        ag.grad = None
        bg.grad = None

    loss, ref = mlp_reference()
    return {
        "custom_op_fb": _custom_op_fb(dc, ag, bg, go),
        "dc": dc, "add": add, "mul": mul, "a": a, "b": b, "ag": ag, "bg": bg, "go": go, "fb": fb,
        "mlp_step": mlp_step, "mlp_fwd": mlp_fwd, "mlp_ref": ref, "mlp_loss": loss, "close": _close,
        "MyReLU": MyReLU, "relu_fb": relu_fb, "lib": lib, "myadd": myadd, "custom_fb": custom_fb,
        "tls_get": __import__("dispatchcore.tls", fromlist=["tls_get"]).tls_get,
    }


def _custom_op_fb(lib, ag, bg, go) -> Callable[[], None]:
    """G16's custom_op row, one program for both sides: ``library.custom_op`` + ``register_autograd``."""
    @lib.library.custom_op("dc_compare_co::myadd", mutates_args=(), schema="(Tensor a, Tensor b) -> Tensor")
    def myadd(a, b):  # this module's annotations are strings: the schema is given
        return lib.add(a, b)

    myadd.register_autograd(lambda ctx, g: (g, g))

    def custom_op_fb():
        myadd(ag, bg).backward(go)
        ag.grad = None
        bg.grad = None

    return custom_op_fb


@functools.cache
def torch_autograd() -> dict:
    """The same programs on torch: the anchors of bench/anchors/autograd_ops.py and mlp_engines.py.

    The custom op is torch.library's, with ``register_autograd`` (torch_library_ops.py's myadd_ag).
    """
    torch = _torch()
    a, b = torch.randn(10), torch.randn(10)
    ag, bg = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    go = torch.ones(10)

    def fb():
        torch.mul(ag, b).backward(go)
        ag.grad = None

    xn, w1n, w2n, yn = mlp_data()
    x, y = torch.from_numpy(xn), torch.from_numpy(yn)
    W1 = torch.from_numpy(w1n.copy()).requires_grad_(True)
    W2 = torch.from_numpy(w2n.copy()).requires_grad_(True)
    W1c, W2c = W1.detach(), W2.detach()

    def mlp_step():
        d = torch.relu(x @ W1) @ W2 - y
        (d * d).mean().backward()
        g1, g2 = W1.grad, W2.grad
        W1.grad = None
        W2.grad = None
        return g1, g2

    def mlp_fwd():
        d = torch.relu(x @ W1c) @ W2c - y
        return (d * d).mean()

    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * (t > 0)

    def relu_fb():
        MyReLU.apply(ag).backward(go)
        ag.grad = None

    lib = torch.library.Library("dc_compare_ag", "DEF")
    lib.define("myadd(Tensor a, Tensor b) -> Tensor")
    lib.impl("myadd", lambda a, b: torch.add(a, b), "CPU")
    torch.library.register_autograd("dc_compare_ag::myadd", lambda ctx, g: (g, g),
                                    setup_context=lambda ctx, inputs, output: None, lib=lib)
    myadd = torch.ops.dc_compare_ag.myadd.default

    def custom_fb():
        myadd(ag, bg).backward(go)
        ag.grad = None
        bg.grad = None

    loss, ref = mlp_reference()
    return {
        "custom_op_fb": _custom_op_fb(torch, ag, bg, go),
        "torch": torch, "a": a, "b": b, "ag": ag, "bg": bg, "go": go, "fb": fb,
        "mlp_step": mlp_step, "mlp_fwd": mlp_fwd, "mlp_ref": ref, "mlp_loss": loss, "close": _close,
        "MyReLU": MyReLU, "relu_fb": relu_fb, "lib": lib, "myadd": myadd, "custom_fb": custom_fb,
    }


# --- training steps of the docs/examples programs (issue 16) --------------------------------
def _training(lib) -> dict:
    """One training step of docs/examples/mlp_classification.py and of small_cnn.py, written against ``lib``.

    ``lib`` is ``dispatchcore`` or ``torch``: the statements are the examples' own (nn modules,
    ``nn.functional``, ``optim``), so both sides run the same program. A step is what one batch
    costs in the examples' loops: ``zero_grad``, forward, loss, ``backward``, optimizer ``step``
    (the DataLoader's batching is not part of it). Models and batches come from
    ``manual_seed(0)``, so both sides start from the same weights (dispatchcore draws torch's
    random numbers); ``mlp_loss0``/``cnn_loss0`` are the first step's losses for the check.
    """
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    xb, yb = lib.randn(32, 8), lib.randint(0, 3, (32,))
    mlp = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    mlp_loss_fn = nn.CrossEntropyLoss()
    mlp_opt = lib.optim.Adam(mlp.parameters(), lr=1e-2)

    def mlp_step():
        mlp_opt.zero_grad()
        loss = mlp_loss_fn(mlp(xb), yb)
        loss.backward()
        mlp_opt.step()
        return loss

    class SmallCNN(nn.Module):  # docs/examples/small_cnn.py's model
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
            self.bn2 = nn.BatchNorm2d(16)
            self.pool = nn.MaxPool2d(2)
            self.dropout = nn.Dropout(0.25)
            self.fc = nn.Linear(16 * 4 * 4, 2)

        def forward(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            x = self.pool(F.relu(self.bn2(self.conv2(x))))
            return self.fc(self.dropout(lib.flatten(x, 1)))

    images, labels = lib.randn(16, 1, 16, 16), lib.randint(0, 2, (16,))
    cnn = SmallCNN()
    cnn_opt = lib.optim.SGD(cnn.parameters(), lr=0.02, momentum=0.9)

    def cnn_step():
        cnn_opt.zero_grad()
        loss = F.cross_entropy(cnn(images), labels)
        loss.backward()
        cnn_opt.step()
        return loss

    return {"mlp_step": mlp_step, "cnn_step": cnn_step, "mlp_loss0": 1.1308379173278809,
            "cnn_loss0": 0.8790925145149231}


def _on_dispatchcore(build: Callable[[object], dict]) -> dict:
    """``build(dispatchcore)`` with the backends loaded: the dispatchcore side of a row written once for both."""
    import dispatchcore as dc

    dc.load_backends()
    return build(dc)


@functools.cache
def dc_training() -> dict:
    """The dispatchcore side of the training-step rows."""
    return _on_dispatchcore(_training)


@functools.cache
def torch_training() -> dict:
    """The torch eager side of the training-step rows."""
    return _training(_torch())


# the G21-G23 graphs' lengths; --quick (the CI smoke run) divides them by _QUICK_DIVISOR
GRAPH_STEPS = {"deep": 100_000, "inplace": 20_000, "function": 20_000}
_QUICK_DIVISOR = 100
_graph_divisor = 1


def _graphs(lib) -> dict:
    """The autograd workloads of issue #19, written against ``lib`` (``dispatchcore`` or ``torch``).

    Long graphs (a 100,000-op chain, 20,000 in-place ``mul_`` on one tensor, 20,000 custom
    Function nodes), each built and run backward once per call, and a larger training step
    (784-256-128-10 MLP, batch 64, cross-entropy, SGD) from ``manual_seed(0)``.
    """

    class MulConst(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0001

        @staticmethod
        def backward(ctx, g):
            return g * 1.0001

    leaf = lib.ones(10, requires_grad=True)
    deep, inplace, function = (GRAPH_STEPS[k] // _graph_divisor for k in ("deep", "inplace", "function"))

    def deep_chain():
        x = leaf
        for _ in range(deep):
            x = x * 1.0001
        x.sum().backward()
        grad, leaf.grad = leaf.grad, None
        return grad

    def inplace_chain():
        x = leaf.clone()
        for _ in range(inplace):
            x.mul_(1.0001)
        x.sum().backward()
        grad, leaf.grad = leaf.grad, None
        return grad

    def function_chain():
        x = leaf
        for _ in range(function):
            x = MulConst.apply(x)
        x.sum().backward()
        grad, leaf.grad = leaf.grad, None
        return grad

    nn = lib.nn
    lib.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = lib.optim.SGD(mlp.parameters(), lr=0.01)
    xb, yb = lib.randn(64, 784), lib.randint(0, 10, (64,))
    loss_fn = nn.CrossEntropyLoss()

    def big_mlp_step():
        opt.zero_grad()
        loss = loss_fn(mlp(xb), yb)
        loss.backward()
        opt.step()
        return loss

    return {"deep_chain": deep_chain, "inplace_chain": inplace_chain, "function_chain": function_chain,
            "big_mlp_step": big_mlp_step, "GRAPH_STEPS": GRAPH_STEPS, "_graph_divisor": _graph_divisor}


@functools.cache
def dc_graphs() -> dict:
    """The dispatchcore side of the long-graph rows."""
    return _on_dispatchcore(_graphs)


@functools.cache
def torch_graphs() -> dict:
    """The torch eager side of the long-graph rows."""
    return _graphs(_torch())


# --- the Python key (issue 17): a forwarding mode, a forwarding subclass, make_fx --------------
# the aten calls make_fx records for the tiny MLP step (forward, then autograd.grad), in torch 2.13
MLP_STEP_TARGETS = (
    "mm.default", "relu.default", "detach.default", "mm.default", "sub.Tensor", "mul.Tensor", "mean.default",
    "ones_like.default", "expand.default", "div.Scalar", "mul.Tensor", "mul.Tensor", "add.Tensor",
    "t.default", "mm.default", "t.default", "mm.default", "detach.default", "threshold_backward.default",
    "t.default", "mm.default")


def _python_key(lib) -> dict:
    """The Python-key rows, written once against ``lib`` (``dispatchcore`` or ``torch``).

    A forwarding dispatch mode (G19), a forwarding wrapper subclass in the style of torch's tests
    (``_make_wrapper_subclass``, unwrap, call, wrap; G25) and ``make_fx`` of the tiny MLP step (G26).
    """
    if lib.__name__ == "torch":
        from torch.fx.experimental.proxy_tensor import make_fx
        from torch.utils._python_dispatch import TorchDispatchMode as Mode
        from torch.utils._pytree import tree_map
    else:
        from dispatchcore.fx import make_fx
        from dispatchcore.subclass import tree_map
        Mode = lib.DispatchMode
    plain = lib.Tensor

    class Forward(Mode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Wrap(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return lib.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                                     device=elem.device, requires_grad=elem.requires_grad)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            args, kwargs = tree_map(lambda t: t.elem if type(t) is Wrap else t, (args, kwargs or {}))
            return tree_map(lambda t: Wrap(t) if type(t) is plain else t, func(*args, **kwargs))

    xn, w1n, w2n, yn = mlp_data()
    x, y = lib.tensor(xn), lib.tensor(yn)
    W1, W2 = lib.tensor(w1n, requires_grad=True), lib.tensor(w2n, requires_grad=True)

    def mlp_step(x, W1, W2, y):
        d = (x @ W1).relu() @ W2 - y
        loss = (d * d).mean()
        return (loss, *lib.autograd.grad(loss, [W1, W2]))

    def targets(gm):
        return tuple(str(n.target).removeprefix("aten.") for n in gm.graph.nodes if n.op == "call_function")

    a, b = lib.randn(10), lib.randn(10)
    return {"lib": lib, "add": lib.add, "a": a, "b": b, "wa": Wrap(a), "wb": Wrap(b), "Wrap": Wrap,
            "Forward": Forward, "make_fx": make_fx, "mlp_step": mlp_step, "x": x, "y": y, "W1": W1, "W2": W2,
            "targets": targets, "MLP_STEP_TARGETS": MLP_STEP_TARGETS}


@functools.cache
def dc_python_key() -> dict:
    """The dispatchcore side of the Python-key rows."""
    return _on_dispatchcore(_python_key)


@functools.cache
def torch_python_key() -> dict:
    """The torch side of the Python-key rows."""
    return _python_key(_torch())


_MODE_CHECK = ("seen = []\nclass Seen(Forward):\n    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n"
               "        seen.append(str(func))\n        return func(*args, **(kwargs or {}))\n"
               "with Seen():\n    add(a, b)\nassert seen == ['aten.add.Tensor'], seen")
_WRAP_CHECK = "r = wa + wb\nassert type(r) is Wrap and r.elem.tolist() == (a + b).tolist()"
_MAKE_FX_CHECK = ("gm = make_fx(mlp_step)(x, W1, W2, y)\nassert targets(gm) == MLP_STEP_TARGETS, targets(gm)\n"
                  "loss, g1, g2 = gm(x, W1, W2, y)\nassert abs(loss.item() - mlp_step(x, W1, W2, y)[0].item()) < 1e-5")


# --- the table of cases ---------------------------------------------------------------------
_DEFAULT_ROUTE = (
    'assert route(op1, c) == "AutogradCPU" and op1.table_entry("AutogradCPU")[1] == "backend fallback"\n'
)
_TORCH_ROUTE = 'assert not has_kernel("dc_compare::nop1", "AutogradCPU")\n'
_US = 1000.0

G15 = dict(kind="delta", must=1.0 * _US, target=0.5 * _US)
G17 = dict(kind="ratio", must=0.5, target=0.3)
G18 = dict(kind="ratio", must=1.0, target=0.65)
G10 = dict(kind="ratio", must=1.5, target=1.0)
G11 = dict(kind="ratio", must=1.25, target=0.75, gc_enabled=True)
G12 = dict(kind="ratio", must=1.5, target=1.15)
G13 = dict(kind="ratio", must=1.0, target=0.5, gc_enabled=True)
G14 = dict(kind="ratio", must=1.0, target=0.5)
G16 = dict(kind="ratio", must=1.0, target=0.5, gc_enabled=True)
G20 = dict(kind="delta", must=0.1 * _US, target=0.0)
G19 = dict(kind="delta", must=3.85 * _US, target=1.5 * _US)
G25 = dict(kind="ratio", must=1.0, target=0.5)
G26 = dict(kind="ratio", must=1.0, target=0.5)

# correctness first: each autograd statement is checked against a reference before it is timed
_MLP_CHECK = ("g1, g2 = mlp_step()\nassert close([g1.detach().numpy(), g2.detach().numpy()], mlp_ref), "
              "'MLP gradients differ from the numpy reference'\nassert W_clear()\n"
              "assert abs(mlp_fwd().item() - mlp_loss) < 1e-4")
_AUTOGRAD_CASES: list[Case] = [
    Case("G10", "add (10,) forward, requires_grad=True (records AddBackward0)", **G10,
         dc=Side(dc_autograd, "dc.add(ag, bg)", label="dc.add(ag, bg)",
                 check='y = dc.add(ag, bg)\nassert type(y.grad_fn).__name__ == "AddBackward0"\n'
                       'assert y.requires_grad and y.grad_fn.next_functions[1][0].variable is bg'),
         anchor=Side(torch_autograd, "torch.add(ag, bg)", label="torch.add(ag, bg)",
                     check='assert type(torch.add(ag, bg).grad_fn).__name__ == "AddBackward0"'),
         recorded=1860.0),
    Case("G11", "tiny MLP fwd+bwd step (32x64 @ 64x64 relu @ 64x10, MSE; gc on)", **G11,
         dc=Side(dc_autograd, "mlp_step()", label="d = (x @ W1).relu() @ W2 - y; (d * d).mean().backward()",
                 check=_MLP_CHECK.replace("W_clear()", "True")),
         anchor=Side(torch_autograd, "mlp_step()", label="d = relu(x @ W1) @ W2 - y; (d * d).mean().backward()",
                     check=_MLP_CHECK.replace("W_clear()", "True")),
         recorded=111000.0),
    Case("G12", "tiny MLP forward, no grad (weights without requires_grad)", **G12,
         dc=Side(dc_autograd, "mlp_fwd()", label="(d * d).mean(), d = (x @ W1).relu() @ W2 - y",
                 check="out = mlp_fwd()\nassert abs(out.item() - mlp_loss) < 1e-4 and out.grad_fn is None"),
         anchor=Side(torch_autograd, "mlp_fwd()", label="torch: the same forward",
                     check="out = mlp_fwd()\nassert abs(out.item() - mlp_loss) < 1e-4 and out.grad_fn is None"),
         recorded=17100.0),
    Case("G13", "one backward() on a 1-op graph: mul(a_rg, b).backward(go) (gc on)", **G13,
         dc=Side(dc_autograd, "fb()", label="mul(ag, b).backward(go); ag.grad = None",
                 check="mul(ag, b).backward(go)\nassert ag.grad.tolist() == b.tolist()\nag.grad = None"),
         anchor=Side(torch_autograd, "fb()", label="torch.mul(ag, b).backward(go); ag.grad = None",
                     check="torch.mul(ag, b).backward(go)\nassert ag.grad.tolist() == b.tolist()\nag.grad = None"),
         recorded=18900.0),
    Case("G14", "Python Function relu (save_for_backward) (10,): apply forward", **G14,
         dc=Side(dc_autograd, "MyReLU.apply(ag)", label="MyReLU.apply(ag)",
                 check='y = MyReLU.apply(ag)\nassert type(y.grad_fn).__name__ == "MyReLUBackward"\n'
                       'assert y.tolist() == ag.detach().clamp(min=0).tolist()'),
         anchor=Side(torch_autograd, "MyReLU.apply(ag)", label="torch.autograd.Function MyReLU.apply(ag)",
                     check='assert type(MyReLU.apply(ag).grad_fn).__name__ == "MyReLUBackward"'),
         recorded=5900.0),
    Case("G14", "Python Function relu (save_for_backward) (10,): fwd+bwd (gc on)", **G14, gc_enabled=True,
         dc=Side(dc_autograd, "relu_fb()", label="MyReLU.apply(ag).backward(go); ag.grad = None",
                 check="MyReLU.apply(ag).backward(go)\n"
                       "assert ag.grad.tolist() == [float(v > 0) for v in ag.detach().tolist()]\nag.grad = None"),
         anchor=Side(torch_autograd, "relu_fb()", label="torch: the same",
                     check="MyReLU.apply(ag).backward(go)\n"
                           "assert ag.grad.tolist() == [float(v > 0) for v in ag.detach().tolist()]\nag.grad = None"),
         recorded=38300.0),
    Case("G16", "custom op (Library def + CPU kernel + Function at Autograd) (10,) fwd+bwd (gc on)", **G16,
         dc=Side(dc_autograd, "custom_fb()", label="myadd(ag, bg).backward(go); grads cleared",
                 check='y = myadd(ag, bg)\nassert type(y.grad_fn).__name__ == "MyAddBackward"\n'
                       'assert y.tolist() == add(ag, bg).tolist()\ny.backward(go)\n'
                       'assert ag.grad.tolist() == bg.grad.tolist() == [1.0] * 10\nag.grad = bg.grad = None'),
         anchor=Side(torch_autograd, "custom_fb()", label="torch.library + register_autograd: the same",
                     check="myadd(ag, bg).backward(go)\n"
                           "assert ag.grad.tolist() == bg.grad.tolist() == [1.0] * 10\nag.grad = bg.grad = None"),
         recorded=52000.0),
    Case("G16", "custom_op + register_autograd (10,) fwd+bwd (gc on)", **G16,
         dc=Side(dc_autograd, "custom_op_fb()", label="library.custom_op myadd(ag, bg).backward(go); grads cleared",
                 check="custom_op_fb()\nassert ag.grad is None and bg.grad is None"),
         anchor=Side(torch_autograd, "custom_op_fb()", label="torch.library.custom_op: the same",
                     check="custom_op_fb()\nassert ag.grad is None and bg.grad is None"),
         recorded=57000.0),
    Case("info", "custom op (10,) forward only (records the Function's node)", kind="info",
         dc=Side(dc_autograd, "myadd(ag, bg)", label="myadd(ag, bg)"),
         anchor=Side(torch_autograd, "myadd(ag, bg)", label="torch: myadd(ag, bg) (register_autograd)")),
    Case("G20", "add (10,) under no_grad vs plain (guard once/100)", **G20,
         dc=Side(dc_autograd, inner("add(a, b)", "dc.no_grad()"), base=inner("add(a, b)"), per=INNER,
                 label="add(a, b) in no_grad() - add(a, b)",
                 check="before = tls_get()\nwith dc.no_grad():\n    assert tls_get() == before\n"
                       "    assert add(ag, bg).grad_fn is None"),
         anchor=Side(torch_autograd, inner("torch.add(a, b)", "torch.no_grad()"), base=inner("torch.add(a, b)"),
                     per=INNER, label="torch.add(a, b) in no_grad() - torch.add(a, b)",
                     check="with torch.no_grad():\n    assert torch.add(ag, bg).grad_fn is None"),
         recorded_note="not recorded (torch: within +-0.1 us)"),
    Case("G20", "add (10,) under inference_mode vs plain, normal tensors (guard once/100)", **G20,
         dc=Side(dc_autograd, inner("add(a, b)", "dc.inference_mode()"), base=inner("add(a, b)"), per=INNER,
                 label="add(a, b) in inference_mode() - add(a, b)",
                 check="with dc.inference_mode():\n    r = add(a, b)\n    assert r.is_inference()\n"
                       "    assert dc.tls_is_dispatch_key_excluded('AutogradFunctionality')"),
         anchor=Side(torch_autograd, inner("torch.add(a, b)", "torch.inference_mode()"),
                     base=inner("torch.add(a, b)"), per=INNER,
                     label="torch.add(a, b) in inference_mode() - torch.add(a, b)",
                     check="with torch.inference_mode():\n    assert torch.add(a, b).is_inference()"),
         recorded_note="not recorded (torch: within +-0.1 us)"),
]

# The Python key (issue 17). G25 is a ratio of overheads: each side's subclass add minus its plain add.
_PYTHON_KEY_CASES: list[Case] = [
    Case("G19", "add (10,) under a forwarding dispatch mode vs plain (mode once/100)", **G19,
         dc=Side(dc_python_key, inner("add(a, b)", "Forward()"), base=inner("add(a, b)"), per=INNER,
                 label="add(a, b) in Forward() - add(a, b)", check=_MODE_CHECK),
         anchor=Side(torch_python_key, inner("add(a, b)", "Forward()"), base=inner("add(a, b)"), per=INNER,
                     label="torch: the same, TorchDispatchMode", check=_MODE_CHECK),
         recorded=3850.0),
    Case("G25", "forwarding __torch_dispatch__ wrapper subclass: add (10,), cost over plain add", **G25,
         dc=Side(dc_python_key, "wa + wb", base="a + b", label="Wrap(a) + Wrap(b) - (a + b)", check=_WRAP_CHECK),
         anchor=Side(torch_python_key, "wa + wb", base="a + b", label="torch: the same subclass",
                     check=_WRAP_CHECK),
         recorded_note="not recorded"),
    Case("G26", "make_fx of the tiny MLP step (forward + autograd.grad, real tracing, 21 aten nodes)", **G26,
         dc=Side(dc_python_key, "make_fx(mlp_step)(x, W1, W2, y)", label="dispatchcore.fx.make_fx(step)(...)",
                 check=_MAKE_FX_CHECK),
         anchor=Side(torch_python_key, "make_fx(mlp_step)(x, W1, W2, y)", label="torch make_fx: the same",
                     check=_MAKE_FX_CHECK),
         recorded_note="not recorded"),
]


# A first step from the seeded model gives torch's loss (the recorded number), later steps learn.
_STEP_CHECK = ("first = {step}().item()\nassert abs(first - {loss0}) <= 1e-5 * {loss0}, first\n"
               "assert min({step}().item() for _ in range(5)) < first")
I16 = dict(kind="ratio", gc_enabled=True)
_TRAINING_CASES: list[Case] = [
    Case("I16", "MLP training step (docs/examples/mlp_classification.py: batch 32, 8-32-3, CE, Adam; gc on)",
         **I16, must=1.25, target=1.25,
         dc=Side(dc_training, "mlp_step()", label="zero_grad; loss_fn(model(xb), yb).backward(); Adam step",
                 check=_STEP_CHECK.format(step="mlp_step", loss0="mlp_loss0")),
         anchor=Side(torch_training, "mlp_step()", label="torch eager: the same step",
                     check=_STEP_CHECK.format(step="mlp_step", loss0="mlp_loss0")),
         recorded_note="not recorded"),
    Case("I16", "CNN training step (docs/examples/small_cnn.py: batch 16x1x16x16, conv/BN/pool x2, dropout, SGD)",
         **I16, must=2.0, target=2.0,
         dc=Side(dc_training, "cnn_step()", label="zero_grad; cross_entropy(model(x), y).backward(); SGD step",
                 check=_STEP_CHECK.format(step="cnn_step", loss0="cnn_loss0")),
         anchor=Side(torch_training, "cnn_step()", label="torch eager: the same step",
                     check=_STEP_CHECK.format(step="cnn_step", loss0="cnn_loss0")),
         recorded_note="not recorded"),
]

# each chain multiplies by 1.0001 per step: the leaf's gradient is 1.0001 ** steps (float32: to 1%)
_CHAIN_CHECK = ("g = {stmt}\nsteps = GRAPH_STEPS['{kind}'] // _graph_divisor\n"
                "assert abs(g[0].item() - 1.0001 ** steps) < 1e-2 * 1.0001 ** steps, g")
_LEARNS = "first = big_mlp_step().item()\nassert min(big_mlp_step().item() for _ in range(3)) < first"
GRAPHS = dict(kind="ratio", gc_enabled=True)


def _chain_case(goal: str, kind: str, metric: str, label: str, must: float, target: float) -> Case:
    """A long-graph row (G21-G23): ``<kind>_chain()`` on both sides, its leaf gradient checked first."""
    stmt = f"{kind}_chain()"
    check = _CHAIN_CHECK.format(stmt=stmt, kind=kind)
    return Case(goal, metric, **GRAPHS, must=must, target=target,
                dc=Side(dc_graphs, stmt, label=label, check=check),
                anchor=Side(torch_graphs, stmt, label="torch eager: the same", check=check),
                recorded_note="not recorded")


_GRAPH_CASES: list[Case] = [
    _chain_case("G21", "deep", "backward through a 100,000-op chain (x = x * 1.0001), fwd+bwd (gc on)",
                "x = x * 1.0001 (100,000 times); x.sum().backward()", 1.0, 0.75),
    _chain_case("G22", "inplace", "20,000 in-place mul_ on a leaf's clone, fwd+bwd (gc on)",
                "x = leaf.clone(); x.mul_(1.0001) (20,000 times); backward", 1.5, 1.0),
    _chain_case("G23", "function", "20,000 custom Function nodes (MulConst.apply), fwd+bwd (gc on)",
                "x = MulConst.apply(x) (20,000 times); backward", 1.0, 0.75),
    Case("G24", "784-256-128-10 MLP training step (batch 64, CrossEntropyLoss, SGD; gc on)", **GRAPHS,
         must=1.25, target=1.0,
         dc=Side(dc_graphs, "big_mlp_step()", label="zero_grad; loss_fn(mlp(xb), yb).backward(); SGD step",
                 check=_LEARNS),
         anchor=Side(torch_graphs, "big_mlp_step()", label="torch eager: the same", check=_LEARNS),
         recorded_note="not recorded"),
]


# --- eager tensor ops (G1-G9) ---------------------------------------------------------------
def _eager_arrays() -> dict:
    import numpy as np

    r = np.random.default_rng(0)
    arr = {n: r.standard_normal(shape).astype(np.float32) for n, shape in (
        ("s0", ()), ("s10", (10,)), ("s1k", (1000,)), ("s1m", (1_000_000,)),
        ("m64", (64, 64)), ("m512", (512, 512)), ("v", (32, 64)))}
    arr["t10"] = r.standard_normal((10,)).astype(np.float32)
    arr["t1m"] = r.standard_normal((1_000_000,)).astype(np.float32)
    return arr


@functools.cache
def dc_eager() -> dict:
    """The dispatchcore tensors, over the same data as the numpy and torch sides (no requires_grad)."""
    import numpy as np

    import dispatchcore as dc
    from dispatchcore.ops import aten

    dc.load_backends()
    arr = _eager_arrays()
    g = {"dc": dc, "np": np, "add": aten.add.Tensor, "relu": aten.relu.default, "sum": aten.sum.default,
         "mm": aten.mm.default, "add_": aten.add_.Tensor}
    for name, a in arr.items():
        g[name] = dc.tensor(a)
        g["n" + name] = g[name]._data
    g["out1m"] = np.empty_like(arr["s1m"])
    g["zero"] = np.zeros((), dtype=np.float32)
    return g


@functools.cache
def np_eager() -> dict:
    """The numpy anchors: the same arrays, raw ufunc calls."""
    import numpy as np

    g = {"np": np, **_eager_arrays()}
    g["out1m"] = np.empty_like(g["s1m"])
    g["zero"] = np.zeros((), dtype=np.float32)
    return g


@functools.cache
def torch_eager() -> dict:
    torch = _torch()
    import numpy as np

    g = {"torch": torch, "np": np}
    for name, a in _eager_arrays().items():
        g[name] = torch.from_numpy(a.copy())
        g["n" + name] = a
    return g


G1 = dict(kind="ratio", must=1.5, target=1.0)
G3 = dict(kind="delta", must=900.0, target=600.0)
G4 = dict(kind="ratio", must=1.15, target=1.05, alone=True)
G5 = dict(kind="ratio", must=1.0, target=0.9)
G6 = dict(kind="ratio", must=1.5, target=1.1)
G7 = dict(kind="ratio", must=1.10, target=None, alone=True)
G8 = dict(kind="ratio", must=1.5, target=1.0)
_EAGER_CASES: list[Case] = [
    Case("G1", "add (10,), no grad (AutogradCPU -> CPU)", **G1,
         dc=Side(dc_eager, "s10 + t10", check="assert (s10 + t10).tolist() == (ns10 + nt10).tolist()"),
         anchor=Side(torch_eager, "s10 + t10"), recorded=1200.0),
    Case("G2", "add on (), no grad", **G1,
         dc=Side(dc_eager, "s0 + s0", check="assert (s0 + s0).item() == float(ns0 + ns0)"),
         anchor=Side(torch_eager, "s0 + s0"), recorded=1280.0),
    Case("G2", "add on (1000,), no grad", **G1,
         dc=Side(dc_eager, "s1k + s1k", check="assert (s1k + s1k).shape == (1000,)"),
         anchor=Side(torch_eager, "s1k + s1k"), recorded=1340.0),
    Case("G3", "dispatch overhead: add(a, b) minus np.add on the data, (10,)", **G3,
         dc=Side(dc_eager, "dc.add(s10, t10)", base="np.add(ns10, nt10)",
                 check="assert dc.add(s10, t10).tolist() == (ns10 + nt10).tolist()"),
         anchor=Side(torch_eager, "torch.add(s10, t10)", base="np.add(ns10, nt10)"), recorded=900.0),
    Case("info", "operator handle call: aten.add.Tensor(a, b), (10,)", kind="info",
         dc=Side(dc_eager, "add(s10, t10)", label="aten.add.Tensor(s10, t10)"),
         anchor=Side(torch_eager, "torch.ops.aten.add.Tensor(s10, t10)")),
    Case("G4", "add (1_000_000,) vs numpy", **G4,
         dc=Side(dc_eager, "add(s1m, t1m)", check="assert add(s1m, t1m).shape == (1000000,)"),
         anchor=Side(np_eager, "np.add(s1m, t1m)")),
    Case("G4", "in-place add_ (1_000_000,) vs numpy out=", **G4,
         dc=Side(dc_eager, "add_(s1m, t1m)"), anchor=Side(np_eager, "np.add(s1m, t1m, out=s1m)")),
    Case("G4", "matmul 512x512 vs numpy", **G4,
         dc=Side(dc_eager, "m512 @ m512",
                 check="assert np.allclose((m512 @ m512).numpy(), nm512 @ nm512, rtol=1e-4, atol=1e-3)"),
         anchor=Side(np_eager, "m512 @ m512")),
    Case("G5", "matmul 64x64, no grad", **G5,
         dc=Side(dc_eager, "m64 @ m64", check="assert (m64 @ m64).shape == (64, 64)"),
         anchor=Side(torch_eager, "torch.matmul(m64, m64)"), recorded=7200.0),
    # the Tensor methods, as G1/G2 use `+` and G8/G9 the view and in-place methods (torch's
    # x.relu() and torch.relu(x) cost the same); G3 times the function, dc.add as torch.add
    Case("G6", "relu (10,), no grad: s10.relu()", **G6,
         dc=Side(dc_eager, "s10.relu()", check="assert s10.relu().tolist() == np.maximum(ns10, 0).tolist()"),
         anchor=Side(torch_eager, "torch.relu(s10)"), recorded=1060.0),
    Case("G6", "sum (10,), no grad: s10.sum()", **G6,
         dc=Side(dc_eager, "s10.sum()", check="assert abs(s10.sum().item() - float(ns10.sum())) < 1e-5"),
         anchor=Side(torch_eager, "torch.sum(s10)"), recorded=1390.0),
    Case("G7", "relu (1_000_000,) vs the best numpy kernel", **G7,
         dc=Side(dc_eager, "relu(s1m)"), anchor=Side(np_eager, "np.maximum(s1m, zero)")),
    Case("G8", "view(-1) on (32, 64)", **G8,
         dc=Side(dc_eager, "v.view(-1)", check="assert v.view(-1)._base is v"),
         anchor=Side(torch_eager, "v.view(-1)"), recorded=840.0),
    Case("G8", "x[0] on (32, 64)", **G8,
         dc=Side(dc_eager, "v[0]", check="assert v[0]._base is v"),
         anchor=Side(torch_eager, "v[0]"), recorded=840.0),
    Case("G8", "x.t() on (32, 64)", **G8,
         dc=Side(dc_eager, "v.t()", check="assert v.t()._base is v"),
         anchor=Side(torch_eager, "v.t()"), recorded=840.0),
    Case("G9", "in-place x.add_(y) (10,)", **G1,
         dc=Side(dc_eager, "s10.add_(t10)"), anchor=Side(torch_eager, "s10.add_(t10)"), recorded=870.0),
]

CASES: list[Case] = [
    # G15: a user Python kernel registered for a key, called through the dispatcher, minus
    # calling the same function directly. Default path: the op has no autograd kernel, so the
    # call goes AutogradCPU (built-in fallback) -> redispatch -> CPU, as torch.library ops do.
    Case("G15", "1-arg kernel overhead, default (AutogradCPU fallback -> CPU)", **G15,
         dc=Side(dc_ops, "op1(c)", base="nop1(c)", label="ops.nop1.default(c) - nop1(c)",
                 check=_DEFAULT_ROUTE + "assert op1(c) is R and nop1(c) is R"),
         anchor=Side(torch_ops, "op1(a)", base="t_nop1(a)",
                     label="torch.ops.nop1.default(a) - t_nop1(a)",
                     check=_TORCH_ROUTE + "assert op1(a) is OUT"),
         recorded=1150.0, recorded_note="nop.default 1.18 us - nop_impl 27.8 ns"),
    Case("G15", "2-arg kernel overhead, default (AutogradCPU fallback -> CPU)", **G15,
         dc=Side(dc_ops, "op2(c, c)", base="nop2(c, c)", label="ops.nop2.default(c, c) - nop2(c, c)",
                 check='assert route(op2, c, c) == "AutogradCPU" and op2(c, c) is R'),
         anchor=Side(torch_ops, "op2(a, b)", base="t_nop2(a, b)",
                     label="torch.ops.nop2.default(a, b) - t_nop2(a, b)",
                     check="assert op2(a, b) is OUT"),
         recorded=1820.0, recorded_note="myadd.default 3.01 us - myadd_impl 1.19 us (a torch.add kernel)"),
    Case("G15", "1-arg kernel overhead, below autograd (guard once/100)", **G15,
         dc=Side(dc_ops, inner("op1(c)", "B()"), base=inner("nop1(c)"), per=INNER,
                 label="ops.nop1.default(c) - nop1(c) in AutoDispatchBelowAutograd",
                 check='with B():\n    assert route(op1, c) == "CPU" and op1(c) is R'),
         anchor=Side(torch_ops, inner("op1(a)", "C._AutoDispatchBelowAutograd()"),
                     base=inner("t_nop1(a)"), per=INNER,
                     label="torch nop1.default(a) - t_nop1(a) in _AutoDispatchBelowAutograd",
                     check="with C._AutoDispatchBelowAutograd():\n    assert op1(a) is OUT")),
    Case("G15", "2-arg kernel overhead, below autograd (guard once/100)", **G15,
         dc=Side(dc_ops, inner("op2(c, c)", "B()"), base=inner("nop2(c, c)"), per=INNER,
                 label="ops.nop2.default(c, c) - nop2(c, c) in AutoDispatchBelowAutograd",
                 check='with B():\n    assert route(op2, c, c) == "CPU" and op2(c, c) is R'),
         anchor=Side(torch_ops, inner("op2(a, b)", "C._AutoDispatchBelowAutograd()"),
                     base=inner("t_nop2(a, b)"), per=INNER,
                     label="torch nop2.default(a, b) - t_nop2(a, b) in _AutoDispatchBelowAutograd",
                     check="with C._AutoDispatchBelowAutograd():\n    assert op2(a, b) is OUT")),
    Case("G15", "with_keyset kernel overhead, default (fallback -> CPU)", **G15,
         dc=Side(dc_ops, "opks(c)", base="nopks(KS_CPU, c)",
                 label="ops.nopks.default(c) - nopks(ks, c)",
                 check='assert route(opks, c) == "AutogradCPU" and opks(c) == KS_CPU'),
         anchor=Side(torch_ops, "opks(a)", base="t_nopks(TKS_CPU, a)",
                     label="torch nopks.default(a) - t_nopks(ks, a)",
                     check="assert opks(a) is OUT")),
    Case("G15", "with_keyset kernel overhead, below autograd (guard once/100)", **G15,
         dc=Side(dc_ops, inner("opks(c)", "B()"), base=inner("nopks(KS_CPU, c)"), per=INNER,
                 label="ops.nopks.default(c) - nopks(ks, c) in AutoDispatchBelowAutograd",
                 check='with B():\n    assert route(opks, c) == "CPU" and opks(c) == KS_CPU'),
         anchor=Side(torch_ops, inner("opks(a)", "C._AutoDispatchBelowAutograd()"),
                     base=inner("t_nopks(TKS_CPU, a)"), per=INNER,
                     label="torch nopks.default(a) - t_nopks(ks, a) in _AutoDispatchBelowAutograd",
                     check="with C._AutoDispatchBelowAutograd():\n    assert opks(a) is OUT")),
    # G17: grad-mode guards, constructed each time, enter+exit (no_grad leaves the key sets alone;
    # inference_mode edits them and the autograd state).
    Case("G17", "no_grad() enter+exit, built each time", **G17,
         dc=Side(dc_autograd, "with dc.no_grad(): pass", label="with dc.no_grad(): pass",
                 check="before = tls_get()\nwith dc.no_grad():\n    assert not dc.is_grad_enabled()\n"
                       "    assert tls_get() == before\nassert dc.is_grad_enabled()"),
         anchor=Side(torch_guards, "with torch.no_grad(): pass", label="with torch.no_grad(): pass",
                     check="with torch.no_grad():\n    assert not torch.is_grad_enabled()"),
         recorded=1450.0),
    Case("G17", "inference_mode() enter+exit, built each time", **G17,
         dc=Side(dc_autograd, "with dc.inference_mode(): pass", label="with dc.inference_mode(): pass",
                 check="before = tls_get()\nwith dc.inference_mode():\n    assert dc.is_inference_mode_enabled()\n"
                       "    assert dc.tls_is_dispatch_key_excluded('AutogradFunctionality')\n"
                       "assert tls_get() == before and not dc.is_inference_mode_enabled()"),
         anchor=Side(torch_guards, "with torch.inference_mode(): pass",
                     label="with torch.inference_mode(): pass",
                     check="with torch.inference_mode():\n    assert torch.is_inference_mode_enabled()"),
         recorded=1410.0),
    # G18: dispatch-key guards, constructed each time, enter+exit.
    Case("G18", "ExcludeDispatchKeyGuard(ks) enter+exit, ks pre-built", **G18,
         dc=Side(dc_ops, "with E(ks): pass", label="with ExcludeDispatchKeyGuard(ks): pass",
                 check='with E(ks):\n    assert route(op1, c) == "CPU"\n' + _DEFAULT_ROUTE),
         anchor=Side(torch_guards, "with C._ExcludeDispatchKeyGuard(tks): pass",
                     label="with C._ExcludeDispatchKeyGuard(ks): pass",
                     check="with C._ExcludeDispatchKeyGuard(tks):\n"
                           "    assert excluded(C.DispatchKey.AutogradCPU)"),
         recorded=682.2),
    Case("G18", "AutoDispatchBelowAutograd() enter+exit", **G18,
         dc=Side(dc_ops, "with B(): pass", label="with AutoDispatchBelowAutograd(): pass",
                 check='with B():\n    assert route(op1, c) == "CPU"'),
         anchor=Side(torch_guards, "with C._AutoDispatchBelowAutograd(): pass",
                     label="with C._AutoDispatchBelowAutograd(): pass",
                     check='with C._AutoDispatchBelowAutograd():\n'
                           '    assert excluded(C.DispatchKey.AutogradFunctionality)'),
         recorded=446.1),
    Case("G18", "AutoDispatchBelowADInplaceOrView() enter+exit", **G18,
         dc=Side(dc_ops, "with BA(): pass", label="with AutoDispatchBelowADInplaceOrView(): pass",
                 check='with BA():\n    assert route(op1, c) == "CPU"\n'
                       '    assert dc.tls_is_dispatch_key_excluded("ADInplaceOrView")'),
         anchor=Side(torch_guards, "with C._AutoDispatchBelowADInplaceOrView(): pass",
                     label="with C._AutoDispatchBelowADInplaceOrView(): pass",
                     check='with C._AutoDispatchBelowADInplaceOrView():\n'
                           '    assert excluded(C.DispatchKey.ADInplaceOrView)'),
         recorded_note="recorded only pre-built (260.5 ns)"),
    Case("G18", "IncludeDispatchKeyGuard(CPU) enter+exit", **G18,
         dc=Side(dc_ops, "with I(K): pass", label="with IncludeDispatchKeyGuard(DispatchKey.CPU): pass",
                 check='with I(K):\n    assert route(op1, e) == "CPU"\nassert route(op1, e) == "Undefined"'),
         anchor=Side(torch_guards, "with C._IncludeDispatchKeyGuard(tK): pass",
                     label="with C._IncludeDispatchKeyGuard(DispatchKey.CPU): pass",
                     check="with C._IncludeDispatchKeyGuard(tK):\n    assert included(tK)"),
         recorded=618.9),
    Case("G18", "ForceDispatchKeyGuard(inc, exc) enter+exit", **G18,
         dc=Side(dc_ops, "with F(inc, exc): pass", label="with ForceDispatchKeyGuard(inc, exc): pass",
                 check='with F(inc, exc):\n    assert route(op1, c) == "CPU"\n' + _DEFAULT_ROUTE),
         anchor=Side(torch_guards, "with C._ForceDispatchKeyGuard(tinc, texc): pass",
                     label="with C._ForceDispatchKeyGuard(inc, exc): pass",
                     check='with C._ForceDispatchKeyGuard(tinc, texc):\n'
                           '    assert excluded(C.DispatchKey.AutogradCPU)'),
         ),
    # No goal: what one registration costs (validate, rebuild the affected table slots, undo).
    Case("info", "registration: impl at CPU + handle.remove() (2 table rebuilds)", kind="info",
         dc=Side(dc_ops, "lib.impl('reg', regk, 'CPU').remove()",
                 label="lib.impl('reg', k, 'CPU').remove()",
                 check="h = lib.impl('reg', regk, 'CPU')\nassert reg(c) is R\nh.remove()\n"
                       "assert reg.table_entry('CPU')[1] == 'missing'"),
         anchor=None),
]
# --- everyday calls (OPS): per-call time of the Tensor API a user writes, beside torch ----------
def _everyday(lib) -> dict:
    """Small tensors (4x8 floats, an index, a mask), built alike for ``lib`` (dispatchcore or torch).

    ``p`` is the one that changes (``p.add_``): the others keep their values for every row.
    """
    lib.manual_seed(0)
    x = lib.randn(4, 8)
    return {"lib": lib, "F": lib.nn.functional, "x": x, "y": lib.randn(4, 8), "m": lib.randn(8, 8),
            "p": lib.randn(4, 8), "i": lib.randint(0, 4, (4,)), "b": lib.randn(4, 8) > 0,
            "w": lib.randn(8, 8, requires_grad=True)}


@functools.cache
def dc_everyday() -> dict:
    """The dispatchcore side of the OPS rows."""
    return _on_dispatchcore(_everyday)


@functools.cache
def torch_everyday() -> dict:
    """The torch side of the OPS rows."""
    return _everyday(_torch())


# One row per statement, the same text on both sides; no goal (kind "info"): the ratio says where
# the everyday API is far from torch's per-call cost (``--only OPS``).
EVERYDAY = (
    "lib.empty(4, 8)", "lib.zeros(4, 8)", "lib.full((4, 8), 2.0)", "lib.arange(10)", "lib.tensor([1.0, 2.0])",
    "lib.randn(4, 8)", "lib.empty_like(x)", "lib.zeros_like(x)", "x.new_zeros(3)", "x.clone()", "x.detach()",
    "x.to(lib.float64)", "x.float()", "x + 1", "x * y", "x.add(y, alpha=2)", "p.add_(y, alpha=0.5)", "x.abs()",
    "x.exp()", "x.sum()", "x.sum(dim=1)", "x.mean(dim=0)", "x.max(dim=1)", "x.argmax(dim=1)", "x.std()",
    "x.softmax(dim=1)", "x.log_softmax(dim=1)", "lib.cat([x, y])", "lib.stack([x, y])", "x.reshape(8, 4)",
    "x.view(-1)", "x.flatten()", "x.permute(1, 0)", "x.T", "x.unsqueeze(0)", "x.expand(2, 4, 8)", "x[0]",
    "x[:, 1]", "x[i]", "x[b]", "x @ m", "lib.where(b, x, y)", "x.masked_fill(b, 0.0)", "x.clamp(-1, 1)",
    "x.index_select(0, i)", "x.gather(1, i.view(4, 1))", "x.cumsum(dim=1)", "x.topk(2)", "x.sort(dim=1)",
    "x.chunk(2)", "x.repeat(2, 1)", "F.relu(x)", "F.linear(x, m)", "F.mse_loss(x, y)", "F.cross_entropy(x, i)",
    "(w * 2).sum()",
)
_EVERYDAY_CASES = [Case("OPS", stmt, kind="info", dc=Side(dc_everyday, stmt), anchor=Side(torch_everyday, stmt))
                   for stmt in EVERYDAY]


CASES += _AUTOGRAD_CASES
CASES += _PYTHON_KEY_CASES
CASES += _TRAINING_CASES
CASES += _GRAPH_CASES
CASES += _EVERYDAY_CASES
CASES = _EAGER_CASES + CASES


# --- running --------------------------------------------------------------------------------
@dataclass
class Row:
    """A measured row: values in ns (delta rows: overheads) or None."""

    goal: str
    metric: str
    kind: str
    dc: float | None
    anchor: float | None
    anchor_source: str  # "measured" | "recorded" | "none"
    value: float | None  # ratio dc/anchor (ratio rows) or dc - anchor in ns (delta rows)
    must: float | None
    target: float | None
    must_ok: bool | None
    target_ok: bool | None
    notes: str
    details: list


def _globals(side: Side) -> dict:
    glb = dict(side.setup())
    glb["_R"] = range(INNER)
    return glb


def _prepare(case: Case, prefix: str = "") -> tuple[list[Entry], dict[str, Side]]:
    """The timed entries of one row (named ``prefix + side:part``) and the sides that have them."""
    entries: list[Entry] = []
    sides: dict[str, Side] = {}
    for tag, side in (("dispatchcore", case.dc), ("anchor", case.anchor)):
        if side is None:
            continue
        try:
            glb = _globals(side)
        except Unavailable:
            continue
        if side.check:
            check_glb = dict(glb)
            exec(side.check, check_glb)  # our own statements; raises on a broken path
        sides[tag] = side
        entries.append(Entry(f"{prefix}{tag}:stmt", side.stmt, glb, side.per))
        if side.base is not None:
            entries.append(Entry(f"{prefix}{tag}:base", side.base, glb, side.per))
    return entries, sides


def _run_case(case: Case, rounds: int, target: float) -> Row:
    """Measure one row on its own: its statements form one interleaved group."""
    entries, sides = _prepare(case)
    timings = measure(entries, rounds=rounds, target=target, gc_enabled=case.gc_enabled) if entries else {}
    return _row(case, sides, timings)


def _run_together(cases: list[Case], rounds: int, target: float) -> list[Row]:
    """Measure every row's statements in one interleaved group (one per gc setting).

    Each statement's samples then spread over the whole run instead of one row's slice of it, so
    a burst of load from other tenants cannot spoil every sample of a row (the min stays honest).
    """
    prepared = [(case, *_prepare(case, f"{i}/")) for i, case in enumerate(cases)]
    timings: dict = {}
    for gc_enabled in (False, True):
        group = [e for case, entries, _ in prepared if case.gc_enabled == gc_enabled and not case.alone
                 for e in entries]
        if group:
            timings.update(measure(group, rounds=rounds, target=target, gc_enabled=gc_enabled))
    for case, entries, _ in prepared:
        if case.alone and entries:
            timings.update(measure(entries, rounds=rounds, target=target, gc_enabled=case.gc_enabled))
    return [_row(case, sides, timings, f"{i}/") for i, (case, _, sides) in enumerate(prepared)]


def _row(case: Case, sides: dict[str, Side], timings: dict, prefix: str = "") -> Row:
    notes: list[str] = []

    def value_of(tag: str) -> float | None:
        if tag not in sides:
            return None
        t = timings[f"{prefix}{tag}:stmt"].min_ns
        if sides[tag].base is not None:  # delta rows, and ratio rows of overheads (G25)
            t -= timings[f"{prefix}{tag}:base"].min_ns
        return t

    details = []
    for tag, side in sides.items():
        for part in ("stmt", "base"):
            tm = timings.get(f"{prefix}{tag}:{part}")
            if tm is not None:
                what = side.label or side.stmt
                if part == "base":
                    what = f"  base: {side.base.splitlines()[-1].strip()}"
                details.append({"side": tag, "part": part, "what": what, "min_ns": tm.min_ns,
                                "median_ns": tm.median_ns, "loops": tm.loops})
    dc_v = value_of("dispatchcore")
    anchor_v = value_of("anchor")
    source = "measured" if anchor_v is not None else "none"
    if anchor_v is None and case.recorded is not None:
        anchor_v, source = case.recorded, "recorded"
        notes.append("anchor recorded" + (f": {case.recorded_note}" if case.recorded_note else ""))
    elif anchor_v is None and case.anchor is not None:
        notes.append(f"anchor {case.recorded_note or 'not recorded'}")
    if case.dc is None and case.na:
        notes.insert(0, case.na)
    value = None
    if dc_v is not None and anchor_v is not None:
        value = dc_v - anchor_v if case.kind == "delta" else dc_v / anchor_v
    gated = dc_v if case.kind == "delta" else value
    must_ok = None if gated is None or case.must is None else gated <= case.must
    target_ok = None if gated is None or case.target is None else gated <= case.target
    return Row(case.goal, case.metric, case.kind, dc_v, anchor_v, source, value, case.must,
               case.target, must_ok, target_ok, "; ".join(notes), details)


def _fmt_value(kind: str, v: float | None) -> str:
    if v is None:
        return "-"
    if kind in ("ratio", "info"):  # an info row's value is a ratio too, with no goal
        return f"{v:.2f}x"
    if kind == "delta":
        return fmt_ns(v, sign=True)
    return fmt_ns(v)


def _verdict(ok: bool | None, row: Row) -> str:
    if row.dc is None:
        return "n/a"
    if ok is None:
        return "-" if row.must is None else "?"
    return "PASS" if ok else "MISS"


def _print_details(row: Row) -> None:
    print(f"\n== {row.goal}  {row.metric}")
    for d in row.details:
        print(f"   {d['side']:<13} {d['what']:<66} min {fmt_ns(d['min_ns']):>10}  "
              f"median {fmt_ns(d['median_ns']):>10}  ({d['loops']} loops)")
    if not row.details:
        print("   (nothing measured here)")
    sys.stdout.flush()


HEADER = ("goal", "metric", "dispatchcore", "anchor", "vs anchor", "must", "target", "must?", "target?",
          "notes")


def _table(rows: list[Row]) -> str:
    lines = []
    for r in rows:
        dc = "n/a" if r.dc is None else fmt_ns(r.dc, sign=r.kind == "delta")
        anchor = "-" if r.anchor is None else fmt_ns(r.anchor, sign=r.kind == "delta")
        if r.anchor_source == "recorded":
            anchor += " (rec)"
        vs = "n/a" if r.dc is None else _fmt_value(r.kind, r.value)
        lines.append((r.goal, r.metric, dc, anchor, vs, _fmt_value(r.kind, r.must),
                      _fmt_value(r.kind, r.target), _verdict(r.must_ok, r), _verdict(r.target_ok, r),
                      r.notes))
    widths = [max(len(HEADER[i]), *(len(line[i]) for line in lines)) if lines else len(HEADER[i])
              for i in range(len(HEADER))]
    right = {2, 3, 4, 5, 6}

    def fmt(cells) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [fmt(HEADER), fmt(["-" * w for w in widths])]
    out += [fmt(line) for line in lines]
    return "\n".join(out)


LEGEND = """\
ratio rows: dispatchcore and anchor are min times per call; vs anchor = dispatchcore / anchor; must and
  target bound that ratio.
delta rows (+us goals): dispatchcore and anchor are overheads = min(op call) - min(direct call); vs anchor
  = dispatchcore - anchor; must and target bound the dispatchcore overhead.
(rec) = number recorded in docs/performance.md on the anchor machine, not measured here."""


def main(argv: list[str] | None = None) -> int:
    global _NO_TORCH, _graph_divisor
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="comma-separated goal ids, e.g. G15,G18 (default: all)")
    p.add_argument("--rounds", type=int, default=21, help="interleaved rounds per row (default 21)")
    p.add_argument("--target", type=float, default=None, help="seconds per sample (default 0.02)")
    p.add_argument("--quick", action="store_true", help="tiny calibration target (CI smoke run)")
    p.add_argument("--no-torch", action="store_true", help="do not import torch; use recorded anchors")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    p.add_argument("--strict", action="store_true", help="exit 1 when a row misses its must threshold")
    p.add_argument("--together", action="store_true",
                   help="interleave all selected rows in one group (robust on a noisy shared machine; "
                        "use many short samples, e.g. --target 0.002 --rounds 200)")
    args = p.parse_args(argv)
    _NO_TORCH = args.no_torch
    _graph_divisor = _QUICK_DIVISOR if args.quick else 1
    target = args.target if args.target is not None else (0.0005 if args.quick else 0.02)
    only = {g.strip().upper() for g in args.only.split(",") if g.strip()}
    cases = [c for c in CASES if not only or c.goal.upper() in only]
    if not cases:
        print(f"no case matches --only {args.only!r}; goals: {sorted({c.goal for c in CASES})}")
        return 2
    if not _NO_TORCH:
        try:
            _torch()
        except Unavailable:
            pass
    pin_threads()
    print("# dispatchcore vs anchors (docs/performance.md), same process, interleaved rounds")
    for k, v in env_info().items():
        print(f"#   {k}: {v}")
    print(f"#   rounds: {args.rounds}, target per sample: {target * 1e3:g} ms"
          + (", all rows interleaved together" if args.together else ""))
    if args.quick:
        print(f"#   --quick: the G21-G23 graphs are 1/{_QUICK_DIVISOR} of the lengths their rows name")
    if args.together:
        rows = _run_together(cases, args.rounds, target)
        for row in rows:
            _print_details(row)
    else:
        rows = []
        for case in cases:
            row = _run_case(case, args.rounds, target)
            _print_details(row)
            rows.append(row)
    print(f"\n# end loadavg_1_5_15: {env_info().get('loadavg_1_5_15')}\n")
    print(_table(rows))
    print()
    print(LEGEND)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": env_info(), "rounds": args.rounds, "target_s": target,
                       "rows": [asdict(r) for r in rows]}, f, indent=1, default=str)
    if args.strict and any(r.must_ok is False for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
