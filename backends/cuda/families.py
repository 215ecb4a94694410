"""CUDA kernels of family operators: ``dot``/``vdot``, ``xlogy``, ``logit``, ``index_add``, ``put_`` and masks.

As in ``kernels.py``, each kernel checks devices, runs the operator's Meta kernel on stand-ins
(torch's errors, the result's geometry), casts inputs to the compute dtype and launches CUDA C:
``dot``/``vdot`` are one ``matmul`` launch of a 1 x n row by an n x 1 column (floating only, as
cuBLAS's dot); ``xlogy``, ``logit`` and ``logit_backward`` are pointwise functors
(``kernels/pointwise.cu``), as are ``bitwise_and`` and ``masked_fill_`` (a ``where``), which xlogy's
derivative masks with. ``index_add`` and ``put_`` write slice by slice, in index order, with
the device's ``add_``/``copy_`` on views (the index is read on the host), so duplicates accumulate
as on CPU. ``mv`` and the Scalar forms of ``xlogy`` are CompositeExplicitAutograd: they need none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import dtypes as _dt
from dispatchcore import ops
from dispatchcore.native import indexing as _ix
from dispatchcore.native import pointwise as _pw
from dispatchcore.shapes import wrap_dim
from dispatchcore.tensor import Tensor

from ..meta import indexing as _meta_indexing
from ..meta import linalg as _meta_linalg
from ..meta import pointwise as _meta_pointwise
from ..meta import special as _meta_special
from . import launch, sources
from .data import CudaData, to_numpy
from .kernels import _as, _check_args, _check_iter, _code, _meta, _new_like_meta, _resize_out, _store, _target

__all__ = ["KERNELS"]

_A = ops.aten


def _destination(m: Tensor, compute: np.dtype, self: Tensor, out: Tensor | None, mo: Tensor | None,
                 inplace: bool) -> tuple[Tensor, CudaData]:
    """(tensor to return, data to compute into): a new result, ``self`` in place, or the resized ``out``."""
    if inplace:
        return _target(self, m, compute)
    if out is not None:
        assert mo is not None  # out's meta stand-in, resized by the Meta kernel
        _resize_out(out, mo)
        return _target(out, m, compute)
    target = _new_like_meta(m)
    return target, target._data


# --- dot, vdot ---------------------------------------------------------------------------------------
def _view(data: CudaData, shape: tuple[int, ...], strides: tuple[int, ...]) -> CudaData:
    return CudaData(data.storage, shape, strides, data.dtype, data.storage_offset)


def _dot(name: str, self: Tensor, other: Tensor, other_name: str) -> Tensor:
    _check_args(name, ("self", self), (other_name, other))
    m = _meta_linalg.dot_meta(_meta(self), _meta(other))
    _code(self.dtype.np, "dot", sources.FLOAT)
    result = _new_like_meta(m)
    n = self.shape[0]
    a, b = self._data, other._data
    row = _view(a, (1, n), (0, a.element_strides()[0]))  # self as a 1 x n matrix
    column = _view(b, (n, 1), (b.element_strides()[0], 0))
    launch.matmul(_view(result._data, (1, 1), (0, 0)), row, column)
    return result


def dot_cuda(self, tensor):
    return _dot("dot", self, tensor, "tensor")


def vdot_cuda(self, other):
    return _dot("vdot", self, other, "other")  # the conjugate of a real tensor is the tensor


# --- xlogy, logit, logit_backward -------------------------------------------------------------------
def _xlogy(self: Tensor, other: Tensor, out: Tensor | None, inplace: bool) -> Tensor:
    _check_iter(self, other, out)
    kernels, mo = _meta_special.KERNELS, _meta(out)
    if inplace:
        m = kernels["xlogy_.Tensor"](_meta(self), _meta(other))
    elif out is not None:
        m = kernels["xlogy.OutTensor"](_meta(self), _meta(other), out=mo)
    else:
        m = kernels["xlogy.Tensor"](_meta(self), _meta(other))
    compute = _pw.binary_result_dtype(_pw.FLOAT, _dt.result_type(self, other), _dt.get_default_dtype()).np
    code = _code(compute, "xlogy_cuda", sources.FLOAT)
    a, b = _as(self, compute), _as(other, compute)
    target, dst = _destination(m, compute, self, out, mo, inplace)
    launch.pointwise("xlogy", dst, [a, b], code=code)
    return _store(dst, target)


def _logit(self: Tensor, eps: float | None, out: Tensor | None, inplace: bool) -> Tensor:
    _check_iter(self, out)
    kernels, mo = _meta_special.KERNELS, _meta(out)
    if inplace:
        m = kernels["logit_"](_meta(self), eps)
    elif out is not None:
        m = kernels["logit.out"](_meta(self), eps, out=mo)
    else:
        m = kernels["logit"](_meta(self), eps)
    compute = _pw.unary_result_dtype(_pw.FLOAT, self.dtype, _dt.get_default_dtype()).np
    code = _code(compute, "logit_cuda", sources.FLOAT)
    a = _as(self, compute)
    target, dst = _destination(m, compute, self, out, mo, inplace)
    launch.pointwise("logit", dst, [a], launch.scalar_args(-1.0 if eps is None else eps, compute), code)
    return _store(dst, target)


def _logit_backward(grad_output: Tensor, self: Tensor, eps: float | None, grad_input: Tensor | None) -> Tensor:
    _check_iter(grad_output, self, grad_input)
    kernels, mo = _meta_special.KERNELS, _meta(grad_input)
    if grad_input is not None:
        m = kernels["logit_backward.grad_input"](_meta(grad_output), _meta(self), eps, grad_input=mo)
    else:
        m = kernels["logit_backward"](_meta(grad_output), _meta(self), eps)
    compute = _dt.result_type(grad_output, self).np
    code = _code(compute, "logit_backward_cuda", sources.FLOAT)
    a, b = _as(grad_output, compute), _as(self, compute)
    target, dst = _destination(m, compute, grad_output, grad_input, mo, False)
    launch.pointwise("logit_backward", dst, [a, b], launch.scalar_args(-1.0 if eps is None else eps, compute), code)
    return _store(dst, target)


def xlogy_tensor_cuda(self, other):
    return _xlogy(self, other, None, False)


def xlogy__tensor_cuda(self, other):
    return _xlogy(self, other, None, True)


def xlogy_out_tensor_cuda(self, other, *, out):
    return _xlogy(self, other, out, False)


def logit_cuda(self, eps=None):
    return _logit(self, eps, None, False)


def logit__cuda(self, eps=None):
    return _logit(self, eps, None, True)


def logit_out_cuda(self, eps=None, *, out):
    return _logit(self, eps, out, False)


def logit_backward_cuda(grad_output, self, eps=None):
    return _logit_backward(grad_output, self, eps, None)


def logit_backward_grad_input_cuda(grad_output, self, eps=None, *, grad_input):
    return _logit_backward(grad_output, self, eps, grad_input)


# --- bitwise_and, masked_fill_: the operators xlogy's derivative masks with ----------------------------
def bitwise_and_tensor_out_cuda(self, other, *, out):
    """The structured kernel: ``bitwise_and.Tensor`` and ``bitwise_and_.Tensor`` come from it (structured.py)."""
    _check_iter(self, other, out)
    mo = _meta(out)
    m = _meta_pointwise.KERNELS["bitwise_and.Tensor_out"](_meta(self), _meta(other), out=mo)
    compute = _dt.result_type(self, other).np
    code = _code(compute, "bitwise_and_cuda", ("b8",) + sources.INTEGRAL)
    a, b = _as(self, compute), _as(other, compute)
    target, dst = _destination(m, compute, self, out, mo, False)
    launch.pointwise("bitand", dst, [a, b], code=code)
    return _store(dst, target)


def _masked_fill_(self: Tensor, mask: Tensor, value: Any, meta_name: str) -> Tensor:
    """``where(mask, value, self)`` written into ``self`` (each element reads only itself)."""
    _check_args("masked_fill_", ("self", self), ("mask", mask))
    _meta_indexing.KERNELS[meta_name](_meta(self), _meta(mask), _meta(value))
    dt = self.dtype.np
    code = _code(dt, "masked_fill_")
    filled = _new_like_meta(_meta(self))
    launch.fill(filled._data, value.item() if isinstance(value, Tensor) else value)
    launch.pointwise("where", self._data, [_as(mask, np.dtype(np.bool_)), filled._data, self._data], code=code)
    return self


def masked_fill__scalar_cuda(self, mask, value):
    return _masked_fill_(self, mask, value, "masked_fill_.Scalar")


def masked_fill__tensor_cuda(self, mask, value):
    return _masked_fill_(self, mask, value, "masked_fill_.Tensor")


# --- index_add, put_ ------------------------------------------------------------------------------------
def _host_index(index: Tensor) -> np.ndarray:
    data = index._data
    host = to_numpy(data) if isinstance(data, CudaData) else np.asarray(index._cpu_data())
    return host.reshape(-1).astype(np.int64, copy=False)


def _kernel_alpha(alpha: Any, dtype: Any) -> Any:
    """``alpha.to<scalar_t>()``: truncated for integers, a bool for bool (no float-alpha check, as in torch)."""
    value = alpha.item() if isinstance(alpha, Tensor) else alpha
    if dtype.is_floating_point:
        return float(value)
    return bool(value) if dtype is _dt.bool_ else int(value)


def _index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any, out: Tensor | None,
               inplace: bool) -> Tensor:
    _check_args("index_add", ("self", self), ("index", index), ("source", source), ("out", out))
    kernels, mo = _meta_indexing.KERNELS, _meta(out)
    if inplace:
        m = kernels["index_add_"](_meta(self), dim, _meta(index), _meta(source))
    elif out is not None:
        m = kernels["index_add.out"](_meta(self), dim, _meta(index), _meta(source), out=mo)
    else:
        m = kernels["index_add"](_meta(self), dim, _meta(index), _meta(source))
    _code(self.dtype.np, "index_add_cuda_")
    if inplace:
        target = self
    else:
        if out is not None:
            _resize_out(out, mo)
            target = out
        else:
            target = _new_like_meta(m)
        if target._data is not self._data:
            launch.copy_into(target._data, self._data)
    d = wrap_dim(dim, self.dim())
    positions = _host_index(index)
    if target.dim() > 1 and (positions.size == 0 or target.numel() == 0):
        return target
    size = target.shape[d] if target.dim() else 1
    bad = (positions < 0) | (positions >= size)
    if bad.any():
        raise _ix.index_add_out_of_range(int(positions[int(np.argmax(bad))]), d, target.dim(), size)
    value = _kernel_alpha(alpha, target.dtype)
    for i, j in enumerate(positions.tolist()):  # in index order: duplicates add up one after the other
        dst = _A.select.int(target, d, j) if target.dim() else target
        src = _A.select.int(source, d, i) if source.dim() else source
        _A.add_.Tensor(dst, src, alpha=value)
    return target


def index_add_cuda(self, dim, index, source, *, alpha=1):
    return _index_add(self, dim, index, source, alpha, None, False)


def index_add__cuda(self, dim, index, source, *, alpha=1):
    return _index_add(self, dim, index, source, alpha, None, True)


def index_add_out_cuda(self, dim, index, source, *, alpha=1, out):
    return _index_add(self, dim, index, source, alpha, out, False)


def put__cuda(self, index, source, accumulate=False):
    _check_args("put_", ("self", self), ("index", index), ("source", source))
    _meta_indexing.KERNELS["put_"](_meta(self), _meta(index), _meta(source), accumulate)
    _code(self.dtype.np, "put_cuda")
    positions = _host_index(index)
    if positions.size == 0:
        return self
    n = self.numel()
    bad = (positions < -n) | (positions >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(positions[int(np.argmax(bad))])} on a tensor "
                         f"of {n} elements.")
    positions = np.where(positions < 0, positions + n, positions)
    strides, base = self.stride(), self.storage_offset()
    flat_source = _A.reshape.default(source, [-1])
    for k, p in enumerate(positions.tolist()):  # row-major position -> the element's storage offset
        offset = base + sum(int(i) * s for i, s in zip(np.unravel_index(p, tuple(self.shape)), strides))
        element = _A.as_strided.default(self, [], [], offset)
        value = _A.select.int(flat_source, 0, k)
        if accumulate:
            _A.add_.Tensor(element, value)
        else:
            _A.copy_.default(element, value)
    return self


KERNELS: dict[str, Callable[..., Any]] = {
    "dot": dot_cuda, "vdot": vdot_cuda,
    "xlogy.Tensor": xlogy_tensor_cuda, "xlogy_.Tensor": xlogy__tensor_cuda, "xlogy.OutTensor": xlogy_out_tensor_cuda,
    "logit": logit_cuda, "logit_": logit__cuda, "logit.out": logit_out_cuda,
    "logit_backward": logit_backward_cuda, "logit_backward.grad_input": logit_backward_grad_input_cuda,
    "index_add": index_add_cuda, "index_add_": index_add__cuda, "index_add.out": index_add_out_cuda,
    "put_": put__cuda,
    "bitwise_and.Tensor_out": bitwise_and_tensor_out_cuda,
    "masked_fill_.Scalar": masked_fill__scalar_cuda, "masked_fill_.Tensor": masked_fill__tensor_cuda,
}
