"""``__torch_function__`` and ``TorchFunctionMode``: the Python-API layer above the dispatcher.

Mirrors ``torch/overrides.py``, ``torch/_tensor.py`` (``Tensor.__torch_function__``, ``_convert``)
and ``torch/csrc/utils/python_arg_parser.cpp`` (``handle_torch_function``): a public call
(``dc.add``, ``Tensor.add``, ``x + y``, ``F.relu``) whose arguments include an object with
``__torch_function__``, or that runs while a ``TorchFunctionMode`` is active, is handed to the
innermost mode (off its stack while it runs), then to each overloaded argument's handler,
subclasses before superclasses; all NotImplemented is torch's TypeError. As torch's argument
parser, a C++ binding's check looks at every argument a Tensor parameter takes, and at any
object with ``__torch_function__`` (a "duck type"): See Note [Arguments a binding checks]. Nothing
here runs for plain tensors while no mode is active and no Tensor subclass with torch function
exists: see Note [Torch function costs nothing when unused].

Example:
    >>> import dispatchcore as dc
    >>> class Seen(TorchFunctionMode):
    ...     def __init__(self):
    ...         self.calls = []
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         self.calls.append(resolve_name(func))
    ...         return func(*args, **(kwargs or {}))
    >>> x = dc.ones(2)
    >>> with Seen() as seen:
    ...     _ = dc.add(x, 1).relu() + x
    >>> seen.calls
    ['torch.add', 'torch.Tensor.relu', 'torch.Tensor.add']
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from types import EllipsisType, FunctionType, NoneType
from typing import Any

from .dtypes import device as _device
from .dtypes import dtype as _dtype
from .subclass import append_overloaded
from .tensor import Size, Tensor, _disabled_torch_function_impl

_tensor_module: Any = sys.modules[Tensor.__module__]  # dispatchcore.tensor (the package's ``tensor`` is a factory)

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "TorchFunctionMode",
    "get_overridable_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "resolve_name",
]

# Note [Torch function costs nothing when unused]: torch checks every public call in C++; a
# Python check per call would cost ~50-100 ns, so dispatchcore keeps plain tensors untouched
# while no handler can take a call (no mode active in any thread, no Tensor subclass with torch
# function defined):
# 1. Tensor methods, operators and properties: ``Tensor.__dict__`` holds the raw, unchecked ones,
#    which is what ``x.add(y)`` finds. The checking versions (``_PUBLIC``) are what ``dc.Tensor.add``
#    returns (``_TensorType.__getattribute__`` in tensor.py maps one to the other), so ``func``
#    compares equal to ``dc.Tensor.add`` as in torch. A class with torch function gets the
#    checking versions in its own ``__dict__`` (``_on_subclass``). From the moment a handler can
#    take a call (a mode entered in any thread, or a subclass with torch function defined), the
#    gate is on (``_set_gate``) and ``Tensor.__dict__`` holds them too (``_swap``): a plain tensor's
#    method then sees a subclass argument (``x.copy_(sub)``, ``x.where(mask_sub, y)``), as torch's
#    argument parser does. The raw ones return when the last mode exits and no such class exists.
#    While installed, a checking method's fast path is one class test of ``self`` and of each
#    argument (``_INERT``: classes that never carry torch function).
# 2. Python picks ``b.__radd__`` before ``a.__add__`` when ``type(b)`` subclasses ``type(a)`` and
#    its ``__radd__`` differs: since ``Sub.__radd__`` and ``Tensor.__radd__`` are the same public
#    object, Python calls ``x.__add__(sub)`` first, as with torch; the raw binary methods send an
#    operand that is neither a number nor a Tensor of their class to ``tensor_operand`` (their slow
#    path), which checks here.
# 3. ``dc.*`` and ``F.*`` functions test the module global ``_tf_on`` first (one load and a branch),
#    True exactly while the gate is on. Nothing announces a duck-typed class (any class whose
#    ``__torch_function__`` is not the disabled one): the ``F.*`` functions test the classes of the
#    arguments torch checks (``_INERT``, a set lookup each), the functions with many arguments check
#    them on their error path (``retry``), where a call with a duck-typed argument ends before it
#    computes anything, as does a Tensor method's operand slow path.

_PUBLIC: dict[str, tuple[Any, Any]] = _tensor_module._PUBLIC  # name -> (raw, public)
_FUNC_NAMES: dict[Any, str] = {}  # public callable -> torch's qualified name, for errors
_ERROR_NAMES: dict[Any, str] = {}  # where torch's error spells it otherwise (``torch._tensor.__len__``)
_GATED: list[Any] = []  # modules whose ``_tf_on`` follows _set_gate
_lock = threading.RLock()
_active_modes = 0  # modes entered and not left, over all threads
_subclass_seen = False  # a Tensor subclass with torch function was defined
_swapped = False  # Tensor.__dict__ holds the checking methods
# Classes whose instances never take a call: builtins, Tensor, and its subclasses with torch function
# disabled (``_on_subclass`` adds them: Parameter, FakeTensor, ...). See Note [Torch function costs
# nothing when unused]; while the gate is off, no class with torch function is a Tensor subclass.
_INERT: set[type] = {Tensor, int, float, bool, complex, str, bytes, NoneType, EllipsisType, slice, Size, _dtype,
                     _device}


class _State(threading.local):
    """This thread's mode stack (innermost last) and disabled level (0, 1 subclasses, 2 all)."""

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.disabled = 0


_st = _State()


def _set_gate() -> None:
    """Turn the gate on while a handler can take a call; See Note [Torch function costs nothing when unused]."""
    global _swapped
    on = _active_modes > 0 or _subclass_seen
    for module in _GATED:
        module._tf_on = on
    if on != _swapped:
        if on:
            _sync()
        _swap(on)
        _swapped = on


def register_gate(module: Any) -> None:
    """Make ``module._tf_on`` follow whether torch function can apply at all.

    See Note [Torch function costs nothing when unused].
    """
    _GATED.append(module)
    module._tf_on = _active_modes > 0 or _subclass_seen


def _enabled_for(cls: type) -> bool:
    impl = getattr(cls, "__torch_function__", None)
    return impl is not None and getattr(impl, "__func__", impl) is not _disabled_torch_function_impl


# --- checks -------------------------------------------------------------------------------------
def _mode_active() -> bool:
    return bool(_st.stack) and _st.disabled < 2


def _overloaded(relevant: Iterable[Any], include_plain: bool = False, expand: bool | None = None) -> list[Any]:
    """``_get_overloaded_args``: one argument per class with torch function, subclasses first.

    C++ bindings skip plain Tensors, and look into list and tuple arguments (``torch.cat([a, b])``);
    Python-level functions (``include_plain``, torch's ``has_torch_function(args)``) count plain
    Tensors and check each argument itself.
    """
    found: list[Any] = []
    if _st.disabled:
        return found
    if expand is None:
        expand = not include_plain
    for arg in relevant:
        if (arg.__class__ is list or arg.__class__ is tuple) and expand:
            for item in arg:
                _add(item, found, include_plain)
        else:
            _add(arg, found, include_plain)
    return found


def _add(arg: Any, found: list[Any], include_plain: bool) -> None:
    cls = arg.__class__
    if cls is Tensor and not include_plain:
        return
    if arg is None or cls in (int, float, bool, str) or not _enabled_for(cls):
        return
    append_overloaded(found, arg)


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether a call with these arguments goes to ``__torch_function__`` (``torch.overrides.has_torch_function``).

    True when a mode is active, or an argument's class (not exactly ``Tensor``) defines it.

    Example:
        >>> import dispatchcore as dc
        >>> has_torch_function((dc.ones(1),))
        False
    """
    return _mode_active() or bool(_overloaded(relevant_args, expand=False))


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))``."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def is_tensor_like(obj: Any) -> bool:
    """A Tensor, or an object whose class defines ``__torch_function__`` (``torch.overrides.is_tensor_like``)."""
    return isinstance(obj, Tensor) or hasattr(type(obj), "__torch_function__")


# --- the call ----------------------------------------------------------------------------------
def resolve_name(func: Any) -> str | None:
    """Torch's name of a public function or method (``torch.overrides.resolve_name``).

    Example:
        >>> import dispatchcore as dc
        >>> resolve_name(dc.Tensor.add), resolve_name(dc.add)
        ('torch.Tensor.add', 'torch.add')
    """
    name = _FUNC_NAMES.get(func)
    if name is not None:
        return name
    accessor = getattr(func, "__name__", None)
    if accessor in ("__get__", "__set__"):  # a property's getter or setter (torch names no deleter)
        prop = _property_name(func)
        if prop is not None:
            return f"torch.Tensor.{prop}.{accessor}"
    _sync()  # a raw method, or one attached since the last _sync
    for raw, public in _PUBLIC.values():
        if raw is func or public is func:
            return _FUNC_NAMES.get(public)
    return None


def _property_name(func: Any) -> str | None:
    """The name of the Tensor property whose ``__get__``/``__set__``/``__delete__`` ``func`` is."""
    owner = getattr(func, "__self__", None)
    for key, (raw, public) in _PUBLIC.items():
        if public is owner or raw is owner:
            return key
    return None


def _error_name(func: Any) -> str:
    name = _ERROR_NAMES.get(func) or resolve_name(func)
    if name is None and getattr(func, "__name__", None) == "__delete__":
        name = f"torch.Tensor.{_property_name(func)}.__delete__"
    return name or f"{getattr(func, '__module__', None)}.{getattr(func, '__name__', func)}"


def _dispatch(func: Any, overloaded: list[Any], args: tuple, kwargs: Any, python_level: bool) -> Any:
    """``handle_torch_function``: the innermost mode, then each overloaded argument's handler."""
    types = tuple([type(a) for a in overloaded])
    st = _st
    mode = None
    if st.stack and st.disabled < 2:
        mode = st.stack.pop()  # the mode is off its stack while it runs (StashTorchFunctionModeGuard)
        try:
            result = mode.__torch_function__(func, types, args, kwargs)
        finally:
            st.stack.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = arg.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = _error_name(func)
    if python_level:
        msg = (f"no implementation found for '{name}' on types that implement __torch_function__: "
               f"{[type(a) for a in overloaded]}")
        raise TypeError(msg + (f" nor in mode {mode}" if mode is not None else ""))
    handlers = ([f"  - mode object {mode}\n"] if mode is not None else []) + [
        f"  - tensor subclass {type(a)}\n" for a in overloaded]
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned "
                    f"NotImplemented:\n\n{''.join(handlers)}\nFor more information, try re-running with "
                    "TORCH_LOGS=not_implemented")


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """Call ``public_api`` through the mode and the handlers (``torch.overrides.handle_torch_function``).

    For a Python-level function written as torch's are: ``if has_torch_function(relevant): return
    handle_torch_function(f, relevant, *args, **kwargs)``. Plain tensors count as overloaded.

    Example:
        >>> class Duck:
        ...     @classmethod
        ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
        ...         return f"{func.__name__} on {[t.__name__ for t in types]}"
        >>> def double(x):
        ...     if has_torch_function((x,)):
        ...         return handle_torch_function(double, (x,), x)
        ...     return 2 * x
        >>> double(Duck())
        "double on ['Duck']"
    """
    return _dispatch(public_api, _overloaded(relevant_args, True), args, kwargs, True)


_NOT_HANDLED: Any = object()


_RELEVANT_PARAMS: dict[Any, tuple[str, ...]] = {}  # a Python-level function -> the parameters it hands on
_CHECKED_PARAMS: dict[Any, tuple[str, ...]] = {}  # ... -> those it checks, where fewer
_UNPASSED: dict[Any, tuple[str, ...]] = {}  # ... -> the parameters it does not hand to the handlers


def function_locals(func: Any, local_vars: dict[str, Any]) -> Any:
    """A Python-level ``F.*`` function's check, from its parameters: ``_NOT_HANDLED`` when none applies.

    As torch's ``nn/functional.py`` does, the parameters without a default are passed
    positionally and the others by keyword; the relevant parameters are those the function
    names (``relevant=`` of ``register_function``; its check may read fewer, ``checked=``), else
    every tensor-like one. Its inner calls check their own arguments: See Note [Calls inside
    nn.functional].
    """
    if not _active_modes and _inert_arguments(tuple(local_vars.values()), {}):  # the common case, at once
        return _NOT_HANDLED
    names = _RELEVANT_PARAMS.get(func)
    if names is not None:
        relevant = [local_vars[n] for n in names]
        checked_names = _CHECKED_PARAMS.get(func)
        checked = relevant if checked_names is None else [local_vars[n] for n in checked_names]
    else:
        relevant = checked = [v for v in local_vars.values() if isinstance(v, Tensor) or is_tensor_like(v)]
    if not has_torch_function(checked):
        return _NOT_HANDLED
    positional, keywords = _split_params(func, local_vars)
    for name in _UNPASSED.get(func, ()):
        del keywords[name]
    return _dispatch(func, _overloaded(relevant, True), positional, keywords, True)


_PARAMS: dict[Any, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _split_params(func: Any, local_vars: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    split = _PARAMS.get(func)
    if split is None:
        import inspect

        params = inspect.signature(func).parameters.values()
        split = _PARAMS[func] = (tuple(p.name for p in params if p.default is p.empty),
                                 tuple(p.name for p in params if p.default is not p.empty))
    return tuple(local_vars[n] for n in split[0]), {n: local_vars[n] for n in split[1]}


# --- Tensor methods ---------------------------------------------------------------------------
def tensor_operand(func_name: str, self: Any, other: Any, operator: bool = False) -> Any:
    """A raw binary method met an operand of another class: its torch function, or ``_NOT_HANDLED``.

    ``other`` is a Tensor of another class, or an object that is neither a Tensor nor a number
    (a duck type with ``__torch_function__`` takes the call, as torch's argument parser finds it).
    An operator returns NotImplemented when every handler declines (torch's
    ``TypeError_to_NotImplemented_``), so Python tries the reflected one.
    """
    python_level = func_name in _IN_PYTHON  # torch/_tensor.py's operators count a plain Tensor
    overloaded = _overloaded((self, other), python_level)
    if not _mode_active() and all(type(a) is Tensor for a in overloaded):
        return _NOT_HANDLED
    try:
        return _dispatch(_PUBLIC[func_name][1], overloaded, (self, other), {} if python_level else None,
                         python_level)
    except TypeError:
        if operator:  # torch's TypeError_to_NotImplemented_
            return NotImplemented
        raise


def _all_inert(items: Any) -> bool:
    for item in items:
        if item.__class__ not in _INERT:
            return False
    return True


def _inert_arguments(args: tuple, kwargs: dict[str, Any]) -> bool:
    """No argument, nor any item of a list or tuple argument, can carry torch function."""
    for a in (*args, *kwargs.values()) if kwargs else args:
        cls = a.__class__
        if cls not in _INERT and not ((cls is tuple or cls is list) and _all_inert(a)):
            return False
    return True


def _method_wrapper(name: str, raw: Any, report: str, python_level: bool, in_python: bool, binary: bool) -> Any:
    """The public version of Tensor method ``name``, which checks for torch function first.

    Its fast path (a plain ``self``, no mode in any thread, arguments of classes in ``_INERT``)
    is a class test per argument; See Note [Torch function costs nothing when unused].
    """
    inert = _INERT
    self_only = name in _SELF_ONLY
    signature = _PY_SIGNATURES.get(name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.__class__ is Tensor and not _active_modes:  # the fast path: no handler can take the call
            if not kwargs:
                if not args:
                    return raw(self)
                if len(args) == 1:
                    a = args[0]
                    if a.__class__ in inert:
                        return raw(self, a)
            if _inert_arguments(args, kwargs):
                return raw(self, *args, **kwargs)
        if self_only:
            relevant: Any = (self,)
        elif python_level and in_python:  # torch/_tensor.py's binary operators: every argument
            relevant = (self, *args, *kwargs.values()) if kwargs else (self, *args)
        else:
            relevant = _parsed_relevant(report, self, args, kwargs)
        overloaded = _overloaded(relevant, python_level, not in_python)  # a C++ parser looks into Tensor lists
        # a Python-level binding counts plain Tensors, but only a mode or another class enters
        if not _mode_active() and all(type(a) is Tensor for a in overloaded):
            return raw(self, *args, **kwargs)
        func = _PUBLIC[report][1]
        call_args, call_kwargs = (self, *args), kwargs
        if signature is not None:  # as torch/_tensor.py passes them on
            call_args, call_kwargs = _as_torch_passes(signature, self, args, kwargs)
        try:
            return _dispatch(func, overloaded, call_args, call_kwargs if in_python else (call_kwargs or None),
                             in_python)
        except TypeError:
            if binary:
                return NotImplemented  # torch's TypeError_to_NotImplemented_ on operators
            raise

    method.__name__ = getattr(raw, "__name__", name)
    method.__qualname__ = getattr(raw, "__qualname__", name)
    method.__doc__ = getattr(raw, "__doc__", None)
    method.__wrapped__ = raw  # type: ignore[attr-defined]  # inspect.signature shows the method's own
    _FUNC_NAMES[method] = f"torch.Tensor.{name}"
    if in_python:  # torch's Python-level error names the function by its module
        _ERROR_NAMES[method] = f"torch._tensor.{name}"
    return method


# Note [Arguments a binding checks]: torch's argument parser collects the overloaded arguments of
# a C++ binding while it binds them to a signature: an argument at a ``Tensor`` parameter, and any
# argument with ``__torch_function__`` that the parameter would not take otherwise (a duck type
# anywhere). A Tensor subclass passed where the parameter is a number, a dim or a size is read as
# one (``x.sum(sub_0d)``, ``x.add(1, alpha=sub_0d)``, ``x.new_zeros(sub)``): not overloaded. The
# items of a list are looked at wherever it goes, a list of sizes' too: ``x.view([2, duck])`` and
# ``x.view([sub_0d, 3])`` reach the handlers. The methods named after an aten operator take their
# Tensor parameters from its overloads' schemas (``self`` left out, the others in order); the
# others count every argument.
class _Params:
    """What some overload of an aten operator takes where: See Note [Arguments a binding checks]."""

    __slots__ = ("positions", "names", "list_positions", "list_names", "most", "least")

    def __init__(self) -> None:
        self.positions: set[int] = set()  # a Tensor parameter at this position (after self, for a method)
        self.names: set[str] = set()  # ... of this name
        self.list_positions: set[int] = set()  # a list of Tensors (``Tensor[]``, ``Tensor?[]``)
        self.list_names: set[str] = set()
        self.most: int | None = 0  # the most positional arguments; None: any number (a size as ``*sizes``)
        self.least = 1 << 30  # the fewest required arguments


_TENSOR_PARAMS: dict[tuple[str, bool], _Params | None] = {}
# Tensor parameters of torch's overloads that dispatchcore's aten operators lack (``to.other``,
# ``narrow.Tensor``, ``tensor_split.tensor_indices_or_sections``), positions after ``self``
_MORE_TENSOR_PARAMS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "to": ((0,), ("other", "tensor")), "narrow": ((1,), ("start",)),
    "tensor_split": ((0,), ("tensor_indices_or_sections",)),
}


def _tensor_params(name: str, method: bool = True) -> _Params | None:
    """Where the overloads of ``aten::<name>`` take Tensors, and how many positional arguments.

    For a method, the positions after ``self``; for a function, ``self`` is the first (``input=``).
    None where aten has no operator of that name. See Note [Arguments a binding checks].
    """
    key = (name, method)
    try:
        return _TENSOR_PARAMS[key]
    except KeyError:
        pass
    from .ops import aten

    try:
        packet = getattr(aten, name)
        overloads = [getattr(packet, o) for o in packet.overloads()]
    except (AttributeError, RuntimeError, TypeError):
        overloads = []
    params: _Params | None = None
    if overloads:
        params = _Params()
        extra = _MORE_TENSOR_PARAMS.get(name)
        if extra is not None:
            params.positions.update(i if method else i + 1 for i in extra[0])
            params.names.update(extra[1])
        for op in overloads:
            arguments = [a for a in op.schema.arguments if not (method and a.name == "self")]
            positional = [a for a in arguments if not a.kwarg_only]
            params.least = min(params.least, sum(1 for a in positional if not a.has_default))
            if params.most is not None:
                params.most = max(params.most, len(positional))
                if positional and "[" in str(positional[0].type) and not str(positional[0].type).startswith("Tensor"):
                    params.most = None  # view(2, 3), zeros(2, 3): torch's parser takes sizes as varargs
            for i, a in enumerate(positional):
                kind = str(a.type)
                if kind.startswith("Tensor"):
                    (params.list_positions if "[" in kind else params.positions).add(i)
            for a in arguments:
                kind = str(a.type)
                if kind.startswith("Tensor"):
                    (params.list_names if "[" in kind else params.names).add("input" if a.name == "self" else a.name)
    _TENSOR_PARAMS[key] = params
    return params


def _parsed_relevant(report: str, self: Any, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    """The arguments a C++ method binding checks; See Note [Arguments a binding checks]."""
    return [self, *_checked(_tensor_params(report), args, kwargs)]


def _checked(params: _Params | None, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    """The arguments torch's parser would find overloaded, among ``args`` and ``kwargs``.

    Too many or too few arguments fit no signature (torch's TypeError comes first): none.
    """
    if params is None:
        return [*args, *kwargs.values()]
    if (params.most is not None and len(args) > params.most) or len(args) + len(kwargs) < params.least:
        return []
    relevant = [_at(a, i in params.positions, i in params.list_positions) for i, a in enumerate(args)]
    for k, v in kwargs.items():
        relevant.append(_at(v, k in params.names, k in params.list_names))
    return [] if any(r is _MISFIT for r in relevant) else relevant


_MISFIT: Any = object()
_numel = vars(Tensor)["numel"]  # the raw method: no torch function of its own


def _at(value: Any, tensor: bool, tensor_list: bool) -> Any:
    """``value`` as the parser checks it at a parameter that takes a Tensor, a list of them, or neither."""
    if value.__class__ is list or value.__class__ is tuple:
        return value  # its items with torch function, a list of sizes' too (x.view([2, duck]))
    if tensor or not isinstance(value, Tensor):
        return value  # an object with torch function that no other parameter type takes is overloaded
    # a Tensor where a number or a size goes: read as one, or, with more than one element, no fit
    return None if _numel(value) == 1 else _MISFIT


def _as_torch_passes(signature: Any, self: Any, args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict]:
    """The arguments of a torch/_tensor.py method as it hands them to ``handle_torch_function``."""
    positional, keywords = signature
    try:
        bound = _signature_of(signature).bind(*args, **kwargs)
    except TypeError:
        return (self, *args), kwargs  # the method's own error follows, when the handler calls it
    bound.apply_defaults()
    values = bound.arguments
    return (self, *[values[n] for n in positional]), {n: values[n] for n in keywords}


_SIGNATURES: dict[Any, Any] = {}


def _signature_of(spec: tuple[tuple[str, ...], dict[str, Any]]) -> Any:
    import inspect

    key = (spec[0], tuple(spec[1]))
    sig = _SIGNATURES.get(key)
    if sig is None:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter(n, kind) for n in spec[0]]
        params += [inspect.Parameter(n, kind, default=d) for n, d in spec[1].items()]
        sig = _SIGNATURES[key] = inspect.Signature(params)
    return sig


def _property_wrapper(name: str, raw: property) -> property:
    """The public version of Tensor property ``name``: its getter, setter and deleter check first.

    ``func`` is ``Tensor.<name>.__get__`` (``__set__``, ``__delete__``) of this property, as in
    torch; only ``self`` is checked (``t.grad = sub`` is not routed), a plain one counting.
    """
    getter, setter, deleter = raw.fget, raw.fset, raw.fdel

    def get(self: Any) -> Any:
        if self.__class__ is Tensor and not _active_modes:
            return getter(self)  # type: ignore[misc]
        overloaded = _overloaded((self,), True)
        if not _mode_active() and all(type(a) is Tensor for a in overloaded):
            return getter(self)  # type: ignore[misc]
        return _dispatch(public.__get__, overloaded, (self,), None, False)

    def set_(self: Any, value: Any) -> None:
        if self.__class__ is not Tensor or _active_modes:
            overloaded = _overloaded((self,), True)
            if _mode_active() or not all(type(a) is Tensor for a in overloaded):
                _dispatch(public.__set__, overloaded, (self, value), None, False)
                return
        setter(self, value)  # type: ignore[misc]

    def delete(self: Any) -> None:
        if self.__class__ is not Tensor or _active_modes:
            overloaded = _overloaded((self,), True)
            if _mode_active() or not all(type(a) is Tensor for a in overloaded):
                _dispatch(public.__delete__, overloaded, (self,), None, False)
                return
        deleter(self)  # type: ignore[misc]

    get.__name__ = set_.__name__ = delete.__name__ = name
    public = property(get, set_ if setter is not None else None, delete if deleter is not None else None,
                      raw.__doc__)
    return public


# torch's C++ bindings report these operators as the named method (``x + y`` is ``Tensor.add``)
_REPORTED = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__itruediv__": "div_",
    "__div__": "div", "__idiv__": "div_",
    "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_", "__matmul__": "matmul",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__ne__": "ne",
    "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
}
_SAME_OBJECT = {"__neg__": "neg", "__abs__": "abs", "__rdiv__": "__rtruediv__",  # one object under two names in torch
                "__idiv__": "__itruediv__"}
# Methods whose torch binding counts a plain Tensor as overloaded (no-argument C++ methods and
# those written in Python, torch/_tensor.py), found by experiment on torch 2.13.
_PYTHON_LEVEL = frozenset((
    "H", "T", "__abs__", "__bool__", "__complex__", "__contains__", "__float__", "__floordiv__", "__format__",
    "__index__", "__int__", "__invert__", "__ipow__", "__len__", "__neg__", "__pow__", "__rdiv__", "__repr__",
    "__reversed__", "__rfloordiv__", "__rlshift__", "__rmatmul__", "__rmod__", "__rpow__", "__rrshift__", "__rsub__",
    "__rtruediv__", "_is_view",
    "_version", "abs", "abs_", "acos", "acos_", "acosh", "acosh_",
    "adjoint", "argwhere", "asin", "asin_", "asinh", "asinh_", "atan", "atan_", "atanh", "atanh_", "backward",
    "bitwise_not", "bitwise_not_", "ceil", "ceil_", "cos", "cos_", "cosh", "cosh_", "data", "detach", "detach_",
    "device", "dim", "dtype", "element_size", "erf", "erf_", "exp", "exp_", "expm1", "expm1_", "floor",
    "floor_", "frac", "frac_", "grad", "grad_dtype", "grad_fn", "is_complex", "is_cpu", "is_floating_point",
    "is_inference", "is_leaf", "is_meta", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "item", "log",
    "log10", "log10_", "log1p", "log1p_", "log2", "log2_", "log_", "logical_not", "logical_not_", "mH", "mT",
    "ndim", "neg", "neg_", "new_tensor", "norm", "numel", "reciprocal", "register_hook", "relu", "relu_",
    "requires_grad", "retain_grad", "retains_grad", "rsqrt", "rsqrt_", "sgn", "sgn_", "shape", "sigmoid",
    "sigmoid_", "sign", "sign_", "signbit", "sin", "sin_", "sinh", "sinh_", "split", "sqrt", "sqrt_", "square",
    "square_", "storage_offset", "t", "tan", "tan_", "tanh", "tanh_", "tolist", "trunc", "trunc_",
    "unflatten", "zero_"))
# Those of them written in Python (torch/_tensor.py): keyword arguments always a dict, and the
# error of torch/overrides.py's handle_torch_function ("no implementation found for ...")
_IN_PYTHON = frozenset(("__contains__", "__floordiv__", "__format__", "__ipow__", "__len__", "__pow__", "__rdiv__",
                        "__repr__", "__reversed__", "__rfloordiv__", "__rlshift__", "__rmatmul__", "__rmod__",
                        "__rpow__", "__rrshift__", "__rsub__", "__rtruediv__", "backward", "norm", "register_hook",
                        "split", "unflatten"))
# ...and how they pass their arguments on (positional names, keywords with their defaults); the
# others of them pass what they are given. torch/_tensor.py checks only ``self`` for these; so does
# new_tensor (its parser takes ``data`` as any object), and ``__eq__``, whose operand ``eq`` checks
# after it (``x == sub`` reaches ``sub``'s handler as ``Tensor.eq``, a mode as ``Tensor.__eq__``)
_PY_SIGNATURES: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "__repr__": ((), {"tensor_contents": None}),
    "__format__": (("format_spec",), {}),
    "__len__": ((), {}),
    "__contains__": (("element",), {}),
    "__reversed__": ((), {}),
    "split": (("split_size",), {"dim": 0}),
    "norm": ((), {"p": "fro", "dim": None, "keepdim": False, "dtype": None}),
    "unflatten": (("dim", "sizes"), {}),
    "backward": ((), {"gradient": None, "retain_graph": None, "create_graph": False, "inputs": None}),
    "register_hook": (("hook",), {}),
}
_SELF_ONLY = frozenset((*_PY_SIGNATURES, "new_tensor", "__eq__"))
_NOT_ROUTED = frozenset(("__annotations__", "__doc__", "__module__", "__slots__", "__weakref__", "__hash__",
                         "__torch_dispatch__", "__iter__", "__torch_function__", "__init_subclass__",
                         "_make_subclass", "_make_wrapper_subclass", "__dict__", "__class__", "as_subclass"))
_PRIVATE_ROUTED = frozenset(("_version", "_is_view"))  # torch routes them; the other _ names are internal


def _is_binary(name: str) -> bool:
    return name.startswith("__") and name not in ("__neg__", "__abs__", "__invert__", "__getitem__",
                                                  "__setitem__", "__len__", "__repr__", "__bool__",
                                                  "__float__", "__int__", "__index__", "__complex__",
                                                  "__format__", "__contains__", "__reversed__")


def _routed(name: str, value: Any) -> bool:
    return (name not in _NOT_ROUTED and (not name.startswith("_") or name.endswith("__") or name in _PRIVATE_ROUTED)
            and (callable(value) or isinstance(value, property)))


def _sync() -> None:
    """Give every Tensor method attached so far its public version (modules attach them at import).

    While the gate is on, the new public versions take their raw ones' places in ``Tensor.__dict__``.
    """
    table = vars(Tensor)
    new = []
    for name, value in list(table.items()):
        entry = _PUBLIC.get(name)
        if not _routed(name, value) or (entry is not None and (value is entry[0] or value is entry[1])):
            continue
        if isinstance(value, property):
            _PUBLIC[name] = (value, _property_wrapper(name, value))
        elif name in _SAME_OBJECT.values():
            continue  # made with its operator below
        else:
            report = _REPORTED.get(name, name)
            _PUBLIC[name] = (value, _method_wrapper(name, value, report, name in _PYTHON_LEVEL, name in _IN_PYTHON,
                                                   _is_binary(name)))
            if name in _SAME_OBJECT:
                named = _SAME_OBJECT[name]
                _PUBLIC[named] = (table[named], _PUBLIC[name][1])
                _FUNC_NAMES[_PUBLIC[name][1]] = f"torch.Tensor.{named}"
                new.append(named)
        new.append(name)
    if _swapped:
        for name in new:
            type.__setattr__(Tensor, name, _PUBLIC[name][1])


# torch's ``Tensor.<name>.__name__`` is ``<name>``, but for the aliases below (``__idiv__`` is
# ``__itruediv__``, ``__pow__`` is ``pow``), and a torch-function handler may test
# ``func.__name__``. Methods that shared factories made (``method``, ``<lambda>``) take their
# attribute's name here; an object kept under two unrelated names (``__rand__`` is ``__and__``)
# keeps its own.
_TORCH_ALIASES = {"__itruediv__": "__idiv__", "__rtruediv__": "__rdiv__", "__pow__": "pow", "__ipow__": "pow_",
                  "__neg__": "neg", "__abs__": "abs", "__pos__": "positive"}


def _name_methods() -> None:
    functions = [(name, fn) for name, fn in vars(Tensor).items() if isinstance(fn, FunctionType)]
    holders: dict[int, int] = {}
    for _, fn in functions:
        holders[id(fn)] = holders.get(id(fn), 0) + 1
    for name, fn in functions:
        wanted = _TORCH_ALIASES.get(name, name)
        if fn.__name__ != wanted and (holders[id(fn)] == 1 or name in _TORCH_ALIASES):
            fn.__name__, fn.__qualname__ = wanted, f"Tensor.{wanted}"


def register_tensor_methods() -> None:
    """Build ``_PUBLIC`` once Tensor's methods are attached (``_tensor_methods.py``), each named as torch's."""
    _name_methods()
    _sync()
    _tensor_module._subclass_hook = _on_subclass


def _on_subclass(cls: type) -> None:
    """``Tensor.__init_subclass__``: a class with torch function gets the checking methods, and turns the gate on.

    One with it disabled (``nn.Parameter``, a ``__torch_dispatch__`` class) joins ``_INERT``.
    """
    global _subclass_seen
    from .subclass import has_torch_dispatch

    default = type.__getattribute__(Tensor, "__dict__")["__torch_function__"].__func__
    if has_torch_dispatch(cls) and getattr(getattr(cls, "__torch_function__", None), "__func__", None) is default:
        # THPVariableMetaType_init: a __torch_dispatch__ class keeps no default torch function
        type.__setattr__(cls, "__torch_function__", _disabled_torch_function_impl)
    if not _enabled_for(cls):
        _INERT.add(cls)
        return
    with _lock:
        _sync()
        for name, (raw, public) in _PUBLIC.items():
            if type.__getattribute__(cls, "__dict__").get(name) is None:
                current = _raw_lookup(cls, name)
                if current is raw or current is public:  # not overridden below Tensor
                    type.__setattr__(cls, name, public)
        if not _subclass_seen:
            _subclass_seen = True
            _set_gate()


def _raw_lookup(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        value = type.__getattribute__(klass, "__dict__").get(name)
        if value is not None:
            return value
    return None


def _swap(on: bool) -> None:
    """Tensor's own methods: the checking ones while the gate is on, else the raw ones."""
    for name, (raw, public) in _PUBLIC.items():
        type.__setattr__(Tensor, name, public if on else raw)


def get_overridable_functions() -> dict[Any, list[Any]]:
    """The public functions and methods that check for torch function, by namespace.

    Example:
        >>> import dispatchcore as dc
        >>> dc.Tensor.add in get_overridable_functions()[dc.Tensor]
        True
    """
    import dispatchcore

    _sync()
    methods = []
    for _, public in _PUBLIC.values():
        if public not in methods:
            methods.append(public)
    out: dict[Any, list[Any]] = {Tensor: methods}
    for func, name in _FUNC_NAMES.items():
        if not name.startswith("torch.Tensor."):
            out.setdefault(dispatchcore if name.count(".") == 1 else dispatchcore.nn.functional, []).append(func)
    return out


_tf_on = False  # See Note [Torch function costs nothing when unused]: route_binding's gate
_SKIPPED_BINDINGS = frozenset({"seed", "initial_seed", "get_rng_state", "set_rng_state"})  # Python-level in torch
_DATA_BINDINGS = frozenset({"tensor"})  # its parser takes the data as any object: only a mode sees the call


def check_binding(func: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """A ``torch.*`` C++ binding's check and call: the handlers' result, or ``_NOT_HANDLED``.

    The arguments checked are those at the operator's Tensor parameters, any object with torch
    function anywhere, and the items of list arguments (``torch.cat([a, b])``); See Note
    [Arguments a binding checks]. Plain Tensors do not count, keywords go on as given.
    """
    if not _active_modes and _inert_arguments(args, kwargs):  # the common case, decided at once
        return _NOT_HANDLED
    name = _BINDING_OPS.get(func) or _FUNC_NAMES.get(func, "").rpartition(".")[2]
    overloaded = [] if name in _DATA_BINDINGS else _overloaded(_checked(_tensor_params(name, False), args, kwargs))
    if not overloaded and not _mode_active():
        return _NOT_HANDLED
    return _dispatch(func, overloaded, args, kwargs or None, False)


def retry(func: Any, args: tuple, kwargs: dict[str, Any], error: BaseException) -> Any:
    """A call of a ``torch.*`` binding that raised while the gate was off: a duck type's, or ``error``.

    See Note [Torch function costs nothing when unused]: where the gate is off, an argument
    whose class defines ``__torch_function__`` is not a Tensor subclass, and the plain call
    fails on it before computing anything; only then are the arguments checked.
    """
    if not _tf_on:
        handled = check_binding(func, args, kwargs)
        if handled is not _NOT_HANDLED:
            return handled
    raise error


def route_binding(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A ``torch.<name>`` binding of ``dispatchcore.native`` behind the torch-function check.

    Its arguments, and the items of list arguments, are the relevant ones, as torch's C++
    argument parser finds them (``check_binding``); the handlers get the returned function as
    ``func``. Without a mode or a Tensor subclass with torch function, the check is one global
    test, and a duck-typed argument is found on the error path (``retry``).

    Example:
        >>> import dispatchcore as dc
        >>> class Names(TorchFunctionMode):
        ...     def __torch_function__(self, func, types, args=(), kwargs=None):
        ...         print(func.__name__)
        ...         return func(*args, **(kwargs or {}))
        >>> x = dc.ones(2, 2)
        >>> with Names():
        ...     _ = dc.flatten(x)
        flatten
    """
    if name in _SKIPPED_BINDINGS:
        return fn
    return register_function(_binding(fn, name), f"torch.{name}")


def _binding(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` behind a C++ binding's torch-function check (``route_binding``, ``nn_binding``)."""
    def binding(*args: Any, **kwargs: Any) -> Any:
        if _tf_on:
            handled = check_binding(binding, args, kwargs)
            if handled is not _NOT_HANDLED:
                return handled
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - re-raised by retry unless a duck type takes the call
            error = exc
        return retry(binding, args, kwargs, error)

    binding.__name__ = binding.__qualname__ = name
    binding.__doc__ = fn.__doc__
    binding.__wrapped__ = fn  # type: ignore[attr-defined]
    return binding


_BINDING_OPS: dict[Any, str] = {}  # a binding -> the aten operator whose parameters its check reads


def nn_binding(fn: Callable[..., Any], name: str, op: str | None = None) -> Callable[..., Any]:
    """``torch._C._nn.<name>``: a C++ binding that torch's Python-level ``nn.functional`` calls.

    As ``route_binding``, behind the check of ``aten::<op>``'s parameters (``op`` defaults to
    ``name``); ``resolve_name`` knows it not (None, as torch's), and the error of declining
    handlers names it ``torch.nn.<name>``, as torch's does. See Note [Calls inside nn.functional].
    """
    binding = _binding(fn, name)
    binding.__module__ = "dispatchcore.nn.functional._nn"
    _ERROR_NAMES[binding] = f"torch.nn.{name}"
    _BINDING_OPS[binding] = op or name
    return binding


# Note [Calls inside nn.functional]: a Python-level function of torch's nn.functional checks only the
# arguments it names (``has_torch_function_variadic(input, target, weight)``), then calls C++
# bindings (``torch._C._nn.elu(input, alpha)``, ``torch.kl_div``, ``input.softmax(dim)``) whose
# argument parser checks every argument: a duck type passed as ``alpha=`` reaches its handler with
# ``func`` the inner binding and its arguments. dispatchcore's functions call the aten operator
# directly and, where it raises, hand the call to the arguments the binding's parser would find
# (``inner_call``, ``inner_method``): a duck type never fits an operator's non-Tensor parameter, so
# the plain path costs nothing.
def inner_call(func: Any, args: tuple, kwargs: dict[str, Any], error: BaseException) -> Any:
    """The handlers' result for binding ``func`` called with these arguments, or ``error`` raised.

    See Note [Calls inside nn.functional].
    """
    handled = check_binding(func, args, kwargs)
    if handled is _NOT_HANDLED:
        raise error
    return handled


def inner_method(name: str, self: Any, args: tuple, kwargs: dict[str, Any], error: BaseException) -> Any:
    """As ``inner_call``, for Tensor method ``name`` of ``self`` (``input.softmax(dim)``)."""
    if not _active_modes and self.__class__ in _INERT and _inert_arguments(args, kwargs):
        raise error
    overloaded = _overloaded(_parsed_relevant(name, self, args, kwargs))
    if not overloaded and not _mode_active():
        raise error
    return _dispatch(_PUBLIC[name][1], overloaded, (self, *args), kwargs or None, False)


def register_function(func: Any, torch_name: str, relevant: tuple[str, ...] | None = None,
                      unpassed: tuple[str, ...] = (), checked: tuple[str, ...] | None = None) -> Any:
    """Record ``func`` as the public function torch calls ``torch_name`` (for errors and ``resolve_name``).

    ``relevant``: the parameters a Python-level function hands to ``handle_torch_function`` as
    the relevant ones; ``checked``: those its ``has_torch_function`` looks at, where they differ
    (torch's ``l1_loss`` checks ``input`` and ``target``, and hands ``weight`` on too);
    ``unpassed``: those it leaves out of the call its handlers get (``function_locals``).
    """
    _FUNC_NAMES[func] = torch_name
    if relevant is not None:
        _RELEVANT_PARAMS[func] = relevant
    if checked is not None:
        _CHECKED_PARAMS[func] = checked
    if unpassed:
        _UNPASSED[func] = unpassed
    return func


# --- guards and modes --------------------------------------------------------------------------
class _DisableGuard:
    _level = 0

    def __enter__(self) -> None:
        self._saved = _st.disabled
        _st.disabled = max(self._saved, self._level)

    def __exit__(self, *exc: Any) -> None:
        _st.disabled = self._saved


class DisableTorchFunctionSubclass(_DisableGuard):
    """Subclasses' ``__torch_function__`` off, modes still on (``torch._C.DisableTorchFunctionSubclass``).

    Example:
        >>> import dispatchcore as dc
        >>> class Sub(dc.Tensor):
        ...     pass
        >>> s = dc.ones(1).as_subclass(Sub)
        >>> with DisableTorchFunctionSubclass():
        ...     type(s + 1).__name__
        'Tensor'
    """

    _level = 1


class DisableTorchFunction(_DisableGuard):
    """Torch function off entirely, modes included (``torch._C.DisableTorchFunction``)."""

    _level = 2


def _is_torch_function_enabled() -> bool:
    """``torch._C._is_torch_function_enabled``: neither guard is active."""
    return _st.disabled == 0


def _is_torch_function_mode_enabled() -> bool:
    """A mode would see the next call."""
    return _mode_active()


class TorchFunctionMode:
    """Intercept every public call above the dispatcher (``torch.overrides.TorchFunctionMode``).

    Override ``__torch_function__(self, func, types, args=(), kwargs=None)`` and enter an
    instance with ``with``. ``func`` is the public function or method (``dc.add``,
    ``dc.Tensor.add``; ``x + y`` reports ``dc.Tensor.add``, as torch does). Inside it the mode is
    off this thread's stack: ``func(*args, **kwargs)`` reaches the next mode, then subclasses'
    ``__torch_function__``, then the dispatcher. Modes nest; the innermost sees a call first.

    Example:
        >>> import dispatchcore as dc
        >>> class Names(TorchFunctionMode):
        ...     def __torch_function__(self, func, types, args=(), kwargs=None):
        ...         print(resolve_name(func))
        ...         return func(*args, **(kwargs or {}))
        >>> with Names():
        ...     _ = dc.ones(2).sum()
        torch.ones
        torch.Tensor.sum
    """

    def __torch_function__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        """Handle one call; the default runs it unchanged."""
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> TorchFunctionMode:
        global _active_modes
        with _lock:
            _active_modes += 1
            if _active_modes == 1:
                _set_gate()
        _st.stack.append(self)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        global _active_modes
        if not _st.stack or _st.stack[-1] is not self:
            raise RuntimeError(f"Leaving {self!r}, but it is not the innermost torch function mode of this thread")
        _st.stack.pop()
        with _lock:
            _active_modes -= 1
            if _active_modes == 0:
                _set_gate()


def _get_current_function_mode() -> TorchFunctionMode | None:
    """The innermost active mode of this thread (``torch.overrides._get_current_function_mode``)."""
    return _st.stack[-1] if _st.stack else None


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    """This thread's modes, outermost first."""
    return list(_st.stack)


register_gate(sys.modules[__name__])  # route_binding reads this module's _tf_on
