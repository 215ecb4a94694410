"""``diag``, ``diagflat``, ``diag_embed`` and ``diagonal_copy`` against torch 2.13.

Each case runs on both libraries and compares the result (values, dtype, shape, strides), or the
error, and the warnings; the modes' view of the calls, the gradients with their node names, and
the meta geometry are compared too.
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


def _v(t):
    return t.tensor([1.0, 2.0, 3.0])


def _m(t):
    return t.arange(12.0).reshape(3, 4)


CASES = {
    "diag-vector": lambda t: t.diag(_v(t)),
    "diag-vector-above": lambda t: t.diag(_v(t), 1),
    "diag-vector-below": lambda t: t.diag(_v(t), -2),
    "diag-matrix": lambda t: t.diag(_m(t)),
    "diag-matrix-above": lambda t: t.diag(_m(t), 2),
    "diag-matrix-below": lambda t: t.diag(_m(t), -1),
    "diag-matrix-outside": lambda t: t.diag(_m(t), 7),
    "diag-transposed-matrix": lambda t: t.diag(_m(t).t(), 1),
    "diag-int": lambda t: t.diag(t.tensor([1, 2])),
    "diag-bool": lambda t: t.diag(t.tensor([True, False])),
    "diag-empty": lambda t: t.diag(t.zeros(0)),
    "diag-method": lambda t: _m(t).diag(-1),
    "diag-3d-refused": lambda t: t.diag(t.ones(2, 2, 2)),
    "diag-0d-refused": lambda t: t.diag(t.ones(())),
    "diag-float-diagonal-refused": lambda t: t.diag(_v(t), 1.5),
    "diag-out-vector": lambda t: t.diag(_v(t), 1, out=t.empty(0)),
    "diag-out-matrix": lambda t: t.diag(_m(t), out=t.empty(0)),
    "diag-out-resized": lambda t: t.diag(_m(t), out=t.empty(5)),
    "diag-out-3d-refused": lambda t: t.diag(t.ones(2, 2, 2), out=t.empty(0)),
    "diag-out-cannot-cast": lambda t: t.diag(_v(t), out=t.empty(0, dtype=t.int64)),
    "diag-out-dtype-exact": lambda t: t.diag(_v(t), out=t.empty(0, dtype=t.float64)),
    "diag-out-matrix-dtype-exact": lambda t: t.diag(_m(t), out=t.empty(0, dtype=t.float64)),
    "diagflat": lambda t: t.diagflat(_m(t)[:2, :2]),
    "diagflat-offset": lambda t: t.diagflat(_m(t).t()[:2], -1),
    "diagflat-0d": lambda t: t.diagflat(t.tensor(5.0)),
    "diagflat-method": lambda t: _v(t).diagflat(1),
    "diag_embed": lambda t: t.diag_embed(_m(t)),
    "diag_embed-offset-dims": lambda t: t.diag_embed(_m(t)[:2, :3], 1, 0, 2),
    "diag_embed-swapped-dims": lambda t: t.diag_embed(_m(t)[:2, :3], -1, -1, -2),
    "diag_embed-transposed": lambda t: t.diag_embed(_m(t).t()),
    "diag_embed-bool": lambda t: t.diag_embed(t.tensor([True, False]), 1),
    "diag_embed-method": lambda t: _v(t).diag_embed(1),
    "diag_embed-same-dims": lambda t: t.diag_embed(_v(t), 0, 0, 0),
    "diag_embed-same-dims-wrapped": lambda t: t.diag_embed(_v(t), 0, -1, 1),
    "diag_embed-dim-range": lambda t: t.diag_embed(_v(t), 0, 0, 3),
    "diag_embed-0d-refused": lambda t: t.diag_embed(t.tensor(1.0)),
    "diag_embed-out": lambda t: t.ops.aten.diag_embed.out(_v(t), 1, out=t.empty(0)),
    "diag_embed-out-dtype-exact": lambda t: t.ops.aten.diag_embed.out(_v(t), out=t.empty(0, dtype=t.float64)),
    "diagonal_copy": lambda t: t.diagonal_copy(_m(t), 1),
    "diagonal_copy-dims": lambda t: t.diagonal_copy(t.arange(24.0).reshape(2, 3, 4), -1, 2, 0),
    "diagonal_copy-transposed": lambda t: t.diagonal_copy(_m(t).t()),
    "diagonal_copy-out": lambda t: t.diagonal_copy(_m(t), out=t.empty(0)),
    "diagonal_copy-out-resized": lambda t: t.diagonal_copy(_m(t), out=t.empty(2, 2)),
    "diagonal_copy-1d-refused": lambda t: t.diagonal_copy(t.ones(2)),
    "diagonal_copy-no-method": lambda t: hasattr(_m(t), "diagonal_copy"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_diagonal_operators_match_torch(name):
    assert _run(dc, CASES[name]) == _run(torch, CASES[name])


META = {
    "diag_embed": lambda t: t.diag_embed(t.empty(2, 3, device="meta"), 1, 0, 2),
    "diag_embed-same-dims": lambda t: t.diag_embed(t.empty(2, device="meta"), 0, 0, 0),
    "diagonal_copy": lambda t: t.diagonal_copy(t.empty(3, 4, device="meta").t(), 1),
    "diag-vector": lambda t: t.diag(t.empty(3, device="meta"), -1),
    "diag-3d-refused": lambda t: t.diag(t.empty(2, 2, 2, device="meta")),
    "diag_embed-out": lambda t: t.ops.aten.diag_embed.out(t.empty(3, device="meta"), out=t.empty(0, device="meta")),
    "diagonal_copy-out": lambda t: t.diagonal_copy(t.empty(3, 3, device="meta"), out=t.empty(0, device="meta")),
}


@pytest.mark.parametrize("name", sorted(META))
def test_meta_geometry_matches_torch(name):
    assert _run(dc, META[name]) == _run(torch, META[name])


GRADS = {
    "diag-vector": (lambda t, x: t.diag(x, 1), (3,)),
    "diag-matrix": (lambda t, x: t.diag(x, -1), (3, 4)),
    "diagflat": (lambda t, x: t.diagflat(x, 1), (2, 2)),
    "diag_embed": (lambda t, x: t.diag_embed(x, -1, 0, 2), (2, 3)),
    "diagonal_copy": (lambda t, x: t.diagonal_copy(x, 1, 1, 0), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_and_node_names_match_torch(name):
    fn, shape = GRADS[name]
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def run(t):
        x = t.tensor(data, requires_grad=True)
        y = fn(t, x)
        weight = t.arange(float(y.numel())).reshape(y.shape)
        (y * weight).sum().backward()
        return type(y.grad_fn).__name__, np.asarray(x.grad.tolist()).tolist()

    assert run(dc) == run(torch)


def _calls(lib, fn):
    """The operators a dispatch mode sees while ``fn(lib, vector, matrix, out)`` runs."""
    vector, matrix, out = _v(lib), _m(lib), lib.empty(0)
    return mode_calls(lib, lambda: fn(lib, vector, matrix, out))


@pytest.mark.parametrize("call", [
    lambda t, v, m, o: t.diag(v), lambda t, v, m, o: t.diag(v, 1), lambda t, v, m, o: t.diag(m),
    lambda t, v, m, o: t.diag(m, -1), lambda t, v, m, o: t.diag(v, out=o), lambda t, v, m, o: t.diag(m, 1, out=o),
    lambda t, v, m, o: t.diagflat(m), lambda t, v, m, o: t.diagflat(m.t(), 2),
    lambda t, v, m, o: t.diag_embed(m), lambda t, v, m, o: t.diag_embed(m, 0, -1, 0),
    lambda t, v, m, o: t.diagonal_copy(m), lambda t, v, m, o: t.diagonal_copy(m, 0, 1, 0),
    lambda t, v, m, o: t.diagonal_copy(m, out=o),
])
def test_a_mode_sees_torchs_operators_with_torchs_arguments(call):
    """diag and diagflat decompose (CompositeImplicitAutograd) before a mode; trailing defaults are not passed."""
    assert _calls(dc, call) == _calls(torch, call)


# --- trace: the diagonal's sum (a CPU kernel summing in acc_type), TraceBackward0 -------------------------
TRACE = {
    "float": lambda t: _m(t).trace(),
    "float64": lambda t: _m(t).double().trace(),
    "int-gives-int64": lambda t: t.arange(6).reshape(2, 3).trace(),
    "int8-gives-int64": lambda t: t.ones(3, 3, dtype=t.int8).trace(),
    "half": lambda t: t.ones(3, 3, dtype=t.float16).trace(),
    "complex": lambda t: (t.ones(2, 2) * (1 + 2j)).trace(),
    "tall": lambda t: t.arange(12.0).reshape(4, 3).trace(),
    "transposed": lambda t: _m(t).t().trace(),
    "empty": lambda t: t.zeros(0, 3).trace(),
    "float32-sums-in-double": lambda t: t.tensor([[1e8, 0.0], [0.0, 1.0]]).trace(),
    "bool-refused": lambda t: t.ones(2, 2, dtype=t.bool).trace(),
    "bool-refused-before-the-shape-check": lambda t: t.ones(3, dtype=t.bool).trace(),
    "vector-refused": lambda t: t.ones(3).trace(),
    "three-dims-refused": lambda t: t.ones(2, 2, 2).trace(),
    "out": lambda t: t.ops.aten.trace.out(_m(t), out=t.empty(0)),
    "out-dtype-exact": lambda t: t.ops.aten.trace.out(_m(t), out=t.empty(0, dtype=t.float64)),
    "meta": lambda t: t.ones(2, 3, device="meta").trace(),
    "meta-bool": lambda t: t.ones(2, 2, dtype=t.bool, device="meta").trace(),
    "meta-vector-refused": lambda t: t.ones(3, device="meta").trace(),
    "meta-out-casts": lambda t: t.ops.aten.trace.out(t.ones(2, 2, device="meta"),
                                                     out=t.empty(0, dtype=t.float64, device="meta")),
    "autocast-fp32": lambda t: _autocast_trace(t),
}


def _autocast_trace(t):
    with t.autocast("cpu", dtype=t.float16):
        return t.ones(2, 2, dtype=t.float16).trace()


@pytest.mark.parametrize("name", sorted(TRACE))
def test_trace_matches_torch(name):
    assert _run(dc, TRACE[name]) == _run(torch, TRACE[name])


@pytest.mark.parametrize("shape", [(3, 4), (4, 2), (3, 3)])
def test_trace_gradient_matches_torch(shape):
    data = np.random.default_rng(2).standard_normal(shape)

    def run(t):
        x = t.tensor(data, requires_grad=True)
        y = x.trace()
        (y * 3).backward()
        return type(y.grad_fn).__name__, np.asarray(x.grad.tolist()).tolist()

    assert run(dc) == run(torch)


@pytest.mark.parametrize("call", [lambda t, v, m, o: m.trace(),
                                  lambda t, v, m, o: m.requires_grad_().trace().backward()])
def test_trace_and_its_backward_reach_a_mode_as_torchs(call):
    """Under a mode grad is subclass-like: trace_backward fills out of place (index_fill.int_Tensor)."""
    assert _calls(dc, call) == _calls(torch, call)
