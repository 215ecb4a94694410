"""The autograd graph and its engine: ``Node``, ``AccumulateGrad``, saved tensors, ``backward``/``grad``.

Mirrors ``torch/csrc/autograd/{function.h,engine.cpp,saved_variable.cpp}``. A node's
``next_functions`` are ``(node, input_nr)`` edges to the nodes that produced its inputs (or to
a leaf's ``AccumulateGrad``). The engine counts dependencies first, then runs nodes from a
ready heap ordered by sequence number (newest first, as torch's CPU ready queue does; an
AccumulateGrad has the largest, so a ready leaf accumulates first), so the order is
deterministic. With ``inputs`` (``autograd.grad``, ``backward(inputs=...)``) only the nodes on a
path to them run, and only their hooks fire (``init_to_execute``). Backward formulas call dispatched operators, so with
``create_graph=True`` they record a graph of their own and higher-order gradients work.
"""

from __future__ import annotations

import heapq
import itertools
import sys
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from numpy import empty as _np_empty
from numpy import ndarray as _ndarray

from .. import operator as _operator
from ..keyset import PYTHON_KEYSET as _PYTHON_KEYSET
from ..shapes import is_non_overlapping_and_dense
from ..tensor import _CPU_BITS, TENSOR_DTYPE
from ..tensor import Tensor as _Tensor
from ..tensor import detached_alias as _detached_alias  # t.detach() without dispatching
from ..tensor import wrap_cpu as _wrap_cpu
from ..tls import _DEFAULT_STATE as _DEFAULT_KEYS
from ..tls import per_thread as _pt

__all__ = ["AccumulateGrad", "Node", "NodeExtras", "SavedTensor", "backward", "flat_edges", "flat_nrs", "grad",
           "lone_edge", "next_nodes", "run_backward"]

_sequence = itertools.count()
# torch gives every AccumulateGrad the sequence number UINT64_MAX, so a leaf's gradient is
# accumulated as soon as it is ready, before any other ready node runs
_ACCUMULATE_GRAD_SEQ = sys.maxsize


class Node:
    """One backward function of the graph (``torch.autograd.graph.Node``).

    Subclasses implement ``apply(grads) -> tuple`` (one gradient per input edge; ``None`` where
    there is none). Its class name is what ``grad_fn`` prints: ``MulBackward0``, ``MyReLUBackward``.
    """

    __slots__ = ("_next", "_nrs", "_seq", "_extras", "__weakref__")
    _next: Any  # See Note [Flat edges]: tuple[Node | None, ...], or the node of the lone edge
    _nrs: tuple[int, ...]  # input numbers; or, for a lone edge, (its input index, input_nr, inputs)

    def __init__(self, next_functions: tuple[tuple[Node | None, int], ...] = ()) -> None:
        if next_functions:
            self.next_functions = next_functions
        else:  # no edges (yet: a custom Function's node gets its own in apply)
            self._next = self._nrs = ()
        self._seq = next(_sequence)
        self._extras: NodeExtras | None = None  # See Note [Node extras]

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """The node's edges, ``(node, input_nr)`` per input: where each input's gradient goes."""
        nxt = self._next
        if nxt.__class__ is tuple:
            return tuple(zip(nxt, self._nrs))
        index, input_nr, n = self._nrs
        return ((None, 0),) * index + ((nxt, input_nr),) + ((None, 0),) * (n - index - 1)

    @next_functions.setter
    def next_functions(self, edges: tuple[tuple[Node | None, int], ...]) -> None:
        if len(edges) == 1 and edges[0][0] is not None:  # one input with an edge (a Function's usual)
            nxt, nr = edges[0]
            self._next, self._nrs = nxt, lone_edge(0, nr, 1)
        else:
            self._next, self._nrs = flat_edges([e[0] for e in edges], [e[1] for e in edges])

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not implement apply()")

    # how many outputs the node's forward had: the length of its gradient buffer (nodes of
    # multi-output ops set their own)
    _num_outputs = 1

    # whether ``apply`` takes the engine's set of needed nodes (Note [Only the needed gradients])
    _takes_exec_info = False

    # torch's hand-written C++ nodes (torch/csrc/autograd/functions/) name themselves by their
    # qualified C++ name; generated and custom-Function nodes by their class name
    _qualified_name: str | None = None

    def name(self) -> str:
        """The node's name (``grad_fn.name()``): ``MulBackward0``, ``torch::autograd::CopySlices``."""
        return _node_class_name(type(self))

    def register_hook(self, hook: Callable[..., Any]) -> Any:
        """``hook(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        x = node_extras(self)
        if x.hooks is None:
            x.hooks = []
        x.hooks.append(hook)
        return _HookHandle(x.hooks, hook)

    def register_prehook(self, hook: Callable[..., Any]) -> Any:
        """``hook(grad_outputs)`` runs before this node (after tensor hooks); it may return new ones."""
        x = node_extras(self)
        if x.pre_hooks is None:
            x.pre_hooks = []
        x.pre_hooks.append(hook)
        return _HookHandle(x.pre_hooks, hook)

    def _register_output_pre_hook(self, output_nr: int, hook: Callable[..., Any]) -> Any:
        """A hook on the gradient of one output, before this node runs (tensor hooks use this)."""
        x = node_extras(self)
        if x.tensor_pre_hooks is None:
            x.tensor_pre_hooks = {}
        hooks = x.tensor_pre_hooks.setdefault(output_nr, [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def _register_retains_grad_hook(self, output_nr: int, hook: Callable[..., Any]) -> None:
        """``retain_grad``'s hook: it runs after every tensor hook of that output, as in torch."""
        x = node_extras(self)
        if x.retains_grad_hooks is None:
            x.retains_grad_hooks = {}
        x.retains_grad_hooks[output_nr] = hook

    def _release_variables(self) -> None:
        """Free saved tensors after a backward pass without retain_graph (nodes that save override it)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


# Note [Node extras]: what few nodes have (hooks of any kind, the trace hop that made the node)
# lives in one ``NodeExtras`` object, made on first use; every other node holds None there. A
# node is written once per recorded op and read once per engine step, so each slot it does not
# carry is a write saved at recording and a read saved in the engine (``node._extras is None``
# stands for the four hook checks torch's engine makes).
class NodeExtras:
    """The hooks of one node, and the dispatch-trace hop that created it."""

    __slots__ = ("tensor_pre_hooks", "retains_grad_hooks", "pre_hooks", "hooks", "hop")

    def __init__(self) -> None:
        # tensor hooks of the node's outputs, by output_nr (torch's tensor_pre_hooks)
        self.tensor_pre_hooks: dict[int, list[Callable[..., Any]]] | None = None
        self.retains_grad_hooks: dict[int, Callable[..., Any]] | None = None
        self.pre_hooks: list[Callable[..., Any]] | None = None  # Node.register_prehook
        self.hooks: list[Callable[..., Any]] | None = None  # Node.register_hook
        self.hop: Any = None  # the dispatch-trace hop that created this node, when tracing


def node_extras(node: Node) -> NodeExtras:
    """The node's extras, made on first use (Note [Node extras])."""
    x = node._extras
    if x is None:
        x = node._extras = NodeExtras()
    return x


# Note [Flat edges]: torch's ``next_functions`` is a tuple of ``(node, input_nr)`` pairs. Stored
# that way, a node keeps one tuple per edge besides its own tuple of them, and each is an object
# the garbage collector walks on every full collection for as long as the graph lives (Note
# [Shared input metadata]). So a node keeps the nodes in one tuple (``_next``) and the input
# numbers in another (``_nrs``), which holds only ints: the collector stops tracking it, and the
# usual all-zero ones are shared. A node whose inputs have one edge between them (a chain's:
# ``x * 1.0001`` has none to the wrapped number) keeps that edge's node itself, no tuple, and in
# ``_nrs`` the edge's place: ``(input index, input_nr, number of inputs)``; the node is then the
# only object the collector sees of it. ``next_functions`` rebuilds torch's pairs, ``next_nodes``
# the tuple of nodes; the engine reads the slots.
_ZERO_NRS = tuple((0,) * n for n in range(9))  # the shared all-zero _nrs, by length


def next_nodes(node: Node) -> tuple[Node | None, ...]:
    """The nodes of ``node``'s edges, one per input (Note [Flat edges])."""
    nxt = node._next
    if nxt.__class__ is tuple:
        return nxt
    index, _, n = node._nrs
    return (None,) * index + (nxt,) + (None,) * (n - index - 1)


_LONE_ZERO = tuple(tuple((i, 0, n) for i in range(n)) for n in range(9))  # shared lone-edge places


def lone_edge(index: int, input_nr: int, n: int) -> tuple[int, int, int]:
    """``_nrs`` of a node whose only edge is input ``index`` of ``n`` (Note [Flat edges])."""
    return _LONE_ZERO[n][index] if input_nr == 0 and n < len(_LONE_ZERO) else (index, input_nr, n)


def flat_edges(nodes: Sequence[Node | None], nrs: Sequence[int]) -> tuple[Any, tuple[int, ...]]:
    """``(_next, _nrs)`` of a node whose edges are ``zip(nodes, nrs)`` (Note [Flat edges])."""
    lone = -1
    for i, nxt in enumerate(nodes):
        if nxt is not None:
            if lone >= 0:
                return tuple(nodes), flat_nrs(tuple(nrs))
            lone = i
    if lone < 0:
        return tuple(nodes), flat_nrs(tuple(nrs))
    return nodes[lone], lone_edge(lone, nrs[lone], len(nodes))


def flat_nrs(nrs: tuple[int, ...]) -> tuple[int, ...]:
    """``nrs``, or the shared tuple of as many zeros when it is all zeros (Note [Flat edges])."""
    if len(nrs) < len(_ZERO_NRS) and not any(nrs):
        return _ZERO_NRS[len(nrs)]
    return nrs


def _node_class_name(cls: type[Node]) -> str:
    """What ``name()`` answers for nodes of class ``cls``."""
    return cls._qualified_name or cls.__name__


class _HookHandle:
    """Removes a hook (``torch.utils.hooks.RemovableHandle``)."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds incoming gradients into ``leaf.grad``.

    The leaf's tensor hooks are this node's pre-hooks for output 0 (``_register_output_pre_hook``),
    so the engine runs them before it captures or accumulates, as torch does.
    """

    __slots__ = ("variable", "meta", "one_meta")
    _qualified_name = "torch::autograd::AccumulateGrad"

    def __init__(self, variable: Any) -> None:
        super().__init__(())
        self._seq = _ACCUMULATE_GRAD_SEQ
        self.variable = variable
        # the leaf's metadata as it is now, for every node that will take the leaf as an input:
        # ``(shape, dtype)`` for built-in nodes, ``((shape, dtype, device),)`` for custom
        # Functions' (Note [Leaf metadata])
        data = variable._data
        self.meta = (data.shape, data.dtype)
        self.one_meta = ((tuple(data.shape), variable.dtype, variable._device),)

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        grad = grads[0]
        leaf = self.variable
        if grad is None or not leaf._requires_grad:
            return ()
        want = leaf._meta.grad_dtype  # a leaf with an accumulator has its AutogradMeta
        if want is not TENSOR_DTYPE and want is not None and grad.dtype != want:
            grad = grad.to(want)  # a grad_dtype of its own (Tensor.grad_dtype)
        create_graph = _pt.state.autograd[0]  # the engine runs with grad mode = create_graph
        if leaf._grad is None:
            # See Note [Stealing the gradient]. With create_graph the copy is differentiable.
            if create_graph or not _obeys_layout_contract(grad, leaf):
                leaf._grad = _clone_obey_contract(grad, leaf)
            elif _getrefcount(grad) <= _UNSHARED:
                leaf._grad = _steal(grad)
            else:
                leaf._grad = _copy_held(grad, leaf)
        elif create_graph:
            leaf._grad = leaf._grad + grad  # out of place, so it stays differentiable
        else:
            leaf._grad.add_(grad)
        return ()


# Note [Leaf metadata]: torch records a leaf's metadata once, when its AccumulateGrad is made
# (``input_metadata(0)``), and validates every gradient that reaches the leaf against it. A node
# that takes a leaf as an input reads it from the accumulator: no shape tuple made and compared
# per use (~80 ns a leaf input), and the same answer as torch after ``x.data = other`` gives the
# leaf another shape while its accumulator lives ("returned an invalid gradient ... expected shape
# compatible with [3]"); a new dtype or device drops the accumulator (``set_data``, and
# ``Module._apply``: ``tensor.retire_accumulator``), so the next one records the new metadata.
# torch's AutogradMeta holds its accumulator weakly: once no graph holds it, the next use makes a
# new one, with the new shape. dispatchcore's holds it strongly (no weak reference to follow per
# use), so ``.data =`` with a new shape hands the accumulator over to a weak reference
# (``outdated_accumulator``), which ``grad_accumulator`` follows while it lives.


# Note [Stealing the gradient]: torch's AccumulateGrad::accumulateGrad takes a leaf's first
# gradient over (``variable.grad = new_grad.detach()``, one dispatched detach) when nothing else
# holds it (``use_count() <= num_expected_refs``) and it is laid out as the leaf; any other it
# copies into the leaf's layout (``clone_obey_contract``: new_empty_strided, then copy_). The
# count that decides is the reference count, here CPython's: the engine holds a gradient in the
# buffer list it pops and the tuple it passes to ``apply``; ``_UNSHARED`` is what such a gradient
# counts inside ``apply``, measured once on a stand-in held the same way. A gradient also held by
# a user variable, a hook, or the buffer of another edge (``a + b`` sends one tensor to both
# leaves) counts more, and is copied, as in torch: ``new_empty_strided``, then ``copy_``, which
# leaves the copy at version 1. When nobody can see the calls (``_unseen``: no dispatch mode, no
# trace, a plain tensor, the default key sets) ``_copy_held`` makes the same tensor with one
# ``clone`` and sets that version: two keyword factory calls cost dispatchcore ~15 us, more than
# G16's whole custom-op step. Likewise ``_steal`` makes the detached alias without dispatching
# ``detach`` (~1 us), and ``_ones_like`` the implicit seed without ``ones_like`` (~8 us). An
# unshared plain gradient with no history, no autograd metadata and no weak reference already is
# what that alias would be (same data, key set, version counter), and nobody can tell one object
# from the other: ``_steal`` keeps it (~0.2 us, a tensor made and freed less).
_getrefcount = sys.getrefcount
_getweakrefcount = weakref.getweakrefcount


def _unseen(t: Any) -> bool:
    """Whether no one could see an operator called on ``t`` (Note [Stealing the gradient]).

    No dispatch mode, no trace, no Python-key tensor, and this thread's key sets the default ones
    (no guard includes a key whose kernel or fallback would run first).
    """
    st = _pt.state
    return st.modes is None and st.keys is _DEFAULT_KEYS and _operator.slot_wrapper is None \
        and not t._key_bits & _PYTHON_KEYS


def _steal(grad: Any) -> Any:
    """``grad.detach()``, dispatched when anyone can see it (Note [Stealing the gradient])."""
    if _unseen(grad):
        if grad.__class__ is _Tensor and grad._grad_fn is None and grad._base is None and grad._meta is None \
                and not grad._requires_grad and grad._grad is None and grad._output_nr == 0 \
                and not _getweakrefcount(grad):
            return grad  # already what detach would make of it, and nobody else can see it
        return _detached_alias(grad)  # the tensor detach's kernels make, a dispatch less
    return grad.detach()


def _copy_held(grad: Any, leaf: Any) -> Any:
    """A held gradient already laid out as ``leaf``, copied as torch copies it (Note [Stealing the gradient])."""
    if _unseen(grad):
        copy = grad.clone()  # the tensor new_empty_strided + copy_ make, values, strides and version
        if copy._vc is not None:
            copy._vc[0] += 1
        return copy
    return _clone_obey_contract(grad, leaf)


def _refs_in_apply(grads: tuple[Any, ...]) -> int:
    grad = grads[0]  # as AccumulateGrad.apply holds it
    return _getrefcount(grad)


def _engine_held_refs() -> int:
    buffer = [object()]  # the engine's buffer list ...
    return _refs_in_apply(tuple(buffer))  # ... and the tuple it passes to apply


_UNSHARED = _engine_held_refs()


def _obeys_layout_contract(grad: Any, leaf: Any) -> bool:
    """``utils::obeys_layout_contract``: ``grad`` strided as a dense ``leaf`` (size-1 dims: any nonzero stride)."""
    g, data = grad._data, leaf._data
    if g.__class__ is _ndarray and data.__class__ is _ndarray and g.flags.c_contiguous \
            and data.flags.c_contiguous and 0 not in g.strides:  # the usual case, decided by two flags
        return True
    strides = leaf.stride()
    if not is_non_overlapping_and_dense(leaf.shape, strides):
        return grad.is_contiguous()
    return all((gs != 0) if n == 1 else (gs == s)
               for n, gs, s in zip(grad.shape, grad.stride(), strides))


def _clone_obey_contract(grad: Any, leaf: Any) -> Any:
    """``utils::clone_obey_contract``: a copy of ``grad`` in a dense ``leaf``'s layout, else contiguous."""
    from ..layouts import contiguous_format, strided
    from ..ops import aten

    strides = leaf.stride()
    if not is_non_overlapping_and_dense(leaf.shape, strides):
        return aten.clone.default(grad, memory_format=contiguous_format)
    # variable.options(): dtype, layout and device, as a mode sees them
    buf = aten.new_empty_strided.default(grad, list(leaf.shape), list(strides), dtype=leaf.dtype, layout=strided,
                                         device=leaf.device)
    return buf.copy_(grad)


def grad_accumulator(leaf: Any) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, created once and cached on the tensor."""
    meta = leaf._autograd_meta()
    acc = meta.grad_accumulator
    if acc is None:
        outdated = getattr(meta, "outdated_accumulator", None)  # set only by ``.data =``
        if outdated is not None:
            acc = outdated()
            if acc is not None:  # a graph still holds it: torch's weak pointer still finds it
                return acc  # (Note [Leaf metadata])
            meta.outdated_accumulator = None
        acc = meta.grad_accumulator = AccumulateGrad(leaf)
    return acc


def gradient_edge(t: Any) -> tuple[Node | None, int]:
    """The edge a new node gets to ``t``: its grad_fn, its accumulator, or nothing."""
    if t._base is not None:  # a view: its grad_fn may need regenerating (kernels.view_grad_fn)
        fn = _view_grad_fn(t)
        if fn is not None:
            return (fn, t._output_nr)
        if t._requires_grad and not t._base._requires_grad:
            return (grad_accumulator(t), 0)
        return (None, 0)  # a view made under no_grad of a tensor that requires grad
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def _view_grad_fn(t: Any) -> Any:
    """A view's current grad_fn (``VariableHooks::grad_fn``).

    dispatchcore.autograd.kernels replaces this with the version that regenerates it after an
    in-place change of its base.
    """
    return t._grad_fn


def current_grad_fn(t: Any) -> Any:
    """``t.grad_fn`` as torch computes it (regenerated for a view whose base changed in place)."""
    return t._grad_fn if t._base is None else _view_grad_fn(t)


class SavedTensor:
    """A tensor saved for backward, checked against its version when unpacked (``SavedVariable``).

    ``_output`` is ``(node class, output_nr)`` for a saved output of the node that saves it (unpack
    reconnects it to that node), None for anything else: an input is three slot writes
    (``save_input`` writes exactly those on the recording hot path).
    """

    __slots__ = ("_tensor", "_version", "_output")

    def __init__(self, t: Any, is_output: bool = False, node: Node | None = None) -> None:
        if t is None:
            self._tensor = None
            return
        if t._vc is None:
            raise RuntimeError(_INFERENCE_SAVED)
        self._version = t._vc[0]
        # An output keeps no grad_fn (that would be a cycle); unpack gives it back. The alias is
        # made without dispatching (torch's SavedVariable keeps ``tensor_data()``), except where
        # torch's does dispatch: See Note [Detach through Python].
        if not is_output or node is None:
            self._tensor = t
            self._output = None
            return
        if t._key_bits & _PYTHON_KEYS or _pt.state.modes is not None:
            self._tensor = _python_detach(t)
        else:
            self._tensor = _detached_alias(t)
        self._output = (type(node), t._output_nr)

    def free(self) -> None:
        """Drop the saved tensor after backward (unless retain_graph); unpacking then raises."""
        if self._tensor is not None:
            self._tensor = _FREED_MARK

    def unpack(self, node: Node | None = None) -> Any:
        t = self._tensor
        if t is None:
            return None
        if t is _FREED_MARK:
            raise RuntimeError(_FREED)
        if t._vc[0] != self._version:
            raise RuntimeError(_modified_message(t, self, node))
        if self._output is not None and node is not None:
            # reconnect the saved output to the node that produced it (SavedVariable::unpack),
            # so create_graph differentiates through it and ``ctx.saved_tensors`` shows the grad_fn
            out = _python_detach(t) if t._key_bits & _PYTHON_KEYS or _pt.state.modes is not None \
                else _detached_alias(t)
            out._grad_fn = node
            out._requires_grad = True
            out._output_nr = self._output[1]
            return out
        return t


_new = object.__new__


# Note [Detach through Python]: torch's TensorImpl::shallow_copy_and_detach, which SavedVariable
# runs to save an output (``tensor_data()``) and to unpack it (``make_variable``), hands the work
# to the Python interpreter as ``aten.detach.default`` when the tensor carries the Python keys or
# a dispatch mode is active: so a mode or a subclass sees a ``detach`` after each op that saves its
# output (relu, exp, log_softmax, ...) and one before each formula that reads it back. Without a
# mode, nothing is dispatched, in torch and here (``detached_alias``).
_PYTHON_KEYS = _PYTHON_KEYSET
_DETACH: list[Any] = []  # the Python key's handler bound to aten.detach.default, once looked up


def _python_detach(t: Any) -> Any:
    """``aten.detach.default(t)`` handed straight to the Python key (the mode, else the subclass)."""
    if not _DETACH:
        from ..modes import bind_python_fallback
        from ..ops import aten

        _DETACH.append(bind_python_fallback(aten.detach.default))
    return _DETACH[0](t._key_bits | _PYTHON_KEYS, t)


_FREED_MARK = object()
_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def save_input(t: Any) -> SavedTensor:
    """``SavedTensor(t)`` of a tensor that is not an output of the saving node, without the call's branches."""
    vc = t._vc
    if vc is None:
        raise RuntimeError(_INFERENCE_SAVED)
    saved = _new(SavedTensor)
    saved._tensor = t
    saved._version = vc[0]
    saved._output = None
    return saved
_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")

_LEGACY_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
                 "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def _strip_backward(name: str) -> str:
    base = name.rstrip("0123456789")
    return base[:-len("Backward")] if base.endswith("Backward") else base


def _modified_message(t: Any, saved: SavedTensor, node: Node | None) -> str:
    kind = _LEGACY_NAMES.get(t.dtype.name, "Tensor")
    if saved._output is not None:
        node_class, output_nr = saved._output
        producer = f", which is output {output_nr} of {_strip_backward(_node_class_name(node_class))},"
    elif current_grad_fn(t) is not None:
        producer = f", which is output {t._output_nr} of {_strip_backward(current_grad_fn(t).name())},"
    else:
        producer = ""
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [dispatchcore.{kind} {list(t.shape)}]{producer} is at version {t._vc[0]}; "
        f"expected version {saved._version} instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


# --- the engine ---------------------------------------------------------------------------------
def _dependencies(roots: Sequence[Node]) -> dict[Node, int]:
    """How many edges of the graph reach each node (``compute_dependencies``); roots included.

    A node enters the dict when it is first reached, so "not in the dict yet" is "not visited
    yet": one dict lookup per edge, no separate visited set.
    """
    deps = {roots[0]: 0} if len(roots) == 1 else dict.fromkeys(roots, 0)  # fromkeys: ~150 ns of setup
    stack = list(deps)
    # A node with no edges (``_next == ()``: an accumulator) is counted but never pushed, as
    # walking it finds nothing; a lone edge (Note [Flat edges]) is read without a loop. Both
    # halve the cost of a 1-op graph's count (570 -> 340 ns).
    while stack:
        edges = stack.pop()._next
        if edges.__class__ is not tuple:  # a lone edge: the node itself
            count = deps.get(edges)
            if count is None:
                if edges is not None:
                    deps[edges] = 1
                    if edges._next:
                        stack.append(edges)
            else:
                deps[edges] = count + 1
            continue
        for nxt in edges:
            if nxt is not None:
                count = deps.get(nxt)
                if count is None:
                    deps[nxt] = 1
                    if nxt._next:
                        stack.append(nxt)
                else:
                    deps[nxt] = count + 1
    return deps


def _needed(roots: Sequence[Node], targets: set[Node], captured: set[Node]) -> set[Node]:
    """The nodes that must run when only some inputs are asked for (``init_to_execute``).

    A node runs when it is a ``targets`` node (``backward(inputs=...)``: their gradients are
    accumulated) or when one of its next functions runs or is ``captured`` (``autograd.grad``).
    """
    memo: dict[Node, bool] = {}
    stack: list[tuple[Node, bool]] = [(r, False) for r in roots]
    while stack:
        node, done = stack.pop()
        if done:
            memo[node] = node in targets or any(
                memo.get(n, False) or n in captured for n in next_nodes(node) if n is not None)
            continue
        if node in memo:
            continue
        memo[node] = False
        stack.append((node, True))
        stack.extend((n, False) for n in next_nodes(node) if n is not None and n not in memo)
    return {n for n, needed in memo.items() if needed}


def _call_tensor_pre_hooks(node: Node, grads: list[Any]) -> None:
    """Tensor hooks of the node's outputs, then ``retain_grad`` hooks (``call_tensor_pre_hooks``)."""
    x = node._extras
    if x is None:
        return
    pre = x.tensor_pre_hooks
    if pre:
        for i, hooks in pre.items():
            for hook in tuple(hooks):
                if i < len(grads) and grads[i] is not None:
                    new = hook(grads[i])
                    if new is not None:
                        grads[i] = new
    retains = x.retains_grad_hooks
    if retains:
        for i, hook in retains.items():
            if i < len(grads) and grads[i] is not None:
                hook(grads[i])


# While a dispatch trace is possible, dispatchcore.trace sets this to its frame recorder: the engine
# then opens a ``[backward]`` frame around the pass and around each node it runs, so the ops a
# formula calls nest under the node in the trace. None otherwise (nothing to do per node).
trace_frame: Any = None


def run_backward(roots: Sequence[tuple[Node, int, Any]], *, retain_graph: bool, create_graph: bool,
                 inputs: Sequence[tuple[Node | None, int]] | None = None,
                 accumulate_grad: bool = True) -> list[Any]:
    """Run the graph from ``(node, output_nr, grad)`` roots (``Engine::execute``).

    ``inputs`` (edges) restricts the run to the nodes on a path to them. With ``accumulate_grad``
    (``backward(inputs=...)``) the input nodes themselves run, so leaves accumulate ``.grad``;
    without it (``autograd.grad``) the gradient arriving at each input edge is captured and
    returned, one per edge, and nothing is accumulated. Nodes run from a ready heap, newest
    sequence number first; a ready AccumulateGrad runs before anything else.
    """
    # one root is the usual case (``loss.backward()``): no comprehension, no dedup (~0.5 us)
    root_nodes = (roots[0][0],) if len(roots) == 1 else [n for n, _, _ in roots]
    deps = _dependencies(root_nodes)
    captures: dict[Node, list[tuple[int, int]]] | None = None
    # with ``inputs``: the nodes that may receive a gradient (those that run, and captured ones)
    keep: set[Node] | None = None
    needed: AbstractSet[Node] = _NO_NODES
    captured: list[Any] = []
    if inputs is not None:
        input_nodes = {n for n, _ in inputs if n is not None}
        if accumulate_grad:
            needed = keep = _needed(root_nodes, input_nodes, set())
        else:
            captures = {}
            for slot, (n, i) in enumerate(inputs):
                if n is not None:
                    captures.setdefault(n, []).append((i, slot))
            captured = [None] * len(inputs)
            needed = _needed(root_nodes, set(), input_nodes)
            keep = needed | input_nodes
    buffers: dict[Node, list[Any]] = {}
    # See Note [The ready queue]: entries carry the node's gradient buffer
    accumulators: deque[tuple[Node, list[Any]]] = deque()
    ready: list[tuple[int, Node, list[Any]]] = []
    if len(roots) == 1:  # one root: its buffer is made at once, never stored (no cycle reaches it)
        node, output_nr, g = roots[0]
        size = node._num_outputs
        if output_nr == 0 and size == 1:
            grads = [g]
        else:
            grads = [None] * max(size, output_nr + 1)
            grads[output_nr] = g
        starts: Any = ((node, grads),) if keep is None or node in keep else ()
    else:
        for node, output_nr, g in roots:
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * max(node._num_outputs, output_nr + 1)
            if g is not None:
                current = buf[output_nr]
                buf[output_nr] = g if current is None else current + g
        starts = [(node, buffers.pop(node)) for node in dict.fromkeys(root_nodes)
                  if deps[node] == 0 and (keep is None or node in keep)]
    for node, grads in starts:
        if node._seq == _ACCUMULATE_GRAD_SEQ:
            accumulators.append((node, grads))
        else:
            ready.append((-node._seq, node, grads))
    heapq.heapify(ready)
    st = _pt.state
    saved_state = st.autograd
    st.autograd = (create_graph, saved_state[1])
    push, pop = _heappush, _heappop
    frame = trace_frame
    engine_frame = frame("backward()" if accumulate_grad else "grad()") if frame is not None else None
    if engine_frame is not None:
        engine_frame.__enter__()
    try:
        while True:
            if accumulators:
                node, grads = accumulators.popleft()
            elif ready:
                _, node, grads = pop(ready)
            else:
                break
            if keep is not None:
                is_needed = node in needed
                if captures:
                    slots = captures.get(node)
                    if slots is not None:
                        # torch quirk: tensor hooks run before the capture only when the node
                        # itself will not run (a node that runs calls them in call_function)
                        if not is_needed:
                            _call_tensor_pre_hooks(node, grads)
                        for i, slot in slots:
                            captured[slot] = grads[i] if i < len(grads) else None
                if not is_needed:
                    continue
            extras = node._extras
            if extras is not None:
                _call_tensor_pre_hooks(node, grads)
                if extras.pre_hooks:
                    for hook in tuple(extras.pre_hooks):
                        new = hook(tuple(grads))
                        if new is not None:
                            grads = list(new)
            grad_outputs = tuple(grads)
            if keep is not None and node._takes_exec_info:  # See Note [Only the needed gradients]
                outputs = _apply_needed(node, grad_outputs, keep, frame)
            elif frame is None:
                outputs = node.apply(grad_outputs)
            else:
                with frame(node.name()):
                    outputs = node.apply(grad_outputs)
            extras = node._extras  # a pre-hook may have registered a hook
            if extras is not None and extras.hooks:
                for hook in tuple(extras.hooks):
                    new = hook(outputs, grad_outputs)
                    if new is not None:
                        outputs = tuple(new)
            if not retain_graph:
                node._release_variables()
            nxt = node._next
            edges: Any
            if nxt.__class__ is tuple:
                edges = zip(nxt, node._nrs, outputs)
            else:  # a lone edge: Note [Flat edges]
                index, input_nr, _ = node._nrs
                edges = ((nxt, input_nr, outputs[index]),) if index < len(outputs) else ()
            for nxt, input_nr, g in edges:
                if nxt is None:
                    continue
                remaining = deps[nxt] - 1
                deps[nxt] = remaining
                if keep is not None and nxt not in keep:
                    continue  # not on a path to the requested inputs
                if remaining:  # more gradients to come: this one waits in nxt's buffer
                    if g is not None:
                        buf = buffers.get(nxt)
                        if buf is None:
                            buf = buffers[nxt] = [None] * max(nxt._num_outputs, input_nr + 1)
                            buf[input_nr] = g
                        else:
                            _accumulate(buf, input_nr, g)
                    continue
                buf = buffers.pop(nxt, None)  # nxt is ready: its buffer goes into the queue with it
                if buf is None:  # its only gradient (a chain's case): no buffer was ever stored
                    size = nxt._num_outputs
                    if input_nr == 0 and size == 1:
                        buf = [g]
                    else:
                        buf = [None] * max(size, input_nr + 1)
                        buf[input_nr] = g
                elif g is not None:
                    _accumulate(buf, input_nr, g)
                seq = nxt._seq
                if seq == _ACCUMULATE_GRAD_SEQ:
                    accumulators.append((nxt, buf))
                else:
                    push(ready, (-seq, nxt, buf))
            outputs = edges = g = None  # type: ignore[assignment]  # only the buffers hold gradients now:
            # Note [Stealing the gradient]
    finally:
        st.autograd = saved_state
        if engine_frame is not None:
            engine_frame.__exit__()
    return captured


_heappush, _heappop = heapq.heappush, heapq.heappop
_NO_NODES: frozenset[Any] = frozenset()  # ``needed`` when every node runs (never consulted then)


def _accumulate(buf: list[Any], input_nr: int, g: Any) -> None:
    """Add ``g`` into slot ``input_nr`` of a node's gradient buffer (``InputBuffer::add``)."""
    if input_nr >= len(buf):
        buf.extend([None] * (input_nr + 1 - len(buf)))
    current = buf[input_nr]
    buf[input_nr] = g if current is None else current + g


# Note [The ready queue]: torch's CPU ready queue pops the ready node with the highest sequence
# number; every AccumulateGrad has the largest one (UINT64_MAX), and equal numbers leave in
# arrival order. So a ready accumulator always runs first, accumulators in arrival order, and
# other nodes newest first. The engine keeps exactly that as two queues: a FIFO of ready
# accumulators, and a heap of ``(-seq, node)`` for the rest, whose sequence numbers are unique,
# so the heap never compares two nodes and needs no tie-breaking counter. A node's gradient
# buffer travels in its queue entry: a node that gets one gradient (every node of a chain) has
# its buffer made when it becomes ready, never stored in the pending-buffer dict.


# Note [Only the needed gradients]: with ``inputs`` (``autograd.grad``, ``backward(inputs=...)``)
# torch's engine marks the nodes that must run (exec_info), and a generated node computes the
# gradient of an input only when its edge leads to one (``task_should_compute_output``): in
# ``autograd.grad((a * b).sum(), [a])`` MulBackward0 runs one ``mul``, not two. Built-in nodes take
# the set of those nodes as a second argument; without ``inputs`` every edge counts, as before.
def _apply_needed(node: Node, grads: tuple[Any, ...], keep: set[Node], frame: Any) -> tuple[Any, ...]:
    if frame is None:
        return node.apply(grads, keep)  # type: ignore[call-arg]
    with frame(node.name()):
        return node.apply(grads, keep)  # type: ignore[call-arg]


def _make_grads(outputs: Sequence[Any], grad_outputs: Sequence[Any] | None) -> list[Any]:
    """``torch.autograd._make_grads``: check given gradients, make ones for scalar outputs."""
    return [_make_grad(out, None if grad_outputs is None or i >= len(grad_outputs) else grad_outputs[i], i)
            for i, out in enumerate(outputs)]


def _make_grad(out: Any, g: Any, i: int) -> Any:
    """The gradient of output ``i`` given ``g`` (None: ones for a scalar), checked as ``_make_grads`` does."""
    if g is None:
        if out._requires_grad:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = _ones_like(out)  # torch.ones_like(out, memory_format=preserve_format)
    elif hasattr(g, "_key_bits"):
        gdata, odata = g._data, out._data  # backend data: numpy's shape and dtype attributes
        if gdata.shape != odata.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and output[{i}] "
                f"has a shape of {out.shape!r}.")
        if (odata.dtype.kind == "c") != (gdata.dtype.kind == "c"):
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                f"output[{i}] has a dtype of {out.dtype}.")
    else:
        raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return g


def _ones_like(out: Any) -> Any:
    """The implicit seed: ``aten::ones_like`` (its default memory format is ``preserve_format``)."""
    global _ONES_LIKE
    if _ONES_LIKE is None:  # late: the operator registry imports this module
        from ..layouts import preserve_format
        from ..ops import aten

        # one assignment of the whole pair: threads racing here each store an equal one
        _ONES_LIKE = (aten.ones_like.default, {"pin_memory": False, "memory_format": preserve_format})
    ones_like, options = _ONES_LIKE
    if _unseen(out):
        data = out._data
        if data.__class__ is _ndarray and out._key_bits == _CPU_BITS and data.flags.c_contiguous:
            # the tensor ones_like's kernels make of a dense CPU tensor (empty_like, fill_: version 0),
            # made at once where nobody can see the calls, as Note [Stealing the gradient] does
            ones = _np_empty(data.shape, data.dtype)
            ones.fill(1)  # np.ones is this in Python: ~0.5 us more
            return _wrap_cpu(ones)
        return ones_like(out)  # the same tensor; the keywords are only seen by whoever looks
    # torch's Python-level torch.ones_like(out, memory_format=preserve_format) dispatches these
    return ones_like(out, **options)


_ONES_LIKE: tuple[Any, dict[str, Any]] | None = None


def _roots(outputs: Sequence[Any], grads: Sequence[Any]) -> list[tuple[Node, int, Any]]:
    return [_root(out, g, i) for i, (out, g) in enumerate(zip(outputs, grads))]


def _root(out: Any, g: Any, i: int) -> tuple[Node, int, Any]:
    """The engine root of output ``i``: ``(its grad_fn or its accumulator, output_nr, g)``."""
    fn = out._grad_fn if out._base is None else _view_grad_fn(out)  # current_grad_fn, inline
    if fn is not None:
        return (fn, out._output_nr, g)
    if out._requires_grad:
        return (grad_accumulator(out), 0, g)
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _input_edges(inputs: Sequence[Any]) -> list[tuple[Node | None, int]]:
    edges = []
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        fn = current_grad_fn(t)
        if fn is not None:
            edges.append((fn, t._output_nr))
        else:  # torch only looks the accumulator up: a leaf the graph never used has none
            meta = t._meta
            edges.append((meta.grad_accumulator if meta is not None else None, 0))
    return edges


# Note [One-tensor backward]: ``loss.backward()`` (one tensor, no ``inputs``) is the call users
# make; it checks its one gradient (``_make_grad``) and finds its one root (``_root``) without the
# lists the general path builds, and the engine makes that root's gradient buffer at once, never
# storing it in the pending-buffer dict (a single root has no other edge that could reach it).
# The same checks run in the same order, so errors, gradients and the trace are the list call's.
def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves (``torch.autograd.backward``).

    With ``inputs``, only those tensors get ``.grad`` (a non-leaf among them is made to
    ``retain_grad()``, as torch does), and only the part of the graph leading to them runs.

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None and not isinstance(tensors, _SEQUENCES) and not isinstance(grad_tensors, _SEQUENCES):
        # Note [One-tensor backward]: ``loss.backward()``, the usual call, makes no lists
        run_backward((_root(tensors, _make_grad(tensors, grad_tensors, 0), 0),),
                     retain_graph=retain_graph, create_graph=create_graph)
        return
    outputs = _as_list(tensors)
    grads = _make_grads(outputs, _as_list(grad_tensors) if grad_tensors is not None else None)
    edges = None
    if inputs is not None:
        inputs = list(inputs.values()) if type(inputs) is dict else _as_list(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            t.retain_grad()  # a no-op for leaves; raises for a tensor that does not require grad
        edges = _input_edges(inputs)
    run_backward(_roots(outputs, grads), retain_graph=retain_graph, create_graph=create_graph,
                 inputs=edges, accumulate_grad=True)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> Any:
    """Gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad`` (``torch.autograd.grad``).

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor(3.0, requires_grad=True)
        >>> dc.autograd.grad(x * x, x)
        (tensor(6.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise NotImplementedError("dispatchcore: autograd.grad(is_grads_batched=True) needs vmap, "
                                  "which dispatchcore does not model.")
    outputs = _as_list(outputs)
    keys = list(inputs) if type(inputs) is dict else None
    inputs = list(inputs.values()) if keys is not None else _as_list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _make_grads(outputs, _as_list(grad_outputs) if grad_outputs is not None else None)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outputs, grads)  # first, as torch does: a leaf output gets its accumulator here
    edges = _input_edges(inputs)
    captured = run_backward(roots, retain_graph=retain_graph,
                            create_graph=create_graph, inputs=edges, accumulate_grad=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from ..factories import zeros_like

                g = zeros_like(t).requires_grad_(create_graph)
        result.append(g)
    if keys is not None:
        return dict(zip(keys, result))
    return tuple(result)


_SEQUENCES = (list, tuple)


def _as_list(x: Any) -> list[Any]:
    if isinstance(x, _SEQUENCES):
        return list(x)
    return [x]
