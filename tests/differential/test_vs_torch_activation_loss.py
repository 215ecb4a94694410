"""The activation and loss families against torch: traces of ``F.*``, out= overloads, meta, autocast, nodes."""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
import dispatchcore.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402 - after importorskip

A, TA = dc.ops.aten, torch.ops.aten
TF = torch.nn.functional
RNG = np.random.default_rng(7)


class _TorchLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func).removeprefix("aten."))  # "silu.default"
        return func(*args, **(kwargs or {}))


def _torch_ops(fn):
    with _TorchLog() as log:
        fn()
    return log.ops


def _dc_ops(fn):
    with dc.LoggingMode() as log:
        fn()
    return [str(r.func).split("::")[-1].removeprefix("aten.") for r in log.records]


def _same(mine, theirs, atol=1e-6):
    mine = mine if isinstance(mine, (tuple, list)) else (mine,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert tuple(m.shape) == tuple(t.shape)
        assert m.stride() == t.stride()
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        if m.device.type != "meta":
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), atol=atol, rtol=atol)


CALLS = {
    "silu": lambda F, t, x, y: F.silu(x),
    "silu_inplace": lambda F, t, x, y: F.silu(x.clone(), inplace=True),
    "softplus": lambda F, t, x, y: F.softplus(x, beta=2.0, threshold=1.0),
    "logsigmoid": lambda F, t, x, y: F.logsigmoid(x),
    "relu6": lambda F, t, x, y: F.relu6(x * 8),
    "relu6_inplace": lambda F, t, x, y: F.relu6(x.clone(), inplace=True),
    "l1": lambda F, t, x, y: F.l1_loss(x, y),
    "l1_sum": lambda F, t, x, y: F.l1_loss(x, y, reduction="sum"),
    "smooth_l1": lambda F, t, x, y: F.smooth_l1_loss(x, y, beta=0.3),
    "smooth_l1_beta0": lambda F, t, x, y: F.smooth_l1_loss(x, y, beta=0.0),
    "huber": lambda F, t, x, y: F.huber_loss(x, y, delta=0.4, reduction="none"),
    "huber_weight_mean": lambda F, t, x, y: F.huber_loss(x, y, weight=t.ones(4, 3) * 3),
    "kl_div_log_target": lambda F, t, x, y: F.kl_div(x, y, reduction="batchmean", log_target=True),
    "softsign": lambda F, t, x, y: F.softsign(x),
    "tanhshrink": lambda F, t, x, y: F.tanhshrink(x),
    "softmin": lambda F, t, x, y: F.softmin(x, 1),
    "softmin_dtype": lambda F, t, x, y: F.softmin(x, 0, dtype=t.float64),
    "relu_": lambda F, t, x, y: F.relu_(x.clone()),
    "adaptive_avg_pool2d": lambda F, t, x, y: F.adaptive_avg_pool2d(x.reshape(1, 1, 4, 3), (2, None)),
    "adaptive_avg_pool2d_int": lambda F, t, x, y: F.adaptive_avg_pool2d(x.reshape(1, 4, 3), 2),
    "unfold": lambda F, t, x, y: F.unfold(x.reshape(1, 1, 4, 3), 2, padding=1),
    "fold": lambda F, t, x, y: F.fold(x.reshape(1, 4, 3), (2, 4), 2),
    "fold_int": lambda F, t, x, y: F.fold(x.reshape(1, 4, 3).repeat(1, 1, 2)[..., :4], 3, 2),
    "group_norm": lambda F, t, x, y: F.group_norm(x.reshape(2, 2, 3), 2, t.ones(2) * 2, t.zeros(2) + 0.5),
    "group_norm_plain": lambda F, t, x, y: F.group_norm(x.reshape(1, 4, 3), 2),
    "interpolate_nearest": lambda F, t, x, y: F.interpolate(x.reshape(1, 1, 4, 3), scale_factor=2),
    "interpolate_nearest_size": lambda F, t, x, y: F.interpolate(x.reshape(1, 2, 2, 3), size=(3, 5)),
    "interpolate_bilinear": lambda F, t, x, y: F.interpolate(x.reshape(1, 1, 4, 3), size=(5, 7), mode="bilinear"),
    "interpolate_bilinear_corners": lambda F, t, x, y: F.interpolate(x.reshape(2, 1, 2, 3), scale_factor=(1.5, 2.5),
                                                                     mode="bilinear", align_corners=True),
    "interpolate_recompute": lambda F, t, x, y: F.interpolate(x.reshape(1, 1, 4, 3), scale_factor=1.7,
                                                              recompute_scale_factor=True),
    "interpolate_area": lambda F, t, x, y: F.interpolate(x.reshape(1, 1, 4, 3), scale_factor=0.5, mode="area"),
    "interpolate_area_size": lambda F, t, x, y: F.interpolate(x.reshape(1, 1, 4, 3), size=2, mode="area"),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_functional_calls_torchs_aten_ops_and_matches_values(name):
    a, b = RNG.standard_normal((4, 3)).astype("float32"), RNG.standard_normal((4, 3)).astype("float32")
    mine_args, theirs_args = (dc.tensor(a), dc.tensor(b)), (torch.tensor(a), torch.tensor(b))
    assert _dc_ops(lambda: CALLS[name](F, dc, *mine_args)) == _torch_ops(lambda: CALLS[name](TF, torch, *theirs_args))
    _same(CALLS[name](F, dc, *mine_args), CALLS[name](TF, torch, *theirs_args))


def test_one_hot_reads_the_bounds_with_aminmax_then_scatters_into_zeros_as_torch():
    mine_index, theirs_index = dc.tensor([0, 3, 1]), torch.tensor([0, 3, 1])
    for classes in (5, -1):
        mine = _dc_ops(lambda: F.one_hot(mine_index, classes))  # noqa: B023 - called at once
        theirs = _torch_ops(lambda: TF.one_hot(theirs_index, classes))  # noqa: B023
        assert mine == theirs
        assert theirs[:3] == ["aminmax.default", "_local_scalar_dense.default", "_local_scalar_dense.default"]
    _same(F.one_hot(mine_index, 5), TF.one_hot(theirs_index, 5))


def test_kl_div_values_match_torch_at_zero_targets():
    x, t = RNG.standard_normal((3, 4)), np.abs(RNG.standard_normal((3, 4)))
    t[0, :2] = 0.0
    for reduction in ("none", "sum", "batchmean"):
        _same(F.kl_div(dc.tensor(x), dc.tensor(t), reduction=reduction),
              TF.kl_div(torch.tensor(x), torch.tensor(t), reduction=reduction))


OUTS = {
    "silu.out": (lambda ops, x, y: (x,), "out"),
    "softplus.out": (lambda ops, x, y: (x, 2, 1), "out"),
    "silu_backward.grad_input": (lambda ops, x, y: (y, x), "grad_input"),
    "softplus_backward.grad_input": (lambda ops, x, y: (y, x, 2, 1), "grad_input"),
    "log_sigmoid.out": (lambda ops, x, y: (x,), "out"),
    "log_sigmoid_backward.grad_input": (lambda ops, x, y: (y, x, x), "grad_input"),
    "smooth_l1_loss.out": (lambda ops, x, y: (x, y, 0, 0.5), "out"),
    "huber_loss.out": (lambda ops, x, y: (x, y, 2, 0.5), "out"),
    "smooth_l1_loss_backward.grad_input": (lambda ops, x, y: (y, x, y * 2, 0, 0.5), "grad_input"),
    "huber_loss_backward.out": (lambda ops, x, y: (y, x, y * 2, 1, 0.5), "grad_input"),
}


@pytest.mark.parametrize("name", sorted(OUTS))
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_out_overloads_resize_and_write_as_torch(name, device):
    base, _, overload = name.partition(".")
    args, out_name = OUTS[name]
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    results = []
    for lib, ops in ((dc, A), (torch, TA)):
        x, y = lib.tensor(a, device=device), lib.tensor(b, device=device)
        out = lib.empty(0, dtype=lib.float64, device=device)
        r = getattr(getattr(ops, base), overload)(*args(ops, x, y), **{out_name: out})
        assert r is out
        results.append(out)
    _same(*results)


def test_log_sigmoid_forward_buffer_and_layout_match_torch_on_cpu_and_meta():
    a = RNG.standard_normal((3, 2))
    _same(A.log_sigmoid_forward.default(dc.tensor(a).t()), TA.log_sigmoid_forward(torch.tensor(a).t()))
    _same(A.log_sigmoid_forward.default(dc.empty(3, 2, device="meta").t()),
          TA.log_sigmoid_forward(torch.empty(3, 2, device="meta").t()))


@pytest.mark.parametrize("op", ["smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", [0, 1])
def test_loss_meta_shapes_match_torch(op, reduction):
    mine = getattr(A, op).default(dc.empty(2, 3, device="meta"), dc.empty(3, device="meta"), reduction)
    theirs = getattr(TA, op)(torch.empty(2, 3, device="meta"), torch.empty(3, device="meta"), reduction)
    _same(mine, theirs)


def test_silu_backward_records_a_not_implemented_node():
    x, tx = dc.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    mine, theirs = A.silu_backward.default(dc.ones(3), x), TA.silu_backward(torch.ones(3), tx)
    assert type(mine.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "NotImplemented"


@pytest.mark.parametrize("op", ["smooth_l1_loss", "huber_loss", "softplus", "log_sigmoid_forward", "silu"])
def test_backward_nodes_match_torch(op):
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    names = []
    for lib, ops in ((dc, A), (torch, TA)):
        x = lib.tensor(a, requires_grad=True)
        args = (x, lib.tensor(b)) if "loss" in op else (x,)
        r = getattr(ops, op).default(*args) if lib is dc else getattr(ops, op)(*args)
        r = r[0] if isinstance(r, tuple) else r
        g = lib.autograd.grad(r.sum(), x, create_graph=True)[0]
        names.append((type(r.grad_fn).__name__, type(g.grad_fn).__name__))
    assert names[0] == names[1]


@pytest.mark.parametrize("op", ["l1_loss", "smooth_l1_loss", "huber_loss", "kl_div"])
def test_losses_run_in_float32_under_cpu_autocast(op):
    a = RNG.standard_normal((2, 3)).astype("float32")
    with dc.autocast("cpu", dtype=dc.float16):
        mine = getattr(A, op).default(dc.tensor(a).to(dc.float16), dc.tensor(a))
    with torch.autocast("cpu", dtype=torch.float16):
        theirs = getattr(TA, op)(torch.tensor(a).to(torch.float16), torch.tensor(a))
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == "float32"


ERRORS = {
    "one_hot_float": lambda t, F: F.one_hot(t.tensor([1.0])),
    "one_hot_negative": lambda t, F: F.one_hot(t.tensor([-1, 0]), 3),
    "one_hot_too_large": lambda t, F: F.one_hot(t.tensor([3]), 3),
    "one_hot_empty": lambda t, F: F.one_hot(t.tensor([], dtype=t.int64)),
    "one_hot_meta": lambda t, F: F.one_hot(t.tensor([1], device="meta")),
    "smooth_l1_beta": lambda t, F: F.smooth_l1_loss(t.ones(2), t.ones(2), beta=-1.0),
    "huber_delta": lambda t, F: F.huber_loss(t.ones(2), t.ones(2), delta=0.0),
    "silu_integer": lambda t, F: F.silu(t.tensor([1, 2])),
    "softplus_integer": lambda t, F: F.softplus(t.tensor([1, 2])),
    "logsigmoid_integer": lambda t, F: F.logsigmoid(t.tensor([1, 2])),
    "huber_integer": lambda t, F: F.huber_loss(t.tensor([1, 2]), t.tensor([1, 2])),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case, raises_alike):
    raises_alike(lambda: ERRORS[case](dc, F), lambda: ERRORS[case](torch, TF))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [7, 5000])  # the 0-d zero's loop and the zeros view's (Note [Zeros first])
def test_relu_keeps_negative_zero_and_nan_bits_as_torch(n, dtype):
    a = RNG.standard_normal(n).astype(dtype)
    a[::3] = -0.0
    a[1] = np.nan
    a[4] = -np.inf
    a.view(np.dtype(f"u{a.itemsize}"))[5] = a.view(np.dtype(f"u{a.itemsize}"))[1] | (1 << (8 * a.itemsize - 1))  # -nan
    mine, theirs = dc.relu(dc.tensor(a)), torch.relu(torch.tensor(a))
    assert mine.numpy().tobytes() == theirs.numpy().tobytes()
    mine_, theirs_ = dc.tensor(a), torch.tensor(a)
    mine_.relu_()
    theirs_.relu_()
    assert mine_.numpy().tobytes() == theirs_.numpy().tobytes()



# modules built on the functions above: torch's reprs, parameters, state dicts and outputs
_MODULES = [("Softsign", (), (4, 3)), ("Tanhshrink", (), (4, 3)), ("LogSigmoid", (), (4, 3)),
            ("Softmin", (1,), (4, 3)), ("AdaptiveAvgPool2d", ((2, None),), (1, 2, 4, 3)),
            ("Unfold", ((2, 3),), (1, 2, 4, 3)), ("Fold", ((3, 4), 2), (1, 8, 6)),
            ("GroupNorm", (2, 4), (2, 4, 3)), ("GroupNorm", (2, 4, 1e-3, False), (2, 4, 3)),
            ("Hardtanh", (-0.5, 0.5), (4, 3)), ("Hardtanh", (-0.5, 0.5, True), (4, 3)),
            ("Upsample", (None, 2), (1, 2, 3, 3)), ("Upsample", ((4, 5), None, "bilinear"), (1, 2, 3, 3)),
            ("Upsample", (None, (2, 1.5), "bilinear", True), (1, 2, 3, 3)), ("ReLU6", (), (4, 3)),
            ("ReLU6", (True,), (4, 3))]


@pytest.mark.parametrize(("name", "args", "shape"), _MODULES, ids=[f"{m[0]}{m[1]}" for m in _MODULES])
def test_modules_match_torchs_repr_parameters_and_output_with_gradients(name, args, shape):
    a = RNG.standard_normal(shape).astype("float32")
    mine, theirs = getattr(dc.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    x, tx = dc.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out, tout = mine(x * 1), theirs(tx * 1)  # a non-leaf: the in-place Hardtanh may write it
    _same(out, tout, atol=1e-5)
    out.sum().backward()
    tout.sum().backward()
    _same(x.grad, tx.grad, atol=1e-5)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__


@pytest.mark.parametrize("case", [
    lambda L: L.nn.functional.group_norm(L.ones(3), 1),
    lambda L: L.nn.functional.group_norm(L.ones(1, 2), 2),
    lambda L: L.nn.GroupNorm(3, 4),
    lambda L: L.nn.Hardtanh(1.0, 1.0),
    lambda L: L.nn.functional.adaptive_avg_pool2d(L.ones(4), (2, None)),
    lambda L: L.nn.functional.fold(L.ones(1, 5, 3), (2, 4), 2),
    lambda L: L.nn.functional.unfold(L.ones(1, 1, 2, 2), 3),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2)),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=3, scale_factor=2),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=(3,)),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=(3, 2.5)),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), scale_factor=(2, 2, 2)),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=3, align_corners=True),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=3, recompute_scale_factor=True),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=3, mode="nearest", antialias=True),
    lambda L: L.nn.functional.interpolate(L.ones(2, 2), size=3),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=3, mode="cubic"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2), size=3, mode="bilinear"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=3, mode="linear"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2, 2), size=3, mode="bilinear"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2, 2), size=3, mode="lanczos"),
    lambda L: L.nn.functional.unfold(L.ones(1, 1, 4, 4), (2,)),
    lambda L: L.nn.functional.unfold(L.ones(1, 1, 4, 4), 2, stride=(1, 1, 1)),
    lambda L: L.nn.functional.fold(L.ones(1, 4, 3), (4,), 2),
    lambda L: L.nn.functional.fold(L.ones(2, 12, 12), (0, 5), 2),
    lambda L: L.nn.GroupNorm(2, 4.0),
])
def test_errors_of_the_new_functions_and_modules_match_torch(case):
    with pytest.raises(Exception) as theirs:
        case(torch)
    with pytest.raises(Exception) as mine:
        case(dc)
    assert type(mine.value) is type(theirs.value) and str(mine.value) == str(theirs.value)


def test_softmin_without_dim_warns_as_torch_and_hardtanh_renames_its_old_keywords():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin has been deprecated"):
        F.softmin(dc.ones(2, 3))
    with pytest.warns(FutureWarning, match="keyword argument `min_value` is deprecated and renamed to `min_val`"):
        assert dc.nn.Hardtanh(min_value=-2.0).min_val == -2.0


@pytest.mark.parametrize(("shape", "mode"), [((1, 1, 4), "nearest"), ((1, 1, 2, 2), "bicubic"),
                                             ((1, 1, 2, 2), "nearest-exact"), ((1, 1, 2, 2, 2), "trilinear")])
def test_interpolate_names_what_dispatchcore_does_not_define_where_torch_computes(shape, mode):
    torch.nn.functional.interpolate(torch.ones(shape), size=[3] * (len(shape) - 2), mode=mode)  # torch computes
    with pytest.raises(NotImplementedError, match="is not supported by dispatchcore"):
        F.interpolate(dc.ones(shape), size=[3] * (len(shape) - 2), mode=mode)


def test_group_norm_of_an_empty_batch_and_softmin_s_class_as_torch():
    mine, theirs = F.group_norm(dc.ones(0, 4, 5, 6), 2), TF.group_norm(torch.ones(0, 4, 5, 6), 2)
    assert tuple(mine.shape) == tuple(theirs.shape) == (0, 4, 5, 6)
    assert isinstance(dc.nn.Softmin(1), dc.nn.Softmax) is isinstance(torch.nn.Softmin(1), torch.nn.Softmax) is False


def test_relu6_module_is_a_hardtanh_and_dispatches_hardtanh_as_torch():
    assert isinstance(dc.nn.ReLU6(), dc.nn.Hardtanh) and isinstance(torch.nn.ReLU6(), torch.nn.Hardtanh)
    x = RNG.standard_normal((4, 3)).astype("float32") * 8
    assert _dc_ops(lambda: dc.nn.ReLU6()(dc.tensor(x))) == _torch_ops(lambda: torch.nn.ReLU6()(torch.tensor(x)))
