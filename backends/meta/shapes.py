"""Shape, stride and dimension rules shared by backends: pure functions on tuples of ints.

Mirrors the size/stride logic of ATen that runs before any data is touched: ``infer_size``
(``ExpandUtils``), ``computeStride`` and ``inferExpandGeometry`` (``TensorUtils``/``ExpandUtils``),
``maybe_wrap_dim``, reduction shapes (``ReduceOpsUtils.h``), the layout predicates of
``TensorImpl`` and TensorIterator's output-stride rule. Strides here are in **elements**, as torch
reports them; callers holding byte strides (numpy, ``MetaData``) convert. Errors carry torch's
texts, so a backend that reuses these functions fails exactly as PyTorch does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dispatchcore.shapes import (
    broadcast_shapes,
    channels_last_strides,
    compute_stride,
    contiguous_strides,
    dense_strides_like,
    expand_geometry,
    infer_dense_strides,
    infer_size,
    infer_size_dv,
    is_channels_last_contiguous,
    is_channels_last_strides,
    is_contiguous,
    is_non_overlapping_and_dense,
    numel,
    wrap_dim,
)

__all__ = [
    "broadcast_shapes",
    "channels_last_strides",
    "contiguous_strides",
    "dense_strides_like",
    "expand_geometry",
    "infer_dense_strides",
    "infer_size",
    "infer_view_shape",
    "is_channels_last_contiguous",
    "is_channels_last_strides",
    "is_contiguous",
    "is_non_overlapping_and_dense",
    "numel",
    "reduction_dims",
    "reduction_shape",
    "storage_nbytes",
    "tensor_iterator_shape",
    "tensor_iterator_strides",
    "view_strides",
    "wrap_dim",
]

Shape = tuple[int, ...]

infer_view_shape = infer_size_dv  # the meta kernels' name for it
view_strides = compute_stride




def storage_nbytes(shape: Sequence[int], strides: Sequence[int], itemsize: int, offset: int = 0) -> int:
    """Mirror ``computeStorageNbytes``: bytes a storage needs to back this geometry (0 if empty)."""
    span = 1
    for size, stride in zip(shape, strides):
        if size == 0:
            return 0
        span += stride * (size - 1)
    return itemsize * (offset + span)


# --- views ---------------------------------------------------------------------------------------
# --- reductions ------------------------------------------------------------------------------
def reduction_dims(dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Wrapped, checked reduction dims; ``None`` or ``[]`` means every dim (``make_dim_mask``).

    Example:
        >>> reduction_dims([-1, 0], 3)
        (0, 2)
        >>> reduction_dims(None, 2)
        (0, 1)
    """
    if dim is None:
        return tuple(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = [wrap_dim(d, ndim) for d in dims]
    if not wrapped:
        return tuple(range(ndim))
    seen: set[int] = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return tuple(sorted(seen))


def reduction_shape(shape: Sequence[int], dims: Iterable[int], keepdim: bool) -> Shape:
    """Mirror ``get_reduction_shape``: reduced dims become 1 (keepdim) or disappear.

    Example:
        >>> reduction_shape((2, 3, 4), (0, 2), keepdim=True)
        (1, 3, 1)
    """
    reduced = set(dims)
    if keepdim:
        return tuple(1 if d in reduced else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in reduced)


# --- TensorIterator --------------------------------------------------------------------------
def tensor_iterator_shape(shapes: Sequence[Sequence[int]]) -> tuple[Shape, bool]:
    """Mirror ``TensorIteratorBase::compute_shape``: the broadcast shape and ``all_ops_same_shape``.

    Operands are folded in order (``infer_size(shape_so_far, operand)``), so the error names the
    running shape as tensor a. Mixing 0-dim and dimensioned operands never counts as same-shape.
    """
    result: Shape = ()
    same = True
    has_scalars = has_tensors = False
    for shape in shapes:
        shape = tuple(shape)
        if shape:
            has_tensors = True
        else:
            has_scalars = True
        if has_scalars and has_tensors:
            same = False
        if not result:
            result = shape
        elif shape != result:
            same = False
            result = infer_size(result, shape)
    return result, same


Operand = tuple[Sequence[int], Sequence[int], int]  # (shape, element strides, itemsize)


def tensor_iterator_strides(shape: Sequence[int], operands: Sequence[Operand], same_shape: bool) -> Shape:
    """Strides TensorIterator gives a freshly allocated output (element strides).

    ``operands`` are the inputs as ``(shape, strides, itemsize)``, in the op's input order, as
    TensorIterator sees them *after* type promotion: on CPU an input of another dtype than the
    common one is first replaced by ``input.to(common)``, i.e. ``(shape,
    dense_strides_like(shape, strides), common_itemsize)``. A Python scalar is ``((), (), n)``.
    Mirrors ``fast_set_up`` (all inputs contiguous / channels-last / identically dense → that
    layout) and otherwise ``compute_strides`` + ``reorder_dimensions`` + ``allocate_or_resize_outputs``:
    the output follows the inputs' layout permutation, judged on byte strides with broadcast
    dimensions ignored, ties broken by size.

    Example:
        >>> tensor_iterator_strides((3, 4), [((3, 4), (1, 3), 4), ((3, 4), (1, 3), 4)], True)
        (1, 3)
        >>> tensor_iterator_strides((3, 4), [((3, 4), (1, 3), 4), ((3, 4), (4, 1), 4)], True)
        (1, 3)
    """
    shape = tuple(shape)
    ndim = len(shape)
    if same_shape and operands:
        if all(is_contiguous(s, st) for s, st, _ in operands):
            return contiguous_strides(shape)
        if all(is_channels_last_contiguous(s, st) for s, st, _ in operands):
            return channels_last_strides(shape)
        if all(is_non_overlapping_and_dense(s, st) for s, st, _ in operands):
            first = tuple(operands[-1][1])
            if all(tuple(st) == first for _, st, _ in operands):
                return first
    # compute_strides: byte strides in the broadcast shape; broadcast dimensions get 0
    op_strides = []
    for op_shape, op_st, itemsize in operands:
        offset = ndim - len(op_shape)
        sb = [0] * ndim
        for i, (size, stride) in enumerate(zip(op_shape, op_st)):
            sb[offset + i] = 0 if (size == 1 and shape[offset + i] != 1) else stride * itemsize
        op_strides.append(sb)

    def should_swap(d0: int, d1: int) -> int:
        for sb in op_strides:
            s0, s1 = sb[d0], sb[d1]
            if s0 == 0 or s1 == 0:  # a broadcast dimension has no opinion
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:  # equal strides: the smaller dimension goes first
                return 1
        return 0

    inverted = list(range(ndim - 1, -1, -1))
    perm = list(inverted)
    for i in range(1, ndim):  # insertion sort that tolerates ambiguous comparisons
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == inverted:
        return contiguous_strides(shape)
    out = [0] * ndim
    acc = 1
    for d in perm:  # perm[0] is the fastest-moving dimension
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def python_broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """``torch._prims_common._broadcast_shapes``: the shape torch's Python meta kernels broadcast to.

    Its error names the first mismatching argument and the shape gathered so far.

    Example:
        >>> python_broadcast_shapes((2, 1, 3), (5, 3))
        (2, 5, 3)
    """
    common = [1] * max((len(s) for s in shapes), default=0)
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if common[i] == 1:
                common[i] = shape[i]
            elif shape[i] != 1 and common[i] != shape[i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[i]} at {i}! Mismatching "
                                   f"argument at index {index} had torch.Size({list(shape)}); but expected shape "
                                   f"should be broadcastable to {common}")
    return tuple(common)
