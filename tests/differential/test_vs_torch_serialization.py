"""``save``/``load`` against torch: files written by one library load in the other, storage sharing kept."""

from __future__ import annotations

import collections
import io

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def _bytes(save, obj) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _same_tensor(mine, theirs):
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert mine.stride() == theirs.stride()
    assert mine.storage_offset() == theirs.storage_offset()
    assert mine.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())


def _payload(lib):
    x = lib.arange(12.0).reshape(3, 4)
    return {"x": x, "row": x[1], "col": x[:, 2], "t": x.t(), "half": lib.ones(3, dtype=lib.float16),
            "ints": lib.tensor([1, -2], dtype=lib.int32), "flags": lib.tensor([True, False]),
            "w": lib.zeros(2, requires_grad=True), "n": 3, "f": 0.25, "s": "text", "none": None,
            "nested": [(1, 2.0), {"k": lib.tensor(7)}], "od": collections.OrderedDict(a=lib.tensor([1.5])),
            "dtype": lib.float64, "size": lib.Size([2, 3])}


def _check(mine, theirs):
    for key, value in theirs.items():
        got = mine[key]
        if isinstance(value, torch.Tensor):
            _same_tensor(got, value)
        elif key == "nested":
            assert got[0] == value[0]
            _same_tensor(got[1]["k"], value[1]["k"])
        elif key == "od":
            assert type(got) is collections.OrderedDict
            _same_tensor(got["a"], value["a"])
        elif key == "dtype":
            assert got is dc.float64
        else:
            assert got == value, key


def test_torch_loads_what_dispatchcore_saves():
    loaded = torch.load(io.BytesIO(_bytes(dc.save, _payload(dc))), weights_only=True)
    mine = dc.load(io.BytesIO(_bytes(dc.save, _payload(dc))))
    _check(mine, loaded)
    loaded["x"][1, 0] = 100.0  # views saved together still share storage in torch
    assert loaded["row"][0].item() == 100.0 and loaded["t"][0, 1].item() == 100.0


def test_dispatchcore_loads_what_torch_saves():
    mine = dc.load(io.BytesIO(_bytes(torch.save, _payload(torch))))
    _check(mine, _payload(torch))
    mine["x"][1, 0] = 100.0
    assert mine["row"][0].item() == 100.0 and mine["col"][1].item() == 6.0


def test_torch_module_and_optimizer_state_dicts_load():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, foreach=False)
    model(torch.ones(5, 3)).sum().backward()
    opt.step()
    state = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 4,
             "param": torch.nn.Parameter(torch.ones(2))}
    mine = dc.load(io.BytesIO(_bytes(torch.save, state)))
    assert list(mine["model"]) == list(state["model"])
    for key, value in state["model"].items():
        _same_tensor(mine["model"][key], value)
    assert mine["opt"]["param_groups"] == state["opt"]["param_groups"]
    for pid, fields in state["opt"]["state"].items():
        for field, value in fields.items():
            _same_tensor(mine["opt"]["state"][pid][field], value)
    assert isinstance(mine["param"], dc.nn.Parameter) and mine["param"].requires_grad


def test_dispatchcore_optimizer_state_dict_round_trips_through_torch():
    w = dc.ones(3, requires_grad=True)
    opt = dc.optim.Adam([w], lr=0.1, amsgrad=True)
    w.grad = dc.tensor([0.1, -0.2, 0.3])
    opt.step()
    loaded = torch.load(io.BytesIO(_bytes(dc.save, opt.state_dict())), weights_only=True)
    tw = torch.ones(3, requires_grad=True)
    topt = torch.optim.Adam([tw], lr=0.1, amsgrad=True)
    topt.load_state_dict(loaded)
    assert topt.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    for field, value in opt.state_dict()["state"][0].items():
        _same_tensor(value, topt.state_dict()["state"][0][field])
