"""The ``torch.*`` functions (``dispatchcore.add``, ``cat``, ``where``, ...) against torch 2.13.

Each case is written once against a module ``m`` (``dispatchcore`` or ``torch``: both have
``tensor``, ``add``, ...), runs on both, and must give the same values, dtype and shape; when
torch raises, dispatchcore must raise the same type with the same message.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dispatchcore as dc  # noqa: E402

pytestmark = pytest.mark.differential


def _x(m):
    return m.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])


def _into(m, fn, shape=(2, 3)):
    out = m.empty(*shape)
    result = fn(out)
    assert result is out  # out= returns the out tensor itself
    return out


CASES = {
    "add": lambda m: m.add(_x(m), _x(m)),
    "add_alpha": lambda m: m.add(_x(m), _x(m), alpha=3),
    "add_number": lambda m: m.add(_x(m), 2),
    "add_number_first": lambda m: m.add(2, m.tensor([1, 2], dtype=m.int32)),
    "add_two_numbers": lambda m: m.add(2, 3),
    "add_keywords": lambda m: m.add(input=_x(m), other=m.ones(3)),
    "add_out": lambda m: _into(m, lambda o: m.add(_x(m), 1.5, out=o)),
    "sub_number_first_alpha": lambda m: m.sub(2, m.tensor([1.0, 2.0]), alpha=3),
    "sub_broadcast": lambda m: m.sub(_x(m), m.tensor([1.0, 2.0, 3.0])),
    "mul_promotes": lambda m: m.mul(m.tensor([1, 2]), 2.5),
    "mul_out": lambda m: _into(m, lambda o: m.mul(_x(m), _x(m), out=o)),
    "div_ints": lambda m: m.div(m.tensor([1, 2]), m.tensor([2, 4])),
    "pow_tensor_number": lambda m: m.pow(_x(m), 2),
    "pow_number_base": lambda m: m.pow(2, m.tensor([1.0, 3.0])),
    "exp": lambda m: m.exp(_x(m)),
    "exp_out": lambda m: _into(m, lambda o: m.exp(_x(m), out=o)),
    "neg_abs_sqrt": lambda m: m.sqrt(m.abs(m.neg(_x(m)))),
    "sin_cos_tanh_sigmoid_log": lambda m: m.log(m.sigmoid(m.tanh(m.cos(m.sin(_x(m)))))),
    "relu": lambda m: m.relu(_x(m)),
    "relu_": lambda m: m.relu_(_x(m)),
    "clamp": lambda m: m.clamp(_x(m), min=-1.0, max=2.0),
    "clamp_min": lambda m: m.clamp_min(_x(m), 0.5),
    "clamp_max_tensor": lambda m: m.clamp_max(_x(m), m.tensor([0.5, 1.0, -1.0])),
    "clamp_max_": lambda m: m.clamp_max_(_x(m), 0.5),
    "clamp_max_out": lambda m: _into(m, lambda o: m.clamp_max(_x(m), 0.5, out=o)),
    "clamp_min_tensor_out": lambda m: _into(m, lambda o: m.clamp_min(_x(m), m.tensor(0.25), out=o)),
    "clamp_out_tensor_bounds": lambda m: _into(m, lambda o: m.clamp(_x(m), m.tensor(-0.5), m.tensor(0.5), out=o)),
    "ge_out": lambda m: _into(m, lambda o: m.ge(_x(m), 0.5, out=o)),
    "eq_ge": lambda m: m.eq(m.ge(_x(m), 0), m.tensor(True)),
    "lt_number": lambda m: m.lt(_x(m), 0.0),
    "sum": lambda m: m.sum(_x(m)),
    "sum_dim_keepdim": lambda m: m.sum(_x(m), dim=1, keepdim=True),
    "sum_dtype": lambda m: m.sum(m.tensor([1, 2]), dtype=m.float64),
    "mean_dims": lambda m: m.mean(_x(m), (0, 1)),
    "amax": lambda m: m.amax(_x(m), 0),
    "argmax": lambda m: m.argmax(_x(m), dim=1),
    "max": lambda m: m.max(_x(m)),
    "max_dim": lambda m: m.max(_x(m), 1),
    "mm": lambda m: m.mm(_x(m), m.t(_x(m))),
    "bmm": lambda m: m.bmm(m.ones(2, 2, 3), m.ones(2, 3, 4)),
    "matmul": lambda m: m.matmul(_x(m), m.ones(3)),
    "softmax": lambda m: m.softmax(_x(m), 1),
    "log_softmax_dtype": lambda m: m.log_softmax(_x(m), dim=0, dtype=m.float64),
    "where_numbers": lambda m: m.where(_x(m) > 0, _x(m), 0.0),
    "where_int_and_float": lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2], dtype=m.int32), 0.5),
    "cat": lambda m: m.cat([_x(m), _x(m)]),
    "cat_tuple_dim": lambda m: m.cat((_x(m), _x(m)), dim=1),
    "stack": lambda m: m.stack([_x(m), _x(m)], dim=2),
    "transpose": lambda m: m.transpose(_x(m), 0, 1),
    "permute": lambda m: m.permute(m.ones(2, 3, 4), (2, 0, 1)),
    "reshape": lambda m: m.reshape(_x(m), (3, -1)),
    "squeeze_unsqueeze": lambda m: m.squeeze(m.unsqueeze(_x(m), 0), 0),
    "select": lambda m: m.select(_x(m), 1, 2),
    "as_strided": lambda m: m.as_strided(_x(m), (2, 2), (1, 2)),
    "clone_detach": lambda m: m.detach(m.clone(_x(m))),
    "zero_fill_": lambda m: m.add(m.zero_(_x(m)), m.fill_(_x(m), 2.0)),
}


def _plain(value):
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dc.Tensor):
        return value.numpy(), str(value.dtype).rpartition(".")[2], tuple(value.shape)
    return value.detach().numpy(), str(value.dtype).rpartition(".")[2], tuple(value.shape)


def _same(ours, theirs):
    if isinstance(ours, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    (a, adt, ashape), (b, bdt, bshape) = ours, theirs
    assert (adt, ashape) == (bdt, bshape)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_function_matches_torch(name):
    _same(_plain(CASES[name](dc)), _plain(CASES[name](torch)))


ERRORS = {
    "relu_of_a_number": lambda m: m.relu(2),
    "exp_of_a_list": lambda m: m.exp([1.0]),
    "sum_of_a_number": lambda m: m.sum(2),
    "cat_of_a_tensor": lambda m: m.cat(m.ones(2)),
    "add_of_a_string": lambda m: m.add("x", m.ones(2)),
    "add_positional_alpha": lambda m: m.add(m.ones(2), m.ones(2), 2),
    "add_unknown_keyword": lambda m: m.add(m.ones(2), m.ones(2), bad=1),
    "mul_alpha": lambda m: m.mul(m.ones(2), m.ones(2), alpha=2),
    "relu_out": lambda m: m.relu(m.ones(2), out=m.ones(2)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_function_raises_like_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](dc)
    assert str(ours.value) == str(theirs.value)
