"""CPU kernels of the activation family (``dispatchcore.native.activation``), relu's and log_softmax's backward too.

silu, softplus, log_sigmoid, ``threshold_backward`` (relu's backward) and ``_log_softmax_backward_data``.

Mirrors the CPU kernels of ``aten/src/ATen/native/cpu/Activation.cpp`` (``silu_kernel``,
``silu_backward_kernel``, ``softplus_kernel``, ``softplus_backward_kernel``,
``log_sigmoid_cpu_kernel``, ``log_sigmoid_backward_cpu_kernel``, ``threshold_kernel``) and of
``cpu/SoftMaxKernel.cpp`` (``log_softmax_backward_kernel``) over numpy, with the pointwise
family's TensorIterator rules (``pointwise._same_dtype``: one floating dtype, an ``out=`` or
in-place target of exactly it, half computed in float). Invariant: results are new arrays unless
an ``out=``/in-place target is given; the log_sigmoid buffer holds ``exp(-|x|)``, as torch's CPU kernel writes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore.dtypes import float16
from dispatchcore.native.activation import log_softmax_backward_check, softmax_backward_check
from dispatchcore.native.structured import check_out_dtype
from dispatchcore.tensor import wrap_cpu

from . import kernels as _k
from .pointwise import _same_dtype

__all__ = ["KERNELS"]

_FLOATS = "f"
# the integer dtype of each float dtype's width: threshold_backward masks the floats' bits with it
_MASK_INT = {_k._F32: _k._I32, _k._F64: _k._I64}
_BITS_MIN = 4096  # the size from which threshold_backward masks bits rather than calling np.where


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


def _silu_backward(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    s = _sigmoid(x)
    return g * s * (1 + x * (1 - s))


def silu_cpu(self):
    return _same_dtype("silu", "silu_cpu", _FLOATS, _silu, (self,), self)


def silu__cpu(self):
    return _same_dtype("silu", "silu_cpu", _FLOATS, _silu, (self,), self, self)


def silu_out_cpu(self, *, out):
    return _same_dtype("silu", "silu_cpu", _FLOATS, _silu, (self,), self, out)


def silu_backward_cpu(grad_output, self):
    return _same_dtype("silu_backward", "silu_backward_cpu", _FLOATS, _silu_backward, (grad_output, self),
                       grad_output)


def silu_backward_grad_input_cpu(grad_output, self, *, grad_input):
    return _same_dtype("silu_backward", "silu_backward_cpu", _FLOATS, _silu_backward, (grad_output, self),
                       grad_output, grad_input)


def _softplus(beta: Any, threshold: Any) -> Callable[[np.ndarray], np.ndarray]:
    beta, threshold = _k._item(beta), _k._item(threshold)
    return lambda x: np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _softplus_backward(beta: Any, threshold: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    beta, threshold = _k._item(beta), _k._item(threshold)

    def compute(g: np.ndarray, x: np.ndarray) -> np.ndarray:
        z = np.exp(x * beta)
        return np.where(x * beta > threshold, g, g * z / (z + 1))
    return compute


def softplus_cpu(self, beta=1, threshold=20):
    return _same_dtype("softplus", "softplus_cpu", _FLOATS, _softplus(beta, threshold), (self,), self)


def softplus_out_cpu(self, beta=1, threshold=20, *, out):
    return _same_dtype("softplus", "softplus_cpu", _FLOATS, _softplus(beta, threshold), (self,), self, out)


def softplus_backward_cpu(grad_output, self, beta, threshold):
    return _same_dtype("softplus_backward", "softplus_backward_cpu", _FLOATS, _softplus_backward(beta, threshold),
                       (grad_output, self), grad_output)


def softplus_backward_grad_input_cpu(grad_output, self, beta, threshold, *, grad_input):
    return _same_dtype("softplus_backward", "softplus_backward_cpu", _FLOATS, _softplus_backward(beta, threshold),
                       (grad_output, self), grad_output, grad_input)


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _log_sigmoid_backward(g: np.ndarray, x: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """The CPU kernel reads ``exp(-|x|)`` from the forward's buffer, not from ``x``."""
    negative = x < 0
    return g * (np.where(negative, 1, 0) - np.where(negative, 1, -1) * (buffer / (1 + buffer)))


def _buffer(x: np.ndarray) -> np.ndarray:
    """The CPU kernel's buffer: ``exp(-|x|)``."""
    return np.exp(-np.abs(x))


def _contiguous(t: Any) -> Any:
    a = t._data
    return t if a.flags.c_contiguous else wrap_cpu(a.copy(order="C"))


def log_sigmoid_forward_cpu(self):
    # torch's CPU kernel allocates both results contiguous (empty_like(input, MemoryFormat::Contiguous))
    output = _same_dtype("log_sigmoid_forward", "log_sigmoid_cpu", _FLOATS, _log_sigmoid, (self,), self)
    buffer = _same_dtype("log_sigmoid_forward", "log_sigmoid_cpu", _FLOATS, _buffer, (self,), self)
    return _contiguous(output), _contiguous(buffer)


def log_sigmoid_forward_output_cpu(self, *, output, buffer):
    _same_dtype("log_sigmoid_forward", "log_sigmoid_cpu", _FLOATS, _log_sigmoid, (self,), self, output)
    _same_dtype("log_sigmoid_forward", "log_sigmoid_cpu", _FLOATS, _buffer, (self,), self, buffer)
    return output, buffer


def log_sigmoid_backward_cpu(grad_output, self, buffer):
    return _same_dtype("log_sigmoid_backward", "log_sigmoid_backward_cpu", _FLOATS, _log_sigmoid_backward,
                       (grad_output, self, buffer), grad_output)


def log_sigmoid_backward_grad_input_cpu(grad_output, self, buffer, *, grad_input):
    return _same_dtype("log_sigmoid_backward", "log_sigmoid_backward_cpu", _FLOATS, _log_sigmoid_backward,
                       (grad_output, self, buffer), grad_output, grad_input)


def _threshold_backward(threshold: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``threshold_kernel`` with ``value`` 0: ``self <= threshold ? 0 : grad`` (the threshold in the op's dtype)."""
    def compute(g: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.where(x <= _k._scalar_array(threshold, x.dtype), 0, g)
    return compute


def threshold_backward_cpu(grad_output, self, threshold):
    g, x = grad_output._data, self._data
    # relu's backward, every step of a training loop: one float dtype, one shape, contiguous operands
    if g.dtype is x.dtype and g.dtype.char in "fd" and g.shape == x.shape and g.flags.c_contiguous \
            and x.flags.c_contiguous:
        zero = _k._ZERO[g.dtype]
        drop = x <= (zero if threshold == 0 else _k._scalar_array(threshold, x.dtype))
        if g.size >= _BITS_MIN:
            # ``np.where(drop, 0, g)`` as bits: drop - 1 is 0 (all bits clear) where the gradient is
            # dropped and -1 (all bits set) where it is kept, so ``g & (drop - 1)`` is exactly g or
            # +0.0; no data-dependent branch: 2.5x faster than np.where on a random ReLU mask of
            # 16K elements, slower below ~4K (five numpy calls instead of one). The mask is made
            # by ``astype`` and an integer subtract in place: numpy's mixed bool-int ``add`` casts
            # through a slow loop (10.8 -> 9.4 us at 16K). The result is an array of its own (no
            # ``.base``: a storage is the array that owns the memory)
            m = drop.astype(_MASK_INT[g.dtype])
            _k._sub(m, 1, out=m)
            r = np.empty_like(g)
            np.bitwise_and(g.view(m.dtype), m, out=r.view(m.dtype))
            return wrap_cpu(r)
        return wrap_cpu(_k._where(drop, zero, g))  # np.where without its dispatch hop, with 0-d operands
    return _same_dtype("threshold_backward", "threshold_cpu", "iuf", _threshold_backward(threshold),
                       (grad_output, self), grad_output)


def threshold_backward_grad_input_cpu(grad_output, self, threshold, *, grad_input):
    return _same_dtype("threshold_backward", "threshold_cpu", "iuf", _threshold_backward(threshold),
                       (grad_output, self), grad_output, grad_input)


def _fast_backward_operands(g: np.ndarray, o: np.ndarray, dim: int, input_dtype: Any) -> bool:
    """A (log_)softmax backward's usual operands: one float dtype and shape, contiguous, dim in range."""
    return bool((g.dtype is _k._F32 or g.dtype is _k._F64) and o.dtype is g.dtype and g.shape == o.shape
                and g.ndim and input_dtype is not float16 and -g.ndim <= dim < g.ndim
                and g.flags.c_contiguous and o.flags.c_contiguous)


def _log_softmax_backward_data_cpu(grad_output, output, dim, input_dtype):
    """``grad - exp(output) * sum(grad, dim)``, in ``grad_output``'s dtype (half computed in float)."""
    g, o = grad_output._data, output._data
    # every step's cross_entropy backward: the check passes, the result is a new contiguous array
    if _fast_backward_operands(g, o, dim, input_dtype):
        r = _k.log_softmax_backward_fast(g, o, dim % g.ndim)
        if r is not None:
            return wrap_cpu(r)
    d = log_softmax_backward_check(grad_output, output, dim, input_dtype)
    if g.dtype.kind != "f":
        raise _k._not_implemented("log_softmax_backward_lastdim_kernel_impl" if d == max(g.ndim - 1, 0)
                                  else "log_softmax_backward_kernel_impl", g.dtype)
    work = _k._F32 if g.dtype == _k._F16 else g.dtype
    with _k.quiet():
        gw, ow = _k._cast(g, work), _k._cast(o, work)
        if gw.ndim == 0:
            r = gw - np.exp(ow) * gw
        else:
            r = gw - np.exp(ow) * np.add.reduce(gw, axis=d, keepdims=True)
    return wrap_cpu(np.require(r.astype(g.dtype, copy=False), requirements="C"))  # a 0-d result stays 0-d


def _log_softmax_backward_data_out_cpu(grad_output, output, dim, input_dtype, *, out):
    r = _log_softmax_backward_data_cpu(grad_output, output, dim, input_dtype)
    check_out_dtype("exact", r.dtype, out.dtype)
    np.copyto(_k._resize_out(out, r._data.shape, [r._data]), r._data, casting="unsafe")
    return out


def _softmax_backward_data_cpu(grad_output, output, dim, input_dtype):
    """``softmax_backward_cpu_out``: ``output * (grad - sum(grad * output, dim))``, in ``grad_output``'s dtype.

    The result is contiguous (LEGACY_CONTIGUOUS_MEMORY_FORMAT); half computes in float.
    """
    g, o = grad_output._data, output._data
    # every step's softmax backward: one float dtype, one shape, contiguous operands
    if _fast_backward_operands(g, o, dim, input_dtype):
        with _k.quiet():
            r = g * o
            np.subtract(g, np.add.reduce(r, axis=dim % g.ndim, keepdims=True), out=r)
            np.multiply(o, r, out=r)
        return wrap_cpu(r)
    d = softmax_backward_check(grad_output, output, dim, input_dtype)
    if g.dtype.kind != "f":
        raise _k._not_implemented("softmax_backward_lastdim_kernel_impl" if d == max(g.ndim - 1, 0)
                                  else "softmax_backward_kernel_impl", g.dtype)
    work = _k._F32 if g.dtype == _k._F16 else g.dtype
    with _k.quiet():
        gw, ow = _k._cast(g, work), _k._cast(o, work)
        axis = d if gw.ndim else None
        r = ow * (gw - np.add.reduce(gw * ow, axis=axis, keepdims=gw.ndim > 0))
    return wrap_cpu(np.require(np.asarray(r).astype(g.dtype, copy=False), requirements="C"))


def _softmax_backward_data_out_cpu(grad_output, output, dim, input_dtype, *, grad_input):
    r = _softmax_backward_data_cpu(grad_output, output, dim, input_dtype)
    check_out_dtype("exact", r.dtype, grad_input.dtype)
    np.copyto(_k._resize_out(grad_input, r._data.shape, [r._data]), r._data, casting="unsafe")
    return grad_input


KERNELS: dict[str, Callable[..., Any]] = {
    "_softmax_backward_data": _softmax_backward_data_cpu,
    "_softmax_backward_data.out": _softmax_backward_data_out_cpu,
    "threshold_backward": threshold_backward_cpu, "threshold_backward.grad_input": threshold_backward_grad_input_cpu,
    "_log_softmax_backward_data": _log_softmax_backward_data_cpu,
    "_log_softmax_backward_data.out": _log_softmax_backward_data_out_cpu,
    "silu": silu_cpu, "silu_": silu__cpu, "silu.out": silu_out_cpu,
    "silu_backward": silu_backward_cpu, "silu_backward.grad_input": silu_backward_grad_input_cpu,
    "softplus": softplus_cpu, "softplus.out": softplus_out_cpu,
    "softplus_backward": softplus_backward_cpu, "softplus_backward.grad_input": softplus_backward_grad_input_cpu,
    "log_sigmoid_forward": log_sigmoid_forward_cpu, "log_sigmoid_forward.output": log_sigmoid_forward_output_cpu,
    "log_sigmoid_backward": log_sigmoid_backward_cpu,
    "log_sigmoid_backward.grad_input": log_sigmoid_backward_grad_input_cpu,
}
