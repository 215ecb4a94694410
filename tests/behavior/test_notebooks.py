"""The lessons' notebooks (docs/notebooks/): in step with the lessons, stripped, and running with rich output.

A light runner stands in for a Jupyter kernel: each notebook runs in a fresh interpreter, cell by
cell in one namespace; a cell whose last statement is an expression displays it, as Jupyter does,
through ``_repr_html_`` when the value has one. The test then checks the pictures' structure.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import lessons_notebooks  # noqa: E402

NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))

RUNNER = r'''
import ast, contextlib, io, json, sys
notebook = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
shown = []
for index, cell in enumerate(notebook["cells"]):
    if cell["cell_type"] != "code":
        continue
    tree = ast.parse("".join(cell["source"]))
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    raises = "raises-exception" in cell["metadata"].get("tags", [])
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(tree, f"cell {index}", "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), f"cell {index}", "eval"), namespace) if last else None
    except Exception:
        if not raises:
            raise
        continue
    if raises:
        raise SystemExit(f"cell {index} is tagged raises-exception but ran")
    rich = getattr(value, "_repr_html_", None)
    if rich is not None:
        shown.append({"cell": index, "type": type(value).__name__, "html": rich()})
json.dump(shown, sys.stdout)
'''


def test_there_is_a_notebook_per_lesson_in_step_with_its_page():
    lessons = lessons_notebooks.lessons()
    assert len(lessons) == 16
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in lessons]
    for path, notebook in zip(lessons, NOTEBOOKS):
        assert notebook.read_text(encoding="utf-8") == lessons_notebooks.render(path), (
            f"{notebook.name} is stale: run python scripts/lessons_notebooks.py")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_is_stored_without_outputs(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


class _Tags(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _run_notebook(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUNNER, str(path)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


@pytest.fixture(scope="module")
def notebook_runs() -> dict[str, subprocess.CompletedProcess[str]]:
    """Every notebook run in a fresh interpreter, the interpreters in parallel (as test_docs runs its pages)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        futures = {p.stem: pool.submit(_run_notebook, p) for p in NOTEBOOKS}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_runs_and_shows_its_trace_as_a_picture(notebook_runs, path):
    proc = notebook_runs[path.stem]
    assert proc.returncode == 0, proc.stderr[-3000:]
    shown = json.loads(proc.stdout)
    traces = [s for s in shown if s["type"] == "Trace"]
    assert traces, f"{path.name} shows no trace"
    for picture in traces:
        frame = _Tags(picture["html"]).tags
        assert frame[0][0] == "iframe"
        page = _Tags(frame[0][1]["srcdoc"]).tags
        hops = [a for t, a in page if t == "li" and "hop" in a.get("class", "").split()]
        assert hops and all("data-op" in a for a in hops)
    for picture in shown:  # every rich value is one fragment or one iframe, never a bare script
        first = _Tags(picture["html"]).tags[0]
        assert first[0] in ("div", "iframe"), picture["type"]
