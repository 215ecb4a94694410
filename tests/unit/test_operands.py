"""Python numbers as operands and the overloads functions and methods pick (issue #14), without torch.

The expectations are torch 2.13's (tests/differential/test_vs_torch_operands.py checks them
live): a number operand of add/sub/mul/div is a wrapped number, the ``.Tensor`` overload runs and
promotion counts the number by its kind only (See Note [Wrapped numbers] in _composites.py).
"""

from __future__ import annotations

import math

import pytest

import dispatchcore as dc
from dispatchcore import functions as F
from dispatchcore._composites import WRAPPED_FLOATS, wrapped_number
from dispatchcore.dtypes import WrappedNumber, is_wrapped_number, result_type

A = dc.ops.aten


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


# --- wrapped numbers -----------------------------------------------------------------------------
def test_a_wrapped_number_is_a_flagged_0d_cpu_tensor():
    w = wrapped_number(2.5)
    assert is_wrapped_number(w) and w.dim() == 0 and w.device == dc.device("cpu")
    assert w.dtype is dc.float64 and w.item() == 2.5 and not w.requires_grad
    assert isinstance(w._meta, WrappedNumber) and w._meta.value == 2.5
    assert wrapped_number(True).dtype is dc.bool_ and wrapped_number(3).dtype is dc.int64
    assert wrapped_number("2") is None and wrapped_number(None) is None
    assert not is_wrapped_number(dc.tensor(2.5))


def test_wrapped_ints_and_floats_are_cached_read_only_but_never_zero():
    assert wrapped_number(7) is wrapped_number(7)
    assert wrapped_number(7) is not wrapped_number(7.0) and wrapped_number(7.0).dtype is dc.float64
    assert not wrapped_number(7)._data.flags.writeable
    zero, negative_zero = wrapped_number(0.0), wrapped_number(-0.0)
    assert math.copysign(1, negative_zero.item()) == -1 and math.copysign(1, zero.item()) == 1
    assert 0.0 not in WRAPPED_FLOATS
    assert (dc.ones(2) * -0.0).tolist() == [-0.0, -0.0]
    assert math.copysign(1, (dc.ones(1) * -0.0).item()) == -1


def test_wrapped_numbers_made_in_inference_mode_are_not_cached():
    with dc.inference_mode():
        w = wrapped_number(12345)
    assert w.is_inference() and wrapped_number(12345) is not w
    x = dc.ones(2, requires_grad=True)
    assert _node(x * 12345) == "MulBackward0"  # the cached one is a normal tensor: it can be saved


_TOO_BIG = [
    ("x * 2**70", lambda t: t.ones(2) * 2**70),
    ("2**70 * x", lambda t: 2**70 * t.ones(2)),
    ("x.add(2**70)", lambda t: t.ones(2).add(2**70)),
    ("x.mul_(2**70)", lambda t: t.ones(2).mul_(2**70)),
    ("int + 2**70", lambda t: t.ones(2, dtype=t.int64) + 2**70),
    ("x * 2**64", lambda t: t.ones(2) * 2**64),
    ("mul(x, 2**70)", lambda t: t.mul(t.ones(2), 2**70)),
    ("aten.mul.Tensor(x, 2**70)", lambda t: t.ops.aten.mul.Tensor(t.ones(2), 2**70)),
    ("x * (-2**63 - 1)", lambda t: t.ones(2) * (-2**63 - 1)),
]


@pytest.mark.parametrize("call", [c for _, c in _TOO_BIG], ids=[i for i, _ in _TOO_BIG])
def test_integers_beyond_uint64_raise_torchs_overflow_error(call):
    with pytest.raises(OverflowError, match="int too big to convert|can't convert negative int"):
        call(dc)


@pytest.mark.differential
@pytest.mark.parametrize("call", [c for _, c in _TOO_BIG], ids=[i for i, _ in _TOO_BIG])
def test_integers_beyond_uint64_raise_as_torch(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(OverflowError) as expected:
        call(torch)
    with pytest.raises(OverflowError) as got:
        call(dc)
    assert str(got.value) == str(expected.value)


def test_integers_of_int64_still_work_as_operands():
    assert (dc.ones(2) * (2**63 - 1)).tolist() == [float(2**63 - 1)] * 2
    assert (dc.ones(2, dtype=dc.int64) * (-2**63)).tolist() == [-2**63] * 2


@pytest.mark.parametrize(("dtype", "number", "expected"), [
    ("uint8", 2, "uint8"), ("uint8", 2.5, "float32"), ("uint8", True, "uint8"),
    ("int32", 2, "int32"), ("int32", 2.5, "float32"), ("int64", -3, "int64"),
    ("bool", 2, "int64"), ("bool", 2.5, "float32"), ("bool", True, "bool_"),
    ("float16", 2.5, "float16"), ("float32", 2, "float32"), ("float32", 2.5, "float32"),
    ("float64", 2.5, "float64"), ("float32", True, "float32"),
])
def test_number_operands_promote_as_the_lower_category(dtype, number, expected):
    x = dc.ones(3, dtype=getattr(dc, dtype))
    assert (x * number).dtype is getattr(dc, expected)
    assert (number * x).dtype is getattr(dc, expected)
    assert result_type(x, wrapped_number(number)) is getattr(dc, expected)


def test_a_wrapped_number_differs_from_a_0d_tensor_in_promotion():
    x = dc.tensor([1, 2], dtype=dc.int32)
    assert (x * dc.tensor(2.5, dtype=dc.float64)).dtype is dc.float64  # a 0-d tensor keeps its dtype
    assert (x * 2.5).dtype is dc.float32  # a number counts as the default dtype
    assert (dc.tensor(2, dtype=dc.int32) * 2).dtype is dc.int32
    assert (dc.tensor(2, dtype=dc.int32) * dc.tensor(2)).dtype is dc.int64


def test_integer_values_wrap_and_divide_as_torch():
    u = dc.tensor([1, 7, 200], dtype=dc.uint8)
    assert (u * 300).tolist() == [44, 52, 96] and (u * 300).dtype is dc.uint8
    assert (u + 100).tolist() == [101, 107, 44]
    assert (dc.tensor([1, 2], dtype=dc.int32) / 2).dtype is dc.float32
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        dc.tensor([True]) - 1


@pytest.mark.parametrize(("expr", "node", "ops"), [
    ("x * 2", "MulBackward0", ["aten.mul.Tensor"]),
    ("2 * x", "MulBackward0", ["aten.mul.Tensor"]),
    ("x + 1", "AddBackward0", ["aten.add.Tensor"]),
    ("1 + x", "AddBackward0", ["aten.add.Tensor"]),
    ("x - 1", "SubBackward0", ["aten.sub.Tensor"]),
    ("2 - x", "RsubBackward1", ["aten.rsub.Scalar"]),
    ("x / 3", "DivBackward0", ["aten.div.Tensor"]),
    # reciprocal and pow.Scalar save their output: a detach under a mode (Note [Detach through Python])
    ("3 / x", "MulBackward0", ["aten.reciprocal.default", "aten.detach.default", "aten.mul.Tensor"]),
    ("x ** 2", "PowBackward0", ["aten.pow.Tensor_Scalar"]),
    ("2 ** x", "PowBackward2", ["aten.pow.Scalar", "aten.detach.default"]),
    ("x.add(1, alpha=2)", "AddBackward0", ["aten.add.Tensor"]),
    ("x.mul(2.5)", "MulBackward0", ["aten.mul.Tensor"]),
    ("x.true_divide(2)", "DivBackward0", ["aten.div.Tensor"]),
    ("dc.mul(x, 2)", "MulBackward0", ["aten.mul.Tensor"]),
    ("dc.add(2, x)", "AddBackward0", ["aten.add.Tensor"]),
    ("dc.sub(x, 1, alpha=2)", "SubBackward0", ["aten.sub.Tensor"]),
    ("dc.div(x, 2)", "DivBackward0", ["aten.div.Tensor"]),
    ("F.true_divide(x, 2)", "DivBackward0", ["aten.div.Tensor"]),
    ("F.rsub(x, 2)", "RsubBackward1", ["aten.rsub.Scalar"]),
    ("x == 1", None, ["aten.eq.Scalar"]),
    ("1 < x", None, ["aten.gt.Scalar"]),
])
def test_number_operands_take_torchs_overload_and_node(expr, node, ops):
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    with dc.LoggingMode() as log:
        r = eval(expr, {"x": x, "dc": dc, "F": F})  # noqa: S307 - the table above
    assert _node(r) == node
    assert log.ops == ops


@pytest.mark.parametrize(("expr", "op"), [
    ("x.add_(1)", "aten.add_.Tensor"), ("x.sub_(1)", "aten.sub_.Tensor"), ("x.mul_(2)", "aten.mul_.Tensor"),
    ("x.div_(2)", "aten.div_.Tensor"), ("x.pow_(2)", "aten.pow_.Scalar"), ("x.add_(1, alpha=2)", "aten.add_.Tensor"),
])
def test_inplace_number_operands_take_torchs_overload(expr, op):
    x = dc.tensor([1.0, 2.0])
    with dc.LoggingMode() as log:
        eval(expr, {"x": x})  # noqa: S307
    assert log.ops == [op]


@pytest.mark.parametrize(("expr", "op", "args"), [
    ("x * 2", "aten.mul.Tensor", ("x", 2)), ("2 * x", "aten.mul.Tensor", ("x", 2)),
    ("x.add_(1)", "aten.add_.Tensor", ("x", 1)), ("x / 2.5", "aten.div.Tensor", ("x", 2.5)),
    ("x * True", "aten.mul.Tensor", ("x", True)), ("x + 1j", "aten.add.Tensor", ("x", 1j)),
    ("dc.add(2, x)", "aten.add.Tensor", (2, "x")), ("x - 3", "aten.sub.Tensor", ("x", 3)),
])
def test_the_mode_sees_the_python_number(expr, op, args):
    """Note [Numbers for a mode]: torch's toPyObject hands a wrapped number over as the number."""
    x = dc.ones(2)
    with dc.LoggingMode() as log:
        eval(expr, {"x": x, "dc": dc})  # noqa: S307 - a fixed table
    (record,) = log.records
    assert str(record.func) == op
    seen = tuple("x" if a is x else a for a in record.args)
    assert seen == args and [type(a) for a in seen] == [type(a) for a in args]


def test_logging_mode_prints_the_number():
    x = dc.ones(2)
    with dc.LoggingMode() as log:
        _ = x * 2
        _ = x / 2.5
        x.add_(True)
    assert log.lines == ["$1: f32[2] = aten.mul.Tensor($0, 2)", "$2: f32[2] = aten.div.Tensor($0, 2.5)",
                         "$0: f32[2] = aten.add_.Tensor($0, True)"]


def test_a_mode_that_forwards_the_number_gets_torchs_result():
    """``func(*args)`` with the number: the handle wraps it again (Note [Numbers for Tensors])."""
    xi = dc.tensor([1, 2], dtype=dc.int32)
    xg = dc.ones(2, requires_grad=True)
    with dc.LoggingMode():
        r = xi * 2.5
        y = xg * 2
        z = 2 - xg
    assert r.dtype is dc.float32 and r.tolist() == [2.5, 5.0]
    assert _node(y) == "MulBackward0" and _node(z) == "RsubBackward1"
    y.sum().backward()
    assert xg.grad.tolist() == [2.0, 2.0]


def test_a_mode_gets_a_number_for_a_wrapped_keyword_value():
    seen = []

    class Spy(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((args, dict(kwargs or {})))
            return func(*args, **(kwargs or {}))

    x = dc.ones(2)
    with Spy():
        A.add.Tensor(x, other=3)  # bound by position, as torch passes it
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            A.mul.out(x, x, out=2)  # a keyword-only Tensor: wrapped too, and handed over as the number
    assert seen[0][0][1] == 3 and type(seen[0][0][1]) is int
    assert seen[1][1] == {"out": 2} and type(seen[1][1]["out"]) is int


# --- handles take numbers for Tensor arguments (Note [Numbers for Tensors]) ----------------------
def test_handles_wrap_a_number_for_a_tensor_argument():
    x, xi = dc.ones(2), dc.tensor([1, 2], dtype=dc.int32)
    assert A.mul.Tensor(x, 2).tolist() == [2.0, 2.0]
    r = A.mul.Tensor(xi, 2.5)
    assert r.dtype is dc.float32 and r.tolist() == [2.5, 5.0]
    assert A.mul.Tensor(2, xi).dtype is dc.int32 and A.mul.Tensor(xi, True).dtype is dc.int32
    assert A.mul.Tensor(xi, 1j).dtype is dc.complex64
    r = A.mul.Tensor(2, 3)
    assert r.dtype is dc.int64 and r.dim() == 0 and r.item() == 6 and not is_wrapped_number(r)
    assert A.add.Tensor(x, 2, alpha=3).tolist() == [7.0, 7.0]
    assert A.mul.Tensor(x, other=2).tolist() == [2.0, 2.0]
    assert A.mul.Tensor(self=2, other=x).tolist() == [2.0, 2.0]  # ``self=`` is the operator's keyword
    assert A.sub.Tensor(2, x).tolist() == [1.0, 1.0]
    assert A.div.Tensor_mode(xi, 2, rounding_mode="floor").tolist() == [0, 1]
    assert A.mul.out(x, 2, out=dc.empty(2)).tolist() == [2.0, 2.0]
    assert A.copy_.default(dc.zeros(2), 3).tolist() == [3.0, 3.0]
    assert A._to_copy.default(2).dtype is dc.int64


def test_numpy_numbers_are_wrapped_too():
    np = pytest.importorskip("numpy")
    x = dc.ones(2)
    assert A.mul.Tensor(x, np.int64(2)).tolist() == [2.0, 2.0]
    assert A.mul.Tensor(x, np.float32(2)).dtype is dc.float32


def test_a_number_for_a_tensor_argument_records_mulbackward0():
    xg = dc.ones(2, requires_grad=True)
    for y in (A.mul.Tensor(xg, 2), A.mul.Tensor(2, xg)):
        assert _node(y) == "MulBackward0" and len(y.grad_fn.next_functions) == 2
        assert sum(f is None for f, _ in y.grad_fn.next_functions) == 1
        xg.grad = None
        y.sum().backward()
        assert xg.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize(("call", "arg", "kind"), [
    (lambda x: A.relu.default(2), "self", "int"), (lambda x: A.mm.default(x.view(1, 2), 2), "mat2", "int"),
    (lambda x: A.where.self(x > 0, x, 0.0), "other", "float"), (lambda x: A.rsub.Tensor(x, 2), "other", "int"),
    (lambda x: A.eq.Tensor(x, 2), "other", "int"), (lambda x: A.maximum.default(x, 2), "other", "int"),
    (lambda x: A.clamp.Tensor(x, 0), "min", "int"), (lambda x: A.mul.Tensor(x, "a"), "other", "str"),
])
def test_other_operators_refuse_numbers_for_tensors_as_torch(call, arg, kind):
    with pytest.raises(RuntimeError, match=f"Expected a value of type '(Optional\\[)?Tensor\\]?' for argument "
                                           f"'{arg}' but instead found type '{kind}'") as info:
        call(dc.ones(2))
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_a_tensor_list_refuses_numbers():
    with pytest.raises(RuntimeError, match="Expected a value of type 'List\\[Tensor\\]'"):
        A.cat.default([dc.ones(2), 2])


def test_a_number_for_an_inplace_self_gets_its_own_tensor():
    with pytest.raises(RuntimeError, match="output with shape \\[\\] doesn't match the broadcast shape \\[2\\]"):
        A.add_.Tensor(2, dc.ones(2))
    # torch returns the written wrapped number as a Python number (toPyObject)
    r = A.add_.Tensor(2, 3)
    assert r == 5 and type(r) is int
    assert type(A.add_.Tensor(2.5, 3)) is float
    assert wrapped_number(2).item() == 2 and wrapped_number(2.5).item() == 2.5  # the caches are untouched
    r = A.to.dtype(2, dc.int64)
    assert r == 2 and type(r) is int
    assert A.to.dtype(2, dc.float32).dtype is dc.float32


def test_numbers_as_tensors_follows_torchs_list():
    assert A.mul.Tensor.schema.numbers_as_tensors and A.add_.Tensor.schema.numbers_as_tensors
    assert A.copy_.default.schema.numbers_as_tensors and A._to_copy.default.schema.numbers_as_tensors
    assert not A.relu.default.schema.numbers_as_tensors and not A.rsub.Tensor.schema.numbers_as_tensors
    from dispatchcore.schema import parse_schema

    assert parse_schema("prims::f(Tensor a) -> Tensor").numbers_as_tensors
    assert not parse_schema("myops::mul(Tensor a) -> Tensor").numbers_as_tensors


def test_a_number_for_a_user_operator_tensor_is_refused():
    lib = dc.Library("numops_test", "DEF")
    lib.define("mul(Tensor self, Tensor other) -> Tensor")
    lib.impl("mul", lambda a, b: a, "CPU")
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'other'"):
        dc.ops.numops_test.mul.default(dc.ones(2), 2)


# --- packets pick what torch picks --------------------------------------------------------------
@pytest.mark.parametrize(("call", "op"), [
    (lambda x: A.add(x, 2), "aten.add.Tensor"), (lambda x: A.add(x, 2.5), "aten.add.Tensor"),
    (lambda x: A.add(2, x), "aten.add.Tensor"), (lambda x: A.add(x, 2, alpha=2), "aten.add.Tensor"),
    (lambda x: A.add(x, 2, 2), "aten.add.Scalar"), (lambda x: A.mul(x, 2), "aten.mul.Tensor"),
    (lambda x: A.div(x, 2), "aten.div.Tensor"), (lambda x: A.div(x, 2, rounding_mode="floor"), "aten.div.Tensor_mode"),
    (lambda x: A.sub(2, x), "aten.sub.Tensor"), (lambda x: A.rsub(x, 2), "aten.rsub.Scalar"),
    (lambda x: A.eq(x, 2), "aten.eq.Scalar"), (lambda x: A.pow(x, 2), "aten.pow.Tensor_Scalar"),
])
def test_packets_resolve_numbers_as_torch(call, op):
    x = dc.ones(2)
    with dc.LoggingMode() as log:
        call(x)
    assert log.ops[-1] == op


def test_packet_of_two_numbers():
    r = A.add(2, 3)
    assert r.dtype is dc.int64 and r.item() == 5


def test_explain_resolves_numbers_as_torch():
    x = dc.ones(2)
    e = dc.explain(A.add, x, 2)
    assert e.op is A.add.Tensor and dc.explain("aten::add", x, 2).op is A.add.Tensor
    assert "wrapped number 2" in str(e)
    assert dc.explain(A.add, x, 2, 2).op is A.add.Scalar


# --- saved wrapped numbers (Note [Saved wrapped numbers]) -----------------------------------------
def test_a_saved_wrapped_number_is_freed_with_its_node():
    xg = dc.ones(3, requires_grad=True)
    y = xg * 2
    (saved,) = y.grad_fn._values.values()
    assert is_wrapped_number(saved)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert xg.grad.tolist() == [4.0] * 3
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_double_backward_through_a_number_operand():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    (g,) = dc.autograd.grad((x * x * 3 / 2.0).sum(), x, create_graph=True)
    assert g.tolist() == [3.0, 6.0]
    (g2,) = dc.autograd.grad(g.sum(), x)
    assert g2.tolist() == [3.0, 3.0]


def test_number_gradients_flow_to_the_tensor_only():
    x = dc.tensor([1.0, -2.0], requires_grad=True)
    y = (x * 3 + 1) / 2 - 4
    y.sum().backward()
    assert x.grad.tolist() == [1.5, 1.5]
    assert [type(f).__name__ if f is not None else None for f, _ in (x * 2).grad_fn.next_functions] == [
        "AccumulateGrad", None]


def test_the_scalar_overloads_stay_callable():
    x = dc.ones(2, requires_grad=True)
    assert _node(A.mul.Scalar(x, 2)) == "MulBackward1"
    assert _node(A.add.Scalar(x, 2)) == "AddBackward1"
    assert _node(A.div.Scalar(x, 2)) == "DivBackward1"
    assert A.add_.Scalar(x.clone(), 2).tolist() == [3.0, 3.0]


def test_meta_tensors_take_wrapped_numbers():
    m = dc.ones(2, 3, device="meta", dtype=dc.int32)
    assert (m * 2).dtype is dc.int32 and (m * 2).device.type == "meta"
    assert (m * 2.5).dtype is dc.float32 and (2 - m).shape == (2, 3)


# --- overloads chosen as torch chooses them -------------------------------------------------------
def test_clamp_with_tensor_bounds_takes_clamp_tensor():
    x = dc.tensor([1.0, -2.0, 3.0], requires_grad=True)
    lo = dc.tensor([0.0, 0.0, 5.0], requires_grad=True)
    hi = dc.tensor([2.0, 2.0, 2.0], requires_grad=True)
    with dc.LoggingMode() as log:
        r = dc.clamp(x, lo, hi)
    assert log.ops == ["aten.clamp.Tensor"] and _node(r) == "ClampBackward0"
    assert r.tolist() == [1.0, 0.0, 2.0]  # lo > hi: hi wins, as in torch
    r.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0]
    assert lo.grad.tolist() == [0.0, 1.0, 0.0] and hi.grad.tolist() == [0.0, 0.0, 1.0]


def test_clamp_with_a_number_and_a_0d_tensor_reads_the_tensor_as_a_number():
    x, one = dc.tensor([-1.0, 0.5, 2.0]), dc.tensor(1.0)  # made outside: a literal inside logs lift_fresh
    with dc.LoggingMode() as log:
        r = x.clamp(0, one)
    # torch reads the number with item(): a mode sees _local_scalar_dense first
    assert log.ops == ["aten._local_scalar_dense.default", "aten.clamp.default"] and r.tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(TypeError, match="clamp"):
        x.clamp(0, dc.ones(3))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        x.clamp()


def test_clamp_min_with_a_tensor_takes_clamp_min_tensor():
    x = dc.tensor([1.0, -2.0], requires_grad=True)
    m = dc.tensor([0.0, 0.0], requires_grad=True)
    r = dc.clamp_min(x, m)
    assert _node(r) == "ClampMinBackward1" and r.tolist() == [1.0, 0.0]
    r.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0] and m.grad.tolist() == [0.0, 1.0]
    assert _node(dc.clamp_min(x, 0)) == "ClampMinBackward0"
    y = dc.tensor([1, 5], dtype=dc.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        y.clamp_min_(dc.tensor(0.5))


def test_squeeze_with_dims_takes_squeeze_dims():
    x = dc.ones(1, 3, 1, requires_grad=True)
    with dc.LoggingMode() as log:
        r = dc.squeeze(x, (0, 2))
    assert log.ops == ["aten.squeeze.dims"] and r.shape == (3,) and _node(r) == "SqueezeBackward2"
    assert r._base is x  # a view
    r.sum().backward()
    assert x.grad.shape == (1, 3, 1)
    assert x.squeeze([0]).shape == (3, 1) and x.squeeze(0, 2).shape == (3,) and x.squeeze(dim=(2,)).shape == (1, 3)
    assert _node(x.squeeze(0)) == "SqueezeBackward1" and _node(x.squeeze()) == "SqueezeBackward0"
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.squeeze((0, -3))


@pytest.mark.parametrize(("mode", "expected"), [("floor", [-4, 3, -4, 0]), ("trunc", [-3, 3, -4, 0])])
def test_div_rounding_modes_keep_integers(mode, expected):
    x = dc.tensor([-7, 7, -8, 1])
    with dc.LoggingMode() as log:
        r = dc.div(x, 2, rounding_mode=mode)
    assert log.ops == ["aten.div.Tensor_mode"] and r.dtype is dc.int64 and r.tolist() == expected
    assert x.clone().div_(2, rounding_mode=mode).tolist() == expected
    assert A.div.Scalar_mode(x, 2, rounding_mode=mode).tolist() == expected
    assert dc.div(x, 2.0, rounding_mode=mode).dtype is dc.float32


def test_div_rounding_mode_nodes_and_errors():
    x = dc.tensor([-7.5, 7.5], requires_grad=True)
    y = dc.tensor([2.0, 2.0], requires_grad=True)
    r = dc.div(x, y, rounding_mode="floor")
    assert _node(r) == "DivBackward2" and r.tolist() == [-4.0, 3.0]
    r.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] and y.grad.tolist() == [0.0, 0.0]
    assert _node(x.div(2, rounding_mode=None)) == "DivBackward2"
    assert _node(A.div.Scalar_mode(x, 2, rounding_mode="trunc")) == "DivBackward3"
    with pytest.raises(RuntimeError, match="but found 'round'"):
        dc.div(x, 2, rounding_mode="round")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        dc.div(dc.tensor([1, 2]), 0, rounding_mode="trunc")


def test_max_and_min_of_two_tensors_are_maximum_and_minimum():
    a = dc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = dc.tensor([1.0, 5.0, 0.0], requires_grad=True)
    with dc.LoggingMode() as log:
        hi, lo = dc.max(a, b), F.min(a, b)
    assert log.ops == ["aten.maximum.default", "aten.minimum.default"]
    assert hi.tolist() == [1.0, 5.0, 3.0] and lo.tolist() == [1.0, 2.0, 0.0]
    assert _node(hi) == "MaximumBackward0" and _node(lo) == "MinimumBackward0"
    hi.sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0] and b.grad.tolist() == [0.5, 1.0, 0.0]  # a tie splits
    assert a.max(b).tolist() == [1.0, 5.0, 3.0] and dc.max(a, other=b).tolist() == [1.0, 5.0, 3.0]
    assert dc.max(a).item() == 3.0 and dc.max(a, 0)[0].item() == 3.0
    assert (F.maximum(dc.tensor([1, 5]), dc.tensor(2.5))).dtype is dc.float32
    with pytest.raises(RuntimeError, match="maximum not implemented for complex tensors"):
        F.maximum(dc.tensor([1j]), dc.tensor([1j]))


def test_empty_matmul_gives_zeros_and_gradients():
    a = dc.ones(5, 5, 0, requires_grad=True)
    b = dc.ones(0, 5, requires_grad=True)
    r = a @ b
    assert r.shape == (5, 5, 5) and r.tolist() == [[[0.0] * 5] * 5] * 5
    assert _node(r) == "UnsafeViewBackward0"
    r.sum().backward()
    assert a.grad.shape == (5, 5, 0) and b.grad.shape == (0, 5)


def test_reciprocal_and_rsub():
    x = dc.tensor([2.0, -4.0], requires_grad=True)
    assert F.reciprocal(x).tolist() == [0.5, -0.25] and _node(F.reciprocal(x)) == "ReciprocalBackward0"
    assert F.reciprocal(dc.tensor([2, 4])).dtype is dc.float32
    assert F.rsub(x, dc.ones(2), alpha=2).tolist() == [-3.0, 9.0]
    assert _node(F.rsub(x, dc.ones(2))) == "RsubBackward0"
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        2 - dc.tensor([True])
