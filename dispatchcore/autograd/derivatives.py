"""Derivative formulas of the core operators, registered at the Autograd alias key.

Mirrors ``tools/autograd/derivatives.yaml``: one formula per operator overload, written with
dispatched operators (so they are themselves differentiable), and node names as torch prints
them (``AddBackward0``, ``MulBackward0``, ...). See ``kernels.Derivative`` for how a formula's
parameter names choose what is saved.
"""

from __future__ import annotations

from typing import Any

from ..library import Library
from ..ops import aten
from .kernels import register_derivative

__all__ = ["register", "sum_to"]


def sum_to(grad: Any, shape: tuple[int, ...]) -> Any:
    """Reduce a broadcast gradient back to ``shape`` (``at::sum_to``)."""
    gshape = tuple(grad.shape)
    if gshape == tuple(shape):
        return grad
    lead = len(gshape) - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if dims:
        grad = aten.sum.dim_IntList(grad, dims, True)
    if lead:
        grad = aten.view.default(grad, list(shape))
    return grad


def _scale(grad: Any, alpha: Any) -> Any:
    return grad if alpha == 1 else aten.mul.Scalar(grad, alpha)


def register(lib: Library) -> None:
    """Register every built-in derivative (called once, at import of dispatchcore)."""
    d = register_derivative
    d(lib, "aten::add.Tensor", "AddBackward0", ("self", "other"),
      lambda g, self_shape, other_shape, alpha: (sum_to(g, self_shape), sum_to(_scale(g, alpha), other_shape)))
    d(lib, "aten::sub.Tensor", "SubBackward0", ("self", "other"),
      lambda g, self_shape, other_shape, alpha: (sum_to(g, self_shape),
                                                 sum_to(aten.neg.default(_scale(g, alpha)), other_shape)))
    d(lib, "aten::mul.Tensor", "MulBackward0", ("self", "other"),
      lambda g, self, other: (sum_to(aten.mul.Tensor(g, other), tuple(self.shape)),
                              sum_to(aten.mul.Tensor(g, self), tuple(other.shape))))
    d(lib, "aten::mul.Scalar", "MulBackward1", ("self",), lambda g, other: aten.mul.Scalar(g, other))
    d(lib, "aten::add.Scalar", "AddBackward1", ("self",), lambda g: g)
    d(lib, "aten::sum", "SumBackward0", ("self",),
      lambda g, self_shape: aten.expand.default(g, list(self_shape)))
    d(lib, "aten::relu", "ReluBackward0", ("self",),
      lambda g, result: aten.mul.Tensor(g, aten.gt.Scalar(result, 0)))
    d(lib, "aten::mm", "MmBackward0", ("self", "mat2"),
      lambda g, self, mat2: (aten.mm.default(g, aten.t.default(mat2)), aten.mm.default(aten.t.default(self), g)))
    d(lib, "aten::add_.Tensor", "AddBackward0", ("self", "other"),
      lambda g, self_shape, other_shape, alpha: (g, sum_to(_scale(g, alpha), other_shape)), mutates="self")
