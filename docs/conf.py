"""Sphinx configuration: MyST pages plus an API reference generated from the docstrings."""

project = "dispatchcore"
author = "the dispatchcore developers"
copyright = "2026, the dispatchcore developers"  # noqa: A001 - Sphinx's name

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "examples"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = True
html_theme = "furo"
html_title = "dispatchcore"
suppress_warnings = ["myst.xref_missing"]
