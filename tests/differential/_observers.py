"""Observers shared by differential tests, written once for both libraries (``torch`` or ``dispatchcore``):
a forwarding wrapper subclass, a recording dispatch mode, a torch-function mode and subclass; and
``results_or_same_error``, the comparison of one call on both."""

from __future__ import annotations

import warnings
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


def recording_mode(lib: Any, record: Callable[[Any, Any, Any, Any], None]) -> Any:
    """A forwarding dispatch mode of ``lib`` (a new instance) that first gives each call to
    ``record(func, types, args, kwargs)``, torch's ``prim.*`` queries left out (dispatchcore has none)."""
    import torch

    if lib is torch:
        from torch.utils._python_dispatch import TorchDispatchMode as base
    else:
        base = lib.DispatchMode

    class Record(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if not str(func).startswith("prim."):
                record(func, types, args, kwargs or {})
            return func(*args, **(kwargs or {}))

    return Record()


def torch_function_observers(lib: Any, on_mode: Callable[[Any, Any, Any], None],
                             on_subclass: Callable[[Any], None]) -> tuple[type, type]:
    """``(Mode, Sub)``: a forwarding ``TorchFunctionMode`` of ``lib`` calling ``on_mode(func, types,
    args)`` first, and a ``lib.Tensor`` subclass whose ``__torch_function__`` calls ``on_subclass(func)``
    before the default handler."""
    import torch

    if lib is torch:
        from torch.overrides import TorchFunctionMode as base
    else:
        from dispatchcore.overrides import TorchFunctionMode as base

    class Mode(base):  # type: ignore[misc, valid-type]
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            on_mode(func, types, args)
            return func(*args, **(kwargs or {}))

    class Sub(lib.Tensor):  # type: ignore[misc, name-defined]
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            on_subclass(func)
            return super().__torch_function__(func, types, args, kwargs)

    return Mode, Sub


def run_quietly(program: str, env: dict[str, Any]) -> tuple[str, str] | None:
    """Run ``program`` in ``env`` with warnings off; the error it raises as ``(class name, first
    line)``, comparable across the libraries, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(program, env)  # noqa: S102 - the tests' fixed tables
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return (type(error).__name__, str(error).split("\n")[0])
    return None


def results_or_same_error(theirs: Callable[[], Any], mine: Callable[[], Any]) -> tuple[Any, Any] | None:
    """(torch's result, dispatchcore's) to compare; or None once dispatchcore raised torch's error: the same
    type, and torch's first line (torch appends its C++ context below it)."""
    import pytest

    try:
        expected = theirs()
    except Exception as e:  # noqa: BLE001 - any torch error is the expected one
        with pytest.raises(type(e)) as info:
            mine()
        assert str(info.value).split("\n")[0] == str(e).split("\n")[0]
        return None
    return expected, mine()
