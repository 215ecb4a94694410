"""``nansum`` and ``nanmean`` against torch 2.13: values, dtypes, dims, out=, meta, errors, operator calls.

Each case runs on both libraries and compares the result (dtype, shape, strides, elements) or the
error, and the warnings; ``nanmean`` is CompositeImplicitAutograd, so the operators a dispatch mode
sees are compared too, and so are ``nansum``'s gradient and the calls of its formula.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential

NAN = float("nan")
ROWS = [[1.0, NAN, 2.0], [NAN, NAN, 3.0]]
CASES = {
    "nansum-all": lambda t: t.nansum(t.tensor(ROWS)),
    "nansum-dim": lambda t: t.nansum(t.tensor(ROWS), 1),
    "nansum-dims-keepdim": lambda t: t.nansum(t.tensor(ROWS), (0, 1), True),
    "nansum-empty-dim-list": lambda t: t.nansum(t.tensor(ROWS), []),
    "nansum-transposed-keepdim": lambda t: t.nansum(t.tensor([[1.0, NAN], [3.0, 4.0]]).t(), 0, True),
    "nansum-all-nan-is-zero": lambda t: t.nansum(t.tensor([NAN, NAN])),
    "nansum-empty": lambda t: t.nansum(t.empty(0, 3), 0),
    "nansum-half": lambda t: t.nansum(t.tensor([1.0, 2.0, NAN], dtype=t.float16)),
    "nansum-int-as-sum": lambda t: t.nansum(t.tensor([1, 2], dtype=t.int32)),
    "nansum-bool": lambda t: t.nansum(t.tensor([True, True])),
    "nansum-dtype-float64": lambda t: t.nansum(t.tensor([1.0, NAN]), dtype=t.float64),
    "nansum-dtype-int64-casts-elements": lambda t: t.nansum(t.tensor([1.5, 2.7, NAN]), dtype=t.int64),
    "nansum-dtype-half": lambda t: t.nansum(t.tensor([1.5, 2.7]), dtype=t.float16),
    "nansum-int-to-half": lambda t: t.nansum(t.tensor([1, 2]), dtype=t.float16),
    "nansum-method": lambda t: t.tensor([1.0, NAN]).nansum(),
    "nansum-method-dim": lambda t: t.tensor(ROWS).nansum(dim=0, keepdim=True),
    "nansum-complex-refused": lambda t: t.nansum(t.tensor([1j])),
    "nansum-duplicate-dims": lambda t: t.nansum(t.ones(2, 3), (0, 0)),
    "nansum-dim-out-of-range": lambda t: t.nansum(t.ones(2, 3), 5),
    "nansum-out": lambda t: t.nansum(t.tensor(ROWS), 1, out=t.empty(0)),
    "nansum-out-dtype-is-the-computations": lambda t: t.nansum(t.tensor([1.0, 2.0]), out=t.empty(0, dtype=t.float64)),
    "nansum-int-into-float-out": lambda t: t.nansum(t.tensor([1, 2]), out=t.empty(0)),
    "nansum-out-resized-warns": lambda t: t.nansum(t.tensor([1, 2]), out=t.empty(3, dtype=t.long)),
    "nansum-float-into-long-out-refused": lambda t: t.nansum(t.tensor([1.0, 2.0]), out=t.empty(0, dtype=t.long)),
    "nansum-out-dtype-mismatch": lambda t: t.nansum(t.tensor([1.0, 2.0]), dtype=t.float64, out=t.empty(0)),
    "nansum-int-out-dtype-mismatch": lambda t: t.nansum(t.tensor([1, 2]), dtype=t.float64, out=t.empty(0)),
    "nansum-meta": lambda t: t.nansum(t.empty(2, 3, device="meta"), 1, True),
    "nansum-meta-bool": lambda t: t.nansum(t.empty(2, dtype=t.bool, device="meta")),
    "nansum-meta-complex": lambda t: t.nansum(t.empty(2, dtype=t.complex64, device="meta")),
    "nansum-meta-out-resized-warns": lambda t: t.nansum(t.empty(2, 3, device="meta"), 1,
                                                        out=t.empty(5, dtype=t.float64, device="meta")),
    "nansum-meta-out-unsafe-cast": lambda t: t.nansum(t.empty(2, device="meta"),
                                                      out=t.empty(0, dtype=t.long, device="meta")),
    "nanmean-all": lambda t: t.nanmean(t.tensor(ROWS)),
    "nanmean-dim": lambda t: t.nanmean(t.tensor(ROWS), 1),
    "nanmean-keepdim": lambda t: t.nanmean(t.tensor(ROWS), 0, True),
    "nanmean-all-nan": lambda t: t.nanmean(t.tensor([NAN, NAN])),
    "nanmean-dtype": lambda t: t.nanmean(t.tensor([[1.0, NAN], [3.0, 4.0]]), dtype=t.float64),
    "nanmean-out": lambda t: t.nanmean(t.tensor([[1.0, NAN], [3.0, 4.0]]), 1, out=t.empty(0, dtype=t.float64)),
    "nanmean-method": lambda t: t.tensor([1.0, NAN]).nanmean(dim=0, keepdim=True),
    "nanmean-int-refused": lambda t: t.nanmean(t.tensor([1, 2])),
    "nanmean-complex-refused-by-nansum": lambda t: t.nanmean(t.tensor([1j, NAN])),
    "nanmean-meta": lambda t: t.nanmean(t.empty(2, 3, device="meta"), 1),
    "nanmean-meta-int-refused": lambda t: t.nanmean(t.empty(2, 3, dtype=t.long, device="meta")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_nansum_nanmean_match_torch(name):
    assert outcome(dc, CASES[name]) == outcome(torch, CASES[name])


CALLS = {
    "nanmean-all": lambda t, x: t.nanmean(x),
    "nanmean-dim": lambda t, x: t.nanmean(x, 1),
    "nanmean-keepdim-dtype": lambda t, x: t.nanmean(x, [0], True, dtype=t.float64),
    "nanmean-out": lambda t, x: t.nanmean(x, 1, out=x.new_empty(0)),
    "nansum-dim": lambda t, x: t.nansum(x, 1),
    "nansum-all": lambda t, x: t.nansum(x),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_operators_a_mode_sees_are_torchs(name):
    def run(t):
        x = t.tensor(ROWS)
        return mode_calls(t, lambda: CALLS[name](t, x))

    assert run(dc) == run(torch)


@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), (1, True), ((0, 1), False), (-1, True)])
def test_nansums_gradient_skips_the_nans_as_torchs(dim, keepdim):
    def run(t):
        x = t.tensor(ROWS, requires_grad=True)
        y = t.nansum(x) if dim is None else t.nansum(x, dim, keepdim)
        seen = mode_calls(t, lambda: y.backward(t.ones_like(y) * 2))
        return type(y.grad_fn).__name__, x.grad.tolist(), seen

    assert run(dc) == run(torch)


def test_nanmeans_gradient_flows_through_nansum_and_div_as_torchs():
    def run(t):
        x = t.tensor(ROWS, requires_grad=True)
        y = t.nanmean(x, 1)
        y.sum().backward()
        return type(y.grad_fn).__name__, x.grad.tolist()

    assert run(dc) == run(torch)
