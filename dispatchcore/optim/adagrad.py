"""``Adagrad``: per-coordinate learning rates from the sum of squared gradients.

Mirrors ``torch/optim/adagrad.py`` (torch 2.13), its ``_single_tensor_adagrad`` update op for op
(dense gradients). Unlike the other optimizers, the state is created in the constructor: ``step``
(a float32 0-d tensor, zero) and ``sum`` (``initial_accumulator_value`` everywhere). Invariant:
the parameters change in place, under ``no_grad``.
"""

from __future__ import annotations

from typing import Any

from ..ops import aten
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _group_step, _value, _zero_step

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad (``torch.optim.Adagrad``).

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.tensor([1.0], requires_grad=True)
        >>> opt = dc.optim.Adagrad([w], lr=0.1)
        >>> w.grad = dc.tensor([3.0])
        >>> opt.step()
        >>> w
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if differentiable or fused:
            raise NotImplementedError("dispatchcore's Adagrad implements the single-tensor path only "
                                      "(differentiable=False, fused=None)")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _zero_step(p)
                state["sum"] = aten.full_like.default(p, group["initial_accumulator_value"])

    step = _group_step("Adagrad")

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Tensor, Tensor]]) -> None:
        """Adagrad's update of one parameter group (its state was made in ``__init__``)."""
        states = [self.state[p] for p, _ in pairs]
        adagrad([p for p, _ in pairs], [g for _, g in pairs], [s["sum"] for s in states],
                [s["step"] for s in states], lr=group["lr"], weight_decay=group["weight_decay"],
                lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])


def adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor], state_steps: list[Tensor], *,
            lr: float, weight_decay: float, lr_decay: float, eps: float, maximize: bool) -> None:
    """The Adagrad update (``torch.optim.adagrad._single_tensor_adagrad``, dense gradients)."""
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps, strict=True):
        step_t += 1
        step = _value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
