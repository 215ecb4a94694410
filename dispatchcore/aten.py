"""The core operator library: PyTorch's ``aten`` schemas, defined through the public ``Library`` API.

Mirrors the entries of ``aten/src/ATen/native/native_functions.yaml`` that dispatchcore models,
with their schemas verbatim, so that tables, dumps and errors name the same operators as torch.
Definitions only: kernels come from backends (``dispatchcore_backends``), from the
backend-independent layers in ``dispatchcore/_core_kernels.py`` (CompositeImplicitAutograd
decompositions, ADInplaceOrView, BackendSelect) and, later, from autograd.
"""

from __future__ import annotations

from ._library import Library
from .ops import aten as _aten_ns

__all__ = ["SCHEMAS", "define_aten", "ELEMENTWISE_UNARY", "COMPARISONS"]

_TENSOR_FACTORY = ("*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                   "bool? pin_memory=None")
ELEMENTWISE_UNARY = ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu")
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def _binary(name: str, alpha: bool) -> list[str]:
    a = ", *, Scalar alpha=1" if alpha else ""
    sa = ", Scalar alpha=1" if alpha else ""
    return [
        f"{name}.Tensor(Tensor self, Tensor other{a}) -> Tensor",
        f"{name}.Scalar(Tensor self, Scalar other{sa}) -> Tensor",
        f"{name}_.Tensor(Tensor(a!) self, Tensor other{a}) -> Tensor(a!)",
        f"{name}_.Scalar(Tensor(a!) self, Scalar other{sa}) -> Tensor(a!)",
        f"{name}.out(Tensor self, Tensor other{a if alpha else ', *'}, Tensor(a!) out) -> Tensor(a!)",
    ]


SCHEMAS: list[str] = [
    *_binary("add", True),
    *_binary("sub", True),
    *_binary("mul", False),
    *_binary("div", False),
    "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
    "div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)",
    "div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)",
    "rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "reciprocal(Tensor self) -> Tensor",
    "maximum(Tensor self, Tensor other) -> Tensor",
    "minimum(Tensor self, Tensor other) -> Tensor",
    "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
    "pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
    "pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
    "square(Tensor self) -> Tensor",
    "square_(Tensor(a!) self) -> Tensor(a!)",
    "square.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    *[f"{u}(Tensor self) -> Tensor" for u in ELEMENTWISE_UNARY],
    *[f"{u}_(Tensor(a!) self) -> Tensor(a!)" for u in ELEMENTWISE_UNARY],
    *[f"{u}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)" for u in ELEMENTWISE_UNARY if u != "relu"],
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
    "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    "clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
    "clamp_min(Tensor self, Scalar min) -> Tensor",
    "clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)",
    "clamp_min.Tensor(Tensor self, Tensor min) -> Tensor",
    "clamp_min_.Tensor(Tensor(a!) self, Tensor min) -> Tensor(a!)",
    "clamp_max(Tensor self, Scalar max) -> Tensor",
    "clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)",
    "clamp_max.Tensor(Tensor self, Tensor max) -> Tensor",
    "clamp_max_.Tensor(Tensor(a!) self, Tensor max) -> Tensor(a!)",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    *[s for c in COMPARISONS for s in (f"{c}.Tensor(Tensor self, Tensor other) -> Tensor",
                                       f"{c}.Scalar(Tensor self, Scalar other) -> Tensor",
                                       f"{c}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                                       f"{c}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")],
    "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "max(Tensor self) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    "mm(Tensor self, Tensor mat2) -> Tensor",
    "bmm(Tensor self, Tensor mat2) -> Tensor",
    "matmul(Tensor self, Tensor other) -> Tensor",
    "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index)"
    " -> (Tensor output, Tensor total_weight)",
    "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100)"
    " -> Tensor",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "stack(Tensor[] tensors, int dim=0) -> Tensor",
    "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "_copy_from(Tensor self, Tensor dst, bool non_blocking=False) -> Tensor",  # copy_ to a device it can't reach
    "detach(Tensor(a) self) -> Tensor(a)",
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
    "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
    "zero_(Tensor(a!) self) -> Tensor(a!)",
    # views: outputs alias their input (Tensor(a)); the ADInplaceOrView kernels record the base
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)",
    "_unsafe_view(Tensor self, SymInt[] size) -> Tensor",  # not a view: no alias annotation
    "t(Tensor(a) self) -> Tensor(a)",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
    "squeeze(Tensor(a) self) -> Tensor(a)",
    "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
    "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
    "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
    "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
    "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
    "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
    "alias(Tensor(a) self) -> Tensor(a)",
    # factories: no tensor arguments, so BackendSelect picks the backend from `device`
    f"empty.memory_format(SymInt[] size, {_TENSOR_FACTORY}, MemoryFormat? memory_format=None) -> Tensor",
    f"empty_strided(SymInt[] size, SymInt[] stride, {_TENSOR_FACTORY}) -> Tensor",
    f"zeros(SymInt[] size, {_TENSOR_FACTORY}) -> Tensor",
    f"ones(SymInt[] size, {_TENSOR_FACTORY}) -> Tensor",
    f"full(SymInt[] size, Scalar fill_value, {_TENSOR_FACTORY}) -> Tensor",
    f"arange.start_step(Scalar start, Scalar end, Scalar step=1, {_TENSOR_FACTORY}) -> Tensor",
    f"linspace(Scalar start, Scalar end, int steps, {_TENSOR_FACTORY}) -> Tensor",
    f"arange(Scalar end, {_TENSOR_FACTORY}) -> Tensor",
    f"arange.start(Scalar start, Scalar end, {_TENSOR_FACTORY}) -> Tensor",
    "arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!)",
    "arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)",
    "linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)",
    f"logspace(Scalar start, Scalar end, int steps, float base=10., {_TENSOR_FACTORY}) -> Tensor",
    "logspace.out(Scalar start, Scalar end, int steps, float base=10., *, Tensor(a!) out) -> Tensor(a!)",
    f"scalar_tensor(Scalar s, {_TENSOR_FACTORY}) -> Tensor",
    f"eye(SymInt n, {_TENSOR_FACTORY}) -> Tensor",
    f"eye.m(SymInt n, SymInt m, {_TENSOR_FACTORY}) -> Tensor",
    "eye.out(SymInt n, *, Tensor(a!) out) -> Tensor(a!)",
    "eye.m_out(SymInt n, SymInt m, *, Tensor(a!) out) -> Tensor(a!)",
]

_library: Library | None = None


def define_aten() -> Library:
    """Define every schema above, then the families' (``dispatchcore.native``), in ``aten`` (once per process)."""
    global _library
    if _library is None:
        from .native import families

        lib = Library("aten", "DEF")
        for schema in SCHEMAS:
            lib.define(schema)
        for family in families():
            for schema in family.SCHEMAS:
                lib.define(schema)
        _library = lib
    return _library


define_aten()
aten = _aten_ns
