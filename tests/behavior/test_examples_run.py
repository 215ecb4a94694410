"""The example programs of docs/examples/ run unchanged on dispatchcore and print torch's numbers.

Each example is a plain PyTorch program (``import torch`` at the top). It runs here as a user
runs it, ``python -m dispatchcore run docs/examples/<name>.py``, in a subprocess; its printed
output must equal real torch's line for line, words exactly and every number to 1e-5 relative.
torch's output is recorded in ``examples_expected.json`` (beside this file), so the comparison
runs without torch; with torch installed the examples also run on real torch (``python
docs/examples/<name>.py``) and both the dispatchcore output and the recording are compared with
that fresh run. Re-record after changing an example: ``python tests/behavior/test_examples_run.py``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
EXPECTED = Path(__file__).resolve().parent / "examples_expected.json"
NAMES = ("mlp_classification", "small_cnn", "custom_function_module", "save_and_resume")
RTOL = 1e-5
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _python(*argv: str) -> subprocess.CompletedProcess:
    """``python *argv`` from the repository root, which must succeed (one thread: torch's sums are then fixed)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert proc.returncode == 0, f"python {' '.join(argv)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


def _run(*argv: str) -> str:
    return _python(*argv).stdout


@functools.cache
def on_dispatchcore(name: str) -> str:
    return _run("-m", "dispatchcore", "run", f"docs/examples/{name}.py")


@functools.cache
def on_torch(name: str) -> str:
    return _run(f"docs/examples/{name}.py")


def recorded(name: str) -> str:
    return json.loads(EXPECTED.read_text())[name]


def differences(got: str, want: str, rtol: float = RTOL) -> list[str]:
    """The lines where ``got`` differs from ``want``: other words, or a number off by more than ``rtol``."""
    got_lines, want_lines = got.splitlines(), want.splitlines()
    out = [] if len(got_lines) == len(want_lines) else [f"{len(got_lines)} lines, expected {len(want_lines)}"]
    for i, (g, w) in enumerate(zip(got_lines, want_lines)):
        g_nums, w_nums = _NUMBER.findall(g), _NUMBER.findall(w)
        same_words = _NUMBER.sub("#", g) == _NUMBER.sub("#", w) and len(g_nums) == len(w_nums)
        if not same_words or not all(math.isclose(float(a), float(b), rel_tol=rtol, abs_tol=1e-12)
                                     for a, b in zip(g_nums, w_nums)):
            out.append(f"line {i + 1}: {g!r}, expected {w!r}")
    return out


def test_differences_sees_a_number_off_by_more_than_the_tolerance_and_changed_words():
    assert differences("loss 1.00000100\n", "loss 1.00000000\n") == []
    assert differences("loss 1.00002\n", "loss 1.00000\n") == ["line 1: 'loss 1.00002', expected 'loss 1.00000'"]
    assert differences("acc 0.5\n", "loss 0.5\n") and differences("a 1\nb 2\n", "a 1\n")
    assert differences("scale [1.0, 2.0]\n", "scale [1.0]\n")


@pytest.mark.parametrize("name", NAMES)
def test_example_is_a_plain_pytorch_program(name):
    source = (EXAMPLES / f"{name}.py").read_text()
    assert re.search(r"^import torch$", source, re.M), "an example imports torch as a PyTorch user does"
    assert "dispatchcore" not in source.split('"""', 2)[-1], "the program itself never names dispatchcore"
    assert "torch.manual_seed(" in source


@pytest.mark.parametrize("name", NAMES)
def test_example_on_dispatchcore_prints_torchs_recorded_losses(name):
    assert not differences(on_dispatchcore(name), recorded(name)), differences(on_dispatchcore(name), recorded(name))


@pytest.mark.differential
@pytest.mark.parametrize("name", NAMES)
def test_example_on_dispatchcore_prints_the_losses_real_torch_prints(name):
    pytest.importorskip("torch")
    torch_out = on_torch(name)
    assert not differences(on_dispatchcore(name), torch_out), differences(on_dispatchcore(name), torch_out)
    assert not differences(recorded(name), torch_out), "torch prints other numbers than recorded: re-record"


def test_resumed_training_continues_exactly_on_dispatchcore():
    lines = on_dispatchcore("save_and_resume").splitlines()
    assert lines[-1] == "resumed run continues exactly: True"
    steps = [line.split() for line in lines if line.startswith("step")]
    assert len(steps) == 12 and all(s[3] == s[5] for s in steps)


def _readme_block(after: str) -> list[str]:
    """The lines of the README's first fenced block after the line ``after``, without the fences."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index(after) + 1
    end = lines.index("```", start)
    return lines[start:end]


def test_readme_shows_what_the_mlp_example_prints_on_dispatchcore():
    shown = "\n".join(_readme_block("$ python -m dispatchcore run docs/examples/mlp_classification.py")) + "\n"
    # numbers as the example tests compare them: the last digits follow the CPU's BLAS kernels
    assert not differences(on_dispatchcore("mlp_classification"), shown)


def test_readme_log_ops_excerpt_is_lines_of_the_real_table():
    shown = _readme_block("$ python -m dispatchcore run --log-ops docs/examples/mlp_classification.py")
    proc = _python("-m", "dispatchcore", "run", "--log-ops", "docs/examples/mlp_classification.py")
    table = proc.stderr.splitlines()
    assert proc.stdout == on_dispatchcore("mlp_classification")  # the counts go to stderr only
    excerpt = [line for line in shown if line != "..."]
    assert len(excerpt) >= 5 and all(line in table for line in excerpt), [x for x in excerpt if x not in table]


def _record() -> None:
    if importlib.util.find_spec("torch") is None:
        raise SystemExit("recording needs real torch")
    EXPECTED.write_text(json.dumps({name: on_torch(name) for name in NAMES}, indent=1) + "\n")
    print(f"recorded {', '.join(NAMES)} into {EXPECTED}")


if __name__ == "__main__":
    _record()
