"""Sphinx configuration: MyST pages, an API reference generated from the docstrings, figures drawn from the code."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))  # dispatchcore_figures: the figure directives

project = "dispatchcore"
author = "the dispatchcore developers"
copyright = "2026, the dispatchcore developers"  # noqa: A001 - Sphinx's name

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode",
              "dispatchcore_figures"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "examples", "_ext"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = True
html_theme = "furo"
html_title = "dispatchcore"
suppress_warnings = ["myst.xref_missing"]
