"""Headless Chromium for the browser tests: find it, run it, read its PNG screenshots.

Shared by ``test_trace_html_browser.py`` and ``test_docs_browser.py``, which load it by file path
(``--import-mode=importlib`` gives test folders no package, as for ``tests/_bad_inputs.py``). A
test marked ``needs_browser`` is skipped where no Chromium/Chrome is installed (``apt-get install
chromium`` provides one), except where ``DISPATCHCORE_REQUIRE_BROWSER=1`` (``.ci/run`` sets it
after installing Debian's chromium): there a missing browser fails the suite.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


BROWSER = find_browser()
REQUIRED = os.environ.get("DISPATCHCORE_REQUIRE_BROWSER") == "1"
needs_browser = pytest.mark.skipif(
    BROWSER is None and not REQUIRED, reason=f"no headless browser: none of {', '.join(BROWSERS)} is on PATH "
                                             "(apt-get install chromium)")


def run_browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the browser headless, offline, with a profile under ``tmp_path``."""
    assert BROWSER is not None, "no headless browser (apt-get install chromium)"
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--no-default-browser-check", "--disable-extensions",
               # a closed network: no background connections, no updates, no sync
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "HOME": str(tmp_path)})


def png_info(data: bytes) -> tuple[int, int, bytes]:
    """A PNG's width, height and decompressed (still filtered) pixel rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)
