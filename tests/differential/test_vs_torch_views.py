"""Views, `_base`, version counters and key sets against torch 2.13 on the same programs."""

from __future__ import annotations

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def _state(t, roots):
    """What we compare: values, shape, strides, offset, version, and which root is the base."""
    base = None if t._base is None else next(i for i, r in enumerate(roots) if r is t._base)
    return (t.tolist(), tuple(t.shape), tuple(t.stride()), t.storage_offset(), t._version, base)


PROGRAMS = {
    "view-then-inplace-on-base": lambda m, x: [x.view(2, 3), x.add_(1)],
    "inplace-on-view": lambda m, x: [x.view(2, 3).mul_(2)],
    "select-setitem": lambda m, x: [x.view(2, 3)[1].fill_(7)],
    "slice-of-transpose": lambda m, x: [x.view(2, 3).t()[1:]],
    "expand-unsqueeze": lambda m, x: [x[:3].unsqueeze(0).expand(2, 3)],
    "detach-shares-version": lambda m, x: [x.detach().add_(1), x],
    "as-strided-offset": lambda m, x: [x.as_strided((2, 2), (1, 2), 1)],
    "copy-into-view": lambda m, x: [x.view(3, 2)[:, 0].copy_(m.zeros(3))],
    "clone-is-not-a-view": lambda m, x: [x.clone().add_(1)],
    "reshape-contiguous-is-view": lambda m, x: [x.reshape(3, 2)],
    "reshape-noncontiguous-copies": lambda m, x: [x.view(2, 3).t().reshape(6)],
    "contiguous-of-contiguous-is-self": lambda m, x: [x.contiguous()],
    "chained-inplace": lambda m, x: [x.add_(1).mul_(2).sub_(1)],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_views_and_versions_match_torch(name):
    program = PROGRAMS[name]
    tx = torch.arange(6.0)
    dx = dc.arange(6.0)
    t_out = program(torch, tx)
    d_out = program(dc, dx)
    for t, d in zip(t_out, d_out):
        t_base = None if t._base is None else (0 if t._base is tx else "other")
        d_base = None if d._base is None else (0 if d._base is dx else "other")
        assert d.tolist() == t.tolist()
        assert tuple(d.shape) == tuple(t.shape)
        assert tuple(d.stride()) == tuple(t.stride())
        assert d.storage_offset() == t.storage_offset()
        assert d._version == t._version, f"version of {name}"
        assert d_base == t_base, f"_base of {name}"
    assert dx._version == tx._version
    assert dx.tolist() == tx.tolist()


@pytest.mark.parametrize("guard", ["no_grad", "below_autograd", "below_adinplaceorview"])
def test_guards_change_view_and_version_tracking_like_torch(guard):
    managers = {
        "no_grad": (torch.no_grad, dc.no_grad),
        "below_autograd": (torch._C._AutoDispatchBelowAutograd, dc.AutoDispatchBelowAutograd),
        "below_adinplaceorview": (torch._C._AutoDispatchBelowADInplaceOrView,
                                  dc.AutoDispatchBelowADInplaceOrView),
    }[guard]
    tx, dx = torch.ones(4), dc.ones(4)
    with managers[0]():
        tv = tx.view(2, 2)
        tx.add_(1)
    with managers[1]():
        dv = dx.view(2, 2)
        dx.add_(1)
    assert (dv._base is dx) == (tv._base is tx)
    assert dx._version == tx._version


def test_tensor_key_sets_match_torch():
    assert str(dc.dispatch_keys(dc.ones(2))) == str(torch._C._dispatch_keys(torch.ones(2)))
    assert str(dc.dispatch_keys(dc.ones(2, device="meta"))) == str(
        torch._C._dispatch_keys(torch.ones(2, device="meta")))
    with torch.inference_mode():
        t = torch.ones(2)
    with dc.inference_mode():
        d = dc.ones(2)
    assert str(dc.dispatch_keys(d)) == str(torch._C._dispatch_keys(t))
    assert int(dc.dispatch_keys(dc.ones(2).view(2))) == torch._C._dispatch_keys(torch.ones(2).view(2)).raw_repr()
