"""CPU ``out=`` kernels of the structured core ops, built from their functional kernels.

Mirrors the CPU side of torch's structured kernels: one implementation per op serves the
functional, in-place and ``out=`` forms. Here the functional kernel computes, then the result is
checked against the ``out`` tensor by torch's rule for the op (``dispatchcore.native.structured``),
``out`` is resized as ``resize_output`` does (warning when it had elements) and written.
Invariant: an ``out=`` call writes exactly what the functional call returns, cast to ``out``'s dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore import parse_schema
from dispatchcore.native.structured import OUTS, out_arguments, out_call

from . import kernels as _k

__all__ = ["KERNELS"]

def _out_kernel(functional: Callable[..., Any], rule: str, outs: tuple[str, ...]) -> Callable[..., Any]:
    def out_cpu(*args: Any, **kwargs: Any) -> Any:
        targets = tuple(kwargs.pop(name) for name in outs)
        results = out_call(rule, functional, args, kwargs, targets)
        for r, out in zip(results, targets):
            if 0 in out._data.strides:  # an expanded output: TensorIterator's overlap check
                _k._assert_no_internal_overlap(out._data)
            np.copyto(_k._resize_out(out, r._data.shape, [r._data]), r._data, casting="unsafe")
        return targets[0] if len(targets) == 1 else targets

    return out_cpu


def _kernels() -> dict[str, Callable[..., Any]]:
    from . import KERNELS as CPU_KERNELS  # the functional kernels

    functional = dict(CPU_KERNELS)
    return {name: _out_kernel(functional[of], rule, out_arguments(parse_schema(f"aten::{name}{tail}")))
            for name, (tail, of, rule) in OUTS.items()}


KERNELS = _kernels()
