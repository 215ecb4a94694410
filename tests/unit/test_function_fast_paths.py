"""The fast paths of custom Functions (Note [Function fast paths], dispatchcore/autograd/function.py).

Every case runs twice on fresh, equal inputs: once through ``Function.apply`` /
``BackwardCFunction.apply`` (the fast paths where they apply) and once through the general path
(``_apply_general`` / ``BackwardCFunction._apply_general``), and both must give the same graph
(grad_fn names, next_functions), node state, saved tensors, outputs, gradients, dispatch trace
and errors.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import dispatchcore as dc
from dispatchcore.autograd import BackwardCFunction, Function, once_differentiable
from dispatchcore.autograd import function as F


@pytest.fixture(autouse=True)
def _grad_state_restored():
    yield
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()


# --- Functions covering every branch --------------------------------------------------------
class MyReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0)


class MulConst(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0001

    @staticmethod
    def backward(ctx, g):
        return g * 1.0001


class SaveOutput(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y, None)
        ctx.saved_data["k"] = 1
        return y

    @staticmethod
    def backward(ctx, g):
        y, none = ctx.saved_tensors
        assert none is None and ctx.saved_data["k"] == 1
        return g * y


class TwoInputs(Function):
    @staticmethod
    def forward(ctx, a, k, b):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b * k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (g * b * ctx.k if ctx.needs_input_grad[0] else None, None,
                g * a * ctx.k if ctx.needs_input_grad[2] else None)


class Ident(Function):  # an input returned as-is: the general path makes its alias
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


class Dirty(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


class ArgMax(Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        ctx.mark_non_differentiable(y)
        return y

    @staticmethod
    def backward(ctx, g):
        return g * 2


class NoMaterialize(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        assert g2 is None
        return g1 * 2


class Once(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class IntOut(Function):  # an integer output is not differentiable
    @staticmethod
    def forward(ctx, x):
        return (x > 0).to(dc.int64)

    @staticmethod
    def backward(ctx, g):
        return None


class Broadcast(Function):  # backward's gradient must be summed to the input's shape
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g.expand(3, 2)


class Float64Grad(Function):  # backward's gradient must be cast to the input's dtype
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return (g * 2).to(dc.float64)


class SurplusNones(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, None, None


class ToDouble(Function):  # the output's metadata differs from the input's (Note [One-tensor metadata])
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.to(dc.float64) * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return (g * 2).to(x.dtype)


class SaveOther(Function):  # saves a tensor that is neither input nor output (Note [A Function's saved input])
    @staticmethod
    def forward(ctx, x):
        k = x.detach() + 1
        ctx.save_for_backward(k)
        return x * k

    @staticmethod
    def backward(ctx, g):
        (k,) = ctx.saved_tensors
        return g * k


class StarForward(Function):  # forward takes *args: one argument arrives as with a star call
    @staticmethod
    def forward(ctx, *args):
        assert len(args) == 1
        ctx.save_for_backward(*args)
        return args[0] * 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert x.requires_grad
        return g * 3


CASES = [
    (MyReLU, lambda: (dc.tensor([-1.0, 2.0, 3.0], requires_grad=True),)),
    (MulConst, lambda: (dc.tensor([1.0, 2.0], requires_grad=True) * 1.0,)),  # a non-leaf input
    (SaveOutput, lambda: (dc.tensor([0.5, 1.0], requires_grad=True),)),
    (TwoInputs, lambda: (dc.tensor([1.0, 2.0], requires_grad=True), 3.0, dc.tensor([4.0, 5.0]))),
    (Ident, lambda: (dc.tensor([1.0, 2.0], requires_grad=True),)),
    (Dirty, lambda: (dc.tensor([1.0, 2.0], requires_grad=True) * 1.0,)),
    (ArgMax, lambda: (dc.tensor([1.0, 2.0], requires_grad=True),)),
    (NoMaterialize, lambda: (dc.tensor([1.0, 2.0], requires_grad=True),)),
    (Once, lambda: (dc.tensor([1.0, 2.0], requires_grad=True),)),
    (IntOut, lambda: (dc.tensor([1.0, -2.0], requires_grad=True),)),
    (Broadcast, lambda: (dc.tensor([1.0, 2.0], requires_grad=True),)),
    (Float64Grad, lambda: (dc.tensor([1.0, 2.0], requires_grad=True),)),
    (SurplusNones, lambda: (dc.tensor([1.0, 2.0], requires_grad=True),)),
    (MyReLU, lambda: (dc.tensor([1.0, 2.0]),)),  # nothing requires grad: no node
    (MyReLU, lambda: (dc.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)[0],)),  # a view input
    (MyReLU, lambda: (dc.tensor([1.0, -2.0], dtype=dc.float64, requires_grad=True),)),
    (ToDouble, lambda: (dc.tensor([1.0, -2.0], requires_grad=True),)),
    (ToDouble, lambda: (dc.tensor([[1.0], [-2.0]], requires_grad=True) * 1.0,)),
    (SaveOther, lambda: (dc.tensor([1.0, -2.0], requires_grad=True),)),
    (StarForward, lambda: (dc.tensor([1.0, -2.0], requires_grad=True),)),
    (MyReLU, lambda: (_leaf_with_accumulator(),)),  # a leaf whose AccumulateGrad exists already
]


def _leaf_with_accumulator() -> Any:
    x = dc.tensor([1.0, -2.0], requires_grad=True)
    (x * 1.0).sum().backward()  # makes and caches x's AccumulateGrad
    x.grad = None
    return x


# --- the two paths ----------------------------------------------------------------------------
def _general_backward(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BackwardCFunction, "apply", lambda self, grads: self._apply_general(grads))


def _edge(edge: Any) -> Any:
    node, nr = edge
    return (None if node is None else type(node).__name__, nr)


def _node_state(node: Any) -> Any:
    if node is None:
        return None
    return (type(node).__name__, node.name(), tuple(_edge(e) for e in node.next_functions),
            node.needs_input_grad, node._is_tensor_input, node._input_meta, node._output_meta,
            node._num_outputs, node.materialize_grads, len(node._saved_variables))


def _summary(out: Any, args: tuple[Any, ...]) -> Any:
    outs = out if isinstance(out, tuple) else (out,)
    summary: list[Any] = []
    for o in outs:
        if not isinstance(o, dc.Tensor):
            summary.append(o)
            continue
        summary.append((o.tolist(), o.requires_grad, o._output_nr, o.grad_fn is not None and type(o.grad_fn).__name__,
                        [i for i, a in enumerate(args) if a is o], o._base is not None, o._vc and o._vc[0]))
    node = next((o.grad_fn for o in outs if isinstance(o, dc.Tensor) and o.grad_fn is not None), None)
    if node is not None and node._saved_variables:
        saved = node.saved_tensors
        summary.append([None if s is None else (s.tolist(), [i for i, a in enumerate(args) if a is s],
                                                s.grad_fn is node) for s in saved])
    summary.append(_node_state(node))
    return summary


def _backward(out: Any, args: tuple[Any, ...]) -> Any:
    first = out[0] if isinstance(out, tuple) else out
    if not first.requires_grad:
        return None
    first.sum().backward()
    return [None if not isinstance(a, dc.Tensor) or a.grad is None else a.grad.tolist() for a in args]


def _normalize(text: str) -> str:
    return re.sub(r"object at 0x[0-9a-f]+", "object", text)


def _run(fn: type[Function], make_args: Any, general: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    args = make_args()
    with monkeypatch.context() as m:
        if general:
            _general_backward(m)
        with dc.trace() as t:
            out = F._apply_general(fn, args, {}) if general else fn.apply(*args)
            summary = _summary(out, args)
            grads = _backward(out, args)
    return summary, grads, _normalize(t.text()), [(e.kind, e.detail) for e in t.events]


@pytest.mark.parametrize("fn, make_args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_fast_and_general_paths_agree(fn, make_args, monkeypatch):
    fast = _run(fn, make_args, False, monkeypatch)
    general = _run(fn, make_args, True, monkeypatch)
    assert fast[0] == general[0]  # outputs, graph, node state, saved tensors
    assert fast[1] == general[1]  # gradients
    assert fast[2] == general[2]  # the dispatch trace, hop by hop
    assert fast[3] == general[3]


@pytest.mark.parametrize("fn, make_args", CASES[:4], ids=[c[0].__name__ for c in CASES[:4]])
def test_fast_paths_agree_without_tracing_and_under_no_grad_and_inference_mode(fn, make_args, monkeypatch):
    for ctx in (dc.enable_grad, dc.no_grad, dc.inference_mode):
        results = []
        for general in (False, True):
            args = make_args()
            with monkeypatch.context() as m:
                if general:
                    _general_backward(m)
                with ctx():
                    out = F._apply_general(fn, args, {}) if general else fn.apply(*args)
                results.append((_summary(out, args), None if ctx is not dc.enable_grad else _backward(out, args)))
        assert results[0] == results[1]


def test_one_tensor_call_takes_the_fast_path(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the general path ran")

    monkeypatch.setattr(F, "_apply_general", refuse)
    monkeypatch.setattr(F, "_wrap_outputs", refuse)
    monkeypatch.setattr(BackwardCFunction, "_apply_general", refuse)
    x = dc.tensor([-1.0, 2.0], requires_grad=True)
    y = MyReLU.apply(x)
    assert y.grad_fn.needs_input_grad is F._ONE_TENSOR and y.grad_fn._is_tensor_input is F._ONE_TENSOR
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]
    z = MulConst.apply(MulConst.apply(x))  # a non-leaf input: its edge is read directly
    assert z.grad_fn.next_functions[0][0] is not None
    assert type(z.grad_fn.next_functions[0][0]).__name__ == "MulConstBackward"


@pytest.mark.parametrize("fn, make_args", [CASES[4], CASES[5], CASES[6], CASES[9]],
                         ids=["as-is", "dirty", "non-differentiable", "integer"])
def test_marked_aliased_and_integer_outputs_go_through_wrap_outputs(fn, make_args, monkeypatch):
    calls = []
    real = F._wrap_outputs
    monkeypatch.setattr(F, "_wrap_outputs", lambda *a: calls.append(1) or real(*a))
    fn.apply(*make_args())
    assert calls == [1]


def test_keywords_and_setup_context_go_the_general_way(monkeypatch):
    class Scale(Function):
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    calls = []
    real = F._apply_general
    monkeypatch.setattr(F, "_apply_general", lambda *a: calls.append(1) or real(*a))
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    Scale.apply(x).sum().backward()
    TwoInputs.apply(x, 2.0, b=dc.ones(2))
    assert calls == [1, 1] and x.grad.tolist() == [3.0, 3.0]


# --- backward: the fast checks fall back to the general ones -------------------------------------
def _node(fn: type[Function], *args: Any) -> Any:
    return fn.apply(*args).grad_fn


@pytest.mark.parametrize("grad", [
    lambda: dc.ones(2),  # fits: returned as is
    lambda: dc.ones(3, 2),  # summed to the input's shape
    lambda: dc.ones(1, 2),
    lambda: dc.ones(2, dtype=dc.float64),  # cast to the input's dtype
    lambda: dc.ones(2, dtype=dc.int64),  # the complex/floating check
    lambda: dc.ones(3),  # not broadcastable: torch's error
    lambda: 3.0,  # not a tensor: torch's error
    lambda: None,
], ids=["fits", "sum-to", "lead-dim", "float64", "int64", "bad-shape", "not-tensor", "none"])
def test_backward_fast_and_general_checks_agree(grad, monkeypatch):
    class Returns(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return grad()

    results = []
    for general in (False, True):
        node = _node(Returns, dc.tensor([1.0, 2.0], requires_grad=True))
        try:
            out = node._apply_general((dc.ones(2),)) if general else node.apply((dc.ones(2),))
        except RuntimeError as e:
            results.append(str(e))
            continue
        results.append([None if g is None else (g.tolist(), g.dtype, tuple(g.shape)) for g in out])
    assert results[0] == results[1]


@pytest.mark.parametrize("result", [
    lambda: (dc.ones(2), 1.0),  # a gradient for a non-tensor input
    lambda: (dc.ones(2),),  # too few
    lambda: (dc.ones(2), None, dc.ones(2), None),  # too many
    lambda: (dc.ones(2), None, dc.ones(2), None, None),  # surplus Nones are dropped
    lambda: (dc.ones(5), None, 2.0),  # bad shape first, then a non-tensor: the type error comes first
], ids=["non-tensor-input", "too-few", "too-many", "surplus-nones", "order-of-errors"])
def test_backward_count_and_type_errors_agree(result, monkeypatch):
    class Three(Function):
        @staticmethod
        def forward(ctx, a, k, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return result()

    results = []
    for general in (False, True):
        node = _node(Three, dc.tensor([1.0, 2.0], requires_grad=True), 2, dc.tensor([1.0, 1.0], requires_grad=True))
        try:
            out = node._apply_general((dc.ones(2),)) if general else node.apply((dc.ones(2),))
        except RuntimeError as e:
            results.append(str(e))
            continue
        results.append([None if g is None else g.tolist() for g in out])
    assert results[0] == results[1]


def test_materialized_grads_agree():
    for general in (False, True):
        x = dc.tensor([1.0, 2.0], requires_grad=True)

        class Two(Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                assert g2.tolist() == [0.0, 0.0]
                return g1 * 2 + g2

        node = Two.apply(x)[0].grad_fn
        out = node._apply_general((dc.ones(2), None)) if general else node.apply((dc.ones(2), None))
        assert out[0].tolist() == [2.0, 2.0]


# --- per-class decisions -----------------------------------------------------------------------
def test_decisions_follow_assigned_methods_in_subclasses_too():
    class Base(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Sub(Base):
        pass

    x = dc.tensor([1.0], requires_grad=True)
    Sub.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0]
    Base.backward = staticmethod(lambda ctx, g: g * 5)  # seen by the subclass's node
    x.grad = None
    Sub.apply(x).sum().backward()
    assert x.grad.tolist() == [5.0]

    Sub.vjp = staticmethod(lambda ctx, g: g * 7)  # both backward and vjp: torch's error at backward
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Sub.apply(x).sum().backward()
    del Sub.vjp
    x.grad = None
    Sub.apply(x).sum().backward()
    assert x.grad.tolist() == [5.0]

    Sub.forward = staticmethod(lambda x: x * 3)  # with setup_context, forward takes no ctx
    Sub.setup_context = staticmethod(lambda ctx, inputs, output: None)
    assert Sub._custom_setup and not Base._custom_setup
    assert Sub.apply(x).tolist() == [3.0]
    del Sub.setup_context, Sub.forward
    assert not Sub._custom_setup and Sub.apply(x).tolist() == [2.0]


def test_vjp_alone_is_the_backward():
    class V(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 4

    x = dc.tensor([1.0], requires_grad=True)
    V.apply(x).sum().backward()
    assert x.grad.tolist() == [4.0]


def test_saved_input_modified_in_place_raises_on_the_fast_path():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    y = MyReLU.apply(a)
    a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_save_for_backward_of_a_non_tensor_raises_on_the_fast_path():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        Bad.apply(dc.tensor([1.0], requires_grad=True))
    assert Bad.apply(dc.tensor([1.0])).tolist() == [2.0]  # nothing recorded, nothing checked


def test_hooks_run_on_fast_path_nodes():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    y = MulConst.apply(x)
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append("hook"))
    y.grad_fn.register_prehook(lambda go: seen.append("prehook"))
    y.register_hook(lambda g: seen.append("tensor") or g * 2)
    y.sum().backward()
    assert seen == ["tensor", "prehook", "hook"]
    assert x.grad.tolist() == pytest.approx([2.0002, 2.0002])


def test_function_registered_as_kernel_uses_the_fast_path():
    lib = dc.Library("dc_test_fn_fast", "DEF")
    lib.define("mulc(Tensor x) -> Tensor")
    lib.impl("mulc", lambda x: x * 1.0001, "CompositeExplicitAutograd")
    lib.impl("mulc", MulConst, "Autograd")
    x = dc.tensor([1.0], requires_grad=True)
    y = dc.ops.dc_test_fn_fast.mulc.default(x)
    assert type(y.grad_fn).__name__ == "MulConstBackward"
    y.backward()
    assert x.grad.tolist() == pytest.approx([1.0001])


def test_nodes_of_one_input_and_output_share_their_metadata_tuples():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    a, b = MulConst.apply(x).grad_fn, MulConst.apply(x).grad_fn
    assert a._input_meta is b._input_meta  # the leaf's, kept by its accumulator (Note [Leaf metadata])
    y = MulConst.apply(x)
    c, d = MulConst.apply(y).grad_fn, MulConst.apply(y).grad_fn
    assert c._input_meta is d._input_meta is c._output_meta is a._output_meta  # one tuple, shared
    assert a._input_meta == c._input_meta == (((2,), dc.float32, x.device),)
    c = MulConst.apply(dc.ones(3, dtype=dc.float64, requires_grad=True)).grad_fn
    assert c._input_meta == c._output_meta == (((3,), dc.float64, x.device),) and c._input_meta is not a._input_meta


# --- Note [Bare Function nodes], [One-tensor metadata], [A Function's saved input] ----------------
def test_bare_nodes_have_every_slot_node_init_sets():
    from dispatchcore.autograd.graph import Node

    slots = [n for n in Node.__slots__ if n != "__weakref__"]
    made = MyReLU._backward_cls()  # through Node.__init__
    assert all(hasattr(made, n) for n in slots)
    seen = []

    class Peek(Function):
        @staticmethod
        def forward(ctx, x, *rest):
            seen.append(ctx)
            return x * 2

        @staticmethod
        def backward(ctx, g, *rest):
            return (g * 2, *(None for _ in rest))

    leaf = dc.tensor([1.0], requires_grad=True)
    recorded = [Peek.apply(x).grad_fn for x in (leaf, leaf * 1.0, dc.ones(2, 2, requires_grad=True)[0])]
    assert seen == recorded
    for ctx in recorded:
        assert all(hasattr(ctx, n) for n in slots) and ctx._extras is None
    # a ctx that records nothing has empty edges, as Node.__init__ leaves them
    Peek.apply(dc.tensor([1.0]))
    Peek.apply(dc.tensor([1.0]), 3)
    with dc.no_grad():
        Peek.apply(leaf)
    for ctx in seen[3:]:
        assert all(hasattr(ctx, n) for n in slots)
        assert ctx.next_functions == () and ctx._extras is None
    assert [c._seq for c in seen] == sorted(c._seq for c in seen) and made._seq < seen[0]._seq


def test_node_sequence_numbers_keep_their_order():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    a = MyReLU.apply(x)
    b = x * 2
    c = MyReLU.apply(b)
    assert a.grad_fn._seq < b.grad_fn._seq < c.grad_fn._seq


def test_one_tensor_metadata_memo_follows_dtype_device_and_shape():
    f32, f64 = dc.tensor([1.0, 2.0]), dc.tensor([1.0, 2.0], dtype=dc.float64)
    assert F._one_meta(f32) == (((2,), dc.float32, f32.device),)
    assert F._one_meta(f64) == (((2,), dc.float64, f64.device),)
    assert F._one_meta(dc.ones(3)) == (((3,), dc.float32, f32.device),)
    assert F._one_meta(dc.ones(3, dtype=dc.int64)) == (((3,), dc.int64, f32.device),)
    assert F._last_one[2] is False  # an integer dtype: not differentiable
    assert F._one_meta(dc.ones(3)) is F._one_meta(dc.ones(3))
    assert F._last_one[2] is True
    # an output of another dtype, shape or kind than the input's goes through the memo's miss
    x = dc.tensor([1.0, -2.0], requires_grad=True)
    y = ToDouble.apply(x)
    assert y.grad_fn._input_meta == (((2,), dc.float32, x.device),)
    assert y.grad_fn._output_meta == (((2,), dc.float64, x.device),)
    z = IntOut.apply(x)
    assert z.grad_fn is None and not z.requires_grad


def test_saved_input_is_a_plain_saved_tensor_and_checks_versions():
    from dispatchcore.autograd.graph import SavedTensor

    x = dc.tensor([1.0, -2.0], requires_grad=True)
    with dc.no_grad():
        x.mul_(1.0)  # version 1 before the save: the saved version is read, not assumed 0
    node = MyReLU.apply(x).grad_fn
    (saved,) = node._saved_variables
    general = SavedTensor(x)
    assert type(saved) is SavedTensor
    assert (saved._tensor, saved._version, saved._output) == (general._tensor, 1, general._output)
    with dc.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="is at version 2; expected version 1"):
        _ = node.saved_tensors


def test_saving_an_inference_tensor_raises_on_both_paths():
    with dc.inference_mode():
        inf = dc.ones(2)

    class SaveInference(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(inf)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    errors = []
    for general in (False, True):
        x = dc.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            F._apply_general(SaveInference, (x,), {}) if general else SaveInference.apply(x)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "Inference tensors cannot be saved for backward" in errors[0]


# --- Note [One-argument forward call]: an input returned as is ----------------------------------


def test_an_input_returned_as_is_by_a_one_argument_forward_gets_an_alias():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    fast, general = Ident.apply(x), F._apply_general(Ident, (x,), {})
    for y in (fast, general):
        assert y is not x and y._base is x and type(y.grad_fn).__name__ == "IdentBackward"
    assert _summary(fast, (x,)) == _summary(general, (x,))
