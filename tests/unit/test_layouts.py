"""Layout and memory-format objects: torch's names, interned values, schema enum values."""

from __future__ import annotations

import pickle

import pytest

import dispatchcore as dc

LAYOUTS = {"strided": 0, "sparse_coo": 1, "sparse_csr": 2, "sparse_csc": 4, "sparse_bsr": 5, "sparse_bsc": 6}
FORMATS = {"contiguous_format": 0, "preserve_format": 1, "channels_last": 2, "channels_last_3d": 3}


@pytest.mark.parametrize("name", [*LAYOUTS, *FORMATS])
def test_each_object_prints_as_torch_prints_its_own_and_pickles_to_itself(name):
    obj = getattr(dc, name)
    assert repr(obj) == f"dispatchcore.{name}" and obj.name == name
    assert obj.value == {**LAYOUTS, **FORMATS}[name]  # the c10 enum value schemas store
    assert pickle.loads(pickle.dumps(obj)) is obj


def test_layouts_and_memory_formats_are_distinct_kinds():
    assert all(isinstance(getattr(dc, n), dc.layout) and not isinstance(getattr(dc, n), dc.memory_format)
               for n in LAYOUTS)
    assert all(isinstance(getattr(dc, n), dc.memory_format) for n in FORMATS)


def test_factories_take_the_strided_layout_and_refuse_the_others():
    assert dc.zeros(2, layout=dc.strided).shape == (2,)
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        dc.zeros(2, layout=dc.sparse_coo)
