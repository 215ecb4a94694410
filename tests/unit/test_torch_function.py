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


def test_plain_tensors_keep_their_raw_methods_when_no_mode_is_active():
    """See Note [Torch function costs nothing when unused]."""
    raw = vars(dc.Tensor)["add"]
    assert dc.Tensor.add is not raw and dc.Tensor.add.__wrapped__ is raw
    with Names():
        assert vars(dc.Tensor)["add"] is dc.Tensor.add
    assert vars(dc.Tensor)["add"] is raw


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
