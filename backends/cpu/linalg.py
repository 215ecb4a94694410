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
from dispatchcore.tensor import wrap_cpu

from .kernels import _new, _not_implemented

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


KERNELS: dict[str, Callable[..., Any]] = {"dot": dot_cpu, "vdot": vdot_cpu}
