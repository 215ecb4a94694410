"""Conformance entries for the operators dispatchcore defines in ``dispatchcore/aten.py`` (the core set).

Arithmetic and comparisons, the unary functions, clamp, where, the reductions sum/mean/amax/max/
argmax, mm/bmm/matmul, softmax and the losses, cat/stack/clone/contiguous, the views (basic
indexing included) and the factories; the families' entries live in ``ops_<family>.py``. Public
functions are called the way users call them; an aten overload that no Python binding reaches
directly (``add.Scalar``, ``_softmax``, ``alias``, ...) gets an entry calling ``ops.aten.<name>.<overload>``.
See ``framework.py`` for the format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tests.conformance.framework import OpInfo, Sample, TorchDtype, make

ALL = ("float32", "float64", "int64", "bool")
NUMERIC = ("float32", "float64", "int64")
FLOAT = ("float32", "float64")
SampleFn = Callable[[np.random.Generator, np.dtype], Iterator[Sample]]


def _other_dtype(dtype: np.dtype) -> np.dtype:
    """A second dtype for promotion samples: int64 for floating, float32 otherwise."""
    return np.dtype(np.int64) if dtype.kind == "f" else np.dtype(np.float32)


# --- pointwise ---------------------------------------------------------------------------------
def _binary(low: float | None = None, high: float | None = None, scalar: float = 2.5, **kwargs: Any) -> SampleFn:
    """Two-tensor samples: same shape, broadcasting, non-contiguous, 0-d, empty, promotion, errors."""

    def samples(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
        def m(shape: tuple[int, ...], noncontig: bool = False, dt: np.dtype = dtype) -> np.ndarray:
            return make(shape, dt, rng, low, high, noncontig=noncontig)

        yield Sample(m((2, 3)), args=(m((2, 3)),), kwargs=kwargs, name="same-shape")
        yield Sample(m((2, 3)), args=(m((3,)),), kwargs=kwargs, name="broadcast")
        yield Sample(m((2, 1)), args=(m((1, 3)),), kwargs=kwargs, name="broadcast-both")
        yield Sample(m((2, 3), True), args=(m((2, 3), True),), kwargs=kwargs, name="noncontig")
        yield Sample(m(()), args=(m((2, 3)),), kwargs=kwargs, name="zero-d-self")
        yield Sample(m((2, 3)), args=(m(()),), kwargs=kwargs, name="zero-d-other")
        yield Sample(m((0, 3)), args=(m((3,)),), kwargs=kwargs, name="empty")
        yield Sample(m((2, 3)), args=(m((2, 3), dt=_other_dtype(dtype)),), kwargs=kwargs, name="promotion")
        yield Sample(m((2, 3)), args=(scalar,), kwargs=kwargs, name="python-scalar")
        yield Sample(m((2, 3)), args=(m((3, 2)),), kwargs=kwargs, name="error-shape")

    return samples


def _scalar_overload(scalar: float = 2.5, low: float | None = None, **kwargs: Any) -> SampleFn:
    """Samples for an ``.Scalar`` aten overload: a tensor and a Python number."""

    def samples(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
        yield Sample(make((2, 3), dtype, rng, low), args=(scalar,), kwargs=kwargs, name="float-scalar")
        yield Sample(make((2, 3), dtype, rng, low), args=(3,), kwargs=kwargs, name="int-scalar")
        yield Sample(make((), dtype, rng, low), args=(True,), kwargs=kwargs, name="zero-d-bool-scalar")
        yield Sample(make((3, 4), dtype, rng, low, noncontig=True), args=(scalar,), kwargs=kwargs, name="noncontig")

    return samples


def _unary(low: float | None = None, high: float | None = None) -> SampleFn:
    def samples(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
        yield Sample(make((2, 3), dtype, rng, low, high), name="2d")
        yield Sample(make((), dtype, rng, low, high), name="zero-d")
        yield Sample(make((0, 3), dtype, rng, low, high), name="empty")
        yield Sample(make((3, 4), dtype, rng, low, high, noncontig=True), name="noncontig")

    return samples


def _unary_wide(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    """Values on both sides of the domain (nan for log/sqrt of negatives), plus special values."""
    yield from _unary()(rng, dtype)
    if dtype.kind == "f":
        yield Sample(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30], dtype=dtype), name="special")


def _unary_entries(name: str, samples: SampleFn, gradgrad: bool, dtypes: tuple[str, ...] = (*NUMERIC, "bool"),
                   out: bool = True) -> OpInfo:
    """An entry for a unary function with its method, in-place method and ``out=`` forms."""
    return OpInfo(name, call=name, samples=samples, dtypes=dtypes, aten=(name,), grad=True, gradgrad=gradgrad,
                  method_variant=f"Tensor.{name}", inplace_variant=f"Tensor.{name}_", supports_out=out)


def _positive_then_wide(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    """Positive inputs (smooth domain for gradients), then the special values."""
    yield from _unary(low=0.5, high=4)(rng, dtype)
    if dtype.kind == "f":
        yield Sample(np.array([0.0, -1.0, np.inf, -np.inf, np.nan, 4.0], dtype=dtype), name="special")


def _where(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    def cond(shape: tuple[int, ...]) -> np.ndarray:
        return make(shape, np.bool_, rng)

    yield Sample(cond((2, 3)), args=(make((2, 3), dtype, rng), make((2, 3), dtype, rng)), name="same-shape")
    yield Sample(cond((2, 1)), args=(make((3,), dtype, rng), make((2, 3), dtype, rng)), name="broadcast")
    yield Sample(cond((3, 4)), args=(make((3, 4), dtype, rng, noncontig=True), make((), dtype, rng)),
                 name="noncontig-zero-d")
    yield Sample(cond((0, 3)), args=(make((0, 3), dtype, rng), make((3,), dtype, rng)), name="empty")
    yield Sample(cond((2, 3)), args=(make((2, 3), dtype, rng), make((2, 3), _other_dtype(dtype), rng)),
                 name="promotion")
    yield Sample(cond((2, 3)), args=(make((2, 3), dtype, rng), 0.5), name="python-scalar-other")
    yield Sample(make((2, 3), np.int64, rng), args=(make((2, 3), dtype, rng), make((2, 3), dtype, rng)),
                 name="error-int-condition")


def _clamp(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(-2, 3), name="both")
    yield Sample(make((2, 3), dtype, rng), kwargs={"min": -1.5}, name="min-kw")
    yield Sample(make((2, 3), dtype, rng), kwargs={"max": 2}, name="max-kw")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(3, -3), name="noncontig-min-above-max")
    yield Sample(make((), dtype, rng), args=(0, 1), name="zero-d")
    yield Sample(make((2, 3), dtype, rng), name="error-no-bounds")


def _clamp_tensor(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng, high=0), make((3,), dtype, rng, low=1)),
                 name="broadcast")
    yield Sample(make((2, 3), dtype, rng), kwargs={"min": make((2, 1), dtype, rng)}, name="min-only")
    yield Sample(make((2, 3), dtype, rng), kwargs={"max": make((), dtype, rng)}, name="max-zero-d")
    yield Sample(make((3, 4), dtype, rng, noncontig=True),
                 kwargs={"min": make((4,), dtype, rng, high=0), "max": make((3, 1), dtype, rng, low=0)},
                 name="noncontig")


def _clamp_min(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(0.5,), name="float")
    yield Sample(make((2, 3), dtype, rng), args=(-1,), name="int")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(1,), name="noncontig")
    yield Sample(make((), dtype, rng), args=(2,), name="zero-d")


def _clamp_min_tensor(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng),), name="same-shape")
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), dtype, rng),), name="broadcast")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((), dtype, rng),), name="noncontig-zero-d")


def _pow(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    if dtype.kind == "f":
        yield Sample(make((2, 3), dtype, rng, 0.5, 3), args=(make((2, 3), dtype, rng, -2, 2),), name="same-shape")
        yield Sample(make((2, 3), dtype, rng, 0.5, 3), args=(make((3,), dtype, rng, -2, 2),), name="broadcast")
        yield Sample(make((3, 4), dtype, rng, 0.5, 3, noncontig=True), args=(make((), dtype, rng, 0, 2),),
                     name="noncontig-zero-d")
        yield Sample(make((2, 3), dtype, rng, 0.5, 3), args=(2.5,), name="float-exponent")
        yield Sample(make((2, 3), dtype, rng, 0.5, 3), kwargs={"exponent": 2}, name="int-exponent-kw")
        yield Sample(np.array([-2.0, 0.0, 4.0], dtype=dtype), args=(0.5,), name="negative-base")
    else:
        yield Sample(make((2, 3), dtype, rng, 0, 5), args=(make((2, 3), dtype, rng, 0, 4),), name="same-shape")
        yield Sample(make((2, 3), dtype, rng, 0, 5), args=(2,), name="int-exponent")
        yield Sample(make((2, 3), dtype, rng, 0, 5), args=(0.5,), name="float-exponent")
        yield Sample(make((2, 3), dtype, rng, 1, 5), args=(make((2, 3), dtype, rng, -3, 0),),
                     name="error-negative-int-exponent")


def _pow_scalar(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(2.0, args=(make((2, 3), dtype, rng, -2, 3),), name="float-base")
    yield Sample(3, args=(make((3, 4), dtype, rng, 0, 3, noncontig=True),), name="int-base-noncontig")


def _div_mode(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    low = 1 if dtype.kind in "iu" else None
    for mode in ("trunc", "floor"):
        yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng, low),),
                     kwargs={"rounding_mode": mode}, name=f"{mode}")
        yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((4,), dtype, rng, low),),
                     kwargs={"rounding_mode": mode}, name=f"{mode}-broadcast-noncontig")
        yield Sample(make((2, 3), dtype, rng), args=(-2,), kwargs={"rounding_mode": mode}, name=f"{mode}-scalar")
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng, low),), kwargs={"rounding_mode": None},
                 name="none")
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng, low),), kwargs={"rounding_mode": "round"},
                 name="error-mode")
    if dtype.kind in "iu":
        yield Sample(make((2, 3), dtype, rng), args=(np.zeros((2, 3), dtype),), kwargs={"rounding_mode": "trunc"},
                     name="error-integer-division-by-zero")


def _div_scalar_mode(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    for mode in ("trunc", "floor", None):
        yield Sample(make((2, 3), dtype, rng), args=(-2.5,), kwargs={"rounding_mode": mode}, name=f"float-{mode}")
        yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(3,), kwargs={"rounding_mode": mode},
                     name=f"int-{mode}-noncontig")


def _comparison(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    # small integer-valued ranges, so that equal elements occur
    def m(shape: tuple[int, ...], noncontig: bool = False, dt: np.dtype = dtype) -> np.ndarray:
        x = make(shape, dt, rng, -2, 3, noncontig=noncontig)
        if dt.kind == "f":
            x[...] = np.round(x)  # in place: keeps 0-d arrays arrays and strided views strided
        return x

    yield Sample(m((2, 3)), args=(m((2, 3)),), name="same-shape")
    yield Sample(m((2, 3)), args=(m((3,)),), name="broadcast")
    yield Sample(m((3, 4), True), args=(m((3, 4), True),), name="noncontig")
    yield Sample(m(()), args=(m((2, 3)),), name="zero-d")
    yield Sample(m((0, 3)), args=(m((3,)),), name="empty")
    yield Sample(m((2, 3)), args=(m((2, 3), dt=_other_dtype(dtype)),), name="promotion")
    yield Sample(m((2, 3)), args=(1,), name="python-scalar")
    yield Sample(m((2, 3)), args=(m((4,)),), name="error-shape")


# --- reductions ---------------------------------------------------------------------------------
def _sum_mean(integral_ok: bool) -> SampleFn:
    def samples(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
        x = make((2, 3, 4), dtype, rng)
        yield Sample(make((2, 3), dtype, rng), name="all")
        yield Sample(x, args=(1,), name="dim")
        yield Sample(x, kwargs={"dim": (0, -1), "keepdim": True}, name="dims-keepdim-kw")
        yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-1,), name="noncontig-negdim")
        yield Sample(make((), dtype, rng), name="zero-d")
        yield Sample(make((0, 3), dtype, rng), args=(0,), name="empty-dim")
        yield Sample(make((0, 3), dtype, rng), name="empty-all")
        yield Sample(make((2, 3), dtype, rng), kwargs={"dtype": TorchDtype("float64")}, name="dtype-kw")
        yield Sample(x, args=(3,), name="error-dim-out-of-range")
        if not integral_ok:
            yield Sample(make((2, 3), dtype, rng), args=(0,), kwargs={"dtype": TorchDtype("int64")},
                         name="int-dtype-kw")

    return samples


def _amax(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, name="all")
    yield Sample(x, args=(1,), name="dim")
    yield Sample(x, args=((0, 2), True), name="dims-keepdim")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), kwargs={"dim": -1}, name="noncontig-negdim-kw")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=(1,), name="empty-other-dim")
    yield Sample(make((0, 3), dtype, rng), args=(0,), name="error-empty-dim")


def _max(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, name="all")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((0, 3), dtype, rng), name="error-empty")


def _max_dim(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, args=(1,), name="dim")
    yield Sample(x, args=(-1, True), name="negdim-keepdim")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), kwargs={"dim": 0}, name="noncontig-kw")
    yield Sample(make((), dtype, rng), args=(0,), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=(1,), name="empty-other-dim")
    yield Sample(x, args=(3,), name="error-dim-out-of-range")


def _argmax(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, name="all")
    yield Sample(x, args=(1,), name="dim")
    yield Sample(x, kwargs={"dim": -1, "keepdim": True}, name="negdim-keepdim-kw")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(0,), name="noncontig")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), name="error-empty")


# --- linear algebra --------------------------------------------------------------------------------
def _mm(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(make((3, 4), dtype, rng),), name="2x3-3x4")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((4, 2), dtype, rng).T.copy().T,),
                 name="noncontig")
    yield Sample(make((4, 3), dtype, rng).T, args=(make((4, 2), dtype, rng),), name="transposed")
    yield Sample(make((0, 3), dtype, rng), args=(make((3, 2), dtype, rng),), name="empty")
    yield Sample(make((2, 3), dtype, rng), args=(make((4, 2), dtype, rng),), name="error-shapes")
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), dtype, rng),), name="error-1d")


def _bmm(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 2, 3), dtype, rng), args=(make((2, 3, 2), dtype, rng),), name="batch")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(make((2, 4, 1), dtype, rng),), name="noncontig")
    yield Sample(make((0, 2, 3), dtype, rng), args=(make((0, 3, 2), dtype, rng),), name="empty-batch")
    yield Sample(make((2, 2, 3), dtype, rng), args=(make((3, 3, 2), dtype, rng),), name="error-batch")


def _matmul(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((3,), dtype, rng), args=(make((3,), dtype, rng),), name="1d-1d")
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), dtype, rng),), name="2d-1d")
    yield Sample(make((3,), dtype, rng), args=(make((3, 2), dtype, rng),), name="1d-2d")
    yield Sample(make((2, 3), dtype, rng), args=(make((3, 2), dtype, rng),), name="2d-2d")
    yield Sample(make((2, 2, 3), dtype, rng), args=(make((3, 2), dtype, rng),), name="3d-2d")
    yield Sample(make((2, 1, 2, 3), dtype, rng), args=(make((3, 3, 1), dtype, rng),), name="batch-broadcast")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((4,), dtype, rng),), name="noncontig")
    yield Sample(make((2, 3), dtype, rng), args=(make((2,), dtype, rng),), name="error-shapes")
    yield Sample(make((), dtype, rng), args=(make((2,), dtype, rng),), name="error-zero-d")


# --- nn ----------------------------------------------------------------------------------------
def _softmax(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng, -3, 3), args=(1,), name="dim1")
    yield Sample(make((2, 3, 2), dtype, rng, -3, 3), kwargs={"dim": -2}, name="negdim-kw")
    yield Sample(make((3, 4), dtype, rng, -3, 3, noncontig=True), args=(0,), name="noncontig")
    yield Sample(make((), dtype, rng, -3, 3), args=(0,), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=(1,), name="empty")
    yield Sample(make((2, 3), dtype, rng, -3, 3), args=(1,), kwargs={"dtype": TorchDtype("float64")}, name="dtype")
    yield Sample(make((2, 3), dtype, rng, -3, 3), args=(2,), name="error-dim")


def _softmax_aten(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng, -3, 3), args=(1, False), name="dim1")
    yield Sample(make((3, 4), dtype, rng, -3, 3, noncontig=True), args=(-2, False), name="noncontig-negdim")
    yield Sample(make((), dtype, rng, -3, 3), args=(0, False), name="zero-d")
    yield Sample(make((2, 3), dtype, rng, -3, 3), args=(1, True), name="error-half-to-float-on-cpu")


def _mse_loss(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng),), name="mean")
    for reduction in ("sum", "none"):
        yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng),), kwargs={"reduction": reduction},
                     name=reduction)
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((3, 4), dtype, rng),), name="noncontig")
    yield Sample(make((), dtype, rng), args=(make((), dtype, rng),), name="zero-d")
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), dtype, rng),), name="broadcast")
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng),), kwargs={"reduction": "max"},
                 name="error-reduction")


def _nll_loss(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    def target(shape: tuple[int, ...], classes: int) -> np.ndarray:
        return rng.integers(0, classes, size=shape).astype(np.int64)

    x = make((3, 4), dtype, rng, -3, 0)
    yield Sample(x, args=(target((3,), 4),), name="mean")
    yield Sample(x, args=(target((3,), 4),), kwargs={"reduction": "sum"}, name="sum")
    yield Sample(x, args=(target((3,), 4),), kwargs={"reduction": "none"}, name="none")
    yield Sample(x, args=(target((3,), 4),), kwargs={"weight": make((4,), dtype, rng, 0.5, 2)}, name="weight")
    yield Sample(x, args=(np.array([0, 1, 1]),), kwargs={"ignore_index": 1}, name="ignore-index")
    yield Sample(make((4,), dtype, rng, -3, 0), args=(np.array(2),), name="1d-input")
    yield Sample(make((3, 4), dtype, rng, -3, 0, noncontig=True), args=(target((3,), 4),), name="noncontig")
    yield Sample(x, args=(np.array([0, 4, 1]),), name="error-target-out-of-bounds")
    yield Sample(x, args=(target((2,), 4),), name="error-batch-mismatch")


def _nll_loss_forward(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((3, 4), dtype, rng, -3, 0)
    t = rng.integers(0, 4, size=(3,)).astype(np.int64)
    yield Sample(x, args=(t, None, 1, -100), name="mean")
    yield Sample(x, args=(t, make((4,), dtype, rng, 0.5, 2), 2, -100), name="sum-weight")
    yield Sample(x, args=(t, None, 0, int(t[0])), name="none-ignore-index")


# --- tensor lists, copies --------------------------------------------------------------------------
def _cat(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample([make((2, 3), dtype, rng), make((1, 3), dtype, rng)], name="dim0")
    yield Sample([make((2, 3), dtype, rng), make((2, 1), dtype, rng, noncontig=True),
                  make((2, 2), dtype, rng, noncontig=True)], args=(-1,), name="negdim-noncontig")
    yield Sample([make((2, 3), dtype, rng), make((0,), dtype, rng)], kwargs={"dim": 0}, name="legacy-empty-kw")
    yield Sample([make((2, 3), dtype, rng), make((2, 3), _other_dtype(dtype), rng)], name="promotion")
    yield Sample([make((2, 3), dtype, rng)], args=(1,), name="single")
    yield Sample([make((2, 3), dtype, rng), make((2, 2), dtype, rng)], name="error-sizes")
    yield Sample([make((), dtype, rng)], name="error-zero-d")
    yield Sample([], name="error-empty-list")


def _stack(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample([make((2, 3), dtype, rng), make((2, 3), dtype, rng)], name="dim0")
    yield Sample([make((2, 3), dtype, rng, noncontig=True), make((2, 3), dtype, rng)], args=(-1,),
                 name="negdim-noncontig")
    yield Sample([make((), dtype, rng), make((), dtype, rng)], kwargs={"dim": 0}, name="zero-d-kw")
    yield Sample([make((2, 3), dtype, rng), make((2, 3), _other_dtype(dtype), rng)], args=(1,), name="promotion")
    yield Sample([make((2, 3), dtype, rng), make((3, 2), dtype, rng)], name="error-shapes")
    yield Sample([make((2, 3), dtype, rng)], args=(3,), name="error-dim")


def _one_tensor(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), name="2d")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((4, 3), dtype, rng).T, name="transposed")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), name="empty")


def _to_copy(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), name="same")
    yield Sample(make((2, 3), dtype, rng), kwargs={"dtype": TorchDtype("float64")}, name="to-float64")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), kwargs={"dtype": TorchDtype("int64")},
                 name="noncontig-to-int64")
    yield Sample(make((4, 3), dtype, rng).T, kwargs={"dtype": TorchDtype("bool")}, name="transposed-to-bool")


def _to_dtype(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(TorchDtype("float64"),), name="float64")
    yield Sample(make((2, 3), dtype, rng), args=(TorchDtype(dtype.name),), name="same-dtype-aliases")
    yield Sample(make((2, 3), dtype, rng), args=(TorchDtype(dtype.name),), kwargs={"copy": True}, name="copy")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(TorchDtype("int64"),), name="noncontig")


def _copy_(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng),), name="same-shape")
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), dtype, rng),), name="broadcast-src")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((3, 4), np.float64, rng),),
                 name="noncontig-cast")
    yield Sample(make((2, 3), dtype, rng), args=(make((3, 2), dtype, rng),), name="error-shape")


def _fill_(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), args=(1,), name="int")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(True,), name="noncontig-bool")
    yield Sample(make((2, 3), dtype, rng), args=(np.array(3, dtype=dtype),), name="zero-d-tensor")
    yield Sample(make((2, 3), dtype, rng), args=(make((2,), dtype, rng),), name="error-1d-value")


# --- views --------------------------------------------------------------------------------------
def _view(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 6), dtype, rng), args=((3, 4),), name="tuple")
    yield Sample(make((2, 6), dtype, rng), args=(4, -1), name="varargs-infer")
    yield Sample(make((2, 3, 4), dtype, rng).transpose(0, 2, 1), args=((2, 4, 3),), name="permuted-split")
    yield Sample(make((), dtype, rng), args=((1, 1),), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=((3, 0),), name="empty")
    yield Sample(make((4, 3), dtype, rng).T, args=((12,),), name="error-not-viewable")
    yield Sample(make((2, 6), dtype, rng), args=((5, -1),), name="error-invalid-shape")


def _reshape(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 6), dtype, rng), args=((3, 4),), name="view")
    yield Sample(make((4, 3), dtype, rng).T, args=((-1,),), name="copy")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=((3, 2, 2),), name="noncontig-split")
    yield Sample(make((), dtype, rng), args=((),), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=((-1, 0),), name="error-empty-infer")
    yield Sample(make((2, 6), dtype, rng), args=((-1, -1),), name="error-two-infers")


def _t(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), name="2d")
    yield Sample(make((3,), dtype, rng), name="1d")
    yield Sample(make((), dtype, rng), name="zero-d")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((2, 3, 4), dtype, rng), name="error-3d")


def _transpose(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, args=(0, 2), name="outer")
    yield Sample(x, args=(-1, -2), name="negdims")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(0, 1), name="noncontig")
    yield Sample(make((), dtype, rng), args=(0, -1), name="zero-d")
    yield Sample(x, args=(0, 3), name="error-dim")


def _permute(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, args=((2, 0, 1),), name="tuple")
    yield Sample(x, args=((-1, 1, 0),), name="negdims")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=((1, 0),), name="noncontig")
    yield Sample(make((), dtype, rng), args=((),), name="zero-d")
    yield Sample(x, args=((0, 0, 1),), name="error-repeated-dim")
    yield Sample(x, args=((0, 1),), name="error-too-few-dims")


def _permute_method(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3, 4), dtype, rng), args=(2, 0, 1), name="varargs")


def _expand(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((3, 1), dtype, rng), args=(3, 4), name="varargs")
    yield Sample(make((3,), dtype, rng), args=((2, 3),), name="new-leading-dim")
    yield Sample(make((3, 1), dtype, rng), args=((-1, 2),), name="keep-minus-one")
    yield Sample(make((), dtype, rng), args=((2, 2),), name="zero-d")
    yield Sample(make((4, 1), dtype, rng, noncontig=True), args=((4, 3),), name="noncontig")
    yield Sample(make((3, 2), dtype, rng), args=((3, 4),), name="error-size")


def _squeeze(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 1, 3, 1), dtype, rng), name="all")
    yield Sample(make((1, 1), dtype, rng), name="all-ones")
    yield Sample(make((), dtype, rng), name="zero-d")


def _squeeze_dim(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 1, 3, 1), dtype, rng)
    yield Sample(x, args=(1,), name="size-one")
    yield Sample(x, args=(0,), name="not-size-one")
    yield Sample(x, args=(-1,), name="negdim")
    yield Sample(make((), dtype, rng), args=(0,), name="zero-d")
    yield Sample(x, args=(4,), name="error-dim")


def _squeeze_dims(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 1, 3, 1), dtype, rng)
    yield Sample(x, args=((1, 3),), name="two")
    yield Sample(x, args=((0, -1),), name="mixed-negdim")
    yield Sample(x, args=((),), name="none")
    yield Sample(x, args=((1, 1),), name="error-repeated-dim")


def _unsqueeze(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3), dtype, rng)
    yield Sample(x, args=(0,), name="front")
    yield Sample(x, args=(2,), name="back")
    yield Sample(x, args=(-1,), name="negdim")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(1,), name="noncontig")
    yield Sample(make((), dtype, rng), args=(0,), name="zero-d")
    yield Sample(x, args=(3,), name="error-dim")


def _select(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((2, 3, 4), dtype, rng)
    yield Sample(x, args=(1, 2), name="middle")
    yield Sample(x, args=(-1, -1), name="negative")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(1, 0), name="noncontig")
    yield Sample(x, args=(0, 2), name="error-index")
    yield Sample(make((), dtype, rng), args=(0, 0), name="error-zero-d")


def _getitem(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    """Basic indexing: ints, slices (steps, negative and clamped bounds), None and Ellipsis, all views."""
    x = make((3, 4, 5), dtype, rng)
    yield Sample(x, args=(1,), name="int")
    yield Sample(x, args=((slice(1, 3), slice(None, None, 2)),), name="slices-step")
    yield Sample(x, args=((Ellipsis, slice(-3, None)),), name="ellipsis-negative-start")
    yield Sample(x, args=((None, 0, slice(None), None),), name="none-int")
    yield Sample(x, args=((slice(2, 10), -1),), name="clamped-end-negative-int")
    yield Sample(x, args=(slice(3, 1),), name="empty-slice")
    yield Sample(make((4, 6), dtype, rng, noncontig=True), args=((slice(1, None), slice(None, None, 2)),),
                 name="noncontig")
    yield Sample(make((), dtype, rng), args=((None, Ellipsis),), name="zero-d")
    yield Sample(x, args=(3,), name="error-index")
    yield Sample(x, args=((0, 0, 0, 0),), name="error-too-many-indices")
    yield Sample(x, args=(slice(None, None, -1),), name="error-negative-step")


def _slice(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((4, 5), dtype, rng)
    yield Sample(x, args=(0, 1, 3), name="dim0")
    yield Sample(x, args=(1, None, None, 2), name="step")
    yield Sample(x, args=(-1, -3, 100), name="negdim-clamped")
    yield Sample(make((4, 6), dtype, rng, noncontig=True), args=(1, 1, 3), name="noncontig")
    yield Sample(x, args=(0, 1, 3, 0), name="error-step-zero")


def _as_strided(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    x = make((3, 4), dtype, rng)
    yield Sample(x, args=((2, 2), (1, 2)), name="overlapping")
    yield Sample(x, args=((2, 3), (4, 1), 1), name="offset")
    yield Sample(x, args=((3,), (0,)), name="zero-stride")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=((2, 2), (2, 1)), name="noncontig-keeps-offset")
    yield Sample(x, args=((4, 4), (4, 1)), name="error-out-of-bounds")
    yield Sample(x, args=((2, 2), (1, 2), -1), name="error-negative-offset")


def _alias(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(make((2, 3), dtype, rng), name="2d")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), name="noncontig")
    yield Sample(make((), dtype, rng), name="zero-d")


# --- factories ------------------------------------------------------------------------------------
def _shape_factory(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    d = TorchDtype(dtype.name)
    yield Sample((2, 3), kwargs={"dtype": d}, name="tuple")
    yield Sample(2, args=(3,), kwargs={"dtype": d}, name="varargs")
    yield Sample((), kwargs={"dtype": d}, name="zero-d")
    yield Sample((0, 3), kwargs={"dtype": d}, name="empty")
    yield Sample((2, 3), name="default-dtype")
    yield Sample((2, -1), kwargs={"dtype": d}, name="error-negative-size")


def _full(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample((2, 3), args=(1.5,), kwargs={"dtype": TorchDtype(dtype.name)}, name="dtype")
    yield Sample((2,), args=(2,), name="infer-int")
    yield Sample((2,), args=(True,), name="infer-bool")
    yield Sample((), args=(-0.5,), name="zero-d-infer-float")
    yield Sample((0, 2), args=(7,), kwargs={"dtype": TorchDtype(dtype.name)}, name="empty")


def _arange(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    d = TorchDtype(dtype.name)
    yield Sample(5, kwargs={"dtype": d}, name="end")
    yield Sample(1, args=(7, 2), kwargs={"dtype": d}, name="start-end-step")
    yield Sample(5, args=(0, -1), kwargs={"dtype": d}, name="negative-step")
    yield Sample(0.5, args=(3.0, 0.5), name="float-infer")
    yield Sample(0, args=(10, 3), name="int-infer")
    yield Sample(0, args=(5, 0), name="error-step-zero")
    yield Sample(0, args=(5, -1), name="error-sign")


def _linspace(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    d = TorchDtype(dtype.name)
    yield Sample(0, args=(1, 5), kwargs={"dtype": d}, name="unit")
    yield Sample(-2, args=(10, 7), kwargs={"dtype": d}, name="wide")
    yield Sample(3, args=(3, 1), name="one-step-default-dtype")
    yield Sample(0, args=(1, 0), name="zero-steps")
    yield Sample(0, args=(1, -1), name="error-negative-steps")


def _empty_strided(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    d = TorchDtype(dtype.name)
    yield Sample((2, 3), args=((1, 2),), kwargs={"dtype": d}, name="column-major")
    yield Sample((2, 3), args=((3, 1),), kwargs={"dtype": d}, name="row-major")
    yield Sample((2, 2), args=((0, 1),), kwargs={"dtype": d}, name="zero-stride")
    yield Sample((2, 3), args=((1,),), kwargs={"dtype": d}, name="error-rank")


def _random_factory(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    d = TorchDtype(dtype.name)
    yield Sample((2, 3), kwargs={"dtype": d}, name="tuple")
    yield Sample(4, kwargs={"dtype": d}, name="varargs-1d")
    yield Sample((), kwargs={"dtype": d}, name="zero-d")
    yield Sample((0, 2), kwargs={"dtype": d}, name="empty")


def _scalar_tensor(rng: np.random.Generator, dtype: np.dtype) -> Iterator[Sample]:
    yield Sample(1.5, kwargs={"dtype": TorchDtype(dtype.name)}, name="dtype")
    yield Sample(3, name="int-default-dtype")
    yield Sample(True, name="bool-default-dtype")


# Known dispatchcore-vs-torch differences (see each entry's xfails)
_MATMUL_NODES = ("torch's matmul squeezes a 1-d @ 2-d product in place and folds broadcast batches into mm (nodes "
                 "SqueezeBackward4, UnsafeViewBackward0); dispatchcore's graph ends in SqueezeBackward1 or "
                 "ViewBackward0")
_SOFTMAX_INT_EMPTY = ("(log_)softmax of an empty integral tensor: torch returns an empty tensor before any dtype "
                      "check; dispatchcore raises NotImplementedError '\"softmax_lastdim_kernel_impl\" "
                      "not implemented for 'Long''")

_UNARY_SMOOTH = {"neg": None, "exp": (-3, 3), "sin": None, "cos": None, "tanh": (-3, 3), "sigmoid": (-4, 4)}

OPS = [
    # --- arithmetic ---------------------------------------------------------------------------
    OpInfo("add", call="add", samples=_binary(alpha=2), dtypes=ALL, aten=("add.Tensor",), grad=True, gradgrad=True,
           grad_args=(0, 1), method_variant="Tensor.add", inplace_variant="Tensor.add_", supports_out=True),
    OpInfo("add-no-alpha", call="add", samples=_binary(), dtypes=ALL, aten=("add.Tensor",)),
    OpInfo("add.Scalar", call="ops.aten.add.Scalar", samples=_scalar_overload(alpha=3), dtypes=ALL,
           aten=("add.Scalar",), grad=True),
    OpInfo("sub", call="sub", samples=_binary(alpha=2), dtypes=ALL, aten=("sub.Tensor",), grad=True,
           grad_args=(0, 1), method_variant="Tensor.sub", inplace_variant="Tensor.sub_", supports_out=True),
    OpInfo("sub.Scalar", call="ops.aten.sub.Scalar", samples=_scalar_overload(), dtypes=ALL, aten=("sub.Scalar",),
           grad=True),
    OpInfo("rsub", call="rsub", samples=_binary(alpha=3), dtypes=NUMERIC, aten=("rsub.Tensor",), grad=True,
           grad_args=(0, 1)),
    OpInfo("rsub.Scalar", call="ops.aten.rsub.Scalar", samples=_scalar_overload(), dtypes=NUMERIC,
           aten=("rsub.Scalar",), grad=True),
    OpInfo("mul", call="mul", samples=_binary(), dtypes=ALL, aten=("mul.Tensor",), grad=True, gradgrad=True,
           grad_args=(0, 1), method_variant="Tensor.mul", inplace_variant="Tensor.mul_", supports_out=True),
    OpInfo("mul.Scalar", call="ops.aten.mul.Scalar", samples=_scalar_overload(), dtypes=ALL, aten=("mul.Scalar",),
           grad=True),
    OpInfo("div", call="div", samples=_binary(low=0.5, high=4, scalar=-2.5), dtypes=NUMERIC, aten=("div.Tensor",),
           grad=True, gradgrad=True, grad_args=(0, 1), method_variant="Tensor.div", inplace_variant="Tensor.div_",
           supports_out=True),
    OpInfo("true_divide", call="true_divide", samples=_binary(low=0.5, high=4), dtypes=("float32", "int64"),
           method_variant="Tensor.true_divide", inplace_variant="Tensor.true_divide_"),
    OpInfo("div.Scalar", call="ops.aten.div.Scalar", samples=_scalar_overload(), dtypes=NUMERIC,
           aten=("div.Scalar",), grad=True),
    OpInfo("div-rounding-mode", call="div", samples=_div_mode, dtypes=NUMERIC, aten=("div.Tensor_mode",),
           grad=True, grad_args=(0, 1), method_variant="Tensor.div", inplace_variant="Tensor.div_"),
    OpInfo("div.Scalar_mode", call="ops.aten.div.Scalar_mode", samples=_div_scalar_mode, dtypes=NUMERIC,
           aten=("div.Scalar_mode",), grad=True),
    OpInfo("reciprocal", call="reciprocal", samples=_positive_then_wide, dtypes=NUMERIC, aten=("reciprocal",),
           grad=True, gradgrad=True, method_variant="Tensor.reciprocal"),
    OpInfo("maximum", call="maximum", samples=_binary(), dtypes=ALL, aten=("maximum",), grad=True, grad_args=(0, 1),
           method_variant="Tensor.maximum"),
    OpInfo("minimum", call="minimum", samples=_binary(), dtypes=ALL, aten=("minimum",), grad=True, grad_args=(0, 1),
           method_variant="Tensor.minimum"),
    OpInfo("pow", call="pow", samples=_pow, dtypes=NUMERIC, aten=("pow.Tensor_Tensor", "pow.Tensor_Scalar"),
           grad=True, gradgrad=True, grad_args=(0, 1, "exponent"), method_variant="Tensor.pow",
           inplace_variant="Tensor.pow_"),
    OpInfo("pow.Scalar", call="pow", samples=_pow_scalar, dtypes=NUMERIC, aten=("pow.Scalar",), grad=True,
           grad_args=(1,)),
    # --- unary ------------------------------------------------------------------------------
    *[_unary_entries(name, _unary(*(bounds or (None, None))), gradgrad=True)
      for name, bounds in _UNARY_SMOOTH.items()],
    _unary_entries("abs", _unary_wide, gradgrad=False),
    _unary_entries("log", _positive_then_wide, gradgrad=True),
    _unary_entries("sqrt", _positive_then_wide, gradgrad=True),
    OpInfo("relu", call="relu", samples=_unary_wide, dtypes=NUMERIC, aten=("relu",), grad=True,
           method_variant="Tensor.relu", inplace_variant="Tensor.relu_"),
    OpInfo("nn.functional.relu", call="nn.functional.relu", samples=_unary(), dtypes=NUMERIC, aten=("relu",)),
    # --- clamp, where, comparisons --------------------------------------------------------------------
    OpInfo("clamp", call="clamp", samples=_clamp, dtypes=NUMERIC, aten=("clamp",), grad=True,
           method_variant="Tensor.clamp", inplace_variant="Tensor.clamp_"),
    OpInfo("clamp.Tensor", call="clamp", samples=_clamp_tensor, dtypes=NUMERIC, aten=("clamp.Tensor",), grad=True,
           grad_args=(0, 1, 2, "min", "max"), method_variant="Tensor.clamp", inplace_variant="Tensor.clamp_"),
    OpInfo("clamp_min", call="clamp_min", samples=_clamp_min, dtypes=NUMERIC, aten=("clamp_min",), grad=True,
           method_variant="Tensor.clamp_min", inplace_variant="Tensor.clamp_min_"),
    OpInfo("clamp_min.Tensor", call="clamp_min", samples=_clamp_min_tensor, dtypes=NUMERIC,
           aten=("clamp_min.Tensor",), grad=True, grad_args=(0, 1), inplace_variant="Tensor.clamp_min_"),
    OpInfo("clamp_max", call="clamp_max", samples=_clamp_min, dtypes=NUMERIC, aten=("clamp_max",), grad=True,
           method_variant="Tensor.clamp_max", inplace_variant="Tensor.clamp_max_"),
    OpInfo("clamp_max.Tensor", call="clamp_max", samples=_clamp_min_tensor, dtypes=NUMERIC,
           aten=("clamp_max.Tensor",), grad=True, grad_args=(0, 1), inplace_variant="Tensor.clamp_max_"),
    OpInfo("where", call="where", samples=_where, dtypes=ALL, aten=("where.self",), grad=True, gradgrad=True,
           grad_args=(1, 2)),
    *[OpInfo(name, call=name, samples=_comparison, dtypes=ALL, aten=(f"{name}.Tensor",),
             method_variant=f"Tensor.{name}") for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[OpInfo(f"{name}.Scalar", call=f"ops.aten.{name}.Scalar", samples=_scalar_overload(scalar=1.0), dtypes=ALL,
             aten=(f"{name}.Scalar",)) for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    # --- reductions -----------------------------------------------------------------------------
    OpInfo("sum", call="sum", samples=_sum_mean(integral_ok=True), dtypes=ALL, aten=("sum", "sum.dim_IntList"),
           grad=True, gradgrad=True, method_variant="Tensor.sum"),
    OpInfo("mean", call="mean", samples=_sum_mean(integral_ok=False), dtypes=ALL, aten=("mean", "mean.dim"),
           grad=True, gradgrad=True, method_variant="Tensor.mean",
           xfails={f"{d}/error-dim-out-of-range": "torch checks the dtype before the dim: mean() of an integral or "
                   "bool tensor raises 'mean(): could not infer output dtype...' (RuntimeError); dispatchcore "
                   "raises the IndexError for the dim first" for d in ("int64", "bool")}),
    OpInfo("amax", call="amax", samples=_amax, dtypes=ALL, aten=("amax",), grad=True, method_variant="Tensor.amax"),
    OpInfo("max", call="max", samples=_max, dtypes=ALL, aten=("max",), grad=True, method_variant="Tensor.max"),
    OpInfo("max-dim", call="max", samples=_max_dim, dtypes=ALL, aten=("max.dim",), grad=True,
           method_variant="Tensor.max"),
    OpInfo("argmax", call="argmax", samples=_argmax, dtypes=NUMERIC, aten=("argmax",),
           method_variant="Tensor.argmax"),
    # --- linear algebra -------------------------------------------------------------------------
    OpInfo("mm", call="mm", samples=_mm, dtypes=NUMERIC, aten=("mm",), grad=True, gradgrad=True, grad_args=(0, 1),
           method_variant="Tensor.mm", atol=1e-4),
    OpInfo("bmm", call="bmm", samples=_bmm, dtypes=NUMERIC, aten=("bmm",), grad=True, grad_args=(0, 1),
           method_variant="Tensor.bmm", atol=1e-4),
    OpInfo("matmul", call="matmul", samples=_matmul, dtypes=NUMERIC, aten=("matmul",), grad=True, gradgrad=True,
           grad_args=(0, 1), method_variant="Tensor.matmul", atol=1e-4,
           xfails={f"float64/{s}@grad": _MATMUL_NODES for s in ("1d-2d", "batch-broadcast")}),
    # --- nn --------------------------------------------------------------------------------------
    OpInfo("softmax", call="softmax", samples=_softmax, dtypes=NUMERIC, aten=("softmax.int",), grad=True,
           gradgrad=True, method_variant="Tensor.softmax", xfails={"int64/empty": _SOFTMAX_INT_EMPTY}),
    OpInfo("nn.functional.softmax", call="nn.functional.softmax", samples=_softmax, dtypes=FLOAT,
           aten=("softmax.int",)),
    OpInfo("_softmax", call="ops.aten._softmax", samples=_softmax_aten, dtypes=FLOAT, aten=("_softmax",), grad=True),
    OpInfo("log_softmax", call="log_softmax", samples=_softmax, dtypes=NUMERIC, aten=("log_softmax.int",),
           grad=True, gradgrad=True, method_variant="Tensor.log_softmax", xfails={"int64/empty": _SOFTMAX_INT_EMPTY}),
    OpInfo("nn.functional.log_softmax", call="nn.functional.log_softmax", samples=_softmax, dtypes=FLOAT,
           aten=("log_softmax.int",)),
    OpInfo("_log_softmax", call="ops.aten._log_softmax", samples=_softmax_aten, dtypes=FLOAT, aten=("_log_softmax",),
           grad=True),
    OpInfo("nn.functional.mse_loss", call="nn.functional.mse_loss", samples=_mse_loss, dtypes=FLOAT,
           aten=("mse_loss",), grad=True, gradgrad=True, grad_args=(0, 1)),
    OpInfo("nn.functional.nll_loss", call="nn.functional.nll_loss", samples=_nll_loss, dtypes=FLOAT,
           aten=("nll_loss",), grad=True, grad_args=(0,),
           xfails={"error-batch-mismatch": "torch's nn.functional.nll_loss checks the batch sizes in Python: "
                   "ValueError 'Expected input batch_size (3) to match target batch_size (2).'; dispatchcore "
                   "raises RuntimeError 'size mismatch (got input: [3, 4], target: [2])'"}),
    OpInfo("nll_loss_forward", call="ops.aten.nll_loss_forward", samples=_nll_loss_forward, dtypes=FLOAT,
           aten=("nll_loss_forward",), grad=True),
    # --- tensor lists and copies ----------------------------------------------------------------------
    OpInfo("cat", call="cat", samples=_cat, dtypes=ALL, aten=("cat",), grad=True, gradgrad=True),
    OpInfo("stack", call="stack", samples=_stack, dtypes=ALL, aten=("stack",), grad=True),
    OpInfo("clone", call="clone", samples=_one_tensor, dtypes=ALL, aten=("clone",), grad=True,
           method_variant="Tensor.clone"),
    OpInfo("contiguous", call="Tensor.contiguous", samples=_one_tensor, dtypes=ALL, aten=("contiguous",), grad=True),
    OpInfo("detach", call="detach", samples=_one_tensor, dtypes=FLOAT, aten=("detach",),
           method_variant="Tensor.detach"),
    OpInfo("_to_copy", call="ops.aten._to_copy", samples=_to_copy, dtypes=ALL, aten=("_to_copy",), grad=True),
    OpInfo("to.dtype", call="Tensor.to", samples=_to_dtype, dtypes=ALL, aten=("to.dtype",), grad=True),
    OpInfo("copy_", call="Tensor.copy_", samples=_copy_, dtypes=ALL, aten=("copy_",), grad=True, grad_args=(1,)),
    OpInfo("fill_", call="Tensor.fill_", samples=_fill_, dtypes=ALL, aten=("fill_.Scalar", "fill_.Tensor")),
    OpInfo("zero_", call="Tensor.zero_", samples=_one_tensor, dtypes=ALL, aten=("zero_",)),
    # --- views ------------------------------------------------------------------------------------
    OpInfo("view", call="Tensor.view", samples=_view, dtypes=ALL, aten=("view",), grad=True),
    OpInfo("reshape", call="reshape", samples=_reshape, dtypes=ALL, aten=("reshape",), grad=True,
           method_variant="Tensor.reshape"),
    OpInfo("t", call="t", samples=_t, dtypes=ALL, aten=("t",), grad=True, method_variant="Tensor.t"),
    OpInfo("transpose", call="transpose", samples=_transpose, dtypes=ALL, aten=("transpose.int",), grad=True,
           method_variant="Tensor.transpose"),
    OpInfo("permute", call="permute", samples=_permute, dtypes=ALL, aten=("permute",), grad=True,
           method_variant="Tensor.permute"),
    OpInfo("Tensor.permute-varargs", call="Tensor.permute", samples=_permute_method, dtypes=FLOAT,
           aten=("permute",)),
    OpInfo("expand", call="Tensor.expand", samples=_expand, dtypes=ALL, aten=("expand",), grad=True),
    OpInfo("squeeze", call="squeeze", samples=_squeeze, dtypes=ALL, aten=("squeeze",), grad=True,
           method_variant="Tensor.squeeze"),
    OpInfo("squeeze.dim", call="squeeze", samples=_squeeze_dim, dtypes=ALL, aten=("squeeze.dim",), grad=True,
           method_variant="Tensor.squeeze"),
    OpInfo("squeeze.dims", call="squeeze", samples=_squeeze_dims, dtypes=ALL, aten=("squeeze.dims",), grad=True,
           method_variant="Tensor.squeeze"),
    OpInfo("unsqueeze", call="unsqueeze", samples=_unsqueeze, dtypes=ALL, aten=("unsqueeze",), grad=True,
           method_variant="Tensor.unsqueeze"),
    OpInfo("select", call="select", samples=_select, dtypes=ALL, aten=("select.int",), grad=True,
           method_variant="Tensor.select"),
    OpInfo("getitem-basic", call="Tensor.__getitem__", samples=_getitem, dtypes=ALL,
           aten=("select.int", "slice.Tensor", "unsqueeze"), grad=True),
    OpInfo("slice.Tensor", call="ops.aten.slice.Tensor", samples=_slice, dtypes=ALL, aten=("slice.Tensor",),
           grad=True),
    OpInfo("as_strided", call="as_strided", samples=_as_strided, dtypes=ALL, aten=("as_strided",), grad=True,
           method_variant="Tensor.as_strided",
           xfails={p: "dispatchcore accepts a negative storage offset; torch raises 'Tensor: invalid storage "
                      "offset -1'" for p in ("error-negative-offset", "float64/error-negative-offset@grad")}),
    OpInfo("alias", call="ops.aten.alias", samples=_alias, dtypes=ALL, aten=("alias",), grad=True),
    # --- factories ------------------------------------------------------------------------------------
    OpInfo("zeros", call="zeros", samples=_shape_factory, dtypes=ALL, aten=("zeros",)),
    OpInfo("ones", call="ones", samples=_shape_factory, dtypes=ALL, aten=("ones",)),
    OpInfo("empty", call="empty", samples=_shape_factory, dtypes=ALL, aten=("empty.memory_format",),
           compare_values=False),
    OpInfo("empty_strided", call="empty_strided", samples=_empty_strided, dtypes=ALL, aten=("empty_strided",),
           compare_values=False,
           xfails={"error-rank": "sizes and strides of different lengths: torch raises RuntimeError 'dimensionality "
                                 "of sizes (2) must match dimensionality of strides (1)'; dispatchcore raises "
                                 "ValueError 'strides, if given, must be the same length as shape'"}),
    OpInfo("full", call="full", samples=_full, dtypes=ALL, aten=("full",)),
    OpInfo("arange", call="arange", samples=_arange, dtypes=NUMERIC, aten=("arange.start_step",)),
    OpInfo("linspace", call="linspace", samples=_linspace, dtypes=NUMERIC, aten=("linspace",)),
    OpInfo("rand", call="rand", samples=_random_factory, dtypes=NUMERIC, aten=("rand",), compare_values=False),
    OpInfo("randn", call="randn", samples=_random_factory, dtypes=NUMERIC, aten=("randn",), compare_values=False),
    OpInfo("scalar_tensor", call="ops.aten.scalar_tensor", samples=_scalar_tensor, dtypes=ALL,
           aten=("scalar_tensor",)),
]
