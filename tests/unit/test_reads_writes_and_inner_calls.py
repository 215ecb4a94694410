"""What modes and handlers see of ``item()``, ``x[i] = v``, ``iter``, reflected operators and ``F.*``'s inner calls.

The same behaviours are compared with torch in tests/differential (test_vs_torch_setitem.py,
test_vs_torch_item_iter_new_tensor.py, test_vs_torch_reflected_operators.py,
test_vs_torch_functional_inner_calls.py); these checks run without torch.
"""

from __future__ import annotations

from typing import Any

import pytest

import dispatchcore as dc
import dispatchcore.nn.functional as F
from dispatchcore.fake_tensor import DataDependentOutputException, FakeTensorMode
from dispatchcore.fx import make_fx
from dispatchcore.overrides import TorchFunctionMode, resolve_name


def _ops(fn: Any) -> list[str]:
    with dc.LoggingMode() as log:
        fn()
    return log.ops


def test_item_dispatches_only_where_a_mode_can_see_it():
    s = dc.tensor(2.5)
    assert s.item() == 2.5 and float(s) == 2.5
    assert _ops(lambda: (s.item(), float(s), bool(s), int(s))) == ["aten._local_scalar_dense.default"] * 4
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        dc.ones(2).item()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        dc.ones(1, device="meta").item()


def test_item_under_fake_mode_and_make_fx():
    with FakeTensorMode():
        assert dc.tensor(0.5).item() == 0.5
        with pytest.raises(DataDependentOutputException):
            dc.ones(2).sum().item()
    with pytest.raises(RuntimeError, match="tracing_mode='symbolic' in your make_fx call"):
        make_fx(lambda x: x * x.sum().item())(dc.ones(2))
    gm = make_fx(lambda x: x * x.new_tensor(3.0).item())(dc.ones(2))
    assert [str(n.target) for n in gm.graph.nodes if n.op == "call_function"] == [
        "aten.lift_fresh_copy.default", "aten.mul.Tensor"]


@pytest.mark.parametrize(("program", "ops"), [
    ("x[0] = 1.0", ["aten.lift_fresh.default", "aten.select.int", "aten.copy_.default"]),
    ("x[1:] = 1.0", ["aten.lift_fresh.default", "aten.slice.Tensor", "aten.fill_.Tensor"]),
    ("x[:] = 1.0", ["aten.lift_fresh.default", "aten.fill_.Tensor"]),
    ("x[i] = 1.0", ["aten.lift_fresh.default", "aten.index_put_.default"]),
    ("x[False] = 1.0", ["aten.lift_fresh.default"]),
    ("x[True] = 1.0", ["aten.lift_fresh.default", "aten.unsqueeze.default", "aten.fill_.Tensor"]),
    ("x[0:2] = v", ["aten.slice.Tensor", "aten.view.default", "aten.expand.default", "aten.copy_.default"]),
])
def test_setitem_lifts_the_number_first_then_writes(program, ops):
    env = {"x": dc.tensor([1.0, 2.0, 3.0]), "i": dc.tensor([0, 2]), "v": dc.ones(1)}
    assert _ops(lambda: exec(program, env)) == ops  # noqa: S102 - the fixed table above
    with dc.LoggingMode() as log:
        env["x"][1:] = 1.0
    assert log.records[1].args[1:] == (0, 1, 9223372036854775807)


def test_setitem_under_fake_mode_writes_a_fake_constant():
    with FakeTensorMode():
        x = dc.ones(3)
        x[0] = 2.0
        x[1:] = 3.0
        assert type(x).__name__ == "FakeTensor"


def test_iteration_shows_dim_and_unbind():
    seen: list[Any] = []

    class Names(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(resolve_name(func))
            return func(*args, **(kwargs or {}))

    m = dc.ones(2, 3)
    with Names():
        rows = [r for r in m]
    assert seen == ["torch.Tensor.dim", "torch.Tensor.unbind"] and len(rows) == 2


@pytest.mark.parametrize(("program", "op", "value"), [
    ("a.__rmod__(b)", "aten.remainder.Tensor", [2, 3, 1]),
    ("a.__rfloordiv__(b)", "aten.floor_divide.default", [0, 0, 0]),
    ("a.__rlshift__(b)", "aten.bitwise_left_shift.Tensor", [64, 384, 512]),
    ("a.__rrshift__(b)", "aten.bitwise_right_shift.Tensor", [0, 0, 0]),
])
def test_a_reflected_operator_takes_a_tensor_operand(program, op, value):
    env = {"a": dc.tensor([5, 7, 9]), "b": dc.tensor([2, 3, 1])}
    with dc.LoggingMode() as log:
        out = eval(program, env)  # noqa: S307 - the fixed table above
    assert log.ops == [op] and out.tolist() == value


def test_rmatmul_and_rdiv_are_torchs():
    x = dc.tensor([1.0, 2.0])
    assert x.__rmatmul__(x).item() == 5.0 and x.__rmatmul__(2) is NotImplemented
    assert dc.Tensor.__rdiv__ is dc.Tensor.__rtruediv__
    assert resolve_name(dc.Tensor.__rdiv__) == "torch.Tensor.__rtruediv__"


def test_a_duck_type_reaches_its_handler_from_an_inner_call():
    class Duck:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func.__name__, len(args), kwargs

    x = dc.tensor([1.0, -1.0])
    assert F.elu(x, alpha=Duck()) == ("elu", 2, None)
    assert F.nll_loss(dc.ones(2, 2), dc.tensor([0, 1]), ignore_index=Duck())[0] == "nll_loss_nd"
    result = F.linear(x, dc.ones(2, 2), bias=Duck())
    assert result[0] == "linear" and result[1] == 2 and list(result[2]) == ["bias"]
    with pytest.raises(Exception, match="alpha"):
        F.elu(x, alpha="no")
