"""The nn family without torch: small cases computed by hand, the shared shape rules, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd.gradcheck import gradcheck
from dispatchcore.native import nn as F
from dispatchcore.ops import aten as A


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _t(values, **kw):
    return dc.tensor(np.asarray(values, dtype=np.float64), **kw)


def test_pool_output_size_follows_floor_and_ceil_mode():
    assert F.pool_output_size(5, 2, 0, 2, 1, False) == 2
    assert F.pool_output_size(5, 2, 0, 2, 1, True) == 3
    assert F.pool_output_size(4, 2, 1, 2, 1, True) == 3  # the last window would start in the padding: dropped
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.pool_output_size(5, 2, 0, 0, 1, False)


def test_conv_check_gives_output_shapes_for_plain_and_transposed():
    x, w = dc.empty([2, 4, 7, 6]), dc.empty([6, 2, 3, 2])
    assert F.conv_check(x, w, None, [2, 1], [1, 0], [1, 2], False, [0], 2) == (2, 6, 4, 4)
    assert F.conv_check(dc.empty([1, 6, 3, 3]), w, None, [2], [0], [1], True, [1], 3) == (1, 6, 8, 7)


def test_conv2d_sums_each_window_times_the_kernel():
    x = _t(np.arange(9.0).reshape(1, 1, 3, 3))
    w = _t([[[[1.0, 0.0], [0.0, -1.0]]]])
    y = dc.conv2d(x, w, _t([10.0]))
    assert y.tolist() == [[[[10 - 4.0, 10 - 4.0], [10 - 4.0, 10 - 4.0]]]]
    assert y.is_contiguous()


def test_transposed_conv_scatters_each_input_into_its_window():
    x = _t([[[1.0, 2.0]]])
    w = _t([[[1.0, 10.0, 100.0]]])
    assert dc.conv_transpose1d(x, w, stride=2).tolist() == [[[1.0, 10.0, 102.0, 20.0, 200.0]]]


def test_grouped_conv_keeps_groups_apart():
    x = _t(np.ones((1, 2, 3)))
    w = _t([[[1.0]], [[2.0]]])
    assert dc.conv1d(x, w, groups=2).tolist() == [[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]]


def test_conv_gradients_pass_gradcheck():
    rng = np.random.default_rng(0)
    x = dc.tensor(rng.standard_normal((1, 2, 4)), requires_grad=True)
    w = dc.tensor(rng.standard_normal((2, 1, 3)), requires_grad=True)
    b = dc.tensor(rng.standard_normal(2), requires_grad=True)
    assert gradcheck(lambda x, w, b: dc.conv1d(x, w, b, padding=1, dilation=2, groups=2), (x, w, b))
    assert dc.conv1d(x, w, b, groups=2).grad_fn.name() == "ConvolutionBackward0"


def test_conv_refuses_mismatched_channels():
    with pytest.raises(RuntimeError, match=r"expected input\[1, 3, 4\] to have 2 channels, but got 3 channels"):
        dc.conv1d(dc.zeros([1, 3, 4]), dc.zeros([1, 2, 2]))


def test_max_pool_returns_values_and_flat_plane_indices():
    x = _t([[[[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]]]], requires_grad=True)
    y, i = A.max_pool2d_with_indices.default(x, [2, 2], [1, 1])
    assert y.tolist() == [[[[5.0, 6.0]]]]
    assert i.tolist() == [[[[1, 5]]]] and i.dtype is dc.int64
    y.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]]
    assert y.grad_fn.name() == "MaxPool2DWithIndicesBackward0"


def test_max_pool2d_function_drops_the_indices():
    assert dc.max_pool2d(_t([[[[1.0, 2.0], [3.0, 4.0]]]]), 2).tolist() == [[[[4.0]]]]


def test_avg_pool_counts_padding_only_when_asked():
    x = _t(np.ones((1, 1, 2, 2)))
    assert A.avg_pool2d.default(x, [2, 2], [2, 2], [1, 1]).tolist() == [[[[0.25, 0.25], [0.25, 0.25]]]]
    assert A.avg_pool2d.default(x, [2, 2], [2, 2], [1, 1], False, False).tolist() == [[[[1.0, 1.0], [1.0, 1.0]]]]
    assert A.avg_pool2d.default(x, [2, 2], [2, 2], [1, 1], False, True, 2).tolist() == [[[[0.5, 0.5], [0.5, 0.5]]]]


def test_avg_pool_on_int64_truncates_toward_zero():
    x = dc.tensor(np.array([[[[-3, -4]]]], dtype=np.int64))
    assert A.avg_pool2d.default(x, [1, 2]).tolist() == [[[[-3]]]]


def test_adaptive_avg_pool_windows_overlap_as_floor_and_ceil_say():
    x = _t([[[[1.0, 2.0, 3.0]]]])
    assert A._adaptive_avg_pool2d.default(x, [1, 2]).tolist() == [[[[1.5, 2.5]]]]
    assert A.adaptive_avg_pool2d.default(x, [1, 1]).grad_fn is None


def test_upsample_nearest_and_bilinear_small_cases():
    x = _t([[[[1.0, 2.0]]]])
    assert A.upsample_nearest2d.default(x, [1, 4]).tolist() == [[[[1.0, 1.0, 2.0, 2.0]]]]
    assert A.upsample_bilinear2d.default(x, [1, 3], True).tolist() == [[[[1.0, 1.5, 2.0]]]]
    assert A.upsample_bilinear2d.default(x, [1, 4], False).tolist() == [[[[1.0, 1.25, 1.75, 2.0]]]]
    assert A.upsample_nearest2d.vec(x, None, [1.0, 1.5]).shape == (1, 1, 1, 3)


def test_im2col_and_col2im_are_adjoint():
    rng = np.random.default_rng(1)
    x = dc.tensor(rng.standard_normal((1, 2, 4, 3)))
    c = dc.tensor(rng.standard_normal((1, 8, 6)))
    args = ([2, 2], [1, 1], [1, 0], [2, 1])
    cols = A.im2col.default(x, *args)
    assert cols.shape == (1, 8, 6)
    back = A.col2im.default(c, [4, 3], *args)
    assert np.isclose((cols * c).sum().item(), (x * back).sum().item())


def test_addmm_scales_and_broadcasts_self():
    s, m = _t([1.0, 2.0]), _t([[1.0, 0.0], [0.0, 1.0]])
    assert dc.addmm(s, m, m, beta=2, alpha=3).tolist() == [[5.0, 4.0], [2.0, 7.0]]
    y = _t([[1.0, 1.0], [1.0, 1.0]])
    assert y.addmm_(m, m, beta=0).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_linear_lowers_to_addmm_for_matrices():
    x, w, b = _t([[1.0, 2.0]], requires_grad=True), _t([[1.0, 1.0], [0.0, 1.0]]), _t([0.5, 0.5])
    y = A.linear.default(x, w, b)
    assert y.tolist() == [[3.5, 2.5]]
    assert y.grad_fn.name() == "AddmmBackward0"


def test_meta_kernels_give_shapes_without_data():
    x = dc.empty([2, 3, 7, 6], device="meta")
    y, i = A.max_pool2d_with_indices.default(x, [3, 3], [2, 2], [1, 1], [1, 1], True)
    assert (y.shape, i.dtype, y.device.type) == ((2, 3, 4, 4), dc.int64, "meta")
    y = A.convolution.default(x, dc.empty([4, 3, 3, 3], device="meta"), None, [1], [1], [1], False, [0], 1)
    assert y.shape == (2, 4, 7, 6)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        A.avg_pool2d.default(x[:, :, :1, :1], [2, 2])


@pytest.mark.parametrize("call, error, text", [
    (lambda: A.max_pool2d_with_indices.default(dc.ones([1, 2, 2]), [3, 3]), RuntimeError,
     "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"),
    (lambda: A.max_pool2d_with_indices.default(dc.ones([1, 2, 2], dtype=dc.bool), [1, 1]), NotImplementedError,
     "\"max_pool2d\" not implemented for 'Bool'"),
    (lambda: A.avg_pool2d.default(dc.ones([1, 2, 2]), [1, 1], [], [0], False, True, 0), RuntimeError,
     "divisor must be not zero"),
    (lambda: A._adaptive_avg_pool2d.default(dc.ones([2, 2]), [1, 1]), RuntimeError,
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [2, 2]"),
    (lambda: A.upsample_nearest2d.vec(dc.ones([1, 1, 2, 2]), None, None), RuntimeError,
     "Must specify exactly one of output_size and scale_factors"),
    (lambda: dc.addmm(dc.ones([2]), dc.ones([2, 3]), dc.ones([2, 3])), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    (lambda: dc.conv2d(dc.ones([2, 2]), dc.ones([1, 1, 1, 1])), RuntimeError,
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 2]"),
])
def test_errors_use_torchs_words(call, error, text):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == text
