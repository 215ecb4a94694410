"""numpy's own BLAS, reached through ctypes: the routines numpy links but does not expose.

numpy's wheels link OpenBLAS (``scipy_openblas64_``, 64-bit integers). Its extension module
resolves those symbols, so ``dlsym`` on that module finds them without loading any library numpy
has not loaded. Invariant: every routine here is looked up by its ILP64 name only (its integer
arguments are known to be 64-bit) and kept only after a check at load shows it computing what the
numpy expression it replaces computes; otherwise the routine is absent and callers keep numpy.
torch calls its BLAS from C++ (``aten/src/ATen/native/BlasKernel.cpp``); this module has no
torch counterpart.

* :func:`routine` finds one routine by its names.
* :func:`transpose_into` is OpenBLAS's ``?omatcopy``: a cache-blocked out-of-place transpose, 2.6 us
  for 256x64 floats where numpy's ``np.copyto(out, a.T)`` takes 10.6 us. It scales by ``alpha = 1``,
  so a signaling NaN may come back quiet (OpenBLAS's kernels here do that); arithmetic results, what
  it is used for, never hold one.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _library() -> ctypes.CDLL | None:
    """The library of numpy's extension module (its BLAS symbols resolve through it), or None."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    try:
        return ctypes.CDLL(umath.__file__)
    except OSError:
        return None


_LIB = _library()


def routine(names: tuple[str, ...], argtypes: tuple[Any, ...]) -> Any:
    """The first of ``names`` numpy's BLAS exports, typed with ``argtypes`` (returning nothing), or None."""
    for name in names:
        f = getattr(_LIB, name, None) if _LIB is not None else None
        if f is not None:
            f.restype = None
            f.argtypes = argtypes
            return f
    return None


# A writable buffer's address: ``addressof(from_buffer(a))``, 0.3 us, where ``a.ctypes.data``
# costs 1 us; ``from_buffer`` raises TypeError for a read-only array.
addressof, from_buffer = ctypes.addressof, ctypes.c_char.from_buffer
_ROW_MAJOR, _TRANS = 101, 112  # CBLAS_ORDER.CblasRowMajor, CBLAS_TRANSPOSE.CblasTrans
_I64 = ctypes.c_int64


def _omatcopy() -> dict[np.dtype, Any]:
    """``{float32: somatcopy, float64: domatcopy}``, each kept only if it transposes exactly."""
    found = {}
    for dt, letter, scalar in ((_F32, "s", ctypes.c_float), (_F64, "d", ctypes.c_double)):
        f = routine((f"scipy_cblas_{letter}omatcopy64_", f"cblas_{letter}omatcopy64_"),
                    (ctypes.c_int, ctypes.c_int, _I64, _I64, scalar, ctypes.c_void_p, _I64, ctypes.c_void_p, _I64))
        if f is not None and _transposes(f, dt):
            found[dt] = f
    return found


def _transposes(f: Any, dt: np.dtype) -> bool:
    """Whether ``f`` gives ``a.T`` bit for bit (quiet NaN payloads, signed zeros, every shape's edges)."""
    rng = np.random.default_rng(0)
    for rows, cols in ((1, 1), (1, 7), (5, 1), (17, 33), (64, 256), (130, 3)):
        a = rng.standard_normal((rows, cols)).astype(dt)
        a.flat[::5] = -0.0
        a.flat[1::7] = np.frombuffer(bytes.fromhex("0100c0ff" if dt == _F32 else "010000000000f8ff"), dt)[0]
        out = np.empty((cols, rows), dt)
        f(_ROW_MAJOR, _TRANS, rows, cols, 1.0, addressof(from_buffer(a)), cols, addressof(from_buffer(out)), rows)
        if out.tobytes() != np.ascontiguousarray(a.T).tobytes():
            return False
    return True


_OMATCOPY = _omatcopy()


def transpose_into(a: np.ndarray, out: np.ndarray) -> bool:
    """``out[...] = a.T``; False (``out`` untouched) where numpy's BLAS cannot.

    ``a``: a C-contiguous 2-d float32 or float64 array, not read-only; ``out``: a writable
    C-contiguous array of the transposed shape and the same dtype, not overlapping ``a`` (both
    checked but the overlap). A signaling NaN in ``a`` may arrive quiet.
    """
    f = _OMATCOPY.get(a.dtype)
    if f is None or not a.size or out.dtype is not a.dtype or out.shape != a.shape[::-1] \
            or not (a.flags.c_contiguous and out.flags.c_contiguous):
        return False
    try:
        src, dst = addressof(from_buffer(a)), addressof(from_buffer(out))
    except TypeError:  # read-only
        return False
    rows, cols = a.shape
    f(_ROW_MAJOR, _TRANS, rows, cols, 1.0, src, cols, dst, rows)  # ctypes releases the GIL, as a ufunc does
    return True
