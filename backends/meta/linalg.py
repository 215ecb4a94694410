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

from . import shapes
from .kernels import meta_tensor, python_out_wrapper

__all__ = ["KERNELS"]


def dot_meta(self: Tensor, tensor: Tensor) -> Tensor:
    _la.dot_check(self, tensor)
    return meta_tensor((), self.dtype)


def linalg_cross_meta(self: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The Python meta of torch: the ranks and the lengths at ``dim`` checked, the shapes broadcast, self's dtype."""
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    mine, theirs = (int(t.shape[shapes.wrap_dim(dim, t.dim())]) if t.dim() else -1 for t in (self, other))
    if mine != 3 or theirs != 3:
        _la.linalg_cross_check(self, other, dim)  # raises torch's error (the 0-d one included)
    return meta_tensor(shapes.python_broadcast_shapes(tuple(self.shape), tuple(other.shape)), self.dtype)


_EXPLICIT = _la.explicit_kernels()
KERNELS: dict[str, Callable[..., Any]] = {
    "dot": dot_meta, "vdot": dot_meta,
    "linalg_cross": linalg_cross_meta, "linalg_cross.out": python_out_wrapper(linalg_cross_meta),
    **{name: _EXPLICIT[name] for name in ("dot.out", "vdot.out", "mv", "mv.out")},
}
