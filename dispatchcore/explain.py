"""Explain a call's dispatch decision without running it, and simulate registrations.

Three tools for the questions the dispatcher's behaviour raises:

* ``explain(op, *args, **kwargs)`` answers "which kernel would this call run, and why (not)?"
  It replays ``Dispatcher::call`` (``ATen/core/dispatch/Dispatcher.h``) step by step on the call's arguments and this
  thread's state: the key set each dispatch argument contributes, what the thread-local include
  and exclude sets add and mask, the operator's fallthrough keys, the effective key set, the
  chosen runtime key, its table entry and the rule of ``compute_table_entry`` that chose it, then
  what the chosen kernel usually does next (an Autograd kernel redispatches with
  ``ks & after_autograd_keyset``, ...). No kernel runs. A call that would fail names the
  missing registration and the smallest one that fixes it.
* ``what_if(op, add=[(key, kernel)], remove=[key])`` computes the table the operator would have
  after those (de)registrations, on a copy of its registrations, and diffs it against the real
  one in ``dump_table``'s format. The registry is never touched.
* ``check_commutes(registrations)`` registers the same kernels in every order (each step
  recomputing only the affected entries, as registration does) and reports whether all orders
  give one table, like ``commute()`` in PyTorch's test_dispatch.py.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from . import dispatcher as _dispatcher_module
from .dispatcher import get_autograd_fallback_mode, get_dispatcher
from .dtypes import WrappedNumber
from .dumps import DUMP_ORDER
from .keys import (
    BackendComponent,
    DispatchKey,
    alias_expansion,
    is_alias_key,
    to_functionality_key,
)
from .keyset import (
    AFTER_ADINPLACEORVIEW,
    AFTER_AUTOGRAD,
    AUTOGRAD_KEYSET,
    BACKEND_MASK,
    DEFAULT_EXCLUDED,
    DEFAULT_INCLUDED,
    NUM_BACKENDS,
    DispatchKeySet,
    full_after_bits,
    highest_priority_index,
    key_bits,
)
from .operator import KernelRegistration, OperatorHandle, is_dispatch_arg
from .resolution import (
    AMBIGUOUS_AUTOGRADOTHER,
    AUTOGRADOTHER_BACKENDS,
    affected_keys,
    backend_keys_for_autograd,
    compute_table_entry,
)

__all__ = [
    "CommuteReport",
    "Explanation",
    "Step",
    "WhatIf",
    "check_commutes",
    "describe_rule",
    "explain",
    "resolve_op",
    "what_if",
]

_D = DispatchKey
_AUTOGRAD_RUNTIME = alias_expansion(_D.Autograd)
_AUTOCAST_FUNCTIONALITIES = frozenset(k for k in DispatchKey if k.name.startswith("Autocast"))
# Functionalities whose kernels compute results: a kernel here ends the dispatch chain.
_BACKEND_FUNCTIONALITIES = frozenset({
    _D.Dense, _D.FPGA, _D.Vulkan, _D.Metal, _D.Quantized, _D.CustomRNGKeyId, _D.MkldnnCPU, _D.Sparse,
    _D.SparseCsr, _D.NestedTensor,
})
_MAX_STEPS = 16


# --- operator lookup --------------------------------------------------------------------------
def _qualname(name: str) -> str:
    """``ns::name[.overload]``; also accepts the ``ops`` spelling ``ns.name[.overload]``."""
    name = name.strip()
    if "::" not in name and "." in name:
        ns, _, rest = name.partition(".")
        name = f"{ns}::{rest}"
    return name[:-8] if name.endswith(".default") else name


def resolve_op(op: Any, args: tuple | None = None, kwargs: dict | None = None) -> OperatorHandle:
    """The ``OperatorHandle`` for an op given as a handle, an ``ops`` packet or a name.

    A packet (``dispatchcore.ops.aten.add``, or a name without overload such as ``"aten::add"``)
    picks its overload as calling the packet would: the only one, else the first (in definition
    order) whose schema accepts ``args``/``kwargs``. As in torch, a Python number fits a
    ``Tensor`` argument of the operators that take numbers for tensors (Note [Numbers for
    Tensors]), so ``aten.add`` with ``(x, 2)`` is ``add.Tensor``, as ``x + 2`` is.

    Raises:
        LookupError: no such operator, or a packet with several overloads and no arguments to
            choose by. RuntimeError: no overload accepts the arguments (the packet call's error).
    """
    from .ops import OpOverloadPacket

    if isinstance(op, OperatorHandle):
        return op
    dispatcher = get_dispatcher()
    if isinstance(op, OpOverloadPacket):
        namespace, name = op._namespace, op._name
    elif isinstance(op, str):
        qualname = _qualname(op)
        handle = dispatcher._ops.get(qualname)
        if handle is not None and (handle.schema is not None or handle._kernels):
            return handle
        namespace, sep, name = qualname.partition("::")
        if not sep or not name or "." in name or not dispatcher.overloads(namespace, name):
            raise LookupError(
                f"No operator named {op!r} is defined (names look like 'aten::add.Tensor'; "
                "dispatchcore.get_dispatcher().operator_names() lists them).")
    else:
        raise TypeError(
            f"expected an OperatorHandle, an ops packet or a qualified name, got {type(op).__name__}")
    candidates = dispatcher.overloads(namespace, name)
    if not candidates:
        raise LookupError(f"No operator named '{namespace}::{name}' is defined.")
    if len(candidates) == 1:
        return candidates[0]
    if args is None:
        names = ", ".join(f"{namespace}::{name}" + (f".{c.overload_name}" if c.overload_name else "")
                          for c in candidates)
        raise LookupError(
            f"'{namespace}::{name}' has {len(candidates)} overloads ({names}); name one, e.g. "
            f"'{candidates[0].qualname}'.")
    for candidate in candidates:
        assert candidate.schema is not None  # overloads() lists defined operators only
        try:
            candidate.schema.bind(args, kwargs or {}, is_tensor=is_dispatch_arg)
        except RuntimeError:
            continue
        return candidate
    schemas = "\n".join(f"  {c.schema}" for c in candidates)
    raise RuntimeError(
        f"{namespace}::{name}() received an invalid combination of arguments. No overload accepts "
        f"them; the schemas are:\n{schemas}")


# --- small formatting helpers -----------------------------------------------------------------
def _ks(bits: int) -> str:
    return f"{DispatchKeySet._from_bits(bits)}  ({bits:#x})"


def _lost(bits: int, fewer: int) -> list[DispatchKey]:
    """The runtime keys of ``bits`` that ``fewer`` lacks, in priority order (lowest first)."""
    kept = set(DispatchKeySet._from_bits(fewer))
    return [k for k in DispatchKeySet._from_bits(bits) if k not in kept]


def _names(keys: Iterable[DispatchKey]) -> str:
    names = [k.name for k in keys]
    return ", ".join(names) if names else "nothing"


def bit_names(bits: int) -> list[str]:
    """Every set bit by name: backend components (``CPUBit``) and functionality keys.

    Unlike printing a ``DispatchKeySet``, this also names a per-backend functionality that has no
    backend bit beside it (``AutogradFunctionality`` in an exclude set).
    """
    names = []
    for b in range(bits.bit_length()):
        if bits >> b & 1:
            names.append(BackendComponent(b + 1).name if b < NUM_BACKENDS else DispatchKey(b - NUM_BACKENDS + 1).name)
    return names


def _line(key: DispatchKey, entry: tuple[Any, str]) -> str:
    """One ``dump_table`` line (``dispatcher.format_table``'s format)."""
    reg, label = entry
    fallthrough = "fallthrough " if getattr(reg, "fallthrough", False) else ""
    return f"{key.name}: {fallthrough}{reg.debug} [{label}]"


def _describe_value(value: Any) -> str:
    if is_dispatch_arg(value):
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        if shape is not None and dtype is not None:
            device = getattr(value, "device", None)
            parts = [str(getattr(device, "type", device)), "x".join(str(s) for s in shape) or "scalar",
                     str(dtype).rpartition(".")[2]]
            if getattr(value, "requires_grad", False):
                parts.append("requires_grad")
            meta = getattr(value, "_meta", None)
            if meta.__class__ is WrappedNumber:  # a Python number operand (Note [Wrapped numbers])
                parts.append(f"wrapped number {meta.value!r}")
            return "Tensor(" + ", ".join(parts) + ")"
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe_value(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


def _fix(op: OperatorHandle, key: DispatchKey, kernel: str = "kernel") -> str:
    ns, _, rest = op.qualname.partition("::")
    return f"Library({ns!r}, 'IMPL').impl({rest!r}, {kernel}, {key.name!r})"


# --- the table rules, in words ----------------------------------------------------------------
def describe_rule(kernels: Mapping[DispatchKey, Sequence[Any]], fallbacks: Mapping[DispatchKey, Any],
                  key: DispatchKey) -> str:
    """Which rule of ``compute_table_entry`` decides ``key``'s entry, and why the others did not.

    The entry itself comes from ``compute_table_entry`` (the single source of truth); this only
    puts its decision into words, naming the registered aliases that were passed over.

    Example:
        >>> describe_rule({DispatchKey.CompositeImplicitAutograd: ["cia"]}, {}, DispatchKey.CPU)[:44]
        'rule 2.3 (CompositeImplicitAutograd): no ker'
    """
    reg, label = compute_table_entry(kernels, fallbacks, key)
    name = key.name

    def has(alias: DispatchKey) -> bool:
        return bool(kernels.get(alias))

    def covers(alias: DispatchKey) -> bool:
        return key == _D.Undefined or key in alias_expansion(alias)

    if label == "kernel":
        return f"rule 1 (direct): a kernel is registered at {name} itself [kernel]"
    if label == "default backend kernel":
        alias = (_D.CompositeExplicitAutogradNonFunctional
                 if reg is (kernels.get(_D.CompositeExplicitAutogradNonFunctional) or [None])[0]
                 else _D.CompositeExplicitAutograd)
        number = "2.1" if alias == _D.CompositeExplicitAutogradNonFunctional else "2.2"
        where = " (Undefined serves calls without dispatch keys)" if key == _D.Undefined else ""
        return (f"rule {number} ({alias.name}): no kernel at {name}; the {alias.name} kernel covers "
                f"{name}{where} [default backend kernel]")
    if label == "nested kernel":
        return (f"rule 2.3 (CompositeImplicitAutogradNestedTensor): no kernel at {name}; the "
                f"CompositeImplicitAutogradNestedTensor kernel covers it [nested kernel]")
    if label == "ambiguous autogradother":
        backends = [k.name for k, regs in kernels.items()
                    if regs and not is_alias_key(k) and key_bits(k) and key_bits(k) & AUTOGRADOTHER_BACKENDS
                    == key_bits(k)]
        return ("rule 2.3 (ambiguity): CompositeImplicitAutograd is registered and so is a backend mapped "
                f"to AutogradOther ({', '.join(backends)}); the entry is the erroring kernel "
                "[ambiguous autogradother]")
    if label == "math kernel":
        return (f"rule 2.3 (CompositeImplicitAutograd): no kernel at {name} and no "
                f"CompositeExplicitAutograd kernel; the CompositeImplicitAutograd kernel covers {name} "
                "[math kernel]")
    passed = []
    if has(_D.CompositeExplicitAutogradNonFunctional) and not covers(_D.CompositeExplicitAutogradNonFunctional):
        passed.append(f"CompositeExplicitAutogradNonFunctional does not cover {name}")
    if has(_D.CompositeExplicitAutograd) and not covers(_D.CompositeExplicitAutograd):
        passed.append(f"CompositeExplicitAutograd does not cover {name}")
    if has(_D.CompositeImplicitAutograd):
        if not covers(_D.CompositeImplicitAutograd):
            passed.append(f"CompositeImplicitAutograd does not cover {name}")
        else:
            below = [k.name for k, regs in kernels.items() if regs and not is_alias_key(k)
                     and key_bits(k) and key_bits(k) & backend_keys_for_autograd(key) == key_bits(k)]
            why = (f"the backend below {name} has a kernel of its own ({', '.join(below)})" if below
                   else "a CompositeExplicitAutograd kernel exists")
            passed.append(f"CompositeImplicitAutograd defers because {why} (has_backend_kernel)")
    if has(_D.Autograd) and label != "autograd kernel" and not covers(_D.Autograd):
        passed.append(f"Autograd does not cover {name}")
    aside = f" ({'; '.join(passed)})" if passed else ""
    if label == "autograd kernel":
        return (f"rule 2.4 (Autograd alias): no kernel at {name}{aside}; the Autograd kernel covers {name} "
                "[autograd kernel]")
    if label == "batched kernel":
        return (f"rule 2.5 (FuncTorchBatchedDecomposition): no kernel at {name}; the batched decomposition "
                "[batched kernel]")
    if label == "backend fallback":
        return (f"rule 3 (backend fallback): no kernel at {name} and no alias kernel applies{aside}; the "
                f"global backend fallback for {name} [backend fallback]")
    return (f"rule 4 (missing): no kernel at {name}, no alias kernel applies{aside}, and no backend "
            f"fallback is registered for {name}")


# --- explain ----------------------------------------------------------------------------------
@attrs.frozen
class ArgumentKeys:
    """One dispatch argument and the key set it contributes."""

    name: str
    kind: str  # "tensor", "optional" or "list" (schema.dispatch_arguments)
    value: str  # a short description of the value
    bits: int


@attrs.frozen
class Step:
    """One hop of the predicted path: the key looked up, its entry and what the kernel does next."""

    kind: str  # "call" (TLS and fallthrough mask applied) or "redispatch" (neither)
    key: DispatchKey
    keyset: int  # the bits the kernel receives
    registration: Any  # the table entry's registration, None when missing
    label: str  # dump_table's label ("kernel", "autograd kernel", ...; "missing")
    rule: str  # describe_rule's words
    note: str  # what the kernel usually does next

    @property
    def kernel(self) -> str:
        """The entry as ``dump_table`` prints it after the key (debug string and label)."""
        if self.registration is None:
            return "(no kernel) [missing]"
        fallthrough = "fallthrough " if getattr(self.registration, "fallthrough", False) else ""
        return f"{fallthrough}{self.registration.debug} [{self.label}]"


@attrs.frozen
class Explanation:
    """The dispatcher's decision for one call, computed without running any kernel.

    ``key`` is the runtime key the call dispatches to and ``steps`` the predicted path (the
    first step is the call itself). ``ok`` is False when the call would raise; ``error``,
    ``missing`` and ``fix`` then say why and what registration would fix it. ``str()`` prints it.
    """

    op: OperatorHandle
    call: str
    arguments: tuple[ArgumentKeys, ...]
    other_arguments: tuple[str, ...]
    contributed: int
    included: int
    excluded: int
    after_tls: int
    effective: int
    fallthrough_skipped: tuple[DispatchKey, ...]
    key: DispatchKey
    steps: tuple[Step, ...]
    tls_notes: tuple[str, ...]
    grad_mode: bool
    error: str | None = None
    missing: str | None = None
    fix: str | None = None
    backends_loaded: bool = False

    @property
    def ok(self) -> bool:
        """True when the call would run (as far as dispatch can tell: kernels may still raise)."""
        return self.error is None

    @property
    def entry(self) -> tuple[Any, str]:
        """The chosen key's table entry: ``(registration or None, label)``."""
        return self.steps[0].registration, self.steps[0].label

    @property
    def rule(self) -> str:
        return self.steps[0].rule

    @property
    def final_key(self) -> DispatchKey:
        """The key of the last predicted hop (``CPU`` for a CPU call through AutogradCPU)."""
        return self.steps[-1].key

    @property
    def path(self) -> list[DispatchKey]:
        return [s.key for s in self.steps]

    @property
    def added_by_include(self) -> list[DispatchKey]:
        return _lost(self.contributed | self.included, self.contributed)

    @property
    def masked_by_exclude(self) -> list[DispatchKey]:
        return _lost(self.contributed | self.included, self.after_tls)

    def _repr_html_(self) -> str:
        """Jupyter: the call, its key-set strips and path (``dispatchcore.notebook.explanation_html``)."""
        from .notebook import explanation_html

        return explanation_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython: the text ``str()`` prints."""
        from .notebook import pretty

        pretty(self, printer, cycle)

    def __str__(self) -> str:
        out = [f"explain {self.call}", f"  schema: {self.op.schema}"]
        out.append("1. dispatch arguments (each contributes its key set)")
        if not self.arguments:
            out.append("   none: no Tensor argument, so the arguments contribute nothing")
        width = max((len(a.name) for a in self.arguments), default=0)
        for a in self.arguments:
            out.append(f"   {a.name:<{width}}  {a.value}: {_ks(a.bits)}")
        for other in self.other_arguments:
            out.append(f"   ({other}: not a Tensor, never contributes)")
        out.append(f"   together: {_ks(self.contributed)}")
        out.append("2. thread-local state")
        out.append(f"   include set {_ks(self.included)} adds: {_names(self.added_by_include)}")
        out.append(f"   exclude set {_ks(self.excluded)} masks: {_names(self.masked_by_exclude)}")
        for note in self.tls_notes:
            out.append(f"   {note}")
        out.append(f"   grad mode: {'on' if self.grad_mode else 'off'} (a flag, not a key: it changes no key set)")
        out.append(f"3. fallthrough keys of {self.op.qualname} skipped: {_names(self.fallthrough_skipped)}")
        out.append(f"4. effective key set: {_ks(self.effective)}")
        out.append(f"   highest priority key: {self.key.name}")
        first = self.steps[0]
        out.append(f"5. table entry: {self.key.name}: {first.kernel}")
        out.append(f"   {first.rule}")
        out.append("6. what happens next")
        kw = max(len(s.key.name) for s in self.steps)
        for s in self.steps:
            out.append(f"   [{s.kind}]{' ' * (10 - len(s.kind))} {s.key.name:<{kw}}  {s.kernel}")
            if s is not first:
                out.append(f"   {'':<12} {'':<{kw}}  {s.rule}")
            if s.note:
                out.append(f"   {'':<12} {'':<{kw}}  -> {s.note}")
        if self.backends_loaded:
            out.append("   (backends were loaded first, as the call itself would do)")
        if self.ok:
            out.append(f"result: the call would run {' -> '.join(k.name for k in self.path)}. "
                       "(explain ran no kernel.)")
        else:
            out.append(f"result: the call would FAIL: {self.error}")
            if self.missing:
                out.append(f"   missing: {self.missing}")
            if self.fix:
                out.append(f"   smallest fix: {self.fix}")
        return "\n".join(out)


def _tls_notes(included: int, excluded: int) -> list[str]:
    """Which guard or mode most likely produced these thread-local sets (LocalDispatchKeySet.h, InferenceMode.h)."""
    notes = []
    extra_ex, lifted_ex = excluded & ~DEFAULT_EXCLUDED, DEFAULT_EXCLUDED & ~excluded
    extra_in, lifted_in = included & ~DEFAULT_INCLUDED, DEFAULT_INCLUDED & ~included
    adiov = key_bits(_D.ADInplaceOrView)
    if extra_ex & AUTOGRAD_KEYSET == AUTOGRAD_KEYSET:
        if extra_ex & adiov:
            notes.append("the Autograd keys and ADInplaceOrView are excluded: "
                         "AutoDispatchBelowADInplaceOrView is active")
        elif lifted_in & adiov:
            notes.append("the Autograd keys are excluded and ADInplaceOrView is not included: "
                         "inference_mode() is active")
        else:
            notes.append("the Autograd keys are excluded: AutoDispatchBelowAutograd is active")
        extra_ex &= ~(AUTOGRAD_KEYSET | adiov)
        lifted_in &= ~adiov
    if extra_ex:
        notes.append(f"also excluded beyond the default: {', '.join(bit_names(extra_ex))} "
                     "(an ExcludeDispatchKeyGuard or tls_set_dispatch_key_excluded)")
    if lifted_ex:
        notes.append(f"no longer excluded: {', '.join(bit_names(lifted_ex))} (autocast is enabled, or a guard "
                     "lifted the default exclusion)")
    if extra_in:
        notes.append(f"also included beyond the default: {', '.join(bit_names(extra_in))} "
                     "(an IncludeDispatchKeyGuard or tls_set_dispatch_key_included)")
    if lifted_in:
        notes.append(f"default include keys removed: {', '.join(bit_names(lifted_in))}")
    return notes


def _bind(op: OperatorHandle, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    if op.schema is None:
        raise RuntimeError(
            f"{op.qualname} has no schema: it was never defined, or its Library was destroyed. Define "
            "it with Library(ns, 'DEF' or 'FRAGMENT').define(schema).")
    if op._number_args:  # a number for a Tensor: wrapped as the call wraps it (Note [Numbers for Tensors])
        args, kwargs = op._wrap_numbers(args, kwargs)
    if not op._simple_ok(args, kwargs):
        args, kwargs = op.schema.bind(args, kwargs, is_tensor=is_dispatch_arg)
    return args, kwargs


def explain(op: Any, *args: Any, **kwargs: Any) -> Explanation:
    """Explain which kernel ``op(*args, **kwargs)`` would run, and why, without running any.

    ``op`` is an ``OperatorHandle`` (``dispatchcore.ops.aten.add.Tensor``), a packet
    (``dispatchcore.ops.aten.add``: the overload is picked as the packet call would pick it) or a
    qualified name (``"aten::add.Tensor"``). The current thread's include/exclude sets and grad
    mode are used, so ``with AutoDispatchBelowAutograd(): print(explain(...))`` explains a call
    made under that guard. ``print(explain(...))`` shows the whole decision.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.explain import explain
        >>> e = explain(dc.ops.aten.mul, dc.ones(2, requires_grad=True), dc.ones(2))
        >>> e.key, e.final_key, e.entry[1]
        (<DispatchKey.AutogradCPU: 134>, <DispatchKey.CPU: 49>, 'autograd kernel')
    """
    from . import plugins

    handle = resolve_op(op, args, kwargs)
    explanation = _explain(handle, args, kwargs, loaded=False)
    if any(s.label == "missing" for s in explanation.steps) and plugins.backends_pending():
        plugins.load_backends()  # what the call would do before raising (operator._report_missing)
        explanation = _explain(handle, args, kwargs, loaded=True)
    return explanation


def _explain(op: OperatorHandle, args: tuple, kwargs: dict, loaded: bool) -> Explanation:
    from .autograd.grad_mode import is_grad_enabled
    from .tls import tls_get

    call_args = ", ".join([_describe_value(a) for a in args] + [f"{k}={_describe_value(v)}" for k, v in kwargs.items()])
    call = f"{op.qualname}({call_args})"
    args, kwargs = _bind(op, args, kwargs)
    assert op.schema is not None
    arguments, contributed = [], 0
    dispatch_names = set()
    for index, name, kind, kwarg_only in op.schema.dispatch_arguments:
        dispatch_names.add(name)
        value = kwargs.get(name) if kwarg_only or index >= len(args) else args[index]
        if value is None:
            continue
        bits = 0
        for v in (value if kind == "list" else [value]):
            if v is not None:
                bits |= v._key_bits
        contributed |= bits
        arguments.append(ArgumentKeys(name, kind, _describe_value(value), bits))
    others = []
    for index, argument in enumerate(op.schema.arguments):
        if argument.name in dispatch_names:
            continue
        present = (argument.name in kwargs) if argument.kwarg_only or index >= len(args) else True
        if present:
            value = kwargs[argument.name] if argument.kwarg_only or index >= len(args) else args[index]
            others.append(f"{argument.name}={_describe_value(value)}")
    included, excluded, keep = tls_get()
    after_tls = (contributed | included) & keep
    effective = after_tls & op._dispatch[0][(after_tls & BACKEND_MASK).bit_length()]
    skipped = tuple(_lost(after_tls, effective))
    key = DispatchKey(highest_priority_index(effective))
    steps, error, missing, fix = _walk(op, effective, args, kwargs, included, keep)
    return Explanation(
        op=op, call=call, arguments=tuple(arguments), other_arguments=tuple(others),
        contributed=contributed, included=included, excluded=excluded, after_tls=after_tls,
        effective=effective, fallthrough_skipped=skipped, key=key, steps=tuple(steps),
        tls_notes=tuple(_tls_notes(included, excluded)), grad_mode=is_grad_enabled(),
        error=error, missing=missing, fix=fix, backends_loaded=loaded,
    )


def _walk(op: OperatorHandle, bits: int, args: tuple, kwargs: dict, included: int,
          keep: int) -> tuple[list[Step], str | None, str | None, str | None]:
    """Follow the predicted hops from the call's effective key set until a kernel ends the chain."""
    kernels, fallbacks = _snapshot(op)  # a consistent copy, even while another thread registers
    steps: list[Step] = []
    kind = "call"
    for _ in range(_MAX_STEPS):
        key = DispatchKey(highest_priority_index(bits))
        reg, label = op.table_entry(key)
        rule = describe_rule(kernels, fallbacks, key)
        if reg is None:
            error, missing, fix = _missing(op, key, kind)
            steps.append(Step(kind, key, bits, None, "missing", rule, "no kernel: the dispatcher raises"))
            return steps, error, missing, fix
        nxt, note, failure = _next_hop(op, key, reg, label, bits, args, kwargs, included, keep)
        steps.append(Step(kind, key, bits, reg, label, rule, note))
        if failure is not None:
            return (steps, *failure)
        if nxt is None:
            return steps, None, None, None
        kind, bits = nxt
    return steps, None, None, None


def _missing(op: OperatorHandle, key: DispatchKey, kind: str) -> tuple[str, str, str]:
    registered = ", ".join(k.name for k in sorted(op.registrations, key=int)) or "none"
    how = "after a redispatch " if kind == "redispatch" else ""
    if key == _D.Undefined:
        error = ("DispatchError: There were no tensor arguments to this function (e.g., you passed an empty "
                 f"list of Tensors), but no fallback function is registered for schema {op.qualname}.")
        missing = (f"no dispatch key is left {how}(no Tensor arguments, or every key was masked or a "
                   f"fallthrough), and {op.qualname} has no kernel for Undefined: no CompositeExplicitAutograd "
                   f"or CompositeImplicitAutograd kernel (registered: {registered})")
        fix = (f"{_fix(op, _D.CompositeExplicitAutograd)} (it serves calls without tensors), or give the call a "
               "tensor argument, or register a 'BackendSelect' kernel that picks a backend from device=")
        return error, missing, fix
    error = f"DispatchError: Could not run '{op.qualname}' with arguments from the '{key.name}' backend."
    missing = (f"{op.qualname} has no kernel for {key.name} {how}(nothing registered at {key.name}, no alias "
               f"kernel covers it, no backend fallback for it; registered: {registered})")
    functionality = to_functionality_key(key)
    if key in _AUTOGRAD_RUNTIME:
        fix = f"{_fix(op, key)} (or {_fix(op, _D.Autograd)} for every backend)"
    elif functionality in _BACKEND_FUNCTIONALITIES:
        fix = (f"{_fix(op, key)} (or a {_D.CompositeExplicitAutograd.name!r} kernel, which serves "
               "every backend)")
    else:
        fix = _fix(op, key)
    return error, missing, fix


def _next_hop(op: OperatorHandle, key: DispatchKey, reg: Any, label: str, bits: int, args: tuple,
              kwargs: dict, included: int,
              keep: int) -> tuple[tuple[str, int] | None, str, tuple[str, str | None, str] | None]:
    """(next hop, what the kernel does, failure) for a kernel known by its key and label."""
    name = key.name
    if reg is AMBIGUOUS_AUTOGRADOTHER:
        return None, "raises the ambiguity error", (
            f"RuntimeError: {op.qualname} has kernels registered to both CompositeImplicitAutograd and a "
            "backend mapped to AutogradOther.",
            "a kernel of its own at AutogradOther, which would beat the ambiguity (rule 1)",
            _fix(op, _D.AutogradOther))
    if getattr(reg, "fallthrough", False):  # reachable only by redispatch, which applies no mask
        return None, "fallthrough_kernel raises: a redispatch must mask fallthrough keys off", (
            f"RuntimeError: fallthrough_kernel was executed but it should have been short-circuited by the "
            f"dispatcher (the redispatch key set still held {name}).",
            None,
            f"redispatch with ks & DispatchKeySet.full_after({name!r}) so {name} is masked off")
    if label in ("math kernel", "nested kernel"):
        return None, ("the composite kernel runs; the operators it calls dispatch on their own (autograd "
                      "comes from them)"), None
    if label == "default backend kernel":
        return None, "the CompositeExplicitAutograd kernel computes the result for every backend", None
    functionality = to_functionality_key(key)
    dispatcher_file = reg.where is not None and reg.where.file == "dispatchcore/dispatcher.py"
    if key in _AUTOGRAD_RUNTIME:
        below = bits & AFTER_AUTOGRAD
        target = DispatchKey(highest_priority_index(below))
        if reg.kernel is _dispatcher_module._autograd_fallback:
            mode = get_autograd_fallback_mode()
            note = (f"the autograd fallback (basicAutogradNotImplementedFallback, mode {mode!r}) redispatches "
                    f"with ks & after_autograd_keyset = {DispatchKeySet._from_bits(below)} -> {target.name}, "
                    "with no TLS guard")
            from .autograd.grad_mode import is_grad_enabled

            if mode == "warn" and is_grad_enabled() and _any_requires_grad(args, kwargs):
                note += ("; an input requires grad, so it attaches a WarnNotImplemented node that warns at "
                         "backward (register an Autograd kernel to differentiate it)")
            return ("redispatch", below), note, None
        return ("redispatch", below), (
            "an autograd kernel usually records the graph node, enters AutoDispatchBelowADInplaceOrView and "
            f"redispatches with ks & after_autograd_keyset = {DispatchKeySet._from_bits(below)} -> "
            f"{target.name}"), None
    if key == _D.ADInplaceOrView:
        below = bits & AFTER_ADINPLACEORVIEW
        target = DispatchKey(highest_priority_index(below))
        return ("redispatch", below), (
            "the ADInplaceOrView kernel enters AutoDispatchBelowADInplaceOrView, redispatches with "
            f"ks & after_ADInplaceOrView_keyset = {DispatchKeySet._from_bits(below)} -> {target.name}, then "
            "bumps the version counter (in-place) or sets up the view"), None
    if key == _D.BackendSelect:
        from ._core_kernels import _backend_bits

        device = kwargs.get("device")
        try:
            below = (_backend_bits(device) | included) & keep & full_after_bits(_D.BackendSelect)
        except RuntimeError as e:
            return None, "the BackendSelect kernel cannot map the device to a backend", (
                f"RuntimeError: {e}", None, "pass device= a device type a backend registered")
        target = DispatchKey(highest_priority_index(below))
        return ("redispatch", below), (
            f"a BackendSelect kernel computes a key set from device={device!r} (None means cpu), "
            f"adds the TLS and redispatches below BackendSelect: {DispatchKeySet._from_bits(below)} -> "
            f"{target.name}"), None
    if key == _D.Meta and reg.kernel is _dispatcher_module._meta_fallback:
        return None, "the Meta backend fallback raises", (
            f"DispatchError: {op.qualname}: attempted to run this operator with Meta tensors, but there was "
            "no fake impl or Meta kernel registered.",
            f"a Meta kernel for {op.qualname} (only the raising Meta backend fallback applies)",
            _fix(op, _D.Meta, "meta_kernel"))
    if label == "backend fallback" and dispatcher_file:  # a built-in fallback that passes the call down
        below = bits & full_after_bits(key) & ~key_bits(key)
        target = DispatchKey(highest_priority_index(below))
        if key == _D.Python:
            modes = _dispatch_modes()
            if modes:
                return ("call", below), (
                    f"the Python fallback hands the call to the innermost dispatch mode, "
                    f"{type(modes[-1]).__name__}.__dispatch__; when it calls func(*args), that call dispatches "
                    f"again below Python -> {target.name}"), None
            return ("redispatch", below), (
                f"no dispatch mode is active: the Python fallback redispatches below Python -> {target.name}"), None
        return ("redispatch", below), (
            f"dispatchcore does not model {name}: its fallback redispatches below it -> {target.name}"), None
    if functionality in _AUTOCAST_FUNCTIONALITIES:
        again = bits & ~(key_bits(key) & ~BACKEND_MASK)
        again &= op._dispatch[0][(again & BACKEND_MASK).bit_length()]
        target = DispatchKey(highest_priority_index(again))
        return ("call", again), (
            f"an autocast kernel usually casts its inputs and calls the operator again with {name} "
            f"excluded -> {target.name}"), None
    if functionality in _BACKEND_FUNCTIONALITIES:
        return None, f"the {name} kernel computes the result", None
    below = bits & full_after_bits(key)
    target = DispatchKey(highest_priority_index(below))
    return None, (f"a kernel at {name}: it returns, or (usually) redispatches with ks & FULL_AFTER({name}) -> "
                  f"{target.name}; what it does is up to the kernel"), None


def _dispatch_modes() -> tuple[Any, ...]:
    try:
        from .modes import dispatch_mode_stack
    except ImportError:
        return ()
    return tuple(dispatch_mode_stack())


def _any_requires_grad(args: tuple, kwargs: dict) -> bool:
    for value in (*args, *kwargs.values()):
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            if getattr(v, "_requires_grad", False):
                return True
    return False


# --- what-if ----------------------------------------------------------------------------------
def _what_if_kernel(*args: Any, **kwargs: Any) -> Any:
    """The placeholder kernel of a ``what_if`` addition given without one (never called)."""
    raise RuntimeError("what_if placeholder kernel: what_if never registers or calls kernels")


def _registration(op_name: str, key: Any, kernel: Callable[..., Any] | None,
                  with_keyset: bool = False) -> KernelRegistration:
    from ._library import _registrable_key

    parsed = _registrable_key(key or "", f"what_if({op_name})")
    fn = kernel if kernel is not None else _what_if_kernel
    label = "placeholder" if kernel is None else getattr(fn, "__qualname__", None) or repr(fn)
    return KernelRegistration(key=parsed, kernel=fn, with_keyset=with_keyset, library="what_if",
                              debug_override=f"what-if {label}")


def _as_registration(op_name: str, item: Any) -> KernelRegistration:
    if isinstance(item, KernelRegistration):
        return item
    if isinstance(item, (str, DispatchKey)):
        return _registration(op_name, item, None)
    if isinstance(item, tuple) and len(item) in (2, 3):
        return _registration(op_name, *item)
    raise TypeError(f"expected (key, kernel_or_None), a key or a KernelRegistration, got {item!r}")


def _snapshot(op: OperatorHandle) -> tuple[dict[DispatchKey, list[Any]], dict[DispatchKey, Any]]:
    dispatcher = get_dispatcher()
    with dispatcher._lock:
        return {k: list(v) for k, v in op._kernels.items()}, dict(dispatcher._fallbacks)


def compute_table(kernels: Mapping[DispatchKey, Sequence[Any]],
                  fallbacks: Mapping[DispatchKey, Any]) -> dict[DispatchKey, tuple[Any, str]]:
    """Every valid entry, in ``dump_table`` order, computed by ``compute_table_entry`` (pure)."""
    table = {}
    for key in DUMP_ORDER:
        entry = compute_table_entry(kernels, fallbacks, key)
        if entry[0] is not None:
            table[key] = entry
    return table


def format_entries(table: Mapping[DispatchKey, tuple[Any, str]]) -> str:
    """A computed table as ``dump_table`` prints it."""
    return "".join(_line(k, table[k]) + "\n" for k in DUMP_ORDER if k in table)


@attrs.frozen
class WhatIf:
    """The table an operator would have after some (de)registrations, diffed with the real one.

    ``before``/``after`` map runtime keys to ``(registration, label)``; ``added``, ``removed``
    and ``changed`` hold ``dump_table`` lines (``changed`` as ``(old, new)`` pairs).
    """

    op: OperatorHandle
    changes: tuple[str, ...]
    before: dict[DispatchKey, tuple[Any, str]]
    after: dict[DispatchKey, tuple[Any, str]]

    @property
    def added(self) -> list[str]:
        return [_line(k, e) for k, e in self.after.items() if k not in self.before]

    @property
    def removed(self) -> list[str]:
        return [_line(k, e) for k, e in self.before.items() if k not in self.after]

    @property
    def changed(self) -> list[tuple[str, str]]:
        return [(_line(k, self.before[k]), _line(k, e)) for k, e in self.after.items()
                if k in self.before and (self.before[k][0] is not e[0] or self.before[k][1] != e[1])]

    @property
    def changed_keys(self) -> list[DispatchKey]:
        """Every key whose entry differs (added, removed or changed), in dump order."""
        return [k for k in DUMP_ORDER
                if (k in self.before) != (k in self.after)
                or (k in self.before and (self.before[k][0] is not self.after[k][0]
                                          or self.before[k][1] != self.after[k][1]))]

    @property
    def before_table(self) -> str:
        return format_entries(self.before)

    @property
    def after_table(self) -> str:
        return format_entries(self.after)

    def __bool__(self) -> bool:
        return bool(self.changed_keys)

    def __str__(self) -> str:
        out = [f"what if {self.op.qualname}: {'; '.join(self.changes) or 'no change'}"]
        if not self:
            out.append("  the computed table would not change")
        for title, lines in (("added", [f"+ {x}" for x in self.added]),
                             ("removed", [f"- {x}" for x in self.removed])):
            if lines:
                out.append(f"  {title} ({len(lines)}):")
                out.extend(f"    {x}" for x in lines)
        if self.changed:
            out.append(f"  changed ({len(self.changed)}):")
            for old, new in self.changed:
                out.append(f"    - {old}")
                out.append(f"    + {new}")
        out.append("  (computed on a copy: nothing was registered)")
        return "\n".join(out)


def what_if(op: Any, add: Iterable[Any] = (), remove: Iterable[Any] = ()) -> WhatIf:
    """The table ``op`` would have after removing and adding registrations, without doing either.

    Args:
        op: an ``OperatorHandle``, a packet with one overload, or a qualified name.
        add: ``(key, kernel)`` pairs (``kernel`` None for a placeholder; ``fallthrough_kernel`` for
            a fallthrough; a third item ``True`` for ``with_keyset``), applied in order after the
            removals; each goes to the front of its key's list, as a registration does. Keys may
            be aliases (``"Autograd"``, ``"CompositeImplicitAutograd"``).
        remove: keys whose active (newest) registration is removed, as destroying the Library
            that made it would; an older one at that key becomes active again.

    Returns:
        A ``WhatIf``: ``print()`` it for the diff in ``dump_table``'s format.

    Raises:
        LookupError: unknown operator. ValueError: nothing registered at a key to remove.
        RegistrationError: a key that cannot be registered to.

    Example:
        >>> from dispatchcore.explain import what_if
        >>> diff = what_if("aten::matmul", add=[("CPU", None)])
        >>> diff.changed_keys[:2]
        [<DispatchKey.CPU: 49>, <DispatchKey.AutogradCPU: 134>]
    """
    handle = resolve_op(op)
    kernels, fallbacks = _snapshot(handle)
    before = compute_table(kernels, fallbacks)
    changes = []
    for item in remove:
        key = item.key if isinstance(item, KernelRegistration) else DispatchKey.parse(item)
        stack = kernels.get(key)
        if not stack:
            registered = ", ".join(k.name for k in sorted(kernels, key=int)) or "none"
            raise ValueError(f"{handle.qualname} has no kernel registered at {key.name} to remove "
                             f"(registered: {registered}).")
        if isinstance(item, KernelRegistration):
            stack.remove(item)
        else:
            stack.pop(0)
        if not stack:
            del kernels[key]
        changes.append(f"remove {key.name}")
    for item in add:
        reg = _as_registration(handle.qualname, item)
        kernels[reg.key] = [reg, *kernels.get(reg.key, ())]
        kind = "fallthrough" if reg.fallthrough else reg.debug
        changes.append(f"add {reg.key.name} ({kind})")
    return WhatIf(handle, tuple(changes), before, compute_table(kernels, fallbacks))


# --- commutativity ----------------------------------------------------------------------------
class _ShadowDispatcher:
    """What an ``OperatorHandle`` reads from its dispatcher: the fallbacks (a private copy) and their entries."""

    def __init__(self, fallbacks: Mapping[DispatchKey, Any]) -> None:
        self._fallbacks = dict(fallbacks)
        self._fallback_entries = {k: (reg, "backend fallback") for k, reg in self._fallbacks.items()}


def _register_in_order(qualname: str, base: Mapping[DispatchKey, Sequence[Any]],
                       regs: Sequence[KernelRegistration], fallbacks: Mapping[DispatchKey, Any]) -> OperatorHandle:
    """A detached handle with ``regs`` registered one by one, as the registry would do it.

    Each step recomputes only the affected entries, exactly as ``Dispatcher.register_kernel`` does.
    """
    shadow = OperatorHandle(_ShadowDispatcher(fallbacks), qualname)
    shadow._kernels = {k: list(v) for k, v in base.items()}
    shadow._rebuild()
    for reg in regs:
        shadow._kernels[reg.key] = [reg, *shadow._kernels.get(reg.key, ())]
        shadow._rebuild(affected_keys(reg.key))
    return shadow


def _fingerprint(shadow: OperatorHandle) -> tuple[Any, ...]:
    entries = tuple(sorted((int(k), id(reg), label) for k, (reg, label) in shadow._entries.items()))
    return entries, tuple(shadow._dispatch[0])


@attrs.frozen
class CommuteReport:
    """Whether registering the same kernels in every order gives one table (``bool()`` says)."""

    op: str
    registrations: tuple[str, ...]
    orders_checked: int
    total_orders: int
    commutes: bool
    table: str
    differences: tuple[str, ...] = ()
    overridden_keys: tuple[DispatchKey, ...] = ()

    def __bool__(self) -> bool:
        return self.commutes

    def __str__(self) -> str:
        sampled = "" if self.orders_checked == self.total_orders else f" (a sample of {self.total_orders})"
        out = [f"commutativity of {len(self.registrations)} registration(s) on {self.op}: "
               f"{self.orders_checked} order(s) checked{sampled}"]
        out.extend(f"  #{i} {r}" for i, r in enumerate(self.registrations, 1))
        if self.commutes:
            out.append("  every order gives the same table (entries, labels and fallthrough masks)")
        else:
            out.append("  NOT commutative: the order of registration changes the table")
            out.extend(f"  {d}" for d in self.differences)
        if self.overridden_keys:
            out.append(f"  note: {', '.join(k.name for k in self.overridden_keys)} get(s) more than one kernel; "
                       "the newest registration wins (PyTorch's override rule), so order matters there by design")
        return "\n".join(out)


def check_commutes(op_or_registrations: Any, registrations: Iterable[Any] | None = None, *,
                   max_orders: int = 720, seed: int = 0) -> CommuteReport:
    """Register the same kernels in every order and check that all orders give one table.

    Args:
        op_or_registrations: a list of ``(key, kernel)`` pairs (checked on an empty operator), or
            an operator (handle, packet, name): then its own registrations are checked, or, with
            ``registrations``, those are checked on top of the operator's current ones.
        registrations: see above.
        max_orders: beyond this many permutations a seeded random sample (plus the given order
            and its reverse) is checked.
        seed: the sample's seed.

    Each order registers into a detached copy, recomputing only the entries each registration
    affects (as the real registry does); the tables are compared by kernel identity, label and
    fallthrough masks, and against a full recompute. Nothing is registered.

    Example:
        >>> from dispatchcore.explain import check_commutes
        >>> report = check_commutes([("CPU", None), ("Autograd", None), ("CompositeImplicitAutograd", None)])
        >>> bool(report), report.orders_checked
        (True, 6)
    """
    from .ops import OpOverloadPacket

    base: dict[DispatchKey, list[Any]] = {}
    fallbacks = dict(get_dispatcher()._fallbacks)
    if isinstance(op_or_registrations, (OperatorHandle, OpOverloadPacket, str)):
        handle = resolve_op(op_or_registrations)
        kernels, fallbacks = _snapshot(handle)
        qualname = handle.qualname
        if registrations is None:  # the operator's own registrations, oldest first per key
            regs = [r for k in sorted(kernels, key=int) for r in reversed(kernels[k])]
        else:
            base = kernels
            regs = [_as_registration(qualname, r) for r in registrations]
    else:
        qualname = "what_if::op"
        regs = [_as_registration(qualname, r) for r in op_or_registrations]
    n = len(regs)
    total = math.factorial(n)
    if total <= max_orders:
        orders = list(itertools.permutations(range(n)))
    else:
        rng = random.Random(seed)
        chosen = {tuple(range(n)), tuple(reversed(range(n)))}
        while len(chosen) < max_orders:
            shuffled = list(range(n))
            rng.shuffle(shuffled)
            chosen.add(tuple(shuffled))
        orders = sorted(chosen)
    results: dict[tuple[Any, ...], tuple[tuple[int, ...], OperatorHandle]] = {}
    for order in orders:
        shadow = _register_in_order(qualname, base, [regs[i] for i in order], fallbacks)
        results.setdefault(_fingerprint(shadow), (tuple(order), shadow))
    differences = []
    first_order, first = next(iter(results.values()))
    full = compute_table(first._kernels, fallbacks)
    incremental = {k: e for k, e in first._entries.items()}
    if any(full.get(k, (None, ""))[0] is not e[0] or full[k][1] != e[1] for k, e in incremental.items()) or \
            set(full) != set(incremental):
        differences.append("registering one by one leaves a table that differs from a full recompute")
    describe = [f"{r.key.name}: {'fallthrough ' if r.fallthrough else ''}{r.debug}" for r in regs]

    def order_text(order: tuple[int, ...]) -> str:
        return "[" + ", ".join(f"#{i + 1} {regs[i].key.name}" for i in order) + "]"

    for order, shadow in list(results.values())[1:]:
        a, b = first._entries, shadow._entries
        differences.append(f"order {order_text(first_order)}  vs  order {order_text(order)}:")
        for k in DUMP_ORDER:
            ea, eb = a.get(k), b.get(k)
            if ea is None and eb is None:
                continue
            if ea is None or eb is None or ea[0] is not eb[0] or ea[1] != eb[1]:
                differences.append(f"  - {_line(k, ea) if ea else f'{k.name}: (missing)'}")
                differences.append(f"  + {_line(k, eb) if eb else f'{k.name}: (missing)'}")
        if first._dispatch[0] != shadow._dispatch[0]:
            differences.append("  the fallthrough masks differ")
    counts: dict[DispatchKey, int] = {}
    for r in regs:
        counts[r.key] = counts.get(r.key, 0) + 1
    for k in base:
        if k in counts:
            counts[k] += 1
    overridden = tuple(k for k in sorted(counts, key=int) if counts[k] > 1)
    return CommuteReport(
        op=qualname, registrations=tuple(describe), orders_checked=len(orders), total_orders=total,
        commutes=not differences, table=format_entries(full), differences=tuple(differences),
        overridden_keys=overridden,
    )

