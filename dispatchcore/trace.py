"""The dispatch trace: every hop of every call, with the key sets and the reason its kernel ran.

PyTorch prints ``[call] op=[aten::add.Tensor], key=[AutogradCPU]`` only in debug builds
(``TORCH_SHOW_DISPATCH_TRACE``); dispatchcore records far more, in a normal install: per hop the
key set each tensor argument contributed, the thread-local include/exclude sets, the effective
set, the chosen key and kernel and why (the table label), the fallthrough keys skipped, nested
under the hop that caused it; plus guards entered and left, version bumps and autograd nodes.

Note [Zero-cost tracing]: while no trace is possible, tables hold the kernels themselves and this
module costs nothing. ``enable()`` rebuilds every table with wrapped slots (cold path), and
``disable()`` rebuilds them back. ``with trace():`` does both around its block.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from . import operator as _operator
from .autograd.graph import node_extras
from .dispatcher import get_dispatcher
from .display import rich_display
from .keys import DispatchKey
from .keyset import BACKEND_MASK, DispatchKeySet
from .operator import OperatorHandle, is_dispatch_arg
from .tls import tls_get

__all__ = ["Event", "Hop", "Trace", "disable", "enable", "is_enabled", "trace"]

# The reason a kernel ran, by the table label PyTorch prints (resolution.compute_table_entry).
REASONS = {
    "kernel": "direct kernel registered at this key",
    "math kernel": "math kernel via CompositeImplicitAutograd",
    "default backend kernel": "default backend kernel via CompositeExplicitAutograd",
    "nested kernel": "nested kernel via CompositeImplicitAutogradNestedTensor",
    "autograd kernel": "autograd kernel via the Autograd alias",
    "batched kernel": "batched kernel via FuncTorchBatchedDecomposition",
    "backend fallback": "backend fallback registered for this key",
    "ambiguous autogradother": "ambiguous AutogradOther kernel",
}


class Event:
    """Something that happened during a hop: a guard, a version bump, an autograd node."""

    __slots__ = ("kind", "detail", "hop", "data", "seq")

    def __init__(self, kind: str, detail: str, hop: Hop | None, data: dict[str, Any] | None = None,
                 seq: int = -1) -> None:
        self.seq = seq  # position among all hops and events of the trace
        self.kind = kind          # "guard_enter", "guard_exit", "version_bump", "node_created"
        self.detail = detail
        self.hop = hop
        self.data = data or {}

    def __repr__(self) -> str:
        return f"<Event {self.kind}: {self.detail}>"


class Hop:
    """One dispatch hop: an op called (or redispatched) and the kernel the table chose for it."""

    __slots__ = ("kind", "op", "key", "label", "kernel", "arg_keys", "included", "excluded",
                 "keyset", "skipped", "parent", "children", "events", "depth", "seq", "tls", "inline_from")

    def __init__(self, kind: str, op: OperatorHandle, key: DispatchKey, label: str, kernel: str,
                 keyset: int, parent: Hop | None) -> None:
        self.kind = kind              # "call" or "redispatch"
        self.op = op.qualname
        self.key = key
        self.label = label            # the dump_table label of the chosen entry
        self.kernel = kernel          # its debug string: "registered at file:line"
        self.keyset = keyset          # the (masked) key set the hop dispatched on
        self.arg_keys: list[tuple[str, int]] = []
        self.included = 0
        self.excluded = 0
        self.skipped = 0              # fallthrough keys dropped by the op's mask (calls only)
        self.parent = parent
        self.children: list[Hop] = []
        self.events: list[Event] = []
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.seq = -1  # position among all hops and events of the trace (set when recorded)
        # the (included, excluded) TLS this hop's kernel runs under, as the trace knows it: its
        # start state, then the state its last recorded guard left (See Note [Inline guards])
        self.tls: tuple[int, int] = (0, 0)
        self.inline_from: tuple[int, int] | None = None  # the TLS before an inline guard it entered

    @classmethod
    def frame(cls, name: str, parent: Hop | None) -> Hop:
        """A ``[backward]`` frame: the autograd engine's pass, or one node it runs; no dispatch.

        ``name`` is ``backward()`` or ``grad()`` for a pass, the node's name (``MulBackward0``) for
        a node; the hops of the ops that run meanwhile nest under the frame.
        """
        hop = cls.__new__(cls)
        hop.kind, hop.op, hop.key, hop.label, hop.kernel = "backward", name, DispatchKey.Undefined, "", ""
        hop.keyset, hop.arg_keys, hop.skipped, hop.parent = 0, [], 0, parent
        hop.children, hop.events, hop.seq, hop.inline_from = [], [], -1, None
        hop.depth = 0 if parent is None else parent.depth + 1
        hop.included, hop.excluded, _ = tls_get()
        hop.tls = (hop.included, hop.excluded)
        return hop

    @property
    def reason(self) -> str:
        if self.kind == "backward":
            return "the autograd engine" if self.parent is None or self.parent.kind != "backward" \
                else f"backward of {self.op}"
        if self.label == "default backend kernel" and self._from_non_functional():
            return "default backend kernel via CompositeExplicitAutogradNonFunctional"
        return REASONS.get(self.label, self.label)

    def _from_non_functional(self) -> bool:
        """Whether the chosen kernel is the op's CompositeExplicitAutogradNonFunctional one (same label)."""
        from .dispatcher import get_dispatcher

        try:
            op = get_dispatcher().find_op(self.op)
        except LookupError:
            return False
        regs = op.registrations.get(DispatchKey.CompositeExplicitAutogradNonFunctional, ())
        return bool(regs) and regs[0].debug == self.kernel

    def walk(self) -> Iterator[Hop]:
        """This hop and every hop nested under it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def __repr__(self) -> str:
        return f"<Hop [{self.kind}] op=[{self.op}], key=[{self.key.name}]>"


class Trace:
    """A recorded trace: root hops (and their nested hops), and events in order."""

    def __init__(self) -> None:
        self.roots: list[Hop] = []
        self.events: list[Event] = []
        self._stack: list[Hop] = []
        self._pending_call = False
        self._owner = threading.get_ident()
        self._seq = itertools.count()

    def hops(self) -> list[Hop]:
        """Every hop in the order it started."""
        return [h for root in self.roots for h in root.walk()]

    def find(self, op: str | None = None, key: DispatchKey | str | None = None) -> list[Hop]:
        """Hops of one operator and/or key (``op`` may omit the overload)."""
        key = DispatchKey.parse(key) if isinstance(key, str) else key
        return [h for h in self.hops()
                if (op is None or h.op == op or h.op.split(".")[0] == op)
                and (key is None or h.key == key)]

    def _event(self, kind: str, detail: str, **data: Any) -> Event:
        event = Event(kind, detail, self._stack[-1] if self._stack else None, data, next(self._seq))
        self.events.append(event)
        if event.hop is not None:
            event.hop.events.append(event)
        return event

    # --- renderers (dispatchcore.trace_render) ----------------------------------------------
    def text(self) -> str:
        from .trace_render import render_text

        return render_text(self)

    def to_json(self) -> dict[str, Any]:
        from .trace_render import render_json

        return render_json(self)

    def mermaid(self) -> str:
        from .trace_render import render_mermaid

        return render_mermaid(self)

    def html(self) -> str:
        from .trace_render import render_html

        return render_html(self)

    def _repr_html_(self) -> str | None:
        """Jupyter: the interactive hop tree, in an iframe (``dispatchcore.notebook.trace_html``)."""
        return rich_display("trace_html", self)

    def _repr_svg_(self) -> str | None:
        """Jupyter (where HTML is not shown): the sequence diagram (``dispatchcore.notebook.trace_svg``)."""
        return rich_display("trace_svg", self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython: the indented text rendering."""
        printer.text(repr(self) if cycle else self.text())

    def __repr__(self) -> str:
        return f"<Trace of {len(self.hops())} hops, {len(self.events)} events>"


# --- recording ------------------------------------------------------------------------------------
_local = threading.local()
_enabled = 0  # how many reasons to keep tables wrapped (active traces + the live printer)
_lock = threading.RLock()
_live: Callable[[Hop], None] | None = None


def _recorders() -> list[Trace]:
    stack = getattr(_local, "traces", None)
    if stack is None:
        stack = _local.traces = []
    return stack


def _current() -> Trace | None:
    stack = getattr(_local, "traces", None)
    return stack[-1] if stack else None


def _arg_keys(op: OperatorHandle, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    if op.schema is None:
        return out
    for index, name, _kind, kwarg_only in op.schema.dispatch_arguments:
        value = kwargs.get(name) if kwarg_only or index >= len(args) else args[index]
        bits = 0
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            if is_dispatch_arg(v):
                bits |= v._key_bits
        if value is not None:
            out.append((name, bits))
    return out


def _wrap_slot(op: OperatorHandle, key: DispatchKey, entry: tuple[Any, str], slot: Any) -> Any:
    """A raw-keyset slot that records a hop around the original kernel."""
    fn, convention = slot
    reg, label = entry
    debug = reg.debug if hasattr(reg, "debug") else repr(reg)  # not getattr's default: repr is costly
    _touched_ops.add(op)
    if getattr(reg, "fallthrough", False):
        debug = "fallthrough " + debug

    def traced(bits: int, *args: Any, **kwargs: Any) -> Any:
        rec = _current()
        if rec is None and _live is None:
            return _invoke(fn, convention, bits, args, kwargs)
        return _record_hop(rec, op, key, label, debug, fn, convention, bits, args, kwargs)

    traced.__qualname__ = f"traced[{op.qualname}@{key.name}]"
    traced.__wrapped__ = fn  # type: ignore[attr-defined]
    return (traced, 2)


def _invoke(fn: Any, convention: int, bits: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if convention == 2:
        return fn(bits, *args, **kwargs)
    if convention == 1:
        return fn(DispatchKeySet._from_bits(bits), *args, **kwargs)
    return fn(*args, **kwargs)


def _record_hop(rec: Trace | None, op: OperatorHandle, key: DispatchKey, label: str, debug: str,
                fn: Any, convention: int, bits: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    stack = rec._stack if rec is not None else getattr(_local, "live_stack", None)
    if stack is None:
        stack = _local.live_stack = []
    parent = stack[-1] if stack else None
    is_call = False
    if rec is not None and rec._pending_call:
        is_call, rec._pending_call = True, False
    elif rec is None and getattr(_local, "live_pending", False):
        is_call, _local.live_pending = True, False
    hop = Hop("call" if is_call else "redispatch", op, key, label, debug, bits, parent)
    hop.included, hop.excluded, _ = tls_get()
    hop.tls = (hop.included, hop.excluded)
    if rec is not None and parent is not None and parent.tls != hop.tls:  # See Note [Inline guards]
        if parent.inline_from is None:
            parent.inline_from = parent.tls
        _inline_guard(rec, parent, "guard_enter", parent.tls, hop.tls)
    if rec is not None:
        hop.seq = next(rec._seq)
    hop.arg_keys = _arg_keys(op, args, kwargs)
    if is_call:
        contributed = 0
        for _, b in hop.arg_keys:
            contributed |= b
        unmasked = (contributed | hop.included) & ~(hop.excluded & ~BACKEND_MASK)
        hop.skipped = unmasked & ~bits & ~BACKEND_MASK  # functionality bits (renderers name them all)
    if parent is not None:
        parent.children.append(hop)
    elif rec is not None:
        rec.roots.append(hop)
    if _live is not None:
        _live(hop)
    # version counters before the kernel, to tell which hop bumped them
    versions: list[tuple[int | str, Any, int]] = [
        (i, a, a._vc[0]) for i, a in enumerate(args) if getattr(a, "_vc", None) is not None]
    versions += [(name, a, a._vc[0]) for name, a in kwargs.items() if getattr(a, "_vc", None) is not None]
    grad_fns = [(a, a._grad_fn) for a in args if getattr(a, "_vc", None) is not None]
    stack.append(hop)
    try:
        result = _invoke(fn, convention, bits, args, kwargs)
    finally:
        stack.pop()
        if hop.inline_from is not None and rec is not None and tls_get()[:2] == hop.inline_from:
            _inline_guard(rec, hop, "guard_exit", hop.tls, hop.inline_from)  # its kernel restored the TLS
            hop.inline_from = None
    if rec is not None:
        _note_effects(rec, hop, op, versions, result, grad_fns)
    return result


# Note [Inline guards]: dispatchcore's built-in Autograd kernels (and anything else on the hot
# path) enter AutoDispatchBelowADInplaceOrView by setting the thread-local state directly, not
# through a guard object, so no guard event would mark where the bits flip; torch's VariableType
# kernels enter the guard object there. When a nested hop starts under other TLS than its caller
# last had (its start state or the state its last recorded guard left), the caller changed it
# inline: the trace records the guard on the caller, before the nested hop, named after the bits
# that changed, and its exit when the caller's kernel returns with its state restored. The trace
# then shows each guard where its bits flip, as the unfused path records it.
def _inline_guard(rec: Trace, hop: Hop, kind: str, before: tuple[int, int], after: tuple[int, int]) -> None:
    event = Event(kind, _guard_name(before, after), hop,
                  {"guard": _guard_name(before, after), "included_before": before[0],
                   "excluded_before": before[1], "included_after": after[0], "excluded_after": after[1]},
                  next(rec._seq))
    hop.events.append(event)
    rec.events.append(event)
    hop.tls = after


def _guard_name(before: tuple[int, int], after: tuple[int, int]) -> str:
    """The guard an inline TLS change stands for, from the bits it flips (either direction)."""
    from .keyset import AUTOGRAD_KEYSET, AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW
    from .modes import ABOVE_PYTHON

    included = (before[0] ^ after[0]) & ~BACKEND_MASK
    excluded = (before[1] ^ after[1]) & ~BACKEND_MASK
    if not included and excluded == AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW & ~BACKEND_MASK:
        return "AutoDispatchBelowADInplaceOrView"
    if not included and excluded == AUTOGRAD_KEYSET & ~BACKEND_MASK:
        return "AutoDispatchBelowAutograd"
    if excluded and not excluded & ~ABOVE_PYTHON:  # the Python key's fallback (the mode keys may go too)
        return "ExcludeDispatchKeyGuard"
    if not included:
        return "ExcludeDispatchKeyGuard"
    return "IncludeDispatchKeyGuard" if not excluded else "ForceDispatchKeyGuard"


def _note_effects(rec: Trace, hop: Hop, op: OperatorHandle, versions: list[Any], result: Any,
                  grad_fns: list[tuple[Any, Any]]) -> None:
    names = [a.name for a in op.schema.arguments] if op.schema is not None else []
    for where, tensor, before in versions:
        after = tensor._vc[0]
        if after != before and not any(e.kind == "version_bump" and e.data.get("tensor") is tensor
                                       for h in hop.walk() for e in h.events if h is not hop):
            name = where if isinstance(where, str) else (names[where] if where < len(names) else str(where))
            event = Event("version_bump", f"{op.qualname} bumped {name}'s version {before} -> {after}",
                          hop, {"tensor": tensor, "argument": name, "before": before, "after": after},
                          next(rec._seq))
            hop.events.append(event)
            rec.events.append(event)
    outputs = result if isinstance(result, tuple) else (result,)
    for out in outputs:
        node = getattr(out, "_grad_fn", None)
        if any(out is t and before is node for t, before in grad_fns):
            continue  # an input returned as is (in-place ops): its node is older than this hop
        if node is not None and (node._extras is None or node._extras.hop is None):
            node_extras(node).hop = hop  # a node no earlier hop claimed: made here
            event = Event("node_created", f"{op.qualname} created {type(node).__name__}", hop,
                          {"node": node}, next(rec._seq))
            hop.events.append(event)
            rec.events.append(event)


class _Frame:
    """``with _Frame(name):`` records a ``[backward]`` frame in this thread's trace (if any).

    The engine (``autograd/graph.py``) opens one around a whole backward pass and one around each
    node it runs, while a trace is possible; the hops of the ops a node's formula calls then nest
    under the node instead of showing as calls from user code.
    """

    __slots__ = ("_hop", "_stack")

    def __init__(self, name: str) -> None:
        rec = _current()
        self._hop: Hop | None = None
        self._stack: list[Hop] | None = None
        if rec is None and _live is None:
            return
        stack = rec._stack if rec is not None else getattr(_local, "live_stack", None)
        if stack is None:
            stack = _local.live_stack = []
        parent = stack[-1] if stack else None
        hop = self._hop = Hop.frame(name, parent)
        self._stack = stack
        if rec is not None:
            hop.seq = next(rec._seq)
            if parent is not None:
                parent.children.append(hop)
            else:
                rec.roots.append(hop)
        if _live is not None:
            _live(hop)

    def __enter__(self) -> None:
        if self._hop is not None:
            self._stack.append(self._hop)  # type: ignore[union-attr]

    def __exit__(self, *exc: object) -> None:
        if self._hop is not None and self._stack and self._stack[-1] is self._hop:
            self._stack.pop()


def _traced_call(self: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
    if self not in _wrapped_ops:
        _wrap_op(self)
    rec = _current()
    if rec is not None:
        rec._pending_call = True
    elif _live is not None:
        _local.live_pending = True
    return _ORIGINAL_CALL(self, *args, **kwargs)


_ORIGINAL_CALL = OperatorHandle.__call__
_ORIGINAL_REDISPATCH = OperatorHandle.redispatch

# Note [Lazy trace tables]: enabling a trace does not re-make the tables of the hundreds of
# operators at once (seconds): it empties their memos, so that every call reaches the patched
# ``__call__``/``redispatch``, which re-makes an operator's slots with the tracer's wrappers the
# first time the operator runs (``_wrap_op``). ``_wrapped_ops`` holds the operators whose slots are
# all wrapped; ``_touched_ops`` also those of which a registration meanwhile rebuilt (and so
# wrapped) only some slots, which still need ``_wrap_op`` on their first call. Disabling re-makes
# only the touched ones.
_wrapped_ops: set[OperatorHandle] = set()
_touched_ops: set[OperatorHandle] = set()


def _wrap_op(op: OperatorHandle) -> None:
    with get_dispatcher()._lock:  # a registration in another thread must not swap in a table built before
        if _enabled and op not in _wrapped_ops:
            op._rewrap()
            _wrapped_ops.add(op)


def _traced_redispatch(self: OperatorHandle, keyset: Any, *args: Any, **kwargs: Any) -> Any:
    if self not in _wrapped_ops:
        _wrap_op(self)
    return _ORIGINAL_REDISPATCH(self, keyset, *args, **kwargs)


def _forget_memos() -> None:
    """Empty every operator's memos, so calls take the (patched) general path."""
    dispatcher = get_dispatcher()
    with dispatcher._lock:
        for op in list(dispatcher._ops.values()):
            op._forget_memos()


def _unwrap_all() -> None:
    with get_dispatcher()._lock:
        for op in list(_touched_ops):
            op._rewrap()
        _wrapped_ops.clear()
        _touched_ops.clear()


def enable() -> None:
    """Wrap every table slot so hops can be recorded (idempotent, counted)."""
    global _enabled
    with _lock:
        _enabled += 1
        if _enabled == 1:
            _operator.slot_wrapper = _wrap_slot
            OperatorHandle.__call__ = _traced_call  # type: ignore[method-assign]
            OperatorHandle.redispatch = _traced_redispatch  # type: ignore[method-assign]
            _patch_guards(True)
            _engine().trace_frame = _Frame  # the engine's [backward] frames
            _forget_memos()  # See Note [Lazy trace tables]


def disable() -> None:
    """Undo one ``enable()``; the last one restores the plain tables (zero cost again)."""
    global _enabled
    with _lock:
        if _enabled == 0:
            return
        _enabled -= 1
        if _enabled == 0:
            _operator.slot_wrapper = None
            OperatorHandle.__call__ = _ORIGINAL_CALL  # type: ignore[method-assign]
            OperatorHandle.redispatch = _ORIGINAL_REDISPATCH  # type: ignore[method-assign]
            _patch_guards(False)
            _engine().trace_frame = None
            _unwrap_all()


def _engine() -> Any:
    from .autograd import graph

    return graph


def is_enabled() -> bool:
    return _enabled > 0


class trace:  # noqa: N801 - used like a function: ``with dispatchcore.trace() as t:``
    """Record every dispatch hop in this thread while the block runs.

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.ones(2, requires_grad=True)
        >>> with dc.trace() as t:
        ...     y = x * 2
        >>> [(h.kind, h.op, h.key.name) for h in t.hops()][:2]
        [('call', 'aten::mul.Tensor', 'AutogradCPU'), ('redispatch', 'aten::mul.Tensor', 'CPU')]
    """

    def __init__(self) -> None:
        self.trace = Trace()

    def __enter__(self) -> Trace:
        enable()
        _recorders().append(self.trace)
        return self.trace

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        stack = _recorders()
        if stack and stack[-1] is self.trace:
            stack.pop()
        disable()


# --- guards: recorded as events while tracing -----------------------------------------------------
_guard_originals: dict[tuple[type, str], Any] = {}


def _guard_classes() -> list[type]:
    """The classes whose own ``__enter__``/``__exit__`` are the guards' methods.

    Besides the bases, every subclass whose ``__enter__`` is a generated closure (Note [Guard
    closures], tls.py): those live in each subclass's own dict. A subclass's hand-written
    ``__enter__`` is not wrapped, so a guard calling its base's is recorded once.
    """
    from . import tls
    from .autograd import grad_mode

    bases = [tls._ExcludeBits, grad_mode._GradModeGuard]
    closures = []
    stack = list(bases)
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if getattr(sub.__dict__.get("__enter__"), "guard_closure", False):
                closures.append(sub)
    return [*bases, *closures, tls.IncludeDispatchKeyGuard, tls.ForceDispatchKeyGuard,
            tls.ExcludeDispatchKeyGuard, grad_mode.inference_mode]


def _patch_guards(on: bool) -> None:
    if not on:  # put back exactly what was wrapped
        for (cls, name), original in _guard_originals.items():
            setattr(cls, name, original)
        _guard_originals.clear()
        return
    for cls in _guard_classes():
        for name in ("__enter__", "__exit__"):
            if name in cls.__dict__ and (cls, name) not in _guard_originals:
                original = cls.__dict__[name]
                _guard_originals[(cls, name)] = original
                setattr(cls, name, _guard_wrapper(original, name))


def _guard_wrapper(original: Any, name: str) -> Any:
    def wrapped(self: Any, *args: Any) -> Any:
        before = tls_get()
        result = original(self, *args)
        rec = _current()
        if rec is not None:
            after = tls_get()
            rec._event("guard_enter" if name == "__enter__" else "guard_exit", type(self).__name__,
                       guard=type(self).__name__, included_before=before[0], excluded_before=before[1],
                       included_after=after[0], excluded_after=after[1])
            if rec._stack:  # the state the current hop's kernel now runs under (Note [Inline guards])
                rec._stack[-1].tls = (after[0], after[1])
        return result

    return wrapped


# --- the live printer: DISPATCHCORE_SHOW_DISPATCH_TRACE=1 -----------------------------------------
def _print_hop(hop: Hop) -> None:
    if hop.kind == "backward":
        sys.stderr.write(" " * (hop.depth + 1) + f"[backward] {hop.op}\n")
        return
    sys.stderr.write(" " * (hop.depth + 1) + f"[{hop.kind}] op=[{hop.op}], key=[{hop.key.name}]\n")


def show_dispatch_trace(on: bool = True) -> None:
    """Print every hop live, in the shape of PyTorch's debug-build ``TORCH_SHOW_DISPATCH_TRACE``."""
    global _live
    if on and _live is None:
        _live = _print_hop
        enable()
    elif not on and _live is not None:
        _live = None
        disable()


if os.environ.get("DISPATCHCORE_SHOW_DISPATCH_TRACE") == "1":
    show_dispatch_trace(True)

