"""Grid sampling: ``grid_sampler``, ``grid_sampler_2d`` and ``grid_sampler_2d_backward``.

``grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)`` reads a 4-D
``input`` (N, C, H_in, W_in) at the normalised ``(x, y)`` locations of ``grid`` (N, H_out, W_out, 2),
``-1``/``+1`` being the image's left/top and right/bottom edges (pixel centres with
``align_corners``). Modes: interpolation bilinear (0), nearest (1, ``nearbyint``: halves to even),
bicubic (2, the cubic convolution with ``A = -0.75``); padding of locations outside the image:
zeros (0), border (1, clamped), reflection (2, mirrored by the edges, then clamped). Bicubic pads each
of its 4 x 4 taps rather than the location. ``grid_sampler`` is the CompositeImplicitAutograd entry
that picks the 2-d (4-D input) or 3-d (5-D input) operator; dispatchcore builds the 2-d one only.

Mirrors ``aten/src/ATen/native/GridSampler.cpp``, ``GridSampler.h``/``GridSamplerUtils.h`` (the
checks and coordinate rules) and ``cpu/GridSamplerKernel.cpp`` as the dispatcher sees them, and
``derivatives.yaml``'s two entries. The rules the CPU and Meta backends share (torch's checks and
their texts, the output shape) are the plain functions of the first section, so both fail alike.

Invariant: each operator is registered at exactly the keys torch 2.13 registers it; composite
kernels and derivative formulas call dispatched operators only. ``GridSampler2DBackward0`` calls
the dispatched ``grid_sampler_2d_backward`` (so its gradients' node is
``GridSampler2DBackwardBackward0``, as in torch); that node differentiates the first backward
re-expressed with differentiable primitives, so double backward works.

Deviations (torch's CPU kernels read out of bounds or leave the output uninitialised there):
an interpolation or padding mode outside 0..2 raises the text of torch's Meta kernel
(``Invalid interpolation mode 3``), and ``grid_sampler_2d_backward`` checks that ``grad_output``
has the output's shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES
from ..ops import aten as A
from ..tensor import Tensor
from . import Bindings

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "backward_check", "forward_check", "register", "register_autograd"]

SCHEMAS: tuple[str, ...] = (
    "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor",
    "grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) "
    "-> Tensor",
    "grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, "
    "int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)",
)

BILINEAR, NEAREST, BICUBIC = 0, 1, 2  # GridSamplerInterpolation
ZEROS, BORDER, REFLECTION = 0, 1, 2  # GridSamplerPadding
CUBIC_A = -0.75  # the cubic convolution's parameter (Keys' kernel, as OpenCV and torch use)


# --- rules the backends share (checks, texts, shapes) ----------------------------------------------------
def _sizes(t: Any) -> str:
    return f"[{', '.join(str(int(s)) for s in t.shape)}]"


def common_check(input: Any, grid: Any) -> None:
    """``check_grid_sampler_common``: same device, same batch, grid's last size, non-empty spatial dims."""
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but input is on "
                           f"{input.device} and grid is on {grid.device}")
    if input.dim() < 1 or grid.dim() < 1:  # size(0) of a 0-d tensor: torch's dimension error
        raise IndexError("dimension specified as 0 but tensor has no dimensions")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but "
                           f"got grid with sizes {_sizes(grid)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {_sizes(input)} with dimension {i} being empty")


def check_2d(input: Any, grid: Any) -> None:
    """``check_grid_sampler_2d``: a 4-D input and a 4-D grid."""
    if not (input.dim() == 4 and grid.dim() == 4):
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")


def check_3d(input: Any, grid: Any, interpolation_mode: int) -> None:
    """``check_grid_sampler_3d``: a 5-D input and a 5-D grid, and no bicubic."""
    if not (input.dim() == 5 and grid.dim() == 5):
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if interpolation_mode == BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def modes_check(interpolation_mode: int, padding_mode: int) -> None:
    """Modes outside the enums (torch's CPU kernel computes nothing for them; its Meta kernel's texts)."""
    if interpolation_mode not in (BILINEAR, NEAREST, BICUBIC):
        raise RuntimeError(f"Invalid interpolation mode {interpolation_mode}")
    if padding_mode not in (ZEROS, BORDER, REFLECTION):
        raise RuntimeError(f"Invalid padding mode {padding_mode}")


def _scalar_type_check(expected: Any, found: Any) -> None:
    """``data_ptr<scalar_t>()`` of a tensor of another dtype than the dispatched one."""
    if found is not expected:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[expected.name]} but found "
                           f"{SCALAR_TYPE_NAMES[found.name]}")


def _dispatch_check(kernel: str, dtype: Any) -> None:
    """``AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16, ...)`` on the input's dtype."""
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_TYPE_NAMES[dtype.name]}\'')


def forward_check(input: Any, grid: Any, interpolation_mode: int, padding_mode: int) -> tuple[int, ...]:
    """``grid_sampler_2d_cpu``'s checks, in torch's order; the output's shape (N, C, H_out, W_out)."""
    common_check(input, grid)
    check_2d(input, grid)
    _dispatch_check("grid_sampler_2d_cpu_kernel_impl", input.dtype)
    _scalar_type_check(input.dtype, grid.dtype)
    modes_check(interpolation_mode, padding_mode)
    return (int(input.shape[0]), int(input.shape[1]), int(grid.shape[1]), int(grid.shape[2]))


def backward_check(grad_output: Any, input: Any, grid: Any, interpolation_mode: int, padding_mode: int) -> None:
    """``grid_sampler_2d_backward_cpu``'s checks (grid's dtype before grad_output's), and grad_output's shape."""
    common_check(input, grid)
    check_2d(input, grid)
    _dispatch_check("grid_sampler_2d_backward_cpu_kernel_impl", input.dtype)
    _scalar_type_check(input.dtype, grid.dtype)
    _scalar_type_check(input.dtype, grad_output.dtype)
    modes_check(interpolation_mode, padding_mode)
    expected = [int(input.shape[0]), int(input.shape[1]), int(grid.shape[1]), int(grid.shape[2])]
    if [int(s) for s in grad_output.shape] != expected:
        raise RuntimeError(f"grid_sampler_2d_backward(): expected grad_output to have sizes {expected}, but got "
                           f"grad_output with sizes {_sizes(grad_output)}")


# --- composite kernels ---------------------------------------------------------------------------------------
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``at::native::grid_sampler``: the 2-d operator for a 4-D input, else the 3-d one.

    (The cuDNN path needs CUDA tensors.) dispatchcore has no ``grid_sampler_3d``: a call that
    passes its checks raises NotImplementedError.
    """
    if input.dim() == 4:
        return A.grid_sampler_2d.default(input, grid, interpolation_mode, padding_mode, align_corners)
    common_check(input, grid)
    check_3d(input, grid, interpolation_mode)
    raise NotImplementedError("grid_sampler(): a 5-D input needs aten::grid_sampler_3d, which dispatchcore does "
                              "not build (only grid_sampler_2d)")


IMPLICIT: dict[str, Callable[..., Any]] = {"grid_sampler": grid_sampler}  # CompositeImplicitAutograd


def register(lib: Library) -> None:
    """The composite kernels, at the keys torch registers them."""
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- the sampling in differentiable primitives (for double backward) ------------------------------------------
def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return A.mul.Scalar(A.add.Scalar(coord, 1), (size - 1) / 2)
    return A.div.Scalar(A.sub.Scalar(A.mul.Scalar(A.add.Scalar(coord, 1), size), 1), 2)


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """``reflect_coordinates``: mirrored by the bounds until it lies between them."""
    if twice_low == twice_high:
        return A.mul.Scalar(coord, 0)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = A.abs.default(A.sub.Scalar(coord, low))
    extra = A.fmod.Scalar(shifted, span)
    flips = A.floor.default(A.div.Scalar(A.detach.default(shifted), span))
    even = A.eq.Scalar(A.fmod.Scalar(flips, 2), 0)
    return A.where.self(even, A.add.Scalar(extra, low), A.add.Scalar(A.rsub.Scalar(extra, span), low))


def _pad_coordinates(coord: Tensor, size: int, padding_mode: int, align_corners: bool) -> Tensor:
    """``compute_coordinates``: border clamps, reflection mirrors then clamps, zeros leaves it."""
    if padding_mode == REFLECTION:
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    if padding_mode in (BORDER, REFLECTION):
        coord = A.clamp.default(coord, 0, size - 1)
    return coord


def _gather(flat: Tensor, ix: Tensor, iy: Tensor, W: int, H: int, weight: Tensor) -> Tensor:  # noqa: N803
    """``weight * input[n, :, iy, ix]`` over (N, C, P); taps outside the image read zero."""
    inside = A.logical_and.default(A.logical_and.default(A.ge.Scalar(ix, 0), A.lt.Scalar(ix, W)),
                                   A.logical_and.default(A.ge.Scalar(iy, 0), A.lt.Scalar(iy, H)))
    index = A.add.Tensor(A.mul.Scalar(A.clamp.default(iy, 0, H - 1), W), A.clamp.default(ix, 0, W - 1))
    n, c, _ = flat.shape
    index = A.expand.default(A.unsqueeze.default(A._to_copy.default(index, dtype=_int64()), 1),
                             [n, c, index.shape[-1]])
    values = A.gather.default(flat, 2, index)
    w = A.where.self(inside, weight, A.zeros_like.default(weight))
    return A.mul.Tensor(values, A.unsqueeze.default(w, 1))


def _int64() -> Any:
    from ..dtypes import int64
    return int64


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The cubic convolution weights of the taps at offsets -1, 0, 1, 2 for the fraction ``t``."""
    a = CUBIC_A

    def inner(x: Tensor) -> Tensor:  # |x| <= 1: ((A + 2) x - (A + 3)) x^2 + 1
        return A.add.Scalar(A.mul.Tensor(A.mul.Tensor(A.sub.Scalar(A.mul.Scalar(x, a + 2), a + 3), x), x), 1)

    def outer(x: Tensor) -> Tensor:  # 1 < |x| < 2: ((A x - 5A) x + 8A) x - 4A
        return A.sub.Scalar(A.mul.Tensor(A.add.Scalar(A.mul.Tensor(A.sub.Scalar(A.mul.Scalar(x, a), 5 * a), x),
                                                      8 * a), x), 4 * a)

    return [outer(A.add.Scalar(t, 1)), inner(t), inner(A.rsub.Scalar(t, 1)), outer(A.rsub.Scalar(t, 2))]


def sample_primitives(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                      align_corners: bool) -> Tensor:
    """``grid_sampler_2d`` written with differentiable dispatched operators (slow; for double backward)."""
    N, C, H, W = (int(s) for s in input.shape)  # noqa: N806 - torch's names
    P = int(grid.shape[1]) * int(grid.shape[2])  # noqa: N806
    flat = A.reshape.default(input, [N, C, H * W])
    coords = A.reshape.default(grid, [N, P, 2])
    x = _unnormalize(A.select.int(coords, 2, 0), W, align_corners)
    y = _unnormalize(A.select.int(coords, 2, 1), H, align_corners)
    ones = A.ones_like.default(x)
    if interpolation_mode == BICUBIC:
        x0, y0 = A.floor.default(A.detach.default(x)), A.floor.default(A.detach.default(y))
        wx, wy = _cubic_weights(A.sub.Tensor(x, x0)), _cubic_weights(A.sub.Tensor(y, y0))
        out = None
        for i in range(4):
            tx = A.trunc.default(_pad_coordinates(A.add.Scalar(x0, i - 1), W, padding_mode, align_corners))
            for j in range(4):
                ty = A.trunc.default(_pad_coordinates(A.add.Scalar(y0, j - 1), H, padding_mode, align_corners))
                term = _gather(flat, tx, ty, W, H, A.mul.Tensor(wx[i], wy[j]))
                out = term if out is None else A.add.Tensor(out, term)
    else:
        x = _pad_coordinates(x, W, padding_mode, align_corners)
        y = _pad_coordinates(y, H, padding_mode, align_corners)
        if interpolation_mode == NEAREST:
            out = _gather(flat, A.round.default(A.detach.default(x)), A.round.default(A.detach.default(y)), W, H,
                          ones)
        else:
            x0, y0 = A.floor.default(A.detach.default(x)), A.floor.default(A.detach.default(y))
            fx, fy = A.sub.Tensor(x, x0), A.sub.Tensor(y, y0)
            gx, gy = A.rsub.Scalar(fx, 1), A.rsub.Scalar(fy, 1)
            x1, y1 = A.add.Scalar(x0, 1), A.add.Scalar(y0, 1)
            out = A.add.Tensor(
                A.add.Tensor(_gather(flat, x0, y0, W, H, A.mul.Tensor(gx, gy)),
                             _gather(flat, x1, y0, W, H, A.mul.Tensor(fx, gy))),
                A.add.Tensor(_gather(flat, x0, y1, W, H, A.mul.Tensor(gx, fy)),
                             _gather(flat, x1, y1, W, H, A.mul.Tensor(fx, fy))))
    return A.reshape.default(out, [N, C, int(grid.shape[1]), int(grid.shape[2])])


# --- derivatives (derivatives.yaml) -----------------------------------------------------------------------------
def _grid_sampler_2d_formula(grad: Any, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                             align_corners: bool, grad_input_mask: tuple[bool, ...]) -> tuple[Any, Any]:
    """GridSampler2DBackward0: the dispatched ``grid_sampler_2d_backward`` (grid's gradient always computed)."""
    if grad is None:
        return None, None
    gi, gg = A.grid_sampler_2d_backward.default(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                                                [bool(grad_input_mask[0]), bool(grad_input_mask[1])])
    return (gi if grad_input_mask[0] else None), (gg if grad_input_mask[1] else None)


def _first_backward(grad_output: Tensor, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool, output_mask: Sequence[bool]) -> tuple[Any, Any]:
    """``grid_sampler_2d_backward`` as a differentiable function of (grad_output, input, grid)."""
    from ..autograd.grad_mode import enable_grad
    from ..autograd.graph import grad as autograd_grad

    with enable_grad():
        x = input if input.requires_grad else A.detach.default(input).requires_grad_()
        g = grid if grid.requires_grad else A.detach.default(grid).requires_grad_()
        out = sample_primitives(x, g, interpolation_mode, padding_mode, align_corners)
        gi, gg = autograd_grad([out], [x, g], [grad_output], create_graph=True, allow_unused=True)
    if gi is None:
        gi = A.zeros_like.default(input)
    if gg is None:
        gg = A.zeros_like.default(grid)
    return (gi if output_mask[0] else None), gg


def _grid_sampler_2d_backward_formula(grads: tuple[Any, ...], grad_output: Tensor, input: Tensor, grid: Tensor,
                                      interpolation_mode: int, padding_mode: int, align_corners: bool,
                                      output_mask: Sequence[bool], grad_input_mask: tuple[bool, ...]) -> Any:
    """``grid_sampler_2d_double_backward``: the first backward in primitives, differentiated."""
    from .norms import _masked, _vjp

    d_grad_output, d_input, d_grid = _vjp(lambda grad_output, input, grid: _first_backward(
        grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask),
        {"grad_output": grad_output, "input": input, "grid": grid}, ("grad_output", "input", "grid"), grads)
    if d_grid is None and grads[0] is not None:  # torch samples grad_input's cotangent: zeros for nearest
        d_grid = A.zeros_like.default(grid)
    return _masked((d_grad_output, d_input, d_grid), grad_input_mask)


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names (``derivatives.yaml``)."""
    from ..autograd.kernels import register_derivative

    register_derivative(lib, "aten::grid_sampler_2d", "GridSampler2DBackward0", ("input", "grid"),
                        _grid_sampler_2d_formula)
    register_derivative(lib, "aten::grid_sampler_2d_backward", "GridSampler2DBackwardBackward0",
                        ("grad_output", "input", "grid"), _grid_sampler_2d_backward_formula)


# --- torch.* functions ------------------------------------------------------------------------------------------
_BINDINGS = Bindings({
    name: (f"{name}(Tensor input, Tensor grid, int64_t interpolation_mode, int64_t padding_mode, "
           "bool align_corners)",)
    for name in ("grid_sampler", "grid_sampler_2d")
})


def _binding(name: str) -> Callable[..., Any]:
    """``torch.<name>``: torch's argument parsing (its TypeError texts), then the operator."""
    # the operator is looked up per call: this module is imported before aten defines it
    function = _BINDINGS.function(name, lambda _, bound: getattr(A, name).default(*bound.values()))
    function.__doc__ = (f"``torch.{name}(input, grid, interpolation_mode, padding_mode, align_corners)``.\n\n"
                        "    Example:\n"
                        "        >>> import dispatchcore as dc\n"
                        "        >>> x = dc.arange(4.).reshape(1, 1, 2, 2)\n"
                        "        >>> grid = dc.zeros(1, 1, 1, 2)  # the image's centre\n"
                        f"        >>> dc.{name}(x, grid, 0, 0, False).item()\n"
                        "        1.5\n")
    return function


FUNCTIONS: dict[str, Callable[..., Any]] = {name: _binding(name) for name in _BINDINGS.signatures}
METHODS: dict[str, Callable[..., Any]] = {}
