"""The layers of ``torch.nn.modules``: linear, convolution, pooling, dropout, embedding, norms, activations.

Mirrors ``torch/nn/modules/{linear,conv,pooling,flatten,dropout,sparse,normalization,batchnorm,
activation}.py``. Invariant: each layer allocates its parameters with ``empty`` in torch's order
and fills them in ``reset_parameters`` with torch's ``nn.init`` calls in torch's order, so a seeded
construction draws exactly torch's numbers; ``forward`` is one ``nn.functional`` call.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import dispatchcore as _dispatchcore

from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_dc: Any = _dispatchcore  # functions attached at import (torch bindings), untyped

__all__ = ["ELU", "GELU", "AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Bilinear", "Conv1d",
           "Conv2d", "Dropout", "Embedding", "Flatten", "Fold", "GroupNorm", "Hardtanh", "Identity", "LayerNorm",
           "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MaxPool2d", "ReLU", "ReLU6", "SiLU", "Sigmoid",
           "Softmax", "Softmin", "Softplus", "Softsign", "Tanh", "Tanhshrink", "Unfold", "Upsample"]


def _factory_kwargs(device: Any, dtype: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if dtype is not None:
        out["dtype"] = dtype
    if device is not None:
        out["device"] = device
    return out


def _weight_and_bias(module: Module, shape: tuple[int, ...], bias: bool, kw: dict[str, Any]) -> None:
    """The end of ``Linear``'s and the convolutions' ``__init__``: parameters, then ``reset_parameters()``.

    ``module`` gets an uninitialised ``weight`` of ``shape`` and a ``bias`` of ``shape[0]`` (or a None ``bias``).
    """
    module.weight = Parameter(_dc.empty(shape, **kw))
    if bias:
        module.bias = Parameter(_dc.empty(shape[0], **kw))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


def _kaiming_reset(module: Module, *, empty_fan_bias: bool) -> None:
    """The ``reset_parameters`` of ``Linear`` and the convolutions, as torch's.

    ``kaiming_uniform_(weight, a=sqrt(5))``, then the bias from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.
    When the weight's ``fan_in`` is 0, ``Linear`` (``empty_fan_bias=True``) still fills the bias from
    ``U(0, 0)`` while the convolutions leave it as it is.
    """
    init.kaiming_uniform_(module.weight, a=math.sqrt(5))
    if module.bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(module.weight)
        if fan_in > 0 or empty_fan_bias:
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(module.bias, -bound, bound)


class Identity(Module):
    """Returns its input (``torch.nn.Identity``); constructor arguments are ignored.

    Example:
        >>> import dispatchcore as dc
        >>> Identity(54, unused="x")(dc.ones(1))
        tensor([1.])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` (``torch.nn.Linear``); weight ``(out_features, in_features)``.

    Initialised as torch does: ``kaiming_uniform_(weight, a=sqrt(5))``, then the bias from
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.

    Example:
        >>> import dispatchcore as dc
        >>> m = Linear(3, 2)
        >>> m
        Linear(in_features=3, out_features=2, bias=True)
        >>> m(dc.ones(4, 3)).shape
        dispatchcore.Size([4, 2])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        kw = _factory_kwargs(device, dtype)
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), bias, kw)

    def reset_parameters(self) -> None:
        _kaiming_reset(self, empty_fan_bias=True)

    def forward(self, input: Any) -> Any:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1ᵀ A x2 + b`` per output feature (``torch.nn.Bilinear``); weight ``(out, in1, in2)``.

    Weight and bias drawn from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``, as torch does.

    Example:
        >>> import dispatchcore as dc
        >>> m = Bilinear(3, 4, 2)
        >>> m
        Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)
        >>> m(dc.ones(5, 3), dc.ones(5, 4)).shape
        dispatchcore.Size([5, 2])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        kw = _factory_kwargs(device, dtype)
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, kw)

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Any, input2: Any) -> Any:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class _ConvNd(Module):
    """Shared by ``Conv1d``/``Conv2d``: argument checks, parameters, padding modes, ``extra_repr``."""

    _n = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        kw = _factory_kwargs(device, dtype)
        super().__init__()
        n = self._n
        kernel_size, stride, dilation = F._ntuple(kernel_size, n), F._ntuple(stride, n), F._ntuple(dilation, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = F._ntuple(padding, n)
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, "
                             f"but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0,) * n
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            reversed_padding = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    reversed_padding[2 * i] = total // 2
                    reversed_padding[2 * i + 1] = total - total // 2
        else:
            reversed_padding = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = reversed_padding
        _weight_and_bias(self, (out_channels, in_channels // groups, *kernel_size), bias, kw)

    def reset_parameters(self) -> None:
        _kaiming_reset(self, empty_fan_bias=False)

    def _conv(self, input: Any, weight: Any, bias: Any, padding: Any) -> Any:
        raise NotImplementedError

    def forward(self, input: Any) -> Any:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._conv(padded, self.weight, self.bias, (0,) * self._n)
        return self._conv(input, self.weight, self.bias, self.padding)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class Conv1d(_ConvNd):
    """1-d convolution over ``(N, C, L)`` (``torch.nn.Conv1d``); weight ``(out, in // groups, k)``.

    Example:
        >>> Conv1d(2, 4, 3, padding="same")
        Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same)
    """

    _n = 1

    def _conv(self, input: Any, weight: Any, bias: Any, padding: Any) -> Any:
        return F.conv1d(input, weight, bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-d convolution over ``(N, C, H, W)`` (``torch.nn.Conv2d``); weight ``(out, in // groups, kh, kw)``.

    Example:
        >>> Conv2d(3, 4, 3)
        Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1))
    """

    _n = 2

    def _conv(self, input: Any, weight: Any, bias: Any, padding: Any) -> Any:
        return F.conv2d(input, weight, bias, self.stride, padding, self.dilation, self.groups)


class MaxPool2d(Module):
    """Max over sliding windows (``torch.nn.MaxPool2d``); ``stride`` defaults to ``kernel_size``.

    Example:
        >>> MaxPool2d(2)
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Any) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over sliding windows (``torch.nn.AvgPool2d``); ``stride`` defaults to ``kernel_size``.

    Example:
        >>> AvgPool2d(2)
        AvgPool2d(kernel_size=2, stride=2, padding=0)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Any) -> Any:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Mean over windows sized to give ``output_size`` (``torch.nn.AdaptiveAvgPool2d``); None keeps a size.

    Example:
        >>> import dispatchcore as dc
        >>> AdaptiveAvgPool2d((1, None))(dc.ones(1, 2, 4, 3)).shape
        dispatchcore.Size([1, 2, 1, 3])
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Any) -> Any:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class Unfold(Module):
    """Sliding blocks as columns (``torch.nn.Unfold``, ``F.unfold``: ``aten::im2col``).

    Example:
        >>> Unfold(kernel_size=(2, 3))
        Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1)
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Any) -> Any:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Columns summed back into an image (``torch.nn.Fold``, ``F.fold``: ``aten::col2im``).

    Example:
        >>> Fold(output_size=(4, 5), kernel_size=2)
        Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Any) -> Any:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Upsample(Module):
    """Resizes by ``size`` or ``scale_factor`` (``torch.nn.Upsample``): ``F.interpolate``.

    Example:
        >>> Upsample(scale_factor=2, mode="bilinear")
        Upsample(scale_factor=2.0, mode='bilinear')
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Any) -> Any:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class Flatten(Module):
    """Flattens dimensions ``start_dim..end_dim`` (``torch.nn.Flatten``), by default all but the batch one.

    Example:
        >>> import dispatchcore as dc
        >>> Flatten()(dc.ones(2, 3, 4)).shape
        dispatchcore.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Any) -> Any:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    """Zeroes elements with probability ``p`` in training and scales by ``1/(1-p)`` (``torch.nn.Dropout``).

    Example:
        >>> Dropout(0.2)
        Dropout(p=0.2, inplace=False)
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    """A lookup table of ``num_embeddings`` rows (``torch.nn.Embedding``), initialised from N(0, 1).

    The ``padding_idx`` row is zeroed after initialisation and gets no gradient.

    Example:
        >>> import dispatchcore as dc
        >>> e = Embedding(4, 3, padding_idx=0)
        >>> e(dc.tensor([0])).tolist()
        [[0.0, 0.0, 0.0]]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        kw = _factory_kwargs(device, dtype)
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(_dc.empty((num_embeddings, embedding_dim), **kw), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with _dc.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Any) -> Any:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An ``Embedding`` over the given 2-d weight (frozen by default)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)


def _affine_parameters(module: Module, shape: Any, affine: bool, bias: bool, kw: dict[str, Any]) -> None:
    """A norm layer's ``weight`` and ``bias`` of ``shape`` (``empty``, in torch's order), or None for each."""
    module.register_parameter("weight", Parameter(_dc.empty(shape, **kw)) if affine else None)
    module.register_parameter("bias", Parameter(_dc.empty(shape, **kw)) if affine and bias else None)


def _reset_affine(module: Module) -> None:
    init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalises over the trailing ``normalized_shape`` dimensions (``torch.nn.LayerNorm``).

    Example:
        >>> LayerNorm(3)
        LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        kw = _factory_kwargs(device, dtype)
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            _reset_affine(self)

    def forward(self, input: Any) -> Any:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalises each of ``num_groups`` groups of channels (``torch.nn.GroupNorm``), per sample.

    Example:
        >>> GroupNorm(2, 4)
        GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        kw = _factory_kwargs(device, dtype)
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, kw)  # the int itself: torch's message for a float
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            _reset_affine(self)

    def forward(self, input: Any) -> Any:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _BatchNorm(Module):
    """Shared by ``BatchNorm1d``/``BatchNorm2d`` (torch's ``_NormBase`` + ``_BatchNorm``)."""

    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        kw = _factory_kwargs(device, dtype)
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_dc.empty(num_features, **kw))
            if bias:
                self.bias = Parameter(_dc.empty(num_features, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _dc.zeros(num_features, **kw))
            self.register_buffer("running_var", _dc.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", _dc.tensor(0, dtype=_dc.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Any) -> None:
        raise NotImplementedError

    def forward(self, input: Any) -> Any:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None, self.weight, self.bias, bn_training, factor,
                            self.eps)

    def _load_from_state_dict(self, state_dict: Any, prefix: str, local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str]) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"  # added at version 2: old checkpoints count from 0
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else _dc.tensor(0, dtype=_dc.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over ``(N, C)`` or ``(N, C, L)`` (``torch.nn.BatchNorm1d``).

    Example:
        >>> BatchNorm1d(3)
        BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over ``(N, C, H, W)`` (``torch.nn.BatchNorm2d``).

    Example:
        >>> BatchNorm2d(3, affine=False)
        BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)
    """

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


# --- activations ------------------------------------------------------------------------------------
class _Inplace(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(x, 0)`` (``torch.nn.ReLU``).

    Example:
        >>> import dispatchcore as dc
        >>> ReLU()(dc.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """

    def forward(self, input: Any) -> Any:
        return F.relu(input, inplace=self.inplace)




class SiLU(_Inplace):
    """``x * sigmoid(x)`` (``torch.nn.SiLU``)."""

    def forward(self, input: Any) -> Any:
        return F.silu(input, inplace=self.inplace)


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]`` (``torch.nn.Hardtanh``).

    Example:
        >>> Hardtanh(-2.0, 2.0, inplace=True)
        Hardtanh(min_val=-2.0, max_val=2.0, inplace=True)
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Any) -> Any:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` (``torch.nn.ReLU6``): Hardtanh(0, 6), so it calls ``aten::hardtanh`` as torch's does.

    Example:
        >>> ReLU6(inplace=True)
        ReLU6(inplace=True)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit (``torch.nn.GELU``), exact or ``approximate="tanh"``.

    Example:
        >>> GELU("tanh")
        GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Any) -> Any:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class _ScalarInplace(Module):
    """An activation with one scalar hyper-parameter (the attribute ``_scalar`` names) and ``inplace``."""

    _scalar = ""

    def __init__(self, value: float, inplace: bool) -> None:
        super().__init__()
        setattr(self, self._scalar, value)
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"{self._scalar}={getattr(self, self._scalar)}" + (", inplace=True" if self.inplace else "")


class LeakyReLU(_ScalarInplace):
    """``x`` for positive ``x``, ``negative_slope * x`` otherwise (``torch.nn.LeakyReLU``)."""

    _scalar = "negative_slope"

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__(negative_slope, inplace)

    def forward(self, input: Any) -> Any:
        return F.leaky_relu(input, self.negative_slope, self.inplace)


class ELU(_ScalarInplace):
    """Exponential linear unit (``torch.nn.ELU``)."""

    _scalar = "alpha"

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha, inplace)

    def forward(self, input: Any) -> Any:
        return F.elu(input, self.alpha, self.inplace)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta`` (``torch.nn.Softplus``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Any) -> Any:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """``log(sigmoid(x))`` (``torch.nn.LogSigmoid``, ``F.logsigmoid``)."""

    def forward(self, input: Any) -> Any:
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)`` (``torch.nn.Softsign``)."""

    def forward(self, input: Any) -> Any:
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)`` (``torch.nn.Tanhshrink``)."""

    def forward(self, input: Any) -> Any:
        return F.tanhshrink(input)


class Tanh(Module):
    """Hyperbolic tangent (``torch.nn.Tanh``)."""

    def forward(self, input: Any) -> Any:
        return _dc.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid (``torch.nn.Sigmoid``)."""

    def forward(self, input: Any) -> Any:
        return _dc.sigmoid(input)


class Softmax(Module):
    """Softmax along ``dim`` (``torch.nn.Softmax``); ``dim=None`` is torch's deprecated implicit choice.

    Example:
        >>> Softmax(dim=1)
        Softmax(dim=1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """Softmax of ``-x`` along ``dim`` (``torch.nn.Softmin``; not a Softmax subclass, as in torch).

    Example:
        >>> Softmin(dim=0)
        Softmin(dim=0)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log of softmax along ``dim`` (``torch.nn.LogSoftmax``)."""

    def forward(self, input: Any) -> Any:
        return F.log_softmax(input, self.dim, _stacklevel=5)
