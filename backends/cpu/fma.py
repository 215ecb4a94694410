"""Fused multiply-add as torch's CPU kernels compute it: ``a + alpha * b`` rounded once.

torch's ``add``/``sub`` with an ``alpha`` compute ``self + alpha * other`` for float and double
with ``vec::fmadd`` (``ufunc::add`` in ``aten/src/ATen/native/ufunc/add.h``, vectorized by
``BinaryOpsKernel.cpp``): the product is never rounded on its own. numpy has no fma ufunc, and
``a + alpha * b`` in numpy rounds twice, so about one element in fifty differs from torch by an ulp
(SGD's ``p.add_(g, alpha=-lr)`` on every step). Invariant: :func:`axpy` rounds once or does
nothing; :func:`add_scaled` rounds once where :func:`axpy` can, and otherwise as numpy does.

* :func:`axpy` is level-1 BLAS ``?axpy`` (``y += alpha * x``) from the OpenBLAS numpy links, found
  through numpy's own extension module (blas.py: no library numpy has not loaded), and kept only where a
  check at load shows its kernel fusing every element (``_fuses``): OpenBLAS's AVX-512 kernels do,
  and then equal torch bit for bit (every length from 1 to 129, and 200,704 values, in float and
  double); its AVX2 kernels round twice in the last elements, older ones everywhere. On 256x784
  floats the call is one pass, 23.6 us against numpy's two passes' 38 us (torch 21.5 us).
* :func:`fma32` is float32's fma in numpy alone (randn's exact path): the product is exact in
  double and the double sum is rounded to odd, so rounding it to float is the single rounding.
* :func:`add_scaled` is ``a + alpha * b`` broadcast, for the general path of add and sub.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .blas import addressof as _addressof
from .blas import from_buffer as _from_buffer
from .blas import routine

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_F32_ZERO = 2.0 ** -150  # the largest magnitude float32 rounds to zero


def _blas_axpy() -> dict[np.dtype, Any]:
    """``{float32: saxpy, float64: daxpy}`` from numpy's BLAS (ILP64 names only), or ``{}`` where they are not found."""
    found = {}
    for dt, letter, scalar in ((_F32, "s", ctypes.c_float), (_F64, "d", ctypes.c_double)):
        f = routine((f"scipy_cblas_{letter}axpy64_", f"cblas_{letter}axpy64_"),
                    (ctypes.c_int64, scalar, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64))
        if f is not None:
            found[dt] = f
    return found


def _fuses(f: Any, dt: np.dtype) -> bool:
    """Whether BLAS ``f`` rounds ``y + alpha * x`` once on every element, tails and thread chunks included.

    ``alpha = x = 1 + e`` and ``y = -1`` (``e`` 2**-12 for float, 2**-27 for double): the product
    ``1 + 2e + e*e`` rounded alone loses ``e*e``, so every element tells a fused sum (``2e + e*e``)
    from two roundings (``2e``).
    """
    e = 2.0 ** (-12 if dt == _F32 else -27)
    for n in (*range(1, 70), 1000, 65_537):  # the last one long enough for OpenBLAS's threads
        x, y = np.full(n, 1 + e, dt), np.full(n, -1, dt)
        f(n, 1 + e, _addressof(_from_buffer(x)), 1, _addressof(_from_buffer(y)), 1)
        if not (y == dt.type(2 * e + e * e)).all():
            return False
    return True


_AXPY = {dt: f for dt, f in _blas_axpy().items() if _fuses(f, dt)}


def axpy(alpha: float, x: np.ndarray, y: np.ndarray) -> bool:
    """``y += alpha * x`` in place, rounded once; False (``y`` untouched) where it cannot be.

    That is: without a fusing BLAS, or for an alpha that is zero in the dtype (BLAS would skip the sum).

    ``x`` and ``y``: C-contiguous float32 or float64 arrays of one shape and dtype, not partly
    overlapping. ``alpha`` is rounded to the dtype first, as torch's kernel converts it to its ``opmath_t``.
    """
    f = _AXPY.get(y.dtype)
    # BLAS returns at once for a zero alpha (NaN * 0 is lost): alpha rounds to zero in float32 when
    # |alpha| <= 2**-150 (half the least subnormal, a tie to even); compared as Python numbers,
    # 0.06 us where making the dtype's scalar took 0.3
    if f is None or alpha == 0 or (y.dtype is _F32 and -_F32_ZERO <= alpha <= _F32_ZERO):
        return False
    if not y.size:
        return True
    # addresses through ctypes views of the buffers (blas.py)
    try:
        py = _addressof(_from_buffer(y))
    except TypeError:  # a read-only y: the caller's numpy path raises numpy's error
        return False
    try:
        px = _addressof(_from_buffer(x))
    except TypeError:  # a read-only x
        px = x.ctypes.data
    f(y.size, alpha, px, 1, py, 1)  # ctypes releases the GIL, as a ufunc does
    return True


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """Return the float32 ``fma(a, b, c)``, correctly rounded, broadcast.

    The product of two floats is exact in double; the double sum is rounded to odd there (an
    error-free sum says which way the rounding went), so the final rounding to float is the single
    rounding of a real fma.
    """
    p = np.asarray(a, _F32).astype(_F64) * np.asarray(b, _F32).astype(_F64)
    p, c = np.broadcast_arrays(p, np.asarray(c, _F32).astype(_F64))
    s = p + c
    z = s - p
    err = (p - (s - z)) + (c - z)
    inexact_even = (err != 0) & ((s.view(np.int64) & 1) == 0) & np.isfinite(s)
    s = np.where(inexact_even, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(_F32)


def add_scaled(a: np.ndarray, b: np.ndarray, alpha: Any, dt: np.dtype) -> np.ndarray:
    """``a + alpha * b`` (broadcast, dtype ``dt``): rounded once by :func:`axpy` where it can, else as numpy.

    A new array (C-contiguous from :func:`axpy`); elsewhere the product is rounded to ``dt`` first.
    """
    if dt in _AXPY and a.dtype is dt and b.dtype is dt:
        if a.shape == b.shape:  # no broadcast: numpy's broadcast_to costs ~2 us a call
            r = np.array(a, order="C")
            x = b if b.flags.c_contiguous else np.ascontiguousarray(b)
        else:
            shape = np.broadcast_shapes(a.shape, b.shape)
            r = np.array(np.broadcast_to(a, shape), order="C")
            x = np.ascontiguousarray(np.broadcast_to(b, shape))
        if axpy(alpha, x, r):
            return r
    return np.add(a, np.multiply(b, dt.type(alpha)), dtype=dt)
