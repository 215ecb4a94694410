"""Meta kernels of the activation family (``dispatchcore.native.activation``): geometry and dtype only.

``threshold_backward`` is a binary TensorIterator op; ``_log_softmax_backward_data`` is
``grad_output``'s geometry after ``log_softmax_backward_check``.

Mirrors torch's structured meta functions (``TORCH_META_FUNC(silu)``, ``softplus``, their backward
ops: TensorIterator unary/binary ops keeping the inputs' dtype) and the Python meta kernels of
``log_sigmoid_forward``/``log_sigmoid_backward`` (``empty_like`` output and buffer).
Invariant: no kernel reads data; an ``out=`` or in-place target is checked as the CPU kernel checks it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore.native.activation import log_softmax_backward_check, softmax_backward_check
from dispatchcore.native.structured import check_out_dtype

from .kernels import _resize_out, meta_tensor
from .pointwise import _same

__all__ = ["KERNELS"]


def silu(self):
    return _same((self,))


def silu_(self):
    return _same((self,), inplace=True)


def silu_out(self, *, out):
    return _same((self,), out)


def silu_backward(grad_output, self):
    return _same((grad_output, self))


def silu_backward_grad_input(grad_output, self, *, grad_input):
    return _same((grad_output, self), grad_input)


def softplus(self, beta=1, threshold=20):
    return _same((self,))


def softplus_out(self, beta=1, threshold=20, *, out):
    return _same((self,), out)


def softplus_backward(grad_output, self, beta, threshold):
    return _same((grad_output, self))


def softplus_backward_grad_input(grad_output, self, beta, threshold, *, grad_input):
    return _same((grad_output, self), grad_input)


def log_sigmoid_forward(self):
    return _same((self,)), _same((self,))


def log_sigmoid_forward_output(self, *, output, buffer):
    _same((self,), output)
    _same((self,), buffer)
    return output, buffer


def log_sigmoid_backward(grad_output, self, buffer):
    return _same((grad_output, self))


def log_sigmoid_backward_grad_input(grad_output, self, buffer, *, grad_input):
    return _same((grad_output, self), grad_input)


def threshold_backward(grad_output, self, threshold):
    return _same((grad_output, self))


def threshold_backward_grad_input(grad_output, self, threshold, *, grad_input):
    return _same((grad_output, self), grad_input)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    log_softmax_backward_check(grad_output, output, dim, input_dtype)
    return meta_tensor(tuple(grad_output.shape), grad_output.dtype)


def _log_softmax_backward_data_out(grad_output, output, dim, input_dtype, *, out):
    r = _log_softmax_backward_data(grad_output, output, dim, input_dtype)
    check_out_dtype("exact", r.dtype, out.dtype)
    return _resize_out(out, tuple(r.shape))


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """``TORCH_META_FUNC(_softmax_backward_data)``: ``grad_output``'s shape, contiguous; half for half-to-float."""
    from dispatchcore.dtypes import float16, float32

    softmax_backward_check(grad_output, output, dim, input_dtype)
    half = grad_output.dtype == float32 and input_dtype == float16
    return meta_tensor(tuple(grad_output.shape), float16 if half else grad_output.dtype)


def _softmax_backward_data_out(grad_output, output, dim, input_dtype, *, grad_input):
    r = _softmax_backward_data(grad_output, output, dim, input_dtype)
    check_out_dtype("exact", r.dtype, grad_input.dtype)
    return _resize_out(grad_input, tuple(r.shape))


KERNELS: dict[str, Callable[..., Any]] = {
    "_softmax_backward_data": _softmax_backward_data,
    "_softmax_backward_data.out": _softmax_backward_data_out,
    "threshold_backward": threshold_backward, "threshold_backward.grad_input": threshold_backward_grad_input,
    "_log_softmax_backward_data": _log_softmax_backward_data,
    "_log_softmax_backward_data.out": _log_softmax_backward_data_out,
    "silu": silu, "silu_": silu_, "silu.out": silu_out,
    "silu_backward": silu_backward, "silu_backward.grad_input": silu_backward_grad_input,
    "softplus": softplus, "softplus.out": softplus_out,
    "softplus_backward": softplus_backward, "softplus_backward.grad_input": softplus_backward_grad_input,
    "log_sigmoid_forward": log_sigmoid_forward, "log_sigmoid_forward.output": log_sigmoid_forward_output,
    "log_sigmoid_backward": log_sigmoid_backward, "log_sigmoid_backward.grad_input": log_sigmoid_backward_grad_input,
}
