"""The public registration API: ``Library`` with define/impl/fallback, and registration handles.

Mirrors ``torch/library.py`` (``Library``, ``fallthrough_kernel``) on top of the C++ semantics of
``torch/library.h`` (TORCH_LIBRARY / _IMPL / _FRAGMENT). Invariant: every registration is
validated before the registry changes, so a failed call leaves it exactly as it was, and
destroying a Library removes its registrations newest first, restoring every previous table.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any

import attrs

from .dispatcher import _DISPATCHER, Dispatcher
from .errors import RegistrationError
from .keys import (
    DispatchKey,
    is_alias_key,
    is_per_backend_functionality,
    is_runtime_key,
    parse_dispatch_key,
)
from .operator import KernelRegistration, OperatorHandle, SourceLocation, fallthrough_kernel, protocol_attr
from .schema import parse_schema, python_default

__all__ = ["Library", "RegistrationHandle", "fallthrough_kernel"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
# c10's toString(Library::Kind), as the registration errors name the enclosing block
_BLOCK_NAMES = {"DEF": "TORCH_LIBRARY", "FRAGMENT": "TORCH_LIBRARY_FRAGMENT", "IMPL": "TORCH_LIBRARY_IMPL"}
_RESERVED_NAMESPACES = ("prim",)
_ALIAS_ANALYSIS = ("", "FROM_SCHEMA", "CONSERVATIVE")


@attrs.define(eq=False)
class RegistrationHandle:
    """Undoes one registration (c10's ``RegistrationHandleRAII``); ``remove()`` is idempotent."""

    _undo: Callable[[], None] | None
    description: str

    def remove(self) -> None:
        """Remove the registration and recompute the affected tables."""
        undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    @property
    def active(self) -> bool:
        return self._undo is not None

    def __repr__(self) -> str:
        state = "active" if self._undo is not None else "removed"
        return f"<RegistrationHandle {self.description} ({state})>"


def _destroy_all(handles: list[RegistrationHandle]) -> None:
    while handles:
        handles.pop().remove()


def _call(fn: Callable[..., Any], *args: Any) -> Callable[[], None]:
    """An undo callback that does not reference the Library.

    The Library's finalizer keeps its handles alive; an undo closure over ``self`` would keep
    the Library alive too, so garbage collection could never remove its registrations.
    """
    return lambda: fn(*args)


class Library:
    """A block of registrations for one namespace, like ``torch.library.Library``.

    Args:
        ns: the namespace (``"aten"``, ``"myops"``; ``"_"`` for fallbacks).
        kind: ``"DEF"`` (the one block that defines the namespace), ``"FRAGMENT"`` (more
            definitions, any number of them) or ``"IMPL"`` (kernels only).
        dispatch_key: default key for ``impl``; an IMPL library with a key accepts only that key.

    Destroying the library (``lib._destroy()``, leaving a ``with`` block, or garbage collection)
    removes every registration it made, newest first.

    Example:
        >>> import dispatchcore as dc
        >>> with dc.Library("doc_lib", "DEF") as lib:
        ...     lib.define("neg(Tensor x) -> Tensor")
        ...     @lib.impl("neg", dispatch_key="CPU")
        ...     def neg_cpu(x):
        ...         return "negated"
        ...     print(dc.dump_table("doc_lib::neg").splitlines()[0].split(": ")[0])
        'neg'
        CPU
    """

    def __init__(self, ns: str, kind: str, dispatch_key: DispatchKey | str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        if not ns or not (ns.replace("_", "a").isalnum()):
            raise ValueError(f"Invalid namespace {ns!r}: use an identifier such as 'myops'.")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = parse_dispatch_key(dispatch_key) if dispatch_key else None
        self.location = SourceLocation.of_caller(2)
        self._dispatcher: Dispatcher = _DISPATCHER
        self._handles: list[RegistrationHandle] = []
        if kind == "DEF":
            with self._dispatcher._lock:
                previous = self._dispatcher._def_libraries.get(ns)
                if previous is not None:
                    raise RegistrationError(
                        f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                        "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                        "you were trying to specify implementations, consider using "
                        "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                        "define operators for a single namespace in a distributed way, you can use "
                        "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration "
                        f"of TORCH_LIBRARY was registered at {previous}; latest registration was "
                        f"registered at {self.location}"
                    )
                self._dispatcher._def_libraries[ns] = self.location
                self._handles.append(RegistrationHandle(
                    _call(self._dispatcher._def_libraries.pop, ns, None), f"DEF {ns}"))
        # Like torch.library, garbage collection of the Library undoes its registrations.
        self._finalizer = weakref.finalize(self, _destroy_all, self._handles)

    # --- define -------------------------------------------------------------------------------
    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        """Define an operator from a schema string; returns its name without overload.

        Example:
            >>> import dispatchcore as dc
            >>> lib = dc.Library("doc_def", "DEF")
            >>> lib.define("scale.Tensor(Tensor x, Tensor s, *, float eps=0.0) -> Tensor")
            'scale'
            >>> lib._destroy()
        """
        if self.kind == "IMPL":
            raise RegistrationError(
                f'def("{schema.partition("(")[0]}"): Cannot define an operator inside of a '
                "TORCH_LIBRARY_IMPL block.  All def()s should be placed in the (unique) "
                "TORCH_LIBRARY block for their namespace.  (Error occurred while processing "
                f"TORCH_LIBRARY_IMPL block at {self.location})"
            )
        if alias_analysis not in _ALIAS_ANALYSIS:
            raise RegistrationError(f"Invalid alias_analysis type {alias_analysis}")
        parsed = parse_schema(schema, allow_typevars=False)
        name = parsed.name
        if name.namespace and name.namespace != self.ns:
            block = _BLOCK_NAMES[self.kind]
            raise RegistrationError(
                f"Explicitly provided namespace ({name.namespace}) in schema string does not match "
                f"namespace of enclosing {block} block ({self.ns}).  Move this definition to the "
                "(unique) TORCH_LIBRARY block corresponding to this namespace (and consider deleting "
                "the namespace from your schema string.)  (Error occurred while processing "
                f"{block} block at {self.location})"
            )
        parsed = attrs.evolve(parsed, name=attrs.evolve(name, namespace=self.ns))
        where = SourceLocation.of_caller(2)
        op = self._dispatcher.register_schema(parsed, where, alias_analysis, tuple(tags or ()))
        self._handles.append(RegistrationHandle(
            _call(self._dispatcher.deregister_schema, op), f"def {parsed.name}"))
        return name.name

    # --- impl ---------------------------------------------------------------------------------
    def impl(self, op_name: str, fn: Callable[..., Any] | str | None = None,
             dispatch_key: DispatchKey | str = "", *, with_keyset: bool = False,
             allow_override: bool = True, _raw_keyset: bool = False) -> Any:
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``.

        Args:
            op_name: ``"name"`` or ``"name.overload"`` in this namespace (``ns::`` optional).
            fn: the kernel; it is called with the operator's arguments (after the key set,
                when ``with_keyset``). Omit it to use ``impl`` as a decorator.
            dispatch_key: a runtime key (``"CPU"``, ``"AutogradCPU"``) or an alias
                (``"Autograd"``, ``"CompositeImplicitAutograd"``, ...); ``""`` means the
                library's key, else ``CompositeImplicitAutograd``, as in PyTorch.
            with_keyset: pass the dispatch ``DispatchKeySet`` as the first argument, for
                kernels that redispatch.
            allow_override: if False, refuse a second Python kernel for the same op and key.

        Returns:
            A ``RegistrationHandle`` (or, as a decorator, the function unchanged).

        Raises:
            RegistrationError: unknown operator or key, a kernel whose parameters do not fit the
                schema, or a refused override. Nothing is registered then.
        """
        if isinstance(fn, (str, DispatchKey)) or fn is None:
            key = fn if fn is not None else dispatch_key

            def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
                self.impl(op_name, func, key, with_keyset=with_keyset, allow_override=allow_override)
                return func

            return decorator
        where = SourceLocation.of_caller(2)
        op, key = self._resolve_impl(op_name, dispatch_key)
        if fn is not fallthrough_kernel:
            _check_kernel(op, fn, key, with_keyset)
        kernel: Callable[..., Any] = fn
        as_kernel = protocol_attr(fn, "__dispatchcore_as_kernel__")
        if as_kernel is not None:  # an autograd.Function subclass: its apply is the kernel
            kernel = as_kernel(op)
        python_key = (op.qualname, key)
        if not allow_override and python_key in self._dispatcher._python_impls:
            raise RegistrationError(
                "This is not allowed since there's already a kernel registered from python "
                f"overriding {op.qualname.partition('::')[2]}'s behavior for {key.name} dispatch key and "
                f"{self.ns} namespace."
            )
        # _raw_keyset (internal): the kernel takes the raw key-set int, skipping the wrapper object
        reg = KernelRegistration(key=key, kernel=kernel, with_keyset=with_keyset, library=self.ns,
                                 where=where, bind=(lambda op: kernel) if _raw_keyset else None)
        self._dispatcher.register_kernel(op, reg)
        self._dispatcher._python_impls.add(python_key)

        dispatcher = self._dispatcher  # undo closures must not hold the Library (see _call)

        def undo() -> None:
            dispatcher.deregister_kernel(op, reg)
            if not op._kernels.get(key):
                dispatcher._python_impls.discard(python_key)

        handle = RegistrationHandle(undo, f"impl {op.qualname} at {key.name}")
        self._handles.append(handle)
        return handle

    def _resolve_impl(self, op_name: str, dispatch_key: DispatchKey | str) -> tuple[OperatorHandle, DispatchKey]:
        ns, sep, rest = op_name.rpartition("::")
        if sep and ns != self.ns:
            block = _BLOCK_NAMES[self.kind]
            raise RegistrationError(
                f'impl("{op_name}", ...): Explicitly provided namespace ({ns}) in operator name '
                f"does not match namespace of enclosing {block} block ({self.ns}).  Move "
                f"this definition to the {block} block corresponding to this namespace "
                "(and consider deleting the namespace from your schema string.)  (Error occurred "
                f"while processing {block} block at {self.location})"
            )
        if "(" in rest:
            raise RegistrationError(
                f"impl() takes an operator name such as 'add.Tensor', not a schema: {op_name!r}")
        key = _registrable_key(dispatch_key or self.dispatch_key or DispatchKey.CompositeImplicitAutograd,
                               op_name)
        if self.kind == "IMPL" and self.dispatch_key is not None and key != self.dispatch_key:
            raise RegistrationError(
                f'impl("{rest}", ...): Explicitly provided dispatch key ({key.name}) is inconsistent '
                "with the dispatch key of the enclosing TORCH_LIBRARY_IMPL block "
                f"({self.dispatch_key.name}).  Please declare a separate TORCH_LIBRARY_IMPL block "
                "for this dispatch key and move your impl() there.  (Error occurred while "
                f"processing TORCH_LIBRARY_IMPL block at {self.location})"
            )
        qualname = f"{self.ns}::{rest}"
        op = self._dispatcher._ops.get(qualname[:-8] if qualname.endswith(".default") else qualname)
        if op is None or op.schema is None:
            raise RegistrationError(
                f"impl({rest!r}, ...): operator {qualname} has not been defined. Define it first "
                f"with Library({self.ns!r}, 'DEF' or 'FRAGMENT').define('{rest}(...) -> ...'). "
                "(PyTorch accepts an impl before its def; dispatchcore checks the name and the "
                "kernel's parameters at registration time, which needs the schema.)"
            )
        return op, key

    # --- fallback -----------------------------------------------------------------------------
    def fallback(self, fn: Callable[..., Any], dispatch_key: DispatchKey | str = "", *,
                 with_keyset: bool = False) -> RegistrationHandle:
        """Register a boxed fallback for every operator at one key (``m.fallback(...)``).

        The kernel is called as ``fn(op, *args, **kwargs)``, or ``fn(keyset, op, *args, **kwargs)``
        with ``with_keyset=True``; it is used only where an operator has no kernel of its own
        at that key. ``fallthrough_kernel`` makes the key a fallthrough for all operators.
        """
        if self.ns != "_":
            raise RegistrationError(
                'Fallback can only be registered using library fragment on the global namespace "_" '
                f"but it is {self.ns}"
            )
        key = _registrable_key(dispatch_key or self.dispatch_key or "", "fallback")
        if is_alias_key(key):
            raise RegistrationError(
                f"Cannot register a backend fallback for alias key {key.name}: fallbacks are per "
                "runtime key. Register one per runtime key (e.g. 'AutogradCPU') instead.")
        if not callable(fn):
            raise RegistrationError(f"fallback kernel must be callable, got {type(fn).__name__}")
        reg = KernelRegistration(key=key, kernel=fn, with_keyset=with_keyset, library="_",
                                 where=SourceLocation.of_caller(2), boxed_fallback=True)
        self._dispatcher.register_fallback(reg)
        handle = RegistrationHandle(_call(self._dispatcher.deregister_fallback, reg),
                                    f"fallback at {key.name}")
        self._handles.append(handle)
        return handle

    # --- lifetime -----------------------------------------------------------------------------
    def _destroy(self) -> None:
        """Remove every registration of this library, newest first (``Library._destroy``)."""
        _destroy_all(self._handles)

    destroy = _destroy

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._destroy()

    def __repr__(self) -> str:
        key = self.dispatch_key.name if self.dispatch_key else ""
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={key})"


def _registrable_key(key: DispatchKey | str, what: str) -> DispatchKey:
    try:
        key = parse_dispatch_key(key)
    except RuntimeError as e:
        raise RegistrationError(str(e)) from None
    if key == DispatchKey.Undefined:
        return DispatchKey.CompositeImplicitAutograd  # a catch-all kernel, as in c10
    if not (is_alias_key(key) or is_runtime_key(key)) or is_per_backend_functionality(key):
        raise RegistrationError(
            f"{what}: cannot register to {key.name}: it is not a runtime or alias key. Register to "
            "a runtime key such as 'CPU' or 'AutogradCPU', or to an alias such as 'Autograd'."
        )
    return key


def _check_kernel(op: OperatorHandle, fn: Callable[..., Any], key: DispatchKey,
                  with_keyset: bool) -> None:
    """Check at registration that every call the schema allows binds to ``fn``'s parameters."""
    where = f"impl({op.qualname.partition('::')[2]!r}, ..., {key.name!r})"
    if not callable(fn):
        raise RegistrationError(f"{where}: kernel must be callable, got {type(fn).__name__}")
    hook = protocol_attr(fn, "__dispatchcore_kernel_check__")
    if hook is not None:
        hook(op, key, with_keyset)
        return
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return  # builtins such as numpy ufuncs expose no signature; nothing to check
    P = inspect.Parameter
    if with_keyset:
        if not params or params[0].kind not in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD, P.VAR_POSITIONAL):
            raise RegistrationError(f"{where}: with_keyset=True kernels take the DispatchKeySet first.")
        if params[0].kind != P.VAR_POSITIONAL:
            params = params[1:]
    schema = op.schema
    assert schema is not None  # _resolve_impl only returns defined operators
    var_pos = any(p.kind == P.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == P.VAR_KEYWORD for p in params)
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    by_name = {p.name: p for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
    name_of = getattr(fn, "__qualname__", repr(fn))
    schema_pos = [a for a in schema.arguments if not a.kwarg_only]
    if not var_pos and len(positional) < len(schema_pos):
        raise RegistrationError(
            f"{where}: kernel {name_of} accepts {len(positional)} positional argument(s) but the "
            f"schema {schema} passes up to {len(schema_pos)}. Give the kernel one parameter per "
            "schema argument, in order (or *args)."
        )
    for i, p in enumerate(positional):
        if p.default is P.empty and (i >= len(schema_pos) or schema_pos[i].has_default):
            arg_name = schema_pos[i].name if i < len(schema_pos) else None
            raise RegistrationError(
                f"{where}: kernel {name_of} requires parameter {p.name!r}, but the schema {schema} "
                + (f"lets callers omit {arg_name!r}. Give {p.name!r} the schema's default."
                   if arg_name else "has no argument for it.")
            )
        if i < len(schema_pos) and p.default is not P.empty and schema_pos[i].has_default:
            _check_default(where, name_of, p, schema_pos[i])
    for arg in schema.arguments:
        if not arg.kwarg_only:
            continue
        kw_param = by_name.get(arg.name)
        if kw_param is None:
            if not var_kw:
                raise RegistrationError(
                    f"{where}: kernel {name_of} has no parameter {arg.name!r} for the keyword-only "
                    f"argument of {schema}. Add it (after *) or accept **kwargs."
                )
            continue
        if kw_param.default is P.empty and arg.has_default:
            raise RegistrationError(
                f"{where}: kernel {name_of} requires {arg.name!r}, but the schema {schema} lets "
                f"callers omit it. Give it the schema's default."
            )
        if kw_param.default is not P.empty and arg.has_default:
            _check_default(where, name_of, kw_param, arg)
    for p in params:
        if p.kind == P.KEYWORD_ONLY and p.default is P.empty and p.name not in {a.name for a in schema.arguments}:
            raise RegistrationError(
                f"{where}: kernel {name_of} requires keyword {p.name!r}, which {schema} never passes."
            )


def _check_default(where: str, name_of: str, param: inspect.Parameter, arg: Any) -> None:
    expected = python_default(arg)
    actual = param.default
    if isinstance(actual, tuple):
        actual = list(actual)
    if actual != expected and not (expected is None and actual is None):
        raise RegistrationError(
            f"{where}: kernel {name_of} gives {param.name!r} the default {param.default!r}, but the "
            f"schema's default is {expected!r}. Use the schema's default, so that calls that omit "
            "the argument behave the same on every backend."
        )

