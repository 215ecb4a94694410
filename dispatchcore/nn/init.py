"""``nn.init``: the in-place initialisers layers use in ``reset_parameters``.

Mirrors ``torch/nn/init.py``: the same bounds, computed with the same Python float arithmetic,
and the same calls to ``Tensor.uniform_``/``normal_``/``fill_`` under ``no_grad``, in the same
order, so that after ``manual_seed`` a model starts with torch's exact weights (the draws
themselves are the CPU generator's; see ``dispatchcore`` random numbers).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..autograd import no_grad
from ..tensor import Tensor

__all__ = ["calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_",
           "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (``torch.nn.init.calculate_gain``).

    Example:
        >>> calculate_gain("relu")
        1.4142135623730951
        >>> calculate_gain("leaky_relu", 0.2)
        1.3867504905630728
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)``: input/output feature maps times the receptive field size."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with draws from U(a, b), without recording grad.

    Example:
        >>> import dispatchcore as dc
        >>> w = uniform_(dc.empty(3), -1.0, 1.0)
        >>> bool(((w >= -1) & (w < 1)).all())
        True
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with draws from N(mean, std²), without recording grad."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """Fill ``tensor`` from N(mean, std²) truncated to ``[a, b]``, torch's draws for the same seed.

    torch 2.13's rejection sampler, call for call: when the interval holds more than 30% of the
    normal's mass, normal draws with the ones outside ``[a, b]`` redrawn until none is left (the
    bounds cast to the tensor's dtype first); otherwise uniform proposals on ``[a, b]`` accepted
    with probability ``pdf(x) / pdf(mode)``. A meta tensor is returned as it is.

    Example:
        >>> import dispatchcore as dc
        >>> w = trunc_normal_(dc.empty(1000), std=0.02, a=-0.04, b=0.04)
        >>> bool(((w >= -0.04) & (w <= 0.04)).all())
        True
    """
    from .. import where  # late: the package imports nn

    if tensor.is_meta:
        return tensor

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            lo = tensor.new_tensor(a, device="cpu").item()
            hi = tensor.new_tensor(b, device="cpu").item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = where(mask, _empty_like(result).normal_(mean, std, generator=generator), result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = _empty_like(tensor)
        accept_buf = _empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)  # the first proposals straight into the tensor
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)  # log pdf(x) - log pdf(mode)
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                pending = where(pending, accept_buf.uniform_(generator=generator).log_().gt(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def _empty_like(t: Tensor) -> Tensor:
    from .. import empty_like  # late: the package imports nn

    return empty_like(t)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``.

    Example:
        >>> import dispatchcore as dc
        >>> constant_(dc.empty(2), 0.5)
        tensor([0.5000, 0.5000])
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones."""
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros."""
    with no_grad():
        return tensor.zero_()


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    """The He standard deviation ``gain / sqrt(fan)``, or None (with torch's warning) for a zero-element tensor."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``; what ``Linear`` and convs use.

    A zero-element tensor is left alone, with torch's warning.
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    with no_grad():
        return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:
    """He normal: N(0, std²) with ``std = gain / sqrt(fan)``."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    with no_grad():
        return tensor.normal_(0, std, generator=generator)
