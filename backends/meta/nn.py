"""Meta kernels of the nn family (``dispatchcore.native.nn``): geometry and dtype only.

Mirrors the meta functions of the pooling, upsampling and ``im2col``/``col2im`` operators and
torch's meta kernels of ``convolution``/``_convolution``/``convolution_backward`` (the shapes of
``Convolution.cpp``'s output-size rules). Shapes and checks come from the family's shared rules,
so a bad call raises CPU's error here too (torch's Python meta kernels for convolution word some
of them differently; see the family module). Invariant: no kernel reads data; results are
contiguous, as CPU's are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import dtypes as _dt
from dispatchcore import parse_schema
from dispatchcore.native import nn as F
from dispatchcore.native.structured import out_arguments, out_call
from dispatchcore.tensor import Tensor

from . import shapes
from .kernels import _resize_out, meta_tensor

__all__ = ["KERNELS"]


def addmm_meta(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return meta_tensor(F.addmm_check(tuple(self.shape), mat1, mat2, self.dtype), self.dtype)


def addmm__meta(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    shape = F.addmm_check(tuple(self.shape), mat1, mat2, self.dtype)
    if shape != tuple(self.shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                           f"{list(shape)} should match")
    return self


def _exact_copy_out(result: Tensor, out: Tensor) -> Tensor:
    """``out_wrapper(exact_dtype=True)`` of torch's Python meta kernels: resize, then the dtype must be equal."""
    _resize_out(out, tuple(result.shape), python_meta=True)
    if out.dtype is not result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype torch.{result.dtype.name} but got "
                           f"torch.{out.dtype.name} instead")
    return out


def _inplace_copy(self: Tensor, result: Tensor) -> Tensor:
    """``register_inplace``'s ``self.copy_(result)`` on meta: the result must broadcast to self."""
    if shapes.broadcast_shapes(tuple(self.shape), tuple(result.shape)) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(shapes.broadcast_shapes(tuple(self.shape), tuple(result.shape)))}")
    return self


def baddbmm_meta(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """The Python meta of torch: self expanded, the batches 3-d, all three dtypes equal, then bmm's sizes."""
    shape = (F.dim_size(batch1, 0), F.dim_size(batch1, 1), F.dim_size(batch2, 2))
    if tuple(self.shape) != shape:
        F.expand_size_check(self, shape)
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if not self.dtype is batch1.dtype is batch2.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input: torch.{self.dtype.name}, batch1: "
                           f"torch.{batch1.dtype.name}, batch2: torch.{batch2.dtype.name}")
    F.bmm_shape_check(batch1, batch2)
    return meta_tensor(shape, self.dtype)


def addbmm_meta(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """The Python meta of torch: self expanded, then ``addbmm_impl_``'s shape checks (no dtype check)."""
    shape = F.addbmm_check(self, batch1, batch2)
    return meta_tensor(shape, self.dtype)


def convolution_meta(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                     dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    shape = F.conv_check(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return meta_tensor(shape, input.dtype)


def _convolution_meta(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                      dilation: Any, transposed: bool, output_padding: Any, groups: int, benchmark: bool,
                      deterministic: bool, cudnn_enabled: bool, allow_tf32: bool) -> Tensor:
    return convolution_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


def convolution_backward_meta(grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes: Any,  # noqa: A002
                              stride: Any, padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                              groups: int, output_mask: Any) -> tuple[Any, Any, Any]:
    grad_input = meta_tensor(tuple(input.shape), grad_output.dtype) if output_mask[0] else None
    grad_weight = meta_tensor(tuple(weight.shape), grad_output.dtype) if output_mask[1] else None
    grad_bias = meta_tensor(tuple(bias_sizes), grad_output.dtype) if output_mask[2] and bias_sizes else None
    return grad_input, grad_weight, grad_bias


def _pool_kernels(n: int) -> dict[str, Callable[..., Any]]:
    def max_pool(self: Tensor, kernel_size: Any, stride: Any = (), padding: Any = (0,) * n, dilation: Any = (1,) * n,
                 ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
        shape = F.max_pool_check(tuple(self.shape), n, kernel_size, stride, padding, dilation, ceil_mode)[0]
        return meta_tensor(shape, self.dtype), meta_tensor(shape, _dt.int64)

    def max_pool_backward(grad_output: Tensor, self: Tensor, kernel_size: Any, stride: Any, padding: Any,
                          dilation: Any, ceil_mode: bool, indices: Tensor) -> Tensor:
        F.max_pool_check(tuple(self.shape), n, kernel_size, stride, padding, dilation, ceil_mode)
        return meta_tensor(tuple(self.shape), grad_output.dtype)

    def avg_pool(self: Tensor, kernel_size: Any, stride: Any = (), padding: Any = (0,) * n,
                 ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Any = None) -> Tensor:
        shape = F.avg_pool_check(tuple(self.shape), n, kernel_size, stride, padding, ceil_mode, divisor_override)[0]
        return meta_tensor(shape, self.dtype)

    def avg_pool_backward(grad_output: Tensor, self: Tensor, kernel_size: Any, stride: Any, padding: Any,
                          ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Tensor:
        F.avg_pool_check(tuple(self.shape), n, kernel_size, stride, padding, ceil_mode, divisor_override)
        return meta_tensor(tuple(self.shape), grad_output.dtype)

    def adaptive(self: Tensor, output_size: Any) -> Tensor:
        return meta_tensor(F.adaptive_pool_check(tuple(self.shape), n, output_size), self.dtype)

    def adaptive_backward(grad_output: Tensor, self: Tensor) -> Tensor:
        return meta_tensor(tuple(self.shape), grad_output.dtype)

    return {f"max_pool{n}d_with_indices": max_pool, f"max_pool{n}d_with_indices_backward": max_pool_backward,
            f"avg_pool{n}d": avg_pool, f"avg_pool{n}d_backward": avg_pool_backward,
            f"_adaptive_avg_pool{n}d": adaptive, f"_adaptive_avg_pool{n}d_backward": adaptive_backward}


def upsample_nearest2d_meta(self: Tensor, output_size: Any, scales_h: Any = None, scales_w: Any = None) -> Tensor:
    return meta_tensor(F.upsample_check(tuple(self.shape), output_size), self.dtype)


def upsample_nearest2d_backward_meta(grad_output: Tensor, output_size: Any, input_size: Any, scales_h: Any = None,
                                     scales_w: Any = None) -> Tensor:
    return meta_tensor(F.upsample_backward_check(tuple(grad_output.shape), output_size, input_size),
                       grad_output.dtype)


def upsample_bilinear2d_meta(self: Tensor, output_size: Any, align_corners: bool, scales_h: Any = None,
                             scales_w: Any = None) -> Tensor:
    return meta_tensor(F.upsample_check(tuple(self.shape), output_size), self.dtype)


def upsample_bilinear2d_backward_meta(grad_output: Tensor, output_size: Any, input_size: Any, align_corners: bool,
                                      scales_h: Any = None, scales_w: Any = None) -> Tensor:
    return meta_tensor(F.upsample_backward_check(tuple(grad_output.shape), output_size, input_size),
                       grad_output.dtype)


def im2col_meta(self: Tensor, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> Tensor:
    return meta_tensor(F.im2col_check(tuple(self.shape), kernel_size, dilation, padding, stride), self.dtype)


def col2im_meta(self: Tensor, output_size: Any, kernel_size: Any, dilation: Any, padding: Any,
                stride: Any) -> Tensor:
    return meta_tensor(F.col2im_check(tuple(self.shape), output_size, kernel_size, dilation, padding, stride),
                       self.dtype)


FUNCTIONAL: dict[str, Callable[..., Any]] = {
    "addmm": addmm_meta, "addmm_": addmm__meta,
    **{name: kernel for base, meta in (("baddbmm", baddbmm_meta), ("addbmm", addbmm_meta)) for name, kernel in (
        (base, meta), (f"{base}_", lambda self, b1, b2, *, beta=1, alpha=1, _m=meta: _inplace_copy(
            self, _m(self, b1, b2, beta=beta, alpha=alpha))),
        (f"{base}.out", lambda self, b1, b2, *, beta=1, alpha=1, out, _m=meta: _exact_copy_out(
            _m(self, b1, b2, beta=beta, alpha=alpha), out)))},
    "convolution": convolution_meta, "_convolution": _convolution_meta,
    "convolution_backward": convolution_backward_meta,
    **_pool_kernels(2), **_pool_kernels(3),
    "upsample_nearest2d": upsample_nearest2d_meta, "upsample_nearest2d_backward": upsample_nearest2d_backward_meta,
    "upsample_bilinear2d": upsample_bilinear2d_meta,
    "upsample_bilinear2d_backward": upsample_bilinear2d_backward_meta,
    "im2col": im2col_meta, "col2im": col2im_meta,
}


def _out_kernel(functional: Callable[..., Any], outs: tuple[str, ...]) -> Callable[..., Any]:
    def out_meta(*args: Any, **kwargs: Any) -> Any:
        targets = tuple(kwargs.pop(name) for name in outs)
        results = out_call("exact", functional, args, kwargs, targets)
        for r, out in zip(results, targets):
            _resize_out(out, tuple(r.shape), tuple(r.stride()))
        return targets[0] if len(targets) == 1 else targets

    return out_meta


def _kernels() -> dict[str, Callable[..., Any]]:
    schemas = {s.partition("(")[0]: s for s in F.SCHEMAS}
    outs = {name: _out_kernel(FUNCTIONAL[of], out_arguments(parse_schema(f"aten::{schemas[name]}")))
            for name, of in F.OUTS.items()}
    return {**FUNCTIONAL, **outs}


KERNELS = _kernels()
