"""CPU kernels of the summary family: ``bincount`` and ``histc`` (with ``out=``).

Mirrors ``_bincount_cpu`` (``SummaryOps.cpp``) and ``histogram_histc_out`` (``Histogram.cpp`` over
``histogramdd_cpu_contiguous``): torch's checks in torch's order and words, then numpy counts.
Invariant: the arithmetic is torch's, in torch's dtype: float32 weights are summed in float32,
in order (others in float64), and a value's bin is ``(x - left) * bins / (right - left)``
truncated, computed in the input's dtype, the last edge inclusive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore.dtypes import TYPEMETA_NAMES
from dispatchcore.native.summary import histc_range
from dispatchcore.tensor import wrap_cpu

from .kernels import _F32, _F64, _I64, _item, _new, _not_implemented, _resize_out

__all__ = ["KERNELS"]


def bincount_cpu(self, weights=None, minlength=0):
    """``_bincount_cpu``: integral 1-d non-negative input; counts, or the weights summed per value."""
    a = self._data
    if a.dtype.kind not in "iu":
        raise _not_implemented("bincount_cpu", a.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim == 1 and a.size == 0:
        return wrap_cpu(_new((minlength,), _I64, 0))
    if a.ndim != 1 or a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    bins = max(int(a.max()) + 1, minlength)
    if weights is None:
        return wrap_cpu(np.bincount(a, minlength=bins).astype(_I64))
    w = weights._data
    dt = _F32 if w.dtype == _F32 else _F64  # float weights stay float; any other kind is read as double
    out = np.zeros(bins, dt)
    np.add.at(out, a, w.astype(dt, copy=False))  # in order, one addition at a time, as torch's loop
    return wrap_cpu(out)


def _histc(self, bins, low, high):
    """``histogram_histc_out``'s checks and counts, as a new array of the input's dtype."""
    a = self._data
    if a.dtype.kind != "f":
        raise _not_implemented("histogram_cpu", a.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    flat = a.reshape(-1)
    left, right = histc_range(_item(low), _item(high), lambda: (float(np.min(flat)), float(np.max(flat))),
                              flat.size)
    # the outer edges in the input's dtype (linspace's first and last), then each value's bin
    lo, hi = a.dtype.type(left), a.dtype.type(right)
    keep = flat[(flat >= lo) & (flat <= hi)]
    with np.errstate(all="ignore"):
        position = ((keep - lo) * a.dtype.type(bins) / (hi - lo)).astype(np.int64)
    position[position == bins] = bins - 1  # the last edge belongs to the last bin
    return np.bincount(position, minlength=bins).astype(a.dtype)


def histc_cpu(self, bins=100, min=0, max=0):  # noqa: A002 - the schema's names
    return wrap_cpu(_histc(self, bins, min, max))


def histc_out_cpu(self, bins=100, min=0, max=0, *, out):  # noqa: A002
    """``histogram_histc_out``: out must have the input's dtype; resized, then written."""
    if out.dtype is not self.dtype:
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                           f"{TYPEMETA_NAMES[self.dtype.name]} and hist {TYPEMETA_NAMES[out.dtype.name]}")
    counts = _histc(self, bins, min, max)
    np.copyto(_resize_out(out, counts.shape), counts)
    return out


KERNELS: dict[str, Callable[..., Any]] = {"bincount": bincount_cpu, "histc": histc_cpu, "histc.out": histc_out_cpu}
