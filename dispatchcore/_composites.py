"""CompositeImplicitAutograd decompositions and CompositeExplicitAutograd kernels of the core ops.

Mirrors the decompositions in ``aten/src/ATen/native/LinearAlgebra.cpp`` (``_matmul_impl``),
``TensorShape.cpp`` (``reshape``/``computeStride``), ``SoftMax.cpp``, ``TensorConversions.cpp``
(``to``, ``contiguous``) and ``LossNLL.cpp``. They call other operators through the dispatcher
only, so every backend (and, later, autograd) gets them for free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import aten as _definitions  # noqa: F401 - defines the operators used here
from .library import Library
from .ops import aten
from .tensor import Tensor, detached_alias

__all__ = ["compute_stride", "register"]


def compute_stride(old_shape: Sequence[int], old_stride: Sequence[int],
                   new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides that view ``old`` as ``new_shape`` without copying, or None (``at::detail::computeStride``).

    The one copy of this rule: ``reshape`` here and the backends' ``view`` kernels use it.

    Example:
        >>> compute_stride((2, 3), (3, 1), (3, 2))
        (2, 1)
        >>> compute_stride((2, 3), (1, 2), (6,)) is None
        True
    """
    if not old_shape:
        return (1,) * len(new_shape)
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_stride)
        strides, acc = [], 1
        for s in reversed(new_shape):
            strides.append(acc)
            acc *= max(s, 1)
        return tuple(reversed(strides))
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        # a chunk ends where the old strides stop being contiguous with each other
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1
                             and old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def _infer_size(shape: list[int] | tuple[int, ...], numel: int) -> tuple[int, ...]:
    shape = list(shape)
    infer = [i for i, s in enumerate(shape) if s == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if infer:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[infer[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def reshape(self: Tensor, shape: list[int]) -> Tensor:
    """View when the strides allow it, else copy then view (``at::native::reshape``)."""
    size = _infer_size(shape, self.numel())
    stride = compute_stride(tuple(self.shape), self.stride(), size)
    if stride is not None:
        return aten.view.default(self, list(size))
    # torch: _unsafe_view(self.clone(at::MemoryFormat::Contiguous), shape); 0 is contiguous_format
    return aten._unsafe_view.default(aten.clone.default(self, memory_format=0), list(size))


def matmul(self: Tensor, other: Tensor) -> Tensor:
    """``_matmul_impl``: pick dot, mv, mm or bmm by the operands' dimensions."""
    d1, d2 = self.dim(), other.dim()
    if d1 == 0 or d2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        if self.shape[0] != other.shape[0]:
            n1, n2 = self.shape[0], other.shape[0]
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{n1}] and src [{n2}] to have the same "
                f"number of elements, but got {n1} and {n2} elements respectively")
        return aten.sum.default(aten.mul.Tensor(self, other))
    if d1 == 2 and d2 == 1:
        return aten.squeeze.dim(aten.mm.default(self, aten.unsqueeze.default(other, -1)), -1)
    if d1 == 1 and d2 == 2:
        return aten.squeeze.dim(aten.mm.default(aten.unsqueeze.default(self, 0), other), 0)
    if d1 == 2 and d2 == 2:
        return aten.mm.default(self, other)
    if d1 >= 3 and d2 in (1, 2):
        # fold the batch dimensions of self into its rows, then one mm
        t2 = aten.unsqueeze.default(other, -1) if d2 == 1 else other
        sizes = list(self.shape)
        folded = reshape(self, [-1, sizes[-1]])
        out = aten.mm.default(folded, t2)
        out_shape = sizes[:-1] + ([] if d2 == 1 else [t2.shape[-1]])
        return reshape(out, out_shape)
    if d1 == 1:  # (n,) @ (..., n, p): a one-row matrix, then drop the row again
        return aten.squeeze.dim(matmul(aten.unsqueeze.default(self, 0), other), -2)
    # batched: broadcast the batch dimensions, then bmm on 3-D views
    n, m1 = self.shape[-2], self.shape[-1]
    m2, p = other.shape[-2], other.shape[-1]
    batch = _broadcast_shapes(tuple(self.shape[:-2]), tuple(other.shape[:-2]))
    batch_numel = 1
    for s in batch:
        batch_numel *= s
    a = reshape(aten.expand.default(self, [*batch, n, m1]), [batch_numel, n, m1])
    b = reshape(aten.expand.default(other, [*batch, m2, p]), [batch_numel, m2, p])
    return reshape(aten.bmm.default(a, b), [*batch, n, p])


def _broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    result = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {max(len(a), len(b)) - i}")
        result.append(y if x == 1 else x)
    return tuple(reversed(result))


def softmax_int(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if dtype is not None:
        self = aten._to_copy.default(self, dtype=dtype)
    return aten._softmax.default(self, dim, False)


def log_softmax_int(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if dtype is not None:
        self = aten._to_copy.default(self, dtype=dtype)
    return aten._log_softmax.default(self, dim, False)


def contiguous(self: Tensor, *, memory_format: Any = 0) -> Tensor:
    return self if self.is_contiguous() else aten.clone.default(self, memory_format=0)


def to_dtype(self: Tensor, dtype: Any, non_blocking: bool = False, copy: bool = False,
             memory_format: Any = None) -> Tensor:
    if dtype is self.dtype and not copy:
        return self
    return aten._to_copy.default(self, dtype=dtype, non_blocking=non_blocking)


def to_device(self: Tensor, device: Any, dtype: Any, non_blocking: bool = False, copy: bool = False,
              memory_format: Any = None) -> Tensor:
    from .dtypes import device as as_device

    if as_device(device) == self.device and dtype is self.dtype and not copy:
        return self
    return aten._to_copy.default(self, dtype=dtype, device=as_device(device), non_blocking=non_blocking)


def nll_loss(self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1,
             ignore_index: int = -100) -> Tensor:
    return aten.nll_loss_forward.default(self, target, weight, reduction, ignore_index)[0]


def detach(self: Tensor) -> Tensor:
    """CompositeExplicitAutograd: a new tensor over the same data and version counter, no graph."""
    return detached_alias(self)


def register(lib: Library) -> None:
    """Register the decompositions at CompositeImplicitAutograd, detach at CompositeExplicitAutograd."""
    cia = "CompositeImplicitAutograd"
    lib.impl("matmul", matmul, cia)
    lib.impl("reshape", reshape, cia)
    lib.impl("softmax.int", softmax_int, cia)
    lib.impl("log_softmax.int", log_softmax_int, cia)
    lib.impl("contiguous", contiguous, cia)
    lib.impl("to.dtype", to_dtype, cia)
    lib.impl("to.device", to_device, cia)
    lib.impl("nll_loss", nll_loss, cia)
    lib.impl("detach", detach, "CompositeExplicitAutograd")
