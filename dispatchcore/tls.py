"""Thread-local include/exclude key sets, and the guards that edit them.

Mirrors ``c10/core/impl/LocalDispatchKeySet.h`` and the guards of ``ATen/core/LegacyTypeDispatch.h``.
The state is an immutable ``(included, excluded, keep)`` tuple of raw ints in one attribute of a
per-thread object (``per_thread.state.keys``), so a new thread starts from PyTorch's defaults and never
sees another's state (asyncio tasks on one thread share it, as they share c10's thread-locals),
and the dispatcher reads it once per call. ``keep`` is the precomputed mask ``BACKEND_MASK | ~excluded``
(``ks - excluded`` spares backend bits, as in c10). Every guard snapshots the set it edits and
restores exactly that set on exit, even when an exception passes through it.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Self

from .keys import DispatchKey
from .keyset import (
    _KEY_BITS,
    AUTOGRAD_KEYSET,
    AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW,
    BACKEND_MASK,
    DEFAULT_EXCLUDED,
    DEFAULT_INCLUDED,
    FULL,
    DispatchKeySet,
    _as_bits,
    key_bits,
)

__all__ = [
    "AutoDispatchBelowADInplaceOrView",
    "AutoDispatchBelowAutograd",
    "AutoDispatchSkipFunctionalize",
    "AutoNonVariableTypeMode",
    "DisableTorchDispatch",
    "ExcludeDispatchKeyGuard",
    "ForceDispatchKeyGuard",
    "IncludeDispatchKeyGuard",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_local_exclude_set",
    "tls_local_include_set",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
]


def _state(included: int, excluded: int) -> tuple[int, int, int]:
    return keys_state(included, excluded, (BACKEND_MASK | ~excluded) & FULL)


def keys_state(included: int, excluded: int, keep: int) -> tuple[int, int, int]:
    """The ``keys`` tuple for these sets: build states with this.

    The default state is always one object, which the dispatcher tells by identity (Note
    [Dispatch memo] in operator.py).
    """
    if included == DEFAULT_INCLUDED and excluded == DEFAULT_EXCLUDED:
        return _DEFAULT_STATE
    return (included, excluded, keep)


_DEFAULT_STATE = (DEFAULT_INCLUDED, DEFAULT_EXCLUDED, (BACKEND_MASK | ~DEFAULT_EXCLUDED) & FULL)
_FUNCTIONALITY_BITS = FULL & ~BACKEND_MASK  # excluding keys clears these bits of ``keep``


class ThreadState:
    """What dispatchcore keeps per thread, as c10 and torch keep it in ``thread_local`` state.

    ``keys``: the dispatch key sets, ``(included, excluded, keep)``; ``autograd``: grad mode and
    inference mode (``grad_mode.py``); ``modes``: the dispatch-mode stack (``modes.py``);
    ``autocast``: autocast's state (``autocast.py``); ``forwards``: custom Functions whose
    forward is running (``autograd/function.py``).

    A plain ``__slots__`` object, one per thread, reached through ``per_thread.state``. Reading
    an attribute of a ``threading.local`` costs ~45 ns more than reading a slot, so a hot
    function fetches this object once (``st = per_thread.state``) and then reads and writes its
    slots; a guard keeps the object it entered on and restores that object on exit.
    """

    __slots__ = ("keys", "autograd", "modes", "autocast", "forwards")

    def __init__(self) -> None:
        self.keys: tuple[int, int, int] = _DEFAULT_STATE
        self.autograd: tuple[bool, bool] = (True, False)
        self.modes: Any = None
        self.autocast: Any = None
        self.forwards: frozenset[Any] = frozenset()


class _PerThread(threading.local):
    state: ThreadState

    def __init__(self) -> None:  # runs once in each thread, on its first access
        self.state = ThreadState()


per_thread = _PerThread()


# Note [Inference mode anywhere]: one entry per inference_mode(True) guard that switched some
# thread into inference mode and has not switched it back (list append and pop are atomic
# under the GIL). Making a tensor must know whether its thread is in inference mode; it reads
# this global first and fetches its thread's state only when the list is non-empty. A thread
# that ends still inside inference mode (a leaked guard) leaves its entry: only slower, never wrong.
inference_active: list[None] = []


def thread_state() -> ThreadState:
    """This thread's :class:`ThreadState` (hot paths read ``per_thread.state`` inline)."""
    return per_thread.state


def tls_get() -> tuple[int, int, int]:
    """This thread's ``(included, excluded, keep)`` key-set bits (hot paths read ``per_thread.state.keys``)."""
    return per_thread.state.keys


def _tls_set(state: tuple[int, int, int]) -> None:
    per_thread.state.keys = keys_state(*state)


def _set_included(bits: int) -> None:
    _tls_set(_state(bits, tls_get()[1]))


def _set_excluded(bits: int) -> None:
    _tls_set(_state(tls_get()[0], bits))


def tls_local_include_set() -> DispatchKeySet:
    """This thread's included keys (``torch._C._dispatch_tls_local_include_set``).

    Example:
        >>> tls_local_include_set()
        DispatchKeySet(BackendSelect, ADInplaceOrView)
    """
    return DispatchKeySet._from_bits(tls_get()[0])


def tls_local_exclude_set() -> DispatchKeySet:
    """This thread's excluded keys (``torch._C._dispatch_tls_local_exclude_set``).

    Printing hides a per-backend functionality without backend bits (AutogradFunctionality under
    ``AutoDispatchBelowAutograd``), exactly as PyTorch's printing does; ``int()`` shows it.
    """
    return DispatchKeySet._from_bits(tls_get()[1])


def tls_is_dispatch_key_included(key: DispatchKey | str) -> bool:
    """Mirror ``c10::impl::tls_is_dispatch_key_included``."""
    return DispatchKeySet._from_bits(tls_get()[0]).has(key)


def tls_is_dispatch_key_excluded(key: DispatchKey | str) -> bool:
    """Mirror ``c10::impl::tls_is_dispatch_key_excluded``."""
    return DispatchKeySet._from_bits(tls_get()[1]).has(key)


def tls_set_dispatch_key_included(key: DispatchKey | str, state: bool) -> None:
    """Mirror ``c10::impl::tls_set_dispatch_key_included``.

    As in c10: a no-op when ``has(key)`` already equals ``state``; otherwise ``add(key)``, or
    ``remove(key)``, which clears only the functionality bit (backend bits stay).
    """
    bits = key_bits(key)
    included = tls_get()[0]
    if (included & bits == bits) != state:
        _set_included(included | bits if state else included & ~(bits & ~BACKEND_MASK))


def tls_set_dispatch_key_excluded(key: DispatchKey | str, state: bool) -> None:
    """Mirror ``c10::impl::tls_set_dispatch_key_excluded`` (same rules as the included variant)."""
    bits = key_bits(key)
    excluded = tls_get()[1]
    if (excluded & bits == bits) != state:
        _set_excluded(excluded | bits if state else excluded & ~(bits & ~BACKEND_MASK))


class _ExcludeBits:
    """Base of the exclude-style guards: ``excluded |= bits`` on enter, snapshot restored on exit.

    A subclass sets the class constant ``_bits`` and gets its own ``__enter__``, made by
    :func:`_exclude_enter` with the bits bound in, and a memo of its own (Note [Guard memos]).
    """

    __slots__ = ("_saved", "_st")
    _bits = 0
    _saved: tuple[int, int, int]
    _st: ThreadState

    if TYPE_CHECKING:  # each subclass's own, made by _exclude_enter
        def __enter__(self) -> Self: ...

    def __exit__(self, exc_type, exc, tb) -> None:
        st = self._st
        saved = self._saved
        # Restore only the exclude set: the saved tuple is reused whole when included is unchanged
        # (``is``: included is the very int saved unless something inside rebuilt it).
        st.keys = saved if st.keys[0] is saved[0] else keys_state(st.keys[0], saved[1], saved[2])

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if isinstance(cls._bits, int) and "__enter__" not in cls.__dict__:
            cls.__enter__ = _exclude_enter(cls._bits)  # type: ignore[method-assign, assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _exclude_enter(bits: int) -> Any:
    """The ``__enter__`` of an exclude-style guard class that excludes ``bits``.

    Note [Guard closures]: the class's memo lives in the closure, with the bits and the ``keep``
    mask the miss path applies: in CPython 3.11 a class attribute read through an instance is not
    specialized, and that read cost ~20 ns of the guard's ~300 ns. ``__enter__.memo()`` shows the
    memo and ``__enter__.forget()`` clears it (tests force the miss path with it).
    """
    clear = FULL & ~(bits & ~BACKEND_MASK)  # keep loses the functionality bits excluded
    memo: tuple[Any, Any] = (None, None)  # (state entered from, state inside): Note [Guard memos]

    def inside_of(state: tuple[int, int, int]) -> tuple[int, int, int]:
        nonlocal memo
        inside = (state[0], state[1] | bits, state[2] & clear)
        if inside == state:
            return state  # already excluded (a nested guard): same object, and the memo is kept
        memo = (state, inside)  # rebound whole: atomic, so threads never see a torn pair
        return inside

    def __enter__(self):
        st = self._st = per_thread.state  # a guard exits on the thread it entered on
        state = self._saved = st.keys
        entered_from, inside = memo  # one read of the pair; unpacking a 2-tuple beats two subscripts
        st.keys = inside if entered_from is state else inside_of(state)
        return self

    def forget() -> None:
        nonlocal memo
        memo = (None, None)

    __enter__.memo = lambda: memo  # type: ignore[attr-defined]
    __enter__.forget = forget  # type: ignore[attr-defined]
    __enter__.guard_closure = True  # type: ignore[attr-defined]  # trace.py wraps it (_guard_classes)
    return __enter__


# Note [Guard memos]: a guard's work on enter is a function of the state it enters from (and of
# its bits), and consecutive guards almost always enter from the same state object, so each
# guard remembers its last (state entered from, state inside) and reuses the inside tuple when
# the state entered from is this one: one identity test instead of recomputing, and no new
# tuple. The memos hold immutable tuples and are replaced whole (a closure variable or a global
# rebound, both atomic under the GIL), so a thread reads either the old pair or the new one,
# never a mix; a miss only recomputes. A pair is read by unpacking it (``entered_from, inside =
# memo``): one read, and ~10 ns less than two subscripts (AutoDispatchBelowAutograd 285 -> 275 ns).
# The same trick as ``_last_below`` in autograd/kernels.py.
_exclude_last: tuple[Any, int, Any] = (None, 0, None)  # ExcludeDispatchKeyGuard: (state, bits, inside)
_include_last: tuple[Any, Any, Any] = (None, None, None)  # IncludeDispatchKeyGuard: (state, keys, inside)
_force_last: tuple[int, int, Any] = (-1, -1, None)  # ForceDispatchKeyGuard: (include, exclude, state)


class ExcludeDispatchKeyGuard(_ExcludeBits):
    """Add keys to this thread's exclude set while active (``c10::impl::ExcludeDispatchKeyGuard``).

    Example:
        >>> with ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutogradCPU)):
        ...     hex(int(tls_local_exclude_set()))
        '0x1ff9000000001'
    """

    __slots__ = ("_bits",)

    def __init__(self, keys: DispatchKeySet | DispatchKey | str) -> None:
        self._bits = keys._bits if type(keys) is DispatchKeySet else _as_bits(keys)

    def __enter__(self):
        st = self._st = per_thread.state
        state = self._saved = st.keys
        last = _exclude_last  # Note [Guard memos]: keyed by the state and the bits
        if last[0] is state and last[1] == self._bits:
            st.keys = last[2]
        else:
            st.keys = self._inside(state)
        return self

    def _inside(self, state: tuple[int, int, int]) -> tuple[int, int, int]:
        global _exclude_last
        bits = self._bits
        inside = (state[0], state[1] | bits, state[2] & (FULL ^ (bits & _FUNCTIONALITY_BITS)))
        if inside == state:
            return state  # already excluded (a nested guard): same object, and the memo is kept
        _exclude_last = (state, bits, inside)
        return inside

    def __repr__(self) -> str:
        return f"ExcludeDispatchKeyGuard({DispatchKeySet._from_bits(self._bits)})"


class IncludeDispatchKeyGuard:
    """Add keys to this thread's include set while active (``c10::impl::IncludeDispatchKeyGuard``)."""

    __slots__ = ("_keys", "_saved", "_st")
    _keys: DispatchKeySet | DispatchKey

    def __init__(self, keys: DispatchKeySet | DispatchKey | str) -> None:
        # Keeps the key or key set object itself, the memo's key (Note [Guard memos]): a key
        # turns into bits only on a memo miss. Other arguments are checked and converted now.
        if type(keys) is not DispatchKey and type(keys) is not DispatchKeySet:
            keys = DispatchKeySet._from_bits(_as_bits(keys))
        self._keys = keys

    def __enter__(self):
        st = self._st = per_thread.state
        state = self._saved = st.keys
        last = _include_last  # Note [Guard memos]: keyed by the state and the key object
        st.keys = last[2] if last[0] is state and last[1] is self._keys else self._inside(state)
        return self

    def _inside(self, state: tuple[int, int, int]) -> tuple[int, int, int]:
        global _include_last
        keys = self._keys
        included = state[0] | (keys._bits if isinstance(keys, DispatchKeySet) else _KEY_BITS[keys])
        if included == state[0]:
            return state  # already included (a nested guard): same object, and the memo is kept
        inside = (included, state[1], state[2])
        _include_last = (state, keys, inside)
        return inside

    def __exit__(self, exc_type, exc, tb) -> None:
        # Restore only the include set: the saved tuple is reused whole when excluded is unchanged
        # (``is``: excluded is the very int saved unless something inside rebuilt it).
        st = self._st
        saved = self._saved
        state = st.keys
        st.keys = saved if state[1] is saved[1] else keys_state(saved[0], state[1], state[2])

    def __repr__(self) -> str:
        return f"IncludeDispatchKeyGuard({DispatchKeySet._from_bits(_as_bits(self._keys))})"


class ForceDispatchKeyGuard:
    """Replace both sets while active, restoring both on exit (``c10::impl::ForceDispatchKeyGuard``)."""

    __slots__ = ("_include", "_exclude", "_saved", "_st")

    def __init__(self, include: DispatchKeySet, exclude: DispatchKeySet) -> None:
        # key sets, the usual arguments, inline: a call to _as_bits costs ~45 ns
        self._include = include._bits if type(include) is DispatchKeySet else _as_bits(include)
        self._exclude = exclude._bits if type(exclude) is DispatchKeySet else _as_bits(exclude)

    def __enter__(self):
        global _force_last
        st = self._st = per_thread.state
        self._saved = st.keys
        last = _force_last  # Note [Guard memos]: keyed by the two sets
        if last[0] == self._include and last[1] == self._exclude:
            st.keys = last[2]
        else:
            inside = _state(self._include, self._exclude)
            _force_last = (self._include, self._exclude, inside)
            st.keys = inside
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._st.keys = self._saved


class AutoDispatchBelowAutograd(_ExcludeBits):
    """Exclude the autograd keys (``at::AutoDispatchBelowAutograd``): dispatch skips Autograd*.

    An internal guard for kernel writers; users who only want no graph use ``no_grad`` or
    ``inference_mode``. Sets exactly the bits PyTorch's guard sets: AutogradFunctionality,
    AutogradOther and AutogradNestedTensor.
    """

    __slots__ = ()
    _bits = AUTOGRAD_KEYSET


class AutoDispatchBelowADInplaceOrView(_ExcludeBits):
    """Exclude the autograd keys and ADInplaceOrView (``at::AutoDispatchBelowADInplaceOrView``).

    The guard an Autograd kernel takes before calling back into the dispatcher: the outer
    autograd layer already did the view and version-counter bookkeeping.
    """

    __slots__ = ()
    _bits = AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW


class AutoDispatchSkipFunctionalize(_ExcludeBits):
    """Exclude the Functionalize key (``at::AutoDispatchSkipFunctionalize``)."""

    __slots__ = ()
    _bits = key_bits(DispatchKey.Functionalize)


class DisableTorchDispatch(_ExcludeBits):
    """Exclude Python, PythonTLSSnapshot and PreDispatch (``torch._C._DisableTorchDispatch``)."""

    __slots__ = ()
    _bits = (
        key_bits(DispatchKey.Python)
        | key_bits(DispatchKey.PythonTLSSnapshot)
        | key_bits(DispatchKey.PreDispatch)
    )


_warned_non_variable = False


class AutoNonVariableTypeMode(_ExcludeBits):
    """Deprecated alias of ``AutoDispatchBelowAutograd`` that warns once per process, as c10 does.

    c10 warns in the guard's constructor, so the warning comes when the guard is made.
    """

    __slots__ = ()
    _bits = AUTOGRAD_KEYSET

    def __init__(self) -> None:
        global _warned_non_variable
        if not _warned_non_variable:
            _warned_non_variable = True
            warnings.warn(
                "AutoNonVariableTypeMode is deprecated and will be removed in 1.10 release. For "
                "kernel implementations please use AutoDispatchBelowADInplaceOrView instead, If you "
                "are looking for a user facing API to enable running your inference-only workload, "
                "please use c10::InferenceMode. Using AutoDispatchBelowADInplaceOrView in user code "
                "is under risk of producing silent wrong result in some edge cases. See Note "
                "[AutoDispatchBelowAutograd] for more details.",
                DeprecationWarning,
                stacklevel=2,
            )
