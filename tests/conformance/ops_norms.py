"""Conformance entries of the norms family: normalisations, embedding, padding, distances, einsum, losses."""

from __future__ import annotations

import numpy as np

from tests.conformance.framework import OpInfo, Sample, make


def _samples_layer_norm(rng, dtype):
    yield Sample(make((2, 3, 4), dtype, rng), args=([4],), name="last")
    yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=([3, 4], make((3, 4), dtype, rng),
                                                                     make((3, 4), dtype, rng)), name="affine-noncontig")
    yield Sample(make((0, 4), dtype, rng), args=([4],), kwargs={"eps": 1e-3}, name="empty")


def _samples_group_norm(rng, dtype):
    yield Sample(make((2, 4, 3), dtype, rng), args=(2,), name="two-groups")
    yield Sample(make((2, 6, 2, 2), dtype, rng), args=(3, make((6,), dtype, rng), make((6,), dtype, rng)),
                 name="affine-4d")


def _samples_batch_norm(rng, dtype):
    c = 3
    yield Sample(make((4, c, 2), dtype, rng), args=(make((c,), dtype, rng), make((c,), dtype, rng), None, None, True,
                                                    0.1, 1e-5, False), name="train-no-stats")
    yield Sample(make((4, c), dtype, rng), args=(None, None, np.zeros(c, dtype), np.ones(c, dtype), False, 0.1, 1e-5,
                                                 False), name="eval")


def _samples_embedding(rng, dtype):
    yield Sample(make((6, 3), dtype, rng), args=(np.array([[0, 2], [5, 0]], dtype=np.int64),), name="2d-indices")
    yield Sample(make((6, 3), dtype, rng), args=(np.array([1, 1, 4], dtype=np.int64),), name="1d-indices")


def _pad_samples(k):
    def samples(rng, dtype):
        yield Sample(make((2, 3) + (4,) * k, dtype, rng), args=([1, 2] * k,), name="batched")
        yield Sample(make((3,) + (4,) * k, dtype, rng, noncontig=True), args=([2, 0] * k,), name="unbatched-noncontig")
        yield Sample(make((1,) + (2,) * k, dtype, rng), args=([1, 1] * k,), name="small")
    return samples


def _samples_cdist(rng, dtype):
    yield Sample(make((3, 4), dtype, rng), args=(make((2, 4), dtype, rng),), name="p2")
    yield Sample(make((2, 3, 4), dtype, rng), args=(make((5, 4), dtype, rng), 1.5), name="broadcast-p1.5")


def _samples_pdist(rng, dtype):
    yield Sample(make((4, 3), dtype, rng), name="p2")
    yield Sample(make((4, 3), dtype, rng), args=(3.0,), name="p3")


def _samples_einsum(rng, dtype):
    yield Sample("ij,jk->ik", args=(make((3, 4), dtype, rng), make((4, 2), dtype, rng)), name="matmul")
    yield Sample("bij,bkj", args=(make((2, 3, 4), dtype, rng), make((2, 5, 4), dtype, rng)), name="implicit")


def _samples_cross_entropy(rng, dtype):
    yield Sample(make((4, 5), dtype, rng), args=(np.array([0, 1, 4, 2], dtype=np.int64),), name="classes")
    yield Sample(make((4, 5), dtype, rng), args=(np.array([0, 1, 4, 2], dtype=np.int64), None, 1, -100, 0.1),
                 name="label-smoothing")
    yield Sample(make((4, 5), dtype, rng), args=(make((4, 5), dtype, rng, low=0.0, high=1.0),), name="probabilities")


def _samples_bce(rng, dtype):
    yield Sample(make((5,), dtype, rng, low=0.1, high=0.9), args=(make((5,), dtype, rng, low=0.1, high=0.9),),
                 name="mean")


def _samples_dropout(rng, dtype):
    """Deterministic draws only: p=0 keeps everything, p=1 drops everything, train=False is the identity."""
    yield Sample(make((3, 4), dtype, rng), args=(0.0, True), name="p0-train")
    yield Sample(make((2, 3), dtype, rng, noncontig=True), args=(1.0, True), name="p1-noncontig")
    yield Sample(make((3, 4), dtype, rng), args=(0.5, False), name="eval")
    yield Sample(make((), dtype, rng), args=(0.0, True), name="zero-d")
    yield Sample(make((0, 3), dtype, rng), args=(0.5, True), name="empty")
    yield Sample(make((3,), dtype, rng), args=(1.5, True), name="error-p")


def _samples_dropout_random(rng, dtype):
    yield Sample(make((4, 5), dtype, rng), args=(0.5, True), name="half")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(0.2, None), name="train-none-noncontig")


def _layer_norm_backward(lib, grad_out, input, normalized_shape, weight, bias, output_mask):
    """``native_layer_norm_backward`` with the mean and rstd ``native_layer_norm`` saves for ``input``.

    The statistics are recomputed from ``input`` (they are not differentiable outputs), so that
    gradcheck's perturbations of ``input`` keep them consistent, as the double-backward formula assumes.
    """
    aten = lib.ops.aten
    _, mean, rstd = aten.native_layer_norm.default(input, normalized_shape, weight, bias, 1e-5)
    return aten.native_layer_norm_backward.default(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                                                   output_mask)


def _samples_layer_norm_backward(rng, dtype):
    yield Sample(make((2, 3, 4), dtype, rng), args=(make((2, 3, 4), dtype, rng), [4], make((4,), dtype, rng),
                                                    make((4,), dtype, rng), [True, True, True]), name="affine")
    yield Sample(make((2, 3, 4), dtype, rng), args=(make((2, 3, 4), dtype, rng, noncontig=True), [3, 4], None, None,
                                                    [True, False, False]), name="no-affine-noncontig")
    yield Sample(make((2, 3), dtype, rng), args=(make((2, 3), dtype, rng), [3], make((3,), dtype, rng),
                                                 make((3,), dtype, rng), [True, True, False]), name="small")
    yield Sample(make((0, 3), dtype, rng), args=(make((0, 3), dtype, rng), [3], make((3,), dtype, rng),
                                                 make((3,), dtype, rng), [True, True, True]), name="empty")


def _group_norm_stats(x, groups):
    n = x.shape[0]
    x64 = x.astype(np.float64).reshape(n, groups, -1)
    mean, var = x64.mean(axis=-1), x64.var(axis=-1)
    return mean.astype(x.dtype), (1 / np.sqrt(var + 1e-5)).astype(x.dtype)


def _samples_group_norm_backward(rng, dtype):
    x = make((2, 4, 3), dtype, rng)
    mean, rstd = _group_norm_stats(x, 2)
    yield Sample(make((2, 4, 3), dtype, rng), args=(x, mean, rstd, make((4,), dtype, rng), 2, 4, 3, 2,
                                                    [True, True, True]), name="affine")
    x2 = make((2, 6, 2, 2), dtype, rng)
    mean2, rstd2 = _group_norm_stats(x2, 3)
    yield Sample(make((2, 6, 2, 2), dtype, rng), args=(x2, mean2, rstd2, None, 2, 6, 4, 3, [True, False, False]),
                 name="no-weight-4d")
    x3 = make((1, 4, 2), dtype, rng)
    mean3, rstd3 = _group_norm_stats(x3, 2)
    yield Sample(make((1, 4, 2), dtype, rng), args=(x3, mean3, rstd3, make((4,), dtype, rng), 1, 4, 2, 2,
                                                    [True, True, False]), name="small")


OPS = [
    OpInfo("layer_norm", call="layer_norm", samples=_samples_layer_norm, dtypes=("float32", "float64"),
           aten=("native_layer_norm",), grad=True, gradgrad=True, grad_args=(0,), atol=1e-4, rtol=1e-4),
    OpInfo("group_norm", call="group_norm", samples=_samples_group_norm, dtypes=("float32", "float64"),
           aten=("native_group_norm",), grad=True, gradgrad=True, grad_args=(0,), atol=1e-4, rtol=1e-4),
    OpInfo("batch_norm", call="batch_norm", samples=_samples_batch_norm, dtypes=("float32", "float64"),
           aten=("_native_batch_norm_legit", "_native_batch_norm_legit.no_stats",
                 "_native_batch_norm_legit_no_training"), grad=True, gradgrad=True, grad_args=(0,), atol=1e-4,
           rtol=1e-4),
    OpInfo("native_layer_norm_backward", call=_layer_norm_backward, samples=_samples_layer_norm_backward,
           dtypes=("float32", "float64"), aten=("native_layer_norm_backward",), grad=True, grad_args=(0, 1, 3),
           atol=1e-4, rtol=1e-4),
    # torch has no derivative for native_group_norm_backward (a NotImplemented node): no grad checks
    OpInfo("native_group_norm_backward", call="ops.aten.native_group_norm_backward.default",
           samples=_samples_group_norm_backward, dtypes=("float32", "float64"), aten=("native_group_norm_backward",),
           atol=1e-4, rtol=1e-4),
    OpInfo("native_dropout", call="native_dropout", samples=_samples_dropout, dtypes=("float32", "float64"),
           aten=("native_dropout",), grad=True, gradgrad=True),
    # random masks: dtypes, shapes and strides compare, values cannot
    OpInfo("native_dropout.random", call="native_dropout", samples=_samples_dropout_random,
           dtypes=("float32", "float64"), aten=("native_dropout",), compare_values=False),
    OpInfo("embedding", call="embedding", samples=_samples_embedding, dtypes=("float32", "float64"),
           aten=("embedding", "embedding_dense_backward"), grad=True, gradgrad=True, grad_args=(0,)),
    *(OpInfo(f"{kind}_pad{k}d", call=f"ops.aten.{kind}_pad{k}d.default", samples=_pad_samples(k),
             dtypes=("float32", "float64", "int64"), aten=(f"{kind}_pad{k}d",), grad=True, gradgrad=True,
             grad_args=(0,))
      for kind in ("reflection", "replication") for k in (1, 2, 3)),
    OpInfo("cdist", call="cdist", samples=_samples_cdist, dtypes=("float32", "float64"), aten=("_cdist_forward",),
           grad=True, gradgrad=False, grad_args=(0, 1), atol=1e-4, rtol=1e-4),
    OpInfo("pdist", call="pdist", samples=_samples_pdist, dtypes=("float32", "float64"), aten=("_pdist_forward",),
           grad=True, gradgrad=False, grad_args=(0,), atol=1e-4, rtol=1e-4),
    OpInfo("einsum", call="einsum", samples=_samples_einsum, dtypes=("float32", "float64"), aten=(),
           grad=False, gradgrad=False, atol=1e-4, rtol=1e-4),
    OpInfo("cross_entropy_loss", call="ops.aten.cross_entropy_loss.default", samples=_samples_cross_entropy,
           dtypes=("float32", "float64"), aten=(), grad=True, gradgrad=True, grad_args=(0,), atol=1e-4, rtol=1e-4),
    OpInfo("binary_cross_entropy", call="ops.aten.binary_cross_entropy.default", samples=_samples_bce,
           dtypes=("float32", "float64"), aten=(), grad=True, gradgrad=True, grad_args=(0,), atol=1e-4, rtol=1e-4),
]
