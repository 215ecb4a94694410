"""``python -m dispatchcore run SCRIPT``: unchanged PyTorch scripts on dispatchcore, with --log-ops and --trace.

The scripts live in tests/behavior/scripts/. Most runs are in-process (``main([...])``), which also
checks that the hook leaves nothing behind; one runs the real command in a subprocess; with torch
installed, one compares a script's printed output under dispatchcore and under real torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dispatchcore as dc
from dispatchcore.__main__ import main

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROOT = Path(__file__).resolve().parents[2]

# A real torch imported by other tests of the session is hidden during each run (and restored).
pytestmark = pytest.mark.filterwarnings("ignore::dispatchcore.compat.RealTorchShadowedWarning")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _torch_entries() -> dict[str, object]:
    return {name: module for name, module in sys.modules.items() if name == "torch" or name.startswith("torch.")}


def test_run_executes_the_script_as_main_with_its_arguments(capsys):
    before, meta_path, argv = _torch_entries(), list(sys.meta_path), list(sys.argv)
    script = str(SCRIPTS / "autograd_basics.py")
    code, out, err = run(capsys, "run", script, "2", "--flag-for-the-script")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "args: ['2', '--flag-for-the-script']"
    assert lines[1] == "nn.functional is F: True"
    assert [line.split(":")[0] for line in lines[2:4]] == ["step 0", "step 1"]
    assert "grad of sum(a^2): [3.0, -4.0, 6.0]" in lines
    assert _torch_entries() == before and sys.meta_path == meta_path and sys.argv == argv


def test_the_exit_status_of_the_script_is_the_commands(capsys):
    assert run(capsys, "run", str(SCRIPTS / "exits.py"), "3")[0] == 3
    code, out, _ = run(capsys, "run", str(SCRIPTS / "exits.py"), "0")
    assert code == 0 and out == "[1.0]\n"


def test_an_uncaught_exception_prints_the_scripts_traceback_and_exits_1(capsys):
    script = SCRIPTS / "raises.py"
    code, _, err = run(capsys, "run", str(script))
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1] == f'  File "{script}", line 9, in <module>'  # the runner's frames are left out
    assert f'  File "{script}", line 6, in check' in lines
    assert lines[-1] == "ValueError: too big: [1.0, 1.0, 1.0]"


def test_a_syntax_error_in_the_script_is_shown_as_python_shows_it(capsys, tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import torch\ndef (:\n")
    code, _, err = run(capsys, "run", str(script))
    assert code == 1
    assert err.startswith(f'  File "{script}", line 2') and err.splitlines()[-1].startswith("SyntaxError")


def test_a_torch_api_dispatchcore_lacks_stops_the_script_with_an_error_naming_it(capsys):
    script = SCRIPTS / "missing_api.py"
    code, _, err = run(capsys, "run", str(script))
    assert code == 1
    where = os.path.relpath(script) if not os.path.relpath(script).startswith("..") else str(script)
    assert err.splitlines()[-1] == (f"dispatchcore.compat.UnmodelledModuleError: dispatchcore does not model "
                                    f"torch.fft (imported by {where} line 4)")
    assert "compat.py" not in err  # the traceback ends at the script's line


def test_log_ops_prints_calls_by_operator_and_key_after_the_run(capsys):
    code, out, err = run(capsys, "run", "--log-ops", str(SCRIPTS / "autograd_basics.py"), "1")
    assert code == 0 and "step 0" in out
    table = err[err.index("operator calls"):].splitlines()
    header = table[1].split()
    assert header[:2] == ["operator", "calls"] and {"AutogradCPU", "CPU"} <= set(header)
    rows = {line.split()[0]: line.split() for line in table[2:]}
    mm = rows["aten::mm"]
    assert int(mm[header.index("AutogradCPU")]) == int(mm[1]) >= 2  # forward and backward
    total = rows["total"]
    assert int(total[1]) == sum(int(r[1]) for name, r in rows.items() if name != "total")


def test_trace_writes_the_window_of_top_level_calls(capsys, tmp_path):
    target = tmp_path / "window.json"
    code, _, err = run(capsys, "run", "--trace", str(target), "--trace-skip", "2", "--trace-calls", "3",
                       str(SCRIPTS / "autograd_basics.py"), "1")
    assert code == 0
    assert "wrote the json trace of top-level calls 2..4" in err
    data = json.loads(target.read_text())
    assert len(data["hops"]) == 3 and all(h["kind"] == "call" for h in data["hops"])
    html = tmp_path / "window.html"
    assert main(["run", "--trace", str(html), "--trace-calls", "5", str(SCRIPTS / "exits.py"), "0"]) == 0
    assert html.read_text().lstrip().lower().startswith("<!doctype html")
    picture = tmp_path / "window.svg"
    assert main(["run", "--trace", str(picture), "--trace-calls", "5", str(SCRIPTS / "exits.py"), "0"]) == 0
    assert picture.read_text().startswith("<svg")


def test_a_missing_script_or_bad_window_is_a_usage_error(capsys, tmp_path):
    code, _, err = run(capsys, "run", str(tmp_path / "nowhere.py"))
    assert code == 2 and "no such script" in err
    code, _, err = run(capsys, "run", "--trace", str(tmp_path / "t.html"), "--trace-calls", "0",
                       str(SCRIPTS / "exits.py"), "0")
    assert code == 2 and "--trace-calls" in err


def test_the_installed_command_runs_a_script_in_a_fresh_interpreter():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "dispatchcore", "run", str(SCRIPTS / "exits.py"), "5"],
                            capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert result.returncode == 5, result.stderr
    assert result.stdout == "[1.0]\n" and "RealTorchShadowedWarning" not in result.stderr


@pytest.mark.differential
def test_a_script_prints_the_same_under_dispatchcore_and_real_torch(capsys):
    pytest.importorskip("torch")
    script = str(SCRIPTS / "autograd_basics.py")
    theirs = subprocess.run([sys.executable, script, "4"], capture_output=True, text=True, timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    code, mine, err = run(capsys, "run", script, "4")
    assert code == 0, err
    assert mine.splitlines() == theirs.stdout.splitlines()
    assert isinstance(dc.ones(1), dc.Tensor)  # dispatchcore itself is untouched by the run
