"""The registration API: ``Library`` with define/impl/fallback, and registration handles.

Mirrors ``torch/library.py`` (``Library``, ``fallthrough_kernel``, the module functions ``define``
and ``impl``) on top of the C++ semantics of ``torch/library.h`` (TORCH_LIBRARY / _IMPL /
_FRAGMENT). Invariant: every registration is validated before the registry changes, so a failed
call leaves it exactly as it was, and destroying a Library removes its registrations newest
first, restoring every previous table. An impl may come before its def (Note [Impl before def]).
This is the layer just above the registry; ``dispatchcore.library`` is its public face, together
with the high-level ``custom_op`` API (``dispatchcore/custom_ops.py``), which sits above tensors.
"""

from __future__ import annotations

import inspect
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .dispatcher import _DISPATCHER, Dispatcher
from .dtypes import privateuse1_backend_name
from .errors import RegistrationError
from .keys import (
    DispatchKey,
    is_alias_key,
    is_per_backend_functionality,
    is_runtime_key,
    parse_dispatch_key,
)
from .operator import KernelRegistration, OperatorHandle, SourceLocation, fallthrough_kernel, protocol_attr
from .schema import FunctionSchema, parse_schema, python_default

__all__ = ["Library", "RegistrationHandle", "define", "fallthrough_kernel", "impl"]

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

    Destroying the library (``lib.destroy()``, leaving a ``with`` block, or garbage collection)
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
        # torch 2.13 takes any string (``Library("a.b", "DEF")`` defines ``a.b::f``, reached as
        # ``getattr(torch.ops, "a.b")``); dispatchcore refuses only what cannot name a namespace
        # in a qualified name: not a string, empty, or holding the "::" separator
        if not isinstance(ns, str) or not ns or "::" in ns:
            raise ValueError(f"Invalid namespace {ns!r}: use an identifier such as 'myops'.")
        if ns == "_" and kind != "IMPL":  # the wildcard namespace holds fallbacks, not operators
            where = SourceLocation.of_caller(2)
            if kind == "DEF":  # torch fails on an empty std::optional here
                raise RegistrationError(
                    "bad optional access (dispatchcore: Library('_', 'DEF') cannot define the "
                    "wildcard namespace _; register fallbacks with Library('_', 'IMPL'))  (Error "
                    f"occurred while processing TORCH_LIBRARY block at {where})")
            raise RegistrationError(
                "TORCH_LIBRARY_FRAGMENT: cannot define TORCH_LIBRARY_FRAGMENT with the wildcard "
                "namespace _ (every TORCH_LIBRARY_FRAGMENT defines operators for a distinct "
                "namespace!) Did you mean to use TORCH_LIBRARY_IMPL instead?  (Error occurred while "
                f"processing TORCH_LIBRARY_FRAGMENT block at {where})")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = _parse_key(dispatch_key) if dispatch_key else None
        self.location = SourceLocation.of_caller(2)
        self._dispatcher: Dispatcher = _DISPATCHER
        self._handles: list[RegistrationHandle] = []
        self._destroyed = False
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
            >>> lib.destroy()
        """
        if alias_analysis not in _ALIAS_ANALYSIS:
            raise RegistrationError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_alive()
        if self.kind == "IMPL":
            raise RegistrationError(
                f'def("{schema.partition("(")[0]}"): Cannot define an operator inside of a '
                "TORCH_LIBRARY_IMPL block.  All def()s should be placed in the (unique) "
                "TORCH_LIBRARY block for their namespace.  (Error occurred while processing "
                f"TORCH_LIBRARY_IMPL block at {self.location})"
            )
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
        # kernels registered before this def are checked against the schema first; a kernel
        # that does not fit raises the impl-time RegistrationError and nothing is defined
        with self._dispatcher._lock:  # a concurrent _destroy sees this definition's handle, or refuses it
            self._check_alive()
            op = self._dispatcher.register_schema(parsed, where, alias_analysis, tuple(tags or ()))
            self._handles.append(RegistrationHandle(
                _call(_undefine, self._dispatcher, op), f"def {parsed.name}"))
        return name.name

    # --- impl ---------------------------------------------------------------------------------
    def impl(self, op_name: str | OperatorHandle, fn: Callable[..., Any] | str | None = None,
             dispatch_key: DispatchKey | str = "", *, with_keyset: bool = False,
             allow_override: bool = True, _raw_keyset: bool = False, _builtin: bool = False) -> Any:
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``.

        Args:
            op_name: ``"name"`` or ``"name.overload"`` in this namespace (``ns::`` optional), or
                an operator object (``dc.ops.ns.name.overload``), as ``torch.library`` takes an
                ``OpOverload``. The operator need not be defined yet: as in PyTorch, an impl
                before its def makes a schema-less entry that holds the kernel.
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
            TypeError: ``fn`` is not callable (PyTorch's text).
            RegistrationError: unknown key, a kernel whose parameters do not fit the schema
                (checked now if the operator is defined, else when ``define`` brings the
                schema), a refused override, or a Meta kernel for an operator with a
                CompositeImplicitAutograd kernel. Nothing is registered then.
            AssertionError: the Library was destroyed.
        """
        if isinstance(fn, (str, DispatchKey)) or fn is None:
            key = fn if fn is not None else dispatch_key

            def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
                self.impl(op_name, func, key, with_keyset=with_keyset, allow_override=allow_override)
                return func

            return decorator
        if not callable(fn):  # torch.library's first check, in its words
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        where = SourceLocation.of_caller(2)
        name = _op_name(op_name, "impl")
        qualname, key = self._resolve_impl(name, dispatch_key)
        python_key = (qualname, key)
        dispatcher = self._dispatcher  # undo closures must not hold the Library (see _call)
        with dispatcher._lock:  # check and register in one step: a concurrent define sees both or neither
            if not allow_override and python_key in dispatcher._python_impls:
                raise RegistrationError(
                    "This is not allowed since there's already a kernel registered from python "
                    f"overriding {qualname.partition('::')[2]}'s behavior for {key.name} dispatch key "
                    f"and {self.ns} namespace."
                )
            if key == DispatchKey.Meta and not _builtin:  # _builtin (internal): a backend's own, as C++ registers
                _check_meta_kernel(dispatcher, name, qualname)
            self._check_alive()
            existing = dispatcher._ops.get(qualname)
            schema = existing.schema if existing is not None else None
            op = existing if existing is not None else OperatorHandle(dispatcher, qualname)
            check = None
            if fn is not fallthrough_kernel:
                check = _kernel_check(op, fn, key, with_keyset)
                if schema is not None:
                    check(schema)
            kernel: Callable[..., Any] = fn
            as_kernel = protocol_attr(fn, "__dispatchcore_as_kernel__")
            if as_kernel is not None:  # an autograd.Function subclass: its apply is the kernel
                kernel = as_kernel(op)
            # _raw_keyset (internal): the kernel takes the raw key-set int, skipping the wrapper object
            reg = KernelRegistration(key=key, kernel=kernel, with_keyset=with_keyset, library=self.ns,
                                     where=where, bind=(lambda op: kernel) if _raw_keyset else None,
                                     check=check)
            if existing is None:  # validated: only now does the operator's entry appear
                dispatcher._add_op(op)
            dispatcher.register_kernel(op, reg)
            dispatcher._python_impls.add(python_key)

            def undo() -> None:
                with dispatcher._lock:
                    dispatcher.deregister_kernel(op, reg)
                    if not op._kernels.get(key):
                        dispatcher._python_impls.discard(python_key)

            # appended under the lock: a concurrent _destroy removes it, or ran before the check
            handle = RegistrationHandle(undo, f"impl {op.qualname} at {key.name}")
            self._handles.append(handle)
        return handle

    def _resolve_impl(self, op_name: str, dispatch_key: DispatchKey | str) -> tuple[str, DispatchKey]:
        """The qualified name (``.default`` dropped) and the registrable key of an impl call."""
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
        return (qualname[:-8] if qualname.endswith(".default") else qualname), key

    def _check_alive(self) -> None:
        if self._destroyed:
            raise AssertionError(
                "Library object has been destroyed. "
                f"(dispatchcore: {self!r}, created at {self.location}, was destroyed by destroy() "
                "or at the end of its with block, and registers nothing more. "
                f"Create a new Library({self.ns!r}, ...) to register again.)"
            )

    # --- fallback -----------------------------------------------------------------------------
    def fallback(self, fn: Callable[..., Any], dispatch_key: DispatchKey | str = "", *,
                 with_keyset: bool = False,
                 _bind: Callable[[OperatorHandle], Callable[..., Any]] | None = None) -> RegistrationHandle:
        """Register a boxed fallback for every operator at one key (``m.fallback(...)``).

        The kernel is called as ``fn(op, *args, **kwargs)``, or ``fn(keyset, op, *args, **kwargs)``
        with ``with_keyset=True``; it is used only where an operator has no kernel of its own
        at that key. ``fallthrough_kernel`` makes the key a fallthrough for all operators.
        ``_bind`` (dispatchcore's own fallbacks, such as the Python key's) gives the fast form:
        ``_bind(op)`` returns ``fn`` for that operator taking the raw key-set int first.
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
                                 where=SourceLocation.of_caller(2), boxed_fallback=True, bind=_bind)
        with self._dispatcher._lock:
            self._check_alive()
            self._dispatcher.register_fallback(reg)
            handle = RegistrationHandle(_call(self._dispatcher.deregister_fallback, reg),
                                        f"fallback at {key.name}")
            self._handles.append(handle)
        return handle

    # --- lifetime -----------------------------------------------------------------------------
    def destroy(self) -> None:
        """Remove every registration of this library, newest first; the tables before it come back.

        torch calls this ``Library._destroy``, which is an alias here. Leaving a ``with`` block
        destroys the library too. Idempotent. Afterwards ``define``, ``impl`` and ``fallback``
        raise ``AssertionError``.

        Example:
            >>> import dispatchcore as dc
            >>> with dc.Library("doc_destroy", "DEF") as lib:
            ...     _ = lib.define("f(Tensor x) -> Tensor")
            ...     "doc_destroy::f" in dc.get_dispatcher().operator_names()
            True
            >>> "doc_destroy::f" in dc.get_dispatcher().operator_names()
            False
        """
        with self._dispatcher._lock:  # no registration of this library can start or finish meanwhile
            self._destroyed = True
            _destroy_all(self._handles)

    _destroy = destroy  # torch's name

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.destroy()

    def __repr__(self) -> str:
        key = self.dispatch_key.name if self.dispatch_key else ""
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={key})"


def _parse_key(key: DispatchKey | str) -> DispatchKey:
    """``parse_dispatch_key`` as the registration API sees it: PyTorch's names only.

    ``CatchAll`` and ``DefaultBackend`` (enum aliases of Undefined and CompositeExplicitAutograd)
    and the ``StartOf*``/``EndOf*`` range markers are not names ``c10::parseDispatchKey`` knows,
    so ``Library.impl(..., "CatchAll")`` raises "could not parse dispatch key: CatchAll" there.
    """
    unknown = isinstance(key, str) and not _is_key_name(key)
    if not unknown:
        try:
            return parse_dispatch_key(key)
        except RuntimeError:
            pass  # raised below, outside the handler, so the error carries no KeyError context
    raise RegistrationError(f"could not parse dispatch key: {key}")


def _registrable_key(key: DispatchKey | str, what: str) -> DispatchKey:
    key = _parse_key(key)
    if key == DispatchKey.Undefined:
        return DispatchKey.CompositeImplicitAutograd  # a catch-all kernel, as in c10
    # PyTorch also takes the per-backend functionality keys (Dense, Sparse, ...): such a kernel
    # shows in dump_state but serves no runtime key; it only counts as a "backend kernel" for
    # the Autograd keys above those backends (resolution.backend_keys_for_autograd)
    if not (is_alias_key(key) or is_runtime_key(key) or is_per_backend_functionality(key)):
        raise RegistrationError(
            f"{what}: cannot register to {key.name}: it is not a runtime or alias key. Register to "
            "a runtime key such as 'CPU' or 'AutogradCPU', or to an alias such as 'Autograd'."
        )
    return key


def _op_name(op_name: Any, api_name: str) -> str:
    """``Library._resolve_op_name``: a name as given, or an operator object's qualified name."""
    if isinstance(op_name, str):
        return op_name
    if isinstance(op_name, OperatorHandle):  # torch's OpOverload: "ns::name[.overload]"
        return op_name.qualname
    raise RegistrationError(
        f"{api_name} should be passed either a name or an OpOverload object as the first "
        f"argument, got {type(op_name)}"
    )


def _check_meta_kernel(dispatcher: Dispatcher, name: str, qualname: str) -> None:
    """torch.library's refusal of a Meta kernel for an operator with a CompositeImplicitAutograd one.

    Its check asks the dispatcher about the operator, which fails for one it has never seen.
    """
    op = dispatcher._ops.get(qualname)
    if op is None or (op.schema is None and not op._kernels):
        raise RegistrationError(f"operator {qualname} does not exist")
    if op._kernels.get(DispatchKey.CompositeImplicitAutograd):
        raise RegistrationError(
            f"We should not register a meta kernel directly to the operator '{name}', because it "
            "has a CompositeImplicitAutograd kernel in core. Instead we should let the operator "
            "decompose, and ensure that we have meta kernels for the base ops that it decomposes "
            "into."
        )


def _kernel_check(op: OperatorHandle, fn: Callable[..., Any], key: DispatchKey,
                  with_keyset: bool) -> Callable[[FunctionSchema], None]:
    """The check of ``fn``'s parameters against a schema, kept with the registration.

    ``impl`` runs it when the operator is defined; ``Dispatcher.register_schema`` runs it for
    every kernel registered before the ``define`` (See Note [Impl before def]).
    """
    return lambda schema: _check_kernel(op, schema, fn, key, with_keyset)


def _undefine(dispatcher: Dispatcher, op: OperatorHandle) -> None:
    """Undo a ``define``: drop the schema and the ``dispatchcore.ops`` attributes that named it."""
    from . import ops

    dispatcher.deregister_schema(op)
    ops._forget(op)


def _check_kernel(op: OperatorHandle, schema: FunctionSchema, fn: Callable[..., Any], key: DispatchKey,
                  with_keyset: bool) -> None:
    """Check that every call ``schema`` allows binds to ``fn``'s parameters (RegistrationError if not).

    The hook ``fn.__dispatchcore_kernel_check__(op, key, with_keyset)`` replaces the check; at
    ``define`` time it runs before ``op`` has its schema.
    """
    where = f"impl({op.qualname.partition('::')[2]!r}, ..., {key.name!r})"
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


# --- torch.library's module-level functions ------------------------------------------------------
# Libraries these functions create for themselves live as long as the process, as in torch
# (``torch.library._keep_alive``); pass ``lib=`` to tie a registration to a Library of yours.
_keep_alive: list[Library] = []
_NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")
# c10's device types that have a dispatch key (``torch._C._dispatch_key_for_device``)
_DEVICE_KEYS = {
    "cpu": "CPU", "cuda": "CUDA", "ipu": "IPU", "xpu": "XPU", "hip": "HIP", "ve": "VE",
    "fpga": "FPGA", "maia": "MAIA", "xla": "XLA", "lazy": "Lazy", "vulkan": "Vulkan", "mps": "MPS",
    "meta": "Meta", "hpu": "HPU", "mtia": "MTIA", "privateuseone": "PrivateUse1",
}
_CAFFE2_DEVICES = ("mkldnn", "opengl", "opencl", "ideep")


def _parse_namespace(qualname: str) -> tuple[str, str]:
    """``torch._library.utils.parse_namespace``: ``"ns::name"`` -> ``("ns", "name")``."""
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(
            'Expected `qualname` to be of the form "namespace::name", but got '
            f"{qualname}. The qualname passed to the torch.library APIs must consist of a "
            "namespace and a name, e.g. aten::sin"
        )
    return splits[0], splits[1]


def _fragment(namespace: str) -> Library:
    lib = Library(namespace, "FRAGMENT")
    _keep_alive.append(lib)
    return lib


def define(qualname: Any, schema: str, *legacy: Any, lib: Library | None = None,
           tags: Any = ()) -> Any:
    """Define an operator ``qualname`` with ``schema`` (``torch.library.define``).

    Args:
        qualname: ``"namespace::name"`` (``"name.overload"`` for an overload).
        schema: the schema without the name: ``"(Tensor x) -> Tensor"``.
        lib: the Library that owns the definition; by default a FRAGMENT library kept alive for
            the rest of the process, as torch does.
        tags: operator tags, as for ``Library.define``.
        *legacy: ``alias_analysis`` of the old form below; nothing in the new one.

    The old form ``define(lib, schema, alias_analysis="")`` returns a decorator that defines the
    operator and registers the function as its CompositeImplicitAutograd kernel.

    Example:
        >>> import dispatchcore as dc
        >>> lib = dc.Library("doc_mdef", "FRAGMENT")
        >>> dc.library.define("doc_mdef::twice", "(Tensor x) -> Tensor", lib=lib)
        >>> print(dc.find_op("doc_mdef::twice").schema)
        doc_mdef::twice(Tensor x) -> Tensor
        >>> lib.destroy()
    """
    if isinstance(qualname, Library):  # the old API, kept by torch for BC
        return _legacy_define(qualname, schema, *legacy)
    if legacy:
        raise TypeError(f"define() takes 2 positional arguments but {2 + len(legacy)} were given")
    if not isinstance(qualname, str):
        raise ValueError(
            f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    namespace, name = _parse_namespace(qualname)
    if lib is None:
        lib = _fragment(namespace)
    if not _NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(
            'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" '
            f'but got "{schema}"'
        )
    lib.define(name + schema, alias_analysis="", tags=tags)
    return None


def _legacy_define(lib: Library, schema: str, alias_analysis: str = "") -> Callable[..., Any]:
    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        name = lib.define(schema, alias_analysis)
        lib.impl(name, f)
        return f

    return wrap


def impl(qualname: Any, types: str | Sequence[str], func: Callable[..., Any] | None = None,
         *, lib: Library | None = None) -> Any:
    """Register ``func`` for device types or dispatch keys of ``qualname`` (``torch.library.impl``).

    Args:
        qualname: ``"namespace::name[.overload]"``.
        types: one or more device types (``"cpu"``, ``"meta"``, ``"cuda"``, ...; ``"default"``
            means CompositeExplicitAutograd) or dispatch key names (``"AutogradCPU"``).
        func: the kernel; omit it to use ``impl`` as a decorator.
        lib: the Library that owns the registration; by default a FRAGMENT library kept alive for
            the rest of the process, as torch does.

    The old form ``impl(lib, name, dispatch_key="")`` returns a decorator that registers the
    function with ``lib.impl(name, f, dispatch_key)`` and returns it.

    Example:
        >>> import dispatchcore as dc
        >>> lib = dc.Library("doc_mimpl", "DEF")
        >>> lib.define("twice(Tensor x) -> Tensor")
        'twice'
        >>> dc.library.impl("doc_mimpl::twice", "cpu", lambda x: "cpu kernel", lib=lib)
        >>> dc.dump_table("doc_mimpl::twice").splitlines()[0].split(":")[0]
        'CPU'
        >>> lib.destroy()
    """
    if isinstance(qualname, Library):  # the old API, kept by torch for BC: impl(lib, name, key="")
        legacy_lib, name, key = qualname, str(types), str(func) if func is not None else ""

        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            legacy_lib.impl(name, f, key)
            return f

        return wrap
    keys = list(dict.fromkeys(
        typ if _is_key_name(typ) else _device_type_to_key(typ)
        for typ in ((types,) if isinstance(types, str) else types)))

    def register(func: Callable[..., Any]) -> None:
        namespace, _ = _parse_namespace(qualname)
        use_lib = lib if lib is not None else _fragment(namespace)
        for key in keys:
            use_lib.impl(qualname, func, key)

    if func is None:
        return register
    register(func)
    return None


def _is_key_name(name: str) -> bool:
    """What ``torch._C._parse_dispatch_key`` parses: a key's own name."""
    return name in DispatchKey.__members__ and DispatchKey[name].name == name \
        and not name.startswith(("StartOf", "EndOf"))


def _device_type_to_key(device_type: str) -> str:
    """``torch.library._device_type_to_key``: ``"default"`` or a device type, to a key name."""
    if device_type == "default":
        return "CompositeExplicitAutograd"
    if not device_type:
        raise RegistrationError("Device string must not be empty")
    if ":" in device_type:
        raise RegistrationError(
            f"Expected device_type string to not have a device index; got {device_type}")
    if device_type == privateuse1_backend_name():
        return "PrivateUse1"
    if device_type in _CAFFE2_DEVICES:
        raise RegistrationError(
            '0 INTERNAL ASSERT FAILED at "c10/core/TensorOptions.h":663, please report a bug to '
            f"PyTorch. This is a grandfathered Caffe2 device type {device_type}, it shouldn't ever "
            "convert to a DispatchKey.  File a bug describing what you were doing if you think this "
            "is in error.")
    key = _DEVICE_KEYS.get(device_type)
    if key is None:
        raise RegistrationError(
            "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
            "maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of "
            f"device string: {device_type}")
    return key
