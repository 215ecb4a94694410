"""Shape arithmetic shared by the composites and every backend: broadcasting, view sizes and strides.

Mirrors ``ATen/ExpandUtils.h`` (``infer_size``, ``inferExpandGeometry``), ``ATen/InferSize.h``
(``infer_size_dv``), ``ATen/TensorUtils.cpp`` (``computeStride``) and ``maybe_wrap_dim``, with
PyTorch's error texts. Pure functions on tuples of ints (strides in elements); one copy of each
rule, so backends cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "broadcast_shapes",
    "channels_last_strides",
    "check_storage_nbytes",
    "compute_stride",
    "contiguous_strides",
    "dense_strides_like",
    "dim_list_to_bitset",
    "expand_geometry",
    "infer_dense_strides",
    "infer_size",
    "infer_size_dv",
    "is_channels_last_contiguous",
    "is_channels_last_strides",
    "is_contiguous",
    "is_non_overlapping_and_dense",
    "numel",
    "wrap_dim",
]

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


def dim_list_to_bitset(dims: Sequence[int], ndim: int) -> list[bool]:
    """Mirror ``dim_list_to_bitset``: which of ``ndim`` dims the list names (wrapped; a repeat is an error).

    Example:
        >>> dim_list_to_bitset([-1, 0], 3)
        [True, False, True]
    """
    bits = [False] * ndim
    for d in dims:
        w = wrap_dim(d, ndim)
        if bits[w]:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        bits[w] = True
    return bits


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


def numel(shape: Sequence[int]) -> int:
    """The number of elements of ``shape`` (1 for ``()``)."""
    n = 1
    for s in shape:
        n *= s
    return n


# --- layouts: TensorImpl's stride predicates and empty_like's preserve_format ------------------------
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
