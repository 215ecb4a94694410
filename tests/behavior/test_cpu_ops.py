"""The CPU backend's kernels through the dispatcher, against numpy references.

One test per operator family, parametrized over broadcasting, type promotion (torch's rules:
dimensioned tensors outrank 0-d tensors, which outrank Python scalars), float16, bool,
non-contiguous inputs (transposed/sliced ndarrays wrapped directly) and zero-size inputs.
Factories have no tensor argument, so they are reached by redispatching to CPU (BackendSelect's job).
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import dtypes
from dispatchcore.tensor import wrap_cpu


def _load_cpu_backend():
    try:
        return importlib.import_module("dispatchcore_backends.cpu")
    except ModuleNotFoundError:  # not installed: load the source tree under its package name
        root = pathlib.Path(__file__).resolve().parents[2] / "backends"
        spec = importlib.util.spec_from_file_location("dispatchcore_backends", root / "__init__.py",
                                                      submodule_search_locations=[str(root)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["dispatchcore_backends"] = package
        spec.loader.exec_module(package)
        return importlib.import_module("dispatchcore_backends.cpu")


cpu = _load_cpu_backend()
A = dc.ops.aten
CPU = dc.DispatchKeySet("CPU")
W = wrap_cpu


@pytest.fixture(scope="module", autouse=True)
def cpu_library():
    existing = cpu.registered()  # e.g. loaded by dispatchcore.load_backends(): leave it alone
    lib = cpu.register()
    yield lib
    if existing is None:
        lib._destroy()


def factory(op, *args, **kwargs):
    return op.redispatch(CPU, *args, **kwargs)


def rnd(shape, dtype="float32", seed=0, low=-3, high=3):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else low, high + 1, shape).astype(dt)
    return rng.uniform(low, high, shape).astype(dt)


def tr(shape, dtype="float32", seed=0):
    return rnd(shape[::-1], dtype, seed).T


def sl(shape, dtype="float32", seed=0):
    return rnd((shape[0] + 1, shape[1] * 2), dtype, seed)[1:, ::2]


def assert_tensor(t, expected, dtype=None, rtol=None):
    """``t`` holds an ndarray (never a numpy scalar) equal to ``expected``, of ``expected``'s dtype."""
    assert type(t._data) is np.ndarray
    expected = np.asarray(expected)
    dt = np.dtype(dtype) if dtype is not None else expected.dtype
    assert t._data.dtype == dt
    assert t.shape == expected.shape
    if rtol is None:
        rtol = {"float16": 1e-3, "float32": 1e-5}.get(dt.name, 1e-12 if dt.kind == "f" else 0)
    np.testing.assert_allclose(t._data, expected.astype(dt), rtol=rtol, atol=rtol, equal_nan=True)


# --- registration ---------------------------------------------------------------------------------
def test_every_cpu_kernel_is_reachable_at_the_cpu_key(cpu_library):
    for name, _ in cpu.all_kernels():  # which operators get one: tests/unit/test_registrations.py
        assert dc.find_op(f"aten::{name}").has_kernel_for_dispatch_key("CPU"), name


def test_register_twice_returns_the_live_library(cpu_library):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cpu.register() is cpu_library
    assert cpu.registered() is cpu_library


def test_kernels_are_named_after_their_overload():
    for name, kernel in cpu.KERNELS:
        assert kernel.__name__ == name.replace(".", "_").lower() + "_cpu"


# --- elementwise binary ---------------------------------------------------------------------------
NP_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}
# (id, x, y, torch's result dtype; None: the op decides: div of integers gives float32)
BINARY_CASES = [
    ("f32", rnd((3, 4)), rnd((3, 4), seed=1), "float32"),
    ("broadcast", rnd((3, 1)), rnd((1, 4), seed=1), "float32"),
    ("broadcast-rank", rnd((2, 3, 4)), rnd((4,), seed=1), "float32"),
    ("i64+f32", rnd((3,), "int64"), rnd((3,), seed=1), "float32"),
    ("i32+i64", rnd((3,), "int32"), rnd((3,), "int64", seed=1), "int64"),
    ("u8+i8", rnd((4,), "uint8"), rnd((4,), "int8", seed=1), "int16"),
    ("f16+f16", rnd((5,), "float16"), rnd((5,), "float16", seed=1), "float16"),
    ("f16+f32", rnd((5,), "float16"), rnd((5,), seed=1), "float32"),
    ("f32+0d-f64", rnd((3,)), np.array(2.5), "float32"),
    ("i64+0d-f64", rnd((3,), "int64"), np.array(2.5), "float64"),
    ("i8+0d-f16", rnd((3,), "int8"), np.array(2.5, np.float16), "float16"),
    ("i32+0d-i64", rnd((3,), "int32"), np.array(7), "int32"),
    ("0d+0d", np.array(3, np.int32), np.array(2.5), "float64"),
    ("transposed", tr((3, 4)), tr((3, 4), seed=1), "float32"),
    ("sliced", sl((3, 4)), rnd((3, 4), seed=1), "float32"),
    ("empty", rnd((0, 3)), rnd((3,), seed=1), "float32"),
]


@pytest.mark.parametrize("case", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_tensor(op, case):
    _, x, y, dt = case
    if op == "div" and np.dtype(dt).kind in "iu":
        dt = "float32"  # true division: integers divide in the default float dtype
    with np.errstate(all="ignore"):
        expected = NP_BINARY[op](x.astype(dt), y.astype(dt))
    assert_tensor(getattr(A, op).Tensor(W(x), W(y)), expected, dt)


@pytest.mark.parametrize("case", [
    ("float32", 2.5, "float32"), ("float32", 3, "float32"), ("float16", 2.5, "float16"),
    ("int64", 2.5, "float32"), ("int64", 3, "int64"), ("int32", 3, "int32"), ("uint8", 300, "uint8"),
    ("uint8", -1, "uint8"), ("bool", 2, "int64"), ("bool", True, "bool"), ("bool", 2.5, "float32"),
    ("int8", True, "int8"),
], ids=str)
@pytest.mark.parametrize("op", ["add", "mul"])
def test_binary_scalar_promotion(op, case):
    dtype, scalar, expected_dtype = case
    x = rnd((2, 3), dtype)
    s = np.array(scalar).astype(np.int64).astype(expected_dtype) if isinstance(scalar, int) else scalar
    expected = NP_BINARY[op](x.astype(expected_dtype), np.array(s).astype(expected_dtype))
    assert_tensor(getattr(A, op).Scalar(W(x), scalar), expected, expected_dtype)


def test_int_tensor_plus_float_scalar_is_default_float():
    assert A.add.Scalar(W(np.array([1, 2])), 0.5).dtype is dtypes.float32
    assert A.div.Tensor(W(np.array([1, 2])), W(np.array([2, 4]))).dtype is dtypes.float32


def test_default_dtype_drives_integer_division_and_scalar_promotion():
    dtypes.set_default_dtype(dtypes.float64)
    try:
        assert A.div.Tensor(W(np.array([1])), W(np.array([2]))).dtype is dtypes.float64
        assert A.add.Scalar(W(np.array([1])), 0.5).dtype is dtypes.float64
        assert A.exp.default(W(np.array([1]))).dtype is dtypes.float64
    finally:
        dtypes.set_default_dtype(dtypes.float32)


@pytest.mark.parametrize("alpha", [2, -1])
def test_add_sub_alpha(alpha):
    x, y = rnd((4,)), rnd((4,), seed=1)
    assert_tensor(A.add.Tensor(W(x), W(y), alpha=alpha), x + alpha * y)
    assert_tensor(A.sub.Tensor(W(x), W(y), alpha=alpha), x - alpha * y)
    assert_tensor(A.sub.Scalar(W(x), 2, alpha), x - alpha * 2)


@pytest.mark.parametrize("alpha, message", [
    (0.5, "For integral input tensors, argument alpha must not be a floating point number."),
    (True, "Boolean alpha only supported for Boolean results."),
])
def test_alpha_errors(alpha, message):
    with pytest.raises(RuntimeError, match=message):
        A.add.Tensor(W(np.array([1])), W(np.array([1])), alpha=alpha)


def test_sub_of_bool_tensors_raises_torch_error():
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
        A.sub.Tensor(W(np.array([True])), W(np.array([False])))
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        A.sub.Scalar(W(np.array([True])), 1)


def test_broadcast_error_text():
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 0$"):
        A.add.Tensor(W(rnd((3,))), W(rnd((4,))))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_inplace_writes_self_and_returns_it(op):
    x, y = tr((3, 4)), rnd((4,), seed=1)
    expected = NP_BINARY[op](x, y)
    t = W(x)
    assert getattr(A, op + "_").Tensor(t, W(y)) is t
    assert t._data is x
    np.testing.assert_allclose(x, expected, rtol=1e-6)
    assert getattr(A, op + "_").Scalar(t, 2) is t


def test_inplace_casts_the_result_into_self():
    x = np.array([1, 2], np.int32)
    A.add_.Tensor(W(x), W(np.array([2**32 + 1, 3])))  # computed in int64, wrapped into int32
    np.testing.assert_array_equal(x, [2, 5])


def test_inplace_cast_and_shape_errors():
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        A.add_.Tensor(W(np.array([1])), W(np.array([1.5], np.float32)))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        A.div_.Tensor(W(np.array([1])), W(np.array([2])))
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        A.mul_.Tensor(W(rnd((3,))), W(rnd((2, 3))))


def test_out_writes_and_returns_out():
    out = W(np.zeros(3, np.float16))
    x, y = rnd((3,), "float64"), rnd((3,), "float64", 1)
    assert A.add.out(W(x), W(y), out=out) is out
    assert_tensor(out, (x + y).astype(np.float16))


def test_out_resizes_empty_silently_and_warns_otherwise():
    out = W(np.zeros(0, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A.mul.out(W(rnd((2, 3))), W(rnd((2, 3))), out=out)
    assert out.shape == (2, 3)
    out = W(np.zeros(2, np.float32))
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape "
                                         r"\[2\], which does not match the required output shape \[3\]"):
        A.sub.out(W(rnd((3,))), W(rnd((3,))), out=out)
    assert out.shape == (3,)


def test_out_cast_error():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        A.add.out(W(rnd((3,))), W(rnd((3,))), out=W(np.zeros(3, np.int64)))


@pytest.mark.parametrize("case", [
    ("tt-f32", lambda: A.pow.Tensor_Tensor(W(np.array([2.0, 3.0], np.float32)), W(np.array([3.0, 0.5], np.float32))),
     np.array([8.0, 3**0.5], np.float32)),
    ("tt-int-negative", lambda: A.pow.Tensor_Tensor(W(np.array([1, 2, -1, -1, 0])), W(np.array([-1, -1, -1, -2, -2]))),
     np.array([1, 0, -1, 1, 0])),
    ("ts-int-float", lambda: A.pow.Tensor_Scalar(W(np.array([4, 9])), 0.5), np.array([2.0, 3.0], np.float32)),
    ("ts-bool", lambda: A.pow.Tensor_Scalar(W(np.array([True, False])), 2), np.array([1, 0])),
    ("s-int", lambda: A.pow.Scalar(2, W(np.array([-1, 0, 3]))), np.array([0, 1, 8])),
    ("s-float", lambda: A.pow.Scalar(2.5, W(np.array([1, 2]))), np.array([2.5, 6.25], np.float32)),
    ("0d-exponent", lambda: A.pow.Tensor_Tensor(W(np.array([1.0, 2.0], np.float32)), W(np.array(2.0))),
     np.array([1.0, 4.0], np.float32)),
], ids=lambda c: c[0] if isinstance(c, tuple) else "")
def test_pow(case):
    _, call, expected = case
    assert_tensor(call(), expected)


def test_pow_errors_and_inplace():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        A.pow.Tensor_Scalar(W(np.array([1, 2])), -1)
    with pytest.raises(NotImplementedError, match="\"pow\" not implemented for 'Bool'"):
        A.pow.Tensor_Tensor(W(np.array([True])), W(np.array([True])))
    t = W(np.array([2.0, 3.0]))
    assert A.pow_.Scalar(t, 2) is t and A.pow_.Tensor(t, W(np.array([1, 2]))) is t
    np.testing.assert_array_equal(t._data, [4.0, 81.0])


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons(op):
    ref = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}[op]
    x, y = rnd((3, 1), "int32"), rnd((1, 4), "int32", 1)
    assert_tensor(getattr(A, op).Tensor(W(x), W(y)), ref(x, y))
    xf = tr((3, 4))
    assert_tensor(getattr(A, op).Tensor(W(xf), W(np.array(0.5))), ref(xf, np.float32(0.5)))
    assert_tensor(getattr(A, op).Scalar(W(xf), 1), ref(xf, 1))
    i = np.array([1, 2, 3])
    assert_tensor(getattr(A, op).Scalar(W(i), 1.5), ref(i.astype(np.float32), np.float32(1.5)))
    u = np.array([1, 255], np.uint8)  # -1 converts to the promoted dtype uint8: 255
    assert_tensor(getattr(A, op).Scalar(W(u), -1), ref(u, np.uint8(255)))
    assert_tensor(getattr(A, op).Tensor(W(rnd((0,))), W(rnd((0,)))), np.zeros(0, bool))


# --- elementwise unary ----------------------------------------------------------------------------
NP_UNARY = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin,
            "cos": np.cos, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x.astype(np.float64))),
            "relu": lambda x: np.maximum(x, np.zeros((), x.dtype))}  # NaN propagates, as in torch
FLOAT_OPS = {"exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid"}
UNARY_INPUTS = [
    ("f32", rnd((3, 4))), ("f64", rnd((3, 4), "float64")), ("f16", rnd((3, 4), "float16")),
    ("special", np.array([0.0, -1.0, 0.5, np.inf, -np.inf, np.nan], np.float32)),
    ("i64", rnd((5,), "int64")), ("u8", rnd((5,), "uint8", high=200)),
    ("transposed", tr((3, 4))), ("sliced", sl((3, 4))), ("0d", np.array(0.7, np.float32)), ("empty", rnd((0, 2))),
]


@pytest.mark.parametrize("case", UNARY_INPUTS, ids=[c[0] for c in UNARY_INPUTS])
@pytest.mark.parametrize("op", list(NP_UNARY))
def test_unary(op, case):
    x = case[1]
    dt = x.dtype if x.dtype.kind == "f" or op not in FLOAT_OPS else np.dtype(np.float32)
    with np.errstate(all="ignore"):
        expected = NP_UNARY[op](x.astype(dt)).astype(dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch computes inf and nan silently
        assert_tensor(getattr(A, op).default(W(x)), expected, dt)


@pytest.mark.parametrize("op, error, message", [
    ("neg", RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported."),
    ("abs", NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    ("relu", RuntimeError, "Boolean inputs not supported for relu"),
])
def test_unary_bool_errors(op, error, message):
    with pytest.raises(error, match=message):
        getattr(A, op).default(W(np.array([True])))


@pytest.mark.parametrize("op", list(NP_UNARY))
def test_unary_inplace(op):
    x = tr((3, 4))
    with np.errstate(all="ignore"):
        expected = NP_UNARY[op](x.copy()).astype(np.float32)
    t = W(x)
    assert getattr(A, op + "_").default(t) is t
    np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-6, equal_nan=True)
    if op in FLOAT_OPS:
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            getattr(A, op + "_").default(W(np.array([1, 2])))


@pytest.mark.parametrize("op", [op for op in NP_UNARY if op != "relu"])
def test_unary_out(op):
    x = np.array([1, 2, 3])
    out = W(np.zeros(3, np.float64))
    if op in FLOAT_OPS:  # computed in float32 (the default dtype), then cast into out
        assert getattr(A, op).out(W(x), out=out) is out
        assert_tensor(out, NP_UNARY[op](x.astype(np.float32)).astype(np.float32).astype(np.float64), rtol=1e-6)
    else:
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Long"):
            getattr(A, op).out(W(x), out=out)
        out = W(np.zeros(3, np.int64))
        assert getattr(A, op).out(W(x), out=out) is out
        assert_tensor(out, NP_UNARY[op](x))


def test_sigmoid_extremes_are_exact_and_quiet():
    x = np.array([-200.0, -100.0, 0.0, 100.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = A.sigmoid.default(W(x))._data
    np.testing.assert_array_equal(r, [0.0, 0.0, 0.5, 1.0])  # float32 underflows to 0, as in torch


# --- clamp, where ---------------------------------------------------------------------------------
def test_clamp():
    x = tr((3, 4))
    assert_tensor(A.clamp.default(W(x), -1, 1.5), np.clip(x, -1, 1.5))
    assert_tensor(A.clamp.default(W(x), None, 0.5), np.minimum(x, np.float32(0.5)))
    assert_tensor(A.clamp.default(W(np.array([1, 5])), 0.5), np.array([1.0, 5.0], np.float32))
    assert_tensor(A.clamp.default(W(np.array([1.0, 5.0])), 4, 2), np.array([2.0, 2.0]))  # min > max: max
    assert_tensor(A.clamp.default(W(np.array([np.nan, 1.0])), 0, 3), np.array([np.nan, 1.0]))
    assert_tensor(A.clamp.default(W(np.array([5], np.uint8)), -1), np.array([255], np.uint8))
    assert_tensor(A.clamp_min.default(W(x), 0), np.maximum(x, 0))
    assert_tensor(A.clamp.default(W(rnd((0,))), -1, 1), np.zeros(0, np.float32))
    t = W(x)
    assert A.clamp_.default(t, -1, 1) is t and A.clamp_min_.default(t, 0) is t
    assert x.min() >= 0 and x.max() <= 1


def test_clamp_errors():
    with pytest.raises(RuntimeError, match="torch.clamp: At least one of 'min' or 'max' must not be None"):
        A.clamp.default(W(rnd((3,))))
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Half without overflow"):
        A.clamp.default(W(rnd((3,), "float16")), 1e6)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type long int"):
        A.clamp_.default(W(np.array([1, 2])), 0.5)
    with pytest.raises(NotImplementedError, match="\"clamp_min_scalar_cpu\" not implemented for 'Bool'"):
        A.clamp_min.default(W(np.array([True])), False)


def test_where():
    c, x, y = rnd((3, 1), "bool"), tr((3, 4)), np.array(2.5)
    assert_tensor(A.where.self(W(c), W(x), W(y)), np.where(c, x, np.float32(2.5)))
    assert_tensor(A.where.self(W(np.array([True, False])), W(np.array([1, 2])), W(np.array([1.5, 2.5], np.float32))),
                  np.array([1.0, 2.5], np.float32))
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor "
                                           "with dtype Long"):
        A.where.self(W(np.array([1])), W(rnd((1,))), W(rnd((1,))))
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        A.where.self(W(np.array([1, 0], np.uint8)), W(rnd((2,))), W(rnd((2,))))
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\)"):
        A.where.self(W(np.array([True, False])), W(rnd((3,))), W(rnd((2,))))


# --- reductions -----------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [rnd((3, 4)), tr((3, 4), "float64"), rnd((3, 4), "float16"), rnd((3, 4), "int32"),
                               rnd((3, 4), "bool"), np.array(1.5, np.float32), rnd((0, 3))],
                         ids=["f32", "f64-transposed", "f16", "i32", "bool", "0d", "empty"])
def test_sum_and_mean(x):
    dt = np.int64 if x.dtype.kind in "biu" else x.dtype
    acc = np.float32 if x.dtype == np.float16 else dt
    assert_tensor(A.sum.default(W(x)), x.sum(dtype=acc).astype(dt))
    assert_tensor(A.sum.default(W(x), dtype=dtypes.float64), x.astype(np.float64).sum())
    if x.ndim:
        assert_tensor(A.sum.dim_IntList(W(x), [0]), x.sum(0, dtype=acc).astype(dt))
        assert_tensor(A.sum.dim_IntList(W(x), [-1], True), x.sum(-1, dtype=acc, keepdims=True).astype(dt))
        assert_tensor(A.sum.dim_IntList(W(x), [], True), x.sum(dtype=acc, keepdims=True).astype(dt))
    if x.dtype.kind == "f":
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the mean of nothing is nan, silently
            expected = np.float64(x.astype(acc).sum()) / x.size if x.size else np.nan
            assert_tensor(A.mean.default(W(x)), np.array(expected).astype(x.dtype))
        if x.ndim and x.size:
            assert_tensor(A.mean.dim(W(x), [0]), x.astype(acc).mean(0).astype(x.dtype))
    else:
        with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be "
                                               "either a floating point or complex dtype. Got: "):
            A.mean.default(W(x))


def test_sum_dim_errors():
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        A.sum.dim_IntList(W(rnd((2, 3))), [0, 0])
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but "
                                         r"got 2\)"):
        A.sum.dim_IntList(W(rnd((2, 3))), [2])


def test_amax_max_argmax():
    x = tr((3, 4))
    assert_tensor(A.amax.default(W(x)), x.max())
    assert_tensor(A.amax.default(W(x), [1], True), x.max(1, keepdims=True))
    assert_tensor(A.max.default(W(x)), x.max())
    values, indices = A.max.dim(W(x), 0)
    assert_tensor(values, x.max(0))
    assert_tensor(indices, x.argmax(0).astype(np.int64))
    assert_tensor(A.argmax.default(W(x)), np.array(x.argmax(), np.int64))
    assert_tensor(A.argmax.default(W(x), None, True), np.array(x.argmax(), np.int64).reshape(1, 1))
    assert_tensor(A.argmax.default(W(x), -1, True), x.argmax(-1, keepdims=True).astype(np.int64))
    nan = np.array([1.0, np.nan, 3.0])
    assert np.isnan(A.amax.default(W(nan)).item()) and A.max.dim(W(nan), 0)[1].item() == 1


def test_reduction_errors_on_empty():
    with pytest.raises(RuntimeError, match="amax\\(\\): Expected reduction dim to be specified for input.numel"):
        A.amax.default(W(rnd((0,))))
    with pytest.raises(IndexError, match="max\\(\\): Expected reduction dim 0 to have non-zero size."):
        A.max.dim(W(rnd((0, 3))), 0)
    with pytest.raises(IndexError, match="argmax\\(\\): Expected reduction dim to be specified"):
        A.argmax.default(W(rnd((0,))))
    with pytest.raises(RuntimeError, match="argmax\\(\\): does not support bool input"):
        A.argmax.default(W(np.array([True])))


# --- matrix products ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_mm_bmm(dtype):
    a, b = tr((2, 3), dtype), sl((3, 5), dtype, 1)
    acc = np.float32 if dtype == "float16" else dtype
    assert_tensor(A.mm.default(W(a), W(b)), (a.astype(acc) @ b.astype(acc)).astype(dtype), rtol=2e-3)
    a3, b3 = rnd((4, 2, 3), dtype), rnd((4, 3, 5), dtype, 1).transpose(0, 1, 2)
    assert_tensor(A.bmm.default(W(a3), W(b3)), (a3.astype(acc) @ b3.astype(acc)).astype(dtype), rtol=2e-3)
    assert_tensor(A.mm.default(W(rnd((2, 0), dtype)), W(rnd((0, 5), dtype))), np.zeros((2, 5), dtype))


def test_mm_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        A.mm.default(W(rnd((2, 3))), W(rnd((4, 5))))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        A.mm.default(W(rnd((2, 3))), W(rnd((3, 5), "float64")))
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        A.mm.default(W(rnd((3,))), W(rnd((3, 5))))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: "
                                           r"\[2, 3\] but got: \[2, 4\]."):
        A.bmm.default(W(rnd((2, 2, 3))), W(rnd((2, 4, 5))))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        A.bmm.default(W(rnd((2, 3))), W(rnd((2, 3, 5))))


# --- softmax and losses ---------------------------------------------------------------------------
def _np_softmax(x, d):
    e = np.exp(x - x.max(d, keepdims=True))
    return e / e.sum(d, keepdims=True)


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("x", [rnd((3, 4), high=50), tr((3, 4), "float64"), rnd((3, 4), "float16"),
                               np.array([[1000.0, 1001.0], [-1000.0, -1001.0]], np.float32)],
                         ids=["f32", "f64-transposed", "f16", "large"])
def test_softmax_and_log_softmax(x, dim):
    x64 = x.astype(np.float64)
    ref = _np_softmax(x64, dim)
    log_ref = x64 - x64.max(dim, keepdims=True)
    log_ref -= np.log(np.exp(log_ref).sum(dim, keepdims=True))
    assert_tensor(A._softmax.default(W(x), dim, False), ref.astype(x.dtype), rtol=2e-3)
    assert_tensor(A._log_softmax.default(W(x), dim, False), log_ref.astype(x.dtype), rtol=2e-3)


def test_softmax_edge_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(A._softmax.default(W(np.array([-np.inf, -np.inf], np.float32)), 0, False)._data).all()
    assert_tensor(A._softmax.default(W(np.array(0.3, np.float32)), 0, False), np.array(1.0, np.float32))
    assert_tensor(A._log_softmax.default(W(rnd((0, 3))), 0, False), np.zeros((0, 3), np.float32))
    with pytest.raises(RuntimeError, match="softmax with half to float conversion is not supported on CPU"):
        A._softmax.default(W(rnd((2,), "float16")), 0, True)
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        A._softmax.default(W(np.array([1, 2])), 0, False)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_mse_loss(reduction):
    x, y = tr((3, 4)), rnd((4,), seed=1)
    loss = (x - y) ** 2
    expected = [loss, loss.mean(), loss.sum()][reduction]
    assert_tensor(A.mse_loss.default(W(x), W(y), reduction), np.asarray(expected, np.float32))
    assert A.mse_loss.default(W(rnd((3,))), W(rnd((3,), "float64"))).dtype is dtypes.float64


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_forward(reduction, weighted):
    x, t = rnd((4, 5)), np.array([0, 3, 1, 4])
    w = np.arange(1.0, 6.0, dtype=np.float32) if weighted else np.ones(5, np.float32)
    ignore = 1  # the third sample is ignored
    keep = t != ignore
    picked = -x[np.arange(4), t] * w[t] * keep
    total = (w[t] * keep).sum()
    expected = [picked, picked.sum() / total, picked.sum()][reduction]
    out, total_weight = A.nll_loss_forward.default(W(x), W(t), W(w) if weighted else None, reduction, ignore)
    assert_tensor(out, np.asarray(expected, np.float32))
    assert_tensor(total_weight, np.asarray(0.0 if reduction == 0 else total, np.float32))


def test_nll_loss_forward_errors():
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        A.nll_loss_forward.default(W(rnd((2, 5))), W(np.array([0, 5])), None, 1, -100)
    with pytest.raises(RuntimeError, match=r"size mismatch \(got input: \[2, 5\], target: \[3\]\)"):
        A.nll_loss_forward.default(W(rnd((2, 5))), W(np.array([0, 1, 2])), None, 1, -100)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        A.nll_loss_forward.default(W(rnd((2, 5))), W(rnd((2,))), None, 1, -100)


# --- joining, copies, fills -----------------------------------------------------------------------
def test_cat_and_stack():
    a, b = tr((2, 3)), rnd((1, 3), "int32")
    assert_tensor(A.cat.default([W(a), W(b)]), np.concatenate([a, b.astype(np.float32)]))
    assert_tensor(A.cat.default([W(a), W(a)], -1), np.concatenate([a, a], 1))
    assert_tensor(A.cat.default([W(rnd((0,))), W(a)]), a)  # legacy: 1-d empty tensors are skipped
    assert_tensor(A.stack.default([W(a), W(sl((2, 3)))], 2), np.stack([a, sl((2, 3))], 2))
    assert_tensor(A.stack.default([W(np.array(1)), W(np.array(2.5))]), np.array([1.0, 2.5]))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0. Expected size 3 "
                                           "but got size 4 for tensor number 1 in the list."):
        A.cat.default([W(rnd((2, 3))), W(rnd((2, 4)))])
    with pytest.raises(RuntimeError, match="zero-dimensional tensor \\(at position 0\\) cannot be concatenated"):
        A.cat.default([W(np.array(1.0)), W(rnd((2,)))])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2, 3\] at "
                                           r"entry 0 and \[2, 4\] at entry 1"):
        A.stack.default([W(rnd((2, 3))), W(rnd((2, 4)))])
    with pytest.raises(ValueError, match=r"torch.cat\(\): expected a non-empty list of Tensors"):
        factory(A.cat.default, [])


@pytest.mark.parametrize("x, strides", [
    (rnd((2, 3)), (3, 1)), (tr((2, 3)), (1, 2)), (rnd((2, 3, 4)).transpose(2, 0, 1), (1, 12, 4)),
    (sl((3, 4)), (4, 1)), (np.broadcast_to(rnd((3, 1)), (3, 4)), (4, 1)),
    (rnd((0, 3)), (0, 0)),  # empty tensors count as dense: numpy's (0, 0) strides are kept, as torch would
], ids=["contiguous", "transposed", "permuted", "sliced", "expanded", "empty"])
def test_clone_preserves_dense_layouts_and_copies(x, strides):
    c = A.clone.default(W(x))
    assert_tensor(c, x)
    assert c.stride() == strides and not np.shares_memory(c._data, x)
    assert A.clone.default(W(x), memory_format=dc.contiguous_format).is_contiguous()
    cl = A.clone.default(W(rnd((2, 3, 4, 5))), memory_format=dc.channels_last)
    assert cl.stride() == (60, 1, 15, 3)


def test_copy_fill_zero():
    dst = tr((2, 3))
    t = W(dst)
    assert A.copy_.default(t, W(np.array([1, 2, 3]))) is t
    np.testing.assert_array_equal(dst, [[1, 2, 3], [1, 2, 3]])
    ints = np.zeros(3, np.int64)
    A.copy_.default(W(ints), W(np.array([1.7, -1.7, 2.5])))
    np.testing.assert_array_equal(ints, [1, -1, 2])  # truncation, as C++ casts
    u8 = np.zeros(2, np.uint8)
    A.copy_.default(W(u8), W(np.array([-1.0, 300.0])))
    np.testing.assert_array_equal(u8, [255, 44])  # through int64, as c10::convert does
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        A.copy_.default(W(rnd((3,))), W(rnd((2, 3))))
    assert A.fill_.Scalar(t, 2.5) is t and (dst == 2.5).all()
    assert A.zero_.default(t) is t and (dst == 0).all()
    filled = np.zeros(3, np.uint8)
    A.fill_.Scalar(W(filled), -1)
    assert (filled == 255).all()
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        A.fill_.Scalar(W(filled), 300)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
        A.fill_.Scalar(W(ints), float("nan"))


def test_to_copy():
    x = tr((2, 3))
    r = A._to_copy.default(W(x), dtype=dtypes.float64)
    assert_tensor(r, x.astype(np.float64))
    assert r.stride() == (1, 2) and not np.shares_memory(r._data, x)
    assert_tensor(A._to_copy.default(W(x), device="cpu"), x)


# --- views ----------------------------------------------------------------------------------------
def _is_view_of(t, x):
    return np.shares_memory(t._data, x) and t._data.base is not None


def test_view_reshapes_without_copying():
    x = rnd((3, 4))
    v = A.view.default(W(x), [2, -1])
    assert_tensor(v, x.reshape(2, 6))
    assert _is_view_of(v, x) and v.stride() == (6, 1)
    v._data[0, 0] = 100.0
    assert x[0, 0] == 100.0
    t = tr((3, 4))  # strides (1, 3)
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's size and stride \(at "
                                           r"least one dimension spans across two contiguous subspaces\). Use "
                                           r"\.reshape\(\.\.\.\) instead\."):
        A.view.default(W(t), [12])
    v = A.view.default(W(t), [3, 2, 2])  # splitting a dim is always possible
    assert _is_view_of(v, t) and v.stride() == (1, 6, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[3, 5\]' is invalid for input of size 12"):
        A.view.default(W(x), [3, 5])
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        A.view.default(W(x), [-1, -1])
    assert A.view.default(W(np.array(1.0)), [-1]).shape == (1,)


def test_view_ops_values_strides_and_memory():
    x = rnd((2, 3, 4))
    cases = [
        (A.t.default(W(x[0])), x[0].T),
        (A.transpose.int(W(x), 0, -1), x.swapaxes(0, 2)),
        (A.permute.default(W(x), [2, 0, 1]), x.transpose(2, 0, 1)),
        (A.squeeze.default(W(x[:, :1])), x[:, 0]),
        (A.squeeze.dim(W(x[:, :1]), 1), x[:, 0]),
        (A.squeeze.dim(W(x), 1), x),
        (A.unsqueeze.default(W(x), 1), x[:, None]),
        (A.select.int(W(x), 1, -1), x[:, -1]),
        (A.select.int(W(x[0, 0]), 0, 2), x[0, 0, 2]),
        (A.slice.Tensor(W(x), 2, 1, None, 2), x[:, :, 1::2]),
        (A.slice.Tensor(W(x), 0, -10, 100), x),
        (A.expand.default(W(x[:, :1]), [5, 2, 3, -1]), np.broadcast_to(x[:, :1], (5, 2, 3, 4))),
        (A._reshape_alias.default(W(x), [4, 6], [1, 4]), x.reshape(6, 4).T),
        (A.alias.default(W(x)), x),
    ]
    for view, expected in cases:
        assert_tensor(view, expected)
        assert np.shares_memory(view._data, x)
    assert A.unsqueeze.default(W(x), 3).stride() == (12, 4, 1, 1)  # torch's stride for a new last dim
    assert A.expand.default(W(x[:, :1]), [5, 2, 3, -1]).stride() == (0, 12, 0, 1)


def test_expanded_views_are_writable_like_torch():
    x = np.zeros((3, 1), np.float32)
    e = A.expand.default(W(x), [3, 4])
    A.fill_.Scalar(e, 1.0)
    assert (x == 1).all()


def test_as_strided_uses_the_absolute_storage_offset():
    root = np.arange(10.0)
    view = root[2:]
    r = A.as_strided.default(W(view), [2, 2], [1, 2], 1)
    np.testing.assert_array_equal(r._data, [[1.0, 3.0], [2.0, 4.0]])
    assert r.storage_offset() == 1 and np.shares_memory(r._data, root)
    r = A.as_strided.default(W(view), [2], [3])  # no offset: keep the input's (2)
    np.testing.assert_array_equal(r._data, [2.0, 5.0])
    assert r.storage_offset() == 2
    with pytest.raises(RuntimeError, match=r"setStorage: sizes \[5, 5\], strides \[1, 2\], storage offset 0, and "
                                           r"itemsize 8 requiring a storage size of 104 are out of bounds for "
                                           r"storage of size 80"):
        A.as_strided.default(W(root), [5, 5], [1, 2], 0)


@pytest.mark.parametrize("call, error, message", [
    (lambda: A.t.default(W(rnd((2, 3, 4)))), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self "
                                                           "is 3D"),
    (lambda: A.select.int(W(rnd((3,))), 0, 5), IndexError, r"select\(\): index 5 out of range for tensor of size "
                                                           r"\[3\] at dimension 0"),
    (lambda: A.slice.Tensor(W(rnd((3,))), 0, 0, 3, 0), RuntimeError, "slice step must be positive"),
    (lambda: A.expand.default(W(rnd((2, 3))), [3, 3]), RuntimeError, r"The expanded size of the tensor \(3\) must "
                                                                     r"match the existing size \(2\) at "
                                                                     r"non-singleton dimension 0"),
    (lambda: A.expand.default(W(rnd((3,))), [-1, 3]), RuntimeError, r"The expanded size of the tensor \(-1\) isn't "
                                                                    r"allowed in a leading, non-existing dimension 0"),
    (lambda: A.permute.default(W(rnd((2, 3))), [0, 0]), RuntimeError, r"permute\(\): duplicate dims are not "
                                                                      r"allowed."),
    (lambda: A.unsqueeze.default(W(rnd((2, 3))), 3), IndexError, r"Dimension out of range \(expected to be in range "
                                                                 r"of \[-3, 2\], but got 3\)"),
], ids=["t-3d", "select", "slice-step", "expand", "expand-leading", "permute-dup", "unsqueeze-oob"])
def test_view_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- factories ------------------------------------------------------------------------------------
def test_filled_factories():
    assert_tensor(factory(A.zeros.default, [2, 3]), np.zeros((2, 3), np.float32))
    assert_tensor(factory(A.ones.default, [2], dtype=dtypes.int32), np.ones(2, np.int32))
    assert_tensor(factory(A.full.default, [2], True), np.ones(2, bool))
    assert_tensor(factory(A.full.default, [2], 3), np.full(2, 3, np.int64))
    assert_tensor(factory(A.full.default, [2], 3.5), np.full(2, 3.5, np.float32))
    assert_tensor(factory(A.scalar_tensor.default, 3), np.array(3.0, np.float32))
    assert factory(A.zeros.default, [0, 3]).stride() == (3, 1)
    e = factory(A.empty.memory_format, [2, 3], dtype=dtypes.int64)
    assert e.shape == (2, 3) and e.dtype is dtypes.int64
    s = factory(A.empty_strided.default, [2, 3], [1, 2])
    assert s.shape == (2, 3) and s.stride() == (1, 2)
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[2, -1\]"):
        factory(A.ones.default, [2, -1])
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        factory(A.full.default, [2], 300, dtype=dtypes.uint8)
    with pytest.raises(RuntimeError, match="only the strided layout"):
        factory(A.zeros.default, [2], layout="sparse_coo")
    factory(A.zeros.default, [2], layout="strided", pin_memory=False, device="cpu")


@pytest.mark.parametrize("args, kwargs, expected", [
    ((0, 5), {}, np.arange(5)),
    ((0, 5, 0.5), {}, np.arange(0, 5, 0.5, dtype=np.float32)),
    ((5, 0, -1.5), {}, np.array([5.0, 3.5, 2.0, 0.5], np.float32)),
    ((0, 10, 3), {}, np.array([0, 3, 6, 9])),
    ((1.0, 1.3, 0.1), {}, np.array([1.0, 1.1, 1.2, 1.3], np.float32)),  # length ceil((end-start)/step) = 4
    ((0, 7, 2), {"dtype": dtypes.int32}, np.array([0, 2, 4, 6], np.int32)),
    ((0, 0), {}, np.zeros(0, np.int64)),
], ids=["ints", "float-step", "negative-step", "uneven", "rounding", "int32", "empty"])
def test_arange(args, kwargs, expected):
    assert_tensor(factory(A.arange.start_step, *args, **kwargs), expected)


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        factory(A.arange.start_step, 0, 5, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        factory(A.arange.start_step, 0, 5, -1)


def test_linspace():
    assert_tensor(factory(A.linspace.default, 0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32))
    assert_tensor(factory(A.linspace.default, 0, 10, 4, dtype=dtypes.int64), np.array([0, 3, 6, 10]))
    assert_tensor(factory(A.linspace.default, 2, 10, 1), np.array([2.0], np.float32))
    assert_tensor(factory(A.linspace.default, 2, 10, 0), np.zeros(0, np.float32))
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        factory(A.linspace.default, 2, 10, -1)


def test_rand_randn_follow_manual_seed_and_generators():
    cpu.manual_seed(0)
    a = factory(A.rand.default, [1000])
    b = factory(A.randn.default, [3], dtype=dtypes.float64)
    cpu.manual_seed(0)
    np.testing.assert_array_equal(factory(A.rand.default, [1000])._data, a._data)
    np.testing.assert_array_equal(factory(A.randn.default, [3], dtype=dtypes.float64)._data, b._data)
    assert a.dtype is dtypes.float32 and 0 <= a._data.min() and a._data.max() < 1
    assert cpu.default_generator.initial_seed() == 0
    np.testing.assert_array_equal(a._data[:4], np.array([0.49625658988952637, 0.7682217955589294,
                                                         0.08847743272781372, 0.13203048706054688], np.float32))
    np.testing.assert_array_equal(b._data, [-1.4595983802751844, -2.2977513667134377, 0.44948890343006886])
    g = cpu.Generator().manual_seed(7)
    h = factory(A.rand.generator, [4], generator=g)  # torch.rand(4, generator=torch.Generator().manual_seed(7))
    np.testing.assert_array_equal(h._data, np.array([0.5349225401878357, 0.19880318641662598, 0.6592116951942444,
                                                     0.6568902730941772], np.float32))
    g.manual_seed(7)
    np.testing.assert_array_equal(factory(A.rand.generator, [4], generator=g)._data, h._data)
    half = factory(A.rand.default, [10000], dtype=dtypes.float16)._data
    assert half.dtype == np.float16 and half.max() < 1
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        factory(A.rand.default, [2], dtype=dtypes.int64)


# --- the fast paths keep torch's semantics ----------------------------------------------------------
MIXED_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_mixed_dtype_binary_fast_path_agrees_with_the_general_path(op):
    from dispatchcore_backends.cpu import kernels

    ufunc = NP_BINARY[op] if op != "div" else kernels._div
    for xd in MIXED_DTYPES:
        for yd in MIXED_DTYPES:
            if xd == yd:
                continue
            for x, y in ((rnd((2, 3), xd), rnd((3,), yd, seed=1)),  # broadcast
                         (tr((3, 4), xd), tr((3, 4), yd, seed=1)),  # transposed: the layout follows
                         (rnd((0, 3), xd), rnd((3,), yd, seed=1))):  # empty
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        want = kernels._binary(op, ufunc, W(x), W(y))
                except RuntimeError as e:
                    with pytest.raises(RuntimeError, match=str(e)[:40]):
                        getattr(A, op).Tensor(W(x), W(y))
                    continue
                got = getattr(A, op).Tensor(W(x), W(y))
                assert got.dtype is want.dtype, (op, xd, yd)
                assert got.shape == want.shape and got.stride() == want.stride(), (op, xd, yd)
                np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_mixed_dtype_fast_path_promotes_like_torch_not_like_numpy():
    x, y = W(np.array([16777217], np.int64)), W(np.array([1.0], np.float32))
    r = A.mul.Tensor(x, y)  # numpy would compute in float64; torch casts to float32 first
    assert r.dtype is dtypes.float32 and r.item() == 16777216.0
    assert A.add.Tensor(W(np.array([200], np.uint8)), W(np.array([100], np.int8))).tolist() == [300]
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        A.sub.Tensor(W(np.array([1.0])), W(np.array([True])))


def test_zero_dim_results_are_arrays():
    x, y = np.array(1.5, np.float32), np.array(2.0, np.float32)
    for t in (A.add.Tensor(W(x), W(y)), A.mul.Scalar(W(x), 2.0), A.exp.default(W(x)), A.relu.default(W(x)),
              A.eq.Tensor(W(x), W(y)), A.sum.default(W(x)), A.where.self(W(np.array(True)), W(x), W(y)),
              A.pow.Tensor_Scalar(W(x), 2), A.select.int(W(np.arange(3.0)), 0, 1)):
        assert type(t._data) is np.ndarray and t._data.ndim == 0


def test_floating_point_errors_are_silent_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert A.log.default(W(np.array([0.0], np.float32))).item() == -np.inf
        assert A.div.Tensor(W(np.array([1.0])), W(np.array([0.0]))).item() == np.inf
        assert np.isnan(A.sqrt.default(W(np.array([-1.0]))).item())
        x = np.array([0.0], np.float32)
        A.log_.default(W(x))
        assert x[0] == -np.inf
        assert A.add.Scalar(W(np.array([60000.0], np.float16)), 60000.0).item() == np.inf


# --- errors raised after a fast path failed: torch's text, nothing chained (Note [No chained errors])
@pytest.mark.parametrize(("call", "text"), [
    (lambda: dc.ones(2) + dc.ones(3), "The size of tensor a (2) must match the size of tensor b (3)"),
    (lambda: dc.ones(4) * dc.ones(3), "The size of tensor a (4) must match the size of tensor b (3)"),
    (lambda: dc.ones(4) < dc.ones(3), "The size of tensor a (4) must match the size of tensor b (3)"),
    (lambda: dc.ones(3).add_(dc.ones(2, 3)), "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    (lambda: dc.ones(3).mul_(dc.ones(2, 3)), "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    (lambda: dc.add(dc.ones(2), dc.ones(3), out=dc.empty(2)), "The size of tensor a (2) must match"),
    (lambda: dc.ones(2, dtype=dc.bool) - dc.ones(2, dtype=dc.bool), "with two bool tensors is not supported"),
    (lambda: dc.where(dc.ones(2) > 0, dc.ones(3), dc.ones(3)), "The size of tensor a (2) must match"),
])
def test_fast_path_failures_raise_torchs_error_with_no_numpy_error_chained(call, text):
    with pytest.raises(RuntimeError) as info:
        call()
    assert text in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None


@pytest.mark.parametrize("args", [(0, 1e20, 1e-20), (0, 1e19, 1), (0, 9.3e18)])
def test_arange_longer_than_int64_max_is_an_invalid_size(args):
    with pytest.raises(RuntimeError, match=r"invalid size, possible overflow\?"):
        dc.arange(*args)
