"""Convolution, pooling, linear algebra and upsampling: the operators, composites, derivatives and bindings.

The family: ``addmm`` (and ``linear``, which lowers to it), ``baddbmm``/``addbmm``, ``convolution``/``_convolution`` and
``convolution_backward`` (1d/2d/3d, strided, padded, dilated, grouped, transposed), the ``conv*``
entry points, max/avg pooling in 2d and 3d with their backward operators, adaptive average
pooling, the 1d average poolings (CompositeImplicitAutograd: the 2d ones over a height-1 view),
nearest and bilinear upsampling, ``im2col``/``col2im``.

Mirrors ``aten/src/ATen/native/Convolution.cpp`` (the CompositeExplicitAutograd ``convolution``,
``_convolution``, ``convolution_backward`` and the CompositeImplicitAutograd
``_convolution_double_backward``), ``Linear.cpp``, ``LinearAlgebra.cpp`` (``addmm``, ``baddbmm``,
``addbmm``), the pooling files (``Pooling.cpp``, ``DilatedMaxPool{2,3}d.cpp``, ``AveragePool{2,3}d.cpp``,
``AdaptiveAveragePooling*.cpp``, ``Pool.h``: the output-size rule and its checks), ``UpSample.h``
(the source-index rules) and ``Im2Col.cpp``/``Col2Im.cpp``; the formulas of ``derivatives.yaml``.
The shape rules and checks the CPU and Meta backends share are the plain functions of the first
section, so both fail alike.

Invariant: each operator is registered at exactly the keys torch 2.13 registers it. The
convolution composites call dispatched operators only: on CPU, the cases torch's
``_select_conv_backend`` gives ``ConvBackend::Slow2d`` (non-transposed, non-dilated 1-d/2-d, as
torch's build without mkldnn runs them) go to the CPU kernels ``thnn_conv2d`` ->
``_slow_conv2d_forward`` and ``_slow_conv2d_backward`` (``ConvolutionMM2d.cpp``); every other case
and every other device uses im2col made of dispatched operators (``constant_pad_nd``,
``as_strided``, ``bmm``, ``add_`` on strided views), so a new device with those primitives gets
convolution and its backward for free, and double backward works.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._library import Library
from ..dtypes import SCALAR_TYPE_NAMES, TYPEMETA_NAMES
from ..ops import aten as A
from ..shapes import dim_list_to_bitset, wrap_dim
from ..tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS", "OUTS", "SCHEMAS", "adaptive_pool_check", "addmm_check",
           "avg_pool_check", "col2im_check", "conv_check", "im2col_check", "max_pool_check", "pool_output_size",
           "register", "register_autograd", "upsample_check"]

_POOL_TAIL_MAX = ("int[N] kernel_size, int[N] stride=[], int[N] padding=0, int[N] dilation=1, bool ceil_mode=False")
_POOL_TAIL_AVG = ("int[N] kernel_size, int[N] stride=[], int[N] padding=0, bool ceil_mode=False, "
                  "bool count_include_pad=True, int? divisor_override=None")
_MAXB = ("Tensor grad_output, Tensor self, int[N] kernel_size, int[N] stride, int[N] padding, int[N] dilation, "
         "bool ceil_mode, Tensor indices")
_AVGB = ("Tensor grad_output, Tensor self, int[N] kernel_size, int[N] stride, int[N] padding, bool ceil_mode, "
         "bool count_include_pad, int? divisor_override")
_CONV_ARGS = ("Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
              "bool transposed, SymInt[] output_padding, SymInt groups")
_SLOW2D = "Tensor self, Tensor weight, SymInt[2] kernel_size"
_GRID = "SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride"


def _conv_entry(n: int) -> tuple[str, ...]:
    ones, zeros = ", ".join(["1"] * n), ", ".join(["0"] * n)
    head = f"conv{n}d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=[{ones}], "
    tail = f"SymInt[{n}] dilation=[{ones}], SymInt groups=1) -> Tensor"
    transpose = (f"conv_transpose{n}d{'.input' if n > 1 else ''}(Tensor input, Tensor weight, Tensor? bias=None, "
                 f"SymInt[{n}] stride=[{ones}], SymInt[{n}] padding=[{zeros}], SymInt[{n}] output_padding=[{zeros}], "
                 f"SymInt groups=1, SymInt[{n}] dilation=[{ones}]) -> Tensor")
    return (head + f"SymInt[{n}] padding=[{zeros}], " + tail,
            head.replace(f"conv{n}d(", f"conv{n}d.padding(") + 'str padding="valid", ' + tail, transpose)


def _pool_schemas(n: int) -> tuple[str, ...]:
    N = f"[{n}]"
    mx, av = _POOL_TAIL_MAX.replace("[N]", N), _POOL_TAIL_AVG.replace("[N]", N)
    maxb, avgb = _MAXB.replace("[N]", N), _AVGB.replace("[N]", N)
    return (
        f"max_pool{n}d_with_indices(Tensor self, {mx}) -> (Tensor, Tensor)",
        f"max_pool{n}d_with_indices.out(Tensor self, {mx}, *, Tensor(a!) out, Tensor(b!) indices) "
        "-> (Tensor(a!), Tensor(b!))",
        f"max_pool{n}d_with_indices_backward({maxb}) -> Tensor",
        f"max_pool{n}d_with_indices_backward.grad_input({maxb}, *, Tensor(a!) grad_input) -> Tensor(a!)",
        f"max_pool{n}d(Tensor self, {mx}) -> Tensor",
        f"avg_pool{n}d(Tensor self, {av}) -> Tensor",
        f"avg_pool{n}d.out(Tensor self, {av}, *, Tensor(a!) out) -> Tensor(a!)",
        f"avg_pool{n}d_backward({avgb}) -> Tensor",
        f"avg_pool{n}d_backward.grad_input({avgb}, *, Tensor(a!) grad_input) -> Tensor(a!)",
        f"_adaptive_avg_pool{n}d(Tensor self, SymInt[{n}] output_size) -> Tensor",
        f"_adaptive_avg_pool{n}d_backward(Tensor grad_output, Tensor self) -> Tensor",
        f"adaptive_avg_pool{n}d(Tensor self, SymInt[{n}] output_size) -> Tensor",
    )


SCHEMAS: tuple[str, ...] = (
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
    *(schema for name in ("baddbmm", "addbmm") for schema in (
        f"{name}(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        f"{name}.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) "
        "-> Tensor(a!)",
        f"{name}_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)")),
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor",
    "_trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3, int[] sumdim, "
    "int unroll_dim=1) -> Tensor",
    "_trilinear.out(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3, int[] sumdim, "
    "int unroll_dim=1, *, Tensor(a!) out) -> Tensor(a!)",
    f"convolution({_CONV_ARGS}) -> Tensor",
    f"_convolution({_CONV_ARGS}, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor",
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, "
    "bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "_convolution_double_backward(Tensor? ggI, Tensor? ggW, Tensor? ggb, Tensor gO, Tensor weight, Tensor self, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, "
    "bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    *_conv_entry(1), *_conv_entry(2), *_conv_entry(3),
    f"thnn_conv2d({_SLOW2D}, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0) -> Tensor",
    f"_slow_conv2d_forward({_SLOW2D}, Tensor? bias, SymInt[2] stride, SymInt[2] padding) -> Tensor",
    f"_slow_conv2d_forward.output({_SLOW2D}, Tensor? bias, SymInt[2] stride, SymInt[2] padding, *, "
    "Tensor(a!) output) -> Tensor(a!)",
    "_slow_conv2d_backward.output_mask(Tensor grad_output, Tensor self, Tensor weight, SymInt[2] kernel_size, "
    "SymInt[2] stride, SymInt[2] padding, bool[3] output_mask) -> (Tensor grad_input, Tensor grad_weight, "
    "Tensor grad_bias)",
    *_pool_schemas(2), *_pool_schemas(3),
    "avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, "
    "bool count_include_pad=True) -> Tensor",
    "adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
    "upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor",
    "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
    "upsample_nearest2d.out(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None, *, "
    "Tensor(a!) out) -> Tensor(a!)",
    "upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
    "float? scales_h=None, float? scales_w=None) -> Tensor",
    "upsample_nearest2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
    "float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)",
    "upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, "
    "float? scales_w=None) -> Tensor",
    "upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) "
    "-> Tensor",
    "upsample_bilinear2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, "
    "float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)",
    "upsample_bilinear2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
    "bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor",
    "upsample_bilinear2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
    "bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)",
    f"col2im(Tensor self, {_GRID}) -> Tensor",
    f"col2im.out(Tensor self, {_GRID}, *, Tensor(a!) out) -> Tensor(a!)",
    "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
    "im2col.out(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride, *, "
    "Tensor(a!) out) -> Tensor(a!)",
)

# The out= overloads with a CPU and a Meta kernel, each built from its functional kernel: the out
# tensors must have the functional result's dtype ("Expected out tensor to have dtype ...").
OUTS: dict[str, str] = {
    "addmm.out": "addmm",
    "max_pool2d_with_indices.out": "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward.grad_input": "max_pool2d_with_indices_backward",
    "max_pool3d_with_indices.out": "max_pool3d_with_indices",
    "max_pool3d_with_indices_backward.grad_input": "max_pool3d_with_indices_backward",
    "avg_pool2d.out": "avg_pool2d",
    "avg_pool2d_backward.grad_input": "avg_pool2d_backward",
    "avg_pool3d.out": "avg_pool3d",
    "avg_pool3d_backward.grad_input": "avg_pool3d_backward",
    "upsample_nearest2d.out": "upsample_nearest2d",
    "upsample_nearest2d_backward.grad_input": "upsample_nearest2d_backward",
    "upsample_bilinear2d.out": "upsample_bilinear2d",
    "upsample_bilinear2d_backward.grad_input": "upsample_bilinear2d_backward",
    "col2im.out": "col2im",
    "im2col.out": "im2col",
}

_NUMBER_WORDS = {2: "two", 3: "three"}


# --- rules the backends share: output sizes and torch's checks -------------------------------------------
def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _dims_arg(value: Any, n: int, name: str, op: str, *, omit: bool = False, verb: str = "must either be") -> tuple:
    """An ``int[n]`` pooling argument as n ints; torch's error when it has another length."""
    values = [value] if isinstance(value, int) else list(value)
    if omit and not values:
        return ()
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        what = "omitted, a single int" if omit else "a single int"
        raise RuntimeError(f"{op}: {name} {verb} {what}, or a tuple of {_NUMBER_WORDS[n]} ints")
    return tuple(int(v) for v in values)


def pool_output_size(size: int, kernel: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """``pooling_output_shape``: windows that start inside the (left-padded) input.

    Example:
        >>> pool_output_size(5, 2, 0, 2, 1, False), pool_output_size(5, 2, 0, 2, 1, True)
        (2, 3)
    """
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((kernel - 1) * dilation + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad}, "
                           f"kernel_size={kernel} and dilation={dilation}")
    out = (size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:  # the last window must start inside the input
        out -= 1
    return out


def _pool_shape_check(shape: tuple[int, ...], kernel: tuple, stride: tuple, dilation: tuple,
                      out: tuple, name: str, *, check_input_size: bool = False) -> None:
    """``pool2d_shape_check`` / ``pool3d_shape_check`` (``Pool.h``)."""
    n = len(kernel)
    letters = "HW" if n == 2 else "THW"
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got " + " ".join(
            f"k{c}: {k}" for c, k in zip(letters, kernel)))
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got " + " ".join(
            f"d{c}: {s}" for c, s in zip(letters, stride)))
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got " + " ".join(
            f"dilation{c}: {d}" for c, d in zip(letters, dilation)))
    ndim = len(shape)
    if n == 2:
        ok = shape[-3] != 0 and shape[-2] != 0 and shape[-1] != 0 and (ndim == 4 or shape[0] != 0)
        if not ok:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                               f"but got:{_shape_text(shape)}")
    else:
        for i, s in enumerate(shape):
            if not (ndim == 5 and i == 0) and s <= 0:
                raise RuntimeError(f"{name}: Expected input's non-batch dimensions to have positive length, but "
                                   f"input has a shape of {_shape_text(shape)} and non-batch dimension {s} has "
                                   "length zero!")
        if check_input_size and any(s < k for s, k in zip(shape[-3:], kernel)):
            t, h, w = shape[-3:]
            raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kernel[0]} "
                               f"kH: {kernel[1]} kW: {kernel[2]})")
    if any(o < 1 for o in out):
        planes = shape[-n - 1]
        inputs = "x".join(str(s) for s in (planes, *shape[-n:]))
        outputs = "x".join(str(s) for s in (planes, *out))
        raise RuntimeError(f"Given input size: ({inputs}). Calculated output size: ({outputs}). "
                           "Output size is too small")


def max_pool_check(shape: tuple[int, ...], n: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                   ceil_mode: bool) -> tuple[tuple[int, ...], tuple, tuple, tuple, tuple]:
    """``max_pool{n}d_with_indices``'s checks: (output shape, kernel, stride, padding, dilation).

    Example:
        >>> max_pool_check((1, 3, 5, 5), 2, [2], [], [0], [1], False)[0]
        (1, 3, 2, 2)
    """
    op = f"max_pool{n}d"
    kernel = _dims_arg(kernel_size, n, "kernel_size", op)
    strides = _dims_arg(stride, n, "stride", op, omit=True) or kernel
    pads = _dims_arg(padding, n, "padding", op)
    dils = _dims_arg(dilation, n, "dilation", op, verb="must be either")
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input")
    out = tuple(pool_output_size(shape[-n + i], kernel[i], pads[i], strides[i], dils[i], ceil_mode)
                for i in range(n))
    name = "max_pool3d_with_indices_out_cpu_template()"
    _pool_shape_check(shape, kernel, strides, dils, out, name)
    return (*shape[:-n], *out), kernel, strides, pads, dils


def avg_pool_check(shape: tuple[int, ...], n: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                   divisor_override: Any) -> tuple[tuple[int, ...], tuple, tuple, tuple]:
    """``avg_pool{n}d``'s checks: (output shape, kernel, stride, padding).

    Example:
        >>> avg_pool_check((3, 4, 4), 2, [3], [1], [1], False, None)[0]
        (3, 4, 4)
    """
    op = f"avg_pool{n}d"
    kernel = _dims_arg(kernel_size, n, "kernel_size", op, verb="must either be" if n == 2 else "must be")
    strides = _dims_arg(stride, n, "stride", op, omit=True, verb="must either be" if n == 2 else "must be") or kernel
    pads = _dims_arg(padding, n, "padding", op, verb="must either be" if n == 2 else "must be")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if n == 3 and len(shape) not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if len(shape) < n + 1:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], "
                         f"but got {-n - 1})")
    out = tuple(pool_output_size(shape[-n + i], kernel[i], pads[i], strides[i], 1, ceil_mode) for i in range(n))
    _pool_shape_check(shape, kernel, strides, (1,) * n, out, "avg_pool3d()", check_input_size=True)
    return (*shape[:-n], *out), kernel, strides, pads


def adaptive_pool_check(shape: tuple[int, ...], n: int, output_size: Any) -> tuple[int, ...]:
    """``_adaptive_avg_pool{n}d``'s checks; the output shape."""
    sizes = tuple(int(s) for s in output_size)
    if len(sizes) != n:
        raise RuntimeError(f"adaptive_avg_pool{n}d: output_size must be {n}")
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"adaptive_avg_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{_shape_text(shape)}")
    # 2d checks its two spatial dims (an empty channel dim passes), 3d every dim after the first
    for i in range(len(shape) - 2 if n == 2 else 1, len(shape)):
        if shape[i] == 0:
            raise RuntimeError(f"adaptive_avg_pool{n}d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_shape_text(shape)} with dimension {i} being empty")
    if any(s < 0 for s in sizes):
        raise RuntimeError("numel: integer multiplication overflow")
    return (*shape[:-n], *sizes)


def upsample_check(shape: tuple[int, ...], output_size: Any) -> tuple[int, ...]:
    """``upsample_2d_common_check``: the output shape of a 2d upsampling."""
    out = [int(s) for s in output_size]
    if len(out) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(out)}")
    if len(shape) != 4:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size {len(shape)}")
    h, w = shape[2:]
    if not (h > 0 and w > 0 and out[0] > 0 and out[1] > 0):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (H: {h}, W: {w}) "
                           f"output (H: {out[0]}, W: {out[1]})")
    return (shape[0], shape[1], out[0], out[1])


def upsample_backward_check(grad_shape: tuple[int, ...], output_size: Any, input_size: Any) -> tuple[int, ...]:
    """The checks of ``upsample_*2d_backward``: ``grad_output`` has the forward output's shape."""
    input_size = [int(s) for s in input_size]
    if len(input_size) != 4:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size {len(input_size)}")
    full = upsample_check(tuple(input_size), output_size)
    if len(grad_shape) != 4:
        raise RuntimeError(f"Expected grad_output to be a tensor of dimension 4 but got: dimension {len(grad_shape)}")
    for i in range(4):
        if grad_shape[i] != full[i]:
            raise RuntimeError(f"Expected grad_output to have the same shape as output; output.size({i}) = {full[i]} "
                               f"is not equal to grad_output.size({i}) = {grad_shape[i]}")
    return tuple(input_size)


def _two(name: str, value: Any) -> tuple[int, int]:
    """An ``int[2]`` argument as a pair: one int is the schema's broadcast; another length is torch's error."""
    if isinstance(value, int):
        return int(value), int(value)
    pair = tuple(int(v) for v in value)
    if len(pair) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(pair)}")
    return pair  # type: ignore[return-value]


def _grid(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple[tuple, ...]:
    k, d, p, s = (_two(name, a) for name, a in (("kernel_size", kernel_size), ("dilation", dilation),
                                                 ("padding", padding), ("stride", stride)))
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
                           f"kernel_width: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} "
                           f"dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    return k, d, p, s


def _blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def im2col_check(shape: tuple[int, ...], kernel_size: Any, dilation: Any, padding: Any,
                 stride: Any) -> tuple[int, ...]:
    """``im2col_shape_check``; the output shape ``(N, C*kh*kw, L)`` (no batch dim for a 3-d input)."""
    k, d, p, s = _grid(kernel_size, dilation, padding, stride)
    if len(shape) < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], "
                         "but got 2)")
    if len(shape) not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError("Expected non-empty 3D or 4D input tensor, but got input of size "
                           f"{_shape_text(shape)}")
    h, w = shape[-2:]
    oh, ow = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array "
                           f"of sliding blocks as ({oh}, {ow}), but its components must be at least one.")
    return (*shape[:-3], shape[-3] * k[0] * k[1], oh * ow)


def col2im_check(shape: tuple[int, ...], output_size: Any, kernel_size: Any, dilation: Any, padding: Any,
                 stride: Any) -> tuple[int, ...]:
    """``col2im_shape_check``; the output shape ``(N, C, H, W)`` (no batch dim for a 2-d input)."""
    out = _two("output_size", output_size)
    k, d, p, s = _grid(kernel_size, dilation, padding, stride)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape_text(shape)}")
    ck = k[0] * k[1]
    if shape[-2] % ck != 0:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[-2]} and kernel_size=({k[0]}, {k[1]}).")
    bh, bw = _blocks(out[0], k[0], d[0], p[0], s[0]), _blocks(out[1], k[1], d[1], p[1], s[1])
    if shape[-1] != bh * bw:
        raise RuntimeError(f"Given output_size=({out[0]}, {out[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
                           f"expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {bh} * {bw} = {bh * bw}, but got input.size(2)={shape[-1]}.")
    if bh < 1 or bw < 1:
        raise RuntimeError(f"Given output_size=({out[0]}, {out[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
                           f"calculated shape of the array of sliding blocks as ({bh}, {bw}), but its "
                           "components must be at least one.")
    return (*shape[:-2], shape[-2] // ck, out[0], out[1])


def addmm_check(self_shape: tuple[int, ...], mat1: Any, mat2: Any, self_dtype: Any) -> tuple[int, int]:
    """``addmm``'s checks (``LinearAlgebra.cpp``); the result shape, to which ``self`` must broadcast."""
    if mat1.dim() != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.dim()}-D tensor")
    if mat2.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    (n, k), (k2, m) = mat1.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {SCALAR_TYPE_NAMES[mat1.dtype.name]} "
                           f"and {SCALAR_TYPE_NAMES[mat2.dtype.name]}")
    if self_dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {SCALAR_TYPE_NAMES[self_dtype.name]} "
                           f"and {SCALAR_TYPE_NAMES[mat2.dtype.name]}")
    lead = len((n, m)) - len(self_shape)
    ok = lead >= 0 and all(s in (1, t) for s, t in zip(self_shape, (n, m)[lead:]))
    if not ok:
        target = (n, m)
        for i in range(len(self_shape) - 1, -1, -1):
            j = i + lead
            if j < 0 or self_shape[i] not in (1, target[j]):
                raise RuntimeError(
                    f"The expanded size of the tensor ({target[j] if j >= 0 else -1}) must match the existing size "
                    f"({self_shape[i]}) at non-singleton dimension {j}.  Target sizes: {_shape_text(target)}.  "
                    f"Tensor sizes: {_shape_text(self_shape)}")
    return (n, m)


def dim_size(t: Any, dim: int) -> int:
    """``t.size(dim)``, with torch's IndexErrors."""
    if t.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return int(t.shape[wrap_dim(dim, t.dim())])


def expand_size_check(self: Any, target: tuple[int, ...]) -> None:
    """``expand_size(self, target)``'s refusals, in ``at::expand``'s words (the last dim checked first)."""
    shape = tuple(self.shape)
    if len(target) < len(shape):
        device = self.device.type
        kind = (f"torch.{SCALAR_TYPE_NAMES[self.dtype.name]}Tensor" if device == "cpu"
                else f"{device.capitalize()}{SCALAR_TYPE_NAMES[self.dtype.name]}Type")
        raise RuntimeError(f"expand({kind}{{{list(shape)}}}, size={list(target)}): the number of sizes provided "
                           f"({len(target)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(shape)})")
    lead = len(target) - len(shape)
    for i in range(len(target) - 1, lead - 1, -1):
        size = shape[i - lead]
        if size != 1 and size != target[i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[i]}) must match the existing size ({size}) "
                               f"at non-singleton dimension {i}.  Target sizes: {_shape_text(target)}.  Tensor "
                               f"sizes: {_shape_text(shape)}")


def baddbmm_check(self: Any, batch1: Any, batch2: Any) -> tuple[int, int, int]:
    """``baddbmm``'s structured meta checks in order (self expanded, its dtype, then ``bmm``'s); the result shape."""
    target = (dim_size(batch1, 0), dim_size(batch1, 1), dim_size(batch2, 2))
    expand_size_check(self, target)
    if self.dtype is not batch1.dtype:
        names = [TYPEMETA_NAMES[t.dtype.name] for t in (self, batch1, batch2)]
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: {names[1]}, "
                           f"batch2: {names[2]}")
    bmm_shape_check(batch1, batch2)
    return target


def bmm_shape_check(batch1: Any, batch2: Any) -> None:
    """``common_checks_baddbmm_bmm``: two 3-d batches whose first two dims of ``batch2`` fit."""
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, contraction = batch1.shape[0], batch1.shape[2]
    if batch2.shape[0] != bs or batch2.shape[1] != contraction:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {contraction}] "
                           f"but got: [{batch2.shape[0]}, {batch2.shape[1]}].")


def addbmm_check(self: Any, batch1: Any, batch2: Any) -> tuple[int, int]:
    """``addbmm_out``'s checks in order (self expanded, then ``addbmm_impl_``'s); the result shape."""
    target = (dim_size(batch1, 1), dim_size(batch2, 2))
    expand_size_check(self, target)
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    return target


def _expand_param(value: Any, n: int, name: str) -> tuple[int, ...]:
    """``expand_param_if_needed``: one value serves every spatial dim."""
    values = [int(v) for v in value]
    if len(values) == 1:
        return tuple(values * n)
    if len(values) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={_shape_text(values)}")
    return tuple(values)


def conv_params(weight_dim: int, stride: Any, padding: Any, dilation: Any,
                output_padding: Any) -> tuple[tuple[int, ...], ...]:
    """Stride, padding, dilation and output padding with one value per spatial dim."""
    n = weight_dim - 2
    return (_expand_param(stride, n, "stride"), _expand_param(padding, n, "padding"),
            _expand_param(dilation, n, "dilation"), _expand_param(output_padding, n, "output_padding"))


def conv_check(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,  # noqa: A002
               transposed: bool, output_padding: Any, groups: int) -> tuple[int, ...]:
    """``_convolution``'s checks (``check_shape_forward`` and friends); the output shape.

    ``input``/``weight``/``bias`` need only ``shape``, ``dim()`` and ``dtype``.
    """
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    s, p, d, op = conv_params(weight.dim(), stride, padding, dilation, output_padding)
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    if any(v < 0 for v in op):
        raise RuntimeError("negative output_padding is not supported")
    if any(v <= 0 for v in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {_shape_text(d)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    w, x = tuple(weight.shape), tuple(input.shape)
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
                           f"{_shape_text(w)}, but got {input.dim()}-dimensional input of size {_shape_text(x)} "
                           "instead")
    if w[0] % groups != 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_shape_text(w)}] instead")
    out_channels = w[1] * groups if transposed else w[0]
    if not transposed:
        if x[1] != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_shape_text(w)}, expected input"
                               f"{_shape_text(x)} to have {w[1] * groups} channels, but got {x[1]} channels instead")
    elif x[1] != w[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {_shape_text(w)}, expected input{_shape_text(x)} to "
                           f"have {w[0]} channels, but got {x[1]} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given {'transposed=1' if transposed else 'weight of size ' + _shape_text(w)}"
                           f"{', weight of size ' + _shape_text(w) if transposed else ''}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{_shape_text(bias.shape)} instead")
    n = weight.dim() - 2
    if transposed:
        for i in range(n):
            if op[i] >= s[i] and op[i] >= d[i]:
                letters = ("height", "width") if n == 2 else ("depth", "height", "width")[-n:]
                detail = " ".join([f"output_padding_{c}: {op[j]}" for j, c in enumerate(letters)]
                                  + [f"stride_{c}: {s[j]}" for j, c in enumerate(letters)]
                                  + [f"dilation_{c}: {d[j]}" for j, c in enumerate(letters)])
                raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {detail}")
        out = tuple((x[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (w[2 + i] - 1) + op[i] + 1 for i in range(n))
    else:
        padded = tuple(x[2 + i] + 2 * p[i] for i in range(n))
        kernel = tuple(d[i] * (w[2 + i] - 1) + 1 for i in range(n))
        if any(k > q for k, q in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
                               "input size")
        out = tuple((padded[i] - kernel[i]) // s[i] + 1 for i in range(n))
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[input.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[weight.dtype.name]}")
    return (x[0], out_channels, *out)


# --- convolution through dispatched operators (CompositeExplicitAutograd) ----------------------------------
def _pad(x: Tensor, padding: tuple[int, ...]) -> Tensor:
    if not any(padding):
        return x
    pads: list[int] = []
    for p in reversed(padding):  # constant_pad_nd lists the last dim first
        pads += [p, p]
    return A.constant_pad_nd.default(x, pads, 0)


def _columns(x: Tensor, kernel: tuple[int, ...], out: tuple[int, ...], stride: tuple[int, ...],
             padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> Tensor:
    """The sliding windows of ``x`` (im2col), one row per output position: ``[G, N*L, C/G*K]``.

    A window view (``as_strided`` over the padded input) read in row order: the one copy is the
    im2col matrix.
    """
    xp = A.contiguous.default(_pad(x, padding))
    n, c = xp.shape[0], xp.shape[1]
    st = xp.stride()
    nd = len(kernel)
    cg = c // groups
    size = [n, groups, cg, *out, *kernel]
    strides = [st[0], cg * st[1], st[1], *(st[2 + i] * stride[i] for i in range(nd)),
               *(st[2 + i] * dilation[i] for i in range(nd))]
    windows = A.as_strided.default(xp, size, strides, xp.storage_offset())
    order = [1, 0, *range(3, 3 + nd), 2, *range(3 + nd, 3 + 2 * nd)]
    rows = n * _prod(out)
    return A.reshape.default(A.permute.default(windows, order), [groups, rows, cg * _prod(kernel)])


def _prod(values: Sequence[int]) -> int:
    p = 1
    for v in values:
        p *= v
    return p


def _conv(x: Tensor, weight: Tensor, stride: tuple, padding: tuple, dilation: tuple, groups: int) -> Tensor:
    """A (non-transposed) convolution without bias: im2col, then one batched matrix product per group."""
    kernel = tuple(weight.shape[2:])
    nd = len(kernel)
    out = tuple((x.shape[2 + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                for i in range(nd))
    n, o = x.shape[0], weight.shape[0]
    og = o // groups
    cols = _columns(x, kernel, out, stride, padding, dilation, groups)          # [G, N*L, Cg*K]
    w = A.transpose.int(A.reshape.default(weight, [groups, og, cols.shape[2]]), 1, 2)  # [G, Cg*K, Og]
    y = A.view.default(A.bmm.default(cols, w), [groups, n, *out, og])
    y = A.permute.default(y, [1, 0, nd + 2, *range(2, 2 + nd)])                # [N, G, Og, *out]
    return A.reshape.default(A.contiguous.default(y), [n, o, *out])


def _conv_transpose(x: Tensor, weight: Tensor, stride: tuple, padding: tuple, dilation: tuple,
                    output_padding: tuple, groups: int) -> Tensor:
    """A transposed convolution without bias: a matrix product per group, then col2im (overlaps summed)."""
    kernel = tuple(weight.shape[2:])
    nd = len(kernel)
    n, cin = x.shape[0], x.shape[1]
    cg, og = cin // groups, weight.shape[1]
    spatial = tuple(x.shape[2:])
    full = tuple((spatial[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 + output_padding[i]
                 for i in range(nd))
    xs = A.reshape.default(x, [n, groups, cg, _prod(spatial)])
    xs = A.reshape.default(A.permute.default(xs, [1, 0, 3, 2]), [groups, n * _prod(spatial), cg])
    w = A.reshape.default(weight, [groups, cg, og * _prod(kernel)])
    cols = A.view.default(A.bmm.default(xs, w), [groups, n, *spatial, og, *kernel])
    cols = A.permute.default(cols, [1, 0, 2 + nd, *range(2, 2 + nd), *range(3 + nd, 3 + 2 * nd)])
    y = A.zeros.default([n, groups, og, *full], dtype=x.dtype, device=x.device)
    for offsets in itertools.product(*(range(k) for k in kernel)):
        target, src = y, cols
        for i, j in enumerate(offsets):
            start = j * dilation[i]
            target = A.slice.Tensor(target, 3 + i, start, start + (spatial[i] - 1) * stride[i] + 1, stride[i])
        index = src
        for j in reversed(offsets):
            index = A.select.int(index, -1, j)
        A.add_.Tensor(target, index)
    for i in range(nd):
        out = full[i] - 2 * padding[i]
        y = A.slice.Tensor(y, 3 + i, padding[i], padding[i] + out, 1)
    return A.reshape.default(A.contiguous.default(y), [n, groups * og, *y.shape[3:]])


def _weight_grad(x: Tensor, grad: Tensor, weight_shape: Sequence[int], stride: tuple, padding: tuple,
                 dilation: tuple, groups: int) -> Tensor:
    """The weight gradient of a convolution of ``x`` whose output gradient is ``grad``."""
    kernel = tuple(weight_shape[2:])
    out = tuple(grad.shape[2:])
    n, o = grad.shape[0], grad.shape[1]
    og = o // groups
    cols = _columns(x, kernel, out, stride, padding, dilation, groups)          # [G, N*L, Cg*K]
    g = A.reshape.default(grad, [n, groups, og, _prod(out)])
    g = A.reshape.default(A.permute.default(g, [1, 2, 0, 3]), [groups, og, n * _prod(out)])
    return A.reshape.default(A.bmm.default(g, cols), list(weight_shape))


# --- torch's Slow2d backend: the CPU kernels ``_slow_conv2d_forward`` / ``_slow_conv2d_backward`` ------------
def _slow2d(input: Tensor, weight: Tensor, transposed: bool, dilation: tuple) -> bool:  # noqa: A002
    """Whether ``_select_conv_backend`` picks ``ConvBackend::Slow2d`` (the CPU build without mkldnn).

    A CPU, non-transposed, non-dilated convolution of a non-empty 1-d (viewed as 2-d, height 1) or
    2-d input; grouped ones run group by group (``subtensor``) and ``cat`` the results. Every
    other convolution, and every other device (CUDA included), keeps the composite of dispatched
    operators above.
    """
    return (not transposed and input.dim() in (3, 4) and input.device.type == "cpu" and input.numel() > 0
            and weight.numel() > 0 and all(d == 1 for d in dilation))


def _as_2d(input: Tensor, stride: tuple, padding: tuple) -> tuple[bool, tuple, tuple]:  # noqa: A002
    """``view1d_as_2d``'s parameters: a 1-d convolution is a 2-d one over height 1."""
    if input.dim() == 3:
        return True, (1, *stride), (0, *padding)
    return False, stride, padding


def _subtensor(t: Tensor | None, dim: int, groups: int, g: int) -> Tensor | None:
    """``subtensor``: group ``g`` of ``t`` along ``dim``, contiguous."""
    if t is None:
        return None
    size = t.shape[dim] // groups
    return A.contiguous.default(A.narrow.default(t, dim, g * size, size))


def _slow_conv2d(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple, padding: tuple,  # noqa: A002
                 groups: int) -> Tensor:
    """``_convolution``'s Slow2d branch: ``thnn_conv2d`` per group, the bias added by the kernel."""
    one_d, s, p = _as_2d(input, stride, padding)
    if one_d:
        input, weight = A.unsqueeze.default(input, 2), A.unsqueeze.default(weight, 2)
    args = (list(weight.shape[2:]),)
    if groups == 1:
        y = A.thnn_conv2d.default(input, weight, *args, bias, list(s), list(p))
    else:
        y = A.cat.default([A.thnn_conv2d.default(_subtensor(input, 1, groups, g), _subtensor(weight, 0, groups, g),
                                                 *args, _subtensor(bias, 0, groups, g), list(s), list(p))
                           for g in range(groups)], 1)
    return A.squeeze.dim(y, 2) if one_d else y


def _slow_conv2d_backward(grad_output: Tensor, input: Tensor, weight: Tensor, stride: tuple,  # noqa: A002
                          padding: tuple, groups: int, output_mask: Any) -> tuple[Any, Any, Any]:
    """``convolution_backward``'s Slow2d branch: ``_slow_conv2d_backward`` per group, then ``cat``."""
    one_d, s, p = _as_2d(input, stride, padding)
    if one_d:
        grad_output, input, weight = (A.unsqueeze.default(t, 2) for t in (grad_output, input, weight))
    args = (list(weight.shape[2:]), list(s), list(p), [bool(m) for m in output_mask])
    backward = A._slow_conv2d_backward.output_mask
    if groups == 1:
        grads = list(backward(grad_output, input, weight, *args))
    else:
        parts = [backward(_subtensor(grad_output, 1, groups, g), _subtensor(input, 1, groups, g),
                          _subtensor(weight, 0, groups, g), *args) for g in range(groups)]
        grads = [A.cat.default([part[i] for part in parts], 1 if i == 0 else 0) if output_mask[i] else None
                 for i in range(3)]
    if one_d:
        grads[:2] = [None if t is None else A.squeeze.dim(t, 2) for t in grads[:2]]
    return grads[0], grads[1], grads[2]


def thnn_conv2d(self: Tensor, weight: Tensor, kernel_size: Any, bias: Tensor | None = None, stride: Any = (1, 1),
                padding: Any = (0, 0)) -> Tensor:
    """``thnn_conv2d`` (CompositeImplicitAutograd): ``_slow_conv2d_forward``.

    Example:
        >>> import dispatchcore as dc
        >>> dc.ops.aten.thnn_conv2d.default(dc.ones(1, 1, 3, 3), dc.ones(1, 1, 2, 2), [2, 2]).shape
        dispatchcore.Size([1, 1, 2, 2])
    """
    return A._slow_conv2d_forward.default(self, weight, _ints(kernel_size, 2), bias, _ints(stride, 2),
                                          _ints(padding, 2))


def _bias_view(bias: Tensor, nd: int) -> Tensor:
    return A.view.default(bias, [1, bias.shape[0], *([1] * nd)])


def _convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                 dilation: Any, transposed: bool, output_padding: Any, groups: int, benchmark: bool = False,
                 deterministic: bool = False, cudnn_enabled: bool = True, allow_tf32: bool = True) -> Tensor:
    conv_check(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    s, p, d, op = conv_params(weight.dim(), stride, padding, dilation, output_padding)
    if _slow2d(input, weight, transposed, d):
        return _slow_conv2d(input, weight, bias, s, p, groups)
    if transposed:
        y = _conv_transpose(input, weight, s, p, d, op, groups)
    else:
        y = _conv(input, weight, s, p, d, groups)
    if bias is not None:
        y = A.add.Tensor(y, _bias_view(bias, weight.dim() - 2))
    return y


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    return A._convolution.default(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                                  groups, False, False, True, True)


def convolution_backward(grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes: Any,  # noqa: A002
                         stride: Any, padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                         groups: int, output_mask: Any) -> tuple[Any, Any, Any]:
    """Input, weight and bias gradients of ``convolution`` (None where ``output_mask`` says so)."""
    s, p, d, op = conv_params(weight.dim(), stride, padding, dilation, output_padding)
    if _slow2d(input, weight, transposed, d):
        return _slow_conv2d_backward(grad_output, input, weight, s, p, groups, output_mask)
    nd = weight.dim() - 2
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if transposed:
            grad_input = _conv(grad_output, weight, s, p, d, groups)
        else:  # the transposed convolution, padded on the right to the input's size
            extra = tuple(input.shape[2 + i] - ((grad_output.shape[2 + i] - 1) * s[i] - 2 * p[i]
                                                 + d[i] * (weight.shape[2 + i] - 1) + 1) for i in range(nd))
            grad_input = _conv_transpose(grad_output, weight, s, p, d, extra, groups)
    if output_mask[1]:
        if transposed:  # the transposed convolution's weight is the convolution's from output to input
            grad_weight = _weight_grad(grad_output, input, weight.shape, s, p, d, groups)
        else:
            grad_weight = _weight_grad(input, grad_output, weight.shape, s, p, d, groups)
    if output_mask[2]:
        grad_bias = A.sum.dim_IntList(grad_output, [0, *range(2, 2 + nd)], False)
    return grad_input, grad_weight, grad_bias


def _convolution_double_backward(ggI: Any, ggW: Any, ggb: Any, gO: Tensor, weight: Tensor, self: Tensor,
                                 stride: Any, padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                                 groups: int, output_mask: Any) -> tuple[Any, Any, Any]:
    """The gradients of ``convolution_backward``'s inputs (grad_output, input, weight).

    ``convolution_backward`` is linear in ``grad_output`` and in each of input and weight, so each
    gradient is a convolution or a convolution backward again (and differentiable again).
    """
    args = (stride, padding, dilation, transposed, output_padding, groups)
    ggO = gI = gW = None
    if output_mask[0]:
        parts = []
        if ggI is not None:
            parts.append(A.convolution.default(ggI, weight, None, *args))
        if ggW is not None:
            parts.append(A.convolution.default(self, ggW, None, *args))
        if ggb is not None:
            parts.append(A.expand.default(_bias_view(ggb, weight.dim() - 2), list(gO.shape)))
        for part in parts:
            ggO = part if ggO is None else A.add.Tensor(ggO, part)
    if output_mask[1] and ggW is not None:
        gI = _conv_backward_call(gO, self, ggW, None, args, (True, False, False))[0]
    if output_mask[2] and ggI is not None:
        gW = _conv_backward_call(gO, ggI, weight, None, args, (False, True, False))[1]
    return ggO, gI, gW


# --- the CompositeImplicitAutograd entry points ----------------------------------------------------------
def _conv_n(n: int) -> Callable[..., Tensor]:
    def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = (1,) * n,  # noqa: A002
             padding: Any = (0,) * n, dilation: Any = (1,) * n, groups: int = 1) -> Tensor:
        batched, x = _batchify(input, n, f"conv{n}d")
        y = A.convolution.default(x, weight, bias, stride, padding, dilation, False, [0] * n, groups)
        return y if batched else A.squeeze.dim(y, 0)

    conv.__name__ = conv.__qualname__ = f"conv{n}d"
    return conv


def _batchify(input: Tensor, n: int, name: str) -> tuple[bool, Tensor]:  # noqa: A002
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of "
                           f"size: {_shape_text(input.shape)}")
    batched = input.dim() == n + 2
    return batched, input if batched else A.unsqueeze.default(input, 0)


def _conv_padding_n(n: int) -> Callable[..., Tensor]:
    def conv_padding(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = (1,) * n,  # noqa: A002
                     padding: str = "valid", dilation: Any = (1,) * n, groups: int = 1) -> Tensor:
        batched, x = _batchify(input, n, f"conv{n}d")
        y = _convolution_mode(x, weight, bias, stride, padding, dilation, groups)
        return y if batched else A.squeeze.dim(y, 0)

    conv_padding.__name__ = conv_padding.__qualname__ = f"conv{n}d_padding"
    return conv_padding


_WARNED_ONCE: list[str] = []


def _convolution_mode(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: str, dilation: Any,
                      groups: int) -> Tensor:
    """``_convolution_mode``: ``"valid"`` is no padding; ``"same"`` pads so the output keeps the input's size."""
    n = weight.dim() - 2
    if padding == "valid":
        return A.convolution.default(x, weight, bias, stride, [0] * n, dilation, False, [0] * n, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    s = _expand_param(stride, n, "stride") if weight.dim() >= 3 else ()
    if any(v != 1 for v in s):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    d = _expand_param(dilation, n, "dilation")
    total = [d[i] * (weight.shape[2 + i] - 1) for i in range(n)]
    symmetric = [t // 2 for t in total]
    if any(t % 2 for t in total):
        if not _WARNED_ONCE:  # TORCH_WARN_ONCE: once per process
            _WARNED_ONCE.append("same")
            warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                          "copy of the input be created", UserWarning, stacklevel=3)
        pads: list[int] = []
        for i in reversed(range(n)):
            pads += [0, total[i] - 2 * symmetric[i]]
        x = A.constant_pad_nd.default(x, pads, 0)
    return A.convolution.default(x, weight, bias, stride, symmetric, dilation, False, [0] * n, groups)


def _conv_transpose_n(n: int) -> Callable[..., Tensor]:
    def conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                       stride: Any = (1,) * n, padding: Any = (0,) * n, output_padding: Any = (0,) * n,
                       groups: int = 1, dilation: Any = (1,) * n) -> Tensor:
        batched, x = _batchify(input, n, f"conv_transpose{n}d")
        y = A.convolution.default(x, weight, bias, stride, padding, dilation, True, output_padding, groups)
        return y if batched else A.squeeze.dim(y, 0)

    conv_transpose.__name__ = conv_transpose.__qualname__ = f"conv_transpose{n}d"
    return conv_transpose


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``at::linear``: ``addmm`` for a matrix (or a flattened contiguous input) with a bias, else ``matmul``."""
    if input.dim() == 2 and bias is not None:
        return A.addmm.default(bias, input, A.t.default(weight))
    if bias is not None and input.is_contiguous() and (input.dim() == 3 or bias.dim() == 1):
        sizes = list(input.shape)
        flat = A.reshape.default(input, [_prod(sizes[:-1]), sizes[-1]])
        result = A.addmm.default(bias, flat, A.t.default(weight))
        return A.view.default(result, [*sizes[:-1], result.shape[1]])
    output = A.matmul.default(input, A.t.default(weight))
    return output if bias is None else A.add.Tensor(output, bias)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: Sequence[int]) -> Tensor:
    """``(left * right).sum(sum_dims, keepdim=True)`` as one ``bmm`` (Linear.cpp's ``sumproduct_pair``).

    The operands have the same number of dims (size 1 where one of them is broadcast). Dims are
    sorted into those of both operands and the output (``lro``), of one operand and the output
    (``lo``, ``ro``) and the summed ones, each operand is permuted and flattened to a 3-d batch,
    and the product's view is permuted back, a size-1 dim standing where each sum was.
    """
    if not sum_dims:
        return A.mul.Tensor(left, right)
    ndim = left.dim()
    summed = dim_list_to_bitset(sum_dims, ndim)
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if summed[i]:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:  # in one operand only: summed at once
                left = A.sum.dim_IntList(left, [i], True)
            elif sr:
                right = A.sum.dim_IntList(right, [i], True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    sums = list(sum_dims)
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sums) + \
        [right.shape[d] for d in ro]
    order = lro + lo + sums + ro
    back = [order.index(d) for d in range(len(order))]
    lhs = A.reshape.default(A.permute.default(left, lro + lo + sums + ro), [lro_size, lo_size, sum_size])
    rhs = A.reshape.default(A.permute.default(right, lro + sums + ro + lo), [lro_size, sum_size, ro_size])
    return A.permute.default(A.view.default(A.bmm.default(lhs, rhs), out_size), back)


def _trilinear(i1: Tensor, i2: Tensor, i3: Tensor, expand1: Sequence[int], expand2: Sequence[int],
               expand3: Sequence[int], sumdim: Sequence[int], unroll_dim: int = 1) -> Tensor:
    """``(i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim)`` (``at::_trilinear``).

    torch's algorithm: the product is computed one slice of ``unroll_dim`` at a time, each as two
    ``sumproduct_pair`` contractions, and added into a zero output; the summed dims are squeezed
    at the end. ``bilinear`` and its backward are both this one operator.
    """
    total_dim = i1.dim() + len(expand1)
    if not 0 <= unroll_dim < total_dim:
        raise RuntimeError(f"unroll_dim must be in [0,{total_dim - 1}]")
    e1, e2, e3 = (dim_list_to_bitset(e, total_dim) for e in (expand1, expand2, expand3))
    summed = dim_list_to_bitset(sumdim, total_dim)
    output_size: list[int] = []
    sum_dims_12: list[int] = []
    sum_dims_23: list[int] = []
    unroll_size = -1
    for i in range(total_dim):
        s = 0
        if e1[i]:
            i1 = A.unsqueeze.default(i1, i)
        else:
            s = i1.shape[i]
        if e2[i]:
            i2 = A.unsqueeze.default(i2, i)
        else:
            s = i2.shape[i]
        if e3[i]:
            i3 = A.unsqueeze.default(i3, i)
            if summed[i] and i != unroll_dim:
                sum_dims_12.append(i)
        else:
            s = i3.shape[i]
            if summed[i] and i != unroll_dim:
                sum_dims_23.append(i)
        output_size.append(1 if summed[i] else s)
        if i == unroll_dim:
            unroll_size = s
    m1, m2, m3 = (0 if e[unroll_dim] else 1 for e in (e1, e2, e3))
    output = A.zeros.default(output_size, dtype=i1.dtype, device=i1.device)
    if i1.numel() and i2.numel() and i3.numel():
        for k in range(unroll_size):
            buf = _sumproduct_pair(A.narrow.default(i1, unroll_dim, k * m1, 1),
                                   A.narrow.default(i2, unroll_dim, k * m2, 1), sum_dims_12)
            buf = _sumproduct_pair(buf, A.narrow.default(i3, unroll_dim, k * m3, 1), sum_dims_23)
            target = output if summed[unroll_dim] else A.narrow.default(output, unroll_dim, k, 1)
            A.add_.Tensor(target, buf)
    # torch squeezes the summed dims in place (squeeze_); the result must not be a view of the
    # zeros it was summed into, so its new shape comes from _unsafe_view (untracked as a view)
    return A._unsafe_view.default(output, [s for s, gone in zip(output_size, summed) if not gone])


def _trilinear_out(i1: Tensor, i2: Tensor, i3: Tensor, expand1: Sequence[int], expand2: Sequence[int],
                   expand3: Sequence[int], sumdim: Sequence[int], unroll_dim: int = 1, *, out: Tensor) -> Tensor:
    """``_trilinear.out``: torch's generated out= composite (the functional result, copied into ``out``)."""
    from .indexing import _write_out

    return _write_out(A._trilinear.default(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim), out)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``at::bilinear``: ``x1ᵀ W x2 + b`` per output feature, as one ``_trilinear`` over flattened batches."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
                           f"expected {weight.shape[0]}")
    output_size = [*input1.shape[:-1], weight.shape[0]]
    flat1 = A.reshape.default(input1, [-1, input1.shape[-1]])
    flat2 = A.reshape.default(input2, [-1, input2.shape[-1]])
    output = A.reshape.default(A._trilinear.default(flat1, weight, flat2, [1, 3], [0], [1, 2], [2, 3]), output_size)
    return output if bias is None else A.add.Tensor(output, bias)


def _trilinear_backward(grad: Tensor, i1: Any, i2: Any, i3: Any, expand1: Any, expand2: Any, expand3: Any,
                        sumdim: Any, grad_input_mask: Any) -> tuple[Any, Any, Any]:
    """``_trilinear_backward`` (FunctionsManual.cpp): each input's gradient is another ``_trilinear``.

    The summed dims and the input's expanded dims trade places: the gradient of ``i1`` contracts
    ``grad`` with ``i2`` and ``i3`` over what ``i1`` was expanded along.
    """
    g1 = A._trilinear.default(grad, i2, i3, sumdim, expand2, expand3, expand1) if grad_input_mask[0] else None
    g2 = A._trilinear.default(i1, grad, i3, expand1, sumdim, expand3, expand2) if grad_input_mask[1] else None
    g3 = A._trilinear.default(i1, i2, grad, expand1, expand2, sumdim, expand3) if grad_input_mask[2] else None
    return g1, g2, g3


def _max_pool_n(n: int) -> Callable[..., Tensor]:
    def max_pool(self: Tensor, kernel_size: Any, stride: Any = (), padding: Any = (0,) * n, dilation: Any = (1,) * n,
                 ceil_mode: bool = False) -> Tensor:
        op = getattr(A, f"max_pool{n}d_with_indices").default
        return op(self, kernel_size, stride, padding, dilation, ceil_mode)[0]

    max_pool.__name__ = max_pool.__qualname__ = f"max_pool{n}d"
    return max_pool


def _adaptive_n(n: int) -> Callable[..., Tensor]:
    def adaptive_avg_pool(self: Tensor, output_size: Any) -> Tensor:
        sizes = [int(s) for s in output_size]
        if len(sizes) != n:
            raise RuntimeError(f"adaptive_avg_pool{n}d: output_size must be {n}")
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"adaptive_avg_pool{n}d: elements of output_size must be greater than or equal to 0 "
                               f"but received {{{', '.join(map(str, sizes))}}}")
        if all(s == 1 for s in sizes):  # a mean over the spatial dims, as torch computes it
            return A.mean.dim(self, list(range(-1, -n - 1, -1)), True)
        return getattr(A, f"_adaptive_avg_pool{n}d").default(self, sizes)

    adaptive_avg_pool.__name__ = adaptive_avg_pool.__qualname__ = f"adaptive_avg_pool{n}d"
    return adaptive_avg_pool


def _check_1d_pool(op: str, self: Tensor, **lists: Any) -> None:
    """``checkDimRange`` (2 to 3 dims) and ``check1d`` (one int per list argument) of the 1d poolings."""
    if not 2 <= self.dim() < 4:
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {op})")
    for name, values in lists.items():
        if len(values) != 1:
            raise RuntimeError(f"{op}() argument '{name}' should contain one int (got {len(values)})")


def avg_pool1d(self: Tensor, kernel_size: Any, stride: Any = (), padding: Any = (0,), ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """``avg_pool1d``: ``avg_pool2d`` over a height-1 view (``unsqueeze(-2)``), then ``squeeze(-2)``."""
    kernel, strides, pads = list(kernel_size), list(stride) or list(kernel_size), list(padding)
    _check_1d_pool("avg_pool1d", self, kernel_size=kernel, stride=strides, padding=pads)
    out = A.avg_pool2d.default(A.unsqueeze.default(self, -2), [1, kernel[0]], [1, strides[0]], [0, pads[0]],
                               ceil_mode, count_include_pad)
    return A.squeeze.dim(out, -2)


def adaptive_avg_pool1d(self: Tensor, output_size: Any) -> Tensor:
    """``adaptive_avg_pool1d``: ``adaptive_avg_pool2d`` over a height-1 view, then ``squeeze(-2)``."""
    sizes = list(output_size)
    _check_1d_pool("adaptive_avg_pool1d", self, output_size=sizes)
    return A.squeeze.dim(A.adaptive_avg_pool2d.default(A.unsqueeze.default(self, -2), [1, sizes[0]]), -2)


def _output_size(input: Tensor, output_size: Any, scale_factors: Any) -> tuple[list[int], list[Any]]:  # noqa: A002
    """``compute_output_size`` of ``upsample_*.vec``: the sizes, and the scales to pass on (None each)."""
    spatial = input.dim() - 2
    if output_size is not None:
        if scale_factors is not None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        if len(output_size) != spatial:
            raise RuntimeError(_internal_assert("static_cast<int64_t>(output_size->size()) == spatial_dimensions"))
        return [int(s) for s in output_size], [None] * spatial
    if scale_factors is not None:
        if len(scale_factors) != spatial:
            raise RuntimeError(_internal_assert("static_cast<int64_t>(scale_factors->size()) == spatial_dimensions"))
        return ([int(input.shape[2 + i] * float(scale_factors[i])) for i in range(spatial)],
                [float(s) for s in scale_factors])
    raise RuntimeError("Must specify exactly one of output_size and scale_factors")


def _internal_assert(cond: str) -> str:
    return (f"Expected {cond} to be true, but got false.  (Could this error message be improved?  If so, please "
            "report an enhancement request to PyTorch.)")


def upsample_nearest2d_vec(input: Tensor, output_size: Any, scale_factors: Any) -> Tensor:  # noqa: A002
    size, scales = _output_size(input, output_size, scale_factors)
    return A.upsample_nearest2d.default(input, size, *scales)


def upsample_bilinear2d_vec(input: Tensor, output_size: Any, align_corners: bool,  # noqa: A002
                            scale_factors: Any) -> Tensor:
    size, scales = _output_size(input, output_size, scale_factors)
    return A.upsample_bilinear2d.default(input, size, align_corners, *scales)


EXPLICIT: dict[str, Callable[..., Any]] = {
    "convolution": convolution, "_convolution": _convolution, "convolution_backward": convolution_backward,
    "_trilinear.out": _trilinear_out,
}
NONFUNCTIONAL: dict[str, Callable[..., Any]] = {"_trilinear": _trilinear}
IMPLICIT: dict[str, Callable[..., Any]] = {
    "linear": linear, "bilinear": bilinear, "_convolution_double_backward": _convolution_double_backward,
    "thnn_conv2d": thnn_conv2d,
    "conv1d": _conv_n(1), "conv2d": _conv_n(2), "conv3d": _conv_n(3),
    "conv1d.padding": _conv_padding_n(1), "conv2d.padding": _conv_padding_n(2), "conv3d.padding": _conv_padding_n(3),
    "conv_transpose1d": _conv_transpose_n(1), "conv_transpose2d.input": _conv_transpose_n(2),
    "conv_transpose3d.input": _conv_transpose_n(3),
    "max_pool2d": _max_pool_n(2), "max_pool3d": _max_pool_n(3),
    "adaptive_avg_pool2d": _adaptive_n(2), "adaptive_avg_pool3d": _adaptive_n(3),
    "avg_pool1d": avg_pool1d, "adaptive_avg_pool1d": adaptive_avg_pool1d,
    "upsample_nearest2d.vec": upsample_nearest2d_vec, "upsample_bilinear2d.vec": upsample_bilinear2d_vec,
}


def register(lib: Library) -> None:
    """The composite kernels, at the keys torch registers them."""
    for name, kernel in EXPLICIT.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in NONFUNCTIONAL.items():
        lib.impl(name, kernel, "CompositeExplicitAutogradNonFunctional")
    for name, kernel in IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


# --- derivatives (derivatives.yaml) ---------------------------------------------------------------------
def _scaled(t: Tensor, factor: Any) -> Tensor:
    """``maybe_multiply``: no multiplication by one."""
    return t if factor == 1 else A.mul.Scalar(t, factor)


def _max_pool_double_backward(g: Tensor, indices: Tensor, n: int) -> Tensor:
    """``max_pool_double_backward``: each output position reads the gradient at its argmax."""
    flat_g = A.flatten.using_ints(g, -n, -1)
    flat_i = A.flatten.using_ints(indices, -n, -1)
    return A.view.default(A.gather.default(flat_g, -1, flat_i), list(indices.shape))


def _conv_backward_call(grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes: Any,  # noqa: A002
                        args: tuple, mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """``convolution_backward`` for the outputs in ``mask`` (None elsewhere).

    While grad mode records the call, every output is computed and the unwanted ones dropped
    afterwards: the autograd kernel records each output of a multi-output operator, and an
    undefined (None) one cannot be recorded yet (reported in docs/notes.md).
    """
    from ..autograd.grad_mode import is_grad_enabled

    if not is_grad_enabled():
        return A.convolution_backward.default(grad_output, input, weight, bias_sizes, *args, list(mask))
    full = A.convolution_backward.default(grad_output, input, weight, bias_sizes, *args, [True, True, True])
    return tuple(r if m else None for r, m in zip(full, mask))  # type: ignore[return-value]


def _masked_call(op: Any, args: tuple, mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """A three-output backward operator ``op(*args, mask)`` for the outputs in ``mask`` (None elsewhere).

    As in ``_conv_backward_call``: while grad mode records the call, all three are computed.
    """
    from ..autograd.grad_mode import is_grad_enabled

    if not is_grad_enabled():
        return op(*args, [bool(m) for m in mask])
    full = op(*args, [True, True, True])
    return tuple(r if m else None for r, m in zip(full, mask))  # type: ignore[return-value]


def _conv_backward(grad: Tensor, input: Tensor, weight: Tensor, stride: Any, padding: Any,  # noqa: A002
                   dilation: Any, transposed: bool, output_padding: Any, groups: int, grad_input_mask: Any) -> Any:
    """``convolution_backward`` for the inputs that need a gradient (the bias's size from the weight)."""
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    return _conv_backward_call(grad, input, weight, [out_channels],
                               (stride, padding, dilation, transposed, output_padding, groups), grad_input_mask)


def _baddbmm_formulas(summed: bool) -> tuple[Callable[..., Any], ...]:
    """derivatives.yaml's ``baddbmm`` (``summed``: ``addbmm``, whose grad is first broadcast over the batch).

    ``self``: ``grad * beta``; ``batch1``: ``grad.bmm(batch2.transpose(1, 2)) * alpha``; ``batch2``:
    ``batch1.transpose(1, 2).bmm(grad) * alpha`` (no multiplication by one; the receiver first).
    """
    def batched(g: Tensor, batch1_shape: Any, batch2_shape: Any) -> Tensor:
        if not summed:
            return g
        return A.expand.default(A.unsqueeze.default(g, 0), [batch1_shape[0], batch1_shape[1], batch2_shape[2]])

    def batch1_grad(g: Tensor, batch1_shape: Any, batch2: Tensor, alpha: Any) -> Tensor:
        grad = batched(g, batch1_shape, batch2.shape)
        return _scaled(A.bmm.default(grad, A.transpose.int(batch2, 1, 2)), alpha)

    def batch2_grad(g: Tensor, batch1: Tensor, batch2_shape: Any, alpha: Any) -> Tensor:
        transposed = A.transpose.int(batch1, 1, 2)
        return _scaled(A.bmm.default(transposed, batched(g, batch1.shape, batch2_shape)), alpha)

    return (lambda g, beta: _scaled(g, beta), batch1_grad, batch2_grad)


def register_autograd(lib: Library) -> None:
    """The derivatives, with torch's node names (``derivatives.yaml``)."""
    from ..autograd.kernels import register_derivative

    def r(name: str, node: str, inputs: tuple[str, ...], formula: Any, **kw: Any) -> None:
        register_derivative(lib, f"aten::{name}", node, inputs, formula, **kw)

    from ..autograd.derivatives import mm_mat1_backward, mm_mat2_backward

    # self's gradient is grad * beta, reduced to self's shape by the engine's validate_outputs;
    # torch's generated AddmmBackward0 computes mat1's and mat2's first
    addmm = (lambda g, beta: _scaled(g, beta),
             lambda g, mat2, mat1_shape, mat1_strides, alpha: mm_mat1_backward(g, mat2, mat1_shape, mat1_strides,
                                                                               alpha),
             lambda g, mat1, mat2_shape, mat2_strides, alpha: mm_mat2_backward(g, mat1, mat2_shape, mat2_strides,
                                                                               alpha))
    r("addmm", "AddmmBackward0", ("self", "mat1", "mat2"), addmm, order=(1, 2, 0))
    r("addmm_", "AddmmBackward0", ("self", "mat1", "mat2"), addmm, mutates="self", order=(1, 2, 0))
    for name, node, formulas in (("baddbmm", "BaddbmmBackward0", _baddbmm_formulas(False)),
                                 ("addbmm", "AddbmmBackward0", _baddbmm_formulas(True))):
        r(name, node, ("self", "batch1", "batch2"), formulas, order=(1, 2, 0))
        r(f"{name}_", node, ("self", "batch1", "batch2"), formulas, mutates="self", order=(1, 2, 0))
    r("_trilinear", "TrilinearBackward0", ("i1", "i2", "i3"), _trilinear_backward)
    r("convolution", "ConvolutionBackward0", ("input", "weight", "bias"), _conv_backward)
    r("_convolution", "ConvolutionBackward1", ("input", "weight", "bias"), _conv_backward)
    r("_slow_conv2d_forward", "SlowConv2DBackward0", ("self", "weight", "bias"),
      lambda grad, self, weight, kernel_size, stride, padding, grad_input_mask: _masked_call(
          A._slow_conv2d_backward.output_mask, (grad, self, weight, kernel_size, stride, padding), grad_input_mask))
    r("_slow_conv2d_backward.output_mask", "SlowConv2DBackwardBackward0", ("grad_output", "self", "weight"),
      lambda grads, grad_output, self, weight, stride, padding, grad_input_mask: A._convolution_double_backward.default(
          grads[0], grads[1], grads[2], grad_output, weight, self, stride, padding, [1, 1], False, [0, 0], 1,
          list(grad_input_mask)))
    r("convolution_backward", "ConvolutionBackwardBackward0", ("grad_output", "input", "weight"),
      lambda grads, grad_output, input, weight, stride, padding, dilation, transposed, output_padding,  # noqa: A006
      groups, grad_input_mask: A._convolution_double_backward.default(
          grads[0], grads[1], grads[2], grad_output, weight, input, stride, padding, dilation, transposed,
          output_padding, groups, list(grad_input_mask)))
    for n in (2, 3):
        for name, (node, inputs, formula, kw) in _pool_derivatives(n).items():
            r(name, node, inputs, formula, **kw)
    r("upsample_nearest2d", "UpsampleNearest2DBackward0", ("self",),
      lambda g, self_shape, output_size, scales_h, scales_w: A.upsample_nearest2d_backward.default(
          g, output_size, list(self_shape), scales_h, scales_w))
    r("upsample_nearest2d_backward", "UpsampleNearest2DBackwardBackward0", ("grad_output",),
      lambda g, output_size, scales_h, scales_w: A.upsample_nearest2d.default(g, output_size, scales_h, scales_w))
    r("upsample_bilinear2d", "UpsampleBilinear2DBackward0", ("self",),
      lambda g, self_shape, output_size, align_corners, scales_h, scales_w: A.upsample_bilinear2d_backward.default(
          g, output_size, list(self_shape), align_corners, scales_h, scales_w))
    r("upsample_bilinear2d_backward", "UpsampleBilinear2DBackwardBackward0", ("grad_output",),
      lambda g, output_size, align_corners, scales_h, scales_w: A.upsample_bilinear2d.default(
          g, output_size, align_corners, scales_h, scales_w))
    r("col2im", "Col2ImBackward0", ("self",),
      lambda g, kernel_size, dilation, padding, stride: A.im2col.default(g, kernel_size, dilation, padding, stride))
    r("im2col", "Im2ColBackward0", ("self",),
      lambda g, self_shape, kernel_size, dilation, padding, stride: A.col2im.default(
          g, list(self_shape[-2:]), kernel_size, dilation, padding, stride))


def _pool_derivatives(n: int) -> dict[str, tuple[str, tuple[str, ...], Any, dict[str, Any]]]:
    """The pooling derivatives of one dimensionality: ``{op: (node, inputs, formula, options)}``."""
    N = f"{n}D"
    max_backward = getattr(A, f"max_pool{n}d_with_indices_backward").default
    avg, avg_backward = getattr(A, f"avg_pool{n}d").default, getattr(A, f"avg_pool{n}d_backward").default
    adaptive = getattr(A, f"_adaptive_avg_pool{n}d").default
    adaptive_backward = getattr(A, f"_adaptive_avg_pool{n}d_backward").default

    def max_pool(g: Tensor, self: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                 ceil_mode: bool, result1: Tensor) -> Tensor:
        return max_backward(g, self, kernel_size, stride, padding, dilation, ceil_mode, result1)

    def max_pool_gg(g: Tensor, indices: Tensor) -> Tensor:
        return _max_pool_double_backward(g, indices, n)

    def avg_pool(g: Tensor, self: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                 count_include_pad: bool, divisor_override: Any) -> Tensor:
        return avg_backward(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def avg_pool_gg(g: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                    count_include_pad: bool, divisor_override: Any) -> Tensor:
        return avg(g, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def adaptive_pool(g: Tensor, self: Tensor) -> Tensor:
        return adaptive_backward(g, self)

    def adaptive_gg(g: Tensor, grad_output_shape: Any) -> Tensor:
        return adaptive(g, list(grad_output_shape[-n:]))

    def zeros(g: Tensor, self_shape: Any, self_dtype: Any, self_device: Any) -> Tensor:
        """``zeros_like(self)`` in derivatives.yaml: torch saves self's sizes and options and calls ``at::zeros``."""
        return A.zeros.default(list(self_shape), dtype=self_dtype, device=self_device)

    return {
        f"max_pool{n}d_with_indices": (f"MaxPool{N}WithIndicesBackward0", ("self",), max_pool,
                                       {"differentiable_outputs": (0,)}),
        f"max_pool{n}d_with_indices_backward": (f"MaxPool{N}WithIndicesBackwardBackward0", ("grad_output", "self"),
                                                (max_pool_gg, zeros), {}),
        f"avg_pool{n}d": (f"AvgPool{N}Backward0", ("self",), avg_pool, {}),
        f"avg_pool{n}d_backward": (f"AvgPool{N}BackwardBackward0", ("grad_output", "self"), (avg_pool_gg, zeros), {}),
        f"_adaptive_avg_pool{n}d": (f"AdaptiveAvgPool{N}Backward0", ("self",), adaptive_pool, {}),
        f"_adaptive_avg_pool{n}d_backward": (f"AdaptiveAvgPool{N}BackwardBackward0", ("grad_output", "self"),
                                             (adaptive_gg, zeros), {}),
    }


# --- torch.* functions and Tensor methods ----------------------------------------------------------------
def _ints(value: Any, n: int) -> list[int]:
    return [int(value)] * n if isinstance(value, int) else [int(v) for v in value]


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1,  # noqa: A002
          out: Tensor | None = None) -> Tensor:
    """``torch.addmm``: ``beta * input + alpha * (mat1 @ mat2)``."""
    if out is not None:
        return A.addmm.out(input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    return A.addmm.default(input, mat1, mat2, beta=beta, alpha=alpha)


def _addmm_method(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return A.addmm.default(self, mat1, mat2, beta=beta, alpha=alpha)


def _addmm__method(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return A.addmm_.default(self, mat1, mat2, beta=beta, alpha=alpha)


def _batched_add(name: str) -> tuple[Callable[..., Tensor], Callable[..., Tensor], Callable[..., Tensor]]:
    """``torch.baddbmm``/``torch.addbmm`` and their methods, in place and not."""
    def function(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,  # noqa: A002
                 out: Tensor | None = None) -> Tensor:
        if out is not None:
            return getattr(A, name).out(input, batch1, batch2, beta=beta, alpha=alpha, out=out)
        return getattr(A, name).default(input, batch1, batch2, beta=beta, alpha=alpha)

    def method(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return getattr(A, name).default(self, batch1, batch2, beta=beta, alpha=alpha)

    def inplace(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return getattr(A, f"{name}_").default(self, batch1, batch2, beta=beta, alpha=alpha)

    function.__name__ = function.__qualname__ = method.__name__ = method.__qualname__ = name
    inplace.__name__ = inplace.__qualname__ = f"{name}_"
    function.__doc__ = f"``torch.{name}``: ``beta * input + alpha * " + (
        "(batch1 @ batch2)`` per batch." if name == "baddbmm" else "sum over the batch of (batch1 @ batch2)``.")
    return function, method, inplace


_BADDBMM, _ADDBMM = _batched_add("baddbmm"), _batched_add("addbmm")


def _convolution_function(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,  # noqa: A002
                          padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                          groups: int) -> Tensor:
    return A.convolution.default(input, weight, bias, list(stride), list(padding), list(dilation), transposed,
                                 list(output_padding), groups)


def _conv_function(n: int) -> Callable[..., Tensor]:
    def function(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
        packet = getattr(A, f"conv{n}d")
        if isinstance(padding, str):
            return packet.padding(input, weight, bias, _ints(stride, n), padding, _ints(dilation, n), groups)
        return packet.default(input, weight, bias, _ints(stride, n), _ints(padding, n), _ints(dilation, n), groups)

    function.__name__ = function.__qualname__ = f"conv{n}d"
    return function


def _conv_transpose_function(n: int) -> Callable[..., Tensor]:
    def function(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
        packet = getattr(A, f"conv_transpose{n}d")
        op = packet.default if n == 1 else packet.input
        return op(input, weight, bias, _ints(stride, n), _ints(padding, n), _ints(output_padding, n), groups,
                  _ints(dilation, n))

    function.__name__ = function.__qualname__ = f"conv_transpose{n}d"
    return function


def _max_pool_function(n: int) -> Callable[..., Tensor]:
    def function(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
                 dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
        op = getattr(A, f"max_pool{n}d").default
        return op(input, _ints(kernel_size, n), [] if stride is None else _ints(stride, n), _ints(padding, n),
                  _ints(dilation, n), ceil_mode)

    function.__name__ = function.__qualname__ = f"max_pool{n}d"
    return function


def _adaptive_avg_pool2d_function(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    return A._adaptive_avg_pool2d.default(input, _ints(output_size, 2))


_POOL1D_SIGNATURES = {
    "avg_pool1d": ("avg_pool1d(Tensor input, IntArrayRef[1] kernel_size, IntArrayRef[1] stride=None, "
                   "IntArrayRef[1] padding=0, bool ceil_mode=False, bool count_include_pad=True)"),
    "adaptive_avg_pool1d": "adaptive_avg_pool1d(Tensor input, IntArrayRef[1] output_size)",
}
_POOL1D_PARSERS: dict[str, Any] = {}


def _pool1d_function(name: str) -> Callable[..., Tensor]:
    """``torch.<name>``: torch's argument parsing (an int list argument may be one int), then the operator."""

    def function(*args: Any, **kwargs: Any) -> Tensor:
        parser = _POOL1D_PARSERS.get(name)
        if parser is None:
            from ..factories import _CHECKS
            from ..schema import PythonArgParser

            parser = _POOL1D_PARSERS[name] = PythonArgParser([_POOL1D_SIGNATURES[name]], _CHECKS)
        if name == "avg_pool1d":  # stride=None (its default) means the empty list: torch's parser allows None
            if kwargs.get("stride", 0) is None:
                kwargs = {**kwargs, "stride": ()}
            if len(args) > 2 and args[2] is None:
                args = (*args[:2], (), *args[3:])
        bound = parser.parse(args, kwargs)[1]
        for key in ("kernel_size", "stride", "padding", "output_size"):  # IntArrayRef[1]: an int is a 1-list
            if key in bound:
                value = bound[key]
                bound[key] = [] if value is None else [value] if isinstance(value, int) else list(value)
        return getattr(A, name).default(*bound.values())

    function.__name__ = function.__qualname__ = name
    return function


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "addmm": addmm, "baddbmm": _BADDBMM[0], "addbmm": _ADDBMM[0], "convolution": _convolution_function,
    "conv1d": _conv_function(1), "conv2d": _conv_function(2), "conv3d": _conv_function(3),
    "conv_transpose1d": _conv_transpose_function(1), "conv_transpose2d": _conv_transpose_function(2),
    "conv_transpose3d": _conv_transpose_function(3),
    "max_pool2d": _max_pool_function(2), "max_pool3d": _max_pool_function(3),
    "_adaptive_avg_pool2d": _adaptive_avg_pool2d_function,
    "avg_pool1d": _pool1d_function("avg_pool1d"), "adaptive_avg_pool1d": _pool1d_function("adaptive_avg_pool1d"),
}
METHODS: dict[str, Callable[..., Any]] = {"addmm": _addmm_method, "addmm_": _addmm__method,
                                          "baddbmm": _BADDBMM[1], "baddbmm_": _BADDBMM[2],
                                          "addbmm": _ADDBMM[1], "addbmm_": _ADDBMM[2]}
