"""The documentation stays true: every Python block in docs/ and the README runs, outputs match.

Rules for pages (``docs/**/*.md`` and ``README.md``):

* Fenced blocks in ``python``/``py``/``pycon`` (or MyST ``{code-block} python``) run in order, all
  blocks of a page in one fresh namespace. A block whose first line starts with ``>>>`` is a
  doctest (ELLIPSIS and NORMALIZE_WHITESPACE on); any other Python block is executed and must
  not raise.
* A ``{code-block} text`` block with ``:caption: Output`` right after a plain Python block is
  that block's expected stdout, compared like a doctest (``...`` matches anything, e.g. the line
  numbers in ``registered at file.py:...``).
* Blocks in any other language (``bash``, ``console``, ``text``, ``json``, ...) do not run: that
  is the only way to show code that is not executed, and it is meant for shell commands.
* A page destroys every Library it creates and leaves the thread-local key sets, grad mode,
  dispatch modes, autocast and tracing as it found them. (The README's first example keeps its
  Library, as a script would until it exits; the test destroys it after the page.)

Each page runs as in a fresh interpreter, as a reader's would (a fork of an interpreter that has
only imported dispatchcore: ``_fresh.py``): nothing loaded or registered by an earlier page or
test can make it pass. Plain blocks are compiled with the page's path relative
to the repository root as file name and their real line numbers, so a kernel defined on a page
prints as ``registered at docs/lessons/x.md:12``. Finally ``sphinx-build -W`` must build the
site without a warning (skipped when Sphinx, myst-parser or furo is missing).

Run one page by hand with ``python tests/behavior/test_docs.py docs/lessons/01-add-with-grad.md``.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import io
import json
import os
import re
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
PYTHON = {"python", "py", "python3", "pycon"}
# MyST directives whose body is Markdown: blocks inside them belong to the page.
CONTAINERS = {"note", "tip", "warning", "important", "attention", "caution", "danger", "error",
              "hint", "seealso", "admonition", "topic", "sidebar"}
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w-]+)\}\s*(?P<argument>.*)$")
_OPTION = re.compile(r"^:(?P<name>[\w-]+):\s*(?P<value>.*)$")


# --- parsing ----------------------------------------------------------------------------------------
@attrs.frozen
class Block:
    """One fenced block: language, MyST options, body, and the page line of its first body line."""

    lang: str
    options: dict[str, str]
    body: str
    line: int

    @property
    def runs(self) -> bool:
        return self.lang in PYTHON

    @property
    def is_doctest(self) -> bool:
        return self.body.lstrip().startswith(">>>")

    @property
    def is_output(self) -> bool:
        return self.lang in ("text", "none") and self.options.get("caption", "").lower().startswith("output")


def parse_blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, in order; admonition bodies are searched too."""
    lines = text.splitlines()
    blocks: list[Block] = []
    containers: list[tuple[str, int]] = []  # open admonition fences: (character, length)
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m["fence"], m["info"].strip()
        if containers and not info and fence[0] == containers[-1][0] and len(fence) >= containers[-1][1]:
            containers.pop()
            i += 1
            continue
        directive = _DIRECTIVE.match(info)
        if directive and directive["name"] in CONTAINERS:
            containers.append((fence[0], len(fence)))
            i += 1
            continue
        if directive:
            code = directive["name"] in ("code-block", "code", "sourcecode") and directive["argument"]
            lang = directive["argument"].split()[0] if code else "{" + directive["name"] + "}"
        else:
            lang = info.split()[0] if info else ""
        j = i + 1
        while j < len(lines):
            close = _FENCE.match(lines[j])
            if (close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence)
                    and not close["info"].strip()):
                break
            j += 1
        body, start, options = lines[i + 1:j], i + 2, {}
        if directive:
            while body and (option := _OPTION.match(body[0])):
                options[option["name"]] = option["value"]
                body, start = body[1:], start + 1
        blocks.append(Block(lang.lower(), options, "\n".join(body) + "\n", start))
        i = j + 1
    return blocks


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]


def page_id(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


# --- running one page (in a fresh interpreter: see page_results) ------------------------------------
def _run_doctest(block: Block, namespace: dict[str, Any], name: str) -> str | None:
    test = doctest.DocTestParser().get_doctest(block.body, namespace, f"{name}:{block.line}", name,
                                               block.line - 1)
    test.globs = namespace  # get_doctest copies the globals; a page's blocks share one namespace
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    runner.run(test, out=report.write, clear_globs=False)
    return report.getvalue() if runner.failures else None


def _run_plain(block: Block, output: Block | None, namespace: dict[str, Any], name: str) -> str | None:
    code = compile("\n" * (block.line - 1) + block.body, name, "exec")
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            exec(code, namespace)  # noqa: S102 - running the documentation is the point
    except BaseException:  # noqa: BLE001 - reported as the page's failure
        return f"{name}:{block.line}: the block raised\n{traceback.format_exc()}"
    checker = doctest.OutputChecker()
    if output is not None and not checker.check_output(output.body, captured.getvalue(), FLAGS):
        diff = checker.output_difference(doctest.Example(block.body, output.body), captured.getvalue(), FLAGS)
        return (f"{name}:{output.line}: the Output block does not match what the block at line "
                f"{block.line} prints.\n{diff}")
    return None


def run_blocks(path: Path, namespace: dict[str, Any]) -> list[str]:
    """Run a page's Python blocks in ``namespace``; stops at the first failure (later blocks depend on it)."""
    name = page_id(path)
    blocks = parse_blocks(path.read_text(encoding="utf-8"))
    for index, block in enumerate(blocks):
        previous = blocks[index - 1] if index else None
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if block.is_output:
            if previous is None or not previous.runs or previous.is_doctest:
                return [f"{name}:{block.line}: an Output block must follow a plain Python block"]
            continue
        if not block.runs:
            continue
        if block.is_doctest:
            failure = _run_doctest(block, namespace, name)
        else:
            failure = _run_plain(block, following if following is not None and following.is_output else None,
                                 namespace, name)
        if failure is not None:
            return [failure]
    return []


def _from_docs(where: Any) -> bool:
    """A registration made by a page: in a plain block (``docs/x.md``) or a doctest (``<doctest docs/x.md...>``)."""
    file = getattr(where, "file", "")
    return ".md" in file and not os.path.isabs(file)


def _registry(dc: Any) -> dict[str, Any]:
    """What a page could leave behind: namespaces, fallbacks, and kernels registered from a page."""
    dispatcher = dc.get_dispatcher()
    with dispatcher._lock:
        namespaces = {q.partition("::")[0] for q, op in dispatcher._ops.items() if op.schema is not None}
        from_docs = sorted(f"{q} at {k.name} ({reg.where})" for q, op in dispatcher._ops.items()
                           for k, regs in op._kernels.items() for reg in regs if _from_docs(reg.where))
        return {
            "namespaces": sorted(namespaces | set(dispatcher._def_libraries)),
            "fallbacks": sorted(f"{k.name} ({r.debug})" for k, r in dispatcher._fallbacks.items()),
            "kernels registered by the page": from_docs,
        }


def _state(dc: Any) -> dict[str, Any]:
    from dispatchcore.tls import tls_get

    return {"tls": [hex(b) for b in tls_get()[:2]], "grad mode": dc.is_grad_enabled(),
            "inference mode": dc.is_inference_mode_enabled(), "modes": repr(dc.dispatch_mode_stack()),
            "autocast": dc.is_autocast_enabled("cpu"), "tracing": sys.modules["dispatchcore.trace"].is_enabled()}


def check_page(path: Path) -> list[str]:
    """Run one page in this interpreter and check what it leaves behind; returns failure reports."""
    warnings.simplefilter("error")  # as pytest's filterwarnings: a page must not warn
    import dispatchcore as dc

    before_registry, before_state = _registry(dc), _state(dc)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    failures = run_blocks(path, namespace)
    if failures:
        return failures
    if path.name == "README.md":
        for value in list(namespace.values()):
            if isinstance(value, dc.Library):
                value._destroy()
    name = page_id(path)
    after_state = _state(dc)
    if after_state != before_state:
        failures.append(f"{name} left state behind: {before_state} -> {after_state}")
    after_registry = _registry(dc)
    for what, before in before_registry.items():
        added = sorted(set(after_registry[what]) - set(before))
        if added:
            failures.append(f"{name} left {what} behind (destroy its Library at the end): {added}")
    return failures


def check_page_at(path: str) -> list[str]:
    """``check_page`` for a path given as text (the job ``_fresh.run_all`` runs per page)."""
    return check_page(Path(path))


def _load_fresh() -> Any:
    spec = importlib.util.spec_from_file_location("_fresh", Path(__file__).with_name("_fresh.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the tests ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def page_results() -> dict[str, list[str]]:
    """Every page's failures, each page run as in a fresh interpreter (``_fresh.py``), in parallel."""
    paths = pages()
    results = _load_fresh().run_all(Path(__file__).resolve(), "check_page_at", [str(p) for p in paths])
    return {page_id(p): [f"{page_id(p)}: the page runner failed\n{r['error']}"] if isinstance(r, dict) else r
            for p, r in zip(paths, results)}


@pytest.mark.parametrize("name", [page_id(p) for p in pages()])
def test_page_runs_and_shows_true_output(page_results: dict[str, list[str]], name: str) -> None:
    failures = page_results[name]
    assert not failures, "\n\n".join(failures)


def test_every_lesson_runs_code_checks_output_and_shows_a_trace() -> None:
    lessons = sorted((DOCS / "lessons").glob("[0-9][0-9]-*.md"))
    assert len(lessons) == 16, [p.name for p in lessons]
    for path in lessons:
        text = path.read_text(encoding="utf-8")
        blocks = parse_blocks(text)
        assert any(b.runs and not b.is_doctest for b in blocks), path.name
        assert any(b.is_output for b in blocks) and any(b.is_doctest for b in blocks), path.name
        assert "print(t.text())" in text, f"{path.name} shows no trace"


def test_every_docs_block_names_its_language() -> None:
    """An unnamed fence would be silently skipped: say ``python``, ``text``, ``bash``, ..."""
    for path in sorted(DOCS.rglob("*.md")):
        for block in parse_blocks(path.read_text(encoding="utf-8")):
            assert block.lang not in ("", "{code-block}"), f"{page_id(path)}:{block.line}: name the block's language"
            assert not block.lang.startswith("{code"), f"{page_id(path)}:{block.line}: {block.lang}"


def test_parser_reads_directives_options_and_admonitions() -> None:
    page = "\n".join([
        "```{code-block} python", ":caption: demo", "x = 1", "```",
        "```{code-block} text", ":caption: Output", "1", "```",
        "````{note}", "```python", ">>> 1", "1", "```", "````",
        "```bash", "ls", "```",
    ])
    blocks = parse_blocks(page)
    assert [(b.lang, b.runs, b.is_doctest, b.is_output) for b in blocks] == [
        ("python", True, False, False), ("text", False, False, True),
        ("python", True, True, False), ("bash", False, False, False)]
    assert blocks[0].line == 3 and blocks[0].options == {"caption": "demo"}


def test_sphinx_builds_without_warnings(sphinx_build: Any) -> None:
    # the session's one build (tests/behavior/conftest.py), which test_docs_browser.py reads too
    assert sphinx_build.returncode == 0, sphinx_build.output


if __name__ == "__main__":  # python tests/behavior/test_docs.py PAGE.md [--json RESULT]
    page = Path(sys.argv[1]).resolve()
    found = check_page(page)
    if "--json" in sys.argv:
        Path(sys.argv[sys.argv.index("--json") + 1]).write_text(json.dumps(found))
    else:
        print("\n\n".join(found) or f"{page_id(page)}: ok")
    sys.exit(1 if found else 0)
