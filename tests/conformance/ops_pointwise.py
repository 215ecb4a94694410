"""OpInfo entries of the pointwise family (``dispatchcore.native.pointwise``).

Unary math, rounding and predicates, bitwise/logical and binary math (with their Python operators),
and the activations with their backward ops, over 0-d, empty, non-contiguous and broadcast shapes,
scalar operands and keyword forms. Generated from the family's own tables, one entry per operator.
"""

from __future__ import annotations

import numpy as np

from dispatchcore.native import pointwise as P
from tests.conformance.framework import OpInfo, Sample, make

FLOATS = ("float32", "float64")
ALL = ("float32", "float64", "int32", "int64", "bool")
INTEGRAL = ("int32", "int64", "bool", "uint8")
_DOMAIN = {"acos": (-0.9, 0.9), "asin": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.1, 5.0),
           "log2": (0.1, 5.0), "log10": (0.1, 5.0), "log1p": (-0.9, 5.0), "rsqrt": (0.1, 5.0)}
# step functions and frac: their gradients (zero, or one) are checked in tests/differential
_STEPS = {"frac", "sgn", "sign", "ceil", "floor", "round", "trunc"}


def _unary_samples(name: str):
    low, high = _DOMAIN.get(name, (None, None))

    def samples(rng, dtype):
        lo, hi = (low, high) if np.dtype(dtype).kind == "f" else (None, None)
        yield Sample(make((3, 4), dtype, rng, lo, hi), name="matrix")
        yield Sample(make((2, 3, 4), dtype, rng, lo, hi, noncontig=True), name="noncontig")
        yield Sample(make((), dtype, rng, lo, hi), name="zero-d")
        yield Sample(make((0, 3), dtype, rng, lo, hi), name="empty")

    return samples


def _special(rng, dtype):
    if np.dtype(dtype).kind == "f":
        yield Sample(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5], dtype), name="special")
    else:
        yield Sample(make((7,), dtype, rng), name="values")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((), dtype, rng), name="zero-d")


def _round_decimals(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), kwargs={"decimals": 2}, name="two")
    yield Sample(make((3, 4), dtype, rng, noncontig=True) * 100, kwargs={"decimals": -1}, name="negative")


def _nan_to_num(rng, dtype):
    x = np.array([np.nan, np.inf, -np.inf, 2.5], dtype)
    yield Sample(x, name="defaults")
    yield Sample(x, args=(1.0, 2.0, -3.0), name="values")
    yield Sample(x, kwargs={"posinf": 7.0}, name="keyword")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")


def _binary_samples(name: str, scalar: bool):
    divides = name in ("fmod", "remainder", "floor_divide")

    def other(shape, dtype, rng, noncontig=False):
        y = make(shape, dtype, rng, 1 if divides else None, 9 if divides else None, noncontig=noncontig)
        return y if np.dtype(dtype).kind != "b" or not divides else np.ones(shape, dtype)

    def samples(rng, dtype):
        yield Sample(make((3, 4), dtype, rng), args=(other((3, 4), dtype, rng),), name="same-shape")
        yield Sample(make((3, 1), dtype, rng), args=(other((4,), dtype, rng),), name="broadcast")
        yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(other((2, 3, 4), dtype, rng, True),),
                     name="noncontig")
        yield Sample(make((), dtype, rng), args=(other((), dtype, rng),), name="zero-d")
        yield Sample(make((0, 3), dtype, rng), kwargs={"other": other((3,), dtype, rng)}, name="empty-keyword")
        yield Sample(make((3,), dtype, rng), args=(other((3,), "int64", rng),), name="mixed-dtypes")
        if scalar:
            yield Sample(make((3, 4), dtype, rng), args=(3,), name="int-scalar")

    return samples


def _operator_samples(rng, dtype):
    yield Sample(make((3, 4), dtype, rng, 1, 9), args=(make((4,), dtype, rng, 1, 9),), name="broadcast")
    yield Sample(make((3, 4), dtype, rng, 1, 9, noncontig=True), args=(2,), name="number")
    yield Sample(make((), dtype, rng, 1, 9), args=(make((), dtype, rng, 1, 9),), name="zero-d")


def _shift_samples(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(make((4,), dtype, rng, 0, 8),), name="broadcast")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(3,), name="number")


def _activation_samples(kwargs_list):
    def samples(rng, dtype):
        for i, kwargs in enumerate(kwargs_list):
            yield Sample(make((3, 4), dtype, rng, -3, 3), kwargs=kwargs, name=f"kwargs{i}")
        yield Sample(make((2, 3, 4), dtype, rng, -3, 3, noncontig=True), name="noncontig")
        yield Sample(make((), dtype, rng, -3, 3), name="zero-d")
        yield Sample(make((0, 3), dtype, rng), name="empty")

    return samples


def _activation_backward(name: str, extra: tuple, kwargs: dict):
    def samples(rng, dtype):
        grad = make((3, 4), dtype, rng)
        x = make((3, 4), dtype, rng, -3, 3)
        if name == "elu":
            yield Sample(grad, args=(*extra, x), kwargs=kwargs, name="self")
        else:
            yield Sample(grad, args=(x, *extra), kwargs=kwargs, name="self")

    return samples


_ACTIVATION_KWARGS = {
    "elu": [{}, {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}],
    "gelu": [{}, {"approximate": "tanh"}],
    "hardtanh": [{}, {"min_val": -0.2, "max_val": 0.4}],
    "leaky_relu": [{}, {"negative_slope": 0.2}],
}
_BACKWARD_ARGS = {"elu": ((1.0, 1.0, 1.0, False), {}), "gelu": ((), {"approximate": "tanh"}),
                  "hardtanh": ((-0.5, 0.5), {}), "leaky_relu": ((0.1, False), {})}


def _unary_ops() -> list[OpInfo]:
    ops = []
    for name, u in P.UNARY.items():
        differentiable = u.node is not None and name not in _STEPS
        dtypes = INTEGRAL if name == "bitwise_not" else ALL
        ops.append(OpInfo(name, call=name, samples=_unary_samples(name), dtypes=dtypes,
                          aten=(name, f"{name}.out", *((f"{name}_",) if u.inplace else ())),
                          grad=differentiable,
                          gradgrad=differentiable, method_variant=f"Tensor.{name}",
                          inplace_variant=f"Tensor.{name}_" if u.inplace and name not in ("acosh", "atanh", "asin",
                                                                                         "acos", "log2", "log10",
                                                                                         "rsqrt", "log1p")
                          else None,
                          supports_out=True))
    for name in ("isnan", "isinf", "isfinite", "logical_not"):
        ops.append(OpInfo(name, call=name, samples=_special, dtypes=ALL, aten=(name,),
                          method_variant=f"Tensor.{name}", supports_out=name == "logical_not"))
    ops.append(OpInfo("nan_to_num", call="nan_to_num", samples=_nan_to_num, dtypes=FLOATS,
                      aten=("nan_to_num", "nan_to_num_", "nan_to_num.out"), grad=True, gradgrad=True,
                      method_variant="Tensor.nan_to_num", inplace_variant="Tensor.nan_to_num_", supports_out=True))
    ops.append(OpInfo("round.decimals", call="round", samples=_round_decimals, dtypes=FLOATS,
                      aten=("round.decimals", "round_.decimals", "round.decimals_out"), grad=True,
                      method_variant="Tensor.round", supports_out=True))
    return ops


def _binary_ops() -> list[OpInfo]:
    ops = []
    for name, b in P.BINARY.items():
        scalar = b.scalar is not None or name == "floor_divide"
        dtypes = INTEGRAL if name.startswith("bitwise") else ALL
        smooth = name in ("atan2", "logaddexp", "logaddexp2")
        aten = tuple(n for n in b.tensor if n is not None) + ((f"{name}.{b.scalar}",) if b.scalar else ())
        grad = smooth or name in ("fmod", "remainder", "fmax", "fmin")
        ops.append(OpInfo(name, call=name, samples=_binary_samples(name, scalar), dtypes=dtypes, aten=aten,
                          grad=grad, gradgrad=smooth, grad_args=(0, 1),
                          method_variant=f"Tensor.{name}", supports_out=True,
                          atol=1e-5 if name in ("fmod", "remainder", "floor_divide") else None))
    for dunder, dtypes in (("__and__", INTEGRAL), ("__or__", INTEGRAL), ("__xor__", INTEGRAL),
                           ("__floordiv__", ALL[:4]), ("__mod__", ALL[:4])):
        ops.append(OpInfo(f"Tensor.{dunder}", call=f"Tensor.{dunder}", samples=_operator_samples, dtypes=dtypes))
    for dunder in ("__lshift__", "__rshift__"):
        ops.append(OpInfo(f"Tensor.{dunder}", call=f"Tensor.{dunder}", samples=_shift_samples,
                          dtypes=("int32", "int64", "uint8"), aten=(f"{dunder}.Tensor", f"{dunder}.Scalar")))
    ops.append(OpInfo("Tensor.__invert__", call="Tensor.__invert__", samples=_special, dtypes=INTEGRAL))
    return ops


def _activation_ops() -> list[OpInfo]:
    ops = []
    for name in P.ACTIVATIONS:
        ops.append(OpInfo(name, call=f"ops.aten.{name}.default", samples=_activation_samples(_ACTIVATION_KWARGS[name]),
                          dtypes=FLOATS, aten=(name, f"{name}_", f"{name}.out"), grad=True, gradgrad=True))
        extra, kwargs = _BACKWARD_ARGS[name]
        ops.append(OpInfo(f"{name}_backward", call=f"ops.aten.{name}_backward.default",
                          samples=_activation_backward(name, extra, kwargs), dtypes=FLOATS,
                          aten=(f"{name}_backward", f"{name}_backward.grad_input"), grad=True,
                          grad_args=(0,)))
    return ops


def _addc_samples(name: str):
    def samples(rng, dtype):
        positive = name == "addcdiv"  # keep the divisor away from zero
        den = (lambda shape, **kw: make(shape, dtype, rng, 0.5, 2.0, **kw)) if positive else (
            lambda shape, **kw: make(shape, dtype, rng, **kw))
        yield Sample(make((3, 4), dtype, rng), args=(make((3, 4), dtype, rng), den((3, 4))), name="matrix")
        yield Sample(make((3, 4), dtype, rng), args=(make((4,), dtype, rng), den((3, 1))),
                     kwargs={"value": 0.5}, name="broadcast-value")
        strided = make((2, 3), dtype, rng, noncontig=True)
        yield Sample(make((2, 3), dtype, rng, noncontig=True), args=(strided, den((2, 3))), kwargs={"value": -2},
                     name="noncontig")
        yield Sample(make((), dtype, rng), args=(make((), dtype, rng), den(())), name="zero-d")
        yield Sample(make((37,), dtype, rng), args=(make((37,), dtype, rng), den((37,))), kwargs={"value": -0.3},
                     name="long")  # past one AVX2 block: torch's fused multiply-add, bit for bit

    return samples


def _addcdiv_integer(rng, dtype):
    x = make((3,), dtype, rng)
    yield Sample(x, args=(np.array([1, 2, 3]), np.array([1, 1, 2])), name="error-integer-division")


def _lerp_samples(weight_tensor: bool):
    def samples(rng, dtype):
        for w, tag in ((0.25, "small"), (0.75, "large")):
            weight = make((3, 4), dtype, rng, 0.0, 1.0) if weight_tensor else w
            yield Sample(make((3, 4), dtype, rng), args=(make((3, 4), dtype, rng), weight), name=f"matrix-{tag}")
        weight = make((37,), dtype, rng, -1.0, 2.0) if weight_tensor else 0.1
        yield Sample(make((37,), dtype, rng), args=(make((37,), dtype, rng), weight), name="long")
        weight = make((4,), dtype, rng) if weight_tensor else 0.3
        yield Sample(make((2, 4), dtype, rng, noncontig=True), args=(make((4,), dtype, rng), weight),
                     name="broadcast")
        other = "float64" if dtype == "float32" else "float32"
        yield Sample(make((3,), dtype, rng), args=(make((3,), other, rng), weight if not weight_tensor
                                                   else make((3,), dtype, rng)), name="error-end-dtype")

    return samples


def _ternary_ops() -> list[OpInfo]:
    ops = []
    for name in ("addcmul", "addcdiv"):
        ops.append(OpInfo(name, call=name, samples=_addc_samples(name), dtypes=FLOATS,
                          aten=(name, f"{name}_", f"{name}.out"), grad=True, gradgrad=True, grad_args=(0, 1, 2),
                          method_variant=f"Tensor.{name}", inplace_variant=f"Tensor.{name}_", supports_out=True))
    ops.append(OpInfo("addcdiv-integer", call="addcdiv", samples=_addcdiv_integer, dtypes=("int64",),
                      aten=()))
    for kind in ("Scalar", "Tensor"):
        ops.append(OpInfo(f"lerp.{kind}", call="lerp", samples=_lerp_samples(kind == "Tensor"), dtypes=FLOATS,
                          aten=(f"lerp.{kind}", f"lerp_.{kind}", f"lerp.{kind}_out"), grad=True, gradgrad=True,
                          grad_args=(0, 1, 2) if kind == "Tensor" else (0, 1), method_variant="Tensor.lerp",
                          inplace_variant="Tensor.lerp_", supports_out=True))
    return ops


OPS = [*_unary_ops(), *_binary_ops(), *_activation_ops(), *_ternary_ops()]
