"""Views, version counters and the ADInplaceOrView key, end to end (ADInplaceOrView, VariableTypeManual.cpp)."""

from __future__ import annotations

import pytest

import dispatchcore as dc


def test_view_shares_storage_base_and_version_counter():
    x = dc.arange(6.0)
    v = x.view(2, 3)
    assert v._base is x
    v[0, 0] = 100.0
    assert x[0].item() == 100.0
    assert x._version == v._version == 1


def test_view_of_view_records_the_root_base():
    x = dc.arange(12.0)
    y = x.view(3, 4)
    z = y[1]
    assert z._base is x and y._base is x


@pytest.mark.parametrize("make_view", [
    lambda x: x.view(-1), lambda x: x.t(), lambda x: x.transpose(0, 1), lambda x: x.permute(1, 0),
    lambda x: x[0], lambda x: x[:, 1:], lambda x: x.unsqueeze(0), lambda x: x.expand(2, 2, 3),
    lambda x: x.as_strided((2,), (1,)), lambda x: x[None], lambda x: x.squeeze(),
])
def test_every_view_op_records_base_and_shares_version(make_view):
    x = dc.ones(2, 3)
    v = make_view(x)
    assert v._base is x
    x.add_(1.0)
    assert v._version == x._version == 1


@pytest.mark.parametrize("inplace", [
    lambda t: t.add_(1.0), lambda t: t.mul_(2.0), lambda t: t.zero_(), lambda t: t.fill_(3.0),
    lambda t: t.relu_(), lambda t: t.copy_(dc.zeros(3)), lambda t: t.clamp_(0.0, 1.0),
])
def test_inplace_ops_bump_the_version_once(inplace):
    t = dc.ones(3)
    inplace(t)
    assert t._version == 1


def test_out_variant_bumps_the_version_of_out():
    out = dc.zeros(3)
    dc.ops.aten.add.out(dc.ones(3), dc.ones(3), out=out)
    assert out._version == 1


def test_functional_ops_fall_through_adinplaceorview_and_do_not_bump():
    t = dc.ones(3)
    _ = t + t
    assert t._version == 0
    assert "ADInplaceOrView: fallthrough" in dc.dump_table("aten::add.Tensor")
    assert "ADInplaceOrView: registered at" in dc.dump_table("aten::add_.Tensor")


def test_below_adinplaceorview_guard_skips_version_bump_and_view_tracking():
    t = dc.ones(4)
    with dc.AutoDispatchBelowADInplaceOrView():
        t.add_(1.0)
        v = t.view(2, 2)
    assert t._version == 0
    assert v._base is None


def test_below_autograd_guard_still_runs_adinplaceorview():
    t = dc.ones(4)
    with dc.AutoDispatchBelowAutograd():
        t.add_(1.0)
        v = t.view(2, 2)
    assert t._version == 1 and v._base is t


def test_no_grad_still_tracks_views_and_versions():
    t = dc.ones(4)
    with dc.no_grad():
        t.add_(1.0)
        v = t.view(2, 2)
    assert t._version == 1 and v._base is t


def test_detach_shares_the_version_counter_but_not_the_base():
    t = dc.ones(3)
    d = t.detach()
    d.add_(1.0)
    assert t._version == 1 and d._base is None


def test_inference_tensors_have_no_version_counter_and_cannot_be_mutated_outside():
    with dc.inference_mode():
        t = dc.ones(3)
        t.add_(1.0)  # allowed inside inference mode
    assert t.is_inference()
    assert dc.dispatch_keys(t) == dc.DispatchKeySet(["CPU", "AutocastCPU"])
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        _ = t._version
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        t.add_(1.0)
    assert (t + 1).is_inference() is False  # functional ops outside make normal tensors


def test_storage_offset_and_strides_of_views():
    x = dc.arange(12.0).view(3, 4)
    assert x[1].storage_offset() == 4
    assert x[:, 1].stride() == (4,)
    assert x.t().stride() == (1, 4)
    assert not x.t().is_contiguous()
