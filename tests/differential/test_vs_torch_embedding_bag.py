"""embedding_bag against torch: the four outputs bit for bit, meta geometry, errors, node names and gradients."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

A, TA = dc.ops.aten, torch.ops.aten
RNG = np.random.default_rng(0)


def _both(a):
    return (dc.tensor(a), torch.tensor(a)) if a is not None else (None, None)


def _identical(mine, theirs):
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert tuple(m.shape) == tuple(t.shape)
        assert m.stride() == t.stride()
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(m.detach().numpy(), t.detach().numpy())


# indices, offsets: empty bags, a bag running to the end, repeated rows
_LAYOUTS = [([0, 2, 4, 4, 1, 3], [0, 2, 2, 5]), ([1, 1, 0], [0]), ([3, 0, 4, 2], [0, 1, 4]), ([], [0, 0])]


@pytest.mark.parametrize("op", ["_embedding_bag", "_embedding_bag_forward_only"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_four_outputs_equal_torchs_bit_for_bit(op, dtype, mode):
    w = RNG.standard_normal((5, 4)).astype(dtype)
    for (idx, offs), ilo, pad, itype in itertools.product(_LAYOUTS, (False, True), (-1, 2), ("int64", "int32")):
        if ilo and len(offs) < 1:
            continue
        i, o = np.array(idx, itype), np.array(offs + ([len(idx)] if ilo else []), np.int64)
        args = (False, mode, False, None, ilo, pad)
        mine = getattr(A, op).default(dc.tensor(w), dc.tensor(i), dc.tensor(o), *args)
        theirs = getattr(TA, op).default(torch.tensor(w), torch.tensor(i), torch.tensor(o), *args)
        _identical(mine, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pad", [-1, 1])
def test_per_sample_weights_sum_equals_torchs_bit_for_bit(dtype, pad):
    w, i, o = RNG.standard_normal((6, 5)).astype(dtype), np.array([0, 1, 5, 1, 3]), np.array([0, 3])
    p = RNG.standard_normal(5).astype(dtype)
    for op, ilo in itertools.product(("_embedding_bag", "_embedding_bag_forward_only"), (False, True)):
        oo = np.append(o, 5) if ilo else o
        mine = getattr(A, op).default(*map(dc.tensor, (w, i, oo)), False, 0, False, dc.tensor(p), ilo, pad)
        theirs = getattr(TA, op).default(*map(torch.tensor, (w, i, oo)), False, 0, False, torch.tensor(p), ilo, pad)
        _identical(mine, theirs)


def test_include_last_offset_short_of_the_end_sums_to_the_last_offset_but_means_to_the_end():
    w, i, o = RNG.standard_normal((5, 3)).astype(np.float32), np.array([0, 1, 2, 3]), np.array([0, 1, 2])
    for mode in (0, 1, 2):
        _identical(A._embedding_bag.default(*map(dc.tensor, (w, i, o)), False, mode, False, None, True),
                   TA._embedding_bag.default(*map(torch.tensor, (w, i, o)), False, mode, False, None, True))


def test_noncontiguous_weight_takes_the_general_path_with_offset2bag():
    base = RNG.standard_normal((4, 10)).astype(np.float32)
    i, o = np.array([0, 3, 3, 1]), np.array([0, 2])
    mine = A._embedding_bag.default(dc.tensor(base)[:, ::2], *map(dc.tensor, (i, o)))
    theirs = TA._embedding_bag.default(torch.tensor(base)[:, ::2], *map(torch.tensor, (i, o)))
    _identical(mine, theirs)


@pytest.mark.parametrize("padding_idx", [None, 0, -1, 3])
def test_embedding_bag_function_equals_torchs(padding_idx):
    w, i, o = RNG.standard_normal((4, 3)), np.array([0, 1, 3, 3, 2]), np.array([0, 2, 2])
    for mode in (0, 1, 2):
        args = (False, mode, False, None, False, padding_idx)
        _identical(dc.embedding_bag(*map(dc.tensor, (w, i, o)), *args),
                   torch.embedding_bag(*map(torch.tensor, (w, i, o)), *args))
    _identical(dc.embedding_bag(*map(dc.tensor, (w, i, o)), mode=1),
               torch.embedding_bag(*map(torch.tensor, (w, i, o)), mode=1))


def test_embedding_bag_function_calls_forward_only_unless_a_gradient_is_needed():
    w, i, o = RNG.standard_normal((4, 3)), np.array([0, 1, 3]), np.array([0, 1, 2])
    for requires in (False, True):
        mine = dc.embedding_bag(dc.tensor(w).requires_grad_(requires), *map(dc.tensor, (i, o)), False, 0, False,
                                None, True)
        theirs = torch.embedding_bag(torch.tensor(w).requires_grad_(requires), *map(torch.tensor, (i, o)), False, 0,
                                     False, None, True)
        _identical(mine, theirs)
        assert (mine[0].grad_fn is None) == (theirs[0].grad_fn is None)


@pytest.mark.parametrize("call", [
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i.float(), o),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, o.float()),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w.int(), i, o),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, o + 1),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, L.tensor([0, 9])),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, o, False, 3),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, o, False, 1, False, L.ones(4)),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, o, False, 0, False, L.ones(3)),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, o, False, 0, False, L.ones(4, dtype=L.float64)),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, i, o[:0], False, 0, False, None, True),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, L.tensor([7, 0, 1, 2]), o),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, L.tensor([0, 1, 2, -1]), o, False, 0, False, None, False, 2),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w, L.tensor([0, 1, 2, 9]), o, False, 2),
    lambda L, w, i, o: L.ops.aten._embedding_bag(w.double(), L.tensor([0, 1, 2, 9]), o),
    lambda L, w, i, o: L.embedding_bag(w, i, o, False, 0, False, None, False, 5),
    lambda L, w, i, o: L.embedding_bag(w, i, o, False, 0, False, None, False, -6),
])
def test_errors_equal_torchs(call, raises_alike):
    w, i, o = RNG.standard_normal((5, 3)).astype(np.float32), np.array([0, 1, 2, 3]), np.array([0, 2])
    raises_alike(lambda: call(dc, *map(dc.tensor, (w, i, o))), lambda: call(torch, *map(torch.tensor, (w, i, o))))


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("ilo", [False, True])
def test_meta_outputs_have_torchs_geometry(mode, ilo):
    def run(L):
        w = L.empty(5, 3, device="meta")
        i = L.empty(4, dtype=L.int32, device="meta")
        o = L.empty(3, dtype=L.int64, device="meta")
        return [getattr(L.ops.aten, op)(w, i, o, False, mode, False, None, ilo)
                for op in ("_embedding_bag", "_embedding_bag_forward_only")]
    for mine, theirs in zip(run(dc), run(torch)):
        assert [(tuple(t.shape), t.stride(), str(t.dtype).split(".")[-1]) for t in mine] == \
               [(tuple(t.shape), t.stride(), str(t.dtype).split(".")[-1]) for t in theirs]


def test_meta_errors_equal_torchs(raises_alike):
    def call(L, **kw):
        w, i, o = L.empty(5, 3, device="meta"), L.empty(4, dtype=L.int64, device="meta"), \
            L.empty(2, dtype=L.int64, device="meta")
        args = {"w": w, "i": i, "o": o, **kw}
        return L.ops.aten._embedding_bag(args["w"], args["i"], args["o"], False, args.get("mode", 0), False,
                                         args.get("p"))
    for kw in ({"i": "float"}, {"w": "int"}, {"mode": 1, "p": "ones4"}, {"p": "ones3"}):
        def build(L, kw=kw):
            conv = {"float": lambda: L.empty(4, device="meta"), "int": lambda: L.empty(5, 3, dtype=L.int32,
                                                                                   device="meta"),
                    "ones4": lambda: L.empty(4, device="meta"), "ones3": lambda: L.empty(3, device="meta")}
            return call(L, **{k: conv[v]() if isinstance(v, str) else v for k, v in kw.items()})
        raises_alike(lambda: build(dc), lambda: build(torch))


@pytest.mark.parametrize("dtype", ["float64", "float32"])  # float32 without padding: the forward's fast path
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("pad", [None, 2])
@pytest.mark.parametrize("freq", [False, True])
def test_weight_gradient_and_node_name_equal_torchs(dtype, mode, pad, freq):
    w, i, o = RNG.standard_normal((5, 3)).astype(dtype), np.array([0, 2, 2, 4, 1, 2]), np.array([0, 3, 3])
    g = RNG.standard_normal((3, 3)).astype(dtype)
    tol = 1e-12 if dtype == "float64" else 1e-5
    results = []
    for L in (dc, torch):
        weight = L.tensor(w).requires_grad_()
        out = L.embedding_bag(weight, L.tensor(i), L.tensor(o), freq, mode, False, None, False, pad)[0]
        (grad,) = L.autograd.grad([out], [weight], [L.tensor(g)])
        results.append((out.grad_fn.name(), grad.detach().numpy()))
    assert results[0][0] == results[1][0] == "EmbeddingBagBackward0"
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=tol, atol=tol)


@pytest.mark.parametrize("ilo", [False, True])
def test_per_sample_weights_gradients_equal_torchs(ilo):
    w, i = RNG.standard_normal((5, 3)), np.array([0, 2, 2, 4, 1])
    o, p, g = np.array([0, 3] + ([5] if ilo else [])), RNG.standard_normal(5), RNG.standard_normal((2, 3))
    results = []
    for L in (dc, torch):
        weight, psw = L.tensor(w).requires_grad_(), L.tensor(p).requires_grad_()
        out = L.embedding_bag(weight, L.tensor(i), L.tensor(o), False, 0, False, psw, ilo)[0]
        results.append([x.detach().numpy() for x in L.autograd.grad([out], [weight, psw], [L.tensor(g)])])
    for m, t in zip(*results):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


def test_backward_operators_refuse_double_backward_as_torch_does():
    w, i, o = RNG.standard_normal((5, 3)), np.array([0, 2, 4]), np.array([0, 1])
    for L in (dc, torch):
        weight = L.tensor(w).requires_grad_()
        out = L.embedding_bag(weight, L.tensor(i), L.tensor(o), False, 0)[0]
        g = L.ones(2, 3, dtype=L.float64).requires_grad_()
        (grad,) = L.autograd.grad([out], [weight], [g], create_graph=True)
        assert grad.grad_fn.name() == "EmbeddingBagBackwardBackward0"
        with pytest.raises(NotImplementedError, match="the derivative for '_embedding_bag_backward' is not"):
            grad.sum().backward()


def test_forward_only_refuses_weights_that_require_grad_as_torch_does(raises_alike):
    w, i, o = RNG.standard_normal((5, 3)), np.array([0, 2, 4]), np.array([0, 1])
    raises_alike(lambda: A._embedding_bag_forward_only.default(dc.tensor(w).requires_grad_(), dc.tensor(i),
                                                                 dc.tensor(o)),
                  lambda: TA._embedding_bag_forward_only.default(torch.tensor(w).requires_grad_(), torch.tensor(i),
                                                                 torch.tensor(o)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_many_random_bags_with_ties_and_nans_equal_torchs_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    w = rng.integers(-3, 4, (9, 6)).astype(dtype)  # few distinct values: ties in max
    w[2, 1] = w[5, 4] = np.nan
    i = rng.integers(0, 9, 300)
    o = np.sort(np.r_[0, rng.integers(0, 301, 40)])
    p = rng.standard_normal(300).astype(dtype)
    for mode, pad, use_p in itertools.product((0, 1, 2), (-1, 3), (False, True)):
        if use_p and mode:
            continue
        args = (False, mode, False)
        mine = A._embedding_bag.default(*map(dc.tensor, (w, i, o)), *args, dc.tensor(p) if use_p else None, False,
                                        pad)
        theirs = TA._embedding_bag.default(*map(torch.tensor, (w, i, o)), *args, torch.tensor(p) if use_p else None,
                                           False, pad)
        _identical(mine, theirs)
