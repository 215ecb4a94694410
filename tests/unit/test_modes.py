"""modes.py: DispatchMode stack semantics, the Python key's fallback, thread isolation, LoggingMode."""

from __future__ import annotations

import asyncio
import io
import threading

import pytest

import dispatchcore as dc
from dispatchcore.keys import DispatchKey as D
from dispatchcore.modes import ABOVE_PYTHON, _modes_get
from dispatchcore.tls import tls_get

PYTHON = int(dc.DispatchKeySet(D.Python))
SNAPSHOT = int(dc.DispatchKeySet(D.PythonTLSSnapshot))
AUTOGRAD = int(dc.DispatchKeySet(D.AutogradFunctionality))


@pytest.fixture(autouse=True)
def _no_mode_leaks():
    before = _modes_get()
    yield
    assert _modes_get() == before, "a test leaked a dispatch mode"


class Recorder(dc.DispatchMode):
    """Forwards every call and appends (name, op) to a shared log."""

    def __init__(self, name: str, log: list) -> None:
        self.name = name
        self.log = log

    def __dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, str(func)))
        return func(*args, **(kwargs or {}))


def test_entering_includes_python_and_snapshot_leaving_restores():
    before = tls_get()
    mode = Recorder("m", [])
    with mode as entered:
        assert entered is mode
        inc, exc, _ = tls_get()
        assert inc == before[0] | PYTHON | SNAPSHOT  # and nothing else
        assert exc == before[1]
        assert dc.current_dispatch_mode() is mode
        assert dc.dispatch_mode_stack() == [mode]
        assert str(dc.tls_local_include_set()) == (
            "DispatchKeySet(BackendSelect, Python, ADInplaceOrView, PythonTLSSnapshot)")
    assert tls_get() == before
    assert dc.current_dispatch_mode() is None and dc.dispatch_mode_stack() == []


def test_mode_sees_ops_below_autograd_and_composites_decomposed():
    log = []
    x = dc.ones(3)
    with Recorder("m", log):
        y = (x + x).softmax(0)
    assert [op for _, op in log] == ["aten.add.Tensor", "aten._softmax.default"]  # softmax.int is CIA
    assert y.dtype is dc.float32 and y.shape == (3,)


def test_func_is_the_operator_handle_and_args_are_passed_through():
    seen = {}

    class Capture(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            seen.update(func=func, types=types, args=args, kwargs=kwargs)
            return func(*args, **kwargs)

    x = dc.ones(2)
    with Capture():
        out = dc.ops.aten.add.Tensor(x, x, alpha=2)
    assert seen["func"] is dc.ops.aten.add.Tensor
    assert isinstance(seen["func"], dc.OperatorHandle)
    assert seen["types"] == ()
    assert seen["args"] == (x, x) and seen["kwargs"] == {"alpha": 2}
    assert out.tolist() == [3.0, 3.0]


def test_nested_modes_run_innermost_first_and_func_goes_to_the_next_mode():
    log = []
    x = dc.ones(2)
    with Recorder("outer", log), Recorder("inner", log):
        out = x * x
    assert log == [("inner", "aten.mul.Tensor"), ("outer", "aten.mul.Tensor")]
    assert out.tolist() == [1.0, 1.0]


def test_inside_dispatch_the_mode_is_off_the_stack_and_keys_above_python_are_excluded():
    seen = []

    class Probe(dc.DispatchMode):
        def __init__(self, name):
            self.name = name

        def __dispatch__(self, func, types, args=(), kwargs=None):
            inc, exc, _ = tls_get()
            seen.append((self.name, [m.name for m in dc.dispatch_mode_stack()], bool(inc & PYTHON),
                         bool(inc & SNAPSHOT), exc & ABOVE_PYTHON == ABOVE_PYTHON))
            return func(*args, **(kwargs or {}))

    x = dc.ones(2)
    with Probe("outer") as outer, Probe("inner"):
        x.neg()
        assert dc.current_dispatch_mode().name == "inner"
    # inner runs with outer still stacked (Python stays included); outer runs with no mode left
    assert seen == [("inner", ["outer"], True, True, True), ("outer", [], False, False, True)]
    assert dc.current_dispatch_mode() is None and outer.name == "outer"


def test_calling_func_inside_dispatch_runs_the_backend_once():
    calls = []

    class Twice(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            calls.append(str(func))
            return func(func(*args), args[1])  # re-entrant calls go below Python, not to us

    x = dc.tensor([1.0, 2.0])
    with Twice():
        out = dc.ops.aten.add.Tensor(x, x)
    assert out.tolist() == [3.0, 6.0]  # (x + x) + x
    assert calls == ["aten.add.Tensor"]


def test_mode_returning_a_constant_replaces_the_result():
    class Const(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            return "constant"

    x = dc.ones(2)
    with Const():
        assert dc.ops.aten.add.Tensor(x, x) == "constant"
        assert dc.ops.aten.relu.default(x) == "constant"
    assert (x + x).tolist() == [2.0, 2.0]


def test_exception_in_dispatch_restores_the_stack_and_tls():
    class Boom(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            raise ValueError(f"no {func}")

    x = dc.ones(2)
    outer_log = []
    with Recorder("outer", outer_log) as outer:
        inside = tls_get()
        with Boom() as boom:
            state = tls_get()
            with pytest.raises(ValueError, match="no aten.add.Tensor"):
                x + x
            assert tls_get() == state
            assert dc.dispatch_mode_stack() == [outer, boom]
        assert tls_get() == inside
        assert (x + x).tolist() == [2.0, 2.0]
    assert outer_log == [("outer", "aten.add.Tensor")]  # Boom raised before forwarding


def test_exception_leaving_the_with_block_pops_the_mode():
    before = tls_get()
    with pytest.raises(KeyError):
        with Recorder("m", []):
            raise KeyError("x")
    assert tls_get() == before and dc.current_dispatch_mode() is None


def test_leaving_modes_out_of_order_raises_and_changes_nothing():
    a, b = Recorder("a", []), Recorder("b", [])
    a.__enter__()
    b.__enter__()
    try:
        state = tls_get()
        with pytest.raises(RuntimeError, match="not the innermost mode"):
            a.__exit__(None, None, None)
        assert tls_get() == state and dc.dispatch_mode_stack() == [a, b]
    finally:
        b.__exit__(None, None, None)
        a.__exit__(None, None, None)
    with pytest.raises(RuntimeError, match="not active"):
        a.__exit__(None, None, None)


def test_torch_dispatch_spelling_works_and_default_forwards():
    class Ported(dc.DispatchMode):
        def __init__(self):
            self.n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.n += 1
            return func(*args, **(kwargs or {}))

    x = dc.ones(2)
    with Ported() as p, dc.DispatchMode():
        assert (x * 3).tolist() == [3.0, 3.0]
    assert p.n == 1


def test_mode_entered_inside_dispatch_nests_below_it():
    log = []

    class Outer(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            log.append(("outer", str(func)))
            with Recorder("entered-inside", log):
                return func(*args, **(kwargs or {}))

    x = dc.ones(2)
    with Outer():
        x.neg()
    assert log == [("outer", "aten.neg.default"), ("entered-inside", "aten.neg.default")]


def test_factories_and_inplace_ops_reach_the_mode():
    log = []
    x = dc.ones(2)
    with Recorder("m", log):
        z = dc.zeros(2)
        version = x._version
        x.add_(1)
    assert [op for _, op in log] == ["aten.zeros.default", "aten.add_.Tensor"]  # 1: a wrapped number,
    # handed to the mode as the int 1 (Note [Numbers for a mode])
    assert x._version == version + 1  # ADInplaceOrView, above the mode, still bumps it
    assert z.tolist() == [0.0, 0.0]


def test_no_mode_python_key_included_by_hand_passes_through():
    x = dc.ones(2)
    with dc.IncludeDispatchKeyGuard(D.Python):
        assert (x + x).tolist() == [2.0, 2.0]


def test_dispatch_below_python_keys_skips_the_mode():
    log = []
    x = dc.ones(2)
    with Recorder("m", log), dc.DisableTorchDispatch():
        x + x
    assert log == []


# --- threads and tasks --------------------------------------------------------------------------
def test_modes_do_not_leak_into_other_threads():
    log = []
    results = {}
    entered, done = threading.Event(), threading.Event()

    def worker():
        entered.wait()
        results["stack"] = dc.dispatch_mode_stack()
        results["included"] = tls_get()[0]
        results["out"] = (dc.ones(2) + 1).tolist()
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    with Recorder("main", log):
        entered.set()
        done.wait(10)
        dc.ones(1).neg()
    t.join()
    assert results["stack"] == [] and not results["included"] & PYTHON
    assert results["out"] == [2.0, 2.0]
    assert log == [("main", "aten.ones.default"), ("main", "aten.neg.default")]


def test_each_thread_has_its_own_stack():
    logs: dict[str, list] = {}
    errors = []
    barrier = threading.Barrier(4)

    def worker(name):
        try:
            log = logs.setdefault(name, [])
            with Recorder(name, log):
                barrier.wait(10)
                for _ in range(20):
                    dc.ones(2).relu()
                barrier.wait(10)
            assert dc.dispatch_mode_stack() == []
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for name, log in logs.items():
        assert {n for n, _ in log} == {name} and len(log) == 40


def test_asyncio_tasks_on_one_thread_share_the_mode_stack_as_in_torch():
    """The stack is per thread (TorchDispatchModeTLS), so a task sees a mode another task entered."""
    async def in_mode(log):
        with Recorder("task", log):
            await asyncio.sleep(0)
            dc.ones(1).neg()
            await asyncio.sleep(0)

    async def plain(out):
        await asyncio.sleep(0)
        out.append(dc.dispatch_mode_stack())
        dc.ones(1).neg()

    async def main():
        log, out = [], []
        await asyncio.gather(in_mode(log), plain(out))
        return log, out

    log, out = asyncio.run(main())
    assert [[type(m).__name__ for m in stack] for stack in out] == [["Recorder"]]
    assert log == [("task", "aten.ones.default"), ("task", "aten.neg.default")] * 2


# --- LoggingMode --------------------------------------------------------------------------------
def test_logging_mode_lines_match_pytorchs_format():
    x, w = dc.ones(2, 3), dc.ones(3, 4)
    with dc.LoggingMode() as log:
        y = (x @ w).relu().sum()
    assert log.lines == [
        "$2: f32[2, 4] = aten.mm.default($0, $1)",
        "$3: f32[2, 4] = aten.relu.default($2)",
        "$4: f32[] = aten.sum.default($3)",
    ]
    assert log.ops == ["aten.mm.default", "aten.relu.default", "aten.sum.default"]
    assert log.records[-1].result is y and log.records[0].args == (x, w)
    assert log.records[0].name == "aten.mm.default"


def test_logging_mode_formats_scalars_lists_kwargs_and_tuples():
    x = dc.tensor([[1.0, 5.0], [7.0, 2.0]])
    with dc.LoggingMode() as log:
        dc.ops.aten.max.dim(x, 1)
        x.view(4)
        dc.ops.aten.add.Tensor(x, x, alpha=2)
    assert log.lines == [
        "('$1: f32[2]', '$2: i64[2]') = aten.max.dim($0, 1)",
        "$3: f32[4] = aten.view.default($0, ['4'])",
        "$4: f32[2, 2] = aten.add.Tensor($0, $0, alpha=2)",
    ]


def test_logging_mode_records_backward_ops():
    x = dc.ones(2, 3, requires_grad=True)
    w = dc.ones(3, 4)
    with dc.LoggingMode() as log:
        loss = (x @ w).relu().sum()
        loss.backward()
    forward = log.ops[:4]
    backward = log.ops[4:]
    # relu saves its output: with a mode active, saving it dispatches a detach (as torch's
    # shallow_copy_and_detach does), and so does reading it back in ReluBackward0
    assert forward == ["aten.mm.default", "aten.relu.default", "aten.detach.default", "aten.sum.default"]
    assert backward.count("aten.detach.default") == 1  # the saved output read back
    # the log holds every result, x's gradient too: AccumulateGrad copies a gradient someone else
    # holds instead of taking it over, as torch does (Note [Stealing the gradient])
    assert backward[-2:] == ["aten.new_empty_strided.default", "aten.copy_.default"]
    # SumBackward0 expands the seed gradient, ReluBackward0 masks it, MmBackward0 multiplies
    # by w.t(): all through the dispatcher, so the mode sees them
    assert "aten.expand.default" in backward
    assert backward.index("aten.t.default") < len(backward) - 2
    assert "aten.mm.default" in backward
    assert x.grad.tolist() == [[4.0] * 3] * 2


def test_logging_mode_prints_when_asked():
    buf = io.StringIO()
    x = dc.ones(2)
    with dc.LoggingMode(file=buf) as log:
        x.neg()
    assert buf.getvalue() == "$1: f32[2] = aten.neg.default($0)\n"
    assert log.lines == ["$1: f32[2] = aten.neg.default($0)"]


def test_logging_mode_numbers_tensors_by_identity():
    a = dc.tensor([1.0, 2.0])
    b = dc.tensor([1.0, 2.0])  # equal values, different tensors
    with dc.LoggingMode() as log:
        dc.ops.aten.add.Tensor(a, b)
        dc.ops.aten.add.Tensor(b, a)
    assert log.lines == ["$2: f32[2] = aten.add.Tensor($0, $1)", "$3: f32[2] = aten.add.Tensor($1, $0)"]


def test_trace_shows_the_python_hop():
    x = dc.ones(2)
    with Recorder("m", []), dc.trace() as t:
        x + x
    hops = [(h.kind, h.op, h.key.name) for h in t.hops()]
    assert hops == [
        ("call", "aten::add.Tensor", "PythonTLSSnapshot"),
        ("redispatch", "aten::add.Tensor", "AutogradCPU"),
        ("redispatch", "aten::add.Tensor", "Python"),
        ("call", "aten::add.Tensor", "CPU"),
    ]
    python_hop = t.find("aten::add", "Python")[0]
    assert python_hop.label == "backend fallback"
    assert python_hop.children[0].included & PYTHON == 0  # the mode's own call: Python off
    assert python_hop.children[0].excluded & AUTOGRAD


def test_python_fallback_is_registered_by_modes_and_its_boxed_form_works():
    reg = dc.get_dispatcher().fallbacks[D.Python]
    assert reg.where.file == "dispatchcore/modes.py" and reg.boxed_fallback and not reg.fallthrough
    assert dc.find_op("aten::add.Tensor").table_entry("Python") == (reg, "backend fallback")
    x = dc.ones(2)
    ks = dc.DispatchKeySet(D.Python) | dc.DispatchKeySet(D.CPU)
    log = []
    with Recorder("m", log):
        out = reg.kernel(ks, dc.ops.aten.add.Tensor, x, x)  # fallback(keyset, op, *args)
    assert out.tolist() == [2.0, 2.0] and log == [("m", "aten.add.Tensor")]
    assert reg.kernel(ks, dc.ops.aten.add.Tensor, x, x).tolist() == [2.0, 2.0]  # no mode: below Python
