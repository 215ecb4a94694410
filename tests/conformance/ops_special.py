"""Conformance entries of the special family: ``xlogy`` (its Tensor and Scalar overloads) and ``logit``.

Samples keep the differentiated entries in the functions' smooth domains (``self`` >= 0, ``other`` > 0;
``logit`` inside (0, 1)) and put the special values (0, NaN, infinities, the clamp's bounds) in
entries of their own, which compare values only; integer and bool inputs compute in the default
float, and an in-place form on them fails as torch's does.
"""

from __future__ import annotations

import numpy as np

from tests.conformance.framework import OpInfo, Sample, make

_FLOATS = ("float32", "float64")
_DTYPES = ("float32", "float64", "int64", "bool")


def _range(dtype: str, low: float, high: float) -> tuple[float | None, float | None]:
    """A floating range, or the default one for integers and bools (whose draws it would empty)."""
    return (low, high) if np.dtype(dtype).kind == "f" else (None, None)


def _xlogy(rng, dtype):
    x, y = _range(dtype, 0.0, 3.0), _range(dtype, 0.1, 3.0)
    yield Sample(make((3, 4), dtype, rng, *x), args=(make((3, 4), dtype, rng, *y),), name="same-shape")
    yield Sample(make((3, 1), dtype, rng, *x), args=(make((4,), dtype, rng, *y),), name="broadcast")
    yield Sample(make((2, 3, 4), dtype, rng, *x, noncontig=True), args=(make((2, 3, 4), dtype, rng, *y,
                                                                              noncontig=True),), name="noncontig")
    yield Sample(make((), dtype, rng, *x), args=(make((), dtype, rng, *y),), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), kwargs={"other": make((3,), dtype, rng, *y)}, name="empty-keyword")
    yield Sample(make((3,), dtype, rng, *x), args=(make((3,), "int64", rng, 1, 4),), name="mixed-dtypes")
    yield Sample(make((3, 4), dtype, rng, *x), args=(2.5,), name="float-scalar")
    yield Sample(make((3, 4), dtype, rng, *x, noncontig=True), args=(-2,), name="negative-int-scalar")


def _xlogy_scalar_self(rng, dtype):
    y = _range(dtype, 0.1, 3.0)
    yield Sample(1.5, args=(make((3, 4), dtype, rng, *y),), name="float")
    yield Sample(0, args=(make((2, 3), dtype, rng, *y, noncontig=True),), name="zero")
    yield Sample(-2, args=(make((), dtype, rng, *y),), name="zero-d")


def _xlogy_special(rng, dtype):
    x = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0, np.nan, -1.0], dtype)
    y = np.array([0.0, -1.0, np.nan, np.inf, 0.0, np.inf, 1.0, 2.0], dtype)
    yield Sample(x, args=(y,), name="values")
    yield Sample(x, args=(0.0,), name="zero-scalar")
    yield Sample(0.0, args=(y,), name="zero-self")


def _logit(rng, dtype):
    x = _range(dtype, 0.05, 0.95)
    yield Sample(make((3, 4), dtype, rng, *x), name="matrix")
    yield Sample(make((2, 3, 4), dtype, rng, *x, noncontig=True), args=(0.2,), name="noncontig-eps")
    yield Sample(make((3,), dtype, rng, *x), kwargs={"eps": 0.0}, name="eps-zero")
    yield Sample(make((), dtype, rng, *x), kwargs={"eps": 0.1}, name="zero-d-keyword")
    yield Sample(make((0, 3), dtype, rng), name="empty")


def _logit_special(rng, dtype):
    x = np.array([0.0, 1.0, -0.5, 1.5, np.nan, 0.5, 0.05, 0.95], dtype)
    yield Sample(x, name="no-eps")
    yield Sample(x, args=(0.1,), name="eps")
    yield Sample(x, args=(-1.0,), name="negative-eps")
    yield Sample(x, args=(0.5,), name="eps-half")


def _logit_backward(rng, dtype):
    floating = np.dtype(dtype).kind == "f"
    x = np.array([0.0, 1.0, -0.5, 1.5, np.nan, 0.5, 0.05, 0.95, 0.3] if floating else [0, 1, -1, 2, 0, 1, 0, 1, 2],
                 dtype)
    grad = make((9,), dtype, rng)
    yield Sample(grad, args=(x,), name="no-eps")
    yield Sample(grad, args=(x, 0.1), name="eps")
    yield Sample(grad, args=(x,), kwargs={"eps": 0.0}, name="eps-zero")
    yield Sample(make((3, 1), dtype, rng), args=(make((4,), dtype, rng, *_range(dtype, 0.05, 0.95)),),
                 name="broadcast")
    other = "float32" if dtype == "float64" else "float64"
    yield Sample(make((3,), dtype, rng), args=(make((3,), other, rng, 0, 1),), name="mixed-dtypes")


OPS = [
    OpInfo("xlogy", call="xlogy", samples=_xlogy, dtypes=_DTYPES, aten=("xlogy.Tensor", "xlogy.Scalar_Other"),
           grad=True, gradgrad=True, grad_args=(0, 1), method_variant="Tensor.xlogy", inplace_variant="Tensor.xlogy_",
           supports_out=True),
    OpInfo("xlogy.Scalar_Self", call="xlogy", samples=_xlogy_scalar_self, dtypes=_DTYPES, aten=("xlogy.Scalar_Self",),
           grad=True, gradgrad=True, grad_args=(1,), supports_out=True),
    OpInfo("xlogy-special", call="xlogy", samples=_xlogy_special, dtypes=_FLOATS),
    OpInfo("logit", call="logit", samples=_logit, dtypes=_DTYPES, aten=("logit", "logit_", "logit.out"), grad=True,
           gradgrad=True, method_variant="Tensor.logit", inplace_variant="Tensor.logit_", supports_out=True),
    OpInfo("logit-special", call="logit", samples=_logit_special, dtypes=_FLOATS, method_variant="Tensor.logit",
           supports_out=True),
    OpInfo("logit_backward", call="ops.aten.logit_backward.default", samples=_logit_backward,
           dtypes=("float32", "float64", "int64"), aten=("logit_backward",)),
]
