"""A ``TwoTensor``: a wrapper carrying two tensors, running every operator on both.

The dispatchcore version of torch's ``testing/_internal/two_tensor.py``, with a check added: after
each operator the two results must still be equal (both inputs start equal, so any divergence
would mean an operator saw something different in the two runs). It is a wrapper subclass
(``Tensor._make_wrapper_subclass``) with ``__tensor_flatten__``/``__tensor_unflatten__``, so
``transform_subclass`` can rebuild one from transformed parts, and it shows multiple dispatch:
``TwoTensor`` and ``TwoTensor``'s subclass ``LoudTwoTensor`` meet in one call, and the subclass's
handler goes first (torch's order), returning ``NotImplemented`` to pass the call on.

Run it: ``python docs/examples/two_tensor.py``.
"""

from __future__ import annotations

from typing import Any

import dispatchcore as dc
from dispatchcore.subclass import return_and_correct_aliasing, transform_subclass, tree_map


class TwoTensor(dc.Tensor):
    """Two tensors of the same metadata, ``a`` and ``b``, behaving as one."""

    @staticmethod
    def __new__(cls, a: dc.Tensor, b: dc.Tensor) -> TwoTensor:
        assert a.shape == b.shape and a.dtype == b.dtype and a.device == b.device
        return dc.Tensor._make_wrapper_subclass(cls, a.shape, strides=a.stride(), storage_offset=a.storage_offset(),
                                                dtype=a.dtype, device=a.device, requires_grad=a.requires_grad)

    def __init__(self, a: dc.Tensor, b: dc.Tensor) -> None:
        self.a = a
        self.b = b

    def __repr__(self) -> str:
        return f"TwoTensor({self.a}, {self.b})"

    def __tensor_flatten__(self) -> tuple[list[str], None]:
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, dc.Tensor], ctx: None, outer_size: Any,
                             outer_stride: Any) -> TwoTensor:
        return TwoTensor(inner["a"], inner["b"])

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: tuple[type, ...], args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        args_a, kwargs_a = tree_map(lambda t: t.a if isinstance(t, TwoTensor) else t, (args, kwargs))
        args_b, kwargs_b = tree_map(lambda t: t.b if isinstance(t, TwoTensor) else t, (args, kwargs))
        out_a = func(*args_a, **kwargs_a)
        out_b = func(*args_b, **kwargs_b)
        check_equal(func, out_a, out_b)
        if isinstance(out_a, (list, tuple)):
            out = type(out_a)(TwoTensor(x, y) if isinstance(x, dc.Tensor) else x for x, y in zip(out_a, out_b))
        else:
            out = TwoTensor(out_a, out_b) if isinstance(out_a, dc.Tensor) else out_a
        return return_and_correct_aliasing(func, args, kwargs, out)


class LoudTwoTensor(TwoTensor):
    """A TwoTensor that announces each call, then passes it on with ``NotImplemented``."""

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: tuple[type, ...], args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        print(f"  LoudTwoTensor saw {func}, types {[t.__name__ for t in types]}: passing it on")
        return NotImplemented


def check_equal(func: Any, x: Any, y: Any) -> None:
    """Both runs of ``func`` must agree exactly."""
    if isinstance(x, (list, tuple)):
        for xi, yi in zip(x, y):
            check_equal(func, xi, yi)
    elif isinstance(x, dc.Tensor):
        if x.shape != y.shape or not bool((x == y).all()):
            raise AssertionError(f"{func}: the two results differ")
    elif x != y:
        raise AssertionError(f"{func}: the two results differ: {x} != {y}")


def main() -> None:
    a = dc.tensor([1.0, -2.0, 3.0], requires_grad=True)
    t = TwoTensor(a, a.detach().clone().requires_grad_())
    out = (t * 2).relu().sum()
    print("forward:", out)
    out.backward()
    print("grad (a TwoTensor too):", t.grad)
    s = t.detach()
    s.mul_(10)
    print("in-place on a TwoTensor returns it:", s.add_(1) is s, s)
    halves = transform_subclass(t.detach(), lambda name, inner: inner / 2)
    print("transform_subclass:", halves)
    print("multiple dispatch (subclass handler first):")
    loud = LoudTwoTensor(dc.ones(3), dc.ones(3))
    print("  result:", t.detach() + loud)


if __name__ == "__main__":
    main()
