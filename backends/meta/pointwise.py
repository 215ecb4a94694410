"""Meta kernels of the pointwise family (``dispatchcore.native.pointwise``): geometry and dtype only.

Mirrors the meta functions of the structured pointwise ops (``TORCH_META_FUNC`` in ``UnaryOps.cpp``,
``BinaryOps.cpp``, ``Activation.cpp``) and torch's Python meta kernels of the composite ones: the
result dtype follows the op's dtype rule, the layout TensorIterator's, and in-place and ``out=``
targets get torch's checks. Operators torch registers at CompositeExplicitAutograd *and* Meta use
the composite itself here (it calls the Meta kernels of the ops it is made of). Checks a CPU kernel
makes on a dtype it was not compiled for are not modelled (See ``kernels.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import dtypes as _dt
from dispatchcore.native import pointwise as P
from dispatchcore.tensor import Tensor

from .kernels import _converted, _device_check, _promoted, _scalar, _tensor_iterator, meta_tensor

__all__ = ["KERNELS"]

_UNARY_RULES = {**{name: u.rule for name, u in P.UNARY.items()}, "isnan": P.BOOL, "logical_not": P.LOGICAL}


def _unary(name: str, self: Tensor, out: Tensor | None = None, inplace: bool = False) -> Tensor:
    rule = _UNARY_RULES[name]
    result = P.unary_result_dtype(rule, self.dtype, _dt.get_default_dtype())
    target = self if inplace else out
    if target is not None:
        P.check_out(rule, name, result, target.dtype)
    operand = _promoted(self, result) if rule == P.FLOAT else _converted(self, self.dtype)
    return _tensor_iterator([operand], result, out=out, inplace=self if inplace else None)


def _binary(name: str, self: Any, other: Any, out: Tensor | None = None, inplace: bool = False) -> Tensor:
    rule = P.BINARY[name].rule
    self = self if isinstance(self, Tensor) else _scalar(self)
    other = other if isinstance(other, Tensor) else _scalar(other)
    _device_check((out, self, other))
    common = _dt.result_type(self, other)
    result = P.binary_result_dtype(rule, common, _dt.get_default_dtype())
    work = result if rule == P.FLOAT else common
    target = self if inplace else out
    if target is not None and rule in (P.SAME, P.BOOL):
        P.check_out(rule, name, result, target.dtype)
    return _tensor_iterator([_promoted(self, work), _promoted(other, work)], result, out=out,
                            inplace=self if inplace else None)


def _heaviside(self: Tensor, values: Tensor, out: Tensor | None = None, inplace: bool = False) -> Tensor:
    P.heaviside_check(self, values, self if inplace else out)
    _device_check((out, self, values))
    return _tensor_iterator([_converted(self, self.dtype), _converted(values, values.dtype)], self.dtype, out=out,
                            inplace=self if inplace else None)


def _same(inputs: tuple[Tensor, ...], out: Tensor | None = None, inplace: bool = False) -> Tensor:
    """Activations and their backward ops: the inputs' promoted dtype, an out= tensor of exactly it."""
    _device_check((out, *inputs))
    common = _dt.result_type(*inputs)
    return _tensor_iterator([_promoted(t, common) for t in inputs], common, out=out,
                            inplace=inputs[0] if inplace else None, same_dtype=True)


def _named(kernels: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    for op_name, fn in kernels.items():
        fn.__name__ = fn.__qualname__ = op_name.replace(".", "_") + "_meta"
    return kernels


def _unary_kernels(name: str, inplace: bool) -> dict[str, Callable[..., Any]]:
    kernels: dict[str, Callable[..., Any]] = {
        name: lambda self: _unary(name, self), f"{name}.out": lambda self, *, out: _unary(name, self, out)}
    if inplace:
        kernels[f"{name}_"] = lambda self: _unary(name, self, inplace=True)
    return _named(kernels)


def _binary_kernels(name: str, overloads: tuple[str, str | None, str]) -> dict[str, Callable[..., Any]]:
    functional, inplace, out = overloads
    kernels: dict[str, Callable[..., Any]] = {out: lambda self, other, *, out: _binary(name, self, other, out)}
    if P.BINARY[name].rule != P.LOGICAL:  # torch's logical ops are composites of out=
        kernels[functional] = lambda self, other: _binary(name, self, other)
        if inplace is not None:
            kernels[inplace] = lambda self, other: _binary(name, self, other, inplace=True)
    return _named(kernels)


def _activation_kernels() -> dict[str, Callable[..., Any]]:
    def gelu_check(approximate: str) -> None:
        if approximate not in ("none", "tanh"):
            raise RuntimeError("approximate argument must be either none or tanh.")

    def elu(self, alpha=1, scale=1, input_scale=1):
        return _same((self,))

    def elu_(self, alpha=1, scale=1, input_scale=1):
        return _same((self,), inplace=True)

    def elu_out(self, alpha=1, scale=1, input_scale=1, *, out):
        return _same((self,), out)

    def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
        return _same((grad_output, self_or_result))

    def elu_backward_grad_input(grad_output, alpha, scale, input_scale, is_result, self_or_result, *, grad_input):
        return _same((grad_output, self_or_result), grad_input)

    def gelu(self, *, approximate="none"):
        gelu_check(approximate)
        return _same((self,))

    def gelu_(self, *, approximate="none"):
        gelu_check(approximate)
        return _same((self,), inplace=True)

    def gelu_out(self, *, approximate="none", out):
        gelu_check(approximate)
        return _same((self,), out)

    def gelu_backward(grad_output, self, *, approximate="none"):
        gelu_check(approximate)
        return _same((grad_output, self))

    def gelu_backward_grad_input(grad_output, self, *, approximate="none", grad_input):
        gelu_check(approximate)
        return _same((grad_output, self), grad_input)

    def hardtanh(self, min_val=-1, max_val=1):
        if self.numel() == 0:  # not structured: empty_like(self) keeps an empty input's strides
            return meta_tensor(tuple(self.shape), self.dtype, self.stride())
        return _same((self,))

    def hardtanh_(self, min_val=-1, max_val=1):
        return _same((self,), inplace=True)

    def hardtanh_out(self, min_val=-1, max_val=1, *, out):
        return _same((self,), out)

    def hardtanh_backward(grad_output, self, min_val, max_val):
        return _same((grad_output, self))

    def hardtanh_backward_grad_input(grad_output, self, min_val, max_val, *, grad_input):
        return _same((grad_output, self), grad_input)

    def leaky_relu(self, negative_slope=0.01):
        return _same((self,))

    def leaky_relu_(self, negative_slope=0.01):
        return _same((self,), inplace=True)

    def leaky_relu_out(self, negative_slope=0.01, *, out):
        return _same((self,), out)

    def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
        return _same((grad_output, self))

    def leaky_relu_backward_grad_input(grad_output, self, negative_slope, self_is_result, *, grad_input):
        return _same((grad_output, self), grad_input)

    local = locals()
    return _named({name + overload: local[name + suffix] for name in P.ACTIVATIONS
                   for suffix, overload in (("", ""), ("_", "_"), ("_out", ".out"), ("_backward", "_backward"),
                                            ("_backward_grad_input", "_backward.grad_input"))})


def _unary_backward(grad_output: Tensor, output: Tensor, out: Tensor | None = None) -> Tensor:
    """tanh_backward, sigmoid_backward: a binary TensorIterator op in the promoted dtype (an out= it can be cast to)."""
    _device_check((out, grad_output, output))
    common = _dt.result_type(grad_output, output)
    return _tensor_iterator([_promoted(grad_output, common), _promoted(output, common)], common, out=out)


def _unary_backward_kernels() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for name in P.UNARY_BACKWARD:
        found[name] = lambda grad_output, output: _unary_backward(grad_output, output)
        found[f"{name}.grad_input"] = (lambda grad_output, output, *, grad_input:
                                       _unary_backward(grad_output, output, grad_input))
    return _named(found)


def _nan_to_num_out(self, nan=None, posinf=None, neginf=None, *, out):
    if out.dtype is not self.dtype:
        raise RuntimeError(f"nan_to_num: dtype of out: {_dt.SCALAR_TYPE_NAMES[out.dtype.name]} should be same as "
                           f"input: {_dt.SCALAR_TYPE_NAMES[self.dtype.name]}")
    return _tensor_iterator([_converted(self, self.dtype)], self.dtype, out=out)


def _round_decimals(self: Tensor, out: Tensor | None = None, inplace: bool = False) -> Tensor:
    return _unary("round", self, out, inplace)


def _ternary(name: str, self: Tensor, first: Tensor, second: Any, out: Tensor | None = None,
             inplace: bool = False) -> Tensor:
    """addcmul/addcdiv/lerp's meta function: TensorIterator's ternary op (lerp: one dtype throughout)."""
    tensors = [t for t in (self, first, second) if isinstance(t, Tensor)]
    _device_check((out, *tensors))
    P.ternary_check(name, self, first, second)
    common = _dt.result_type(*tensors)
    return _tensor_iterator([_promoted(t, common) for t in tensors], common, out=out,
                            inplace=self if inplace else None)


def _ternary_kernels() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for name in ("addcmul", "addcdiv"):
        found.update({
            name: lambda self, tensor1, tensor2, *, value=1, _n=name: _ternary(_n, self, tensor1, tensor2),
            f"{name}_": lambda self, tensor1, tensor2, *, value=1, _n=name: _ternary(_n, self, tensor1, tensor2,
                                                                                    inplace=True),
            f"{name}.out": lambda self, tensor1, tensor2, *, value=1, out, _n=name: _ternary(_n, self, tensor1,
                                                                                            tensor2, out)})
    for kind in ("Scalar", "Tensor"):
        found.update({
            f"lerp.{kind}": lambda self, end, weight: _ternary("lerp", self, end, weight),
            f"lerp_.{kind}": lambda self, end, weight: _ternary("lerp", self, end, weight, inplace=True),
            f"lerp.{kind}_out": lambda self, end, weight, *, out: _ternary("lerp", self, end, weight, out)})
    return _named(found)


# torch registers these at CompositeExplicitAutograd only: no Meta kernel of their own
# composites torch gives no Meta kernel (their CompositeExplicitAutograd one runs on meta tensors)
_NO_META = (*(f"{dunder}.{o}" for dunder in P.SHIFT_DUNDERS for o in ("Scalar_out", "Tensor_out")), "allclose")


def _kernels() -> dict[str, Callable[..., Any]]:
    kernels: dict[str, Callable[..., Any]] = {}
    for name, u in P.UNARY.items():
        kernels.update(_unary_kernels(name, u.inplace))
    kernels.update(_named({
        "isnan": lambda self: _unary("isnan", self),
        "logical_not.out": lambda self, *, out: _unary("logical_not", self, out),
        "round.decimals": lambda self, *, decimals: _round_decimals(self),
        "round_.decimals": lambda self, *, decimals: _round_decimals(self, inplace=True),
        "round.decimals_out": lambda self, *, decimals, out: _round_decimals(self, out),
        "nan_to_num.out": _nan_to_num_out,
        "remainder.Scalar_Tensor": lambda self, other: _binary("remainder", self, other),
    }))
    for name, b in P.BINARY.items():
        kernels.update(_binary_kernels(name, b.tensor))
    for dunder, target in P.SHIFT_DUNDERS.items():
        short = dunder[2:]
        kernels.update(_named({
            f"{dunder}.Tensor": lambda self, other, _t=target: _binary(_t, self, other),
            f"{dunder}.Scalar": lambda self, other, _t=target: _binary(_t, self, other),
            f"__i{short}.Tensor": lambda self, other, _t=target: _binary(_t, self, other, inplace=True),
            f"__i{short}.Scalar": lambda self, other, _t=target: _binary(_t, self, other, inplace=True),
        }))
    kernels.update(_named({"heaviside": lambda self, values: _heaviside(self, values),
                           "heaviside_": lambda self, values: _heaviside(self, values, inplace=True),
                           "heaviside.out": lambda self, values, *, out: _heaviside(self, values, out)}))
    kernels.update(_activation_kernels())
    kernels.update(_unary_backward_kernels())
    kernels.update(_ternary_kernels())
    kernels.update({name: kernel for name, kernel in P.COMPOSITE_EXPLICIT.items() if name not in _NO_META})
    return kernels


KERNELS = _kernels()
