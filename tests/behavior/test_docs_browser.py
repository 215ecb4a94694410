"""The built documentation in a real headless Chromium: the figures are in each page's DOM, and look like pictures.

The site is the session's one ``sphinx-build -W`` (``conftest.py``, shared with ``test_docs.py``;
skipped when Sphinx, myst-parser or furo is missing). Each lesson's trace figure must draw the hops its ``Output``
block prints, in order (the SVG sequence diagram) and embed the interactive page; the keys page
must show the key-set layout and a key set's strip; the table figures colour each row by its
rule. Screenshots are kept in ``$DISPATCHCORE_ARTIFACTS/docs-screenshots`` (or the test's
temporary directory). Browser handling as in ``test_trace_html_browser.py`` (``_browser.py``):
``DISPATCHCORE_REQUIRE_BROWSER=1`` makes a missing browser fail.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
from pathlib import Path
from typing import Any

import pytest

_spec = importlib.util.spec_from_file_location("_browser", Path(__file__).with_name("_browser.py"))
assert _spec is not None and _spec.loader is not None
_browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_browser)
needs_browser, run_browser, png_info = _browser.needs_browser, _browser.run_browser, _browser.png_info

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LESSONS = sorted((DOCS / "lessons").glob("[0-9][0-9]-*.md"))
WIDTH, HEIGHT = 1400, 2400
_HOP_LINE = re.compile(r"^ *\[(call|redispatch)\] op=\[([^\]]+)\], key=\[(\w+)\]$", re.MULTILINE)
_MESSAGE = re.compile(r'<g class="message (call|redispatch)" data-hop="(\d+)" data-op="([^"]+)" '
                      r'data-from="([^"]+)" data-to="([^"]+)"')


@pytest.fixture(scope="module")
def site(sphinx_build: Any) -> Path:
    assert sphinx_build.returncode == 0, sphinx_build.output  # the session's one build (conftest.py)
    return sphinx_build.html


def built(site: Path, page: Path) -> Path:
    return site / page.relative_to(DOCS).with_suffix(".html")


def dom(tmp_path: Path, page: Path) -> str:
    """The page's DOM after its scripts ran, as Chromium serialises it."""
    result = run_browser(tmp_path, "--dump-dom", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def figures(text: str, kind: str) -> list[str]:
    return re.findall(rf'<figure class="dc-figure" data-figure="{kind}">(.*?)</figure>', text, re.DOTALL)


def printed_hops(lesson: Path) -> tuple[list[tuple[str, str, str]], bool]:
    """(kind, op, key) of each hop the Output block of the lesson's ``print(t.text())`` block shows,
    and whether the block elides lines (a ``...`` line may stand for hops too)."""
    text = lesson.read_text(encoding="utf-8")
    after = text[text.index("print(t.text())"):]
    output = after[after.index("```{code-block} text"):]
    output = output[:output.index("\n```", 1)]
    return _HOP_LINE.findall(output), bool(re.search(r"^\.\.\.$", output, re.MULTILINE))


def in_order(part: list, whole: list) -> bool:
    """Whether ``part`` is a subsequence of ``whole``."""
    rest = iter(whole)
    return all(item in rest for item in part)


@needs_browser
@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_lesson_page_draws_the_hops_its_output_prints_and_embeds_the_interactive_trace(site, tmp_path, lesson):
    (figure,) = figures(dom(tmp_path, built(site, lesson)), "trace")
    svg = figure[figure.index("<svg"):figure.index("</svg>")]
    assert 'class="dc-svg dc-trace"' in svg
    messages = _MESSAGE.findall(svg)
    drawn = [(kind, op, to) for kind, _, op, _, to in messages]
    printed, elided = printed_hops(lesson)
    assert in_order(printed, drawn) if elided else drawn == printed
    lanes = re.findall(r'<g class="participant" data-key="(\w+)"', svg)
    assert lanes[0] == "caller" and set(lanes[1:]) == {to for *_, to in messages}
    assert messages[0][3] == "caller"  # the first hop is the user's call
    assert all(frm in lanes for *_, frm, _ in messages)
    iframe = re.search(r'<iframe class="dc-trace"[^>]*srcdoc="([^"]*)"', figure)
    assert iframe is not None, "no interactive trace"
    page = html.unescape(iframe.group(1))
    assert page.count('<li class="hop ') == len(messages) + page.count('<li class="hop backward"')


@needs_browser
def test_the_embedded_trace_page_runs_its_script_and_shows_the_diagrams_hops(site, tmp_path):
    text = built(site, LESSONS[0]).read_text(encoding="utf-8")
    (figure,) = figures(text, "trace")
    page = tmp_path / "embedded.html"
    page.write_text(html.unescape(re.search(r'srcdoc="([^"]*)"', figure).group(1)), encoding="utf-8")
    shown = dom(tmp_path, page)
    assert re.search(r'<html[^>]*data-js="ready"', shown), "the embedded page's script did not run"
    hops = re.findall(r'<li class="hop (?:call|redispatch)" id="hop-(\d+)"[^>]*data-op="([^"]+)" data-key="(\w+)"',
                      shown)
    assert hops == [(n, op, to) for _, n, op, _, to in _MESSAGE.findall(figure)]


@needs_browser
def test_the_keys_page_shows_the_key_set_layout_and_a_key_sets_bits(site, tmp_path):
    shown = dom(tmp_path, built(site, DOCS / "concepts" / "keys-and-keysets.md"))
    (layout,) = figures(shown, "keyset-layout")
    assert 'class="dc-svg dc-keyset-layout"' in layout
    names = set(re.findall(r'<text[^>]*class="bit-name"[^>]*>(\w+)</text>', layout))
    assert {"Dense", "ADInplaceOrView", "AutogradFunctionality", "PythonDispatcher", "CPUBit", "MetaBit"} <= names
    assert len(names) == 62
    assert '<g class="runtime-key" data-key="AutogradCPU" data-functionality="AutogradFunctionality" ' \
           'data-backend="CPUBit">' in layout
    aliases = dict(re.findall(r'<g class="alias" data-alias="(\w+)">(.*?)</g>', layout, re.DOTALL))
    assert set(aliases) == {"Autograd", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                            "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutogradNestedTensor",
                            "FuncTorchBatchedDecomposition"}
    covered = set(re.findall(r'class="covered" data-key="(\w+)"', aliases["Autograd"]))
    assert len(covered) == 18 and {"AutogradCPU", "AutogradMeta", "AutogradOther"} <= covered
    assert "0x1000000001" in layout  # AutogradCPU's bits, the worked example
    (strip,) = figures(shown, "keyset")
    on = sorted(int(b) for b in re.findall(r'<rect class="bit on" data-bit="(\d+)"', strip))
    assert on == [0, 16, 34, 36, 39]
    assert ">0x9400010001</text>" in strip


@needs_browser
def test_table_figures_colour_each_row_by_the_rule_that_filled_it(site, tmp_path):
    lesson = dom(tmp_path, built(site, DOCS / "lessons" / "08-alias-key-table.md"))
    (table,) = figures(lesson, "table")
    rows = {key: cls for cls, key in re.findall(r'<tr class="(dc-[\w-]+)" data-key="(\w+)"', table)}
    assert rows == {"CPU": "dc-kernel", "XLA": "dc-kernel", "Lazy": "dc-math", "FPGA": "dc-math", "Meta": "dc-math",
                    "AutogradOther": "dc-math", "AutogradCPU": "dc-fallback", "AutogradXLA": "dc-fallback",
                    "AutogradLazy": "dc-math", "AutogradMeta": "dc-math"}
    legend = re.findall(r'<span class="dc-swatch (dc-[\w-]+)"', table)
    assert legend == ["dc-kernel", "dc-default-backend", "dc-math", "dc-autograd", "dc-fallback", "dc-fallthrough",
                      "dc-missing"]
    concept = dom(tmp_path, built(site, DOCS / "concepts" / "registration-and-tables.md"))
    (table,) = figures(concept, "table")
    rows = {key: cls for cls, key in re.findall(r'<tr class="(dc-[\w-]+)" data-key="(\w+)"', table)}
    assert rows["CPU"] == "dc-kernel" and rows["CUDA"] == "dc-default-backend"
    assert rows["BackendSelect"] == "dc-fallthrough" and rows["NestedTensorCPU"] == "dc-missing"


@needs_browser
@pytest.mark.parametrize("page", ["lessons/01-add-with-grad", "lessons/08-alias-key-table",
                                  "concepts/keys-and-keysets"])
def test_screenshots_of_figure_pages_are_real_pictures(site, tmp_path, page):
    keep = Path(os.environ.get("DISPATCHCORE_ARTIFACTS") or tmp_path) / "docs-screenshots"
    keep.mkdir(parents=True, exist_ok=True)
    shot = keep / (page.replace("/", "-") + ".png")
    result = run_browser(tmp_path, "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}",
                         (site / f"{page}.html").as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    data = shot.read_bytes()
    width, height, pixels = png_info(data)
    assert (width, height) == (WIDTH, HEIGHT)
    assert len(data) > 50_000
    assert len(set(pixels)) > 64  # not blank: a white page compresses to a few distinct bytes
