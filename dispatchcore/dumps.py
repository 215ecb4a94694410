"""What the registry prints about an operator: torch's dump formats and the dispatch errors.

``format_table`` and ``format_state`` write ``torch._C._dispatch_dump_table`` and
``torch._C._dispatch_dump``'s formats line for line (only the ``registered at`` locations
differ); the two errors an ``OperatorHandle`` raises while dispatching, no kernel found and the
AutogradOther ambiguity, quote those dumps. Mirrors the dump and error code of
``aten/src/ATen/core/dispatch/OperatorEntry.cpp``. Invariant: this module reads operators and
the thread-local sets and imports nothing above them, so ``operator.py`` and ``dispatcher.py``
can both use it without importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import DispatchError
from .keys import DispatchKey, is_alias_key
from .keyset import BACKEND_MASK, FULL, DispatchKeySet, highest_priority_index
from .tls import tls_get

if TYPE_CHECKING:
    from .operator import OperatorHandle

__all__ = ["DUMP_ORDER", "ambiguous_autogradother_error", "exists", "format_state", "format_table",
           "missing_kernel_error"]

_D = DispatchKey

# dump_table's order: Undefined, then every runtime key in FULL-set iteration order.
DUMP_ORDER: tuple[DispatchKey, ...] = (_D.Undefined, *DispatchKeySet.full())


def exists(op: OperatorHandle | None) -> bool:
    """Whether c10 would have an OperatorEntry: a schema or a kernel (See Note [Impl before def])."""
    return op is not None and (op.schema is not None or bool(op._kernels))


# --- dumps --------------------------------------------------------------------------------------
def format_table(op: OperatorHandle) -> str:
    if not exists(op):
        return ""
    lines = []
    for key in DUMP_ORDER:
        reg, label = op.table_entry(key)
        if reg is None:
            continue
        fallthrough = "fallthrough " if getattr(reg, "fallthrough", False) else ""
        lines.append(f"{key.name}: {fallthrough}{reg.debug} [{label}]")
    return "\n".join(lines) + "\n"


def format_state(op: OperatorHandle) -> str:
    if not exists(op):
        return ""
    lines = [f"name: {op.qualname}"]
    if op.schema is not None:
        lines.append(f"schema: {op.schema}")
        lines.append(f"debug: registered at {op.def_location}")
        lines.append(f"alias analysis kind: {op.alias_analysis or 'FROM_SCHEMA'}")
    else:
        lines.append("schema: (none)")
    kernels = op._kernels
    for key in sorted(kernels, key=int):
        alias = "[alias]" if is_alias_key(key) else ""
        for i, reg in enumerate(kernels.get(key, ())):
            inactive = " (inactive)" if i else ""
            kind = "fallthrough boxed" if reg.fallthrough else "boxed"
            lines.append(f"{key.name}{alias}{inactive}: {reg.debug} :: (none) [ {kind} ]")
    return "\n".join(lines) + "\n"


# --- errors -----------------------------------------------------------------------------------
def _available(op: OperatorHandle) -> str:
    names = [k.name for k in DUMP_ORDER[1:] if op.table_entry(k)[0] is not None]
    return "[" + ", ".join(names) + "]"


def missing_kernel_error(op: OperatorHandle, bits: int, args: tuple, kwargs: dict) -> DispatchError:
    """PyTorch's "Could not run ..." text, then dispatchcore's explanation of the decision."""
    key = DispatchKey(highest_priority_index(bits))
    if key == _D.Undefined:
        head = (
            "There were no tensor arguments to this function (e.g., you passed an empty list of "
            f"Tensors), but no fallback function is registered for schema {op.qualname}.  This "
            "usually means that this function requires a non-empty list of Tensors, or that you "
            "(the operator writer) forgot to register a fallback function.  Available functions "
            f"are {_available(op)}."
        )
    else:
        head = (
            f"Could not run '{op.qualname}' with arguments from the '{key.name}' backend. This could "
            "be because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build). If you are a Facebook employee "
            "using PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible "
            f"resolutions. '{op.qualname}' is only available for these backends: {_available(op)}."
        )
    return DispatchError(f"{head}\n\n{format_table(op)}\n{explain_missing(op, key, bits, args, kwargs)}")


def explain_missing(op: OperatorHandle, key: DispatchKey, bits: int, args: tuple, kwargs: dict) -> str:
    """Dispatchcore's addition to the error: where each key came from and what would fix it."""
    included, excluded, _ = tls_get()
    lines = ["dispatchcore: why no kernel was found"]
    contributed = 0
    if op.schema is not None:
        for index, name, _, kwarg_only in op.schema.dispatch_arguments:
            value = kwargs.get(name) if kwarg_only or index >= len(args) else args[index]
            values = value if isinstance(value, (list, tuple)) else [value]
            arg_bits = 0
            for v in values:
                bits_of_v = getattr(v, "_key_bits", None)
                if isinstance(bits_of_v, int):  # operator.is_dispatch_arg
                    arg_bits |= bits_of_v
            contributed |= arg_bits
            lines.append(f"  argument '{name}' contributed {DispatchKeySet._from_bits(arg_bits)}")
    # Compare runtime keys, not raw bits: a per-backend functionality such as AutogradCPU is
    # a functionality bit plus a backend bit, and prints nothing without the latter.
    with_tls = (contributed | included) & FULL
    after_tls = with_tls & (BACKEND_MASK | ~excluded)
    direct = after_tls & op._dispatch[0][(after_tls & BACKEND_MASK).bit_length()]
    lines.append(f"  thread-local include set added {_keys_missing(with_tls, contributed)}")
    lines.append(f"  thread-local exclude set masked {_keys_missing(with_tls, after_tls)}")
    lines.append(f"  fallthrough keys skipped {_keys_missing(after_tls, direct)}")
    if direct != bits:
        lines.append(
            f"  dispatched first on {DispatchKeySet._from_bits(direct)} -> "
            f"{DispatchKey(highest_priority_index(direct)).name}, whose kernel redispatched"
        )
    lines.append(f"  dispatched on {DispatchKeySet._from_bits(bits)} -> {key.name}")
    registered = ", ".join(k.name for k in sorted(op._kernels, key=int)) or "none"
    lines.append(f"  kernels registered for {op.qualname}: {registered}")
    ns, _, rest = op.qualname.partition("::")
    if key == _D.Undefined:
        lines.append(
            "  smallest fix: give the call a tensor argument, or register a kernel that serves "
            f"calls without tensors: Library({ns!r}, 'IMPL').impl({rest!r}, kernel, "
            "'CompositeExplicitAutograd') (or a 'BackendSelect' kernel that picks a backend)"
        )
    else:
        lines.append(
            f"  smallest fix: Library({ns!r}, 'IMPL').impl({rest!r}, kernel, {key.name!r})"
        )
    return "\n".join(lines)


def _keys_missing(bits: int, fewer: int) -> str:
    """The runtime keys of ``bits`` that ``fewer`` lacks, printed as a key set."""
    lacking = set(DispatchKeySet._from_bits(bits)) - set(DispatchKeySet._from_bits(fewer))
    names = [k.name for k in DispatchKeySet._from_bits(bits) if k in lacking]
    return "DispatchKeySet(" + ", ".join(names) + ")"


def ambiguous_autogradother_error(op: OperatorHandle) -> RuntimeError:
    return RuntimeError(
        '0 INTERNAL ASSERT FAILED at "aten/src/ATen/core/boxing/KernelFunction.cpp":23, please '
        f"report a bug to PyTorch. {op.qualname} has kernels registered to both "
        "CompositeImplicitAutograd and a backend mapped to AutogradOther. This makes the backend "
        "kernel unreachable; the dispatcher will always prefer the CompositeImplicitAutograd "
        "lowering (see Note [Ambiguity in AutogradOther kernel]). If you want to override "
        "CompositeImplicitAutograd, please open an issue to request a dedicated Autograd dispatch "
        "key for the backend.\nIf you only want to run inference instead of training, in C++, add "
        "`c10::InferenceMode mode;` before model.forward(); in Python, use `torch.inference_mode()` "
        "as a context manager (see https://pytorch.org/docs/stable/generated/"
        "torch.autograd.grad_mode.inference_mode.html).\nCanonical state\n~~~~~~~~~~~\n"
        + format_state(op) + "\n\n"  # torch ends the dump with two more newlines
    )
