"""dispatchcore.custom_ops: custom_op's registrations, their lifetime, the register_* API, get_ctx, opcheck.

(The behaviours torch has are compared with torch 2.13 in tests/differential/test_vs_torch_custom_ops.py;
these are the ones that need no oracle: what stays registered, what a refusal leaves behind.)
"""

import itertools
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import Tensor
from dispatchcore.custom_ops import OpCheckError


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


_names = itertools.count()


@pytest.fixture
def ns():
    return f"unit_co{next(_names)}"


def _keys(qualname):
    return [line.split(":")[0] for line in dc.dump_table(qualname).splitlines() if "custom_ops.py" in line]


def test_defining_the_same_name_again_replaces_every_registration_of_the_old_op(ns):
    @dc.library.custom_op(f"{ns}::f", mutates_args=(), device_types="cpu")
    def f(x: Tensor) -> Tensor:
        return x + 1

    @dc.library.custom_op(f"{ns}::f", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return x + 2

    assert "CPU" in _keys(f"{ns}::f")  # now as CompositeExplicitAutograd's default backend kernel
    assert "Undefined" in _keys(f"{ns}::f")
    assert g(dc.zeros(1)).tolist() == [2.0]
    assert f(dc.zeros(1)).tolist() == [2.0]  # the old handle calls the operator, which is the new one


def test_a_refused_definition_leaves_no_operator_behind(ns):
    def f(x: Tensor, *, w: Tensor) -> Tensor:
        return x * w

    with pytest.raises(NotImplementedError, match="custom_op with kwarg-only Tensor args"):
        dc.library.custom_op(f"{ns}::kw", f, mutates_args=())
    with pytest.raises(LookupError):
        dc.find_op(f"{ns}::kw")


def test_an_explicit_schema_must_agree_with_mutates_args(ns):
    def f(x):
        x.add_(1)

    with pytest.raises(ValueError, match="Please make these consistent"):
        dc.library.custom_op(f"{ns}::h_", f, mutates_args=(), schema="(Tensor(a0!) x) -> ()")
    with pytest.raises(LookupError):
        dc.find_op(f"{ns}::h_")
    op = dc.library.custom_op(f"{ns}::h_", f, mutates_args={"x"}, schema="(Tensor(a0!) x) -> ()")
    x = dc.zeros(1)
    op(x)
    assert x.tolist() == [1.0]


def test_string_annotations_resolve_in_the_functions_globals_and_unknown_names_are_refused(ns):
    def f(x: "Tensor", n: "int") -> "Tensor": ...
    assert dc.library.infer_schema(f, mutates_args=()) == "(Tensor x, SymInt n) -> Tensor"

    def g(x: "Missing") -> "Tensor": ...  # noqa: F821 - the point of the test
    with pytest.raises(ValueError, match="Unsupported type annotation Missing. It is not a type"):
        dc.library.infer_schema(g, mutates_args=())


def test_set_kernel_enabled_runs_the_decorated_function_instead_and_restores(ns):
    @dc.library.custom_op(f"{ns}::k", mutates_args=(), device_types="cpu")
    def k(x: Tensor) -> Tensor:
        return x + 1

    k.register_kernel("cpu")(lambda x: x + 100)
    assert k(dc.zeros(1)).tolist() == [100.0]
    with k.set_kernel_enabled("cpu", False):
        assert k(dc.zeros(1)).tolist() == [1.0]
    assert k(dc.zeros(1)).tolist() == [100.0]


def test_get_ctx_is_none_outside_a_fake_impl_and_a_dynamic_size_on_meta_raises(ns):
    assert dc.library.get_ctx() is None

    @dc.library.custom_op(f"{ns}::nz", mutates_args=())
    def nz(x: Tensor) -> Tensor:
        return x.nonzero()

    @nz.register_fake
    def _(x):
        n = dc.library.get_ctx().new_dynamic_size()
        return dc.empty(n, x.dim(), dtype=dc.int64, device=x.device)

    with pytest.raises(RuntimeError, match="You're trying to run this operator with meta Tensors"):
        nz(dc.empty(3, device="meta"))
    assert dc.library.get_ctx() is None


def test_the_module_functions_register_for_a_library_defined_operator(ns):
    lib = dc.Library(ns, "DEF")
    lib.define("cube(Tensor x) -> Tensor")
    dc.library.register_kernel(f"{ns}::cube", "cpu", lambda x: x * x * x, lib=lib)
    dc.library.register_fake(f"{ns}::cube", lambda x: dc.empty_like(x), lib=lib)
    dc.library.register_autograd(f"{ns}::cube", lambda ctx, g: g * 3 * ctx.x * ctx.x,
                                 setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]), lib=lib)
    op = dc.find_op(f"{ns}::cube")
    x = dc.tensor([2.0], requires_grad=True)
    y = op(x)
    assert type(y.grad_fn).__name__ == f"GeneratedBackwardFor_{ns}_cube_defaultBackward"
    y.backward()
    assert x.grad.tolist() == [12.0]
    assert op(dc.empty(2, device="meta")).device.type == "meta"
    lib.destroy()
    with pytest.raises(LookupError):
        dc.find_op(f"{ns}::cube")


def test_opcheck_refuses_unknown_checks_and_raises_opcheckerror_by_default(ns):
    @dc.library.custom_op(f"{ns}::bad", mutates_args=())
    def bad(x: Tensor) -> Tensor:
        x.mul_(2)
        return x.clone()

    with pytest.raises(ValueError, match="expected test_utils to be subset of"):
        dc.library.opcheck(bad, (dc.ones(1),), test_utils=("test_bogus",))
    with pytest.raises(OpCheckError, match="test_schema failed with Argument x is not defined as mutable"):
        dc.library.opcheck(bad, (dc.ones(1),), test_utils="test_schema")


def test_opcheck_reports_a_fake_impl_whose_metadata_differs_from_the_kernel(ns):
    @dc.library.custom_op(f"{ns}::flat", mutates_args=())
    def flat(x: Tensor) -> Tensor:
        return x.reshape(-1).clone()

    flat.register_fake(lambda x: dc.empty_like(x))  # wrong: keeps x's shape
    result = dc.library.opcheck(flat, (dc.ones(2, 3),), test_utils="test_faketensor", raise_exception=False)
    failure = result["test_faketensor"]
    assert type(failure).__name__ == "MetadataMismatchError"  # torch's class and words
    assert str(failure) == (f"When comparing the output of {ns}.flat.default on FakeTensor and concrete Tensors, "
                            "found mismatched tensor metadata: Shapes dispatchcore.Size([6]) and "
                            "dispatchcore.Size([2, 3]) are not equal!")


def test_a_kernel_returning_a_view_of_its_input_is_refused_even_through_numpy(ns):
    @dc.library.custom_op(f"{ns}::peek", mutates_args=())
    def peek(x: Tensor) -> Tensor:
        return dc.from_numpy(x.numpy()[:1])  # shares x's memory

    with pytest.raises(RuntimeError, match="must not also be an input to this custom operator"):
        peek(dc.ones(3))


def test_from_numpy_shares_memory_and_refuses_what_torch_refuses():
    a = np.arange(3.0)
    t = dc.from_numpy(a)
    a[1] = 7.0
    assert t.tolist() == [0.0, 7.0, 2.0]
    with pytest.raises(TypeError, match="expected np.ndarray"):
        dc.from_numpy([1, 2])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.object_"):
        dc.from_numpy(np.array(["a"], dtype=object))
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
        dc.from_numpy(np.arange(3)[::-1])
    frozen = np.arange(2.0)
    frozen.flags.writeable = False
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert dc.from_numpy(frozen).tolist() == [0.0, 1.0]


def test_a_torch_dispatch_rule_goes_with_its_op_and_a_second_rule_for_one_class_is_refused(ns):
    from dispatchcore.subclass import TORCH_DISPATCH_RULES

    @dc.library.custom_op(f"{ns}::ident", mutates_args=())
    def ident(x: Tensor) -> Tensor:
        return x.clone()

    class Mode(dc.DispatchMode):
        pass

    dc.library.register_torch_dispatch(f"{ns}::ident", Mode, lambda mode, func, types, args, kwargs: "ruled")
    with Mode():
        assert ident(dc.ones(1)) == "ruled"
    with pytest.raises(RuntimeError, match="already has a `__torch_dispatch__` rule registered"):
        from dispatchcore.subclass import register_torch_dispatch_rule

        register_torch_dispatch_rule(f"{ns}::ident", Mode, lambda *a: None)
    ident._destroy()
    assert f"{ns}::ident" not in TORCH_DISPATCH_RULES


@pytest.mark.parametrize("module_name", ["dispatchcore.custom_ops", "dispatchcore.factories"])
def test_docstring_examples_of_custom_ops_and_factories_run(module_name):
    import doctest
    import importlib

    failures, attempted = doctest.testmod(importlib.import_module(module_name), optionflags=doctest.ELLIPSIS)
    assert attempted and not failures
