"""CPU kernels of the embedding_bag family (``dispatchcore.native.embedding_bag``): numpy in, tensor out.

Mirrors the CPU kernels of ``aten/src/ATen/native/EmbeddingBag.cpp``: ``_embedding_bag_cpu_impl``
(the fused sum of float and half weights, which walks the offsets and leaves ``offset2bag`` empty;
the general sum and mean, which walk ``offset2bag`` and skip ``padding_idx``; the max, which keeps
the first maximum per feature), ``_embedding_bag_dense_backward_cpu`` and
``_embedding_bag_per_sample_weights_backward_cpu``. Sums accumulate in torch's order (index order
per bag; half in float), so results equal torch's bit for bit; torch's checks and texts come from
the family's shared rules. Invariant: results are new arrays; no kernel writes into its arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore.native import embedding_bag as E
from dispatchcore.tensor import wrap_cpu

from .kernels import _F16, _F32, _F64, _new

__all__ = ["KERNELS"]


def _wrap(a: np.ndarray) -> Any:
    """A new contiguous result (numpy gives empty arrays zero strides; torch gives them contiguous ones)."""
    return wrap_cpu(np.ascontiguousarray(a) if a.size else _new(a.shape, a.dtype))


def _acc(dt: np.dtype) -> np.dtype:
    return _F32 if dt == _F16 else dt


def _index_arrays(indices: Any, offsets: Any) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    """Indices and offsets promoted to one dtype (``promoteIndicesAndOffsets``), as tensors and flat arrays.

    The kernel reads ``indices.size(0)`` values from the start of the (contiguous) indices.
    """
    common = E.index_dtype(indices, offsets)
    i_arr = np.ascontiguousarray(indices._data).astype(common.np, copy=False)
    o_arr = np.ascontiguousarray(offsets._data).astype(common.np, copy=False)
    n = i_arr.shape[0] if i_arr.ndim else 1
    return wrap_cpu(i_arr), wrap_cpu(o_arr), i_arr.reshape(-1)[:n], o_arr.reshape(-1)


def _offset2bag(offs: np.ndarray, n: int, dtype: np.dtype) -> np.ndarray:
    """``make_offset2bag``: a mark at each bag start, the first lowered by one, summed up."""
    marks = np.zeros(n + 1, np.int64)
    np.add.at(marks, offs.astype(np.int64), 1)
    marks[0] -= 1
    return np.cumsum(marks)[:n].astype(dtype)


def _range_error(idx: int) -> RuntimeError:
    return RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {idx}")


def _check_range(idx: np.ndarray, vocab: int, fast: bool) -> None:
    """The first index outside ``[0, vocab)``, with the text of the path that meets it."""
    bad = np.flatnonzero((idx < 0) | (idx >= vocab))
    if bad.size:
        i = int(bad[0])
        if fast:
            raise RuntimeError(f"Index {i} of input takes value {int(idx[i])} which is not in the valid range "
                               f"[0, {vocab})")
        raise _range_error(int(idx[i]))


def _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
                        requires_grad):
    """``_embedding_bag_cpu_impl``: the four outputs."""
    indices_t, offsets_t, idx, offs = _index_arrays(indices, offsets)
    first = int(offs[0]) if offsets_t.shape[0] > 0 else None
    last = int(offs[offsets_t.shape[0] - 1]) if offsets_t.shape[0] > 0 else None
    E.check_arguments(weight, indices_t, offsets_t, mode, per_sample_weights, include_last_offset, first, last)
    w = weight._data
    ity = idx.dtype
    n, vocab, dim = idx.shape[0], w.shape[0], w.shape[1]
    bags = E.num_bags(offsets_t.shape[0], include_last_offset)
    fast = E.fast_path_sum(weight, per_sample_weights, padding_idx)
    if mode != E.MODE_SUM or not fast:
        bag_offs = offs[:-1] if include_last_offset else offs
        o2b = _offset2bag(bag_offs, n, ity)
    else:
        o2b = np.zeros(0, ity)
    if requires_grad or mode != E.MODE_SUM:
        bag_size = np.zeros(bags, ity)
        if bags > 1:
            bag_size[:-1] = offs[1:bags] - offs[:bags - 1]
        if bags > 0:
            bag_size[-1] = n - offs[bags - 1]
    else:
        bag_size = np.zeros(offsets_t.shape, ity)
    if mode == E.MODE_MAX:
        out, max_indices = _max(w, idx, o2b, bags, bag_size, padding_idx)
        return tuple(_wrap(a) for a in (out, o2b, bag_size, max_indices))
    psw = None if per_sample_weights is None else per_sample_weights._data
    if fast:
        _check_range(idx, vocab, True)
        ends = offs if include_last_offset else np.append(offs, n)
        bag_of = np.full(n, -1, np.int64)
        lengths = np.diff(ends[:bags + 1].astype(np.int64))
        if (lengths >= 0).all():
            bag_of[int(ends[0]):int(ends[bags])] = np.repeat(np.arange(bags), lengths)
        else:  # offsets going back: each bag its own range, the later one winning
            for b in range(bags):
                bag_of[int(ends[b]):int(ends[b + 1])] = b
        keep = bag_of >= 0
        out = _fast_sum(w, idx, bag_of, keep, psw, bags, dim)
    else:
        _check_range(idx, vocab, False)
        keep = idx != padding_idx
        np.subtract.at(bag_size, o2b[~keep].astype(np.int64), 1)
        acc = _acc(w.dtype)
        out = np.zeros((bags, dim), acc)
        rows = w[idx[keep]].astype(acc)
        if psw is not None:
            rows = rows * psw[keep].astype(acc)[:, None]
        np.add.at(out, o2b[keep].astype(np.int64), rows)
        out = out.astype(w.dtype)
    if mode == E.MODE_MEAN:
        with np.errstate(all="ignore"):
            out = (out / np.maximum(bag_size, 1).astype(w.dtype)[:, None]).astype(w.dtype)
    else:
        bag_size = np.zeros_like(bag_size)
    return _wrap(out), _wrap(o2b), _wrap(bag_size), _wrap(bag_size.copy())


def _rounds(bag_of: np.ndarray, members: np.ndarray) -> list[np.ndarray]:
    """``members`` (positions in the indices) grouped by their rank in their bag.

    Round k holds the k-th member of every bag long enough, so a loop over the rounds updates all
    bags at once and still visits each bag's members in index order, as torch's loop does.
    """
    if members.size == 0:
        return []
    b = bag_of[members]
    order = np.argsort(b, kind="stable")
    sorted_b = b[order]
    starts = np.flatnonzero(np.r_[True, sorted_b[1:] != sorted_b[:-1]])
    rank = np.empty(members.size, np.int64)
    rank[order] = np.arange(members.size) - np.repeat(starts, np.diff(np.r_[starts, sorted_b.size]))
    counts = np.bincount(rank)
    return np.split(members[np.argsort(rank, kind="stable")], np.cumsum(counts)[:-1])


def _fast_sum(w: np.ndarray, idx: np.ndarray, bag_of: np.ndarray, keep: np.ndarray, psw: np.ndarray | None,
              bags: int, dim: int) -> np.ndarray:
    """The fused sum (fbgemm): float accumulators, index order per bag; weighted rows fused (one rounding)."""
    out = np.zeros((bags, dim), _F32)
    if psw is None:
        np.add.at(out, bag_of[keep], w[idx[keep]].astype(_F32))
    else:
        for members in _rounds(bag_of, np.flatnonzero(keep)):
            b = bag_of[members]
            scale = psw[members].astype(_F32).astype(_F64)[:, None]
            out[b] = (out[b].astype(_F64) + scale * w[idx[members]].astype(_F64)).astype(_F32)
    return out.astype(w.dtype)


def _max(w: np.ndarray, idx: np.ndarray, o2b: np.ndarray, bags: int, bag_size: np.ndarray,
         padding_idx: int) -> tuple[np.ndarray, np.ndarray]:
    """``embedding_bag_cpu_max_out``: per bag and feature the first maximum (NaN only when first) and its row."""
    _check_range(idx, w.shape[0], False)
    bag_of = o2b.astype(np.int64)
    padded = idx == padding_idx
    np.subtract.at(bag_size, bag_of[padded], 1)
    out = np.zeros((bags, w.shape[1]), w.dtype)
    arg = np.zeros((bags, w.shape[1]), idx.dtype)
    empty = np.ones(bags, bool)
    with np.errstate(invalid="ignore"):
        for members in _rounds(bag_of, np.flatnonzero(~padded)):
            b, words = bag_of[members], idx[members]
            rows = w[words]
            take = empty[b][:, None] | (rows > out[b])
            out[b] = np.where(take, rows, out[b])
            arg[b] = np.where(take, words[:, None], arg[b])
            empty[b] = False
    return out, arg


def _embedding_bag_cpu(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                       per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
                               True)


def _embedding_bag_forward_only_cpu(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                                    per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
                               False)


# --- backward ------------------------------------------------------------------------------------------------------
def _embedding_bag_dense_backward_cpu(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                      scale_grad_by_freq, mode, per_sample_weights=None, padding_idx=-1):
    """``_embedding_bag_dense_backward_cpu``: the weight gradient.

    Max routes each feature to its arg-max row; sum and mean walk the sorted indices, scaling by
    per-sample weight, frequency and bag size.
    """
    E.dense_backward_grad_check(grad)
    g = np.ascontiguousarray(grad._data)
    dim = g.shape[1]
    out = np.zeros((num_weights, dim), g.dtype)
    if mode == E.MODE_MAX:
        nonempty = np.flatnonzero(bag_size._data != 0)
        rows = maximum_indices._data[nonempty].astype(np.int64)
        cols = np.broadcast_to(np.arange(dim), rows.shape)
        np.add.at(out, (rows, cols), g[nonempty])
        return _wrap(out)
    idx = indices._data.reshape(-1).astype(np.int64)
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    source = offset2bag._data.reshape(-1).astype(np.int64)[order]
    scale = np.ones(idx.shape[0], np.float64)
    if per_sample_weights is not None:
        scale = per_sample_weights._data.astype(np.float64)[order]
    if scale_grad_by_freq and idx.size:
        counts = np.bincount(idx, minlength=num_weights)
        # torch divides by the count of sorted_idx[group number], not of the group's own index
        group = np.cumsum(np.r_[True, sorted_idx[1:] != sorted_idx[:-1]]) - 1
        scale = scale / counts[sorted_idx[group]]
    if mode == E.MODE_MEAN:
        sizes = bag_size._data.astype(np.int64)[source]
        scale = np.where(sizes != 0, scale / np.where(sizes != 0, sizes, 1), scale)
    keep = sorted_idx != padding_idx
    contrib = scale.astype(g.dtype)[keep, None] * g[source[keep]]
    np.add.at(out, sorted_idx[keep], contrib)
    return _wrap(out)


def _embedding_bag_per_sample_weights_backward_cpu(grad, weight, indices, offsets, offset2bag, mode,
                                                   padding_idx=-1):
    """``_embedding_bag_per_sample_weights_backward_cpu``: per sample, the dot of its bag's gradient and its row."""
    E.per_sample_weights_backward_mode_check(mode)
    indices_t, offsets_t, idx, offs = _index_arrays(indices, offsets)
    g, w = grad._data, weight._data
    n = idx.shape[0]
    o2b = offset2bag._data.reshape(-1)
    if n != 0 and o2b.size == 0:
        o2b = _offset2bag(offs, n, idx.dtype)
    acc = _acc(g.dtype)
    out = np.zeros(n, g.dtype)
    keep = idx != padding_idx
    if keep.any():
        dots = (g[o2b[keep].astype(np.int64)].astype(acc) * w[idx[keep]].astype(acc)).sum(1)
        out[keep] = dots.astype(g.dtype)
    return _wrap(out)


KERNELS: dict[str, Callable[..., Any]] = {
    "_embedding_bag": _embedding_bag_cpu,
    "_embedding_bag_forward_only": _embedding_bag_forward_only_cpu,
    "_embedding_bag_backward": E._embedding_bag_backward,
    "_embedding_bag_dense_backward": _embedding_bag_dense_backward_cpu,
    "_embedding_bag_per_sample_weights_backward": _embedding_bag_per_sample_weights_backward_cpu,
}
