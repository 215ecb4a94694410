"""The CUDA backend on a real GPU: every kernel against the CPU backend, gradcheck on the device.

Marked ``cuda``; every test that needs a GPU skips, with the reason ``dispatchcore.cuda`` gives
(pycuda, the driver or a device missing), where there is none. Run them on a GPU machine with
``python scripts/validate_gpu.py`` (or ``python -m pytest -m cuda tests/gpu``). Sizes are odd on
purpose (1, 37, 255, 1_000_003; 70x33 @ 33x45) so that partial blocks and tiles are exercised.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.ops import aten

pytestmark = pytest.mark.cuda

DTYPES = [dc.bool_, dc.uint8, dc.int8, dc.int16, dc.int32, dc.int64, dc.float16, dc.float32, dc.float64]
NUMERIC = DTYPES[1:]
FLOATS = [dc.float16, dc.float32, dc.float64]
RNG = np.random.default_rng(1234)


def _unavailable_reason() -> str | None:
    if dc.cuda.is_available():
        return None
    try:
        dc.cuda.init()
    except dc.cuda.CudaUnavailableError as e:
        return f"no usable CUDA ({e.missing} missing): {e}"
    return "no usable CUDA"


@pytest.fixture(scope="module")
def gpu():
    """Skip without a GPU; otherwise build every kernel module once, in parallel."""
    reason = _unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    dc.load_backends()
    from dispatchcore_backends.cuda import runtime, sources

    runtime.get_runtime().prebuild([(f, c) for f, codes in sources.FAMILIES.items() for c in codes], workers=16)
    return runtime.get_runtime()


# --- helpers -------------------------------------------------------------------------------------
def sample(dtype, shape, low=-4.0, high=4.0):
    """Values every dtype holds exactly enough: small integers, or floats away from 0 for divisions."""
    if dtype is dc.bool_:
        return dc.tensor(np.asarray(RNG.random(shape) > 0.5))
    if not dtype.is_floating_point:
        lo = 0 if dtype is dc.uint8 else int(low) * 10
        return dc.tensor(np.asarray(RNG.integers(lo, int(high) * 10, shape)), dtype=dtype)
    return dc.tensor(np.asarray(RNG.uniform(low, high, shape)).astype(dtype.np))


def tol(dtype):
    return {dc.float16: (2e-3, 2e-3), dc.float32: (1e-5, 1e-5), dc.float64: (1e-12, 1e-12)}.get(dtype, (0, 0))


def check(got, want, rtol=None, atol=None, strides=True):
    """A CUDA result against the CPU backend's: device, shape, dtype, strides and values."""
    assert got.device == dc.device("cuda", 0), got.device
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert got.dtype is want.dtype, (got.dtype, want.dtype)
    if strides:
        assert got.stride() == want.stride(), (got.stride(), want.stride())
    r, a = tol(want.dtype)
    g, w = got.cpu().numpy(), want.numpy()
    if w.dtype.kind in "biu":
        assert np.array_equal(g, w)
    else:
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol if rtol is not None else r,
                                   atol=atol if atol is not None else a, equal_nan=True)


def both(*hosts):
    return hosts, tuple(h.to("cuda") for h in hosts)


# --- transfers, casts, fills ------------------------------------------------------------------------
@pytest.mark.parametrize("src", DTYPES, ids=str)
@pytest.mark.parametrize("dst", DTYPES, ids=str)
def test_every_cast_kernel(gpu, src, dst):
    (h,), (c,) = both(sample(src, (37, 3)))
    check(c.to(dst), h.to(dst))
    check(c.t().to(dst), h.t().to(dst))  # strided source, layout kept


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fill_zero_and_factories(gpu, dtype):
    value = True if dtype is dc.bool_ else 3
    check(dc.full((5, 7), value, dtype=dtype, device="cuda"), dc.full((5, 7), value, dtype=dtype))
    check(dc.zeros(255, dtype=dtype, device="cuda"), dc.zeros(255, dtype=dtype))
    check(dc.ones(2, 3, dtype=dtype, device="cuda"), dc.ones(2, 3, dtype=dtype))
    c = dc.ones(4, 6, dtype=dtype, device="cuda")
    c[1:3, ::2].fill_(0)
    h = dc.ones(4, 6, dtype=dtype)
    h[1:3, ::2].fill_(0)
    check(c, h)
    check(c.zero_(), h.zero_())


def test_arange_linspace_rand_randn(gpu):
    check(dc.arange(0, 1_000_003, device="cuda"), dc.arange(0, 1_000_003))
    check(dc.linspace(-1, 1, 37, device="cuda"), dc.linspace(-1, 1, 37))
    dc.manual_seed(0)
    a = dc.randn(33, 7, device="cuda")
    dc.manual_seed(0)
    check(a, dc.randn(33, 7))


def test_round_trips_and_views(gpu):
    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    c = dc.tensor(x, device="cuda")
    assert np.array_equal(c.cpu().numpy(), x)
    assert np.array_equal(c.permute(2, 0, 1).cpu().numpy(), x.transpose(2, 0, 1))
    assert np.array_equal(c[1, :, 1::2].cpu().numpy(), x[1, :, 1::2])
    v = c[:, 1]
    v.mul_(2.0)
    assert c._version == v._version == 1
    x[:, 1] *= 2
    assert np.array_equal(c.cpu().numpy(), x)
    assert c[1, 2, 3].item() == x[1, 2, 3]


def test_copy_between_devices(gpu):
    c = dc.zeros(3, 4, device="cuda")
    c.t().copy_(dc.tensor(np.arange(12).reshape(4, 3)))
    assert np.array_equal(c.cpu().numpy(), np.arange(12).reshape(4, 3).T)
    h = dc.zeros(3, 4, dtype=dc.float64)
    h.copy_(c)
    assert np.array_equal(h.numpy(), np.arange(12).reshape(4, 3).T)


# --- pointwise -------------------------------------------------------------------------------------
UNARY = ["neg", "abs", "relu", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid"]


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_every_unary_kernel(gpu, name, dtype):
    floating = name not in ("neg", "abs", "relu")
    low = 0.1 if name in ("log", "sqrt") else -4.0
    (h,), (c,) = both(sample(dtype, (255,), low=low))
    check(getattr(c, name)(), getattr(h, name)())
    if dtype.is_floating_point or not floating:
        c2, h2 = c.clone(), h.clone()
        check(getattr(c2, name + "_")(), getattr(h2, name + "_")())


BINARY = {
    "add": lambda x, y: x + y, "add_alpha": lambda x, y: x.add(y, alpha=3), "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y, "div": lambda x, y: x / y, "pow": lambda x, y: x ** y,
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y, "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y, "where": lambda x, y: aten.where.self(x > y, x, y),
}
SCALAR = {
    "add_s": lambda x: x + 3, "sub_s": lambda x: x - 2, "mul_s": lambda x: x * 3, "div_s": lambda x: x / 4,
    "pow_s": lambda x: x ** 3, "pow_2": lambda x: x ** 2, "rpow_s": lambda x: 2 ** x, "eq_s": lambda x: x == 1,
    "ne_s": lambda x: x != 1, "lt_s": lambda x: x < 1, "le_s": lambda x: x <= 1, "gt_s": lambda x: x > 1,
    "ge_s": lambda x: x >= 1, "clamp": lambda x: x.clamp(-2, 2), "clamp_min": lambda x: x.clamp_min(1),
}
_NO_BOOL = {"sub", "pow", "add_alpha", "div", "sub_s", "pow_s", "pow_2", "rpow_s", "clamp", "clamp_min", "div_s"}


def _applies(name, dtype):
    if dtype is dc.bool_ and name in _NO_BOOL:
        return False
    if name in ("pow", "pow_s", "rpow_s") and not dtype.is_floating_point:
        return dtype in (dc.int32, dc.int64)  # narrow integer powers overflow: keep the comparison exact
    return True


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_every_binary_kernel_with_broadcasting(gpu, name, dtype):
    if not _applies(name, dtype):
        pytest.skip(f"{name} is not defined for {dtype}")
    low, high = (0.5, 2.0) if name == "pow" else (-4.0, 4.0)
    (a, b), (ca, cb) = both(sample(dtype, (37, 1, 5), low, high), sample(dtype, (3, 5), 0.5 if name == "div" else low,
                                                                           high))
    if name == "pow" and not dtype.is_floating_point:
        b = b.clamp(0, 3) if dtype is not dc.bool_ else b
        cb = b.to("cuda")
    check(BINARY[name](ca, cb), BINARY[name](a, b))
    # permuted and broadcast the other way: (5, 1, 37) with (5, 3, 1)
    check(BINARY[name](ca.transpose(0, 2), cb.t().unsqueeze(-1)), BINARY[name](a.transpose(0, 2), b.t().unsqueeze(-1)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(SCALAR))
def test_every_scalar_kernel(gpu, name, dtype):
    if not _applies(name, dtype):
        pytest.skip(f"{name} is not defined for {dtype}")
    (h,), (c,) = both(sample(dtype, (255,), 0.5 if name.startswith("rpow") else -4.0))
    check(SCALAR[name](c), SCALAR[name](h))


def test_half_scalars_round_to_half_first(gpu):
    h = dc.tensor([1.1, 2.2, -0.3], dtype=dc.float16)
    c = h.to("cuda")
    for f in (lambda x: x == 1.1, lambda x: x >= 2.2, lambda x: x * 1.1, lambda x: x.clamp(-0.3, 1.1)):
        check(f(c), f(h))


def test_in_place_and_out_variants(gpu):
    (a, b), (ca, cb) = both(sample(dc.float32, (33, 7)), sample(dc.float32, (7,)))
    check(ca.clone().add_(cb, alpha=2), a.clone().add_(b, alpha=2))
    check(ca.clone().sub_(1.5), a.clone().sub_(1.5))
    check(ca.clone().mul_(cb), a.clone().mul_(b))
    check(ca.clone().div_(2), a.clone().div_(2))
    check(ca.abs().pow_(0.5), a.abs().pow_(0.5))
    out_c, out_h = dc.empty(33, 7, dtype=dc.float64, device="cuda"), dc.empty(33, 7, dtype=dc.float64)
    check(aten.mul.out(ca, cb, out=out_c), aten.mul.out(a, b, out=out_h))
    check(aten.exp.out(ca, out=out_c), aten.exp.out(a, out=out_h), rtol=1e-6, atol=1e-6)  # float32 math, float64 out


def test_large_elementwise_and_a_cpu_scalar(gpu):
    (a, b), (ca, cb) = both(sample(dc.float32, (1_000_003,)), sample(dc.float32, (1_000_003,)))
    check(ca + cb, a + b)
    check(ca * dc.tensor(2.5), a * dc.tensor(2.5))


# --- reductions ----------------------------------------------------------------------------------------
REDUCE = {
    "sum": lambda x: x.sum(), "sum0": lambda x: x.sum(0), "sum_k": lambda x: x.sum((0, 2), keepdim=True),
    "mean": lambda x: x.mean(), "mean1": lambda x: x.mean(1), "amax": lambda x: x.amax(-1), "max": lambda x: x.max(),
    "argmax": lambda x: x.argmax(), "argmax1": lambda x: x.argmax(1), "max_dim": lambda x: x.max(2)[0],
    "max_idx": lambda x: x.max(2)[1], "sum_t": lambda x: x.permute(2, 0, 1).sum(1),
}


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_every_reduction_kernel(gpu, name, dtype):
    if name.startswith("mean") and not dtype.is_floating_point:
        pytest.skip("mean needs a floating dtype")
    (h,), (c,) = both(sample(dtype, (7, 37, 5)))
    rtol = 1e-2 if dtype is dc.float16 else 1e-5
    check(REDUCE[name](c), REDUCE[name](h), rtol=rtol, atol=1e-2 if dtype is dc.float16 else 1e-5)


@pytest.mark.parametrize("n", [1, 255, 1_000_003])
def test_long_reductions(gpu, n):
    (h,), (c,) = both(sample(dc.float32, (n,)))
    check(c.sum(), h.sum(), rtol=1e-4, atol=1e-2)
    check(c.mean(), h.mean(), rtol=1e-4, atol=1e-5)
    check(c.amax(0), h.amax(0))
    check(c.argmax(), h.argmax())
    (hd,), (cd,) = both(sample(dc.float64, (n,)))
    check(cd.sum(), hd.sum(), rtol=1e-10, atol=1e-8)


def test_bool_reductions_and_nan(gpu):
    (h,), (c,) = both(sample(dc.bool_, (33, 7)))
    check(c.sum(), h.sum())
    check(c.amax(1), h.amax(1))
    x = dc.tensor([1.0, float("nan"), 3.0, float("nan")])
    check(x.to("cuda").amax(0), x.amax(0))
    check(x.to("cuda").argmax(), x.argmax())


# --- matrix products, softmax, losses -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (70, 33, 45), (64, 64, 64), (129, 257, 65)])
def test_mm_and_bmm(gpu, dtype, m, k, n):
    (a, b), (ca, cb) = both(sample(dtype, (m, k), -1, 1), sample(dtype, (k, n), -1, 1))
    r = 1e-2 if dtype is dc.float16 else (1e-4 if dtype is dc.float32 else 1e-12)
    check(ca @ cb, a @ b, rtol=r, atol=r)
    check(ca.t().contiguous().t() @ cb.t().contiguous().t(), a @ b, rtol=r, atol=r)
    (x, y), (cx, cy) = both(sample(dtype, (3, m, k), -1, 1), sample(dtype, (3, k, n), -1, 1))
    check(cx.bmm(cy), x.bmm(y), rtol=r, atol=r)


def test_matmul_2048_against_cpu(gpu):
    (a, b), (ca, cb) = both(sample(dc.float32, (2048, 2048), -1, 1), sample(dc.float32, (2048, 2048), -1, 1))
    check(ca @ cb, a @ b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape, dim", [((37, 5), 1), ((37, 5), 0), ((2, 4097), -1), ((3, 1, 6), 1), ((), 0)])
def test_softmax_kernels(gpu, dtype, shape, dim):
    (h,), (c,) = both(sample(dtype, shape))
    check(c.softmax(dim), h.softmax(dim))
    check(c.log_softmax(dim), h.log_softmax(dim), atol=1e-5 if dtype is not dc.float16 else 1e-2)


def test_softmax_half_to_float(gpu):
    h = sample(dc.float16, (4, 9))
    got = aten._softmax.default(h.to("cuda"), 1, True)
    assert got.dtype is dc.float32
    np.testing.assert_allclose(got.cpu().numpy(), h.float().softmax(1).numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_loss_kernels(gpu, dtype):
    (x, y), (cx, cy) = both(sample(dtype, (37, 5)), sample(dtype, (37, 5)))
    for reduction in (0, 1, 2):
        check(aten.mse_loss.default(cx, cy, reduction), aten.mse_loss.default(x, y, reduction), rtol=1e-2 if dtype
              is dc.float16 else 1e-5)
    logp = sample(dtype, (300, 11)).log_softmax(1)
    target = dc.tensor(RNG.integers(0, 11, 300))
    target[::7] = -100
    weight = sample(dtype, (11,), 0.5, 2.0)
    (cl, ct, cw) = (logp.to("cuda"), target.to("cuda"), weight.to("cuda"))
    for reduction in (0, 1, 2):
        for w, cwt in ((None, None), (weight, cw)):
            got = aten.nll_loss_forward.default(cl, ct, cwt, reduction, -100)
            want = aten.nll_loss_forward.default(logp, target, w, reduction, -100)
            check(got[0], want[0], rtol=1e-2 if dtype is dc.float16 else 1e-5)
            check(got[1], want[1], rtol=1e-2 if dtype is dc.float16 else 1e-5)
    single = aten.nll_loss_forward.default(cl[0], ct[1], None, 0, -100)
    check(single[0], aten.nll_loss_forward.default(logp[0], target[1], None, 0, -100)[0])
    with pytest.raises(IndexError, match="Target 11 is out of bounds."):
        aten.nll_loss.default(cl, dc.full((300,), 11, device="cuda"))


def test_cat_stack_clone_and_contiguous(gpu):
    (a, b), (ca, cb) = both(sample(dc.float32, (37, 5)), sample(dc.int64, (3, 5)))
    check(aten.cat.default([ca, cb], 0), aten.cat.default([a, b], 0))
    check(aten.stack.default([ca.t(), ca.t()], 2), aten.stack.default([a.t(), a.t()], 2))
    check(ca.t().clone(), a.t().clone())
    check(ca.t().contiguous(), a.t().contiguous())


def test_a_second_thread_can_use_the_device(gpu):
    c = dc.ones(1000, device="cuda")
    result = {}

    def work():
        result["sum"] = (c * 2).sum().item()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert result["sum"] == 2000.0


# --- the family operators' kernels (backends/cuda/families.py) ---------------------------------------------
FAMILY = {
    "dot": lambda x, y: dc.dot(x[0], y[:, 1]),
    "vdot-strided": lambda x, y: dc.vdot(x[:, 0], x[:, 2]),
    "mv": lambda x, y: dc.mv(x, y[:, 0]),
    "xlogy": lambda x, y: dc.xlogy(x * x, y.t().sigmoid()),
    "xlogy-scalar": lambda x, y: dc.xlogy(x.sigmoid(), -2.0),
    "logit": lambda x, y: dc.logit(x.sigmoid()),
    "logit-eps": lambda x, y: dc.logit(x.sigmoid(), 0.3),
    "logit_backward": lambda x, y: aten.logit_backward.default(x, x.sigmoid() * 1.5 - 0.25, 0.1),
    "index_add": lambda x, y: x.index_add(1, dc.tensor([0, 36, 36], device=x.device), y[:3, :37].t(), alpha=2),
    "put-accumulate": lambda x, y: x.put(dc.tensor([1, 1, 70], device=x.device), y[0, :3], True),
    "masked_fill": lambda x, y: x.masked_fill(x > 0, 2.5),
    "bitwise_and": lambda x, y: (x > 0) & (x < 1),
}


@pytest.mark.parametrize("name", sorted(FAMILY))
@pytest.mark.parametrize("dtype", [dc.float32, dc.float64], ids=str)
def test_every_family_kernel(gpu, name, dtype):
    (hx, hy), (cx, cy) = both(sample(dtype, (3, 37)), sample(dtype, (37, 3)))
    check(FAMILY[name](cx, cy), FAMILY[name](hx, hy), rtol=1e-4 if dtype is dc.float32 else None,
          atol=1e-4 if dtype is dc.float32 else None)


# --- autograd on the device ------------------------------------------------------------------------------
GRAD_FUNCS = {
    "mlp": lambda x, w: ((x @ w).relu() * 2 + 1).sum(),
    "softmax": lambda x, w: (x @ w).softmax(1),
    "log_softmax_nll": lambda x, w: aten.nll_loss.default((x @ w).log_softmax(1), dc.tensor([0, 2, 1], device="cuda")),
    "mse": lambda x, w: aten.mse_loss.default(x @ w, dc.zeros(3, 3, dtype=dc.float64, device="cuda")),
    "pointwise": lambda x, w: ((x.sigmoid() - x.tanh()) * x.exp() / (x.abs() + 1)).mean(0).amax(),
    "views": lambda x, w: x.t()[1:, ::2].reshape(-1).unsqueeze(0).expand(2, -1).sum(0),
    "bmm": lambda x, w: x.unsqueeze(0).expand(2, 3, 4).bmm(w.unsqueeze(0).expand(2, 4, 3)).pow(2).sum(),
    "vectors": lambda x, w: x[0] @ w[:, 0] + (x @ w[:, 1]).sum(),
    "xlogy-logit": lambda x, w: (dc.xlogy(x * x, w.t().sigmoid()) + dc.logit(x.sigmoid(), 0.1)).sum(),
}


@pytest.mark.parametrize("name", sorted(GRAD_FUNCS))
def test_gradcheck_on_the_device(gpu, name):
    x = dc.tensor(RNG.standard_normal((3, 4)), device="cuda", requires_grad=True)
    w = dc.tensor(RNG.standard_normal((4, 3)), device="cuda", requires_grad=True)
    assert dc.autograd.gradcheck(GRAD_FUNCS[name], (x, w), eps=1e-6, atol=1e-5)


def _mlp_losses(device: str, steps: int) -> list[float]:
    from dispatchcore.examples import tiny_mlp

    x, y = tiny_mlp.make_data()
    params = [p.detach().to(device).requires_grad_() for p in tiny_mlp.init_params()]
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(steps):
        loss = tiny_mlp.mse_loss(tiny_mlp.predict(params, x), y)
        loss.backward()
        with dc.no_grad():
            for p in params:
                p -= 0.1 * p.grad
                p.grad = None
        losses.append(loss.item())
    return losses


def test_tiny_mlp_training_on_the_device_matches_cpu(gpu):
    gpu_losses = _mlp_losses("cuda", 30)
    assert gpu_losses[-1] < gpu_losses[0]
    np.testing.assert_allclose(gpu_losses, _mlp_losses("cpu", 30), rtol=1e-3)
