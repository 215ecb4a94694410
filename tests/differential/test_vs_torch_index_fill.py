"""``index_fill`` (four overloads and ``out=``) and ``_unique`` against torch 2.13.

Each case runs on both libraries and compares the result (values, dtype, shape, strides), or the
error; gradients with their node names (the value's gradient calls ``_unique``), the meta
kernels' checks and geometry, and the operators a mode sees are compared too.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential


def _run(lib, fn):
    return outcome(lib, fn)


def _x(t):
    return t.arange(12.0).reshape(3, 4)


def _i(t, *values):
    return t.tensor(list(values))


CASES = {
    "scalar": lambda t: _x(t).index_fill(1, _i(t, 0, 2), -1),
    "negative-indices": lambda t: _x(t).index_fill(1, _i(t, -1, 0), -1),
    "negative-dim": lambda t: _x(t).index_fill(-2, _i(t, 1), 9),
    "zero-dim-index": lambda t: _x(t).index_fill(1, t.tensor(2), -1),
    "duplicate-indices": lambda t: _x(t).index_fill(0, _i(t, 1, 1), 0),
    "no-indices": lambda t: _x(t).index_fill(1, t.tensor([], dtype=t.int64), 9),
    "tensor-value": lambda t: _x(t).index_fill(1, _i(t, 0), t.tensor(7, dtype=t.int64)),
    "float-into-int": lambda t: t.arange(6).reshape(2, 3).index_fill(1, _i(t, 0), 2.5),
    "float-tensor-into-int": lambda t: t.arange(6).reshape(2, 3).index_fill(1, _i(t, 0), t.tensor(2.5)),
    "bool": lambda t: t.ones(2, dtype=t.bool).index_fill(0, _i(t, 1), 0),
    "zero-dim-self": lambda t: t.tensor(5.0).index_fill(0, _i(t, 0), 1),
    "zero-dim-self-dim-minus-one": lambda t: t.tensor(5.0).index_fill(-1, _i(t, 0), 1),
    "transposed-keeps-strides": lambda t: _x(t).t().index_fill(0, _i(t, 1), 0),
    "in-place": lambda t: _x(t).index_fill_(1, _i(t, 1), 9),
    "in-place-tensor": lambda t: _x(t).index_fill_(0, _i(t, 2), t.tensor(-3.0)),
    "function": lambda t: t.index_fill(_x(t), 1, _i(t, 1), 9),
    "function-tensor": lambda t: t.index_fill(_x(t), 1, _i(t, 3), t.tensor(4.0)),
    "out-of-bounds": lambda t: _x(t).index_fill(1, _i(t, 4), -1),
    "out-of-bounds-negative": lambda t: _x(t).index_fill(1, _i(t, -5), -1),
    "zero-dim-self-out-of-bounds": lambda t: t.tensor(5.0).index_fill(0, _i(t, 1), 1),
    "int32-index-refused": lambda t: _x(t).index_fill(1, t.tensor([0], dtype=t.int32), -1),
    "float-index-refused": lambda t: _x(t).index_fill(1, t.tensor([0.0]), -1),
    "2d-index-refused": lambda t: _x(t).index_fill(1, t.tensor([[0]]), -1),
    "dim-out-of-range": lambda t: _x(t).index_fill(2, _i(t, 0), -1),
    "vector-value-refused": lambda t: _x(t).index_fill(1, _i(t, 0), t.tensor([1.0])),
    "overflow": lambda t: t.ones(2, dtype=t.int32).index_fill(0, _i(t, 1), 2**40),
    "overflow-before-bounds": lambda t: t.ones(2, dtype=t.int32).index_fill(0, _i(t, 5), 2**40),
    "complex-into-real": lambda t: _x(t).index_fill(1, _i(t, 0), 1j),
    "expanded-warns": lambda t: t.zeros(1).expand(3).index_fill_(0, _i(t, 1), 1.0),
    "index-aliases-self": lambda t: (lambda a: a.index_fill_(0, a, 0))(t.tensor([1, 0])),
    "out": lambda t: t.ops.aten.index_fill.int_Scalar_out(_x(t), 1, _i(t, 0), 1, out=t.empty(0)),
    "out-tensor": lambda t: t.ops.aten.index_fill.int_Tensor_out(_x(t), 0, _i(t, 1), t.tensor(3.0), out=t.empty(0)),
    "out-dtype-exact": lambda t: t.ops.aten.index_fill.int_Scalar_out(_x(t), 1, _i(t, 0), 1,
                                                                      out=t.empty(0, dtype=t.int64)),
    "method-float-dim-refused": lambda t: _x(t).index_fill(1.0, _i(t, 0), 1),
    "unique": lambda t: t.ops.aten._unique.default(t.tensor([3, 1, 3, 2]), False),
    "unique-sorted-inverse": lambda t: t.ops.aten._unique.default(t.tensor([[3.0, 1.0], [3.0, 2.0]]), True, True),
    "unique-nan": lambda t: t.ops.aten._unique.default(t.tensor([float("nan"), 1.0, float("nan")]), True, True),
    "unique-bool": lambda t: t.ops.aten._unique.default(t.tensor([True, False, True])),
    "unique-empty": lambda t: t.ops.aten._unique.default(t.zeros(0), return_inverse=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_index_fill_and_unique_match_torch(name):
    assert _run(dc, CASES[name]) == _run(torch, CASES[name])


META = {
    "functional": lambda t: t.empty(3, 4, device="meta").index_fill(1, t.tensor([0], device="meta"), 1),
    "transposed": lambda t: t.empty(3, 4, device="meta").t().index_fill(1, t.tensor([0], device="meta"), 1),
    "float-index-passes": lambda t: t.empty(3, 4, device="meta").index_fill(1, t.tensor([0.0], device="meta"), 1),
    "2d-index": lambda t: t.empty(3, 4, device="meta").index_fill(1, t.zeros(1, 1, dtype=t.int64, device="meta"), 1),
    "vector-value": lambda t: t.empty(3, 4, device="meta").index_fill(1, t.tensor([0], device="meta"),
                                                                      t.ones(2, device="meta")),
    "in-place": lambda t: t.empty(3, 4, device="meta").index_fill_(0, t.tensor([0], device="meta"), 1),
    "out-float-into-int-refused": lambda t: t.ops.aten.index_fill.int_Scalar_out(
        t.empty(3, device="meta"), 0, t.tensor([0], device="meta"), 1, out=t.empty(0, dtype=t.int64, device="meta")),
    "out-resized": lambda t: t.ops.aten.index_fill.int_Scalar_out(
        t.empty(3, device="meta"), 0, t.tensor([0], device="meta"), 1, out=t.empty(0, device="meta")),
}


@pytest.mark.parametrize("name", sorted(META))
def test_meta_kernels_match_torchs(name):
    assert _run(dc, META[name]) == _run(torch, META[name])


GRADS = {
    "scalar": lambda t, x, v: x.index_fill(1, t.tensor([0, 2]), 5.0),
    "tensor": lambda t, x, v: x.index_fill(1, t.tensor([0, 2, 0]), v),
    "tensor-zero-dim-index": lambda t, x, v: x.index_fill(0, t.tensor(1), v),
    "in-place": lambda t, x, v: (x * 1).index_fill_(0, t.tensor([1]), v),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_and_node_names_match_torch(name):
    data = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)

    def run(t):
        x = t.tensor(data, requires_grad=True)
        v = t.tensor(2.0, requires_grad=True)
        y = GRADS[name](t, x, v)
        (y * t.arange(12.0).reshape(3, 4)).sum().backward()
        return type(y.grad_fn).__name__, np.asarray(x.grad.tolist()).tolist(), None if v.grad is None else v.grad.item()

    assert run(dc) == run(torch)


def test_unique_records_a_node_whose_backward_is_not_implemented():
    def run(t):
        values, inverse = t.ops.aten._unique.default(t.tensor([3.0, 1.0, 3.0], requires_grad=True), False)
        try:
            values.sum().backward()
        except Exception as e:  # noqa: BLE001 - compared
            return type(values.grad_fn).__name__, inverse.requires_grad, type(e).__name__, str(e)
        return None

    assert run(dc) == run(torch)


def _calls(lib, fn):
    x, i, v = _x(lib).requires_grad_(), _i(lib, 0, 2, 0), lib.tensor(2.0, requires_grad=True)
    return mode_calls(lib, lambda: fn(lib, x, i, v))


@pytest.mark.parametrize("call", [
    lambda t, x, i, v: x.index_fill(1, i, 5),
    lambda t, x, i, v: t.index_fill(x, 1, i, v),
    lambda t, x, i, v: x.index_fill(1, i, v).sum().backward(),
])
def test_a_mode_sees_torchs_operators(call):
    """Forward and backward: the value's gradient runs index_select over _unique's values, then sum."""
    assert _calls(dc, call) == _calls(torch, call)
