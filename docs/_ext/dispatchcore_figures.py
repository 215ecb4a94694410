"""Sphinx directives that draw dispatchcore's figures from the code, when the docs are built.

A figure directive marks a place on a page; once the page is parsed, the page's own Python blocks
above each figure run (doctests as doctests, other blocks as statements, in one namespace, as
``tests/behavior/test_docs.py`` runs them), and the figure is drawn from what they left:

* ``{dispatchcore-trace} t``: the trace in variable ``t`` (any expression) as an SVG sequence
  diagram (``dispatchcore.notebook.trace_svg``) and its interactive page (``Trace.html()``) in an
  ``iframe``; option ``:height:`` sets the iframe's height in pixels.
* ``{dispatchcore-table} ns::op.overload``: the operator's computed dispatch table, coloured by
  rule with a legend (``dispatchcore.notebook.table_html``); option ``:keys:`` lists the rows.
* ``{dispatchcore-keyset} expression``: a key set's bit strip (``dispatchcore.notebook.keyset_svg``).
* ``{dispatchcore-keyset-layout}``: the 64-bit layout, runtime and alias keys (``keyset_layout_svg``).

Invariant: a page's code never runs in the Sphinx process, and no two pages share an
interpreter, so what one page registers cannot leak into another page or into Sphinx. One worker
process imports dispatchcore once; each page runs in a child forked from it (a fresh interpreter
per page where ``os.fork`` is missing). Run one page by hand with
``python docs/_ext/dispatchcore_figures.py --page < request.json``.
"""

from __future__ import annotations

import contextlib
import doctest
import hashlib
import io
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = {"python", "py", "python3", "pycon"}  # the languages whose blocks run (as in test_docs.py)

# Styles for the figures' wrappers, scoped by the dc-figure class; the pictures style themselves.
_CSS = (
    "<style>"
    ".dc-figure { margin: 1em 0 1.5em; }"
    ".dc-figure .dc-figure-scroll { overflow-x: auto; border: 1px solid #e2e8f0; }"
    ".dc-figure .dc-figure-scroll svg.dc-trace { max-width: none !important; }"
    ".dc-figure .dc-figure-fit svg { display: block; }"
    ".dc-figure .dc-pic { color: #1a202c; background: #fff; padding: 4px; overflow-x: auto; }"
    ".dc-figure figcaption { font-size: .9em; color: #718096; margin-top: .3em; }"
    ".dc-figure iframe.dc-trace { background: #fff; margin-top: .6em; }"
    "</style>"
)


# --- in the worker: run a page's blocks and draw its figures -----------------------------------------
def _run_block(block: dict[str, Any], namespace: dict[str, Any], page: str) -> None:
    """Run one block: a doctest's examples (their expected output is test_docs.py's business) or statements."""
    code, line = block["code"], block["line"]
    if code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(code, namespace, f"{page}:{line}", page, line - 1)
        test.globs = namespace  # the page's blocks share one namespace
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=lambda _: None, clear_globs=False)
    else:
        exec(compile("\n" * (line - 1) + code, page, "exec"), namespace)  # noqa: S102 - running the docs is the point


def _figure(spec: dict[str, Any], namespace: dict[str, Any]) -> str:
    """One figure's HTML, drawn from the page's namespace."""
    import dispatchcore as dc
    from dispatchcore import notebook

    kind, argument, options = spec["kind"], spec["argument"].strip(), spec["options"]
    if kind == "trace":
        trace = eval(argument or "t", namespace)  # noqa: S307 - an expression written on the page
        height = int(options.get("height") or 420)
        return (f'<figure class="dc-figure" data-figure="trace"><div class="dc-figure-scroll">'
                f"{notebook.trace_svg(trace)}</div>{notebook.trace_html(trace, height)}"
                f"<figcaption>The trace above as a sequence diagram (user code and the keys it visited; "
                f"solid arrows call, dashed ones redispatch), then as the interactive hop tree with every key "
                f"set's bits (<code>Trace.html()</code>). Drawn when these docs were built.</figcaption></figure>")
    if kind == "table":
        keys = options.get("keys", "").split() or None
        return (f'<figure class="dc-figure" data-figure="table">{notebook.table_html(dc.find_op(argument), keys)}'
                f"<figcaption>The computed dispatch table of <code>{argument}</code>, one colour per rule "
                f"(<code>dispatchcore.notebook.table_html</code>).</figcaption></figure>")
    if kind == "keyset":
        value = eval(argument, namespace)  # noqa: S307 - an expression written on the page
        return (f'<figure class="dc-figure" data-figure="keyset"><div class="dc-figure-fit">'
                f"{notebook.keyset_svg(value)}</div><figcaption><code>{argument}</code>, bit by bit "
                f"(<code>dispatchcore.notebook.keyset_svg</code>).</figcaption></figure>")
    if kind == "keyset-layout":
        return (f'<figure class="dc-figure" data-figure="keyset-layout"><div class="dc-figure-fit">'
                f"{notebook.keyset_layout_svg()}</div><figcaption>Drawn from <code>dispatchcore/keys.py</code> "
                f"(<code>dispatchcore.notebook.keyset_layout_svg</code>); hover a cell for its key."
                f"</figcaption></figure>")
    raise ValueError(f"unknown figure kind {kind!r}")


def draw_page(request: dict[str, Any]) -> list[dict[str, str]]:
    """Run a page's blocks in order and draw each figure after the blocks above it: ``{"html"}`` or ``{"error"}``."""
    page, blocks = request["page"], request["blocks"]
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    results: list[dict[str, str]] = []
    done, failure = 0, None
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for spec in request["figures"]:
            while failure is None and done < spec["after"]:
                try:
                    _run_block(blocks[done], namespace, page)
                except BaseException:  # noqa: BLE001 - reported on the figure
                    failure = f"the block at {page}:{blocks[done]['line']} raised\n{traceback.format_exc()}"
                done += 1
            if failure is not None:
                results.append({"error": failure})
                continue
            try:
                results.append({"html": _figure(spec, namespace)})
            except Exception:  # noqa: BLE001 - reported on the figure
                results.append({"error": traceback.format_exc()})
    return results


def _in_child(line: str) -> str:
    """``draw_page`` in a child forked from this warm worker: the child's registrations die with it."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never through the worker's stdout
        os.close(read_end)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            answer = json.dumps(draw_page(json.loads(line)))
        except BaseException:  # noqa: BLE001 - the parent reports it
            answer = json.dumps({"error": traceback.format_exc()})
        with os.fdopen(write_end, "w", encoding="utf-8") as out:
            out.write(answer)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as answer_pipe:
        answer = answer_pipe.read()
    _, status = os.waitpid(pid, 0)
    return answer or json.dumps({"error": f"the page's process died (wait status {status})"})


def _in_fresh_interpreter(line: str) -> str:
    result = subprocess.run([sys.executable, __file__, "--page"], input=line, capture_output=True, text=True,
                            cwd=ROOT, check=False)
    return result.stdout or json.dumps({"error": result.stderr[-4000:]})


def serve() -> None:
    """The worker: one JSON request per line on stdin, one JSON answer per line on stdout."""
    import dispatchcore

    dispatchcore.load_backends()  # once, before forking: every page's child starts warm
    run = _in_child if hasattr(os, "fork") else _in_fresh_interpreter
    for line in sys.stdin:
        sys.stdout.write(run(line).replace("\n", " ") + "\n")
        sys.stdout.flush()


# --- in Sphinx: the directives, and the pass that replaces them with figures --------------------------
def setup(app: Any) -> dict[str, Any]:
    """Register the directives; draw a page's figures once the page is parsed (``doctree-read``)."""
    from docutils import nodes
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective

    logger = logging.getLogger(__name__)

    class figure_request(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes in lower case
        """Where a figure goes; replaced by the figure's HTML before the page is stored."""

    def directive(figure_kind: str, takes_argument: bool) -> type:
        class FigureDirective(SphinxDirective):
            required_arguments = 1 if takes_argument and figure_kind != "trace" else 0
            optional_arguments = 1 if figure_kind == "trace" else 0
            final_argument_whitespace = True
            option_spec = {"keys": str, "height": int}

            def run(self) -> list[Any]:
                node = figure_request(kind=figure_kind, argument=(self.arguments or [""])[0],
                                      options={k: str(v) for k, v in self.options.items()})
                self.set_source_info(node)
                return [node]

        return FigureDirective

    for kind, takes_argument in (("trace", True), ("table", True), ("keyset", True), ("keyset-layout", False)):
        app.add_directive(f"dispatchcore-{kind}", directive(kind, takes_argument))

    worker: list[subprocess.Popen[str]] = []

    def ask(request: dict[str, Any]) -> list[dict[str, str]]:
        if not worker:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
            worker.append(subprocess.Popen([sys.executable, __file__, "--serve"], cwd=ROOT, env=env, text=True,
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8"))
        process = worker[0]
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline() or '{"error": "the figure worker exited"}')
        if isinstance(answer, dict):
            return [answer] * len(request["figures"])
        return answer

    def draw(app: Any, doctree: Any) -> None:
        requests = list(doctree.findall(figure_request))
        if not requests:
            return
        blocks: list[dict[str, Any]] = []
        figures: list[dict[str, Any]] = []
        for node in doctree.findall(lambda n: isinstance(n, (nodes.literal_block, figure_request))):
            if isinstance(node, figure_request):
                figures.append({"kind": node["kind"], "argument": node["argument"], "options": node["options"],
                                "after": len(blocks)})
            elif node.get("language", "") in PYTHON:
                blocks.append({"code": node.astext(), "line": (node.line or 1) + 1})
        page = Path(app.env.doc2path(app.env.docname)).resolve().relative_to(ROOT).as_posix()
        for node, answer in zip(requests, ask({"page": page, "blocks": blocks, "figures": figures})):
            if "error" in answer:
                logger.warning("dispatchcore-%s figure could not be drawn: %s", node["kind"], answer["error"],
                               location=node)
                node.replace_self([])
            else:
                node.replace_self(nodes.raw("", _CSS + answer["html"], format="html"))

    def stop(app: Any, exception: Exception | None) -> None:
        for process in worker:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=60)
        worker.clear()

    app.connect("doctree-read", draw)
    app.connect("build-finished", stop)
    # the figures are drawn from the code: a change to dispatchcore re-reads every page
    app.add_config_value("dispatchcore_figures_code", _code_digest(), "env")
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}


def _code_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((ROOT / "dispatchcore").rglob("*.py")) + sorted((ROOT / "backends").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


if __name__ == "__main__":  # the worker (--serve), or one page from a request on stdin (--page)
    if sys.argv[1:] == ["--serve"]:
        serve()
    elif sys.argv[1:] == ["--page"]:
        print(json.dumps(draw_page(json.loads(sys.stdin.read()))))
    else:
        sys.exit("usage: dispatchcore_figures.py --serve | --page < request.json")
