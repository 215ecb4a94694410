"""Meta kernels of the loss family (``dispatchcore.native.loss``): geometry and dtype only.

Mirrors torch's meta functions for ``smooth_l1_loss`` (structured: a TensorIterator binary op,
reduced to a 0-d result unless ``reduction`` is 0), ``huber_loss`` and the ``grad_input`` overloads
of both backward ops, and ``nll_loss_backward`` (``self``'s geometry after the shared checks); the
CompositeExplicitAutograd backward ops, which torch also registers at Meta, run their composite.
Invariant: no kernel reads data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import dtypes as _dt
from dispatchcore.native import loss as L
from dispatchcore.native.structured import check_out_dtype

from .kernels import _promoted, _resize_out, _tensor_iterator, meta_tensor
from .pointwise import _same

__all__ = ["KERNELS"]


def smooth_l1_loss(self, target, reduction=1, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    loss = _same((self, target))
    return loss if reduction == 0 else meta_tensor((), loss.dtype)


def huber_loss(self, target, reduction=1, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    loss = _same((self, target))
    return loss if reduction == 0 else meta_tensor((), loss.dtype)


def smooth_l1_loss_backward_grad_input(grad_output, self, target, reduction, beta, *, grad_input):
    return _same((self, target, grad_output), grad_input)


def huber_loss_backward_out(grad_output, self, target, reduction, delta, *, grad_input):
    return _same((self, target, grad_output), grad_input)


def mse_loss_backward(grad_output, self, target, reduction):
    """The elementwise result of the three operands, in their promoted dtype.

    torch's meta for ``mse_loss_backward`` is its decomposition, ``norm * (self - target) * grad_output``.
    """
    return _tensor_iterator([_promoted(t, _dt.result_type(self, target, grad_output))
                             for t in (self, target, grad_output)], _dt.result_type(self, target, grad_output))


def mse_loss_backward_grad_input(grad_output, self, target, reduction, *, grad_input):
    common = _dt.result_type(self, target, grad_output)
    return _tensor_iterator([_promoted(t, common) for t in (self, target, grad_output)], common, out=grad_input)


def _out_kernel(functional: Callable[..., Any]) -> Callable[..., Any]:
    def out_meta(*args: Any, out: Any, **kwargs: Any) -> Any:
        r = functional(*args, **kwargs)
        check_out_dtype("cast", r.dtype, out.dtype)
        return _resize_out(out, tuple(r.shape))

    out_meta.__name__ = out_meta.__qualname__ = f"{functional.__name__}_out_meta"
    return out_meta


def nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    L.nll_loss_backward_check(grad_output, self, target, weight, reduction, total_weight)
    return meta_tensor(tuple(self.shape), self.dtype)


def nll_loss_backward_grad_input_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight, *,
                                      grad_input):
    r = nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight)
    check_out_dtype("exact", r.dtype, grad_input.dtype)
    return _resize_out(grad_input, tuple(r.shape))


KERNELS: dict[str, Callable[..., Any]] = {
    "nll_loss_backward": nll_loss_backward_meta, "nll_loss_backward.grad_input": nll_loss_backward_grad_input_meta,
    "smooth_l1_loss": smooth_l1_loss, "smooth_l1_loss.out": _out_kernel(smooth_l1_loss),
    "smooth_l1_loss_backward.grad_input": smooth_l1_loss_backward_grad_input,
    "huber_loss": huber_loss, "huber_loss.out": _out_kernel(huber_loss),
    "huber_loss_backward.out": huber_loss_backward_out,
    "mse_loss_backward": mse_loss_backward, "mse_loss_backward.grad_input": mse_loss_backward_grad_input,
    **{name: L.EXPLICIT[name] for name in ("smooth_l1_loss_backward", "huber_loss_backward")},
}
