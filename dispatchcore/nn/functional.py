"""``torch.nn.functional``'s activations and losses, as calls of ``aten`` operators.

Mirrors ``torch/nn/functional.py`` and ``torch/nn/_reduction.py``: the Python layer that turns
``reduction="mean"`` into aten's enum, warns where torch warns (an implicit softmax dim, a
target whose size differs from the input's, the legacy ``size_average``/``reduce``), and then
calls the operator through the dispatcher. Invariant: no arithmetic here that torch does in
C++; the weighted losses are composed of operator calls, as torch composes them in Python.
Where an aten operator is not defined in dispatchcore yet (``_op`` finds none), the function
composes torch's decomposition of it from defined operators; see Note [Missing aten ops].

Example:
    >>> import dispatchcore as dc
    >>> import dispatchcore.nn.functional as F
    >>> x = dc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> loss = F.mse_loss(x, dc.zeros(2, 2))
    >>> loss
    tensor(7.5000, grad_fn=<MseLossBackward0>)
    >>> F.nll_loss(F.log_softmax(x, dim=1), dc.tensor([1, 0]), reduction="sum").item() > 0
    True
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import numpy as np

import dispatchcore as _dispatchcore

from .. import functions as _functions
from .. import overrides as _overrides
from ..native import nn as _native_nn
from ..ops import aten
from ..shapes import broadcast_shapes
from ..tensor import Tensor

_dc: Any = _dispatchcore  # functions attached at import (torch bindings), untyped
_tf_on = False  # See Note [Torch function costs nothing when unused] (dispatchcore/overrides.py)
_NOT_HANDLED = _overrides._NOT_HANDLED
# Classes that never carry torch function: with the gate off, a duck type is found by class tests
# of the arguments torch checks (has_torch_function_variadic(input, target, weight), a C++ binding's
# Tensors), a plain Tensor first, an optional argument's None before that. See Note [Torch function
# costs nothing when unused] (dispatchcore/overrides.py).
_INERT = _overrides._INERT


__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "batch_norm", "bilinear", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "conv1d", "conv2d", "cross_entropy", "dropout", "elu", "elu_",
           "embedding", "embedding_bag", "fold", "gelu", "grid_sample", "group_norm", "hardtanh", "hardtanh_",
           "huber_loss", "interpolate", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "leaky_relu_", "linear",
           "log_softmax", "logsigmoid", "max_pool2d", "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "relu",
           "relu6", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softmin", "softplus", "softsign", "tanh",
           "tanhshrink", "unfold"]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    """``_Reduction.get_enum``: aten's int for a reduction name."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return 1
    enum = _REDUCTIONS.get(reduction) if isinstance(reduction, str) else None
    if enum is None:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return enum


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """``_Reduction.legacy_get_string``: the reduction the deprecated pair of flags means."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu``: ``aten::relu``, or ``aten::relu_`` with ``inplace=True``."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(relu, locals())
        if handled is not _NOT_HANDLED:
            return handled
    return _functions.relu_(input) if inplace else _functions.relu(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``F.softmax``: ``aten::softmax.int``; without ``dim``, torch's deprecated implicit choice."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(softmax, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    try:
        return aten.softmax.int(input, dim, dtype)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_method("softmax", input, (dim,), {} if dtype is None else {"dtype": dtype}, error)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``F.log_softmax``: ``aten::log_softmax.int``; without ``dim``, the implicit choice."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(log_softmax, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    try:
        return aten.log_softmax.int(input, dim, dtype)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_method("log_softmax", input, (dim,), {} if dtype is None else {"dtype": dtype}, error)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """``F.mse_loss``: ``aten::mse_loss`` on the broadcast operands; with ``weight``, composed."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)):
        handled = _overrides.function_locals(mse_loss, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=2)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    shape = list(broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    expanded_input = input if list(input.shape) == shape else input.expand(shape)
    expanded_target = target if list(target.shape) == shape else target.expand(shape)
    if weight is None:
        return aten.mse_loss.default(expanded_input, expanded_target, _reduction_enum(reduction))
    return _weighted(_functions.pow(expanded_input - expanded_target, 2), weight, input, reduction)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``F.nll_loss``: ``aten::nll_loss`` with torch's reduction names.

    Inputs of more than two dimensions (``(N, C, d1, ...)``, as for segmentation) are folded to
    ``(N * d1 * ..., C)`` first, which gives ``nll_loss_nd``'s values; torch's graph there ends
    in ``NllLoss2DBackward0``, dispatchcore's in the reshape and ``NllLossBackward0``.
    """
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)):
        handled = _overrides.function_locals(nll_loss, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    enum = _reduction_enum(reduction)
    try:
        if input.dim() <= 2:
            return aten.nll_loss.default(input, target, weight, enum, ignore_index)
        return _nll_loss_nd(input, target, weight, enum, ignore_index)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.nll_loss_nd, (input, target, weight, enum, ignore_index), {}, error)


def _nll_loss_nd(input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1,
                 ignore_index: int = -100) -> Tensor:
    """``torch._C._nn.nll_loss_nd``: ``nll_loss`` of any rank, more than two dims folded into classes last."""
    ndim = input.dim()
    if ndim <= 2:
        return aten.nll_loss.default(input, target, weight, reduction, ignore_index)
    n, c, *rest = input.shape
    if list(target.shape) != [n, *rest]:
        raise RuntimeError(f"Expected target size {[n, *rest]}, got {list(target.shape)}")
    classes_last = input.permute([0, *range(2, ndim), 1]).reshape(-1, c)
    loss = aten.nll_loss.default(classes_last, target.reshape(-1), weight, reduction, ignore_index)
    return loss.reshape(n, *rest) if reduction == 0 else loss


# Note [Missing aten ops]: torch's functional calls one aten operator per function (silu, softplus,
# log_sigmoid, one_hot, l1_loss, smooth_l1_loss, huber_loss, kl_div, relu6: dispatchcore.native's
# activation and loss families); ``_op`` looks up the few operators dispatchcore does not define yet
# (``dropout_``, ``embedding_renorm_``), where the function composes the operator's decomposition.
def _op(name: str, overload: str = "default") -> Any:
    """``aten.<name>.<overload>``, or ``None`` where dispatchcore does not define it."""
    try:
        return getattr(getattr(aten, name), overload)
    except AttributeError:
        return None


def _warn_size(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _broadcast(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    shape = list(broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    return (input if list(input.shape) == shape else input.expand(shape),
            target if list(target.shape) == shape else target.expand(shape))


def _ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """As torch's ``_ntuple(n)``: an iterable's items as a tuple (not a str), anything else ``n`` times."""
    if isinstance(value, Iterable) and not isinstance(value, str):
        return tuple(value)
    return (value,) * n


# --- layers ---------------------------------------------------------------------------------------
# Note [C++ bindings in nn.functional]: ``F.linear``, ``F.avg_pool2d``, ``F.gelu``, ``F.softplus``,
# ``F.logsigmoid`` and ``F.one_hot`` are ``torch._C._nn``'s bindings themselves, ``F.bilinear``,
# ``F.conv1d`` and ``F.conv2d`` are ``torch``'s (``F.conv2d is torch.conv2d``): a handler gets the
# arguments as they were passed, positional or keyword, and the parser checks every one of them (a
# duck type anywhere: ``F.linear(x, w, duck)``). Here each is its aten operator behind a binding's
# check (``_c_binding``, ``overrides.check_binding``), and ``F.conv2d`` is ``dc.conv2d``. The
# parser's leniencies (``input=`` for ``self``, None for a list argument's default) are applied
# where the operator's schema refused the call: the plain path is one call of the operator.
def _c_binding(op: Any, name: str, error_name: str, doc: str) -> Any:
    """``F.<name>``: the C++ binding of ``op`` (See Note [C++ bindings in nn.functional]).

    ``error_name``: how torch's error names it when every handler declines (``torch.nn.linear``).
    """
    def binding(*args: Any, **kwargs: Any) -> Any:
        if _tf_on:
            handled = _overrides.check_binding(binding, args, kwargs)
            if handled is not _NOT_HANDLED:
                return handled
        try:
            return op(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - re-raised below unless the parser takes the call
            error = exc
        if not _tf_on:  # See overrides.retry: a duck type's handler takes the call as it was made
            handled = _overrides.check_binding(binding, args, kwargs)
            if handled is not _NOT_HANDLED:
                return handled
        parsed = _as_parsed(op, args, kwargs)
        if parsed is None:
            raise error
        return op(*parsed[0], **parsed[1])

    binding.__name__ = binding.__qualname__ = name
    binding.__doc__ = doc
    _overrides._ERROR_NAMES[binding] = error_name
    return binding


def _as_parsed(op: Any, args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict[str, Any]] | None:
    """The call as torch's parser reads one that ``op``'s schema refused, or None when it reads it alike.

    A function's ``self`` is ``input=`` in torch; None at a list parameter with a default
    (``F.avg_pool2d(x, 2, None)``) is that default.
    """
    schema = getattr(op, "schema", None)
    if schema is None:  # a Python function (conv2d's): its own signature read the call
        return None
    changed = False
    if "input" in kwargs and "self" not in kwargs and any(a.name == "self" for a in schema.positional):
        kwargs = {("self" if k == "input" else k): v for k, v in kwargs.items()}
        changed = True
    params = {a.name: a for a in schema.arguments}

    def default_of(param: Any, value: Any) -> Any:
        nonlocal changed
        if value is None and param is not None and param.has_default and "[" in str(param.type) \
                and not str(param.type).endswith("?"):
            changed = True
            return list(param.default)
        return value

    positional = schema.positional
    args = tuple([default_of(positional[i] if i < len(positional) else None, a) for i, a in enumerate(args)])
    kwargs = {k: default_of(params.get(k), v) for k, v in kwargs.items()}
    return (args, kwargs) if changed else None


linear = _c_binding(aten.linear.default, "linear", "torch.nn.linear", """``F.linear``: ``aten::linear``.

    ``input @ weight.T + bias``.

    Example:
        >>> import dispatchcore as dc
        >>> linear(dc.ones(1, 2), dc.ones(3, 2), dc.zeros(3))
        tensor([[2., 2., 2.]])
    """)
bilinear = _c_binding(aten.bilinear.default, "bilinear", "torch.bilinear", """``F.bilinear``: ``aten::bilinear``.

    ``y[..., o] = input1 @ weight[o] @ input2 + bias[o]``.

    Example:
        >>> import dispatchcore as dc
        >>> bilinear(dc.ones(1, 2), dc.ones(1, 3), dc.ones(4, 2, 3))
        tensor([[6., 6., 6., 6.]])
    """)
# torch.conv1d is F.conv1d: aten::conv1d (aten::conv1d.padding for "same"/"valid"); dc.conv1d is the
# same function behind its own binding (made after this module, by dispatchcore/__init__.py)
conv1d = _c_binding(_native_nn.FUNCTIONS["conv1d"], "conv1d", "torch.conv1d",
                    """``F.conv1d``: ``aten::conv1d`` (``aten::conv1d.padding`` for ``padding="same"``/``"valid"``).""")
conv2d = _c_binding(_native_nn.FUNCTIONS["conv2d"], "conv2d", "torch.conv2d",
                    """``F.conv2d``: ``aten::conv2d`` (``aten::conv2d.padding`` for ``padding="same"``/``"valid"``).""")


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """``F.max_pool2d``: ``aten::max_pool2d``, or ``aten::max_pool2d_with_indices`` for ``return_indices``."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(max_pool2d, locals())
        if handled is not _NOT_HANDLED:
            return handled
    stride = [] if stride is None else stride
    if return_indices:
        return aten.max_pool2d_with_indices.default(input, _ntuple(kernel_size, 2), _ntuple(stride, 2) if stride
                                                    else [], _ntuple(padding, 2), _ntuple(dilation, 2), ceil_mode)
    return _dc.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


avg_pool2d = _c_binding(aten.avg_pool2d.default, "avg_pool2d", "torch.nn.avg_pool2d",
                        """``F.avg_pool2d``: ``aten::avg_pool2d`` (``stride=None`` or ``[]``: the kernel size).""")


def _pair(value: Any) -> tuple[Any, ...]:
    """The ``_pair`` of torch: ``_ntuple(value, 2)``."""
    return _ntuple(value, 2)


def _list_with_default(out_size: Any, defaults: Any) -> Any:
    """The ``_list_with_default`` of torch: a None in ``out_size`` takes the input's size there."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """``F.adaptive_avg_pool2d``: ``aten::adaptive_avg_pool2d``; a None in ``output_size`` keeps that size.

    Example:
        >>> import dispatchcore as dc
        >>> adaptive_avg_pool2d(dc.arange(16.0).reshape(1, 1, 4, 4), (2, None)).shape
        dispatchcore.Size([1, 1, 2, 4])
    """
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(adaptive_avg_pool2d, locals())
        if handled is not _NOT_HANDLED:
            return handled
    return _nn.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """``F.unfold``: ``aten::im2col``, sliding blocks as columns: ``(N, C * prod(kernel_size), L)``.

    Example:
        >>> import dispatchcore as dc
        >>> unfold(dc.ones(1, 2, 3, 3), 2).shape
        dispatchcore.Size([1, 8, 4])
    """
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(unfold, locals())
        if handled is not _NOT_HANDLED:
            return handled
    return _nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """``F.fold``: ``aten::col2im``, unfold's adjoint: columns summed back into an image of ``output_size``."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(fold, locals())
        if handled is not _NOT_HANDLED:
            return handled
    return _nn.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def _per_spatial_dim(value: Any, dim: int, mismatch: str) -> Any:
    """``interpolate``'s size or scale factor, one per spatial dim.

    A sequence is kept as given (ValueError ``mismatch`` when its length is not ``dim``); a single
    value is repeated.
    """
    if isinstance(value, (list, tuple)):
        if len(value) != dim:
            raise ValueError(mismatch)
        return value
    return [value] * dim


def _is_integer(x: Any) -> bool:
    """A size entry as torch checks it: an int, a numpy integer, or a Tensor of an integer dtype."""
    return isinstance(x, (int, np.integer)) or (isinstance(x, Tensor) and not x.is_floating_point())


# F.interpolate's (dims, mode) -> torch._C._nn's binding it calls; the others' operators are not defined here
_UPSAMPLERS = {(2, "nearest"): "upsample_nearest2d", (2, "bilinear"): "upsample_bilinear2d"}


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """``F.interpolate``: torch's argument handling, then its upsampling operator.

    4-D input in the modes ``nearest`` (``aten::upsample_nearest2d.vec``), ``bilinear``
    (``aten::upsample_bilinear2d.vec``) and ``area`` (``adaptive_avg_pool2d``). Other ranks and
    modes raise NotImplementedError naming the operator dispatchcore does not define.

    Example:
        >>> import dispatchcore as dc
        >>> interpolate(dc.ones(1, 1, 2, 2), scale_factor=2).shape
        dispatchcore.Size([1, 1, 4, 4])
    """
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(interpolate, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2  # the spatial dimensions
    output_size: Any = None
    scale_factors: Any = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    if size is not None:
        output_size = _per_spatial_dim(
            size, dim, f"Input and output must have the same number of spatial dimensions, but got input with "
            f"spatial dimensions of {spatial} and output size of {size}. Please provide input tensor in (N, C, d1, "
            "d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        if isinstance(size, (list, tuple)) and not all(_is_integer(x) for x in size):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
    elif scale_factor is not None:
        scale_factors = _per_spatial_dim(
            scale_factor, dim, f"Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {spatial} and scale_factor of shape {scale_factor}. Please provide "
            "input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True  # area always pools to an explicit size
    if recompute_scale_factor:
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if not 1 <= dim <= 3 or mode not in ("nearest", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area",
                                         "nearest-exact"):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")
    if mode == "lanczos" and dim == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    needs = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    if needs is not None and needs != dim:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {needs + 2}D input")
    if mode == "area" and dim == 2:
        return adaptive_avg_pool2d(input, output_size)
    binding = None if antialias else _UPSAMPLERS.get((dim, mode))
    if binding is None:
        raise NotImplementedError(f"F.interpolate(mode={mode!r}, antialias={antialias}) of a {input.dim()}-D input "
                                  "is not supported by dispatchcore: its upsampling operator is not defined here "
                                  "(4-D nearest, bilinear and area are)")
    if mode == "nearest":
        return getattr(_nn, binding)(input, output_size, scale_factors)
    return getattr(_nn, binding)(input, output_size, align_corners, scale_factors)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """``F.dropout``: ``aten::dropout`` (masks from the CPU generator); ``inplace`` writes the result back."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(dropout, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    inplace_op = _op("dropout_") if inplace else None  # a failed lookup scans every operator: only when needed
    if inplace_op is not None:
        return inplace_op(input, p, training)
    result = _dc.dropout(input, p, training)
    return input.copy_(result) if inplace and training else result


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``F.embedding``: ``aten::embedding(weight, indices, padding_idx, ...)``, rows of ``weight``.

    ``max_norm`` needs ``aten::embedding_renorm_``; it raises where dispatchcore lacks that operator.
    """
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (weight.__class__ is not Tensor and weight.__class__ not in _INERT)):
        handled = _overrides.function_locals(embedding, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        renorm = _op("embedding_renorm_")
        if renorm is None:
            raise NotImplementedError("F.embedding(max_norm=...) needs aten::embedding_renorm_, which dispatchcore "
                                      "does not define")
        input = input.contiguous()
        from ..autograd import no_grad

        with no_grad():
            renorm(weight, input, max_norm, norm_type)
    return _dc.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """``F.embedding_bag``: sums, means or maxima of bags of rows, via ``aten::embedding_bag``.

    A 2-d ``input`` is a batch of equal-length bags (offsets made with ``arange``, as torch does);
    a 1-d one needs ``offsets``.

    Example:
        >>> import dispatchcore as dc
        >>> embedding_bag(dc.tensor([[0, 1]]), dc.tensor([[1.0, 2.0], [3.0, 4.0]]), mode="sum")
        tensor([[4., 6.]])
    """
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (weight.__class__ is not Tensor and weight.__class__ not in _INERT)
            or (offsets is not None and offsets.__class__ is not Tensor and offsets.__class__ not in _INERT)
            or (per_sample_weights is not None and per_sample_weights.__class__ is not Tensor
                and per_sample_weights.__class__ not in _INERT)):
        handled = _overrides.function_locals(embedding_bag, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if weight.dtype == _dc.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. "
                      "Usage `embedding_bag(weight, input, ...)` is deprecated, "
                      "and should now be `embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
                         f"then it must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = _dc.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        renorm = _op("embedding_renorm_")
        if renorm is None:
            raise NotImplementedError("F.embedding_bag(max_norm=...) needs aten::embedding_renorm_, which "
                                      "dispatchcore does not define")
        from ..autograd import no_grad

        with no_grad():
            renorm(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    ret, _, _, _ = _dc.embedding_bag(weight, input, offsets, scale_grad_by_freq, modes[mode], sparse,
                                     per_sample_weights, include_last_offset, padding_idx)
    return ret


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """``F.grid_sample``: ``aten::grid_sampler``, sampling ``input`` at the normalised ``grid`` locations.

    ``align_corners=None`` warns and means ``False``, as in torch.
    """
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (grid.__class__ is not Tensor and grid.__class__ not in _INERT)):
        handled = _overrides.function_locals(grid_sample, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    mode_enum = {"bilinear": 0, "nearest": 1, "bicubic": 2}[mode]
    padding_enum = {"zeros": 0, "border": 1, "reflection": 2}[padding_mode]
    return _dc.grid_sampler(input, grid, mode_enum, padding_enum, align_corners)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """``F.layer_norm``: ``aten::layer_norm`` over the trailing ``normalized_shape`` dimensions."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)
            or (bias is not None and bias.__class__ is not Tensor and bias.__class__ not in _INERT)):
        handled = _overrides.function_locals(layer_norm, locals())
        if handled is not _NOT_HANDLED:
            return handled
    return _dc.layer_norm(input, normalized_shape, weight, bias, eps, True)


def _may_override(*values: Any) -> bool:
    """Whether a value other than None is of a class that may carry torch function (not Tensor, not inert)."""
    return any(v is not None and v.__class__ is not Tensor and v.__class__ not in _INERT for v in values)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """``F.group_norm``: torch's checks, then ``torch.group_norm`` (``aten::group_norm``, over ``native_group_norm``).

    Example:
        >>> import dispatchcore as dc
        >>> group_norm(dc.tensor([[1.0, 3.0, 5.0, 7.0]]).reshape(1, 4, 1), 2).flatten()
        tensor([-1.0000,  1.0000, -1.0000,  1.0000])
    """
    if _tf_on or _may_override(input, weight, bias):
        handled = _overrides.function_locals(group_norm, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    size = [input.size(0) * input.size(1) // num_groups, num_groups, *input.size()[2:]]
    size_prods = size[0]
    for s in size[2:]:
        size_prods *= s
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    return _dc.group_norm(input, num_groups, weight, bias, eps, True)  # torch.backends.cudnn.enabled: True


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """``F.batch_norm``: ``aten::batch_norm``; in training, batch statistics (and running-stat updates).

    Raises:
        ValueError: training on one value per channel, or a non-positive ``eps``, in torch's words.
    """
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (running_mean.__class__ is not Tensor and running_mean.__class__ not in _INERT)
            or (running_var.__class__ is not Tensor and running_var.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)
            or (bias is not None and bias.__class__ is not Tensor and bias.__class__ not in _INERT)):
        handled = _overrides.function_locals(batch_norm, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if training:
        size = input.size()
        size_prods = size[0]
        for s in size[2:]:
            size_prods *= s
        if size_prods == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _dc.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """``F.pad``: ``aten::pad`` (``constant``, ``reflect``, ``replicate``, ``circular``), last dimension first.

    Example:
        >>> import dispatchcore as dc
        >>> pad(dc.ones(2), (1, 1))
        tensor([0., 1., 1., 0.])
    """
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(_pad, locals())  # ``pad`` is the argument
        if handled is not _NOT_HANDLED:
            return handled
    try:
        return aten.pad.default(input, list(pad), mode, value)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.pad, (input, pad, mode, value), {}, error)


_pad = pad


# --- activations ----------------------------------------------------------------------------------
gelu = _c_binding(aten.gelu.default, "gelu", "torch.nn.gelu",
                  """``F.gelu``: ``aten::gelu`` (exact erf form, or ``approximate="tanh"``, a keyword).""")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.silu``: ``aten::silu``, ``x * sigmoid(x)`` (``aten::silu_`` in place)."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(silu, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if inplace:
        return aten.silu_.default(input)
    return aten.silu.default(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``F.leaky_relu``: ``aten::leaky_relu`` (``aten::leaky_relu_`` in place)."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(leaky_relu, locals())
        if handled is not _NOT_HANDLED:
            return handled
    try:
        if inplace:
            return aten.leaky_relu_.default(input, negative_slope)
        return aten.leaky_relu.default(input, negative_slope)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.leaky_relu_ if inplace else _nn.leaky_relu, (input, negative_slope), {}, error)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.elu``: ``aten::elu`` (``aten::elu_`` in place)."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(elu, locals())
        if handled is not _NOT_HANDLED:
            return handled
    try:
        if inplace:
            return aten.elu_.default(input, alpha)
        return aten.elu.default(input, alpha)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.elu_ if inplace else _nn.elu, (input, alpha), {}, error)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.hardtanh``: ``aten::hardtanh``, a clamp to ``[min_val, max_val]``."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(hardtanh, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    try:
        if inplace:
            return aten.hardtanh_.default(input, min_val, max_val)
        return aten.hardtanh.default(input, min_val, max_val)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.hardtanh_ if inplace else _nn.hardtanh, (input, min_val, max_val), {}, error)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu6``: ``aten::relu6`` (``aten::relu6_`` in place), composites over ``hardtanh(x, 0, 6)``."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(relu6, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if inplace:
        return aten.relu6_.default(input)
    return aten.relu6.default(input)


softplus = _c_binding(aten.softplus.default, "softplus", "torch.nn.softplus", """``F.softplus``: ``aten::softplus``.

    ``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.
    """)
logsigmoid = _c_binding(aten.log_sigmoid.default, "logsigmoid", "torch.nn.log_sigmoid",
                        """``F.logsigmoid``: ``aten::log_sigmoid``.

    Over ``log_sigmoid_forward``: ``min(x, 0) - log1p(exp(-|x|))``.
    """)


def softsign(input: Tensor) -> Tensor:
    """``F.softsign``: ``input / (input.abs() + 1)``, composed in Python as torch's (abs, add, div).

    Example:
        >>> import dispatchcore as dc
        >>> softsign(dc.tensor([-3.0, 1.0]))
        tensor([-0.7500,  0.5000])
    """
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(softsign, locals())
        if handled is not _NOT_HANDLED:
            return handled
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``F.tanhshrink``: ``input - input.tanh()``, composed in Python as torch's (tanh, sub)."""
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(tanhshrink, locals())
        if handled is not _NOT_HANDLED:
            return handled
    return input - input.tanh()


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``F.softmin``: ``(-input).softmax(dim)``; without ``dim``, torch's deprecated implicit choice.

    Example:
        >>> import dispatchcore as dc
        >>> softmin(dc.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    if _tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT):
        handled = _overrides.function_locals(softmin, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    negated = -input
    try:  # ``(-input).softmax(dim)``: aten::softmax.int, as the method calls it
        return aten.softmax.int(negated, dim, dtype)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_method("softmax", negated, (dim,), {} if dtype is None else {"dtype": dtype}, error)


def sigmoid(input: Tensor) -> Tensor:
    """``F.sigmoid``: ``input.sigmoid()`` (so a torch function handler sees ``Tensor.sigmoid``, as in torch)."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """``F.tanh``: ``input.tanh()`` (so a torch function handler sees ``Tensor.tanh``, as in torch)."""
    return input.tanh()


# --- utilities ------------------------------------------------------------------------------------
one_hot = _c_binding(aten.one_hot.default, "one_hot", "torch.nn.one_hot", """``F.one_hot``: ``aten::one_hot``.

    int64 rows with a single 1; ``num_classes=-1`` infers ``max + 1`` classes.

    Example:
        >>> import dispatchcore as dc
        >>> one_hot(dc.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``F.normalize``: ``input / max(||input||_p, eps)`` along ``dim``, as torch composes it."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (out is not None and out.__class__ is not Tensor and out.__class__ not in _INERT)):
        handled = _overrides.function_locals(normalize, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if out is not None:
        raise NotImplementedError("F.normalize(out=...) is not supported by dispatchcore")
    norm = input.norm(p, dim, keepdim=True)
    error: Exception | None = None
    try:
        clamped = norm.clamp_min(eps)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    if error is not None:
        clamped = _overrides.inner_method("clamp_min", norm, (eps,), {}, error)
    return input / clamped.expand_as(input)


# --- losses ---------------------------------------------------------------------------------------
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """``F.cross_entropy``: ``aten::cross_entropy_loss`` (class indices or probabilities as target).

    Example:
        >>> import dispatchcore as dc
        >>> round(cross_entropy(dc.zeros(1, 4), dc.tensor([1])).item(), 4)
        1.3863
    """
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)):
        handled = _overrides.function_locals(cross_entropy, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    enum = _reduction_enum(reduction)
    try:
        return aten.cross_entropy_loss.default(input, target, weight, enum, ignore_index, label_smoothing)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.cross_entropy_loss, (input, target, weight, enum, ignore_index, label_smoothing),
                                 {}, error)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``F.binary_cross_entropy``: ``aten::binary_cross_entropy`` on probabilities (weight broadcast to target)."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)):
        handled = _overrides.function_locals(binary_cross_entropy, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    enum = _reduction_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(list(broadcast_shapes(tuple(target.shape), tuple(weight.shape))))
    return aten.binary_cross_entropy.default(input, target, weight, enum)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """``F.binary_cross_entropy_with_logits``: ``aten::binary_cross_entropy_with_logits`` (sigmoid fused)."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)
            or (pos_weight is not None and pos_weight.__class__ is not Tensor and pos_weight.__class__ not in _INERT)):
        handled = _overrides.function_locals(binary_cross_entropy_with_logits, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    enum = _reduction_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return aten.binary_cross_entropy_with_logits.default(input, target, weight, pos_weight, enum)


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _functions.sum(weighted)
    if reduction == "mean":
        return _functions.sum(weighted) / _functions.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _l1(input: Tensor, target: Tensor, enum: int) -> Tensor:
    return aten.l1_loss.default(input, target, enum)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """``F.l1_loss``: ``aten::l1_loss``, the mean (or sum) absolute error; with ``weight``, composed."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)):
        handled = _overrides.function_locals(l1_loss, locals())
        if handled is not _NOT_HANDLED:
            return handled
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = _broadcast(input, target)
    if weight is not None:
        return _weighted(_functions.abs(expanded_input - expanded_target), weight, input, reduction)
    return _l1(expanded_input, expanded_target, _reduction_enum(reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``F.smooth_l1_loss``: ``aten::smooth_l1_loss`` (``aten::l1_loss`` when ``beta == 0``)."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)):
        handled = _overrides.function_locals(smooth_l1_loss, locals())
        if handled is not _NOT_HANDLED:
            return handled
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    enum = _reduction_enum(reduction)
    expanded_input, expanded_target = _broadcast(input, target)
    if beta == 0.0:
        return _l1(expanded_input, expanded_target, enum)
    try:
        return aten.smooth_l1_loss.default(expanded_input, expanded_target, enum, beta)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.smooth_l1_loss, (expanded_input, expanded_target, enum, beta), {}, error)


def _huber(input: Tensor, target: Tensor, enum: int, delta: float) -> Tensor:
    try:
        return aten.huber_loss.default(input, target, enum, delta)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    return _overrides.inner_call(_nn.huber_loss, (input, target, enum, delta), {}, error)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``F.huber_loss``: ``aten::huber_loss``; with ``weight``, the unreduced loss weighted in Python."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)
            or (weight is not None and weight.__class__ is not Tensor and weight.__class__ not in _INERT)):
        handled = _overrides.function_locals(huber_loss, locals())
        if handled is not _NOT_HANDLED:
            return handled
    _warn_size(input, target)
    expanded_input, expanded_target = _broadcast(input, target)
    if weight is None:
        return _huber(expanded_input, expanded_target, _reduction_enum(reduction), delta)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = _huber(expanded_input, expanded_target, 0, delta) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _functions.sum(weighted)
    if reduction == "mean":  # torch: the plain mean here (l1_loss divides by the weights' sum)
        return weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """``F.kl_div``: ``aten::kl_div`` of log-probabilities ``input`` against ``target``; ``"batchmean"`` too."""
    if (_tf_on or (input.__class__ is not Tensor and input.__class__ not in _INERT)
            or (target.__class__ is not Tensor and target.__class__ not in _INERT)):
        handled = _overrides.function_locals(kl_div, locals())
        if handled is not _NOT_HANDLED:
            return handled
    if size_average is not None or reduce is not None:
        enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        enum = _reduction_enum("sum" if reduction == "batchmean" else reduction)
    error: Exception | None = None
    try:
        reduced = aten.kl_div.default(input, target, enum, log_target=log_target)
    except Exception as exc:  # noqa: BLE001 - See Note [Calls inside nn.functional] (overrides.py)
        error = exc
    if error is not None:
        reduced = _overrides.inner_call(_dc.kl_div, (input, target, enum), {"log_target": log_target}, error)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced



def _sizes_of_two(op: Any) -> Any:
    """``op`` as its C++ binding reads a ``SymInt[2]`` size (its second argument): one int is ``[v, v]``.

    (The schema takes one int for ``int[2]`` but not for ``SymInt[2]``; torch's parser takes it for both.)
    """
    def call(self: Any, size: Any, *args: Any) -> Any:
        return op(self, [size, size] if isinstance(size, int) else size, *args)
    return call


# torch._C._nn's bindings that torch's Python-level functions call (F.elu calls torch._C._nn.elu):
# a duck type in an argument the function does not check reaches its handler with one of these as
# ``func``. See Note [Calls inside nn.functional] (dispatchcore/overrides.py).
_nn = SimpleNamespace(**{name: _overrides.nn_binding(fn, name, op) for name, fn, op in (
    ("elu", aten.elu.default, None), ("elu_", aten.elu_.default, None),
    ("leaky_relu", aten.leaky_relu.default, None), ("leaky_relu_", aten.leaky_relu_.default, None),
    ("hardtanh", aten.hardtanh.default, None), ("hardtanh_", aten.hardtanh_.default, None),
    ("pad", aten.pad.default, None), ("nll_loss_nd", _nll_loss_nd, "nll_loss"),
    ("cross_entropy_loss", aten.cross_entropy_loss.default, None),
    ("smooth_l1_loss", aten.smooth_l1_loss.default, None), ("huber_loss", aten.huber_loss.default, None),
    ("adaptive_avg_pool2d", _sizes_of_two(aten.adaptive_avg_pool2d.default), None),
    ("im2col", aten.im2col.default, None), ("col2im", _sizes_of_two(aten.col2im.default), None),
    ("upsample_nearest2d", aten.upsample_nearest2d.vec, None),
    ("upsample_bilinear2d", aten.upsample_bilinear2d.vec, None),
)})
relu_ = _functions.relu_  # F.relu_ is torch.relu_
elu_, leaky_relu_, hardtanh_ = _nn.elu_, _nn.leaky_relu_, _nn.hardtanh_  # F.elu_ is torch._C._nn.elu_

# the arguments torch's Python-level functions hand to handle_torch_function as the relevant ones
# (torch/nn/functional.py); the C++ bindings (linear, conv2d, gelu, ...) check all their arguments
_RELEVANT = {
    "relu": ("input",), "softmax": ("input",), "log_softmax": ("input",), "max_pool2d": ("input",),
    "dropout": ("input",), "pad": ("input",), "silu": ("input",), "leaky_relu": ("input",), "elu": ("input",),
    "hardtanh": ("input",), "relu6": ("input",), "mse_loss": ("input", "target", "weight"),
    "nll_loss": ("input", "target", "weight"), "embedding": ("input", "weight"),
    "embedding_bag": ("input", "weight", "offsets", "per_sample_weights"), "grid_sample": ("input", "grid"),
    "layer_norm": ("input", "weight", "bias"),
    "batch_norm": ("input", "running_mean", "running_var", "weight", "bias"), "normalize": ("input", "out"),
    "cross_entropy": ("input", "target", "weight"), "binary_cross_entropy": ("input", "target", "weight"),
    "binary_cross_entropy_with_logits": ("input", "target", "weight", "pos_weight"),
    "l1_loss": ("input", "target", "weight"), "smooth_l1_loss": ("input", "target"),
    "huber_loss": ("input", "target", "weight"), "kl_div": ("input", "target"),
    "softsign": ("input",), "tanhshrink": ("input",), "softmin": ("input",), "adaptive_avg_pool2d": ("input",),
    "unfold": ("input",), "fold": ("input",), "group_norm": ("input", "weight", "bias"), "interpolate": ("input",),
}
for _name in __all__:  # torch's names, for overrides.resolve_name and the error messages
    # torch's l1_loss checks input and target, hands weight on as relevant, and passes no weight
    _overrides.register_function(globals()[_name], f"torch.nn.functional.{_name}", _RELEVANT.get(_name),
                                 ("weight",) if _name == "l1_loss" else (),
                                 ("input", "target") if _name == "l1_loss" else None)
_overrides.register_gate(sys.modules[__name__])
