"""Meta ``out=`` kernels of the structured core ops, built from their functional Meta kernels.

The Meta side of ``backends/cpu/structured.py``: the functional kernel gives the result's
geometry and dtype, the ``out`` tensor is checked by torch's rule for the op
(``dispatchcore.native.structured``) and given that geometry (``resize_output``). No data moves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore import parse_schema
from dispatchcore.native.structured import OUTS, out_arguments, out_call

from .kernels import _resize_out, kernel_table

__all__ = ["KERNELS"]


def _out_kernel(functional: Callable[..., Any], rule: str, outs: tuple[str, ...]) -> Callable[..., Any]:
    def out_meta(*args: Any, **kwargs: Any) -> Any:
        targets = tuple(kwargs.pop(name) for name in outs)
        results = out_call(rule, functional, args, kwargs, targets)
        for r, out in zip(results, targets):
            _resize_out(out, tuple(r.shape), tuple(r.stride()))
        return targets[0] if len(targets) == 1 else targets

    return out_meta


def _kernels() -> dict[str, Callable[..., Any]]:
    functional = kernel_table()
    return {name: _out_kernel(functional[of], rule, out_arguments(parse_schema(f"aten::{name}{tail}")))
            for name, (tail, of, rule) in OUTS.items()}


KERNELS = _kernels()
