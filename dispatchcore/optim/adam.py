"""``Adam`` and ``AdamW``: adaptive moments, with AMSGrad, L2 or decoupled weight decay, maximize.

Mirrors ``torch/optim/adam.py`` and ``adamw.py`` (torch 2.13; ``AdamW`` is ``Adam`` with
``decoupled_weight_decay=True``), the ``_single_tensor_adam`` update op for op with
``capturable=False``: the bias corrections are Python floats computed from the step count.
State per parameter: ``step`` (a float32 0-d tensor), ``exp_avg``, ``exp_avg_sq`` and, with
``amsgrad``, ``max_exp_avg_sq``. Invariant: the parameters change in place, under ``no_grad``.
"""

from __future__ import annotations

from typing import Any

from ..ops import aten
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _group_step, _value

__all__ = ["Adam", "AdamW", "adam"]


class Adam(Optimizer):
    """Adam (``torch.optim.Adam``); ``decoupled_weight_decay=True`` makes it AdamW.

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = dc.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if capturable or differentiable or fused:
            raise NotImplementedError(f"dispatchcore's {type(self).__name__} implements the single-tensor path "
                                      "only (capturable=False, differentiable=False, fused=None)")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    step = _group_step("Adam")

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Tensor, Tensor]]) -> None:
        """Adam's update of one parameter group, its state created on the first step."""
        def init(p: Tensor, state: dict[str, Any]) -> None:
            state["exp_avg"] = aten.zeros_like.default(p)
            state["exp_avg_sq"] = aten.zeros_like.default(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = aten.zeros_like.default(p)

        states = self._lazy_states(pairs, init)
        beta1, beta2 = group["betas"]
        adam([p for p, _ in pairs], [g for _, g in pairs], [s["exp_avg"] for s in states],
             [s["exp_avg_sq"] for s in states],
             [s["max_exp_avg_sq"] for s in states] if group["amsgrad"] else [],
             [s["step"] for s in states], amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
             weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
             decoupled_weight_decay=group["decoupled_weight_decay"])


class AdamW(Adam):
    """AdamW (``torch.optim.AdamW``): Adam with decoupled weight decay (default ``weight_decay=1e-2``).

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.tensor([1.0], requires_grad=True)
        >>> opt = dc.optim.AdamW([w], lr=0.1)
        >>> w.grad = dc.tensor([0.5])
        >>> opt.step()
        >>> w
        tensor([0.8990], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
         max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *, amsgrad: bool, beta1: float, beta2: float,
         lr: float, weight_decay: float, eps: float, maximize: bool, decoupled_weight_decay: bool) -> None:
    """The Adam update (``torch.optim.adam._single_tensor_adam``, ``capturable=False``)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t += 1
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = _value(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            aten.maximum.out(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)
