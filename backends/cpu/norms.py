"""CPU kernels of the norms family (``dispatchcore.native.norms``): numpy in, tensor out.

Mirrors the CPU kernels of ``layer_norm.cpp``/``group_norm.cpp`` (``LayerNormKernelImpl``,
``GroupNormKernelImpl``), ``Normalization.cpp`` (``batch_norm_cpu``, running statistics updated
in place), ``Dropout.cpp``/``Distributions.cpp`` (the mask drawn from torch's mt19937 engine of
``generator.py``, bit for bit), ``Embedding.cpp`` (dense backward),
``ReflectionPad.cpp``/``ReplicationPadding.cpp``, ``Distance.cpp`` and ``Loss.cpp``. torch's
checks and texts come from the family's shared rules, so Meta fails alike. Invariant: results
are new arrays; only ``bernoulli_`` and the running statistics write into their arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import parse_schema
from dispatchcore.native import norms as N
from dispatchcore.native.structured import check_out_dtype, out_arguments
from dispatchcore.shapes import broadcast_shapes
from dispatchcore.tensor import wrap_cpu

from . import random as _random
from .kernels import _F16, _F32, _TORCH_NAME, _new, _resize_out, _result, _rng, _suggest_memory_format, quiet

__all__ = ["KERNELS"]

_BOOL = np.dtype(bool)


def _acc(dt: np.dtype) -> np.dtype:
    return _F32 if dt == _F16 else dt


def _data(t: Any) -> np.ndarray | None:
    return None if t is None else t._data


def _dtypes(*ts: Any) -> list[Any]:
    return [None if t is None else t.dtype for t in ts]


def _layout_like(r: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``r`` (contiguous) laid out as ``empty_like(a, a.suggest_memory_format())``."""
    if a.ndim == 4 and _suggest_memory_format(a) == "channels_last":
        out = np.empty(r.shape[:1] + r.shape[2:] + r.shape[1:2], r.dtype).transpose(0, 3, 1, 2)
        out[...] = r
        return out
    return _result(r)


def _preserve(r: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``r`` laid out as ``empty_like(a)`` (preserve_format: a dense input's strides)."""
    from .kernels import _empty_like_format

    out = _empty_like_format(a, "preserve_format", "empty_like", r.dtype)
    out[...] = r
    return out


# --- layer norm, group norm ------------------------------------------------------------------------------------
def native_layer_norm_cpu(input, normalized_shape, weight, bias, eps):
    x = input._data
    axis = N.layer_norm_axis(x.shape, normalized_shape, None if weight is None else weight._data.shape,
                             None if bias is None else bias._data.shape)
    mixed = N.mixed_dtype_check(input.dtype, *_dtypes(weight, bias))
    N.floating_check("LayerNormKernelImpl", input.dtype)
    acc = _F32 if mixed else _acc(x.dtype)
    rows = x.reshape(N._prod(x.shape[:axis]), N._prod(x.shape[axis:])).astype(acc)
    with quiet():
        mean = rows.mean(1, keepdims=True)
        rstd = 1 / np.sqrt(((rows - mean) ** 2).mean(1, keepdims=True) + eps)
        y = (rows - mean) * rstd
        if weight is not None:
            y = y * weight._data.reshape(1, -1)
        if bias is not None:
            y = y + bias._data.reshape(1, -1)
    stat_shape = x.shape[:axis] + (1,) * (x.ndim - axis)
    stat_dt = acc if mixed else x.dtype
    return (wrap_cpu(_result(y.reshape(x.shape).astype(x.dtype))),
            wrap_cpu(_result(mean.reshape(stat_shape).astype(stat_dt))),
            wrap_cpu(_result(rstd.reshape(stat_shape).astype(stat_dt))))


def native_layer_norm_backward_cpu(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    x, g = input._data, grad_out._data
    axis = x.ndim - len(normalized_shape)
    m = N._prod(x.shape[:axis])
    acc = _acc(x.dtype)
    n = N._prod(x.shape[axis:])
    rows, grows = x.reshape(m, n).astype(acc), g.reshape(m, n).astype(acc)
    mu, rs = mean._data.reshape(m, 1).astype(acc), rstd._data.reshape(m, 1).astype(acc)
    xhat = (rows - mu) * rs
    gi = gw = gb = None
    with quiet():
        if output_mask[0]:
            gh = grows * weight._data.reshape(1, -1) if weight is not None else grows
            gi = rs * (gh - gh.mean(1, keepdims=True) - xhat * (gh * xhat).mean(1, keepdims=True))
            gi = wrap_cpu(_result(gi.reshape(x.shape).astype(x.dtype)))
        if output_mask[1] and weight is not None:
            gw = wrap_cpu((grows * xhat).sum(0).reshape(weight._data.shape).astype(weight._data.dtype))
        if output_mask[2] and bias is not None:
            gb = wrap_cpu(grows.sum(0).reshape(bias._data.shape).astype(bias._data.dtype))
    return gi, gw, gb


def _memory_format_check(x: np.ndarray) -> None:
    fmt = _suggest_memory_format(x)
    if fmt == "contiguous_format" and not x.flags.c_contiguous and x.size > 1:
        raise RuntimeError(f"Expected X.is_contiguous(memory_format) to be true, but got false.{N._IMPROVE}")


def native_group_norm_cpu(input, weight, bias, N_, C, HxW, group, eps):  # noqa: N803
    x = input._data
    N.group_norm_check(x.shape, None if weight is None else weight._data.shape,
                       None if bias is None else bias._data.shape, C, group)
    _memory_format_check(x)
    mixed = N.mixed_dtype_check(input.dtype, *_dtypes(weight, bias))
    N.floating_check("GroupNormKernelImpl", input.dtype)
    N.group_norm_numel_check(x.size, N_, C, HxW)
    acc = _F32 if mixed else _acc(x.dtype)
    grouped = _result(x).reshape(N_, group, C // group * HxW).astype(acc)  # explicit sizes: N_ may be 0
    with quiet():
        mean = grouped.mean(2, keepdims=True)
        rstd = 1 / np.sqrt(((grouped - mean) ** 2).mean(2, keepdims=True) + eps)
        y = ((grouped - mean) * rstd).reshape(N_, C, HxW)
        if weight is not None:
            y = y * weight._data.reshape(1, C, 1)
        if bias is not None:
            y = y + bias._data.reshape(1, C, 1)
    stat_dt = acc if mixed else x.dtype
    return (wrap_cpu(_layout_like(y.reshape(x.shape).astype(x.dtype), x)),
            wrap_cpu(mean.reshape(N_, group).astype(stat_dt)), wrap_cpu(rstd.reshape(N_, group).astype(stat_dt)))


def native_group_norm_backward_cpu(grad_out, input, mean, rstd, weight, N_, C, HxW, group, output_mask):  # noqa: N803
    x, g = _result(input._data), _result(grad_out._data)
    acc = _acc(x.dtype)
    xs = x.reshape(N_, C, -1).astype(acc)
    gs = g.reshape(N_, C, -1).astype(acc)
    mu = np.repeat(mean._data.astype(acc).reshape(N_, group, 1), C // group, axis=1)
    rs = np.repeat(rstd._data.astype(acc).reshape(N_, group, 1), C // group, axis=1)
    xhat = (xs - mu) * rs
    gi = gw = gb = None
    with quiet():
        if output_mask[0]:
            gh = gs * weight._data.reshape(1, C, 1) if weight is not None else gs
            gh_g, xhat_g = gh.reshape(N_, group, -1), xhat.reshape(N_, group, -1)
            r_g = rs.reshape(N_, group, -1)[:, :, :1]
            r = r_g * (gh_g - gh_g.mean(2, keepdims=True) - xhat_g * (gh_g * xhat_g).mean(2, keepdims=True))
            gi = wrap_cpu(_layout_like(r.reshape(x.shape).astype(x.dtype), input._data))
        if output_mask[1] and weight is not None:
            gw = wrap_cpu((gs * xhat).sum((0, 2)).astype(x.dtype))
        if output_mask[2]:
            gb = wrap_cpu(gs.sum((0, 2)).astype(x.dtype))
    return gi, gw, gb


# --- batch norm --------------------------------------------------------------------------------------------------
def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    x = input._data
    C = N.batch_norm_check(x.shape, input.dtype, training, running_mean, running_var)  # noqa: N806
    acc = _acc(x.dtype)
    dims = (0, *range(2, x.ndim))
    view = (1, C) + (1,) * (x.ndim - 2)
    xa = x.astype(acc)
    with quiet():
        if training:
            mean = xa.mean(dims)
            var = ((xa - mean.reshape(view)) ** 2).mean(dims)
            invstd = 1 / np.sqrt(var + eps)
            n = x.size // C
            if running_mean is not None:
                rm = running_mean._data
                rm[...] = (momentum * mean + (1 - momentum) * rm).astype(rm.dtype)
            if running_var is not None:
                rv = running_var._data
                rv[...] = (momentum * var * n / (n - 1) + (1 - momentum) * rv).astype(rv.dtype)
            use_mean, use_invstd = mean, invstd
            save_mean, save_invstd = mean.astype(acc), invstd.astype(acc)
        else:
            use_mean = running_mean._data.astype(acc)
            use_invstd = 1 / np.sqrt(running_var._data.astype(acc) + eps)
            save_mean = save_invstd = _new((0,), acc)
        y = (xa - use_mean.reshape(view)) * use_invstd.reshape(view)
        if weight is not None:
            y = y * weight._data.reshape(view)
        if bias is not None:
            y = y + bias._data.reshape(view)
    return wrap_cpu(_layout_like(y.astype(x.dtype), x)), wrap_cpu(save_mean), wrap_cpu(save_invstd)


def native_batch_norm_cpu(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _native_batch_norm_legit_no_stats_cpu(input, weight, bias, training, momentum, eps):
    return _batch_norm(input, weight, bias, None, None, training, momentum, eps)


def native_batch_norm_backward_cpu(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                                   eps, output_mask):
    x, g = input._data, grad_out._data
    C = x.shape[1]  # noqa: N806
    acc = _acc(x.dtype)
    dims = (0, *range(2, x.ndim))
    view = (1, C) + (1,) * (x.ndim - 2)
    with quiet():
        if train:
            mean, invstd = save_mean._data.astype(acc), save_invstd._data.astype(acc)
        else:
            mean = running_mean._data.astype(acc)
            invstd = 1 / np.sqrt(running_var._data.astype(acc) + eps)
        xa, ga = x.astype(acc), g.astype(acc)
        xhat = (xa - mean.reshape(view)) * invstd.reshape(view)
        w = np.ones(C, acc) if weight is None else weight._data.astype(acc)
        gi = gw = gb = None
        if output_mask[0]:
            if train:
                gh = ga
                r = gh - gh.mean(dims, keepdims=True) - xhat * (gh * xhat).mean(dims, keepdims=True)
                r = r * (invstd * w).reshape(view)
            else:
                r = ga * (invstd * w).reshape(view)
            gi = wrap_cpu(_layout_like(r.astype(x.dtype), x))
        if output_mask[1]:
            gw = wrap_cpu((ga * xhat).sum(dims).astype(x.dtype if weight is None else weight._data.dtype))
        if output_mask[2]:
            gb = wrap_cpu(ga.sum(dims).astype(x.dtype))
    return gi, gw, gb


# --- embedding, dropout --------------------------------------------------------------------------------------------
def embedding_dense_backward_cpu(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    N.embedding_indices_check(indices, 2, "embedding_backward")
    g = grad_output._data
    dim = g.shape[-1] if g.ndim else 1
    rows, idx = g.reshape(-1, dim), indices._data.reshape(-1).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= num_weights):
        raise IndexError("index out of range in self")
    acc = _acc(g.dtype)
    out = np.zeros((num_weights, dim), acc)
    keep = idx != padding_idx
    contrib = rows.astype(acc)
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        contrib = contrib / counts[idx].reshape(-1, 1)
    np.add.at(out, idx[keep], contrib[keep])
    return wrap_cpu(out.astype(g.dtype))


def native_dropout_cpu(input, p, train):
    """Torch's CPU ``native_dropout``.

    ``native_dropout_cpu`` (Dropout.cpp): the mask is a bool ``empty_like(input)`` filled by
    ``bernoulli_(1 - p)`` (one double uniform per element, in memory order), then ``input * mask * scale``.
    """
    x = input._data
    if x.size == 0:
        return wrap_cpu(_new(x.shape, x.dtype)), wrap_cpu(_new(x.shape, x.dtype))
    if train is None or train:
        keep = 1.0 - p
        N.bernoulli_p_check(keep)
        if x.dtype.kind not in "fc":
            raise RuntimeError(f"result type Float can't be cast to the desired output type {_TORCH_NAME[x.dtype]}")
        scale = 0.0 if keep == 0 else 1.0 / keep
        mask = _preserve(np.empty(x.shape, _BOOL), x)
        _random._fill(mask, _random.bernoulli_draws(_rng(None), np.full(x.size, keep), True))
        with quiet():
            masked = (x * mask).astype(x.dtype)  # input.mul(mask), then .mul_(scale) in the opmath type
            out = _preserve((masked.astype(_acc(x.dtype)) * _acc(x.dtype).type(scale)).astype(x.dtype), x)
        return wrap_cpu(out), wrap_cpu(mask)
    return wrap_cpu(_preserve(x, x)), wrap_cpu(_preserve(np.ones(x.shape, _BOOL), x))


def native_dropout_backward_cpu(grad_output, mask, scale):
    g = grad_output._data
    with quiet():
        return wrap_cpu(_preserve((g * (mask._data.astype(g.dtype) * scale)).astype(g.dtype), g))


def bernoulli__float_cpu(self, p=0.5, *, generator=None):
    """Fill ``self`` with 0/1 draws of probability ``p`` (``bernoulli_.float``).

    ``bernoulli_.float`` (``bernoulli_scalar_kernel_default``): per element, in memory order,
    ``bernoulli_distribution<double>(p)``: a 53-bit double uniform below ``p``. (torch on an Intel CPU with MKL
    takes ``viRngBernoulli`` seeded from one ``random()`` instead; that stream is not modelled.)
    """
    N.bernoulli_p_check(p)
    a = self._data
    if not a.size:
        return self
    if a.dtype.kind == "c":
        raise NotImplementedError(f'"bernoulli_scalar_cpu_" not implemented for \'{_TORCH_NAME[a.dtype]}\'')
    _random._fill(a, _random.bernoulli_draws(_rng(generator), np.full(a.size, float(p)), True).astype(a.dtype))
    return self


# --- padding ----------------------------------------------------------------------------------------------------
def _source_index(size: int, lo: int, hi: int, kind: str) -> np.ndarray:
    """For each output position along a padded dim, the input position it copies."""
    j = np.arange(size + lo + hi) - lo
    if kind == "replication":
        return np.clip(j, 0, size - 1)
    j = np.abs(j)
    return np.where(j >= size, 2 * (size - 1) - j, j)


def _pad_kernels(kind: str, k: int) -> dict[str, Callable[..., Any]]:
    def forward(self, padding):
        x = self._data
        shape = N.pad_output_shape(kind, k, x.shape, padding, self.dtype)
        out = x
        for i in range(k):
            axis = x.ndim - 1 - i
            out = np.take(out, _source_index(x.shape[axis], padding[2 * i], padding[2 * i + 1], kind), axis=axis)
        return wrap_cpu(_layout_like(out.reshape(shape), x))

    def backward(grad_output, self, padding):
        x, g = self._data, grad_output._data
        N.pad_backward_check(kind, k, g.shape, x.shape, padding)
        acc = _acc(g.dtype)
        result = g.astype(acc)
        for i in reversed(range(k)):
            axis = x.ndim - 1 - i
            idx = _source_index(x.shape[axis], padding[2 * i], padding[2 * i + 1], kind)
            shape = list(result.shape)
            shape[axis] = x.shape[axis]
            summed = np.zeros(shape, acc)
            np.add.at(summed, (slice(None),) * axis + (idx,), result)
            result = summed
        return wrap_cpu(_layout_like(result.astype(g.dtype), x))

    return {f"{kind}_pad{k}d": forward, f"{kind}_pad{k}d_backward": backward}


# --- distances ----------------------------------------------------------------------------------------------------
def _pair_distances(d: np.ndarray, p: float) -> np.ndarray:
    """The p-norm over the last axis of differences ``d``."""
    a = np.abs(d)
    if p == 0:
        return (a != 0).sum(-1).astype(d.dtype)
    if np.isinf(p):
        return a.max(-1) if a.shape[-1] else np.zeros(a.shape[:-1], d.dtype)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return np.sqrt((a * a).sum(-1))
    return (a ** p).sum(-1) ** (1.0 / p)


def _cdist_operands(x1, x2):
    shape = N.cdist_check(x1, x2, 2.0)
    batch = tuple(shape[:-2])
    a = np.broadcast_to(x1._data, batch + x1._data.shape[-2:])
    b = np.broadcast_to(x2._data, batch + x2._data.shape[-2:])
    return a, b, shape


def _cdist_forward_cpu(x1, x2, p, compute_mode):
    N.cdist_check(x1, x2, p, compute_mode)
    a, b, shape = _cdist_operands(x1, x2)
    with quiet():
        d = a[..., :, None, :] - b[..., None, :, :]
        return wrap_cpu(_result(_pair_distances(d, p).reshape(shape).astype(a.dtype)))


def _distance_grad(d: np.ndarray, dist: np.ndarray, g: np.ndarray, p: float) -> np.ndarray:
    """d(dist)/d(x_i) times g, per pair, for differences ``d`` (torch's subgradients: 0 at dist 0)."""
    dist, g = dist[..., None], g[..., None]
    sign = np.sign(d)
    with quiet():
        if p == 0:
            return np.zeros_like(d)
        if p == 1:
            return sign * g
        if np.isinf(p):
            return sign * g * (np.abs(d) == dist)
        if p < 2:
            r = sign * np.abs(d) ** (p - 1) * g / dist ** (p - 1)
        elif p == 2:
            r = d * g / dist
        else:
            r = d * np.abs(d) ** (p - 2) * g / dist ** (p - 1)
        return np.where(dist == 0, 0, r)


def _cdist_backward_cpu(grad, x1, x2, p, cdist):
    a, b, _ = _cdist_operands(x1, x2)
    d = a[..., :, None, :] - b[..., None, :, :]
    r = _distance_grad(d, cdist._data, grad._data, p).sum(-2)
    return wrap_cpu(_result(r.astype(a.dtype)))


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, 1)


def _pdist_forward_cpu(self, p=2.0):
    N.pdist_check(self, p)
    x = self._data
    i, j = _pairs(x.shape[0])
    with quiet():
        return wrap_cpu(_result(_pair_distances(x[i] - x[j], p).astype(x.dtype)))


def _pdist_backward_cpu(grad, self, p, pdist):
    x = self._data
    i, j = _pairs(x.shape[0])
    contrib = _distance_grad(x[i] - x[j], pdist._data, grad._data, p)
    out = np.zeros(x.shape, x.dtype)
    np.add.at(out, i, contrib)
    np.add.at(out, j, -contrib)
    return wrap_cpu(out)


# --- binary cross entropy ------------------------------------------------------------------------------------------
def _bce_operands(self, target, weight):
    x, t = self._data, target._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{_TORCH_NAME[x.dtype]}\'')
    broadcast_shapes(tuple(t.shape), tuple(x.shape))
    w = None if weight is None else np.broadcast_to(weight._data, x.shape)
    return x, np.broadcast_to(t, x.shape), w


def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == 1:
        return np.asarray(loss.mean(dtype=_acc(loss.dtype)), loss.dtype)
    if reduction == 2:
        return np.asarray(loss.sum(dtype=_acc(loss.dtype)), loss.dtype)
    return _result(loss)


def binary_cross_entropy_cpu(self, target, weight=None, reduction=1):
    x, t, w = _bce_operands(self, target, weight)
    if x.size and ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    with quiet():
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
        if w is not None:
            loss = loss * w
    return wrap_cpu(_reduce(loss.astype(x.dtype), reduction))


def binary_cross_entropy_backward_cpu(grad_output, self, target, weight=None, reduction=1):
    x, t, w = _bce_operands(self, target, weight)
    with quiet():
        r = grad_output._data * (x - t) / np.maximum((1 - x) * x, 1e-12)
        if w is not None:
            r = r * w
        if reduction == 1:
            r = r / x.size
    return wrap_cpu(_result(np.broadcast_to(r, x.shape).astype(x.dtype)))


# --- the table -----------------------------------------------------------------------------------------------------
FUNCTIONAL: dict[str, Callable[..., Any]] = {
    "native_layer_norm": native_layer_norm_cpu, "native_layer_norm_backward": native_layer_norm_backward_cpu,
    "native_group_norm": native_group_norm_cpu, "native_group_norm_backward": native_group_norm_backward_cpu,
    "native_batch_norm": native_batch_norm_cpu, "_native_batch_norm_legit": native_batch_norm_cpu,
    "_native_batch_norm_legit.no_stats": _native_batch_norm_legit_no_stats_cpu,
    "native_batch_norm_backward": native_batch_norm_backward_cpu,
    "embedding_dense_backward": embedding_dense_backward_cpu,
    "native_dropout": native_dropout_cpu, "native_dropout_backward": native_dropout_backward_cpu,
    "bernoulli_.float": bernoulli__float_cpu,
    **{name: kernel for kind in ("reflection", "replication") for k in (1, 2, 3)
       for name, kernel in _pad_kernels(kind, k).items()},
    "_cdist_forward": _cdist_forward_cpu, "_cdist_backward": _cdist_backward_cpu,
    "_pdist_forward": _pdist_forward_cpu, "_pdist_backward": _pdist_backward_cpu,
    "binary_cross_entropy": binary_cross_entropy_cpu,
    "binary_cross_entropy_backward": binary_cross_entropy_backward_cpu,
}


def _out_kernel(functional: Callable[..., Any], out_name: str) -> Callable[..., Any]:
    """An ``out=`` kernel: the functional kernel, ``out`` of the result's dtype, resized, written."""
    def out_cpu(*args: Any, **kwargs: Any) -> Any:
        out = kwargs.pop(out_name)
        r = functional(*args, **kwargs)
        check_out_dtype("exact", r.dtype, out.dtype)
        np.copyto(_resize_out(out, r._data.shape, [r._data]), r._data)
        return out

    return out_cpu


def _kernels() -> dict[str, Callable[..., Any]]:
    schemas = {s.partition("(")[0]: s for s in N.SCHEMAS}
    outs = {name: _out_kernel(FUNCTIONAL[of], out_arguments(parse_schema(f"aten::{schemas[name]}"))[0])
            for name, of in N.OUTS.items()}
    return {**FUNCTIONAL, **outs}


KERNELS = _kernels()
