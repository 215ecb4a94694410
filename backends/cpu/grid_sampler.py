"""CPU kernels of the grid sampler family (``dispatchcore.native.grid_sampler``): numpy in, tensor out.

Mirrors ``grid_sampler_2d_cpu``/``grid_sampler_2d_backward_cpu`` (``GridSampler.cpp``) and the
arithmetic of ``cpu/GridSamplerKernel.cpp``/``GridSampler.h``: grid locations unnormalised to pixel
coordinates, padded (border clamps; reflection mirrors by the edges then clamps, its gradient
flipping sign with each mirror; clamped borders have zero gradient), then read at the taps of the
interpolation. Every location is a vector lane: the taps of all locations are gathered at once with
computed indices (``take_along_axis``), and the backward's scatter into ``grad_input`` is one
``bincount``; there is no Python loop over pixels. float16 computes in float32.

Invariant: results are new contiguous arrays (``at::empty``/``zeros_like(contiguous_format)``), checked
and shaped by the family's shared rules, so Meta fails alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchcore.native import grid_sampler as G
from dispatchcore.tensor import wrap_cpu

from .kernels import _F16, _F32

__all__ = ["KERNELS"]

# One tap of an interpolation over all (N, P) locations: integer-valued float coordinates
# (x, y), its weight and the weight's derivatives in the unnormalised x and y.
_Tap = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _acc(dt: np.dtype) -> np.dtype:
    return _F32 if dt == _F16 else dt


def _unnormalize(coord: np.ndarray, size: int, align_corners: bool) -> tuple[np.ndarray, float]:
    """[-1, 1] to pixel coordinates (pixel centres at ±1 with align_corners, else edges); d/dcoord."""
    scale = (size - 1) / 2 if align_corners else size / 2
    shift = scale if align_corners else scale - 0.5
    return coord * scale + shift, scale


def _clip(coord: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``clip_coordinates_set_grad``: clamped to [0, size - 1]; gradient zero at and beyond the borders."""
    with np.errstate(invalid="ignore"):
        inside = (coord > 0) & (coord < size - 1)
    return np.clip(coord, 0, size - 1), inside.astype(coord.dtype)


def _reflect(coord: np.ndarray, twice_low: int, twice_high: int) -> tuple[np.ndarray, np.ndarray]:
    """``reflect_coordinates_set_grad``: mirrored by the bounds (given doubled) until inside them."""
    if twice_low == twice_high:
        return np.zeros_like(coord), np.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = coord - low
    sign = np.where(shifted < 0, -1, 1).astype(coord.dtype)
    shifted = np.abs(shifted)
    with np.errstate(invalid="ignore"):
        extra = np.fmod(shifted, span)
        even = np.floor(shifted / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _pad(coord: np.ndarray, size: int, padding_mode: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """``compute_coordinates`` with its gradient: the padding of an unnormalised coordinate."""
    grad = np.ones_like(coord)
    if padding_mode == G.REFLECTION:
        coord, grad = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    if padding_mode in (G.BORDER, G.REFLECTION):
        coord, clip_grad = _clip(coord, size)
        grad = grad * clip_grad
    return coord, grad


def _cubic(t: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 for the fraction ``t``; d/dt."""
    a = G.CUBIC_A

    def inner(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1, (3 * (a + 2) * x - 2 * (a + 3)) * x

    def outer(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, (3 * a * x - 10 * a) * x + 8 * a

    (w0, d0), (w1, d1), (w2, d2), (w3, d3) = outer(t + 1), inner(t), inner(1 - t), outer(2 - t)
    return [w0, w1, w2, w3], [d0, d1, -d2, -d3]


def _taps(grid: np.ndarray, H: int, W: int, interpolation_mode: int, padding_mode: int,  # noqa: N803
          align_corners: bool) -> tuple[list[_Tap], np.ndarray, np.ndarray]:
    """The taps of every location of ``grid`` (N, P, 2), and d(pixel x)/d(grid x), d(pixel y)/d(grid y)."""
    x, sx = _unnormalize(grid[..., 0], W, align_corners)
    y, sy = _unnormalize(grid[..., 1], H, align_corners)
    if interpolation_mode == G.BICUBIC:  # padded per tap; the location's gradient is the unnormalisation's
        x0, y0 = np.floor(x), np.floor(y)
        wx, dx = _cubic(x - x0)
        wy, dy = _cubic(y - y0)
        xs = [np.trunc(_pad(x0 + (i - 1), W, padding_mode, align_corners)[0]) for i in range(4)]
        ys = [np.trunc(_pad(y0 + (j - 1), H, padding_mode, align_corners)[0]) for j in range(4)]
        taps = [(xs[i], ys[j], wx[i] * wy[j], dx[i] * wy[j], wx[i] * dy[j]) for j in range(4) for i in range(4)]
        return taps, np.full_like(x, sx), np.full_like(y, sy)
    x, gx = _pad(x, W, padding_mode, align_corners)
    y, gy = _pad(y, H, padding_mode, align_corners)
    if interpolation_mode == G.NEAREST:  # nearbyint: halves to even
        zero = np.zeros_like(x)
        return [(np.rint(x), np.rint(y), np.ones_like(x), zero, zero)], gx * sx, gy * sy
    x0, y0 = np.floor(x), np.floor(y)
    x1, y1 = x0 + 1, y0 + 1
    tw, te, tn, ts = x - x0, x1 - x, y - y0, y1 - y
    taps = [(x0, y0, ts * te, -ts, -te), (x1, y0, ts * tw, ts, -tw),
            (x0, y1, tn * te, -tn, te), (x1, y1, tn * tw, tn, tw)]
    return taps, gx * sx, gy * sy


def _index(tap: _Tap, H: int, W: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    """The flat pixel index of a tap (clamped, for reading) and whether it lies inside the image."""
    x, y = tap[0], tap[1]
    with np.errstate(invalid="ignore"):
        inside = (x >= 0) & (x < W) & (y >= 0) & (y < H)
    xi = np.where(inside, x, 0).astype(np.int64)
    yi = np.where(inside, y, 0).astype(np.int64)
    return yi * W + xi, inside


def _operands(input: Any, grid: Any) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    x, g = input._data, grid._data
    acc = _acc(x.dtype)
    n, c, h, w = x.shape
    return (x.astype(acc, copy=False).reshape(n, c, h * w),
            g.astype(acc, copy=False).reshape(n, g.shape[1] * g.shape[2], 2), acc)


def grid_sampler_2d_cpu(input, grid, interpolation_mode, padding_mode, align_corners):
    shape = G.forward_check(input, grid, interpolation_mode, padding_mode)
    flat, g, acc = _operands(input, grid)
    H, W = (int(s) for s in input.shape[2:])  # noqa: N806 - torch's names
    out = np.zeros(flat.shape[:2] + g.shape[1:2], acc)
    if out.size:
        taps = _taps(g, H, W, interpolation_mode, padding_mode, align_corners)[0]
        for tap in taps:
            index, inside = _index(tap, H, W)
            values = np.take_along_axis(flat, index[:, None, :], axis=2)
            out += values * np.where(inside, tap[2], 0)[:, None, :]
    return wrap_cpu(np.ascontiguousarray(out.reshape(shape).astype(input._data.dtype, copy=False)))


def grid_sampler_2d_backward_cpu(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                                 output_mask):
    G.backward_check(grad_output, input, grid, interpolation_mode, padding_mode)
    flat, g, acc = _operands(input, grid)
    dt = input._data.dtype
    N, C, H, W = (int(s) for s in input.shape)  # noqa: N806
    P = g.shape[1]  # noqa: N806
    go = grad_output._data.astype(acc, copy=False).reshape(N, C, P)
    grad_grid = np.zeros((N, P, 2), acc)
    scattered: list[tuple[np.ndarray, np.ndarray]] = []
    if N * C * P:
        taps, mult_x, mult_y = _taps(g, H, W, interpolation_mode, padding_mode, align_corners)
        base = (np.arange(N * C, dtype=np.int64) * (H * W)).reshape(N, C, 1)
        for tap in taps:
            index, inside = _index(tap, H, W)
            if output_mask[0]:
                scattered.append(((base + index[:, None, :]).ravel(),
                                  (go * np.where(inside, tap[2], 0)[:, None, :]).ravel()))
            if interpolation_mode != G.NEAREST:  # nearest is flat in the grid: its gradient stays zero
                values = np.take_along_axis(flat, index[:, None, :], axis=2)
                dot = np.einsum("ncp,ncp->np", values, go) * inside
                grad_grid[..., 0] += dot * tap[3]
                grad_grid[..., 1] += dot * tap[4]
        grad_grid[..., 0] *= mult_x
        grad_grid[..., 1] *= mult_y
    grad_input = None
    if output_mask[0]:
        total = np.zeros(N * C * H * W)
        if scattered:
            total = np.bincount(np.concatenate([i for i, _ in scattered]),
                                weights=np.concatenate([w for _, w in scattered]), minlength=N * C * H * W)
        grad_input = wrap_cpu(np.ascontiguousarray(total.reshape(N, C, H, W).astype(dt)))
    grad_grid = grad_grid.reshape(tuple(int(s) for s in grid.shape)).astype(dt, copy=False)
    return grad_input, wrap_cpu(np.ascontiguousarray(grad_grid))


KERNELS: dict[str, Callable[..., Any]] = {
    "grid_sampler_2d": grid_sampler_2d_cpu,
    "grid_sampler_2d_backward": grid_sampler_2d_backward_cpu,
}
