"""Conformance entries of the activation family: silu, softplus, log_sigmoid, relu6, one_hot, and backward ops."""

from __future__ import annotations

import numpy as np

from tests.conformance.framework import OpInfo, Sample, make

FLOATS = ("float32", "float64")


def _unary_samples(kwargs_list):
    def samples(rng, dtype):
        for i, kwargs in enumerate(kwargs_list):
            yield Sample(make((3, 4), dtype, rng, -4, 4), kwargs=kwargs, name=f"kwargs{i}")
        yield Sample(make((2, 3, 4), dtype, rng, -4, 4, noncontig=True), name="noncontig")
        yield Sample(make((), dtype, rng, -4, 4), name="zero-d")
        yield Sample(make((0, 3), dtype, rng), name="empty")
        yield Sample(np.array([1, 2], dtype=np.int64), name="error-integer")

    return samples


def _backward_samples(extra: tuple):
    def samples(rng, dtype):
        yield Sample(make((3, 4), dtype, rng), args=(make((3, 4), dtype, rng, -4, 4), *extra), name="matrix")
        yield Sample(make((1, 3), dtype, rng), args=(make((2, 3), dtype, rng, -4, 4, noncontig=True), *extra),
                     name="broadcast-noncontig")

    return samples


def _samples_one_hot(rng, dtype):
    yield Sample(np.array([[0, 3], [2, 1]], dtype=np.int64), name="inferred")
    yield Sample(np.array([1, 0, 1], dtype=np.int64), args=(4,), name="given")
    yield Sample(np.zeros((0,), dtype=np.int64), args=(2,), name="empty")
    yield Sample(np.zeros((0,), dtype=np.int64), name="error-empty-inferred")
    yield Sample(np.array([-1, 0], dtype=np.int64), args=(3,), name="error-negative")
    yield Sample(np.array([3, 0], dtype=np.int64), args=(3,), name="error-too-large")
    yield Sample(np.array([1.0, 0.0]), args=(3,), name="error-float")


def _log_sigmoid_forward(lib, x):
    return lib.ops.aten.log_sigmoid_forward.default(x)


def _log_sigmoid_backward(lib, grad_output, x):
    """The buffer made from ``x`` (as the forward makes it), so a perturbed ``x`` moves it too (gradcheck)."""
    return lib.ops.aten.log_sigmoid_backward.default(grad_output, x, lib.exp(-x.detach().abs()))


OPS = [
    OpInfo("silu", call="nn.functional.silu", samples=_unary_samples([{}]), dtypes=FLOATS,
           aten=("silu", "silu_", "silu.out"), grad=True, gradgrad=True, inplace_variant="ops.aten.silu_.default"),
    OpInfo("silu_backward", call="ops.aten.silu_backward.default", samples=_backward_samples(()), dtypes=FLOATS,
           aten=("silu_backward", "silu_backward.grad_input")),
    OpInfo("softplus", call="nn.functional.softplus",
           samples=_unary_samples([{}, {"beta": 2.0, "threshold": 3.0}, {"beta": 0.5, "threshold": 1.0}]),
           dtypes=FLOATS, aten=("softplus", "softplus.out"), grad=True, gradgrad=True),
    OpInfo("softplus_backward", call="ops.aten.softplus_backward.default", samples=_backward_samples((2.0, 3.0)),
           dtypes=FLOATS, aten=("softplus_backward", "softplus_backward.grad_input"), grad=True, gradgrad=True,
           grad_args=(0, 1)),
    OpInfo("logsigmoid", call="nn.functional.logsigmoid", samples=_unary_samples([{}]), dtypes=FLOATS,
           aten=("log_sigmoid", "log_sigmoid.out"), grad=True, gradgrad=True),
    OpInfo("log_sigmoid_forward", call=_log_sigmoid_forward, samples=_unary_samples([{}]), dtypes=FLOATS,
           aten=("log_sigmoid_forward", "log_sigmoid_forward.output"), grad=True, gradgrad=True),
    OpInfo("log_sigmoid_backward", call=_log_sigmoid_backward, samples=_backward_samples(()), dtypes=FLOATS,
           aten=("log_sigmoid_backward", "log_sigmoid_backward.grad_input"), grad=True, gradgrad=True,
           grad_args=(0, 1)),
    OpInfo("relu6", call="nn.functional.relu6", samples=_unary_samples([{}]), dtypes=FLOATS,
           aten=("relu6", "relu6_"), grad=True, gradgrad=True, inplace_variant="ops.aten.relu6_.default"),
    OpInfo("one_hot", call="nn.functional.one_hot", samples=_samples_one_hot, dtypes=("int64",), aten=("one_hot",)),
]
