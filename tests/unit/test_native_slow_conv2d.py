"""torch's Slow2d CPU convolution without torch: which convolutions reach it, its values, gradients and errors.

``_convolution`` and ``convolution_backward`` (CompositeExplicitAutograd) hand a CPU, non-transposed,
non-dilated 1-d or 2-d convolution to ``thnn_conv2d`` -> ``_slow_conv2d_forward`` and to
``_slow_conv2d_backward.output_mask`` (per group, then ``cat``); everything else keeps the composite of
dispatched operators. Also the max-pool kernel's all-windows-inside path (first maximum, last NaN).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd.gradcheck import gradcheck
from dispatchcore.ops import aten as A


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _direct_conv2d(x, w, b, stride, padding):
    """The convolution by its definition (loops over output positions: a reference, not a kernel)."""
    (sh, sw), (ph, pw) = stride, padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    kh, kw = w.shape[2:]
    oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        patch = xp[:, :, i * sh: i * sh + kh, j * sw: j * sw + kw]
        out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return out + (0 if b is None else b[None, :, None, None])


def _ops(t):
    return {h.op.removeprefix("aten::") for h in t.hops()}


def test_cpu_conv2d_reaches_the_slow2d_kernels_forward_and_backward():
    x = dc.randn(2, 3, 6, 5, requires_grad=True)
    w = dc.randn(4, 3, 3, 2, requires_grad=True)
    with dc.trace() as t:
        y = dc.nn.functional.conv2d(x, w, stride=2, padding=1)
        y.sum().backward()
    ops = _ops(t)
    assert {"thnn_conv2d", "_slow_conv2d_forward", "_slow_conv2d_backward.output_mask"} <= ops
    assert "bmm" not in ops and "as_strided" not in ops


@pytest.mark.parametrize("case", ["dilated", "transposed", "3d"])
def test_other_convolutions_keep_the_composite(case):
    if case == "dilated":
        def run():
            return dc.nn.functional.conv2d(dc.randn(1, 2, 6, 6), dc.randn(3, 2, 2, 2), dilation=2)
    elif case == "transposed":
        def run():
            return dc.conv_transpose2d(dc.randn(1, 2, 4, 4), dc.randn(2, 3, 2, 2))
    else:
        def run():
            return dc.conv3d(dc.randn(1, 2, 3, 3, 3), dc.randn(3, 2, 2, 2, 2))
    with dc.trace() as t:
        run()
    assert not any(op.startswith(("_slow_conv2d", "thnn_conv2d")) for op in _ops(t))


def test_meta_convolution_does_not_reach_the_cpu_kernel():
    y = dc.nn.functional.conv2d(dc.empty(2, 3, 6, 5, device="meta"), dc.empty(4, 3, 3, 2, device="meta"))
    assert y.device.type == "meta" and tuple(y.shape) == (2, 4, 4, 4)


@pytest.mark.parametrize("stride,padding", [((1, 1), (0, 0)), ((2, 3), (1, 2)), ((1, 2), (2, 0))])
def test_slow_conv2d_forward_matches_the_definition(stride, padding):
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2)), rng.standard_normal(4)
    y = A._slow_conv2d_forward.default(dc.tensor(x), dc.tensor(w), [3, 2], dc.tensor(b), list(stride),
                                       list(padding))
    np.testing.assert_allclose(y.numpy(), _direct_conv2d(x, w, b, stride, padding), rtol=1e-12, atol=1e-12)
    assert y.is_contiguous()


def test_grouped_and_1d_convolutions_match_the_definition():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 4, 5, 5)), rng.standard_normal((6, 2, 3, 3))
    y = dc.nn.functional.conv2d(dc.tensor(x), dc.tensor(w), groups=2, padding=1)
    want = np.concatenate([_direct_conv2d(x[:, :2], w[:3], None, (1, 1), (1, 1)),
                           _direct_conv2d(x[:, 2:], w[3:], None, (1, 1), (1, 1))], axis=1)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    x1, w1 = rng.standard_normal((2, 3, 9)), rng.standard_normal((4, 3, 3))
    y1 = dc.nn.functional.conv1d(dc.tensor(x1), dc.tensor(w1), stride=2)
    want1 = _direct_conv2d(x1[:, :, None], w1[:, :, None], None, (1, 2), (0, 0))[:, :, 0]
    np.testing.assert_allclose(y1.numpy(), want1, rtol=1e-12, atol=1e-12)


def test_slow_conv2d_gradients_pass_gradcheck_and_name_their_nodes():
    rng = np.random.default_rng(2)
    x = dc.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    w = dc.tensor(rng.standard_normal((2, 2, 2, 2)), requires_grad=True)
    b = dc.tensor(rng.standard_normal(2), requires_grad=True)

    def f(x, w, b):
        return A._slow_conv2d_forward.default(x, w, [2, 2], b, [2, 1], [1, 0])

    assert f(x, w, b).grad_fn.name() == "SlowConv2DBackward0"
    assert gradcheck(f, (x, w, b))
    g = dc.tensor(rng.standard_normal(tuple(f(x, w, b).shape)), requires_grad=True)
    grads = A._slow_conv2d_backward.output_mask(g, x, w, [2, 2], [2, 1], [1, 0], [True, True, True])
    assert grads[0].grad_fn.name() == "SlowConv2DBackwardBackward0"


def test_grouped_convolution_gradients_match_per_group_gradients():
    rng = np.random.default_rng(3)
    x = dc.tensor(rng.standard_normal((2, 4, 5, 4)), requires_grad=True)
    w = dc.tensor(rng.standard_normal((6, 2, 2, 3)), requires_grad=True)
    b = dc.tensor(rng.standard_normal(6), requires_grad=True)
    assert gradcheck(lambda x, w, b: dc.nn.functional.conv2d(x, w, b, groups=2, stride=(1, 2)), (x, w, b))


def test_backward_output_mask_leaves_unrequested_gradients_undefined():
    x, w, g = dc.randn(1, 2, 4, 4), dc.randn(3, 2, 3, 3), dc.randn(1, 3, 2, 2)
    gi, gw, gb = A._slow_conv2d_backward.output_mask(g, x, w, [3, 3], [1, 1], [0, 0], [False, True, False])
    assert gi is None and gb is None and tuple(gw.shape) == (3, 2, 3, 3)


@pytest.mark.parametrize("args,message", [
    (((2, 3, 5, 6), (4, 3, 3, 2), [3, 2], [0, 1], [0, 0], None),
     "stride should be greater than zero, but got stride_height: 0 stride_width: 1"),
    (((3, 5, 6), (4, 3, 3, 2), [3, 2], [1, 1], [0, 0], None), "Expected 4D input tensor, but got: [3, 5, 6]"),
    (((2, 3, 2, 2), (4, 3, 3, 2), [3, 2], [1, 1], [0, 0], None),
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 2). Kernel size can't be greater"),
    (((2, 2, 5, 6), (4, 3, 3, 2), [3, 2], [1, 1], [0, 0], None),
     "Expected a tensor of dimension 4 and tensor.size[1] == 3 but got: dimension 4 and tensor.size[1] = 2"),
    (((2, 3, 5, 6), (4, 3, 3, 2), [3, 2], [1, 1], [0, 0], 5),
     "Expected a tensor of dimension 1 and tensor.size[0] == 4 but got: dimension 1 and tensor.size[0] = 5"),
])
def test_slow_conv2d_forward_errors_in_torchs_words(args, message):
    x_shape, w_shape, kernel, stride, padding, bias = args
    b = None if bias is None else dc.randn(bias)
    with pytest.raises(RuntimeError) as info:
        A._slow_conv2d_forward.default(dc.randn(*x_shape), dc.randn(*w_shape), kernel, b, stride, padding)
    assert str(info.value).startswith(message)


def test_max_pool_inside_windows_picks_the_first_maximum_and_the_last_nan():
    x = dc.tensor(np.array([[[[1.0, 3.0, 3.0, np.nan],
                              [3.0, 2.0, np.nan, 5.0],
                              [-0.0, 0.0, 7.0, 7.0],
                              [0.0, -0.0, 7.0, 7.0]]]], dtype=np.float32))
    values, indices = A.max_pool2d_with_indices.default(x, [2, 2], [2, 2])
    assert indices.tolist() == [[[[1, 6], [8, 10]]]]
    out = values.numpy()
    assert out[0, 0, 0, 0] == 3.0 and np.isnan(out[0, 0, 0, 1]) and out[0, 0, 1, 1] == 7.0
    assert out[0, 0, 1, 0] == 0.0 and np.signbit(out[0, 0, 1, 0])  # -0.0 came first among the equal zeros


def test_slow_conv2d_forward_output_resizes_its_out_and_refuses_another_dtype():
    x, w = dc.randn(1, 2, 4, 4), dc.randn(3, 2, 3, 3)
    out = dc.empty(0)
    assert A._slow_conv2d_forward.output(x, w, [3, 3], None, [1, 1], [0, 0], output=out) is out
    np.testing.assert_array_equal(out.numpy(), A._slow_conv2d_forward.default(x, w, [3, 3], None, [1, 1],
                                                                              [0, 0]).numpy())
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        A._slow_conv2d_forward.output(x, w, [3, 3], None, [1, 1], [0, 0], output=dc.empty(0, dtype=dc.float64))
