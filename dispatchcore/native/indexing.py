"""Indexing operators: gather/scatter, ``index_add``/``index_fill``, ``index``/``index_put``, masks, ``take``/``put``.

Mirrors ``aten/src/ATen/native/TensorAdvancedIndexing.cpp`` (``gather``, the ``scatter`` family,
``index_select``, ``index_add``, ``index_fill``, ``index``, ``index_put_``/``_index_put_impl_``,
``masked_fill``, ``masked_scatter``, ``masked_select``, ``take``, ``put``, ``nonzero``),
``IndexingUtils.h`` (the checks and geometry of advanced indexing), ``TensorCompare.cpp``
(``where``) and ``Unique.cpp`` (``_unique``, which ``index_fill``'s derivative calls, ``_unique2``,
``unique_consecutive``, ``unique_dim``, ``unique_dim_consecutive`` and ``torch.unique``), registered
at the keys torch 2.13 registers them:

* ``CompositeExplicitAutograd`` kernels (``KERNELS_EXPLICIT``): ``index_put`` and
  ``_index_put_impl`` (a clone, then ``_index_put_impl_``), ``index_put_``, ``index_fill``,
  ``masked_fill``, ``masked_scatter`` (an expanded contiguous clone, then the in-place op), ``put``
  (a clone, then ``put_``) and their ``out=`` forms; ``masked_scatter_backward`` (masked_scatter's
  derivative for ``source``). ``index_add`` is structured (its ``out=`` overload is the backend kernel).
* ``isin`` (three overloads and their ``out=`` forms): structured, with backend kernels.
* ``CompositeImplicitAutograd`` decompositions (``KERNELS_IMPLICIT``): ``item``, ``argwhere``,
  ``nonzero_numpy``, ``where(condition)``, ``where`` with Python numbers, and ``take_along_dim``
  (broadcast, wrapped indices, then ``gather``).
* derivatives with torch's node names (``IndexBackward0``, ``IndexPutBackward0``, ...).

Backends share the geometry here (``index_geometry``, the shape checks and error texts), so CPU
and Meta agree. Invariant: ``index.Tensor`` lays its result out as TensorIterator does over the
restrided input and the broadcast indices, and every error is torch's, of torch's type.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from .. import layouts as _layouts
from .._library import Library
from ..ops import aten as A
from ..shapes import broadcast_shapes, wrap_dim
from ..tensor import Tensor
from . import Bindings

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "register", "register_autograd"]

_OUT = "*, Tensor(a!) out) -> Tensor(a!)"
_SCATTER = "(Tensor self, int dim, Tensor index,"
SCHEMAS: tuple[str, ...] = (
    # gather / scatter
    "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
    "gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> Tensor(a!)",
    "take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
    "take_along_dim.out(Tensor self, Tensor indices, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)",
    f"scatter.src{_SCATTER} Tensor src) -> Tensor",
    f"scatter.value{_SCATTER} Scalar value) -> Tensor",
    f"scatter.reduce{_SCATTER} Tensor src, *, str reduce) -> Tensor",
    f"scatter.value_reduce{_SCATTER} Scalar value, *, str reduce) -> Tensor",
    "scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
    "scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
    "scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor(a!)",
    "scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor(a!)",
    f"scatter.src_out{_SCATTER} Tensor src, {_OUT}",
    f"scatter.value_out{_SCATTER} Scalar value, {_OUT}",
    f"scatter.reduce_out{_SCATTER} Tensor src, *, str reduce, Tensor(a!) out) -> Tensor(a!)",
    f"scatter.value_reduce_out{_SCATTER} Scalar value, *, str reduce, Tensor(a!) out) -> Tensor(a!)",
    f"scatter_add{_SCATTER} Tensor src) -> Tensor",
    "scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
    f"scatter_add.out{_SCATTER} Tensor src, {_OUT}",
    f"scatter_reduce.two{_SCATTER} Tensor src, str reduce, *, bool include_self=True) -> Tensor",
    "scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, "
    "bool include_self=True) -> Tensor(a!)",
    f"scatter_reduce.two_out{_SCATTER} Tensor src, str reduce, *, bool include_self=True, Tensor(a!) out) "
    "-> Tensor(a!)",
    "index_select(Tensor self, int dim, Tensor index) -> Tensor",
    f"index_select.out(Tensor self, int dim, Tensor index, {_OUT}",
    "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
    "index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)",
    "index_add.out(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, Tensor(a!) out) "
    "-> Tensor(a!)",
    "index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
    "index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
    "index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
    "index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> Tensor(a!)",
    f"index_fill.int_Scalar_out(Tensor self, int dim, Tensor index, Scalar value, {_OUT}",
    f"index_fill.int_Tensor_out(Tensor self, int dim, Tensor index, Tensor value, {_OUT}",
    "_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (Tensor, Tensor)",
    *(schema for overload, args in (("Tensor_Tensor", "Tensor elements, Tensor test_elements"),
                                    ("Tensor_Scalar", "Tensor elements, Scalar test_element"),
                                    ("Scalar_Tensor", "Scalar element, Tensor test_elements"))
      for schema in (f"isin.{overload}({args}, *, bool assume_unique=False, bool invert=False) -> Tensor",
                     f"isin.{overload}_out({args}, *, bool assume_unique=False, bool invert=False, {_OUT}")),
    *(schema for name, head in (
        ("_unique2", "bool sorted=True, bool return_inverse=False, bool return_counts=False"),
        ("unique_consecutive", "bool return_inverse=False, bool return_counts=False, int? dim=None"),
        ("unique_dim", "int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False"),
        ("unique_dim_consecutive", "int dim, bool return_inverse=False, bool return_counts=False"))
      for schema in (f"{name}(Tensor self, {head}) -> (Tensor, Tensor, Tensor)",
                     f"{name}.out(Tensor self, {head}, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) "
                     "-> (Tensor(a!), Tensor(b!), Tensor(c!))")),
    # advanced indexing
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    f"index.Tensor_out(Tensor self, Tensor?[] indices, {_OUT}",
    "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
    f"index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, {_OUT}",
    "_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, "
    "bool unsafe=False) -> Tensor(a!)",
    "_index_put_impl(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, bool unsafe=False) "
    "-> Tensor",
    "_index_put_impl.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, "
    f"bool unsafe=False, {_OUT}",
    # masks
    "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
    "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
    "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
    "masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
    f"masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, {_OUT}",
    f"masked_fill.Tensor_out(Tensor self, Tensor mask, Tensor value, {_OUT}",
    "masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
    "masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)",
    f"masked_scatter.out(Tensor self, Tensor mask, Tensor source, {_OUT}",
    "masked_scatter_backward(Tensor grad_output, Tensor mask, SymInt[] sizes) -> Tensor",
    "masked_select(Tensor self, Tensor mask) -> Tensor",
    f"masked_select.out(Tensor self, Tensor mask, {_OUT}",
    # positions and single elements
    "nonzero(Tensor self) -> Tensor",
    f"nonzero.out(Tensor self, {_OUT}",
    "nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor",
    "nonzero_static.out(Tensor self, *, SymInt size, int fill_value=-1, Tensor(a!) out) -> Tensor(a!)",
    "nonzero_numpy(Tensor self) -> Tensor[]",
    "argwhere(Tensor self) -> Tensor",
    "take(Tensor self, Tensor index) -> Tensor",
    f"take.out(Tensor self, Tensor index, {_OUT}",
    "put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
    "put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)",
    f"put.out(Tensor self, Tensor index, Tensor source, bool accumulate=False, {_OUT}",
    "_local_scalar_dense(Tensor self) -> Scalar",
    "item(Tensor self) -> Scalar",
    # where (where.self is a core operator of dispatchcore.aten)
    "where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
    "where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
    "where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
    "where(Tensor condition) -> Tensor[]",
)


def _shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


# --- checks and geometry shared with the backends' kernels ------------------------------------------
INDEX_DTYPE_ERROR = "tensors used as indices must be long, int, byte or bool tensors"
NONZERO_META_ERROR = (
    "The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
    "data-independent implementation does not exist. This implementation returns a fake value, assuming all "
    "elements of the tensor are non-zero. To enable this registration, please set "
    "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")
_INDEX_KINDS = ("int64", "int32", "uint8", "bool")
_INT_INDEX = ("int64", "int32")


def check_indices(self_shape: Sequence[int], indices: Sequence[Any]) -> None:
    """The checks ``index``/``index_put_`` make before any data is read (``IndexingUtils.h``).

    Each entry of ``indices`` is None or a tensor; masks (bool/uint8) must match the shape of the
    dimensions they index.
    """
    ndim = len(self_shape)
    if len(indices) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(indices)})")
    dim = 0
    for t in indices:
        if t is None:
            dim += 1
            continue
        kind = t.dtype.name
        if kind not in _INDEX_KINDS:
            raise IndexError(INDEX_DTYPE_ERROR)
        if kind in ("uint8", "bool"):
            if kind == "uint8":
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=4)
            mask_shape = tuple(t.shape)
            for j, n in enumerate(mask_shape):
                if dim + j >= ndim:
                    raise IndexError(f"too many indices for tensor of dimension {ndim}")
                if n != self_shape[dim + j]:
                    raise IndexError(f"The shape of the mask {_shape_str(mask_shape)} at index {j} does not match "
                                     f"the shape of the indexed tensor {_shape_str(self_shape)} at index {dim + j}")
            dim += len(mask_shape)
        else:
            dim += 1
    if dim > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {dim})")


def broadcast_indices(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The common shape of the index tensors, or torch's IndexError."""
    try:
        return tuple(broadcast_shapes(*shapes))
    except RuntimeError:
        pass  # See Note [No chained errors]
    raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                     + ", ".join(_shape_str(s) for s in shapes))


def index_geometry(shape: Sequence[int], strides: Sequence[int],
                   indices: Sequence[tuple[Sequence[int], Sequence[int]] | None]
                   ) -> tuple[tuple[int, ...], tuple[int, ...], list[int]]:
    """(result shape, result strides, order of self's dims) of ``index`` with long indices.

    ``indices`` holds, per indexed dimension, None or the (shape, strides) of a long index
    tensor (masks already turned into positions). As ``make_info`` does, non-adjacent indexed
    dims move to the front; the result's layout is the one TensorIterator gives its output over
    the restrided input (index dims stride 0) and the broadcast indices.
    """
    ndim = len(shape)
    entries = list(indices) + [None] * (ndim - len(indices))
    defined = [d for d, e in enumerate(entries) if e is not None]
    first, last = defined[0], defined[-1]
    adjacent = all(entries[d] is not None for d in range(first, last + 1))
    order = list(range(ndim)) if adjacent else defined + [d for d in range(ndim) if entries[d] is None]
    if not adjacent:
        entries = [entries[d] for d in order]
        first, last = 0, len(defined) - 1
    bshape = broadcast_indices([e[0] for e in entries if e is not None])
    before = [shape[d] for d in order[:first]]
    after = [shape[d] for d in order[last + 1:]]
    out_shape = (*before, *bshape, *after)
    src = [strides[d] for d in order[:first]] + [0] * len(bshape) + [strides[d] for d in order[last + 1:]]
    operands = [src]
    nb = len(bshape)
    for e in entries:
        if e is None:
            continue
        ishape, istrides = e
        pad = nb - len(ishape)
        expanded = [0] * pad + [0 if n == 1 and b != 1 else s for n, s, b in zip(ishape, istrides, bshape[pad:])]
        operands.append([0] * len(before) + expanded + [0] * len(after))
    return out_shape, iterator_strides(out_shape, operands), order


def iterator_strides(shape: Sequence[int], operands: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The strides TensorIterator gives a new output of ``shape`` over inputs with these strides.

    Mirrors ``TensorIteratorBase::reorder_dimensions`` (an insertion sort of the dims, fastest
    first, by the first operand whose strides tell them apart; broadcast dims tell nothing), then
    ``compatible_stride`` in that order.
    """
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))
    ops = [[0 if shape[d] == 1 else s for d, s in enumerate(st)] for st in operands]

    def should_swap(d0: int, d1: int) -> int:
        for st in ops:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    strides = [0] * ndim
    step = 1
    for d in perm:
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def index_out_of_bounds(value: int, position: int, size: int) -> IndexError:
    """The index kernels' error: ``position`` counts the indexed dimensions only, as torch's does."""
    if size == 0:
        return IndexError("index is out of bounds for dimension with size 0")
    return IndexError(f"index {value} is out of bounds for dimension {position} with size {size}")


def check_index_put(self_dtype: Any, result_shape: Sequence[int], values_shape: Sequence[int],
                    values_dtype: Any) -> None:
    """``make_index_put_iterator``'s checks: values expand to the indexed shape and share self's dtype."""
    if not _expandable(values_shape, result_shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(values_shape)} cannot be broadcast "
                           f"to indexing result of shape {_shape_str(result_shape)}")
    if values_dtype is not self_dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dt.SCALAR_TYPE_NAMES[self_dtype.name]} for the destination and "
                           f"{_dt.SCALAR_TYPE_NAMES[values_dtype.name]} for the source.")


def _expandable(shape: Sequence[int], target: Sequence[int]) -> bool:
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def is_mask_fill(indices: Sequence[Any], values: Tensor, accumulate: bool) -> bool:
    """``canDispatchToMaskedFill``: one mask (no other index) and one value become ``masked_fill_``."""
    if accumulate or values.numel() != 1 or values.device.type != "cpu":
        return False
    defined = [t for t in indices if t is not None]
    return len(defined) == 1 and defined[0].dtype.name in ("bool", "uint8")


def _index_dtype_check(name: str, index: Tensor) -> None:
    if index.dtype.name not in _INT_INDEX:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def gather_check(self: Tensor, dim: int, index: Tensor) -> int:
    """``gather``'s checks (dim, index dtype and shape); returns the wrapped dim."""
    d = wrap_dim(dim, self.dim())
    _index_dtype_check("gather", index)
    self_shape, index_shape = _as_1d(self), _as_1d(index)
    if index.numel() == 0:
        return d
    if len(index_shape) != len(self_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for i, (n, m) in enumerate(zip(index_shape, self_shape)):
        if i != d and n > m:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {_shape_str(index.shape)} to "
                               f"be no larger than self {_shape_str(self.shape)} apart from dimension {d}")
    return d


def _as_1d(t: Tensor) -> tuple[int, ...]:
    """A 0-d tensor counts as one element in one dimension (``ensure_nonempty_size``)."""
    return tuple(t.shape) or (1,)


def scatter_check(name: str, self: Tensor, dim: int, index: Tensor, src: Tensor | None) -> int:
    """The ``scatter`` family's checks (``scatter_gather_dtype_check``, ``scatter_shape_check``)."""
    d = wrap_dim(dim, self.dim())
    _index_dtype_check("scatter", index)
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.numel() == 0:
        return d
    self_shape, index_shape = _as_1d(self), _as_1d(index)
    if len(index_shape) != len(self_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and len(index_shape) != len(_as_1d(src)):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    src_shape = _as_1d(src) if src is not None else None
    bad = any(i != d and n > m for i, (n, m) in enumerate(zip(index_shape, self_shape)))
    if src_shape is not None:
        bad = bad or any(n > m for n, m in zip(index_shape, src_shape))
    if bad:
        text = (f"Expected index {_shape_str(index.shape)} to be no larger than self {_shape_str(self.shape)} "
                f"apart from dimension {d}")
        if src is not None:
            text += f" and to be no larger size than src {_shape_str(src.shape)}"
        raise RuntimeError(text)
    return d


SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce_name(reduce: str, two: bool) -> str:
    """The reduction of ``scatter(reduce=)`` (add/multiply) or ``scatter_reduce`` (sum, ..., amin)."""
    if two:
        if reduce not in SCATTER_REDUCES:
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
        return reduce
    if reduce == "add":
        return "sum"
    if reduce == "multiply":
        return "prod"
    raise RuntimeError("reduce argument must be either add or multiply.")


def scatter_reduce_warning() -> None:
    warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                  "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                  UserWarning, stacklevel=4)


def index_select_check(self: Tensor, dim: int, index: Tensor) -> int:
    d = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype.name not in _INT_INDEX:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if self.dim() > 0 and self.shape[d] == 0 and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    return d


def index_add_check(self: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    """``index_func_meta_impl``'s checks for ``index_add`` (in its order); returns the wrapped dim."""
    d = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{_dt.SCALAR_TYPE_NAMES[index.dtype.name]} and size: {_shape_str(index.shape)}")
    if index.dtype.name not in _INT_INDEX:
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_dt.SCALAR_TYPE_NAMES[index.dtype.name]}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_add_(): self ({_dt.SCALAR_TYPE_NAMES[self.dtype.name]}) and source "
                           f"({_dt.SCALAR_TYPE_NAMES[source.dtype.name]}) must have the same scalar type")
    if not (d == 0 or d < source.dim()):
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{source.dim()}")
    numel = index.numel()
    if numel != (source.shape[d] if source.dim() else 1):
        if not source.dim():  # torch's message reads source.size(dim) of a 0-d source
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"index_add_(): Number of indices ({numel}) should be equal to source.size(dim): "
                           f"({source.shape[d]}), for dim: {d}")
    if self.dim() != source.dim() or any(n != m for i, (n, m) in enumerate(zip(self.shape, source.shape)) if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_shape_str(self.shape)} source.shape = {_shape_str(source.shape)}")
    return d


def index_fill_check(self: Tensor, dim: int, index: Tensor) -> int:
    """``index_fill_``'s checks before the fill (its order); returns the wrapped dim (a 0-d self counts as 1-d)."""
    if index.dtype.name != "int64":
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = wrap_dim(dim, max(self.dim(), 1))
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    return d


def index_fill_value_check(value: Tensor) -> None:
    """``index_fill_.int_Tensor``: the value is one element, read with ``item()``."""
    if value.dim() != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")


def index_add_out_of_range(value: int, dim: int, ndim: int, size: int) -> Exception:
    """``index_add``'s bound error: the slice path (more than one dim) names the index, the 1-d path does not."""
    if ndim > 1:
        return RuntimeError(f"index {value} is out of bounds for dimension {dim} with size {size}")
    return IndexError("index out of range in self")


def put_check(self: Tensor, index: Tensor, source: Tensor) -> None:
    """``put_``'s type and index checks, in its order."""
    if index.dtype.name != "int64":
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{_dt.SCALAR_TYPE_NAMES[index.dtype.name]}")
    if self.dtype is not source.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_dt.SCALAR_TYPE_NAMES[self.dtype.name]} and source.dtype = "
                           f"{_dt.SCALAR_TYPE_NAMES[source.dtype.name]}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if self.numel() == 0 and index.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")


def index_select_out_of_range(value: int, dim: int, ndim: int, size: int) -> Exception:
    """Torch's text differs by path: the dim-1 kernel names the element, the others do not."""
    if ndim > 1 and dim == 1:
        return RuntimeError(f"INDICES element is out of DATA bounds, id={value} axis_dim={size}")
    return IndexError("index out of range in self")


def masked_fill_check(mask: Tensor, value: Tensor | None = None) -> None:
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dt.TYPEMETA_NAMES[mask.dtype.name]}")
    if value is not None and value.dim() != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")


def masked_scatter_check(self: Tensor, mask: Tensor, source: Tensor) -> None:
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_dt.SCALAR_TYPE_NAMES[mask.dtype.name]}")
    if self.dtype is not source.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{_dt.SCALAR_TYPE_NAMES[self.dtype.name]} and {_dt.SCALAR_TYPE_NAMES[source.dtype.name]}")


def inplace_broadcast_check(self_shape: Sequence[int], other_shape: Sequence[int]) -> None:
    """An in-place op's operand must expand to ``self`` (``expand_inplace``)."""
    shape = tuple(broadcast_shapes(self_shape, other_shape))
    if shape != tuple(self_shape):
        raise RuntimeError(f"output with shape {_shape_str(self_shape)} doesn't match the broadcast shape "
                           f"{_shape_str(shape)}")


def take_check(self: Tensor, index: Tensor) -> None:
    if index.dtype.name != "int64":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_dt.SCALAR_TYPE_NAMES[index.dtype.name]}")
    if self.numel() == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")


def nonzero_static_check(size: int) -> None:
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")


# --- CompositeExplicitAutograd ----------------------------------------------------------------------
def _write_out(result: Tensor, out: Tensor) -> Tensor:
    """The out= form of a composite, as torch generates it (``shape.write_generated_out``)."""
    from .shape import write_generated_out

    return write_generated_out(result, out)


def index_put(self: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False) -> Tensor:
    return A.index_put_.default(A.clone.default(self), list(indices), values, accumulate)


def index_put_(self: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False) -> Tensor:
    return A._index_put_impl_.default(self, list(indices), values, accumulate, False)


def index_put_out(self: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False, *,
                  out: Tensor) -> Tensor:
    return _write_out(A.index_put.default(self, list(indices), values, accumulate), out)


def index_put_impl(self: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False,
                   unsafe: bool = False) -> Tensor:
    return A._index_put_impl_.default(A.clone.default(self), list(indices), values, accumulate, unsafe)


def index_put_impl_out(self: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False,
                       unsafe: bool = False, *, out: Tensor) -> Tensor:
    return _write_out(A._index_put_impl.default(self, list(indices), values, accumulate, unsafe), out)


def _expanded_clone(self: Tensor, mask: Tensor) -> Tensor:
    """``expand_outplace(mask, self)``, then a contiguous clone of self's part."""
    shape = list(broadcast_shapes(tuple(mask.shape), tuple(self.shape)))
    expanded = self if list(self.shape) == shape else A.expand.default(self, shape)
    return A.clone.default(expanded, memory_format=_layouts.contiguous_format)


def masked_fill_scalar(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    return A.masked_fill_.Scalar(_expanded_clone(self, mask), mask, value)


def masked_fill_tensor(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    return A.masked_fill_.Tensor(_expanded_clone(self, mask), mask, value)


def masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return A.masked_scatter_.default(_expanded_clone(self, mask), mask, source)


def masked_scatter_backward(grad_output: Tensor, mask: Tensor, sizes: Sequence[int]) -> Tensor:
    """``masked_scatter_backward_symint``: the masked elements of ``grad_output``, zero-padded to ``sizes``."""
    numel = 1
    for n in sizes:
        numel *= n
    selected = A.masked_select.default(grad_output, mask)
    missing = numel - selected.numel()
    if missing > 0:
        zeros = A.zeros.default([missing], dtype=grad_output.dtype, device=grad_output.device)
        selected = A.cat.default([selected, zeros], 0)
    return A.view.default(selected, list(sizes))


def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``self.clone(at::MemoryFormat::Preserve).put_(index, source, accumulate)``."""
    return A.put_.default(A.clone.default(self, memory_format=_layouts.preserve_format), index, source, accumulate)


def _put_out(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False, *, out: Tensor) -> Tensor:
    """``put.out``: the out= kernel torch generates for ``put`` (the result, resized into ``out``)."""
    from .shape import generated_out

    return generated_out(A.put.default)(self, index, source, accumulate, out=out)


def index_fill_scalar(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``self.clone(at::MemoryFormat::Preserve).index_fill_(dim, index, value)``."""
    return A.index_fill_.int_Scalar(A.clone.default(self, memory_format=_layouts.preserve_format), dim, index, value)


def index_fill_tensor(self: Tensor, dim: int, index: Tensor, value: Tensor) -> Tensor:
    return A.index_fill_.int_Tensor(A.clone.default(self, memory_format=_layouts.preserve_format), dim, index, value)


def _unique_out(name: str) -> Callable[..., Any]:
    """The generated out= kernel of a ``unique`` operator: each of the three results written out."""
    from .shape import write_generated_out

    def out_kernel(self: Tensor, *args: Any, out0: Tensor, out1: Tensor, out2: Tensor, **kwargs: Any) -> Any:
        results = getattr(A, name).default(self, *args, **kwargs)
        return tuple(write_generated_out(r, o) for r, o in zip(results, (out0, out1, out2)))

    out_kernel.__name__ = f"{name}_out"
    return out_kernel


KERNELS_EXPLICIT: dict[str, Callable[..., Any]] = {
    **{f"{name}.out": _unique_out(name) for name in ("_unique2", "unique_consecutive", "unique_dim",
                                                    "unique_dim_consecutive")},
    "index_fill.int_Scalar": index_fill_scalar, "index_fill.int_Tensor": index_fill_tensor,
    "index_fill.int_Scalar_out": lambda self, dim, index, value, *, out: _write_out(
        A.index_fill.int_Scalar(self, dim, index, value), out),
    "index_fill.int_Tensor_out": lambda self, dim, index, value, *, out: _write_out(
        A.index_fill.int_Tensor(self, dim, index, value), out),
    "index_put": index_put, "index_put_": index_put_, "index_put.out": index_put_out,
    "_index_put_impl": index_put_impl, "_index_put_impl.out": index_put_impl_out,
    "masked_fill.Scalar": masked_fill_scalar, "masked_fill.Tensor": masked_fill_tensor,
    "masked_fill.Scalar_out": lambda self, mask, value, *, out: _write_out(
        A.masked_fill.Scalar(self, mask, value), out),
    "masked_fill.Tensor_out": lambda self, mask, value, *, out: _write_out(
        A.masked_fill.Tensor(self, mask, value), out),
    "masked_scatter": masked_scatter,
    "masked_scatter.out": lambda self, mask, source, *, out: _write_out(
        A.masked_scatter.default(self, mask, source), out),
    "masked_scatter_backward": masked_scatter_backward,
    "put": put, "put.out": _put_out,
}


# --- CompositeImplicitAutograd ----------------------------------------------------------------------
def item(self: Tensor) -> Any:
    n = self.numel()
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return A._local_scalar_dense.default(self)


def nonzero_numpy(self: Tensor) -> list[Tensor]:
    if self.dim() == 0:
        return A.unbind.int(A.nonzero.default(A.unsqueeze.default(self, 0)), 1)
    return A.unbind.int(A.nonzero.default(self), 1)


def _where_scalar(condition: Tensor, self: Any, other: Any) -> Tensor:
    """``where`` with a number on one side or both (``where.ScalarSelf``/``ScalarOther``/``Scalar``).

    As ``TensorCompare.cpp``: a number becomes ``scalar_tensor`` of the promoted dtype, on the
    tensor's device (the condition's when both are numbers); a tensor is converted to that dtype.
    """
    dtype = _dt.result_type(self, other)
    tensor = self if isinstance(self, Tensor) else other if isinstance(other, Tensor) else condition

    def operand(v: Any) -> Tensor:
        if isinstance(v, Tensor):
            return v if v.dtype is dtype else A._to_copy.default(v, dtype=dtype)
        return A.scalar_tensor.default(v, dtype=dtype, device=tensor.device)

    return A.where.self(condition, operand(self), operand(other))


def _take_along_dim_checks(tensors: tuple[Tensor, ...], device: Any) -> None:
    """``checkDevice("torch.take_along_dim():", tensors, self.device())``."""
    for t in tensors:
        if t.device != device:
            raise RuntimeError(f"Expected tensor to have {device} Device, but got tensor with {t.device} Device "
                               "(while checking arguments for torch.take_along_dim():)")


def _take_along_dim_helper(self: Tensor, indices: Tensor, dim: int) -> tuple[Tensor, Tensor, int]:
    """``_take_along_dim_helper``: both broadcast, then the indices taken modulo ``self.size(dim)``.

    Each is expanded to the other's shape outside ``dim`` (the indices first); the remainder makes
    negative indices count from the end.
    """
    if self.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {self.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    if indices.dtype is not _dt.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dt.SCALAR_TYPE_NAMES[indices.dtype.name]}")
    dim = wrap_dim(dim, self.dim())
    if self.dim() == 0:  # indices.sym_size(dim) of a 0-d tensor
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    self_sizes, indices_sizes = list(self.shape), list(indices.shape)
    self_sizes[dim] = indices.shape[dim]
    indices_broadcast = A.expand.default(indices, list(broadcast_shapes(self_sizes, indices.shape)))
    indices_sizes[dim] = self.shape[dim]
    self_broadcast = A.expand.default(self, list(broadcast_shapes(indices_sizes, self.shape)))
    return self_broadcast, A.remainder.Scalar(indices_broadcast, self.shape[dim]), dim


def take_along_dim(self: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``at::take_along_dim`` (CompositeImplicitAutograd): ``gather`` along ``dim`` of the broadcast pair.

    Without a dim, both are flattened with ``view(-1)`` (a non-viewable input is refused, as torch).

    Example:
        >>> import dispatchcore as dc
        >>> dc.take_along_dim(dc.tensor([[10, 30, 20], [60, 40, 50]]), dc.tensor([[1], [-1]]), dim=1)
        tensor([[30],
                [50]])
    """
    _take_along_dim_checks((self, indices), self.device)
    if dim is None:
        return A.gather.default(A.view.default(self, [-1]), 0, A.view.default(indices, [-1]))
    self_broadcast, indices_broadcast, dim = _take_along_dim_helper(self, indices, dim)
    return A.gather.default(self_broadcast, dim, indices_broadcast)


def take_along_dim_out(self: Tensor, indices: Tensor, dim: int | None = None, *, out: Tensor) -> Tensor:
    """``take_along_dim_out``: the same, into ``gather.out``."""
    _take_along_dim_checks((self, indices, out), self.device)
    if dim is None:
        return A.gather.out(A.view.default(self, [-1]), 0, A.view.default(indices, [-1]), out=out)
    self_broadcast, indices_broadcast, dim = _take_along_dim_helper(self, indices, dim)
    return A.gather.out(self_broadcast, dim, indices_broadcast, out=out)


KERNELS_IMPLICIT: dict[str, Callable[..., Any]] = {
    "take_along_dim": take_along_dim, "take_along_dim.out": take_along_dim_out,
    "item": item,
    "argwhere": lambda self: A.nonzero.default(self),
    "nonzero_numpy": nonzero_numpy,
    "where": lambda condition: A.nonzero_numpy.default(condition),
    "where.ScalarSelf": _where_scalar, "where.ScalarOther": _where_scalar, "where.Scalar": _where_scalar,
}


def register(lib: Library) -> None:
    """Register the CompositeExplicitAutograd and CompositeImplicitAutograd kernels at torch's keys."""
    for name, kernel in KERNELS_EXPLICIT.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in KERNELS_IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives (derivatives.yaml's formulas, dispatched operators only) ---------------------------
def isin_dtype_check(dtype: Any, python: bool = False) -> None:
    """``check_for_unsupported_isin_dtype``: bool and complex are refused (``python``: the meta's words)."""
    if dtype.name == "bool" or dtype.is_complex:
        name = f"torch.{dtype.name}" if python else _dt.SCALAR_TYPE_NAMES[dtype.name]
        raise RuntimeError(f"Unsupported input type encountered for isin(): {name}")


def _not_implemented(name: str) -> Callable[[Tensor], Tensor]:
    """derivatives.yaml's ``self: not_implemented("<name>")``: backward raises torch's error."""
    def formula(g: Tensor) -> Tensor:
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    return formula


_unique_backward = _not_implemented("_unique")


def _zero(g: Tensor) -> Tensor:
    return A.scalar_tensor.default(0, dtype=g.dtype, device=g.device)


def _gather_backward(g: Tensor, self_shape: tuple[int, ...], dim: int, index: Tensor) -> Tensor:
    """``gather_backward``: ``grad.new_zeros(self.sizes())``, then ``scatter_add_`` (``scatter_add``, subclass-like)."""
    from ..autograd.derivatives import subclass_like

    result = A.new_zeros.default(g, list(self_shape))
    if subclass_like(index, g):
        return A.scatter_add.default(result, dim, index, g)
    return A.scatter_add_.default(result, dim, index, g)


def _index_backward(g: Tensor, self_shape: tuple[int, ...], self_dtype: Any, self_device: Any,
                    indices: Sequence[Any]) -> Tensor:
    """``index_backward(grad.new_zeros(self.sizes(), self.options()), indices, grad)``.

    An accumulating ``_index_put_impl_``, or ``index_put`` when subclass-like.
    """
    from ..autograd.derivatives import subclass_like

    zeros = A.new_zeros.default(g, list(self_shape), dtype=self_dtype, device=self_device)
    if subclass_like(zeros, g, *indices):
        return A.index_put.default(zeros, list(indices), g, True)
    return A._index_put_impl_.default(zeros, list(indices), g, True, True)


def _index_put_self(g: Tensor, indices: Sequence[Any], values_shape: tuple[int, ...], values_dtype: Any,
                    values_device: Any, accumulate: bool) -> Tensor:
    """``accumulate ? grad : grad.index_put(indices, zeros_like(values), false)``.

    torch saves values' sizes and options only and calls ``at::zeros`` (load_derivatives.py).
    """
    if accumulate:
        return g
    zeros = A.zeros.default(list(values_shape), dtype=values_dtype, device=values_device)
    return A.index_put.default(g, list(indices), zeros, False)


def _index_select_backward(g: Tensor, self_shape: tuple[int, ...], dim: int, index: Tensor) -> Tensor:
    """``index_select_backward_symint``: ``grad.new_zeros(self_sizes).index_add_(dim, index, grad)``.

    ``index_add`` out of place when subclass-like.
    """
    from ..autograd.derivatives import subclass_like

    zeros = A.new_zeros.default(g, list(self_shape))
    if subclass_like(g, index):
        return A.index_add.default(zeros, dim, index, g)
    return A.index_add_.default(zeros, dim, index, g)


def _index_add_source(g: Tensor, dim: int, index: Tensor, source_shape: tuple[int, ...], alpha: Any) -> Tensor:
    """index_add's ``source`` derivative: the gradient's selected slices, times ``alpha`` unless it is 1.

    ``maybe_multiply(source.dim() > 0 ? grad.index_select(dim, index).expand_as(source)
    : grad.index_select(dim, index.squeeze(0)), alpha)``.
    """
    if source_shape:
        grad = A.expand.default(A.index_select.default(g, dim, index), list(source_shape))
    else:
        grad = A.index_select.default(g, dim, A.squeeze.dim(index, 0))
    return grad if alpha == 1 else A.mul.Scalar(grad, alpha)  # maybe_multiply: a Scalar equal to 1 is no call


def _put_self(g: Tensor, index: Tensor, source_shape: tuple[int, ...], source_dtype: Any, source_device: Any,
              accumulate: bool) -> Tensor:
    """``accumulate ? grad : grad.put(index, zeros_like(source), false)``: torch saves source's sizes and options."""
    if accumulate:
        return g
    zeros = A.zeros.default(list(source_shape), dtype=source_dtype, device=source_device)
    return A.put.default(g, index, zeros, False)


def _put_source(g: Tensor, index: Tensor, source_shape: tuple[int, ...]) -> Tensor:
    """``grad.take(index).reshape_as(source)``."""
    return A.reshape.default(A.take.default(g, index), list(source_shape))


def _masked_scatter_source(g: Tensor, mask: Tensor, source_shape: tuple[int, ...]) -> Tensor:
    return A.masked_scatter_backward.default(g, mask, list(source_shape))


def _masked_select_backward(g: Tensor, self: Tensor, mask: Tensor) -> Tensor:
    """``masked_select_backward``: ``zeros_like(self.expand(...))``, then ``masked_scatter_``.

    Out of place (``masked_scatter``) when subclass-like.
    """
    from ..autograd.derivatives import subclass_like

    shape = list(broadcast_shapes(tuple(self.shape), tuple(mask.shape)))
    result = A.zeros_like.default(A.expand.default(self, shape), memory_format=_layouts.preserve_format)
    if subclass_like(g, mask):
        return A.masked_scatter.default(result, mask, g)
    return A.masked_scatter_.default(result, mask, g)


def _take_backward(g: Tensor, self: Tensor, index: Tensor) -> Tensor:
    """``take_backward``: ``zeros_like(self)``, then an accumulating ``put_`` (``put`` when subclass-like)."""
    from ..autograd.derivatives import subclass_like

    grad_self = A.zeros_like.default(self)
    if subclass_like(g, index):
        return A.put.default(grad_self, index, g, True)
    return A.put_.default(grad_self, index, g, True)


def _scatter_reduce_backward(g: Tensor, self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                             include_self: bool, result: Tensor) -> tuple[Tensor, Tensor]:
    """``scatter_reduce_backward`` of FunctionsManual.cpp, for sum, prod, mean, amax and amin."""
    if reduce == "sum":
        grad_self, grad_src = g, A.gather.default(g, dim, index)
    elif reduce == "prod":
        masked_self = A.masked_fill.Scalar(self, A.eq.Scalar(self, 0), 1)
        masked_result = A.scatter_reduce.two(masked_self, dim, index, src, reduce, include_self=include_self)
        grad_self = A.div.Tensor(A.mul.Tensor(g, masked_result), masked_self)
        src_zero = A.eq.Scalar(src, 0)
        zero_counts = A.scatter_add.default(A.zeros_like.default(self), dim, index,
                                            A._to_copy.default(src_zero, dtype=self.dtype))
        zeros_count = A.gather.default(zero_counts, dim, index)
        single_zero = A.bitwise_and.Tensor(src_zero, A.eq.Scalar(zeros_count, 1))
        masked_src = A.masked_fill.Scalar(src, single_zero, 1)
        masked_src_result = A.scatter_reduce.two(self, dim, index, masked_src, reduce, include_self=include_self)
        # where(single_zero, (grad * msr).gather(...), (grad * result).gather(...) / src.masked_fill(src_zero, 1)):
        # GCC evaluates the arguments right to left, and a division's divisor first
        divisor = A.masked_fill.Scalar(src, src_zero, 1)
        otherwise = A.div.Tensor(A.gather.default(A.mul.Tensor(g, result), dim, index), divisor)
        at_single_zero = A.gather.default(A.mul.Tensor(g, masked_src_result), dim, index)
        grad_src = A.where.self(single_zero, at_single_zero, otherwise)
    elif reduce == "mean":
        count = A.ones_like.default(g) if include_self else A.zeros_like.default(g)
        count = A.scatter_add.default(count, dim, index, A.ones_like.default(src))
        count = A.masked_fill_.Scalar(count, A.eq.Scalar(count, 0), 1)
        grad_self = A.div.Tensor(g, count)
        count_src = A.gather.default(count, dim, index)
        grad_src = A.div.Tensor(A.gather.default(g, dim, index), count_src)
    else:  # amax, amin: the gradient is shared evenly by the values equal to the result
        value = A.gather.default(result, dim, index)
        self_is = A._to_copy.default(A.eq.Tensor(self, result), dtype=self.dtype)
        src_is = A._to_copy.default(A.eq.Tensor(src, value), dtype=self.dtype)
        distributed = A.div.Tensor(g, A.scatter_add.default(self_is, dim, index, src_is))
        grad_self = A.mul.Tensor(A.eq.Tensor(self, result), distributed)
        gathered = A.gather.default(distributed, dim, index)
        grad_src = A.mul.Tensor(A.eq.Tensor(src, value), gathered)
    if not include_self:
        grad_self = A.scatter.value(grad_self, dim, index, 0)
    return grad_self, grad_src


def _scatter_reduce_formula(g: Tensor, self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                            include_self: bool, result: Tensor, grad_input_mask: tuple[bool, ...]) -> tuple[Any, ...]:
    grad_self, grad_src = _scatter_reduce_backward(g, self, dim, index, src, reduce, include_self, result)
    return (grad_self if grad_input_mask[0] else None, grad_src if grad_input_mask[1] else None)


def _no_derivative(op: str) -> Callable[..., Any]:
    """No derivatives.yaml entry, a differentiable output: the backward raises (``NotImplemented``)."""
    def formula(g: Tensor) -> Tensor:
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return formula


NONDIFFERENTIABLE = ("nonzero", "nonzero_static", "_local_scalar_dense", "isin.Tensor_Tensor", "isin.Tensor_Scalar",
                     "isin.Scalar_Tensor")


def register_autograd(lib: Library) -> None:
    """The derivatives of the family's operators, with torch's node names."""
    from ..autograd.kernels import register_derivative, register_nondifferentiable

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> Any:
        return register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    r("gather", "GatherBackward0", ("self",), _gather_backward)
    scatter_src = (lambda g, dim, index: A.scatter.value(g, dim, index, 0),
                   lambda g, dim, index: A.gather.default(g, dim, index))
    scatter_value = lambda g, dim, index: A.scatter.value(g, dim, index, 0)  # noqa: E731
    scatter_add = (lambda g: g, lambda g, dim, index: A.gather.default(g, dim, index))
    for suffix, kw in (("", {}), ("_", {"mutates": "self"})):
        r(f"scatter{suffix}.src", "ScatterBackward0", ("self", "src"), scatter_src, **kw)
        r(f"scatter{suffix}.value", "ScatterBackward1", ("self",), scatter_value, **kw)
        r(f"scatter_add{suffix}", "ScatterAddBackward0", ("self", "src"), scatter_add, **kw)
        r(f"scatter_reduce{suffix}.two", "ScatterReduceBackward0", ("self", "src"), _scatter_reduce_formula, **kw)
        for overload, inputs in (("reduce", ("self", "src")), ("value_reduce", ("self",))):
            d = r(f"scatter{suffix}.{overload}", "NotImplemented", inputs,
                  (_no_derivative(f"scatter{suffix}"),) * len(inputs), **kw)
            d.node_class._qualified_name = "torch::autograd::NotImplemented"
    r("index_select", "IndexSelectBackward0", ("self",), _index_select_backward)
    index_add = (lambda g: g, _index_add_source)
    r("index_add", "IndexAddBackward0", ("self", "source"), index_add)
    fill_self = lambda g, dim, index: A.index_fill.int_Scalar(g, dim, index, 0)  # noqa: E731
    for suffix, kw in (("", {}), ("_", {"mutates": "self"})):
        r(f"index_fill{suffix}.int_Scalar", "IndexFillBackward0", ("self",), fill_self, **kw)
        r(f"index_fill{suffix}.int_Tensor", "IndexFillBackward1", ("self", "value"),
          (fill_self, lambda g, dim, index: A.sum.default(A.index_select.default(
              g, dim, A._unique.default(index, False)[0]))), **kw)
    r("_unique", "UniqueBackward0", ("self",), _unique_backward, differentiable_outputs=(0,))
    for name, node in (("_unique2", "Unique2Backward0"), ("unique_consecutive", "UniqueConsecutiveBackward0"),
                       ("unique_dim", "UniqueDimBackward0"),
                       ("unique_dim_consecutive", "UniqueDimConsecutiveBackward0")):
        r(name, node, ("self",), _not_implemented(name), differentiable_outputs=(0,))
    r("index_add_", "IndexAddBackward0", ("self", "source"), index_add, mutates="self")
    put_formulas = (_put_self, _put_source)
    r("put", "PutBackward0", ("self", "source"), put_formulas)
    r("put_", "PutBackward0", ("self", "source"), put_formulas, mutates="self")
    r("index.Tensor", "IndexBackward0", ("self",), _index_backward)
    index_put = (_index_put_self, lambda g, indices: A.index.Tensor(g, list(indices)))
    r("index_put", "IndexPutBackward0", ("self", "values"), index_put)
    r("index_put_", "IndexPutBackward0", ("self", "values"), index_put, mutates="self")
    r("_index_put_impl_", "IndexPutImplBackward0", ("self", "values"), index_put, mutates="self")
    r("_index_put_impl", "IndexPutImplBackward0", ("self", "values"), index_put)
    masked_fill_self = lambda g, mask: A.masked_fill.Scalar(g, mask, 0)  # noqa: E731
    masked_fill_value = (masked_fill_self, lambda g, mask: A.sum.default(A.where.self(mask, g, _zero(g))))
    for suffix, kw in (("", {}), ("_", {"mutates": "self"})):
        r(f"masked_fill{suffix}.Scalar", "MaskedFillBackward0", ("self",), masked_fill_self, **kw)
        r(f"masked_fill{suffix}.Tensor", "MaskedFillBackward1", ("self", "value"), masked_fill_value, **kw)
        r(f"masked_scatter{suffix}", "MaskedScatterBackward0", ("self", "source"),
          (masked_fill_self, _masked_scatter_source), **kw)
    r("masked_scatter_backward", "MaskedScatterBackwardBackward0", ("grad_output",),
      lambda g, grad_output_shape, grad_output_dtype, grad_output_device, mask: A.masked_scatter.default(
          A.zeros.default(list(grad_output_shape), dtype=grad_output_dtype, device=grad_output_device), mask, g))
    r("masked_select", "MaskedSelectBackward0", ("self",), _masked_select_backward)
    r("take", "TakeBackward0", ("self",), _take_backward)
    for name in NONDIFFERENTIABLE:
        register_nondifferentiable(lib, f"aten::{name}")


# --- torch.* functions and Tensor methods -----------------------------------------------------------
# Signatures in torch's binding format (python_torch_functions / python_variable_methods): the
# overload a call binds to is the one torch's PythonArgParser picks, with its TypeErrors.
_STR = "c10::string_view"
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "gather": ("gather(Tensor input, int64_t dim, Tensor index, *, bool sparse_grad=False, Tensor out=None)",),
    "Tensor.gather": ("gather(int64_t dim, Tensor index, *, bool sparse_grad=False)",),
    "isin": tuple(f"isin({args}, *, bool assume_unique=False, bool invert=False, Tensor out=None)"
                  for args in ("Tensor elements, Tensor test_elements", "Scalar element, Tensor test_elements",
                               "Tensor elements, Scalar test_element")),
    "take_along_dim": ("take_along_dim(Tensor input, Tensor indices, int64_t? dim=None, *, Tensor out=None)",),
    "Tensor.take_along_dim": ("take_along_dim(Tensor indices, int64_t? dim=None)",),
    "scatter": tuple(f"scatter(Tensor input, int64_t dim, Tensor index, {src}, *, {red}Tensor out=None)"
                     for src in ("Tensor src", "Scalar value") for red in ("", f"{_STR} reduce, ")),
    "Tensor.scatter": tuple(f"scatter(int64_t dim, Tensor index, {src}{red})"
                            for src in ("Tensor src", "Scalar value") for red in ("", f", *, {_STR} reduce")),
    "scatter_add": ("scatter_add(Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None)",),
    "Tensor.scatter_add": ("scatter_add(int64_t dim, Tensor index, Tensor src)",),
    "scatter_reduce": (f"scatter_reduce(Tensor input, int64_t dim, Tensor index, Tensor src, {_STR} reduce, *, "
                       "bool include_self=True, Tensor out=None)",),
    "Tensor.scatter_reduce": (f"scatter_reduce(int64_t dim, Tensor index, Tensor src, {_STR} reduce, *, "
                              "bool include_self=True)",),
    "index_select": ("index_select(Tensor input, int64_t dim, Tensor index, *, Tensor out=None)",),
    "Tensor.index_select": ("index_select(int64_t dim, Tensor index)",),
    "index_add": ("index_add(Tensor input, int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1, "
                  "Tensor out=None)",),
    "Tensor.index_add": ("index_add(int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1)",),
    "masked_fill": ("masked_fill(Tensor input, Tensor mask, Tensor value)",
                    "masked_fill(Tensor input, Tensor mask, Scalar value)"),
    "Tensor.masked_fill": ("masked_fill(Tensor mask, Tensor value)", "masked_fill(Tensor mask, Scalar value)"),
    "masked_scatter": ("masked_scatter(Tensor input, Tensor mask, Tensor source, *, Tensor out=None)",),
    "Tensor.masked_scatter": ("masked_scatter(Tensor mask, Tensor source)",),
    "masked_select": ("masked_select(Tensor input, Tensor mask, *, Tensor out=None)",),
    "Tensor.masked_select": ("masked_select(Tensor mask)",),
    "nonzero": ("nonzero(Tensor input, *, Tensor out=None)", "nonzero(Tensor input, *, bool as_tuple)"),
    "Tensor.nonzero": ("nonzero()", "nonzero(*, bool as_tuple)"),
    "nonzero_static": ("nonzero_static(Tensor input, *, SymInt size, int64_t fill_value=-1, Tensor out=None)",),
    "Tensor.nonzero_static": ("nonzero_static(*, SymInt size, int64_t fill_value=-1)",),
    "argwhere": ("argwhere(Tensor input)",),
    "Tensor.argwhere": ("argwhere()",),
    "take": ("take(Tensor input, Tensor index, *, Tensor out=None)",),
    "Tensor.take": ("take(Tensor index)",),
    "index_fill": ("index_fill(Tensor input, int64_t dim, Tensor index, Tensor value)",
                   "index_fill(Tensor input, int64_t dim, Tensor index, Scalar value)"),
    "Tensor.index_fill": ("index_fill(int64_t dim, Tensor index, Tensor value)",
                          "index_fill(int64_t dim, Tensor index, Scalar value)"),
    "put": ("put(Tensor input, Tensor index, Tensor source, bool accumulate=False)",),
    "Tensor.put": ("put(Tensor index, Tensor source, bool accumulate=False)",),
    "where": ("where(Tensor condition)",
              "where(Tensor condition, Tensor input, Tensor other, *, Tensor out=None)",
              "where(Tensor condition, Scalar self, Tensor other)",
              "where(Tensor condition, Tensor input, Scalar other)",
              "where(Tensor condition, Scalar self, Scalar other)"),
    "Tensor.where": ("where(Tensor condition, Tensor other)", "where(Tensor condition, Scalar other)"),
}


def _in_place_signatures(key: str) -> tuple[str, ...]:
    """scatter_, scatter_add_, ...: the method's signatures under another name."""
    name = key.rpartition(".")[2]
    base = name.rstrip("_")
    return tuple(name + s[len(base):] for s in _SIGNATURES[f"Tensor.{base}"])


# torch's binding: which signature the call fits, and its arguments by name
_parse = Bindings(_SIGNATURES, _in_place_signatures).parse


def _function_and_method(name: str, call: Callable[[int, dict[str, Any]], Any],
                         methods: tuple[str, ...] = ()) -> None:
    """``torch.<name>`` and the ``Tensor`` methods in ``methods``: parse as torch does, then ``call``."""
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002 - torch's name
        index, bound = _parse(name, (input, *args), kwargs)
        return call(index, bound)

    function.__name__ = function.__qualname__ = name
    FUNCTIONS[name] = function
    for method_name in methods:
        def method(self: Tensor, *args: Any, _key: str = f"Tensor.{method_name}", **kwargs: Any) -> Any:
            index, bound = _parse(_key, args, kwargs)
            return call(index, {"input": self, "_inplace": _key.endswith("_"), **bound})

        method.__name__ = method.__qualname__ = method_name
        METHODS[method_name] = method


FUNCTIONS: dict[str, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}


def _with_out(functional: Any, out_op: Any, b: dict[str, Any], *args: Any, **kwargs: Any) -> Tensor:
    out = b.get("out")
    return functional(*args, **kwargs) if out is None else out_op(*args, **kwargs, out=out)


def _gather(index: int, b: dict[str, Any]) -> Tensor:
    return _with_out(A.gather.default, A.gather.out, b, b["input"], b["dim"], b["index"],
                     sparse_grad=b["sparse_grad"])


def _scatter(index: int, b: dict[str, Any]) -> Tensor:
    packet = A.scatter_ if b.get("_inplace") else A.scatter
    overload = ("src", "reduce", "value", "value_reduce")[index]
    src = b["src"] if index < 2 else b["value"]
    kwargs = {"reduce": b["reduce"]} if index % 2 else {}
    out = b.get("out")
    if out is not None:
        return getattr(A.scatter, f"{overload}_out")(b["input"], b["dim"], b["index"], src, **kwargs, out=out)
    return getattr(packet, overload)(b["input"], b["dim"], b["index"], src, **kwargs)


def _scatter_add(index: int, b: dict[str, Any]) -> Tensor:
    op = A.scatter_add_.default if b.get("_inplace") else A.scatter_add.default
    return _with_out(op, A.scatter_add.out, b, b["input"], b["dim"], b["index"], b["src"])


def _scatter_reduce(index: int, b: dict[str, Any]) -> Tensor:
    op = A.scatter_reduce_.two if b.get("_inplace") else A.scatter_reduce.two
    return _with_out(op, A.scatter_reduce.two_out, b, b["input"], b["dim"], b["index"], b["src"], b["reduce"],
                     include_self=b["include_self"])


def _index_add(index: int, b: dict[str, Any]) -> Tensor:
    op = A.index_add_.default if b.get("_inplace") else A.index_add.default
    return _with_out(op, A.index_add.out, b, b["input"], b["dim"], b["index"], b["source"], alpha=b["alpha"])


def _index_fill(index: int, b: dict[str, Any]) -> Tensor:
    packet = A.index_fill_ if b.get("_inplace") else A.index_fill
    overload = packet.int_Tensor if index == 0 else packet.int_Scalar
    return overload(b["input"], b["dim"], b["index"], b["value"])


def _put(index: int, b: dict[str, Any]) -> Tensor:
    op = A.put_.default if b.get("_inplace") else A.put.default
    return op(b["input"], b["index"], b["source"], b["accumulate"])


def _masked_fill(index: int, b: dict[str, Any]) -> Tensor:
    packet = A.masked_fill_ if b.get("_inplace") else A.masked_fill
    return (packet.Tensor if index == 0 else packet.Scalar)(b["input"], b["mask"], b["value"])


def _masked_scatter(index: int, b: dict[str, Any]) -> Tensor:
    op = A.masked_scatter_.default if b.get("_inplace") else A.masked_scatter.default
    return _with_out(op, A.masked_scatter.out, b, b["input"], b["mask"], b["source"])


def _nonzero(index: int, b: dict[str, Any]) -> Any:
    if index == 1:
        return tuple(A.nonzero_numpy.default(b["input"])) if b["as_tuple"] else A.nonzero.default(b["input"])
    return _with_out(A.nonzero.default, A.nonzero.out, b, b["input"])


def _where(index: int, b: dict[str, Any]) -> Any:
    if index == 0:
        return tuple(A.where.default(b["condition"]))
    if index == 1:
        number_self, number_other = not isinstance(b["input"], Tensor), not isinstance(b["other"], Tensor)
        if not (number_self or number_other):
            return _with_out(A.where.self, A.where.self_out, b, b["condition"], b["input"], b["other"])
        # the parser lets a number through as a Tensor: take the Scalar overload torch's binding takes
        index = 4 if number_self and number_other else 2 if number_self else 3
    first = b.get("input", b.get("self"))
    return (A.where.self, A.where.ScalarSelf, A.where.ScalarOther, A.where.Scalar)[index - 1](
        b["condition"], first, b["other"])


def _where_method(self: Tensor, condition: Any, other: Any) -> Tensor:
    """``x.where(condition, other)``: ``torch.where(condition, x, other)``."""
    index, b = _parse("Tensor.where", (condition, other), {})
    op = A.where.self if index == 0 else A.where.ScalarOther
    return op(b["condition"], self, b["other"])


def index_put_function(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False,  # noqa: A002
                       *, _inplace: bool = False, _method: bool = False) -> Tensor:
    """``torch.index_put(input, indices, values, accumulate)`` (``index_put_`` with ``_inplace``).

    torch's binding takes ``indices`` as a tuple or list of Tensors: None is refused here (the
    aten operator itself takes None for an unindexed dim).
    """
    name = "index_put_" if _inplace else "index_put"
    if not isinstance(indices, (tuple, list)) or not all(t is None or isinstance(t, Tensor) for t in indices):
        raise TypeError(f"{name}(): argument 'indices' (position {1 if _method else 2}) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if t is None:
            raise TypeError(f"expected Tensor as element {i} in argument {0 if _method else 1}, but got NoneType")
    op = A.index_put_.default if _inplace else A.index_put.default
    return op(input, list(indices), values, accumulate)


_function_and_method("gather", _gather, ("gather",))


def _isin(index: int, b: dict[str, Any]) -> Tensor:
    overload = ("Tensor_Tensor", "Scalar_Tensor", "Tensor_Scalar")[index]
    first = b["elements"] if index != 1 else b["element"]
    second = b["test_elements"] if index != 2 else b["test_element"]
    kwargs = {k: True for k in ("assume_unique", "invert") if b[k]}  # torch's binding passes what differs
    out = b.get("out")
    if out is not None:
        return getattr(A.isin, f"{overload}_out")(first, second, **kwargs, out=out)
    return getattr(A.isin, overload)(first, second, **kwargs)


def _isin_function(*args: Any, **kwargs: Any) -> Tensor:
    """``torch.isin(elements, test_elements, *, assume_unique=False, invert=False, out=None)``.

    Whether each element is among the test elements (either may be a number), as a bool tensor.

    Example:
        >>> import dispatchcore as dc
        >>> dc.isin(dc.tensor([1, 2, 3, 4]), dc.tensor([2, 4, 6]))
        tensor([False,  True, False,  True])
    """
    index, bound = _parse("isin", args, kwargs)
    return _isin(index, bound)


_isin_function.__name__ = _isin_function.__qualname__ = "isin"


FUNCTIONS["isin"] = _isin_function
_function_and_method("take_along_dim", lambda index, b: _with_out(
    A.take_along_dim.default, A.take_along_dim.out, b, b["input"], b["indices"], b["dim"]), ("take_along_dim",))
_function_and_method("scatter", _scatter, ("scatter", "scatter_"))
_function_and_method("scatter_add", _scatter_add, ("scatter_add", "scatter_add_"))
_function_and_method("scatter_reduce", _scatter_reduce, ("scatter_reduce", "scatter_reduce_"))
_function_and_method("index_select", lambda i, b: _with_out(A.index_select.default, A.index_select.out, b, b["input"],
                                                            b["dim"], b["index"]), ("index_select",))
_function_and_method("index_add", _index_add, ("index_add", "index_add_"))
_function_and_method("index_fill", _index_fill, ("index_fill", "index_fill_"))
_function_and_method("put", _put, ("put", "put_"))
_function_and_method("masked_fill", _masked_fill, ("masked_fill", "masked_fill_"))
_function_and_method("masked_scatter", _masked_scatter, ("masked_scatter", "masked_scatter_"))
_function_and_method("masked_select", lambda i, b: _with_out(A.masked_select.default, A.masked_select.out, b,
                                                             b["input"], b["mask"]), ("masked_select",))
_function_and_method("nonzero", _nonzero, ("nonzero",))
_function_and_method("nonzero_static", lambda i, b: _with_out(
    A.nonzero_static.default, A.nonzero_static.out, b, b["input"], size=b["size"], fill_value=b["fill_value"]),
    ("nonzero_static",))
_function_and_method("argwhere", lambda i, b: A.argwhere.default(b["input"]), ("argwhere",))
_function_and_method("take", lambda i, b: _with_out(A.take.default, A.take.out, b, b["input"], b["index"]),
                     ("take",))
_function_and_method("where", _where)
FUNCTIONS["index_put"] = index_put_function
FUNCTIONS["index_put_"] = lambda input, indices, values, accumulate=False: index_put_function(  # noqa: A006
    input, indices, values, accumulate, _inplace=True)
METHODS["where"] = _where_method
METHODS["index_put"] = lambda self, indices, values, accumulate=False: index_put_function(
    self, indices, values, accumulate, _method=True)
METHODS["index_put_"] = lambda self, indices, values, accumulate=False: index_put_function(
    self, indices, values, accumulate, _inplace=True, _method=True)


# --- torch.unique and torch.unique_consecutive (torch/functional.py) --------------------------------------
def _picked(results: Any, return_inverse: bool, return_counts: bool) -> Any:
    """What ``torch.unique`` returns: the values alone, or with the inverse and/or the counts asked for."""
    output, inverse, counts = results
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002 - torch's names
           return_counts: bool = False, dim: int | None = None) -> Any:
    """``torch.unique``: the distinct elements (or slices along ``dim``), sorted, with what was asked.

    The elements go to ``_unique2`` (which sorts either way on CPU), slices to ``unique_dim``; the
    arguments passed on are torch's, trailing defaults left out.

    Example:
        >>> import dispatchcore as dc
        >>> dc.unique(dc.tensor([3, 1, 3, 2]), return_counts=True)
        (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    from .shape import _trailing

    flags = (sorted, return_inverse, return_counts)
    if dim is not None:
        results = A.unique_dim.default(*_trailing(input, dim, *flags, defaults=(True, False, False)))
    else:
        results = A._unique2.default(*_trailing(input, *flags, defaults=(True, False, False)))
    return _picked(results, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim: int | None = None) -> Any:
    """``torch.unique_consecutive``: each run of equal elements (or slices along ``dim``) kept once.

    Example:
        >>> import dispatchcore as dc
        >>> dc.unique_consecutive(dc.tensor([1, 1, 2, 1]))
        tensor([1, 2, 1])
    """
    from .shape import _trailing

    results = A.unique_consecutive.default(*_trailing(input, return_inverse, return_counts, dim,
                                                      defaults=(False, False, None)))
    return _picked(results, return_inverse, return_counts)


def _unique_method(self: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
                   return_counts: bool = False, dim: int | None = None) -> Any:
    return unique(self, sorted, return_inverse, return_counts, dim)


def _unique_consecutive_method(self: Tensor, return_inverse: bool = False, return_counts: bool = False,
                               dim: int | None = None) -> Any:
    return unique_consecutive(self, return_inverse, return_counts, dim)


_unique_method.__name__ = _unique_method.__qualname__ = "unique"
_unique_consecutive_method.__name__ = _unique_consecutive_method.__qualname__ = "unique_consecutive"
def _unique2(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002 - torch's names
             return_counts: bool = False) -> Any:
    """``torch._unique2``: the operator's three results as a tuple."""
    from .shape import _trailing

    return A._unique2.default(*_trailing(input, sorted, return_inverse, return_counts, defaults=(True, False, False)))


FUNCTIONS.update(unique=unique, unique_consecutive=unique_consecutive, _unique2=_unique2)
METHODS.update(unique=_unique_method, unique_consecutive=_unique_consecutive_method)
