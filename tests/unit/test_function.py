"""Custom autograd Functions (custom_function.cpp): ctx API, setup_context, output wrapping, every error."""

from __future__ import annotations

import pytest

import dispatchcore as dc
from dispatchcore.autograd import BackwardCFunction, Function, once_differentiable
from dispatchcore.tls import tls_get


@pytest.fixture(autouse=True)
def _grad_state_restored():
    yield
    assert dc.is_grad_enabled() and not dc.is_inference_mode_enabled()


def leaf(*values):
    return dc.tensor(list(values), requires_grad=True)


class MyReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0)


class Square(Function):
    """Uses the C++ AutogradContext spellings."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.saved_data["power"] = 2
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.get_saved_variables()
        return g * ctx.saved_data["power"] * x


# --- basics ---------------------------------------------------------------------------------
def test_apply_records_named_node_and_backward_runs():
    x = leaf(-1.0, 2.0)
    y = MyReLU.apply(x)
    assert y.tolist() == [0.0, 2.0]
    assert type(y.grad_fn).__name__ == "MyReLUBackward"
    assert y.grad_fn.name() == "MyReLUBackward"
    assert isinstance(y.grad_fn, BackwardCFunction)
    assert type(y.grad_fn)._forward_cls is MyReLU
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]


def test_node_class_is_made_once_per_function():
    assert MyReLU._backward_cls.__name__ == "MyReLUBackward"
    x = leaf(1.0)
    assert type(MyReLU.apply(x).grad_fn) is type(MyReLU.apply(x).grad_fn) is MyReLU._backward_cls


def test_cpp_spellings_saved_data_and_get_saved_variables():
    x = leaf(3.0)
    y = Square.apply(x)
    assert y.grad_fn.saved_data == {"power": 2}
    y.backward()
    assert x.grad.tolist() == [6.0]


def test_next_functions_cover_tensor_inputs_only():
    class F(Function):
        @staticmethod
        def forward(ctx, x, k, y):
            return x * k * y

        @staticmethod
        def backward(ctx, g):
            return g, None, g

    x, y = leaf(1.0), dc.ones(1)
    out = F.apply(x, 3, y)
    edges = [(None if n is None else type(n).__name__, i) for n, i in out.grad_fn.next_functions]
    assert edges == [("AccumulateGrad", 0), (None, 0)]  # x, then y (k is not a tensor)
    assert out.grad_fn.next_functions[0][0].variable is x


def test_no_requires_grad_input_or_no_grad_records_nothing():
    assert MyReLU.apply(dc.ones(2)).grad_fn is None
    x = leaf(1.0)
    with dc.no_grad():
        y = MyReLU.apply(x)
    assert y.grad_fn is None and not y.requires_grad


def test_forward_and_backward_run_with_grad_mode_off_and_tls_untouched():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(("fwd", dc.is_grad_enabled(), tls_get()))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(("bwd", dc.is_grad_enabled(), tls_get()))
            return g * 2

    before = tls_get()
    F.apply(leaf(1.0)).sum().backward()
    assert seen == [("fwd", False, before), ("bwd", False, before)]


def test_tensors_in_a_list_argument_are_not_inputs():
    class F(Function):
        @staticmethod
        def forward(ctx, xs):
            return xs[0] * 2

        @staticmethod
        def backward(ctx, g):
            return None

    assert not F.apply([leaf(1.0)]).requires_grad


# --- ctx: saved tensors, needs_input_grad, attributes ---------------------------------------
def test_saved_input_unpacks_as_the_same_object_and_output_gets_its_node():
    seen = {}

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(x, y, None)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y, nothing = ctx.saved_tensors
            seen.update(x=x, y=y, nothing=nothing)
            return g * 2

    x = leaf(1.0)
    out = F.apply(x)
    out.sum().backward()
    assert seen["x"] is x
    assert seen["y"] is not out and seen["y"].grad_fn is out.grad_fn and seen["y"].requires_grad
    assert seen["nothing"] is None


def test_saved_tensors_after_backward_are_freed():
    x = leaf(1.0)
    y = MyReLU.apply(x)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        _ = y.grad_fn.saved_tensors


def test_modified_saved_output_error_names_the_function():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    y = F.apply(leaf(1.0, 1.0))
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[dispatchcore.FloatTensor \[2\]\], which is output 0 of F, is at "
                                           r"version 1; expected version 0 instead"):
        y.sum().backward()


def test_needs_input_grad_per_argument():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, a, k, b):
            seen.append(ctx.needs_input_grad)
            return a * k + b

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g, None, None

    F.apply(leaf(1.0), 2, dc.ones(1)).sum().backward()
    assert seen == [(True, False, False), (True, False, False)]


def test_ctx_arbitrary_attributes():
    class F(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = leaf(1.0)
    F.apply(x, 7).sum().backward()
    assert x.grad.tolist() == [7.0]


def test_save_for_backward_non_tensor_raises_only_when_recording():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    F.apply(dc.ones(1))  # no node: torch checks nothing
    with pytest.raises(TypeError, match="^save_for_backward can only save variables, but argument 1 is of type int$"):
        F.apply(leaf(1.0))


# --- setup_context style --------------------------------------------------------------------
class Scale(Function):
    @staticmethod
    def forward(x, k=3.0):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.k, None


def test_setup_context_style():
    x = leaf(1.0, 2.0)
    y = Scale.apply(x, 4.0)
    assert type(y.grad_fn).__name__ == "ScaleBackward"
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_setup_context_binds_defaults_and_kwargs():
    x = leaf(1.0)
    y = Scale.apply(x)  # k defaults to 3.0: setup_context sees (x, 3.0)
    assert y.grad_fn.k == 3.0 and y.grad_fn.needs_input_grad == (True, False)
    assert Scale.apply(x, k=5.0).grad_fn.k == 5.0


def test_setup_context_saving_an_input_returned_as_is_raises():
    class F(Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="^An input that has been returned as-is as output is being saved for "
                                           "backward. This is not supported if you override setup_context."):
        F.apply(leaf(1.0))


# --- non-tensor inputs and outputs, kwargs ---------------------------------------------------
def test_non_tensor_outputs_pass_through_and_get_none_grads():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, k, flag=True):
            return x * k, "meta", 7

        @staticmethod
        def backward(ctx, g, g_meta, g_int):
            seen.append((g_meta, g_int))
            return g * 2, None, None

    x = leaf(1.0)
    out, meta, n = F.apply(x, 2)
    assert (meta, n) == ("meta", 7)
    out.sum().backward()
    assert seen == [(None, None)] and x.grad.tolist() == [2.0]


def test_kwargs_bind_at_parameter_positions_without_defaults():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, k=2, y=None, flag=True):
            seen.append((k, flag))
            return x * k + (0 if y is None else y)

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g, None, g

    x, y = leaf(1.0), leaf(1.0)
    F.apply(x, y=y, k=3).sum().backward()
    assert seen == [(3, True), (True, False, True)]  # flag (a default) is not an input
    assert x.grad.tolist() == [1.0] and y.grad.tolist() == [1.0]


def test_kwarg_tensor_is_tracked():
    class F(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, g

    y = leaf(1.0)
    F.apply(dc.ones(1), y=y).sum().backward()
    assert y.grad.tolist() == [1.0]


@pytest.mark.parametrize("call, message", [
    (lambda F, x: F.apply(x, z=1), "forward() got an unexpected keyword argument 'z'"),
    (lambda F, x: F.apply(x, 3, k=4), "forward() got multiple values for argument 'k'"),
    (lambda F, x: F.apply(x, y=x), "forward() missing required argument: 'k' (position 1)"),
])
def test_kwarg_binding_errors(call, message):
    class F(Function):
        @staticmethod
        def forward(ctx, x, k=2, y=None):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError) as info:
        call(F, leaf(1.0))
    assert str(info.value) == message


# --- output wrapping (custom_function.cpp) -------------------------------------------------------------
def test_input_returned_as_is_gets_an_alias():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf(1.0)
    r = Ident.apply(x)
    assert r is not x and r._base is x and type(r.grad_fn).__name__ == "IdentBackward"
    r.sum().backward()
    assert x.grad.tolist() == [3.0]
    plain = dc.ones(1)
    r2 = Ident.apply(plain)  # no node: still a fresh alias (view_as under no_grad)
    assert r2 is not plain and r2._base is plain and not r2.requires_grad


def test_same_output_returned_twice():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            return y, y

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + g2

    x = leaf(1.0)
    a, b = F.apply(x)
    assert a is b and a._output_nr == 1
    (a + b).sum().backward()
    assert x.grad.tolist() == [2.0]


def test_mark_dirty_returns_same_object_with_new_history_and_bumps_twice():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf(1.0, 1.0)
    b = x * 1
    v0 = b._version
    r = AddOne.apply(b)
    assert r is b
    assert b._version - v0 == 2  # the in-place op, then get_and_bump_dirty
    assert type(b.grad_fn).__name__ == "AddOneBackward"
    r.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_mark_dirty_on_plain_tensor_without_grad():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    b = dc.ones(1)
    r = AddOne.apply(b)
    assert r is b and b._version == 2 and b.grad_fn is None and not b.requires_grad


def test_mark_dirty_leaf_that_requires_grad_raises():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError,
                       match="^a leaf Variable that requires grad has been used in an in-place operation.$"):
        AddOne.apply(leaf(1.0))


def test_mark_dirty_leaf_under_no_grad_returns_detached_alias():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf(1.0)
    with dc.no_grad():
        r = AddOne.apply(x)
    assert r is not x and not r.requires_grad and x._version == 2


def test_dirty_not_returned_raises():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError) as info:
        F.apply(leaf(1.0) * 1)
    assert str(info.value) == (
        "Some elements marked as dirty during the forward method were not returned as output. The inputs "
        "that are modified inplace must all be outputs of the Function.")


def test_mark_dirty_of_non_input_warns():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.warns(UserWarning, match="^ctx.mark_dirty\\(\\) received a tensor that was not an input."):
        r = F.apply(leaf(1.0))
    assert type(r.grad_fn).__name__ == "FBackward"


def test_dirty_view_with_several_outputs_raises():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x, x * 2

        @staticmethod
        def backward(ctx, g, h):
            return g

    base = leaf(1.0, 1.0) * 1
    with pytest.raises(RuntimeError, match="^If your Function modifies inplace an input that is a view of another"):
        F.apply(base.view(2))


def test_mark_non_differentiable_output():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y, z = x * 2, x * 3
            ctx.mark_non_differentiable(z)
            return y, z

        @staticmethod
        def backward(ctx, gy, gz):
            seen.append(gz.tolist())
            return gy * 2

    x = leaf(1.0, 1.0)
    y, z = F.apply(x)
    assert y.requires_grad and not z.requires_grad and z.grad_fn is None
    y.sum().backward()
    assert seen == [[0.0, 0.0]]  # materialized zeros for the non-differentiable output
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_differentiable_input_output_is_detached_alias():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf(1.0)
    r = F.apply(x)
    assert r is not x and not r.requires_grad and r.grad_fn is None and x.requires_grad


def test_integer_output_is_not_differentiable():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x.argmax()

        @staticmethod
        def backward(ctx, g):
            return None

    r = F.apply(leaf(1.0, 3.0))
    assert not r.requires_grad and r.grad_fn is None


def test_set_materialize_grads_false_passes_none():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, gy, gz):
            seen.append((gy is None, gz is None))
            return gy * 2

    y, _ = F.apply(leaf(1.0))
    y.sum().backward()
    assert seen == [(False, True)]


def test_materialize_grads_default_gives_zeros():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, gy, gz):
            seen.append(gz.tolist())
            return gy * 2 + gz

    x = leaf(1.0, 1.0)
    y, _ = F.apply(x)
    y.sum().backward()
    assert seen == [[0.0, 0.0]] and x.grad.tolist() == [2.0, 2.0]


# --- what backward returns -------------------------------------------------------------------
def test_surplus_trailing_none_gradients_are_dropped():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = leaf(1.0)
    F.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0]


def test_broadcast_gradient_is_summed_to_input_shape():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return dc.ones(3, 2)

    x = leaf(1.0, 1.0)
    F.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_gradient_dtype_is_cast_to_input_dtype():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return dc.ones(2, dtype=dc.float64)

    x = leaf(1.0, 1.0)
    F.apply(x).sum().backward()
    assert x.grad.dtype == dc.float32


def test_vjp_alone_is_the_backward():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 5

    x = leaf(1.0)
    F.apply(x).sum().backward()
    assert x.grad.tolist() == [5.0]


def test_differentiable_backward_supports_double_backward():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    x = dc.tensor(2.0, requires_grad=True)
    (g,) = dc.autograd.grad(Cube.apply(x), x, create_graph=True)
    assert g.item() == 12.0 and g.requires_grad
    (g2,) = dc.autograd.grad(g, x)
    assert g2.item() == 12.0


# --- errors (python_function.cpp) ------------------------------------------------------------------------
def test_incorrect_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf(1.0)
    with pytest.raises(RuntimeError) as info:
        Bad.apply(x, x).sum().backward()
    assert str(info.value) == "function BadBackward returned an incorrect number of gradients (expected 2, got 1)"


def test_gradient_for_non_tensor_input():
    class Bad2(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError) as info:
        Bad2.apply(leaf(1.0), 3).sum().backward()
    assert str(info.value) == ("function Bad2Backward returned a gradient different than None at position 2, but "
                               "the corresponding forward input was not a Variable")


def test_gradient_of_wrong_shape():
    class Bad3(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return dc.ones(3)

    with pytest.raises(RuntimeError) as info:
        Bad3.apply(leaf(1.0, 1.0)).sum().backward()
    assert str(info.value) == ("Function Bad3Backward returned an invalid gradient at index 0 - got [3] but "
                               "expected shape compatible with [2]")


def test_gradient_that_is_not_a_tensor():
    class Bad4(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 1.0

    with pytest.raises(RuntimeError, match="^expected Variable or None \\(got float\\)$"):
        Bad4.apply(leaf(1.0)).sum().backward()


def test_missing_backward():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError) as info:
        NoBackward.apply(leaf(1.0)).sum().backward()
    assert str(info.value) == ("You must implement either the backward or vjp method for your custom "
                               "autograd.Function to use it with backward mode AD.")


def test_missing_forward():
    class NoForward(Function):
        pass

    with pytest.raises(NotImplementedError,
                       match="^You must implement the forward function for custom autograd.Function.$"):
        NoForward.apply(leaf(1.0))


def test_backward_and_vjp_both_defined_raises_at_backward():
    class Both(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    y = Both.apply(leaf(1.0))  # defining and applying is fine, as in torch
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == ("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")


def test_instantiating_warns_and_calling_raises():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        fn = MyReLU()
    with pytest.raises(RuntimeError) as info:
        fn(leaf(1.0))
    assert str(info.value).startswith(
        "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
        "function with static forward method.")


# --- once_differentiable ------------------------------------------------------------------------
class OnceCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert not dc.is_grad_enabled()
        return g * 3 * x * x


def test_once_differentiable_first_order_works():
    x = leaf(2.0)
    (g,) = dc.autograd.grad(OnceCube.apply(x).sum(), x)
    assert g.tolist() == [12.0] and not g.requires_grad


def test_once_differentiable_create_graph_gives_non_differentiable_grad():
    x = leaf(2.0)
    (g,) = dc.autograd.grad(OnceCube.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [12.0] and not g.requires_grad  # the incoming grad (ones) does not require grad
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a grad_fn$"):
        g.sum().backward()


def test_once_differentiable_double_backward_error():
    x = leaf(2.0)
    go = dc.ones(1, requires_grad=True)
    (g,) = dc.autograd.grad(OnceCube.apply(x), x, go, create_graph=True)
    assert g.requires_grad and type(g.grad_fn).__name__ == "Error"
    with pytest.raises(RuntimeError) as info:
        g.sum().backward()
    assert str(info.value) == "trying to differentiate twice a function that was marked with @once_differentiable"


# --- ctx misuse ------------------------------------------------------------------------------
def _fn(forward, backward=lambda ctx, g: g, name="MyFn"):
    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def test_mark_dirty_and_mark_non_differentiable_refuse_non_tensors_even_without_grad():
    """torch 2.13's texts stop after "argument " and "got " (no index or type follows)."""
    def dirty(ctx, x):
        ctx.mark_dirty(3)
        return x * 2

    def non_diff(ctx, x):
        ctx.mark_non_differentiable(None)
        return x * 2

    with pytest.raises(RuntimeError, match="^mark_dirty can only accept variables, but argument $"):
        _fn(dirty).apply(dc.ones(2))
    with pytest.raises(RuntimeError, match="^mark_non_differentiable only accepts variable arguments, but got $"):
        _fn(non_diff).apply(leaf(1.0))


def test_mark_dirty_of_a_returned_non_input_warns_and_of_a_view_raises():
    def fresh(ctx, x):
        z = x * 1
        ctx.mark_dirty(z)
        return z

    def view(ctx, x):
        v = (x * 1)[0]  # a view of an intermediate: not a leaf, does not require grad
        ctx.mark_dirty(v)
        return v

    def not_returned(ctx, x):
        ctx.mark_dirty(x * 1)
        return x * 2

    with pytest.warns(UserWarning, match="received a tensor that was not an input"):
        assert _fn(fresh).apply(leaf(1.0, 2.0)).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="^ctx.mark_dirty\\(\\) received a tensor that was not an input"):
        _fn(view).apply(leaf(1.0, 2.0).clone())
    with pytest.raises(RuntimeError, match="^Some elements marked as dirty"):  # no warning: not returned
        _fn(not_returned).apply(leaf(1.0, 2.0))


def test_gradient_on_another_device_raises_and_a_0d_one_is_copied():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="^Function MyFnBackward returned an invalid gradient at index 0 - "
                                           "expected device cpu but got meta$"):
        _fn(lambda ctx, x: x * 2, lambda ctx, g: dc.ones(2, device="meta")).apply(x).sum().backward()
    s = dc.tensor(1.0, requires_grad=True)
    with pytest.raises(NotImplementedError, match="^Cannot copy out of meta tensor; no data!$"):  # to(cpu)
        _fn(lambda ctx, x: x * 2, lambda ctx, g: dc.tensor(3.0, device="meta")).apply(s).backward()


def test_complex_gradient_for_a_real_input_raises_torchs_check_text():
    with pytest.raises(RuntimeError, match="^Expected isFloatingType\\(grad.scalar_type\\(\\)\\) \\|\\| "
                                           "\\(input_is_complex == grad_is_complex\\) to be true"):
        _fn(lambda ctx, x: x * 2, lambda ctx, g: dc.ones(2, dtype=dc.complex64)).apply(leaf(1.0, 2.0)).sum().backward()


def test_backward_returning_a_non_tensor_names_its_type_as_torch():
    import numpy as np

    with pytest.raises(RuntimeError, match="^expected Variable or None \\(got numpy.ndarray\\)$"):
        _fn(lambda ctx, x: x * 2, lambda ctx, g: np.ones(2)).apply(leaf(1.0, 2.0)).sum().backward()
    with pytest.raises(RuntimeError, match="^expected Variable or None \\(got float\\)$"):
        _fn(lambda ctx, x: x * 2, lambda ctx, g: 1.0).apply(leaf(1.0, 2.0)).sum().backward()


def test_error_node_of_once_differentiable_is_named_as_torch():
    x = leaf(1.0, 2.0)
    fn = _fn(lambda ctx, x: x * 2, once_differentiable(lambda ctx, g: g * 2), "Twice")
    y = fn.apply(x)
    (g,) = dc.autograd.grad(y, x, dc.ones(2, requires_grad=True), create_graph=True)
    assert g.grad_fn.name() == "torch::autograd::Error" and type(g.grad_fn).__name__ == "Error"
