"""Meta kernels of the summary family: ``histc`` (and its ``out=``); ``bincount`` has none, as in torch.

Mirrors torch's Python ``meta_histc``: it checks the bins and the range it is given (in its own
words), not the dtype, and returns ``bins`` elements of the input's dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore.tensor import Tensor

from .kernels import meta_tensor, python_out_wrapper

__all__ = ["KERNELS"]


def histc_meta(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    if bins <= 0:
        raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
    if not max >= min:
        raise RuntimeError("histc(): max must be larger than min")
    return meta_tensor((bins,), self.dtype)


KERNELS: dict[str, Callable[..., Any]] = {"histc": histc_meta, "histc.out": python_out_wrapper(histc_meta)}
