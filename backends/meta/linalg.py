"""Meta kernels of the linalg family: the geometry of ``dot``, ``vdot`` and ``mv``.

torch 2.13 gives every operator of the family a Meta kernel (Python decompositions registered
at Meta): ``dot``/``vdot`` are a 0-d tensor of the inputs' dtype after ``dot_check``; ``mv`` and the
``out=`` forms run their CompositeExplicitAutograd kernels (``dispatchcore.native.linalg``) on meta
tensors, which makes the checks and the layout the CPU's. Invariant: a meta result has exactly the
geometry the CPU result has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore.native import linalg as _la
from dispatchcore.tensor import Tensor

from .kernels import meta_tensor

__all__ = ["KERNELS"]


def dot_meta(self: Tensor, tensor: Tensor) -> Tensor:
    _la.dot_check(self, tensor)
    return meta_tensor((), self.dtype)


_EXPLICIT = _la.explicit_kernels()
KERNELS: dict[str, Callable[..., Any]] = {
    "dot": dot_meta, "vdot": dot_meta,
    **{name: _EXPLICIT[name] for name in ("dot.out", "vdot.out", "mv", "mv.out")},
}
