"""The nn family against torch 2.13: convolution, pooling, addmm/linear, upsampling, im2col/col2im.

Values, dtypes, shapes and strides of the forward calls, gradients and double-backward node names,
the errors of bad calls (type and text), the decompositions torch takes for the
CompositeImplicitAutograd entry points (``linear``, ``adaptive_avg_pool2d``, ``conv2d`` on an
unbatched input, the 1d average poolings), and the output shapes of the Meta kernels.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd.gradcheck import gradcheck, gradgradcheck
from dispatchcore.ops import aten as A

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential
TA = torch.ops.aten


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _pair(a: np.ndarray, requires_grad: bool = False):
    return dc.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


def _close(mine, theirs, tol: float = 1e-10, strides: bool = True) -> None:
    m, t = mine.detach().numpy(), theirs.detach().numpy()
    assert m.dtype == t.dtype
    assert m.shape == t.shape
    if strides:
        assert tuple(mine.stride()) == tuple(theirs.stride())
    np.testing.assert_allclose(m, t, rtol=tol, atol=tol, equal_nan=True)


def _same_error(mine, theirs) -> None:
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)) as got:
        mine()
    assert str(got.value) == str(expected.value).splitlines()[0]


# --- convolution ---------------------------------------------------------------------------------------------
CONV_CASES = [
    ("2d-stride-pad", (2, 3, 5, 5), (4, 3, 3, 3), dict(stride=2, padding=1)),
    ("2d-groups-dilation", (2, 4, 7, 6), (6, 2, 3, 2), dict(groups=2, dilation=(2, 1), padding=(1, 0))),
    ("1d-stride", (1, 2, 9), (3, 2, 4), dict(stride=3)),
    ("3d-pad", (1, 2, 4, 5, 3), (2, 2, 2, 3, 2), dict(padding=1)),
]


@pytest.mark.parametrize("name, xs, ws, kw", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_convolution_matches_torch_with_gradients(name, xs, ws, kw):
    rng = _rng(1)
    n = len(xs) - 2
    (x, tx), (w, tw), (b, tb) = (_pair(rng.standard_normal(s), True) for s in (xs, ws, (ws[0],)))
    y = getattr(dc, f"conv{n}d")(x, w, b, **kw)
    ty = getattr(torch, f"conv{n}d")(tx, tw, tb, **kw)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "ConvolutionBackward0"
    go = rng.standard_normal(ty.shape)
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        _close(mine.grad, theirs.grad)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1, output_padding=1),
                                dict(groups=2, dilation=(2, 1), padding=(1, 0), stride=(2, 3), output_padding=(1, 2))],
                         ids=["stride-outpad", "groups-dilation"])
def test_transposed_convolution_matches_torch_with_gradients(kw):
    rng = _rng(2)
    groups = kw.get("groups", 1)
    (x, tx), (w, tw), (b, tb) = (_pair(rng.standard_normal(s), True)
                                 for s in ((2, 4, 4, 5), (4, 3, 3, 2), (3 * groups,)))
    y, ty = dc.conv_transpose2d(x, w, b, **kw), torch.conv_transpose2d(tx, tw, tb, **kw)
    _close(y, ty)
    go = rng.standard_normal(ty.shape)
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        _close(mine.grad, theirs.grad)


def test_convolution_float32_matches_torch_within_tolerance():
    rng = _rng(3)
    (x, tx), (w, tw) = (_pair(rng.standard_normal(s).astype(np.float32)) for s in ((2, 3, 6, 6), (4, 3, 3, 3)))
    _close(dc.conv2d(x, w, padding=1), torch.conv2d(tx, tw, padding=1), tol=1e-5)


def test_convolution_double_backward_nodes_and_values_match_torch():
    rng = _rng(4)
    (x, tx), (w, tw), (b, tb) = (_pair(rng.standard_normal(s), True) for s in ((1, 2, 4, 4), (3, 2, 2, 2), (3,)))
    gx, gw = dc.autograd.grad(dc.conv2d(x, w, b, stride=2).sum(), (x, w), create_graph=True)
    tgx, tgw = torch.autograd.grad(torch.conv2d(tx, tw, tb, stride=2).sum(), (tx, tw), create_graph=True)
    assert gx.grad_fn.name() == tgx.grad_fn.name() == "ConvolutionBackwardBackward0"
    (gg,) = dc.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (w,))
    (tgg,) = torch.autograd.grad((tgx * tgx).sum() + (tgw * tgw).sum(), (tw,))
    _close(gg, tgg, strides=False)  # torch's weight gradient comes out of its kernel transposed


def test_convolution_gradgradcheck_plain_and_transposed():
    rng = _rng(5)
    x = dc.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    w = dc.tensor(rng.standard_normal((2, 1, 2, 2)), requires_grad=True)
    b = dc.tensor(rng.standard_normal(2), requires_grad=True)
    assert gradgradcheck(lambda x, w, b: dc.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2), (x, w, b))
    assert gradgradcheck(lambda x, w: dc.conv_transpose2d(x, w, stride=2, output_padding=1, groups=2), (x, w))


def test_convolution_operator_and_underscore_variant_give_torchs_nodes():
    rng = _rng(6)
    (x, tx), (w, tw) = (_pair(rng.standard_normal(s), True) for s in ((1, 2, 4, 4), (3, 2, 3, 3)))
    args = ([1, 1], [0, 0], [1, 1], False, [0, 0], 1, False, False, True, True)
    y, ty = A._convolution.default(x, w, None, *args), TA._convolution(tx, tw, None, *args)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "ConvolutionBackward1"


def test_convolution_backward_operator_respects_output_mask():
    rng = _rng(7)
    (g, tg), (x, tx), (w, tw) = (_pair(rng.standard_normal(s)) for s in ((2, 3, 3, 3), (2, 2, 5, 5), (3, 2, 3, 3)))
    args = ([3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    mine = A.convolution_backward.default(g, x, w, *args, [True, False, True])
    theirs = TA.convolution_backward(tg, tx, tw, *args, [True, False, True])
    assert mine[1] is None and theirs[1] is None
    _close(mine[0], theirs[0])
    _close(mine[2], theirs[2])


def test_conv_padding_same_and_unbatched_input_decompose_as_torch():
    rng = _rng(8)
    (x, tx), (w, tw) = (_pair(rng.standard_normal(s), True) for s in ((3, 6, 5), (2, 3, 3, 3)))
    y, ty = dc.conv2d(x, w, padding="same"), torch.conv2d(tx, tw, padding="same")
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "SqueezeBackward1"
    _close(dc.conv1d(x[:, 0], w[:, :, 0], padding="valid"), torch.conv1d(tx[:, 0], tw[:, :, 0], padding="valid"))


def test_conv_padding_same_pads_an_even_kernel_on_the_right_and_warns_once(monkeypatch):
    from dispatchcore.native import nn as F

    monkeypatch.setattr(F, "_WARNED_ONCE", [])
    rng = _rng(24)
    (x, tx), (w, tw) = (_pair(rng.standard_normal(s)) for s in ((1, 2, 5, 4), (3, 2, 2, 3)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y, ty = dc.conv2d(x, w, padding="same"), torch.conv2d(tx, tw, padding="same")  # torch warns once a process
        dc.conv2d(x, w, padding="same")
    _close(y, ty)
    mine = [str(c.message) for c in caught if "padding='same'" in str(c.message) and "Triggered" not in str(c.message)]
    assert mine == ["Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
                    "of the input be created"]


@pytest.mark.parametrize("case", [
    "dim", "channels", "kernel-too-big", "negative-padding", "zero-stride", "zero-dilation", "zero-groups",
    "groups-divide", "bias-size", "weight-dtype", "stride-length", "transposed-channels", "output-padding",
    "weight-1d", "conv2d-2d-input", "same-strided", "bad-padding-string",
])
def test_convolution_errors_match_torch(case):
    def run(lib, ops):
        f = lib.float64
        x, w = lib.zeros([2, 3, 5, 5], dtype=f), lib.zeros([4, 3, 3, 3], dtype=f)

        def c(inp=x, wt=w, b=None, s=(1, 1), p=(0, 0), d=(1, 1), t=False, op=(0, 0), g=1):
            return ops.convolution(inp, wt, b, list(s), list(p), list(d), t, list(op), g)

        return {
            "dim": lambda: c(inp=x[0]),
            "channels": lambda: c(inp=lib.zeros([2, 5, 5, 5], dtype=f)),
            "kernel-too-big": lambda: c(inp=x[:, :, :2, :2]),
            "negative-padding": lambda: c(p=(-1, 0)),
            "zero-stride": lambda: c(s=(0, 1)),
            "zero-dilation": lambda: c(d=(0, 1)),
            "zero-groups": lambda: c(g=0),
            "groups-divide": lambda: c(inp=lib.zeros([2, 6, 5, 5], dtype=f), wt=lib.zeros([3, 3, 3, 3], dtype=f), g=2),
            "bias-size": lambda: c(b=lib.zeros([3], dtype=f)),
            "weight-dtype": lambda: c(wt=lib.zeros([4, 3, 3, 3])),
            "stride-length": lambda: c(s=(1, 1, 1)),
            "transposed-channels": lambda: c(inp=lib.zeros([2, 5, 5, 5], dtype=f), t=True),
            "output-padding": lambda: c(wt=w.transpose(0, 1), t=True, op=(1, 1)),
            "weight-1d": lambda: c(wt=lib.zeros([4], dtype=f)),
            "conv2d-2d-input": lambda: lib.conv2d(x[0, 0], w),
            "same-strided": lambda: lib.conv2d(x, w, padding="same", stride=2),
            "bad-padding-string": lambda: lib.conv2d(x, w, padding="foo"),
        }[case]

    _same_error(run(dc, dc), run(torch, torch))


# --- addmm, linear --------------------------------------------------------------------------------------
def test_addmm_matches_torch_with_scalars_and_broadcast_bias():
    rng = _rng(9)
    (s, ts), (m1, tm1), (m2, tm2) = (_pair(rng.standard_normal(sh), True) for sh in ((4,), (3, 5), (5, 4)))
    y, ty = dc.addmm(s, m1, m2, beta=0.5, alpha=2.0), torch.addmm(ts, tm1, tm2, beta=0.5, alpha=2.0)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "AddmmBackward0"
    go = rng.standard_normal((3, 4))
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    for mine, theirs in ((s, ts), (m1, tm1), (m2, tm2)):
        _close(mine.grad, theirs.grad)


def test_addmm_integers_inplace_and_out_match_torch():
    a = np.arange(6).reshape(2, 3)
    (s, ts), (m1, tm1), (m2, tm2) = _pair(a[:, :2].copy()), _pair(a), _pair(a.T.copy()[:, :2])
    _close(dc.addmm(s, m1, m2, beta=2), torch.addmm(ts, tm1, tm2, beta=2))
    out, tout = dc.empty([0], dtype=dc.int64), torch.empty(0, dtype=torch.int64)
    _close(dc.addmm(s, m1, m2, out=out), torch.addmm(ts, tm1, tm2, out=tout))
    _close(s.addmm_(m1, m2, alpha=3), ts.addmm_(tm1, tm2, alpha=3))


@pytest.mark.parametrize("case", ["shapes", "bias", "one-d", "mat-dtype", "self-dtype", "bool", "inplace-broadcast",
                                  "out-dtype"])
def test_addmm_errors_match_torch(case):
    def run(lib):
        x = lib.ones([5, 5], dtype=lib.float64)
        return {
            "shapes": lambda: lib.addmm(x[0, :2], x, x[:3, :3]),
            "bias": lambda: lib.addmm(x[:3, :2], x[:2], x),
            "one-d": lambda: lib.addmm(x[0], x[0], x),
            "mat-dtype": lambda: lib.addmm(x, x.float(), x),
            "self-dtype": lambda: lib.addmm(x.float(), x, x),
            "bool": lambda: lib.addmm(x.bool(), x.bool(), x.bool()),
            "inplace-broadcast": lambda: x[0].clone().addmm_(x, x),
            "out-dtype": lambda: lib.addmm(x, x, x, out=lib.empty([0])),
        }[case]

    _same_error(run(dc), run(torch))


@pytest.mark.parametrize("shape, bias, node", [
    ((3, 5), True, "AddmmBackward0"), ((2, 3, 5), True, "ViewBackward0"), ((5,), True, "ViewBackward0"),
    ((2, 2, 3, 5), False, "UnsafeViewBackward0"), ((3, 5), False, "MmBackward0"),
])
def test_linear_lowers_as_torch(shape, bias, node):
    rng = _rng(10)
    (x, tx), (w, tw), (b, tb) = (_pair(rng.standard_normal(s), True) for s in (shape, (4, 5), (4,)))
    y = A.linear.default(x, w, b if bias else None)
    ty = TA.linear(tx, tw, tb if bias else None)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == node


def test_linear_on_a_noncontiguous_input_adds_the_bias_out_of_place():
    rng = _rng(11)
    (x, tx), (w, tw), (b, tb) = (_pair(rng.standard_normal(s), True) for s in ((5, 2, 3), (4, 5), (4,)))
    y, ty = A.linear.default(x.transpose(0, 2), w, b), TA.linear(tx.transpose(0, 2), tw, tb)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "AddBackward0"


# --- pooling ---------------------------------------------------------------------------------------------
MAX_CASES = [
    ("plain", (2, 3, 5, 5), ([2, 2],)),
    ("stride-pad-dilation", (1, 2, 7, 6), ([3, 2], [2, 1], [1, 1], [2, 1])),
    ("ceil", (2, 1, 6, 7), ([3, 3], [2, 2], [1, 0], [1, 1], True)),
    ("unbatched", (3, 4, 5), ([2, 3], [1, 2])),
]


@pytest.mark.parametrize("name, shape, args", MAX_CASES, ids=[c[0] for c in MAX_CASES])
def test_max_pool2d_with_indices_matches_torch(name, shape, args):
    rng = _rng(12)
    x, tx = _pair(rng.standard_normal(shape), True)
    (y, i), (ty, ti) = A.max_pool2d_with_indices.default(x, *args), TA.max_pool2d_with_indices(tx, *args)
    _close(y, ty)
    _close(i, ti)
    assert y.grad_fn.name() == ty.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    go = rng.standard_normal(ty.shape)
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    _close(x.grad, tx.grad)


def test_max_pool_ties_take_the_first_maximum_and_nan_the_last_nan():
    data = np.array([[[[2.0, 2.0, 1.0, np.nan, 0.0, np.nan]]]])
    x, tx = _pair(data)
    for mine, theirs in zip(A.max_pool2d_with_indices.default(x, [1, 3]), TA.max_pool2d_with_indices(tx, [1, 3])):
        _close(mine, theirs)


def test_max_pool_on_integers_and_3d_matches_torch():
    rng = _rng(13)
    x, tx = _pair(rng.integers(-50, 50, (2, 2, 5, 6)))
    for mine, theirs in zip(A.max_pool2d_with_indices.default(x, [2, 2], [1, 2], [1, 1]),
                            TA.max_pool2d_with_indices(tx, [2, 2], [1, 2], [1, 1])):
        _close(mine, theirs)
    x, tx = _pair(rng.standard_normal((1, 2, 4, 5, 6)), True)
    args = ([2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], True)
    (y, i), (ty, ti) = A.max_pool3d_with_indices.default(x, *args), TA.max_pool3d_with_indices(tx, *args)
    _close(y, ty)
    _close(i, ti)
    assert y.grad_fn.name() == ty.grad_fn.name() == "MaxPool3DWithIndicesBackward0"
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad)


AVG_CASES = [
    ("plain", (2, 3, 5, 5), ([2, 2],)),
    ("pad-exclude", (1, 2, 7, 6), ([3, 2], [2, 1], [1, 1], False, False)),
    ("ceil-include", (2, 1, 6, 7), ([3, 3], [2, 2], [1, 0], True, True)),
    ("divisor", (3, 4, 5), ([2, 3], [1, 2], [1, 1], False, True, 5)),
]


@pytest.mark.parametrize("name, shape, args", AVG_CASES, ids=[c[0] for c in AVG_CASES])
def test_avg_pool2d_matches_torch(name, shape, args):
    rng = _rng(14)
    x, tx = _pair(rng.standard_normal(shape), True)
    y, ty = A.avg_pool2d.default(x, *args), TA.avg_pool2d(tx, *args)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "AvgPool2DBackward0"
    go = rng.standard_normal(ty.shape)
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    _close(x.grad, tx.grad)


def test_avg_pool_on_int64_truncates_as_torch_and_3d_matches():
    rng = _rng(15)
    x, tx = _pair(rng.integers(-40, 40, (1, 2, 5, 5)))
    _close(A.avg_pool2d.default(x, [3, 3], [2, 2], [1, 1]), TA.avg_pool2d(tx, [3, 3], [2, 2], [1, 1]))
    x, tx = _pair(rng.standard_normal((2, 2, 4, 5, 6)), True)
    args = ([2, 3, 2], [1, 2, 2], [1, 1, 0], True, False)
    y, ty = A.avg_pool3d.default(x, *args), TA.avg_pool3d(tx, *args)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "AvgPool3DBackward0"
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad)


def test_pooling_double_backward_nodes_match_torch():
    rng = _rng(16)
    x, tx = _pair(rng.standard_normal((1, 2, 5, 5)), True)
    cases = (
        ("max_pool2d_with_indices", lambda ops, t: ops.max_pool2d_with_indices(t, [2, 2])[0],
         "MaxPool2DWithIndicesBackwardBackward0"),
        ("avg_pool2d", lambda ops, t: ops.avg_pool2d(t, [2, 2]), "AvgPool2DBackwardBackward0"),
        ("adaptive", lambda ops, t: ops._adaptive_avg_pool2d(t, [2, 3]), "AdaptiveAvgPool2DBackwardBackward0"),
    )
    for _, call, node in cases:
        mine, theirs = (lambda t, c=call: c(_Default(A), t)), (lambda t, c=call: c(TA, t))
        (g,) = dc.autograd.grad(mine(x).sum(), (x,), create_graph=True)
        (tg,) = torch.autograd.grad(theirs(tx).sum(), (tx,), create_graph=True)
        assert g.grad_fn.name() == tg.grad_fn.name() == node
        _close(g, tg)


def test_pooling_gradgradcheck():
    rng = _rng(17)
    x = dc.tensor(rng.standard_normal((1, 1, 4, 5)), requires_grad=True)
    assert gradgradcheck(lambda t: A.max_pool2d_with_indices.default(t, [2, 2], [1, 2], [1, 1])[0], (x,))
    assert gradgradcheck(lambda t: A.avg_pool2d.default(t, [3, 2], [2, 1], [1, 1], True, False), (x,))
    assert gradgradcheck(lambda t: A._adaptive_avg_pool2d.default(t, [3, 2]), (x,))
    assert gradcheck(lambda t: A.avg_pool3d.default(t, [1, 2, 2], [1, 1, 1], [0, 0, 1]), (x.view([1, 1, 1, 4, 5]),))


def test_adaptive_avg_pool_matches_torch_and_its_1x1_case_is_a_mean():
    rng = _rng(18)
    x, tx = _pair(rng.standard_normal((2, 3, 7, 5)), True)
    y, ty = A._adaptive_avg_pool2d.default(x, [3, 4]), TA._adaptive_avg_pool2d(tx, [3, 4])
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad)
    y, ty = A.adaptive_avg_pool2d.default(x, [1, 1]), TA.adaptive_avg_pool2d(tx, [1, 1])
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "MeanBackward1"
    x3, tx3 = _pair(rng.standard_normal((1, 2, 5, 4, 3)), True)
    y, ty = A._adaptive_avg_pool3d.default(x3, [2, 3, 2]), TA._adaptive_avg_pool3d(tx3, [2, 3, 2])
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "AdaptiveAvgPool3DBackward0"


@pytest.mark.parametrize("case", [
    "mp-too-small", "mp-too-small-unbatched", "mp-kernel-zero", "mp-kernel-length", "mp-stride-length",
    "mp-padding-length", "mp-dilation-length", "mp-negative-padding", "mp-pad-too-big", "mp-dilation-zero",
    "mp-2d-input", "mp-empty-channels", "mp-bool", "mp3-too-small", "mp3-empty", "mp-backward-long",
    "ap-too-small", "ap-divisor-zero", "ap-int32", "ap-kernel-length", "ap3-kernel-length", "ap3-smaller-than-kernel",
    "aa-2d-input", "aa-output-length", "aa-empty", "aa-long", "aa3-output-length",
])
def test_pooling_errors_match_torch(case):
    def run(lib, ops):
        x = lib.ones([2, 3, 5, 5], dtype=lib.float64)
        mp, ap = ops.max_pool2d_with_indices, ops.avg_pool2d
        return {
            "mp-too-small": lambda: mp(x[:, :, :2, :2], [3, 3]),
            "mp-too-small-unbatched": lambda: mp(lib.ones([1, 2, 2]), [3, 3], [1, 1], [0, 0]),
            "mp-kernel-zero": lambda: mp(x, [0, 2]),
            "mp-kernel-length": lambda: mp(x, [2, 2, 2]),
            "mp-stride-length": lambda: mp(x, [2, 2], [1, 1, 1]),
            "mp-padding-length": lambda: mp(x, [2, 2], [1, 1], [0, 0, 0]),
            "mp-dilation-length": lambda: mp(x, [2, 2], [1, 1], [0, 0], [1, 1, 1]),
            "mp-negative-padding": lambda: mp(x, [2, 2], [1, 1], [-1, 0]),
            "mp-pad-too-big": lambda: mp(x, [2, 2], [2, 2], [2, 2]),
            "mp-dilation-zero": lambda: mp(x, [2, 2], [2, 2], [0, 0], [0, 1]),
            "mp-2d-input": lambda: mp(x[0, 0], [2, 2]),
            "mp-empty-channels": lambda: mp(x[:, :0], [2, 2]),
            "mp-bool": lambda: mp(x.bool(), [2, 2]),
            "mp3-too-small": lambda: ops.max_pool3d_with_indices(x[:, :, :, :2], [3, 3, 3]),
            "mp3-empty": lambda: ops.max_pool3d_with_indices(x[:, :0], [2, 2, 2]),
            "mp-backward-long": lambda: ops.max_pool2d_with_indices_backward(
                x.long(), x.long(), [1, 1], [1, 1], [0, 0], [1, 1], False, x.long()),
            "ap-too-small": lambda: ap(x[:, :, :2, :2], [3, 3]),
            "ap-divisor-zero": lambda: ap(x, [2, 2], [2, 2], [0, 0], False, True, 0),
            "ap-int32": lambda: ap(x.int(), [2, 2]),
            "ap-kernel-length": lambda: ap(x, [2, 2, 2]),
            "ap3-kernel-length": lambda: ops.avg_pool3d(x, [2, 2]),
            "ap3-smaller-than-kernel": lambda: ops.avg_pool3d(x[:, :, :1], [2, 2, 2]),
            "aa-2d-input": lambda: ops._adaptive_avg_pool2d(x[0, 0], [2, 2]),
            "aa-output-length": lambda: ops._adaptive_avg_pool2d(x, [2]),
            "aa-empty": lambda: ops._adaptive_avg_pool2d(x[:, :, :0], [2, 2]),
            "aa-long": lambda: ops._adaptive_avg_pool2d(x.long(), [2, 2]),
            "aa3-output-length": lambda: ops._adaptive_avg_pool3d(x, [2, 2]),
        }[case]

    _same_error(run(dc, _Default(A)), run(torch, TA))


class _Default:
    """``ops.aten.<name>`` called as ``torch.ops.aten.<name>`` is: through the default overload."""

    def __init__(self, ns):
        self._ns = ns

    def __getattr__(self, name):
        return getattr(self._ns, name).default


# --- 1d poolings (CompositeImplicitAutograd) ---------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs", [
    ((3,), {}),
    ((3, 2, 1, True, False), {}),
    (((4,),), {"stride": None, "padding": 2, "ceil_mode": True}),
    ((2, [1]), {"count_include_pad": False, "padding": [1]}),
])
def test_avg_pool1d_decomposes_as_torch_with_values_gradients_and_nodes(args, kwargs):
    x, tx = _pair(_rng(30).standard_normal((2, 3, 7)), True)
    y, ty = dc.avg_pool1d(x, *args, **kwargs), torch.avg_pool1d(tx, *args, **kwargs)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "SqueezeBackward1"
    assert y.grad_fn.next_functions[0][0].name() == ty.grad_fn.next_functions[0][0].name() == "AvgPool2DBackward0"
    g = _rng(31).standard_normal(tuple(ty.shape))
    y.backward(dc.tensor(g))
    ty.backward(torch.tensor(g))
    _close(x.grad, tx.grad)
    u, tu = _pair(_rng(32).standard_normal((3, 7))[:, ::2])  # unbatched, non-contiguous
    _close(dc.avg_pool1d(u, *args, **kwargs), torch.avg_pool1d(tu, *args, **kwargs))
    small = dc.tensor(_rng(33).standard_normal((1, 2, 5)), requires_grad=True)
    assert gradgradcheck(lambda t: dc.avg_pool1d(t, *args, **kwargs), (small,))


@pytest.mark.parametrize("size, node", [(4, "AdaptiveAvgPool2DBackward0"), ([3], "AdaptiveAvgPool2DBackward0"),
                                        (1, "MeanBackward1"), (9, "AdaptiveAvgPool2DBackward0")])
def test_adaptive_avg_pool1d_decomposes_as_torch_with_values_gradients_and_nodes(size, node):
    x, tx = _pair(_rng(34).standard_normal((2, 3, 7)), True)
    y, ty = dc.adaptive_avg_pool1d(x, size), torch.adaptive_avg_pool1d(tx, size)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "SqueezeBackward1"
    assert y.grad_fn.next_functions[0][0].name() == ty.grad_fn.next_functions[0][0].name() == node
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad)
    u, tu = _pair(_rng(35).standard_normal((7, 3)).T)  # unbatched, transposed
    _close(dc.adaptive_avg_pool1d(u, size), torch.adaptive_avg_pool1d(tu, size))
    small = dc.tensor(_rng(36).standard_normal((1, 2, 5)), requires_grad=True)
    assert gradgradcheck(lambda t: dc.adaptive_avg_pool1d(t, size), (small,))


@pytest.mark.parametrize("case", [
    "ap1-1d-input", "ap1-4d-input", "ap1-kernel-length", "ap1-stride-length", "ap1-padding-length", "ap1-no-kernel",
    "ap1-too-small", "ap1-stride-zero", "ap1-pad-too-big", "ap1-empty-channels", "ap1-bool", "ap1-int32",
    "aa1-1d-input", "aa1-output-length", "aa1-negative", "aa1-long", "aa1-long-mean",
    "ap1-binding-float", "ap1-binding-missing", "aa1-binding-extra",
])
def test_1d_pooling_errors_match_torch(case):
    def run(lib):
        x = lib.ones([2, 3, 7], dtype=lib.float64)
        ap, aa = lib.ops.aten.avg_pool1d.default, lib.ops.aten.adaptive_avg_pool1d.default
        return {
            "ap1-1d-input": lambda: ap(x[0, 0], [3]),
            "ap1-4d-input": lambda: ap(x.reshape(1, 2, 3, 7), [3]),
            "ap1-kernel-length": lambda: ap(x, [3, 3]),
            "ap1-stride-length": lambda: ap(x, [3], [1, 1]),
            "ap1-padding-length": lambda: ap(x, [3], [], []),
            "ap1-no-kernel": lambda: ap(x, []),
            "ap1-too-small": lambda: ap(x, [9]),
            "ap1-stride-zero": lambda: ap(x, [3], [0]),
            "ap1-pad-too-big": lambda: ap(x, [3], [1], [2]),
            "ap1-empty-channels": lambda: ap(x[:, :0], [2]),
            "ap1-bool": lambda: ap(x.bool(), [2]),
            "ap1-int32": lambda: ap(x.int(), [2]),
            "aa1-1d-input": lambda: aa(x[0, 0], [3]),
            "aa1-output-length": lambda: aa(x, [3, 3]),
            "aa1-negative": lambda: aa(x, [-1]),
            "aa1-long": lambda: aa(x.long(), [2]),
            "aa1-long-mean": lambda: aa(x.long(), [1]),
            "ap1-binding-float": lambda: lib.avg_pool1d(x, 2.5),
            "ap1-binding-missing": lambda: lib.avg_pool1d(x),
            "aa1-binding-extra": lambda: lib.adaptive_avg_pool1d(x, 2, 3),
        }[case]

    _same_error(run(dc), run(torch))


def test_1d_poolings_keep_an_empty_batch_and_empty_channels_as_torch():
    x, tx = _pair(np.ones((0, 3, 7)))
    _close(dc.avg_pool1d(x, 2), torch.avg_pool1d(tx, 2))
    _close(dc.adaptive_avg_pool1d(x, 2), torch.adaptive_avg_pool1d(tx, 2))
    c, tc = _pair(np.ones((2, 0, 7)))  # the 2d rule checks only the spatial dims: no channels is fine
    _close(dc.adaptive_avg_pool1d(c, 2), torch.adaptive_avg_pool1d(tc, 2))
    _close(A._adaptive_avg_pool2d.default(dc.ones([2, 0, 3, 4]), [2, 2]),
           TA._adaptive_avg_pool2d(torch.ones([2, 0, 3, 4]), [2, 2]))


# --- upsampling -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size, scales", [([7, 9], None), ([10, 3], None), (None, [1.7, 2.3]), (None, [2.0, 0.6])])
def test_upsample_nearest2d_matches_torch(size, scales):
    rng = _rng(19)
    x, tx = _pair(rng.standard_normal((2, 3, 5, 4)), True)
    y, ty = A.upsample_nearest2d.vec(x, size, scales), TA.upsample_nearest2d.vec(tx, size, scales)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "UpsampleNearest2DBackward0"
    go = rng.standard_normal(ty.shape)
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    _close(x.grad, tx.grad)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size, scales", [([7, 9], None), ([3, 2], None), (None, [1.7, 2.3]), ([5, 1], None)])
def test_upsample_bilinear2d_matches_torch(align, size, scales):
    rng = _rng(20)
    x, tx = _pair(rng.standard_normal((1, 2, 5, 4)), True)
    y, ty = A.upsample_bilinear2d.vec(x, size, align, scales), TA.upsample_bilinear2d.vec(tx, size, align, scales)
    _close(y, ty, tol=1e-12)
    assert y.grad_fn.name() == ty.grad_fn.name() == "UpsampleBilinear2DBackward0"
    go = rng.standard_normal(ty.shape)
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    _close(x.grad, tx.grad, tol=1e-12)


def test_upsample_float32_and_uint8_nearest_match_torch():
    rng = _rng(21)
    x, tx = _pair(rng.standard_normal((1, 2, 5, 3)).astype(np.float32))
    _close(A.upsample_bilinear2d.default(x, [8, 7], False, 1.5, None),
           TA.upsample_bilinear2d(tx, [8, 7], False, 1.5, None), tol=1e-6)
    x, tx = _pair(rng.integers(0, 255, (1, 1, 3, 4)).astype(np.uint8))
    _close(A.upsample_nearest2d.default(x, [7, 5]), TA.upsample_nearest2d(tx, [7, 5]))


def test_upsample_double_backward_matches_torch():
    rng = _rng(22)
    g, tg = _pair(rng.standard_normal((1, 1, 6, 5)), True)
    y = A.upsample_nearest2d_backward.default(g, [6, 5], [1, 1, 3, 2])
    ty = TA.upsample_nearest2d_backward(tg, [6, 5], [1, 1, 3, 2])
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "UpsampleNearest2DBackwardBackward0"
    x = dc.tensor(rng.standard_normal((1, 1, 3, 2)), requires_grad=True)
    assert gradgradcheck(lambda t: A.upsample_bilinear2d.default(t, [5, 4], True), (x,))


@pytest.mark.parametrize("case", ["3d-input", "zero-output", "long", "both", "neither", "size-length",
                                  "scales-length", "negative-scale", "bilinear-long"])
def test_upsample_errors_match_torch(case):
    def run(lib, ops):
        x = lib.ones([2, 3, 5, 5], dtype=lib.float64)
        return {
            "3d-input": lambda: ops.upsample_nearest2d.default(x[0], [4, 4]),
            "zero-output": lambda: ops.upsample_nearest2d.default(x, [0, 4]),
            "long": lambda: ops.upsample_nearest2d.default(x.long(), [7, 7]),
            "both": lambda: ops.upsample_nearest2d.vec(x, [7, 7], [2.0, 2.0]),
            "neither": lambda: ops.upsample_nearest2d.vec(x, None, None),
            "size-length": lambda: ops.upsample_nearest2d.vec(x, [7], None),
            "scales-length": lambda: ops.upsample_nearest2d.vec(x, None, [2.0]),
            "negative-scale": lambda: ops.upsample_nearest2d.vec(x, None, [-2.0, 2.0]),
            "bilinear-long": lambda: ops.upsample_bilinear2d.default(x.long(), [7, 7], False),
        }[case]

    _same_error(run(dc, A), run(torch, TA))


# --- im2col, col2im -------------------------------------------------------------------------------------
def test_im2col_and_col2im_match_torch_and_are_each_others_gradient():
    rng = _rng(23)
    x, tx = _pair(rng.standard_normal((2, 3, 5, 6)), True)
    args = ([2, 3], [2, 1], [1, 1], [1, 2])
    y, ty = A.im2col.default(x, *args), TA.im2col(tx, *args)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "Im2ColBackward0"
    go = rng.standard_normal(ty.shape)
    y.backward(dc.tensor(go))
    ty.backward(torch.tensor(go))
    _close(x.grad, tx.grad)
    c, tc = _pair(rng.standard_normal(tuple(ty.shape)), True)
    z, tz = A.col2im.default(c, [5, 6], *args), TA.col2im(tc, [5, 6], *args)
    _close(z, tz)
    assert z.grad_fn.name() == tz.grad_fn.name() == "Col2ImBackward0"
    z.sum().backward()
    tz.sum().backward()
    _close(c.grad, tc.grad)


@pytest.mark.parametrize("case", ["col2im-1d", "col2im-blocks", "col2im-kernel", "col2im-long", "im2col-too-big",
                                  "im2col-long", "im2col-negative-padding"])
def test_im2col_col2im_errors_match_torch(case):
    def run(lib, ops):
        x = lib.ones([2, 3, 5, 5], dtype=lib.float64)
        cols = lib.ones([1, 8, 4], dtype=lib.float64)
        return {
            "col2im-1d": lambda: ops.col2im(x[0, 0, 0], [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
            "col2im-blocks": lambda: ops.col2im(lib.ones([1, 8, 5], dtype=lib.float64), [3, 3], [2, 2], [1, 1],
                                                [0, 0], [1, 1]),
            "col2im-kernel": lambda: ops.col2im(cols, [3, 3], [0, 2], [1, 1], [0, 0], [1, 1]),
            "col2im-long": lambda: ops.col2im(cols.long(), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
            "im2col-too-big": lambda: ops.im2col(x, [7, 7], [1, 1], [0, 0], [1, 1]),
            "im2col-long": lambda: ops.im2col(x.long(), [2, 2], [1, 1], [0, 0], [1, 1]),
            "im2col-negative-padding": lambda: ops.im2col(x, [2, 2], [1, 1], [-1, 0], [1, 1]),
        }[case]

    _same_error(run(dc, _Default(A)), run(torch, TA))


# --- meta shapes ------------------------------------------------------------------------------------------
def test_meta_kernels_give_torchs_shapes_and_dtypes():
    def calls(lib, ops, dev):
        x = lib.empty([2, 4, 7, 6], device=dev)
        x5 = lib.empty([1, 2, 5, 4, 6], device=dev)
        w = lib.empty([6, 2, 3, 2], device=dev)
        return [
            lambda: ops.convolution.default(x, w, None, [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
            lambda: ops.convolution.default(x[:, :2], w.transpose(0, 1)[:, :4], None, [2, 3], [1, 0], [1, 1], True,
                                            [1, 2], 1),
            lambda: ops.max_pool2d_with_indices.default(x, [3, 2], [2, 2], [1, 1], [1, 1], True),
            lambda: ops.max_pool3d_with_indices.default(x5, [2, 2, 3]),
            lambda: ops.avg_pool2d.default(x, [3, 3], [2, 2], [1, 1], True),
            lambda: ops.avg_pool3d.default(x5, [2, 2, 2], [1, 2, 2]),
            lambda: ops._adaptive_avg_pool2d.default(x, [3, 2]),
            lambda: ops._adaptive_avg_pool3d.default(x5, [2, 3, 1]),
            lambda: ops.avg_pool1d.default(x[0], [3], [2], [1], True, False),
            lambda: ops.adaptive_avg_pool1d.default(x[0], [4]),
            lambda: ops.upsample_nearest2d.default(x, [9, 4]),
            lambda: ops.upsample_bilinear2d.default(x, [9, 4], True),
            lambda: ops.im2col.default(x, [2, 2], [1, 1], [0, 0], [1, 1]),
            lambda: ops.col2im.default(lib.empty([2, 8, 4], device=dev), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
            lambda: ops.addmm.default(lib.empty([3], device=dev), lib.empty([2, 5], device=dev),
                                      lib.empty([5, 3], device=dev)),
        ]

    for mine, theirs in zip(calls(dc, A, "meta"), calls(torch, TA, "meta")):
        m, t = mine(), theirs()
        m, t = (m, t) if isinstance(t, tuple) else ((m,), (t,))
        for a, b in zip(m, t):
            assert a.device.type == "meta"
            assert (tuple(a.shape), a.dtype.name) == (tuple(b.shape), str(b.dtype).removeprefix("torch."))
