"""relu's, log_softmax's and nll_loss's backward operators, and the optimizers' ternary ops, against torch.

``threshold_backward``, ``_log_softmax_backward_data`` and ``nll_loss_backward``: values, dtypes,
errors, Meta geometry, the backward trace of a classifier step and the double-backward nodes;
``addcmul_``/``addcdiv_``/``lerp_`` in place: bit-exact in float32 and float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.trace import trace

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

A, TA = dc.ops.aten, torch.ops.aten
RNG = np.random.default_rng(0)


def _pair(a):
    return dc.tensor(a), torch.tensor(a)


def _same(mine, theirs, exact=False):
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    if exact:
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    else:
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


def _same_error(mine, theirs):
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(type(t.value)) as m:
        mine()
    assert str(m.value) == str(t.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8"])
def test_threshold_backward_zeroes_the_gradient_at_and_below_the_threshold_like_torch(dtype):
    x = np.array([-2, 0, 1, 2, 3, 0]).astype(dtype)  # uint8 wraps -2
    g = np.arange(1, 7).astype(dtype)
    (dg, tg), (dx, tx) = _pair(g), _pair(x)
    for threshold in (0, 1, 0.5):
        _same(A.threshold_backward.default(dg, dx, threshold), TA.threshold_backward(tg, tx, threshold), exact=True)
    out_d, out_t = _pair(np.zeros(6, dtype))
    A.threshold_backward.grad_input(dg, dx, 1, grad_input=out_d)
    TA.threshold_backward.grad_input(tg, tx, 1, grad_input=out_t)
    _same(out_d, out_t, exact=True)


def test_threshold_backward_passes_the_gradient_at_a_nan_input_like_torch():
    (dg, tg), (dx, tx) = _pair(np.ones(3)), _pair(np.array([np.nan, -1.0, 1.0]))
    _same(A.threshold_backward.default(dg, dx, 0), TA.threshold_backward(tg, tx, 0), exact=True)


def test_threshold_backward_refuses_bool_like_torch():
    (dg, tg) = _pair(np.ones(3, bool))
    _same_error(lambda: A.threshold_backward.default(dg, dg, 0), lambda: TA.threshold_backward(tg, tg, 0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_log_softmax_backward_data_matches_torch(dtype, dim):
    x, g = RNG.standard_normal((4, 5)).astype(dtype), RNG.standard_normal((4, 5)).astype(dtype)
    (dx, tx), (dg, tg) = _pair(x), _pair(g)
    do, to = A._log_softmax.default(dx, dim, False), TA._log_softmax(tx, dim, False)
    _same(A._log_softmax_backward_data.default(dg, do, dim, dx.dtype),
          TA._log_softmax_backward_data(tg, to, dim, tx.dtype))


def test_log_softmax_backward_data_errors_match_torch():
    (dg, tg), (do, to) = _pair(RNG.standard_normal((4, 3)).astype("float32")), _pair(RNG.standard_normal((4, 3)))
    _same_error(lambda: A._log_softmax_backward_data.default(dg, dg, 5, dc.float32),
                lambda: TA._log_softmax_backward_data(tg, tg, 5, torch.float32))
    _same_error(lambda: A._log_softmax_backward_data.default(dg, dg, 1, dc.float16),
                lambda: TA._log_softmax_backward_data(tg, tg, 1, torch.float16))
    _same_error(lambda: A._log_softmax_backward_data.default(dg, do, 1, dc.float32),
                lambda: TA._log_softmax_backward_data(tg, to, 1, torch.float32))


def test_log_softmax_backward_data_keeps_the_gradients_dtype_whatever_input_dtype_says():
    (dg, tg) = _pair(RNG.standard_normal((4, 3)).astype("float32"))
    _same(A._log_softmax_backward_data.default(dg, dg, 1, dc.float64),
          TA._log_softmax_backward_data(tg, tg, 1, torch.float64))


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_backward_matches_torch_exactly(reduction, weighted):
    x = RNG.standard_normal((6, 4)).astype("float32")
    t = np.array([0, 3, -100, 1, 2, 3])
    w = RNG.random(4).astype("float32") if weighted else None
    (dx, tx), (dt, tt) = _pair(x), _pair(t)
    dw, tw = _pair(w) if weighted else (None, None)
    dout, dtot = A.nll_loss_forward.default(dx, dt, dw, reduction, -100)
    tout, ttot = TA.nll_loss_forward(tx, tt, tw, reduction, -100)
    (dgo, tgo) = _pair(RNG.standard_normal(6).astype("float32") if reduction == 0 else np.array(1.5, "float32"))
    _same(A.nll_loss_backward.default(dgo, dx, dt, dw, reduction, -100, dtot),
          TA.nll_loss_backward(tgo, tx, tt, tw, reduction, -100, ttot), exact=True)


def test_nll_loss_backward_of_a_single_sample_matches_torch():
    (dx, tx), (dt, tt) = _pair(RNG.standard_normal(4)), _pair(np.array(2))
    (dgo, tgo), (dtot, ttot) = _pair(np.array(2.0)), _pair(np.array(1.0))
    _same(A.nll_loss_backward.default(dgo, dx, dt, None, 1, -100, dtot),
          TA.nll_loss_backward(tgo, tx, tt, None, 1, -100, ttot), exact=True)


@pytest.mark.parametrize("case", ["grad_output", "target_size", "total_weight", "weight", "out_of_bounds", "dtype"])
def test_nll_loss_backward_errors_match_torch(case):
    x = RNG.standard_normal((4, 3)).astype("float32")
    args = {"grad_output": np.array(1, "float32"), "target": np.array([0, 2, 1, 0]), "weight": None,
            "total_weight": np.array(4, "float32")}
    reduction = 1
    if case == "grad_output":
        args["grad_output"], reduction = np.ones(3, "float32"), 0
    elif case == "target_size":
        args["target"] = np.array([0, 1])
    elif case == "total_weight":
        args["total_weight"] = np.ones(2, "float32")
    elif case == "weight":
        args["weight"] = np.ones(2, "float32")
    elif case == "out_of_bounds":
        args["target"] = np.array([0, 5, 1, 0])
    else:
        args["grad_output"] = np.array(1.0)
    mine = {k: None if v is None else dc.tensor(v) for k, v in args.items()}
    theirs = {k: None if v is None else torch.tensor(v) for k, v in args.items()}
    _same_error(lambda: A.nll_loss_backward.default(mine["grad_output"], dc.tensor(x), mine["target"],
                                                    mine["weight"], reduction, -100, mine["total_weight"]),
                lambda: TA.nll_loss_backward(theirs["grad_output"], torch.tensor(x), theirs["target"],
                                             theirs["weight"], reduction, -100, theirs["total_weight"]))


def test_the_backward_ops_on_meta_tensors_have_torchs_geometry():
    def meta(lib, shape, dtype="float32"):
        return lib.empty(shape, dtype=getattr(lib, dtype), device="meta")

    for lib, aten in ((dc, A), (torch, TA)):
        g, x = meta(lib, (4, 3)), meta(lib, (4, 3))
        t = lib.empty(4, dtype=lib.int64, device="meta")
        got = (aten.threshold_backward.default(g, x, 0), aten._log_softmax_backward_data.default(g, x, 1, lib.float32),
               aten.nll_loss_backward.default(meta(lib, ()), x, t, None, 1, -100, meta(lib, ())))
        shapes = [(tuple(r.shape), r.stride(), str(r.dtype).split(".")[-1], r.device.type) for r in got]
        if lib is dc:
            mine = shapes
    assert mine == shapes


def _classifier_backward_ops(lib):
    lib.manual_seed(0)
    x, y = lib.randn(8, 4), lib.randint(0, 3, (8,))
    w1 = lib.randn(4, 5).requires_grad_()
    w2 = lib.randn(5, 3).requires_grad_()
    return lib.nn.functional.cross_entropy(lib.relu(x @ w1) @ w2, y), (w1, w2)


def test_a_classifier_backward_calls_torchs_three_backward_ops_with_torchs_gradients():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(func.name())
            return func(*args, **(kwargs or {}))

    wanted = ("aten::nll_loss_backward", "aten::_log_softmax_backward_data", "aten::threshold_backward")
    loss_t, params_t = _classifier_backward_ops(torch)
    with Ops() as ops:
        loss_t.backward()
    theirs = [n for n in ops.names if n in wanted]
    loss_d, params_d = _classifier_backward_ops(dc)
    with trace() as t:
        loss_d.backward()
    mine = [h.op for h in t.hops() if h.op in wanted and h.key.name == "CPU"]
    assert mine == theirs == list(wanted)
    assert not t.find("aten::eq.Tensor") and not t.find("aten::gt.Scalar")  # no composite left behind
    for pd, pt in zip(params_d, params_t):
        np.testing.assert_allclose(pd.grad.numpy(), pt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_double_backward_goes_through_the_backward_ops_nodes_like_torch():
    def grad_node_names(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]], dtype=lib.float64).requires_grad_()
        y = lib.tensor([2, 0])
        loss = lib.nn.functional.cross_entropy(lib.relu(x) * x, y)
        (g,) = (lib.autograd.grad(loss, x, create_graph=True))
        names, seen, todo = set(), set(), [g.grad_fn]
        while todo:
            node = todo.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            names.add(type(node).__name__)
            todo.extend(n for n, _ in node.next_functions)
        second = lib.autograd.grad(g.sum(), x)[0]
        return names, second.detach().numpy()

    mine, theirs = grad_node_names(dc), grad_node_names(torch)
    backward_nodes = {"ThresholdBackwardBackward0", "LogSoftmaxBackwardDataBackward0", "NllLossBackwardBackward0"}
    assert mine[0] & backward_nodes == theirs[0] & backward_nodes
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["addcmul_", "addcdiv_", "lerp_scalar", "lerp_tensor"])
def test_the_optimizers_in_place_ternary_ops_are_bit_exact(dtype, op):
    rng = np.random.default_rng(7)
    n = 1000
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-4, 4, n)).astype(dtype)
    y, z = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    for value in (1e-3, -0.37, 0.9, 1.0, 2):
        (dx, tx), (dy, ty), (dz, tz) = _pair(x), _pair(y), _pair(z)
        if op == "lerp_scalar":
            dx.lerp_(dy, value)
            tx.lerp_(ty, value)
        elif op == "lerp_tensor":
            (dw, tw) = _pair(np.full(n, value, dtype))
            dx.lerp_(dy, dw)
            tx.lerp_(ty, tw)
        else:
            getattr(dx, op)(dy, dz, value=value)
            getattr(tx, op)(ty, tz, value=value)
        _same(dx, tx, exact=True)
