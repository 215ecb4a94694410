"""``Parameter``: a leaf tensor that a ``Module`` registers as one of its parameters.

Mirrors ``torch/nn/parameter.py``. A ``Parameter`` shares its data and version counter with the
tensor it was made from (``Tensor._make_subclass``) and requires grad unless told otherwise;
operations on it return plain tensors, and ``state_dict`` holds plain detached aliases.
"""

from __future__ import annotations

from typing import Any

from .. import factories as _factories
from ..tensor import Tensor, _disabled_torch_function_impl, _TensorType, detached_alias

__all__ = ["Buffer", "Parameter"]


def plain_detached(t: Tensor) -> Tensor:
    """``t.detach()`` as a plain ``Tensor`` even when ``t`` is a ``Parameter`` (as torch returns)."""
    return detached_alias(t, Tensor)


class _ParameterMeta(_TensorType):
    """``torch.nn.parameter._ParameterMeta``: a wrapper subclass instance flagged ``_is_param`` is a Parameter."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Parameter and getattr(instance, "_is_param", False) and isinstance(instance, Tensor):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor that is a module parameter (``torch.nn.Parameter``).

    Assigning a ``Parameter`` as a ``Module`` attribute registers it, so it appears in
    ``parameters()`` and ``state_dict()``.

    Args:
        data: the tensor to wrap (its storage is shared); ``None`` gives an empty tensor.
        requires_grad: whether the parameter requires grad (default ``True``).

    Example:
        >>> import dispatchcore as dc
        >>> p = Parameter(dc.zeros(2))
        >>> p
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    __torch_function__ = _disabled_torch_function_impl  # as torch's: results are plain tensors

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = _factories.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        if type(data) is not Tensor and not isinstance(data, Parameter) and _has_torch_dispatch(type(data)):
            # torch's path for custom tensors (a FakeTensor, a wrapper): the instance stays of its
            # class, detached, and is flagged as a parameter (see _ParameterMeta)
            param = data.detach().requires_grad_(requires_grad)
            param._is_param = True
            return param  # type: ignore[no-any-return]
        out = detached_alias(data, cls)
        if requires_grad:
            out.requires_grad_(True)
        return out

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def detach(self) -> Tensor:
        """``aten::detach``, returned as a plain ``Tensor`` (torch's ``Parameter`` opts out of subclass results)."""
        out = super().detach()  # type: ignore[misc]  # attached in _tensor_methods
        return out if type(out) is Tensor else plain_detached(out)

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(plain_detached(self).clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (type(self), (plain_detached(self).clone(), self.requires_grad))


def _has_torch_dispatch(cls: type) -> bool:
    from ..subclass import has_torch_dispatch

    return has_torch_dispatch(cls)


class Buffer(Tensor):
    """A marker for a module buffer (``torch.nn.Buffer``): assigning one registers it.

    ``Buffer(t, persistent=False)`` is left out of ``state_dict``. The module stores the plain
    tensor, as torch does.

    Example:
        >>> import dispatchcore as dc
        >>> b = Buffer(dc.ones(1))
        >>> b.persistent
        True
    """

    __torch_function__ = _disabled_torch_function_impl  # as torch's

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = _factories.empty(0)
        out = detached_alias(data, cls)
        out.persistent = persistent
        return out

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass
