"""Differential tests: dispatch modes and autocast against torch 2.13 (TorchDispatchMode, torch.autocast).

dispatchcore's CPU autocast dtype is float16 (numpy has no bfloat16), so torch runs with
``torch.autocast("cpu", dtype=torch.float16)`` here, which is otherwise the same machinery.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.tls import tls_get

torch = pytest.importorskip("torch")
from torch.testing._internal.logging_tensor import capture_logs_with_logging_tensor_mode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode  # noqa: E402

pytestmark = pytest.mark.differential
C = torch._C


def torch_raw() -> tuple[int, int]:
    return (C._dispatch_tls_local_include_set().raw_repr(), C._dispatch_tls_local_exclude_set().raw_repr())


def dc_raw() -> tuple[int, int]:
    inc, exc, _ = tls_get()
    return (inc, exc)


# --- TLS raw values ------------------------------------------------------------------------------
def _tls_script(api):
    """The same program in both libraries; returns the raw (include, exclude) pairs it sees."""
    seen = {"default": api["raw"]()}

    class Probe(api["Mode"]):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def handle(self, func, types, args=(), kwargs=None):
            seen.setdefault(f"inside {self.name}", api["raw"]())
            return func(*args, **(kwargs or {}))

    class ProbeMode(Probe):
        pass

    setattr(ProbeMode, api["method"], ProbeMode.handle)
    x = api["ones"](2)
    with ProbeMode("outer"):
        seen["one mode"] = api["raw"]()
        x.neg()
        with ProbeMode("inner"):
            seen["two modes"] = api["raw"]()
            x.neg()
    seen["after modes"] = api["raw"]()
    with api["autocast"]("cpu"):
        seen["autocast"] = api["raw"]()
        with api["autocast"]("cpu", enabled=False):
            seen["autocast(enabled=False) nested"] = api["raw"]()
        seen["autocast again"] = api["raw"]()
        with ProbeMode("mode in autocast"):
            seen["mode in autocast"] = api["raw"]()
            x.neg()
    seen["after all"] = api["raw"]()
    return seen


TORCH_API = {"raw": torch_raw, "Mode": TorchDispatchMode, "method": "__torch_dispatch__",
             "ones": torch.ones, "autocast": lambda d, **kw: torch.autocast(d, dtype=torch.float16, **kw)}
DC_API = {"raw": dc_raw, "Mode": dc.DispatchMode, "method": "__dispatch__", "ones": dc.ones,
          "autocast": dc.autocast}


def test_tls_raw_values_match_torch():
    expected = _tls_script(TORCH_API)
    got = _tls_script(DC_API)
    assert list(got) == list(expected)
    for what in expected:
        assert tuple(map(hex, got[what])) == tuple(map(hex, expected[what])), what
    # the values themselves, for the record
    assert hex(expected["one mode"][0]) == "0x100000414000000"  # + Python, PythonTLSSnapshot
    assert hex(expected["inside outer"][1]) == "0x1fffffffe0000000"  # keys above Python
    assert hex(expected["autocast"][1]) == "0x1ff0000000000"  # only AutocastCPU removed


def test_printed_tls_inside_a_mode_matches_torch():
    class T(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with T():
        expected = (str(C._dispatch_tls_local_include_set()), str(C._dispatch_tls_local_exclude_set()))
    with dc.DispatchMode():
        got = (str(dc.tls_local_include_set()), str(dc.tls_local_exclude_set()))
    assert got == expected


# --- mode stack semantics --------------------------------------------------------------------------
def _stack_script(Mode, method, current, ones):
    log = []

    class Named(Mode):
        def __init__(self, name):
            super().__init__()
            self.name = name

    def handle(self, func, types, args=(), kwargs=None):
        nxt = current()
        log.append((self.name, str(func).split(".")[-2], nxt.name if nxt is not None else None))
        return func(*args, **(kwargs or {}))

    setattr(Named, method, handle)
    x = ones(2)
    with Named("a"), Named("b"), Named("c"):
        y = x.neg()
    return log, y.tolist()


def test_nesting_order_and_current_mode_inside_match_torch():
    expected = _stack_script(TorchDispatchMode, "__torch_dispatch__", _get_current_dispatch_mode, torch.ones)
    got = _stack_script(dc.DispatchMode, "__dispatch__", dc.current_dispatch_mode, dc.ones)
    assert got == expected
    assert expected[0] == [("c", "neg", "b"), ("b", "neg", "a"), ("a", "neg", None)]


def test_constant_returning_mode_matches_torch():
    t_const, d_const = torch.full((3,), 7.0), dc.full((3,), 7.0)

    class TConst(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return t_const

    class DConst(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            return d_const

    tx, dx = torch.ones(2, 2, requires_grad=True), dc.ones(2, 2, requires_grad=True)
    with TConst():
        expected = torch.mm(tx, tx)
    with DConst():
        got = dc.ops.aten.mm.default(dx, dx)
    assert got is d_const and expected is t_const
    # the Autograd kernel above the mode still recorded the op on the returned tensor
    assert type(got.grad_fn).__name__ == type(expected.grad_fn).__name__ == "MmBackward0"
    # Deviation: torch converts the result to the schema's return type ("Unable to cast 7 to
    # Tensor" for a non-tensor); dispatchcore returns whatever the mode returns.
    class TSeven(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return 7

    class DSeven(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            return 7

    t2, d2 = torch.ones(2, 2), dc.ones(2, 2)
    with pytest.raises(RuntimeError, match="Unable to cast 7 to Tensor"), TSeven():
        torch.mm(t2, t2)
    with DSeven():
        assert dc.ops.aten.mm.default(d2, d2) == 7


@pytest.fixture(autouse=True)
def _restore_logging_tensor_logger():
    """torch's capture_logs leaves its logger non-propagating; pytest >= 9.2 then attaches its own
    handler to it at the next test's start, and that handler cannot format torch's log records."""
    logger = logging.getLogger("LoggingTensor")
    propagate, level = logger.propagate, logger.level
    yield
    logger.propagate, logger.level = propagate, level


# --- LoggingMode vs LoggingTensorMode --------------------------------------------------------------
def _program(lib, x, w, v):
    y = lib.mm(x, w).relu().sum()
    z = x + x
    s = lib.softmax(v, 0)
    return y, z, s


def test_logging_mode_lines_match_logging_tensor_mode():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    ws = np.arange(12, dtype=np.float32).reshape(3, 4) / 5 - 1
    vs = np.arange(3, dtype=np.float32)
    tx, tw, tv = (torch.from_numpy(a.copy()) for a in (xs, ws, vs))
    dx, dw, dv = (dc.tensor(a.copy()) for a in (xs, ws, vs))
    with capture_logs_with_logging_tensor_mode() as logs:
        t_out = _program(torch, tx, tw, tv)

    class DcLib:
        mm = staticmethod(lambda a, b: a @ b)
        softmax = staticmethod(lambda a, d: a.softmax(d))

    with dc.LoggingMode() as log:
        d_out = _program(DcLib, dx, dw, dv)
    assert log.lines == [line.replace("torch._ops.", "") for line in logs]
    for t, d in zip(t_out, d_out, strict=True):
        np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-6)


def _number_program(x):
    a = x * 2
    b = 2 * x
    c = x / 2.5
    d = x * True
    e = x - 3
    x.add_(1)
    x.mul_(0.5)
    return a, b, c, d, e


def test_logging_mode_lines_with_numbers_match_logging_tensor_mode():
    """A wrapped number reaches the mode as the Python number (Note [Numbers for a mode])."""
    tx, dx = torch.ones(2, 3), dc.ones(2, 3)
    with capture_logs_with_logging_tensor_mode() as logs:
        t_out = _number_program(tx)
    with dc.LoggingMode() as log:
        d_out = _number_program(dx)
    assert log.lines == [line.replace("torch._ops.", "") for line in logs]
    assert "aten.mul.Tensor($0, 2)" in log.lines[0]
    for t, d in zip(t_out, d_out, strict=True):
        np.testing.assert_allclose(d.numpy(), t.numpy())


@pytest.mark.parametrize("expr", ["x * 2", "2 * x", "x.add_(1)", "x / 2.5", "x * True", "x + 1j", "x - 3",
                                  "x.sub_(1.5)", "2 / x", "x ** 2", "x == 2"])
def test_a_mode_sees_torchs_args_for_number_operands(expr):
    def run(mode_class, method, x):
        seen = []

        class Spy(mode_class):
            pass

        def handle(self, func, types, args=(), kwargs=None):
            seen.append((str(func), tuple(type(a).__name__ if not hasattr(a, "shape") else "Tensor" for a in args),
                         tuple(a for a in args if not hasattr(a, "shape"))))
            return func(*args, **(kwargs or {}))

        setattr(Spy, method, handle)
        with Spy():
            eval(expr, {"x": x})  # noqa: S307 - a fixed table
        return seen

    expected = run(TorchDispatchMode, "__torch_dispatch__", torch.ones(2))
    assert run(dc.DispatchMode, "__dispatch__", dc.ones(2)) == expected


# --- autocast -------------------------------------------------------------------------------------
def _dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


def _autocast_cases(lib, tensor, ops):
    """(name, result) for every autocast policy; ``tensor(dtype_name, shape)`` makes inputs."""
    a, b = tensor("float32", (2, 3)), tensor("float32", (3, 4))
    h = tensor("float16", (2, 3))
    d = tensor("float64", (2, 3))
    target = ops["target"]
    return [
        ("mm f32", ops["mm"](a, b)),
        ("mm f64", ops["mm"](d, tensor("float64", (3, 4)))),
        ("mm f16 x f32", ops["mm"](h, b)),
        ("bmm", ops["bmm"](tensor("float32", (2, 2, 3)), tensor("float32", (2, 3, 2)))),
        ("matmul 2-D", ops["matmul"](a, b)),
        ("matmul 1-D", ops["matmul"](tensor("float32", (3,)), b)),
        ("matmul 3-D", ops["matmul"](tensor("float32", (2, 2, 3)), b)),
        ("cat f32 f16", ops["cat"]([a, h])),
        ("cat f16 f16", ops["cat"]([h, h])),
        ("cat f64 f32", ops["cat"]([d, a])),
        ("cat f64 f16", ops["cat"]([d, h])),
        ("stack f16 f32", ops["stack"]([h, a])),
        ("mse_loss f16", ops["mse_loss"](h, h)),
        ("nll_loss f16", ops["nll_loss"](ops["log_softmax"](h, 1), target)),
        ("softmax f32", ops["softmax"](a, 0)),
        ("softmax f16", ops["softmax"](h, 0)),
        ("log_softmax f32", ops["log_softmax"](a, 1)),
        ("sum f32", ops["sum"](a)),
        ("add f32", a + a),
        ("add f16 f32", h + a),
    ]


def _torch_tensor(dtype, shape):
    return torch.from_numpy((np.arange(int(np.prod(shape))) / 10).reshape(shape).astype(dtype))


def _dc_tensor(dtype, shape):
    return dc.tensor((np.arange(int(np.prod(shape))) / 10).reshape(shape).astype(dtype))


TORCH_OPS = {"mm": torch.mm, "bmm": torch.bmm, "matmul": torch.matmul, "cat": torch.cat, "stack": torch.stack,
             "mse_loss": torch.nn.functional.mse_loss, "nll_loss": torch.nn.functional.nll_loss,
             "softmax": torch.softmax, "log_softmax": torch.log_softmax, "sum": torch.sum,
             "target": torch.tensor([0, 2])}
A = dc.ops.aten
DC_OPS = {"mm": A.mm.default, "bmm": A.bmm.default, "matmul": A.matmul.default, "cat": A.cat.default,
          "stack": A.stack.default, "mse_loss": A.mse_loss.default, "nll_loss": A.nll_loss.default,
          "softmax": lambda t, d: t.softmax(d), "log_softmax": lambda t, d: t.log_softmax(d),
          "sum": A.sum.default, "target": dc.tensor([0, 2])}


def test_autocast_result_dtypes_and_values_match_torch():
    with torch.autocast("cpu", dtype=torch.float16):
        expected = _autocast_cases(torch, _torch_tensor, TORCH_OPS)
    with dc.autocast("cpu"):
        got = _autocast_cases(dc, _dc_tensor, DC_OPS)
    assert [(n, _dtype_name(t)) for n, t in got] == [(n, _dtype_name(t)) for n, t in expected]
    for (name, d), (_, t) in zip(got, expected, strict=True):
        np.testing.assert_allclose(d.numpy().astype(np.float64), t.numpy().astype(np.float64),
                                   rtol=2e-3, atol=2e-3, err_msg=name)


def test_autocast_disabled_nested_matches_torch():
    def run(lib_autocast, mm, tensor):
        out = []
        with lib_autocast("cpu"):
            out.append(_dtype_name(mm(tensor("float32", (2, 2)), tensor("float32", (2, 2)))))
            with lib_autocast("cpu", enabled=False):
                out.append(_dtype_name(mm(tensor("float32", (2, 2)), tensor("float32", (2, 2)))))
            out.append(_dtype_name(mm(tensor("float32", (2, 2)), tensor("float32", (2, 2)))))
        return out

    expected = run(lambda d, **kw: torch.autocast(d, dtype=torch.float16, **kw), torch.mm, _torch_tensor)
    got = run(dc.autocast, DC_OPS["mm"], _dc_tensor)
    assert got == expected == ["float16", "float32", "float16"]


def test_autocastcpu_table_entries_match_torch():
    for name in dc.get_dispatcher().operator_names():
        if not name.startswith("aten::"):
            continue
        try:
            table = C._dispatch_dump_table(name)
        except RuntimeError:
            continue
        torch_line = next((ln for ln in table.splitlines() if ln.startswith("AutocastCPU:")), "")
        reg, label = dc.find_op(name).table_entry("AutocastCPU")
        assert ("fallthrough" in torch_line) == reg.fallthrough, name
        assert torch_line.endswith(f"[{label}]"), name


def test_ops_seen_by_a_mode_under_autocast_match_torch():
    """The casts run through the dispatcher: a mode below autocast sees them, then mm in float16."""
    x_np = np.ones((2, 3), np.float32)
    w_np = np.ones((3, 4), np.float32)
    tx, tw = torch.from_numpy(x_np.copy()), torch.from_numpy(w_np.copy()).requires_grad_()
    dx, dw = dc.tensor(x_np.copy()), dc.tensor(w_np.copy()).requires_grad_()

    def summary(lines):
        # "$4: f16[2, 4] = torch._ops.aten.mm.default($3, $1)" -> ("f16[2, 4]", "aten.mm.default", "$3, $1")
        out = []
        for line in lines:
            result, _, call = line.partition(" = ")
            name, _, args = call.partition("(")
            args = ", ".join(a for a in args.rstrip(")").split(", ") if "=" not in a)
            out.append((result.partition(": ")[2], name.replace("torch._ops.", ""), args))
        return out

    th, dh = torch.ones(2, 3, dtype=torch.float16), dc.ones(2, 3, dtype=dc.float16)
    with capture_logs_with_logging_tensor_mode() as logs, torch.autocast("cpu", dtype=torch.float16):
        torch.mm(tx, tw)  # c10 casts the last argument first: w, then x
        torch.mm(tx, tw)  # the weight's cast is cached; x is cast again
        torch.cat([tx, th, tx])  # promote: float32 wins, only the float16 input is cast
        torch.nn.functional.mse_loss(th, th)  # fp32 list
    with dc.LoggingMode() as log, dc.autocast("cpu"):
        A.mm.default(dx, dw)
        A.mm.default(dx, dw)
        A.cat.default([dx, dh, dx])
        A.mse_loss.default(dh, dh)
    assert summary(log.lines) == summary(logs)
    assert len(logs) == 10


class _Names(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("watched", [False, True], ids=["unwatched", "under-a-mode"])
def test_a_held_first_gradient_is_copied_as_torch_copies_it(watched):
    """AccumulateGrad copies a gradient the caller still holds: same values, strides and version."""
    def run(lib, mode_cls):
        x = lib.ones(2, 3, requires_grad=True)
        g = lib.full((2, 3), 2.0)
        mode = mode_cls() if watched else None
        if mode is not None:
            with mode:
                x.clone().backward(g)
        else:
            x.clone().backward(g)
        ops = [op for op in (mode.ops if mode is not None else []) if op != "aten.clone.default"]
        return x.grad.tolist(), tuple(x.grad.stride()), x.grad._version, x.grad is not g, ops

    class DcNames(dc.DispatchMode):
        def __init__(self):
            self.ops = []

        def __dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    ours, theirs = run(dc, DcNames), run(torch, _Names)
    assert ours == theirs
    if watched:
        assert ours[-1][-2:] == ["aten.new_empty_strided.default", "aten.copy_.default"]
