"""CPU kernels of the pointwise family (``dispatchcore.native.pointwise``), generated from one table.

Mirrors the CPU kernels of ``UnaryOps.cpp``, ``BinaryOps.cpp`` and ``Activation.cpp``: each op is a
numpy function plus the name torch's dtype dispatch prints and the dtype kinds it was compiled for
(``UNARY``, ``BINARY``); the functional, in-place and ``out=`` kernels of every op come from the same
two engines (``_unary``, ``_binary``), which apply the family's dtype rule, torch's ``out=`` and
in-place checks in torch's order, and compute half in float (torch's opmath). Invariant: a kernel
writes exactly what its functional form returns, cast to the target's dtype; numpy's floating-point
warnings are silenced (See Note [Quiet floating-point errors] in kernels.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import dtypes
from dispatchcore.native import pointwise as P
from dispatchcore.tensor import Tensor, wrap_cpu

from . import gamma as _gamma
from . import kernels as _k

__all__ = ["BINARY", "KERNELS", "UNARY"]

_nd = np.ndarray
_F16, _F32, _BOOL = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.bool_)
_F64 = np.dtype(np.float64)
_FLOATS, _INTS, _ALL = "f", "iu", "biuf"


def _opmath(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``fn`` with half computing in float and rounds once, as torch's CPU kernels do."""
    def compute(a: np.ndarray, *rest: Any) -> Any:
        if a.dtype is _F16 or a.dtype == _F16:
            return np.asarray(fn(a.astype(_F32), *(r.astype(_F32) if isinstance(r, _nd) else r for r in rest))
                              ).astype(_F16)
        return fn(a, *rest)
    return compute


# --- numpy implementations ---------------------------------------------------------------------------
_erf_scalar = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; libm's, element by element


def _erf(a: np.ndarray) -> np.ndarray:
    return np.asarray(_erf_scalar(a), dtype=a.dtype)


_erfc_scalar = np.frompyfunc(math.erfc, 1, 1)  # libm's erfc: 1 - erf(x) would lose the tail's digits


def _erfc(a: np.ndarray) -> np.ndarray:
    return np.asarray(_erfc_scalar(a), dtype=a.dtype)


def _sinc(a: np.ndarray) -> np.ndarray:
    """``sin(pi x) / (pi x)`` in x's dtype (pi rounded to it, as ``c10::pi<T>``), 1 at 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        product = a * a.dtype.type(math.pi)
        return np.where(a == 0, a.dtype.type(1), np.sin(product) / product).astype(a.dtype, copy=False)


def _integral_copy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """ceil/floor/round/trunc: integers are their own result (torch copies them)."""
    return lambda a: a.copy() if a.dtype.kind in _INTS else fn(a)


def _sign(a: np.ndarray) -> np.ndarray:
    """``(0 < a) - (a < 0)``: NaN gives 0 and -0.0 gives 0, as torch's sign."""
    if a.dtype is _BOOL:
        return a.copy()
    return (np.greater(a, 0).astype(a.dtype) - np.less(a, 0).astype(a.dtype)).astype(a.dtype)


def _sgn(a: np.ndarray) -> np.ndarray:
    """``sgn``: ``sign`` for real tensors, ``z / abs(z)`` (0 at 0) for complex ones."""
    if a.dtype.kind != "c":
        return _sign(a)
    size = np.abs(a)
    return np.where(size == 0, 0, a / np.where(size == 0, 1, size)).astype(a.dtype)


def _remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``remainder`` as torch computes it: fmod, moved by ``b`` when the signs differ.

    A zero keeps fmod's sign (the dividend's); numpy's ``remainder`` gives it the divisor's.
    """
    if a.dtype.kind != "f":
        return np.remainder(a, b)
    m = np.fmod(a, b)
    return np.where((m != 0) & (np.less(b, 0) != np.less(m, 0)), m + b, m)


def _signbit(a: np.ndarray) -> np.ndarray:
    return np.signbit(a) if a.dtype.kind == "f" else np.less(a, 0) if a.dtype.kind == "i" else np.zeros(a.shape, _BOOL)


def _is_value(value: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda a: np.equal(a, value) if a.dtype.kind == "f" else np.zeros(a.shape, _BOOL)


def _bitwise_not(a: np.ndarray) -> np.ndarray:
    return np.logical_not(a) if a.dtype is _BOOL else np.invert(a)


def _checked_integer_division(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Integer fmod/remainder/floor_divide by zero raise torch's ``ZeroDivisionError`` (a RuntimeError)."""
    def compute(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind in _INTS and np.equal(b, 0).any():
            raise RuntimeError("ZeroDivisionError")
        return fn(a, b)
    return compute


def _shift(left: bool) -> Callable[..., Any]:
    """Shift as torch does: a shift by a negative count or by the width or more gives 0 (or the sign, rightwards)."""
    def compute(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        bits = a.dtype.itemsize * 8
        outside = np.less(b, 0) | np.greater_equal(b, bits)
        count = np.where(outside, 0, b).astype(a.dtype)
        if left:
            return np.where(outside, 0, np.left_shift(a, count)).astype(a.dtype)
        fill = np.where(np.less(a, 0), -1, 0) if a.dtype.kind == "i" else 0
        return np.where(outside, fill, np.right_shift(a, count)).astype(a.dtype)
    return compute


# name -> (numpy function, kernel name torch's dtype dispatch prints, dtype kinds it takes)
UNARY: dict[str, tuple[Callable[..., Any], str, str]] = {
    "acos": (np.arccos, "acos_cpu", _FLOATS),
    "acosh": (np.arccosh, "acosh_cpu", _FLOATS),
    "asin": (np.arcsin, "asin_cpu", _FLOATS),
    "asinh": (np.arcsinh, "asinh_cpu", _FLOATS),
    "atan": (np.arctan, "atan_cpu", _FLOATS),
    "atanh": (np.arctanh, "atanh_cpu", _FLOATS),
    "cosh": (np.cosh, "cosh_cpu", _FLOATS),
    "sinh": (np.sinh, "sinh_cpu", _FLOATS),
    "tan": (np.tan, "tan_cpu", _FLOATS),
    "erf": (_erf, "erf_cpu", _FLOATS),
    "erfc": (_erfc, "erfc_cpu", _FLOATS),
    "lgamma": (_gamma.lgamma, "lgamma_vml_cpu", _FLOATS),
    "digamma": (_gamma.digamma, "digamma", _FLOATS),
    "erfinv": (_gamma.erfinv, "erfinv_vml_cpu", _FLOATS),
    "exp2": (np.exp2, "exp2_cpu", _FLOATS),
    "sinc": (_sinc, "sinc_cpu", _FLOATS),
    "expm1": (np.expm1, "expm1_cpu", _FLOATS),
    "log1p": (np.log1p, "log1p_cpu", _FLOATS),
    "log2": (np.log2, "log2_cpu", _FLOATS),
    "log10": (np.log10, "log10_cpu", _FLOATS),
    "rsqrt": (lambda a: np.reciprocal(np.sqrt(a)), "rsqrt_cpu", _FLOATS),
    "sgn": (_sgn, "sign_cpu", _ALL + "c"),
    "sign": (_sign, "sign_cpu", _ALL),
    "ceil": (_integral_copy(np.ceil), "ceil_vml_cpu", "iuf"),
    "floor": (_integral_copy(np.floor), "floor_vml_cpu", "iuf"),
    "round": (_integral_copy(np.rint), "round_vml_cpu", "iuf"),  # half to even, as torch
    "trunc": (_integral_copy(np.trunc), "trunc_vml_cpu", "iuf"),
    "frac": (lambda a: a - np.trunc(a), "frac_cpu", _FLOATS),
    "bitwise_not": (_bitwise_not, "bitwise_not_cpu", "biu"),
    "signbit": (_signbit, "signbit_cpu", _ALL),
    "isposinf": (_is_value(math.inf), "isposinf_cpu", _ALL),
    "isneginf": (_is_value(-math.inf), "isneginf_cpu", _ALL),
    "isnan": (lambda a: np.not_equal(a, a), "isnan_cpu", _ALL + "c"),
    "logical_not": (lambda a: np.equal(a, 0), "logical_not_cpu", _ALL + "c"),
}
def _lcm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``calc_lcm``: ``abs(a / gcd * b)``, 0 where the gcd is 0.

    An overflow wraps before the ``abs``; numpy's ``lcm`` takes the absolute values first, so its
    overflows keep their sign.
    """
    g = np.gcd(a, b)
    zero = g == 0
    with np.errstate(all="ignore"):
        return np.where(zero, 0, np.abs(a // np.where(zero, 1, g) * b)).astype(a.dtype, copy=False)


def _first_on_tie(ufunc: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``fmax``/``fmin`` as torch's: where the two are equal the first is kept (``fmax(-0.0, 0.0)`` is -0.0).

    numpy's loops pick either zero depending on the loop; NaN is ignored as by the C functions.
    """
    def compute(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        r = np.asarray(ufunc(a, b))
        if r.dtype.kind == "f":
            np.copyto(r, a, where=a == b)
        return r
    return compute


# name -> (numpy function of two arrays of the computation dtype, kernel name, dtype kinds)
BINARY: dict[str, tuple[Callable[..., Any], str, str]] = {
    "atan2": (np.arctan2, "atan2_cpu", _FLOATS),
    "hypot": (np.hypot, "hypot_cpu", _FLOATS),
    "copysign": (np.copysign, "copysign_cpu", _FLOATS),
    "nextafter": (np.nextafter, "nextafter_cpu", _FLOATS),  # in the tensor's own dtype, half too
    "fmod": (_checked_integer_division(np.fmod), "fmod_cpu", "iuf"),
    "remainder": (_checked_integer_division(_remainder), "remainder_cpu", "iuf"),
    "floor_divide": (_checked_integer_division(np.floor_divide), "div_floor_cpu", "iuf"),
    "bitwise_and": (np.bitwise_and, "bitwise_and_cpu", "biu"),
    "gcd": (np.gcd, "gcd_cpu", _INTS),
    "lcm": (_lcm, "lcm_cpu", _INTS),
    "bitwise_or": (np.bitwise_or, "bitwise_or_cpu", "biu"),
    "bitwise_xor": (np.bitwise_xor, "bitwise_xor_cpu", "biu"),
    "bitwise_left_shift": (_shift(True), "lshift_cpu", _INTS),
    "bitwise_right_shift": (_shift(False), "rshift_cpu", _INTS),
    "logaddexp": (np.logaddexp, "logaddexp_cpu", _FLOATS),
    "logaddexp2": (np.logaddexp2, "logaddexp2_cpu", _FLOATS),
    "fmax": (_first_on_tie(np.fmax), "fmax_cpu", _ALL),
    "fmin": (_first_on_tie(np.fmin), "fmin_cpu", _ALL),
    "logical_and": (np.logical_and, "logical_and_cpu", _ALL + "c"),
    "logical_or": (np.logical_or, "logical_or_cpu", _ALL + "c"),
    "logical_xor": (np.logical_xor, "logical_xor_cpu", _ALL + "c"),
}
# unary ops whose torch implementation refuses complex inputs with a message of its own
_COMPLEX_REFUSALS: dict[str, tuple[type[Exception], str]] = {
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead."),
    **{name: (NotImplementedError, f"{name} is not supported for complex inputs")
       for name in ("ceil", "floor", "trunc")},
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    **{name: (RuntimeError, f"{name} does not support complex inputs.") for name in ("isposinf", "isneginf")},
}
_UNARY_RULES = {**{name: u.rule for name, u in P.UNARY.items()}, "isnan": P.BOOL, "logical_not": P.LOGICAL}


# --- the engines -------------------------------------------------------------------------------------
def _dc(dt: np.dtype) -> Any:
    return dtypes.from_numpy_dtype(dt)


def _check_target(rule: str, name: str, result: np.dtype, shape: tuple, self: Any, out: Any) -> None:
    """TensorIterator's checks on an in-place or ``out=`` target, made before the kernel runs."""
    target = out._data
    if out is self and shape != target.shape:
        raise RuntimeError(f"output with shape {_k._shape_str(target.shape)} doesn't match the broadcast "
                           f"shape {_k._shape_str(shape)}")
    if rule in (P.SAME, P.BOOL):
        P.check_out(rule, name, _dc(result), _dc(target.dtype))
    elif rule != P.LOGICAL:
        _k._check_can_cast(result, target.dtype)


def _unary(name: str, self: Any, out: Any = None, compute: Any = None) -> Any:
    """The general unary kernel: ``name``'s dtype rule, checks, computation and store."""
    fn, kernel, kinds = UNARY[name]
    fn = compute or fn
    rule = _UNARY_RULES[name]
    a = self._data
    result = P.unary_result_dtype(rule, _dc(a.dtype), dtypes.get_default_dtype()).np
    work = result if rule == P.FLOAT else a.dtype  # the dtype the kernel computes in
    if out is not None:
        _check_target(rule, name, result, a.shape, self, out)
    if work.kind == "c" and name in _COMPLEX_REFUSALS:  # torch's own words, before its dtype dispatch
        error, message = _COMPLEX_REFUSALS[name]
        raise error(message)
    if work.kind not in kinds:
        raise _k._not_implemented(kernel, work)
    with _k.quiet():
        r = _opmath(fn)(_k._cast(a, work)) if work.kind == "f" else fn(a)
        return _k._store(np.asarray(r).astype(result, copy=False), result, a.shape, self, out, arrays=(a,))


def _binary(name: str, self: Any, other: Any, out: Any = None) -> Any:
    """The general binary kernel: promotion, the rule's result dtype, checks, computation and store."""
    fn, kernel, kinds = BINARY[name]
    rule = P.BINARY[name].rule
    with _k.quiet():
        x, y = _k._operand(self), _k._operand(other)
        common = _k._result_np(self if isinstance(x, _nd) else x, other if isinstance(y, _nd) else y)
        result = P.binary_result_dtype(rule, _dc(common), dtypes.get_default_dtype()).np
        work = result if rule == P.FLOAT else common
        a, b = _k._as_dtype(x, work), _k._as_dtype(y, work)
        shape = _k._broadcast_shapes(a.shape, b.shape)
        if out is not None:
            _check_target(rule, name, result, shape, self, out)
        if work.kind not in kinds:
            raise _k._not_implemented(kernel, work)
        r = _opmath(fn)(a, b) if work.kind == "f" and name != "nextafter" else fn(a, b)
        return _k._store(np.asarray(r).astype(result, copy=False), result, shape, self, out,
                         arrays=[v for v in (x, y) if isinstance(v, _nd)])


def _heaviside(self: Any, values: Any, out: Any = None) -> Any:
    """``self == 0 ? values : self > 0`` in the inputs' one dtype (NaN is neither: 0, as torch's loop)."""
    P.heaviside_check(self, values, out)
    a, v = self._data, values._data
    shape = _k._broadcast_shapes(a.shape, v.shape)
    with _k.quiet():
        r = np.where(a == 0, v, a > 0).astype(a.dtype, copy=False)
    return _k._store(np.asarray(r), a.dtype, shape, self, out, arrays=[a, v])


def _same_dtype(name: str, kernel: str, kinds: str, fn: Callable[..., Any], inputs: tuple, target: Any,
                out: Any = None) -> Any:
    """Activations and their backward ops: one dtype (the inputs' promoted one), out= of exactly it."""
    arrays = [t._data for t in inputs]
    dt = _k._result_np(*inputs)
    shape = _k._broadcast_shapes(*(a.shape for a in arrays))
    if out is not None:
        _check_target(P.SAME, name, dt, shape, target, out)
    if dt.kind not in kinds:
        raise _k._not_implemented(kernel, dt)
    with _k.quiet():
        cast = [_k._cast(a, dt) for a in arrays]
        r = _opmath(fn)(*cast) if dt.kind == "f" else fn(*cast)
        return _k._store(np.asarray(r).astype(dt, copy=False), dt, shape, target, out, arrays=arrays)


# --- kernel generation -----------------------------------------------------------------------------
def _unary_kernels(name: str, inplace: bool) -> dict[str, Callable[..., Any]]:
    def functional(self):
        return _unary(name, self)

    def out_(self, *, out):
        return _unary(name, self, out)

    def inplace_(self):
        return _unary(name, self, self)

    kernels: dict[str, Callable[..., Any]] = {name: functional, f"{name}.out": out_}
    if inplace:
        kernels[f"{name}_"] = inplace_
    return _named(kernels)


def _binary_kernels(name: str, overloads: tuple[str, str | None, str]) -> dict[str, Callable[..., Any]]:
    functional_name, inplace_name, out_name = overloads

    def functional(self, other):
        return _binary(name, self, other)

    def inplace_(self, other):
        return _binary(name, self, other, self)

    def out_(self, other, *, out):
        return _binary(name, self, other, out)

    kernels: dict[str, Callable[..., Any]] = {functional_name: functional, out_name: out_}
    if inplace_name is not None:
        kernels[inplace_name] = inplace_
    if P.BINARY[name].rule == P.LOGICAL:  # torch's logical ops are composites of out=
        kernels = {out_name: out_}
    return _named(kernels)


def _named(kernels: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    for op_name, fn in kernels.items():
        fn.__name__ = fn.__qualname__ = op_name.replace(".", "_") + "_cpu"
    return kernels


# --- the kernels written out: round.decimals, nan_to_num, isnan, shift operators, activations -----------
def _round_decimals(decimals: int) -> Callable[[np.ndarray], np.ndarray]:
    def compute(a: np.ndarray) -> np.ndarray:
        ten = a.dtype.type(10.0 ** abs(decimals))
        return np.rint(a / ten) * ten if decimals < 0 else np.rint(a * ten) / ten
    return compute


def _round_decimals_kernel(self: Any, decimals: int, out: Any = None) -> Any:
    a = self._data
    if out is not None:
        _check_target(P.SAME, "round", a.dtype, a.shape, self, out)
    if a.dtype.kind != "f":
        raise _k._not_implemented("round_cpu", a.dtype)
    return _unary("round", self, out, compute=_round_decimals(decimals))


def nan_to_num_out_cpu(self, nan=None, posinf=None, neginf=None, *, out):
    a, dt = self._data, self._data.dtype
    if out._data.dtype != dt:
        raise RuntimeError(f"nan_to_num: dtype of out: {_k._TORCH_NAME[out._data.dtype]} should be same as input: "
                           f"{_k._TORCH_NAME[dt]}")
    if dt.kind == "f":
        info = np.finfo(dt)
        r = np.nan_to_num(a, nan=0.0 if nan is None else nan, posinf=info.max if posinf is None else posinf,
                          neginf=info.min if neginf is None else neginf)
    else:
        r = a.copy()
    return _k._store(np.asarray(r).astype(dt, copy=False), dt, a.shape, self, out, arrays=(a,))


_GELU_MODES = ("none", "tanh")
_SQRT_2_OVER_PI, _GELU_C = math.sqrt(2.0 / math.pi), 0.044715


def _gelu(approximate: str) -> Callable[[np.ndarray], np.ndarray]:
    if approximate not in _GELU_MODES:
        raise RuntimeError("approximate argument must be either none or tanh.")
    if approximate == "tanh":
        return lambda x: 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x)))
    return lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2.0)))


def _gelu_backward(approximate: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if approximate not in _GELU_MODES:
        raise RuntimeError("approximate argument must be either none or tanh.")
    if approximate == "tanh":
        def tanh_mode(g: np.ndarray, x: np.ndarray) -> np.ndarray:
            t = np.tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x))
            du = _SQRT_2_OVER_PI * (1 + 3 * _GELU_C * x * x)
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du)
        return tanh_mode
    return lambda g, x: g * (0.5 * (1 + _erf(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def _number(value: Any) -> Any:
    return _k._item(value)


def _elu(alpha: Any, scale: Any, input_scale: Any) -> Callable[[np.ndarray], np.ndarray]:
    alpha, scale, input_scale = _number(alpha), _number(scale), _number(input_scale)
    return lambda x: np.where(x > 0, x * scale, np.expm1(x * input_scale) * (alpha * scale))


_INPLACE_ELU = ("In-place elu backward calculation is triggered with a negative slope which is not supported. "
                "This is caused by calling in-place forward function with a negative slope, please call "
                "out-of-place version instead.")
_INPLACE_LEAKY = ("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                  "supported. This is caused by calling in-place forward function with a negative slope, please "
                  "call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you "
                  "do require supporting in-place leakRelu backward calculation with negative slope")


def _elu_backward(alpha: Any, scale: Any, input_scale: Any, is_result: bool) -> Callable[..., np.ndarray]:
    alpha, scale, input_scale = _number(alpha), _number(scale), _number(input_scale)
    if is_result and alpha < 0:
        raise RuntimeError(_INPLACE_ELU)
    if is_result:  # the saved value is the output: out = alpha*scale*(exp(x*input_scale) - 1) where x <= 0
        return lambda g, y: np.where(y <= 0, g * input_scale * (y + alpha * scale), g * scale)
    return lambda g, x: np.where(x <= 0, g * input_scale * alpha * scale * np.exp(x * input_scale), g * scale)


def _hardtanh(min_val: Any, max_val: Any) -> Callable[[np.ndarray], np.ndarray]:
    lo, hi = _number(min_val), _number(max_val)

    def compute(a: np.ndarray) -> np.ndarray:
        if a.dtype.kind in _INTS:  # integer inputs: float bounds clamp, then truncate back (torch's clamp_out)
            return np.minimum(hi, np.maximum(lo, a.astype(np.float64))).astype(a.dtype)
        if a.dtype == np.float16:  # numpy's half maximum drops -0.0's sign: compare in float
            return np.minimum(hi, np.maximum(lo, a.astype(np.float32))).astype(np.float16)
        # the bounds first: a tie keeps x (``hardtanh(-0.0)`` is -0.0), and NaN propagates, as torch's clamp
        return np.minimum(hi, np.maximum(lo, a))
    return compute


def _leaky_relu(slope: Any) -> Callable[[np.ndarray], np.ndarray]:
    slope = _number(slope)
    return lambda x: np.where(x > 0, x, x * slope)


def _elu_kernel(self: Any, alpha: Any, scale: Any, input_scale: Any, target: Any, out: Any = None) -> Any:
    return _same_dtype("elu", "elu_cpu", _FLOATS, _elu(alpha, scale, input_scale), (self,), target, out)


def _gelu_kernel(self: Any, approximate: str, target: Any, out: Any = None) -> Any:
    return _same_dtype("gelu", "GeluKernelImpl", _FLOATS, _gelu(approximate), (self,), target, out)


def _hardtanh_kernel(self: Any, min_val: Any, max_val: Any, target: Any, out: Any = None) -> Any:
    dt = self._data.dtype
    if dt is _BOOL:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    # torch's hardtanh_out: integral limits are taken as int64 (``toLong``), then it is clamp, which
    # converts them to the tensor's type with checked_convert
    if dt.kind in "iu":
        min_val = int(_k._checked_number(_k._item(min_val), _k._I64))
        max_val = int(_k._checked_number(_k._item(max_val), _k._I64))
        if dt.kind == "u" and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    _k._checked_number(_k._item(min_val), dt)
    _k._checked_number(_k._item(max_val), dt)
    return _same_dtype("hardtanh", "hardtanh_cpu", "iuf", _hardtanh(min_val, max_val), (self,), target, out)


def _leaky_relu_kernel(self: Any, negative_slope: Any, target: Any, out: Any = None) -> Any:
    return _same_dtype("leaky_relu", "leaky_relu_cpu", _FLOATS, _leaky_relu(negative_slope), (self,), target, out)


def elu_cpu(self, alpha=1, scale=1, input_scale=1):
    return _elu_kernel(self, alpha, scale, input_scale, self)


def elu__cpu(self, alpha=1, scale=1, input_scale=1):
    return _elu_kernel(self, alpha, scale, input_scale, self, self)


def elu_out_cpu(self, alpha=1, scale=1, input_scale=1, *, out):
    return _elu_kernel(self, alpha, scale, input_scale, self, out)


def elu_backward_cpu(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    return elu_backward_grad_input_cpu(grad_output, alpha, scale, input_scale, is_result, self_or_result,
                                       grad_input=None)


def elu_backward_grad_input_cpu(grad_output, alpha, scale, input_scale, is_result, self_or_result, *, grad_input):
    fn = _elu_backward(alpha, scale, input_scale, is_result)
    return _same_dtype("elu_backward", "elu_backward_cpu", _FLOATS, fn, (grad_output, self_or_result), grad_output,
                       grad_input)


def gelu_cpu(self, *, approximate="none"):
    return _gelu_kernel(self, approximate, self)


def gelu__cpu(self, *, approximate="none"):
    return _gelu_kernel(self, approximate, self, self)


def gelu_out_cpu(self, *, approximate="none", out):
    return _gelu_kernel(self, approximate, self, out)


def gelu_backward_cpu(grad_output, self, *, approximate="none"):
    return gelu_backward_grad_input_cpu(grad_output, self, approximate=approximate, grad_input=None)


def gelu_backward_grad_input_cpu(grad_output, self, *, approximate="none", grad_input):
    return _same_dtype("gelu_backward", "GeluBackwardKernelImpl", _FLOATS, _gelu_backward(approximate),
                       (grad_output, self), grad_output, grad_input)


def hardtanh_cpu(self, min_val=-1, max_val=1):
    r = _hardtanh_kernel(self, min_val, max_val, self)
    a = self._data
    if a.size == 0:  # not structured: torch allocates empty_like(self), which keeps an empty input's strides
        return wrap_cpu(_k._empty_strided(a.shape, tuple(s // a.itemsize for s in a.strides), a.dtype))
    return r


def hardtanh__cpu(self, min_val=-1, max_val=1):
    return _hardtanh_kernel(self, min_val, max_val, self, self)


def hardtanh_out_cpu(self, min_val=-1, max_val=1, *, out):
    return _hardtanh_kernel(self, min_val, max_val, self, out)


def hardtanh_backward_cpu(grad_output, self, min_val, max_val):
    return hardtanh_backward_grad_input_cpu(grad_output, self, min_val, max_val, grad_input=None)


def hardtanh_backward_grad_input_cpu(grad_output, self, min_val, max_val, *, grad_input):
    lo, hi = _number(min_val), _number(max_val)
    return _same_dtype("hardtanh_backward", "hardtanh_backward_cpu", "iuf",
                       lambda g, x: np.where((x > lo) & (x < hi), g, 0), (grad_output, self), grad_output, grad_input)


def leaky_relu_cpu(self, negative_slope=0.01):
    return _leaky_relu_kernel(self, negative_slope, self)


def leaky_relu__cpu(self, negative_slope=0.01):
    return _leaky_relu_kernel(self, negative_slope, self, self)


def leaky_relu_out_cpu(self, negative_slope=0.01, *, out):
    return _leaky_relu_kernel(self, negative_slope, self, out)


def leaky_relu_backward_cpu(grad_output, self, negative_slope, self_is_result):
    return leaky_relu_backward_grad_input_cpu(grad_output, self, negative_slope, self_is_result, grad_input=None)


def leaky_relu_backward_grad_input_cpu(grad_output, self, negative_slope, self_is_result, *, grad_input):
    slope = _number(negative_slope)
    if self_is_result and slope < 0:
        raise RuntimeError(_INPLACE_LEAKY)
    return _same_dtype("leaky_relu_backward", "leaky_relu_backward_cpu", _FLOATS,
                       lambda g, x: np.where(x > 0, g, g * slope), (grad_output, self), grad_output, grad_input)


def _activation_kernels() -> dict[str, Callable[..., Any]]:
    found = {}
    for name in P.ACTIVATIONS:
        for suffix, overload in (("", ""), ("_", "_"), ("_out", ".out"), ("_backward", "_backward"),
                                 ("_backward_grad_input", "_backward.grad_input")):
            found[name + overload] = globals()[f"{name}{suffix}_cpu"]
    return found


# --- tanh_backward, sigmoid_backward: structured binary ops (BinaryOps.cpp), floating only ----------------
def _tanh_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``tanh_backward_kernel``: ``a * ((1 - b) * (1 + b))``, in this order (bit for bit torch's CPU kernel)."""
    return g * ((1 - y) * (1 + y))


def _sigmoid_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``sigmoid_backward_kernel``: ``a * (1 - b) * b``."""
    return g * (1 - y) * y


_UNARY_BACKWARD = {"tanh_backward": _tanh_backward, "sigmoid_backward": _sigmoid_backward}
_ONE = {_F32: np.ones((), _F32), _F64: np.ones((), _F64)}


def _fast_operands(grad_output: Any, output: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(g, y, 1) for the common case, one float dtype, one shape, contiguous; else None."""
    x, y = grad_output._data, output._data
    if x.dtype is y.dtype and (x.dtype is _F32 or x.dtype is _F64) and x.shape == y.shape and x.ndim \
            and x.flags.c_contiguous and y.flags.c_contiguous:
        return x, y, _ONE[x.dtype]
    return None


def tanh_backward_cpu(grad_output, output):
    fast = _fast_operands(grad_output, output)
    if fast is None:
        return _unary_backward("tanh_backward", grad_output, output)
    g, y, one = fast  # every tanh of a network's backward: four ufuncs in place, the kernel's rounding
    with _k.quiet():
        r = np.subtract(one, y)
        r *= np.add(one, y)
        r *= g  # exact: a product rounds the same in either order
    return wrap_cpu(r)


def sigmoid_backward_cpu(grad_output, output):
    fast = _fast_operands(grad_output, output)
    if fast is None:
        return _unary_backward("sigmoid_backward", grad_output, output)
    g, y, one = fast
    with _k.quiet():
        r = np.subtract(one, y)
        r *= g
        r *= y
    return wrap_cpu(r)


def _unary_backward(name: str, grad_output: Any, output: Any, out: Any = None) -> Any:
    """A structured binary op: the promoted dtype, an ``out=`` it can be cast to, floating kernels only."""
    fn = _UNARY_BACKWARD[name]
    x, y = grad_output._data, output._data
    with _k.quiet():
        dt = _k._result_np(grad_output, output)
        shape = _k._broadcast_shapes(x.shape, y.shape)
        if out is not None:
            _check_target(P.COMMON, name, dt, shape, grad_output, out)
        if dt.kind != "f":
            raise _k._not_implemented(f"{name}_cpu", dt)
        r = _opmath(fn)(_k._cast(x, dt), _k._cast(y, dt))
        return _k._store(np.asarray(r).astype(dt, copy=False), dt, shape, grad_output, out, arrays=(x, y))


def _unary_backward_kernels() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {"tanh_backward": tanh_backward_cpu,
                                            "sigmoid_backward": sigmoid_backward_cpu}
    for name in P.UNARY_BACKWARD:
        found[f"{name}.grad_input"] = (lambda grad_output, output, *, grad_input, _n=name:
                                       _unary_backward(_n, grad_output, output, grad_input))
    return _named(found)


# --- ternary ops: addcmul, addcdiv, lerp (PointwiseOpsKernel.cpp, LerpKernel.cpp) -------------------------
def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's product: ``a * b == p + e`` exactly (float64, barring overflow)."""
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    bh = b * split
    bh = bh - (bh - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fused(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``fma(a, b, c)`` in the operands' dtype, as the AVX2 kernels' ``fmadd`` (and the fp-contracted scalar code).

    float32: exact through float64 (the product is exact there, one rounding for the sum and one
    to float32, which cannot differ from the fused result except in rare double-rounding ties).
    float64: Dekker's exact product plus a compensated sum (faithful; rare last-bit ties may differ).
    """
    if a.dtype == _F32:
        return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(_F32)
    if a.dtype != np.float64:
        return a * b + c
    p, e = _two_product(a, b)
    s = p + c
    bp = s - p
    t = (p - (s - bp)) + (c - bp)  # two-sum error of p + c
    r = s + (t + e)
    zero = r == 0
    if zero.any():  # a zero result's sign, as the fma's: +0.0 where a product cancels c; where the
        # product is an exact zero, the signed-zero sum p + c (-0.0 + -0.0 is -0.0); where it
        # underflows to zero, the product's own sign (c is then a zero too)
        r = np.where(zero, np.where(p == 0, np.where((a == 0) | (b == 0), p + c, p), 0.0), r)
    if not np.isfinite(r).all():  # an inf on the way (or a product past 2**996, where Dekker's split
        r = np.where(np.isfinite(r), r, a * b + c)  # overflows): the plain arithmetic gives inf or nan
    return r


def _lerp(start: np.ndarray, end: np.ndarray, weight: Any) -> np.ndarray:
    """``lerp_vec``: ``fmadd(w, end - start, start)`` for ``|w| < 0.5``, else ``fmadd(w - 1, end - start, end)``."""
    w = np.asarray(weight, dtype=start.dtype)
    small = np.abs(w) < 0.5
    coeff = np.where(small, w, w - np.asarray(1, start.dtype)).astype(start.dtype)
    base = np.where(small, start, end).astype(start.dtype)
    return _fused(coeff, end - start, base)


def _ternary_inplace_fast(name: str, self: Any, first: Any, second: Any, value: Any) -> Any:
    """The optimizers' call (``exp_avg_sq.addcmul_(g, g, value=v)``), same results as ``_ternary``; None: not it.

    Every operand a float32/float64 tensor of ``self``'s dtype and shape (``lerp``'s weight may be
    a Python number), ``self`` neither 0-d nor expanded: no promotion, broadcast or cast check can fail, so
    the kernel writes straight into ``self`` with a handful of numpy calls. float32's fused
    multiply-add is one float64 product and sum (exact product) rounded once to float32, as
    ``_fused`` computes it; float64's goes through ``_fused``.
    """
    dst = self._data
    dt = dst.dtype
    if (dt != _F32 and dt != _F64) or not dst.ndim or 0 in dst.strides or not isinstance(first, Tensor):
        return None
    if name != "lerp" or not isinstance(second, Tensor):
        _k._checked_number(_k._item(value if name != "lerp" else second), dt)  # See _ternary
    y = first._data
    if y.dtype != dt or y.shape != dst.shape:
        return None
    weight = None
    if isinstance(second, Tensor):
        z = second._data
        if z.dtype != dt or z.shape != dst.shape:
            return None
    elif name == "lerp" and (type(second) is float or type(second) is int and -(1 << 63) <= second < (1 << 63)):
        z, weight = None, second
    else:
        return None
    if name != "lerp" and type(value) is not float and type(value) is not int:
        return None
    with _k.quiet():
        if name == "lerp":
            if weight is None:
                r = _lerp(dst, y, z)
            else:  # lerp_vec with a scalar weight: the branch is decided once
                w = dt.type(weight)
                small = abs(w) < 0.5
                coeff, base = (w, dst) if small else (w - dt.type(1), y)
                diff = y - dst
                if dt == _F32:
                    r = diff.astype(np.float64)
                    r *= float(coeff)
                    r += base.astype(np.float64)
                else:
                    r = _fused(np.asarray(coeff, dt), diff, base)
        else:
            v = np.array(value, dt) if type(value) is float else _k._scalar_array(value, dt)
            t = np.multiply(y, v)
            if name == "addcdiv":  # not fused: self + (value * tensor1) / tensor2
                np.divide(t, z, out=t)
                np.add(dst, t, out=dst)
                return self
            if dt == _F32:  # fma(value * tensor1, tensor2, self); same-dtype ufuncs skip numpy's casting loops
                r = t.astype(np.float64)
                r *= z.astype(np.float64)
                r += dst.astype(np.float64)
            else:
                r = _fused(t, z, dst)
        dst[...] = r  # rounded once to float32 (an unsafe cast, as copyto's)
    return self


def _ternary(name: str, self: Any, first: Any, second: Any, value: Any = None, out: Any = None) -> Any:
    """addcmul/addcdiv (``value`` the Scalar) and lerp (``second`` the weight, a Tensor or a Python number)."""
    if out is self:
        done = _ternary_inplace_fast(name, self, first, second, value)
        if done is not None:
            return done
    tensors = [t for t in (self, first, second) if isinstance(t, Tensor)]
    arrays = [t._data for t in tensors]
    P.ternary_check(name, self, first, second)
    dt = _k._result_np(*tensors)
    shape = _k._broadcast_shapes(*(a.shape for a in arrays))
    if out is not None:
        _check_target(P.COMMON, name, dt, shape, self, out)
    kinds = _FLOATS if name == "lerp" else _ALL
    if dt.kind not in kinds or (dt.kind == "b" and name != "lerp"):
        which = ("lerp_kernel_tensor" if isinstance(second, Tensor) else "lerp_kernel_scalar") if name == "lerp" \
            else f"{name}_cpu_out"
        raise _k._not_implemented(which, dt)
    work = _F32 if dt == _F16 else dt  # half computes in float (opmath)
    if name != "lerp" or not isinstance(second, Tensor):  # the kernel's ``value.to<opmath_t>()``: checked
        _k._checked_number(_k._item(value if name != "lerp" else second), work)
    with _k.quiet():
        x, y = _k._cast(self._data, work), _k._cast(first._data, work)
        if name == "lerp":
            w = _k._cast(second._data, work) if isinstance(second, Tensor) else _k._scalar_array(_k._item(second), work)
            r = _lerp(x, y, w)
        else:
            z = _k._cast(second._data, work)
            v = _k._scalar_array(_k._item(value), work)
            # addcmul is fma(value * tensor1, tensor2, self) in torch's compiled kernel; addcdiv is not fused
            r = _fused(v * y, z, x) if name == "addcmul" else x + v * y / z
        return _k._store(np.asarray(r).astype(dt, copy=False), dt, shape, self, out, arrays=arrays)


def _ternary_kernels() -> dict[str, Callable[..., Any]]:
    def addc(name: str) -> dict[str, Callable[..., Any]]:
        return {name: lambda self, tensor1, tensor2, *, value=1: _ternary(name, self, tensor1, tensor2, value),
                f"{name}_": lambda self, tensor1, tensor2, *, value=1: _ternary(name, self, tensor1, tensor2, value,
                                                                                self),
                f"{name}.out": lambda self, tensor1, tensor2, *, value=1, out: _ternary(name, self, tensor1, tensor2,
                                                                                        value, out)}

    found = {**addc("addcmul"), **addc("addcdiv")}
    for kind in ("Scalar", "Tensor"):
        found.update({
            f"lerp.{kind}": lambda self, end, weight: _ternary("lerp", self, end, weight),
            f"lerp_.{kind}": lambda self, end, weight: _ternary("lerp", self, end, weight, out=self),
            f"lerp.{kind}_out": lambda self, end, weight, *, out: _ternary("lerp", self, end, weight, out=out)})
    return _named(found)


def _kernels() -> dict[str, Callable[..., Any]]:
    kernels: dict[str, Callable[..., Any]] = {}
    for name, u in P.UNARY.items():
        kernels.update(_unary_kernels(name, u.inplace))
    kernels.update(_named({
        "isnan": lambda self: _unary("isnan", self),
        "logical_not.out": lambda self, *, out: _unary("logical_not", self, out),
        "round.decimals": lambda self, *, decimals: _round_decimals_kernel(self, decimals),
        "round_.decimals": lambda self, *, decimals: _round_decimals_kernel(self, decimals, self),
        "round.decimals_out": lambda self, *, decimals, out: _round_decimals_kernel(self, decimals, out),
        "remainder.Scalar_Tensor": lambda self, other: _binary("remainder", _k._item(self), other),
    }))
    kernels["nan_to_num.out"] = nan_to_num_out_cpu
    kernels.update(_named({"heaviside": lambda self, values: _heaviside(self, values),
                           "heaviside_": lambda self, values: _heaviside(self, values, self),
                           "heaviside.out": lambda self, values, *, out: _heaviside(self, values, out)}))
    for name, b in P.BINARY.items():
        kernels.update(_binary_kernels(name, b.tensor))
    for dunder, target in P.SHIFT_DUNDERS.items():
        short = dunder[2:]
        kernels.update(_named({
            f"{dunder}.Tensor": lambda self, other, _t=target: _binary(_t, self, other),
            f"{dunder}.Scalar": lambda self, other, _t=target: _binary(_t, self, _k._item(other)),
            f"__i{short}.Tensor": lambda self, other, _t=target: _binary(_t, self, other, self),
            f"__i{short}.Scalar": lambda self, other, _t=target: _binary(_t, self, _k._item(other), self),
        }))
    kernels.update(_activation_kernels())
    kernels.update(_unary_backward_kernels())
    kernels.update(_ternary_kernels())
    kernels["equal"] = equal_cpu
    return kernels


def equal_cpu(self, other):
    """``cpu_equal``: the same device, the same size, then every element equal in the promoted dtype (NaN is not)."""
    if self.device != other.device:
        raise RuntimeError(f"Cannot compare two tensors on different devices. Got: {self.device} and {other.device}")
    a, b = self._data, other._data
    if a.shape != b.shape:
        return False
    common = _k._result_np(self, other)
    with _k.quiet():
        return bool(np.array_equal(a.astype(common, copy=False), b.astype(common, copy=False)))


KERNELS = _kernels()
