"""fx.py: make_fx graphs (structure, users, naming, printing, running), decompositions, backward capture, errors."""

from __future__ import annotations

import collections
import doctest
import operator
import textwrap

import numpy as np
import pytest

import dispatchcore as dc
import dispatchcore.nn.functional as F
from dispatchcore import fx
from dispatchcore.fake_tensor import FakeTensor, FakeTensorMode
from dispatchcore.fx import GraphModule, core_aten_decompositions, make_fx
from dispatchcore.modes import _modes_get
from dispatchcore.tls import tls_get

aten = dc.ops.aten


@pytest.fixture(autouse=True)
def _no_mode_leaks():
    before_modes, before_keys = _modes_get(), tls_get()
    yield
    assert _modes_get() == before_modes, "a test leaked a dispatch mode"
    assert tls_get() == before_keys


def calls(gm: GraphModule) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def assert_same(got, expected) -> None:
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e)
    elif isinstance(expected, dc.Tensor):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6)
    else:
        assert got == expected


def f_two_outputs(x, y):
    a = x * y
    b = a * 2
    return b.sum(), a + 1


# --- graph structure ------------------------------------------------------------------------
def test_graph_holds_placeholders_calls_and_output_in_call_order():
    gm = make_fx(f_two_outputs)(dc.ones(2, 3), dc.ones(2, 3))
    nodes = gm.graph.nodes
    assert [(n.op, n.name) for n in nodes] == [
        ("placeholder", "x_1"), ("placeholder", "y_1"), ("call_function", "mul"),
        ("call_function", "mul_1"), ("call_function", "sum_1"), ("call_function", "add"),
        ("output", "output")]
    x, y, mul, mul_1, sum_1, add, out = nodes
    assert mul.target is aten.mul.Tensor and mul.args == (x, y) and mul.kwargs == {}
    assert mul_1.args == (mul, 2) and add.args == (mul, 1)
    assert out.args == ((sum_1, add),)


def test_users_are_the_nodes_taking_a_node_as_argument_in_graph_order():
    gm = make_fx(f_two_outputs)(dc.ones(2, 3), dc.ones(2, 3))
    x, y, mul, mul_1, sum_1, add, out = gm.graph.nodes
    assert list(x.users) == [mul] and list(y.users) == [mul]
    assert list(mul.users) == [mul_1, add]
    assert list(sum_1.users) == [out] and list(add.users) == [out]
    assert list(out.users) == [] and mul.all_input_nodes == [x, y]


def test_meta_holds_a_fake_twin_with_shape_dtype_strides_and_device():
    gm = make_fx(lambda x: x.t().sum(0))(dc.ones(2, 3, dtype=dc.float64))
    x, t, s, _ = gm.graph.nodes
    assert isinstance(t.meta["val"], FakeTensor) and t.meta["val"].device == dc.device("cpu")  # torch's extract_val
    assert tuple(t.meta["val"].shape) == (3, 2) and t.meta["val"].stride() == (1, 3)
    assert t.meta["tensor_meta"] == fx.TensorMetadata((3, 2), dc.float64, False, (1, 3))
    assert s.meta["tensor_meta"].shape == (2,)


def test_placeholder_names_follow_torch_argument_names_and_varargs():
    assert [n.name for n in make_fx(lambda x_1, sum: x_1 + sum)(dc.ones(1), dc.ones(1)).graph.nodes][:2] == [
        "x_1_1", "sum_1"]
    assert [n.name for n in make_fx(lambda *a: a[0] + a[1])(dc.ones(1), dc.ones(1)).graph.nodes][:2] == [
        "arg0_1", "arg1_1"]


def test_node_names_avoid_builtins_and_count_up_per_base():
    gm = make_fx(lambda x: (x.sum(), x.sum(), x.abs(), x.abs(), x.t().t()))(dc.ones(2, 2))
    assert [n.name for n in gm.graph.nodes][1:-1] == ["sum_1", "sum_2", "abs_1", "abs_2", "t", "t_1"]


def test_call_is_recorded_as_torch_hands_it_to_a_mode_defaults_dropped():
    gm = make_fx(lambda x: (x.sum(0), x.sum(0, keepdim=True), x.add(x, alpha=2), dc.zeros(2, dtype=dc.int64)))(
        dc.ones(2, 2))
    s0, s1, add, zeros = gm.graph.nodes[1:5]
    assert (s0.args, s0.kwargs) == ((s0.args[0], [0]), {})
    assert s1.args[1:] == ([0], True)
    assert add.kwargs == {"alpha": 2}
    # the binding's own keywords, as torch's (Note [Binding keywords], factories.py)
    assert zeros.args == ([2],)
    assert zeros.kwargs == {"dtype": dc.int64, "device": dc.device("cpu"), "pin_memory": False}


def test_factories_inside_f_are_recorded_and_feed_later_calls():
    gm = make_fx(lambda x: dc.ones(2) + x)(dc.zeros(2))
    ones, add = gm.graph.nodes[1:3]
    assert ones.target is aten.ones.default and ones.args == ([2],)
    assert add.args == (ones, gm.graph.nodes[0])


def test_untraced_tensors_become_constants_one_attribute_and_one_get_attr_per_use():
    g = dc.tensor([1.0, 2.0])
    gm = make_fx(lambda x: x + g + g)(dc.ones(2))
    assert [(n.op, n.name, n.target) for n in gm.graph.nodes if n.op == "get_attr"] == [
        ("get_attr", "_tensor_constant0", "_tensor_constant0"),
        ("get_attr", "_tensor_constant0_1", "_tensor_constant0")]
    assert gm._tensor_constant0 is g
    assert gm(dc.zeros(2)).tolist() == [2.0, 4.0]


def test_a_parameter_constant_is_named_param_constant():
    p = dc.nn.Parameter(dc.ones(2))
    gm = make_fx(lambda x: x * p)(dc.ones(2))
    assert gm.graph.nodes[1].name == "_param_constant0" and gm._param_constant0 is p


def test_an_in_place_call_makes_its_node_the_tensors_value_from_then_on():
    gm = make_fx(lambda x: x.clone().add_(1).mul_(2))(dc.ones(2))
    clone, add_, mul_ = gm.graph.nodes[1:4]
    assert add_.args == (clone, 1) and mul_.args == (add_, 2)
    assert gm.graph.nodes[-1].args == (mul_,)


def test_each_result_of_a_multi_output_operator_gets_a_getitem_node():
    gm = make_fx(lambda x: x.max(0)[0])(dc.ones(2, 2))
    max_1, getitem, getitem_1 = gm.graph.nodes[1:4]
    assert str(max_1.target) == "aten.max.dim"
    assert (getitem.target, getitem.args, getitem_1.args) == (operator.getitem, (max_1, 0), (max_1, 1))
    assert gm.graph.nodes[-1].args == (getitem,)


def test_an_input_returned_as_is_is_its_placeholder():
    gm = make_fx(lambda x, n: (x, n))(dc.ones(1), 3)
    x, n, out = gm.graph.nodes
    assert out.args == ((x, 3),) and n.meta["val"] == 3


def test_composite_implicit_ops_reaching_the_mode_below_autograd_are_decomposed():
    """Under inference_mode the autograd keys are excluded: softmax.int arrives at the mode itself."""

    def f(x):
        with dc.inference_mode():
            return dc.softmax(x, 1)

    assert calls(make_fx(f)(dc.ones(2, 2))) == ["aten._softmax.default"]


# --- printing -----------------------------------------------------------------------------------
def test_code_reads_like_torchs_graph_module_code():
    gm = make_fx(f_two_outputs)(dc.ones(2, 3), dc.ones(2, 3))
    # torch's layout exactly: three newlines first, a last line of four spaces
    assert gm.code == "\n\n\n" + textwrap.dedent("""\
        def forward(self, x_1, y_1):
            mul = dispatchcore.ops.aten.mul.Tensor(x_1, y_1);  x_1 = y_1 = None
            mul_1 = dispatchcore.ops.aten.mul.Tensor(mul, 2)
            sum_1 = dispatchcore.ops.aten.sum.default(mul_1);  mul_1 = None
            add = dispatchcore.ops.aten.add.Tensor(mul, 1);  mul = None
            return (sum_1, add)
        """) + "    "


def test_code_frees_an_unused_result_and_prints_getitem_constants_and_keywords():
    g = dc.ones(2)
    gm = make_fx(lambda x: (x.max(0)[0] + g, dc.zeros(2, dtype=dc.int64)))(dc.ones(2, 2))
    assert gm.code.strip() == textwrap.dedent("""\
        def forward(self, x_1):
            max_1 = dispatchcore.ops.aten.max.dim(x_1, 0);  x_1 = None
            getitem = max_1[0]
            getitem_1 = max_1[1];  max_1 = getitem_1 = None
            _tensor_constant0 = self._tensor_constant0
            add = dispatchcore.ops.aten.add.Tensor(getitem, _tensor_constant0);  getitem = _tensor_constant0 = None
            zeros = dispatchcore.ops.aten.zeros.default([2], dtype = dispatchcore.int64, {ZEROS_KEYWORDS})
            return (add, zeros)""").format(ZEROS_KEYWORDS="device = device(type='cpu'), pin_memory = False")


def test_print_readable_annotates_dtype_and_shape(capsys):
    gm = make_fx(f_two_outputs)(dc.ones(2, 3), dc.ones(2, 3))
    text = gm.print_readable()
    assert capsys.readouterr().out == text
    assert text == textwrap.dedent("""\
        class f_two_outputs(dispatchcore.fx.GraphModule):
            def forward(self, x_1: "f32[2, 3]", y_1: "f32[2, 3]"):
                mul: "f32[2, 3]" = dispatchcore.ops.aten.mul.Tensor(x_1, y_1);  x_1 = y_1 = None
                mul_1: "f32[2, 3]" = dispatchcore.ops.aten.mul.Tensor(mul, 2)
                sum_1: "f32[]" = dispatchcore.ops.aten.sum.default(mul_1);  mul_1 = None
                add: "f32[2, 3]" = dispatchcore.ops.aten.add.Tensor(mul, 1);  mul = None
                return (sum_1, add)
        """)
    assert gm.print_readable(print_output=False) == text and capsys.readouterr().out == ""


def test_graph_prints_nodes_as_torch_fx_graph_does():
    gm = make_fx(lambda x: x.sum(0, keepdim=True))(dc.ones(2, 2))
    assert str(gm.graph).split("\n") == [
        "graph():",
        "    %x_1 : [num_users=1] = placeholder[target=x_1]",
        "    %sum_1 : [num_users=1] = call_function[target=dispatchcore.ops.aten.sum.dim_IntList]"
        "(args = (%x_1, [0], True), kwargs = {})",
        "    return sum_1"]


def test_a_graph_without_calls_prints_a_valid_body():
    assert make_fx(lambda x: x)(dc.ones(1)).code.strip() == "def forward(self, x_1):\n    return x_1"


# --- running ---------------------------------------------------------------------------------------
def test_graph_module_runs_on_new_inputs_like_the_eager_function():
    def f(x, w, b):
        h = F.relu(F.linear(x, w, b))
        return h.sum(1), h.max(1)[1], dc.softmax(h, 1)

    args = (dc.randn(4, 3), dc.randn(5, 3), dc.randn(5))
    gm = make_fx(f)(*args)
    new = (dc.randn(4, 3), dc.randn(5, 3), dc.randn(5))
    assert_same(gm(*new), f(*new))


def test_the_printed_code_is_python_that_computes_the_same():
    g = dc.tensor([1.0, -2.0])

    def f(x):
        return (x * g).relu().sum(), x.max(0)[0]

    gm = make_fx(f)(dc.ones(2))
    namespace = {"dispatchcore": dc, "device": dc.device}
    exec(compile(gm.code, "<fx>", "exec"), namespace)  # noqa: S102 - checking the generated code
    x = dc.tensor([3.0, 4.0])
    assert_same(namespace["forward"](gm, x), f(x))
    assert_same(gm(x), f(x))


def test_running_with_the_wrong_number_of_inputs_raises_like_python():
    gm = make_fx(lambda x, y: x + y)(dc.ones(1), dc.ones(1))
    with pytest.raises(TypeError, match=r"^forward\(\) takes 3 positional arguments but 2 were given$"):
        gm(dc.ones(1))


# --- decompositions ---------------------------------------------------------------------------------
def _mask(x):
    return x > 0


DECOMPOSED = {  # op -> (a function calling it, example inputs)
    "aten.t.default": (lambda x: x.t(), (dc.randn(2, 3),)),
    "aten.transpose.int": (lambda x: x.transpose(0, -1), (dc.randn(2, 3, 4),)),
    "aten.detach.default": (lambda x: x.detach(), (dc.randn(2),)),
    "aten.sum.default": (lambda x: x.sum(), (dc.randn(2, 3),)),
    "aten.ones.default": (lambda x: dc.ones(2, 3, dtype=dc.float64) + x, (dc.randn(3),)),
    "aten.zeros.default": (lambda x: dc.zeros(3) + x, (dc.randn(3),)),
    "aten.ones_like.default": (lambda x: dc.ones_like(x), (dc.randn(2),)),
    "aten.zeros_like.default": (lambda x: dc.zeros_like(x, dtype=dc.int64), (dc.randn(2),)),
    "aten.new_ones.default": (lambda x: x.new_ones((2, 2)), (dc.randn(2).double(),)),
    "aten.new_zeros.default": (lambda x: x.new_zeros((3,)), (dc.randn(2),)),
    "aten.new_full.default": (lambda x: x.new_full((2,), 7.0), (dc.randn(2),)),
    "aten.threshold_backward.default": (lambda g, x: aten.threshold_backward.default(g, x, 0.5),
                                        (dc.randn(3, 3), dc.randn(3, 3))),
    "aten.masked_fill.Scalar": (lambda x: x.masked_fill(_mask(x), 2.5), (dc.randn(3, 3),)),
    "aten.mse_loss.default": (lambda x, y: (F.mse_loss(x, y), F.mse_loss(x, y, reduction="sum"),
                                            F.mse_loss(x, y, reduction="none")), (dc.randn(3), dc.randn(3))),
    "aten.silu.default": (lambda x: aten.silu.default(x), (dc.randn(4),)),
    "aten.addcmul.default": (lambda x, a, b: dc.addcmul(x, a, b, value=0.5), (dc.randn(3), dc.randn(3), dc.randn(3))),
    "aten.addcdiv.default": (lambda x, a, b: dc.addcdiv(x, a, b, value=2), (dc.randn(3), dc.randn(3), dc.rand(3) + 1)),
    "aten.rsub.Scalar": (lambda x: aten.rsub.Scalar(x, 2.0), (dc.randn(3),)),
    "aten._log_softmax_backward_data.default": (
        lambda g, out: aten._log_softmax_backward_data.default(g, out, 1, dc.float32),
        (dc.randn(2, 3), dc.log_softmax(dc.randn(2, 3), 1))),
}


def test_core_aten_decompositions_hold_the_cases_below():
    # the whole table is checked against torch's in tests/differential/test_vs_torch_decompositions.py
    assert set(DECOMPOSED) <= {str(op) for op in core_aten_decompositions()}


@pytest.mark.parametrize("name", sorted(DECOMPOSED))
def test_each_decomposition_gives_the_operators_own_results(name):
    f, inputs = DECOMPOSED[name]
    plain = make_fx(f)(*inputs)
    lowered = make_fx(f, decomposition_table=core_aten_decompositions())(*inputs)
    assert name in calls(plain)
    assert name not in calls(lowered) and calls(lowered)
    assert_same(lowered(*inputs), f(*inputs))
    assert_same(lowered(*inputs), plain(*inputs))


def test_decompositions_run_under_the_mode_and_apply_again_to_their_own_calls():
    gm = make_fx(lambda x: x.t(), decomposition_table=core_aten_decompositions())(dc.ones(2, 3))
    assert calls(gm) == ["aten.permute.default"]  # t -> transpose.int -> permute
    assert gm.graph.nodes[1].args[1] == [1, 0]


def test_a_user_decomposition_table_replaces_the_operator():
    table = {aten.relu.default: lambda x: aten.clamp_min.default(x, 0)}
    gm = make_fx(lambda x: x.relu() * 2, decomposition_table=table)(dc.randn(4))
    assert calls(gm) == ["aten.clamp_min.default", "aten.mul.Tensor"]
    x = dc.randn(4)
    assert_same(gm(x), x.relu() * 2)


# --- backward capture --------------------------------------------------------------------------------
def mlp(x, w1, b1, w2, b2):
    h = F.linear(x, w1, b1).relu()
    loss = F.linear(h, w2, b2).sum()
    loss.backward()
    return loss, w1.grad, b1.grad, w2.grad, b2.grad


def mlp_inputs():
    return (dc.randn(4, 3), dc.randn(5, 3, requires_grad=True), dc.randn(5, requires_grad=True),
            dc.randn(2, 5, requires_grad=True), dc.randn(2, requires_grad=True))


MLP_OPS = [
    # forward; relu saves its output: a detach under the tracing mode (Note [Detach through Python])
    "aten.t.default", "aten.addmm.default", "aten.relu.default", "aten.detach.default", "aten.t.default",
    "aten.addmm.default", "aten.sum.default",
    # backward: the seed, then AddmmBackward0 of layer 2, its AccumulateGrads (each takes its
    # unshared gradient over with a detach), ReluBackward0 (unpacking relu's output: detach), ...
    "aten.ones_like.default", "aten.expand.default", "aten.t.default", "aten.mm.default", "aten.t.default",
    "aten.mm.default", "aten.t.default", "aten.sum.dim_IntList", "aten.view.default", "aten.detach.default",
    "aten.t.default", "aten.detach.default", "aten.detach.default", "aten.threshold_backward.default",
    "aten.t.default", "aten.mm.default", "aten.t.default", "aten.sum.dim_IntList", "aten.view.default",
    "aten.detach.default", "aten.t.default", "aten.detach.default",
]


def test_backward_inside_f_is_captured_into_a_joint_graph():
    gm = make_fx(mlp)(*mlp_inputs())
    assert calls(gm) == MLP_OPS
    out = gm.graph.nodes[-1].args[0]
    assert [n.name for n in out] == ["sum_1", "detach_5", "detach_4", "detach_2", "detach_1"]


def test_the_saved_relu_output_reaches_its_backward_through_the_two_recorded_detaches():
    """relu's output is saved (detach) and unpacked (detach again) before threshold_backward reads it."""
    gm = make_fx(mlp)(*mlp_inputs())
    by_name = {n.name: n for n in gm.graph.nodes}
    assert by_name["detach"].args == (by_name["relu"],)
    assert by_name["detach_3"].args == (by_name["detach"],)
    assert by_name["threshold_backward"].args == (by_name["mm"], by_name["detach_3"], 0)


def test_the_joint_graph_computes_loss_and_gradients_on_new_inputs():
    gm = make_fx(mlp)(*mlp_inputs())
    inputs = mlp_inputs()
    expected = mlp(*inputs)
    got = gm(*(t.detach() for t in inputs))
    assert_same(got, tuple(t.detach() for t in expected))


def test_autograd_grad_inside_f_is_captured():
    def f(x, w):
        y = (x @ w).tanh().sum()
        (gw,) = dc.autograd.grad(y, [w])
        return y, gw

    gm = make_fx(f)(dc.randn(3, 4), dc.randn(4, 2, requires_grad=True))
    assert calls(gm)[:4] == ["aten.mm.default", "aten.tanh.default", "aten.detach.default", "aten.sum.default"]
    assert calls(gm)[-2:] == ["aten.t.default", "aten.mm.default"]
    x, w = dc.randn(3, 4), dc.randn(4, 2, requires_grad=True)
    assert_same(gm(x, w.detach()), tuple(t.detach() for t in f(x, w)))


def test_the_joint_graph_with_core_decompositions_gives_the_same_gradients():
    gm = make_fx(mlp, decomposition_table=core_aten_decompositions())(*mlp_inputs())
    assert "aten.threshold_backward.default" not in calls(gm) and "aten.where.self" in calls(gm)
    assert "aten.t.default" not in calls(gm)
    inputs = mlp_inputs()
    expected = mlp(*inputs)
    assert_same(gm(*(t.detach() for t in inputs)), tuple(t.detach() for t in expected))


# --- errors -------------------------------------------------------------------------------------------
def test_symbolic_tracing_is_refused_naming_the_missing_shape_env_and_the_modes_there_are():
    with pytest.raises(ValueError, match=r"tracing_mode='symbolic' is not supported; dispatchcore has no ShapeEnv.*"
                                         r"'real' or 'fake'"):
        make_fx(lambda x: x, tracing_mode="symbolic")


def test_an_unknown_tracing_mode_is_refused_with_torchs_words():
    with pytest.raises(ValueError, match=r"^tracing_mode must be real/fake/symbolic, got meta$"):
        make_fx(lambda x: x, tracing_mode="meta")


def test_reading_a_traced_tensors_value_raises_as_torch():
    with pytest.raises(RuntimeError, match=r"^It appears that you're trying to get value out of a tracing tensor "
                                           r"with aten._local_scalar_dense.default - erroring out!"):
        make_fx(lambda x: aten._local_scalar_dense.default(x.sum()))(dc.ones(2))


def test_reading_a_constants_value_is_computed_not_recorded():
    gm = make_fx(lambda x: x * aten._local_scalar_dense.default(dc.tensor(2.0)))(dc.ones(2))
    assert calls(gm) == ["aten.lift_fresh_copy.default", "aten.mul.Tensor"]
    assert gm.graph.nodes[-2].args[1] == 2.0


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_a_value_computed_from_constants_only_is_known_and_burnt_in(tracing_mode):
    def f(x):
        c = dc.tensor(1.0)
        c.add_(1)  # recorded, and its value is computed on the constant
        return x * aten._local_scalar_dense.default(c * 2)

    gm = make_fx(f, tracing_mode=tracing_mode)(dc.ones(2))
    assert calls(gm) == ["aten.lift_fresh_copy.default", "aten.add_.Tensor", "aten.mul.Tensor", "aten.mul.Tensor"]
    assert gm.graph.nodes[-2].args == (gm.graph.nodes[0], 4.0)


def test_a_literal_with_more_than_one_element_has_no_known_value():
    with pytest.raises(RuntimeError, match="It appears that you're trying to get value out of a tracing tensor"):
        make_fx(lambda x: x * aten._local_scalar_dense.default(dc.tensor([1.0, 2.0]).sum()))(dc.ones(2))


# --- tensor literals -------------------------------------------------------------------------------------
@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_a_literal_is_recorded_as_lift_fresh_copy_of_a_tensor_constant(tracing_mode):
    gm = make_fx(lambda x: x + dc.tensor([1.0, 2.0]), tracing_mode=tracing_mode)(dc.ones(2))
    assert gm.code.splitlines() == [
        "", "", "",
        "def forward(self, x_1):",
        "    _tensor_constant0 = self._tensor_constant0",
        "    lift_fresh_copy = dispatchcore.ops.aten.lift_fresh_copy.default(_tensor_constant0);  "
        "_tensor_constant0 = None",
        "    add = dispatchcore.ops.aten.add.Tensor(x_1, lift_fresh_copy);  x_1 = lift_fresh_copy = None",
        "    return add",
        "    "]
    assert type(gm._tensor_constant0) is dc.Tensor and gm._tensor_constant0.tolist() == [1.0, 2.0]
    assert gm(dc.ones(2)).tolist() == [2.0, 3.0]


def test_writing_a_literal_in_place_leaves_the_graphs_constant_unchanged():
    def f(x):
        c = dc.tensor([1.0, 2.0])
        c.add_(x)
        return c

    gm = make_fx(f)(dc.ones(2))
    assert gm(dc.ones(2)).tolist() == gm(dc.ones(2)).tolist() == [2.0, 3.0]
    assert gm._tensor_constant0.tolist() == [1.0, 2.0]


def test_from_numpy_and_tensor_of_an_ndarray_are_lifted_too():
    gm = make_fx(lambda x: x + dc.from_numpy(np.ones(2, np.float32)) + dc.tensor(np.ones(2)))(dc.ones(2))
    assert calls(gm) == ["aten.lift_fresh_copy.default", "aten.add.Tensor", "aten.lift_fresh_copy.default",
                         "aten._to_copy.default", "aten.add.Tensor"]


def test_a_meta_literal_is_not_lifted_it_is_a_plain_constant():
    gm = make_fx(lambda x: x + dc.tensor([1.0, 2.0], device="meta"))(dc.ones(2, device="meta"))
    assert calls(gm) == ["aten.add.Tensor"] and gm.graph.nodes[1].op == "get_attr"


# --- nested inputs (torch's pytree flattening) ---------------------------------------------------------
def test_each_leaf_of_a_nested_input_is_a_placeholder_named_after_its_argument():
    def f(xs, d, y):
        return xs[0] + d["b"][1] + y

    gm = make_fx(f)([dc.ones(2), dc.ones(2)], {"a": 3, "b": (None, dc.ones(2))}, dc.ones(2))
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == [
        "xs_1", "xs_2", "d_1", "d_2", "d_3", "y_1"]
    assert calls(gm) == ["aten.add.Tensor", "aten.add.Tensor"]
    assert gm.graph.nodes[6].args == (gm.graph.nodes[0], gm.graph.nodes[4])


def test_dict_leaves_follow_insertion_order_and_empty_containers_have_none():
    gm = make_fx(lambda d, e: d["a"] - d["b"])({"b": dc.ones(2), "a": dc.zeros(2)}, [])
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["d_1", "d_2"]
    assert gm.graph.nodes[2].args == (gm.graph.nodes[1], gm.graph.nodes[0])


def test_nested_inputs_give_torchs_flattening_code_and_a_flat_output_list():
    gm = make_fx(lambda xs, n: (xs[0] * n, {"k": xs[1]}))([dc.ones(2), dc.ones(2) * 2], 3)
    assert gm.code == "\n\n\n" + textwrap.dedent("""\
        def forward(self, xs, n):
            xs_1, xs_2, n_1, = fx_pytree.tree_flatten_spec([xs, n], self._in_spec)
            mul = dispatchcore.ops.aten.mul.Tensor(xs_1, 3);  xs_1 = None
            return pytree.tree_unflatten([mul, xs_2], self._out_spec)
        """) + "    "
    assert str(gm.graph).splitlines()[-1] == "    return [mul, xs_2]"
    assert repr(gm._in_spec) == "TreeSpec(tuple, None, [TreeSpec(list, None, [*,\n    *]),\n  *])"
    assert repr(gm._out_spec) == "TreeSpec(tuple, None, [*,\n  TreeSpec(dict, ['k'], [*])])"


def test_print_readable_annotates_nested_placeholders_on_a_line_of_their_own():
    gm = make_fx(lambda xs, n: xs[0] * n, tracing_mode="fake")([dc.ones(2), 5], dc.ones(2))
    # torch's layout: the annotations end with "; " and a blank line follows them
    assert gm.print_readable(print_output=False).splitlines() == [
        "class <lambda>(dispatchcore.fx.GraphModule):",
        "    def forward(self, xs, n):",
        '        xs_1: "f32[2]"; n_1: "f32[2]"; ',
        "",
        "        xs_1, xs_2, n_1, = fx_pytree.tree_flatten_spec([xs, n], self._in_spec)",
        '        mul: "f32[2]" = dispatchcore.ops.aten.mul.Tensor(xs_1, n_1);  xs_1 = n_1 = None',
        "        return pytree.tree_unflatten([mul], self._out_spec)"]


def test_a_graph_of_nested_inputs_takes_them_nested_and_returns_fs_structure():
    def f(pair, d):
        return {"sum": pair[0] + pair[1], "scaled": [d["w"] * 2, None]}

    example = ([dc.ones(2), dc.ones(2)], {"w": dc.ones(2)})
    gm = make_fx(f)(*example)
    out = gm([dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0])], {"w": dc.tensor([5.0, 6.0])})
    assert list(out) == ["sum", "scaled"] and out["scaled"][1] is None
    assert out["sum"].tolist() == [4.0, 6.0] and out["scaled"][0].tolist() == [10.0, 12.0]
    with pytest.raises(TypeError, match=r"^forward\(\) missing 1 required positional argument: 'd'$"):
        gm([dc.ones(2), dc.ones(2)])
    with pytest.raises(TypeError, match=r"^forward\(\) takes 3 positional arguments but 4 were given$"):
        gm(*example, 1)


def test_a_tuple_then_a_dict_are_read_as_args_and_kwargs_as_torchs_code_reads_them():
    gm = make_fx(lambda xs, d: xs[0] + d["w"])((dc.ones(2),), {"w": dc.ones(2)})
    assert "fx_pytree.tree_flatten_spec(([xs], {'w':d}), self._in_spec)" in gm.code


def test_fake_tracing_converts_every_tensor_leaf():
    gm = make_fx(lambda xs: xs[0] @ xs[1], tracing_mode="fake")([dc.ones(2, 3, device="meta"),
                                                               dc.ones(3, 4, device="meta")])
    vals = [n.meta["val"] for n in gm.graph.nodes if n.op != "output"]
    assert len(vals) == 3 and all(type(v) is FakeTensor and v.device.type == "meta" for v in vals)


def test_a_fake_leaf_brings_its_own_fake_mode():
    mode = FakeTensorMode()
    x = mode.from_tensor(dc.ones(2))
    gm = make_fx(lambda d: d["x"] * 2, tracing_mode="fake")({"x": x})
    assert gm.graph.nodes[1].meta["val"].fake_mode is mode


def test_tree_flatten_and_unflatten_round_trip_tuples_lists_dicts_and_named_tuples():
    pair = collections.namedtuple("pair", "a b")
    tree = (1, [2, None], {"k": pair(3, (4,))}, [])
    leaves, spec = fx.tree_flatten(tree)
    assert leaves == [1, 2, None, 3, 4] and spec.num_leaves == 5
    assert fx.tree_unflatten(leaves, spec) == tree
    assert type(fx.tree_unflatten(leaves, spec)[2]["k"]) is pair
    with pytest.raises(ValueError, match="`leaves` has length 2"):
        fx.tree_unflatten([1, 2], spec)


def test_an_error_inside_f_leaves_no_mode_behind():
    def f(x):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        make_fx(f)(dc.ones(1))
    assert dc.dispatch_mode_stack() == []


def test_the_module_doctests_pass():
    failures, attempted = doctest.testmod(fx, optionflags=doctest.ELLIPSIS)
    assert attempted and not failures
