"""The gamma family's numerics for the CPU kernels: ``lgamma``, ``digamma``, ``trigamma``, ``polygamma``, ``erfinv``.

Mirrors ``aten/src/ATen/native/Math.h`` (``calc_digamma``, ``calc_trigamma``, ``calc_polygamma``,
``zeta``, ``calc_erfinv``), which torch's CPU kernels run element by element: the same series,
constants and special cases, in the element's dtype (float32 in float32, as torch's float
overloads; ``zeta`` in double, its accumulation type). ``lgamma`` is libm's (``math.lgamma``), a
pole giving ``inf``. Invariant: each function takes and returns arrays of one floating dtype
(half is computed in float by the caller); no dispatcher call.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["digamma", "erfinv", "lgamma", "polygamma"]


def _lgamma_scalar(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # a pole (0, -1, -2, ...): +inf, as std::lgamma
        return math.inf


_lgamma_each = np.frompyfunc(_lgamma_scalar, 1, 1)


def lgamma(a: np.ndarray) -> np.ndarray:
    """``std::lgamma`` of each element (computed in double, rounded to the array's dtype)."""
    return np.asarray(_lgamma_each(a.astype(np.float64)), dtype=a.dtype)


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)


def digamma(a: np.ndarray) -> np.ndarray:
    """``calc_digamma``: reflection below 0, the recurrence up to 10, then the asymptotic series."""
    t = a.dtype.type
    x = a.copy()
    negative = (x < 0) & (x != np.trunc(x))
    reflection = np.zeros_like(x)
    if negative.any():
        # pi / tan(pi * r) on the fractional part r, in double (then rounded, in the float overload)
        fraction = np.modf(x[negative].astype(np.float64))[0]
        reflection[negative] = (np.pi / np.tan(np.pi * fraction)).astype(a.dtype)
        x[negative] = t(1) - x[negative]
    result = np.zeros_like(x)
    for _ in range(10):  # while (x < 10): result -= 1 / x; x += 1 (at most ten steps for x > 0)
        below = x < 10
        if not below.any():
            break
        result[below] -= t(1) / x[below]
        x[below] += t(1)
    y = np.zeros_like(x)
    small = x < t(1.0e17)
    z = t(1) / (x[small] * x[small])
    series = np.full_like(z, t(_DIGAMMA_A[0]))
    for coefficient in _DIGAMMA_A[1:]:  # polevl
        series = series * z + t(coefficient)
    y[small] = z * series
    value = np.where(x == 10, result + t(_PSI_10), result + np.log(x) - t(0.5) / x - y)
    value = value - reflection
    value = np.where(a == 0, np.copysign(t(np.inf), -a), value)
    return np.where((a < 0) & (a == np.trunc(a)), t(np.nan), value).astype(a.dtype, copy=False)


def _trigamma(a: np.ndarray) -> np.ndarray:
    """``calc_trigamma``: reflection below 0.5 (with ``sin`` of pi in the dtype), six steps, the series."""
    t = a.dtype.type
    pi = t(math.pi)
    x = a.copy()
    sign = np.ones_like(x)
    result = np.zeros_like(x)
    low = x < t(0.5)
    s = np.sin(pi * x[low])
    result[low] -= (pi * pi) / (s * s)
    x[low] = t(1) - x[low]
    sign[low] = t(-1)
    for _ in range(6):
        result += t(1) / (x * x)
        x += t(1)
    ixx = t(1) / (x * x)
    result += (t(1) + t(1) / (t(2) * x) + ixx * (t(1 / 6) - ixx * (t(1 / 30) - ixx * t(1 / 42)))) / x
    return sign * result


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16


def _zeta_scalar(x: float, q: float) -> float:
    """Cephes' Hurwitz ``zeta(x, q)``, as ``Math.h`` has it, in double."""
    if x == 1:
        return math.inf
    if x < 1:
        return math.nan
    if q <= 0:
        if q == float(np.floor(q)):  # -inf included
            return math.inf
        if x != float(np.floor(x)):
            return math.nan
    with np.errstate(all="ignore"):
        s = float(np.power(q, -x))
        a, i, b = q, 0, 0.0
        while i < 9 or a <= 9.0:
            i += 1
            a += 1.0
            b = float(np.power(a, -x))
            s += b
            if -_MACHEP * s < b < _MACHEP * s:
                return s
        w = a
        s += float(np.float64(b) * w / (x - 1.0))
        s -= 0.5 * b
        a, k = 1.0, 0.0
        for coefficient in _ZETA_A:
            a *= x + k
            b /= w
            term = a * b / coefficient
            s = s + term
            if abs(term / s) < _MACHEP:
                return s
            k += 1.0
            a *= x + k
            b /= w
            k += 1.0
    return s


_zeta_each = np.frompyfunc(_zeta_scalar, 2, 1)


def polygamma(n: int, a: np.ndarray) -> np.ndarray:
    """``polygamma(n, x)``: ``digamma``, ``trigamma``, else ``(-1)^(n+1) n! zeta(n + 1, x)`` in the dtype."""
    if n == 0:
        return digamma(a)
    if n == 1:
        return _trigamma(a)
    t = a.dtype.type
    factor = t(1 if n % 2 else -1) * np.exp(t(_lgamma_scalar(float(t(n) + t(1)))))
    zeta = np.asarray(_zeta_each(float(n + 1), a.astype(np.float64)), dtype=np.float64).astype(a.dtype)
    return (factor * zeta).astype(a.dtype, copy=False)


_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (3.543889200, 1.637067800)
_erf_each = np.frompyfunc(math.erf, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_erf_each(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


def erfinv(y: np.ndarray) -> np.ndarray:
    """``calc_erfinv``: a rational first guess (central or tail), then two Newton steps."""
    t = y.dtype.type
    a, b, c, d = ([t(v) for v in coefficients] for coefficients in (_ERFINV_A, _ERFINV_B, _ERFINV_C, _ERFINV_D))
    y_abs = np.abs(y)
    with np.errstate(all="ignore"):
        z = y * y
        central = y * ((((a[3] * z + a[2]) * z + a[1]) * z + a[0])
                       / ((((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + t(1)))
        w = np.sqrt(-np.log((t(1) - y_abs) / t(2)))
        tail = np.copysign(((c[3] * w + c[2]) * w + c[1]) * w + c[0], y) / ((d[1] * w + d[0]) * w + t(1))
        x: Any = np.where(y_abs <= t(0.7), central, tail)
        slope = t(2.0) / t(math.sqrt(math.pi))
        for _ in range(2):
            x = x - (_erf(x) - y) / (slope * np.exp(-x * x))
    x = np.where(y_abs == 1, np.copysign(t(np.inf), y), x)
    return np.where(y_abs > 1, t(np.nan), x).astype(y.dtype, copy=False)
