"""CPU kernels of the nn family (``dispatchcore.native.nn``): numpy in, tensor out.

Mirrors the CPU kernels of ``LinearAlgebra.cpp`` (``addmm``), ``DilatedMaxPool{2,3}d.cpp``,
``AveragePool{2,3}d.cpp``, ``AdaptiveAveragePooling{,3d}.cpp``, ``UpSampleNearest2d.cpp``,
``UpSampleBilinear2d.cpp`` (with ``UpSample.h``'s index rules), ``Im2Col.cpp``, ``Col2Im.cpp`` and
``ConvolutionMM2d.cpp`` (``_slow_conv2d_forward``/``_slow_conv2d_backward``, the Slow2d backend torch's
CompositeExplicitAutograd convolution picks on CPU: im2col as one copy of a strided window view, then
one batched matmul; col2im as one strided add per kernel offset). Shapes and checks come from the
family's shared rules (so Meta agrees), numpy does the arithmetic; every result is a new contiguous
tensor. Invariant: a max pool picks the first maximum of each window, or its last NaN, and reports
its index in the flattened input plane.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import parse_schema
from dispatchcore.native import nn as F
from dispatchcore.native.structured import check_out_dtype, out_arguments, out_call
from dispatchcore.tensor import wrap_cpu

from . import blas
from . import kernels as _k
from .kernels import (
    _BOOL,
    _F16,
    _F32,
    _F64,
    _I64,
    _ONE,
    _TORCH_NAME,
    _U8,
    _add,
    _item,
    _matmul,
    _not_implemented,
    _np_dtype,
    _resize_out,
    _result,
)

__all__ = ["KERNELS"]

_FLOATS = (_F16, _F32, _F64)


def _require(dt: np.dtype, name: str, allowed: tuple[np.dtype, ...]) -> None:
    if dt not in allowed:
        raise _not_implemented(name, dt)


def _opmath(dt: np.dtype) -> np.dtype:
    """The dtype torch computes in: half in float."""
    return _F32 if dt == _F16 else dt


# --- addmm -----------------------------------------------------------------------------------------------
def _addmm(self: Any, mat1: Any, mat2: Any, beta: Any, alpha: Any) -> np.ndarray:
    shape = F.addmm_check(tuple(self.shape), mat1, mat2, self.dtype)
    a1, a2, s = mat1._data, mat2._data, self._data
    dt = a1.dtype
    if dt == _BOOL:
        raise _not_implemented("addmm_impl_cpu_", dt)
    beta, alpha = _item(beta), _item(alpha)
    # the kernel converts beta and alpha to its type with checked_convert; half computes in float
    # (opmath), where they are converted to float
    work = _F32 if dt == _F16 else dt
    beta_w, alpha_w = _k._checked_number(beta, work), _k._checked_number(alpha, work)
    if work is not dt:
        a1, a2, s = a1.astype(work), a2.astype(work), s.astype(work)
    with _k.quiet():  # overflow gives inf, silently, as in torch
        product = _matmul(a1, a2) if a1.size and a2.size else np.zeros(shape, work)
        if alpha != 1:
            product = product * alpha_w
        if beta == 0:  # self is ignored, nan and inf included (BLAS's beta == 0)
            return _result(np.broadcast_to(product, shape).astype(dt))
        scaled = s if beta == 1 else s * beta_w
        return _result((product + scaled).astype(dt, copy=False))


# --- baddbmm, addbmm ------------------------------------------------------------------------------------
def _factors(beta: Any, alpha: Any, work: np.dtype) -> tuple[Any, Any, Any, Any]:
    """The factors as numbers, and converted to the dtype the kernel computes in (checked)."""
    beta, alpha = _item(beta), _item(alpha)
    return beta, alpha, _k._checked_number(beta, work), _k._checked_number(alpha, work)


def _baddbmm(self: Any, batch1: Any, batch2: Any, beta: Any, alpha: Any, inplace: bool = False) -> np.ndarray:
    """``baddbmm``'s checks (structured meta, then the kernel's), then ``beta * self + alpha * bmm``.

    The result takes ``batch2``'s dtype; beta 0 ignores ``self`` (NaN included), as BLAS does.
    """
    shape = F.baddbmm_check(self, batch1, batch2)
    if inplace and shape != tuple(self.shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                           f"{list(shape)} should match")
    a1, a2 = batch1._data, batch2._data
    if a1.dtype != a2.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_NAME[a1.dtype]} but found {_TORCH_NAME[a2.dtype]}")
    dt = a2.dtype
    if dt == _BOOL:
        raise _not_implemented("baddbmm", dt)
    work = _opmath(dt)
    beta, alpha, beta_w, alpha_w = _factors(beta, alpha, work)
    with _k.quiet():  # overflow gives inf, silently, as in torch
        product = _matmul(a1.astype(work, copy=False), a2.astype(work, copy=False))
        if alpha != 1:
            product = product * alpha_w
        if beta == 0:
            return _result(product.astype(dt, copy=False))
        scaled = np.broadcast_to(self._data, shape).astype(work)
        if beta != 1:
            scaled = scaled * beta_w
        return _result((product + scaled).astype(dt, copy=False))


def baddbmm_cpu(self, batch1, batch2, *, beta=1, alpha=1):
    return wrap_cpu(_baddbmm(self, batch1, batch2, beta, alpha))


def baddbmm__cpu(self, batch1, batch2, *, beta=1, alpha=1):
    np.copyto(self._data, _baddbmm(self, batch1, batch2, beta, alpha, inplace=True))
    return self


def baddbmm_out_cpu(self, batch1, batch2, *, beta=1, alpha=1, out):
    """``baddbmm.out``: the meta's checks, out's dtype must be batch2's, then compute, resize and write."""
    shape = F.baddbmm_check(self, batch1, batch2)
    check_out_dtype("exact", batch2.dtype, out.dtype)
    r = _baddbmm(self, batch1, batch2, beta, alpha)
    np.copyto(_resize_out(out, shape, [r]), r)
    return out


def _addbmm_into(result: Any, self: Any, batch1: Any, batch2: Any, beta: Any, alpha: Any) -> Any:
    """``addbmm_out``: ``self`` expanded and ``addbmm_impl_``'s checks, then the sum into ``result``.

    ``result`` is resized quietly (``resize_as_``) and holds ``beta * self``; then one ``addmm_``
    per batch adds ``alpha * (batch1[b] @ batch2[b])``; the dtype checks are the first ``addmm_``'s.
    """
    shape = F.addbmm_check(self, batch1, batch2)
    base = np.broadcast_to(self._data, shape)
    a1, a2 = batch1._data, batch2._data
    dt = _np_dtype(result.dtype)
    if a1.shape[0]:  # the first addmm_'s checks (none runs without batches)
        if a1.dtype != a2.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_TORCH_NAME[a1.dtype]} and "
                               f"{_TORCH_NAME[a2.dtype]}")
        if dt != a2.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_TORCH_NAME[dt]} and "
                               f"{_TORCH_NAME[a2.dtype]}")
        if dt == _BOOL:
            raise _not_implemented("addmm_impl_cpu_", dt)
    work = _opmath(dt)
    beta, alpha, beta_w, alpha_w = _factors(beta, alpha, work)
    with _k.quiet():
        acc = base.astype(work) if beta != 0 else np.zeros(shape, work)
        if beta != 0 and (beta != 1 or not a1.shape[0]):
            acc = acc * beta_w
        for b in range(a1.shape[0]):
            product = _matmul(a1[b].astype(work, copy=False), a2[b].astype(work, copy=False))
            acc = acc + (product * alpha_w if alpha != 1 else product)
        values = acc.astype(dt)
    if result._data.shape != shape:
        result._data = np.empty(shape, dt)
    np.copyto(result._data, values)
    return result


def addbmm_cpu(self, batch1, batch2, *, beta=1, alpha=1):
    result = wrap_cpu(np.empty((0,), _np_dtype(self.dtype)))
    return _addbmm_into(result, self, batch1, batch2, beta, alpha)


def addbmm__cpu(self, batch1, batch2, *, beta=1, alpha=1):
    return _addbmm_into(self, self, batch1, batch2, beta, alpha)


def addbmm_out_cpu(self, batch1, batch2, *, beta=1, alpha=1, out):
    return _addbmm_into(out, self, batch1, batch2, beta, alpha)


# the multiply-adds (m * n * k) from which addmm_cpu computes linear's product transposed: below
# it the extra array and call cost more than the gemm saves
_TRANSPOSED_MIN = 1 << 16


def addmm_cpu(self, mat1, mat2, *, beta=1, alpha=1):
    a1, a2, s = mat1._data, mat2._data, self._data
    dt = a1.dtype
    # nn.Linear's call: float operands of one dtype, a bias of the result's shape or its last dim,
    # beta = alpha = 1 (``is``: not True or 1.0): addmm_check passes; _addmm's arithmetic, fewer calls
    if beta is _ONE and alpha is _ONE and (dt is _F32 or dt is _F64) and a2.dtype is dt and s.dtype is dt \
            and a1.ndim == 2 == a2.ndim and a1.shape[1] == a2.shape[0] and a1.size and a2.size \
            and (s.shape == (a2.shape[1],) or s.shape == (a1.shape[0], a2.shape[1])):
        m, n = a1.shape[0], a2.shape[1]
        if dt is _F32 and m <= 64 and n >= 2 * m and m * n * a1.shape[1] >= _TRANSPOSED_MIN \
                and a2.flags.f_contiguous and a1.flags.c_contiguous:
            # linear's ``x @ W.t()`` with a small batch: OpenBLAS's sgemm computes the transposed
            # product ``W @ x.t()`` faster (0.87x at 64x784x256, 0.54x at 8x784x256), with the same
            # sums in the same order (bit-identical on its AVX-512 kernel; its AVX2 kernel blocks the
            # two differently). The C-contiguous result is that product transposed by BLAS's
            # omatcopy (blas.py: 2.6 us at 64x256, where numpy's transposing add took 14 us), plus
            # the bias in place: the same two roundings as ``x @ W.t() + b``
            r = np.empty((m, n), dt)
            product = a2.T.dot(a1.T)
            if blas.transpose_into(product, r):
                _add(r, s, out=r)
            else:
                _add(product.T, s, out=r)
            return wrap_cpu(r)
        r = a1.dot(a2)  # the same BLAS gemm as np.matmul (mm_cpu); a new C-contiguous array
        _add(r, s, out=r)
        return wrap_cpu(r)
    return wrap_cpu(_addmm(self, mat1, mat2, beta, alpha))


def addmm__cpu(self, mat1, mat2, *, beta=1, alpha=1):
    r = _addmm(self, mat1, mat2, beta, alpha)
    if r.shape != self._data.shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                           f"{list(r.shape)} should match")
    np.copyto(self._data, r)
    return self


# --- windows ---------------------------------------------------------------------------------------------
def _window_positions(size: int, out: int, kernel: int, stride: int, pad: int,
                      dilation: int) -> tuple[np.ndarray, np.ndarray]:
    """Input positions ``[out, kernel]`` of each window along one dim, and whether each is inside."""
    pos = np.arange(out)[:, None] * stride - pad + np.arange(kernel)[None, :] * dilation
    return pos, (pos >= 0) & (pos < size)


def _gather_windows(a: np.ndarray, positions: list[np.ndarray]) -> np.ndarray:
    """``a[..., windows]``: shape ``(*lead, *out, *kernel)`` from per-dim ``[out, kernel]`` positions."""
    n = len(positions)
    index = []
    for i, pos in enumerate(positions):
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = pos.shape
        index.append(np.clip(pos, 0, a.shape[a.ndim - n + i] - 1).reshape(shape))
    return a[(Ellipsis, *index)]


def _broadcast_mask(masks: list[np.ndarray]) -> np.ndarray:
    n = len(masks)
    full = np.ones((1,) * (2 * n), bool)
    for i, m in enumerate(masks):
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = m.shape
        full = full & m.reshape(shape)
    return full


def _flat_positions(positions: list[np.ndarray], sizes: tuple[int, ...]) -> np.ndarray:
    """Each window position's index in the flattened input plane: ``(*out, *kernel)``."""
    n = len(positions)
    flat = np.zeros((1,) * (2 * n), np.int64)
    step = 1
    for i in reversed(range(n)):
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = positions[i].shape
        flat = flat + np.clip(positions[i], 0, sizes[i] - 1).reshape(shape) * step
        step *= sizes[i]
    return flat


def _scatter_planes(values: np.ndarray, index: np.ndarray, lead: tuple[int, ...], plane: int,
                    dt: np.dtype) -> np.ndarray:
    """Sum ``values`` into zeroed planes of ``plane`` elements at ``index`` (both ``(*lead, m)``)."""
    planes = int(np.prod(lead, dtype=np.int64))
    per_plane = index.shape[-1]
    flat = (np.arange(planes, dtype=np.int64)[:, None] * plane + index.reshape(planes, per_plane)).ravel()
    if dt.kind == "i":
        out = np.zeros(planes * plane, dt)
        np.add.at(out, flat, values.reshape(-1))
    else:
        out = np.bincount(flat, weights=values.reshape(-1).astype(np.float64), minlength=planes * plane).astype(dt)
    return out.reshape(*lead, plane)


# --- max pooling -----------------------------------------------------------------------------------------
def _max_pool(self: Any, n: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool) -> tuple[Any, Any]:
    a = self._data
    out_shape, k, s, p, d = F.max_pool_check(a.shape, n, kernel_size, stride, padding, dilation, ceil_mode)
    if a.dtype == _BOOL:
        raise _not_implemented(f"max_pool{n}d", a.dtype)
    sizes, out = a.shape[-n:], out_shape[-n:]
    if not any(p) and all((out[i] - 1) * s[i] + (k[i] - 1) * d[i] < sizes[i] for i in range(n)):
        return _max_pool_inside(a, n, out, k, s, d)
    windows = [_window_positions(sizes[i], out[i], k[i], s[i], p[i], d[i]) for i in range(n)]
    positions = [w[0] for w in windows]
    valid = _broadcast_mask([w[1] for w in windows])
    vals = _gather_windows(a, positions)
    flat = _flat_positions(positions, sizes)
    lead = vals.shape[: vals.ndim - 2 * n]
    kk = int(np.prod(k))
    vals = vals.reshape(*lead, *out, kk)
    valid = np.broadcast_to(valid, (*out, *k)).reshape(*out, kk)
    flat = np.broadcast_to(flat, (*out, *k)).reshape(*out, kk)
    low = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min
    masked = np.where(valid, vals, np.asarray(low, a.dtype))
    best = masked.max(axis=-1, keepdims=True) if kk else masked[..., :1]
    pick = np.argmax((masked == best) & valid, axis=-1)  # the first maximum among the inside positions
    if a.dtype.kind == "f":
        nans = np.isnan(vals) & valid
        last_nan = kk - 1 - np.argmax(nans[..., ::-1], axis=-1)
        pick = np.where(nans.any(axis=-1), last_nan, pick)
    values = np.take_along_axis(vals, pick[..., None], -1)[..., 0]
    indices = np.take_along_axis(np.broadcast_to(flat, vals.shape), pick[..., None], -1)[..., 0]
    return wrap_cpu(_result(values.astype(a.dtype))), wrap_cpu(_result(indices.astype(_I64)))


@functools.lru_cache(maxsize=64)
def _window_grid(sizes: tuple[int, ...], out: tuple[int, ...], k: tuple, s: tuple,
                 d: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Flat input-plane positions: of each kernel offset ``[K]``, and of each window's start ``[prod(out)]``."""
    n = len(sizes)
    steps = [int(np.prod(sizes[i + 1:], dtype=np.int64)) for i in range(n)]
    offsets, base = np.zeros(k, _I64), np.zeros(out, _I64)
    for i in range(n):
        shape = [1] * n
        shape[i] = k[i]
        offsets = offsets + np.arange(k[i], dtype=_I64).reshape(shape) * (d[i] * steps[i])
        shape[i] = out[i]
        base = base + np.arange(out[i], dtype=_I64).reshape(shape) * (s[i] * steps[i])
    offsets, base = offsets.reshape(-1), base.reshape(-1)
    offsets.flags.writeable = base.flags.writeable = False
    return offsets, base


def _max_pool_inside(a: np.ndarray, n: int, out: tuple[int, ...], k: tuple, s: tuple, d: tuple) -> Any:
    """``_max_pool`` when every window lies inside the input (no padding, no ceil-mode overhang).

    The windows are copied once, kernel offset first (``[K, *lead, *out]``, from a strided view:
    no gather, no mask), then one vectorised pass per offset keeps torch's rule: a later value
    replaces the running maximum when it is greater or NaN.
    """
    lead, sizes = a.shape[: a.ndim - n], a.shape[a.ndim - n:]
    st = a.strides
    view = np.lib.stride_tricks.as_strided(
        a, (*k, *lead, *out), (*(st[a.ndim - n + i] * d[i] for i in range(n)), *st[: a.ndim - n],
                               *(st[a.ndim - n + i] * s[i] for i in range(n))), writeable=False)
    kk = int(np.prod(k))
    cols = np.ascontiguousarray(view).reshape(kk, -1)
    running, pick = cols[0], np.zeros(cols.shape[1], np.intp)
    for j in range(1, kk):
        row = cols[j]
        update = row > running
        if a.dtype.kind == "f":
            update |= np.isnan(row)
        running = np.maximum(running, row)  # compares like the picked value (NaN kept; a zero's sign aside)
        pick *= ~update
        pick += update * j
    offsets, base = _window_grid(tuple(sizes), out, k, s, d)
    index = (offsets[pick].reshape(-1, base.size) + base).reshape(*lead, *out)
    best = np.take_along_axis(cols, pick[None], 0).reshape(*lead, *out)
    return wrap_cpu(_result(best)), wrap_cpu(_result(index))


def _max_pool_backward(grad_output: Any, self: Any, n: int, kernel_size: Any, stride: Any, padding: Any,
                       dilation: Any, ceil_mode: bool, indices: Any) -> Any:
    a = self._data
    out_shape = F.max_pool_check(a.shape, n, kernel_size, stride, padding, dilation, ceil_mode)[0]
    g = grad_output._data
    _check_grad_shape(g.shape, out_shape)
    _require(g.dtype, f"max_pool{n}d_backward", _FLOATS)
    lead, plane = a.shape[:-n], int(np.prod(a.shape[-n:]))
    per_plane = int(np.prod(out_shape[-n:]))
    grad = _scatter_planes(g, indices._data.reshape(*lead, per_plane), lead, plane, g.dtype)
    return wrap_cpu(_result(grad.reshape(a.shape)))


def _check_grad_shape(shape: tuple[int, ...], expected: tuple[int, ...]) -> None:
    """``check_dim_size`` of the backward kernels: the gradient has the forward output's shape."""
    if len(shape) != len(expected):
        raise RuntimeError(f"Expected grad_output to have {len(expected)} dimensions, but got {len(shape)}")
    for dim, (got, want) in enumerate(zip(shape, expected)):
        if got != want:
            raise RuntimeError(f"Expected tensor to have size {want} at dimension {dim}, but got size {got} for "
                               "argument #1 'grad_output'")


# --- average pooling -------------------------------------------------------------------------------------
def _avg_windows(sizes: tuple[int, ...], out: tuple[int, ...], k: tuple, s: tuple, p: tuple, count_include_pad: bool,
                 divisor_override: Any) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Per-dim positions, the inside mask ``(*out, *k)`` and each window's divisor ``(*out)``."""
    n = len(sizes)
    positions, masks, counts, spans = [], [], [], []
    for i in range(n):
        start = np.arange(out[i]) * s[i] - p[i]
        end = np.minimum(start + k[i], sizes[i] + p[i])
        inner = np.minimum(end, sizes[i])
        pos = start[:, None] + np.arange(k[i])[None, :]
        positions.append(pos)
        masks.append((pos >= 0) & (pos < inner[:, None]))
        counts.append(inner - np.maximum(start, 0))
        spans.append(end - start)
    divisor = np.ones(out, np.int64)
    for i in range(n):
        shape = [1] * n
        shape[i] = out[i]
        divisor = divisor * (spans[i] if count_include_pad else counts[i]).reshape(shape)
    if divisor_override is not None:
        divisor = np.full(out, int(divisor_override), np.int64)
    return positions, _broadcast_mask(masks), divisor


def _divide(total: np.ndarray, divisor: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.kind == "i":  # C++ integer division truncates toward zero
        return (np.sign(total) * (np.abs(total) // divisor)).astype(dt)
    return (total / divisor).astype(dt)


def _avg_pool_dtypes(n: int) -> tuple[np.dtype, ...]:
    return (_F16, _F32, _F64, _I64) if n == 2 else (_F32, _F64, _I64)


def _avg_pool(self: Any, n: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              count_include_pad: bool, divisor_override: Any) -> Any:
    a = self._data
    out_shape, k, s, p = F.avg_pool_check(a.shape, n, kernel_size, stride, padding, ceil_mode, divisor_override)
    _require(a.dtype, "avg_pool2d" if n == 2 else "avg_pool3d_out_frame", _avg_pool_dtypes(n))
    sizes, out = a.shape[-n:], out_shape[-n:]
    positions, valid, divisor = _avg_windows(sizes, out, k, s, p, count_include_pad, divisor_override)
    acc = _opmath(a.dtype)
    vals = _gather_windows(a, positions).astype(acc, copy=False)
    total = np.where(valid, vals, np.zeros((), acc)).sum(axis=tuple(range(-n, 0)))
    return wrap_cpu(_result(_divide(total, divisor, a.dtype).reshape(out_shape)))


def _avg_pool_backward(grad_output: Any, self: Any, n: int, kernel_size: Any, stride: Any, padding: Any,
                       ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Any:
    a, g = self._data, grad_output._data
    out_shape, k, s, p = F.avg_pool_check(a.shape, n, kernel_size, stride, padding, ceil_mode, divisor_override)
    _check_grad_shape(g.shape, out_shape)
    _require(g.dtype, "avg_pool2d_backward" if n == 2 else "avg_pool3d_backward_out_frame", _avg_pool_dtypes(n))
    sizes, out = a.shape[-n:], out_shape[-n:]
    positions, valid, divisor = _avg_windows(sizes, out, k, s, p, count_include_pad, divisor_override)
    acc = _opmath(g.dtype)
    share = _divide(g.astype(acc, copy=False), divisor, acc if g.dtype.kind == "f" else g.dtype)
    lead = a.shape[:-n]
    expand = (Ellipsis, *([None] * n))
    contributions = np.where(valid, share[expand], np.zeros((), share.dtype))  # (*lead, *out, *k)
    flat = np.broadcast_to(_flat_positions(positions, sizes), contributions.shape[-2 * n:])
    index = np.broadcast_to(flat, contributions.shape).reshape(*lead, int(np.prod(flat.shape)))
    grad = _scatter_planes(contributions, index, lead, int(np.prod(sizes)), g.dtype)
    return wrap_cpu(_result(grad.reshape(a.shape)))


# --- separable operators: adaptive average pooling, upsampling ------------------------------------------------
def _apply(a: np.ndarray, matrices: list[np.ndarray]) -> np.ndarray:
    """Apply one ``[out, in]`` matrix along each of the last ``len(matrices)`` dims."""
    n = len(matrices)
    for i, m in enumerate(matrices):
        axis = a.ndim - n + i
        a = np.moveaxis(np.tensordot(a, m, axes=([axis], [1])), -1, axis)
    return a


def _adaptive_matrix(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """The 0/1 window matrix ``[out, size]`` (start floor(o*size/out), end ceil((o+1)*size/out)) and counts."""
    o = np.arange(out)
    start = (o * size) // out
    end = -((-(o + 1) * size) // out)
    i = np.arange(size)
    m = ((i[None, :] >= start[:, None]) & (i[None, :] < end[:, None])).astype(np.float64)
    return m, end - start


def _adaptive_counts(counts: list[np.ndarray]) -> np.ndarray:
    n = len(counts)
    total = np.ones((1,) * n, np.int64)
    for i, c in enumerate(counts):
        shape = [1] * n
        shape[i] = c.shape[0]
        total = total * c.reshape(shape)
    return total


def _adaptive(self: Any, n: int, output_size: Any) -> Any:
    a = self._data
    out_shape = F.adaptive_pool_check(a.shape, n, output_size)
    _require(a.dtype, "adaptive_avg_pool2d" if n == 2 else "adaptive_avg_pool3d_cpu", _FLOATS)
    acc = _opmath(a.dtype)
    pairs = [_adaptive_matrix(a.shape[-n + i], out_shape[-n + i]) for i in range(n)]
    total = _apply(a.astype(acc, copy=False), [m.astype(acc) for m, _ in pairs])
    return wrap_cpu(_result((total / _adaptive_counts([c for _, c in pairs])).astype(a.dtype).reshape(out_shape)))


def _adaptive_backward(grad_output: Any, self: Any, n: int) -> Any:
    a, g = self._data, grad_output._data
    name = "adaptive_avg_pool2d_backward" if n == 2 else "adaptive_avg_pool3d_backward_cpu"
    _require(g.dtype, name, _FLOATS)
    if g.ndim != a.ndim or g.shape[:-n] != a.shape[:-n]:
        raise RuntimeError(f"{'adaptive_avg_pool2d_backward' if n == 2 else 'adaptive_avg_pool3d_backward'}(): "
                           f"Expected grad_output and input to have the same leading dims, but got "
                           f"{list(g.shape)} and {list(a.shape)}")
    acc = _opmath(g.dtype)
    pairs = [_adaptive_matrix(a.shape[-n + i], g.shape[-n + i]) for i in range(n)]
    share = g.astype(acc, copy=False) / _adaptive_counts([c for _, c in pairs])
    grad = _apply(share, [m.T.astype(acc) for m, _ in pairs])
    return wrap_cpu(_result(grad.astype(g.dtype).reshape(a.shape)))


def _scale(scale: Any, size: int, out: int, dt: np.dtype) -> Any:
    """``compute_scales_value``: ``1 / scale`` when one is given, else ``size / out``, in ``dt``."""
    if scale is not None and scale > 0:
        return dt.type(1.0 / scale)
    return dt.type(size) / dt.type(out)


def _nearest_matrix(size: int, out: int, scale: Any) -> np.ndarray:
    """``nearest_idx`` as a 0/1 matrix ``[out, size]`` (the index in float32, as torch computes it)."""
    o = np.arange(out)
    if out == size:
        src = o
    elif out == 2 * size:
        src = o >> 1
    else:
        s = _scale(scale, size, out, np.dtype(np.float32))
        src = np.minimum(np.floor(o.astype(np.float32) * s).astype(np.int64), size - 1)
    m = np.zeros((out, size))
    m[o, src] = 1.0
    return m


def _linear_matrix(size: int, out: int, align_corners: bool, scale: Any, acc: np.dtype) -> np.ndarray:
    """Bilinear weights along one dim (``compute_source_index_and_lambda``) as a matrix ``[out, size]``."""
    o = np.arange(out)
    m = np.zeros((out, size), acc)
    if out == size:
        m[o, o] = 1
        return m
    if align_corners:
        ratio = acc.type(size - 1) / acc.type(out - 1) if out > 1 else acc.type(0)
        real = ratio * o.astype(acc)
    else:
        ratio = _scale(scale, size, out, acc)
        real = np.maximum(ratio * (o.astype(acc) + acc.type(0.5)) - acc.type(0.5), acc.type(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), size - 1)
    lambda1 = np.minimum(np.maximum(real - i0.astype(acc), acc.type(0)), acc.type(1)).astype(acc)
    i1 = i0 + (i0 < size - 1)
    np.add.at(m, (o, i0), acc.type(1) - lambda1)
    np.add.at(m, (o, i1), lambda1)
    return m


def _upsample(a: np.ndarray, out_shape: tuple[int, ...], matrices: list[np.ndarray]) -> Any:
    acc = _opmath(a.dtype)
    r = _apply(a.astype(acc, copy=False), [m.astype(acc) for m in matrices])
    if a.dtype.kind != "f":
        r = np.clip(np.rint(r), 0, 255)
    return wrap_cpu(_result(r.astype(a.dtype).reshape(out_shape)))


def upsample_nearest2d_cpu(self, output_size, scales_h=None, scales_w=None):
    a = self._data
    out_shape = F.upsample_check(a.shape, output_size)
    _require(a.dtype, "upsample_nearest2d_channels_last", (*_FLOATS, _U8))
    (h, w), (oh, ow) = a.shape[2:], out_shape[2:]
    return _upsample(a, out_shape, [_nearest_matrix(h, oh, scales_h), _nearest_matrix(w, ow, scales_w)])


def upsample_nearest2d_backward_cpu(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    g = grad_output._data
    shape = F.upsample_backward_check(g.shape, output_size, input_size)
    _require(g.dtype, "upsample_nearest2d_backward", _FLOATS)
    (h, w), (oh, ow) = shape[2:], g.shape[2:]
    return _upsample(g, shape, [_nearest_matrix(h, oh, scales_h).T, _nearest_matrix(w, ow, scales_w).T])


def upsample_bilinear2d_cpu(self, output_size, align_corners, scales_h=None, scales_w=None):
    a = self._data
    out_shape = F.upsample_check(a.shape, output_size)
    _require(a.dtype, "upsample_bilinear2d_channels_last", _FLOATS)
    acc = _opmath(a.dtype)
    (h, w), (oh, ow) = a.shape[2:], out_shape[2:]
    return _upsample(a, out_shape, [_linear_matrix(h, oh, align_corners, scales_h, acc),
                                    _linear_matrix(w, ow, align_corners, scales_w, acc)])


def upsample_bilinear2d_backward_cpu(grad_output, output_size, input_size, align_corners, scales_h=None,
                                     scales_w=None):
    g = grad_output._data
    shape = F.upsample_backward_check(g.shape, output_size, input_size)
    _require(g.dtype, "upsample_bilinear2d_backward", _FLOATS)
    acc = _opmath(g.dtype)
    (h, w), (oh, ow) = shape[2:], g.shape[2:]
    return _upsample(g, shape, [_linear_matrix(h, oh, align_corners, scales_h, acc).T,
                                _linear_matrix(w, ow, align_corners, scales_w, acc).T])


# --- im2col, col2im ----------------------------------------------------------------------------------------
def im2col_cpu(self, kernel_size, dilation, padding, stride):
    a = self._data
    out_shape = F.im2col_check(a.shape, kernel_size, dilation, padding, stride)
    _require(a.dtype, "im2col_out_cpu", _FLOATS)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = F._grid(kernel_size, dilation, padding, stride)
    padded = np.pad(a, [(0, 0)] * (a.ndim - 2) + [(ph, ph), (pw, pw)])
    h, w = a.shape[-2:]
    bh, bw = F._blocks(h, kh, dh, ph, sh), F._blocks(w, kw, dw, pw, sw)
    cols = np.empty((*a.shape[:-2], kh, kw, bh, bw), a.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[..., i, j, :, :] = padded[..., i * dh: i * dh + sh * (bh - 1) + 1: sh,
                                           j * dw: j * dw + sw * (bw - 1) + 1: sw]
    return wrap_cpu(_result(cols.reshape(out_shape)))


def col2im_cpu(self, output_size, kernel_size, dilation, padding, stride):
    a = self._data
    out_shape = F.col2im_check(a.shape, output_size, kernel_size, dilation, padding, stride)
    _require(a.dtype, "col2im_out_cpu", _FLOATS)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = F._grid(kernel_size, dilation, padding, stride)
    h, w = out_shape[-2:]
    bh, bw = F._blocks(h, kh, dh, ph, sh), F._blocks(w, kw, dw, pw, sw)
    cols = a.reshape(*a.shape[:-2], out_shape[-3], kh, kw, bh, bw)
    padded = np.zeros((*out_shape[:-2], h + 2 * ph, w + 2 * pw), _opmath(a.dtype))
    for i in range(kh):
        for j in range(kw):
            padded[..., i * dh: i * dh + sh * (bh - 1) + 1: sh, j * dw: j * dw + sw * (bw - 1) + 1: sw] += \
                cols[..., i, j, :, :]
    return wrap_cpu(_result(padded[..., ph: ph + h, pw: pw + w].astype(a.dtype)))


# --- the Slow2d convolution (ConvolutionMM2d.cpp) ----------------------------------------------------------
def _slow_conv2d_check(x: np.ndarray, w: np.ndarray, bias: Any, kernel_size: Any, stride: Any, padding: Any,
                       grad: np.ndarray | None = None) -> tuple[int, int]:
    """``slow_conv2d_shape_check``: torch's checks, in its order; the output's (height, width)."""
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} stride_width: {sw}")
    w2 = w.reshape(w.shape[0], -1) if w.ndim == 4 else w
    if w2.size == 0 or w2.ndim not in (2, 4):
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {F._shape_text(w2.shape)}")
    if bias is not None:
        _check_dim_size(bias.shape, 1, 0, w.shape[0])
    if x.ndim != 4:
        raise RuntimeError(f"Expected 4D input tensor, but got: {F._shape_text(x.shape)}")
    h, wd = x.shape[2] + 2 * ph, x.shape[3] + 2 * pw
    if h < kh or wd < kw:
        raise RuntimeError(f"Calculated padded input size per channel: ({h} x {wd}). Kernel size: ({kh} x {kw}). "
                           "Kernel size can't be greater than actual input size")
    oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
    planes = w2.shape[1] // (kh * kw)  # torch checks against the weight viewed as [O, C*kh*kw]
    if x.shape[1] != 0:
        _check_dim_size(x.shape, 4, 1, planes)
    if grad is not None:
        for dim, size in ((1, w.shape[0]), (2, oh), (3, ow)):
            _check_dim_size(grad.shape, 4, dim, size)
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_k._TORCH_NAME[x.dtype]} but found {_k._TORCH_NAME[w.dtype]}")
    return oh, ow


def _check_dim_size(shape: tuple[int, ...], ndim: int, dim: int, size: int) -> None:
    """``check_dim_size``: a tensor of ``ndim`` dims whose ``dim`` has ``size`` elements."""
    if len(shape) != ndim or shape[dim] != size:
        got = shape[dim] if dim < len(shape) else "?"
        raise RuntimeError(f"Expected a tensor of dimension {ndim} and tensor.size[{dim}] == {size} but got: "
                           f"dimension {len(shape)} and tensor.size[{dim}] = {got}")


def _pad_crop(x: np.ndarray, top: int, bottom: int, left: int, right: int) -> np.ndarray:
    """``x`` zero-padded on each side of its last two dims (cropped where a side is negative); contiguous."""
    x = x[..., max(-top, 0): x.shape[-2] - max(-bottom, 0), max(-left, 0): x.shape[-1] - max(-right, 0)]
    top, bottom, left, right = (max(v, 0) for v in (top, bottom, left, right))
    if not (top or bottom or left or right):
        return np.ascontiguousarray(x)
    out = np.zeros((*x.shape[:-2], x.shape[-2] + top + bottom, x.shape[-1] + left + right), x.dtype)
    out[..., top: top + x.shape[-2], left: left + x.shape[-1]] = x
    return out


def _slow_columns(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, oh: int,
                  ow: int) -> np.ndarray:
    """im2col: ``[N, C*kh*kw, oh*ow]``, a window view of the padded input, copied once."""
    xp = _pad_crop(x, ph, ph, pw, pw)
    s0, s1, s2, s3 = xp.strides
    windows = np.lib.stride_tricks.as_strided(xp, (xp.shape[0], xp.shape[1], kh, kw, oh, ow),
                                              (s0, s1, s2, s3, s2 * sh, s3 * sw), writeable=False)
    return windows.reshape(x.shape[0], x.shape[1] * kh * kw, oh * ow)


def _slow_acc(dt: np.dtype) -> np.dtype:
    if dt == _BOOL:
        raise _not_implemented("slow_conv2d_cpu", dt)
    return _opmath(dt)


def slow_conv2d_forward_cpu(self, weight, kernel_size, bias, stride, padding):
    x, w = self._data, weight._data
    oh, ow = _slow_conv2d_check(x, w, None if bias is None else bias._data, kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    acc = _slow_acc(x.dtype)
    n, o = x.shape[0], w.shape[0]
    cols = _slow_columns(x.astype(acc, copy=False), kh, kw, sh, sw, ph, pw, oh, ow)
    y = np.matmul(w.reshape(o, -1).astype(acc, copy=False), cols)                # [N, O, oh*ow]
    if bias is not None:
        y += bias._data.astype(acc, copy=False)[:, None]
    return wrap_cpu(_result(y.reshape(n, o, oh, ow).astype(x.dtype, copy=False)))


def slow_conv2d_forward_out_cpu(self, weight, kernel_size, bias, stride, padding, *, output):
    r = slow_conv2d_forward_cpu(self, weight, kernel_size, bias, stride, padding)._data
    if output._data.dtype != r.dtype:
        raise RuntimeError(f"expected scalar type {_k._TORCH_NAME[r.dtype]} but found "
                           f"{_k._TORCH_NAME[output._data.dtype]}")
    np.copyto(_resize_out(output, r.shape, [r]), r)
    return output


def _slow_input_grad(g: np.ndarray, w: np.ndarray, shape: tuple[int, ...], kernel_size: Any, stride: Any,
                     padding: Any) -> np.ndarray:
    """The input gradient as a stride-1 convolution of the stride-dilated output gradient with the flipped weight.

    Input row ``y`` receives from the windows that start at ``y + pad - i`` (kernel row ``i``): in
    the output gradient dilated by the stride (one row per window start), padded by ``k - 1 - pad``
    in front, that is a plain correlation with the kernel reversed. One im2col and one matmul.
    """
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    n, o, oh, ow = g.shape
    h, wd = shape[2:]
    if sh > 1 or sw > 1:
        dilated = np.zeros((n, o, (oh - 1) * sh + 1, (ow - 1) * sw + 1), g.dtype)
        dilated[:, :, ::sh, ::sw] = g
        g = dilated
    gp = _pad_crop(g, kh - 1 - ph, h - 1 + ph - (g.shape[2] - 1), kw - 1 - pw, wd - 1 + pw - (g.shape[3] - 1))
    cols = _slow_columns(gp, kh, kw, 1, 1, 0, 0, h, wd)                          # [N, O*kh*kw, h*wd]
    flipped = w.reshape(o, -1, kh, kw)[:, :, ::-1, ::-1].transpose(1, 0, 2, 3).reshape(-1, o * kh * kw)
    return np.matmul(flipped, cols).reshape(n, flipped.shape[0], h, wd)


def slow_conv2d_backward_cpu(grad_output, self, weight, kernel_size, stride, padding, output_mask):
    x, w, g = self._data, weight._data, grad_output._data
    oh, ow = _slow_conv2d_check(x, w, None, kernel_size, stride, padding, g)
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    acc = _slow_acc(x.dtype)
    n, o = x.shape[0], w.shape[0]
    g2 = g.astype(acc, copy=False).reshape(n, o, oh * ow)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = wrap_cpu(_result(_slow_input_grad(g2.reshape(n, o, oh, ow), w.astype(acc, copy=False), x.shape,
                                                       kernel_size, stride, padding).astype(x.dtype, copy=False)))
    if output_mask[1]:
        cols = _slow_columns(x.astype(acc, copy=False), kh, kw, sh, sw, ph, pw, oh, ow)
        gw = np.matmul(g2, cols.transpose(0, 2, 1)).sum(axis=0)                 # [O, C*kh*kw]
        grad_weight = wrap_cpu(_result(gw.reshape(w.shape).astype(w.dtype, copy=False)))
    if output_mask[2]:
        grad_bias = wrap_cpu(_result(g2.sum(axis=(0, 2)).astype(g.dtype, copy=False)))
    return grad_input, grad_weight, grad_bias


# --- the table -----------------------------------------------------------------------------------------
def _pool_kernels(n: int) -> dict[str, Callable[..., Any]]:
    def max_pool(self, kernel_size, stride=(), padding=(0,) * n, dilation=(1,) * n, ceil_mode=False):
        return _max_pool(self, n, kernel_size, stride, padding, dilation, ceil_mode)

    def max_pool_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
        return _max_pool_backward(grad_output, self, n, kernel_size, stride, padding, dilation, ceil_mode, indices)

    def avg_pool(self, kernel_size, stride=(), padding=(0,) * n, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        return _avg_pool(self, n, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def avg_pool_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override):
        return _avg_pool_backward(grad_output, self, n, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                  divisor_override)

    def adaptive(self, output_size):
        return _adaptive(self, n, output_size)

    def adaptive_backward(grad_output, self):
        return _adaptive_backward(grad_output, self, n)

    return {f"max_pool{n}d_with_indices": max_pool, f"max_pool{n}d_with_indices_backward": max_pool_backward,
            f"avg_pool{n}d": avg_pool, f"avg_pool{n}d_backward": avg_pool_backward,
            f"_adaptive_avg_pool{n}d": adaptive, f"_adaptive_avg_pool{n}d_backward": adaptive_backward}


FUNCTIONAL: dict[str, Callable[..., Any]] = {
    "addmm": addmm_cpu, "addmm_": addmm__cpu, "baddbmm": baddbmm_cpu, "baddbmm_": baddbmm__cpu,
    "baddbmm.out": baddbmm_out_cpu, "addbmm": addbmm_cpu, "addbmm_": addbmm__cpu,
    "addbmm.out": addbmm_out_cpu, **_pool_kernels(2), **_pool_kernels(3),
    "upsample_nearest2d": upsample_nearest2d_cpu, "upsample_nearest2d_backward": upsample_nearest2d_backward_cpu,
    "upsample_bilinear2d": upsample_bilinear2d_cpu, "upsample_bilinear2d_backward": upsample_bilinear2d_backward_cpu,
    "im2col": im2col_cpu, "col2im": col2im_cpu,
    "_slow_conv2d_forward": slow_conv2d_forward_cpu, "_slow_conv2d_forward.output": slow_conv2d_forward_out_cpu,
    "_slow_conv2d_backward.output_mask": slow_conv2d_backward_cpu,
}


def _out_kernel(functional: Callable[..., Any], outs: tuple[str, ...]) -> Callable[..., Any]:
    """An ``out=`` kernel: the functional kernel, each out of the result's dtype, resized and written."""
    def out_cpu(*args: Any, **kwargs: Any) -> Any:
        targets = tuple(kwargs.pop(name) for name in outs)
        results = out_call("exact", functional, args, kwargs, targets)
        for r, out in zip(results, targets):
            np.copyto(_resize_out(out, r._data.shape, [r._data]), r._data)
        return targets[0] if len(targets) == 1 else targets

    return out_cpu


def _kernels() -> dict[str, Callable[..., Any]]:
    schemas = {s.partition("(")[0]: s for s in F.SCHEMAS}
    outs = {name: _out_kernel(FUNCTIONAL[of], out_arguments(parse_schema(f"aten::{schemas[name]}")))
            for name, of in F.OUTS.items()}
    return {**FUNCTIONAL, **outs}


KERNELS = _kernels()
