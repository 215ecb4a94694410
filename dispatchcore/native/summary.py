"""Summary operators: ``bincount`` and ``histc`` (counts in bins), ``trapezoid`` and its kin (integrals).

Mirrors ``aten/src/ATen/native/SummaryOps.cpp`` (``bincount``), ``Histogram.cpp`` (``histc``,
which torch computes with its ``histogramdd`` kernel) and ``Integration.cpp``, registered at the
keys torch 2.13 registers them: ``bincount`` has a CPU kernel only (no Meta kernel: its length
depends on the data) and an Autograd kernel whose node is ``NotImplemented`` (weights may require
grad); ``histc`` and its ``out=`` form have CPU and Meta kernels and are not differentiable;
``trapezoid``, ``cumulative_trapezoid`` and ``trapz`` are CompositeImplicitAutograd, written with
the operators torch's call, in its order.

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
from ..shapes import wrap_dim
from ..tensor import Tensor
from . import Bindings

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "histc_range", "register", "register_autograd"]

SCHEMAS: tuple[str, ...] = (
    "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
    "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
    "histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out) -> Tensor(a!)",
    *(f"{name}.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor" for name in ("trapezoid", "trapz",
                                                                            "cumulative_trapezoid")),
    "trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor",
    "trapz.dx(Tensor y, *, float dx=1, int dim=-1) -> Tensor",
    "cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor",
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


# --- trapezoid, cumulative_trapezoid, trapz (Integration.cpp): CompositeImplicitAutograd ------------------
def _differences(name: str, y: Tensor, x: Tensor, dim: int) -> Tensor:
    """The spacings ``x[1:] - x[:-1]`` along ``dim``, ``x`` viewed to broadcast against ``y`` (not expanded)."""
    if y.dtype.name == "bool" or x.dtype.name == "bool":
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        x = A.view.default(x, sizes)
    elif x.dim() < y.dim():
        x = A.view.default(x, [1] * (y.dim() - x.dim()) + list(x.shape))
    left = A.slice.Tensor(x, dim, 0, -1)
    return A.sub.Tensor(A.slice.Tensor(x, dim, 1), left)


def _spacing(name: str, y: Tensor, dx: Any) -> float:
    if y.dtype.name == "bool":
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)) or (isinstance(dx, Tensor) and (dx.dtype.is_complex or dx.dtype.name == "bool")):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _size_along(y: Tensor, dim: int) -> int:
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return int(y.shape[wrap_dim(dim, y.dim())])


def trapezoid_x(y: Tensor, x: Tensor, *, dim: int = -1) -> Tensor:
    """``at::trapezoid(y, x, dim)``: ``sum((y[1:] + y[:-1]) * dx) / 2`` along ``dim`` (0s for no samples).

    Example:
        >>> import dispatchcore as dc
        >>> dc.trapezoid(dc.tensor([1.0, 2.0, 4.0]), dc.tensor([0.0, 1.0, 3.0]))
        tensor(7.5000)
    """
    if _size_along(y, dim) == 0:
        return _zeros_except(y, dim)
    dim = wrap_dim(dim, y.dim())
    dx = _differences("trapezoid", y, x, dim)
    left = A.slice.Tensor(y, dim, 0, -1)
    summed = A.sum.dim_IntList(A.mul.Tensor(A.add.Tensor(A.slice.Tensor(y, dim, 1), left), dx), [dim])
    return A.div.Scalar(summed, 2.0)


def trapezoid_dx(y: Tensor, *, dx: Any = 1, dim: int = -1) -> Tensor:
    """``at::trapezoid(y, dx, dim)``: ``(sum(y) - (y[0] + y[-1]) / 2) * dx`` along ``dim``."""
    if _size_along(y, dim) == 0:
        return _zeros_except(y, dim)
    spacing = _spacing("trapezoid", y, dx)
    last = A.select.int(y, dim, -1)
    ends = A.mul.Scalar(A.add.Tensor(A.select.int(y, dim, 0), last), 0.5)
    return A.mul.Scalar(A.sub.Tensor(A.sum.dim_IntList(y, [dim]), ends), spacing)


def cumulative_trapezoid_x(y: Tensor, x: Tensor, *, dim: int = -1) -> Tensor:
    """``at::cumulative_trapezoid(y, x, dim)``: the running sums of the trapezoids, one fewer than samples."""
    dim = wrap_dim(dim, y.dim())
    dx = _differences("cumulative_trapezoid", y, x, dim)
    left = A.slice.Tensor(y, dim, 0, -1)
    pieces = A.mul.Tensor(A.add.Tensor(A.slice.Tensor(y, dim, 1), left), dx)
    return A.div.Scalar(A.cumsum.default(pieces, dim), 2.0)


def cumulative_trapezoid_dx(y: Tensor, *, dx: Any = 1, dim: int = -1) -> Tensor:
    """``at::cumulative_trapezoid(y, dx, dim)``: ``cumsum((y[:-1] + y[1:]) * dx / 2)`` along ``dim``."""
    spacing = _spacing("cumulative_trapezoid", y, dx)
    left = A.slice.Tensor(y, dim, 0, -1)
    return A.cumsum.default(A.mul.Scalar(A.add.Tensor(A.slice.Tensor(y, dim, 1), left), spacing / 2.0), dim)


def _zeros_except(y: Tensor, dim: int) -> Tensor:
    """``zeros_like_except(y, dim)``: zeros of y's shape without ``dim`` (numpy's integral of no samples)."""
    from .. import layouts

    sizes = list(y.shape)
    del sizes[wrap_dim(dim, y.dim())]
    return A.zeros.default(sizes, dtype=y.dtype, layout=layouts.strided, device=y.device)


IMPLICIT: dict[str, Callable[..., Any]] = {
    "trapezoid.x": trapezoid_x, "trapezoid.dx": trapezoid_dx, "trapz.x": trapezoid_x, "trapz.dx": trapezoid_dx,
    "cumulative_trapezoid.x": cumulative_trapezoid_x, "cumulative_trapezoid.dx": cumulative_trapezoid_dx,
}


def register(lib: Library) -> None:
    """The CompositeImplicitAutograd integrals (``bincount`` and ``histc`` have backend kernels only)."""
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


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
    **{name: (f"{name}(Tensor y, Tensor x, *, int64_t dim=-1)",
              f"{name}(Tensor y, *, {'double' if name == 'trapz' else 'Scalar'} dx=1, int64_t dim=-1)")
       for name in ("trapezoid", "trapz", "cumulative_trapezoid")},
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


def _integral(name: str) -> Callable[[int, dict[str, Any]], Tensor]:
    """``torch.trapezoid``/``trapz``/``cumulative_trapezoid``: with sample points ``x``, or a spacing ``dx``."""
    def call(index: int, b: dict[str, Any]) -> Tensor:
        packet = getattr(A, name)  # looked up per call: this module is imported before aten is defined
        keywords = {} if b["dim"] == -1 else {"dim": b["dim"]}
        if index == 0:
            return packet.x(b["y"], b["x"], **keywords)
        default = b["dx"].__class__ in (int, float) and b["dx"] == 1  # True is not the default 1
        return packet.dx(b["y"], **({} if default else {"dx": b["dx"]}), **keywords)

    return call


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "bincount": _BINDINGS.function("bincount", _bincount), "histc": _BINDINGS.function("histc", _histc),
    **{name: _BINDINGS.function(name, _integral(name)) for name in ("trapezoid", "trapz", "cumulative_trapezoid")},
}
METHODS: dict[str, Callable[..., Any]] = {
    "bincount": _BINDINGS.method("bincount", _bincount), "histc": _BINDINGS.method("histc", _histc),
}
for _name in ("bincount", "histc"):
    FUNCTIONS[_name].__doc__ = {"bincount": _bincount, "histc": _histc}[_name].__doc__
del _name
