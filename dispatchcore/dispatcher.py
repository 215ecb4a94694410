"""The Dispatcher: every operator by name, the global backend fallbacks, and the dump functions.

Mirrors ``aten/src/ATen/core/dispatch/Dispatcher.{h,cpp}``. Registration is the cold path: it
takes one re-entrant lock, validates before it mutates anything, and finishes by swapping each
affected operator's table whole (see Note [Table is derived state] in ``operator.py``). The
dumps (``dumps.py``) print ``torch._C._dispatch_dump`` / ``_dispatch_dump_table``'s formats, so
they diff against PyTorch line for line; only the ``registered at`` locations differ. The
fallbacks registered here are the core's (VariableFallbackKernel.cpp and friends); the ``Python``
key's is registered by ``modes.py``, which owns that key, through ``Library``. Invariant: this
module imports only the registry's own layers (tests/unit/test_layering.py).
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from .dumps import format_state, format_table
from .errors import DispatchError, RegistrationError
from .keys import DispatchKey
from .keyset import AFTER_AUTOGRAD, DispatchKeySet, full_after_bits, key_bits
from .operator import (
    KernelRegistration,
    OperatorHandle,
    SourceLocation,
    fallthrough_kernel,
)
from .resolution import affected_keys

__all__ = [
    "Dispatcher",
    "dump_state",
    "dump_table",
    "find_op",
    "get_autograd_fallback_mode",
    "get_dispatcher",
    "set_autograd_fallback_mode",
]

_D = DispatchKey


@attrs.define(eq=False)
class Dispatcher:
    """The operator registry (``c10::Dispatcher``): one per process, from ``get_dispatcher()``."""

    _ops: dict[str, OperatorHandle] = attrs.field(factory=dict)
    # ``_ops`` again, grouped by ``ns::name`` (an index kept by _add_op and _drop_if_gone, so that
    # ``overloads`` does not walk every operator: the bindings ask it ~600 times at import)
    _by_name: dict[str, dict[str, OperatorHandle]] = attrs.field(factory=dict)
    _fallbacks: dict[DispatchKey, KernelRegistration] = attrs.field(factory=dict)
    # the (registration, "backend fallback") table entry of each fallback, one tuple shared by
    # every operator's table (See Note [Shared table entries] in operator.py)
    _fallback_entries: dict[DispatchKey, tuple[KernelRegistration, str]] = attrs.field(factory=dict)
    _lock: threading.RLock = attrs.field(factory=threading.RLock)
    _def_libraries: dict[str, SourceLocation] = attrs.field(factory=dict)
    _python_impls: set[tuple[str, DispatchKey]] = attrs.field(factory=set)
    _warned_override: bool = False

    # --- lookup -------------------------------------------------------------------------------
    # Reads that walk ``_ops`` or ``_fallbacks`` take the lock: registration on another thread
    # changes their size. ``dict.get`` needs no lock, and the call path reads only its own
    # operator's swapped-whole state (See Note [Table is derived state]).
    def find_op(self, qualname: str) -> OperatorHandle:
        """The defined operator ``ns::name[.overload]`` (``Dispatcher::findSchemaOrThrow``).

        Raises:
            LookupError: no operator has that name, or it has kernels but no schema (an impl
                before its def); the message starts with PyTorch's text.
        """
        op = self._ops.get(_normalize(qualname))
        if op is None or op.schema is None:
            name, _, overload = _normalize(qualname).partition(".")
            found = op is not None and bool(op._kernels)
            raise LookupError(
                f"Could not find schema for {name}.{overload}"
                + (" but we found an implementation; did you forget to def() the operator?"
                   if found else "")
                + f"\n(dispatchcore: no operator named {qualname!r} is defined. Define it with "
                "Library(ns, 'DEF' or 'FRAGMENT').define(schema); "
                "dispatchcore.get_dispatcher().operator_names() lists the defined ones.)"
            )
        return op

    def _handle(self, qualname: str) -> OperatorHandle:
        """The handle for ``qualname``, created empty if needed (call with the lock held)."""
        qualname = _normalize(qualname)
        op = self._ops.get(qualname)
        if op is None:
            op = OperatorHandle(self, qualname)
            self._add_op(op)
        return op

    def _add_op(self, op: OperatorHandle) -> None:
        """Enter a new handle in the registry (call with the lock held)."""
        self._ops[op.qualname] = op
        self._by_name.setdefault(op.name, {})[op.qualname] = op

    def operator_names(self) -> list[str]:
        """Names of all defined operators, sorted."""
        with self._lock:
            return sorted(name for name, op in self._ops.items() if op.schema is not None)

    def operators(self) -> Iterator[OperatorHandle]:
        """Every handle that has a schema or a kernel (a snapshot taken when called)."""
        with self._lock:
            return iter([op for op in self._ops.values() if op.schema is not None or op._kernels])

    def overloads(self, namespace: str, name: str) -> list[OperatorHandle]:
        """Defined overloads of ``namespace::name``, in the order their handles were made."""
        with self._lock:
            return [op for op in self._by_name.get(f"{namespace}::{name}", {}).values() if op.schema is not None]

    @property
    def fallbacks(self) -> dict[DispatchKey, KernelRegistration]:
        """The global backend fallbacks per runtime key (a snapshot)."""
        with self._lock:
            return dict(self._fallbacks)

    # --- registration (cold path: lock held, validate first, then mutate) ---------------------
    # Note [Impl before def]: as in c10, a kernel may be registered for an operator that has no
    # schema yet (or whose def was removed): the handle exists schema-less, holds the kernels and
    # computes its table; dumps print ``schema: (none)``, lookups by name (find_op, ops.<ns>) do
    # not see it, and calling it raises. Each Python kernel keeps the check of its parameters
    # against a schema (``KernelRegistration.check``): ``impl`` runs it when the schema is there,
    # ``register_schema`` runs every kept check before it sets the schema, so a kernel that does
    # not fit fails the ``define`` with the impl-time error and the registry stays as it was.
    # When its last registration goes, the handle leaves ``_ops``, as c10 erases the
    # OperatorEntry: dumps print "" and lookups fail, and the registry keeps a constant size in
    # a process that makes and destroys operators. A handle kept elsewhere is detached: it keeps
    # its last table and raises when called (no schema); a new registration makes a new handle.
    # So the handle of every live registration is the one in ``_ops``.
    def register_schema(self, schema: Any, where: SourceLocation, alias_analysis: str = "",
                        tags: tuple[Any, ...] = ()) -> OperatorHandle:
        with self._lock:
            qualname = str(schema.name)
            op = self._ops.get(qualname)
            if op is not None and op.schema is not None:
                raise RegistrationError(
                    f"Tried to register an operator ({schema}) with the same name and overload "
                    "name multiple times. Each overload's schema should only be registered with a "
                    f"single call to def(). Duplicate registration: registered at {where}. Original "
                    f"registration: registered at {op.def_location}"
                )
            if op is not None:  # See Note [Impl before def]: validate first, then mutate
                for stack in op._kernels.values():
                    for reg in stack:
                        if reg.check is not None:
                            reg.check(schema)
            op = self._handle(qualname)
            op._set_schema(schema, where, alias_analysis, tags)
            return op

    def deregister_schema(self, op: OperatorHandle) -> None:
        with self._lock:
            op._set_schema(None, None)
            self._drop_if_gone(op)

    def register_kernel(self, op: OperatorHandle, reg: KernelRegistration) -> None:
        with self._lock:
            stack = op._kernels.get(reg.key)
            if stack and not self._warned_override and reg.key not in (_D.Meta, _D.MTIA):
                self._warned_override = True
                warnings.warn(_override_warning(op, reg, stack[0]), UserWarning,
                              stacklevel=_user_stacklevel())
            op._kernels[reg.key] = [reg, *(stack or ())]
            op._rebuild(affected_keys(reg.key))

    def deregister_kernel(self, op: OperatorHandle, reg: KernelRegistration) -> None:
        with self._lock:
            stack = [r for r in op._kernels.get(reg.key, ()) if r is not reg]
            if stack:
                op._kernels[reg.key] = stack
            else:
                op._kernels.pop(reg.key, None)
            op._rebuild(affected_keys(reg.key))
            self._drop_if_gone(op)

    def _drop_if_gone(self, op: OperatorHandle) -> None:
        """Remove a handle without schema or kernel from the registry (See Note [Impl before def])."""
        if op.schema is None and not op._kernels and self._ops.get(op.qualname) is op:
            del self._ops[op.qualname]
            same_name = self._by_name[op.name]
            del same_name[op.qualname]
            if not same_name:
                del self._by_name[op.name]

    def register_fallback(self, reg: KernelRegistration) -> None:
        with self._lock:
            previous = self._fallbacks.get(reg.key)
            if previous is not None:
                raise RegistrationError(
                    "Tried to register multiple backend fallbacks for the same dispatch key "
                    f"{reg.key.name}; previous registration {previous.debug}, new registration "
                    f"{reg.debug}. Destroy the Library that registered the first one before "
                    "registering another."
                )
            self._fallbacks[reg.key] = reg
            self._fallback_entries[reg.key] = (reg, "backend fallback")
            self._refresh_key(reg.key)

    def deregister_fallback(self, reg: KernelRegistration) -> None:
        with self._lock:
            if self._fallbacks.get(reg.key) is reg:
                del self._fallbacks[reg.key]
                del self._fallback_entries[reg.key]
                self._refresh_key(reg.key)

    def _refresh_key(self, key: DispatchKey) -> None:
        for op in list(self._ops.values()):
            op._rebuild((key,))


_DISPATCHER = Dispatcher()


def get_dispatcher() -> Dispatcher:
    """The process-wide dispatcher (``c10::Dispatcher::singleton()``)."""
    return _DISPATCHER


def find_op(qualname: str) -> OperatorHandle:
    """The defined operator ``ns::name[.overload]`` (``Dispatcher::findSchemaOrThrow``)."""
    return _DISPATCHER.find_op(qualname)


def _normalize(qualname: str) -> str:
    return qualname[:-8] if qualname.endswith(".default") else qualname


def _as_op(op: OperatorHandle | str) -> OperatorHandle | None:
    """The handle named ``op``; None for a name nothing was registered to (torch's dumps print "")."""
    if isinstance(op, OperatorHandle):
        return op
    return _DISPATCHER._ops.get(_normalize(op))


# --- dumps ------------------------------------------------------------------------------------
def dump_table(qualname: OperatorHandle | str) -> str:
    """The computed dispatch table, as ``torch._C._dispatch_dump_table(qualname)`` prints it.

    One line per runtime key that has a kernel, in PyTorch's order:
    ``<Key>: [fallthrough ]registered at <file>:<line> [<label>]``, where the label says which
    rule chose the kernel (``kernel``, ``math kernel``, ``default backend kernel``,
    ``autograd kernel``, ``backend fallback``, ...). An operator with neither schema nor
    kernel (never registered, or all its registrations removed) prints ``""``, as in torch.
    """
    from .plugins import load_backends

    load_backends()  # inspecting a table is a first use too: show the backends' kernels
    op = _as_op(qualname)
    return format_table(op) if op is not None else ""


def dump_state(qualname: OperatorHandle | str) -> str:
    """Schema and registrations, as ``torch._C._dispatch_dump(qualname)`` prints them.

    A schema-less operator (an impl before its def, or a def removed while kernels stay)
    prints ``schema: (none)`` and no ``debug``/``alias analysis kind`` lines; an operator with
    neither schema nor kernel prints ``""``, as in torch.
    """
    from .plugins import load_backends

    load_backends()
    op = _as_op(qualname)
    return format_state(op) if op is not None else ""


def _override_warning(op: OperatorHandle, new: KernelRegistration, old: KernelRegistration) -> str:
    return (
        "Warning only once for all operators,  other operators may also be overridden.\n"
        "  Overriding a previously registered kernel for the same operator and the same dispatch key\n"
        f"  operator: {op.schema if op.schema is not None else op.qualname}\n"
        f"    registered at {op.def_location}\n"
        f"  dispatch key: {new.key.name}\n"
        "  previous kernel: no debug info\n"
        f"       new kernel: {new.debug} (Triggered internally at "
        "aten/src/ATen/core/dispatch/OperatorEntry.cpp:208.)"
    )


def _user_stacklevel() -> int:
    """``warnings.warn`` stacklevel of the first frame outside dispatchcore's registration code."""
    frame, level = sys._getframe(2), 2  # level 1 is the function that calls warnings.warn
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
        ("dispatchcore._library", "dispatchcore.library", "dispatchcore.operator", "dispatchcore.dispatcher")
    ):
        frame, level = frame.f_back, level + 1
    return level


# --- built-in backend fallbacks (VariableFallbackKernel.cpp): registered through the same registry
_AUTOGRAD_FALLBACK_MODE = "warn"


def get_autograd_fallback_mode() -> str:
    """The global autograd fallback mode (``torch._C._get_autograd_fallback_mode``)."""
    return _AUTOGRAD_FALLBACK_MODE


def set_autograd_fallback_mode(mode: str) -> None:
    """Set the autograd fallback mode: ``"warn"`` (default) or ``"nothing"``, as in PyTorch.

    Raises:
        RuntimeError: ``NYI: mode='error'`` for ``"error"``, as PyTorch does; ValueError otherwise.
    """
    global _AUTOGRAD_FALLBACK_MODE
    if mode == "error":
        raise RuntimeError("NYI: mode='error'")
    if mode not in ("warn", "nothing"):
        raise ValueError(f"Unsupported autograd fallback mode {mode!r}; use 'warn' or 'nothing'.")
    _AUTOGRAD_FALLBACK_MODE = mode


# The autograd package installs the graph-recording part of the "warn" mode here
# (autograd_not_implemented_fallback.cpp);
# without it (no tensor requires grad) both modes simply redispatch below autograd.
autograd_fallback_hook: list[Callable[..., Any]] = []


def _autograd_fallback(ks: DispatchKeySet, op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
    """basicAutogradNotImplementedFallback: run the op below autograd (no TLS guard, as in c10)."""
    if _AUTOGRAD_FALLBACK_MODE == "warn" and autograd_fallback_hook:
        return autograd_fallback_hook[0](ks, op, args, kwargs)
    return op.redispatch(int(ks) & AFTER_AUTOGRAD, *args, **kwargs)


def _bind_autograd_fallback(op: OperatorHandle) -> Callable[..., Any]:
    """The same fallback as a raw-keyset kernel bound to ``op``, with redispatch inlined.

    Every operator without an autograd kernel passes through here on each call, so it saves
    the boxed wrapper, the DispatchKeySet and one Python call of ``op.redispatch``.
    """

    def autograd_fallback(bits: int, *args: Any, **kwargs: Any) -> Any:
        if autograd_fallback_hook and _AUTOGRAD_FALLBACK_MODE == "warn":
            for a in args:  # only an argument that requires grad can need the warning node
                rg = getattr(a, "_requires_grad", None)
                if rg or (rg is None and type(a) in (list, tuple) and any(
                        getattr(x, "_requires_grad", False) for x in a)):
                    return autograd_fallback_hook[0](DispatchKeySet._from_bits(bits), op, args, kwargs)
            if kwargs and any(getattr(a, "_requires_grad", False) for a in kwargs.values()):
                return autograd_fallback_hook[0](DispatchKeySet._from_bits(bits), op, args, kwargs)
        bits &= AFTER_AUTOGRAD
        try:  # op.redispatch's memo lookup, inlined (See Note [Dispatch memo])
            fn, first = op._dispatch[3][bits]
        except KeyError:
            pass  # a miss: redispatch below, outside the handler (See Note [No chained errors])
        else:
            if kwargs:
                return fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
            return fn(*args) if first is None else fn(first, *args)
        return op.redispatch(bits, *args, **kwargs)

    return autograd_fallback


def _meta_fallback(op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
    from . import plugins

    if plugins.backends_pending():  # lazy discovery: the Meta backend may not be loaded yet
        plugins.load_backends()
        return op(*args, **kwargs)
    raise DispatchError(
        f"{op.qualname}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered. You may have run into this message while using an "
        "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
        "operator with those APIs you'll need to add a fake impl. Please see the following for "
        "next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html\n"
        f"dispatchcore: register one with Library({op.qualname.partition('::')[0]!r}, 'IMPL')"
        f".impl({op.qualname.partition('::')[2]!r}, meta_kernel, 'Meta')."
    )


def _pass_through(key: DispatchKey) -> Callable[..., Any]:
    """A fallback for a key dispatchcore does not model: behave as if the feature were inactive."""
    # FULL_AFTER always re-adds PythonDispatcher: drop the key itself, or PythonDispatcher would
    # redispatch to itself forever (c10's pythonDispatcherFallback uses ks.remove(PythonDispatcher))
    below = full_after_bits(key) & ~key_bits(key)

    def pass_through(ks: DispatchKeySet, op: OperatorHandle, *args: Any, **kwargs: Any) -> Any:
        return op.redispatch(ks._bits & below, *args, **kwargs)

    def bind(op: OperatorHandle) -> Callable[..., Any]:
        """The fast form the table stores: the raw key-set int first, no boxing (Library.fallback's ``_bind``)."""
        redispatch = op.redispatch

        def pass_through_bound(bits: int, *args: Any, **kwargs: Any) -> Any:
            return redispatch(bits & below, *args, **kwargs)

        def bind_keyset(bits: int) -> Callable[..., Any]:
            # Note [Bound kernels] (operator.py): bound to a key set, passing through is calling
            # what the redispatch resolves to, so the call memo holds that kernel itself
            return op.bound_redispatch(bits & below)

        bind_keyset.kernel = pass_through_bound  # type: ignore[attr-defined]
        pass_through_bound.bind_keyset = bind_keyset  # type: ignore[attr-defined]
        pass_through_bound.__qualname__ = f"pass_through[{key.name}][{op.qualname}]"
        return pass_through_bound

    pass_through.__qualname__ = f"pass_through[{key.name}]"
    pass_through.bind = bind  # type: ignore[attr-defined]
    return pass_through


# Keys with PyTorch 2.13 built-in fallbacks, as _dispatch_dump_table lists them
# (OperatorEntry.cpp's dumpComputedTable; VariableFallbackKernel.cpp).
_FALLTHROUGH_KEYS = (
    "BackendSelect", "ADInplaceOrView", "AutocastCPU", "AutocastMTIA", "AutocastMAIA",
    "AutocastXPU", "AutocastMPS", "AutocastCUDA", "FuncTorchVmapMode", "VmapMode",
)
_AUTOGRAD_FALLBACK_KEYS = (
    "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradXLA", "AutogradMPS", "AutogradXPU",
    "AutogradHPU", "AutogradLazy", "AutogradMTIA", "AutogradMAIA", "AutogradPrivateUse1",
    "AutogradMeta",
)
_PASS_THROUGH_KEYS = (
    "FuncTorchDynamicLayerBackMode", "Functionalize", "Conjugate", "Negative",
    "ZeroTensor", "Tracer", "FuncTorchBatched", "BatchedNestedTensor", "Batched",
    "FuncTorchGradWrapper", "PythonTLSSnapshot", "FuncTorchDynamicLayerFrontMode", "PreDispatch",
    "PythonDispatcher",
)


def _builtin(key: str, kernel: Callable[..., Any], with_keyset: bool,
             bind: Callable[[OperatorHandle], Callable[..., Any]] | None = None) -> None:
    line = sys._getframe(1).f_lineno  # the registering line in this file, as torch's dumps show
    _DISPATCHER.register_fallback(KernelRegistration(
        key=DispatchKey[key], kernel=kernel, with_keyset=with_keyset, library="_",
        where=SourceLocation("dispatchcore/dispatcher.py", line), boxed_fallback=True, bind=bind,
    ))


def _register_builtin_fallbacks() -> None:
    _builtin("Meta", _meta_fallback, False)
    for key in _FALLTHROUGH_KEYS:
        _builtin(key, fallthrough_kernel, False)
    for key in _AUTOGRAD_FALLBACK_KEYS:
        _builtin(key, _autograd_fallback, True, _bind_autograd_fallback)
    for key in _PASS_THROUGH_KEYS:
        kernel = _pass_through(DispatchKey[key])
        _builtin(key, kernel, True, kernel.bind)  # type: ignore[attr-defined]


_register_builtin_fallbacks()
