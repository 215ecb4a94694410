"""Differential tests: dispatchcore.fx.make_fx against torch.fx.experimental.proxy_tensor.make_fx (torch 2.13).

Each program is written once against a library namespace (``torch`` or ``dispatchcore``) and
traced by both ``make_fx``\\ s; the graphs must call the same aten overloads in the same order
(``str(node.target)``), name their nodes alike, and, where both record the calls with the same
arguments, print the same code (``torch.ops.`` read as ``dispatchcore.ops.``).

Where dispatchcore records other operators than torch, the test says so and why:

* Nothing at present: factories pass torch's binding keywords too (Note [Binding keywords]).

Backward graphs are the same call for call, autograd's own calls included: a saved output is
saved and unpacked through a recorded ``aten.detach`` (Note [Detach through Python]) and
``AccumulateGrad`` takes a new gradient over with one (Note [Stealing the gradient]), both in
dispatchcore/autograd/graph.py.
"""

from __future__ import annotations

from typing import Any

import pytest

import dispatchcore as dc
from dispatchcore.fx import core_aten_decompositions
from dispatchcore.fx import make_fx as dc_make_fx

torch = pytest.importorskip("torch")
from torch._decomp import core_aten_decompositions as torch_core_aten_decompositions  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402

pytestmark = pytest.mark.differential


def targets(gm: Any) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def names(gm: Any) -> list[tuple[str, str]]:
    return [(n.op, n.name) for n in gm.graph.nodes]


# --- programs: name -> (builder(lib) -> function, shapes of the example inputs) -------------------
def two_outputs(lib):
    def f(x, y):
        a = x * y
        return (a * 2).sum(), a + 1

    return f


def mm_relu(lib):
    def f(x, w):
        return lib.nn.functional.relu(x @ w)

    return f


def linear_layer(lib):
    def f(x, w, b):
        return lib.nn.functional.linear(x, w, b).relu()

    return f


def reductions(lib):
    def f(x):
        return x.sum(0), x.sum(1, keepdim=True), x.mean(), x.sum()

    return f


def views(lib):
    def f(x):
        return x.t(), x.transpose(0, 1), x.reshape(6), x.unsqueeze(0)

    return f


def softmax_chain(lib):
    def f(x):
        return lib.softmax(x * 2, 1).exp()

    return f


def in_place(lib):
    def f(x):
        y = x.clone()
        y.add_(1)
        return x.sin(), y

    return f


def max_dim(lib):
    def f(x):
        values, indices = x.max(0)
        return values

    return f


def varargs(lib):
    def f(*args):
        return args[0] + args[1]

    return f


def builtin_names(lib):
    def f(x, sum):
        return (x + sum).abs().sum()

    return f



def global_constant(lib):
    g = lib.ones(3)

    def f(x):
        return x + g + g

    return f


def factory_inside(lib):
    def f(x):
        return lib.ones(3) + x, lib.zeros(3)

    return f


def tensor_literal(lib):
    def f(x):
        return lib.tensor([1.0, 2.0, 3.0]) * x

    return f


SHAPES = {
    "two_outputs": [(2, 3), (2, 3)], "mm_relu": [(2, 3), (3, 4)], "linear_layer": [(4, 3), (5, 3), (5,)],
    "reductions": [(2, 3)], "views": [(2, 3)], "softmax_chain": [(2, 3)], "in_place": [(3,)],
    "max_dim": [(2, 3)], "varargs": [(3,), (3,)], "builtin_names": [(3,), (3,)], "global_constant": [(3,)],
    "factory_inside": [(3,)], "tensor_literal": [(3,)],
}
PROGRAMS = {f.__name__: f for f in (two_outputs, mm_relu, linear_layer, reductions, views, softmax_chain,
                                    in_place, max_dim, varargs, builtin_names, global_constant,
                                    factory_inside, tensor_literal)}
# Programs whose printed code is the same text in both (see the module docstring for the others).
SAME_CODE = ["two_outputs", "mm_relu", "linear_layer", "reductions", "views", "softmax_chain", "in_place",
             "max_dim", "varargs", "builtin_names", "global_constant", "tensor_literal"]


def trace_both(name: str, decompositions: bool = False) -> tuple[Any, Any]:
    builder, shapes = PROGRAMS[name], SHAPES[name]
    data = [torch.randn(*s) for s in shapes]
    theirs = torch_make_fx(builder(torch), decomposition_table=torch_core_aten_decompositions() if decompositions
                           else None)(*data)
    mine = dc_make_fx(builder(dc), decomposition_table=core_aten_decompositions() if decompositions
                      else None)(*[dc.tensor(t.numpy()) for t in data])
    return mine, theirs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_graphs_call_the_same_operators_with_the_same_node_names(name):
    mine, theirs = trace_both(name)
    assert targets(mine) == targets(theirs)
    assert names(mine) == names(theirs)


@pytest.mark.parametrize("name", SAME_CODE)
def test_printed_code_is_torchs_with_dispatchcore_ops(name):
    mine, theirs = trace_both(name)
    assert mine.code == theirs.code.replace("torch.ops.", "dispatchcore.ops.")


def test_a_tensor_literal_is_recorded_as_lift_fresh_copy_of_a_constant_as_torch_records_it():
    mine, theirs = trace_both("tensor_literal")
    assert targets(mine) == targets(theirs) == ["aten.lift_fresh_copy.default", "aten.mul.Tensor"]
    assert [n.op for n in mine.graph.nodes] == ["placeholder", "get_attr", "call_function", "call_function", "output"]
    assert mine._tensor_constant0.tolist() == theirs._tensor_constant0.tolist() == [1.0, 2.0, 3.0]


def test_factories_record_the_keywords_torchs_bindings_add():
    mine, theirs = trace_both("factory_inside")
    ones = [n for n in theirs.graph.nodes if n.name == "ones"][0]
    assert ones.kwargs == {"device": torch.device("cpu"), "pin_memory": False}
    mine_ones = [n for n in mine.graph.nodes if n.name == "ones"][0]
    assert mine_ones.kwargs == {"device": dc.device("cpu"), "pin_memory": False}


@pytest.mark.parametrize("name", ["two_outputs", "linear_layer", "reductions", "views", "max_dim"])
def test_graphs_run_like_torchs_graphs(name):
    shapes = SHAPES[name]
    mine, theirs = trace_both(name)
    data = [torch.randn(*s) for s in shapes]
    expected = torch.utils._pytree.tree_leaves(theirs(*data))
    got = torch.utils._pytree.tree_leaves(mine(*[dc.tensor(t.numpy()) for t in data]))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == tuple(e.shape)
        assert torch.allclose(torch.from_numpy(g.numpy()).to(e.dtype), e, atol=1e-5)


# --- the joint forward + backward graph ---------------------------------------------------------------
def mlp(lib):
    def f(x, w1, b1, w2, b2):
        h = lib.nn.functional.linear(x, w1, b1).relu()
        loss = lib.nn.functional.linear(h, w2, b2).sum()
        loss.backward()
        return loss, w1.grad, b1.grad, w2.grad, b2.grad

    return f


def trace_mlp(decompositions: bool) -> tuple[Any, Any]:
    data = [torch.randn(4, 3), torch.randn(5, 3), torch.randn(5), torch.randn(2, 5), torch.randn(2)]
    theirs = torch_make_fx(mlp(torch), decomposition_table=torch_core_aten_decompositions() if decompositions
                           else None)(data[0], *(t.clone().requires_grad_() for t in data[1:]))
    mine_in = [dc.tensor(t.numpy()) for t in data]
    mine = dc_make_fx(mlp(dc), decomposition_table=core_aten_decompositions() if decompositions else None)(
        mine_in[0], *(t.requires_grad_() for t in mine_in[1:]))
    return mine, theirs


def test_mlp_joint_graph_records_torchs_forward_and_backward_operators():
    mine, theirs = trace_mlp(decompositions=False)
    assert targets(mine) == targets(theirs)
    assert "aten.threshold_backward.default" in targets(mine)
    assert [n.name for n in mine.graph.nodes] == [n.name for n in theirs.graph.nodes]


def test_mlp_joint_graph_with_core_decompositions_lowers_as_torch():
    mine, theirs = trace_mlp(decompositions=True)
    assert targets(mine) == targets(theirs)
    assert {"aten.permute.default", "aten.full_like.default", "aten.where.self"} <= set(targets(mine))


def test_mlp_joint_graphs_compute_the_same_loss_and_gradients():
    mine, theirs = trace_mlp(decompositions=False)
    data = [torch.randn(4, 3), torch.randn(5, 3), torch.randn(5), torch.randn(2, 5), torch.randn(2)]
    expected = theirs(*data)
    got = mine(*[dc.tensor(t.numpy()) for t in data])
    for g, e in zip(got, expected, strict=True):
        assert torch.allclose(torch.from_numpy(g.detach().numpy()), e.detach(), atol=1e-5)


# --- decompositions -----------------------------------------------------------------------------------
def test_every_decomposition_here_is_one_torchs_core_aten_set_has():
    theirs = {str(op) for op in torch_core_aten_decompositions()}
    assert {str(op) for op in core_aten_decompositions()} <= theirs


@pytest.mark.parametrize("name", ["views", "reductions", "linear_layer"])
def test_decomposed_graphs_call_the_same_operators(name):
    mine, theirs = trace_both(name, decompositions=True)
    assert targets(mine) == targets(theirs)
