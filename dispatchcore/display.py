"""Rich-display hooks: how key sets and operators reach Jupyter without importing what draws them.

``DispatchKeySet`` and ``OperatorHandle`` sit at the bottom of the import order (keys -> key
sets -> TLS -> schema -> operator/registry); their pictures are drawn by ``dispatchcore.notebook``
at the top. So their ``_repr_html_``/``_repr_svg_`` methods ask this module, and
``notebook.py`` registers its renderers here when it is imported (``import dispatchcore`` does):
the dependency points down, as a backend's registrations do. Invariant: this module imports
nothing; without a renderer a method returns None, and IPython falls back to the text ``repr``.
No PyTorch counterpart (torch objects have no rich displays).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register_renderer", "rich_display"]

_RENDERERS: dict[str, Callable[[Any], str]] = {}


def register_renderer(name: str, fn: Callable[[Any], str]) -> None:
    """Make ``fn(obj)`` the renderer that ``rich_display(name, obj)`` calls (the last one wins).

    Example:
        >>> register_renderer("doc_demo", lambda obj: f"<b>{obj}</b>")
        >>> rich_display("doc_demo", 3)
        '<b>3</b>'
    """
    _RENDERERS[name] = fn


def rich_display(name: str, obj: Any) -> str | None:
    """``obj`` drawn by the renderer registered as ``name``; None when there is none."""
    fn = _RENDERERS.get(name)
    return None if fn is None else fn(obj)
