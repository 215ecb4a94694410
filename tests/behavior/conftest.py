"""Fixtures of the behaviour tests: the documentation site, built once per test session.

``test_docs.py`` checks that ``sphinx-build -W`` succeeds and ``test_docs_browser.py`` opens the
pages it wrote; both use this one build (a build takes ~20 s).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


@attrs.frozen
class SphinxBuild:
    """One ``sphinx-build -W -b html docs/`` run: its exit status, its output, the site it wrote."""

    returncode: int
    output: str
    html: Path


@pytest.fixture(scope="session")
def sphinx_build(tmp_path_factory: pytest.TempPathFactory) -> SphinxBuild:
    """The site, built with warnings as errors; skips when Sphinx, myst-parser or furo is missing."""
    for module in ("sphinx", "myst_parser", "furo"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site") / "html"
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                             str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    return SphinxBuild(result.returncode, result.stdout + result.stderr, out)
