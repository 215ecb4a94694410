"""Meta kernels of the embedding_bag family (``dispatchcore.native.embedding_bag``): geometry and dtype only.

Mirrors torch's Python meta kernels (``torch/_meta_registrations.py``: ``meta_embedding_bag`` on
its non-CPU branch, ``meta_embedding_bag_forward_only``, ``meta_embedding_bag_backward``,
``meta_embedding_bag_dense_backward``, ``meta_embedding_bag_per_sample_weights_backward``), with
their checks and texts. On meta tensors torch does not know the sum fast path, so ``offset2bag``
always has one entry per index and ``bag_size`` one per offset, in the indices' dtype; ``max_indices``
is [bags, dim] in max mode and empty otherwise. Invariant: no kernel reads data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore.native import embedding_bag as E
from dispatchcore.tensor import Tensor

from .kernels import meta_tensor

__all__ = ["KERNELS"]

_IMPROVE = "  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"


def _check(cond: bool) -> None:
    """``torch._check`` without a message."""
    if not cond:
        raise RuntimeError(f"Expected cond to be True, but got False.{_IMPROVE}")


def _embedding_bag_meta(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                        mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
                        include_last_offset: bool = False, padding_idx: int = -1) -> tuple[Tensor, ...]:
    bags = E.meta_checks(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    dim = weight.shape[1]
    output = meta_tensor((bags, dim), weight.dtype)
    offset2bag = meta_tensor((indices.shape[0],), indices.dtype)
    bag_size = meta_tensor(tuple(offsets.shape), indices.dtype)
    max_indices = meta_tensor((bags, dim) if mode == E.MODE_MAX else (0,), indices.dtype)
    return output, offset2bag, bag_size, max_indices


def _embedding_bag_dense_backward_meta(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                       scale_grad_by_freq, mode, per_sample_weights=None, padding_idx=-1):
    if grad.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise RuntimeError(f"Unsupported input type encountered: torch.{grad.dtype.name}")
    return meta_tensor((num_weights, grad.shape[1]), grad.dtype)


def _embedding_bag_per_sample_weights_backward_meta(grad, weight, indices, offsets, offset2bag, mode,
                                                    padding_idx=-1):
    dim = grad.shape[1]
    E.per_sample_weights_backward_mode_check(mode)
    _check(grad.dim() == 2)
    _check(indices.dim() == 1)
    _check(weight.dim() == 2)
    _check(weight.shape[1] == dim)
    return meta_tensor((indices.shape[0],), grad.dtype)


KERNELS: dict[str, Callable[..., Any]] = {
    "_embedding_bag": _embedding_bag_meta,
    "_embedding_bag_forward_only": _embedding_bag_meta,
    "_embedding_bag_backward": E._meta_embedding_bag_backward,
    "_embedding_bag_dense_backward": _embedding_bag_dense_backward_meta,
    "_embedding_bag_per_sample_weights_backward": _embedding_bag_per_sample_weights_backward_meta,
}
