"""Python dispatch modes: ``DispatchMode`` (``TorchDispatchMode``) and a ready ``LoggingMode``.

Mirrors ``torch/utils/_python_dispatch.py``, ``c10/core/impl/TorchDispatchModeTLS.cpp`` and
``aten/src/ATen/core/PythonFallbackKernel.cpp``:

* Entering a mode pushes it on this thread's mode stack; the first push adds ``Python`` and
  ``PythonTLSSnapshot`` to the thread-local include set, the last pop removes them again
  (``TorchDispatchModeTLS::push_non_infra_mode_onto_stack`` / ``pop_stack``).
* Every operator then reaches the ``Python`` key, which sits *below* Autograd, ADInplaceOrView and
  Autocast: a mode sees the operators that actually run (``softmax.int`` decomposes before it,
  backward formulas show up during ``backward()``), as in PyTorch.
* The ``Python`` key's backend fallback (``pythonFallback``) excludes every key above ``Python``
  (``after_Python_keyset`` in c10, which despite its name holds the keys *above* Python), takes
  the innermost mode off the stack and calls ``mode.__dispatch__(func, types, args, kwargs)``.
  Calling ``func(*args, **kwargs)`` in there dispatches afresh: to the next mode when one is left
  (``Python`` is still included), else below the ``Python`` key (the backend). Afterwards the
  mode goes back on the stack and the thread-local sets are restored, also when ``__dispatch__``
  raises.

The stack is per thread like the key sets in ``tls.py`` (``tls.per_thread.state.modes``): a new thread
starts with no mode and never sees another's modes.

Example:
    >>> import dispatchcore as dc
    >>> class Doubler(dc.DispatchMode):
    ...     def __dispatch__(self, func, types, args=(), kwargs=None):
    ...         out = func(*args, **(kwargs or {}))
    ...         return func(out, out) if str(func) == "aten.add.Tensor" else out
    >>> x = dc.ones(2)
    >>> with Doubler():
    ...     (x + x).tolist()
    [4.0, 4.0]
"""

from __future__ import annotations

import itertools
import sys
import weakref
from collections.abc import Callable
from typing import Any, TextIO

from ._library import Library
from .dtypes import WrappedNumber
from .dtypes import dtype as _dtype_type
from .keys import DispatchKey
from .keyset import FULL, full_after_bits, key_bits
from .tensor import Tensor as _Tensor
from .tls import keys_state
from .tls import per_thread as _pt

__all__ = [
    "DispatchMode",
    "LoggingMode",
    "current_dispatch_mode",
    "dispatch_mode_stack",
]

_PYTHON = key_bits(DispatchKey.Python)
# What the first mode adds to (and the last one removes from) the include set.
_MODE_KEYS = _PYTHON | key_bits(DispatchKey.PythonTLSSnapshot)
# c10's after_Python_keyset: FULL ^ (FULL_AFTER(Python) | Python). FULL_AFTER always keeps
# PythonDispatcher, so this is every functionality key strictly between Python and
# PythonDispatcher (Autograd*, ADInplaceOrView, Autocast*, PythonTLSSnapshot, ...), no backend bits.
ABOVE_PYTHON = FULL ^ (full_after_bits(DispatchKey.Python) | _PYTHON)
_BELOW_PYTHON = full_after_bits(DispatchKey.Python) & ~key_bits(DispatchKey.PythonDispatcher)
_KEEP_BELOW = FULL & ~ABOVE_PYTHON  # ``keep`` update for excluded |= ABOVE_PYTHON
_WITHOUT_MODE_KEYS = FULL & ~_MODE_KEYS

# The stack as a linked list of (innermost mode, rest of the stack) nodes, None when empty:
# the Python fallback pops and restores it without building a tuple.
_Stack = tuple[Any, Any] | None


def _modes_get() -> _Stack:
    return _pt.state.modes


def _modes_set(stack: _Stack) -> None:
    _pt.state.modes = stack


class DispatchMode:
    """Intercept every operator call below autograd (``torch.utils._python_dispatch.TorchDispatchMode``).

    Subclass it and override ``__dispatch__(self, func, types, args=(), kwargs=None)``; enter an
    instance with ``with``. ``func`` is the ``OperatorHandle`` being called (``str(func)`` is
    ``"aten.add.Tensor"``), ``types`` is ``()`` (dispatchcore has no tensor subclasses), ``args``
    a tuple and ``kwargs`` a dict. Whatever ``__dispatch__`` returns is the operator's result.
    Inside it the mode is off the stack: ``func(*args, **kwargs)`` runs the next mode, or the
    kernels below the ``Python`` key when none is left. A subclass written for PyTorch, which
    defines ``__torch_dispatch__`` instead, works unchanged.

    Modes nest: the innermost (most recently entered) sees a call first.

    Example:
        >>> import dispatchcore as dc
        >>> class Seen(dc.DispatchMode):
        ...     def __init__(self):
        ...         self.ops = []
        ...     def __dispatch__(self, func, types, args=(), kwargs=None):
        ...         self.ops.append(str(func))
        ...         return func(*args, **(kwargs or {}))
        >>> x = dc.ones(3)
        >>> with Seen() as seen:
        ...     _ = (x * 2).relu()
        >>> seen.ops
        ['aten.mul.Tensor', 'aten.relu.default']
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A TorchDispatchMode port: __torch_dispatch__ serves as __dispatch__.
        if "__torch_dispatch__" in cls.__dict__ and "__dispatch__" not in cls.__dict__:
            cls.__dispatch__ = cls.__dict__["__torch_dispatch__"]  # type: ignore[method-assign]

    def __dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                     kwargs: dict[str, Any] | None = None) -> Any:
        """Handle one operator call; the default forwards it unchanged."""
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> DispatchMode:
        _push_mode(self)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _pop_mode(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def _push_mode(mode: DispatchMode) -> None:
    stack = _modes_get()
    if stack is None:  # push_non_infra_mode_onto_stack: the first mode turns the Python keys on
        included, excluded, keep = _pt.state.keys
        if included & _MODE_KEYS != _MODE_KEYS:
            _pt.state.keys = (included | _MODE_KEYS, excluded, keep)
    _modes_set((mode, stack))


def _pop_mode(mode: DispatchMode) -> None:
    stack = _modes_get()
    if stack is None or stack[0] is not mode:
        modes = dispatch_mode_stack()
        where = "not active" if all(m is not mode for m in modes) else "not the innermost mode"
        raise RuntimeError(
            f"Leaving {mode!r}, but it is {where} in this thread (stack: {modes}). Modes "
            "must be left in the reverse order they were entered, in the thread that entered them.")
    rest = stack[1]
    _modes_set(rest)
    if rest is None:  # pop_stack: the last mode turns the Python keys off
        included, excluded, keep = _pt.state.keys
        if included & _MODE_KEYS:
            _pt.state.keys = keys_state(included & _WITHOUT_MODE_KEYS, excluded, keep)


def current_dispatch_mode() -> DispatchMode | None:
    """The innermost active mode of this thread (``_get_current_dispatch_mode``), or None."""
    stack = _modes_get()
    return None if stack is None else stack[0]


def dispatch_mode_stack() -> list[DispatchMode]:
    """This thread's active modes, outermost first (``_get_current_dispatch_mode_stack``)."""
    modes = []
    stack = _modes_get()
    while stack is not None:
        modes.append(stack[0])
        stack = stack[1]
    modes.reverse()
    return modes


# --- the Python key's backend fallback ----------------------------------------------------------
def bind_python_fallback(op: Any) -> Callable[..., Any]:
    """The ``Python`` fallback bound to ``op``, taking the raw key-set int first.

    Registered below as the backend fallback of the ``Python`` key; bound per
    operator so a call costs one Python frame here plus the mode's own ``__dispatch__``.
    """
    boxed: list[Any] = []  # [the op's argument-dropping function, or None]: made on the first handled call

    def python_fallback(bits: int, *args: Any, **kwargs: Any) -> Any:
        st = _pt.state
        state = st.keys
        included, excluded, keep = state
        stack = st.modes
        overloaded = _NONE  # See Note [Python key: modes, then subclasses]
        for a in args:
            if a.__class__ is not _Tensor and a.__class__ not in _NOT_TENSORS:
                overloaded = _overloaded(args, kwargs)
                break
        else:
            if kwargs:
                overloaded = _overloaded(args, kwargs)
        if stack is None and not overloaded:
            # No mode, no subclass (the key was included by hand): redispatch below the Python
            # key. c10 also edits the TLS for that redispatch; dispatchcore leaves it alone, so a
            # kernel below that calls another operator passes through here again, same result.
            return op.redispatch(bits & _BELOW_PYTHON, *args, **kwargs)
        if not boxed:
            boxed.append(_default_dropper(op))
        if boxed[0] is not None:  # See Note [Defaults a handler does not see]
            args, kwargs = boxed[0](args, kwargs)
        for a in args:  # See Note [Numbers for a mode]
            if getattr(a, "_meta", None).__class__ is WrappedNumber:
                args = tuple([_as_python(a) for a in args])
                break
        if kwargs:
            for a in kwargs.values():
                if getattr(a, "_meta", None).__class__ is WrappedNumber:
                    kwargs = {k: _as_python(v) for k, v in kwargs.items()}
                    break
        types = tuple([type(a) for a in overloaded]) if overloaded else ()
        mode = None
        if stack is not None:
            # ExcludeDispatchKeyGuard(after_Python_keyset), then StashTorchDispatchModeGuard:
            # the mode is off the stack (and, if it was the last, the Python keys off) inside
            mode, rest = stack
            st.modes = rest
            st.keys = (included if rest is not None else included & _WITHOUT_MODE_KEYS,
                       excluded | ABOVE_PYTHON, keep & _KEEP_BELOW)
            try:
                rules = _subclass().TORCH_DISPATCH_RULES
                rule = rules[op.qualname].get(type(mode)) if rules and op.qualname in rules else None
                if rule is not None:  # See Note [torch_dispatch rules] (subclass.py)
                    ret = rule(mode, op, types, args, kwargs)
                else:
                    ret = mode.__dispatch__(op, types, args, kwargs)
            finally:
                st.keys = state
                st.modes = stack
            if ret is not NotImplemented:
                return ret
            if not overloaded:
                raise _subclass().multiple_dispatch_failed(op, [], mode)
        # the subclasses' turn, the mode stack as it was: their handlers run with only the keys
        # above Python excluded (dispatch_on_subclass, after the mode's stash guard is gone)
        st.keys = (included, excluded | ABOVE_PYTHON, keep & _KEEP_BELOW)
        try:
            return _subclass().dispatch_to_subclasses(op, overloaded, types, args, kwargs, mode)
        finally:
            st.keys = state

    python_fallback.__qualname__ = f"python_fallback[{op.qualname}]"
    return python_fallback


# Note [Python key: modes, then subclasses]: pythonFallback (PythonFallbackKernel.cpp) hands the
# call to handle_torch_function_no_python_arg_parser with the "overloaded" arguments: the tensors
# whose key set holds Python, i.e. instances of a class with __torch_dispatch__ (items of list
# arguments too), one per class, subclasses before their superclasses. The innermost mode goes
# first, with ``types`` = their classes; if it returns NotImplemented (or there is no mode), each
# overloaded argument's ``__torch_dispatch__`` in turn, until one returns something else; all
# NotImplemented is torch's TypeError (dispatchcore/subclass.py). Plain tensors never carry the
# Python key: the fallback skips them (and numbers) with one class test per argument, and only
# then collects the overloaded arguments.


# Note [Numbers for a mode]: torch boxes an operator's arguments for Python with toPyObject,
# which hands a wrapped number (Note [Wrapped numbers], dispatchcore/_composites.py) over as the
# Python number it was: under a mode, ``x * 2`` is ``aten.mul.Tensor`` with args ``(x, 2)``, and
# ``x * True``, ``x / 2.5``, ``x + 1j`` give a bool, a float, a complex. Re-calling
# ``func(*args)`` wraps the number again (Note [Numbers for Tensors], dispatchcore/operator.py).
# Arguments and keyword values are looked at, not the items of lists: no built-in kernel puts a
# wrapped number in a list.
# Note [Defaults a handler does not see]: torch boxes a call for Python (parseIValuesToPyArgsKwargs)
# from the full argument stack, whatever the caller wrote: trailing positional arguments equal to
# their defaults are left out, and so are keyword-only ones equal to theirs. ``x.sum(0)`` reaches a
# mode as ``sum.dim_IntList(x, [0])``, ``x.to(dtype)`` as ``_to_copy(x, dtype=...)``. dispatchcore's
# methods pass some defaults explicitly; the Python fallback drops them as torch does, so handlers
# (and make_fx graphs) see torch's arguments. Equal means the same value of the same kind, as
# IValue equality: ``False`` is not ``0``, a list equals a tuple of the same items.
_Call = tuple[tuple[Any, ...], dict[str, Any]]  # (args, kwargs)


def _default_dropper(op: Any) -> Callable[[tuple[Any, ...], dict[str, Any]], _Call] | None:
    """``(args, kwargs) -> (args, kwargs)`` without the defaults torch leaves out; None when ``op`` has none."""
    schema = op.schema
    if schema is None:
        return None
    positional = [a.default if a.has_default else _NO_DEFAULT for a in schema.arguments if not a.kwarg_only]
    keyword = {a.name: a.default for a in schema.arguments if a.kwarg_only and a.has_default}
    if not keyword and all(d is _NO_DEFAULT for d in positional):
        return None

    def drop_defaults(args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Call:
        n = len(args)
        while n and n <= len(positional) and _is_default(args[n - 1], positional[n - 1]):
            n -= 1
        if n != len(args):
            args = args[:n]
        if kwargs and any(k in keyword and _is_default(v, keyword[k]) for k, v in kwargs.items()):
            kwargs = {k: v for k, v in kwargs.items() if k not in keyword or not _is_default(v, keyword[k])}
        return args, kwargs

    return drop_defaults


_NO_DEFAULT: Any = object()
# ScalarType's values of the dtypes dispatchcore has (c10/core/ScalarType.h)
_SCALAR_TYPES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6,
                 "float64": 7, "complex64": 9, "complex128": 10, "bool": 11}


def _is_default(value: Any, default: Any) -> bool:
    """Whether ``value`` equals a schema ``default`` as IValues compare (bools are not ints)."""
    if default is _NO_DEFAULT:
        return False
    if default is None or value is None:
        return value is default
    if isinstance(default, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(default)
                and all(_is_default(v, d) for v, d in zip(value, default)))
    if isinstance(value, (bool, int, float, complex)) and isinstance(default, (bool, int, float, complex)):
        return (type(value) is bool) == (type(default) is bool) and value == default
    if hasattr(value, "_key_bits"):  # a tensor is never a default
        return False
    if type(default) is int:  # a ScalarType, Layout or MemoryFormat default is stored as its enum's int
        if isinstance(value, _dtype_type):
            return _SCALAR_TYPES.get(value.name) == default
        return getattr(value, "value", None) == default
    return bool(value == default)


def _as_python(value: Any) -> Any:
    """``value``, or the number a wrapped number stands for."""
    meta = getattr(value, "_meta", None)
    return meta.value if meta.__class__ is WrappedNumber else value


_NONE: list[Any] = []  # no overloaded arguments (shared, never mutated)
# argument classes that are never overloaded, skipped without a look at their key set
_NOT_TENSORS = frozenset({int, float, bool, complex, str, type(None), WrappedNumber})
_subclass_module: list[Any] = []


def _subclass() -> Any:
    """``dispatchcore.subclass``, imported on first use (it imports tensor.py, which loads after this)."""
    if not _subclass_module:
        from . import subclass

        _subclass_module.append(subclass)
    return _subclass_module[0]


def _overloaded(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    return _subclass().overloaded_args(args, kwargs)


def disable_current_modes() -> _DisableModes:
    """Take every mode off this thread's stack for a while (``_python_dispatch._disable_current_modes``).

    Example:
        >>> import dispatchcore as dc
        >>> with dc.LoggingMode() as log, disable_current_modes():
        ...     _ = dc.ones(1) + 1
        >>> log.ops
        []
    """
    return _DisableModes()


class _DisableModes:
    __slots__ = ("saved",)

    def __enter__(self) -> None:
        st = _pt.state
        self.saved = (st.modes, st.keys)
        if st.modes is not None:
            included, excluded, keep = st.keys
            st.modes = None
            st.keys = keys_state(included & _WITHOUT_MODE_KEYS, excluded, keep)

    def __exit__(self, *exc: Any) -> None:
        st = _pt.state
        st.modes, st.keys = self.saved


def python_fallback(ks: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
    """The boxed form of the ``Python`` fallback: ``fallback(keyset, op, *args, **kwargs)``."""
    return bind_python_fallback(op)(int(ks), *args, **kwargs)



# The Python key's backend fallback, registered by the module that owns the key, through the
# same Library API a backend uses (torch: TORCH_LIBRARY_IMPL(_, Python, m) in
# PythonFallbackKernel.cpp). Held for the life of the process.
_PYTHON_KEY = Library("_", "IMPL")
_PYTHON_KEY.fallback(python_fallback, "Python", with_keyset=True, _bind=bind_python_fallback)

# --- LoggingMode --------------------------------------------------------------------------------
# torch.utils._dtype_abbrs.dtype_abbrs, for the dtypes dispatchcore has
DTYPE_ABBRS = {"bool": "b8", "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32",
               "int64": "i64", "float16": "f16", "float32": "f32", "float64": "f64",
               "complex64": "c64", "complex128": "c128"}


class LogRecord:
    """One operator call seen by ``LoggingMode``: the handle, its arguments and its result."""

    __slots__ = ("func", "args", "kwargs", "result", "line")

    def __init__(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
                 line: str) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.result = result
        self.line = line

    @property
    def name(self) -> str:
        """``"aten.add.Tensor"``: the operator as the log line names it."""
        return str(self.func)

    def __repr__(self) -> str:
        return f"<LogRecord {self.line}>"


class LoggingMode(DispatchMode):
    r"""Log every operator that runs, like ``LoggingTensorMode`` with ``capture_logs(is_mode=True)``.

    Each call becomes one line in ``lines``, in PyTorch's format: tensors are numbered ``$0, $1``
    in the order the mode first sees them, and results carry dtype and shape::

        $2: f32[2, 4] = aten.mm.default($0, $1)

    (PyTorch prints the handle as ``torch._ops.aten.mm.default``.) ``records`` keeps the
    structured calls (``func``, ``args``, ``kwargs``, ``result``), and so keeps their tensors
    alive: a leaf's first gradient, which autograd takes over when nothing else holds it, is then
    copied (``clone``) where torch's LoggingTensorMode, which keeps only text, shows a ``detach``.
    ``print_ops=True`` (or ``file=``) also prints each line as it happens. Backward formulas run through the
    dispatcher, so ``loss.backward()`` inside the mode logs the backward operators too.

    Example:
        >>> import dispatchcore as dc
        >>> x, w = dc.ones(2, 3), dc.ones(3, 4)
        >>> with dc.LoggingMode() as log:
        ...     _ = (x @ w).relu()
        >>> print("\n".join(log.lines))
        $2: f32[2, 4] = aten.mm.default($0, $1)
        $3: f32[2, 4] = aten.relu.default($2)
    """

    def __init__(self, *, print_ops: bool = False, file: TextIO | None = None) -> None:
        self.records: list[LogRecord] = []
        self._file = file if file is not None else (sys.stdout if print_ops else None)
        # id(tensor) -> (weak reference, number); by identity, as torch's WeakTensorKeyDictionary
        self._ids: dict[int, tuple[weakref.ref[Any], int]] = {}
        self._next_id = itertools.count()

    @property
    def lines(self) -> list[str]:
        """The log, one formatted line per operator call."""
        return [r.line for r in self.records]

    @property
    def ops(self) -> list[str]:
        """The operator names in call order (``"aten.mm.default"``)."""
        return [str(r.func) for r in self.records]

    def __dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                     kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        self.log(func, args, kwargs, result)
        return result

    def log(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> LogRecord:
        """Record (and maybe print) one call; the formatting of ``LoggingTensorHandler.emit``."""
        fmt_args = ", ".join(itertools.chain(
            (str(self._tree(a, False)) for a in args),
            (f"{k}={self._tree(v, False)}" for k, v in kwargs.items()),
        ))
        line = f"{self._tree(result, True)} = {func}({fmt_args})"
        record = LogRecord(func, args, kwargs, result, line)
        self.records.append(record)
        if self._file is not None:
            print(line, file=self._file)
        return record

    def _tree(self, value: Any, with_type: bool) -> Any:
        # torch's tree_map(self._fmt, ...): containers keep their shape, leaves become strings
        if type(value) in (list, tuple):
            return type(value)(self._tree(v, with_type) for v in value)
        if isinstance(value, dict):
            return {k: self._tree(v, with_type) for k, v in value.items()}
        return self._fmt(value, with_type)

    def _fmt(self, value: Any, with_type: bool) -> str:
        if not _is_tensor(value):
            return repr(value)
        entry = self._ids.get(id(value))
        if entry is not None and entry[0]() is value:
            ident = entry[1]
        else:
            key, ids = id(value), self._ids
            ident = next(self._next_id)

            def forget(_: weakref.ref[Any], key: int = key) -> None:
                ids.pop(key, None)

            ids[key] = (weakref.ref(value, forget), ident)
        if not with_type:
            return f"${ident}"
        abbr = DTYPE_ABBRS.get(value.dtype.name, value.dtype.name)
        return f"${ident}: {abbr}[{', '.join(map(str, value.shape))}]"

    def __repr__(self) -> str:
        return f"<LoggingMode: {len(self.records)} calls>"


_tensor_class: list[type] = []


def _is_tensor(value: Any) -> bool:
    if not _tensor_class:  # imported late: this module loads while the dispatcher starts up
        from .tensor import Tensor

        _tensor_class.append(Tensor)
    return isinstance(value, _tensor_class[0])
