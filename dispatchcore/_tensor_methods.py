"""Tensor methods and Python operators: each one is a call of an ``aten`` operator.

Mirrors ``torch/_tensor.py`` and the generated ``python_variable_methods.cpp``: a method picks
the overload as torch's argument parser does (add/sub/mul/div wrap a Python number and take
``.Tensor``; pow and the comparisons take ``.Scalar``; clamp takes ``.Tensor`` for tensor bounds)
and calls its ``OperatorHandle``, so every operation goes through the dispatcher. Handles are
looked up once, here, at import.
"""

from __future__ import annotations

from typing import Any

from . import _composites
from . import aten as _definitions  # noqa: F401 - the operators must exist before we look them up
from . import dtypes as _dtypes
from .dtypes import device as as_device
from .dtypes import dtype as dtype_cls
from .ops import aten
from .tensor import Tensor
from .tls import _DEFAULT_STATE as _DEFAULT_KEYS
from .tls import per_thread as _pt

__all__: list[str] = []

_T = Tensor


def fast(op: Any, tensors: int = 1, nargs: int | None = None, otherwise: Any = None) -> Any:
    """``op.entry(nargs, tensors)``, after checking that the operator's schema fits it.

    The entry dispatches on the first ``tensors`` arguments: right only when those are exactly
    the operator's dispatch arguments, all required and positional, and when ``nargs``
    positional arguments are a valid call.
    """
    nargs = tensors if nargs is None else nargs
    positions = (0,) if tensors == 1 else (0, 1)
    if op._tensor_pos != positions or len(op.schema.dispatch_arguments) != tensors or op._lo < tensors:
        raise AssertionError(f"{op} does not dispatch on exactly its first {tensors} argument(s)")
    if not op._lo <= nargs <= op._hi:
        raise AssertionError(f"{op} does not take {nargs} positional argument(s)")
    return op.entry(nargs, tensors) if otherwise is None else op.entry(nargs, tensors, otherwise=otherwise)


# See Note [Wrapped numbers] (dispatchcore/_composites.py)
_INTS, _FLOATS = _composites.WRAPPED_INTS, _composites.WRAPPED_FLOATS
wrapped_number = _composites.wrapped_number


def _number_call(op: Any):
    """``op(self, other)`` for an ``other`` that is not of ``self``'s class, a number wrapped.

    Dispatches as the entry does (See ``OperatorHandle.entry``), inline: one frame less.
    """
    def with_number(self, other):
        cls = other.__class__
        w = _INTS.get(other) if cls is int else _FLOATS.get(other) if cls is float else None
        if w is None:
            if isinstance(other, _T):  # a Tensor subclass on one side
                return op(self, other)
            w = wrapped_number(other)
            if w is None:
                return op(self, other)  # the schema's error
        keys = _pt.state.keys
        try:  # See Note [Dispatch memo]
            if keys is _DEFAULT_KEYS:
                kernel = op._dispatch[4][self._key_bits | w._key_bits]
            else:
                kernel = op._dispatch[2][(self._key_bits | w._key_bits | keys[0]) & keys[2]]
        except (KeyError, AttributeError, TypeError):
            return op(self, w)
        return kernel(self, w)

    with_number.__name__ = with_number.__qualname__ = op.name.partition("::")[2]
    return with_number


def _binary(op: Any, *, alpha: bool = False):
    """``self.op(other)`` of add/sub/mul/div (and in place): always the ``.Tensor`` overload.

    The method is the overload's two-tensor entry; a number operand reaches ``otherwise``,
    which wraps it (Note [Wrapped numbers]).
    """
    tensor_call = fast(op, 2, otherwise=_number_call(op))
    if not alpha:
        return tensor_call

    def method(self, other, *, alpha=1):
        if alpha == 1 and type(alpha) is int:  # alpha=1.0 must reach the kernel's integral check
            return tensor_call(self, other)
        if not isinstance(other, _T):
            other = wrapped_number(other) or other
        return op(self, other, alpha=alpha)
    return method


def _named(entry: Any, operand: str = "other"):
    """The public method over a binary entry, with torch's keyword name for the operand."""
    if operand == "exponent":
        def method(self, exponent):
            return entry(self, exponent)
    else:
        def method(self, other):
            return entry(self, other)
    method.__name__ = method.__qualname__ = entry.__name__  # errors read "mul() missing ... 'other'"
    return method


def _by_operand(tensor_op: Any, scalar_op: Any):
    """``self.op(other)`` of pow and the comparisons: ``.Scalar`` for a number, as torch picks.

    The method is the ``.Tensor`` entry; an operand of another class goes to ``otherwise``
    (See ``OperatorHandle.entry``), which picks the overload.
    """
    scalar_call = fast(scalar_op, 1, 2)

    def otherwise(self, other):
        if isinstance(other, _T):  # a Tensor subclass on one side
            return tensor_op(self, other)
        return scalar_call(self, other)

    return fast(tensor_op, 2, otherwise=otherwise)


A = aten
# the operators take no alpha: one keyword-only parameter less on the hottest calls
Tensor.add, Tensor.__add__ = _binary(A.add.Tensor, alpha=True), _binary(A.add.Tensor)
Tensor.sub, Tensor.__sub__ = _binary(A.sub.Tensor, alpha=True), _binary(A.sub.Tensor)
# the operators are the entries themselves; the named methods keep torch's keyword names
Tensor.__mul__ = _binary(A.mul.Tensor)
Tensor.__truediv__ = _binary(A.div.Tensor)
Tensor.mul = _named(Tensor.__mul__)
Tensor.add_, Tensor.__iadd__ = _binary(A.add_.Tensor, alpha=True), _binary(A.add_.Tensor)
Tensor.sub_, Tensor.__isub__ = _binary(A.sub_.Tensor, alpha=True), _binary(A.sub_.Tensor)
Tensor.__imul__ = _binary(A.mul_.Tensor)
Tensor.__itruediv__ = _binary(A.div_.Tensor)
Tensor.mul_ = _named(Tensor.__imul__)
# number + tensor: torch's __radd__ is add with self first (add.Tensor(x, 2)), so is __rmul__;
# Python calls them with a number (or a Tensor subclass), so they skip the entry's class check
Tensor.__radd__, Tensor.__rmul__ = _number_call(A.add.Tensor), _number_call(A.mul.Tensor)
Tensor.__rsub__ = fast(A.rsub.Scalar, 1, 2)  # 2 - x: torch's __rsub__ is rsub(x, 2)
_mul_number = Tensor.__rmul__
_reciprocal = fast(A.reciprocal.default)
Tensor.__rtruediv__ = lambda self, other: _mul_number(_reciprocal(self), other)  # torch: reciprocal, then mul
Tensor.reciprocal = _reciprocal
Tensor.true_divide, Tensor.true_divide_ = _named(Tensor.__truediv__), _named(Tensor.__itruediv__)
_NO_MODE: Any = object()  # rounding_mode not passed: torch's div without it is div.Tensor


def _div_with_mode(entry: Any, mode_op: Any):
    """``div``/``div_``: ``rounding_mode`` given (even None) selects the ``.Tensor_mode`` overload."""
    def div(self, other, *, rounding_mode=_NO_MODE):
        if rounding_mode is _NO_MODE:
            return entry(self, other)
        if not isinstance(other, _T):
            other = wrapped_number(other) or other
        return mode_op(self, other, rounding_mode=rounding_mode)
    div.__name__ = div.__qualname__ = entry.__name__
    return div


Tensor.div = _div_with_mode(Tensor.__truediv__, A.div.Tensor_mode)
Tensor.div_ = _div_with_mode(Tensor.__itruediv__, A.div_.Tensor_mode)
Tensor.maximum = _named(fast(A.maximum.default, 2))
Tensor.minimum = _named(fast(A.minimum.default, 2))
Tensor.__pow__ = _by_operand(A.pow.Tensor_Tensor, A.pow.Tensor_Scalar)
Tensor.__ipow__ = _by_operand(A.pow_.Tensor, A.pow_.Scalar)
Tensor.pow, Tensor.pow_ = _named(Tensor.__pow__, "exponent"), _named(Tensor.__ipow__, "exponent")
Tensor.__rpow__ = lambda self, other: A.pow.Scalar(other, self)
Tensor.__matmul__ = _matmul = _composites.matmul_shortcut(fast(A.matmul.default, 2))
Tensor.matmul = lambda self, other: _matmul(self, other)  # keeps torch's keyword name
Tensor.__neg__ = fast(A.neg.default)
Tensor.__abs__ = fast(A.abs.default)

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _packet = getattr(A, _name)
    setattr(Tensor, f"__{_name}__", _by_operand(_packet.Tensor, _packet.Scalar))
    setattr(Tensor, _name, _named(getattr(Tensor, f"__{_name}__")))
Tensor.__hash__ = object.__hash__  # defining __eq__ would otherwise drop hashing

def _unary(op: Any):
    return fast(op)  # a one-argument function: the method itself


for _name in ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu",
              "clone", "detach", "t", "zero_"):
    setattr(Tensor, _name, _unary(getattr(A, _name).default))
for _name in ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"):
    setattr(Tensor, _name + "_", _unary(getattr(A, _name + "_").default))


def _dims(args: tuple) -> list[int]:
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)


_view, _select, _transpose = fast(A.view.default, 1, 2), fast(A.select.int, 1, 3), fast(A.transpose.int, 1, 3)
def _view_method(self: Tensor, *shape: Any) -> Tensor:
    # torch also takes view(size=...); a keyword-only parameter would cost ~15 ns on every view
    if len(shape) == 1 and type(shape[0]) is not int and isinstance(shape[0], (list, tuple)):
        return _view(self, list(shape[0]))  # view((2, 3)) or view([2, 3])
    return _view(self, [*shape])


Tensor.view = _view_method
# torch's keyword names: reshape(shape=...), permute(dims=...), expand(size=...)
Tensor.reshape = lambda self, *sizes, shape=None: A.reshape.default(self, _dims(sizes if shape is None else (shape,)))
Tensor.permute = lambda self, *order, dims=None: A.permute.default(self, _dims(order if dims is None else (dims,)))
Tensor.expand = lambda self, *sizes, size=None: A.expand.default(self, _dims(sizes if size is None else (size,)))
Tensor.transpose = lambda self, dim0, dim1: _transpose(self, dim0, dim1)
_unsqueeze = fast(A.unsqueeze.default, 1, 2)
Tensor.unsqueeze = lambda self, dim: _unsqueeze(self, dim)
_squeeze, _squeeze_dim = fast(A.squeeze.default), fast(A.squeeze.dim, 1, 2)


def _squeeze_method(self: Tensor, *dim: Any) -> Tensor:
    """``squeeze()``, ``squeeze(d)`` (squeeze.dim), ``squeeze((d0, d1))`` or ``squeeze(d0, d1)`` (squeeze.dims)."""
    if not dim:
        return _squeeze(self)
    if len(dim) == 1:
        d = dim[0]
        if d is None:
            return _squeeze(self)
        if isinstance(d, (list, tuple)):
            return A.squeeze.dims(self, list(d))
        return _squeeze_dim(self, d)
    return A.squeeze.dims(self, list(dim))


def _squeeze_kw(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    if kwargs:
        if args or set(kwargs) != {"dim"}:
            raise TypeError(f"squeeze() got an unexpected keyword argument '{next(iter(kwargs))}'")
        return _squeeze_method(self, kwargs["dim"])
    return _squeeze_method(self, *args)


Tensor.squeeze = _squeeze_kw
Tensor.select = lambda self, dim, index: _select(self, dim, index)
Tensor.as_strided = lambda self, size, stride, storage_offset=None: A.as_strided.default(
    self, list(size), list(stride), storage_offset)
Tensor.contiguous = fast(A.contiguous.default)
Tensor.copy_ = lambda self, other, non_blocking=False: A.copy_.default(self, other, non_blocking)  # torch: other
_fill_ = fast(A.fill_.Scalar, 1, 2)
Tensor.fill_ = lambda self, value: A.fill_.Tensor(self, value) if isinstance(value, _T) else _fill_(self, value)
_mm, _bmm = fast(A.mm.default, 2), fast(A.bmm.default, 2)
Tensor.mm = lambda self, mat2: _mm(self, mat2)
Tensor.bmm = lambda self, mat2: _bmm(self, mat2)
def _bound(name: str, value: Any, bounds: tuple) -> Any:
    """A bound for clamp's ``Scalar`` overload: a number, or a 0-d tensor read as one (torch's parser)."""
    if isinstance(value, _T):
        if value.dim() != 0:
            kinds = ", ".join(type(b).__name__ if not isinstance(b, _T) else "Tensor" for b in bounds)
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {kinds}), "
                            "but expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None)\n"
                            " * (Tensor input, Number min = None, Number max = None)\n")
        return value.item()
    return value


def _clamp_method(name: str, tensor_op: Any, scalar_op: Any):
    """``clamp``/``clamp_``: tensor bounds (or none) take ``.Tensor``; numbers the Scalar overload.

    A number with a tensor bound binds to the Scalar overload, which reads a 0-d tensor as its
    number, as torch's argument parser does (``_local_scalar_dense``); other mixes are a TypeError.
    """
    scalar_call = fast(scalar_op, 1, 3)

    def method(self, min=None, max=None):  # noqa: A002 - torch's names
        min_t, max_t = isinstance(min, _T), isinstance(max, _T)
        if not (min_t or max_t):
            if min is None and max is None:
                return tensor_op(self, None, None)  # torch: clamp.Tensor, which refuses it
            return scalar_call(self, min, max)
        if (min_t or min is None) and (max_t or max is None):
            return tensor_op(self, min, max)
        return scalar_call(self, _bound(name, min, (min, max)), _bound(name, max, (min, max)))
    method.__name__ = method.__qualname__ = name
    return method


def _clamp_min_method(name: str, tensor_op: Any, scalar_op: Any):
    scalar_call = fast(scalar_op, 1, 2)

    def method(self, min):  # noqa: A002
        if isinstance(min, _T):
            return tensor_op(self, min)
        return scalar_call(self, min)
    method.__name__ = method.__qualname__ = name
    return method


Tensor.clamp = _clamp_method("clamp", A.clamp.Tensor, A.clamp.default)
Tensor.clamp_ = _clamp_method("clamp_", A.clamp_.Tensor, A.clamp_.default)
Tensor.clamp_min = _clamp_min_method("clamp_min", A.clamp_min.Tensor, A.clamp_min.default)
Tensor.clamp_min_ = _clamp_min_method("clamp_min_", A.clamp_min_.Tensor, A.clamp_min_.default)
_softmax, _log_softmax = fast(A.softmax.int, 1, 3), fast(A.log_softmax.int, 1, 3)
Tensor.softmax = lambda self, dim, dtype=None: _softmax(self, dim, dtype)
Tensor.log_softmax = lambda self, dim, dtype=None: _log_softmax(self, dim, dtype)
Tensor.argmax = lambda self, dim=None, keepdim=False: A.argmax.default(self, dim, keepdim)
Tensor.amax = lambda self, dim=(), keepdim=False: A.amax.default(
    self, [dim] if isinstance(dim, int) else list(dim), keepdim)


_sum_all = fast(A.sum.default)


# torch's sum/mean take the dim overload whenever ``dim`` is passed, even as None (a full
# reduction that honours keepdim: SumBackward1); without it, the plain overload
_NO_DIM: Any = object()


def _no_dim_keepdim(name: str) -> TypeError:
    return TypeError(
        f"{name}() received an invalid combination of arguments - got (keepdim=bool, ), but expected one of:\n"
        " * (*, torch.dtype dtype = None)\n"
        " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)\n")


def _sum(self, dim=_NO_DIM, keepdim=_NO_DIM, *, dtype=None):
    if dim is _NO_DIM:
        if keepdim is not _NO_DIM:
            raise _no_dim_keepdim("sum")
        return A.sum.default(self, dtype=dtype) if dtype is not None else _sum_all(self)
    dims = dim if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return A.sum.dim_IntList(self, dims, False if keepdim is _NO_DIM else keepdim, dtype=dtype)


def _mean(self, dim=_NO_DIM, keepdim=_NO_DIM, *, dtype=None):
    if dim is _NO_DIM:
        if keepdim is not _NO_DIM:
            raise _no_dim_keepdim("mean")
        return A.mean.default(self, dtype=dtype) if dtype is not None else A.mean.default(self)
    dims = dim if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return A.mean.dim(self, dims, False if keepdim is _NO_DIM else keepdim, dtype=dtype)


def _max(self, dim=None, keepdim=False, *, other=None):
    """``max()``, ``max(dim, keepdim)`` or ``max(other)``: the element-wise ``aten::maximum``."""
    if isinstance(dim, _T) or other is not None:
        if other is None and keepdim is False:
            return A.maximum.default(self, dim)
        if dim is None and keepdim is False:
            return A.maximum.default(self, other)
        raise TypeError("max() received an invalid combination of arguments")
    if dim is None:
        return A.max.default(self)
    return A.max.dim(self, dim, keepdim)


def _min(self, dim=None, keepdim=False, *, other=None):
    """``min(other)``: the element-wise ``aten::minimum``; the reductions are not modelled."""
    if isinstance(dim, _T) and other is None and keepdim is False:
        return A.minimum.default(self, dim)
    if dim is None and other is not None and keepdim is False:
        return A.minimum.default(self, other)
    raise NotImplementedError("Tensor.min() and min(dim) (aten::min, a reduction) are not modelled; "
                              "min(other) is the element-wise minimum (aten::minimum).")


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)`` or ``to(device, dtype)``, as torch.Tensor.to."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    for a in args:
        if isinstance(a, dtype_cls):
            dtype = a
        elif isinstance(a, (str,)) or type(a).__name__ == "device":
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
    if device is None:
        return A.to.dtype(self, dtype if dtype is not None else self.dtype, False, copy)
    return A.to.device(self, as_device(device), dtype if dtype is not None else self.dtype, False, copy)


Tensor.sum = _sum
Tensor.mean = _mean
Tensor.max = _max
Tensor.min = _min
Tensor.to = _to
Tensor.cpu = lambda self: _to(self, "cpu")
Tensor.float = lambda self: _to(self, _dtypes.float32)
Tensor.double = lambda self: _to(self, _dtypes.float64)
Tensor.long = lambda self: _to(self, _dtypes.int64)
Tensor.int = lambda self: _to(self, _dtypes.int32)
Tensor.bool = lambda self: _to(self, _dtypes.bool_)


# --- indexing: basic indexing is a chain of view ops (select, slice, unsqueeze) --------------
def _index_views(self: Tensor, index: Any) -> Tensor:
    if type(index) is int:  # x[i], the common case: one select
        return _select(self, 0, index)
    if not isinstance(index, tuple):
        index = (index,)
    if any(i is Ellipsis for i in index):
        pos = next(k for k, i in enumerate(index) if i is Ellipsis)
        specified = sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:pos] + (slice(None),) * (self.dim() - specified) + index[pos + 1:]
    result = self
    dim = 0
    for item in index:
        if item is None:
            result = A.unsqueeze.default(result, dim)
            dim += 1
        elif isinstance(item, bool) or isinstance(item, Tensor):
            raise IndexError("dispatchcore supports basic indexing (ints, slices, None, ...) only; "
                             "advanced (tensor or boolean) indexing is not modelled")
        elif isinstance(item, int):
            result = A.select.int(result, dim, item)
        elif isinstance(item, slice):
            step = 1 if item.step is None else item.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if not (item.start is None and item.stop is None and step == 1):
                result = A.slice.Tensor(result, dim, item.start, item.stop, step)
            dim += 1
        else:
            raise TypeError(f"invalid index of type {type(item).__name__}")
    if result is self:
        result = A.alias.default(self)
    return result


def _setitem(self: Tensor, index: Any, value: Any) -> None:
    """``self[index] = value``, as torch's ``set_item``/``copy_to``.

    A number becomes a 0-d tensor of self's dtype; a same-shaped value is copied, a 0-d CPU one
    fills (``fill_.Tensor``), any other is copied with broadcasting.
    """
    target = self if index is Ellipsis else _index_views(self, index)  # x[...] = v writes x itself
    if not isinstance(value, Tensor):
        from .factories import tensor

        value = tensor(value, dtype=self.dtype, device=self.device)
    if value._data.shape != target._data.shape and value._data.ndim == 0 and value._device.type == "cpu":
        A.fill_.Tensor(target, value)
    else:
        A.copy_.default(target, value)


Tensor.__getitem__ = _index_views
Tensor.__setitem__ = _setitem
