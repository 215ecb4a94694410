"""Autograd misuse against torch 2.13: the exception type and text, or the result, of each program.

Custom ``Function`` ctx misuse (what is saved, marked dirty or non-differentiable, what backward
returns, saved tensors freed or modified), ``x.grad = ...`` and ``grad_dtype`` checks, and the
host-data methods of meta tensors. Each program takes the library module (``torch`` or
``dispatchcore``); an exception becomes ``(type name, text)`` with ``torch.`` spelled
``dispatchcore.``; warnings are compared by their text (torch's C++ ``(Triggered internally at
...)`` suffix dropped).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def outcome(program, m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", program(m))
        except Exception as e:  # noqa: BLE001 - compared across libraries
            result = (type(e).__name__, str(e).replace("torch.", "dispatchcore."))
    texts = [str(w.message).split(" (Triggered internally at")[0].replace("torch.", "dispatchcore.")
             for w in caught if "non-leaf Tensor" not in str(w.message)]
    return result, texts


def x2(m):
    return m.tensor([1.0, 2.0], requires_grad=True)


def function(m, forward, backward=lambda ctx, g: g, name="MyFn"):
    """A custom Function class named ``name`` (its node is ``<name>Backward``)."""
    return type(name, (m.autograd.Function,), {"forward": staticmethod(forward),
                                               "backward": staticmethod(backward)})


def _square(m):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

    return function(m, forward, backward, "Square")


def _dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


# --- custom Function ctx misuse --------------------------------------------------------------------
def _save_non_tensor(m):
    def forward(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 2
    function(m, forward).apply(x2(m))


def _save_non_tensor_without_grad(m):
    def forward(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 2
    return function(m, forward).apply(x2(m).detach()).tolist()  # nothing is recorded: nothing checked


def _save_list(m):
    def forward(ctx, x):
        ctx.save_for_backward([x])
        return x * 2
    function(m, forward).apply(x2(m))


def _save_none_and_twice(m):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_backward(None, x * 3)  # the second call replaces the first
        return x * 2

    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b if a is None else None

    x = x2(m)
    function(m, forward, backward).apply(x).sum().backward()
    return x.grad.tolist()


def _saved_tensors_after_backward(m):
    y = _square(m).apply(x2(m))
    y.sum().backward()
    return y.grad_fn.saved_tensors


def _saved_tensors_after_backward_with_retain_graph(m):
    y = _square(m).apply(x2(m))
    y.sum().backward(retain_graph=True)
    return [t.tolist() for t in y.grad_fn.saved_tensors]


def _backward_twice(m):
    y = _square(m).apply(x2(m)).sum()
    y.backward()
    y.backward()


def _backward_twice_nothing_saved(m):
    x = x2(m)
    y = function(m, lambda ctx, x: x * 2, lambda ctx, g: g * 2).apply(x)
    y.backward(m.ones(2))
    y.backward(m.ones(2))  # no saved tensor to miss: allowed, as for built-in nodes
    return x.grad.tolist()


def _grad_twice(m):
    x = x2(m)
    y = _square(m).apply(x).sum()
    m.autograd.grad(y, x)
    m.autograd.grad(y, x)


def _saved_input_modified(m):
    x = x2(m).clone()
    y = _square(m).apply(x)
    x.add_(1)
    y.sum().backward()


def _saved_leaf_modified(m):
    x = x2(m)
    y = _square(m).apply(x)
    with m.no_grad():
        x.mul_(2)
    y.sum().backward()


def _saved_output_modified(m):
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    y = function(m, forward, backward, "SaveOut").apply(x2(m))
    y.mul_(2)
    y.sum().backward()


def _mark_dirty_not_an_input(m):
    def forward(ctx, x):
        z = x * 1
        ctx.mark_dirty(z)
        return z
    return function(m, forward).apply(x2(m)).tolist()  # a warning, and the output is kept


def _mark_dirty_view_not_an_input(m):
    def forward(ctx, x):
        v = x[0]
        ctx.mark_dirty(v)
        return v
    function(m, forward).apply(x2(m).clone())


def _mark_dirty_view_of_an_intermediate(m):
    def forward(ctx, x):
        v = (x * 1)[0]
        ctx.mark_dirty(v)
        return v
    function(m, forward).apply(x2(m))


def _mark_dirty_not_returned(m):
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x * 1
    function(m, forward).apply(x2(m).clone())


def _mark_dirty_a_non_tensor(m):
    def forward(ctx, x):
        ctx.mark_dirty(3)
        return x * 2
    function(m, forward).apply(x2(m).detach())


def _mark_dirty_leaf(m):
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    function(m, forward).apply(x2(m))


def _mark_non_differentiable_a_non_tensor(m):
    def forward(ctx, x):
        ctx.mark_non_differentiable(None)
        return x * 2
    function(m, forward).apply(x2(m))


def _mark_non_differentiable_not_an_output(m):
    def forward(ctx, x):
        ctx.mark_non_differentiable(x)
        return x * 2
    return function(m, forward).apply(x2(m)).requires_grad


def _backward_returns(value, inputs=1):
    def program(m):
        forward = (lambda ctx, x: x * 2) if inputs == 1 else (lambda ctx, x, y: x * y)
        fn = function(m, forward, lambda ctx, g: value(m, g))
        xs = [x2(m) for _ in range(inputs)]
        fn.apply(*xs).sum().backward()
        return [None if x.grad is None else (x.grad.tolist(), _dtype_name(x.grad)) for x in xs]
    return program


def _backward_0d_on_meta(m):
    x = m.tensor(1.0, requires_grad=True)
    function(m, lambda ctx, x: x * 2, lambda ctx, g: m.tensor(3.0, device="meta")).apply(x).backward()


def _grad_for_a_non_tensor_input(m):
    fn = function(m, lambda ctx, x, k: x * k, lambda ctx, g: (g, g))
    fn.apply(x2(m), 2).sum().backward()


def _no_backward(m):
    fn = type("NoBackward", (m.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2)})
    fn.apply(x2(m)).sum().backward()


def _materialize_grads_off(m):
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    def backward(ctx, g1, g2):
        return g1 if g2 is None else g1 + g2

    x = x2(m)
    a, _ = function(m, forward, backward).apply(x)
    a.sum().backward()
    return x.grad.tolist()


FUNCTION_PROGRAMS = {
    "save_for_backward-non-tensor": _save_non_tensor,
    "save_for_backward-non-tensor-without-grad": _save_non_tensor_without_grad,
    "save_for_backward-list": _save_list,
    "save_for_backward-None-and-twice": _save_none_and_twice,
    "saved_tensors-after-backward": _saved_tensors_after_backward,
    "saved_tensors-after-backward-retain_graph": _saved_tensors_after_backward_with_retain_graph,
    "backward-twice": _backward_twice,
    "backward-twice-nothing-saved": _backward_twice_nothing_saved,
    "autograd.grad-twice": _grad_twice,
    "saved-input-modified": _saved_input_modified,
    "saved-leaf-modified": _saved_leaf_modified,
    "saved-output-modified": _saved_output_modified,
    "mark_dirty-not-an-input": _mark_dirty_not_an_input,
    "mark_dirty-view-not-an-input": _mark_dirty_view_not_an_input,
    "mark_dirty-view-of-an-intermediate": _mark_dirty_view_of_an_intermediate,
    "mark_dirty-not-returned": _mark_dirty_not_returned,
    "mark_dirty-non-tensor": _mark_dirty_a_non_tensor,
    "mark_dirty-leaf": _mark_dirty_leaf,
    "mark_non_differentiable-non-tensor": _mark_non_differentiable_a_non_tensor,
    "mark_non_differentiable-not-an-output": _mark_non_differentiable_not_an_output,
    "backward-too-few-gradients": _backward_returns(lambda m, g: g, inputs=2),
    "backward-too-many-gradients": _backward_returns(lambda m, g: (g, g)),
    "backward-surplus-Nones-dropped": _backward_returns(lambda m, g: (g, None, None)),
    "backward-returns-None": _backward_returns(lambda m, g: None),
    "backward-returns-a-list": _backward_returns(lambda m, g: [g, g], inputs=2),
    "backward-returns-a-float": _backward_returns(lambda m, g: 1.0),
    "backward-returns-a-str": _backward_returns(lambda m, g: "a"),
    "backward-returns-an-ndarray": _backward_returns(lambda m, g: np.ones(2)),
    "backward-wrong-shape": _backward_returns(lambda m, g: m.ones(3)),
    "backward-broadcast-shape-reduced": _backward_returns(lambda m, g: m.ones(3, 2)),
    "backward-wrong-dtype-cast": _backward_returns(lambda m, g: m.ones(2, dtype=m.float64)),
    "backward-integer-gradient-cast": _backward_returns(lambda m, g: m.ones(2, dtype=m.int64)),
    "backward-complex-gradient-for-real-input": _backward_returns(lambda m, g: m.ones(2, dtype=m.complex64)),
    "backward-wrong-device": _backward_returns(lambda m, g: m.ones(2, device="meta")),
    "backward-0d-gradient-on-another-device": _backward_returns(lambda m, g: m.tensor(1.0, device="meta")),
    "backward-0d-gradient-on-another-device-for-0d-input": _backward_0d_on_meta,
    "backward-gradient-for-non-tensor-input": _grad_for_a_non_tensor_input,
    "no-backward": _no_backward,
    "materialize_grads-off": _materialize_grads_off,
}


# --- x.grad = ... and grad_dtype ---------------------------------------------------------------------
def _assign(make_target, make_grad):
    def program(m):
        t = make_target(m)
        g = make_grad(m, t)
        t.grad = g
        return None if t.grad is None else (list(t.grad.shape), _dtype_name(t.grad))
    return program


def _leaf(m):
    return m.zeros(2, 3, requires_grad=True)


def _grad_dtype_none_then_assign(m):
    x = _leaf(m)
    x.grad_dtype = None
    x.grad = m.zeros(2, 3, dtype=m.float64)
    return _dtype_name(x.grad), x.grad_dtype


def _grad_dtype_set_then_backward(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.grad_dtype = m.float64
    (x * 2).sum().backward()
    return _dtype_name(x.grad), x.grad.tolist(), str(x.grad_dtype).rpartition(".")[2]


def _grad_dtype_of_a_non_leaf(m):
    return (_leaf(m) * 2).grad_dtype


def _set_grad_dtype_of_a_non_leaf(m):
    (_leaf(m) * 2).grad_dtype = None


def _set_grad_dtype_to_a_str(m):
    _leaf(m).grad_dtype = "float64"


def _delete_grad(m):
    x = _leaf(m)
    x.grad = m.ones(2, 3)
    del x.grad
    return x.grad


GRAD_PROGRAMS = {
    "same": _assign(_leaf, lambda m, t: m.ones(2, 3)),
    "None": _assign(_leaf, lambda m, t: None),
    "wrong-size": _assign(_leaf, lambda m, t: m.ones(3, 2)),
    "0-d": _assign(_leaf, lambda m, t: m.ones(())),
    "wrong-dtype-double": _assign(_leaf, lambda m, t: m.ones(2, 3, dtype=m.float64)),
    "wrong-dtype-long": _assign(_leaf, lambda m, t: m.ones(2, 3, dtype=m.int64)),
    "wrong-dtype-half": _assign(_leaf, lambda m, t: m.ones(2, 3, dtype=m.float16)),
    "wrong-dtype-and-size": _assign(_leaf, lambda m, t: m.ones(3, dtype=m.float64)),
    "double-tensor-float-grad": _assign(lambda m: m.zeros(2, dtype=m.float64, requires_grad=True),
                                        lambda m, t: m.ones(2)),
    "integer-tensor": _assign(lambda m: m.zeros(2, dtype=m.int64), lambda m, t: m.ones(2, dtype=m.int64)),
    "integer-tensor-float-grad": _assign(lambda m: m.zeros(2, dtype=m.int64), lambda m, t: m.ones(2)),
    "meta-grad": _assign(_leaf, lambda m, t: m.ones(2, 3, device="meta")),
    "meta-tensor-cpu-grad": _assign(lambda m: m.zeros(2, 3, device="meta"), lambda m, t: m.ones(2, 3)),
    "meta-tensor-meta-grad": _assign(lambda m: m.zeros(2, 3, device="meta"),
                                     lambda m, t: m.ones(2, 3, device="meta")),
    "a-list": _assign(_leaf, lambda m, t: [[0.0] * 3] * 2),
    "a-float": _assign(_leaf, lambda m, t: 1.0),
    "an-ndarray": _assign(_leaf, lambda m, t: np.zeros((2, 3), np.float32)),
    "itself": _assign(_leaf, lambda m, t: t),
    "non-leaf": _assign(lambda m: _leaf(m) * 2, lambda m, t: m.ones(2, 3)),
    "non-leaf-wrong-size": _assign(lambda m: _leaf(m) * 2, lambda m, t: m.ones(3)),
    "does-not-require-grad": _assign(lambda m: m.zeros(2, 3), lambda m, t: m.ones(2, 3)),
    "grad-requires-grad": _assign(_leaf, lambda m, t: m.ones(2, 3, requires_grad=True)),
    "non-contiguous-grad": _assign(_leaf, lambda m, t: m.ones(3, 2).t()),
    "expanded-grad": _assign(_leaf, lambda m, t: m.ones(3).expand(2, 3)),
    "grad_dtype-None-then-double": _grad_dtype_none_then_assign,
    "grad_dtype-double-then-backward": _grad_dtype_set_then_backward,
    "grad_dtype-of-non-leaf": _grad_dtype_of_a_non_leaf,
    "set-grad_dtype-of-non-leaf": _set_grad_dtype_of_a_non_leaf,
    "set-grad_dtype-to-str": _set_grad_dtype_to_a_str,
    "del-grad": _delete_grad,
}


# --- meta tensors have no data ----------------------------------------------------------------------
META_PROGRAMS = {
    "tolist": lambda m: m.zeros(2, 3, device="meta").tolist(),
    "tolist-0-d": lambda m: m.zeros((), device="meta").tolist(),
    "tolist-empty": lambda m: m.zeros(0, device="meta").tolist(),
    "item": lambda m: m.zeros((), device="meta").item(),
    "item-one-element": lambda m: m.zeros(1, device="meta").item(),
    "item-many-elements": lambda m: m.zeros(2, 3, device="meta").item(),
    "item-empty": lambda m: m.zeros(0, device="meta").item(),
    "float": lambda m: float(m.zeros((), device="meta")),
    "int": lambda m: int(m.zeros((), device="meta")),
    "bool": lambda m: bool(m.zeros((), device="meta")),
    "numpy": lambda m: m.zeros(2, device="meta").numpy(),
    "numpy-requires-grad": lambda m: m.zeros(2, device="meta", requires_grad=True).numpy(),
    "cpu": lambda m: m.zeros(2, device="meta").cpu(),
}


# --- node names in messages ----------------------------------------------------------------------------
def _saved_through_copy_slices(m):
    a = x2(m).clone()
    c = a * a
    a[0:1].add_(m.tensor(1.0))  # a's grad_fn is now CopySlices: named in the message as torch names it
    c.sum().backward()


def _saved_through_copy_backwards(m):
    b = m.zeros(2)
    b.copy_(x2(m))
    c = b * b
    b.add_(m.tensor(1.0))
    c.sum().backward()


def _saved_custom_function_output(m):
    fn = function(m, lambda ctx, x: x * 2, name="Double")
    y = fn.apply(x2(m))
    c = y * y
    y.add_(m.tensor(1.0))
    c.sum().backward()


MESSAGE_PROGRAMS = {
    "modified-output-of-CopySlices": _saved_through_copy_slices,
    "modified-output-of-CopyBackwards": _saved_through_copy_backwards,
    "modified-output-of-a-custom-Function": _saved_custom_function_output,
}

PROGRAMS = {**{f"Function/{k}": v for k, v in FUNCTION_PROGRAMS.items()},
            **{f"grad/{k}": v for k, v in GRAD_PROGRAMS.items()},
            **{f"meta/{k}": v for k, v in META_PROGRAMS.items()},
            **{f"message/{k}": v for k, v in MESSAGE_PROGRAMS.items()}}


def _plain(value):
    """Results as plain data: dtypes by name."""
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if type(value).__name__ == "dtype":
        return str(value).rpartition(".")[2]
    return value


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_same_outcome_as_torch(program):
    (t_kind, t_value), t_warnings = outcome(PROGRAMS[program], torch)
    (d_kind, d_value), d_warnings = outcome(PROGRAMS[program], dc)
    assert (d_kind, _plain(d_value)) == (t_kind, _plain(t_value))
    assert d_warnings == t_warnings
