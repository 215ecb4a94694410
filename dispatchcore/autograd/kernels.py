"""Autograd-key kernels: built-in derivatives, the in-place and view rules, and the autograd fallback.

Mirrors the generated ``VariableType`` kernels (``torch/csrc/autograd/generated/VariableType*.cpp``)
and ``autograd_not_implemented_fallback.cpp``. A built-in kernel takes the raw key set, runs the
op below autograd (``AutoDispatchBelowADInplaceOrView`` + redispatch with
``ks & after_autograd_keyset``, spec §6.3), and, when grad mode is on and an input requires grad,
records a ``<Op>Backward<N>`` node whose ``apply`` calls the derivative formula. Formulas use
dispatched operators only, so ``create_graph=True`` differentiates them again.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .. import dispatcher as _dispatcher
from ..keyset import AFTER_AUTOGRAD, AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW, BACKEND_MASK, FULL
from ..tls import _TLS
from .grad_mode import _AUTOGRAD_STATE
from .graph import Node, SavedTensor, gradient_edge

__all__ = ["Derivative", "make_autograd_kernel", "register_derivative"]

_tls_get = _TLS.get
_tls_set = _TLS.set
_tls_reset = _TLS.reset
_state_get = _AUTOGRAD_STATE.get
_BELOW_CLEAR = FULL & ~(AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW & ~BACKEND_MASK)
_below_cache: dict[tuple[int, int, int], tuple[int, int, int]] = {}


def below_state(state: tuple[int, int, int]) -> tuple[int, int, int]:
    """The TLS tuple ``AutoDispatchBelowADInplaceOrView`` would set, memoised per state."""
    below = _below_cache.get(state)
    if below is None:
        below = (state[0], state[1] | AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW, state[2] & _BELOW_CLEAR)
        if len(_below_cache) < 256:
            _below_cache[state] = below
    return below


class BuiltinNode(Node):
    """A node of a built-in derivative: saved values by name, and the formula to apply."""

    __slots__ = ("_values", "_formula", "_num_outputs")

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        values = {name: (v.unpack(self) if type(v) is SavedTensor else v) for name, v in self._values.items()}
        if self._num_outputs == 1:
            if grads[0] is None:
                return (None,) * len(self.next_functions)
            result = self._formula(grads[0], **values)
        else:
            if all(g is None for g in grads):
                return (None,) * len(self.next_functions)
            result = self._formula(grads, **values)
        return result if type(result) is tuple else (result,)

    def _release_variables(self) -> None:
        self._released = True
        for v in self._values.values():
            if type(v) is SavedTensor:
                v.free()


class Derivative:
    """One op's derivative: which inputs are differentiable, what to save, the formula.

    ``formula(grad, **saved)`` returns one gradient per differentiable input (``None`` allowed).
    Its parameter names say what to save: a schema argument name saves that argument (tensors
    version-checked), ``result`` saves the output, ``<arg>_shape`` saves only a tensor's shape,
    ``<arg>_dtype`` its dtype.
    """

    def __init__(self, op: Any, node_name: str, inputs: tuple[str, ...], formula: Callable[..., Any],
                 *, mutates: str | None = None) -> None:
        self.op = op
        self.node_class = type(node_name, (BuiltinNode,), {"__slots__": ()})
        self.formula = formula
        schema = op.schema
        names = [a.name for a in schema.arguments]
        self.positions = {a.name: i for i, a in enumerate(schema.arguments) if not a.kwarg_only}
        self.defaults = {a.name: a.default for a in schema.arguments if a.has_default}
        self.input_names = inputs
        self.input_positions = tuple(self.positions.get(n, -1) for n in inputs)
        params = [p for p in inspect.signature(formula).parameters][1:]
        self.saves = tuple(params)
        for p in params:
            base = p[:-6] if p.endswith(("_shape", "_dtype")) else p
            if p != "result" and base not in names:
                raise ValueError(f"{node_name}: formula parameter {p!r} names no argument of {schema}")
        self.mutates = mutates
        self.num_outputs = len(schema.returns)


def _arg(d: Derivative, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    i = d.positions.get(name, -1)
    if 0 <= i < len(args):
        return args[i]
    if name in kwargs:
        return kwargs[name]
    return d.defaults.get(name)


def _record(d: Derivative, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> Node:
    node = d.node_class()
    edges = []
    for name, pos in zip(d.input_names, d.input_positions):
        t = args[pos] if 0 <= pos < len(args) else kwargs.get(name)
        edges.append(gradient_edge(t) if t is not None and hasattr(t, "_key_bits") else (None, 0))
    node.next_functions = tuple(edges)
    values: dict[str, Any] = {}
    outputs = result if type(result) is tuple else (result,)
    for name in d.saves:
        if name == "result":
            values[name] = SavedTensor(outputs[0], is_output=True, node=node)
        elif name.endswith("_shape"):
            values[name] = tuple(_arg(d, name[:-6], args, kwargs).shape)
        elif name.endswith("_dtype"):
            values[name] = _arg(d, name[:-6], args, kwargs).dtype
        else:
            v = _arg(d, name, args, kwargs)
            values[name] = SavedTensor(v) if hasattr(v, "_key_bits") else v
    node._values = values
    node._formula = d.formula
    node._num_outputs = d.num_outputs
    return node


def make_autograd_kernel(d: Derivative) -> Callable[..., Any]:
    """The raw-keyset Autograd kernel for one op with a built-in derivative."""
    op = d.op
    positions = tuple(p for p in d.input_positions if p >= 0)
    by_name = tuple(n for n, p in zip(d.input_names, d.input_positions) if p < 0)
    mutates = d.mutates

    def autograd_kernel(bits: int, *args: Any, **kwargs: Any) -> Any:
        needs = False
        if _state_get()[0]:  # grad mode: does any differentiable input require grad?
            for i in positions:
                if i < len(args) and getattr(args[i], "_requires_grad", False):
                    needs = True
                    break
            else:
                for n in by_name:
                    if getattr(kwargs.get(n), "_requires_grad", False):
                        needs = True
                        break
        if needs and mutates is not None:
            _check_inplace(_arg(d, mutates, args, kwargs))
        # AutoDispatchBelowADInplaceOrView, set directly: the kernel below must not record again
        token = _tls_set(below_state(_tls_get()))
        try:
            result = op.redispatch(bits & AFTER_AUTOGRAD, *args, **kwargs)
        finally:
            _tls_reset(token)
        if needs:
            node = _record(d, args, kwargs, result)
            outputs = result if type(result) is tuple else (result,)
            for i, out in enumerate(outputs):
                if hasattr(out, "_key_bits") and (out.dtype.is_floating_point or out.dtype.is_complex):
                    if mutates is not None and out._base is not None and out._base._requires_grad is False:
                        pass
                    out._grad_fn = node
                    out._requires_grad = True
                    out._output_nr = i
        return result

    autograd_kernel.__qualname__ = f"autograd_kernel[{op.qualname}]"
    return autograd_kernel


def _check_inplace(t: Any) -> None:
    """VariableType's check_inplace: no in-place on a leaf that requires grad."""
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


_derivatives: dict[str, Derivative] = {}


def register_derivative(lib: Any, qualname: str, node_name: str, inputs: tuple[str, ...],
                        formula: Callable[..., Any], *, mutates: str | None = None) -> Derivative:
    """Define ``qualname``'s derivative and register its kernel at the Autograd alias key."""
    op = _dispatcher.find_op(qualname)
    d = Derivative(op, node_name, inputs, formula, mutates=mutates)
    _derivatives[qualname] = d
    lib.impl(qualname.partition("::")[2], make_autograd_kernel(d), "Autograd", with_keyset=True,
             _raw_keyset=True)
    return d


# --- the autograd fallback's "warn" mode (spec §5.3) ---------------------------------------------
class WarnNotImplemented(Node):
    """The node the autograd fallback attaches: warns at backward and returns no gradients."""

    __slots__ = ("_op_name",)

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        warnings.warn(_warn_text(self._op_name), UserWarning, stacklevel=2)
        return (None,) * len(self.next_functions)


def _warn_text(name: str) -> str:
    return (
        f"{name}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
        "backprop through it. This may lead to silently incorrect behavior. This behavior is "
        "deprecated and will be removed in a future version of PyTorch. If your operator is "
        "differentiable, please ensure you have registered an autograd kernel to the correct "
        "Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If your "
        "operator is not differentiable, or to squash this warning and use the previous behavior, "
        "please register torch::CppFunction::makeFallthrough() to DispatchKey::Autograd.")


def _tensors_in(values: Any) -> list[Any]:
    found = []
    for v in values:
        if hasattr(v, "_key_bits"):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(x for x in v if hasattr(x, "_key_bits"))
    return found


def _autograd_fallback_warn(ks: Any, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """basicAutogradNotImplementedFallback in mode "warn": redispatch, then attach the warning node."""
    inputs = _tensors_in(args) + _tensors_in(kwargs.values())
    any_rg = _state_get()[0] and any(t._requires_grad for t in inputs)
    result = op.redispatch(int(ks) & AFTER_AUTOGRAD, *args, **kwargs)  # no TLS guard, as in c10
    if not any_rg:
        return result
    node = WarnNotImplemented(tuple(gradient_edge(t) for t in inputs))
    node._op_name = op.qualname
    outputs = result if isinstance(result, (tuple, list)) else (result,)
    written = {a.name for a in op.schema.returns if a.alias_info is not None and a.alias_info.is_write} \
        if op.schema is not None else set()
    for i, out in enumerate(outputs):
        if not hasattr(out, "_key_bits") or not (out.dtype.is_floating_point or out.dtype.is_complex):
            continue
        if out._requires_grad:
            out.register_hook(lambda g, name=op.qualname: warnings.warn(_warn_text(name), UserWarning) or g)
        elif not written:
            out._grad_fn = node
            out._requires_grad = True
            out._output_nr = i
    return result


_dispatcher.autograd_fallback_hook[:] = [_autograd_fallback_warn]
