"""torchvision's ``roi_align`` as a dispatched operator with a custom-Function autograd kernel.

The pattern of ``torchvision/csrc/ops/`` and of PyTorch's C++ custom-autograd tutorial:

1. ``define()`` defines ``torchvision::roi_align`` and ``torchvision::_roi_align_backward`` with
   torchvision's schemas in a ``Library("torchvision", "DEF")`` (``TORCH_LIBRARY(torchvision, m)``);
2. registers numpy CPU kernels for both (``TORCH_LIBRARY_IMPL(torchvision, CPU, m)``), written as
   torchvision's CPU kernel computes: bilinear samples on a regular grid in each output bin, the
   half-pixel offset when ``aligned``, an adaptive grid (``ceil(roi_size / pooled_size)``) when
   ``sampling_ratio <= 0``;
3. registers ``ROIAlignFunction`` at the ``Autograd`` alias key
   (``TORCH_LIBRARY_IMPL(torchvision, Autograd, m)``). Its ``forward`` keeps the non-tensor
   arguments and the input's shape in ``ctx.saved_data``, saves ``rois`` with
   ``save_for_backward``, and calls the operator *again* under ``AutoDispatchBelowADInplaceOrView``,
   so the second call skips the Autograd keys and goes straight to the CPU kernel. Its
   ``backward`` calls ``_roi_align_backward`` through the dispatcher.

Two cautionary demos show what goes wrong without that guard: ``demo_inference_mode`` (the
user-facing ``inference_mode`` instead of the kernel guard) and ``demo_missing_guard`` (no guard
at all: the call re-enters the Autograd kernel; PyTorch recurses until the stack overflows).

Run it with ``python docs/examples/roi_align.py`` or ``python -m dispatchcore.examples.roi_align``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

import dispatchcore as dc
from dispatchcore.autograd import Function

__all__ = [
    "ROIAlignBackwardFunction",
    "ROIAlignFunction",
    "ROI_ALIGN_BACKWARD_SCHEMA",
    "ROI_ALIGN_SCHEMA",
    "define",
    "demo_inference_mode",
    "demo_missing_guard",
    "dispatch_keyset",
    "main",
    "numerical_check",
    "roi_align",
    "roi_align_backward_cpu",
    "roi_align_forward_cpu",
    "traced",
]

# torchvision/csrc/ops/roi_align.cpp, TORCH_LIBRARY_FRAGMENT(torchvision, m)
ROI_ALIGN_SCHEMA = (
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "int sampling_ratio, bool aligned) -> Tensor")
ROI_ALIGN_BACKWARD_SCHEMA = (
    "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width, "
    "int sampling_ratio, bool aligned) -> Tensor")


# --- tracing, for the tour ---------------------------------------------------------------------
_TRACE: ContextVar[Callable[[str], Any] | None] = ContextVar("roi_align_trace", default=None)


@contextmanager
def traced(out: Callable[[str], Any] = print) -> Iterator[None]:
    """While active, the kernels below report each hop of a call to ``out``."""
    token = _TRACE.set(out)
    try:
        yield
    finally:
        _TRACE.reset(token)


def _hop(message: Callable[[], str]) -> None:
    out = _TRACE.get()
    if out is not None:
        out(message())


def dispatch_keyset(op: dc.OperatorHandle, *tensors: dc.Tensor) -> dc.DispatchKeySet:
    """The key set a call of ``op`` with these tensor arguments dispatches on, here and now.

    ``computeDispatchKeySet`` (``DispatchKeyExtractor.h``): the union of the arguments' key sets,
    plus the thread-local included keys, minus the excluded keys, minus the keys at which ``op``'s
    table holds a fallthrough. Its highest key picks the kernel.
    """
    ks = dc.DispatchKeySet()
    for t in tensors:
        ks = ks | dc.dispatch_keys(t)
    ks = (ks | dc.tls_local_include_set()) - dc.tls_local_exclude_set()
    for key in list(ks):
        registration, _ = op.table_entry(key)
        if registration is not None and registration.fallthrough:
            ks = ks.remove(key)
    return ks


# --- the CPU kernels (numpy) -------------------------------------------------------------------
def _array(t: dc.Tensor) -> np.ndarray:
    """A kernel reads its tensor's memory directly, like ``data_ptr<T>()`` in a C++ kernel.

    See Note [Backend data protocol]: a CPU tensor's ``_data`` is its ndarray. (``Tensor.numpy()``
    refuses tensors that require grad; that check is for users, and kernels run below autograd.)
    """
    return np.asarray(t._data)


def _axis_weights(start: Any, bin_size: Any, grid: int, pooled: int, size: int, dtype: np.dtype) -> np.ndarray:
    """Bilinear weights along one axis: ``w[p, i]`` is how much pixel row (or column) ``i`` adds to bin ``p``.

    Mirrors torchvision's ``pre_calc_for_bilinear_interpolate`` / ``bilinear_interpolate_gradient``
    for one coordinate: sample ``k`` of bin ``p`` sits at ``start + p*bin + (k + .5)*bin/grid``;
    samples outside ``[-1, size]`` contribute nothing; others are clamped to ``[0, size - 1]``
    and split between the two neighbouring pixels. ROIAlign's bilinear weight is a product of
    one such weight per axis, so the 2-d sum over samples factorises as ``Wy @ X @ Wx.T``.
    """
    weights = np.zeros((pooled, size), dtype=dtype)
    if grid <= 0 or size <= 0:
        return weights
    T = dtype.type
    p = np.arange(pooled, dtype=dtype)[:, None]
    k = np.arange(grid, dtype=dtype)[None, :]
    coord = start + p * bin_size + (k + T(0.5)) * bin_size / T(grid)  # (pooled, grid)
    valid = (coord >= -1.0) & (coord <= size)
    coord = np.maximum(coord, T(0))  # if (y <= 0) y = 0;
    low = coord.astype(np.int64)
    at_edge = low >= size - 1
    high = np.where(at_edge, size - 1, low + 1)
    low = np.where(at_edge, size - 1, low)
    coord = np.where(at_edge, low.astype(dtype), coord)
    frac = (coord - low).astype(dtype)  # ly (lx); the low pixel gets hy = 1 - ly
    rows = np.broadcast_to(np.arange(pooled)[:, None], coord.shape)
    np.add.at(weights, (rows[valid], low[valid]), (T(1) - frac)[valid])
    np.add.at(weights, (rows[valid], high[valid]), frac[valid])
    return weights


def _roi_weights(roi: np.ndarray, spatial_scale: float, pooled_height: int, pooled_width: int,
                 sampling_ratio: int, aligned: bool, height: int, width: int,
                 dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, Any]:
    """One ROI's ``(Wy, Wx, count)``: the per-axis weights and the number of samples per bin."""
    T = dtype.type
    offset = T(0.5) if aligned else T(0.0)
    scale = T(spatial_scale)
    start_w, start_h = roi[1] * scale - offset, roi[2] * scale - offset
    end_w, end_h = roi[3] * scale - offset, roi[4] * scale - offset
    roi_width, roi_height = end_w - start_w, end_h - start_h
    if not aligned:  # force malformed ROIs to be 1x1
        roi_width, roi_height = max(roi_width, T(1)), max(roi_height, T(1))
    bin_h, bin_w = roi_height / T(pooled_height), roi_width / T(pooled_width)
    grid_h = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_height / T(pooled_height)))
    grid_w = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_width / T(pooled_width)))
    count = T(max(grid_h * grid_w, 1))
    wy = _axis_weights(start_h, bin_h, grid_h, pooled_height, height, dtype)
    wx = _axis_weights(start_w, bin_w, grid_w, pooled_width, width, dtype)
    return wy, wx, count


def _check_inputs(input: dc.Tensor, rois: dc.Tensor, what: str) -> None:
    if input.dtype != rois.dtype:
        raise RuntimeError(
            f"Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 "
            f"'rois'; but type {input.dtype} does not equal {rois.dtype} (while checking arguments for {what})")
    if rois.dim() != 2 or rois.shape[1] != 5:
        raise RuntimeError("rois must have shape as Tensor[K, 5]")


def roi_align_forward_cpu(input: dc.Tensor, rois: dc.Tensor, spatial_scale: float, pooled_height: int,
                          pooled_width: int, sampling_ratio: int, aligned: bool) -> dc.Tensor:
    """The CPU kernel of ``torchvision::roi_align`` (``roi_align_forward_kernel``).

    ``input`` is ``[N, C, H, W]``; each row of ``rois`` is ``(batch_index, x1, y1, x2, y2)`` in
    input coordinates before ``spatial_scale``. Returns ``[K, C, pooled_height, pooled_width]``.
    """
    _check_inputs(input, rois, "roi_align_forward_kernel")
    x, boxes = _array(input), _array(rois)
    _, channels, height, width = x.shape
    out = np.zeros((boxes.shape[0], channels, pooled_height, pooled_width), dtype=x.dtype)
    for n, roi in enumerate(boxes):
        wy, wx, count = _roi_weights(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                     aligned, height, width, x.dtype)
        out[n] = wy @ x[int(roi[0])] @ wx.T / count
    _hop(lambda: f"[CPU]          roi_align_forward_cpu samples {boxes.shape[0]} ROI(s) with numpy; the "
                 f"exclude set is still {hex(int(dc.tls_local_exclude_set()))}")
    return dc.wrap(out)


def roi_align_backward_cpu(grad: dc.Tensor, rois: dc.Tensor, spatial_scale: float, pooled_height: int,
                           pooled_width: int, batch_size: int, channels: int, height: int, width: int,
                           sampling_ratio: int, aligned: bool) -> dc.Tensor:
    """The CPU kernel of ``torchvision::_roi_align_backward``: scatter each bin's gradient back.

    Every sample passes ``grad / count`` to its four neighbouring pixels with the forward's
    bilinear weights, so the result is the transpose of the forward map: ``Wy.T @ G @ Wx``.
    """
    _check_inputs(grad, rois, "roi_align_backward_kernel")
    g, boxes = _array(grad), _array(rois)
    grad_input = np.zeros((batch_size, channels, height, width), dtype=g.dtype)
    for n, roi in enumerate(boxes):
        wy, wx, count = _roi_weights(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                     aligned, height, width, g.dtype)
        grad_input[int(roi[0])] += wy.T @ g[n] @ wx / count
    _hop(lambda: f"[CPU]          roi_align_backward_cpu scatters the gradient into a {list(grad_input.shape)} "
                 "tensor")
    return dc.wrap(grad_input)


# --- the autograd kernels ----------------------------------------------------------------------
class ROIAlignFunction(Function):
    """The Autograd-key kernel of ``torchvision::roi_align`` (torchvision's ``ROIAlignFunction``)."""

    @staticmethod
    def forward(ctx: Any, input: dc.Tensor, rois: dc.Tensor, spatial_scale: float, pooled_height: int,
                pooled_width: int, sampling_ratio: int, aligned: bool) -> dc.Tensor:
        op = dc.ops.torchvision.roi_align.default
        _hop(lambda: f"[AutogradCPU]  ROIAlignFunction.forward (grad mode {'on' if dc.is_grad_enabled() else 'off'}) "
                     "saves rois, the scalars and input_shape")
        ctx.saved_data["spatial_scale"] = spatial_scale
        ctx.saved_data["pooled_height"] = pooled_height
        ctx.saved_data["pooled_width"] = pooled_width
        ctx.saved_data["sampling_ratio"] = sampling_ratio
        ctx.saved_data["aligned"] = aligned
        ctx.saved_data["input_shape"] = tuple(input.shape)
        ctx.save_for_backward(rois)
        # The guard: the call below must not come back to this kernel. It excludes the Autograd
        # keys (and ADInplaceOrView, whose bookkeeping the outer call has already done).
        with dc.AutoDispatchBelowADInplaceOrView():
            _hop(lambda: "[AutogradCPU]  under AutoDispatchBelowADInplaceOrView (exclude set "
                         f"{hex(int(dc.tls_local_exclude_set()))}),\n"
                         f"               roi_align called again dispatches on {dispatch_keyset(op, input, rois)}")
            return op(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)

    @staticmethod
    def backward(ctx: Any, grad_output: dc.Tensor) -> tuple[Any, ...]:
        (rois,) = ctx.saved_tensors
        d = ctx.saved_data
        batch_size, channels, height, width = d["input_shape"]
        op = dc.ops.torchvision._roi_align_backward.default
        _hop(lambda: f"[backward]     {type(ctx).__name__}.apply (grad mode "
                     f"{'on' if dc.is_grad_enabled() else 'off'}) calls _roi_align_backward,\n"
                     f"               which dispatches on {dispatch_keyset(op, grad_output, rois)}")
        grad_input = op(grad_output, rois, d["spatial_scale"], d["pooled_height"], d["pooled_width"],
                        batch_size, channels, height, width, d["sampling_ratio"], d["aligned"])
        return grad_input, None, None, None, None, None, None


class ROIAlignBackwardFunction(Function):
    """The Autograd-key kernel of ``torchvision::_roi_align_backward``: no double backward."""

    @staticmethod
    def forward(ctx: Any, grad: dc.Tensor, rois: dc.Tensor, spatial_scale: float, pooled_height: int,
                pooled_width: int, batch_size: int, channels: int, height: int, width: int,
                sampling_ratio: int, aligned: bool) -> dc.Tensor:
        _hop(lambda: "[AutogradCPU]  ROIAlignBackwardFunction.forward takes the guard and calls again")
        with dc.AutoDispatchBelowADInplaceOrView():
            return dc.ops.torchvision._roi_align_backward.default(
                grad, rois, spatial_scale, pooled_height, pooled_width, batch_size, channels, height, width,
                sampling_ratio, aligned)

    @staticmethod
    def backward(ctx: Any, grad_output: dc.Tensor) -> tuple[Any, ...]:
        raise RuntimeError("double backwards on roi_align not supported")


def define(lib: dc.Library | None = None) -> dc.Library:
    """Define both operators and register their CPU and Autograd kernels; returns the Library.

    ``lib`` defaults to a new ``Library("torchvision", "DEF")``. Destroy it (``lib.destroy()``)
    to remove everything again.
    """
    if lib is None:
        lib = dc.Library("torchvision", "DEF")
    lib.define(ROI_ALIGN_SCHEMA)
    lib.define(ROI_ALIGN_BACKWARD_SCHEMA)
    lib.impl("roi_align", roi_align_forward_cpu, "CPU")
    lib.impl("_roi_align_backward", roi_align_backward_cpu, "CPU")
    lib.impl("roi_align", ROIAlignFunction, "Autograd")
    lib.impl("_roi_align_backward", ROIAlignBackwardFunction, "Autograd")
    return lib


def roi_align(input: dc.Tensor, boxes: dc.Tensor, output_size: int | tuple[int, int], spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = False) -> dc.Tensor:
    """``torchvision.ops.roi_align`` for ``boxes`` given as a ``[K, 5]`` tensor."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    return dc.ops.torchvision.roi_align.default(input, boxes, spatial_scale, output_size[0], output_size[1],
                                                sampling_ratio, aligned)


# --- a numerical check -------------------------------------------------------------------------
def numerical_check(eps: float = 1e-6, atol: float = 1e-5) -> float:
    """Compare the analytical input gradient with central differences (float64, tiny sizes).

    Uses ``dispatchcore.autograd.gradcheck`` when it exists, else a hand-written check. Returns
    the largest absolute difference found (0.0 when gradcheck did the comparison).
    """
    dc.manual_seed(0)
    x = dc.rand(1, 2, 5, 6, dtype=dc.float64, requires_grad=True)
    rois = dc.tensor([[0, 0.3, 0.6, 4.2, 3.9], [0, 1.5, 0.2, 5.1, 4.4]], dtype=dc.float64)
    args = (1.0, 2, 3, 2, True)  # spatial_scale, pooled h/w, sampling_ratio, aligned
    gradcheck = getattr(dc.autograd, "gradcheck", None)
    if gradcheck is not None:
        gradcheck(lambda t: dc.ops.torchvision.roi_align.default(t, rois, *args), (x,), eps=eps, atol=atol)
        return 0.0
    out = dc.ops.torchvision.roi_align.default(x, rois, *args)
    weights = dc.rand(*out.shape, dtype=dc.float64)  # a random projection of the output
    (out * weights).sum().backward()
    assert x.grad is not None  # backward() reached x
    analytic = _array(x.grad).ravel()
    base = _array(x).copy()
    numeric = np.empty_like(analytic)
    w = _array(weights)
    for i in range(base.size):
        values = []
        for step in (eps, -eps):
            bumped = base.copy()
            bumped.ravel()[i] += step
            y = dc.ops.torchvision.roi_align.default(dc.tensor(bumped), rois, *args)
            values.append(float((_array(y) * w).sum()))
        numeric[i] = (values[0] - values[1]) / (2 * eps)
    err = float(np.abs(numeric - analytic).max())
    if err > atol:
        raise AssertionError(f"roi_align gradient differs from central differences by {err}")
    return err


# --- cautionary demos --------------------------------------------------------------------------
def _demo_ops(lib: dc.Library) -> None:
    """A copy of roi_align in a scratch namespace, for Autograd kernels that misbehave."""
    lib.define(ROI_ALIGN_SCHEMA.replace("roi_align(", "roi_align_inference_saving("))
    lib.define(ROI_ALIGN_SCHEMA.replace("roi_align(", "roi_align_inference("))
    lib.define(ROI_ALIGN_SCHEMA.replace("roi_align(", "roi_align_unguarded("))
    for name in ("roi_align_inference_saving", "roi_align_inference", "roi_align_unguarded"):
        lib.impl(name, roi_align_forward_cpu, "CPU")


def _inference_mode_function(op_name: str, save_output: bool) -> type[Function]:
    class ROIAlignUnderInferenceMode(Function):
        @staticmethod
        def forward(ctx: Any, input: dc.Tensor, rois: dc.Tensor, *args: Any) -> dc.Tensor:
            with dc.inference_mode():  # wrong: the user-facing mode, not the kernel guard
                output = getattr(dc.ops.roi_align_demo, op_name).default(input, rois, *args)
            if save_output:  # e.g. for a backward that needs the result
                ctx.save_for_backward(rois, output)
            else:
                ctx.save_for_backward(rois)
            return output

        @staticmethod
        def backward(ctx: Any, grad_output: dc.Tensor) -> tuple[Any, ...]:
            raise AssertionError("not reached in the demo")

    return ROIAlignUnderInferenceMode


class ROIAlignUnguarded(Function):
    """An Autograd kernel that forgets the guard: its forward calls the operator straight back."""

    @staticmethod
    def forward(ctx: Any, input: dc.Tensor, rois: dc.Tensor, *args: Any) -> dc.Tensor:
        ctx.save_for_backward(rois)
        return dc.ops.roi_align_demo.roi_align_unguarded.default(input, rois, *args)  # no guard

    @staticmethod
    def backward(ctx: Any, grad_output: dc.Tensor) -> tuple[Any, ...]:
        raise AssertionError("not reached in the demo")


def _demo_inputs() -> tuple[dc.Tensor, dc.Tensor, tuple[Any, ...]]:
    x = dc.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
    rois = dc.tensor([[0.0, 0.0, 0.0, 3.0, 3.0]])
    return x, rois, (1.0, 2, 2, 2, False)


def demo_inference_mode(out: Callable[[str], Any] = print) -> list[BaseException]:
    """(a) ``inference_mode`` instead of the guard inside ``forward``: what goes wrong.

    ``inference_mode`` excludes the Autograd keys too, so the inner call does reach the CPU
    kernel; but it is the user-facing mode, not a kernel guard (ATen/core/LegacyTypeDispatch.h): every tensor allocated
    inside is an inference tensor, without a version counter or Autograd keys. Saving the inner
    output then fails at once; not saving it gives an output whose graph breaks at the next
    operation and which cannot be updated in place. PyTorch 2.13 behaves the same. Returns the
    three errors caught.
    """
    errors: list[BaseException] = []
    with dc.Library("roi_align_demo", "DEF") as lib:
        _demo_ops(lib)
        lib.impl("roi_align_inference_saving", _inference_mode_function("roi_align_inference_saving", True),
                 "Autograd")
        lib.impl("roi_align_inference", _inference_mode_function("roi_align_inference", False), "Autograd")
        x, rois, args = _demo_inputs()
        out("   the inner output is allocated inside inference_mode, so it is an inference tensor.")
        try:
            dc.ops.roi_align_demo.roi_align_inference_saving.default(x, rois, *args)
        except RuntimeError as e:
            errors.append(e)
            out(f"   - forward saves it for backward: RuntimeError: {e}")
        y = dc.ops.roi_align_demo.roi_align_inference.default(x, rois, *args)
        out(f"   - forward does not save it: y.grad_fn = {y.grad_fn.name()}, but y.is_inference() = "
            f"{y.is_inference()}")
        s = y.sum()
        out(f"     and y carries only {dc.dispatch_keys(y)}: y.sum() skips AutogradCPU "
            f"(grad_fn {s.grad_fn}),")
        try:
            s.backward()
        except RuntimeError as e:
            errors.append(e)
            out(f"     so y.sum().backward() fails: RuntimeError: {e}")
        try:
            y.add_(1.0)
        except RuntimeError as e:
            errors.append(e)
            out(f"     and y cannot be updated in place: RuntimeError: {e}")
    return errors


def demo_missing_guard(out: Callable[[str], Any] = print) -> BaseException:
    """(b) No guard at all: ``forward`` calls the operator, which dispatches back to the Autograd kernel.

    PyTorch recurses until the stack overflows; dispatchcore detects the re-entry and says why.
    """
    with dc.Library("roi_align_demo", "DEF") as lib:
        _demo_ops(lib)
        lib.impl("roi_align_unguarded", ROIAlignUnguarded, "Autograd")
        x, rois, args = _demo_inputs()
        try:
            dc.ops.roi_align_demo.roi_align_unguarded.default(x, rois, *args)
        except RuntimeError as e:
            out(f"   RuntimeError: {e}")
            return e
    raise AssertionError("the unguarded kernel did not re-enter")


# --- the script --------------------------------------------------------------------------------
def main() -> None:
    """Define the operators, show the table, one forward and backward, the checks and the demos."""
    lib = define()
    try:
        out = print
        out("The computed dispatch table of torchvision::roi_align:\n")
        out(dc.dump_table("torchvision::roi_align"))
        x = dc.arange(32.0).reshape(1, 2, 4, 4).requires_grad_()
        rois = dc.tensor([[0.0, 0.5, 0.5, 2.5, 3.0], [0.0, 1.0, 0.0, 3.0, 2.0]])
        y = roi_align(x, rois, output_size=2, spatial_scale=1.0, sampling_ratio=2, aligned=True)
        out(f"roi_align(x[1, 2, 4, 4], 2 rois, output_size=2, aligned=True):\n{y}\n")
        y.sum().backward()
        out(f"x.grad (each ROI bin spreads its gradient over the pixels it sampled):\n{x.grad}\n")
        err = numerical_check()
        how = "dispatchcore.autograd.gradcheck" if hasattr(dc.autograd, "gradcheck") else "central differences"
        out(f"numerical check of the gradient in float64 ({how}): passed (max error {err:.1e})\n")
        out("(a) inference_mode inside forward instead of AutoDispatchBelowADInplaceOrView:")
        demo_inference_mode(out)
        out("\n(b) forgetting the guard:")
        demo_missing_guard(out)
    finally:
        lib.destroy()


if __name__ == "__main__":
    main()
