"""Meta kernels of the random family (``dispatchcore.native.random``): geometry, dtype and checks only.

Mirrors torch's meta registrations of the samplers (``uniform_``, ``normal_``, ``random_``,
``exponential_``, ``bernoulli_.Tensor``: the input comes back, after the checks torch's meta kernels make,
which are fewer than CPU's and worded apart) and the
Meta kernels torch gives the CompositeExplicitAutograd factories (``rand``, ``randn``, ``randint``,
``randint.low``, ``normal.float_float``, ``bernoulli``, ``bernoulli.p``), which run their composite here.
Invariant: no kernel reads data or draws a number.
"""

from __future__ import annotations

from typing import Any

from dispatchcore import contiguous_format, ops
from dispatchcore import dtypes as _dt
from dispatchcore.native import random as R
from dispatchcore.shapes import broadcast_shapes

__all__ = ["KERNELS"]

_FLOATING = (_dt.float16, _dt.float32, _dt.float64)


def uniform__meta(self, from_=0.0, to=1.0, *, generator=None):
    """Torch's meta ``uniform_`` checks nothing (CPU checks the bounds and the dtype)."""
    return self


def normal__meta(self, mean=0.0, std=1.0, *, generator=None):
    """Torch's meta ``normal_`` (a Python decomposition): std first, then a floating dtype, in its words."""
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std)!r}")
    if self.dtype not in _FLOATING:
        raise RuntimeError(f"expected a floating-point or complex dtype, but got dtype={self.dtype}")
    return self


def random__meta(self, *args: Any, generator=None):
    return self


def exponential__meta(self, lambd=1.0, *, generator=None):
    """Torch's meta ``exponential_``: the dtype first (empty tensors too), then lambda."""
    if self.dtype not in _FLOATING:
        raise RuntimeError("Exponential distribution is a continuous probability distribution.         dtype must be a "
                           f"floating point but you specified {self.dtype}")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={float(lambd)!r}")
    return self


def bernoulli__tensor_meta(self, p, *, generator=None):
    return self


def normal_tensor_float_meta(mean, std=1.0, *, generator=None):
    R.normal_std_check(std)
    return ops.aten.empty_like.default(mean, memory_format=contiguous_format)


def normal_float_tensor_meta(mean, std, *, generator=None):
    R.normal_tensor_std_check(std)
    return ops.aten.empty_like.default(std, memory_format=contiguous_format)


def normal_tensor_tensor_meta(mean, std, *, generator=None):
    R.normal_tensor_std_check(std)
    shape = broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    return ops.aten.empty.memory_format(list(shape), dtype=mean.dtype, device=mean.device)


def multinomial_meta(self, num_samples, replacement=False, *, generator=None):
    """The geometry of ``multinomial``, after torch's argument checks (the values are not read)."""
    R.multinomial_check(self, num_samples, replacement)
    shape = [num_samples] if self.dim() == 1 else [self.shape[0], num_samples]
    return ops.aten.empty.memory_format(shape, dtype=_dt.int64, device=self.device)


KERNELS: dict[str, Any] = {
    "multinomial": multinomial_meta,
    "normal.Tensor_float": normal_tensor_float_meta, "normal.float_Tensor": normal_float_tensor_meta,
    "normal.Tensor_Tensor": normal_tensor_tensor_meta, "randint_like.Tensor": R.randint_like_tensor,
    "uniform_": uniform__meta, "normal_": normal__meta, "random_": random__meta, "random_.from": random__meta,
    "random_.to": random__meta, "exponential_": exponential__meta, "bernoulli_.Tensor": bernoulli__tensor_meta,
    "rand": R.rand, "randn": R.randn, "randint": R.randint, "randint.low": R.randint_low,
    "normal.float_float": R.normal_float_float, "bernoulli": R.bernoulli, "bernoulli.p": R.bernoulli_p,
}
