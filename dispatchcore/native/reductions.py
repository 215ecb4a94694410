"""Reductions, scans, sorting and norms: the operators, their composites, derivatives and bindings.

The family: ``amin``/``min``/``argmin``, ``aminmax``, ``median``/``nanmedian``, ``kthvalue``, ``nansum``/``nanmean``,
``any``/``all``, ``prod``,
``var``/``std`` (and ``var_mean``/``std_mean``), ``cumsum``/``cumprod``, ``diff``, ``sort``/``topk``
(and ``argsort``/``msort`` over ``sort``), ``logsumexp``, ``linalg_vector_norm``/``norm``,
``count_nonzero``, and the ``max``/``min`` Python API.

Mirrors ``aten/src/ATen/native/ReduceOps.cpp``, ``Sorting.cpp``, ``TensorCompare.cpp`` and
``LinearAlgebra.cpp`` as the dispatcher sees them, the formulas of ``derivatives.yaml``
(``FunctionsManual.cpp``: ``prod_backward``, ``var_backward``, ``norm_backward``, ...) and the
``torch.*`` bindings (``python_torch_functions``), which pick the overload and return
``return_types`` named tuples. The rules the CPU and Meta backends share (result dtypes, torch's
checks and warnings, the dtype rule of each ``out=`` overload) are the plain functions of the
first section, so both backends fail and promote alike.

Invariant: each operator is registered at exactly the keys torch 2.13 registers it; composite
kernels and derivative formulas call dispatched operators only (so double backward works).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import layouts as _layouts
from .. import return_types
from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES, complex128, float32, float64, get_default_dtype, int64
from ..dtypes import bool_ as _bool
from ..ops import aten as A
from ..shapes import wrap_dim
from ..tensor import Tensor
from . import Bindings
from .shape import _trailing
from .structured import check_out_dtype
from .structured import out_call as _structured_out_call

__all__ = ["FUNCTIONS", "METHODS", "OUTS", "SCHEMAS", "cum_dtype", "dof_warning", "norm_dtype", "out_call",
           "reduction_dims", "register", "register_autograd", "topk_check", "var_dtype", "vector_norm_check"]

SCHEMAS: tuple[str, ...] = (
    *(schema for name in ("cummax", "cummin") for schema in (
        f"{name}(Tensor self, int dim) -> (Tensor values, Tensor indices)",
        f"{name}.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) "
        "-> (Tensor(a!) values, Tensor(b!) indices)",
        f"_{name}_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()")),
    "logcumsumexp(Tensor self, int dim) -> Tensor",
    "logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
    "_logcumsumexp(Tensor self, int dim) -> Tensor",
    "_logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
    "trace(Tensor self) -> Tensor",
    "trace.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "trace_backward(Tensor grad, SymInt[] sizes) -> Tensor",
    "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
    *(schema for name in ("median", "nanmedian") for schema in (
        f"{name}(Tensor self) -> Tensor",
        f"{name}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
        f"{name}.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        f"{name}.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) "
        "-> (Tensor(a!) values, Tensor(b!) indices)")),
    "mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "mode.values(Tensor self, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) "
    "-> (Tensor(a!) values, Tensor(b!) indices)",
    "kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "kthvalue.values(Tensor self, SymInt k, int dim=-1, bool keepdim=False, *, Tensor(a!) values, "
    "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    "nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "nansum.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) "
    "-> Tensor(a!)",
    "nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "nanmean.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) "
    "-> Tensor(a!)",
    "aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) "
    "-> (Tensor(a!) min, Tensor(b!) max)",
    "min(Tensor self) -> Tensor",
    "min.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) min_indices) "
    "-> (Tensor(a!) values, Tensor(b!) indices)",
    "min.other(Tensor self, Tensor other) -> Tensor",
    "min.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "max.other(Tensor self, Tensor other) -> Tensor",
    "max.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "max.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    "argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    *(s.replace("NAME", name) for name in ("any", "all") for s in (
        "NAME(Tensor self) -> Tensor",
        "NAME.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
        "NAME.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
        "NAME.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
        "NAME.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
        "NAME.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")),
    "prod(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    "prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    *(s.replace("NAME", name) for name in ("var", "std") for s in (
        "NAME(Tensor self, bool unbiased=True) -> Tensor",
        "NAME.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
        "NAME.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
        "NAME.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, "
        "Tensor(a!) out) -> Tensor(a!)",
        "NAME.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor(a!) out) "
        "-> Tensor(a!)")),
    *(s.replace("NAME", name) for name in ("var_mean", "std_mean") for s in (
        "NAME(Tensor self, bool unbiased=True) -> (Tensor, Tensor)",
        "NAME.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)",
        "NAME.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
        "-> (Tensor, Tensor)",
        "NAME.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, "
        "Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))")),
    *(s.replace("NAME", name) for name in ("cumsum", "cumprod") for s in (
        "NAME(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
        "NAME.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
        "NAME_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)")),
    "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
    "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
    "sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, Tensor(a!) values, "
    "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    "sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, Tensor(b!) indices) "
    "-> (Tensor(a!) values, Tensor(b!) indices)",
    "argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
    "argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
    "argsort.stable_out(Tensor self, *, bool stable, int dim=-1, bool descending=False, Tensor(a!) out) "
    "-> Tensor(a!)",
    "msort(Tensor self) -> Tensor",
    "msort.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
    "diff.out(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None, *, Tensor(a!) out) "
    "-> Tensor(a!)",
    "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
    "topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor(a!) values, "
    "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    "logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
    "logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    "norm.Scalar(Tensor self, Scalar p=2) -> Tensor",
    "norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
    "norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor",
    "norm.dtype_out(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype, Tensor(a!) out) "
    "-> Tensor(a!)",
    "norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    "norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor",
    "norm.ScalarOpt_dtype_out(Tensor self, Scalar? p, *, ScalarType dtype, Tensor(a!) out) -> Tensor(a!)",
    "norm.Scalar_out(Tensor self, Scalar p=2, *, Tensor(a!) out) -> Tensor(a!)",
    "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor",
    "linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    "count_nonzero(Tensor self, int? dim=None) -> Tensor",
    "count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
    "count_nonzero.dim_IntList_out(Tensor self, int[] dim, *, Tensor(a!) out) -> Tensor(a!)",
    "count_nonzero.out(Tensor self, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)",
)

# The out= overloads with a backend kernel (CPU and Meta build them from the functional kernel):
# out overload -> (functional overload, how the out tensor's dtype is checked). The rules are
# structured.OUT_RULES plus "bool" (any/all: a bool or uint8 out), "cancast" (min/max's
# ``canCast`` check) and "float" (logsumexp: a floating out, the computation's dtype).
OUTS: dict[str, tuple[str, str]] = {
    "amin.out": ("amin", "input"),
    "aminmax.out": ("aminmax", "exact"),
    "min.unary_out": ("min", "cancast"),
    "max.unary_out": ("max", "cancast"),
    "min.dim_min": ("min.dim", "exact"),
    "argmin.out": ("argmin", "exact"),
    **{f"{n}.{o}": (f"{n}{f}", "bool") for n in ("any", "all")
       for o, f in (("out", ".dim"), ("dims_out", ".dims"), ("all_out", ""))},
    "prod.int_out": ("prod.dim_int", "sum"),
    "var.correction_out": ("var.correction", "cast"),
    "std.correction_out": ("std.correction", "cast"),
    "cumsum.out": ("cumsum", "sum"),
    "cumprod.out": ("cumprod", "sum"),
    "sort.values_stable": ("sort.stable", "exact"),
    "topk.values": ("topk", "exact"),
    "norm.out": ("norm.ScalarOpt_dim", "exact"),
    "norm.dtype_out": ("norm.ScalarOpt_dim_dtype", "exact"),
    "linalg_vector_norm.out": ("linalg_vector_norm", "exact"),
}

_CAN_CAST_TEXT = ("Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) to be "
                  "true, but got false.  (Could this error message be improved?  If so, please report an "
                  "enhancement request to PyTorch.)")


# --- rules the backends share (dtypes, checks, warnings) ---------------------------------------------
def reduction_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """Wrapped reduction dims in the order given; ``None`` or ``[]`` reduce every dim.

    Raises torch's errors for a dim out of range or listed twice. A 0-d tensor reduces over
    nothing (its dims 0 and -1 name the tensor itself).

    Example:
        >>> reduction_dims([-1, 0], 3), reduction_dims(None, 2)
        ((2, 0), (0, 1))
    """
    if dim is None:
        return tuple(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    seen: list[int] = []
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    if not ndim:
        return ()
    return tuple(seen) if seen else tuple(range(ndim))


def _integral(d: Any) -> bool:
    return not (d.is_floating_point or d.is_complex)


def cum_dtype(self_dtype: Any, dtype: Any) -> Any:
    """``prod``/``cumsum``/``cumprod``'s result dtype: ``dtype``, else integers and bool as int64."""
    if dtype is not None:
        return dtype
    return int64 if _integral(self_dtype) else self_dtype


def var_dtype(self_dtype: Any) -> Any:
    """``var``/``std``'s result dtype (real for complex input); integers and bool are refused."""
    if _integral(self_dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return {"complex64": float32, "complex128": float64}.get(self_dtype.name, self_dtype)


def dof_warning(name: str, count: int, correction: float) -> None:
    """Torch's warning when ``count - correction`` leaves no degrees of freedom (the result is nan or inf)."""
    if count - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)


def topk_check(self_dtype: Any, k: int, size: int) -> None:
    """``topk``'s checks: k within the dim's size, and no bool (CPU's kernel has none)."""
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    if self_dtype is _bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")


def vector_norm_check(self_dtype: Any, dtype: Any, name: str = "linalg.vector_norm") -> Any:
    """The dtype ``linalg_vector_norm`` computes in, after torch's checks of the input and ``dtype=``."""
    if name != "linalg.vector_norm":
        return norm_dtype(self_dtype, dtype)
    if _integral(self_dtype):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {SCALAR_TYPE_NAMES[self_dtype.name]}")
    if dtype is not None and _integral(dtype):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{SCALAR_TYPE_NAMES[dtype.name]}")
    return dtype if dtype is not None else self_dtype


def norm_dtype(self_dtype: Any, dtype: Any) -> Any:
    """The dtype of the ``norm.*`` overloads, after their checks (``norm()``'s texts)."""
    if _integral(self_dtype):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {SCALAR_TYPE_NAMES[self_dtype.name]} instead.")
    if dtype is not None and _integral(dtype):
        raise RuntimeError("norm(): the desired output dtype should be either floating point or complex. "
                           f"Got {SCALAR_TYPE_NAMES[dtype.name]} instead.")
    return dtype if dtype is not None else self_dtype


def vector_norm_empty_check(ord: float, shape: tuple[int, ...], dims: tuple[int, ...],  # noqa: A002
                            dim_given: bool) -> None:
    """The inf norms have no identity: refused over an empty dimension (torch's texts)."""
    if not math.isinf(ord) or not any(s == 0 for s in shape):
        return
    sign = "" if ord > 0 else "-"
    if not dim_given:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {sign}inf norm on an empty tensor because "
                           "the operation does not have an identity")
    for d in dims:
        if shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {sign}inf norm on the dimension {d}"
                               "because this dimension is empty and the operation does not have an identity")


def out_call(rule: str, functional: Callable[..., Any], args: tuple, kwargs: dict,
             outs: tuple[Tensor, ...]) -> tuple[Any, ...]:
    """Run a backend's functional kernel for an ``out=`` call; its results, checked against ``outs``.

    ``rule`` is one of ``OUTS``'s rules; the standard ones are ``structured.out_call``'s.
    """
    if rule == "bool":
        out_dtype = outs[0].dtype
        if out_dtype.name not in ("bool", "uint8"):
            name = getattr(functional, "__name__", "any").partition("_")[0]
            raise RuntimeError(f"{name} only supports bool tensor for result, got: {SCALAR_TYPE_NAMES[out_dtype.name]}")
        return (functional(*args, **kwargs),)
    if rule == "cancast":
        result = functional(*args, **kwargs)
        if not _can_cast(result.dtype, outs[0].dtype):
            raise RuntimeError(_CAN_CAST_TEXT)
        return (result,)
    if rule == "float":
        out_dtype = outs[0].dtype
        if not out_dtype.is_floating_point:
            raise RuntimeError("logsumexp(): Expected floating point type for result tensor, but got: "
                               f"{SCALAR_TYPE_NAMES[out_dtype.name]}")
        return (functional(*args, **kwargs),)
    return _structured_out_call(rule, functional, args, kwargs, outs)


def _can_cast(src: Any, dst: Any) -> bool:
    from .structured import can_cast

    return can_cast(src, dst)


# --- CompositeExplicitAutograd / CompositeImplicitAutograd kernels -------------------------------------
class _lazy:  # noqa: N801 - reads as the operator packet it stands for
    """``aten.<name>``, looked up at call time (this module is imported before its operators exist)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, overload: str) -> Any:
        return getattr(getattr(A, self.name), overload)


def _write_out(result: Tensor, out: Tensor) -> Tensor:
    """``resize_output(out, result.sizes()); out.copy_(result)`` through dispatched operators.

    No ``resize_`` operator is modelled: ``mul.out`` by a 0-d one resizes ``out`` as
    ``resize_output`` does (warning when it had elements) and writes the exact values.
    """
    one = A.scalar_tensor.default(1, dtype=result.dtype, device=result.device)
    return A.mul.out(result, one, out=out)


def _exact(result_dtype: Any, out: Tensor) -> None:
    check_out_dtype("exact", result_dtype, out.dtype)


def _flat(self: Tensor) -> Tensor:
    return A.reshape.default(self, [-1])


def any_dims(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """``any.dims``: ``any`` over all dims, else ``any.dim`` once per listed dim."""
    return _logical_dims(self, dim, keepdim, A.any.default, A.any.dim, A.ne.Scalar)


def all_dims(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _logical_dims(self, dim, keepdim, A.all.default, A.all.dim, A.ne.Scalar)


def _logical_dims(self: Tensor, dim: Any, keepdim: bool, full: Any, one: Any, ne: Any) -> Tensor:
    if dim is None:
        result = full(self)
        return A.reshape.default(result, [1] * self.dim()) if keepdim else result
    dims = sorted(reduction_dims(dim, self.dim()) if list(dim) else (), reverse=True)
    if not list(dim):  # no dim listed: each element on its own
        result = ne(self, 0)
        return A._to_copy.default(result, dtype=self.dtype) if self.dtype.name == "uint8" else result
    result = self
    for d in dims:
        result = one(result, d, keepdim)
    return result


def any_dims_out(self: Tensor, dim: Any = None, keepdim: bool = False, *, out: Tensor) -> Tensor:
    """``any.dims_out`` for every backend: ``any.out`` over one dim, else the functional result written."""
    return _logical_dims_out(self, dim, keepdim, out, "any")


def all_dims_out(self: Tensor, dim: Any = None, keepdim: bool = False, *, out: Tensor) -> Tensor:
    return _logical_dims_out(self, dim, keepdim, out, "all")


def _logical_dims_out(self: Tensor, dim: Any, keepdim: bool, out: Tensor, name: str) -> Tensor:
    packet = _lazy(name)
    if out.dtype.name not in ("bool", "uint8"):
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {SCALAR_TYPE_NAMES[out.dtype.name]}")
    if dim is not None and len(dim) == 1:
        return packet.out(self, dim[0], keepdim, out=out)
    return _write_out(packet.dims(self, dim, keepdim), out)


def prod_out(self: Tensor, *, dtype: Any = None, out: Tensor) -> Tensor:
    """``prod.out``: the checked dtype, then ``prod.int_out`` over the flattened input."""
    _exact(cum_dtype(self.dtype, dtype), out)
    return A.prod.int_out(_flat(self), 0, False, dtype=dtype, out=out)


def _unbiased(unbiased: bool) -> int:
    return 1 if unbiased else 0


def _variance_composites(name: str) -> dict[str, Callable[..., Any]]:
    """``var``/``std`` (and ``_mean``): the ``unbiased`` overloads as ``correction`` (CompositeImplicitAutograd)."""
    packet = _lazy(name)

    def plain(self: Tensor, unbiased: bool = True) -> Any:
        return packet.correction(self, None, correction=_unbiased(unbiased))

    def dim(self: Tensor, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
        return packet.correction(self, dim, correction=_unbiased(unbiased), keepdim=keepdim)

    kernels: dict[str, Callable[..., Any]] = {name: plain, f"{name}.dim": dim}
    if not name.endswith("_mean"):
        def out(self: Tensor, dim: Any, unbiased: bool = True, keepdim: bool = False, *, out: Tensor) -> Tensor:
            return packet.correction_out(self, dim, correction=_unbiased(unbiased), keepdim=keepdim, out=out)

        kernels[f"{name}.out"] = out
    return kernels


def _moments_out(name: str) -> Callable[..., Any]:
    """``var_mean.correction_out``/``std_mean.correction_out``: the two reductions' out= overloads."""
    first = _lazy(name.partition("_")[0])

    def correction_out(self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False,
                       out0: Tensor, out1: Tensor) -> tuple[Tensor, Tensor]:
        result_dtype = var_dtype(self.dtype)
        _exact(result_dtype, out0)
        _exact(self.dtype, out1)
        first.correction_out(self, dim, correction=correction, keepdim=keepdim, out=out0)
        A.mean.out(self, dim, keepdim, out=out1)
        return out0, out1

    return correction_out


def sort_default(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    return A.sort.stable(self, stable=False, dim=dim, descending=descending)


def sort_values(self: Tensor, dim: int = -1, descending: bool = False, *, values: Tensor,
                indices: Tensor) -> tuple[Tensor, Tensor]:
    return A.sort.values_stable(self, stable=False, dim=dim, descending=descending, values=values, indices=indices)


# argsort and msort (Sorting.cpp): CompositeImplicitAutograd over sort; their out= forms sort into a
# scratch tensor made with ``empty`` for the half of sort's result they do not return
def argsort(self: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    return A.sort.default(self, dim, descending)[1]


def argsort_stable(self: Tensor, *, stable: bool, dim: int = -1, descending: bool = False) -> Tensor:
    return A.sort.stable(self, stable=stable, dim=dim, descending=descending)[1]


def argsort_stable_out(self: Tensor, *, stable: bool, dim: int = -1, descending: bool = False,
                       out: Tensor) -> Tensor:
    values = A.empty.memory_format([0], dtype=self.dtype, layout=_layouts.strided, device=self.device)
    A.sort.values_stable(self, stable=stable, dim=dim, descending=descending, values=values, indices=out)
    return out


def msort(self: Tensor) -> Tensor:
    return A.sort.default(self, 0, False)[0]


def msort_out(self: Tensor, *, out: Tensor) -> Tensor:
    indices = A.empty.memory_format([0], dtype=int64, layout=_layouts.strided, device=self.device)
    A.sort.values(self, 0, values=out, indices=indices)
    return out


# diff (ReduceOps.cpp): CompositeImplicitAutograd; each order is ``narrow(1) - narrow(0)`` along ``dim``
# (logical_xor for bool), the right operand made first, as torch's compiled expression makes it
def _diff_check(self: Tensor, n: int, dim: int, prepend: Tensor | None, append: Tensor | None) -> None:
    if self.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        if other is None:
            continue
        wrapped = wrap_dim(dim, self.dim())
        if other.dim() != self.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(other.dim()):
            if i != wrapped and other.shape[i] != self.shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of input except along "
                    f"the differencing dimension; input.size({i}) = {self.shape[i]}, but got tensor.size({i}) = "
                    f"{other.shape[i]}")


def _diff_step(result: Tensor, dim: int, length: int, out: Tensor | None = None) -> Tensor:
    """One order: ``narrow(result, dim, 1, length) - narrow(result, dim, 0, length)``."""
    low = A.narrow.default(result, dim, 0, length)
    high = A.narrow.default(result, dim, 1, length)
    if result.dtype is _bool:
        return A.logical_xor.default(high, low) if out is None else A.logical_xor.out(high, low, out=out)
    return A.sub.Tensor(high, low) if out is None else A.sub.out(high, low, out=out)


def _diff_input(self: Tensor, n: int, dim: int, prepend: Tensor | None, append: Tensor | None) -> Tensor:
    """``self`` with ``prepend``/``append`` joined along ``dim`` (one ``cat``), when given and ``n`` > 0."""
    if (prepend is None and append is None) or n == 0:
        return self
    return A.cat.default([t for t in (prepend, self, append) if t is not None], dim)


def _diff_orders(self: Tensor, n: int, dim: int) -> Tensor:
    if n == 0:
        return A.copy_.default(A.zeros_like.default(self), self)
    size = self.shape[wrap_dim(dim, self.dim())]
    result = self
    for length in range(size - 1, size - 1 - min(n, size), -1):
        result = _diff_step(result, dim, length)
    return result


def diff(self: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    _diff_check(self, n, dim, prepend, append)
    return _diff_orders(_diff_input(self, n, dim, prepend, append), n, dim)


def diff_out(self: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None,
             *, out: Tensor) -> Tensor:
    _diff_check(self, n, dim, prepend, append)
    x = _diff_input(self, n, dim, prepend, append)
    if n == 0:
        if tuple(out.shape) != tuple(x.shape):
            from .linalg import resize_output

            resize_output(out, list(x.shape))
        if out.dtype is not x.dtype:
            raise RuntimeError(f"expected scalar_type {SCALAR_TYPE_NAMES[x.dtype.name]} but found "
                               f"{SCALAR_TYPE_NAMES[out.dtype.name]}")
        return A.copy_.default(out, x)
    size = x.shape[wrap_dim(dim, x.dim())]
    n = min(n, size)
    previous = _diff_orders(x, n - 1, dim) if n > 1 else x
    _diff_step(previous, dim, size - n, out)
    return out


def shift_source(self: Tensor) -> Tensor:
    """What logsumexp takes its shift's max of: ``self``, or its real part when complex (torch's ``at::real``)."""
    if not self.dtype.is_complex:
        return self
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the copy drops the imaginary part on purpose
        return A._to_copy.default(self, dtype=float64 if self.dtype == complex128 else float32)


def logsumexp(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(self - max))) + max``, with infinite maxima replaced by 0 (so inf and -inf stay)."""
    if _integral(self.dtype):
        self = A._to_copy.default(self, dtype=get_default_dtype())
    dims = list(dim)
    if self.numel() == 0:
        return A.log.default(A.sum.dim_IntList(A.exp.default(self), dims, keepdim))
    maxes = A.amax.default(shift_source(self), dims, True)
    finite = A.where.self(A.eq.Scalar(A.abs.default(maxes), math.inf), A.zeros.default(
        [], dtype=maxes.dtype, device=maxes.device), maxes)
    summed = A.sum.dim_IntList(A.exp.default(A.sub.Tensor(self, finite)), dims, keepdim)
    shift = finite if keepdim else A.squeeze.dims(finite, list(reduction_dims(dims, self.dim())))
    return A.add.Tensor(A.log.default(summed), shift)


def logsumexp_out(self: Tensor, dim: Any, keepdim: bool = False, *, out: Tensor) -> Tensor:
    """``logsumexp.out`` (CompositeExplicitAutogradNonFunctional): a floating ``out``, then the result written."""
    if not out.dtype.is_floating_point:
        raise RuntimeError("logsumexp(): Expected floating point type for result tensor, but got: "
                           f"{SCALAR_TYPE_NAMES[out.dtype.name]}")
    return _write_out(A.logsumexp.default(self, dim, keepdim), out)


def norm_scalar(self: Tensor, p: Any = 2) -> Tensor:
    return A.norm.ScalarOpt_dim(self, p, [], False)


def norm_scalar_opt_dtype(self: Tensor, p: Any, *, dtype: Any) -> Tensor:
    return A.norm.ScalarOpt_dim_dtype(self, p, [], False, dtype=dtype)


def norm_scalar_out(self: Tensor, p: Any = 2, *, out: Tensor) -> Tensor:
    return A.norm.out(self, p, [], False, out=out)


def norm_scalar_opt_dtype_out(self: Tensor, p: Any, *, dtype: Any, out: Tensor) -> Tensor:
    return A.norm.dtype_out(self, p, [], False, dtype=dtype, out=out)


def count_nonzero(self: Tensor, dim: Any = None) -> Tensor:
    return A.count_nonzero.dim_IntList(self, [] if dim is None else [dim])


def count_nonzero_out(self: Tensor, dim: Any = None, *, out: Tensor) -> Tensor:
    return A.count_nonzero.dim_IntList_out(self, [] if dim is None else [dim], out=out)


def count_nonzero_dim_intlist_out(self: Tensor, dim: Any, *, out: Tensor) -> Tensor:
    _exact(int64, out)
    return _write_out(A.count_nonzero.dim_IntList(self, dim), out)


def extremum_other(name: str) -> Callable[..., Tensor]:
    """``max.other``/``min.other`` (CompositeImplicitAutograd): ``maximum``/``minimum``."""
    op = _lazy("maximum" if name == "max" else "minimum")

    def other(self: Tensor, other: Tensor) -> Tensor:
        return op.default(self, other)

    return other


def extremum_out(name: str) -> Callable[..., Tensor]:
    op = _lazy("maximum" if name == "max" else "minimum")

    def out(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
        return op.out(self, other, out=out)

    return out


def _check_scalar_type(target: Tensor, dtype: Any) -> None:
    """``check_scalar_type_device_layout_equal``'s dtype part, for an out= argument."""
    if target.dtype is not dtype:
        raise RuntimeError(f"expected scalar_type {SCALAR_TYPE_NAMES[dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[target.dtype.name]}")


def _cumulative_extremum(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``cummax``/``cummin`` and their out= forms (ReduceOps.cpp), CompositeExplicitAutograd.

    The functional form makes two empty results and calls the out= form, which checks their dtypes,
    resizes them, then fills them (a 0-d input) or runs ``_<name>_helper`` (the backend's kernel).
    """
    helper = f"_{name}_helper"

    def out(self: Tensor, dim: int, *, values: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
        from .linalg import resize_output

        _check_scalar_type(values, self.dtype)
        _check_scalar_type(indices, int64)
        resize_output(values, self.shape)
        resize_output(indices, self.shape)
        if self.dim() == 0:
            A.fill_.Tensor(values, self)
            A.fill_.Scalar(indices, 0)
        elif self.numel():
            getattr(A, helper).default(self, values, indices, wrap_dim(dim, self.dim()))
        return values, indices

    def functional(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
        values = A.empty.memory_format(list(self.shape), dtype=self.dtype, device=self.device)
        indices = A.empty.memory_format(list(self.shape), dtype=int64, device=self.device)
        return tuple(getattr(A, name).out(self, dim, values=values, indices=indices))  # type: ignore[return-value]

    functional.__name__, out.__name__ = name, f"{name}_out"
    return functional, out


def _median_composites(name: str) -> dict[str, Callable[..., Any]]:
    """``median``/``nanmedian``'s CompositeExplicitAutograd kernels (Sorting.cpp, generated code).

    ``.dim`` makes two empty results and calls ``.dim_values`` (the backend's kernel); ``.out`` is
    torch's generated out= kernel around the full reduction.
    """
    def dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        values = A.empty.memory_format([0], dtype=self.dtype, device=self.device)
        indices = A.empty.memory_format([0], dtype=int64, device=self.device)
        return tuple(getattr(A, name).dim_values(  # type: ignore[return-value]
            *_trailing(self, dim, keepdim, defaults=(False,)), values=values, indices=indices))

    def out(self: Tensor, *, out: Tensor) -> Tensor:
        from .shape import write_generated_out

        return write_generated_out(getattr(A, name).default(self), out)

    dim.__name__, out.__name__ = f"{name}_dim", f"{name}_out"
    return {f"{name}.dim": dim, f"{name}.out": out}


def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """``at::kthvalue`` (CompositeExplicitAutograd): two empty results filled by ``kthvalue.values``."""
    values = A.empty.memory_format([0], dtype=self.dtype, device=self.device)
    indices = A.empty.memory_format([0], dtype=int64, device=self.device)
    return tuple(A.kthvalue.values(  # type: ignore[return-value]
        *_trailing(self, k, dim, keepdim, defaults=(-1, False)), values=values, indices=indices))


def mode_values(self: Tensor, dim: int = -1, keepdim: bool = False, *, values: Tensor,
                indices: Tensor) -> tuple[Tensor, Tensor]:
    """``mode_out`` (CompositeExplicitAutograd): the outs' dtypes, then empty, 0-d or computed results.

    The outs are resized as torch's kernel does: without ``keepdim`` each is first seen with a 1
    inserted at ``dim`` (``unsqueeze_``, so the resize warning prints that shape), resized to the
    kept shape, and squeezed back to the reduced one.
    """
    from .linalg import resize_output

    if values.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar type '{SCALAR_TYPE_NAMES[self.dtype.name]}' but got "
                           f"'{SCALAR_TYPE_NAMES[values.dtype.name]}' for values output")
    if indices.dtype is not int64:
        raise RuntimeError(f"expected scalar type 'Long' but got '{SCALAR_TYPE_NAMES[indices.dtype.name]}' for "
                           "indices output")
    d = wrap_dim(dim, self.dim())
    if self.dim() == 0 and self.numel() == 1:  # _dimreduce_return_trivial_no_ident
        for out in (values, indices):
            A.resize_.default(out, [])
        A.fill_.Tensor(values, self)
        A.fill_.Scalar(indices, 0)
        return values, indices
    result = A.mode.default(self, d, keepdim)  # the empty-input checks and shapes are the kernel's
    if self.numel() == 0:
        for out, r in zip((values, indices), result):
            resize_output(out, list(r.shape))
        return values, indices
    kept = list(self.shape)
    kept[d] = 1
    for out, r in zip((values, indices), result):
        if keepdim:
            resize_output(out, kept)
        else:
            seen = list(out.shape)
            seen.insert(min(d, len(seen)), 1)  # values.unsqueeze_(dim), then resize_output to the kept shape
            if seen != kept and out.numel():
                warnings.warn(f"An output with one or more elements was resized since it had shape {seen}, which "
                              f"does not match the required output shape {kept}. This behavior is deprecated, and "
                              "in a future PyTorch release outputs will not be resized unless they have zero "
                              "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                              "elements with t.resize_(0).", UserWarning, stacklevel=3)
            A.resize_.default(out, list(r.shape))  # resized to the kept shape, then squeezed at dim
        A.copy_.default(out, r)
    return values, indices


_CUMMAX, _CUMMAX_OUT = _cumulative_extremum("cummax")
_CUMMIN, _CUMMIN_OUT = _cumulative_extremum("cummin")


def _cummaxmin_backward(g: Tensor, self: Tensor, result1: Tensor, dim: int) -> Tensor:
    """``cummaxmin_backward``: ``grad`` added at each running extremum's index (``scatter_add``)."""
    if self.numel() == 0:
        return self
    zeros = A.zeros.default(list(self.shape), dtype=self.dtype, layout=_layouts.strided, device=self.device)
    if _subclass_like(result1, g):
        return A.scatter_add.default(zeros, dim, result1, g)
    return A.scatter_add_.default(zeros, dim, result1, g)


def _logcumsumexp_out(self: Tensor, dim: int, *, out: Tensor) -> Tensor:
    """``logcumsumexp_out``: out's dtype must be self's, then the backend's ``_logcumsumexp.out``."""
    _check_scalar_type(out, self.dtype)
    return A._logcumsumexp.out(self, dim, out=out)


def _logcumsumexp_backward(g: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """``logcumsumexp_backward`` (FunctionsManual.cpp, real dtypes).

    The positive and the negative parts of ``grad``, in log space, each through a reversed
    ``logcumsumexp`` and back with ``exp``; their difference.
    """
    if g.dim() == 0 or g.numel() == 0:
        return g
    lowest = float(np.finfo(g.dtype.np).min)  # std::numeric_limits<scalar_t>::lowest()
    grad_min = A.scalar_tensor.default(lowest, dtype=g.dtype, layout=_layouts.strided, device=g.device)
    log_abs_grad = A.log.default(A.abs.default(g))
    log_grad_positive = A.where.self(A.gt.Scalar(g, 0), log_abs_grad, grad_min)
    log_grad_negative = A.where.self(A.lt.Scalar(g, 0), log_abs_grad, grad_min)

    def reverse_logcumsumexp(x: Tensor) -> Tensor:
        return A.flip.default(A.logcumsumexp.default(A.flip.default(x, [dim]), dim), [dim])

    output_pos = A.exp.default(A.add.Tensor(reverse_logcumsumexp(A.sub.Tensor(log_grad_positive, result)), self))
    output_neg = A.exp.default(A.add.Tensor(reverse_logcumsumexp(A.sub.Tensor(log_grad_negative, result)), self))
    return A.sub.Tensor(output_pos, output_neg)


def trace_check(self: Tensor) -> None:
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")


def _trace_out(self: Tensor, *, out: Tensor) -> Tensor:
    """``trace.out``: torch's generated out= kernel (the result, then resized into ``out`` of its dtype)."""
    from .shape import write_generated_out

    return write_generated_out(A.trace.default(self), out)


def trace_backward(grad: Tensor, sizes: Any) -> Tensor:
    """``trace_backward_symint``: zeros, ``grad`` written at the flat diagonal's indices, viewed as ``sizes``.

    ``index_fill`` out of place where ``grad`` is subclass-like (a mode is active), as torch.
    """
    if len(sizes) != 2:
        raise RuntimeError("expected matrix input")
    rows, columns = int(sizes[0]), int(sizes[1])
    flat = A.zeros.default([rows * columns], dtype=grad.dtype, layout=_layouts.strided, device=grad.device)
    diagonal = A.arange.start_step(0, min(rows, columns) * (columns + 1), columns + 1, dtype=int64,
                                   layout=_layouts.strided, device=grad.device)
    if _subclass_like(grad):
        flat = A.index_fill.int_Tensor(flat, 0, diagonal, grad)
    else:
        A.index_fill_.int_Tensor(flat, 0, diagonal, grad)
    return A.view.default(flat, [rows, columns])


def _nanmean_factor(self: Tensor, dim: Any, keepdim: bool, detach: bool) -> Tensor:
    """``nanmean``'s check, then its count of the non-NaN elements: ``isnan(self).logical_not_().sum(dim)``.

    The functional form counts on ``self.detach()``; ``nanmean_out`` on ``self``.
    """
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{SCALAR_TYPE_NAMES[self.dtype.name]}")
    counted = A.detach.default(self) if detach else self
    present = A.logical_not_.default(A.ne.Tensor(counted, counted))  # at::native::isnan is self != self
    return A.sum.dim_IntList(*_trailing(present, dim, keepdim, defaults=(False,)))


def nanmean(self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``at::nanmean`` (CompositeImplicitAutograd): ``nansum`` divided by the number of non-NaN elements.

    Example:
        >>> import dispatchcore as dc
        >>> dc.nanmean(dc.tensor([1.0, float("nan"), 3.0]))
        tensor(2.)
    """
    factor = _nanmean_factor(self, dim, keepdim, detach=True)
    summed = A.nansum.default(*_trailing(self, dim, keepdim, defaults=(None, False)),
                              **({} if dtype is None else {"dtype": dtype}))
    return A.div.Tensor(summed, factor)


def nanmean_out(self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
                out: Tensor) -> Tensor:
    """``nanmean_out``: ``nansum_out`` into ``out``, then ``out.div_`` by the count."""
    factor = _nanmean_factor(self, dim, keepdim, detach=False)
    A.nansum.out(*_trailing(self, dim, keepdim, defaults=(None, False)), **({} if dtype is None else {"dtype": dtype}),
                 out=out)
    return A.div_.Tensor(out, factor)


EXPLICIT: dict[str, Callable[..., Any]] = {  # CompositeExplicitAutograd
    "trace.out": _trace_out,
    **_median_composites("median"), **_median_composites("nanmedian"), "kthvalue": kthvalue,
    "mode.values": mode_values,
    "logcumsumexp": lambda self, dim: A._logcumsumexp.default(self, dim), "logcumsumexp.out": _logcumsumexp_out,
    "cummax": _CUMMAX, "cummax.out": _CUMMAX_OUT, "cummin": _CUMMIN, "cummin.out": _CUMMIN_OUT,
    "any.dims": any_dims, "all.dims": all_dims, "any.dims_out": any_dims_out, "all.dims_out": all_dims_out,
    "prod.out": prod_out,
    "var_mean.correction_out": _moments_out("var_mean"), "std_mean.correction_out": _moments_out("std_mean"),
    "sort": sort_default, "sort.values": sort_values, "logsumexp": logsumexp,
    "norm.Scalar": norm_scalar, "norm.ScalarOpt_dtype": norm_scalar_opt_dtype, "norm.Scalar_out": norm_scalar_out,
    "norm.ScalarOpt_dtype_out": norm_scalar_opt_dtype_out,
    "count_nonzero": count_nonzero, "count_nonzero.out": count_nonzero_out,
    "count_nonzero.dim_IntList_out": count_nonzero_dim_intlist_out,
}
IMPLICIT: dict[str, Callable[..., Any]] = {  # CompositeImplicitAutograd
    **_variance_composites("var"), **_variance_composites("std"), **_variance_composites("var_mean"),
    **_variance_composites("std_mean"),
    "max.other": extremum_other("max"), "min.other": extremum_other("min"),
    "max.out": extremum_out("max"), "min.out": extremum_out("min"),
    "argsort": argsort, "argsort.stable": argsort_stable, "argsort.stable_out": argsort_stable_out,
    "msort": msort, "msort.out": msort_out, "diff": diff, "diff.out": diff_out,
    "trace_backward": trace_backward, "nanmean": nanmean, "nanmean.out": nanmean_out,
}


def register(lib: Library) -> None:
    """The composite kernels, at the keys torch registers them."""
    for name, kernel in EXPLICIT.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")
    # logsumexp.out is torch's one non-structured CompositeExplicitAutogradNonFunctional out= kernel here
    lib.impl("logsumexp.out", logsumexp_out, "CompositeExplicitAutogradNonFunctional")


# --- derivatives (FunctionsManual.cpp) -----------------------------------------------------------------
# The formulas dispatch what torch's C++ dispatches, in its order (Note [Evaluation order of the
# formulas], autograd/derivatives.py), on the path torch takes under a dispatch mode too
# (``subclass_like``).
def _subclass_like(*tensors: Any) -> bool:
    from ..autograd.derivatives import subclass_like

    return subclass_like(*tensors)


def _grad_mode() -> bool:
    from ..autograd.grad_mode import is_grad_enabled

    return is_grad_enabled()


def _unsqueeze_multiple(t: Any, dim: Any, ndim: int) -> Any:
    """``unsqueeze_multiple(t, opt_dim, n_dims)``: None unsqueezes every dim; one dim is unsqueezed as given."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if not dims:
            return t
        if len(dims) == 1:
            return A.unsqueeze.default(t, dims[0])
        wanted = {wrap_dim(d, ndim) for d in dims}
    else:
        wanted = set(range(ndim))
    for i in range(ndim):
        if i in wanted:
            t = A.unsqueeze.default(t, i)
    return t


def _safe_size(shape: tuple[int, ...], dims: Any) -> int:
    """``_safe_size``: the number of elements reduced over ``dims`` (1 for a 0-d tensor)."""
    if not shape:
        return 1
    n = 1
    for d in dims:
        n *= shape[wrap_dim(d, len(shape))]
    return n


def _prod_safe_zeros_backward(g: Any, inp: Any, dim: int) -> Any:
    """``prod_safe_zeros_backward``: exclusive cumulative products from both ends, safe with zeros."""
    if inp.numel() == 0:
        return A.expand.default(g, list(inp.shape))
    size = inp.shape[dim]
    if size == 1:
        return g
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = A.ones.default(ones_size, dtype=g.dtype, device=g.device)
    normal = A.cumprod.default(A.cat.default([ones, A.slice.Tensor(inp, dim, 0, size - 1)], dim), dim)
    narrow_reverse = A.flip.default(A.slice.Tensor(inp, dim, 1, size), [dim])
    reverse = A.flip.default(A.cumprod.default(A.cat.default([ones, narrow_reverse], dim), dim), [dim])
    return A.mul.Tensor(g, A.mul.Tensor(normal, reverse))


def _flat_safe_zeros(g: Any, self: Any) -> Any:
    """``prod_safe_zeros_backward(grad, input.contiguous().view(-1), 0).view_as(input)``."""
    flat = A.view.default(A.contiguous.default(self), [-1])
    return A.view.default(_prod_safe_zeros_backward(g, flat, 0), list(self.shape))


def _as_grad_dtype(self: Any, g: Any) -> Any:
    """``self.to(grad.scalar_type())``."""
    return self if self.dtype is g.dtype else A._to_copy.default(self, dtype=g.dtype)


def _prod_backward(g: Any, self: Any, result: Any) -> Any:
    """``prod_backward(grad, input, result)`` of a full product: ``grad * (result / input)`` without zeros."""
    self = _as_grad_dtype(self, g)
    if self.dim() == 0:
        return g
    if self.device.type == "meta" or _subclass_like(self):
        return _flat_safe_zeros(g, self)
    zero_idx = A.nonzero.default(A.eq.Scalar(self, 0))
    if zero_idx.numel() == 0:
        return A.mul.Tensor(g, A.div.Tensor(result, self))
    if not _grad_mode() and zero_idx.shape[0] > 1:
        return A.zeros_like.default(self, memory_format=_layouts.contiguous_format)
    return _flat_safe_zeros(g, self)


def _prod_dim_backward(g: Any, self: Any, result: Any, dim: int, keepdim: bool) -> Any:
    """``prod_backward(grad, input, result, dim, keepdim)``."""
    self = _as_grad_dtype(self, g)
    if self.dim() == 0:
        return g
    dim = wrap_dim(dim, self.dim())
    if not keepdim:
        g = A.unsqueeze.default(g, dim)
        result = A.unsqueeze.default(result, dim)
    if self.device.type == "meta" or _subclass_like(self):
        return _prod_safe_zeros_backward(g, self, dim)
    zero_count = A.sum.dim_IntList(A.eq.Scalar(self, 0), [dim], True)
    if A._local_scalar_dense.default(A.sum.default(zero_count)) == 0:
        return A.mul.Tensor(g, A.div.Tensor(result, self))
    return _prod_safe_zeros_backward(g, self, dim)


def _aminmax_backward(grads: Any, self: Any, dim: Any, keepdim: bool, result0: Any, result1: Any) -> Any:
    """``aminmax``'s formula: each defined gradient split evenly between its extrema, the two summed.

    Per output, ``scale_grad_by_count(restore_reduced_dims(grad), restore_reduced_dims(extremum) ==
    self, dims)``, where ``dims`` is ``[dim]`` or, without one, every dim.
    """
    from ..autograd.derivatives import restore_reduced_dims

    dims = list(range(self.dim())) if dim is None else [dim]
    total = None
    for g, extremum in zip(grads, (result0, result1)):
        if g is None:
            continue
        grad = restore_reduced_dims(g, dims, keepdim)
        mask = A.eq.Tensor(self, restore_reduced_dims(extremum, dims, keepdim))
        part = A.mul.Tensor(A.div.Tensor(grad, A.sum.dim_IntList(mask, dims, True)), mask)
        total = part if total is None else A.add.Tensor(total, part)
    return total


def _nansum_backward(g: Any, self: Any, dim: Any, keepdim: bool) -> Any:
    """``nansum_backward(grad.to(self.scalar_type()), ...)``: ``sum_backward(grad) * self.isnan().logical_not()``."""
    from ..autograd.derivatives import _sum_backward

    if g.dtype is not self.dtype:
        g = A._to_copy.default(g, dtype=self.dtype)
    present = A.logical_not.default(A.isnan.default(self))  # GCC: the right operand first
    return A.mul.Tensor(_sum_backward(g, tuple(self.shape), dim, keepdim), present)


def _var_backward(g: Any, self: Any, dim: Any, correction: Any, keepdim: bool) -> Any:
    """``var_backward``: ``(2 / (n - correction)) * grad * (self - self.mean(dim, true))``."""
    c = 1 if correction is None else correction
    if self.dim() == 0 or dim is None:
        dof = self.numel() - c
        if dof <= 0:  # 2 / 0: NaN where self is its mean, else infinity
            special = A.where.Scalar(A.eq.Tensor(self, A.mean.default(self)), math.nan, math.inf)
            return A.mul.Tensor(g, special)
        centered = A.sub.Tensor(self, A.mean.default(self))
        return A.mul.Tensor(A.mul.Scalar(g, 2.0 / dof), centered)
    if not keepdim and self.dim() > 1:
        g = _unsqueeze_multiple(g, dim, self.dim())
    dof = _safe_size(tuple(self.shape), [dim] if isinstance(dim, int) else dim) - c
    scale = 2.0 / dof if dof else math.inf
    centered = A.sub.Tensor(self, A.mean.dim(self, [dim] if isinstance(dim, int) else list(dim), True))
    return A.mul.Tensor(A.mul.Scalar(g, scale), centered)


def _std_backward(g: Any, self: Any, dim: Any, correction: Any, keepdim: bool, result: Any) -> Any:
    """``std_backward``: ``var_backward((grad / (result * 2)).masked_fill_(result == 0, 0), ...)``."""
    grad_var = A.div.Tensor(g, A.mul.Scalar(result, 2))
    grad_var = A.masked_fill_.Scalar(grad_var, A.eq.Scalar(result, 0), 0)
    return _var_backward(grad_var, self, dim, correction, keepdim)


def _mean_backward(g: Any, self: Any, dim: Any, keepdim: bool) -> Any:
    """``mean_backward(grad, sizes, dim.value_or({}), numel, keepdim)``: ``sum_backward(...) / n``."""
    dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
    shape = tuple(self.shape)
    n = self.numel() if not dims else _safe_size(shape, dims)
    if not keepdim and shape and dims:
        g = _unsqueeze_multiple(g, dims, len(shape))
    return A.div.Scalar(A.expand.default(g, list(shape)), n)


def _moments_backward(std: bool) -> Callable[..., Any]:
    """``var_mean_backward`` / ``std_mean_backward``: the first output's gradient, plus the mean's."""
    def backward(grads: Any, self: Any, dim: Any, correction: Any, keepdim: bool, result0: Any = None) -> Any:
        g_first, g_mean = grads
        total = None
        if g_first is not None:
            total = (_std_backward(g_first, self, dim, correction, keepdim, result0) if std
                     else _var_backward(g_first, self, dim, correction, keepdim))
        if g_mean is not None:
            part = _mean_backward(g_mean, self, dim, keepdim)
            total = part if total is None else A.add.Tensor(total, part)
        return total

    return backward


def _reversed_cumsum(w: Any, dim: int) -> Any:
    """``w.flip(dim).cumsum(dim).flip(dim)``."""
    return A.flip.default(A.cumsum.default(A.flip.default(w, [dim]), dim), [dim])


def _cumsum_backward(g: Any, self_dtype: Any, dim: int) -> Any:
    """``cumsum_backward(grad.to(self.scalar_type()), dim)``."""
    if g.dtype is not self_dtype:
        g = A._to_copy.default(g, dtype=self_dtype)
    if g.numel() <= 1 or g.shape[wrap_dim(dim, g.dim())] == 1:
        return g
    return _reversed_cumsum(g, dim)


def _cumprod_backward(g: Any, self: Any, dim: int, result: Any) -> Any:
    """``cumprod_backward(grad.to(self.scalar_type()), self, dim, result)`` (ReduceOps.cpp).

    Without a zero in ``self``: ``reversed_cumsum(result * grad) / self``. With zeros (or under a
    mode): masks built from the cumulative count of zeros, as torch 2.13 builds them; with grad
    mode on (double backward), the O(n^2) products that omit each element.
    """
    if g.dtype is not self.dtype:
        g = A._to_copy.default(g, dtype=self.dtype)
    if self.numel() <= 1:
        return g
    dim = wrap_dim(dim, self.dim())
    dim_size = self.shape[dim]
    if dim_size == 1:
        return g
    subclass = _subclass_like(self, g, result)
    w = A.mul.Tensor(result, g)
    is_zero = A.eq.Scalar(self, 0)
    if not subclass and not A._local_scalar_dense.default(A.any.default(is_zero)):
        return A.div.Tensor(_reversed_cumsum(w, dim), self)
    if not _grad_mode():
        grad_input = A.zeros.default(list(self.shape), dtype=g.dtype, device=g.device)
        cumsum = A.cumsum.default(is_zero, dim)
        mask = A.eq.Scalar(cumsum, 0)
        before = A.div.Tensor(_reversed_cumsum(A.masked_fill.Scalar(w, A.bitwise_not.default(mask), 0.0), dim), self)
        grad_input = A.where.self(mask, before, grad_input)
        mask = A.eq.Scalar(cumsum, 1)
        first_zero_index = A.max.dim(mask, dim, True)[1]
        first_zero_mask = A.logical_and_.default(
            A.scatter_.value(A.zeros_like.default(mask), dim, first_zero_index, 1), mask)
        mask = A.bitwise_and_.Tensor(mask, A.bitwise_not.default(first_zero_mask))
        products = A.cumprod.default(A.masked_fill.Scalar(self, A.bitwise_not.default(mask), 1.0), dim)
        grads = A.masked_fill.Scalar(g, A.ne.Scalar(cumsum, 1), 0.0)
        previous = A.gather.default(result, dim, A.relu_.default(A.sub.Scalar(first_zero_index, 1)))
        previous = A.masked_fill_.Scalar(previous, A.eq.Scalar(first_zero_index, 0), 1.0)
        at_zero = A.mul.Tensor(A.sum.dim_IntList(A.mul.Tensor(products, grads), [dim], True), previous)
        return A.where.self(first_zero_mask, at_zero, grad_input)
    # grad mode on: the products omitting each element, so that the result differentiates again
    ones_size = list(self.shape)
    ones_size[dim] = 1
    ones = A.expand.default(A.ones.default([1], dtype=g.dtype, device=g.device), ones_size)
    slices: list[Any] = []
    grad_input = None if subclass else A.zeros.default(list(self.shape), dtype=g.dtype, device=g.device)
    for k in range(dim_size):
        if k == 0:
            omitted = A.cat.default([ones, A.cumprod.default(A.slice.Tensor(self, dim, 1), dim)], dim)
        elif k == dim_size - 1:
            omitted = A.prod.dim_int(A.slice.Tensor(self, dim, 0, k), dim, True)
        else:
            until_k = A.prod.dim_int(A.slice.Tensor(self, dim, 0, k), dim, True)
            from_k_plus_1 = A.cumprod.default(A.slice.Tensor(self, dim, k + 1), dim)
            omitted = A.mul.Tensor(A.expand.default(until_k, list(from_k_plus_1.shape)), from_k_plus_1)
            omitted = A.cat.default([until_k, omitted], dim)
        grad_slice = A.sum.dim_IntList(A.mul.Tensor(A.slice.Tensor(g, dim, k), omitted), [dim])
        if grad_input is None:
            slices.append(grad_slice)
        else:
            A.copy_.default(A.select.int(grad_input, dim, k), grad_slice)
    return A.stack.default(slices, dim) if grad_input is None else grad_input


def _select_backward(g: Any, self_shape: tuple[int, ...], dim: int, indices: Any, keepdim: bool) -> Any:
    """``value_selecting_reduction_backward`` for k indices along ``dim`` (sort, topk)."""
    from ..autograd.derivatives import value_selecting_reduction_backward

    return value_selecting_reduction_backward(g, dim, indices, self_shape, keepdim)


def _logsumexp_backward(g: Any, self: Any, dim: Any, keepdim: bool, result: Any) -> Any:
    """``logsumexp_backward``: ``grad * (self - result).exp()``, the reduced dims put back."""
    if not keepdim and self.dim() != 0:
        g = _unsqueeze_multiple(g, dim, self.dim())
        result = _unsqueeze_multiple(result, dim, self.dim())
    return A.mul.Tensor(g, A.exp.default(A.sub.Tensor(self, result)))


def _norm_backward(g: Any, self: Any, p: Any, result: Any, dim: Any, keepdim: bool) -> Any:
    """``norm_backward`` (FunctionsManual.cpp), each ``p`` case in its C++ operand order.

    ``dim`` None or ``[]`` reduced everything (``linalg_vector_norm``'s ``dim.value_or({})``): nothing
    to unsqueeze then.
    """
    p = 2.0 if p is None else float(p)
    norm = result
    if not keepdim and self.dim() != 0:
        dims = [] if dim is None else dim
        g = _unsqueeze_multiple(g, dims, self.dim())
        norm = _unsqueeze_multiple(norm, dims, self.dim())
    if p == 0.0:
        return None
    if p == 1.0:
        return A.mul.Tensor(A.sgn.default(self), g)
    if p == 2.0:
        scaled = A.div.Tensor(self, norm)
        scaled = A.masked_fill_.Scalar(scaled, A.eq.Scalar(norm, 0), 0)
        return A.mul.Tensor(g, scaled)
    if math.isinf(p):
        magnitude = A.abs.default(self)
        mask = A.logical_or.default(A.eq.Tensor(magnitude, norm), A.isnan.default(magnitude))
        dims = list(range(self.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        shared = A.mul.Tensor(A.div.Tensor(g, A.sum.dim_IntList(mask, dims, True)), mask)
        return A.mul.Tensor(A.sgn.default(self), shared)
    if p < 1.0:
        powered = A.pow_.Scalar(A.abs.default(self), p - 1)
        powered = A.masked_fill_.Scalar(powered, A.eq.Scalar(self, 0), 0)
        self_scaled = A.mul.Tensor(A.sgn.default(self), powered)
        factor = A.pow.Tensor_Scalar(norm, 1 - p)
        return A.mul.Tensor(A.mul.Tensor(self_scaled, g), factor)
    if p < 2.0:
        powered = A.pow_.Scalar(A.abs.default(self), p - 1)
        self_scaled = A.mul.Tensor(A.sgn.default(self), powered)
    else:
        self_scaled = A.mul.Tensor(self, A.pow_.Scalar(A.abs.default(self), p - 2))
    scale = A.div.Tensor(g, A.pow.Tensor_Scalar(norm, p - 1))
    scale = A.masked_fill_.Scalar(scale, A.eq.Scalar(norm, 0), 0)
    return A.mul.Tensor(self_scaled, scale)


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names (``derivatives.yaml``)."""
    from ..autograd import derivatives as D
    from ..autograd.kernels import register_derivative, register_nondifferentiable

    def r(name: str, node: str, formula: Any, **kw: Any) -> None:
        register_derivative(lib, f"aten::{name}", node, ("self",), formula, **kw)

    r("trace", "TraceBackward0", lambda g, self_shape: A.trace_backward.default(g, list(self_shape)))
    r("cummax", "CummaxBackward0", _cummaxmin_backward, differentiable_outputs=(0,))
    r("cummin", "CumminBackward0", _cummaxmin_backward, differentiable_outputs=(0,))
    for name in ("_cummax_helper", "_cummin_helper"):  # torch's Autograd kernel records nothing for them
        register_nondifferentiable(lib, f"aten::{name}")
    r("logcumsumexp", "LogcumsumexpBackward0", _logcumsumexp_backward)
    from .pointwise import _no_derivative, _not_implemented_node  # torch: no derivatives.yaml entry

    _not_implemented_node(register_derivative(lib, "aten::_logcumsumexp", "NotImplemented", ("self",),
                                              _no_derivative("_logcumsumexp")))
    r("amin", "AminBackward0", D._amax_backward)
    r("aminmax", "AminmaxBackward0", _aminmax_backward)
    r("nansum", "NansumBackward0", _nansum_backward)
    r("mode", "ModeBackward0",
      lambda g, self_shape, dim, keepdim, result1: D._max_dim_backward(g, self_shape, dim, keepdim, result1),
      differentiable_outputs=(0,))
    r("kthvalue", "KthvalueBackward0",
      lambda g, self_shape, dim, keepdim, result1: D._max_dim_backward(g, self_shape, dim, keepdim, result1),
      differentiable_outputs=(0,))
    for name, node in (("median", "MedianBackward"), ("nanmedian", "NanmedianBackward")):
        r(name, f"{node}0", D._max_backward)  # evenly_distribute_backward(grad, self, result)
        r(f"{name}.dim", f"{node}1",
          lambda g, self_shape, dim, keepdim, result1: D._max_dim_backward(g, self_shape, dim, keepdim, result1),
          differentiable_outputs=(0,))
    r("min", "MinBackward1", D._max_backward)
    r("min.dim", "MinBackward0",
      lambda g, self_shape, dim, keepdim, result1: D._max_dim_backward(g, self_shape, dim, keepdim, result1),
      differentiable_outputs=(0,))
    r("prod", "ProdBackward0", _prod_backward)
    r("prod.dim_int", "ProdBackward1", _prod_dim_backward)
    r("var.correction", "VarBackward0", _var_backward)
    r("std.correction", "StdBackward0", _std_backward)
    r("var_mean.correction", "VarMeanBackward0",
      lambda grads, self, dim, correction, keepdim: _moments_backward(False)(grads, self, dim, correction, keepdim))
    r("std_mean.correction", "StdMeanBackward0",
      lambda grads, self, dim, correction, keepdim, result0: _moments_backward(True)(
          grads, self, dim, correction, keepdim, result0))
    for name in ("cumsum", "cumsum_"):
        r(name, "CumsumBackward0", _cumsum_backward, **({"mutates": "self"} if name.endswith("_") else {}))
    r("cumprod", "CumprodBackward0", _cumprod_backward)
    r("cumprod_", "CumprodBackward0", _cumprod_backward, mutates="self")
    sort = (lambda g, self_shape, dim, result1: _select_backward(g, self_shape, dim, result1, True))
    r("sort", "SortBackward0", sort, differentiable_outputs=(0,))
    r("sort.stable", "SortBackward1", sort, differentiable_outputs=(0,))
    r("topk", "TopkBackward0", sort, differentiable_outputs=(0,))
    r("logsumexp", "LogsumexpBackward0", _logsumexp_backward)
    r("linalg_vector_norm", "LinalgVectorNormBackward0",
      lambda g, self, ord, result, dim, keepdim: _norm_backward(g, self, ord, result, dim, keepdim))  # noqa: A006
    r("norm.Scalar", "NormBackward0", lambda g, self, p, result: _norm_backward(g, self, p, result, None, False))
    r("norm.ScalarOpt_dim", "NormBackward1", _norm_backward)
    r("norm.ScalarOpt_dtype", "NormBackward2",
      lambda g, self, p, result: _norm_backward(g, self, p, result, None, False))
    r("norm.ScalarOpt_dim_dtype", "NormBackward3", _norm_backward)
    for name in ("argmin", "any", "any.dim", "any.dims", "all", "all.dim", "all.dims", "count_nonzero",
                 "count_nonzero.dim_IntList"):
        register_nondifferentiable(lib, f"aten::{name}")


# --- torch.* functions and Tensor methods --------------------------------------------------------------
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "max": ("max(Tensor input, *, Tensor out=None)", "max(Tensor input, Tensor other, *, Tensor out=None)",
            "max(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)"),
    "Tensor.max": ("max()", "max(Tensor other)", "max(int64_t dim, bool keepdim=False)"),
    "amin": ("amin(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None)",),
    "Tensor.amin": ("amin(IntArrayRef[1] dim=None, bool keepdim=False)",),
    "aminmax": ("aminmax(Tensor input, *, int64_t? dim=None, bool keepdim=False, TensorList[2] out=None)",),
    "Tensor.aminmax": ("aminmax(*, int64_t? dim=None, bool keepdim=False)",),
    "median": ("median(Tensor input)", "median(Tensor input, int64_t dim, bool keepdim=False, *, "
               "TensorList[2] out=None)"),
    "Tensor.median": ("median()", "median(int64_t dim, bool keepdim=False)"),
    "mode": ("mode(Tensor input, int64_t dim=-1, bool keepdim=False, *, TensorList[2] out=None)",),
    "Tensor.mode": ("mode(int64_t dim=-1, bool keepdim=False)",),
    "kthvalue": ("kthvalue(Tensor input, SymInt k, int64_t dim=-1, bool keepdim=False, *, TensorList[2] out=None)",),
    "Tensor.kthvalue": ("kthvalue(SymInt k, int64_t dim=-1, bool keepdim=False)",),
    "nansum": ("nansum(Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, "
               "Tensor out=None)",),
    "Tensor.nansum": ("nansum(IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",),
    "argmin": ("argmin(Tensor input, int64_t? dim=None, bool keepdim=False, *, Tensor out=None)",),
    "Tensor.argmin": ("argmin(int64_t? dim=None, bool keepdim=False)",),
    "any": ("any(Tensor input, *, Tensor out=None)",
            "any(Tensor input, IntArrayRef? dim=None, bool keepdim=False, *, Tensor out=None)",
            "any(Tensor input, int64_t dim, bool keepdim=False, *, Tensor out=None)"),
    "Tensor.any": ("any()", "any(IntArrayRef? dim=None, bool keepdim=False)", "any(int64_t dim, bool keepdim=False)"),
    "prod": ("prod(Tensor input, *, ScalarType? dtype=None)",
             "prod(Tensor input, int64_t dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)"),
    "Tensor.prod": ("prod(*, ScalarType? dtype=None)",
                    "prod(int64_t dim, bool keepdim=False, *, ScalarType? dtype=None)"),
    "var": ("var(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor out=None)",
            "var(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, "
            "Tensor out=None)",
            "var(Tensor input, bool unbiased=True)"),
    "Tensor.var": ("var(IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
                   "var(IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)",
                   "var(bool unbiased=True)"),
    "var_mean": ("var_mean(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
                 "var_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)",
                 "var_mean(Tensor input, bool unbiased=True)"),
    "logcumsumexp": ("logcumsumexp(Tensor input, int64_t dim, *, Tensor out=None)",),
    "Tensor.logcumsumexp": ("logcumsumexp(int64_t dim)",),
    **{key: sigs for name in ("cummax", "cummin") for key, sigs in (
        (name, (f"{name}(Tensor input, int64_t dim, *, TensorList[2] out=None)",)),
        (f"Tensor.{name}", (f"{name}(int64_t dim)",)))},
    "cumsum": ("cumsum(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)",),
    "Tensor.cumsum": ("cumsum(int64_t dim, *, ScalarType? dtype=None)",),
    "sort": ("sort(Tensor input, *, bool? stable, int64_t dim=-1, bool descending=False, TensorList[2] out=None)",
             "sort(Tensor input, int64_t dim=-1, bool descending=False, *, TensorList[2] out=None)"),
    "Tensor.sort": ("sort(*, bool? stable, int64_t dim=-1, bool descending=False)",
                    "sort(int64_t dim=-1, bool descending=False)"),
    "argsort": ("argsort(Tensor input, *, bool stable, int64_t dim=-1, bool descending=False, Tensor out=None)",
                "argsort(Tensor input, int64_t dim=-1, bool descending=False)"),
    "Tensor.argsort": ("argsort(*, bool stable, int64_t dim=-1, bool descending=False)",
                       "argsort(int64_t dim=-1, bool descending=False)"),
    "msort": ("msort(Tensor input, *, Tensor out=None)",),
    "Tensor.msort": ("msort()",),
    "diff": ("diff(Tensor input, int64_t n=1, int64_t dim=-1, Tensor? prepend=None, Tensor? append=None, *, "
             "Tensor out=None)",),
    "Tensor.diff": ("diff(int64_t n=1, int64_t dim=-1, Tensor? prepend=None, Tensor? append=None)",),
    "topk": ("topk(Tensor input, SymInt k, int64_t dim=-1, bool largest=True, bool sorted=True, *, "
             "TensorList[2] out=None)",),
    "Tensor.topk": ("topk(SymInt k, int64_t dim=-1, bool largest=True, bool sorted=True)",),
    "logsumexp": ("logsumexp(Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, Tensor out=None)",),
    "Tensor.logsumexp": ("logsumexp(IntArrayRef[1] dim, bool keepdim=False)",),
    "count_nonzero": ("count_nonzero(Tensor input, int64_t? dim=None)", "count_nonzero(Tensor input, IntArrayRef dim)"),
    "Tensor.count_nonzero": ("count_nonzero(int64_t? dim=None)", "count_nonzero(IntArrayRef dim)"),
}


_ALIASES = {"min": "max", "nanmean": "nansum", "nanmedian": "median",
            "all": "any", "std": "var", "std_mean": "var_mean", "cumprod": "cumsum",
            "cumsum_": "cumsum", "cumprod_": "cumsum"}


def _signatures(key: str) -> tuple[str, ...]:
    """``key``'s signatures; min/all/std/cumprod/... are max/any/var/cumsum's with the name changed."""
    if key in _SIGNATURES:
        return _SIGNATURES[key]
    prefix, _, name = key.rpartition(".")
    alias = _ALIASES[name]
    return tuple(name + s[len(alias):] for s in _SIGNATURES[f"{prefix}.{alias}" if prefix else alias])


# torch's binding: which signature ``args``/``kwargs`` fit, and the arguments by name
_parse = Bindings(_SIGNATURES, _signatures).parse


def _dtype(value: Any) -> Any:
    from ..factories import _PY_DTYPES

    return _PY_DTYPES.get(value, value) if isinstance(value, type) else value


def _dims(dim: Any) -> Any:
    return dim if dim is None else [dim] if isinstance(dim, int) else list(dim)


def _extremum(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``torch.max``/``torch.min``: the full reduction, the element-wise ``other`` form, or over ``dim``."""
    packet = _lazy(name)
    result_type = getattr(return_types, name)
    out_type = getattr(return_types, name + "_out")
    dim_out = "dim_max" if name == "max" else "dim_min"
    out_names = ("max", "max_values") if name == "max" else ("min", "min_indices")

    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002 - torch's name
        if not kwargs:  # the common calls, decided at once
            if not args and isinstance(input, Tensor):
                return packet.default(input)
            if len(args) == 1 and args[0].__class__ is int and isinstance(input, Tensor):
                return result_type(packet.dim(input, args[0], False))
        index, bound = _parse(name, (input, *args), kwargs)
        return _call(index, bound)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            if not args:
                return packet.default(self)
            if len(args) == 1 and args[0].__class__ is int:
                return result_type(packet.dim(self, args[0], False))
        index, bound = _parse(f"Tensor.{name}", args, kwargs)
        return _call(index, {"input": self, **bound})

    def _call(index: int, bound: dict[str, Any]) -> Any:
        x, out = bound["input"], bound.get("out")
        if index == 0:
            return packet.default(x) if out is None else packet.unary_out(x, out=out)
        if index == 1:
            return packet.other(x, bound["other"]) if out is None else packet.out(x, bound["other"], out=out)
        if out is None:
            return result_type(packet.dim(x, bound["dim"], bound["keepdim"]))
        values, indices = out
        return out_type(getattr(packet, dim_out)(x, bound["dim"], bound["keepdim"],
                                                 **{out_names[0]: values, out_names[1]: indices}))

    function.__name__ = function.__qualname__ = name
    method.__name__ = method.__qualname__ = name
    return function, method


def _simple(name: str, call: Callable[[dict[str, Any]], Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A function and a method that parse their arguments as torch's binding and ``call`` the bound ones."""
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        _, bound = _parse(name, (input, *args), kwargs)
        return call(bound)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        _, bound = _parse(f"Tensor.{name}", args, kwargs)
        return call({"input": self, **bound})

    function.__name__ = function.__qualname__ = name
    method.__name__ = method.__qualname__ = name
    return function, method


def _indexed(name: str, call: Callable[[int, dict[str, Any]], Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Like ``_simple``, for functions with several signatures: ``call`` gets the signature's index."""
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        index, bound = _parse(name, (input, *args), kwargs)
        return call(index, bound)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        index, bound = _parse(f"Tensor.{name}", args, kwargs)
        return call(index, {"input": self, **bound})

    function.__name__ = function.__qualname__ = name
    method.__name__ = method.__qualname__ = name
    return function, method


def _amin(b: dict[str, Any]) -> Tensor:
    dim = [] if b["dim"] is None else _dims(b["dim"])
    if b.get("out") is not None:
        return A.amin.out(b["input"], dim, b["keepdim"], out=b["out"])
    return A.amin.default(b["input"], dim, b["keepdim"])


def _aminmax(b: dict[str, Any]) -> Any:
    x, out = b["input"], b.get("out")
    if out is None:
        return return_types.aminmax(A.aminmax.default(x, dim=b["dim"], keepdim=b["keepdim"]))
    return return_types.aminmax_out(A.aminmax.out(x, dim=b["dim"], keepdim=b["keepdim"], min=out[0], max=out[1]))


def _median(name: str) -> Callable[[int, dict[str, Any]], Any]:
    """``torch.median``/``nanmedian``: the full reduction, or values and indices along ``dim``."""
    packet = _lazy(name)
    result_type, out_type = getattr(return_types, name), getattr(return_types, f"{name}_out")

    def call(index: int, b: dict[str, Any]) -> Any:
        if index == 0:
            return packet.default(b["input"])
        args = _trailing(b["input"], b["dim"], b["keepdim"], defaults=(False,))
        out = b.get("out")
        if out is None:
            return result_type(packet.dim(*args))
        return out_type(packet.dim_values(*args, values=out[0], indices=out[1]))

    return call


def _mode(b: dict[str, Any]) -> Any:
    args = _trailing(b["input"], b["dim"], b["keepdim"], defaults=(-1, False))
    out = b.get("out")
    if out is None:
        return return_types.mode(A.mode.default(*args))
    return return_types.mode_out(A.mode.values(*args, values=out[0], indices=out[1]))


def _kthvalue(b: dict[str, Any]) -> Any:
    args = _trailing(b["input"], b["k"], b["dim"], b["keepdim"], defaults=(-1, False))
    out = b.get("out")
    if out is None:
        return return_types.kthvalue(A.kthvalue.default(*args))
    return return_types.kthvalue_out(A.kthvalue.values(*args, values=out[0], indices=out[1]))


def _nan_reduction(name: str) -> Callable[[dict[str, Any]], Tensor]:
    """``torch.nansum``/``torch.nanmean``: the arguments torch's binding passes (trailing defaults left out)."""
    packet = _lazy(name)

    def call(b: dict[str, Any]) -> Tensor:
        args = _trailing(b["input"], _dims(b["dim"]), b["keepdim"], defaults=(None, False))
        kwargs = {} if b["dtype"] is None else {"dtype": _dtype(b["dtype"])}
        if b.get("out") is not None:
            return packet.out(*args, **kwargs, out=b["out"])
        return packet.default(*args, **kwargs)

    return call


def _argmin(b: dict[str, Any]) -> Tensor:
    if b.get("out") is not None:
        return A.argmin.out(b["input"], b["dim"], b["keepdim"], out=b["out"])
    return A.argmin.default(b["input"], b["dim"], b["keepdim"])


def _logical(name: str) -> Callable[[int, dict[str, Any]], Tensor]:
    packet = _lazy(name)

    def call(index: int, b: dict[str, Any]) -> Tensor:
        x, out = b["input"], b.get("out")
        if index == 0:
            return packet.default(x) if out is None else packet.all_out(x, out=out)
        if index == 1:
            dim = _dims(b["dim"])
            return (packet.dims(x, dim, b["keepdim"]) if out is None
                    else packet.dims_out(x, dim, b["keepdim"], out=out))
        return packet.dim(x, b["dim"], b["keepdim"]) if out is None else packet.out(x, b["dim"], b["keepdim"], out=out)

    return call


def _prod(index: int, b: dict[str, Any]) -> Tensor:
    x, dtype = b["input"], _dtype(b["dtype"])
    if index == 0:
        return A.prod.default(x, dtype=dtype)
    if b.get("out") is not None:
        return A.prod.int_out(x, b["dim"], b["keepdim"], dtype=dtype, out=b["out"])
    return A.prod.dim_int(x, b["dim"], b["keepdim"], dtype=dtype)


def _variance(name: str) -> Callable[[int, dict[str, Any]], Any]:
    packet = _lazy(name)
    moments = name.endswith("_mean")

    def call(index: int, b: dict[str, Any]) -> Any:
        x, out = b["input"], b.get("out")
        if index == 2:
            return packet.default(x, b["unbiased"])
        dim = _dims(b["dim"])
        if index == 0:
            if out is not None:
                return packet.out(x, dim, b["unbiased"], b["keepdim"], out=out)
            return packet.dim(x, dim, b["unbiased"], b["keepdim"])
        if out is not None:
            return packet.correction_out(x, dim, correction=b["correction"], keepdim=b["keepdim"], out=out)
        result = packet.correction(x, dim, correction=b["correction"], keepdim=b["keepdim"])
        return tuple(result) if moments else result

    return call


def _scan(name: str) -> Callable[[dict[str, Any]], Tensor]:
    packet = _lazy(name)

    def call(b: dict[str, Any]) -> Tensor:
        dtype = _dtype(b["dtype"])
        if b.get("out") is not None:
            return packet.out(b["input"], b["dim"], dtype=dtype, out=b["out"])
        return packet.default(b["input"], b["dim"], dtype=dtype)

    return call


def _scan_(name: str) -> Callable[..., Tensor]:
    op = _lazy(name + "_")

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _, b = _parse(f"Tensor.{name}_", args, kwargs)
        return op.default(self, b["dim"], dtype=_dtype(b["dtype"]))

    method.__name__ = method.__qualname__ = name + "_"
    return method


def _sort(index: int, b: dict[str, Any]) -> Any:
    x, out = b["input"], b.get("out")
    if index == 0:
        if out is None:
            return return_types.sort(A.sort.stable(x, stable=b["stable"], dim=b["dim"], descending=b["descending"]))
        return return_types.sort_out(A.sort.values_stable(x, stable=b["stable"], dim=b["dim"],
                                                      descending=b["descending"], values=out[0], indices=out[1]))
    if out is None:
        return return_types.sort(A.sort.default(x, b["dim"], b["descending"]))
    return return_types.sort_out(A.sort.values(x, b["dim"], b["descending"], values=out[0], indices=out[1]))


def _argsort(index: int, b: dict[str, Any]) -> Tensor:
    x = b["input"]
    if index == 1:
        return A.argsort.default(x, b["dim"], b["descending"])
    if b.get("out") is not None:
        return A.argsort.stable_out(x, stable=b["stable"], dim=b["dim"], descending=b["descending"], out=b["out"])
    return A.argsort.stable(x, stable=b["stable"], dim=b["dim"], descending=b["descending"])


def _msort(b: dict[str, Any]) -> Tensor:
    if b.get("out") is not None:
        return A.msort.out(b["input"], out=b["out"])
    return A.msort.default(b["input"])


def _diff(b: dict[str, Any]) -> Tensor:
    args = (b["input"], b["n"], b["dim"], b["prepend"], b["append"])
    return A.diff.default(*args) if b.get("out") is None else A.diff.out(*args, out=b["out"])


def _cumulative(name: str) -> Callable[[dict[str, Any]], Any]:
    result_type, out_type = getattr(return_types, name), getattr(return_types, f"{name}_out")

    def call(b: dict[str, Any]) -> Any:
        out = b.get("out")
        if out is None:
            return result_type(getattr(A, name).default(b["input"], b["dim"]))
        return out_type(getattr(A, name).out(b["input"], b["dim"], values=out[0], indices=out[1]))

    return call


def _topk(b: dict[str, Any]) -> Any:
    x, out = b["input"], b.get("out")
    args = (x, b["k"], b["dim"], b["largest"], b["sorted"])
    if out is None:
        return return_types.topk(A.topk.default(*args))
    return return_types.topk_out(A.topk.values(*args, values=out[0], indices=out[1]))


def _logsumexp(b: dict[str, Any]) -> Tensor:
    dim = _dims(b["dim"])
    if b.get("out") is not None:
        return A.logsumexp.out(b["input"], dim, b["keepdim"], out=b["out"])
    return A.logsumexp.default(b["input"], dim, b["keepdim"])


def _count_nonzero(index: int, b: dict[str, Any]) -> Tensor:
    if index == 0:
        return A.count_nonzero.default(b["input"], b["dim"])
    return A.count_nonzero.dim_IntList(b["input"], _dims(b["dim"]))


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Any = None,  # noqa: A002
         dtype: Any = None) -> Tensor:
    """``torch.norm``: a vector norm (``linalg_vector_norm``); "fro" is the 2-norm over at most two dims.

    Matrix norms ("nuc", "fro" over more than two dims) are not modelled.
    """
    dims = _dims(dim)
    if isinstance(p, str):
        if p != "fro" or (dims is not None and len(dims) > 2):
            raise NotImplementedError(f"torch.norm with p={p!r} (a matrix norm, linalg.matrix_norm) is not modelled")
        p = 2
    elif p is None:
        p = 2.0
    if out is not None:
        return A.linalg_vector_norm.out(input, p, dims, keepdim, dtype=_dtype(dtype), out=out)
    return A.linalg_vector_norm.default(input, p, dims, keepdim, dtype=_dtype(dtype))


def _norm_method(self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return norm(self, p, dim, keepdim, dtype=dtype)


_norm_method.__name__ = _norm_method.__qualname__ = "norm"


# ``Tensor.trace()`` only: ``dispatchcore.trace`` is the dispatch tracer (``compat`` refuses ``torch.trace``)
_TRACE = Bindings({"Tensor.trace": ("trace()",)})


def _build() -> tuple[dict[str, Callable[..., Any]], dict[str, Callable[..., Any]]]:
    pairs = {
        "max": _extremum("max"), "min": _extremum("min"),
        "amin": _simple("amin", _amin), "aminmax": _simple("aminmax", _aminmax),
        "median": _indexed("median", _median("median")), "nanmedian": _indexed("nanmedian", _median("nanmedian")),
        "kthvalue": _simple("kthvalue", _kthvalue), "mode": _simple("mode", _mode),
        "nansum": _simple("nansum", _nan_reduction("nansum")), "nanmean": _simple("nanmean", _nan_reduction("nanmean")),
        "argmin": _simple("argmin", _argmin),
        "any": _indexed("any", _logical("any")), "all": _indexed("all", _logical("all")),
        "prod": _indexed("prod", _prod),
        "var": _indexed("var", _variance("var")), "std": _indexed("std", _variance("std")),
        "var_mean": _indexed("var_mean", _variance("var_mean")),
        "std_mean": _indexed("std_mean", _variance("std_mean")),
        "cumsum": _simple("cumsum", _scan("cumsum")), "cumprod": _simple("cumprod", _scan("cumprod")),
        "cummax": _simple("cummax", _cumulative("cummax")), "cummin": _simple("cummin", _cumulative("cummin")),
        "logcumsumexp": _simple("logcumsumexp", lambda b: A.logcumsumexp.default(b["input"], b["dim"]) if b.get(
            "out") is None else A.logcumsumexp.out(b["input"], b["dim"], out=b["out"])),
        "sort": _indexed("sort", _sort), "topk": _simple("topk", _topk),
        "argsort": _indexed("argsort", _argsort), "msort": _simple("msort", _msort), "diff": _simple("diff", _diff),
        "logsumexp": _simple("logsumexp", _logsumexp),
        "count_nonzero": _indexed("count_nonzero", _count_nonzero),
    }
    functions = {name: pair[0] for name, pair in pairs.items()}
    functions["norm"] = norm
    methods = {name: pair[1] for name, pair in pairs.items() if name not in ("var_mean", "std_mean")}
    methods.update(cumsum_=_scan_("cumsum"), cumprod_=_scan_("cumprod"), norm=_norm_method,
                   trace=_TRACE.method("trace", lambda i, b: A.trace.default(b["input"])))
    return functions, methods


FUNCTIONS, METHODS = _build()
