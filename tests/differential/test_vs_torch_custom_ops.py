"""``library.custom_op`` against torch 2.13's: schemas, dispatch tables, errors, autograd, versions, opcheck.

Each scenario defines the same operator with both libraries (``m`` is ``dispatchcore`` or
``torch``; the namespaces differ by a suffix so that neither registry sees the other's name) and
compares what a user sees. This file does not use ``from __future__ import annotations``: the
operators' annotations must be real types, as the ones users write.
"""

import re

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


_COUNT = iter(range(10**6))


def _ns(m):
    """A fresh namespace per scenario and library (custom_op replaces a same-named op)."""
    return f"dcdiff{next(_COUNT)}_{'dc' if m is dc else 'pt'}"


def _rows(m, qualname):
    """The dispatch table as ``(key, label)`` rows: where each kernel was registered differs by design."""
    text = (dc.dump_table(qualname) if m is dc else torch._C._dispatch_dump_table(qualname))
    return [(line.split(":")[0], line[line.rindex("["):]) for line in text.splitlines() if line.strip()]


def _both(build):
    """``build(m, ns)`` for both libraries; returns ``{m: (ns, result)}``."""
    out = {}
    for m in (dc, torch):
        ns = _ns(m)
        out[m] = (ns, build(m, ns))
    return out


# --- infer_schema --------------------------------------------------------------------------------------
def _signatures(m):
    T = m.Tensor

    def plain(x: T) -> T: ...
    def numbers(x: T, n: int, s: float = 1.0, flag: bool = True, name: str = "a") -> T: ...
    def optionals(x: T, y: T | None = None, n: int | None = None, d: m.dtype | None = None) -> T: ...
    def lists(xs: list[T], sizes: list[int], ws: list[T | None], fs: list[float] | None = None) -> list[T]: ...
    def scalar(x: T, s: int | float | bool, dev: m.device) -> tuple[T, int]: ...
    def kwonly(x: T, *, k: int = 3, scale: float = 0.5) -> T: ...
    def mutates(x: T, y: T, z: list[T]) -> None: ...

    return [(plain, ()), (numbers, ()), (optionals, ()), (lists, ()), (scalar, ()), (kwonly, ()),
            (mutates, ("y",)), (mutates, ("y", "z")), (mutates, "unknown")]


@pytest.mark.parametrize("index", range(9))
def test_infer_schema_reads_type_hints_as_torch_does(index):
    mine, mine_mutates = _signatures(dc)[index]
    theirs, their_mutates = _signatures(torch)[index]
    assert dc.library.infer_schema(mine, mutates_args=mine_mutates) == \
        torch.library.infer_schema(theirs, mutates_args=their_mutates)


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


def _no_valid_types(text):
    """torch lists its valid types by their torch names: compare the sentence before the list."""
    return re.sub(r"The valid types are: .*", "The valid types are: ...", text, flags=re.S)


@pytest.mark.parametrize("case", ["no annotation", "dict", "not an arg", "mutated int", "tuple default",
                                  "bad mutates string", "varargs"])
def test_infer_schema_refuses_what_torch_refuses_in_its_words(case):
    def build(m):
        T = m.Tensor
        if case == "no annotation":
            def f(x): ...
            return lambda: m.library.infer_schema(f, mutates_args=())
        if case == "dict":
            def f(x: T, y: dict) -> T: ...
            return lambda: m.library.infer_schema(f, mutates_args=())
        if case == "not an arg":
            def f(x: T) -> T: ...
            return lambda: m.library.infer_schema(f, mutates_args={"z"})
        if case == "mutated int":
            def f(x: T, n: int) -> None: ...
            return lambda: m.library.infer_schema(f, mutates_args={"n"})
        if case == "tuple default":
            def f(x: T, ls: list[float] = (1.0,)) -> T: ...
            return lambda: m.library.infer_schema(f, mutates_args=())
        if case == "bad mutates string":
            def f(x: T) -> T: ...
            return lambda: m.library.infer_schema(f, mutates_args="all")
        def f(x: T, *rest: T) -> T: ...
        return lambda: m.library.infer_schema(f, mutates_args=())

    kind, mine = _error(build(dc))
    their_kind, theirs = _error(build(torch))
    assert kind is their_kind
    theirs = theirs.replace("torch.Tensor", "dispatchcore.tensor.Tensor")
    assert _no_valid_types(mine) == _no_valid_types(theirs)


# --- the tables ----------------------------------------------------------------------------------------
def test_a_cpu_only_op_has_torch_table_cpu_and_meta_kernels_and_the_autograd_alias():
    def build(m, ns):
        @m.library.custom_op(f"{ns}::mysin", mutates_args=(), device_types="cpu")
        def mysin(x: m.Tensor) -> m.Tensor:
            return x.sin()
        return mysin

    ops = _both(build)
    assert _rows(dc, f"{ops[dc][0]}::mysin") == _rows(torch, f"{ops[torch][0]}::mysin")
    assert ("CPU", "[kernel]") in _rows(dc, f"{ops[dc][0]}::mysin")


def test_an_op_for_every_device_is_a_default_backend_kernel_and_stays_so_after_fake_and_autograd():
    def build(m, ns):
        @m.library.custom_op(f"{ns}::scale", mutates_args=())
        def scale(x: m.Tensor, k: float = 2.0) -> m.Tensor:
            return x * k
        return scale

    ops = _both(build)
    assert _rows(dc, f"{ops[dc][0]}::scale") == _rows(torch, f"{ops[torch][0]}::scale")
    for m, (_, op) in ops.items():
        op.register_fake(lambda x, k=2.0, m=m: m.empty_like(x))
        op.register_autograd(lambda ctx, g: (g * 2.0, None))
    assert _rows(dc, f"{ops[dc][0]}::scale") == _rows(torch, f"{ops[torch][0]}::scale")


def test_a_mutating_op_gets_an_inplace_or_view_kernel_and_bumps_the_version_like_torch():
    def build(m, ns):
        @m.library.custom_op(f"{ns}::inc_", mutates_args={"x"})
        def inc_(x: m.Tensor, by: float) -> None:
            x.add_(by)
        return inc_

    ops = _both(build)
    assert _rows(dc, f"{ops[dc][0]}::inc_") == _rows(torch, f"{ops[torch][0]}::inc_")
    versions = {}
    for m, (_, op) in ops.items():
        x = m.zeros(2)
        assert op(x, 1.5) is None
        versions[m] = (x._version, x.tolist())
        assert op(m.empty(2, device="meta"), 1.0) is None  # the trivial fake implementation
    assert versions[dc] == versions[torch] == (2, [1.5, 1.5])


def test_register_kernel_for_another_device_adds_its_row():
    def build(m, ns):
        @m.library.custom_op(f"{ns}::twice", mutates_args=(), device_types="cpu")
        def twice(x: m.Tensor) -> m.Tensor:
            return x * 2
        twice.register_kernel("cuda")(lambda x: x * 2)
        return twice

    ops = _both(build)
    assert _rows(dc, f"{ops[dc][0]}::twice") == _rows(torch, f"{ops[torch][0]}::twice")


# --- calls, autograd and errors ----------------------------------------------------------------------
def _sin_op(m, ns, autograd=True):
    @m.library.custom_op(f"{ns}::mysin", mutates_args=(), device_types="cpu")
    def mysin(x: m.Tensor) -> m.Tensor:
        return m.from_numpy(np.sin(x.numpy()))  # numpy() inside the kernel: grad mode is off there

    if autograd:
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        mysin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(), setup_context=setup_context)
    return mysin


def test_a_differentiable_op_records_the_generated_node_and_gives_torchs_gradient():
    data = np.array([0.1, 0.7, -1.2], np.float32)
    got = {}
    for m in (dc, torch):
        op = _sin_op(m, _ns(m))
        x = m.tensor(data, requires_grad=True)
        y = op(x)
        node = type(y.grad_fn).__name__
        y.sum().backward()
        got[m] = (node.replace(_ns_part(node), "NS"), y.detach().numpy(), x.grad.numpy())
    assert got[dc][0] == got[torch][0] == "GeneratedBackwardFor_NS_mysin_defaultBackward"
    np.testing.assert_array_equal(got[dc][1], got[torch][1])  # the kernel is numpy's sin on both sides
    np.testing.assert_allclose(got[dc][2], got[torch][2], rtol=3e-7)  # torch's vectorised cos: 1 ulp (docs/notes.md)


def _ns_part(node_name):
    return re.match(r"GeneratedBackwardFor_(.*)_mysin_default", node_name).group(1)


@pytest.mark.parametrize("case", ["no autograd", "no fake", "aliasing", "autograd on mutable", "wrong count"])
def test_the_errors_a_custom_op_user_meets_are_torchs(case):
    def run(m):
        ns = _ns(m)
        if case == "no autograd":
            op = _sin_op(m, ns, autograd=False)
            return lambda: op(m.ones(2, requires_grad=True)).sum().backward()
        if case == "no fake":
            op = _sin_op(m, ns, autograd=False)
            return lambda: op(m.empty(2, device="meta"))
        if case == "aliasing":
            @m.library.custom_op(f"{ns}::same", mutates_args=())
            def same(x: m.Tensor) -> m.Tensor:
                return x
            return lambda: same(m.ones(2))
        if case == "autograd on mutable":
            @m.library.custom_op(f"{ns}::zero_", mutates_args={"x"})
            def zero_(x: m.Tensor) -> None:
                x.zero_()
            return lambda: zero_.register_autograd(lambda ctx, g: g)

        @m.library.custom_op(f"{ns}::mul2", mutates_args=())
        def mul2(x: m.Tensor, y: m.Tensor) -> m.Tensor:
            return x * y
        mul2.register_autograd(lambda ctx, g: g)
        return lambda: mul2(m.ones(2, requires_grad=True), m.ones(2)).sum().backward()

    kind, mine = _error(run(dc))
    their_kind, theirs = _error(run(torch))
    assert kind is their_kind

    def normal(text):
        text = re.sub(r"dcdiff\d+_(dc|pt)", "NS", text)
        text = re.sub(r"<module '[^']*' from '[^']*'>", "<module>", text)
        return text.replace("torch.autograd.function.", "").replace("dispatchcore.", "")

    assert normal(mine) == normal(theirs)


def test_setup_context_sees_defaults_filled_and_keyword_only_inputs_apart():
    seen = {}
    for m in (dc, torch):
        ns = _ns(m)

        @m.library.custom_op(f"{ns}::affine", mutates_args=())
        def affine(x: m.Tensor, a: float = 2.0, *, b: float = 1.0) -> m.Tensor:
            return x * a + b

        def setup_context(ctx, inputs, keyword_only_inputs, output, m=m):
            seen[m] = (tuple(i if not isinstance(i, m.Tensor) else "T" for i in inputs), dict(keyword_only_inputs))
            ctx.a = inputs[1]

        affine.register_autograd(lambda ctx, g: (g * ctx.a, None), setup_context=setup_context)
        x = m.ones(2, requires_grad=True)
        affine(x, b=3.0).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
    assert seen[dc] == seen[torch]


# --- opcheck ---------------------------------------------------------------------------------------------
_CHECKS = ("test_schema", "test_autograd_registration", "test_faketensor")


def _opcheck(m, op, args):
    result = m.library.opcheck(op, args, test_utils=_CHECKS, raise_exception=False)
    return {k: v if isinstance(v, str) else (type(v).__name__, str(v).split("\n")[0]) for k, v in result.items()}


def test_opcheck_passes_a_well_registered_op_and_names_an_undeclared_mutation():
    results = {}
    for m in (dc, torch):
        ns = _ns(m)
        good = _sin_op(m, ns)
        good.register_fake(lambda x, m=m: m.empty_like(x))

        @m.library.custom_op(f"{ns}::sneaky", mutates_args=())
        def sneaky(x: m.Tensor) -> m.Tensor:
            x.add_(1)
            return x.clone()

        sneaky.register_fake(lambda x, m=m: m.empty_like(x))
        results[m] = (_opcheck(m, good, (m.randn(3, requires_grad=True),)), _opcheck(m, sneaky, (m.randn(3),)))
    assert results[dc] == results[torch]
    assert results[dc][1]["test_schema"] == ("RuntimeError", "Argument x is not defined as mutable but was mutated")


def test_opcheck_finds_a_backend_kernel_that_records_autograd_and_a_missing_fake():
    results = {}
    for m in (dc, torch):
        lib = m.library.Library(_ns(m), "DEF")
        lib.define("noag(Tensor x) -> Tensor")
        lib.impl("noag", lambda x: x.sin(), "CPU")
        op = getattr(m.ops, lib.ns).noag.default
        result = m.library.opcheck(op, (m.randn(3, requires_grad=True),), test_utils=_CHECKS,
                                   raise_exception=False)
        results[m] = {k: v if isinstance(v, str) else type(v).__name__ for k, v in result.items()}
        auto = result["test_autograd_registration"]
        assert "does not have an autograd kernel defined at an autograd key" in str(auto)
    assert results[dc]["test_schema"] == results[torch]["test_schema"] == "SUCCESS"
    assert results[dc]["test_autograd_registration"] == results[torch]["test_autograd_registration"]
    assert results[dc]["test_faketensor"] != "SUCCESS" and results[torch]["test_faketensor"] != "SUCCESS"


# --- register_torch_dispatch ------------------------------------------------------------------------
def test_a_torch_dispatch_rule_replaces_a_modes_handler_for_that_op_only():
    seen = {}
    for m in (dc, torch):
        ns = _ns(m)
        base = dc.DispatchMode if m is dc else torch.utils._python_dispatch.TorchDispatchMode

        @m.library.custom_op(f"{ns}::bump", mutates_args=())
        def bump(x: m.Tensor) -> m.Tensor:
            return x.clone()

        log = []

        class Mode(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None, log=log):
                log.append(("mode", str(func).split(".", 1)[1]))
                return func(*args, **(kwargs or {}))

        def rule(mode, func, types, args, kwargs, log=log, Mode=Mode):
            log.append(("rule", type(mode) is Mode, str(func).split(".", 1)[1]))
            return func(*args, **kwargs) + 1

        m.library.register_torch_dispatch(f"{ns}::bump", Mode, rule)
        with Mode():
            y = bump(m.zeros(2))
            z = m.zeros(2) * 3
        seen[m] = (log, y.tolist(), z.tolist())
    assert seen[dc] == seen[torch]
    assert ("rule", True, "bump.default") in seen[dc][0]


def test_a_torch_dispatch_rule_handles_a_subclass_for_its_op():
    seen = {}
    for m in (dc, torch):
        ns = _ns(m)

        @m.library.custom_op(f"{ns}::scale", mutates_args=())
        def scale(x: m.Tensor) -> m.Tensor:
            return x * 2

        class Boxed(m.Tensor):
            @staticmethod
            def __new__(cls, elem, m=m):
                out = m.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
                out.elem = elem
                return out

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return NotImplemented  # only the rule knows this op

            def __repr__(self):
                return "Boxed"

        @scale.register_torch_dispatch(Boxed)
        def _(cls, func, types, args, kwargs, Boxed=Boxed):
            (b,) = args
            return Boxed(func(b.elem) + 10)

        out = scale(Boxed(m.ones(2)))
        seen[m] = (type(out).__name__, out.elem.tolist())
    assert seen[dc] == seen[torch] == ("Boxed", [12.0, 12.0])


@pytest.mark.parametrize("case", ["good", "no fake", "no backward"])
def test_opcheck_aot_dispatch_static_passes_and_fails_where_torchs_does(case):
    outcome = {}
    for m in (dc, torch):
        op = _sin_op(m, _ns(m), autograd=case != "no backward")
        if case != "no fake":
            op.register_fake(lambda x, m=m: m.empty_like(x))
        result = m.library.opcheck(op, (m.randn(3, requires_grad=True),), test_utils=("test_aot_dispatch_static",),
                                   raise_exception=False)
        outcome[m] = result["test_aot_dispatch_static"] == "SUCCESS"
    assert outcome[dc] == outcome[torch] == (case == "good")
