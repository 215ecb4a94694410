"""Built-in derivatives: gradcheck/gradgradcheck per operator, node names, what is saved, gradcheck itself."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import GradcheckError, gradcheck, gradgradcheck
from dispatchcore.dispatcher import get_dispatcher
from dispatchcore.keys import DispatchKey

A = dc.ops.aten
F64 = dc.float64


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def leaf(shape, *, positive=False, seed=0, requires_grad=True):
    """A float64 leaf with values in [-1, 1) (or [0.5, 1.5) when ``positive``), reproducible."""
    rng = np.random.default_rng(abs(hash((tuple(shape), positive, seed))) % 2**32)
    values = rng.uniform(0.5, 1.5, shape) if positive else rng.uniform(-1, 1, shape)
    return dc.tensor(values.tolist(), dtype=F64, requires_grad=requires_grad)


def nonleaf(t):
    """``t`` behind a CloneBackward0 node, so in-place ops on it are allowed."""
    return A.clone.default(t)


S = (3, 4)
# id -> (function, input specs (shape, positive), smooth). Every input spec becomes a leaf that
# requires grad; gradgradcheck runs for the smooth entries.
OPS = {
    "add.Tensor": (lambda a, b: A.add.Tensor(a, b), [(S,), (S,)], True),
    "add.Tensor-alpha-broadcast": (lambda a, b: A.add.Tensor(a, b, alpha=2), [(S,), ((4,),)], True),
    "add.Scalar": (lambda a: A.add.Scalar(a, 2.5, 3), [(S,)], True),
    "sub.Tensor-broadcast": (lambda a, b: A.sub.Tensor(a, b, alpha=3), [((3, 1),), ((1, 4),)], True),
    "sub.Scalar": (lambda a: A.sub.Scalar(a, 2.5), [(S,)], True),
    "mul.Tensor-broadcast": (lambda a, b: A.mul.Tensor(a, b), [(S,), ((1, 4),)], True),
    "mul.Tensor-0d": (lambda a, b: A.mul.Tensor(a, b), [(S,), ((),)], True),
    "mul.Scalar": (lambda a: A.mul.Scalar(a, -1.5), [(S,)], True),
    "div.Tensor": (lambda a, b: A.div.Tensor(a, b), [(S,), ((4,), True)], True),
    "div.Scalar": (lambda a: A.div.Scalar(a, 4.0), [(S,)], True),
    "pow.Tensor_Scalar": (lambda a: A.pow.Tensor_Scalar(a, 3), [(S,)], True),
    "pow.Tensor_Scalar-fractional": (lambda a: A.pow.Tensor_Scalar(a, 2.5), [(S, True)], True),
    "pow.Tensor_Scalar-zero": (lambda a: A.pow.Tensor_Scalar(a, 0), [(S,)], True),
    "pow.Tensor_Tensor": (lambda a, b: A.pow.Tensor_Tensor(a, b), [(S, True), ((4,),)], True),
    "pow.Scalar": (lambda b: A.pow.Scalar(2.5, b), [(S,)], True),
    "neg": (lambda a: A.neg.default(a), [(S,)], True),
    "abs": (lambda a: A.abs.default(a), [(S,)], False),
    "exp": (lambda a: A.exp.default(a), [(S,)], True),
    "log": (lambda a: A.log.default(a), [(S, True)], True),
    "sqrt": (lambda a: A.sqrt.default(a), [(S, True)], True),
    "sin": (lambda a: A.sin.default(a), [(S,)], True),
    "cos": (lambda a: A.cos.default(a), [(S,)], True),
    "tanh": (lambda a: A.tanh.default(a), [(S,)], True),
    "sigmoid": (lambda a: A.sigmoid.default(a), [(S,)], True),
    "relu": (lambda a: A.relu.default(a), [(S,)], False),
    "clamp": (lambda a: A.clamp.default(a, -0.5, 0.5), [((10,),)], False),
    "clamp-min-only": (lambda a: A.clamp.default(a, -0.2), [((10,),)], False),
    "clamp_min": (lambda a: A.clamp_min.default(a, -0.2), [((10,),)], False),
    "where.self": (lambda a, b: A.where.self(A.gt.Scalar(a, 0), a, b), [(S,), ((4,),)], False),
    "sum": (lambda a: A.sum.default(a), [(S,)], True),
    "sum.dim_IntList": (lambda a: A.sum.dim_IntList(a, [0]), [(S,)], True),
    "sum.dim_IntList-keepdim-neg": (lambda a: A.sum.dim_IntList(a, [-1, 0], True), [((2, 3, 4),)], True),
    "mean": (lambda a: A.mean.default(a), [(S,)], True),
    "mean.dim": (lambda a: A.mean.dim(a, [2, 0]), [((2, 3, 4),)], True),
    "amax": (lambda a: A.amax.default(a, [1]), [(S,)], False),
    "amax-all": (lambda a: A.amax.default(a), [(S,)], False),
    "max": (lambda a: A.max.default(a), [(S,)], False),
    "max.dim": (lambda a: A.max.dim(a, 1)[0], [(S,)], False),
    "max.dim-keepdim": (lambda a: A.max.dim(a, 0, True)[0], [(S,)], False),
    "mm": (lambda a, b: A.mm.default(a, b), [(S,), ((4, 2),)], True),
    "bmm": (lambda a, b: A.bmm.default(a, b), [((2, 3, 4),), ((2, 4, 2),)], True),
    "_softmax": (lambda a: A._softmax.default(a, 1, False), [(S,)], True),
    "_log_softmax": (lambda a: A._log_softmax.default(a, 0, False), [(S,)], True),
    "mse_loss-mean": (lambda a, b: A.mse_loss.default(a, b), [(S,), (S,)], True),
    "mse_loss-sum": (lambda a, b: A.mse_loss.default(a, b, 2), [(S,), (S,)], True),
    "mse_loss-none": (lambda a, b: A.mse_loss.default(a, b, 0), [(S,), (S,)], True),
    "nll_loss_forward": (lambda a: A.nll_loss_forward.default(a, dc.tensor([0, 3, 1]), None, 1, -100)[0],
                         [(S,)], True),
    "nll_loss_forward-weight-ignore": (
        lambda a: A.nll_loss_forward.default(a, dc.tensor([0, 2, 2]), dc.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64),
                                             1, 0)[0], [(S,)], True),
    "nll_loss_forward-none": (lambda a: A.nll_loss_forward.default(a, dc.tensor([1, 0, 3]), None, 0, -100)[0],
                              [(S,)], True),
    "nll_loss_forward-sum-1d": (lambda a: A.nll_loss_forward.default(a, dc.tensor(2), None, 2, -100)[0],
                                [((4,),)], True),
    "cat": (lambda a, b: A.cat.default([a, b], 1), [(S,), ((3, 2),)], True),
    "stack": (lambda a, b: A.stack.default([a, b], -1), [(S,), (S,)], True),
    "clone": (lambda a: A.clone.default(a), [(S,)], True),
    "_to_copy": (lambda a: A._to_copy.default(a, dtype=F64), [(S,)], True),
    "_unsafe_view": (lambda a: A._unsafe_view.default(a, [2, 6]), [(S,)], True),
    "view": (lambda a: A.view.default(a, [2, 6]), [(S,)], True),
    "_reshape_alias": (lambda a: A._reshape_alias.default(a, [12], [1]), [(S,)], True),
    "t": (lambda a: A.t.default(a), [(S,)], True),
    "transpose.int": (lambda a: A.transpose.int(a, 0, 2), [((2, 3, 4),)], True),
    "permute": (lambda a: A.permute.default(a, [2, 0, 1]), [((2, 3, 4),)], True),
    "expand": (lambda a: A.expand.default(a, [2, 3, 4]), [((3, 1),)], True),
    "squeeze": (lambda a: A.squeeze.default(a), [((3, 1, 4),)], True),
    "squeeze.dim": (lambda a: A.squeeze.dim(a, 1), [((3, 1, 4),)], True),
    "squeeze.dim-not-one": (lambda a: A.squeeze.dim(a, 0), [((3, 1, 4),)], True),
    "unsqueeze": (lambda a: A.unsqueeze.default(a, -1), [(S,)], True),
    "select.int": (lambda a: A.select.int(a, 1, -1), [(S,)], True),
    "slice.Tensor": (lambda a: A.slice.Tensor(a, 1, 1, None, 2), [((3, 5),)], True),
    "as_strided": (lambda a: A.as_strided.default(a, [2, 2], [1, 2], 1), [(S,)], True),
    "as_strided-overlapping": (lambda a: A.as_strided.default(a, [3, 3], [1, 1], 0), [((6,),)], True),
    "alias": (lambda a: A.alias.default(a), [(S,)], True),
    # CompositeImplicitAutograd: differentiable through their decompositions
    "matmul": (lambda a, b: A.matmul.default(a, b), [((2, 3, 4),), ((4,),)], True),
    "reshape-copy": (lambda a: A.reshape.default(A.t.default(a), [12]), [(S,)], True),
    "softmax.int": (lambda a: A.softmax.int(a, 0), [(S,)], True),
    "log_softmax.int": (lambda a: A.log_softmax.int(a, 1), [(S,)], True),
    "nll_loss": (lambda a: A.nll_loss.default(A.log_softmax.int(a, 1), dc.tensor([0, 3, 1])), [(S,)], True),
    "contiguous": (lambda a: A.contiguous.default(A.t.default(a)), [(S,)], True),
}

UNARY_INPLACE = ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu")
for _u in UNARY_INPLACE:
    OPS[f"{_u}_"] = (lambda a, u=_u: getattr(A, f"{u}_").default(nonleaf(a)), [(S, _u in ("log", "sqrt"))],
                     _u not in ("abs", "relu"))
OPS.update({
    "add_.Tensor": (lambda a, b: A.add_.Tensor(nonleaf(a), b, alpha=2), [(S,), ((4,),)], True),
    "add_.Scalar": (lambda a: A.add_.Scalar(nonleaf(a), 2), [(S,)], True),
    "sub_.Tensor": (lambda a, b: A.sub_.Tensor(nonleaf(a), b), [(S,), (S,)], True),
    "sub_.Scalar": (lambda a: A.sub_.Scalar(nonleaf(a), 2, 2), [(S,)], True),
    "mul_.Tensor": (lambda a, b: A.mul_.Tensor(nonleaf(a), b), [(S,), ((4,),)], True),
    "mul_.Tensor-self": (lambda a: A.mul_.Tensor(nonleaf(a), a), [(S,)], True),
    "mul_.Scalar": (lambda a: A.mul_.Scalar(nonleaf(a), 3), [(S,)], True),
    "div_.Tensor": (lambda a, b: A.div_.Tensor(nonleaf(a), b), [(S,), ((4,), True)], True),
    "div_.Scalar": (lambda a: A.div_.Scalar(nonleaf(a), 3), [(S,)], True),
    "pow_.Scalar": (lambda a: A.pow_.Scalar(nonleaf(a), 3), [(S,)], True),
    "pow_.Tensor": (lambda a, b: A.pow_.Tensor(nonleaf(a), b), [(S, True), ((4,),)], True),
    "clamp_": (lambda a: A.clamp_.default(nonleaf(a), -0.3, 0.4), [(S,)], False),
    "clamp_min_": (lambda a: A.clamp_min_.default(nonleaf(a), 0.1), [(S,)], False),
    "fill_.Scalar": (lambda a: A.fill_.Scalar(nonleaf(a), 2.0), [(S,)], True),
    "zero_": (lambda a: A.zero_.default(nonleaf(a)), [(S,)], True),
    "copy_": (lambda a, b: A.copy_.default(nonleaf(a), b), [(S,), ((4,),)], True),
    # in place on views: CopySlices on the base, AsStridedBackward0 on the view
    "mul_.Tensor-on-view": (lambda a, b: _on_view(nonleaf(a), lambda c: A.mul_.Tensor(c[1], b)), [(S,), ((4,),)], True),
    "copy_-into-view-of-plain-tensor": (
        lambda b: _on_view(dc.zeros(3, 4, dtype=F64), lambda c: A.copy_.default(c[1:3, 1], b)), [((2,),)], True),
    "fill_-on-view": (lambda a: _on_view(nonleaf(a), lambda c: A.fill_.Scalar(c[:, 2], 2.0)), [(S,)], True),
    "sigmoid_-on-transposed-view": (lambda a: _on_view(nonleaf(a), lambda c: A.sigmoid_.default(c.t()[1:])),
                                    [(S,)], True),
    "view-of-view-inplace": (lambda a: _on_view(nonleaf(a), lambda c: A.exp_.default(c[1:][0])), [(S,)], True),
})


def _on_view(base, op):
    op(base)
    return base


def _inputs(specs):
    return tuple(leaf(spec[0], positive=len(spec) > 1 and spec[1], seed=i) for i, spec in enumerate(specs))


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck(name):
    fn, specs, _ = OPS[name]
    assert gradcheck(fn, _inputs(specs))


@pytest.mark.parametrize("name", sorted(n for n, (_, _, smooth) in OPS.items() if smooth))
def test_gradgradcheck(name):
    fn, specs, _ = OPS[name]
    assert gradgradcheck(fn, _inputs(specs))


# --- node names (torch's grad_fn class names) ------------------------------------------------------
NAMES = {
    "add.Tensor": "AddBackward0", "add.Scalar": "AddBackward1", "sub.Tensor-broadcast": "SubBackward0",
    "sub.Scalar": "SubBackward1", "mul.Tensor-broadcast": "MulBackward0", "mul.Scalar": "MulBackward1",
    "div.Tensor": "DivBackward0", "div.Scalar": "DivBackward1", "pow.Tensor_Scalar": "PowBackward0",
    "pow.Tensor_Tensor": "PowBackward1", "pow.Scalar": "PowBackward2", "clamp": "ClampBackward1",
    "clamp_min": "ClampMinBackward0", "where.self": "WhereBackward0", "sum": "SumBackward0",
    "sum.dim_IntList": "SumBackward1", "mean": "MeanBackward0", "mean.dim": "MeanBackward1",
    "amax": "AmaxBackward0", "max": "MaxBackward1", "max.dim": "MaxBackward0", "mm": "MmBackward0",
    "bmm": "BmmBackward0", "_softmax": "SoftmaxBackward0", "_log_softmax": "LogSoftmaxBackward0",
    "mse_loss-mean": "MseLossBackward0", "nll_loss_forward": "NllLossBackward0", "cat": "CatBackward0",
    "stack": "StackBackward0", "clone": "CloneBackward0", "_to_copy": "ToCopyBackward0",
    "_unsafe_view": "UnsafeViewBackward0", "view": "ViewBackward0", "_reshape_alias": "ReshapeAliasBackward0",
    "t": "TBackward0", "transpose.int": "TransposeBackward0", "permute": "PermuteBackward0",
    "expand": "ExpandBackward0", "squeeze": "SqueezeBackward0", "squeeze.dim": "SqueezeBackward1",
    "unsqueeze": "UnsqueezeBackward0", "select.int": "SelectBackward0", "slice.Tensor": "SliceBackward0",
    "as_strided": "AsStridedBackward0", "alias": "AliasBackward0", "reshape-copy": "UnsafeViewBackward0",
    "softmax.int": "SoftmaxBackward0", "contiguous": "CloneBackward0", "neg": "NegBackward0",
    "abs": "AbsBackward0", "exp": "ExpBackward0", "log": "LogBackward0", "sqrt": "SqrtBackward0",
    "sin": "SinBackward0", "cos": "CosBackward0", "tanh": "TanhBackward0", "sigmoid": "SigmoidBackward0",
    "relu": "ReluBackward0", "add_.Tensor": "AddBackward0", "add_.Scalar": "AddBackward1",
    "mul_.Tensor": "MulBackward0", "div_.Scalar": "DivBackward1", "pow_.Scalar": "PowBackward0",
    "pow_.Tensor": "PowBackward1", "relu_": "ReluBackward0", "clamp_": "ClampBackward1",
    "clamp_min_": "ClampMinBackward0", "fill_.Scalar": "FillBackward2", "zero_": "ZeroBackward0",
    "copy_": "CopyBackwards", "sigmoid_": "SigmoidBackward0", "mul_.Tensor-on-view": "CopySlices",
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_node_name(name):
    fn, specs, _ = OPS[name]
    out = fn(*_inputs(specs))
    assert type(out.grad_fn).__name__ == NAMES[name]
    # the nodes torch implements in C++ outside the generated ones name their namespace
    qualified = {"CopyBackwards": "torch::autograd::CopyBackwards", "CopySlices": "torch::autograd::CopySlices"}
    assert out.grad_fn.name() == qualified.get(NAMES[name], NAMES[name])
    assert out.requires_grad and not out.is_leaf


def test_every_operator_has_an_autograd_story():
    """Every aten op with a Tensor argument has an Autograd kernel or a CompositeImplicitAutograd one."""
    missing = []
    for op in get_dispatcher().operators():
        if not op.qualname.startswith("aten::") or op.schema is None:
            continue
        if not any(str(a.type).startswith("Tensor") for a in op.schema.arguments):
            continue
        keys = set(op._kernels)
        if not keys & {DispatchKey.Autograd, DispatchKey.CompositeImplicitAutograd}:
            missing.append(op.qualname)
    assert missing == []


# --- non-differentiable outputs ----------------------------------------------------------------------
def test_comparisons_and_argmax_have_no_grad_fn():
    x = leaf(S)
    for out in (x > 0, A.eq.Tensor(x, x), A.le.Scalar(x, 0.5), A.argmax.default(x), x.detach()):
        assert out.grad_fn is None and not out.requires_grad


def test_max_dim_indices_and_nll_total_weight_are_not_differentiable():
    x = leaf(S)
    values, indices = A.max.dim(x, 1)
    assert type(values.grad_fn).__name__ == "MaxBackward0"
    assert indices.grad_fn is None and not indices.requires_grad
    loss, total_weight = A.nll_loss_forward.default(x, dc.tensor([0, 1, 2]), None, 1, -100)
    assert type(loss.grad_fn).__name__ == "NllLossBackward0"
    assert total_weight.grad_fn is None and not total_weight.requires_grad


def test_integer_result_of_a_differentiable_op_has_no_grad_fn():
    x = leaf(S)
    out = A._to_copy.default(x, dtype=dc.int64)
    assert out.grad_fn is None and not out.requires_grad


def test_no_grad_records_nothing():
    x = leaf(S)
    with dc.no_grad():
        y = x * x
    assert y.grad_fn is None and not y.requires_grad


# --- out= -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["input", "out"])
def test_out_variant_refuses_autograd(which):
    x = leaf(S)
    plain = x.detach()
    out = dc.empty(3, 4, dtype=F64)
    if which == "out":
        x, out = plain, out.requires_grad_()
    with pytest.raises(RuntimeError, match=r"^add\(\): functions with out=\.\.\. arguments don't support "
                                           r"automatic differentiation, but one of the arguments requires grad\.$"):
        A.add.out(x, plain, out=out)
    with pytest.raises(RuntimeError, match=r"^exp\(\): functions with out"):
        A.exp.out(x, out=out)


def test_out_variant_without_grad_is_fine():
    x = leaf(S)
    out = dc.empty(3, 4, dtype=F64)
    with dc.no_grad():
        A.mul.out(x, x, out=out)
    assert out.grad_fn is None and not out.requires_grad and out._version == 1
    A.mul.out(x.detach(), x.detach(), out=out)
    assert out._version == 2


# --- gradients: shapes, dtypes, what is saved ---------------------------------------------------------------
def test_broadcast_gradients_are_reduced_to_the_input_shape():
    a, b = leaf((2, 3, 4)), leaf((3, 1))
    (a * b).sum().backward()
    assert tuple(b.grad.shape) == (3, 1)
    np.testing.assert_allclose(b.grad.numpy(), a.detach().numpy().sum(axis=(0, 2))[:, None])


def test_mixed_dtype_gradient_has_the_input_dtype():
    a = dc.tensor([1.0, 2.0], dtype=dc.float32, requires_grad=True)
    b = dc.tensor([3.0, 4.0], dtype=F64, requires_grad=True)
    out = a * b
    assert out.dtype is F64
    out.sum().backward()
    assert a.grad.dtype is dc.float32 and b.grad.dtype is F64
    assert a.grad.tolist() == [3.0, 4.0]


def test_create_graph_gives_higher_derivatives():
    x = dc.tensor([1.5, -2.0], dtype=F64, requires_grad=True)
    (g,) = dc.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    (gg,) = dc.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.tolist(), [9.0, -12.0])  # 6x
    (ggg,) = dc.autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.tolist(), [6.0, 6.0])


def test_only_needed_values_are_saved():
    """As torch's should_compute_output: mul saves `self` only when `other` needs a gradient."""
    x = leaf((3,))
    w = dc.tensor([1.0, 2.0, 3.0], dtype=F64)
    b = nonleaf(x)
    y = b * w  # w needs no gradient: b is not saved
    b.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    w.requires_grad_()
    b = nonleaf(x)
    y = b * w
    b.add_(1)
    with pytest.raises(RuntimeError, match="which is output 0 of Add, is at version 1; expected version 0"):
        y.sum().backward()


def test_saved_values_are_freed_after_backward():
    x = leaf((3,))
    y = x.sigmoid()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.sum().backward()


def test_inplace_saves_the_original_self_as_a_clone():
    x = leaf((3,), positive=True)
    y = nonleaf(x)
    before = y.detach().clone()
    y.log_()  # LogBackward0 needs the value before the op
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / before.numpy())


def test_unused_input_edge_is_empty():
    x = leaf(S)
    y = x + dc.ones(3, 4, dtype=F64)
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


# --- gradcheck itself -----------------------------------------------------------------------------------------
class _WrongSin(dc.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 2


def test_gradcheck_reports_a_jacobian_mismatch_like_torch():
    x = dc.tensor([0.5, 1.0], dtype=F64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_WrongSin.apply, (x,))
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[")
    assert "\nanalytical:tensor([[" in message and message.endswith("dtype=dispatchcore.float64)\n")
    assert isinstance(info.value, RuntimeError)
    assert gradcheck(_WrongSin.apply, (x,), raise_exception=False) is False


def test_gradcheck_names_the_failing_input():
    x = dc.tensor([0.5], dtype=F64, requires_grad=True)
    y = dc.tensor([0.3], dtype=F64, requires_grad=True)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 1,"):
        gradcheck(lambda a, b: a + _WrongSin.apply(b), (x, y))


def test_gradcheck_input_checks():
    with pytest.raises(ValueError, match="^gradcheck expects at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (dc.ones(3, dtype=F64),))
    expanded = dc.ones(3, dtype=F64).expand(2, 3).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="^The 0th input has a dimension with stride 0"):
        gradcheck(lambda a: a * 2, (expanded,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcheck(lambda a: a * 2, (dc.ones(3, requires_grad=True),), raise_exception=False)
    assert any(str(w.message).startswith("Input #0 requires gradient and is not a double precision") for w in caught)


def test_gradcheck_without_differentiable_outputs_expects_zero_numerical_gradient():
    x = dc.tensor([0.5, 1.0], dtype=F64, requires_grad=True)
    assert gradcheck(lambda a: A.argmax.default(a), (x,))
    with pytest.raises(GradcheckError, match="^Numerical gradient for function expected to be zero$"):
        gradcheck(lambda a: (a * 2).detach(), (x,))


def test_gradcheck_passes_non_tensor_arguments_and_multiple_outputs():
    x, y = leaf((2, 3)), leaf((3,))
    assert gradcheck(lambda a, k, b: (a * k, a + b), (x, 3.0, y))


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class OnceRight(dc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()  # right value, but not differentiable with respect to x

    x = dc.tensor([0.5, 1.0], dtype=F64, requires_grad=True)
    assert gradcheck(OnceRight.apply, (x,))
    assert gradgradcheck(OnceRight.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_with_given_grad_outputs():
    x = leaf((3,))
    go = dc.tensor([1.0, -2.0, 0.5], dtype=F64, requires_grad=True)
    assert gradgradcheck(lambda a: a.tanh(), (x,), (go,))
