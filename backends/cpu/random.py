"""CPU kernels of the random family (``dispatchcore.native.random``): torch's draws, bit for bit.

Mirrors ``aten/src/ATen/native/cpu/DistributionKernels.cpp`` and ``DistributionTemplates.h`` (the
``cpu_serial_kernel`` loops), over the engine of ``generator.py``:

* elements are drawn in TensorIterator order (memory order: dimensions by decreasing stride), one
  generator call each (``_fill``);
* ``uniform_``: ``uniform_real_distribution<opmath_t>``: 24 bits of ``random()`` for float and Half (opmath
  float), 53 bits of ``random64()`` for double, then ``x * (to - from) + from`` rounded to the dtype; a value
  that rounds up to ``to`` is replaced by ``from``;
* ``normal_``: for 16 or more contiguous elements torch's ``normal_fill`` (Box-Muller on blocks of 16: cos on
  the first 8, sin on the next 8; float, and Half through a float buffer, use the AVX2 ``NormalFill16``, whose
  ``log256_ps``/``sincos256_ps`` of ``avx_mathfun.h`` are computed here float32 step by step with the fma
  contractions of torch's build); otherwise the scalar Box-Muller on doubles with the cached sample;
* ``random_`` (its three overloads), ``exponential_`` (``-1/lambda * log1p(-u)`` on a double uniform),
  ``bernoulli_.Tensor`` (a double uniform per element for a double ``p``, a float one otherwise).

Every draw, and the generator state after every draw, equals torch 2.13's on an x86 CPU whose
``torch.backends.cpu.get_cpu_capability()`` is ``AVX2`` (tests/differential/test_vs_torch_random.py). Where torch
differs by machine (not modelled): its AVX512 build takes the scalar ``NormalFill16<float>`` (libm ``logf``,
``cosf``, ``sinf``) for float/Half ``normal_``, and on an Intel CPU with MKL ``bernoulli_(float p)`` draws from
MKL's stream (see ``bernoulli__float_cpu`` in norms.py).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from dispatchcore import contiguous_format, ops
from dispatchcore.dtypes import int64 as _LONG
from dispatchcore.native import random as R
from dispatchcore.shapes import broadcast_shapes, expand_geometry
from dispatchcore.tensor import Tensor, wrap_cpu

from .fma import fma32 as _fma32
from .generator import CPUGenerator, resolve
from .kernels import _TORCH_NAME

A = ops.aten

__all__ = ["KERNELS"]

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_DIGITS = {_F16: 11, _F32: 24, _F64: 53}


def _order(a: np.ndarray) -> list[int]:
    """TensorIterator's order of a single output: dimensions by decreasing stride (ties keep their order)."""
    return sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))


def _fill(a: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` (drawn in iteration order) into ``a``."""
    perm = _order(a)
    a.transpose(perm)[...] = values.reshape([a.shape[d] for d in perm])


def _cast(values: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``static_cast<scalar_t>(double)``: Half goes through float, as c10::Half's constructor does."""
    if dt == _F16:
        return values.astype(_F32).astype(_F16)
    with np.errstate(all="ignore"):
        return values.astype(dt)


def _float_check(kernel: str, dt: np.dtype) -> None:
    if dt not in _DIGITS:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TORCH_NAME[dt]}\'')


def _fma(a: np.ndarray, b: float, c: float) -> np.ndarray:
    """Return ``a * b + c`` rounded once (double ``fma``).

    ``a * b + c`` with one rounding, as the compiler's contracted ``fma`` computes it in torch's kernels
    (error-free product and sum; the last rounding is faithful, correct but for halfway double-roundings).
    """
    a = np.asarray(a, np.float64)
    p = a * b
    split = 134217729.0  # 2**27 + 1 (Veltkamp)
    ah = a * split
    ah = ah - (ah - a)
    al = a - ah
    bh = b * split
    bh = bh - (bh - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    z = s - p
    t = (p - (s - z)) + (c - z)
    return s + (t + e)


# --- uniform_ --------------------------------------------------------------------------------------------------
def _uniform(g: CPUGenerator, n: int, dt: np.dtype, low: float, high: float) -> np.ndarray:
    """Draw ``n`` uniforms of dtype ``dt`` in ``[low, high)`` as torch's ``uniform_kernel``.

    ``uniform_kernel``: ``uniform_real_distribution<opmath_t>(from, to)`` n times (TransformationHelper.h
    ``uniform_real``), rounded to the dtype; a value that rounds up to ``to`` becomes ``from`` (torch's clamp).
    """
    if dt == _F64:
        values = _fma(g.uniform_float64(n), high - low, low)
    else:
        # float and Half (opmath float): 24 bits of ``random()`` over 2**24, bounds as float; the product is
        # exact in double, the sum rounded once there and then to the dtype
        lo, hi = float(np.float32(low)), float(np.float32(high))
        x = g.uniform_float32(n).astype(np.float64)
        with np.errstate(all="ignore"):
            values = _cast(x * float(np.float32(hi - lo)) + lo, dt)
    to_scalar, from_scalar = _cast(np.array([high, low], np.float64), dt)
    values[values == to_scalar] = from_scalar
    return values


def _as_real(a: np.ndarray) -> np.ndarray:
    """``view_as_real``: a complex array as its float pairs (a trailing dimension of 2), sharing memory."""
    return np.lib.stride_tricks.as_strided(a.real, a.shape + (2,), a.strides + (a.real.itemsize,))


_TYPE_NAMES = {_F16: "Half", _F32: "Float", _F64: "Double"}


def uniform__cpu(self, from_=0.0, to=1.0, *, generator=None):
    """``uniform_impl_``: complex through its real view; bounds checked in the dtype, then drawn."""
    a = self._data
    if a.dtype.kind == "c":
        if a.size:
            _uniform_array(_as_real(a), from_, to, generator)
        return self
    _uniform_array(a, from_, to, generator)
    return self


def _uniform_array(a: np.ndarray, from_: float, to: float, generator: Any) -> None:
    dt = a.dtype
    _float_check("check_uniform_bounds", dt)
    lo, hi = -_LIMITS[dt], _LIMITS[dt]
    for value, name in ((from_, "from"), (to, "to")):
        if not lo <= value <= hi:
            raise RuntimeError(f"{name} is out of bounds for {_BOUND_NAMES[dt]}")
    if not from_ <= to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    if not to - from_ <= hi:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_TYPE_NAMES[dt]}>::max(), but found "
                           f"to={to:g} and from={from_:g} which result in to-from to exceed the limit")
    if a.size:
        _fill(a, _uniform(resolve(generator), a.size, dt, from_, to))


# --- normal_ ---------------------------------------------------------------------------------------------------
class _CheckedFma32:
    """float32 ``fma(a, b, c)`` as one double sum rounded to float, with its terms kept to check.

    The product of two floats is exact in double, so ``p + c`` rounded to double and then to float
    is the fma's correctly rounded result, unless the double sum lies exactly halfway between two
    floats while the true sum does not (the second rounding then breaks a tie that was none), or
    in float's subnormal range (where the halfway points are others). ``all_exact`` says whether
    no fma made so far is such a case; the caller recomputes with the exact ``_fma32`` if one is.
    About 5 numpy calls an fma instead of ~20: ``randn(4, 8)`` computes 22 of them on rows of 8.
    """

    __slots__ = ("terms",)

    def __init__(self) -> None:
        self.terms: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def __call__(self, a: Any, b: Any, c: Any) -> np.ndarray:
        p = np.multiply(np.asarray(a, _F32), np.asarray(b, _F32), dtype=_F64)  # operands rounded to float first
        c = np.asarray(c, _F32)
        s = p + c
        self.terms.append((p, c, s))
        return s.astype(_F32)

    def all_exact(self) -> bool:
        bits = np.concatenate([s.reshape(-1) for _, _, s in self.terms]).view(np.int64)
        if ((bits & 0x7FFFFFFFFFFFFFFF) < 0x3810000000000000).any():  # |s| < 2**-126, zero included
            return False
        halfway = np.flatnonzero((bits & 0x1FFFFFFF) == 0x10000000)  # 1, then 28 zeros below float's last bit
        if not halfway.size:
            return True
        ends = np.cumsum([s.size for _, _, s in self.terms])
        for i in np.unique(np.searchsorted(ends, halfway, "right")).tolist():  # the fmas with a halfway sum
            p, c, s = self.terms[i]
            z = s - p
            err = (p - (s - z)) + (c - z)  # TwoSum: what rounding the double sum lost
            if (((s.view(np.int64) & 0x1FFFFFFF) == 0x10000000) & (err != 0)).any():
                return False
        return True


_F = np.float32
_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
          2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)  # cephes logf


def _log256(x: np.ndarray, fma: Any = _fma32) -> np.ndarray:
    """Compute torch's AVX2 float32 ``log``.

    ``log256_ps`` of ``avx_mathfun.h`` (cephes logf), float32 step by step, with the multiply-adds the
    compiler contracts into fma in torch's AVX2 build.
    """
    x = np.maximum(np.asarray(x, _F), np.array(0x00800000, np.int32).view(_F))  # no denormals
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F) + _F(1)
    m = ((bits & ~0x7F800000) | np.array(0.5, _F).view(np.int32)).view(_F)  # mantissa in [0.5, 1)
    small = m < _F(0.707106781186547524)
    e = e - np.where(small, _F(1), _F(0))
    m = (m - _F(1)) + np.where(small, m, _F(0))
    z = m * m
    y = np.full_like(m, _F(_LOG_P[0]))
    for coef in _LOG_P[1:]:
        y = fma(y, m, coef)
    y = fma(y * m, z, e * _F(-2.12194440e-4))
    y = fma(z, _F(-0.5), y)
    return fma(e, _F(0.693359375), m + y)


def _sincos256(x: np.ndarray, fma: Any = _fma32) -> tuple[np.ndarray, np.ndarray]:
    """Compute torch's AVX2 float32 ``sin`` and ``cos``.

    ``sincos256_ps`` of ``avx_mathfun.h`` (cephes sinf/cosf: reduction by pi/4 in three parts, one of two
    polynomials per octant), float32 step by step with torch's AVX2 build's fma contractions.
    """
    x = np.asarray(x, _F)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _F(1.27323954473516)).astype(np.int32)  # 4 / pi, truncated
    j = (j + 1) & ~1
    y = j.astype(_F)
    sign_sin = sign_sin ^ ((j & 4) != 0)
    sign_cos = (~(j - 2) & 4) != 0
    sin_poly = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = fma(y, _F(dp), x)
    z = x * x
    yc = fma(np.full_like(x, _F(2.443315711809948e-5)), z, _F(-1.388731625493765e-3))
    yc = fma(yc, z, _F(4.166664568298827e-2))
    yc = fma(yc * z, z, -(z * _F(0.5))) + _F(1)
    ys = fma(np.full_like(x, _F(-1.9515295891e-4)), z, _F(8.3321608736e-3))
    ys = fma(ys, z, _F(-1.6666654611e-1))
    ys = fma(ys * z, x, x)
    s, c = np.where(sin_poly, ys, yc), np.where(sin_poly, yc, ys)
    return np.where(sign_sin, -s, s), np.where(sign_cos, -c, c)


def _box_muller_16_float(data: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Apply torch's AVX2 ``NormalFill16<float>`` to rows of 16 uniforms.

    ``NormalFill16<float>`` (the AVX2 one) on rows of 16 float32 uniforms: the first 8 give ``u1``, the last
    8 ``u2``; radius ``sqrt(-2 log(1 - u1))``, angle ``2 pi u2``; cos on the first 8, sin on the next 8, each
    ``fma(n, std, mean)``. Computed with :class:`_CheckedFma32`, again with the exact ``_fma32`` in the
    rare case that one of its sums is no safe one.
    """
    fast = _CheckedFma32()
    values = _normal_16_float(np.asarray(data, _F), mean, std, fast)
    return values if fast.all_exact() else _normal_16_float(np.asarray(data, _F), mean, std, _fma32)


def _normal_16_float(data: np.ndarray, mean: float, std: float, fma: Any) -> np.ndarray:
    """``NormalFill16<float>``'s arithmetic, with ``fma`` for each of its 22 multiply-adds."""
    radius = np.sqrt(_F(-2) * _log256(_F(1) - data[:, :8], fma))
    sin, cos = _sincos256(_F(2.0 * np.pi) * data[:, 8:], fma)
    m, sd = _F(mean), _F(std)
    return np.concatenate([fma(radius * cos, sd, m), fma(radius * sin, sd, m)], axis=1)


def _box_muller_16_double(data: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``NormalFill16<double>`` (scalar): libm log/sqrt/cos/sin on doubles, ``fma(n, std, mean)``."""
    u1, u2 = 1 - data[:, :8], data[:, 8:]
    radius = np.sqrt(-2 * np.log(u1))
    theta = float(np.float32(2.0)) * np.pi * u2
    return np.concatenate([_fma(radius * np.cos(theta), std, mean), _fma(radius * np.sin(theta), std, mean)], axis=1)


def _normal_fill(g: CPUGenerator, n: int, dt: np.dtype, mean: float, std: float) -> np.ndarray:
    """Torch's ``normal_fill`` for ``n >= 16`` contiguous elements, in blocks of 16.

    float and double: uniforms for all ``n`` first (into the output), Box-Muller on each full block, then, if
    ``n`` is no multiple of 16, 16 fresh uniforms for the last 16 places. Half: the opmath (float) path on a
    16-float buffer, a block at a time (so only the full blocks and the tail block draw), rounded to half.
    """
    full = n // 16 * 16
    tail = n % 16 != 0
    if dt == _F16:
        u = g.uniform_float32(full + 16 * tail).reshape(-1, 16)
        values = _box_muller_16_float(u, mean, std)
        out = np.empty(n, _F16)
        out[:full] = values[: full // 16].reshape(-1).astype(_F16)
        if tail:
            out[n - 16:] = values[-1].astype(_F16)
        return out
    block = _box_muller_16_float if dt == _F32 else _box_muller_16_double
    data = g.uniform_float32(n) if dt == _F32 else g.uniform_float64(n)
    data[:full] = block(data[:full].reshape(-1, 16), mean, std).reshape(-1)
    if tail:
        fresh = g.uniform_float32(16) if dt == _F32 else g.uniform_float64(16)
        data[n - 16:] = block(fresh.reshape(1, 16), mean, std).reshape(-1)
    return data


def normal__cpu(self, mean=0.0, std=1.0, *, generator=None):
    """Fill ``self`` with normal draws as torch's ``normal_`` does.

    ``normal_impl_``: std checked, nothing drawn for an empty tensor, a complex one through its real view
    with ``std / sqrt(2)``; then ``normal_kernel``'s two paths.
    """
    a = self._data
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if not a.size:  # CHECK_EMPTY_AND_RETURN comes before the kernel's dtype dispatch
        return self
    if a.dtype.kind == "c":
        a, std = _as_real(a), std / math.sqrt(2)
    _float_check("normal_kernel_cpu", a.dtype)
    g = resolve(generator)
    n = a.size
    if n >= 16 and a.flags.c_contiguous:
        a.reshape(-1)[...] = _normal_fill(g, n, a.dtype, mean, std)
    else:
        _fill(a, _cast(_fma(g.normal_scalar(n), std, mean), a.dtype))
    return self


# --- random_ ---------------------------------------------------------------------------------------------------
_INT_MAX = {np.dtype(t): np.iinfo(t).max for t in (np.int8, np.uint8, np.int16, np.int32, np.int64)}
_BOOL = np.dtype(np.bool_)
_INT64_MIN = -(1 << 63)


def _check_random_dtype(dt: np.dtype, kernel: str) -> None:
    if dt not in _DIGITS and dt not in _INT_MAX and dt != _BOOL:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TORCH_NAME[dt]}\'')


def random__cpu(self, *, generator=None):
    """Fill ``self`` as torch's ``random_()`` does.

    ``uniform_int_distribution<scalar_t>``: ``random64()`` for double/int64, ``random()`` else, modulo
    ``max + 1`` (``2**digits + 1`` for floating types), ``& 1`` for bool.
    """
    a = self._data
    dt = a.dtype
    n = a.size
    if not n:  # CHECK_EMPTY_AND_RETURN comes before the kernel's dtype dispatch
        return self
    _check_random_dtype(dt, "random_kernel_cpu")
    g = resolve(generator)
    wide = dt in (_F64, np.dtype(np.int64))
    v = g.random64(n) if wide else g.random(n)
    if dt == _BOOL:
        values = (v & np.uint64(1)).astype(_BOOL)
    elif dt in _DIGITS:
        values = _cast((v % np.uint64((1 << _DIGITS[dt]) + 1)).astype(np.float64), dt)
    else:
        values = (v % np.uint64(_INT_MAX[dt] + 1)).astype(dt)
    _fill(a, values)
    return self


def _update_from(from_: int, dt: np.dtype) -> int:
    """``update_from<scalar_t>``: the least ``from`` the floating type represents exactly, from above."""
    digits = _DIGITS[dt]
    plus1 = int(_cast(np.array(float(from_ + 1)), dt))
    if plus1 < from_:
        n = abs(from_ + 1).bit_length() - 1
        from_ = plus1 + (1 << (n - digits + 1))
    return from_


def _update_to(to: int, dt: np.dtype) -> int:
    digits = _DIGITS[dt]
    minus1 = int(_cast(np.array(float(to - 1)), dt))
    if minus1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = minus1 - (1 << (n - digits + 1))
    return to


_LIMITS = {_F16: 65504.0, _F32: float(np.finfo(np.float32).max), _F64: float(np.finfo(np.float64).max)}
_BOUND_NAMES = {np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char", np.dtype(np.int16): "short",
                np.dtype(np.int32): "int", np.dtype(np.int64): "long int", _BOOL: "bool", _F16: "c10::Half",
                _F32: "float", _F64: "double"}


def _check_in_range(from_: int, to_inc: int, dt: np.dtype) -> None:
    """``check_from_to_in_range``: both ends fit the dtype."""
    if dt in _DIGITS:
        lo, hi = -_LIMITS[dt], _LIMITS[dt]
    elif dt == _BOOL:
        lo, hi = 0, 1
    else:
        lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    for value, name in ((from_, "from"), (to_inc, "to - 1")):
        if not lo <= value <= hi:
            raise RuntimeError(f"{name} is out of bounds for {_BOUND_NAMES[dt]}")
    if dt in _DIGITS:  # torch's WARN_OUT_OF_BOUNDS: beyond 2**digits a float dtype skips integers
        digits = _DIGITS[dt]
        for value, name in ((from_, "from"), (to_inc, "to - 1")):
            if not -(1 << digits) <= value <= 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{_BOUND_NAMES[dt]} can support discrete uniform distribution only within this range. "
                              "This warning will become an error in version 1.7 release, please fix the code in "
                              "advance", UserWarning, stacklevel=2)


def _random_from_to(self: Tensor, range_: int, base: int, generator: Any) -> Tensor:
    """Fill ``self`` with ``base + v % range`` as torch's ``random_(from, to)`` does.

    ``uniform_int_from_to_distribution``: ``(v % range) + base``, v from ``random64()`` when the range
    needs it (int64/double/float at 2**32 or more) else from ``random()``.
    """
    a = self._data
    n = a.size
    if not n:
        return self
    g = resolve(generator)
    wide = a.dtype in (np.dtype(np.int64), _F64, _F32) and range_ >= 1 << 32
    v = g.random64(n) if wide else g.random(n)
    if range_ >= 1 << 64:  # the full 64-bit range: v itself, as int64
        values = v.view(np.int64)
    else:  # static_cast<int64_t>((v % range) + base): uint64 arithmetic, wrapping
        values = ((v % np.uint64(range_)) + np.uint64(base & ((1 << 64) - 1))).view(np.int64)
    if a.dtype == _BOOL:
        out = values != 0
    elif a.dtype in _DIGITS:
        out = values.astype(_F32).astype(_F16) if a.dtype == _F16 else values.astype(a.dtype)
    else:
        out = values.astype(a.dtype)
    _fill(a, out)
    return self


def random__from_cpu(self, from_, to=None, *, generator=None):
    """Fill ``self`` as torch's ``random_(from, to)`` does.

    ``random_from_to_impl``: ``[from, to)``, ``[from, max]`` (``to`` None) or all 64 bits (``from`` the int64
    minimum, ``to`` None); its checks in its order, nothing drawn for an empty tensor.
    """
    dt = self._data.dtype
    if to is not None:
        if not from_ < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        if dt in _DIGITS:
            from_, to = _update_from(from_, dt), _update_to(to, dt)
            if not from_ < to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={from_} >= to={to}")
        elif dt not in _INT_MAX and dt != _BOOL:
            raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
        _check_in_range(from_, to - 1, dt)
        return _random_from_to(self, to - from_, from_, generator)
    if from_ != _INT64_MIN:
        if dt in _DIGITS:
            to_inc = 1 << _DIGITS[dt]
            from_ = _update_from(from_, dt)
            if not from_ < to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                   f"casted to dtype, but got from={from_} > to_inc={to_inc}")
        elif dt in _INT_MAX or dt == _BOOL:
            to_inc = 1 if dt == _BOOL else _INT_MAX[dt]
        else:
            raise RuntimeError("random_from_to_impl handles only integral, floating-point and boolean types")
        _check_in_range(from_, to_inc, dt)
        return _random_from_to(self, to_inc - from_ + 1, from_, generator)
    if not self._data.size:
        return self
    if dt not in _INT_MAX and dt not in (_F32, _F64):  # AT_DISPATCH_ALL_TYPES_AND(BFloat16): no Half, no Bool
        raise NotImplementedError(f'"random_full_64_bits_range_kernel_cpu" not implemented for \'{_TORCH_NAME[dt]}\'')
    if dt not in (np.dtype(np.int64), _F64, _F32):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
    return _random_from_to(self, 1 << 64, 0, generator)


def random__to_cpu(self, to, *, generator=None):
    return random__from_cpu(self, 0, to, generator=generator)


# --- exponential_, bernoulli_ ----------------------------------------------------------------------------------
def exponential__cpu(self, lambd=1.0, *, generator=None):
    a = self._data
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if not a.size:  # CHECK_EMPTY_AND_RETURN comes before the kernel's dtype check
        return self
    if a.dtype not in _DIGITS:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_TORCH_NAME[a.dtype]}")
    g = resolve(generator)
    if a.size:
        u = g.uniform_float64(a.size)
        _fill(a, _cast((-1.0 / lambd) * np.log1p(-u), a.dtype))
    return self


def bernoulli_draws(g: CPUGenerator, p: np.ndarray, double: bool) -> np.ndarray:
    """Draw one ``bernoulli_distribution<T>(p)`` per element.

    ``bernoulli_distribution<T>(p)`` per element: ``uniform < p`` with a double (53-bit, ``random64``)
    or float (24-bit, ``random``) uniform.
    """
    u = g.uniform_float64(p.size) if double else g.uniform_float32(p.size)
    return u < p.reshape(-1).astype(np.float64 if double else np.float32)


def bernoulli__tensor_cpu(self, p, *, generator=None):
    """Fill ``self`` with 0/1 draws of probabilities ``p`` (``bernoulli_.Tensor``).

    ``bernoulli_(Tensor p)``: nothing for an empty ``self``; ``p`` expanded to ``self``'s shape
    (``expand_inplace``, torch's errors), then per element, in ``self``'s memory order, a double uniform for a
    double ``p``, a float one otherwise.
    """
    a = self._data
    if not a.size:
        return self
    _check_random_dtype(a.dtype, "bernoulli_tensor_cpu_self_")
    pa = p._data
    if pa.ndim > a.ndim:
        raise RuntimeError(f"expand({_TENSOR_TYPES.get(pa.dtype, 'torch.Tensor')}{{{list(pa.shape)}}}, "
                           f"size={list(a.shape)}): the number of sizes provided ({a.ndim}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({pa.ndim})")
    shape, strides = expand_geometry(pa.shape, pa.strides, a.shape)
    pb = np.lib.stride_tricks.as_strided(pa, shape, strides, writeable=False)
    if pa.dtype not in _DIGITS:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_TORCH_NAME[pa.dtype]}\'')
    perm = _order(a)
    draws = bernoulli_draws(resolve(generator), np.ascontiguousarray(pb.transpose(perm)), pa.dtype == _F64)
    _fill(a, draws.astype(a.dtype))
    return self


_TENSOR_TYPES = {_F16: "torch.HalfTensor", _F32: "torch.FloatTensor", _F64: "torch.DoubleTensor",
                 np.dtype(np.int64): "torch.LongTensor", np.dtype(np.int32): "torch.IntTensor"}


# --- normal with tensor mean/std (normal_impl / normal_out_impl): at:: calls, so not leaf kernels -------------
def normal_tensor_float_cpu(mean, std=1.0, *, generator=None):
    """``normal(Tensor mean, float std)``: a contiguous ``empty_like(mean)``, ``normal_(0, std)``, ``add_(mean)``."""
    R.normal_std_check(std)
    out = A.empty_like.default(mean, memory_format=contiguous_format)
    A.normal_.default(out, 0.0, std, **_gen(generator))
    return A.add_.Tensor(out, mean)


def normal_float_tensor_cpu(mean, std, *, generator=None):
    """Torch's CPU ``normal.float_Tensor``.

    ``normal(float mean, Tensor std)``: a contiguous ``empty_like(std)``, ``normal_(0, 1)``, ``mul_(std)``,
    ``add_`` of ``mean`` as a 0-dim tensor of the result's dtype.

    """
    R.normal_tensor_std_check(std)
    out = A.empty_like.default(std, memory_format=contiguous_format)
    A.normal_.default(out, 0.0, 1.0, **_gen(generator))
    A.mul_.Tensor(out, std)
    return A.add_.Tensor(out, A.full.default([], mean, dtype=out.dtype, device=out.device))


def normal_tensor_tensor_cpu(mean, std, *, generator=None):
    """Torch's CPU ``normal.Tensor_Tensor``.

    ``normal(Tensor mean, Tensor std)``: ``empty`` of the broadcast shape in ``mean``'s dtype, ``normal_(0, 1)``,
    ``mul_(std)``, ``add_(mean)``.

    """
    R.normal_tensor_std_check(std)
    shape = broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    out = A.empty.memory_format(list(shape), dtype=mean.dtype, device=mean.device)
    A.normal_.default(out, 0.0, 1.0, **_gen(generator))
    A.mul_.Tensor(out, std)
    return A.add_.Tensor(out, mean)


# --- multinomial (Distributions.cpp multinomial_out, cpu/MultinomialKernel.cpp) --------------------------------
def multinomial_cpu(self, num_samples, replacement=False, *, generator=None):
    """Torch's CPU ``multinomial``: ``num_samples`` category indices per row of ``self`` (1 or 2 dims).

    Without replacement, or for one sample, torch's exponential trick: ``q = empty_like(self).exponential_()``,
    ``self / q``, then ``argmax`` (one sample) or ``topk`` indices. With replacement: per row, the cumulative
    sums normalised in the dtype (float for Half), one double uniform per sample, the first bucket whose
    cumulative value is not below it (the last bucket counted as 1).
    """
    R.multinomial_check(self, num_samples, replacement)
    shape = [num_samples] if self.dim() == 1 else [self.shape[0], num_samples]
    if not int(np.prod(shape)):  # nothing to sample (no rows); an empty row is an error below
        return A.empty.memory_format(shape, dtype=_LONG, device=self.device)
    if not replacement or num_samples == 1:
        p = self._data
        if not (np.all(p >= 0) and np.all(p < np.inf)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(p.sum(axis=-1) == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = A.exponential_.default(A.empty_like.default(self), 1.0, **_gen(generator))
        q = A.div.Tensor(self, q)
        if num_samples == 1:
            return A.argmax.default(q, -1, True)
        return A.topk.default(q, num_samples)[1]
    p = self._data.reshape(1 if self.dim() == 1 else self.shape[0], self.shape[-1])
    acc = _F32 if p.dtype == _F16 else p.dtype
    out = np.empty((p.shape[0], num_samples), np.int64)
    g = resolve(generator)
    for row, probs in enumerate(p.astype(acc)):
        bad = ~(probs >= 0) | ~np.isfinite(probs)
        if bad.any():  # torch checks element by element: the first bad one names the error
            first = probs[np.argmax(bad)]
            kind = "encountering probability entry < 0" if not first >= 0 else \
                "encountering probability entry = infinity or NaN"
            raise RuntimeError(f"invalid multinomial distribution ({kind})")
        cum = np.cumsum(probs, dtype=acc)  # sequential sums, in the accumulate type
        total = cum[-1] if cum.size else acc.type(0)
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = (cum / total).astype(acc)
        cum[-1] = 1
        u = g.uniform_float64(num_samples)
        out[row] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return wrap_cpu(out.reshape(shape))




def _gen(generator: Any) -> dict[str, Any]:
    return {} if generator is None else {"generator": generator}


NOT_LEAF = ("normal.Tensor_float", "normal.float_Tensor", "normal.Tensor_Tensor", "multinomial")

KERNELS: dict[str, Any] = {
    "normal.Tensor_float": normal_tensor_float_cpu, "normal.float_Tensor": normal_float_tensor_cpu,
    "normal.Tensor_Tensor": normal_tensor_tensor_cpu, "multinomial": multinomial_cpu,
    "uniform_": uniform__cpu, "normal_": normal__cpu, "random_": random__cpu, "random_.from": random__from_cpu,
    "random_.to": random__to_cpu, "exponential_": exponential__cpu, "bernoulli_.Tensor": bernoulli__tensor_cpu,
}
