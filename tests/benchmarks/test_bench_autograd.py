"""pytest-benchmark cases for the autograd goals of docs/performance.md (G10-G14, G16, G20).

Groups are named after the goal ids. Every case first checks that what it times computes the right
thing (the recorded node, the gradients against a numpy or torch reference), so a broken path
fails instead of being benchmarked; nothing here is skipped because an operator is missing. The
default run (``--benchmark-disable``) executes each case once, untimed. The same-process
comparison with torch and the must/target verdicts are in ``bench/compare.py``; the torch anchor
cases are skipped when torch is missing. G17 (grad-mode guards) is in test_bench_dispatch.py.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.ops import aten

G10 = "G10 add forward with requires_grad"
G11 = "G11 tiny MLP fwd+bwd"
G12 = "G12 tiny MLP forward, no grad"
G13 = "G13 one backward on a 1-op graph"
G14 = "G14 Python autograd Function"
G16 = "G16 differentiable custom op"
G20 = "G20 per-op cost under no_grad / inference_mode"

INNER = 100


@pytest.fixture(autouse=True)
def _modes_restored():
    yield
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()


@pytest.fixture
def gc_on():
    """Whole training steps are timed with the cycle collector on (docs/performance.md, Method)."""
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def mlp_data(seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal((32, 64)).astype(np.float32)
    w1 = (r.standard_normal((64, 64)) * 0.1).astype(np.float32)
    w2 = (r.standard_normal((64, 10)) * 0.1).astype(np.float32)
    y = r.standard_normal((32, 10)).astype(np.float32)
    return x, w1, w2, y


def mlp_reference():
    """Loss and the W1/W2 gradients of the step, by hand in float64 numpy."""
    x, w1, w2, y = (a.astype(np.float64) for a in mlp_data())
    h_pre = x @ w1
    mask = h_pre > 0
    h = h_pre * mask
    d = h @ w2 - y
    gd = d * (2.0 / d.size)
    return float(np.mean(d * d)), (x.T @ ((gd @ w2.T) * mask), h.T @ gd)


def assert_close(got, ref):
    for g, r in zip(got, ref):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), r, rtol=1e-4, atol=1e-6)


# --- dispatchcore ---------------------------------------------------------------------------------
@pytest.fixture
def tensors():
    a, b = dc.randn(10), dc.randn(10)
    return {"a": a, "b": b, "ag": a.clone().requires_grad_(True), "bg": b.clone().requires_grad_(True),
            "go": dc.ones(10)}


def test_g10_add_requires_grad(benchmark, tensors):
    benchmark.group = G10
    add, ag, bg = dc.add, tensors["ag"], tensors["bg"]  # the function, as torch.add is timed
    y = add(ag, bg)
    assert type(y.grad_fn).__name__ == "AddBackward0" and y.requires_grad
    assert [n.variable for n, _ in y.grad_fn.next_functions] == [ag, bg]
    assert type(benchmark(add, ag, bg).grad_fn).__name__ == "AddBackward0"


def test_g10_add_no_grad_baseline(benchmark, tensors):
    benchmark.group = G10
    y = benchmark(dc.add, tensors["a"], tensors["b"])
    assert y.grad_fn is None and not y.requires_grad


@pytest.fixture
def mlp():
    xn, w1n, w2n, yn = mlp_data()
    x, y = dc.tensor(xn), dc.tensor(yn)
    W1, W2 = dc.tensor(w1n.copy(), requires_grad=True), dc.tensor(w2n.copy(), requires_grad=True)
    W1c, W2c = dc.tensor(w1n.copy()), dc.tensor(w2n.copy())

    def step():
        d = (x @ W1).relu() @ W2 - y
        (d * d).mean().backward()
        g1, g2 = W1.grad, W2.grad
        W1.grad = None
        W2.grad = None
        return g1, g2

    def forward():
        d = (x @ W1c).relu() @ W2c - y
        return (d * d).mean()

    return step, forward


def test_g11_mlp_step(benchmark, mlp, gc_on):
    """Fails (not skips) when an op of the MLP has no derivative yet: the grads must match numpy."""
    benchmark.group = G11
    step, _ = mlp
    _, ref = mlp_reference()
    assert_close([g.detach().numpy() for g in step()], ref)
    g1, g2 = benchmark(step)
    assert_close([g1.numpy(), g2.numpy()], ref)


def test_g12_mlp_forward(benchmark, mlp):
    benchmark.group = G12
    _, forward = mlp
    loss, _ = mlp_reference()
    out = benchmark(forward)
    assert out.grad_fn is None and abs(out.item() - loss) < 1e-4


def test_g13_one_backward_one_op_graph(benchmark, tensors, gc_on):
    benchmark.group = G13
    mul, ag, b, go = aten.mul.Tensor, tensors["ag"], tensors["b"], tensors["go"]

    def fwd_bwd():
        mul(ag, b).backward(go)
        g = ag.grad
        ag.grad = None
        return g

    assert fwd_bwd().tolist() == b.tolist()
    assert benchmark(fwd_bwd).tolist() == b.tolist()


class MyReLU(dc.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0)


def test_g14_function_apply_forward(benchmark, tensors):
    benchmark.group = G14
    ag = tensors["ag"]
    y = benchmark(MyReLU.apply, ag)
    assert type(y.grad_fn).__name__ == "MyReLUBackward"
    assert y.tolist() == [max(v, 0.0) for v in ag.detach().tolist()]


def test_g14_function_fwd_bwd(benchmark, tensors, gc_on):
    benchmark.group = G14
    ag, go = tensors["ag"], tensors["go"]

    def fwd_bwd():
        MyReLU.apply(ag).backward(go)
        g = ag.grad
        ag.grad = None
        return g

    expected = [float(v > 0) for v in ag.detach().tolist()]
    assert fwd_bwd().tolist() == expected
    assert benchmark(fwd_bwd).tolist() == expected


@pytest.fixture
def custom_add(lib, ns):
    """``ns::myadd``: Library def, a CPU kernel, a Function registered at Autograd."""
    lib.define("myadd(Tensor a, Tensor b) -> Tensor")
    op = getattr(dc.ops, ns).myadd.default

    class MyAdd(dc.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            with dc.AutoDispatchBelowADInplaceOrView():
                return op(a, b)

        @staticmethod
        def backward(ctx, g):
            return g, g

    lib.impl("myadd", lambda a, b: aten.add.Tensor(a, b), "CPU")
    lib.impl("myadd", MyAdd, "Autograd")
    return op


def test_g16_custom_op_fwd_bwd(benchmark, custom_add, tensors, gc_on):
    benchmark.group = G16
    ag, bg, go = tensors["ag"], tensors["bg"], tensors["go"]
    y = custom_add(ag, bg)
    assert type(y.grad_fn).__name__ == "MyAddBackward"
    assert y.tolist() == aten.add.Tensor(tensors["a"], tensors["b"]).tolist()

    def fwd_bwd():
        custom_add(ag, bg).backward(go)
        grads = ag.grad, bg.grad
        ag.grad = None
        bg.grad = None
        return grads

    ga, gb = benchmark(fwd_bwd)
    assert ga.tolist() == gb.tolist() == [1.0] * 10


@pytest.mark.parametrize("guard", ["plain", "no_grad", "inference_mode"])
def test_g20_add_under_guard(benchmark, tensors, guard):
    """INNER calls per guard entry (the guard's own cost is G17's)."""
    benchmark.group = G20
    add, a, b = aten.add.Tensor, tensors["a"], tensors["b"]
    calls = range(INNER)

    def run():
        if guard == "plain":
            for _ in calls:
                r = add(a, b)
        elif guard == "no_grad":
            with dc.no_grad():
                for _ in calls:
                    r = add(a, b)
        else:
            with dc.inference_mode():
                for _ in calls:
                    r = add(a, b)
        return r

    r = benchmark(run)
    assert r.tolist() == (a + b).tolist()
    assert r.is_inference() is (guard == "inference_mode")


# --- torch anchors ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def torch_side():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)

    class TMyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0)

    lib = torch.library.Library("dc_bench_autograd", "DEF")
    lib.define("myadd(Tensor a, Tensor b) -> Tensor")
    lib.impl("myadd", lambda a, b: torch.add(a, b), "CPU")
    torch.library.register_autograd("dc_bench_autograd::myadd", lambda ctx, g: (g, g),
                                    setup_context=lambda ctx, inputs, output: None, lib=lib)
    yield {"torch": torch, "MyReLU": TMyReLU, "myadd": torch.ops.dc_bench_autograd.myadd.default}
    lib._destroy()
    torch.set_num_threads(threads)


def test_torch_anchor_g10(benchmark, torch_side):
    benchmark.group = G10
    torch = torch_side["torch"]
    ag, bg = torch.randn(10, requires_grad=True), torch.randn(10, requires_grad=True)
    assert type(benchmark(torch.add, ag, bg).grad_fn).__name__ == "AddBackward0"


def torch_mlp(torch):
    xn, w1n, w2n, yn = mlp_data()
    x, y = torch.from_numpy(xn), torch.from_numpy(yn)
    W1 = torch.from_numpy(w1n.copy()).requires_grad_(True)
    W2 = torch.from_numpy(w2n.copy()).requires_grad_(True)
    return x, y, W1, W2


def test_torch_anchor_g12(benchmark, torch_side):
    benchmark.group = G12
    torch = torch_side["torch"]
    x, y, W1, W2 = torch_mlp(torch)
    W1c, W2c = W1.detach(), W2.detach()

    def forward():
        d = torch.relu(x @ W1c) @ W2c - y
        return (d * d).mean()

    loss, _ = mlp_reference()
    out = benchmark(forward)
    assert out.grad_fn is None and abs(out.item() - loss) < 1e-4


def test_torch_anchor_g11(benchmark, torch_side, gc_on):
    benchmark.group = G11
    torch = torch_side["torch"]
    x, y, W1, W2 = torch_mlp(torch)

    def step():
        d = torch.relu(x @ W1) @ W2 - y
        (d * d).mean().backward()
        g1, g2 = W1.grad, W2.grad
        W1.grad = None
        W2.grad = None
        return g1, g2

    _, ref = mlp_reference()
    g1, g2 = benchmark(step)
    assert_close([g1.numpy(), g2.numpy()], ref)


def test_torch_anchor_g13(benchmark, torch_side, gc_on):
    benchmark.group = G13
    torch = torch_side["torch"]
    ag, b, go = torch.randn(10, requires_grad=True), torch.randn(10), torch.ones(10)

    def fwd_bwd():
        torch.mul(ag, b).backward(go)
        g = ag.grad
        ag.grad = None
        return g

    assert benchmark(fwd_bwd).tolist() == b.tolist()


def test_torch_anchor_g14(benchmark, torch_side, gc_on):
    benchmark.group = G14
    torch, fn = torch_side["torch"], torch_side["MyReLU"]
    ag, go = torch.randn(10, requires_grad=True), torch.ones(10)

    def fwd_bwd():
        fn.apply(ag).backward(go)
        g = ag.grad
        ag.grad = None
        return g

    assert benchmark(fwd_bwd).tolist() == (ag.detach() > 0).float().tolist()


def test_torch_anchor_g16(benchmark, torch_side, gc_on):
    benchmark.group = G16
    torch, op = torch_side["torch"], torch_side["myadd"]
    ag, bg, go = torch.randn(10, requires_grad=True), torch.randn(10, requires_grad=True), torch.ones(10)

    def fwd_bwd():
        op(ag, bg).backward(go)
        grads = ag.grad, bg.grad
        ag.grad = None
        bg.grad = None
        return grads

    ga, gb = benchmark(fwd_bwd)
    assert ga.tolist() == gb.tolist() == [1.0] * 10
