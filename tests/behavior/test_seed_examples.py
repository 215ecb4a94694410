"""The seed examples (MyReLU, torchvision's roi_align, a tiny MLP) and the guided tour."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.examples import my_relu, roi_align, tiny_mlp

REPO = Path(__file__).resolve().parents[2]


def _values(t):
    return np.array(t.tolist(), dtype=np.float64)


# --- MyReLU ------------------------------------------------------------------------------------
def test_my_relu_matches_relu_in_value_and_gradient():
    values = [-2.0, -0.5, 0.25, 3.0, -1e-3, 1e-3]
    x = dc.tensor(values, dtype=dc.float64, requires_grad=True)
    y = my_relu.MyReLU.apply(x)
    assert y.grad_fn.name() == "MyReLUBackward"
    y.sum().backward()
    x_ref = dc.tensor(values, dtype=dc.float64, requires_grad=True)
    ref = x_ref.relu()
    ref.sum().backward()
    assert y.tolist() == ref.tolist() == [max(v, 0.0) for v in values]
    assert x.grad.tolist() == x_ref.grad.tolist() == [1.0 if v > 0 else 0.0 for v in values]


def test_my_relu_gradient_matches_finite_differences():
    values = [-1.5, -0.2, 0.3, 2.0]
    weights = [0.5, -1.0, 2.0, 3.0]
    x = dc.tensor(values, dtype=dc.float64, requires_grad=True)
    (my_relu.MyReLU.apply(x) * dc.tensor(weights, dtype=dc.float64)).sum().backward()
    eps = 1e-6

    def f(v):
        return sum(w * max(a, 0.0) for w, a in zip(weights, v))

    numeric = [(f([a + eps * (j == i) for j, a in enumerate(values)])
                - f([a - eps * (j == i) for j, a in enumerate(values)])) / (2 * eps) for i in range(len(values))]
    assert np.allclose(x.grad.tolist(), numeric, atol=1e-8)


def test_my_relu_does_not_record_without_requires_grad_or_under_no_grad():
    assert my_relu.MyReLU.apply(dc.tensor([1.0, -1.0])).grad_fn is None
    x = dc.tensor([1.0, -1.0], requires_grad=True)
    with dc.no_grad():
        assert my_relu.MyReLU.apply(x).grad_fn is None


def test_my_relu_demo_reports_identical_results():
    lines: list[str] = []
    result = my_relu.demo(out=lines.append)
    assert result["same"]
    assert any("MyReLUBackward" in line for line in lines)


# --- roi_align: a slow reference, transcribed from torchvision's CPU kernel -----------------------
def _ref_bilinear(img, height, width, y, x):
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return 0.0
    if y <= 0:
        y = 0.0
    if x <= 0:
        x = 0.0
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_high = y_low = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_high = x_low = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    return (hy * hx * img[y_low][x_low] + hy * lx * img[y_low][x_high]
            + ly * hx * img[y_high][x_low] + ly * lx * img[y_high][x_high])


def _ref_roi_align(inp, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    """roi_align_forward_kernel_impl, loop for loop, on nested lists of Python floats."""
    channels, height, width = len(inp[0]), len(inp[0][0]), len(inp[0][0][0])
    out = []
    for roi in rois:
        batch = int(roi[0])
        offset = 0.5 if aligned else 0.0
        start_w, start_h = roi[1] * spatial_scale - offset, roi[2] * spatial_scale - offset
        end_w, end_h = roi[3] * spatial_scale - offset, roi[4] * spatial_scale - offset
        roi_width, roi_height = end_w - start_w, end_h - start_h
        if not aligned:
            roi_width, roi_height = max(roi_width, 1.0), max(roi_height, 1.0)
        bin_h, bin_w = roi_height / pooled_height, roi_width / pooled_width
        grid_h = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_height / pooled_height)
        grid_w = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_width / pooled_width)
        count = max(grid_h * grid_w, 1)
        planes = []
        for c in range(channels):
            img = inp[batch][c]
            plane = []
            for ph in range(pooled_height):
                row = []
                for pw in range(pooled_width):
                    acc = 0.0
                    for iy in range(grid_h):
                        y = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                        for ix in range(grid_w):
                            x = start_w + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                            acc += _ref_bilinear(img, height, width, y, x)
                    row.append(acc / count)
                plane.append(row)
            planes.append(plane)
        out.append(planes)
    return np.array(out, dtype=np.float64).reshape(len(rois), channels, pooled_height, pooled_width)


@pytest.fixture
def torchvision_ops():
    lib = roi_align.define()
    yield dc.ops.torchvision
    lib._destroy()


ROIS = [
    [0, 0.0, 0.0, 4.0, 3.0],
    [1, 1.3, 0.7, 3.9, 4.6],
    [0, -2.0, -1.5, 7.5, 2.0],   # partly outside the image: samples beyond -1 / size contribute 0
    [1, 2.2, 2.2, 2.2, 2.2],     # degenerate: forced to 1x1 unless aligned
    [0, 4.0, 3.0, 0.5, 0.5],     # reversed corners
]
CASES = [  # spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned
    (1.0, 2, 2, 2, False),
    (1.0, 2, 3, -1, False),
    (0.5, 3, 2, 0, True),
    (1.0, 2, 2, -1, True),
    (1.5, 1, 2, 3, True),
]


def _inputs(dtype=dc.float64):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 2, 4, 5))
    return x, dc.tensor(x, dtype=dtype), dc.tensor(ROIS, dtype=dtype)


@pytest.mark.parametrize("case", CASES)
def test_roi_align_forward_matches_the_loop_reference(torchvision_ops, case):
    x_np, x, rois = _inputs()
    out = torchvision_ops.roi_align.default(x, rois, *case)
    assert list(out.shape) == [len(ROIS), 2, case[1], case[2]]
    expected = _ref_roi_align(x_np.tolist(), ROIS, *case)
    np.testing.assert_allclose(_values(out), expected, rtol=1e-12, atol=1e-12)


def test_roi_align_float32_matches_the_reference_to_float_precision(torchvision_ops):
    x_np, _, _ = _inputs()
    x, rois = dc.tensor(x_np, dtype=dc.float32), dc.tensor(ROIS, dtype=dc.float32)
    out = torchvision_ops.roi_align.default(x, rois, 1.0, 2, 2, -1, True)
    assert out.dtype == dc.float32
    expected = _ref_roi_align(x_np.astype(np.float32).tolist(),
                              np.array(ROIS, dtype=np.float32).tolist(), 1.0, 2, 2, -1, True)
    np.testing.assert_allclose(_values(out), expected, rtol=1e-5, atol=1e-5)


def test_roi_align_python_wrapper_takes_torchvisions_arguments(torchvision_ops):
    x_np, x, rois = _inputs()
    out = roi_align.roi_align(x, rois, output_size=(2, 3), spatial_scale=0.5, sampling_ratio=2, aligned=True)
    np.testing.assert_allclose(_values(out), _ref_roi_align(x_np.tolist(), ROIS, 0.5, 2, 3, 2, True), atol=1e-12)


def test_roi_align_rejects_rois_without_five_columns(torchvision_ops):
    with pytest.raises(RuntimeError, match=re.escape("rois must have shape as Tensor[K, 5]")):
        torchvision_ops.roi_align.default(dc.zeros(1, 1, 2, 2), dc.zeros(1, 4), 1.0, 1, 1, -1, False)


@pytest.mark.parametrize("case", CASES)
def test_roi_align_backward_matches_finite_differences(torchvision_ops, case):
    x_np, x, rois = _inputs()
    x.requires_grad_()
    out = torchvision_ops.roi_align.default(x, rois, *case)
    weights = np.random.default_rng(3).standard_normal(tuple(out.shape))
    (out * dc.tensor(weights)).sum().backward()
    eps = 1e-6
    numeric = np.zeros_like(x_np)
    for idx in np.ndindex(*x_np.shape):
        plus, minus = x_np.copy(), x_np.copy()
        plus[idx] += eps
        minus[idx] -= eps
        f_plus = (_ref_roi_align(plus.tolist(), ROIS, *case) * weights).sum()
        f_minus = (_ref_roi_align(minus.tolist(), ROIS, *case) * weights).sum()
        numeric[idx] = (f_plus - f_minus) / (2 * eps)
    np.testing.assert_allclose(_values(x.grad), numeric, atol=1e-7)


def test_roi_align_backward_kernel_is_the_transpose_of_the_forward(torchvision_ops):
    # roi_align is linear in its input, so d<g, f(x)>/dx[i] = <g, f(e_i)> exactly
    _, _, rois = _inputs()
    case = (0.5, 3, 2, 0, True)
    grad = np.random.default_rng(5).standard_normal((len(ROIS), 2, 3, 2))
    got = torchvision_ops._roi_align_backward.default(dc.tensor(grad), rois, case[0], case[1], case[2],
                                                     2, 2, 4, 5, case[3], case[4])
    expected = np.zeros((2, 2, 4, 5))
    for idx in np.ndindex(*expected.shape):
        basis = np.zeros((2, 2, 4, 5))
        basis[idx] = 1.0
        expected[idx] = (_ref_roi_align(basis.tolist(), ROIS, *case) * grad).sum()
    np.testing.assert_allclose(_values(got), expected, atol=1e-12)


def test_roi_align_numerical_check_passes(torchvision_ops):
    assert roi_align.numerical_check() <= 1e-5


def test_roi_align_function_keeps_its_context_as_torchvision_does(torchvision_ops):
    _, x, rois = _inputs()
    x.requires_grad_()
    y = torchvision_ops.roi_align.default(x, rois, 0.5, 3, 2, 0, True)
    node = y.grad_fn
    assert node.name() == "ROIAlignFunctionBackward"
    assert node.saved_data == {"spatial_scale": 0.5, "pooled_height": 3, "pooled_width": 2,
                               "sampling_ratio": 0, "aligned": True, "input_shape": (2, 2, 4, 5)}
    assert node.saved_tensors[0] is rois
    assert not y.is_inference() and y._version == 0
    assert dc.dispatch_keys(y) == dc.tensor_keyset("CPU")


def test_roi_align_table_has_the_function_at_autograd_and_numpy_kernel_at_cpu(torchvision_ops):
    for name in ("roi_align", "_roi_align_backward"):
        table = dc.dump_table(f"torchvision::{name}").splitlines()
        by_key = {line.split(":")[0]: line for line in table}
        assert re.fullmatch(r"CPU: registered at .*roi_align\.py:\d+ \[kernel\]", by_key["CPU"])
        assert re.fullmatch(r"AutogradCPU: registered at .*roi_align\.py:\d+ \[autograd kernel\]",
                            by_key["AutogradCPU"])
        assert by_key["ADInplaceOrView"].startswith("ADInplaceOrView: fallthrough registered at")
        assert by_key["ADInplaceOrView"].endswith("[backend fallback]")
    assert str(dc.find_op("torchvision::roi_align").schema) == "torchvision::" + roi_align.ROI_ALIGN_SCHEMA
    assert (str(dc.find_op("torchvision::_roi_align_backward").schema)
            == "torchvision::" + roi_align.ROI_ALIGN_BACKWARD_SCHEMA)


def test_roi_align_call_path_goes_autograd_then_guard_then_cpu_and_back(torchvision_ops):
    _, x, rois = _inputs()
    x.requires_grad_()
    op = torchvision_ops.roi_align.default
    assert roi_align.dispatch_keyset(op, x, rois) == dc.DispatchKeySet(["CPU", "AutogradCPU"])
    lines: list[str] = []
    with roi_align.traced(lines.append):
        y = op(x, rois, 1.0, 2, 2, 2, False)
        y.sum().backward()
    text = "\n".join(lines)
    hops = [line.split("]")[0] + "]" for line in lines]
    assert hops == ["[AutogradCPU]", "[AutogradCPU]", "[CPU]", "[backward]", "[AutogradCPU]", "[CPU]"]
    assert "roi_align called again dispatches on DispatchKeySet(CPU)" in text
    assert "exclude set 0x1ffbc00000000" in text
    assert "ROIAlignFunction.forward (grad mode off)" in text


def test_roi_align_double_backward_is_refused_as_in_torchvision(torchvision_ops):
    _, x, rois = _inputs()
    x.requires_grad_()
    y = torchvision_ops.roi_align.default(x, rois, 1.0, 2, 2, 2, False)
    g = dc.ones(*y.shape, dtype=dc.float64, requires_grad=True)
    (gx,) = dc.autograd.grad(y, x, grad_outputs=g, create_graph=True)
    assert gx.grad_fn.name() == "ROIAlignBackwardFunctionBackward"
    with pytest.raises(RuntimeError, match="double backwards on roi_align not supported"):
        gx.sum().backward()


def test_roi_align_define_and_destroy_leave_no_trace():
    lib = roi_align.define()
    lib._destroy()
    assert dc.dump_table("torchvision::roi_align") == ""  # no registration left, as torch prints
    roi_align.define()._destroy()  # a second DEF of torchvision works once the first is gone


# --- the cautionary demos ----------------------------------------------------------------------
INFERENCE_SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def test_inference_mode_inside_forward_fails_as_torch_does():
    lines: list[str] = []
    errors = roi_align.demo_inference_mode(out=lines.append)
    assert [type(e) for e in errors] == [RuntimeError, RuntimeError, RuntimeError]
    assert str(errors[0]) == INFERENCE_SAVE_ERROR
    assert str(errors[1]) == "element 0 of tensors does not require grad and does not have a grad_fn"
    assert str(errors[2]).startswith("Inplace update to inference tensor outside InferenceMode is not allowed.")
    text = "\n".join(lines)
    assert "y.is_inference() = True" in text
    assert "y carries only DispatchKeySet(CPU, AutocastCPU)" in text


def test_missing_guard_raises_a_clear_reentry_error_not_recursion():
    lines: list[str] = []
    error = roi_align.demo_missing_guard(out=lines.append)
    assert type(error) is RuntimeError
    assert "re-entered from inside ROIAlignUnguarded.forward" in str(error)
    assert "AutoDispatchBelowADInplaceOrView" in str(error)
    assert lines and lines[0].startswith("   RuntimeError: dispatchcore:")


def test_demos_clean_up_their_scratch_library():
    roi_align.demo_missing_guard(out=lambda *_: None)
    roi_align.demo_inference_mode(out=lambda *_: None)
    assert dc.dump_table("roi_align_demo::roi_align_unguarded") == ""  # no registration left, as torch prints


# --- the tiny MLP ------------------------------------------------------------------------------
def test_tiny_mlp_loss_falls():
    losses = tiny_mlp.train(steps=40, out=None)
    assert len(losses) == 40
    assert all(math.isfinite(v) for v in losses)
    assert losses[-1] < 0.25 * losses[0]
    assert sum(b < a for a, b in zip(losses, losses[1:])) >= 30  # mostly monotone


def test_tiny_mlp_is_deterministic():
    assert tiny_mlp.train(steps=3, out=None) == tiny_mlp.train(steps=3, out=None)


# --- scripts and the tour ----------------------------------------------------------------------
def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=REPO)


def test_tour_runs_and_prints_every_section():
    result = _run("-m", "dispatchcore")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for n, title in enumerate(["An operator, its computed table", "MyReLU", "roi_align",
                               "Guards are bit flips", "A tiny MLP"], start=1):
        assert f"== {n}/5  {title}" in out
    assert "grad_fn=<MyReLUBackward>" in out
    assert re.search(r"AutogradCPU: registered at dispatchcore/examples/roi_align\.py:\d+ \[autograd kernel\]", out)
    assert "roi_align called again dispatches on DispatchKeySet(CPU)" in out
    assert "[CPU]          roi_align_backward_cpu" in out
    assert re.search(r"inference_mode\(\) +off +0x4000000 +0x1ffb800000000 +CPU +no", out)
    assert re.search(r"no_grad\(\) +off +0x404000000 +0x1ff8000000000 +AutogradCPU +no", out)
    assert re.search(r"AutoDispatchBelowADInplaceOrView\(\) +on +0x404000000 +0x1ffbc00000000 +CPU +no", out)
    losses = [float(v) for v in re.findall(r"step +\d+ +loss (\d+\.\d+)", out)]
    assert len(losses) >= 5 and losses[-1] < losses[0]
    assert "Warning" not in result.stderr
    assert len(out.splitlines()) < 130  # about two screens


def test_tour_is_deterministic():
    from dispatchcore.__main__ import tour

    first: list[str] = []
    second: list[str] = []
    tour(out=first.append)
    tour(out=second.append)
    assert first == second


@pytest.mark.parametrize("script,expected", [
    ("my_relu.py", "the same as MyReLU's"),
    ("roi_align.py", "numerical check of the gradient in float64"),
    ("tiny_mlp.py", "loss fell from"),
])
def test_docs_example_scripts_run(script, expected):
    result = _run(str(REPO / "docs" / "examples" / script))
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout
