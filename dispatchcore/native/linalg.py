"""Vector products: ``dot``, ``vdot``, ``mv``, ``outer``/``ger``, their ``out=`` forms, derivatives and bindings.

Mirrors ``aten/src/ATen/native/Blas.cpp`` (``dot``, ``vdot``, ``mv``, ``dot_check`` and the
``out=`` kernels) and ``addmv``'s checks in ``LinearAlgebra.cpp``, registered at the keys torch
2.13 registers them: ``dot`` and ``vdot`` have backend kernels (``dispatchcore_backends.{cpu,meta,
cuda}``); ``mv`` is CompositeExplicitAutograd (torch fills a new vector with ``addmv_``; here it is
``mm`` with a one-column view, behind addmv's checks); the ``out=`` forms are CompositeExplicitAutograd.
``matmul`` (``_composites.py``) lowers 1-D @ 1-D to ``dot`` and matrix @ vector to ``mv``, as
``_matmul_impl`` does. ``outer`` and ``ger`` are CompositeImplicitAutograd, as in torch: a view of
``self`` as a column times ``vec2``. Invariant: every backend makes the checks here, in torch's order, so a bad
call raises torch's error of torch's type whatever the device.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES
from ..ops import aten as A
from ..tensor import Tensor
from . import Bindings
from .structured import check_out_dtype

__all__ = ["FUNCTIONS", "IMPLICIT", "METHODS", "SCHEMAS", "dot_check", "explicit_kernels", "mv_check",
           "mv_shape_check", "register", "register_autograd", "resize_output"]

_OUT = "*, Tensor(a!) out) -> Tensor(a!)"
SCHEMAS: tuple[str, ...] = (
    "dot(Tensor self, Tensor tensor) -> Tensor",
    f"dot.out(Tensor self, Tensor tensor, {_OUT}",
    "vdot(Tensor self, Tensor other) -> Tensor",
    f"vdot.out(Tensor self, Tensor other, {_OUT}",
    "mv(Tensor self, Tensor vec) -> Tensor",
    f"mv.out(Tensor self, Tensor vec, {_OUT}",
    "outer(Tensor self, Tensor vec2) -> Tensor",
    f"outer.out(Tensor self, Tensor vec2, {_OUT}",
    "ger(Tensor self, Tensor vec2) -> Tensor",
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


IMPLICIT: dict[str, Callable[..., Any]] = {"outer": outer, "outer.out": outer_out, "ger": ger, "ger.out": ger_out}


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


# --- torch.* functions and Tensor methods -------------------------------------------------------------
# the second argument's name, then the function's and the method's signatures in torch's binding format
_SIGNATURES: dict[str, tuple[str, str, str]] = {
    "dot": ("tensor", "dot(Tensor input, Tensor tensor, *, Tensor out=None)", "dot(Tensor tensor)"),
    "vdot": ("other", "vdot(Tensor input, Tensor other, *, Tensor out=None)", "vdot(Tensor other)"),
    "mv": ("vec", "mv(Tensor input, Tensor vec, *, Tensor out=None)", "mv(Tensor vec)"),
    "outer": ("vec2", "outer(Tensor input, Tensor vec2, *, Tensor out=None)", "outer(Tensor vec2)"),
    "ger": ("vec2", "ger(Tensor input, Tensor vec2, *, Tensor out=None)", "ger(Tensor vec2)"),
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
