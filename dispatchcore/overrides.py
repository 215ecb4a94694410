"""``__torch_function__`` and ``TorchFunctionMode``: the Python-API layer above the dispatcher.

Mirrors ``torch/overrides.py``, ``torch/_tensor.py`` (``Tensor.__torch_function__``, ``_convert``)
and ``torch/csrc/utils/python_arg_parser.cpp`` (``handle_torch_function``): a public call
(``dc.add``, ``Tensor.add``, ``x + y``, ``F.relu``) whose arguments include an object with
``__torch_function__``, or that runs while a ``TorchFunctionMode`` is active, is handed to the
innermost mode (off its stack while it runs), then to each overloaded argument's handler,
subclasses before superclasses; all NotImplemented is torch's TypeError. Nothing here runs for
plain tensors when no mode is active: see Note [Torch function costs nothing when unused].

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
from typing import Any

from .subclass import append_overloaded
from .tensor import Tensor, _disabled_torch_function_impl

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
# Python check per call would cost ~50-100 ns, so dispatchcore keeps plain tensors untouched:
# 1. Tensor methods and operators: ``Tensor.__dict__`` holds the raw, unchecked methods, which
#    is what ``x.add(y)`` finds. The checking versions (``_PUBLIC``) are what ``dc.Tensor.add``
#    returns (``_TensorType.__getattribute__`` in tensor.py maps one to the other), so ``func``
#    compares equal to ``dc.Tensor.add`` as in torch. A class with torch function gets the
#    checking versions in its own ``__dict__`` (``_on_subclass``); while a mode is active in
#    any thread, ``Tensor.__dict__`` holds them too (``_swap``), and the raw ones return after.
# 2. Python picks ``b.__radd__`` before ``a.__add__`` when ``type(b)`` subclasses ``type(a)`` and
#    its ``__radd__`` differs: since ``Sub.__radd__`` and ``Tensor.__radd__`` are the same public
#    object, Python calls ``x.__add__(sub)`` first, as with torch; the raw binary methods send a
#    Tensor operand of another class to ``tensor_operand`` (their slow path), which checks here.
# 3. ``dc.*`` and ``F.*`` functions test a module global ``_tf_on`` first (one load and a
#    branch), True only while a mode is active anywhere or once a class with torch function
#    exists (``_set_gate``); a non-Tensor operand reaches their argument-error path, which checks.

_PUBLIC: dict[str, tuple[Any, Any]] = _tensor_module._PUBLIC  # name -> (raw, public)
_FUNC_NAMES: dict[Any, str] = {}  # public callable -> torch's qualified name, for errors
_ERROR_NAMES: dict[Any, str] = {}  # where torch's error spells it otherwise (``torch._tensor.__len__``)
_GATED: list[Any] = []  # modules whose ``_tf_on`` follows _set_gate
_lock = threading.Lock()
_active_modes = 0  # modes entered and not left, over all threads
_subclass_seen = False  # a Tensor subclass with torch function was defined


class _State(threading.local):
    """This thread's mode stack (innermost last) and disabled level (0, 1 subclasses, 2 all)."""

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.disabled = 0


_st = _State()


def _set_gate() -> None:
    on = _active_modes > 0 or _subclass_seen
    for module in _GATED:
        module._tf_on = on


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


def _overloaded(relevant: Iterable[Any], include_plain: bool = False) -> list[Any]:
    """``_get_overloaded_args``: one argument per class with torch function, subclasses first.

    C++ bindings skip plain Tensors; Python-level functions (``include_plain``) count them.
    Items of list and tuple arguments count (``torch.cat([a, b])``).
    """
    found: list[Any] = []
    if _st.disabled:
        return found
    for arg in relevant:
        if arg.__class__ is list or arg.__class__ is tuple:
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
    return _mode_active() or bool(_overloaded(relevant_args))


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
    if getattr(func, "__name__", None) == "__get__":  # a property's getter
        for key, (_, public) in _PUBLIC.items():
            if public is getattr(func, "__self__", None):
                return f"torch.Tensor.{key}.__get__"
    _sync()  # a raw method, or one attached since the last _sync
    for raw, public in _PUBLIC.values():
        if raw is func or public is func:
            return _FUNC_NAMES.get(public)
    return None


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
    name = _ERROR_NAMES.get(func) or resolve_name(func) or f"{func.__module__}.{func.__name__}"
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


def dispatch_c(func: Any, relevant: Iterable[Any], args: tuple, kwargs: dict[str, Any]) -> Any:
    """A torch C++ binding's check and call: ``None`` kwargs when none, plain Tensors not overloaded."""
    return _dispatch(func, _overloaded(relevant), args, kwargs or None, False)


_NOT_HANDLED: Any = object()


def function_locals(func: Any, local_vars: dict[str, Any], c_level: bool = False) -> Any:
    """An ``F.*`` function's check, from its parameters: ``_NOT_HANDLED`` when none applies.

    As torch's ``nn/functional.py`` does, the parameters without a default are passed
    positionally and the others by keyword; every tensor-like parameter is relevant.
    """
    relevant = [v for v in local_vars.values() if isinstance(v, Tensor) or is_tensor_like(v)]
    if not has_torch_function(relevant):
        return _NOT_HANDLED
    positional, keywords = _split_params(func, local_vars)
    if c_level:  # a C++ binding passes on the keywords given, as far as a default tells them apart
        defaults = _DEFAULTS[func]
        keywords = {k: v for k, v in keywords.items() if not _same(v, defaults[k])}
        return dispatch_c(func, relevant, positional, keywords)
    return _dispatch(func, _overloaded(relevant, True), positional, keywords, True)


_PARAMS: dict[Any, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_DEFAULTS: dict[Any, dict[str, Any]] = {}


def _same(value: Any, default: Any) -> bool:
    return value is default or (type(value) is type(default) and value == default)


def _split_params(func: Any, local_vars: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    split = _PARAMS.get(func)
    if split is None:
        import inspect

        params = inspect.signature(func).parameters.values()
        split = _PARAMS[func] = (tuple(p.name for p in params if p.default is p.empty),
                                 tuple(p.name for p in params if p.default is not p.empty))
        _DEFAULTS[func] = {p.name: p.default for p in params}
    return tuple(local_vars[n] for n in split[0]), {n: local_vars[n] for n in split[1]}


# --- Tensor methods ---------------------------------------------------------------------------
def tensor_operand(func_name: str, self: Any, other: Any, operator: bool = False) -> Any:
    """A raw binary method met a Tensor of another class: its torch function, or ``_NOT_HANDLED``.

    An operator returns NotImplemented when every handler declines (torch's
    ``TypeError_to_NotImplemented_``), so Python tries the reflected one.
    """
    overloaded = _overloaded((self, other))
    if not overloaded and not _mode_active():
        return _NOT_HANDLED
    try:
        return _dispatch(_PUBLIC[func_name][1], overloaded, (self, other), None, False)
    except TypeError:
        if operator:  # torch's TypeError_to_NotImplemented_
            return NotImplemented
        raise


def _method_wrapper(name: str, raw: Any, report: str, python_level: bool, in_python: bool, binary: bool) -> Any:
    """The public version of Tensor method ``name``, which checks for torch function first."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        relevant = (self, *args, *kwargs.values()) if kwargs else (self, *args)
        overloaded = _overloaded(relevant, python_level)
        # a Python-level binding counts plain Tensors, but only a mode or another class enters
        if not _mode_active() and all(type(a) is Tensor for a in overloaded):
            return raw(self, *args, **kwargs)
        func = _PUBLIC[report][1]
        try:
            return _dispatch(func, overloaded, (self, *args), kwargs if in_python else (kwargs or None),
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


def _property_wrapper(name: str, raw: property) -> property:
    getter = raw.fget

    def get(self: Any) -> Any:
        overloaded = _overloaded((self,), True)
        if not _mode_active() and all(type(a) is Tensor for a in overloaded):
            return getter(self)  # type: ignore[misc]
        return _dispatch(_PUBLIC[name][1].__get__, overloaded, (self,), None, False)

    get.__name__ = name
    return property(get, raw.fset, raw.fdel, raw.__doc__)


# torch's C++ bindings report these operators as the named method (``x + y`` is ``Tensor.add``)
_REPORTED = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_", "__matmul__": "matmul",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__ne__": "ne",
    "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
}
_SAME_OBJECT = {"__neg__": "neg", "__abs__": "abs"}  # one object under two names in torch
# Methods whose torch binding counts a plain Tensor as overloaded (no-argument C++ methods and
# those written in Python, torch/_tensor.py), found by experiment on torch 2.13.
_PYTHON_LEVEL = frozenset((
    "H", "T", "__abs__", "__bool__", "__float__", "__floordiv__", "__index__", "__int__", "__invert__",
    "__ipow__", "__len__", "__neg__", "__pow__", "__repr__", "__rfloordiv__", "__rlshift__", "__rmod__",
    "__rpow__", "__rrshift__", "__rsub__", "__rtruediv__", "abs", "abs_", "acos", "acos_", "acosh", "acosh_",
    "adjoint", "argwhere", "asin", "asin_", "asinh", "asinh_", "atan", "atan_", "atanh", "atanh_", "backward",
    "bitwise_not", "bitwise_not_", "ceil", "ceil_", "cos", "cos_", "cosh", "cosh_", "detach", "detach_",
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
_IN_PYTHON = frozenset(("__floordiv__", "__ipow__", "__len__", "__pow__", "__repr__", "__rfloordiv__",
                        "__rlshift__", "__rmod__", "__rpow__", "__rrshift__", "__rsub__", "__rtruediv__",
                        "backward", "norm", "register_hook", "split", "unflatten"))
_NOT_ROUTED = frozenset(("__annotations__", "__doc__", "__module__", "__slots__", "__weakref__", "__hash__",
                         "__torch_dispatch__", "__iter__", "__torch_function__", "__init_subclass__",
                         "_make_subclass", "_make_wrapper_subclass", "__dict__", "__class__"))


def _is_binary(name: str) -> bool:
    return name.startswith("__") and name not in ("__neg__", "__abs__", "__invert__", "__getitem__",
                                                  "__setitem__", "__len__", "__repr__", "__bool__",
                                                  "__float__", "__int__", "__index__")


def _routed(name: str, value: Any) -> bool:
    return (name not in _NOT_ROUTED and (not name.startswith("_") or name.endswith("__"))
            and (callable(value) or isinstance(value, property)))


def _sync() -> None:
    """Give every Tensor method attached so far its public version (modules attach them at import)."""
    table = vars(Tensor)
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


def register_tensor_methods() -> None:
    """Build ``_PUBLIC`` once Tensor's methods are attached (``_tensor_methods.py``)."""
    _sync()
    _tensor_module._subclass_hook = _on_subclass


def _on_subclass(cls: type) -> None:
    """``Tensor.__init_subclass__``: a class with torch function gets the checking methods."""
    global _subclass_seen
    from .subclass import has_torch_dispatch

    default = type.__getattribute__(Tensor, "__dict__")["__torch_function__"].__func__
    if has_torch_dispatch(cls) and getattr(getattr(cls, "__torch_function__", None), "__func__", None) is default:
        # THPVariableMetaType_init: a __torch_dispatch__ class keeps no default torch function
        type.__setattr__(cls, "__torch_function__", _disabled_torch_function_impl)
    if not _enabled_for(cls):
        return
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
    """Tensor's own methods: the checking ones while a mode is active anywhere, else the raw ones."""
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


def route_binding(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A ``torch.<name>`` binding of ``dispatchcore.native`` behind the torch-function check.

    Its arguments, and the items of list arguments, are the relevant ones, as torch's C++
    argument parser finds them; the handlers get the returned function as ``func``. Without a
    mode or a class with torch function, the check is one global test.

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

    def binding(*args: Any, **kwargs: Any) -> Any:
        if _tf_on:
            relevant = (*args, *kwargs.values())
            if has_torch_function(relevant):
                return dispatch_c(binding, relevant, args, kwargs)
        return fn(*args, **kwargs)

    binding.__name__ = binding.__qualname__ = name
    binding.__doc__ = fn.__doc__
    binding.__wrapped__ = fn  # type: ignore[attr-defined]
    return register_function(binding, f"torch.{name}")


def register_function(func: Any, torch_name: str) -> Any:
    """Record ``func`` as the public function torch calls ``torch_name`` (for errors and ``resolve_name``)."""
    _FUNC_NAMES[func] = torch_name
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
                _sync()
                _swap(True)
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
                _swap(False)
                _set_gate()


def _get_current_function_mode() -> TorchFunctionMode | None:
    """The innermost active mode of this thread (``torch.overrides._get_current_function_mode``)."""
    return _st.stack[-1] if _st.stack else None


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    """This thread's modes, outermost first."""
    return list(_st.stack)


register_gate(sys.modules[__name__])  # route_binding reads this module's _tf_on
