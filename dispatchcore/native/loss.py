"""The pointwise regression losses (l1_loss, smooth_l1_loss, huber_loss, kl_div) and the core losses' backward ops.

The regression losses come with their backward ops; ``nll_loss_backward`` and ``mse_loss_backward``
are the backward ops of ``nll_loss_forward`` and ``mse_loss``, which live with the core operators
(``mse_loss_backward`` is a CPU kernel: ``zeros_like(input)`` filled by its ``grad_input`` form).

One declaration per operator (style guide 3.8): ``SCHEMAS`` verbatim from torch 2.13's
``native_functions.yaml``; ``register`` adds torch's composites (CompositeImplicitAutograd
``l1_loss`` and ``kl_div``, CompositeExplicitAutograd ``smooth_l1_loss_backward`` and
``huber_loss_backward``, each a zero tensor filled by the ``grad_input``/``out`` overload);
``register_autograd`` the ``derivatives.yaml`` entries with torch's node names. The numpy and meta
kernels are ``dispatchcore_backends.{cpu,meta}.loss``. ``reduction`` is aten's int
(0 none, 1 mean, 2 sum).

Mirrors ``aten/src/ATen/native/Loss.cpp`` (``apply_loss_reduction``, ``l1_loss``, ``kl_div``,
``smooth_l1_loss``/``huber_loss`` and their backward ops), ``LossNLL.cpp`` (``nll_loss_backward``) and
the double-backward helpers of
``FunctionsManual.cpp``. Invariant: each operator is registered at exactly the keys torch
registers it; formulas call dispatched operators only, so double backward works.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._library import Library
from ..ops import aten as A
from ..tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS", "OUTS", "SCHEMAS", "apply_loss_reduction", "kl_div", "l1_loss",
           "nll_loss_backward_check", "register", "register_autograd"]

_B = "Tensor grad_output, Tensor self, Tensor target, int reduction"
SCHEMAS: tuple[str, ...] = (
    "l1_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor",
    "smooth_l1_loss.out(Tensor self, Tensor target, int reduction=Mean, float beta=1.0, *, Tensor(a!) out) "
    "-> Tensor(a!)",
    f"smooth_l1_loss_backward({_B}, float beta) -> Tensor",
    f"smooth_l1_loss_backward.grad_input({_B}, float beta, *, Tensor(a!) grad_input) -> Tensor(a!)",
    "huber_loss(Tensor self, Tensor target, int reduction=Mean, float delta=1.0) -> Tensor",
    "huber_loss.out(Tensor self, Tensor target, int reduction=Mean, float delta=1.0, *, Tensor(a!) out) "
    "-> Tensor(a!)",
    f"huber_loss_backward({_B}, float delta) -> Tensor",
    f"huber_loss_backward.out({_B}, float delta, *, Tensor(a!) grad_input) -> Tensor(a!)",
    "kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) -> Tensor",
    "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index, Tensor total_weight) -> Tensor",
    "nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) -> Tensor(a!)",
    "mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
    "mse_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int reduction, *, "
    "Tensor(a!) grad_input) -> Tensor(a!)",
)

# The out= overloads whose CPU and Meta kernels are built from a functional kernel
OUTS: dict[str, str] = {"smooth_l1_loss.out": "smooth_l1_loss", "huber_loss.out": "huber_loss"}


def _shape_str(shape: Any) -> str:
    return "[" + ", ".join(str(int(n)) for n in shape) + "]"


def nll_loss_backward_check(grad_output: Tensor, self: Tensor, target: Tensor, weight: Tensor | None,
                            reduction: int, total_weight: Tensor) -> None:
    """``TORCH_META_FUNC(nll_loss_backward)``'s checks, in its order, shared by the CPU and Meta kernels."""
    nd, td = self.dim(), target.dim()
    if not 0 < nd <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if td > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch = nd == 1 and td == 0
    if not no_batch and self.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {_shape_str(self.shape)}, target: {_shape_str(target.shape)})")
    if total_weight.numel() != 1:
        raise RuntimeError("expected total_weight to be a  single element tensor, got: "
                           f"{_shape_str(total_weight.shape)} ({total_weight.numel()} elements)")
    n_classes = self.shape[-1]
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if reduction == 0 and nd == 2:
        batch = self.shape[0]
        if grad_output.dim() != 1 or grad_output.shape[0] != batch:
            size = grad_output.shape[0] if grad_output.dim() else 1
            raise RuntimeError(f"Expected a tensor of dimension 1 and tensor.size[0] == {batch} but got: dimension "
                               f"{grad_output.dim()} and tensor.size[0] = {size}")
    elif grad_output.dim() > 1 or grad_output.numel() != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {_shape_str(grad_output.shape)}")


# --- composites --------------------------------------------------------------------------------------------
def apply_loss_reduction(loss: Tensor, reduction: int) -> Tensor:
    """``apply_loss_reduction``: the mean (1) or sum (2) of the elementwise loss, or the loss (0)."""
    if reduction == 1:
        return A.mean.default(loss)
    if reduction == 2:
        return A.sum.default(loss)
    return loss


def l1_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    """``aten::l1_loss``: ``apply_loss_reduction(abs(self - target))``.

    Example:
        >>> import dispatchcore as dc
        >>> dc.ops.aten.l1_loss.default(dc.tensor([1.0, -2.0]), dc.tensor([0.0, 0.0]))
        tensor(1.5000)
    """
    return apply_loss_reduction(A.abs.default(A.sub.Tensor(self, target)), reduction)


def kl_div(self: Tensor, target: Tensor, reduction: int = 1, *, log_target: bool = False) -> Tensor:
    """``aten::kl_div``: ``xlogy(target, target) - target * self`` (``exp(target) * (target - self)`` for log targets).

    Each product's right operand first, as the C++ evaluates it.

    Example:
        >>> import dispatchcore as dc
        >>> dc.ops.aten.kl_div.default(dc.tensor([0.0, 0.0]), dc.tensor([1.0, 0.0]), 2)
        tensor(0.)
    """
    if self.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (self.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        difference = A.sub.Tensor(target, self)
        loss = A.mul.Tensor(A.exp.default(target), difference)
    else:
        cross = A.mul.Tensor(target, self)
        loss = A.sub.Tensor(A.xlogy.Tensor(target, target), cross)
    return apply_loss_reduction(loss, reduction)


def _smooth_l1_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int,
                             beta: float) -> Tensor:
    grad_input = A.zeros_like.default(self)
    return A.smooth_l1_loss_backward.grad_input(grad_output, self, target, reduction, beta, grad_input=grad_input)


def _huber_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int, delta: float) -> Tensor:
    grad_input = A.zeros_like.default(self)
    return A.huber_loss_backward.out(grad_output, self, target, reduction, delta, grad_input=grad_input)


EXPLICIT: dict[str, Callable[..., Any]] = {
    "smooth_l1_loss_backward": _smooth_l1_loss_backward, "huber_loss_backward": _huber_loss_backward,
}
IMPLICIT: dict[str, Callable[..., Any]] = {"l1_loss": l1_loss, "kl_div": kl_div}


def register(lib: Library) -> None:
    """The composite kernels, at the keys torch registers them."""
    for name, kernel in EXPLICIT.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives (derivatives.yaml, FunctionsManual.cpp) ------------------------------------------------
def _mean_scaled_(t: Tensor, self: Tensor, reduction: int) -> Tensor:
    """``if (reduction == Mean) grad_input /= input.sym_numel();`` (in place, as the C++ writes it)."""
    return A.div_.Scalar(t, self.numel()) if reduction == 1 else t


def _smooth_l1_double_backward(g: Tensor, self: Tensor, target: Tensor, reduction: int, beta: float) -> Tensor:
    """``smooth_l1_loss_double_backward``: ``grad * (|self - target| < beta).type_as(grad) / beta``.

    ``at::zeros(grad.sizes(), grad.options())`` for beta 0.
    """
    if beta == 0.0:
        return A.zeros.default(list(g.shape), dtype=g.dtype, device=g.device)
    inside = A.type_as.default(A.lt.Scalar(A.abs.default(A.sub.Tensor(self, target)), beta), g)
    return _mean_scaled_(A.div.Scalar(A.mul.Tensor(g, inside), beta), self, reduction)


def _huber_double_backward(g: Tensor, self: Tensor, target: Tensor, reduction: int, delta: float) -> Tensor:
    """``huber_loss_double_backward``: ``grad * (|self - target| < delta)``."""
    inside = A.lt.Scalar(A.abs.default(A.sub.Tensor(self, target)), delta)
    return _mean_scaled_(A.mul.Tensor(g, inside), self, reduction)


def _mse_double_backward(g: Tensor, self: Tensor, reduction: int) -> Tensor:
    """``mse_loss_double_backward``: ``2 * grad``, divided in place by numel for a mean."""
    return _mean_scaled_(A.mul.Scalar(g, 2), self, reduction)


def _reduced_grad_output(g: Tensor, grad_output: Tensor, backward: Any, self: Tensor, target: Tensor,
                         reduction: int, param: float) -> Tensor:
    """The grad_output derivative of a loss backward: ``backward(grad)``, summed to a reduced grad_output."""
    if reduction == 0:
        return backward(g, self, target, reduction, param)
    ones = A.ones_like.default(grad_output)
    return A.sum.default(A.mul.Tensor(backward(ones, self, target, reduction, param), g))


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names."""
    from ..autograd.kernels import register_derivative

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any) -> None:
        register_derivative(lib, f"aten::{name}", node, inputs, formula)

    smooth = A.smooth_l1_loss_backward.default
    huber = A.huber_loss_backward.default
    r("nll_loss_backward", "NllLossBackwardBackward0", ("grad_output", "self"),
      (lambda g, target, weight, reduction, ignore_index: A.nll_loss.default(g, target, weight, reduction,
                                                                              ignore_index),
       lambda g: A.zeros_like.default(g)))
    r("mse_loss_backward", "MseLossBackwardBackward0", ("grad_output", "self", "target"),
      (lambda g, self, target, reduction: A.mse_loss_backward.default(g, self, target, reduction),
       lambda g, grad_output, self, reduction: _mse_double_backward(A.mul.Tensor(g, grad_output), self, reduction),
       lambda g, grad_output, target, reduction: A.neg.default(
           _mse_double_backward(A.mul.Tensor(g, grad_output), target, reduction))))
    r("smooth_l1_loss", "SmoothL1LossBackward0", ("self", "target"),
      (lambda g, self, target, reduction, beta: smooth(g, self, target, reduction, beta),
       lambda g, self, target, reduction, beta: smooth(g, target, self, reduction, beta)))
    r("smooth_l1_loss_backward", "SmoothL1LossBackwardBackward0", ("grad_output", "self", "target"),
      (lambda g, self, target, reduction, beta: smooth(g, self, target, reduction, beta),
       lambda g, grad_output, self, target, reduction, beta: _smooth_l1_double_backward(
           A.mul.Tensor(g, grad_output), self, target, reduction, beta),
       lambda g, grad_output, self, target, reduction, beta: A.neg.default(_smooth_l1_double_backward(
           A.mul.Tensor(g, grad_output), self, target, reduction, beta))))
    r("huber_loss", "HuberLossBackward0", ("self", "target"),
      (lambda g, self, target, reduction, delta: huber(g, self, target, reduction, delta),
       lambda g, self, target, reduction, delta: huber(g, target, self, reduction, delta)))
    r("huber_loss_backward", "HuberLossBackwardBackward0", ("grad_output", "self", "target"),
      (lambda g, grad_output, self, target, reduction, delta: _reduced_grad_output(
          g, grad_output, huber, self, target, reduction, delta),
       lambda g, grad_output, self, target, reduction, delta: _huber_double_backward(
           A.mul.Tensor(g, grad_output), self, target, reduction, delta),
       lambda g, grad_output, self, target, reduction, delta: A.neg.default(_huber_double_backward(
           A.mul.Tensor(g, grad_output), self, target, reduction, delta))))


def _kl_div_function(input: Tensor, target: Tensor, reduction: int = 1, *,  # noqa: A002
                     log_target: bool = False) -> Tensor:
    """``torch.kl_div(input, target, reduction=1, *, log_target=False)``: ``aten::kl_div``."""
    return A.kl_div.default(input, target, reduction, log_target=log_target)


FUNCTIONS: dict[str, Callable[..., Any]] = {"kl_div": _kl_div_function}
METHODS: dict[str, Callable[..., Any]] = {}
