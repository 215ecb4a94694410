"""Conformance entries of the linalg family (``dispatchcore.native.linalg``): dot, vdot, mv, outer, ger.

Samples cover non-contiguous and empty operands and each of torch's checks (dims, sizes, dtypes,
bool); through the method and ``out=`` too. ``matmul``'s entry (``ops_core.py``) reaches ``dot`` and
``mv`` for 1-D operands.
"""

from __future__ import annotations

from tests.conformance.framework import OpInfo, Sample, make

_DTYPES = ("float32", "float64", "int64", "bool")


def _other(dtype: str) -> str:
    return "float32" if dtype == "float64" else "float64"


def _dot(rng, dtype):
    yield Sample(make((3,), dtype, rng), args=(make((3,), dtype, rng),), name="vectors")
    yield Sample(make((4,), dtype, rng, noncontig=True), args=(make((4,), dtype, rng, noncontig=True),),
                 name="noncontig")
    yield Sample(make((0,), dtype, rng), args=(make((0,), dtype, rng),), name="empty")
    yield Sample(make((3,), dtype, rng), args=(make((2,), dtype, rng),), name="error-sizes")
    yield Sample(make((3, 1), dtype, rng), args=(make((3,), dtype, rng),), name="error-dims")
    yield Sample(make((3,), dtype, rng), args=(make((2,), _other(dtype), rng),), name="error-dtypes")


def _mv(rng, dtype):
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), dtype, rng),), name="matrix-vector")
    yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(make((4,), dtype, rng, noncontig=True),),
                 name="noncontig")
    yield Sample(make((0, 3), dtype, rng), args=(make((3,), dtype, rng),), name="empty-rows")
    yield Sample(make((2, 0), dtype, rng), args=(make((0,), dtype, rng),), name="empty-inner")
    yield Sample(make((2, 3), dtype, rng), args=(make((2,), dtype, rng),), name="error-sizes")
    yield Sample(make((3,), dtype, rng), args=(make((3,), dtype, rng),), name="error-dims")
    yield Sample(make((2, 3), dtype, rng), args=(make((3,), _other(dtype), rng),), name="error-dtypes")


# a float32 operand's finite differences are too coarse: torch.autograd.gradcheck fails on this sample too
_FLOAT32_GRADCHECK = "float32 input: gradcheck needs double precision (torch's gradcheck fails on it as well)"


def _outer(rng, dtype):
    yield Sample(make((3,), dtype, rng), args=(make((2,), dtype, rng),), name="vectors")
    yield Sample(make((4,), dtype, rng, noncontig=True), args=(make((3,), dtype, rng, noncontig=True),),
                 name="noncontig")
    yield Sample(make((0,), dtype, rng), args=(make((2,), dtype, rng),), name="empty")
    yield Sample(make((3,), dtype, rng), args=(make((2,), _other(dtype), rng),), name="mixed-dtypes")
    yield Sample(make((3, 1), dtype, rng), args=(make((3,), dtype, rng),), name="error-self-dims")
    yield Sample(make((3,), dtype, rng), args=(make((), dtype, rng),), name="error-vec2-dims")


OPS = [
    *[OpInfo(name, call=name, samples=_dot, dtypes=_DTYPES, aten=(name, f"{name}.out"), grad=True, gradgrad=True,
             grad_args=(0, 1), method_variant=f"Tensor.{name}", supports_out=True, atol=1e-4)
      for name in ("dot", "vdot")],
    OpInfo("mv", call="mv", samples=_mv, dtypes=_DTYPES, aten=("mv", "mv.out"), grad=True, gradgrad=True,
           grad_args=(0, 1), method_variant="Tensor.mv", supports_out=True, atol=1e-4),
    # ger's out= form warns (deprecated) on every call: the warning is compared in test_vs_torch_ops
    *[OpInfo(name, call=name, samples=_outer, dtypes=_DTYPES, aten=("mul.Tensor",), grad=True, gradgrad=True,
             grad_args=(0, 1), method_variant=f"Tensor.{name}", supports_out=name == "outer",
             skips={f"float64/mixed-dtypes@{check}": _FLOAT32_GRADCHECK for check in ("gradcheck", "gradgradcheck")})
      for name in ("outer", "ger")],
]
