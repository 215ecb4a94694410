"""Grad mode and inference mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Mirrors ``torch/autograd/grad_mode.py`` over ``c10/core/GradMode.h`` and ``InferenceMode.h``.
Grad mode is a thread-local flag that changes no dispatch key (c10/core/GradMode.h): Autograd kernels
still run and simply record nothing. Inference mode is different: it also edits the dispatch
key sets (drops ADInplaceOrView from the included set, excludes the autograd keys) and makes
new tensors inference tensors (c10/core/InferenceMode.h). The state is per thread (``tls.per_thread.state.autograd``).
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..keys import DispatchKey
from ..keyset import AUTOGRAD_KEYSET, key_bits
from ..tls import _state, inference_active, per_thread

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])



# per_thread.state.autograd is (grad_mode, inference_mode): c10's AutogradState, as far as dispatchcore
# models it. Hot paths read per_thread.state.autograd directly.
def autograd_state_get() -> tuple[bool, bool]:
    """This thread's ``(grad_mode, inference_mode)``."""
    return per_thread.state.autograd


def _autograd_state_set(state: tuple[bool, bool]) -> None:
    per_thread.state.autograd = state


_new = object.__new__
# (grad_mode, inference_mode) tuples, indexed [grad_mode][inference_mode], so guards allocate none
_STATES = (((False, False), (False, True)), ((True, False), (True, True)))
_ADINPLACEORVIEW = key_bits(DispatchKey.ADInplaceOrView)


def is_grad_enabled() -> bool:
    """True when operations record the autograd graph (``torch.is_grad_enabled``)."""
    return per_thread.state.autograd[0]


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (``torch.is_inference_mode_enabled``)."""
    return per_thread.state.autograd[1]


class _DecoratorContextManager:
    """A context manager that is also a decorator (a fresh instance per decorated call).

    Mirrors ``torch.utils._contextlib``: a decorated generator function runs every step of the
    generator inside the context, not just the call that creates the generator.
    """

    __slots__ = ()

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self._clone, fn)  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _clone(self) -> Any:
        return type(self)()


def _wrap_generator(ctx_factory: Callable[[], Any], fn: Callable[..., Any]) -> Callable[..., Any]:
    """Enter a fresh context around each step of the generator (``_wrap_generator`` in torch)."""

    @functools.wraps(fn)
    def generator_context(*args: Any, **kwargs: Any) -> Any:
        gen = fn(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator_context


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    __slots__ = ()

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return _new(cls)
        return cls()(orig_func)


class _GradModeGuard(_NoParamDecoratorContextManager):
    """Base of ``no_grad`` and ``enable_grad``: a subclass sets ``_mode`` and gets its ``__enter__``."""

    __slots__ = ("_saved", "_st")
    _mode = True
    _saved: tuple[bool, bool]
    _st: Any

    if TYPE_CHECKING:  # each subclass's own, made by _grad_mode_enter
        def __enter__(self) -> None: ...

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # torch's AutoGradMode destructor: the saved grad mode, the current inference flag (the
        # saved tuple itself when that flag did not change inside)
        saved = self._saved
        st = self._st
        now = st.autograd
        st.autograd = saved if now[1] is saved[1] else _STATES[saved[0]][now[1]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__enter__" not in cls.__dict__:
            cls.__enter__ = _grad_mode_enter(cls._mode)  # type: ignore[method-assign, assignment]


def _grad_mode_enter(mode: bool) -> Any:
    """The ``__enter__`` of a grad-mode guard class that sets grad mode to ``mode``.

    Its two possible states inside are closure constants (Note [Guard closures], tls.py): entering
    reads one flag and stores one existing tuple.
    """
    plain, in_inference = _STATES[mode]

    def __enter__(self: Any) -> None:
        st = self._st = per_thread.state  # exited on the thread it was entered on
        state = self._saved = st.autograd
        st.autograd = in_inference if state[1] else plain

    __enter__.guard_closure = True  # type: ignore[attr-defined]  # trace.py wraps it (_guard_classes)
    return __enter__


class no_grad(_GradModeGuard):  # noqa: N801 - torch's name
    """Disable gradient recording (``torch.no_grad``); dispatch key sets are untouched.

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.ones(2, requires_grad=True)
        >>> with dc.no_grad():
        ...     (x * 2).requires_grad
        False
    """

    __slots__ = ()
    _mode = False


class enable_grad(_GradModeGuard):  # noqa: N801 - torch's name
    """Enable gradient recording inside ``no_grad`` (``torch.enable_grad``)."""

    __slots__ = ()
    _mode = True


class set_grad_enabled(_DecoratorContextManager):  # noqa: N801 - torch's name
    """Set grad mode now; as a context manager, restore the previous mode on exit."""

    __slots__ = ("_prev", "_mode")

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:  # torch's argument parser takes a bool, not a truthy value
            from ..tensor import _tp_name

            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{_tp_name(type(mode))}")
        state = autograd_state_get()
        self._prev = state[0]
        self._mode = mode
        _autograd_state_set(_STATES[self._mode][state[1]])

    def __call__(self, fn: F) -> F:
        # used as a decorator, the constructor's mode change is undone (torch does the same)
        _autograd_state_set(_STATES[self._prev][autograd_state_get()[1]])
        return super().__call__(fn)

    def __enter__(self) -> None:
        _autograd_state_set(_STATES[self._mode][autograd_state_get()[1]])

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _autograd_state_set(_STATES[self._prev][autograd_state_get()[1]])

    def _clone(self) -> Any:
        return set_grad_enabled(self._mode)


class inference_mode(_DecoratorContextManager):  # noqa: N801 - torch's name
    """Inference mode (``torch.inference_mode``): no graph, no version counters, no view tracking.

    Entering saves the whole autograd state and both dispatch key sets; with ``mode=True`` it
    removes ADInplaceOrView from the included set and excludes the autograd keys, and tensors
    created inside are inference tensors. ``mode=False`` re-enables both. Exit restores all.

    Example:
        >>> import dispatchcore as dc
        >>> with dc.inference_mode():
        ...     dc.tls_local_include_set()
        DispatchKeySet(BackendSelect)
    """

    __slots__ = ("_mode", "_saved_keys", "_saved_state", "_st")
    _mode: bool
    _saved_keys: tuple[int, int, int]
    _saved_state: tuple[bool, bool]
    _st: Any

    def __new__(cls, mode: Any = True) -> Any:
        if mode is True or mode is False:
            self = _new(cls)
            self._mode = mode
            return self
        return cls()(mode)  # bare decorator: @inference_mode

    def __enter__(self) -> None:
        st = self._st = per_thread.state
        state = self._saved_keys = st.keys
        saved = self._saved_state = st.autograd
        # One memo per mode, (state entered from, state inside), as tls.py's Note [Guard memos]:
        # entering is one identity test and two tuple stores.
        if self._mode:
            entered_from, inside = _inference_on
            st.keys = inside if entered_from is state else _inference_keys(state, True)
            st.autograd = _IN_INFERENCE
            if not saved[1]:
                _active_append(None)  # See Note [Inference mode anywhere]
        else:
            entered_from, inside = _inference_off
            st.keys = inside if entered_from is state else _inference_keys(state, False)
            st.autograd = _OUT_OF_INFERENCE

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # InferenceMode's destructor restores the saved key sets and autograd state, whole
        st = self._st
        was = st.autograd[1]
        st.autograd = saved = self._saved_state
        st.keys = self._saved_keys
        if was and not saved[1]:
            _active_pop()

    def _clone(self) -> Any:
        return inference_mode(self._mode)


# AutogradState inside InferenceMode(mode): grad mode is the opposite of the mode
_IN_INFERENCE = (False, True)
_OUT_OF_INFERENCE = (True, False)
# Bound once: calling them is cheaper than looking the method up on each guard
_active_append = inference_active.append
_active_pop = inference_active.pop
# Per mode, the last (dispatch state entered from, dispatch state inside); rebound whole
_inference_on: tuple[Any, Any] = (None, None)
_inference_off: tuple[Any, Any] = (None, None)


def _inference_keys(state: Any, mode: bool) -> Any:
    """The dispatch TLS inside ``InferenceMode(mode)`` entered from ``state``; updates the memo."""
    global _inference_on, _inference_off
    inside = _inference_tls_state(state, mode)
    if inside == state:
        return state  # nested in the same mode: nothing changes, and the memo is kept
    if mode:
        _inference_on = (state, inside)
    else:
        _inference_off = (state, inside)
    return inside


def _inference_tls_state(state: Any, mode: bool) -> Any:
    """The dispatch TLS inside ``InferenceMode(mode)`` entered in ``state``."""
    included, excluded, _ = state
    if mode:
        return _state(included & ~_ADINPLACEORVIEW, excluded | AUTOGRAD_KEYSET)
    return _state(included | _ADINPLACEORVIEW, excluded & ~AUTOGRAD_KEYSET)
