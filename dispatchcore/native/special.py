"""``xlogy``, ``logit``, ``frexp`` and ``polygamma``: pointwise special functions (the losses use the first two).

Mirrors ``aten/src/ATen/native/BinaryOps.cpp`` (``xlogy`` and its Scalar overloads, whose names the
pointwise tables cannot spell: ``Scalar_Self``, ``OutScalar_Other``, ...) and ``UnaryOps.cpp``
(``logit``, with its ``eps`` clamp, and ``logit_backward``), as ``native_functions.yaml`` and
``derivatives.yaml`` declare them: ``xlogy.Tensor`` and ``logit_backward`` are structured (their
``out=`` overloads are the backend kernels, ``structured.register`` builds the rest), the Scalar
overloads of ``xlogy`` are CompositeExplicitAutograd (a wrapped number, then the Tensor overload),
``logit`` has backend kernels of its own, ``frexp`` is CompositeExplicitAutograd over its
``out=`` overload's kernel. ``kl_div`` (``loss.py``) and ``binary_cross_entropy``'s
target derivative (``norms.py``) call them as torch does. Invariant: each operator is registered at
exactly the keys torch 2.13 registers it; formulas call dispatched operators only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._library import Library
from ..ops import aten as A
from ..tensor import Tensor
from . import Bindings
from .pointwise import _number

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "explicit_kernels", "logit_bounds", "register", "register_autograd"]

_OUT = "*, Tensor(a!) out) -> Tensor(a!)"
SCHEMAS: tuple[str, ...] = (
    "xlogy.Tensor(Tensor self, Tensor other) -> Tensor",
    "xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor",
    "xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor",
    "xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "xlogy_.Scalar_Other(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    f"xlogy.OutTensor(Tensor self, Tensor other, {_OUT}",
    f"xlogy.OutScalar_Self(Scalar self, Tensor other, {_OUT}",
    f"xlogy.OutScalar_Other(Tensor self, Scalar other, {_OUT}",
    "logit(Tensor self, float? eps=None) -> Tensor",
    "logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)",
    f"logit.out(Tensor self, float? eps=None, {_OUT}",
    "logit_backward(Tensor grad_output, Tensor self, float? eps=None) -> Tensor",
    "logit_backward.grad_input(Tensor grad_output, Tensor self, float? eps=None, *, Tensor(a!) grad_input) "
    "-> Tensor(a!)",
    "polygamma(int n, Tensor self) -> Tensor",
    "polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "polygamma_(Tensor(a!) self, int n) -> Tensor(a!)",
    "frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)",
    "frexp.Tensor_out(Tensor self, *, Tensor(a!) mantissa, Tensor(b!) exponent) "
    "-> (Tensor(a!) mantissa, Tensor(b!) exponent)",
)


def polygamma_check(n: int) -> None:
    """``polygamma``'s structured meta check."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def frexp_check(self: Tensor, mantissa: Tensor, exponent: Tensor) -> None:
    """``frexp_out``'s checks, in its order."""
    from ..dtypes import TYPEMETA_NAMES, int32

    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    if mantissa.dtype is not self.dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {TYPEMETA_NAMES[self.dtype.name]} but "
                           f"got {TYPEMETA_NAMES[mantissa.dtype.name]}")
    if exponent.dtype is not int32:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                           f"{TYPEMETA_NAMES[exponent.dtype.name]}")


def frexp(self: Tensor) -> tuple[Tensor, Tensor]:
    """``at::frexp`` (CompositeExplicitAutograd): two ``empty_like`` results, filled by ``frexp.Tensor_out``."""
    from ..dtypes import int32

    mantissa = A.empty_like.default(self)
    exponent = A.empty_like.default(self, dtype=int32)
    return tuple(A.frexp.Tensor_out(self, mantissa=mantissa, exponent=exponent))  # type: ignore[return-value]


def logit_bounds(eps: float | None) -> tuple[float, float] | None:
    """The clamp of ``logit``'s input: ``(eps, 1 - eps)``, or None when ``eps`` is None or negative.

    The kernels take ``eps ? *eps : -1.0``; a NaN eps clamps nothing either (every comparison is false).
    """
    if eps is None or eps < 0:
        return None
    return eps, 1.0 - eps


# --- CompositeExplicitAutograd: the Scalar overloads of xlogy (wrapped_scalar_tensor: pointwise._number) ---


def explicit_kernels() -> dict[str, Callable[..., Any]]:
    """The CompositeExplicitAutograd kernels, by overload (the Meta backend registers them too, as torch does)."""
    xlogy, xlogy_, out_op = A.xlogy.Tensor, A.xlogy_.Tensor, A.xlogy.OutTensor
    return {
        "frexp.Tensor": frexp,
        "polygamma_": lambda self, n: A.polygamma.out(n, self, out=self),  # self.polygamma_(n): out= into self
        "xlogy.Scalar_Self": lambda self, other: xlogy(_number(self), other),
        "xlogy.Scalar_Other": lambda self, other: xlogy(self, _number(other)),
        "xlogy_.Scalar_Other": lambda self, other: xlogy_(self, _number(other)),
        "xlogy.OutScalar_Self": lambda self, other, *, out: out_op(_number(self), other, out=out),
        "xlogy.OutScalar_Other": lambda self, other, *, out: out_op(self, _number(other), out=out),
    }


def register(lib: Library) -> None:
    """Register the CompositeExplicitAutograd kernels."""
    for name, kernel in explicit_kernels().items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")


# --- derivatives (derivatives.yaml, FunctionsManual.cpp) ------------------------------------------------
def _xlogy_self(g: Tensor, self: Tensor, other: Tensor) -> Tensor:
    """``at::xlogy(grad, other).masked_fill((self == 0.) & (other <= 0.), 0.)``: the mask's right operand first."""
    value = A.xlogy.Tensor(g, other)
    nonpositive = A.le.Scalar(other, 0.0)
    mask = A.bitwise_and.Tensor(A.eq.Scalar(self, 0.0), nonpositive)
    return A.masked_fill.Scalar(value, mask, 0.0)


def _xlogy_other(g: Tensor, self: Any, other: Tensor) -> Tensor:
    """``grad * self / other`` (``self`` a tensor, or the Scalar of ``xlogy.Scalar_Self``)."""
    product = A.mul.Tensor(g, self) if isinstance(self, Tensor) else A.mul.Scalar(g, self)
    return A.div.Tensor(product, other)


def _xlogy_scalar_other(g: Tensor, self: Tensor, other: Any) -> Tensor:
    """``other > 0 ? at::xlogy(grad, other) : at::xlogy(grad, other).masked_fill(self == 0., 0.)``."""
    value = A.xlogy.Scalar_Other(g, other)
    if float(other) > 0.0:
        return value
    return A.masked_fill.Scalar(value, A.eq.Scalar(self, 0.0), 0.0)


def _logit_backward_infinitely(g: Tensor, self: Tensor, eps: float | None) -> Tensor:
    """``infinitely_differentiable_logit_backward``: ``where(lo <= self <= hi, grad / (self * (1 - self)), outside)``.

    ``outside`` is NaN without ``eps`` and 0 with it; ``where``'s arguments run right to left.
    """
    from ..autograd.derivatives import scalar_minus

    if eps is None:
        lo, hi = 0.0, 1.0
        outside = A.fill_.Scalar(A.empty.memory_format([], dtype=self.dtype, device=self.device), math.nan)
    else:
        lo, hi = eps, 1.0 - eps
        outside = A.zeros.default([], dtype=self.dtype, device=self.device)
    value = A.div.Tensor(g, A.mul.Tensor(self, scalar_minus(1.0, self)))
    below_hi = A.le.Scalar(self, hi)
    inside = A.logical_and.default(A.ge.Scalar(self, lo), below_hi)
    return A.where.self(inside, value, outside)


def _logit_formula(g: Tensor, self: Tensor, eps: float | None) -> Tensor:
    """``GradMode::is_enabled() ? infinitely_differentiable_logit_backward(...) : logit_backward(grad, self, eps)``."""
    from ..autograd.grad_mode import is_grad_enabled

    if is_grad_enabled():
        return _logit_backward_infinitely(g, self, eps)
    return A.logit_backward.default(g, self, eps)


def _no_derivative(op: str) -> Callable[..., Any]:
    """No derivatives.yaml entry, a differentiable output: the backward raises (``NotImplemented``)."""
    def formula(g: Tensor) -> Tensor:
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return formula


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names."""
    from ..autograd.kernels import register_derivative

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> Any:
        return register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    xlogy = (_xlogy_self, _xlogy_other)
    r("xlogy.Tensor", "XlogyBackward0", ("self", "other"), xlogy)
    r("xlogy_.Tensor", "XlogyBackward0", ("self", "other"), xlogy, mutates="self")
    r("xlogy.Scalar_Self", "XlogyBackward1", ("other",), (_xlogy_other,))
    r("xlogy.Scalar_Other", "XlogyBackward2", ("self",), (_xlogy_scalar_other,))
    r("xlogy_.Scalar_Other", "XlogyBackward2", ("self",), (_xlogy_scalar_other,), mutates="self")
    r("logit", "LogitBackward0", ("self",), _logit_formula)
    r("logit_", "LogitBackward0", ("self",), _logit_formula, mutates="self")
    polygamma = (lambda g, n, self: A.mul.Tensor(g, A.polygamma.default(n + 1, self)))
    register_derivative(lib, "aten::polygamma", "PolygammaBackward0", ("self",), polygamma)
    register_derivative(lib, "aten::polygamma_", "PolygammaBackward0", ("self",), polygamma, mutates="self")
    r("frexp.Tensor", "FrexpBackward0", ("self",), lambda g, result1: A.div.Tensor(g, A.exp2.default(result1)),
      differentiable_outputs=(0,))
    d = r("logit_backward", "NotImplemented", ("grad_output", "self"), (_no_derivative("logit_backward"),) * 2)
    d.node_class._qualified_name = "torch::autograd::NotImplemented"


# --- torch.* functions and Tensor methods -------------------------------------------------------------
# Signatures in torch's binding format: the overload a call binds to is the one torch's parser picks
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "xlogy": ("xlogy(Tensor input, Tensor other, *, Tensor out=None)",
              "xlogy(Scalar self, Tensor other, *, Tensor out=None)",
              "xlogy(Tensor input, Scalar other, *, Tensor out=None)"),
    "xlogy_": ("xlogy_(Tensor input, Tensor other)", "xlogy_(Tensor input, Scalar other)"),
    "Tensor.xlogy": ("xlogy(Tensor other)", "xlogy(Scalar other)"),
    "Tensor.xlogy_": ("xlogy_(Tensor other)", "xlogy_(Scalar other)"),
    "logit": ("logit(Tensor input, double? eps=None, *, Tensor out=None)",),
    "logit_": ("logit_(Tensor input, double? eps=None)",),
    "Tensor.logit": ("logit(double? eps=None)",),
    "Tensor.logit_": ("logit_(double? eps=None)",),
}
_parse = Bindings(_SIGNATURES).parse  # torch's binding: the signature the call fits, its arguments by name


def xlogy(*args: Any, **kwargs: Any) -> Tensor:
    """``torch.xlogy(input, other, *, out=None)``: ``xlogy.Tensor``, ``Scalar_Self`` or ``Scalar_Other``."""
    index, b = _parse("xlogy", args, kwargs)
    first, other, out = b.get("input", b.get("self")), b["other"], b["out"]
    if out is None:
        return (A.xlogy.Tensor, A.xlogy.Scalar_Self, A.xlogy.Scalar_Other)[index](first, other)
    return (A.xlogy.OutTensor, A.xlogy.OutScalar_Self, A.xlogy.OutScalar_Other)[index](first, other, out=out)


def xlogy_(*args: Any, **kwargs: Any) -> Tensor:
    """``torch.xlogy_(input, other)``."""
    index, b = _parse("xlogy_", args, kwargs)
    return (A.xlogy_.Tensor, A.xlogy_.Scalar_Other)[index](b["input"], b["other"])


def _xlogy_method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    index, b = _parse("Tensor.xlogy", args, kwargs)
    return (A.xlogy.Tensor, A.xlogy.Scalar_Other)[index](self, b["other"])


def _xlogy__method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    index, b = _parse("Tensor.xlogy_", args, kwargs)
    return (A.xlogy_.Tensor, A.xlogy_.Scalar_Other)[index](self, b["other"])


def logit(*args: Any, **kwargs: Any) -> Tensor:
    """``torch.logit(input, eps=None, *, out=None)``."""
    _, b = _parse("logit", args, kwargs)
    if b["out"] is None:
        return A.logit.default(b["input"], b["eps"])
    return A.logit.out(b["input"], b["eps"], out=b["out"])


def logit_(*args: Any, **kwargs: Any) -> Tensor:
    """``torch.logit_(input, eps=None)``."""
    _, b = _parse("logit_", args, kwargs)
    return A.logit_.default(b["input"], b["eps"])


def _logit_method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return A.logit.default(self, _parse("Tensor.logit", args, kwargs)[1]["eps"])


def _logit__method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return A.logit_.default(self, _parse("Tensor.logit_", args, kwargs)[1]["eps"])


_FREXP = Bindings({"frexp": ("frexp(Tensor input, *, TensorList[2] out=None)",), "Tensor.frexp": ("frexp()",)})


def _frexp_call(index: int, b: dict[str, Any]) -> Any:
    """``torch.frexp(input, *, out=None)``: the mantissa in [0.5, 1) and the int32 exponent of each element."""
    from .. import return_types

    out = b.get("out")
    if out is None:
        return return_types.frexp(A.frexp.Tensor(b["input"]))
    return return_types.frexp_out(A.frexp.Tensor_out(b["input"], mantissa=out[0], exponent=out[1]))


_POLYGAMMA = Bindings({"polygamma": ("polygamma(int64_t n, Tensor input, *, Tensor out=None)",),
                       "Tensor.polygamma": ("polygamma(int64_t n)",), "Tensor.polygamma_": ("polygamma_(int64_t n)",)})


def _polygamma_call(index: int, b: dict[str, Any]) -> Any:
    """``torch.polygamma(n, input, *, out=None)``: the n-th derivative of ``digamma``.

    Example:
        >>> import dispatchcore as dc
        >>> dc.polygamma(1, dc.tensor([1.0]))
        tensor([1.6449])
    """
    if b.get("out") is not None:
        return A.polygamma.out(b["n"], b["input"], out=b["out"])
    return A.polygamma.default(b["n"], b["input"])


def _polygamma_method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return A.polygamma.default(_POLYGAMMA.parse("Tensor.polygamma", args, kwargs)[1]["n"], self)


def _polygamma__method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return A.polygamma_.default(self, _POLYGAMMA.parse("Tensor.polygamma_", args, kwargs)[1]["n"])


FUNCTIONS: dict[str, Callable[..., Any]] = {"xlogy": xlogy, "xlogy_": xlogy_, "logit": logit, "logit_": logit_,
                                            "frexp": _FREXP.function("frexp", _frexp_call),
                                            "polygamma": _POLYGAMMA.function("polygamma", _polygamma_call)}
FUNCTIONS["polygamma"].__doc__ = _polygamma_call.__doc__
METHODS: dict[str, Callable[..., Any]] = {"xlogy": _xlogy_method, "xlogy_": _xlogy__method, "logit": _logit_method,
                                          "logit_": _logit__method, "frexp": _FREXP.method("frexp", _frexp_call),
                                          "polygamma": _polygamma_method, "polygamma_": _polygamma__method}
for _n, _f in METHODS.items():
    _f.__name__ = _f.__qualname__ = _n
del _n, _f
