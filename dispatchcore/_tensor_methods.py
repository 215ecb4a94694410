"""Tensor methods and Python operators: each one is a call of an ``aten`` operator.

Mirrors ``torch/_tensor.py`` and the generated ``python_variable_methods.cpp``: a method picks
the overload as torch's argument parser does (add/sub/mul/div wrap a Python number and take
``.Tensor``; pow and the comparisons take ``.Scalar``; clamp takes ``.Tensor`` for tensor bounds)
and calls its ``OperatorHandle``, so every operation goes through the dispatcher. Handles are
looked up once, here, at import.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

from . import _composites
from . import aten as _definitions  # noqa: F401 - the operators must exist before we look them up
from . import dtypes as _dtypes
from . import layouts as _layouts
from . import overrides as _overrides
from .dtypes import device as as_device
from .dtypes import dtype as dtype_cls
from .native import Bindings
from .ops import aten
from .schema import _parse_device
from .tensor import Tensor, wrap_cpu
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


# Note [Method arguments]: torch's Python binding parses a method's arguments against its
# signatures (``PythonArgParser``) before anything runs, so a bad one is its TypeError
# ("view() received an invalid combination of arguments - got (str), ..."). Parsing costs
# microseconds, so the hot methods (view, reshape, sum, to) do not parse a call up front:
# they run it, and only when it raises (or an argument is of an uncommon class, such as a
# ``dtype=`` that is not a dtype) do they parse it, outside the ``except`` block (Note [No
# chained errors]): when the arguments do not fit torch's signatures, the parser's TypeError
# is raised, else the call's own error. ``check_call`` is that check.
#
# Note [Operand arguments]: the binary methods are fixed-arity entries (OperatorHandle.entry) that
# dispatch a Tensor operand at once; anything else reaches their ``otherwise``, which wraps a number
# or finds a duck type's torch function. What is left (a str, None, a list) gets torch's binding
# TypeError from these signatures, for the method (``mm(): argument 'mat2' (position 1) must be
# Tensor, not int``) and for the function (position 2), never the schema's error, and never a
# result (``x.eq(None)`` would compare with None).
_TENSOR_OPERANDS = {"mm": "mat2", "bmm": "mat2", "matmul": "other", "maximum": "other", "minimum": "other",
                    "add": "other", "sub": "other", "mul": "other", "div": "other"}
_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
# numpy's names (native/pointwise.py OVERLOAD_ALIASES): the methods bind as their targets' do
_COMPARISON_ALIASES = {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne"}
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "Tensor.view": ("view(ScalarType dtype)", "view(SymIntArrayRef size)"),
    "Tensor.reshape": ("reshape(SymIntArrayRef shape)",),
    # the view methods' signatures (torch's named-dimension overloads are hidden from its messages)
    "Tensor.transpose": ("transpose(int64_t dim0, int64_t dim1)",),
    "Tensor.unsqueeze": ("unsqueeze(int64_t dim)",),
    "Tensor.select": ("select(int64_t dim, SymInt index)",),
    "Tensor.permute": ("permute(IntArrayRef dims)",),
    "Tensor.expand": ("expand(SymIntArrayRef size, *, bool implicit=False)",),
    "Tensor.squeeze": ("squeeze()", "squeeze(int64_t dim)", "squeeze(IntArrayRef dim)"),
    "Tensor.sum": ("sum(*, ScalarType? dtype=None)",
                   "sum(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"),
    "Tensor.mean": ("mean(*, ScalarType? dtype=None)",
                    "mean(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"),
    "Tensor.to": tuple(f"to({first}, bool non_blocking=False, bool copy=False, *, "
                       "MemoryFormat? memory_format=None)"
                       for first in ("Device? device=None, ScalarType? dtype=None",
                                     "ScalarType dtype", "Tensor tensor")),
    "sum": ("sum(Tensor input, *, ScalarType? dtype=None)",
            "sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
            "Tensor out=None)"),
    "mean": ("mean(Tensor input, *, ScalarType? dtype=None, Tensor out=None)",
             "mean(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
             "Tensor out=None)"),
    "reshape": ("reshape(Tensor input, SymIntArrayRef shape)",),
    # binary ops: one Tensor operand, or a Tensor or a Number (Note [Operand arguments]); a
    # function's signatures only where they are complete (the error path parses every failed call)
    **{f"Tensor.{name}": (f"{name}(Tensor {arg})",) for name, arg in _TENSOR_OPERANDS.items()},
    **{name: (f"{name}(Tensor input, Tensor {arg}, *, Tensor out=None)",)
       for name, arg in _TENSOR_OPERANDS.items() if name not in ("add", "sub", "mul", "div")},
    **{f"Tensor.{name}": (f"{name}(Tensor other)", f"{name}(Scalar other)")
       for name in (*_COMPARISONS, *(f"{c}_" for c in _COMPARISONS), *_COMPARISON_ALIASES,
                    *(f"{c}_" for c in _COMPARISON_ALIASES), "multiply", "multiply_", "fmod", "remainder",
                    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
                    "floor_divide", "copysign")},
    **{name: (f"{name}(Tensor input, Tensor other, *, Tensor out=None)",
              f"{name}(Tensor input, Scalar other, *, Tensor out=None)")
       for name in (*_COMPARISONS, *_COMPARISON_ALIASES)},
    **{f"Tensor.{name}": (f"{name}(Tensor other, *, Scalar alpha=1)", f"{name}(Scalar other, Scalar alpha=1)")
       for name in ("subtract", "subtract_")},
    "subtract": ("subtract(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)",
                 "subtract(Tensor input, Scalar other, Scalar alpha=1)"),
    "multiply": ("multiply(Tensor input, Tensor other, *, Tensor out=None)", "multiply(Tensor input, Scalar other)"),
    **{f"Tensor.{name}": (f"{name}(Tensor other)", f"{name}(Tensor other, *, c10::string_view? rounding_mode)",
                          *((f"{name}(Scalar other)",) if name.startswith("divide") else ()),  # div's is hidden
                          f"{name}(Scalar other, *, c10::string_view? rounding_mode)")
       for name in ("div", "div_", "divide", "divide_")},
    **{name: (f"{name}(Tensor input, Tensor other, *, Tensor out=None)",
              f"{name}(Tensor input, Tensor other, *, c10::string_view? rounding_mode, Tensor out=None)",
              *((f"{name}(Tensor input, Scalar other)",) if name == "divide" else ()),  # div.Scalar is hidden
              f"{name}(Tensor input, Scalar other, *, c10::string_view? rounding_mode)") for name in ("div", "divide")},
    **{f"Tensor.{name}": (f"{name}(Tensor min=None, Tensor max=None)", f"{name}(Scalar min=None, Scalar max=None)")
       for name in ("clamp", "clamp_", "clip", "clip_")},
    **{f"Tensor.{name}": (f"{name}(Tensor {name[6:9]})", f"{name}(Scalar {name[6:9]})")
       for name in ("clamp_min", "clamp_min_", "clamp_max", "clamp_max_")},
    **{name: (f"{name}(Tensor input, Tensor {name[6:9]}, *, Tensor out=None)",
              f"{name}(Tensor input, Scalar {name[6:9]}, *, Tensor out=None)") for name in ("clamp_min", "clamp_max")},
    **{name: (f"{name}(Tensor input, Tensor min=None, Tensor max=None, *, Tensor out=None)",
              f"{name}(Tensor input, Scalar min=None, Scalar max=None, *, Tensor out=None)")
       for name in ("clamp", "clip")},
    "true_divide": ("true_divide(Tensor input, Tensor other, *, Tensor out=None)",
                    "true_divide(Tensor input, Scalar other)"),
    "Tensor.true_divide": ("true_divide(Tensor other)", "true_divide(Scalar other)"),
    "Tensor.true_divide_": ("true_divide_(Tensor other)", "true_divide_(Scalar other)"),
    "Tensor.pow": ("pow(Tensor exponent)", "pow(Scalar exponent)"),
    "pow": ("pow(Tensor input, Tensor exponent, *, Tensor out=None)",
            "pow(Scalar self, Tensor exponent, *, Tensor out=None)",
            "pow(Tensor input, Scalar exponent, *, Tensor out=None)"),
    "where": ("where(Tensor condition)",
              "where(Tensor condition, Tensor input, Tensor other, *, Tensor out=None)",
              "where(Tensor condition, Scalar self, Tensor other)",
              "where(Tensor condition, Tensor input, Scalar other)",
              "where(Tensor condition, Scalar self, Scalar other)"),
}
_BINDINGS = Bindings(_SIGNATURES)  # each signature's PythonArgParser, built on first use (a cold path)


def _py_dtype(value: Any) -> Any:
    """A dtype argument the parser accepted: a dtype, or a Python type torch reads as one (float)."""
    from .factories import _PY_DTYPES

    return _PY_DTYPES.get(value, value) if isinstance(value, type) else value


def check_call(key: str, args: tuple, kwargs: dict[str, Any]) -> None:
    """Raise torch's binding TypeError when ``args``/``kwargs`` fit none of ``key``'s signatures.

    ``key`` is ``"Tensor.<method>"`` (the arguments after ``self``) or a ``torch.*`` function's
    name. See Note [Method arguments].
    """
    _BINDINGS.parse(key, args, {k: v for k, v in kwargs.items() if v is not _UNSET})


_NOT_HANDLED = _overrides._NOT_HANDLED
_UNSET: Any = object()  # an argument the caller did not pass (left out of check_call's view)


def _number_call(op: Any, dunder: bool = False, name: str | None = None):
    """``op(self, other)`` for an ``other`` that is not of ``self``'s class, a number wrapped.

    Dispatches as the entry does (See ``OperatorHandle.entry``), inline: one frame less. An
    operator (``dunder``) returns NotImplemented for an operand that is neither a Tensor nor a
    number, as torch's do (``x + 'a'``: Python's "unsupported operand type(s)" TypeError).
    """
    def with_number(self, other):
        cls = other.__class__
        w = _INTS.get(other) if cls is int else _FLOATS.get(other) if cls is float else None
        if w is None:
            if isinstance(other, _T):  # a Tensor subclass on one side: its __torch_function__ first
                result = _overrides.tensor_operand(name, self, other, dunder)
                return op(self, other) if result is _NOT_HANDLED else result
            w = wrapped_number(other)
            if w is None:  # a duck type's __torch_function__, else torch's binding error
                result = _overrides.tensor_operand(name, self, other, dunder)
                if result is not _NOT_HANDLED:
                    return result
                if dunder:
                    return NotImplemented
                if f"Tensor.{name}" in _SIGNATURES:  # See Note [Operand arguments]
                    check_call(f"Tensor.{name}", (other,), {})
                return op(self, other)
        keys = _pt.state.keys
        try:  # See Note [Dispatch memo]
            if keys is _DEFAULT_KEYS:
                kernel = op._dispatch[4][self._key_bits | w._key_bits]
            else:
                kernel = op._dispatch[2][(self._key_bits | w._key_bits | keys[0]) & keys[2]]
        except (KeyError, AttributeError, TypeError):
            pass  # a miss: the general call below, outside the handler (Note [No chained errors])
        else:
            return kernel(self, w)
        return op(self, w)

    name = name or op.name.partition("::")[2].partition(".")[0]  # what errors and handlers name
    with_number.__name__ = with_number.__qualname__ = op.name.partition("::")[2]
    return with_number


def _binary(op: Any, *, alpha: bool = False, dunder: bool = False, name: str | None = None):
    """``self.op(other)`` of add/sub/mul/div (and in place): always the ``.Tensor`` overload.

    The method is the overload's two-tensor entry; a number operand reaches ``otherwise``,
    which wraps it (Note [Wrapped numbers]); the operators (``dunder``) return NotImplemented
    for an operand that is neither, the methods raise.
    """
    tensor_call = fast(op, 2, otherwise=_number_call(op, dunder, name))
    if not alpha:
        return tensor_call

    def method(self, other, *, alpha=1):
        if alpha == 1 and type(alpha) is int:  # alpha=1.0 must reach the kernel's integral check
            return tensor_call(self, other)
        if not isinstance(other, _T):
            wrapped = wrapped_number(other)  # not `or`: bool() of a tensor reads its item()
            other = other if wrapped is None else wrapped
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


def _is_number(value: Any) -> bool:
    """What torch's binding takes as a Number: a Python or numpy number (not a str, None, list)."""
    cls = value.__class__
    return cls is int or cls is float or wrapped_number(value) is not None


def _by_operand(tensor_op: Any, scalar_op: Any, dunder: bool = False, report: str | None = None,
                route: bool = True):
    """``self.op(other)`` of pow and the comparisons: ``.Scalar`` for a number, as torch picks.

    The method is the ``.Tensor`` entry; an operand of another class goes to ``otherwise``
    (See ``OperatorHandle.entry``), which picks the overload. The operators (``dunder``)
    return NotImplemented for an operand that is neither a Tensor nor a number, as torch's do
    (``x < 'a'`` is Python's TypeError; ``x == 'a'`` is False). Such an operand with torch
    function (a duck type) takes the call as torch's parser finds it, unless ``route`` is off
    (the ``torch.*`` functions check their arguments themselves).
    """
    scalar_call = fast(scalar_op, 1, 2)

    name = report or tensor_op.name.partition("::")[2].partition(".")[0]  # what a handler's func names

    def otherwise(self, other):
        if isinstance(other, _T):  # a Tensor subclass on one side: its __torch_function__ first
            result = _overrides.tensor_operand(name, self, other, dunder)
            return tensor_op(self, other) if result is _NOT_HANDLED else result
        if not _is_number(other):  # a duck type's __torch_function__, else NotImplemented or the binding's error
            result = _overrides.tensor_operand(name, self, other, dunder) if route else _NOT_HANDLED
            if result is not _NOT_HANDLED:
                return result
            if dunder:
                return NotImplemented
            if f"Tensor.{name}" in _SIGNATURES:  # See Note [Operand arguments]
                check_call(f"Tensor.{name}", (other,), {})
        return scalar_call(self, other)

    return fast(tensor_op, 2, otherwise=otherwise)


A = aten
# the operators take no alpha: one keyword-only parameter less on the hottest calls
Tensor.add, Tensor.__add__ = _binary(A.add.Tensor, alpha=True), _binary(A.add.Tensor, dunder=True)
Tensor.sub, Tensor.__sub__ = _binary(A.sub.Tensor, alpha=True), _binary(A.sub.Tensor, dunder=True)
# the operators are entries themselves (returning NotImplemented for a str, None, ...); the
# named methods are entries of their own (raising for those) that keep torch's keyword names
Tensor.__mul__ = _binary(A.mul.Tensor, dunder=True)
Tensor.__truediv__ = _binary(A.div.Tensor, dunder=True)
_mul_entry, _div_entry = _binary(A.mul.Tensor), _binary(A.div.Tensor)
Tensor.mul = _named(_mul_entry)
Tensor.add_, Tensor.__iadd__ = _binary(A.add_.Tensor, alpha=True), _binary(A.add_.Tensor, dunder=True)
Tensor.sub_, Tensor.__isub__ = _binary(A.sub_.Tensor, alpha=True), _binary(A.sub_.Tensor, dunder=True)
Tensor.__imul__ = _binary(A.mul_.Tensor, dunder=True)
Tensor.__itruediv__ = _binary(A.div_.Tensor, dunder=True)
Tensor.__div__ = _binary(A.div.Tensor, dunder=True)  # Python 2's names, which torch's TensorBase keeps
Tensor.__idiv__ = Tensor.__itruediv__  # one method under both names in torch
_imul_entry, _idiv_entry = _binary(A.mul_.Tensor), _binary(A.div_.Tensor)
Tensor.mul_ = _named(_imul_entry)
# number + tensor: torch's __radd__ is add with self first (add.Tensor(x, 2)), so is __rmul__;
# Python calls them with a number (or a Tensor subclass), so they skip the entry's class check
Tensor.__radd__ = _number_call(A.add.Tensor, dunder=True)
Tensor.__rmul__ = _number_call(A.mul.Tensor, dunder=True)
_rsub_number = fast(A.rsub.Scalar, 1, 2)


def _reflected(name: str, self: Tensor, other: Any) -> Any:
    """A reflected operator's operand that is not a number: a handler's result, or ``_NOT_HANDLED``.

    torch/_tensor.py's ``__rsub__``, ``__rtruediv__`` and ``__rpow__`` check every argument for
    torch function (a duck type's, or a Tensor subclass's when called as ``x.__rsub__(sub)``).
    """
    return _overrides.tensor_operand(name, self, other, True)


def _rsub(self: Tensor, other: Any) -> Any:
    """``2 - x``: torch's ``__rsub__`` is ``rsub(x, 2)``; NotImplemented for a str, None, ..."""
    if _is_number(other):
        return _rsub_number(self, other)
    result = _reflected("__rsub__", self, other)
    if result is not _NOT_HANDLED:
        return result
    return A.rsub.Tensor(self, other) if isinstance(other, _T) else NotImplemented


Tensor.__rsub__ = _rsub
_mul_number = Tensor.__rmul__
_reciprocal = fast(A.reciprocal.default)


def _rtruediv(self: Tensor, other: Any) -> Any:
    """``2 / x``: torch's ``__rtruediv__`` is reciprocal, then mul; NotImplemented for a str, ..."""
    if _is_number(other):
        return _mul_number(_reciprocal(self), other)
    result = _reflected("__rtruediv__", self, other)
    if result is not _NOT_HANDLED:
        return result
    return A.mul.Tensor(_reciprocal(self), other) if isinstance(other, _T) else NotImplemented


Tensor.__rtruediv__ = _rtruediv
Tensor.reciprocal = _reciprocal
# numpy's names: their own operators (CompositeImplicitAutograd calls of mul, sub, div), bound alike
Tensor.multiply, Tensor.multiply_ = _named(_binary(A.multiply.Tensor)), _named(_binary(A.multiply_.Tensor))
Tensor.subtract = _binary(A.subtract.Tensor, alpha=True)
Tensor.subtract_ = _binary(A.subtract_.Tensor, alpha=True)
Tensor.true_divide, Tensor.true_divide_ = _named(_binary(A.true_divide.Tensor)), _named(_binary(A.true_divide_.Tensor))
_NO_MODE: Any = object()  # rounding_mode not passed: torch's div without it is div.Tensor


def _div_with_mode(entry: Any, mode_op: Any, name: str):
    """``div``/``div_``: ``rounding_mode`` given (even None) selects the ``.Tensor_mode`` overload."""
    def div(self, other, *, rounding_mode=_NO_MODE):
        if rounding_mode is _NO_MODE:
            return entry(self, other)
        if not isinstance(other, _T):
            wrapped = wrapped_number(other)  # not `or`: bool() of a tensor reads its item()
            if wrapped is None:  # a str, None: torch's binding TypeError
                check_call(f"Tensor.{name}", (other,), {"rounding_mode": rounding_mode})
            other = other if wrapped is None else wrapped
        return mode_op(self, other, rounding_mode=rounding_mode)
    div.__name__ = div.__qualname__ = entry.__name__
    return div


Tensor.div = _div_with_mode(_div_entry, A.div.Tensor_mode, "div")
Tensor.div_ = _div_with_mode(_idiv_entry, A.div_.Tensor_mode, "div_")
Tensor.divide = _div_with_mode(_named(_binary(A.divide.Tensor)), A.divide.Tensor_mode, "divide")
Tensor.divide_ = _div_with_mode(_named(_binary(A.divide_.Tensor)), A.divide_.Tensor_mode, "divide_")


def _tensor_operand(op: Any) -> Any:
    """The entry of a binary op whose second operand must be a Tensor (Note [Operand arguments])."""
    name = op.name.partition("::")[2].partition(".")[0]

    def otherwise(self, other):
        result = _overrides.tensor_operand(name, self, other, False)  # a subclass's or duck type's handler
        if result is not _NOT_HANDLED:
            return result
        if not isinstance(other, _T):
            check_call(f"Tensor.{name}", (other,), {})
        return op(self, other)

    return fast(op, 2, otherwise=otherwise)


Tensor.maximum = _named(_tensor_operand(A.maximum.default))
Tensor.minimum = _named(_tensor_operand(A.minimum.default))
Tensor.__pow__ = _by_operand(A.pow.Tensor_Tensor, A.pow.Tensor_Scalar, dunder=True, report="__pow__")
Tensor.__ipow__ = _by_operand(A.pow_.Tensor, A.pow_.Scalar, dunder=True, report="__ipow__")
Tensor.pow = _named(_by_operand(A.pow.Tensor_Tensor, A.pow.Tensor_Scalar), "exponent")
Tensor.pow_ = _named(_by_operand(A.pow_.Tensor, A.pow_.Scalar), "exponent")
def _rpow(self: Tensor, other: Any) -> Any:
    """``2 ** x``: torch's ``__rpow__`` is ``pow(2, x)``; NotImplemented for a str, None, ..."""
    if _is_number(other):
        return A.pow.Scalar(other, self)
    result = _reflected("__rpow__", self, other)
    if result is not _NOT_HANDLED:
        return result
    return A.pow.Tensor_Tensor(other, self) if isinstance(other, _T) else NotImplemented


Tensor.__rpow__ = _rpow


def _matmul_other(self: Tensor, other: Any) -> Any:
    """``x @ other`` for ``other`` not of x's class: a handler's result, else NotImplemented unless it is a Tensor."""
    result = _overrides.tensor_operand("matmul", self, other, True)
    if not isinstance(other, _T):
        return NotImplemented if result is _NOT_HANDLED else result
    return A.matmul.default(self, other) if result is _NOT_HANDLED else result


Tensor.__matmul__ = _composites.matmul_shortcut(fast(A.matmul.default, 2, otherwise=_matmul_other))
_matmul = _composites.matmul_shortcut(_tensor_operand(A.matmul.default))
Tensor.matmul = lambda self, other: _matmul(self, other)  # keeps torch's keyword name


def _rmatmul(self: Tensor, other: Any) -> Any:
    """``other @ x`` when ``other`` has no ``__matmul__``: torch's ``__rmatmul__`` is ``matmul(other, self)``.

    NotImplemented for an operand that is not a Tensor (torch's TypeError, turned into it).
    """
    result = _reflected("__rmatmul__", self, other)
    if result is not _NOT_HANDLED:
        return result
    return _matmul(other, self) if isinstance(other, _T) else NotImplemented


Tensor.__rmatmul__ = _rmatmul
Tensor.__rdiv__ = _rtruediv  # one function under both names in torch/_tensor.py
Tensor.__neg__ = fast(A.neg.default)
Tensor.__abs__ = fast(A.abs.default)

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _packet = getattr(A, _name)
    setattr(Tensor, f"__{_name}__", _by_operand(_packet.Tensor, _packet.Scalar, dunder=True))
    setattr(Tensor, _name, _named(_by_operand(_packet.Tensor, _packet.Scalar)))
    _packet = getattr(A, f"{_name}_")
    setattr(Tensor, f"{_name}_", _named(_by_operand(_packet.Tensor, _packet.Scalar)))
for _name in (*_COMPARISON_ALIASES, *(f"{c}_" for c in _COMPARISON_ALIASES)):
    _packet = getattr(A, _name)
    setattr(Tensor, _name, _named(_by_operand(_packet.Tensor, _packet.Scalar)))
Tensor.__hash__ = object.__hash__  # defining __eq__ would otherwise drop hashing

def _unary(op: Any):
    return fast(op)  # a one-argument function: the method itself


for _name in ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu",
              "clone", "detach", "t", "zero_", "square"):
    setattr(Tensor, _name, _unary(getattr(A, _name).default))
for _name in ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "square"):
    setattr(Tensor, _name + "_", _unary(getattr(A, _name + "_").default))


def _dims(args: tuple) -> list[int]:
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)


_view, _select, _transpose = fast(A.view.default, 1, 2), fast(A.select.int, 1, 3), fast(A.transpose.int, 1, 3)
_unsqueeze = fast(A.unsqueeze.default, 1, 2)
def _view_method(self: Tensor, *shape: Any) -> Tensor:
    # torch also takes view(size=...); a keyword-only parameter would cost ~15 ns on every view
    try:  # See Note [Method arguments]
        if len(shape) == 1 and type(shape[0]) is not int and isinstance(shape[0], (list, tuple)):
            return _view(self, list(shape[0]))  # view((2, 3)) or view([2, 3])
        return _view(self, [*shape])
    except Exception as exc:  # noqa: BLE001 - re-raised below when the arguments fit
        error = exc
    check_call("Tensor.view", shape, {})
    raise error


def _reshape_method(self: Tensor, *sizes: Any, shape: Any = _UNSET) -> Tensor:
    try:  # See Note [Method arguments]
        return A.reshape.default(self, _dims(sizes if shape is _UNSET else (shape,)))
    except Exception as exc:  # noqa: BLE001 - re-raised below when the arguments fit
        error = exc
    check_call("Tensor.reshape", sizes, {"shape": shape})
    raise error


Tensor.view = _view_method
# torch's keyword names: reshape(shape=...), permute(dims=...), expand(size=...)
Tensor.reshape = _reshape_method


def _sizes_method(name: str, op: Any, keyword: str, flag: str = "") -> Any:
    """``Tensor.permute``/``expand``: the ints as varargs, one list, or torch's keyword.

    ``flag`` names a keyword-only bool the call ignores (``expand``'s ``implicit``, the tracer's).
    Parsed as torch's binding only when the call fails (Note [Method arguments]).
    """
    key = f"Tensor.{name}"

    def method(self: Tensor, *values: Any, **kwargs: Any) -> Tensor:
        try:
            if kwargs:
                rest = {k: v for k, v in kwargs.items() if k != flag}
                if rest:
                    if values or len(rest) != 1:
                        raise TypeError(name)  # a call torch's binding refuses: parsed below
                    return op(self, _dims((rest[keyword],)))
            return op(self, _dims(values))
        except Exception as exc:  # noqa: BLE001 - re-raised below when the arguments fit
            error = exc
        check_call(key, values, kwargs)
        raise error

    method.__name__ = method.__qualname__ = name
    return method


_CHECKED_TEMPLATE = """
def {name}(self, {params}):
    try:
        return call(self, {params})
    except Exception as exc:  # re-raised below when the arguments fit
        error = exc
    check_call(key, ({params},), {{}})
    raise error
"""


def _checked_method(name: str, call: Any, params: str) -> Any:
    """``Tensor.<name>(self, <params>)``: ``call``, parsed as torch's binding only when it fails.

    Note [Method arguments] for a fixed-arity entry, written once as a template: the method keeps
    torch's keyword names and costs one frame, as a plain ``lambda`` would (a ``*args`` method
    costs every call ~0.2 us more).
    """
    scope: dict[str, Any] = {"call": call, "check_call": check_call, "key": f"Tensor.{name}"}
    exec(_CHECKED_TEMPLATE.format(name=name, params=params), scope)  # noqa: S102 - a fixed template
    return scope[name]


Tensor.permute = _sizes_method("permute", A.permute.default, "dims")
Tensor.expand = _sizes_method("expand", A.expand.default, "size", "implicit")
Tensor.transpose = _checked_method("transpose", _transpose, "dim0, dim1")
Tensor.unsqueeze = _checked_method("unsqueeze", _unsqueeze, "dim")
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
    try:  # See Note [Method arguments]
        return _squeeze_method(self, *args) if not kwargs else _squeeze_method(self, kwargs["dim"])
    except Exception as exc:  # noqa: BLE001 - re-raised below when the arguments fit
        error = exc
    check_call("Tensor.squeeze", args, kwargs)
    raise error


Tensor.squeeze = _squeeze_kw
Tensor.select = _checked_method("select", _select, "dim, index")
Tensor.as_strided = lambda self, size, stride, storage_offset=None: A.as_strided.default(
    self, list(size), list(stride), storage_offset)
Tensor.contiguous = fast(A.contiguous.default)
Tensor.copy_ = lambda self, other, non_blocking=False: A.copy_.default(self, other, non_blocking)  # torch: other
_fill_ = fast(A.fill_.Scalar, 1, 2)
Tensor.fill_ = lambda self, value: A.fill_.Tensor(self, value) if isinstance(value, _T) else _fill_(self, value)
_mm, _bmm = _tensor_operand(A.mm.default), _tensor_operand(A.bmm.default)
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


_PLAIN_BOUNDS = frozenset((int, float, type(None)))


def _clamp_method(name: str, tensor_op: Any, scalar_op: Any):
    """``clamp``/``clamp_``: tensor bounds (or none) take ``.Tensor``; numbers the Scalar overload.

    A number with a tensor bound binds to the Scalar overload, which reads a 0-d tensor as its
    number, as torch's argument parser does (``_local_scalar_dense``); other mixes are a TypeError.
    """
    scalar_call = fast(scalar_op, 1, 3)

    def method(self, min=None, max=None):  # noqa: A002 - torch's names
        if min.__class__ in _PLAIN_BOUNDS and max.__class__ in _PLAIN_BOUNDS and (min is not None or max is not None):
            return scalar_call(self, min, max)  # numbers (or one None): the common call, decided at once
        min_t, max_t = isinstance(min, _T), isinstance(max, _T)
        if not (min_t or max_t):
            if min is None and max is None:
                return tensor_op(self, None, None)  # torch: clamp.Tensor, which refuses it
            check_call(f"Tensor.{name}", (min,) if max is None else (min, max), {})  # a str: torch's TypeError
            return scalar_call(self, min, max)
        if (min_t or min is None) and (max_t or max is None):
            return tensor_op(self, min, max)
        return scalar_call(self, _bound(name, min, (min, max)), _bound(name, max, (min, max)))
    method.__name__ = method.__qualname__ = name
    return method


def _clamp_min_method(name: str, tensor_op: Any, scalar_op: Any, bound: str = "min"):
    """``clamp_min``/``clamp_max`` (and in place): ``.Tensor`` for a tensor bound, the Scalar overload else."""
    scalar_call = fast(scalar_op, 1, 2)

    def other(self, value):  # a tensor bound, or a str, None, ...: off the number path
        if isinstance(value, _T):
            return tensor_op(self, value)
        if not _is_number(value):
            check_call(f"Tensor.{name}", (value,), {})  # torch's binding TypeError
        return scalar_call(self, value)

    # torch's keyword names (min or max); a Python number goes straight to the Scalar overload
    if bound == "min":
        def method(self, min):  # noqa: A002
            cls = min.__class__
            return scalar_call(self, min) if cls is int or cls is float else other(self, min)
    else:
        def method(self, max):  # noqa: A002
            cls = max.__class__
            return scalar_call(self, max) if cls is int or cls is float else other(self, max)
    method.__name__ = method.__qualname__ = name
    return method


Tensor.clamp = _clamp_method("clamp", A.clamp.Tensor, A.clamp.default)
Tensor.clamp_ = _clamp_method("clamp_", A.clamp_.Tensor, A.clamp_.default)
Tensor.clip = _clamp_method("clip", A.clip.Tensor, A.clip.default)
Tensor.clip_ = _clamp_method("clip_", A.clip_.Tensor, A.clip_.default)
Tensor.clamp_min = _clamp_min_method("clamp_min", A.clamp_min.Tensor, A.clamp_min.default)
Tensor.clamp_min_ = _clamp_min_method("clamp_min_", A.clamp_min_.Tensor, A.clamp_min_.default)
Tensor.clamp_max = _clamp_min_method("clamp_max", A.clamp_max.Tensor, A.clamp_max.default, bound="max")
Tensor.clamp_max_ = _clamp_min_method("clamp_max_", A.clamp_max_.Tensor, A.clamp_max_.default, bound="max")
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


def _reduce_args(dim: Any, keepdim: Any, dtype: Any) -> tuple[tuple, dict[str, Any]]:
    """The call as torch's parser sees it (dim/keepdim positional, as they are usually passed)."""
    args = (dim,) if keepdim is _NO_DIM else (dim, keepdim)
    return args, {"dtype": _UNSET if dtype is None else dtype}


def _reduction(name: str, all_op: Any, dim_op: Any) -> Any:
    """``sum``/``mean``: the dim overload whenever ``dim`` is passed (Note [Method arguments])."""
    key = "Tensor." + name
    fast_all = fast(all_op)

    def method(self, dim=_NO_DIM, keepdim=_NO_DIM, *, dtype=None):
        if dim is _NO_DIM:
            if keepdim is not _NO_DIM:
                raise _no_dim_keepdim(name)
            if dtype is None:
                return fast_all(self)
            if dtype.__class__ is not dtype_cls:
                check_call(key, (), {"dtype": dtype})
                dtype = _py_dtype(dtype)
            return all_op(self, dtype=dtype)
        if dtype is not None and dtype.__class__ is not dtype_cls:
            check_call(key, *_reduce_args(dim, keepdim, dtype))
            dtype = _py_dtype(dtype)
        try:
            dims = dim if dim is None else [dim] if isinstance(dim, int) else list(dim)
            return dim_op(self, dims, False if keepdim is _NO_DIM else keepdim, dtype=dtype)
        except Exception as exc:  # noqa: BLE001 - re-raised below when the arguments fit
            error = exc
        check_call(key, *_reduce_args(dim, keepdim, dtype))
        raise error

    method.__name__ = method.__qualname__ = name
    return method


_sum = _reduction("sum", A.sum.default, A.sum.dim_IntList)
_mean = _reduction("mean", A.mean.default, A.mean.dim)


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


_CHECKED_DEVICES: set[str] = set()  # device strings c10::Device parsed already


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)`` or ``to(device, dtype)``, as torch.Tensor.to."""
    if kwargs:
        dtype, device = kwargs.get("dtype"), kwargs.get("device")
        if ((dtype is not None and dtype.__class__ is not dtype_cls)
                or not set(kwargs) <= {"dtype", "device", "copy", "non_blocking", "memory_format"}):
            check_call("Tensor.to", args, kwargs)  # See Note [Method arguments]
            dtype = _py_dtype(dtype)  # torch takes float, int, bool, complex as dtypes
        copy = kwargs.get("copy", False)
    else:
        dtype = device = None
        copy = False
    for a in args:
        if isinstance(a, dtype_cls):
            dtype = a
        elif isinstance(a, str):
            if a not in _CHECKED_DEVICES:
                _parse_device(a)  # c10::Device's errors: "Invalid device string: 'float64'"
                if len(_CHECKED_DEVICES) < 64:
                    _CHECKED_DEVICES.add(a)
            device = a
        elif type(a).__name__ == "device":
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, type):
            check_call("Tensor.to", args, kwargs)  # See Note [Method arguments]
            dtype = _py_dtype(a)  # x.to(float)
    if device.__class__ is str and device not in _CHECKED_DEVICES:
        _parse_device(device)
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


# --- indexing: python_variable_indexing.cpp -------------------------------------------------
# Basic indexing (ints, slices, None, ...) is a chain of view ops (select, slice, unsqueeze), on
# the fast path below. torch checks an index before it applies it: too many indices, a 0-d
# tensor, an int out of range, an index of another type, a zero step; those errors are its own
# texts (not select's), raised here on the slow path only: x[i] tries select first.
# Note [Advanced indexing]: a tensor, a sequence (list, tuple, range, ndarray) or a bool is an
# advanced index. As torch's applySlicing does, the basic items are applied first as views, each
# advanced one is recorded at the dim of the view it indexes (a mask spans its dims; a bool is a
# new dim indexed by [0] or []; a 0-d integer tensor is a select), and one ``index.Tensor``
# (getitem) or ``index_put_`` (setitem) takes them all, None at the dims between them; the
# index kernels move non-adjacent indexed dims to the front, as numpy does.
_ZERO_DIM_INDEX = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                   "in C++ to convert a 0-dim tensor to a number")
_INVALID_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                  "indices (got {})")
_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result")


def _out_of_bounds(index: int, dim: int, size: int) -> IndexError:
    return IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")


def _index_int(self: Tensor, index: int) -> Tensor:
    """``x[i]`` after select raised: torch's indexing error instead of select's."""
    shape = self._data.shape
    if not shape:
        raise IndexError(_ZERO_DIM_INDEX)
    if not -shape[0] <= index < shape[0]:
        raise _out_of_bounds(index, 0, shape[0])
    return _select(self, 0, index)  # select's own error, whatever it was


def _index_items(index: tuple) -> tuple[tuple | None, int]:
    """The items of a basic index as ints/slices/None/Ellipsis, and how many dims they consume.

    ``(None, 0)`` when an item is an advanced index (See Note [Advanced indexing]).
    """
    items = []
    specified = 0
    for item in index:
        cls = item.__class__
        if item is None or item is Ellipsis:
            pass
        elif cls is int or cls is slice:
            specified += 1
        elif cls is bool or isinstance(item, (Tensor, list, tuple, range, str)) or hasattr(item, "__len__"):
            return None, 0
        elif isinstance(item, int):
            item = int(item)
            specified += 1
        elif hasattr(cls, "__index__") and not isinstance(item, float):  # numpy integers
            item = item.__index__()
            specified += 1
        else:
            raise IndexError(_INVALID_INDEX.format(cls.__name__))
        items.append(item)
    return tuple(items), specified


def _index_views(self: Tensor, index: Any, basic_only: bool = False) -> Any:
    """``self[index]``; with ``basic_only``, None instead of an advanced index's result."""
    if type(index) is int:  # x[i], the common case: one select (torch's error when it fails)
        try:
            return _select(self, 0, index)
        except IndexError:
            pass  # See Note [No chained errors]
        return _index_int(self, index)
    ndim = self._data.ndim
    items: Any = index
    if not isinstance(index, tuple):
        cls = index.__class__
        if ndim == 0 and cls is slice:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if ndim == 0 and cls is not bool and isinstance(index, int):
            raise IndexError(_ZERO_DIM_INDEX)
        items = (index,)
    items, specified = _index_items(items)
    if items is None:
        return None if basic_only else _index_advanced(self, index)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = self
    dim = selected = 0  # torch's error names dim + selected (its real_dim)
    # See Note [Slices as torch applies them]: a single slice read is always a view of its own
    optimize = basic_only or index.__class__ is not slice
    for item in items:
        if item is None:
            result = A.unsqueeze.default(result, dim)
            dim += 1
        elif item is Ellipsis:  # each one stands for the dims no other item names (torch 2.13)
            dim += ndim - specified
        elif item.__class__ is int:
            size = result._data.shape[dim]
            if not -size <= item < size:
                raise _out_of_bounds(item, dim + selected, size)
            result = A.select.int(result, dim, item)
            selected += 1
        else:
            result = _slice(result, dim, item, optimize)
            dim += 1
    if result is self and not basic_only:  # get_item: x[...], x[:, :] are an alias; set_item writes x
        result = A.alias.default(self)
    return result


def _index_advanced(self: Tensor, index: Any) -> Tensor:
    """``self[index]`` with an advanced item: views, then one ``index.Tensor``."""
    result, indices = _apply_slicing(self, _wrap_tuple(index))
    if not indices:
        return A.alias.default(self) if result is self else result
    return A.index.Tensor(result, indices)


# Note [Slices as torch applies them]: torch unpacks a Python slice as ``PySlice_Unpack`` does
# (None is 0 and INT64_MAX, an object with ``__index__`` its index, a 0-d tensor's read with
# ``_local_scalar_dense``, bounds clamped to int64), then ``applySlice`` calls
# ``slice(self, dim, start, stop, step)``: its dispatch shows ``x[1:]`` as ``slice(x, 0, 1,
# 9223372036854775807)``. ``applySlice`` returns ``self`` itself when the slice keeps the whole dim
# (start 0, stop at least the size, step 1), except for a single slice read (``x[:]``, ``x[0:3]``
# are a ``slice``): ``m[:, 0]`` is one ``select``, ``x[:] = v`` writes ``x`` with no view.
_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)


def _slice_index(value: Any) -> int:
    """A slice bound as ``PySlice_Unpack`` reads it: its ``__index__``, clamped to int64."""
    if value.__class__ is not int:
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError("slice indices must be integers or None or have an __index__ method") from None
    return _INT64_MAX if value > _INT64_MAX else _INT64_MIN if value < _INT64_MIN else value


def _slice(result: Tensor, dim: int, item: slice, optimize: bool = True) -> Tensor:
    """``applySlice`` of a Python slice at ``dim``: See Note [Slices as torch applies them]."""
    start, stop, step = item.start, item.stop, item.step
    step = 1 if step is None else _slice_index(step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start = (0 if step > 0 else _INT64_MAX) if start is None else _slice_index(start)
    stop = (_INT64_MAX if step > 0 else _INT64_MIN) if stop is None else _slice_index(stop)
    if step < 0:
        raise ValueError("step must be greater than zero")
    if step == 1:
        if optimize and start == 0 and stop >= result._data.shape[dim]:
            return result
        return A.slice.Tensor(result, dim, start, stop)  # the default step is not passed, as in torch
    return A.slice.Tensor(result, dim, start, stop, step)


# --- advanced indexing (See Note [Advanced indexing]) ------------------------------------------
def _is_sequence(value: Any) -> bool:
    return not isinstance(value, (Tensor, dict)) and hasattr(value, "__len__") and hasattr(value, "__getitem__")


def _wrap_tuple(index: Any) -> tuple:
    """``wrapTuple``: a non-tuple sequence counts as a tuple when numpy's heuristic says so (deprecated)."""
    if isinstance(index, tuple):
        return index
    if not _is_sequence(index) or isinstance(index, str):
        return (index,)
    try:
        n = len(index)
        if n >= 32:
            return (index,)
        items = [index[i] for i in range(n)]
    except Exception:  # noqa: BLE001 - torch's heuristic gives up on any error (PyErr_Clear)
        return (index,)
    if any(isinstance(v, (Tensor, slice)) or v is None or v is Ellipsis or _is_sequence(v) for v in items):
        warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=4)
        return tuple(items)
    return (index,)


def _is_mask(t: Tensor) -> bool:
    return t.dtype.name in ("bool", "uint8")


def _specified_dims(items: tuple) -> int:
    """``count_specified_dimensions``: the dims of self the items consume (a mask: its own dims)."""
    count = 0
    for item in items:
        if isinstance(item, Tensor):
            count += item.dim() if _is_mask(item) else 1
        elif not (item is None or item is Ellipsis or item.__class__ is bool):
            count += 1
    return count


def _sequence_tensor(seq: Any) -> Tensor:
    """``sequenceToVariable``: a nested sequence as an int64 (or bool) index tensor."""
    from .factories import tensor

    t = tensor(list(seq) if isinstance(seq, (range, tuple)) else seq)
    if t.dtype is not _dtypes.bool_ and t.dtype is not _dtypes.int64:
        t = A._to_copy.default(t, dtype=_dtypes.int64)
    return t


def _bool_index(value: bool, device: Any) -> Tensor:
    """``boolToIndexingTensor``: True indexes a new dim of size 1 at 0, False selects nothing."""
    if value:
        return A.zeros.default([1], dtype=_dtypes.int64, device=device)
    return A.empty.memory_format([0], dtype=_dtypes.int64, device=device)


def _apply_slicing(self: Tensor, items: tuple) -> tuple[Tensor, list]:
    """``applySlicing``: the view of the basic items, and the advanced indices by the dim they index."""
    ndim = self._data.ndim
    specified = _specified_dims(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = self
    indices: list = []
    dim = real = 0  # dim of the view; dim of self (errors name it)

    def record(t: Tensor, consumed: int) -> None:
        nonlocal dim
        indices.extend([None] * (dim - len(indices)))
        indices.append(t)
        dim += consumed

    for item in items:
        cls = item.__class__
        if item is None:
            result = A.unsqueeze.default(result, dim)
            dim += 1
        elif item is Ellipsis:
            dim += ndim - specified
            real += ndim - specified
        elif cls is bool:
            result = A.unsqueeze.default(result, dim)
            record(_bool_index(item, self.device), 1)
        elif isinstance(item, Tensor):
            if item.dim() == 0 and not item.dtype.is_floating_point and not item.dtype.is_complex:
                if _is_mask(item):
                    result = A.unsqueeze.default(result, dim)
                    record(_bool_index(bool(item.item()), self.device), 1)
                else:
                    result = _select_checked(result, dim, int(item.item()), real)
                real += 1
                continue
            consumed = item.dim() if _is_mask(item) else 1
            record(item, consumed)
            real += consumed
        elif cls is slice:
            result = _slice(result, dim, item)
            dim += 1
            real += 1
        elif cls is int or (isinstance(item, int) or (hasattr(cls, "__index__") and not _is_sequence(item)
                                                      and not isinstance(item, float))):
            result = _select_checked(result, dim, item.__index__(), real)
            real += 1
        elif _is_sequence(item):
            t = _sequence_tensor(item)
            record(t, t.dim() if _is_mask(t) else 1)
            real += 1
        else:
            raise IndexError(_INVALID_INDEX.format(cls.__name__))
    return result, indices


def _select_checked(result: Tensor, dim: int, index: int, real: int) -> Tensor:
    size = result._data.shape[dim]
    if not -size <= index < size:
        raise _out_of_bounds(index, real, size)
    return A.select.int(result, dim, index)


_LEGACY_NAMES = _dtypes.SCALAR_TYPE_NAMES  # torch.FloatTensor's "Float"


def _legacy_type(self: Tensor) -> str:
    """The legacy type string of ``self`` (``torch.FloatTensor``), as its errors print it."""
    device = self.device.type
    prefix = "torch." if device == "cpu" else f"torch.{device}."
    return f"{prefix}{_LEGACY_NAMES.get(self.dtype.name, self.dtype.name)}Tensor"


def _setitem(self: Tensor, index: Any, value: Any) -> None:
    """``self[index] = value``, as torch's ``THPVariable_setitem``.

    A number becomes a 0-d tensor of self's dtype (c10's ``checked_convert``: torch's overflow
    error when it does not fit). A basic index writes into its view (``copy_to``): a same-shaped
    value is copied, a 0-d CPU one fills (``fill_.Tensor``), any other loses its leading size-1
    dims (``slicePrefix1s``, a view) and is expanded to the target's shape (torch's expand error
    when it does not fit) and copied. An advanced index (Note [Advanced indexing]) writes with
    ``index_put_`` into the view of the basic items, the value without its leading size-1 dims.
    """
    if not isinstance(value, Tensor):
        if not _is_number(value):
            raise TypeError(f"can't assign a {type(value).__name__} to a {_legacy_type(self)}")
        value = _number_value(value, self)
    cls = index.__class__
    if cls is int:  # checked before select, as torch's applySelect (a mode sees no failed select)
        shape = self._data.shape
        _copy_to(_select(self, 0, index) if shape and -shape[0] <= index < shape[0] else _index_int(self, index),
                 value)
        return
    if index is None or index is Ellipsis or cls is bool:  # THPVariable_setitem's simple types
        if index is not False:  # x[False] = v writes nothing
            _copy_to(self if index is Ellipsis else A.unsqueeze.default(self, 0), value)
        return
    target = _index_views(self, index, True)
    if target is None:
        target, indices = _apply_slicing(self, _wrap_tuple(index))
        if indices:
            A.index_put_.default(target, indices, _strip_leading_ones(value))
            return
    _copy_to(target, value)


def _strip_leading_ones(value: Tensor) -> Tensor:
    """``slicePrefix1sSize``: the value without its leading size-1 dims (a view)."""
    shape = value._data.shape
    first = 0
    while first < len(shape) and shape[first] == 1:
        first += 1
    return A.view.default(value, list(shape[first:])) if first else value


def _copy_to(target: Tensor, value: Tensor) -> None:
    """``copy_to`` of torch: copy a same-shaped value, fill from a 0-d CPU one, else view and expand it.

    The value loses its leading size-1 dims (``slicePrefix1sSize``, always a ``view``: ``x[0] =
    ones(1, 3)`` copies a (3,) view) and is expanded to the target's shape (``expand_inplace``,
    torch's expand error when it does not fit) before the copy.
    """
    shape, target_shape = value._data.shape, target._data.shape
    if shape != target_shape:
        if value._data.ndim == 0 and value._device.type == "cpu":
            A.fill_.Tensor(target, value)
            return
        first = 0
        while first < len(shape) and shape[first] == 1:
            first += 1
        value = A.view.default(value, list(shape[first:]))
        if shape[first:] != target_shape:
            value = A.expand.default(value, list(target_shape))
    A.copy_.default(target, value)


def _number_value(value: Any, self: Tensor) -> Tensor:
    """The 0-d tensor of ``self``'s dtype that ``x[i] = number`` writes (torch's ``valueToTensor``).

    For a CPU or CUDA ``self``, a CPU tensor passed through ``aten::lift_fresh`` (which a mode
    sees, as ``dc.tensor(...)``'s: ``FakeTensorMode`` makes it a fake constant, ``make_fx``
    records ``lift_fresh_copy`` of a constant); for another device, ``aten::scalar_tensor`` of the
    number on it. It is made before the index is applied, as in torch.
    """
    if value.__class__ not in _NUMBER_CLASSES:  # numpy scalars, IntEnum, ...: as Python numbers
        value = value.item() if hasattr(value, "item") else value
    if value.__class__ is int and not -_INT64 <= value < _INT64:  # torch unpacks it as a long long
        raise ValueError("Overflow when unpacking long long")
    kind = self._device.type
    if kind != "cpu" and kind != "cuda":  # scalarToTensor off the CPU: an operator on self's device
        number = int(value) if value.__class__ is bool else value  # THPUtils_unpackLong
        return A.scalar_tensor.default(number, dtype=self.dtype, layout=_layouts.strided, device=self._device)
    t = wrap_cpu(_dtypes.checked_number(value, self._data.dtype))  # the data's numpy dtype is self.dtype's
    if _pt.state.modes is not None:  # lift_fresh returns its argument: only a mode can tell
        t = A.lift_fresh.default(t)
    return t


_NUMBER_CLASSES = frozenset((int, float, bool, complex))
_INT64 = 1 << 63


Tensor.__getitem__ = _index_views
Tensor.__setitem__ = _setitem

_overrides.register_tensor_methods()  # See Note [Torch function costs nothing when unused]
