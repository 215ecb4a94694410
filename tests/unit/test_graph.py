"""The autograd graph and engine: order, accumulation, retain_graph, inputs=, grad(), hooks, saved tensors."""

from __future__ import annotations

import pytest

import dispatchcore as dc
from dispatchcore.autograd import AccumulateGrad, Node

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
    "a second time or if you need to access saved tensors after calling backward.")
HINT = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        "with torch.autograd.set_detect_anomaly(True, check_nan=False).")


@pytest.fixture(autouse=True)
def _grad_state_restored():
    yield
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()


def leaf(*values, dtype=None):
    return dc.tensor(list(values), dtype=dtype or dc.float32, requires_grad=True)


def names(edges):
    return [(None if n is None else type(n).__name__, i) for n, i in edges]


# --- graph structure ------------------------------------------------------------------------
def test_leaf_has_no_grad_fn_and_result_has_one():
    x = leaf(1.0, 2.0)
    assert x.grad_fn is None and x.is_leaf
    y = x * x
    assert type(y.grad_fn).__name__ == "MulBackward0" and not y.is_leaf and y.requires_grad


def test_next_functions_and_accumulate_grad():
    x = leaf(1.0, 2.0)
    w = dc.ones(2)
    y = (x * w) + x
    assert names(y.grad_fn.next_functions) == [("MulBackward0", 0), ("AccumulateGrad", 0)]
    mul = y.grad_fn.next_functions[0][0]
    assert names(mul.next_functions) == [("AccumulateGrad", 0), (None, 0)]
    acc = y.grad_fn.next_functions[1][0]
    assert isinstance(acc, AccumulateGrad) and isinstance(acc, Node)
    assert acc.variable is x
    assert mul.next_functions[0][0] is acc  # one accumulator per leaf
    assert acc.next_functions == ()
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert y.grad_fn.name() == "AddBackward0"


def test_multi_output_node_output_nr():
    x = dc.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    values, indices = x.max(1)
    assert values.grad_fn is not None and values._output_nr == 0
    assert not indices.requires_grad and indices.grad_fn is None


def test_no_grad_inputs_give_no_node():
    y = dc.ones(2) * dc.ones(2)
    assert y.grad_fn is None and not y.requires_grad


# --- running the graph ------------------------------------------------------------------------
def test_backward_scalar():
    x = leaf(1.0, 2.0, 3.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_gradient_accumulates_into_same_grad_tensor():
    x = leaf(1.0, 1.0)
    (x * 2).sum().backward()
    first = x.grad
    assert first.tolist() == [2.0, 2.0]
    (x * 3).sum().backward()
    assert x.grad is first  # accumulated in place, as torch's AccumulateGrad does
    assert x.grad.tolist() == [5.0, 5.0]


def test_grad_is_not_the_callers_grad_output():
    x = leaf(1.0, 1.0)
    go = dc.ones(2)
    x.backward(go)
    assert x.grad is not go
    x.backward(go)
    assert go.tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]


def test_diamond_accumulates_both_paths():
    x = leaf(2.0)
    a = x * 3
    (a * a + a).sum().backward()  # d/dx (9x^2 + 3x) = 18x + 3
    assert x.grad.tolist() == [39.0]


def test_execution_order_is_newest_first_and_deterministic():
    def run():
        log = []
        x = leaf(1.0, 1.0)
        a = x * 2
        a.register_hook(lambda g: log.append("a"))
        b = x * 3
        b.register_hook(lambda g: log.append("b"))
        c = a * b
        c.register_hook(lambda g: log.append("c"))
        d = a + c
        d.register_hook(lambda g: log.append("d"))
        x.register_hook(lambda g: log.append("x"))
        d.sum().backward()
        return log, x.grad.tolist()

    first = run()
    assert first == (["d", "c", "b", "a", "x"], [14.0, 14.0])  # torch 2.13's order
    assert all(run() == first for _ in range(5))


def test_ready_accumulate_grad_runs_before_other_ready_nodes():
    """torch gives AccumulateGrad the highest sequence number: a ready leaf accumulates first."""
    log = []
    x = leaf(1.0)
    x.register_hook(lambda g: log.append("x"))  # x's accumulator exists before s's node
    y = leaf(1.0)
    s = y * 5
    s.register_hook(lambda g: log.append("s"))
    y.register_hook(lambda g: log.append("y"))
    (x + s).sum().backward()
    assert log == ["x", "s", "y"]


def test_backward_twice_without_retain_graph_raises_torch_text():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert str(info.value) == FREED


def test_retain_graph_allows_second_backward():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_graph_without_saved_tensors_can_be_run_twice():
    x = leaf(1.0)
    y = (x + 1).sum()  # add saves nothing, so nothing is freed
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0]


def test_saved_tensors_are_freed_after_backward():
    x = leaf(1.0)
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn.apply((dc.ones(1),))


def test_non_scalar_output_without_gradient_raises():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        (x * 2).backward()


def test_non_scalar_output_with_gradient():
    x = leaf(1.0, 2.0)
    (x * 2).backward(dc.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]


def test_grad_output_shape_mismatch_raises():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward(dc.ones(3))
    assert str(info.value) == ("Mismatch in shape: grad_output[0] has a shape of dispatchcore.Size([3]) "
                               "and output[0] has a shape of dispatchcore.Size([2]).")


def test_gradient_of_wrong_type_raises():
    x = leaf(1.0)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got int"):
        (x * 2).backward(3)


def test_implicit_grad_needs_floating_scalar():
    x = dc.tensor([1.0], dtype=dc.complex64, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got dispatchcore.complex64"):
        (x * x).sum().backward()


def test_output_without_grad_raises():
    with pytest.raises(RuntimeError) as info:
        dc.ones(2).sum().backward()
    assert str(info.value) == "element 0 of tensors does not require grad and does not have a grad_fn"


def test_backward_on_leaf_accumulates_directly():
    x = leaf(3.0)
    x.backward(dc.tensor([2.0]))
    assert x.grad.tolist() == [2.0]


def test_leaf_that_stopped_requiring_grad_gets_no_grad():
    x = leaf(1.0)
    y = (x * 2).sum()
    x.requires_grad_(False)
    y.backward()
    assert x.grad is None  # AccumulateGrad skips a variable that no longer requires grad


# --- backward(inputs=...) -------------------------------------------------------------------
def test_backward_inputs_only_accumulates_into_inputs():
    x, w = leaf(1.0, 1.0), leaf(1.0, 1.0)
    (x * w * 3).sum().backward(inputs=[x])
    assert x.grad.tolist() == [3.0, 3.0]
    assert w.grad is None


def test_backward_inputs_single_tensor_and_dict():
    x, w = leaf(2.0), leaf(5.0)
    (x * w).sum().backward(inputs=w)
    assert w.grad.tolist() == [2.0] and x.grad is None
    (x * w).sum().backward(inputs={"x": x})
    assert x.grad.tolist() == [5.0]


def test_backward_inputs_runs_leaf_hooks():
    x = leaf(1.0, 1.0)
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward(inputs=[x])
    assert x.grad.tolist() == [30.0, 30.0]


def test_backward_inputs_non_leaf_gets_grad_and_retains_grad():
    x = leaf(1.0, 1.0)
    h = x * 2
    (h * 3).sum().backward(inputs=[h])
    assert h.grad.tolist() == [3.0, 3.0]
    assert h.retains_grad  # torch calls retain_grad() on every input
    assert x.grad is None


def test_backward_inputs_skips_nodes_off_the_path():
    log = []
    x, z = leaf(1.0), leaf(1.0)
    a = z * 2
    a.register_hook(lambda g: log.append("a"))
    z.register_hook(lambda g: log.append("z"))
    (x * 3 + a).sum().backward(inputs=[x])
    assert log == [] and z.grad is None


def test_backward_inputs_errors():
    x = leaf(1.0)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="^`inputs` argument to `backward\\(\\)` cannot be empty.$"):
        y.backward(inputs=[])
    with pytest.raises(RuntimeError, match="^can't retain_grad on Tensor that has requires_grad=False$"):
        y.backward(inputs=[dc.ones(1)])


# --- autograd.grad --------------------------------------------------------------------------
def test_grad_returns_tuple_and_leaves_dot_grad_alone():
    x = leaf(3.0)
    (g,) = dc.autograd.grad((x * x).sum(), x)
    assert g.tolist() == [6.0]
    assert x.grad is None


def test_grad_with_respect_to_non_leaf():
    x = leaf(1.0, 2.0)
    h = x * 2
    (g,) = dc.autograd.grad((h * h).sum(), [h])
    assert g.tolist() == [4.0, 8.0]


def test_grad_allow_unused():
    x, z = leaf(1.0), leaf(1.0)
    gx, gz = dc.autograd.grad((x * 3).sum(), [x, z], allow_unused=True)
    assert gx.tolist() == [3.0] and gz is None


def test_grad_unused_input_error_names_its_index():
    x, z = leaf(1.0), leaf(1.0)
    with pytest.raises(RuntimeError) as info:
        dc.autograd.grad((x * 3).sum(), [x, z])
    assert str(info.value) == ("The differentiated Tensor at index 1 appears to not have been used in the "
                               "graph. Set allow_unused=True if this is the desired behavior.")


def test_grad_materialize_grads():
    x, z = leaf(1.0), leaf(1.0)
    gx, gz = dc.autograd.grad((x * 3).sum(), [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0] and not gz.requires_grad
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        dc.autograd.grad((x * 3).sum(), [x, z], materialize_grads=True, allow_unused=False)


def test_grad_input_errors():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="^One of the differentiated Tensors does not require grad$"):
        dc.autograd.grad((x * 3).sum(), [x, dc.ones(1)])
    with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot be empty.$"):
        dc.autograd.grad((x * 3).sum(), [])


def test_grad_dict_inputs():
    x, w = leaf(2.0), leaf(5.0)
    out = dc.autograd.grad((x * w).sum(), {"x": x, "w": w})
    assert {k: v.tolist() for k, v in out.items()} == {"x": [5.0], "w": [2.0]}


def test_grad_runs_leaf_hooks_before_capture():
    x = leaf(1.0, 1.0)
    x.register_hook(lambda g: g * 10)
    (g,) = dc.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [30.0, 30.0] and x.grad is None


def test_grad_capture_of_a_node_that_runs_skips_its_tensor_hooks():
    """torch quirk: the capture happens before the hooks when the captured node also runs."""
    x = leaf(1.0, 1.0)
    h = x * 2
    h.register_hook(lambda g: g * 10)
    gh, gx = dc.autograd.grad((h * 3).sum(), [h, x])
    assert gh.tolist() == [3.0, 3.0]  # h's node runs (x needs it): captured before the hook
    assert gx.tolist() == [60.0, 60.0]  # the hook did change what flowed on


def test_grad_does_not_run_hooks_off_the_path():
    log = []
    x, z = leaf(1.0), leaf(1.0)
    a = z * 2
    a.register_hook(lambda g: log.append("a"))
    dc.autograd.grad((x * 3 + a).sum(), x)
    assert log == []


# --- higher order -----------------------------------------------------------------------------
def test_create_graph_second_derivative_of_cube():
    x = dc.tensor(2.0, requires_grad=True)
    (g,) = dc.autograd.grad(x ** 3, x, create_graph=True)
    assert g.item() == 12.0 and g.requires_grad and g.grad_fn is not None  # 3x^2
    (g2,) = dc.autograd.grad(g, x)
    assert g2.item() == 12.0  # 6x


def test_create_graph_via_backward_gives_differentiable_grad():
    x = dc.tensor(2.0, requires_grad=True)
    (x * x * x).backward(create_graph=True)
    g = x.grad
    assert g.item() == 12.0 and g.requires_grad
    assert type(g.grad_fn).__name__ == "CopyBackwards"  # clone_obey_contract's copy, as torch
    x.grad = None
    g.backward()
    assert x.grad.item() == 12.0


def test_without_create_graph_grad_does_not_require_grad():
    x = dc.tensor(2.0, requires_grad=True)
    (g,) = dc.autograd.grad(x * x, x)
    assert not g.requires_grad and g.grad_fn is None


def test_third_derivative():
    x = dc.tensor(1.5, requires_grad=True)
    y = x * x * x * x  # x^4
    (g1,) = dc.autograd.grad(y, x, create_graph=True)
    (g2,) = dc.autograd.grad(g1, x, create_graph=True)
    (g3,) = dc.autograd.grad(g2, x)
    assert g3.item() == pytest.approx(24 * 1.5)


def test_backward_restores_grad_mode():
    x = dc.tensor(2.0, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(dc.is_grad_enabled()))
    (x * x).backward()
    (x * x).backward(create_graph=True)
    assert seen == [False, True]
    assert dc.is_grad_enabled()


# --- retain_grad and hooks ------------------------------------------------------------------
def test_retain_grad_on_non_leaf():
    x = leaf(1.0, 1.0)
    h = x * 2
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    (h * 3).sum().backward()
    assert h.grad.tolist() == [3.0, 3.0]
    assert h.grad.grad_fn is None


def test_retain_grad_accumulates_over_backward_calls():
    x = leaf(1.0)
    h = x * 2
    h.retain_grad()
    y = (h * 3).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert h.grad.tolist() == [6.0]


def test_retain_grad_on_leaf_is_a_no_op():
    x = leaf(1.0)
    x.retain_grad()
    assert not x.retains_grad


def test_retain_grad_without_requires_grad_raises():
    with pytest.raises(RuntimeError, match="^can't retain_grad on Tensor that has requires_grad=False$"):
        dc.ones(1).retain_grad()


def test_non_leaf_grad_is_none_without_retain_grad():
    x = leaf(1.0)
    h = x * 2
    (h * 3).sum().backward()
    assert h.grad is None


def test_retain_grad_sees_the_gradient_after_later_hooks():
    """torch runs retains-grad hooks after all tensor hooks, even ones registered later."""
    x = leaf(1.0, 1.0)
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 10)
    (h * 3).sum().backward()
    assert h.grad.tolist() == [30.0, 30.0]


def test_leaf_hook_modifies_gradient():
    x = leaf(1.0, 1.0)
    x.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: g + 1)  # hooks chain in registration order
    (x * 3).sum().backward()
    assert x.grad.tolist() == [31.0, 31.0]


def test_non_leaf_hook_modifies_gradient_that_flows_on():
    x = leaf(1.0, 1.0)
    h = x * 2
    h.register_hook(lambda g: g * 10)
    (h * 3).sum().backward()
    assert x.grad.tolist() == [60.0, 60.0]


def test_hook_returning_none_keeps_gradient_and_sees_it():
    seen = []
    x = leaf(1.0, 2.0)
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [3.0, 3.0]


def test_hook_handle_remove():
    x = leaf(1.0)
    handle = x.register_hook(lambda g: g * 10)
    handle.remove()
    handle.remove()  # idempotent
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="^cannot register a hook on a tensor that doesn't require gradient$"):
        dc.ones(1).register_hook(lambda g: g)


def test_node_post_hook_and_prehook():
    x = leaf(1.0, 1.0)
    w = dc.ones(2)
    y = x * w
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append((len(gi), len(go))))
    y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
    y.sum().backward()
    assert seen == [(2, 1)]  # one grad_input per next edge, one grad_output
    assert x.grad.tolist() == [5.0, 5.0]


def test_node_post_hook_can_replace_grad_inputs():
    x = leaf(1.0)
    y = x * dc.tensor([2.0])
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 100, gi[1]))
    y.sum().backward()
    assert x.grad.tolist() == [200.0]


# --- detach / detach_ / requires_grad_ -------------------------------------------------------
def test_detach_shares_data_and_version_but_not_history():
    x = leaf(1.0, 1.0)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert d._base is None
    d.add_(1)
    assert y._version == 1 and y.tolist() == [3.0, 3.0]


def test_detach_in_place():
    x = leaf(1.0)
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf


def test_detach_in_place_on_view_raises():
    x = leaf(1.0, 2.0)
    v = (x * 2).view(2)
    with pytest.raises(RuntimeError, match="^Can't detach views in-place. Use detach\\(\\) instead."):
        v.detach_()


def test_requires_grad_errors():
    x = leaf(1.0)
    y = x * 2
    with pytest.raises(RuntimeError, match="^you can only change requires_grad flags of leaf variables."):
        y.requires_grad_(False)
    assert y.requires_grad_(True) is y  # allowed, as in torch
    with pytest.raises(RuntimeError, match="can require gradients"):
        dc.ones(1, dtype=dc.int64).requires_grad_()


def test_requires_grad_setter():
    x = dc.ones(1)
    x.requires_grad = True
    assert x.requires_grad and x.is_leaf


# --- saved tensors ----------------------------------------------------------------------------
def test_modified_saved_intermediate_raises_torch_text():
    a = leaf(1.0, 1.0)
    b = a + 1
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    assert str(info.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [dispatchcore.FloatTensor [2]], which is output 0 of AddBackward0, is at version 1; "
        "expected version 0 instead." + HINT).replace("AddBackward0", "Add")


def test_modified_saved_leaf_input_omits_producer():
    a = leaf(1.0, 1.0)
    w = dc.ones(2)
    c = a * w
    w.add_(1)
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    assert str(info.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [dispatchcore.FloatTensor [2]] is at version 1; expected version 0 instead." + HINT)


def test_modified_saved_output_names_its_node():
    a = leaf(1.0, 1.0)
    b = (a * 2).relu()  # relu saves its result
    c = b * 1
    b.mul_(1)
    with pytest.raises(RuntimeError, match=r"\[dispatchcore.FloatTensor \[2\]\], which is output 0 of Relu, "
                                           r"is at version 1; expected version 0 instead"):
        c.sum().backward()


def test_modified_double_tensor_legacy_name():
    a = leaf(1.0, dtype=dc.float64)
    b = a * 2
    c = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[dispatchcore.DoubleTensor \[1\]\], which is output 0 of Mul,"):
        c.sum().backward()


# --- node names (grad_fn.name()) --------------------------------------------------------------
def test_hand_written_nodes_name_themselves_by_their_cpp_name():
    """torch's hand-written nodes answer name() with the C++ name; generated ones with the class name."""
    x = leaf(1.0, 2.0)
    b = x.clone()
    assert b.grad_fn.name() == "CloneBackward0"
    assert b.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    b[0:1].mul_(dc.tensor(2.0))
    assert b.grad_fn.name() == "torch::autograd::CopySlices" and type(b.grad_fn).__name__ == "CopySlices"
    z = dc.zeros(2)
    z.copy_(x)
    assert z.grad_fn.name() == "torch::autograd::CopyBackwards" and type(z.grad_fn).__name__ == "CopyBackwards"
    assert "grad_fn=<CopyBackwards>" in repr(z)


def test_modified_saved_tensor_names_copy_slices_as_torch():
    a = leaf(1.0, 2.0).clone()
    c = a * a
    a[0:1].add_(dc.tensor(1.0))
    with pytest.raises(RuntimeError, match="which is output 0 of torch::autograd::CopySlices, is at version 1"):
        c.sum().backward()


# --- x.grad = ... (THPVariable_set_grad) ----------------------------------------------------------
def test_assigning_a_grad_of_another_size_raises():
    x = dc.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x.grad = dc.ones(3, 2)
    assert str(info.value) == ("attempting to assign a gradient of size '[3, 2]' to a tensor of size '[2, 3]'. "
                               "Please ensure that the gradient and the tensor are the same size")
    assert x.grad is None


def test_assigning_a_grad_of_another_dtype_raises_with_cpp_type_names():
    x = dc.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^attempting to assign a gradient with dtype 'double' to a tensor "
                                           "with grad_dtype 'Float'. The gradient must match"):
        x.grad = dc.ones(2, dtype=dc.float64)
    i = dc.zeros(2, dtype=dc.int64)
    with pytest.raises(RuntimeError, match="with dtype 'float' to a tensor with grad_dtype 'Long'"):
        i.grad = dc.ones(2)


def test_assigning_a_grad_on_another_device_raises():
    x = dc.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^attempting to assign a gradient with device type 'meta' to a "
                                           "tensor with device type 'cpu'. Please ensure"):
        x.grad = dc.ones(2, device="meta")


def test_assigning_a_non_tensor_or_itself_raises():
    x = dc.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="^assigned grad expected to be a Tensor or None but got grad of type list$"):
        x.grad = [0.0, 0.0]
    with pytest.raises(RuntimeError, match="^can't assign Variable as its own grad$"):
        x.grad = x


def test_assigning_checks_size_last_and_accepts_any_layout():
    x = dc.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="dtype"):  # the dtype is checked before the size
        x.grad = dc.ones(3, dtype=dc.float64)
    x.grad = dc.ones(3, 2).t()
    x.grad = dc.ones(3).expand(2, 3)
    x.grad = None
    assert x.grad is None
    y = x * 2  # a non-leaf takes a grad too, with the same checks
    y.grad = dc.ones(2, 3)
    with pytest.raises(RuntimeError, match="size"):
        y.grad = dc.ones(3)


def test_grad_dtype_none_allows_any_dtype_and_a_set_one_is_used_by_backward():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad_dtype == dc.float32
    x.grad_dtype = None
    x.grad = dc.ones(2, dtype=dc.float64)
    x.grad = None
    x.grad_dtype = dc.float64
    (x * 2).sum().backward()
    assert x.grad.dtype == dc.float64 and x.grad.tolist() == [2.0, 2.0]


def test_grad_dtype_is_for_leaves_and_dtypes_only():
    y = dc.zeros(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="^grad_dtype can only be accessed on leaf tensors.$"):
        y.grad_dtype  # noqa: B018 - the property raises
    with pytest.raises(RuntimeError, match="^grad_dtype can only be set on leaf tensors.$"):
        y.grad_dtype = None
    with pytest.raises(RuntimeError, match="^grad_dtype must be a dispatchcore.dtype or None, but got str$"):
        dc.zeros(2).grad_dtype = "float64"


# --- Note [Leaf metadata] ------------------------------------------------------------------------
class _AddTwo(dc.autograd.Function):  # two tensor inputs: Function.apply's general recording
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g


_LEAF_USES = {"mul": lambda x, F: x * 2, "add with keywords": lambda x, F: dc.add(x, x, alpha=2.0),
              "Function": lambda x, F: F.apply(x), "Function of two inputs": lambda x, F: _AddTwo.apply(x, x)}


@pytest.mark.parametrize("use", list(_LEAF_USES))
def test_a_node_reads_a_leafs_metadata_from_its_accumulator(use, twice):
    x = dc.randn(3, requires_grad=True)
    acc = dc.autograd.graph.grad_accumulator(x)
    assert acc.meta == ((3,), x._data.dtype) and acc.one_meta == (((3,), dc.float32, x.device),)
    node = _LEAF_USES[use](x, twice(dc)).grad_fn
    if use == "mul" or use == "add with keywords":
        assert node._in_meta[0] is acc.meta
    elif use == "Function":
        assert node._input_meta is acc.one_meta
    else:
        assert node._input_meta[0] is node._input_meta[1] is acc.one_meta[0]


@pytest.mark.parametrize("use", list(_LEAF_USES))
def test_a_new_shape_through_data_fails_while_a_graph_holds_the_accumulator_then_works(use, twice):
    # as torch: the accumulator keeps the shape it was made with, and torch's AutogradMeta holds
    # it weakly, so once the old graph is gone the next use records the new shape
    x, run = dc.randn(3, requires_grad=True), _LEAF_USES[use]
    old = run(x, twice(dc))
    x.data = dc.randn(5)
    with pytest.raises(RuntimeError, match=r"returned an invalid gradient at index 0 - got \[5\] but expected shape "
                                           r"compatible with \[3\]"):
        run(x, twice(dc)).sum().backward()
    del old
    x.grad = None
    run(x, twice(dc)).sum().backward()
    assert x.grad.shape == (5,)


def test_a_new_dtype_through_data_drops_the_accumulator_at_once():
    x = dc.randn(3, requires_grad=True)
    old = x * 2
    x.data = dc.randn(5, dtype=dc.float64)
    (x * 2).sum().backward()
    assert x.grad.shape == (5,) and x.grad.dtype == dc.float64
    assert old.grad_fn.next_functions[0][0] is not dc.autograd.graph.grad_accumulator(x)


def test_a_module_converted_to_another_dtype_gets_gradients_of_that_dtype():
    # Module._apply swaps each parameter's data: the accumulator recorded the old dtype, so it
    # is dropped as ``.data =`` drops it (Note [Leaf metadata])
    class Scale(dc.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = dc.nn.Parameter(dc.ones(2))

        def forward(self, x):
            return x * self.p

    m = Scale()
    m(dc.ones(2)).sum().backward()
    m.zero_grad(set_to_none=True)
    m.double()
    m(dc.ones(2, dtype=dc.float64)).sum().backward()
    assert m.p.dtype == m.p.grad.dtype == dc.float64
