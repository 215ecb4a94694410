"""The CPU backend's aten kernels against torch 2.13: values, dtypes, shapes and error messages.

Each case is one function of a library facade (``A`` the ops namespace, ``T`` ndarray -> tensor,
``D`` dtype by name, ``F`` a factory call); it runs once on dispatchcore and once on torch, with
fresh inputs each time. When torch raises, dispatchcore must raise the same type and message.
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dispatchcore as dc  # noqa: E402
from dispatchcore import dtypes  # noqa: E402
from dispatchcore.tensor import wrap_cpu  # noqa: E402

pytestmark = pytest.mark.differential


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


@pytest.fixture(scope="module", autouse=True)
def cpu_library():
    existing = cpu.registered()  # e.g. loaded by dispatchcore.load_backends(): leave it alone
    lib = cpu.register()
    yield lib
    if existing is None:
        lib._destroy()


class _Lib:
    def __init__(self, A, T, D, F, Out):  # noqa: N803
        self.A, self.T, self.D, self.F, self.Out = A, T, D, F, Out


_CPU_KS = dc.DispatchKeySet("CPU")
DC = _Lib(dc.ops.aten, wrap_cpu, lambda name: getattr(dtypes, "bool_" if name == "bool" else name),
          lambda op, *args, **kwargs: op.redispatch(_CPU_KS, *args, **kwargs),  # BackendSelect's job
          wrap_cpu)
def _torch_from_numpy(a):
    """A torch view of ``a`` over its whole numpy storage, so storage offsets compare equal."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is a:
        return torch.from_numpy(a)
    itemsize = a.dtype.itemsize
    offset = (a.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // itemsize
    return torch.from_numpy(root.reshape(-1)).as_strided(a.shape, [s // itemsize for s in a.strides], offset)


TORCH = _Lib(torch.ops.aten, _torch_from_numpy, lambda name: getattr(torch, name),
             lambda op, *args, **kwargs: op(*args, **kwargs),
             lambda a: torch.from_numpy(a).clone())  # out tensors: torch resizes only its own storage

TOL = {"float16": (2e-3, 2e-3), "float32": (2e-5, 1e-6), "float64": (1e-12, 1e-13)}


def rnd(shape, dtype="float32", seed=0, low=-3, high=3):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else low, high + 1, shape).astype(dt)
    return rng.uniform(low, high, shape).astype(dt)


def tr(shape, dtype="float32", seed=0):
    """A transposed (non-contiguous) array of ``shape``."""
    return rnd(shape[::-1], dtype, seed).T


def sl(shape, dtype="float32", seed=0):
    """A sliced (strided, offset) array of ``shape``."""
    return rnd((shape[0] + 1, shape[1] * 2), dtype, seed)[1:, ::2]


def special(dtype="float32"):
    return np.array([0.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 100.0], dtype)


def _dtype_name(t):
    return str(t.dtype).rpartition(".")[2].replace("bool_", "bool")


def _assert_same(ours, theirs, meta_only=False, tol=None, strides=False):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _assert_same(o, t, meta_only, tol, strides)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs
        return
    assert type(ours._data) is np.ndarray, "kernels must return ndarrays, never numpy scalars"
    assert _dtype_name(ours) == _dtype_name(theirs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    if strides:  # the memory layout is observable (stride(), storage_offset()): it must match too
        assert (ours.stride(), ours.storage_offset()) == (theirs.stride(), theirs.storage_offset())
    if meta_only:
        return
    expected = theirs.detach().numpy()
    rtol, atol = tol or TOL.get(_dtype_name(theirs), (0, 0))
    np.testing.assert_allclose(ours._data, expected, rtol=rtol, atol=atol, equal_nan=True)


def _run(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # resize/deprecation warnings: tested in behavior
        try:
            return fn(lib), None
        except Exception as e:  # noqa: BLE001 - compared with torch's
            return None, e


def check(fn, meta_only=False, strides=True, tol=None):
    """Run ``fn`` on both libraries; compare results (layout included) or errors (type, first line)."""
    theirs, their_error = _run(fn, TORCH)
    ours, our_error = _run(fn, DC)
    if their_error is not None:
        assert our_error is not None, f"torch raised {their_error!r}, dispatchcore returned"
        assert type(our_error) is type(their_error), (our_error, their_error)
        assert str(our_error).splitlines()[0] == str(their_error).splitlines()[0]
        return
    if our_error is not None:
        raise our_error
    _assert_same(ours, theirs, meta_only, tol, strides)


def ids(cases):
    return [c[0] for c in cases]


# --- elementwise binary ---------------------------------------------------------------------------
BINARY_INPUTS = [
    ("f32", lambda: (rnd((3, 4)), rnd((3, 4), seed=1))),
    ("broadcast", lambda: (rnd((3, 1)), rnd((1, 4), seed=1))),
    ("broadcast-rank", lambda: (rnd((2, 3, 4)), rnd((4,), seed=1))),
    ("i64+f32", lambda: (rnd((3,), "int64"), rnd((3,), seed=1))),
    ("i32+i64", lambda: (rnd((3,), "int32"), rnd((3,), "int64", seed=1))),
    ("u8+i8", lambda: (rnd((4,), "uint8"), rnd((4,), "int8", seed=1))),
    ("bool+bool", lambda: (rnd((4,), "bool"), rnd((4,), "bool", seed=1))),
    ("bool+i64", lambda: (rnd((4,), "bool"), rnd((4,), "int64", seed=1))),
    ("f16+f16", lambda: (rnd((5,), "float16"), rnd((5,), "float16", seed=1))),
    ("f16+f32", lambda: (rnd((5,), "float16"), rnd((5,), seed=1))),
    ("f32+0d-f64", lambda: (rnd((3,)), np.array(2.5))),
    ("0d-f64+f32", lambda: (np.array(2.5), rnd((3,)))),
    ("i64+0d-f64", lambda: (rnd((3,), "int64"), np.array(2.5))),
    ("i8+0d-f16", lambda: (rnd((3,), "int8"), np.array(2.5, np.float16))),
    ("i32+0d-i64", lambda: (rnd((3,), "int32"), np.array(7))),
    ("bool+0d-i32", lambda: (rnd((3,), "bool"), np.array(5, np.int32))),
    ("0d+0d", lambda: (np.array(3, np.int32), np.array(2.5))),
    ("transposed", lambda: (tr((3, 4)), tr((3, 4), seed=1))),
    ("sliced", lambda: (sl((3, 4)), rnd((3, 4), seed=1))),
    ("empty", lambda: (rnd((0, 3)), rnd((3,), seed=1))),
    ("mismatch", lambda: (rnd((3,)), rnd((4,), seed=1))),
    ("mismatch2", lambda: (rnd((2, 3)), rnd((4, 1), seed=1))),
]
BINARY_OPS = ["add", "sub", "mul", "div"]


@pytest.mark.parametrize("inputs", BINARY_INPUTS, ids=ids(BINARY_INPUTS))
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary_tensor(op, inputs):
    check(lambda L: getattr(L.A, op).Tensor(*map(L.T, inputs[1]())))


@pytest.mark.parametrize("scalar", [2, 2.5, True, -1, 300, 0])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary_scalar(op, dtype, scalar):
    check(lambda L: getattr(L.A, op).Scalar(L.T(rnd((2, 3), dtype)), scalar))


@pytest.mark.parametrize("alpha", [2, 0.5, True, 1j])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_binary_alpha(op, dtype, alpha):
    check(lambda L: getattr(L.A, op).Tensor(L.T(rnd((4,), dtype)), L.T(rnd((4,), dtype, 1)), alpha=alpha))
    check(lambda L: getattr(L.A, op).Scalar(L.T(rnd((4,), dtype)), 3, alpha))


INPLACE_INPUTS = [
    ("f32", lambda: (rnd((3, 4)), rnd((3, 4), seed=1))),
    ("broadcast-other", lambda: (rnd((3, 4)), rnd((4,), seed=1))),
    ("broadcast-self", lambda: (rnd((4,)), rnd((3, 4), seed=1))),
    ("i64+f32", lambda: (rnd((3,), "int64"), rnd((3,), seed=1))),
    ("i32+i64", lambda: (rnd((3,), "int32"), rnd((3,), "int64", seed=1))),
    ("f16+f64", lambda: (rnd((3,), "float16"), rnd((3,), "float64", seed=1))),
    ("bool+i64", lambda: (rnd((3,), "bool"), rnd((3,), "int64", seed=1))),
    ("transposed-self", lambda: (tr((3, 4)), rnd((3, 4), seed=1))),
]


@pytest.mark.parametrize("inputs", INPLACE_INPUTS, ids=ids(INPLACE_INPUTS))
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary_inplace(op, inputs):
    def fn(L):
        x, y = map(L.T, inputs[1]())
        r = getattr(L.A, op + "_").Tensor(x, y)
        assert r is x
        return r

    check(fn)


@pytest.mark.parametrize("scalar", [2, 2.5])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary_inplace_scalar(op, dtype, scalar):
    check(lambda L: getattr(L.A, op + "_").Scalar(L.T(rnd((3,), dtype)), scalar))


OUT_CASES = [
    ("same", (3,), "float32", (3,), "float32"),
    ("downcast", (3,), "float64", (3,), "float16"),
    ("float-into-long", (3,), "float32", (3,), "int64"),
    ("int-into-bool", (3,), "int64", (3,), "bool"),
    ("resize-empty", (3,), "float32", (0,), "float32"),
    ("resize", (2, 3), "float32", (3, 2), "float32"),
]


@pytest.mark.parametrize("case", OUT_CASES, ids=ids(OUT_CASES))
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary_out(op, case):
    _, shape, dtype, out_shape, out_dtype = case

    def fn(L):
        out = L.Out(np.zeros(out_shape, out_dtype))
        r = getattr(L.A, op).out(L.T(rnd(shape, dtype)), L.T(rnd(shape, dtype, 1) + 4), out=out)
        assert r is out
        return r

    check(fn)


POW_CASES = [
    ("tt-f32", lambda L: L.A.pow.Tensor_Tensor(L.T(rnd((4,), low=0)), L.T(rnd((4,), seed=1)))),
    ("tt-int-neg", lambda L: L.A.pow.Tensor_Tensor(L.T(np.array([1, 2, -1, 0, -1, 3])),
                                                   L.T(np.array([-1, -1, -1, -2, -2, 2])))),
    ("tt-int-float", lambda L: L.A.pow.Tensor_Tensor(L.T(np.array([2, 3])), L.T(np.array([0.5, 2.0])))),
    ("tt-bool", lambda L: L.A.pow.Tensor_Tensor(L.T(rnd((3,), "bool")), L.T(rnd((3,), "bool", 1)))),
    ("tt-0d", lambda L: L.A.pow.Tensor_Tensor(L.T(rnd((3,))), L.T(np.array(2.0)))),
    ("ts-f32-2", lambda L: L.A.pow.Tensor_Scalar(L.T(rnd((4,))), 2)),
    ("ts-f32-half", lambda L: L.A.pow.Tensor_Scalar(L.T(rnd((4,))), 0.5)),
    ("ts-f32-neg", lambda L: L.A.pow.Tensor_Scalar(L.T(rnd((4,))), -2)),
    ("ts-int-float", lambda L: L.A.pow.Tensor_Scalar(L.T(np.array([1, 2, 3])), 0.5)),
    ("ts-int-neg", lambda L: L.A.pow.Tensor_Scalar(L.T(np.array([1, 2, 3])), -1)),
    ("ts-bool-2", lambda L: L.A.pow.Tensor_Scalar(L.T(np.array([True, False])), 2)),
    ("ts-bool-true", lambda L: L.A.pow.Tensor_Scalar(L.T(np.array([True, False])), True)),
    ("ts-f16", lambda L: L.A.pow.Tensor_Scalar(L.T(rnd((4,), "float16", low=0)), 1.5)),
    ("s-int", lambda L: L.A.pow.Scalar(2, L.T(np.array([-1, 0, 3])))),
    ("s-float", lambda L: L.A.pow.Scalar(2.5, L.T(np.array([1, 2])))),
    ("s-bool", lambda L: L.A.pow.Scalar(True, L.T(np.array([1, 2])))),
    ("s-f32", lambda L: L.A.pow.Scalar(2, L.T(rnd((3,))))),
    ("inplace-scalar", lambda L: L.A.pow_.Scalar(L.T(rnd((3,))), 3)),
    ("inplace-scalar-int-float", lambda L: L.A.pow_.Scalar(L.T(np.array([1, 2])), 0.5)),
    ("inplace-scalar-int-neg", lambda L: L.A.pow_.Scalar(L.T(np.array([1, 2])), -2)),
    ("inplace-tensor", lambda L: L.A.pow_.Tensor(L.T(np.array([2.0, 3.0])), L.T(np.array([3, 2])))),
]


@pytest.mark.parametrize("case", POW_CASES, ids=ids(POW_CASES))
def test_pow(case):
    check(case[1])


COMPARE_INPUTS = [
    ("f32", lambda: (rnd((3, 4), high=1), rnd((3, 4), seed=1, high=1))),
    ("i64-f32", lambda: (np.array([1, 2, 3]), np.array([1.0, 2.5, 2.0], np.float32))),
    ("bool-i64", lambda: (np.array([True, False]), np.array([1, 1]))),
    ("f16-0d-f64", lambda: (np.array([1.0], np.float16), np.array(1.00001))),
    ("0d-vs-1d", lambda: (np.array(1.5), np.array([1, 2]))),
    ("broadcast", lambda: (rnd((3, 1), "int32"), rnd((1, 4), "int32", 1))),
    ("transposed", lambda: (tr((3, 4), "int64"), rnd((3, 4), "int64", 1))),
    ("nan", lambda: (special(), special()[::-1].copy())),
    ("empty", lambda: (rnd((0,)), rnd((0,), seed=1))),
    ("mismatch", lambda: (rnd((3,)), rnd((2,)))),
]


@pytest.mark.parametrize("inputs", COMPARE_INPUTS, ids=ids(COMPARE_INPUTS))
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_tensor(op, inputs):
    check(lambda L: getattr(L.A, op).Tensor(*map(L.T, inputs[1]())))


@pytest.mark.parametrize("scalar", [1, 1.5, -1, True, 300])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_scalar(op, dtype, scalar):
    check(lambda L: getattr(L.A, op).Scalar(L.T(np.array([0, 1, 2, 255, 44]).astype(dtype)), scalar))


@pytest.mark.parametrize("inputs", COMPARE_INPUTS, ids=ids(COMPARE_INPUTS))
@pytest.mark.parametrize("op", ["eq", "lt", "ge"])
def test_compare_in_place_writes_the_bool_result_in_selfs_dtype_and_shape(op, inputs):
    check(lambda L: getattr(L.A, f"{op}_").Tensor(*map(L.T, inputs[1]())))


@pytest.mark.parametrize("scalar", [1.5, -1, 300])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_in_place_with_a_scalar(op, dtype, scalar):
    check(lambda L: getattr(L.A, f"{op}_").Scalar(L.T(np.array([0, 1, 2, 255, 44]).astype(dtype)), scalar))


# --- elementwise unary ----------------------------------------------------------------------------
UNARY_OPS = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"]
UNARY_INPUTS = [
    ("f32", lambda: rnd((3, 4))),
    ("f64", lambda: rnd((3, 4), "float64")),
    ("f16", lambda: rnd((3, 4), "float16")),
    ("special", lambda: special()),
    ("sigmoid-extremes", lambda: np.array([-200.0, -100.0, -20.0, 0.0, 20.0, 100.0, 200.0], np.float32)),
    ("i64", lambda: rnd((5,), "int64")),
    ("u8", lambda: rnd((5,), "uint8", high=255)),
    ("bool", lambda: rnd((5,), "bool")),
    ("transposed", lambda: tr((3, 4))),
    ("sliced", lambda: sl((3, 4))),
    ("0d", lambda: np.array(0.7, np.float32)),
    ("empty", lambda: rnd((0, 2))),
]


@pytest.mark.parametrize("inputs", UNARY_INPUTS, ids=ids(UNARY_INPUTS))
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary(op, inputs):
    check(lambda L: getattr(L.A, op).default(L.T(inputs[1]())))


@pytest.mark.parametrize("inputs", [c for c in UNARY_INPUTS if c[0] in ("f32", "special", "i64", "bool",
                                                                         "transposed", "0d")],
                         ids=["f32", "special", "i64", "bool", "transposed", "0d"])
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary_inplace(op, inputs):
    def fn(L):
        x = L.T(inputs[1]())
        r = getattr(L.A, op + "_").default(x)
        assert r is x
        return r

    check(fn)


@pytest.mark.parametrize("dtypes_", [("float32", "float64"), ("float64", "float32"), ("int64", "int32"),
                                     ("int64", "float32"), ("float32", "float32")], ids=str)
@pytest.mark.parametrize("op", [u for u in UNARY_OPS if u != "relu"])
def test_unary_out(op, dtypes_):
    def fn(L):
        out = L.Out(np.zeros(3, dtypes_[1]))
        r = getattr(L.A, op).out(L.T(np.array([1, 2, 3]).astype(dtypes_[0])), out=out)
        assert r is out
        return r

    check(fn, tol=TOL["float32"])  # computed in the input's dtype, then cast


# --- clamp, where ---------------------------------------------------------------------------------
CLAMP_CASES = [
    ("f32-both", lambda L: L.A.clamp.default(L.T(rnd((3, 4))), -1, 1.5)),
    ("f32-min", lambda L: L.A.clamp.default(L.T(rnd((3, 4))), -1)),
    ("f32-max", lambda L: L.A.clamp.default(L.T(rnd((3, 4))), None, 0.5)),
    ("none", lambda L: L.A.clamp.default(L.T(rnd((3,))))),
    ("int-float", lambda L: L.A.clamp.default(L.T(np.array([1, 5])), 0.5)),
    ("int-int", lambda L: L.A.clamp.default(L.T(np.array([1, 5, 3])), 2, 3)),
    ("min>max", lambda L: L.A.clamp.default(L.T(np.array([1.0, 5.0], np.float32)), 4, 2)),
    ("nan", lambda L: L.A.clamp.default(L.T(special()), 0, 3)),
    ("nan-bound", lambda L: L.A.clamp.default(L.T(rnd((3,))), float("nan"))),
    ("bool-int", lambda L: L.A.clamp.default(L.T(np.array([True, False])), 0)),
    ("bool-bool", lambda L: L.A.clamp.default(L.T(np.array([True, False])), True)),
    ("bool-max", lambda L: L.A.clamp.default(L.T(np.array([True, False])), None, True)),
    ("u8-neg", lambda L: L.A.clamp.default(L.T(np.array([5], np.uint8)), -1)),
    ("u8-overflow", lambda L: L.A.clamp.default(L.T(np.array([5], np.uint8)), -300)),
    ("f16-overflow", lambda L: L.A.clamp.default(L.T(rnd((2,), "float16")), 2.5, 1e6)),
    ("i32-overflow", lambda L: L.A.clamp.default(L.T(np.array([1], np.int32)), 2**40)),
    ("transposed", lambda L: L.A.clamp.default(L.T(tr((3, 4))), -1, 1)),
    ("empty", lambda L: L.A.clamp.default(L.T(rnd((0,))), -1, 1)),
    ("inplace", lambda L: L.A.clamp_.default(L.T(rnd((3, 4))), -1, 1)),
    ("inplace-int-float", lambda L: L.A.clamp_.default(L.T(np.array([1, 5])), 0.5)),
    ("min", lambda L: L.A.clamp_min.default(L.T(rnd((3, 4))), 0)),
    ("min-int-float", lambda L: L.A.clamp_min.default(L.T(np.array([1, 5])), 2.5)),
    ("min-bool", lambda L: L.A.clamp_min.default(L.T(np.array([True])), False)),
    ("min-inplace", lambda L: L.A.clamp_min_.default(L.T(rnd((3, 4))), 0)),
    ("min-inplace-int-float", lambda L: L.A.clamp_min_.default(L.T(np.array([1, 5])), 2.5)),
]


@pytest.mark.parametrize("case", CLAMP_CASES, ids=ids(CLAMP_CASES))
def test_clamp(case):
    check(case[1])


WHERE_CASES = [
    ("f32", lambda: (rnd((3, 4), "bool"), rnd((3, 4)), rnd((3, 4), seed=1))),
    ("promote", lambda: (np.array([True, False]), np.array([1, 2]), np.array([1.5, 2.5], np.float32))),
    ("0d-other", lambda: (np.array([True, False]), np.array([1, 2]), np.array(2.5))),
    ("0d-0d", lambda: (np.array([True, False]), np.array(1.0, np.float32), np.array(2))),
    ("broadcast", lambda: (rnd((3, 1), "bool"), rnd((1, 4)), rnd((4,), seed=1))),
    ("transposed", lambda: (tr((3, 4), "bool"), tr((3, 4)), rnd((3, 4), seed=1))),
    ("empty", lambda: (rnd((0,), "bool"), rnd((0,)), rnd((0,)))),
    ("int-condition", lambda: (np.array([1, 0]), rnd((2,)), rnd((2,)))),
    ("mismatch", lambda: (np.array([True, False]), rnd((3,)), rnd((2,)))),
]


@pytest.mark.parametrize("inputs", WHERE_CASES, ids=ids(WHERE_CASES))
def test_where(inputs):
    check(lambda L: L.A.where.self(*map(L.T, inputs[1]())))


# --- reductions -----------------------------------------------------------------------------------
REDUCE_INPUTS = [
    ("f32", lambda: rnd((3, 4))),
    ("f64", lambda: rnd((3, 4), "float64")),
    ("f16", lambda: rnd((3, 4), "float16")),
    ("i32", lambda: rnd((3, 4), "int32")),
    ("u8", lambda: rnd((3, 4), "uint8", high=200)),
    ("bool", lambda: rnd((3, 4), "bool")),
    ("transposed", lambda: tr((3, 4))),
    ("nan", lambda: special().reshape(2, 4)),
    ("0d", lambda: np.array(1.5, np.float32)),
    ("empty", lambda: rnd((0, 3))),
]
REDUCE_CALLS = [
    ("sum", lambda L, x: L.A.sum.default(x)),
    ("sum-dtype-f64", lambda L, x: L.A.sum.default(x, dtype=L.D("float64"))),
    ("sum-dtype-i32", lambda L, x: L.A.sum.default(x, dtype=L.D("int32"))),
    ("sum-dim0", lambda L, x: L.A.sum.dim_IntList(x, [0])),
    ("sum-dim-1-keep", lambda L, x: L.A.sum.dim_IntList(x, [-1], True)),
    ("sum-dim-none", lambda L, x: L.A.sum.dim_IntList(x, None)),
    ("sum-dim-empty-keep", lambda L, x: L.A.sum.dim_IntList(x, [], True)),
    ("sum-dim-both", lambda L, x: L.A.sum.dim_IntList(x, [0, 1])),
    ("sum-dim-dup", lambda L, x: L.A.sum.dim_IntList(x, [0, 0])),
    ("sum-dim-oob", lambda L, x: L.A.sum.dim_IntList(x, [2])),
    ("mean", lambda L, x: L.A.mean.default(x)),
    ("mean-dtype", lambda L, x: L.A.mean.default(x, dtype=L.D("float64"))),
    ("mean-dtype-int", lambda L, x: L.A.mean.default(x, dtype=L.D("int64"))),
    ("mean-dim", lambda L, x: L.A.mean.dim(x, [0])),
    ("mean-dim-keep", lambda L, x: L.A.mean.dim(x, [-1], True)),
    ("mean-dim-none", lambda L, x: L.A.mean.dim(x, None)),
    ("amax", lambda L, x: L.A.amax.default(x)),
    ("amax-dim", lambda L, x: L.A.amax.default(x, [1])),
    ("amax-dim0-keep", lambda L, x: L.A.amax.default(x, [0], True)),
    ("max", lambda L, x: L.A.max.default(x)),
    ("max-dim0", lambda L, x: L.A.max.dim(x, 0)),
    ("max-dim-1-keep", lambda L, x: L.A.max.dim(x, -1, True)),
    ("argmax", lambda L, x: L.A.argmax.default(x)),
    ("argmax-keep", lambda L, x: L.A.argmax.default(x, None, True)),
    ("argmax-dim0", lambda L, x: L.A.argmax.default(x, 0)),
    ("argmax-dim-1-keep", lambda L, x: L.A.argmax.default(x, -1, True)),
]


@pytest.mark.parametrize("inputs", REDUCE_INPUTS, ids=ids(REDUCE_INPUTS))
@pytest.mark.parametrize("call", REDUCE_CALLS, ids=ids(REDUCE_CALLS))
def test_reduction(call, inputs):
    check(lambda L: call[1](L, L.T(inputs[1]())))


# --- matrix products ------------------------------------------------------------------------------
MM_CASES = [
    ("f32", lambda L: L.A.mm.default(L.T(rnd((2, 3))), L.T(rnd((3, 5), seed=1)))),
    ("f64", lambda L: L.A.mm.default(L.T(rnd((4, 3), "float64")), L.T(rnd((3, 2), "float64", 1)))),
    ("f16", lambda L: L.A.mm.default(L.T(rnd((4, 8), "float16")), L.T(rnd((8, 2), "float16", 1)))),
    ("i64", lambda L: L.A.mm.default(L.T(rnd((2, 3), "int64")), L.T(rnd((3, 2), "int64", 1)))),
    ("i32", lambda L: L.A.mm.default(L.T(rnd((2, 3), "int32")), L.T(rnd((3, 2), "int32", 1)))),
    ("transposed", lambda L: L.A.mm.default(L.T(tr((2, 3))), L.T(sl((3, 5), seed=1)))),
    ("empty-k", lambda L: L.A.mm.default(L.T(rnd((2, 0))), L.T(rnd((0, 5))))),
    ("empty-m", lambda L: L.A.mm.default(L.T(rnd((0, 3))), L.T(rnd((3, 5))))),
    ("shape", lambda L: L.A.mm.default(L.T(rnd((2, 3))), L.T(rnd((4, 5))))),
    ("shape-and-dtype", lambda L: L.A.mm.default(L.T(rnd((2, 3))), L.T(rnd((4, 5), "float64")))),
    ("self-1d", lambda L: L.A.mm.default(L.T(rnd((3,))), L.T(rnd((3, 5))))),
    ("mat2-1d", lambda L: L.A.mm.default(L.T(rnd((2, 3))), L.T(rnd((3,))))),
    ("bool", lambda L: L.A.mm.default(L.T(rnd((2, 3), "bool")), L.T(rnd((3, 2), "bool")))),
    *[(f"dtype-{d}", lambda L, d=d: L.A.mm.default(L.T(rnd((2, 3))), L.T(rnd((3, 5), d))))
      for d in ["float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]],
    ("bmm-f32", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3))), L.T(rnd((2, 3, 5), seed=1)))),
    ("bmm-i64", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3), "int64")), L.T(rnd((2, 3, 5), "int64", 1)))),
    ("bmm-f16", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3), "float16")), L.T(rnd((2, 3, 5), "float16", 1)))),
    ("bmm-noncontig", lambda L: L.A.bmm.default(L.T(rnd((3, 2, 2)).transpose(1, 0, 2)),
                                                L.T(rnd((2, 5, 3), seed=1).transpose(0, 2, 1)))),
    ("bmm-empty", lambda L: L.A.bmm.default(L.T(rnd((0, 2, 3))), L.T(rnd((0, 3, 5))))),
    ("bmm-shape", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3))), L.T(rnd((2, 4, 5))))),
    ("bmm-batch", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3))), L.T(rnd((3, 3, 5))))),
    ("bmm-2d", lambda L: L.A.bmm.default(L.T(rnd((2, 3))), L.T(rnd((2, 3, 5))))),
    ("bmm-mat2-2d", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3))), L.T(rnd((3, 5))))),
    ("bmm-dtype", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3))), L.T(rnd((2, 3, 5), "float64")))),
    ("bmm-bool", lambda L: L.A.bmm.default(L.T(rnd((2, 2, 3), "bool")), L.T(rnd((2, 3, 5), "bool")))),
]


@pytest.mark.parametrize("case", MM_CASES, ids=ids(MM_CASES))
def test_mm_bmm(case):
    check(case[1])


# --- softmax and losses ---------------------------------------------------------------------------
SOFTMAX_INPUTS = [
    ("f32", lambda: rnd((3, 4), high=10)),
    ("f64", lambda: rnd((3, 4), "float64")),
    ("f16", lambda: rnd((3, 4), "float16")),
    ("large", lambda: np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0]], np.float32)),
    ("-inf-row", lambda: np.array([[-np.inf, -np.inf], [0.0, -np.inf]], np.float32)),
    ("transposed", lambda: tr((3, 4))),
    ("0d", lambda: np.array(0.3, np.float32)),
    ("empty", lambda: rnd((0, 3))),
    ("int", lambda: rnd((2, 3), "int64")),
]


@pytest.mark.parametrize("dim", [0, -1, 2])
@pytest.mark.parametrize("inputs", SOFTMAX_INPUTS, ids=ids(SOFTMAX_INPUTS))
@pytest.mark.parametrize("op", ["_softmax", "_log_softmax"])
def test_softmax(op, inputs, dim):
    check(lambda L: getattr(L.A, op).default(L.T(inputs[1]()), dim, False))


@pytest.mark.parametrize("op", ["_softmax", "_log_softmax"])
def test_softmax_half_to_float(op):
    check(lambda L: getattr(L.A, op).default(L.T(rnd((2, 3), "float16")), 1, True))


MSE_CASES = [
    ("mean", lambda L: L.A.mse_loss.default(L.T(rnd((3, 4))), L.T(rnd((3, 4), seed=1)))),
    ("none", lambda L: L.A.mse_loss.default(L.T(rnd((3, 4))), L.T(rnd((3, 4), seed=1)), 0)),
    ("sum", lambda L: L.A.mse_loss.default(L.T(rnd((3, 4))), L.T(rnd((3, 4), seed=1)), 2)),
    ("f16", lambda L: L.A.mse_loss.default(L.T(rnd((3, 4), "float16")), L.T(rnd((3, 4), "float16", 1)))),
    ("mixed", lambda L: L.A.mse_loss.default(L.T(rnd((3,))), L.T(rnd((3,), "float64", 1)))),
    ("broadcast", lambda L: L.A.mse_loss.default(L.T(rnd((3,))), L.T(rnd((2, 3), seed=1)))),
    ("transposed", lambda L: L.A.mse_loss.default(L.T(tr((3, 4))), L.T(rnd((3, 4), seed=1)), 2)),
    ("empty", lambda L: L.A.mse_loss.default(L.T(rnd((0,))), L.T(rnd((0,))))),
    ("int", lambda L: L.A.mse_loss.default(L.T(rnd((3,), "int64")), L.T(rnd((3,), "int64")))),
    ("mismatch", lambda L: L.A.mse_loss.default(L.T(rnd((3,))), L.T(rnd((4,))))),
]


@pytest.mark.parametrize("case", MSE_CASES, ids=ids(MSE_CASES))
def test_mse_loss(case):
    check(case[1])


def _nll(L, x, t, weight=None, reduction=1, ignore_index=-100):
    w = None if weight is None else L.T(weight)
    return L.A.nll_loss_forward.default(L.T(x), L.T(t), w, reduction, ignore_index)


NLL_CASES = [
    ("mean", lambda L: _nll(L, rnd((3, 4)), np.array([0, 3, 1]))),
    ("sum", lambda L: _nll(L, rnd((3, 4)), np.array([0, 3, 1]), reduction=2)),
    ("none", lambda L: _nll(L, rnd((3, 4)), np.array([0, 3, 1]), reduction=0)),
    ("weight-mean", lambda L: _nll(L, rnd((3, 4)), np.array([0, 3, 1]), np.arange(4.0, dtype=np.float32))),
    ("weight-none", lambda L: _nll(L, rnd((3, 4)), np.array([0, 3, 1]), np.arange(4.0, dtype=np.float32), 0)),
    ("ignore-mean", lambda L: _nll(L, rnd((3, 4)), np.array([0, 3, 0]), ignore_index=0)),
    ("ignore-all", lambda L: _nll(L, rnd((3, 4)), np.array([0, 0, 0]), ignore_index=0)),
    ("ignore-none", lambda L: _nll(L, rnd((3, 4)), np.array([0, 1, 0]), reduction=0, ignore_index=0)),
    ("ignore-weight", lambda L: _nll(L, rnd((3, 4)), np.array([2, 1, 0]), np.arange(4.0, dtype=np.float32),
                                     ignore_index=1)),
    ("1d", lambda L: _nll(L, rnd((4,)), np.array(2))),
    ("1d-none", lambda L: _nll(L, rnd((4,)), np.array(2), reduction=0)),
    ("1d-target-1d", lambda L: _nll(L, rnd((4,)), np.array([2]))),
    ("1d-target-1d-bad", lambda L: _nll(L, rnd((4,)), np.array([2, 1]))),
    ("2d-target-0d", lambda L: _nll(L, rnd((3, 4)), np.array(2))),
    ("f64", lambda L: _nll(L, rnd((3, 4), "float64"), np.array([0, 3, 1]))),
    ("f16", lambda L: _nll(L, rnd((3, 4), "float16"), np.array([0, 3, 1]))),
    ("u8-target", lambda L: _nll(L, rnd((3, 4)), np.array([0, 3, 1], np.uint8))),
    ("transposed", lambda L: _nll(L, tr((3, 4)), np.array([0, 3, 1]))),
    ("empty-mean", lambda L: _nll(L, rnd((0, 4)), np.zeros(0, np.int64))),
    ("empty-sum", lambda L: _nll(L, rnd((0, 4)), np.zeros(0, np.int64), reduction=2)),
    ("target-oob", lambda L: _nll(L, rnd((3, 4)), np.array([0, 4, 1]))),
    ("target-neg", lambda L: _nll(L, rnd((3, 4)), np.array([0, -1, 1]))),
    ("target-float", lambda L: _nll(L, rnd((3, 4)), np.array([0.0, 1.0, 1.0]))),
    ("target-int32", lambda L: _nll(L, rnd((3, 4)), np.array([0, 1, 1], np.int32))),
    ("batch-mismatch", lambda L: _nll(L, rnd((3, 4)), np.array([0, 1]))),
    ("input-3d", lambda L: _nll(L, rnd((2, 3, 4)), np.array([0, 1]))),
    ("target-2d", lambda L: _nll(L, rnd((2, 3)), np.array([[0], [1]]))),
    ("weight-size", lambda L: _nll(L, rnd((3, 4)), np.array([0, 1, 2]), np.ones(3, np.float32))),
    ("weight-dtype", lambda L: _nll(L, rnd((3, 4)), np.array([0, 1, 2]), np.ones(4))),
    ("int-input", lambda L: _nll(L, rnd((3, 4), "int64"), np.array([0, 1, 2]))),
]


@pytest.mark.parametrize("case", NLL_CASES, ids=ids(NLL_CASES))
def test_nll_loss_forward(case):
    check(case[1])


# --- joining, copies, fills -----------------------------------------------------------------------
JOIN_CASES = [
    ("cat", lambda L: L.A.cat.default([L.T(rnd((2, 3))), L.T(rnd((1, 3), seed=1))])),
    ("cat-dim1", lambda L: L.A.cat.default([L.T(rnd((2, 3))), L.T(rnd((2, 1), seed=1))], 1)),
    ("cat-dim-1", lambda L: L.A.cat.default([L.T(rnd((2, 3))), L.T(rnd((2, 3), seed=1))], -1)),
    ("cat-promote", lambda L: L.A.cat.default([L.T(rnd((2,), "int32")), L.T(rnd((3,)))])),
    ("cat-promote-bool-u8", lambda L: L.A.cat.default([L.T(rnd((2,), "bool")), L.T(rnd((3,), "uint8"))])),
    ("cat-legacy-empty", lambda L: L.A.cat.default([L.T(rnd((0,))), L.T(rnd((2, 3)))])),
    ("cat-all-empty", lambda L: L.A.cat.default([L.T(rnd((0,))), L.T(rnd((0,), "float64"))])),
    ("cat-transposed", lambda L: L.A.cat.default([L.T(tr((2, 3))), L.T(sl((2, 3)))], 1)),
    ("cat-empty-list", lambda L: L.F(L.A.cat.default, [])),  # no tensors: reach the kernel directly
    ("cat-shape", lambda L: L.A.cat.default([L.T(rnd((2, 3))), L.T(rnd((2, 4)))])),
    ("cat-shape-dim1", lambda L: L.A.cat.default([L.T(rnd((2, 3))), L.T(rnd((3, 3)))], 1)),
    ("cat-ndim", lambda L: L.A.cat.default([L.T(rnd((2, 3))), L.T(rnd((3,)))])),
    ("cat-0d", lambda L: L.A.cat.default([L.T(np.array(1.0)), L.T(rnd((3,)))])),
    ("cat-dim-oob", lambda L: L.A.cat.default([L.T(rnd((2, 3))), L.T(rnd((2, 3)))], 2)),
    ("stack", lambda L: L.A.stack.default([L.T(rnd((2, 3))), L.T(rnd((2, 3), seed=1))])),
    ("stack-dim2", lambda L: L.A.stack.default([L.T(rnd((2, 3))), L.T(rnd((2, 3), seed=1))], 2)),
    ("stack-dim-1", lambda L: L.A.stack.default([L.T(rnd((2, 3))), L.T(rnd((2, 3), seed=1))], -1)),
    ("stack-promote", lambda L: L.A.stack.default([L.T(rnd((2,), "int32")), L.T(rnd((2,)))])),
    ("stack-0d", lambda L: L.A.stack.default([L.T(np.array(1.0)), L.T(np.array(2.0))])),
    ("stack-transposed", lambda L: L.A.stack.default([L.T(tr((2, 3))), L.T(sl((2, 3)))], 1)),
    ("stack-empty-list", lambda L: L.F(L.A.stack.default, [])),
    ("stack-shape", lambda L: L.A.stack.default([L.T(rnd((2, 3))), L.T(rnd((2, 3))), L.T(rnd((3, 3)))])),
    ("stack-dim-oob", lambda L: L.A.stack.default([L.T(rnd((2, 3))), L.T(rnd((2, 3)))], 3)),
]


@pytest.mark.parametrize("case", JOIN_CASES, ids=ids(JOIN_CASES))
def test_cat_stack(case):
    check(case[1])


CLONE_INPUTS = [
    ("contiguous", lambda: rnd((2, 3))),
    ("transposed", lambda: tr((2, 3))),
    ("permuted", lambda: rnd((2, 3, 4)).transpose(2, 0, 1)),
    ("sliced", lambda: sl((3, 4))),
    ("sliced-t", lambda: sl((3, 4)).T),
    ("size-1", lambda: rnd((2, 1, 3)).transpose(1, 0, 2)),
    ("expanded", lambda: np.broadcast_to(rnd((3, 1)), (3, 4))),
    ("0d", lambda: np.array(1.5)),
    ("empty", lambda: rnd((0, 3))),
    ("nchw", lambda: rnd((2, 3, 4, 5))),
]


CLONE_CASES = [(f"{name}-{fmt}", make, fmt) for name, make in CLONE_INPUTS
               for fmt in (None, "contiguous_format", "preserve_format", "channels_last")
               if fmt != "channels_last" or name == "nchw"]


@pytest.mark.parametrize("case", CLONE_CASES, ids=ids(CLONE_CASES))
def test_clone(case):
    _, make, fmt = case

    def fn(L):
        mf = None if fmt is None else getattr(torch if L is TORCH else dc, fmt)
        return L.A.clone.default(L.T(make()), memory_format=mf)

    check(fn)


COPY_CASES = [
    ("same", lambda: (rnd((2, 3)), rnd((2, 3), seed=1))),
    ("broadcast", lambda: (rnd((2, 3)), rnd((3,), seed=1))),
    ("cast-float-int", lambda: (np.zeros(3, np.int64), np.array([1.7, -1.7, 2.5]))),
    ("cast-float-bool", lambda: (np.zeros(3, bool), np.array([0.5, 0.0, 2.0]))),
    ("cast-float-u8", lambda: (np.zeros(3, np.uint8), np.array([-1.0, 300.0, 2.0]))),
    ("cast-i64-i32", lambda: (np.zeros(2, np.int32), np.array([2**40, -(2**33) - 3]))),
    ("cast-f64-f16", lambda: (np.zeros(3, np.float16), rnd((3,), "float64"))),
    ("into-transposed", lambda: (tr((3, 4)), rnd((3, 4), seed=1))),
    ("from-sliced", lambda: (rnd((3, 4)), sl((3, 4), seed=1))),
    ("empty", lambda: (rnd((0, 3)), rnd((3,)))),
    ("bigger-src", lambda: (rnd((3,)), rnd((2, 3)))),
    ("mismatch", lambda: (rnd((3,)), rnd((4,)))),
]


@pytest.mark.parametrize("inputs", COPY_CASES, ids=ids(COPY_CASES))
def test_copy_(inputs):
    def fn(L):
        x, y = map(L.T, inputs[1]())
        r = L.A.copy_.default(x, y)
        assert r is x
        return r

    check(fn)


FILL_CASES = [
    ("f32", "float32", 2.5), ("f32-int", "float32", 3), ("i64-float", "int64", 2.7), ("i64-neg-float", "int64", -2.7),
    ("u8-neg", "uint8", -1), ("u8-neg255", "uint8", -255), ("u8-neg256", "uint8", -256), ("u8-300", "uint8", 300),
    ("i8-300", "int8", 300), ("i16-big", "int16", 2**20), ("i32-big", "int32", 2**40), ("bool-2", "bool", 2),
    ("bool-half", "bool", 0.5), ("f16-big", "float16", 1e6), ("f16-nan", "float16", float("nan")),
    ("f32-big", "float32", 1e300), ("f32-inf", "float32", float("inf")), ("i64-nan", "int64", float("nan")),
    ("i64-big-float", "int64", 1e30), ("i64-complex", "int64", 1j),
]


@pytest.mark.parametrize("case", FILL_CASES, ids=ids(FILL_CASES))
def test_fill_(case):
    _, dtype, value = case

    def fn(L):
        x = L.T(np.zeros((2, 3), dtype))
        r = L.A.fill_.Scalar(x, value)
        assert r is x
        return r

    check(fn)


@pytest.mark.parametrize("inputs", [("f32", lambda: rnd((2, 3))), ("transposed", lambda: tr((2, 3))),
                                    ("i64", lambda: rnd((3,), "int64")), ("0d", lambda: np.array(2.0))],
                         ids=["f32", "transposed", "i64", "0d"])
def test_zero_(inputs):
    check(lambda L: L.A.zero_.default(L.T(inputs[1]())))
    check(lambda L: L.A.fill_.Scalar(L.T(inputs[1]()), 1))


TO_COPY_CASES = [
    ("same", lambda L: L.A._to_copy.default(L.T(rnd((2, 3))))),
    ("dtype", lambda L: L.A._to_copy.default(L.T(rnd((2, 3))), dtype=L.D("float64"))),
    ("float-to-int", lambda L: L.A._to_copy.default(L.T(rnd((2, 3))), dtype=L.D("int32"))),
    ("transposed", lambda L: L.A._to_copy.default(L.T(tr((2, 3))), dtype=L.D("float16"))),
    ("device-cpu", lambda L: L.A._to_copy.default(L.T(rnd((2, 3))), device="cpu")),
]


@pytest.mark.parametrize("case", TO_COPY_CASES, ids=ids(TO_COPY_CASES))
def test_to_copy(case):
    check(case[1])


# --- views ----------------------------------------------------------------------------------------
def _view_base(L):
    return L.T(np.arange(24, dtype=np.float32))


VIEW_CASES = [
    ("view", lambda L: L.A.view.default(L.T(rnd((3, 4))), [2, 6])),
    ("view-infer", lambda L: L.A.view.default(L.T(rnd((3, 4))), [-1])),
    ("view-infer2", lambda L: L.A.view.default(L.T(rnd((3, 4))), [2, -1, 3])),
    ("view-transposed-ok", lambda L: L.A.view.default(L.T(rnd((4, 3, 2)).transpose(1, 0, 2)), [3, 2, 2, 2])),
    ("view-sliced-ok", lambda L: L.A.view.default(L.T(sl((3, 4))), [3, 2, 2])),
    ("view-size-1", lambda L: L.A.view.default(L.T(tr((3, 4))), [4, 1, 3, 1])),
    ("view-0d", lambda L: L.A.view.default(L.T(np.array(1.0)), [])),
    ("view-0d-1", lambda L: L.A.view.default(L.T(np.array(1.0)), [-1])),
    ("view-empty", lambda L: L.A.view.default(L.T(rnd((0, 3))), [3, 0])),
    ("view-incompatible", lambda L: L.A.view.default(L.T(tr((4, 3))), [12])),
    ("view-invalid", lambda L: L.A.view.default(L.T(rnd((12,))), [3, 5])),
    ("view-two-infer", lambda L: L.A.view.default(L.T(rnd((12,))), [-1, -1])),
    ("view-negative", lambda L: L.A.view.default(L.T(rnd((12,))), [-2, 6])),
    ("view-ambiguous", lambda L: L.A.view.default(L.T(rnd((0,))), [-1, 0])),
    ("reshape_alias", lambda L: L.A._reshape_alias.default(L.T(rnd((3, 4))), [4, 3], [1, 4])),
    ("t", lambda L: L.A.t.default(L.T(rnd((3, 4))))),
    ("t-1d", lambda L: L.A.t.default(L.T(rnd((3,))))),
    ("t-0d", lambda L: L.A.t.default(L.T(np.array(1.0)))),
    ("t-3d", lambda L: L.A.t.default(L.T(rnd((2, 3, 4))))),
    ("transpose", lambda L: L.A.transpose.int(L.T(rnd((2, 3, 4))), 0, -1)),
    ("transpose-sliced", lambda L: L.A.transpose.int(L.T(sl((3, 4))), 1, 0)),
    ("transpose-0d", lambda L: L.A.transpose.int(L.T(np.array(1.0)), 0, -1)),
    ("transpose-oob", lambda L: L.A.transpose.int(L.T(rnd((2, 3))), 0, 2)),
    ("permute", lambda L: L.A.permute.default(L.T(rnd((2, 3, 4))), [2, 0, 1])),
    ("permute-neg", lambda L: L.A.permute.default(L.T(rnd((2, 3, 4))), [-1, 0, 1])),
    ("permute-len", lambda L: L.A.permute.default(L.T(rnd((2, 3))), [0])),
    ("permute-dup", lambda L: L.A.permute.default(L.T(rnd((2, 3))), [0, 0])),
    ("permute-oob", lambda L: L.A.permute.default(L.T(rnd((2, 3))), [0, 2])),
    ("expand", lambda L: L.A.expand.default(L.T(rnd((3, 1))), [3, 4])),
    ("expand-new-dims", lambda L: L.A.expand.default(L.T(rnd((3,))), [2, 4, 3])),
    ("expand-keep", lambda L: L.A.expand.default(L.T(rnd((3, 1))), [-1, 5])),
    ("expand-same", lambda L: L.A.expand.default(L.T(rnd((3, 1))), [3, 1])),
    ("expand-sliced", lambda L: L.A.expand.default(L.T(sl((3, 1))), [2, 3, 4])),
    ("expand-0d", lambda L: L.A.expand.default(L.T(np.array(2.0)), [2, 2])),
    ("expand-bad", lambda L: L.A.expand.default(L.T(rnd((2, 3))), [3, 3])),
    ("expand-fewer", lambda L: L.A.expand.default(L.T(rnd((2, 3))), [3])),
    ("expand-leading-infer", lambda L: L.A.expand.default(L.T(rnd((3,))), [-1, 3])),
    ("expand-negative", lambda L: L.A.expand.default(L.T(rnd((3,))), [2, -2])),
    ("squeeze", lambda L: L.A.squeeze.default(L.T(rnd((1, 3, 1, 2))))),
    ("squeeze-transposed", lambda L: L.A.squeeze.default(L.T(rnd((3, 1, 2)).transpose(2, 1, 0)))),
    ("squeeze-0d", lambda L: L.A.squeeze.default(L.T(np.array(1.0)))),
    ("squeeze-dim", lambda L: L.A.squeeze.dim(L.T(rnd((1, 3, 1))), -1)),
    ("squeeze-dim-noop", lambda L: L.A.squeeze.dim(L.T(rnd((2, 3))), 1)),
    ("squeeze-dim-0d", lambda L: L.A.squeeze.dim(L.T(np.array(1.0)), 0)),
    ("squeeze-dim-oob", lambda L: L.A.squeeze.dim(L.T(rnd((2, 3))), 2)),
    *[(f"unsqueeze-{d}", lambda L, d=d: L.A.unsqueeze.default(L.T(tr((3, 2))), d)) for d in (0, 1, 2, -1)],
    ("unsqueeze-sliced", lambda L: L.A.unsqueeze.default(L.T(sl((3, 2))), 1)),
    ("unsqueeze-0d", lambda L: L.A.unsqueeze.default(L.T(np.array(1.0)), 0)),
    ("unsqueeze-oob", lambda L: L.A.unsqueeze.default(L.T(rnd((2, 3))), 3)),
    ("unsqueeze-oob-neg", lambda L: L.A.unsqueeze.default(L.T(rnd((2, 3))), -4)),
    ("select", lambda L: L.A.select.int(L.T(rnd((3, 4))), 0, 1)),
    ("select-neg", lambda L: L.A.select.int(L.T(rnd((3, 4))), 1, -1)),
    ("select-to-0d", lambda L: L.A.select.int(L.T(rnd((3,))), 0, 2)),
    ("select-transposed", lambda L: L.A.select.int(L.T(tr((3, 4))), 1, 2)),
    ("select-oob", lambda L: L.A.select.int(L.T(rnd((3,))), 0, 5)),
    ("select-oob-neg", lambda L: L.A.select.int(L.T(rnd((3,))), 0, -4)),
    ("select-0d", lambda L: L.A.select.int(L.T(np.array(1.0)), 0, 0)),
    ("select-dim-oob", lambda L: L.A.select.int(L.T(rnd((3, 2))), 2, 0)),
    ("slice", lambda L: L.A.slice.Tensor(L.T(rnd((5, 4))), 0, 1, 4)),
    ("slice-step", lambda L: L.A.slice.Tensor(L.T(rnd((5, 4))), 1, None, None, 2)),
    ("slice-clamp", lambda L: L.A.slice.Tensor(L.T(rnd((5,))), 0, -10, 100, 2)),
    ("slice-negative", lambda L: L.A.slice.Tensor(L.T(rnd((5,))), 0, -3, -1)),
    ("slice-empty", lambda L: L.A.slice.Tensor(L.T(rnd((5,))), 0, 4, 2)),
    ("slice-defaults", lambda L: L.A.slice.Tensor(L.T(rnd((5,))))),
    ("slice-step0", lambda L: L.A.slice.Tensor(L.T(rnd((5,))), 0, 0, 3, 0)),
    ("slice-0d", lambda L: L.A.slice.Tensor(L.T(np.array(1.0)), 0, 0, 3, 1)),
    ("as_strided", lambda L: L.A.as_strided.default(L.T(np.arange(10.0)[2:]), [2, 2], [1, 2], 1)),
    ("as_strided-own-offset", lambda L: L.A.as_strided.default(L.T(np.arange(10.0)[2:]), [2, 2], [1, 2])),
    ("as_strided-overlap", lambda L: L.A.as_strided.default(L.T(np.arange(10.0)), [3, 3], [1, 1])),
    ("as_strided-oob", lambda L: L.A.as_strided.default(L.T(np.arange(10.0)), [5, 5], [1, 2])),
    ("as_strided-neg", lambda L: L.A.as_strided.default(L.T(np.arange(10.0)), [2], [-1])),
    ("alias", lambda L: L.A.alias.default(L.T(sl((3, 4))))),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=ids(VIEW_CASES))
def test_view_ops(case):
    check(case[1])


# --- factories ------------------------------------------------------------------------------------
FACTORY_CASES = [
    ("zeros", lambda L: L.F(L.A.zeros.default, [2, 3])),
    ("zeros-dtype", lambda L: L.F(L.A.zeros.default, [2], dtype=L.D("int32"))),
    ("zeros-negative", lambda L: L.F(L.A.zeros.default, [2, -1])),
    ("ones", lambda L: L.F(L.A.ones.default, [3], dtype=L.D("float16"))),
    ("ones-negative", lambda L: L.F(L.A.ones.default, [-1])),
    ("empty-meta", lambda L: L.F(L.A.empty.memory_format, [2, 3], dtype=L.D("int64"))),
    ("empty-negative", lambda L: L.F(L.A.empty.memory_format, [2, -1])),
    ("full-bool", lambda L: L.F(L.A.full.default, [2], True)),
    ("full-int", lambda L: L.F(L.A.full.default, [2], 3)),
    ("full-float", lambda L: L.F(L.A.full.default, [2, 2], 3.5)),
    ("full-int-dtype", lambda L: L.F(L.A.full.default, [2], 3.5, dtype=L.D("int32"))),
    ("full-complex", lambda L: L.F(L.A.full.default, [2], 1j)),
    ("full-u8-300", lambda L: L.F(L.A.full.default, [2], 300, dtype=L.D("uint8"))),
    ("full-i32-big", lambda L: L.F(L.A.full.default, [2], 2**40, dtype=L.D("int32"))),
    ("full-negative", lambda L: L.F(L.A.full.default, [-1], 2.0)),
    ("arange-int", lambda L: L.F(L.A.arange.start_step, 0, 5)),
    ("arange-float-step", lambda L: L.F(L.A.arange.start_step, 0, 5, 0.5)),
    ("arange-float-start", lambda L: L.F(L.A.arange.start_step, 0.5, 5)),
    ("arange-neg", lambda L: L.F(L.A.arange.start_step, 5, 0, -1.5)),
    ("arange-neg-int", lambda L: L.F(L.A.arange.start_step, 10, 0, -3)),
    ("arange-uneven", lambda L: L.F(L.A.arange.start_step, 0, 10, 3)),
    ("arange-rounding-f32", lambda L: L.F(L.A.arange.start_step, 1.0, 1.3, 0.1)),
    ("arange-rounding-f64", lambda L: L.F(L.A.arange.start_step, 1.0, 1.3, 0.1, dtype=L.D("float64"))),
    ("arange-f16", lambda L: L.F(L.A.arange.start_step, 0, 2, 0.3, dtype=L.D("float16"))),
    ("arange-int-dtype-float-step", lambda L: L.F(L.A.arange.start_step, 0, 5, 1.5, dtype=L.D("int64"))),
    ("arange-int-dtype-float-start", lambda L: L.F(L.A.arange.start_step, 0.5, 5, 1, dtype=L.D("int64"))),
    ("arange-i32", lambda L: L.F(L.A.arange.start_step, 0, 7, 2, dtype=L.D("int32"))),
    ("arange-empty", lambda L: L.F(L.A.arange.start_step, 0, 0)),
    ("arange-step0", lambda L: L.F(L.A.arange.start_step, 0, 5, 0)),
    ("arange-step-truncates-to-0", lambda L: L.F(L.A.arange.start_step, 0, 5, 0.5, dtype=L.D("int64"))),
    ("arange-direction", lambda L: L.F(L.A.arange.start_step, 0, 5, -1)),
    ("arange-inf", lambda L: L.F(L.A.arange.start_step, 0, float("inf"))),
    ("arange-bool", lambda L: L.F(L.A.arange.start_step, 0, 2, 1, dtype=L.D("bool"))),
    ("linspace", lambda L: L.F(L.A.linspace.default, 0, 1, 5)),
    ("linspace-ints", lambda L: L.F(L.A.linspace.default, 0, 10, 5)),
    ("linspace-odd", lambda L: L.F(L.A.linspace.default, -1.3, 2.7, 7)),
    ("linspace-f64", lambda L: L.F(L.A.linspace.default, -1.3, 2.7, 7, dtype=L.D("float64"))),
    ("linspace-i64", lambda L: L.F(L.A.linspace.default, 0, 10, 4, dtype=L.D("int64"))),
    ("linspace-u8-desc", lambda L: L.F(L.A.linspace.default, 10, 0, 4, dtype=L.D("uint8"))),
    ("linspace-1", lambda L: L.F(L.A.linspace.default, 2, 10, 1)),
    ("linspace-0", lambda L: L.F(L.A.linspace.default, 2, 10, 0)),
    ("linspace-negative", lambda L: L.F(L.A.linspace.default, 2, 10, -1)),
    ("linspace-bool", lambda L: L.F(L.A.linspace.default, 0, 1, 3, dtype=L.D("bool"))),
    ("scalar_tensor", lambda L: L.F(L.A.scalar_tensor.default, 3)),
    ("scalar_tensor-bool", lambda L: L.F(L.A.scalar_tensor.default, True)),
    ("scalar_tensor-dtype", lambda L: L.F(L.A.scalar_tensor.default, 2.5, dtype=L.D("float64"))),
]


@pytest.mark.parametrize("case", FACTORY_CASES, ids=ids(FACTORY_CASES))
def test_factories(case):
    check(case[1], meta_only=case[0].startswith("empty"))


RANDOM_CASES = [
    ("rand", lambda L: L.F(L.A.rand.default, [2, 3])),
    ("rand-f64", lambda L: L.F(L.A.rand.default, [4], dtype=L.D("float64"))),
    ("rand-f16", lambda L: L.F(L.A.rand.default, [4], dtype=L.D("float16"))),
    ("rand-int", lambda L: L.F(L.A.rand.default, [2], dtype=L.D("int64"))),
    ("rand-negative", lambda L: L.F(L.A.rand.default, [-1])),
    ("randn", lambda L: L.F(L.A.randn.default, [2, 3])),
    ("randn-f16", lambda L: L.F(L.A.randn.default, [3], dtype=L.D("float16"))),
    ("randn-int", lambda L: L.F(L.A.randn.default, [2], dtype=L.D("int64"))),
    ("empty_strided", lambda L: L.F(L.A.empty_strided.default, [2, 3], [1, 2])),
    ("empty_strided-negative-size", lambda L: L.F(L.A.empty_strided.default, [-1], [1])),
    ("empty_strided-negative-stride", lambda L: L.F(L.A.empty_strided.default, [2, 3], [-1, 2])),
]


@pytest.mark.parametrize("case", RANDOM_CASES, ids=ids(RANDOM_CASES))
def test_random_and_uninitialised_factories(case):
    check(case[1], meta_only=True)
