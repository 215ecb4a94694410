"""Helpers shared by differential tests: a forwarding wrapper subclass written once for both libraries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def logging_wrapper(lib: Any, record: Callable[[Any, tuple[Any, ...]], None]) -> type:
    """A forwarding ``__torch_dispatch__`` wrapper subclass of ``lib.Tensor`` (``dispatchcore`` or
    ``torch``): ``Wrapper(t)`` holds ``t``; each operator call is first given to ``record(func, args)``."""
    import torch

    if lib is torch:
        from torch.utils._pytree import tree_map
    else:
        from dispatchcore.subclass import tree_map
    base = lib.Tensor

    def new(cls: type, elem: Any) -> Any:
        return base._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                           device=elem.device, requires_grad=elem.requires_grad)

    def init(self: Any, elem: Any) -> None:
        self.elem = elem

    def torch_dispatch(cls: type, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        record(func, args)
        unwrapped = tree_map(lambda t: t.elem if isinstance(t, cls) else t, (args, kwargs or {}))
        out = func(*unwrapped[0], **unwrapped[1])
        return tree_map(lambda t: cls(t) if type(t) is base else t, out)

    return type("Wrapper", (base,), {"__new__": staticmethod(new), "__init__": init,
                                     "__torch_dispatch__": classmethod(torch_dispatch)})
