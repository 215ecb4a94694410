"""Conformance entries of the loss family: l1_loss, smooth_l1_loss, huber_loss, kl_div, and backward ops."""

from __future__ import annotations

from tests.conformance.framework import OpInfo, Sample, make

FLOATS = ("float32", "float64")


def _loss_samples(extra: tuple, *, positive_target: bool = False, log_target: bool = False):
    """Every reduction, a broadcast target, a non-contiguous input; ``extra``: beta/delta."""
    def target(shape, dtype, rng, **kw):
        return make(shape, dtype, rng, 0.1, 1.0, **kw) if positive_target else make(shape, dtype, rng, **kw)

    def samples(rng, dtype):
        kwargs = {"log_target": True} if log_target else {}
        for reduction in (0, 1, 2):
            yield Sample(make((3, 4), dtype, rng), args=(target((3, 4), dtype, rng), reduction, *extra),
                         kwargs=kwargs, name=f"reduction{reduction}")
        yield Sample(make((2, 3, 4), dtype, rng, noncontig=True), args=(target((2, 3, 4), dtype, rng), 1, *extra),
                     kwargs=kwargs, name="noncontig")
        yield Sample(make((), dtype, rng), args=(target((), dtype, rng), 2, *extra), kwargs=kwargs, name="zero-d")

    return samples


def _bad_parameter(name: str):
    def samples(rng, dtype):
        yield from _loss_samples((0.5,))(rng, dtype)
        value = -1.0 if name == "smooth_l1_loss" else 0.0
        yield Sample(make((3,), dtype, rng), args=(make((3,), dtype, rng), 1, value), name="error-parameter")
    return samples


def _backward_samples(param: float):
    def samples(rng, dtype):
        for reduction in (0, 1, 2):
            grad = make((2, 3) if reduction == 0 else (), dtype, rng)  # small enough for gradcheck
            yield Sample(grad, args=(make((2, 3), dtype, rng), make((2, 3), dtype, rng), reduction, param),
                         name=f"reduction{reduction}")

    return samples


OPS = [
    OpInfo("l1_loss", call="ops.aten.l1_loss.default", samples=_loss_samples(()), dtypes=FLOATS, aten=("l1_loss",),
           grad=True, grad_args=(0, 1)),
    OpInfo("smooth_l1_loss", call="ops.aten.smooth_l1_loss.default", samples=_bad_parameter("smooth_l1_loss"),
           dtypes=FLOATS, aten=("smooth_l1_loss", "smooth_l1_loss.out"), grad=True, gradgrad=True, grad_args=(0, 1)),
    OpInfo("smooth_l1_loss_backward", call="ops.aten.smooth_l1_loss_backward.default", samples=_backward_samples(0.7),
           dtypes=FLOATS, aten=("smooth_l1_loss_backward", "smooth_l1_loss_backward.grad_input"), grad=True,
           gradgrad=True, grad_args=(0, 1, 2)),
    OpInfo("huber_loss", call="ops.aten.huber_loss.default", samples=_bad_parameter("huber_loss"), dtypes=FLOATS,
           aten=("huber_loss", "huber_loss.out"), grad=True, gradgrad=True, grad_args=(0, 1)),
    OpInfo("huber_loss_backward", call="ops.aten.huber_loss_backward.default", samples=_backward_samples(0.7),
           dtypes=FLOATS, aten=("huber_loss_backward", "huber_loss_backward.out"), grad=True, gradgrad=True,
           grad_args=(0, 1, 2)),
    OpInfo("kl_div", call="ops.aten.kl_div.default", samples=_loss_samples((), positive_target=True), dtypes=FLOATS,
           aten=("kl_div",), grad=True, gradgrad=True, grad_args=(0, 1)),
    OpInfo("kl_div-log_target", call="ops.aten.kl_div.default", samples=_loss_samples((), log_target=True),
           dtypes=FLOATS, aten=(), grad=True, gradgrad=True, grad_args=(0, 1)),
]
