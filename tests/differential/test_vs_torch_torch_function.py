"""Differential tests: ``__torch_function__`` and ``TorchFunctionMode`` against torch 2.13.

Each program runs twice, once on torch and once on dispatchcore, with the same handler; the
handler records what it sees (the public function's name, the overloaded types, the arguments'
classes, the keyword names) and the two records must be equal.
"""

from __future__ import annotations

from typing import Any

import pytest

import dispatchcore as dc
import dispatchcore.nn.functional as dcF
from dispatchcore import overrides as dc_overrides

torch = pytest.importorskip("torch")
import torch.nn.functional as torchF  # noqa: E402
from torch.overrides import TorchFunctionMode as TorchMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

pytestmark = pytest.mark.differential


class Lib:
    """The namespace a program sees: ``lib`` (torch or dispatchcore), ``F``, and the guards."""

    def __init__(self, is_torch: bool) -> None:
        self.is_torch = is_torch
        self.lib: Any = torch if is_torch else dc
        self.F: Any = torchF if is_torch else dcF
        self.Mode: Any = TorchMode if is_torch else dc_overrides.TorchFunctionMode
        self.DisableSubclass: Any = (torch._C.DisableTorchFunctionSubclass if is_torch
                                     else dc_overrides.DisableTorchFunctionSubclass)
        self.Disable: Any = torch._C.DisableTorchFunction if is_torch else dc_overrides.DisableTorchFunction

    def name(self, func: Any) -> str:
        """torch's qualified name of ``func``, the same spelling on both sides."""
        accessor = getattr(func, "__name__", None)
        if accessor in ("__get__", "__set__", "__delete__"):  # a property's (torch resolves no __delete__)
            owner = self.lib.Tensor
            prop = next(k for k in dir(owner) if getattr(owner, k, None) is func.__self__)
            return f"torch.Tensor.{prop}.{accessor}"
        name = (torch.overrides.resolve_name(func) if self.is_torch else dc_overrides.resolve_name(func))
        name = name or f"{func.__module__}.{func.__name__}"
        # torch's C++ nn bindings and one alias spelled apart
        return (name.replace("torch._C._nn.log_sigmoid", "torch.nn.functional.logsigmoid")
                .replace("torch._C._nn.", "torch.nn.functional.").replace("__rdiv__", "__rtruediv__"))


def seen(lib: Lib, func: Any, types: Any, args: Any, kwargs: Any) -> tuple:
    return (lib.name(func), [t.__name__ for t in types], [type(a).__name__ for a in args],
            None if kwargs is None else sorted(kwargs))


def mode_log(lib: Lib, program: str, make: Any) -> list[tuple]:
    records: list[tuple] = []

    class Record(lib.Mode):  # type: ignore[name-defined]
        def __torch_function__(self, func, types, args=(), kwargs=None):
            records.append(seen(lib, func, types, args, kwargs))
            return func(*args, **(kwargs or {}))

    env = {"lib": lib.lib, "F": lib.F, **make(lib)}
    with Record():
        exec(program, env)
    return records


def plain(lib: Lib) -> dict[str, Any]:
    t = lib.lib
    return {"x": t.tensor([1.0, -2.0, 3.0]), "y": t.tensor([0.5, 0.5, 0.5]), "m": t.ones(2, 3),
            "tgt": t.tensor([0, 2])}


MODE_PROGRAMS = [
    # torch.* functions
    "lib.add(x, y)", "lib.add(x, 2)", "lib.add(x, y, alpha=2)", "lib.mul(x, y)", "lib.cat([x, y])",
    "lib.stack([x, y])", "lib.relu(x)", "lib.sum(x)", "lib.clamp(x, 0, 1)", "lib.exp(x)",
    "lib.div(x, 2, rounding_mode='floor')", "lib.maximum(x, y)", "lib.reshape(m, (3, 2))", "lib.rsub(x, 1)",
    # Tensor methods
    "x.add(y)", "x.sum()", "x.sum(0)", "x.relu()", "x.view(-1)", "m.t()", "x.exp()", "x.clone()",
    "x.detach()", "x.unsqueeze(0)", "x.pow(2)", "x.clamp(0, 1)", "x.neg()", "x.mean()", "x.tolist()",
    "x.dim()", "x.numel()",
    # operators
    "x + y", "1 + x", "x * 2", "2 * x", "2 - x", "x - 2", "x / 2", "2 / x", "x ** 2", "2 ** x", "-x",
    "abs(x)", "x @ y", "x == y", "x < 1", "x[0]", "len(x)",
    # properties, their setters and deleters
    "x.shape", "x.dtype", "x.requires_grad", "x.grad_fn", "x.data", "x._version", "x.is_leaf",
    "x.requires_grad = True", "x.grad = y", "del x.grad", "x.data = y", "x.grad_dtype = None",
    # the protocols torch routes, and its Python-level methods' arguments
    "format(x)", "f'{x[0]:.2f}'", "1.0 in x", "reversed(x)", "complex(x[0])", "bool(x[0])", "int(x[0])",
    "float(x[0])", "x._is_view()", "repr(x)", "str(x)", "x.split(1)", "x.split(1, dim=0)", "x.norm()",
    "x.unflatten(0, (3, 1))", "x.as_subclass(type(x))", "hash(x)",
    # nn.functional
    "F.relu(x)", "F.softmax(x, 0)", "F.log_softmax(m, 1)", "F.mse_loss(x, y)", "F.gelu(x)",
    "F.linear(m, m)", "F.cross_entropy(m, tgt)", "F.sigmoid(x)", "F.dropout(x, 0.5, False)",
    "F.layer_norm(m, (3,))",
]


@pytest.mark.parametrize("program", MODE_PROGRAMS)
def test_a_mode_sees_the_same_funcs_types_and_arguments(program):
    assert mode_log(Lib(False), program, plain) == mode_log(Lib(True), program, plain)


def subclass_env(lib: Lib) -> dict[str, Any]:
    records: list[tuple] = []

    class Sub(lib.lib.Tensor):  # type: ignore[name-defined]
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            records.append(seen(lib, func, types, args, kwargs))
            return super().__torch_function__(func, types, args, kwargs)

    t = lib.lib
    return {"records": records, "s": t.tensor([1.0, 2.0]).as_subclass(Sub), "x": t.tensor([3.0, 4.0]),
            "i": t.tensor([1]).as_subclass(Sub), "m": t.ones(2, 2), "Sub": Sub}


SUBCLASS_PROGRAMS = [
    "out = s + 1", "out = 1 + s", "out = s * x", "out = x + s", "out = x * s", "out = x.add(s)",
    "out = lib.add(x, s)", "out = lib.cat([x, s])", "out = s.sum()", "out = s.relu()", "out = -s",
    "out = 2 - s", "out = s[0]", "out = F.relu(s)", "out = F.mse_loss(s, x)", "out = s.shape",
    "out = s.tolist()", "out = s.view(2, 1).t()",
    # a plain tensor's method with a subclass argument other than self
    "out = x.copy_(s)", "out = x.where(s > 1, x)", "out = x.expand_as(s)", "out = x.index_select(0, i)",
    "out = x.masked_fill(s > 1, 0.0)", "out = x[i]", "out = x.clamp(s, s)", "out = x.to(s)", "out = x.mul_(s)",
    "out = x.add(s, alpha=2)", "out = x.sub_(s)", "out = x.maximum(s)", "out = x.lerp(s, 0.5)",
    "out = x.__rsub__(s)", "out = x.__rpow__(s)", "out = x.__rtruediv__(s)", "out = x.__pow__(s)",
    "out = m.mm(s.view(2, 1))", "x[i] = s[0]; out = x", "out = lib.where(s > 1, x, 0.0)",
    "out = lib.maximum(x, s)", "out = lib.stack([x, s])", "out = F.mse_loss(x, s)",
    # ... and where the method checks self only
    "x.grad = s; out = x.grad", "x.data = s; out = x",
    # properties, setters and protocols of a subclass
    "out = s.data", "s.requires_grad = True; out = s", "out = format(s)", "out = 1.0 in s", "out = reversed(s)",
    "out = s._version", "out = complex(s[0])", "out = s.split(1)", "out = s.norm()", "out = repr(s)",
]


@pytest.mark.parametrize("program", SUBCLASS_PROGRAMS)
def test_a_subclass_sees_the_same_calls_and_keeps_its_type_as_in_torch(program):
    results = []
    for lib in (Lib(False), Lib(True)):
        env = {"lib": lib.lib, "F": lib.F, **subclass_env(lib)}
        exec(program, env)
        out = env["out"]
        results.append((env["records"], type(out).__name__,
                        type(out[0]).__name__ if isinstance(out, (list, tuple)) and out else None))
    assert results[0] == results[1]


def declining_env(lib: Lib) -> dict[str, Any]:
    log: list[tuple] = []

    def declining(tag: str, base: Any) -> Any:
        class Declines(base):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((tag, lib.name(func), [t.__name__ for t in types]))
                return NotImplemented
        Declines.__name__ = Declines.__qualname__ = tag
        return Declines

    A = declining("A", lib.lib.Tensor)
    B = declining("B", lib.lib.Tensor)
    C = declining("C", A)
    t = lib.lib
    return {"log": log, "a": t.ones(2).as_subclass(A), "b": t.ones(2).as_subclass(B),
            "c": t.ones(2).as_subclass(C), "x": t.ones(2)}


DECLINED_PROGRAMS = ["a + b", "lib.add(a, b)", "lib.add(x, a)", "x + a", "a.add(x)", "c + a", "a + c", "-a",
                     "2 - a", "lib.cat([a, b])", "F.relu(a)", "F.mse_loss(x, a)", "a.shape", "len(a)",
                     "lib.stack([x, c, a])", "x.copy_(a)", "x.expand_as(a)", "x.where(x > 0, a)",
                     "a.requires_grad = True", "del a.grad", "a.data", "format(a)", "1.0 in a", "reversed(a)",
                     "a._version", "complex(a)", "repr(a)"]


@pytest.mark.parametrize("program", DECLINED_PROGRAMS)
def test_not_implemented_passes_on_then_raises_torchs_type_error(program):
    results = []
    for lib in (Lib(False), Lib(True)):
        env = {"lib": lib.lib, "F": lib.F, **declining_env(lib)}
        with pytest.raises(TypeError) as error:
            exec(program, env)
        text = str(error.value).replace("torch.Tensor", "Tensor").replace("dispatchcore.tensor.Tensor", "Tensor")
        results.append((env["log"], text.replace(".declining_env.<locals>.declining.<locals>.Declines", "")))
    assert results[0] == results[1]


def test_a_mode_that_declines_is_named_in_the_error():
    texts = []
    for lib in (Lib(False), Lib(True)):
        class Declines(lib.Mode):  # type: ignore[name-defined]
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

            def __repr__(self):
                return "<Declines>"

        x = lib.lib.ones(2)
        with Declines():
            for call in (lambda t=lib.lib, x=x: t.add(x, 1), lambda x=x: x.add(1), lambda f=lib.F, x=x: f.relu(x)):
                with pytest.raises(TypeError) as error:
                    call()
                texts.append(str(error.value))
    assert texts[:3] == texts[3:]


def test_modes_nest_innermost_first_each_off_its_stack_while_it_runs():
    logs = []
    for lib in (Lib(False), Lib(True)):
        log: list[str] = []

        def tagged(tag: str, lib: Lib = lib, log: list[str] = log) -> Any:
            class Tagged(lib.Mode):  # type: ignore[name-defined]
                def __torch_function__(self, func, types, args=(), kwargs=None):
                    log.append(f"{tag} {lib.name(func)}")
                    return func(*args, **(kwargs or {}))
            return Tagged()

        x = lib.lib.ones(2)
        with tagged("outer"), tagged("inner"):
            _ = (x + 1).sum()
        logs.append(log)
    assert logs[0] == logs[1]


def test_disable_guards_turn_off_subclasses_then_everything():
    results = []
    for lib in (Lib(False), Lib(True)):
        log: list[str] = []

        class Names(lib.Mode):  # type: ignore[name-defined]
            def __torch_function__(self, func, types, args=(), kwargs=None, log=log, lib=lib):
                log.append(lib.name(func))
                return func(*args, **(kwargs or {}))

        class Sub(lib.lib.Tensor):  # type: ignore[name-defined]
            pass

        s = lib.lib.ones(1).as_subclass(Sub)
        with lib.DisableSubclass():
            kinds = [type(s + 1).__name__]
            with Names():
                _ = s.sum()
        with lib.Disable():
            kinds.append(type(s * 2).__name__)
            with Names():
                _ = s.sum()
        results.append((kinds, log))
    assert results[0] == results[1]


def test_both_layers_log_one_program_in_torch_order():
    """A TorchFunctionMode logs the Python API calls, a dispatch mode below autograd the aten ops."""
    logs = []
    for lib in (Lib(False), Lib(True)):
        log: list[str] = []

        class Api(lib.Mode):  # type: ignore[name-defined]
            def __torch_function__(self, func, types, args=(), kwargs=None, lib=lib, log=log):
                log.append(lib.name(func))
                return func(*args, **(kwargs or {}))

        class Aten(TorchDispatchMode if lib.is_torch else dc.DispatchMode):  # type: ignore[misc]
            def __torch_dispatch__(self, func, types, args=(), kwargs=None, log=log):
                log.append(str(func))
                return func(*args, **(kwargs or {}))

        x = lib.lib.tensor([1.0, 2.0], requires_grad=True)
        with Aten(), Api():
            y = lib.lib.add(x, 1)
            z = y.mul(2) - x
            _ = lib.F.relu(z).sum()
        logs.append(log)
    assert logs[0] == logs[1]


def _function_names(lib: Any, mode_base: type, program: Any) -> list[Any]:
    seen: list[Any] = []

    class Names(mode_base):  # type: ignore[misc, valid-type]
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((getattr(func, "__name__", str(func)), kwargs is None))
            return func(*args, **(kwargs or {}))

    with Names():
        program(lib)
    return seen


def test_factories_and_the_native_bindings_reach_a_mode_as_in_torch():
    import numpy as np

    def program(m):
        x = m.ones(1, 1, 4, 4)
        m.tensor([1.0])
        m.from_numpy(np.ones(2))  # torch's from_numpy does not consult torch function
        m.arange(3)
        m.zeros_like(x)
        m.full((2,), 1.0)
        m.where(x > 0, x, 0.0)
        m.conv2d(x, m.ones(1, 1, 3, 3))
        m.flatten(x)
        m.topk(m.arange(5.0), 2)
        m.cumsum(m.arange(3.0), 0)

    assert _function_names(dc, dc_overrides.TorchFunctionMode, program) == _function_names(torch, TorchMode, program)


def duck_env(lib: Lib) -> dict[str, Any]:
    log: list[tuple] = []

    class Duck:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(seen(lib, func, types, args, kwargs))
            return "handled"

    t = lib.lib
    return {"log": log, "d": Duck(), "x": t.tensor([1.0, -2.0]), "m": t.ones(2, 2)}


DUCK_PROGRAMS = [
    # nn.functional: Python-level (plain Tensors count) and C++ bindings
    "F.relu(d)", "F.relu(d, True)", "F.softmax(d, 0)", "F.mse_loss(x, d)", "F.mse_loss(d, x)", "F.nll_loss(x, d)",
    "F.cross_entropy(m, d)", "F.linear(x, d)", "F.linear(d, m)", "F.dropout(d, 0.5, False)", "F.gelu(d)",
    "F.layer_norm(d, (2,))", "F.embedding(d, m)", "F.l1_loss(d, x)", "F.kl_div(x, d)",
    # torch.* functions: a duck type anywhere the call fits a signature
    "lib.add(x, d)", "lib.add(d, x)", "lib.mul(x, d)", "lib.div(x, d)", "lib.rsub(x, d)", "lib.pow(x, d)",
    "lib.where(x > 0, d, x)", "lib.where(x > 0, x, d)", "lib.where(d, x, x)", "lib.cat([x, d])", "lib.cat(d)",
    "lib.stack([d, x])", "lib.relu(d)", "lib.exp(d)", "lib.sum(d)", "lib.sum(x, d)", "lib.maximum(x, d)",
    "lib.eq(x, d)", "lib.lt(x, d)", "lib.matmul(m, d)", "lib.clamp(x, d)", "lib.reshape(d, (2,))",
    "lib.permute(d, (1, 0))", "lib.flatten(d)", "lib.transpose(d, 0, 1)", "lib.softmax(d, 0)",
    "lib.index_select(x, 0, d)", "lib.zeros_like(d)", "lib.abs(x, d)", "lib.add(x)",
    # Tensor operators and methods whose operand a duck type is
    "x + d", "d + x", "x - d", "d - x", "x * d", "d * x", "x / d", "d / x", "x ** d", "d ** x", "x @ d",
    "x < d", "x == d", "x.add(d)", "x.mul(d)", "x.pow(d)", "x.eq(d)",
]


@pytest.mark.parametrize("program", DUCK_PROGRAMS)
def test_a_duck_type_takes_the_calls_torch_hands_it(program):
    results = []
    for lib in (Lib(False), Lib(True)):
        env = {"lib": lib.lib, "F": lib.F, **duck_env(lib)}
        try:
            out = eval(program, env)
            outcome = out if isinstance(out, str) else type(out).__name__
        except TypeError:
            outcome = "TypeError"
        except RuntimeError:  # dispatchcore's schema errors are RuntimeErrors where torch's parser raises TypeError
            outcome = "TypeError"
        results.append((env["log"], outcome))
    assert results[0] == results[1]


def test_tensor_methods_carry_torchs_names_for_handlers_that_test_func_name():
    import types

    unnamed = []
    for name, fn in vars(dc.Tensor).items():
        theirs = getattr(getattr(torch.Tensor, name, None), "__name__", None)
        if isinstance(fn, types.FunctionType) and theirs is not None and fn.__name__ != theirs:
            unnamed.append(name)
    # one function object under two unrelated names keeps the first: __rand__ is __and__ here
    assert sorted(unnamed) == ["__rand__", "__ror__", "__rxor__"]
    assert dc.Tensor.softmax.__name__ == "softmax" and dc.Tensor.__itruediv__.__name__ == "__idiv__"
