"""Shape operators: views, splits, flips, pads, scatters into slices, and the ``*_like`` factories.

Mirrors ``aten/src/ATen/native/TensorShape.cpp`` (views and their multi-output forms, ``flip``,
``roll``, ``repeat``, ``tril``/``triu``, the ``*_scatter`` ops), ``PadNd.cpp``
(``constant_pad_nd``), ``TensorFactories.cpp`` (``*_like``, ``new_*``, ``randperm``) and
``Copy.cpp`` (functional ``copy``), registered at the keys torch 2.13 registers them:

* ``CompositeExplicitAutograd`` kernels (``KERNELS_EXPLICIT``): written with dispatched operators,
  so every strided backend reaches them through ``as_strided``, ``empty``, ``fill_`` and ``copy_``.
  Views are ``as_strided``/``slice`` of their input; they share its memory.
* ``CompositeExplicitAutogradNonFunctional`` kernels of the non-structured functional ops
  (``*_scatter``, ``copy``): a clone that keeps the input's strides, then an in-place write.
* The backward operators of ``select``, ``slice`` and ``diagonal`` (``select_backward``,
  ``slice_backward``, ``diagonal_backward``: zeros, then the view written), which their
  derivatives call as torch's do, and the ``out=`` forms torch generates for them (``generated_out``).
* ``CompositeImplicitAutograd`` decompositions (``KERNELS_IMPLICIT``): ``chunk``, ``narrow``,
  ``flatten``, ``movedim``, ``T``/``mT``, ``expand_as``, ... into the ops above.
* ``ADInplaceOrView`` kernels of the views (one and several outputs), ``BackendSelect`` of
  ``randperm``; derivatives with torch's node names (``SplitWithSizesBackward0``, ...).
* ``lift_fresh`` and ``lift_fresh_copy`` (``TensorShape.cpp``): what ``tensor(data)`` and
  ``from_numpy`` hand their freshly made tensor to, so that a dispatch mode sees the literal
  (``FakeTensorMode`` makes it fake, ``make_fx`` records it as ``lift_fresh_copy`` of a constant).
  ``lift_fresh`` returns its input itself, ``lift_fresh_copy`` a clone.
* ``resize_`` (``Resize.cpp``, ``VariableTypeManual.cpp``): backend kernels that give a tensor new
  sizes over its storage and an Autograd kernel that refuses tensors requiring grad. Its
  ADInplaceOrView kernel is the core's generic in-place one, which counts a version on every
  call; torch's counts one only when the sizes change.

Invariant: each output of a view op shares its input's memory, ``_base`` and version counter;
the outputs of a multi-output view (``split``, ``unbind``) share one node and refuse in-place
modification under autograd as torch does (``CreationMeta::MULTI_OUTPUT_NODE``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import layouts as _layouts
from .._library import Library
from ..keyset import AFTER_ADINPLACEORVIEW, AFTER_AUTOGRAD
from ..ops import aten as A
from ..shapes import channels_last_strides, is_channels_last_strides, is_non_overlapping_and_dense, wrap_dim
from ..shapes import contiguous_strides as _contiguous_strides
from ..tensor import Tensor
from ..tls import AutoDispatchBelowADInplaceOrView, AutoDispatchBelowAutograd, per_thread
from . import Bindings

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "register", "register_autograd"]

_INT64_MAX = 2**63 - 1
_LIKE = ("*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
         "MemoryFormat? memory_format=None) -> Tensor")
_NEW = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"

SCHEMAS: tuple[str, ...] = (
    # views and multi-output views
    "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
    "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
    "tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]",
    "tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]",
    "narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
    "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
    "movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
    "movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
    "moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
    "moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
    "expand_as(Tensor(a) self, Tensor other) -> Tensor(a)",
    "view_as(Tensor(a) self, Tensor other) -> Tensor(a)",
    "reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)",
    "numpy_T(Tensor(a) self) -> Tensor(a)",
    "mT(Tensor(a) self) -> Tensor(a)",
    "mH(Tensor(a) self) -> Tensor(a)",
    "matrix_H(Tensor(a) self) -> Tensor(a)",
    "adjoint(Tensor(a) self) -> Tensor(a)",
    "swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)",
    "swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    # copies in a new shape
    "flip(Tensor self, int[] dims) -> Tensor",
    "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
    "repeat(Tensor self, SymInt[] repeats) -> Tensor",
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
    "tril(Tensor self, SymInt diagonal=0) -> Tensor",
    "triu(Tensor self, SymInt diagonal=0) -> Tensor",
    "tril_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)",
    "triu_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)",
    "tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
    "triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
    # writes into a copy
    "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
    # the backward operators of select, slice and diagonal (TensorShape.cpp): zeros, then the view written
    "select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    "select_backward.out(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index, *, Tensor(a!) out) "
    "-> Tensor(a!)",
    "slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) "
    "-> Tensor",
    "slice_backward.out(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step, "
    "*, Tensor(a!) out) -> Tensor(a!)",
    "diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor",
    "diagonal_backward.out(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2, *, "
    "Tensor(a!) out) -> Tensor(a!)",
    "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor",
    "diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor",
    # diagonals made and copied out
    "diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
    "diag_embed.out(Tensor self, int offset=0, int dim1=-2, int dim2=-1, *, Tensor(a!) out) -> Tensor(a!)",
    "diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
    "diagonal_copy.out(Tensor self, int offset=0, int dim1=0, int dim2=1, *, Tensor(a!) out) -> Tensor(a!)",
    "diag(Tensor self, int diagonal=0) -> Tensor",
    "diag.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
    "diagflat(Tensor self, int offset=0) -> Tensor",
    "copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
    "fill.Scalar(Tensor self, Scalar value) -> Tensor",
    "fill.Tensor(Tensor self, Tensor value) -> Tensor",
    "type_as(Tensor self, Tensor other) -> Tensor",
    # factories shaped like a tensor
    f"full_like(Tensor self, Scalar fill_value, {_LIKE}",
    f"zeros_like(Tensor self, {_LIKE}",
    f"ones_like(Tensor self, {_LIKE}",
    f"empty_like(Tensor self, {_LIKE}",
    f"rand_like(Tensor self, {_LIKE}",
    f"rand_like.generator(Tensor self, *, Generator? generator, {_LIKE[3:]}",
    f"new_zeros(Tensor self, SymInt[] size, {_NEW}",
    f"new_ones(Tensor self, SymInt[] size, {_NEW}",
    f"new_full(Tensor self, SymInt[] size, Scalar fill_value, {_NEW}",
    f"new_empty(Tensor self, SymInt[] size, {_NEW}",
    f"new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, {_NEW}",
    "randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) "
    "-> Tensor",
    "randperm.generator(SymInt n, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None) -> Tensor",
    "randperm.generator_out(SymInt n, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)",
    *(f"{name}(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor" for name in ("tril_indices", "triu_indices")),
    *(f"{name}.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)"
      for name in ("tril_indices", "triu_indices")),
    # in-place geometry
    "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    # the fresh tensor of a literal, handed to the modes (tensor(data), from_numpy)
    "lift_fresh(Tensor(a) self) -> Tensor(a)",
    "lift_fresh_copy(Tensor self) -> Tensor",
    "lift_fresh_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
)


def _shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# --- geometry shared with the backends' kernels -----------------------------------------------------
def diagonal_geometry(shape: Sequence[int], strides: Sequence[int], storage_offset: int, offset: int,
                      dim1: int, dim2: int) -> tuple[list[int], list[int], int]:
    """(sizes, strides, storage offset) of ``diagonal(offset, dim1, dim2)``, with torch's checks.

    Example:
        >>> diagonal_geometry((3, 4), (4, 1), 0, 1, 0, 1)
        ([3], [5], 1)
    """
    ndim = len(shape)
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        size = max(min(shape[d1], shape[d2] - offset), 0)
    else:
        size = max(min(shape[d1] + offset, shape[d2]), 0)
    if size > 0:  # an empty diagonal keeps the input's offset, as torch does
        storage_offset += offset * strides[d2] if offset >= 0 else -offset * strides[d1]
    keep = [d for d in range(ndim) if d not in (d1, d2)]
    return ([shape[d] for d in keep] + [size], [strides[d] for d in keep] + [strides[d1] + strides[d2]],
            storage_offset)


def resize_sizes(size: Sequence[int]) -> tuple[int, ...]:
    """``resize_``'s new sizes; a negative or too large one fails torch's numel computation (its text)."""
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape) or math.prod(shape) > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    return shape


_FORMAT_NAMES = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")


def resize_restride(shape: Sequence[int], memory_format: Any) -> tuple[int, ...] | None:
    """The element strides ``resize_(..., memory_format=)`` gives (``empty_tensor_restride``); None keeps them.

    Example:
        >>> resize_restride((2, 3, 4, 5), 2)
        (60, 1, 15, 3)
    """
    if memory_format is None:
        return None
    name = (_FORMAT_NAMES[memory_format] if isinstance(memory_format, int)
            else str(getattr(memory_format, "name", memory_format)).rpartition(".")[2])
    if name == "preserve_format":
        raise RuntimeError("Unsupported memory formatPreserve")
    if name == "contiguous_format":
        return _contiguous_strides(shape)
    rank = 4 if name == "channels_last" else 5
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    strides = [0] * rank
    strides[1], acc = 1, shape[1]  # channels innermost, then the spatial dims from the last, then the batch
    for d in range(rank - 1, 1, -1):
        strides[d] = acc
        acc *= shape[d]
    strides[0] = acc
    return tuple(strides)


def wrap_dims(dims: Sequence[int], ndim: int) -> list[int]:
    """Wrapped dims, refusing repeats with torch's text (``dim_list_to_bitset``)."""
    seen: list[int] = []
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return seen


def repeat_shape(shape: Sequence[int], repeats: Sequence[int]) -> list[int]:
    """The result shape of ``repeat``, with its check on the number of repeats."""
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = [1] * (len(repeats) - len(shape)) + list(shape)
    return [s * r for s, r in zip(padded, repeats)]


def roll_check(shifts: Sequence[int], dims: Sequence[int]) -> None:
    """``roll``'s checks on its arguments."""
    if len(shifts) == 0:
        raise RuntimeError("`shifts` required")
    if len(dims) == 0 and len(shifts) == 1:
        return
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")


def tril_check(name: str, ndim: int) -> None:
    if ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def trilu_indices_size(name: str, row: int, col: int, offset: int) -> int:
    """How many indices ``tril_indices``/``triu_indices`` give (``get_tril_size`` of TensorFactories.h).

    The lower triangle is a trapezoid over a rectangle; the upper one is what the lower triangle
    one diagonal down leaves of the ``row x col`` matrix.
    """
    if name == "triu_indices":
        return row * col - trilu_indices_size("tril_indices", row, col, offset - 1)
    if row == 0 or col == 0:
        return 0
    first = min(col, 1 + offset) if offset > 0 else int(row + offset > 0)  # the first row's count
    last = max(0, min(col, row + offset))  # the last row's count
    rows = max(0, min(row, row + offset))  # rows with any index
    trapezoid = last - first + 1
    size = (first + last) * trapezoid >> 1
    if rows > trapezoid:
        size += (rows - trapezoid) * col
    return size


def like_strides(t: Tensor, memory_format: Any) -> list[int]:
    """The strides ``empty_like(t, memory_format=...)`` gives (``preserve_format`` by default).

    A non-overlapping and dense input keeps its strides; any other gets the contiguous (or
    channels-last, when its strides say so) layout, as ``empty_like`` does.
    """
    data = t._data
    if memory_format is None and data.__class__ is np.ndarray and data.flags.c_contiguous:
        return list(t.stride())  # preserve_format of a contiguous (so dense) tensor: its strides
    shape, strides = tuple(t.shape), tuple(t.stride())
    fmt = _format_name(memory_format)
    if fmt == "preserve_format":
        if is_non_overlapping_and_dense(shape, strides):
            return list(strides)
        if len(shape) == 4 and is_channels_last_strides(shape, strides):
            return list(channels_last_strides(shape))
        return list(_contiguous_strides(shape))
    if fmt == "channels_last":
        if len(shape) != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return list(channels_last_strides(shape))
    if fmt == "channels_last_3d":
        if len(shape) != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        order = (1, 4, 3, 2, 0)
        out, acc = [0] * 5, 1
        for d in order:
            out[d] = acc
            acc *= max(shape[d], 1)
        return out
    return list(_contiguous_strides(shape))


_FORMAT_NUMBERS = {0: "contiguous_format", 1: "preserve_format", 2: "channels_last", 3: "channels_last_3d"}


def _format_name(memory_format: Any) -> str:
    if memory_format is None:
        return "preserve_format"
    if isinstance(memory_format, int):
        return _FORMAT_NUMBERS[memory_format]
    return str(getattr(memory_format, "name", memory_format)).rpartition(".")[2]


# --- CompositeExplicitAutograd: views ----------------------------------------------------------------
def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    sizes, strides, storage_offset = diagonal_geometry(tuple(self.shape), self.stride(), self.storage_offset(),
                                                       offset, dim1, dim2)
    return A.as_strided.default(self, sizes, strides, storage_offset)


def _split_dim(self: Tensor, dim: int) -> tuple[int, int]:
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, self.dim())
    return d, self.shape[d]


def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> list[Tensor]:
    d, size = _split_dim(self, dim)
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={_shape_str(sizes)}")
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                           f"at dimension {d}), but got split_sizes={_shape_str(sizes)}")
    out, start = [], 0
    for s in sizes:
        out.append(A.slice.Tensor(self, d, start, start + s))
        start += s
    return out


def split_tensor(self: Tensor, split_size: int, dim: int = 0) -> list[Tensor]:
    d, size = _split_dim(self, dim)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    num = 1 if split_size == 0 else max((size + split_size - 1) // split_size, 1)
    return [A.slice.Tensor(self, d, i * split_size, min((i + 1) * split_size, size)) for i in range(num)]


def unbind_int(self: Tensor, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, self.dim())
    return [A.select.int(self, d, i) for i in range(self.shape[d])]


# --- CompositeExplicitAutograd: copies ---------------------------------------------------------------
def repeat(self: Tensor, repeats: Sequence[int]) -> Tensor:
    repeats = [int(r) for r in repeats]
    target = repeat_shape(tuple(self.shape), repeats)
    result = A.empty.memory_format(target, dtype=self.dtype, device=self.device)
    if 0 in target:
        return result
    x = self
    for _ in range(len(repeats) - self.dim()):
        x = A.unsqueeze.default(x, 0)
    padded = list(x.shape)
    for i in range(len(repeats)):  # [s0, s1] -> [1, s0, 1, s1]: expand the ones to the repeats
        x = A.unsqueeze.default(x, 2 * i)
    interleaved = [n for pair in zip(repeats, padded) for n in pair]
    A.copy_.default(A.view.default(result, interleaved), A.expand.default(x, interleaved))
    return result


def constant_pad_nd(self: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    ndim = self.dim()
    if len(pad) // 2 > ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)}while the input has {ndim}dimensions.")
    first = ndim - len(pad) // 2
    cropped = self
    for i in range(first, ndim):  # negative pads crop the input first
        before, after = pad[2 * (ndim - i - 1)], pad[2 * (ndim - i - 1) + 1]
        if before < 0:
            cropped = A.narrow.default(cropped, i, -before, cropped.shape[i] + before)
        if after < 0:
            cropped = A.narrow.default(cropped, i, 0, cropped.shape[i] + after)
    if all(p <= 0 for p in pad):
        return A.clone.default(cropped)
    shape = list(self.shape)
    for i in range(first, ndim):
        before, after = pad[2 * (ndim - i - 1)], pad[2 * (ndim - i - 1) + 1]
        new = shape[i] + before + after
        if new < 0:
            raise RuntimeError(f"The input size {shape[i]}, plus negative padding {before} and {after} resulted "
                               f"in a negative output size, which is invalid. Check dimension {i} of your input.")
        shape[i] = new
    output = A.fill_.Scalar(A.empty.memory_format(shape, dtype=self.dtype, device=self.device), value)
    inner = output
    for i in range(first, ndim):
        before, after = pad[2 * (ndim - i - 1)], pad[2 * (ndim - i - 1) + 1]
        if before > 0:
            inner = A.narrow.default(inner, i, before, inner.shape[i] - before)
        if after > 0:
            inner = A.narrow.default(inner, i, 0, inner.shape[i] - after)
    A.copy_.default(inner, cropped)
    return output


def _has_internal_overlap(t: Tensor) -> bool:
    return any(st == 0 and n > 1 for n, st in zip(t.shape, t.stride()))


def clone_preserve_strides(self: Tensor) -> Tensor:
    """A copy with ``self``'s exact sizes, strides and storage offset (torch's helper of that name)."""
    if _has_internal_overlap(self):
        return A.clone.default(self)
    shape, strides, offset = list(self.shape), list(self.stride()), self.storage_offset()
    span = 0 if 0 in shape else 1 + sum((n - 1) * st for n, st in zip(shape, strides))
    storage = A.empty.memory_format([offset + span], dtype=self.dtype, device=self.device)
    out = A.as_strided.default(storage, shape, strides, offset)
    return A.copy_.default(out, self)


def _scatter_check(src: Tensor, piece: Tensor) -> None:
    if tuple(src.shape) != tuple(piece.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src.shape)}, slice size = {_shape_str(piece.shape)}")


def select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    out = clone_preserve_strides(self)
    piece = A.select.int(out, dim, index)
    _scatter_check(src, piece)
    A.copy_.default(piece, src)
    return out


def slice_scatter(self: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                  step: int = 1) -> Tensor:
    out = clone_preserve_strides(self)
    piece = A.slice.Tensor(out, dim, start, end, step)
    _scatter_check(src, piece)
    A.copy_.default(piece, src)
    return out


def diagonal_scatter(self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    out = clone_preserve_strides(self)
    piece = A.diagonal.default(out, offset, dim1, dim2)
    _scatter_check(src, piece)
    A.copy_.default(piece, src)
    return out


def copy(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    return A.copy_.default(clone_preserve_strides(self), src, non_blocking)


def select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    """``select_backward_symint``: ``zeros(input_sizes)`` with ``grad_output`` copied into the selected slice."""
    grad_input = A.zeros.default(list(input_sizes), dtype=grad_output.dtype, device=grad_output.device)
    A.copy_.default(A.select.int(grad_input, dim, index), grad_output)
    return grad_input


def slice_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int, end: int,
                   step: int) -> Tensor:
    """``slice_backward``: ``zeros(input_sizes)`` with ``grad_output`` copied into the slice."""
    grad_input = A.zeros.default(list(input_sizes), dtype=grad_output.dtype, device=grad_output.device)
    A.copy_.default(A.slice.Tensor(grad_input, dim, start, end, step), grad_output)
    return grad_input


def diagonal_backward(grad_output: Tensor, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int) -> Tensor:
    """``diagonal_backward_symint``: ``zeros(input_sizes)`` with ``grad_output`` copied into the diagonal."""
    grad_input = A.zeros.default(list(input_sizes), dtype=grad_output.dtype, device=grad_output.device)
    A.copy_.default(A.diagonal.default(grad_input, offset, dim1, dim2), grad_output)
    return grad_input


def generated_out(functional: Any) -> Callable[..., Any]:
    """The ``out=`` kernel torch generates at CompositeExplicitAutograd for a functional op.

    The result, then :func:`write_generated_out`.
    """
    def out_kernel(*args: Any, out: Tensor, **kwargs: Any) -> Tensor:
        return write_generated_out(functional(*args, **kwargs), out)

    return out_kernel


def write_generated_out(result: Tensor, out: Tensor) -> Tensor:
    """``resize_out_helper`` then ``copy_arg``: ``result`` into ``out``, as torch's generated out= kernels.

    ``resize_output`` first (warning when ``out`` had elements), then ``out`` must have the
    result's dtype and device exactly (the resize has happened by then), then ``copy_``.
    """
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {_shape_str(out.shape)}, "
                f"which does not match the required output shape {_shape_str(result.shape)}. This behavior is "
                "deprecated, and in a future PyTorch release outputs will not be resized unless they have zero "
                "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=5)
        A.resize_.default(out, list(result.shape))
    if out.dtype is not result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_dt.TYPEMETA_NAMES[result.dtype.name]}, but got "
                           f"{_dt.TYPEMETA_NAMES[out.dtype.name]} instead")
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} instead")
    return A.copy_.default(out, result)


def lift_fresh(self: Tensor) -> Tensor:
    """``at::native::lift_fresh``: the tensor itself (its caller made it fresh; a mode may replace it)."""
    return self


def lift_fresh_copy(self: Tensor) -> Tensor:
    """``at::native::lift_fresh_copy``: a contiguous clone, for a graph whose constant must stay unwritten."""
    return A.clone.default(self, memory_format=_layouts.contiguous_format)


# ``lift_fresh_copy.out``: torch's generated out= composite over the dispatched functional op
lift_fresh_copy_out = generated_out(lambda self: A.lift_fresh_copy.default(self))


def fill_scalar(self: Tensor, value: Any) -> Tensor:
    return A.fill_.Scalar(A.empty_like.default(self), value)


def fill_tensor(self: Tensor, value: Tensor) -> Tensor:
    return A.fill_.Tensor(A.empty_like.default(self), value)


# --- CompositeExplicitAutograd: factories -------------------------------------------------------------
def empty_like(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
               memory_format: Any = None) -> Tensor:
    strides = like_strides(self, memory_format)
    return A.empty_strided.default(list(self.shape), strides, dtype=self.dtype if dtype is None else dtype,
                                   layout=layout, device=self.device if device is None else device,
                                   pin_memory=pin_memory)


def zeros_like(self: Tensor, **options: Any) -> Tensor:
    return A.zero_.default(A.empty_like.default(self, **options))


def ones_like(self: Tensor, **options: Any) -> Tensor:
    return A.fill_.Scalar(A.empty_like.default(self, **options), 1)


def full_like(self: Tensor, fill_value: Any, **options: Any) -> Tensor:
    return A.fill_.Scalar(A.empty_like.default(self, **options), fill_value)


def rand_like(self: Tensor, **options: Any) -> Tensor:
    return rand_like_generator(self, generator=None, **options)


def rand_like_generator(self: Tensor, *, generator: Any, **options: Any) -> Tensor:
    out = A.empty_like.default(self, **options)
    return A.uniform_.default(out, 0.0, 1.0, **({} if generator is None else {"generator": generator}))


def _new_options(self: Tensor, dtype: Any, layout: Any, device: Any, pin_memory: Any) -> dict[str, Any]:
    return {"dtype": self.dtype if dtype is None else dtype, "layout": layout,
            "device": self.device if device is None else device, "pin_memory": pin_memory}


# new_zeros, new_ones and new_full are new_empty, then zero_ or fill_ (TensorFactories.cpp): so a
# negative size gets empty's error, not zeros'
def new_zeros(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None) -> Tensor:
    return A.zero_.default(A.new_empty.default(self, list(size), dtype=dtype, layout=layout, device=device,
                                               pin_memory=pin_memory))


def new_ones(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None) -> Tensor:
    return A.fill_.Scalar(A.new_empty.default(self, list(size), dtype=dtype, layout=layout, device=device,
                                              pin_memory=pin_memory), 1)


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> Tensor:
    return A.fill_.Scalar(A.new_empty.default(self, list(size), dtype=dtype, layout=layout, device=device,
                                              pin_memory=pin_memory), fill_value)


def new_empty(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None) -> Tensor:
    return A.empty.memory_format(list(size), **_new_options(self, dtype, layout, device, pin_memory))


def new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                      device: Any = None, pin_memory: Any = None) -> Tensor:
    return A.empty_strided.default(list(size), list(stride), **_new_options(self, dtype, layout, device, pin_memory))


def randperm(n: int, *, dtype: Any = 4, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return A.randperm.generator(n, generator=None, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def randperm_generator(n: int, *, generator: Any, dtype: Any = 4, layout: Any = None, device: Any = None,
                       pin_memory: Any = None) -> Tensor:
    out = A.empty.memory_format([n], dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return A.randperm.generator_out(n, generator=generator, out=out)


def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``at::native::diag_embed``: zeros with one more dimension, then ``self`` copied onto their diagonal."""
    ndim = self.dim() + 1
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    length = abs(offset) + self.shape[-1]
    sizes = list(self.shape[:-1])
    sizes.insert(min(d1, d2), length)
    sizes.insert(max(d1, d2), length)
    result = A.zeros.default(sizes, dtype=self.dtype, device=self.device)
    A.copy_.default(A.diagonal.default(result, offset, d1, d2), self)
    return result


def diagonal_copy(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The ``*_copy`` kernel torch generates for the view ``diagonal``: the view, cloned contiguous."""
    return A.clone.default(A.diagonal.default(self, offset, dim1, dim2), memory_format=_layouts.contiguous_format)


def _trailing(*args: Any, defaults: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` without the trailing ones equal to their defaults (what torch boxes for a dispatch mode).

    ``defaults`` are those of the last ``len(defaults)`` arguments.
    """
    kept = list(args)
    required = len(args) - len(defaults)
    while len(kept) > required and kept[-1] == defaults[len(kept) - required - 1]:
        kept.pop()
    return tuple(kept)


def _diag_check(self: Tensor, prefix: str) -> None:
    if self.dim() not in (1, 2):
        raise RuntimeError(f"{prefix}Supports 1D or 2D tensors. Got {self.dim()}D")


def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    """``at::diag``: a 1-d tensor onto a diagonal (``diag_embed``), a 2-d one's diagonal copied out."""
    _diag_check(self, "diag(): ")
    if self.dim() == 1:
        return A.diag_embed.default(*_trailing(self, diagonal, defaults=(0,)))
    return A.diagonal_copy.default(*_trailing(self, diagonal, defaults=(0,)))


def diag_out(self: Tensor, diagonal: int = 0, *, out: Tensor) -> Tensor:
    """``at::diag_out``: the same, into ``out`` (a 1-d input checks that its dtype casts to out's first)."""
    _diag_check(self, "")
    if self.dim() == 1:
        from .structured import can_cast

        if not can_cast(self.dtype, out.dtype):
            raise RuntimeError(f"diag: result type {_dt.SCALAR_TYPE_NAMES[self.dtype.name]} can't be cast to the "
                               f"desired out= type {_dt.SCALAR_TYPE_NAMES[out.dtype.name]}")
        return A.diag_embed.out(*_trailing(self, diagonal, defaults=(0,)), out=out)
    return A.diagonal_copy.out(*_trailing(self, diagonal, defaults=(0,)), out=out)


def diagflat(self: Tensor, offset: int = 0) -> Tensor:
    """``at::diagflat``: ``self.contiguous().view(-1)`` onto a diagonal."""
    flat = A.view.default(self if self.is_contiguous() else A.clone.default(
        self, memory_format=_layouts.contiguous_format), [-1])
    return A.diag_embed.default(*_trailing(flat, offset, defaults=(0,)))


def _trilu_indices_out(name: str) -> Callable[..., Any]:
    """``tril_indices.out``/``triu_indices.out``: the factory in ``out``'s dtype, then resized into ``out``."""
    def out_kernel(row: int, col: int, offset: int = 0, *, out: Tensor) -> Tensor:
        return generated_out(_handle(name))(row, col, offset, dtype=out.dtype, layout=_layouts.strided,
                                            device=out.device, out=out)

    out_kernel.__name__ = out_kernel.__qualname__ = f"{name}_out"
    return out_kernel


KERNELS_EXPLICIT: dict[str, Callable[..., Any]] = {
    "diagonal": diagonal, "split_with_sizes": split_with_sizes, "split.Tensor": split_tensor,
    "unbind.int": unbind_int, "repeat": repeat, "constant_pad_nd": constant_pad_nd,
    "fill.Scalar": fill_scalar, "fill.Tensor": fill_tensor,
    "empty_like": empty_like, "zeros_like": zeros_like, "ones_like": ones_like, "full_like": full_like,
    "rand_like": rand_like, "rand_like.generator": rand_like_generator,
    "new_zeros": new_zeros, "new_ones": new_ones, "new_full": new_full, "new_empty": new_empty,
    "randperm": randperm, "randperm.generator": randperm_generator,
    "lift_fresh": lift_fresh, "lift_fresh_copy.out": lift_fresh_copy_out,
    "slice_backward": slice_backward, "diagonal_backward": diagonal_backward,
    "select_backward.out": generated_out(select_backward), "slice_backward.out": generated_out(slice_backward),
    "diagonal_backward.out": generated_out(diagonal_backward),
    "tril_indices.out": _trilu_indices_out("tril_indices"), "triu_indices.out": _trilu_indices_out("triu_indices"),
    "diag_embed.out": generated_out(lambda *a, **k: A.diag_embed.default(*a, **k)),
    "diagonal_copy.out": generated_out(lambda *a, **k: A.diagonal_copy.default(*a, **k)),
}
# torch's dispatch: CompositeExplicitAutogradNonFunctional, and not structured (no out= kernel)
KERNELS_NONFUNCTIONAL: dict[str, Callable[..., Any]] = {
    "select_scatter": select_scatter, "slice_scatter": slice_scatter, "diagonal_scatter": diagonal_scatter,
    "copy": copy, "new_empty_strided": new_empty_strided, "lift_fresh_copy": lift_fresh_copy,
    "select_backward": select_backward, "diag_embed": diag_embed, "diagonal_copy": diagonal_copy,
}


# --- CompositeImplicitAutograd ----------------------------------------------------------------------
def split_sizes(self: Tensor, split_size: Sequence[int], dim: int = 0) -> list[Tensor]:
    return A.split_with_sizes.default(self, split_size, dim)


def chunk(self: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = self.shape[wrap_dim(dim, self.dim())]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:  # every chunk empty: as many as asked for
        return A.split_with_sizes.default(self, [0] * chunks, dim)
    return A.split.Tensor(self, split_size, dim)


def _tensor_split_dim(self: Tensor, dim: int) -> int:
    if self.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    return wrap_dim(dim, self.dim())


def tensor_split_sections(self: Tensor, sections: int, dim: int = 0) -> list[Tensor]:
    d = _tensor_split_dim(self, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = self.shape[d]
    base, extra = divmod(size, sections)
    out, start = [], 0
    for i in range(sections):
        length = base + (1 if i < extra else 0)
        out.append(A.slice.Tensor(self, d, start, start + length))
        start += length
    return out


def tensor_split_indices(self: Tensor, indices: Sequence[int], dim: int = 0) -> list[Tensor]:
    d = _tensor_split_dim(self, dim)
    out, start = [], 0
    for index in indices:
        out.append(A.slice.Tensor(self, d, start, index))
        start = index
    out.append(A.slice.Tensor(self, d, start, self.shape[d]))
    return out


def narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, self.dim())
    size = self.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return A.slice.Tensor(self, d, start, start + length, 1)


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    ndim = self.dim()
    start, end = wrap_dim(start_dim, ndim), wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if ndim == 0:
        return A.reshape.default(self, [1])
    if start == end:
        return self
    shape = list(self.shape)
    return A.reshape.default(self, shape[:start] + [math.prod(shape[start:end + 1])] + shape[end + 1:])


def unflatten(self: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = wrap_dim(dim, self.dim())
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    size = self.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    inferred = [size // known if s == -1 and known and size % known == 0 else s for s in sizes]
    if math.prod(inferred) != size or -1 in inferred:
        raise RuntimeError(f"unflatten: Provided sizes {_shape_str(sizes)} don't multiply up to the size of dim "
                           f"{dim} ({size}) in the input tensor")
    shape = list(self.shape)
    return A.view.default(self, shape[:d] + inferred + shape[d + 1:])


def movedim_intlist(self: Tensor, source: Sequence[int], destination: Sequence[int]) -> Tensor:
    source, destination = list(source), list(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_shape_str(source)} dims) should "
                           f"contain the same number of dims as destination ({_shape_str(destination)} dims)")
    ndim = self.dim()
    src = [wrap_dim(d, ndim) for d in source]
    dst = [wrap_dim(d, ndim) for d in destination]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({_shape_str(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({_shape_str(destination)})")
    order = [-1] * max(ndim, 1)
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(d for d in range(ndim) if d not in src)
    order = [o if o != -1 else next(rest) for o in order][:ndim]
    return A.permute.default(self, order)


def movedim_int(self: Tensor, source: int, destination: int) -> Tensor:
    return A.movedim.intlist(self, [source], [destination])


def moveaxis_intlist(self: Tensor, source: Sequence[int], destination: Sequence[int]) -> Tensor:
    return A.movedim.intlist(self, source, destination)


def moveaxis_int(self: Tensor, source: int, destination: int) -> Tensor:
    return A.movedim.int(self, source, destination)


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return A.expand.default(self, list(other.shape))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return A.view.default(self, list(other.shape))


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return A.reshape.default(self, list(other.shape))


def numpy_T(self: Tensor) -> Tensor:  # noqa: N802 - the operator's name
    n = self.dim()
    if n == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=4)
    elif n != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                      "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                      "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                      "tensor.", UserWarning, stacklevel=4)
    return A.permute.default(self, list(range(n - 1, -1, -1)))


def _matrices(self: Tensor, what: str) -> None:
    if self.dim() < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")


def mT(self: Tensor) -> Tensor:  # noqa: N802 - the operator's name
    _matrices(self, "mT")
    return A.transpose.int(self, -2, -1)


def mH(self: Tensor) -> Tensor:  # noqa: N802 - real dtypes: conj is the identity
    _matrices(self, "mH")
    return A.transpose.int(self, -2, -1)


def adjoint(self: Tensor) -> Tensor:
    _matrices(self, "adjoint()")
    return A.transpose.int(self, -2, -1)


def matrix_H(self: Tensor) -> Tensor:  # noqa: N802 - the operator's name
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""))
    return A.transpose.int(self, 0, 1)


def swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return A.transpose.int(self, axis0, axis1)


def swapdims(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return A.transpose.int(self, dim0, dim1)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    return A.to.device(self, other.device, other.dtype)


KERNELS_IMPLICIT: dict[str, Callable[..., Any]] = {
    "split.sizes": split_sizes, "chunk": chunk, "tensor_split.sections": tensor_split_sections,
    "tensor_split.indices": tensor_split_indices, "narrow": narrow, "flatten.using_ints": flatten,
    "unflatten.int": unflatten, "movedim.int": movedim_int, "movedim.intlist": movedim_intlist,
    "moveaxis.int": moveaxis_int, "moveaxis.intlist": moveaxis_intlist, "expand_as": expand_as,
    "view_as": view_as, "reshape_as": reshape_as, "numpy_T": numpy_T, "mT": mT, "mH": mH, "adjoint": adjoint,
    "matrix_H": matrix_H, "swapaxes": swapaxes, "swapdims": swapdims, "type_as": type_as,
    "diag": diag, "diag.out": diag_out, "diagflat": diagflat,
}
# views with an ADInplaceOrView kernel in torch: one output, and several
VIEWS = ("diagonal", "narrow")
MULTI_OUTPUT_VIEWS = ("split_with_sizes", "split.Tensor", "unbind.int", "chunk")
BACKEND_SELECT = ("randperm", "randperm.generator", "tril_indices", "triu_indices")


def _handle(name: str) -> Any:
    base, _, overload = name.partition(".")
    return getattr(getattr(A, base), overload or "default")


def _make_multi_view_kernel(op: Any) -> Callable[..., Any]:
    """ADInplaceOrView of a multi-output view: each output shares the base and its version counter."""
    from ..keyset import AFTER_ADINPLACEORVIEW
    from ..tls import AutoDispatchBelowADInplaceOrView

    def ad_inplace_or_view_multi_view(bits: int, self: Tensor, *args: Any, **kwargs: Any) -> list[Tensor]:
        with AutoDispatchBelowADInplaceOrView():
            outs = op.redispatch(bits & AFTER_ADINPLACEORVIEW, self, *args, **kwargs)
        base = self if self._base is None else self._base
        for out in outs:
            out._base = base
            out._vc = self._vc
            if out._key_bits != self._key_bits:  # made inside inference mode
                from ..autograd.kernels import as_view

                as_view(self, out)
        return outs

    return ad_inplace_or_view_multi_view


def register(lib: Library) -> None:
    """Register the composite, ADInplaceOrView and BackendSelect kernels at torch's keys."""
    from .._core_kernels import _make_backend_select_kernel, _make_view_kernel

    for name, kernel in KERNELS_EXPLICIT.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in KERNELS_NONFUNCTIONAL.items():
        lib.impl(name, kernel, "CompositeExplicitAutogradNonFunctional")
    for name, kernel in KERNELS_IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")
    for name in VIEWS:
        lib.impl(name, _make_view_kernel(_handle(name)), "ADInplaceOrView", with_keyset=True, _raw_keyset=True)
    for name in MULTI_OUTPUT_VIEWS:
        lib.impl(name, _make_multi_view_kernel(_handle(name)), "ADInplaceOrView", with_keyset=True,
                 _raw_keyset=True)
    for name in BACKEND_SELECT:
        kernel = _make_backend_select_kernel(_handle(name))
        kernel.__dispatchcore_kernel_check__ = lambda *a: None  # forwards **kwargs untouched
        lib.impl(name, kernel, "BackendSelect")
    lib.impl("resize_", _resize_ad_inplace_or_view, "ADInplaceOrView", with_keyset=True, _raw_keyset=True)


def _resize_autograd(bits: int, self: Tensor, size: Any, *, memory_format: Any = None) -> Tensor:
    """``resize_``'s Autograd kernel (VariableTypeManual): refuse tensors requiring grad, else go below."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    with AutoDispatchBelowAutograd():
        return A.resize_.default.redispatch(bits & AFTER_AUTOGRAD, self, size, memory_format=memory_format)


def _resize_ad_inplace_or_view(bits: int, self: Tensor, size: Any, *, memory_format: Any = None) -> Tensor:
    """``resize_``'s ADInplaceOrView kernel: a version only when the sizes change (``VariableTypeManual``)."""
    if self._vc is None and not per_thread.state.autograd[1]:
        from ..autograd.kernels import INFERENCE_INPLACE_ERROR

        raise RuntimeError(INFERENCE_INPLACE_ERROR)  # an inference tensor written outside inference mode
    before = tuple(self.shape)
    with AutoDispatchBelowADInplaceOrView():
        out = A.resize_.default.redispatch(bits & AFTER_ADINPLACEORVIEW, self, size, memory_format=memory_format)
    if tuple(self.shape) != before and self._vc is not None:
        self._vc[0] += 1  # increment_version
    return out


# --- derivatives ------------------------------------------------------------------------------------
def _zeros(shape: Sequence[int], like: Tensor) -> Tensor:
    return A.zeros.default(list(shape), dtype=like.dtype, device=like.device)


def _diagonal_backward(grad: Tensor, self_shape: tuple[int, ...], offset: int, dim1: int, dim2: int) -> Tensor:
    return A.diagonal_backward.default(grad, list(self_shape), offset, dim1, dim2)


def _cat_pieces(grads: tuple[Any, ...], shapes: list[list[int]], dim: int) -> Tensor:
    """``split_backward``: the pieces' gradients joined, zeros for the pieces that got none."""
    like = next(g for g in grads if g is not None)
    pieces = [g if g is not None else _zeros(s, like) for g, s in zip(grads, shapes)]
    return A.cat.default(pieces, dim)


def _piece_shapes(self_shape: tuple[int, ...], dim: int, lengths: Sequence[int]) -> tuple[int, list[list[int]]]:
    d = wrap_dim(dim, len(self_shape))
    shapes = []
    for n in lengths:
        s = list(self_shape)
        s[d] = n
        shapes.append(s)
    return d, shapes


def _split_with_sizes_backward(grads: tuple[Any, ...], self_shape: tuple[int, ...], split_sizes: Sequence[int],
                               dim: int) -> Tensor:
    d, shapes = _piece_shapes(self_shape, dim, split_sizes)
    return _cat_pieces(grads, shapes, d)


def _split_backward(grads: tuple[Any, ...], self_shape: tuple[int, ...], split_size: int, dim: int) -> Tensor:
    d = wrap_dim(dim, len(self_shape))
    size = self_shape[d]
    lengths = [min(split_size, size - i * split_size) for i in range(len(grads))] if split_size else [size]
    d, shapes = _piece_shapes(self_shape, dim, lengths)
    return _cat_pieces(grads, shapes, d)


def _unbind_backward(grads: tuple[Any, ...], self_shape: tuple[int, ...], dim: int) -> Tensor:
    d = wrap_dim(dim, len(self_shape))
    like = next(g for g in grads if g is not None)
    shape = [s for i, s in enumerate(self_shape) if i != d]
    return A.stack.default([g if g is not None else _zeros(shape, like) for g in grads], d)


def _repeat_backward(grad: Tensor, repeats: Sequence[int], self_shape: tuple[int, ...]) -> Tensor:
    """``repeat_backward``: the leading new dims summed away, then one reshape and one sum over the repeats."""
    if 0 in repeats:
        return _zeros(self_shape, grad)
    unsqueezed = grad.dim() - len(self_shape)
    for _ in range(unsqueezed):
        grad = A.sum.dim_IntList(grad, [0], False)
    grad_size: list[int] = []
    sum_dims: list[int] = []
    for d, size in enumerate(self_shape):
        repeat = repeats[d + unsqueezed]
        if repeat != 1:
            grad_size.append(repeat)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(size)
    if sum_dims:
        grad = A.sum.dim_IntList(A.reshape.default(grad, grad_size), sum_dims)
    return grad


def _roll_backward(grad: Tensor, shifts: Sequence[int], dims: Sequence[int]) -> Tensor:
    return A.roll.default(grad, [-s for s in reversed(shifts)], list(reversed(dims)))


def _copy_not_implemented(grad: Any) -> Any:
    raise RuntimeError("derivative for aten::copy is not implemented")


# factories whose Autograd kernel only redispatches (their outputs never require grad)
NONDIFFERENTIABLE = ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "rand_like.generator",
                     "new_zeros", "new_ones", "new_full", "new_empty", "new_empty_strided", "randperm",
                     "randperm.generator", "tril_indices", "triu_indices")


def _make_multi_view_autograd_kernel(d: Any) -> Callable[..., Any]:
    """Autograd kernel of a multi-output view: one node for all outputs, each a view of the input.

    The outputs are marked ``CREATION_MULTI_OUTPUT_NODE``, so an in-place op on one of them is
    refused with torch's text.
    """
    from ..autograd import kernels as K
    from ..autograd.graph import Node, gradient_edge
    from ..keyset import AFTER_AUTOGRAD
    from ..tls import per_thread

    op = d.op

    def autograd_multi_view_kernel(bits: int, self: Tensor, *args: Any, **kwargs: Any) -> list[Tensor]:
        st = per_thread.state
        grad_mode = st.autograd[0]
        saved = K.enter_below()
        try:
            outs = op.redispatch(bits & AFTER_AUTOGRAD, self, *args, **kwargs)
        finally:
            st.keys = saved
        floating = self._data.dtype.kind in "fc"
        node = None
        if grad_mode and self._requires_grad and floating:
            node = object.__new__(d.node_class)
            Node.__init__(node, (gradient_edge(self),))
            node._num_outputs = len(outs)  # a slot of Tensor[]-returning node classes
            node._in_meta = ((self._data.shape, self._data.dtype),)
            values: dict[str, Any] = {}
            K._save(d.plan((True,)), (self, *args), kwargs, values)
            node._values = values
        for i, out in enumerate(outs):
            if out._base is None or out._vc is None or not floating:
                continue
            if node is not None:
                out._grad_fn = node
                out._requires_grad = True
                out._output_nr = i
                out._meta = K.ViewMeta(K.CREATION_MULTI_OUTPUT_NODE, out._vc[0])
            elif not grad_mode:
                out._meta = K.ViewMeta(K.CREATION_NO_GRAD, out._vc[0])
                if out._base._requires_grad:
                    out._requires_grad = True
        return outs

    autograd_multi_view_kernel.__qualname__ = f"autograd_kernel[{op.qualname}]"
    return autograd_multi_view_kernel


def register_autograd(lib: Library) -> None:
    """The derivatives of the family's operators, with torch's node names."""
    from ..autograd import kernels as K
    from ..autograd.kernels import register_derivative, register_nondifferentiable

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> Any:
        return register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    r("flip", "FlipBackward0", ("self",), lambda g, dims: A.flip.default(g, dims))
    r("roll", "RollBackward0", ("self",), _roll_backward)
    r("repeat", "RepeatBackward0", ("self",), _repeat_backward)
    r("constant_pad_nd", "ConstantPadNdBackward0", ("self",),
      lambda g, pad: A.constant_pad_nd.default(g, [-p for p in pad]))
    for name in ("tril", "triu"):
        node = f"{name.capitalize()}Backward0"
        formula = (lambda op: lambda g, diagonal: op(g, diagonal))(_handle(name))
        r(name, node, ("self",), formula)
        r(f"{name}_", node, ("self",), formula, mutates="self")
    r("diagonal", "DiagonalBackward0", ("self",), _diagonal_backward, view=True)
    r("diagonal_copy", "DiagonalBackward0_copy", ("self",), _diagonal_backward)
    r("diag_embed", "DiagEmbedBackward0", ("self",),
      lambda g, offset, dim1, dim2: A.diagonal.default(g, offset, dim1, dim2))
    # ``zeros_like(src)`` in derivatives.yaml: torch saves src's sizes and options and calls ``at::zeros``
    r("select_scatter", "SelectScatterBackward0", ("self", "src"),
      (lambda g, src_shape, src_dtype, src_device, dim, index: A.select_scatter.default(
          g, A.zeros.default(list(src_shape), dtype=src_dtype, device=src_device), dim, index),
       lambda g, dim, index: A.select.int(g, dim, index)))
    r("slice_scatter", "SliceScatterBackward0", ("self", "src"),
      (lambda g, src_shape, src_dtype, src_device, dim, start, end, step: A.slice_scatter.default(
          g, A.zeros.default(list(src_shape), dtype=src_dtype, device=src_device), dim, start, end, step),
       lambda g, dim, start, end, step: A.slice.Tensor(g, dim, start, end, step)))
    r("diagonal_scatter", "DiagonalScatterBackward0", ("self", "src"),
      (lambda g, src_shape, src_dtype, src_device, offset, dim1, dim2: A.diagonal_scatter.default(
          g, A.zeros.default(list(src_shape), dtype=src_dtype, device=src_device), offset, dim1, dim2),
       lambda g, offset, dim1, dim2: A.diagonal.default(g, offset, dim1, dim2)))
    r("select_backward", "SelectBackwardBackward0", ("grad_output",),
      lambda g, dim, index: A.select.int(g, dim, index))
    r("slice_backward", "SliceBackwardBackward0", ("grad_output",),
      lambda g, dim, start, end, step: A.slice.Tensor(g, dim, start, end, step))
    r("diagonal_backward", "DiagonalBackwardBackward0", ("grad_output",),
      lambda g, offset, dim1, dim2: A.diagonal.default(g, offset, dim1, dim2))
    copy_node = r("copy", "NotImplemented", ("self", "src"), (_copy_not_implemented, _copy_not_implemented))
    copy_node.node_class._qualified_name = "torch::autograd::NotImplemented"
    r("lift_fresh", "LiftFreshBackward0", ("self",), lambda g: g)
    r("lift_fresh_copy", "LiftFreshBackward0_copy", ("self",), lambda g: g)
    r("fill.Scalar", "FillBackward0", ("self",), lambda g: A.zeros_like.default(g))
    r("fill.Tensor", "FillBackward1", ("self", "value"),
      (lambda g: A.zeros_like.default(g), lambda g: A.sum.default(g)))
    multi = {
        "split_with_sizes": ("SplitWithSizesBackward0", _split_with_sizes_backward),
        "split.Tensor": ("SplitBackward0", _split_backward),
        "unbind.int": ("UnbindBackward0", _unbind_backward),
    }
    for name, (node, backward) in multi.items():
        d = K.Derivative(_handle(name), node, ("self",), backward, differentiable_outputs=())
        K._derivatives[f"aten::{name}"] = d
        lib.impl(name, _make_multi_view_autograd_kernel(d), "Autograd", with_keyset=True, _raw_keyset=True)
    for name in NONDIFFERENTIABLE:
        register_nondifferentiable(lib, f"aten::{name}")
    lib.impl("resize_", _resize_autograd, "Autograd", with_keyset=True, _raw_keyset=True)


# --- torch.* functions and Tensor methods ---------------------------------------------------------------
def _int_list(value: Any) -> list[int]:
    if isinstance(value, int):
        return [value]
    return [int(v) for v in value]


# Bindings parsed as torch's (``native.Bindings``): a wrong type or count of arguments gets torch's
# TypeError (``flip(): argument 'dims' (position 2) must be tuple of ints, not str``), and a bool is
# not taken for an int
_BIND = Bindings({
    "flip": ("flip(Tensor input, IntArrayRef dims)",), "Tensor.flip": ("flip(IntArrayRef dims)",),
    "roll": ("roll(Tensor input, SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None)",),
    "Tensor.roll": ("roll(SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None)",),
    "Tensor.repeat": ("repeat(SymIntArrayRef repeats)",),
    "chunk": ("chunk(Tensor input, int64_t chunks, int64_t dim=0)",),
    "Tensor.chunk": ("chunk(int64_t chunks, int64_t dim=0)",),
    "narrow": ("narrow(Tensor input, int64_t dim, Tensor start, SymInt length)",
               "narrow(Tensor input, int64_t dim, SymInt start, SymInt length)"),
    "Tensor.narrow": ("narrow(int64_t dim, Tensor start, SymInt length)",
                      "narrow(int64_t dim, SymInt start, SymInt length)"),
    "flatten": ("flatten(Tensor input, int64_t start_dim=0, int64_t end_dim=-1)",),
    "Tensor.flatten": ("flatten(int64_t start_dim=0, int64_t end_dim=-1)",),
    **{key: sigs for name in ("tril", "triu") for key, sigs in (
        (name, (f"{name}(Tensor input, int64_t diagonal=0, *, Tensor out=None)",)),
        (f"Tensor.{name}", (f"{name}(int64_t diagonal=0)",)), (f"Tensor.{name}_", (f"{name}_(int64_t diagonal=0)",)))},
    **{key: sigs for name in ("movedim", "moveaxis") for key, sigs in (
        (name, (f"{name}(Tensor input, int64_t source, int64_t destination)",
                f"{name}(Tensor input, IntArrayRef source, IntArrayRef destination)")),
        (f"Tensor.{name}", (f"{name}(int64_t source, int64_t destination)",
                            f"{name}(IntArrayRef source, IntArrayRef destination)")))},
    "swapaxes": ("swapaxes(Tensor input, int64_t axis0, int64_t axis1)",),
    "Tensor.swapaxes": ("swapaxes(int64_t axis0, int64_t axis1)",),
    "swapdims": ("swapdims(Tensor input, int64_t dim0, int64_t dim1)",),
    "Tensor.swapdims": ("swapdims(int64_t dim0, int64_t dim1)",),
    "diag": ("diag(Tensor input, int64_t diagonal=0, *, Tensor out=None)",),
    "Tensor.diag": ("diag(int64_t diagonal=0)",),
    "diagflat": ("diagflat(Tensor input, int64_t offset=0)",), "Tensor.diagflat": ("diagflat(int64_t offset=0)",),
    "diag_embed": ("diag_embed(Tensor input, int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1)",),
    "Tensor.diag_embed": ("diag_embed(int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1)",),
    "diagonal_copy": ("diagonal_copy(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1, *, "
                      "Tensor out=None)",),
})


def _diag_binding(i: int, b: dict[str, Any]) -> Tensor:
    args = _trailing(b["input"], b["diagonal"], defaults=(0,))
    return A.diag.default(*args) if b.get("out") is None else A.diag.out(*args, out=b["out"])


def _diagonal_copy_binding(i: int, b: dict[str, Any]) -> Tensor:
    args = _trailing(b["input"], b["offset"], b["dim1"], b["dim2"], defaults=(0, 0, 1))
    return A.diagonal_copy.default(*args) if b.get("out") is None else A.diagonal_copy.out(*args, out=b["out"])


def _triangle(name: str, i: int, b: dict[str, Any]) -> Tensor:
    if b.get("out") is not None:
        return _handle(f"{name}.out")(b["input"], b["diagonal"], out=b["out"])
    return _handle(name)(b["input"], b["diagonal"])


# name -> call(signature index, arguments): the operator each binding calls
_BOUND: dict[str, Callable[[int, dict[str, Any]], Any]] = {
    "flip": lambda i, b: A.flip.default(b["input"], _int_list(b["dims"])),
    "roll": lambda i, b: A.roll.default(b["input"], _int_list(b["shifts"]),
                                        [] if b["dims"] is None else _int_list(b["dims"])),
    "repeat": lambda i, b: A.repeat.default(b["input"], _int_list(b["repeats"])),
    "chunk": lambda i, b: tuple(A.chunk.default(b["input"], b["chunks"], b["dim"])),
    "narrow": lambda i, b: A.narrow.default(b["input"], b["dim"], int(b["start"]), b["length"]),
    "flatten": lambda i, b: A.flatten.using_ints(b["input"], b["start_dim"], b["end_dim"]),
    "tril": lambda i, b: _triangle("tril", i, b), "triu": lambda i, b: _triangle("triu", i, b),
    "tril_": lambda i, b: _handle("tril_")(b["input"], b["diagonal"]),
    "triu_": lambda i, b: _handle("triu_")(b["input"], b["diagonal"]),
    "movedim": lambda i, b: (A.movedim.int(b["input"], b["source"], b["destination"]) if i == 0 else
                             A.movedim.intlist(b["input"], _int_list(b["source"]), _int_list(b["destination"]))),
    "swapaxes": lambda i, b: A.swapaxes.default(b["input"], b["axis0"], b["axis1"]),
    "swapdims": lambda i, b: A.swapdims.default(b["input"], b["dim0"], b["dim1"]),
    "diag": _diag_binding, "diagonal_copy": _diagonal_copy_binding,
    "diagflat": lambda i, b: A.diagflat.default(*_trailing(b["input"], b["offset"], defaults=(0,))),
    "diag_embed": lambda i, b: A.diag_embed.default(*_trailing(b["input"], b["offset"], b["dim1"], b["dim2"],
                                                               defaults=(0, -2, -1))),
}
_BOUND["moveaxis"] = _BOUND["movedim"]


def _split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """``torch.split``/``Tensor.split``: an int splits evenly (``split.Tensor``), a list by sizes."""
    if isinstance(split_size_or_sections, int):
        return tuple(A.split.Tensor(tensor, split_size_or_sections, dim))
    return tuple(A.split_with_sizes.default(tensor, _int_list(split_size_or_sections), dim))


def _split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return tuple(A.split_with_sizes.default(self, _int_list(split_sizes), dim))


def _unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    if dim.__class__ is int and dim == 0:  # torch hands a mode no trailing default: unbind.int(x)
        return tuple(A.unbind.int(input))
    return tuple(A.unbind.int(input, dim))


def _tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    value = indices_or_sections
    if isinstance(value, Tensor):
        if value.dim() > 1 or value.dtype is not _dt.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_dt.SCALAR_TYPE_NAMES[value.dtype.name]}" if value.dtype is not _dt.int64 else
                               "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {value.dim()} dims")
        value = value.item() if value.dim() == 0 else value.tolist()
    if isinstance(value, int):
        return tuple(A.tensor_split.sections(input, value, dim))
    return tuple(A.tensor_split.indices(input, _int_list(value), dim))


def _unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    return A.unflatten.int(input, dim, _int_list(sizes))


def _diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return A.diagonal.default(input, offset, dim1, dim2)


def _fill(input: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return A.fill.Tensor(input, value)
    return A.fill.Scalar(input, value)


def _select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    return A.select_scatter.default(input, src, dim, index)


def _slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                   step: int = 1) -> Tensor:
    return A.slice_scatter.default(input, src, dim, start, end, step)


def _diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return A.diagonal_scatter.default(input, src, offset, dim1, dim2)


def _constant_pad_nd(input: Tensor, pad: Any, value: Any = 0) -> Tensor:
    return A.constant_pad_nd.default(input, _int_list(pad), value)


def _adjoint(input: Tensor) -> Tensor:
    return A.adjoint.default(input)


# factories: torch's binding signatures and checks (dispatchcore.factories), then the aten op
_FACTORY_TAIL = ("ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, "
                 "bool? requires_grad=False")
_LIKE_TAIL = "MemoryFormat? memory_format=None, " + _FACTORY_TAIL
_PARSERS: dict[str, Any] = {}


def _parser(*signatures: str) -> Any:
    """The binding's parser of these signatures (made on first use: factories imports the op set)."""
    parser = _PARSERS.get(signatures[0])
    if parser is None:
        from .. import factories as F

        parser = _PARSERS[signatures[0]] = F._parser(*signatures)
    return parser


def _like(name: str, extra: str = "", generator: bool = False) -> Callable[..., Any]:
    """``torch.<name>(input, ...)``: the aten op, so the result keeps ``input``'s layout."""
    signatures = [f"{name}(Tensor input, {extra}*, {_LIKE_TAIL})"]
    if generator:
        signatures.insert(0, f"{name}(Tensor input, *, Generator? generator, {_LIKE_TAIL})")

    resolved: list[Any] = []  # (parser, factories module, the op), found on the first call

    def like(*args: Any, **kwargs: Any) -> Tensor:
        if not resolved:  # late: factories imports the op set, which imports this module
            from .. import factories

            resolved[:] = [_parser(*signatures), factories, _handle(name)]
        parser, F, op = resolved
        _, a = parser.parse(args, kwargs)
        input = a.pop("input")
        options = F._options(name, a)
        if a["memory_format"] is not None:
            options["memory_format"] = a["memory_format"]
        if a.get("generator") is not None:
            t = _handle(f"{name}.generator")(input, generator=a["generator"], **options)
        elif "fill_value" in a:
            t = op(input, a["fill_value"], **options)
        else:
            t = op(input, **options)
        a["out"] = None
        return F._finish(name, t, a)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"``torch.{name}``: shaped like ``input``, with its dtype, device and layout by default."
    return like


def _new_factory(name: str, fill: bool = False) -> Callable[..., Any]:
    """``Tensor.new_zeros(*size, ...)`` and kin: ``self``'s dtype and device unless given."""
    extra = "Scalar fill_value, " if fill else ""
    signature = f"{name}(SymIntArrayRef size, {extra}*, {_FACTORY_TAIL})"

    resolved: list[Any] = []  # (parser, factories module, the op), found on the first call

    def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if not resolved:  # late: factories imports the op set, which imports this module
            from .. import factories

            resolved[:] = [_parser(signature), factories, _handle(name)]
        parser, F, op = resolved
        _, a = parser.parse(args, kwargs)  # new_zeros(2, 3) too: the parser's varargs form
        options = F._options(name, a)
        size = [int(s) for s in a["size"]]
        t = op(self, size, a["fill_value"], **options) if fill else op(self, size, **options)
        a["out"] = None
        return F._finish(name, t, a)

    new.__name__ = new.__qualname__ = name
    new.__doc__ = f"``Tensor.{name}``: a new tensor with ``self``'s dtype and device unless given."
    return new


_RANDPERM = (f"randperm(SymInt n, *, Generator? generator, Tensor out=None, {_FACTORY_TAIL})",
             f"randperm(SymInt n, *, Tensor out=None, {_FACTORY_TAIL})")


def _resize_method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor.resize_(*size, memory_format=None)``: new sizes in place (see ``resize_``'s CPU kernel)."""
    _, a = _parser("resize_(SymIntArrayRef size, *, MemoryFormat? memory_format=None)").parse(args, kwargs)
    return A.resize_.default(self, [int(s) for s in a["size"]], memory_format=a["memory_format"])


def _randperm(*args: Any, **kwargs: Any) -> Tensor:
    """``torch.randperm(n)``: a random permutation of ``0..n-1`` (int64 unless ``dtype=``)."""
    from .. import factories as F

    _, a = _parser(*_RANDPERM).parse(args, kwargs)
    F._out_dtype(a)
    if a["dtype"] is None:
        a["dtype"] = _dt.int64
    options = F._options("randperm", a)
    if a.get("generator") is not None:
        t = A.randperm.generator(a["n"], generator=a["generator"], **options)
    else:
        t = A.randperm.default(a["n"], **options)
    return F._finish("randperm", t, a)


def _trilu_indices(name: str) -> Callable[..., Any]:
    """``torch.tril_indices``/``torch.triu_indices``: the binding of a factory without ``out=``."""
    signature = f"{name}(int64_t row, int64_t col, int64_t offset=0, *, {_FACTORY_TAIL})"

    def binding(*args: Any, **kwargs: Any) -> Tensor:
        from .. import factories as F

        _, a = _parser(signature).parse(args, kwargs)
        options = F._options(name, a)
        t = _handle(name)(*_trailing(a["row"], a["col"], a["offset"], defaults=(0,)), **options)
        return F._finish(name, t, a)

    binding.__name__ = binding.__qualname__ = name
    part = "lower" if name == "tril_indices" else "upper"
    binding.__doc__ = (f"``torch.{name}(row, col, offset=0)``: the indices of the {part} triangle of a "
                       "``row x col`` matrix, as a 2 x N tensor (row indices, then column indices).")
    return binding


def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
                layout: Any = None, pin_memory: bool = False) -> Tensor:
    """``Tensor.new_tensor``: a copy of ``data`` with ``self``'s dtype and device unless given."""
    from .. import factories as F

    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if isinstance(data, Tensor):  # torch: data.detach().to(device, dtype, copy=True), as tensor(a_tensor)
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        copied = F.copy_of_tensor(data, F._dtype(dtype), F._device(device))
        return F._finish("new_tensor", copied, {"requires_grad": requires_grad})
    return F.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _iter(self: Tensor) -> Any:
    """``iter(x)``: ``iter(x.unbind(0))``, as torch's ``Tensor.__iter__``.

    torch's ``__iter__`` skips torch function itself (gh-54457) but calls the public ``dim`` and
    ``unbind``: a ``TorchFunctionMode`` or a subclass sees ``Tensor.dim`` and ``Tensor.unbind``.
    """
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _type_as(self: Tensor, other: Tensor) -> Tensor:
    return A.type_as.default(self, other)



FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: _BIND.function(name, _BOUND[name]) for name in (
        "flip", "roll", "chunk", "narrow", "flatten", "tril", "triu", "movedim", "moveaxis", "swapaxes", "swapdims",
        "diag", "diagflat", "diag_embed", "diagonal_copy")},
    "split": _split, "split_with_sizes": _split_with_sizes,
    "unbind": _unbind, "tensor_split": _tensor_split,
    "unflatten": _unflatten,
    "diagonal": _diagonal, "fill": _fill,
    "select_scatter": _select_scatter, "slice_scatter": _slice_scatter, "diagonal_scatter": _diagonal_scatter,
    "constant_pad_nd": _constant_pad_nd, "adjoint": _adjoint,
    "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"), "empty_like": _like("empty_like"),
    "full_like": _like("full_like", extra="Scalar fill_value, "), "rand_like": _like("rand_like", generator=True),
    "randperm": _randperm,
    "tril_indices": _trilu_indices("tril_indices"), "triu_indices": _trilu_indices("triu_indices"),
}

METHODS: dict[str, Any] = {
    **{name: _BIND.method(name, _BOUND[name]) for name in (
        "flip", "roll", "repeat", "chunk", "narrow", "flatten", "tril", "triu", "tril_", "triu_", "movedim",
        "moveaxis", "swapaxes", "swapdims", "diag", "diagflat", "diag_embed")},
    "split": _split, "split_with_sizes": _split_with_sizes, "unbind": _unbind, "tensor_split": _tensor_split,
    "unflatten": _unflatten, "diagonal": _diagonal, "select_scatter": _select_scatter,
    "slice_scatter": _slice_scatter, "diagonal_scatter": _diagonal_scatter, "adjoint": _adjoint,
    "expand_as": lambda self, other: A.expand_as.default(self, other),
    "view_as": lambda self, other: A.view_as.default(self, other),
    "reshape_as": lambda self, other: A.reshape_as.default(self, other),
    "type_as": _type_as,
    "T": property(lambda self: A.numpy_T.default(self), doc="``self`` with its dimensions reversed."),
    "mT": property(lambda self: A.mT.default(self), doc="The last two dimensions transposed."),
    "mH": property(lambda self: A.mH.default(self), doc="The conjugate transpose of the last two dimensions."),
    "H": property(lambda self: A.matrix_H.default(self), doc="The conjugate transpose of a matrix."),
    "new_zeros": _new_factory("new_zeros"),
    "new_ones": _new_factory("new_ones"),
    "new_empty": _new_factory("new_empty"),
    "new_full": _new_factory("new_full", fill=True),
    "new_tensor": _new_tensor,
    "__iter__": _iter,
    "resize_": _resize_method,
}
