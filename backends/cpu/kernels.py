"""CPU kernels: numpy implementations of the aten operators, one plain function per overload.

Semantics follow ``aten/src/ATen/native`` (BinaryOps, UnaryOps, ReduceOps, LinearAlgebra, SoftMax,
Loss, TensorShape, TensorFactories, RangeFactories): type promotion, broadcasting, in-place cast
rules and error texts are torch's, numpy does the arithmetic. Invariants: every kernel returns
tensors made by ``wrap_cpu`` over an ``ndarray`` (never a numpy scalar), and view kernels return
numpy views of their input's memory, never copies. Kernel names are ``<name>_<overload>_cpu``
(``add.Tensor`` -> ``add_tensor_cpu``, ``add_.Tensor`` -> ``add__tensor_cpu``).
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from dispatchcore import dtypes
from dispatchcore.dtypes import WrappedNumber as _WrappedNumber
from dispatchcore.dtypes import checked_number as _checked_number
from dispatchcore.native.explicit import check_to_copy_layout
from dispatchcore.shapes import broadcast_shapes, compute_stride, infer_size, infer_size_dv
from dispatchcore.tensor import wrap_cpu

from . import fma
from . import generator as _random
from .overlap import assert_no_internal_overlap as _assert_no_internal_overlap
from .overlap import is_non_overlapping_and_dense as _non_overlapping_and_dense

# Note [Fast paths]: the hot kernels (add, mul, relu, sum, mm, views, ...) first try the common
# case (operands of one dtype, no alpha) with one numpy call and a cheap 0-d guard; add, sub,
# mul and div also take two dimensioned tensors of different dtypes (``mixed``). Every other
# case (0-d promotion, Python scalars, errors, floating-point warnings) falls to the general slow
# path of its family (``_binary``, ``_unary``, ...), which is written for clarity, not speed.
# A wrapped number (``x * 2``: See Note [Wrapped numbers] in dispatchcore/_composites.py)
# of another dtype than the tensor is used as the Python number it was, which numpy treats as
# a weak scalar (NEP 50), as torch's promotion does where ``fast_scalar`` allows.

# Note [Quiet floating-point errors]: torch computes inf and nan silently (1/0, log(0)); numpy
# reports them as RuntimeWarnings. ``register()`` turns RuntimeWarnings raised in this module into
# errors (``QUIET_FILTER``), so the fast paths catch them for free when nothing goes wrong and
# redo the op in the slow path under ``np.errstate(all="ignore")``. A kernel that writes into
# existing memory with one ufunc call may ignore the exception: numpy raises it only after the
# whole output has been written.
QUIET_FILTER = {"action": "error", "category": RuntimeWarning, "module": __name__.replace(".", r"\.")}


class quiet:
    """``np.errstate(all="ignore")`` at a third of its cost: the error state is built once.

    ``np.errstate`` builds numpy's error-handling object on every entry (~1.4 us); this sets the
    same context variable to one made at import (~0.5 us), and restores it on exit. Without
    numpy's ``_extobj_contextvar`` (another numpy than 2.x) it is ``np.errstate`` itself.

    Example:
        >>> with quiet():
        ...     np.float32(1) / np.float32(0)
        np.float32(inf)
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _EXTOBJ.set(_IGNORE_ALL)

    def __exit__(self, *exc: object) -> None:
        _EXTOBJ.reset(self._token)


try:
    from numpy._core._ufunc_config import _extobj_contextvar as _EXTOBJ
    from numpy._core._ufunc_config import _make_extobj

    _IGNORE_ALL = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # pragma: no cover - numpy 1.x or a future layout
    quiet = lambda: np.errstate(all="ignore")  # type: ignore[misc, assignment]  # noqa: E731

_nd = np.ndarray
_asarray = np.asarray
_empty = np.empty
_add, _sub, _mul, _div, _pow = np.add, np.subtract, np.multiply, np.true_divide, np.power
_maximum, _minimum, _neg = np.maximum, np.minimum, np.negative
_add_reduce = np.add.reduce
# numpy's functions without their __array_function__ hop (NEP 18's ``_implementation``, ~0.3 us a
# call); the kernels pass them plain ndarrays only
_copyto, _where, _concatenate, _empty_like, _argmax, _take_along_axis = (
    getattr(f, "_implementation", f)
    for f in (np.copyto, np.where, np.concatenate, np.empty_like, np.argmax, np.take_along_axis))
_FP_ERRORS = (RuntimeWarning, FloatingPointError)
_FAST_ERRORS = (ValueError, TypeError, OverflowError, RuntimeWarning, FloatingPointError)
_INT64_MAX_D = float(2**63 - 1)  # INT64_MAX as a double (2**63), as torch compares sizes
_ONE = 1  # `alpha is _ONE`: CPython caches small ints, so this is True for 1 and False for True/1.0

_BOOL, _U8, _I8, _I16 = np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)
_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)
_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_ALL = (_BOOL, _U8, _I8, _I16, _I32, _I64, _F16, _F32, _F64, _C64, _C128)

# c10::toString(ScalarType) and the caffe2::TypeMeta names (checked_convert's: dtypes.checked_number)
_TORCH_NAME = {dt: dtypes.SCALAR_TYPE_NAMES[dt.name] for dt in _ALL}
_CPP_NAME = {dt: dtypes.TYPEMETA_NAMES[dt.name] for dt in _ALL}
_ZERO = {dt: np.zeros((), dt) for dt in _ALL}  # np.maximum(x, zero-d array) beats a Python 0
_F32_MAX = float(np.finfo(np.float32).max)
# bounds only: False means no byte in common. The C function itself: numpy's public name first
# runs its __array_function__ dispatcher (Python), 0.42 -> 0.21 us a call
_may_share_memory = getattr(np.may_share_memory, "_implementation", np.may_share_memory)
# torch's ScalarType enum values, for dtype arguments given as ints (schema defaults are ints)
_SCALAR_TYPE_NUMBERS = {0: _U8, 1: _I8, 2: _I16, 3: _I32, 4: _I64, 5: _F16, 6: _F32, 7: _F64,
                        9: _C64, 10: _C128, 11: _BOOL}
_MEMORY_FORMATS = {0: "contiguous_format", 1: "preserve_format", 2: "channels_last", 3: "channels_last_3d"}
_PY_SCALARS = (bool, int, float, complex)

_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension "
               "spans across two contiguous subspaces). Use .reshape(...) instead.")
_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {}, which does not match the "
    "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will "
    "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
    "it, inplace, to zero elements with t.resize_(0).")


# --- small helpers --------------------------------------------------------------------------------
def _arr(r: Any) -> np.ndarray:
    """Numpy returns scalars for 0-d results; kernels must return arrays."""
    return r if r.__class__ is _nd else _asarray(r)


def _result(r: Any) -> np.ndarray:
    """A new result in torch's contiguous layout (reductions, matmul, softmax allocate contiguous).

    numpy may order a result like its input, and gives empty arrays zero strides; both are fixed
    with a copy, and only then.
    """
    r = _arr(r)
    if r.size and (r.ndim < 2 or r.flags.c_contiguous and (1 not in r.shape
                                                            or r.strides == _c_byte_strides(r.shape, r.itemsize))):
        return r
    out = _new(r.shape, r.dtype)
    _copyto(out, r)
    return out


def _default_np() -> np.dtype:
    return dtypes.get_default_dtype().np


def _np_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype of a ``ScalarType?`` argument (None: the default dtype)."""
    if dtype is None:
        return dtypes.get_default_dtype().np
    np_dtype = getattr(dtype, "np", None)
    if np_dtype is not None:
        return np_dtype
    if type(dtype) is int:
        return _SCALAR_TYPE_NUMBERS[dtype]
    return np.dtype(dtype)


def _shape_str(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _not_implemented(kernel: str, dt: np.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_TORCH_NAME[dt]}\'')


def _item(value: Any) -> Any:
    """A Python number from a ``Scalar`` argument (0-d tensors and numpy scalars allowed)."""
    if isinstance(value, _PY_SCALARS):
        return value
    data = getattr(value, "_data", None)
    if data is not None:
        return data.item()
    item = getattr(value, "item", None)
    return item() if item is not None else value


def _wrap_dim(dim: int, ndim: int) -> int:
    """Mirror ``maybe_wrap_dim`` (a 0-d tensor accepts dims 0 and -1)."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim else 0


def _reduce_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """Wrapped reduction dims; None means all (``dim`` None or empty). Rejects duplicates as torch."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return None
    seen: list[int] = []
    for d in dim:
        w = _wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return tuple(seen) if ndim else ()


def _can_cast(frm: np.dtype, to: np.dtype) -> bool:
    """Mirror ``c10::canCast``: no complex->real, float->integral or non-bool->bool."""
    fk, tk = frm.kind, to.kind
    if fk == "c" and tk != "c":
        return False
    if fk == "f" and tk in "biu":
        return False
    return not (fk != "b" and tk == "b")


def _check_can_cast(frm: np.dtype, to: np.dtype, names: dict = _TORCH_NAME) -> None:
    if not _can_cast(frm, to):
        raise RuntimeError(f"result type {_TORCH_NAME[frm]} can't be cast to the desired output type {names[to]}")


def _resize_out(out: Any, shape: tuple, arrays: Any = ()) -> np.ndarray:
    """Mirror ``at::native::resize_output``: give ``out`` the shape, warning if it had elements.

    The new memory is laid out as TensorIterator lays out results of ``arrays``.
    """
    data = out._data
    if data.shape != shape:
        if data.size:
            warnings.warn(_RESIZE_WARNING.format(_shape_str(data.shape), _shape_str(shape)), UserWarning,
                          stacklevel=4)
        data = out._data = _iter_empty(shape, data.dtype, arrays)
    return data


def _cast(a: Any, dt: np.dtype) -> Any:
    """``a`` (an ndarray) in dtype ``dt``, copying only when the dtype changes (torch's casts)."""
    if a.dtype is dt or a.dtype == dt:
        return a
    if dt is _U8 and a.dtype.kind == "f":  # c10::convert goes through int64 for uint8
        return a.astype(_I64).astype(_U8)
    return a.astype(dt)


def _scalar_array(value: Any, dt: np.dtype) -> np.ndarray:
    """A Python scalar as a 0-d array of ``dt``, converted as inside a torch kernel (ints wrap)."""
    if dt.kind in "iu" and type(value) is int:
        if not -(1 << 63) <= value < (1 << 64):
            raise OverflowError("int too big to convert")
        bits = dt.itemsize * 8
        value &= (1 << bits) - 1
        if dt.kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
        return np.array(value, dt)
    if type(value) is int and not -(1 << 63) <= value < (1 << 64):
        raise OverflowError("int too big to convert")
    return np.array(value).astype(dt)


def _checked_scalar(value: Any, dt: np.dtype) -> np.ndarray:
    """Mirror ``checked_convert``: ``value`` as a 0-d array of ``dt``, or torch's overflow error."""
    return _checked_number(_item(value), dt)


def _result_np(*operands: Any) -> np.dtype:
    """``torch.result_type`` over Tensors and Python scalars, as a numpy dtype."""
    return dtypes.result_type(*operands).np


def _operand(x: Any) -> Any:
    """The ndarray of a Tensor operand, or the Python number of a Scalar one."""
    data = getattr(x, "_data", None)
    return data if data is not None else _item(x)


def _as_dtype(x: Any, dt: np.dtype) -> np.ndarray:
    return _cast(x, dt) if isinstance(x, _nd) else _scalar_array(x, dt)


def _dtype_of(x: Any) -> np.dtype:
    """The dtype a torch kernel sees for an operand (Python scalars: bool, int64, double)."""
    if isinstance(x, _nd):
        return x.dtype
    if isinstance(x, bool):
        return _BOOL
    if isinstance(x, int):
        return _I64
    return _F64 if isinstance(x, float) else _C128


# --- elementwise binary ops -----------------------------------------------------------------------
def _sub_check(xd: np.dtype, yd: np.dtype) -> None:
    """Mirror ``sub_check`` in BinaryOps.h."""
    if xd is _BOOL and yd is _BOOL:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if xd is _BOOL or yd is _BOOL:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _alpha_check(dt: np.dtype, alpha: Any) -> None:
    """Mirror ``alpha_check`` in BinaryOps.h."""
    if isinstance(alpha, bool) and dt is not _BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt.kind not in "fc" and not isinstance(alpha, int):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dt.kind != "c" and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _int_pow(a: np.ndarray, b: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Integer pow as c10's ``powi``: a negative exponent gives 1, -1 or 0 instead of an error."""
    if dt is _BOOL:  # only pow.Tensor_Scalar reaches here: x ** True == x, x ** False == True
        return _pow(a.astype(_I8), b.astype(_I8)).astype(_BOOL)
    negative = b < 0
    if not negative.any():
        return _pow(a, b)
    positive = _pow(a, _where(negative, 0, b).astype(dt))
    odd = np.remainder(b, 2) == 1
    at_negative = _where(a == 1, 1, _where(a == -1, _where(odd, -1, 1), 0))
    return _where(negative, at_negative, positive).astype(dt)


# Note [Output layout]: torch's TensorIterator gives an elementwise result the memory layout of its
# inputs (reorder_dimensions: the first operand with a strict stride preference decides each pair
# of dims); numpy's order="K" agrees except when inputs disagree, so kernels use numpy's own
# result when every input is C-contiguous and ``_iter_empty`` otherwise.
def _iter_perm(shape: tuple, arrays: Any) -> list[int]:
    """Mirror ``TensorIteratorBase::reorder_dimensions``: the dims, fastest first."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))
    if ndim < 2:
        return perm
    operand_strides = []
    for x in arrays:
        offset = ndim - x.ndim
        strides = [0] * ndim
        for i, (n, st) in enumerate(zip(x.shape, x.strides)):
            strides[offset + i] = 0 if n == 1 and shape[offset + i] != 1 else st
        operand_strides.append(strides)

    def should_swap(d0: int, d1: int) -> int:
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:  # broadcast in one of them: ask the next operand
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):  # insertion sort that tolerates ambiguous comparisons
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    return perm


def _iter_empty(shape: tuple, dt: np.dtype, arrays: Any) -> np.ndarray:
    """The output TensorIterator allocates for inputs ``arrays`` (See Note [Output layout])."""
    if 0 in shape:  # an empty operand is contiguous to torch: TensorIterator's fast setup
        return _new(shape, dt)
    perm = _iter_perm(shape, arrays)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return _new(shape, dt)
    strides = [0] * len(shape)
    step = 1
    for d in perm:  # TensorIteratorBase::compatible_stride, in the permuted order
        strides[d] = step
        step *= shape[d]
    return _empty_strided(shape, tuple(strides), dt)


def _laid_out(r: Any, arrays: Any) -> np.ndarray:
    """``r`` in the layout torch would give an elementwise result of ``arrays``."""
    r = _arr(r)
    if r.size and all(x.flags.c_contiguous for x in arrays):
        return r
    out = _iter_empty(r.shape, r.dtype, arrays)
    if r.size and out.strides == r.strides:
        return r
    _copyto(out, r)
    return out


def _store(r: Any, dt: np.dtype, shape: tuple, self: Any, out: Any, names: dict = _TORCH_NAME,
           arrays: Any = ()) -> Any:
    """Return ``r`` as a new tensor (out None), write it into ``self`` (in-place) or into ``out``.

    ``arrays`` are the tensor inputs' data, which decide the layout of new results.
    """
    if out is None:
        return wrap_cpu(_laid_out(r, arrays))
    if 0 in out._data.strides:  # an expanded output: TensorIterator's check (overlap.py)
        _assert_no_internal_overlap(out._data)
    if out is self:
        dst = self._data
        if shape != dst.shape:
            raise RuntimeError(f"output with shape {_shape_str(dst.shape)} doesn't match the broadcast "
                               f"shape {_shape_str(shape)}")
        _check_can_cast(dt, dst.dtype, names)
        _copyto(dst, r, casting="unsafe")
        return self
    _check_can_cast(dt, out._data.dtype, names)
    _copyto(_resize_out(out, shape, arrays), r, casting="unsafe")
    return out


def _binary(name: str, ufunc: Any, self: Any, other: Any, alpha: Any = 1, out: Any = None) -> Any:
    """The general elementwise binary op: ``self <op> alpha * other`` with all of torch's rules.

    ``self``/``other`` are Tensors or Python scalars (``pow.Scalar`` has a scalar ``self``);
    ``out`` is None (new tensor), ``self`` (in-place) or an out tensor.
    """
    with quiet():
        x, y = _operand(self), _operand(other)
        dt = _result_np(self if isinstance(x, _nd) else x, other if isinstance(y, _nd) else y)
        if name == "sub":
            _sub_check(_dtype_of(x), _dtype_of(y))
        elif name == "div" and dt.kind in "biu":
            dt = _default_np()  # true division: integers divide in the default float dtype
        elif name == "pow":
            if dt is _BOOL and isinstance(y, _nd):  # a bool exponent tensor: True ** b too
                raise _not_implemented("pow", dt)
            if dt.kind in "biu" and type(y) is int and y < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            if (dt.kind in "iu" or dt is _F16) and not isinstance(y, _nd) and y != 0 and y != 1:
                # torch's kernel converts the exponent to the integer or half type with checked_convert
                # (float and double take it as a double; 0 and 1 fill and copy before the kernel)
                _checked_number(y, dt)
        if alpha is not _ONE:
            _alpha_check(dt, alpha)
            # the kernel converts alpha with checked_convert; torch's sub is add with -alpha
            _checked_number(-alpha if name == "sub" else alpha, dt)
        a, b = _as_dtype(x, dt), _as_dtype(y, dt)
        shape = _broadcast_shapes(a.shape, b.shape)
        if alpha is not _ONE and (dt is _F32 or dt is _F64) and (name == "add" or name == "sub") \
                and isinstance(y, _nd):
            # torch computes ``self + alpha * other`` with one fma (fma.py); sub is add with -alpha.
            # A Python number ``other`` keeps the product rounded first, nearer torch's scalar loop
            r = fma.add_scaled(_arr(a), _arr(b), -alpha if name == "sub" else alpha, dt)
            return _store(r, dt, shape, self, out, arrays=[v for v in (x, y) if isinstance(v, _nd)])
        if alpha is not _ONE:
            b = _mul(b, _scalar_array(alpha, dt))
        if dt is _F16 and name in _HALF_SCALAR_OPS and not (isinstance(y, _nd) and y.ndim):
            r = _half_times_scalar(ufunc, a, y)  # See Note [Half arithmetic in float]
        elif name == "pow" and (dt is _F32 or dt is _F64) and not isinstance(y, _nd):
            r = _float_pow(a, y)  # the exponents torch computes by multiplying
        else:
            r = _int_pow(a, b, dt) if name == "pow" and dt.kind in "biu" else ufunc(a, b)
        return _store(r, dt, shape, self, out, arrays=[v for v in (x, y) if isinstance(v, _nd)])


# Note [Half arithmetic in float]: torch's CPU kernels compute float16 in float32 (its
# ``opmath_t``) and round to half at the end, as numpy's float16 loops do for two float16 operands.
# mul and div by a scalar second operand differ: a Python number, or any 0-d tensor
# (TensorIterator's ``is_scalar(2)``), is read at float32 precision (``original_scalar_value<opmath_t>``)
# where numpy would round it to half first: ``x * 0.1`` multiplies by float32's 0.1, and
# ``0.0 * 1e5`` is 0, not 0 * inf. A scalar first operand (``torch.mul(torch.tensor(0.1), x)``)
# is rounded to half, and so is add's and sub's scalar (numpy's weak scalar does the same).
_HALF_SCALAR_OPS = frozenset({"mul", "div"})


def _half_times_scalar(ufunc: Any, a: np.ndarray, y: Any) -> np.ndarray:
    """float16 ``a`` times (or divided by) the scalar ``y`` at float32 precision, rounded once."""
    return _cast(_arr(ufunc(_cast(a, _F32), _cast(y, _F32) if isinstance(y, _nd) else _F32.type(y))), _F16)


def _mixed_result(name: str, float_only: bool, xd: np.dtype, yd: np.dtype) -> np.dtype | None:
    """The dtype torch computes ``name`` in for two dimensioned tensors of dtypes ``xd`` and ``yd``.

    None where the general path must decide: an error to raise (``sub`` with a bool tensor),
    integer true division, complex numbers.
    """
    dt = dtypes.promote_types(dtypes.from_numpy_dtype(xd), dtypes.from_numpy_dtype(yd)).np
    if dt.kind not in "biuf" or (name == "sub" and _BOOL in (xd, yd)) or (float_only and dt.kind != "f"):
        return None
    return dt


def _binary_family(name: str, ufunc: Any, has_alpha: bool, float_only: bool) -> tuple:
    """The five kernels of add/sub/mul/div: .Tensor, .Scalar, _.Tensor, _.Scalar and .out.

    Each tries the fast path of Note [Fast paths]; div's fast path is for floating inputs only.
    """
    slow = _binary
    half_in_float = name in _HALF_SCALAR_OPS  # a float16 tensor times a number: the general path
    # Two dimensioned tensors of different dtypes (``g * (t > 0)`` in a backward): torch
    # promotes the two dtypes alone, so the result dtype depends on the pair only, and is
    # found once per pair; numpy casts both inputs to it, as torch does, inside the ufunc.
    promoted: dict[tuple[np.dtype, np.dtype], np.dtype | None] = {}

    def mixed(self, other, a, b):
        if a.ndim and b.ndim:
            key = (a.dtype, b.dtype)
            try:
                dt = promoted[key]
            except KeyError:
                dt = promoted[key] = _mixed_result(name, float_only, *key)
            if dt is not None:
                try:
                    r = ufunc(a, b, dtype=dt)
                except _FAST_ERRORS:
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return wrap_cpu(r if r.ndim == 1 and r.size else _laid_out(r, (a, b)))
        return slow(name, ufunc, self, other)

    def number_or_mixed(self, other, a, b):
        """``x * 2``, two dtypes and no alpha: the number (Note [Wrapped numbers]), or ``mixed``."""
        wrapped = other._meta
        if wrapped.__class__ is _WrappedNumber:
            v = wrapped.value
            t, k = v.__class__, a.dtype.kind
            if (k == "f" and (t is float or t is int)) or (t is int and k in "iu" and not float_only):
                dt = a.dtype
                if dt is _F32 and wrapped.as_float32 is not None:
                    v = wrapped.as_float32  # the same operand, converted once: Note [Cached numbers in float32]
                elif dt is _F16 and half_in_float:
                    return slow(name, ufunc, self, other)  # See Note [Half arithmetic in float]
                try:
                    r = ufunc(a, v)
                except _FAST_ERRORS:
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return wrap_cpu(r if r.__class__ is _nd and r.size else _laid_out(r, (a,)))
                return slow(name, ufunc, self, other)
        return mixed(self, other, a, b)

    def inplace_wrapped(self, other, a, alpha):
        """``x.add_(1)``: the number (Note [Wrapped numbers]) into ``a``, or the general path."""
        wrapped = other._meta
        if wrapped.__class__ is _WrappedNumber and alpha is _ONE and fast_scalar(a, wrapped.value):
            v = wrapped.as_float32 if a.dtype is _F32 and wrapped.as_float32 is not None else wrapped.value
            try:
                ufunc(a, v, a)  # See Note [Cached numbers in float32] (_composites.py)
            except _FP_ERRORS:
                # the output is complete (Note [Quiet floating-point errors]), unless the number
                # itself overflowed a's dtype (``add_(1e39)`` on float32): numpy warns about that
                # before it computes anything, so the general path computes it (inf, as torch)
                if not _overflows(wrapped.value, a.dtype):
                    return self
            except (ValueError, TypeError, OverflowError):
                pass  # Note [No chained errors]: the general path raises after the handler
            else:
                return self
        return slow(name, ufunc, self, other, alpha, self)

    def fast_scalar(a: np.ndarray, other: Any) -> bool:
        # numpy's weak Python scalars (NEP 50) agree with torch here: float tensors with any real
        # number, integer tensors with ints (out-of-range ints raise and take the slow path)
        t, dt = type(other), a.dtype
        k = dt.kind
        if k == "f":  # mul and div of float16 by a number: Note [Half arithmetic in float]
            return (t is float or t is int) and not (half_in_float and dt is _F16)
        return t is int and k in "iu" and not float_only

    if has_alpha:
        # alpha is positional-or-keyword here: callers name it, as the schema says, and a
        # positional default costs less to fill than a keyword-only one (~15 ns a call)
        def tensor(self, other, alpha=1):
            a, b = self._data, other._data
            dt = a.dtype
            if dt is b.dtype and alpha is _ONE:
                try:  # two 0-d operands: numpy would return a scalar, so give it a 0-d out
                    r = ufunc(a, b) if a.ndim or b.ndim else ufunc(a, b, _empty((), dt))
                except _FAST_ERRORS:
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    if r.ndim <= 1:  # the common cases first: 1-D and 0-d results have one layout
                        if r.size:
                            return wrap_cpu(r)
                    elif r.size and a.flags.c_contiguous and b.flags.c_contiguous:
                        return wrap_cpu(r)
                    return wrap_cpu(_laid_out(r, (a, b)))  # See Note [Output layout]
                return slow(name, ufunc, self, other, alpha)
            if alpha is _ONE:  # x + 1, or two dtypes
                return number_or_mixed(self, other, a, b)
            if alpha.__class__ is float and dt is b.dtype and (dt is _F32 or dt is _F64) and a.shape == b.shape \
                    and a.size and a.flags.c_contiguous and b.flags.c_contiguous and -_F32_MAX <= alpha <= _F32_MAX:
                # ``x.add(y, alpha=0.5)``: the general path's one rounding (fma.py), without its checks
                # (an empty result goes the general way: its layout)
                r = a.copy()
                if fma.axpy(-alpha if name == "sub" else alpha, b, r):
                    return wrap_cpu(r)
            return slow(name, ufunc, self, other, alpha)

        def scalar(self, other, alpha=1):
            a = self._data
            if alpha is _ONE and fast_scalar(a, other):
                try:
                    r = ufunc(a, other)
                except _FAST_ERRORS:
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return wrap_cpu(r if r.__class__ is _nd and r.size else _laid_out(r, (a,)))
                return slow(name, ufunc, self, other, alpha)
            return slow(name, ufunc, self, _item(other), alpha)

        def inplace_tensor(self, other, alpha=1):
            a, b = self._data, other._data
            if a.base is not None and 0 in a.strides:  # only a view can be expanded (overlap.py)
                _assert_no_internal_overlap(a)
            if a.dtype is b.dtype and alpha is _ONE:
                try:
                    ufunc(a, b, a)  # out, positional: numpy parses it faster than out=
                except _FP_ERRORS:
                    return self  # the output is complete: see Note [Quiet floating-point errors]
                except (ValueError, TypeError):
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return self
                return slow(name, ufunc, self, other, alpha, self)
            if alpha.__class__ is float and a.dtype is b.dtype and (a.dtype is _F32 or a.dtype is _F64) \
                    and a.shape == b.shape and a.flags.c_contiguous and b.flags.c_contiguous \
                    and -_F32_MAX <= alpha <= _F32_MAX and (a is b or not _may_share_memory(a, b)):
                # ``p.add_(g, alpha=-lr)``, SGD's update: torch's fma, one BLAS axpy into self (fma.py);
                # an alpha float32 cannot hold takes the general path, which raises torch's error
                if fma.axpy(-alpha if name == "sub" else alpha, b, a):
                    return self
                return slow(name, ufunc, self, other, alpha, self)
            return inplace_wrapped(self, other, a, alpha)

        def inplace_scalar(self, other, alpha=1):
            return slow(name, ufunc, self, _item(other), alpha, self)

        def out_(self, other, *, alpha=1, out):
            a, b, o = self._data, other._data, out._data
            if o.base is not None and 0 in o.strides:  # only a view can be expanded (overlap.py)
                _assert_no_internal_overlap(o)
            if a.dtype is b.dtype is o.dtype and a.shape == b.shape == o.shape and alpha is _ONE:
                try:
                    ufunc(a, b, o)
                except _FP_ERRORS:
                    return out
                except (ValueError, TypeError):
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return out
                return slow(name, ufunc, self, other, alpha, out)
            return slow(name, ufunc, self, other, alpha, out)
    else:
        def tensor(self, other):
            a, b = self._data, other._data
            dt, other_dt = a.dtype, b.dtype
            if dt is other_dt and (not float_only or dt.kind == "f"):
                try:
                    r = ufunc(a, b)
                except _FAST_ERRORS:
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    if r.ndim == 1:  # the common case first: one attribute read, no layout question
                        if r.size:
                            return wrap_cpu(r)
                    elif r.__class__ is not _nd:  # 0-d operands: numpy returns a scalar
                        return wrap_cpu(r[...])
                    elif r.size and a.flags.c_contiguous and b.flags.c_contiguous:
                        return wrap_cpu(r)
                    return wrap_cpu(_laid_out(r, (a, b)))  # See Note [Output layout]
                return slow(name, ufunc, self, other)
            if dt is not other_dt:  # x * 2, or two dtypes
                return number_or_mixed(self, other, a, b)
            return slow(name, ufunc, self, other)

        def scalar(self, other):
            a = self._data
            if fast_scalar(a, other):
                try:
                    r = ufunc(a, other)
                except _FAST_ERRORS:
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return wrap_cpu(r if r.__class__ is _nd and r.size else _laid_out(r, (a,)))
                return slow(name, ufunc, self, other)
            return slow(name, ufunc, self, _item(other))

        def inplace_tensor(self, other):
            a, b = self._data, other._data
            if a.base is not None and 0 in a.strides:  # only a view can be expanded (overlap.py)
                _assert_no_internal_overlap(a)
            if a.dtype is b.dtype and (not float_only or a.dtype.kind == "f"):
                try:
                    ufunc(a, b, a)  # out, positional: numpy parses it faster than out=
                except _FP_ERRORS:
                    return self
                except (ValueError, TypeError):
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return self
                return slow(name, ufunc, self, other, 1, self)
            return inplace_wrapped(self, other, a, _ONE)

        def inplace_scalar(self, other):
            return slow(name, ufunc, self, _item(other), 1, self)

        def out_(self, other, *, out):
            a, b, o = self._data, other._data, out._data
            if o.base is not None and 0 in o.strides:  # only a view can be expanded (overlap.py)
                _assert_no_internal_overlap(o)
            if (a.dtype is b.dtype is o.dtype and a.shape == b.shape == o.shape
                    and (not float_only or a.dtype.kind == "f")):
                try:
                    ufunc(a, b, o)
                except _FP_ERRORS:
                    return out
                except (ValueError, TypeError):
                    pass  # Note [No chained errors]: the general path raises after the handler
                else:
                    return out
                return slow(name, ufunc, self, other, 1, out)
            return slow(name, ufunc, self, other, 1, out)

    kernels = (tensor, scalar, inplace_tensor, inplace_scalar, out_)
    for fn, suffix in zip(kernels, ("_tensor", "_scalar", "__tensor", "__scalar", "_out")):
        fn.__name__ = fn.__qualname__ = f"{name}{suffix}_cpu"
    return kernels


(add_tensor_cpu, add_scalar_cpu, add__tensor_cpu, add__scalar_cpu,
 add_out_cpu) = _binary_family("add", _add, has_alpha=True, float_only=False)
(sub_tensor_cpu, sub_scalar_cpu, sub__tensor_cpu, sub__scalar_cpu,
 sub_out_cpu) = _binary_family("sub", _sub, has_alpha=True, float_only=False)
(mul_tensor_cpu, mul_scalar_cpu, mul__tensor_cpu, mul__scalar_cpu,
 mul_out_cpu) = _binary_family("mul", _mul, has_alpha=False, float_only=False)
(div_tensor_cpu, div_scalar_cpu, div__tensor_cpu, div__scalar_cpu,
 div_out_cpu) = _binary_family("div", _div, has_alpha=False, float_only=True)


_ROUNDING_MODES = (None, "trunc", "floor")


def _div_mode(self: Any, other: Any, rounding_mode: Any, out: Any = None) -> Any:
    """``div`` with ``rounding_mode``: None is true division; trunc and floor keep integer dtypes."""
    if rounding_mode is None:
        return _binary("div", _div, self, other, 1, out)
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    with quiet():
        x, y = _operand(self), _operand(other)
        dt = _result_np(self if isinstance(x, _nd) else x, other if isinstance(y, _nd) else y)
        if dt is _BOOL or dt.kind == "c":
            raise _not_implemented(f"div_{rounding_mode}_cpu", dt)
        a, b = _as_dtype(x, dt), _as_dtype(y, dt)
        shape = _broadcast_shapes(a.shape, b.shape)
        if dt.kind in "iu":
            if (b == 0).any():
                raise RuntimeError("ZeroDivisionError")
            r = np.floor_divide(a, b)
            if rounding_mode == "trunc" and dt.kind == "i":  # round toward zero: floor + 1 below zero
                r = r + ((a - r * b != 0) & ((a < 0) != (b < 0))).astype(dt)
        elif rounding_mode == "trunc":
            r = np.trunc(_div(a, b))
        else:
            r = np.floor_divide(a, b)  # numpy's floor division is torch's div_floor_floating
        return _store(_arr(r).astype(dt, copy=False), dt, shape, self, out,
                      arrays=[v for v in (x, y) if isinstance(v, _nd)])


def div_tensor_mode_cpu(self, other, *, rounding_mode):
    return _div_mode(self, other, rounding_mode)


def div_scalar_mode_cpu(self, other, *, rounding_mode):
    return _div_mode(self, _item(other), rounding_mode)


def div__tensor_mode_cpu(self, other, *, rounding_mode):
    return _div_mode(self, other, rounding_mode, self)


def div__scalar_mode_cpu(self, other, *, rounding_mode):
    return _div_mode(self, _item(other), rounding_mode, self)


def _float_pow(a: np.ndarray, exponent: float) -> np.ndarray:
    """float/double ``a ** exponent`` for a number exponent, as torch's ``pow_tensor_scalar_optimized_kernel``.

    torch multiplies for the exponents 3 (``a * a * a``) and -2 (``1 / (a * a)``), and takes
    ``1 / sqrt(a)`` for -0.5; libm's ``pow`` differs from those by an ulp on a quarter of the
    values. 2 and -1 are numpy's own square and reciprocal, as torch's. (0.5 is torch's sqrt:
    see docs/notes.md on MKL's.)
    """
    if exponent == 3:
        return _mul(_mul(a, a), a)
    if exponent == -2:
        return _div(1, _mul(a, a))  # numpy's weak 1 keeps the dtype
    if exponent == -0.5:
        return _div(1, np.sqrt(a))
    return _pow(a, exponent)


def pow_tensor_tensor_cpu(self, exponent):
    a, b = self._data, exponent._data
    if a.dtype is b.dtype and a.dtype.kind == "f":
        try:
            return wrap_cpu(_laid_out(_pow(a, b), (a, b)))
        except _FAST_ERRORS:
            pass
    return _binary("pow", _pow, self, exponent)


def pow_tensor_scalar_cpu(self, exponent):
    a = self._data
    t = type(exponent)
    if a.dtype.kind == "f" and a.dtype is not _F16 and (t is float or t is int):
        try:
            return wrap_cpu(_laid_out(_float_pow(a, exponent), (a,)))
        except _FAST_ERRORS:
            pass
    return _binary("pow", _pow, self, _item(exponent))


def pow_scalar_cpu(self, exponent):
    return _binary("pow", _pow, _item(self), exponent)


def pow__scalar_cpu(self, exponent):
    return _binary("pow", _pow, self, _item(exponent), 1, self)


def pow__tensor_cpu(self, exponent):
    return _binary("pow", _pow, self, exponent, 1, self)


# --- comparisons ----------------------------------------------------------------------------------
def _compare(name: str, ufunc: Any, self: Any, other: Any) -> Any:
    """Compare in the promoted dtype (so a uint8 tensor sees -1 as 255, as torch does)."""
    with quiet():
        x, y = _operand(self), _operand(other)
        dt = _result_np(self if isinstance(x, _nd) else x, other if isinstance(y, _nd) else y)
        if dt.kind == "c" and name not in ("eq", "ne"):  # complex numbers have no order
            raise _not_implemented(f"{name}_cpu", dt)
        a, b = _as_dtype(x, dt), _as_dtype(y, dt)
        _broadcast_shapes(a.shape, b.shape)
        return wrap_cpu(_laid_out(ufunc(a, b), [v for v in (x, y) if isinstance(v, _nd)]))


def _comparison_pair(name: str, ufunc: Any) -> tuple:
    ordered = name not in ("eq", "ne")

    def tensor(self, other):
        a, b = self._data, other._data
        if a.dtype is b.dtype and not (ordered and a.dtype.kind == "c"):
            try:
                r = ufunc(a, b)
            except _FAST_ERRORS:
                pass  # Note [No chained errors]: the general path raises after the handler
            else:
                if r.ndim == 1:
                    if r.size:
                        return wrap_cpu(r)
                elif r.__class__ is _nd and r.size and a.flags.c_contiguous and b.flags.c_contiguous:
                    return wrap_cpu(r)
                return wrap_cpu(_laid_out(r, (a, b)))
        return _compare(name, ufunc, self, other)

    def scalar(self, other):
        a = self._data
        t = type(other)
        if a.dtype.kind == "f" and (t is float or t is int):
            try:
                r = ufunc(a, other)
            except _FAST_ERRORS:
                pass  # Note [No chained errors]: the general path raises after the handler
            else:
                return wrap_cpu(r if r.__class__ is _nd and r.size else _laid_out(r, (a,)))
            return _compare(name, ufunc, self, other)
        return _compare(name, ufunc, self, _item(other))

    # In place (``gt_``): the bool result, written into self's dtype (comparisons write any dtype);
    # self must already have the broadcast shape, as TensorIterator requires of an in-place output
    def tensor_(self, other):
        r = tensor(self, other)._data
        return _store(r, r.dtype, r.shape, self, self)

    def scalar_(self, other):
        r = scalar(self, other)._data
        return _store(r, r.dtype, r.shape, self, self)

    for fn, kind in ((tensor, "tensor"), (scalar, "scalar"), (tensor_, "_tensor"), (scalar_, "_scalar")):
        fn.__name__ = fn.__qualname__ = f"{name}_{kind}_cpu"
    return tensor, scalar, tensor_, scalar_


eq_tensor_cpu, eq_scalar_cpu, eq__tensor_cpu, eq__scalar_cpu = _comparison_pair("eq", np.equal)
ne_tensor_cpu, ne_scalar_cpu, ne__tensor_cpu, ne__scalar_cpu = _comparison_pair("ne", np.not_equal)
lt_tensor_cpu, lt_scalar_cpu, lt__tensor_cpu, lt__scalar_cpu = _comparison_pair("lt", np.less)
le_tensor_cpu, le_scalar_cpu, le__tensor_cpu, le__scalar_cpu = _comparison_pair("le", np.less_equal)
gt_tensor_cpu, gt_scalar_cpu, gt__tensor_cpu, gt__scalar_cpu = _comparison_pair("gt", np.greater)
ge_tensor_cpu, ge_scalar_cpu, ge__tensor_cpu, ge__scalar_cpu = _comparison_pair("ge", np.greater_equal)


# --- elementwise unary ops ------------------------------------------------------------------------
def _sigmoid(a: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in four in-place ufunc calls; half computes in float32 as torch's CPU does."""
    if a.dtype is _F16:
        return _sigmoid(a.astype(_F32)).astype(_F16)
    r = _arr(np.negative(a))
    np.exp(r, out=r)
    _add(r, 1, out=r)
    return np.reciprocal(r, out=r)


def _overflows(value: int | float, dt: np.dtype) -> bool:
    """Whether a finite real number becomes inf in float dtype ``dt``."""
    with quiet():
        return not math.isinf(value) and math.isinf(dt.type(value))


# Note [Zeros first]: torch's relu is ``clamp_min(x, 0)``, whose vector loop keeps x on a tie, so
# ``relu(-0.0)`` is -0.0; numpy's maximum keeps its second operand on a tie, so the zero goes first
# (``np.maximum(x, 0)`` gives +0.0). numpy's SIMD maximum needs two arrays: a 0-d zero broadcast runs
# its scalar loop, ~3x slower above a few thousand elements (64x784 float32: 24.6 -> 8.4 us), so a
# large contiguous input is paired with zeros of its shape, a view of one read-only buffer per dtype
# (made by calloc: its pages that are only read stay the kernel's shared zero page).
_ZEROS_MIN = 4096  # below it a view costs more than the scalar loop loses
_ZEROS_MAX = 1 << 24
_zeros_flat: dict[np.dtype, np.ndarray] = {}


def _zeros_shaped(a: np.ndarray) -> np.ndarray:
    """Zeros of ``a``'s dtype and shape (C-contiguous, read-only): a view of this dtype's buffer."""
    flat = _zeros_flat.get(a.dtype)
    if flat is None or flat.size < a.size:
        flat = np.zeros(a.size, a.dtype)
        flat.flags.writeable = False
        _zeros_flat[a.dtype] = flat  # rebound whole: a thread reads the old buffer or the new one
    return flat[:a.size].reshape(a.shape)


def _relu(a: np.ndarray) -> np.ndarray:
    return _relu_into(a, None)


def _relu_into(a: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """``relu`` into ``out`` (None: a new array); ``relu_cpu`` takes small floats itself. Note [Zeros first]."""
    if a.dtype is _F16:  # numpy's half maximum drops -0.0's sign either way; torch computes half in float
        r = _maximum(_ZERO[_F32], a.astype(_F32)).astype(_F16)
        if out is None:
            return r
        _copyto(out, r)
        return out
    if _ZEROS_MIN <= a.size <= _ZEROS_MAX and a.flags.c_contiguous:
        return _maximum(_zeros_shaped(a), a, out=out)
    return _maximum(_ZERO[a.dtype], a, out=out)  # a same-dtype 0-d zero: faster than a Python 0


def _bool_check(name: str) -> None:
    if name == "neg":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if name == "abs":
        raise _not_implemented("abs_cpu", _BOOL)
    if name == "relu":
        raise RuntimeError("Boolean inputs not supported for relu")


def _unary(name: str, compute: Any, floating: bool, self: Any, out: Any = None) -> Any:
    """The general unary op: integer inputs of floating ops compute in the default float dtype."""
    a = self._data
    dt = a.dtype
    if dt is _BOOL:
        _bool_check(name)
    elif dt.kind == "c" and name == "relu":  # torch's relu is clamp_min(self, 0)
        raise NotImplementedError("clamp is not supported for complex types")
    if floating:
        rdt = dt if dt.kind in "fc" else _default_np()
    else:
        rdt = np.dtype(dt.char.lower()) if name == "abs" and dt.kind == "c" else dt  # |complex| is real
        if out is not None and out is not self and out._data.dtype != rdt:
            raise RuntimeError(f"Found dtype {_TORCH_NAME[out._data.dtype]} but expected {_TORCH_NAME[rdt]}")
    with quiet():
        return _store(compute(_cast(a, rdt) if floating else a), rdt, a.shape, self, out, arrays=(a,))


def _unary_family(name: str, compute: Any, floating: bool, inplace: Any) -> tuple:
    """The functional, in-place and .out kernels of a unary op (Note [Fast paths])."""
    def functional(self):
        a = self._data
        if a.dtype.kind == "f":
            try:
                r = compute(a)
            except _FP_ERRORS:
                pass  # Note [No chained errors]: the general path raises after the handler
            else:
                return wrap_cpu(r if r.__class__ is _nd and r.size else _laid_out(r, (a,)))
        return _unary(name, compute, floating, self)

    def inplace_(self):
        a = self._data
        if a.base is not None and 0 in a.strides:  # only a view can be expanded (overlap.py)
            _assert_no_internal_overlap(a)
        if inplace is not None and a.dtype.kind == "f":
            try:
                inplace(a)
            except _FP_ERRORS:
                pass  # one ufunc call: the output is complete (Note [Quiet floating-point errors])
            return self
        return _unary(name, compute, floating, self, self)

    def out_(self, *, out):
        return _unary(name, compute, floating, self, out)

    functional.__name__ = functional.__qualname__ = f"{name}_cpu"
    inplace_.__name__ = inplace_.__qualname__ = f"{name}__cpu"
    out_.__name__ = out_.__qualname__ = f"{name}_out_cpu"
    return functional, inplace_, out_


def _ufunc_inplace(ufunc: Any) -> Any:
    return lambda a: ufunc(a, a)  # out, positional


neg_cpu, neg__cpu, neg_out_cpu = _unary_family("neg", np.negative, False, _ufunc_inplace(np.negative))
abs_out_cpu = _unary_family("abs", np.absolute, False, _ufunc_inplace(np.absolute))[2]  # abs, abs_: CEA
exp_cpu, exp__cpu, exp_out_cpu = _unary_family("exp", np.exp, True, _ufunc_inplace(np.exp))
log_cpu, log__cpu, log_out_cpu = _unary_family("log", np.log, True, _ufunc_inplace(np.log))
sqrt_cpu, sqrt__cpu, sqrt_out_cpu = _unary_family("sqrt", np.sqrt, True, _ufunc_inplace(np.sqrt))
sin_cpu, sin__cpu, sin_out_cpu = _unary_family("sin", np.sin, True, _ufunc_inplace(np.sin))
cos_cpu, cos__cpu, cos_out_cpu = _unary_family("cos", np.cos, True, _ufunc_inplace(np.cos))
tanh_cpu, tanh__cpu, tanh_out_cpu = _unary_family("tanh", np.tanh, True, _ufunc_inplace(np.tanh))
sigmoid_cpu, sigmoid__cpu, sigmoid_out_cpu = _unary_family("sigmoid", _sigmoid, True, None)
_relu_family, relu__cpu, _ = _unary_family("relu", _relu, False, lambda a: _relu_into(a, a))
_RELU_FAST = {_F32: _ZERO[_F32], _F64: _ZERO[_F64]}


def relu_cpu(self):
    """``relu``: a small float or double input in one call (Note [Zeros first]), others by the family's kernel."""
    a = self._data
    zero = _RELU_FAST.get(a.dtype)
    if zero is not None and a.size < _ZEROS_MIN:
        r = _maximum(zero, a)  # no floating-point error to catch: a comparison
        return wrap_cpu(r if r.__class__ is _nd and r.size else _laid_out(r, (a,)))
    return _relu_family(self)


# --- clamp and where ------------------------------------------------------------------------------
_FLOAT_MAX = {np.dtype(t): float(np.finfo(t).max) for t in (np.float16, np.float32, np.float64)}
_CLAMP_FAST = {dt: _FLOAT_MAX[dt] for dt in (_F32, _F64)}  # half compares in float: the general path


def _fast_bound(v: Any, fmax: float) -> bool:
    """A bound numpy may take as is: a Python real number the dtype holds (not NaN)."""
    return (type(v) is float or type(v) is int) and -fmax <= v <= fmax


def _clamp(self: Any, lo: Any, hi: Any, out: Any = None) -> Any:
    """Mirror ``clamp``/``clamp_min``/``clamp_max`` with Scalar bounds: promote, checked bounds, NaN propagates."""
    a = self._data
    fmax = _CLAMP_FAST.get(a.dtype)
    if fmax is not None and (lo is not None or hi is not None) and (lo is None or _fast_bound(lo, fmax)) \
            and (hi is None or _fast_bound(hi, fmax)):  # an absent bound costs no call
        # See Note [Fast paths]: a float tensor and bounds its dtype holds. numpy's weak Python
        # scalars keep the dtype (no promotion, no overflow) and np.maximum propagates NaN. The
        # bound goes first, so a tie keeps x (``clamp_min(-0.0, 0)`` is -0.0): Note [Zeros first]
        if out is self:
            if a.base is not None and 0 in a.strides:  # only a view can be expanded (overlap.py)
                _assert_no_internal_overlap(a)
            if lo is not None:
                _maximum(lo, a, out=a)  # (numpy deprecates a positional out for these two)
            if hi is not None:
                _minimum(hi, a, out=a)
            return self
        if out is None:
            if lo is not None:
                # ``clamp(min=0)``, ReLU's spelling: the dtype's 0-d zero as for relu (same value,
                # ~0.2 us less than numpy converting the Python 0)
                r = _maximum(_ZERO[a.dtype] if lo == 0 and type(lo) is int else lo, a)
            else:
                r = _minimum(hi, a)
            if r.__class__ is not _nd:  # a 0-d input: numpy answers with a scalar
                r = _asarray(r)
            if lo is not None and hi is not None:
                _minimum(hi, r, out=r)
            return wrap_cpu(r if r.size and (r.ndim <= 1 or a.flags.c_contiguous) else _laid_out(r, (a,)))
    lo = None if lo is None else _item(lo)
    hi = None if hi is None else _item(hi)
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = _result_np(self, lo, hi)
    if dt.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _BOOL:
        which = "clamp" if lo is not None and hi is not None else ("clamp_min" if hi is None else "clamp_max")
        raise _not_implemented(f"{which}_scalar_cpu", dt)
    if out is not None:  # TensorIterator checks the output's cast before the kernel converts the bounds
        _check_can_cast(dt, out._data.dtype, _CPP_NAME)
    with quiet():
        work = _F32 if dt is _F16 else dt  # numpy's half maximum drops -0.0's sign: compare in float
        r = _cast(a, work)
        if lo is not None:  # the bound first: a tie keeps x (Note [Zeros first]); NaN propagates, as torch's
            r = _maximum(_cast(_checked_scalar(lo, dt), work), r)
        if hi is not None:
            r = _minimum(_cast(_checked_scalar(hi, dt), work), r)
        return _store(_cast(_arr(r), dt), dt, a.shape, self, out, _CPP_NAME)


def clamp_cpu(self, min=None, max=None):  # noqa: A002 - the schema's names
    return _clamp(self, min, max)


def clamp__cpu(self, min=None, max=None):  # noqa: A002
    return _clamp(self, min, max, self)


def clamp_min_cpu(self, min):  # noqa: A002
    return _clamp(self, min, None)


def clamp_min__cpu(self, min):  # noqa: A002
    return _clamp(self, min, None, self)


def clamp_max_cpu(self, max):  # noqa: A002
    return _clamp(self, None, max)


def clamp_max__cpu(self, max):  # noqa: A002
    return _clamp(self, None, max, self)


def _clamp_tensor(self: Any, lo: Any, hi: Any, out: Any = None) -> Any:
    """Mirror ``clamp.Tensor`` and its one-bound forms: all operands promote (TensorIterator), NaN propagates."""
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    tensors = [t for t in (self, lo, hi) if t is not None]
    arrays = [t._data for t in tensors]
    if any(a.dtype.kind == "c" for a in arrays):
        raise NotImplementedError("clamp is not supported for complex types")
    dt = _result_np(*tensors)
    shape = _broadcast_shapes(*(a.shape for a in arrays))
    with quiet():
        work = _F32 if dt is _F16 else dt  # numpy's half maximum drops -0.0's sign: compare in float
        r = _cast(self._data, work)
        if lo is not None:
            r = _maximum(r, _cast(lo._data, work))  # min(max(x, lo), hi): hi wins where lo > hi, as torch
        if hi is not None:
            r = _minimum(r, _cast(hi._data, work))
    return _store(_cast(_arr(r), dt), dt, shape, self, out, arrays=arrays)


def clamp_tensor_cpu(self, min=None, max=None):  # noqa: A002
    return _clamp_tensor(self, min, max)


def clamp__tensor_cpu(self, min=None, max=None):  # noqa: A002
    return _clamp_tensor(self, min, max, self)


def clamp_min_tensor_cpu(self, min):  # noqa: A002
    return _clamp_tensor(self, min, None)


def clamp_min__tensor_cpu(self, min):  # noqa: A002
    return _clamp_tensor(self, min, None, self)


def clamp_max_tensor_cpu(self, max):  # noqa: A002
    return _clamp_tensor(self, None, max)


def clamp_max__tensor_cpu(self, max):  # noqa: A002
    return _clamp_tensor(self, None, max, self)


def _extremum(name: str, ufunc: Any, self: Any, other: Any) -> Any:
    """``maximum``/``minimum``: promoted, broadcast, NaN-propagating (numpy's ufuncs are)."""
    a, b = self._data, other._data
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    dt = a.dtype if a.dtype is b.dtype else _result_np(self, other)
    _broadcast_shapes(a.shape, b.shape)
    with quiet():
        if dt is _F16:  # numpy's half maximum drops -0.0's sign: compare in float, as torch's loop
            return wrap_cpu(_laid_out(_cast(_arr(ufunc(_cast(a, _F32), _cast(b, _F32))), dt), (a, b)))
        return wrap_cpu(_laid_out(ufunc(_cast(a, dt), _cast(b, dt)), (a, b)))


def maximum_cpu(self, other):
    return _extremum("maximum", _maximum, self, other)


def minimum_cpu(self, other):
    return _extremum("minimum", _minimum, self, other)


def where_self_cpu(condition, self, other):
    c, a, b = condition._data, self._data, other._data
    if c.dtype is not _BOOL:
        if c.dtype is not _U8:
            raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_TORCH_NAME[c.dtype]}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed "
                      "in a future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=3)
        c = c.astype(_BOOL)
    dt = a.dtype if a.dtype is b.dtype else _result_np(self, other)
    try:
        r = _where(c, _cast(a, dt), _cast(b, dt))
    except ValueError:
        pass  # Note [No chained errors]: torch's message is raised after the handler
    else:
        if r.ndim < 2 and r.size:
            return wrap_cpu(r)
        return wrap_cpu(_laid_out(r, (c, a, b)))
    _broadcast_shapes(c.shape, a.shape, b.shape)  # raises torch's message
    return wrap_cpu(_laid_out(_where(c, _cast(a, dt), _cast(b, dt)), (c, a, b)))  # numpy's own error


# --- reductions -----------------------------------------------------------------------------------
def _sum_dtypes(a: np.ndarray, dtype: Any) -> tuple[np.dtype, np.dtype]:
    """(accumulation dtype, result dtype) of sum: integers and bool sum to int64, half accumulates in float."""
    if dtype is None:
        dt = a.dtype
        if dt.kind in "biu":
            return _I64, _I64
    else:
        dt = _np_dtype(dtype)
    return (_F32 if dt is _F16 else dt), dt


def _sum(a: np.ndarray, dims: Any, keepdim: bool, acc: np.dtype, dt: np.dtype) -> np.ndarray:
    with quiet():
        r = _add_reduce(a, dims, acc, keepdims=keepdim)  # reduce casts each element to acc first
        return _result(r).astype(dt, copy=False)


def sum_cpu(self, *, dtype=None):
    a = self._data
    dt = a.dtype
    if dtype is None and (dt is _F32 or dt is _F64):
        out = _empty((), dt)  # reducing into a 0-d out is the cheapest way to get an array back
        try:
            _add_reduce(a, None, None, out)
            return wrap_cpu(out)
        except _FP_ERRORS:
            pass
    acc, dt = _sum_dtypes(a, dtype)
    return wrap_cpu(_sum(a, None, False, acc, dt))


def sum_dim_intlist_cpu(self, dim, keepdim=False, *, dtype=None):
    a = self._data
    dt = a.dtype
    # the usual call (sum_to's reduction of a broadcast gradient, a bias gradient): one dim of a
    # float32/float64 tensor, summed in its own dtype as the general path does
    if dtype is None and (dt is _F32 or dt is _F64) and dim.__class__ is list and len(dim) == 1:
        d, n = dim[0], a.ndim
        if d.__class__ is int and n and -n <= d < n:
            try:
                return wrap_cpu(_result(_add_reduce(a, d, None, None, keepdim)))
            except _FP_ERRORS:
                pass
    dims = _reduce_dims(dim, a.ndim)
    acc, dt = _sum_dtypes(a, dtype)
    return wrap_cpu(_sum(a, dims, keepdim, acc, dt))


def _mean(a: np.ndarray, dims: Any, keepdim: bool, dtype: Any) -> np.ndarray:
    dt = a.dtype if dtype is None else _np_dtype(dtype)
    if dt.kind not in "fc":
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either a floating point "
                           f"or complex dtype. Got: {_TORCH_NAME[dt]}")
    acc = _F32 if dt is _F16 else dt
    if dims is None:
        count = a.size
    else:
        count = 1
        for d in dims:
            count *= a.shape[d]
    with quiet():  # an empty mean is 0/0 = nan, silently, as in torch
        s = _arr(_add_reduce(_cast(a, acc), dims, acc, keepdims=keepdim))
        return _result(_div(s, count)).astype(dt, copy=False)


def mean_cpu(self, *, dtype=None):
    a = self._data
    if dtype is None and (a.dtype is _F32 or a.dtype is _F64) and a.size:
        # a float tensor's full mean (a loss, every training step): _mean's two ufunc calls without
        # its checks, casts and copies (~2 us less); an inf or nan on the way raises (Note [Quiet
        # floating-point errors]) and takes _mean, which computes the same quietly
        try:
            return wrap_cpu(_asarray(_div(_add_reduce(a, None, a.dtype), a.size)))
        except _FP_ERRORS:
            pass
    return wrap_cpu(_mean(a, None, False, dtype))


def mean_dim_cpu(self, dim, keepdim=False, *, dtype=None):
    a = self._data
    return wrap_cpu(_mean(a, _reduce_dims(dim, a.ndim), keepdim, dtype))


def _check_reduction_size(a: np.ndarray, dims: Any, name: str, all_message: str) -> None:
    if dims is None:
        if a.size == 0:
            raise RuntimeError(all_message) if name != "argmax" else IndexError(all_message)
        return
    for d in dims:
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _all_message(name: str) -> str:
    return (f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
            "with the 'dim' argument.")


def amax_cpu(self, dim=[], keepdim=False):  # noqa: B006 - the schema's default, never mutated
    a = self._data
    if a.dtype.kind == "c":  # complex numbers have no order
        raise _not_implemented("max_values_cpu", a.dtype)
    dims = _reduce_dims(dim, a.ndim)
    _check_reduction_size(a, dims, "amax", _all_message("amax"))
    return wrap_cpu(_result(_maximum.reduce(a, dims, keepdims=keepdim)))  # NaN propagates, as in torch


def max_cpu(self):
    a = self._data
    if a.dtype.kind == "c":
        raise _not_implemented("max_all", a.dtype)
    _check_reduction_size(a, None, "max", _all_message("max"))
    out = _empty((), a.dtype)
    _maximum.reduce(a, None, None, out)
    return wrap_cpu(out)


def max_dim_cpu(self, dim, keepdim=False):
    a = self._data
    if a.dtype.kind == "c":
        raise RuntimeError("max(): does not support complex input")
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return wrap_cpu(a.copy()), wrap_cpu(np.zeros((), _I64))
    _check_reduction_size(a, (d,), "max", "")
    idx = _argmax(a, axis=d, keepdims=True)  # the first maximum, or the first NaN, as torch's CPU kernel
    values = _take_along_axis(a, idx, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return wrap_cpu(_result(values)), wrap_cpu(_result(idx).astype(_I64, copy=False))


def argmax_cpu(self, dim=None, keepdim=False):
    a = self._data
    if a.dtype is _BOOL or a.dtype.kind == "c":
        raise RuntimeError(f"argmax(): does not support {'bool' if a.dtype is _BOOL else 'complex'} input")
    if dim is None:
        if a.size == 0:
            raise IndexError("argmax(): Expected reduction dim to be specified for input.numel() == 0.")
        r = np.array(_argmax(a), _I64)
        return wrap_cpu(r.reshape((1,) * a.ndim) if keepdim else r)
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return wrap_cpu(np.zeros((), _I64))
    _check_reduction_size(a, (d,), "argmax", "")
    return wrap_cpu(_result(_argmax(a, axis=d, keepdims=keepdim)).astype(_I64, copy=False))


# --- matrix products ------------------------------------------------------------------------------
def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype is _F16:  # torch's CPU half gemm accumulates in float
        return np.matmul(a.astype(_F32), b.astype(_F32)).astype(_F16)
    return np.matmul(a, b)


def mm_cpu(self, mat2):
    a, b = self._data, mat2._data
    dt = a.dtype
    if a.ndim == 2 == b.ndim and dt is b.dtype and (dt is _F32 or dt is _F64):
        try:  # the same BLAS gemm as np.matmul; the method skips np.dot's __array_function__ hop (~0.3 us)
            r = a.dot(b)
        except ValueError:
            pass  # mismatched shapes: torch's error text below
        else:
            return wrap_cpu(r if r.size else _result(r))
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    if dt != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CPP_NAME[dt]} != "
                           f"{_CPP_NAME[b.dtype]}")
    if dt is _BOOL:
        raise _not_implemented("addmm_impl_cpu_", dt)
    return wrap_cpu(_result(_matmul(a, b)))


def bmm_cpu(self, mat2):
    a, b = self._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"{_shape_str((a.shape[0], a.shape[2]))} but got: {_shape_str(b.shape[:2])}.")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_NAME[a.dtype]} but found {_TORCH_NAME[b.dtype]}")
    if a.dtype is _BOOL:
        raise _not_implemented("bmm", a.dtype)
    return wrap_cpu(_result(_matmul(a, b)))


# --- softmax and losses ---------------------------------------------------------------------------
def _softmax_common(self: Any, dim: int, half_to_float: bool, name: str) -> tuple:
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.dtype.kind != "f":
        last = a.ndim == 0 or d == a.ndim - 1
        raise _not_implemented(f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl", a.dtype)
    x = a.reshape(1) if a.ndim == 0 else a  # torch views a 0-d input as (1,)
    if a.dtype is _F16:
        x = x.astype(_F32)
    return a, x, d


def _softmax_cpu(self, dim, half_to_float):
    a, x, d = _softmax_common(self, dim, half_to_float, "softmax")
    if a.size == 0:
        return wrap_cpu(_new(a.shape, a.dtype))
    with quiet():  # an all -inf row gives nan, silently, as in torch
        e = _sub(x, _maximum.reduce(x, d, keepdims=True))  # subtract the max: exp never overflows
        np.exp(e, out=e)
        _div(e, _add_reduce(e, d, keepdims=True), out=e)
    return wrap_cpu(_result(e.reshape(a.shape).astype(a.dtype, copy=False)))


def _log_softmax_fast(a: np.ndarray, d: int) -> np.ndarray | None:
    """``_log_softmax_cpu``'s arithmetic for a C-contiguous float32/float64 input, errors caught; None: not it.

    The general path's arithmetic, minus the checks its conditions make needless and the
    ``errstate`` (See Note [Quiet floating-point errors]): infinities go the general way. A
    classifier's (N, classes) logits take each row's maximum from the transposed copy.
    """
    try:
        if d == 1 and a.ndim == 2 and a.shape[1] <= 32 < a.shape[0]:
            # a classifier's logits, (N, classes): numpy reduces a short inner axis row by row
            # (4.1 us at 64x10); the maximum of the transposed copy's rows is one vectorized pass
            # per class (0.6 + 1.3 us), with the same values in any order (of several NaNs in a
            # row, the one kept may differ: the general, non-contiguous path keeps this one)
            peak = _maximum.reduce(a.T.copy(), 0).reshape(-1, 1)
        else:
            peak = _maximum.reduce(a, d, keepdims=True)
        shifted = _sub(a, peak)
        s = _add_reduce(np.exp(shifted), d, keepdims=True)
        np.log(s, out=s)
        return _sub(shifted, s, out=shifted)
    except _FP_ERRORS:
        return None


def log_softmax_backward_fast(g: np.ndarray, o: np.ndarray, d: int) -> np.ndarray | None:
    """``grad - exp(output) * sum(grad, d)`` for same-dtype float32/float64 operands; None when it warns."""
    try:
        r = np.exp(o)
        _mul(r, _add_reduce(g, d, keepdims=True), out=r)
        return _sub(g, r, out=r)
    except _FP_ERRORS:
        return None


def _log_softmax_cpu(self, dim, half_to_float):
    a = self._data
    if (a.dtype is _F32 or a.dtype is _F64) and a.ndim and a.size and a.flags.c_contiguous \
            and half_to_float is False and -a.ndim <= dim < a.ndim:  # every step's cross_entropy
        r = _log_softmax_fast(a, dim % a.ndim)
        if r is not None:
            return wrap_cpu(r)
    a, x, d = _softmax_common(self, dim, half_to_float, "log_softmax")
    if a.size == 0:
        return wrap_cpu(_new(a.shape, a.dtype))
    with quiet():
        shifted = _sub(x, _maximum.reduce(x, d, keepdims=True))
        r = _sub(shifted, np.log(_add_reduce(np.exp(shifted), d, keepdims=True)))
    return wrap_cpu(_result(r.reshape(a.shape).astype(a.dtype, copy=False)))


def _reduce_loss(loss: np.ndarray, reduction: int, dt: np.dtype) -> np.ndarray:
    if reduction == 0:
        return loss
    if reduction == 1:
        return _mean(loss, None, False, None)
    if reduction == 2:
        return _sum(loss, None, False, _F32 if dt is _F16 else dt, dt)
    raise RuntimeError("reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT FAILED: "
                       f"invalid reduction {reduction} (0 none, 1 mean, 2 sum)")


def mse_loss_cpu(self, target, reduction=1):
    dt = _result_np(self, target)
    if dt.kind != "f":
        raise _not_implemented("mse_cpu", dt)
    a, b = _cast(self._data, dt), _cast(target._data, dt)
    _broadcast_shapes(a.shape, b.shape)
    with quiet():
        d = _arr(_sub(a, b))
        loss = _mul(d, d, out=d)
        return wrap_cpu(_reduce_loss(loss, reduction, dt))


def nll_targets_in_range(x: np.ndarray, t: np.ndarray, ignore_index: int) -> bool:
    """Whether an unweighted ``nll_loss`` takes the training loop's case: every target counts.

    ``x`` (N, C) float32/float64 with 0 < N < 2**24 (its count of ones is exact in float32), ``t``
    int64 (N,) with every target in ``[0, C)``, and an ``ignore_index`` no target can equal. Then
    no row is ignored or out of bounds, each weight is 1 and the total weight is N: the general
    paths' masks and weights fall away, with the same arithmetic on what is left.
    """
    return (x.ndim == 2 and t.ndim == 1 and t.dtype is _I64 and (x.dtype is _F32 or x.dtype is _F64)
            and 0 < x.shape[0] == t.shape[0] < 1 << 24 and not 0 <= ignore_index < x.shape[1]
            and int(_maximum.reduce(t.view(_U64))) < x.shape[1])  # negative targets wrap to huge unsigned


def nll_rows(n: int) -> np.ndarray:
    """``arange(n)``, the row index of each target, read-only and cached per ``n``."""
    rows = _NLL_ROWS.get(n)
    if rows is None:
        rows = np.arange(n)
        rows.flags.writeable = False
        if len(_NLL_ROWS) < 64:
            _NLL_ROWS[n] = rows
    return rows


def nll_grad_fast(x: np.ndarray, t: np.ndarray, g: np.ndarray, total_weight: np.ndarray,
                  reduction: int) -> np.ndarray | None:
    """``nll_loss_backward``'s gradient when ``nll_targets_in_range``: zeros and ``-(g / total)`` at each target.

    ``g`` and ``total_weight`` 0-d of ``x``'s dtype; None when the division warns (the general
    path computes it quietly).
    """
    try:
        coef = -(g / total_weight) if reduction == 1 else -g
    except _FP_ERRORS:
        return None
    grad = np.zeros(x.shape, x.dtype)
    grad[nll_rows(x.shape[0]), t] = coef
    return grad


_NLL_ROWS: dict[int, np.ndarray] = {}
_U64 = np.dtype(np.uint64)


def nll_loss_forward_cpu(self, target, weight, reduction, ignore_index):
    x, t = self._data, target._data
    if weight is None and (reduction == 1 or reduction == 2) and nll_targets_in_range(x, t, ignore_index):
        picked = x[nll_rows(x.shape[0]), t]  # a new array: negated in place, then summed as below
        total = x.dtype.type(x.shape[0])
        try:  # an overflowing sum goes the general way (See Note [Quiet floating-point errors])
            out = _add_reduce(_neg(picked, out=picked))
            return wrap_cpu(np.array(out / total if reduction == 1 else out, x.dtype)), wrap_cpu(np.array(total))
        except _FP_ERRORS:
            pass
    w = None if weight is None else weight._data
    # the shape checks of TORCH_META_FUNC(nll_loss_forward), in its order
    if not 0 < x.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x.ndim == 1 and t.ndim == 1:
        if t.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}")
    elif x.ndim == 2 and t.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    elif not (x.ndim == 1 and t.ndim == 0) and x.shape[0] != t.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {_shape_str(x.shape)}, target: {_shape_str(t.shape)})")
    n_classes = x.shape[-1]
    if w is not None and (w.ndim != 1 or w.size != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes but "
                           f"got weight tensor of shape: {_shape_str(w.shape)}")
    dt = x.dtype
    if dt.kind != "f":
        raise _not_implemented("nll_loss_out_frame", dt)
    if t.dtype is not _I64 and t.dtype is not _U8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_TORCH_NAME[t.dtype]}")
    if w is not None and w.dtype != dt:
        raise RuntimeError(f"expected scalar type {_TORCH_NAME[dt]} but found {_TORCH_NAME[w.dtype]}")
    acc = _F32 if dt is _F16 else dt
    x2 = x.reshape(1, -1) if x.ndim == 1 else x
    t1 = t.reshape(-1).astype(_I64)
    valid = t1 != ignore_index
    bad = valid & ((t1 < 0) | (t1 >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t1[_argmax(bad)]} is out of bounds.")
    safe = _where(valid, t1, 0)
    weights = _where(valid, 1 if w is None else w.astype(acc)[safe], 0).astype(acc)
    with quiet():
        losses = -x2[np.arange(x2.shape[0]), safe].astype(acc) * weights
        if reduction == 0 and x.ndim == 2:
            return wrap_cpu(losses.astype(dt)), wrap_cpu(np.zeros((), dt))
        if t1.size == 0:
            value = np.nan if reduction == 1 else 0.0
            return wrap_cpu(np.array(value, dt)), wrap_cpu(np.zeros((), dt))
        total = weights.sum(dtype=acc)
        out = losses.sum(dtype=acc)
        if reduction == 1:
            out = out / total
        return wrap_cpu(np.array(out, dt)), wrap_cpu(np.array(total, dt))


# --- joining, copies and fills --------------------------------------------------------------------
def cat_cpu(tensors, dim=0):
    if len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    arrays = [t._data for t in tensors]
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dt = _result_np(*tensors)
    # legacy behaviour: 1-D empty tensors are skipped, whatever the other shapes
    kept = [(i, a) for i, a in enumerate(arrays) if not (a.ndim == 1 and a.shape[0] == 0)]
    if not kept:
        return wrap_cpu(_new((0,), dt))
    ref = kept[0][1]
    d = _wrap_dim(dim, ref.ndim)
    return wrap_cpu(_cat(arrays, kept, d, dt))


def _cat(arrays: list, kept: list, d: int, dt: np.dtype) -> np.ndarray:
    ref = kept[0][1]
    for i, a in kept:
        if a.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}")
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    shape = list(ref.shape)
    shape[d] = sum(a.shape[d] for _, a in kept)
    # compute_output_memory_format: channels-last only when every input suggests it
    formats = {_suggest_memory_format(a) for a in arrays}
    out = _alloc(tuple(shape), dt, formats.pop() if len(formats) == 1 else "contiguous_format")
    return _concatenate([a for _, a in kept], axis=d, out=out, casting="unsafe")




def _memory_format(memory_format: Any, default: str) -> str:
    """The name of a ``MemoryFormat`` argument (an int as torch stores it, a string or an enum-like)."""
    if memory_format is None:
        return default
    if isinstance(memory_format, int):
        return _MEMORY_FORMATS[memory_format]
    return str(getattr(memory_format, "name", memory_format)).rpartition(".")[2]


def _empty_strided(shape: tuple, strides: tuple, dt: np.dtype) -> np.ndarray:
    """Fresh memory laid out with the given element strides (non-negative)."""
    n = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    buffer = _empty(max(n, 1), dt)
    return np.ndarray(shape, dt, buffer, 0, tuple(st * dt.itemsize for st in strides))


@functools.lru_cache(maxsize=256)
def _c_byte_strides(shape: tuple, itemsize: int) -> tuple:
    """``_contiguous_strides`` in bytes, as numpy's ``strides`` reads (cached: results repeat shapes)."""
    return tuple(s * itemsize for s in _contiguous_strides(shape))


@functools.lru_cache(maxsize=256)
def _contiguous_strides(shape: tuple) -> tuple:
    """Contiguous strides as torch computes them (elements): size-0 dims count as 1 (cached: shapes repeat)."""
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _new(shape: tuple, dt: np.dtype, fill: Any = None) -> np.ndarray:
    """A fresh contiguous array (filled when ``fill`` is given); numpy gives empty arrays zero strides."""
    if 0 in shape:
        return _empty_strided(shape, _contiguous_strides(shape), dt)
    if fill is None:
        return _empty(shape, dt)
    r = _empty(shape, dt)
    r.fill(fill)
    return r


def _suggest_memory_format(a: np.ndarray) -> str:
    """Mirror ``suggest_memory_format``: channels-last when the strides say so (4-d and 5-d only)."""
    if a.ndim == 4:
        order, fmt = (1, 3, 2, 0), "channels_last"
    elif a.ndim == 5:
        order, fmt = (1, 4, 3, 2, 0), "channels_last_3d"
    else:
        return "contiguous_format"
    shape, strides = a.shape, _strides(a)
    if strides[1] == 0:
        return "contiguous_format"
    lowest = 0
    for d in order:  # is_channels_last_strides_{2,3}d
        if shape[d] == 0 or strides[d] < lowest or (d == 0 and lowest == strides[1]):
            return "contiguous_format"
        lowest = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return fmt


def _alloc(shape: tuple, dt: np.dtype, fmt: str, op: str = "empty") -> np.ndarray:
    """Uninitialised memory in a contiguous or channels-last memory format."""
    if fmt in ("contiguous_format", "preserve_format"):
        return _new(shape, dt)
    if fmt in ("channels_last", "channels_last_3d"):
        rank = 4 if fmt == "channels_last" else 5
        if len(shape) != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {fmt} format")
        order = (0, *range(2, rank), 1)
        back = (0, rank - 1, *range(1, rank - 1))
        return _empty(tuple(shape[i] for i in order), dt).transpose(back)
    raise RuntimeError(f"{op}: unsupported memory format {fmt!r}")


def _empty_like_format(a: np.ndarray, fmt: str, op: str, dt: np.dtype | None = None) -> np.ndarray:
    """Uninitialised memory shaped like ``a`` in a memory format (``empty_like``), of dtype ``dt``."""
    dt = a.dtype if dt is None else dt
    if fmt != "preserve_format":
        return _alloc(a.shape, dt, fmt, op)
    # preserve: a dense input keeps its exact strides, others follow its stride order (empty_like)
    itemsize = a.dtype.itemsize
    strides = tuple(s // itemsize for s in a.strides)
    if all(s >= 0 for s in strides) and _non_overlapping_and_dense(a.shape, strides):
        return _empty_strided(a.shape, strides, dt)
    return _new(a.shape, dt) if a.flags.c_contiguous else _empty_like(a, dt, order="K")


def clone_cpu(self, *, memory_format=None):
    a = self._data
    if memory_format is None and a.flags.c_contiguous and 1 not in a.shape and a.size:
        return wrap_cpu(a.copy())  # numpy's C order ignores size-1 dims' strides; torch keeps them
    out = _empty_like_format(a, _memory_format(memory_format, "preserve_format"), "clone")
    _copyto(out, a)
    return wrap_cpu(out)


def copy__cpu(self, src, non_blocking=False):
    d, s = self._data, src._data
    if d.base is not None and 0 in d.strides and src is not self:  # copy_ to itself returns first
        _assert_no_internal_overlap(d)
    if d.dtype is s.dtype and d.shape == s.shape:
        _copyto(d, s)
        return self
    shape = _broadcast_shapes(d.shape, s.shape)
    if shape != d.shape:
        raise RuntimeError(f"output with shape {_shape_str(d.shape)} doesn't match the broadcast shape "
                           f"{_shape_str(shape)}")
    if s.dtype.kind == "c" and d.dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
        s = s.real
    with quiet():
        _copyto(d, _cast(s, d.dtype), casting="unsafe")
    return self


def fill__scalar_cpu(self, value):
    a = self._data
    if value.__class__ is int and (value == 1 or value == 0):  # ones_like, zeros: fit every dtype
        a.fill(value)
    else:
        a.fill(_checked_scalar(value, a.dtype))
    return self


def fill__tensor_cpu(self, value):
    if value._data.ndim != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._data.ndim} dimensions.")
    return fill__scalar_cpu(self, value._data.item())


def reciprocal_cpu(self):
    """``1 / self``: integers and bools give the default float dtype, as torch's unary float ops."""
    return _binary("div", _div, 1, self)


def rsub_tensor_cpu(self, other, *, alpha=1):
    """``other - alpha * self``."""
    return _binary("sub", _sub, other, self, alpha)


def zero__cpu(self):
    self._data.fill(0)
    return self


# --- views: numpy views of the input's memory, never copies ---------------------------------------
class _StridedMemory:
    """An ``__array_interface__`` carrier, for the rare root that exports no buffer."""

    __slots__ = ("__array_interface__", "base")

    def __init__(self, interface: dict, base: np.ndarray) -> None:
        self.__array_interface__ = interface
        self.base = base


def _storage_root(a: np.ndarray) -> np.ndarray:
    """The ndarray owning ``a``'s memory: torch's storage (``Tensor.storage_offset`` counts from it)."""
    root = a
    while isinstance(root.base, _nd):
        root = root.base
    return root


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _restride(a: np.ndarray, shape: tuple, strides: tuple, storage_offset: int | None = None) -> np.ndarray:
    """A view of ``a``'s storage with element ``strides``; ``storage_offset`` None keeps ``a``'s.

    The view is built over the storage root so that its ``base`` chain still leads to the root
    (``np.lib.stride_tricks.as_strided`` would end the chain at a non-ndarray).
    """
    itemsize = a.dtype.itemsize
    byte_strides = tuple(s * itemsize for s in strides)
    if storage_offset is None and a.flags.c_contiguous:
        try:  # no address arithmetic needed: a's own buffer starts at its offset
            return np.ndarray(shape, a.dtype, a, 0, byte_strides)
        except (TypeError, ValueError, BufferError):
            pass
    root = _storage_root(a)
    if storage_offset is not None:
        offset = storage_offset * itemsize
    else:
        offset = 0 if root is a else _address(a) - _address(root)
    try:
        return np.ndarray(shape, a.dtype, root, offset, byte_strides)
    except (TypeError, ValueError, BufferError):
        interface = {"shape": tuple(shape), "typestr": a.dtype.str, "strides": byte_strides, "version": 3,
                     "data": (_address(root) + offset, not a.flags.writeable)}
        return np.asarray(_StridedMemory(interface, a))


def _strides(a: np.ndarray) -> tuple:
    itemsize = a.dtype.itemsize
    return tuple(s // itemsize for s in a.strides)


_compute_stride = compute_stride  # the shared shape rules of dispatchcore.shapes
_infer_size, _broadcast_shapes, _infer_view_size = infer_size, broadcast_shapes, infer_size_dv


def _view(a: np.ndarray, size: Any) -> np.ndarray:
    shape = _infer_view_size(size, a.size)
    strides = _compute_stride(a.shape, _strides(a), shape)
    if strides is None:
        raise RuntimeError(_VIEW_ERROR)
    try:
        r = a.reshape(shape, copy=False)
        if _strides(r) == strides:
            return r
    except ValueError:
        pass
    return _restride(a, shape, strides)


def view_cpu(self, size):
    a = self._data
    if a.flags.c_contiguous:
        try:  # numpy reshapes a contiguous array as a view with torch's strides
            for n in size:
                if n < -1:  # numpy would infer any negative size; torch only -1
                    raise ValueError
            return wrap_cpu(a.reshape(size))
        except (ValueError, TypeError):
            pass  # torch's error text, from the slow path
    return wrap_cpu(_view(a, size))




def _reshape_alias_cpu(self, size, stride):
    return wrap_cpu(_restride(self._data, tuple(size), tuple(stride)))


def alias_cpu(self):
    return wrap_cpu(self._data.view())


def t_cpu(self):
    a = self._data
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return wrap_cpu(a.T)


def transpose_int_cpu(self, dim0, dim1):
    a = self._data
    n = a.ndim
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    return wrap_cpu(a.swapaxes(d0, d1) if n else a.view())


def permute_cpu(self, dims):
    a = self._data
    n = a.ndim
    if len(dims) != n:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           "length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{n} is not equal to len(dims) = {len(dims)}")
    wrapped = [_wrap_dim(d, n) for d in dims]
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return wrap_cpu(a.transpose(wrapped) if n else a.view())


def expand_cpu(self, size, *, implicit=False):
    a = self._data
    size = tuple(size)
    ndim, tensor_dim = len(size), a.ndim
    if ndim < tensor_dim:
        raise RuntimeError(f"expand(torch.{_TORCH_NAME[a.dtype]}Tensor{{{_shape_str(a.shape)}}}, "
                           f"size={_shape_str(size)}): the number of sizes provided ({ndim}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({tensor_dim})")
    if size == a.shape:
        return wrap_cpu(a.view())
    if not tensor_dim and min(size, default=0) >= 0:  # a 0-d tensor (sum's and mean's backward):
        zeros = (0,) * ndim  # every dim is new, every stride 0 (in bytes too)
        try:  # _restride's first case without its stride arithmetic (a 0-d array is contiguous)
            return wrap_cpu(_nd(size, a.dtype, a, 0, zeros))
        except (TypeError, ValueError, BufferError):
            return wrap_cpu(_restride(a, size, zeros))
    old_strides = _strides(a)
    sizes, strides = [0] * ndim, [0] * ndim
    for i in range(ndim - 1, -1, -1):  # inferExpandGeometry
        dim = tensor_dim - 1 - (ndim - 1 - i)
        cur = a.shape[dim] if dim >= 0 else 1
        # a new dim's stride spans the dims after it (0 past the last one, as torch's geometry gives)
        stride = old_strides[dim] if dim >= 0 else (sizes[i + 1] * strides[i + 1] if i < ndim - 1 else 0)
        target = size[i]
        if target == -1:
            if dim < 0:
                raise RuntimeError(f"The expanded size of the tensor ({target}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            target = cur
        if cur != target:
            if cur != 1:
                raise RuntimeError(f"The expanded size of the tensor ({target}) must match the existing size "
                                   f"({cur}) at non-singleton dimension {i}.  Target sizes: {_shape_str(size)}.  "
                                   f"Tensor sizes: {_shape_str(a.shape)}")
            if target < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {target}: {_shape_str(size)}")
            cur, stride = target, 0
        sizes[i], strides[i] = cur, stride
    return wrap_cpu(_restride(a, tuple(sizes), tuple(strides)))


def squeeze_cpu(self):
    return wrap_cpu(self._data.squeeze())


def squeeze_dim_cpu(self, dim):
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    return wrap_cpu(a.squeeze(d) if a.ndim and a.shape[d] == 1 else a.view())


def unsqueeze_cpu(self, dim):
    a = self._data
    return wrap_cpu(_unsqueeze(a, _wrap_dim(dim, a.ndim + 1)))


def _unsqueeze(a: np.ndarray, d: int) -> np.ndarray:
    shape, strides = a.shape, a.strides  # in bytes: a's strides are torch's times the item size
    new = a.dtype.itemsize if d >= a.ndim else shape[d] * strides[d]  # torch's stride for the new dim
    shape, strides = shape[:d] + (1,) + shape[d:], strides[:d] + (new,) + strides[d:]
    if a.flags.c_contiguous and a.size:  # (numpy zeroes an empty view's strides)
        try:  # a view of a's own buffer with those strides (a stays its base)
            return _nd(shape, a.dtype, a, 0, strides)
        except (TypeError, ValueError, BufferError):
            pass
    itemsize = a.dtype.itemsize
    return _restride(a, shape, tuple(s // itemsize for s in strides))


def select_int_cpu(self, dim, index):
    a = self._data
    if dim == 0 and type(index) is int and a.ndim:  # x[i], the common case
        size = len(a)
        if -size <= index < size:
            return wrap_cpu(a[index, ...])  # the Ellipsis keeps a 0-d result an array view, not a scalar
    n = a.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = a.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {_shape_str(a.shape)} at "
                         f"dimension {d}")
    if d == 0:
        return wrap_cpu(a[index, ...])  # the Ellipsis keeps a 0-d result an array view, not a scalar
    return wrap_cpu(a[(slice(None),) * d + (index, Ellipsis)])


def slice_tensor_cpu(self, dim=0, start=None, end=None, step=1):
    a = self._data
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, a.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    # Python's slice clamping equals torch's for positive steps
    r = a[(slice(None),) * d + (slice(start, end, step),)]
    if r.shape[d] == 0 and a.shape[d]:  # numpy drops the offset of an empty slice; torch keeps start
        size = a.shape[d]
        first = 0 if start is None else (start + size if start < 0 else start)
        first = min(max(first, 0), size)
        root = _storage_root(a)
        itemsize = a.dtype.itemsize
        offset = (_address(a) - _address(root)) // itemsize + first * _strides(a)[d]
        r = _restride(a, r.shape, _strides(a)[:d] + (_strides(a)[d] * step,) + _strides(a)[d + 1:], offset)
    return wrap_cpu(r)


def as_strided_cpu(self, size, stride, storage_offset=None):
    a = self._data
    size, stride = tuple(size), tuple(stride)
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{_shape_str(stride)}")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_shape_str(size)}")
    root = _storage_root(a)
    itemsize = a.dtype.itemsize
    if storage_offset is None:
        storage_offset = (_address(a) - _address(root)) // itemsize
    if 0 not in size:
        needed = (storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))) * itemsize
        if needed > root.nbytes:
            raise RuntimeError(f"setStorage: sizes {_shape_str(size)}, strides {_shape_str(stride)}, storage offset "
                               f"{storage_offset}, and itemsize {itemsize} requiring a storage size of {needed} are "
                               f"out of bounds for storage of size {root.nbytes}")
    return wrap_cpu(_restride(a, size, stride, storage_offset))


# --- factories (reached through BackendSelect) ----------------------------------------------------
def _check_layout(layout: Any, op: str) -> None:
    """Accept ``None`` or the strided layout (torch's value 0, ``"strided"`` or an enum-like)."""
    if layout is None or (type(layout) is int and layout == 0):
        return
    if str(getattr(layout, "name", layout)).rpartition(".")[2] != "strided":
        raise RuntimeError(f"{op}(...): the CPU backend supports only the strided layout, got layout={layout!r}")


def _check_size(size: Any, op: str = "") -> tuple:
    shape = (int(size),) if isinstance(size, int) else tuple(map(int, size))
    if shape and min(shape) < 0:
        if op == "zeros":
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        first = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {first}: {_shape_str(shape)}")
    return shape


def empty_memory_format_cpu(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    _check_layout(layout, "empty")
    shape, dt = _check_size(size), _np_dtype(dtype)
    fmt = _memory_format(memory_format, "contiguous_format")
    if fmt in ("contiguous_format", "preserve_format"):
        return wrap_cpu(_new(shape, dt))
    return wrap_cpu(_alloc(shape, dt, fmt))


def empty_strided_cpu(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_layout(layout, "empty_strided")
    shape, strides = _check_size(size), tuple(map(int, stride))
    if strides and min(strides) < 0:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_shape_str(shape)} and "
                           f"strides={_shape_str(strides)}")
    if strides == _contiguous_strides(shape):  # empty_like of a contiguous tensor: plain np.empty
        return wrap_cpu(_new(shape, _np_dtype(dtype)))
    return wrap_cpu(_empty_strided(shape, strides, _np_dtype(dtype)))


def zeros_cpu(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_layout(layout, "zeros")
    return wrap_cpu(_new(_check_size(size, "zeros"), _np_dtype(dtype), 0))


def ones_cpu(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_layout(layout, "ones")
    return wrap_cpu(_new(_check_size(size), _np_dtype(dtype), 1))


def _infer_scalar_dtype(value: Any) -> np.dtype:
    """The dtype torch gives a tensor made from a Python scalar: bool, int64, default float or complex."""
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, int):
        return _I64
    if isinstance(value, complex):
        return _C128 if _default_np() is _F64 else _C64
    return _default_np()


def full_cpu(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_layout(layout, "full")
    value = _item(fill_value)
    dt = _infer_scalar_dtype(value) if dtype is None else _np_dtype(dtype)
    shape = _check_size(size)
    return wrap_cpu(_new(shape, dt, _checked_scalar(value, dt)))


def _fmt(x: float) -> str:
    """A number as C++'s ostream prints it (6 significant digits)."""
    return f"{x:g}"


def arange_start_step_cpu(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_layout(layout, "arange")
    start, end, step = _item(start), _item(end), _item(step)
    if dtype is None:
        integral = all(isinstance(v, int) for v in (start, end, step))
        dt = _I64 if integral else _default_np()
    else:
        dt = _np_dtype(dtype)
    if dt is _BOOL:
        raise _not_implemented("arange_cpu", dt)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    ds, de, dst = float(start), float(end), float(step)  # arange_check_bounds: in double, whatever the dtype
    if not (math.isfinite(ds) and math.isfinite(de)):
        raise RuntimeError(f"unsupported range: {_fmt(start)} -> {_fmt(end)}")
    if not ((dst > 0 and de >= ds) or (dst < 0 and de <= ds)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dt.kind in "iu":  # accscalar is int64: the bounds and step are truncated (a step may become 0)
        xs, xe, xst = int(start), int(end), int(step)
        if xst == 0 and dt is _I64:  # int64 sizes divide by the truncated step
            raise ValueError("step must be nonzero")
    else:
        xs, xe, xst = ds, de, dst
    if dt is _I64:
        sign = 1 if xst > 0 else -1
        n = (xe - xs + xst - sign) // xst  # C++ int64 division; both operands share a sign here
    else:  # the length in double precision, from the original scalars, as torch does
        n = math.ceil((float(end) - float(start)) / float(step))
    if not 0 <= n <= _INT64_MAX_D:  # torch: size_d >= 0 && size_d <= double(INT64_MAX)
        raise RuntimeError("invalid size, possible overflow?")
    if dt.kind in "iu":
        values = xs + xst * np.arange(n, dtype=_I64)
    elif dt is _F16:  # half accumulates in float
        values = np.float32(xs) + np.float32(xst) * np.arange(n, dtype=_F32)
    else:
        values = xs + xst * np.arange(n, dtype=_F64)
    return wrap_cpu(_result(values.astype(dt)))


def linspace_cpu(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_layout(layout, "linspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _np_dtype(dtype)
    if dt is _BOOL:
        raise _not_implemented("linspace_cpu", dt)
    start, end = _item(start), _item(end)
    if steps == 0:
        return wrap_cpu(_new((0,), dt))
    if steps == 1:
        return wrap_cpu(np.full((1,), start).astype(dt))
    with quiet():
        return wrap_cpu(_linspace_loop(start, end, steps, dt).astype(dt))


def _linspace_loop(start: Any, end: Any, steps: int, dt: np.dtype) -> np.ndarray:
    """The points of torch's linspace (and logspace) kernel, ``steps >= 2``, in the dtype it computes in.

    ``start + step*i`` for the first half, ``end - step*(steps-1-i)`` for the second, the ends
    converted to ``dt`` first; in double for integral dtypes, in the dtype itself otherwise (half
    in float).
    """
    calc = _F64 if dt.kind in "iu" else (_F32 if dt is _F16 else dt)
    s = np.array(start).astype(dt).astype(calc)
    e = np.array(end).astype(dt).astype(calc)
    step = (e - s) / calc.type(steps - 1)
    idx = np.arange(steps, dtype=calc)
    return _where(np.arange(steps) < steps // 2, s + step * idx, e - step * (steps - 1 - idx)).astype(calc)


def logspace_out_cpu(start, end, steps, base=10.0, *, out):
    """``logspace_out``: ``base`` to the powers linspace's loop makes, then cast to out's dtype.

    The exponents are computed in the out dtype (double for integral ones) and raised as torch's
    ``std::pow(double, x)`` does.
    """
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = out._data.dtype
    start, end = _item(start), _item(end)
    complex_out = dt.kind == "c"
    if steps <= 1:
        if steps == 0:
            return _write_range(out, _new((0,), dt), False)
        power = complex(base) ** complex(start) if complex_out else math.pow(base, float(start))
        return _write_range(out, np.full((1,), power).astype(dt), False)
    if dt is _BOOL:
        raise _not_implemented("logspace_cpu", dt)
    wide = np.complex128 if complex_out else np.float64
    with quiet():
        values = np.power(wide(base), _linspace_loop(start, end, steps, dt).astype(wide))
        return _write_range(out, values.astype(dt), False)


def arange_start_out_cpu(start, end, step=1, *, out):
    """``arange_out``: the range in ``out``'s dtype, written into ``out`` (resized when its numel differs)."""
    values = arange_start_step_cpu(start, end, step, dtype=out.dtype)._data
    return _write_range(out, values, True)


def linspace_out_cpu(start, end, steps, *, out):
    values = linspace_cpu(start, end, steps, dtype=out.dtype)._data
    return _write_range(out, values, False)


def eye_m_out_cpu(n, m, *, out):
    """``eye_out_cpu``: ``out`` resized to (n, m) (``resize_``, no warning), zeros, ones on the diagonal."""
    from dispatchcore.native.explicit import resize_eye_out

    resize_eye_out(out, n, m)
    data = out._data
    data[...] = 0
    np.fill_diagonal(data, 1)  # writes through a strided out too
    return out


def eye_out_cpu(n, *, out):
    return eye_m_out_cpu(n, n, out=out)


def _write_range(out, values, warn):
    from dispatchcore.native.explicit import resize_range_out

    resize_range_out(out, values.shape[0], warn)
    _copyto(out._data, values.reshape(out._data.shape))  # a kept shape (numel matched) is filled row-major
    return out


def _rng(generator: Any) -> Any:
    """The CPU random engine a kernel draws from (``generator.py``): the default one for ``None``."""
    return _random.resolve(generator)


def scalar_tensor_cpu(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_layout(layout, "scalar_tensor")
    dt, value = _np_dtype(dtype), _item(s)
    with quiet():
        if dt is _F16:  # torch's 0-d fill converts to half without checked_convert's test (70000 -> inf)
            return wrap_cpu(np.array(value).astype(dt))
        return wrap_cpu(_checked_number(value, dt))


def _to_copy_cpu(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                 memory_format=None):
    """The composite's result in one numpy call; BackendSelect sends a copy to another device there."""
    check_to_copy_layout(layout)
    a = self._data
    dt = a.dtype if dtype is None else _np_dtype(dtype)
    if memory_format is None and a.flags.c_contiguous and 1 not in a.shape and a.size and a.dtype.kind != "c" \
            and not (dt is _U8 and a.dtype.kind == "f"):
        # ``x.to(dtype)`` of a contiguous tensor: _cast's conversion into a fresh C-contiguous array,
        # the layout preserve_format gives (as clone's fast path: size-1 dims keep torch's strides below)
        with quiet():
            return wrap_cpu(a.astype(dt))
    fmt = _memory_format(memory_format, "preserve_format")
    out = _empty_like_format(a, fmt, "_to_copy", dt)
    if a.dtype.kind == "c" and dt.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
        a = a.real
    with quiet():
        _copyto(out, _cast(a, dt), casting="unsafe")
    return wrap_cpu(out)
