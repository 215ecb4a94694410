"""``__torch_function__`` and ``TorchFunctionMode`` (dispatchcore/overrides.py)."""

from __future__ import annotations

import threading

import pytest

import dispatchcore as dc
import dispatchcore.nn.functional as F
from dispatchcore import overrides
from dispatchcore.overrides import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    TorchFunctionMode,
    has_torch_function,
    resolve_name,
)
from dispatchcore.tensor import _disabled_torch_function_impl


class Names(TorchFunctionMode):
    def __init__(self) -> None:
        self.calls: list[tuple[str | None, tuple]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append((resolve_name(func), tuple(t.__name__ for t in types)))
        return func(*args, **(kwargs or {}))


class Kept(dc.Tensor):
    pass


def test_a_mode_sees_functions_methods_operators_properties_and_functional():
    x = dc.ones(2)
    with Names() as mode:
        _ = dc.add(x, 1)
        _ = x.add(x)
        _ = x + x
        _ = 2 * x
        _ = x.sum()
        _ = x.shape
        _ = F.relu(x)
    assert [name for name, _ in mode.calls] == [
        "torch.add", "torch.Tensor.add", "torch.Tensor.add", "torch.Tensor.mul", "torch.Tensor.sum",
        "torch.Tensor.shape.__get__", "torch.nn.functional.relu"]


def test_func_is_the_public_object_a_handler_compares_with():
    funcs = []

    class Keep(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            funcs.append(func)
            return func(*args, **(kwargs or {}))

    x = dc.ones(2)
    with Keep():
        _ = x + x
        _ = dc.add(x, x)
    assert funcs[0] is dc.Tensor.add and funcs[1] is dc.add


_GATE_PROGRAM = """
import dispatchcore as dc
from dispatchcore import overrides
from dispatchcore.tensor import _disabled_torch_function_impl

raw = vars(dc.Tensor)["add"]
states = [vars(dc.Tensor)["add"] is raw and not overrides._tf_on]
with overrides.TorchFunctionMode():
    states.append(vars(dc.Tensor)["add"] is dc.Tensor.add and overrides._tf_on)
states.append(vars(dc.Tensor)["add"] is raw and not overrides._tf_on)

class Off(dc.Tensor):
    __torch_function__ = _disabled_torch_function_impl

states.append(vars(dc.Tensor)["add"] is raw and Off in overrides._INERT)

class On(dc.Tensor):
    pass

states.append(vars(dc.Tensor)["add"] is dc.Tensor.add and overrides._tf_on)
with overrides.TorchFunctionMode():
    pass
states.append(vars(dc.Tensor)["add"] is dc.Tensor.add and overrides._tf_on)
print(states)
"""


def test_plain_tensors_keep_their_raw_methods_until_a_handler_can_take_a_call():
    """See Note [Torch function costs nothing when unused]: the gate, in a fresh interpreter."""
    import subprocess
    import sys

    assert dc.Tensor.add.__wrapped__ is overrides._PUBLIC["add"][0]  # the raw method, which the gate swaps in
    out = subprocess.run([sys.executable, "-c", _GATE_PROGRAM], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[True, True, True, True, True, True]"


def test_the_mode_is_off_its_stack_while_it_runs():
    stacks = []

    class Look(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            stacks.append(overrides._get_current_function_mode_stack())
            return func(*args, **(kwargs or {}))

    x = dc.ones(1)  # made outside: a factory call would reach the mode too
    with Look() as mode:
        _ = x + 1
        assert overrides._get_current_function_mode() is mode
    assert stacks == [[]]


def test_nested_modes_see_a_call_innermost_first():
    order = []

    def tagged(tag):
        class Tagged(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                order.append(tag)
                return func(*args, **(kwargs or {}))
        return Tagged()

    x = dc.ones(1)
    with tagged("outer"), tagged("inner"):
        _ = x.relu()
    assert order == ["inner", "outer"]


def test_a_subclass_keeps_its_type_through_operations():
    k = dc.ones(2).as_subclass(Kept)
    assert type(k + 1) is Kept and type(1 + k) is Kept and type(dc.ones(2) * k) is Kept
    assert type(k.sum()) is Kept and type(dc.add(k, 1)) is Kept and type(F.relu(k)) is Kept
    assert type(k.shape) is dc.Size and type(k.tolist()) is list


def test_a_handler_sees_types_subclasses_first_then_left_to_right():
    seen = []

    class A(dc.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(tuple(t.__name__ for t in types))
            return NotImplemented

    class B(A):
        pass

    a, b = dc.ones(1).as_subclass(A), dc.ones(1).as_subclass(B)
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.cat'"):
        dc.cat([a, b])
    assert seen == [("B", "A"), ("B", "A")]


def test_all_handlers_declining_an_operator_is_pythons_type_error():
    class Declines(dc.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    d = dc.ones(1).as_subclass(Declines)
    with pytest.raises(TypeError, match="unsupported operand type"):
        _ = d + d
    with pytest.raises(TypeError, match="no implementation found for 'torch.nn.functional.relu'"):
        F.relu(d)


def test_a_duck_type_with_torch_function_intercepts_functions():
    class Duck:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return resolve_name(func), [t.__name__ for t in types]

    assert dc.add(Duck(), 1) == ("torch.add", ["Duck"])
    assert dc.relu(Duck()) == ("torch.relu", ["Duck"])


def test_disable_guards_turn_off_subclasses_then_modes_too():
    k = dc.ones(1).as_subclass(Kept)
    with DisableTorchFunctionSubclass():
        assert type(k + 1) is dc.Tensor
        with Names() as mode:
            _ = k.sum()
        assert mode.calls == [("torch.Tensor.sum", ())]
    with DisableTorchFunction(), Names() as mode:
        _ = k.sum()
    assert mode.calls == []
    assert overrides._is_torch_function_enabled()


def test_has_torch_function_is_false_for_plain_tensors_without_a_mode():
    x = dc.ones(1)
    assert not has_torch_function((x, 1))
    assert has_torch_function((x.as_subclass(Kept),))
    with Names():
        assert has_torch_function((x,))


def test_a_class_opting_out_and_parameters_get_plain_results():
    class Out(dc.Tensor):
        __torch_function__ = _disabled_torch_function_impl

    assert type(dc.ones(1).as_subclass(Out) + 1) is dc.Tensor
    assert type(dc.nn.Parameter(dc.ones(1)) * 2) is dc.Tensor


def test_a_torch_dispatch_class_has_torch_function_disabled_as_in_torch():
    class Dispatching(dc.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    assert Dispatching.__torch_function__ is _disabled_torch_function_impl


def test_a_mode_in_one_thread_is_not_seen_by_another():
    seen_elsewhere = []

    def other():
        with Names() as inner:
            pass
        seen_elsewhere.append(overrides._get_current_function_mode())
        _ = dc.ones(1) + 1
        seen_elsewhere.append(inner.calls)

    with Names() as mode:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen_elsewhere == [None, []] and mode.calls == []


def test_the_function_and_dispatch_layers_log_one_program_in_order():
    log = []

    class Api(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(resolve_name(func))
            return func(*args, **(kwargs or {}))

    class Aten(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            log.append(str(func))
            return func(*args, **(kwargs or {}))

    x = dc.ones(2)
    with Aten(), Api():
        _ = dc.add(x, 1).sum()
    assert log == ["torch.add", "aten.add.Tensor", "torch.Tensor.sum", "aten.sum.default"]


def test_get_overridable_functions_lists_methods_and_functions():
    table = overrides.get_overridable_functions()
    assert dc.Tensor.add in table[dc.Tensor] and dc.add in table[dc] and F.relu in table[dc.nn.functional]


def test_leaving_a_mode_out_of_order_raises():
    a, b = Names(), Names()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="not the innermost"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)


def test_docstring_examples_run():
    import doctest

    failures, attempted = doctest.testmod(overrides, optionflags=doctest.ELLIPSIS)
    assert attempted and not failures


# --- arguments other than self, duck types, properties and protocols ---------------------------
class Logged(dc.Tensor):
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((resolve_name(func), tuple(t.__name__ for t in types)))
        return super().__torch_function__(func, types, args, kwargs)


def _logged(*programs):
    Logged.calls = []
    results = [program() for program in programs]
    return results, Logged.calls


@pytest.mark.parametrize("call, name", [
    (lambda x, s, i: x.copy_(s), "torch.Tensor.copy_"),
    (lambda x, s, i: x.add(s), "torch.Tensor.add"),
    (lambda x, s, i: x.where(s > 1, x), "torch.Tensor.where"),
    (lambda x, s, i: x.expand_as(s), "torch.Tensor.expand_as"),
    (lambda x, s, i: x.index_select(0, i), "torch.Tensor.index_select"),
    (lambda x, s, i: x.masked_fill(s > 1, 0.0), "torch.Tensor.masked_fill"),
    (lambda x, s, i: x[i], "torch.Tensor.__getitem__"),
    (lambda x, s, i: x.to(s), "torch.Tensor.to"),
    (lambda x, s, i: x.__rsub__(s), "torch.Tensor.__rsub__"),
])
def test_a_plain_tensors_method_hands_a_subclass_argument_its_call(call, name):
    x, s, i = dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0]).as_subclass(Logged), dc.tensor([1]).as_subclass(Logged)
    (out,), calls = _logged(lambda: call(x, s, i))
    assert calls[-1][0] == name and "Logged" in calls[-1][1]
    assert type(out) is Logged


def test_a_subclass_read_as_a_number_or_passed_to_a_self_only_method_is_not_handed_the_call():
    x, s = dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0]).as_subclass(Logged)
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        _, calls = _logged(lambda: x.new_tensor(s), lambda: x.split(1))
    assert "torch.Tensor.new_tensor" not in [name for name, _ in calls]
    y = dc.zeros(2)
    _, calls = _logged(lambda: setattr(y, "grad", s))  # a setter checks self only
    assert calls == [] and type(y.grad) is Logged


class Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return resolve_name(func), [t.__name__ for t in types]


@pytest.mark.parametrize("call, name, types", [
    (lambda x, d: F.relu(d), "torch.nn.functional.relu", ["Duck"]),
    (lambda x, d: F.mse_loss(x, d), "torch.nn.functional.mse_loss", ["Tensor", "Duck"]),
    (lambda x, d: F.linear(x, d), "torch.nn.functional.linear", ["Duck"]),
    (lambda x, d: dc.where(x > 0, d, x), "torch.where", ["Duck"]),
    (lambda x, d: dc.cat([x, d]), "torch.cat", ["Duck"]),
    (lambda x, d: dc.flatten(d), "torch.flatten", ["Duck"]),
    (lambda x, d: dc.maximum(x, d), "torch.maximum", ["Duck"]),
    (lambda x, d: dc.eq(x, d), "torch.eq", ["Duck"]),
    (lambda x, d: dc.pow(x, d), "torch.pow", ["Duck"]),
    (lambda x, d: dc.div(x, d), "torch.div", ["Duck"]),
    (lambda x, d: x + d, "torch.Tensor.add", ["Duck"]),
    (lambda x, d: d + x, "torch.Tensor.add", ["Duck"]),
    (lambda x, d: d - x, "torch.Tensor.__rsub__", ["Tensor", "Duck"]),
    (lambda x, d: x ** d, "torch.Tensor.__pow__", ["Tensor", "Duck"]),
    (lambda x, d: x @ d, "torch.Tensor.matmul", ["Duck"]),
    (lambda x, d: x < d, "torch.Tensor.lt", ["Duck"]),
])
def test_a_duck_type_takes_the_calls_it_is_passed_to(call, name, types):
    assert call(dc.ones(2), Duck()) == (name, types)


def test_a_call_that_fits_no_signature_is_an_error_not_a_duck_types_call():
    with pytest.raises((TypeError, RuntimeError)):
        dc.abs(dc.ones(2), Duck())  # abs takes one argument: torch's TypeError, not the handler


def test_property_setters_and_deleters_reach_a_mode_as_torchs_descriptors():
    x, g, three = dc.ones(2), dc.zeros(2), dc.full((2,), 3.0)
    funcs = []

    class Keep(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            funcs.append(func)
            return func(*args, **(kwargs or {}))

    with Keep():
        x.requires_grad = True
        x.grad = g
        del x.grad
        x.data = three
    assert funcs[0] == dc.Tensor.requires_grad.__set__ and funcs[1] == dc.Tensor.grad.__set__
    assert funcs[2] == dc.Tensor.grad.__delete__ and funcs[3] == dc.Tensor.data.__set__
    assert [resolve_name(f) for f in funcs] == ["torch.Tensor.requires_grad.__set__", "torch.Tensor.grad.__set__",
                                                 None, "torch.Tensor.data.__set__"]
    assert x.requires_grad and x.grad is None and x.tolist() == [3.0, 3.0]


def test_protocols_reach_a_mode():
    x, s0 = dc.tensor([1.0, 2.0]), dc.tensor(2.5)
    with Names() as mode:
        text = f"{s0:.2f}"
        found = 2.0 in x
        flipped = reversed(x)
        number = complex(s0)
        _ = x._version, x._is_view(), repr(x)
    assert [name for name, _ in mode.calls] == [
        "torch.Tensor.__format__", "torch.Tensor.__contains__", "torch.Tensor.__reversed__",
        "torch.Tensor.__complex__", "torch.Tensor._version.__get__", "torch.Tensor._is_view",
        "torch.Tensor.__repr__"]
    assert (text, found, flipped.tolist(), number) == ("2.50", True, [2.0, 1.0], 2.5 + 0j)


def test_declined_setter_names_the_descriptor_in_torchs_error():
    class Declines(dc.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    d = dc.ones(1).as_subclass(Declines)
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.Tensor.requires_grad.__set__'"):
        d.requires_grad = True
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.Tensor.grad.__delete__'"):
        del d.grad
    with pytest.raises(TypeError, match="no implementation found for 'torch._tensor.__format__'"):
        format(d)


def test_data_is_a_detached_alias_with_its_own_version_counter():
    x = dc.ones(2, requires_grad=True)
    d = x.data
    assert type(d) is dc.Tensor and not d.requires_grad and d.grad_fn is None and d._base is None
    d.add_(1.0)
    assert x._version == 0 and d._version == 1 and x.tolist() == [2.0, 2.0]
    assert type(dc.nn.Parameter(dc.ones(1)).data) is dc.Tensor


def test_setting_data_swaps_the_data_and_keeps_the_graph_and_version_counter():
    x = dc.ones(2)
    x.add_(1.0)
    x.data = dc.zeros(3, dtype=dc.float64)
    assert x.tolist() == [0.0, 0.0, 0.0] and x.dtype is dc.float64 and x._version == 1
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got str"):
        x.data = "a"
    with pytest.raises(RuntimeError, match="incompatible tensor type"):
        x.data = dc.zeros(3, device="meta")
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        dc.ones(2, requires_grad=True).data = dc.ones(2, dtype=dc.int64)
    with pytest.raises(RuntimeError, match="Deleting tensor data is not allowed"):
        del x.data
