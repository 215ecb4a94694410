"""The norms family without torch: values on small cases, running statistics, errors, dtypes, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import gradcheck, gradgradcheck

A = dc.ops.aten


def _t(a, requires_grad=False):
    return dc.tensor(np.asarray(a, dtype=np.float64), dtype=dc.float64, requires_grad=requires_grad)


def test_layer_norm_normalises_the_trailing_dims():
    x = np.arange(8.0).reshape(2, 4)
    out, mean, rstd = A.native_layer_norm(_t(x), [4], None, None, 1e-5)
    expected = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.numpy(), expected)
    assert tuple(mean.shape) == (2, 1) and tuple(rstd.shape) == (2, 1)


def test_layer_norm_refuses_a_mismatched_normalized_shape():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[3\], expected input with shape \[\*, 3\], "
                                           r"but got input of size\[2, 4\]"):
        dc.layer_norm(dc.ones(2, 4), [3])


def test_group_norm_checks_the_group_count():
    with pytest.raises(RuntimeError, match="divisible by num_groups, but got input of shape \\[2, 6, 3\\] and "
                                           "num_groups=4"):
        dc.group_norm(dc.ones(2, 6, 3), 4)


def test_batch_norm_updates_running_statistics_in_place():
    x = np.array([[1.0, 2.0], [3.0, 6.0]])
    rm, rv = _t([0.0, 0.0]), _t([1.0, 1.0])
    dc.batch_norm(_t(x), None, None, rm, rv, True, 0.1, 1e-5, False)
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.mean(0))
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * x.var(0, ddof=1))


def test_batch_norm_in_eval_mode_needs_running_statistics():
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        dc.batch_norm(dc.ones(2, 3), None, None, None, None, False, 0.1, 1e-5, False)


def test_embedding_picks_rows_and_checks_index_dtype():
    w = _t(np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(dc.embedding(w, dc.tensor([[2, 0]])).numpy(), [[[4.0, 5.0], [0.0, 1.0]]])
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        dc.embedding(w, dc.tensor([1.0]))


def test_embedding_backward_skips_padding_and_scales_by_frequency():
    g = _t(np.ones((3, 2)))
    out = A.embedding_dense_backward(g, dc.tensor([1, 1, 2]), 4, 2, True)
    np.testing.assert_array_equal(out.numpy(), [[0, 0], [1, 1], [0, 0], [0, 0]])


def test_dropout_keeps_input_out_of_training_and_zeroes_with_p_one():
    x = _t(np.ones(4))
    assert dc.dropout(x, 0.5, False) is x
    np.testing.assert_array_equal(dc.dropout(x, 1.0, True).numpy(), np.zeros(4))
    out, mask = dc.native_dropout(x, 0.5, True)
    assert mask.dtype is dc.bool
    np.testing.assert_array_equal(out.numpy(), np.where(mask.numpy(), 2.0, 0.0))


def test_dropout_probability_is_checked():
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        dc.dropout(dc.ones(3), 1.5, True)


def test_reflection_and_replication_pads():
    x = _t([[[1.0, 2.0, 3.0]]])
    np.testing.assert_array_equal(A.reflection_pad1d(x, [2, 1]).numpy(), [[[3, 2, 1, 2, 3, 2]]])
    np.testing.assert_array_equal(A.replication_pad1d(x, [2, 1]).numpy(), [[[1, 1, 1, 2, 3, 3]]])
    np.testing.assert_array_equal(A.pad(x, [1, 1], "circular").numpy(), [[[3, 1, 2, 3, 1]]])
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        A.reflection_pad1d(x, [3, 0])
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        A.pad(x, [1, 1], "foo")


def test_cdist_and_pdist_distances():
    a, b = _t([[0.0, 0.0], [3.0, 4.0]]), _t([[0.0, 0.0]])
    np.testing.assert_allclose(dc.cdist(a, b).numpy(), [[0.0], [5.0]])
    np.testing.assert_allclose(dc.cdist(a, b, 1.0).numpy(), [[0.0], [7.0]])
    np.testing.assert_allclose(dc.pdist(a).numpy(), [5.0])


def test_einsum_contracts_and_checks_operands():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(dc.einsum("ij,jk->ik", _t(a), _t(b)).numpy(), a @ b)
    np.testing.assert_allclose(dc.einsum("ij,jk", _t(a), _t(b)).numpy(), a @ b)
    np.testing.assert_allclose(dc.einsum("ii->i", _t(np.eye(3) * 2)).numpy(), [2, 2, 2])
    with pytest.raises(RuntimeError, match="fewer operands were provided than specified in the equation"):
        dc.einsum("ij,jk->ik", _t(a))


def test_cross_entropy_is_log_softmax_then_nll():
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    target = np.array([2, 0])
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    loss = A.cross_entropy_loss(_t(logits), dc.tensor(target))
    np.testing.assert_allclose(loss.numpy(), -logp[[0, 1], target].mean())


@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm", "reflection_pad2d", "einsum"])
def test_gradients_and_second_derivatives(name):
    rng = np.random.default_rng(0)
    x = _t(rng.standard_normal((2, 4, 3)), True)
    fns = {
        "layer_norm": lambda x: dc.layer_norm(x, [3]),
        "group_norm": lambda x: dc.group_norm(x, 2),
        "batch_norm": lambda x: dc.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
        "reflection_pad2d": lambda x: A.reflection_pad2d(x, [1, 1, 2, 0]),
        "einsum": lambda x: dc.einsum("bij,bkj->bik", x, x),
    }
    assert gradcheck(fns[name], (x,))
    assert gradgradcheck(fns[name], (x,))


def test_node_names():
    x = _t(np.ones((2, 3, 4)), True)
    assert dc.layer_norm(x, [4]).grad_fn.name() == "NativeLayerNormBackward0"
    assert dc.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False).grad_fn.name() == \
        "NativeBatchNormBackward0"
    assert A.reflection_pad1d(x, [1, 1]).grad_fn.name() == "ReflectionPad1DBackward0"
