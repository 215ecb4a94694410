"""In-place ops and views under autograd: rebase_history, CopySlices, view grad_fn regeneration,
creation-mode errors, version counters and ``_base``, saved-tensor version checks (torch's
``VariableTypeUtils.h``, ``variable.cpp``, ``custom_function.cpp``, ``InferenceMode.h``)."""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import gradcheck, gradgradcheck

A = dc.ops.aten
F64 = dc.float64


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def name(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def edges(node):
    return [None if n is None else type(n).__name__ for n, _ in node.next_functions]


def leaf(*shape):
    values = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape) / 10
    return dc.tensor(values.tolist(), dtype=F64, requires_grad=True)


# --- in-place on non-leaves: rebase_history -----------------------------------------------------------
def test_inplace_on_non_leaf_rebases_history():
    x = leaf(3)
    b = x.clone()
    old = b.grad_fn
    out = b.mul_(2)
    assert out is b
    assert name(b) == "MulBackward0" and b._version == 1 and not b.is_leaf  # the 2 is wrapped, as in torch
    assert b.grad_fn.next_functions[0] == (old, 0)
    b.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_inplace_with_requires_grad_operand_on_plain_tensor_gives_it_history():
    y = leaf(3)
    z = dc.zeros(3, dtype=F64)
    z.add_(y)
    assert name(z) == "AddBackward0" and z.requires_grad and not z.is_leaf
    assert edges(z.grad_fn) == [None, "AccumulateGrad"]
    (z * z).sum().backward()
    np.testing.assert_allclose(y.grad.tolist(), [0.2, 0.4, 0.6])


def test_inplace_on_leaf_requiring_grad_raises():
    x = leaf(3)
    with pytest.raises(RuntimeError, match=r"^a leaf Variable that requires grad is being used in an in-place "
                                           r"operation\.$"):
        x.add_(1)
    assert x._version == 0
    with dc.no_grad():
        x.add_(1)  # allowed without grad mode
    assert x._version == 1 and x.grad_fn is None


@pytest.mark.parametrize("make_view", [lambda x: x.view(6), lambda x: x[0], lambda x: x.t()[1:]])
def test_inplace_on_view_of_leaf_raises(make_view):
    x = leaf(2, 3)
    with pytest.raises(RuntimeError, match=r"^a view of a leaf Variable that requires grad is being used in an "
                                           r"in-place operation\.$"):
        make_view(x).mul_(2)


def test_view_made_before_requires_grad_still_counts_as_view_of_leaf():
    z = dc.zeros(3, dtype=F64)
    v = z[0:2]
    z.requires_grad_()
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable"):
        v.add_(1)


def test_multiple_inplace_ops_chain():
    x = leaf(3)
    b = x.clone()
    b.mul_(3).add_(1).sigmoid_()
    assert name(b) == "SigmoidBackward0" and b._version == 3
    assert edges(b.grad_fn) == ["AddBackward0"]
    b.sum().backward()
    s = 1 / (1 + np.exp(-(np.array([0.1, 0.2, 0.3]) * 3 + 1)))
    np.testing.assert_allclose(x.grad.tolist(), 3 * s * (1 - s))


# --- in-place on views: CopySlices -------------------------------------------------------------------------
def test_inplace_on_view_makes_copyslices_and_asstrided():
    x = leaf(3, 4)
    b = x.clone()
    v = b[0]
    assert name(v) == "SelectBackward0" and v._base is b
    v.mul_(2)
    assert name(b) == "CopySlices" and name(v) == "AsStridedBackward0"
    assert b._version == v._version == 1
    assert edges(b.grad_fn) == ["CloneBackward0", None]  # MulBackward0's edge to the wrapped 2
    assert v.grad_fn.next_functions[0] == (b.grad_fn, 0)
    b.sum().backward()
    expected = np.ones((3, 4))
    expected[0] = 2
    np.testing.assert_allclose(x.grad.tolist(), expected)


def test_copyslices_keeps_the_other_operands_edges():
    x, y = leaf(3, 4), leaf(4)
    b = x.clone()
    b[1].mul_(y)
    assert name(b) == "CopySlices"
    assert edges(b.grad_fn) == ["CloneBackward0", "AccumulateGrad"]
    b.sum().backward()
    np.testing.assert_allclose(y.grad.tolist(), x.detach()[1].tolist())
    expected = np.ones((3, 4))
    expected[1] = y.detach().tolist()
    np.testing.assert_allclose(x.grad.tolist(), expected)


def test_copy_into_view_of_plain_tensor():
    x = leaf(3, 4)
    z = dc.zeros(3, 4, dtype=F64)
    v = z[0]
    v.copy_(x[1])
    assert name(z) == "CopySlices" and name(v) == "AsStridedBackward0"
    assert edges(z.grad_fn) == [None, "SelectBackward0"]
    z.sum().backward()
    expected = np.zeros((3, 4))
    expected[1] = 1
    np.testing.assert_allclose(x.grad.tolist(), expected)


def test_setitem_records_through_copy_slices():
    x = leaf(2, 3)
    y = dc.tensor(5.0, dtype=F64, requires_grad=True)
    b = x.clone()
    b[0, 1] = y * 2
    assert name(b) == "CopySlices"
    (b * b).sum().backward()
    assert x.grad.tolist()[0][1] == 0.0
    assert y.grad.item() == pytest.approx(2 * 2 * 10.0)


def test_other_views_are_regenerated_after_inplace():
    x = leaf(3, 4)
    b = x.clone()
    v1, v2 = b[0], b[0:2]
    v2.mul_(2)
    assert name(v1) == "AsStridedBackward0" and name(v2) == "AsStridedBackward0" and name(b) == "CopySlices"
    (v1 * 3).sum().backward()
    expected = np.zeros((3, 4))
    expected[0] = 6  # through CopySlices: v1 saw the doubled values
    np.testing.assert_allclose(x.grad.tolist(), expected)


def test_view_of_view_inplace_rebases_the_root_base():
    x = leaf(3, 4)
    b = x.clone()
    v = b[0:2]
    w = v[1]
    assert w._base is b
    w.mul_(3)
    assert [name(t) for t in (b, v, w)] == ["CopySlices", "AsStridedBackward0", "AsStridedBackward0"]
    b.sum().backward()
    expected = np.ones((3, 4))
    expected[1] = 3
    np.testing.assert_allclose(x.grad.tolist(), expected)


def test_inplace_on_base_regenerates_existing_views():
    x = leaf(3, 4)
    b = x.clone()
    v = b[0]
    b.mul_(2)
    assert name(b) == "MulBackward0" and name(v) == "AsStridedBackward0"
    v.sum().backward()
    expected = np.zeros((3, 4))
    expected[0] = 2
    np.testing.assert_allclose(x.grad.tolist(), expected)


def test_no_grad_inplace_on_view_keeps_base_history_but_regenerates_view():
    x = leaf(3, 4)
    b = x.clone()
    v = b[0]
    with dc.no_grad():
        v.add_(1)
    assert name(b) == "CloneBackward0" and name(v) == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0] == (b.grad_fn, 0)


def test_double_backward_through_copy_slices():
    x = leaf(3, 4)
    y = leaf(4)

    def f(a, w):
        c = a * 1.0
        c[1].mul_(w)
        c[2].copy_(w.sin())
        return c * c

    assert gradcheck(f, (x, y))
    assert gradgradcheck(f, (x, y))


# --- creation mode of views (c10/core/InferenceMode.h) ----------------------------------------------------------------
NO_GRAD_VIEW = ("A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
                "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
                "both the view and the inplace either both inside the no_grad block (if you don't want the inplace "
                "to be tracked) or both outside (if you want the inplace to be tracked).")
INFERENCE_VIEW = ("A view was created in inference mode and is being modified inplace in normal mode. Given that "
                  "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
                  "both the view and the inplace either both inside the inference_mode block (if you don't want the "
                  "inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def test_view_created_in_no_grad_modified_with_grad_raises():
    x = leaf(3, 4)
    b = x.clone()
    with dc.no_grad():
        v = b[0]
    assert v._base is b and v.requires_grad and v.is_leaf and v.grad_fn is None
    with pytest.raises(RuntimeError) as info:
        v.add_(1)
    assert str(info.value) == NO_GRAD_VIEW
    with dc.no_grad():
        v.add_(1)  # both inside no_grad: fine
    assert v._version == 1


def test_view_of_a_no_grad_view_inherits_its_creation_mode():
    b = leaf(3, 4).clone()
    with dc.no_grad():
        v = b[0]
    w = v[1:]  # v requires grad (its base does), so w has a grad_fn: the message names it
    assert w.grad_fn is not None
    with pytest.raises(RuntimeError, match="^Output 0 of Slice is a view of a view which was created in no_grad "
                                           "mode and is being modified inplace with grad mode enabled. Given"):
        w.mul_(2)


def test_no_grad_view_of_plain_tensor_modified_with_requires_grad_operand_raises():
    z = dc.zeros(3, dtype=F64)
    with dc.no_grad():
        v = z[0:2]
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode"):
        v.add_(leaf(2))
    v.add_(1)  # no operand requires grad: nothing is recorded, nothing to forbid
    assert z.tolist() == [1.0, 1.0, 0.0]


def test_view_created_in_inference_mode_modified_outside_raises():
    b = leaf(3, 4).clone()
    with dc.inference_mode():
        v = b[0]
    assert v._base is b and not v.is_inference() and v.requires_grad
    assert dc.dispatch_keys(v) == dc.dispatch_keys(b)  # a view of a normal tensor is a normal tensor
    with pytest.raises(RuntimeError) as info:
        v.add_(1)
    assert str(info.value) == INFERENCE_VIEW
    with dc.inference_mode():
        v.add_(1)
    assert b._version == 1


def test_no_grad_view_of_requires_grad_tensor_passes_no_gradient():
    x = leaf(3)
    b = x.clone()
    with dc.no_grad():
        v = b[0:2]
    y = v * 2
    assert y.requires_grad and y.grad_fn.next_functions[0] == (None, 0)


# --- version counters and _base ----------------------------------------------------------------------------------
def test_versions_are_shared_by_base_and_views():
    x = leaf(2, 3).clone()
    v = x.view(6)
    w = x.t()
    assert v._base is x and w._base is x and v[1:]._base is x
    v.add_(1)
    w.mul_(2)
    assert x._version == v._version == w._version == 2
    d = x.detach()
    d.zero_()
    assert x._version == 3
    assert x.clone()._version == 0 and x.clone()._base is None


def test_views_of_requires_grad_tensors_record_and_point_to_the_root():
    x = leaf(2, 3)
    v = x.t()[0]
    assert v._base is x and name(v) == "SelectBackward0"
    assert edges(v.grad_fn) == ["TBackward0"]


def test_integer_views_and_inplace_have_no_autograd():
    t = dc.arange(6)
    v = t.view(2, 3)
    v.add_(1)
    assert v.grad_fn is None and t._version == 1 and v._base is t


# --- saved tensors modified in place -----------------------------------------------------------------------------
def _version_error(shape, producer, version=1, expected=0, kind="DoubleTensor"):
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[dispatchcore.{kind} [{shape}]]{producer} is at version {version}; expected version {expected} "
            "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def test_saved_output_modified_names_its_node():
    x = leaf(3)
    y = x.clone().sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == _version_error(3, ", which is output 0 of Sigmoid,")


def test_saved_input_modified_names_its_current_node():
    x = leaf(3)
    b = x.clone()
    y = b * b
    b.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == _version_error(3, ", which is output 0 of Add,")


def test_saved_leaf_modified_has_no_producer():
    x = leaf(3)
    w = dc.tensor([1.0, 2.0, 3.0], dtype=F64)
    y = x * w
    w.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == _version_error(3, "")


def test_saved_view_modified_through_base_names_asstrided():
    x = leaf(3)
    b = x.clone()
    v = b[0:2]
    y = v * v
    b.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == _version_error(2, ", which is output 0 of AsStrided,")


def test_inplace_op_reading_itself_fails_at_backward():
    x = leaf(3)
    b = x.clone()
    b.mul_(b)  # `other` is saved before the op bumps the version
    with pytest.raises(RuntimeError) as info:
        b.sum().backward()
    assert str(info.value) == _version_error(3, ", which is output 0 of Mul,")


def test_float32_legacy_name():
    x = dc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x.exp()
    b.add_(1)
    with pytest.raises(RuntimeError) as info:
        b.sum().backward()
    assert str(info.value) == _version_error(3, ", which is output 0 of Exp,", kind="FloatTensor")


def test_unchanged_version_is_fine_and_retain_graph_allows_two_passes():
    x = leaf(3)
    y = x.clone().tanh()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    t = np.tanh([0.1, 0.2, 0.3])
    np.testing.assert_allclose(x.grad.tolist(), 2 * (1 - t * t))
