"""Shape arithmetic shared by the composites and every backend: broadcasting, view sizes and strides.

Mirrors ``ATen/ExpandUtils.h`` (``infer_size``), ``ATen/InferSize.h`` (``infer_size_dv``) and
``ATen/TensorUtils.cpp`` (``computeStride``), with PyTorch's error texts. Pure functions on
tuples of ints (strides in elements); one copy of each rule, so backends cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["broadcast_shapes", "check_storage_nbytes", "compute_stride", "infer_size", "infer_size_dv"]

Shape = tuple[int, ...]


def infer_size(a: Sequence[int], b: Sequence[int]) -> Shape:
    """Mirror ``infer_size``: the broadcast of two shapes, with torch's error text.

    Example:
        >>> infer_size((3, 1), (4,))
        (3, 4)
    """
    ndim = max(len(a), len(b))
    out = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        dim_a, dim_b = len(a) - 1 - offset, len(b) - 1 - offset
        size_a = a[dim_a] if dim_a >= 0 else 1
        size_b = b[dim_b] if dim_b >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                f"at non-singleton dimension {i}")
        out[i] = size_b if size_a == 1 else size_a  # 1s map to the other size (even 0)
    return tuple(out)


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """The broadcast of any number of shapes, folded left to right as TensorIterator does.

    Example:
        >>> broadcast_shapes((2, 1), (3,), ())
        (2, 3)
    """
    result: Shape = ()
    for shape in shapes:
        result = infer_size(result, shape)
    return result


def infer_size_dv(shape: Sequence[int], total: int) -> Shape:
    """Mirror ``infer_size_dv``: resolve one ``-1`` in a view/reshape shape for ``total`` elements.

    Example:
        >>> infer_size_dv([2, -1], 6)
        (2, 3)
    """
    shape = list(shape)
    known = 1
    infer_dim = None
    for i, s in enumerate(shape):
        if s == -1:
            if infer_dim is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer_dim = i
        elif s >= 0:
            known *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
    if total == known or (infer_dim is not None and known > 0 and total % known == 0):
        if infer_dim is not None:
            if known == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {shape} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous")
            shape[infer_dim] = total // known
        return tuple(shape)
    raise RuntimeError(f"shape '{shape}' is invalid for input of size {total}")


def compute_stride(old_shape: Sequence[int], old_stride: Sequence[int],
                   new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides that view ``old`` as ``new_shape`` without copying, or None (``at::detail::computeStride``).

    The one copy of this rule: ``reshape`` and every backend's ``view`` kernel use it.

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


def check_storage_nbytes(sizes: Sequence[int], itemsize: int) -> None:
    """Mirror ``computeStorageNbytesContiguous``'s overflow check: the bytes must fit in int64.

    Example:
        >>> check_storage_nbytes([2**62], 4)
        Traceback (most recent call last):
        ...
        RuntimeError: Storage size calculation overflowed with sizes=[4611686018427387904]
    """
    nbytes = itemsize
    for s in sizes:
        nbytes *= s
    if nbytes >= 2**63 and 0 not in sizes:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes=[{', '.join(map(str, sizes))}]")
