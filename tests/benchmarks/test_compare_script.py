"""Keep ``bench/compare.py`` working: a one-round, tiny-calibration run must print the table."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compare.py"


def _run(*extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, BENCH_THREADS="1")
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", "--quick", *extra],
        capture_output=True, text=True, timeout=120, env=env, cwd=SCRIPT.parents[1],
    )


def _table_rows(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("goal  metric"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]  # header, rule, one line per row


@pytest.mark.parametrize("extra", [(), ("--no-torch",)], ids=["torch-if-present", "recorded-anchors"])
def test_compare_script_prints_the_table(extra):
    proc = _run(*extra)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = _table_rows(proc.stdout)
    header = rows[0].split()
    assert header[:5] == ["goal", "metric", "dispatchcore", "anchor", "vs"]
    assert {"must", "target", "must?", "target?"} <= set(header)
    g15 = [r for r in rows if r.startswith("G15 ")]
    assert g15, proc.stdout
    assert all(("PASS" in r or "MISS" in r) for r in g15)
    g17 = [r for r in rows if r.startswith("G17 ")]
    assert len(g17) == 2 and all(("PASS" in r or "MISS" in r) for r in g17)
    for goal in ("G10", "G11", "G12", "G13", "G14", "G16", "G20"):  # G19, G25, G26 need torch: below
        assert any(r.startswith(f"{goal} ") and ("PASS" in r or "MISS" in r) for r in rows), goal
    assert any(r.startswith("G18 ") for r in rows)
    if not extra and importlib.util.find_spec("torch") is not None:  # the training steps have no recorded anchor
        assert sum(r.startswith("I16 ") and ("PASS" in r or "MISS" in r) for r in rows) == 2
        # issue 19's long graphs (at 1/100 of their lengths under --quick) and the larger step, and the
        # Python key's rows (a forwarding mode, a forwarding subclass, make_fx of the MLP step)
        assert all(any(r.startswith(f"{g} ") and ("PASS" in r or "MISS" in r) for r in rows)
                   for g in ("G19", "G21", "G22", "G23", "G24", "G25", "G26"))
    if extra:
        assert "(rec)" in proc.stdout


def test_compare_script_only_filter():
    proc = _run("--only", "G15", "--no-torch")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _table_rows(proc.stdout)[2:]
    assert rows and all(r.startswith("G15 ") for r in rows)


def test_compare_script_together_interleaves_the_small_rows_and_keeps_every_row():
    proc = _run("--only", "G1,G4,G9", "--no-torch", "--together")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "all rows interleaved together" in proc.stdout
    rows = _table_rows(proc.stdout)[2:]
    assert [r.split()[0] for r in rows] == ["G1", "G4", "G4", "G4", "G9"]
    assert all(("PASS" in r or "MISS" in r) for r in rows)


def test_info_rows_show_their_ratio_to_the_anchor():
    proc = _run("--only", "info")
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = next(r for r in _table_rows(proc.stdout)[2:] if "operator handle call" in r)
    vs = row.split()[-5]  # then must, target, must?, target?: all "-" for an info row
    if importlib.util.find_spec("torch") is None:
        assert vs == "-", row
    else:
        assert re.fullmatch(r"\d+\.\d\dx", vs), row
