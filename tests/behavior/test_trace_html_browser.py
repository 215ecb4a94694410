"""The HTML trace page in a real headless Chromium: the DOM after its script ran, and a screenshot.

Skipped where no Chromium/Chrome is installed (``apt-get install chromium`` provides one), except
where ``DISPATCHCORE_REQUIRE_BROWSER=1`` (``.ci/run`` sets it after installing Debian's chromium):
there a missing browser fails the suite. Set ``DISPATCHCORE_TRACE_SCREENSHOT=path.png`` to keep the
screenshot (docs/_static/trace-html.png is made this way).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path

import pytest

import dispatchcore as dc
from dispatchcore.trace import trace

_spec = importlib.util.spec_from_file_location("_browser", Path(__file__).with_name("_browser.py"))
assert _spec is not None and _spec.loader is not None
_browser = importlib.util.module_from_spec(_spec)  # the helpers, shared with test_docs_browser.py
_spec.loader.exec_module(_browser)
BROWSER, BROWSERS, REQUIRED = _browser.BROWSER, _browser.BROWSERS, _browser.REQUIRED
needs_browser, run_browser, png_info = _browser.needs_browser, _browser.run_browser, _browser.png_info
WIDTH, HEIGHT = 1400, 1250


def test_a_browser_is_there_where_the_run_requires_one():
    """CI installs Chromium and sets DISPATCHCORE_REQUIRE_BROWSER=1: the browser tests must run, not skip."""
    if not REQUIRED:
        pytest.skip("this run does not require a browser (DISPATCHCORE_REQUIRE_BROWSER is not 1)")
    assert BROWSER is not None, f"none of {', '.join(BROWSERS)} is on PATH; .ci/run installs Debian's chromium"


@pytest.fixture
def page(tmp_path):
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        y = x * 2
        y.add_(1)
        with dc.no_grad():
            y.view(2)
        dc.zeros(2)
    path = tmp_path / "trace.html"
    path.write_text(t.html(), encoding="utf-8")
    return t, path


@needs_browser
def test_dom_after_the_script_ran(page, tmp_path):
    t, path = page
    result = run_browser(tmp_path, "--dump-dom", path.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert re.search(r'<html[^>]*data-js="ready"', dom), "the page script did not run to its end"
    hops = re.findall(r'<li class="hop (call|redispatch)" id="hop-(\d+)"[^>]*data-op="([^"]+)" '
                      r'data-key="([^"]+)"', dom)
    assert [(kind, int(i), op, key) for kind, i, op, key in hops] == [
        (h.kind, i, h.op, h.key.name) for i, h in enumerate(t.hops())]
    rows = re.findall(r'<tr class="set" data-set="(\w+)"[^>]*data-raw="(0x[0-9a-f]+)">(.*?)</tr>', dom)
    assert len(rows) == sum(len(h.arg_keys) + 3 for h in t.hops())  # args, included, excluded, effective
    for kind, raw, cells in rows:
        bits = {int(b): cls.split() for cls, b in re.findall(r'<span class="bit ([a-z ]+)" data-bit="(\d+)"', cells)}
        assert sorted(bits, reverse=True) == list(range(61, -1, -1))
        shown = {b for b, cls in bits.items() if "on" in cls or ("masked" in cls and kind != "effective")}
        assert shown == {b for b in range(62) if int(raw, 16) >> b & 1}, (kind, raw)
        assert all(re.search(rf'data-bit="{b}" title="bit {b}: \w+', cells) for b in bits)
    assert 'class="bit masked' in dom and 'class="bit skipped' in dom and "chosen" in dom
    assert dom.count('class="event ') == len(t.events)


@needs_browser
def test_screenshot_is_a_real_picture(page, tmp_path):
    _, path = page
    shot = tmp_path / "trace.png"
    result = run_browser(tmp_path, "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}",
                         f"--screenshot={shot}", path.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    data = shot.read_bytes()
    width, height, pixels = png_info(data)
    assert (width, height) == (WIDTH, HEIGHT)
    assert len(data) > 20_000
    # not blank: a white page compresses to a few distinct bytes
    assert len(set(pixels)) > 64
    keep = os.environ.get("DISPATCHCORE_TRACE_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
