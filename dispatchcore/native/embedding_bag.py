"""``embedding_bag``: sums, means or maxima of bags of embedding rows, and its backward operators.

The family: the Core ATen ``_embedding_bag`` and its twin ``_embedding_bag_forward_only`` (what
``embedding_bag`` calls when nothing needs a gradient), the public ``embedding_bag`` overloads
(CompositeImplicitAutograd), and the backward chain torch dispatches: ``_embedding_bag_backward``
-> ``_embedding_bag_dense_backward``, plus ``_embedding_bag_per_sample_weights_backward``.

Mirrors ``aten/src/ATen/native/EmbeddingBag.cpp`` as the dispatcher sees it (and the Python meta
kernels of ``torch/_meta_registrations.py``), with the formulas of ``derivatives.yaml``. The rules
the CPU and Meta backends share (torch's checks and texts, the bag layout) are the plain functions
of the first section.

The four outputs, as torch's CPU kernel makes them: ``output`` [bags, dim]; ``offset2bag`` (the bag
of each index; empty on the sum fast path, which does not need it); ``bag_size`` (indices per bag,
padding excluded; zeros in sum mode); ``max_indices`` (the arg-max row per bag and feature in max
mode, else a copy of ``bag_size``). Index outputs have the promoted dtype of indices and offsets.

Invariant: each operator is registered at exactly the keys torch 2.13 registers it; composite
kernels and derivative formulas call dispatched operators only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES
from ..ops import aten as A
from ..tensor import Tensor
from .norms import _no_derivative, _not_implemented

__all__ = ["FUNCTIONS", "METHODS", "MODE_MAX", "MODE_MEAN", "MODE_SUM", "SCHEMAS", "check_arguments",
           "embedding_bag", "fast_path_sum", "index_dtype", "num_bags", "register", "register_autograd"]

MODE_SUM, MODE_MEAN, MODE_MAX = 0, 1, 2

_BAG_ARGS = ("Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
             "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False")
_FOUR = "(Tensor, Tensor, Tensor, Tensor)"
SCHEMAS: tuple[str, ...] = (
    f"_embedding_bag({_BAG_ARGS}, int padding_idx=-1) -> {_FOUR}",
    f"_embedding_bag_forward_only({_BAG_ARGS}, int padding_idx=-1) -> {_FOUR}",
    f"embedding_bag({_BAG_ARGS}) -> {_FOUR}",
    "embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, "
    f"bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> {_FOUR}",
    "_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, Tensor bag_size, "
    "Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, bool sparse, "
    "Tensor? per_sample_weights, int padding_idx=-1) -> Tensor",
    "_embedding_bag_dense_backward(Tensor grad, Tensor indices, Tensor offset2bag, Tensor bag_size, "
    "Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, Tensor? per_sample_weights, "
    "int padding_idx=-1) -> Tensor",
    "_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, "
    "Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor",
)

_IMPROVE = "  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
_FLOATING = ("float16", "bfloat16", "float32", "float64")


# --- rules the backends share (checks, texts, layout) -------------------------------------------------------------
def _type_text(t: Tensor) -> str:
    prefix = "" if t.device.type == "cpu" else f"{t.device.type}."
    return f"torch.{prefix}{SCALAR_TYPE_NAMES[t.dtype.name]}Tensor"


def _check_scalar_types(t: Tensor, name: str, allowed: tuple[str, ...], caller: str = "embedding_bag") -> None:
    """``checkScalarTypes`` (argument #1, as torch's ``TensorArg`` numbers them here)."""
    if t.dtype.name not in allowed:
        names = ", ".join(SCALAR_TYPE_NAMES.get(a, "BFloat16") for a in allowed)
        raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                           f"{names}; but got {_type_text(t)} instead (while checking arguments for {caller})")


def _check_same_type(a: Tensor, a_name: str, b: Tensor, b_name: str) -> None:
    """``checkSameType``: the same dtype (and device)."""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 '{a_name}' to have the same type as tensor for argument "
                           f"#1 '{b_name}'; but type {_type_text(a)} does not equal {_type_text(b)} (while checking "
                           "arguments for embedding_bag)")


def index_dtype(indices: Tensor, offsets: Tensor) -> Any:
    """``promoteIndicesAndOffsets``: the common dtype of indices and offsets (both integral here)."""
    from ..dtypes import promote_types

    return promote_types(indices.dtype, offsets.dtype)


def num_bags(offsets_len: int, include_last_offset: bool) -> int:
    return offsets_len - 1 if include_last_offset else offsets_len


def check_arguments(weight: Tensor, indices: Tensor, offsets: Tensor, mode: int, per_sample_weights: Tensor | None,
                    include_last_offset: bool, first_offset: int | None, last_offset: int | None) -> None:
    """``check_arguments`` of the CPU kernel, in torch's order and words.

    ``indices`` and ``offsets`` are already promoted to one dtype; ``first_offset``/``last_offset``
    are the offsets' end values (``None`` when there are none).
    """
    _check_scalar_types(indices, "indices", ("int64", "int32"))
    _check_scalar_types(offsets, "offsets", ("int64", "int32"))
    _check_same_type(indices, "indices", offsets, "offsets")
    _check_scalar_types(weight, "weight", _FLOATING)
    if mode not in (MODE_SUM, MODE_MEAN, MODE_MAX):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if first_offset is not None:
        if first_offset != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {first_offset}")
        if last_offset > indices.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got "
                               f"offsets[-1] of {last_offset}")
    if per_sample_weights is not None:
        if mode != MODE_SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        _check_same_type(weight, "weight", per_sample_weights, "per_sample_weights")
        if per_sample_weights.dim() != 1:
            raise RuntimeError(f"Expected per_sample_weights.value().dim() == 1 to be true, but got false.{_IMPROVE}")
        if per_sample_weights.numel() != indices.numel():
            raise RuntimeError("Expected per_sample_weights.value().numel() == indices.numel() to be true, but got "
                               f"false.{_IMPROVE}")
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def fast_path_sum(weight: Tensor, per_sample_weights: Tensor | None, padding_idx: int) -> bool:
    """``is_fast_path``: the CPU kernel's fused sum (no ``offset2bag``) for float and half weights."""
    if weight.dtype.name not in ("float32", "float16", "bfloat16") or weight.stride()[1] != 1 or padding_idx >= 0:
        return False
    return per_sample_weights is None or per_sample_weights.stride()[0] == 1


def meta_checks(weight: Tensor, indices: Tensor, offsets: Tensor, mode: int, per_sample_weights: Tensor | None,
                include_last_offset: bool) -> int:
    """``meta_embedding_bag``'s checks (its own texts); the number of bags."""
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype.name not in ("int64", "int32"):
            raise RuntimeError(f"expected {name} to be long or int, got torch.{t.dtype.name}")
    if not weight.dtype.is_floating_point:
        raise RuntimeError(f"expected weight to be floating point type, got torch.{weight.dtype.name}")
    bags = offsets.shape[0]
    if include_last_offset:
        if bags < 1:
            raise RuntimeError("include_last_offset: numBags should be at least 1")
        bags -= 1
    if per_sample_weights is not None:
        if mode != MODE_SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dim() != 1:
            raise RuntimeError(f"expected per_sample_weights to be 1D tensor, got {per_sample_weights.dim()}D")
        if per_sample_weights.numel() != indices.numel():
            raise RuntimeError(f"expected per_sample_weights.numel() ({per_sample_weights.numel()} to be the same as "
                               f"indices.numel() ({indices.numel()})")
    return bags


def backward_index_checks(indices: Tensor, offsets: Tensor) -> None:
    """``_embedding_bag_backward``'s checks of the (promoted) indices and offsets."""
    _check_scalar_types(indices, "indices", ("int64", "int32"))
    _check_contiguous(indices, "indices")
    _check_scalar_types(offsets, "offsets", ("int64", "int32"))
    _check_same_type(indices, "indices", offsets, "offsets")
    _check_contiguous(offsets, "offsets")


def _check_contiguous(t: Tensor, name: str) -> None:
    if not t.is_contiguous():
        raise RuntimeError(f"Expected contiguous tensor, but got non-contiguous tensor for argument #1 '{name}' "
                           "(while checking arguments for embedding_bag)")


def dense_backward_grad_check(grad: Tensor) -> None:
    _check_scalar_types(grad, "grad_", _FLOATING)


def per_sample_weights_backward_mode_check(mode: int) -> None:
    if mode != MODE_SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")


# --- composite kernels ----------------------------------------------------------------------------------------------
def _promoted(indices: Tensor, offsets: Tensor) -> tuple[Tensor, Tensor]:
    common = index_dtype(indices, offsets)
    if indices.dtype is not common:
        indices = A._to_copy.default(indices, dtype=common)
    if offsets.dtype is not common:
        offsets = A._to_copy.default(offsets, dtype=common)
    return indices, offsets


def _make_offset2bag(offsets: Tensor, n: int) -> Tensor:
    """``make_offset2bag``: ones at each bag start (the first dropped), summed up; ``n`` entries."""
    marks = A.zeros.default([n + 1], dtype=offsets.dtype, device=offsets.device)
    # torch's index_add_ (not modelled): index_put_ with accumulate adds the same ones at the same places
    marks = A.index_put_.default(marks, [offsets], A.ones_like.default(offsets), True)
    # torch lowers the first mark by one before the running sum: the same as lowering the whole sum
    return A.slice.Tensor(A.sub.Scalar(A.cumsum.default(marks, 0, dtype=offsets.dtype), 1), 0, 0, n)


def _embedding_bag_backward(grad: Tensor, indices: Tensor, offsets: Tensor, offset2bag: Tensor, bag_size: Tensor,
                            maximum_indices: Tensor, num_weights: int, scale_grad_by_freq: bool, mode: int,
                            sparse: bool, per_sample_weights: Tensor | None, padding_idx: int = -1) -> Tensor:
    """``_embedding_bag_backward`` (CPU): checks, then the dense backward.

    ``offset2bag`` is rebuilt from the offsets when the forward's sum fast path left it empty.
    """
    indices, offsets = _promoted(indices, offsets)
    backward_index_checks(indices, offsets)
    if indices.numel() != 0 and offset2bag.numel() == 0:
        offset2bag = _make_offset2bag(offsets, indices.shape[0])
    else:
        _check_scalar_types(offset2bag, "offset2bag", ("int64", "int32"))
        _check_contiguous(offset2bag, "offset2bag")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): sparse gradients (_embedding_bag_sparse_backward) are "
                                  "not modelled, dispatchcore has no sparse layout")
    return A._embedding_bag_dense_backward.default(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                                   scale_grad_by_freq, mode, per_sample_weights, padding_idx)


def _meta_embedding_bag_backward(grad: Tensor, indices: Tensor, offsets: Tensor, offset2bag: Tensor,
                                 bag_size: Tensor, maximum_indices: Tensor, num_weights: int,
                                 scale_grad_by_freq: bool, mode: int, sparse: bool,
                                 per_sample_weights: Tensor | None, padding_idx: int = -1) -> Tensor:
    """``meta_embedding_bag_backward``: the dense backward's meta kernel, without the CPU checks."""
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): sparse gradients (_embedding_bag_sparse_backward) are "
                                  "not modelled, dispatchcore has no sparse layout")
    return A._embedding_bag_dense_backward.default(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                                   scale_grad_by_freq, mode, per_sample_weights, padding_idx)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool, mode: int,
                  sparse: bool, per_sample_weights: Tensor | None, include_last_offset: bool,
                  padding_idx: int | None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``embedding_bag.padding_idx``: the bags of ``weight`` rows, through the operator that fits.

    ``padding_idx`` is checked and wrapped; ``_embedding_bag`` runs when a gradient may be needed,
    else ``_embedding_bag_forward_only``, with contiguous indices and offsets.

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> out = dc.embedding_bag(w, dc.tensor([0, 2, 1]), dc.tensor([0, 2]), False, 1)[0]
        >>> out.tolist()
        [[3.0, 4.0], [3.0, 4.0]]
    """
    pad = -1
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, but got "
                               f"{padding_idx}")
        pad = padding_idx + n if padding_idx < 0 else padding_idx
    needs_grad = weight.requires_grad or (per_sample_weights is not None and per_sample_weights.requires_grad)
    op = A._embedding_bag if needs_grad else A._embedding_bag_forward_only
    return op.default(weight, A.contiguous.default(indices), A.contiguous.default(offsets), scale_grad_by_freq, mode,
                      sparse, per_sample_weights, include_last_offset, pad)


def _embedding_bag_default(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                           mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
                           include_last_offset: bool = False) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``embedding_bag``: the ``padding_idx`` overload without padding."""
    return A.embedding_bag.padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                       include_last_offset, None)


IMPLICIT: dict[str, Callable[..., Any]] = {  # CompositeImplicitAutograd
    "embedding_bag": _embedding_bag_default, "embedding_bag.padding_idx": embedding_bag,
}


def register(lib: Library) -> None:
    """The composite kernels, at the keys torch registers them."""
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives (derivatives.yaml) ------------------------------------------------------------------------------
def _weight_formula(grad: Tensor, indices: Tensor, offsets: Tensor, result1: Tensor, result2: Tensor,
                    result3: Tensor, weight_shape: tuple[int, ...], scale_grad_by_freq: bool, mode: int, sparse: bool,
                    per_sample_weights: Any, padding_idx: int) -> Tensor:
    return A._embedding_bag_backward.default(grad, indices, offsets, result1, result2, result3, weight_shape[0],
                                             scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx)


def _per_sample_weights_formula(grad: Tensor, weight: Tensor, indices: Tensor, offsets: Tensor, result1: Tensor,
                                mode: int, padding_idx: int) -> Tensor:
    return A._embedding_bag_per_sample_weights_backward.default(grad, weight, indices, offsets, result1, mode,
                                                                padding_idx)


def _forward_only_autograd(lib: Library) -> None:
    """The Autograd kernel of ``_embedding_bag_forward_only``, which has no derivative.

    torch's generated kernel computes, then fails to attach its ``NotImplemented`` node to the
    integral ``offset2bag`` when weight or per_sample_weights requires grad.
    """
    from ..autograd.grad_mode import is_grad_enabled
    from ..autograd.kernels import _make_nondifferentiable_kernel
    from ..dispatcher import get_dispatcher

    inner = _make_nondifferentiable_kernel(get_dispatcher().find_op("aten::_embedding_bag_forward_only"))

    def autograd_kernel(bits: int, weight: Tensor, *args: Any, **kwargs: Any) -> Any:
        out = inner(bits, weight, *args, **kwargs)
        psw = args[5] if len(args) > 5 else kwargs.get("per_sample_weights")
        if is_grad_enabled() and (weight.requires_grad or (psw is not None and psw.requires_grad)):
            raise RuntimeError(f"Autograd not support dtype: {SCALAR_TYPE_NAMES[out[1].dtype.name]}")
        return out

    autograd_kernel.__qualname__ = "autograd_kernel[aten::_embedding_bag_forward_only]"
    lib.impl("_embedding_bag_forward_only", autograd_kernel, "Autograd", with_keyset=True, _raw_keyset=True)


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names (``derivatives.yaml``)."""
    from ..autograd.kernels import register_derivative

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> Any:
        return register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    r("_embedding_bag", "EmbeddingBagBackward0", ("weight", "per_sample_weights"),
      (_weight_formula, _per_sample_weights_formula), differentiable_outputs=(0,))
    r("_embedding_bag_backward", "EmbeddingBagBackwardBackward0", ("grad", "per_sample_weights"),
      (_not_implemented("_embedding_bag_backward"),) * 2)
    r("_embedding_bag_dense_backward", "EmbeddingBagDenseBackwardBackward0", ("grad", "per_sample_weights"),
      (_not_implemented("_embedding_bag_dense_backward"),) * 2)
    d = r("_embedding_bag_per_sample_weights_backward", "NotImplemented", ("grad", "weight"),
          (_no_derivative("_embedding_bag_per_sample_weights_backward"),) * 2)
    d.node_class._qualified_name = "torch::autograd::NotImplemented"
    _forward_only_autograd(lib)


# --- torch.* functions -------------------------------------------------------------------------------------------
_SIGNATURES = (
    "embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int64_t mode, bool sparse, "
    "Tensor? per_sample_weights, bool include_last_offset, int64_t? padding_idx)",
    "embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int64_t mode=0, "
    "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False)",
)
_PARSER: list[Any] = []


def embedding_bag_function(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``torch.embedding_bag``: torch's two bindings (with ``padding_idx`` first), then the operator.

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> dc.embedding_bag(w, dc.tensor([0, 1, 1]), dc.tensor([0, 1]))[0].tolist()
        [[1.0, 2.0], [6.0, 8.0]]
    """
    if not _PARSER:
        from ..factories import _CHECKS
        from ..schema import PythonArgParser

        _PARSER.append(PythonArgParser(_SIGNATURES, _CHECKS))
    index, bound = _PARSER[0].parse(args, kwargs)
    if index == 0:
        return A.embedding_bag.padding_idx(*bound.values())
    return A.embedding_bag.default(*bound.values())


embedding_bag_function.__name__ = embedding_bag_function.__qualname__ = "embedding_bag"

FUNCTIONS: dict[str, Callable[..., Any]] = {"embedding_bag": embedding_bag_function}
METHODS: dict[str, Callable[..., Any]] = {}
