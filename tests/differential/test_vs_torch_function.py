"""Differential tests: the same custom-Function programs run on torch 2.13 and on dispatchcore.

Each program takes the library module (``torch`` or ``dispatchcore``) and returns plain data:
gradients as lists, grad_fn class names, requires_grad flags, version deltas, identity checks.
An exception becomes ``(type name, message)``, with ``dispatchcore.`` spelled ``torch.``.
"""

from __future__ import annotations

import warnings

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def outcome(program, L):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = program(L)
        msgs = [f"{w.category.__name__}: {str(w.message).split('.')[0]}" for w in caught
                if "reference cycle" not in str(w.message)]  # torch's create_graph=True backward() note
        return ("ok", result, msgs)
    except Exception as e:  # noqa: BLE001 - compared across libraries
        return (type(e).__name__, str(e).replace("dispatchcore.", "torch."))


def name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def grads(*ts):
    return [None if t.grad is None else t.grad.tolist() for t in ts]


# --- Function definitions, parameterised by library --------------------------------------------
def functions(L):
    F = L.autograd.Function

    class MyReLU(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0)

    class MyReLUSetup(F):
        @staticmethod
        def forward(x):
            return x.clamp(min=0)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0)

    class AddOne(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Ident(F):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class TwoOut(F):
        @staticmethod
        def forward(ctx, x):
            y, idx = x * 2, x.argmax()
            ctx.mark_non_differentiable(idx)
            return y, idx

        @staticmethod
        def backward(ctx, gy, gidx):
            return gy * 2

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    class OnceCube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        @L.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    return {k: v for k, v in locals().items() if isinstance(v, type)}


# --- programs -------------------------------------------------------------------------------------
def p_relu(L):
    fn = functions(L)
    x = L.tensor([-1.0, 2.0, 0.5], requires_grad=True)
    y = fn["MyReLU"].apply(x)
    z = fn["MyReLUSetup"].apply(x)
    (y * 2 + z).sum().backward()
    return y.tolist(), name(y), name(z), y.requires_grad, grads(x), y.grad_fn.needs_input_grad


def p_no_grad_and_no_requires_grad(L):
    fn = functions(L)
    x = L.ones(2, requires_grad=True)
    with L.no_grad():
        a = fn["MyReLU"].apply(x)
    b = fn["MyReLU"].apply(L.ones(2))
    return name(a), a.requires_grad, name(b), b.requires_grad


def p_mark_dirty(L):
    fn = functions(L)
    x = L.ones(2, requires_grad=True)
    b = x * 1
    v0 = b._version
    r = fn["AddOne"].apply(b)
    info = (r is b, b._version - v0, name(b), b.tolist())
    r.sum().backward()
    return info, grads(x)


def p_mark_dirty_leaf(L):
    return functions(L)["AddOne"].apply(L.ones(2, requires_grad=True))


def p_mark_dirty_no_grad(L):
    x = L.ones(2, requires_grad=True)
    with L.no_grad():
        r = functions(L)["AddOne"].apply(x)
    plain = L.ones(2)
    r2 = functions(L)["AddOne"].apply(plain)
    return r is x, r.requires_grad, x._version, r2 is plain, plain._version, name(r2)


def p_ident(L):
    x = L.ones(2, requires_grad=True)
    r = functions(L)["Ident"].apply(x)
    info = (r is x, r._base is x, name(r), r.requires_grad)
    r.sum().backward()
    plain = L.ones(2)
    r2 = functions(L)["Ident"].apply(plain)
    return info, grads(x), r2 is plain, r2._base is plain, r2.requires_grad


def p_non_differentiable(L):
    x = L.tensor([1.0, 3.0, 2.0], requires_grad=True)
    y, idx = functions(L)["TwoOut"].apply(x)
    y.sum().backward()
    return name(y), idx.requires_grad, name(idx), idx.item(), grads(x)


def p_materialize(L):
    seen = []

    class M(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, off):
            if off:
                ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(None if g2 is None else g2.tolist())
            return g1 * 2, None

    x = L.ones(2, requires_grad=True)
    for off in (False, True):
        y, _ = M.apply(x, off)
        y.sum().backward()
    return seen, grads(x)


def p_non_tensor_io_and_kwargs(L):
    seen = []

    class K(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k=2, y=None, flag=True):
            return x * k + y, "meta", 7

        @staticmethod
        def backward(ctx, g, gs, gi):
            seen.append((gs, gi, ctx.needs_input_grad))
            return g * 3, None, g

    x, y = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
    out, s, i = K.apply(x, y=y, k=3)
    out.sum().backward()
    return s, i, seen, grads(x, y), [(None if n is None else type(n).__name__, nr)
                                     for n, nr in out.grad_fn.next_functions]


@pytest.mark.parametrize("kwargs", [dict(z=1), dict(y=None)], ids=["unknown", "gap"])
def test_kwarg_errors(kwargs):
    def program(L):
        class K(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2, y=None):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g

        return K.apply(L.ones(1, requires_grad=True), **kwargs)

    assert outcome(program, dc) == outcome(program, torch)


def p_same_output_twice(L):
    class T(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            return y, y

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + g2

    x = L.ones(2, requires_grad=True)
    a, b = T.apply(x)
    (a + b).sum().backward()
    return a is b, name(a), grads(x)


def p_double_backward(L):
    x = L.tensor(2.0, requires_grad=True)
    (g,) = L.autograd.grad(functions(L)["Cube"].apply(x), x, create_graph=True)
    (g2,) = L.autograd.grad(g, x)
    return g.item(), g.requires_grad, g2.item()


def p_once_differentiable_plain(L):
    x = L.tensor([2.0], requires_grad=True)
    (g,) = L.autograd.grad(functions(L)["OnceCube"].apply(x).sum(), x, create_graph=True)
    return g.tolist(), g.requires_grad, g.sum().backward()


def p_once_differentiable_twice(L):
    x = L.tensor([2.0], requires_grad=True)
    go = L.ones(1, requires_grad=True)
    (g,) = L.autograd.grad(functions(L)["OnceCube"].apply(x), x, go, create_graph=True)
    info = (g.requires_grad, name(g))
    try:
        g.sum().backward()
    except RuntimeError as e:
        return info, str(e)


def p_saved_output_unpacked(L):
    seen = {}

    class S(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            seen.update(x_same=x is seen["x"], y_same=y is seen["y"], y_rg=y.requires_grad,
                        y_fn=name(y), x_rg=x.requires_grad)
            return g * 2

    seen["x"] = x = L.ones(2, requires_grad=True)
    seen["y"] = y = S.apply(x)
    y.sum().backward()
    return {k: v for k, v in seen.items() if k not in ("x", "y")}


def p_saved_modified(L):
    class S(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    y = S.apply(L.ones(2, requires_grad=True))
    y.mul_(2)
    y.sum().backward()


def p_grad_dtype_and_broadcast(L):
    class D(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return L.ones(3, 2, dtype=L.float64)

    x = L.ones(2, requires_grad=True)
    D.apply(x).sum().backward()
    return grads(x), str(x.grad.dtype).split(".")[-1]


def p_modes_inside(L):
    seen = []

    class G(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(("fwd", L.is_grad_enabled(), L.is_inference_mode_enabled()))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(("bwd", L.is_grad_enabled()))
            return g

    x = L.ones(1, requires_grad=True)
    G.apply(x).sum().backward()
    G.apply(x).sum().backward(create_graph=True)
    return seen


def p_hook_order_through_function(L):
    log = []
    x = L.ones(2, requires_grad=True)
    a = functions(L)["MyReLU"].apply(x)
    a.register_hook(lambda g: log.append("a"))
    b = x * 3
    b.register_hook(lambda g: log.append("b"))
    c = functions(L)["Cube"].apply(a * b)
    c.register_hook(lambda g: log.append("c"))
    x.register_hook(lambda g: log.append("x"))
    c.sum().backward()
    return log, grads(x)


# --- the modes and the engine around Functions ------------------------------------------------------
def keys(L, t):
    return repr(torch._C._dispatch_keys(t) if L is torch else dc.dispatch_keys(t))


def p_mode_decorators(L):
    seen = []
    dec = L.set_grad_enabled(False)
    seen.append(L.is_grad_enabled())

    @dec
    def f():
        return L.is_grad_enabled()

    @L.no_grad
    def g():
        yield L.is_grad_enabled()
        yield L.is_grad_enabled()

    @L.inference_mode
    def h():
        return L.is_inference_mode_enabled(), L.is_grad_enabled()

    seen.append(L.is_grad_enabled())
    it = g()
    seen += [f(), next(it), L.is_grad_enabled(), next(it), h()]
    return seen


def p_mode_nesting(L):
    seen = []
    with L.no_grad():
        with L.inference_mode():
            with L.enable_grad():
                seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
            with L.inference_mode(False):
                seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled(), L.ones(1).is_inference()))
            seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
        seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
    return seen


def p_guard_instance_reentered(L):
    """Re-entering one guard instance nested leaks the inner state in torch; run in a throwaway thread."""
    import threading

    out = []

    def body():
        for make in (L.no_grad, L.inference_mode):
            guard = make()
            with guard:
                with guard:
                    pass
            out.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    return out


def p_inference_tensors(L):
    x = L.ones(2, requires_grad=True)
    with L.inference_mode():
        t = L.ones(2)
        y = functions(L)["MyReLU"].apply(x)  # autograd keys excluded: no node
        with L.enable_grad():
            z = x * 2
    info = [t.is_inference(), keys(L, t), name(y), y.is_inference(), name(z), (t * 2).is_inference()]
    for bad in (lambda: t._version, lambda: t.add_(1), lambda: t.requires_grad_(),
                lambda: functions(L)["MyReLU"].apply(x * t)):
        try:
            bad()
            info.append("no error")
        except RuntimeError as e:
            info.append(str(e)[:60])
    return info


def p_function_saves_inference_tensor(L):
    with L.inference_mode():
        t = L.ones(2).requires_grad_()  # an inference tensor that requires grad, made inside
    functions(L)["MyReLU"].apply(t)  # outside: a node is recorded and saving t fails


def p_backward_inputs_and_grad_capture(L):
    x = L.ones(2, requires_grad=True)
    h = functions(L)["MyReLU"].apply(x * 2)
    h.register_hook(lambda g: g * 10)
    out = functions(L)["Cube"].apply(h)
    gh, gx = L.autograd.grad(out.sum(), [h, x], retain_graph=True)
    out.sum().backward(inputs=[h])
    return gh.tolist(), gx.tolist(), grads(h, x), h.retains_grad


# --- errors ---------------------------------------------------------------------------------------
def p_err_count(L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x = L.ones(1, requires_grad=True)
    Bad.apply(x, x).sum().backward()


def p_err_non_tensor_grad(L):
    class Bad2(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    Bad2.apply(L.ones(1, requires_grad=True), 3).sum().backward()


def p_err_shape(L):
    class Bad3(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return L.ones(3)

    Bad3.apply(L.ones(2, requires_grad=True)).sum().backward()


def p_err_no_backward(L):
    class NoBw(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    NoBw.apply(L.ones(1, requires_grad=True)).sum().backward()


def p_err_backward_and_vjp(L):
    class Both(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    y = Both.apply(L.ones(1, requires_grad=True))
    y.sum().backward()


def p_err_save_non_tensor(L):
    class S(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, "not a tensor")
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    S.apply(L.ones(1))  # fine without a node
    S.apply(L.ones(1, requires_grad=True))


def p_err_dirty_not_returned(L):
    class D(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    D.apply(L.ones(1, requires_grad=True) * 1)


def p_err_as_is_saved(L):
    class A(L.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            return g

    A.apply(L.ones(1, requires_grad=True))


def p_err_instantiate(L):
    fn = functions(L)["MyReLU"]()
    fn(L.ones(1))


def p_warn_dirty_non_input(L):
    class W(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g

    return name(W.apply(L.ones(1, requires_grad=True)))


PROGRAMS = [p for n, p in sorted(globals().items()) if n.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__[2:] for p in PROGRAMS])
def test_same_outcome_as_torch(program):
    expected = outcome(program, torch)
    got = outcome(program, dc)
    assert got == expected


def test_every_error_program_does_raise_in_torch():
    for p in PROGRAMS:
        if p.__name__.startswith("p_err_"):
            assert outcome(p, torch)[0] != "ok", p.__name__
