"""Reading a number, iterating, ``new_tensor`` and ``as_subclass`` against torch 2.13.

* ``item()`` (and ``float``, ``int``, ``bool``, ``complex``, ``format``, ``operator.index``, a 0-d
  index tensor, a tensor where a number goes) is ``aten::item``, whose math kernel calls
  ``aten::_local_scalar_dense``: a dispatch mode, a ``__torch_dispatch__`` subclass,
  ``FakeTensorMode`` (a constant's value, the data-dependent error, a real tensor refused) and
  ``make_fx`` (torch's error for a traced tensor, a constant's value burnt in) see it.
* ``iter(x)`` is ``iter(x.unbind(0))``: a ``TorchFunctionMode`` or a subclass sees ``Tensor.dim``
  and ``Tensor.unbind``, a dispatch mode ``unbind.int(x)``.
* ``new_tensor`` of a tensor is ``detach`` and ``_to_copy``; a subclass's result made by
  ``Tensor.__torch_function__`` (``as_subclass``) costs no operator a mode sees.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402

import dispatchcore as dc  # noqa: E402
from dispatchcore.fake_tensor import FakeTensorMode  # noqa: E402
from dispatchcore.fx import make_fx as dc_make_fx  # noqa: E402
from dispatchcore.overrides import resolve_name  # noqa: E402
from tests.differential._observers import logging_wrapper, recording_mode, run_quietly, torch_function_observers  # noqa: E402,E501

pytestmark = [pytest.mark.differential, pytest.mark.usefixtures("quiet_fake_tensor_log")]



def _summary(value: Any) -> Any:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return ("T", tuple(value.shape), str(value.dtype).rpartition(".")[2])
    if isinstance(value, (list, tuple)):
        return [_summary(v) for v in value]
    return value if isinstance(value, (bool, int, float, complex, str)) or value is None else type(value).__name__


def _ops_mode(lib: Any) -> Any:
    """A recording dispatch mode; its ``calls`` are ``(func, arguments, types)``."""
    calls: list[Any] = []
    mode = recording_mode(lib, lambda func, types, args, kwargs: calls.append(
        (str(func), _summary(args), tuple(t.__name__ for t in types))))
    mode.calls = calls
    return mode


def _name(lib: Any, func: Any) -> str:
    return (torch.overrides.resolve_name(func) if lib is torch else resolve_name(func)) or func.__name__


def _run(program: str, env: dict[str, Any]) -> Any:
    """The error ``program`` raises, else its ``out``, comparable across the libraries."""
    error = run_quietly(program, env)
    if error is not None:
        return error
    out = env.get("out")
    return out if isinstance(out, (bool, int, float, complex, str)) else _summary(out)


def _env(lib: Any) -> dict[str, Any]:
    return {"lib": lib, "x": lib.tensor([1.0, -2.0, 3.0]), "m": lib.ones(2, 3), "s": lib.tensor(2.5),
            "k": lib.tensor(1), "i": lib.tensor([0, 2])}


# --- item and the conversions that read it -------------------------------------------------------------
READS = ["out = s.item()", "out = x[0].item()", "out = float(s)", "out = int(s)", "out = bool(s)", "out = complex(s)",
         "out = f'{s:.2f}'", "out = k.__index__()", "out = x[k]", "out = x.clamp(0, s)", "out = x[k:]",
         "out = x.item()", "out = lib.tensor(0.5).item()", "out = x.tolist()", "out = s.tolist()", "out = bool(x)"]


@pytest.mark.parametrize("program", READS)
def test_a_dispatch_mode_sees_local_scalar_dense(program):
    results = []
    for lib in (dc, torch):
        env = _env(lib)
        mode = _ops_mode(lib)
        with mode:
            outcome = _run(program, env)
        results.append((mode.calls, outcome))
    assert results[0] == results[1]


def _wrapper(lib: Any, log: list[Any]) -> type:
    """A logging wrapper subclass of ``lib.Tensor``."""
    return logging_wrapper(lib, lambda func, args: log.append(str(func)))


@pytest.mark.parametrize("program", ["out = s.item()", "out = float(s)", "out = bool(s)", "out = x[0].item()",
                                     "out = list(x)", "out = x.new_tensor(s)"])
def test_a_dispatch_subclass_sees_the_same_calls(program):
    results = []
    for lib in (dc, torch):
        log: list[Any] = []
        wrapper = _wrapper(lib, log)
        env = {k: (wrapper(v) if isinstance(v, lib.Tensor) else v) for k, v in _env(lib).items()}
        results.append((log, _run(program, env)))
    assert results[0] == results[1]


@pytest.mark.parametrize("program", ["out = x.sum().item()", "out = lib.tensor(0.5).item()",
                                     "out = (lib.tensor(0.5) + 1).item()", "out = float(lib.tensor([2.0]).sum())",
                                     "out = lib.tensor([1.0, 2.0])[0].item()", "out = s.item()", "out = int(k)"])
def test_fake_tensor_mode_knows_a_constant_and_refuses_other_values(program):
    results = []
    for lib, fake_mode in ((dc, FakeTensorMode), (torch, TorchFakeTensorMode)):
        env = _env(lib)  # real tensors, made before the mode
        with fake_mode():
            env["x"] = lib.ones(3)
            results.append(_run(program, env))
    assert results[0] == results[1]


def _traced(lib: Any, f: Any, tracing_mode: str) -> Any:
    make_fx = torch_make_fx if lib is torch else dc_make_fx
    try:
        gm = make_fx(f, tracing_mode=tracing_mode)(lib.ones(2))
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return (type(error).__name__, str(error))
    return (gm.code.strip().replace("torch.ops.", "OPS.").replace("dispatchcore.ops.", "OPS.")
            .replace("torch.", "").replace("dispatchcore.", ""))


TRACED = {
    "item_of_an_input": lambda lib: lambda x: x * x.sum().item(),
    "float_of_an_input": lambda lib: lambda x: x * float(x.sum()),
    "bool_of_an_input": lambda lib: lambda x: x if x.sum() > 0 else -x,
    "item_of_a_literal": lambda lib: lambda x: x * x.new_tensor(3.0).item(),
    "int_of_a_literal": lambda lib: lambda x: x * int(lib.tensor(2)),
    "item_of_a_constant_expression": lambda lib: lambda x: x + (lib.tensor(2.0) * 2).item(),
}


@pytest.mark.parametrize("name", sorted(TRACED))
def test_make_fx_raises_on_a_traced_value_and_burns_in_a_known_one(name):
    assert _traced(dc, TRACED[name](dc), "real") == _traced(torch, TRACED[name](torch), "real")


@pytest.mark.parametrize("name", ["item_of_a_literal", "int_of_a_literal", "item_of_a_constant_expression"])
def test_fake_make_fx_burns_in_a_known_value(name):
    assert _traced(dc, TRACED[name](dc), "fake") == _traced(torch, TRACED[name](torch), "fake")


def test_fake_make_fx_of_a_traced_value_raises_the_fake_modes_error():
    """torch's fake tracing has a ShapeEnv and records ``_local_scalar_dense``; dispatchcore has none."""
    assert _traced(dc, TRACED["item_of_an_input"](dc), "fake") == (
        "DataDependentOutputException", "aten._local_scalar_dense.default")


# --- iteration -------------------------------------------------------------------------------------------
ITERATIONS = ["out = list(iter(x))", "a, b = m", "out = [r for r in m]", "out = list(s)", "out = list(x.unbind(0))",
              "out = m.unbind(1)", "out = lib.unbind(m)", "out = m.unbind(dim=0)"]


@pytest.mark.parametrize("program", ITERATIONS)
def test_iteration_is_unbind_for_every_observer(program):
    results = []
    for lib in (dc, torch):
        calls: list[Any] = []

        Names, Sub = torch_function_observers(
            lib, lambda func, types, args, lib=lib, calls=calls: calls.append(
                (_name(lib, func), [t.__name__ for t in types], [type(a).__name__ for a in args])),
            lambda func, lib=lib, calls=calls: calls.append(("sub", _name(lib, func))))
        with Names():
            outcome = _run(program, _env(lib))
        mode = _ops_mode(lib)
        with mode:
            _run(program, _env(lib))
        env = {k: (v.as_subclass(Sub) if isinstance(v, lib.Tensor) else v) for k, v in _env(lib).items()}
        results.append((calls, outcome, mode.calls, _run(program, env)))
    assert results[0] == results[1]


# --- new_tensor and a subclass's results ------------------------------------------------------------------
NEW_TENSOR = ["out = x.new_tensor(m)", "out = x.new_tensor(s)", "out = x.new_tensor(m, dtype=lib.float64)",
              "out = x.new_tensor(m, requires_grad=True)", "out = x.new_tensor([1.0, 2.0])",
              "out = sub.new_tensor(x)", "out = sub.new_tensor(sub)", "out = sub.new_tensor([1.0])",
              "out = sub.new_zeros(2)", "out = sub + 1", "out = x.as_subclass(type(sub))", "out = sub.sum()"]


@pytest.mark.parametrize("program", NEW_TENSOR)
def test_a_dispatch_mode_sees_new_tensor_and_no_as_subclass_alias(program):
    results = []
    for lib in (dc, torch):
        class Sub(lib.Tensor):  # type: ignore[misc, name-defined]
            pass

        env = {**_env(lib), "sub": lib.tensor([5.0, 6.0]).as_subclass(Sub)}
        mode = _ops_mode(lib)
        with mode:
            outcome = _run(program, env)
        results.append((mode.calls, outcome, type(env.get("out")).__name__))
    assert results[0] == results[1]


@pytest.mark.parametrize("program", ["out = x.new_tensor(w)", "out = w.new_tensor(x)", "out = w.new_tensor(w)",
                                     "out = x.new_tensor(w, requires_grad=True)"])
def test_new_tensor_of_a_dispatch_subclass_is_detach_and_to_copy(program):
    results = []
    for lib in (dc, torch):
        log: list[Any] = []
        wrapper = _wrapper(lib, log)
        env = {**_env(lib), "w": wrapper(lib.tensor([3.0, 4.0]))}
        outcome = _run(program, env)
        results.append((log, outcome, type(env["out"]).__name__, env["out"].requires_grad))
    assert results[0] == results[1]
