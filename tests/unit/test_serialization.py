"""``save``/``load``: round trips, storage sharing, the file layout, and refusal of code or tampered files."""

from __future__ import annotations

import collections
import io
import pickle
import zipfile

import pytest

import dispatchcore as dc


def _round_trip(obj):
    buf = io.BytesIO()
    dc.save(obj, buf)
    return dc.load(io.BytesIO(buf.getvalue()))


def test_round_trip_keeps_values_dtypes_and_containers():
    obj = {"f": dc.tensor([1.5, -2.0]), "i": dc.tensor([[1, 2]], dtype=dc.int16), "b": dc.tensor([True]),
           "h": dc.ones(2, dtype=dc.float16), "scalar": dc.tensor(3.0), "empty": dc.zeros(0, 3),
           "list": [1, 2.5, "s", None, True], "tuple": (dc.tensor([1]), "x"),
           "od": collections.OrderedDict(w=dc.ones(2)), "dtype": dc.int32, "size": dc.Size([2, 3])}
    back = _round_trip(obj)
    for key in ("f", "i", "b", "h", "scalar", "empty"):
        assert back[key].dtype is obj[key].dtype and back[key].tolist() == obj[key].tolist()
        assert tuple(back[key].shape) == tuple(obj[key].shape)
    assert back["list"] == obj["list"] and back["tuple"][1] == "x" and back["tuple"][0].tolist() == [1]
    assert type(back["od"]) is collections.OrderedDict and back["od"]["w"].tolist() == [1.0, 1.0]
    assert back["dtype"] is dc.int32 and back["size"] == dc.Size([2, 3])


def test_views_saved_together_share_storage_after_loading():
    x = dc.arange(6.0).reshape(2, 3)
    back = _round_trip({"x": x, "row": x[1], "t": x.t()})
    assert back["row"].storage_offset() == 3 and back["t"].stride() == (1, 3)
    back["x"][1, 0] = 100.0
    assert back["row"][0].item() == 100.0 and back["t"][0, 1].item() == 100.0


def test_the_same_tensor_twice_loads_as_one_object():
    x = dc.ones(2)
    back = _round_trip([x, x])
    assert back[0] is back[1]


def test_requires_grad_and_parameters_survive():
    w = dc.ones(2, requires_grad=True)
    p = dc.nn.Parameter(dc.zeros(3))
    back = _round_trip({"w": w, "p": p})
    assert back["w"].requires_grad and back["w"].is_leaf
    assert isinstance(back["p"], dc.nn.Parameter) and back["p"].requires_grad


def test_optimizer_state_dict_round_trip_restores_training_state():
    w = dc.ones(2, requires_grad=True)
    opt = dc.optim.Adam([w], lr=0.1)
    w.grad = dc.tensor([0.5, -0.5])
    opt.step()
    other = dc.optim.Adam([dc.ones(2, requires_grad=True)], lr=0.5)
    other.load_state_dict(_round_trip(opt.state_dict()))
    assert other.param_groups[0]["lr"] == 0.1 and other.param_groups[0]["betas"] == (0.9, 0.999)
    state = next(iter(other.state.values()))
    assert state["step"].item() == 1.0 and state["exp_avg"].tolist() == opt.state[w]["exp_avg"].tolist()


def test_files_use_torchs_zip_layout(tmp_path):
    path = tmp_path / "ckpt.pt"
    dc.save({"x": dc.ones(2)}, path)
    names = zipfile.ZipFile(path).namelist()
    assert {"archive/data.pkl", "archive/byteorder", "archive/version", "archive/data/0"} <= set(names)
    assert dc.load(path)["x"].tolist() == [1.0, 1.0]


def _archive(data_pkl: bytes, extra: dict[str, bytes] | None = None) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", data_pkl)
        for name, payload in (extra or {}).items():
            z.writestr(f"archive/{name}", payload)
    buf.seek(0)
    return buf


class _Exploit:
    def __reduce__(self):
        import os

        return os.system, ("echo pwned",)


def test_load_never_resolves_globals_outside_the_allow_list():
    with pytest.raises(pickle.UnpicklingError, match="refusing the global .*system"):
        dc.load(_archive(pickle.dumps(_Exploit(), protocol=2)))


def test_tampered_and_foreign_files_raise_clear_errors():
    with pytest.raises(RuntimeError, match="failed finding central directory"):
        dc.load(io.BytesIO(b"not a checkpoint at all"))
    with pytest.raises(RuntimeError, match="legacy"):
        dc.load(io.BytesIO(pickle.dumps({"a": 1}, protocol=2)))
    with pytest.raises(RuntimeError, match="no data.pkl"):
        dc.load(_no_pickle_archive())
    buf = io.BytesIO()
    dc.save({"x": dc.arange(4.0)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        records = {name: z.read(name) for name in z.namelist()}
    truncated = io.BytesIO()
    with zipfile.ZipFile(truncated, "w") as z:
        for name, payload in records.items():
            z.writestr(name, payload[:8] if name.endswith("data/0") else payload)
    truncated.seek(0)
    with pytest.raises(RuntimeError, match="has 8 bytes, expected 16"):
        dc.load(truncated)
    with pytest.raises(pickle.UnpicklingError, match="corrupted"):
        dc.load(_archive(records["archive/data.pkl"][:20]))


def _no_pickle_archive() -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/version", b"3\n")
    buf.seek(0)
    return buf
