"""Bucketization: ``searchsorted`` and ``bucketize``, the positions of values among sorted boundaries.

Mirrors ``aten/src/ATen/native/Bucketization.cpp`` and ``BucketizationUtils.h``, registered at the
keys torch 2.13 registers them: CPU and Meta kernels for every overload (the backends'
``bucketization`` modules), but ``bucketize.Scalar_out``, which is the ``out=`` kernel torch
generates at CompositeExplicitAutograd; an Autograd kernel that only redispatches (the results
are integer indices, never differentiable).

The checks of ``searchsorted_pre_check`` live here, in torch's order and words, for the CPU kernels.
Invariant: the CPU kernels find each position with torch's own binary search (``cus_lower_bound``,
``cus_upper_bound``) in the dtype torch compares in, so NaN boundaries and mixed dtypes give
torch's answers, not numpy's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from .._library import Library
from ..ops import aten as A
from ..tensor import Tensor
from . import Bindings
from .shape import generated_out

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "register", "register_autograd", "searchsorted_pre_check"]

_OPTIONS = "bool out_int32=False, bool right=False"
_SEARCH_OPTIONS = f"{_OPTIONS}, str? side=None, Tensor? sorter=None"
SCHEMAS: tuple[str, ...] = (
    f"searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, {_SEARCH_OPTIONS}) -> Tensor",
    f"searchsorted.Tensor_out(Tensor sorted_sequence, Tensor self, *, {_SEARCH_OPTIONS}, Tensor(a!) out) "
    "-> Tensor(a!)",
    f"searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, {_SEARCH_OPTIONS}) -> Tensor",
    f"searchsorted.Scalar_out(Tensor sorted_sequence, Scalar self, *, {_SEARCH_OPTIONS}, Tensor(a!) out) "
    "-> Tensor(a!)",
    f"bucketize.Tensor(Tensor self, Tensor boundaries, *, {_OPTIONS}) -> Tensor",
    f"bucketize.Tensor_out(Tensor self, Tensor boundaries, *, {_OPTIONS}, Tensor(a!) out) -> Tensor(a!)",
    f"bucketize.Scalar(Scalar self, Tensor boundaries, *, {_OPTIONS}) -> Tensor",
    f"bucketize.Scalar_out(Scalar self, Tensor boundaries, *, {_OPTIONS}, Tensor(a!) out) -> Tensor(a!)",
)
NONDIFFERENTIABLE = ("searchsorted.Tensor", "searchsorted.Scalar", "bucketize.Tensor", "bucketize.Scalar")


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def searchsorted_pre_check(boundaries: Tensor, values: Tensor, out_dtype: _dt.dtype, out_int32: bool, right: bool,
                           side: str | None, sorter: Tensor | None) -> None:
    """``searchsorted_pre_check``: the arguments' checks, in torch's order and words.

    ``values`` is the 0-d tensor of a number for the ``Scalar`` overloads; ``out_dtype`` the
    dtype of the tensor the indices go to.
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                               "while right was True")
    if boundaries.device != values.device:
        raise RuntimeError("torch.searchsorted(): boundaries and input value tensors should have same device type, "
                           f"but got boundaries tensor device type {boundaries.device} and input value tensor "
                           f"device type {values.device}")
    if sorter is not None:
        if sorter.device != boundaries.device:
            raise RuntimeError("torch.searchsorted(): sorter and boundary tensors should have same device type, but "
                               f"got sorter tensor device type {sorter.device} and input value tensor device "
                               f"type {boundaries.device}")
        if tuple(sorter.shape) != tuple(boundaries.shape):
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {_sizes(boundaries)}and got sorter tensor {_sizes(sorter)}")
        if sorter.dtype is not _dt.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{_dt.SCALAR_TYPE_NAMES[sorter.dtype.name]}")
        if sorter.numel():
            data = sorter._cpu_data()
            if data.min() < 0 or data.max() >= sorter.shape[-1]:
                raise RuntimeError("torch.searchsorted(): sorter index out of range")
    if not (values.dim() > 0 or (values.numel() == 1 and boundaries.dim() == 1)):
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({boundaries.dim()}) and input value's "
                           f"dim({values.dim()}) numel({values.numel()})")
    if boundaries.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if boundaries.dim() != 1 and (boundaries.dim() != values.dim() or boundaries.shape[:-1] != values.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           f"tensor {_sizes(boundaries)} and input value tensor {_sizes(values)}")
    if out_dtype is not (_dt.int32 if out_int32 else _dt.int64):
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                           f"{_dt.SCALAR_TYPE_NAMES[out_dtype.name]} and out_int32 flag is {out_int32}")
    if out_int32 and boundaries.shape[-1] >= 2**31 - 1:
        raise RuntimeError("torch.searchsorted(): the size of boundaries' last dimension should be less than "
                           f"{2**31 - 1}, but we got {boundaries.shape[-1]}")


def bucketize_check(boundaries: Tensor) -> None:
    """``bucketize``'s own check, before searchsorted's."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")


# --- CompositeExplicitAutograd ---------------------------------------------------------------------------
def register(lib: Library) -> None:
    """``bucketize.Scalar_out``: torch's generated out= kernel over ``bucketize.Scalar``."""
    lib.impl("bucketize.Scalar_out", generated_out(lambda self, boundaries, **kw: A.bucketize.Scalar(
        self, boundaries, **kw)), "CompositeExplicitAutograd")


def register_autograd(lib: Library) -> None:
    """No derivatives: the results are indices (their out= overloads are refused as every out=)."""
    from ..autograd.kernels import register_nondifferentiable

    for name in NONDIFFERENTIABLE:
        register_nondifferentiable(lib, f"aten::{name}")


# --- torch.* functions (torch has no Tensor methods for these) -----------------------------------------------
_BINDINGS = Bindings({
    "searchsorted": tuple(f"searchsorted(Tensor sorted_sequence, {value}, *, bool out_int32=False, bool right=False, "
                          "c10::string_view? side=None, Tensor? sorter=None, Tensor out=None)"
                          for value in ("Tensor input", "Scalar self")),
    "bucketize": ("bucketize(Tensor input, Tensor boundaries, *, bool out_int32=False, bool right=False, "
                  "Tensor out=None)",
                  "bucketize(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False)"),
})


def _options(b: dict[str, Any], *names: str) -> dict[str, Any]:
    """The keywords that differ from the schema's defaults (what torch's binding passes a mode)."""
    return {n: b[n] for n in names if b.get(n) is not None and b.get(n) is not False}


def _searchsorted(index: int, b: dict[str, Any]) -> Tensor:
    """``torch.searchsorted(sorted_sequence, input, *, out_int32, right, side, sorter, out)``: positions to insert at.

    Example:
        >>> import dispatchcore as dc
        >>> dc.searchsorted(dc.tensor([1.0, 3.0, 5.0]), dc.tensor([0.0, 3.0, 4.0]))
        tensor([0, 1, 2])
    """
    values = b["input"] if index == 0 else b["self"]
    kwargs = _options(b, "out_int32", "right", "side", "sorter")
    packet = A.searchsorted
    if b.get("out") is not None:
        overload = packet.Tensor_out if index == 0 else packet.Scalar_out
        return overload(b["sorted_sequence"], values, **kwargs, out=b["out"])
    return (packet.Tensor if index == 0 else packet.Scalar)(b["sorted_sequence"], values, **kwargs)


def _bucketize(index: int, b: dict[str, Any]) -> Tensor:
    """``torch.bucketize(input, boundaries, *, out_int32=False, right=False, out=None)``: the bucket of each value.

    Example:
        >>> import dispatchcore as dc
        >>> dc.bucketize(dc.tensor([0.5, 2.0, 9.0]), dc.tensor([1.0, 2.0, 3.0]), right=True)
        tensor([0, 2, 3])
    """
    kwargs = _options(b, "out_int32", "right")
    if index == 1:
        return A.bucketize.Scalar(b["self"], b["boundaries"], **kwargs)
    if b.get("out") is not None:
        return A.bucketize.Tensor_out(b["input"], b["boundaries"], **kwargs, out=b["out"])
    return A.bucketize.Tensor(b["input"], b["boundaries"], **kwargs)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "searchsorted": _BINDINGS.function("searchsorted", _searchsorted),
    "bucketize": _BINDINGS.function("bucketize", _bucketize),
}
FUNCTIONS["searchsorted"].__doc__ = _searchsorted.__doc__
FUNCTIONS["bucketize"].__doc__ = _bucketize.__doc__
METHODS: dict[str, Any] = {}
