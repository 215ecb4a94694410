"""Ranges and copies as torch 2.13 builds them: ``arange``/``linspace`` through their ``out=``
overloads, ``copy_`` through ``copy_stub``/``_copy_from``, ``_to_copy`` through BackendSelect.

Each case runs the same call on torch and on dispatchcore and compares values, dtype, shape,
strides, warnings and errors.
"""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential


def _run(lib, fn):
    return outcome(lib, fn)


RANGES = {
    "arange-end-float": lambda t: t.arange(2.5),
    "arange-start-end": lambda t: t.arange(-2, 3),
    "arange-start-end-step": lambda t: t.arange(10, 0, -3),
    "arange-out-resized-warns": lambda t: t.arange(0, 5, out=t.empty(3)),
    "arange-out-empty-no-warning": lambda t: t.arange(4, out=t.empty(0, dtype=t.int32)),
    "arange-out-same-numel-keeps-shape": lambda t: t.arange(0, 4, out=t.empty(2, 2)),
    "arange-out-int32-from-float-steps": lambda t: t.arange(0, 5.5, 0.5, out=t.empty(0, dtype=t.int32)),
    "arange-out-dtype-mismatch": lambda t: t.arange(3, out=t.empty(3), dtype=t.float64),
    "arange-out-requires-grad": lambda t: t.arange(3, out=t.empty(3, requires_grad=True)),
    "linspace-out-resized-silently": lambda t: t.linspace(0, 1, 5, out=t.empty(3)),
    "linspace-out-kept-shape": lambda t: t.linspace(0, 1, 6, out=t.empty(2, 3)),
    "linspace-out-int64": lambda t: t.linspace(0, 1, 5, out=t.empty(5, dtype=t.int64)),
    "linspace-negative-steps": lambda t: t.linspace(0, 1, -1),
    "linspace-complex-into-float": lambda t: t.linspace(0j, 1, 3, dtype=t.float32),
    # eye: an empty tensor, then eye.out / eye.m_out resize (without a warning) and fill it
    "eye": lambda t: t.eye(3), "eye-rectangular-int64": lambda t: t.eye(2, 3, dtype=t.int64),
    "eye-tall-bool": lambda t: t.eye(3, 2, dtype=t.bool), "eye-empty": lambda t: t.eye(0),
    "eye-keywords": lambda t: t.eye(n=2, m=3),
    "eye-requires-grad": lambda t: t.eye(2, requires_grad=True).requires_grad,
    "eye-integral-requires-grad": lambda t: t.eye(2, dtype=t.int64, requires_grad=True),
    "eye-negative-n": lambda t: t.eye(-1), "eye-negative-m": lambda t: t.eye(2, -1),
    "eye-out-resized-silently": lambda t: t.eye(2, 3, out=t.empty(5)),
    "eye-out-transposed-kept": lambda t: t.eye(2, out=t.zeros(2, 2).t()),
    "eye-out-dtype-mismatch": lambda t: t.eye(2, out=t.empty(4, dtype=t.float64), dtype=t.float32),
    "eye-out-requires-grad": lambda t: t.eye(2, out=t.empty(4, requires_grad=True)),
    "eye-float-n": lambda t: t.eye(2.0), "eye-bool-n": lambda t: t.eye(True), "eye-str-m": lambda t: t.eye(2, "a"),
    # logspace: an empty tensor, then logspace.out (torch's loop, std::pow(double, x))
    "logspace": lambda t: t.logspace(0, 2, 3), "logspace-base": lambda t: t.logspace(-1, 1, 5, base=2),
    "logspace-float64": lambda t: t.logspace(-1, 1, 7, base=3, dtype=t.float64),
    "logspace-half": lambda t: t.logspace(-1, 1, 5, base=3, dtype=t.float16),
    "logspace-int-truncates-the-ends": lambda t: t.logspace(0.5, 2.7, 4, dtype=t.int64),
    "logspace-one-step": lambda t: t.logspace(0, 1, 1, base=2.5), "logspace-empty": lambda t: t.logspace(0, 1, 0),
    "logspace-complex": lambda t: t.logspace(0j, 1, 3),
    "logspace-negative-base": lambda t: t.logspace(0, 1, 3, base=-2),
    "logspace-negative-steps": lambda t: t.logspace(0, 1, -1),
    "logspace-bool-refused": lambda t: t.logspace(0, 2, 3, dtype=t.bool),
    "logspace-overflow-inf": lambda t: t.logspace(300, 400, 3),
    "logspace-out-resized": lambda t: t.logspace(0, 1, 3, out=t.empty(5)),
    "logspace-out-int32": lambda t: t.logspace(0, 1, 3, out=t.empty(0, dtype=t.int32)),
    "logspace-keywords": lambda t: t.logspace(start=0, end=1, steps=2, base=4.0),
    "logspace-requires-grad": lambda t: t.logspace(0, 2, 3, requires_grad=True).requires_grad,
    "logspace-meta": lambda t: t.logspace(0, 1, 3, device="meta"),
    "logspace-meta-negative-steps": lambda t: t.logspace(0, 1, -1, device="meta"),
    # tril_indices/triu_indices: CPU kernels (int32/int64 only); out= is the generated composite
    "tril_indices-square": lambda t: t.tril_indices(4, 4),
    "triu_indices-square": lambda t: t.triu_indices(4, 4),
    "tril_indices-wide-offset": lambda t: t.tril_indices(3, 5, 2),
    "triu_indices-tall-offset": lambda t: t.triu_indices(5, 3, -1),
    "tril_indices-below-everything": lambda t: t.tril_indices(3, 3, -5),
    "triu_indices-past-everything": lambda t: t.triu_indices(3, 3, 7),
    "tril_indices-no-rows": lambda t: t.tril_indices(0, 3),
    "triu_indices-no-columns": lambda t: t.triu_indices(3, 0),
    "tril_indices-keywords-int32": lambda t: t.tril_indices(row=3, col=2, offset=-1, dtype=t.int32),
    "tril_indices-negative-row": lambda t: t.tril_indices(-1, 3),
    "triu_indices-negative-col": lambda t: t.triu_indices(3, -2),
    "tril_indices-float-refused": lambda t: t.tril_indices(3, 3, dtype=t.float32),
    "triu_indices-int16-refused": lambda t: t.triu_indices(3, 3, dtype=t.int16),
    "tril_indices-requires-grad-refused": lambda t: t.tril_indices(2, 2, requires_grad=True),
    "tril_indices-no-out": lambda t: t.tril_indices(2, 2, out=t.empty(0, dtype=t.int64)),
    "tril_indices-out-int32-resized": lambda t: t.ops.aten.tril_indices.out(3, 3, 1, out=t.empty(0, dtype=t.int32)),
    "triu_indices-out-keeps-strides": lambda t: t.ops.aten.triu_indices.out(3, 3, out=t.empty(6, 2, dtype=t.int64).t()),
    "triu_indices-out-float-refused": lambda t: t.ops.aten.triu_indices.out(3, 3, out=t.empty(0)),
}


@pytest.mark.parametrize("name", sorted(RANGES))
def test_ranges_match_torch(name):
    assert _run(dc, RANGES[name]) == _run(torch, RANGES[name])


COPIES = {
    "to-meta-then-back-refused": lambda t: t.ones(2).to("meta").to("cpu"),
    "to-meta-keeps-strides": lambda t: t.ones(2, 3).t().to("meta").stride(),
    "to-dtype-non-dense-infers-strides": lambda t: t.ones(4, 6)[:, ::2].t().to(t.float64),
    "to-layout-refused": lambda t: t.ops.aten._to_copy(t.ones(2), layout=t.sparse_coo),
    "copy-into-meta-broadcast-refused": lambda t: t.empty(3, device="meta").copy_(t.ones(2, 3)),
    "copy-into-meta-ignored": lambda t: t.empty(2, 3, device="meta").copy_(t.ones(3)).shape,
    "copy-out-of-meta-refused": lambda t: t.ones(3).copy_(t.empty(3, device="meta")),
    "copy-broadcast-refused": lambda t: t.ones(3).copy_(t.ones(2, 3)),
    "copy-casts": lambda t: t.zeros(3, dtype=t.int32).copy_(t.tensor([1.7, -2.5, 3.2])),
    "copy_from-has-no-cpu-kernel": lambda t: t.ops.aten._copy_from(t.ones(2), t.ones(2)),
    # the out= kernels torch generates (CompositeExplicitAutograd): resize, then out's dtype must be exact
    "generated-out-dtype-exact": lambda t: t.ops.aten.select_backward.out(t.ones(2), [2, 2], 0, 0,
                                                                          out=t.empty(0, dtype=t.float64)),
    "generated-out-resizes-before-the-dtype-check": lambda t: _resized_then_refused(t),
    "generated-out-same-dtype": lambda t: t.ops.aten.put.out(t.zeros(3), t.tensor([1]), t.ones(1), out=t.empty(0)),
    "generated-out-masked_fill": lambda t: t.ops.aten.masked_fill.Scalar_out(t.ones(3), t.tensor([True, False, True]),
                                                                             2.0, out=t.empty(0, dtype=t.int64)),
    "generated-out-index_put": lambda t: t.ops.aten.index_put.out(t.ones(3), [t.tensor([0])], t.ones(1),
                                                                  out=t.empty(0, dtype=t.float64)),
}


def _resized_then_refused(t):
    out = t.empty(0, dtype=t.int64)
    try:
        t.ops.aten.put.out(t.zeros(2, 3), t.tensor([1]), t.ones(1), out=out)
    except RuntimeError as e:
        return str(e), tuple(out.shape)
    return None


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copies_match_torch(name):
    ours, theirs = _run(dc, COPIES[name]), _run(torch, COPIES[name])
    if name == "copy_from-has-no-cpu-kernel":  # both refuse (DispatchError is a NotImplementedError)
        assert theirs[0][:2] == ("error", "NotImplementedError") and ours[0][:2] == ("error", "DispatchError")
        assert ours[0][2].startswith("Could not run 'aten::_copy_from' with arguments from the 'CPU' backend")
        return
    assert ours == theirs


def test_to_copy_dispatches_on_the_higher_backend_of_self_and_the_target_device():
    """BackendSelect joins the target device's key to self's: a cpu tensor sent to meta runs on Meta."""
    with dc.trace() as t:
        dc.ones(2).to("meta")
    hops = [(h.op, h.key.name) for h in t.hops() if h.op == "aten::_to_copy"]
    assert hops == [("aten::_to_copy", "AutogradCPU"), ("aten::_to_copy", "BackendSelect"),
                    ("aten::_to_copy", "Meta")]
    keys = torch._C._dispatch_keys(torch.ones(2)) | torch._C.DispatchKeySet(torch._C.DispatchKey.Meta)
    assert "Meta" in str(keys)  # torch's BackendSelect computes the same union


def _calls(lib, fn):
    """The operators a dispatch mode sees while ``fn(lib, out)`` runs."""
    out = lib.empty(5)
    return mode_calls(lib, lambda: fn(lib, out))


@pytest.mark.parametrize("call", [lambda t, o: t.eye(3), lambda t, o: t.eye(2, 3), lambda t, o: t.eye(2, out=o),
                                  lambda t, o: t.eye(2, 3, out=o)])
def test_eye_reaches_a_mode_as_torchs_overload(call):
    assert _calls(dc, call) == _calls(torch, call)


@pytest.mark.parametrize("call", [lambda t, o: t.logspace(0, 2, 3), lambda t, o: t.logspace(0, 2, 3, base=2.0),
                                  lambda t, o: t.logspace(0, 2, 3, 10.0, dtype=t.float64),
                                  lambda t, o: t.logspace(0, 1, 5, out=o)])
def test_logspace_reaches_a_mode_as_torchs_call(call):
    """base is passed only when it is not 10 (torch's binding leaves a default out)."""
    assert _calls(dc, call) == _calls(torch, call)


@pytest.mark.parametrize("call", [lambda t, o: t.tril_indices(3, 3), lambda t, o: t.triu_indices(3, 4, 1),
                                  lambda t, o: t.tril_indices(3, 3, 0, dtype=t.int64),
                                  lambda t, o: t.triu_indices(2, 2, dtype=t.int32),
                                  lambda t, o: t.ops.aten.tril_indices.out(2, 3, out=o.new_empty(0, dtype=t.int64))])
def test_tril_and_triu_indices_reach_a_mode_as_torchs_call(call):
    """The binding drops an offset and a dtype equal to the schema's defaults, as torch's does."""
    assert _calls(dc, call) == _calls(torch, call)


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("row,col,offset", [(0, 0, 0), (1, 1, 0), (4, 4, 0), (3, 6, 2), (6, 3, -2), (5, 2, 9),
                                            (2, 5, -9), (7, 7, -3), (4, 9, 5)])
def test_tril_and_triu_indices_sizes_on_meta_match_torch(name, row, col, offset):
    """The meta kernel counts the indices without making them (torch's get_tril_size)."""
    ours = getattr(dc, name)(row, col, offset, device="meta")
    theirs = getattr(torch, name)(row, col, offset, device="meta")
    assert (tuple(ours.shape), tuple(ours.stride()), str(ours.dtype)[13:]) == \
        (tuple(theirs.shape), tuple(theirs.stride()), str(theirs.dtype)[6:])
    assert tuple(ours.shape) == tuple(getattr(dc, name)(row, col, offset).shape)


META_INDICES = {
    "negative-row": lambda t: t.tril_indices(-1, 2, device="meta"),
    "negative-col": lambda t: t.triu_indices(2, -1, device="meta"),
    "float": lambda t: t.tril_indices(2, 2, dtype=t.float32, device="meta"),
    "out-int32": lambda t: str(t.ops.aten.triu_indices.out(3, 3, out=t.empty(0, dtype=t.int32, device="meta")).dtype
                               )[-5:],
    "out-bool-refused": lambda t: t.ops.aten.tril_indices.out(3, 3, out=t.empty(0, dtype=t.bool, device="meta")),
}


@pytest.mark.parametrize("name", sorted(META_INDICES))
def test_tril_and_triu_indices_on_meta_check_as_torchs_meta_kernels(name):
    assert _run(dc, META_INDICES[name]) == _run(torch, META_INDICES[name])
