"""Write ``docs/notebooks/NN-*.ipynb``: each lesson of ``docs/lessons/`` as a Jupyter notebook.

The lesson's prose becomes markdown cells and its Python blocks code cells, in order; a doctest
block becomes the statements it runs (prompts and expected output dropped: the notebook shows
the real output), and the lessons' ``Output`` blocks are left out for the same reason. Cells that
end with a trace, a key set, a table or an ``explain`` result show the picture
(``dispatchcore.notebook``) in Jupyter. The notebooks carry no outputs (``nbformat`` 4, stripped);
``tests/behavior/test_notebooks.py`` checks they match the lessons and runs them.

Usage: python scripts/lessons_notebooks.py   (after editing a lesson)
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
LESSONS = ROOT / "docs" / "lessons"
OUT = ROOT / "docs" / "notebooks"
_FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>.*)$")
_ROLE = re.compile(r"\{doc\}`([^`]*)`")


def _markdown(lines: list[str]) -> str:
    """MyST prose as plain Markdown: ``{doc}`x``` references become their target's name."""
    text = "\n".join(lines).strip("\n")
    return _ROLE.sub(lambda m: f"`{m.group(1).rsplit('/', 1)[-1]}`", text)


def _doctest_examples(body: list[str]) -> list[tuple[str, bool]]:
    """The statements of a doctest block, one per example, and whether the example expects an error.

    ``>>>``/``...`` lines lose their prompts; an example whose expected output is a traceback
    raises on purpose (its cell is tagged ``raises-exception``, as Jupyter tools read it).
    """
    examples: list[list[str]] = []
    raises: list[bool] = []
    continuing = False
    for line in body:
        if line.startswith(">>> ") or line == ">>>":
            examples.append([line[4:]])
            raises.append(False)
            continuing = True
        elif (line.startswith("... ") or line == "...") and continuing:
            examples[-1].append(line[4:])
        else:  # expected output ends the example
            if continuing and line.startswith("Traceback (most recent call last)"):
                raises[-1] = True
            continuing = False
    return [("\n".join(lines), error) for lines, error in zip(examples, raises)]


def cells(text: str) -> list[tuple[str, str]]:
    """``(kind, source)`` pairs for one lesson page: ``markdown``, ``code`` or ``code-raises``."""
    lines = text.splitlines()
    result: list[tuple[str, str]] = []
    prose: list[str] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            prose.append(lines[i])
            i += 1
            continue
        fence, info = match["fence"], match["info"].strip()
        j = i + 1
        while j < len(lines) and not (lines[j].startswith(fence) and not lines[j][len(fence):].strip()):
            j += 1
        body = lines[i + 1:j]
        i = j + 1
        if info == "python":
            if _markdown(prose):
                result.append(("markdown", _markdown(prose)))
            prose = []
            if any(line.startswith(">>>") for line in body):  # one cell per example: each shows its value
                result.extend(("code-raises" if error else "code", example)
                              for example, error in _doctest_examples(body))
            else:
                source = "\n".join(body).strip("\n")
                result.append(("code", source))
                if "print(t.text())" in source:
                    result.append(("markdown", "In Jupyter the trace is a picture as well: the hop tree with "
                                               "each key set's bits (`dispatchcore.notebook`)."))
                    result.append(("code", "t"))
        elif info.startswith(("{code-block}", "{toctree}", "{dispatchcore-")):
            continue  # an Output block or a figure (the notebook shows the real ones), or navigation
        elif info.startswith("{note}"):
            prose.extend(["> **Note.** " + " ".join(line.strip() for line in body)])
        else:
            prose.extend([fence + info, *body, fence])
    if _markdown(prose):
        result.append(("markdown", _markdown(prose)))
    return result


def notebook(text: str) -> dict:
    """An nbformat-4 notebook with no outputs."""
    out_cells = []
    for kind, source in cells(text):
        metadata = {"tags": ["raises-exception"]} if kind == "code-raises" else {}
        cell_type = "code" if kind.startswith("code") else kind
        cell: dict = {"cell_type": cell_type, "metadata": metadata, "source": source.splitlines(keepends=True)}
        if cell_type == "code":
            cell.update(execution_count=None, outputs=[])
        out_cells.append(cell)
    return {"cells": out_cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                            "name": "python3"},
                                             "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def render(path: pathlib.Path) -> str:
    """The notebook of one lesson, as the file's text."""
    return json.dumps(notebook(path.read_text(encoding="utf-8")), indent=1, ensure_ascii=False) + "\n"


def lessons() -> list[pathlib.Path]:
    return sorted(LESSONS.glob("[0-9][0-9]-*.md"))


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for path in lessons():
        (OUT / (path.stem + ".ipynb")).write_text(render(path), encoding="utf-8")
    print(f"wrote {len(lessons())} notebooks to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
