"""The autograd graph and its engine: ``Node``, ``AccumulateGrad``, saved tensors, ``backward``/``grad``.

Mirrors ``torch/csrc/autograd/{function.h,engine.cpp,saved_variable.cpp}``. A node's
``next_functions`` are ``(node, input_nr)`` edges to the nodes that produced its inputs (or to
a leaf's ``AccumulateGrad``). The engine counts dependencies first, then runs nodes from a
ready heap ordered by sequence number (newest first, as torch's CPU ready queue does), so the
order is deterministic. Backward formulas call dispatched operators, so with
``create_graph=True`` they record a graph of their own and higher-order gradients work.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from .grad_mode import _AUTOGRAD_STATE, _autograd_state_set

__all__ = ["AccumulateGrad", "Node", "SavedTensor", "backward", "grad", "run_backward"]

_sequence = itertools.count()


class Node:
    """One backward function of the graph (``torch.autograd.graph.Node``).

    Subclasses implement ``apply(grads) -> tuple`` (one gradient per input edge; ``None`` where
    there is none). Its class name is what ``grad_fn`` prints: ``MulBackward0``, ``MyReLUBackward``.
    """

    __slots__ = ("next_functions", "_seq", "_saved", "_pre_hooks", "_hooks", "_released",
                 "_hop", "__weakref__")

    def __init__(self, next_functions: tuple[tuple[Node | None, int], ...] = ()) -> None:
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._saved: tuple[SavedTensor, ...] = ()
        self._pre_hooks: dict[int, list[Callable[..., Any]]] | None = None
        self._hooks: list[Callable[..., Any]] | None = None
        self._released = False
        self._hop: Any = None  # the dispatch-trace hop that created this node, when tracing

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not implement apply()")

    def name(self) -> str:
        """The node's name (``grad_fn.name()``)."""
        return type(self).__name__

    def register_hook(self, hook: Callable[..., Any]) -> Any:
        """``hook(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _HookHandle(self._hooks, hook)

    def _register_output_pre_hook(self, output_nr: int, hook: Callable[..., Any]) -> Any:
        """A hook on the gradient of one output, before this node runs (tensor hooks use this)."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def _release_variables(self) -> None:
        """Free saved tensors after a backward pass without retain_graph."""
        self._released = True
        for saved in self._saved:
            saved.free()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


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
    """The sink of a leaf that requires grad: adds incoming gradients into ``leaf.grad``."""

    __slots__ = ("variable", "_tensor_hooks")

    def __init__(self, variable: Any) -> None:
        super().__init__(())
        self.variable = variable
        self._tensor_hooks: list[Callable[..., Any]] = []

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        grad = grads[0]
        if grad is None:
            return ()
        for hook in self._tensor_hooks:
            new = hook(grad)
            if new is not None:
                grad = new
        leaf = self.variable
        create_graph = _AUTOGRAD_STATE.get()[0]  # the engine runs with grad mode = create_graph
        if leaf._grad is None:
            # a buffer of our own (the incoming grad may be shared with other edges); with
            # create_graph it stays attached to the graph, as torch's does
            leaf._grad = grad if create_graph else grad.clone()
        elif create_graph:
            leaf._grad = leaf._grad + grad  # out of place, so it stays differentiable
        else:
            leaf._grad.add_(grad)
        return ()


def grad_accumulator(leaf: Any) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, created once and cached on the tensor."""
    meta = leaf._autograd_meta()
    acc = meta.grad_accumulator
    if acc is None:
        acc = meta.grad_accumulator = AccumulateGrad(leaf)
    return acc


def gradient_edge(t: Any) -> tuple[Node | None, int]:
    """The edge a new node gets to ``t``: its grad_fn, its accumulator, or nothing."""
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


class SavedTensor:
    """A tensor saved for backward, checked against its version when unpacked (``SavedVariable``)."""

    __slots__ = ("_tensor", "_version", "_is_output", "_node_name", "_output_nr")

    def __init__(self, t: Any, is_output: bool = False, node: Node | None = None) -> None:
        if t is None:
            self._tensor = None
            return
        if t._vc is None:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created "
                "in inference mode in computation tracked by autograd. To work around this, you can "
                "make a clone to get a normal tensor and use it in autograd, or use "
                "`torch.no_grad()` instead of `torch.inference_mode()`.")
        self._version = t._vc[0]
        self._is_output = is_output
        self._output_nr = t._output_nr
        # An output keeps no grad_fn (that would be a cycle); unpack gives it back.
        self._tensor = t.detach() if is_output else t
        self._node_name = type(node).__name__ if (is_output and node is not None) else None

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
        if self._is_output and node is not None and _AUTOGRAD_STATE.get()[0]:
            # create_graph: reconnect the saved output to the node that produced it
            out = t.detach()
            out._grad_fn = node
            out._requires_grad = True
            out._output_nr = self._output_nr
            return out
        return t


_FREED_MARK = object()
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
    if saved._node_name is not None:
        producer = f", which is output {saved._output_nr} of {_strip_backward(saved._node_name)},"
    elif t._grad_fn is not None:
        producer = f", which is output {t._output_nr} of {_strip_backward(type(t._grad_fn).__name__)},"
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
    deps: dict[Node, int] = {}
    seen = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                stack.append(nxt)
    return deps


def _needed(roots: Sequence[Node], targets: set[Node]) -> set[Node]:
    """Nodes on some path from a root to a target (autograd.grad runs only those)."""
    memo: dict[Node, bool] = {}
    order: list[Node] = []
    stack: list[tuple[Node, bool]] = [(r, False) for r in roots]
    while stack:
        node, done = stack.pop()
        if done:
            memo[node] = node in targets or any(
                memo.get(n, False) for n, _ in node.next_functions if n is not None)
            continue
        if node in memo:
            continue
        memo[node] = False
        order.append(node)
        stack.append((node, True))
        stack.extend((n, False) for n, _ in node.next_functions if n is not None and n not in memo)
    return {n for n, needed in memo.items() if needed}


def _accumulate(buffer: list[Any], index: int, grad: Any) -> None:
    if grad is None:
        return
    current = buffer[index]
    buffer[index] = grad if current is None else current + grad


def run_backward(roots: Sequence[tuple[Node, int, Any]], *, retain_graph: bool, create_graph: bool,
                 capture: dict[tuple[Node, int], int] | None = None,
                 accumulate_leaves: bool = True) -> list[Any]:
    """Run the graph from ``(node, output_nr, grad)`` roots; returns grads captured at ``capture``.

    ``capture`` maps ``(node, input_nr)`` edges to result slots (for ``autograd.grad``); when it is
    given and ``accumulate_leaves`` is false, AccumulateGrad nodes do not run.
    """
    root_nodes = [n for n, _, _ in roots]
    deps = _dependencies(root_nodes)
    needed = _needed(root_nodes, {n for n, _ in capture}) if capture and not accumulate_leaves else None
    captured: list[Any] = [None] * (len(set(capture.values())) if capture else 0)
    buffers: dict[Node, list[Any]] = {}
    ready: list[tuple[int, int, Node]] = []
    tie = itertools.count()
    for node, output_nr, g in roots:
        buf = buffers.setdefault(node, [None] * max(_num_outputs(node), output_nr + 1))
        _accumulate(buf, output_nr, g)
    for node in dict.fromkeys(root_nodes):
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, next(tie), node))
    saved_state = _AUTOGRAD_STATE.get()
    _autograd_state_set((create_graph, saved_state[1]))
    try:
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(node, [None])
            if node._pre_hooks:
                for i, hooks in node._pre_hooks.items():
                    for hook in hooks:
                        if i < len(grads) and grads[i] is not None:
                            new = hook(grads[i])
                            if new is not None:
                                grads[i] = new
            if capture:
                for i, g in enumerate(grads):
                    slot = capture.get((node, i))
                    if slot is not None and g is not None:
                        captured[slot] = g if captured[slot] is None else captured[slot] + g
            run = needed is None or node in needed
            if isinstance(node, AccumulateGrad) and not accumulate_leaves:
                run = False
            outputs: tuple[Any, ...] = ()
            if run:
                outputs = node.apply(tuple(grads))
                if node._hooks:
                    for hook in node._hooks:
                        new = hook(outputs, tuple(grads))
                        if new is not None:
                            outputs = tuple(new)
                if not retain_graph:
                    node._release_variables()
            for (nxt, input_nr), g in itertools.zip_longest(node.next_functions, outputs):
                if nxt is None:
                    continue
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * max(_num_outputs(nxt), input_nr + 1)
                    elif input_nr >= len(buf):
                        buf.extend([None] * (input_nr + 1 - len(buf)))
                    _accumulate(buf, input_nr, g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt._seq, next(tie), nxt))
    finally:
        _autograd_state_set(saved_state)
    return captured


def _num_outputs(node: Node) -> int:
    return getattr(node, "_num_outputs", 1)


def _make_grads(outputs: Sequence[Any], grad_outputs: Sequence[Any] | None) -> list[Any]:
    from ..factories import ones_like

    grads = []
    for i, out in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (out.dtype.is_floating_point or out.dtype.is_complex):
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = ones_like(out)
        grads.append(g)
    return grads


def _roots(outputs: Sequence[Any], grads: Sequence[Any]) -> list[tuple[Node, int, Any]]:
    roots = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if out._grad_fn is not None:
            roots.append((out._grad_fn, out._output_nr, g))
        elif out._requires_grad:
            roots.append((grad_accumulator(out), 0, g))
        else:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    return roots


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves (``torch.autograd.backward``).

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """
    outputs = _as_list(tensors)
    grads = _make_grads(outputs, _as_list(grad_tensors) if grad_tensors is not None else None)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_list(inputs)
        capture = {gradient_edge(t): i for i, t in enumerate(inputs)}
        captured = run_backward(_roots(outputs, grads), retain_graph=retain_graph,
                                create_graph=create_graph, capture=capture, accumulate_leaves=False)
        for t, g in zip(inputs, captured):
            if g is not None:
                AccumulateGrad(t).apply((g,)) if t._grad_fn is None else _accumulate_non_leaf(t, g)
        return
    run_backward(_roots(outputs, grads), retain_graph=retain_graph, create_graph=create_graph)


def _accumulate_non_leaf(t: Any, g: Any) -> None:
    t._grad = g if t._grad is None else t._grad + g


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad`` (``torch.autograd.grad``).

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor(3.0, requires_grad=True)
        >>> dc.autograd.grad(x * x, x)
        (tensor(6.),)
    """
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, _as_list(grad_outputs) if grad_outputs is not None else None)
    if retain_graph is None:
        retain_graph = create_graph
    capture = {}
    for i, t in enumerate(inputs):
        capture.setdefault(gradient_edge(t), i)
    captured = run_backward(_roots(outputs, grads), retain_graph=retain_graph,
                            create_graph=create_graph, capture=capture, accumulate_leaves=False)
    result = []
    for i, t in enumerate(inputs):
        g = captured[capture[gradient_edge(t)]]
        if g is None and not allow_unused:
            raise RuntimeError(
                "One of the differentiated Tensors appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return tuple(result)


def _as_list(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]
