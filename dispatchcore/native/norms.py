"""Normalisation, embedding, dropout, padding, distances and composite losses.

The family: ``native_layer_norm``/``native_group_norm``/``native_batch_norm`` (and the
``_native_batch_norm_legit`` forms) with their backward operators and the public ``layer_norm``/
``group_norm``/``batch_norm``; ``embedding``; ``native_dropout``/``dropout`` (and ``bernoulli_``,
which ``dropout`` draws with on CPU); the reflection and replication pads and ``pad``;
``cdist``/``pdist``; ``einsum``; ``cross_entropy_loss`` and the binary cross entropies.

Mirrors ``aten/src/ATen/native/layer_norm.cpp``, ``group_norm.cpp``, ``Normalization.cpp``,
``Embedding.cpp``, ``Dropout.cpp``, ``PadNd.cpp``/``ReflectionPad.cpp``/``ReplicationPadding.cpp``,
``Distance.cpp``, ``Linear.cpp`` (einsum) and ``Loss.cpp``/``LossNLL.cpp`` as the dispatcher sees
them, and the formulas of ``derivatives.yaml`` (``FunctionsManual.cpp``). The rules the CPU and
Meta backends share (torch's checks, their texts, output shapes) are the plain functions of the
first section, so both backends fail alike.

Invariant: each operator is registered at exactly the keys torch 2.13 registers it; composite
kernels and derivative formulas call dispatched operators only. A derivative formula that runs
with grad mode on (``create_graph=True``) computes with differentiable primitives, as torch's
``infinitely_differentiable_*`` formulas do, so double backward works; otherwise it calls the
backward operator, as torch's trace shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES
from ..dtypes import bool_ as _bool
from ..ops import aten as A
from ..tensor import Tensor
from . import Bindings

__all__ = ["FUNCTIONS", "METHODS", "OUTS", "SCHEMAS", "batch_norm_check", "cdist_check", "embedding_indices_check",
           "group_norm_check", "layer_norm_axis", "mixed_dtype_check", "pad_backward_check", "pad_output_shape",
           "pdist_check", "register", "register_autograd"]

_PAD_OUT = "Tensor(a!) out) -> Tensor(a!)"
_PAD_GRAD = "Tensor(a!) grad_input) -> Tensor(a!)"
SCHEMAS: tuple[str, ...] = (
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)",
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, "
    "Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, "
    "SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor",
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
    "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)",
    "_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
    "Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, "
    "Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    "_batch_norm_impl_index(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps, bool cudnn_enabled) -> (Tensor, Tensor, Tensor, Tensor, int)",
    "_batch_norm_impl_index_backward(int impl_index, Tensor input, Tensor grad_output, Tensor? weight, "
    "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_var_transform, bool train, "
    "float eps, bool[3] output_mask, Tensor reservedSpace) -> (Tensor, Tensor, Tensor)",
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
    "bool sparse=False) -> Tensor",
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, "
    "bool scale_grad_by_freq) -> Tensor",
    "embedding_backward(Tensor grad, Tensor indices, SymInt num_weights, SymInt padding_idx, "
    "bool scale_grad_by_freq, bool sparse) -> Tensor",
    "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
    "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
    "dropout(Tensor input, float p, bool train) -> Tensor",
    "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
    *(s.replace("KIND", kind).replace("K", str(k)).replace("N", str(2 * k))
      for kind in ("reflection", "replication") for k in (1, 2, 3) for s in (
          "KIND_padKd(Tensor self, SymInt[N] padding) -> Tensor",
          f"KIND_padKd.out(Tensor self, SymInt[N] padding, *, {_PAD_OUT}",
          "KIND_padKd_backward(Tensor grad_output, Tensor self, SymInt[N] padding) -> Tensor",
          f"KIND_padKd_backward.grad_input(Tensor grad_output, Tensor self, SymInt[N] padding, *, {_PAD_GRAD}")),
    'pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor',
    "_pad_enum(Tensor self, SymInt[] pad, int mode, float? value=None) -> Tensor",
    "_pad_circular(Tensor self, SymInt[] pad) -> Tensor",
    "_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
    "_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor",
    "cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor",
    "_euclidean_dist(Tensor x1, Tensor x2) -> Tensor",
    "_pdist_forward(Tensor self, float p=2.) -> Tensor",
    "_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor",
    "pdist(Tensor self, float p=2.) -> Tensor",
    "einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor",
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
    "binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, "
    "int reduction=1) -> Tensor",
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
    "int reduction=1) -> Tensor",
)

# The out= overloads with backend kernels (the pads are structured in torch, or have CPU out= kernels):
# out overload -> functional overload. CPU and Meta build them from the functional kernels.
OUTS: dict[str, str] = {
    **{f"{kind}_pad{k}d.out": f"{kind}_pad{k}d" for kind in ("reflection", "replication") for k in (1, 2, 3)},
    **{f"{kind}_pad{k}d_backward.grad_input": f"{kind}_pad{k}d_backward"
       for kind in ("reflection", "replication") for k in (1, 2, 3)},
}

_IMPROVE = ("  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)")


# --- rules the backends share (checks, texts, shapes) ----------------------------------------------------
def _prod(values: Sequence[int]) -> int:
    n = 1
    for v in values:
        n *= int(v)
    return n


def _num(value: float) -> str:
    """A double as c10::str prints it (``%g``)."""
    return f"{value:g}"


def layer_norm_axis(shape: Sequence[int], normalized_shape: Sequence[int], weight_shape: Sequence[int] | None,
                    bias_shape: Sequence[int] | None) -> int:
    """The first normalised dim, after ``_check_layer_norm_inputs``'s checks (torch's order and texts)."""
    ns = [int(s) for s in normalized_shape]
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for name, given in (("weight", weight_shape), ("bias", bias_shape)):
        if given is not None and list(given) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(given)} and normalized_shape = {ns}")
    shape = [int(s) for s in shape]
    axis = len(shape) - len(ns)
    if axis < 0 or shape[axis:] != ns:
        raise RuntimeError(f"Given normalized_shape={ns}, expected input with shape [*, {', '.join(map(str, ns))}], "
                           f"but got input of size{shape}")
    return axis


def mixed_dtype_check(input_dtype: Any, *params: Any) -> bool:
    """``is_mixed_type``/``check_mixed_data_type`` (CPU): parameters of another dtype than the input.

    Allowed only for a reduced-precision input with float32 parameters; returns whether they mix.
    """
    dtypes = [p for p in params if p is not None]
    if not any(d is not input_dtype for d in dtypes):
        return False
    if input_dtype.name not in ("float16", "bfloat16", "float32"):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if any(d.name != "float32" for d in dtypes):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    return input_dtype.name != "float32"


def floating_check(kernel: str, dtype: Any) -> None:
    """AT_DISPATCH_FLOATING_TYPES: other dtypes raise torch's NotImplementedError."""
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_TYPE_NAMES[dtype.name]}\'')


def group_norm_check(shape: Sequence[int], weight_shape: Sequence[int] | None, bias_shape: Sequence[int] | None,
                     C: int, group: int) -> None:  # noqa: N803 - torch's names
    """``check_group_norm_inputs``: channels divisible by groups, weight and bias of C elements."""
    if group <= 0 or C % group != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(shape)} and num_groups={group}")
    for name, given in (("weight", weight_shape), ("bias", bias_shape)):
        if given is not None and (len(given) != 1 or _prod(given) != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(given)} and input of shape {list(shape)}")


def group_norm_numel_check(numel: int, N: int, C: int, HxW: int) -> None:  # noqa: N803
    if numel != N * C * HxW:
        raise RuntimeError(f"Expected X.numel() == N * C * HxW to be true, but got false.{_IMPROVE}")


def batch_norm_check(shape: Sequence[int], dtype: Any, training: bool, running_mean: Any, running_var: Any) -> int:
    """``batch_norm_cpu``'s checks; the number of channels."""
    if len(shape) < 2:
        lo, hi = (-1, 0) if not shape else (-len(shape), len(shape) - 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got 1)")
    floating_check("batch_norm", dtype)
    if training and _prod(shape) == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = {list(shape)}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode")
    return int(shape[1])


def embedding_indices_check(indices: Tensor, position: int, caller: str) -> None:
    """``checkScalarTypes(indices, {kLong, kInt})`` with torch's text."""
    if indices.dtype.name not in ("int64", "int32"):
        prefix = "" if indices.device.type == "cpu" else f"{indices.device.type}."
        raise RuntimeError(f"Expected tensor for argument #{position} 'indices' to have one of the following scalar "
                           f"types: Long, Int; but got torch.{prefix}{SCALAR_TYPE_NAMES[indices.dtype.name]}Tensor "
                           f"instead (while checking arguments for {caller})")


_DIM_NAMES = ("W", "H", "D")


def pad_output_shape(kind: str, k: int, shape: Sequence[int], padding: Sequence[int], dtype: Any) -> tuple[int, ...]:
    """The output shape of ``{kind}_pad{k}d``, after torch's checks (``padding.h``, ``ReflectionPad.cpp``, ...).

    Example:
        >>> pad_output_shape("reflection", 1, (1, 2, 3), (1, 2), None)
        (1, 2, 6)
    """
    pad = [int(p) for p in padding]
    if len(pad) != 2 * k:
        tail = f", but got: {len(pad)}" if kind == "reflection" else ""
        raise RuntimeError(f"padding size is expected to be {2 * k}{tail}")
    shape = [int(s) for s in shape]
    ndim = len(shape)
    batch = ndim == k + 2
    valid = (batch and all(s != 0 for s in shape[1:])) or (ndim == k + 1 and all(s != 0 for s in shape))
    if not valid:
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {shape}")
    if dtype is not None and dtype is _bool:
        raise NotImplementedError(f'"{kind}_pad{k}d" not implemented for \'Bool\'')
    sizes = [shape[ndim - 1 - i] for i in range(k)]  # W, H, D
    outs = [sizes[i] + pad[2 * i] + pad[2 * i + 1] for i in range(k)]
    if kind == "reflection":
        for i in range(k):
            if not (pad[2 * i] < sizes[i] and pad[2 * i + 1] < sizes[i]):
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({pad[2 * i]}, {pad[2 * i + 1]}) at dimension "
                                   f"{ndim - 1 - i} of input {shape}")
    if all(o < 1 for o in outs):
        raise RuntimeError(_too_small(kind, k, sizes, outs))
    result = tuple(shape[:ndim - k]) + tuple(reversed(outs))
    for o in result:
        if o < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {o}: {list(result)}")
    return result


def _too_small(kind: str, k: int, sizes: list[int], outs: list[int]) -> str:
    if k == 1:
        return f"input (W: {sizes[0]}) is too small. Calculated output W: {outs[0]}"
    if k == 2:
        space = " " if kind == "replication" else ""
        return (f"input (H: {sizes[1]}, W: {sizes[0]}{space}) is too small. Calculated output H: {outs[1]} "
                f"W: {outs[0]}")
    return (f"input (D: {sizes[2]} H: {sizes[1]}, W: {sizes[0]}) is too small. Calculated output D: {outs[2]} "
            f"H: {outs[1]} W: {outs[0]}")


def pad_backward_check(kind: str, k: int, grad_shape: Sequence[int], shape: Sequence[int],
                       padding: Sequence[int]) -> None:
    """The ``{kind}_pad{k}d_backward`` checks: the gradient has the padded output's sizes."""
    expected = pad_output_shape(kind, k, shape, padding, None)
    if len(padding) != 2 * k:
        return
    camel = kind == "replication" or k == 2
    for i in range(k):
        want, got = expected[len(expected) - 1 - i], int(grad_shape[len(grad_shape) - 1 - i])
        if want != got:
            name = "gradOutput" if camel else "grad_output"
            comma = "" if (kind, k) == ("replication", 1) else ","
            raise RuntimeError(f"{name} {('width', 'height', 'depth')[i]} unexpected. Expected: {want}{comma} "
                               f"Got: {got}")


def cdist_check(x1: Tensor, x2: Tensor, p: float, compute_mode: Any = None) -> tuple[int, ...]:
    """``_cdist_forward``'s checks; the result shape (broadcast batch dims, then r1, r2)."""
    from ..shapes import broadcast_shapes

    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{SCALAR_TYPE_NAMES[t.dtype.name]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode is not None and compute_mode not in (0, 1, 2):
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {compute_mode}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[x1.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[x2.dtype.name]}")
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    return (*batch, x1.shape[-2], x2.shape[-2])


def pdist_check(self: Tensor, p: float) -> int:
    """``pdist``'s checks; the number of pairs."""
    if self.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.dim()}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = self.shape[0]
    return n * (n - 1) // 2


def dropout_p_check(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {_num(p)}")


def bernoulli_p_check(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")


# --- small dispatched helpers ---------------------------------------------------------------------------------
def _like_scalar(value: float, like: Tensor) -> Tensor:
    return A.scalar_tensor.default(value, dtype=like.dtype, device=like.device)


def _channel_view(t: Tensor | None, ndim: int) -> Tensor | None:
    """A per-channel vector viewed as [1, C, 1, ...] against an ndim-d input."""
    if t is None:
        return None
    return A.view.default(t, [1, -1] + [1] * (ndim - 2))


def _empty(shape: Sequence[int], like: Tensor, dtype: Any = None) -> Tensor:
    return A.empty.memory_format(list(shape), dtype=like.dtype if dtype is None else dtype, device=like.device)


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        y = A.mul.Tensor(y, weight)
    if bias is not None:
        y = A.add.Tensor(y, bias)
    return y


def _normalized_grad(g_hat: Tensor, xhat: Tensor, invstd: Tensor, dims: list[int]) -> Tensor:
    """``invstd * (g - mean(g) - xhat * mean(g * xhat))`` over ``dims``: d(normalise)/dx applied to g."""
    mean_g = A.mean.dim(g_hat, dims, True)
    mean_gx = A.mean.dim(A.mul.Tensor(g_hat, xhat), dims, True)
    return A.mul.Tensor(invstd, A.sub.Tensor(A.sub.Tensor(g_hat, mean_g), A.mul.Tensor(xhat, mean_gx)))


def _moments(x: Tensor, dims: list[int], eps: float) -> tuple[Tensor, Tensor]:
    """Mean and ``rsqrt(biased var + eps)`` over dims (kept)."""
    mean = A.mean.dim(x, dims, True)
    var = A.var.correction(x, dims, correction=0, keepdim=True)
    return mean, A.rsqrt.default(A.add.Scalar(var, eps))


def _grad_enabled() -> bool:
    from ..autograd.grad_mode import is_grad_enabled

    return is_grad_enabled()


def _channels_last(t: Tensor) -> bool:
    """``suggest_memory_format() == channels_last``: a 4-d tensor laid out NHWC."""
    from ..shapes import is_channels_last_strides

    return t.dim() == 4 and is_channels_last_strides(tuple(t.shape), t.stride())


# --- CompositeExplicitAutograd kernels --------------------------------------------------------------------------
def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None, bias: Tensor | None,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``math_native_layer_norm``: the moments over the trailing dims, kept as the statistics' shape."""
    axis = layer_norm_axis(input.shape, normalized_shape, None if weight is None else weight.shape,
                           None if bias is None else bias.shape)
    mean, rstd = _moments(input, list(range(axis, input.dim())), eps)
    out = _affine(A.mul.Tensor(A.sub.Tensor(input, mean), rstd), weight, bias)
    return out, mean, rstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int,  # noqa: N803
                      HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``math_group_norm``: the moments of each (sample, group), statistics of shape [N, group]."""
    group_norm_check(input.shape, None if weight is None else weight.shape, None if bias is None else bias.shape,
                     C, group)
    group_norm_numel_check(input.numel(), N, C, HxW)
    grouped = A.reshape.default(input, [N, group, -1])
    mean, rstd = _moments(grouped, [2], eps)
    out = A.reshape.default(A.mul.Tensor(A.sub.Tensor(grouped, mean), rstd), list(input.shape))
    out = _affine(out, _channel_view(weight, input.dim()), _channel_view(bias, input.dim()))
    return out, A.reshape.default(mean, [N, group]), A.reshape.default(rstd, [N, group])


def _native_batch_norm_legit_no_training(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                                         running_mean: Tensor, running_var: Tensor, momentum: float,
                                         eps: float) -> tuple[Tensor, Tensor, Tensor]:
    return A._native_batch_norm_legit.default(input, weight, bias, running_mean, running_var, False, momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by ``indices`` (``index_select``), shaped ``indices.shape + [dim]``."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    embedding_indices_check(indices, 1, "embedding")
    if indices.dim() == 1:
        return A.index_select.default(weight, 0, indices)
    rows = A.index_select.default(weight, 0, A.reshape.default(indices, [-1]))
    return A.view.default(rows, [*indices.shape, *weight.shape[1:]])


def _euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    """``sqrt(clamp_min(|x1|^2 - 2 x1.x2 + |x2|^2, 0))`` through one matrix product of padded operands."""
    n1 = A.sum.dim_IntList(A.pow.Tensor_Scalar(x1, 2), [-1], True)
    n2 = A.sum.dim_IntList(A.pow.Tensor_Scalar(x2, 2), [-1], True)
    left = A.cat.default([A.mul.Scalar(x1, -2), n1, A.ones_like.default(n1)], -1)
    right = A.cat.default([x2, A.ones_like.default(n2), n2], -1)
    squared = A.matmul.default(left, A.transpose.int(right, -2, -1))
    return A.sqrt.default(A.clamp_min.default(squared, 0))


def binary_cross_entropy_with_logits(self: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 1) -> Tensor:
    """``(1 - t) x + (1 + (pw - 1) t) softplus(-x)``, with softplus written stably (torch's formula)."""
    # softplus(-x) = log1p(exp(-|x|)) + max(-x, 0): no overflow for large |x|
    softplus = A.add.Tensor(A.log1p.default(A.exp.default(A.neg.default(A.abs.default(self)))),
                            A.clamp_min.default(A.neg.default(self), 0))
    one_minus_t = A.rsub.Scalar(target, 1)
    if pos_weight is not None:
        log_weight = A.add.Scalar(A.mul.Tensor(A.sub.Scalar(pos_weight, 1), target), 1)
        loss = A.add.Tensor(A.mul.Tensor(one_minus_t, self), A.mul.Tensor(log_weight, softplus))
    else:
        loss = A.add.Tensor(A.mul.Tensor(one_minus_t, self), softplus)
    if weight is not None:
        loss = A.mul.Tensor(loss, weight)
    return _reduce(loss, reduction)


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    """``apply_loss_reduction``: 0 none, 1 mean, 2 sum."""
    if reduction == 1:
        return A.mean.default(loss)
    if reduction == 2:
        return A.sum.default(loss)
    return loss


EXPLICIT: dict[str, Callable[..., Any]] = {  # CompositeExplicitAutograd
    "native_layer_norm": native_layer_norm, "native_group_norm": native_group_norm,
    "_native_batch_norm_legit_no_training": _native_batch_norm_legit_no_training,
    "embedding": embedding, "_euclidean_dist": _euclidean_dist,
    "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
}


# --- CompositeImplicitAutograd kernels --------------------------------------------------------------------------
def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    return A.native_layer_norm.default(input, normalized_shape, weight, bias, eps)[0]


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    """``native_group_norm`` on the input made contiguous in its suggested memory format."""
    from ..shapes import wrap_dim

    N = input.shape[wrap_dim(0, input.dim())] if input.dim() else 1  # noqa: N806 - torch's names
    C = input.shape[wrap_dim(1, input.dim())]  # noqa: N806
    group_norm_check(input.shape, None if weight is None else weight.shape, None if bias is None else bias.shape,
                     C, num_groups)
    x = input if (input.is_contiguous() or _channels_last(input)) else A.contiguous.default(input)
    w = None if weight is None else A.contiguous.default(weight)
    b = None if bias is None else A.contiguous.default(bias)
    return A.native_group_norm.default(x, w, b, N, C, _prod(input.shape[2:]), num_groups, eps)[0]


def _check_features(name: str, expected: int, actual: int) -> None:
    if expected != actual:
        raise RuntimeError(f"{name} should contain {expected} elements not {actual}")


def _batch_norm_impl_index(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                           running_var: Tensor | None, training: bool, momentum: float, eps: float,
                           cudnn_enabled: bool) -> tuple[Tensor, Tensor, Tensor, Tensor, int]:
    """The native implementation (index 0): ``native_batch_norm`` and an empty reserve."""
    from ..shapes import wrap_dim

    features = input.shape[wrap_dim(1, input.dim())]
    if input.numel() == 0:
        stats_dtype = input.dtype
        out = A.clone.default(input)
        if weight is not None:
            out = A.mul.Tensor(out, A.select.int(weight, 0, 0))
        if bias is not None:
            out = A.add.Tensor(out, A.select.int(bias, 0, 0))
        return (out, _empty([features], input, stats_dtype), _empty([features], input, stats_dtype),
                _empty([0], input, _uint8()), 0)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None:
            _check_features(name, features, t.numel())
        elif not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None:
            _check_features(name, features, t.numel())
    reserve = _empty([0], input, _uint8())
    out, save_mean, save_invstd = A.native_batch_norm.default(input, weight, bias, running_mean, running_var,
                                                              training, momentum, eps)
    return out, save_mean, save_invstd, reserve, 0


def _uint8() -> Any:
    from ..dtypes import uint8

    return uint8


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return A._batch_norm_impl_index.default(input, weight, bias, running_mean, running_var, training, momentum, eps,
                                            cudnn_enabled)[0]


def _batch_norm_impl_index_backward(impl_index: int, input: Tensor, grad_output: Tensor, weight: Tensor | None,
                                    running_mean: Tensor | None, running_var: Tensor | None,
                                    save_mean: Tensor | None, save_var_transform: Tensor | None, train: bool,
                                    eps: float, output_mask: Sequence[bool], reservedSpace: Tensor) -> Any:  # noqa: N803
    if input.numel() == 0:
        dims = [0, *range(2, input.dim())]
        gb = A.sum.dim_IntList(grad_output, dims) if output_mask[2] else None
        gw = (A.sum.dim_IntList(A.mul.Tensor(grad_output, input), dims)
              if output_mask[1] and weight is not None else None)
        gi = (A.mul.Tensor(grad_output, A.select.int(weight, 0, 0))
              if output_mask[0] and weight is not None else None)
        return gi, gw, gb
    if impl_index != 0:
        raise RuntimeError(f"Unsupported impl_index in _batch_norm_impl_index_backward: {impl_index}")
    return A.native_batch_norm_backward.default(grad_output, input, weight, running_mean, running_var, save_mean,
                                                save_var_transform, train, eps, list(output_mask))


def embedding_backward(grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int, scale_grad_by_freq: bool,
                       sparse: bool) -> Tensor:
    if sparse:
        raise NotImplementedError("embedding(sparse=True): sparse gradients (embedding_sparse_backward) are not "
                                  "modelled, dispatchcore has no sparse layout")
    return A.embedding_dense_backward.default(grad, indices, num_weights, padding_idx, scale_grad_by_freq)


_FUSED_DROPOUT_DEVICES = ("cuda", "xpu", "lazy")


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``at::dropout``: the fused ``native_dropout`` on accelerators, else a ``bernoulli_`` mask (CPU)."""
    device = input.device.type
    fused = device in _FUSED_DROPOUT_DEVICES or device not in ("cpu", "meta")  # PrivateUse1 devices too
    if train and fused and 0 < p < 1 and input.numel() > 0:
        return A.native_dropout.default(input, p, train)[0]
    dropout_p_check(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return A.mul.Tensor(input, A.zeros.default([], dtype=input.dtype, device=input.device))
    noise = A.bernoulli_.float(A.empty_like.default(input), 1 - p)
    A.div_.Scalar(noise, 1 - p)
    return A.mul.Tensor(input, noise)


_PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}
_PAD_MODE_NAMES = {v: k for k, v in _PAD_MODES.items()}


def pad(self: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return A._pad_enum.default(self, list(pad), _PAD_MODES[mode], value)


def _pad_enum(self: Tensor, pad: Sequence[int], mode: int, value: float | None = None) -> Tensor:
    """The padding op of a mode: ``constant_pad_nd``, or the 1/2/3-d reflection, replication, circular pad."""
    pad = list(pad)
    ndim = self.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {ndim}")
    if mode == 0:
        return A.constant_pad_nd.default(self, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{_PAD_MODE_NAMES[mode]}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k in (1, 2, 3) and ndim in (k + 1, k + 2):
        if mode == 3:
            return A._pad_circular.default(self, pad)
        kind = "reflection" if mode == 1 else "replication"
        return getattr(A, f"{kind}_pad{k}d").default(self, pad)
    raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input tensor.")


def _pad_circular(self: Tensor, pad: Sequence[int]) -> Tensor:
    """Copy the input into the middle of a new tensor, then each side from the opposite end, dim by dim."""
    shape = list(self.shape)
    ndim, padded = len(shape), len(pad) // 2
    if ndim - padded not in (1, 2):
        raise RuntimeError("Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                           f"to padding of length {(ndim - 1) * 2} or {(ndim - 2) * 2} respectively but got {len(pad)}")
    out_shape = list(shape)
    for i in range(padded):
        lo, hi, d = pad[2 * i], pad[2 * i + 1], ndim - 1 - i
        out_shape[d] = shape[d] + lo + hi
        if lo > shape[d] or hi > shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[d] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = A.new_empty.default(self, out_shape, dtype=self.dtype, device=self.device)
    dst, src = out, self
    for i in range(padded):
        lo, hi, d = pad[2 * i], pad[2 * i + 1], ndim - 1 - i
        dst = A.slice.Tensor(dst, d, max(lo, 0), out_shape[d] - max(hi, 0))
        src = A.slice.Tensor(src, d, max(-lo, 0), shape[d] - max(-hi, 0))
    A.copy_.default(dst, src)
    for i in range(padded):
        lo, hi, d = pad[2 * i], pad[2 * i + 1], ndim - 1 - i
        if lo > 0:
            end = out_shape[d] - max(hi, 0)
            A.copy_.default(A.slice.Tensor(out, d, 0, lo), A.slice.Tensor(out, d, end - lo, end))
        if hi > 0:
            start = max(lo, 0)
            A.copy_.default(A.slice.Tensor(out, d, out_shape[d] - hi, out_shape[d]),
                            A.slice.Tensor(out, d, start, start + hi))
    return out


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: int | None = None) -> Tensor:
    """``_cdist_forward``, or for p=2 with mode 1 (or more than 25 rows) the matrix-product ``_euclidean_dist``."""
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.numel() == 0 or x2.numel() == 0:
        return A._cdist_forward.default(x1, x2, p, compute_mode)
    mode = 0 if compute_mode is None else compute_mode
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if not (p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))):
        return A._cdist_forward.default(x1, x2, p, compute_mode)
    shape = cdist_check(x1, x2, p, compute_mode)
    batch = list(shape[:-2])
    n = _prod(batch)
    c = x1.shape[-1]
    t1 = A.reshape.default(A.expand.default(x1, [*batch, r1, c]), [n, r1, c])
    t2 = A.reshape.default(A.expand.default(x2, [*batch, r2, c]), [n, r2, c])
    return A.view.default(A._euclidean_dist.default(t1, t2), list(shape))


def pdist(self: Tensor, p: float = 2.0) -> Tensor:
    pdist_check(self, p)
    return A._pdist_forward.default(A.contiguous.default(self), p)


# --- einsum -----------------------------------------------------------------------------------------------------
_ELLIPSIS = "..."


def _parse_operand_labels(text: str, offset: int, operand: int | str) -> list[str]:
    """One operand's subscripts: letters and at most one ``...`` (kept as one item)."""
    labels: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ".":
            if text[i:i + 3] != _ELLIPSIS:
                raise RuntimeError(f"einsum(): found '.' for {operand} that is not part of any ellipsis")
            if _ELLIPSIS in labels:
                raise RuntimeError(f"einsum(): found '.' for {operand} for which an ellipsis was already found")
            labels.append(_ELLIPSIS)
            i += 3
            continue
        if not ch.isascii() or not ch.isalpha():
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        labels.append(ch)
        i += 1
    return labels


def _label_order(label: str) -> int:
    """Torch's label order: A-Z before a-z."""
    return ord(label) - ord("A") if label.isupper() else 26 + ord(label) - ord("a")


def einsum(equation: str, tensors: Sequence[Tensor], *, path: Sequence[int] | None = None) -> Tensor:
    """Sum of products over the labels not in the output, lowered as torch lowers it.

    Each operand's repeated labels become a ``diagonal``; operands are permuted and unsqueezed to
    one label order (output labels first), then folded left to right: labels no later operand or
    the output needs are summed out, pairs are multiplied with ``bmm`` (``sumproduct_pair``).
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(tensors):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(tensors):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    operands: list[list[str]] = []
    offset = 0
    for term in terms:
        operands.append(_parse_operand_labels(term, offset, f"operand {len(operands)}"))
        offset += len(term) + 1
    ell_dims = 0
    for i, (labels, t) in enumerate(zip(operands, tensors)):
        named = len(labels) - (1 if _ELLIPSIS in labels else 0)
        if _ELLIPSIS in labels:
            if named > t.dim():
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more than the "
                                   f"number of dimensions ({t.dim()}) for operand {i}")
            ell_dims = max(ell_dims, t.dim() - named)
        elif named != t.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the "
                               f"number of dimensions ({t.dim()}) for operand {i} and no ellipsis was given")
    ell = [f"...{j}" for j in range(ell_dims)]  # the ellipsis dims, as labels of their own
    counts: dict[str, int] = {}
    for labels in operands:
        for label in labels:
            if label != _ELLIPSIS:
                counts[label] = counts.get(label, 0) + 1
    if arrow:
        out_labels: list[str] = []
        for label in _parse_operand_labels(rhs, len(lhs) + 2, "output"):
            if label == _ELLIPSIS:
                out_labels.extend(ell)
                continue
            if label not in counts:
                raise RuntimeError(f"einsum(): output subscript {label} does not appear in the equation for any "
                                   "input operand")
            if label in out_labels:
                raise RuntimeError(f"einsum(): output subscript {label} appears more than once in the output")
            out_labels.append(label)
    else:
        out_labels = ell + sorted((lb for lb, n in counts.items() if n == 1), key=_label_order)
    contracted = [lb for lb in sorted(counts, key=_label_order) if lb not in out_labels]
    order = out_labels + contracted + [e for e in ell if e not in out_labels]
    sizes: dict[str, int] = {}
    aligned: list[Tensor] = []
    for i, (labels, t) in enumerate(zip(operands, tensors)):
        dims: list[str] = []
        for label in labels:
            if label == _ELLIPSIS:
                dims.extend(ell[ell_dims - (t.dim() - len(labels) + 1):])
            else:
                dims.append(label)
        for d, label in enumerate(dims):
            size = t.shape[d]
            seen = sizes.get(label)
            if seen is not None and seen != size and seen != 1 and size != 1:
                raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand {i} which does not "
                                   f"broadcast with previously seen size {seen}")
            if seen is None or seen == 1:
                sizes[label] = size
        aligned.append(_align(t, dims, order))
    keep = len(out_labels)
    result = aligned[0]
    for i in range(1, len(aligned)):
        later = aligned[i + 1:]
        sum_dims = [d for d in range(keep, len(order))
                    if all(t.shape[d] == 1 for t in later)]
        result = _sumproduct_pair(result, aligned[i], sum_dims)
    if len(order) > keep:
        rest = [d for d in range(keep, len(order)) if result.shape[d] != 1]
        if rest:
            result = A.sum.dim_IntList(result, rest, True)
    return A.reshape.default(result, [result.shape[d] for d in range(keep)])


def _align(t: Tensor, dims: list[str], order: list[str]) -> Tensor:
    """``t`` with dims labelled ``dims`` as a tensor over ``order`` (diagonals taken, size 1 where absent)."""
    while True:  # repeated labels: take the diagonal (it moves to the last dim)
        repeated = next((lb for lb in dims if dims.count(lb) > 1), None)
        if repeated is None:
            break
        first = dims.index(repeated)
        second = dims.index(repeated, first + 1)
        t = A.diagonal.default(t, 0, first, second)
        dims = [lb for j, lb in enumerate(dims) if j not in (first, second)] + [repeated]
    present = [lb for lb in order if lb in dims]
    t = A.permute.default(t, [dims.index(lb) for lb in present])
    for d, lb in enumerate(order):
        if lb not in dims:
            t = A.unsqueeze.default(t, d)
    return t


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """``sum(left * right, sum_dims, keepdim=True)`` as one ``bmm`` over the dims both have."""
    ndim = left.dim()
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    summed: list[int] = []
    for d in range(ndim):
        in_left, in_right = left.shape[d] != 1, right.shape[d] != 1
        if d in sum_dims:
            if in_left and in_right:
                summed.append(d)
            elif in_left:
                left = A.sum.dim_IntList(left, [d], True)
            elif in_right:
                right = A.sum.dim_IntList(right, [d], True)
        elif in_left and in_right:
            lro.append(d)
        elif in_left:
            lo.append(d)
        else:
            ro.append(d)
    ones = [d for d in range(ndim) if d not in lro + lo + ro + summed]  # size 1 in both
    lo = lo + ones

    def size(t: Tensor, dims: list[int]) -> int:
        return _prod([t.shape[d] for d in dims])

    n_lro, n_lo, n_sum, n_ro = size(left, lro), size(left, lo), size(left, summed), size(right, ro)
    lhs = A.reshape.default(A.permute.default(left, lro + lo + summed + ro), [n_lro, n_lo, n_sum])
    rhs = A.reshape.default(A.permute.default(right, lro + summed + ro + lo), [n_lro, n_sum, n_ro])
    product = A.bmm.default(lhs, rhs)
    shape = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(summed)
             + [right.shape[d] for d in ro])
    perm = lro + lo + summed + ro
    inverse = [perm.index(d) for d in range(ndim)]
    return A.permute.default(A.reshape.default(product, shape), inverse)


# --- losses -----------------------------------------------------------------------------------------------------
def cross_entropy_loss(self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1,
                       ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:
    """``log_softmax`` over the class dim, then ``nll_loss`` (class targets) or a weighted sum (probabilities)."""
    class_dim = 0 if self.dim() == 1 else 1
    if list(self.shape) == list(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class probabilities, got "
                               f"{SCALAR_TYPE_NAMES[target.dtype.name]}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_prob_target(self, target, weight, reduction, label_smoothing, class_dim)
    log_probs = A.log_softmax.int(self, class_dim, self.dtype)
    if label_smoothing > 0.0:
        _label_smoothing_check(label_smoothing)
        return _cross_entropy_label_smoothing(log_probs, target, weight, reduction, ignore_index, label_smoothing,
                                              class_dim)
    return _nll_loss_nd(log_probs, target, weight, reduction, ignore_index)


def _label_smoothing_check(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {_num(label_smoothing)}")


def _nll_loss_nd(self: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int) -> Tensor:
    """``nll_loss_nd``: ``nll_loss`` for 1-d and 2-d input; more dims are flattened to [N * d..., C]."""
    if self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    if self.dim() != 1 and self.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if self.dim() <= 2:
        return A.nll_loss.default(self, target, weight, reduction, ignore_index)
    out_size = [self.shape[0], *self.shape[2:]]
    if list(target.shape[1:]) != list(self.shape[2:]):
        raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    c = self.shape[1]
    moved = A.permute.default(self, [0, *range(2, self.dim()), 1])
    loss = A.nll_loss.default(A.reshape.default(moved, [-1, c]), A.reshape.default(target, [-1]), weight, reduction,
                              ignore_index)
    return A.reshape.default(loss, out_size) if reduction == 0 else loss


def _weight_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return A.view.default(weight, shape)


def _cross_entropy_prob_target(self: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                               label_smoothing: float, class_dim: int) -> Tensor:
    n_classes = self.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    log_probs = A.log_softmax.int(self, class_dim, self.dtype)
    if label_smoothing > 0.0:
        _label_smoothing_check(label_smoothing)
        target = A.add.Scalar(A.mul.Scalar(target, 1 - label_smoothing), label_smoothing / n_classes)
    product = A.mul.Tensor(log_probs, target)
    if weight is not None:
        product = A.mul.Tensor(product, _weight_view(weight, log_probs.dim(), class_dim)
                               if log_probs.dim() > 1 else weight)
    if reduction == 0:
        return A.neg.default(A.sum.dim_IntList(product, [class_dim]))
    total = A.neg.default(A.sum.default(product))
    if reduction == 2:
        return total
    if log_probs.numel() == 0:
        return A.fill_.Scalar(total, math.nan)
    return A.div.Scalar(total, log_probs.numel() // n_classes)


def _cross_entropy_label_smoothing(log_probs: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                                   ignore_index: int, label_smoothing: float, class_dim: int) -> Tensor:
    nll = _nll_loss_nd(log_probs, target, weight, reduction, ignore_index)
    n_classes = log_probs.shape[class_dim]
    ignored = A.eq.Scalar(target, ignore_index)
    if weight is not None:
        smooth = A.neg.default(A.sum.dim_IntList(A.mul.Tensor(log_probs, _weight_view(weight, log_probs.dim(),
                                                                                        class_dim)), [class_dim]))
    else:
        smooth = A.neg.default(A.sum.dim_IntList(log_probs, [class_dim]))
    A.masked_fill_.Scalar(smooth, ignored, 0.0)
    if reduction == 1:
        kept = A.bitwise_not.default(ignored)
        if weight is not None:
            picked = A.index_select.default(weight, 0, A.reshape.default(A.masked_select.default(target, kept), [-1]))
            smooth_part = A.div.Tensor(A.sum.default(smooth), A.sum.default(picked))
        else:
            smooth_part = A.div.Tensor(A.sum.default(smooth), A.sum.default(kept))
    elif reduction == 2:
        smooth_part = A.sum.default(smooth)
    else:
        smooth_part = smooth
    return A.add.Tensor(A.mul.Scalar(nll, 1 - label_smoothing),
                        A.mul.Scalar(smooth_part, label_smoothing / n_classes))


IMPLICIT: dict[str, Callable[..., Any]] = {  # CompositeImplicitAutograd
    "layer_norm": layer_norm, "group_norm": group_norm, "batch_norm": batch_norm,
    "_batch_norm_impl_index": _batch_norm_impl_index,
    "_batch_norm_impl_index_backward": _batch_norm_impl_index_backward,
    "embedding_backward": embedding_backward, "dropout": dropout, "pad": pad, "_pad_enum": _pad_enum,
    "_pad_circular": _pad_circular, "cdist": cdist, "pdist": pdist, "einsum": einsum,
    "cross_entropy_loss": cross_entropy_loss,
}


def register(lib: Library) -> None:
    """The composite kernels, at the keys torch registers them."""
    for name, kernel in EXPLICIT.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives (derivatives.yaml; FunctionsManual.cpp) ---------------------------------------------------------
def _vjp(fn: Callable[..., Any], primals: dict[str, Any], wrt: Sequence[str], grads: Sequence[Any]) -> tuple[Any, ...]:
    """``<grads, fn(**primals)>`` differentiated by the ``wrt`` primals, through ``fn``'s primitives.

    The infinitely differentiable form of a derivative: with grad mode on (``create_graph``) the
    primals that require grad are differentiated as they are, so the result is differentiable
    again; otherwise they are detached copies and the result is plain.
    """
    from ..autograd.grad_mode import enable_grad
    from ..autograd.graph import grad as autograd_grad

    outer = _grad_enabled()
    with enable_grad():
        args = dict(primals)
        inputs = []
        for name in wrt:
            t = primals.get(name)
            if t is None:
                continue
            if not (outer and t.requires_grad):
                t = A.detach.default(t).requires_grad_()
            args[name] = t
            inputs.append((name, t))
        outs = fn(**args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        pairs = [(o, g) for o, g in zip(outs, grads) if o is not None and g is not None and o.requires_grad]
        found: dict[str, Any] = {}
        if pairs and inputs:
            results = autograd_grad([o for o, _ in pairs], [t for _, t in inputs], [g for _, g in pairs],
                                    retain_graph=outer, create_graph=outer, allow_unused=True)
            found = {name: r for (name, _), r in zip(inputs, results)}
    return tuple(found.get(name) for name in wrt)


def _masked(values: tuple[Any, ...], mask: Sequence[bool]) -> tuple[Any, ...]:
    return tuple(v if m else None for v, m in zip(values, mask))


def _layer_norm_forward(input: Tensor, weight: Any, bias: Any, normalized_shape: Sequence[int], eps: Any) -> Tensor:
    """The output of layer norm in primitives; ``eps`` a number or (backward's) a per-row tensor."""
    axis = input.dim() - len(normalized_shape)
    dims = list(range(axis, input.dim()))
    mean = A.mean.dim(input, dims, True)
    var = A.var.correction(input, dims, correction=0, keepdim=True)
    shifted = A.add.Tensor(var, eps) if isinstance(eps, Tensor) else A.add.Scalar(var, eps)
    return _affine(A.mul.Tensor(A.sub.Tensor(input, mean), A.rsqrt.default(shifted)), weight, bias)


def _layer_norm_formula(grad: Tensor, input: Tensor, normalized_shape: Sequence[int], weight: Any, bias: Any,
                        eps: float, result1: Tensor, result2: Tensor, grad_input_mask: tuple[bool, ...]) -> Any:
    if _grad_enabled():
        return _masked(_vjp(lambda input, weight, bias: _layer_norm_forward(input, weight, bias, normalized_shape,
                                                                             eps),
                            {"input": input, "weight": weight, "bias": bias}, ("input", "weight", "bias"), (grad,)),
                       grad_input_mask)
    return A.native_layer_norm_backward.default(grad, input, normalized_shape, result1, result2, weight, bias,
                                                list(grad_input_mask))


def _row_eps(input: Tensor, normalized_shape: Sequence[int], rstd: Tensor) -> Tensor:
    """The eps a saved ``rstd`` was computed with, per row (``1 / rstd^2 - var``), as a constant."""
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    var = A.var.correction(A.detach.default(input), dims, correction=0, keepdim=True)
    return A.sub.Tensor(A.reciprocal.default(A.mul.Tensor(rstd, rstd)), var)


def _layer_norm_backward_formula(grads: tuple[Any, ...], grad_out: Tensor, input: Tensor,
                                 normalized_shape: Sequence[int], rstd: Tensor, weight: Any, bias: Any,
                                 output_mask: Sequence[bool], grad_input_mask: tuple[bool, ...]) -> Any:
    """``layer_norm_double_backward``: the first backward re-expressed in primitives, differentiated."""
    eps = A.detach.default(_row_eps(input, normalized_shape, A.detach.default(rstd)))

    def first_backward(grad_out: Tensor, input: Tensor, weight: Any) -> tuple[Any, ...]:
        from ..autograd.grad_mode import enable_grad
        from ..autograd.graph import grad as autograd_grad

        with enable_grad():
            x = input if input.requires_grad else A.detach.default(input).requires_grad_()
            w = weight if weight is None or weight.requires_grad else A.detach.default(weight).requires_grad_()
            b = None if bias is None else A.detach.default(bias).requires_grad_()
            out = _layer_norm_forward(x, w, b, normalized_shape, eps)
            wanted = [t for t, m in zip((x, w, b), output_mask) if m and t is not None]
            found = autograd_grad([out], wanted, [grad_out], create_graph=True, allow_unused=True)
        it = iter(found)
        return tuple(next(it) if m and t is not None else None for t, m in zip((x, w, b), output_mask))

    return _masked(_vjp(first_backward, {"grad_out": grad_out, "input": input, "weight": weight},
                        ("grad_out", "input", "weight"), grads), grad_input_mask)


def _group_norm_forward(input: Tensor, weight: Any, bias: Any, N: int, group: int,  # noqa: N803
                        eps: float) -> tuple[Tensor, Tensor, Tensor]:
    grouped = A.reshape.default(input, [N, group, -1])
    mean, rstd = _moments(grouped, [2], eps)
    out = A.reshape.default(A.mul.Tensor(A.sub.Tensor(grouped, mean), rstd), list(input.shape))
    out = _affine(out, _channel_view(weight, input.dim()), _channel_view(bias, input.dim()))
    return out, A.reshape.default(mean, [N, group]), A.reshape.default(rstd, [N, group])


def _group_norm_formula(grads: tuple[Any, ...], input: Tensor, weight: Any, N: int, C: int, HxW: int,  # noqa: N803
                        group: int, eps: float, result1: Tensor, result2: Tensor,
                        grad_input_mask: tuple[bool, ...]) -> Any:
    g, g_mean, g_rstd = grads
    if _grad_enabled() or g_mean is not None or g_rstd is not None:
        return _masked(_vjp(lambda input, weight, bias: _group_norm_forward(input, weight, bias, N, group, eps),
                            {"input": input, "weight": weight, "bias": None if not grad_input_mask[2] else
                             A.zeros.default([C], dtype=input.dtype, device=input.device)},
                            ("input", "weight", "bias"), grads), grad_input_mask)
    if g is None:
        return None, None, None
    return A.native_group_norm_backward.default(A.contiguous.default(g), A.contiguous.default(input), result1, result2,
                                                weight, N, C, HxW, group, list(grad_input_mask))


def _batch_norm_forward(input: Tensor, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool,
                        eps: float) -> Tensor:
    """Batch norm's output in primitives: batch statistics when training, else the running ones."""
    mean: Any
    invstd: Any
    if training:
        mean, invstd = _moments(input, [0, *range(2, input.dim())], eps)
    else:
        mean = _channel_view(running_mean, input.dim())
        invstd = _channel_view(A.rsqrt.default(A.add.Scalar(running_var, eps)), input.dim())
    normalized = A.mul.Tensor(A.sub.Tensor(input, mean), invstd)
    return _affine(normalized, _channel_view(weight, input.dim()), _channel_view(bias, input.dim()))


def _batch_norm_formula(training_arg: bool | None = None) -> Callable[..., Any]:
    """NativeBatchNormBackward0 and the ``_native_batch_norm_legit`` nodes: ``native_batch_norm_backward``."""
    def formula(grad: Tensor, input: Tensor, weight: Any, running_mean: Any, running_var: Any, training: Any,
                eps: float, result1: Tensor, result2: Tensor, grad_input_mask: tuple[bool, ...]) -> Any:
        train = training if training_arg is None else training_arg
        if _grad_enabled():
            return _masked(_vjp(lambda input, weight, bias: _batch_norm_forward(input, weight, bias, running_mean,
                                                                                 running_var, train, eps),
                                {"input": input, "weight": weight, "bias": _bias_like(input, grad_input_mask)},
                                ("input", "weight", "bias"), (grad,)), grad_input_mask)
        return A.native_batch_norm_backward.default(grad, input, weight, running_mean, running_var, result1, result2,
                                                    train, eps, list(grad_input_mask))

    return formula


def _bias_like(input: Tensor, mask: Sequence[bool]) -> Any:
    """A zero bias to differentiate by when the bias needs a gradient (its value does not matter)."""
    return A.zeros.default([input.shape[1]], dtype=input.dtype, device=input.device) if mask[2] else None


def _batch_norm_backward_formula(grads: tuple[Any, ...], grad_out: Tensor, input: Tensor, weight: Any,
                                 running_mean: Any, running_var: Any, train: bool, eps: float,
                                 output_mask: Sequence[bool], grad_input_mask: tuple[bool, ...]) -> Any:
    """``batchnorm_double_backward``: the first backward re-expressed in primitives, differentiated."""
    def first_backward(grad_out: Tensor, input: Tensor, weight: Any) -> tuple[Any, ...]:
        return _vjp_create_graph(lambda input, weight, bias: _batch_norm_forward(
            input, weight, bias, running_mean, running_var, train, eps),
            {"input": input, "weight": weight, "bias": _bias_like(input, output_mask)}, output_mask, grad_out)

    return _masked(_vjp(first_backward, {"grad_out": grad_out, "input": input, "weight": weight},
                        ("grad_out", "input", "weight"), grads), grad_input_mask)


def _vjp_create_graph(fn: Callable[..., Any], primals: dict[str, Any], mask: Sequence[bool], grad: Tensor) -> Any:
    """The vjp of ``fn`` by (input, weight, bias), as a differentiable function of the primals and ``grad``."""
    from ..autograd.grad_mode import enable_grad
    from ..autograd.graph import grad as autograd_grad

    with enable_grad():
        args = {k: (v if v is None or v.requires_grad else A.detach.default(v).requires_grad_())
                for k, v in primals.items()}
        out = fn(**args)
        names = [n for n, m in zip(("input", "weight", "bias"), mask) if m and args[n] is not None]
        found = dict(zip(names, autograd_grad([out], [args[n] for n in names], [grad], create_graph=True,
                                              allow_unused=True)))
    return tuple(found.get(n) for n in ("input", "weight", "bias"))


def _embedding_formula(grad: Tensor, weight_shape: tuple[int, ...], indices: Tensor, padding_idx: int,
                       scale_grad_by_freq: bool, sparse: bool) -> Tensor:
    return A.embedding_backward.default(grad, indices, weight_shape[0], padding_idx, scale_grad_by_freq, sparse)


def _embedding_double_backward(grad: Tensor, indices: Tensor, padding_idx: int) -> Tensor:
    """``embedding_dense_double_backward``: the gradient rows the indices pick, padding rows zeroed."""
    rows = A.index_select.default(grad, 0, A.reshape.default(indices, [-1]))
    if padding_idx >= 0:
        rows = A.masked_fill.Scalar(rows, A.reshape.default(A.eq.Scalar(indices, padding_idx), [-1, 1]), 0)
    return A.view.default(rows, [*indices.shape, -1])


def _dropout_scale(p: float, train: bool | None) -> float:
    """The backward scale of ``native_dropout`` (derivatives.yaml: 1 when ``train`` is None or False)."""
    if train is None or not train:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def _dropout_formula(grad: Tensor, p: float, train: Any, result1: Tensor) -> Tensor:
    scale = _dropout_scale(p, train)
    if _grad_enabled():  # infinitely_differentiable_native_dropout_backward
        return A.mul.Tensor(grad, A.mul.Scalar(A._to_copy.default(result1, dtype=grad.dtype), scale))
    return A.native_dropout_backward.default(grad, result1, scale)


def _pad_formulas(kind: str, k: int) -> tuple[Callable[..., Any], Callable[..., Any]]:
    forward = _lazy_op(f"{kind}_pad{k}d")
    backward = _lazy_op(f"{kind}_pad{k}d_backward")

    def pad_formula(grad: Tensor, self: Tensor, padding: Sequence[int]) -> Tensor:
        return backward()(grad, self, list(padding))

    def pad_backward_formula(grad: Tensor, padding: Sequence[int]) -> Tensor:
        return forward()(grad, list(padding))

    return pad_formula, pad_backward_formula


def _lazy_op(name: str) -> Callable[[], Any]:
    return lambda: getattr(A, name).default


def _cdist_formulas() -> tuple[Callable[..., Any], Callable[..., Any]]:
    def x1(grad: Tensor, x1: Tensor, x2: Tensor, p: float, result: Tensor) -> Tensor:
        return A._cdist_backward.default(A.contiguous.default(grad), x1, x2, p, result)

    def x2(grad: Tensor, x1: Tensor, x2: Tensor, p: float, result: Tensor) -> Tensor:
        return A._cdist_backward.default(A.contiguous.default(A.transpose.int(grad, -2, -1)), x2, x1, p,
                                         A.contiguous.default(A.transpose.int(result, -2, -1)))

    return x1, x2


def _euclidean_dist_formula(grad: Tensor, x1: Tensor, x2: Tensor, result: Tensor) -> tuple[Tensor, Tensor]:
    """``_euclidean_dist_backward``: ``ratio = grad / res`` (0 where the distance is 0).

    Then ``x1 * ratio.sum(-1, true) - ratio.matmul(x2)`` and
    ``x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT().matmul(x1)``, each difference's right operand first.
    """
    ratio = A.masked_fill_.Scalar(A.div.Tensor(grad, result), A.eq.Scalar(result, 0), 0)
    product = A.matmul.default(ratio, x2)
    g1 = A.sub.Tensor(A.mul.Tensor(x1, A.sum.dim_IntList(ratio, [-1], True)), product)
    product = A.matmul.default(A.transpose.int(ratio, -2, -1), x1)
    g2 = A.sub.Tensor(A.mul.Tensor(x2, A.unsqueeze.default(A.sum.dim_IntList(ratio, [-2]), -1)), product)
    return g1, g2


def _bce_self_formula(grad: Tensor, self: Tensor, target: Tensor, weight: Any, reduction: int) -> Tensor:
    """``binary_cross_entropy_backward(grad, self, target, weight, reduction)`` (its own node differentiates it)."""
    return A.binary_cross_entropy_backward.default(grad, self, target, weight, reduction)


def _bce_target_formula(grad: Tensor, self: Tensor, target: Tensor, weight: Any, reduction: int) -> Tensor:
    """``binary_cross_entropy_target_backward``: ``logit(self).neg_()`` times grad and weight, over numel for a mean.

    In place (``mul_``, ``div_``) as the C++ writes it; out of place for a subclass-like grad or weight.
    """
    from ..autograd.derivatives import subclass_like

    result = A.neg_.default(A.logit.default(self))
    result = (A.mul.Tensor if subclass_like(grad) else A.mul_.Tensor)(result, grad)
    if weight is not None:
        result = (A.mul.Tensor if subclass_like(weight) else A.mul_.Tensor)(result, weight)
    return A.div_.Scalar(result, target.numel()) if reduction == 1 else result


_BCE_EPS = 1e-12


def _bce_double_grad_output(g: Tensor, self: Tensor, target: Tensor, weight: Any, reduction: int) -> Tensor:
    """``binary_cross_entropy_double_backward_grad_output``: ``(x - t) / ((x + eps) (1 - x + eps)) * grad``."""
    from ..autograd.derivatives import scalar_minus, subclass_like

    denominator = A.add.Scalar(scalar_minus(1, self), _BCE_EPS)
    denominator = A.mul.Tensor(A.add.Scalar(self, _BCE_EPS), denominator)
    ggo = A.div.Tensor(A.sub.Tensor(self, target), denominator)
    ggo = (A.mul.Tensor if subclass_like(ggo, g) else A.mul_.Tensor)(ggo, g)
    if weight is not None:
        ggo = (A.mul.Tensor if subclass_like(weight) else A.mul_.Tensor)(ggo, weight)
    return A.div.Scalar(ggo, self.numel()) if reduction == 1 else ggo


def _bce_double_self(g: Tensor, grad_output: Tensor, self: Tensor, target: Tensor, weight: Any,
                     reduction: int) -> Tensor:
    """``binary_cross_entropy_double_backward``: ``(x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2)``.

    Times ``grad * grad_output`` (and the weight), over numel for a mean.
    """
    from ..autograd.derivatives import scalar_minus, subclass_like

    inp_pl_eps = A.add.Scalar(self, _BCE_EPS)
    one_m_inp_pl_eps = A.add.Scalar(scalar_minus(1, self), _BCE_EPS)
    denominator = A.pow.Tensor_Scalar(one_m_inp_pl_eps, 2)
    denominator = A.mul.Tensor(A.pow.Tensor_Scalar(inp_pl_eps, 2), denominator)
    cross = A.mul.Tensor(A.mul.Scalar(self, 2), target)
    numerator = A.add.Tensor(A.sub.Tensor(A.mul.Tensor(self, self), cross), target)
    gi = A.div.Tensor(numerator, denominator)
    gi = (A.mul.Tensor if subclass_like(gi, g) else A.mul_.Tensor)(gi, A.mul.Tensor(g, grad_output))
    if weight is not None:
        gi = (A.mul.Tensor if subclass_like(weight) else A.mul_.Tensor)(gi, weight)
    return A.div.Scalar(gi, self.numel()) if reduction == 1 else gi


def _bce_double_target(g: Tensor, grad_output: Tensor, self: Tensor, target: Tensor, weight: Any,
                       reduction: int) -> Tensor:
    """``binary_cross_entropy_double_backward_target``: ``-grad * grad_output * w / max((1 - x) x, eps)``."""
    from ..autograd.derivatives import scalar_minus, subclass_like
    from ..autograd.grad_mode import no_grad

    res = A.mul.Tensor(A.neg.default(g), grad_output)
    if weight is not None:
        res = (A.mul.Tensor if subclass_like(weight) else A.mul_.Tensor)(res, weight)
    neg_self = scalar_minus(1, self)
    denominator = (A.mul.Tensor if subclass_like(self) else A.mul_.Tensor)(neg_self, self)
    with no_grad():
        A.clamp_min_.default(denominator, _BCE_EPS)
    res = (A.div.Tensor if subclass_like(denominator) else A.div_.Tensor)(res, denominator)
    return A.div_.Scalar(res, target.numel()) if reduction == 1 else res


_BCE_BACKWARD = (_bce_double_grad_output, _bce_double_self, _bce_double_target)


def _bce_logits_formulas() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``binary_cross_entropy_with_logits_backward`` and ``..._target_backward`` (FunctionsManual.cpp).

    In place on their own temporaries (``sub_``, ``mul_``) unless a mode or subclass is about
    (``areAnyTensorSubclassLike``) or grad mode is on; the mean divides in place (``div_``).
    """
    from ..autograd.derivatives import subclass_like

    def self_formula(grad: Tensor, self: Tensor, target: Tensor, weight: Any, pos_weight: Any,
                     reduction: int) -> Tensor:
        out_of_place = subclass_like(self, target) or _grad_enabled()
        if pos_weight is not None:
            t = A.mul.Tensor(pos_weight, target)
            if out_of_place:
                grad_input = A.sub.Tensor(A.mul.Tensor(A.sub.Tensor(A.add.Scalar(t, 1), target),
                                                       A.sigmoid.default(self)), t)
            else:
                grad_input = A.sub_.Tensor(A.mul_.Tensor(A.sub_.Tensor(A.add.Scalar(t, 1), target),
                                                         A.sigmoid.default(self)), t)
        else:
            sub = A.sub.Tensor if out_of_place else A.sub_.Tensor
            grad_input = sub(A.sigmoid.default(self), target)
        grad_input = (A.mul.Tensor if subclass_like(grad) or _grad_enabled() else A.mul_.Tensor)(grad_input, grad)
        if weight is not None:
            mul = A.mul.Tensor if subclass_like(weight) or _grad_enabled() else A.mul_.Tensor
            grad_input = mul(grad_input, weight)
        return A.div_.Scalar(grad_input, self.numel()) if reduction == 1 else grad_input

    def target_formula(grad: Tensor, self: Tensor, target: Tensor, weight: Any, pos_weight: Any,
                       reduction: int) -> Tensor:
        """``log_sigmoid(-x).sub(log_sigmoid(x).mul(pw)).mul(g)`` with pos_weight, else ``-x * g``."""
        if pos_weight is not None:
            in_place = not subclass_like(pos_weight, grad)
            sub, mul = (A.sub_.Tensor, A.mul_.Tensor) if in_place else (A.sub.Tensor, A.mul.Tensor)
            negative = A.log_sigmoid.default(A.neg.default(self))
            grad_target = mul(sub(negative, mul(A.log_sigmoid.default(self), pos_weight)), grad)
        else:
            grad_target = A.mul.Tensor(A.neg.default(self), grad)
        if weight is not None:
            grad_target = (A.mul.Tensor if subclass_like(weight) else A.mul_.Tensor)(grad_target, weight)
        return A.div_.Scalar(grad_target, target.numel()) if reduction == 1 else grad_target

    return self_formula, target_formula


def _not_implemented(what: str) -> Callable[..., Any]:
    """derivatives.yaml's ``not_implemented("...")``: the backward raises torch's error."""
    def formula(grad: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")

    return formula


def _no_derivative(op: str) -> Callable[..., Any]:
    """An op without a derivatives.yaml entry (``torch::autograd::NotImplemented``): the backward raises."""
    def formula(grad: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{op} is not implemented")

    return formula


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names (``derivatives.yaml``)."""
    from ..autograd.kernels import register_derivative

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> Any:
        return register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    norm_inputs = ("input", "weight", "bias")
    r("native_layer_norm", "NativeLayerNormBackward0", norm_inputs, _layer_norm_formula, differentiable_outputs=(0,))
    r("native_layer_norm_backward", "NativeLayerNormBackwardBackward0", ("grad_out", "input", "weight"),
      lambda grads, grad_out, input, normalized_shape, rstd, weight, bias, output_mask, grad_input_mask:
      _layer_norm_backward_formula(grads, grad_out, input, normalized_shape, rstd, weight, bias, output_mask,
                                   grad_input_mask))
    r("native_group_norm", "NativeGroupNormBackward0", norm_inputs, _group_norm_formula)
    d = r("native_group_norm_backward", "NotImplemented", ("grad_out", "input", "weight"),
          (_no_derivative("native_group_norm_backward"),) * 3)
    d.node_class._qualified_name = "torch::autograd::NotImplemented"
    r("native_batch_norm", "NativeBatchNormBackward0", norm_inputs, _batch_norm_formula(), differentiable_outputs=(0,))
    r("_native_batch_norm_legit", "NativeBatchNormLegitBackward0", norm_inputs, _batch_norm_formula(),
      differentiable_outputs=(0,))
    r("_native_batch_norm_legit.no_stats", "NativeBatchNormLegitBackward1", norm_inputs,
      lambda grad, input, weight, training, eps, result1, result2, grad_input_mask: _batch_norm_formula()(
          grad, input, weight, None, None, training, eps, result1, result2, grad_input_mask),
      differentiable_outputs=(0,))
    r("_native_batch_norm_legit_no_training", "NativeBatchNormLegitNoTrainingBackward0", norm_inputs,
      lambda grad, input, weight, running_mean, running_var, eps, result1, result2, grad_input_mask:
      _batch_norm_formula(False)(grad, input, weight, running_mean, running_var, False, eps, result1, result2,
                                 grad_input_mask), differentiable_outputs=(0,))
    r("native_batch_norm_backward", "NativeBatchNormBackwardBackward0", ("grad_out", "input", "weight"),
      _batch_norm_backward_formula)
    r("embedding", "EmbeddingBackward0", ("weight",), _embedding_formula)
    r("embedding_dense_backward", "EmbeddingDenseBackwardBackward0", ("grad_output",), _embedding_double_backward)
    r("native_dropout", "NativeDropoutBackward0", ("input",), _dropout_formula, differentiable_outputs=(0,))
    r("native_dropout_backward", "NativeDropoutBackwardBackward0", ("grad_output",),
      lambda grad, mask, scale: A.mul.Tensor(grad, A.mul.Scalar(A._to_copy.default(mask, dtype=grad.dtype), scale)))
    r("bernoulli_.float", "BernoulliBackward2", ("self",), lambda grad: A.zeros_like.default(grad), mutates="self")
    for kind in ("reflection", "replication"):
        for k in (1, 2, 3):
            forward, backward = _pad_formulas(kind, k)
            node = f"{kind.capitalize()}Pad{k}D"
            r(f"{kind}_pad{k}d", f"{node}Backward0", ("self",), forward)
            r(f"{kind}_pad{k}d_backward", f"{node}BackwardBackward0", ("grad_output", "self"),
              (backward, lambda grad, self_shape, self_dtype, self_device: A.zeros.default(  # zeros_like(self)
                  list(self_shape), dtype=self_dtype, device=self_device)))
    r("_cdist_forward", "CdistBackward0", ("x1", "x2"), _cdist_formulas())
    r("_cdist_backward", "CdistBackwardBackward0", ("grad", "x1", "x2", "cdist"),
      (_not_implemented("_cdist_backward"),) * 4)
    r("_euclidean_dist", "EuclideanDistBackward0", ("x1", "x2"), _euclidean_dist_formula)
    r("_pdist_forward", "PdistBackward0", ("self",),
      lambda grad, self, p, result: A._pdist_backward.default(grad, self, p, result))
    r("_pdist_backward", "PdistBackwardBackward0", ("grad", "self", "pdist"),
      (_not_implemented("_pdist_backward"),) * 3)
    r("binary_cross_entropy", "BinaryCrossEntropyBackward0", ("self", "target"),
      (_bce_self_formula, _bce_target_formula))
    r("binary_cross_entropy_backward", "BinaryCrossEntropyBackwardBackward0", ("grad_output", "self", "target"),
      _BCE_BACKWARD)
    r("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0", ("self", "target"),
      _bce_logits_formulas())


# --- torch.* functions and Tensor methods ------------------------------------------------------------------------
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "layer_norm": ("layer_norm(Tensor input, SymIntArrayRef normalized_shape, Tensor? weight=None, Tensor? bias=None, "
                   "double eps=1e-05, bool cudnn_enable=True)",),
    "native_layer_norm": ("native_layer_norm(Tensor input, SymIntArrayRef normalized_shape, Tensor? weight, "
                          "Tensor? bias, double eps)",),
    "group_norm": ("group_norm(Tensor input, int64_t num_groups, Tensor? weight=None, Tensor? bias=None, "
                   "double eps=1e-05, bool cudnn_enabled=True)",),
    "native_group_norm": ("native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
                          "SymInt HxW, int64_t group, double eps)",),
    "batch_norm": ("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                   "Tensor? running_var, bool training, double momentum, double eps, bool cudnn_enabled)",),
    "native_batch_norm": ("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                          "Tensor? running_var, bool training, double momentum, double eps)",),
    "embedding": ("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
                  "bool sparse=False)",),
    "dropout": ("dropout(Tensor input, double p, bool train)",),
    "native_dropout": ("native_dropout(Tensor input, double p, bool? train)",),
    "pdist": ("pdist(Tensor input, double p=2)",),
    # torch.binary_cross_entropy_with_logits reduces nothing unless told (its binding's default)
    "binary_cross_entropy_with_logits": ("binary_cross_entropy_with_logits(Tensor input, Tensor target, "
                                         "Tensor? weight=None, Tensor? pos_weight=None, int64_t reduction=0)",),
    "Tensor.bernoulli_": ("bernoulli_(double p=0.5, *, Generator? generator=None)",),
}
_OPS = {"layer_norm": "layer_norm", "native_layer_norm": "native_layer_norm", "group_norm": "group_norm",
        "native_group_norm": "native_group_norm", "batch_norm": "batch_norm", "native_batch_norm": "native_batch_norm",
        "embedding": "embedding", "dropout": "dropout", "native_dropout": "native_dropout", "pdist": "pdist",
        "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits"}

_BINDINGS = Bindings(_SIGNATURES)


def _parse(key: str, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    bound = _BINDINGS.parse(key, args, kwargs)[1]
    for name, value in bound.items():  # the binding keeps float and enum defaults as their text
        if isinstance(value, str):
            bound[name] = _TEXT_DEFAULTS.get(value) if value in _TEXT_DEFAULTS else float(value)
    return bound


_TEXT_DEFAULTS = {"Mean": 1, "Sum": 2, "None": 0}


def _binding(name: str) -> Callable[..., Any]:
    """``torch.<name>``: torch's argument parsing, then the operator with the arguments in schema order."""
    op_name = _OPS[name]

    def function(*args: Any, **kwargs: Any) -> Any:
        bound = _parse(name, args, kwargs)
        return getattr(A, op_name).default(*bound.values())

    function.__name__ = function.__qualname__ = name
    return function


_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


def cdist_function(x1: Tensor, x2: Tensor, p: float = 2.0,
                   compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """``torch.cdist``: the compute mode by name (``torch/functional.py``)."""
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return A.cdist.default(x1, x2, p, _COMPUTE_MODES[compute_mode])


def einsum_function(*args: Any) -> Tensor:
    """``torch.einsum``: an equation and operands (a list of them, or each one), or the sublist format."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if not isinstance(args[0], str):  # sublist format: operand, subscripts, ..., [output subscripts]
        return A.einsum.default(*_sublist_equation(args))
    operands = args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return A.einsum.default(args[0], list(operands))


def _sublist_equation(args: tuple[Any, ...]) -> tuple[str, list[Tensor]]:
    def letters(sub: Sequence[Any]) -> str:
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += _ELLIPSIS
            elif isinstance(s, int) and 0 <= s < 52:
                out += chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        return out

    operands = list(args[0::2][:len(args) // 2])
    terms = [letters(s) for s in args[1::2][:len(args) // 2]]
    equation = ",".join(terms)
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, operands


def bernoulli__method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    bound = _parse("Tensor.bernoulli_", args, kwargs)
    return A.bernoulli_.float(self, bound["p"], generator=bound["generator"])


bernoulli__method.__name__ = bernoulli__method.__qualname__ = "bernoulli_"
cdist_function.__name__ = cdist_function.__qualname__ = "cdist"
einsum_function.__name__ = einsum_function.__qualname__ = "einsum"

FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: _binding(name) for name in _OPS}, "cdist": cdist_function, "einsum": einsum_function,
}
METHODS: dict[str, Callable[..., Any]] = {"bernoulli_": bernoulli__method}
