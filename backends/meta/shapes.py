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

from dispatchcore.shapes import broadcast_shapes, compute_stride, infer_size, infer_size_dv

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


def numel(shape: Iterable[int]) -> int:
    """Number of elements of a shape (``c10::multiply_integers``)."""
    n = 1
    for s in shape:
        n *= s
    return n


def wrap_dim(dim: int, ndim: int, wrap_scalar: bool = True) -> int:
    """Mirror ``maybe_wrap_dim``: a possibly negative ``dim`` as an index in ``[0, ndim)``.

    A 0-dim tensor accepts ``-1`` and ``0`` (``wrap_scalar``), as torch does.

    Example:
        >>> wrap_dim(-1, 3)
        2
    """
    if ndim <= 0:
        if not wrap_scalar:
            raise IndexError(
                f"dimension specified as {dim} but tensor has no dimensions")
        ndim = 1
    lo, hi = -ndim, ndim - 1
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Row-major strides; a size-0 dimension counts as 1 (``empty_tensor_restride``).

    Example:
        >>> contiguous_strides((2, 0, 3))
        (3, 3, 1)
    """
    strides = [0] * len(shape)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def channels_last_strides(shape: Sequence[int]) -> Shape:
    """NHWC strides of a 4-d shape (``get_channels_last_strides_2d``); sizes used as they are."""
    if len(shape) != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    n, c, h, w = shape
    s1 = 1
    s3 = c
    s2 = s3 * w
    s0 = s2 * h
    return (s0, s1, s2, s3)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Mirror ``compute_contiguous``: size-1 dimensions may have any stride; empty is contiguous."""
    if numel(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_channels_last_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Mirror ``compute_channels_last_contiguous_2d`` (4-d tensors only)."""
    if len(shape) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_channels_last_strides(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Mirror ``is_channels_last_strides_2d`` (4-d) and ``_3d`` (5-d): ``suggest_memory_format``'s test."""
    if len(shape) == 4:
        order: tuple[int, ...] = (1, 3, 2, 0)
    elif len(shape) == 5:
        order = (1, 4, 3, 2, 0)
    else:
        return False
    if strides[1] == 0:
        return False
    minimum = 0
    for d in order:
        if shape[d] == 0 or strides[d] < minimum:
            return False
        if d == 0 and minimum == strides[1]:  # N111 and sliced N11W stay NCHW
            return False
        minimum = strides[d]
        if shape[d] > 1:
            minimum *= shape[d]
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Mirror TensorImpl's ``is_non_overlapping_and_dense``: a permutation of a dense layout.

    As in ``refresh_contiguous``, anything contiguous (empty tensors included) or channels-last
    contiguous counts, before the stride sort of ``compute_non_overlapping_and_dense``.
    """
    if is_contiguous(shape, strides) or is_channels_last_contiguous(shape, strides):
        return True
    ndim = len(shape)
    if ndim == 1:
        return shape[0] < 2 or strides[0] == 1
    # size-0/1 dimensions sort last; the rest by stride
    perm = sorted(range(ndim), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2 else 0))
    required = 1
    for d in perm:
        if shape[d] < 2:
            return True
        if strides[d] != required:
            return False
        required *= shape[d]
    return True


def infer_dense_strides(shape: Sequence[int], strides: Sequence[int]) -> Shape:
    """Mirror ``infer_dense_strides``: dense strides keeping the layout order of ``strides``.

    Example:
        >>> infer_dense_strides((4, 3), (6, 2))
        (3, 1)
        >>> infer_dense_strides((3, 4), (1, 6))
        (1, 3)
    """
    ndim = len(shape)
    if ndim == 0:
        return ()
    if ndim == 1:
        return (1,)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:  # ambiguous: 0-stride dims keep their place, as in TensorIterator
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * ndim
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def dense_strides_like(shape: Sequence[int], strides: Sequence[int]) -> Shape:
    """Strides of ``empty_like(t)`` with ``preserve_format``: t's own if dense, else inferred."""
    if is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    return infer_dense_strides(shape, strides)


def storage_nbytes(shape: Sequence[int], strides: Sequence[int], itemsize: int, offset: int = 0) -> int:
    """Mirror ``computeStorageNbytes``: bytes a storage needs to back this geometry (0 if empty)."""
    span = 1
    for size, stride in zip(shape, strides):
        if size == 0:
            return 0
        span += stride * (size - 1)
    return itemsize * (offset + span)


# --- views ---------------------------------------------------------------------------------------
def expand_geometry(shape: Sequence[int], strides: Sequence[int],
                    sizes: Sequence[int]) -> tuple[Shape, Shape]:
    """Mirror ``inferExpandGeometry``: sizes/strides of ``expand(sizes)``; broadcast dims get 0.

    The caller checks ``len(sizes) >= len(shape)`` first (its message names the tensor type).

    Example:
        >>> expand_geometry((3, 1), (1, 1), (2, 3, 4))
        ((2, 3, 4), (0, 1, 0))
    """
    ndim, tensor_dim = len(sizes), len(shape)
    out_shape = [0] * ndim
    out_strides = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        dim = tensor_dim - 1 - (ndim - 1 - i)
        size = shape[dim] if dim >= 0 else 1
        if dim >= 0:
            stride = strides[dim]
        elif i + 1 < ndim:
            stride = out_shape[i + 1] * out_strides[i + 1]
        else:
            stride = 0  # a 0-dim tensor expands with stride 0 everywhere
        target = sizes[i]
        if target == -1:
            if dim < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) isn't allowed in a leading, "
                    f"non-existing dimension {i}")
            target = size
        if size != target:
            if size != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                    f"Tensor sizes: {list(shape)}")
            size, stride = target, 0
        out_shape[i] = size
        out_strides[i] = stride
    return tuple(out_shape), tuple(out_strides)


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
