"""Launch arithmetic: geometry structs, grid sizes and one launcher per kernel family.

Works on ``CudaData`` only (no Tensor, no dtype promotion: ``kernels.py`` does that), mirrors
TensorIterator's dimension coalescing (``coalesce_dimensions``) so a contiguous operand becomes a
1-d loop without index division, and packs parameters in the order of ``sources.KernelSpec``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..meta import shapes
from . import sources
from .data import CudaData, cuda_empty
from .runtime import get_runtime

__all__ = ["argmax", "coalesce", "copy_into", "fill", "matmul", "nll_loss", "pointwise", "pw_geom", "red_geom",
           "reduce", "scalar_args", "softmax"]

BLOCK = sources.BLOCK
MAX_DIMS = sources.MAX_DIMS
_MAX_BLOCKS = 1 << 16  # grid-stride loops cover the rest
_I64 = np.dtype(np.int64)


def _code(dt: np.dtype) -> str:
    code = sources.code_of(dt)
    if code is None:  # kernels.py checks dtypes first; this is the backstop
        raise NotImplementedError(f"dispatchcore's CUDA backend has no kernels for {dt}")
    return code


def _blocks(n: int) -> int:
    return max(1, min((n + BLOCK - 1) // BLOCK, _MAX_BLOCKS))


def coalesce(sizes: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dimensions and merge neighbours that are contiguous in every operand.

    Example:
        >>> coalesce((2, 3, 4), [(12, 4, 1), (0, 4, 1)])
        ([2, 12], [[12, 1], [0, 1]])
    """
    keep = [d for d, s in enumerate(sizes) if s != 1]
    out_sizes: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for d in reversed(keep):  # innermost first
        if out_sizes and all(st[d] == ost[-1] * out_sizes[-1] for st, ost in zip(strides, out_strides)):
            out_sizes[-1] *= sizes[d]
            continue
        out_sizes.append(sizes[d])
        for st, ost in zip(strides, out_strides):
            ost.append(st[d])
    out_sizes.reverse()
    for ost in out_strides:
        ost.reverse()
    return out_sizes, out_strides


def _too_many_dims(n: int) -> NotImplementedError:
    return NotImplementedError(f"dispatchcore's CUDA kernels index at most {MAX_DIMS} dimensions after merging "
                               f"contiguous ones; this operation needs {n}")


def pw_geom(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> bytes:
    """The ``PwGeom`` struct: coalesced shape, operand strides (operand 0 is the output)."""
    sizes, sts = coalesce(shape, strides)
    n = len(sizes)
    if n > MAX_DIMS:
        raise _too_many_dims(n)
    g = np.zeros(2 + MAX_DIMS + 4 * MAX_DIMS, _I64)
    g[0] = n
    g[1] = shapes.numel(shape)
    g[2:2 + n] = sizes
    for k, st in enumerate(sts):
        base = 2 + MAX_DIMS + k * MAX_DIMS
        g[base:base + n] = st
    return g.tobytes()


def _broadcast_strides(data: CudaData, shape: Sequence[int]) -> list[int]:
    """``data``'s element strides seen in the broadcast ``shape`` (0 on broadcast dimensions)."""
    lead = len(shape) - data.ndim
    out = [0] * len(shape)
    for i, (size, stride) in enumerate(zip(data.shape, data.element_strides())):
        out[lead + i] = 0 if size == 1 and shape[lead + i] != 1 else stride
    return out


def scalar_args(value: Any, dt: np.dtype) -> tuple[float, int]:
    """A Scalar as the kernels take it: (double, long long); integral types read the integer."""
    if dt.kind == "f":
        return float(value), 0
    v = int(value)  # bool -> 0/1; a float for an integral dtype truncates, as static_cast does
    v = (v + (1 << 63)) % (1 << 64) - (1 << 63)  # wrap into int64 like a C conversion
    return 0.0, v


def pointwise(op: str, out: CudaData, inputs: Sequence[CudaData], extra: Sequence[Any] = (),
              code: str | None = None) -> None:
    """Launch pointwise ``op`` of dtype ``code`` (default: the first input's) writing ``out``."""
    shape = out.shape
    if out.size == 0:
        return
    code = code or _code(inputs[0].dtype if inputs else out.dtype)
    strides = [list(out.element_strides())] + [_broadcast_strides(x, shape) for x in inputs]
    args = [pw_geom(shape, strides), out.ptr, *(x.ptr for x in inputs), *extra]
    get_runtime().launch("pointwise", op, code, (_blocks(out.size),), args)


def copy_into(dst: CudaData, src: CudaData) -> None:
    """``dst.copy_(src)`` on the device: broadcast, cast to dst's dtype, any strides."""
    if dst.size == 0:
        return
    if (dst.dtype == src.dtype and dst.shape == src.shape
            and shapes.is_contiguous(dst.shape, dst.element_strides())
            and shapes.is_contiguous(src.shape, src.element_strides())):
        get_runtime().dtod(dst.ptr, src.ptr, dst.size * dst.itemsize)
        return
    pointwise(f"cast_{_code(src.dtype)}", dst, [src], code=_code(dst.dtype))


def fill(dst: CudaData, value: Any) -> None:
    pointwise("fill", dst, [], scalar_args(value, dst.dtype), code=_code(dst.dtype))


# --- reductions ------------------------------------------------------------------------------------
def red_geom(kept: Sequence[int], kin: Sequence[int], kout: Sequence[int], red: Sequence[int],
             rin: Sequence[int], rout: Sequence[int] | None = None) -> bytes:
    """The ``RedGeom`` struct: kept dims (in/out strides) and reduced dims (in/out strides), coalesced."""
    ks, (ki, ko) = coalesce(kept, [kin, kout])
    rout = [0] * len(red) if rout is None else rout
    rs, (ri, ro) = coalesce(red, [rin, rout])
    if len(ks) > MAX_DIMS or len(rs) > MAX_DIMS:
        raise _too_many_dims(max(len(ks), len(rs)))
    g = np.zeros(4 + 6 * MAX_DIMS, _I64)
    g[0], g[1], g[2], g[3] = len(ks), len(rs), shapes.numel(kept), shapes.numel(red)
    for k, values in enumerate((ks, ki, ko, rs, ri, ro)):
        base = 4 + k * MAX_DIMS
        g[base:base + len(values)] = values
    return g.tobytes()


def _split(src: CudaData, out: CudaData, dims: Sequence[int]) -> tuple[list[int], list[int], list[int], list[int],
                                                                         list[int]]:
    """Kept sizes, kept in/out strides, reduced sizes and in strides of a reduction over ``dims``."""
    sst = src.element_strides()
    ost = out.element_strides()
    keepdim = out.ndim == src.ndim
    kept = [d for d in range(src.ndim) if d not in dims]
    kout = [ost[d] for d in kept] if keepdim else list(ost)
    return ([src.shape[d] for d in kept], [sst[d] for d in kept], kout, [src.shape[d] for d in dims],
            [sst[d] for d in dims])


def reduce(op: str, out: CudaData, src: CudaData, dims: Sequence[int], scale: float = 1.0) -> None:
    """``sum``/``amax`` of ``src`` over ``dims`` into the fresh contiguous ``out`` (same dtype).

    A long reduction with few outputs runs in two launches: chunks into a workspace, then the
    workspace (``scale`` applies on the last launch only).
    """
    code = _code(src.dtype)
    ks, kin, kout, rs, rin = _split(src, out, dims)
    n_out, n_red = shapes.numel(ks), shapes.numel(rs)
    if n_out == 0:
        return
    rt = get_runtime()
    chunks = 1
    if n_red > 16384 and n_out < 512:
        chunks = min(65535, max(1, min(math.ceil(n_red / 4096), 2048 // n_out)))
    if chunks == 1:
        geom = red_geom(ks, kin, kout, rs, rin)
        rt.launch("reduce", op, code, (n_out, 1), [geom, out.ptr, src.ptr, max(n_red, 1), float(scale)])
        return
    chunk = math.ceil(n_red / chunks)
    work = cuda_empty((n_out, chunks), src.dtype)._data
    geom = red_geom(ks, kin, [s * chunks for s in shapes.contiguous_strides(ks)], rs, rin)
    rt.launch("reduce", op, code, (n_out, chunks), [geom, work.ptr, src.ptr, chunk, 1.0])
    geom = red_geom([n_out], [chunks], [1], [chunks], [1])
    rt.launch("reduce", op, code, (n_out, 1), [geom, out.ptr, work.ptr, chunks, float(scale)])


def argmax(out_idx: CudaData, out_val: CudaData | None, src: CudaData, dims: Sequence[int]) -> None:
    """Index (linear over ``dims``, row-major) and optionally value of the first maximum."""
    ks, kin, kout, rs, rin = _split(src, out_idx, dims)
    n_out = shapes.numel(ks)
    if n_out == 0:
        return
    geom = red_geom(ks, kin, kout, rs, rin)
    get_runtime().launch("reduce", "argmax", _code(src.dtype), (n_out,),
                         [geom, out_idx.ptr, 0 if out_val is None else out_val.ptr, src.ptr])


def softmax(out: CudaData, src: CudaData, dim: int, log: bool) -> None:
    """(log_)softmax of ``src`` along ``dim`` into ``out`` (same shape and dtype)."""
    if src.size == 0:
        return
    sst, ost = src.element_strides(), out.element_strides()
    kept = [d for d in range(src.ndim) if d != dim]
    geom = red_geom([src.shape[d] for d in kept], [sst[d] for d in kept], [ost[d] for d in kept],
                    [src.shape[dim]], [sst[dim]], [ost[dim]])
    n_rows = shapes.numel([src.shape[d] for d in kept])
    get_runtime().launch("softmax", "softmax", _code(src.dtype), (n_rows,), [geom, out.ptr, src.ptr, int(log)])


# --- matrix products and losses ------------------------------------------------------------------
def matmul(c: CudaData, a: CudaData, b: CudaData) -> None:
    """``c = a @ b`` for 2-d (mm) or 3-d (bmm) operands of one floating dtype, any strides."""
    if c.size == 0:
        return
    sa, sb, sc = a.element_strides(), b.element_strides(), c.element_strides()
    if a.ndim == 2:
        batch, (m, k), n = 1, a.shape, b.shape[1]
        sa, sb, sc = (0, *sa), (0, *sb), (0, *sc)
    else:
        batch, m, k = a.shape
        n = b.shape[2]
    rt, code, size = get_runtime(), _code(a.dtype), a.itemsize
    rows = 65535 * 64  # grid.y is at most 65535 tiles of 64 rows: taller products go in slices
    for r0 in range(0, m, rows):
        mr = min(rows, m - r0)
        grid = ((n + 63) // 64, (mr + 63) // 64, min(batch, 65535))
        args = [c.ptr + r0 * sc[1] * size, a.ptr + r0 * sa[1] * size, b.ptr, mr, n, k, batch, *sa, *sb, *sc]
        rt.launch("matmul", "matmul", code, grid, args)


_NO_BAD_TARGET = -(1 << 63)


def nll_loss(out: CudaData, total_weight: CudaData, src: CudaData, target: CudaData, weight: CudaData | None,
             reduction: int, ignore_index: int) -> int | None:
    """``nll_loss_forward`` into ``out``/``total_weight``; returns an out-of-range target, if any."""
    rt = get_runtime()
    batched = src.ndim == 2
    n = src.shape[0] if batched else 1
    classes = src.shape[-1]
    sst = src.element_strides()
    bad = cuda_empty((1,), _I64)._data
    rt.htod(bad.ptr, np.array([_NO_BAD_TARGET], _I64))
    per_sample = reduction == 0 and batched
    args = [out.ptr, total_weight.ptr, src.ptr, target.ptr, 0 if weight is None else weight.ptr, bad.ptr,
            n, classes, sst[0] if batched else 0, sst[-1], target.element_strides()[0] if target.ndim else 0,
            weight.element_strides()[0] if weight is not None else 0,
            out.element_strides()[0] if out.ndim else 0,
            reduction if per_sample or reduction != 0 else 2,  # an unbatched "none" is its one loss: a sum
            ignore_index]
    rt.launch("loss", "nll_loss", _code(src.dtype), (_blocks(n) if per_sample else 1,), args)
    found = np.empty(1, _I64)
    rt.dtoh(found, bad.ptr)
    return None if found[0] == _NO_BAD_TARGET else int(found[0])
