"""Tensor methods and Python operators: each one is a call of an ``aten`` operator.

Mirrors ``torch/_tensor.py`` and the generated ``python_variable_methods.cpp``: a method picks
the overload (``.Tensor`` for a tensor operand, ``.Scalar`` for a Python number) and calls its
``OperatorHandle``, so every operation goes through the dispatcher. Handles are looked up once,
here, at import.
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


def _binary(tensor_op: Any, scalar_op: Any, *, alpha: bool = False):
    """``self.op(other)``: the ``.Tensor`` overload for a Tensor operand, ``.Scalar`` otherwise.

    Without alpha, the method is the ``.Tensor`` entry itself; an operand of another class goes
    to ``otherwise`` (See ``OperatorHandle.entry``), which picks the overload.
    """
    scalar_call = fast(scalar_op, 1, 2)

    def otherwise(self, other):
        if isinstance(other, _T):  # a Tensor subclass on one side
            return tensor_op(self, other)
        return scalar_call(self, other)

    tensor_call = fast(tensor_op, 2, otherwise=otherwise)
    if not alpha:
        return tensor_call

    def method(self, other, *, alpha=1):
        if alpha == 1 and type(alpha) is int:  # alpha=1.0 must reach the kernel's integral check
            return tensor_call(self, other)
        if isinstance(other, _T):
            return tensor_op(self, other, alpha=alpha)
        return scalar_op(self, other, alpha)
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


def _reflected(scalar_fn: Any):
    def method(self, other):
        return scalar_fn(self, other)
    return method


A = aten
# the operators take no alpha: one keyword-only parameter less on the hottest calls
Tensor.add, Tensor.__add__ = _binary(A.add.Tensor, A.add.Scalar, alpha=True), _binary(A.add.Tensor, A.add.Scalar)
Tensor.sub, Tensor.__sub__ = _binary(A.sub.Tensor, A.sub.Scalar, alpha=True), _binary(A.sub.Tensor, A.sub.Scalar)
# the operators are the entries themselves; the named methods keep torch's keyword names
Tensor.__mul__ = _binary(A.mul.Tensor, A.mul.Scalar)
Tensor.__truediv__ = _binary(A.div.Tensor, A.div.Scalar)
Tensor.mul, Tensor.div = _named(Tensor.__mul__), _named(Tensor.__truediv__)
Tensor.add_, Tensor.__iadd__ = _binary(A.add_.Tensor, A.add_.Scalar, alpha=True), _binary(A.add_.Tensor, A.add_.Scalar)
Tensor.sub_, Tensor.__isub__ = _binary(A.sub_.Tensor, A.sub_.Scalar, alpha=True), _binary(A.sub_.Tensor, A.sub_.Scalar)
Tensor.__imul__ = _binary(A.mul_.Tensor, A.mul_.Scalar)
Tensor.__itruediv__ = _binary(A.div_.Tensor, A.div_.Scalar)
Tensor.mul_, Tensor.div_ = _named(Tensor.__imul__), _named(Tensor.__itruediv__)
Tensor.__radd__ = fast(A.add.Scalar, 1, 2)  # number + tensor: the entry is the method
Tensor.__rmul__ = fast(A.mul.Scalar, 1, 2)
Tensor.__rsub__ = lambda self, other: A.add.Scalar(A.neg.default(self), other)
Tensor.__rtruediv__ = lambda self, other: A.div.Tensor(A.scalar_tensor.default(other, device=self.device), self)
Tensor.__pow__ = _binary(A.pow.Tensor_Tensor, A.pow.Tensor_Scalar)
Tensor.__ipow__ = _binary(A.pow_.Tensor, A.pow_.Scalar)
Tensor.pow, Tensor.pow_ = _named(Tensor.__pow__, "exponent"), _named(Tensor.__ipow__, "exponent")
Tensor.__rpow__ = lambda self, other: A.pow.Scalar(other, self)
Tensor.__matmul__ = _matmul = _composites.matmul_shortcut(fast(A.matmul.default, 2))
Tensor.matmul = lambda self, other: _matmul(self, other)  # keeps torch's keyword name
Tensor.__neg__ = fast(A.neg.default)
Tensor.__abs__ = fast(A.abs.default)

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _packet = getattr(A, _name)
    setattr(Tensor, f"__{_name}__", _binary(_packet.Tensor, _packet.Scalar))
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
    if len(shape) == 1 and type(shape[0]) is not int and isinstance(shape[0], (list, tuple)):
        return _view(self, list(shape[0]))  # view((2, 3)) or view([2, 3])
    return _view(self, [*shape])


Tensor.view = _view_method
Tensor.reshape = lambda self, *shape: A.reshape.default(self, _dims(shape))
Tensor.permute = lambda self, *dims: A.permute.default(self, _dims(dims))
Tensor.expand = lambda self, *sizes: A.expand.default(self, _dims(sizes))
Tensor.transpose = lambda self, dim0, dim1: _transpose(self, dim0, dim1)
_unsqueeze = fast(A.unsqueeze.default, 1, 2)
Tensor.unsqueeze = lambda self, dim: _unsqueeze(self, dim)
_squeeze, _squeeze_dim = fast(A.squeeze.default), fast(A.squeeze.dim, 1, 2)
Tensor.squeeze = lambda self, dim=None: _squeeze(self) if dim is None else _squeeze_dim(self, dim)
Tensor.select = lambda self, dim, index: _select(self, dim, index)
Tensor.as_strided = lambda self, size, stride, storage_offset=None: A.as_strided.default(
    self, list(size), list(stride), storage_offset)
Tensor.contiguous = fast(A.contiguous.default)
Tensor.copy_ = lambda self, src, non_blocking=False: A.copy_.default(self, src, non_blocking)
_fill_ = fast(A.fill_.Scalar, 1, 2)
Tensor.fill_ = lambda self, value: _fill_(self, value)
_mm, _bmm = fast(A.mm.default, 2), fast(A.bmm.default, 2)
Tensor.mm = lambda self, mat2: _mm(self, mat2)
Tensor.bmm = lambda self, mat2: _bmm(self, mat2)
_clamp, _clamp_ = fast(A.clamp.default, 1, 3), fast(A.clamp_.default, 1, 3)
Tensor.clamp = lambda self, min=None, max=None: _clamp(self, min, max)
Tensor.clamp_ = lambda self, min=None, max=None: _clamp_(self, min, max)
_clamp_min, _clamp_min_ = fast(A.clamp_min.default, 1, 2), fast(A.clamp_min_.default, 1, 2)
Tensor.clamp_min = lambda self, min: _clamp_min(self, min)
Tensor.clamp_min_ = lambda self, min: _clamp_min_(self, min)
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


def _max(self, dim=None, keepdim=False):
    if dim is None:
        return A.max.default(self)
    return A.max.dim(self, dim, keepdim)


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
    target = _index_views(self, index)
    if isinstance(value, Tensor):
        A.copy_.default(target, value)
    else:
        A.fill_.Scalar(target, value)


Tensor.__getitem__ = _index_views
Tensor.__setitem__ = _setitem
