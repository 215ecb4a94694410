"""The reductions family against torch 2.13: values, dtypes, shapes, strides, errors, warnings, gradients.

Each case is one function of a library facade ``m`` (``dispatchcore`` or ``torch``) and ``T``
(ndarray -> tensor of that library); it runs on both, and the results (tensors, tuples of them,
``return_types``) must agree, or both must raise the same error type and message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dispatchcore as dc  # noqa: E402
from dispatchcore.autograd import gradcheck, gradgradcheck  # noqa: E402

pytestmark = pytest.mark.differential

NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
X3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
I = np.array([[3, 1, 2], [0, 5, 4]], dtype=np.int32)  # noqa: E741
B = np.array([[True, False, True], [False, False, True]])
U8 = np.array([[0, 2, 0], [1, 0, 0]], dtype=np.uint8)
NANS = np.array([[1.0, NAN, 0.5, NAN], [2.0, -1.0, 3.0, 0.0]], dtype=np.float32)
TIES = np.array([[1.0, 2.0, 1.0, 2.0, 0.0], [3.0, 3.0, 3.0, 1.0, 1.0]], dtype=np.float32)
EMPTY = np.zeros((0, 3), dtype=np.float32)
ZERO_D = np.array(2.5, dtype=np.float32)


def _lib(m):
    def T(a):  # noqa: N802 - reads as a type
        return m.tensor(a)
    return T


def _nc(m, a):
    """A non-contiguous view of ``a`` (its transpose, made contiguous first)."""
    return m.tensor(np.ascontiguousarray(a.T)).t()


CASES = {
    # min / max / amin / argmin
    "min": lambda m, T: m.min(T(X)),
    "min.bool": lambda m, T: m.min(T(B)),
    "min.dim": lambda m, T: m.min(T(X), 1),
    "min.dim.keepdim": lambda m, T: m.min(T(X), dim=-1, keepdim=True),
    "min.dim.nan": lambda m, T: m.min(T(NANS), 1),
    "min.dim.ties": lambda m, T: m.min(T(TIES), 1),
    "min.dim.zero-d": lambda m, T: m.min(T(ZERO_D), 0),
    "min.dim.empty-other-dim": lambda m, T: m.min(T(EMPTY), 1),
    "min.other": lambda m, T: m.min(T(X), T(X[0])),
    "min.other.kw": lambda m, T: T(X).min(other=T(X[:, :1])),
    "min.method.dim": lambda m, T: T(X3).min(dim=0),
    "max.dim.method": lambda m, T: T(X3).max(2, True),
    "max.other": lambda m, T: m.max(T(X), T(X[1])),
    "max.full": lambda m, T: T(NANS).max(),
    "min.unpack": lambda m, T: tuple(m.min(T(X), 0)),
    "min.values-attr": lambda m, T: (m.min(T(X), 0).values, m.min(T(X), 0).indices),
    "min.noncontig": lambda m, T: m.min(_nc(m, X), 0),
    "amin": lambda m, T: m.amin(T(X)),
    "amin.dims": lambda m, T: m.amin(T(X3), (0, -1)),
    "amin.keepdim": lambda m, T: T(X3).amin(1, keepdim=True),
    "amin.nan": lambda m, T: m.amin(T(NANS), 1),
    "amin.int": lambda m, T: m.amin(T(I), 0),
    "amin.empty-dim1": lambda m, T: m.amin(T(EMPTY), 1),
    "amin.zero-d": lambda m, T: m.amin(T(ZERO_D)),
    "argmin": lambda m, T: m.argmin(T(X)),
    "argmin.dim": lambda m, T: m.argmin(T(X), 1),
    "argmin.keepdim": lambda m, T: T(X).argmin(keepdim=True),
    "argmin.nan": lambda m, T: m.argmin(T(NANS), 1),
    "argmin.ties": lambda m, T: m.argmin(T(TIES), dim=1),
    # any / all
    "any": lambda m, T: m.any(T(X)),
    "any.dim": lambda m, T: m.any(T(B), 1),
    "any.dims": lambda m, T: m.any(T(X3 > 0), (0, 2)),
    "any.dims.keepdim": lambda m, T: m.any(T(X3 > 0), None, True),
    "any.uint8": lambda m, T: m.any(T(U8), 0),
    "any.int": lambda m, T: T(I).any(),
    "all": lambda m, T: m.all(T(B)),
    "all.dim.keepdim": lambda m, T: m.all(T(B), -1, keepdim=True),
    "all.empty": lambda m, T: m.all(T(EMPTY)),
    "all.empty.dim": lambda m, T: m.all(T(EMPTY), 0),
    "all.uint8": lambda m, T: T(U8).all(1),
    "all.dims.list": lambda m, T: T(X3).all(dim=[1]),
    # prod
    "prod": lambda m, T: m.prod(T(X)),
    "prod.dim": lambda m, T: m.prod(T(X), 1),
    "prod.keepdim": lambda m, T: T(X).prod(0, keepdim=True),
    "prod.int32": lambda m, T: m.prod(T(I)),
    "prod.bool": lambda m, T: m.prod(T(B), 1),
    "prod.uint8": lambda m, T: m.prod(T(U8)),
    "prod.dtype": lambda m, T: m.prod(T(I), 1, dtype=m.float64),
    "prod.empty": lambda m, T: m.prod(T(EMPTY)),
    "prod.empty.dim": lambda m, T: m.prod(T(EMPTY), 0),
    "prod.zero-d": lambda m, T: m.prod(T(ZERO_D), 0),
    # var / std / var_mean / std_mean
    "var": lambda m, T: m.var(T(X)),
    "var.dim": lambda m, T: m.var(T(X), 1),
    "var.dim.unbiased": lambda m, T: m.var(T(X), 1, False, True),
    "var.correction": lambda m, T: m.var(T(X3), (0, 2), correction=2),
    "var.correction.float": lambda m, T: T(X).var(correction=0.5),
    "var.unbiased-only": lambda m, T: m.var(T(X), False),
    "var.keepdim": lambda m, T: T(X).var(dim=0, keepdim=True),
    "var.noncontig": lambda m, T: m.var(_nc(m, X), 0),
    "std": lambda m, T: m.std(T(X)),
    "std.dim": lambda m, T: T(X3).std(-1),
    "std.correction0": lambda m, T: m.std(T(X), dim=1, correction=0),
    "var_mean": lambda m, T: m.var_mean(T(X)),
    "var_mean.dim": lambda m, T: m.var_mean(T(X3), 1, keepdim=True),
    "std_mean": lambda m, T: m.std_mean(T(X), dim=(0,), correction=0),
    "std.float64": lambda m, T: m.std(T(X.astype(np.float64)), 0),
    # cumsum / cumprod
    "cumsum": lambda m, T: m.cumsum(T(X), 1),
    "cumsum.neg-dim": lambda m, T: T(X3).cumsum(-2),
    "cumsum.int32": lambda m, T: m.cumsum(T(I), 0),
    "cumsum.bool": lambda m, T: m.cumsum(T(B), 1),
    "cumsum.dtype": lambda m, T: m.cumsum(T(I), 1, dtype=m.float32),
    "cumsum.zero-d": lambda m, T: m.cumsum(T(ZERO_D), 0),
    "cumsum.noncontig": lambda m, T: m.cumsum(_nc(m, X), 0),
    "cumsum.empty": lambda m, T: m.cumsum(T(EMPTY), 0),
    "cumsum_": lambda m, T: T(I).cumsum_(1),
    "cumprod": lambda m, T: m.cumprod(T(X), 0),
    "cumprod.bool": lambda m, T: T(B).cumprod(1),
    "cumprod_": lambda m, T: T(X).cumprod_(dim=1),
    # sort / topk
    "sort": lambda m, T: m.sort(T(X)),
    "sort.dim0.desc": lambda m, T: m.sort(T(X), 0, True),
    "sort.nan": lambda m, T: m.sort(T(NANS)),
    "sort.nan.desc": lambda m, T: m.sort(T(NANS), descending=True),
    "sort.stable": lambda m, T: m.sort(T(TIES), stable=True),
    "sort.stable.desc": lambda m, T: T(TIES).sort(stable=True, descending=True),
    "sort.bool": lambda m, T: m.sort(T(B), stable=True),
    "sort.int": lambda m, T: T(I).sort(dim=0),
    "sort.zero-d": lambda m, T: m.sort(T(ZERO_D)),
    "sort.transposed-strides": lambda m, T: m.sort(_nc(m, X), 0),
    "sort.empty": lambda m, T: m.sort(T(EMPTY), 0),
    "topk": lambda m, T: m.topk(T(X), 2),
    "topk.smallest": lambda m, T: m.topk(T(X), 3, largest=False),
    "topk.dim0": lambda m, T: T(X).topk(2, dim=0),
    "topk.nan": lambda m, T: m.topk(T(NANS), 2),
    "topk.nan.smallest": lambda m, T: m.topk(T(NANS), 2, largest=False),
    "topk.k0": lambda m, T: m.topk(T(X), 0),
    "topk.zero-d": lambda m, T: m.topk(T(ZERO_D), 1),
    "topk.int": lambda m, T: m.topk(T(I), 1, 0),
    "topk.noncontig": lambda m, T: m.topk(_nc(m, X), 2, 0),
    # argsort / msort (CompositeImplicitAutograd over sort)
    "argsort": lambda m, T: m.argsort(T(X)),
    "argsort.dim0.descending": lambda m, T: m.argsort(T(X), 0, True),
    "argsort.stable.ties": lambda m, T: m.argsort(T(TIES), stable=True, descending=True),
    "argsort.method.noncontig": lambda m, T: _nc(m, X).argsort(dim=-1),
    "argsort.zero-d": lambda m, T: m.argsort(T(ZERO_D)),
    "argsort.stable.out": lambda m, T: m.argsort(T(TIES), stable=True, out=m.empty(0, dtype=m.int64)),
    "msort": lambda m, T: m.msort(T(X)),
    "msort.method.int": lambda m, T: T(I).msort(),
    "msort.out": lambda m, T: m.msort(T(X3), out=m.empty(0)),
    # diff (CompositeImplicitAutograd: narrow, narrow, sub per order)
    "diff": lambda m, T: m.diff(T(X)),
    "diff.n2.dim0": lambda m, T: T(X3).diff(2, 0),
    "diff.bool": lambda m, T: m.diff(T(B)),
    "diff.prepend.append": lambda m, T: m.diff(T(X), 1, 1, T(X[:, :1]), T(X[:, :2])),
    "diff.n0.prepend": lambda m, T: m.diff(T(X), n=0, prepend=T(X[:, :1])),
    "diff.n-past-size": lambda m, T: m.diff(T(X), n=9),
    "diff.int": lambda m, T: m.diff(T(I), dim=0),
    "diff.out.n2": lambda m, T: m.diff(T(X), 2, out=m.empty(0)),
    "diff.out.n0.resized": lambda m, T: m.diff(T(X), n=0, out=m.empty(5)),
    # logsumexp / norm / count_nonzero
    "logsumexp": lambda m, T: m.logsumexp(T(X), 1),
    "logsumexp.dims.keepdim": lambda m, T: m.logsumexp(T(X3), (0, 2), keepdim=True),
    "logsumexp.int": lambda m, T: m.logsumexp(T(I), 1),
    "logsumexp.inf": lambda m, T: m.logsumexp(T(np.array([[INF, 1.0], [-INF, -INF]], np.float32)), 1),
    "logsumexp.empty": lambda m, T: m.logsumexp(T(np.zeros((0,), np.float32)), 0),
    "logsumexp.method": lambda m, T: T(X).logsumexp(dim=0),
    "norm": lambda m, T: m.norm(T(X)),
    "norm.p1.dim": lambda m, T: m.norm(T(X), 1, 1),
    "norm.p3.keepdim": lambda m, T: m.norm(T(X3), 3, (0, 1), True),
    "norm.inf": lambda m, T: m.norm(T(X), float("inf"), 0),
    "norm.-inf": lambda m, T: m.norm(T(X), -float("inf")),
    "norm.p0": lambda m, T: m.norm(T(np.array([0.0, 2.0, -3.0], np.float32)), 0),
    "norm.p0.5": lambda m, T: m.norm(T(X), 0.5),
    "norm.dtype": lambda m, T: m.norm(T(X), dtype=m.float64),
    "norm.method": lambda m, T: T(X).norm(dim=1),
    "count_nonzero": lambda m, T: m.count_nonzero(T(I)),
    "count_nonzero.dim": lambda m, T: m.count_nonzero(T(B), 0),
    "count_nonzero.dims": lambda m, T: T(X3 > 0).count_nonzero((0, 2)),
    # out=
    "min.out.dim": lambda m, T: m.min(T(X), 1, out=(m.empty(0), m.empty(0, dtype=m.int64))),
    "max.out.unary": lambda m, T: m.max(T(X), out=m.empty(0, dtype=m.float64)),
    "any.out": lambda m, T: m.any(T(X), 1, out=m.empty(0, dtype=m.bool)),
    "prod.out": lambda m, T: m.prod(T(I), 0, out=m.empty(0, dtype=m.float64)),
    "var.out": lambda m, T: m.var(T(X), 0, out=m.empty(0, dtype=m.float64)),
    "cumsum.out": lambda m, T: m.cumsum(T(I), 0, out=m.empty(0, dtype=m.float32)),
    "sort.out": lambda m, T: m.sort(T(X), out=(m.empty(0), m.empty(0, dtype=m.int64))),
    "topk.out": lambda m, T: m.topk(T(X), 2, out=(m.empty(0), m.empty(0, dtype=m.int64))),
    "logsumexp.out": lambda m, T: m.logsumexp(T(X), 1, out=m.empty(0, dtype=m.float64)),
    "norm.out": lambda m, T: m.norm(T(X), out=m.empty(0)),
}

ERRORS = {
    "amin.empty": lambda m, T: m.amin(T(EMPTY)),
    "amin.empty.dim0": lambda m, T: m.amin(T(EMPTY), 0),
    "amin.dup-dims": lambda m, T: m.amin(T(X), (0, -2)),
    "min.empty": lambda m, T: m.min(T(EMPTY)),
    "min.empty.dim0": lambda m, T: m.min(T(EMPTY), 0),
    "min.dim.out-of-range": lambda m, T: m.min(T(X), 2),
    "argmin.empty": lambda m, T: m.argmin(T(EMPTY)),
    "argmin.bool": lambda m, T: m.argmin(T(B)),
    "var.int": lambda m, T: m.var(T(I)),
    "std.bool": lambda m, T: m.std(T(B), 0),
    "topk.k-too-large": lambda m, T: m.topk(T(X), 5),
    "topk.negative-k": lambda m, T: m.topk(T(X), -1),
    "topk.bool": lambda m, T: m.topk(T(B), 1),
    "cumsum.dtype-bool": lambda m, T: m.cumsum(T(X), 0, dtype=m.bool),
    "cumsum_.dtype": lambda m, T: T(X).cumsum_(0, dtype=m.float64),
    "cumsum.dim": lambda m, T: m.cumsum(T(ZERO_D), 1),
    "norm.int": lambda m, T: m.norm(T(I)),
    "norm.empty.inf": lambda m, T: m.norm(T(EMPTY), float("inf")),
    "norm.empty.-inf.dim0": lambda m, T: m.norm(T(EMPTY), -float("inf"), 0),
    "norm.dtype-int": lambda m, T: m.norm(T(X), dtype=m.int64),
    "count_nonzero.dup": lambda m, T: m.count_nonzero(T(X), (0, 0)),
    "min.out.dtype": lambda m, T: m.min(T(X), 1, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
    "min.out.cancast": lambda m, T: m.min(T(X), out=m.empty(0, dtype=m.int64)),
    "amin.out.dtype": lambda m, T: m.amin(T(X), 1, out=m.empty(0, dtype=m.float64)),
    "argmin.out.dtype": lambda m, T: m.argmin(T(X), 1, out=m.empty(0, dtype=m.int32)),
    "any.out.dtype": lambda m, T: m.any(T(X), 1, out=m.empty(0)),
    "var.out.cast": lambda m, T: m.var(T(X), 1, out=m.empty(0, dtype=m.int64)),
    "sort.out.dtype": lambda m, T: m.sort(T(X), out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
    "topk.out.indices": lambda m, T: m.topk(T(X), 1, out=(m.empty(0), m.empty(0))),
    "logsumexp.out.int": lambda m, T: m.logsumexp(T(X), 1, out=m.empty(0, dtype=m.int64)),
    "max.bad-args": lambda m, T: m.max(T(X), "a"),
    "var.bad-args": lambda m, T: m.var(T(X), "a"),
    "sort.method.bad-kwarg": lambda m, T: T(X).sort(dims=0),
    "argsort.out.dtype": lambda m, T: m.argsort(T(X), stable=True, out=m.empty(0)),
    "argsort.out.unstable": lambda m, T: m.argsort(T(X), 0, out=m.empty(0, dtype=m.int64)),
    "argsort.stable-none": lambda m, T: m.argsort(T(X), stable=None),
    "argsort.dim": lambda m, T: m.argsort(T(X), dim=2),
    "msort.out.dtype": lambda m, T: m.msort(T(X), out=m.empty(0, dtype=m.int64)),
    "diff.zero-d": lambda m, T: m.diff(T(ZERO_D)),
    "diff.negative-n": lambda m, T: m.diff(T(X), n=-1),
    "diff.prepend-dims": lambda m, T: m.diff(T(X), prepend=T(X[0])),
    "diff.append-size": lambda m, T: m.diff(T(X), append=T(X[:2, :1])),
    "diff.out.n0.dtype": lambda m, T: m.diff(T(X), n=0, out=m.empty(0, dtype=m.int64)),
    "diff.out.cast": lambda m, T: m.diff(T(X), out=m.empty(0, dtype=m.int64)),
    "diff.bad-n": lambda m, T: m.diff(T(X), "a"),
    "msort.zero-d.out": lambda m, T: m.msort(T(ZERO_D), dim=0),
}


def _compare(mine, theirs, path="result"):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, dc.Tensor), path
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], path
        assert tuple(mine.shape) == tuple(theirs.shape), path
        assert tuple(mine.stride()) == tuple(theirs.stride()), path
        np.testing.assert_allclose(np.asarray(mine._data, dtype=np.float64) if mine.dtype != dc.bool
                                   else mine._data, theirs.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   equal_nan=True, err_msg=path)
    elif isinstance(theirs, tuple):
        assert isinstance(mine, tuple) and len(mine) == len(theirs), path
        if type(theirs).__module__ == "torch.return_types":
            assert type(mine).__name__ == type(theirs).__name__, path
            assert type(mine).__module__ == "dispatchcore.return_types"
        for i, (a, b) in enumerate(zip(mine, theirs)):
            _compare(a, b, f"{path}[{i}]")
    else:
        assert mine == theirs, path


@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction_matches_torch(name):
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = CASES[name](torch, _lib(torch))
    with warnings.catch_warnings(record=True) as mine_warned:
        warnings.simplefilter("always")
        mine = CASES[name](dc, _lib(dc))
    _compare(mine, theirs)
    def texts(caught):  # torch's UserWarnings, without the C++ location torch appends
        return [str(w.message).split(" (Triggered")[0] for w in caught if issubclass(w.category, UserWarning)]

    assert texts(mine_warned) == texts(theirs_warned)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_reduction_error_matches_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch, _lib(torch))
    with pytest.raises(type(theirs.value)) as mine:
        ERRORS[name](dc, _lib(dc))
    assert str(mine.value) == str(theirs.value)


def test_too_few_elements_warn_as_torch_and_give_nan():
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        assert np.isnan(dc.var(dc.tensor([1.0])).item())
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom is <= 0"):
        assert dc.std(dc.tensor([1.0, 2.0]), correction=3).item() == INF


def test_return_types_print_like_torchs():
    x = np.array([[1.0, 3.0]], np.float32)
    mine, theirs = repr(dc.max(dc.tensor(x), 1)), repr(torch.max(torch.tensor(x), 1))
    assert mine == theirs.replace("torch.return_types", "dispatchcore.return_types")


# --- gradients -------------------------------------------------------------------------------------------
G = RNG.standard_normal((3, 4))
G_ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 1.0], [2.0, -0.5, 1.0, 4.0]])
G_TIES = np.array([[1.0, 2.0, 2.0, 0.5], [3.0, 3.0, -1.0, -1.0], [0.0, 1.0, 2.0, 3.0]])

GRADS = {  # name: (input, function of (m, x), node name of the output, gradgradcheck)
    "amin": (G, lambda m, x: m.amin(x, 1), "AminBackward0", True),
    "amin.ties": (G_TIES, lambda m, x: m.amin(x, 1), "AminBackward0", False),
    "min": (G, lambda m, x: m.min(x), "MinBackward1", True),
    "min.ties": (G_TIES, lambda m, x: x.min(), "MinBackward1", False),
    "min.dim": (G, lambda m, x: m.min(x, 1)[0], "MinBackward0", True),
    "min.dim.keepdim": (G, lambda m, x: m.min(x, 0, True).values, "MinBackward0", True),
    "prod": (G, lambda m, x: m.prod(x), "ProdBackward0", True),
    "prod.zeros": (G_ZEROS, lambda m, x: m.prod(x), "ProdBackward0", False),
    "prod.dim": (G, lambda m, x: m.prod(x, 1), "ProdBackward1", True),
    "prod.dim.zeros": (G_ZEROS, lambda m, x: m.prod(x, 1, True), "ProdBackward1", False),
    "prod.dim0.zeros": (G_ZEROS, lambda m, x: m.prod(x, 0), "ProdBackward1", False),
    "var": (G, lambda m, x: m.var(x), "VarBackward0", True),
    "var.dim": (G, lambda m, x: m.var(x, 1, correction=0), "VarBackward0", True),
    "std": (G, lambda m, x: m.std(x, (0,), keepdim=True), "StdBackward0", True),
    "var_mean": (G, lambda m, x: m.var_mean(x, 1)[0], "VarMeanBackward0", True),
    "var_mean.mean": (G, lambda m, x: m.var_mean(x, 0, keepdim=True)[1], "VarMeanBackward0", True),
    "std_mean": (G, lambda m, x: m.std_mean(x)[0], "StdMeanBackward0", True),
    "std_mean.mean": (G, lambda m, x: m.std_mean(x, 1)[1], "StdMeanBackward0", True),
    "cumsum": (G, lambda m, x: m.cumsum(x, 1), "CumsumBackward0", True),
    "cumsum.dim0": (G, lambda m, x: m.cumsum(x, -2), "CumsumBackward0", True),
    "cumprod": (G, lambda m, x: m.cumprod(x, 1), "CumprodBackward0", True),
    "cumprod.zeros": (G_ZEROS, lambda m, x: m.cumprod(x, 1), "CumprodBackward0", False),
    "sort": (G, lambda m, x: m.sort(x, 1)[0], "SortBackward0", True),
    "sort.stable": (G, lambda m, x: m.sort(x, stable=True, dim=0, descending=True).values, "SortBackward1", True),
    "topk": (G, lambda m, x: m.topk(x, 2)[0], "TopkBackward0", True),
    "topk.dim0": (G, lambda m, x: m.topk(x, 2, 0, largest=False).values, "TopkBackward0", True),
    "logsumexp": (G, lambda m, x: m.logsumexp(x, 1), "LogsumexpBackward0", True),
    "norm": (G, lambda m, x: m.norm(x), "LinalgVectorNormBackward0", True),
    "norm.p1": (G, lambda m, x: m.norm(x, 1, 1), "LinalgVectorNormBackward0", False),
    "norm.p3": (G, lambda m, x: m.norm(x, 3, 0), "LinalgVectorNormBackward0", True),
    "norm.p1.5": (G, lambda m, x: m.norm(x, 1.5), "LinalgVectorNormBackward0", True),
    "norm.inf": (G, lambda m, x: m.norm(x, float("inf"), 1), "LinalgVectorNormBackward0", False),
    "norm.0.5": (G, lambda m, x: m.norm(x, 0.5), "LinalgVectorNormBackward0", False),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_reduction_gradient_matches_torch(name):
    data, fn, node, smooth = GRADS[name]
    xt = torch.tensor(data, requires_grad=True)
    xd = dc.tensor(data, requires_grad=True)
    yt, yd = fn(torch, xt), fn(dc, xd)
    assert yd.grad_fn.name() == yt.grad_fn.name() == node
    weights = RNG.standard_normal(tuple(yt.shape))
    (yt * torch.tensor(weights)).sum().backward()
    (yd * dc.tensor(weights)).sum().backward()
    np.testing.assert_allclose(xd.grad._data, xt.grad.numpy(), rtol=1e-6, atol=1e-9)
    if smooth:
        assert gradcheck(lambda x: fn(dc, x), (dc.tensor(data, requires_grad=True),))
        assert gradgradcheck(lambda x: fn(dc, x), (dc.tensor(data, requires_grad=True),))


@pytest.mark.parametrize("name", ["any", "all", "argmin", "count_nonzero"])
def test_nondifferentiable_outputs_do_not_require_grad(name):
    x = dc.tensor(G, requires_grad=True)
    assert not getattr(dc, name)(x).requires_grad


def test_sort_default_overload_records_sortbackward0_as_torch():
    for m in (torch, dc):
        x = m.tensor(G, requires_grad=True)
        assert m.ops.aten.sort.default(x)[0].grad_fn.name() == "SortBackward0"


def test_out_variants_refuse_autograd_as_torch():
    for m in (torch, dc):
        x = m.tensor(G, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"cumsum\(\): functions with out=\.\.\. arguments don't support"):
            m.cumsum(x, 0, out=m.empty(0, dtype=m.float64))


def test_meta_results_have_cpus_geometry():
    cases = [
        lambda m, x: m.amin(x, 1), lambda m, x: m.min(x, 0), lambda m, x: m.prod(x, 1, dtype=m.float64),
        lambda m, x: m.var_mean(x, 0), lambda m, x: m.cumsum(x, 1), lambda m, x: m.sort(x, 0),
        lambda m, x: m.topk(x, 2), lambda m, x: m.logsumexp(x, 1), lambda m, x: m.norm(x, 2, 1),
        lambda m, x: m.any(x, (0, 1)), lambda m, x: m.count_nonzero(x, 1), lambda m, x: m.argmin(x, 1, True),
    ]
    for case in cases:
        cpu = case(dc, dc.tensor(X).t())
        meta = case(dc, dc.empty((3, 4), device="meta").t())
        for c, mt in zip(cpu if isinstance(cpu, tuple) else (cpu,), meta if isinstance(meta, tuple) else (meta,)):
            assert (tuple(mt.shape), mt.stride(), mt.dtype) == (tuple(c.shape), c.stride(), c.dtype)


SORTING_CALLS = {
    "argsort": lambda m, x: m.argsort(x, 0, True),
    "argsort.stable": lambda m, x: m.argsort(x, stable=True),
    "argsort.stable.out": lambda m, x: m.argsort(x, stable=True, out=m.empty(0, dtype=m.int64)),
    "msort": lambda m, x: x.msort(),
    "msort.out": lambda m, x: m.msort(x, out=m.empty(0)),
    "diff.n2": lambda m, x: m.diff(x, 2, 0),
    "diff.prepend": lambda m, x: x.diff(prepend=x),
    "diff.out.n2": lambda m, x: m.diff(x, n=2, out=m.empty(0)),
    "diff.n0": lambda m, x: m.diff(x, n=0),
}


@pytest.mark.parametrize("name", sorted(SORTING_CALLS))
def test_composites_over_sort_and_diff_dispatch_torchs_calls(name, torch_ops):
    """They decompose above the Python key: a mode sees ``sort`` (and the scratch ``empty`` of an
    out= form), or ``diff``'s ``cat``, ``slice`` and ``sub`` calls, in torch's order."""
    x, y = torch.tensor(X), dc.tensor(X)
    theirs = torch_ops(lambda: SORTING_CALLS[name](torch, x))
    with dc.LoggingMode() as log:
        SORTING_CALLS[name](dc, y)
    assert [str(r.func) for r in log.records] == theirs


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_round_each_output_from_torchs_wider_running_value(op, dtype):
    """float32 (and complex64) scans run in double, half in float: every output as torch's, bit for bit."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((7, 300)) + (1j * rng.standard_normal((7, 300)) if dtype == "complex64" else 0)
    a = (a * 0.1 + 1).astype(dtype) if op == "cumprod" else a.astype(dtype)
    for dim in (0, 1):
        mine, theirs = getattr(dc, op)(dc.tensor(a), dim), getattr(torch, op)(torch.tensor(a), dim)
        assert mine.numpy().tobytes() == theirs.numpy().tobytes()


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_a_scan_to_a_narrower_dtype_rounds_its_input_there_first(op):
    cases = (([2**24 + 1, 3], "float32"), ([1.0, 2**-24 + 2**-50], "float32"), ([1.0, 2**-11 + 2**-30], "float16"))
    for values, dtype in cases:
        source = "float64" if isinstance(values[0], float) else "int64"
        mine = getattr(dc, op)(dc.tensor(np.array(values, source)), 0, dtype=getattr(dc, dtype))
        theirs = getattr(torch, op)(torch.tensor(np.array(values, source)), 0, dtype=getattr(torch, dtype))
        assert mine.numpy().tobytes() == theirs.numpy().tobytes()
