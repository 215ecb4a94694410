"""subclass.py and the Python key's fallback for tensor subclasses with ``__torch_dispatch__``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dispatchcore as dc
from dispatchcore.keys import DispatchKey as D
from dispatchcore.modes import _modes_get
from dispatchcore.subclass import (
    PYTHON_KEYS,
    WrapperData,
    has_torch_dispatch,
    is_traceable_wrapper_subclass,
    return_and_correct_aliasing,
    transform_subclass,
    tree_map,
)
from dispatchcore.tls import tls_get

ROOT = Path(__file__).resolve().parents[2]
Tensor = dc.Tensor


@pytest.fixture(autouse=True)
def _no_mode_leaks():
    before = _modes_get()
    yield
    assert _modes_get() == before, "a test leaked a dispatch mode"


class Wrapper(dc.Tensor):
    """A wrapper subclass recording (func, types, tls) per call; results wrapped again."""

    calls: list = []

    @staticmethod
    def __new__(cls, elem):
        return Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                             device=elem.device, requires_grad=elem.requires_grad)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((str(func), types, tls_get()))
        kwargs = kwargs or {}
        plain = tree_map(lambda t: t.elem if isinstance(t, Wrapper) else t, (args, kwargs))
        out = func(*plain[0], **plain[1])
        out = tree_map(lambda t: cls(t) if type(t) is dc.Tensor else t, out)
        return return_and_correct_aliasing(func, args, kwargs, out)


@pytest.fixture(autouse=True)
def _fresh_calls():
    Wrapper.calls = []


def names():
    return [c[0] for c in Wrapper.calls]


def test_subclass_with_torch_dispatch_gets_python_keys():
    w = Wrapper(dc.ones(2))
    assert int(dc.dispatch_keys(w)) == 0x100009410010001
    assert int(dc.dispatch_keys(w)) & PYTHON_KEYS == PYTHON_KEYS


def test_plain_subclass_and_plain_tensor_have_no_python_keys():
    class Plain(dc.Tensor):
        pass

    p = Tensor._make_subclass(Plain, dc.ones(2))
    assert int(dc.dispatch_keys(p)) == 0x9400010001
    assert not has_torch_dispatch(Plain) and not has_torch_dispatch(dc.Tensor)
    assert has_torch_dispatch(Wrapper)


def test_handler_gets_operator_handle_and_result_is_its_return():
    w = Wrapper(dc.tensor([1.0, 2.0]))
    out = w + w
    assert type(out) is Wrapper and out.elem.tolist() == [2.0, 4.0]
    assert names() == ["aten.add.Tensor"]
    assert Wrapper.calls[0][1] == (Wrapper,)


def test_handler_runs_below_autograd_with_keys_above_python_excluded():
    x = Wrapper(dc.tensor([1.0, 2.0], requires_grad=True))
    y = (x * x).sum()
    assert type(y.grad_fn).__name__ == "SumBackward0"  # autograd recorded above the Python key
    _, excluded, _ = Wrapper.calls[0][2]
    assert excluded & dc.modes.ABOVE_PYTHON == dc.modes.ABOVE_PYTHON
    assert not excluded & int(dc.DispatchKeySet(D.Python))


def test_backward_operators_reach_the_handler():
    x = Wrapper(dc.tensor([1.0, 2.0], requires_grad=True))
    y = (x * x).sum()
    Wrapper.calls = []
    y.backward()
    # x's gradient is the sum of MulBackward0's two: unshared, so AccumulateGrad takes it over
    assert names() == ["aten.ones_like.default", "aten.expand.default", "aten.mul.Tensor",
                       "aten.mul.Tensor", "aten.add.Tensor", "aten.detach.default"]
    assert type(x.grad) is Wrapper and x.grad.elem.tolist() == [2.0, 4.0]


def test_numbers_reach_the_handler_as_python_numbers():
    w = Wrapper(dc.ones(2))
    _ = w * 2
    plain_args = []

    class Spy(Wrapper):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            plain_args.append(args[1])
            return NotImplemented

    s = Spy(dc.ones(2))
    with pytest.raises(TypeError, match="Multiple dispatch failed"):
        s * 2.5
    assert plain_args == [2.5]


def test_types_put_subclasses_before_superclasses_else_left_to_right():
    class Sub(Wrapper):
        pass

    class Other(Wrapper):
        pass

    w, s, o = Wrapper(dc.ones(1)), Sub(dc.ones(1)), Other(dc.ones(1))
    _ = dc.cat([w, s, o])  # Tensor args inside a list argument count
    assert Wrapper.calls[0][1] == (Sub, Other, Wrapper)


def test_not_implemented_passes_to_the_next_handler_then_raises_torchs_type_error():
    seen = []

    class A(dc.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append("A")
            return NotImplemented

    class B(dc.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append("B")
            return NotImplemented

    a, b = Tensor._make_subclass(A, dc.ones(1)), Tensor._make_subclass(B, dc.ones(1))
    with pytest.raises(TypeError) as err:
        a + b
    assert seen == ["A", "B"]
    assert str(err.value) == (
        "Multiple dispatch failed for 'torch._ops.aten.add.Tensor'; all __torch_dispatch__ handlers "
        f"returned NotImplemented:\n\n  - tensor subclass {A!r}\n  - tensor subclass {B!r}\n\n"
        "For more information, try re-running with TORCH_LOGS=not_implemented")


def test_mode_goes_first_and_its_types_list_the_subclasses():
    order = []

    class Mode(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            order.append(("mode", str(func), types))
            return func(*args, **(kwargs or {}))

    w = Wrapper(dc.ones(1))
    with Mode():
        _ = w + 1
    assert order == [("mode", "aten.add.Tensor", (Wrapper,))]
    assert names() == ["aten.add.Tensor"]  # the mode's func(*args) reached the subclass


def test_mode_returning_not_implemented_passes_to_the_subclass():
    class Decline(dc.DispatchMode):
        """Declines calls with subclasses; the subclass handler then runs with the mode still active."""

        def __dispatch__(self, func, types, args=(), kwargs=None):
            if types or str(func) == "aten.sub.Tensor":
                return NotImplemented
            return func(*args, **(kwargs or {}))

    w = Wrapper(dc.ones(1))
    with Decline() as mode:
        out = w + 1
        with pytest.raises(TypeError, match=f"  - mode object {mode!r}"):
            dc.ones(1) - 1
    assert type(out) is Wrapper and names() == ["aten.add.Tensor"]


def test_make_subclass_shares_data_and_version_counter():
    base = dc.ones(2)
    s = Tensor._make_subclass(Wrapper, base, True)
    assert s.requires_grad and s.is_leaf and s._data is base._data
    base.add_(1)
    assert s._version == base._version == 1
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        Tensor._make_subclass(Wrapper, dc.ones(1, dtype=dc.int64), True)
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        Tensor._make_subclass(Wrapper, 3)
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        Tensor._make_subclass(int, dc.ones(1))


def test_wrapper_subclass_metadata_and_data_less_storage():
    w = Tensor._make_wrapper_subclass(Wrapper, (2, 3), strides=(1, 2), storage_offset=1, dtype=dc.float64,
                                      requires_grad=True)
    assert (tuple(w.shape), w.stride(), w.storage_offset(), w.dtype) == ((2, 3), (1, 2), 1, dc.float64)
    assert w.requires_grad and w.is_leaf and w._version == 0 and isinstance(w._data, WrapperData)
    m = Tensor._make_wrapper_subclass(Wrapper, (2,), device="meta")
    assert int(dc.dispatch_keys(m)) == 0x100001410018000
    with pytest.raises(TypeError, match="must define __torch_dispatch__"):
        class NoHandler(dc.Tensor):
            pass

        Tensor._make_wrapper_subclass(NoHandler, (1,))


def test_data_access_on_subclasses_raises_like_torch():
    w = Wrapper(dc.ones(2))
    with pytest.raises(RuntimeError, match=r"^\.numpy\(\) is not supported for tensor subclasses\.$"):
        w.numpy()
    with pytest.raises(RuntimeError, match="^.tolist.. is not supported for tensor subclasses, got Wrapper$"):
        w.tolist()
    with pytest.raises(RuntimeError, match="its data is not allocated yet"):
        w._cpu_data()
    assert Wrapper(dc.tensor(3.0)).item() == 3.0 and names()[-1] == "aten._local_scalar_dense.default"


def test_repr_uses_the_class_name_and_reads_elements_through_the_handler():
    class Marked(dc.Tensor):
        pass

    assert repr(Tensor._make_subclass(Marked, dc.ones(2))) == "Marked([1., 1.])"
    assert repr(Wrapper(dc.tensor([[1.0, 2.0], [3.0, 4.0]]))) == "Wrapper([[1., 2.],\n         [3., 4.]])"
    assert "aten._local_scalar_dense.default" in names()
    assert repr(dc.nn.Parameter(dc.ones(1))) == "Parameter containing:\ntensor([1.], requires_grad=True)"
    w = Wrapper(dc.ones(1, requires_grad=True))
    assert Tensor.__repr__(w, tensor_contents="X") == "Wrapper(X, requires_grad=True)"


def test_in_place_op_returns_the_wrapper_itself():
    w = Wrapper(dc.ones(2))
    assert w.add_(1) is w and w.elem.tolist() == [2.0, 2.0] and w._version == 1


def test_view_of_a_wrapper_is_a_view_for_autograd():
    w = Wrapper(dc.ones(2, 2))
    v = w.t()
    assert v._base is w


def test_flatten_protocol_helpers():
    class Pair(Wrapper):
        def __tensor_flatten__(self):
            return ["elem"], None

        @staticmethod
        def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
            return Pair(inner["elem"])

    p = Pair(dc.ones(2))
    assert is_traceable_wrapper_subclass(p) and not is_traceable_wrapper_subclass(Wrapper(dc.ones(1)))
    q = transform_subclass(p, lambda name, t: t * 3)
    assert type(q) is Pair and q.elem.tolist() == [3.0, 3.0]


def test_plain_tensor_torch_dispatch_runs_with_torch_dispatch_disabled():
    out = dc.Tensor.__torch_dispatch__(dc.ops.aten.add.Tensor, (), (dc.ones(1), dc.ones(1)))
    assert out.tolist() == [2.0]


def test_trace_shows_the_python_key_hop():
    w = Wrapper(dc.ones(1))
    with dc.trace() as t:
        _ = w + w
    keys = [h.key.name for h in t.hops()]
    assert "Python" in keys and keys.index("Python") < keys.index("CPU")


@pytest.mark.parametrize("name", ["logging_tensor", "quantized_tensor", "two_tensor"])
def test_subclass_examples_run(name):
    proc = subprocess.run([sys.executable, f"docs/examples/{name}.py"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip()
