"""The engine's fast paths give what its general paths give (issue #19).

Note [One-tensor backward] (``backward(t)`` against ``backward([t])``), the one-root engine setup
(one root against the same root listed twice with half the gradient each), and Note [Stealing the
gradient]'s reuse of an unshared gradient (against the detached alias it replaces): same graph
outcome, same gradients and version counters, same dispatch trace, same errors.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import dispatchcore as dc
from dispatchcore.autograd import graph as G


def _normalize(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x?", text)


def _graph(kind: str) -> tuple[Any, Any, Any]:
    """(loss, leaf a, leaf b) for a few graph shapes: a chain, a diamond, a view, a multi-output node."""
    a = dc.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = dc.tensor([0.5, 4.0, -1.0], requires_grad=True)
    if kind == "chain":
        loss = ((a * b).relu() * 3.0).sum()
    elif kind == "diamond":
        h = a * b
        loss = (h * h + h.sin()).sum()
    elif kind == "view":
        loss = (a * 2.0)[1:].sum() + b.sum()
    else:  # a multi-output node in the middle
        lo, hi = (a * b).split(2)
        loss = lo.sum() * hi.sum()
    return loss, a, b


def _outcome(a: Any, b: Any) -> list[Any]:
    return [(t.grad.tolist(), t.grad._vc[0], t.grad.grad_fn, t.grad._base is None, t.grad.requires_grad)
            for t in (a, b)]


KINDS = ["chain", "diamond", "view", "multi-output"]


@pytest.mark.parametrize("kind", KINDS)
def test_one_tensor_backward_matches_the_list_call_in_gradients_and_trace(kind):
    results = []
    for as_list in (False, True):
        loss, a, b = _graph(kind)
        with dc.trace() as t:
            loss.backward([loss.new_ones(())] if as_list else loss.new_ones(()))  # the same seed, both ways
        results.append((_outcome(a, b), _normalize(t.text())))
    assert results[0] == results[1]


@pytest.mark.parametrize("kind", KINDS)
def test_one_root_setup_matches_a_root_listed_twice(kind):
    loss, a, b = _graph(kind)
    loss.backward()
    one = _outcome(a, b)
    loss, a, b = _graph(kind)
    half = dc.tensor(0.5)
    G.backward([loss, loss], [half, half])  # two roots on one node: the general setup sums them
    assert _outcome(a, b) == one


@pytest.mark.parametrize("create_graph", [False, True])
def test_one_tensor_backward_keeps_retain_graph_and_create_graph(create_graph):
    a = dc.tensor([1.0, 2.0], requires_grad=True)
    loss = (a * a).sum()
    loss.backward(create_graph=create_graph)
    assert a.grad.tolist() == [2.0, 4.0] and (a.grad.grad_fn is not None) == create_graph
    if create_graph:  # retain_graph defaults to create_graph: a second pass works
        loss.backward()
        assert a.grad.tolist() == [4.0, 8.0]
    else:
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_one_tensor_backward_raises_the_general_paths_errors():
    a = dc.tensor([1.0, 2.0], requires_grad=True)
    for bad, error in ((dc.tensor([1.0, 2.0]), "does not require grad and does not have a grad_fn"),
                       (a * 2, "grad can be implicitly created only for scalar outputs")):
        for call in (lambda t=bad: t.backward(), lambda t=bad: G.backward([t])):
            with pytest.raises(RuntimeError, match=error):
                call()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\]"):
        (a * 2).backward(dc.ones(3))
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got float"):
        (a * 2).backward(1.0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_reused_unshared_gradient_equals_its_detached_alias(kind, monkeypatch):
    loss, a, b = _graph(kind)
    loss.backward()
    fast = _outcome(a, b)
    with monkeypatch.context() as m:
        m.setattr(G, "_getweakrefcount", lambda t: 1)  # every gradient looks watched: the alias path
        loss, a, b = _graph(kind)
        loss.backward()
        assert _outcome(a, b) == fast


def test_a_reused_gradient_is_one_nobody_else_holds():
    a = dc.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    a.register_hook(lambda g: seen.append(g))  # the hook keeps the gradient: it must be copied
    (a * 3.0).sum().backward()
    assert a.grad is not seen[0] and a.grad.tolist() == seen[0].tolist()
    a.grad.add_(1.0)  # the copy has storage of its own
    assert seen[0].tolist() == [3.0, 3.0]


FORMULA_ENTRIES = ["_mul", "_div", "_mm", "_t", "_neg", "_mul_scalar", "_div_scalar", "_expand"]


def _formula_graph(create_graph: bool) -> list[Any]:
    """A backward whose formulas call every formula entry (Note [Formula entries]), and a second one."""
    a = dc.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    b = dc.tensor([[0.5, 4.0], [-1.0, 2.0]], requires_grad=True)
    loss = ((a @ b.t()) / b - a.neg() * 2.0 + a / 3.0).mean() + (a * b).sum() + (b ** 3).sum()
    with dc.trace() as t:
        (ga, gb) = dc.autograd.grad(loss, [a, b], create_graph=create_graph)
        if create_graph:
            (ga * gb).sum().backward()
    grads = [ga.tolist(), gb.tolist()]
    if create_graph:
        grads += [a.grad.tolist(), b.grad.tolist()]
    return [grads, _normalize(t.text())]


@pytest.mark.parametrize("create_graph", [False, True])
def test_formula_entries_give_the_gradients_and_trace_of_the_operator_calls(create_graph, monkeypatch):
    from dispatchcore.autograd import derivatives as D

    fast = _formula_graph(create_graph)
    handles = {"_mul": D.A.mul.Tensor, "_div": D.A.div.Tensor, "_mm": D.A.mm.default, "_t": D.A.t.default,
               "_neg": D.A.neg.default, "_mul_scalar": D.A.mul.Scalar, "_div_scalar": D.A.div.Scalar,
               "_expand": D.A.expand.default}
    assert sorted(handles) == sorted(FORMULA_ENTRIES)
    for name, op in handles.items():
        assert getattr(D, name).__qualname__ == f"{op.qualname}.entry"  # each entry is its operator's
        monkeypatch.setattr(D, name, op)
    general = _formula_graph(create_graph)
    assert fast == general
    for op in ("aten::mul.Tensor", "aten::div.Tensor", "aten::mm", "aten::t", "aten::neg",
               "aten::mul.Scalar", "aten::div.Scalar", "aten::expand"):
        assert op in fast[1]  # the graph does reach every entry


def _reference_dependencies(root: Any) -> dict[Any, int]:
    """Edges reaching each node, walking ``next_functions`` as torch's compute_dependencies does."""
    deps = {root: 0}
    todo = [root]
    while todo:
        for nxt, _ in todo.pop().next_functions:
            if nxt is not None:
                if nxt not in deps:
                    deps[nxt] = 0
                    todo.append(nxt)
                deps[nxt] += 1
    return deps


@pytest.mark.parametrize("kind", [*KINDS, "function", "leaf"])
def test_dependency_counting_matches_a_walk_of_next_functions(kind):
    # _dependencies reads lone edges without a loop and never walks an edgeless node
    if kind == "function":  # Function nodes: a two-input one (tuple edges) and a one-input one (a lone edge)
        class Product(dc.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x, y)
                return x * y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y, g * x

        a = dc.tensor([1.0, 2.0], requires_grad=True)
        loss = (Product.apply(a, a * a) + Product.apply(a, dc.ones(2))).sum()
        root = loss.grad_fn
    elif kind == "leaf":
        root = G.grad_accumulator(dc.tensor([1.0], requires_grad=True))
    else:
        loss, _, _ = _graph(kind)
        root = loss.grad_fn
    assert G._dependencies((root,)) == _reference_dependencies(root)


def test_a_view_meta_starts_as_an_autograd_meta_does():
    # ViewMeta.__init__ writes AutogradMeta's fields itself: every one of them, with its default
    from dispatchcore.autograd.kernels import CREATION_NO_GRAD, ViewMeta
    from dispatchcore.tensor import AutogradMeta

    plain, view = AutogradMeta(), ViewMeta(CREATION_NO_GRAD, 3)
    for name in AutogradMeta.__slots__:
        assert getattr(view, name, None) is getattr(plain, name, None)  # outdated_accumulator: unset
    assert (view.creation_meta, view.attr_version) == (CREATION_NO_GRAD, 3)


@pytest.mark.parametrize("index", [0, 1])
def test_a_node_with_one_edge_runs_only_that_input_formula_in_its_place(index):
    # BuiltinNode.apply reads a lone edge's place (Note [Flat edges]) instead of a tuple of Nones
    x = dc.tensor([1.0, -2.0, 3.0])
    leaf = dc.tensor([0.5, 4.0, -1.0], requires_grad=True)
    out = x * leaf if index else leaf * x
    node, go = out.grad_fn, dc.tensor([1.0, 2.0, 3.0])
    assert [e is None for e, _ in node.next_functions] == [i != index for i in range(2)]
    with dc.no_grad(), dc.trace() as t:
        grads = node.apply((go,))
    assert len(grads) == 2 and grads[1 - index] is None
    assert grads[index].tolist() == (go * x).tolist()
    assert t.text().count("[call] op=[aten::mul.Tensor]") == 1  # the other input's formula never ran
    assert node.apply((go,), {object()}) == (None, None)  # its edge not needed (autograd.grad's inputs)
    assert node.apply((None,)) == (None, None)
