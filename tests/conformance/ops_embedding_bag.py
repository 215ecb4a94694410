"""Conformance entries of the embedding_bag family: ``torch.embedding_bag``, ``_embedding_bag`` and 2-D bags."""

from __future__ import annotations

import numpy as np

from tests.conformance.framework import OpInfo, Sample, make


def _i(values):
    return np.array(values, dtype=np.int64)


def _samples_embedding_bag(rng, dtype):
    """``(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset[,
    padding_idx])``: each mode, empty bags, the last offset included, per-sample weights, padding."""
    indices, offsets = _i([0, 2, 4, 4, 1]), _i([0, 2, 2])
    for mode, name in ((0, "sum"), (1, "mean"), (2, "max")):
        yield Sample(make((5, 3), dtype, rng), args=(indices, offsets, False, mode), name=name)
        yield Sample(make((5, 3), dtype, rng), args=(indices, _i([0, 2, 2, 5]), False, mode, False, None, True),
                     name=f"{name}-include-last-offset")
        yield Sample(make((5, 3), dtype, rng), args=(indices, offsets, False, mode, False, None, False, 4),
                     name=f"{name}-padding")
    yield Sample(make((5, 3), dtype, rng), args=(indices, offsets, False, 0, False, make((5,), dtype, rng)),
                 name="sum-per-sample-weights")
    yield Sample(make((5, 3), dtype, rng), args=(indices, offsets, True, 1), name="mean-scale-grad-by-freq")
    yield Sample(make((4, 2), dtype, rng), args=(_i([]), _i([0, 0]), False, 1), name="empty-indices")
    yield Sample(make((5, 3), dtype, rng), args=(indices, offsets, False, 1, False, make((5,), dtype, rng)),
                 name="error-per-sample-weights-mean")
    yield Sample(make((5, 3), dtype, rng), args=(indices, _i([1, 2])), name="error-first-offset")
    yield Sample(make((5, 3), dtype, rng), args=(_i([0, 7]), _i([0])), name="error-index-range")
    yield Sample(make((5, 3), dtype, rng), args=(indices, offsets, False, 0, False, None, False, 5),
                 name="error-padding-idx")


def _samples_embedding_bag_op(rng, dtype):
    """The Core ATen overload, called directly (the index outputs of torch's CPU kernel included)."""
    indices = _i([3, 0, 0, 2, 1, 3])
    for mode in (0, 1, 2):
        yield Sample(make((4, 3), dtype, rng), args=(indices, _i([0, 1, 1, 4]), False, mode), name=f"mode{mode}")
        yield Sample(make((4, 3), dtype, rng), args=(indices, _i([0, 3, 6]), False, mode, False, None, True, 0),
                     name=f"mode{mode}-last-offset-padding")
    yield Sample(make((4, 3), dtype, rng), args=(indices, _i([0, 2]), False, 0, False, make((6,), dtype, rng)),
                 name="per-sample-weights")


def _embedding_bag_2d(lib, weight, indices, mode):
    """A 2-D input: one bag per row, as ``nn.functional.embedding_bag`` lays it out (flat indices, row offsets)."""
    rows, cols = indices.shape
    offsets = lib.arange(0, rows * cols, cols)
    return lib.embedding_bag(weight, indices.reshape(-1), offsets, False, mode)


def _samples_embedding_bag_2d(rng, dtype):
    for mode, name in ((0, "sum"), (1, "mean"), (2, "max")):
        yield Sample(make((5, 2), dtype, rng), args=(_i([[0, 4, 1], [2, 2, 3]]), mode), name=name)


OPS = [
    OpInfo("embedding_bag", call="embedding_bag", samples=_samples_embedding_bag, dtypes=("float32", "float64"),
           aten=(), grad=True, gradgrad=False, grad_args=(0, 6),
           xfails={"float64/mean-scale-grad-by-freq@gradcheck": "scale_grad_by_freq scales the gradient on purpose; "
                   "it is not the derivative finite differences measure (torch's gradcheck fails alike)"}),
    OpInfo("_embedding_bag", call="ops.aten._embedding_bag.default", samples=_samples_embedding_bag_op,
           dtypes=("float32", "float64"), aten=("_embedding_bag",), grad=True, gradgrad=False, grad_args=(0, 6)),
    OpInfo("embedding_bag.2d", call=_embedding_bag_2d, samples=_samples_embedding_bag_2d,
           dtypes=("float32", "float64"), aten=(), grad=True, gradgrad=False, grad_args=(0,)),
]
