"""Indexing against torch 2.13: advanced ``__getitem__``/``__setitem__`` and the indexing operators.

Each case is one expression evaluated in both libraries (``L`` is ``dispatchcore`` or ``torch``)
on the same data; values, dtype, shape, strides, storage offset, node names, version counters,
gradients and errors (type and message) are compared.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def _env(lib, requires_grad=False):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    z = rng.standard_normal((2, 3, 4))
    make = (lambda v: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad))
    return {
        "L": lib, "x": make(a), "z": make(z), "v": lib.tensor([1.0, 2.0, 3.0]),
        "s": lib.tensor(5.0), "i": lib.tensor([[0, 1], [2, 3], [1, 1]]), "np": np,
    }


def _run(expr, lib, requires_grad=False):
    env = _env(lib, requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(expr, env), None  # noqa: S307 - the test's own expressions
        except Exception as e:  # noqa: BLE001 - compared with torch's
            return None, e


def _same(mine, theirs, expr):
    if isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs), expr
        for m, t in zip(mine, theirs):
            _same(m, t, expr)
        return
    if not isinstance(theirs, torch.Tensor):
        assert mine == theirs, expr
        return
    assert tuple(mine.shape) == tuple(theirs.shape), expr
    assert mine.dtype.name == str(theirs.dtype).removeprefix("torch."), expr
    assert mine.stride() == theirs.stride(), expr
    assert mine.storage_offset() == theirs.storage_offset(), expr
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), err_msg=expr)
    node = theirs.grad_fn.name() if theirs.grad_fn is not None else None
    assert (mine.grad_fn.name() if mine.grad_fn is not None else None) == node, expr


def _compare(expr, requires_grad=False):
    mine, my_err = _run(expr, dc, requires_grad)
    theirs, their_err = _run(expr, torch, requires_grad)
    if their_err is not None:
        assert my_err is not None, f"{expr}: torch raised {their_err!r}, dispatchcore returned"
        assert type(my_err) is type(their_err), f"{expr}: {my_err!r} vs {their_err!r}"
        assert str(my_err) == str(their_err), expr
        return
    assert my_err is None, f"{expr}: dispatchcore raised {my_err!r}"
    _same(mine, theirs, expr)


GETITEM = [
    "x[[0, 2]]", "x[L.tensor([2, 0, 2])]", "x[x > 0]", "x[:, [0, 1]]", "x[1, [0, 1]]", "x[[0, 1], None]",
    "x[None, [0, 1]]", "x[..., [0, 1]]", "x[[0, 1], [1, 3]]", "x[True]", "x[False]", "x[L.tensor(True)]",
    "x[L.tensor(1)]", "x[L.tensor([[0, 1], [1, 2]])]", "x[L.tensor([1, 0], dtype=L.int32)]",
    "x[[True, False, True]]", "x[[-1]]", "x[[]]", "x[range(2)]", "x[np.array([0, 2])]", "x.t()[[0, 1]]",
    "x.t()[:, [0, 1]]", "x[:, ::2][[0, 1]]", "x[1:, [0, 3]]", "x[L.tensor([0, 1]).expand(3, 2)]",
    "z[[0, 1], :, [1, 2]]", "z[0, :, [1, 2]]", "z[:, [0, 1], :]", "z.permute(2, 0, 1)[:, [0, 1]]",
    "z.permute(2, 0, 1)[:, :, [0, 1]]", "z[..., [0, 1], None]", "z[z[:, :, 0] > 0]", "z[z[:, :, 0] > 0, 0]",
    "z[:, L.ones(3, 4, dtype=L.bool)]", "z[L.tensor([True, False]), :, [0, 1]]", "z[[[0, 1]]]",
    "s[L.tensor(False)]", "s[None, ...]", "x[(0, 2),]",
]
GETITEM_ERRORS = [
    "x[L.tensor([5])]", "x[L.tensor([-5])]", "x[:, L.tensor([5])]", "z[[0], [9]]", "x[[0, 9], [9, 0]]",
    "x[L.tensor([True, False])]", "x[:, L.tensor([True, False])]", "x[L.tensor([0.0])]", "x[[0], [0], [0]]",
    "x[L.tensor([0, 1]), L.tensor([0, 1, 2])]", "x[['a']]", "x[1.5]", "L.zeros(0, 3)[L.tensor([0])]",
    "s[L.tensor([True])]", "s[L.tensor([0])]", "x[5, [0]]", "x[L.tensor(5)]",
]


@pytest.mark.parametrize("expr", GETITEM + GETITEM_ERRORS)
def test_getitem_matches_torch(expr):
    _compare(expr)


@pytest.mark.parametrize("expr", ["x[[0, 0, 1]]", "x[x > 0]", "z[[0, 1], :, [1, 2]]", "x[1:, [0, 3]]"])
def test_getitem_records_index_backward_and_grad_matches(expr):
    grads = []
    for lib in (dc, torch):
        env = _env(lib, requires_grad=True)
        y = eval(expr, env)  # noqa: S307
        assert y.grad_fn.name() == "IndexBackward0"
        (y * y).sum().backward()
        grads.append(env["x" if expr.startswith("x") else "z"].grad)
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy())


SETITEM = [
    ("x[[0, 2]] = 1.0", "x"), ("x[x > 0] = 0", "x"), ("x[:, [0, 1]] = L.ones(3, 2, dtype=L.float64)", "x"),
    ("x[[0, 1]] = L.ones(1, 1, 4, dtype=L.float64)", "x"), ("x[[0, 0]] = L.tensor([[1.0] * 4, [2.0] * 4], "
                                                           "dtype=L.float64)", "x"),
    ("x[1:, [0, 3]] = 7.0", "x"), ("z[[0, 1], :, [1, 2]] = L.zeros(2, 3, dtype=L.float64)", "z"),
    ("x[[0, 1]] = L.tensor(7.0, dtype=L.float64)", "x"), ("x[x > 0] = L.tensor(2)", "x"),
    ("x[True] = 3.0", "x"), ("x[L.tensor(1)] = 2.0", "x"),
]
SETITEM_ERRORS = [
    "x[[0]] = L.tensor([5], dtype=L.int64)", "x[[0, 1]] = L.ones(3, 4, dtype=L.float64)", "x[[5]] = 1.0",
    "x[L.tensor([True, False])] = 1.0", "x[[0]] = 'a'", "L.zeros(3, dtype=L.int8)[[0]] = 300",
    "x[[0, 1]] = L.ones(4)",
]


def _setitem(statement, lib):
    env = _env(lib)
    target = env["x"] if statement.startswith("x") else env["z"]
    before = target._version
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(statement, env)  # noqa: S102 - the test's own statements
        except Exception as e:  # noqa: BLE001
            return None, None, e
    return env[statement[0]], env[statement[0]]._version - before, None


@pytest.mark.parametrize("statement", [s for s, _ in SETITEM] + SETITEM_ERRORS)
def test_setitem_matches_torch(statement):
    mine, my_bump, my_err = _setitem(statement, dc)
    theirs, their_bump, their_err = _setitem(statement, torch)
    if their_err is not None:
        assert type(my_err) is type(their_err) and str(my_err) == str(their_err), (my_err, their_err)
        return
    assert my_err is None, my_err
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert my_bump == their_bump


def test_setitem_records_index_put_backward_and_copyslices_on_views():
    for lib in (dc, torch):
        x = lib.ones(3, 4, dtype=lib.float64, requires_grad=True)
        y = x.clone()
        y[[0, 2]] = 2.0
        assert y.grad_fn.name() == "IndexPutBackward0"
        v = lib.ones(2, dtype=lib.float64, requires_grad=True)
        y[1:, [0, 1]] = v
        assert y.grad_fn.name().endswith("CopySlices")


def test_setitem_gradients_match_torch():
    grads = []
    for lib in (dc, torch):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        v = lib.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = x * 1
        y[[0, 2]] = v * 3
        (y * y).sum().backward()
        grads.append((x.grad.numpy().copy(), v.grad.numpy().copy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_index_double_backward_goes_through_index_put_impl():
    names = []
    for lib in (dc, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((x[[0, 0, 1]] ** 2).sum(), x, create_graph=True)
        names.append(g.grad_fn.name())
    assert names[0] == names[1] == "IndexPutImplBackward0"


OPS = [
    "L.gather(x, 1, i)", "x.gather(-1, i)", "L.gather(x.t(), 0, i[:2])", "L.gather(s, 0, L.tensor(0))",
    "L.gather(x, 1, L.zeros(3, 0, dtype=L.int64))", "L.gather(x, 1, i.int())",
    "x.scatter(1, i, L.ones(3, 2, dtype=L.float64))", "x.scatter(1, i, 2.5)", "x.t().scatter(1, i[:2], 1.0)",
    "x.scatter_add(1, i, L.ones(3, 2, dtype=L.float64))", "L.scatter_add(x, 0, i[:2], x[:2, :2])",
    "x.scatter(1, i, L.ones(3, 2, dtype=L.float64), reduce='multiply')", "x.scatter(1, i, 2.0, reduce='add')",
    *[f"x.scatter_reduce(1, i, -L.ones(3, 2, dtype=L.float64), '{r}', include_self={inc})"
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    "L.tensor([1, 2, 3]).scatter_reduce(0, L.tensor([0, 0, 1]), L.tensor([4, 5, 4]), 'mean', include_self=False)",
    "L.zeros(3, dtype=L.bool).scatter_add(0, L.tensor([0, 0, 1]), L.ones(3, dtype=L.bool))",
    "x.index_select(0, L.tensor([2, 0, 2]))", "x.t().index_select(1, L.tensor([0, 1]))",
    "L.index_select(s, 0, L.tensor([0]))", "x.index_select(0, L.tensor(1))",
    "x.masked_fill(x > 0, 1.5)", "x.masked_fill(L.tensor([True, False, True, False]), L.tensor(2.0))",
    "x.t().masked_fill(x.t() > 0, 0)", "L.masked_fill(x, L.ones(2, 3, 4, dtype=L.bool), 1.0)",
    "L.zeros(3, dtype=L.int64).masked_fill(L.tensor([True, False, True]), 2.7)",
    "x.masked_scatter(x > 0, L.arange(12.0, dtype=L.float64))", "L.masked_select(x, x > 0)",
    "x.masked_select(L.tensor([True, False, True, False]))", "L.nonzero(x > 0)", "L.nonzero(s)",
    "L.nonzero(x > 0, as_tuple=True)", "(x > 0).nonzero()", "L.argwhere(x > 0)",
    "L.nonzero_static(L.tensor([0, 1, 1]), size=4, fill_value=-7)", "L.take(x, L.tensor([[0, -1], [5, 5]]))",
    "x.t().take(L.tensor([1, 2]))", "L.where(x > 0, x, 0.0)", "L.where(x > 0, 1, 2.5)", "L.where(x > 0, 1, 2)",
    "L.where(x > 0, 1.5, L.tensor([1, 2, 3, 4]))", "L.where(x > 0)", "x.where(x > 0, 2.0)",
    "L.where(L.tensor([True, False]), L.zeros(3, 1), L.ones(1, 2, dtype=L.float64))",
    "L.index_put(x, (L.tensor([0, 0]),), L.tensor(1.0, dtype=L.float64), accumulate=True)",
    "x.index_put((None, L.tensor([1])), L.ones(3, 1, dtype=L.float64))",
    "L.ops.aten.index_put(x, [None, L.tensor([1])], L.ones(3, 1, dtype=L.float64))",
    "x.t().index_put((L.tensor([0]),), s.double())",
    "L.ops.aten.index.Tensor(x, [None, L.tensor([0, 2])])", "x.clone().index_put_((L.tensor([1]),), s.double())",
    "s.item()", "L.tensor([True]).item()", "L.tensor([[7]]).item()", "L.ops.aten._local_scalar_dense(s)",
]
OP_ERRORS = [
    "L.gather(x, 1, i[0])", "L.gather(x, 1, L.zeros(4, 2, dtype=L.int64))", "L.gather(x, 1, L.zeros(3, 2))",
    "L.gather(x, 1, L.full((3, 2), 7))", "L.gather(x, 2, i)", "x.scatter(1, L.full((3, 2), -1), 1.0)",
    "x.scatter(1, i, L.ones(3, 1, dtype=L.float64))", "x.scatter(1, i, L.ones(3, 2))",
    "x.scatter(1, i[0], 1.0)", "x.scatter(1, i, 1.0, reduce='sum')",
    "x.scatter_reduce(1, i, x[:, :2], 'add')", "x.index_select(0, L.zeros(2, 2, dtype=L.int64))",
    "x.index_select(0, L.tensor([0.0]))", "x.index_select(0, L.tensor([5]))", "x.index_select(1, L.tensor([0, -7]))",
    "L.zeros(0, 3).index_select(0, L.tensor([0]))", "x.masked_fill(L.ones(3, 4, dtype=L.int64), 1.0)",
    "x.masked_fill(x > 0, L.ones(2))", "x.clone().masked_fill_(L.ones(2, 3, 4, dtype=L.bool), 1.0)",
    "L.zeros(3, dtype=L.int8).masked_fill(L.tensor([True, False, True]), 300)",
    "x.masked_scatter(x > 0, L.ones(1, dtype=L.float64))", "x.masked_scatter(x > 0, L.ones(20))",
    "x.masked_scatter((x > 0).long(), L.ones(20, dtype=L.float64))", "L.masked_select(x, L.tensor([1, 0, 1, 0]))",
    "L.nonzero_static(x, size=-1)", "x.take(L.tensor([12]))", "x.take(L.tensor([-13]))", "x.take(L.tensor([0.0]))",
    "L.zeros(0).take(L.tensor([0]))", "L.tensor([1.0, 2.0]).item()",
    "L.index_put(x, (L.tensor([0]),), L.tensor([1], dtype=L.int64))",
    "L.ops.aten.index_put_(x.clone(), [None, L.tensor([0])], L.tensor([1.0, 2, 3], dtype=L.float64))",
    "L.ops.aten.index.Tensor(x, [])", "L.ops.aten.index.Tensor(x, [None, None, None])",
    "L.ops.aten.index_put_(x.clone(), [L.tensor([0, 1])], x[:2])",
    "L.gather('a', 0, i)", "x.gather('a', i)", "L.scatter(x, 1, i, 'a')", "L.where(x > 0, 'a', x)",
    "x.index_put('a', x)", "x.masked_fill(x > 0, 'a')",
]


@pytest.mark.parametrize("expr", OPS + OP_ERRORS)
def test_op_matches_torch(expr):
    _compare(expr)


@pytest.mark.parametrize("expr", [
    "L.gather(x, 1, i)", "x.scatter(1, i, x[:, :2] * 2)", "x.scatter(1, i, 2.0)", "x.scatter_add(1, i, x[:, :2])",
    "x.index_select(1, L.tensor([0, 0, 3]))", "x.masked_fill(x > 0, 1.0)", "x.masked_fill(x > 0, x[0, 0])",
    "x.masked_scatter(x > 0, z.reshape(-1))", "L.masked_select(x, x > 0)", "x.take(L.tensor([0, 0, -1]))",
    "x.index_put((L.tensor([0, 0]),), x[1], accumulate=True)", "x.index_put((L.tensor([1]),), x[0] * 2)",
    "x.scatter_reduce(1, i, x[:, :2] * 2, 'amax', include_self=False)",
    "x.scatter(1, i, x[:, :2], reduce='add')", "x.clone().scatter_(1, i, 2.0)",
    "x.clone().masked_fill_(x > 0, 0.0)", "x.clone().index_put_((L.tensor([1]),), x[0])",
])
def test_node_names_and_gradients_match_torch(expr):
    results = []
    for lib in (dc, torch):
        env = _env(lib, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = eval(expr, env)  # noqa: S307
        name = y.grad_fn.name()
        try:
            grads = lib.autograd.grad((y * y).sum(), [env["x"]], allow_unused=True)
            results.append((name, grads[0].numpy(), None))
        except RuntimeError as e:
            results.append((name, None, str(e)))
    (name, grad, err), (tname, tgrad, terr) = results
    assert name == tname
    assert err == terr
    if tgrad is not None:
        np.testing.assert_allclose(grad, tgrad, rtol=1e-7)


def test_meta_results_have_cpu_geometry_and_torch_errors():
    for expr in ("m[:, idx].stride()", "m.t()[idx].stride()", "L.nonzero_static(m, size=5).stride()",
                 "m.gather(1, L.ones(3, 2, dtype=L.int64, device='meta')).shape",
                 "m.t().masked_fill(L.ones(4, 3, dtype=L.bool, device='meta'), 1.0).stride()",
                 "m.index_put((idx,), L.empty(4, device='meta')).stride()",
                 "L.nonzero(m)", "m[L.ones(3, dtype=L.bool, device='meta')]", "L.empty((), device='meta').item()"):
        out = []
        for lib in (dc, torch):
            env = {"L": lib, "m": lib.empty(3, 4, device="meta"), "idx": lib.ones(2, dtype=lib.int64, device="meta")}
            try:
                out.append((tuple(eval(expr, env)), None))  # noqa: S307
            except Exception as e:  # noqa: BLE001
                out.append((None, (type(e), str(e))))
        assert out[0] == out[1], expr
