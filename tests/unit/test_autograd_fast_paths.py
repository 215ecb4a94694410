"""The recording and engine fast paths of issue #19 give what the general paths give.

Each test names the note it checks (dispatchcore/autograd/graph.py and kernels.py): the generated
savers against ``_save``, the shared saved-value dicts against per-node ones, the flat edges
against torch's ``(node, input_nr)`` pairs, the ready queue against torch's ordering rule, and the
stolen gradient against a dispatched ``detach``.
"""

from __future__ import annotations

import heapq
import itertools
import random

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import graph as G
from dispatchcore.autograd import kernels as K
from dispatchcore.ops import aten


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _leaf(*shape, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return dc.tensor(data, requires_grad=True)


def _same_values(fast: dict, general: dict) -> None:
    assert list(fast) == list(general)  # the plan's order
    for name, v in fast.items():
        w = general[name]
        if type(v) is G.SavedTensor:
            assert type(w) is G.SavedTensor
            assert v._version == w._version and v._output == w._output
            if v._output is None:
                assert v._tensor is w._tensor
            else:  # a saved output is a detached alias of it, made per save: the same data
                assert v._tensor._data is w._tensor._data and v._tensor._vc is w._tensor._vc
        else:
            assert type(v) is type(w) and (v is w or v == w), name


# --- Note [Generated savers] --------------------------------------------------------------------------------
CALLS = [
    ("mm", lambda a, b: aten.mm.default(a, b), ((4, 3), (3, 5))),
    ("mul", lambda a, b: aten.mul.Tensor(a, b), ((4, 3), (4, 3))),
    ("div", lambda a, b: aten.div.Tensor(a, b), ((4, 3), (4, 3))),
    ("bmm", lambda a, b: aten.bmm.default(a, b), ((2, 4, 3), (2, 3, 5))),
    ("exp", lambda a: aten.exp.default(a), ((4, 3),)),
    ("mean", lambda a: aten.mean.default(a), ((4, 3),)),
    ("sum", lambda a: aten.sum.default(a), ((4, 3),)),
    ("atan2", lambda a, b: aten.atan2.default(a, b), ((4, 3), (4, 3))),
]


@pytest.mark.parametrize("which", [0, 1, None], ids=["first", "second", "both"])
@pytest.mark.parametrize("name, call, shapes", CALLS, ids=[c[0] for c in CALLS])
def test_a_generated_saver_saves_what_the_plan_interpreter_saves(name, call, shapes, which):
    args = [_leaf(*s, seed=i) for i, s in enumerate(shapes)]
    if which is not None:
        if which >= len(args):
            pytest.skip("one input")
        for i, a in enumerate(args):
            if i != which:
                a.requires_grad_(False)
    out = call(*args)
    node = out.grad_fn
    d = type(node)._deriv
    mask = tuple(a.requires_grad for a in args)
    plan = d.plan(mask)
    general: dict = {}
    K._save(plan, tuple(args), {}, general)
    K._save_results(K._results(plan), node, (out,), general)
    _same_values(node._values, general)


def test_each_generated_saver_reads_its_plan_in_order_and_says_so_in_its_source():
    aten.mm.default(_leaf(2, 3), _leaf(3, 2, seed=1))  # at least mm's plan exists
    made = 0
    for d in K._derivatives.values():
        for plan in list(d._plans.values()):
            arguments = tuple(e for e in plan if e[1] != K._RESULT)
            saver = K._generated_saver(d, arguments)
            if saver is None:
                continue
            made += 1
            names = [e[0] for e in arguments]
            source = saver.source
            assert [source.index(repr(n) + ":") for n in names] == sorted(source.index(repr(n) + ":") for n in names)
    assert made  # the ops run above made plans with savers


def test_a_generated_saver_hands_calls_it_was_not_written_for_to_the_interpreter():
    a, b = _leaf(4, 3), _leaf(3, 5, seed=1)
    d = type(aten.mm.default(a, b).grad_fn)._deriv
    saver = K._generated_saver(d, d.plan((True, True)))
    assert saver is not None and saver((a, b)) is not None
    assert saver((a,)) is None  # fewer positional arguments

    class Sub(dc.Tensor):
        pass

    assert saver((a, b.as_subclass(Sub))) is None  # a subclass: _save decides


# calls whose plans save more than positional Tensors: keyword-only defaults (addmm's beta and
# alpha), a positional Tensor? (nll_loss_forward's weight), plain positional values (dims,
# reduction, ignore_index), a positional value the call leaves out (max.dim's keepdim)
MIXED_CALLS = [
    ("addmm", aten.addmm.default, lambda: (_leaf(5), _leaf(4, 3, seed=1), _leaf(3, 5, seed=2))),
    ("nll_loss_forward", aten.nll_loss_forward.default,
     lambda: (_leaf(4, 3), dc.tensor([0, 2, 1, 2]), None, 1, -100)),
    ("nll_loss_forward weighted", aten.nll_loss_forward.default,
     lambda: (_leaf(4, 3), dc.tensor([0, 2, 1, 2]), dc.tensor([1.0, 2.0, 0.5]), 2, 1)),
    ("_log_softmax", aten._log_softmax.default, lambda: (_leaf(4, 3), 1, False)),
    ("max.dim", aten.max.dim, lambda: (_leaf(4, 3), 1)),
    ("max.dim keepdim", aten.max.dim, lambda: (_leaf(4, 3), 0, True)),
    ("mul.Scalar", aten.mul.Scalar, lambda: (_leaf(4, 3), 2.5)),
]


@pytest.mark.parametrize("label, op, make_args", MIXED_CALLS, ids=[c[0] for c in MIXED_CALLS])
def test_a_generated_saver_reads_defaults_optional_tensors_and_plain_values_as_the_interpreter(label, op, make_args):
    args = make_args()
    result = op(*args)
    outputs = result if isinstance(result, tuple) else (result,)
    node = outputs[0].grad_fn
    d = type(node)._deriv
    plan = d.plan(tuple(getattr(args[p], "requires_grad", False) if p >= 0 else False
                        for p in d.input_positions))
    saver = K._generated_saver(d, tuple(e for e in plan if e[1] != K._RESULT))
    assert saver is not None and saver(args) is not None  # before, these plans went to _save whole
    general: dict = {}
    K._save(plan, args, {}, general)
    K._save_results(K._results(plan), node, outputs, general)
    _same_values(node._values, general)


def test_a_generated_saver_leaves_values_it_was_not_written_for_to_the_interpreter():
    x = _leaf(4, 3)
    d = type(aten.mul.Scalar(x, 2.5).grad_fn)._deriv
    saver = K._generated_saver(d, d.plan((True,)))
    assert saver((x, 2.5)) == {"other": 2.5}
    assert saver((x, np.float64(2.5))) is None  # not a plain Python value: _save decides
    assert aten.mul.Scalar(x, np.float64(2.5)).grad_fn._values["other"] == 2.5


def test_a_plan_with_an_output_gets_no_saver_for_it_and_no_error():
    x = _leaf(3)
    d = type(aten.exp.default(x).grad_fn)._deriv
    plan = d.plan((True,))  # exp saves its result: _compile_plan hands the saver the rest only
    assert any(e[1] == K._RESULT for e in plan) and K._generated_saver(d, plan) is None


def test_keywords_skip_the_generated_saver_and_save_what_the_call_gave():
    a, b, c = _leaf(5), _leaf(4, 3, seed=1), _leaf(3, 5, seed=2)
    values = aten.addmm.default(a, b, c, beta=2, alpha=0.5).grad_fn._values
    assert values["beta"] == 2 and values["alpha"] == 0.5
    values = aten.addmm.default(a, b, c).grad_fn._values
    assert values["beta"] == 1 and values["alpha"] == 1  # the schema's defaults, from the saver


def test_a_mutated_argument_gets_no_generated_saver():
    a, b = _leaf(3), _leaf(3, seed=1)
    x = a * 1.0
    x.mul_(b)  # b needs a gradient: the plan saves x's value before the op, a clone
    d = K._derivatives["aten::mul_.Tensor"]
    mutating = [p for p in d._plans.values() if any(e[5] for e in p)]
    assert mutating and all(K._generated_saver(d, p) is None for p in mutating)
    x.sum().backward()
    assert b.grad.tolist() == a.tolist()  # the saved clone is the value before mul_


# --- Note [Constant saved values] -------------------------------------------------------------------------------
def test_nodes_saving_the_same_wrapped_number_share_one_dict_and_release_it_apart():
    x = _leaf(3)
    y1 = x * 1.5
    y2 = y1 * 1.5
    y3 = y2 * 1.5
    n1, n2, n3 = y1.grad_fn, y2.grad_fn, y3.grad_fn
    assert n1._values is n2._values is n3._values  # one dict for the chain
    shared = n3._values
    y2.sum().backward()  # releases n2 and n1 only
    assert x.grad.tolist() == pytest.approx([2.25] * 3)
    assert n1._values["other"] is n2._values["other"] is K._FREED_SAVED
    assert n3._values is shared and n3._values["other"] is not K._FREED_SAVED  # n3 keeps its value
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y2.sum().backward()
    x.grad = None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y3.sum().backward()  # n3 runs, then n2's freed value raises, as with a dict per node


def test_a_shared_dict_gives_the_gradients_of_separate_ones():
    x = _leaf(5)
    y = x
    for _ in range(50):
        y = y * 1.01
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(5, 1.01 ** 50, np.float32), rtol=1e-5)


def test_add_with_the_default_alpha_shares_the_constant_dict():
    a, b = _leaf(3), _leaf(3, seed=1)
    n1, n2 = (a + b).grad_fn, (b + a).grad_fn
    assert n1._values is n2._values and n1._values == {"alpha": 1}
    n3 = aten.add.Tensor(a, b, alpha=2).grad_fn
    assert n3._values == {"alpha": 2} and n3._values is not n1._values


# --- Note [Flat edges] --------------------------------------------------------------------------------------
def test_next_functions_are_torchs_pairs_built_from_the_flat_edges():
    a, b = _leaf(2, 2), _leaf(2, 2, seed=1)
    c = dc.randn(2, 2)
    m = a * 1.0
    outs = aten.max.dim(m, 0)
    y = outs[1].float() * 0 + outs[0]  # output 0 of max.dim
    node = (y * b).grad_fn  # two edges: the tuples
    assert node.next_functions == tuple(zip(node._next, node._nrs))
    assert all(type(e) is tuple and len(e) == 2 for e in node.next_functions)
    assert node.next_functions[1] == (G.grad_accumulator(b), 0)
    assert node._nrs is G.flat_nrs((0, 0))  # the shared all-zero tuple
    lone = (y * c).grad_fn  # one edge of two: the node itself and its place
    assert lone._next is y.grad_fn and lone._nrs == (0, 0, 2)
    assert lone.next_functions == ((y.grad_fn, 0), (None, 0)) and G.next_nodes(lone) == (y.grad_fn, None)
    second = (c * y).grad_fn
    assert second.next_functions == ((None, 0), (y.grad_fn, 0)) and second._nrs == (1, 0, 2)
    one = y.exp().grad_fn  # one input
    assert one._next is y.grad_fn and one.next_functions == ((y.grad_fn, 0),)
    assert outs[0].grad_fn.next_functions == ((m.grad_fn, 0),)
    rows = m.unbind(0)  # an edge to output 1 of a multi-output node: input_nr 1
    far = (c[0] * rows[1]).grad_fn
    assert far.next_functions == ((None, 0), (rows[1].grad_fn, 1)) and far._nrs == (1, 1, 2)
    for edges in [((one, 1), (None, 0)), ((None, 0), (None, 0)), ((one, 0), (lone, 1)), ((None, 0), (one, 2)), ()]:
        n = G.Node(edges)
        assert n.next_functions == edges and G.next_nodes(n) == tuple(e[0] for e in edges)


def test_the_engine_sends_a_lone_edge_the_gradient_of_its_own_input():
    a = _leaf(3)
    b = dc.tensor([1.0, 2.0, 3.0])
    (b * a).sum().backward()  # the lone edge is input 1 of mul
    assert a.grad.tolist() == [1.0, 2.0, 3.0]
    a.grad = None
    ((a * 2) - b).sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


# --- Note [The ready queue] ---------------------------------------------------------------------------------
def _torch_order(root: G.Node) -> list[G.Node]:
    """The order torch's CPU ready queue runs a graph: highest sequence number first, FIFO on ties."""
    deps = G._dependencies([root])
    tie = itertools.count()
    ready = [(-root._seq, next(tie), root)]
    order = []
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for nxt in G.next_nodes(node):
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt._seq, next(tie), nxt))
    return order


@pytest.mark.parametrize("seed", range(6))
def test_the_engine_runs_nodes_in_torchs_ready_queue_order(seed):
    rng = random.Random(seed)
    leaves = [_leaf(3, seed=i) for i in range(4)]
    pool = list(leaves)
    steps = (lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a.exp(), lambda a, b: a - b)
    for _ in range(25):
        pool.append(rng.choice(steps)(rng.choice(pool), rng.choice(pool)))
    out = sum(pool[-6:], pool[-7]).sum()
    ran: list = []
    seen: set = set()
    stack = [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        n.register_prehook(lambda grads, n=n: ran.append(n))
        stack.extend(G.next_nodes(n))
    expected = _torch_order(out.grad_fn)
    out.backward()
    assert ran == expected


# --- Note [Stealing the gradient] -------------------------------------------------------------------------------
class _Names(dc.DispatchMode):  # names only: dc.LoggingMode keeps the tensors, so no grad is stolen
    def __init__(self):
        self.ops = []

    def __dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def test_a_stolen_gradient_is_the_detached_alias_a_dispatched_detach_makes():
    x = _leaf(3)
    (x * 2).sum().backward()
    quiet = x.grad  # stolen without a dispatch: nobody could see one
    y = _leaf(3)
    with _Names() as mode:
        (y * 2).sum().backward()
    assert mode.ops[-1] == "aten.detach.default"  # a mode sees torch's dispatched detach
    seen = y.grad
    for t in (quiet, seen):
        assert type(t) is dc.Tensor and t._base is None and not t.requires_grad and t.grad_fn is None
        assert t._version == 0 and t.is_contiguous()
    assert quiet.tolist() == seen.tolist() == [2.0, 2.0, 2.0]


# --- the implicit seed (_ones_like) -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
@pytest.mark.parametrize("dtype", [dc.float32, dc.float64])
def test_the_seed_made_at_once_is_the_tensor_ones_like_dispatches(shape, dtype):
    out = dc.zeros(list(shape), dtype=dtype)
    quick = G._ones_like(out)  # nobody can see: made at once
    with _Names() as mode:
        seen = G._ones_like(out)
    assert mode.ops == ["aten.ones_like.default"]
    general = aten.ones_like.default(out)
    for t in (quick, seen):
        assert t.tolist() == general.tolist() and t.dtype == general.dtype
        assert t.shape == general.shape and t.stride() == general.stride()
        assert t._version == general._version and t._key_bits == general._key_bits and t.device == general.device


def test_the_seed_of_a_non_contiguous_or_meta_output_is_dispatched():
    out = dc.zeros(3, 4).t()
    seed = G._ones_like(out)
    assert seed.stride() == aten.ones_like.default(out).stride() == (1, 4)  # preserve_format: its strides
    meta = G._ones_like(dc.zeros(2, device="meta"))
    assert meta.device.type == "meta" and meta.shape == (2,)


# --- expand of a 0-d tensor (sum's and mean's backward) -------------------------------------------------------
@pytest.mark.parametrize("size", [[32, 10], [1, 10], [10, 1], [3], [0, 2], [2, 1, 3]])
def test_expanding_a_0d_tensor_gives_every_new_dim_stride_0_over_its_storage(size):
    one = dc.tensor(2.5)
    out = one.expand(size)
    assert list(out.shape) == size and out.stride() == (0,) * len(size)  # inferExpandGeometry's answer
    assert out._base is one and out._vc is one._vc  # a view
    one.add_(1.0)
    assert out.tolist() == np.full(size, 3.5).tolist()  # the same storage


@pytest.mark.parametrize("size", [[-1], [2, -1]])
def test_expanding_a_0d_tensor_to_a_negative_size_keeps_the_general_error(size):
    with pytest.raises(RuntimeError, match="isn't allowed in a leading, non-existing dimension"):
        dc.tensor(1.0).expand(size)


def test_a_key_included_by_a_guard_sees_the_seed_and_the_stolen_gradient_dispatched():
    generic = dc.DispatchKey.TESTING_ONLY_GenericMode
    seen = []

    def log_every_op(op, *args, **kwargs):  # lesson 10's boxed fallback
        seen.append(str(op))
        with dc.ExcludeDispatchKeyGuard(generic):
            return op(*args, **kwargs)

    lib = dc.Library("_", "IMPL")
    lib.fallback(log_every_op, generic)
    try:
        x = _leaf(3)
        with dc.IncludeDispatchKeyGuard(generic):
            (x * 2).sum().backward()
    finally:
        lib.destroy()
    assert "aten.ones_like.default" in seen and "aten.detach.default" in seen
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
