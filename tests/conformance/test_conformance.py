"""The conformance suite: every ``OpInfo`` of ``tests/conformance/ops_*.py``, per dtype, against torch.

* ``test_matches_recorded_expectations``: dispatchcore against ``expected/<name>.json`` (torch's
  results, recorded by ``python -m tests.conformance.record``); runs without torch.
* ``test_matches_torch`` (marker ``differential``): dispatchcore against torch 2.13, live.
* ``test_gradcheck``: ``gradcheck``/``gradgradcheck`` of dispatchcore's derivatives (float64).
* The opset tests: every Core ATen overload (``core_aten.txt``) is covered by an entry or listed in
  ``framework.OUT_OF_SCOPE``, and every ``aten=`` name exists in ``dispatchcore.ops.aten``.

One test per (entry, dtype): samples run inside it, so that a failure lists every failing
sample at once. See ``framework.py`` for how to add entries and record expectations.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:  # `tests.conformance.*` imports need the repository root, however pytest was started
    sys.path.insert(0, _ROOT)

from tests.conformance import framework as F  # noqa: E402

OPS = F.all_ops()
_BY_DTYPE = [pytest.param(op, dtype, id=f"{op.name}-{dtype}") for op in OPS for dtype in op.dtypes]
_GRAD = [pytest.param(op, id=f"{op.name}-float64") for op in OPS if op.grad and "float64" in op.dtypes]


def _finish(outcome: F.Outcome) -> None:
    """Fail on unexpected problems or on xfails that now pass; xfail on expected problems only."""
    messages = list(outcome.failures)
    xpassed = outcome.xpassed()
    if xpassed:
        messages.append("xfail patterns whose checks all pass here (remove them): " + ", ".join(xpassed))
    if messages:
        pytest.fail("\n".join(messages), pytrace=False)
    if outcome.xfailed:
        ids = [text.split(":\n", 1)[0] for text in outcome.xfailed]
        print("\n".join(outcome.xfailed))  # the details, shown with -rx/-rA or on -s
        pytest.xfail(f"{len(ids)} declared differences: {', '.join(ids)}")


@pytest.mark.parametrize(("op", "dtype"), _BY_DTYPE)
def test_matches_recorded_expectations(op: F.OpInfo, dtype: str) -> None:
    expected = F.load_expectations(op)
    if expected is None:
        pytest.fail(f"no recorded expectations for {op.name!r} ({F.expectation_path(op).name}): run "
                    f"`python -m tests.conformance.record {op.name}` (it needs torch)", pytrace=False)
    dc = F.dc_backend()
    outcome = F.Outcome(op)
    produced = set()
    for case in F.cases(op, dtype):
        for check in F.checks_for(case):
            check_id = case.check_id(check)
            produced.add(check_id)
            if outcome.skipped(check_id):
                continue
            if check_id not in expected:
                outcome.fail(f"{check_id}: no recorded expectation: run `python -m tests.conformance.record {op.name}`")
                continue
            got = F.run_check(dc, case, check)
            outcome.add(check_id, F.compare_records(got, expected[check_id], op, recorded=True))
    stale = sorted(k for k in expected if k.startswith(f"{dtype}/") and k not in produced)
    if stale:
        outcome.fail(f"expectations recorded for checks that no longer exist: {stale}: run "
                     f"`python -m tests.conformance.record {op.name}`")
    _finish(outcome)


@pytest.mark.differential
@pytest.mark.parametrize(("op", "dtype"), _BY_DTYPE)
def test_matches_torch(op: F.OpInfo, dtype: str) -> None:
    pytest.importorskip("torch")
    dc, torch = F.dc_backend(), F.torch_backend()
    outcome = F.Outcome(op)
    for case in F.cases(op, dtype):
        for check in F.checks_for(case):
            check_id = case.check_id(check)
            if outcome.skipped(check_id):
                continue
            got, want = F.run_check(dc, case, check), F.run_check(torch, case, check)
            outcome.add(check_id, F.compare_records(got, want, op, recorded=False))
    _finish(outcome)


@pytest.mark.parametrize("op", _GRAD)
def test_gradcheck(op: F.OpInfo) -> None:
    """Finite differences against dispatchcore's derivatives, on the samples small enough for them."""
    outcome = F.Outcome(op)
    kinds = ("gradcheck", "gradgradcheck") if op.gradgrad else ("gradcheck",)
    ran = 0
    for case in F.cases(op, "float64"):
        for kind in kinds:
            check_id = case.check_id(kind)
            if outcome.skipped(check_id):
                continue
            done, failure = F.run_gradcheck(case, gradgrad=kind == "gradgradcheck")
            if done:
                ran += 1
                outcome.add(check_id, [failure] if failure else [])
    if not ran:
        outcome.fail(f"no float64 sample of {op.name!r} is small enough for gradcheck (at most "
                     f"{F.GRADCHECK_MAX_NUMEL} differentiable elements) and runs: add one")
    _finish(outcome)


def _core_aten() -> list[str]:
    lines = F.CORE_ATEN_PATH.read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_core_aten_list_is_recorded() -> None:
    """``core_aten.txt`` holds torch 2.13's Core ATen opset (``python -m tests.conformance.record --core-aten``)."""
    names = _core_aten()
    assert len(names) == len(set(names)) == 193


def test_every_core_aten_overload_is_covered_or_out_of_scope() -> None:
    core = set(_core_aten())
    covered = {F.normalize_aten(name) for op in OPS for name in op.aten}
    missing = sorted(core - covered - set(F.OUT_OF_SCOPE))
    assert not missing, (f"{len(missing)} Core ATen overloads have no conformance entry (aten=...) and are not "
                         f"in framework.OUT_OF_SCOPE: {missing}")
    both = sorted(covered & set(F.OUT_OF_SCOPE))
    assert not both, f"covered by an entry yet listed as out of scope: {both}"


def test_out_of_scope_names_are_core_aten_overloads() -> None:
    assert set(F.OUT_OF_SCOPE) <= set(_core_aten())
    assert all(reason.strip() for reason in F.OUT_OF_SCOPE.values())


def test_every_aten_name_of_an_entry_exists_in_dispatchcore() -> None:
    import dispatchcore as dc

    missing = []
    for op in OPS:
        for name in op.aten:
            base, _, overload = F.normalize_aten(name).partition(".")
            packet = getattr(dc.ops.aten, base, None)
            if packet is None or (overload or "default") not in packet.overloads():
                missing.append(f"{op.name}: aten::{F.normalize_aten(name)}")
    assert not missing, f"aten= names dispatchcore does not define: {missing}"


def test_every_expectation_file_belongs_to_an_entry() -> None:
    names = {f"{op.name}.json" for op in OPS}
    orphans = sorted(p.name for p in F.EXPECTED_DIR.glob("*.json") if p.name not in names)
    assert not orphans, f"expectation files of no entry (delete them): {orphans}"


# --- the framework itself: each check must be able to fail ---------------------------------------
def _record(**tensor):
    base = {"dtype": "float32", "shape": [2], "stride": [1], "offset": 0, "values": [1.0, 2.0]}
    return {"inputs": "0", "out": {"tensor": {**base, **tensor}}}


_PLAIN = F.OpInfo("plain", call="neg", samples=lambda rng, dtype: iter(()))


@pytest.mark.parametrize(("change", "message"), [
    ({"values": [1.0, 2.5]}, "values differ"),
    ({"values": [1.0, float("nan")]}, "values differ"),
    ({"dtype": "float64"}, "dtype float64, expected float32"),
    ({"shape": [1, 2]}, "shape [1, 2], expected [2]"),
    ({"stride": [2]}, "stride [2], expected [1]"),
    ({"offset": 1}, "storage_offset 1, expected 0"),
])
def test_compare_records_reports_each_tensor_property(change, message):
    problems = F.compare_records(_record(**change), _record(), _PLAIN, recorded=False)
    assert any(message in p for p in problems), problems
    assert F.compare_records(_record(), _record(), _PLAIN, recorded=False) == []


def test_compare_records_reports_errors_and_named_tuples():
    error = {"inputs": "0", "out": {"error": {"type": "RuntimeError", "message": "boom"}}}
    other = {"inputs": "0", "out": {"error": {"type": "IndexError", "message": "boom"}}}
    assert F.compare_records(other, error, _PLAIN, recorded=False)
    assert "expected RuntimeError" in F.compare_records(_record(), error, _PLAIN, recorded=False)[0]
    seq = {"seq": [], "type": "tuple", "fields": ["values", "indices"]}
    plain = {"inputs": "0", "out": {**seq, "fields": None}}
    assert "named tuple" in F.compare_records(plain, {"inputs": "0", "out": seq}, _PLAIN, recorded=False)[0]


def test_recorded_comparison_notices_changed_inputs():
    changed = {**_record(), "inputs": "1"}
    assert "inputs changed" in F.compare_records(changed, _record(), _PLAIN, recorded=True)[0]


def test_make_noncontig_layout_is_rebuilt_in_dispatchcore():
    import numpy as np

    x = F.make((3, 4), np.float32, np.random.default_rng(0), noncontig=True)
    assert not x.flags.c_contiguous
    t = F.dc_backend().tensor(x, False)
    assert (t.stride(), t.storage_offset(), t.is_contiguous()) == ((8, 2), 0, False)
    np.testing.assert_array_equal(t.numpy(), x)
    assert F.make((), np.int64, np.random.default_rng(0)).shape == ()


@pytest.mark.parametrize(("pattern", "check_id", "matches"), [
    ("zero-d", "float32/zero-d@forward", True),
    ("zero-d", "float32/zero-d@method", True),
    ("zero-d", "float64/zero-d@grad", False),
    ("zero-d@grad", "float64/zero-d@grad", True),
    ("float32/*", "float64/zero-d@forward", False),
    ("float*/zero-d@*", "float64/zero-d@gradcheck", True),
])
def test_xfail_patterns_select_checks(pattern, check_id, matches):
    assert F._pattern_matches(pattern, check_id) is matches


def test_gradcheck_catches_a_wrong_derivative():
    import dispatchcore as dc

    class Twice(dc.autograd.Function):  # forward doubles; backward wrongly triples
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    def samples(rng, dtype):
        yield F.Sample(F.make((3,), dtype, rng), name="vector")

    op = F.OpInfo("wrong-grad", call=lambda lib, x: Twice.apply(x), samples=samples, dtypes=("float64",), grad=True)
    ran, failure = F.run_gradcheck(F.cases(op, "float64")[0], gradgrad=False)
    assert ran and "Jacobian mismatch" in failure
