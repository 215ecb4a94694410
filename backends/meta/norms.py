"""Meta kernels of the norms family (``dispatchcore.native.norms``): geometry and dtype only.

Mirrors torch's meta functions (and Python meta kernels) for the normalisations, dropout,
padding, distances and binary cross entropy: each result has the shape, strides and dtype a CPU
call gives, and a bad call raises CPU's error, from the family's shared rules. The
CompositeExplicitAutograd operators torch also gives a Meta kernel run their composite.
Invariant: no kernel reads data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import dtypes as _dt
from dispatchcore import parse_schema
from dispatchcore.native import norms as N
from dispatchcore.native.structured import check_out_dtype, out_arguments
from dispatchcore.shapes import broadcast_shapes, is_channels_last_strides
from dispatchcore.tensor import Tensor

from .kernels import _resize_out, meta_tensor

__all__ = ["KERNELS"]


def _suggested(t: Tensor, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """A new meta tensor laid out as ``empty_like(t, t.suggest_memory_format())``."""
    if t.dim() == 4 and len(shape) == 4 and is_channels_last_strides(tuple(t.shape), t.stride()):
        n, c, h, w = shape
        return meta_tensor(shape, dtype, (h * w * c, 1, w * c, c))
    return meta_tensor(shape, dtype)


def _preserved(t: Tensor, dtype: Any) -> Tensor:
    """``empty_like(t)`` (preserve_format): a dense tensor's strides, else contiguous."""
    from dispatchcore.shapes import is_non_overlapping_and_dense

    if is_non_overlapping_and_dense(tuple(t.shape), t.stride()):
        return meta_tensor(tuple(t.shape), dtype, t.stride())
    return meta_tensor(tuple(t.shape), dtype)


def _acc(dtype: Any) -> Any:
    return _dt.float32 if dtype is _dt.float16 else dtype


def _shape(t: Any) -> Any:
    return None if t is None else tuple(t.shape)


def native_layer_norm_meta(input, normalized_shape, weight, bias, eps):
    axis = N.layer_norm_axis(input.shape, normalized_shape, _shape(weight), _shape(bias))
    mixed = N.mixed_dtype_check(input.dtype, *(None if t is None else t.dtype for t in (weight, bias)))
    N.floating_check("LayerNormKernelImpl", input.dtype)
    stat = tuple(input.shape[:axis]) + (1,) * (input.dim() - axis)
    stat_dt = _dt.float32 if mixed else input.dtype
    return meta_tensor(tuple(input.shape), input.dtype), meta_tensor(stat, stat_dt), meta_tensor(stat, stat_dt)


def native_layer_norm_backward_meta(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    return (meta_tensor(tuple(input.shape), input.dtype) if output_mask[0] else None,
            meta_tensor(tuple(weight.shape), weight.dtype) if output_mask[1] and weight is not None else None,
            meta_tensor(tuple(bias.shape), bias.dtype) if output_mask[2] and bias is not None else None)


def native_group_norm_meta(input, weight, bias, N_, C, HxW, group, eps):  # noqa: N803
    N.group_norm_check(input.shape, _shape(weight), _shape(bias), C, group)
    mixed = N.mixed_dtype_check(input.dtype, *(None if t is None else t.dtype for t in (weight, bias)))
    N.floating_check("GroupNormKernelImpl", input.dtype)
    N.group_norm_numel_check(input.numel(), N_, C, HxW)
    stat_dt = _dt.float32 if mixed else input.dtype
    return (_suggested(input, tuple(input.shape), input.dtype), meta_tensor((N_, group), stat_dt),
            meta_tensor((N_, group), stat_dt))


def native_group_norm_backward_meta(grad_out, input, mean, rstd, weight, N_, C, HxW, group, output_mask):  # noqa: N803
    return (_suggested(input, tuple(input.shape), input.dtype) if output_mask[0] else None,
            meta_tensor((C,), input.dtype) if output_mask[1] and weight is not None else None,
            meta_tensor((C,), input.dtype) if output_mask[2] else None)


def _batch_norm_meta(input, weight, bias, running_mean, running_var, training, momentum, eps):
    C = N.batch_norm_check(input.shape, input.dtype, training, running_mean, running_var)  # noqa: N806
    acc = _acc(input.dtype)
    stat = (C,) if training else (0,)
    return _suggested(input, tuple(input.shape), input.dtype), meta_tensor(stat, acc), meta_tensor(stat, acc)


def _no_stats_meta(input, weight, bias, training, momentum, eps):
    return _batch_norm_meta(input, weight, bias, None, None, training, momentum, eps)


def native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                                    eps, output_mask):
    C = input.shape[1]  # noqa: N806
    return (_suggested(input, tuple(input.shape), input.dtype) if output_mask[0] else None,
            meta_tensor((C,), input.dtype if weight is None else weight.dtype) if output_mask[1] else None,
            meta_tensor((C,), input.dtype) if output_mask[2] else None)


def embedding_dense_backward_meta(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    N.embedding_indices_check(indices, 2, "embedding_backward")
    dim = grad_output.shape[-1] if grad_output.dim() else 1
    return meta_tensor((num_weights, dim), grad_output.dtype)


def native_dropout_meta(input, p, train):
    if input.numel() == 0:
        return meta_tensor(tuple(input.shape), input.dtype), meta_tensor(tuple(input.shape), input.dtype)
    if train is None or train:
        N.bernoulli_p_check(1.0 - p)
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_dt.SCALAR_TYPE_NAMES[input.dtype.name]}")
    return _preserved(input, input.dtype), _preserved(input, _dt.bool_)


def native_dropout_backward_meta(grad_output, mask, scale):
    return _preserved(grad_output, grad_output.dtype)


def bernoulli__float_meta(self, p=0.5, *, generator=None):
    N.bernoulli_p_check(p)
    return self


def _pad_kernels(kind: str, k: int) -> dict[str, Callable[..., Any]]:
    def forward(self, padding):
        shape = N.pad_output_shape(kind, k, self.shape, padding, self.dtype)
        return _suggested(self, shape, self.dtype)

    def backward(grad_output, self, padding):
        N.pad_backward_check(kind, k, grad_output.shape, self.shape, padding)
        return _suggested(self, tuple(self.shape), grad_output.dtype)

    return {f"{kind}_pad{k}d": forward, f"{kind}_pad{k}d_backward": backward}


def _cdist_forward_meta(x1, x2, p, compute_mode):
    return meta_tensor(N.cdist_check(x1, x2, p, compute_mode), x1.dtype)


def _cdist_backward_meta(grad, x1, x2, p, cdist):
    shape = N.cdist_check(x1, x2, 2.0)
    return meta_tensor((*shape[:-2], x1.shape[-2], x1.shape[-1]), x1.dtype)


def _pdist_forward_meta(self, p=2.0):
    return meta_tensor((N.pdist_check(self, p),), self.dtype)


def _pdist_backward_meta(grad, self, p, pdist):
    return meta_tensor(tuple(self.shape), self.dtype)


def _bce_check(self, target, weight):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for '
                                  f"'{_dt.SCALAR_TYPE_NAMES[self.dtype.name]}'")
    broadcast_shapes(tuple(target.shape), tuple(self.shape))


def binary_cross_entropy_meta(self, target, weight=None, reduction=1):
    _bce_check(self, target, weight)
    return meta_tensor(tuple(self.shape) if reduction == 0 else (), self.dtype)


def binary_cross_entropy_backward_meta(grad_output, self, target, weight=None, reduction=1):
    _bce_check(self, target, weight)
    return meta_tensor(tuple(self.shape), self.dtype)


FUNCTIONAL: dict[str, Callable[..., Any]] = {
    "native_layer_norm": native_layer_norm_meta, "native_layer_norm_backward": native_layer_norm_backward_meta,
    "native_group_norm": native_group_norm_meta, "native_group_norm_backward": native_group_norm_backward_meta,
    "native_batch_norm": _batch_norm_meta, "_native_batch_norm_legit": _batch_norm_meta,
    "_native_batch_norm_legit.no_stats": _no_stats_meta,
    "native_batch_norm_backward": native_batch_norm_backward_meta,
    "embedding_dense_backward": embedding_dense_backward_meta,
    "native_dropout": native_dropout_meta, "native_dropout_backward": native_dropout_backward_meta,
    "bernoulli_.float": bernoulli__float_meta,
    **{name: kernel for kind in ("reflection", "replication") for k in (1, 2, 3)
       for name, kernel in _pad_kernels(kind, k).items()},
    "_cdist_forward": _cdist_forward_meta, "_cdist_backward": _cdist_backward_meta,
    "_pdist_forward": _pdist_forward_meta, "_pdist_backward": _pdist_backward_meta,
    "binary_cross_entropy": binary_cross_entropy_meta,
    "binary_cross_entropy_backward": binary_cross_entropy_backward_meta,
}
# the CompositeExplicitAutograd operators with a Meta kernel in torch: their composite, on meta tensors
COMPOSITE = ("_native_batch_norm_legit_no_training", "embedding", "_euclidean_dist", "binary_cross_entropy_with_logits")


def _out_kernel(functional: Callable[..., Any], out_name: str) -> Callable[..., Any]:
    def out_meta(*args: Any, **kwargs: Any) -> Any:
        out = kwargs.pop(out_name)
        r = functional(*args, **kwargs)
        check_out_dtype("exact", r.dtype, out.dtype)
        _resize_out(out, tuple(r.shape), tuple(r.stride()))
        return out

    return out_meta


def _kernels() -> dict[str, Callable[..., Any]]:
    schemas = {s.partition("(")[0]: s for s in N.SCHEMAS}
    outs = {name: _out_kernel(FUNCTIONAL[of], out_arguments(parse_schema(f"aten::{schemas[name]}"))[0])
            for name, of in N.OUTS.items()}
    return {**FUNCTIONAL, **outs, **{name: N.EXPLICIT[name] for name in COMPOSITE}}


KERNELS = _kernels()
