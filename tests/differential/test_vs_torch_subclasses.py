"""Differential tests: tensor subclasses with ``__torch_dispatch__`` against torch 2.13.

The same subclass is written once per library (``_library(name)`` gives the module, its
``Tensor`` and a ``tree_map``); both run the same program and must agree on key sets (raw bits),
the operators each handler sees (forward and backward), the order of handlers and modes, the
``types`` they get, the NotImplemented error text and the wrapper metadata.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import dispatchcore as dc
from dispatchcore.subclass import tree_map as dc_tree_map

torch = pytest.importorskip("torch")
from torch.utils._pytree import tree_map as torch_tree_map  # noqa: E402

pytestmark = pytest.mark.differential


def _library(name: str) -> SimpleNamespace:
    if name == "torch":
        return SimpleNamespace(lib=torch, Tensor=torch.Tensor, tree_map=torch_tree_map, Mode=_torch_mode_base(),
                               keys=lambda t: torch._C._dispatch_keys(t).raw_repr())
    return SimpleNamespace(lib=dc, Tensor=dc.Tensor, tree_map=dc_tree_map, Mode=dc.DispatchMode,
                           keys=lambda t: int(dc.dispatch_keys(t)))


def _torch_mode_base() -> type:
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


def _wrapper_class(api: SimpleNamespace, log: list[Any], name: str = "Wrapper") -> type:
    """A logging wrapper subclass for ``api``: unwraps, calls, wraps, and logs ``(class, op, types)``."""
    base = api.Tensor

    def new(cls: type, elem: Any) -> Any:
        return base._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                           device=elem.device, requires_grad=elem.requires_grad)

    def init(self: Any, elem: Any) -> None:
        self.elem = elem

    def torch_dispatch(cls: type, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        log.append((cls.__name__, str(func), tuple(t.__name__ for t in types)))
        plain = api.tree_map(lambda t: getattr(t, "elem", t) if isinstance(t, base) else t, (args, kwargs or {}))
        out = func(*plain[0], **plain[1])
        return api.tree_map(lambda t: wrapper(t) if type(t) is base else t, out)

    wrapper: type = type(name, (base,), {"__new__": staticmethod(new), "__init__": init,
                                        "__torch_dispatch__": classmethod(torch_dispatch)})
    return wrapper


def _both(program: Any) -> tuple[Any, Any]:
    return program(_library("torch")), program(_library("dispatchcore"))


# --- key sets ------------------------------------------------------------------------------------
def test_key_sets_of_subclass_instances_match_raw_bits():
    def program(api: SimpleNamespace) -> list[int]:
        log: list[Any] = []
        wrapper = _wrapper_class(api, log)
        plain = type("Plain", (api.Tensor,), {})
        return [
            api.keys(wrapper(api.lib.ones(2))),
            api.keys(api.Tensor._make_subclass(wrapper, api.lib.ones(2))),
            api.keys(api.Tensor._make_subclass(plain, api.lib.ones(2))),
            api.keys(api.Tensor._make_wrapper_subclass(wrapper, (2,), device="meta")),
        ]

    theirs, mine = _both(program)
    assert mine == theirs
    assert theirs[0] == 0x100009410010001


def test_wrapper_subclass_metadata_matches():
    def program(api: SimpleNamespace) -> tuple:
        wrapper = _wrapper_class(api, [])
        w = api.Tensor._make_wrapper_subclass(wrapper, (2, 3), strides=(1, 2), storage_offset=1,
                                              dtype=api.lib.float64, requires_grad=True)
        return (tuple(w.shape), w.stride(), w.storage_offset(), str(w.dtype).split(".")[-1], w.device.type,
                w.requires_grad, w.is_leaf, w._version, w.dim(), w.numel(), w.is_contiguous())

    theirs, mine = _both(program)
    assert mine == theirs


# --- what each handler sees ----------------------------------------------------------------------
# The autograd engine's own calls reach the subclass as in torch: saving an output of a Python-key
# tensor dispatches ``aten.detach.default`` (when saved and when unpacked: Note [Detach through
# Python], dispatchcore/autograd/graph.py) and AccumulateGrad takes an unshared gradient over
# with ``detach`` (Note [Stealing the gradient]); the logs are compared whole.


def _backward_program(api: SimpleNamespace) -> list[Any]:
    log: list[Any] = []
    wrapper = _wrapper_class(api, log)
    w = wrapper(api.lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True))
    x = wrapper(api.lib.tensor([[0.5, 1.0]]))
    loss = (x @ w).relu().sum() * 2
    log.append("backward")
    loss.backward()
    return [*log, w.grad.elem.tolist(), type(w.grad).__name__]


def test_forward_backward_and_the_engines_own_detach_calls_reach_the_subclass_as_in_torch():
    theirs, mine = _both(_backward_program)
    assert mine == theirs


def test_view_and_in_place_operators_seen_match():
    def program(api: SimpleNamespace) -> list[Any]:
        log: list[Any] = []
        wrapper = _wrapper_class(api, log)
        w = wrapper(api.lib.ones(2, 3))
        _ = w.t()
        _ = w[0]
        _ = w.sum(1)
        _ = w.mul(2.5)
        _ = api.lib.cat([w, w])
        return log

    theirs, mine = _both(program)
    assert mine == theirs


def test_multiple_dispatch_order_and_types_match():
    def program(api: SimpleNamespace) -> list[Any]:
        log: list[Any] = []
        a_cls = _wrapper_class(api, log, "A")
        b_cls = _wrapper_class(api, log, "B")
        sub = type("SubA", (a_cls,), {})

        def decline(cls: type, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            log.append((cls.__name__, str(func), tuple(t.__name__ for t in types), "NotImplemented"))
            return NotImplemented

        declining = type("Declining", (a_cls,), {"__torch_dispatch__": classmethod(decline)})
        a, b, s = a_cls(api.lib.ones(1)), b_cls(api.lib.ones(1)), sub(api.lib.ones(1))
        d = declining(api.lib.ones(1))
        _ = a + b
        _ = b + s
        _ = api.lib.cat([a, b, s])
        _ = api.lib.add(d, b)
        return log

    theirs, mine = _both(program)
    assert mine == theirs


def test_all_not_implemented_raises_torchs_type_error():
    def make(api: SimpleNamespace) -> tuple[Any, Any]:
        def decline(cls: type, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return NotImplemented

        a_cls = type("A", (api.Tensor,), {"__torch_dispatch__": classmethod(decline), "__module__": "m"})
        b_cls = type("B", (api.Tensor,), {"__torch_dispatch__": classmethod(decline), "__module__": "m"})
        return api.Tensor._make_subclass(a_cls, api.lib.ones(1)), api.Tensor._make_subclass(b_cls, api.lib.ones(1))

    ta, tb = make(_library("torch"))
    ma, mb = make(_library("dispatchcore"))
    with pytest.raises(TypeError) as theirs:
        torch.add(ta, tb)
    with pytest.raises(TypeError) as mine:
        dc.add(ma, mb)
    assert str(mine.value) == str(theirs.value)


def test_not_implemented_from_mode_and_subclasses_lists_both():
    def program(api: SimpleNamespace) -> str:
        def decline(cls: type, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return NotImplemented

        a_cls = type("A", (api.Tensor,), {"__torch_dispatch__": classmethod(decline), "__module__": "m"})
        mode_cls = type("Declines", (api.Mode,), {"__torch_dispatch__": lambda self, *a, **k: NotImplemented})
        a = api.Tensor._make_subclass(a_cls, api.lib.ones(1))
        with pytest.raises(TypeError) as err, mode_cls() as mode:
            api.lib.add(a, a)
        return str(err.value).replace(repr(mode), "<mode>")

    theirs, mine = _both(program)
    assert mine == theirs


# --- modes and subclasses ------------------------------------------------------------------------
def test_mode_sees_the_call_first_then_the_subclass():
    def program(api: SimpleNamespace) -> list[Any]:
        log: list[Any] = []
        wrapper = _wrapper_class(api, log)

        def mode_dispatch(self: Any, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            log.append(("mode", str(func), tuple(t.__name__ for t in types)))
            return func(*args, **(kwargs or {}))

        mode_cls = type("M", (api.Mode,), {"__torch_dispatch__": mode_dispatch})
        w = wrapper(api.lib.tensor([1.0, 2.0], requires_grad=True))
        with mode_cls():
            y = (w * 3).sum()
            y.backward()
        return log

    theirs, mine = _both(program)
    assert mine == theirs


def test_mode_returning_not_implemented_passes_to_the_subclass_with_the_mode_active():
    def program(api: SimpleNamespace) -> list[Any]:
        log: list[Any] = []
        wrapper = _wrapper_class(api, log)

        def mode_dispatch(self: Any, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            log.append(("mode", str(func), tuple(t.__name__ for t in types)))
            if types:
                return NotImplemented
            return func(*args, **(kwargs or {}))

        mode_cls = type("M", (api.Mode,), {"__torch_dispatch__": mode_dispatch})
        w = wrapper(api.lib.ones(2))
        with mode_cls():
            _ = w + w
        return log

    theirs, mine = _both(program)
    assert mine == theirs


def test_numbers_and_repr_of_a_plain_subclass_match():
    def program(api: SimpleNamespace) -> list[Any]:
        seen: list[Any] = []
        marked = type("Marked", (api.Tensor,), {})
        wrapper = _wrapper_class(api, seen)
        w = wrapper(api.lib.ones(2))
        _ = w * 2
        _ = w / 2.5
        return [repr(api.Tensor._make_subclass(marked, api.lib.ones(2))), seen]

    theirs, mine = _both(program)
    assert mine == theirs


def test_data_access_errors_match(raises_alike):
    tw = _wrapper_class(_library("torch"), [])(torch.ones(2))
    mw = _wrapper_class(_library("dispatchcore"), [])(dc.ones(2))
    raises_alike(lambda: mw.numpy(), lambda: tw.numpy())
    raises_alike(lambda: mw.tolist(), lambda: tw.tolist())
