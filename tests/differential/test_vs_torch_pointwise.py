"""The pointwise family against torch 2.13: schemas, registrations, values, dtypes, layouts, errors, gradients."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import gradcheck, gradgradcheck
from dispatchcore.native import pointwise as P

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

A, TA = dc.ops.aten, torch.ops.aten
DTYPES = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64")


def _values(dtype: str, shape=(2, 3), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        low = 0 if dtype == "uint8" else -5
        return rng.integers(low, 6, shape).astype(dtype)
    v = rng.uniform(-0.95, 0.95, shape)  # inside every unary op's domain but acosh's
    return v.astype(dtype)


def _pair(array: np.ndarray):
    return dc.tensor(array), torch.tensor(array)


def _same(mine, theirs, *, atol=1e-6, rtol=1e-5) -> None:
    if isinstance(theirs, tuple):
        for m, t in zip(mine, theirs):
            _same(m, t, atol=atol, rtol=rtol)
        return
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert mine.stride() == theirs.stride()
    expected = theirs.detach().numpy()
    got = mine.detach().numpy()
    if expected.dtype == np.float16:
        atol, rtol = 1e-3, 1e-3
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), atol=atol, rtol=rtol,
                               equal_nan=True)


def _same_error(mine, theirs) -> None:
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)) as got:
        mine()
    assert str(got.value) == str(expected.value)


def _outcome(mine, theirs, **tolerances) -> None:
    """Both give the same tensor, or both raise the same error."""
    try:
        expected = theirs()
    except Exception:
        _same_error(mine, theirs)
        return
    _same(mine(), expected, **tolerances)


# --- schemas and registrations -----------------------------------------------------------------------
@pytest.mark.parametrize("schema", P.SCHEMAS, ids=lambda s: s.partition("(")[0])
def test_schema_is_torchs_verbatim(schema):
    name, _, overload = schema.partition("(")[0].partition(".")
    op = getattr(getattr(TA, name), overload or "default")
    assert f"aten::{schema}" == str(op._schema)


def _torch_keys(qualname: str) -> str:
    import re

    short = {"CPU": "C", "Meta": "M", "BackendSelect": "B", "ADInplaceOrView": "V", "AutocastCPU": "X",
             "Autograd": "A", "CompositeExplicitAutograd": "E", "CompositeImplicitAutograd": "I"}
    keys = set()
    for line in torch._C._dispatch_dump(qualname).splitlines():
        m = re.match(r"^(\w+)(?:\[alias\])?(?: \(inactive\))?: ", line)
        if m and m.group(1) in short:
            keys.add(short[m.group(1)])
    return "".join(sorted(keys))


def test_every_operator_is_registered_at_torchs_keys_but_the_generic_ones():
    """CPU, Meta, CompositeExplicit/ImplicitAutograd and Autograd as torch (the lead adds N, V and out= Autograd)."""
    dc.load_backends()
    short = {"CPU": "C", "Meta": "M", "CompositeExplicitAutograd": "E", "CompositeImplicitAutograd": "I",
             "Autograd": "A"}
    wrong = {}
    for schema in P.SCHEMAS:
        name = schema.partition("(")[0]
        op = dc.dispatcher.find_op(f"aten::{name}")
        mine = "".join(sorted(short[k.name] for k in op.registrations if k.name in short))
        theirs = "".join(k for k in _torch_keys(f"aten::{name}") if k in short.values())
        if "I" in theirs:
            theirs = theirs.replace("A", "")
        if "out" in name or "grad_input" in name:  # their Autograd kernel is the generic out= one
            mine, theirs = mine.replace("A", ""), theirs.replace("A", "")
        if mine != theirs:
            wrong[name] = (mine, theirs)
    assert wrong == {}


# --- unary ops ---------------------------------------------------------------------------------------
UNARY = [*P.UNARY, "isnan", "isinf", "isfinite", "logical_not", "nan_to_num"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_dtypes_and_errors_match_torch(name, dtype):
    x, tx = _pair(_values(dtype) + (1.5 if name == "acosh" and dtype.startswith("float") else 0))
    _outcome(lambda: getattr(dc, name)(x), lambda: getattr(torch, name)(tx))


@pytest.mark.parametrize("name", [n for n, u in P.UNARY.items() if u.inplace])
@pytest.mark.parametrize("dtype", ("bool", "int64", "float32"))
def test_unary_in_place_matches_torch(name, dtype):
    x, tx = _pair(_values(dtype))
    _outcome(lambda: getattr(x, name + "_")(), lambda: getattr(tx, name + "_")())


@pytest.mark.parametrize("name", ["acos", "ceil", "sign", "frac", "bitwise_not", "signbit", "isposinf",
                                  "logical_not", "nan_to_num"])
@pytest.mark.parametrize("out_dtype", ("bool", "int64", "float32", "float64"))
@pytest.mark.parametrize("dtype", ("int64", "float32"))
def test_unary_out_dtype_rules_match_torch(name, dtype, out_dtype):
    x, tx = _pair(_values(dtype))
    out, tout = dc.empty(0, dtype=getattr(dc, out_dtype)), torch.empty(0, dtype=getattr(torch, out_dtype))
    _outcome(lambda: getattr(dc, name)(x, out=out), lambda: getattr(torch, name)(tx, out=tout))


@pytest.mark.parametrize("name", ["acos", "floor", "isnan", "isfinite", "nan_to_num", "bitwise_not"])
def test_unary_layouts_of_zero_d_empty_and_noncontiguous_inputs_match_torch(name):
    dtype = "int64" if name == "bitwise_not" else "float32"
    base = _values(dtype, (4, 6))
    for array in (np.array(base[0, 0]), np.zeros((0, 3), dtype), base):
        x, tx = _pair(array)
        views = [(x, tx)] if x.numel() <= 1 else [(x, tx), (x.t(), tx.t()), (x[..., ::2], tx[..., ::2])]
        for view, tview in views:
            _same(getattr(dc, name)(view), getattr(torch, name)(tview))


def test_special_values_match_torch():
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -2.5, 2.5, 0.5, -0.5], np.float32)
    x, tx = _pair(special)
    for name in UNARY:
        if name == "bitwise_not":
            continue
        _same(getattr(dc, name)(x), getattr(torch, name)(tx))
    _same(dc.nan_to_num(x, 1.0, 2.0, -3.0), torch.nan_to_num(tx, 1.0, 2.0, -3.0))
    _same(dc.round(x * 7.31, decimals=1), torch.round(tx * 7.31, decimals=1))
    _same(dc.round(x * 73.1, decimals=-1), torch.round(tx * 73.1, decimals=-1))


def test_round_decimals_refuses_integers_as_torch():
    x, tx = _pair(np.array([15, 25]))
    _same_error(lambda: dc.round(x, decimals=-1), lambda: torch.round(tx, decimals=-1))


def test_in_place_float_op_on_an_integer_tensor_is_torchs_cast_error():
    _same_error(lambda: dc.ones(2, dtype=dc.int64).sin_(), lambda: torch.ones(2, dtype=torch.int64).sin_())
    _same_error(lambda: dc.ones(2, dtype=dc.int64).acos_(), lambda: torch.ones(2, dtype=torch.int64).acos_())


# --- binary ops ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(P.BINARY))
@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("uint8", "int32"), ("int64", "int64"), ("int32", "float32"),
                                    ("float16", "float16"), ("float64", "float32")])
def test_binary_values_and_promotion_match_torch(name, dtypes):
    a, b = _values(dtypes[0], (2, 3), 1), _values(dtypes[1], (3,), 2)
    if name in ("fmod", "remainder", "floor_divide") and b.dtype.kind in "iub":
        b = np.where(b == 0, 3, b).astype(b.dtype)
    x, tx = _pair(a)
    y, ty = _pair(b)
    _outcome(lambda: getattr(dc, name)(x, y), lambda: getattr(torch, name)(tx, ty))


@pytest.mark.parametrize("name", [n for n, b in P.BINARY.items() if b.scalar or n == "floor_divide"])
@pytest.mark.parametrize("scalar", [3, -2, 2.5, True])
@pytest.mark.parametrize("dtype", ("bool", "uint8", "int64", "float32"))
def test_tensor_scalar_forms_match_torch(name, scalar, dtype):
    x, tx = _pair(_values(dtype))
    _outcome(lambda: getattr(dc, name)(x, scalar), lambda: getattr(torch, name)(tx, scalar))
    _outcome(lambda: getattr(x.clone(), name + "_")(scalar), lambda: getattr(tx.clone(), name + "_")(scalar))


@pytest.mark.parametrize("name", [n for n, b in P.BINARY.items() if b.reverse or n == "floor_divide"])
def test_scalar_tensor_forms_match_torch(name):
    x, tx = _pair(np.array([1, 2, 3]))
    _outcome(lambda: getattr(dc, name)(7, x), lambda: getattr(torch, name)(7, tx))


def test_python_operators_match_torch():
    x, tx = _pair(np.array([[5, -3, 0], [7, 1, -8]]))
    y, ty = _pair(np.array([2, 3, 1]))
    cases = [lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: ~a, lambda a, b: a // b,
             lambda a, b: a % b, lambda a, b: a << b, lambda a, b: a >> b, lambda a, b: a & 6, lambda a, b: 6 & a,
             lambda a, b: 6 | a, lambda a, b: 6 ^ a, lambda a, b: a // 2, lambda a, b: 7 // b, lambda a, b: 7.5 // b,
             lambda a, b: a % 3, lambda a, b: 7 % b, lambda a, b: a << 2, lambda a, b: 1 << b, lambda a, b: 64 >> b]
    for case in cases:
        _same(case(x, y), case(tx, ty))
    for op in ("__iand__", "__ior__", "__ixor__", "__ifloordiv__", "__imod__", "__ilshift__", "__irshift__"):
        a, ta = x.clone(), tx.clone()
        assert getattr(a, op)(y) is a
        _same(a, getattr(ta, op)(ty))
        _same(getattr(x.clone(), op)(2), getattr(tx.clone(), op)(2))


def test_python_operator_errors_match_torch():
    x, tx = _pair(np.array([1.5, 2.0]))
    _same_error(lambda: ~x, lambda: ~tx)
    _same_error(lambda: x & x, lambda: tx & tx)
    _same_error(lambda: x << 1, lambda: tx << 1)
    i, ti = _pair(np.array([1, 2]))
    for case in (lambda a: a & "s", lambda a: a % "s", lambda a: a // "s", lambda a: a << None):
        _same_error(lambda c=case: c(i), lambda c=case: c(ti))
    _same_error(lambda: i // 0, lambda: ti // 0)
    _same_error(lambda: dc.fmod(i, 0), lambda: torch.fmod(ti, 0))
    _same_error(lambda: dc.fmod(2, i), lambda: torch.fmod(2, ti))
    _same_error(lambda: dc.atan2(x, 2), lambda: torch.atan2(tx, 2))
    _same_error(lambda: x.logical_and(2), lambda: tx.logical_and(2))
    _same_error(lambda: i.clone().bitwise_and_(x), lambda: ti.clone().bitwise_and_(tx))
    _same_error(lambda: dc.ones(1, dtype=dc.bool).logical_and_(dc.ones(3, dtype=dc.bool)),
                lambda: torch.ones(1, dtype=torch.bool).logical_and_(torch.ones(3, dtype=torch.bool)))


@pytest.mark.parametrize("name", ["bitwise_and", "fmod", "atan2", "logical_or", "floor_divide", "bitwise_left_shift"])
@pytest.mark.parametrize("out_dtype", ("bool", "int32", "float32"))
def test_binary_out_dtype_rules_match_torch(name, out_dtype):
    for dtype in ("int64", "float64"):
        x, tx = _pair(_values(dtype, (3,), 3))
        y, ty = _pair(np.array([1, 2, 3]).astype(dtype))
        out, tout = dc.empty(0, dtype=getattr(dc, out_dtype)), torch.empty(0, dtype=getattr(torch, out_dtype))
        _outcome(lambda a=x, b=y, o=out: getattr(dc, name)(a, b, out=o),
                 lambda a=tx, b=ty, o=tout: getattr(torch, name)(a, b, out=o))


def test_shifts_by_negative_and_oversized_counts_match_torch():
    x, tx = _pair(np.array([1, -8, 5, 127], np.int8))
    u, tu = _pair(np.array([1, 200, 3, 255], np.uint8))
    for count in (-1, 0, 3, 7, 8, 100):
        _same(x << count, tx << count)
        _same(x >> count, tx >> count)
        _same(u << count, tu << count)
        _same(u >> count, tu >> count)


def test_binary_broadcast_and_noncontiguous_layouts_match_torch():
    a = _values("float32", (4, 3), 5)
    x, tx = _pair(a)
    y, ty = _pair(_values("float32", (3, 4), 6) + 2)
    for name in ("atan2", "fmod", "remainder", "floor_divide", "logical_xor"):
        _same(getattr(dc, name)(x, y.t()), getattr(torch, name)(tx, ty.t()))
        _same(getattr(dc, name)(x.t(), y), getattr(torch, name)(tx.t(), ty))
        _same(getattr(dc, name)(x[:, :1], y.t()[0]), getattr(torch, name)(tx[:, :1], ty.t()[0]))


# --- activations ------------------------------------------------------------------------------------------
ACTIVATION_CALLS = [
    ("elu", {}), ("elu", {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}), ("gelu", {}),
    ("gelu", {"approximate": "tanh"}), ("hardtanh", {}), ("hardtanh", {"min_val": -0.2, "max_val": 0.4}),
    ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
]


@pytest.mark.parametrize("name,kwargs", ACTIVATION_CALLS)
@pytest.mark.parametrize("dtype", ("int64", "float16", "float32", "float64"))
def test_activations_match_torch(name, kwargs, dtype):
    x, tx = _pair(_values(dtype, (3, 4), 7) * (3 if dtype.startswith("float") else 1))
    _outcome(lambda: getattr(A, name).default(x, **kwargs), lambda: getattr(TA, name).default(tx, **kwargs))
    _outcome(lambda: getattr(A, name + "_").default(x.clone(), **kwargs),
             lambda: getattr(TA, name + "_").default(tx.clone(), **kwargs))
    _outcome(lambda: getattr(A, name).default(x.t(), **kwargs), lambda: getattr(TA, name).default(tx.t(), **kwargs))


def test_activation_errors_match_torch():
    x, tx = _pair(np.array([-1.5, 2.0], np.float32))
    _same_error(lambda: A.gelu.default(x, approximate="foo"), lambda: TA.gelu.default(tx, approximate="foo"))
    _same_error(lambda: A.hardtanh.default(dc.ones(2, dtype=dc.bool)),
                lambda: TA.hardtanh.default(torch.ones(2, dtype=torch.bool)))
    _same_error(lambda: A.elu.out(x, out=dc.empty(2, dtype=dc.float64)),
                lambda: TA.elu.out(tx, out=torch.empty(2, dtype=torch.float64)))
    _same_error(lambda: A.elu_backward.default(x, -1.0, 1, 1, True, x),
                lambda: TA.elu_backward.default(tx, -1.0, 1, 1, True, tx))
    _same_error(lambda: A.leaky_relu_backward.default(x, x, -0.5, True),
                lambda: TA.leaky_relu_backward.default(tx, tx, -0.5, True))


# --- gradients and node names ---------------------------------------------------------------------------
def _grad_input(values, requires_grad=True):
    return dc.tensor(values, dtype=dc.float64, requires_grad=requires_grad), torch.tensor(
        values, dtype=torch.float64, requires_grad=requires_grad)


def _grad_cases():
    """case -> (dispatchcore function, torch function) of one float64 tensor."""
    cases = {name: (lambda x, _n=name: getattr(dc, _n)(x), lambda x, _n=name: getattr(torch, _n)(x))
             for name, u in P.UNARY.items() if u.node}
    cases.update({
        "round.decimals": (lambda x: dc.round(x, decimals=1), lambda x: torch.round(x, decimals=1)),
        "nan_to_num": (dc.nan_to_num, torch.nan_to_num),
        "atan2": (lambda x: dc.atan2(x, x * 2 + 3), lambda x: torch.atan2(x, x * 2 + 3)),
        "fmod.Tensor": (lambda x: dc.fmod(x, x * 0.5 + 0.9), lambda x: torch.fmod(x, x * 0.5 + 0.9)),
        "fmod.Scalar": (lambda x: dc.fmod(x, 0.3), lambda x: torch.fmod(x, 0.3)),
        "remainder.Tensor": (lambda x: dc.remainder(x, x * 0.5 + 0.9), lambda x: torch.remainder(x, x * 0.5 + 0.9)),
        "remainder.Scalar": (lambda x: x % 0.3, lambda x: x % 0.3),
        "hypot": (lambda x: dc.hypot(x, x * 2 + 3), lambda x: torch.hypot(x, x * 2 + 3)),
        "nextafter": (lambda x: dc.nextafter(x, x * 0 + 10), lambda x: torch.nextafter(x, x * 0 + 10)),
        "copysign.Tensor": (lambda x: dc.copysign(x, x * 2 - 0.1), lambda x: torch.copysign(x, x * 2 - 0.1)),
        "copysign.Scalar": (lambda x: dc.copysign(x, -1.5), lambda x: torch.copysign(x, -1.5)),
    })
    for name, kwargs in ACTIVATION_CALLS:
        cases[f"{name}{sorted(kwargs.items())}"] = (lambda x, _n=name, _k=kwargs: getattr(A, _n).default(x, **_k),
                                                    lambda x, _n=name, _k=kwargs: getattr(TA, _n).default(x, **_k))
    return cases


GRAD_CASES = _grad_cases()
# away from the kinks of the piecewise ops (fmod, remainder, hardtanh, elu, leaky_relu at 0)
_POINTS = [[0.31, -0.62, 0.13], [0.77, -0.24, -0.91]]


def _points(case):
    shift = 2 if case in ("acosh", "log2", "log10", "rsqrt") else 0  # inside the op's domain
    return [[v + shift for v in p] for p in _POINTS]


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradients_and_node_names_match_torch(case):
    m, t = _grad_input(_points(case))
    mine, theirs = GRAD_CASES[case][0](m), GRAD_CASES[case][1](t)
    assert mine.grad_fn.name() == theirs.grad_fn.name()
    g = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    mine.backward(dc.tensor(g, dtype=dc.float64))
    theirs.backward(torch.tensor(g, dtype=torch.float64))
    expected = t.grad
    if expected._is_zerotensor():  # sgn's gradient is torch's ZeroTensor
        expected = torch.zeros(expected.shape, dtype=expected.dtype)
    np.testing.assert_allclose(m.grad.numpy(), expected.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradcheck_and_gradgradcheck(case):
    m, _ = _grad_input(_points(case))
    assert gradcheck(GRAD_CASES[case][0], (m,))
    assert gradgradcheck(GRAD_CASES[case][0], (m,))


@pytest.mark.parametrize("name,overload,node", [
    ("acosh_", "default", "AcoshBackward1"), ("asinh_", "default", "AsinhBackward1"),
    ("atanh_", "default", "AtanhBackward1"), ("elu_", "default", "EluBackward1"),
    ("leaky_relu_", "default", "LeakyReluBackward1"), ("hardtanh_", "default", "HardtanhBackward0"),
    ("gelu_", "default", "GeluBackward0"), ("ceil_", "default", "CeilBackward0"),
    ("nan_to_num_", "default", "NanToNumBackward0"), ("fmod_", "Scalar", "FmodBackward0"),
    ("remainder_", "Tensor", "RemainderBackward1"), ("floor_divide_", "Scalar", "torch::autograd::NotImplemented"),
])
def test_in_place_node_names_match_torch(name, overload, node):
    m, t = _grad_input([2.5, 3.0, 1.5])
    args = () if overload == "default" else (dc.tensor([2.0, 2.0, 2.0], dtype=dc.float64),) \
        if overload == "Tensor" else (2.0,)
    targs = () if overload == "default" else (torch.tensor([2.0, 2.0, 2.0], dtype=torch.float64),) \
        if overload == "Tensor" else (2.0,)
    mine = getattr(getattr(A, name), overload)(m.clone(), *args)
    theirs = getattr(getattr(TA, name), overload)(t.clone(), *targs)
    assert mine.grad_fn.name() == theirs.grad_fn.name() == node


def test_missing_derivatives_raise_torchs_errors_in_backward():
    m, t = _grad_input([2.5, 3.0])
    for mine, theirs in ((lambda: A.acosh_.default(m.clone()), lambda: TA.acosh_.default(t.clone())),
                         (lambda: dc.floor_divide(m, 2.0), lambda: torch.floor_divide(t, 2.0)),
                         (lambda: m.clone().floor_divide_(2.0), lambda: t.clone().floor_divide_(2.0)),
                         (lambda: 2.0 % m, lambda: 2.0 % t)):
        _same_error(lambda f=mine: f().sum().backward(), lambda f=theirs: f().sum().backward())


def test_predicates_and_bitwise_results_never_require_grad():
    m, t = _grad_input([2.5, float("nan")])
    for name in ("isnan", "isinf", "isfinite", "signbit", "isposinf", "isneginf", "logical_not"):
        assert getattr(dc, name)(m).requires_grad is getattr(torch, name)(t).requires_grad is False
    assert dc.logical_and(m, m).requires_grad is torch.logical_and(t, t).requires_grad is False


def test_meta_tensors_get_cpus_geometry_and_dtype():
    cases = [lambda lib, x, i: lib.acos(x), lambda lib, x, i: lib.isnan(x.t()), lambda lib, x, i: lib.isinf(x),
             lambda lib, x, i: lib.isfinite(x), lambda lib, x, i: lib.logical_and(x, i),
             lambda lib, x, i: lib.bitwise_and(i, 3), lambda lib, x, i: lib.atan2(i, x.t()),
             lambda lib, x, i: lib.remainder(2, i), lambda lib, x, i: lib.nan_to_num(x.t()),
             lambda lib, x, i: lib.round(x, decimals=2), lambda lib, x, i: i << 2, lambda lib, x, i: i // 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            mine = case(dc, dc.empty(3, 3, device="meta"), dc.empty(3, 3, dtype=dc.int64, device="meta"))
            theirs = case(torch, torch.empty(3, 3, device="meta"), torch.empty(3, 3, dtype=torch.int64, device="meta"))
            assert (tuple(mine.shape), mine.stride(), str(mine.dtype)[13:]) == (
                tuple(theirs.shape), theirs.stride(), str(theirs.dtype)[6:])


def _complex_and_real(L):
    return (L.tensor([[1 + 2j, -3j], [0j, 2.5]], dtype=L.complex64),
            L.tensor([[1.0, 0.0], [-2.0, 3.0]]))


# complex operands: what torch computes (logical ops, isnan, sgn, logsumexp on the real part's max)
# and what it refuses, in its words (orderings, rounding, clamping and sorting)
_COMPLEX_CALLS = {
    "lt": lambda L, c, f: c < c, "ge mixed": lambda L, c, f: L.ge(c, f), "gt real first": lambda L, c, f: f > c,
    "le number": lambda L, c, f: c <= 1, "lt complex number": lambda L, c, f: f < 1j, "eq": lambda L, c, f: c == c,
    "div floor": lambda L, c, f: L.div(c, c, rounding_mode="floor"),
    "div trunc": lambda L, c, f: L.div(c, f, rounding_mode="trunc"),
    "clamp": lambda L, c, f: L.clamp(c, 0, 1), "clamp_min": lambda L, c, f: L.clamp_min(c, 0),
    "relu": lambda L, c, f: L.relu(c),
    "logical_and": lambda L, c, f: L.logical_and(c, f), "logical_or": lambda L, c, f: L.logical_or(c, c),
    "logical_xor": lambda L, c, f: L.logical_xor(c, f), "logical_not": lambda L, c, f: L.logical_not(c),
    "isnan": lambda L, c, f: L.isnan(c), "sgn": lambda L, c, f: L.sgn(c), "sign": lambda L, c, f: L.sign(c),
    "floor": lambda L, c, f: L.floor(c), "ceil": lambda L, c, f: L.ceil(c), "trunc": lambda L, c, f: L.trunc(c),
    "signbit": lambda L, c, f: L.signbit(c), "isposinf": lambda L, c, f: L.isposinf(c),
    "isneginf": lambda L, c, f: L.isneginf(c),
    "sort": lambda L, c, f: L.sort(c)[0], "topk": lambda L, c, f: L.topk(c.flatten(), 2)[0],
    "argmax": lambda L, c, f: L.argmax(c), "argmin dim": lambda L, c, f: L.argmin(c, 1),
    "max": lambda L, c, f: L.max(c), "min dim": lambda L, c, f: L.min(c, 0)[1],
    "amax": lambda L, c, f: L.amax(c, 1), "amin": lambda L, c, f: L.amin(c),
    "logsumexp": lambda L, c, f: L.logsumexp(c * 500, 0), "cumsum": lambda L, c, f: L.cumsum(c, 0),
}


@pytest.mark.parametrize("call", list(_COMPLEX_CALLS))
def test_complex_operands_are_computed_or_refused_as_torch(call):
    def run(L):
        try:
            r = _COMPLEX_CALLS[call](L, *_complex_and_real(L))
            return f"{str(r.dtype).rpartition('.')[2]} {r.tolist()!r}"
        except (RuntimeError, NotImplementedError, TypeError) as e:
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"

    assert run(dc) == run(torch)


@pytest.mark.parametrize("other", [3.0, -3.0, "tensor"], ids=str)
def test_remainder_and_cumsum_give_zeros_torchs_sign(other):
    def run(L):
        x = L.tensor([-0.0, 0.0, -6.0, 6.0, 7.5, -7.5])
        b = L.tensor([3.0, -3.0, 3.0, -3.0, -2.0, 2.0]) if other == "tensor" else other
        return [str(v) for v in L.remainder(x, b).tolist()] + [str(v) for v in L.cumsum(-x * 0, 0).tolist()]

    assert run(dc) == run(torch)


# --- numpy-named aliases (absolute, arccos, ..., arctan2): operators of their own that call their target
def _alias_inputs(alias, m):
    low, high = (1.1, 3.0) if alias == "arccosh" else (-0.9, 0.9)  # inside each target's domain
    x = m.tensor(np.linspace(low, high, 6).reshape(2, 3))
    return (x, m.tensor(np.linspace(0.5, 2, 6).reshape(2, 3))) if alias in P._BINARY_ALIASES else (x,)


@pytest.mark.parametrize("alias", sorted(P.ALIASES))
def test_an_alias_computes_its_targets_values_as_function_method_in_place_and_out(alias):
    for call in (lambda m, *a: getattr(m, alias)(*a), lambda m, x, *a: getattr(x, alias)(*a),
                 lambda m, x, *a: getattr(x.clone(), f"{alias}_")(*a),
                 lambda m, x, *a: getattr(m, alias)(x, *a, out=m.empty(0, dtype=m.float64))):
        expected = call(torch, *_alias_inputs(alias, torch))
        _same(call(dc, *_alias_inputs(alias, dc)), expected)
    assert hasattr(dc, f"{alias}_") == hasattr(torch, f"{alias}_")


@pytest.mark.parametrize("alias", sorted(P.ALIASES))
def test_an_alias_is_composite_implicit_so_a_mode_sees_its_target(alias):
    target = P.ALIASES[alias]
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{alias}", "CompositeImplicitAutograd")
    for suffix in ("", "_", ".out"):
        mine = dc.get_dispatcher().find_op(f"aten::{alias}{suffix}")
        assert mine.table_entry("AutogradCPU")[1] == "math kernel"
        theirs = getattr(getattr(torch.ops.aten, f"{alias}{suffix.split('.')[0]}"),
                         "out" if suffix == ".out" else "default")
        assert str(mine.schema) == str(theirs._schema)
    inputs = _alias_inputs(alias, dc)
    with dc.LoggingMode() as log:
        getattr(dc, alias)(*inputs)
    assert [str(r.func) for r in log.records] == [f"aten.{target}.default"]
    x = _alias_inputs(alias, dc)[0].requires_grad_()
    assert type(getattr(x, alias)(*_alias_inputs(alias, dc)[1:]).grad_fn).__name__ == type(
        getattr(torch, alias)(_alias_inputs(alias, torch)[0].requires_grad_(), *_alias_inputs(alias, torch)[1:]).grad_fn
    ).__name__


@pytest.mark.parametrize("call", [lambda m: m.absolute("a"), lambda m: m.arctan2(m.ones(2), 2),
                                  lambda m: m.ones(2, dtype=m.bool).absolute(), lambda m: m.negative(m.ones(2) > 0)])
def test_an_alias_refuses_what_torch_refuses_in_torchs_words(call, raises_alike):
    raises_alike(lambda: call(dc), lambda: call(torch))


# --- numpy's names with their target's overload set (multiply, subtract, divide, true_divide, greater, ...,
# clip): CompositeImplicitAutograd operators a mode sees as their target, bound as the target's functions
_OVERLOAD_ALIAS_CALLS = {
    "multiply(x, y)": lambda m, x, y: m.multiply(x, y),
    "multiply(x, 2)": lambda m, x, y: m.multiply(x, 2),
    "multiply(2, x)": lambda m, x, y: m.multiply(2, x),
    "x.multiply(2.5)": lambda m, x, y: x.multiply(2.5),
    "x.multiply_(y)": lambda m, x, y: x.multiply_(y),
    "multiply(out=)": lambda m, x, y: m.multiply(x, y, out=m.empty(0)),
    "subtract(x, y, alpha=2)": lambda m, x, y: m.subtract(x, y, alpha=2),
    "subtract(x, 2, alpha=3)": lambda m, x, y: m.subtract(x, 2, alpha=3),
    "x.subtract_(2)": lambda m, x, y: x.subtract_(2),
    "subtract(out=)": lambda m, x, y: m.subtract(x, y, out=m.empty(0)),
    "divide(x, y)": lambda m, x, y: m.divide(x, y),
    "divide(x, 2, floor)": lambda m, x, y: m.divide(x, 2, rounding_mode="floor"),
    "divide(x, y, None)": lambda m, x, y: m.divide(x, y, rounding_mode=None),
    "x.divide_(y, trunc)": lambda m, x, y: x.divide_(y, rounding_mode="trunc"),
    "divide(floor, out=)": lambda m, x, y: m.divide(x, y, rounding_mode="floor", out=m.empty(0)),
    "div(2, floor, out=)": lambda m, x, y: m.div(x, 2, rounding_mode="floor", out=m.empty(0)),
    "true_divide(x, 2)": lambda m, x, y: m.true_divide(x, 2),
    "x.true_divide_(y)": lambda m, x, y: x.true_divide_(y),
    "greater(x, 0)": lambda m, x, y: m.greater(x, 0),
    "x.greater_equal(y)": lambda m, x, y: x.greater_equal(y),
    "x.less_(0.5)": lambda m, x, y: x.less_(0.5),
    "x.less_equal_(y)": lambda m, x, y: x.less_equal_(y),
    "not_equal(x, y, out=float)": lambda m, x, y: m.not_equal(x, y, out=m.empty(0)),
    "gt(x, 0.5, out=bool)": lambda m, x, y: m.gt(x, 0.5, out=m.empty(0, dtype=m.bool)),
    "eq(x, y, out=bool)": lambda m, x, y: m.eq(x, y, out=m.empty(0, dtype=m.bool)),
    "clip(x, 0, 1)": lambda m, x, y: m.clip(x, -0.5, 0.5),
    "clip(x, max=1)": lambda m, x, y: m.clip(x, max=1),
    "x.clip(min=y)": lambda m, x, y: x.clip(min=y),
    "x.clip_(0, 1)": lambda m, x, y: x.clip_(0, 1),
    "clip_(x, 0)": lambda m, x, y: m.clip_(x, 0),
    "clip(x, y, out=)": lambda m, x, y: m.clip(x, y, out=m.empty(0)),
    "clamp(x, 0, 1, out=)": lambda m, x, y: m.clamp(x, 0, 1, out=m.empty(0)),
    "clamp(x, 0-d, 1, out=)": lambda m, x, y: m.clamp(x, m.tensor(0.0), 1, out=m.empty(0)),
}


def _logged(m: Any, call: Callable[..., Any]) -> tuple[Any, list[str]]:
    x = m.tensor(np.linspace(-1.5, 1.5, 6).reshape(2, 3), dtype=m.float32)
    y = m.tensor(np.linspace(0.5, 2.0, 6).reshape(2, 3), dtype=m.float32)
    names: list[str] = []
    if m is torch:
        from torch.utils._python_dispatch import TorchDispatchMode

        class Log(TorchDispatchMode):
            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                names.append(str(func))
                return func(*args, **(kwargs or {}))
        with Log():
            return call(m, x, y), names
    with dc.LoggingMode() as log:
        result = call(m, x, y)
    return result, [str(r.func) for r in log.records]


def _computes_and_dispatches_alike(call: Callable[..., Any]) -> None:
    mine, mine_ops = _logged(dc, call)
    theirs, their_ops = _logged(torch, call)
    _same(mine, theirs)
    assert mine_ops == their_ops


def _refuses_alike(code: str) -> None:
    """``code`` (with ``m`` the library, ``x`` ones(3)) raises torch's error: its whole parser message, or
    the first line of a C++ error (torch appends its source context)."""
    with pytest.raises(Exception) as expected:
        eval(code, {"m": torch, "x": torch.ones(3)})
    with pytest.raises(type(expected.value)) as got:
        eval(code, {"m": dc, "x": dc.ones(3)})
    text = str(expected.value)
    assert str(got.value) == (text if "expected one of" in text else text.split("\n")[0])


@pytest.mark.parametrize("name", list(_OVERLOAD_ALIAS_CALLS))
def test_a_numpy_named_overload_computes_and_dispatches_what_torch_does(name):
    _computes_and_dispatches_alike(_OVERLOAD_ALIAS_CALLS[name])


@pytest.mark.parametrize("alias", sorted(P.OVERLOAD_ALIASES))
def test_every_overload_of_a_numpy_name_is_torchs_schema_at_composite_implicit(alias):
    ops = [op for op in dc.get_dispatcher().operators()
           if op.qualname.partition(".")[0] in (f"aten::{alias}", f"aten::{alias}_")]
    theirs = {str(s) for name in (alias, f"{alias}_") for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")}
    assert {str(op.schema) for op in ops} == theirs
    assert all(op.table_entry("AutogradCPU")[1] == "math kernel" for op in ops)
    assert all(hasattr(m, alias) and hasattr(m.Tensor, alias) and hasattr(m.Tensor, f"{alias}_") for m in (dc, torch))
    assert hasattr(dc, f"{alias}_") == hasattr(torch, f"{alias}_")


@pytest.mark.parametrize("alias", ["multiply", "subtract", "divide", "true_divide", "greater", "not_equal", "clip"])
def test_a_numpy_named_overload_records_its_targets_node(alias):
    def run(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        args = (0.0, 1.0) if alias == "clip" else (m.tensor([2.0, 0.5, -1.0], requires_grad=True),)
        out = getattr(x, alias)(*args)
        if not out.requires_grad:
            return type(out.grad_fn).__name__, None
        out.sum().backward()
        return type(out.grad_fn).__name__, x.grad.tolist()

    assert run(dc) == run(torch)


_ALIAS_ERRORS = ["m.multiply(x, 'a')", "x.multiply('a')", "m.subtract(x, 'a', alpha=2)", "x.subtract('a')",
                 "m.divide(x, 'a')", "m.divide(x, 'a', rounding_mode='floor')", "x.divide('a', rounding_mode='floor')",
                 "x.div('a', rounding_mode='floor')", "x.div('a')",
                 "m.div(x, 'a')", "m.div(x, 'a', rounding_mode='floor')", "m.divide(x, 2, rounding_mode='bad')",
                 "m.greater(x, 'a')", "m.greater(2, x)", "x.greater_('a')", "m.clip(x)", "x.clip('a')",
                 "m.clip(x, 'a')", "x.clamp('a')", "m.clamp(x, 'a')", "m.ones(3, dtype=m.int64).clip_(0.5)",
                 "m.ones(2).greater_(m.ones(3, 2))"]


@pytest.mark.parametrize("code", _ALIAS_ERRORS)
def test_a_numpy_named_overload_refuses_what_torch_refuses_in_torchs_words(code):
    _refuses_alike(code)


# --- deg2rad/rad2deg (CompositeExplicitAutograd), positive and float_power (CompositeImplicitAutograd) ----
_COMPOSITE_CALLS = {
    "deg2rad(x)": lambda m, x, y: m.deg2rad(x),
    "x.rad2deg()": lambda m, x, y: x.rad2deg(),
    "deg2rad(int)": lambda m, x, y: m.deg2rad(m.tensor([180, -90])),
    "rad2deg(bool)": lambda m, x, y: m.rad2deg(m.tensor([True, False])),
    "rad2deg(half)": lambda m, x, y: m.rad2deg(x.to(m.float16)),
    "x.deg2rad_()": lambda m, x, y: x.deg2rad_(),
    "rad2deg_(x)": lambda m, x, y: m.rad2deg_(x),
    "deg2rad(out=float64)": lambda m, x, y: m.deg2rad(x, out=m.empty(0, dtype=m.float64)),
    "positive(x)": lambda m, x, y: m.positive(x),
    "+x": lambda m, x, y: +x,
    "float_power(x, y)": lambda m, x, y: m.float_power(x, y),
    "float_power(x, 2)": lambda m, x, y: m.float_power(x, 2),
    "float_power(int, 2)": lambda m, x, y: m.float_power(m.tensor([2, 3]), 2),
    "float_power(2, y)": lambda m, x, y: m.float_power(2, y),
    "float_power(x, 1j)": lambda m, x, y: m.float_power(x, 1j).abs(),  # complex128 (abs: a real to compare)
    "x.double().float_power_(y)": lambda m, x, y: x.double().float_power_(y),
    "x.double().float_power_(3)": lambda m, x, y: x.double().float_power_(3),
    "float_power(x, y, out=)": lambda m, x, y: m.float_power(x, y, out=m.empty(0, dtype=m.float64)),
    "float_power(2, y, out=)": lambda m, x, y: m.float_power(2, y, out=m.empty(0, dtype=m.float64)),
    "float_power(x, 0.5, out=)": lambda m, x, y: m.float_power(y, 0.5, out=m.empty(0, dtype=m.float64)),
}


@pytest.mark.parametrize("name", list(_COMPOSITE_CALLS))
def test_angles_positive_and_float_power_compute_and_dispatch_what_torch_does(name):
    _computes_and_dispatches_alike(_COMPOSITE_CALLS[name])


def test_angles_positive_and_float_power_record_torchs_nodes_and_gradients():
    def run(m):
        x = m.tensor([0.5, 1.5, 2.0], dtype=m.float64, requires_grad=True)
        outs = [m.deg2rad(x), m.rad2deg(x), m.positive(x), m.float_power(x, 3), m.float_power(x.float(), x)]
        sum(o.sum() for o in outs).backward()
        return [type(o.grad_fn).__name__ for o in outs], x.grad.tolist()

    assert run(dc) == run(torch)


_COMPOSITE_ERRORS = ["m.deg2rad(m.tensor([1j]))", "m.ones(2, dtype=m.int64).deg2rad_()",
                     "m.deg2rad(x, out=m.empty(0, dtype=m.int64))", "+m.tensor([True])",
                     "m.positive(m.tensor([True]))", "m.positive(2)", "x.float_power_(2)",
                     "m.float_power(x, x, out=m.empty(0))", "x.float_power('a')", "m.float_power(x, 'a')",
                     "m.float_power('a', x)"]


@pytest.mark.parametrize("code", _COMPOSITE_ERRORS)
def test_angles_positive_and_float_power_refuse_what_torch_refuses_in_torchs_words(code):
    _refuses_alike(code)


# --- heaviside: one dtype for both inputs and the output, no derivative (a NotImplemented node) ---------
_HEAVISIDE_CALLS = {
    "heaviside(x, v)": lambda m, x, y: m.heaviside(m.tensor([-1.5, 0.0, 2.0, float("nan"), -0.0]), m.tensor([0.5])),
    "x.heaviside(values=)": lambda m, x, y: x.heaviside(values=m.zeros(3) + 0.25),
    "heaviside(int)": lambda m, x, y: m.heaviside(m.tensor([1, 0, -2]), m.tensor([7])),
    "heaviside(bool)": lambda m, x, y: m.heaviside(m.tensor([True, False]), m.tensor([True])),
    "heaviside(uint8)": lambda m, x, y: m.heaviside(m.tensor([0, 3], dtype=m.uint8), m.tensor([9], dtype=m.uint8)),
    "heaviside(broadcast, transposed)": lambda m, x, y: m.heaviside(x.t(), m.ones(3, 1)),
    "x.heaviside_(v)": lambda m, x, y: x.heaviside_(m.tensor(0.5)),
    "heaviside(out=)": lambda m, x, y: m.heaviside(x, y, out=m.empty(0)),
}


@pytest.mark.parametrize("name", list(_HEAVISIDE_CALLS))
def test_heaviside_computes_and_dispatches_what_torch_does(name):
    _computes_and_dispatches_alike(_HEAVISIDE_CALLS[name])


@pytest.mark.parametrize("code", [
    "m.heaviside(x, m.tensor([1.0], dtype=m.float64))", "m.heaviside(m.tensor([1j]), m.tensor([1j]))",
    "m.heaviside(x, m.ones(1), out=m.empty(0, dtype=m.int64))", "x.heaviside_(m.tensor(1, dtype=m.int64))",
    "m.ones(3, 1).heaviside_(m.ones(2))", "m.heaviside(x, 0.5)", "x.heaviside()", "m.heaviside(x)",
    "m.heaviside(x.requires_grad_(), m.ones(1)).sum().backward()",
    "x.clone().requires_grad_().mul(1).heaviside_(m.ones(1)).sum().backward()"])
def test_heaviside_refuses_what_torch_refuses_in_torchs_words(code):
    _refuses_alike(code)


def test_heaviside_records_torchs_not_implemented_node_on_meta_too():
    for m in (dc, torch):
        assert type(m.heaviside(m.ones(2, requires_grad=True), m.ones(1)).grad_fn).__name__ == "NotImplemented"
    r = dc.heaviside(dc.ones(2, 3, device="meta"), dc.ones(3, device="meta"))
    assert (r.device.type, tuple(r.shape)) == ("meta", (2, 3))


@pytest.mark.parametrize("case", [
    lambda t: t.gcd(t.tensor([12, -18, 0, 7, 0]), t.tensor([8, 12, 0, -21, -5])),
    lambda t: t.lcm(t.tensor([4, -6, 0, 7, -2]), t.tensor([6, 4, 5, -3, -3])),
    lambda t: t.lcm(t.tensor([2 ** 40, -2 ** 63]), t.tensor([3 ** 20, 1])),  # overflow wraps, then abs
    lambda t: t.lcm(t.tensor([100, -128], dtype=t.int8), t.tensor([3, 3], dtype=t.int8)),
    lambda t: t.gcd(t.tensor([-2 ** 63, 6]), t.tensor([0, 4], dtype=t.int32)),
    lambda t: t.tensor([4, 9]).gcd_(t.tensor([6, 3])),
    lambda t: t.gcd(t.tensor([4]), t.tensor([6]), out=t.empty(0, dtype=t.int32)),
])
def test_gcd_and_lcm_match_torch_at_signs_zeros_and_overflow(case):
    _same(case(dc), case(torch))


_ZERO_TIES = {
    "clamp_min": lambda L, x, y: L.clamp_min(x, 0.0),
    "clamp_max": lambda L, x, y: L.clamp_max(x, -0.0),
    "clamp": lambda L, x, y: L.clamp(x, 0.0, 0.0),
    "clamp_": lambda L, x, y: x.clone().clamp_(-0.0, 1.0),
    "clamp_min_": lambda L, x, y: x.clone().clamp_min_(0.0),
    "hardtanh": lambda L, x, y: L.nn.functional.hardtanh(x, 0.0, 1.0),
    "relu6": lambda L, x, y: L.nn.functional.relu6(x),
    "fmax": lambda L, x, y: L.fmax(x, y),
    "fmin": lambda L, x, y: L.fmin(x, y),
    "maximum": lambda L, x, y: L.maximum(x, y),  # 64 elements: torch's vector loop on every one
    "clamp_tensor": lambda L, x, y: L.clamp(x, min=y),
}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("call", list(_ZERO_TIES))
def test_ties_between_zeros_of_two_signs_keep_torchs_zero(call, dtype):
    """Where x equals the bound or the other operand, torch's loops keep a zero of a given sign."""
    x = np.tile(np.array([-0.0, 0.0, 0.5, -0.5], dtype), 16)
    y = np.tile(np.array([0.0, -0.0, -0.0, 0.0], dtype), 16)
    mine = _ZERO_TIES[call](dc, dc.tensor(x), dc.tensor(y)).numpy()
    theirs = _ZERO_TIES[call](torch, torch.tensor(x), torch.tensor(y)).numpy()
    assert mine.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [3, 3.0, -2, -2.0, -0.5, -1, 2.0])
def test_pow_by_the_exponents_torch_multiplies_out_matches_bit_for_bit(exponent, dtype):
    """torch computes ``a ** 3`` as ``a * a * a``, ``a ** -2`` as ``1 / (a * a)``, ``a ** -0.5`` as ``1 / sqrt(a)``."""
    a = (np.random.default_rng(5).standard_normal(1000) * 3).astype(dtype)
    a[::50], a[1::50], a[2::50], a[3::50], a[4::50] = 0.0, -0.0, np.inf, -np.inf, 1e30
    mine, theirs = dc.pow(dc.tensor(a), exponent), torch.pow(torch.tensor(a), exponent)
    assert mine.numpy().tobytes() == theirs.numpy().tobytes()
    mine_, theirs_ = dc.tensor(a), torch.tensor(a)
    mine_.pow_(exponent)
    theirs_.pow_(exponent)
    assert mine_.numpy().tobytes() == theirs_.numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_addcmul_and_lerp_keep_the_sign_of_a_zero_sum(dtype):
    tiny = 1e-30 if dtype == "float32" else 1e-200  # its square underflows to zero
    x = np.array([-0.0, 0.0, -0.0, 0.0, 1.5, -1.5, 0.0, -0.0], dtype)
    y = np.array([2.0, -0.0, -0.0, 3.0, -1.5, 1.5, tiny, -tiny], dtype)
    for call in (lambda L, a, b: L.addcmul(a, a, b, value=0.5), lambda L, a, b: L.addcmul(a, b, b, value=-1.0),
                 lambda L, a, b: L.addcmul(a, b, -b), lambda L, a, b: L.addcmul(a, b, b),
                 lambda L, a, b: L.lerp(a, b, 0.0), lambda L, a, b: L.lerp(a, a, 0.7)):
        mine, theirs = call(dc, dc.tensor(x), dc.tensor(y)), call(torch, torch.tensor(x), torch.tensor(y))
        assert mine.numpy().tobytes() == theirs.numpy().tobytes()
