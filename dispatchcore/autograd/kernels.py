"""Autograd-key kernels: built-in derivatives, the in-place and view rules, and the autograd fallback.

Mirrors the generated ``VariableType`` kernels (``torch/csrc/autograd/generated/VariableType*.cpp``),
``torch/csrc/autograd/{variable.cpp,VariableTypeUtils.h,functions/tensor.cpp}`` (views, in-place,
``CopySlices``) and ``autograd_not_implemented_fallback.cpp``. A built-in kernel takes the raw key
set, runs the op below autograd (``AutoDispatchBelowADInplaceOrView`` + redispatch with
``ks & after_autograd_keyset``, c10/core/DispatchKeySet.h), and, when grad mode is on and an input requires grad,
records a ``<Op>Backward<N>`` node whose ``apply`` calls the derivative formula. Formulas use
dispatched operators only, so ``create_graph=True`` differentiates them again.

Four kernel shapes, chosen per operator:

* functional ops record a node and attach it to their floating-point outputs;
* view ops also give the view a ``ViewMeta`` (how it was created, and the version of its base
  when its ``grad_fn`` was made), so that an in-place change of the base or of another view is
  noticed later and the view's ``grad_fn`` regenerated as ``AsStridedBackward0`` (torch's
  ``VariableHooks::grad_fn``);
* in-place ops (``mutates="self"``) check torch's in-place rules, then rebase the history of the
  mutated tensor: its ``grad_fn`` becomes the op's node, or, for a view, its base's becomes a
  ``CopySlices`` wrapping that node (``rebase_history``);
* ``out=`` ops refuse to run when an argument requires grad, and non-differentiable ops only
  redispatch.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

from .. import dispatcher as _dispatcher
from ..dtypes import WrappedNumber as _WrappedNumber
from ..dtypes import _by_np
from ..dtypes import int64 as _I64
from ..keyset import (
    AFTER_ADINPLACEORVIEW,
    AFTER_AUTOGRAD,
    AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW,
    BACKEND_MASK,
    FULL,
)
from ..layouts import contiguous_format
from ..operator import is_leaf_kernel
from ..ops import aten
from ..tensor import TENSOR_DTYPE, AutogradMeta
from ..tensor import Tensor as _Tensor
from ..tls import per_thread as _pt
from . import graph as _graph
from .graph import _LONE_ZERO, _ZERO_NRS, AccumulateGrad, Node, SavedTensor, gradient_edge  # noqa: F401  # _LONE_ZERO, _ZERO_NRS: the generated recorders'
from .graph import flat_edges as _flat_edges
from .graph import grad_accumulator as _grad_accumulator
from .graph import lone_edge as _lone_edge  # noqa: F401  # the generated recorders'
from .graph import next_nodes as _next_nodes
from .graph import save_input as _save_input

__all__ = [
    "CopySlices",
    "Derivative",
    "ViewMeta",
    "make_autograd_kernel",
    "rebase_history",
    "register_derivative",
    "register_nondifferentiable",
    "register_out_kernel",
    "set_creation_meta",
    "sum_to",
    "view_grad_fn",
]

_BELOW_CLEAR = FULL & ~(AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW & ~BACKEND_MASK)
_CONTIGUOUS_FORMAT = contiguous_format
_below_cache: dict[tuple[int, int, int], tuple[int, int, int]] = {}
_AFTER_AUTOGRAD = AFTER_AUTOGRAD
_node_init = Node.__init__
_next_seq = _graph._sequence.__next__  # Node.__init__'s sequence number
_new = object.__new__
_FLOAT_KINDS = "fc"  # numpy dtype kinds of differentiable (floating and complex) dtypes


# The (state, below) pair of the last below_state() call. Consecutive ops almost always start
# from the same state object, and one identity test costs half of hashing the tuple for
# _below_cache; kernels read it as ``entered_from, below = _last_below``. Rebound whole (thread-safe).
_last_below: tuple[Any, Any] = (None, None)


def below_state(state: tuple[int, int, int]) -> tuple[int, int, int]:
    """The TLS tuple ``AutoDispatchBelowADInplaceOrView`` would set, memoised per state.

    A state that is already below gets itself back (the same object), so ``below is state``
    tells a kernel that there is nothing to set.
    """
    global _last_below
    below = _below_cache.get(state)
    if below is None:
        below = (state[0], state[1] | AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW, state[2] & _BELOW_CLEAR)
        if below == state:
            below = state
        if len(_below_cache) < 256:
            _below_cache[state] = below
    _last_below = (state, below)
    return below


def enter_below() -> tuple[int, int, int]:
    """Enter AutoDispatchBelowADInplaceOrView without a guard object; returns the state to restore.

    Use as ``saved = enter_below()``, then ``try: ... finally: per_thread.state.keys = saved``.
    The hottest kernels (``autograd_kernel``, ``autograd_view_kernel``) inline these lines.
    """
    st = _pt.state
    state = st.keys
    entered_from, below = _last_below
    st.keys = below if entered_from is state else below_state(state)
    return state


def call_below(kernel: Callable[..., Any], *args: Any) -> Any:
    """``kernel(*args)`` under AutoDispatchBelowADInplaceOrView, set without a guard object.

    The bound Autograd kernels call a kernel that is not a leaf this way (Note [Leaf kernels]).
    """
    saved = enter_below()
    try:
        return kernel(*args)
    finally:
        _pt.state.keys = saved


# Note [Fused ADInplaceOrView]: _core_kernels.py registers its built-in ADInplaceOrView kernels
# here, by operator. When the kernel an Autograd view or in-place kernel would redispatch to is
# exactly the built-in one of its operator (no override, no tracing wrapper: tracing wraps every
# slot, so traces still show both hops), the Autograd kernel does that kernel's bookkeeping
# itself (as_view, or the inference check and increment_version) and redispatches straight past
# ADInplaceOrView: the same effects, the same TLS below, one Python frame fewer per call.
BUILTIN_AD_INPLACE_OR_VIEW: dict[Any, Callable[..., Any]] = {}
_builtin_adiov = BUILTIN_AD_INPLACE_OR_VIEW.get

INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
    "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
    "more details.")


def as_view(base: Any, out: Any) -> None:
    """ADInplaceOrView's ``as_view`` for a view of a tensor made inside inference mode (the rare case).

    A view of a normal tensor is a normal tensor, remembered as created in inference mode
    (``CreationMeta::INFERENCE_MODE``, ``torch/csrc/autograd/variable.h``); the common case (same
    key set) is inlined by the callers.
    """
    out._key_bits = base._key_bits
    if base._vc is not None:
        mark_inference_view(out)


# --- views: creation meta and grad_fn regeneration -------------------------------------------
# torch's CreationMeta (torch/csrc/autograd/variable.h)
CREATION_DEFAULT, CREATION_IN_CUSTOM_FUNCTION, CREATION_MULTI_OUTPUT_NODE = 0, 1, 2
CREATION_NO_GRAD, CREATION_INFERENCE = 3, 4


class ViewMeta(AutogradMeta):
    """The AutogradMeta of a differentiable view (torch's ``DifferentiableViewMeta``).

    ``creation_meta`` says how the view was made (grad mode, ``no_grad``, inference mode);
    ``attr_version`` is the shared version counter's value when the view's ``grad_fn`` was set:
    when the counter has moved on, the base or a view of it was modified in place and the
    ``grad_fn`` is regenerated on next use (Note [View + Inplace detection]).
    """

    __slots__ = ("creation_meta", "attr_version")

    def __init__(self, creation_meta: int = CREATION_DEFAULT, attr_version: int = 0) -> None:
        # AutogradMeta.__init__'s writes, inline (~110 ns less than calling it): every view a
        # backward formula makes under no_grad (``grad.t()``) gets one
        self.grad_accumulator = None
        self.retains_grad = False
        self.grad_dtype = TENSOR_DTYPE
        self.creation_meta = creation_meta
        self.attr_version = attr_version


def _view_meta(t: Any) -> ViewMeta:
    """``t``'s ViewMeta, converting a plain AutogradMeta (keeping its hooks) when needed."""
    meta = t._meta
    if type(meta) is ViewMeta:
        return meta
    new = ViewMeta()
    if meta is not None:
        new.grad_accumulator = meta.grad_accumulator
        new.retains_grad = meta.retains_grad
        new.grad_dtype = getattr(meta, "grad_dtype", new.grad_dtype)  # a wrapped number's _meta has none
        outdated = getattr(meta, "outdated_accumulator", None)
        if outdated is not None:
            new.outdated_accumulator = outdated
    t._meta = new
    return new


def set_creation_meta(view: Any, creation_meta: int) -> None:
    """Record how a view was made (``set_creation_meta``), e.g. ``CREATION_IN_CUSTOM_FUNCTION``.

    torch's ``_wrap_outputs`` marks the views a custom Function returns this way; an in-place op
    on such a view is then refused with torch's text.
    """
    if view._base is not None and view._vc is not None:
        meta = _view_meta(view)
        meta.creation_meta = creation_meta
        meta.attr_version = view._vc[0]


def mark_inference_view(out: Any) -> None:
    """Called by the ADInplaceOrView view kernel for a view made inside ``inference_mode``."""
    meta = _view_meta(out)
    meta.creation_meta = CREATION_INFERENCE
    meta.attr_version = out._vc[0]
    base = out._base
    if base is not None and base._requires_grad:
        out._requires_grad = True  # a view of a tensor that requires grad requires grad


def _geometry(t: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    return (tuple(t._data.shape), t.stride(), t.storage_offset())


def view_grad_fn(t: Any) -> Any:
    """A view's ``grad_fn``, regenerated as ``AsStridedBackward0`` when its base changed in place.

    Mirrors ``VariableHooks::grad_fn``: a view whose version counter moved on since its
    ``grad_fn`` was set gets a new node ``as_strided(base)`` with an edge to the base's current
    history (for instance the ``CopySlices`` an in-place op on another view left there).
    """
    fn = t._grad_fn
    base = t._base
    if (fn is None and not base._requires_grad) or t._vc is None \
            or t._data.dtype.kind not in _FLOAT_KINDS:
        return fn
    meta = t._meta
    if type(meta) is ViewMeta:
        if meta.attr_version == t._vc[0]:
            return fn
    elif fn is not None or base._grad_fn is None:
        # a view made while nothing was recorded: its base gained a history only by an in-place op
        return fn
    return _regenerate_view_grad_fn(t)


def _regenerate_view_grad_fn(t: Any) -> Node:
    base = t._base
    d = _AS_STRIDED[0]
    node = _new(d.node_class)
    _node_init(node, (gradient_edge(base),))
    size, stride, offset = _geometry(t)
    node._values = {"self_geometry": _geometry(base), "size": size, "stride": stride,
                    "storage_offset": offset}
    node._in_meta = ((tuple(base._data.shape), base._data.dtype),)
    old, old_nr = t._grad_fn, t._output_nr
    t._grad_fn = node
    t._output_nr = 0
    t._requires_grad = True
    _view_meta(t).attr_version = t._vc[0]
    _move_retains_grad_hook(t, old, old_nr, node)
    return node


def _move_retains_grad_hook(t: Any, old: Any, old_nr: int, new: Node) -> None:
    """``update_tensor_hooks_on_new_gradfn``: ``retain_grad`` follows the tensor to its new grad_fn.

    Hooks registered before stay on the old node and see the gradient of the old value.
    """
    meta = t._meta
    if meta is None or not meta.retains_grad or old is None:
        return
    hooks = old._extras.retains_grad_hooks if old._extras is not None else None
    hook = hooks.pop(old_nr, None) if hooks else None
    if hook is not None:
        new._register_retains_grad_hook(t._output_nr, hook)


_AS_STRIDED: list[Derivative] = []  # the as_strided derivative, once registered
_graph._view_grad_fn = view_grad_fn


# --- the nodes --------------------------------------------------------------------------------
class BuiltinNode(Node):
    """A node of a built-in derivative: saved values by name, and the formula(s) to apply.

    After the formula, each gradient is checked against its input's metadata as the engine's
    ``validate_outputs`` does: a broadcast gradient is summed back to the input's shape, and
    one of another dtype is cast to the input's dtype. ``apply`` here interprets a derivative;
    each derivative's node class runs the same work written out (Note [Generated applies]).
    """

    __slots__ = ("_values", "_in_meta")
    _values: dict[str, Any]  # saved values by formula parameter name
    _deriv: Derivative  # a class attribute of each derivative's node class (Derivative.__init__)
    _in_meta: tuple[tuple[Any, Any] | None, ...]  # (shape, numpy dtype) per input edge; None: not a tensor

    _takes_exec_info = True  # See Note [Only the needed gradients] (graph.py)

    def apply(self, grads: tuple[Any, ...], keep: Any = None, validate: bool = True) -> tuple[Any, ...]:
        d = self._deriv
        edges = self._next
        if edges.__class__ is tuple:
            lone, n = -1, len(edges)
        else:  # a lone edge (Note [Flat edges]): its input's place, no tuple of Nones built
            lone, _, n = self._nrs
        if d.single_grad:
            grad = grads[0]
            if grad is None:
                return (None,) * n
        else:
            if all(g is None for g in grads):
                return (None,) * n
            grad = grads
        # every saved value unpacked once, first, in the plan's order (inputs, then outputs, each by
        # name): torch's generated apply unpacks them all before any formula runs, so a mode sees
        # the ``detach`` of each saved output there (Note [Detach through Python], graph.py)
        values = raw = self._values
        for v in raw.values():  # nothing to unpack (numbers, shapes, wrapped numbers): read as is
            if v.__class__ is SavedTensor or v.__class__ is _SavedList:
                values = {}
                for name, v in raw.items():  # a loop, not a comprehension: a frame less (Python 3.11)
                    cls = v.__class__
                    values[name] = (v.unpack(self) if cls is SavedTensor else _unpack(v, self) if cls is _SavedList
                                    else v)
                break
        formulas = d.per_input
        if formulas is None:
            if d.wants_mask:  # a new dict: ``values`` may be the node's own (shared when empty)
                values = {**values, "grad_input_mask": tuple(e is not None and (keep is None or e in keep)
                                                             for e in _next_nodes(self))}
            result = d.formula(grad, **values)
            if type(result) is not tuple:
                result = (result,)
        else:  # only the inputs with an edge, each formula with its own saved values, in torch's order
            out: list[Any] = [None] * len(formulas)
            in_meta = self._in_meta
            fit = True  # every gradient already has its input's shape and dtype: nothing to validate
            for i in d.run_order if lone < 0 else (lone,):  # one edge: only its input's formula can run
                f, params = formulas[i]
                nxt = edges[i] if lone < 0 else edges
                if f is None or nxt is None or (keep is not None and nxt not in keep):
                    continue
                if len(params) == 1:  # the usual: one saved value (a call without map's iterator)
                    g = out[i] = f(grad, values[params[0]])
                else:
                    g = out[i] = f(grad, *map(values.__getitem__, params))
                if fit and g is not None:  # validate_outputs' test, made as each gradient comes
                    data = g._data
                    shape, dt = in_meta[i]  # type: ignore[misc]  # an input with an edge has its metadata
                    if data.shape != shape or (data.dtype is not dt and data.dtype != dt):
                        fit = False
            if fit:
                return tuple(out)
            result = tuple(out)
        # ``validate=False``: CopySlices calls its node as torch's does, validating afterwards
        return _validate_outputs(self, result) if validate else result

    def _release_variables(self) -> None:
        values = self._values
        if values is _NO_VALUES:  # saved nothing (never mutated: nothing to free)
            return
        global _last_freed
        last = _last_freed
        if last[0] is values:  # released like the last node's: the same freed copy
            self._values = last[1]
            return
        freed = None
        for name, v in values.items():
            if type(v) is SavedTensor:
                if v._tensor is not None:  # SavedTensor.free, inline: a call less per saved tensor
                    v._tensor = _FREED_MARK
            elif v.__class__ is _Tensor:  # a wrapped number saved as is: Note [Saved wrapped numbers]
                if freed is None:
                    freed = dict(values)  # a copy: other nodes may share the dict (Note [Constant saved values])
                freed[name] = _FREED_SAVED
        if freed is not None:
            self._values = freed
            _last_freed = (values, freed)


_last_freed: tuple[Any, Any] = (None, None)  # (values, their freed copy) of the last release that copied
_FREED_SAVED = SavedTensor.__new__(SavedTensor)  # a saved value after release: unpack raises
_FREED_MARK = _graph._FREED_MARK
_FREED_SAVED._tensor = _FREED_MARK


class _SavedList(list):
    """A saved list of tensors (``None`` entries kept), each version-checked when unpacked."""

    __slots__ = ()


def _unpack(v: Any, node: Node) -> Any:
    """A saved value as the formula sees it (tensors version-checked)."""
    if type(v) is SavedTensor:
        return v.unpack(node)
    if type(v) is _SavedList:
        return [None if x is None else x.unpack(node) for x in v]
    return v


def _validate_outputs(node: BuiltinNode, grads: tuple[Any, ...]) -> tuple[Any, ...]:
    """``validate_outputs``: reduce broadcast gradients to the input's shape, cast to its dtype."""
    out = None
    for i, (g, meta) in enumerate(zip(grads, node._in_meta)):
        if g is None or meta is None:
            continue
        shape, dt = meta
        data = g._data
        if data.shape != shape or (data.dtype is not dt and data.dtype != dt):  # numpy's dtypes are mostly singletons
            if _next_nodes(node)[i] is None:  # an input without an edge: torch's engine skips it too
                continue
            if out is None:
                out = list(grads)
            if data.shape != shape:
                g = _reduce_grad(g, shape, node.name(), i)
            if g._data.dtype != dt:
                g = aten._to_copy.default(g, dtype=_by_np[dt])
            out[i] = g
    return grads if out is None else tuple(out)


# Note [Generated applies]: torchgen writes each node's ``apply`` as straight-line C++: unpack
# the saved variables, then, for each input whose gradient the graph needs, call its formula.
# ``BuiltinNode.apply`` interprets the same steps for any derivative: it copies the saved-values
# dict to unpack it, loops over the formulas and spreads their parameters, 1-2 us a node (2.3 of
# an MmBackward0's 8.8 us). ``_generated_apply`` writes that work once per derivative as one
# Python function, which becomes its node class's ``apply``: each value a formula reads is a
# local, a saved input is unpacked inline (SavedTensor.unpack's checks, in its order; anything
# else goes through ``unpack``), each formula is called with its parameters spelled out, and the
# result is checked as the interpreter checks it. Values are unpacked before any formula runs,
# in the plan's order, as the interpreter and torch do (a mode sees the ``detach`` of a saved
# output there); a per-input derivative unpacks the values it saved, which are those of the
# inputs that had an edge. The node's release is written alongside (torchgen's
# ``release_variables``): it frees, by name, only the values that may hold a tensor. Both are
# written on the node class's first call (``_apply_first``). The source is kept on the function
# (``apply.source``); the interpreter stays the reference, and a test runs both on each scenario.
_APPLY_UNPACK = """\
    x = v.get({name!r})
    if x.__class__ is _SavedTensor:  # SavedTensor.unpack, inline for a saved input
        t = x._tensor
        {local} = t if t is not None and t is not _FREED_MARK and x._output is None and t._vc[0] == x._version \\
            else x.unpack(self)
    else:
        {local} = _unpack(x, self) if x.__class__ is _SavedList else x
"""
_APPLY_FORMULA = """\
    if e{i} is not None and (keep is None or e{i} in keep):
        r{i} = f{i}(grad, {args})
        if fit and r{i} is not None:  # validate_outputs' test, made as each gradient comes
            data = r{i}._data
            shape, dt = in_meta[{i}]
            if data.shape != shape or (data.dtype is not dt and data.dtype != dt):
                fit = False
"""


def _saved_tensor_names(d: Derivative) -> list[str]:
    """The values of ``d``'s nodes that may hold a SavedTensor, in the plan's order.

    An argument or an output may (a tensor, a list of them, or a wrapped number kept as is);
    metadata (shapes, strides, dtypes, devices, geometries) never does.
    """
    names = [a.name for a in d.op.schema.arguments]
    entries = sorted((d._plan_entry(p, names) for p in d.saves_all), key=lambda e: (e[1] == _RESULT, e[0]))
    return [e[0] for e in entries if e[1] == _ARG or e[1] == _RESULT]


def _generated_apply(d: Derivative) -> Callable[..., Any]:
    """The ``apply`` of ``d``'s nodes: ``BuiltinNode.apply``'s work for ``d`` (Note [Generated applies])."""
    saved = _saved_tensor_names(d)
    local = {name: f"s{k}" for k, name in enumerate(saved)}
    lines = ["def apply(self, grads, keep=None, validate=True):",
             "    edges = self._next",
             "    if edges.__class__ is tuple:",
             "        lone, n = -1, len(edges)",
             "    else:  # a lone edge (Note [Flat edges])",
             "        lone, _, n = self._nrs"]
    if d.single_grad:
        lines += ["    grad = grads[0]", "    if grad is None:", "        return (None,) * n"]
    else:
        lines += ["    if all(g is None for g in grads):", "        return (None,) * n", "    grad = grads"]
    if d.saves_all:
        lines.append("    v = self._values")
    lines += [_APPLY_UNPACK.format(name=name, local=name_local).rstrip("\n") for name, name_local in local.items()]
    scope: dict[str, Any] = {"_SavedTensor": SavedTensor, "_SavedList": _SavedList, "_unpack": _unpack,
                             "_FREED_MARK": _FREED_MARK, "_validate_outputs": _validate_outputs,
                             "_next_nodes": _next_nodes}
    if d.per_input is None:
        scope["f"] = d.formula
        args = [f"{p}={local.get(p, f'v[{p!r}]')}" for p in d.saves_all]
        if d.wants_mask:
            lines.append("    mask = tuple(e is not None and (keep is None or e in keep) for e in _next_nodes(self))")
            args.append("grad_input_mask=mask")
        lines += [f"    result = f(grad{''.join(', ' + a for a in args)})",
                  "    if type(result) is not tuple:",
                  "        result = (result,)",
                  "    if not validate:",
                  "        return result",
                  "    if len(result) == 1:  # validate_outputs' test for one gradient, inline",
                  "        g = result[0]",
                  "        meta = self._in_meta[0]",
                  "        if g is None or meta is None:",
                  "            return result",
                  "        data = g._data",
                  "        shape, dt = meta",
                  "        if data.shape == shape and (data.dtype is dt or data.dtype == dt):",
                  "            return result",
                  "    return _validate_outputs(self, result)"]
    else:
        n = len(d.per_input)
        lines += ["    if lone < 0:",
                  f"        {', '.join(f'e{i}' for i in range(n))}{',' if n == 1 else ''} = edges",
                  "    else:",
                  *(f"        e{i} = edges if lone == {i} else None" for i in range(n)),
                  f"    {' = '.join(f'r{i}' for i in range(n))} = None",
                  "    fit = True",
                  "    in_meta = self._in_meta"]
        for i in d.run_order:
            f, params = d.per_input[i]
            if f is None:
                continue
            scope[f"f{i}"] = f
            spelled = ", ".join(local.get(p, f"v[{p!r}]") for p in params)
            lines.append(_APPLY_FORMULA.format(i=i, args=spelled).rstrip("\n"))
        lines += [f"    result = ({', '.join(f'r{i}' for i in range(n))}{',' if n == 1 else ''})",
                  "    if fit:",
                  "        return result",
                  "    return _validate_outputs(self, result) if validate else result"]
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<apply of {d.node_name} ({d.op.name})>", "exec"), scope)  # noqa: S102
    apply: Any = scope["apply"]
    apply.source = source
    return apply


_RELEASE_ONE = """\
    x = values.get({name!r})
    if x.__class__ is _SavedTensor:
        if x._tensor is not None:  # SavedTensor.free, inline
            x._tensor = _FREED_MARK
    elif x.__class__ is _Tensor:  # a wrapped number saved as is: the dict may be shared, copied first
        return _release_general(self)
"""


def _generated_release(d: Derivative) -> Callable[..., Any]:
    """The ``_release_variables`` of ``d``'s nodes (torchgen's ``release_variables``; Note [Generated applies]).

    It frees the values that may hold a tensor, by name, and hands a wrapped number to
    ``BuiltinNode._release_variables``, which copies a shared dict before it marks it freed.
    """
    lines = ["def release(self):", "    values = self._values"]
    lines += [_RELEASE_ONE.format(name=name).rstrip("\n") for name in _saved_tensor_names(d)]
    if len(lines) == 2:
        lines.append("    return None  # saves no tensor")
    source = "\n".join(lines) + "\n"
    scope = {"_SavedTensor": SavedTensor, "_Tensor": _Tensor, "_FREED_MARK": _FREED_MARK,
             "_release_general": BuiltinNode._release_variables}
    exec(compile(source, f"<release of {d.node_name} ({d.op.name})>", "exec"), scope)  # noqa: S102
    release: Any = scope["release"]
    release.source = source
    return release


def _apply_first(self: BuiltinNode, grads: tuple[Any, ...], keep: Any = None, validate: bool = True) -> Any:
    """A node class's ``apply`` until its first call, which puts the generated one in its place.

    Written on first use, not at registration: most of the ~370 derivatives never run in a
    program, and writing them all would cost every import ~0.1 s.
    """
    apply = type(self).apply = self._deriv.generated_apply  # type: ignore[method-assign]
    return apply(self, grads, keep, validate)


def _release_first(self: BuiltinNode) -> None:
    """A node class's ``_release_variables`` until its first call, as ``_apply_first``."""
    release = type(self)._release_variables = self._deriv.generated_release  # type: ignore[method-assign]
    release(self)


def _reduce_grad(g: Any, shape: tuple[int, ...], name: str, index: int) -> Any:
    gshape = tuple(g._data.shape)
    lead = len(gshape) - len(shape)
    if lead < 0 or any(s != 1 and s != gs for s, gs in zip(shape, gshape[lead:])):
        raise RuntimeError(
            f"Function {name} returned an invalid gradient at index {index} - got {list(gshape)} "
            f"but expected shape compatible with {list(shape)}")
    return sum_to(g, shape)


def sum_to(grad: Any, shape: tuple[int, ...] | list[int]) -> Any:
    """Reduce a broadcast gradient back to ``shape`` (``at::sum_to``)."""
    shape = tuple(shape)
    if not shape:
        return aten.sum.default(grad)  # as torch: even a 0-d grad is summed (SumBackward0)
    gshape = tuple(grad._data.shape)
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if dims:
        grad = aten.sum.dim_IntList(grad, dims, True)
    if lead:
        grad = aten.view.default(grad, list(shape))
    return grad


class CopySlices(Node):
    """The base's node after an in-place op on one of its views (``torch::autograd::CopySlices``).

    Its first edge goes to the base's previous history; the others are those of the in-place
    op's node ``fn``. Backward copies the incoming gradient, runs ``fn`` on the view's slice of it
    and writes ``fn``'s gradient for the view back into that slice.
    """

    __slots__ = ("_fn", "_base_geometry", "_view_geometry")
    _qualified_name = "torch::autograd::CopySlices"
    _takes_exec_info = True  # fn computes only the gradients the graph needs (task_should_compute_output)
    _fn: Node  # the in-place op's node
    _base_geometry: tuple[tuple[int, ...], tuple[int, ...], int]  # (size, stride, storage offset)
    _view_geometry: tuple[tuple[int, ...], tuple[int, ...], int]

    def apply(self, grads: tuple[Any, ...], keep: Any = None) -> tuple[Any, ...]:
        grad = grads[0]
        if grad is None:
            return (None,) * len(_next_nodes(self))
        bsize, bstride, boffset = self._base_geometry
        vsize, vstride, voffset = self._view_geometry
        # CopySlices::apply_impl: new_empty_strided, copy_, the view's slice, fn on a contiguous clone
        result = aten.new_empty_strided.default(grad, list(bsize), list(bstride))
        aten.copy_.default(result, grad)
        grad_slice = aten.as_strided.default(result, list(vsize), list(vstride), voffset - boffset)
        fn = self._fn
        slice_clone = aten.clone.default(grad_slice, memory_format=_CONTIGUOUS_FORMAT)
        builtin = (fn if isinstance(fn, BuiltinNode)
                   and type(fn).apply in (fn._deriv.generated_apply, _apply_first, BuiltinNode.apply) else None)
        if builtin is not None:  # fn's gradients are validated after the copy, by the engine in torch
            if keep is not None:  # fn's first input stands for the base: needed when the base's history is
                view_edge = _next_nodes(builtin)[0]
                if view_edge is not None and _next_nodes(self)[0] in keep:
                    keep = keep | {view_edge}
            res = builtin.apply((slice_clone,), keep, False)
        else:
            res = fn.apply((slice_clone,))
        if res[0] is None:
            aten.zero_.default(grad_slice)
        else:
            aten.copy_.default(grad_slice, res[0])
        if builtin is not None:
            res = _validate_outputs(builtin, (None, *res[1:]))
        return (result, *res[1:])

    def _release_variables(self) -> None:
        self._fn._release_variables()


# --- derivatives --------------------------------------------------------------------------------
# derivatives.yaml entries whose node torch writes by hand in C++ (torch/csrc/autograd/functions/
# tensor.h) rather than generating it: name() gives their qualified C++ name
_HAND_WRITTEN_NODES = {"CopyBackwards": "torch::autograd::CopyBackwards"}
# what a formula parameter saves: an argument, its metadata, or an output
_ARG, _SHAPE, _DTYPE, _DEVICE, _GEOMETRY, _RESULT, _STRIDES = range(7)
_SUFFIXES = (("_shape", _SHAPE), ("_dtype", _DTYPE), ("_device", _DEVICE), ("_geometry", _GEOMETRY),
             ("_strides", _STRIDES))


class Derivative:
    """One op's derivative: which inputs are differentiable, what to save, the formula.

    ``formula(grad, **saved)`` returns one gradient per differentiable input (``None`` allowed);
    or ``formula`` is a tuple with one ``f(grad, **saved) -> gradient`` per input (``None`` for an
    input without a derivative), and only the inputs that need a gradient are computed and have
    their values saved, as torch's ``should_compute_output`` does. A formula's parameter names
    say what to save: a schema argument name saves that argument (tensors version-checked; for
    an in-place op, the mutated argument's value *before* the op, as a clone), ``result`` saves
    the output (``result1`` the second one), ``<arg>_shape`` / ``_dtype`` / ``_device`` /
    ``_strides`` / ``_geometry`` save only a tensor's (or a tensor list's) metadata, ``grad_input_mask`` gets a
    tuple saying which inputs need a gradient. ``grad`` is the gradient of the output (a tuple of
    them when more than one output is differentiable).

    Per-input formulas run in the order of their input names (torch's generated nodes compute
    derivatives.yaml's keys sorted by name), unless ``order`` says otherwise; when one yaml key names
    several inputs (``self, other``), give one formula with ``grad_input_mask`` instead. At ``apply``
    every saved value is unpacked first, inputs then outputs, each by name, as torch's generated
    ``apply`` does (a mode sees a saved output's ``detach`` there).
    """

    def __init__(self, op: Any, node_name: str, inputs: tuple[str, ...], formula: Any,
                 *, mutates: str | None = None, differentiable_outputs: tuple[int, ...] | None = None,
                 order: tuple[int, ...] | None = None) -> None:
        self.op = op
        self.node_name = node_name
        schema = op.schema
        # what every node of this derivative shares is its class's, not written per node: the
        # derivative, and the number of outputs (a slot of its own for a Tensor[] return,
        # whose length each call decides)
        list_return = any(str(r.type).startswith("Tensor[") for r in schema.returns)
        self.node_class: type[BuiltinNode] = type(node_name, (BuiltinNode,), {
            "__slots__": ("_num_outputs",) if list_return else (), "_deriv": self,
            "_qualified_name": _HAND_WRITTEN_NODES.get(node_name),
            **({} if list_return else {"_num_outputs": len(schema.returns)})})
        names = [a.name for a in schema.arguments]
        self.positions = {a.name: i for i, a in enumerate(schema.arguments) if not a.kwarg_only}
        self.defaults = {a.name: a.default for a in schema.arguments if a.has_default}
        self.list_inputs = frozenset(a.name for a in schema.arguments if str(a.type).startswith("Tensor["))
        self.input_names = tuple(inputs)
        self.input_positions = tuple(self.positions.get(n, -1) for n in inputs)
        self.mutates = mutates
        self.num_outputs = len(schema.returns)
        self.differentiable_outputs = (tuple(range(self.num_outputs)) if differentiable_outputs is None
                                       else tuple(differentiable_outputs))
        self.single_grad = len(self.differentiable_outputs) == 1
        # per-input formulas run in the order torch's generated node computes them, so its
        # dispatched calls come in that order: load_derivatives.py sorts a derivatives.yaml
        # entry's keys by name (``other`` before ``self``), which is the default here; ``order``
        # (indices into ``inputs``) overrides it where one key names several inputs
        if order is None and not callable(formula):
            by_name = tuple(sorted(range(len(inputs)), key=inputs.__getitem__))
            order = None if by_name == tuple(range(len(inputs))) else by_name
        self.order = order
        self.run_order = tuple(range(len(inputs))) if order is None else order
        if callable(formula):
            self.formula = formula
            self.per_input = None
            params = _params(formula)
            self.wants_mask = "grad_input_mask" in params
            self.saves_all = tuple(p for p in params if p != "grad_input_mask")
        else:
            if len(formula) != len(inputs) or self.list_inputs & set(inputs):
                raise ValueError(f"{node_name}: one formula per input (and no Tensor[] inputs) when "
                                 "formulas are given per input")
            self.formula = None
            self.per_input = tuple((f, _params(f)) if f is not None else (None, ()) for f in formula)
            if order is not None and sorted(order) != list(range(len(inputs))):
                raise ValueError(f"{node_name}: order must list each input's index once, got {order}")
            self.wants_mask = False
            self.saves_all = tuple(dict.fromkeys(p for _, ps in self.per_input for p in ps))
        for p in self.saves_all:
            self._plan_entry(p, names)  # validates the name
        self._plans: dict[tuple[bool, ...], tuple[tuple[Any, ...], ...]] = {}
        # See Note [Generated applies]: the node class's apply and release, written on first call
        self.node_class.apply = _apply_first  # type: ignore[method-assign]
        self.node_class._release_variables = _release_first  # type: ignore[method-assign]

    # Each is written once: threads racing to write one keep the first stored (dict.setdefault is
    # atomic), so the node class and the derivative always hold the same function.
    @property
    def generated_apply(self) -> Callable[..., Any]:
        """The ``apply`` of this derivative's nodes, written once (Note [Generated applies])."""
        apply = self.__dict__.get("_apply")
        return apply if apply is not None else self.__dict__.setdefault("_apply", _generated_apply(self))

    @property
    def generated_release(self) -> Callable[..., Any]:
        """The ``_release_variables`` of this derivative's nodes, written once (Note [Generated applies])."""
        release = self.__dict__.get("_release")
        return release if release is not None else self.__dict__.setdefault("_release", _generated_release(self))

    def _plan_entry(self, p: str, names: list[str]) -> tuple[Any, ...]:
        """``(name, kind, position, argument, default, is the mutated argument)`` of one saved value."""
        if p == "result":
            return (p, _RESULT, 0, None, None, False)
        if p.startswith("result") and p[6:].isdigit():
            return (p, _RESULT, int(p[6:]), None, None, False)
        for suffix, kind in _SUFFIXES:
            if p.endswith(suffix) and p[:-len(suffix)] in names:
                base = p[:-len(suffix)]
                return (p, kind, self.positions.get(base, -1), base, self.defaults.get(base), False)
        if p not in names:
            raise ValueError(f"{self.node_name}: formula parameter {p!r} names no argument of {self.op.schema}")
        return (p, _ARG, self.positions.get(p, -1), p, self.defaults.get(p), p == self.mutates)

    def plan(self, mask: tuple[bool, ...]) -> tuple[tuple[Any, ...], ...]:
        """The values to save when the inputs needing a gradient are ``mask``."""
        plan = self._plans.get(mask)
        if plan is None:
            if self.per_input is None:
                params = self.saves_all
            else:
                params = tuple(dict.fromkeys(p for (_, ps), m in zip(self.per_input, mask) if m for p in ps))
            names = [a.name for a in self.op.schema.arguments]
            entries = sorted((self._plan_entry(p, names) for p in params), key=lambda e: (e[1] == _RESULT, e[0]))
            plan = self._plans[mask] = tuple(entries)
        return plan


def _params(f: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(inspect.signature(f).parameters)[1:]


def _meta_of(t: Any, kind: int) -> Any:
    if kind == _SHAPE:
        return tuple(t._data.shape)
    if kind == _DTYPE:
        return t.dtype
    if kind == _DEVICE:
        return t.device
    if kind == _STRIDES:
        return t.stride()
    return _geometry(t)


def _edges_of(d: Derivative, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> tuple[list[Any], list[Any], tuple[bool, ...]]:
    """A new node's edges and input metadata (taken before the op runs, as torch does), and its mask."""
    edges: list[tuple[Any, int]] = []
    in_meta: list[Any] = []
    mask = []
    nargs = len(args)
    list_inputs = d.list_inputs
    for name, pos in zip(d.input_names, d.input_positions):
        t: Any = args[pos] if 0 <= pos < nargs else kwargs.get(name)  # a list for Tensor[] inputs
        if list_inputs and name in list_inputs:
            for x in t:
                _add_edge(x, edges, in_meta)
            mask.append(any(e[0] is not None for e in edges[len(edges) - len(t):]))
            continue
        _add_edge(t, edges, in_meta)
        mask.append(edges[-1][0] is not None)
    return edges, in_meta, tuple(mask)


def _make_node(d: Derivative, compiled: dict[Any, tuple[Any, ...]], positions: tuple[int, ...],
               edges_of: Callable[..., Any] | None, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> tuple[BuiltinNode, Any, dict[str, Any]]:
    """A node with its edges and input metadata, the plan's output entries, and the saved arguments.

    What ``record`` does for the other kernels (in-place ops): ``edges_of`` is the generated
    ``edges`` of their Tensor inputs (Note [Generated recorders]), None when they are not all
    positional; ``compiled`` keeps ``_compile_plan``'s answers by mask (Note [Constant saved
    values], Note [Generated savers]).
    """
    key: Any
    found = edges_of(args) if edges_of is not None and positions[-1] < len(args) else None
    if found is not None:
        next_fns, nrs, in_meta, key = found
    elif edges_of is not None and positions[-1] < len(args):  # a non-tensor where a Tensor was expected
        next_fns, nrs, in_meta, key = _edges_by_triples(positions, args)
    else:
        edges, metas, key = _edges_of(d, args, kwargs)
        next_fns, nrs = _flat_edges([e[0] for e in edges], [e[1] for e in edges])
        in_meta = tuple(metas)
    try:
        plan, results, constant, single_name, saver = compiled[key]
    except KeyError:
        mask = key if type(key) is tuple else tuple(bool(key >> k & 1) for k in range(len(positions)))
        plan, results, constant, single_name, saver = compiled[key] = _compile_plan(d, d.plan(mask))
    node = _new(d.node_class)  # Node.__init__, inlined
    node._next = next_fns
    node._nrs = nrs
    node._seq = _next_seq()
    node._extras = None
    node._in_meta = in_meta
    if constant is not None and not kwargs:
        values = constant
    else:
        values = _saved_values(plan, single_name, saver, args, kwargs) if plan else _NO_VALUES
    return node, results, values


def _edges_by_triples(positions: tuple[int, ...], args: tuple[Any, ...]) -> tuple[Any, Any, Any, int]:
    """What the generated ``edges`` answers, input by input (for a non-tensor among the inputs)."""
    triples = [_edge_and_meta(args[i]) for i in positions]
    next_fns, nrs = _flat_edges([e[0] for e in triples], [e[1] for e in triples])
    return next_fns, nrs, tuple([e[2] for e in triples]), sum(1 << k for k, e in enumerate(triples) if e[2] is not None)


def _add_edge(t: Any, edges: list[Any], in_meta: list[Any]) -> None:
    if t is not None and hasattr(t, "_key_bits"):
        edge = gradient_edge(t)
        edges.append(edge)
        fn = edge[0]
        if fn is not None:
            in_meta.append(fn.meta if fn.__class__ is AccumulateGrad else _input_meta(t._data))
            return
    else:
        edges.append(_NO_EDGE)
    in_meta.append(None)


_NO_EDGE_META = (None, 0, None)


def _edge_and_meta(t: Any) -> tuple[Any, int, Any]:
    """``(*gradient_edge(t), (shape, dtype))`` of a new node's input; ``(None, 0, None)`` without an edge.

    The metadata tuple is shared (Note [Shared input metadata]); anything but a tensor has no edge.
    """
    global _last_meta
    try:
        base = t._base
    except AttributeError:  # None, or not a tensor
        return _NO_EDGE_META
    if base is None:  # gradient_edge, inlined for a tensor that is not a view
        fn = t._grad_fn
        if fn is not None:
            nr = t._output_nr
        elif t._requires_grad:
            m = t._meta
            acc = None if m is None else m.grad_accumulator
            fn = acc if acc is not None else _grad_accumulator(t)
            return fn, 0, fn.meta  # See Note [Leaf metadata]
        else:
            return _NO_EDGE_META
    else:
        fn, nr = gradient_edge(t)
        if fn is None:
            return _NO_EDGE_META
        if fn.__class__ is AccumulateGrad:
            return fn, nr, fn.meta
    data = t._data  # _input_meta(data), inlined
    shape = data.shape
    meta = _last_meta
    if meta[1] is not data.dtype or meta[0] != shape:
        meta = _last_meta = (shape, data.dtype)
    return fn, nr, meta


# Note [Shared input metadata]: a node keeps ``(shape, dtype)`` of each input with an edge, for
# ``validate_outputs``; inputs without an edge get None (their gradient is never validated nor
# used). Consecutive nodes mostly see tensors of one shape and dtype, so the tuple of the last
# input is reused when it is equal (an identity test for the dtype, a tuple compare for the
# shape): a long graph then holds one metadata tuple, not one per node. Each tuple a graph keeps
# is an object the cyclic garbage collector tracks and walks on every full collection, and those
# walks were 40% of a 100,000-node chain's time; torch's C++ nodes cost its collector nothing.
_last_meta: tuple[Any, Any] = ((), None)


def _input_meta(data: Any) -> tuple[Any, Any]:
    """``(shape, dtype)`` of an input's backend data, shared with the last node's (Note [Shared input metadata])."""
    global _last_meta
    shape = data.shape
    meta = _last_meta
    if meta[1] is not data.dtype or meta[0] != shape:
        meta = _last_meta = (shape, data.dtype)
    return meta


_PLAIN_TYPES = frozenset({int, float, bool, str, complex})


# Note [Saved wrapped numbers]: a wrapped number (Note [Wrapped numbers], _composites.py) that a
# formula needs (``other`` of ``x * 2``) is saved as the tensor itself, not in a SavedTensor: it is
# never written (the cached ones are read-only, and no caller holds the others) and never requires
# grad, so the version check and the output bookkeeping have nothing to check. torch saves it as a
# SavedVariable all the same; what a user can see is kept: the formula gets the same tensor, and
# after the node is released (backward without retain_graph) it reads as freed
# (``_release_variables`` swaps in ``_FREED_SAVED``), so a second backward raises torch's error.
def _save(plan: tuple[tuple[Any, ...], ...], args: tuple[Any, ...], kwargs: dict[str, Any],
          values: dict[str, Any]) -> None:
    """Save the plan's argument values (outputs are saved after the op by ``_save_results``)."""
    nargs = len(args)
    for name, kind, pos, base, default, mutated in plan:
        if kind == _RESULT:
            continue
        if 0 <= pos < nargs:
            v = args[pos]
        elif base in kwargs:
            v = kwargs[base]
        else:
            v = default
        tv = v.__class__
        if kind == _ARG:
            if tv is _Tensor and not mutated:  # the usual: a plain tensor argument, saved as is
                if v._meta.__class__ is _WrappedNumber:  # See Note [Saved wrapped numbers]
                    values[name] = v
                else:
                    values[name] = _save_input(v)
            elif v is None or tv in _PLAIN_TYPES:
                values[name] = v
            elif tv is list or tv is tuple:
                if any(hasattr(x, "_key_bits") for x in v):  # Tensor[] or Tensor?[] (index's [None, idx])
                    values[name] = _SavedList(None if x is None else SavedTensor(x) for x in v)
                else:
                    values[name] = tuple(v)
            elif hasattr(v, "_key_bits"):
                if mutated:
                    v = aten.clone.default(v)  # an in-place op saves the original value
                elif v._meta.__class__ is _WrappedNumber:  # See Note [Saved wrapped numbers]
                    values[name] = v
                    continue
                values[name] = SavedTensor(v)
            else:
                values[name] = v
        elif v is None:
            values[name] = None
        elif tv is list or tv is tuple:
            values[name] = [None if x is None else _meta_of(x, kind) for x in v]
        elif kind == _SHAPE:
            values[name] = tuple(v._data.shape)
        else:
            values[name] = _meta_of(v, kind)


def _results(plan: tuple[tuple[Any, ...], ...]) -> tuple[tuple[Any, ...], ...]:
    """The plan entries that save an output (most plans have none: then nothing runs after the op)."""
    return tuple(entry for entry in plan if entry[1] == _RESULT)


# Note [Constant saved values]: a plan whose saved values are all non-tensor keyword-only
# arguments (``alpha`` of ``add.Tensor`` and ``sub.Tensor``) saves their defaults whenever the
# call passes no keyword: the same dict every time. The plan keeps that dict and every such node
# shares it, as nodes that save nothing share ``_NO_VALUES``. A plan that saves one value shares
# the last such dict when the value is the same object and is kept as is (a wrapped number, Note
# [Saved wrapped numbers], or a plain value): ``x = x * 1.0001`` in a loop saves one dict for the
# whole chain. Each dict a graph keeps is an object the garbage collector walks (Note [Shared
# input metadata]). Nothing writes a node's values but ``_release_variables``, which copies the
# dict before it marks a tensor freed.
_last_values: dict[str, Any] = {}


# Note [Generated savers]: torchgen writes each derivative's node as a C++ struct whose fields
# are its saved values, filled by generated code at recording. A plan here is the list of those
# fields; ``_save`` interprets it, entry by entry (~0.3 us each: mm saves six). ``_generated_saver``
# writes the same work as one Python function, compiled once per plan: the values dict is one
# literal, in the plan's order. It reads a positional ``Tensor`` argument (the value, its shape,
# strides, dtype, device or geometry), a positional ``Tensor?`` (None or the value), a positional
# argument of any other type whose value is a plain number, string or None (as is, or its default
# when the call leaves it out), and a keyword-only non-tensor argument (its default: a saver only
# runs for calls without keywords), so ``addmm``'s ``beta``/``alpha`` or ``nll_loss_forward``'s
# ``weight``/``reduction`` no longer send the whole plan to the interpreter. Its source is kept on
# the function (``saver.source``) for a reader. It answers None, and ``_save`` runs, for anything
# it was not written for: fewer positional arguments, a list or other value, a tensor subclass.
_SAVER_EXPRESSIONS = {
    _ARG: "({a} if {a}._meta.__class__ is _WrappedNumber else _save_input({a}))",  # Note [Saved wrapped numbers]
    _SHAPE: "tuple({a}._data.shape)", _STRIDES: "{a}.stride()", _DTYPE: "{a}.dtype", _DEVICE: "{a}.device",
    _GEOMETRY: "_geometry({a})",
}
_TENSOR, _OPTIONAL_TENSOR, _VALUE, _CONSTANT = range(4)  # how a generated saver reads an argument


def _saver_role(d: Derivative, types: dict[str, str], entry: tuple[Any, ...]) -> int | None:
    """How a generated saver reads ``entry``'s argument, or None when only ``_save`` can."""
    _, kind, pos, base, default, mutated = entry
    if mutated or kind not in _SAVER_EXPRESSIONS:  # an output (``base`` None), or an in-place op's clone
        return None
    type_ = types[base]
    if pos >= 0 and type_ == "Tensor":
        return _TENSOR
    if kind != _ARG:
        return None
    if pos >= 0 and type_ == "Tensor?":
        return _OPTIONAL_TENSOR if base not in d.defaults or default is None else None
    if "Tensor" in type_ or not (base not in d.defaults or default is None or type(default) in _PLAIN_TYPES):
        return None
    return _VALUE if pos >= 0 else _CONSTANT if base in d.defaults else None


def _generated_saver(d: Derivative, plan: tuple[tuple[Any, ...], ...]) -> Callable[..., Any] | None:
    """``saver(args) -> values dict or None``: ``_save``'s work for ``plan`` (Note [Generated savers])."""
    types = {a.name: str(a.type) for a in d.op.schema.arguments}
    roles = [_saver_role(d, types, entry) for entry in plan]
    if not plan or None in roles:
        return None
    scope = {"_Tensor": _Tensor, "_WrappedNumber": _WrappedNumber, "_save_input": _save_input,
             "_geometry": _geometry, "_PLAIN": _PLAIN_TYPES}
    read: dict[int, int | None] = {}  # position -> role (a position saved twice is a Tensor both times)
    for (_, _, pos, _, _, _), role in zip(plan, roles):
        if role != _CONSTANT:
            read[pos] = role
    # the positions a call must give: the Tensors, and any value the schema has no default for
    needed = max((pos + 1 for pos, role in read.items()
                  if role == _TENSOR or _plan_default(d, plan, pos) is _NO_ARG), default=0)
    lines = ["def saver(args):"]
    if needed:
        lines += [f"    if len(args) < {needed}:", "        return None"]
    checks = []
    for pos, role in sorted(read.items()):
        if pos < needed:
            lines.append(f"    a{pos} = args[{pos}]")
        else:  # left out: the schema's default, as _save reads it
            scope[f"_d{pos}"] = _plan_default(d, plan, pos)
            lines.append(f"    a{pos} = args[{pos}] if len(args) > {pos} else _d{pos}")
        checks.append(f"a{pos}.__class__ is not _Tensor" if role == _TENSOR else
                      f"(a{pos} is not None and a{pos}.__class__ is not _Tensor)" if role == _OPTIONAL_TENSOR else
                      f"(a{pos} is not None and a{pos}.__class__ not in _PLAIN)")
    if checks:
        lines += ["    if " + " or ".join(checks) + ":", "        return None"]
    fields = []
    for i, ((name, kind, pos, _, default, _), role) in enumerate(zip(plan, roles)):
        if role == _TENSOR:
            value = _SAVER_EXPRESSIONS[kind].format(a=f"a{pos}")
        elif role == _OPTIONAL_TENSOR:
            value = f"(None if a{pos} is None else {_SAVER_EXPRESSIONS[_ARG].format(a=f'a{pos}')})"
        elif role == _VALUE:
            value = f"a{pos}"
        else:
            scope[f"_c{i}"] = default
            value = f"_c{i}"
        fields.append(f"{name!r}: {value}")
    lines.append(f"    return {{{', '.join(fields)}}}")
    source = "\n".join(lines)
    exec(compile(source, f"<saver of {d.node_name} {[e[0] for e in plan]}>", "exec"), scope)  # noqa: S102
    saver: Any = scope["saver"]
    saver.source = source
    return saver


def _plan_default(d: Derivative, plan: tuple[tuple[Any, ...], ...], pos: int) -> Any:
    """The schema default of the argument at ``pos`` of ``plan``, or ``_NO_ARG`` when it has none."""
    for _, _, p, base, default, _ in plan:
        if p == pos:
            return default if base in d.defaults else _NO_ARG
    return _NO_ARG


def _compile_plan(d: Derivative, plan: tuple[tuple[Any, ...], ...]) -> tuple[Any, ...]:
    """What ``record`` needs of a plan, worked out once.

    ``(plan, its _results, the constant values or None, the name of a lone saved argument or None,
    a generated saver or None)``: See Note [Constant saved values] and Note [Generated savers].
    """
    types = {a.name: str(a.type) for a in d.op.schema.arguments}
    constant: dict[str, Any] | None = None
    if plan and all(kind == _ARG and pos < 0 and "Tensor" not in types[base] and not mutated
                    and (default is None or type(default) in _PLAIN_TYPES)
                    for _, kind, pos, base, default, mutated in plan):
        constant = {}
        _save(plan, (), {}, constant)
    single_name = plan[0][0] if len(plan) == 1 and plan[0][1] == _ARG and not plan[0][5] else None
    arguments = tuple(entry for entry in plan if entry[1] != _RESULT)
    return plan, _results(plan), constant, single_name, _generated_saver(d, arguments)


def _save_results(results: tuple[tuple[Any, ...], ...], node: Node, outputs: tuple[Any, ...],
                  values: dict[str, Any]) -> None:
    """Save the outputs that ``results`` (a plan's ``_results``) names."""
    for entry in results:
        out = outputs[entry[2]]
        if out is None:  # an undefined output saves as None
            values[entry[0]] = None
            continue
        differentiable = out._grad_fn is node
        values[entry[0]] = SavedTensor(out, is_output=differentiable, node=node if differentiable else None)


def _saved_values(plan: tuple[tuple[Any, ...], ...], single_name: str | None, saver: Any,
                  args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A new node's saved arguments for a plan that saves some (its outputs are saved after).

    See Note [Generated savers] and Note [Constant saved values].
    """
    global _last_values
    values = saver(args) if saver is not None and not kwargs else None
    if values is None:
        values = {}
        _save(plan, args, kwargs, values)
    if single_name is not None:  # the last node's dict, if it holds the same value
        v = values[single_name]
        if v.__class__ is not SavedTensor and v.__class__ is not _SavedList:
            shared = _last_values
            if shared.get(single_name, _NO_ARG) is v:
                return shared
            _last_values = values
    return values


# Note [Generated recorders]: recording is the part of a differentiable op that torch does in
# generated C++ (``VariableType``: collect the inputs' edges, make the node, save, set the
# output's history). ``record`` interprets it for any call; for the usual call (the Tensor
# inputs positional, no keywords, one output) ``_generated_recorder`` writes it once per input
# positions as straight-line Python: each input's ``gradient_edge`` and ``(shape, dtype)``
# (Note [Shared input metadata]) inlined for a tensor that is not a view (a view goes through
# ``_edge_and_meta``, which may regenerate its grad_fn), the edges flattened (Note [Flat edges],
# graph.py), the node's slots written, the plan for the inputs that need a gradient looked up.
# That is ~0.3 us less per recorded op than ``record``'s loops and calls (G10's add: 2.3 ->
# 2.0 us). The function's source is kept on it (``recorder.source``); anything it was not
# written for (a non-tensor where a Tensor was expected) goes to ``record``.
_RECORDER_EDGE = """\
        x{k} = args[{pos}]
        if x{k}._base is None:  # gradient_edge and _input_meta, inlined for a tensor that is not a view
            f{k} = x{k}._grad_fn
            if f{k} is not None:
                n{k} = x{k}._output_nr
                data = x{k}._data
                shape = data.shape
                m{k} = _last_meta
                if m{k}[1] is not data.dtype or m{k}[0] != shape:
                    m{k} = _last_meta = (shape, data.dtype)
            elif x{k}._requires_grad:  # a leaf: its accumulator's metadata (Note [Leaf metadata])
                m = x{k}._meta
                f{k} = None if m is None else m.grad_accumulator
                if f{k} is None:
                    f{k} = _grad_accumulator(x{k})
                n{k} = 0
                m{k} = f{k}.meta
            else:
                n{k} = 0
                m{k} = None
        else:  # a view: its grad_fn may need regenerating
            f{k}, n{k}, m{k} = _edge_and_meta(x{k})
"""

_RECORDER_BODY = """\
    try:
        plan, results, constant, single_name, saver = plans[needed]
    except KeyError:
        plan, results, constant, single_name, saver = plan_of(needed)
    node = _new(node_class)  # Node.__init__, inlined
    node._next = next_fns
    node._nrs = nrs
    node._seq = _next_seq()
    node._extras = None
    node._in_meta = ({metas})
    if constant is not None:
        values = constant
    elif plan:
        values = _saved_values(plan, single_name, saver, args, _NO_KWARGS)
    else:
        values = _NO_VALUES
    if result._data.dtype.kind in _FLOAT_KINDS:
        result._grad_fn = node
        result._requires_grad = True
        result._output_nr = 0
    if results:
        _save_results(results, node, (result,), values)
    node._values = values
    return result
"""


def _generated_recorder(positions: tuple[int, ...], node_class: type, plans: dict[Any, Any],
                        plan_of: Callable[[int], Any], record: Callable[..., Any]) -> Callable[..., Any]:
    """``recorder(result, args)``: ``record``'s work for a one-output op (Note [Generated recorders]).

    Its Tensor inputs are at ``positions``, all present and positional.
    """
    source, make, _ = _recorder_factory(positions)
    recorder: Any = make(node_class, plans, plan_of, record)
    recorder.source = source
    return recorder


def _generated_edges(positions: tuple[int, ...]) -> Callable[[tuple[Any, ...]], Any]:
    """``edges(args) -> (next_fns, nrs, in_meta, needed) or None``: the recorder's first part.

    A new node's flat edges, input metadata and the bitmask of the inputs with an edge, for the
    Tensor inputs at ``positions``; None for a non-tensor among them (the caller's general path).
    The in-place kernels use it: they make their node before the op runs.
    """
    return _recorder_factory(positions)[2]


@functools.cache
def _recorder_factory(positions: tuple[int, ...]) -> tuple[str, Callable[..., Any], Callable[..., Any]]:
    """The recorder's source for Tensor inputs at ``positions``, a factory of recorders, and ``edges``.

    The factory makes a recorder for a kernel's own objects: compiled once per positions, not per operator.
    """
    n = len(positions)
    ks = range(n)
    # a lone edge's place is a shared tuple when its input_nr is 0 (lone_edge, inline: a call less)
    if n == 1:
        edges = ["    next_fns, nrs = f0, _LONE_ZERO[1][0] if not n0 else _lone_edge(0, n0, 1)"]
    elif n == 2:
        edges = ["    if f1 is None:",
                 "        nrs = _LONE_ZERO[2][0] if not n0 else _lone_edge(0, n0, 2)",
                 "        next_fns, needed = f0, f0 is not None",
                 "    elif f0 is None:",
                 "        next_fns, nrs, needed = f1, _LONE_ZERO[2][1] if not n1 else _lone_edge(1, n1, 2), 2",
                 "    else:", "        next_fns, nrs, needed = (f0, f1), (n0, n1) if n0 or n1 else _ZERO_NRS[2], 3"]
    else:
        edges = [f"    next_fns, nrs = _flat_edges(({', '.join(f'f{k}' for k in ks)}), "
                 f"({', '.join(f'n{k}' for k in ks)}))"]
    if n != 2:  # an input has metadata exactly when it has an edge
        edges.append("    needed = " + " | ".join(f"(f{k} is not None)" + (f" << {k}" if k else "") for k in ks))
    metas = ", ".join(f"m{k}" for k in ks) + ("," if n == 1 else "")

    def function(header: str, otherwise: tuple[str, str], body: str) -> str:
        return "\n".join([
            header,
            "    global _last_meta",
            "    try:",
            *(_RECORDER_EDGE.format(k=k, pos=pos).rstrip("\n") for k, pos in enumerate(positions)),
            "    except AttributeError:  # not a tensor: " + otherwise[0],
            "        " + otherwise[1],
            *edges,
            body.rstrip("\n"),
        ])

    source = function("def recorder(result, args):",
                      ("record's general path", "return record(result, args, _NO_KWARGS, False)"),
                      _RECORDER_BODY.format(metas=metas))
    # compiled inside a factory, so that a kernel's own objects are the recorder's closure
    # variables and this module's globals its globals (``_last_meta`` is shared)
    factory = ("def make(node_class, plans, plan_of, record):\n" + textwrap.indent(source, "    ")
               + "\n    return recorder")
    edges_source = function("def edges(args):", ("the caller's general path", "return None"),
                            f"    return next_fns, nrs, ({metas}), needed")
    scope: dict[str, Any] = {}
    exec(compile(factory + "\n\n\n" + edges_source, f"<recorder for Tensor inputs at {positions}>", "exec"),  # noqa: S102
         globals(), scope)
    scope["edges"].source = edges_source
    return source, scope["make"], scope["edges"]


# --- kernels -----------------------------------------------------------------------------------
def make_autograd_kernel(d: Derivative, *, view: bool = False) -> Callable[..., Any]:
    """The raw-keyset Autograd kernel for one op with a built-in derivative."""
    if d.mutates is not None:
        return _make_inplace_kernel(d)
    if view:
        return _make_view_kernel(d)
    op = d.op
    redispatch = op.redispatch
    positions = tuple(p for p in d.input_positions if p >= 0)
    by_name = tuple(n for n, p in zip(d.input_names, d.input_positions) if p < 0)
    list_positions = tuple(d.positions[n] for n in d.input_names if n in d.list_inputs)
    # the common case: every input a positional Tensor (the fast path below records inline)
    simple = not by_name and not list_positions
    last = max(positions, default=-1)
    diff_outputs = d.differentiable_outputs
    single = d.num_outputs == 1
    node_class = d.node_class
    n_inputs = len(positions)
    # _compile_plan's answers by bitmask of the inputs needing a gradient (the simple path), or
    # by mask tuple (the general one)
    plans: dict[Any, tuple[Any, ...]] = {}
    plan_for = d.plan

    def autograd_kernel(bits: int, *args: Any, **kwargs: Any) -> Any:
        st = _pt.state  # this thread's state, fetched once (See ThreadState in tls.py)
        needs = False
        if st.autograd[0]:  # grad mode: does any differentiable input require grad?
            if simple:
                try:
                    for i in positions:
                        if args[i]._requires_grad:
                            needs = True
                            break
                except (AttributeError, IndexError):  # a non-Tensor dispatch argument, or omitted
                    needs = _any_requires_grad(args, kwargs, positions, list_positions, by_name)
            else:
                needs = _any_requires_grad(args, kwargs, positions, list_positions, by_name)
        # op.redispatch(bits & after_autograd_keyset, ...) with its memo lookup inlined: this
        # kernel runs on every call of every differentiable op, so it saves a frame per call
        try:
            fn, first = op._dispatch[3][bits & _AFTER_AUTOGRAD]
        except KeyError:  # not memoised yet: redispatch resolves and memoises
            fn, first = redispatch, bits & _AFTER_AUTOGRAD
        # AutoDispatchBelowADInplaceOrView, set directly: the kernel below must not record again
        state = st.keys
        entered_from, below = _last_below
        st.keys = below if entered_from is state else below_state(state)
        try:
            if kwargs:
                result = fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
            else:
                result = fn(*args) if first is None else fn(first, *args)
        finally:
            st.keys = state
        return record(result, args, kwargs) if needs else result

    def record(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any], generated: bool = True) -> Any:
        """The graph part of the kernel: a node with the inputs' edges, saved values, outputs' grad_fn."""
        if simple and last < len(args):
            if generated and recorder is not None and not kwargs:  # See Note [Generated recorders]
                return recorder(result, args)
            found = edges_of(args) if edges_of is not None else None
            if found is None:  # a non-tensor where a Tensor was expected, or no Tensor input
                found = _edges_by_triples(positions, args)
            next_fns, nrs, in_meta, needed = found
            try:
                plan, results, constant, single_name, saver = plans[needed]
            except KeyError:
                plan, results, constant, single_name, saver = plan_of(needed)
        else:
            edges, metas, mask = _edges_of(d, args, kwargs)
            next_fns, nrs = _flat_edges([e[0] for e in edges], [e[1] for e in edges])
            in_meta = tuple(metas)
            try:
                plan, results, constant, single_name, saver = plans[mask]
            except KeyError:
                plan, results, constant, single_name, saver = plans[mask] = _compile_plan(d, plan_for(mask))
        node = _new(node_class)  # Node.__init__, inlined
        node._next = next_fns
        node._nrs = nrs
        node._seq = _next_seq()
        node._extras = None
        node._in_meta = in_meta
        if constant is not None and not kwargs:  # See Note [Constant saved values]
            values = constant
        elif plan:
            values = _saved_values(plan, single_name, saver, args, kwargs)
        else:
            values = _NO_VALUES
        if single:
            if result._data.dtype.kind in _FLOAT_KINDS:
                result._grad_fn = node
                result._requires_grad = True
                result._output_nr = 0
            if results:
                _save_results(results, node, (result,), values)
        else:
            for i in diff_outputs:
                out = result[i]
                if out is not None and out._data.dtype.kind in _FLOAT_KINDS:  # None: an undefined output
                    out._grad_fn = node
                    out._requires_grad = True
                    out._output_nr = i
            if results:
                _save_results(results, node, result, values)
        node._values = values
        return result

    def plan_of(needed: int) -> tuple[Any, ...]:
        """``_compile_plan``'s answer when the inputs in bitmask ``needed`` have an edge, memoised."""
        mask = tuple(bool(needed >> k & 1) for k in range(n_inputs))
        compiled = plans[needed] = _compile_plan(d, plan_for(mask))
        return compiled

    edges_of = _generated_edges(positions) if simple and positions else None
    recorder = (_generated_recorder(positions, node_class, plans, plan_of, record)
                if simple and single and positions else None)

    # Note [Bound kernels] (operator.py) for the common calls: the Tensor inputs first, all
    # positional. The kernel bound to a key set has the redispatch below it resolved and takes
    # the call's positional arguments (the call memo is only used for calls without keywords):
    # exactly one or two when the schema fixes that count, else any; it does what
    # autograd_kernel does, and hands anything unusual to it.
    two_tensors = positions == (0, 1)
    tail = tuple(p - 1 for p in positions[1:])  # bound_n's other Tensor inputs, as indices into rest
    nargs = op._lo if op._lo == op._hi else 0

    def bind_keyset(bits: int) -> Callable[..., Any]:
        below = op.bound_redispatch(bits & _AFTER_AUTOGRAD)
        leaf = is_leaf_kernel(below)  # See Note [Leaf kernels] (operator.py): no guard around it
        rec = recorder if recorder is not None else partial(record, kwargs=_NO_KWARGS)  # (result, args)

        # the thread-local state (~50 ns a read) is only read when an input requires grad, or
        # for the guard around a kernel that is not a leaf
        def bound1(a: Any) -> Any:
            try:
                needs = a._requires_grad and _pt.state.autograd[0]
            except AttributeError:  # not a Tensor: the general kernel, past the handler
                pass  # (See Note [No chained errors] in operator.py)
            else:
                result = below(a) if leaf else call_below(below, a)
                return rec(result, (a,)) if needs else result
            return autograd_kernel(bits, a)

        def bound2(a: Any, b: Any) -> Any:
            try:
                needs = (a._requires_grad or (two_tensors and b._requires_grad)) and _pt.state.autograd[0]
            except AttributeError:  # not Tensors: the general kernel, past the handler
                pass  # (See Note [No chained errors] in operator.py)
            else:
                result = below(a, b) if leaf else call_below(below, a, b)
                return rec(result, (a, b)) if needs else result
            return autograd_kernel(bits, a, b)

        def bound_n(a: Any, *rest: Any) -> Any:  # optional positional arguments: any count
            try:
                needs = a._requires_grad
                if not needs:
                    for i in tail:  # the other Tensor inputs (addmm's mat1 and mat2)
                        if rest[i]._requires_grad:
                            needs = True
                            break
                needs = needs and _pt.state.autograd[0]
            except (AttributeError, IndexError):  # not Tensors (None for a Tensor?), or left out:
                pass  # the general kernel, past the handler (See Note [No chained errors] in operator.py)
            else:
                result = below(a, *rest) if leaf else call_below(below, a, *rest)
                return record(result, (a, *rest), _NO_KWARGS) if needs else result
            return autograd_kernel(bits, a, *rest)

        bound = bound1 if nargs == 1 else bound2 if nargs == 2 else bound_n
        bound.__qualname__ = f"{autograd_kernel.__qualname__}.bound"
        # what it calls, as is, when no input requires grad: callers that can see that for
        # themselves may call this instead (Note [matmul shortcut])
        bound.no_grad_kernel = below if leaf else None  # type: ignore[union-attr]
        return bound

    autograd_kernel.__qualname__ = f"autograd_kernel[{op.qualname}]"
    # the two ways it records (``record(result, args, kwargs, generated)``, ``recorder(result, args)``
    # or None), for a reader who wants to compare them (Note [Generated recorders])
    autograd_kernel.record = record  # type: ignore[attr-defined]
    autograd_kernel.recorder = recorder  # type: ignore[attr-defined]
    if simple and positions == tuple(range(len(positions))) and positions:  # leading Tensors
        autograd_kernel.bind_keyset = bind_keyset  # type: ignore[attr-defined]
        bind_keyset.kernel = autograd_kernel  # type: ignore[attr-defined]
    return autograd_kernel


_NO_ARG: Any = object()  # an argument the caller left out
_NO_KWARGS: dict[str, Any] = {}  # the keyword arguments of a fixed-arity call (never mutated)


def _present(*args: Any) -> tuple[Any, ...]:
    return tuple(a for a in args if a is not _NO_ARG)


def _any_requires_grad(args: tuple[Any, ...], kwargs: dict[str, Any], positions: tuple[int, ...],
                       list_positions: tuple[int, ...], by_name: tuple[str, ...]) -> bool:
    nargs = len(args)
    for i in positions:
        if i < nargs:
            if i in list_positions:
                if any(getattr(x, "_requires_grad", False) for x in args[i]):
                    return True
            elif getattr(args[i], "_requires_grad", False):
                return True
    return any(getattr(kwargs.get(n), "_requires_grad", False) for n in by_name)


_NO_EDGE: tuple[Node | None, int] = (None, 0)
_NO_VALUES: dict[str, Any] = {}  # shared by nodes that save nothing (never mutated)


def _make_view_kernel(d: Derivative) -> Callable[..., Any]:
    """View ops: record like a functional op, and give the view its ViewMeta (``as_view``)."""
    op = d.op
    redispatch = op.redispatch
    node_class = d.node_class
    plan_with_edge = d.plan((True,))
    plan_without_edge = d.plan((False,))

    def autograd_view_kernel(bits: int, self: Any, *args: Any, **kwargs: Any) -> Any:
        st = _pt.state
        grad_mode = st.autograd[0]
        try:  # redispatch's memo lookup inlined, as in autograd_kernel
            fn, first = op._dispatch[3][bits & _AFTER_AUTOGRAD]
        except KeyError:
            fn, first = redispatch, bits & _AFTER_AUTOGRAD
        state = st.keys
        entered_from, below = _last_below
        st.keys = below if entered_from is state else below_state(state)
        try:
            if kwargs:
                out = fn(self, *args, **kwargs) if first is None else fn(first, self, *args, **kwargs)
            elif fn is _builtin_adiov(op):  # See Note [Fused ADInplaceOrView]
                try:
                    fn, first = op._dispatch[3][bits & AFTER_ADINPLACEORVIEW]
                except KeyError:
                    fn, first = redispatch, bits & AFTER_ADINPLACEORVIEW
                out = fn(self, *args) if first is None else fn(first, self, *args)
                out._base = self if self._base is None else self._base  # as_view
                out._vc = self._vc
                if out._key_bits != self._key_bits:
                    as_view(self, out)
            else:
                out = fn(self, *args) if first is None else fn(first, self, *args)
        finally:
            st.keys = state
        if grad_mode:
            if not self._requires_grad:
                if self._base is not None:  # propagate_creation_meta of a no_grad/inference view
                    m = self._meta
                    if type(m) is ViewMeta and m.creation_meta != CREATION_DEFAULT and out._base is not None:
                        out._meta = ViewMeta(m.creation_meta, out._vc[0])
                return out
            return record_view(self, out, args, kwargs)
        elif out._base is not None and out._vc is not None and out._data.dtype.kind in _FLOAT_KINDS:
            out._meta = ViewMeta(CREATION_NO_GRAD, out._vc[0])
            if out._base._requires_grad:
                out._requires_grad = True  # a view of a tensor that requires grad requires grad
        return out

    def record_view(self: Any, out: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The graph part of a view of ``self``, which requires grad, in grad mode: its node and ViewMeta."""
        if out._base is None or out._vc is None or out._data.dtype.kind not in _FLOAT_KINDS:
            return out  # not a differentiable view (below ADInplaceOrView, inference, integers)
        node = _new(node_class)
        edge = gradient_edge(self)
        _node_init(node, (edge,))
        data = self._data
        node._in_meta = ((data.shape, data.dtype),)
        plan = plan_with_edge if edge[0] is not None else plan_without_edge
        if plan:
            values: dict[str, Any] = {}
            _save(plan, (self, *args), kwargs, values)
            node._values = values
        else:
            node._values = _NO_VALUES
        out._grad_fn = node
        out._requires_grad = True
        out._output_nr = 0
        creation = CREATION_DEFAULT
        if self._base is not None:
            m = self._meta
            if type(m) is ViewMeta:
                creation = m.creation_meta
        out._meta = ViewMeta(creation, out._vc[0])
        return out

    # Note [Bound kernels] for the common calls: a view with the built-in ADInplaceOrView kernel
    # below (fused: Note [Fused ADInplaceOrView]) and up to three positional arguments, whether it
    # records (``w.t()`` of a weight in every nn.Linear call: 2.5 -> 1.6 us) or not (grad mode off,
    # as in a backward pass, or nothing requires grad). It does exactly what the kernel above does
    # for those cases; every other call goes there.
    def bind_keyset(bits: int) -> Callable[..., Any]:
        target = op.redispatch_target(bits & _AFTER_AUTOGRAD)
        if target is None or target[0] is not _builtin_adiov(op):
            return partial(autograd_view_kernel, bits)
        below = op.bound_redispatch(bits & AFTER_ADINPLACEORVIEW)
        leaf = is_leaf_kernel(below)  # See Note [Leaf kernels] (operator.py)

        def bound_autograd_view_kernel(self: Any, x: Any = _NO_ARG, y: Any = _NO_ARG, *rest: Any) -> Any:
            st = _pt.state
            grad_mode = st.autograd[0]
            try:
                records = grad_mode and self._requires_grad
            except AttributeError:  # not a Tensor: the general kernel, past the handler
                records = None  # (See Note [No chained errors] in operator.py)
            if rest or records is None:
                return autograd_view_kernel(bits, self, *_present(x, y), *rest)
            if leaf:
                out = below(self) if x is _NO_ARG else below(self, x) if y is _NO_ARG else below(self, x, y)
            else:
                out = call_below(below, self, *_present(x, y))
            base = self._base
            out._base = self if base is None else base  # as_view
            out._vc = self._vc
            if out._key_bits != self._key_bits:
                as_view(self, out)
            if records:
                return record_view(self, out, () if x is _NO_ARG else (x,) if y is _NO_ARG else (x, y), _NO_KWARGS)
            if not grad_mode:
                if out._vc is not None and out._data.dtype.kind in _FLOAT_KINDS:
                    out._meta = ViewMeta(CREATION_NO_GRAD, out._vc[0])  # a view made under no_grad
                    if out._base._requires_grad:
                        out._requires_grad = True
            elif base is not None:  # propagate_creation_meta of a no_grad/inference view
                m = self._meta
                if type(m) is ViewMeta and m.creation_meta != CREATION_DEFAULT:
                    out._meta = ViewMeta(m.creation_meta, out._vc[0])
            return out

        bound_autograd_view_kernel.__qualname__ = f"{autograd_view_kernel.__qualname__}.bound"
        return bound_autograd_view_kernel

    autograd_view_kernel.__qualname__ = f"autograd_kernel[{op.qualname}]"
    autograd_view_kernel.bind_keyset = bind_keyset  # type: ignore[attr-defined]
    bind_keyset.kernel = autograd_view_kernel  # type: ignore[attr-defined]
    return autograd_view_kernel


def _make_inplace_kernel(d: Derivative) -> Callable[..., Any]:
    """In-place ops: torch's ``check_inplace``, then ``rebase_history`` of the mutated tensor."""
    op = d.op
    redispatch = op.redispatch
    positions = tuple(p for p in d.input_positions if p >= 0)
    by_name = tuple(n for n, p in zip(d.input_names, d.input_positions) if p < 0)
    mutated_pos = d.positions[d.mutates]

    simple = not by_name and not d.list_inputs & set(d.input_names)
    edges_of = _generated_edges(positions) if simple and positions else None  # Note [Generated recorders]
    compiled: dict[Any, tuple[Any, ...]] = {}  # _compile_plan's answers, by mask

    def autograd_inplace_kernel(bits: int, *args: Any, **kwargs: Any) -> Any:
        st = _pt.state
        needs = False
        node = None
        self = args[mutated_pos]
        if st.autograd[0]:
            for i in positions:
                if i < len(args) and getattr(args[i], "_requires_grad", False):
                    needs = True
                    break
            else:
                for n in by_name:
                    if getattr(kwargs.get(n), "_requires_grad", False):
                        needs = True
                        break
                else:
                    base = self._base
                    needs = base is not None and base._requires_grad
            if needs:
                _check_inplace(self)
                node, results, values = _make_node(d, compiled, positions, edges_of, args, kwargs)
        try:  # redispatch's memo lookup inlined, as in autograd_kernel
            fn, first = op._dispatch[3][bits & _AFTER_AUTOGRAD]
        except KeyError:
            fn, first = redispatch, bits & _AFTER_AUTOGRAD
        state = st.keys
        entered_from, below = _last_below
        st.keys = below if entered_from is state else below_state(state)
        try:
            if fn is _builtin_adiov(op) and mutated_pos == 0:  # See Note [Fused ADInplaceOrView]
                if self._vc is None and not st.autograd[1]:
                    raise RuntimeError(INFERENCE_INPLACE_ERROR)
                try:
                    fn, first = op._dispatch[3][bits & AFTER_ADINPLACEORVIEW]
                except KeyError:
                    fn, first = redispatch, bits & AFTER_ADINPLACEORVIEW
                # keyword-only arguments (``addcmul_``'s value) ride along: self is args[0] either way
                result = fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
                if self._vc is not None:
                    self._vc[0] += 1  # increment_version
            elif kwargs:
                result = fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
            else:
                result = fn(*args) if first is None else fn(first, *args)
        finally:
            st.keys = state
        if node is not None:
            if self._data.dtype.kind in _FLOAT_KINDS:
                if self._base is None and self._meta is None:  # rebase_history of a plain tensor, inlined
                    self._grad_fn = node
                    self._requires_grad = True
                    self._output_nr = 0
                else:
                    rebase_history(self, node)
            if results:
                _save_results(results, node, (self,), values)
            node._values = values
        return result

    # Note [Bound kernels] for ``self.op_(other)`` with one or two positional Tensors (self
    # first) when nothing is recorded (grad mode off, or nothing requires grad); everything else
    # goes above. The built-in ADInplaceOrView kernel below is fused, as there.
    two_tensors = positions == (0, 1)

    def bind_keyset(bits: int) -> Callable[..., Any]:
        target = op.redispatch_target(bits & _AFTER_AUTOGRAD)
        fused = target is not None and target[0] is _builtin_adiov(op)  # See Note [Fused ADInplaceOrView]
        below = op.bound_redispatch(bits & (AFTER_ADINPLACEORVIEW if fused else _AFTER_AUTOGRAD))
        leaf = is_leaf_kernel(below)  # See Note [Leaf kernels] (operator.py)

        def bound_autograd_inplace_kernel(a: Any, b: Any = _NO_ARG, *rest: Any) -> Any:
            try:  # the thread-local state only when it decides something, as in bound1
                general = (a._requires_grad or (two_tensors and b._requires_grad) or (
                    a._base is not None and a._base._requires_grad)) and _pt.state.autograd[0]
            except AttributeError:  # not Tensors (See Note [No chained errors] in operator.py)
                general = True
            if general:
                return autograd_inplace_kernel(bits, a) if b is _NO_ARG else autograd_inplace_kernel(bits, a, b, *rest)
            if fused and a._vc is None and not _pt.state.autograd[1]:
                raise RuntimeError(INFERENCE_INPLACE_ERROR)
            if leaf:
                result = below(a) if b is _NO_ARG else below(a, b, *rest) if rest else below(a, b)
            else:
                result = call_below(below, a, *_present(b), *rest)
            if fused and a._vc is not None:
                a._vc[0] += 1  # increment_version
            return result

        bound_autograd_inplace_kernel.__qualname__ = f"{autograd_inplace_kernel.__qualname__}.bound"
        return bound_autograd_inplace_kernel

    autograd_inplace_kernel.__qualname__ = f"autograd_kernel[{op.qualname}]"
    if positions in ((0,), (0, 1)) and not by_name and mutated_pos == 0:
        autograd_inplace_kernel.bind_keyset = bind_keyset  # type: ignore[attr-defined]
        bind_keyset.kernel = autograd_inplace_kernel  # type: ignore[attr-defined]
    return autograd_inplace_kernel


_FORBIDDEN = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the {block} block (if you don't "
    "want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def _view_on_rebase_message(t: Any, creation_meta: int) -> str:
    """``handle_view_on_rebase``'s text for a view that must not be modified in place."""
    fn = t._grad_fn
    node = None if fn is None else _graph._strip_backward(fn.name())
    if creation_meta in (CREATION_NO_GRAD, CREATION_INFERENCE) or fn is None:
        if fn is not None:  # a view (with history) of a view made in that mode
            prefix = f"Output {t._output_nr} of {node} is a view of a view which was created in"
        else:
            prefix = "A view was created in"
        if creation_meta == CREATION_INFERENCE:
            msg = f"{prefix} inference mode and is being modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and is being modified inplace with grad mode enabled."
    else:
        msg = f"Output {t._output_nr} of {node} is a view and is being modified inplace."
    if creation_meta == CREATION_MULTI_OUTPUT_NODE:
        return msg + (" This view is the output of a function that returns multiple views. Such functions do "
                      "not allow the output views to be modified inplace. You should replace the inplace "
                      "operation by an out-of-place one.")
    if creation_meta == CREATION_NO_GRAD:
        return msg + _FORBIDDEN.format(block="no_grad")
    if creation_meta == CREATION_INFERENCE:
        return msg + _FORBIDDEN.format(block="inference_mode")
    return msg + (" This view was created inside a custom Function (or because an input was returned as-is) "
                  "and the autograd logic to handle view+inplace would override the custom backward "
                  "associated with the custom Function, leading to incorrect gradients. This behavior is "
                  "forbidden. You can fix this by cloning the output of the custom Function.")


def _check_inplace(t: Any) -> None:
    """VariableType's ``check_inplace`` (grad mode on and some input requires grad)."""
    base = t._base
    if base is not None and t._data.dtype.kind in _FLOAT_KINDS and t._vc is not None:
        meta = t._meta
        if type(meta) is ViewMeta and meta.creation_meta != CREATION_DEFAULT:
            # handle_view_on_rebase
            raise RuntimeError(_view_on_rebase_message(t, meta.creation_meta))
        if (t._requires_grad or base._requires_grad) and base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        if t._requires_grad and view_grad_fn(t) is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    elif t._grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_history(t: Any, node: Node) -> None:
    """Make ``node`` the new history of ``t`` (``torch::autograd::impl::rebase_history``).

    For a view, the base's ``grad_fn`` becomes ``CopySlices(base, view geometry, node)`` and the
    view's is regenerated (``AsStridedBackward0``) with an edge to it.
    """
    base = t._base
    if base is not None and t._vc is not None:
        cs = _new(CopySlices)
        _node_init(cs, (gradient_edge(base), *node.next_functions[1:]))
        cs._fn = node
        cs._base_geometry = _geometry(base)
        cs._view_geometry = _geometry(t)
        old, old_nr = base._grad_fn, base._output_nr
        base._grad_fn = cs
        base._requires_grad = True
        base._output_nr = 0
        _move_retains_grad_hook(base, old, old_nr, cs)
        _regenerate_view_grad_fn(t)
        return
    old, old_nr = t._grad_fn, t._output_nr
    t._grad_fn = node
    t._requires_grad = True
    t._output_nr = 0
    _move_retains_grad_hook(t, old, old_nr, node)


def _make_nondifferentiable_kernel(op: Any) -> Callable[..., Any]:
    redispatch = op.redispatch

    def autograd_nondifferentiable_kernel(bits: int, *args: Any, **kwargs: Any) -> Any:
        saved = enter_below()
        try:
            return redispatch(bits & _AFTER_AUTOGRAD, *args, **kwargs)
        finally:
            _pt.state.keys = saved

    # Note [Bound kernels] (operator.py): bound to a key set, the redispatch below is resolved
    # once, and a leaf kernel below runs without the TLS switch (Note [Leaf kernels])
    def bind_keyset(bits: int) -> Callable[..., Any]:
        below = op.bound_redispatch(bits & _AFTER_AUTOGRAD)
        if is_leaf_kernel(below):
            return below

        def bound_nondifferentiable_kernel(*args: Any) -> Any:
            return call_below(below, *args)

        bound_nondifferentiable_kernel.__qualname__ = f"{autograd_nondifferentiable_kernel.__qualname__}.bound"
        return bound_nondifferentiable_kernel

    autograd_nondifferentiable_kernel.__qualname__ = f"autograd_kernel[{op.qualname}]"
    autograd_nondifferentiable_kernel.bind_keyset = bind_keyset  # type: ignore[attr-defined]
    bind_keyset.kernel = autograd_nondifferentiable_kernel  # type: ignore[attr-defined]
    return autograd_nondifferentiable_kernel


def _make_out_kernel(op: Any) -> Callable[..., Any]:
    """``out=`` variants: torch refuses them when grad mode is on and an argument requires grad."""
    message = (f"{op.name.partition('::')[2]}(): functions with out=... arguments don't support automatic "
               "differentiation, but one of the arguments requires grad.")
    redispatch = op.redispatch

    def autograd_out_kernel(bits: int, *args: Any, **kwargs: Any) -> Any:
        if _pt.state.autograd[0]:
            for v in (*args, *kwargs.values()):
                if getattr(v, "_requires_grad", False):
                    raise RuntimeError(message)
        saved = enter_below()
        try:
            return redispatch(bits & _AFTER_AUTOGRAD, *args, **kwargs)
        finally:
            _pt.state.keys = saved

    autograd_out_kernel.__qualname__ = f"autograd_kernel[{op.qualname}]"
    return autograd_out_kernel


_derivatives: dict[str, Derivative] = {}


def register_derivative(lib: Any, qualname: str, node_name: str, inputs: tuple[str, ...],
                        formula: Any, *, mutates: str | None = None, view: bool = False,
                        differentiable_outputs: tuple[int, ...] | None = None,
                        order: tuple[int, ...] | None = None) -> Derivative:
    """Define ``qualname``'s derivative and register its kernel at the Autograd alias key."""
    op = _dispatcher.find_op(qualname)
    d = Derivative(op, node_name, inputs, formula, mutates=mutates,
                   differentiable_outputs=differentiable_outputs, order=order)
    _derivatives[qualname] = d
    if qualname == "aten::as_strided":
        _AS_STRIDED[:] = [d]
    lib.impl(qualname.partition("::")[2], make_autograd_kernel(d, view=view), "Autograd", with_keyset=True,
             _raw_keyset=True)
    return d


def register_nondifferentiable(lib: Any, qualname: str) -> None:
    """An op whose outputs never require grad: its Autograd kernel only redispatches."""
    op = _dispatcher.find_op(qualname)
    lib.impl(qualname.partition("::")[2], _make_nondifferentiable_kernel(op), "Autograd", with_keyset=True,
             _raw_keyset=True)


def register_out_kernel(lib: Any, qualname: str) -> None:
    """An ``out=`` overload: refuse autograd (torch's text), else redispatch."""
    op = _dispatcher.find_op(qualname)
    lib.impl(qualname.partition("::")[2], _make_out_kernel(op), "Autograd", with_keyset=True,
             _raw_keyset=True)


# --- as_strided backward (also the regenerated grad_fn of views) -----------------------------------
def _maybe_overlapping_memory(sizes: list[int], strides: list[int]) -> bool:
    """``_maybe_overlapping_memory`` (FunctionsManual.cpp): by increasing stride, each must pass the span below."""
    max_index_in_slice = 0
    for size, stride in sorted(zip(sizes, strides), key=lambda p: p[1]):
        if stride <= max_index_in_slice:
            return True
        max_index_in_slice += stride * (size - 1)
    return False


def _min_storage_size(sizes: list[int], strides: list[int], offset: int) -> int:
    storage_size = offset + 1
    for size, stride in zip(sizes, strides):
        if size == 0:
            return offset
        storage_size += (size - 1) * stride
    return storage_size


def as_strided_backward(grad: Any, input_geometry: tuple[Any, Any, int], size: Any, stride: Any,
                        storage_offset: int | None) -> Any:
    """The gradient of ``as_strided(input, size, stride, storage_offset)`` for ``input``.

    ``at::native::as_strided_backward``'s steps and calls: the output's size-1 dims squeezed and
    its stride-0 dims summed out of the gradient, which is then written into a zero storage
    (``grad.new_zeros``) through the output's geometry and read back through the input's. Where
    the output may overlap itself, the gradient is accumulated with ``index_add_`` at the output's
    positions in ``arange(base_size)``; where the input may, the storage is divided in place by
    each location's count of aliases (``index_add_`` of ones: NaN where no alias looks, unseen).
    """
    in_size, in_stride, in_offset = input_geometry
    size, stride = tuple(size), tuple(stride)
    if storage_offset is None:
        storage_offset = in_offset
    out_sizes: list[int] = []
    out_strides: list[int] = []
    for i in range(len(size) - 1, -1, -1):
        if size[i] == 0:
            return aten.zeros.default(list(in_size), dtype=grad.dtype, device=grad.device)
        if size[i] == 1:
            grad = aten.squeeze.dim(grad, i)
        elif stride[i] == 0:
            grad = aten.sum.dim_IntList(grad, [i], False)
        else:
            out_sizes.insert(0, size[i])
            out_strides.insert(0, stride[i])
    out_overlap = _maybe_overlapping_memory(out_sizes, out_strides)
    inp_sizes: list[int] = []
    inp_strides: list[int] = []
    for i in range(len(in_size) - 1, -1, -1):
        if in_size[i] == 0:
            return aten.zeros.default(list(in_size), dtype=grad.dtype, device=grad.device)
        if in_size[i] != 1:
            inp_sizes.insert(0, in_size[i])
            inp_strides.insert(0, in_stride[i])
    inp_overlap = _maybe_overlapping_memory(inp_sizes, inp_strides)
    shared_offset = min(in_offset, storage_offset)
    inp_offset, out_offset = in_offset - shared_offset, storage_offset - shared_offset
    base_size = max(_min_storage_size(inp_sizes, inp_strides, inp_offset),
                    _min_storage_size(out_sizes, out_strides, out_offset))
    storage = aten.new_zeros.default(grad, [base_size])
    indices = None
    if inp_overlap or out_overlap:
        indices = aten.arange.start(0, base_size, dtype=_I64, device=grad.device)  # flatten_full_indices
    if out_overlap:
        out_indices = aten.as_strided.default(indices, out_sizes, out_strides, out_offset)
        # storage.index_add_(0, out_indices.reshape(-1), grad.reshape(-1)): GCC evaluates the arguments right to left
        flat_grad = aten.reshape.default(grad, [-1])
        aten.index_add_.default(storage, 0, aten.reshape.default(out_indices, [-1]), flat_grad)
    else:
        aten.copy_.default(aten.as_strided.default(storage, out_sizes, out_strides, out_offset), grad)
    if inp_overlap:
        count = aten.zeros_like.default(storage, memory_format=_CONTIGUOUS_FORMAT)
        inp_indices = aten.reshape.default(aten.as_strided.default(indices, inp_sizes, inp_strides, inp_offset), [-1])
        one = aten.ones.default([1], dtype=grad.dtype, device=grad.device)
        ones = aten.expand.default(one, list(inp_indices.shape))
        aten.index_add_.default(count, 0, inp_indices, ones)
        aten.div_.Tensor(storage, count)
    return aten.as_strided.default(storage, list(in_size), list(in_stride), inp_offset)


# --- the autograd fallback's "warn" mode (autograd_not_implemented_fallback.cpp) ----------------
class WarnNotImplemented(Node):
    """The node the autograd fallback attaches: warns at backward and returns no gradients."""

    __slots__ = ("_op_name",)
    _qualified_name = "torch::autograd::WarnNotImplemented"
    _op_name: str

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        warnings.warn(_warn_text(self._op_name), UserWarning, stacklevel=2)
        return (None,) * len(_next_nodes(self))


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
    """The autograd fallback in mode "warn" (``basicAutogradNotImplementedFallback``): redispatch, attach the node."""
    inputs = _tensors_in(args) + _tensors_in(kwargs.values())
    any_rg = _pt.state.autograd[0] and any(t._requires_grad for t in inputs)
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
            out.register_hook(
                lambda g, name=op.qualname: warnings.warn(_warn_text(name), UserWarning, stacklevel=2) or g)
        elif not written:
            out._grad_fn = node
            out._requires_grad = True
            out._output_nr = i
    return result


_dispatcher.autograd_fallback_hook[:] = [_autograd_fallback_warn]
