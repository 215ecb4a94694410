"""CUDA kernels of the aten operators: checks and geometry from Meta, arithmetic on the device.

Every kernel first checks devices as torch does (TensorIterator ops accept 0-dim CPU tensors as
scalars; the others name the offending argument), then runs the operator's **Meta kernel** on
stand-ins of its arguments (``backends/meta``): that yields torch's result shape, dtype and
strides, and torch's error for a bad call, without duplicating those rules here. Then inputs are
cast to the compute dtype (TensorIterator's ``common_dtype``) by a cast kernel where they differ,
the result is allocated on the device, and ``launch.py`` starts the CUDA C kernel. Views are new
``CudaData`` over the same storage; factories whose values come from an algorithm (``arange``,
``linspace``, ``logspace``, ``eye``, ``rand``, ``randn``) run the CPU kernel and upload, so seeds
give the CPU's numbers.
Kernel names are ``<name>_<overload>_cuda``, as the CPU backend's are ``..._cpu``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dispatchcore import cuda as _cuda
from dispatchcore import dtypes as _dt
from dispatchcore import ops
from dispatchcore.native.activation import softmax_backward_check
from dispatchcore.native.stubs import copy_stub
from dispatchcore.tensor import Tensor, wrap

from ..meta import kernels as _meta_kernels
from ..meta import shapes
from ..meta.kernels import meta_tensor
from . import launch, sources
from .data import CudaData, cuda_empty, cuda_tensor, from_numpy, to_numpy

__all__ = ["KERNELS"]

_MK = _meta_kernels
_CPU = _dt.device("cpu")
_CUDA_NAME = "cuda:0"
_NAMES = _dt.SCALAR_TYPE_NAMES


# --- devices -------------------------------------------------------------------------------------
def _is_cuda(t: Any) -> bool:
    return isinstance(t, Tensor) and t._device.type == "cuda"


def _check_iter(*tensors: Any) -> None:
    """TensorIterator's device rule: all on cuda:0, except 0-dim CPU tensors (scalars)."""
    for t in tensors:
        if isinstance(t, Tensor) and t._device.type != "cuda" and not (t._device.type == "cpu" and t.dim() == 0):
            raise RuntimeError(_cuda.DEVICE_MISMATCH.format(_CUDA_NAME, t._device))


def _check_args(method: str, *named: tuple[str, Any]) -> None:
    """The generated wrappers' rule (``check_and_update_common_device``): the first tensor decides."""
    common = None
    for name, t in named:
        for x in (t if isinstance(t, (list, tuple)) else (t,)):
            if not isinstance(x, Tensor):
                continue
            if common is None:
                common = x._device
            elif x._device != common:
                raise RuntimeError(_cuda.DEVICE_MISMATCH_ARGUMENT.format(name, x._device, common, method))


# --- meta stand-ins and dtypes ------------------------------------------------------------------
def _meta(t: Any) -> Any:
    """A meta tensor with ``t``'s geometry and dtype (numbers and None pass through).

    A wrapped number (``x * 2``) stays one, so the Meta kernel promotes as torch does.
    """
    if not isinstance(t, Tensor):
        return t
    d = t._data
    if isinstance(d, CudaData):
        return meta_tensor(d.shape, t.dtype, d.element_strides(), d.storage_offset, d.storage.nbytes)
    m = meta_tensor(tuple(t.shape), t.dtype, t.stride(), t.storage_offset())
    if t._meta.__class__ is _dt.WrappedNumber:
        m._meta = t._meta
    return m


def _geometry(m: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], np.dtype]:
    return tuple(m.shape), tuple(m.stride()), m.dtype.np


def _new_like_meta(m: Tensor) -> Tensor:
    """A fresh CUDA tensor with a meta result's shape, strides and dtype."""
    shape, strides, dt = _geometry(m)
    return cuda_empty(shape, dt, strides)


def _not_implemented(name: str, dt: np.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{name}\" not implemented for '{_NAMES[np.dtype(dt).name]}'")


def _code(dt: np.dtype, name: str, allowed: Sequence[str] = sources.ALL) -> str:
    code = sources.code_of(dt)
    if code is None or code not in allowed:
        raise _not_implemented(name, dt)
    return code


def _scalar(value: Any) -> Any:
    """A Python number from a Scalar argument (a 0-d tensor or numpy scalar is read)."""
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, Tensor):
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _as(t: Tensor, dt: np.dtype) -> CudaData:
    """``t``'s data on the device in dtype ``dt`` (cast by a kernel; a CPU 0-dim tensor uploaded)."""
    d = t._data
    if isinstance(d, CudaData):
        if d.dtype == dt:
            return d
        out = cuda_empty(d.shape, dt)._data
        launch.copy_into(out, d)
        return out
    host = np.asarray(t._cpu_data())  # a 0-dim CPU tensor taking part as a scalar
    out = cuda_empty(host.shape, dt)._data
    src = cuda_empty(host.shape, host.dtype)._data
    from_numpy(host, src)
    launch.copy_into(out, src)
    return out


def _store(result: CudaData, target: Tensor) -> Tensor:
    """Copy a computed ``result`` into ``target`` (an in-place or out= tensor) unless it is its data."""
    if result is not target._data:
        launch.copy_into(target._data, result)
    return target


def _resize_out(out: Tensor, m: Tensor) -> None:
    """Give a CUDA ``out=`` tensor the geometry its meta stand-in was resized to (``resize_output``)."""
    shape, strides, dt = _geometry(m)
    d = out._data
    if (d.shape, d.element_strides()) == (shape, strides):
        return
    needed = shapes.storage_nbytes(shape, strides, d.itemsize, d.storage_offset)
    if needed <= d.storage.nbytes:
        out._data = CudaData(d.storage, shape, strides, d.dtype, d.storage_offset)
    else:
        fresh = cuda_empty(shape, d.dtype, strides)._data
        out._data = fresh


def _fresh(m: Tensor) -> tuple[Tensor, CudaData]:
    """(new result tensor, its data) for a functional op's meta result."""
    t = _new_like_meta(m)
    return t, t._data


def _target(self: Tensor, m: Tensor, compute: np.dtype) -> tuple[Tensor, CudaData]:
    """(tensor to return, data to compute into) of an in-place or out= op.

    ``self``'s own data when its dtype is the compute dtype; otherwise a temporary, which ``_store``
    then casts into ``self`` (TensorIterator computes in the common dtype, casts on the store).
    """
    if self.dtype.np == compute:
        return self, self._data
    return self, cuda_empty(self.shape, compute)._data


# --- pointwise: binary arithmetic -------------------------------------------------------------------
_SUPPORTED = {"add": sources.ALL, "sub": sources.ALL, "mul": sources.ALL, "div": sources.FLOAT}


def _binary_tensor(name: str, self: Tensor, other: Tensor, alpha: Any, out: Tensor | None, inplace: bool) -> Tensor:
    if out is None and other._meta.__class__ is _dt.WrappedNumber and _is_cuda(self):
        # x * 2 (a wrapped number): the scalar kernel, as torch's CUDA kernels take a CPU scalar
        return _binary_scalar(name, self, other._meta.value, alpha, inplace)
    _check_iter(self, other, out)
    meta_fn = _MK._make_arith(name)
    key = f"{name}_.Tensor" if inplace else (f"{name}.out" if out is not None else f"{name}.Tensor")
    kwargs: dict[str, Any] = {}
    if name in ("add", "sub"):
        kwargs["alpha"] = alpha
    if out is not None:
        kwargs["out"] = _meta(out)
    m = meta_fn[key](_meta(self), _meta(other), **kwargs)
    compute = _dt.result_type(self, other).np
    if name == "div" and compute.kind in "biu":
        compute = _dt.get_default_dtype().np
    code = _code(compute, f"{name}_cuda", _SUPPORTED[name])
    a, b = _as(self, compute), _as(other, compute)
    if inplace:
        target, dst = _target(self, m, compute)
    elif out is not None:
        _resize_out(out, kwargs["out"])
        target, dst = _target(out, m, compute)
    else:
        target = _new_like_meta(m)
        dst = target._data
    if name in ("add", "sub"):
        alpha = _scalar(alpha)
        launch.pointwise("add", dst, [a, b], launch.scalar_args(-alpha if name == "sub" else alpha, compute), code)
    else:
        launch.pointwise(name, dst, [a, b], code=code)
    return _store(dst, target)


def _binary_scalar(name: str, self: Tensor, other: Any, alpha: Any, inplace: bool) -> Tensor:
    _check_iter(self)
    other = _scalar(other)
    meta_fn = _MK._make_arith(name)
    key = f"{name}_.Scalar" if inplace else f"{name}.Scalar"
    args = (alpha,) if name in ("add", "sub") else ()
    m = meta_fn[key](_meta(self), other, *args)
    compute = _dt.result_type(self, other).np
    if name == "div" and compute.kind in "biu":
        compute = _dt.get_default_dtype().np
    code = _code(compute, f"{name}_cuda", _SUPPORTED[name])
    a = _as(self, compute)
    if inplace:
        target, dst = _target(self, m, compute)
    else:
        target = _new_like_meta(m)
        dst = target._data
    if name in ("add", "sub"):
        alpha = _scalar(alpha)
        value = other * alpha if alpha != 1 else other
        launch.pointwise("add_s", dst, [a], launch.scalar_args(-value if name == "sub" else value, compute), code)
    else:
        launch.pointwise(f"{name}_s", dst, [a], launch.scalar_args(other, compute), code)
    return _store(dst, target)


def _binary_family(name: str) -> tuple[Callable[..., Any], ...]:
    """``.Tensor``, ``_.Tensor`` and ``.out`` of one binary op.

    The ``.Scalar`` overloads are CompositeExplicitAutograd (``dispatchcore/native/explicit.py``):
    they pass a wrapped number, which ``_binary_tensor`` sends to the scalar kernel.
    """
    if name in ("add", "sub"):
        def tensor(self, other, *, alpha=1):
            return _binary_tensor(name, self, other, alpha, None, False)

        def inplace_tensor(self, other, *, alpha=1):
            return _binary_tensor(name, self, other, alpha, None, True)

        def out_(self, other, *, alpha=1, out):
            return _binary_tensor(name, self, other, alpha, out, False)
    else:
        def tensor(self, other):
            return _binary_tensor(name, self, other, 1, None, False)

        def inplace_tensor(self, other):
            return _binary_tensor(name, self, other, 1, None, True)

        def out_(self, other, *, out):
            return _binary_tensor(name, self, other, 1, out, False)
    fns = (tensor, inplace_tensor, out_)
    for fn, suffix in zip(fns, ("_tensor", "__tensor", "_out")):
        fn.__name__ = fn.__qualname__ = f"{name}{suffix}_cuda"
    return fns


def reciprocal_cuda(self):
    """``1 / self`` as ``div.Tensor`` of a ones tensor (torch: a unary float kernel per backend)."""
    m = _meta(self)
    _code(m.dtype.np, "fill_cuda")
    ones = _new_like_meta(m)
    launch.fill(ones._data, 1)
    return div_tensor_cuda(ones, self)


add_tensor_cuda, add__tensor_cuda, add_out_cuda = _binary_family("add")
sub_tensor_cuda, sub__tensor_cuda, sub_out_cuda = _binary_family("sub")
mul_tensor_cuda, mul__tensor_cuda, mul_out_cuda = _binary_family("mul")
div_tensor_cuda, div__tensor_cuda, div_out_cuda = _binary_family("div")


# --- pow ---------------------------------------------------------------------------------------------
def _pow(self: Any, exponent: Any, inplace: bool) -> Tensor:
    if isinstance(self, Tensor) and isinstance(exponent, Tensor):
        _check_iter(self, exponent)
        m = (_MK.pow__tensor_meta if inplace else _MK.pow_tensor_tensor_meta)(_meta(self), _meta(exponent))
        compute = _dt.result_type(self, exponent).np
        code = _code(compute, "pow_cuda", sources.NUMERIC)
        a, b = _as(self, compute), _as(exponent, compute)
        target, dst = _target(self, m, compute) if inplace else _fresh(m)
        launch.pointwise("pow", dst, [a, b], code=code)
        return _store(dst, target)
    if isinstance(self, Tensor):  # Tensor ** Scalar
        _check_iter(self)
        exponent = _scalar(exponent)
        m = (_MK.pow__scalar_meta if inplace else _MK.pow_tensor_scalar_meta)(_meta(self), exponent)
        compute = _dt.result_type(self, exponent).np
        code = _code(compute, "pow_cuda", sources.NUMERIC)
        a = _as(self, compute)
        target, dst = _target(self, m, compute) if inplace else _fresh(m)
        if compute.kind == "f" and exponent == 2:  # torch's pow_tensor_scalar_optimized_kernel: x * x
            launch.pointwise("mul", dst, [a, a], code=code)
        elif compute.kind == "f" and exponent == 0.5:
            launch.pointwise("sqrt", dst, [a], code=code)
        else:
            launch.pointwise("pow_s", dst, [a], launch.scalar_args(exponent, compute), code)
        return _store(dst, target)
    _check_iter(exponent)  # Scalar ** Tensor
    base = _scalar(self)
    m = _MK.pow_scalar_meta(base, _meta(exponent))
    compute = m.dtype.np
    code = _code(compute, "pow_cuda", sources.NUMERIC)
    target = _new_like_meta(m)
    launch.pointwise("rpow_s", target._data, [_as(exponent, compute)], launch.scalar_args(base, compute), code)
    return target


def pow_tensor_tensor_cuda(self, exponent):
    return _pow(self, exponent, False)


def pow_tensor_scalar_cuda(self, exponent):
    return _pow(self, exponent, False)


def pow_scalar_cuda(self, exponent):
    return _pow(self, exponent, False)


def pow__scalar_cuda(self, exponent):
    return _pow(self, exponent, True)


def pow__tensor_cuda(self, exponent):
    return _pow(self, exponent, True)


# --- comparisons -----------------------------------------------------------------------------------
def _comparison_pair(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    metas = _MK._make_comparison(name)

    def tensor(self, other):
        _check_iter(self, other)
        m = metas[f"{name}.Tensor"](_meta(self), _meta(other))
        compute = _dt.result_type(self, other).np
        code = _code(compute, f"{name}_cuda")
        out = _new_like_meta(m)
        launch.pointwise(name, out._data, [_as(self, compute), _as(other, compute)], code=code)
        return out

    def scalar(self, other):
        _check_iter(self)
        other = _scalar(other)
        m = metas[f"{name}.Scalar"](_meta(self), other)
        compute = _dt.result_type(self, other).np
        code = _code(compute, f"{name}_cuda")
        out = _new_like_meta(m)
        launch.pointwise(f"{name}_s", out._data, [_as(self, compute)], launch.scalar_args(other, compute), code)
        return out

    def tensor_(self, other):  # in place: the bool result, cast into self on the store
        _check_iter(self, other)
        metas[f"{name}_.Tensor"](_meta(self), _meta(other))  # the checks: self has the broadcast shape
        return _store(tensor(self, other)._data, self)

    def scalar_(self, other):
        _check_iter(self)
        metas[f"{name}_.Scalar"](_meta(self), _scalar(other))
        return _store(scalar(self, other)._data, self)

    for fn, kind in ((tensor, "tensor"), (scalar, "scalar"), (tensor_, "_tensor"), (scalar_, "_scalar")):
        fn.__name__ = fn.__qualname__ = f"{name}_{kind}_cuda"
    return tensor, scalar, tensor_, scalar_


eq_tensor_cuda, eq_scalar_cuda, eq__tensor_cuda, eq__scalar_cuda = _comparison_pair("eq")
ne_tensor_cuda, ne_scalar_cuda, ne__tensor_cuda, ne__scalar_cuda = _comparison_pair("ne")
lt_tensor_cuda, lt_scalar_cuda, lt__tensor_cuda, lt__scalar_cuda = _comparison_pair("lt")
le_tensor_cuda, le_scalar_cuda, le__tensor_cuda, le__scalar_cuda = _comparison_pair("le")
gt_tensor_cuda, gt_scalar_cuda, gt__tensor_cuda, gt__scalar_cuda = _comparison_pair("gt")
ge_tensor_cuda, ge_scalar_cuda, ge__tensor_cuda, ge__scalar_cuda = _comparison_pair("ge")


# --- pointwise: unary --------------------------------------------------------------------------------
_FLOAT_UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid")


def _unary(name: str, self: Tensor, out: Tensor | None, inplace: bool) -> Tensor:
    _check_iter(self, out)
    mo = _meta(out)
    if name in _FLOAT_UNARY:
        metas = _MK._make_unary_float(name)
        functional, in_place, with_out = metas[name], metas[f"{name}_"], metas[f"{name}.out"]
        allowed = sources.FLOAT
        floating = self.dtype.is_floating_point or self.dtype.is_complex
        compute = self.dtype.np if floating else _dt.get_default_dtype().np  # ints compute in the default float
    else:
        functional, in_place, with_out = {"neg": (_MK.neg_meta, _MK.neg__meta, _MK.neg_out_meta),
                                          "abs": (_MK.abs_meta, _MK.abs__meta, _MK.abs_out_meta),
                                          "relu": (_MK.relu_meta, _MK.relu__meta, None)}[name]
        allowed = sources.NUMERIC
        compute = self.dtype.np
    if inplace:
        m = in_place(_meta(self))
    else:
        m = with_out(_meta(self), out=mo) if out is not None else functional(_meta(self))
    code = _code(compute, f"{name}_cuda", allowed)
    a = _as(self, compute)
    if inplace:
        target, dst = _target(self, m, compute)
    elif out is not None:
        _resize_out(out, mo)
        target, dst = _target(out, m, compute)
    else:
        target = _new_like_meta(m)
        dst = target._data
    launch.pointwise(name, dst, [a], code=code)
    return _store(dst, target)


def _unary_family(name: str) -> tuple[Callable[..., Any], ...]:
    def functional(self):
        return _unary(name, self, None, False)

    def inplace_(self):
        return _unary(name, self, None, True)

    def out_(self, *, out):
        return _unary(name, self, out, False)

    functional.__name__ = functional.__qualname__ = f"{name}_cuda"
    inplace_.__name__ = inplace_.__qualname__ = f"{name}__cuda"
    out_.__name__ = out_.__qualname__ = f"{name}_out_cuda"
    return functional, inplace_, out_


neg_cuda, neg__cuda, neg_out_cuda = _unary_family("neg")
abs_out_cuda = _unary_family("abs")[2]
exp_cuda, exp__cuda, exp_out_cuda = _unary_family("exp")
log_cuda, log__cuda, log_out_cuda = _unary_family("log")
sqrt_cuda, sqrt__cuda, sqrt_out_cuda = _unary_family("sqrt")
sin_cuda, sin__cuda, sin_out_cuda = _unary_family("sin")
cos_cuda, cos__cuda, cos_out_cuda = _unary_family("cos")
tanh_cuda, tanh__cuda, tanh_out_cuda = _unary_family("tanh")
sigmoid_cuda, sigmoid__cuda, sigmoid_out_cuda = _unary_family("sigmoid")
relu_cuda, relu__cuda, _ = _unary_family("relu")


# --- clamp and where -------------------------------------------------------------------------------
def _clamp(self: Tensor, lo: Any, hi: Any, inplace: bool) -> Tensor:
    _check_iter(self)
    lo = None if lo is None else _scalar(lo)
    hi = None if hi is None else _scalar(hi)
    m = (_MK.clamp__meta if inplace else _MK.clamp_meta)(_meta(self), lo, hi)
    compute = m.dtype.np
    code = _code(compute, "clamp_cuda", sources.NUMERIC)
    a = _as(self, compute)
    target, dst = _target(self, m, compute) if inplace else _fresh(m)
    flags = (lo is not None) | ((hi is not None) << 1)
    extra = (*launch.scalar_args(0 if lo is None else lo, compute),
             *launch.scalar_args(0 if hi is None else hi, compute), flags)
    launch.pointwise("clamp", dst, [a], extra, code)
    return _store(dst, target)


def clamp_cuda(self, min=None, max=None):  # noqa: A002 - the schema's names
    return _clamp(self, min, max, False)


def clamp__cuda(self, min=None, max=None):  # noqa: A002
    return _clamp(self, min, max, True)


def clamp_min_cuda(self, min):  # noqa: A002
    return _clamp(self, min, None, False)


def clamp_min__cuda(self, min):  # noqa: A002
    return _clamp(self, min, None, True)


def clamp_max_cuda(self, max):  # noqa: A002
    return _clamp(self, None, max, False)


def clamp_max__cuda(self, max):  # noqa: A002
    return _clamp(self, None, max, True)


def where_self_cuda(condition, self, other):
    _check_iter(condition, self, other)
    m = _MK.where_self_meta(_meta(condition), _meta(self), _meta(other))
    compute = m.dtype.np
    code = _code(compute, "where_cuda")
    out = _new_like_meta(m)
    cond = _as(condition, np.dtype(np.bool_))
    launch.pointwise("where", out._data, [cond, _as(self, compute), _as(other, compute)], code=code)
    return out


# --- reductions ------------------------------------------------------------------------------------
_F32 = np.dtype(np.float32)


def _sum_into(out: CudaData, src: Tensor, dims: Sequence[int], scale: float, name: str) -> None:
    """Sum (or, with ``scale``, mean) of ``src`` over ``dims`` into ``out``, accumulating as torch does."""
    dt = out.dtype
    acc = _F32 if dt == np.float16 else dt  # half sums in float
    _code(acc, f"{name}_cuda", ("f32", "f64", "i64"))
    a = _as(src, acc)
    n_red = shapes.numel([a.shape[d] for d in dims])
    target = out if acc == dt else cuda_empty(out.shape, acc)._data
    if n_red == 0:  # an empty sum is 0, an empty mean 0/0
        launch.fill(target, float("nan") if scale != 1.0 or name == "mean" else 0)
    else:
        launch.reduce("sum", target, a, dims, scale)
    if target is not out:
        launch.copy_into(out, target)


def _sum(self: Tensor, dim: Any, keepdim: bool, dtype: Any, mean: bool) -> Tensor:
    _check_iter(self)
    if mean:
        m = _MK.mean_meta(_meta(self), dtype=dtype) if dim is None else _MK.mean_dim_meta(_meta(self), dim, keepdim,
                                                                                           dtype=dtype)
    else:
        m = _MK.sum_meta(_meta(self), dtype=dtype) if dim is None else _MK.sum_dim_intlist_meta(_meta(self), dim,
                                                                                                 keepdim, dtype=dtype)
    dims = shapes.reduction_dims(dim, self.dim())
    out = _new_like_meta(m)
    n_red = shapes.numel([self.shape[d] for d in dims])
    _sum_into(out._data, self, dims, (1.0 / n_red if n_red else float("nan")) if mean else 1.0,
              "mean" if mean else "sum")
    return out




def sum_dim_intlist_cuda(self, dim, keepdim=False, *, dtype=None):
    return _sum(self, dim, keepdim, dtype, False)




def mean_dim_cuda(self, dim, keepdim=False, *, dtype=None):
    return _sum(self, dim, keepdim, dtype, True)


_BOOL = np.dtype(np.bool_)
_U8 = np.dtype(np.uint8)
_I64 = np.dtype(np.int64)


def _amax_into(out: CudaData, src: Tensor, dims: Sequence[int]) -> None:
    dt = src.dtype.np
    work = _U8 if dt == _BOOL else dt  # max of bools is max of 0/1
    _code(work, "amax_cuda", sources.NUMERIC)
    a = _as(src, work)
    target = out if work == dt else cuda_empty(out.shape, work)._data
    launch.reduce("amax", target, a, dims)
    if target is not out:
        launch.copy_into(out, target)


def amax_cuda(self, dim=[], keepdim=False):  # noqa: B006 - the schema's default, never mutated
    _check_iter(self)
    m = _MK.amax_meta(_meta(self), dim, keepdim)
    out = _new_like_meta(m)
    _amax_into(out._data, self, shapes.reduction_dims(dim, self.dim()))
    return out


def max_cuda(self):
    _check_iter(self)
    m = _MK.max_meta(_meta(self))
    out = _new_like_meta(m)
    _amax_into(out._data, self, tuple(range(self.dim())))
    return out


def max_dim_cuda(self, dim, keepdim=False):
    _check_iter(self)
    mv, mi = _MK.max_dim_meta(_meta(self), dim, keepdim)
    values, indices = _new_like_meta(mv), _new_like_meta(mi)
    _code(self.dtype.np, "max_cuda", sources.NUMERIC)
    if self.dim() == 0:
        launch.copy_into(values._data, self._data)
        launch.fill(indices._data, 0)
        return values, indices
    launch.argmax(indices._data, values._data, self._data, (shapes.wrap_dim(dim, self.dim()),))
    return values, indices


def argmax_cuda(self, dim=None, keepdim=False):
    _check_iter(self)
    m = _MK.argmax_meta(_meta(self), dim, keepdim)
    out = _new_like_meta(m)
    _code(self.dtype.np, "argmax_cuda", sources.NUMERIC)
    if self.dim() == 0:
        launch.fill(out._data, 0)
        return out
    dims = tuple(range(self.dim())) if dim is None else (shapes.wrap_dim(dim, self.dim()),)
    src = self._data
    if dim is None:  # the index into the flattened tensor: reduce every dim, keep none
        flat = cuda_empty((), _I64)
        launch.argmax(flat._data, None, src, dims)
        launch.copy_into(out._data, flat._data)
        return out
    launch.argmax(out._data, None, src, dims)
    return out


# --- matrix products ---------------------------------------------------------------------------------
def mm_cuda(self, mat2):
    _check_args("mm", ("self", self), ("mat2", mat2))
    m = _MK.mm_meta(_meta(self), _meta(mat2))
    _code(self.dtype.np, "addmm_cuda", sources.FLOAT)
    out = _new_like_meta(m)
    launch.matmul(out._data, self._data, mat2._data)
    return out


def bmm_cuda(self, mat2):
    _check_args("bmm", ("self", self), ("mat2", mat2))
    m = _MK.bmm_meta(_meta(self), _meta(mat2))
    _code(self.dtype.np, "bmm_cuda", sources.FLOAT)
    out = _new_like_meta(m)
    launch.matmul(out._data, self._data, mat2._data)
    return out


# --- softmax and losses ------------------------------------------------------------------------------
def _softmax(self: Tensor, dim: int, half_to_float: bool, log: bool) -> Tensor:
    _check_iter(self)
    dt = self.dtype.np
    if half_to_float and dt != np.float16:
        raise RuntimeError("conversion is supported for Half type only")
    m = (_MK._log_softmax_meta if log else _MK._softmax_meta)(_meta(self), dim, False)
    _code(dt, "host_softmax", sources.FLOAT)
    shape, strides, _ = _geometry(m)
    out_dt = _F32 if half_to_float else dt
    out = cuda_empty(shape, out_dt, strides)
    d = shapes.wrap_dim(dim, self.dim())
    src = self._data
    if self.dim() == 0:  # torch views a 0-dim input as (1,)
        src = CudaData(src.storage, (1,), (1,), src.dtype, src.storage_offset)
        d = 0
    work = out._data if out_dt == dt else cuda_empty(shape, dt, strides)._data
    dst = work if self.dim() else CudaData(work.storage, (1,), (1,), work.dtype, work.storage_offset)
    launch.softmax(dst, src, d, log)
    if work is not out._data:
        launch.copy_into(out._data, work)
    return out


def _softmax_cuda(self, dim, half_to_float):
    return _softmax(self, dim, half_to_float, False)


def _log_softmax_cuda(self, dim, half_to_float):
    return _softmax(self, dim, half_to_float, True)


def mse_loss_cuda(self, target, reduction=1):
    _check_iter(self, target)
    m = _MK.mse_loss_meta(_meta(self), _meta(target), reduction)
    compute = _dt.result_type(self, target).np
    code = _code(compute, "mse_cuda", sources.FLOAT)
    loss = _new_like_meta(_MK.mse_loss_meta(_meta(self), _meta(target), 0))  # the elementwise loss's layout
    launch.pointwise("sqdiff", loss._data, [_as(self, compute), _as(target, compute)], code=code)
    if reduction == 0:
        return loss
    out = _new_like_meta(m)
    dims = tuple(range(loss.dim()))
    n = loss.numel()
    _sum_into(out._data, loss, dims, (1.0 / n if n else float("nan")) if reduction == 1 else 1.0,
              "mean" if reduction == 1 else "sum")
    return out


def nll_loss_forward_cuda(self, target, weight, reduction, ignore_index):
    _check_args("nll_loss_forward", ("self", self), ("target", target), ("weight", weight))
    mo, mt = _MK.nll_loss_forward_meta(_meta(self), _meta(target), _meta(weight), reduction, ignore_index)
    dt = self.dtype.np
    _code(dt, "nll_loss_forward_reduce_cuda_kernel_2d_index", sources.FLOAT)
    if weight is not None and weight.dtype.np != dt:
        raise RuntimeError(f"expected scalar type {_NAMES[dt.name]} but found {_NAMES[weight.dtype.np.name]}")
    out, total = _new_like_meta(mo), _new_like_meta(mt)
    launch.fill(total._data, 0)
    tgt = _as(target, _I64)
    bad = launch.nll_loss(out._data, total._data, self._data, tgt, None if weight is None else weight._data,
                          reduction, ignore_index)
    if bad is not None:
        raise IndexError(f"Target {bad} is out of bounds.")
    return out, total


# --- joining, copies and fills ---------------------------------------------------------------------
def cat_cuda(tensors, dim=0):
    _check_args("cat", ("tensors", list(tensors)))
    m = _MK.cat_meta([_meta(t) for t in tensors], dim)
    out = _new_like_meta(m)
    kept = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)]
    if not kept:
        return out
    d = shapes.wrap_dim(dim, kept[0].dim())
    o = out._data
    ost = o.element_strides()
    offset = 0
    for t in kept:
        size = t.shape[d]
        shape = list(o.shape)
        shape[d] = size
        launch.copy_into(CudaData(o.storage, shape, ost, o.dtype, o.storage_offset + offset * ost[d]), t._data)
        offset += size
    return out






def copy__cuda(self, src, non_blocking=False):
    """``copy_stub`` for CUDA: copy_'s composite calls it when either side is on the device."""
    shape = shapes.infer_size(tuple(self.shape), tuple(src.shape))
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if _is_cuda(self) and _is_cuda(src):
        _code(self.dtype.np, "copy_")
        launch.copy_into(self._data, src._data)
    elif _is_cuda(self):  # host to device
        _code(self.dtype.np, "copy_")
        host = np.broadcast_to(src._cpu_data(), self._data.shape)
        if host.dtype != self.dtype.np:  # convert as the CPU backend does, on the host
            staged = ops.aten._to_copy.default(wrap(np.ascontiguousarray(src._cpu_data())), dtype=self.dtype)
            host = np.broadcast_to(staged._data, self._data.shape)
        from_numpy(host, self._data)
    else:  # device to host: self is the CPU tensor
        host = wrap(to_numpy(src._data))
        ops.aten.copy_.default(self, host)
    return self


def fill__scalar_cuda(self, value):
    value = _scalar(value)
    _MK.fill__scalar_meta(_meta(self), value)
    _code(self.dtype.np, "fill_cuda")
    launch.fill(self._data, value)
    return self


def zero__cuda(self):
    launch.fill(self._data, 0)
    return self


# --- views: new CudaData over the same storage ------------------------------------------------------
def _view_kernel(meta_fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def kernel(self, *args, **kwargs):
        m = meta_fn(_meta(self), *args, **kwargs)
        d = self._data
        return cuda_tensor(CudaData(d.storage, tuple(m.shape), m.stride(), d.dtype, m.storage_offset()))

    kernel.__name__ = kernel.__qualname__ = name
    return kernel


def _views() -> dict[str, Callable[..., Any]]:
    import inspect

    table = {}
    # the other views are CompositeExplicitAutograd (dispatchcore/native/explicit.py): as_strided
    for op, meta_fn in (("view", _MK.view_meta), ("_reshape_alias", _MK._reshape_alias_meta),
                        ("as_strided", _MK.as_strided_meta)):
        kernel = _view_kernel(meta_fn, op.replace(".", "_") + "_cuda")
        kernel.__signature__ = inspect.signature(meta_fn)  # Library.impl checks the arity against the schema
        table[op] = kernel
    return table


# --- factories (reached through BackendSelect) -------------------------------------------------------
def empty_memory_format_cuda(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    m = _MK.empty_memory_format_meta(size, dtype=dtype, memory_format=memory_format)
    _code(m.dtype.np, "empty_cuda")
    return _new_like_meta(m)


def empty_strided_cuda(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = _MK.empty_strided_meta(size, stride, dtype=dtype)
    _code(m.dtype.np, "empty_strided_cuda")
    return _new_like_meta(m)












def _upload(t: Tensor) -> Tensor:
    """A CPU tensor's values in a new CUDA tensor of the same shape, dtype and strides."""
    host = t._data
    _code(host.dtype, "copy_")
    strides = tuple(s // host.itemsize for s in host.strides)
    out = cuda_empty(host.shape, host.dtype, strides if shapes.is_non_overlapping_and_dense(host.shape, strides)
                     else None)
    from_numpy(np.asarray(host), out._data)
    return out


def arange_cuda(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.arange.default(end, dtype=dtype, layout=layout, device=_CPU))


def arange_start_cuda(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.arange.start(start, end, dtype=dtype, layout=layout, device=_CPU))


def arange_start_step_cuda(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.arange.start_step(start, end, step, dtype=dtype, layout=layout, device=_CPU))


def linspace_cuda(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.linspace.default(start, end, steps, dtype=dtype, layout=layout, device=_CPU))


def logspace_cuda(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.logspace.default(start, end, steps, base, dtype=dtype, layout=layout, device=_CPU))


def eye_cuda(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.eye.default(n, dtype=dtype, layout=layout, device=_CPU))


def eye_m_cuda(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.eye.m(n, m, dtype=dtype, layout=layout, device=_CPU))


def rand_cuda(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.rand.default(size, dtype=dtype, layout=layout, device=_CPU))


def randn_cuda(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _upload(ops.aten.randn.default(size, dtype=dtype, layout=layout, device=_CPU))


# --- backward kernels the derivative formulas call ---------------------------------------------------
def threshold_backward_grad_input_cuda(grad_output, self, threshold, *, grad_input):
    """The backward of relu (``self <= threshold ? 0 : grad``) from the device's comparison and where kernels."""
    mask = ops.aten.le.Scalar(self, threshold)
    result = ops.aten.where.self(mask, ops.aten.zeros_like.default(grad_output), grad_output)
    return ops.aten.copy_.default(grad_input, result)  # the structured composite passes grad_input's shape


def _softmax_backward_data_out_cuda(grad_output, output, dim, input_dtype, *, grad_input):
    """``output * (grad - sum(grad * output, dim))`` from the device's arithmetic and sum kernels."""
    _check_iter(grad_output, output)
    softmax_backward_check(_meta(grad_output), _meta(output), dim, input_dtype)
    a = ops.aten
    d = shapes.wrap_dim(dim, grad_output.dim())
    total = a.sum.dim_IntList(a.mul.Tensor(grad_output, output), [d] if grad_output.dim() else [], True)
    result = a.mul.Tensor(output, a.sub.Tensor(grad_output, total))
    return a.copy_.default(grad_input, result)  # the structured composite passes grad_input's shape


def mse_loss_backward_cuda(grad_output, self, target, reduction):
    """``norm * (self - target) * grad_output`` (``norm``: 2, over numel for a mean), from device kernels."""
    _check_iter(grad_output, self, target)
    a = ops.aten
    norm = 2.0 / self.numel() if reduction == 1 and self.numel() else 2.0
    return a.mul.Tensor(a.mul.Scalar(a.sub.Tensor(self, target), norm), grad_output)


def mse_loss_backward_grad_input_cuda(grad_output, self, target, reduction, *, grad_input):
    result = mse_loss_backward_cuda(grad_output, self, target, reduction)
    if tuple(grad_input.shape) != tuple(result.shape):
        ops.aten.resize_.default(grad_input, list(result.shape))
    return ops.aten.copy_.default(grad_input, result)


def tanh_backward_grad_input_cuda(grad_output, output, *, grad_input):
    """``grad * ((1 - y) * (1 + y))``, torch's CPU and CUDA order, from the device's arithmetic kernels."""
    _check_iter(grad_output, output)
    a = ops.aten
    factor = a.mul.Tensor(a.add.Scalar(a.neg.default(output), 1), a.add.Scalar(output, 1))
    return a.copy_.default(grad_input, a.mul.Tensor(grad_output, factor))


def sigmoid_backward_grad_input_cuda(grad_output, output, *, grad_input):
    """``grad * (1 - y) * y``, from the device's arithmetic kernels."""
    _check_iter(grad_output, output)
    a = ops.aten
    result = a.mul.Tensor(a.mul.Tensor(grad_output, a.add.Scalar(a.neg.default(output), 1)), output)
    return a.copy_.default(grad_input, result)


# --- the table -------------------------------------------------------------------------------------
def _table() -> tuple[tuple[str, Any], ...]:
    g = globals()
    entries: list[tuple[str, Any]] = []
    for name in ("add", "sub", "mul", "div"):
        for overload, suffix in ((".Tensor", "_tensor"), ("_.Tensor", "__tensor"), (".out", "_out")):
            entries.append((name + overload, g[f"{name}{suffix}_cuda"]))
    entries += [("pow.Tensor_Tensor", pow_tensor_tensor_cuda), ("pow.Tensor_Scalar", pow_tensor_scalar_cuda),
                ("pow.Scalar", pow_scalar_cuda), ("pow_.Scalar", pow__scalar_cuda), ("pow_.Tensor", pow__tensor_cuda)]
    for name in ("neg", *_FLOAT_UNARY):
        entries += [(name, g[f"{name}_cuda"]), (f"{name}_", g[f"{name}__cuda"]), (f"{name}.out", g[f"{name}_out_cuda"])]
    entries += [("abs.out", abs_out_cuda), ("reciprocal", reciprocal_cuda)]  # abs, abs_: CEA through abs.out
    entries += [("relu", relu_cuda), ("relu_", relu__cuda),
                ("clamp", clamp_cuda), ("clamp_", clamp__cuda), ("clamp_min", clamp_min_cuda),
                ("clamp_min_", clamp_min__cuda), ("clamp_max", clamp_max_cuda), ("clamp_max_", clamp_max__cuda),
                ("where.self", where_self_cuda)]
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        entries += [(f"{name}.Tensor", g[f"{name}_tensor_cuda"]), (f"{name}.Scalar", g[f"{name}_scalar_cuda"]),
                    (f"{name}_.Tensor", g[f"{name}__tensor_cuda"]), (f"{name}_.Scalar", g[f"{name}__scalar_cuda"])]
    entries += [
        ("sum.dim_IntList", sum_dim_intlist_cuda), ("mean.dim", mean_dim_cuda),
        ("amax", amax_cuda), ("max", max_cuda), ("max.dim", max_dim_cuda), ("argmax", argmax_cuda),
        ("mm", mm_cuda), ("bmm", bmm_cuda), ("_softmax", _softmax_cuda), ("_log_softmax", _log_softmax_cuda),
        ("mse_loss", mse_loss_cuda), ("nll_loss_forward", nll_loss_forward_cuda),
        ("cat", cat_cuda), ("fill_.Scalar", fill__scalar_cuda), ("zero_", zero__cuda),
        *_views().items(),
        ("empty.memory_format", empty_memory_format_cuda), ("empty_strided", empty_strided_cuda),
        ("arange", arange_cuda), ("arange.start", arange_start_cuda), ("arange.start_step", arange_start_step_cuda),
        ("linspace", linspace_cuda), ("logspace", logspace_cuda), ("eye", eye_cuda), ("eye.m", eye_m_cuda),
        ("rand", rand_cuda), ("randn", randn_cuda),
        ("threshold_backward.grad_input", threshold_backward_grad_input_cuda),
        ("_softmax_backward_data.out", _softmax_backward_data_out_cuda),
        ("mse_loss_backward", mse_loss_backward_cuda),
        ("mse_loss_backward.grad_input", mse_loss_backward_grad_input_cuda),
        ("tanh_backward.grad_input", tanh_backward_grad_input_cuda),
        ("sigmoid_backward.grad_input", sigmoid_backward_grad_input_cuda),
    ]
    return tuple(entries)


KERNELS: tuple[tuple[str, Any], ...] = _table()

# REGISTER_DISPATCH(copy_stub, ...): copy_ and _to_copy are composites on CUDA, as in torch; they end here
copy_stub.register("cuda", copy__cuda)
