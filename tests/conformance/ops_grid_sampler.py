"""Conformance entries of the grid sampler family: ``grid_sampler_2d``, its backward and ``grid_sampler``."""

from __future__ import annotations

import itertools

import numpy as np

from tests.conformance.framework import OpInfo, Sample, make

_INTERPOLATION = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _grid(shape, dtype, rng, noncontig=False):
    """Locations a little beyond [-1, 1], so that every padding mode is exercised."""
    return make(shape, dtype, rng, low=-1.4, high=1.4, noncontig=noncontig)


def _samples_grid_sampler_2d(rng, dtype):
    for (iname, i), (pname, p), align in itertools.product(_INTERPOLATION.items(), _PADDING.items(), (False, True)):
        # small enough for gradcheck: 12 input and 12 grid elements
        yield Sample(make((1, 2, 2, 3), dtype, rng), args=(_grid((1, 2, 3, 2), dtype, rng), i, p, align),
                     name=f"{iname}-{pname}-{'align' if align else 'edges'}")
    yield Sample(make((2, 3, 5, 4), dtype, rng, noncontig=True), args=(_grid((2, 4, 3, 2), dtype, rng), 0, 2, False),
                 name="noncontig-input")
    yield Sample(make((2, 1, 3, 3), dtype, rng), args=(_grid((2, 3, 2, 2), dtype, rng, noncontig=True), 2, 1, True),
                 name="noncontig-grid")
    far = np.array([[[[-7.3, 5.9], [3.1, -4.4]], [[11.2, 0.3], [-0.8, -9.6]]]], dtype)
    for iname, i in _INTERPOLATION.items():  # several reflections, far outside
        yield Sample(make((1, 2, 3, 4), dtype, rng), args=(far, i, 2, False), name=f"{iname}-reflect-far")
    yield Sample(make((1, 1, 1, 3), dtype, rng), args=(_grid((1, 2, 2, 2), dtype, rng), 0, 2, True),
                 name="height-one-reflect-align")
    yield Sample(make((2, 0, 3, 4), dtype, rng), args=(_grid((2, 2, 2, 2), dtype, rng), 0, 0, False),
                 name="no-channels")
    yield Sample(make((2, 2, 3, 4), dtype, rng), args=(_grid((2, 0, 2, 2), dtype, rng), 2, 1, False),
                 name="empty-grid")
    yield Sample(make((1, 2, 3, 4), dtype, rng), args=(_grid((2, 2, 2, 2), dtype, rng), 0, 0, False),
                 name="error-batch")
    yield Sample(make((1, 2, 3, 4), dtype, rng), args=(_grid((1, 2, 2, 3), dtype, rng), 0, 0, False),
                 name="error-grid-last-size")
    yield Sample(make((1, 2, 0, 4), dtype, rng), args=(_grid((1, 2, 2, 2), dtype, rng), 0, 0, False),
                 name="error-empty-spatial")
    yield Sample(make((2, 3, 4), dtype, rng), args=(_grid((2, 3, 2), dtype, rng), 0, 0, False), name="error-3d")
    yield Sample(make((1, 2, 3, 4), dtype, rng), args=(_grid((1, 2, 2, 2), np.float16, rng), 0, 0, False),
                 name="error-grid-dtype")
    yield Sample(make((1, 2, 3, 4), np.int64, rng), args=(_grid((1, 2, 2, 2), dtype, rng), 0, 0, False),
                 name="error-integer-input")


def _samples_grid_sampler_2d_backward(rng, dtype):
    for (iname, i), (pname, p), align in itertools.product(_INTERPOLATION.items(), _PADDING.items(), (False, True)):
        mask = [True, True] if (i + p) % 2 == 0 else [False, True]
        yield Sample(make((1, 1, 2, 2), dtype, rng),  # 18 elements: small enough for gradcheck
                     args=(make((1, 1, 2, 3), dtype, rng), _grid((1, 2, 2, 2), dtype, rng), i, p, align, mask),
                     name=f"{iname}-{pname}-{'align' if align else 'edges'}")
    yield Sample(make((1, 2, 2, 3), np.float64 if np.dtype(dtype) == np.float32 else np.float32, rng),
                 args=(make((1, 2, 3, 4), dtype, rng), _grid((1, 2, 3, 2), dtype, rng), 0, 0, False, [True, True]),
                 name="error-grad-output-dtype")


def _samples_grid_sampler(rng, dtype):
    yield Sample(make((2, 2, 3, 4), dtype, rng), args=(_grid((2, 3, 2, 2), dtype, rng), 2, 2, False), name="4d")
    yield Sample(make((1, 1, 2, 3), dtype, rng), args=(_grid((1, 2, 2, 2), dtype, rng), 1, 1, True),
                 name="4d-nearest")
    yield Sample(make((1, 1, 2, 3), dtype, rng), args=(_grid((1, 2, 2, 2), dtype, rng), 0, 1, True),
                 name="4d-bilinear-small")
    yield Sample(make((1, 2, 2, 3, 4), dtype, rng), args=(_grid((1, 2, 2, 2, 3), dtype, rng), 0, 0, False),
                 name="5d")
    yield Sample(make((1, 2, 2, 3, 4), dtype, rng), args=(_grid((1, 2, 2, 2, 3), dtype, rng), 2, 0, False),
                 name="error-5d-bicubic")
    yield Sample(make((2, 3, 4), dtype, rng), args=(_grid((2, 3, 1), dtype, rng), 0, 0, False), name="error-3d")
    yield Sample(make((1, 2, 3, 4), dtype, rng), args=(_grid((2, 3, 2, 2), dtype, rng), 0, 0, False),
                 name="error-batch")


OPS = [
    OpInfo("grid_sampler_2d", call="ops.aten.grid_sampler_2d.default", samples=_samples_grid_sampler_2d,
           dtypes=("float32", "float64"), aten=("grid_sampler_2d",), grad=True, gradgrad=True, grad_args=(0, 1),
           atol=1e-4, rtol=1e-4),
    OpInfo("grid_sampler_2d_backward", call="ops.aten.grid_sampler_2d_backward.default",
           samples=_samples_grid_sampler_2d_backward, dtypes=("float32", "float64"), grad=True, grad_args=(0, 1, 2),
           atol=1e-4, rtol=1e-4),
    OpInfo("grid_sampler", call="grid_sampler", samples=_samples_grid_sampler, dtypes=("float32", "float64"),
           grad=True, grad_args=(0, 1), atol=1e-4, rtol=1e-4,
           xfails={pattern: "dispatchcore builds grid_sampler_2d only: a 5-D input (grid_sampler_3d) raises "
                            "NotImplementedError" for pattern in ("5d", "5d@grad")}),
]
