"""The command line: explain, what-if, commutes, trace, guards, keys, table/state, errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import dispatchcore as dc
from dispatchcore import __main__ as cli
from dispatchcore.__main__ import guard_rows, main, parse_value

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- help, dispatch of commands, packaging ------------------------------------------------------
def test_help_lists_every_command(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in ("tour", "keys", "table", "state", "explain", "what-if", "commutes", "trace", "guards"):
        assert command in out
    assert "exit status" in out


def test_explain_help_documents_the_argument_language(capsys):
    code, out, _ = run(capsys, "explain", "--help")
    assert code == 0
    assert "DEVICE:SHAPE[:DTYPE][:grad]" in out and "below_autograd" in out


def test_no_command_runs_the_tour(capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(cli, "tour", lambda: ran.append(True))
    assert main([]) == 0 and ran == [True]


def test_unknown_command_is_a_usage_error(capsys):
    code, _, err = run(capsys, "bogus")
    assert code == 2 and "invalid choice: 'bogus'" in err


def test_console_script_points_at_main():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["dispatchcore"] == "dispatchcore.__main__:main"


# --- keys, table, state ---------------------------------------------------------------------------
def test_keys_shows_bits_and_priorities(capsys):
    code, out, _ = run(capsys, "keys")
    assert code == 0
    assert "CPUBit" in out and "MetaBit" in out
    line = next(x for x in out.splitlines() if x.split()[3:4] == ["PythonDispatcher"])
    assert line.split()[:3] == ["46", "61", "1"]  # value, bit, priority rank (the highest)
    line = next(x for x in out.splitlines() if x.split()[3:4] == ["ADInplaceOrView"])
    assert "0x400000000" in line


def test_keys_describes_one_key_and_rejects_unknown_ones(capsys):
    code, out, _ = run(capsys, "keys", "AutogradCPU", "CompositeImplicitAutograd")
    assert code == 0
    assert "AutogradCPU = 134" in out and "0x1000000001" in out and "covered by the aliases: Autograd" in out
    assert "alias key" in out
    code, _, err = run(capsys, "keys", "NotAKey")
    assert code == 2
    assert "could not parse dispatch key: NotAKey" in err and "hint:" in err


def test_table_and_state_accept_dotted_names_and_single_overloads(capsys):
    code, out, _ = run(capsys, "table", "aten.add.Tensor")
    assert code == 0 and out == dc.dump_table("aten::add.Tensor")
    code, out, _ = run(capsys, "state", "aten::matmul")
    assert code == 0 and out.startswith("name: aten::matmul")


def test_table_of_a_packet_with_several_overloads_names_them(capsys):
    code, _, err = run(capsys, "table", "aten::add")
    assert code == 2
    assert "aten::add.Tensor" in err and "aten::add.Scalar" in err


# --- explain --------------------------------------------------------------------------------------
def test_parse_value_mini_language():
    assert parse_value("2.5") == 2.5 and parse_value("3") == 3 and parse_value("none") is None
    assert parse_value("[2,3]") == [2, 3] and parse_value("true") is True and parse_value("'x'") == "x"
    assert parse_value("dtype:float64") is dc.float64
    t = parse_value("cpu:2x3:float64:grad")
    assert list(t.shape) == [2, 3] and t.dtype is dc.float64 and t.requires_grad
    m = parse_value("meta:3")
    assert m.device.type == "meta" and list(m.shape) == [3]
    assert list(parse_value("cpu:").shape) == []
    assert [x.device.type for x in parse_value("[cpu:2, meta:2]")] == ["cpu", "meta"]


def test_explain_a_cpu_call(capsys):
    code, out, _ = run(capsys, "explain", "aten::mul", "--arg", "cpu:2x3:float32:grad", "--arg", "cpu:2x3")
    assert code == 0
    assert "explain aten::mul.Tensor(" in out
    assert "highest priority key: AutogradCPU" in out
    assert "result: the call would run AutogradCPU -> CPU" in out
    assert "/work/" not in out or "registered at dispatchcore/" in out  # locations shortened


def test_explain_mixed_devices_kwargs_and_guards(capsys):
    code, out, _ = run(capsys, "explain", "aten::add", "--args", "cpu:3 meta:3 alpha=2")
    assert code == 0 and "AutogradMeta -> Meta" in out and "alpha=2" in out
    code, out, _ = run(capsys, "explain", "aten::add.Tensor", "-a", "cpu:3", "-a", "cpu:3", "-g", "below_autograd")
    assert code == 0 and "result: the call would run CPU." in out
    code, out, _ = run(capsys, "explain", "aten::mul.Tensor", "-a", "cpu:3", "-a", "cpu:3",
                       "-g", "exclude:AutogradCPU")
    assert code == 0 and "result: the call would run CPU." in out
    code, out, _ = run(capsys, "explain", "aten::empty.memory_format", "-a", "[2,3]", "-k", "device=device:meta")
    assert code == 0 and "BackendSelect -> Meta" in out


def test_explain_a_failing_call_exits_1_with_the_fix(capsys, monkeypatch):
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False)
    with dc.Library("cli_explain_fail", "DEF") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        lib.impl("foo", lambda x: x, "Meta")
        code, out, _ = run(capsys, "explain", "cli_explain_fail::foo", "--arg", "cpu:2")
    assert code == 1
    assert "the call would FAIL: DispatchError: Could not run 'cli_explain_fail::foo'" in out
    assert "smallest fix: Library('cli_explain_fail', 'IMPL').impl('foo', kernel, 'CPU')" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", "nope::missing", "-a", "cpu:2"], "nope::missing"),
        (["explain", "aten::add", "-a", "bogus"], "cannot parse the argument 'bogus'"),
        (["explain", "aten::add", "-a", "cpu:2x"], "bad tensor shape"),
        (["explain", "aten::add", "-a", "cpu:2:notadtype"], "unknown dtype"),
        (["explain", "aten::add", "-a", "nodevice:2"], "cannot make the tensor"),
        (["explain", "aten::add", "-a", "cpu:2", "-g", "bogus"], "unknown guard 'bogus'"),
        (["explain", "aten::add", "-a", "cpu:2", "-a", "cpu:2", "-g", "exclude:NotAKey"],
         "could not parse dispatch key: NotAKey"),
        (["explain", "aten::add.Tensor", "-a", "cpu:2"], "do not fit aten::add.Tensor"),
        (["explain", "aten::add", "-a", "cpu:2", "-k", "nonsense"], "--kwarg expects NAME=VALUE"),
    ],
)
def test_explain_usage_errors_exit_2_with_a_message(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.startswith("dispatchcore: error: ")
    assert "hint:" in err and out == ""


# --- what-if and commutes ---------------------------------------------------------------------------
def test_what_if_prints_the_diff_and_changes_nothing(capsys):
    before = dc.dump_table("aten::matmul")
    code, out, _ = run(capsys, "what-if", "aten::matmul", "--add", "CPU")
    assert code == 0
    assert "+ CPU: what-if placeholder [kernel]" in out
    assert "AutogradCPU:" in out and "[backend fallback]" in out
    assert dc.dump_table("aten::matmul") == before


def test_what_if_errors_exit_2(capsys):
    code, _, err = run(capsys, "what-if", "aten::matmul", "--add", "NotAKey")
    assert code == 2 and "NotAKey" in err
    code, _, err = run(capsys, "what-if", "aten::matmul", "--remove", "XLA")
    assert code == 2 and "no kernel registered at XLA" in err


def test_commutes_command(capsys):
    code, out, _ = run(capsys, "commutes", "aten::add.Tensor", "--add", "CompositeImplicitAutograd")
    assert code == 0 and "every order gives the same table" in out
    code, out, _ = run(capsys, "commutes", "aten::add.Tensor", "--add", "XLA", "--add", "XLA")
    assert code == 1 and "NOT commutative" in out and "newest registration wins" in out


# --- trace --------------------------------------------------------------------------------------------
SCRIPT = """\
import sys
import dispatchcore as dc
x = dc.ones(2, requires_grad=True)
(x * 2).sum().backward()
print("script ran with", sys.argv[1:])
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "traced_script.py"
    path.write_text(SCRIPT)
    return path


def test_trace_text(capsys, script):
    code, out, _ = run(capsys, "trace", str(script), "--", "a", "b")
    assert code == 0
    assert "script ran with ['a', 'b']" in out
    assert "[call] op=[aten::mul.Tensor], key=[AutogradCPU]" in out  # x * 2: a wrapped number
    assert "[redispatch] op=[aten::mul.Tensor], key=[CPU]" in out


def test_trace_json_and_files(capsys, script, tmp_path):
    code, out, _ = run(capsys, "trace", str(script), "--format", "json")
    assert code == 0
    data = json.loads(out[out.index("{"):])
    assert any(h["op"] == "aten::mul.Tensor" for h in data["hops"])
    target = tmp_path / "trace.md"
    code, _, err = run(capsys, "trace", str(script), "-f", "mermaid", "-o", str(target))
    assert code == 0 and "wrote the mermaid trace" in err
    assert target.read_text().startswith("sequenceDiagram") or "sequenceDiagram" in target.read_text()
    target = tmp_path / "trace.html"
    assert main(["trace", str(script), "-f", "html", "-o", str(target)]) == 0
    assert "<html" in target.read_text().lower()
    target = tmp_path / "trace.svg"
    assert main(["trace", str(script), "-f", "svg", "-o", str(target)]) == 0
    picture = target.read_text()
    assert picture.startswith("<svg") and "aten::mul.Tensor" in picture


def test_trace_exit_codes(capsys, tmp_path):
    failing = tmp_path / "fails.py"
    failing.write_text("import dispatchcore as dc\ndc.ones(1) + 1\nraise ValueError('boom')\n")
    code, out, err = run(capsys, "trace", str(failing))
    assert code == 1 and "ValueError: boom" in err
    assert "[call] op=[aten::add.Tensor]" in out  # the hops before the error are still rendered
    exiting = tmp_path / "exits.py"
    exiting.write_text("import sys\nsys.exit(3)\n")
    assert main(["trace", str(exiting)]) == 3
    code, _, err = run(capsys, "trace", str(tmp_path / "missing.py"))
    assert code == 2 and "no such script" in err


# --- guards -------------------------------------------------------------------------------------------
def test_guard_rows_show_the_bits_each_guard_flips():
    rows = {row["guard"]: row for row in guard_rows()}
    no_grad = rows["no_grad()"]
    assert no_grad["include_before"] == no_grad["include_after"] == 0x404000000
    assert no_grad["exclude_before"] == no_grad["exclude_after"]
    assert (no_grad["grad_before"], no_grad["grad_after"]) == (True, False)
    inference = rows["inference_mode()"]
    assert (inference["include_after"], inference["exclude_after"]) == (0x4000000, 0x1FFB800000000)
    assert inference["include_removed"] == ["ADInplaceOrView"]
    assert set(inference["exclude_added"]) == {"AutogradFunctionality", "AutogradOther", "AutogradNestedTensor"}
    assert inference["mul_path"] == "CPU"
    back = rows["inference_mode(False)  [inside inference_mode]"]
    assert back["include_added"] == ["ADInplaceOrView"] and back["inference_after"] is False
    below = rows["AutoDispatchBelowADInplaceOrView()"]
    assert below["exclude_after"] == 0x1FFBC00000000 and "ADInplaceOrView" in below["exclude_added"]
    assert rows["AutoDispatchBelowAutograd()"]["exclude_after"] == 0x1FFB800000000
    assert rows["ExcludeDispatchKeyGuard(AutogradCPU)"]["exclude_added"] == ["CPUBit", "AutogradFunctionality"]
    assert rows["enable_grad()  [inside no_grad]"]["grad_after"] is True
    assert rows["no_grad()"]["mul_path"] == "AutogradCPU -> CPU"
    if getattr(dc, "autocast", None) is not None:
        assert "exclude_removed" in rows["autocast('cpu')"] or "error" in rows["autocast('cpu')"]
    else:
        assert "not available" in rows["autocast"]["error"]


def test_guards_command_text_and_json(capsys):
    code, out, _ = run(capsys, "guards")
    assert code == 0
    assert "inference_mode()" in out and "0x404000000 -> 0x4000000" in out
    assert "0x1ff8000000000 -> 0x1ffbc00000000" in out
    assert "grad mode is a flag, not a key" in out
    code, out, _ = run(capsys, "guards", "--json")
    assert code == 0 and any(row["guard"] == "no_grad()" for row in json.loads(out))


# --- one real process ---------------------------------------------------------------------------------
def test_subprocess_explain_and_error_exit_codes():
    ok = subprocess.run([sys.executable, "-m", "dispatchcore", "explain", "aten::mul", "--arg", "cpu:2:grad",
                         "--arg", "cpu:2"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "AutogradCPU -> CPU" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "dispatchcore", "table", "nope::missing"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "nope::missing" in bad.stderr and bad.stdout == ""


# --- user code: --import and --file load registrations before the command ---------------------------
_USER_OPS = '''import dispatchcore as dc
lib = dc.Library("useropsns", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.impl("twice", lambda x: x * 2, "CPU")
'''


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dispatchcore", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


@pytest.mark.parametrize("command", [["table"], ["state"], ["explain", "--arg", "cpu:2"], ["what-if", "--add", "Meta"],
                                     ["commutes"]])
def test_import_and_file_load_the_users_operators_before_the_command(tmp_path, command):
    (tmp_path / "userops.py").write_text(_USER_OPS)
    name, *rest = command
    by_import = _cli(name, "useropsns::twice", *rest, "--import", "userops", cwd=tmp_path)
    by_file = _cli(name, "useropsns::twice", *rest, "--file", str(tmp_path / "userops.py"), cwd=Path.cwd())
    for proc in (by_import, by_file):
        assert proc.returncode == 0, proc.stderr
        assert "useropsns::twice" in proc.stdout or "CPU" in proc.stdout, proc.stdout
    if name == "table":
        assert "userops.py:4 [kernel]" in by_file.stdout.splitlines()[0]


def test_without_the_users_code_the_operator_is_unknown_and_a_bad_import_is_a_usage_error(tmp_path):
    proc = _cli("table", "useropsns::twice", cwd=tmp_path)
    assert proc.returncode == 2 and "useropsns::twice" in proc.stderr
    proc = _cli("table", "aten::sin", "--import", "no_such_module_here", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--import no_such_module_here: No module named 'no_such_module_here'" in proc.stderr
    proc = _cli("state", "aten::sin", "--file", "missing.py", cwd=tmp_path)
    assert proc.returncode == 2 and "--file missing.py: no such file" in proc.stderr


def test_the_tours_next_step_commands_run_as_printed():
    import re

    lines: list[str] = []
    cli.tour(lines.append)
    commands = re.findall(r"`((?:python -m )?dispatchcore [^`]*)`", "\n".join(lines))
    assert len(commands) >= 2, commands
    for command in commands:
        words = command.split()
        argv = words[3:] if words[0] == "python" else words[1:]
        proc = subprocess.run([sys.executable, "-m", "dispatchcore", *argv], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, (command, proc.stderr)


def test_explain_takes_cuda_arguments_without_pycuda(capsys):
    import importlib.util

    if importlib.util.find_spec("pycuda") is not None:
        pytest.skip("pycuda is installed: the cuda arguments are real tensors here")
    assert main(["explain", "aten::add", "--arg", "cuda:3:grad", "--arg", "cuda:3"]) == 0
    out = capsys.readouterr().out
    assert "Tensor(cuda, 3, float32, requires_grad)" in out
    assert "highest priority key: AutogradCUDA" in out
    assert "the call would run AutogradCUDA -> CUDA" in out
    assert "note: pycuda is not installed, so the cuda arguments are stand-ins" in out
    cli._CUDA_STAND_INS.clear()
    # a CPU scalar with a CUDA tensor dispatches to CUDA, as on a GPU (CUDABit outranks CPUBit)
    assert main(["explain", "aten::mul", "--arg", "cpu:scalar", "--arg", "cuda:3"]) == 0
    assert "the call would run AutogradCUDA -> CUDA" in capsys.readouterr().out
    cli._CUDA_STAND_INS.clear()


def test_table_formats_json_and_html_carry_the_dumps_rows(capsys):
    op = dc.ops.aten.mm.default
    dump = [line.split(": ", 1)[0] for line in dc.dump_table(op).splitlines()]
    assert main(["table", "aten::mm", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["op"] == "aten::mm" and [row["key"] for row in data["table"]] == dump
    assert {row["key"]: row["label"] for row in data["table"]}["AutogradCPU"] == "autograd kernel"
    assert main(["table", "aten::mm", "-f", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and page.count("<tr ") >= len(dump)
    assert 'data-key="CPU" data-label="kernel"' in page


def test_explain_formats_json_and_html(capsys):
    assert main(["explain", "aten::add", "--arg", "cpu:3", "--arg", "meta:3", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["path"] == ["AutogradMeta", "Meta"] and data["effective"]["raw"].startswith("0x")
    assert main(["explain", "aten::add", "--arg", "cpu:3", "--arg", "cpu:3", "-f", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and 'data-step="1" data-key="CPU"' in page
