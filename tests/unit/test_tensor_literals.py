"""Tensor literals reach the modes: ``tensor(data)`` and ``from_numpy`` call ``aten::lift_fresh``.

Covers the two operators (``lift_fresh``, ``lift_fresh_copy``), what a dispatch mode sees for each
literal-data factory (See Note [Literals reach the modes], factories.py), the plain path that
dispatches nothing, ``only_lift_cpu_tensors``, and the fake mode's constants.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import factories
from dispatchcore.fake_tensor import DataDependentOutputException, FakeTensor, FakeTensorMode
from dispatchcore.modes import _modes_get
from dispatchcore.tls import tls_get

aten = dc.ops.aten


@pytest.fixture(autouse=True)
def _no_leaks():
    before = _modes_get(), tls_get(), factories.only_lift_cpu_tensors()
    yield
    assert (_modes_get(), tls_get(), factories.only_lift_cpu_tensors()) == before


def logged(fn):
    with dc.LoggingMode() as log:
        fn()
    return log.ops


# --- the operators -------------------------------------------------------------------------------------
def test_lift_fresh_returns_its_argument_itself():
    x = dc.ones(2)
    assert aten.lift_fresh.default(x) is x


def test_lift_fresh_copy_is_a_contiguous_copy_on_every_backend():
    for device in ("cpu", "meta"):
        x = dc.empty(2, 3, device=device).t()
        copy = aten.lift_fresh_copy.default(x)
        assert copy is not x and copy.shape == (3, 2) and copy.stride() == (2, 1)
    x = dc.tensor([[1.0, 2.0], [3.0, 4.0]]).t()
    assert aten.lift_fresh_copy.default(x).tolist() == x.tolist()


def test_lift_fresh_copy_out_resizes_an_empty_out_and_warns_for_one_with_elements():
    out = dc.empty(0)
    assert aten.lift_fresh_copy.out(dc.tensor([1.0, 2.0]), out=out) is out and out.tolist() == [1.0, 2.0]
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[3\]"):
        aten.lift_fresh_copy.out(dc.tensor([1.0, 2.0]), out=dc.empty(3))


def test_the_derivatives_pass_the_gradient_through_with_torchs_node_names():
    x = dc.ones(2, requires_grad=True)
    copy = aten.lift_fresh_copy.default(x)
    lifted = aten.lift_fresh.default(x * 1)
    assert type(copy.grad_fn).__name__ == "LiftFreshBackward0_copy"
    assert type(lifted.grad_fn).__name__ == "LiftFreshBackward0"
    (copy * 3 + lifted).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


# --- what a mode sees ------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: dc.tensor([1.0, 2.0]), lambda: dc.tensor(0.5), lambda: dc.tensor([]),
                                  lambda: dc.tensor([1, 2], dtype=dc.float64),
                                  lambda: dc.tensor([1.0], requires_grad=True),
                                  lambda: dc.from_numpy(np.ones(2)), lambda: dc.ones(2).new_tensor([1.0])],
                         ids=["list", "scalar", "empty", "dtype", "requires_grad", "from_numpy", "new_tensor"])
def test_a_literal_is_one_lift_fresh_call(make):
    assert logged(make)[-1:] == ["aten.lift_fresh.default"]
    assert logged(make).count("aten.lift_fresh.default") == 1


def test_the_lifted_literal_has_the_values_dtype_and_requires_grad_asked_for():
    with dc.LoggingMode():
        t = dc.tensor([1, 2], dtype=dc.float64, requires_grad=True)
        n = dc.from_numpy(np.arange(3))
    assert t.tolist() == [1.0, 2.0] and t.dtype is dc.float64 and t.requires_grad and t.is_leaf
    assert n.tolist() == [0, 1, 2] and n.dtype is dc.int64


def test_tensor_of_an_ndarray_is_from_numpy_then_a_visible_copy():
    a = np.arange(3.0)
    with dc.LoggingMode() as log:
        t = dc.tensor(a, dtype=dc.float32)
    assert log.ops == ["aten.lift_fresh.default", "aten._to_copy.default"]
    assert log.records[1].kwargs == {"dtype": dc.float32, "device": dc.device("cpu")}
    a[0] = 7.0
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_tensor_of_a_tensor_is_detach_then_to_copy_with_torchs_warning():
    x = dc.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match=r"rather than torch.tensor\(sourceTensor\)"), dc.LoggingMode() as log:
        t = dc.tensor(x, dtype=dc.float64)
    assert log.ops == ["aten.detach.default", "aten._to_copy.default"]
    assert t.tolist() == [1.0, 1.0] and t.dtype is dc.float64 and not t.requires_grad


def test_a_meta_literal_is_an_empty_meta_tensor_nothing_is_lifted():
    assert logged(lambda: dc.tensor([1.0, 2.0], device="meta")) == []
    t = dc.tensor([[1, 2]], device="meta")
    assert t.device.type == "meta" and t.shape == (1, 2) and t.dtype is dc.int64


def test_without_a_mode_a_literal_dispatches_nothing():
    # See Note [Lifting costs nothing unobserved]: the no-op is skipped when no mode can see it
    with dc.trace() as t:
        x = dc.tensor([1.0, 2.0])
        dc.from_numpy(np.ones(2))
    assert t.hops() == [] and x.tolist() == [1.0, 2.0]


# --- only_lift_cpu_tensors ---------------------------------------------------------------------------------
def test_fake_mode_turns_only_lift_cpu_tensors_on_for_its_thread_while_entered():
    seen = []
    assert not factories.only_lift_cpu_tensors()
    with FakeTensorMode() as mode:
        other = threading.Thread(target=lambda: seen.append(factories.only_lift_cpu_tensors()))
        other.start()
        other.join()
        with mode:
            assert factories.only_lift_cpu_tensors()
        assert factories.only_lift_cpu_tensors()
    assert seen == [False] and not factories.only_lift_cpu_tensors()


def test_only_lift_cpu_tensors_lifts_on_cpu_then_moves_with_a_visible_copy():
    factories.set_only_lift_cpu_tensors(True)
    try:
        with dc.LoggingMode() as log:
            dc.tensor([1.0], device="meta")  # meta still takes its shortcut
            t = dc.tensor(1.5)
    finally:
        factories.set_only_lift_cpu_tensors(False)
    assert log.ops == ["aten.lift_fresh.default"] and t.item() == 1.5


# --- FakeTensorMode --------------------------------------------------------------------------------------
def test_a_literal_under_fake_mode_is_a_fake_tensor():
    with FakeTensorMode() as mode:
        t = dc.tensor([[1, 2], [3, 4]])
    assert type(t) is FakeTensor and t.fake_mode is mode and t.shape == (2, 2) and t.dtype is dc.int64
    assert t.constant is None


def test_a_literal_on_an_accelerator_is_lifted_on_cpu_and_moved_no_gpu_needed():
    with FakeTensorMode(), dc.LoggingMode() as log:
        t = dc.tensor([1.0, 2.0], device="cuda")
    assert log.ops == ["aten.lift_fresh.default", "aten._to_copy.default"]
    assert log.records[1].kwargs == {"device": dc.device("cuda", 0)}
    assert type(t) is FakeTensor and t.device == dc.device("cuda", 0) and t.constant is None


def test_a_meta_literal_under_fake_mode_stays_a_real_meta_tensor():
    with FakeTensorMode():
        t = dc.tensor([1.0, 2.0], device="meta")
    assert type(t) is dc.Tensor and t.device.type == "meta"


def test_from_numpy_and_tensor_of_fakes_are_fake():
    with FakeTensorMode():
        n = dc.from_numpy(np.ones(3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = dc.tensor(dc.ones(2), dtype=dc.float64)
    assert type(n) is FakeTensor and n.dtype is dc.float64
    assert type(c) is FakeTensor and c.dtype is dc.float64


def test_a_literal_of_at_most_one_element_is_a_constant_and_its_item_is_its_value():
    with FakeTensorMode():
        half = dc.tensor(0.5)
        assert half.constant is not None
        assert (half + 1).item() == 1.5
        assert bool(half == 0.5)
        assert dc.tensor([2.0]).sum().item() == 2.0
        assert dc.tensor([]).constant is not None
        with pytest.raises(DataDependentOutputException):
            dc.tensor([1.0, 2.0])[0].item()
    assert half.constant.item() == 0.5  # a real tensor: read outside the mode (inside, torch refuses it)


def test_in_place_arithmetic_with_constants_keeps_the_constant():
    with FakeTensorMode():
        x = dc.tensor(0.0)
        assert x.add_(1) is x
        assert x.item() == 1.0


def test_writing_a_constant_with_an_unknown_value_forgets_it_in_every_alias():
    with FakeTensorMode():
        x = dc.tensor(0.0)
        view = x.view(1)
        assert view.constant is not None and view._base is x
        view.add_(dc.empty(1))
        assert x.constant is None and view.constant is None
        with pytest.raises(DataDependentOutputException):
            x.item()


def test_random_results_and_large_results_are_not_constants():
    with FakeTensorMode():
        one = dc.tensor(1.0)
        assert dc.rand_like(one).constant is None
        assert one.expand(3).constant is None
        assert one.constant is None  # the expanded result aliases it: forgotten with it


def test_a_constant_moved_to_an_uninitialized_accelerator_is_not_kept():
    with FakeTensorMode():
        moved = dc.tensor(1.0, device="cuda")
        assert moved.device.type == "cuda" and moved.constant is None
