"""Pointwise operators: unary math, rounding, predicates, bitwise/logical, binary math, activations.

Mirrors ``aten/src/ATen/native/UnaryOps.cpp``, ``BinaryOps.cpp`` and ``Activation.cpp`` as
``native_functions.yaml`` and ``derivatives.yaml`` declare them: one table entry per operator
(``UNARY``, ``BINARY``, ``ACTIVATIONS``) says its dtype rule, its overloads, where torch registers
them and its derivative (node name and formula); schemas, composite kernels, derivatives, the
``torch.*`` functions and the Tensor methods are generated from the tables. The backends' numpy
and meta kernels are generated from the same entries (``dispatchcore_backends.{cpu,meta}.pointwise``).
``UNARY_BACKWARD`` adds ``tanh_backward`` and ``sigmoid_backward``, the operators tanh's and
sigmoid's derivatives dispatch (structured binary ops, floating only, as in torch).
Outside the tables, in their own sections: numpy's names (``ALIASES``, ``OVERLOAD_ALIASES``:
CompositeImplicitAutograd calls of their targets), ``deg2rad``/``rad2deg`` (CompositeExplicitAutograd
over ``mul.out``), ``positive`` and ``float_power`` (CompositeImplicitAutograd), and ``heaviside``,
whose one-dtype rule and ``values`` argument no table rule has.
Invariant: adding a pointwise operator that fits a table rule is one entry here plus one line (its
ufunc) in the CPU table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES, TYPEMETA_NAMES
from ..dtypes import bool_ as _bool
from ..ops import aten as A
from ..tensor import Tensor
from . import Bindings

__all__ = ["ACTIVATIONS", "BINARY", "OVERLOAD_ALIASES", "SCHEMAS", "TERNARY", "UNARY", "UNARY_BACKWARD",
           "binary_result_dtype", "check_out", "heaviside_check", "register", "register_autograd", "unary_result_dtype"]
# also COMPOSITE_EXPLICIT, COMPOSITE_IMPLICIT, FUNCTIONS and METHODS, built on first use (``__getattr__``)

# --- dtype rules (TensorIterator configurations of UnaryOps.cpp / BinaryOps.cpp) ---------------------
FLOAT = "float"  # integers and bool compute in the default float dtype (promote_integer_inputs_to_float)
SAME = "same"  # the (promoted) input dtype; an out= tensor must have exactly it ("Found dtype ...")
BOOL = "bool"  # a bool result; an out= tensor must be bool ("<op> does not support non-boolean outputs.")
LOGICAL = "logical"  # a bool result, cast into an out= tensor of any dtype
COMMON = "common"  # binary: the promoted dtype; an out= tensor must be one it can be cast to

G = Any  # a gradient or saved tensor in the formulas below


# --- derivative helpers (dispatched operators only, so double backward works) -----------------------
def _zeros(g: G) -> G:
    """``zeros_like(grad)``: the derivative of a step function."""
    return A.zeros_like.default(g)


def _zeros_of(t: G) -> G:
    return A.zeros.default(list(t.shape), dtype=t.dtype, device=t.device)


def _rsqrt_of_one_minus_square(self: G) -> G:
    """``(-self * self + 1).rsqrt()``."""
    return A.rsqrt.default(A.add.Scalar(A.mul.Tensor(A.neg.default(self), self), 1))


def _scalar_minus(value: Any, t: G) -> G:
    from ..autograd.derivatives import scalar_minus

    return scalar_minus(value, t)


def _scalar_over(value: Any, t: G) -> G:
    from ..autograd.derivatives import scalar_over

    return scalar_over(value, t)


def _not_implemented(what: str) -> Callable[..., Any]:
    """derivatives.yaml's ``not_implemented("...")``: the backward raises torch's error."""
    def formula(g: G) -> G:
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return formula


def _no_derivative(op: str) -> Callable[..., Any]:
    """An op without a derivatives.yaml entry whose output is differentiable (``NotImplemented`` node)."""
    def formula(g: G) -> G:
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return formula


_LN2, _LN10, _TWO_OVER_SQRT_PI = math.log(2.0), math.log(10.0), 2.0 / math.sqrt(math.pi)


def _sinc_backward(g: G, self: G) -> G:
    """``sinc_backward``: ``grad * ((pi x cos(pi x) - sin(pi x)) / (pi x^2))``, 0 where ``pi x^2 == 0``."""
    self_pi = A.mul.Scalar(self, math.pi)
    self_squared_pi = A.mul.Scalar(A.mul.Tensor(self, self), math.pi)
    sin = A.sin.default(self_pi)
    slope = A.sub.Tensor(A.mul.Tensor(self_pi, A.cos.default(self_pi)), sin)
    out = A.mul.Tensor(g, A.div.Tensor(slope, self_squared_pi))
    zero = A.scalar_tensor.default(0.0, dtype=g.dtype, device=g.device)
    return A.where.self(A.eq.Scalar(self_squared_pi, 0.0), zero, out)


class Unary(NamedTuple):
    """A unary op ``name`` (+ ``name_`` and ``name.out``): its dtype rule and derivative.

    ``formula(grad, <saved>...)`` follows ``autograd.kernels.Derivative``'s naming (``self``,
    ``result``); ``node`` None means the output is never differentiable (bool or integer results).
    ``inplace_node`` names the in-place form's own node where derivatives.yaml gives it one.
    """

    rule: str
    node: str | None
    formula: Callable[..., Any] | None = None
    inplace: bool = True
    inplace_node: str | None = None


def _atanh_backward(g: G, self: G) -> G:
    """``grad * 1 / (1 - self.pow(2))``: the divisor first (``1 - t`` as ATen writes it), then ``grad * 1``."""
    divisor = _scalar_minus(1, A.pow.Tensor_Scalar(self, 2))
    return A.div.Tensor(A.mul.Scalar(g, 1), divisor)


def _rsqrt_backward(g: G, result: G) -> G:
    """``-0.5 * grad * result.pow(3)``: the right operand first."""
    cube = A.pow.Tensor_Scalar(result, 3)
    return A.mul.Tensor(A.mul.Scalar(g, -0.5), cube)


UNARY: dict[str, Unary] = {
    "acos": Unary(FLOAT, "AcosBackward0", lambda g, self: A.mul.Tensor(g, A.neg.default(
        _rsqrt_of_one_minus_square(self)))),
    "acosh": Unary(FLOAT, "AcoshBackward0", lambda g, self: A.mul.Tensor(g, A.rsqrt.default(
        A.sub.Scalar(A.mul.Tensor(self, self), 1))), inplace_node="AcoshBackward1"),
    "asin": Unary(FLOAT, "AsinBackward0", lambda g, self: A.mul.Tensor(g, _rsqrt_of_one_minus_square(self))),
    "asinh": Unary(FLOAT, "AsinhBackward0", lambda g, self: A.mul.Tensor(g, A.rsqrt.default(
        A.add.Scalar(A.pow.Tensor_Scalar(self, 2), 1))), inplace_node="AsinhBackward1"),
    "atan": Unary(FLOAT, "AtanBackward0", lambda g, self: A.div.Tensor(g, A.add.Scalar(A.mul.Tensor(self, self), 1))),
    "atanh": Unary(FLOAT, "AtanhBackward0", lambda g, self: _atanh_backward(g, self), inplace_node="AtanhBackward1"),
    "cosh": Unary(FLOAT, "CoshBackward0", lambda g, self: A.mul.Tensor(g, A.sinh.default(self))),
    "sinh": Unary(FLOAT, "SinhBackward0", lambda g, self: A.mul.Tensor(g, A.cosh.default(self))),
    "tan": Unary(FLOAT, "TanBackward0", lambda g, result: A.mul.Tensor(g, A.add.Scalar(
        A.pow.Tensor_Scalar(result, 2), 1))),
    "erf": Unary(FLOAT, "ErfBackward0", lambda g, self: A.mul.Tensor(A.mul.Scalar(A.exp.default(
        A.neg.default(A.pow.Tensor_Scalar(self, 2))), _TWO_OVER_SQRT_PI), g)),
    "erfc": Unary(FLOAT, "ErfcBackward0", lambda g, self: A.mul.Tensor(A.mul.Scalar(A.exp.default(
        A.neg.default(A.pow.Tensor_Scalar(self, 2))), -_TWO_OVER_SQRT_PI), g)),
    "sinc": Unary(FLOAT, "SincBackward0", _sinc_backward),
    "lgamma": Unary(FLOAT, "LgammaBackward0", lambda g, self: A.mul.Tensor(g, A.digamma.default(self))),
    "digamma": Unary(FLOAT, "DigammaBackward0", lambda g, self: A.mul.Tensor(g, A.polygamma.default(1, self))),
    # 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad
    "erfinv": Unary(FLOAT, "ErfinvBackward0", lambda g, self: A.mul.Tensor(A.mul.Scalar(A.exp.default(
        A.pow.Tensor_Scalar(A.erfinv.default(self), 2)), 0.5 * math.sqrt(math.pi)), g)),
    "exp2": Unary(FLOAT, "Exp2Backward0", lambda g, result: A.mul.Scalar(A.mul.Tensor(g, result), _LN2)),
    "expm1": Unary(FLOAT, "Expm1Backward0", lambda g, result: A.mul.Tensor(g, A.add.Scalar(result, 1))),
    "log1p": Unary(FLOAT, "Log1PBackward0", lambda g, self: A.div.Tensor(g, A.add.Scalar(self, 1))),
    "log2": Unary(FLOAT, "Log2Backward0", lambda g, self: A.div.Tensor(g, A.mul.Scalar(self, _LN2))),
    "log10": Unary(FLOAT, "Log10Backward0", lambda g, self: A.div.Tensor(g, A.mul.Scalar(self, _LN10))),
    "rsqrt": Unary(FLOAT, "RsqrtBackward0", lambda g, result: _rsqrt_backward(g, result)),
    "sgn": Unary(SAME, "SgnBackward0", lambda g, result: _zeros_of(result)),  # sgn_backward, real inputs
    "sign": Unary(SAME, "SignBackward0", lambda g: _zeros(g)),
    "ceil": Unary(SAME, "CeilBackward0", lambda g: _zeros(g)),
    "floor": Unary(SAME, "FloorBackward0", lambda g: _zeros(g)),
    "round": Unary(SAME, "RoundBackward0", lambda g: _zeros(g)),
    "trunc": Unary(SAME, "TruncBackward0", lambda g: _zeros(g)),
    "frac": Unary(SAME, "FracBackward0", lambda g: g),
    "bitwise_not": Unary(SAME, None),
    "signbit": Unary(BOOL, None, inplace=False),
    "isposinf": Unary(BOOL, None, inplace=False),
    "isneginf": Unary(BOOL, None, inplace=False),
}


# --- binary ops --------------------------------------------------------------------------------------
def _atan2_backward(g: G, self: G, other: G, grad_input_mask: tuple[bool, bool]) -> tuple[Any, Any]:
    """``atan2_backward`` (one key, ``self, other``): ``recip = 1 / (self^2 + other^2)``, 0 where that is 0.

    Then ``grad * other * recip`` and ``grad * -self * recip``.
    """
    square_sum = A.mul.Tensor(other, other)
    square_sum = A.add.Tensor(A.mul.Tensor(self, self), square_sum)
    recip = A.masked_fill.Scalar(A.reciprocal.default(square_sum), A.eq.Scalar(square_sum, 0), 0)
    grad_self = A.mul.Tensor(A.mul.Tensor(g, other), recip) if grad_input_mask[0] else None
    grad_other = A.mul.Tensor(A.mul.Tensor(g, A.neg.default(self)), recip) if grad_input_mask[1] else None
    return grad_self, grad_other


def _hypot_input(g: G, input: G, result: G) -> G:
    """The backward of ``hypot`` for either input: ``grad * input / result``."""
    return A.div.Tensor(A.mul.Tensor(g, input), result)


def _nextafter_self(g: G, self: G, other: G) -> G:
    """The backward of ``nextafter`` for ``self``: ``where(self != other, grad, 0)``."""
    return A.where.self(A.ne.Tensor(self, other), g, A.scalar_tensor.default(0, dtype=g.dtype, device=g.device))


def _zeros_for_other(g: G, other: G) -> G:
    """The backward of ``nextafter`` and ``copysign`` for ``other``: zeros of its shape."""
    return A.zeros.default(list(other.shape), dtype=g.dtype, device=g.device)


def _copysign_self(g: G, self: G, result: G) -> G:
    """``copysign_tensor_self_backward``: ``grad * (result / self)``, 0 where ``self`` is 0."""
    ratio = A.masked_fill_.Scalar(A.div.Tensor(result, self), A.eq.Scalar(self, 0), 0)
    return A.mul.Tensor(g, ratio)


def _mod_other(mode: str) -> Callable[..., Any]:
    """fmod/remainder's ``other``: ``-grad * self.div(other, rounding_mode=mode)`` (the right operand first)."""
    def formula(g: G, self: G, other: G) -> G:
        quotient = A.div.Tensor_mode(self, other, rounding_mode=mode)
        return A.mul.Tensor(A.neg.default(g), quotient)
    return formula


class Binary(NamedTuple):
    """A binary op: dtype rule, kernel overloads, ``Scalar`` overloads, derivative.

    ``tensor`` names the (functional, in-place, out=) overloads taking two tensors; the in-place
    name is ``None`` where torch has no in-place form (``fmax``, ``logaddexp``); ``scalar`` the overload
    suffix of the tensor-scalar forms (``Scalar``, ``Tensor_Scalar``); ``reverse`` whether a
    scalar-tensor form exists (``Scalar_Tensor``). ``formulas`` are per input (self, other).
    """

    rule: str
    tensor: tuple[str, str | None, str]
    node: str | None = None
    formulas: tuple[Any, Any] | Callable[..., Any] | None = None  # per input, or one for the ``self, other`` key
    scalar: str | None = None
    scalar_node: str | None = None
    scalar_formula: Callable[..., Any] | None = None
    reverse: bool = False


def _logaddexp_input(g: G, mine: G, theirs: G, power: Callable[[G], G]) -> G:
    """``grad / (1 + power(theirs - mine))``: logaddexp's (``exp``) and logaddexp2's (``2 ** x``) formula."""
    return A.div.Tensor(g, A.add.Scalar(power(A.sub.Tensor(theirs, mine)), 1))


def _two_to_the(t: G) -> G:
    return A.pow.Scalar(2, t)


def _fmax_fmin_input(g: G, self: G, other: G, compare: Any, for_self: bool) -> G:
    """``grad.masked_fill(mask, 0)``, ``mask = compare(self, other).logical_or_(other.isnan())``, negated for self.

    fmax and fmin send the gradient to ``self`` where it wins the comparison or ``other`` is NaN,
    to ``other`` elsewhere.
    """
    mask = A.logical_or_.default(compare(self, other), A.isnan.default(other))
    return A.masked_fill.Scalar(g, A.logical_not_.default(mask) if for_self else mask, 0)


def _bitwise(name: str, scalar: str = "Scalar") -> Binary:
    return Binary(COMMON, (f"{name}.Tensor", f"{name}_.Tensor", f"{name}.Tensor_out"), scalar=scalar, reverse=True)


BINARY: dict[str, Binary] = {
    "atan2": Binary(FLOAT, ("atan2", "atan2_", "atan2.out"), "Atan2Backward0", _atan2_backward),
    "fmod": Binary(COMMON, ("fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out"), "FmodBackward1",
                   (lambda g: g, _mod_other("trunc")), scalar="Scalar", scalar_node="FmodBackward0",
                   scalar_formula=lambda g: g),
    "remainder": Binary(COMMON, ("remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out"),
                        "RemainderBackward1", (lambda g: g, _mod_other("floor")), scalar="Scalar",
                        scalar_node="RemainderBackward0", scalar_formula=lambda g: g, reverse=True),
    "floor_divide": Binary(COMMON, ("floor_divide", "floor_divide_.Tensor", "floor_divide.out"), scalar="Scalar"),
    "bitwise_and": _bitwise("bitwise_and"),
    "gcd": Binary(COMMON, ("gcd", "gcd_", "gcd.out")),
    "lcm": Binary(COMMON, ("lcm", "lcm_", "lcm.out")),
    "bitwise_or": _bitwise("bitwise_or"),
    "bitwise_xor": _bitwise("bitwise_xor"),
    "bitwise_left_shift": _bitwise("bitwise_left_shift", "Tensor_Scalar"),
    "bitwise_right_shift": _bitwise("bitwise_right_shift", "Tensor_Scalar"),
    "hypot": Binary(COMMON, ("hypot", "hypot_", "hypot.out"), "HypotBackward0",
                    (lambda g, self, result: _hypot_input(g, self, result),
                     lambda g, other, result: _hypot_input(g, other, result))),
    "nextafter": Binary(COMMON, ("nextafter", "nextafter_", "nextafter.out"), "NextafterBackward0",
                        (_nextafter_self, _zeros_for_other)),
    "copysign": Binary(FLOAT, ("copysign.Tensor", "copysign_.Tensor", "copysign.out"), "CopysignBackward0",
                       (_copysign_self, _zeros_for_other), scalar="Scalar", scalar_node="CopysignBackward1",
                       scalar_formula=_copysign_self),
    "logaddexp": Binary(COMMON, ("logaddexp", None, "logaddexp.out"), "LogaddexpBackward0",
                        (lambda g, self, other: _logaddexp_input(g, self, other, A.exp.default),
                         lambda g, self, other: _logaddexp_input(g, other, self, A.exp.default))),
    "logaddexp2": Binary(COMMON, ("logaddexp2", None, "logaddexp2.out"), "Logaddexp2Backward0",
                         (lambda g, self, other: _logaddexp_input(g, self, other, _two_to_the),
                          lambda g, self, other: _logaddexp_input(g, other, self, _two_to_the))),
    "fmax": Binary(COMMON, ("fmax", None, "fmax.out"), "FmaxBackward0",
                   (lambda g, self, other: _fmax_fmin_input(g, self, other, A.ge.Tensor, True),
                    lambda g, self, other: _fmax_fmin_input(g, self, other, A.ge.Tensor, False))),
    "fmin": Binary(COMMON, ("fmin", None, "fmin.out"), "FminBackward0",
                   (lambda g, self, other: _fmax_fmin_input(g, self, other, A.le.Tensor, True),
                    lambda g, self, other: _fmax_fmin_input(g, self, other, A.le.Tensor, False))),
    "logical_and": Binary(LOGICAL, ("logical_and", "logical_and_", "logical_and.out")),
    "logical_or": Binary(LOGICAL, ("logical_or", "logical_or_", "logical_or.out")),
    "logical_xor": Binary(LOGICAL, ("logical_xor", "logical_xor_", "logical_xor.out")),
}
# numpy's names for torch's operators: each an operator of its own (functional, in-place, out=), registered
# at CompositeImplicitAutograd as a call of its target, so a mode sees the target (alias -> target)
ALIASES = {"absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh",
           "arcsinh": "asinh", "arctanh": "atanh", "negative": "neg", "fix": "trunc", "arctan2": "atan2"}
_BINARY_ALIASES = ("arctan2",)
# torch.<name>_ exists for these (torch.absolute_ and torch.arctan2_ do not)
_TORCH_INPLACE_ALIASES = ("arccos", "arcsin", "arctan", "arccosh", "arcsinh", "arctanh", "negative", "fix")
# numpy's names with their target's whole overload set: each alias overload calls the target's overload
# of the same name (divide_.Tensor_mode -> div_.Tensor_mode). Their functions and methods bind as the
# target's do (``functions.py``, ``_tensor_methods.py``): a number for mul/sub/div is wrapped.
OVERLOAD_ALIASES = {"multiply": "mul", "subtract": "sub", "divide": "div", "true_divide": "div",
                    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
                    "not_equal": "ne", "clip": "clamp"}
# torch's Python operators ``<<``/``>>`` have operators of their own (CPU kernels, no Meta ``out=``)
SHIFT_DUNDERS = {"__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift"}
# differentiable outputs without a derivatives.yaml entry: torch's ``NotImplemented`` node
NOT_IMPLEMENTED = ("floor_divide", "floor_divide_.Tensor", "floor_divide.Scalar", "floor_divide_.Scalar",
                   "remainder.Scalar_Tensor")


# --- activations (Activation.cpp): forward, in place, out=, and their backward ops -------------------
def _elu_backward(g: G, alpha: Any, scale: Any, input_scale: Any, is_result: bool, self_or_result: G) -> G:
    return A.elu_backward.default(g, alpha, scale, input_scale, is_result, self_or_result)


def _elu_double_backward(g: G, grad_output: G, alpha: Any, scale: Any, input_scale: Any, is_result: bool,
                         self_or_result: G) -> G:
    """``elu_double_backward``: times ``(self_or_result < 0).type_as(grad)``, computed first (the right operand)."""
    negative = A.type_as.default(A.lt.Scalar(self_or_result, 0), g)
    if is_result:
        value = A.mul.Scalar(A.mul.Tensor(g, grad_output), input_scale)
    else:
        value = A.elu_backward.default(A.mul.Scalar(A.mul.Tensor(g, grad_output), input_scale), alpha, scale,
                                       input_scale, is_result, self_or_result)
    return A.mul.Tensor(value, negative)


def _gelu_double_backward(g: G, grad_output: G, self: G, approximate: str) -> G:
    """``gelu_double_backward``: ``ggI * gO * d(gelu')/dx``, each term as the C++ computes it."""
    if approximate == "tanh":
        k_beta, k_kappa = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5, 0.044715
        inner = A.mul.Scalar(A.add.Tensor(self, A.mul.Scalar(A.pow.Tensor_Scalar(self, 3), k_kappa)), k_beta)
        tanh_inner = A.tanh.default(inner)
        sech_inner = _scalar_over(1, A.cosh.default(inner))
        f = A.mul.Scalar(self, 0.5)
        g_term = _scalar_minus(1, A.mul.Tensor(tanh_inner, tanh_inner))
        h = A.mul.Scalar(A.add.Scalar(A.mul.Tensor(A.mul.Scalar(self, 3 * k_kappa), self), 1), k_beta)
        f_prime_gh = A.mul.Tensor(A.mul.Scalar(g_term, 0.5), h)
        sech_tanh = A.mul.Tensor(A.neg.default(sech_inner), tanh_inner)
        g_prime = A.mul.Tensor(A.mul.Tensor(A.mul.Scalar(sech_inner, 2), sech_tanh), h)
        g_prime_fh = A.mul.Tensor(A.mul.Tensor(f, h), g_prime)
        h_prime = A.mul.Scalar(A.mul.Scalar(self, 6 * k_kappa), k_beta)
        h_prime_fg = A.mul.Tensor(A.mul.Tensor(f, g_term), h_prime)
        second = A.add.Tensor(A.add.Tensor(A.mul.Scalar(f_prime_gh, 2), g_prime_fh), h_prime_fg)
    else:  # phi(x) (2 - x^2), phi the standard normal density
        k_beta = (2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5
        input_sq = A.mul.Tensor(self, self)
        pdf = A.mul.Scalar(A.exp.default(A.mul.Scalar(input_sq, -0.5)), k_beta)
        product = A.mul.Tensor(input_sq, pdf)
        second = A.sub.Tensor(A.mul.Scalar(pdf, 2), product)
    return A.mul.Tensor(A.mul.Tensor(g, grad_output), second)


class Activation(NamedTuple):
    """An activation: its forward's extra schema arguments, its backward op's, and the nodes.

    ``forward`` is the text after ``Tensor self`` in the forward schema, ``backward`` the backward
    op's arguments; ``node``/``inplace_node`` name the derivatives; ``structured`` whether torch
    builds the functional and in-place forms from ``out=`` (CompositeExplicitAutogradNonFunctional).
    """

    forward: str
    backward: str
    node: str
    formula: Callable[..., Any]
    inplace_node: str
    inplace_formula: Callable[..., Any]
    backward_node: str
    backward_formulas: tuple[Any, Any]


ACTIVATIONS: dict[str, Activation] = {
    "elu": Activation(
        "Scalar alpha=1, Scalar scale=1, Scalar input_scale=1",
        "Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result",
        "EluBackward0", lambda g, alpha, scale, input_scale, self: _elu_backward(g, alpha, scale, input_scale,
                                                                                  False, self),
        "EluBackward1", lambda g, alpha, scale, input_scale, result: _elu_backward(g, alpha, scale, input_scale,
                                                                                    True, result),
        "EluBackwardBackward0",
        (lambda g, alpha, scale, input_scale, is_result, self_or_result: _elu_backward(
            g, alpha, scale, input_scale, is_result, self_or_result),
         _elu_double_backward)),
    "gelu": Activation(
        '*, str approximate="none"', 'Tensor grad_output, Tensor self, *, str approximate="none"',
        "GeluBackward0", lambda g, self, approximate: A.gelu_backward.default(g, self, approximate=approximate),
        "GeluBackward0", lambda g, self, approximate: A.gelu_backward.default(g, self, approximate=approximate),
        "GeluBackwardBackward0",
        (lambda g, self, approximate: A.gelu_backward.default(g, self, approximate=approximate),
         _gelu_double_backward)),
    "hardtanh": Activation(
        "Scalar min_val=-1, Scalar max_val=1", "Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val",
        "HardtanhBackward0", lambda g, self, min_val, max_val: A.hardtanh_backward.default(g, self, min_val, max_val),
        "HardtanhBackward0", lambda g, self, min_val, max_val: A.hardtanh_backward.default(g, self, min_val, max_val),
        "HardtanhBackwardBackward0",
        (lambda g, self, min_val, max_val: A.hardtanh_backward.default(g, self, min_val, max_val),
         lambda g: _zeros(g))),
    "leaky_relu": Activation(
        "Scalar negative_slope=0.01", "Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result",
        "LeakyReluBackward0",
        lambda g, self, negative_slope: A.leaky_relu_backward.default(g, self, negative_slope, False),
        "LeakyReluBackward1",
        lambda g, result, negative_slope: A.leaky_relu_backward.default(g, result, negative_slope, True),
        "LeakyReluBackwardBackward0",
        (lambda g, self, negative_slope: A.leaky_relu_backward.default(g, self, negative_slope, False),
         lambda g: _zeros(g))),
}
# hardtanh is not structured in torch: its functional and in-place forms are kernels of their own
NOT_STRUCTURED = ("hardtanh", "hardtanh_", "hardtanh_backward")


# --- ternary ops (PointwiseOps.cpp, Lerp.cpp): structured, the optimizers' in-place arithmetic -----------
def _lerp_weight_of_self(g: G, weight: Any) -> G:
    """The ``self`` derivative of lerp: ``grad * (1 - weight)`` (a Scalar or a Tensor weight)."""
    if isinstance(weight, Tensor):
        return A.mul.Tensor(g, _scalar_minus(1, weight))
    return A.mul.Scalar(g, 1 - weight)


def _addcdiv_tensor1(g: G, tensor2: G, value: Any) -> G:
    """``grad * (value / tensor2)``: ``value / t`` as ATen writes it (``empty_like``, ``fill_``, ``div_``)."""
    return A.mul.Tensor(g, _scalar_over(value, tensor2))


def _addcdiv_tensor2(g: G, tensor1: G, tensor2: G, value: Any) -> G:
    """``-grad * (value * tensor1 / (tensor2 * tensor2))``: the right operand first."""
    square = A.mul.Tensor(tensor2, tensor2)
    quotient = A.div.Tensor(A.mul.Scalar(tensor1, value), square)
    return A.mul.Tensor(A.neg.default(g), quotient)


def _lerp_weight_of_end(g: G, weight: Any) -> G:
    return A.mul.Tensor(g, weight) if isinstance(weight, Tensor) else A.mul.Scalar(g, weight)


class Ternary(NamedTuple):
    """A structured ternary op: the schema arguments after ``Tensor self``, its overloads, its derivative.

    ``overloads`` are the (functional, in-place, out=) names; ``inputs`` the differentiable
    arguments, with one formula each (derivatives.yaml's entry, via dispatched ops).
    """

    args: str
    overloads: tuple[str, str, str]
    node: str
    inputs: tuple[str, ...]
    formulas: tuple[Any, ...]


TERNARY: dict[str, Ternary] = {
    "addcmul": Ternary(
        "Tensor tensor1, Tensor tensor2, *, Scalar value=1", ("addcmul", "addcmul_", "addcmul.out"),
        "AddcmulBackward0", ("self", "tensor1", "tensor2"),
        (lambda g: g, lambda g, tensor2, value: A.mul.Tensor(g, A.mul.Scalar(tensor2, value)),
         lambda g, tensor1, value: A.mul.Tensor(g, A.mul.Scalar(tensor1, value)))),
    "addcdiv": Ternary(
        "Tensor tensor1, Tensor tensor2, *, Scalar value=1", ("addcdiv", "addcdiv_", "addcdiv.out"),
        "AddcdivBackward0", ("self", "tensor1", "tensor2"),
        (lambda g: g, _addcdiv_tensor1, _addcdiv_tensor2)),
    "lerp.Scalar": Ternary(
        "Tensor end, Scalar weight", ("lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out"),
        "LerpBackward0", ("self", "end"), (_lerp_weight_of_self, _lerp_weight_of_end)),
    "lerp.Tensor": Ternary(
        "Tensor end, Tensor weight", ("lerp.Tensor", "lerp_.Tensor", "lerp.Tensor_out"),
        "LerpBackward1", ("self", "end", "weight"),
        (_lerp_weight_of_self, _lerp_weight_of_end, lambda g, self, end: A.mul.Tensor(g, A.sub.Tensor(end, self)))),
}


# --- the backward operators of tanh and sigmoid (BinaryOps.cpp): structured binary ops, floating only ----
def _tanh_backward_output(g: G, grad_output: G, output: G) -> G:
    """``grad * (-2 * output * grad_output)`` (the right operand first)."""
    return A.mul.Tensor(g, A.mul.Tensor(A.mul.Scalar(output, -2), grad_output))


def _sigmoid_backward_output(g: G, grad_output: G, output: G) -> G:
    """``grad * grad_output * (-2 * output + 1)`` (the right operand first)."""
    factor = A.add.Scalar(A.mul.Scalar(output, -2), 1)
    return A.mul.Tensor(A.mul.Tensor(g, grad_output), factor)


# name -> (node of its derivative, the formulas for grad_output and output)
UNARY_BACKWARD: dict[str, tuple[str, tuple[Any, Any]]] = {
    "tanh_backward": ("TanhBackwardBackward0",
                      (lambda g, output: A.tanh_backward.default(g, output), _tanh_backward_output)),
    "sigmoid_backward": ("SigmoidBackwardBackward0",
                         (lambda g, output: A.sigmoid_backward.default(g, output), _sigmoid_backward_output)),
}


# --- schemas -----------------------------------------------------------------------------------------
_OUT = "*, Tensor(a!) out) -> Tensor(a!)"


def _unary_schemas(name: str, inplace: bool) -> list[str]:
    found = [f"{name}(Tensor self) -> Tensor", f"{name}.out(Tensor self, {_OUT}"]
    return found + [f"{name}_(Tensor(a!) self) -> Tensor(a!)"] if inplace else found


def _binary_schemas(name: str, op: Binary) -> list[str]:
    functional, inplace, out = op.tensor
    found = [f"{functional}(Tensor self, Tensor other) -> Tensor", f"{out}(Tensor self, Tensor other, {_OUT}"]
    if inplace is not None:
        found.append(f"{inplace}(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    if op.scalar:
        s = op.scalar
        found += [f"{name}.{s}(Tensor self, Scalar other) -> Tensor",
                  f"{name}_.{s}(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                  f"{name}.{s}_out(Tensor self, Scalar other, {_OUT}"]
    if op.reverse:
        found += [f"{name}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
                  f"{name}.Scalar_Tensor_out(Scalar self, Tensor other, {_OUT}"]
    return found


def _overload_alias_schemas(alias: str) -> list[str]:
    """The schemas of an ``OVERLOAD_ALIASES`` entry, as torch's: its target's, renamed (true_divide has no modes)."""
    target = OVERLOAD_ALIASES[alias]
    if target == "clamp":
        numbers, tensors = "Scalar? min=None, Scalar? max=None", "Tensor? min=None, Tensor? max=None"
        return [f"{alias}(Tensor self, {numbers}) -> Tensor", f"{alias}.Tensor(Tensor self, {tensors}) -> Tensor",
                f"{alias}.out(Tensor self, {numbers}, {_OUT}", f"{alias}.Tensor_out(Tensor self, {tensors}, {_OUT}",
                f"{alias}_(Tensor(a!) self, {numbers}) -> Tensor(a!)",
                f"{alias}_.Tensor(Tensor(a!) self, {tensors}) -> Tensor(a!)"]
    if target in ("gt", "ge", "lt", "le", "ne"):
        return [f"{alias}.Tensor(Tensor self, Tensor other) -> Tensor",
                f"{alias}.Scalar(Tensor self, Scalar other) -> Tensor",
                f"{alias}.Scalar_out(Tensor self, Scalar other, {_OUT}",
                f"{alias}.Tensor_out(Tensor self, Tensor other, {_OUT}",
                f"{alias}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                f"{alias}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"]
    alpha, scalar_alpha = (", *, Scalar alpha=1", ", Scalar alpha=1") if target == "sub" else ("", "")
    found = [f"{alias}.Tensor(Tensor self, Tensor other{alpha}) -> Tensor",
             f"{alias}.Scalar(Tensor self, Scalar other{scalar_alpha}) -> Tensor",
             f"{alias}.out(Tensor self, Tensor other{alpha or ', *'}, Tensor(a!) out) -> Tensor(a!)",
             f"{alias}_.Tensor(Tensor(a!) self, Tensor other{alpha}) -> Tensor(a!)",
             f"{alias}_.Scalar(Tensor(a!) self, Scalar other{scalar_alpha}) -> Tensor(a!)"]
    if alias == "divide":
        mode = "*, str? rounding_mode"
        found += [f"{alias}.Tensor_mode(Tensor self, Tensor other, {mode}) -> Tensor",
                  f"{alias}.Scalar_mode(Tensor self, Scalar other, {mode}) -> Tensor",
                  f"{alias}.out_mode(Tensor self, Tensor other, {mode}, Tensor(a!) out) -> Tensor(a!)",
                  f"{alias}_.Tensor_mode(Tensor(a!) self, Tensor other, {mode}) -> Tensor(a!)",
                  f"{alias}_.Scalar_mode(Tensor(a!) self, Scalar other, {mode}) -> Tensor(a!)"]
    return found


def _activation_schemas(name: str, op: Activation) -> list[str]:
    def out(args: str, out_name: str) -> str:  # one ``*`` before the keyword-only arguments
        star = "" if "*" in args else "*, "
        return f"{args}, {star}Tensor(a!) {out_name}) -> Tensor(a!)"

    return [f"{name}(Tensor self, {op.forward}) -> Tensor",
            f"{name}_(Tensor(a!) self, {op.forward}) -> Tensor(a!)",
            f"{name}.out(Tensor self, {out(op.forward, 'out')}",
            f"{name}_backward({op.backward}) -> Tensor",
            f"{name}_backward.grad_input({out(op.backward, 'grad_input')}"]


def _ternary_schemas(op: Ternary) -> list[str]:
    functional, inplace, out = op.overloads
    star = "" if "*" in op.args else "*, "
    return [f"{functional}(Tensor self, {op.args}) -> Tensor",
            f"{inplace}(Tensor(a!) self, {op.args}) -> Tensor(a!)",
            f"{out}(Tensor self, {op.args}, {star}Tensor(a!) out) -> Tensor(a!)"]


SCHEMAS: tuple[str, ...] = (
    *(s for name, u in UNARY.items() for s in _unary_schemas(name, u.inplace)),
    "round.decimals(Tensor self, *, int decimals) -> Tensor",
    "round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)",
    "round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> Tensor(a!)",
    "isnan(Tensor self) -> Tensor", f"isnan.out(Tensor self, {_OUT}",
    "isinf(Tensor self) -> Tensor", f"isinf.out(Tensor self, {_OUT}",
    "isfinite(Tensor self) -> Tensor",
    *(f"{name}(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, "  # torch's text
      f"bool equal_nan=False) -> {result}" for name, result in (("isclose", "Tensor"), ("allclose", "bool"))),
    "equal(Tensor self, Tensor other) -> bool",
    *_unary_schemas("logical_not", True),
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    "nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor(a!)",
    "nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, "
    f"{_OUT}",
    *(s for name, b in BINARY.items() for s in _binary_schemas(name, b)),
    *(s for name in ALIASES if name not in _BINARY_ALIASES for s in _unary_schemas(name, True)),
    *(s for name in _BINARY_ALIASES for s in _binary_schemas(name, Binary(FLOAT, (name, f"{name}_", f"{name}.out")))),
    *(s for alias in OVERLOAD_ALIASES for s in _overload_alias_schemas(alias)),
    *_unary_schemas("deg2rad", True), *_unary_schemas("rad2deg", True),
    "positive(Tensor(a) self) -> Tensor(a)",
    "heaviside(Tensor self, Tensor values) -> Tensor",
    "heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)",
    f"heaviside.out(Tensor self, Tensor values, {_OUT}",
    *(s for self_, exponent, suffix in (("Tensor", "Tensor", "Tensor_Tensor"), ("Scalar", "Tensor", "Scalar"),
                                        ("Tensor", "Scalar", "Tensor_Scalar"))
      for s in (f"float_power.{suffix}({self_} self, {exponent} exponent) -> Tensor",
                f"float_power.{suffix}_out({self_} self, {exponent} exponent, {_OUT}")),
    "float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
    "float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
    *(s for dunder in SHIFT_DUNDERS for s in (
        f"{dunder}.Scalar(Tensor self, Scalar other) -> Tensor",
        f"{dunder}.Tensor(Tensor self, Tensor other) -> Tensor",
        f"{dunder}.Scalar_out(Tensor self, Scalar other, {_OUT}",
        f"{dunder}.Tensor_out(Tensor self, Tensor other, {_OUT}",
        f"__i{dunder[2:]}.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
        f"__i{dunder[2:]}.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")),
    *(s for name in ("and", "or", "xor") for s in (
        f"__{name}__.Scalar(Tensor self, Scalar other) -> Tensor",
        f"__{name}__.Tensor(Tensor self, Tensor other) -> Tensor",
        f"__i{name}__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
        f"__i{name}__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")),
    *(s for name, act in ACTIVATIONS.items() for s in _activation_schemas(name, act)),
    *(s for t in TERNARY.values() for s in _ternary_schemas(t)),
    *(s for name in UNARY_BACKWARD for s in (
        f"{name}(Tensor grad_output, Tensor output) -> Tensor",
        f"{name}.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input) -> Tensor(a!)")),
)


# --- dtype rules, for the backends' kernels ------------------------------------------------------------
def unary_result_dtype(rule: str, dtype: Any, default: Any) -> Any:
    """The result dtype of a unary op of ``rule`` on an input of ``dtype`` (``default``: the default float)."""
    if rule == FLOAT:
        return dtype if dtype.is_floating_point or dtype.is_complex else default
    return _bool if rule in (BOOL, LOGICAL) else dtype


def binary_result_dtype(rule: str, common: Any, default: Any) -> Any:
    """The result dtype of a binary op of ``rule`` whose inputs promote to ``common``."""
    if rule == FLOAT and not (common.is_floating_point or common.is_complex):
        return default
    return _bool if rule == LOGICAL else common


def check_out(rule: str, name: str, result: Any, out: Any) -> None:
    """Raise torch's error when an ``out=`` (or in-place) tensor of dtype ``out`` cannot take ``result``.

    ``rule`` is the op's dtype rule; ``result`` and ``out`` are dtypes. ``FLOAT`` and ``COMMON``
    are TensorIterator's ``canCast`` check, which the backends make themselves.
    """
    if rule == SAME and out is not result:
        raise RuntimeError(f"Found dtype {SCALAR_TYPE_NAMES[out.name]} but expected {SCALAR_TYPE_NAMES[result.name]}")
    if rule == BOOL and out is not _bool:
        raise RuntimeError(f"{name} does not support non-boolean outputs.")


ADDCDIV_INTEGER = ("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                   "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                   "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                   "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                   "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
                   "dtypes.")


def ternary_check(name: str, self: Tensor, first: Any, second: Any) -> None:
    """The dtype checks of addcmul/addcdiv/lerp, before promotion (shared by the CPU and Meta kernels).

    ``lerp`` takes one dtype throughout (``end`` and a tensor ``weight`` must be ``self``'s);
    ``addcdiv`` refuses two integer (or bool) operands, with torch's text.
    """
    if name == "lerp":
        for arg, t in (("end", first), ("weight", second)):
            if isinstance(t, Tensor) and t.dtype is not self.dtype:
                raise RuntimeError(f"expected dtype {TYPEMETA_NAMES[self.dtype.name]} for `{arg}` but got dtype "
                                   f"{TYPEMETA_NAMES[t.dtype.name]}")
    elif name == "addcdiv" and not any(t.dtype.is_floating_point or t.dtype.is_complex for t in (first, second)):
        raise RuntimeError(ADDCDIV_INTEGER)


def _exact_bool(out: Tensor) -> None:
    """The generated ``out=`` wrappers' check (``isnan.out``, ``isinf.out``)."""
    if out.dtype is not _bool:
        raise RuntimeError(f"Expected out tensor to have dtype {TYPEMETA_NAMES['bool']}, but got "
                           f"{TYPEMETA_NAMES[out.dtype.name]} instead")


# --- composite kernels (CompositeExplicitAutograd / CompositeImplicitAutograd) ---------------------
def _number(value: Any) -> Tensor:
    """A ``Scalar`` argument as torch's ``wrapped_scalar_tensor``."""
    from .._composites import wrapped_number  # not at import: _composites imports aten, which imports us

    if isinstance(value, Tensor):
        return value
    w = wrapped_number(value)
    if w is None:
        raise TypeError(f"expected a number for a Scalar argument, got {type(value).__name__}")
    return w


def _empty_bool(self: Tensor) -> Tensor:
    return A.empty.memory_format([0], dtype=_bool, device=self.device)


def _scalar_composites(name: str, op: Binary) -> dict[str, Callable[..., Any]]:
    """``.Scalar`` forms as the ``.Tensor`` forms of a wrapped number (torch's composites)."""
    functional_name, inplace_name, out_name = op.tensor
    if inplace_name is None:
        raise ValueError(f"{name}: its .{op.scalar} forms need the in-place tensor form they are composites of")
    functional, inplace, out = _handle(functional_name), _handle(inplace_name), _handle(out_name)
    s = op.scalar
    found: dict[str, Callable[..., Any]] = {
        f"{name}.{s}": lambda self, other: functional(self, _number(other)),
        f"{name}_.{s}": lambda self, other: inplace(self, _number(other)),
        f"{name}.{s}_out": lambda self, other, *, out: out_op(self, _number(other), out=out),
    }
    out_op = out
    if op.reverse:
        found[f"{name}.Scalar_Tensor_out"] = lambda self, other, *, out: out_op(_number(self), other, out=out)
        if name != "remainder":  # remainder.Scalar_Tensor has CPU kernels in torch
            found[f"{name}.Scalar_Tensor"] = lambda self, other: functional(_number(self), other)
    return found


def _logical_composites(name: str, binary: bool) -> dict[str, Callable[..., Any]]:
    """logical_*: the functional and in-place forms call ``out=`` (``LogicalOps``' composites)."""
    out_op = getattr(A, name).out
    if binary:
        return {name: lambda self, other: out_op(self, other, out=_empty_bool(self)),
                f"{name}_": lambda self, other: out_op(self, other, out=self)}
    return {name: lambda self: out_op(self, out=_empty_bool(self)), f"{name}_": lambda self: out_op(self, out=self)}


def _isinf(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point or self.dtype.is_complex:
        return A.eq.Scalar(A.abs.default(self), math.inf)
    return A.ne.Tensor(self, self)  # integers are never infinite: all False, in self's layout


def _isinf_out(self: Tensor, *, out: Tensor) -> Tensor:
    _exact_bool(out)
    if self.dtype.is_floating_point or self.dtype.is_complex:
        return A.eq.Scalar_out(A.abs.default(self), math.inf, out=out)
    return A.ne.Tensor_out(self, self, out=out)


def _isnan_out(self: Tensor, *, out: Tensor) -> Tensor:
    _exact_bool(out)
    return A.ne.Tensor_out(self, self, out=out)  # NaN is the one value unequal to itself


def _isfinite(self: Tensor) -> Tensor:
    """``(self == self) * (self.abs() != inf)``: the right operand first, as GCC evaluates it."""
    if self.dtype.is_floating_point or self.dtype.is_complex:
        finite = A.ne.Scalar(A.abs.default(self), math.inf)
        return A.mul.Tensor(A.eq.Tensor(self, self), finite)
    return A.eq.Tensor(self, self)  # integers are always finite: all True, in self's layout


def _isclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Tensor:
    """``at::isclose`` (CompositeImplicitAutograd): equal, or finitely within ``atol + rtol * |other|``.

    torch's operators in its order: integers and bool are compared in the default dtype (``other``
    cast, and ``self`` too when bool); with ``equal_nan`` NaNs pair with NaNs; zero tolerances
    stop at equality.

    Example:
        >>> import dispatchcore as dc
        >>> dc.isclose(dc.tensor([1.0, 2.0]), dc.tensor([1.0 + 1e-9, 2.1]))
        tensor([ True, False])
    """
    from ..dtypes import get_default_dtype

    if self.dtype is not other.dtype:
        raise RuntimeError(f"{SCALAR_TYPE_NAMES[self.dtype.name]} did not match {SCALAR_TYPE_NAMES[other.dtype.name]}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {_cpp_double(rtol)}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {_cpp_double(atol)}")
    close = A.eq.Tensor(self, other)
    if equal_nan and (self.dtype.is_floating_point or self.dtype.is_complex):
        both = A.bitwise_and.Tensor(A.isnan.default(self), A.isnan.default(other))
        close = A.bitwise_or_.Tensor(close, both)
    if rtol == 0 and atol == 0:
        return close
    integral = not (self.dtype.is_floating_point or self.dtype.is_complex)
    cast_self = A._to_copy.default(self, dtype=get_default_dtype()) if self.dtype.name == "bool" else self
    cast_other = A._to_copy.default(other, dtype=get_default_dtype()) if integral else other
    allowed = A.add.Scalar(A.abs.default(A.mul.Scalar(cast_other, rtol)), atol)
    actual = A.abs.default(A.sub.Tensor(cast_self, cast_other))
    finite = A.isfinite.default(actual)
    return A.bitwise_or_.Tensor(close, A.bitwise_and_.Tensor(finite, A.le.Tensor(actual, allowed)))


def _allclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
              equal_nan: bool = False) -> bool:
    """``at::allclose`` (CompositeExplicitAutograd): ``isclose(...).all().item()``, a Python bool."""
    return bool(A._local_scalar_dense.default(A.all.default(A.isclose.default(self, other, rtol, atol, equal_nan))))


def _cpp_double(value: float) -> str:
    """A double as C++'s ``operator<<`` prints it (``-1``, ``0.5``, ``1e-05``)."""
    return f"{value:g}"


def _dense(shape: list[int], strides: list[int]) -> bool:
    """``is_non_overlapping_and_dense``: some permutation of the dims is contiguous (or nothing is stored)."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in sorted(zip(shape, strides), key=lambda p: p[1]):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def _empty_like(self: Tensor) -> Tensor:
    """``empty_like(self)``: self's strides where they are dense, else TensorIterator's choice (via resize)."""
    shape, strides = list(self.shape), list(self.stride())
    if _dense(shape, strides):
        return A.empty_strided.default(shape, strides, dtype=self.dtype, device=self.device)
    return A.empty.memory_format([0], dtype=self.dtype, device=self.device)


def _nan_to_num(self: Tensor, nan: Any = None, posinf: Any = None, neginf: Any = None) -> Tensor:
    return A.nan_to_num.out(self, nan, posinf, neginf, out=_empty_like(self))


def _nan_to_num_(self: Tensor, nan: Any = None, posinf: Any = None, neginf: Any = None) -> Tensor:
    return A.nan_to_num.out(self, nan, posinf, neginf, out=self)


def _shift_dunder_outs(dunder: str, target: str) -> dict[str, Callable[..., Any]]:
    """``__lshift__.Scalar_out``/``.Tensor_out``: torch's generated ``out=`` composites."""
    scalar_out, tensor_out = getattr(A, target).Tensor_Scalar_out, getattr(A, target).Tensor_out
    return {f"{dunder}.Scalar_out": lambda self, other, *, out: scalar_out(self, other, out=out),
            f"{dunder}.Tensor_out": lambda self, other, *, out: tensor_out(self, other, out=out)}


# --- deg2rad/rad2deg (UnaryOps.cpp, CompositeExplicitAutograd): a product by a wrapped constant ----------
_ANGLES = {"deg2rad": math.pi / 180, "rad2deg": 180 / math.pi}  # M_PI_180, M_180_PI


def _angle_kernels(name: str) -> dict[str, Callable[..., Any]]:
    """``name``, ``name_`` and ``name.out``: the out= kernel multiplies (``mul.out``), the others call it.

    Integers and bool become the default float dtype; ``name_`` writes into self whatever its dtype
    (``mul.out`` then refuses a float result in an integer self, as torch does).
    """
    factor = _ANGLES[name]
    out_op = _handle(f"{name}.out")

    def check(self: Tensor) -> None:
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors.")

    def functional(self: Tensor) -> Tensor:
        check(self)
        floating = self.dtype.is_floating_point
        dtype = self.dtype if floating else _default_dtype()
        return out_op(self, out=A.empty_like.default(self, dtype=dtype))

    def inplace(self: Tensor) -> Tensor:
        check(self)
        return out_op(self, out=self)

    def out(self: Tensor, *, out: Tensor) -> Tensor:
        check(self)
        return A.mul.out(self, factor, out=out)

    return {name: functional, f"{name}_": inplace, f"{name}.out": out}


def _times(factor: float) -> Callable[[G], G]:
    def formula(g: G) -> G:
        return A.mul.Scalar(g, factor)
    return formula


def _default_dtype() -> Any:
    from ..dtypes import get_default_dtype

    return get_default_dtype()


# --- heaviside (BinaryOps.cpp, structured): 0 below zero, ``values`` at zero, 1 above -----------------------
def heaviside_check(self: Tensor, values: Tensor, out: Tensor | None = None) -> None:
    """The checks torch makes before any promotion: no complex, one dtype for both inputs and the output."""
    if self.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self.dtype is not values.dtype or (out is not None and out.dtype is not self.dtype):
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


_HEAVISIDE = Bindings({"heaviside": ("heaviside(Tensor input, Tensor values, *, Tensor out=None)",),
                       "Tensor.heaviside": ("heaviside(Tensor values)",),
                       "Tensor.heaviside_": ("heaviside_(Tensor values)",)})


def _heaviside_call(index: int, a: dict[str, Any]) -> Tensor:
    if a.get("out") is None:
        return A.heaviside.default(a["input"], a["values"])
    return A.heaviside.out(a["input"], a["values"], out=a["out"])


def _heaviside_inplace_call(index: int, a: dict[str, Any]) -> Tensor:
    return A.heaviside_.default(a["input"], a["values"])


# --- positive and float_power (CompositeImplicitAutograd): self, or pow in double precision -----------
def _positive(self: Tensor) -> Tensor:
    if self.dtype is _bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _float_power_dtype(*operands: Any) -> Any:
    """complex128 if any operand is complex, else float64 (Pow.cpp's float_power)."""
    from ..dtypes import complex128, float64

    complex_ = any(o.dtype.is_complex if isinstance(o, Tensor) else isinstance(o, complex) for o in operands)
    return complex128 if complex_ else float64


def _as_dtype(t: Tensor, dtype: Any) -> Tensor:
    """``t.to(dtype)``: the tensor itself when it has the dtype, else a ``_to_copy``."""
    return t if t.dtype is dtype else A._to_copy.default(t, dtype=dtype)


def _as_scalar(value: Any, dtype: Any) -> Any:
    """``Scalar(value.toDouble())`` (or ``toComplexDouble()``): the Scalar float_power passes on."""
    return complex(value) if dtype.is_complex else float(value)


def _float_power_kernels() -> dict[str, Callable[..., Any]]:
    def tensor_tensor(self: Tensor, exponent: Tensor) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        return A.pow.Tensor_Tensor(_as_dtype(self, dtype), _as_dtype(exponent, dtype))

    def tensor_scalar(self: Tensor, exponent: Any) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        return A.pow.Tensor_Scalar(_as_dtype(self, dtype), _as_scalar(exponent, dtype))

    def scalar_tensor(self: Any, exponent: Tensor) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        return A.pow.Scalar(_as_scalar(self, dtype), _as_dtype(exponent, dtype))

    def checked(what: str, given: Tensor, dtype: Any) -> None:
        if given.dtype is not dtype:
            raise RuntimeError(f"the {what} has dtype {SCALAR_TYPE_NAMES[given.dtype.name]} but the "
                               f"operation's result requires dtype {SCALAR_TYPE_NAMES[dtype.name]}")

    def tensor_tensor_out(self: Tensor, exponent: Tensor, *, out: Tensor) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        checked("output given to float_power", out, dtype)
        return A.pow.Tensor_Tensor_out(_as_dtype(self, dtype), _as_dtype(exponent, dtype), out=out)

    def tensor_scalar_out(self: Tensor, exponent: Any, *, out: Tensor) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        checked("output given to float_power", out, dtype)
        return A.pow.Tensor_Scalar_out(_as_dtype(self, dtype), _as_scalar(exponent, dtype), out=out)

    def scalar_out(self: Any, exponent: Tensor, *, out: Tensor) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        checked("output given to float_power", out, dtype)
        return A.pow.Scalar_out(_as_scalar(self, dtype), _as_dtype(exponent, dtype), out=out)

    def inplace_tensor(self: Tensor, exponent: Tensor) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        checked("base given to float_power_", self, dtype)
        return A.pow_.Tensor(self, _as_dtype(exponent, dtype))

    def inplace_scalar(self: Tensor, exponent: Any) -> Tensor:
        dtype = _float_power_dtype(self, exponent)
        checked("base given to float_power_", self, dtype)
        return A.pow_.Scalar(self, _as_scalar(exponent, dtype))

    return {"float_power.Tensor_Tensor": tensor_tensor, "float_power.Tensor_Scalar": tensor_scalar,
            "float_power.Scalar": scalar_tensor, "float_power.Tensor_Tensor_out": tensor_tensor_out,
            "float_power.Tensor_Scalar_out": tensor_scalar_out, "float_power.Scalar_out": scalar_out,
            "float_power_.Tensor": inplace_tensor, "float_power_.Scalar": inplace_scalar}


_FLOAT_POWER = Bindings({
    "float_power": ("float_power(Tensor input, Tensor exponent, *, Tensor out=None)",
                    "float_power(Scalar self, Tensor exponent, *, Tensor out=None)",
                    "float_power(Tensor input, Scalar exponent, *, Tensor out=None)"),
    **{f"Tensor.{name}": (f"{name}(Tensor exponent)", f"{name}(Scalar exponent)")
       for name in ("float_power", "float_power_")},
})


def _float_power_call(index: int, a: dict[str, Any]) -> Tensor:
    """The overload the parsed call names: the method's two signatures, or the function's three."""
    exponent, out = a["exponent"], a.get("out")
    if "self" in a:  # torch.float_power(2, x)
        return A.float_power.Scalar(a["self"], exponent) if out is None else \
            A.float_power.Scalar_out(a["self"], exponent, out=out)
    kind = "Tensor_Tensor" if isinstance(exponent, Tensor) else "Tensor_Scalar"
    if out is None:
        return getattr(A.float_power, kind)(a["input"], exponent)
    return getattr(A.float_power, f"{kind}_out")(a["input"], exponent, out=out)


def _float_power_inplace_call(index: int, a: dict[str, Any]) -> Tensor:
    exponent = a["exponent"]
    overload = A.float_power_.Tensor if isinstance(exponent, Tensor) else A.float_power_.Scalar
    return overload(a["input"], exponent)


def _explicit() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {"isnan.out": _isnan_out, "isinf": _isinf, "isinf.out": _isinf_out,
                                            "allclose": _allclose,
                                            "nan_to_num": _nan_to_num, "nan_to_num_": _nan_to_num_}
    for name in _ANGLES:
        found.update(_angle_kernels(name))
    found.update(_logical_composites("logical_not", False))
    for name, op in BINARY.items():
        if op.rule == LOGICAL:
            found.update(_logical_composites(name, True))
        if op.scalar:
            found.update(_scalar_composites(name, op))
    for dunder, target in SHIFT_DUNDERS.items():
        found.update(_shift_dunder_outs(dunder, target))
    return found


def _alias_kernels(alias: str, target: str) -> dict[str, Callable[..., Any]]:
    """The alias's functional, in-place and out= kernels: each calls the target's overload."""
    functional, inplace, out_op = _handle(target), _handle(f"{target}_"), _handle(f"{target}.out")
    if alias in _BINARY_ALIASES:
        return {alias: lambda self, other: functional(self, other),
                f"{alias}_": lambda self, other: inplace(self, other),
                f"{alias}.out": lambda self, other, *, out: out_op(self, other, out=out)}
    return {alias: lambda self: functional(self), f"{alias}_": lambda self: inplace(self),
            f"{alias}.out": lambda self, *, out: out_op(self, out=out)}


def _overload_alias_kernels(alias: str) -> dict[str, Callable[..., Any]]:
    """Each overload of an ``OVERLOAD_ALIASES`` entry: a call of the target's overload of that name."""
    found = {}
    for schema in _overload_alias_schemas(alias):
        name = schema.partition("(")[0]  # divide_.Tensor_mode
        target = OVERLOAD_ALIASES[alias] + name[len(alias):]  # div_.Tensor_mode
        found[name] = _calling(_handle(target))
    return found


def _calling(op: Any) -> Callable[..., Any]:
    def alias(*args: Any, **kwargs: Any) -> Any:
        return op(*args, **kwargs)
    return alias


def _implicit() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {"isfinite": _isfinite, "isclose": _isclose}
    for alias, target in ALIASES.items():
        found.update(_alias_kernels(alias, target))
    for alias in OVERLOAD_ALIASES:
        found.update(_overload_alias_kernels(alias))
    found["positive"] = _positive
    found.update(_float_power_kernels())
    for name in ("and", "or", "xor"):  # the operators are their bitwise ops
        for overload in ("Tensor", "Scalar"):
            functional, inplace = _handle(f"bitwise_{name}.{overload}"), _handle(f"bitwise_{name}_.{overload}")
            found[f"__{name}__.{overload}"] = lambda self, other, _op=functional: _op(self, other)
            found[f"__i{name}__.{overload}"] = lambda self, other, _op=inplace: _op(self, other)
    return found


def _handle(name: str) -> Any:
    """The operator ``aten::<name>`` (``ops.aten`` hides dunder names such as ``__and__``)."""
    from ..dispatcher import find_op

    return find_op(f"aten::{name}")


_composites: dict[str, dict[str, Any]] = {}


def __getattr__(name: str) -> Any:
    # The tables of callables are built on first use: this module is imported while ``aten`` is
    # being defined, before its own operators exist (``dispatchcore.aten.define_aten``).
    if name in ("COMPOSITE_EXPLICIT", "COMPOSITE_IMPLICIT"):
        if name not in _composites:
            _composites[name] = _explicit() if name == "COMPOSITE_EXPLICIT" else _implicit()
        return _composites[name]
    if name in ("FUNCTIONS", "METHODS"):
        if name not in _composites:
            _composites["FUNCTIONS"], _composites["METHODS"] = _python_layer()
        return _composites[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(lib: Library) -> None:
    """Register the CompositeExplicitAutograd and CompositeImplicitAutograd kernels."""
    for name, kernel in __getattr__("COMPOSITE_EXPLICIT").items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in __getattr__("COMPOSITE_IMPLICIT").items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives ---------------------------------------------------------------------------------------
def _not_implemented_node(derivative: Any) -> None:
    derivative.node_class._qualified_name = "torch::autograd::NotImplemented"


def register_autograd(lib: Library) -> None:
    """Register every derivative above at the Autograd key, with torch's node names."""
    from ..autograd.kernels import register_derivative, register_nondifferentiable

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> Any:
        return register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    def nondiff(*names: str | None) -> None:
        for name in names:
            if name is not None:
                register_nondifferentiable(lib, f"aten::{name}")

    for name, u in UNARY.items():
        inplace = (f"{name}_",) if u.inplace else ()
        if u.node is None:
            nondiff(name, *inplace)
            continue
        r(name, u.node, ("self",), u.formula)
        if u.inplace_node:
            r(f"{name}_", u.inplace_node, ("self",), _not_implemented(f"inplace version of {name}"), mutates="self")
        elif u.inplace:
            r(f"{name}_", u.node, ("self",), u.formula, mutates="self")
    for name, factor in _ANGLES.items():  # deg2rad_backward: grad times the constant
        node = "Deg2RadBackward0" if name == "deg2rad" else "Rad2DegBackward0"
        r(name, node, ("self",), _times(factor))
        r(f"{name}_", node, ("self",), _times(factor), mutates="self")
    r("round.decimals", "RoundBackward1", ("self",), lambda g: _zeros(g))
    r("round_.decimals", "RoundBackward1", ("self",), lambda g: _zeros(g), mutates="self")
    nondiff("isnan", "isinf", "logical_not", "logical_not_", "allclose", "equal")
    nan_to_num = (lambda g, self: A.mul.Tensor(g, A.isfinite.default(self)))
    r("nan_to_num", "NanToNumBackward0", ("self",), nan_to_num)
    r("nan_to_num_", "NanToNumBackward0", ("self",), nan_to_num, mutates="self")

    for name, b in BINARY.items():
        functional_name, inplace_name, _ = b.tensor
        scalar = [f"{name}.{b.scalar}", f"{name}_.{b.scalar}"] if b.scalar else []
        reverse = [f"{name}.Scalar_Tensor"] if b.reverse else []
        if b.node is not None:
            r(functional_name, b.node, ("self", "other"), b.formulas)
            if inplace_name is not None:
                r(inplace_name, b.node, ("self", "other"), b.formulas, mutates="self")
            if b.scalar_node:
                r(scalar[0], b.scalar_node, ("self",), b.scalar_formula)
                r(scalar[1], b.scalar_node, ("self",), b.scalar_formula, mutates="self")
        elif name != "floor_divide":  # floor_divide's nodes are NOT_IMPLEMENTED's, below
            nondiff(functional_name, inplace_name, *scalar, *reverse)
    for name in ("heaviside", "heaviside_"):  # no derivatives.yaml entry
        _not_implemented_node(r(name, "NotImplemented", ("self", "values"), _no_derivative(name),
                                **({"mutates": "self"} if name.endswith("_") else {})))
    for name in NOT_IMPLEMENTED:
        base, _, overload = name.partition(".")
        inputs = ("self",) if overload == "Scalar" else ("other",) if overload == "Scalar_Tensor" else ("self", "other")
        _not_implemented_node(r(name, "NotImplemented", inputs, _no_derivative(base),
                                **({"mutates": "self"} if base.endswith("_") else {})))
    for dunder in SHIFT_DUNDERS:
        nondiff(f"{dunder}.Scalar", f"{dunder}.Tensor", f"__i{dunder[2:]}.Scalar", f"__i{dunder[2:]}.Tensor")

    for t in TERNARY.values():
        r(t.overloads[0], t.node, t.inputs, t.formulas)
        r(t.overloads[1], t.node, t.inputs, t.formulas, mutates="self")

    for name, act in ACTIVATIONS.items():
        args = ("self",)
        r(name, act.node, args, act.formula)
        r(f"{name}_", act.inplace_node, args, act.inplace_formula, mutates="self")
        backward_inputs = ("grad_output", "self_or_result") if name == "elu" else ("grad_output", "self")
        r(f"{name}_backward", act.backward_node, backward_inputs, act.backward_formulas)
    for name, (node, formulas) in UNARY_BACKWARD.items():
        r(name, node, ("grad_output", "output"), formulas)


# --- torch.* functions and Tensor methods ----------------------------------------------------------------
# torch.<name>_ functions torch defines (most in-place forms are methods only)
_ISCLOSE = Bindings({
    **{key: (f"{name}({first}Tensor other, double rtol=1e-05, double atol=1e-08, bool equal_nan=False)",)
       for name in ("isclose", "allclose")
       for key, first in ((name, "Tensor input, "), (f"Tensor.{name}", ""))},
    "equal": ("equal(Tensor input, Tensor other)",), "Tensor.equal": ("equal(Tensor other)",),
})


def _isclose_call(index: int, b: dict[str, Any]) -> Tensor:
    return A.isclose.default(b["input"], b["other"], b["rtol"], b["atol"], b["equal_nan"])


def _allclose_call(index: int, b: dict[str, Any]) -> bool:
    return A.allclose.default(b["input"], b["other"], b["rtol"], b["atol"], b["equal_nan"])


_TORCH_INPLACE = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "erf", "erfc", "exp2",
                  "expm1", "log1p", "log2", "log10", "rsqrt", "ceil", "floor", "round", "trunc", "frac", "sinc")
_NOT_PASSED: Any = object()


def _type_name(value: Any) -> str:
    return type(value).__name__


def _not_tensor(name: str, value: Any, arg: str, position: int) -> TypeError:
    return TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {_type_name(value)}")


def _named(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    return fn


def _unary_function(name: str, out: bool = True) -> Callable[..., Any]:
    """``torch.<name>(input, *, out=None)``."""
    op = _handle(name)
    out_op: Any = _handle(f"{name}.out") if out else None

    def with_out(input: Any, *, out: Tensor | None = None) -> Any:
        if not isinstance(input, Tensor):
            raise _not_tensor(name, input, "input", 1)
        return op(input) if out is None else out_op(input, out=out)

    def without_out(input: Any) -> Any:
        if not isinstance(input, Tensor):
            raise _not_tensor(name, input, "input", 1)
        return op(input)

    return _named(with_out if out else without_out, name)


def _inplace_function(name: str) -> Callable[..., Any]:
    """``torch.<name>_(input)``."""
    op = _handle(f"{name}_")

    def function(input: Any) -> Any:
        if not isinstance(input, Tensor):
            raise _not_tensor(f"{name}_", input, "input", 1)
        return op(input)

    return _named(function, f"{name}_")


def _round(input: Any, *, decimals: Any = _NOT_PASSED, out: Tensor | None = None) -> Any:
    """``torch.round``: ``aten::round``, or ``round.decimals`` when ``decimals`` is given."""
    if not isinstance(input, Tensor):
        raise _not_tensor("round", input, "input", 1)
    if decimals is _NOT_PASSED:
        return A.round.default(input) if out is None else A.round.out(input, out=out)
    if out is None:
        return A.round.decimals(input, decimals=decimals)
    return A.round.decimals_out(input, decimals=decimals, out=out)


def _round_method(self: Tensor, *, decimals: Any = _NOT_PASSED) -> Tensor:
    return A.round.default(self) if decimals is _NOT_PASSED else A.round.decimals(self, decimals=decimals)


def _round__method(self: Tensor, *, decimals: Any = _NOT_PASSED) -> Tensor:
    return A.round_.default(self) if decimals is _NOT_PASSED else A.round_.decimals(self, decimals=decimals)


def _nan_to_num_function(input: Any, nan: Any = 0.0, posinf: Any = None, neginf: Any = None, *,
                out: Tensor | None = None) -> Any:
    """``torch.nan_to_num``: ``aten::nan_to_num`` (``.out`` with ``out=``)."""
    if not isinstance(input, Tensor):
        raise _not_tensor("nan_to_num", input, "input", 1)
    if out is None:
        return A.nan_to_num.default(input, nan, posinf, neginf)
    return A.nan_to_num.out(input, nan, posinf, neginf, out=out)


def _nan_to_num__function(input: Any, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    if not isinstance(input, Tensor):
        raise _not_tensor("nan_to_num_", input, "input", 1)
    return A.nan_to_num_.default(input, nan, posinf, neginf)


def _signatures(name: str, b: Binary) -> list[str]:
    """The binding signatures torch gives ``torch.<name>``, for its TypeErrors."""
    found = [f"{name}(Tensor input, Tensor other, *, Tensor out=None)"]
    if name == "floor_divide":  # its Number overload takes no out
        return [*found, f"{name}(Tensor input, Scalar other)"]
    if b.reverse:  # torch lists the reversed overload second
        found.append(f"{name}(Scalar self, Tensor other)")
    if b.scalar:
        found.append(f"{name}(Tensor input, Scalar other, *, Tensor out=None)")
    return found


def _binary_function(name: str, b: Binary) -> Callable[..., Any]:
    """``torch.<name>(input, other, *, out=None)``: the overload torch's binding picks."""
    from .._tensor_methods import _is_number

    functional, out_op = _handle(b.tensor[0]), _handle(b.tensor[2])
    scalar: Any = _handle(f"{name}.{b.scalar}") if b.scalar else None
    scalar_out: Any = _handle(f"{name}.{b.scalar}_out") if b.scalar else None
    wraps = name == "floor_divide"  # floor_divide takes numbers as tensors (wrapped numbers)

    def call(input: Any, other: Any, out: Any) -> Any:
        if isinstance(input, Tensor):
            if isinstance(other, Tensor):
                return functional(input, other) if out is None else out_op(input, other, out=out)
            if _is_number(other):
                if wraps:
                    other = _number(other)
                    return functional(input, other) if out is None else out_op(input, other, out=out)
                if scalar is not None:
                    return scalar(input, other) if out is None else scalar_out(input, other, out=out)
        elif isinstance(other, Tensor) and _is_number(input):
            if wraps:
                input = _number(input)
                return functional(input, other) if out is None else out_op(input, other, out=out)
            if b.reverse:
                if out is None:
                    return getattr(A, name).Scalar_Tensor(input, other)
                return getattr(A, name).Scalar_Tensor_out(input, other, out=out)
        return _NOT_PASSED

    def function(input: Any, other: Any, *, out: Tensor | None = None) -> Any:
        result = call(input, other, out)
        if result is _NOT_PASSED:
            from ..factories import _CHECKS
            from ..schema import PythonArgParser

            PythonArgParser(_signatures(name, b), _CHECKS).parse((input, other), {} if out is None else {"out": out})
            raise _not_tensor(name, other, "other", 2)
        return result

    return _named(function, name)


def _binary_method(name: str, b: Binary, inplace: bool) -> Callable[..., Any]:
    """``Tensor.<name>(other)`` / ``<name>_``: ``.Scalar`` for a number where torch has one."""
    from .. import _tensor_methods as tm

    tensor_name = b.tensor[1] if inplace else b.tensor[0]
    if tensor_name is None:
        raise ValueError(f"{name} has no in-place form: no {name}_ method")
    tensor_op = _handle(tensor_name)
    method_name = f"{name}_" if inplace else name
    if b.scalar:
        scalar_op = _handle(f"{name}_.{b.scalar}" if inplace else f"{name}.{b.scalar}")
        entry = tm._by_operand(tensor_op, scalar_op)
    elif name == "floor_divide":
        entry = tm._binary(tensor_op)
    else:
        def refuse(self: Tensor, other: Any) -> Any:
            if isinstance(other, Tensor):
                return tensor_op(self, other)
            raise _not_tensor(method_name, other, "other", 1)

        entry = tm.fast(tensor_op, 2, otherwise=refuse)

    def method(self: Tensor, other: Any) -> Any:
        return entry(self, other)

    return _named(method, method_name)


def _reflected(op_name: str, name: str) -> Callable[..., Any]:
    """Reflected operators (``2 % x``, ``2 << x``): torch/_tensor.py's ``torch.remainder(other, self)``.

    A number takes the ``Scalar_Tensor`` overload, a Tensor the ``Tensor`` one (``x.__rmod__(t)``
    is ``remainder.Tensor(t, x)``); another operand goes to its torch function handler, else
    NotImplemented (torch turns the call's TypeError into NotImplemented).
    """
    from .._tensor_methods import _NOT_HANDLED, _is_number
    from .._tensor_methods import _reflected as handled_operand

    op, tensor_op = _handle(op_name), _handle(f"{op_name.partition('.')[0]}.Tensor")

    def reflected(self: Tensor, other: Any) -> Any:
        if _is_number(other):
            return op(other, self)
        result = handled_operand(name, self, other)
        if result is not _NOT_HANDLED:
            return result
        return tensor_op(other, self) if isinstance(other, Tensor) else NotImplemented

    return reflected


def _rfloordiv(self: Tensor, other: Any) -> Any:
    """``2 // x``: ``floor_divide`` of a wrapped number (of a Tensor operand), as torch's ``__rfloordiv__``."""
    from .._tensor_methods import _is_number

    if _is_number(other):
        return A.floor_divide.default(_number(other), self)
    return _rfloordiv_operand(self, other)


def _rfloordiv_operand(self: Tensor, other: Any) -> Any:
    """``x.__rfloordiv__(other)`` for a Tensor (``floor_divide(other, x)``) or a duck type's handler."""
    from .._tensor_methods import _NOT_HANDLED
    from .._tensor_methods import _reflected as handled_operand

    result = handled_operand("__rfloordiv__", self, other)
    if result is not _NOT_HANDLED:
        return result
    return A.floor_divide.default(other, self) if isinstance(other, Tensor) else NotImplemented


def _invert(self: Tensor) -> Tensor:
    """``~x``: bitwise_not, for integer and bool tensors only (torch's Python-level check)."""
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return A.bitwise_not.default(self)


def _ternary_python(functions: dict[str, Any], methods: dict[str, Any]) -> None:
    """``torch.addcmul``/``addcdiv``/``lerp`` and their methods: the overload torch's binding picks."""
    def addc(name: str) -> None:
        functional, inplace, out_op = (_handle(n) for n in TERNARY[name].overloads)
        # the optimizers' ``exp_avg_sq.addcmul_(g, g, value=v)``: Note [Keyword entries] (operator.py)
        functional_kw, inplace_kw = functional.keyword_entry(3, ("value",)), inplace.keyword_entry(3, ("value",))

        def function(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1, out: Tensor | None = None) -> Any:
            if not isinstance(input, Tensor):
                raise _not_tensor(name, input, "input", 1)
            if out is None:
                return functional(input, tensor1, tensor2, value=value)
            return out_op(input, tensor1, tensor2, value=value, out=out)

        def method(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
            return functional_kw(self, tensor1, tensor2, value=value)

        def method_(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
            return inplace_kw(self, tensor1, tensor2, value=value)

        functions[name] = _named(function, name)
        methods[name] = _named(method, name)
        methods[f"{name}_"] = _named(method_, f"{name}_")

    addc("addcmul")
    addc("addcdiv")
    by_weight = {kind: tuple(_handle(n) for n in TERNARY[f"lerp.{kind}"].overloads) for kind in ("Scalar", "Tensor")}

    def pick(weight: Any) -> tuple[Any, Any, Any]:
        return by_weight["Tensor" if isinstance(weight, Tensor) else "Scalar"]

    def lerp(input: Any, end: Any, weight: Any, *, out: Tensor | None = None) -> Any:
        if not isinstance(input, Tensor):
            raise _not_tensor("lerp", input, "input", 1)
        functional, _, out_op = pick(weight)
        return functional(input, end, weight) if out is None else out_op(input, end, weight, out=out)

    def lerp_method(self: Tensor, end: Any, weight: Any) -> Any:
        return pick(weight)[0](self, end, weight)

    def lerp__method(self: Tensor, end: Any, weight: Any) -> Any:
        return pick(weight)[1](self, end, weight)

    functions["lerp"] = _named(lerp, "lerp")
    methods["lerp"] = _named(lerp_method, "lerp")
    methods["lerp_"] = _named(lerp__method, "lerp_")


def _python_layer() -> tuple[dict[str, Any], dict[str, Any]]:
    """``FUNCTIONS`` and ``METHODS``, built once the operators exist."""
    from .. import _tensor_methods as tm

    functions: dict[str, Any] = {}
    methods: dict[str, Any] = {}
    for name, u in UNARY.items():
        functions[name] = _unary_function(name)
        methods[name] = tm.fast(_handle(name))
        if u.inplace:
            methods[f"{name}_"] = tm.fast(_handle(f"{name}_"))
            if name in _TORCH_INPLACE:
                functions[f"{name}_"] = _inplace_function(name)
    functions.update(round=_round, nan_to_num=_nan_to_num_function, nan_to_num_=_nan_to_num__function,
                     isnan=_unary_function("isnan", out=False), isinf=_unary_function("isinf", out=False),
                     isfinite=_unary_function("isfinite", out=False), logical_not=_unary_function("logical_not"),
                     isclose=_ISCLOSE.function("isclose", _isclose_call),
                     allclose=_ISCLOSE.function("allclose", _allclose_call),
                     equal=_ISCLOSE.function("equal", lambda index, b: A.equal.default(b["input"], b["other"])))
    methods.update(round=_round_method, round_=_round__method,
                   nan_to_num=_nan_to_num_function, nan_to_num_=_nan_to_num__function,
                   isnan=tm.fast(A.isnan.default), isinf=tm.fast(A.isinf.default),
                   isfinite=tm.fast(A.isfinite.default), logical_not=tm.fast(A.logical_not.default),
                   isclose=_ISCLOSE.method("isclose", _isclose_call),
                   allclose=_ISCLOSE.method("allclose", _allclose_call),
                   equal=_ISCLOSE.method("equal", lambda index, b: A.equal.default(b["input"], b["other"])),
                   logical_not_=tm.fast(A.logical_not_.default))
    for name in _ANGLES:
        functions[name], functions[f"{name}_"] = _unary_function(name), _inplace_function(name)
        methods[name], methods[f"{name}_"] = tm.fast(_handle(name)), tm.fast(_handle(f"{name}_"))
    functions["heaviside"] = _HEAVISIDE.function("heaviside", _heaviside_call)
    methods["heaviside"] = _HEAVISIDE.method("heaviside", _heaviside_call)
    methods["heaviside_"] = _HEAVISIDE.method("heaviside_", _heaviside_inplace_call)
    functions["positive"] = _unary_function("positive", out=False)
    methods["positive"] = methods["__pos__"] = tm.fast(A.positive.default)  # torch's +x is x.positive()
    functions["float_power"] = _FLOAT_POWER.function("float_power", _float_power_call)
    methods["float_power"] = _FLOAT_POWER.method("float_power", _float_power_call)
    methods["float_power_"] = _FLOAT_POWER.method("float_power_", _float_power_inplace_call)
    for alias in ALIASES:
        if alias in _BINARY_ALIASES:
            b = Binary(FLOAT, (alias, f"{alias}_", f"{alias}.out"))
            functions[alias] = _binary_function(alias, b)
            methods[alias] = _binary_method(alias, b, inplace=False)
            methods[f"{alias}_"] = _binary_method(alias, b, inplace=True)
            continue
        functions[alias] = _unary_function(alias)
        methods[alias] = tm.fast(_handle(alias))
        methods[f"{alias}_"] = tm.fast(_handle(f"{alias}_"))
        if alias in _TORCH_INPLACE_ALIASES:
            functions[f"{alias}_"] = _inplace_function(alias)
    for name, b in BINARY.items():
        functions[name] = _binary_function(name, b)
        methods[name] = _binary_method(name, b, inplace=False)
        if b.tensor[1] is not None:
            methods[f"{name}_"] = _binary_method(name, b, inplace=True)
    # the Python operators
    for op in ("and", "or", "xor"):
        forward = tm._by_operand(_handle(f"__{op}__.Tensor"), _handle(f"__{op}__.Scalar"), dunder=True)
        methods[f"__{op}__"] = methods[f"__r{op}__"] = forward  # commutative: 2 & x is x & 2, as in torch
        methods[f"__i{op}__"] = tm._by_operand(_handle(f"__i{op}__.Tensor"), _handle(f"__i{op}__.Scalar"), dunder=True)
    for dunder, target in SHIFT_DUNDERS.items():
        short = dunder[2:]
        methods[dunder] = tm._by_operand(_handle(f"{dunder}.Tensor"), _handle(f"{dunder}.Scalar"), dunder=True)
        methods[f"__i{short}"] = tm._by_operand(_handle(f"__i{short}.Tensor"), _handle(f"__i{short}.Scalar"),
                                                dunder=True)
        methods[f"__r{short}"] = _reflected(f"{target}.Scalar_Tensor", f"__r{short}")
    methods["__invert__"] = _invert
    methods["__floordiv__"] = tm._binary(A.floor_divide.default, dunder=True)
    methods["__ifloordiv__"] = tm._binary(A.floor_divide_.Tensor, dunder=True)
    methods["__rfloordiv__"] = _rfloordiv
    methods["__mod__"] = tm._by_operand(A.remainder.Tensor, A.remainder.Scalar, dunder=True)
    methods["__imod__"] = tm._by_operand(A.remainder_.Tensor, A.remainder_.Scalar, dunder=True)
    methods["__rmod__"] = _reflected("remainder.Scalar_Tensor", "__rmod__")
    _ternary_python(functions, methods)
    return functions, methods
