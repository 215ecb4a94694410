"""The shortcuts of the G24 training step (784-256-128-10 MLP, SGD) give what the general paths give.

Each fast path is compared with the general path it skips, bit for bit (dtype, shape, strides,
every bit of the data): ``add_``/``sub_`` with a float ``alpha`` (SGD's ``p.add_(g, alpha=-lr)``, one
BLAS axpy: fma.py, whose fused multiply-add is checked here against exact arithmetic), ``relu``'s zeros view,
``addmm`` computed as the transposed product for a small batch (transposed back by BLAS's
omatcopy: blas.py, checked here against numpy's transpose), ``threshold_backward`` as a bit
mask, ``log_softmax``'s row maximum of a classifier's logits, ``Module.__getattr__``'s parameter lookup, and
the whole step's graph and trace.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from dispatchcore_backends.cpu import blas, fma
from dispatchcore_backends.cpu import kernels as K
from dispatchcore_backends.cpu import nn as NN

import dispatchcore as dc
from dispatchcore.ops import aten


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _same(a, b):
    """Bit-for-bit equal results: dtype, shape, strides and every bit of the data."""
    x, y = a._data, b._data
    assert x.dtype == y.dtype and x.shape == y.shape and a.stride() == b.stride()
    assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()


def _rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --- add_/sub_ with a float alpha ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["add", "sub"])
@pytest.mark.parametrize("alpha", [-0.01, 0.1, 3.0, -1e-30])
def test_inplace_alpha_fast_path_equals_the_general_path(dtype, name, alpha):
    p, g = _rand((7, 33), 1, dtype), _rand((7, 33), 2, dtype)
    fast, slow = dc.tensor(p.copy()), dc.tensor(p.copy())
    ufunc = np.add if name == "add" else np.subtract
    with dc.no_grad():
        r = getattr(fast, name + "_")(dc.tensor(g), alpha=alpha)
    K._binary(name, ufunc, slow, dc.tensor(g), alpha, slow)  # the general path, in place
    assert r is fast
    _same(fast, slow)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["add", "sub"])
@pytest.mark.parametrize("shape", [(7, 33), (), (0, 3)])
@pytest.mark.parametrize("alpha", [-0.01, 3.0, 0.0])
def test_functional_alpha_fast_path_equals_the_general_path(dtype, name, shape, alpha):
    p, g = _rand(shape, 1, dtype), _rand(shape, 2, dtype)
    fast = getattr(aten, name).Tensor(dc.tensor(p), dc.tensor(g), alpha=alpha)
    slow = K._binary(name, np.add if name == "add" else np.subtract, dc.tensor(p), dc.tensor(g), alpha)
    _same(fast, slow)
    assert fast._data.base is None or fast._data.base is not p


def test_inplace_alpha_fast_path_reads_other_before_writing_an_overlapping_self():
    base = _rand((20,), 3)
    fast, slow = dc.tensor(base.copy()), dc.tensor(base.copy())
    with dc.no_grad():
        fast[2:].add_(fast[:-2], alpha=0.5)  # other overlaps self, shifted
    K._binary("add", np.add, slow[2:], slow[:-2], 0.5, slow[2:])
    _same(fast, slow)


def test_an_alpha_that_float32_cannot_hold_raises_torchs_error_on_either_path():
    p = np.full(4, 1.0, np.float32)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        dc.tensor(p.copy()).add_(dc.tensor(p), alpha=1e300)  # checked_convert, as torch's kernel
    with pytest.raises(RuntimeError, match="without overflow"), K.quiet():
        K._binary("add", np.add, dc.tensor(p.copy()), dc.tensor(p), 1e300, None)


@pytest.mark.parametrize("alpha", [10.0, 3e38])  # the product overflows float32
def test_inplace_alpha_that_overflows_leaves_the_fast_path_quietly(alpha):
    p = np.full(4, 3e38, np.float32)
    fast, slow = dc.tensor(p.copy()), dc.tensor(p.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with dc.no_grad():
            fast.add_(dc.tensor(p), alpha=alpha)  # the general path, silently
    with K.quiet():
        K._binary("add", np.add, slow, dc.tensor(p), alpha, slow)
    assert np.isinf(fast._data).all()
    _same(fast, slow)


@pytest.mark.parametrize("case", ["broadcast", "int_alpha", "half", "mixed_dtypes"])
def test_inplace_alpha_calls_outside_the_fast_path_still_agree_with_the_general_path(case):
    p, g = _rand((3, 4), 4), _rand((3, 4), 5)
    alpha = 2 if case == "int_alpha" else 0.25
    if case == "broadcast":
        g = g[0]
    elif case == "half":
        p, g = p.astype(np.float16), g.astype(np.float16)
    elif case == "mixed_dtypes":
        g = g.astype(np.float64)
    fast, slow = dc.tensor(p.copy()), dc.tensor(p.copy())
    with dc.no_grad():
        fast.add_(dc.tensor(g), alpha=alpha)
    K._binary("add", np.add, slow, dc.tensor(g), alpha, slow)
    _same(fast, slow)


def test_sgd_step_matches_the_general_paths_arithmetic():
    dc.manual_seed(0)
    w = dc.nn.Parameter(dc.randn(5, 3))
    w.grad = dc.randn(5, 3)
    expected = dc.tensor(w._data.copy())
    K._binary("add", np.add, expected, w.grad, -0.01, expected)
    dc.optim.SGD([w], lr=0.01).step()
    _same(w, expected)


def _needs_fused_axpy(dtype):
    if np.dtype(dtype) not in fma._AXPY:
        pytest.skip(f"numpy's BLAS has no {np.dtype(dtype)} axpy that fuses every element here (fma._fuses)")


@pytest.mark.parametrize("shapes", [((6, 300), (6, 300)), ((6, 300), (300,)), ((1, 300), (8, 1))])
def test_add_scaled_rounds_once_as_exact_arithmetic_in_double(shapes):
    _needs_fused_axpy(np.float64)
    from fractions import Fraction

    a, b = _rand(shapes[0], 8, np.float64), _rand(shapes[1], 9, np.float64) * 1e-3
    alpha = -0.37
    got = fma.add_scaled(a, b, alpha, a.dtype)
    x, y = np.broadcast_arrays(a, b)
    exact = [float(Fraction(float(p)) + Fraction(alpha) * Fraction(float(q))) for p, q in zip(x.flat, y.flat)]
    assert got.shape == x.shape and got.flags.c_contiguous
    assert got.ravel().tolist() == exact  # float(Fraction) rounds correctly: one rounding
    assert not np.array_equal(got, a + alpha * b)  # the data has ties where two roundings differ


@pytest.mark.parametrize("shapes", [((6, 300), (6, 300)), ((6, 300), (300,)), ((300, 6), (6,))])
def test_float32_fma_of_blas_equals_the_numpy_round_to_odd_fma(shapes):
    _needs_fused_axpy(np.float32)
    a, b = _rand(shapes[0], 10), _rand(shapes[1], 11)
    assert fma.add_scaled(a, b, 0.3, a.dtype).tobytes() == fma.fma32(b, np.float32(0.3), a).tobytes()
    assert not np.array_equal(fma.fma32(b, np.float32(0.3), a), a + b * np.float32(0.3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_without_a_fusing_blas_alpha_rounds_the_product_first_in_every_path(monkeypatch, dtype):
    p, g = _rand((7, 301), 12, dtype), _rand((7, 301), 13, dtype)
    monkeypatch.setattr(fma, "_AXPY", {})
    with dc.no_grad():
        inplace = dc.tensor(p.copy()).add_(dc.tensor(g), alpha=-0.01)
        functional = dc.add(dc.tensor(p), dc.tensor(g), alpha=-0.01)
    assert inplace._data.tobytes() == functional._data.tobytes() == (p + g * dtype(-0.01)).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_load_check_refuses_a_blas_that_rounds_twice_and_keeps_one_that_fuses(dtype):
    import ctypes

    def rounds_twice(n, alpha, px, incx, py, incy):
        x = np.frombuffer((ctypes.c_char * (n * np.dtype(dtype).itemsize)).from_address(px), dtype)
        y = np.frombuffer((ctypes.c_char * (n * np.dtype(dtype).itemsize)).from_address(py), dtype)
        y += x * dtype(alpha)

    assert not fma._fuses(rounds_twice, np.dtype(dtype))
    if np.dtype(dtype) in fma._AXPY:
        assert fma._fuses(fma._AXPY[np.dtype(dtype)], np.dtype(dtype))


# 1e-46 and +-2**-150 (a tie, to even) are 0 in float32: BLAS would skip the sum
@pytest.mark.parametrize("alpha", [0.0, -0.0, 1e-46, 2.0 ** -150, -(2.0 ** -150)])
def test_an_alpha_that_is_zero_in_the_dtype_still_adds_nan_times_zero(alpha):
    p, g = np.array([1.0, -0.0, 2.0], np.float32), np.array([np.nan, 1.0, np.inf], np.float32)
    with dc.no_grad():
        inplace = dc.tensor(p.copy()).add_(dc.tensor(g), alpha=alpha)
    with np.errstate(invalid="ignore"):
        expected = p + g * np.float32(alpha)
    assert inplace._data.tobytes() == expected.tobytes() and np.isnan(inplace._data[[0, 2]]).all()
    assert not fma.axpy(alpha, g, p.copy())


@pytest.mark.parametrize("alpha", [2.0 ** -149, -(2.0 ** -149), float(np.nextafter(2.0 ** -150, 1.0)), 1e-45])
def test_the_least_alpha_that_is_not_zero_in_float32_takes_blas(alpha):
    if np.dtype(np.float32) not in fma._AXPY:
        pytest.skip("numpy's BLAS has no float32 axpy that fuses every element here (fma._fuses)")
    assert np.float32(alpha) != 0
    p, g = np.array([1.0, 2.0 ** 100], np.float32), np.array([3.0, 2.0 ** 100], np.float32)
    expected = fma.fma32(g, np.float32(alpha), p)
    assert fma.axpy(alpha, g, p) and p.tobytes() == expected.tobytes()


def test_axpy_in_place_on_self_and_on_a_transposed_twin():
    base = _rand((40, 50), 14)
    same, general = dc.tensor(base.copy()), dc.tensor(base.copy())
    with dc.no_grad():
        same.add_(same, alpha=0.5)  # one array: each element reads itself before it is written
    K._binary("add", np.add, general, dc.tensor(base.copy()), 0.5, general)
    _same(same, general)
    t = dc.tensor(base.copy())
    with dc.no_grad():
        t.t().add_(dc.tensor(np.ascontiguousarray(base.T)), alpha=2.0)  # not contiguous: the general path
    assert t._data.tobytes() == fma.fma32(base, np.float32(2.0), base).tobytes()


# --- addmm as the transposed product -------------------------------------------------------------------
@pytest.mark.parametrize("bias_shape", ["row", "full"])
@pytest.mark.parametrize("mkn", [(64, 784, 256), (64, 256, 128), (8, 784, 256), (32, 64, 128), (1, 300, 300)])
def test_addmm_transposed_product_equals_the_general_path(mkn, bias_shape):
    m, k, n = mkn
    assert m <= 64 and n >= 2 * m and m * n * k >= NN._TRANSPOSED_MIN  # the transposed path's condition
    b = dc.tensor(_rand((n,) if bias_shape == "row" else (m, n), 6))
    x, w = dc.tensor(_rand((m, k), 7)), dc.tensor(_rand((n, k), 8))
    fast = aten.addmm.default(b, x, w.t())
    general = aten.addmm.default(b, x, w.t(), beta=1.0, alpha=1.0)  # floats: the general path
    # the same tensor: dtype, shape and strides exactly; the values as close as two BLAS calls
    # can be (each sum in one order: bit-identical on OpenBLAS here, but a BLAS may block the
    # two orientations differently)
    assert fast._data.dtype == general._data.dtype and fast.shape == general.shape
    assert fast.stride() == general.stride()
    np.testing.assert_allclose(fast._data, general._data, rtol=1e-5, atol=1e-4)  # sums of 784 float32 terms
    assert fast._data.flags.c_contiguous and fast._data.base is None


@pytest.mark.parametrize("bias_shape", ["row", "full"])
@pytest.mark.parametrize("mkn", [(64, 784, 256), (64, 256, 128), (8, 784, 256), (1, 300, 300)])
def test_addmm_transposed_back_by_blas_equals_numpys_transposing_add_bit_for_bit(mkn, bias_shape, monkeypatch):
    if np.dtype(np.float32) not in blas._OMATCOPY:
        pytest.skip("numpy's BLAS has no float32 omatcopy that transposes exactly here (blas._transposes)")
    m, k, n = mkn
    b = dc.tensor(_rand((n,) if bias_shape == "row" else (m, n), 6))
    x, w = dc.tensor(_rand((m, k), 7)), dc.tensor(_rand((n, k), 8))
    taken = []
    real = blas.transpose_into
    monkeypatch.setattr(blas, "transpose_into", lambda a, out: taken.append(a.shape) or real(a, out))
    with_blas = aten.addmm.default(b, x, w.t())
    assert taken == [(n, m)]  # the product, transposed back by BLAS
    monkeypatch.setattr(blas, "_OMATCOPY", {})
    with_numpy = aten.addmm.default(b, x, w.t())
    _same(with_blas, with_numpy)
    assert with_blas._data.base is None and with_numpy._data.base is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (64, 256), (256, 64), (33, 70)])
def test_blas_transpose_equals_numpys_transpose_bit_for_bit(shape, dtype):
    if np.dtype(dtype) not in blas._OMATCOPY:
        pytest.skip(f"numpy's BLAS has no {np.dtype(dtype)} omatcopy that transposes exactly here")
    a = _rand(shape, 12, dtype)
    a.flat[::3] = -0.0
    bits = a.view(np.uint32 if dtype == np.float32 else np.uint64)
    bits.flat[1::5] = 0xFFC0_0123 if dtype == np.float32 else 0xFFF8_0000_0000_0123  # negative quiet NaNs
    out = np.full(shape[::-1], 7, dtype)
    assert blas.transpose_into(a, out)
    assert out.tobytes() == np.ascontiguousarray(a.T).tobytes()


def test_blas_transpose_refuses_what_it_cannot_write_or_read_and_leaves_out_untouched():
    a, out = _rand((3, 4), 13), np.zeros((4, 3), np.float32)
    a.flags.writeable = False  # ctypes cannot take a read-only buffer: the caller's numpy path runs
    assert not blas.transpose_into(a, out) and not out.any()
    assert not blas.transpose_into(np.empty((0, 4), np.float32), np.empty((4, 0), np.float32))
    assert not blas.transpose_into(np.ones((2, 2), np.int64), np.zeros((2, 2), np.int64))  # no integer routine
    b = _rand((3, 4), 14)
    for wrong in (np.zeros((4, 3), np.float64), np.zeros((2, 6), np.float32), np.zeros((4, 2), np.float32),
                  np.zeros((4, 6), np.float32)[:, ::2]):  # dtype, shape, size, layout
        assert not blas.transpose_into(b, wrong) and not wrong.any()


def test_blas_transpose_keeps_a_signaling_nans_payload_quiet_or_not_as_its_docstring_says():
    if np.dtype(np.float32) not in blas._OMATCOPY:
        pytest.skip("numpy's BLAS has no float32 omatcopy here")
    a = np.zeros((2, 3), np.float32)
    a.view(np.uint32)[1, 2] = 0x7F80_0001  # signaling
    out = np.empty((3, 2), np.float32)
    assert blas.transpose_into(a, out)
    assert out.view(np.uint32)[2, 1] | 0x0040_0000 == 0x7FC0_0001  # the payload, the quiet bit maybe set


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_load_check_refuses_a_routine_that_does_not_transpose(dtype):
    def copies_without_transposing(order, trans, rows, cols, alpha, src, lda, dst, ldb):
        import ctypes
        ctypes.memmove(dst, src, rows * cols * np.dtype(dtype).itemsize)

    assert not blas._transposes(copies_without_transposing, np.dtype(dtype))
    if np.dtype(dtype) in blas._OMATCOPY:
        assert blas._transposes(blas._OMATCOPY[np.dtype(dtype)], np.dtype(dtype))


@pytest.mark.parametrize("mkn", [(64, 128, 10), (100, 20, 300), (8, 33, 17), (1, 5, 2)])
def test_addmm_outside_the_transposed_condition_equals_the_general_path(mkn):
    m, k, n = mkn
    b, x, w = dc.tensor(_rand((n,), 9)), dc.tensor(_rand((m, k), 10)), dc.tensor(_rand((n, k), 11))
    _same(aten.addmm.default(b, x, w.t()), aten.addmm.default(b, x, w.t(), beta=1.0, alpha=1.0))


def test_linear_records_the_same_trace_and_graph_with_a_small_batch():
    dc.manual_seed(0)
    layer = dc.nn.Linear(40, 30)
    x = dc.randn(3, 40, requires_grad=True)
    with dc.LoggingMode() as log:
        y = layer(x)
    assert log.ops == ["aten.t.default", "aten.addmm.default"]
    assert type(y.grad_fn).__name__ == "AddmmBackward0" and y.stride() == (30, 1)


# --- threshold_backward as a bit mask ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", [0, 0.5])
def test_threshold_backward_bit_mask_equals_np_where(dtype, threshold):
    shape = (64, 128)  # 8192 elements: over the bit mask's size threshold
    g, x = _rand(shape, 12, dtype), _rand(shape, 13, dtype)
    x[0, :4] = [0.0, -0.0, np.nan, threshold]
    g[1, :5] = [np.nan, -0.0, np.inf, -np.inf, 0.0]
    x[1, :5] = 1.0
    g[2, :3] = [np.nan, -np.inf, -0.0]
    x[2, :3] = -1.0
    r = aten.threshold_backward.default(dc.tensor(g), dc.tensor(x), threshold)
    expected = np.where(x <= dtype(threshold), dtype(0), g)
    assert r._data.dtype == dtype and r.stride() == (128, 1) and r._data.base is None
    assert r._data.tobytes() == expected.tobytes()  # NaN payloads, -0.0 and +0.0 included


def test_threshold_backward_bit_mask_equals_the_general_path_on_a_strided_twin():
    g, x = _rand((100, 50), 14), np.maximum(_rand((100, 50), 15), 0)
    fast = aten.threshold_backward.default(dc.tensor(g), dc.tensor(x), 0)
    slow = aten.threshold_backward.default(dc.tensor(np.ascontiguousarray(g.T)).t(),
                                           dc.tensor(np.ascontiguousarray(x.T)).t(), 0)
    _same(fast, slow.contiguous())


# --- Module.__getattr__ ----------------------------------------------------------------------------------
def test_module_getattr_finds_parameters_buffers_and_modules_and_raises_unchained():
    m = dc.nn.Sequential(dc.nn.Linear(2, 2), dc.nn.BatchNorm1d(2))
    assert m[0].weight is m[0]._parameters["weight"] and m[0].bias is m[0]._parameters["bias"]
    assert m[1].running_mean is m[1]._buffers["running_mean"]
    assert getattr(m, "0") is m._modules["0"]
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'") as info:
        m[0].nope  # noqa: B018
    assert info.value.__context__ is None


# --- the whole step ------------------------------------------------------------------------------------
def _g24(lib, log_mode):
    """Two G24 steps on ``lib`` (dispatchcore or torch); the second one's losses and dispatched ops."""
    lib.manual_seed(0)
    nn = lib.nn
    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = lib.optim.SGD(mlp.parameters(), lr=0.01)
    xb, yb = lib.randn(64, 784), lib.randint(0, 10, (64,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(mlp(xb), yb)
        loss.backward()
        opt.step()
        return loss

    first = step().item()
    with log_mode() as log:
        second = step()
    return first, second.item(), log.ops, mlp


def test_the_g24_step_learns_and_dispatches_one_add_per_parameter():
    first, second, ops, mlp = _g24(dc, dc.LoggingMode)
    assert second < first
    assert ops.count("aten.addmm.default") == 3 and ops.count("aten.threshold_backward.default") == 2
    assert ops[-6:] == ["aten.add_.Tensor"] * 6  # SGD: one add_ per parameter, after the backward
    assert all(p.grad is not None and p.grad.is_contiguous() for p in mlp.parameters())


def test_the_g24_step_dispatches_what_torch_dispatches():
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    class DcLog(dc.DispatchMode):  # names only: dc.LoggingMode keeps the tensors, so no grad is stolen
        def __init__(self):
            self.ops = []

        def __dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    torch.set_num_threads(1)
    expected = [op for op in _g24(torch, Log)[2] if not op.startswith("profiler.")]
    assert _g24(dc, DcLog)[2] == expected


# --- relu: the zero first, paired with a zeros view on large inputs (Note [Zeros first]) -----------------
def _specials(n, dtype):
    a = _rand(n, n, dtype)
    a[:: max(n // 7, 1)] = -0.0
    a[1 :: max(n // 5, 1)] = np.nan
    a[2] = -np.inf
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [5, K._ZEROS_MIN - 1, K._ZEROS_MIN, 3 * K._ZEROS_MIN + 5])
def test_relu_zeros_view_path_equals_the_zero_d_path_and_keeps_negative_zero(n, dtype):
    a = _specials(n, dtype)
    # the general path's arithmetic; half computes in float, as torch's kernel does
    general = np.maximum(K._ZERO[np.dtype(np.float32)], a.astype(np.float32)).astype(a.dtype) \
        if dtype is np.float16 else np.maximum(K._ZERO[a.dtype], a)
    for got in (K._relu(a), K._relu_into(a, None), aten.relu.default(dc.tensor(a))._data,
                aten.relu_.default(dc.tensor(a.copy()))._data):
        assert got.dtype == a.dtype and got.tobytes() == general.tobytes()
    assert np.signbit(K._relu(a)[a == 0]).sum() == np.signbit(a[a == 0]).sum()  # -0.0 stays -0.0


def test_relu_zeros_buffer_is_read_only_shared_and_grows(monkeypatch):
    monkeypatch.setattr(K, "_zeros_flat", {})  # a fresh cache: the buffer made here, then grown
    big = K._relu(_rand((3, K._ZEROS_MIN), 1))
    flat = K._zeros_flat[np.dtype(np.float32)]
    assert big.flags.c_contiguous and big.flags.writeable and not np.shares_memory(big, flat)
    assert not flat.flags.writeable and not flat.any() and flat.size == 3 * K._ZEROS_MIN
    K._relu(_rand((2, K._ZEROS_MIN), 2))
    assert K._zeros_flat[np.dtype(np.float32)] is flat  # a smaller input reuses the buffer
    K._relu(_rand((5, K._ZEROS_MIN), 3))
    grown = K._zeros_flat[np.dtype(np.float32)]
    assert grown.size == 5 * K._ZEROS_MIN and not grown.any() and not grown.flags.writeable


def test_relu_of_a_strided_large_input_takes_the_zero_d_path_with_the_same_result():
    a = _specials(4 * K._ZEROS_MIN, np.float32).reshape(64, -1)
    t = dc.tensor(a).t()
    assert aten.relu.default(t)._data.tobytes() == np.maximum(K._ZERO[a.dtype], a.T).tobytes()
    assert aten.relu.default(t).stride() == t.stride()  # torch keeps the input's layout


# --- log_softmax of a classifier's logits -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 10), (33, 1), (100, 32), (500, 7), (32, 10), (64, 33), (8, 3, 5)])
def test_log_softmax_row_maximum_of_the_transposed_copy_equals_the_per_row_reduce(shape, dtype):
    rng = np.random.default_rng(14)
    a = rng.choice(np.array([0.0, -0.0, 1.5, -2.0, np.nan, 3.25, -0.5], dtype), size=shape)
    a += rng.standard_normal(shape).astype(dtype) * (rng.random(shape) < 0.5)
    d = a.ndim - 1
    with np.errstate(all="ignore"):  # the reference: the per-row reduce, then the same arithmetic
        shifted = a - np.maximum.reduce(a, d, keepdims=True)
        expected = shifted - np.log(np.add.reduce(np.exp(shifted), d, keepdims=True))
    got = K._log_softmax_fast(a, d)
    assert got is not None and got.tobytes() == expected.tobytes()
