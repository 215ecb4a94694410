"""OperatorHandle: one operator's registrations (the truth) and its dispatch table (derived).

Mirrors ``aten/src/ATen/core/dispatch/OperatorEntry.{h,cpp}`` and the call path of
``Dispatcher::call``/``redispatch`` in ``Dispatcher.h``. Invariant: ``_dispatch`` always equals
what ``resolution.compute_table_entry`` gives for every runtime key; it is rebuilt under the
registry lock on each (de)registration and swapped whole, so a call never sees half a table.

Note [Table is derived state]: registrations live in ``_kernels`` (per key, newest first) and
in the dispatcher's fallbacks; ``_dispatch`` is recomputed from them, never edited in place.

Note [Dispatch argument protocol]: any object with an int attribute ``_key_bits`` (raw
``DispatchKeySet`` bits) is a dispatch argument; ``Tensor`` implements it, tests use a carrier.
"""

from __future__ import annotations

import inspect
import sys
import weakref
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

import attrs

from .display import rich_display
from .dtypes import WrappedNumber
from .dumps import ambiguous_autogradother_error, format_state, format_table, missing_kernel_error
from .keys import RUNTIME_KEYS, DispatchKey
from .keyset import (
    BACKEND_MASK,
    BACKEND_SELECT,
    FULL,
    FUNCTIONALITY_BASE,
    NUM_BACKENDS,
    DispatchKeySet,
    key_bits,
)
from .resolution import AMBIGUOUS_AUTOGRADOTHER, affected_keys, compute_table_entry
from .tls import _DEFAULT_STATE as _DEFAULT_KEYS
from .tls import per_thread as _pt
from .tls import tls_get

if TYPE_CHECKING:
    from .schema import FunctionSchema

__all__ = [
    "KernelRegistration",
    "OperatorHandle",
    "SourceLocation",
    "fallthrough_kernel",
    "is_dispatch_arg",
    "is_leaf_kernel",
    "leaf_kernel",
]

TABLE_SIZE = int(DispatchKey.EndOfRuntimeBackendKeys) + 1  # slots indexed by DispatchKey value
_NUM_MASKS = NUM_BACKENDS + 1  # one fallthrough mask per highest-backend index 0..16
_EXTRACTION_ERRORS = (AttributeError, IndexError, TypeError)
_FIRST, _FIRST_TWO = (0,), (0, 1)  # the usual dispatch-argument positions, shared (tested by identity)


@attrs.frozen
class SourceLocation:
    """Where a registration was made: the caller of ``define``/``impl``/``fallback``.

    One rule for the file, as torch prints its own registrations relative to its source tree
    (``aten/src/ATen/core/VariableFallbackKernel.cpp:62``): a file of the installed packages
    ``dispatchcore`` and ``dispatchcore_backends`` is printed relative to the directory that
    holds the package, i.e. as its module path (``dispatchcore/dispatcher.py:491``,
    ``dispatchcore_backends/cpu/__init__.py:139``, whatever directory the package is installed
    or checked out in); any other file keeps the path Python gives (``co_filename``: absolute
    for an imported module, as typed for a script), as torch prints a user's Python file.
    """

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    @classmethod
    def of_caller(cls, depth: int = 2) -> SourceLocation:
        """The first frame outside dispatchcore's registration modules, ``depth`` frames up or more."""
        frame = sys._getframe(depth)
        while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
            ("dispatchcore._library", "dispatchcore.library", "dispatchcore.operator", "dispatchcore.dispatcher",
             "dispatchcore.autograd.kernels")
        ):
            frame = frame.f_back
        return cls(_display_path(frame.f_globals, frame.f_code.co_filename), frame.f_lineno)


_OWN_PACKAGES = ("dispatchcore", "dispatchcore_backends")


def _display_path(module_globals: dict[str, Any], filename: str) -> str:
    """``filename`` as SourceLocation prints it: package-relative inside dispatchcore's packages."""
    spec = module_globals.get("__spec__")  # names ``python -m`` modules too (``__name__`` is "__main__")
    module = getattr(spec, "name", None) or module_globals.get("__name__", "")
    if module.partition(".")[0] not in _OWN_PACKAGES or not filename.endswith(".py"):
        return filename
    # the module's own file: its dotted name is its path below the package's parent directory
    if filename.replace("\\", "/").endswith("/__init__.py"):
        return module.replace(".", "/") + "/__init__.py"
    return module.replace(".", "/") + ".py"


@attrs.frozen(kw_only=True)
class KernelRegistration:
    """One kernel registered to one key of one operator (or one backend fallback).

    ``debug`` is what the dumps print (``registered at file:line``); ``boxed_fallback`` marks a
    fallback kernel, called as ``kernel(op, *args)`` (``kernel(keyset, op, *args)`` with keyset).
    """

    key: DispatchKey
    kernel: Callable[..., Any]
    with_keyset: bool = False
    library: str = ""
    where: SourceLocation | None = None
    boxed_fallback: bool = False
    debug_override: str | None = attrs.field(default=None, eq=False)
    # Internal fast form: bind(op) returns a kernel taking the raw key-set int first (kind 2).
    bind: Callable[[Any], Callable[..., Any]] | None = attrs.field(default=None, eq=False)
    # check(schema) raises RegistrationError if the kernel's parameters do not fit ``schema``;
    # run again when a def arrives after the impl (See Note [Impl before def] in dispatcher.py).
    check: Callable[[Any], None] | None = attrs.field(default=None, eq=False)

    @property
    def fallthrough(self) -> bool:
        return self.kernel is fallthrough_kernel

    @property
    def debug(self) -> str:
        if self.debug_override is not None:
            return self.debug_override
        return f"registered at {self.where}" if self.where else "no debug info"


def fallthrough_kernel(*args: Any, **kwargs: Any) -> Any:
    """Register this to make dispatch skip a key for an operator (``torch.library.fallthrough_kernel``).

    A fallthrough is never called on a normal call: it clears the key's bit in the operator's
    fallthrough mask. Only ``redispatch`` (which applies no mask) can land on it, as in PyTorch.
    """
    raise RuntimeError(
        '0 INTERNAL ASSERT FAILED at "aten/src/ATen/core/boxing/KernelFunction.cpp":14, please '
        "report a bug to PyTorch. fallthrough_kernel was executed but it should have been "
        "short-circuited by the dispatcher. This could occur if you registered a fallthrough kernel "
        "as a override for a specific operator (as opposed to a backend fallback); this is NOT "
        "currently supported, and we do not intend to add support for it in the near future.  If "
        "you do find yourself in need of this, let us know in the bug tracker.\nIn dispatchcore "
        "this means a redispatch keyset still held a key whose kernel is a fallthrough: mask it "
        "off (ks & DispatchKeySet.full_after(key)) before redispatching."
    )


class DispatchArg(Protocol):
    """Note [Dispatch argument protocol]: an object carrying raw ``DispatchKeySet`` bits."""

    _key_bits: int


def is_dispatch_arg(value: object) -> TypeGuard[DispatchArg]:
    """True for objects following Note [Dispatch argument protocol] (a ``_key_bits`` int)."""
    return isinstance(getattr(value, "_key_bits", None), int)


# Note [Zero-cost tracing]: dispatchcore.trace sets this while tracing is switched on, and
# every table is rebuilt with wrapped slots; when it is None, tables hold the kernels themselves.
slot_wrapper: Callable[[Any, DispatchKey, tuple[Any, str], Any], Any] | None = None

# How a table slot calls its kernel: fn(*args), fn(DispatchKeySet, *args) or fn(raw_bits, *args).
PLAIN, WITH_KEYSET, WITH_RAW_KEYSET = 0, 1, 2

# One dispatch-table slot: (kernel, calling convention), or None where no kernel applies.
_Slot = tuple[Callable[..., Any], int] | None


_MEMO_SIZE = 64  # distinct key sets memoised per operator; more are resolved on every call


def _memo_entry(slot: tuple[Callable[..., Any], int], bits: int) -> tuple[Callable[..., Any], Any]:
    """A table slot called with ``bits``: (kernel, key-set argument or None)."""
    fn, convention = slot
    if convention == PLAIN:
        return fn, None
    return fn, bits if convention == WITH_RAW_KEYSET else DispatchKeySet._from_bits(bits)


# Note [Bound kernels]: the call memo holds kernels already bound to their key set, functions
# of the call's positional arguments alone, so a call is one lookup and one call. A kernel that
# takes a key set may offer ``kernel.bind_keyset(ks)``: a function that does what
# ``kernel(ks, *args)`` does for positional calls, with its own redispatch resolved up front
# (the built-in Autograd kernels do; see autograd/kernels.py; ``bind_keyset.kernel`` names the
# kernel it belongs to). Others get ``partial(kernel, ks)``. A bound Autograd kernel over a
# leaf kernel (Note [Leaf kernels]) names it as ``no_grad_kernel``: what it calls, as is, when
# no input requires grad (read with ``protocol_attr``: None or absent means no such kernel,
# as for the view and in-place ones, which keep their bookkeeping without grad).
# A bound kernel is only as fresh as the table it came from, like the memo that holds it.
def bind_kernel(fn: Callable[..., Any], first: Any) -> Callable[..., Any]:
    """``fn`` bound to its key-set argument ``first`` (None: a plain kernel, returned as is)."""
    if first is None:
        return fn
    bind = protocol_attr(fn, "bind_keyset")
    # only a binder made for this very kernel (functools.wraps copies attributes to wrappers),
    # and only for raw-int key sets, the convention the built-in kernels use
    if bind is not None and type(first) is int and getattr(bind, "kernel", None) is fn:
        return bind(first)
    return partial(fn, first)


# Note [Leaf kernels]: a kernel that calls no operator and reads no dispatch-key state (most
# backend kernels: numpy in, tensor out) cannot tell whether the Autograd kernel above it set
# AutoDispatchBelowADInplaceOrView, since that guard only masks keys for the calls made under
# it. ``leaf_kernel`` marks such a kernel; the built-in Autograd kernels, bound to a key set,
# then call it without setting and restoring the guard (two TLS writes and a try/finally, ~70 ns
# a call). Calls through ``OperatorHandle.__call__`` that are not memoised (traces) keep the guard.
def leaf_kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` as a leaf kernel: it calls no operator and does not read the dispatch keys.

    A promise about the kernel's body, used only to skip work nobody could observe (Note [Leaf
    kernels]). Returns ``fn`` itself.

    Example:
        >>> import dispatchcore as dc
        >>> @dc.leaf_kernel
        ... def neg_cpu(x):
        ...     return dc.wrap(-x._data)  # numpy in, tensor out: no operator call
        >>> dc.is_leaf_kernel(neg_cpu)
        True
        >>> neg_cpu(dc.ones(2))
        tensor([-1., -1.])
    """
    try:  # a weak reference to itself: see is_leaf_kernel (a strong one would be a cycle)
        fn.__dispatchcore_leaf__ = weakref.ref(fn)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pass  # raised below, outside the handler (See Note [No chained errors])
    else:
        return fn
    raise TypeError(f"leaf_kernel: {fn!r} does not take attributes; mark a Python function "
                    f"that calls it instead")


def is_leaf_kernel(fn: Any) -> bool:
    """Whether ``fn`` was marked with ``leaf_kernel``: itself, not a wrapper that copied the mark.

    Example:
        >>> import functools
        >>> import dispatchcore as dc
        >>> kernel = dc.leaf_kernel(lambda x: x)
        >>> wrapper = functools.wraps(kernel)(lambda x: kernel(x))  # copies the mark
        >>> dc.is_leaf_kernel(kernel), dc.is_leaf_kernel(wrapper)
        (True, False)
    """
    mark = protocol_attr(fn, "__dispatchcore_leaf__")
    return type(mark) is weakref.ref and mark() is fn


def protocol_attr(obj: Any, name: str) -> Any:
    """``obj``'s attribute ``name`` when it really defines one, else None.

    Kernels opt into dispatchcore's protocols (``bind_keyset``, ``__dispatchcore_as_kernel__``,
    ...) by defining the attribute; a catch-all ``__getattr__`` (a ``Mock``, a proxy) does not
    count, so the lookup is static first.
    """
    if inspect.getattr_static(obj, name, None) is None:
        return None
    return getattr(obj, name)


# number -> wrapped-number tensor, installed by the tensor layer (See Note [Numbers for Tensors])
_number_to_tensor: Callable[[Any, bool], Any] | None = None


def set_number_to_tensor(fn: Callable[[Any, bool], Any]) -> None:
    """Install how a number given for a ``Tensor`` argument becomes a tensor (Note [Numbers for Tensors]).

    ``fn(value, aliased)`` returns a wrapped-number tensor for a Python or numpy number (one the
    caller may write to when ``aliased``), None for anything else. The tensor layer installs
    ``_composites.number_argument`` when it is imported: the registry makes no tensors itself
    and imports no module above it.
    """
    global _number_to_tensor
    _number_to_tensor = fn


_UNSHARED: Any = object()  # no slot made yet for a kernel (See Note [Shared table entries])
_NOT_PLAIN: Any = object()  # a keyword call that must bind after all (See Note [Keyword calls])
_PY_NUMBERS = frozenset({int, float, bool, complex})


def _bound_kernel(op: OperatorHandle, reg: Any) -> _Slot:
    """The (callable, calling convention) pair a table slot stores for one registration."""
    if reg is None:
        return None
    if reg is AMBIGUOUS_AUTOGRADOTHER:
        return (op._ambiguous_autogradother, PLAIN)
    if reg.bind is not None:
        return (reg.bind(op), WITH_RAW_KEYSET)
    fn = reg.kernel
    if not reg.boxed_fallback:
        return (fn, WITH_KEYSET if reg.with_keyset else PLAIN)
    if reg.with_keyset:  # boxed fallbacks get (keyset, op, *args), as torch.library's do
        return (lambda ks, *args, **kwargs: fn(ks, op, *args, **kwargs), WITH_KEYSET)
    return (lambda *args, **kwargs: fn(op, *args, **kwargs), PLAIN)


def _shallow_classes(t: Any) -> frozenset[type] | None:
    """Classes of values that fit ``t`` at first sight (lists: the container only); None: any value."""
    from .schema import ListType, OptionalType, fitting_classes

    if isinstance(t, OptionalType):
        inner = _shallow_classes(t.elem)
        return None if inner is None else inner | {type(None)}
    if isinstance(t, ListType):
        classes: frozenset[type] = frozenset((list, tuple))
        if t.size is not None:  # ``int[2] stride=1``: one value broadcasts
            classes |= fitting_classes(t.elem) or frozenset()
        return classes
    return fitting_classes(t)


class OperatorHandle:
    """A registered operator: call it like a function; it dispatches on its arguments' keys.

    Obtained as ``dispatchcore.ops.<ns>.<name>.<overload>`` (``torch.ops``'s ``OpOverload``) or
    ``dispatcher.find_op("ns::name.overload")``. Hand-written ``__slots__`` instead of attrs: the
    call path reads these attributes on every op.

    Example:
        >>> import dispatchcore as dc
        >>> lib = dc.Library("doc_op", "DEF")
        >>> lib.define("twice(Tensor x) -> Tensor")
        'twice'
        >>> _ = lib.impl("twice", lambda x: ("CPU kernel ran", x), "CPU")
        >>> class Carrier:  # anything with _key_bits can be dispatched on
        ...     _key_bits = int(dc.tensor_keyset("CPU"))
        >>> dc.ops.doc_op.twice(Carrier())[0]
        'CPU kernel ran'
        >>> lib.destroy()
    """

    __slots__ = (
        "name", "overload_name", "qualname", "schema", "def_location", "alias_analysis", "tags",
        "_dispatcher", "_kernels", "_dispatch", "_entries", "_tensor_pos", "_opt_pos", "_list_pos", "_lo", "_hi",
        "_kw_names", "_kw_plain", "_kw_classes", "_kw_tensors", "_bounds", "_value_pos", "_number_args",
        "_on_rebuild", "__weakref__",
    )
    # Derived from the schema by _set_schema_info (see there).
    _tensor_pos: tuple[int, ...]
    _opt_pos: tuple[int, ...]  # positional ``Tensor?`` arguments (Note [Optional Tensors on the fast path])
    _list_pos: tuple[int, ...]  # positional lists of Tensors (the same Note)
    _bounds: tuple[int, int]
    _kw_names: frozenset[str]
    _kw_plain: frozenset[str] | None  # Note [Keyword calls]; None: every keyword call binds
    _kw_classes: dict[str, frozenset[type] | None]  # the classes that fit each non-Tensor one of those
    _kw_tensors: tuple[str, ...]  # the keyword-only Tensors among them (``out``): each call gives them
    _lo: int
    _hi: int
    # (index, classes that fit at once) per non-Tensor positional argument: Note [Bind on failure]
    _value_pos: tuple[tuple[int, frozenset[type]], ...]
    # (index, name, kwarg_only, aliased) per Tensor/Tensor? argument that may be given a Python
    # number (FunctionSchema.numbers_as_tensors); empty for other operators: Note [Numbers for Tensors]
    _number_args: tuple[tuple[int, str, bool, bool], ...]
    # (fallthrough masks per highest-backend index, table indexed by runtime-key value, call memo
    # of bound kernels, redispatch memo, call memo for the default TLS state by raw bits, keyword
    # call memo); see _rebuild and Note [Dispatch memo].
    _dispatch: tuple[list[int], list[_Slot], dict[int, Callable[..., Any]], dict[int, tuple[Any, Any]],
                     dict[int, Callable[..., Any]], dict[int, tuple[Any, Any]]]

    def __init__(self, dispatcher: Any, qualname: str) -> None:
        self.qualname = qualname
        ns, sep, rest = qualname.rpartition("::")  # a namespace may hold dots (torch's "a.b")
        base, _, overload = rest.partition(".")
        self.name = ns + sep + base
        self.overload_name = overload
        self.schema: FunctionSchema | None = None
        self.def_location: SourceLocation | None = None
        self.alias_analysis = ""
        self.tags: tuple[Any, ...] = ()
        self._dispatcher = dispatcher
        # callables run after each rebuild: caches derived from this table (Note [matmul shortcut])
        self._on_rebuild: list[Callable[[], None]] = []
        self._kernels: dict[DispatchKey, list[KernelRegistration]] = {}
        self._entries: dict[DispatchKey, tuple[Any, str]] = {}
        self._set_schema_info()
        self._rebuild()

    # --- the hot path -----------------------------------------------------------------------
    # Note [Dispatch memo]: resolving a key set to a kernel (TLS mask, fallthrough mask, highest
    # key, table index) gives the same answer until the next (de)registration, so each operator
    # keeps a dict from TLS-adjusted bits to the kernel bound to its key set (Note [Bound
    # kernels]), filled on first use and replaced whole with the table. A call made in the
    # default thread-local state (no guard or mode active: its keys tuple *is* the default one)
    # looks up ``_dispatch[4]`` by the arguments' raw bits, skipping the TLS arithmetic (~60 ns of
    # big-int operations). ``redispatch`` keeps ``_dispatch[3]`` of (kernel, first argument): ``first`` is
    # the key set the kernel takes (raw int or DispatchKeySet, per its convention) or None; keyword
    # calls (Note [Keyword calls]) keep the same pairs in ``_dispatch[5]``, by TLS-adjusted bits
    # (the bound kernels take positional arguments only).
    #
    # Note [No chained errors]: a memo miss is a caught KeyError (free when the lookup hits,
    # unlike ``dict.get``). Anything raised while an ``except`` block runs, in any function it
    # calls, gets that KeyError as ``__context__`` ("During handling of the above exception,
    # another exception occurred"): a dispatch error, a binding error, a kernel's own error.
    # So the handlers only note the miss (``pass``; the hit returns from ``else``) and the slow
    # path runs after the ``try`` statement, where no exception is being handled.
    #
    # Note [Bind on failure]: torch.ops checks every argument against the schema before it
    # dispatches (``aten::view() Expected a value of type 'List[int]' for argument 'size'``).
    # The general path does (``_bound``: ``FunctionSchema.values_fit``, else ``bind``'s error).
    # The positional fast path reads only the tensors, so it checks the rest in two cheap steps:
    # (1) before the kernel, the class of each non-tensor positional value (``_value_pos``,
    # empty for all-Tensor operators, so those pay one attribute test): ``int`` for ``int``, a
    # ``dtype`` for ``ScalarType``, ``list``/``tuple`` for ``int[]``; any other class gets the
    # full check (``np.int64`` fits ``int``, ``'a'`` does not); (2) the items of lists are looked
    # at only when the kernel raises: if the call's values do not fit the schema, the error torch
    # would have raised is raised instead, outside the ``except`` block (Note [No chained
    # errors]); if they fit, the kernel's own error propagates unchanged. The ``try`` costs
    # nothing until something raises (Python 3.11's zero-cost exceptions). The fixed-arity
    # entries (Tensor methods, whose arguments the method has parsed) do step (2) only.
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:  # ``self=`` may be an operator's keyword
        """Dispatch on the highest key of ``((arg keys | included) - excluded) & non_fallthrough``."""
        keys = _pt.state.keys
        if kwargs or not self._lo <= len(args) <= self._hi:
            return self._call_general(args, kwargs)
        try:  # plain positional Tensors; anything else (None, lists, bad types) takes the general path
            tensor_pos = self._tensor_pos
            if tensor_pos is _FIRST:  # the two usual shapes, unrolled
                bits = args[0]._key_bits
            elif tensor_pos is _FIRST_TWO:
                bits = args[0]._key_bits | args[1]._key_bits
            else:
                bits = 0
                for i in tensor_pos:
                    bits |= args[i]._key_bits
                for i in self._opt_pos:  # See Note [Optional Tensors on the fast path]
                    if i < len(args) and args[i] is not None:
                        bits |= args[i]._key_bits
                for i in self._list_pos:
                    items = args[i]
                    if items.__class__ is not list and items.__class__ is not tuple:
                        raise TypeError(i)  # a Tensor or a generator is no list: the general path binds
                    for t in items:
                        if t is not None:
                            bits |= t._key_bits
            if keys is _DEFAULT_KEYS:
                kernel = self._dispatch[4][bits]
            else:
                kernel = self._dispatch[2][(bits | keys[0]) & keys[2]]
        except KeyError:  # first call with these keys: resolved below (See Note [No chained errors])
            pass
        except _EXTRACTION_ERRORS:
            bits = None
        else:
            if self._value_pos:  # See Note [Bind on failure]: classes first, items on failure
                for i, classes in self._value_pos:
                    if i < len(args) and args[i].__class__ not in classes and not self._values_fit(args):
                        return self._bind_failed(args)
            try:
                return kernel(*args)
            except Exception:
                if self._values_fit(args):
                    raise
            return self._bind_failed(args)
        if bits is None:
            return self._call_general(args, kwargs)
        for i, classes in self._value_pos:  # as on a hit, so that a miss raises the same
            if i < len(args) and args[i].__class__ not in classes and not self._values_fit(args):
                return self._bind_failed(args)
        try:
            return self._dispatch_bits((bits | keys[0]) & keys[2], args, kwargs,
                                       bits if keys is _DEFAULT_KEYS else None)
        except Exception:
            if self._values_fit(args):
                raise
        return self._bind_failed(args)

    # Fixed-arity entries for Tensor methods (``_tensor_methods.fast`` checks the schema fits):
    # ``__call__`` without the instance-call slot, the argument tuple, the keyword dict, the
    # arity checks and the ``*args`` re-spread; ~0.15 us less per call. Each arity repeats the
    # same memo lookup on purpose: a shared helper or a ``*rest`` costs ~50 ns a call.
    def entry(self, nargs: int, tensors: int = 1, *,
              otherwise: Callable[..., Any] | None = None) -> Callable[..., Any]:
        """A plain function ``f(a, ...)`` taking exactly ``nargs`` positional arguments.

        It dispatches on its first ``tensors`` arguments (1, or 2 for binary ops), so it is only
        right for operators whose dispatch arguments are exactly those, all required and
        positional; anything else (a non-tensor where a tensor was expected, a new key set)
        falls back to ``op(...)``. A binary entry calls ``otherwise(a, b)`` instead when ``b``
        is not of ``a``'s class (``x * 2.0``: the method wraps the number and calls the same
        ``.Tensor`` overload, Note [Wrapped numbers]), default ``op``, which wraps a number
        itself where torch does (Note [Numbers for Tensors]). Tensor methods are these functions.

        Example:
            >>> import dispatchcore as dc
            >>> add = dc.ops.aten.add.Tensor.entry(2, tensors=2)
            >>> add(dc.ones(2), dc.ones(2))
            tensor([2., 2.])
            >>> dc.Tensor.relu.__qualname__  # a Tensor method is an entry
            'aten::relu.entry'
        """
        op = self
        if tensors == 2 and nargs == 2:
            other = op if otherwise is None else otherwise

            def call2(a: Any, b: Any) -> Any:
                if b.__class__ is not a.__class__:
                    return other(a, b)
                keys = _pt.state.keys
                try:  # See Note [Dispatch memo]
                    if keys is _DEFAULT_KEYS:
                        kernel = op._dispatch[4][a._key_bits | b._key_bits]
                    else:
                        kernel = op._dispatch[2][(a._key_bits | b._key_bits | keys[0]) & keys[2]]
                except (KeyError, AttributeError, TypeError):
                    pass  # See Note [No chained errors]
                else:
                    return kernel(a, b)
                return op(a, b)
            return self._named_entry(call2, nargs, tensors)
        if tensors != 1 or otherwise is not None:
            raise ValueError(f"no fixed-arity entry dispatching on {tensors} of {nargs} arguments"
                             + (" with otherwise=" if otherwise is not None else ""))
        if nargs == 1:
            def call1(a: Any) -> Any:
                keys = _pt.state.keys
                try:  # See Note [Dispatch memo]
                    if keys is _DEFAULT_KEYS:
                        kernel = op._dispatch[4][a._key_bits]
                    else:
                        kernel = op._dispatch[2][(a._key_bits | keys[0]) & keys[2]]
                except (KeyError, AttributeError, TypeError):
                    pass  # See Note [No chained errors]
                else:
                    return kernel(a)
                return op(a)
            return self._named_entry(call1, nargs, tensors)
        if nargs == 2:
            def call_first2(a: Any, x: Any) -> Any:
                keys = _pt.state.keys
                try:  # See Note [Dispatch memo]
                    if keys is _DEFAULT_KEYS:
                        kernel = op._dispatch[4][a._key_bits]
                    else:
                        kernel = op._dispatch[2][(a._key_bits | keys[0]) & keys[2]]
                except (KeyError, AttributeError, TypeError):
                    pass  # See Note [No chained errors]
                else:
                    try:  # See Note [Bind on failure]
                        return kernel(a, x)
                    except Exception:
                        if op._values_fit((a, x)):
                            raise
                    return op._bind_failed((a, x))
                return op(a, x)
            return self._named_entry(call_first2, nargs, tensors)
        if nargs == 3:
            def call_first3(a: Any, x: Any, y: Any) -> Any:
                keys = _pt.state.keys
                try:  # See Note [Dispatch memo]
                    if keys is _DEFAULT_KEYS:
                        kernel = op._dispatch[4][a._key_bits]
                    else:
                        kernel = op._dispatch[2][(a._key_bits | keys[0]) & keys[2]]
                except (KeyError, AttributeError, TypeError):
                    pass  # See Note [No chained errors]
                else:
                    try:  # See Note [Bind on failure]
                        return kernel(a, x, y)
                    except Exception:
                        if op._values_fit((a, x, y)):
                            raise
                    return op._bind_failed((a, x, y))
                return op(a, x, y)
            return self._named_entry(call_first3, nargs, tensors)
        raise ValueError(f"no fixed-arity entry for {nargs} arguments")

    # Note [Keyword entries]: ``x.addcmul_(a, b, value=v)`` passes a keyword-only Scalar, so it
    # misses ``__call__``'s positional memo and binds, extracts and resolves the table on every
    # call (~5 us). A keyword entry keeps its own memo of the unbound table slot, ``(kernel,
    # key-set argument)``, by the arguments' raw bits, valid for one ``_dispatch`` state (a
    # rebuild or a forgotten memo makes a new one) and filled only in the default TLS state
    # outside tracing; the memoised bound kernels are positional-only, these take keywords. It
    # takes the memo only when the call's values surely bind (Tensors for the dispatched
    # positions, a plain number for each named keyword): the kernel then gets exactly what
    # ``_call_general`` would give it. Everything else goes to ``op(...)``.
    def keyword_entry(self, nargs: int, keywords: tuple[str, ...]) -> Callable[..., Any]:
        """A function ``f(t1, ..., tn, **kw)``: ``nargs`` positional Tensors, then Scalar keywords.

        For operators whose first ``nargs`` arguments are exactly their dispatch arguments (all
        ``Tensor``) and whose ``keywords`` are keyword-only Scalars (Note [Keyword entries]).

        Example:
            >>> import dispatchcore as dc
            >>> addcmul_ = dc.ops.aten.addcmul_.default.keyword_entry(3, ("value",))
            >>> addcmul_(dc.ones(2), dc.ones(2), dc.ones(2), value=2)
            tensor([3., 3.])
        """
        schema = self.schema
        args = schema.arguments if schema is not None else ()
        fits = (len(args) == nargs + len(keywords)
                and [(i, kind, kw) for i, _, kind, kw in schema.dispatch_arguments] == [  # type: ignore[union-attr]
                    (i, "tensor", False) for i in range(nargs)]
                and all(a.name == n and a.kwarg_only and str(a.type) == "Scalar"
                        for a, n in zip(args[nargs:], keywords)))
        if not fits:
            raise ValueError(f"no keyword entry for {self.qualname} with {nargs} Tensors and keywords {keywords}")
        op = self
        names = frozenset(keywords)
        numbers = frozenset({int, float, bool})
        memo: list[Any] = [None, {}]  # (the _dispatch state it belongs to, raw bits -> (kernel, first))

        def call(*tensors: Any, **kw: Any) -> Any:
            general = len(tensors) != nargs or _pt.state.keys is not _DEFAULT_KEYS or slot_wrapper is not None
            bits = 0
            if not general:
                try:
                    for t in tensors:
                        bits |= t._key_bits
                except (AttributeError, TypeError):  # not Tensors (See Note [No chained errors])
                    general = True
                for name, value in kw.items():
                    if name not in names or value.__class__ not in numbers:
                        general = True
            if general:
                return op(*tensors, **kw)  # the general path: its binding, its errors
            state = op._dispatch
            if memo[0] is not state:
                memo[0], memo[1] = state, {}
            try:
                fn, first = memo[1][bits]
            except KeyError:
                masks, table = state[0], state[1]
                included, _, keep = _DEFAULT_KEYS
                full = (bits | included) & keep
                backend = (full & BACKEND_MASK).bit_length()
                masked = full & masks[backend]
                f = (masked >> NUM_BACKENDS).bit_length()
                entry = table[FUNCTIONALITY_BASE[f] + (backend & BACKEND_SELECT[f])]
                if entry is None or len(memo[1]) >= _MEMO_SIZE:
                    return op(*tensors, **kw)
                fn, first = memo[1][bits] = _memo_entry(entry, masked)
            return fn(*tensors, **kw) if first is None else fn(first, *tensors, **kw)

        call.__name__ = self.name.partition("::")[2]
        call.__qualname__ = f"{self.qualname}.keyword_entry"
        call.__doc__ = (f"Call ``{self.qualname}`` with {nargs} positional Tensor(s) and the keyword(s) "
                        f"{', '.join(keywords)} (``OperatorHandle.keyword_entry``).")
        return call

    def _named_entry(self, fn: Callable[..., Any], nargs: int, tensors: int) -> Callable[..., Any]:
        """``fn`` named after the operator, so ``help(Tensor.relu)`` says what it calls."""
        fn.__name__ = self.name.partition("::")[2]
        fn.__qualname__ = f"{self.qualname}.entry"
        fn.__doc__ = (f"Call ``{self.qualname}`` with {nargs} positional argument(s), dispatching "
                      f"on the first {tensors} (``OperatorHandle.entry``).")
        return fn

    def redispatch(self, keyset: DispatchKeySet | int, *args: Any, **kwargs: Any) -> Any:
        """Call the kernel for ``keyset``'s highest key: no TLS, no fallthrough mask, no extraction.

        Mirrors ``Dispatcher::redispatch``. Callers mask themselves off first, e.g.
        ``op.redispatch(ks & DispatchKeySet.full_after(DispatchKey.AutogradCPU), x)``.
        """
        bits = keyset if type(keyset) is int else keyset._bits  # type: ignore[union-attr]  # fast exact-int test
        try:
            fn, first = self._dispatch[3][bits]  # See Note [Dispatch memo]; no fallthrough mask here
        except KeyError:
            pass  # See Note [No chained errors]
        else:
            if kwargs:  # forwarding an empty **kwargs costs more than the test
                return fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
            return fn(*args) if first is None else fn(first, *args)
        return self._redispatch_bits(bits, args, kwargs)

    # --- the general and slow paths ---------------------------------------------------------
    # Note [Keyword calls]: ``empty_strided(size, stride, dtype=..., device=...)``, ``p.add_(g,
    # alpha=-lr)`` and the other calls whose keywords are all keyword-only, non-Tensor arguments
    # with defaults skip the binder: their positional Tensors give the key set as on the
    # positional path, the values get the positional path's check (Note [Bind on failure]: the
    # class of each value first, the items of lists only if the kernel raises), and the kernel
    # gets the call as given, which is what binding would have handed it. Anything else (a
    # keyword naming a positional argument, a value of another class, a number where a Tensor
    # goes) binds as before.
    def _call_keywords(self, args: tuple, kwargs: dict) -> Any:
        """The keyword call of Note [Keyword calls], or ``_NOT_PLAIN`` when it must bind."""
        try:
            bits = 0
            for i in self._tensor_pos:
                bits |= args[i]._key_bits
            for i in self._opt_pos:
                if i < len(args) and args[i] is not None:
                    bits |= args[i]._key_bits
            for i in self._list_pos:
                items = args[i]
                if items.__class__ is not list and items.__class__ is not tuple:
                    return _NOT_PLAIN
                for t in items:
                    if t is not None:
                        bits |= t._key_bits
            for name in self._kw_tensors:  # a missing one (KeyError): the binder says so
                bits |= kwargs[name]._key_bits
        except (*_EXTRACTION_ERRORS, KeyError):
            return _NOT_PLAIN
        for i, classes in self._value_pos:
            if i < len(args) and args[i].__class__ not in classes:
                return _NOT_PLAIN
        kw_classes = self._kw_classes
        for name in kwargs:
            fits = kw_classes.get(name)
            if fits is not None and kwargs[name].__class__ not in fits:
                return _NOT_PLAIN
        included, _, keep = _pt.state.keys
        bits = (bits | included) & keep
        try:
            try:
                fn, first = self._dispatch[5][bits]  # See Note [Dispatch memo]
            except KeyError:
                pass  # See Note [No chained errors]
            else:
                return fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
            return self._dispatch_bits(bits, args, kwargs)
        except Exception:
            if self.schema.values_fit(args, kwargs, is_tensor=is_dispatch_arg):  # type: ignore[union-attr]
                raise
        # the values do not fit: bind's error, outside the handler (the kernel is not run again)
        self.schema.bind(args, kwargs, is_tensor=is_dispatch_arg)  # type: ignore[union-attr]
        raise AssertionError(f"{self.qualname}: values_fit refused {args!r}, {kwargs!r} but bind took them")

    def _call_general(self, args: tuple, kwargs: dict) -> Any:
        """Keyword arguments, optional and list tensors, or bad input: bind, extract, dispatch."""
        plain = self._kw_plain
        if plain is not None and kwargs and plain.issuperset(kwargs) and \
                self._bounds[0] <= len(args) <= self._bounds[1]:
            result = self._call_keywords(args, kwargs)
            if result is not _NOT_PLAIN:
                return result
        # kernels get what torch passes them: positional arguments by position (even when the
        # caller named them), keyword-only ones by keyword
        if self._number_args:  # See Note [Numbers for Tensors]
            wrapped, kwargs = self._wrap_numbers(args, kwargs)
            if wrapped is not args and not kwargs:  # op(x, 2): now op(x, w), for the positional path
                result = self(*wrapped)
            else:
                args, kwargs = self._bound(wrapped, kwargs)
                included, _, keep = tls_get()
                result = self._dispatch_bits((self._arg_bits(args, kwargs) | included) & keep, args, kwargs)
        else:
            args, kwargs = self._bound(args, kwargs)
            bits = self._arg_bits(args, kwargs)
            included, _, keep = tls_get()
            return self._dispatch_bits((bits | included) & keep, args, kwargs)
        if getattr(result, "_meta", None).__class__ is WrappedNumber:
            # torch's toPyObject hands a wrapped number back as the number: ``aten.add_.Tensor(2, 3)``
            # and ``aten.to.dtype(2, torch.int64)`` return their (wrapped) self, so ``5`` and ``2``
            return result._data.item()  # its data, as toPyObject reads it: add_ wrote there
        return result

    def _extract(self, args: tuple, kwargs: dict) -> int:
        """OR of the key sets of every dispatch argument; binds via the schema when irregular."""
        return self._arg_bits(*self._bound(args, kwargs))

    def _bound(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The call's arguments as the schema binds them (as given when they already fit)."""
        if self.schema is None:
            raise RuntimeError(
                f"{self.qualname} has no schema: it was never defined, or its Library was "
                "destroyed. Define it with Library(ns, 'DEF' or 'FRAGMENT').define(schema)."
            )
        schema = self.schema
        if self._number_args:  # wrapped first, so that ``op(x, 2)`` binds as ``op(x, x)`` does
            args, kwargs = self._wrap_numbers(args, kwargs)
        if self._simple_ok(args, kwargs) and schema.values_fit(args, kwargs, is_tensor=is_dispatch_arg):
            return args, kwargs
        return schema.bind(args, kwargs, is_tensor=is_dispatch_arg)

    # Note [Numbers for Tensors]: torch.ops handles of the operators in torch's
    # ``should_allow_numbers_as_tensors`` list (add, sub, mul, div and their in-place forms,
    # copy_, to, _to_copy, ...; ``FunctionSchema.numbers_as_tensors``) take a Python number for a
    # ``Tensor`` argument: ``aten.mul.Tensor(x, 2)`` binds ``2`` as a wrapped number (Note [Wrapped
    # numbers], ``_composites.wrapped_number``), so promotion counts it as the number and the node
    # is ``MulBackward0``, as for ``x * 2``. Other operators refuse the number with bind's error,
    # as torch does (``aten.relu.default(2)``); ``FunctionSchema.bind`` takes numbers for the
    # listed operators, so packets and ``explain`` resolve ``aten.add(x, 2)`` to ``add.Tensor``.
    # A number is no dispatch argument, so such a call never takes the positional fast path (its
    # ``_key_bits`` read fails): the general path wraps it (``_wrap_numbers``) before it binds,
    # so ``op(x, 2)`` then binds as cheaply as ``op(x, x)``. An argument that may alias the result
    # (``Tensor(a!) self`` of ``add_``, ``out``, ``Tensor(a) self`` of ``to``) gets a fresh
    # wrapped number, never a cached one: the cache's tensors are shared and read-only.
    def _wrap_numbers(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """``args``/``kwargs`` with each number given for a Tensor argument wrapped.

        By schema position or keyword; anything that is not a number is left for ``bind`` to
        accept or refuse.
        """
        wrap = _number_to_tensor
        if wrap is None:
            return args, kwargs  # no tensor layer yet: bind refuses the number
        new_args: list | None = None
        n = len(args)
        for index, name, kwarg_only, aliased in self._number_args:
            in_args = not kwarg_only and index < n
            value = args[index] if in_args else kwargs.get(name)
            if value.__class__ not in _PY_NUMBERS and (value is None or hasattr(value, "_key_bits")):
                continue  # (a number's hasattr would raise and catch an AttributeError: ~0.2 us)
            w = wrap(value, aliased)
            if w is None:  # not a number: bind's error
                continue
            if in_args:
                if new_args is None:
                    new_args = list(args)
                new_args[index] = w
            else:
                kwargs = {**kwargs, name: w}
        return (args if new_args is None else tuple(new_args)), kwargs

    def _values_fit(self, args: tuple) -> bool:
        """Whether a fast-path call's values pass ``bind``'s checks (Note [Bind on failure])."""
        schema = self.schema
        return schema is None or schema.values_fit(args, {}, is_tensor=is_dispatch_arg)

    def _bind_failed(self, args: tuple) -> Any:
        """Raise ``bind``'s error for a positional call whose values do not fit the schema."""
        assert self.schema is not None  # _values_fit said False
        self.schema.bind(args, {}, is_tensor=is_dispatch_arg)
        raise AssertionError(f"{self.qualname}: values_fit refused {args!r} but bind took them")

    def _arg_bits(self, args: tuple, kwargs: dict) -> int:
        """OR of the key sets of the dispatch arguments of bound ``args`` and ``kwargs``."""
        assert self.schema is not None  # _bound checked it
        bits = 0
        for index, name, kind, kwarg_only in self.schema.dispatch_arguments:
            if kwarg_only or index >= len(args):
                value = kwargs.get(name)
            else:
                value = args[index]
            if value is None:
                continue
            if kind == "list":
                for item in value:
                    if item is not None:
                        bits |= item._key_bits
            else:
                bits |= value._key_bits
        return bits

    def _simple_ok(self, args: tuple, kwargs: dict) -> bool:
        """Cheap check that a call binds without the full binder (which also produces errors)."""
        lo, hi = self._bounds
        if not lo <= len(args) <= hi or not self._kw_names.issuperset(kwargs):
            return False
        schema = self.schema
        assert schema is not None  # callers check the operator is defined
        for index, name, kind, kwarg_only in schema.dispatch_arguments:
            if not kwarg_only and index < len(args):
                if name in kwargs:
                    return False
                value = args[index]
            elif name in kwargs:
                value = kwargs[name]
            else:
                if not schema.arguments[index].has_default:
                    return False
                continue
            if kind == "tensor":
                if not is_dispatch_arg(value):
                    return False
            elif kind == "optional":
                if value is not None and not is_dispatch_arg(value):
                    return False
            elif not isinstance(value, (list, tuple)) or not all(
                v is None or is_dispatch_arg(v) for v in value
            ):
                return False
        return True

    def _dispatch_bits(self, bits: int, args: tuple, kwargs: dict, raw: int | None = None) -> Any:
        """Resolve TLS-adjusted bits (fallthrough mask, highest key), memoise, call the kernel.

        ``raw``: the arguments' own bits, given when the call was made in the default TLS state.
        """
        masks, table, memo, _, default_memo, keyword_memo = self._dispatch
        backend = (bits & BACKEND_MASK).bit_length()
        masked = bits & masks[backend]
        f = (masked >> NUM_BACKENDS).bit_length()
        entry = table[FUNCTIONALITY_BASE[f] + (backend & BACKEND_SELECT[f])]
        if entry is None:
            return self._report_missing(masked, args, kwargs)
        fn, first = _memo_entry(entry, masked)
        # while a trace is possible, nothing is memoised: every call (methods and entries too)
        # then goes through OperatorHandle.__call__, which the tracer marks as a call
        # (a call with keywords lands here every time: bind once, not on each call)
        if slot_wrapper is None:
            if kwargs:
                if len(keyword_memo) < _MEMO_SIZE:
                    keyword_memo[bits] = (fn, first)
                return fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
            bound = memo.get(bits)
            if bound is None and len(memo) < _MEMO_SIZE:
                bound = memo[bits] = bind_kernel(fn, first)
            if raw is not None and bound is not None and len(default_memo) < _MEMO_SIZE:
                default_memo[raw] = bound
        return fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)

    def _redispatch_bits(self, bits: int, args: tuple, kwargs: dict) -> Any:
        """``redispatch`` on a memo miss: the table slot of ``bits``' highest key, memoised."""
        target = self.redispatch_target(bits)
        if target is None:
            return self._report_missing(bits, args, kwargs, redispatched=True)
        fn, first = target
        return fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)

    def redispatch_target(self, bits: int) -> tuple[Callable[..., Any], Any] | None:
        """``(kernel, key-set argument or None)`` that ``redispatch(bits, ...)`` calls; None: missing."""
        _, table, _, memo, _, _ = self._dispatch
        try:
            return memo[bits]
        except KeyError:
            pass
        f = (bits >> NUM_BACKENDS).bit_length()
        entry = table[FUNCTIONALITY_BASE[f] + ((bits & BACKEND_MASK).bit_length() & BACKEND_SELECT[f])]
        if entry is None:
            return None
        target = _memo_entry(entry, bits)
        if len(memo) < _MEMO_SIZE:
            memo[bits] = target
        return target

    def bound_redispatch(self, bits: int) -> Callable[..., Any]:
        """``partial(self.redispatch, bits)``, resolved now (Note [Bound kernels]).

        For ``bind_keyset`` implementations: a function of positional arguments that calls
        the kernel ``redispatch(bits, ...)`` would call, valid as long as this table is.
        """
        target = self.redispatch_target(bits)
        if target is None:  # reported (or backends loaded) when called, as redispatch does
            return partial(self.redispatch, bits)
        return bind_kernel(*target)

    def _report_missing(self, bits: int, args: tuple, kwargs: dict, redispatched: bool = False) -> Any:
        from . import plugins

        if plugins.backends_pending():  # lazy discovery: load backends, then retry this call once
            plugins.load_backends()
            if redispatched:
                return self.redispatch(bits, *args, **kwargs)
            # the bits were masked with the old table's fallthroughs: start from the arguments
            included, _, keep = tls_get()
            return self._dispatch_bits((self._extract(args, kwargs) | included) & keep, args, kwargs)
        raise missing_kernel_error(self, bits, args, kwargs)

    def _ambiguous_autogradother(self, *args: Any, **kwargs: Any) -> Any:
        raise ambiguous_autogradother_error(self)

    # --- introspection ----------------------------------------------------------------------
    def key_for(self, keyset: DispatchKeySet | int) -> DispatchKey:
        """The runtime key a call with these (already TLS-adjusted) bits dispatches to."""
        bits = int(keyset)
        masks = self._dispatch[0]
        bits &= masks[(bits & BACKEND_MASK).bit_length()]
        f = (bits >> NUM_BACKENDS).bit_length()
        return DispatchKey(FUNCTIONALITY_BASE[f] + ((bits & BACKEND_MASK).bit_length() & BACKEND_SELECT[f]))

    def table_entry(self, key: DispatchKey | str) -> tuple[Any, str]:
        """The computed ``(registration, label)`` for one runtime key (label ``"missing"`` if none)."""
        return self._entries.get(DispatchKey.parse(key) if isinstance(key, str) else key, (None, "missing"))

    @property
    def registrations(self) -> dict[DispatchKey, tuple[KernelRegistration, ...]]:
        """Registered kernels per key (runtime or alias), newest first; a read-only snapshot."""
        with self._dispatcher._lock:  # a registration on another thread may add a key meanwhile
            return {k: tuple(v) for k, v in self._kernels.items()}

    def has_kernel_for_dispatch_key(self, key: DispatchKey | str) -> bool:
        """True when a kernel is registered directly at ``key`` (``_dispatch_has_kernel_for_dispatch_key``)."""
        return bool(self._kernels.get(DispatchKey.parse(key)))

    def dump_table(self) -> str:
        """The computed table in ``torch._C._dispatch_dump_table``'s format."""
        return format_table(self)

    def dump_state(self) -> str:
        """The registrations in ``torch._C._dispatch_dump``'s format."""
        return format_state(self)

    def _repr_html_(self) -> str | None:
        """Jupyter: the computed dispatch table as a coloured table (``dispatchcore.notebook.table_html``)."""
        return rich_display("table_html", self)

    def __repr__(self) -> str:
        return f"<OperatorHandle {self.qualname}>"

    def __str__(self) -> str:
        ns, _, rest = self.qualname.partition("::")
        return f"{ns}.{rest.partition('.')[0]}.{self.overload_name or 'default'}"

    @property
    def is_defined(self) -> bool:
        return self.schema is not None

    # --- registration-time work (called with the registry lock held) -----------------------
    def _set_schema(self, schema: FunctionSchema | None, where: SourceLocation | None,
                    alias_analysis: str = "", tags: tuple[Any, ...] = ()) -> None:
        self.schema = schema
        self.def_location = where
        self.alias_analysis = alias_analysis
        self.tags = tags
        self._set_schema_info()
        # the entries (Tensor methods) read the memos without looking at the schema: without
        # one, every call must miss and reach __call__'s error (See Note [Impl before def])
        masks, table = self._dispatch[0], self._dispatch[1]
        self._dispatch = (masks, table, {}, {}, {}, {})

    def _set_schema_info(self) -> None:
        """Precompute what the call path needs from the schema (c10's makeBitsetForDispatchArgs)."""
        schema = self.schema
        if schema is None:  # an impossible arity sends every call to the general path's error
            self._tensor_pos, self._opt_pos, self._bounds, self._kw_names = (), (), (1, 0), frozenset()
            self._list_pos = ()
            self._lo, self._hi, self._value_pos, self._number_args, self._kw_plain = 1, 0, (), (), None
            self._kw_classes, self._kw_tensors = {}, ()
            return
        arguments = schema.arguments
        self._number_args = tuple(
            (i, name, kwarg_only, arguments[i].alias_info is not None)
            for i, name, kind, kwarg_only in schema.dispatch_arguments if kind != "list"
        ) if schema.numbers_as_tensors else ()
        self._value_pos = tuple(
            (i, classes) for i, arg in enumerate(schema.arguments)
            if not arg.kwarg_only and arg.dispatch_kind is None
            and (classes := _shallow_classes(arg.type)) is not None
        )
        positional = [a for a in schema.arguments if not a.kwarg_only]
        lo = sum(1 for a in positional if not a.has_default)
        hi = len(positional) if not schema.is_vararg else sys.maxsize
        self._bounds = (lo, hi)
        self._kw_names = frozenset(a.name for a in schema.arguments if a.kwarg_only)
        dispatch = schema.dispatch_arguments
        plain = tuple(i for i, _, kind, kwarg_only in dispatch if kind == "tensor" and not kwarg_only)
        optional = tuple(i for i, _, kind, kwarg_only in dispatch if kind == "optional" and not kwarg_only)
        lists = tuple(i for i, _, kind, kwarg_only in dispatch if kind == "list" and not kwarg_only)
        self._opt_pos, self._list_pos = optional, lists
        if optional or lists:  # ``plain`` is a new tuple, never _FIRST: __call__'s loop reads the others
            self._tensor_pos = plain
        else:
            self._tensor_pos = _FIRST if plain == _FIRST else _FIRST_TWO if plain == _FIRST_TWO else plain
        # Note [Optional Tensors on the fast path]: the fast path reads dispatch arguments by
        # position, so it serves ops whose dispatch arguments are required positional Tensors,
        # positional ``Tensor?`` ones (``nll_loss_forward(self, target, weight, ...)``, most
        # often given None: it adds no keys; an absent trailing one is None too) and required
        # positional lists of Tensors (``cat(tensors, dim)``; None items add no keys, as for
        # ``Tensor?[] indices``). Anything else at such a position (a number, a list where a
        # Tensor goes) has no ``_key_bits``: the general path binds it and raises bind's error;
        # None in a ``Tensor[]`` reaches the kernel, whose failure checks the values (Note [Bind
        # on failure]). Ops with keyword-only Tensors go general, or take Note [Keyword calls].
        required = plain + lists
        if len(plain) + len(optional) + len(lists) == len(dispatch) and all(i < lo for i in required):
            self._lo, self._hi = lo, hi
        else:
            self._lo, self._hi = 1, 0
        keywords = [a for a in arguments if a.kwarg_only]
        # See Note [Keyword calls]: keyword-only arguments that are either no dispatch argument
        # and have a default (so a call that leaves them out binds too), or a plain Tensor
        # (``out``), which the call must give
        kw_tensors = sum(1 for a in keywords if a.dispatch_kind == "tensor")
        positional_ok = len(plain) + len(optional) + len(lists) + kw_tensors == len(dispatch) and all(
            i < lo for i in required)
        plain_keywords = keywords and positional_ok and all(
            (a.dispatch_kind is None and a.has_default) or a.dispatch_kind == "tensor" for a in keywords)
        self._kw_plain = frozenset(a.name for a in keywords) if plain_keywords else None
        self._kw_classes = {a.name: _shallow_classes(a.type) for a in keywords
                            if a.dispatch_kind is None} if plain_keywords else {}
        self._kw_tensors = tuple(a.name for a in keywords if a.dispatch_kind == "tensor") if plain_keywords else ()

    # Note [Shared table entries]: an operator's table has ~90 runtime keys but ~30 distinct
    # registrations behind them (an alias key's kernel fills every backend's slot, a fallback
    # registered per backend shares one function). One entry tuple per (registration, label) and
    # one slot per kernel, shared by the keys that use them, keep the ~800 aten operators'
    # tables at a fraction of the objects a tuple and a closure per key would make: the garbage
    # collector walks every one of them in each full collection, which a long autograd graph
    # triggers again and again while it grows. Nothing depends on a slot's identity.
    def _rebuild(self, keys: Any = None) -> None:
        """Recompute table entries (all, or just ``keys``) and swap in a new dispatch state."""
        dispatcher = self._dispatcher
        fallbacks = dispatcher._fallbacks
        entries = dict(self._entries)
        masks_stale = keys is None
        shared_slots: dict[Any, _Slot] = {}
        if keys is None:
            keys = set()
            for k in self._kernels:
                keys |= affected_keys(k)
            entries = dict(dispatcher._fallback_entries)
            table: list[_Slot] = [None] * TABLE_SIZE
            for k, entry in entries.items():
                table[k] = self._slot(k, entry, shared_slots)
        else:  # only ``keys`` can change: keep the other slots' bound kernels and, unless a
            # fallthrough comes or goes, the masks (a fallback change touches every operator)
            table = list(self._dispatch[1])
        shared_entries = {(id(e[0]), e[1]): e for e in entries.values()}
        for k in keys:
            entry = compute_table_entry(self._kernels, fallbacks, k)
            old = entries.get(k)
            if entry[0] is None:
                entries.pop(k, None)
                table[k] = None
            else:
                entry = shared_entries.setdefault((id(entry[0]), entry[1]), entry)
                entries[k] = entry
                if old is None or old[0] is not entry[0] or table[k] is None:
                    table[k] = self._slot(k, entry, shared_slots)
            if getattr(old and old[0], "fallthrough", False) != getattr(entry[0], "fallthrough", False):
                masks_stale = True
        self._entries = entries
        masks = self._compute_masks(entries) if masks_stale else self._dispatch[0]
        self._dispatch = (masks, table, {}, {}, {}, {})  # fresh memos: See Note [Dispatch memo]
        for forget in self._on_rebuild:
            forget()

    def _rewrap(self) -> None:
        """Re-make every slot from the current entries (the tracer switched ``slot_wrapper``)."""
        table: list[_Slot] = [None] * TABLE_SIZE
        shared_slots: dict[Any, _Slot] = {}
        for k, entry in self._entries.items():
            table[k] = self._slot(k, entry, shared_slots)
        self._dispatch = (self._dispatch[0], table, {}, {}, {}, {})
        for forget in self._on_rebuild:
            forget()

    def _forget_memos(self) -> None:
        """Empty the memos, keeping the table (See Note [Dispatch memo])."""
        self._dispatch = (self._dispatch[0], self._dispatch[1], {}, {}, {}, {})
        for forget in self._on_rebuild:
            forget()

    def _slot(self, key: DispatchKey, entry: tuple[Any, str], shared: dict[Any, _Slot]) -> _Slot:
        """The table slot for one entry; wrapped by the tracer while a trace is possible.

        ``shared`` holds the slots made so far for this table, by what ``_bound_kernel`` reads
        of a registration (See Note [Shared table entries]); a traced slot names its key, so it
        is never shared.
        """
        reg = entry[0]
        if slot_wrapper is not None:
            slot = _bound_kernel(self, reg)
            return slot if slot is None else slot_wrapper(self, key, entry, slot)
        if reg is None or reg is AMBIGUOUS_AUTOGRADOTHER:
            return _bound_kernel(self, reg)
        what = (reg.bind, reg.kernel, reg.boxed_fallback, reg.with_keyset)
        try:
            slot = shared.get(what, _UNSHARED)
        except TypeError:  # a kernel that cannot be hashed is never shared
            return _bound_kernel(self, reg)
        if slot is _UNSHARED:
            slot = shared[what] = _bound_kernel(self, reg)
        return slot

    @staticmethod
    def _compute_masks(entries: dict[DispatchKey, tuple[Any, str]]) -> list[int]:
        """Per highest-backend index, the bits to keep: fallthrough functionalities are cleared."""
        from .keys import is_per_backend_functionality, runtime_key, to_functionality_key

        masks = [FULL] * _NUM_MASKS
        for k, (reg, _) in entries.items():
            if k == DispatchKey.Undefined or not getattr(reg, "fallthrough", False):
                continue
            functionality = to_functionality_key(k)
            fbit = key_bits(functionality)
            if is_per_backend_functionality(functionality):
                backend = int(k) - int(runtime_key(functionality, 0))
                masks[backend] &= ~fbit
            else:
                for b in range(_NUM_MASKS):
                    masks[b] &= ~fbit
        return masks


# Every runtime key, for full-table checks and dumps.
ALL_TABLE_KEYS: tuple[DispatchKey, ...] = RUNTIME_KEYS
