"""``RMSprop``: a running average of squared gradients, optionally centered and with momentum.

Mirrors ``torch/optim/rmsprop.py`` (torch 2.13), its ``_single_tensor_rmsprop`` update op for op.
State per parameter: ``step`` (a float32 0-d tensor), ``square_avg``, ``momentum_buffer`` (when
``momentum > 0``) and ``grad_avg`` (when ``centered``). Invariant: the parameters change in place,
under ``no_grad``.
"""

from __future__ import annotations

from typing import Any

from ..ops import aten
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _group_step

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop (``torch.optim.RMSprop``).

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.tensor([1.0], requires_grad=True)
        >>> opt = dc.optim.RMSprop([w], lr=0.01)
        >>> w.grad = dc.tensor([2.0])
        >>> opt.step()
        >>> w
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if capturable or differentiable:
            raise NotImplementedError("dispatchcore's RMSprop implements the single-tensor path only "
                                      "(capturable=False, differentiable=False)")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    step = _group_step("RMSprop")

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Tensor, Tensor]]) -> None:
        """RMSprop's update of one parameter group, its state created on the first step."""
        def init(p: Tensor, state: dict[str, Any]) -> None:
            state["square_avg"] = aten.zeros_like.default(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = aten.zeros_like.default(p)
            if group["centered"]:
                state["grad_avg"] = aten.zeros_like.default(p)

        states = self._lazy_states(pairs, init)
        rmsprop([p for p, _ in pairs], [g for _, g in pairs], [s["square_avg"] for s in states],
                [s["grad_avg"] for s in states] if group["centered"] else [],
                [s["momentum_buffer"] for s in states] if group["momentum"] > 0 else [],
                [s["step"] for s in states], lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                weight_decay=group["weight_decay"], momentum=group["momentum"], centered=group["centered"],
                maximize=group["maximize"])


def rmsprop(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor], grad_avgs: list[Tensor],
            momentum_buffer_list: list[Tensor], state_steps: list[Tensor], *, lr: float, alpha: float, eps: float,
            weight_decay: float, momentum: float, centered: bool, maximize: bool) -> None:
    """The RMSprop update (``torch.optim.rmsprop._single_tensor_rmsprop``)."""
    for i, param in enumerate(params):
        step = state_steps[i]
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        step += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
