"""Decompositions: aten operators written as calls of other aten operators, for ``make_fx``.

Mirrors ``torch/_decomp/decompositions.py`` and the parts of ``torch/_refs/__init__.py`` and
``torch/_refs/nn/functional/__init__.py`` that torch's core ATen table uses
(``torch._decomp.core_aten_decompositions``), with ``out_wrapper`` and ``register_inplace`` of
``torch/_prims_common/wrappers.py`` and ``torch/_decomp/decompositions.py`` modelled once each
(``_out_variant``, ``_inplace_variant``).
Invariant: every entry of ``core_aten_decompositions()`` is an overload torch's core table also
decomposes, and under ``make_fx(f, decomposition_table=core_aten_decompositions())`` it records
the calls torch records for the same ``f`` (targets with their overloads, in order) and computes
the values the operator's own kernel computes. Each function calls operators through
``dispatchcore.ops``, so under a dispatch mode each call is seen (and decomposed again when the
table has it). torch's ``pw_cast_for_opmath`` (float16 inputs computed in float32) is not
modelled for the pointwise decompositions: they record torch's calls for float32 and float64.

Example:
    >>> import dispatchcore as dc
    >>> from dispatchcore.decompositions import core_aten_decompositions
    >>> from dispatchcore.fx import make_fx
    >>> gm = make_fx(lambda x: x.frac(), core_aten_decompositions())(dc.ones(2))
    >>> [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    ['aten.trunc.default', 'aten.sub.Tensor']
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes as _dtypes
from .layouts import contiguous_format, strided
from .native.reductions import shift_source
from .native.transformations import rot90 as _rot90
from .ops import aten
from .shapes import broadcast_shapes, wrap_dim
from .tensor import Tensor

__all__ = ["core_aten_decompositions"]

_MEAN, _SUM = 1, 2  # at::Reduction (None is 0)


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    """The loss reduced as torch's ``apply_loss_reduction`` does: ``mean()``/``sum()``, or as is."""
    if reduction == _MEAN:
        return aten.mean.default(loss)
    return aten.sum.default(loss) if reduction == _SUM else loss


def _zero(like: Tensor, value: Any = 0) -> Tensor:
    """The scalar a ``where(mask, t, 0)`` of torch's refs lowers to: a ``scalar_tensor`` of ``like``'s dtype."""
    return aten.scalar_tensor.default(value, dtype=like.dtype, device=like.device)


def _scalar_full(like: Tensor, value: Any) -> Tensor:
    """``like.new_full((), value)``, which torch's table lowers to ``full``."""
    return aten.full.default([], value, dtype=like.dtype, device=like.device)


# --- views, reductions and factories --------------------------------------------------------------
def _t(self: Tensor) -> Tensor:
    return aten.transpose.int(self, 0, 0 if self.dim() < 2 else 1)


def _transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    ndim = max(self.dim(), 1)
    dims = list(range(self.dim()))
    if dims:
        dim0, dim1 = dim0 % ndim, dim1 % ndim
        dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return aten.permute.default(self, dims)


def _detach(self: Tensor) -> Tensor:
    return aten.alias.default(self)


def _reshape_alias(self: Tensor, size: Sequence[int], stride: Sequence[int]) -> Tensor:
    return aten.view.default(self, list(size))


def _squeeze(self: Tensor) -> Tensor:
    return aten.squeeze.dims(self, list(range(self.dim())))


def _squeeze_dim(self: Tensor, dim: int) -> Tensor:
    return aten.squeeze.dims(self, [dim])


def _split(self: Tensor, split_size: int, dim: int = 0) -> Any:
    size = self.shape[dim]
    if size == 0:
        return (aten.detach.default(self),)
    chunks = (size + split_size - 1) // split_size
    sizes = [split_size] * chunks
    sizes[-1] = split_size - (split_size * chunks - size)
    return aten.split_with_sizes.default(self, sizes, dim)


def _unbind(self: Tensor, dim: int = 0) -> Any:
    dim = dim % max(self.dim(), 1)
    # torch.tensor_split(t, n, dim): one slice per index, then each squeezed
    pieces = [aten.slice.Tensor(self, dim, i, i + 1) for i in range(self.shape[dim])]
    return tuple(aten.squeeze.dims(p, [dim]) for p in pieces)


def _stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    ndim = tensors[0].dim()
    wrapped = dim % (ndim + 1)
    if wrapped < ndim:
        sizes = list(tensors[0].shape)
        sizes.insert(wrapped, len(tensors))
        return aten.view.default(aten.cat.default(list(tensors), wrapped), sizes)
    return aten.cat.default([aten.unsqueeze.default(t, wrapped) for t in tensors], dim)


def _sum(self: Tensor, *, dtype: Any = None) -> Tensor:
    return aten.sum.dim_IntList(self, [], dtype=dtype)


def _dot(self: Tensor, other: Tensor) -> Tensor:
    return aten.sum.default(aten.mul.Tensor(self, other))


def _all(self: Tensor) -> Tensor:
    return aten.logical_not.default(aten.any.dims(aten.logical_not.default(self)))


def _all_dim(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    return aten.logical_not.default(aten.any.dim(aten.logical_not.default(self), dim, keepdim))


def _all_dims(self: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return aten.logical_not.default(aten.any.dims(aten.logical_not.default(self), dim, keepdim))


def _norm(self: Tensor, p: Any = 2, dim: Sequence[int] | None = None, keepdim: bool = False, *,
          dtype: Any = None) -> Tensor:
    p = 2.0 if p is None else p
    return aten.linalg_vector_norm.default(self, p, dim, keepdim, dtype=dtype)


def _norm_scalar_opt_dtype(self: Tensor, p: Any, *, dtype: Any) -> Tensor:
    return _norm(self, p, None, False, dtype=dtype)


def _logsumexp(self: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
    dim = list(dim)
    if self.numel() == 0:
        return aten.log.default(aten.sum.dim_IntList(aten.exp.default(self), dim, keepdim))
    maxes = aten.amax.default(shift_source(self), dim, True)  # complex: the real part's
    maxes = aten.masked_fill.Scalar(maxes, aten.eq.Scalar(aten.abs.default(maxes), math.inf), 0.0)
    squeezed = maxes if keepdim else aten.squeeze.dims(maxes, dim)
    total = aten.sum.dim_IntList(aten.exp.default(aten.sub.Tensor(self, maxes)), dim, keepdim)
    return aten.add.Tensor(aten.log.default(total), squeezed)


def _filled_like(value: int) -> Callable[..., Tensor]:
    def like(self: Tensor, **kwargs: Any) -> Tensor:
        return aten.full_like.default(self, value, **kwargs)

    like.__name__ = "ones_like" if value else "zeros_like"
    return like


_CPU = _dtypes.device("cpu")


def _filled(value: int) -> Callable[..., Tensor]:
    def factory(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                pin_memory: Any = None) -> Tensor:
        # torch's refs resolve every option before calling full (the default dtype, strided, the CPU)
        return aten.full.default(size, value, dtype=_dtypes.get_default_dtype() if dtype is None else dtype,
                                 layout=strided if layout is None else layout,
                                 device=_CPU if device is None else device, pin_memory=bool(pin_memory))

    factory.__name__ = "ones" if value else "zeros"
    return factory


def _new_filled(value: int) -> Callable[..., Tensor]:
    def new(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
            pin_memory: Any = None) -> Tensor:
        return aten.full.default(size, value, dtype=dtype or self.dtype, device=device or self.device)

    new.__name__ = "new_ones" if value else "new_zeros"
    return new


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Tensor:
    return aten.full.default(size, fill_value, dtype=dtype or self.dtype, device=device or self.device)


def _new_empty(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None) -> Tensor:
    return aten.empty.memory_format(list(size), dtype=dtype or self.dtype, device=device or self.device)


def _arange(end: Any, **kwargs: Any) -> Tensor:
    return aten.arange.start_step(0, end, **kwargs)


def _arange_start(start: Any, end: Any, **kwargs: Any) -> Tensor:
    return aten.arange.start_step(start, end, **kwargs)


def _eye(n: int, m: int | None = None, *, dtype: Any = None, layout: Any = None, device: Any = None,
         pin_memory: Any = None) -> Tensor:
    """``arange(n)[:, None] == arange(m)`` in a small integer dtype, cast to ``dtype`` (torch's ref).

    torch picks the smallest of uint8, uint16, int32, int64 that holds ``max(n, m)``; dispatchcore has
    no uint16, so 256 to 65535 take int32 (torch's own CPU arange refuses uint16 there).
    """
    m = n if m is None else m
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    largest = max(n, m)
    small = _dtypes.uint8 if largest <= 255 else _dtypes.int32 if largest <= 2**31 - 1 else _dtypes.int64
    rows = aten.arange.start_step(0, n, dtype=small, device=device)
    columns = aten.arange.start_step(0, m, dtype=small, device=device)
    cond = aten.eq.Tensor(aten.unsqueeze.default(rows, -1), columns)
    dtype = _dtypes.get_default_dtype() if dtype is None else dtype
    return cond if dtype is _dtypes.bool_ else aten._to_copy.default(cond, dtype=dtype)  # .to(): no copy to itself


def _linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None) -> Tensor:
    """``steps`` points: an integer ``arange`` stepped from ``start`` below the middle, from ``end`` above."""
    dtype = dtype or _dtypes.get_default_dtype()
    if steps == 0:
        return aten.full.default([0], 0, dtype=dtype, device=device)
    if steps == 1:
        return aten.full.default([1], start, dtype=dtype, device=device)
    positions = aten.arange.start_step(0, steps, device=device)
    if dtype.is_floating_point:  # computed in the dtype, half precision in float32
        computation = _dtypes.float32 if dtype in (_dtypes.float16,) else dtype
    else:
        computation = _dtypes.int64

    def cast(t: Tensor) -> Tensor:
        return aten._to_copy.default(t, dtype=computation) if t.dtype != computation else t

    step = (end - start) / (steps - 1)
    lower = aten.lt.Scalar(positions, steps / 2)
    from_start = aten.add.Tensor(aten.mul.Tensor(cast(positions), step), start)
    from_end = aten.sub.Tensor(end, aten.mul.Tensor(cast(aten.sub.Tensor(steps - 1, positions)), step))
    out = aten.where.self(lower, from_start, from_end)
    return aten._to_copy.default(out, dtype=dtype) if out.dtype != dtype else out


def _logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Tensor:
    """Torch's ref: ``base ** linspace(start, end, steps)`` in float64, then cast to ``dtype``.

    For an integral dtype, float ends are truncated first.
    """
    dtype = dtype or _dtypes.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex or dtype is _dtypes.bool_):
        start = int(start) if isinstance(start, float) else start
        end = int(end) if isinstance(end, float) else end
    if base < 0:
        raise NotImplementedError("logspace with a negative base (torch's ref raises NotImplementedError too)")
    powers = aten.pow.Scalar(base, aten.linspace.default(start, end, steps, dtype=_dtypes.float64, device=device))
    return powers if dtype is _dtypes.float64 else aten._to_copy.default(powers, dtype=dtype)


def _fill_scalar(self: Tensor, value: Any) -> Tensor:
    return aten.full_like.default(self, value)


def _fill_tensor(self: Tensor, value: Tensor) -> Tensor:
    return aten.copy.default(self, value)


def _zero_(self: Tensor) -> Tensor:
    return aten.copy_.default(self, aten.full_like.default(self, 0))


# --- pointwise -------------------------------------------------------------------------------------
def _clamp_min(self: Tensor, min: Any) -> Tensor:
    return aten.clamp.default(self, min)


def _clamp_min_tensor(self: Tensor, min: Tensor) -> Tensor:
    return aten.clamp.Tensor(self, min)


def _clamp_max(self: Tensor, max: Any) -> Tensor:
    return aten.clamp.default(self, None, max)


def _clamp_max_tensor(self: Tensor, max: Tensor) -> Tensor:
    return aten.clamp.Tensor(self, None, max)


def _floor_divide(self: Tensor, other: Any) -> Tensor:
    return aten.div.Tensor_mode(self, other, rounding_mode="floor")


def _frac(self: Tensor) -> Tensor:
    return aten.sub.Tensor(self, aten.trunc.default(self))


def _sgn(self: Tensor) -> Tensor:
    return aten.sign.default(self)


def _to_float(a: Tensor) -> Tensor:
    """An integral or bool tensor cast to the default dtype (torch's refs' INT_TO_FLOAT promotion)."""
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return a
    return aten._to_copy.default(a, dtype=_dtypes.get_default_dtype())


def _deg2rad(a: Tensor) -> Tensor:
    return aten.mul.Tensor(_to_float(a), math.pi / 180)


def _rad2deg(a: Tensor) -> Tensor:
    return aten.mul.Tensor(_to_float(a), 180 / math.pi)


def _heaviside(input: Tensor, values: Tensor) -> Tensor:
    """``where(input == 0, values, where(input < 0 or isnan(input), 0, 1))``, both broadcast first (torch's ref)."""
    shape = list(broadcast_shapes(tuple(input.shape), tuple(values.shape)))
    input, values = (t if list(t.shape) == shape else aten.expand.default(t, shape) for t in (input, values))
    is_zero = aten.eq.Scalar(input, 0)
    below = aten.logical_or.default(aten.lt.Scalar(input, 0), aten.isnan.default(input))
    one = aten.scalar_tensor.default(1, dtype=_dtypes.int64, device=input.device)
    zero = aten.scalar_tensor.default(0, dtype=_dtypes.int64, device=input.device)
    return aten.where.self(is_zero, values, aten.where.self(below, zero, one))


def _sinc(a: Tensor) -> Tensor:
    """``where(pi a == 0, 1, sin(pi a) / (pi a))``, an integral ``a`` cast to the default dtype first (torch's ref)."""
    a = aten.mul.Tensor(_to_float(a), math.pi)
    is_zero = aten.eq.Scalar(a, 0)
    ratio = aten.div.Tensor(aten.sin.default(a), a)
    return aten.where.self(is_zero, aten.scalar_tensor.default(1, dtype=a.dtype, device=a.device), ratio)


def _logaddexp_of(a: Tensor, b: Tensor, same_infinity: Callable[[], Tensor], power: Callable[[Tensor], Tensor],
                  scale: float | None) -> Tensor:
    """``max + log1p(power(min - max))``, scaled to base 2 for logaddexp2, as torch's refs write it.

    Where ``same_infinity()`` holds (both inputs the same infinity) the result is ``a`` itself.
    """
    mask = aten.ge.Tensor(a, b)
    max_, min_ = aten.where.self(mask, a, b), aten.where.self(mask, b, a)
    inf_mask = same_infinity()
    tail = aten.log1p.default(power(aten.sub.Tensor(min_, max_)))
    return aten.where.self(inf_mask, a, aten.add.Tensor(max_, tail if scale is None else aten.mul.Tensor(tail, scale)))


def _logaddexp(a: Tensor, b: Tensor) -> Tensor:
    def inf_mask() -> Tensor:
        not_finite = aten.logical_not.default(aten.isfinite.default(a))
        return aten.logical_and.default(not_finite, aten.eq.Tensor(a, b))
    return _logaddexp_of(a, b, inf_mask, aten.exp.default, None)


def _logaddexp2(a: Tensor, b: Tensor) -> Tensor:
    def inf_mask() -> Tensor:
        return aten.logical_and.default(aten.isinf.default(a), aten.eq.Tensor(a, b))
    return _logaddexp_of(a, b, inf_mask, aten.exp2.default, 1 / math.log(2))


def _isinf_of_sign(value: float) -> Callable[[Tensor], Tensor]:
    def isinf(self: Tensor) -> Tensor:
        if not self.dtype.is_floating_point:
            return aten.zeros_like.default(self, dtype=_dtypes.bool_)
        return aten.eq.Scalar(self, value)

    isinf.__name__ = "isposinf" if value > 0 else "isneginf"
    return isinf


def _lerp(start: Tensor, end: Tensor, weight: Any) -> Tensor:
    if not isinstance(weight, Tensor):
        weight = _scalar_full(start, weight)
    mask = aten.ge.Scalar(aten.abs.default(weight), 0.5)
    coeff = aten.where.self(mask, aten.sub.Tensor(weight, 1), weight)
    base = aten.where.self(mask, end, start)
    return aten.add.Tensor(aten.mul.Tensor(coeff, aten.sub.Tensor(end, start)), base)


def _masked_fill(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    return aten.where.self(mask, _zero(self, value), self)


def _index_fill(inplace: bool) -> Callable[..., Tensor]:
    """Torch's ref ``_index_fill``: the value expanded over the indexed slices, then ``index_copy`` as ``index_put``."""

    def index_fill(x: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
        if index.dim() > 1:
            raise RuntimeError(f"Index should have dimension 1 or 0 (got {index.dim()})")
        if isinstance(value, Tensor):
            if value.dim() != 0:
                raise RuntimeError(f"Only supports 0-dimensional value tensor. Got a tensor with {value.dim()} "
                                   "dimensions.")
        else:
            value = aten.scalar_tensor.default(value, dtype=x.dtype, device=x.device)
        zero_dim = x.dim() == 0
        y = aten.unsqueeze.default(x, 0) if zero_dim else x
        shape = list(y.shape)
        shape[dim] = index.numel()
        value = aten.expand.default(value, shape)
        # index_copy: a 0-d index as a vector, the slices selected at ``dim``
        index = aten.unsqueeze.default(index, 0) if index.dim() == 0 else index
        key: list[Tensor | None] = [None] * wrap_dim(dim, y.dim()) + [index]
        if inplace:
            aten.index_put_.default(y, key, value)
            return x
        out = aten.index_put.default(y, key, value)
        if zero_dim:
            return aten.clone.default(aten.squeeze.dims(out, [0]))
        if not out.is_contiguous():
            out = aten.clone.default(out, memory_format=contiguous_format)
        if out.stride() != x.stride() and _is_dense(x):
            # torch's prims.copy_strided: the result laid out with x's strides (clone(Preserve) would)
            strided = aten.empty_strided.default(list(x.shape), list(x.stride()), dtype=x.dtype, device=x.device)
            out = aten.copy_.default(strided, out)
        return out

    return index_fill


def _is_dense(t: Tensor) -> bool:
    from .shapes import is_non_overlapping_and_dense

    return is_non_overlapping_and_dense(tuple(t.shape), tuple(t.stride()))


def _masked_fill_tensor(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    if value.dtype != self.dtype:
        value = aten._to_copy.default(value, dtype=self.dtype)
    return aten.where.self(mask, value, self)


def _addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    return aten.add.Tensor(self, aten.mul.Tensor(aten.mul.Tensor(tensor1, value), tensor2))


def _addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    return aten.add.Tensor(self, aten.div.Tensor(aten.mul.Tensor(tensor1, value), tensor2))


def _rsub(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return aten.sub.Tensor(other, self, alpha=alpha) if alpha != 1 else aten.sub.Tensor(other, self)


def _xlogy(self: Tensor, other: Tensor) -> Tensor:
    zero = aten.eq.Scalar(self, 0)
    product = aten.mul.Tensor(self, aten.log.default(other))
    result = aten.where.self(zero, _zero(product, 0), product)
    return aten.where.self(aten.isnan.default(other), _zero(product, math.nan), result)


def _tril_mask(self: Tensor) -> Tensor:
    h, w = self.shape[-2:]
    columns = aten.unsqueeze.default(aten.arange.start_step(0, w, device=self.device), -2)
    rows = aten.unsqueeze.default(aten.arange.start_step(0, h, device=self.device), -1)
    return aten.sub.Tensor(columns, rows)


def _masked(mask: Tensor, self: Tensor) -> Tensor:
    """``self`` where ``mask``, else zero (torch's ``utils.mask_tensor``)."""
    if self.dtype == _dtypes.bool_:
        return aten.logical_and.default(mask, self)
    return aten.where.self(mask, self, _zero(self))


def _diag_embed(t: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Torch's ref: ``t`` (padded by ``|offset|`` zeros) moved to ``dim2``, masked by an ``arange`` equality."""
    rank = t.dim() + 1
    dim1, dim2 = wrap_dim(dim1, rank), wrap_dim(dim2, rank)
    if dim1 > dim2:  # exchanging the dimensions is the same as negating the offset
        dim1, dim2, offset = dim2, dim1, -offset
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    last = t.shape[-1]
    if offset != 0:
        pad_shape = [*t.shape[:-1], abs(offset)]
        zeros = aten.full.default(pad_shape, 0, dtype=t.dtype, device=t.device)
        t = aten.cat.default([zeros, t] if offset > 0 else [t, zeros], -1)
        last += abs(offset)
    t = aten.unsqueeze.default(t, dim1)
    order = [d for d in range(t.dim()) if d != t.dim() - 1]  # movedim(-1, dim2), lowered to permute
    order.insert(dim2, t.dim() - 1)
    t = aten.permute.default(t, order)
    columns = aten.arange.start_step(0, last, dtype=_dtypes.int64, device=t.device)
    rows = aten.arange.start_step(offset, last + offset, dtype=_dtypes.int64, device=t.device)
    cond = aten.eq.Tensor(columns, aten.unsqueeze.default(rows, -1))
    cond = aten.view.default(cond, [last if d in (dim1, dim2) else 1 for d in range(t.dim())])
    result = _masked(cond, t)
    return result if result.is_contiguous() else aten.clone.default(result, memory_format=contiguous_format)


def _trace(self: Tensor) -> Tensor:
    """Torch's ref: ``sum(diag(self))`` of a matrix."""
    if self.dim() != 2:
        raise RuntimeError(f"expected a matrix, but got tensor with dim {self.dim()}")
    return aten.sum.default(aten.diag.default(self))


def _diagonal_copy(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """Torch's ``_make_copy_from_view(aten.diagonal)``: the view, cloned contiguous."""
    return aten.clone.default(aten.diagonal.default(self, offset, dim1, dim2), memory_format=contiguous_format)


def _tril(self: Tensor, diagonal: int = 0) -> Tensor:
    return _masked(aten.le.Scalar(_tril_mask(self), diagonal), self)


def _triu(self: Tensor, diagonal: int = 0) -> Tensor:
    return _masked(aten.ge.Scalar(_tril_mask(self), diagonal), self)


# --- activations and their backwards ---------------------------------------------------------------
def _elu(self: Tensor, alpha: Any = 1.0, scale: Any = 1.0, input_scale: Any = 1.0) -> Tensor:
    """The ``elu`` of torch's ``_refs.nn.functional`` (``elu`` is not in the core table; ``elu_`` is)."""
    return aten.where.self(aten.gt.Scalar(self, 0), aten.mul.Tensor(self, scale),
                           aten.mul.Tensor(aten.expm1.default(aten.mul.Tensor(self, input_scale)), alpha * scale))


def _elu_backward(grad_output: Tensor, alpha: Any, scale: Any, input_scale: Any, is_result: bool,
                  self_or_result: Tensor) -> Tensor:
    negative = aten.le.Scalar(self_or_result, 0)
    if is_result:
        below = aten.mul.Tensor(aten.mul.Tensor(grad_output, input_scale),
                                aten.add.Tensor(self_or_result, alpha * scale))
    else:
        below = aten.mul.Tensor(aten.mul.Tensor(aten.mul.Tensor(grad_output, input_scale), alpha * scale),
                                aten.exp.default(aten.mul.Tensor(self_or_result, input_scale)))
    return aten.where.self(negative, below, aten.mul.Tensor(grad_output, scale))


_SQRT2 = 1.41421356237309504880
_SQRT1_2 = 0.70710678118654752440
_2_SQRTPI = 1.12837916709551257390


def _gelu_backward(grad: Tensor, self: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        beta, kappa = _SQRT2 * _2_SQRTPI * 0.5, 0.044715
        x_sq = aten.mul.Tensor(self, self)
        x_cube = aten.mul.Tensor(x_sq, self)
        inner = aten.mul.Tensor(aten.add.Tensor(self, aten.mul.Tensor(x_cube, kappa)), beta)
        tanh_inner = aten.tanh.default(inner)
        left = aten.mul.Tensor(self, 0.5)
        left_derivative = aten.mul.Tensor(aten.add.Tensor(tanh_inner, 1), 0.5)
        tanh_derivative = aten.sub.Tensor(1, aten.mul.Tensor(tanh_inner, tanh_inner))
        inner_derivative = aten.mul.Tensor(aten.add.Tensor(aten.mul.Tensor(x_sq, 3 * kappa), 1), beta)
        right_derivative = aten.mul.Tensor(aten.mul.Tensor(left, tanh_derivative), inner_derivative)
        return aten.mul.Tensor(grad, aten.add.Tensor(left_derivative, right_derivative))
    cdf = aten.mul.Tensor(aten.add.Tensor(aten.erf.default(aten.mul.Tensor(self, _SQRT1_2)), 1), 0.5)
    pdf = aten.mul.Tensor(aten.exp.default(aten.mul.Tensor(aten.mul.Tensor(self, self), -0.5)),
                          _2_SQRTPI * _SQRT1_2 * 0.5)
    return aten.mul.Tensor(grad, aten.add.Tensor(cdf, aten.mul.Tensor(self, pdf)))


def _leaky_relu_backward(grad_output: Tensor, self: Tensor, negative_slope: Any, self_is_result: bool) -> Tensor:
    return aten.where.self(aten.gt.Scalar(self, 0), grad_output, aten.mul.Tensor(grad_output, negative_slope))


def _softplus(self: Tensor, beta: Any = 1, threshold: Any = 20) -> Tensor:
    scaled = aten.mul.Tensor(self, beta) if beta != 1 else self
    rhs = aten.log1p.default(aten.exp.default(scaled))
    if beta != 1:
        rhs = aten.div.Tensor(rhs, beta)
    return aten.where.self(aten.gt.Scalar(scaled, threshold), self, rhs)


def _softplus_backward(grad_output: Tensor, self: Tensor, beta: Any, threshold: Any) -> Tensor:
    z = aten.exp.default(aten.mul.Tensor(self, beta))
    above = aten.gt.Scalar(aten.mul.Tensor(self, beta), threshold)
    return aten.where.self(above, grad_output,
                           aten.div.Tensor(aten.mul.Tensor(grad_output, z), aten.add.Tensor(z, 1.0)))


def _sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    return aten.mul.Tensor(grad_output, aten.mul.Tensor(output, aten.sub.Tensor(1, output)))


def _tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    return aten.mul.Tensor(grad_output, aten.sub.Tensor(1, aten.mul.Tensor(output, output)))


def _threshold_backward(grad_output: Tensor, self: Tensor, threshold: Any) -> Tensor:
    return aten.where.self(aten.le.Scalar(self, threshold), _zero(grad_output), grad_output)


def _silu(self: Tensor) -> Tensor:
    return aten.mul.Tensor(self, aten.sigmoid.default(self))


def _silu_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    sigmoid = aten.sigmoid.default(self)
    return aten.mul.Tensor(aten.mul.Tensor(grad_output, sigmoid),
                           aten.add.Tensor(aten.mul.Tensor(self, aten.sub.Tensor(1, sigmoid)), 1))


def _hardtanh_backward(grad_output: Tensor, self: Tensor, min_val: Any, max_val: Any) -> Tensor:
    outside = aten.bitwise_or.Tensor(aten.le.Scalar(self, min_val), aten.ge.Scalar(self, max_val))
    return aten.where.self(outside, _zero(grad_output, 0.0), grad_output)


def _log_sigmoid_forward(self: Tensor) -> tuple[Tensor, Tensor]:
    minimum = aten.minimum.default(aten.new_zeros.default(self, []), self)
    z = aten.exp.default(aten.neg.default(aten.abs.default(self)))
    buffer = aten.new_zeros.default(self, [0]) if self.device.type != "cpu" else z  # CPU saves z
    return aten.sub.Tensor(minimum, aten.log1p.default(z)), buffer


def _log_sigmoid_backward(grad_output: Tensor, self: Tensor, buffer: Tensor) -> Tensor:
    negative = aten.lt.Scalar(self, 0)

    def choose(yes: int, no: int) -> Tensor:  # torch.where(negative, yes, no): the numbers as int64 tensors
        other = aten.scalar_tensor.default(no, dtype=_dtypes.int64, device=self.device)
        return aten.where.self(negative, aten.scalar_tensor.default(yes, dtype=_dtypes.int64, device=self.device),
                               other)

    max_deriv, sign = choose(1, 0), choose(1, -1)
    z = buffer if buffer.numel() > 0 else aten.exp.default(aten.neg.default(aten.abs.default(self)))
    fraction = aten.div.Tensor(z, aten.add.Tensor(z, 1))
    return aten.mul.Tensor(grad_output, aten.sub.Tensor(max_deriv, aten.mul.Tensor(sign, fraction)))


def _logit(self: Tensor, eps: float | None = None) -> Tensor:
    lo, hi = (-1.0, 2.0) if eps is None else (eps, 1.0 - eps)
    below, above = aten.lt.Scalar(self, lo), aten.gt.Scalar(self, hi)  # torch.clamp(self, lo, hi), as a ref
    clamped = aten.where.self(above, _zero(self, hi), self)
    clamped = aten.where.self(below, _zero(self, lo), clamped)
    return aten.log.default(aten.div.Tensor(clamped, aten.sub.Tensor(1, clamped)))


def _mse_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int) -> Tensor:
    norm = 2.0 / self.numel() if reduction == _MEAN else 2.0
    return aten.mul.Tensor(aten.mul.Tensor(aten.sub.Tensor(self, target), norm), grad_output)


def _binary_cross_entropy_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                                   weight: Tensor | None = None, reduction: int = _MEAN) -> Tensor:
    numerator = aten.mul.Tensor(grad_output, aten.sub.Tensor(self, target))
    denominator = aten.clamp.default(aten.mul.Tensor(self, aten.sub.Tensor(1, self)), 1e-12)
    result = aten.div.Tensor(numerator, denominator)
    if weight is not None:
        result = aten.mul.Tensor(result, weight)
    return aten.div.Tensor(result, self.numel()) if reduction == _MEAN else result


def _native_dropout_backward(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    kept = aten._to_copy.default(mask, dtype=grad_output.dtype) if mask.dtype != grad_output.dtype else mask
    product = aten.mul.Tensor(grad_output, aten.mul.Tensor(kept, scale))
    return aten.clone.default(product, memory_format=contiguous_format)


def _logit_backward(grad_output: Tensor, self: Tensor, eps: float | None = None) -> Tensor:
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    inside = aten.logical_and.default(aten.ge.Scalar(self, lo), aten.le.Scalar(self, hi))
    grad = aten.div.Tensor(grad_output, aten.mul.Tensor(self, aten.sub.Tensor(1.0, self)))
    other = _scalar_full(self, math.nan) if eps is None else _zero(grad, 0.0)
    return aten.where.self(inside, grad, other)


def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
    product = aten.mul.Tensor(grad_output, output)
    grad_input = aten.sub.Tensor(product, aten.mul.Tensor(output, aten.sum.dim_IntList(product, [dim], True)))
    if grad_output.dtype != input_dtype:  # torch's _cast_grad_to_input_dtype
        grad_input = aten._to_copy.default(grad_input, dtype=input_dtype)
    return grad_input


def _log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
    exp = aten.exp.default(output)
    grad_input = aten.sub.Tensor(grad_output, aten.mul.Tensor(exp, aten.sum.dim_IntList(grad_output, [dim], True)))
    if grad_output.dtype != input_dtype:  # torch's _cast_grad_to_input_dtype
        grad_input = aten._to_copy.default(grad_input, dtype=input_dtype)
    return grad_input


# --- losses ----------------------------------------------------------------------------------------
def _mse_loss(self: Tensor, target: Tensor, reduction: int = _MEAN) -> Tensor:
    return _reduce(aten.pow.Tensor_Scalar(aten.sub.Tensor(self, target), 2), reduction)


def _huber_loss(self: Tensor, target: Tensor, reduction: int = _MEAN, delta: float = 1.0) -> Tensor:
    z = aten.abs.default(aten.sub.Tensor(self, target))
    loss = aten.where.self(aten.lt.Scalar(z, delta), aten.mul.Tensor(aten.mul.Tensor(z, 0.5), z),
                           aten.mul.Tensor(aten.sub.Tensor(z, 0.5 * delta), delta))
    return _reduce(loss, reduction)


def _huber_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int,
                         delta: float) -> Tensor:
    norm = 1.0 / self.numel() if reduction == _MEAN else 1.0
    x = aten.sub.Tensor(self, target)
    below = aten.lt.Scalar(x, -delta)
    low = aten.mul.Tensor(aten.mul.Tensor(grad_output, -norm), delta)
    above = aten.gt.Scalar(x, delta)
    high = aten.mul.Tensor(aten.mul.Tensor(grad_output, norm), delta)
    middle = aten.mul.Tensor(aten.mul.Tensor(x, norm), grad_output)
    return aten.where.self(below, low, aten.where.self(above, high, middle))


def _smooth_l1_loss(self: Tensor, target: Tensor, reduction: int = _MEAN, beta: float = 1.0) -> Tensor:
    z = aten.abs.default(aten.sub.Tensor(self, target))
    loss = aten.where.self(aten.lt.Scalar(z, beta),
                           aten.div.Tensor(aten.mul.Tensor(aten.pow.Tensor_Scalar(z, 2), 0.5), beta),
                           aten.sub.Tensor(z, 0.5 * beta))
    return _reduce(loss, reduction)


def _smooth_l1_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int,
                             beta: float) -> Tensor:
    norm = 1.0 / self.numel() if reduction == _MEAN else 1.0
    x = aten.sub.Tensor(self, target)
    abs_x = aten.abs.default(x)
    norm_grad = aten.mul.Tensor(grad_output, norm)
    return aten.where.self(aten.lt.Scalar(abs_x, beta), aten.div.Tensor(aten.mul.Tensor(norm_grad, x), beta),
                           aten.mul.Tensor(norm_grad, aten.sign.default(x)))


def _nll_loss_forward(self: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                      ignore_index: int) -> tuple[Tensor, Tensor]:
    n_dims = self.dim()
    channel_dim = 1 if n_dims >= 2 else 0
    w = weight
    if weight is not None:
        if n_dims > 1:
            shape = [1] * n_dims
            shape[channel_dim] = weight.shape[0]
            w = aten.view.default(weight, shape)
        self = aten.mul.Tensor(self, w)
    safe_target = aten.where.self(aten.ne.Scalar(target, ignore_index), target, _zero(target))
    safe_target_ = aten.unsqueeze.default(safe_target, channel_dim)
    result = aten.neg.default(aten.squeeze.dims(aten.gather.default(self, channel_dim, safe_target_), [channel_dim]))
    result = aten.where.self(aten.ne.Scalar(target, ignore_index), result, _zero(result))
    if reduction == 0 and n_dims > 1:
        return result, _scalar_full(self, 0.0)
    if w is not None:
        w = aten.expand.default(w, list(self.shape))
        wsum = aten.squeeze.dims(aten.gather.default(w, channel_dim, safe_target_), [channel_dim])
        wsum = aten.where.self(aten.ne.Scalar(target, ignore_index), wsum, _zero(wsum))
        total_weight = aten.sum.default(wsum)
    else:
        count = aten.sum.default(aten.ne.Scalar(target, ignore_index))
        total_weight = aten._to_copy.default(count, dtype=self.dtype, device=self.device)
    if reduction == _SUM:
        result = aten.sum.default(result)
    elif reduction == _MEAN:
        result = aten.div.Tensor(aten.sum.default(result), total_weight)
    return result, total_weight


def _nll_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, weight: Tensor | None,
                       reduction: int, ignore_index: int, total_weight: Tensor) -> Tensor:
    channel_dim = 0 if self.dim() < 2 else 1
    if reduction == _MEAN:
        grad_output = aten.div.Tensor(grad_output, total_weight)
    if self.dim() == 1 and target.dim() > 0:
        target = aten.select.int(target, 0, 0)
    target = aten.unsqueeze.default(target, channel_dim)
    safe_target = aten.where.self(aten.ne.Scalar(target, ignore_index), target, _zero(target))
    grad_input = aten.scatter.value(aten.zeros_like.default(self), channel_dim, safe_target, -1.0)
    if grad_input.dim() > grad_output.dim() > 0:
        grad_output = aten.unsqueeze.default(grad_output, channel_dim)
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = weight.shape[0]
        grad_output = aten.mul.Tensor(grad_output, aten.view.default(weight, shape))
    grad_output = aten.where.self(aten.ne.Scalar(target, ignore_index), grad_output, _zero(grad_output))
    return aten.mul.Tensor(grad_input, grad_output)


def _binary_cross_entropy(self: Tensor, target: Tensor, weight: Tensor | None = None,
                          reduction: int = _MEAN) -> Tensor:
    negative = aten.mul.Tensor(aten.sub.Tensor(target, 1),
                               aten.maximum.default(aten.log1p.default(aten.neg.default(self)),
                                                    _scalar_full(self, -100)))
    positive = aten.mul.Tensor(target, aten.maximum.default(aten.log.default(self), _scalar_full(self, -100)))
    loss = aten.sub.Tensor(negative, positive)
    if weight is not None:
        loss = aten.mul.Tensor(loss, weight)
    return _reduce(loss, reduction)


def _binary_cross_entropy_with_logits(self: Tensor, target: Tensor, weight: Tensor | None = None,
                                      pos_weight: Tensor | None = None, reduction: int = _MEAN) -> Tensor:
    def log_sigmoid_of_self() -> Tensor:  # min(0, x) - log1p(exp(-|x|))
        minimum = aten.minimum.default(_scalar_full(self, 0), self)
        return aten.sub.Tensor(minimum, aten.log1p.default(aten.exp.default(aten.neg.default(aten.abs.default(self)))))

    if pos_weight is not None:
        log_weight = aten.add.Tensor(aten.mul.Tensor(aten.sub.Tensor(pos_weight, 1), target), 1)
        first = aten.mul.Tensor(aten.sub.Tensor(1, target), self)
        loss = aten.sub.Tensor(first, aten.mul.Tensor(log_weight, log_sigmoid_of_self()))
    else:
        loss = aten.sub.Tensor(aten.mul.Tensor(aten.sub.Tensor(1, target), self), log_sigmoid_of_self())
    if weight is not None:
        loss = aten.mul.Tensor(loss, weight)
    return _reduce(loss, reduction)


# --- normalization backwards -----------------------------------------------------------------------
def _native_layer_norm_backward(grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
                                rstd: Tensor, weight: Tensor | None, bias: Tensor | None,
                                output_mask: Sequence[bool]) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    computation = _dtypes.float32 if input.dtype == _dtypes.float16 else input.dtype

    def cast(t: Tensor | None) -> Tensor | None:
        # t.to(computation, memory_format=torch.contiguous_format): an alias when only the strides differ, as
        # the suggested memory format of a strided (not channels-last) tensor is already contiguous_format
        if t is None or t.dtype == computation:
            return t
        return aten._to_copy.default(t, dtype=computation, memory_format=contiguous_format)

    def cast_back(t: Tensor | None, like: Tensor | None) -> Tensor | None:
        if t is None or like is None or t.dtype == like.dtype:
            return t
        return aten._to_copy.default(t, dtype=like.dtype)

    grad_out_cast, input_cast, weight_cast, bias_cast = (cast(t) for t in (grad_out, input, weight, bias))
    assert grad_out_cast is not None and input_cast is not None
    axis = input.dim() - len(normalized_shape)
    inner_dims, outer_dims = list(range(axis, input.dim())), list(range(axis))
    n = math.prod(input.shape[axis:])
    if n == 0 or math.prod(input.shape[:axis]) == 0:
        return (aten.new_zeros.default(input, list(input.shape)) if output_mask[0] else None,
                aten.new_zeros.default(input, list(input.shape[axis:])) if output_mask[1] else None,
                aten.new_zeros.default(input, list(input.shape[axis:])) if output_mask[2] else None)
    for _ in range(input_cast.dim() - mean.dim()):
        mean = aten.unsqueeze.default(mean, -1)
    for _ in range(input_cast.dim() - rstd.dim()):
        rstd = aten.unsqueeze.default(rstd, -1)
    x_hat = aten.mul.Tensor(aten.sub.Tensor(input_cast, mean), rstd)
    grad_x_hat = aten.mul.Tensor(grad_out_cast, weight_cast) if weight_cast is not None else grad_out_cast
    a = aten.mul.Tensor(grad_x_hat, n)
    b = aten.sum.dim_IntList(grad_x_hat, inner_dims, True)
    c2 = aten.sum.dim_IntList(aten.mul.Tensor(grad_x_hat, x_hat), inner_dims, True)
    c3 = aten.mul.Tensor(x_hat, c2)
    inner = aten.sub.Tensor(aten.sub.Tensor(a, b), c3)
    d_input = d_weight = d_bias = None
    if output_mask[0]:
        d_input = aten.mul.Tensor(aten.div.Tensor(rstd, n), inner)
    if output_mask[1] and weight_cast is not None:
        d_weight = aten.mul.Tensor(grad_out_cast, x_hat)
        if outer_dims:
            d_weight = aten.sum.dim_IntList(d_weight, outer_dims, False)
    if output_mask[2] and bias_cast is not None:
        d_bias = (aten.sum.dim_IntList(grad_out_cast, outer_dims, False) if outer_dims
                  else aten.clone.default(grad_out_cast))
    return cast_back(d_input, input), cast_back(d_weight, weight), cast_back(d_bias, bias)


def _native_group_norm_backward(grad_output: Tensor, input: Tensor, mean: Tensor, rstd: Tensor,
                                gamma: Tensor | None, N: int, C: int, HxW: int, group: int,  # noqa: N803 (aten's names)
                                output_mask: Sequence[bool]) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    cpg = C // group
    ds = aten.sum.dim_IntList(aten.view.default(aten.mul.Tensor(grad_output, input), [N, C, HxW]), [2])
    db = aten.sum.dim_IntList(aten.view.default(grad_output, [N, C, HxW]), [2])
    d_input = d_gamma = d_bias = None
    if output_mask[0]:
        s = 1.0 / (HxW * cpg)
        if gamma is not None:
            ds_val = aten.sum.dim_IntList(
                aten.reshape.default(aten.mul.Tensor(ds, aten.unsqueeze.default(gamma, 0)), [N, group, cpg]), [2])
            db_val = aten.sum.dim_IntList(
                aten.reshape.default(aten.mul.Tensor(db, aten.unsqueeze.default(gamma, 0)), [N, group, cpg]), [2])
            c1 = aten.mul.Tensor(aten.unsqueeze.default(rstd, -1), aten.reshape.default(gamma, [1, group, cpg]))
        else:
            ds_val = aten.sum.dim_IntList(aten.reshape.default(ds, [N, group, cpg]), [2])
            db_val = aten.sum.dim_IntList(aten.reshape.default(db, [N, group, cpg]), [2])
            c1 = aten.mul.Tensor(aten.unsqueeze.default(rstd, -1),
                                 aten.ones.default([1, group, cpg], device=rstd.device))
        c2 = aten.sub.Tensor(aten.mul.Tensor(db_val, mean), ds_val)
        c2 = aten.mul.Tensor(aten.mul.Tensor(aten.mul.Tensor(aten.mul.Tensor(c2, rstd), rstd), rstd), s)
        c3 = aten.sub.Tensor(aten.mul.Tensor(aten.neg.default(c2), mean),
                             aten.mul.Tensor(aten.mul.Tensor(db_val, rstd), s))
        c1 = aten.unsqueeze.default(c1, -1)
        for _ in range(4 - c2.dim()):
            c2 = aten.unsqueeze.default(c2, -1)
        for _ in range(4 - c3.dim()):
            c3 = aten.unsqueeze.default(c3, -1)
        d_input = aten.add.Tensor(
            aten.add.Tensor(aten.mul.Tensor(aten.reshape.default(grad_output, [N, group, cpg, HxW]), c1),
                            aten.mul.Tensor(aten.reshape.default(input, [N, group, cpg, HxW]), c2)),
            c3)
        d_input = aten.reshape.default(d_input, list(input.shape))
        if d_input.dtype != input.dtype:
            d_input = aten._to_copy.default(d_input, dtype=input.dtype)
    if output_mask[1]:
        centered = aten.sub.Tensor(aten.view.default(ds, [N, group, cpg]),
                                   aten.mul.Tensor(aten.view.default(db, [N, group, cpg]),
                                                   aten.unsqueeze.default(mean, -1)))
        d_gamma = aten.sum.dim_IntList(aten.mul.Tensor(centered, aten.unsqueeze.default(rstd, -1)), [0])
        d_gamma = aten.reshape.default(d_gamma, [C])
    if output_mask[2]:
        d_bias = aten.sum.dim_IntList(db, [0])
    return d_input, d_gamma, d_bias


def _native_batch_norm_backward(grad_out: Tensor, input: Tensor, weight: Tensor | None,
                                running_mean: Tensor | None, running_var: Tensor | None, save_mean: Tensor | None,
                                save_invstd: Tensor | None, train: bool, eps: float,
                                output_mask: Sequence[bool]) -> tuple[Tensor, Tensor | None, Tensor | None]:
    input_dtype = input.dtype
    weight_dtype = weight.dtype if weight is not None else input_dtype
    computation = _dtypes.float32 if input_dtype == _dtypes.float16 else input_dtype

    def cast(t: Tensor | None, dtype: Any = computation) -> Tensor | None:  # t.to(dtype): a no-op when equal
        return aten._to_copy.default(t, dtype=dtype) if t is not None and t.dtype != dtype else t

    grad_out_c, input_c, weight_c, running_mean_c, running_var_c, mean, invstd = (
        cast(t) for t in (grad_out, input, weight, running_mean, running_var, save_mean, save_invstd))
    assert grad_out_c is not None and input_c is not None
    axis, rank = 1, input.dim()
    num_features = math.prod(input.shape) / input.shape[axis]
    if not train:
        assert running_mean_c is not None and running_var_c is not None
        mean = running_mean_c
        invstd = aten.rsqrt.default(aten.add.Tensor(running_var_c, eps))
    assert mean is not None and invstd is not None
    mask = [1] * rank
    mask[axis] = input.shape[axis]
    reduction_axes = [i for i in range(rank) if i != axis]

    def broadcast(t: Tensor) -> Tensor:  # torch's _broadcast_batch_norm_backward
        for i, size in enumerate(mask):
            if size == 1 and not (i < t.dim() and t.shape[i] == size):
                t = aten.unsqueeze.default(t, i)
        return t

    mean = broadcast(mean)
    norm = 1.0 / num_features
    grad_output_sum = aten.sum.dim_IntList(grad_out_c, reduction_axes)
    dot_p = aten.sum.dim_IntList(aten.mul.Tensor(grad_out_c, aten.sub.Tensor(input_c, mean)), reduction_axes)
    grad_mean = broadcast(aten.mul.Tensor(grad_output_sum, norm))
    proj_scale = broadcast(aten.mul.Tensor(aten.mul.Tensor(dot_p, norm), aten.mul.Tensor(invstd, invstd)))
    if weight_c is None:
        grad_scale = aten.mul.Tensor(broadcast(invstd), 1.0)
    else:
        grad_scale = broadcast(aten.mul.Tensor(invstd, weight_c))
    if train:
        proj = aten.mul.Tensor(aten.sub.Tensor(input_c, mean), proj_scale)
        grad_input = aten.mul.Tensor(aten.sub.Tensor(aten.sub.Tensor(grad_out_c, proj), grad_mean), grad_scale)
    else:
        grad_input = aten.mul.Tensor(grad_out_c, grad_scale)
    grad_weight = aten.mul.Tensor(dot_p, invstd) if output_mask[1] else None
    grad_bias = grad_output_sum if output_mask[2] else None
    result = cast(grad_input, input_dtype)
    assert result is not None
    return result, cast(grad_weight, weight_dtype), cast(grad_bias, weight_dtype)


# --- indexing, scatter and padding -----------------------------------------------------------------
def _select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    dim = dim % max(self.dim(), 1)
    index = index + self.shape[dim] if index < 0 else index
    shape = [1] * self.dim()
    shape[dim] = -1
    mask = aten.eq.Scalar(aten.view.default(aten.arange.start_step(0, self.shape[dim], device=self.device), shape),
                          index)
    src = aten.expand.default(aten.unsqueeze.default(src, dim), list(self.shape))
    return aten.where.self(mask, src, self)


def _select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    grad_input = aten.new_zeros.default(grad_output, list(input_sizes))
    return aten.select_scatter.default(grad_input, grad_output, dim, index)


def _index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1,
               inplace: bool = False) -> Tensor:
    dim = dim % max(self.dim(), 1)
    if alpha != 1:
        source = aten.mul.Tensor(source, alpha)
    target = aten.unsqueeze.default(self, 0) if self.dim() == 0 else self
    indices: list[Any] = [None] * dim + [index]
    if inplace:
        aten.index_put_.default(target, indices, source, True)
        return self
    out = aten.index_put.default(target, indices, source, True)
    return aten.squeeze.dims(out, [0]) if self.dim() == 0 else out


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    return _index_add(self, dim, index, source, alpha=alpha, inplace=True)


def _pad_by_index(index_of: Callable[[Tensor, int, int, int], Tensor]) -> Callable[..., Tensor]:
    """A pad as torch's ``_reflection_or_replication_pad``: one ``index`` call per padded dimension."""

    def pad(self: Tensor, padding: Sequence[int]) -> Tensor:
        dim = len(padding) // 2
        inner = self.shape[-dim:]
        nc_dim = self.dim() - dim
        left = [padding[2 * (dim - 1 - i)] for i in range(dim)]
        right = [padding[2 * (dim - 1 - i) + 1] for i in range(dim)]
        result = self
        for i in range(dim):
            indices: list[Any] = [None] * result.dim()
            indices[i + nc_dim] = index_of(self, left[i], inner[i], right[i])
            result = aten.index.Tensor(result, indices)
        return result

    return pad


def _reflection_index(self: Tensor, left: int, middle: int, right: int) -> Tensor:
    positions = aten.arange.start_step(-left, middle + right, device=self.device)
    return aten.sub.Tensor(middle - 1, aten.abs.default(aten.sub.Tensor(middle - 1, aten.abs.default(positions))))


def _replication_index(self: Tensor, left: int, middle: int, right: int) -> Tensor:
    return aten.clamp.default(aten.arange.start_step(-left, middle + right, device=self.device), 0, middle - 1)


_reflection_pad = _pad_by_index(_reflection_index)
_replication_pad = _pad_by_index(_replication_index)


def _masked_index(self: Tensor, mask: Tensor, indices: list[Tensor], fill: Any) -> Tensor:
    """``self[indices]`` (each index clamped in range) where ``mask``, else ``fill``: ``_unsafe_masked_index``."""
    clamped = [aten.clamp.default(index, 0, self.shape[i] - 1) for i, index in enumerate(indices)]
    return aten.masked_fill.Scalar(aten.index.Tensor(self, clamped), aten.bitwise_not.default(mask), fill)


def _masked_index_put_accumulate(self: Tensor, mask: Tensor, indices: list[Tensor], values: Tensor) -> Tensor:
    """``self`` with ``values`` (where ``mask``) added at the clamped ``indices`` (torch's ``_unsafe_masked_...``)."""
    if self.numel() == 0:
        return aten.clone.default(self)
    clamped = [aten.clamp.default(index, -self.shape[i], self.shape[i] - 1) for i, index in enumerate(indices)]
    masked = aten.masked_fill.Scalar(values, aten.bitwise_not.default(mask), 0)
    return aten.index_put.default(self, clamped, masked, True)


def _embedding_dense_backward(grad_output: Tensor, indices: Tensor, num_weights: int, padding_idx: int,
                              scale_grad_by_freq: bool) -> Tensor:
    result_dtype = grad_output.dtype
    if result_dtype in (_dtypes.float16,):  # torch computes in float32
        grad_output = aten._to_copy.default(grad_output, dtype=_dtypes.float32)
    if indices.dtype != _dtypes.int64:
        indices = aten._to_copy.default(indices, dtype=_dtypes.int64)
    valid = aten.bitwise_and.Tensor(aten.ge.Scalar(indices, 0), aten.lt.Scalar(indices, num_weights))
    if scale_grad_by_freq:
        counts = aten.new_zeros.default(indices, [num_weights])
        counts = _masked_index_put_accumulate(counts, valid, [indices], aten.ones_like.default(indices))
        scale = _masked_index(counts, valid, [indices], 1)
        grad_output = aten.div.Tensor(grad_output, aten.unsqueeze.default(scale, -1))
    mask = aten.bitwise_and.Tensor(valid, aten.ne.Scalar(indices, padding_idx))
    for _ in range(grad_output.dim() - mask.dim()):
        mask = aten.unsqueeze.default(mask, -1)
    grad_weight = aten.new_zeros.default(grad_output, [num_weights, *grad_output.shape[indices.dim():]])
    result = _masked_index_put_accumulate(grad_weight, mask, [indices], grad_output)
    return aten._to_copy.default(result, dtype=result_dtype) if result.dtype != result_dtype else result


def _reflection_pad_backward(grad_output: Tensor, self: Tensor, padding: Sequence[int]) -> Tensor:
    """The gradient of a reflection pad, as torch's ``_reflection_pad_backward`` computes it.

    Each region of ``grad_output`` (the center and its reflections) is read back through a
    masked index, and the regions are summed.
    """
    dim = len(padding) // 2
    last = [size - 1 for size in self.shape[-dim:]]
    left = [padding[2 * (dim - 1 - i)] for i in range(dim)]
    right = [padding[2 * (dim - 1 - i) + 1] for i in range(dim)]
    indices = []
    for i in range(self.dim()):
        shape = [1] * self.dim()
        shape[i] = -1
        indices.append(aten.view.default(aten.arange.start_step(0, self.shape[i], device=self.device), shape))
    batch, xyz = indices[:-dim], indices[-dim:]

    def within(index: Tensor, low: int, high: int) -> Tensor:
        return aten.logical_and.default(aten.ge.Scalar(index, low), aten.le.Scalar(index, high))

    def all_of(conditions: list[Tensor]) -> Tensor:
        result = conditions[0]
        for condition in conditions[1:]:
            result = aten.logical_and.default(result, condition)
        return result

    center = [aten.add.Tensor(xyz[i], left[i]) for i in range(dim)]
    left_reflect = [aten.sub.Tensor(left[i], xyz[i]) for i in range(dim)]
    right_reflect = [aten.sub.Tensor(2 * last[i] + left[i], xyz[i]) for i in range(dim)]
    center_range = [(center[i], 0, last[i] + left[i] + right[i]) for i in range(dim)]
    mask = all_of([within(*center_range[i]) for i in range(dim)])
    grad = _masked_index(grad_output, mask, batch + center, 0.0)
    for area in itertools.product(*[[-1, 0, 1] for _ in range(dim)]):
        if area == (0,) * dim:
            continue
        outs, ranges = [], []
        for i in range(dim):
            if area[i] == 0:
                outs.append(center[i])
                ranges.append(center_range[i])
            elif area[i] == -1:
                outs.append(left_reflect[i])
                ranges.append((xyz[i], 1, left[i]))
            else:
                outs.append(right_reflect[i])
                ranges.append((xyz[i], last[i] - right[i], last[i] - 1))
        if any(high < low for _, low, high in ranges):  # an empty region (no padding on that side)
            continue
        mask = all_of([within(*r) for r in ranges])
        grad = aten.add.Tensor(grad, _masked_index(grad_output, mask, batch + outs, 0.0))
    return grad


def _sliding_indices(size: int, kernel: int, dilation: int, padding: int, stride: int, device: Any) -> Tensor:
    """Per kernel offset (rows) and block (columns), the padded input index: ``_im2col_col2im_indices_along_dim``."""
    blocks = size + padding * 2 - dilation * (kernel - 1)
    starts = aten.unsqueeze.default(aten.arange.start_step(0, blocks, stride, dtype=_dtypes.int64, device=device), 0)
    offsets = aten.arange.start_step(0, kernel * dilation, dilation, dtype=_dtypes.int64, device=device)
    return aten.add.Tensor(starts, aten.unsqueeze.default(offsets, -1))


def _im2col(self: Tensor, kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
            stride: Sequence[int]) -> Tensor:
    batched = self.dim() == 4
    if not batched:
        self = aten.unsqueeze.default(self, 0)
    batch, channels, height, width = self.shape
    rows = _sliding_indices(height, kernel_size[0], dilation[0], padding[0], stride[0], self.device)
    cols = _sliding_indices(width, kernel_size[1], dilation[1], padding[1], stride[1], self.device)
    padded = aten.constant_pad_nd.default(self, [padding[1], padding[1], padding[0], padding[0]], 0.0)
    rows = aten.unsqueeze.default(aten.unsqueeze.default(rows, -1), -1)
    output = aten.permute.default(aten.index.Tensor(padded, [None, None, rows, cols]), [0, 1, 2, 4, 3, 5])
    output = aten.reshape.default(output, [batch, channels * kernel_size[0] * kernel_size[1],
                                           rows.shape[1] * cols.shape[1]])
    return output if batched else aten.squeeze.dims(output, [0])


def _col2im(self: Tensor, output_size: Sequence[int], kernel_size: Sequence[int], dilation: Sequence[int],
            padding: Sequence[int], stride: Sequence[int]) -> Tensor:
    batched = self.dim() == 3
    if not batched:
        self = aten.unsqueeze.default(self, 0)
    kernel = kernel_size[0] * kernel_size[1]
    blocks = [1 + (out + 2 * pad - dil * (ker - 1) - 1) // st
              for out, pad, dil, ker, st in zip(output_size, padding, dilation, kernel_size, stride, strict=True)]
    shape = list(self.shape)
    columns = aten.reshape.default(self, [shape[0], shape[1] // kernel, *kernel_size, *blocks])
    columns = aten.permute.default(columns, [0, 1, 2, 4, 3, 5])
    rows = _sliding_indices(output_size[0], kernel_size[0], dilation[0], padding[0], stride[0], self.device)
    for _ in range(4 - rows.dim()):
        rows = aten.unsqueeze.default(rows, -1)
    cols = _sliding_indices(output_size[1], kernel_size[1], dilation[1], padding[1], stride[1], self.device)
    padded_size = [o + 2 * p for o, p in zip(output_size, padding, strict=True)]
    output = aten.new_zeros.default(columns, [shape[0], shape[1] // kernel, *padded_size])
    output = aten.index_put.default(output, [None, None, rows, cols], columns, True)
    output = aten.constant_pad_nd.default(output, [-padding[1], -padding[1], -padding[0], -padding[0]], 0.0)
    return output if batched else aten.squeeze.dims(output, [0])


def _upsample_nearest2d(self: Tensor, output_size: Sequence[int], scales_h: float | None = None,
                        scales_w: float | None = None) -> Tensor:
    scales = [scales_h, scales_w]
    indices = []
    for d, osize in enumerate(output_size):
        isize = self.shape[-2 + d]
        given = scales[d]
        scale = isize / (isize * given) if given is not None and given > 0 else isize / osize
        positions = aten.arange.start_step(0, osize, dtype=_dtypes.float32, device=self.device)
        index = aten._to_copy.default(aten.mul.Tensor(aten.add.Tensor(positions, 0.0), scale), dtype=_dtypes.int64)
        for _ in range(1 - d):
            index = aten.unsqueeze.default(index, -1)
        indices.append(index)
    return aten.index.Tensor(self, [None, None, *indices])


# --- more views, reductions and pointwise composites ----------------------------------------------
def _unsafe_view(self: Tensor, size: Sequence[int]) -> Tensor:
    return aten.view.default(self, list(size))


def _take(self: Tensor, index: Tensor) -> Tensor:
    return aten.index.Tensor(aten.view.default(self, [-1]), [index])


def _roll(self: Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> Tensor:
    shifts, dims = list(shifts), [d % max(self.dim(), 1) for d in dims]
    if self.numel() == 0:
        return aten.clone.default(self)
    if len(shifts) != 1 or len(dims) != 1:
        if not dims and len(shifts) == 1:  # flattened, rolled, viewed back
            flat = aten.view.default(self, [self.numel()])
            return aten.view.default(aten.roll.default(flat, shifts, [0]), list(self.shape))
        first = aten.roll.default(self, shifts[:1], dims[:1])
        return aten.roll.default(first, shifts[1:], dims[1:])
    dim, size = dims[0], self.shape[dims[0]]
    start = (size - shifts[0]) % size
    positions = aten.arange.start_step(0, size, device=self.device)
    return aten.index_select.default(self, dim, aten.fmod.Scalar(aten.add.Tensor(positions, start), size))


def _slice_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int, end: int,
                    step: int) -> Tensor:
    grad_input = aten.new_zeros.default(grad_output, list(input_sizes))
    return aten.slice_scatter.default(grad_input, grad_output, dim, start, end, step)


def _diagonal_backward(grad_output: Tensor, input_sizes: Sequence[int], offset: int, dim1: int,
                       dim2: int) -> Tensor:
    grad_input = aten.new_zeros.default(grad_output, list(input_sizes))
    return aten.diagonal_scatter.default(grad_input, grad_output, offset, dim1, dim2)


def _count_nonzero(self: Tensor, dim: Any = None) -> Tensor:
    dims = [dim] if isinstance(dim, int) else dim
    return aten.sum.dim_IntList(aten.ne.Scalar(self, 0), dims)


def _nansum(self: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    zeroed = aten.where.self(aten.isnan.default(self), _zero(self), self)
    return aten.sum.dim_IntList(zeroed, dim, *([True] if keepdim else []),
                                **({} if dtype is None else {"dtype": dtype}))


def _baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """The ref of torch: ``bmm``, times alpha unless 1, plus self times beta (unless 1; self dropped at 0)."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        beta, alpha = int(beta), int(alpha)
    result = aten.bmm.default(batch1, batch2)
    if alpha != 1:
        result = aten.mul.Tensor(result, alpha)
    if beta == 0:
        return result
    if beta != 1:
        self = aten.mul.Tensor(self, beta)
    return aten.add.Tensor(self, result)


def _isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """The ref of torch: a number compared with ``eq``/``ne``, few test elements compared with all.

    With few test elements: a view, ``eq``, ``any``. With more: they are sorted and searched, or,
    with ``assume_unique``, sorted together with the elements and compared with their neighbours.
    """
    if not isinstance(elements, Tensor):
        elements = aten.scalar_tensor.default(elements, device=test_elements.device, pin_memory=False)
    if not isinstance(test_elements, Tensor):
        return (aten.ne.Scalar if invert else aten.eq.Scalar)(elements, test_elements)
    n = elements.numel()
    if test_elements.numel() < 10.0 * n ** 0.145:
        if n == 0:
            return aten.empty_like.default(elements, dtype=_dtypes.bool_)
        x = aten.view.default(elements, list(elements.shape) + [1] * test_elements.dim())
        found = aten.any.dims(aten.eq.Tensor(x, test_elements), list(range(-1, -test_elements.dim() - 1, -1)))
        return aten.bitwise_not.default(found) if invert else found
    flat = elements if elements.dim() == 1 else aten.view.default(elements, [n])
    tests = test_elements if test_elements.dim() == 1 else aten.view.default(test_elements, [test_elements.numel()])
    if assume_unique:
        ranked, order = aten.sort.stable(aten.cat.default([flat, tests]), stable=True)
        same = aten.eq.Tensor(aten.slice.Tensor(ranked, 0, 1, 2 ** 63 - 1), aten.slice.Tensor(ranked, 0, 0, -1))
        marks = aten.constant_pad_nd.default(same, [0, 1], False)
        if invert:
            marks = aten.logical_not.default(marks)
        mask = aten.index_put.default(aten.empty_like.default(marks), [order], marks)
        return aten.view.default(aten.slice.Tensor(mask, 0, 0, n), [n])
    ranked = aten.sort.default(tests)[0]
    idx = aten.searchsorted.Tensor(ranked, flat)
    inside = aten.lt.Scalar(idx, ranked.numel())
    idx = aten.where.self(inside, idx, aten.scalar_tensor.default(0, dtype=_dtypes.int64, layout=strided,
                                                                   device=idx.device))
    found = aten.eq.Tensor(aten.index.Tensor(ranked, [idx]), flat)
    if invert:
        found = aten.logical_not.default(found)
    return aten.view.default(found, list(elements.shape))


def _linalg_cross(self: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The ref of torch: the operands broadcast, then ``a[j] * b[k] - a[k] * b[j]`` by ``index_select``."""
    shape = list(broadcast_shapes(tuple(self.shape), tuple(other.shape)))
    a = self if list(self.shape) == shape else aten.expand.default(self, shape)
    b = other if list(other.shape) == shape else aten.expand.default(other, shape)
    dim = wrap_dim(dim, a.dim())
    idx = aten.arange.start_step(0, 3, layout=strided, device=a.device, pin_memory=False)

    def rolled(t: Tensor, by: int) -> Tensor:
        return aten.index_select.default(t, dim, aten.remainder.Scalar(aten.add.Tensor(idx, by), 3))

    first = aten.mul.Tensor(rolled(a, 1), rolled(b, 2))
    return aten.sub.Tensor(first, aten.mul.Tensor(rolled(a, 2), rolled(b, 1)))


def _aminmax(self: Tensor, *, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """``amin`` then ``amax``, as torch's Python ``aminmax`` (its Meta kernel too)."""
    dims = [] if dim is None else [dim]
    args = (dims, True) if keepdim else (dims,) if dims else ()
    return aten.amin.default(self, *args), aten.amax.default(self, *args)


def _std(self: Tensor, dim: Sequence[int] | None = None, *, correction: Any = None, keepdim: bool = False) -> Tensor:
    correction = 1.0 if correction is None else correction
    return aten.sqrt.default(aten.var.correction(self, dim, correction=correction, keepdim=keepdim))


def _std_mean(self: Tensor, dim: Sequence[int] | None = None, *, correction: Any = None,
              keepdim: bool = False) -> tuple[Tensor, Tensor]:
    correction = 1.0 if correction is None else correction
    var, mean = aten.var_mean.correction(self, dim, correction=correction, keepdim=keepdim)
    return aten.sqrt.default(var), mean


def _mv(self: Tensor, vec: Tensor) -> Tensor:
    return aten.sum.dim_IntList(aten.mul.Tensor(self, vec), [1])


def _euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    x1_norm = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x1, 2), [-1], True)
    x1_pad = aten.ones_like.default(x1_norm)
    x2_norm = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x2, 2), [-1], True)
    x2_pad = aten.ones_like.default(x2_norm)
    x1_ = aten.cat.default([aten.mul.Tensor(x1, -2), x1_norm, x1_pad], -1)
    x2_ = aten.cat.default([x2, x2_pad, x2_norm], -1)
    x2_t = aten.transpose.int(x2_, -2, -1)
    result = aten.mm.default(x1_, x2_t) if x1_.dim() == 2 else aten.matmul.default(x1_, x2_t)
    return aten.sqrt.default(aten.clamp_min.default(result, 0))


def _nan_to_num(self: Tensor, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Tensor:
    if not self.dtype.is_floating_point:
        return aten.clone.default(self)
    largest = float(np.finfo(self.dtype.np).max)  # torch.finfo(dtype).max
    nan = 0.0 if nan is None else nan
    posinf = largest if posinf is None else posinf
    neginf = -largest if neginf is None else neginf
    result = aten.where.self(aten.isnan.default(self), _zero(self, nan), self)
    result = aten.where.self(aten.isneginf.default(self), _zero(self, neginf), result)
    return aten.where.self(aten.isposinf.default(self), _zero(self, posinf), result)


def _upsample_bilinear2d(self: Tensor, output_size: Sequence[int], align_corners: bool,
                         scales_h: float | None = None, scales_w: float | None = None) -> Tensor:
    """The ``_upsample_linear`` of torch in two dimensions (only ``upsample_bilinear2d.out`` is in the table)."""
    dtype = self.dtype if self.dtype.is_floating_point else _dtypes.get_default_dtype()
    sizes = self.shape[2:]

    def source(in_size: int, out_size: int, scale: float | None, trailing: int) -> tuple[Tensor, Tensor, Tensor]:
        if align_corners:
            factor = (in_size - 1.0) / (out_size - 1.0) if out_size > 1 else 0
        else:
            factor = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
        i = aten._to_copy.default(aten.arange.start_step(0, out_size, device=self.device), dtype=dtype)
        x_f32 = aten.mul.Tensor(i, factor) if align_corners else aten.sub.Tensor(
            aten.mul.Tensor(aten.add.Tensor(i, 0.5), factor), 0.5)
        x_f32 = aten.clamp.default(x_f32, 0.0)
        x_f32 = aten.view.default(x_f32, [x_f32.shape[0], *[1] * trailing])
        x = aten._to_copy.default(x_f32, dtype=_dtypes.int64)
        return x_f32, x, aten.clamp.default(aten.add.Tensor(x, 1), None, in_size - 1)

    values = [source(sizes[i], output_size[i], scale, 1 - i) for i, scale in enumerate([scales_h, scales_w])]
    xs_f32, xs, xp1s = zip(*values, strict=True)
    corners = []
    for a in itertools.product([0, 1], [0, 1]):
        corner = aten.index.Tensor(self, [None, None, *(xs[k] if a[k] == 0 else xp1s[k] for k in range(2))])
        corners.append(corner if corner.dtype == dtype else aten._to_copy.default(corner, dtype=dtype))
    for i in reversed(range(2)):
        xscale = aten.clamp.default(aten.sub.Tensor(xs_f32[i], xs[i]), 0.0, 1.0)
        corners = [aten.add.Tensor(v1, aten.mul.Tensor(aten.sub.Tensor(v2, v1), xscale))
                   for v1, v2 in zip(corners[::2], corners[1::2], strict=True)]
    result = corners[0]
    return result if self.dtype.is_floating_point else aten.round.default(result)


# --- torch's out_wrapper and register_inplace -------------------------------------------------------
def _out_variant(out_op: Any, functional: Callable[..., Any], *, factory: bool = False) -> Callable[..., Any]:
    """The ``.out`` overload ``out_op`` decomposed as torch's ``out_wrapper`` decomposes it.

    ``functional`` computes the result (a ``factory`` one in the out tensor's dtype); each ``out``
    argument whose shape differs is resized (``_maybe_resize_out``) and the result is ``copy_``'d
    into it (``_safe_copy_out``). The out arguments are the operator's written (``Tensor(a!)``)
    keyword-only arguments.
    """
    names = [a.name for a in out_op.schema.kwarg_only if a.is_write]

    def out_variant(*args: Any, **kwargs: Any) -> Any:
        outs = [kwargs.pop(name) for name in names]
        if factory:
            kwargs["dtype"] = outs[0].dtype
        result = functional(*args, **kwargs)
        results = tuple(result) if len(names) > 1 else (result,)
        for out, value in zip(outs, results, strict=True):
            if tuple(out.shape) != tuple(value.shape):
                aten.resize_.default(out, list(value.shape))
            aten.copy_.default(out, value)
        return tuple(outs) if len(names) > 1 else outs[0]

    out_variant.__name__ = str(out_op).split(".", 1)[1].replace(".", "_")
    return out_variant


def _inplace_variant(functional: Callable[..., Any]) -> Callable[..., Any]:
    """An in-place overload as torch's ``register_inplace``: the out-of-place result ``copy_``'d into ``self``."""

    def inplace_variant(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        result: Tensor = aten.copy_.default(self, functional(self, *args, **kwargs))
        return result

    return inplace_variant


def _functional_table() -> dict[Any, Callable[..., Any]]:
    return {
        aten.t.default: _t,
        aten.transpose.int: _transpose,
        aten.detach.default: _detach,
        aten._reshape_alias.default: _reshape_alias,
        aten.squeeze.default: _squeeze,
        aten.squeeze.dim: _squeeze_dim,
        aten.split.Tensor: _split,
        aten.unbind.int: _unbind,
        aten.stack.default: _stack,
        aten.sum.default: _sum,
        aten.dot.default: _dot,
        aten.vdot.default: _dot,  # real inputs: no conjugate
        aten.all.default: _all,
        aten.all.dim: _all_dim,
        aten.all.dims: _all_dims,
        aten.norm.Scalar: _norm,
        aten.norm.ScalarOpt_dim: _norm,
        aten.norm.ScalarOpt_dim_dtype: _norm,
        aten.norm.ScalarOpt_dtype: _norm_scalar_opt_dtype,
        aten.logsumexp.default: _logsumexp,
        aten.ones.default: _filled(1),
        aten.zeros.default: _filled(0),
        aten.ones_like.default: _filled_like(1),
        aten.zeros_like.default: _filled_like(0),
        aten.new_ones.default: _new_filled(1),
        aten.new_zeros.default: _new_filled(0),
        aten.new_full.default: _new_full,
        aten.new_empty.default: _new_empty,
        aten.arange.default: _arange,
        aten.eye.default: _eye,
        aten.eye.m: _eye,
        aten.arange.start: _arange_start,
        aten.fill_.Scalar: _inplace_variant(_fill_scalar),
        aten.fill_.Tensor: _inplace_variant(_fill_tensor),
        aten.zero_.default: _zero_,
        aten.clamp_min.default: _clamp_min,
        aten.clamp_min.Tensor: _clamp_min_tensor,
        aten.clamp_max.default: _clamp_max,
        aten.clamp_max.Tensor: _clamp_max_tensor,
        aten.floor_divide.default: _floor_divide,
        aten.floor_divide.Scalar: _floor_divide,
        aten.frac.default: _frac,
        aten.logaddexp.default: _logaddexp,
        aten.sinc.default: _sinc,
        aten.heaviside.default: _heaviside,
        aten.deg2rad.default: _deg2rad,
        aten.rad2deg.default: _rad2deg,
        aten.logaddexp2.default: _logaddexp2,
        aten.sgn.default: _sgn,
        aten.isposinf.default: _isinf_of_sign(math.inf),
        aten.isneginf.default: _isinf_of_sign(-math.inf),
        aten.lerp.Scalar: _lerp,
        aten.lerp.Tensor: _lerp,
        aten.masked_fill.Scalar: _masked_fill,
        aten.index_fill.int_Scalar: _index_fill(False),
        aten.index_fill.int_Tensor: _index_fill(False),
        aten.index_fill_.int_Scalar: _index_fill(True),
        aten.index_fill_.int_Tensor: _index_fill(True),
        aten.masked_fill.Tensor: _masked_fill_tensor,
        aten.addcmul.default: _addcmul,
        aten.addcdiv.default: _addcdiv,
        aten.rsub.Scalar: _rsub,
        aten.rsub.Tensor: _rsub,
        aten.xlogy.Tensor: _xlogy,
        aten.tril.default: _tril,
        aten.triu.default: _triu,
        aten.elu_.default: _inplace_variant(_elu),
        aten.elu_backward.default: _elu_backward,
        aten.gelu_backward.default: _gelu_backward,
        aten.leaky_relu_backward.default: _leaky_relu_backward,
        aten.softplus.default: _softplus,
        aten.softplus_backward.default: _softplus_backward,
        aten.sigmoid_backward.default: _sigmoid_backward,
        aten.tanh_backward.default: _tanh_backward,
        aten.threshold_backward.default: _threshold_backward,
        aten.silu.default: _silu,
        aten.silu_backward.default: _silu_backward,
        aten.logit_backward.default: _logit_backward,
        aten._softmax_backward_data.default: _softmax_backward_data,
        aten._log_softmax_backward_data.default: _log_softmax_backward_data,
        aten.mse_loss.default: _mse_loss,
        aten.huber_loss.default: _huber_loss,
        aten.huber_loss_backward.default: _huber_loss_backward,
        aten.smooth_l1_loss.default: _smooth_l1_loss,
        aten.smooth_l1_loss_backward.default: _smooth_l1_loss_backward,
        aten.nll_loss_forward.default: _nll_loss_forward,
        aten.nll_loss_backward.default: _nll_loss_backward,
        aten.binary_cross_entropy.default: _binary_cross_entropy,
        aten.binary_cross_entropy_with_logits.default: _binary_cross_entropy_with_logits,
        aten.select_scatter.default: _select_scatter,
        aten.select_backward.default: _select_backward,
        aten.index_add.default: _index_add,
        aten.index_add_.default: _index_add_,
        aten.reflection_pad1d.default: _reflection_pad,
        aten.reflection_pad2d.default: _reflection_pad,
        aten.reflection_pad3d.default: _reflection_pad,
        aten.replication_pad1d.default: _replication_pad,
        aten.replication_pad2d.default: _replication_pad,
        aten.replication_pad3d.default: _replication_pad,
        aten.upsample_nearest2d.default: _upsample_nearest2d,
        aten.im2col.default: _im2col,
        aten.col2im.default: _col2im,
        aten.native_batch_norm_backward.default: _native_batch_norm_backward,
        aten.native_group_norm_backward.default: _native_group_norm_backward,
        aten.native_layer_norm_backward.default: _native_layer_norm_backward,
        aten.embedding_dense_backward.default: _embedding_dense_backward,
        aten.linspace.default: _linspace,
        aten.logspace.default: _logspace,
        aten.reflection_pad1d_backward.default: _reflection_pad_backward,
        aten.reflection_pad2d_backward.default: _reflection_pad_backward,
        aten.reflection_pad3d_backward.default: _reflection_pad_backward,
        aten.fill.Scalar: _fill_scalar,
        aten.fill.Tensor: _fill_tensor,
        aten._unsafe_view.default: _unsafe_view,
        aten.take.default: _take,
        aten.roll.default: _roll,
        aten.rot90.default: _rot90,  # torch's ref is its kernel: a flip, then a transpose or a clone
        aten.slice_backward.default: _slice_backward,
        aten.diagonal_backward.default: _diagonal_backward,
        aten.diag_embed.default: _diag_embed,
        aten.trace.default: _trace,
        aten.diagonal_copy.default: _diagonal_copy,
        aten.count_nonzero.default: _count_nonzero,
        aten.nansum.default: _nansum,
        aten.aminmax.default: _aminmax,
        aten.baddbmm.default: _baddbmm,
        aten.linalg_cross.default: _linalg_cross,
        **dict.fromkeys((aten.isin.Tensor_Tensor, aten.isin.Tensor_Scalar, aten.isin.Scalar_Tensor), _isin),
        aten.count_nonzero.dim_IntList: _count_nonzero,
        aten.std.correction: _std,
        aten.std_mean.correction: _std_mean,
        aten.mv.default: _mv,
        aten._euclidean_dist.default: _euclidean_dist,
        aten.nan_to_num.default: _nan_to_num,
        aten.hardtanh_backward.default: _hardtanh_backward,
        aten.log_sigmoid_forward.default: _log_sigmoid_forward,
        aten.log_sigmoid_backward.default: _log_sigmoid_backward,
        aten.logit.default: _logit,
        aten.mse_loss_backward.default: _mse_loss_backward,
        aten.binary_cross_entropy_backward.default: _binary_cross_entropy_backward,
        aten.native_dropout_backward.default: _native_dropout_backward,
    }


def _out_variants() -> list[tuple[Any, Any]]:
    """(out overload, its functional overload): each decomposed as the functional one, then copied out."""
    return [
        (aten._log_softmax_backward_data.out, aten._log_softmax_backward_data.default),
        (aten._softmax_backward_data.out, aten._softmax_backward_data.default),
        (aten.addcdiv.out, aten.addcdiv.default),
        (aten.addcmul.out, aten.addcmul.default),
        (aten.all.all_out, aten.all.default),
        (aten.all.out, aten.all.dim),
        (aten.all.dims_out, aten.all.dims),
        (aten.clamp_min.out, aten.clamp_min.default),
        (aten.clamp_min.Tensor_out, aten.clamp_min.Tensor),
        (aten.clamp_max.out, aten.clamp_max.default),
        (aten.clamp_max.Tensor_out, aten.clamp_max.Tensor),
        (aten.dot.out, aten.dot.default),
        (aten.vdot.out, aten.vdot.default),
        (aten.elu_backward.grad_input, aten.elu_backward.default),
        (aten.floor_divide.out, aten.floor_divide.default),
        (aten.floor_divide.Scalar_out, aten.floor_divide.Scalar),
        (aten.frac.out, aten.frac.default),
        (aten.logaddexp.out, aten.logaddexp.default),
        (aten.sinc.out, aten.sinc.default),
        (aten.heaviside.out, aten.heaviside.default),
        (aten.deg2rad.out, aten.deg2rad.default),
        (aten.rad2deg.out, aten.rad2deg.default),
        (aten.logaddexp2.out, aten.logaddexp2.default),
        (aten.gelu_backward.grad_input, aten.gelu_backward.default),
        (aten.huber_loss.out, aten.huber_loss.default),
        (aten.huber_loss_backward.out, aten.huber_loss_backward.default),
        (aten.index_add.out, aten.index_add.default),
        (aten.isneginf.out, aten.isneginf.default),
        (aten.isposinf.out, aten.isposinf.default),
        (aten.leaky_relu_backward.grad_input, aten.leaky_relu_backward.default),
        (aten.lerp.Scalar_out, aten.lerp.Scalar),
        (aten.lerp.Tensor_out, aten.lerp.Tensor),
        (aten.masked_fill.Scalar_out, aten.masked_fill.Scalar),
        (aten.masked_fill.Tensor_out, aten.masked_fill.Tensor),
        (aten.mse_loss.out, aten.mse_loss.default),
        (aten.nll_loss_backward.grad_input, aten.nll_loss_backward.default),
        (aten.nll_loss_forward.output, aten.nll_loss_forward.default),
        (aten.norm.out, aten.norm.ScalarOpt_dim),
        (aten.norm.dtype_out, aten.norm.ScalarOpt_dim_dtype),
        (aten.norm.Scalar_out, aten.norm.Scalar),
        (aten.norm.ScalarOpt_dtype_out, aten.norm.ScalarOpt_dtype),
        (aten.reflection_pad1d.out, aten.reflection_pad1d.default),
        (aten.reflection_pad2d.out, aten.reflection_pad2d.default),
        (aten.reflection_pad3d.out, aten.reflection_pad3d.default),
        (aten.replication_pad1d.out, aten.replication_pad1d.default),
        (aten.replication_pad2d.out, aten.replication_pad2d.default),
        (aten.replication_pad3d.out, aten.replication_pad3d.default),
        (aten.im2col.out, aten.im2col.default),
        (aten.col2im.out, aten.col2im.default),
        (aten.linspace.out, aten.linspace.default),
        (aten.reflection_pad3d_backward.grad_input, aten.reflection_pad3d_backward.default),
        (aten.select_backward.out, aten.select_backward.default),
        (aten.sgn.out, aten.sgn.default),
        (aten.sigmoid_backward.grad_input, aten.sigmoid_backward.default),
        (aten.silu.out, aten.silu.default),
        (aten.silu_backward.grad_input, aten.silu_backward.default),
        (aten.smooth_l1_loss.out, aten.smooth_l1_loss.default),
        (aten.smooth_l1_loss_backward.grad_input, aten.smooth_l1_loss_backward.default),
        (aten.softplus.out, aten.softplus.default),
        (aten.softplus_backward.grad_input, aten.softplus_backward.default),
        (aten.tanh_backward.grad_input, aten.tanh_backward.default),
        (aten.threshold_backward.grad_input, aten.threshold_backward.default),
        (aten.tril.out, aten.tril.default),
        (aten.triu.out, aten.triu.default),
        (aten.xlogy.OutTensor, aten.xlogy.Tensor),
        (aten.take.out, aten.take.default),
        (aten.slice_backward.out, aten.slice_backward.default),
        (aten.diagonal_backward.out, aten.diagonal_backward.default),
        (aten.diag_embed.out, aten.diag_embed.default),
        (aten.trace.out, aten.trace.default),
        (aten.index_fill.int_Scalar_out, aten.index_fill.int_Scalar),
        (aten.index_fill.int_Tensor_out, aten.index_fill.int_Tensor),
        # the out= of a view's copy writes the view itself, uncloned (torch's _make_copy_from_view)
        (aten.diagonal_copy.out, aten.diagonal.default),
        (aten.count_nonzero.out, aten.count_nonzero.default),
        (aten.nansum.out, aten.nansum.default),
        (aten.aminmax.out, aten.aminmax.default),
        (aten.baddbmm.out, aten.baddbmm.default),
        (aten.linalg_cross.out, aten.linalg_cross.default),
        *((getattr(aten.isin, f"{o}_out"), getattr(aten.isin, o)) for o in ("Tensor_Tensor", "Tensor_Scalar",
                                                                            "Scalar_Tensor")),
        (aten.count_nonzero.dim_IntList_out, aten.count_nonzero.dim_IntList),
        (aten.std.correction_out, aten.std.correction),
        (aten.std_mean.correction_out, aten.std_mean.correction),
        (aten.mv.out, aten.mv.default),
        (aten.nan_to_num.out, aten.nan_to_num.default),
        (aten.hardtanh_backward.grad_input, aten.hardtanh_backward.default),
        (aten.log_sigmoid_forward.output, aten.log_sigmoid_forward.default),
        (aten.log_sigmoid_backward.grad_input, aten.log_sigmoid_backward.default),
        (aten.logit.out, aten.logit.default),
        (aten.mse_loss_backward.grad_input, aten.mse_loss_backward.default),
    ]


def _inplace_variants() -> list[tuple[Any, Any]]:
    """(in-place overload, its out-of-place overload) that torch's table lowers with ``register_inplace``."""
    return [
        (aten.addcdiv_.default, aten.addcdiv.default),
        (aten.addcmul_.default, aten.addcmul.default),
        (aten.frac_.default, aten.frac.default),
        (aten.gelu_.default, aten.gelu.default),
        (aten.hardtanh_.default, aten.hardtanh.default),
        (aten.leaky_relu_.default, aten.leaky_relu.default),
        (aten.lerp_.Scalar, aten.lerp.Scalar),
        (aten.lerp_.Tensor, aten.lerp.Tensor),
        (aten.sgn_.default, aten.sgn.default),
        (aten.sinc_.default, aten.sinc.default),
        (aten.heaviside_.default, aten.heaviside.default),
        (aten.deg2rad_.default, aten.deg2rad.default),
        (aten.rad2deg_.default, aten.rad2deg.default),
        (aten.silu_.default, aten.silu.default),
        (aten.tril_.default, aten.tril.default),
        (aten.triu_.default, aten.triu.default),
        (aten.xlogy_.Tensor, aten.xlogy.Tensor),
        (aten.masked_fill_.Scalar, aten.masked_fill.Scalar),
        (aten.masked_fill_.Tensor, aten.masked_fill.Tensor),
        (aten.logit_.default, aten.logit.default),
        (aten.nan_to_num_.default, aten.nan_to_num.default),
    ]


def core_aten_decompositions() -> dict[Any, Callable[..., Any]]:
    """A decomposition table for ``make_fx``: operators lowered as torch's core ATen set lowers them.

    Mirrors ``torch._decomp.core_aten_decompositions()`` for the operators both define that reach
    a dispatch mode (CompositeImplicitAutograd ones decompose before it): views to
    ``permute``/``alias``/``view``/``squeeze.dims``/``split_with_sizes``/``slice``, reductions to
    their ``dim`` overloads, factories to ``full``/``full_like``/``arange.start_step``, pointwise
    composites, activation backwards and losses to ``where`` and arithmetic, pads and
    ``upsample_nearest2d`` to ``index``; each ``.out`` overload is its functional decomposition
    ``copy_``'d into ``out`` (torch's ``out_wrapper``) and each in-place one the out-of-place
    result ``copy_``'d into ``self`` (``register_inplace``). Each gives the values the operator's
    own kernel gives.

    Returns:
        A new dict from ``OperatorHandle`` to its decomposition.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.fx import core_aten_decompositions, make_fx
        >>> gm = make_fx(lambda x: x.t().sum(), core_aten_decompositions())(dc.ones(2, 3))
        >>> [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
        ['aten.permute.default', 'aten.sum.dim_IntList']
    """
    table = _functional_table()
    for out_op, functional in _out_variants():
        table[out_op] = _out_variant(out_op, functional)
    # torch's out_wrapper runs the Python decomposition itself: upsample_bilinear2d.default is not in the table
    table[aten.upsample_bilinear2d.out] = _out_variant(aten.upsample_bilinear2d.out, _upsample_bilinear2d)
    table[aten.eye.out] = _out_variant(aten.eye.out, _eye, factory=True)
    table[aten.logspace.out] = _out_variant(aten.logspace.out, _logspace, factory=True)
    table[aten.eye.m_out] = _out_variant(aten.eye.m_out, _eye, factory=True)
    for inplace_op, functional in _inplace_variants():
        table[inplace_op] = _inplace_variant(functional)
    return table
