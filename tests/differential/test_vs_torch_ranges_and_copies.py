"""Ranges and copies as torch 2.13 builds them: ``arange``/``linspace`` through their ``out=``
overloads, ``copy_`` through ``copy_stub``/``_copy_from``, ``_to_copy`` through BackendSelect.

Each case runs the same call on torch and on dispatchcore and compares values, dtype, shape,
strides, warnings and errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def _run(lib, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(lib)
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            return ("error", type(e).__name__, str(e).splitlines()[0]), []
    texts = [str(w.message).split(" (Triggered internally")[0] for w in caught if w.category is UserWarning]
    if isinstance(result, (torch.Tensor, dc.Tensor)):
        return (str(result.dtype).rpartition(".")[2], tuple(result.shape), tuple(result.stride()),
                np.asarray(result.tolist()).tolist()), texts
    return result, texts


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
}


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
