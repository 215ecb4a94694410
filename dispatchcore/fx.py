"""Graph capture: ``make_fx`` records the aten calls that reach the ``Python`` key into a ``Graph``.

Mirrors ``torch/fx/experimental/proxy_tensor.py`` (``make_fx``, ``ProxyTorchDispatchMode``), the
parts of ``torch/fx/graph.py`` and ``torch/fx/node.py`` a traced graph needs (``Graph``, ``Node``,
node naming, ``python_code``, the ``_PyTreeCodeGen`` of nested inputs), ``torch/fx/graph_module.py``
(``GraphModule``), the parts of ``torch/utils/_pytree.py`` that flatten nested inputs
(``tree_flatten``, ``TreeSpec``), and ``torch/_decomp`` for ``core_aten_decompositions``.
Invariant: a graph holds exactly the operators a ``DispatchMode`` saw, in call order (a
literal's ``lift_fresh`` as ``lift_fresh_copy``; a read of a value known to be constant is
computed, not recorded), each node's arguments being the nodes of the tensors it was called with
(tensors are matched by identity), so running the graph on the example inputs computes what the
traced function computed.

Example:
    >>> import dispatchcore as dc
    >>> from dispatchcore.fx import make_fx
    >>> gm = make_fx(lambda x, y: (x * y).sum())(dc.ones(2), dc.ones(2))
    >>> print(gm.code.strip())
    def forward(self, x_1, y_1):
        mul = dispatchcore.ops.aten.mul.Tensor(x_1, y_1);  x_1 = y_1 = None
        sum_1 = dispatchcore.ops.aten.sum.default(mul);  mul = None
        return sum_1
    >>> gm(dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0]))
    tensor(11.)
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import operator
import re
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import dispatchcore as _dc

from . import fake_tensor as _fake_tensor
from .decompositions import core_aten_decompositions
from .fake_tensor import FakeTensor, FakeTensorMode
from .keys import DispatchKey
from .keyset import full_after_bits, key_bits
from .modes import DTYPE_ABBRS, DispatchMode, disable_current_modes
from .ops import aten
from .schema import NO_DEFAULT
from .tensor import Tensor, detached_alias

__all__ = [
    "Graph",
    "GraphModule",
    "Node",
    "TensorMetadata",
    "TreeSpec",
    "core_aten_decompositions",
    "make_fx",
    "tree_flatten",
    "tree_unflatten",
]

# --- naming (torch/fx/graph.py: _Namespace) -----------------------------------------------------
# A name may not shadow a Python keyword or builtin (``sum`` -> ``sum_1``), nor the names the
# generated code itself uses (``inf``/``nan``, as torch registers them as custom builtins).
_ILLEGAL_NAMES = set(keyword.kwlist) | set(vars(builtins)) | {"inf", "nan"}
_NAME = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")  # base name, numeric suffix
_NOT_IDENTIFIER = re.compile(r"[^0-9a-zA-Z_]+")
_CAMEL = re.compile(r"(?<=[a-z])([A-Z])")


class _Namespace:
    """Unique node names, as ``torch.fx.graph._Namespace.create_name`` makes them.

    A candidate keeps its name while it is free and legal; otherwise it gets the next free
    numeric suffix of its base (``mul``, ``mul_1``, ``mul_2``; ``sum`` starts at ``sum_1``).
    """

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._base_count: dict[str, int] = {}

    def create_name(self, candidate: str) -> str:
        match = _NAME.match(candidate)
        if match is None:
            candidate = _NOT_IDENTIFIER.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _NAME.match(candidate)
            assert match is not None  # an identifier by construction
        base, suffix = match.group(1, 2)
        if suffix is None or candidate in self._used:
            num = self._base_count.get(base, 0)
            if candidate in _ILLEGAL_NAMES:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(suffix)
        while candidate in self._used:
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        return candidate


def _target_name(target: Any) -> str:
    """The name candidate of a node calling ``target``: the operator's base name, snake_cased."""
    if target is operator.getitem:
        return "getitem"
    name = str(target).split(".")[1]  # "aten.add_.Tensor" -> "add_" (torch: overloadpacket.__name__)
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    return _CAMEL.sub(r"_\1", name).lower()


# --- pytree (torch/utils/_pytree.py) ------------------------------------------------------------
class TreeSpec:
    """The structure of a nest of tuples, lists, dicts and named tuples (``torch.utils._pytree.TreeSpec``).

    ``type`` is the container's class (None for a leaf), ``context`` a dict's keys or a named
    tuple's class (else None), ``children_specs`` the specs of its items. Everything that is not
    one of these containers is a leaf, ``None`` included; it prints as ``*``.

    Example:
        >>> leaves, spec = tree_flatten(([1, 2], {"k": 3}))
        >>> leaves, spec
        ([1, 2, 3], TreeSpec(tuple, None, [TreeSpec(list, None, [*,
            *]),
          TreeSpec(dict, ['k'], [*])]))
        >>> tree_unflatten(["a", "b", "c"], spec)
        (['a', 'b'], {'k': 'c'})
    """

    def __init__(self, type: type | None, context: Any, children_specs: list[TreeSpec]) -> None:  # noqa: A002
        self.type = type
        self.context = context
        self.children_specs = children_specs
        self.num_leaves: int = 1 if type is None else sum(c.num_leaves for c in children_specs)

    def is_leaf(self) -> bool:
        """Whether this is a leaf's spec."""
        return self.type is None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TreeSpec) and (self.type, self.context, self.children_specs)
                == (other.type, other.context, other.children_specs))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        context = self.context if not isinstance(self.context, type) else repr(self.context)
        children = ""
        if self.children_specs:
            indent += 2
            children = self.children_specs[0].__repr__(indent) + ("," if len(self.children_specs) > 1 else "")
            children += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children_specs[1:])
        return f"TreeSpec({self.type.__name__}, {context}, [{children}])"


_LEAF = TreeSpec(None, None, [])


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its structure (``torch.utils._pytree.tree_flatten``).

    Tuples, lists, dicts (in insertion order) and named tuples are containers; anything else is
    a leaf. Example: see ``TreeSpec``.
    """
    leaves: list[Any] = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree: Any, leaves: list[Any]) -> TreeSpec:
    kind = type(tree)
    if kind is list or kind is tuple:
        return TreeSpec(kind, None, [_flatten_into(v, leaves) for v in tree])
    if kind is dict:
        return TreeSpec(dict, list(tree), [_flatten_into(v, leaves) for v in tree.values()])
    if _is_namedtuple(tree):
        return TreeSpec(kind, kind, [_flatten_into(v, leaves) for v in tree])
    leaves.append(tree)
    return _LEAF


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """The nest ``spec`` describes, with ``leaves`` in its leaves' places (``torch.utils._pytree.tree_unflatten``)."""
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                         f"to a pytree that holds {spec.num_leaves} items ({spec}).")
    return _build(iter(leaves), spec)


def _build(leaves: Iterator[Any], spec: TreeSpec) -> Any:
    if spec.type is None:
        return next(leaves)
    items = [_build(leaves, c) for c in spec.children_specs]
    if spec.type is dict:
        return dict(zip(spec.context, items))
    if spec.context is not None:  # a named tuple
        return spec.type(*items)
    return spec.type(items)


def _flatten_by_spec(tree: Any, spec: TreeSpec) -> list[Any]:
    """``tree``'s leaves read the way ``spec`` says (``torch.fx._pytree.tree_flatten_spec``)."""
    if spec.type is None:
        return [tree]
    if spec.type is dict:
        children = [tree[k] for k in spec.context]
    else:
        children = [tree[i] for i in range(len(spec.children_specs))]
    return [leaf for child, c in zip(children, spec.children_specs) for leaf in _flatten_by_spec(child, c)]


class _PyTreeInfo(NamedTuple):
    """The inputs of a graph traced with nested inputs: ``forward``'s parameters and the structures."""

    orig_args: list[str]
    in_spec: TreeSpec
    out_spec: TreeSpec | None

    def args_kwargs_count(self) -> int | None:
        """How many parameters torch's code reads as positional when it takes the inputs for ``(args, kwargs)``.

        torch's ``_PyTreeCodeGen`` takes an input structure of exactly two arguments, a tuple
        then a dict, for the ``(args, kwargs)`` of a call: its code passes ``([first count
        parameters], {key: next parameter, ...})`` to ``tree_flatten_spec``. None otherwise.
        """
        children = self.in_spec.children_specs
        if len(children) == 2 and children[0].type is tuple and children[1].type is dict:
            return len(children[0].children_specs)
        return None

    def flatten_call(self) -> str:
        """The argument list of the generated ``fx_pytree.tree_flatten_spec(...)`` call."""
        count = self.args_kwargs_count()
        if count is None:
            return f"[{', '.join(self.orig_args)}], self._in_spec"
        kwargs = ", ".join(f"'{k}':{v}" for k, v in zip(self.in_spec.children_specs[1].context,
                                                          self.orig_args[count:]))
        return f"([{', '.join(self.orig_args[:count])}], {{{kwargs}}}), self._in_spec"

    def inputs(self, args: tuple[Any, ...]) -> Any:
        """What the generated code flattens, given ``forward``'s arguments."""
        count = self.args_kwargs_count()
        if count is None:
            return list(args)
        return (list(args[:count]), dict(zip(self.in_spec.children_specs[1].context, args[count:])))


# --- Node and Graph (torch/fx/node.py, torch/fx/graph.py) ----------------------------------------
class TensorMetadata(NamedTuple):
    """A tensor's shape, dtype, strides and ``requires_grad`` (``torch.fx.passes.shape_prop``)."""

    shape: tuple[int, ...]
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]


class Node:
    """One operation of a ``Graph``: ``placeholder``, ``get_attr``, ``call_function`` or ``output``.

    ``target`` is the ``OperatorHandle`` called (``operator.getitem`` for one result of a
    multi-output operator), the input's name for a placeholder, the attribute's name for a
    ``get_attr``. ``args``/``kwargs`` hold other nodes where the call took a traced tensor and
    plain values elsewhere. ``users`` are the nodes that take this one as an argument, in graph
    order; ``meta["val"]`` is a ``FakeTensor`` with the value's shape, dtype, strides and device
    (``meta["tensor_meta"]`` the same as a ``TensorMetadata``), or the value itself if it is not
    a tensor.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.fx import make_fx
        >>> gm = make_fx(lambda x: x.relu())(dc.ones(2, 3))
        >>> relu = gm.graph.nodes[1]
        >>> relu.op, str(relu.target), relu.args, list(relu.users)
        ('call_function', 'aten.relu.default', (x_1,), [output])
        >>> relu.meta["val"]
        FakeTensor(..., size=(2, 3))
    """

    def __init__(self, graph: Graph, name: str, op: str, target: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.users: dict[Node, None] = {}  # an ordered set, as in torch
        self.meta: dict[str, Any] = {}
        for node in self.all_input_nodes:
            node.users[self] = None

    @property
    def all_input_nodes(self) -> list[Node]:
        """The nodes among ``args`` and ``kwargs``, each once, in order of appearance."""
        return list(dict.fromkeys(_nodes_in((self.args, self.kwargs))))

    def format_node(self) -> str:
        """The node as ``print(graph)`` shows it (``torch.fx.Node.format_node``)."""
        if self.op == "output":
            return f"return {_code_repr(self.args[0])}"
        head = f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={_target_str(self.target)}]"
        if self.op in ("placeholder", "get_attr"):
            return head
        kwargs = "{" + ", ".join(f"{k}: {_graph_repr(v)}" for k, v in self.kwargs.items()) + "}"
        return f"{head}(args = {_graph_repr(self.args)}, kwargs = {kwargs})"

    def __repr__(self) -> str:
        return self.name


def _nodes_in(value: Any) -> Iterator[Node]:
    from .subclass import tree_leaves

    return tree_leaves(value, Node)


def _target_str(target: Any) -> str:
    if target is operator.getitem:
        return "operator.getitem"
    return target if isinstance(target, str) else f"dispatchcore.ops.{target}"


def _graph_repr(value: Any) -> str:
    """An argument as ``format_node`` prints it: nodes as ``%name``, other values with ``str``."""
    if isinstance(value, Node):
        return f"%{value.name}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_graph_repr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_graph_repr(v) for v in value) + "]"
    return str(value)


def _code_repr(value: Any) -> str:
    """An argument as Python source: nodes by name, containers spelled out, values by ``repr``."""
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        return "(" + ", ".join(_code_repr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_code_repr(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_code_repr(v)}" for k, v in value.items()) + "}"
    return repr(value)


class Graph:
    """The nodes of a traced function, in execution order (``torch.fx.Graph``).

    ``print(graph)`` lists the nodes as ``torch.fx.Graph.__str__`` does; ``python_code()`` is the
    body of ``GraphModule.code``.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.fx import make_fx
        >>> print(make_fx(lambda x: x * 2)(dc.ones(2)).graph)
        graph():
            %x_1 : [num_users=1] = placeholder[target=x_1]
            %mul : [num_users=1] = call_function[target=dispatchcore.ops.aten.mul.Tensor](args = (%x_1, 2), kwargs = {})
            return mul
    """

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self._namespace = _Namespace()
        # set when the inputs were nested (torch's _PyTreeCodeGen): forward takes the structures,
        # flattens them into the placeholders, and rebuilds the result from the flat output list
        self._pytree_info: _PyTreeInfo | None = None

    def create_node(self, op: str, target: Any, args: tuple[Any, ...] = (),
                    kwargs: dict[str, Any] | None = None, name: str | None = None) -> Node:
        """Append a node; its name is ``name`` (or the target's name) made unique."""
        candidate = name if name is not None else _target_name(target)
        node = Node(self, self._namespace.create_name(candidate), op, target, args, kwargs or {})
        self.nodes.append(node)
        return node

    def placeholder(self, name: str) -> Node:
        """An input of the graph."""
        return self.create_node("placeholder", name, name=name)

    def get_attr(self, qualname: str) -> Node:
        """A read of the module attribute ``qualname`` (a tensor constant)."""
        return self.create_node("get_attr", qualname, name=qualname)

    def call_function(self, target: Any, args: tuple[Any, ...] = (),
                      kwargs: dict[str, Any] | None = None) -> Node:
        """A call of ``target`` (an ``OperatorHandle`` or ``operator.getitem``)."""
        return self.create_node("call_function", target, args, kwargs)

    def output(self, result: Any) -> Node:
        """The graph's result: ``result`` is a node, a container of nodes, or a constant."""
        return self.create_node("output", "output", (result,), name="output")

    def python_code(self) -> str:
        """The ``forward`` function the graph stands for, as ``torch.fx.Graph.python_code`` writes it.

        One line per node; after a value's last use the line frees it (``x_1 = None``), and a
        call whose result nobody uses frees its own result, as torch's generated code does.
        """
        params, body = self._forward(annotate=False)
        lines = "\n".join(f"    {line}" if line else "" for line in body)
        return f"\n\n\ndef forward({', '.join(params)}):\n{lines}\n    "

    def _forward(self, annotate: bool) -> tuple[list[str], list[str]]:
        """The parameters and body lines of ``forward``; ``annotate`` adds ``: "f32[2, 3]"``."""
        # walking backwards, the first use of a node met is its last use in execution order
        last_use: dict[Node, Node] = {}
        frees: dict[Node, list[Node]] = {}
        for node in reversed(self.nodes):
            for used in node.all_input_nodes:
                if used not in last_use:
                    last_use[used] = node
                    frees.setdefault(node, []).append(used)
        params, body = ["self"], []
        info = self._pytree_info
        if info is not None:  # torch's _PyTreeCodeGen.gen_fn_def and gen_var_bindings
            params += info.orig_args
            placeholders = [n for n in self.nodes if n.op == "placeholder"]
            annotated = [n.name + _annotation(n) for n in placeholders if annotate and _annotation(n)]
            if annotated:  # `a: "f32[2]", b: ... = call()` is no Python: the annotations go first
                body += ["".join(f"{a}; " for a in annotated), ""]
            if placeholders:
                body.append(f"{', '.join(n.name for n in placeholders)}, = "
                            f"fx_pytree.tree_flatten_spec({info.flatten_call()})")
        for node in self.nodes:
            name = node.name + (_annotation(node) if annotate else "")
            if node.op == "placeholder":
                if info is None:
                    params.append(name)
                continue
            if node.op == "output":
                result = _code_repr(node.args[0])
                body.append(f"return pytree.tree_unflatten({result}, self._out_spec)" if info is not None
                            else f"return {result}")
                continue
            if node.op == "get_attr":
                line = f"{name} = self.{node.target}"
            elif node.target is operator.getitem:
                line = f"{name} = {_code_repr(node.args[0])}[{node.args[1]!r}]"
            else:
                call_args = [_code_repr(a) for a in node.args]
                call_args += [f"{k} = {_code_repr(v)}" for k, v in node.kwargs.items()]
                line = f"{name} = {_target_str(node.target)}({', '.join(call_args)})"
            freed = frees.get(node, []) + ([node] if not node.users else [])
            if freed:
                line += ";  " + " = ".join([n.name for n in freed] + ["None"])
            body.append(line)
        return params, body or ["pass"]

    def __str__(self) -> str:
        return "\n".join(["graph():"] + [f"    {n.format_node()}" for n in self.nodes])


def _annotation(node: Node) -> str:
    """``: "f32[2, 3]"`` for a node whose value is a tensor, else nothing."""
    meta = node.meta.get("tensor_meta")
    if meta is None:
        return ""
    dtype = DTYPE_ABBRS.get(meta.dtype.name, meta.dtype.name)
    return f': "{dtype}[{", ".join(map(str, meta.shape))}]"'


# --- GraphModule (torch/fx/graph_module.py) ------------------------------------------------------
class GraphModule:
    """A callable over a ``Graph``: runs its nodes in order on new inputs (``torch.fx.GraphModule``).

    Tensor constants the graph reads (``get_attr`` nodes) are attributes of the module
    (``gm._tensor_constant0``). ``code`` is the graph as Python source, ``print_readable()`` the
    same with each value's dtype and shape.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.fx import make_fx
        >>> def f(x):
        ...     return x.sin() + 1
        >>> gm = make_fx(f)(dc.zeros(2))
        >>> gm(dc.zeros(2))
        tensor([1., 1.])
        >>> _ = gm.print_readable()
        class f(dispatchcore.fx.GraphModule):
            def forward(self, x_1: "f32[2]"):
                sin: "f32[2]" = dispatchcore.ops.aten.sin.default(x_1);  x_1 = None
                add: "f32[2]" = dispatchcore.ops.aten.add.Tensor(sin, 1);  sin = None
                return add
    """

    def __init__(self, attributes: dict[str, Any], graph: Graph, class_name: str = "GraphModule") -> None:
        for name, value in attributes.items():
            setattr(self, name, value)
        self.graph = graph
        self.class_name = class_name
        info = graph._pytree_info
        if info is not None:  # torch keeps them on the module, for the generated code to read
            self._in_spec = info.in_spec
            self._out_spec = info.out_spec

    @property
    def code(self) -> str:
        """The graph as the source of a ``forward(self, ...)`` method (``GraphModule.code``)."""
        return self.graph.python_code()

    def print_readable(self, print_output: bool = True) -> str:
        """The code as a class, each value annotated with its dtype and shape (``"f32[2, 3]"``)."""
        params, body = self.graph._forward(annotate=True)
        lines = [f"class {self.class_name}(dispatchcore.fx.GraphModule):",
                 f"    def forward({', '.join(params)}):"] + [f"        {line}" if line else "" for line in body]
        text = "\n".join(lines) + "\n"
        if print_output:
            print(text, end="")
        return text

    def __call__(self, *args: Any) -> Any:
        """Run the graph's nodes in order on ``args`` (one value per placeholder).

        A graph traced from nested inputs takes them nested, as ``f`` did: their leaves are
        the placeholders' values, and the result is rebuilt in ``f``'s structure.
        """
        info = self.graph._pytree_info
        if info is not None:
            names = info.orig_args
            if len(args) > len(names):
                raise TypeError(f"forward() takes {len(names) + 1} positional arguments but "
                                f"{len(args) + 1} were given")
            if len(args) < len(names):
                missing = [repr(n) for n in names[len(args):]]
                listed = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
                raise TypeError(f"forward() missing {len(missing)} required positional "
                                f"argument{'s' if len(missing) > 1 else ''}: {listed}")
            flat = self._run(_flatten_by_spec(info.inputs(args), info.in_spec))
            if info.out_spec is None:
                return flat
            return tree_unflatten(list(flat) if isinstance(flat, (list, tuple)) else [flat], info.out_spec)
        return self._run(args)

    def _run(self, args: Any) -> Any:
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(args) != len(placeholders):
            raise TypeError(f"forward() takes {len(placeholders) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        env: dict[Node, Any] = {}
        inputs = iter(args)

        def load(value: Any) -> Any:
            if isinstance(value, Node):
                return env[value]
            if isinstance(value, (tuple, list)):
                return type(value)(load(v) for v in value)
            if isinstance(value, dict):
                return {k: load(v) for k, v in value.items()}
            return value

        for node in self.graph.nodes:
            if node.op == "placeholder":
                env[node] = next(inputs)
            elif node.op == "get_attr":
                env[node] = getattr(self, node.target)
            elif node.op == "call_function":
                env[node] = node.target(*load(node.args), **load(node.kwargs))
            else:
                return load(node.args[0])
        return None

    def __repr__(self) -> str:
        return f"{self.class_name}()"


# --- make_fx (torch/fx/experimental/proxy_tensor.py) ---------------------------------------------
# Operators whose result is a tensor's data (torch's Tag.data_dependent_output, for those defined
# here): with a traced input the value would be burnt into the graph, so tracing refuses; on
# constants only, the value is computed and nothing is recorded, as torch does.
_DATA_DEPENDENT = frozenset({"aten._local_scalar_dense.default", "aten.item.default"})
# A traced tensor with at most this many elements, known to be a constant, keeps its value
CONSTANT_NUMEL_LIMIT = 1
# Tag.nondeterministic_seeded: a random result is never a constant (the fake mode's list)
_NONDETERMINISTIC_SEEDED = _fake_tensor._NONDETERMINISTIC_SEEDED


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


def _metadata(node: Node, value: Any) -> None:
    """Fill ``node.meta``: for a tensor, a data-free twin (a fake tensor itself, detached, when tracing fake)."""
    if _is_tensor(value):
        shape, stride = tuple(value.shape), tuple(value.stride())
        if isinstance(value, FakeTensor):  # torch's snapshot_fake: the value without its autograd history
            node.meta["val"] = detached_alias(value)
        else:  # torch's extract_val: a fake tensor like it, made in a fake mode of its own
            with FakeTensorMode():
                node.meta["val"] = _dc.empty_strided(shape, stride, dtype=value.dtype, device=value.device)
        node.meta["tensor_meta"] = TensorMetadata(shape, value.dtype, value.requires_grad, stride)
    else:
        node.meta["val"] = value


def _normalize(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call as torch hands it to a mode (``parseIValuesToPyArgsKwargs``, python_variable.cpp).

    Positional arguments by position with trailing defaults dropped, keyword-only arguments by
    name unless they hold their default.
    """
    schema = func.schema
    try:
        positional, kwarg_only = schema.bind(args, kwargs, is_tensor=_is_tensor)
    except (TypeError, RuntimeError, ValueError):
        return args, kwargs  # not for this schema: recorded as called (the call itself raises)
    params = schema.positional
    end = len(positional)
    while end and _is_default(positional[end - 1], params[end - 1].default):
        end -= 1
    defaults = {a.name: a.default for a in schema.kwarg_only}
    kept = {k: v for k, v in kwarg_only.items() if not _is_default(v, defaults.get(k, NO_DEFAULT))}
    return tuple(positional[:end]), kept


def _is_default(value: Any, default: Any) -> bool:
    if default is NO_DEFAULT or _is_tensor(value):
        return False
    # bool is an int in Python, not in a schema: False is not the default 0
    return type(value) is type(default) and value == default


class _ProxyMode(DispatchMode):
    """Records every operator call it sees into ``graph`` (torch's ``ProxyTorchDispatchMode``)."""

    def __init__(self, decomposition_table: dict[Any, Callable[..., Any]]) -> None:
        self.graph = Graph()
        self.decompositions = decomposition_table
        # id(tensor) -> (weak reference, node, constant): weak, as torch's WeakIdKeyDictionary, so
        # that the trace holds no tensor (a held gradient would be copied by AccumulateGrad, not
        # taken over: Note [Stealing the gradient]); the reference tells a reused id from its
        # tensor. ``constant`` is the value when it is known (a small literal, and what is
        # computed from such values only), else None: torch's ``_ProxyTensor.constant``.
        self.tensors: dict[int, tuple[Callable[[], Any], Node, Tensor | None]] = {}
        self.constants: dict[int, tuple[Tensor, str]] = {}  # id(tensor) -> (tensor, attribute name)
        self.attributes: dict[str, Any] = {}

    def track(self, value: Tensor, node: Node, constant: Tensor | None = None) -> None:
        """From now on ``value`` is ``node``'s result (whose value is ``constant``, when known)."""
        self.tensors[id(value)] = (weakref.ref(value), node, constant)

    def constant_of(self, value: Tensor) -> Tensor | None:
        """The known value of a traced tensor, or None."""
        entry = self.tensors.get(id(value))
        if entry is not None and entry[0]() is value:
            return entry[2]
        return None

    def node_of(self, value: Tensor) -> Node | None:
        """The node whose result ``value`` is, or None for a tensor the trace never produced."""
        entry = self.tensors.get(id(value))
        if entry is not None and entry[0]() is value:
            return entry[1]
        return None

    def to_arg(self, value: Any) -> Any:
        """``value`` with each tensor replaced by its node; an untraced tensor becomes a constant."""
        if _is_tensor(value):
            node = self.node_of(value)
            return node if node is not None else self.constant(value)
        if isinstance(value, (tuple, list)):
            return type(value)(self.to_arg(v) for v in value)
        if isinstance(value, dict):
            return {k: self.to_arg(v) for k, v in value.items()}
        return value

    def constant(self, value: Tensor) -> Node:
        """A ``get_attr`` node reading ``value``, kept as ``_tensor_constantN`` on the module.

        As torch does, each distinct tensor gets one attribute and each use its own node.
        """
        entry = self.constants.get(id(value))
        if entry is None or entry[0] is not value:
            prefix = "_param_constant" if isinstance(value, _dc.nn.Parameter) else "_tensor_constant"
            index = sum(1 for name in self.attributes if name.startswith(prefix))
            entry = (value, f"{prefix}{index}")
            self.constants[id(value)] = entry
            self.attributes[entry[1]] = value
        node = self.graph.get_attr(entry[1])
        _metadata(node, value)
        return node

    def __dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                     kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        decomposition = self.decompositions.get(func)
        if decomposition is not None:
            with self:  # the decomposition's own calls come back here and are recorded
                return decomposition(*args, **kwargs)
        implicit = _implicit_kernel(func, args, kwargs)
        if implicit is not None:
            with self:  # reached below autograd (its keys excluded): decompose as autograd would have
                return implicit(*args, **kwargs)
        name = str(func)
        traced = [t for t in _tensors_in((args, kwargs)) if self.node_of(t) is not None]
        all_constant = all(self.constant_of(t) is not None for t in traced)
        if name in _DATA_DEPENDENT:
            if all_constant:  # the value is known: computed, nothing recorded (a constant's item())
                with disable_current_modes():
                    return func(*self._constants(args), **self._constants(kwargs))
            if not any(isinstance(t, FakeTensor) for t in _tensors_in((args, kwargs))):
                raise RuntimeError(
                    f"It appears that you're trying to get value out of a tracing tensor with {func} - "
                    "erroring out! It's likely that this is caused by data-dependent control flow or "
                    "similar.  It may be possible to trace this with dynamic shapes; try setting "
                    "tracing_mode='symbolic' in your make_fx call.")  # torch's text (dispatchcore has no 'symbolic')
        if name == "aten.lift_fresh.default":
            # Note [lift_fresh is recorded as a copy]: lift_fresh returns its (fresh) argument, but
            # in the graph that argument is a constant of the module; recorded as it is, a later
            # in-place write would change the constant. torch records lift_fresh_copy instead.
            func = aten.lift_fresh_copy.default
        call_args, call_kwargs = _normalize(func, args, kwargs)
        node_args, node_kwargs = self.to_arg(call_args), self.to_arg(call_kwargs)
        out = func(*args, **kwargs)
        node = self.graph.call_function(func, node_args, node_kwargs)
        _metadata(node, out)
        constant = self._constant_result(func, args, kwargs, out, traced, all_constant)
        if _is_tensor(out):
            self.track(out, node, constant)
        elif isinstance(out, (tuple, list)):
            for i, item in enumerate(out):  # one getitem node per result, as torch makes them
                item_node = self.graph.call_function(operator.getitem, (node, i))
                _metadata(item_node, item)
                if _is_tensor(item):
                    self.track(item, item_node, constant[i] if isinstance(constant, (tuple, list)) else None)
        return out

    def _constants(self, value: Any) -> Any:
        """``value`` with each traced tensor replaced by its known value."""
        if _is_tensor(value):
            if self.node_of(value) is None:
                return value
            return self.constant_of(value)
        if isinstance(value, (tuple, list)):
            return type(value)(self._constants(v) for v in value)
        if isinstance(value, dict):
            return {k: self._constants(v) for k, v in value.items()}
        return value

    def _constant_result(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any,
                         traced: list[Tensor], all_constant: bool) -> Any:
        """The value of ``func``'s result when it is known (torch's ``proxy_call`` constant rule), else None.

        A lifted literal of at most ``CONSTANT_NUMEL_LIMIT`` elements is its own value; an
        operator whose traced arguments are all known (one at least), not random, with small
        results, is computed for real on the known values.
        """
        if func is aten.lift_fresh_copy.default and _is_tensor(out) and out.numel() <= CONSTANT_NUMEL_LIMIT:
            with disable_current_modes():
                return aten.clone.default(args[0])
        if (str(func) in _NONDETERMINISTIC_SEEDED or not traced or not all_constant
                or any(t.numel() > CONSTANT_NUMEL_LIMIT for t in _tensors_in(out))):
            return None
        with disable_current_modes():
            return func(*self._constants(args), **self._constants(kwargs))


# the Autograd functionality and every key below it: a call's keys as its Autograd key sees them
_UP_TO_AUTOGRAD = full_after_bits(DispatchKey.AutogradFunctionality) | key_bits(DispatchKey.AutogradFunctionality)


def _implicit_kernel(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[..., Any] | None:
    """The CompositeImplicitAutograd kernel the call's Autograd key would have run, or None.

    torch's ``autograd_would_have_decomposed``: the table entry at the arguments' Autograd key
    is the math kernel (not an autograd kernel of the operator's own).
    """
    bits = 0
    for t in _tensors_in((args, kwargs)):
        bits |= t._key_bits
    if not bits:
        return None
    registration, reason = func.table_entry(func.key_for(bits & _UP_TO_AUTOGRAD))
    if reason != "math kernel" or registration is None or registration.with_keyset:
        return None
    kernel: Callable[..., Any] = registration.kernel
    return kernel


def _tensors_in(value: Any) -> Iterator[Tensor]:
    if _is_tensor(value):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)


_TRACING_MODES = ("real", "fake")


def make_fx(f: Callable[..., Any], decomposition_table: dict[Any, Callable[..., Any]] | None = None,
            tracing_mode: str = "real") -> Callable[..., GraphModule]:
    """Trace ``f`` into a ``GraphModule`` of the aten operators it runs.

    Mirrors ``torch.fx.experimental.proxy_tensor.make_fx``: the returned function runs ``f`` on
    example inputs under a dispatch mode that records every operator reaching the ``Python``
    key. That is below autograd, so CompositeImplicitAutograd operators arrive decomposed
    (``linear`` as ``t`` and ``addmm``), and a ``backward()`` or ``dispatchcore.autograd.grad``
    inside ``f`` adds the backward formulas' operators: a joint forward and backward graph.
    Tensors are matched by identity: an input becomes a placeholder (``x`` -> ``x_1``), an
    operator's result its node, and a tensor the trace never produced (a global) a constant
    attribute (``_tensor_constant0``). Non-tensor inputs become placeholders too, but their
    example value is burnt into the graph, as in torch. A ``dc.tensor(...)`` literal inside
    ``f`` reaches the mode as ``aten.lift_fresh`` of its fresh tensor, recorded as
    ``lift_fresh_copy(_tensor_constant0)`` (See Note [lift_fresh is recorded as a copy]); a
    literal of at most one element is a known value, and reading a known value
    (``_local_scalar_dense``) computes it instead of recording it, as in torch.

    Inputs may be nested tuples, lists, dicts and named tuples (torch's pytrees): each leaf is
    a placeholder named after its argument (``xs=[a, b]`` -> ``xs_1``, ``xs_2``), ``f`` gets the
    structures with the traced leaves in place, and the code flattens them
    (``fx_pytree.tree_flatten_spec``) and rebuilds ``f``'s result from the graph's flat output
    list (``pytree.tree_unflatten``); ``gm._in_spec``/``gm._out_spec`` hold the structures.

    With ``tracing_mode="real"`` ``f`` runs for real: it has its side effects (``.grad`` of the
    example inputs is set). With ``"fake"`` the inputs are first converted to fake tensors of a
    new ``FakeTensorMode`` (the fake inputs' own mode, if they are fake already) and ``f`` runs
    under it, beneath the recording mode: no data is computed, CUDA inputs need no GPU, each
    node's ``meta["val"]`` is a ``FakeTensor``, and the graph is the one a real trace records.
    As in torch, a real tensor met inside ``f`` is then refused (the fake mode does not allow
    non-fake inputs), and data-dependent operators raise the fake mode's errors: torch's fake
    tracing has a ``ShapeEnv`` for those, dispatchcore none.

    Args:
        f: the function to trace; it takes tensors, plain values, or tuples, lists, dicts and
            named tuples of them as positional arguments, and returns any of these.
        decomposition_table: ``OperatorHandle`` -> Python function. An operator found there
            is not recorded; its decomposition runs instead, and the operators it calls are
            recorded (and decomposed again if they are in the table).
            ``core_aten_decompositions()`` is one such table.
        tracing_mode: ``"real"`` or ``"fake"``; ``"symbolic"`` needs symbolic shapes, which
            dispatchcore does not model.

    Returns:
        A function that takes ``f``'s example inputs and returns the traced ``GraphModule``.

    Raises:
        ValueError: ``tracing_mode`` is ``"symbolic"`` or not a tracing mode at all.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.fx import make_fx
        >>> def f(x, w):
        ...     return dc.nn.functional.relu(x @ w)
        >>> gm = make_fx(f)(dc.ones(2, 3), dc.ones(3, 4))
        >>> [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
        ['aten.mm.default', 'aten.relu.default']
        >>> gm = make_fx(f, tracing_mode="fake")(dc.ones(2, 3, device="meta"), dc.ones(3, 4, device="meta"))
        >>> [n.meta["val"] for n in gm.graph.nodes if n.op == "call_function"]
        [FakeTensor(..., device='meta', size=(2, 4)), FakeTensor(..., device='meta', size=(2, 4))]
        >>> make_fx(f, tracing_mode="symbolic")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
          ...
        ValueError: make_fx: tracing_mode='symbolic' is not supported; ... no ShapeEnv ...
    """
    if tracing_mode == "symbolic":
        raise ValueError(
            "make_fx: tracing_mode='symbolic' is not supported; dispatchcore has no ShapeEnv (symbolic "
            "shapes): trace with tracing_mode='real' or 'fake', whose shapes are the example inputs'")
    if tracing_mode not in _TRACING_MODES:
        raise ValueError(f"tracing_mode must be real/fake/symbolic, got {tracing_mode}")
    table = dict(decomposition_table or {})
    class_name = getattr(f, "__name__", type(f).__name__)

    def wrapped(*args: Any) -> GraphModule:
        mode = _ProxyMode(table)
        leaves, in_spec = tree_flatten(args)
        fake_mode = None
        if tracing_mode == "fake":  # torch's detect_fake_mode: fake inputs bring their own mode
            fake_mode = next((a.fake_mode for a in leaves if isinstance(a, FakeTensor)), None) or FakeTensorMode()
        if fake_mode is not None:  # every tensor leaf, as torch's _convert_args_to_fake
            leaves = [fake_mode.from_tensor(a) if _is_tensor(a) else a for a in leaves]
        names = _input_names(f, len(args))
        # one placeholder per leaf, named after its argument: x -> x_1, xs=[a, b] -> xs_1, xs_2
        # (torch's Tracer._proxy_placeholder), in flattening order
        flat = iter(leaves)
        for name, spec in zip(names, in_spec.children_specs, strict=True):
            for i in range(1, spec.num_leaves + 1):
                value = next(flat)
                node = mode.graph.placeholder(f"{name}_{i}")
                _metadata(node, value)
                if _is_tensor(value):
                    mode.track(value, node)
        args = tree_unflatten(leaves, in_spec)
        nested = not all(spec.is_leaf() for spec in in_spec.children_specs)
        if fake_mode is None:
            with mode:
                result = f(*args)
        else:
            with fake_mode, mode:  # the fake mode sits beneath the recording one, as torch's infra mode
                result = f(*args)
        if nested:  # torch's flatten_fn: the graph returns the result's leaves, forward rebuilds it
            out_leaves, out_spec = tree_flatten(result)
            mode.graph._pytree_info = _PyTreeInfo(names, in_spec, out_spec)
            mode.graph.output(mode.to_arg(out_leaves))
        else:
            mode.graph.output(mode.to_arg(result))
        return GraphModule(mode.attributes, mode.graph, class_name)

    return wrapped


def _input_names(f: Callable[..., Any], count: int) -> list[str]:
    """Placeholder bases: the parameter names, or ``arg0, arg1, ...`` when ``f`` takes ``*args``."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(params) < count:
        return [f"arg{i}" for i in range(count)]
    return [p.name for p in params[:count]]


# --- decompositions ----------------------------------------------------------------------------
# core_aten_decompositions() lives in dispatchcore/decompositions.py (torch/_decomp/decompositions.py,
# torch/_refs); imported above and re-exported here, where make_fx takes its table.

