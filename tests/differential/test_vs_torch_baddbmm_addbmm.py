"""``baddbmm`` and ``addbmm`` against torch 2.13: values, broadcasting, beta/alpha, in place, out=, meta, errors.

Values are compared with a float tolerance (the BLAS sums in another order); everything else
(dtypes, shapes, strides, errors, warnings) exactly; then the gradients, their nodes and the
operators a dispatch mode sees during backward.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

RNG = np.random.default_rng(3)
SELF, B1, B2 = (RNG.standard_normal(s).astype(np.float32) for s in ((3, 5), (2, 3, 4), (2, 4, 5)))
NAN = float("nan")


def _ones(t, *shape, dtype=None, device="cpu"):
    return t.ones(*shape, dtype=dtype or t.float32, device=device)


CASES = {
    "baddbmm": lambda t: t.baddbmm(t.tensor(SELF), t.tensor(B1), t.tensor(B2)),
    "baddbmm-beta-alpha": lambda t: t.baddbmm(t.tensor(SELF), t.tensor(B1), t.tensor(B2), beta=0.5, alpha=2),
    "baddbmm-full-self": lambda t: t.baddbmm(t.tensor(B1) @ t.tensor(B2), t.tensor(B1), t.tensor(B2), alpha=-1),
    "baddbmm-beta-zero-ignores-nan": lambda t: t.baddbmm(t.full((3, 5), NAN), t.tensor(B1), t.tensor(B2), beta=0),
    "baddbmm-int": lambda t: t.baddbmm(t.ones(3, 5, dtype=t.long), t.ones(2, 3, 4, dtype=t.long),
                                       t.ones(2, 4, 5, dtype=t.long), beta=2, alpha=3),
    "baddbmm-double": lambda t: t.baddbmm(t.tensor(SELF, dtype=t.float64), t.tensor(B1, dtype=t.float64),
                                          t.tensor(B2, dtype=t.float64)),
    "baddbmm-empty-batch": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 0, 3, 4), _ones(t, 0, 4, 5)),
    "baddbmm-empty-contraction": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 2, 3, 0), _ones(t, 2, 0, 5), beta=2),
    "baddbmm-transposed-batches": lambda t: t.baddbmm(t.tensor(SELF), t.tensor(B1).transpose(1, 2).contiguous()
                                                      .transpose(1, 2), t.tensor(B2)),
    "baddbmm-method": lambda t: t.tensor(SELF).baddbmm(t.tensor(B1), t.tensor(B2), beta=2),
    "baddbmm-inplace": lambda t: t.tensor(B1 @ B2).baddbmm_(t.tensor(B1), t.tensor(B2), alpha=0.5),
    "baddbmm-inplace-broadcast-refused": lambda t: _ones(t, 3, 5).baddbmm_(_ones(t, 2, 3, 4), _ones(t, 2, 4, 5)),
    "baddbmm-out": lambda t: t.baddbmm(t.tensor(SELF), t.tensor(B1), t.tensor(B2), out=t.empty(0)),
    "baddbmm-out-resized-warns": lambda t: t.baddbmm(t.tensor(SELF), t.tensor(B1), t.tensor(B2), out=t.empty(4)),
    "baddbmm-out-dtype-refused": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5),
                                                     out=t.empty(0, dtype=t.double)),
    "baddbmm-self-does-not-expand": lambda t: t.baddbmm(_ones(t, 3, 4), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5)),
    "baddbmm-batch1-2d": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 3, 4), _ones(t, 2, 4, 5)),
    "baddbmm-batch2-2d": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 4, 5)),
    "baddbmm-batch-mismatch": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 3, 4, 5)),
    "baddbmm-contraction-mismatch": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 2, 3, 5)),
    "baddbmm-self-dtype": lambda t: t.baddbmm(_ones(t, 3, 5, dtype=t.double), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5)),
    "baddbmm-batch2-dtype": lambda t: t.baddbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5, dtype=t.double)),
    "baddbmm-bool-refused": lambda t: t.baddbmm(*(_ones(t, *s, dtype=t.bool) for s in ((3, 5), (2, 3, 4), (2, 4, 5)))),
    "addbmm": lambda t: t.addbmm(t.tensor(SELF), t.tensor(B1), t.tensor(B2)),
    "addbmm-beta-alpha": lambda t: t.addbmm(t.tensor(SELF), t.tensor(B1), t.tensor(B2), beta=0.5, alpha=2),
    "addbmm-broadcast-self": lambda t: t.addbmm(t.tensor(SELF[0]), t.tensor(B1), t.tensor(B2)),
    "addbmm-beta-zero-ignores-nan": lambda t: t.addbmm(t.full((3, 5), NAN), t.tensor(B1), t.tensor(B2), beta=0),
    "addbmm-int": lambda t: t.addbmm(t.ones(3, 5, dtype=t.long), t.ones(2, 3, 4, dtype=t.long),
                                     t.ones(2, 4, 5, dtype=t.long)),
    "addbmm-empty-batch": lambda t: t.addbmm(_ones(t, 3, 5), _ones(t, 0, 3, 4), _ones(t, 0, 4, 5), beta=3),
    "addbmm-method": lambda t: t.tensor(SELF).addbmm(t.tensor(B1), t.tensor(B2), alpha=3),
    "addbmm-inplace": lambda t: t.tensor(SELF).addbmm_(t.tensor(B1), t.tensor(B2), beta=2),
    "addbmm-out": lambda t: t.addbmm(t.tensor(SELF), t.tensor(B1), t.tensor(B2), out=t.empty(0)),
    "addbmm-out-dtype-refused-by-addmm": lambda t: t.addbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5),
                                                            out=t.empty(0, dtype=t.double)),
    "addbmm-self-dtype": lambda t: t.addbmm(_ones(t, 3, 5, dtype=t.double), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5)),
    "addbmm-self-does-not-expand": lambda t: t.addbmm(_ones(t, 3, 4), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5)),
    "addbmm-self-3d": lambda t: t.addbmm(_ones(t, 1, 3, 5), _ones(t, 2, 3, 4), _ones(t, 2, 4, 5)),
    "addbmm-batch1-2d": lambda t: t.addbmm(_ones(t, 3, 5), _ones(t, 3, 4), _ones(t, 2, 4, 5)),
    "addbmm-batch-mismatch": lambda t: t.addbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 3, 4, 5)),
    "addbmm-contraction-mismatch": lambda t: t.addbmm(_ones(t, 3, 5), _ones(t, 2, 3, 4), _ones(t, 2, 3, 5)),
    "addbmm-bool-refused": lambda t: t.addbmm(*(_ones(t, *s, dtype=t.bool) for s in ((3, 5), (2, 3, 4), (2, 4, 5)))),
}
META_CASES = {
    "baddbmm": lambda t, m: t.baddbmm(m(3, 5), m(2, 3, 4), m(2, 4, 5)),
    "baddbmm-dtypes": lambda t, m: t.baddbmm(m(3, 5), m(2, 3, 4), m(2, 4, 5, dtype=t.double)),
    "baddbmm-self-does-not-expand": lambda t, m: t.baddbmm(m(3, 4), m(2, 3, 4), m(2, 4, 5)),
    "baddbmm-bool-allowed": lambda t, m: t.baddbmm(*(m(*s, dtype=t.bool) for s in ((3, 5), (2, 3, 4), (2, 4, 5)))),
    "baddbmm-inplace-broadcast-refused": lambda t, m: m(3, 5).baddbmm_(m(2, 3, 4), m(2, 4, 5)),
    "baddbmm-out-dtype": lambda t, m: t.baddbmm(m(3, 5), m(2, 3, 4), m(2, 4, 5), out=m(0, dtype=t.double)),
    "baddbmm-out-resized-warns": lambda t, m: t.baddbmm(m(3, 5), m(2, 3, 4), m(2, 4, 5), out=m(4)),
    "addbmm": lambda t, m: t.addbmm(m(5), m(2, 3, 4), m(2, 4, 5)),
    "addbmm-no-dtype-check": lambda t, m: t.addbmm(m(3, 5, dtype=t.double), m(2, 3, 4), m(2, 4, 5)),
    "addbmm-self-3d": lambda t, m: t.addbmm(m(1, 3, 5), m(2, 3, 4), m(2, 4, 5)),
    "addbmm-inplace-broadcast-refused": lambda t, m: m(5).addbmm_(m(2, 3, 4), m(2, 4, 5)),
    "addbmm-out-dtype": lambda t, m: t.addbmm(m(3, 5), m(2, 3, 4), m(2, 4, 5), out=m(0, dtype=t.double)),
}


def _same(fn):
    """Both libraries' outcome (dtype, shape, strides, or the error; the warnings); the values within a tolerance."""
    mine, theirs = outcome(dc, fn), outcome(torch, fn)
    if mine[0][0] == "error" or theirs[0][0] == "error" or theirs[0][3] is None:
        assert mine == theirs
        return
    assert mine[0][:3] == theirs[0][:3] and mine[1] == theirs[1]
    with warnings.catch_warnings():  # the warnings were compared above
        warnings.simplefilter("ignore")
        got, expected = fn(dc).tolist(), fn(torch).tolist()
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_baddbmm_addbmm_match_torch(name):
    _same(CASES[name])


@pytest.mark.parametrize("name", sorted(META_CASES))
def test_meta_kernels_are_torchs_python_ones(name):
    _same(lambda t: META_CASES[name](t, lambda *s, dtype=None: t.empty(*s, dtype=dtype, device="meta")))


@pytest.mark.parametrize("name", ["baddbmm", "addbmm", "baddbmm_", "addbmm_"])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2)])
def test_the_gradients_their_node_and_the_calls_as_torchs(name, beta, alpha):
    def run(t):
        leaves = [t.tensor(a, requires_grad=True) for a in (SELF if name.startswith("add") else B1 @ B2, B1, B2)]
        self, b1, b2 = leaves
        start = self.clone() if name.endswith("_") else self
        y = getattr(start, name)(b1, b2, beta=beta, alpha=alpha)
        seen = mode_calls(t, lambda: y.backward(t.ones_like(y)))
        return type(y.grad_fn).__name__, seen, [leaf.grad.numpy().copy() for leaf in leaves]

    mine, theirs = run(dc), run(torch)
    assert mine[:2] == theirs[:2]
    for m, t in zip(mine[2], theirs[2]):
        np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["baddbmm", "addbmm"])
def test_autocast_computes_them_in_lower_precision_as_torch(name):
    def run(t):
        with t.autocast("cpu", dtype=t.float16):
            r = getattr(t, name)(t.tensor(SELF), t.tensor(B1), t.tensor(B2))
        return str(r.dtype).rpartition(".")[2], np.asarray(r.tolist())

    (m_dtype, m), (t_dtype, t) = run(dc), run(torch)
    assert m_dtype == t_dtype == "float16"
    np.testing.assert_allclose(m, t, rtol=1e-2, atol=1e-2)
