"""Summary operators: ``bincount`` and ``histc``, counts of values in bins.

Mirrors ``aten/src/ATen/native/SummaryOps.cpp`` (``bincount``) and ``Histogram.cpp`` (``histc``,
which torch computes with its ``histogramdd`` kernel), registered at the keys torch 2.13 registers
them: ``bincount`` has a CPU kernel only (no Meta kernel: its length depends on the data) and an
Autograd kernel whose node is ``NotImplemented`` (weights may require grad); ``histc`` and its
``out=`` form have CPU and Meta kernels and are not differentiable.

``histc_range`` here is torch's choice of the outer bin edges, shared by the CPU kernels.
Invariant: a value falls in the bin torch's linear interpolation puts it in, computed in the
input's dtype, so edges and rounding agree with torch's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._library import Library
from ..ops import aten as A
from ..tensor import Tensor
from . import Bindings

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "histc_range", "register", "register_autograd"]

SCHEMAS: tuple[str, ...] = (
    "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
    "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
    "histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out) -> Tensor(a!)",
)


def _cpp(value: float) -> str:
    """A double as C++'s ``operator<<`` prints it (six significant digits; NaN from the data as -nan)."""
    return "-nan" if math.isnan(value) else f"{value:g}"


def histc_range(low: float, high: float, extrema: Callable[[], tuple[float, float]], numel: int) -> tuple[float, float]:
    """``histc_select_outer_bin_edges``: the range asked for, else the data's, widened by one if empty.

    ``extrema`` gives the data's minimum and maximum (``aminmax``); it is called only when the
    range asked for is empty and there is data. A NaN there is printed as C++ prints the
    aminmax result, ``-nan``.
    """
    left, right = float(low), float(high)
    from_data = False
    if left == right and numel > 0:
        left, right = extrema()
        from_data = True
    if left == right:
        left, right = left - 1, right + 1
    if math.isinf(left) or math.isinf(right) or math.isnan(left) or math.isnan(right):
        show = _cpp if from_data else (lambda v: "nan" if math.isnan(v) else f"{v:g}")
        raise RuntimeError(f"torch.histc: range of [{show(left)}, {show(right)}] is not finite")
    if not left < right:
        raise RuntimeError("torch.histc: max must be larger than min")
    return left, right


def register(lib: Library) -> None:
    """No composite kernels: both operators have backend kernels only."""


def register_autograd(lib: Library) -> None:
    """``bincount``: a ``NotImplemented`` node when the weights require grad; ``histc``: no gradient."""
    from ..autograd.kernels import register_derivative, register_nondifferentiable
    from .pointwise import _no_derivative, _not_implemented_node

    _not_implemented_node(register_derivative(lib, "aten::bincount", "NotImplemented", ("weights",),
                                              _no_derivative("bincount")))
    register_nondifferentiable(lib, "aten::histc")


# --- torch.* functions and Tensor methods --------------------------------------------------------------
_BINDINGS = Bindings({
    "bincount": ("bincount(Tensor input, Tensor? weights=None, SymInt minlength=0)",),
    "Tensor.bincount": ("bincount(Tensor? weights=None, SymInt minlength=0)",),
    "histc": ("histc(Tensor input, int64_t bins=100, Scalar min=0, Scalar max=0, *, Tensor out=None)",),
    "Tensor.histc": ("histc(int64_t bins=100, Scalar min=0, Scalar max=0)",),
})


def _bincount(index: int, b: dict[str, Any]) -> Tensor:
    """``torch.bincount(input, weights=None, minlength=0)``: how often each non-negative integer occurs.

    Example:
        >>> import dispatchcore as dc
        >>> dc.bincount(dc.tensor([1, 1, 3]))
        tensor([0, 2, 0, 1])
    """
    from .shape import _trailing

    return A.bincount.default(*_trailing(b["input"], b["weights"], b["minlength"], defaults=(None, 0)))


def _histc(index: int, b: dict[str, Any]) -> Tensor:
    """``torch.histc(input, bins=100, min=0, max=0, *, out=None)``: a histogram of equal-width bins.

    Example:
        >>> import dispatchcore as dc
        >>> dc.histc(dc.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    from .shape import _trailing

    args = _trailing(b["input"], b["bins"], b["min"], b["max"], defaults=(100, 0, 0))
    if b.get("out") is not None:
        return A.histc.out(*args, out=b["out"])
    return A.histc.default(*args)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "bincount": _BINDINGS.function("bincount", _bincount), "histc": _BINDINGS.function("histc", _histc),
}
METHODS: dict[str, Callable[..., Any]] = {
    "bincount": _BINDINGS.method("bincount", _bincount), "histc": _BINDINGS.method("histc", _histc),
}
for _name in ("bincount", "histc"):
    FUNCTIONS[_name].__doc__ = {"bincount": _bincount, "histc": _histc}[_name].__doc__
del _name
