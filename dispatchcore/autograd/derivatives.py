"""Derivative formulas of the core operators, registered at the Autograd alias key.

Mirrors ``tools/autograd/derivatives.yaml``: one formula per operator overload (or one per
differentiable input), written with dispatched operators (so they are themselves
differentiable), and node names as torch prints them (``AddBackward0``, ``MulBackward0``, ...).
See ``kernels.Derivative`` for how a formula's parameter names choose what is saved. Broadcast
gradients are summed back to their input's shape, and cast to its dtype, by the node itself
(the engine's ``validate_outputs``), so formulas need not call ``sum_to``.

Operators with a CompositeImplicitAutograd decomposition (matmul, reshape, softmax.int, ...)
need no entry: they decompose into operators that have one.

A formula dispatches the operators torch's formula dispatches, in its order, because a dispatch
mode or a ``__torch_dispatch__`` subclass sees them during ``backward()``: the dedicated backward
operators (``tanh_backward``, ``_softmax_backward_data``, ``select_backward``, ...), ``zeros_like``
or ``zeros`` as load_derivatives.py writes them, and GCC's operand order (Note [Evaluation order of
the formulas]). Where torch's C++ branches on ``areAnyTensorSubclassLike`` (a mode is active, or a
subclass), so do the formulas (``subclass_like``). ``tests/differential/test_vs_torch_backward_op_sequence.py``
compares every derivative's sequence with torch's.
"""

from __future__ import annotations

import math
from typing import Any

from .._library import Library
from .._tensor_methods import fast
from ..aten import COMPARISONS, ELEMENTWISE_UNARY
from ..dtypes import promote_types
from ..keys import DispatchKey
from ..keyset import key_bits
from ..layouts import contiguous_format, preserve_format
from ..ops import aten
from ..tls import per_thread as _pt
from .kernels import (
    as_strided_backward,
    register_derivative,
    register_nondifferentiable,
    register_out_kernel,
    sum_to,
)

__all__ = ["register", "restore_reduced_dims", "scalar_minus", "scalar_over", "subclass_like", "sum_to",
           "unsqueeze_to", "value_selecting_reduction_backward"]

A = aten
_SUBCLASS_LIKE = key_bits(DispatchKey.Python)
_CONTIGUOUS = contiguous_format  # LEGACY_CONTIGUOUS_MEMORY_FORMAT

# Note [Formula entries]: the ops backward formulas call most are bound once, here, as
# fixed-arity entries (``_tensor_methods.fast``: the call path of the Tensor methods, its fit to
# the schema checked at import): the same dispatch, memo and kernels, ~0.3 us less per call than
# ``A.mul.Tensor(g, other)`` (two attribute lookups, the instance call slot, ``*args`` and
# ``**kwargs``), and a backward pass makes one or more such calls per node. An argument an entry
# does not expect (a number for a Tensor, a subclass) takes the operator's own ``__call__``, as
# before. Every other op is called as ``A.<op>``.
_mul = fast(A.mul.Tensor, 2)
_div = fast(A.div.Tensor, 2)
_mm = fast(A.mm.default, 2)
_t = fast(A.t.default)
_neg = fast(A.neg.default)
_mul_scalar = fast(A.mul.Scalar, 1, 2)
_div_scalar = fast(A.div.Scalar, 1, 2)
_expand = fast(A.expand.default, 1, 2)

# Note [Evaluation order of the formulas]: a formula dispatches its operators in the order torch's
# C++ formula runs them, which a dispatch mode sees (and ``make_fx`` records). torch is built with
# GCC, which evaluates function arguments and the operands of overloaded binary operators right to
# left: ``grad * self.sgn()`` calls ``sgn`` before ``mul``, ``where(self >= min, grad, zero)``
# makes ``zero`` before comparing; the object of a method call comes first (``a.masked_fill_(m, 0)``
# computes ``a``, then ``m``). ``scalar - tensor`` is ``empty_like(t).fill_(s).sub_(t)`` in ATen
# (TensorOperators.h), ``scalar * tensor`` is ``tensor.mul(scalar)``. The per-input formulas of
# one node run in the order of derivatives.yaml's keys sorted by name (``kernels.Derivative``).


def subclass_like(*tensors: Any) -> bool:
    """``areAnyTensorSubclassLike``: a dispatch mode is active, or a tensor has the ``Python`` key.

    torch's formulas take out-of-place paths then (``scatter`` for ``scatter_``, ``logical_and``
    for ``logical_and_``), which is what a mode or a ``__torch_dispatch__`` subclass sees.
    """
    if _pt.state.modes is not None:
        return True
    return any(t is not None and hasattr(t, "_key_bits") and t._key_bits & _SUBCLASS_LIKE for t in tensors)


# --- helpers (dispatched operators only) ---------------------------------------------------------
def _column_major(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether a matrix was laid out column by column (a transposed contiguous one, ``W.t()``)."""
    return strides[0] == 1 and strides[1] == shape[0]


def mm_mat1_backward(grad: Any, mat2: Any, mat1_shape: Any, mat1_strides: Any, alpha: Any = 1) -> Any:
    """``mm_mat1_backward`` (FunctionsManual.cpp): the gradient of ``mat1 @ mat2`` for ``mat1``.

    For a column-major ``mat1`` it is computed as ``(mat2 @ grad.t()).t()``, so it comes out
    column-major too (the layout ``mat1`` had, which AccumulateGrad then keeps); else
    ``grad @ mat2.t()``.
    """
    if _column_major(mat1_shape, mat1_strides):
        result = _t(_mm(mat2, _t(grad)))
    else:
        result = _mm(grad, _t(mat2))
    return result if alpha == 1 else _mul_scalar(result, alpha)


def mm_mat2_backward(grad: Any, mat1: Any, mat2_shape: Any, mat2_strides: Any, alpha: Any = 1) -> Any:
    """``mm_mat2_backward``: ``(grad.t() @ mat1).t()`` for a column-major ``mat2`` (``linear``'s ``W.t()``).

    Else ``mat1.t() @ grad``.
    """
    if _column_major(mat2_shape, mat2_strides):
        result = _t(_mm(_t(grad), mat1))
    else:
        result = _mm(_t(mat1), grad)
    return result if alpha == 1 else _mul_scalar(result, alpha)

def scalar_minus(value: Any, t: Any) -> Any:
    """``value - t`` with a Scalar ``value`` in ATen's C++: ``empty_like(t).fill_(value).sub_(t)``.

    ATen's TensorOperators.h writes it so; a mode sees the three calls.
    """
    return A.sub_.Tensor(A.fill_.Scalar(A.empty_like.default(t, memory_format=preserve_format), value), t)


def scalar_over(value: Any, t: Any) -> Any:
    """``value / t`` with a Scalar ``value`` in ATen's C++: ``empty_like(t).fill_(value).div_(t)``."""
    return A.div_.Tensor(A.fill_.Scalar(A.empty_like.default(t, memory_format=preserve_format), value), t)


def _scale(grad: Any, alpha: Any) -> Any:
    """``maybe_multiply``: ``grad * alpha`` unless alpha is 1."""
    return grad if alpha == 1 else _mul_scalar(grad, alpha)


def _zeros_like(g: Any) -> Any:
    """``zeros_like(grad)`` in a derivatives.yaml formula (``grad`` is not an input: a real ``zeros_like``)."""
    return A.zeros_like.default(g)


def _zeros_of(shape: Any, like: Any) -> Any:
    """``zeros_like(<input>)`` in a derivatives.yaml formula.

    torch saves the input's sizes and options only (``TypeAndSize``) and calls ``at::zeros``
    (load_derivatives.py's replacement).
    """
    return A.zeros.default(list(shape), dtype=like.dtype, device=like.device)


def _zeros_of_self(g: Any, self_shape: Any, self_dtype: Any, self_device: Any) -> Any:
    """``self: zeros_like(self)``: ``at::zeros`` of self's saved sizes and options."""
    return A.zeros.default(list(self_shape), dtype=self_dtype, device=self_device)


def _zeros_of_other(g: Any, other_shape: Any, other_dtype: Any, other_device: Any) -> Any:
    """``other: zeros_like(other)``."""
    return A.zeros.default(list(other_shape), dtype=other_dtype, device=other_device)


def _zero_scalar(g: Any) -> Any:
    return A.scalar_tensor.default(0, dtype=g.dtype, device=g.device)


def _wrap(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    return dim % n if -n <= dim < n else dim


def _reduced_dims(dim: Any, ndim: int) -> list[int]:
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(_wrap(d, ndim) for d in dims)


def _restore(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """Put back the dimensions a reduction removed (``unsqueeze_multiple``)."""
    if keepdim or not shape:
        return g
    for d in _reduced_dims(dim, len(shape)):
        g = A.unsqueeze.default(g, d)
    return g


def restore_reduced_dims(output: Any, dims: Any, keepdim: bool) -> Any:
    """``restore_reduced_dims``: ``output`` reshaped with a 1 at each reduced dim (amax's backward)."""
    if keepdim:
        return output
    dims = [dims] if isinstance(dims, int) else list(dims or ())
    total = output.dim() + len(dims)
    target = [0] * total
    for i in dims:
        target[i + total if i < 0 else i] = 1
    j = 0
    for size in output.shape:
        while target[j] > 0:
            j += 1
        target[j] = size
        j += 1
    return A.reshape.default(output, target)


def unsqueeze_to(g: Any, sizes: tuple[int, ...], dims: Any = None) -> Any:
    """``unsqueeze_to``: unsqueeze ``g`` at each dim of size 1 in ``sizes`` (among ``dims`` when given)."""
    nd = len(sizes)
    wanted = range(nd) if dims is None else {_wrap(d, nd) for d in ([dims] if isinstance(dims, int) else dims)}
    for d in range(nd):
        if d in wanted and sizes[d] == 1:
            g = A.unsqueeze.default(g, d)
    return g


def value_selecting_reduction_backward(g: Any, dim: int, indices: Any, sizes: tuple[int, ...],
                                       keepdim: bool) -> Any:
    """``value_selecting_reduction_backward`` (max.dim, sort, topk): scatter the gradient to the indices.

    Under a mode (or for a subclass) ``grad.new_zeros(sizes).scatter(...)``, else
    ``zeros(sizes).scatter_(...)``, as ReduceOps.cpp does.
    """
    if not keepdim and sizes:
        g = A.unsqueeze.default(g, dim)
        indices = A.unsqueeze.default(indices, dim)
    if subclass_like(g, indices):
        return A.scatter.src(A.new_zeros.default(g, list(sizes)), dim, indices, g)
    return A.scatter_.src(A.zeros.default(list(sizes), dtype=g.dtype, device=g.device), dim, indices, g)


def _sum_backward(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """``sum_backward``: a full reduction (no dims, or none listed) expands the 0-d grad as is."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return _expand(g, list(shape))
    return _expand(_restore(g, shape, dim, keepdim), list(shape))


def _and(a: Any, b: Any, subclass: bool) -> Any:
    """``a.logical_and_(b)``, or ``a.logical_and(b)`` on torch's subclass-like path."""
    return A.logical_and.default(a, b) if subclass else A.logical_and_.default(a, b)


def _clamp_backward(g: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002 - schema names
    """``clamp_backward`` with Scalar bounds: ``where(self >= min && self <= max, grad, 0)``."""
    if min is None and max is None:
        return g
    zero = _zero_scalar(g)
    if min is not None and max is not None:
        pred = A.logical_and_.default(A.ge.Scalar(self, min), A.le.Scalar(self, max))
    elif min is not None:
        pred = A.ge.Scalar(self, min)
    else:
        pred = A.le.Scalar(self, max)
    return A.where.self(pred, g, zero)


def _clamp_tensor_backward(g: Any, self: Any, min: Any, max: Any,  # noqa: A002 - schema names
                           grad_input_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """clamp.Tensor: ``clamp_backward_min_max`` (the ``min, max`` key, first by name), then ``clamp_backward``."""
    grad_min = grad_max = grad_self = None
    if grad_input_mask[1] or grad_input_mask[2]:
        zero = _zero_scalar(g)
        if max is not None and min is not None:
            subclass = subclass_like(self, min, max)
            if grad_input_mask[1]:
                grad_min = A.where.self(_and(A.lt.Tensor(self, min), A.lt.Tensor(min, max), subclass), g, zero)
            if grad_input_mask[2]:
                pred = A.logical_or.default if subclass else A.logical_or_.default
                grad_max = A.where.self(pred(A.gt.Tensor(self, max), A.lt.Tensor(max, min)), g, zero)
        elif min is not None and grad_input_mask[1]:
            grad_min = A.where.self(A.lt.Tensor(self, min), g, zero)
        elif max is not None and grad_input_mask[2]:
            grad_max = A.where.self(A.gt.Tensor(self, max), g, zero)
    if grad_input_mask[0]:
        if max is not None and min is not None:
            zero = _zero_scalar(g)
            pred = _and(A.ge.Tensor(self, min), A.le.Tensor(self, max), subclass_like(self, min, max))
            grad_self = A.where.self(pred, g, zero)
        elif min is not None:
            zero = _zero_scalar(g)
            grad_self = A.where.self(A.ge.Tensor(self, min), g, zero)
        elif max is not None:
            zero = _zero_scalar(g)
            grad_self = A.where.self(A.le.Tensor(self, max), g, zero)
        else:
            grad_self = g
    return grad_self, grad_min, grad_max


def _clamp_min_self(g: Any, self: Any, min: Any) -> Any:  # noqa: A002
    """``where(self >= min, grad, at::scalar_tensor(0., grad.options()))`` (the zero first)."""
    zero = _zero_scalar(g)
    return A.where.self(A.ge.Tensor(self, min) if hasattr(min, "_key_bits") else A.ge.Scalar(self, min), g, zero)


def _clamp_min_min(g: Any, self: Any, min: Any) -> Any:  # noqa: A002
    zero = _zero_scalar(g)
    return A.where.self(A.lt.Tensor(self, min), g, zero)


def _clamp_max_self(g: Any, self: Any, max: Any) -> Any:  # noqa: A002
    """``where(self <= max, grad, at::scalar_tensor(0., grad.options()))`` (the zero first)."""
    zero = _zero_scalar(g)
    return A.where.self(A.le.Tensor(self, max) if hasattr(max, "_key_bits") else A.le.Scalar(self, max), g, zero)


def _clamp_max_max(g: Any, self: Any, max: Any) -> Any:  # noqa: A002
    zero = _zero_scalar(g)
    return A.where.self(A.gt.Tensor(self, max), g, zero)


def _extremum_backward(g: Any, self: Any, other: Any, loses: Any) -> Any:
    """``at::where(self == other, grad / 2, grad).masked_fill_(<loses>, 0)`` (maximum, minimum)."""
    half = _div_scalar(g, 2)
    split = A.where.self(A.eq.Tensor(self, other), half, g)
    return A.masked_fill_.Scalar(split, loses(self, other), 0)


def _div_mode_self(g: Any, other: Any, rounding_mode: Any, self_dtype: Any) -> Any:
    """``div_tensor_self_backward``: ``zeros_like(grad)`` in self's dtype with a rounding mode, else g / other."""
    if rounding_mode is not None:
        return A.zeros_like.default(g, dtype=self_dtype)
    if hasattr(other, "_key_bits"):
        return _div(g, other)
    return _div_scalar(g, other)  # ``grad / other`` with a Scalar other


def _div_mode_other(g: Any, self: Any, other: Any, rounding_mode: Any) -> Any:
    if rounding_mode is not None:
        return A.zeros_like.default(g, dtype=other.dtype)
    return _div_other(g, self, other)


def _unsqueeze_to(g: Any, dim: Any, self_shape: tuple[int, ...]) -> Any:
    """``unsqueeze_to(grad, dims, sizes)``: put back each listed dimension that had size 1."""
    return unsqueeze_to(g, self_shape, dim)


def _pow_self(g: Any, self: Any, exponent: Any) -> Any:
    """``pow_backward`` / ``pow_backward_self``: exponent * self^(exponent-1), zero where the exponent is 0."""
    if not hasattr(exponent, "_key_bits"):
        if exponent == 0:
            return A.zeros_like.default(self, memory_format=_CONTIGUOUS)
        return _mul(g, _mul_scalar(A.pow.Tensor_Scalar(self, exponent - 1), exponent))
    value = _mul(g, _mul(exponent, A.pow.Tensor_Tensor(self, A.sub.Scalar(exponent, 1))))
    zero = _zero_scalar(g)
    return A.where.self(A.eq.Scalar(exponent, 0), zero, value)


def _pow_exponent(g: Any, self: Any, exponent: Any, result: Any) -> Any:
    """``pow_backward_exponent``: grad * result * log(self), zero where self == 0 and exponent >= 0."""
    if not hasattr(self, "_key_bits"):  # pow.Scalar: a number base
        log = math.log(self) if self > 0 else -math.inf if self == 0 else math.nan
        if self == 0:
            value = _mul_scalar(result, log)
            zero = A.zeros.default([], dtype=g.dtype, device=g.device)
            return _mul(g, A.where.self(A.ge.Scalar(exponent, 0), zero, value))
        return _mul(g, _mul_scalar(result, log))
    cond = A.ge.Scalar(exponent, 0)
    cond = A.logical_and.default(A.eq.Scalar(self, 0), cond)
    promoted = promote_types(self.dtype, exponent.dtype)
    base = self if self.dtype is promoted else A._to_copy.default(self, dtype=promoted)
    value = _mul(result, A.log.default(base))
    zero = _zero_scalar(g)
    return _mul(g, A.where.self(cond, zero, value))


def _div_other(g: Any, self: Any, other: Any) -> Any:
    """``div_tensor_other_backward``: ``-grad * ((self / other) / other)`` (the right operand first)."""
    q = _div(_div(self, other), other)
    return _mul(_neg(g), q)


def _max_dim_backward(g: Any, self_shape: tuple[int, ...], dim: int, keepdim: bool, indices: Any) -> Any:
    """``value_selecting_reduction_backward``: the gradient goes to the selected index."""
    return value_selecting_reduction_backward(g, dim, indices, self_shape, keepdim)


def _amax_backward(g: Any, self: Any, result: Any, dim: Any, keepdim: bool) -> Any:
    """``scale_grad_by_count(restore_reduced_dims(grad), restore_reduced_dims(result) == self, dim)``.

    Evenly splits the gradient between the maxima: ``(grad / mask.sum(dim, true)) * mask``.
    """
    mask = A.eq.Tensor(restore_reduced_dims(result, dim, keepdim), self)
    grad = restore_reduced_dims(g, dim, keepdim)
    dims = [dim] if isinstance(dim, int) else list(dim)
    return _mul(_div(grad, A.sum.dim_IntList(mask, dims, True)), mask)


def _max_backward(g: Any, self: Any, result: Any) -> Any:
    """``evenly_distribute_backward``: the gradient split evenly between the maxima (NaN ones too)."""
    if subclass_like(g, self, result):
        both_nan = A.logical_and.default(A.isnan.default(self), A.isnan.default(result))
        mask = A.logical_or_.default(A.eq.Tensor(self, result), both_nan)
        return _mul(mask, _div(g, A.sum.default(mask)))
    if A._local_scalar_dense.default(A.isnan.default(result)):
        mask = A.isnan.default(self)
    else:
        mask = A.eq.Tensor(self, result)
    zeros = A.new_zeros.default(g, list(self.shape), dtype=self.dtype, device=self.device)
    return A.masked_fill_.Tensor(zeros, mask, _div(g, A.sum.default(mask)))


def _mean_all_backward(g: Any, self_shape: tuple[int, ...]) -> Any:
    """``mean()``'s backward: ``_mean_backward`` of a full reduction (expand the 0-d grad, divide by numel)."""
    count = 1
    for n in self_shape:  # a 0-d input has one element
        count *= n
    return _div_scalar(_expand(g, list(self_shape)), count)


def _mean_backward(g: Any, self_shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    count = 1
    for d in _reduced_dims(dim, len(self_shape)):
        count *= self_shape[d] if self_shape else 1  # _safe_size: a 0-d input has one element
    return _div_scalar(_sum_backward(g, self_shape, dim, keepdim), count)


_MSE = (lambda g, self, target, reduction: A.mse_loss_backward.default(g, self, target, reduction),
        lambda g, self, target, reduction: A.mse_loss_backward.default(g, target, self, reduction))


def _cat_backward(g: Any, tensors_shape: list[tuple[int, ...]], dim: int) -> tuple[Any, ...]:
    """``cat_tensors_backward``: a slice per input; a legacy empty input (1-d, size 0) gets ``zeros({0})``."""
    nd = g.dim()
    d = _wrap(dim, nd)
    grads: list[Any] = []
    offset = 0
    for shape in tensors_shape:
        if len(shape) == 1 and shape[0] == 0:
            grads.append(A.zeros.default([0], dtype=g.dtype, device=g.device))
            continue
        size = shape[d]
        grads.append(A.slice.Tensor(g, d, offset, offset + size))
        offset += size
    return tuple(grads)


def _stack_backward(g: Any, tensors_shape: list[tuple[int, ...]], dim: int) -> tuple[Any, ...]:
    d = _wrap(dim, g.dim())
    return tuple(A.select.int(g, d, i) for i in range(len(tensors_shape)))


def _inverse_permutation(dims: list[int]) -> list[int]:
    n = len(dims)
    inverse = [0] * n
    for i, p in enumerate(dims):
        inverse[_wrap(p, n)] = i
    return inverse


def _squeeze_dim_backward(g: Any, self_shape: tuple[int, ...], dim: int) -> Any:
    return unsqueeze_to(g, self_shape, dim)


_INT64_MAX = 2**63 - 1


def _slice_backward(g: Any, self_shape: tuple[int, ...], dim: int, start: Any, end: Any, step: int) -> Any:
    """``slice_backward_wrapper``: a missing start is 0, a missing end INT64_MAX."""
    return A.slice_backward.default(g, list(self_shape), dim, 0 if start is None else start,
                                    _INT64_MAX if end is None else end, step)


def _to_copy_backward(g: Any, self_dtype: Any, self_device: Any) -> Any:
    if g.dtype is self_dtype and g.device == self_device:
        return g
    return A._to_copy.default(g, dtype=self_dtype, device=self_device)


def _sigmoid_backward(g: Any, result: Any) -> Any:
    return A.sigmoid_backward.default(g, result)


def _tanh_backward(g: Any, result: Any) -> Any:
    return A.tanh_backward.default(g, result)


# --- the table ---------------------------------------------------------------------------------------
# unary ops: (node name, formula); the in-place variant uses the same formula (a saved ``self`` is
# then the value before the op, a saved ``result`` the value after it)
UNARY = {
    "neg": ("NegBackward0", lambda g: _neg(g)),
    "abs": ("AbsBackward0", lambda g, self: _mul(g, A.sgn.default(self))),
    "exp": ("ExpBackward0", lambda g, result: _mul(g, result)),
    "log": ("LogBackward0", lambda g, self: _div(g, self)),
    "sqrt": ("SqrtBackward0", lambda g, result: _div(g, _mul_scalar(result, 2))),
    "sin": ("SinBackward0", lambda g, self: _mul(g, A.cos.default(self))),
    "cos": ("CosBackward0", lambda g, self: _mul(g, _neg(A.sin.default(self)))),
    "tanh": ("TanhBackward0", _tanh_backward),
    "sigmoid": ("SigmoidBackward0", _sigmoid_backward),
    "relu": ("ReluBackward0", lambda g, result: A.threshold_backward.default(g, result, 0)),
}
assert set(UNARY) == set(ELEMENTWISE_UNARY)

# binary ops: overload -> (node name, per-input formulas (self, other))
_ADD = (lambda g: g, lambda g, alpha: _scale(g, alpha))
_SUB = (lambda g: g, lambda g, alpha: _scale(_neg(g), alpha))
_MUL = (lambda g, other: _mul(g, other), lambda g, self: _mul(g, self))
_DIV = (lambda g, other: _div(g, other), _div_other)
BINARY = {
    "add.Tensor": ("AddBackward0", _ADD),
    "sub.Tensor": ("SubBackward0", _SUB),
    "mul.Tensor": ("MulBackward0", _MUL),
    "div.Tensor": ("DivBackward0", _DIV),
}
BINARY_SCALAR = {
    "add.Scalar": ("AddBackward1", lambda g: g),
    "sub.Scalar": ("SubBackward1", lambda g: g),
    "mul.Scalar": ("MulBackward1", lambda g, other: _mul_scalar(g, other)),
    "div.Scalar": ("DivBackward1", lambda g, other: _div_scalar(g, other)),
}

VIEWS = {
    "view": ("ViewBackward0", lambda g, self_shape: A.reshape.default(g, list(self_shape))),
    "_reshape_alias": ("ReshapeAliasBackward0", lambda g, self_shape: A.reshape.default(g, list(self_shape))),
    "t": ("TBackward0", lambda g: _t(g)),
    "transpose.int": ("TransposeBackward0", lambda g, dim0, dim1: A.transpose.int(g, dim0, dim1)),
    "permute": ("PermuteBackward0", lambda g, dims: A.permute.default(g, _inverse_permutation(dims))),
    "expand": ("ExpandBackward0", lambda g, self_shape: sum_to(g, self_shape)),
    "squeeze": ("SqueezeBackward0", lambda g, self_shape: unsqueeze_to(g, self_shape)),
    "squeeze.dim": ("SqueezeBackward1", _squeeze_dim_backward),
    "squeeze.dims": ("SqueezeBackward2", _unsqueeze_to),
    "unsqueeze": ("UnsqueezeBackward0", lambda g, dim: A.squeeze.dim(g, _wrap(dim, g.dim()))),
    "select.int": ("SelectBackward0",
                   lambda g, self_shape, dim, index: A.select_backward.default(g, list(self_shape), dim, index)),
    "slice.Tensor": ("SliceBackward0", _slice_backward),
    "as_strided": ("AsStridedBackward0",
                   lambda g, self_geometry, size, stride, storage_offset:
                   as_strided_backward(g, self_geometry, size, stride, storage_offset)),
    "alias": ("AliasBackward0", lambda g: g),
}

# factories have an Autograd kernel in torch too: it only redispatches (no tensor input to differentiate)
FACTORIES = ("empty.memory_format", "empty_strided", "zeros", "ones", "full", "arange", "arange.start",
             "arange.start_step", "linspace", "logspace", "rand", "randn", "scalar_tensor", "eye", "eye.m")
# _copy_from runs below copy_'s Autograd kernel (CopyBackwards records the graph): its own only redispatches
NONDIFFERENTIABLE = ("argmax", "detach", *(f"{c}.{o}" for c in COMPARISONS for o in ("Tensor", "Scalar")), *FACTORIES,
                     "_copy_from")


def _reg(lib: Library, name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> None:
    register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)


def register(lib: Library) -> None:
    """Register every built-in derivative (called once, at import of dispatchcore)."""
    r = _reg
    # elementwise arithmetic, functional and in place
    for name, (node, formulas) in BINARY.items():
        base, _, overload = name.partition(".")
        r(lib, name, node, ("self", "other"), formulas)
        r(lib, f"{base}_.{overload}", node, ("self", "other"), formulas, mutates="self")
    for name, (node, formula) in BINARY_SCALAR.items():
        base, _, overload = name.partition(".")
        r(lib, name, node, ("self",), formula)
        r(lib, f"{base}_.{overload}", node, ("self",), formula, mutates="self")
    pow_tensor = (_pow_self, _pow_exponent)
    r(lib, "pow.Tensor_Scalar", "PowBackward0", ("self",), _pow_self)
    r(lib, "pow.Tensor_Tensor", "PowBackward1", ("self", "exponent"), pow_tensor)
    r(lib, "pow.Scalar", "PowBackward2", ("exponent",), _pow_exponent)
    r(lib, "pow_.Scalar", "PowBackward0", ("self",), _pow_self, mutates="self")
    r(lib, "pow_.Tensor", "PowBackward1", ("self", "exponent"), pow_tensor, mutates="self")
    for name, (node, formula) in UNARY.items():
        r(lib, name, node, ("self",), formula)
        r(lib, f"{name}_", node, ("self",), formula, mutates="self")
    # comparisons in place (x.gt_(0)): the gradient is zeros of each input (at::zeros of its TypeAndSize)
    for c in ("eq", "ne", "lt", "le", "gt", "ge"):
        node = c.capitalize()
        r(lib, f"{c}_.Scalar", f"{node}Backward0", ("self",), _zeros_of_self, mutates="self")
        r(lib, f"{c}_.Tensor", f"{node}Backward1", ("self", "other"), (_zeros_of_self, _zeros_of_other),
          mutates="self")
    r(lib, "clamp", "ClampBackward1", ("self",), _clamp_backward)
    r(lib, "clamp_", "ClampBackward1", ("self",), _clamp_backward, mutates="self")
    r(lib, "clamp_min", "ClampMinBackward0", ("self",), _clamp_min_self)
    r(lib, "clamp_min_", "ClampMinBackward0", ("self",), _clamp_min_self, mutates="self")
    r(lib, "clamp.Tensor", "ClampBackward0", ("self", "min", "max"), _clamp_tensor_backward)
    r(lib, "clamp_.Tensor", "ClampBackward0", ("self", "min", "max"), _clamp_tensor_backward, mutates="self")
    clamp_min_tensor = (_clamp_min_self, _clamp_min_min)
    r(lib, "clamp_min.Tensor", "ClampMinBackward1", ("self", "min"), clamp_min_tensor)
    r(lib, "clamp_min_.Tensor", "ClampMinBackward1", ("self", "min"), clamp_min_tensor, mutates="self")
    r(lib, "clamp_max", "ClampMaxBackward0", ("self",), _clamp_max_self)
    r(lib, "clamp_max_", "ClampMaxBackward0", ("self",), _clamp_max_self, mutates="self")
    clamp_max_tensor = (_clamp_max_self, _clamp_max_max)
    r(lib, "clamp_max.Tensor", "ClampMaxBackward1", ("self", "max"), clamp_max_tensor)
    r(lib, "clamp_max_.Tensor", "ClampMaxBackward1", ("self", "max"), clamp_max_tensor, mutates="self")
    r(lib, "maximum", "MaximumBackward0", ("self", "other"),
      (lambda g, self, other: _extremum_backward(g, self, other, A.lt.Tensor),
       lambda g, self, other: _extremum_backward(g, self, other, A.gt.Tensor)))
    r(lib, "minimum", "MinimumBackward0", ("self", "other"),
      (lambda g, self, other: _extremum_backward(g, self, other, A.gt.Tensor),
       lambda g, self, other: _extremum_backward(g, self, other, A.lt.Tensor)))
    r(lib, "rsub.Tensor", "RsubBackward0", ("self", "other"),
      (lambda g, alpha: _scale(_neg(g), alpha), lambda g: g))
    r(lib, "rsub.Scalar", "RsubBackward1", ("self",), lambda g, alpha: _scale(_neg(g), alpha))
    r(lib, "reciprocal", "ReciprocalBackward0", ("self",), _reciprocal_backward)
    div_mode = (_div_mode_self, _div_mode_other)
    r(lib, "div.Tensor_mode", "DivBackward2", ("self", "other"), div_mode)
    r(lib, "div_.Tensor_mode", "DivBackward2", ("self", "other"), div_mode, mutates="self")
    r(lib, "div.Scalar_mode", "DivBackward3", ("self",), _div_mode_self)
    r(lib, "div_.Scalar_mode", "DivBackward3", ("self",), _div_mode_self, mutates="self")
    r(lib, "where.self", "WhereBackward0", ("self", "other"),
      (lambda g, condition: A.where.self(condition, g, _zero_scalar(g)),
       lambda g, condition: A.where.self(condition, _zero_scalar(g), g)))

    # reductions
    r(lib, "sum", "SumBackward0", ("self",), lambda g, self_shape: _expand(g, list(self_shape)))
    r(lib, "sum.dim_IntList", "SumBackward1", ("self",), _sum_backward_dims)
    r(lib, "mean", "MeanBackward0", ("self",), _mean_all_backward)
    r(lib, "mean.dim", "MeanBackward1", ("self",), _mean_backward)
    r(lib, "amax", "AmaxBackward0", ("self",), _amax_backward)
    r(lib, "max", "MaxBackward1", ("self",), _max_backward)
    r(lib, "max.dim", "MaxBackward0", ("self",),
      lambda g, self_shape, dim, keepdim, result1: _max_dim_backward(g, self_shape, dim, keepdim, result1),
      differentiable_outputs=(0,))

    # linear algebra, softmax, losses
    r(lib, "mm", "MmBackward0", ("self", "mat2"),
      (lambda g, mat2, self_shape, self_strides: mm_mat1_backward(g, mat2, self_shape, self_strides),
       lambda g, self, mat2_shape, mat2_strides: mm_mat2_backward(g, self, mat2_shape, mat2_strides)))
    r(lib, "bmm", "BmmBackward0", ("self", "mat2"),
      (lambda g, mat2: A.bmm.default(g, A.transpose.int(mat2, 1, 2)),
       lambda g, self: A.bmm.default(A.transpose.int(self, 1, 2), g)))
    r(lib, "_softmax", "SoftmaxBackward0", ("self",),
      # input_dtype is self's, which is the result's here (half_to_float is CUDA-only)
      lambda g, result, dim: A._softmax_backward_data.default(g, result, dim, result.dtype))
    r(lib, "_log_softmax", "LogSoftmaxBackward0", ("self",),
      # input_dtype is self's, which is the result's here (half_to_float is CUDA-only)
      lambda g, result, dim: A._log_softmax_backward_data.default(g, result, dim, result.dtype))
    r(lib, "mse_loss", "MseLossBackward0", ("self", "target"), _MSE)
    r(lib, "nll_loss_forward", "NllLossBackward0", ("self",),
      lambda g, self, target, weight, reduction, ignore_index, result1:
      A.nll_loss_backward.default(g, self, target, weight, reduction, ignore_index, result1),
      differentiable_outputs=(0,))

    # joining, copying, conversion
    r(lib, "cat", "CatBackward0", ("tensors",), _cat_backward)
    r(lib, "stack", "StackBackward0", ("tensors",), _stack_backward)
    r(lib, "clone", "CloneBackward0", ("self",), lambda g: g)
    r(lib, "_unsafe_view", "UnsafeViewBackward0", ("self",),
      lambda g, self_shape: A.reshape.default(g, list(self_shape)))
    r(lib, "_to_copy", "ToCopyBackward0", ("self",), _to_copy_backward)
    r(lib, "copy_", "CopyBackwards", ("self", "src"),
      (lambda g: A.zeros_like.default(g, memory_format=_CONTIGUOUS), lambda g: g), mutates="self")
    r(lib, "fill_.Scalar", "FillBackward2", ("self",), lambda g: _zeros_like(g), mutates="self")
    r(lib, "fill_.Tensor", "FillBackward3", ("self", "value"),
      (lambda g: _zeros_like(g), lambda g: A.sum.default(g)), mutates="self")
    r(lib, "zero_", "ZeroBackward0", ("self",), lambda g: _zeros_like(g), mutates="self")

    # views
    for name, (node, formula) in VIEWS.items():
        r(lib, name, node, ("self",), formula, view=True)

    for name in NONDIFFERENTIABLE:
        register_nondifferentiable(lib, f"aten::{name}")
    from ..dispatcher import get_dispatcher
    from ..native.torch_keys import TORCH_KEYS

    for op in get_dispatcher().operators():
        if (op.qualname.startswith("aten::") and op.overload_name == "out" and op.schema is not None
                and "A" in TORCH_KEYS.get(op.qualname[6:], "A")):  # not the CompositeImplicitAutograd ones
            register_out_kernel(lib, op.qualname)


def _reciprocal_backward(g: Any, result: Any) -> Any:
    """``-grad * (result * result)``: the right operand first."""
    square = _mul(result, result)
    return _mul(_neg(g), square)


def _sum_backward_dims(g: Any, self_shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    return _sum_backward(g, self_shape, dim, keepdim)
