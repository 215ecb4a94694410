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


def outcome(lib: Any, fn: Callable[[Any], Any]) -> tuple[Any, list[str]]:
    """``fn(lib)``'s result as ``described`` (or its error as ``("error", class name, first line)``) and the
    UserWarnings it gave, comparable across the libraries. Warnings torch gives once per program
    are left out (an earlier test may have had them); ``dispatchcore.Size`` reads as ``torch.Size``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(lib)
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            return ("error", type(e).__name__, str(e).splitlines()[0]), []
    texts = [str(w.message).split(" (Triggered internally")[0].replace("dispatchcore.Size", "torch.Size")
             for w in caught if w.category is UserWarning and "once per program" not in str(w.message)]
    return described(result), texts


def described(result: Any) -> Any:
    """A tensor as (dtype name, shape, strides, elements) (no elements on meta; ``repr``, so NaN equals
    NaN); a tuple as (its class name, its items described); anything else as it is."""
    import numpy as np

    if isinstance(result, tuple):
        return type(result).__name__, tuple(described(r) for r in result)
    if hasattr(result, "dtype") and hasattr(result, "stride"):
        values = None if result.device.type == "meta" else repr(np.asarray(result.tolist()).tolist())
        return str(result.dtype).rpartition(".")[2], tuple(result.shape), tuple(result.stride()), values
    return result


def mode_calls(lib: Any, run: Callable[[], Any]) -> list[tuple[str, list[Any], list[Any]]]:
    """The operators a dispatch mode of ``lib`` sees while ``run()`` runs: each as its name, its positional
    arguments (numbers as they are, others by type) and its keywords (bools and strings by value)."""
    seen: list[tuple[str, list[Any], list[Any]]] = []

    def record(func: Any, types: Any, args: Any, kwargs: Any) -> None:
        keywords = sorted((k, v if isinstance(v, (bool, str)) else type(v).__name__) for k, v in kwargs.items())
        seen.append((str(func), [a if isinstance(a, (int, float)) else type(a).__name__ for a in args], keywords))

    with recording_mode(lib, record):
        run()
    return seen


def outcome_and_calls(lib: Any, fn: Callable[[Any], Any]) -> tuple[Any, list[tuple[str, list[Any], list[Any]]]]:
    """``fn(lib)``'s ``outcome``, then the operators a dispatch mode of ``lib`` sees while ``fn(lib)`` runs again
    (the comparison of a CompositeImplicitAutograd operator: its result and the calls it is made of)."""
    return outcome(lib, fn), mode_calls(lib, lambda: fn(lib))
