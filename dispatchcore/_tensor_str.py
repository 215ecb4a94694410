"""``repr`` of tensors in PyTorch's format (``torch/_tensor_str.py``).

Floats print with 4 decimals, as integers with a trailing ``.`` when every value is whole, or in
scientific notation when the magnitudes span more than 1000x (or exceed 1e8, or go below 1e-4);
columns are right-aligned; the dtype is shown unless it is the default for its kind.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .dtypes import bool_, get_default_dtype, int64

__all__ = ["tensor_repr"]

_THRESHOLD = 1000
_EDGEITEMS = 3


def _float_formatter(values: np.ndarray):
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    if nonzero.size == 0:
        int_mode = bool(np.all(finite == np.ceil(finite))) if finite.size else True
        return lambda v: _special(v) or (f"{v:.0f}." if int_mode else f"{v:.4f}")
    lo, hi = float(nonzero.min()), float(nonzero.max())
    int_mode = bool(np.all(finite == np.ceil(finite)))
    if int_mode:
        sci = hi / lo > 1000.0 or hi > 1.0e8
        fmt = "{:.4e}" if sci else "{:.0f}."
    else:
        sci = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        fmt = "{:.4e}" if sci else "{:.4f}"
    return lambda v: _special(v) or fmt.format(v)


def _special(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def _summarize(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0 or a.size <= _THRESHOLD:
        return a.reshape(-1)
    parts = [_summarize(a[i]) for i in (*range(_EDGEITEMS), *range(-_EDGEITEMS, 0))] \
        if a.shape[0] > 2 * _EDGEITEMS else [_summarize(x) for x in a]
    return np.concatenate(parts) if parts else a.reshape(-1)


def _format_data(a: np.ndarray, indent: int) -> str:
    flat = _summarize(a)
    if a.dtype == np.bool_:
        fmt = lambda v: "True" if v else "False"  # noqa: E731
    elif a.dtype.kind in "iu":
        fmt = str
    elif a.dtype.kind == "c":
        real = _float_formatter(flat.real.astype(np.float64))
        imag = _float_formatter(flat.imag.astype(np.float64))
        fmt = lambda v: f"{real(v.real)}{'+' if v.imag >= 0 else '-'}{imag(abs(v.imag))}j"  # noqa: E731
    else:
        fmt = _float_formatter(flat.astype(np.float64))
    width = max((len(fmt(v)) for v in flat.tolist()), default=0)
    summarize = a.size > _THRESHOLD

    def rec(x: np.ndarray, depth: int) -> str:
        if x.ndim == 0:
            return fmt(x.item()).rjust(width)
        if x.ndim == 1:
            items = x.tolist()
            if summarize and len(items) > 2 * _EDGEITEMS:
                cells = [fmt(v).rjust(width) for v in items[:_EDGEITEMS]] + ["..."] + \
                        [fmt(v).rjust(width) for v in items[-_EDGEITEMS:]]
            else:
                cells = [fmt(v).rjust(width) for v in items]
            return "[" + ", ".join(cells) + "]"
        sep = "," + "\n" * (x.ndim - 1) + " " * (indent + depth + 1)
        rows = list(range(x.shape[0]))
        if summarize and x.shape[0] > 2 * _EDGEITEMS:
            parts = [rec(x[i], depth + 1) for i in rows[:_EDGEITEMS]] + ["..."] + \
                    [rec(x[i], depth + 1) for i in rows[-_EDGEITEMS:]]
        else:
            parts = [rec(x[i], depth + 1) for i in rows]
        return "[" + sep.join(parts) + "]"

    return rec(a, 0)


def tensor_repr(t: Any) -> str:
    """``repr(t)`` as torch prints it, with ``dispatchcore.`` in place of ``torch.``."""
    suffixes = []
    dtype = t.dtype
    default = bool_ if dtype is bool_ else int64 if dtype._category == 1 else get_default_dtype()
    if dtype._category == 3:  # complex: the default is the complex twin of the default float
        default = dtype if (dtype.itemsize == 2 * get_default_dtype().itemsize) else None
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.device.type == "meta":
        body = "..."
        suffixes.append(f"size={tuple(t.shape)}")
        default = get_default_dtype()  # no elements to tell an int64 or bool tensor by: torch names it
    elif t.numel() == 0:
        body = "[]"
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        default = get_default_dtype()
    else:
        body = _format_data(t._cpu_data(), len("tensor("))
    if dtype is not default:
        suffixes.append(f"dtype={dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *suffixes]) + ")"
