"""The reflected operators against torch 2.13, with a Tensor, a number and a duck type as the operand.

torch/_tensor.py writes ``__rfloordiv__``, ``__rmod__``, ``__rlshift__``, ``__rrshift__``,
``__rmatmul__``, ``__rpow__``, ``__rsub__`` and ``__rtruediv__`` (``__rdiv__``) in Python:
``torch.remainder(other, self)`` and so on, so a Tensor operand takes the Tensor overload
(``x.__rmod__(t)`` is ``remainder.Tensor(t, x)``), and every argument is checked for torch
function. Compared: what ``Tensor.__torch_function__`` (a subclass) and a mode see, the result's
class, values and dtype, the operators dispatched, a duck type's handler, the error when every
handler declines.
"""

from __future__ import annotations

from typing import Any

import pytest

import dispatchcore as dc
from dispatchcore.overrides import resolve_name

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

pytestmark = pytest.mark.differential

REFLECTED = ["__rfloordiv__", "__rmod__", "__rlshift__", "__rrshift__", "__rmatmul__", "__rpow__", "__rsub__",
             "__rtruediv__", "__rdiv__", "__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__"]
SYMBOLS = ["//", "%", "<<", ">>", "@", "**", "-", "/", "+", "*", "&", "|", "^"]


def _name(lib: Any, func: Any) -> str:
    return (torch.overrides.resolve_name(func) if lib is torch else resolve_name(func)) or func.__name__


def _env(lib: Any) -> tuple[dict[str, Any], list[Any]]:
    records: list[Any] = []

    class Sub(lib.Tensor):  # type: ignore[misc, name-defined]
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            records.append((_name(lib, func), [t.__name__ for t in types], [type(a).__name__ for a in args]))
            return super().__torch_function__(func, types, args, kwargs)

    a, b = lib.tensor([5, 7, 9]), lib.tensor([2, 3, 1])
    return {"a": a, "b": b, "sa": a.as_subclass(Sub), "sb": b.as_subclass(Sub)}, records


def _outcome(program: str, env: dict[str, Any]) -> Any:
    try:
        out = eval(program, env)  # noqa: S307 - the fixed tables below
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return type(error).__name__, str(error).split("\n")[0]
    if out is NotImplemented:
        return "NotImplemented"
    return type(out).__name__, out.tolist(), str(out.dtype).rpartition(".")[2]


PROGRAMS = [f"{x}.{op}({y})" for op in REFLECTED for x, y in (("a", "b"), ("sa", "b"), ("a", "sb"), ("sa", "sb"))]
PROGRAMS += [f"{x}.{op}(2)" for op in REFLECTED for x in ("a", "sa")]
PROGRAMS += [f"{x} {s} {y}" for s in SYMBOLS for x, y in (("a", "sb"), ("sa", "b"), ("sa", "sb"), ("2", "sb"))]


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_subclass_sees_torchs_calls_and_gets_torchs_result(program):
    results = []
    for lib in (dc, torch):
        env, records = _env(lib)
        results.append((_outcome(program, env), records[:3]))
    assert results[0] == results[1]


def _dispatched(lib: Any, program: str) -> list[Any]:
    base = TorchDispatchMode if lib is torch else dc.DispatchMode

    class Names(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    env, _ = _env(lib)
    with Names() as mode:
        outcome = _outcome(program, env)
    return [mode.names, outcome]


@pytest.mark.parametrize("program", [f"a.{op}(b)" for op in REFLECTED] + [f"a.{op}(2)" for op in REFLECTED])
def test_a_dispatch_mode_sees_the_overload_torch_takes(program):
    assert _dispatched(dc, program) == _dispatched(torch, program)


def _duck_env(lib: Any) -> tuple[dict[str, Any], list[Any]]:
    log: list[Any] = []

    class Duck:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((_name(lib, func), [t.__name__ for t in types], [type(a).__name__ for a in args], kwargs))
            return "handled"

    return {"d": Duck(), "x": lib.tensor([1.0, 2.0]), "i": lib.tensor([1, 2])}, log


@pytest.mark.parametrize("program", ["d // x", "d % x", "d << i", "d >> i", "d @ x", "d ** x", "d - x", "d / x",
                                     "x.__rmod__(d)", "x.__rfloordiv__(d)", "i.__rlshift__(d)", "i.__rrshift__(d)",
                                     "x.__rmatmul__(d)", "x.__rdiv__(d)", "x.__div__(d)", "x.__rmatmul__(2)",
                                     "2 @ x", "x.__rmod__('a')", "x.__rfloordiv__(None)"])
def test_a_duck_type_operand_takes_the_call(program):
    results = []
    for lib in (dc, torch):
        env, log = _duck_env(lib)
        results.append((_outcome(program, env) if "d" not in program else _raw(program, env), log))
    assert results[0] == results[1]


def _raw(program: str, env: dict[str, Any]) -> Any:
    try:
        return eval(program, env)  # noqa: S307 - the fixed table above
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return type(error).__name__


@pytest.mark.parametrize("program", ["2 / a", "2 @ a", "2 % a", "2 // a", "2 << a", "out = x.__rdiv__(a)",
                                     "out = x.__rmatmul__(a)", "out = x.__rmod__(a)", "out = x.__div__(a)",
                                     "out = x.__idiv__(a)"])
def test_when_every_handler_declines_torchs_error_follows(program):
    """An operator returns NotImplemented (torch's TypeError_to_NotImplemented_), then Python raises."""
    results = []
    for lib in (dc, torch):
        log: list[Any] = []

        class Declines(lib.Tensor):  # type: ignore[misc, name-defined]
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None, lib=lib, log=log):
                log.append((_name(lib, func), [t.__name__ for t in types]))
                return NotImplemented

        env = {"a": lib.ones(2, dtype=lib.int64).as_subclass(Declines), "x": lib.ones(2, dtype=lib.int64)}
        if program.startswith("out = "):
            exec(program, env)  # noqa: S102 - the fixed table above
            results.append((log, env["out"] is NotImplemented))
            continue
        with pytest.raises(TypeError) as error:
            exec(program, env)  # noqa: S102 - the fixed table above
        text = str(error.value).replace("torch.Tensor", "Tensor").replace("dispatchcore.tensor.Tensor", "Tensor")
        results.append((log, text.replace(".test_when_every_handler_declines_torchs_error_follows.<locals>", "")))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["__rdiv__", "__rtruediv__", "__idiv__", "__itruediv__", "__div__", "__rmatmul__",
                                  "__rmod__", "__rfloordiv__", "__rlshift__", "__rrshift__"])
def test_each_operator_has_torchs_name(name):
    assert resolve_name(getattr(dc.Tensor, name)) == torch.overrides.resolve_name(getattr(torch.Tensor, name))
