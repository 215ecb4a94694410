"""CPU kernels of the linalg family (``dispatchcore.native.linalg``): ``dot`` and ``vdot``.

Mirrors the CPU ``dot``/``vdot`` of ``aten/src/ATen/native/Blas.cpp``: ``dot_check``, then one
0-d result of the inputs' dtype (integers wrap, half accumulates in float as torch's
``dot_naive`` does); every dtype but bool. ``vdot`` of real tensors is ``dot`` (the conjugate is
the tensor). ``mv`` and the ``out=`` forms are CompositeExplicitAutograd in torch, so they have
no CPU kernel here either. Invariant: numpy in, tensor out; no dispatcher call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore.native import linalg as _la
from dispatchcore.native.structured import check_out_dtype
from dispatchcore.tensor import wrap_cpu

from .kernels import _TORCH_NAME, _new, _not_implemented, _resize_out

__all__ = ["KERNELS"]

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)


def dot_cpu(self, tensor):
    _la.dot_check(self, tensor)
    a, b = self._data, tensor._data
    dt = a.dtype
    if dt.kind == "b":
        raise _not_implemented("dot", dt)
    with np.errstate(all="ignore"):  # integer products wrap, as in C++
        r = np.dot(a.astype(_F32), b.astype(_F32)) if dt == _F16 else np.dot(a, b)
    out = _new((), dt)
    out[()] = r
    return wrap_cpu(out)


def vdot_cpu(self, other):
    return dot_cpu(self, other)


def linalg_cross_cpu(self, other, *, dim=-1):
    """``linalg_cross``: the meta checks, then the cross product in the inputs' dtype (``a1 * b2 - a2 * b1``, ...)."""
    shape = _la.linalg_cross_check(self, other, dim)
    a, b = self._data, other._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_NAME[a.dtype]} but found {_TORCH_NAME[b.dtype]}")
    if a.dtype.kind == "b":
        raise _not_implemented("cross", a.dtype)
    d = dim % a.ndim
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    out = _new(shape, a.dtype)
    with np.errstate(all="ignore"):  # integer products wrap, as in C++
        for i in range(3):
            j, k = (i + 1) % 3, (i + 2) % 3
            pick = (slice(None),) * d
            out[pick + (i,)] = a[pick + (j,)] * b[pick + (k,)] - a[pick + (k,)] * b[pick + (j,)]
    return wrap_cpu(out)


def linalg_cross_out_cpu(self, other, *, dim=-1, out):
    """``linalg_cross.out``: the checks, out's dtype must be self's, then the product written into it."""
    shape = _la.linalg_cross_check(self, other, dim)
    check_out_dtype("exact", self.dtype, out.dtype)
    r = linalg_cross_cpu(self, other, dim=dim)._data
    np.copyto(_resize_out(out, shape, [r]), r)
    return out


KERNELS: dict[str, Callable[..., Any]] = {"dot": dot_cpu, "vdot": vdot_cpu, "linalg_cross": linalg_cross_cpu,
                                          "linalg_cross.out": linalg_cross_out_cpu}
