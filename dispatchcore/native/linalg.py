"""Products: ``dot``, ``vdot``, ``mv``, ``outer``/``ger``, ``tensordot``, ``inner``, ``kron``, ``cross``, with ``out=``.

Mirrors ``aten/src/ATen/native/Blas.cpp`` (``dot``, ``vdot``, ``mv``, ``dot_check`` and the
``out=`` kernels) and ``addmv``'s checks in ``LinearAlgebra.cpp``, registered at the keys torch
2.13 registers them: ``dot`` and ``vdot`` have backend kernels (``dispatchcore_backends.{cpu,meta,
cuda}``); ``mv`` is CompositeExplicitAutograd (torch fills a new vector with ``addmv_``; here it is
``mm`` with a one-column view, behind addmv's checks); the ``out=`` forms are CompositeExplicitAutograd.
``matmul`` (``_composites.py``) lowers 1-D @ 1-D to ``dot`` and matrix @ vector to ``mv``, as
``_matmul_impl`` does. ``outer`` and ``ger`` are CompositeImplicitAutograd, as in torch: a view of
``self`` as a column times ``vec2``. ``tensordot`` (``Linear.cpp``), ``inner`` and ``kron``
(``LinearAlgebra.cpp``) are CompositeImplicitAutograd too: ``tensordot`` is ``mm`` of two permuted
reshapes (``dot`` when nothing but size-1 dimensions is kept); ``inner`` is ``tensordot`` over the
last dimensions; ``kron`` multiplies two interleaved views. Invariant: every backend makes the checks
here, in torch's order, so a bad call raises torch's error of torch's type whatever the device.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES
from ..ops import aten as A
from ..shapes import dim_list_to_bitset, infer_size, wrap_dim
from ..tensor import Tensor
from . import Bindings
from .structured import check_out_dtype

__all__ = ["FUNCTIONS", "IMPLICIT", "METHODS", "SCHEMAS", "dot_check", "explicit_kernels", "mv_check",
           "mv_shape_check", "register", "register_autograd", "resize_output"]

_OUT = "*, Tensor(a!) out) -> Tensor(a!)"
SCHEMAS: tuple[str, ...] = (
    "dot(Tensor self, Tensor tensor) -> Tensor",
    "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
    f"linalg_cross.out(Tensor self, Tensor other, *, int dim=-1, {_OUT}",
    "cross(Tensor self, Tensor other, int? dim=None) -> Tensor",
    f"cross.out(Tensor self, Tensor other, int? dim=None, *, {_OUT}",
    f"dot.out(Tensor self, Tensor tensor, {_OUT}",
    "vdot(Tensor self, Tensor other) -> Tensor",
    f"vdot.out(Tensor self, Tensor other, {_OUT}",
    "mv(Tensor self, Tensor vec) -> Tensor",
    f"mv.out(Tensor self, Tensor vec, {_OUT}",
    "outer(Tensor self, Tensor vec2) -> Tensor",
    f"outer.out(Tensor self, Tensor vec2, {_OUT}",
    "ger(Tensor self, Tensor vec2) -> Tensor",
    "tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",
    f"tensordot.out(Tensor self, Tensor other, int[] dims_self, int[] dims_other, {_OUT}",
    "inner(Tensor self, Tensor other) -> Tensor",
    f"inner.out(Tensor self, Tensor other, {_OUT}",
    "kron(Tensor self, Tensor other) -> Tensor",
    f"kron.out(Tensor self, Tensor other, {_OUT}",
    f"ger.out(Tensor self, Tensor vec2, {_OUT}",
)


def _name(dtype: Any) -> str:
    return SCALAR_TYPE_NAMES[dtype.name]


# --- checks shared by the backends --------------------------------------------------------------------
def dot_check(self: Tensor, other: Tensor) -> None:
    """``dot_check`` (Blas.cpp): two vectors of one dtype and one length, checked in that order."""
    if self.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {other.dim()}D tensors")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_name(self.dtype)} and "
                           f"{_name(other.dtype)}")
    n1, n2 = self.shape[0], other.shape[0]
    if n1 != n2:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n1}] and src [{n2}] to have the same number "
                           f"of elements, but got {n1} and {n2} elements respectively")


def mv_shape_check(self: Tensor, vec: Tensor) -> None:
    """``mv``'s result vector (``self.size(0)``), then ``addmv``'s meta checks on it, ``self`` and ``vec``."""
    if self.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if self.dim() != 2 or vec.dim() != 1:  # the result is 1-d: torch prints its dim first
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, {vec.dim()}")
    rows, cols = self.shape
    if cols != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{cols}), vec ({vec.shape[0]})")


def mv_check(self: Tensor, vec: Tensor) -> None:
    """Every check ``mv`` makes before computing: the shapes, then ``addmv``'s dtypes (the result takes vec's)."""
    mv_shape_check(self, vec)
    if self.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_name(vec.dtype)}, "
                           f"{_name(self.dtype)}, and {_name(vec.dtype)}")
    if self.dtype.name == "bool" and self.numel():  # an empty matrix is a shortcut before the dtype dispatch
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")


def resize_output(out: Tensor, shape: Sequence[int]) -> None:
    """``at::native::resize_output``: ``resize_`` to ``shape``, warning when ``out`` had elements."""
    if tuple(out.shape) == tuple(shape):
        return
    if out.numel():
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(out.shape)}, which does not "
            f"match the required output shape {list(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
            "tensor t by resizing it, inplace, to zero elements with t.resize_(0).", UserWarning, stacklevel=4)
    A.resize_.default(out, list(shape))


# --- CompositeExplicitAutograd ------------------------------------------------------------------------
def mv(self: Tensor, vec: Tensor) -> Tensor:
    """``mv``: addmv's checks, then ``self @ vec`` as ``mm`` with a one-column view of ``vec``.

    An empty matrix is addmv's shortcut: zeros (beta is 0), whatever the dtype.
    """
    mv_check(self, vec)
    if not self.numel():
        return A.zeros.default([self.shape[0]], dtype=vec.dtype, device=vec.device)
    return A.view.default(A.mm.default(self, A.unsqueeze.default(vec, 1)), [self.shape[0]])


def mv_out(self: Tensor, vec: Tensor, *, out: Tensor) -> Tensor:
    """``mv_out``: addmv.out's checks (the out tensor must have vec's dtype), then the product, resized."""
    mv_shape_check(self, vec)
    check_out_dtype("exact", vec.dtype, out.dtype)
    result = mv(self, vec)
    resize_output(out, result.shape)
    return A.copy_.default(out, result)


def _dot_out(functional: Callable[[Tensor, Tensor], Tensor]) -> Callable[..., Tensor]:
    """``dot_out``/``vdot_out``: resize to 0-d, the dtype check, then ``fill_`` with the product."""
    def out_kernel(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
        resize_output(out, [])
        if out.dtype is not self.dtype:
            raise RuntimeError(f"result dtype {_name(out.dtype)} does not match input dtype {_name(self.dtype)}")
        return A.fill_.Tensor(out, functional(self, other))

    return out_kernel


# --- cross (Cross.cpp): linalg_cross is structured; cross picks a default dim, then calls it ----------
def _size_at(t: Tensor, dim: int) -> int:
    if t.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return int(t.shape[wrap_dim(dim, t.dim())])


def linalg_cross_check(self: Tensor, other: Tensor, dim: int) -> tuple[int, ...]:
    """``linalg_cross``'s meta function: equal ranks, length 3 at ``dim`` (printed as given), broadcast shape."""
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    mine, theirs = _size_at(self, dim), _size_at(other, dim)
    if mine != 3 or theirs != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {mine} and {theirs}")
    return tuple(infer_size(tuple(self.shape), tuple(other.shape)))


_WARNED_CROSS: list[bool] = []


def _cross_dim(self: Tensor, dim: int | None) -> int:
    """``_default_cross_dim``: the dim given, else the first of size 3 (warning once per process)."""
    if dim is not None:
        return dim
    if not _WARNED_CROSS:  # TORCH_WARN_ONCE
        _WARNED_CROSS.append(True)
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=4)
    for i, size in enumerate(self.shape):
        if size == 3:
            return i
    raise RuntimeError("no dimension of size 3 in input")


def cross(self: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``at::cross`` (CompositeImplicitAutograd): ``linalg_cross`` along ``dim`` or the first dim of size 3.

    Example:
        >>> import dispatchcore as dc
        >>> dc.cross(dc.tensor([1.0, 0.0, 0.0]), dc.tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    d = _cross_dim(self, dim)
    return A.linalg_cross.default(self, other, **({} if d == -1 else {"dim": d}))


def cross_out(self: Tensor, other: Tensor, dim: int | None = None, *, out: Tensor) -> Tensor:
    d = _cross_dim(self, dim)
    return A.linalg_cross.out(self, other, **({} if d == -1 else {"dim": d}), out=out)


# --- outer and ger (LinearAlgebra.cpp): CompositeImplicitAutograd, ``self`` as a column times ``vec2`` ---
def _check_1d(t: Tensor, name: str) -> None:
    if t.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    _check_1d(self, "self")
    _check_1d(vec2, "vec2")
    return _ger(self, vec2)


def outer_out(self: Tensor, vec2: Tensor, *, out: Tensor) -> Tensor:
    _check_1d(self, "self")
    _check_1d(vec2, "vec2")
    return A.mul.out(_column(self), vec2, out=out)


def ger(self: Tensor, vec2: Tensor) -> Tensor:
    return A.outer.default(self, vec2)


def ger_out(self: Tensor, vec2: Tensor, *, out: Tensor) -> Tensor:
    warnings.warn("torch.ger is deprecated and will be removed in a future PyTorch release. Use torch.outer "
                  "instead.", UserWarning, stacklevel=2)  # torch's ger.out warns on every call, ger does not
    return A.outer.out(self, vec2, out=out)


def tensordot(self: Tensor, other: Tensor, dims_self: Sequence[int], dims_other: Sequence[int]) -> Tensor:
    """Contract ``dims_self`` of ``self`` with ``dims_other`` of ``other``: one ``mm`` of two reshaped permutes.

    A contracted dimension of size 1 on one side is summed away on the other first (broadcasting).
    """
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, csize = self, other, 1
    for d1, d2 in zip(dims_self, dims_other):
        s1, s2 = self.shape[wrap_dim(d1, self.dim())], other.shape[wrap_dim(d2, other.dim())]
        if s2 == 1:
            t1 = A.sum.dim_IntList(t1, [d1], True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = A.sum.dim_IntList(t2, [d2], True, dtype=t2.dtype)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {d1} and "
                               f"second has size {s2} in dim {d2}")
        else:
            csize *= s1
    kept1 = [i for i, c in enumerate(dim_list_to_bitset(dims_self, self.dim())) if not c]
    kept2 = [i for i, c in enumerate(dim_list_to_bitset(dims_other, other.dim())) if not c]
    size1, size2 = math.prod(t1.shape[i] for i in kept1), math.prod(t2.shape[i] for i in kept2)
    result_shape = [*(self.shape[i] for i in kept1), *(other.shape[i] for i in kept2)]
    p1, p2 = [*kept1, *dims_self], [*dims_other, *kept2]
    if size1 == 1 and size2 == 1:  # every kept dimension has size 1: a dot product (mul and sum if not dense)
        t1, t2 = A.permute.default(t1, p1), A.permute.default(t2, p2)
        if t1.is_contiguous() and t2.is_contiguous():
            return A.reshape.default(A.dot.default(_flat(t1), _flat(t2)), result_shape)
        product = A.mul.Tensor(A.squeeze.default(t1), A.squeeze.default(t2))
        return A.reshape.default(A.sum.default(product, dtype=t1.dtype), result_shape)
    t1 = A.reshape.default(A.permute.default(t1, p1), [size1, csize])
    t2 = A.reshape.default(A.permute.default(t2, p2), [csize, size2])
    return A.reshape.default(A.mm.default(t1, t2), result_shape)


def _flat(t: Tensor) -> Tensor:
    """``t.flatten()``: a 1-d tensor is itself (no call), others a reshape."""
    return t if t.dim() == 1 else A.reshape.default(t, [t.numel()])


def tensordot_out(self: Tensor, other: Tensor, dims_self: Sequence[int], dims_other: Sequence[int], *,
                  out: Tensor) -> Tensor:
    result = tensordot(self, other, dims_self, dims_other)
    if not (out.device == self.device == other.device):
        raise RuntimeError(f"tensordot: Expected the output and input tensors to be on the same device, but got the "
                           f"output tensor on {out.device}, input tensor a on {self.device}, and input tensor b on "
                           f"{other.device}")
    if result.dtype is not out.dtype:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype "
                           f"{SCALAR_TYPE_NAMES[result.dtype.name]}, but got an output tensor with dtype "
                           f"{SCALAR_TYPE_NAMES[out.dtype.name]}")
    resize_output(out, result.shape)
    return A.copy_.default(out, result)


def inner(self: Tensor, other: Tensor) -> Tensor:
    if self.dim() == 0 or other.dim() == 0:
        return A.mul.Tensor(self, other)
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(self.shape)} and {list(other.shape)}")
    return A.tensordot.default(self, other, [-1], [-1])


def inner_out(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    result = inner(self, other)
    resize_output(out, result.shape)
    return A.copy_.default(out, result)


def _kron_views(self: Tensor, other: Tensor) -> tuple[Tensor, Tensor, list[int], list[int]]:
    """``KronImpl``: ``self`` as (a0, 1, a1, 1, ...), ``other`` as (1, b0, 1, b1, ...), both padded to one rank."""
    ndim = max(self.dim(), other.dim())
    a = [1] * (ndim - self.dim()) + list(self.shape)
    b = [1] * (ndim - other.dim()) + list(other.shape)
    a_view = A._unsafe_view.default(self, [s for d in a for s in (d, 1)])
    b_view = A._unsafe_view.default(other, [s for d in b for s in (1, d)])
    return a_view, b_view, [x * y for x, y in zip(a, b)], [s for x, y in zip(a, b) for s in (x, y)]


def kron(self: Tensor, other: Tensor) -> Tensor:
    a_view, b_view, shape, _ = _kron_views(self, other)
    return A._unsafe_view.default(A.mul.Tensor(a_view, b_view), shape)


def kron_out(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    a_view, b_view, shape, interleaved = _kron_views(self, other)
    resize_output(out, shape)
    A.mul.out(a_view, b_view, out=A._unsafe_view.default(out, interleaved))
    return out


IMPLICIT: dict[str, Callable[..., Any]] = {"outer": outer, "outer.out": outer_out, "ger": ger, "ger.out": ger_out,
                                           "tensordot": tensordot, "tensordot.out": tensordot_out,
                                           "inner": inner, "inner.out": inner_out, "kron": kron, "kron.out": kron_out,
                                           "cross": cross, "cross.out": cross_out}


def explicit_kernels() -> dict[str, Callable[..., Any]]:
    """The CompositeExplicitAutograd kernels, by overload (the Meta backend registers them too, as torch does)."""
    return {"mv": mv, "mv.out": mv_out, "dot.out": _dot_out(A.dot.default), "vdot.out": _dot_out(A.vdot.default)}


def register(lib: Library) -> None:
    """Register the CompositeExplicitAutograd kernels (``mv`` and the ``out=`` forms) and the composites."""
    for name, kernel in explicit_kernels().items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives (derivatives.yaml; conj() of a real tensor is the tensor, no call) ---------------------
def _column(t: Tensor) -> Tensor:
    """``t.reshape({t.size(0), 1})``: a vector as a one-column matrix (``outer``'s left operand)."""
    return A.reshape.default(t, [t.shape[0], 1])


def _ger(g: Tensor, vec: Tensor) -> Tensor:
    """``grad.ger(vec)``: ``outer`` is ``grad.reshape({grad.size(0), 1}) * vec``."""
    return A.mul.Tensor(_column(g), vec)


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names."""
    from ..autograd.kernels import register_derivative

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any) -> None:
        register_derivative(lib, f"aten::{name}", node, inputs, formula)

    r("dot", "DotBackward0", ("self", "tensor"),
      (lambda g, tensor: A.mul.Tensor(g, tensor), lambda g, self: A.mul.Tensor(g, self)))
    r("vdot", "VdotBackward0", ("self", "other"),
      (lambda g, other: A.mul.Tensor(g, other), lambda g, self: A.mul.Tensor(g, self)))
    r("mv", "MvBackward0", ("self", "vec"),
      (_ger, lambda g, self: A.mv.default(A.t.default(self), g)))

    def cross_args(dim: int) -> dict[str, int]:
        return {} if dim == -1 else {"dim": dim}

    r("linalg_cross", "LinalgCrossBackward0", ("self", "other"),
      (lambda g, other, dim: A.linalg_cross.default(other, g, **cross_args(dim)),
       lambda g, self, dim: A.linalg_cross.default(g, self, **cross_args(dim))))


# --- torch.* functions and Tensor methods -------------------------------------------------------------
# the second argument's name, then the function's and the method's signatures in torch's binding format
_SIGNATURES: dict[str, tuple[str, str, str]] = {
    "dot": ("tensor", "dot(Tensor input, Tensor tensor, *, Tensor out=None)", "dot(Tensor tensor)"),
    "vdot": ("other", "vdot(Tensor input, Tensor other, *, Tensor out=None)", "vdot(Tensor other)"),
    "mv": ("vec", "mv(Tensor input, Tensor vec, *, Tensor out=None)", "mv(Tensor vec)"),
    "outer": ("vec2", "outer(Tensor input, Tensor vec2, *, Tensor out=None)", "outer(Tensor vec2)"),
    "ger": ("vec2", "ger(Tensor input, Tensor vec2, *, Tensor out=None)", "ger(Tensor vec2)"),
    "inner": ("other", "inner(Tensor input, Tensor other, *, Tensor out=None)", "inner(Tensor other)"),
    "kron": ("other", "kron(Tensor input, Tensor other, *, Tensor out=None)", "kron(Tensor other)"),
}
_BINDINGS = Bindings({key: (signature,) for name, (_, function, method) in _SIGNATURES.items()
                      for key, signature in ((name, function), (f"Tensor.{name}", method))})


def _bindings(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``torch.<name>(input, other, *, out=None)`` and ``Tensor.<name>(other)``, parsed as torch's."""
    second = _SIGNATURES[name][0]

    def function(*args: Any, **kwargs: Any) -> Tensor:
        b = _BINDINGS.parse(name, args, kwargs)[1]
        out = b.get("out")
        packet = getattr(A, name)  # looked up per call: this module is imported before aten is defined
        if out is None:
            return packet.default(b["input"], b[second])
        return packet.out(b["input"], b[second], out=out)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return getattr(A, name).default(self, _BINDINGS.parse(f"Tensor.{name}", args, kwargs)[1][second])

    function.__name__ = function.__qualname__ = method.__name__ = method.__qualname__ = name
    return function, method


FUNCTIONS: dict[str, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}
for _name_ in _SIGNATURES:
    FUNCTIONS[_name_], METHODS[_name_] = _bindings(_name_)
del _name_


# torch.tensordot (torch/functional.py): ``dims`` an int (the last n of a with the first n of b), a pair of
# lists, or a tensor of either, turned into aten::tensordot's two lists; the binding parses those
_TENSORDOT = Bindings({"tensordot": ("tensordot(Tensor input, Tensor other, IntArrayRef dims_self, "
                                     "IntArrayRef dims_other, *, Tensor out=None)",)})


def _tensordot_function(a: Any, b: Any, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """``torch.tensordot(a, b, dims=2, out=None)``.

    Example:
        >>> import dispatchcore as dc
        >>> dc.tensordot(dc.ones(2, 3), dc.ones(3, 4), dims=1).shape
        dispatchcore.Size([2, 4])
    """
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    dims_a: Any = []
    dims_b: Any = []
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            dims = int(dims.item())
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    bound = _TENSORDOT.parse("tensordot", (a, b, dims_a, dims_b), {} if out is None else {"out": out})[1]
    args = (bound["input"], bound["other"], bound["dims_self"], bound["dims_other"])
    return A.tensordot.default(*args) if out is None else A.tensordot.out(*args, out=out)


_tensordot_function.__name__ = _tensordot_function.__qualname__ = "tensordot"

_CROSS = Bindings({"cross": ("cross(Tensor input, Tensor other, int64_t? dim=None, *, Tensor out=None)",),
                   "Tensor.cross": ("cross(Tensor other, int64_t? dim=None)",)})


def _cross_call(index: int, b: dict[str, Any]) -> Tensor:
    """``torch.cross(input, other, dim=None, *, out=None)``: the cross product along a dim of size 3."""
    args = (b["input"], b["other"]) if b["dim"] is None else (b["input"], b["other"], b["dim"])
    return A.cross.default(*args) if b.get("out") is None else A.cross.out(*args, out=b["out"])


FUNCTIONS["cross"] = _CROSS.function("cross", _cross_call)
FUNCTIONS["cross"].__doc__ = cross.__doc__
METHODS["cross"] = _CROSS.method("cross", _cross_call)
FUNCTIONS["tensordot"] = _tensordot_function
