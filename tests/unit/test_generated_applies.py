"""Each built-in node's generated ``apply`` and release do what ``BuiltinNode``'s do (issue #19).

Note [Generated applies] writes every derivative's ``apply`` and ``_release_variables`` as
straight-line Python. The interpreter (``BuiltinNode``'s methods) stays the reference: each
scenario here runs once with the generated methods and once with every node class sent back
to the interpreter, and both runs must give the same gradients (values, dtypes, layouts), the
same calls seen by a mode, the same dispatch trace and the same errors. The scenarios cover
what the interpreter handles: a lone edge, the gradients only some inputs need
(``autograd.grad``), broadcast and dtype-cast gradients, saved outputs, wrapped numbers, tensor
lists, ``grad_input_mask``, several differentiable outputs, freed and modified saved values,
double backward and CopySlices.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import kernels as K


@pytest.fixture
def interpreted(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it to send every derivative's node class back to ``BuiltinNode``'s methods for the test."""

    def use_interpreter() -> None:
        for d in K._derivatives.values():
            monkeypatch.setattr(d.node_class, "apply", K.BuiltinNode.apply)
            monkeypatch.setattr(d.node_class, "_release_variables", K.BuiltinNode._release_variables)

    return use_interpreter


def _leaves(*shapes: tuple[int, ...]) -> list[Any]:
    """float32 leaves that require grad, the same values on every call."""
    r = np.random.default_rng(0)
    return [dc.tensor(r.standard_normal(s).astype(np.float32), requires_grad=True) for s in shapes]


def _mlp() -> tuple[Any, list[Any]]:
    x, w1, w2, y = _leaves((4, 6), (6, 5), (5, 3), (4, 3))
    x.requires_grad_(False)
    y.requires_grad_(False)
    d = (x @ w1).relu() @ w2 - y
    return (d * d).mean(), [w1, w2]


def _broadcast() -> tuple[Any, list[Any]]:
    a, b = _leaves((3, 1), (3, 4))
    return (a * b + a).sum(), [a, b]  # a's gradients are summed back to (3, 1) (validate_outputs)


def _dtype_cast() -> tuple[Any, list[Any]]:
    a = dc.tensor([1.0, -2.0, 3.0], dtype=dc.float64, requires_grad=True)
    b = dc.tensor([0.5, 4.0, -1.0], requires_grad=True)  # float32: its gradient is cast back
    # one-formula nodes whose float64 gradient is cast back to float32 (the inline check fails)
    return (a * b).sum() + b.sum(dtype=dc.float64) * b.mean(dtype=dc.float64), [a, b]


def _lone_edges() -> tuple[Any, list[Any]]:
    (x,) = _leaves((5,))
    c = dc.arange(5.0)
    return ((c - x) * 2.0 + (x / 3.0)).exp().sum(), [x]  # sub's edge is its second input only


def _saved_outputs() -> tuple[Any, list[Any]]:
    (x,) = _leaves((2, 3))
    return (x.tanh() * x.sigmoid() + x.exp()).sum(), [x]


def _tensor_lists() -> tuple[Any, list[Any]]:
    a, b = _leaves((2, 3), (2, 3))
    idx = dc.tensor([1, 0, 1])
    return (dc.stack([a, b]).sum(0) * dc.cat([a, b], 1)[:, :3] + a[idx].sum(0)).sum(), [a, b]


def _mask_formula() -> tuple[Any, list[Any]]:
    x, lo, hi = _leaves((6,), (6,), (6,))
    lo.requires_grad_(False)  # grad_input_mask is (True, False, True)
    return (x.clamp(lo, hi) * 3.0).sum() + dc.atan2(x, hi).sum(), [x, hi]


def _several_outputs() -> tuple[Any, list[Any]]:
    (x,) = _leaves((3, 4))
    v, m = dc.var_mean(x, 1)
    lo, hi = x.split(2, 1)
    return (v * m).sum() + (lo * hi).sum(), [x]


def _copy_slices() -> tuple[Any, list[Any]]:
    (x,) = _leaves((4,))
    y = x * 1.0
    y[1:3].mul_(x[:2])  # an in-place op on a view: CopySlices runs MulBackward0 unvalidated
    return y.sum(), [x]


SCENARIOS = {"mlp": _mlp, "broadcast": _broadcast, "dtype cast": _dtype_cast, "lone edges": _lone_edges,
             "saved outputs": _saved_outputs, "tensor lists": _tensor_lists, "grad_input_mask": _mask_formula,
             "several outputs": _several_outputs, "copy slices": _copy_slices}


def _gradients(grads: Any) -> list[Any]:
    return [None if g is None else (g.tolist(), g.dtype, g.shape, g.stride(), g._base is None) for g in grads]


def _normalize(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x?", text)


def _run(build: Callable[[], tuple[Any, list[Any]]], how: str) -> Any:
    loss, leaves = build()
    if how == "backward":
        loss.backward()
        return _gradients(t.grad for t in leaves)
    if how == "grad of the first":  # the engine's needed set (Note [Only the needed gradients])
        return _gradients(dc.autograd.grad(loss, leaves[:1]))
    if how == "logged":
        with dc.LoggingMode() as log:
            loss.backward()
        return log.lines, _gradients(t.grad for t in leaves)
    with dc.trace() as t:  # "traced"
        loss.backward()
    return _normalize(t.text())


@pytest.mark.parametrize("how", ["backward", "grad of the first", "logged", "traced"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_generated_applies_give_the_interpreters_gradients_calls_and_trace(name, how, interpreted):
    generated = _run(SCENARIOS[name], how)
    interpreted()
    assert _run(SCENARIOS[name], how) == generated


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_double_backward_through_generated_applies_matches_the_interpreter(name, interpreted):
    def second_order() -> Any:
        loss, leaves = SCENARIOS[name]()
        grads = dc.autograd.grad(loss, leaves, create_graph=True)
        total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
        if not isinstance(total, dc.Tensor):
            return _gradients(grads)
        return _gradients(dc.autograd.grad(total, leaves, allow_unused=True))

    generated = second_order()
    interpreted()
    assert second_order() == generated


def _error(fn: Callable[[], None]) -> str:
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def test_a_freed_or_modified_saved_value_raises_the_interpreters_error(interpreted):
    def freed() -> str:
        loss, _ = _mlp()
        loss.backward()
        return _error(loss.backward)

    def modified() -> str:
        (x,) = _leaves((3,))
        h = x * 2.0
        loss = (h * h).sum()
        h.add_(1.0)  # h is saved by MulBackward0
        return _error(loss.backward)

    def saved_output_modified() -> str:
        (x,) = _leaves((3,))
        y = x.exp()
        loss = y.sum()
        y.mul_(2.0)  # exp saves its output
        return _error(loss.backward)

    generated = [freed(), modified(), saved_output_modified()]
    interpreted()
    assert [freed(), modified(), saved_output_modified()] == generated
    assert "second time" in generated[0] and "modified by an inplace operation" in generated[1]


def test_every_derivative_gets_a_generated_apply_and_release_with_their_source():
    for d in K._derivatives.values():
        assert d.node_class.apply in (K._apply_first, d.generated_apply)  # written on first call
        assert d.generated_apply.source.startswith("def apply(self, grads, keep=None, validate=True):")
        assert d.generated_release.source.startswith("def release(self):")
    mm = K._derivatives["aten::mm"].generated_apply.source
    # mm's saved inputs are unpacked first, in the plan's order, then its formulas run in torch's order
    assert mm.index("v.get('mat2')") < mm.index("v.get('self')") < mm.index("r1 = f1(") < mm.index("r0 = f0(")
    # its release frees the two saved tensors, and reads none of the four metadata values
    release = K._derivatives["aten::mm"].generated_release.source
    assert release.count("values.get(") == 2 and "_shape" not in release


def test_a_node_class_runs_its_generated_methods_from_its_first_backward_on():
    d = K._derivatives["aten::mm"]
    (a,) = _leaves((2, 3))
    (a @ a.t()).sum().backward()  # MmBackward0 has run at least once in this process now
    assert d.node_class.apply is d.generated_apply
    assert d.node_class._release_variables is d.generated_release


def test_generated_release_frees_what_the_interpreter_frees(interpreted):
    def released() -> list[Any]:
        (x,) = _leaves((3,))
        nodes = []
        y = x
        for op in (lambda t: t * 1.5, lambda t: t * 1.5, lambda t: t.exp(), lambda t: t * x, lambda t: t + 2.0):
            y = op(y)
            nodes.append(y.grad_fn)
        shared = nodes[0]._values
        y.sum().backward()
        return [(n._values is shared, {k: (type(v).__name__, getattr(v, "_tensor", v) is K._FREED_MARK)
                                       for k, v in n._values.items()}) for n in nodes]

    generated = released()
    interpreted()
    assert released() == generated
    assert generated[0][0] is False and generated[0][1]["other"] == ("SavedTensor", True)  # the copy, freed


def test_threads_racing_to_the_first_backward_leave_one_apply_on_the_class_and_the_derivative(monkeypatch):
    import threading

    d = K._derivatives["aten::mm"]
    monkeypatch.setattr(d.node_class, "apply", K._apply_first)  # as before the class's first call
    monkeypatch.setattr(d.node_class, "_release_variables", K._release_first)
    monkeypatch.delitem(d.__dict__, "_apply", raising=False)
    monkeypatch.delitem(d.__dict__, "_release", raising=False)
    start, grads, errors = threading.Barrier(8), [], []

    def backward() -> None:
        try:
            (a,) = _leaves((3, 4))
            start.wait()
            (a @ a.t()).sum().backward()
            grads.append(a.grad.tolist())
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=backward) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(grads) == 8 and all(g == grads[0] for g in grads)
    assert d.node_class.apply is d.generated_apply and d.node_class._release_variables is d.generated_release
