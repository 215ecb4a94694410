"""Python numbers as operands, and the overloads functions and methods pick, against torch 2.13.

For every binary op with a Python number on either side: the result's dtype and values, the
autograd node, and the aten overload a dispatch mode sees (torch wraps the number and calls the
``.Tensor`` overload: See Note [Wrapped numbers] in dispatchcore/_composites.py). Then each overload
issue #14 fixed: clamp/clamp_min with tensor bounds, squeeze with a dims tuple, div with
rounding_mode, max/min of two tensors (maximum/minimum), rsub, reciprocal and an empty matmul,
with values, dtypes, shapes, node names and gradients.
"""

from __future__ import annotations

import cmath
import math
import re
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import functions as F
from dispatchcore.dtypes import is_wrapped_number

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

pytestmark = pytest.mark.differential

DTYPES = ("bool", "uint8", "int32", "int64", "float32", "float64")
NUMBERS = (True, 3, -2, 2.5, -0.5)
VALUES = {"bool": [True, False, True], "uint8": [1, 7, 200], "int32": [-3, 4, 7], "int64": [-9, 2, 5],
          "float32": [-1.5, 0.25, 3.0], "float64": [2.0, -0.125, 7.5]}

# expression over x (a tensor) and n (a number) -> (torch's op names seen by a dispatch mode)
EXPRESSIONS = ("x * n", "n * x", "x + n", "n + x", "x - n", "n - x", "x / n", "n / x",
               "x ** n", "n ** x", "x == n", "x < n", "n < x", "x >= n")
FUNCTIONS = ("mul(x, n)", "mul(n, x)", "add(x, n)", "add(n, x)", "sub(x, n)", "sub(n, x)", "div(x, n)",
             "div(n, x)", "true_divide(x, n)", "add(x, n, alpha=2)", "sub(x, n, alpha=2)", "rsub(x, n)",
             "pow(x, n)", "pow(n, x)", "eq(x, n)", "gt(x, n)")
INPLACE = ("x.add_(n)", "x.sub_(n)", "x.mul_(n)", "x.div_(n)", "x.pow_(n)", "x.add_(n, alpha=2)")


class _Seen(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []
        self.args = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        self.args.append(args)
        return func(*args, **(kwargs or {}))


def _run_torch(expr, x, n):
    names = {"x": x, "n": n, "torch": torch}
    fn = expr.split("(")[0]
    if fn in {"mul", "add", "sub", "div", "true_divide", "rsub", "pow", "eq", "gt"} and not expr.startswith("x"):
        expr = "torch." + expr
    with _Seen() as seen:
        try:
            result = eval(expr, names)  # noqa: S307 - a fixed expression table
        except (RuntimeError, TypeError, NotImplementedError) as e:
            return ("error", type(e).__name__), seen
    return result, seen


def _run_dc(expr, x, n):
    names = {"x": x, "n": n, "dc": dc}
    fn = expr.split("(")[0]
    if fn in {"mul", "add", "sub", "div", "true_divide", "rsub", "pow", "eq", "gt"} and not expr.startswith("x"):
        expr = "F." + expr
        names["F"] = F
    with dc.LoggingMode() as log:
        try:
            result = eval(expr, names)  # noqa: S307
        except (RuntimeError, TypeError, NotImplementedError) as e:
            return ("error", type(e).__name__), log
    return result, log


def _same_values(t, d):
    a, b = t.tolist(), d.tolist()
    if not isinstance(a, list):
        a, b = [a], [b]
    for u, v in zip(a, b):
        if isinstance(u, float) and math.isnan(u):
            assert isinstance(v, float) and math.isnan(v)
        elif isinstance(u, complex) and cmath.isnan(u):
            assert isinstance(v, complex) and cmath.isnan(v)
        else:
            assert u == pytest.approx(v, rel=1e-6, abs=1e-6), (a, b)


def _check(expr, dtype, n, *, requires_grad=False):
    tx = torch.tensor(VALUES[dtype], dtype=getattr(torch, dtype))
    dx = dc.tensor(VALUES[dtype], dtype=getattr(dc, dtype))
    if requires_grad:
        tx.requires_grad_(True)
        dx.requires_grad_(True)
        if expr.startswith("x.") and "_(" in expr:  # in place on a leaf: on a clone
            tx, dx = tx.clone(), dx.clone()
    t_result, seen = _run_torch(expr, tx, n)
    d_result, log = _run_dc(expr, dx, n)
    if isinstance(t_result, tuple):
        assert isinstance(d_result, tuple) and d_result[0] == "error", (expr, dtype, n, t_result, d_result)
        return
    assert not isinstance(d_result, tuple), (expr, dtype, n, d_result)
    assert str(d_result.dtype).rpartition(".")[2] == str(t_result.dtype).rpartition(".")[2], (expr, dtype, n)
    _same_values(t_result.detach(), d_result.detach())
    # a saved output is detached through the mode in both (Note [Detach through Python])
    assert log.ops == seen.ops, (expr, dtype, n)
    # both hand the mode the number itself, of the same type (Note [Numbers for a mode])
    for t_args, record in zip(seen.args, log.records):
        # (zip: torch drops trailing arguments equal to their defaults, parseIValuesToPyArgsKwargs;
        # dispatchcore hands the mode what the caller passed, so rsub(x, n) shows alpha=1 here)
        for ta, da in zip(t_args, record.args):
            if isinstance(ta, torch.Tensor):
                assert isinstance(da, dc.Tensor) and not is_wrapped_number(da), (expr, dtype, n)
            else:
                assert type(da) is type(ta) and da == ta, (expr, dtype, n, ta, da)
    if requires_grad:
        t_node = type(t_result.grad_fn).__name__ if t_result.grad_fn is not None else None
        d_node = type(d_result.grad_fn).__name__ if d_result.grad_fn is not None else None
        assert d_node == t_node, (expr, dtype, n)


@pytest.mark.parametrize("n", NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("expr", EXPRESSIONS + FUNCTIONS)
def test_number_operands_promote_and_dispatch_as_torch(expr, dtype, n):
    _check(expr, dtype, n)


@pytest.mark.parametrize("n", NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("expr", INPLACE)
def test_inplace_number_operands_dispatch_as_torch(expr, dtype, n):
    _check(expr, dtype, n)


@pytest.mark.parametrize("n", (2, 2.5, True), ids=repr)
@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("expr", EXPRESSIONS + FUNCTIONS + INPLACE)
def test_number_operands_record_torchs_nodes(expr, dtype, n):
    _check(expr, dtype, n, requires_grad=True)


def test_a_zero_dim_tensor_is_not_a_wrapped_number():
    """An int tensor with a 0-d float64 tensor is float64; with the number 2.5 it is float32."""
    for lib in (torch, dc):
        x = lib.tensor([1, 2], dtype=lib.int32)
        assert str((x * lib.tensor(2.5, dtype=lib.float64)).dtype).endswith("float64")
        assert str((x * 2.5).dtype).endswith("float32")
        assert str((lib.tensor(2, dtype=lib.int32) * 2).dtype).endswith("int32")


def test_the_scalar_overloads_stay_callable():
    tx, dx = torch.ones(2, requires_grad=True), dc.ones(2, requires_grad=True)
    assert (type(torch.ops.aten.mul.Scalar(tx, 2).grad_fn).__name__
            == type(dc.ops.aten.mul.Scalar(dx, 2).grad_fn).__name__ == "MulBackward1")
    assert (type(torch.ops.aten.add.Scalar(tx, 2).grad_fn).__name__
            == type(dc.ops.aten.add.Scalar(dx, 2).grad_fn).__name__ == "AddBackward1")


# --- the overloads fixed in issue #14 ------------------------------------------------------------
def _pair(values, dtype="float32", requires_grad=False, shape=None):
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    d = dc.tensor(values, dtype=getattr(dc, dtype))
    if shape is not None:
        t, d = t.reshape(shape), d.reshape(shape)
    if requires_grad:
        t, d = t.detach().requires_grad_(True), d.detach().requires_grad_(True)
    return t, d


X = [1.0, -2.0, 3.0, 0.5, 2.0, -1.0]
LO = [0.0, 0.0, 5.0, 0.5, -1.0, 2.0]
HI = [2.0, 2.0, 2.0, 0.25, 3.0, 1.0]

OVERLOAD_CASES = {
    # name: (torch call, dispatchcore call): each gets the tensors (x, lo, hi) of its library
    "clamp(x, lo, hi)": (lambda x, lo, hi: torch.clamp(x, lo, hi), lambda x, lo, hi: dc.clamp(x, lo, hi)),
    "x.clamp(lo)": (lambda x, lo, hi: x.clamp(lo), lambda x, lo, hi: x.clamp(lo)),
    "x.clamp(max=hi)": (lambda x, lo, hi: x.clamp(max=hi), lambda x, lo, hi: x.clamp(max=hi)),
    "clamp(x, 0, 0-d)": (lambda x, lo, hi: torch.clamp(x, 0, torch.tensor(1.0)),
                         lambda x, lo, hi: dc.clamp(x, 0, dc.tensor(1.0))),
    "clamp(x, min=0-d, max=1)": (lambda x, lo, hi: torch.clamp(x, min=torch.tensor(0.0), max=1),
                                 lambda x, lo, hi: dc.clamp(x, min=dc.tensor(0.0), max=1)),
    "clamp_min(x, lo)": (lambda x, lo, hi: torch.clamp_min(x, lo), lambda x, lo, hi: dc.clamp_min(x, lo)),
    "clamp_min(x, 0)": (lambda x, lo, hi: torch.clamp_min(x, 0), lambda x, lo, hi: dc.clamp_min(x, 0)),
    "max(x, lo)": (lambda x, lo, hi: torch.max(x, lo), lambda x, lo, hi: dc.max(x, lo)),
    "x.max(lo)": (lambda x, lo, hi: x.max(lo), lambda x, lo, hi: x.max(lo)),
    "min(x, hi)": (lambda x, lo, hi: torch.min(x, hi), lambda x, lo, hi: F.min(x, hi)),
    "maximum(x, lo)": (lambda x, lo, hi: torch.maximum(x, lo), lambda x, lo, hi: F.maximum(x, lo)),
    "minimum(x, hi)": (lambda x, lo, hi: torch.minimum(x, hi), lambda x, lo, hi: F.minimum(x, hi)),
    "squeeze(x, (0, 2))": (lambda x, lo, hi: torch.squeeze(x.reshape(1, 6, 1), (0, 2)),
                           lambda x, lo, hi: dc.squeeze(x.reshape(1, 6, 1), (0, 2))),
    "x.squeeze([0])": (lambda x, lo, hi: x.reshape(1, 6).squeeze([0]),
                       lambda x, lo, hi: x.reshape(1, 6).squeeze([0])),
    "div(x, lo, floor)": (lambda x, lo, hi: torch.div(x, hi, rounding_mode="floor"),
                          lambda x, lo, hi: dc.div(x, hi, rounding_mode="floor")),
    "div(x, 2, trunc)": (lambda x, lo, hi: torch.div(x, 2, rounding_mode="trunc"),
                         lambda x, lo, hi: dc.div(x, 2, rounding_mode="trunc")),
    "div(x, hi, None)": (lambda x, lo, hi: torch.div(x, hi, rounding_mode=None),
                         lambda x, lo, hi: dc.div(x, hi, rounding_mode=None)),
    "x.div(2.5, floor)": (lambda x, lo, hi: x.div(2.5, rounding_mode="floor"),
                          lambda x, lo, hi: x.div(2.5, rounding_mode="floor")),
    "rsub(x, lo)": (lambda x, lo, hi: torch.rsub(x, lo), lambda x, lo, hi: F.rsub(x, lo)),
    "rsub(x, lo, alpha=2)": (lambda x, lo, hi: torch.rsub(x, lo, alpha=2), lambda x, lo, hi: F.rsub(x, lo, alpha=2)),
    "rsub(x, 3)": (lambda x, lo, hi: torch.rsub(x, 3), lambda x, lo, hi: F.rsub(x, 3)),
    "reciprocal(x)": (lambda x, lo, hi: torch.reciprocal(x), lambda x, lo, hi: F.reciprocal(x)),
    "3 / x": (lambda x, lo, hi: 3 / x, lambda x, lo, hi: 3 / x),
    "2 - x": (lambda x, lo, hi: 2 - x, lambda x, lo, hi: 2 - x),
}


def _backward_grads(result, inputs):
    result.backward(result.detach() * 0 + 1 if result.dim() else None)
    return [None if t.grad is None else t.grad.tolist() for t in inputs]


@pytest.mark.parametrize("name", list(OVERLOAD_CASES))
def test_overloads_match_torch(name):
    t_call, d_call = OVERLOAD_CASES[name]
    tx, dx = _pair(X, requires_grad=True)
    tlo, dlo = _pair(LO, requires_grad=True)
    thi, dhi = _pair(HI, requires_grad=True)
    with _Seen() as seen:
        t_result = t_call(tx, tlo, thi)
    with dc.LoggingMode() as log:
        d_result = d_call(dx, dlo, dhi)
    ignore = {"aten.lift_fresh.default", "aten._local_scalar_dense.default", "aten.detach.default",
              "aten.view.default",
              "aten._unsafe_view.default", "aten.reshape.default"}
    assert [op for op in log.ops if op not in ignore] == [op for op in seen.ops if op not in ignore]
    assert tuple(d_result.shape) == tuple(t_result.shape)
    assert str(d_result.dtype).rpartition(".")[2] == str(t_result.dtype).rpartition(".")[2]
    _same_values(t_result.detach(), d_result.detach())
    assert type(d_result.grad_fn).__name__ == type(t_result.grad_fn).__name__
    t_grads = _backward_grads(t_result.sum(), [tx, tlo, thi])
    d_grads = _backward_grads(d_result.sum(), [dx, dlo, dhi])
    for d_grad, t_grad in zip(d_grads, t_grads):
        assert (d_grad is None) == (t_grad is None), (d_grads, t_grads)
        if t_grad is not None:
            assert d_grad == pytest.approx(t_grad)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float32", "float64"])
def test_div_rounding_modes_match_torch(mode, dtype):
    values = [7, 8, 9, 0, 5] if dtype == "uint8" else [-7, 7, -8, 0, 5]
    divisors = [2, 3, 2, 4, 5] if dtype == "uint8" else [2, -3, 3, -4, 2]
    t, d = _pair(values, dtype)
    tb, db = _pair(divisors, dtype)
    for tr, dr in ((torch.div(t, tb, rounding_mode=mode), dc.div(d, db, rounding_mode=mode)),
                   (torch.div(t, 2, rounding_mode=mode), dc.div(d, 2, rounding_mode=mode)),
                   (torch.div(t, 2.5, rounding_mode=mode), dc.div(d, 2.5, rounding_mode=mode)),
                   (t.clone().div_(tb, rounding_mode=mode), d.clone().div_(db, rounding_mode=mode))):
        assert str(dr.dtype).rpartition(".")[2] == str(tr.dtype).rpartition(".")[2]
        _same_values(tr, dr)


def test_div_rounding_mode_errors_match_torch():
    for lib in (torch, dc):
        with pytest.raises(RuntimeError, match="div expected rounding_mode to be one of None, 'trunc', "
                                               "or 'floor' but found 'round'"):
            lib.div(lib.ones(2), 2, rounding_mode="round")
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            lib.div(lib.tensor([1, 2]), 0, rounding_mode="floor")
        with pytest.raises(NotImplementedError, match='"div_trunc_cpu" not implemented for \'Bool\''):
            lib.div(lib.tensor([True]), True, rounding_mode="trunc")
    t = torch.div(torch.tensor([-7.0, 7.0, 0.0]), 0, rounding_mode="floor").tolist()
    d = dc.div(dc.tensor([-7.0, 7.0, 0.0]), 0, rounding_mode="floor").tolist()
    assert t[:2] == d[:2] and math.isnan(t[2]) and math.isnan(d[2])


def test_maximum_ties_split_the_gradient_as_torch():
    grads = []
    for lib in (torch, dc):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([1.0, 5.0, 3.0], requires_grad=True)
        maximum = torch.maximum if lib is torch else F.maximum
        (maximum(a, b) * lib.tensor([1.0, 2.0, 4.0])).sum().backward()
        grads.append((a.grad.tolist(), b.grad.tolist()))
    assert grads[0] == grads[1] == ([0.5, 0.0, 2.0], [0.5, 2.0, 2.0])


def test_maximum_and_clamp_propagate_nan_and_promote_as_torch():
    nan = float("nan")
    for t, d in ((torch.maximum(torch.tensor([1.0, nan]), torch.tensor([nan, 0.0])),
                  F.maximum(dc.tensor([1.0, nan]), dc.tensor([nan, 0.0]))),
                 (torch.clamp(torch.tensor([1, 5, -3]), torch.tensor(0.5)),
                  dc.clamp(dc.tensor([1, 5, -3]), dc.tensor(0.5))),
                 (torch.clamp(torch.tensor([1.0, nan, 3.0]), torch.tensor([nan, 0.0, 0.0]),
                              torch.tensor([2.0, 2.0, nan])),
                  dc.clamp(dc.tensor([1.0, nan, 3.0]), dc.tensor([nan, 0.0, 0.0]), dc.tensor([2.0, 2.0, nan])))):
        assert str(d.dtype).rpartition(".")[2] == str(t.dtype).rpartition(".")[2]
        _same_values(t, d)
    for lib in (torch, dc):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            lib.tensor([1, 2]).clamp_(lib.tensor(0.5))
        with pytest.raises(TypeError, match="clamp"):
            lib.clamp(lib.ones(3), 0, lib.ones(3))


def test_clamp_tensor_bounds_with_min_above_max_match_torch():
    grads = []
    for lib in (torch, dc):
        x = lib.tensor([0.0, 3.0, 1.5], requires_grad=True)
        lo = lib.tensor([2.0, 2.0, 1.0], requires_grad=True)
        hi = lib.tensor([1.0, 1.0, 2.0], requires_grad=True)
        r = lib.clamp(x, lo, hi)
        r.sum().backward()
        grads.append((r.tolist(), x.grad.tolist(), lo.grad.tolist(), hi.grad.tolist()))
    assert grads[0] == grads[1]


def test_empty_matmul_is_zeros_with_torchs_node_and_gradients():
    results = []
    for lib in (torch, dc):
        a = lib.ones(5, 5, 0, requires_grad=True)
        b = lib.ones(0, 5, requires_grad=True)
        r = lib.matmul(a, b)
        r.sum().backward()
        results.append((tuple(r.shape), r.tolist(), type(r.grad_fn).__name__, tuple(a.grad.shape), tuple(b.grad.shape)))
    assert results[0] == results[1]
    assert results[0][0] == (5, 5, 5) and results[0][2] == "UnsafeViewBackward0"


# --- handles take numbers for Tensor arguments where torch's do (Note [Numbers for Tensors]) -----
HANDLE_CALLS = (
    "mul.Tensor(x, n)", "mul.Tensor(n, x)", "add.Tensor(x, n)", "add.Tensor(n, x)", "add.Tensor(x, n, alpha=2)",
    "sub.Tensor(x, n)", "sub.Tensor(n, x)", "div.Tensor(x, n)", "div.Tensor(n, x)",
    "div.Tensor_mode(x, n, rounding_mode='floor')", "div.Tensor_mode(x, n, rounding_mode='trunc')",
    "add_.Tensor(x.clone(), n)", "sub_.Tensor(x.clone(), n)", "mul_.Tensor(x.clone(), n)",
    "div_.Tensor(x.clone(), n)", "mul.Tensor(x, other=n)", "mul.Tensor(self=n, other=x)",
    "mul.out(x, n, out=x.clone())", "copy_.default(x.clone(), n)", "_to_copy.default(n)", "mul.Tensor(n, n)",
    "add_.Tensor(n, x)", "to.dtype(n, x.dtype)",
    # operators whose handles refuse a number for a Tensor
    "rsub.Tensor(x, n)", "eq.Tensor(x, n)", "maximum.default(x, n)", "relu.default(n)", "mm.default(x, n)",
    "where.self(x, x, n)", "clamp.Tensor(x, n)", "cat.default([x, n])", "pow.Tensor_Tensor(x, n)",
)
HANDLE_NUMBERS = (True, 3, -2, 2.5, 1j)


def _handle_result(ns, expr, x, n):
    try:
        with warnings.catch_warnings():  # complex to real: both warn
            warnings.simplefilter("ignore")
            result = eval("A." + expr, {"A": ns, "x": x, "n": n})  # noqa: S307 - a fixed table
    except (RuntimeError, TypeError, ZeroDivisionError) as e:
        text = str(e)
        return ("error", text.split("Declaration")[0].split("(")[0] if "Expected a value" in text else text[:60])
    return result


@pytest.mark.parametrize("n", HANDLE_NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", ("bool", "int32", "int64", "float32", "float64"))
@pytest.mark.parametrize("expr", HANDLE_CALLS)
def test_handles_take_numbers_for_tensors_as_torch(expr, dtype, n, request):
    if dtype == "bool" and isinstance(n, complex) and expr.startswith(("copy_", "to.")):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "complex to bool: torch drops the imaginary part first (1j -> False), the CPU copy kernel "
            "casts with numpy (1j -> True); backends/cpu/kernels.py")))
    if expr == "mul.Tensor(n, n)" and isinstance(n, (float, complex)):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "two wrapped numbers: torch promotes to the default dtype (float32, complex64); the CPU "
            "kernel's numpy arithmetic gives float64/complex128; backends/cpu/kernels.py")))
    tx = torch.tensor(VALUES[dtype], dtype=getattr(torch, dtype))
    dx = dc.tensor(VALUES[dtype], dtype=getattr(dc, dtype))
    with _Seen() as seen:
        t = _handle_result(torch.ops.aten, expr, tx, n)
    with dc.LoggingMode() as log:
        d = _handle_result(dc.ops.aten, expr, dx, n)
    if isinstance(t, tuple):
        assert isinstance(d, tuple), (expr, dtype, n, t, d)
        if "Expected a value" in t[1] or "Expected a value" in d[1]:
            assert d == t, (expr, dtype, n)  # bind's error, word for word up to the value
        return
    assert not isinstance(d, tuple), (expr, dtype, n, t, d)
    if not isinstance(t, torch.Tensor):  # a wrapped number written in place comes back a number
        assert type(d) is type(t) and d == t, (expr, dtype, n, t, d)
        return
    assert str(d.dtype).rpartition(".")[2] == str(t.dtype).rpartition(".")[2], (expr, dtype, n)
    assert tuple(d.shape) == tuple(t.shape)
    _same_values(t, d)
    assert log.ops == seen.ops, (expr, dtype, n)
    for t_args, record in zip(seen.args, log.records):
        for ta, da in zip(t_args, record.args):
            if not isinstance(ta, (torch.Tensor, list)):
                assert type(da) is type(ta) and da == ta, (expr, dtype, n)


@pytest.mark.parametrize("n", (2, 2.5, True), ids=repr)
@pytest.mark.parametrize("expr", ("mul.Tensor(x, n)", "mul.Tensor(n, x)", "add.Tensor(x, n, alpha=2)",
                                  "div.Tensor(x, n)", "sub.Tensor(n, x)"))
def test_handles_with_a_number_record_torchs_node(expr, n):
    tx = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    dx = dc.tensor([1.0, -2.0, 3.0], requires_grad=True)
    if n is True and expr.startswith("sub"):
        pytest.skip("bool subtraction is refused (both raise: test_handles_take_numbers_for_tensors_as_torch)")
    t = eval("A." + expr, {"A": torch.ops.aten, "x": tx, "n": n})  # noqa: S307
    d = eval("A." + expr, {"A": dc.ops.aten, "x": dx, "n": n})  # noqa: S307
    assert type(d.grad_fn).__name__ == type(t.grad_fn).__name__
    assert [f is None for f, _ in d.grad_fn.next_functions] == [f is None for f, _ in t.grad_fn.next_functions]
    t.sum().backward()
    d.sum().backward()
    _same_values(tx.grad, dx.grad)


def _split(*args, **kwargs):
    return args, kwargs


@pytest.mark.parametrize("call", ("add(x, n)", "add(n, x)", "add(x, n, alpha=2)", "add(x, n, 2)", "mul(x, n)",
                                  "sub(n, x)", "div(x, n)", "div(x, n, rounding_mode='floor')", "rsub(x, n)",
                                  "pow(x, n)", "eq(x, n)", "add_(x.clone(), n)", "floor_divide(x, n)"))
@pytest.mark.parametrize("n", (2, 2.5, True), ids=repr)
def test_packets_pick_torchs_overload_for_numbers(call, n):
    """``ops.aten.add(x, 2)`` is ``add.Tensor`` in torch (the number fits add.Tensor's Tensor); explain agrees."""
    name, rest = call.split("(", 1)
    if not hasattr(dc.ops.aten, name):
        pytest.skip(f"aten::{name} is not defined in dispatchcore")
    if n is True and name in ("sub", "rsub"):
        n = 3  # bool subtraction is refused
    tx, dx = torch.ones(2), dc.ones(2)
    with _Seen() as seen:
        t = eval("A." + call, {"A": torch.ops.aten, "x": tx, "n": n})  # noqa: S307
    with dc.LoggingMode() as log:
        d = eval("A." + call, {"A": dc.ops.aten, "x": dx, "n": n})  # noqa: S307
    assert log.ops[-1] == seen.ops[-1]
    assert str(d.dtype).rpartition(".")[2] == str(t.dtype).rpartition(".")[2]
    _same_values(t, d)
    args, kwargs = eval("_split(" + rest, {"_split": _split, "x": dx, "n": n})  # noqa: S307
    assert str(dc.explain(getattr(dc.ops.aten, name), *args, **kwargs).op) == seen.ops[-1]


@pytest.mark.parametrize("method", ["add_", "sub_", "mul_", "div_", "add", "mul"])
@pytest.mark.parametrize("dtype, value", [("float32", 1e39), ("float32", -1e39), ("float32", 1.0001),
                                          ("float32", 0.1), ("float32", 2**40 + 1), ("float64", 1e39),
                                          ("float16", 0.1), ("float16", 1e5), ("float16", 1.0001),
                                          ("float16", 3), ("float16", 2**40 + 1)])
def test_a_number_the_dtype_cannot_hold_or_a_cached_one_computes_as_torch(method, dtype, value):
    # an overflowing number gives inf in place too; a cached float32 number is the same operand;
    # float16 multiplies and divides by the number at float32 precision (0.0 * 1e5 is 0)
    values = [1.5, -2.0, 0.0, 3e-3]
    ours, theirs = dc.tensor(values, dtype=getattr(dc, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))
    got, want = getattr(ours, method)(value), getattr(theirs, method)(value)
    assert str(got.tolist()) == str(want.tolist())
    if method.endswith("_"):
        assert str(ours.tolist()) == str(theirs.tolist())


def test_an_inplace_float16_add_beyond_its_range_gives_inf_as_torch():
    ours, theirs = dc.tensor([1.5, -2.0], dtype=dc.float16), torch.tensor([1.5, -2.0], dtype=torch.float16)
    assert ours.add_(1e5).tolist() == theirs.add_(1e5).tolist() == [math.inf, math.inf]


_HALF_SCALAR_CALLS = {
    "x * s": lambda L, x, s: x * s, "s * x": lambda L, x, s: s * x, "x / s": lambda L, x, s: x / s,
    "s / x": lambda L, x, s: s / x, "x + s": lambda L, x, s: x + s, "s - x": lambda L, x, s: s - x,
    "x * tensor(s)": lambda L, x, s: x * L.tensor(s), "tensor(s) * x": lambda L, x, s: L.tensor(s) * x,
    "x / tensor(s, float64)": lambda L, x, s: x / L.tensor(s, dtype=L.float64),
    "x[0] * s": lambda L, x, s: x[0] * s, "mul.Scalar": lambda L, x, s: L.ops.aten.mul.Scalar(x, s),
    "div.Scalar": lambda L, x, s: L.ops.aten.div.Scalar(x, s),
    "mul_": lambda L, x, s: x.clone().mul_(s), "div_": lambda L, x, s: x.clone().div_(s),
    "mul out=float32": lambda L, x, s: L.mul(x, s, out=L.empty(x.shape, dtype=L.float32)),
    "add alpha (31 elements)": lambda L, x, s: x.add(x.flip(0), alpha=s),
}


@pytest.mark.parametrize("call", list(_HALF_SCALAR_CALLS))
@pytest.mark.parametrize("s", [0.1, 0.4485, -3.7, 1e-8, 7e4, 1e5, 2**40 + 1, math.inf], ids=repr)
def test_float16_with_a_scalar_rounds_as_torchs_cpu_kernels(call, s):
    """mul/div read a second scalar at float32 precision; a first one, and add's, round to half."""
    values = np.random.default_rng(0).standard_normal(31) * np.array([1e-3, 1.0, 30.0, 1e3] * 8)[:31]
    values[:3] = [0.0, math.inf, math.nan]
    fn = _HALF_SCALAR_CALLS[call]
    try:
        want = fn(torch, torch.tensor(values, dtype=torch.float16), s).numpy()
    except RuntimeError as e:  # an alpha beyond float16's range
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            fn(dc, dc.tensor(values, dtype=dc.float16), s)
        return
    got = np.asarray(fn(dc, dc.tensor(values, dtype=dc.float16), s).numpy())
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "float16", "float32"])
@pytest.mark.parametrize("alpha", [128, -128, 255, 65504, 65519, -65520, 1e39], ids=repr)
def test_alpha_is_converted_with_torchs_overflow_check(op, dtype, alpha):
    def run(L):
        x = L.ones(3, dtype=getattr(L, dtype)) * 3
        try:
            return getattr(x, op)(L.ones(3, dtype=x.dtype), alpha=alpha).tolist()
        except RuntimeError as e:
            return str(e)

    assert run(dc) == run(torch)


def _full(L, dtype, shape=(3,), value=3):
    return L.full(shape, value, dtype=getattr(L, dtype))


# every Scalar argument a kernel converts to its type (torch's checked_convert, ``Scalar::to<T>``):
# which ops check, against which type (half often computes in float), and which error comes first
_SCALAR_ARGUMENT_CALLS = {
    "addcmul value": lambda L, d, v: L.addcmul(_full(L, d), _full(L, d), _full(L, d), value=v),
    "addcdiv value": lambda L, d, v: L.addcdiv(_full(L, d), _full(L, d), _full(L, d), value=v),
    "addcmul_ value": lambda L, d, v: _full(L, d).addcmul_(_full(L, d), _full(L, d), value=v),
    "addmm alpha": lambda L, d, v: L.addmm(_full(L, d, (2, 2)), _full(L, d, (2, 2)), _full(L, d, (2, 2)), alpha=v),
    "addmm beta": lambda L, d, v: L.addmm(_full(L, d, (2, 2)), _full(L, d, (2, 2)), _full(L, d, (2, 2)), beta=v),
    "hardtanh": lambda L, d, v: L.nn.functional.hardtanh(_full(L, d), -abs(v), abs(v)),
    "hardtanh_": lambda L, d, v: L.nn.functional.hardtanh(_full(L, d), -abs(v), abs(v), inplace=True),
    "pow": lambda L, d, v: L.pow(_full(L, d), v),
    "pow_": lambda L, d, v: _full(L, d).pow_(v),
    "where other": lambda L, d, v: L.where(L.tensor([True, False, True]), _full(L, d), v),
    "where input": lambda L, d, v: L.where(L.tensor([True, False, True]), v, _full(L, d)),
    "scalar_tensor": lambda L, d, v: L.ops.aten.scalar_tensor.default(v, dtype=getattr(L, d)),
    "clamp": lambda L, d, v: L.clamp(_full(L, d), min=-abs(v), max=abs(v)),
    "clamp_ max": lambda L, d, v: _full(L, d).clamp_(max=v),
    "lerp weight": lambda L, d, v: L.lerp(_full(L, d), _full(L, d), v),
    "lerp_ weight": lambda L, d, v: _full(L, d).lerp_(_full(L, d), v),
    "add alpha": lambda L, d, v: L.add(_full(L, d), _full(L, d), alpha=v),
}


@pytest.mark.parametrize("call", list(_SCALAR_ARGUMENT_CALLS))
@pytest.mark.parametrize("dtype, value", [("int8", 300), ("int8", -129), ("int8", 255), ("uint8", 300), ("uint8", -1),
                                          ("int32", 2**31), ("int32", 2.5e9), ("float16", 7e4), ("float16", 65519.0),
                                          ("float32", 1e39), ("float32", 3.5e38), ("float64", 1.7e308)], ids=str)
def test_a_scalar_argument_is_converted_with_torchs_overflow_check(call, dtype, value):
    def run(L):
        try:
            r = _SCALAR_ARGUMENT_CALLS[call](L, dtype, value)
            return f"{str(r.dtype).rpartition('.')[2]} {r.flatten().tolist()}"
        except (RuntimeError, TypeError) as e:
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"

    assert run(dc) == run(torch)


_OPERAND_NAMES = ("mm", "bmm", "matmul", "maximum", "minimum", "mul", "add", "sub", "div", "true_divide", "eq", "ne",
                  "lt", "ge", "pow", "fmod", "remainder", "bitwise_and", "bitwise_or", "bitwise_left_shift",
                  "bitwise_right_shift", "floor_divide", "atan2", "xlogy", "logical_and", "hypot", "nextafter",
                  "copysign")


@pytest.mark.parametrize("how", ["method", "function"])
@pytest.mark.parametrize("value", [2, "a", None], ids=repr)
@pytest.mark.parametrize("name", _OPERAND_NAMES)
def test_an_operand_of_the_wrong_type_gets_torchs_binding_error(name, value, how):
    # Note [Operand arguments]: the binding's TypeError (or the call's result), never the schema's
    def run(L):
        x = L.ones(2, 2) if name != "bmm" else L.ones(1, 2, 2)
        try:
            r = getattr(x, name)(value) if how == "method" else getattr(L, name)(x, value)
            return f"{str(r.dtype).rpartition('.')[2]} {r.tolist()}"
        except Exception as e:  # noqa: BLE001 - the class and text are what is compared
            return f"{type(e).__name__}: {e}"

    assert run(dc) == run(torch)
