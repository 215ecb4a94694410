"""Derivative formulas of the core operators, registered at the Autograd alias key.

Mirrors ``tools/autograd/derivatives.yaml``: one formula per operator overload (or one per
differentiable input), written with dispatched operators (so they are themselves
differentiable), and node names as torch prints them (``AddBackward0``, ``MulBackward0``, ...).
See ``kernels.Derivative`` for how a formula's parameter names choose what is saved. Broadcast
gradients are summed back to their input's shape, and cast to its dtype, by the node itself
(the engine's ``validate_outputs``), so formulas need not call ``sum_to``.

Operators with a CompositeImplicitAutograd decomposition (matmul, reshape, softmax.int, ...)
need no entry: they decompose into operators that have one.
"""

from __future__ import annotations

import math
from typing import Any

from .._composites import wrapped_number
from ..aten import COMPARISONS, ELEMENTWISE_UNARY
from ..dtypes import int64
from .._library import Library
from ..ops import aten
from .kernels import (
    as_strided_backward,
    register_derivative,
    register_nondifferentiable,
    register_out_kernel,
    sum_to,
)

__all__ = ["register", "sum_to"]

A = aten
_TWO = wrapped_number(2)  # grad / 2, as torch's C++ formula writes it: div.Tensor with a wrapped 2


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
        result = A.t.default(A.mm.default(mat2, A.t.default(grad)))
    else:
        result = A.mm.default(grad, A.t.default(mat2))
    return result if alpha == 1 else A.mul.Scalar(result, alpha)


def mm_mat2_backward(grad: Any, mat1: Any, mat2_shape: Any, mat2_strides: Any, alpha: Any = 1) -> Any:
    """``mm_mat2_backward``: ``(grad.t() @ mat1).t()`` for a column-major ``mat2`` (``linear``'s ``W.t()``).

    Else ``mat1.t() @ grad``.
    """
    if _column_major(mat2_shape, mat2_strides):
        result = A.t.default(A.mm.default(A.t.default(grad), mat1))
    else:
        result = A.mm.default(A.t.default(mat1), grad)
    return result if alpha == 1 else A.mul.Scalar(result, alpha)

def _scale(grad: Any, alpha: Any) -> Any:
    return grad if alpha == 1 else A.mul.Scalar(grad, alpha)


def _zeros_like(g: Any) -> Any:
    return A.zeros.default(list(g.shape), dtype=g.dtype, device=g.device)


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


def _sum_backward(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """``sum_backward``: a full reduction (no dims, or none listed) expands the 0-d grad as is."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return A.expand.default(g, list(shape))
    return A.expand.default(_restore(g, shape, dim, keepdim), list(shape))


def _sign(x: Any, g: Any) -> Any:
    """``g * sgn(x)`` with comparisons (no sign operator in the core library)."""
    return A.sub.Tensor(A.mul.Tensor(g, A.gt.Scalar(x, 0)), A.mul.Tensor(g, A.lt.Scalar(x, 0)))


def _clamp_mask(self: Any, lo: Any, hi: Any) -> Any:
    mask = None if lo is None else A.ge.Scalar(self, lo)
    if hi is not None:
        upper = A.le.Scalar(self, hi)
        mask = upper if mask is None else A.mul.Tensor(mask, upper)
    return mask


def _clamp_backward(g: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002 - schema names
    mask = _clamp_mask(self, min, max)
    return g if mask is None else A.where.self(mask, g, _zero_scalar(g))


def _clamp_tensor_self(g: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002 - schema names
    """``clamp_backward`` with tensor bounds: the gradient passes where lo <= self <= hi."""
    if min is not None and max is not None:
        mask = A.mul.Tensor(A.ge.Tensor(self, min), A.le.Tensor(self, max))
    elif min is not None:
        mask = A.ge.Tensor(self, min)
    elif max is not None:
        mask = A.le.Tensor(self, max)
    else:
        return g
    return A.where.self(mask, g, _zero_scalar(g))


def _clamp_tensor_min(g: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    """``clamp_backward_min_max``, min: where self < min (and min < max when both are given)."""
    mask = A.lt.Tensor(self, min)
    if max is not None:
        mask = A.mul.Tensor(mask, A.lt.Tensor(min, max))
    return A.where.self(mask, g, _zero_scalar(g))


def _clamp_tensor_max(g: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    """``clamp_backward_min_max``, max: where self > max (or max < min when both are given)."""
    mask = A.gt.Tensor(self, max)
    if min is not None:
        mask = A.add.Tensor(mask, A.lt.Tensor(max, min))  # bool + bool: logical or
    return A.where.self(mask, g, _zero_scalar(g))


def _extremum_backward(g: Any, self: Any, other: Any, loses: Any) -> Any:
    """``maximum``/``minimum``: ties split the gradient in half; the losing side gets none."""
    split = A.where.self(A.eq.Tensor(self, other), A.div.Tensor(g, _TWO), g)
    return A.where.self(loses(self, other), _zero_scalar(g), split)


def _div_mode_self(g: Any, other: Any, rounding_mode: Any, self_dtype: Any) -> Any:
    """``div_tensor_self_backward``: zero with a rounding mode (a step function), else g / other."""
    if rounding_mode is not None:
        return A.zeros.default(list(g.shape), dtype=self_dtype, device=g.device)
    if hasattr(other, "_key_bits"):
        return A.div.Tensor(g, other)
    return A.div.Tensor(g, wrapped_number(other))


def _div_mode_other(g: Any, self: Any, other: Any, rounding_mode: Any) -> Any:
    if rounding_mode is not None:
        return A.zeros.default(list(g.shape), dtype=other.dtype, device=g.device)
    return _div_other(g, self, other)


def _unsqueeze_to(g: Any, dim: Any, self_shape: tuple[int, ...]) -> Any:
    """``unsqueeze_to(grad, dims, sizes)``: put back each listed dimension that had size 1."""
    nd = len(self_shape)
    for d in sorted(_wrap(d, nd) for d in dim):
        if nd and self_shape[d] == 1:
            g = A.unsqueeze.default(g, d)
    return g


def _pow_self(g: Any, self: Any, exponent: Any) -> Any:
    """``pow_backward_self``: exponent * self^(exponent-1), zero where the exponent is 0."""
    if not hasattr(exponent, "_key_bits"):
        if exponent == 0:
            return _zeros_like(g)
        return A.mul.Tensor(g, A.mul.Scalar(A.pow.Tensor_Scalar(self, exponent - 1), exponent))
    value = A.mul.Tensor(g, A.mul.Tensor(exponent, A.pow.Tensor_Tensor(self, A.sub.Scalar(exponent, 1))))
    return A.where.self(A.eq.Scalar(exponent, 0), _zero_scalar(value), value)


def _pow_exponent(g: Any, self: Any, exponent: Any, result: Any) -> Any:
    """``pow_backward_exponent``: result * log(self), zero where self == 0 and exponent >= 0."""
    if not hasattr(self, "_key_bits"):  # pow.Scalar: a number base
        if self == 0:
            value = A.mul.Scalar(A.mul.Tensor(g, result), -math.inf)
            return A.where.self(A.ge.Scalar(exponent, 0), _zero_scalar(value), value)
        log = math.log(self) if self > 0 else math.nan
        return A.mul.Scalar(A.mul.Tensor(g, result), log)
    value = A.mul.Tensor(g, A.mul.Tensor(result, A.log.default(self)))
    zero_base = A.mul.Tensor(A.eq.Scalar(self, 0), A.ge.Scalar(exponent, 0))
    return A.where.self(zero_base, _zero_scalar(value), value)


def _div_other(g: Any, self: Any, other: Any) -> Any:
    return A.neg.default(A.mul.Tensor(g, A.div.Tensor(A.div.Tensor(self, other), other)))


def _max_dim_backward(g: Any, self_shape: tuple[int, ...], dim: int, keepdim: bool, indices: Any) -> Any:
    """``value_selecting_reduction_backward``: the gradient goes to the selected index."""
    nd = len(self_shape)
    if nd == 0:
        return g
    d = _wrap(dim, nd)
    if not keepdim:
        g = A.unsqueeze.default(g, d)
        indices = A.unsqueeze.default(indices, d)
    positions = A.arange.start_step(0, self_shape[d], 1, dtype=int64, device=g.device)
    positions = A.view.default(positions, [self_shape[d]] + [1] * (nd - d - 1))
    return A.mul.Tensor(g, A.eq.Tensor(indices, positions))


def _amax_backward(g: Any, self: Any, result: Any, dim: Any, keepdim: bool) -> Any:
    """Evenly split the gradient between the maxima (``scale_grad_by_count``)."""
    shape = tuple(self.shape)
    mask = A.eq.Tensor(self, _restore(result, shape, dim, keepdim))
    count = A.sum.dim_IntList(mask, _reduced_dims(dim, len(shape)), True)
    return A.div.Tensor(A.mul.Tensor(_restore(g, shape, dim, keepdim), mask), count)


def _max_backward(g: Any, self: Any, result: Any) -> Any:
    """``evenly_distribute_backward``."""
    mask = A.eq.Tensor(self, result)
    return A.div.Tensor(A.mul.Tensor(g, mask), A.sum.default(mask))


def _mean_backward(g: Any, self_shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    count = 1
    for d in _reduced_dims(dim, len(self_shape)):
        count *= self_shape[d] if self_shape else 1  # _safe_size: a 0-d input has one element
    return A.div.Scalar(_sum_backward(g, self_shape, dim, keepdim), count)


def _mse_backward(g: Any, self: Any, target: Any, reduction: int,
                  grad_input_mask: tuple[bool, bool]) -> tuple[Any, Any]:
    diff = A.sub.Tensor(self, target)
    norm = 2.0 / diff.numel() if reduction == 1 else 2.0
    grad_self = A.mul.Tensor(A.mul.Scalar(diff, norm), g)
    return (grad_self if grad_input_mask[0] else None,
            A.neg.default(grad_self) if grad_input_mask[1] else None)


def _cat_backward(g: Any, tensors_shape: list[tuple[int, ...]], dim: int) -> tuple[Any, ...]:
    nd = g.dim()
    d = _wrap(dim, nd)
    grads: list[Any] = []
    offset = 0
    for shape in tensors_shape:
        if len(shape) == 1 and shape[0] == 0 and nd != 1:  # legacy empty tensors are skipped
            grads.append(None)
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
    if not self_shape:
        return g
    d = _wrap(dim, len(self_shape))
    return A.unsqueeze.default(g, d) if self_shape[d] == 1 else g


def _select_backward(g: Any, self_shape: tuple[int, ...], dim: int, index: int) -> Any:
    result = _zeros_like_shape(g, self_shape)
    A.copy_.default(A.select.int(result, dim, index), g)
    return result


def _slice_backward(g: Any, self_shape: tuple[int, ...], dim: int, start: Any, end: Any, step: int) -> Any:
    result = _zeros_like_shape(g, self_shape)
    A.copy_.default(A.slice.Tensor(result, dim, start, end, step), g)
    return result


def _zeros_like_shape(g: Any, shape: tuple[int, ...]) -> Any:
    return A.zeros.default(list(shape), dtype=g.dtype, device=g.device)


def _to_copy_backward(g: Any, self_dtype: Any, self_device: Any) -> Any:
    if g.dtype is self_dtype and g.device == self_device:
        return g
    return A._to_copy.default(g, dtype=self_dtype, device=self_device)


def _sigmoid_backward(g: Any, result: Any) -> Any:
    return A.mul.Tensor(g, A.sub.Tensor(result, A.mul.Tensor(result, result)))


def _tanh_backward(g: Any, result: Any) -> Any:
    return A.mul.Tensor(g, A.add.Scalar(A.neg.default(A.mul.Tensor(result, result)), 1))


# --- the table ---------------------------------------------------------------------------------------
# unary ops: (node name, formula); the in-place variant uses the same formula (a saved ``self`` is
# then the value before the op, a saved ``result`` the value after it)
UNARY = {
    "neg": ("NegBackward0", lambda g: A.neg.default(g)),
    "abs": ("AbsBackward0", lambda g, self: _sign(self, g)),
    "exp": ("ExpBackward0", lambda g, result: A.mul.Tensor(g, result)),
    "log": ("LogBackward0", lambda g, self: A.div.Tensor(g, self)),
    "sqrt": ("SqrtBackward0", lambda g, result: A.div.Tensor(g, A.mul.Scalar(result, 2))),
    "sin": ("SinBackward0", lambda g, self: A.mul.Tensor(g, A.cos.default(self))),
    "cos": ("CosBackward0", lambda g, self: A.mul.Tensor(g, A.neg.default(A.sin.default(self)))),
    "tanh": ("TanhBackward0", _tanh_backward),
    "sigmoid": ("SigmoidBackward0", _sigmoid_backward),
    "relu": ("ReluBackward0", lambda g, result: A.threshold_backward.default(g, result, 0)),
}
assert set(UNARY) == set(ELEMENTWISE_UNARY)

# binary ops: overload -> (node name, per-input formulas (self, other))
_ADD = (lambda g: g, lambda g, alpha: _scale(g, alpha))
_SUB = (lambda g: g, lambda g, alpha: A.neg.default(_scale(g, alpha)))
_MUL = (lambda g, other: A.mul.Tensor(g, other), lambda g, self: A.mul.Tensor(g, self))
_DIV = (lambda g, other: A.div.Tensor(g, other), _div_other)
BINARY = {
    "add.Tensor": ("AddBackward0", _ADD),
    "sub.Tensor": ("SubBackward0", _SUB),
    "mul.Tensor": ("MulBackward0", _MUL),
    "div.Tensor": ("DivBackward0", _DIV),
}
BINARY_SCALAR = {
    "add.Scalar": ("AddBackward1", lambda g: g),
    "sub.Scalar": ("SubBackward1", lambda g: g),
    "mul.Scalar": ("MulBackward1", lambda g, other: A.mul.Scalar(g, other)),
    "div.Scalar": ("DivBackward1", lambda g, other: A.div.Scalar(g, other)),
}

VIEWS = {
    "view": ("ViewBackward0", lambda g, self_shape: A.reshape.default(g, list(self_shape))),
    "_reshape_alias": ("ReshapeAliasBackward0", lambda g, self_shape: A.reshape.default(g, list(self_shape))),
    "t": ("TBackward0", lambda g: A.t.default(g)),
    "transpose.int": ("TransposeBackward0", lambda g, dim0, dim1: A.transpose.int(g, dim0, dim1)),
    "permute": ("PermuteBackward0", lambda g, dims: A.permute.default(g, _inverse_permutation(dims))),
    "expand": ("ExpandBackward0", lambda g, self_shape: sum_to(g, self_shape)),
    "squeeze": ("SqueezeBackward0", lambda g, self_shape: A.reshape.default(g, list(self_shape))),
    "squeeze.dim": ("SqueezeBackward1", _squeeze_dim_backward),
    "squeeze.dims": ("SqueezeBackward2", _unsqueeze_to),
    "unsqueeze": ("UnsqueezeBackward0", lambda g, dim: A.squeeze.dim(g, _wrap(dim, g.dim()))),
    "select.int": ("SelectBackward0", _select_backward),
    "slice.Tensor": ("SliceBackward0", _slice_backward),
    "as_strided": ("AsStridedBackward0",
                   lambda g, self_geometry, size, stride, storage_offset:
                   as_strided_backward(g, self_geometry, size, stride, storage_offset)),
    "alias": ("AliasBackward0", lambda g: g),
}

# factories have an Autograd kernel in torch too: it only redispatches (no tensor input to differentiate)
FACTORIES = ("empty.memory_format", "empty_strided", "zeros", "ones", "full", "arange", "arange.start",
             "arange.start_step", "linspace", "rand", "randn", "scalar_tensor")
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
    r(lib, "clamp", "ClampBackward1", ("self",), _clamp_backward)
    r(lib, "clamp_", "ClampBackward1", ("self",), _clamp_backward, mutates="self")
    clamp_min = (lambda g, self, min: A.where.self(A.ge.Scalar(self, min), g, _zero_scalar(g)))  # noqa: A006
    r(lib, "clamp_min", "ClampMinBackward0", ("self",), clamp_min)
    r(lib, "clamp_min_", "ClampMinBackward0", ("self",), clamp_min, mutates="self")
    clamp_tensor = (_clamp_tensor_self, _clamp_tensor_min, _clamp_tensor_max)
    r(lib, "clamp.Tensor", "ClampBackward0", ("self", "min", "max"), clamp_tensor)
    r(lib, "clamp_.Tensor", "ClampBackward0", ("self", "min", "max"), clamp_tensor, mutates="self")
    clamp_min_tensor = (lambda g, self, min: A.where.self(A.ge.Tensor(self, min), g, _zero_scalar(g)),  # noqa: A006
                        lambda g, self, min: A.where.self(A.lt.Tensor(self, min), g, _zero_scalar(g)))  # noqa: A006
    r(lib, "clamp_min.Tensor", "ClampMinBackward1", ("self", "min"), clamp_min_tensor)
    r(lib, "clamp_min_.Tensor", "ClampMinBackward1", ("self", "min"), clamp_min_tensor, mutates="self")
    r(lib, "maximum", "MaximumBackward0", ("self", "other"),
      (lambda g, self, other: _extremum_backward(g, self, other, A.lt.Tensor),
       lambda g, self, other: _extremum_backward(g, self, other, A.gt.Tensor)))
    r(lib, "minimum", "MinimumBackward0", ("self", "other"),
      (lambda g, self, other: _extremum_backward(g, self, other, A.gt.Tensor),
       lambda g, self, other: _extremum_backward(g, self, other, A.lt.Tensor)))
    r(lib, "rsub.Tensor", "RsubBackward0", ("self", "other"),
      (lambda g, alpha: A.neg.default(_scale(g, alpha)), lambda g: g))
    r(lib, "rsub.Scalar", "RsubBackward1", ("self",), lambda g, alpha: A.neg.default(_scale(g, alpha)))
    r(lib, "reciprocal", "ReciprocalBackward0", ("self",),
      lambda g, result: A.neg.default(A.mul.Tensor(g, A.mul.Tensor(result, result))))
    div_mode = (_div_mode_self, _div_mode_other)
    r(lib, "div.Tensor_mode", "DivBackward2", ("self", "other"), div_mode)
    r(lib, "div_.Tensor_mode", "DivBackward2", ("self", "other"), div_mode, mutates="self")
    r(lib, "div.Scalar_mode", "DivBackward3", ("self",), _div_mode_self)
    r(lib, "div_.Scalar_mode", "DivBackward3", ("self",), _div_mode_self, mutates="self")
    r(lib, "where.self", "WhereBackward0", ("self", "other"),
      (lambda g, condition: A.where.self(condition, g, _zero_scalar(g)),
       lambda g, condition: A.where.self(condition, _zero_scalar(g), g)))

    # reductions
    r(lib, "sum", "SumBackward0", ("self",), lambda g, self_shape: A.expand.default(g, list(self_shape)))
    r(lib, "sum.dim_IntList", "SumBackward1", ("self",), _sum_backward_dims)
    r(lib, "mean", "MeanBackward0", ("self",), lambda g, self_shape: _mean_backward(g, self_shape, None, False))
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
      lambda g, result, dim: A.mul.Tensor(result, A.sub.Tensor(
          g, A.sum.dim_IntList(A.mul.Tensor(g, result), [dim], True))))
    r(lib, "_log_softmax", "LogSoftmaxBackward0", ("self",),
      # input_dtype is self's, which is the result's here (half_to_float is CUDA-only)
      lambda g, result, dim: A._log_softmax_backward_data.default(g, result, dim, result.dtype))
    r(lib, "mse_loss", "MseLossBackward0", ("self", "target"), _mse_backward)
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
    r(lib, "copy_", "CopyBackwards", ("self", "src"), (lambda g: _zeros_like(g), lambda g: g), mutates="self")
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


def _sum_backward_dims(g: Any, self_shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    return _sum_backward(g, self_shape, dim, keepdim)
