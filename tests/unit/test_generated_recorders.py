"""A generated recorder records the node ``record``'s general path records (Note [Generated recorders]).

Each case runs an op below autograd, then records its result twice with a fresh kernel of the
op's derivative: once with the generated recorder, once with ``record`` told not to use it. The
two nodes must have the same class, edges, input metadata and saved values, the two results the
same history, and a backward through either must give the same gradients.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import graph as G
from dispatchcore.autograd import kernels as K
from dispatchcore.ops import aten


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _t(*shape, seed=0, grad=True):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return dc.tensor(data, requires_grad=grad)


def _inputs(kind: str, shapes):
    """Inputs of ``shapes`` shaped as ``kind`` says, and the leaves their gradients reach."""
    leaves = [_t(*s, seed=i) for i, s in enumerate(shapes)]
    if kind == "leaves":
        return leaves, leaves
    if kind == "first only":
        for leaf in leaves[1:]:
            leaf.requires_grad_(False)
        return leaves, leaves[:1]
    if kind == "last only":
        for leaf in leaves[:-1]:
            leaf.requires_grad_(False)
        return leaves, leaves[-1:]
    if kind == "interior":  # outputs of other nodes
        return [leaf * 1.5 for leaf in leaves], leaves
    if kind == "views":  # a view's edge goes through _edge_and_meta
        bases = [_t(2, *s, seed=i) for i, s in enumerate(shapes)]
        return [b[1] for b in bases], bases
    if kind == "second output":  # an edge to output 1 of a node (var_mean's mean)
        bases = [_t(3, *s, seed=i) for i, s in enumerate(shapes)]
        return [aten.var_mean.correction(b, [0])[1] for b in bases], bases
    raise AssertionError(kind)


OPS = [  # (name, op, input shapes, other positional arguments)
    ("add", aten.add.Tensor, ((4, 3), (4, 3)), ()),
    ("mul", aten.mul.Tensor, ((4, 3), (4, 3)), ()),
    ("div", aten.div.Tensor, ((4, 3), (4, 3)), ()),
    ("mm", aten.mm.default, ((4, 3), (3, 5)), ()),
    ("exp", aten.exp.default, ((4, 3),), ()),
    ("relu", aten.relu.default, ((4, 3),), ()),
    ("pow", aten.pow.Tensor_Scalar, ((4, 3),), (3.0,)),
    ("leaky_relu", aten.leaky_relu.default, ((4, 3),), (0.1,)),
    ("addmm", aten.addmm.default, ((5,), (4, 3), (3, 5)), ()),
    ("lerp", aten.lerp.Tensor, ((4, 3), (4, 3), (4, 3)), ()),
]
KINDS = ["leaves", "first only", "last only", "interior", "views", "second output"]


def _kernel(op):
    kernel = K.make_autograd_kernel(K._derivatives[op.qualname])  # fresh plans: both paths compile
    assert kernel.recorder is not None
    return kernel


def _same_node(fast: G.Node, general: G.Node, *, clones: bool = False) -> None:
    """``clones``: saved tensors may be clones made per node (an in-place op's ``self``): equal values."""
    assert type(fast) is type(general)
    assert fast.next_functions == general.next_functions
    assert fast._nrs == general._nrs
    assert fast._in_meta == general._in_meta
    assert fast._seq != general._seq  # each got its own sequence number
    assert list(fast._values) == list(general._values)
    for name, v in fast._values.items():
        w = general._values[name]
        if type(v) is G.SavedTensor:
            assert type(w) is G.SavedTensor and v._version == w._version
            assert (v._output is None) == (w._output is None)
            if v._output is None and clones and v._tensor is not w._tensor:
                np.testing.assert_array_equal(v._tensor.detach().numpy(), w._tensor.detach().numpy())
            elif v._output is None:
                assert v._tensor is w._tensor
            else:  # a saved output is a detached alias of its node's own output
                assert v._output[1] == w._output[1] and v._tensor is not w._tensor
        else:
            assert v is w or v == w, name


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name, op, shapes, rest", OPS, ids=[o[0] for o in OPS])
def test_a_generated_recorder_records_the_node_the_general_path_records(name, op, shapes, rest, kind):
    inputs, leaves = _inputs(kind, shapes)
    args = (*inputs, *rest)
    kernel = _kernel(op)
    with dc.no_grad():
        fast_out, general_out = op(*args), op(*args)
    assert kernel.recorder(fast_out, args) is fast_out
    assert kernel.record(general_out, args, {}, False) is general_out
    _same_node(fast_out.grad_fn, general_out.grad_fn)
    assert (fast_out.requires_grad, fast_out._output_nr) == (general_out.requires_grad, general_out._output_nr)
    grads = []
    for out in (fast_out, general_out):
        got = dc.autograd.grad(out.sum(), leaves, allow_unused=True, retain_graph=True)  # shared inputs
        grads.append([None if g is None else g.numpy() for g in got])
    for g_fast, g_general in zip(*grads):
        assert (g_fast is None) == (g_general is None)
        if g_fast is not None:
            np.testing.assert_array_equal(g_fast, g_general)


def test_a_keyword_call_records_through_the_general_path():
    a = _t(3)
    kernel = _kernel(aten.add.Tensor)
    with dc.no_grad():
        out = aten.add.Tensor(a, a, alpha=2)
    kernel.record(out, (a, a), {"alpha": 2})
    assert out.grad_fn._values == {"alpha": 2}  # the keyword's value, not the recorder's constant default


def test_the_recorder_shares_this_modules_metadata_memo():
    assert _kernel(aten.mul.Tensor).recorder.__globals__ is vars(K)  # Note [Shared input metadata]
    a, b = _t(2, 5), _t(2, 5, seed=1)
    first, second = a * b, b * a
    assert first.grad_fn._in_meta[0] is second.grad_fn._in_meta[1]


def test_a_non_tensor_where_a_tensor_was_expected_goes_to_the_general_path():
    a = _t(3)
    kernel = _kernel(aten.mul.Tensor)
    with dc.no_grad():
        out = aten.mul.Tensor(a, a)
    kernel.recorder(out, (a, None))  # record's general path: None has no edge
    node = out.grad_fn
    assert node.next_functions == ((G.grad_accumulator(a), 0), (None, 0))
    assert node._in_meta[1] is None


def test_the_recorder_source_is_kept_and_compiled_once_per_input_positions():
    kernel = _kernel(aten.mul.Tensor)
    source = kernel.recorder.source
    assert source.startswith("def recorder(result, args):")
    assert "x1 = args[1]" in source and "x2" not in source
    assert K._recorder_factory((0, 1))[0] == source
    other = _kernel(aten.div.Tensor).recorder
    assert other.__code__ is kernel.recorder.__code__  # one compiled body, two kernels' closures


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name, op, shapes, rest", OPS, ids=[o[0] for o in OPS])
def test_generated_edges_answer_what_the_input_by_input_path_answers(name, op, shapes, rest, kind):
    inputs, _ = _inputs(kind, shapes)
    args = (*inputs, *rest)
    positions = tuple(range(len(inputs)))
    fast = K._generated_edges(positions)(args)
    general = K._edges_by_triples(positions, args)
    assert fast[0] == general[0] and fast[1] == general[1] and fast[2] == general[2]
    assert fast[3] == general[3]  # the bitmask of the inputs with an edge (True == 1)


INPLACE = [  # (in-place op, its derivative, input shapes, other positional arguments)
    ("mul_", aten.mul_.Tensor, ((4, 3), (4, 3)), ()),
    ("add_", aten.add_.Tensor, ((4, 3), (4, 3)), ()),
    ("exp_", aten.exp_.default, ((4, 3),), ()),
    ("pow_", aten.pow_.Scalar, ((4, 3),), (2.0,)),
]


@pytest.mark.parametrize("kind", ["interior", "first only", "last only"])
@pytest.mark.parametrize("name, op, shapes, rest", INPLACE, ids=[o[0] for o in INPLACE])
def test_an_inplace_node_made_with_generated_edges_is_the_general_one(name, op, shapes, rest, kind):
    inputs, _ = _inputs(kind, shapes)
    inputs[0] = inputs[0] * 1.0  # never a leaf: mutated in place
    args = (*inputs, *rest)
    d = K._derivatives[op.qualname]
    positions = tuple(p for p in d.input_positions if p >= 0)
    fast = K._make_node(d, {}, positions, K._generated_edges(positions), args, {})
    general = K._make_node(d, {}, positions, None, args, {})
    assert fast[1] == general[1]  # the plan's output entries
    fast[0]._values, general[0]._values = fast[2], general[2]
    _same_node(fast[0], general[0], clones=True)


def test_a_chain_of_inplace_ops_on_wrapped_numbers_shares_one_saved_dict():
    x = _t(3) * 1.0
    x.mul_(1.0001)
    first = x.grad_fn
    x.mul_(1.0001)
    assert x.grad_fn._values is first._values  # Note [Constant saved values]: one dict for the chain
    x.sum().backward()
