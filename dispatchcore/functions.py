"""The ``torch.*`` functions: ``dispatchcore.add(a, b)``, ``dispatchcore.cat([a, b])``, ...

Mirrors the generated ``torch/_C/_VariableFunctions`` (what ``torch.add`` is): a function picks
the operator overload the way the Tensor method does (``_tensor_methods.py``), so
``dispatchcore.add(a, b)`` and ``a.add(b)`` dispatch the same call. ``out=`` selects the
``.out`` overload where aten has one. A Python number operand of add/sub/mul/div, on either
side, becomes a wrapped number and the ``.Tensor`` overload runs, as in torch (See Note [Wrapped
numbers] in ``_composites.py``). Invariant: every function here is one operator call through the
dispatcher (or a method that is one), except ``where`` with a number, which converts it with
``scalar_tensor`` first, as torch's ``where.ScalarOther`` does.

Example:
    >>> import dispatchcore as dc
    >>> dc.add(dc.ones(2), dc.ones(2), alpha=3)
    tensor([4., 4.])
    >>> dc.cat([dc.zeros(1), dc.ones(2)])
    tensor([0., 1., 1.])
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import _tensor_methods  # noqa: F401 - the Tensor methods these functions call
from . import overrides as _overrides
from ._tensor_methods import (
    _NO_MODE,
    _SIGNATURES,
    _bound,
    _by_operand,
    _is_number,
    _named,
    _number_call,
    check_call,
    wrapped_number,
)
from .dtypes import result_type
from .ops import aten as A
from .tensor import Tensor
from .tls import _DEFAULT_STATE as _DEFAULT_KEYS
from .tls import per_thread as _pt

__all__ = [
    "abs", "abs_", "add", "amax", "argmax", "as_strided", "bmm", "cat", "clamp", "clamp_", "clamp_max",
    "clamp_max_", "clamp_min", "clamp_min_", "clip", "clip_", "clone", "cos", "cos_", "detach", "detach_",
    "div", "divide", "eq", "exp", "exp_", "fill_", "ge", "greater", "greater_equal", "gt", "le", "less",
    "less_equal", "log", "log_", "log_softmax", "lt", "matmul", "max", "maximum", "mean", "min", "minimum",
    "mm", "mul", "multiply", "ne", "neg", "neg_", "not_equal", "permute", "pow", "reciprocal", "relu", "relu_",
    "reshape", "rsub", "select", "sigmoid", "sigmoid_", "sin", "sin_", "softmax", "sqrt", "sqrt_", "square",
    "square_", "squeeze", "stack", "sub", "subtract", "sum", "t", "tanh", "tanh_", "transpose", "true_divide",
    "unsqueeze", "where", "zero_",
]

_T = Tensor
_tf_on = False  # See Note [Torch function costs nothing when unused] (overrides.py)
_NOT_HANDLED = _overrides._NOT_HANDLED


_retry = _overrides.retry


def _torch_function(func: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """A binding's ``__torch_function__`` check: the handlers' result, or ``_NOT_HANDLED``.

    See Note [Arguments a binding checks] (overrides.py). While the gate is off, a duck-typed
    argument past the first is found on the call's error path (``_retry``): See Note [Torch
    function costs nothing when unused].
    """
    return _overrides.check_binding(func, args, kwargs)


def _public(func: Any, name: str | None = None) -> Any:
    """Record ``func`` as ``torch.<name>`` (``overrides.resolve_name``, error messages)."""
    return _overrides.register_function(func, f"torch.{name or func.__name__}")


def _not_tensor(name: str, value: Any, arg: str = "input", position: int = 1) -> TypeError:
    return TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                     f"not {type(value).__name__}")


def _input_error(name: str, input: Any, args: tuple, kwargs: dict[str, Any]) -> TypeError:
    """A non-Tensor ``input``: torch's parser error over all the overloads where they are listed."""
    if name in _SIGNATURES:
        check_call(name, (input, *args), kwargs)
    return _not_tensor(name, input)


_NUMBERS = (bool, int, float, complex)
_NUMBER_CLASSES = frozenset(_NUMBERS)


def _wrapped(value: Any, like: Tensor | None, name: str, arg: str, position: int) -> Tensor:
    """A Python number as a wrapped number (a 0-d CPU tensor: See Note [Wrapped numbers])."""
    w = wrapped_number(value) if isinstance(value, _NUMBERS) else None
    if w is None:
        raise _not_tensor(name, value, arg, position)
    return w


def _binary(name: str, alpha: bool) -> Callable[..., Any]:
    """``torch.add``/``sub``/``mul``/``div`` (and numpy's names): ``input.<op>(other)``, with ``alpha`` and ``out``.

    A number on either side is wrapped and the ``.Tensor`` overload runs, as in torch.
    """
    op = getattr(A, name).Tensor
    method = type.__getattribute__(_T, name)  # the raw method: this function checks torch function itself
    number_call = _number_call(op)
    out_op = getattr(A, name).out

    def general_alpha(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Any:
        if not (isinstance(input, _T) and isinstance(other, _T)):  # a duck type's __torch_function__
            handled = _torch_function(_CALLED_AS.get(function, function), (input, other),
                                      {} if alpha == 1 and type(alpha) is int and out is None
                                      else {"alpha": alpha, "out": out})
            if handled is not _NOT_HANDLED:
                return handled
        if not isinstance(input, _T):  # torch.add(2, x), even torch.add(2, 3)
            input = _wrapped(input, other if isinstance(other, _T) else None, name, "input", 1)
        if not isinstance(other, _T):
            if name in _SIGNATURES and not _is_number(other):  # true_divide's, subtract's overloads
                check_call(name, (input, other), {k: v for k, v in (("alpha", alpha), ("out", out))
                                                   if not (v is None or (k == "alpha" and v == 1 and type(v) is int))})
            other = _wrapped(other, input, name, "other", 2)
        kwargs = {} if alpha == 1 and type(alpha) is int else {"alpha": alpha}
        if out is None:
            return method(input, other, **kwargs)
        return out_op(input, other, **kwargs, out=out)

    def general_plain(input: Any, other: Any, *, out: Tensor | None = None) -> Any:
        return general_alpha(input, other, out=out)

    general = general_alpha if alpha else general_plain

    # Two Tensors and no keywords: the entry's dispatch inline (OperatorHandle.entry), as the
    # Tensor method does it, one frame less; a tensor and a number: the method's number path;
    # anything else takes the general path above.
    def function(input: Any, other: Any, **kwargs: Any) -> Any:
        if _tf_on:
            handled = _torch_function(function, (input, other), kwargs)
            if handled is not _NOT_HANDLED:
                return handled
        if kwargs or other.__class__ is not input.__class__:
            if not kwargs and input.__class__ is _T and other.__class__ in _NUMBER_CLASSES:
                return number_call(input, other)
            return general(input, other, **kwargs)
        keys = _pt.state.keys
        try:
            if keys is _DEFAULT_KEYS:
                kernel = op._dispatch[4][input._key_bits | other._key_bits]
            else:
                kernel = op._dispatch[2][(input._key_bits | other._key_bits | keys[0]) & keys[2]]
        except (KeyError, AttributeError, TypeError):  # a new key set, or not Tensors
            pass  # the general path below, outside the handler (Note [No chained errors])
        else:
            return kernel(input, other)
        return general(input, other)

    for f in (function, general):
        f.__name__ = f.__qualname__ = name
    function.__signature__ = inspect.signature(general)  # type: ignore[attr-defined]
    _public(function)
    function.__doc__ = (f"``torch.{name}``: ``aten::{name}.Tensor``; a number on either side is wrapped "
                        f"(torch's wrapped number); ``out=`` calls ``aten::{name}.out``.")
    return function


_CALLED_AS: dict[Any, Any] = {}  # an implementation -> the public function its handlers see (torch.div)
add, sub = _binary("add", alpha=True), _binary("sub", alpha=True)
mul, _div = _binary("mul", alpha=False), _binary("div", alpha=False)
# numpy's names: operators of their own (CompositeImplicitAutograd calls of mul, sub, div), bound alike
multiply, subtract = _binary("multiply", alpha=False), _binary("subtract", alpha=True)
true_divide, _divide = _binary("true_divide", alpha=False), _binary("divide", alpha=False)


def _div_given(rounding_mode: Any, out: Any) -> dict[str, Any]:
    given = {"rounding_mode": rounding_mode, "out": out}
    return {k: v for k, v in given.items() if v is not _NO_MODE and v is not None}


def _div_function(name: str, plain: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.div``/``torch.divide``: ``plain`` (the ``.Tensor`` call) without ``rounding_mode``."""
    packet = getattr(A, name)

    def function(input: Any, other: Any, *, rounding_mode: Any = _NO_MODE, out: Tensor | None = None) -> Any:
        if _tf_on or input.__class__ is not _T:
            handled = _torch_function(function, (input, other), _div_given(rounding_mode, out))
            if handled is not _NOT_HANDLED:
                return handled
        if rounding_mode is _NO_MODE:
            return plain(input, other) if out is None else plain(input, other, out=out)
        if not (_is_number(other) or isinstance(other, _T)) and name in _SIGNATURES:
            check_call(name, (input, other), _div_given(rounding_mode, out))  # torch's TypeError over the overloads
        if not isinstance(input, _T):
            input = _wrapped(input, None, name, "input", 1)
        if not isinstance(other, _T):
            other = _wrapped(other, input, name, "other", 2)
        if out is None:
            return packet.Tensor_mode(input, other, rounding_mode=rounding_mode)
        return packet.out_mode(input, other, rounding_mode=rounding_mode, out=out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``torch.{name}``: ``aten::{name}.Tensor``; with ``rounding_mode`` (even None) "
                        f"``{name}.Tensor_mode`` (``out_mode`` with ``out=``). A number on either side is wrapped.")
    return _public(function)


div, divide = _div_function("div", _div), _div_function("divide", _divide)
div.__doc__ = """``torch.div``: ``aten::div.Tensor``; with ``rounding_mode`` (even None) ``div.Tensor_mode``.

A number on either side is wrapped, as in torch; ``out=`` calls ``div.out`` (``div.out_mode``).

Example:
    >>> import dispatchcore as dc
    >>> dc.div(dc.tensor([-7, 7]), 2, rounding_mode="floor")
    tensor([-4,  3])
"""


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``torch.rsub``: ``other - alpha * input``; ``aten::rsub.Tensor``, or ``rsub.Scalar`` for a number."""
    if _tf_on or input.__class__ is not _T:
        handled = _torch_function(rsub, (input, other), {} if alpha == 1 else {'alpha': alpha})
        if handled is not _NOT_HANDLED:
            return handled
    if not isinstance(input, _T):
        raise _not_tensor("rsub", input)
    if isinstance(other, _T):
        return A.rsub.Tensor(input, other, alpha=alpha)
    if not isinstance(other, _NUMBERS):
        return _retry(rsub, (input, other), {} if alpha == 1 else {'alpha': alpha},
                      _not_tensor("rsub", other, "other", 2))
    return A.rsub.Scalar(input, other, alpha)


def pow(input: Any = None, exponent: Any = None, **kwargs: Any) -> Tensor:  # noqa: A001 - torch.pow
    """``torch.pow``: ``input ** exponent``; a number base (``self=``) calls ``aten::pow.Scalar``."""
    if _tf_on or input.__class__ is not _T:
        handled = _torch_function(pow, (input, exponent), kwargs)
        if handled is not _NOT_HANDLED:
            return handled
    if kwargs:
        if set(kwargs) != {"self"} or input is not None:
            raise TypeError(f"pow() got an unexpected keyword argument '{next(iter(kwargs))}'")
        input = kwargs["self"]
    if isinstance(input, _T):
        try:
            return _pow(input, exponent)
        except Exception as exc:  # noqa: BLE001 - re-raised by _retry unless a duck type takes the call
            error = exc
        _check_operands("pow", input, (exponent,), {})
        return _retry(pow, (input, exponent), kwargs, error)
    if isinstance(exponent, _T):
        _wrapped(input, exponent, "pow", "self", 1)  # rejects what is not a number
        return A.pow.Scalar(input, exponent)
    raise _not_tensor("pow", input)


# Tensor.pow without its handing a duck-typed exponent to the handler: torch.pow checks its arguments itself
_pow = _named(_by_operand(A.pow.Tensor_Tensor, A.pow.Tensor_Scalar, route=False), "exponent")


def _check_operands(name: str, input: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """After a failed call: torch's binding TypeError when the arguments fit none of ``name``'s signatures.

    Only for the functions with signatures (Note [Operand arguments], _tensor_methods.py), and not
    for a duck type, whose torch function ``_retry`` still finds.
    """
    if name in _SIGNATURES and not any(hasattr(type(a), "__torch_function__") and not isinstance(a, Tensor)
                                       for a in args):
        check_call(name, (input, *args), kwargs)


def _method(name: str, *, out: bool = False, method: Any = None, out_op: Any = None) -> Callable[..., Any]:
    """``torch.<name>(input, ...)``: ``input.<name>(...)``; with ``out=`` the ``.out`` overload.

    A duck-typed argument past ``input`` is found on the error path (``_retry``). ``method``:
    the implementation, where the raw method would hand a duck-typed operand to its handler
    itself (pow and the comparisons). ``out_op``: what ``out=`` calls, where the overload
    depends on the arguments (the comparisons' ``Scalar_out``/``Tensor_out``).
    """
    if method is None:
        method = type.__getattribute__(_T, name)  # the raw method: this function checks torch function itself
    if out:
        out_op = out_op or getattr(A, name).out

        def function(input: Any, *args: Any, out: Tensor | None = None, **kwargs: Any) -> Any:
            if _tf_on or input.__class__ is not _T:
                handled = _torch_function(function, (input, *args), kwargs if out is None else {**kwargs, "out": out})
                if handled is not _NOT_HANDLED:
                    return handled
                if not isinstance(input, _T):
                    raise _input_error(name, input, args, kwargs if out is None else {**kwargs, "out": out})
            try:
                if out is None:
                    return method(input, *args, **kwargs)
                return out_op(input, *args, **kwargs, out=out)
            except Exception as exc:  # noqa: BLE001 - re-raised by _retry unless a duck type takes the call
                error = exc
            _check_operands(name, input, args, kwargs if out is None else {**kwargs, "out": out})
            return _retry(function, (input, *args), kwargs if out is None else {**kwargs, "out": out}, error)
    else:
        def function(input: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            if _tf_on or input.__class__ is not _T:
                handled = _torch_function(function, (input, *args), kwargs)
                if handled is not _NOT_HANDLED:
                    return handled
                if not isinstance(input, _T):
                    raise _not_tensor(name, input)
            if "out" in kwargs:  # aten has no .out overload for it here
                raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
            try:
                return method(input, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - re-raised by _retry unless a duck type takes the call
                error = exc
            _check_operands(name, input, args, kwargs)
            return _retry(function, (input, *args), kwargs, error)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``torch.{name}``: ``input.{name}(...)`` (see ``Tensor.{name}``)."
    return _public(function)


abs, cos, exp, log, neg = (_method(n, out=True) for n in ("abs", "cos", "exp", "log", "neg"))  # noqa: A001
sigmoid, sin, sqrt, square, tanh = (_method(n, out=True) for n in ("sigmoid", "sin", "sqrt", "square", "tanh"))
(abs_, cos_, exp_, log_, neg_, relu_, sigmoid_, sin_, sqrt_, square_, tanh_) = (
    _method(f"{n}_") for n in ("abs", "cos", "exp", "log", "neg", "relu", "sigmoid", "sin", "sqrt", "square", "tanh"))
relu, clone, detach, detach_, t = (_method(n) for n in ("relu", "clone", "detach", "detach_", "t"))
def _comparison_out(packet: Any) -> Callable[..., Tensor]:
    """A comparison's ``out=`` call: ``Tensor_out`` for a tensor operand, ``Scalar_out`` for a number."""
    def out_call(input: Tensor, other: Any, *, out: Tensor) -> Tensor:
        return (packet.Tensor_out if isinstance(other, _T) else packet.Scalar_out)(input, other, out=out)
    return out_call


def _comparison(name: str) -> Callable[..., Any]:
    packet = getattr(A, name)
    return _method(name, out=True, method=_named(_by_operand(packet.Tensor, packet.Scalar, route=False)),
                   out_op=_comparison_out(packet))


eq, ne, lt, le, gt, ge = (_comparison(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
# numpy's names: operators of their own (CompositeImplicitAutograd calls of gt, ...), bound alike
greater, greater_equal, less, less_equal, not_equal = (
    _comparison(n) for n in ("greater", "greater_equal", "less", "less_equal", "not_equal"))
amax, argmax = (_method(n) for n in ("amax", "argmax"))
# torch.sum/mean without ``dim`` have no ``keepdim``: torch's parser lists its overloads
_REDUCTION_OVERLOADS = {
    "sum": (" * (Tensor input, *, torch.dtype dtype = None)\n"
            " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
            "Tensor out = None)\n"),
    "mean": (" * (Tensor input, *, torch.dtype dtype = None, Tensor out = None)\n"
             " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
             "Tensor out = None)\n"),
}


def _reduction(name: str) -> Callable[..., Any]:
    method = _method(name)

    def function(input: Any, *args: Any, **kwargs: Any) -> Any:
        if _tf_on or input.__class__ is not _T:
            handled = _torch_function(function, (input, *args), kwargs)
            if handled is not _NOT_HANDLED:
                return handled
        if not args and "dim" not in kwargs and "keepdim" in kwargs and isinstance(input, _T):
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                            f"keepdim=bool), but expected one of:\n{_REDUCTION_OVERLOADS[name]}")
        try:  # See Note [Method arguments] (_tensor_methods.py): torch's function signatures
            return method(input, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - re-raised below when the arguments fit
            error = exc
        if not _tf_on:  # a duck type's torch function (See _torch_function)
            handled = _torch_function(function, (input, *args), kwargs)
            if handled is not _NOT_HANDLED:
                return handled
        check_call(name, (input, *args), kwargs)
        raise error

    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__
    return _public(function)


sum, mean = _reduction("sum"), _reduction("mean")  # noqa: A001
max, min = _method("max"), _method("min")  # noqa: A001 - torch.max: max(input, other) is aten::maximum
maximum, minimum, reciprocal = _method("maximum"), _method("minimum"), _method("reciprocal")


mm, bmm, matmul = (_method(n) for n in ("mm", "bmm", "matmul"))
softmax, log_softmax = _method("softmax"), _method("log_softmax")
def _clamp_out(name: str) -> Callable[..., Tensor]:
    """``clamp``'s ``out=`` call: ``Tensor_out`` for tensor bounds (or none), ``out`` for numbers."""
    packet = getattr(A, name)

    def out_call(input: Tensor, min: Any = None, max: Any = None, *, out: Tensor) -> Tensor:  # noqa: A002
        min_t, max_t = isinstance(min, _T), isinstance(max, _T)
        if (min_t or max_t) and (min_t or min is None) and (max_t or max is None) or min is max is None:
            return packet.Tensor_out(input, min, max, out=out)
        bounds = (min, max)
        return packet.out(input, _bound(name, min, bounds), _bound(name, max, bounds), out=out)
    return out_call


def _one_bound_out(name: str) -> Callable[..., Tensor]:
    """``clamp_min``/``clamp_max``'s ``out=`` call: ``Tensor_out`` for a tensor bound, ``out`` for a number."""
    packet = getattr(A, name)

    def out_call(input: Tensor, bound: Any, *, out: Tensor) -> Tensor:
        return (packet.Tensor_out if isinstance(bound, _T) else packet.out)(input, bound, out=out)
    return out_call


clamp, clip = (_method(n, out=True, out_op=_clamp_out(n)) for n in ("clamp", "clip"))
clamp_min, clamp_max = (_method(n, out=True, out_op=_one_bound_out(n)) for n in ("clamp_min", "clamp_max"))
clamp_, clip_, clamp_min_, clamp_max_ = (_method(n) for n in ("clamp_", "clip_", "clamp_min_", "clamp_max_"))
transpose, squeeze, unsqueeze, select = (_method(n) for n in ("transpose", "squeeze", "unsqueeze", "select"))
as_strided, fill_, zero_ = _method("as_strided"), _method("fill_"), _method("zero_")


def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """``torch.reshape``: ``input.reshape(shape)`` (``aten::reshape``, CompositeImplicitAutograd)."""
    if _tf_on or input.__class__ is not _T:
        handled = _torch_function(reshape, (input, shape), {})
        if handled is not _NOT_HANDLED:
            return handled
    if not isinstance(input, _T):
        raise _not_tensor("reshape", input)
    try:  # See Note [Method arguments] (_tensor_methods.py)
        return A.reshape.default(input, list(shape))
    except Exception as exc:  # noqa: BLE001 - re-raised below when the arguments fit
        error = exc
    if not _tf_on:  # a duck type's torch function (See _torch_function)
        handled = _torch_function(reshape, (input, shape), {})
        if handled is not _NOT_HANDLED:
            return handled
    check_call("reshape", (input, shape), {})
    raise error


def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    """``torch.permute``: ``input.permute(dims)`` (``aten::permute``, a view)."""
    if _tf_on or input.__class__ is not _T:
        handled = _torch_function(permute, (input, dims), {})
        if handled is not _NOT_HANDLED:
            return handled
    if not isinstance(input, _T):
        raise _not_tensor("permute", input)
    try:
        return A.permute.default(input, list(dims))
    except Exception as exc:  # noqa: BLE001 - re-raised by _retry unless a duck type takes the call
        error = exc
    return _retry(permute, (input, dims), {}, error)


def where(condition: Tensor, input: Any, other: Any) -> Tensor:
    """``torch.where(condition, input, other)``: ``aten::where.self``; numbers are wrapped.

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor([-1.0, 2.0])
        >>> dc.where(x > 0, x, 0.0)
        tensor([0., 2.])
    """
    if _tf_on or condition.__class__ is not _T:
        handled = _torch_function(where, (condition, input, other), {})
        if handled is not _NOT_HANDLED:
            return handled
    try:
        if not isinstance(condition, _T):
            check_call("where", (condition, input, other), {})  # torch's overloads: the parser's error
            raise _not_tensor("where", condition, "condition", 1)
        input_t, other_t = isinstance(input, _T), isinstance(other, _T)
        if input_t and other_t:
            return A.where.self(condition, input, other)
        # where.ScalarOther / ScalarSelf / Scalar (CompositeImplicitAutograd in torch): a number becomes
        # a scalar_tensor of the promoted dtype, a tensor of another dtype is converted to it
        if (not input_t and not isinstance(input, _NUMBERS)) or (not other_t and not isinstance(other, _NUMBERS)):
            check_call("where", (condition, input, other), {})  # torch's overloads: the parser's error
            raise _not_tensor("where", input if not input_t else other, "input" if not input_t else "other",
                              2 if not input_t else 3)
        dtype = result_type(input, other)
        device = input.device if input_t else other.device if other_t else condition.device
        if not other_t:
            other = A.scalar_tensor.default(other, dtype=dtype, device=device)
        if not input_t:
            input = A.scalar_tensor.default(input, dtype=dtype, device=device)
        if input.dtype is not dtype:
            input = A._to_copy.default(input, dtype=dtype)
        if other.dtype is not dtype:
            other = A._to_copy.default(other, dtype=dtype)
        return A.where.self(condition, input, other)
    except Exception as exc:  # noqa: BLE001 - re-raised by _retry unless a duck type takes the call
        error = exc
    return _retry(where, (condition, input, other), {}, error)


def _tensor_list(name: str, tensors: Any) -> list[Tensor]:
    if isinstance(tensors, _T) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    return list(tensors)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """``torch.cat``: join tensors along an existing dimension (``aten::cat``)."""
    if _tf_on:
        handled = _torch_function(cat, (tensors,) if dim == 0 else (tensors, dim), {})  # as given
        if handled is not _NOT_HANDLED:
            return handled
    try:
        items = _tensor_list("cat", tensors)
        if not items:  # torch's binding checks it before dispatch (no tensor to dispatch on)
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        return A.cat.default(items, dim)
    except Exception as exc:  # noqa: BLE001 - re-raised by _retry unless a duck type takes the call
        error = exc
    return _retry(cat, (tensors,) if dim == 0 else (tensors, dim), {}, error)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """``torch.stack``: join tensors along a new dimension (``aten::stack``).

    Example:
        >>> import dispatchcore as dc
        >>> dc.stack([dc.zeros(2), dc.ones(2)]).shape
        dispatchcore.Size([2, 2])
    """
    if _tf_on:
        handled = _torch_function(stack, (tensors,) if dim == 0 else (tensors, dim), {})  # as given
        if handled is not _NOT_HANDLED:
            return handled
    try:
        items = _tensor_list("stack", tensors)
        if not items:  # aten::stack is CompositeImplicitAutograd in torch: its check runs first
            raise RuntimeError("stack expects a non-empty TensorList")
        return A.stack.default(items, dim)
    except Exception as exc:  # noqa: BLE001 - re-raised by _retry unless a duck type takes the call
        error = exc
    return _retry(stack, (tensors,) if dim == 0 else (tensors, dim), {}, error)


_CALLED_AS[_div], _CALLED_AS[_divide] = div, divide
_public(rsub)
_public(pow)
_public(reshape)
_public(permute)
_public(where)
_public(cat)
_public(stack)
_overrides.register_gate(sys.modules[__name__])
