"""The ``nn`` activations not in the pointwise tables, and the backward operators of relu and (log_)softmax.

silu, softplus, log_sigmoid, relu6, one_hot; ``threshold_backward`` (relu's),
``_log_softmax_backward_data`` and ``_softmax_backward_data`` (log_softmax's and softmax's, whose
forwards live with the core operators): the one operator torch's backward dispatches for each.

One declaration per operator (style guide 3.8): ``SCHEMAS`` verbatim from torch 2.13's
``native_functions.yaml``; ``register`` adds the composites torch registers
(CompositeImplicitAutograd ``log_sigmoid``/``log_sigmoid.out`` over ``log_sigmoid_forward``,
``relu6``/``relu6_`` over ``hardtanh``/``hardtanh_``, ``one_hot`` over ``zeros`` + ``scatter_``,
and ``math_silu_backward``); ``register_autograd`` the ``derivatives.yaml`` entries with torch's
node names. The numpy and meta kernels are ``dispatchcore_backends.{cpu,meta}.activation``.

Mirrors ``aten/src/ATen/native/Activation.cpp`` (silu, softplus, log_sigmoid, relu6, threshold_backward),
``SoftMax.cpp`` (``_log_softmax_backward_data``),
``Onehot.cpp`` and the double-backward helpers of ``FunctionsManual.cpp``
(``infinitely_differentiable_silu_backward``, ``softplus_double_backward``,
``log_sigmoid_double_backward``). Invariant: each operator is registered at exactly the keys torch
registers it (``torch_keys.TORCH_KEYS``); every formula calls dispatched operators only, so double
backward works. These operators live in ``torch._C._nn`` (``F.*``), not on ``torch`` or
``Tensor``, so ``FUNCTIONS`` and ``METHODS`` are empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES
from ..ops import aten as A
from ..tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS", "OUTS", "SCHEMAS", "log_softmax_backward_check", "one_hot", "register",
           "register_autograd", "softmax_backward_check"]

_GI = "*, Tensor(a!) grad_input) -> Tensor(a!)"
SCHEMAS: tuple[str, ...] = (
    "silu(Tensor self) -> Tensor",
    "silu_(Tensor(a!) self) -> Tensor(a!)",
    "silu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "silu_backward(Tensor grad_output, Tensor self) -> Tensor",
    f"silu_backward.grad_input(Tensor grad_output, Tensor self, {_GI}",
    "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
    "softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out) -> Tensor(a!)",
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
    f"softplus_backward.grad_input(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold, {_GI}",
    "log_sigmoid(Tensor self) -> Tensor",
    "log_sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)",
    "log_sigmoid_forward.output(Tensor self, *, Tensor(a!) output, Tensor(b!) buffer) -> (Tensor(a!), Tensor(b!))",
    "log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor",
    f"log_sigmoid_backward.grad_input(Tensor grad_output, Tensor self, Tensor buffer, {_GI}",
    "relu6(Tensor self) -> Tensor",
    "relu6_(Tensor(a!) self) -> Tensor(a!)",
    "one_hot(Tensor self, int num_classes=-1) -> Tensor",
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    f"threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, {_GI}",
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    "_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype, *, "
    "Tensor(a!) out) -> Tensor(a!)",
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    "_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype, *, "
    "Tensor(a!) grad_input) -> Tensor(a!)",
)

# The out= overloads with CPU and Meta kernels, and the functional overload each computes
OUTS: dict[str, str] = {
    "silu.out": "silu", "silu_backward.grad_input": "silu_backward", "softplus.out": "softplus",
    "softplus_backward.grad_input": "softplus_backward", "log_sigmoid_forward.output": "log_sigmoid_forward",
    "log_sigmoid_backward.grad_input": "log_sigmoid_backward", "threshold_backward.grad_input": "threshold_backward",
    "_log_softmax_backward_data.out": "_log_softmax_backward_data",
    "_softmax_backward_data.out": "_softmax_backward_data",
}


def log_softmax_backward_check(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> int:
    """``_log_softmax_backward_data``'s checks on CPU, shared by the CPU and Meta kernels: the wrapped dim.

    The result has ``grad_output``'s shape and dtype. A float ``grad_output`` with a half
    ``input_dtype`` is the half-to-float case, whose half result the CPU kernel refuses; otherwise
    ``output`` must have ``grad_output``'s dtype (``input_dtype`` is not checked further).
    """
    from ..dtypes import float16, float32
    from ..shapes import wrap_dim

    d = wrap_dim(dim, grad_output.dim())
    found = float16 if grad_output.dtype == float32 and input_dtype == float16 else output.dtype
    if found != grad_output.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[grad_output.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[found.name]}")
    return d


def softmax_backward_check(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> int:
    """``TORCH_META_FUNC(_softmax_backward_data)``'s checks, then the CPU kernel's dtype check: the wrapped dim.

    ``grad_output`` and ``output`` must have the same size (``checkSameSize``), unlike
    ``_log_softmax_backward_data``; the rest is ``log_softmax_backward_check``'s.
    """
    if tuple(grad_output.shape) != tuple(output.shape):
        raise RuntimeError("Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                           f"'output'; but {_size(grad_output)} does not equal {_size(output)} (while checking "
                           "arguments for softmax_backward)")
    if output.device.type == "meta":  # the meta function: no dtype check (that is the CPU kernel's)
        from ..shapes import wrap_dim

        return wrap_dim(dim, grad_output.dim())
    return log_softmax_backward_check(grad_output, output, dim, input_dtype)


def _size(t: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


# --- composites (CompositeImplicitAutograd in torch) ----------------------------------------------------
def _silu_backward_math(grad_output: Tensor, self: Tensor) -> Tensor:
    """``math_silu_backward``: ``grad_output * (s * (1 + input * (1 - s)))``, ``s = sigmoid(input)``.

    The C++ operand order (right to left) and ``1 - s`` as ATen writes it (``empty_like``, ``fill_``, ``sub_``).
    """
    from ..autograd.derivatives import scalar_minus

    s = A.sigmoid.default(self)
    return A.mul.Tensor(grad_output, A.mul.Tensor(s, A.add.Scalar(A.mul.Tensor(self, scalar_minus(1, s)), 1)))


def _silu_backward_infinitely(grad_output: Tensor, self: Tensor) -> Tensor:
    """``infinitely_differentiable_silu_backward``: ``grad_output * s * (1.0 + input * (1.0 - s))``."""
    from ..autograd.derivatives import scalar_minus

    s = A.sigmoid.default(self)
    factor = A.add.Scalar(A.mul.Tensor(self, scalar_minus(1.0, s)), 1.0)
    return A.mul.Tensor(A.mul.Tensor(grad_output, s), factor)


def _log_sigmoid(self: Tensor) -> Tensor:
    return A.log_sigmoid_forward.default(self)[0]


def _log_sigmoid_out(self: Tensor, *, out: Tensor) -> Tensor:
    buffer = A.empty.memory_format([0], dtype=out.dtype, device=out.device)
    return A.log_sigmoid_forward.output(self, output=out, buffer=buffer)[0]


def _relu6(self: Tensor) -> Tensor:
    return A.hardtanh.default(self, 0, 6)


def _relu6_(self: Tensor) -> Tensor:
    return A.hardtanh_.default(self, 0, 6)


def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
    """``aten::one_hot``: int64 rows with one 1 each, at the class index; ``-1`` infers ``max + 1`` classes.

    torch reads the bounds with ``aminmax`` (the minimum's ``item()`` first), then scatters ones
    into ``zeros(*self.shape, num_classes)``.

    Example:
        >>> import dispatchcore as dc
        >>> dc.ops.aten.one_hot.default(dc.tensor([2, 0]), 3)
        tensor([[0, 0, 1],
                [1, 0, 0]])
    """
    from ..dtypes import int64

    if self.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if self.device.type != "meta":
        if self.numel() == 0:
            if num_classes == -1:
                raise RuntimeError("Can not infer total number of classes from empty tensor.")
        else:
            bounds = A.aminmax.default(self)
            low = int(A._local_scalar_dense.default(bounds[0]))
            high = int(A._local_scalar_dense.default(bounds[1]))
            if low < 0:
                raise RuntimeError("Class values must be non-negative.")
            if num_classes == -1:
                num_classes = high + 1
            elif high >= num_classes:
                raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:  # torch reads the maximum with item(), which a meta tensor refuses
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    result = A.zeros.default([*self.shape, num_classes], dtype=int64, device=self.device)
    return A.scatter_.value(result, -1, A.unsqueeze.default(self, -1), 1)


IMPLICIT: dict[str, Callable[..., Any]] = {
    "silu_backward": _silu_backward_math, "log_sigmoid": _log_sigmoid, "log_sigmoid.out": _log_sigmoid_out,
    "relu6": _relu6, "relu6_": _relu6_, "one_hot": one_hot,
}


def register(lib: Library) -> None:
    """The composite kernels, at the keys torch registers them."""
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives (derivatives.yaml, FunctionsManual.cpp) ------------------------------------------------
def _silu(g: Tensor, self: Tensor) -> Tensor:
    """``GradMode::is_enabled() ? infinitely_differentiable_silu_backward(grad, self) : silu_backward(grad, self)``."""
    from ..autograd.grad_mode import is_grad_enabled

    return _silu_backward_infinitely(g, self) if is_grad_enabled() else A.silu_backward.default(g, self)


def _softplus_double_backward(g: Tensor, self: Tensor, beta: Any, threshold: Any) -> Tensor:
    """``softplus_double_backward``: ``sigmoid_backward(g, x.sigmoid()) * (x < threshold).type_as(g) * beta``.

    ``x = self * beta``; the right operand first, as GCC evaluates it.
    """
    x = A.mul.Scalar(self, beta)
    below = A.type_as.default(A.lt.Scalar(x, threshold), g)
    derivative = A.sigmoid_backward.default(g, A.sigmoid.default(x))
    return A.mul.Scalar(A.mul.Tensor(derivative, below), beta)


def _log_sigmoid_double_backward(g: Tensor, self: Tensor) -> Tensor:
    """``log_sigmoid_double_backward``: ``g * (z - 1) * z`` with ``z = sigmoid(self)``."""
    z = A.sigmoid.default(self)
    return A.mul.Tensor(A.mul.Tensor(g, A.sub.Scalar(z, 1)), z)


def _zeros_like(g: Tensor) -> Tensor:
    """``zeros_like(grad)``."""
    return A.zeros_like.default(g)


def _log_softmax_data_grad_output(g: Tensor, output: Tensor, dim: int) -> Tensor:
    """``grad - (grad * output.exp()).sum(dim, true)`` (derivatives.yaml; the dtypes already agree on CPU)."""
    return A.sub.Tensor(g, A.sum.dim_IntList(A.mul.Tensor(g, A.exp.default(output)), [dim], True))


def _log_softmax_data_output(g: Tensor, grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    """``-grad_output.sum(dim, true) * output.exp() * grad`` (the right operand, ``exp``, first)."""
    e = A.exp.default(output)
    s = A.neg.default(A.sum.dim_IntList(grad_output, [dim], True))
    return A.mul.Tensor(A.mul.Tensor(s, e), g)


def _to_dtype_of(g: Tensor, like: Tensor) -> Tensor:
    """``grad.to(output.dtype())``: no call when the dtype is already that."""
    return g if g.dtype is like.dtype else A._to_copy.default(g, dtype=like.dtype)


def _softmax_data_grad_output(g: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
    """``_softmax_backward_data(grad.to(output.dtype()), output, dim, input_dtype)``."""
    return A._softmax_backward_data.default(_to_dtype_of(g, output), output, dim, input_dtype)


def _softmax_data_output(g: Tensor, grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    """``softmax_double_backward(grad, grad_output, dim, output)``, in GCC's right-to-left operand order.

    ``grad_output * grad - (output * grad_output).sum(dim, true) * grad
    - grad_output * (output * grad).sum(dim, true)``.
    """
    g = _to_dtype_of(g, output)
    last = A.mul.Tensor(grad_output, A.sum.dim_IntList(A.mul.Tensor(output, g), [dim], True))
    middle = A.mul.Tensor(A.sum.dim_IntList(A.mul.Tensor(output, grad_output), [dim], True), g)
    first = A.mul.Tensor(grad_output, g)
    r = A.sub.Tensor(A.sub.Tensor(first, middle), last)
    return _to_dtype_of(r, output)


def _no_derivative(g: Tensor) -> Tensor:
    raise RuntimeError("derivative for aten::silu_backward is not implemented")


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names."""
    from ..autograd.kernels import register_derivative

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> Any:
        return register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    r("silu", "SiluBackward0", ("self",), _silu)
    r("silu_", "SiluBackward0", ("self",), _silu, mutates="self")
    # no derivatives.yaml entry: torch's Autograd kernel records a NotImplemented node
    r("silu_backward", "NotImplemented", ("grad_output", "self"),
      (_no_derivative, _no_derivative)).node_class._qualified_name = "torch::autograd::NotImplemented"
    r("softplus", "SoftplusBackward0", ("self",),
      lambda g, self, beta, threshold: A.softplus_backward.default(g, self, beta, threshold))
    r("softplus_backward", "SoftplusBackwardBackward0", ("grad_output", "self"),
      (lambda g, self, beta, threshold: A.softplus_backward.default(g, self, beta, threshold),
       lambda g, grad_output, self, beta, threshold: _softplus_double_backward(
           A.mul.Tensor(g, grad_output), self, beta, threshold)))
    r("log_sigmoid_forward", "LogSigmoidBackward0", ("self",),
      lambda g, self, result1: A.log_sigmoid_backward.default(g, self, result1), differentiable_outputs=(0,))
    r("log_sigmoid_backward", "LogSigmoidBackwardBackward0", ("grad_output", "self"),
      (lambda g, self, buffer: A.log_sigmoid_backward.default(g, self, buffer),
       lambda g, grad_output, self: _log_sigmoid_double_backward(A.mul.Tensor(g, grad_output), self)))
    r("threshold_backward", "ThresholdBackwardBackward0", ("grad_output", "self"),
      (lambda g, self, threshold: A.threshold_backward.default(g, self, threshold), lambda g: _zeros_like(g)))
    r("_log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0", ("grad_output", "output"),
      (_log_softmax_data_grad_output, _log_softmax_data_output))
    r("_softmax_backward_data", "SoftmaxBackwardDataBackward0", ("grad_output", "output"),
      (_softmax_data_grad_output, _softmax_data_output))


FUNCTIONS: dict[str, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}
