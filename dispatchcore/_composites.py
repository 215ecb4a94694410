"""CompositeImplicitAutograd decompositions and CompositeExplicitAutograd kernels of the core ops.

Mirrors the decompositions in ``aten/src/ATen/native/LinearAlgebra.cpp`` (``_matmul_impl``),
``TensorShape.cpp`` (``reshape``/``computeStride``), ``SoftMax.cpp``, ``TensorConversions.cpp``
(``to``, ``contiguous``) and ``LossNLL.cpp``. They call other operators through the dispatcher
only, so every backend (and, later, autograd) gets them for free.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import aten as _definitions  # noqa: F401 - defines the operators used here
from ._library import Library
from .dtypes import WrappedNumber
from .dtypes import device as as_device
from .layouts import contiguous_format
from .operator import protocol_attr, set_number_to_tensor
from .ops import aten
from .shapes import broadcast_shapes, compute_stride, infer_size_dv
from .tensor import Tensor, detached_alias, wrap_cpu
from .tls import _DEFAULT_STATE as _DEFAULT_KEYS
from .tls import per_thread as _pt

__all__ = ["register", "wrapped_number"]

# --- wrapped numbers ---------------------------------------------------------------------------
# Note [Wrapped numbers]: a Python number operand of add/sub/mul/div (``x * 2``, ``2 + x``,
# ``x.add_(1)``, ``dc.mul(x, 2)``) becomes a 0-d CPU tensor flagged as a wrapped number
# (``dtypes.WrappedNumber`` in its ``_meta`` slot), and the ``.Tensor`` overload runs, as torch's
# argument parser does (``scalar_to_tensor`` + ``set_wrapped_number``): the node is
# ``MulBackward0``, and promotion counts the operand as the number (``dtypes.result_type``).
# Making a tensor per call would cost ~0.4 us, so wrapped numbers of ints and floats are cached
# by value (at most ``_CACHE_LIMIT`` of each; never 0.0, which equals -0.0, nor inference
# tensors) with read-only data: an operand is never written. CPU kernels read the number from
# the flag and use it as a numpy weak scalar (Note [Fast paths]). The Tensor methods
# (``_tensor_methods.py``) look the caches up inline.
_WrappedNumber = WrappedNumber
WRAPPED_INTS: dict[int, Tensor] = {}
WRAPPED_FLOATS: dict[float, Tensor] = {}
_CACHE_LIMIT = 256
_NUMBER_NP = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
              complex: np.dtype(np.complex128)}


def _int_overflow(value: int) -> Exception:
    """The error of an int operand outside int64, as torch's argument parser raises it.

    torch unpacks a Python int through ``PyLong_AsUnsignedLongLong`` when it does not fit a
    ``long long``: below int64 that raises "can't convert negative int to unsigned", above uint64
    "int too big to convert" (both OverflowError). torch accepts [2**63, 2**64) as a uint64
    Scalar; dispatchcore has no uint64 and keeps its own error there.
    """
    if value < 0:
        return OverflowError("can't convert negative int to unsigned")
    if value >= 1 << 64:
        return OverflowError("int too big to convert")
    return RuntimeError("Overflow when unpacking long")


def wrapped_number(value: Any) -> Tensor | None:
    """``value`` (a Python or numpy number) as a wrapped-number tensor; None for anything else.

    Example:
        >>> import dispatchcore as dc
        >>> t = wrapped_number(2.5)
        >>> t.dtype, t.dim(), dc.dtypes.is_wrapped_number(t)
        (dispatchcore.float64, 0, True)
    """
    cls = value.__class__
    cache = WRAPPED_INTS if cls is int else WRAPPED_FLOATS if cls is float else None
    if cache is not None:
        t = cache.get(value)
        if t is not None:
            return t
    np_dtype = _NUMBER_NP.get(cls)
    if np_dtype is None:
        if isinstance(value, np.generic) and value.dtype.kind in "biufc":
            value = value.item()  # torch takes numpy scalars as numbers too
        elif isinstance(value, (bool, int, float, complex)):  # subclasses: IntEnum, ...
            value = complex(value) if isinstance(value, complex) else (
                bool(value) if isinstance(value, bool) else
                int(value) if isinstance(value, int) else float(value))
        else:
            return None
        cls = value.__class__
        np_dtype = _NUMBER_NP[cls]
    if cls is int and not -(1 << 63) <= value < (1 << 63):
        raise _int_overflow(value)
    data = np.array(value, np_dtype)
    t = wrap_cpu(data)
    t._meta = _WrappedNumber(value)
    cache = WRAPPED_INTS if cls is int else WRAPPED_FLOATS if cls is float else None
    if (cache is not None and t._vc is not None and len(cache) < _CACHE_LIMIT
            and value == value and value != 0):  # no nan; 0.0 == -0.0 as keys
        data.flags.writeable = False
        t._meta.as_float32 = _as_float32(value)
        cache[value] = t
    return t


# Note [Cached numbers in float32]: numpy takes a Python number operand as a weak scalar (NEP 50),
# converting it to the array's dtype on every call, ~0.2 us more than a same-dtype 0-d array
# (``x * 1.0001`` costs 0.55 us in numpy with the float, 0.33 us with the array). A cached wrapped
# number keeps its value converted once for float32 tensors, the usual dtype, by numpy's own
# weak-scalar conversion (``1 * value`` in float32): the CPU kernels use it where they would pass
# ``value``, so the operands and results are the same bits. A number float32 cannot hold (the
# conversion overflows) keeps None, and the kernels take ``value`` as before (only ints and
# floats are cached).
_F32_ONE = np.ones((), np.float32)


def _as_float32(value: int | float) -> np.ndarray | None:
    """``value`` as a read-only float32 0-d array, or None when the conversion would overflow."""
    with np.errstate(all="raise"):
        try:
            r = np.asarray(np.multiply(_F32_ONE, value))
        except (FloatingPointError, OverflowError):
            return None
    r.flags.writeable = False
    return r


def number_argument(value: Any, aliased: bool) -> Tensor | None:
    """``value`` given for a ``Tensor`` argument of an operator, as the tensor it binds as.

    A wrapped number (None when ``value`` is no number); for an argument that may alias the
    result (``Tensor(a!) self`` of ``add_``, ``out``) a fresh one, never a cached one: the
    cache's tensors are shared and read-only. The registry calls this through
    ``operator.set_number_to_tensor`` (Note [Numbers for Tensors], operator.py).
    """
    w = wrapped_number(value)
    if aliased and w is not None and w._data.flags.writeable is False:  # a cached one: the caller's own
        fresh = wrap_cpu(w._data.copy())
        fresh._meta = _WrappedNumber(w._meta.value)
        return fresh
    return w


set_number_to_tensor(number_argument)

def reshape(self: Tensor, shape: list[int]) -> Tensor:
    """View when the strides allow it, else copy then view (``at::native::reshape``).

    A contiguous tensor is viewed; another viewable one is ``_reshape_alias``ed (``view`` while a
    dispatch mode runs: torch's ``isTensorSubclassLike``).
    """
    if self.is_contiguous():
        return aten.view.default(self, list(shape))
    size = infer_size_dv(shape, self.numel())
    stride = compute_stride(tuple(self.shape), self.stride(), size)
    if stride is not None:
        from .modes import dispatch_mode_stack

        if dispatch_mode_stack():
            return aten.view.default(self, list(size))
        return aten._reshape_alias.default(self, list(size), list(stride))
    # torch: _unsafe_view(self.clone(at::MemoryFormat::Contiguous), shape)
    return aten._unsafe_view.default(aten.clone.default(self, memory_format=contiguous_format), list(size))


_mm = aten.mm.default.entry(2, 2)  # the fixed-arity entry: matrix @ matrix is the hot case


def matmul(self: Tensor, other: Tensor) -> Tensor:
    """``_matmul_impl``: pick dot, mv, mm or bmm by the operands' dimensions (two matrices first: the hot path)."""
    d1, d2 = self._data.ndim, other._data.ndim  # the backend data protocol: no method call
    if d1 == 2 and d2 == 2:
        return _mm(self, other)
    if d1 == 0 or d2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return aten.dot.default(self, other)
    if d1 == 2 and d2 == 1:
        return aten.mv.default(self, other)
    if d1 == 1 and d2 == 2:
        return aten.squeeze.dim(aten.mm.default(aten.unsqueeze.default(self, 0), other), 0)
    if d1 >= 3 and d2 in (1, 2):
        # fold the batch dimensions of self into its rows, then one mv or mm
        sizes = list(self.shape)
        rows = 1
        for s in sizes[:-1]:
            rows *= s
        folded = reshape(self, [rows, sizes[-1]])  # not -1: (5, 5, 0) folds to (25, 0)
        if d2 == 1:
            return aten._unsafe_view.default(aten.mv.default(folded, other), sizes[:-1])
        out = aten.mm.default(folded, other)
        return aten._unsafe_view.default(out, [*sizes[:-1], other.shape[-1]])  # torch's fold: UnsafeViewBackward0
    if d1 == 1:  # (n,) @ (..., n, p): a one-row matrix, then drop the row again
        return aten.squeeze.dim(matmul(aten.unsqueeze.default(self, 0), other), -2)
    # batched: broadcast the batch dimensions, then bmm on 3-D views
    n, m1 = self.shape[-2], self.shape[-1]
    m2, p = other.shape[-2], other.shape[-1]
    batch = broadcast_shapes(tuple(self.shape[:-2]), tuple(other.shape[:-2]))
    batch_numel = 1
    for s in batch:
        batch_numel *= s
    a = reshape(aten.expand.default(self, [*batch, n, m1]), [batch_numel, n, m1])
    b = reshape(aten.expand.default(other, [*batch, m2, p]), [batch_numel, m2, p])
    return reshape(aten.bmm.default(a, b), [*batch, n, p])


def softmax_int(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if dtype is not None:  # input.toType(dtype): the same tensor when the dtype is already right
        self = to_dtype(self, dtype)
    return aten._softmax.default(self, dim, False)


def log_softmax_int(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if dtype is not None:
        self = to_dtype(self, dtype)
    return aten._log_softmax.default(self, dim, False)


def contiguous(self: Tensor, *, memory_format: Any = 0) -> Tensor:
    # a mode sees clone(memory_format=torch.contiguous_format), as torch's, not the format's number
    return self if self.is_contiguous() else aten.clone.default(self, memory_format=contiguous_format)


def to_dtype(self: Tensor, dtype: Any, non_blocking: bool = False, copy: bool = False,
             memory_format: Any = None) -> Tensor:
    if dtype is self.dtype and not copy:
        return self
    return aten._to_copy.default(self, dtype=dtype, non_blocking=non_blocking)


def to_device(self: Tensor, device: Any, dtype: Any, non_blocking: bool = False, copy: bool = False,
              memory_format: Any = None) -> Tensor:
    if as_device(device) == self.device and dtype is self.dtype and not copy:
        return self
    return aten._to_copy.default(self, dtype=dtype, device=as_device(device), non_blocking=non_blocking)


def square(self: Tensor) -> Tensor:
    """``pow(self, 2)`` (``UnaryOps.cpp``): the node is ``PowBackward0``."""
    return aten.pow.Tensor_Scalar(self, 2)


def square_(self: Tensor) -> Tensor:
    return aten.pow_.Scalar(self, 2)


def square_out(self: Tensor, *, out: Tensor) -> Tensor:
    return aten.pow.Tensor_Scalar_out(self, 2, out=out)


def nll_loss(self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1,
             ignore_index: int = -100) -> Tensor:
    return aten.nll_loss_forward.default(self, target, weight, reduction, ignore_index)[0]


def rsub_tensor(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * self`` (``rsub``); the node is the derivative's ``RsubBackward0``."""
    if alpha == 1 and type(alpha) is int:
        return aten.sub.Tensor(other, self)
    return aten.sub.Tensor(other, self, alpha=alpha)


def rsub_scalar(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """``rsub.Scalar``: ``other - alpha * self`` with ``other`` wrapped (``2 - x``)."""
    wrapped = wrapped_number(other)
    assert wrapped is not None  # binding let only a Scalar through
    return rsub_tensor(self, wrapped, alpha=alpha)


def detach(self: Tensor) -> Tensor:
    """CompositeExplicitAutograd: a new tensor over the same data and version counter, no graph."""
    return detached_alias(self)


_matmul_op, _mm_op = aten.matmul.default, aten.mm.default


# Note [matmul shortcut]: ``a @ b`` on two matrices, in the default thread-local state, is
# matmul's entry, then this composite, then mm's entry: two memo lookups by the same raw bits
# (the same tensors, the same state), then mm's Autograd kernel, which calls the backend's leaf
# kernel as is when no input requires grad. The shortcut keeps its own memo from those bits to
# mm's kernel and that leaf (or the kernel again when it has none: ``no_grad_kernel``, Note
# [Bound kernels]). It is filled after an ordinary call, when matmul's memo says its kernel for
# the bits is this very composite, and replaced whole whenever matmul's or mm's table is
# rebuilt (a registration, a Library destroyed, a trace starting). A hit calls what the
# composite would have called, two or three Python hops sooner. Anything else (another kernel,
# a guard or mode, a trace: tracing keeps the memos empty) takes the ordinary path.
_shortcut_memo: dict[int, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def _forget_shortcuts() -> None:
    global _shortcut_memo
    _shortcut_memo = {}  # replaced, not cleared: a fill racing with a rebuild writes to the old one


_matmul_op._on_rebuild.append(_forget_shortcuts)
_mm_op._on_rebuild.append(_forget_shortcuts)


def matmul_shortcut(entry: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Wrap matmul's two-argument ``entry`` in the shortcut above (``Tensor.__matmul__``)."""
    def learn(self: Any, other: Any, bits: int) -> Any:
        memo = _shortcut_memo  # before reading the tables: See _forget_shortcuts
        result = entry(self, other)
        mm = _mm_op._dispatch[4].get(bits)
        if mm is not None and _matmul_op._dispatch[4].get(bits) is matmul and len(memo) < 64:
            memo[bits] = (mm, protocol_attr(mm, "no_grad_kernel") or mm)  # not a Mock's answer
        return result

    def matmul_entry(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__ and _pt.state.keys is _DEFAULT_KEYS:
            try:
                bits = self._key_bits | other._key_bits
                kernel, no_grad = _shortcut_memo[bits]
            except KeyError:  # a miss: learn below, outside the handler (Note [No chained errors])
                pass
            except AttributeError:  # not tensors: the ordinary path raises the schema's error
                bits = None
            else:
                if self._data.ndim == 2 == other._data.ndim:
                    if self._requires_grad or other._requires_grad:
                        return kernel(self, other)
                    return no_grad(self, other)
                return entry(self, other)
            if bits is not None:
                return learn(self, other, bits)
        return entry(self, other)

    matmul_entry.__name__, matmul_entry.__qualname__ = entry.__name__, entry.__qualname__
    return matmul_entry


def register(lib: Library) -> None:
    """Register the CompositeImplicitAutograd decompositions and the CompositeExplicitAutograd kernels."""
    cia = "CompositeImplicitAutograd"
    lib.impl("matmul", matmul, cia)
    lib.impl("reshape", reshape, cia)
    lib.impl("softmax.int", softmax_int, cia)
    lib.impl("log_softmax.int", log_softmax_int, cia)
    lib.impl("contiguous", contiguous, cia)
    lib.impl("to.dtype", to_dtype, cia)
    lib.impl("to.device", to_device, cia)
    lib.impl("nll_loss", nll_loss, cia)
    lib.impl("square", square, cia)
    lib.impl("square_", square_, cia)
    lib.impl("square.out", square_out, cia)
    cea = "CompositeExplicitAutograd"
    lib.impl("detach", detach, cea)
    lib.impl("rsub.Scalar", rsub_scalar, cea)
