"""CPU kernels of the special family (``dispatchcore.native.special``): ``xlogy``, ``logit``, ``logit_backward``.

Mirrors the CPU kernels of ``BinaryOpsKernel.cpp`` (``xlogy_kernel``: NaN where ``other`` is NaN,
0 where ``self`` is 0, else ``self * log(other)``; integers compute in the default float, half in
float) and ``UnaryOpsKernel.cpp``/``BinaryOpsKernel.cpp`` (``logit_kernel``, ``logit_backward_kernel``:
``eps`` clamps the input to ``[eps, 1 - eps]``, computed in the input's dtype). The ``out=``
overloads are torch's structured kernels; the functional and in-place forms share their engine,
so every form makes TensorIterator's checks in torch's order. Invariant: numpy in, tensor out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import dtypes
from dispatchcore.native import pointwise as P
from dispatchcore.native import special as S

from . import gamma as _gamma
from . import kernels as _k
from .pointwise import _check_target, _opmath, _unary

__all__ = ["KERNELS"]

_nd = np.ndarray


def _xlogy_values(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = np.where(np.isnan(y), np.nan, np.where(x == 0, 0, x * np.log(y)))
    return np.asarray(r).astype(x.dtype, copy=False)


def _xlogy(self: Any, other: Any, out: Any = None) -> Any:
    """TensorIterator's binary float op: the promoted dtype, integers and bool in the default float."""
    with _k.quiet():
        x, y = _k._operand(self), _k._operand(other)
        common = _k._result_np(self, other)
        result = P.binary_result_dtype(P.FLOAT, dtypes.from_numpy_dtype(common), dtypes.get_default_dtype()).np
        a, b = _k._as_dtype(x, result), _k._as_dtype(y, result)
        shape = _k._broadcast_shapes(a.shape, b.shape)
        if out is not None:
            _check_target(P.FLOAT, "xlogy", result, shape, self, out)
        if result.kind != "f":
            raise _k._not_implemented("xlogy_cpu", result)
        r = _opmath(_xlogy_values)(a, b)
        return _k._store(np.asarray(r).astype(result, copy=False), result, shape, self, out,
                         arrays=[v for v in (x, y) if isinstance(v, _nd)])


def _logit_values(x: np.ndarray, eps: float | None) -> np.ndarray:
    """``x`` clamped to ``[eps, 1 - eps]`` (both in x's dtype), then ``x == 1 ? inf : log(x / (1 - x))``."""
    one = x.dtype.type(1)
    bounds = S.logit_bounds(eps)
    if bounds is not None:
        lo = x.dtype.type(bounds[0])
        hi = one - lo
        x = np.where(x < lo, lo, np.where(x > hi, hi, x)).astype(x.dtype, copy=False)  # NaN stays NaN
    return np.where(x == one, x.dtype.type(np.inf), np.log(x / (one - x))).astype(x.dtype, copy=False)


def _logit(self: Any, eps: float | None, out: Any = None) -> Any:
    """TensorIterator's unary float op: integers and bool in the default float."""
    a = self._data
    result = P.unary_result_dtype(P.FLOAT, dtypes.from_numpy_dtype(a.dtype), dtypes.get_default_dtype()).np
    if out is not None:
        _check_target(P.FLOAT, "logit", result, a.shape, self, out)
    if result.kind != "f":
        raise _k._not_implemented("logit_cpu", result)
    with _k.quiet():
        r = _logit_values(_k._cast(a, result), eps)
        return _k._store(r, result, a.shape, self, out, arrays=(a,))


def _logit_backward_values(dy: np.ndarray, x: np.ndarray, eps: float | None) -> np.ndarray:
    """``dy / (x (1 - x))``; ``dy * inf`` at 0 and 1; outside the bounds NaN (no eps) or 0 (eps)."""
    zero, one = x.dtype.type(0), x.dtype.type(1)
    bounds = S.logit_bounds(eps)
    if bounds is None:
        outside, fill = (x < zero) | (x > one), x.dtype.type(np.nan)
    else:
        lo = x.dtype.type(bounds[0])
        outside, fill = (x < lo) | (x > one - lo), zero
    at_edge = (x == zero) | (x == one)
    r = np.where(outside, fill, np.where(at_edge, dy * x.dtype.type(np.inf), dy / (x * (one - x))))
    return r.astype(x.dtype, copy=False)


def _logit_backward(grad_output: Any, self: Any, eps: float | None, out: Any = None) -> Any:
    """A structured binary op: the inputs' promoted dtype (floating only), an out= it can be cast to."""
    g, a = grad_output._data, self._data
    dt = _k._result_np(grad_output, self)
    shape = _k._broadcast_shapes(g.shape, a.shape)
    if out is not None:
        _check_target(P.COMMON, "logit_backward", dt, shape, grad_output, out)
    if dt.kind != "f":
        raise _k._not_implemented("logit_backward_cpu", dt)
    with _k.quiet():
        r = _logit_backward_values(_k._cast(g, dt), _k._cast(a, dt), eps)
        return _k._store(r, dt, shape, grad_output, out, arrays=(g, a))


def xlogy_tensor_cpu(self, other):
    return _xlogy(self, other)


def xlogy__tensor_cpu(self, other):
    return _xlogy(self, other, self)


def xlogy_out_tensor_cpu(self, other, *, out):
    return _xlogy(self, other, out)


def logit_cpu(self, eps=None):
    return _logit(self, eps)


def logit__cpu(self, eps=None):
    return _logit(self, eps, self)


def logit_out_cpu(self, eps=None, *, out):
    return _logit(self, eps, out)


def logit_backward_cpu(grad_output, self, eps=None):
    return _logit_backward(grad_output, self, eps)


def logit_backward_grad_input_cpu(grad_output, self, eps=None, *, grad_input):
    return _logit_backward(grad_output, self, eps, grad_input)


def frexp_tensor_out_cpu(self, *, mantissa, exponent):
    """``frexp_out``: its checks, then C's ``frexp`` of each element (in the element's own precision)."""
    S.frexp_check(self, mantissa, exponent)
    a = self._data
    m, e = np.frexp(a)  # frexpf for float32, as std::frexp; inf and NaN keep themselves with exponent 0
    _k._copyto(_k._resize_out(mantissa, a.shape, (a,)), m)
    _k._copyto(_k._resize_out(exponent, a.shape, (a,)), e)
    return mantissa, exponent


def _polygamma(n, self, out=None):
    """``polygamma``: the negative-n check, then digamma's dtype rule with the kernel for ``n``."""
    S.polygamma_check(n)
    if self._data.dtype.kind == "c":
        raise _k._not_implemented("digamma" if n == 0 else "trigamma" if n == 1 else "polygamma", self._data.dtype)
    return _unary("digamma", self, out, compute=lambda a: _gamma.polygamma(n, a))


KERNELS: dict[str, Callable[..., Any]] = {
    "polygamma": lambda n, self: _polygamma(n, self), "polygamma.out": lambda n, self, *, out: _polygamma(n, self, out),
    "frexp.Tensor_out": frexp_tensor_out_cpu,
    "xlogy.Tensor": xlogy_tensor_cpu, "xlogy_.Tensor": xlogy__tensor_cpu, "xlogy.OutTensor": xlogy_out_tensor_cpu,
    "logit": logit_cpu, "logit_": logit__cpu, "logit.out": logit_out_cpu,
    "logit_backward": logit_backward_cpu, "logit_backward.grad_input": logit_backward_grad_input_cpu,
}
