"""Grad mode and inference mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Mirrors ``torch/autograd/grad_mode.py`` over ``c10/core/GradMode.h`` and ``InferenceMode.h``.
Grad mode is a thread-local flag that changes no dispatch key (spec §3.5): Autograd kernels
still run and simply record nothing. Inference mode is different: it also edits the dispatch
key sets (drops ADInplaceOrView from the included set, excludes the autograd keys) and makes
new tensors inference tensors (spec §3.4). Both state and guards are per thread and task.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from ..keyset import AUTOGRAD_KEYSET, key_bits
from ..keys import DispatchKey
from ..tls import _TLS, _state

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])

# (grad_mode, inference_mode): c10's AutogradState, as far as dispatchcore models it.
_AUTOGRAD_STATE: ContextVar[tuple[bool, bool]] = ContextVar("dispatchcore_autograd", default=(True, False))
autograd_state_get = _AUTOGRAD_STATE.get  # bound once: autograd kernels read it per call
_autograd_state_set = _AUTOGRAD_STATE.set
_ADINPLACEORVIEW = key_bits(DispatchKey.ADInplaceOrView)


def is_grad_enabled() -> bool:
    """True when operations record the autograd graph (``torch.is_grad_enabled``)."""
    return _AUTOGRAD_STATE.get()[0]


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (``torch.is_inference_mode_enabled``)."""
    return _AUTOGRAD_STATE.get()[1]


class _DecoratorContextManager:
    """A context manager that is also a decorator (a fresh instance per decorated call)."""

    __slots__ = ()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _clone(self) -> Any:
        return type(self)()


class _GradModeGuard(_DecoratorContextManager):
    __slots__ = ("_saved",)
    _mode = True

    def __enter__(self) -> None:
        state = self._saved = _AUTOGRAD_STATE.get()
        _autograd_state_set((self._mode, state[1]))

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _autograd_state_set((self._saved[0], _AUTOGRAD_STATE.get()[1]))


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
        state = _AUTOGRAD_STATE.get()
        self._prev = state[0]
        self._mode = bool(mode)
        _autograd_state_set((self._mode, state[1]))

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _autograd_state_set((self._prev, _AUTOGRAD_STATE.get()[1]))

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

    __slots__ = ("_mode", "_saved")

    def __init__(self, mode: bool = True) -> None:
        self._mode = bool(mode)

    def __enter__(self) -> None:
        included, excluded, _ = state = _TLS.get()
        self._saved = (state, _AUTOGRAD_STATE.get())
        if self._mode:
            _TLS.set(_state(included & ~_ADINPLACEORVIEW, excluded | AUTOGRAD_KEYSET))
        else:
            _TLS.set(_state(included | _ADINPLACEORVIEW, excluded & ~AUTOGRAD_KEYSET))
        _autograd_state_set((not self._mode, self._mode))

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        dispatch_state, autograd_state = self._saved
        _TLS.set(dispatch_state)
        _autograd_state_set(autograd_state)

    def _clone(self) -> Any:
        return inference_mode(self._mode)
