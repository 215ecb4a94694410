"""Writing into a tensor whose elements share memory, against torch 2.13.

``has_internal_overlap`` (``dispatchcore_backends/cpu/overlap.py``) against
``torch._debug_has_internal_overlap`` on strided geometries, and every in-place and ``out=``
kernel on an expanded tensor, on CPU and meta: the same error (or none), raised before anything
is written.
"""

from __future__ import annotations

import numpy as np
import pytest
from dispatchcore_backends.cpu.overlap import has_internal_overlap

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


GEOMETRIES = [
    ((2, 3), (0, 1)), ((2, 3), (3, 1)), ((3, 2), (1, 3)), ((1, 3), (0, 1)), ((3, 3), (1, 1)),
    ((2, 0), (0, 1)), ((2, 3), (1, 0)), ((4,), (2,)), ((2, 2), (4, 1)), ((2, 1, 3), (3, 7, 1)),
    ((), ()), ((5,), (0,)), ((1,), (0,)), ((2, 3), (6, 2)), ((2, 3, 4), (0, 4, 1)), ((3, 1), (1, 0)),
    ((2, 2), (1, 2)), ((2, 2), (2, 2)),
]


@pytest.mark.parametrize(("size", "stride"), GEOMETRIES, ids=str)
def test_has_internal_overlap_matches_torch(size, stride):
    expected = torch._debug_has_internal_overlap(torch.zeros(64).as_strided(size, stride))
    mine = has_internal_overlap(dc.zeros(64).as_strided(list(size), list(stride))._data)
    assert mine.value == expected


def _expanded(m, device, dtype=None):
    return m.ones(1, 3, device=device, dtype=dtype or m.float32).expand(2, 3)


WRITES = {
    "add_-number": lambda m, e, d: e.add_(1.0),
    "add_-tensor": lambda m, e, d: e.add_(m.ones(2, 3, device=d)),
    "add_-alpha": lambda m, e, d: e.add_(m.ones(2, 3, device=d), alpha=2),
    "sub_": lambda m, e, d: e.sub_(2),
    "mul_-number": lambda m, e, d: e.mul_(2),
    "mul_-tensor": lambda m, e, d: e.mul_(m.ones(3, device=d)),
    "div_": lambda m, e, d: e.div_(2),
    "pow_": lambda m, e, d: e.pow_(2),
    "pow_-tensor": lambda m, e, d: e.pow_(m.ones(2, 3, device=d)),
    "exp_": lambda m, e, d: e.exp_(),
    "neg_": lambda m, e, d: e.neg_(),
    "abs_": lambda m, e, d: e.abs_(),
    "sqrt_": lambda m, e, d: e.sqrt_(),
    "relu_": lambda m, e, d: e.relu_(),
    "sigmoid_": lambda m, e, d: e.sigmoid_(),
    "tanh_": lambda m, e, d: e.tanh_(),
    "clamp_": lambda m, e, d: e.clamp_(0, 1),
    "clamp_min_": lambda m, e, d: e.clamp_min_(0),
    "copy_": lambda m, e, d: e.copy_(m.ones(2, 3, device=d)),
    "copy_-broadcast": lambda m, e, d: e.copy_(m.ones(3, device=d)),
    "copy_-itself": lambda m, e, d: e.copy_(e),
    "fill_": lambda m, e, d: e.fill_(2),
    "zero_": lambda m, e, d: e.zero_(),
    "add-out": lambda m, e, d: m.add(m.ones(2, 3, device=d), 1, out=e),
    "add-out-tensors": lambda m, e, d: m.add(m.ones(2, 3, device=d), m.ones(2, 3, device=d), out=e),
    "mul-out": lambda m, e, d: m.mul(m.ones(2, 3, device=d), 2, out=e),
    "exp-out": lambda m, e, d: m.exp(m.ones(2, 3, device=d), out=e),
    "add_-wrong-shape": lambda m, e, d: e.add_(m.ones(3, 3, device=d)),
    "integer-add_-int": lambda m, e, d: _expanded(m, d, m.int64).add_(1),
    "integer-add_-float": lambda m, e, d: _expanded(m, d, m.int64).add_(1.5),
    "integer-abs_": lambda m, e, d: _expanded(m, d, m.int64).abs_(),
    "size-1-stride-0": lambda m, e, d: m.ones(3, device=d).as_strided((1, 3), (0, 1)).add_(1),
    "partial-overlap-is-too-hard": lambda m, e, d: m.ones(6, device=d).as_strided((3, 3), (1, 1)).add_(1),
    "transposed": lambda m, e, d: m.ones(3, 2, device=d).t().add_(1),
    "expanded-source": lambda m, e, d: m.ones(2, 3, device=d).add_(e),
    "empty-expanded": lambda m, e, d: m.ones(1, 0, device=d).expand(2, 0).add_(1),
    "row-of-expanded": lambda m, e, d: e[0].add_(1),
}


# torch's meta kernels for these are Python decompositions with texts of their own (not an overlap
# question): the meta backend gives the CPU kernels' texts
_META_TEXT_DIFFERS = {"add_-wrong-shape", "integer-add_-float"}


def _outcome(m, device, write):
    base = m.ones(1, 3, device=device)
    e = base.expand(2, 3)
    try:
        write(m, e, device)
        result = ("ok",)
    except Exception as err:  # noqa: BLE001 - compared across libraries
        result = (type(err).__name__, str(err))
    values = None if device == "meta" else base.tolist()  # unchanged after an error
    return result, values


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("write", sorted(WRITES))
def test_write_into_expanded_tensor_matches_torch(write, device):
    t_result, t_values = _outcome(torch, device, WRITES[write])
    d_result, d_values = _outcome(dc, device, WRITES[write])
    if device == "meta" and write in _META_TEXT_DIFFERS:
        assert d_result[0] == t_result[0]
        return
    assert d_result == t_result
    if t_result[0] != "ok":
        assert d_values == t_values


def test_the_text_is_torchs():
    with pytest.raises(RuntimeError) as info:
        dc.ones(1, 3).expand(2, 3).add_(1.0)
    assert str(info.value) == (
        "unsupported operation: more than one element of the written-to tensor refers to a single memory "
        "location. Please clone() the tensor before performing the operation.")
    assert np.array_equal(dc.ones(1, 3).expand(2, 3).clone().add_(1.0).numpy(), np.full((2, 3), 2.0, np.float32))
