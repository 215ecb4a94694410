"""Structured operators: the ``out=`` overload is the kernel, the other forms are built from it.

Mirrors torchgen's structured kernels (``structured: True`` / ``structured_delegate:`` in
``native_functions.yaml``) as the dispatcher sees them. A backend implements ``name.out``; torch
registers ``CompositeExplicitAutogradNonFunctional`` kernels for the functional and in-place
forms that compute the result's geometry with the meta function, allocate it on the right device,
and call the ``out=`` overload (``RegisterCompositeExplicitAutogradNonFunctional.cpp``). CPU and
Meta also register the functional and in-place forms directly (faster), so the composite serves
every other backend: a new device gets ``add.Tensor`` and ``add_.Tensor`` from its ``add.out``.

Here: ``OUTS``, the ``out=`` overloads dispatchcore adds for its structured core ops, each with the
functional overload it computes and torch's rule for the ``out`` tensor's dtype (``OUT_RULES``);
the CPU and Meta backends build their ``out=`` kernels from it (``cpu/structured.py``,
``meta/structured.py``). ``register`` adds the CompositeExplicitAutogradNonFunctional kernel to
every operator for which torch has one (``torch_keys.TORCH_KEYS``), in any family. Invariant: an
operator gets that kernel if and only if torch registers one for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES, TYPEMETA_NAMES
from ..ops import aten
from ..tensor import Tensor
from .torch_keys import TORCH_KEYS

__all__ = ["FUNCTIONS", "METHODS", "OUTS", "OUT_RULES", "SCHEMAS", "can_cast", "check_out_dtype", "out_arguments",
           "out_call", "out_overload", "register", "register_autograd"]

# How the out tensor's dtype is checked against the functional result's (each rule names torch's
# check): "cast" (canCast, TensorIterator), "any" (comparisons write any dtype), "exact"
# (``Expected out tensor to have dtype ...``), "found" (clamp's ``Found dtype ...``), "input"
# (amax), "cat" (cat's TypeError), "sum"/"mean" (the out tensor's dtype is the computation dtype).
OUT_RULES = ("cast", "any", "exact", "found", "input", "cat", "sum", "mean")

OUTS: dict[str, tuple[str, str, str]] = {  # out overload -> (schema tail after the name, functional, rule)
    "_log_softmax.out": ("(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
                         "_log_softmax", "exact"),
    "_softmax.out": ("(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
                     "_softmax", "exact"),
    "amax.out": ("(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
                 "amax", "input"),
    "argmax.out": ("(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
                   "argmax", "exact"),
    "bmm.out": ("(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", "bmm", "exact"),
    "cat.out": ("(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)", "cat", "cat"),
    "clamp.out": ("(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)",
                  "clamp", "found"),
    "clamp.Tensor_out": ("(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> Tensor(a!)",
                         "clamp.Tensor", "cast"),
    "clamp_min.out": ("(Tensor self, Scalar min, *, Tensor(a!) out) -> Tensor(a!)", "clamp_min", "found"),
    "clamp_min.Tensor_out": ("(Tensor self, Tensor min, *, Tensor(a!) out) -> Tensor(a!)", "clamp_min.Tensor",
                             "cast"),
    "clamp_max.out": ("(Tensor self, Scalar max, *, Tensor(a!) out) -> Tensor(a!)", "clamp_max", "found"),
    "clamp_max.Tensor_out": ("(Tensor self, Tensor max, *, Tensor(a!) out) -> Tensor(a!)", "clamp_max.Tensor",
                             "cast"),
    "div.out_mode": ("(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)",
                     "div.Tensor_mode", "cast"),
    **{f"{c}.{kind}_out": (f"(Tensor self, {kind} other, *, Tensor(a!) out) -> Tensor(a!)", f"{c}.{kind}", "any")
       for c in ("eq", "ne", "lt", "le", "gt", "ge") for kind in ("Scalar", "Tensor")},
    "max.dim_max": ("(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) "
                    "-> (Tensor(a!) values, Tensor(b!) indices)", "max.dim", "exact"),
    "maximum.out": ("(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "maximum", "cast"),
    "minimum.out": ("(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "minimum", "cast"),
    "mean.out": ("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) "
                 "-> Tensor(a!)", "mean.dim", "mean"),
    "mm.out": ("(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", "mm", "exact"),
    "mse_loss.out": ("(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
                     "mse_loss", "cast"),
    "nll_loss_forward.output": ("(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, "
                                "*, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))",
                                "nll_loss_forward", "exact"),
    "pow.Scalar_out": ("(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)", "pow.Scalar", "cast"),
    "pow.Tensor_Scalar_out": ("(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)",
                              "pow.Tensor_Scalar", "cast"),
    "pow.Tensor_Tensor_out": ("(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
                              "pow.Tensor_Tensor", "cast"),
    "reciprocal.out": ("(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "reciprocal", "cast"),
    "sum.IntList_out": ("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) "
                        "-> Tensor(a!)", "sum.dim_IntList", "sum"),
}
SCHEMAS = tuple(f"{name}{tail}" for name, (tail, _, _) in OUTS.items())
FUNCTIONS: dict[str, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}


def can_cast(src: Any, dst: Any) -> bool:
    """``c10::canCast``: no complex to real, no floating to integral, nothing but bool to bool."""
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex) and dst.name != "bool":
        return False
    return src.name == "bool" or dst.name != "bool"


def check_out_dtype(rule: str, result: Any, out: Any) -> None:
    """Raise torch's error when an ``out=`` tensor of dtype ``out`` cannot take a ``result``.

    ``rule`` is one of ``OUT_RULES``; ``result`` and ``out`` are dtypes.
    """
    if rule in ("any", "sum") or result is out:
        return
    if rule in ("cast", "mean") and not can_cast(result, out):
        raise RuntimeError(f"result type {SCALAR_TYPE_NAMES[result.name]} can't be cast to the desired "
                           f"output type {SCALAR_TYPE_NAMES[out.name]}")
    if rule == "cat" and not can_cast(result, out):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{SCALAR_TYPE_NAMES[out.name]}")
    if rule == "exact":
        raise RuntimeError(f"Expected out tensor to have dtype {TYPEMETA_NAMES[result.name]}, but got "
                           f"{TYPEMETA_NAMES[out.name]} instead")
    if rule == "found":
        raise RuntimeError(f"Found dtype {SCALAR_TYPE_NAMES[out.name]} but expected {SCALAR_TYPE_NAMES[result.name]}")
    if rule == "input":
        raise RuntimeError(f"Expected the dtype for input and out to match, but got {SCALAR_TYPE_NAMES[result.name]} "
                           f"for input's dtype and {SCALAR_TYPE_NAMES[out.name]} for out's dtype.")


def out_call(rule: str, functional: Callable[..., Any], args: tuple, kwargs: dict,
             outs: tuple[Tensor, ...]) -> tuple[Any, ...]:
    """Run a backend's functional kernel for an ``out=`` call; its results, checked against ``outs``.

    For "sum" and "mean" the out tensor's dtype becomes the computation dtype (``dtype=``), as
    torch's reductions take it from the result.
    """
    if rule in ("sum", "mean") and kwargs.get("dtype") is None:
        if rule == "mean":  # mean's own checks (integral input) and its cast rule come first
            check_out_dtype(rule, functional(*args, **kwargs).dtype, outs[0].dtype)
        kwargs = {**kwargs, "dtype": outs[0].dtype}
    results = functional(*args, **kwargs)
    results = results if isinstance(results, tuple) else (results,)
    for r, o in zip(results, outs):
        check_out_dtype("exact" if rule == "sum" else rule, r.dtype, o.dtype)
    return results


def _handle(name: str) -> Any:
    base, _, overload = name.partition(".")
    return getattr(getattr(aten, base), overload or "default")


def out_arguments(schema: Any) -> tuple[str, ...]:
    """The names of a schema's ``out=`` arguments: its keyword-only written tensors, in order."""
    return tuple(a.name for a in schema.arguments if a.kwarg_only and a.is_write)


def out_overload(name: str) -> str | None:
    """The ``out=`` overload a functional or in-place overload computes with, or None.

    The overload of the same base name whose non-out arguments have the same types (torch's
    ``structured_delegate``).

    Example:
        >>> out_overload("add_.Tensor"), out_overload("eq.Scalar")
        ('add.out', 'eq.Scalar_out')
    """
    schema = _handle(name).schema
    assert schema is not None
    types = [str(a.type) for a in schema.arguments]
    base = name.partition(".")[0].rstrip("_")
    for overload in getattr(aten, base).overloads():
        candidate = getattr(getattr(aten, base), overload).schema
        outs = out_arguments(candidate) if candidate is not None else ()
        if candidate is not None and outs and [str(a.type) for a in candidate.arguments if a.name not in outs] == types:
            return f"{base}.{overload}"
    return None


# --- the CompositeExplicitAutogradNonFunctional kernels ---------------------------------------------
def _on_meta(value: Any) -> Any:
    """A tensor argument as a meta tensor (CPU scalars stay: they mix with any device, as in torch)."""
    if isinstance(value, Tensor):
        if value.dim() == 0 and value.device.type == "cpu":
            return value
        # the geometry only: no copy through the device (its _to_copy may not know meta)
        return aten.empty_strided.default(list(value.shape), list(value.stride()), dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return [_on_meta(v) for v in value]
    return value


def _device_of(args: tuple, kwargs: dict) -> Any:
    """The device of the first tensor argument that is not a CPU scalar (else of the first tensor)."""
    first = None
    for value in (*args, *kwargs.values()):
        for t in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(t, Tensor):
                if t.dim() != 0 or t.device.type != "cpu":
                    return t.device
                first = first or t.device
    return first


def _functional_kernel(functional: Any, out_op: Any, outs: tuple[str, ...]) -> Callable[..., Any]:
    def composite_functional(*args: Any, **kwargs: Any) -> Any:
        device = _device_of(args, kwargs)
        if device is None:  # no tensor at all (``cat([])``, reached through Undefined): the functional
            # would dispatch back here; the out= kernel runs the meta function's checks (and raises)
            return out_op(*args, **kwargs, **{name: aten.empty.memory_format([0]) for name in outs})
        # the meta function gives the result's geometry; allocate it on the device, then run out=
        meta = functional(*[_on_meta(a) for a in args], **{k: _on_meta(v) for k, v in kwargs.items()})
        results = meta if isinstance(meta, tuple) else (meta,)
        buffers = {name: aten.empty_strided.default(list(r.shape), list(r.stride()), dtype=r.dtype, device=device)
                   for name, r in zip(outs, results)}
        return out_op(*args, **kwargs, **buffers)

    return composite_functional


def _inplace_kernel(out_op: Any, out: str) -> Callable[..., Any]:
    def composite_inplace(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return out_op(self, *args, **kwargs, **{out: self})

    return composite_inplace


def register(lib: Library) -> None:
    """Register a CompositeExplicitAutogradNonFunctional kernel wherever torch has one.

    Runs after the other families: an operator whose family registered its own kernel there (torch's
    non-structured ones: ``copy``, the ``*_scatter`` ops, an ``out=`` overload) keeps it.
    """
    for name, keys in TORCH_KEYS.items():
        if "N" not in keys or _handle(name).has_kernel_for_dispatch_key("CompositeExplicitAutogradNonFunctional"):
            continue
        target = out_overload(name)
        if target is None:
            raise RuntimeError(f"aten::{name} is structured in torch but dispatchcore defines no out= overload")
        out_op = _handle(target)
        outs = out_arguments(out_op.schema)
        op = _handle(name)
        if op.schema.is_mutable:
            kernel = _inplace_kernel(out_op, outs[0])
        else:
            kernel = _functional_kernel(op, out_op, outs)
        lib.impl(name, kernel, "CompositeExplicitAutogradNonFunctional")


def register_autograd(lib: Library) -> None:
    """``out=`` overloads not named ``out`` refuse autograd too (``derivatives.register`` does ``.out``)."""
    from ..autograd.kernels import register_out_kernel
    from ..dispatcher import get_dispatcher

    for op in get_dispatcher().operators():
        schema = op.schema
        if (op.qualname.startswith("aten::") and op.overload_name != "out" and schema is not None
                and out_arguments(schema) and "A" in TORCH_KEYS.get(op.qualname[6:], "")
                and not op.has_kernel_for_dispatch_key("Autograd")):
            register_out_kernel(lib, op.qualname)
