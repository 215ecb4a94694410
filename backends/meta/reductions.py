"""Meta kernels of the reductions family (``dispatchcore.native.reductions``): geometry and dtype only.

Mirrors the meta functions of ``ReduceOps.cpp``/``Sorting.cpp``/``TensorCompare.cpp`` (and torch's
Python meta kernels for ``sort``, ``logsumexp``, ``norm``): the result of each operator has the
shape, strides and dtype a CPU call gives, and a bad call raises CPU's error, from the same
shared rules. The CompositeExplicitAutograd operators torch also gives a Meta kernel run their
composite, whose dispatched calls land here. Invariant: no kernel reads data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import dtypes as _dt
from dispatchcore import parse_schema
from dispatchcore.native import reductions as R
from dispatchcore.native.structured import out_arguments
from dispatchcore.tensor import Tensor

from . import shapes
from .kernels import _dt_of, _resize_out, kernel_table, meta_tensor, python_copy_out, python_out_wrapper

__all__ = ["KERNELS"]

_ALL_TEXT = ("{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
             "with the 'dim' argument.")


def _reduced(self: Tensor, dims: tuple[int, ...], keepdim: bool, dtype: Any) -> Tensor:
    return meta_tensor(shapes.reduction_shape(tuple(self.shape), dims, keepdim), dtype)


def _check_dims_nonempty(self: Tensor, dims: tuple[int, ...], name: str) -> None:
    if self.dim():
        for d in dims:
            if self.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _dtype(value: Any) -> Any:
    return None if value is None else _dt_of(value)


# --- min, amin, argmin ---------------------------------------------------------------------------------
def amin_meta(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    dims = R.reduction_dims(dim, self.dim())
    if self.numel() == 0 and not list(dim):
        raise RuntimeError(_ALL_TEXT.format("amin"))
    _check_dims_nonempty(self, dims, "amin")
    return _reduced(self, dims, keepdim, self.dtype)


def _without_identity(self: Tensor, dim: Any, keepdim: bool) -> tuple[int, ...]:
    """The reduced shape of torch's Python reference reductions without an identity (``_refs._reduction``).

    ``dim`` None or empty reduces every dim; a duplicate dim and a reduced dim of size 0 are refused.
    """
    ndim = self.dim()
    listed = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(shapes.wrap_dim(d, ndim) for d in listed) if listed else tuple(range(ndim))
    if len(set(dims)) != len(dims):
        raise RuntimeError("duplicate value in the list of dims")
    if ndim and not all(self.shape[d] for d in dims):
        raise RuntimeError("reducing over zero-size dimension for reduction operation without identity")
    return shapes.reduction_shape(tuple(self.shape), dims if ndim else (), keepdim)


def aminmax_meta(self: Tensor, *, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """Torch's Meta ``aminmax`` is its Python decomposition: ``amin`` then ``amax`` (references) on meta."""
    shape = _without_identity(self, dim, keepdim)
    return meta_tensor(shape, self.dtype), meta_tensor(shape, self.dtype)


def aminmax_out_meta(self: Tensor, *, dim: int | None = None, keepdim: bool = False, min: Tensor,  # noqa: A002
                     max: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002 - the schema's names
    """The decomposition's ``out_wrapper("min", "max")``: each out resized, then its safe-cast check."""
    for result, out in zip(aminmax_meta(self, dim=dim, keepdim=keepdim), (min, max)):
        python_copy_out(result, out)
    return min, max


def median_meta(self: Tensor) -> Tensor:
    """The Python meta ``median``/``nanmedian`` of torch: a 0-d result of self's dtype, nothing checked."""
    return meta_tensor((), self.dtype)


def median_dim_meta(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The Python meta ``median.dim``/``nanmedian.dim`` of torch: values and int64 indices, reduced.

    The dim is wrapped; an empty reduced dim is not refused there.
    """
    wrapped = shapes.wrap_dim(dim, self.dim())
    dims = (wrapped,) if self.dim() else ()
    shape = shapes.reduction_shape(tuple(self.shape), dims, keepdim)
    return meta_tensor(shape, self.dtype), meta_tensor(shape, _dt.int64)


def median_dim_values_meta(self: Tensor, dim: int, keepdim: bool = False, *, values: Tensor,
                           indices: Tensor) -> tuple[Tensor, Tensor]:
    """Its ``out_wrapper("values", "indices")``: each out resized, then its safe-cast check."""
    for result, out in zip(median_dim_meta(self, dim, keepdim), (values, indices)):
        python_copy_out(result, out)
    return values, indices


def kthvalue_meta(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The Python meta ``kthvalue`` of torch: the dim wrapped, ``k`` checked, values and int64 indices."""
    wrapped = shapes.wrap_dim(dim, self.dim())
    if not 1 <= k <= (self.shape[wrapped] if self.dim() else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {wrapped}")
    shape = shapes.reduction_shape(tuple(self.shape), (wrapped,) if self.dim() else (), keepdim)
    return meta_tensor(shape, self.dtype), meta_tensor(shape, _dt.int64)


def kthvalue_values_meta(self: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, values: Tensor,
                         indices: Tensor) -> tuple[Tensor, Tensor]:
    """Its ``out_wrapper("values", "indices")``: each out resized, then its safe-cast check."""
    for result, out in zip(kthvalue_meta(self, k, dim, keepdim), (values, indices)):
        python_copy_out(result, out)
    return values, indices


def nansum_meta(self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The Meta ``nansum`` of torch: its decomposition ``sum(where(isnan(self), 0, self), ...)``.

    Sum's geometry and dtype (integers and bool as int64); complex is allowed, unlike on CPU.
    """
    dims = R.reduction_dims(dim, self.dim())
    if dtype is None:
        integral = not (self.dtype.is_floating_point or self.dtype.is_complex)
        dtype = _dt.int64 if integral else self.dtype
    return _reduced(self, dims, keepdim, _dt_of(dtype))


def min_meta(self: Tensor) -> Tensor:
    if self.numel() == 0:
        raise RuntimeError(_ALL_TEXT.format("min"))
    return meta_tensor((), self.dtype)


def min_dim_meta(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    dims = R.reduction_dims([dim], self.dim())
    _check_dims_nonempty(self, dims, "min")
    return _reduced(self, dims, keepdim, self.dtype), _reduced(self, dims, keepdim, _dt.int64)


def argmin_meta(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if self.dtype is _dt.bool_:
        raise RuntimeError("argmin(): does not support bool input")
    if dim is None:
        if self.numel() == 0:
            raise IndexError("argmin(): Expected reduction dim to be specified for input.numel() == 0.")
        return meta_tensor((1,) * self.dim() if keepdim else (), _dt.int64)
    dims = R.reduction_dims([dim], self.dim())
    _check_dims_nonempty(self, dims, "argmin")
    return _reduced(self, dims, keepdim, _dt.int64)


# --- any, all ------------------------------------------------------------------------------------------
def _logical_dtype(self: Tensor) -> Any:
    return _dt.uint8 if self.dtype is _dt.uint8 else _dt.bool_


def _logical_family(name: str) -> dict[str, Callable[..., Any]]:
    def full(self: Tensor) -> Tensor:
        return meta_tensor((), _logical_dtype(self))

    def one(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
        return _reduced(self, R.reduction_dims([dim], self.dim()), keepdim, _logical_dtype(self))

    def dims(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        if dim is not None and len(dim) == 0:
            return meta_tensor(tuple(self.shape), _logical_dtype(self))
        return _reduced(self, R.reduction_dims(dim, self.dim()), keepdim, _logical_dtype(self))

    for kernel, overload in ((full, ""), (one, "_dim"), (dims, "_dims")):
        kernel.__name__ = kernel.__qualname__ = f"{name}{overload}_meta"  # out_call names the op from it
    return {name: full, f"{name}.dim": one, f"{name}.dims": dims}


# --- prod, cumsum, cumprod -----------------------------------------------------------------------------
def prod_meta(self: Tensor, *, dtype: Any = None) -> Tensor:
    return meta_tensor((), R.cum_dtype(self.dtype, _dtype(dtype)))


def prod_dim_int_meta(self: Tensor, dim: int, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return _reduced(self, R.reduction_dims([dim], self.dim()), keepdim, R.cum_dtype(self.dtype, _dtype(dtype)))


def _scan_family(name: str) -> dict[str, Callable[..., Any]]:
    def functional(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        shapes.wrap_dim(dim, self.dim())
        result = R.cum_dtype(self.dtype, _dtype(dtype))
        if result is _dt.bool_:
            raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
        return meta_tensor(tuple(self.shape), result)

    def inplace(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        shapes.wrap_dim(dim, self.dim())
        if dtype is not None and _dt_of(dtype) is not self.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {_dt.TYPEMETA_NAMES[self.dtype.name]} and "
                               f"output tensor dtype {_dt.TYPEMETA_NAMES[_dt_of(dtype).name]} should match")
        return self

    return {name: functional, f"{name}_": inplace}


# --- var, std ------------------------------------------------------------------------------------------
def _moments(name: str, self: Tensor, dim: Any, correction: Any, keepdim: bool) -> tuple[Tensor, Tensor]:
    result = R.var_dtype(self.dtype)
    dims = R.reduction_dims(dim, self.dim())
    count = 1
    for d in dims:
        count *= self.shape[d]
    R.dof_warning(name, count, 1.0 if correction is None else float(correction))
    return _reduced(self, dims, keepdim, result), _reduced(self, dims, keepdim, self.dtype)


def var_correction_meta(self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Tensor:
    return _moments("var", self, dim, correction, keepdim)[0]


def std_correction_meta(self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Tensor:
    return _moments("std", self, dim, correction, keepdim)[0]


def var_mean_correction_meta(self: Tensor, dim: Any = None, *, correction: Any = None,
                             keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _moments("var_mean", self, dim, correction, keepdim)


def std_mean_correction_meta(self: Tensor, dim: Any = None, *, correction: Any = None,
                             keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _moments("std_mean", self, dim, correction, keepdim)


# --- sort, topk ----------------------------------------------------------------------------------------
def sort_stable_meta(self: Tensor, *, stable: Any, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    shapes.wrap_dim(dim, self.dim())
    shape = tuple(self.shape)
    strides = shapes.dense_strides_like(shape, tuple(self.stride()))
    return meta_tensor(shape, self.dtype, strides), meta_tensor(shape, _dt.int64, strides)


def topk_meta(self: Tensor, k: int, dim: int = -1, largest: bool = True,
              sorted: bool = True) -> tuple[Tensor, Tensor]:  # noqa: A002 - the schema's name
    d = shapes.wrap_dim(dim, self.dim())
    R.topk_check(self.dtype, k, self.shape[d] if self.dim() else 1)
    shape = tuple(k if i == d else s for i, s in enumerate(self.shape))
    return meta_tensor(shape, self.dtype), meta_tensor(shape, _dt.int64)


# --- norms, count_nonzero ------------------------------------------------------------------------------
def _norm(self: Tensor, ord: Any, dim: Any, keepdim: bool, result: Any) -> Tensor:  # noqa: A002
    dims = R.reduction_dims(dim, self.dim())
    R.vector_norm_empty_check(float(ord), tuple(self.shape), dims, dim is not None and len(dim) > 0)
    real = {"complex64": _dt.float32, "complex128": _dt.float64}.get(result.name, result)
    return _reduced(self, dims, keepdim, real)


def linalg_vector_norm_meta(self: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                            dtype: Any = None) -> Tensor:
    return _norm(self, ord, dim, keepdim, R.vector_norm_check(self.dtype, _dtype(dtype)))


def norm_scalar_opt_dim_meta(self: Tensor, p: Any, dim: Any, keepdim: bool = False) -> Tensor:
    return _norm(self, 2 if p is None else p, dim, keepdim, R.norm_dtype(self.dtype, None))


def norm_scalar_opt_dim_dtype_meta(self: Tensor, p: Any, dim: Any, keepdim: bool, *, dtype: Any) -> Tensor:
    return _norm(self, 2 if p is None else p, dim, keepdim, R.norm_dtype(self.dtype, _dtype(dtype)))


def count_nonzero_dim_intlist_meta(self: Tensor, dim: Any) -> Tensor:
    return _reduced(self, R.reduction_dims(dim, self.dim()), False, _dt.int64)


# --- the table -----------------------------------------------------------------------------------------
FUNCTIONAL: dict[str, Callable[..., Any]] = {
    "amin": amin_meta, "aminmax": aminmax_meta, "nansum": nansum_meta,
    "kthvalue": kthvalue_meta, "kthvalue.values": kthvalue_values_meta,
    # torch's meta_median_mode_dim serves mode too, with its defaults
    "mode": lambda self, dim=-1, keepdim=False: median_dim_meta(self, dim, keepdim),
    "mode.values": lambda self, dim=-1, keepdim=False, *, values, indices: median_dim_values_meta(
        self, dim, keepdim, values=values, indices=indices),
    **{f"{name}{suffix}": kernel for name in ("median", "nanmedian") for suffix, kernel in (
        ("", median_meta), (".dim", median_dim_meta), (".dim_values", median_dim_values_meta))},
    "min": min_meta, "min.dim": min_dim_meta, "argmin": argmin_meta,
    **_logical_family("any"), **_logical_family("all"),
    "prod": prod_meta, "prod.dim_int": prod_dim_int_meta,
    **_scan_family("cumsum"), **_scan_family("cumprod"),
    "var.correction": var_correction_meta, "std.correction": std_correction_meta,
    "var_mean.correction": var_mean_correction_meta, "std_mean.correction": std_mean_correction_meta,
    "sort.stable": sort_stable_meta, "topk": topk_meta,
    "linalg_vector_norm": linalg_vector_norm_meta, "norm.ScalarOpt_dim": norm_scalar_opt_dim_meta,
    "norm.ScalarOpt_dim_dtype": norm_scalar_opt_dim_dtype_meta,
    "count_nonzero.dim_IntList": count_nonzero_dim_intlist_meta,
}
# the CompositeExplicitAutograd operators with a Meta kernel in torch: their composite, on meta tensors
COMPOSITE = ("prod.out", "var_mean.correction_out", "std_mean.correction_out", "sort", "sort.values", "logsumexp",
             "norm.Scalar", "norm.ScalarOpt_dtype", "norm.Scalar_out", "norm.ScalarOpt_dtype_out", "count_nonzero",
             "count_nonzero.out", "count_nonzero.dim_IntList_out")


def _out_kernel(functional: Callable[..., Any], rule: str, outs: tuple[str, ...]) -> Callable[..., Any]:
    def out_meta(*args: Any, **kwargs: Any) -> Any:
        targets = tuple(kwargs.pop(name) for name in outs)
        results = R.out_call(rule, functional, args, kwargs, targets)
        for r, out in zip(results, targets):
            _resize_out(out, tuple(r.shape), tuple(r.stride()))
        return targets[0] if len(targets) == 1 else targets

    return out_meta


def _cumulative_extremum_meta(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """Torch's meta ``cummaxmin``: two results of self's shape; the dim is checked when there are elements."""
    if self.numel() != 0 and self.dim() != 0:
        shapes.wrap_dim(dim, self.dim())
    return meta_tensor(tuple(self.shape), self.dtype), meta_tensor(tuple(self.shape), _dt.int64)


def _cumulative_extremum_out_meta(self: Tensor, dim: int, *, values: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    """Its ``out_wrapper("values", "indices")``: each out resized, then the safe-cast check of each copy."""
    results = _cumulative_extremum_meta(self, dim)
    for out, result in zip((values, indices), results):
        python_copy_out(result, out)
    return values, indices


def logcumsumexp_meta(self: Tensor, dim: int) -> Tensor:
    """Torch's meta: the dim checked, a contiguous result like self."""
    shapes.wrap_dim(dim, max(self.dim(), 1))
    return meta_tensor(tuple(self.shape), self.dtype)


def trace_meta(self: Tensor) -> Tensor:
    """Torch's ref ``trace`` on meta: its matrix check, then ``sum(diag(self))``'s 0-d result."""
    if self.dim() != 2:
        raise RuntimeError(f"expected a matrix, but got tensor with dim {self.dim()}")
    return meta_tensor((), _dt.int64 if not (self.dtype.is_floating_point or self.dtype.is_complex) else self.dtype)


def _kernels() -> dict[str, Callable[..., Any]]:
    functional = {**kernel_table(), **FUNCTIONAL}
    schemas = {s.partition("(")[0]: s for s in R.SCHEMAS}
    outs = {name: _out_kernel(functional[of], rule, out_arguments(parse_schema(f"aten::{schemas[name]}")))
            for name, (of, rule) in R.OUTS.items()}
    composites = {name: R.EXPLICIT[name] for name in COMPOSITE}
    return {**FUNCTIONAL, **outs, **composites, "logsumexp.out": R.logsumexp_out,
            "aminmax.out": aminmax_out_meta,
            "nansum.out": python_out_wrapper(nansum_meta),
            "trace": trace_meta, "trace.out": python_out_wrapper(trace_meta),
            "logcumsumexp": logcumsumexp_meta, "logcumsumexp.out": python_out_wrapper(logcumsumexp_meta),
            **{f"{name}{suffix}": kernel for name in ("cummax", "cummin") for suffix, kernel in (
                ("", _cumulative_extremum_meta), (".out", _cumulative_extremum_out_meta))}}


KERNELS = _kernels()
