"""The norms family against torch: values, dtypes, shapes, strides, errors, node names and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

A, TA = dc.ops.aten, torch.ops.aten
RNG = np.random.default_rng(0)


def _pair(a):
    return dc.tensor(a), torch.tensor(a)


def _same(mine, theirs, atol=1e-5):
    mine = mine if isinstance(mine, (tuple, list)) else (mine,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert tuple(m.shape) == tuple(t.shape)
        assert m.stride() == t.stride()
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), atol=atol, rtol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_group_batch_norm_match_torch(dtype):
    x, w, b = RNG.standard_normal((2, 4, 3)).astype(dtype), RNG.standard_normal(4).astype(dtype), \
        RNG.standard_normal(4).astype(dtype)
    (dx, tx), (dw, tw), (db, tb) = _pair(x), _pair(w), _pair(b)
    _same(A.native_layer_norm(dx, [4, 3], None, None, 1e-5), TA.native_layer_norm(tx, [4, 3], None, None, 1e-5))
    _same(A.native_group_norm(dx, dw, db, 2, 4, 3, 2, 1e-5), TA.native_group_norm(tx, tw, tb, 2, 4, 3, 2, 1e-5))
    (drm, trm), (drv, trv) = _pair(np.zeros(4, dtype)), _pair(np.ones(4, dtype))
    _same(A.native_batch_norm(dx, dw, db, drm, drv, True, 0.1, 1e-5),
          TA.native_batch_norm(tx, tw, tb, trm, trv, True, 0.1, 1e-5))
    _same((drm, drv), (trm, trv))
    _same(A._native_batch_norm_legit_no_training(dx, dw, db, drm, drv, 0.1, 1e-5),
          TA._native_batch_norm_legit_no_training(tx, tw, tb, trm, trv, 0.1, 1e-5))
    _same(A._native_batch_norm_legit.no_stats(dx, dw, db, True, 0.1, 1e-5),
          TA._native_batch_norm_legit.no_stats(tx, tw, tb, True, 0.1, 1e-5))


def test_batch_norm_keeps_channels_last():
    x = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    tx = torch.tensor(x).to(memory_format=torch.channels_last)
    dx = dc.tensor(x).contiguous().permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    _same(A.native_batch_norm(dx, None, None, None, None, True, 0.1, 1e-5),
          TA.native_batch_norm(tx, None, None, None, None, True, 0.1, 1e-5))


@pytest.mark.parametrize("case", ["ln_shape", "ln_empty", "ln_weight", "ln_int", "ln_mixed", "gn_groups", "gn_weight",
                                  "bn_features", "bn_eval", "bn_int", "emb_dtype", "emb_2d", "drop_p", "ndrop_int",
                                  "pad_big", "pad_dims", "pad_len", "pad_mode", "pad_small", "circ_wrap", "cdist_cols",
                                  "cdist_dtype", "pdist_dim", "einsum_size", "einsum_out", "einsum_char", "ce_ls",
                                  "bce_range"])
def test_errors_match_torch(case, raises_alike):
    calls = {
        "ln_shape": lambda m: m.native_layer_norm(m.ones(2, 4), [3], None, None, 1e-5),
        "ln_empty": lambda m: m.native_layer_norm(m.ones(2, 4), [], None, None, 1e-5),
        "ln_weight": lambda m: m.native_layer_norm(m.ones(2, 4), [4], m.ones(3), None, 1e-5),
        "ln_int": lambda m: m.native_layer_norm(m.ones(2, 4, dtype=m.int64), [4], None, None, 1e-5),
        "ln_mixed": lambda m: m.native_layer_norm(m.ones(2, 4), [4], m.ones(4, dtype=m.float64), None, 1e-5),
        "gn_groups": lambda m: m.group_norm(m.ones(2, 6, 3), 4),
        "gn_weight": lambda m: m.group_norm(m.ones(2, 6, 3), 3, m.ones(5)),
        "bn_features": lambda m: m.batch_norm(m.ones(2, 3), None, None, m.zeros(4), m.ones(3), True, 0.1, 1e-5,
                                              False),
        "bn_eval": lambda m: m.batch_norm(m.ones(2, 3), None, None, m.zeros(3), None, False, 0.1, 1e-5, False),
        "bn_int": lambda m: m.native_batch_norm(m.ones(2, 3, dtype=m.int64), None, None, None, None, True, 0.1, 1e-5),
        "emb_dtype": lambda m: m.embedding(m.ones(3, 2), m.ones(2)),
        "emb_2d": lambda m: m.embedding(m.ones(3), m.ones(2, dtype=m.int64)),
        "drop_p": lambda m: m.dropout(m.ones(3), 1.5, True),
        "ndrop_int": lambda m: m.native_dropout(m.ones(3, dtype=m.int64), 0.5, True),
        "pad_big": lambda m: m.ops.aten.reflection_pad2d(m.ones(1, 2, 3, 3), [1, 1, 3, 0]),
        "pad_dims": lambda m: m.ops.aten.replication_pad2d(m.ones(2, 3), [1, 1, 1, 1]),
        "pad_len": lambda m: m.ops.aten.reflection_pad1d(m.ones(2, 3), [1, 1, 1]),
        "pad_mode": lambda m: m.ops.aten.pad(m.ones(2, 3), [1, 1, 1, 1], "reflect"),
        "pad_small": lambda m: m.ops.aten.replication_pad2d(m.ones(1, 2, 3, 3), [-3, 0, -3, 0]),
        "circ_wrap": lambda m: m.ops.aten._pad_circular(m.ones(1, 2, 3), [4, 0]),
        "cdist_cols": lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4)),
        "cdist_dtype": lambda m: m.cdist(m.ones(2, 3), m.ones(2, 3, dtype=m.float64)),
        "pdist_dim": lambda m: m.pdist(m.ones(3)),
        "einsum_size": lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(4, 5)),
        "einsum_out": lambda m: m.einsum("ij,jk->iz", m.ones(2, 3), m.ones(3, 5)),
        "einsum_char": lambda m: m.einsum("i1,jk->i", m.ones(2, 3), m.ones(3, 5)),
        "ce_ls": lambda m: m.ops.aten.cross_entropy_loss(m.ones(3, 4), m.zeros(3, dtype=m.int64), None, 1, -100, 1.5),
        "bce_range": lambda m: m.ops.aten.binary_cross_entropy(m.ones(2) * 2, m.ones(2)),
    }
    raises_alike(lambda: calls[case](dc), lambda: calls[case](torch))


@pytest.mark.parametrize("kind", ["reflection", "replication"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_pads_and_their_backward_match_torch(kind, k):
    x = RNG.standard_normal((2, 3) + (4,) * k)
    pad = [2, 1, 1, 3, 0, 2][:2 * k] if kind == "reflection" else [3, -1, 0, 2, 1, 1][:2 * k]
    dx, tx = _pair(x)
    fwd = getattr(TA, f"{kind}_pad{k}d")
    _same(getattr(A, f"{kind}_pad{k}d")(dx, pad), fwd(tx, pad))
    g = RNG.standard_normal(tuple(fwd(tx, pad).shape))
    _same(getattr(A, f"{kind}_pad{k}d_backward")(dc.tensor(g), dx, pad),
          getattr(TA, f"{kind}_pad{k}d_backward")(torch.tensor(g), tx, pad))
    out = dc.empty(0, dtype=dc.float64)
    getattr(A, f"{kind}_pad{k}d").out(dx, pad, out=out)
    _same(out, fwd(tx, pad))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_pad_modes_match_torch(mode):
    x = RNG.standard_normal((1, 2, 3, 4))
    dx, tx = _pair(x)
    _same(A.pad(dx, [1, 2, 2, 1], mode), TA.pad(tx, [1, 2, 2, 1], mode))


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_distances_match_torch(p):
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((5, 4))
    (da, ta), (db, tb) = _pair(a), _pair(b)
    _same(dc.cdist(da, db, p), torch.cdist(ta, tb, p))
    _same(dc.pdist(da[0], p), torch.pdist(ta[0], p))


def test_cdist_of_many_rows_goes_through_euclidean_dist():
    a, b = RNG.standard_normal((30, 3)), RNG.standard_normal((4, 3))
    (da, ta), (db, tb) = _pair(a), _pair(b)
    _same(dc.cdist(da, db), torch.cdist(ta, tb))
    da.requires_grad_()
    ta.requires_grad_()
    assert dc.cdist(da, db).grad_fn.next_functions[0][0].name() == \
        torch.cdist(ta, tb).grad_fn.next_functions[0][0].name() == "EuclideanDistBackward0"


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(3, 3)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]), ("i,j->ij", [(3,), (4,)]), ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 6)]),
    ("Ab,bA->A", [(3, 4), (4, 3)]), ("ij->", [(2, 3)])])
def test_einsum_matches_torch(equation, shapes):
    ops = [RNG.standard_normal(s) for s in shapes]
    _same(dc.einsum(equation, *[dc.tensor(o) for o in ops]), torch.einsum(equation, *[torch.tensor(o) for o in ops]))


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_cross_entropy_matches_torch(label_smoothing, reduction):
    logits, target, weight = RNG.standard_normal((4, 5)), np.array([0, 1, 4, 2]), RNG.random(5)
    args = (reduction, 1, label_smoothing)
    _same(A.cross_entropy_loss(dc.tensor(logits), dc.tensor(target), dc.tensor(weight), *args),
          TA.cross_entropy_loss(torch.tensor(logits), torch.tensor(target), torch.tensor(weight), *args))
    probs = RNG.random((4, 5))
    _same(A.cross_entropy_loss(dc.tensor(logits), dc.tensor(probs), None, reduction, -100, label_smoothing),
          TA.cross_entropy_loss(torch.tensor(logits), torch.tensor(probs), None, reduction, -100, label_smoothing))


def test_binary_cross_entropies_match_torch():
    x, t, w = RNG.random(6), RNG.random(6), RNG.random(6)
    for red in (0, 1, 2):
        _same(A.binary_cross_entropy(dc.tensor(x), dc.tensor(t), dc.tensor(w), red),
              TA.binary_cross_entropy(torch.tensor(x), torch.tensor(t), torch.tensor(w), red))
        _same(A.binary_cross_entropy_with_logits(dc.tensor(x), dc.tensor(t), None, dc.tensor(w), red),
              TA.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(t), None, torch.tensor(w), red))


def test_embedding_and_its_backward_match_torch():
    w, idx = RNG.standard_normal((6, 3)), np.array([[1, 2], [5, 1]])
    (dw, tw), (di, ti) = _pair(w), _pair(idx)
    _same(dc.embedding(dw, di, 1), torch.embedding(tw, ti, 1))
    g = RNG.standard_normal((2, 2, 3))
    _same(A.embedding_dense_backward(dc.tensor(g), di, 6, 1, True),
          TA.embedding_dense_backward(torch.tensor(g), ti, 6, 1, True))


def test_dropout_semantics_match_torch():
    x = RNG.standard_normal((3, 2)).T  # a transposed input: outputs keep its strides
    dx, tx = _pair(x)
    for p, train in ((0.0, True), (1.0, True), (0.5, False), (0.5, None)):
        mine, theirs = A.native_dropout(dx, p, train), TA.native_dropout(tx, p, train)
        assert [t.stride() for t in mine] == [t.stride() for t in theirs]
        assert mine[1].dtype is dc.bool
        if p in (0.0, 1.0) or train is False:
            _same(mine, theirs)
    out, mask = A.native_dropout(dx, 0.25, True)
    np.testing.assert_allclose(out.numpy(), np.where(mask.numpy(), x / 0.75, 0.0))


_GRAD_CASES = {
    "native_layer_norm": (lambda m, x, w, b: m.layer_norm(x, [3], w, b), ((2, 4, 3), (3,), (3,))),
    "native_group_norm": (lambda m, x, w, b: m.group_norm(x, 2, w, b), ((2, 4, 3), (4,), (4,))),
    "native_batch_norm": (lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
                          ((3, 4, 2), (4,), (4,))),
    "embedding": (lambda m, w: m.embedding(w, m.tensor([[0, 2], [3, 0]])), ((4, 3),)),
    "reflection_pad2d": (lambda m, x: m.ops.aten.reflection_pad2d(x, [1, 2, 2, 1]), ((1, 2, 3, 3),)),
    "replication_pad1d": (lambda m, x: m.ops.aten.replication_pad1d(x, [2, 1]), ((2, 3),)),
    "_cdist_forward": (lambda m, a, b: m.cdist(a, b, 3.0), ((3, 4), (2, 4))),
    "_pdist_forward": (lambda m, a: m.pdist(a), ((4, 3),)),
    "einsum": (lambda m, a, b: m.einsum("ij,kj->ik", a, b), ((2, 3), (4, 3))),
    "cross_entropy_loss": (lambda m, x: m.ops.aten.cross_entropy_loss(x, m.tensor([1, 0, 3]), None, 1, -100, 0.1),
                           ((3, 4),)),
}


@pytest.mark.parametrize("name", sorted(_GRAD_CASES))
def test_gradients_and_node_names_match_torch(name):
    fn, shapes = _GRAD_CASES[name]
    arrays = [RNG.standard_normal(s) for s in shapes]
    mine = [dc.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = fn(dc, *mine), fn(torch, *theirs)
    _same(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name()
    g = RNG.standard_normal(tuple(ty.shape))
    grads = dc.autograd.grad([y], mine, [dc.tensor(g)])
    tgrads = torch.autograd.grad([ty], theirs, [torch.tensor(g)])
    _same(tuple(grads), tuple(tgrads))
    assert dc.autograd.gradcheck(lambda *a: fn(dc, *a), tuple(mine))


def test_double_backward_is_refused_where_torch_refuses_it():
    a = dc.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    g, = dc.autograd.grad([dc.cdist(a, dc.tensor(RNG.standard_normal((2, 2)))).sum()], [a], create_graph=True)
    assert g.grad_fn.name() == "CdistBackwardBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for '_cdist_backward' is not implemented."):
        g.sum().backward()
