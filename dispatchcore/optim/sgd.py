"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov, weight decay, maximize.

Mirrors ``torch/optim/sgd.py`` (torch 2.13), its ``_single_tensor_sgd`` update op for op. State:
``momentum_buffer`` per parameter, only when ``momentum != 0`` (the first step stores a clone of
the gradient). Invariant: the parameters change in place, under ``no_grad``.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _group_step

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent (``torch.optim.SGD``), optionally with momentum.

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = dc.optim.SGD([w], lr=0.5, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([0., 0.], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable or fused:
            raise NotImplementedError("dispatchcore's SGD implements the single-tensor path only "
                                      "(differentiable=False, fused=None)")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    step = _group_step("SGD")

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Tensor, Tensor]]) -> None:
        """SGD's update of one parameter group; the momentum buffers are stored back into the state."""
        params = [p for p, _ in pairs]
        buffers: list[Tensor | None] = ([self.state[p].get("momentum_buffer") for p in params]
                                        if group["momentum"] != 0 else [None] * len(params))
        sgd(params, [g for _, g in pairs], buffers, weight_decay=group["weight_decay"],
            momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
            nesterov=group["nesterov"], maximize=group["maximize"])
        if group["momentum"] != 0:
            for p, buf in zip(params, buffers):
                self.state[p]["momentum_buffer"] = buf


def sgd(params: list[Tensor], grads: list[Tensor], momentum_buffer_list: list[Tensor | None], *,
        weight_decay: float, momentum: float, lr: float, dampening: float, nesterov: bool,
        maximize: bool) -> None:
    """The SGD update (``torch.optim.sgd._single_tensor_sgd``); fills ``momentum_buffer_list`` in place."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)
