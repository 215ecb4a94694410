"""The lessons' notebooks (docs/notebooks/): in step with the lessons, stripped, and running with rich output.

A light runner stands in for a Jupyter kernel: each notebook runs as in a fresh interpreter
(``_fresh.py``), cell by cell in one namespace; a cell whose last statement is an expression
displays it, as Jupyter does, through ``_repr_html_`` when the value has one.
The test then checks the pictures' structure.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import lessons_notebooks  # noqa: E402

NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))

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


def run_notebook(path: str) -> list[dict[str, Any]]:
    """Run one notebook's code cells in one namespace; the rich values its cells display.

    The job ``_fresh.run_all`` runs per notebook, each as in a fresh interpreter.
    """
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"__name__": "__main__"}
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
            raise AssertionError(f"cell {index} is tagged raises-exception but ran")
        rich = getattr(value, "_repr_html_", None)
        if rich is not None:
            shown.append({"cell": index, "type": type(value).__name__, "html": rich()})
    return shown


@pytest.fixture(scope="module")
def notebook_runs() -> dict[str, Any]:
    """Every notebook run as in a fresh interpreter (``_fresh.py``, as test_docs runs its pages)."""
    spec = importlib.util.spec_from_file_location("_fresh", Path(__file__).with_name("_fresh.py"))
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)
    results = fresh.run_all(Path(__file__).resolve(), "run_notebook", [str(p) for p in NOTEBOOKS])
    return {p.stem: r for p, r in zip(NOTEBOOKS, results)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_runs_and_shows_its_trace_as_a_picture(notebook_runs, path):
    shown = notebook_runs[path.stem]
    assert not isinstance(shown, dict), shown["error"][-3000:]  # the job's traceback
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
