"""Meta kernels of the grid sampler family (``dispatchcore.native.grid_sampler``): geometry and dtype only.

Mirrors torch's meta functions for ``grid_sampler_2d`` (its decomposition's output shape) and
``grid_sampler_2d_backward`` (``zeros_like(input)``/``empty_like(grid)``, contiguous). A bad call
raises the CPU kernel's error, from the family's shared rules (torch's Meta kernels check less or
fail with other texts; dispatchcore keeps one set of rules). Invariant: no kernel reads data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchcore.native import grid_sampler as G

from .kernels import meta_tensor

__all__ = ["KERNELS"]


def grid_sampler_2d_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    return meta_tensor(G.forward_check(input, grid, interpolation_mode, padding_mode), input.dtype)


def grid_sampler_2d_backward_meta(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                                  output_mask):
    G.backward_check(grad_output, input, grid, interpolation_mode, padding_mode)
    return (meta_tensor(tuple(input.shape), input.dtype) if output_mask[0] else None,
            meta_tensor(tuple(grid.shape), grid.dtype))


KERNELS: dict[str, Callable[..., Any]] = {
    "grid_sampler_2d": grid_sampler_2d_meta,
    "grid_sampler_2d_backward": grid_sampler_2d_backward_meta,
}
