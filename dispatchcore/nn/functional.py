"""``torch.nn.functional``'s activations and losses, as calls of ``aten`` operators.

Mirrors ``torch/nn/functional.py`` and ``torch/nn/_reduction.py``: the Python layer that turns
``reduction="mean"`` into aten's enum, warns where torch warns (an implicit softmax dim, a
target whose size differs from the input's, the legacy ``size_average``/``reduce``), and then
calls the operator through the dispatcher. Invariant: no arithmetic here that torch does in
C++; the weighted ``mse_loss`` is composed of operator calls, as torch composes it in Python.

Example:
    >>> import dispatchcore as dc
    >>> import dispatchcore.nn.functional as F
    >>> x = dc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> loss = F.mse_loss(x, dc.zeros(2, 2))
    >>> loss
    tensor(7.5000, grad_fn=<MseLossBackward0>)
    >>> F.nll_loss(F.log_softmax(x, dim=1), dc.tensor([1, 0]), reduction="sum").item() > 0
    True
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import functions as _functions
from ..ops import aten
from ..shapes import broadcast_shapes
from ..tensor import Tensor

__all__ = ["log_softmax", "mse_loss", "nll_loss", "relu", "softmax"]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    """``_Reduction.get_enum``: aten's int for a reduction name."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return 1
    enum = _REDUCTIONS.get(reduction) if isinstance(reduction, str) else None
    if enum is None:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return enum


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """``_Reduction.legacy_get_string``: the reduction the deprecated pair of flags means."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu``: ``aten::relu``, or ``aten::relu_`` with ``inplace=True``."""
    return _functions.relu_(input) if inplace else _functions.relu(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``F.softmax``: ``aten::softmax.int``; without ``dim``, torch's deprecated implicit choice."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return aten.softmax.int(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``F.log_softmax``: ``aten::log_softmax.int``; without ``dim``, the implicit choice."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return aten.log_softmax.int(input, dim, dtype)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """``F.mse_loss``: ``aten::mse_loss`` on the broadcast operands; with ``weight``, composed."""
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=2)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    shape = list(broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    expanded_input = input if list(input.shape) == shape else input.expand(shape)
    expanded_target = target if list(target.shape) == shape else target.expand(shape)
    if weight is None:
        return aten.mse_loss.default(expanded_input, expanded_target, _reduction_enum(reduction))
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = _functions.pow(expanded_input - expanded_target, 2) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _functions.sum(weighted)
    if reduction == "mean":
        return _functions.sum(weighted) / _functions.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``F.nll_loss``: ``aten::nll_loss`` with torch's reduction names.

    Inputs of more than two dimensions (``(N, C, d1, ...)``, as for segmentation) are folded to
    ``(N * d1 * ..., C)`` first, which gives ``nll_loss_nd``'s values; torch's graph there ends
    in ``NllLoss2DBackward0``, dispatchcore's in the reshape and ``NllLossBackward0``.
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    enum = _reduction_enum(reduction)
    ndim = input.dim()
    if ndim <= 2:
        return aten.nll_loss.default(input, target, weight, enum, ignore_index)
    n, c, *rest = input.shape
    if list(target.shape) != [n, *rest]:
        raise RuntimeError(f"Expected target size {[n, *rest]}, got {list(target.shape)}")
    classes_last = input.permute([0, *range(2, ndim), 1]).reshape(-1, c)
    loss = aten.nll_loss.default(classes_last, target.reshape(-1), weight, enum, ignore_index)
    return loss.reshape(n, *rest) if enum == 0 else loss
