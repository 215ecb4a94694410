"""Meta kernels of the special family: the geometry and dtype of ``xlogy``, ``logit`` and ``logit_backward``.

Mirrors the meta functions of the structured ops (``TORCH_META_FUNC(xlogy)``, a binary float op;
``logit_backward``, a binary op) and torch's Meta kernels of ``logit`` (a unary float op): the
result dtype follows TensorIterator's promotion, the layout TensorIterator's, and in-place and
``out=`` targets get its checks. The CompositeExplicitAutograd Scalar overloads of ``xlogy`` run
their composites (``dispatchcore.native.special``) on meta tensors. Invariant: a meta result has
exactly the geometry the CPU result has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import dtypes as _dt
from dispatchcore.native import pointwise as P
from dispatchcore.native import special as S
from dispatchcore.tensor import Tensor

from .kernels import _device_check, _promoted, _tensor_iterator, meta_tensor, python_copy_out
from .pointwise import _unary as _pointwise_unary

__all__ = ["KERNELS"]


def _float_result(common: Any) -> Any:
    return P.binary_result_dtype(P.FLOAT, common, _dt.get_default_dtype())


def _xlogy(self: Tensor, other: Tensor, out: Tensor | None = None, inplace: bool = False) -> Tensor:
    _device_check((out, self, other))
    result = _float_result(_dt.result_type(self, other))
    return _tensor_iterator([_promoted(self, result), _promoted(other, result)], result, out=out,
                            inplace=self if inplace else None)


def _logit(self: Tensor, out: Tensor | None = None, inplace: bool = False) -> Tensor:
    result = P.unary_result_dtype(P.FLOAT, self.dtype, _dt.get_default_dtype())
    return _tensor_iterator([_promoted(self, result)], result, out=out, inplace=self if inplace else None)


def _logit_backward(grad_output: Tensor, self: Tensor, out: Tensor | None = None) -> Tensor:
    _device_check((out, grad_output, self))
    common = _dt.result_type(grad_output, self)
    return _tensor_iterator([_promoted(grad_output, common), _promoted(self, common)], common, out=out)


def _frexp_meta(self: Tensor) -> tuple[Tensor, Tensor]:
    """Torch's meta: the floating check, then two ``empty_like`` results (int32 exponents)."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    strides = tuple(self.stride()) if _dense(self) else None
    return meta_tensor(tuple(self.shape), self.dtype, strides), meta_tensor(tuple(self.shape), _dt.int32, strides)


def _frexp_out_meta(self: Tensor, *, mantissa: Tensor, exponent: Tensor) -> tuple[Tensor, Tensor]:
    for out, result in zip((mantissa, exponent), _frexp_meta(self)):
        python_copy_out(result, out)
    return mantissa, exponent


def _dense(t: Tensor) -> bool:
    from dispatchcore.shapes import is_non_overlapping_and_dense

    return is_non_overlapping_and_dense(tuple(t.shape), tuple(t.stride()))


def _polygamma_meta(n: int, self: Tensor, out: Tensor | None = None) -> Tensor:
    """Torch's meta ``polygamma``: the negative-n check, then digamma's (a float result like ``self``)."""
    S.polygamma_check(n)
    return _pointwise_unary("digamma", self, out)


KERNELS: dict[str, Callable[..., Any]] = {
    "polygamma": lambda n, self: _polygamma_meta(n, self),
    "polygamma.out": lambda n, self, *, out: _polygamma_meta(n, self, out),
    "frexp.Tensor_out": _frexp_out_meta,  # frexp.Tensor: its composite (explicit_kernels), as torch
    "xlogy.Tensor": lambda self, other: _xlogy(self, other),
    "xlogy_.Tensor": lambda self, other: _xlogy(self, other, inplace=True),
    "xlogy.OutTensor": lambda self, other, *, out: _xlogy(self, other, out),
    "logit": lambda self, eps=None: _logit(self),
    "logit_": lambda self, eps=None: _logit(self, inplace=True),
    "logit.out": lambda self, eps=None, *, out: _logit(self, out),
    "logit_backward": lambda grad_output, self, eps=None: _logit_backward(grad_output, self),
    "logit_backward.grad_input": lambda grad_output, self, eps=None, *, grad_input: _logit_backward(
        grad_output, self, grad_input),
    # torch has no Meta kernel for polygamma_: its CompositeExplicitAutograd one runs on meta
    **{name: kernel for name, kernel in S.explicit_kernels().items() if name != "polygamma_"},
}
for _name, _kernel in KERNELS.items():
    if _kernel.__name__ == "<lambda>":
        _kernel.__name__ = _kernel.__qualname__ = _name.replace(".", "_") + "_meta"
del _name, _kernel
