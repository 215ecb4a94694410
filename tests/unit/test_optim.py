"""``dispatchcore.optim``: updates by hand-computed values, state dicts, errors, schedulers (without torch)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.optim import lr_scheduler


def _param(values):
    return dc.tensor(values, dtype=dc.float64, requires_grad=True)


def test_sgd_step_subtracts_lr_times_grad():
    w = _param([1.0, 2.0])
    opt = dc.optim.SGD([w], lr=0.1)
    w.grad = dc.tensor([1.0, -1.0], dtype=dc.float64)
    opt.step()
    assert w.tolist() == pytest.approx([0.9, 2.1])
    assert len(opt.state) == 0  # no momentum, no state


def test_sgd_momentum_buffer_starts_as_the_gradient_then_accumulates():
    w = _param([0.0])
    opt = dc.optim.SGD([w], lr=1.0, momentum=0.5, dampening=0.5)
    for _ in range(2):
        w.grad = dc.tensor([1.0], dtype=dc.float64)
        opt.step()
    # buf1 = 1; buf2 = 0.5 * 1 + 0.5 * 1 = 1; w = -1 - 1
    assert opt.state[w]["momentum_buffer"].tolist() == [1.0]
    assert w.tolist() == [-2.0]


def test_sgd_skips_parameters_without_grad_and_step_runs_without_grad():
    a, b = _param([1.0]), _param([1.0])
    opt = dc.optim.SGD([a, b], lr=1.0)
    a.grad = dc.tensor([1.0], dtype=dc.float64)
    opt.step()
    assert a.tolist() == [0.0] and b.tolist() == [1.0]
    assert a.grad_fn is None and a.is_leaf


def test_adam_first_step_moves_each_coordinate_by_lr():
    w = _param([1.0, -1.0, 3.0])
    opt = dc.optim.Adam([w], lr=0.1)
    w.grad = dc.tensor([0.5, -2.0, 1e-3], dtype=dc.float64)
    opt.step()
    # bias-corrected: m / sqrt(v) = sign(g) on the first step (eps aside)
    np.testing.assert_allclose(w.detach().numpy(), [0.9, -0.9, 2.9], rtol=1e-6)
    state = opt.state[w]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq"]
    assert state["step"].dtype is dc.float32 and state["step"].item() == 1.0


def test_adamw_decays_weights_before_the_update():
    w = _param([1.0])
    opt = dc.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    w.grad = dc.tensor([0.0], dtype=dc.float64)
    opt.step()
    assert w.item() == pytest.approx(1.0 * (1 - 0.1 * 0.5))


def test_adagrad_state_exists_before_the_first_step():
    w = _param([1.0, 2.0])
    opt = dc.optim.Adagrad([w], lr=0.1, initial_accumulator_value=0.25)
    assert opt.state[w]["step"].item() == 0.0
    assert opt.state[w]["sum"].tolist() == [0.25, 0.25]
    w.grad = dc.tensor([1.0, 0.0], dtype=dc.float64)
    opt.step()
    assert w.tolist() == pytest.approx([1.0 - 0.1 / math.sqrt(1.25), 2.0])


def test_rmsprop_centered_keeps_a_gradient_average():
    w = _param([1.0])
    opt = dc.optim.RMSprop([w], lr=0.01, alpha=0.5, centered=True, momentum=0.9)
    w.grad = dc.tensor([2.0], dtype=dc.float64)
    opt.step()
    assert sorted(opt.state[w]) == ["grad_avg", "momentum_buffer", "square_avg", "step"]
    assert opt.state[w]["grad_avg"].item() == 1.0 and opt.state[w]["square_avg"].item() == 2.0
    assert w.item() == pytest.approx(1.0 - 0.01 * 2.0 / (math.sqrt(2.0 - 1.0) + 1e-8))


def test_state_dict_numbers_parameters_across_groups():
    a, b, c = _param([1.0]), _param([2.0]), _param([3.0])
    opt = dc.optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
    for p in (a, c):
        p.grad = dc.ones(1, dtype=dc.float64)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["lr"] == 0.1
    assert sorted(sd["state"]) == [0, 2]
    assert sd["state"][0]["momentum_buffer"] is opt.state[a]["momentum_buffer"]


def test_load_state_dict_maps_ids_to_the_new_parameters():
    a = _param([1.0])
    opt = dc.optim.Adam([a], lr=0.1)
    a.grad = dc.ones(1, dtype=dc.float64)
    opt.step()
    b = _param([5.0])
    fresh = dc.optim.Adam([b], lr=0.9)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]["lr"] == 0.1 and fresh.param_groups[0]["params"][0] is b
    assert fresh.state[b]["exp_avg"].tolist() == opt.state[a]["exp_avg"].tolist()


def test_load_state_dict_refuses_other_group_shapes():
    opt = dc.optim.SGD([_param([1.0]), _param([1.0])], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0]}]})


def test_add_param_group_errors():
    a = _param([1.0])
    opt = dc.optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {_param([1.0])}})
    with pytest.raises(ValueError, match="non-leaf"):
        opt.add_param_group({"params": [a * 2]})
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        dc.optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        dc.optim.SGD([], lr=0.1)


def test_zero_grad_sets_none_or_zeros_in_place():
    a = _param([1.0])
    opt = dc.optim.SGD([a], lr=0.1)
    a.grad = dc.ones(1, dtype=dc.float64)
    grad = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is grad and a.grad.tolist() == [0.0]
    opt.zero_grad()
    assert a.grad is None


def test_closure_loss_is_returned_and_computed_with_grad():
    a = _param([2.0])
    opt = dc.optim.SGD([a], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 4.0
    assert a.item() == 1.0


def test_inplace_pointwise_ops_the_optimizers_use():
    x = dc.tensor([1.0, 2.0])
    assert x.clone().addcmul_(dc.tensor([2.0, 3.0]), dc.tensor([4.0, 5.0]), value=0.5).tolist() == [5.0, 9.5]
    assert x.clone().addcdiv_(dc.tensor([2.0, 3.0]), dc.tensor([4.0, 6.0]), value=2).tolist() == [2.0, 3.0]
    assert x.clone().lerp_(dc.tensor([3.0, 4.0]), 0.25).tolist() == [1.5, 2.5]
    assert dc.lerp(x, dc.tensor([3.0, 4.0]), dc.tensor([0.0, 1.0])).tolist() == [1.0, 4.0]
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        dc.addcdiv(x, dc.tensor([1, 2]), dc.tensor([1, 2]))


def _sequence(make, steps=8, lr=1.0):
    opt = dc.optim.SGD([_param([0.0])], lr=lr)
    sched = make(opt)
    found = [sched.get_last_lr()[0]]
    for _ in range(steps):
        opt.step()
        sched.step()
        found.append(sched.get_last_lr()[0])
    return found


def test_step_and_multistep_and_exponential_schedules():
    assert _sequence(lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5), 5) == [1, 1, 0.5, 0.5, 0.25, 0.25]
    assert _sequence(lambda o: lr_scheduler.MultiStepLR(o, [1, 3, 3], gamma=0.5), 4) == [1, 0.5, 0.5, 0.125, 0.125]
    assert _sequence(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.5), 3) == [1, 0.5, 0.25, 0.125]


def test_cosine_annealing_follows_the_cosine_curve():
    found = _sequence(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.1), 8)
    expected = [0.1 + 0.9 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(9)]
    np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-12)


def test_lambda_lr_and_its_state_dict():
    sched_opt = dc.optim.SGD([_param([0.0])], lr=0.2)
    sched = lr_scheduler.LambdaLR(sched_opt, lambda epoch: 0.5 ** epoch)
    sched_opt.step()
    sched.step()
    assert sched.get_last_lr() == [0.1]
    state = sched.state_dict()
    assert state["lr_lambdas"] == [None] and state["last_epoch"] == 1 and "optimizer" not in state
    assert sched_opt.param_groups[0]["initial_lr"] == 0.2
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        lr_scheduler.LambdaLR(sched_opt, [lambda e: 1.0, lambda e: 1.0])


def test_scheduler_resume_needs_initial_lr():
    opt = dc.optim.SGD([_param([0.0])], lr=0.2)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(opt, step_size=1, last_epoch=3)


def test_step_with_epoch_warns_and_uses_closed_form():
    opt = dc.optim.SGD([_param([0.0])], lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.step(5)
    assert caught and "epoch parameter" in str(caught[0].message)
    assert sched.get_last_lr() == [0.25]


def test_one_cycle_rises_to_max_lr_then_falls_and_cycles_momentum():
    opt = dc.optim.SGD([_param([0.0])], lr=0.1, momentum=0.9)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3)
    lrs, momenta = [sched.get_last_lr()[0]], [opt.param_groups[0]["momentum"]]
    for _ in range(9):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
        momenta.append(opt.param_groups[0]["momentum"])
    assert lrs[0] == pytest.approx(1.0 / 25) and max(lrs) == pytest.approx(1.0) and lrs.index(max(lrs)) == 2
    assert lrs[-1] == pytest.approx(1.0 / 25 / 1e4)
    assert momenta[0] == 0.95 and min(momenta) == pytest.approx(0.85) and momenta[-1] == pytest.approx(0.95)
    opt.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        sched.step()
