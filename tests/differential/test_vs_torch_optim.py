"""Optimizers and schedulers against torch: parameters after 20 steps, state dicts, lr sequences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 5))
Y = RNG.standard_normal((16, 3))
W0 = RNG.standard_normal((5, 3)) * 0.3
B0 = RNG.standard_normal(3) * 0.1

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1, "alpha": 0.9}),
    ("RMSprop", {"lr": 0.01, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "eps": 1e-6, "maximize": True}),
]


def _train(lib, name: str, kwargs: dict, dtype: str, steps: int = 20):
    """A one-layer tanh regression from plain tensors, trained ``steps`` steps; returns (w, b, optimizer)."""
    dt = getattr(lib, dtype)
    w = lib.tensor(W0, dtype=dt, requires_grad=True)
    b = lib.tensor(B0, dtype=dt, requires_grad=True)
    x, y = lib.tensor(X, dtype=dt), lib.tensor(Y, dtype=dt)
    # torch's single-tensor path (foreach=False), which dispatchcore implements
    opt = getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "lr": kwargs["lr"] / 2}], **kwargs,
                                   foreach=False)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x.matmul(w) + b).tanh() - y).pow(2).mean()
        loss.backward()
        opt.step()
    return w, b, opt


def _ids(config):
    name, kwargs = config
    return name + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_parameters_equal_torchs_after_20_steps(config, dtype):
    name, kwargs = config
    mine, theirs = _train(dc, name, kwargs, dtype), _train(torch, name, kwargs, dtype)
    tol = 1e-12 if dtype == "float64" else 2e-6  # float rounding of the forward/backward, compounded
    for m, t in zip(mine[:2], theirs[:2]):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_state_dict_has_torchs_layout_and_values(config):
    name, kwargs = config
    mine, theirs = _train(dc, name, kwargs, "float64", steps=3)[2], _train(torch, name, kwargs, "float64", steps=3)[2]
    sd_m, sd_t = mine.state_dict(), theirs.state_dict()
    assert sd_m["param_groups"] == sd_t["param_groups"]
    assert sd_m["state"].keys() == sd_t["state"].keys()
    for key, state in sd_t["state"].items():
        assert list(sd_m["state"][key]) == list(state)
        for field, value in state.items():
            got = sd_m["state"][key][field]
            assert str(got.dtype).split(".")[-1] == str(value.dtype).split(".")[-1]
            np.testing.assert_allclose(got.numpy(), value.numpy(), rtol=1e-12, atol=1e-12)


def test_repr_matches_torch():
    w, tw = dc.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        assert repr(getattr(dc.optim, name)([w])) == repr(getattr(torch.optim, name)([tw]))


@pytest.mark.parametrize("bad", [{"lr": -1.0}, {"lr": 0.1, "momentum": -0.5}, {"lr": 0.1, "nesterov": True},
                                 {"lr": 0.1, "weight_decay": -1}])
def test_sgd_argument_errors_match_torch(bad):
    with pytest.raises(ValueError) as theirs:
        torch.optim.SGD([torch.ones(1, requires_grad=True)], **bad)
    with pytest.raises(ValueError) as mine:
        dc.optim.SGD([dc.ones(1, requires_grad=True)], **bad)
    assert str(mine.value) == str(theirs.value)


def test_load_state_dict_errors_match_torch():
    def build(lib, groups):
        ps = [lib.ones(2, requires_grad=True) for _ in range(3)]
        return lib.optim.SGD([{"params": ps[:n]} for n in groups] if len(groups) > 1 else ps[:groups[0]], lr=0.1)

    for a, b in (((2,), (3,)), ((1, 1), (2,))):
        with pytest.raises(ValueError) as theirs:
            build(torch, a).load_state_dict(build(torch, b).state_dict())
        with pytest.raises(ValueError) as mine:
            build(dc, a).load_state_dict(build(dc, b).state_dict())
        assert str(mine.value) == str(theirs.value)


def _lrs(lib, make, steps=25):
    opt = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.5, momentum=0.9)
    sched = make(lib, opt)
    found = [(sched.get_last_lr()[0], opt.param_groups[0]["momentum"])]
    for _ in range(steps):
        opt.step()
        sched.step()
        found.append((sched.get_last_lr()[0], opt.param_groups[0]["momentum"]))
    return found, sched


SCHEDULERS = {
    "StepLR": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.7),
    "MultiStepLR": lambda lib, opt: lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 5, 5, 11], gamma=0.3),
    "ExponentialLR": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),
    "CosineAnnealingLR": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=0.01),
    "LambdaLR": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (1 + e)),
    "OneCycleLR": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=2.0, total_steps=30),
    "OneCycleLR-three-phase-linear": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=[2.0], total_steps=26, anneal_strategy="linear", three_phase=True, pct_start=0.25),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_lr_sequence_equals_torchs(name):
    mine, sched = _lrs(dc, SCHEDULERS[name])
    theirs, tsched = _lrs(torch, SCHEDULERS[name])
    assert mine == theirs  # the same float arithmetic: exactly equal
    keys = set(tsched.state_dict()) - {"_get_lr_called_within_step", "_is_initial"}
    assert keys <= set(sched.state_dict())
    for key in keys - {"lr_lambdas"}:
        assert sched.state_dict()[key] == tsched.state_dict()[key], key


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"])
def test_scheduler_step_with_epoch_uses_torchs_closed_form(name):
    def run(lib):
        opt = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.5)
        sched = SCHEDULERS[name](lib, opt)
        found = []
        for epoch in (4, 9, 2):
            opt.step()
            with pytest.warns(UserWarning):
                sched.step(epoch)
            found.append(sched.get_last_lr()[0])
        return found

    mine, theirs = run(dc), run(torch)
    assert all(math.isclose(m, t, rel_tol=1e-15) for m, t in zip(mine, theirs))


@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_step_calls_torchs_aten_operators_in_torchs_order(config):
    from torch.utils._python_dispatch import TorchDispatchMode

    def recorder(base):
        class Recorder(base):
            def __init__(self):
                super().__init__()
                self.calls = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = str(func).removeprefix("aten.")
                # torch-only bookkeeping: the profiler's record_function, and item() of the step counter
                if not name.startswith(("profiler.", "_local_scalar_dense")):
                    self.calls.append(name)
                return func(*args, **(kwargs or {}))

        return Recorder

    def calls(lib, mode):
        name, kwargs = config
        w = lib.ones(3, requires_grad=True)
        opt = getattr(lib.optim, name)([w], foreach=False, **kwargs)
        for _ in range(2):  # the second step: every buffer exists
            w.grad = lib.tensor([0.1, -0.2, 0.3])
            if _ == 1:
                with mode() as m:
                    opt.step()
            else:
                opt.step()
        return m.calls

    assert calls(dc, recorder(dc.DispatchMode)) == calls(torch, recorder(TorchDispatchMode))


def _needs_fused_axpy(dtype):
    from dispatchcore_backends.cpu import fma

    if np.dtype(dtype) not in fma._AXPY:
        pytest.skip(f"numpy's BLAS has no {dtype} axpy that fuses every element here (fma._fuses)")


_SGD_OPTIONS = [{}, {"weight_decay": 0.05}, {"momentum": 0.9, "dampening": 0.3},
                {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01}, {"momentum": 0.5, "maximize": True}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [(10,), (256, 784)])  # a bias, and G24's first weight
@pytest.mark.parametrize("options", _SGD_OPTIONS, ids=lambda o: "-".join(o) or "plain")
def test_sgd_steps_from_the_same_gradients_equal_torchs_bit_for_bit(options, size, dtype):
    """``p.add_(g, alpha=-lr)`` is torch's fused multiply-add (backends/cpu/fma.py), not two roundings."""
    _needs_fused_axpy(dtype)
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(size).astype(dtype)
    grads = [rng.standard_normal(size).astype(dtype) for _ in range(5)]
    params = []
    for lib in (dc, torch):
        p = lib.nn.Parameter(lib.tensor(p0))
        opt = lib.optim.SGD([p], lr=0.0123, foreach=False, **options)
        for g in grads:
            p.grad = lib.tensor(g)
            opt.step()
        params.append(p.detach().numpy())
    assert params[0].tobytes() == params[1].tobytes()
    if not options:
        assert params[0].tobytes() != (p0 - sum(np.multiply(g, 0.0123, dtype=dtype) for g in grads)).tobytes()


_ALPHA_CALLS = {
    "add": lambda L, a, b, r: L.add(a, b, alpha=0.3),
    "sub": lambda L, a, b, r: L.sub(a, b, alpha=-2.5),
    "broadcast": lambda L, a, b, r: L.add(a, r, alpha=0.01),
    "strided": lambda L, a, b, r: L.sub(a.t(), b.t(), alpha=0.7),
    "add_": lambda L, a, b, r: a.clone().add_(b, alpha=-0.01),
    "sub_": lambda L, a, b, r: a.clone().sub_(b, alpha=1e-3),
    "add_broadcast": lambda L, a, b, r: a.clone().add_(r, alpha=3.0),
    "out": lambda L, a, b, r: L.add(a, b, alpha=0.3, out=L.empty(0, dtype=a.dtype)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", list(_ALPHA_CALLS))
def test_add_and_sub_with_alpha_round_once_as_torch(call, dtype):
    _needs_fused_axpy(dtype)
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((5, 301), (5, 301), (301,))]
    mine = _ALPHA_CALLS[call](dc, *(dc.tensor(v) for v in arrays))
    theirs = _ALPHA_CALLS[call](torch, *(torch.tensor(v) for v in arrays))
    assert mine.stride() == theirs.stride()
    assert mine.numpy().tobytes() == theirs.numpy().tobytes()


@pytest.mark.parametrize("lr", [0.0, 1e-46])  # a learning rate that is zero in float32
def test_sgd_with_a_zero_step_still_spreads_a_nan_gradient_as_torch(lr):
    params = []
    for lib in (dc, torch):
        p = lib.nn.Parameter(lib.tensor([1.0, -0.0, 2.0]))
        opt = lib.optim.SGD([p], lr=lr, momentum=0.9, dampening=1.0, foreach=False)
        for _ in range(2):
            p.grad = lib.tensor([float("nan"), 1.0, float("inf")])
            opt.step()
        params.append(p.detach().numpy())
    assert params[0].tobytes() == params[1].tobytes()
