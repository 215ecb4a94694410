"""CPU kernels of the loss family (``dispatchcore.native.loss``): smooth_l1_loss, huber_loss, nll_loss_backward.

Mirrors ``aten/src/ATen/native/Loss.cpp`` and ``cpu/BinaryOpsKernel.cpp``/``PointwiseOpsKernel.cpp``
(``smooth_l1_kernel``, ``huber_kernel``, ``smooth_l1_backward_cpu_kernel``,
``huber_backward_cpu_kernel``): the elementwise loss over the broadcast operands in their promoted
floating dtype (the pointwise family's TensorIterator rule), then ``apply_loss_reduction``. The
backward kernels scale by ``1/numel`` for a mean. ``nll_loss_backward`` is ``LossNLL.cpp``'s
``nll_loss_backward_out_frame``: zeros, and ``weight[t] * -(grad / total_weight)`` (mean) at each
row's target class, one numpy scatter. Invariant: results are new arrays unless an
``out=``/``grad_input`` target is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore.native import loss as L
from dispatchcore.native.structured import check_out_dtype
from dispatchcore.tensor import wrap_cpu

from . import kernels as _k
from .kernels import _F16, _F32, _resize_out
from .pointwise import _same_dtype

__all__ = ["KERNELS"]

_FLOATS = "f"


def _reduce(loss: Any, reduction: int) -> Any:
    """``apply_loss_reduction`` on a computed elementwise loss (half accumulates in float)."""
    a = loss._data
    if reduction == 0:
        return loss
    acc = _F32 if a.dtype == _F16 else a.dtype
    r = a.mean(dtype=acc) if reduction == 1 else a.sum(dtype=acc)
    return wrap_cpu(np.asarray(r, a.dtype))


def _smooth_l1(beta: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def compute(x: np.ndarray, t: np.ndarray) -> np.ndarray:
        z = np.abs(x - t)
        return np.where(z < beta, 0.5 * z * z / beta if beta else 0 * z, z - 0.5 * beta)
    return compute


def _huber(delta: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def compute(x: np.ndarray, t: np.ndarray) -> np.ndarray:
        z = np.abs(x - t)
        return np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return compute


def smooth_l1_loss_cpu(self, target, reduction=1, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    loss = _same_dtype("smooth_l1_loss", "smooth_l1_cpu", _FLOATS, _smooth_l1(beta), (self, target), self)
    return _reduce(loss, reduction)


def huber_loss_cpu(self, target, reduction=1, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    loss = _same_dtype("huber_loss", "huber_cpu", _FLOATS, _huber(delta), (self, target), self)
    return _reduce(loss, reduction)


def _norm(self: Any, reduction: int) -> float:
    return 1.0 / self._data.size if reduction == 1 and self._data.size else 1.0


def smooth_l1_loss_backward_grad_input_cpu(grad_output, self, target, reduction, beta, *, grad_input):
    norm = _norm(self, reduction)

    def compute(x: np.ndarray, t: np.ndarray, g: np.ndarray) -> np.ndarray:
        d = x - t
        inside = norm * d * g / beta if beta else 0 * d
        return np.where(d <= -beta, -norm * g, np.where(d >= beta, norm * g, inside))
    return _same_dtype("smooth_l1_loss_backward", "smooth_l1_backward_cpu_out", _FLOATS, compute,
                       (self, target, grad_output), self, grad_input)


def huber_loss_backward_out_cpu(grad_output, self, target, reduction, delta, *, grad_input):
    norm = _norm(self, reduction)

    def compute(x: np.ndarray, t: np.ndarray, g: np.ndarray) -> np.ndarray:
        d = x - t
        return np.where(d <= -delta, -norm * g * delta, np.where(d >= delta, norm * g * delta, norm * d * g))
    return _same_dtype("huber_loss_backward", "huber_backward_cpu_out", _FLOATS, compute,
                       (self, target, grad_output), self, grad_input)


def mse_loss_backward_grad_input_cpu(grad_output, self, target, reduction, *, grad_input):
    """``mse_loss_backward_out``: ``norm * (input - target) * grad_output`` over the broadcast operands.

    ``norm`` is ``2 / numel`` for a mean, else 2 (``mse_backward_cpu_kernel``). The operands compute in
    their promoted dtype (half in float), which must cast to ``grad_input``'s; ``grad_input`` is resized
    to the broadcast shape, with torch's warning when it had elements.
    """
    x, t, g = self._data, target._data, grad_output._data
    norm = 2.0 / x.size if reduction == 1 and x.size else 2.0
    with _k.quiet():
        dt = _k._result_np(self, target, grad_output)
        shape = _k._broadcast_shapes(x.shape, t.shape, g.shape)
        _k._check_can_cast(dt, grad_input._data.dtype)
        if dt.kind != "f":
            raise _k._not_implemented("mse_backward_cpu", dt)
        work = _F32 if dt == _F16 else dt
        r = norm * (_k._cast(x, work) - _k._cast(t, work)) * _k._cast(g, work)
        np.copyto(_resize_out(grad_input, shape, [x, t, g]), r, casting="unsafe")
    return grad_input


def mse_loss_backward_cpu(grad_output, self, target, reduction):
    """``mse_loss_backward``: ``zeros_like(input)`` (contiguous) filled by the ``grad_input`` kernel."""
    x, t, g = self._data, target._data, grad_output._data
    if x.dtype is t.dtype is g.dtype and (x.dtype is _F32 or x.dtype is _k._F64) and x.shape == t.shape \
            and (g.shape == () or g.shape == x.shape):  # a loss's backward: one dtype, the input's shape
        norm = 2.0 / x.size if reduction == 1 and x.size else 2.0
        with _k.quiet():
            r = norm * (x - t) * g
            return wrap_cpu(np.ascontiguousarray(r) if x.ndim else np.asarray(r))
    grad_input = wrap_cpu(np.zeros(x.shape, x.dtype))
    return mse_loss_backward_grad_input_cpu(grad_output, self, target, reduction, grad_input=grad_input)


def _out_kernel(functional: Callable[..., Any]) -> Callable[..., Any]:
    """An ``out=`` kernel: the functional result, cast-checked into ``out`` (resized)."""
    def out_cpu(*args: Any, out: Any, **kwargs: Any) -> Any:
        r = functional(*args, **kwargs)
        check_out_dtype("cast", r.dtype, out.dtype)
        np.copyto(_resize_out(out, r._data.shape, [r._data]), r._data, casting="unsafe")
        return out

    out_cpu.__name__ = out_cpu.__qualname__ = f"{functional.__name__[:-4]}_out_cpu"
    return out_cpu


def nll_loss_backward_cpu(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """``nll_loss_backward_out_frame``: zeros, and ``-weight[t] * grad`` at each row's target class."""
    x, g, tw = self._data, grad_output._data, total_weight._data
    # every step's cross_entropy backward: the checks below all pass when these hold
    if weight is None and (reduction == 1 or reduction == 2) and g.shape == () == tw.shape \
            and g.dtype is x.dtype is tw.dtype and _k.nll_targets_in_range(x, target._data, ignore_index):
        grad = _k.nll_grad_fast(x, target._data, g, tw, reduction)
        if grad is not None:
            return wrap_cpu(grad)
    L.nll_loss_backward_check(grad_output, self, target, weight, reduction, total_weight)
    dt = x.dtype
    if dt.kind != "f":
        raise _k._not_implemented("nll_loss_backward_out_frame", dt)
    for other in (grad_output, weight, total_weight):
        if other is not None and other._data.dtype != dt:
            found = other._data.dtype
            raise RuntimeError(f"expected scalar type {_k._TORCH_NAME[dt]} but found {_k._TORCH_NAME[found]}")
    acc = _F32 if dt == _F16 else dt
    t = target._data.reshape(-1).astype(np.int64)
    n_classes = x.shape[-1]
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t[np.argmax(bad)]} is out of bounds.")
    grad = np.zeros((t.size, n_classes) if x.ndim == 2 else (1, n_classes), acc)
    g = grad_output._data.astype(acc).reshape(-1)
    with _k.quiet():
        if reduction != 0 or x.ndim == 1:  # one grad for every row
            g = -(g / total_weight._data.astype(acc).reshape(())) if reduction == 1 else -g
        else:
            g = -g
        safe = np.where(valid, t, 0)
        coef = g if weight is None else weight._data.astype(acc)[safe] * g
        rows = np.arange(t.size)
        grad[rows[valid], safe[valid]] = np.broadcast_to(coef, t.shape)[valid]
    return wrap_cpu(grad.reshape(x.shape).astype(dt, copy=False))


def nll_loss_backward_grad_input_cpu(grad_output, self, target, weight, reduction, ignore_index, total_weight, *,
                                     grad_input):
    r = nll_loss_backward_cpu(grad_output, self, target, weight, reduction, ignore_index, total_weight)
    check_out_dtype("exact", r.dtype, grad_input.dtype)
    np.copyto(_resize_out(grad_input, r._data.shape, [r._data]), r._data, casting="unsafe")
    return grad_input


KERNELS: dict[str, Callable[..., Any]] = {
    "nll_loss_backward": nll_loss_backward_cpu, "nll_loss_backward.grad_input": nll_loss_backward_grad_input_cpu,
    "smooth_l1_loss": smooth_l1_loss_cpu, "smooth_l1_loss.out": _out_kernel(smooth_l1_loss_cpu),
    "smooth_l1_loss_backward.grad_input": smooth_l1_loss_backward_grad_input_cpu,
    "huber_loss": huber_loss_cpu, "huber_loss.out": _out_kernel(huber_loss_cpu),
    "huber_loss_backward.out": huber_loss_backward_out_cpu,
    "mse_loss_backward": mse_loss_backward_cpu, "mse_loss_backward.grad_input": mse_loss_backward_grad_input_cpu,
}
