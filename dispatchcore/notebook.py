"""Rich displays for Jupyter and IPython: key sets, dispatch tables, explanations and traces as pictures.

The classes keep thin ``_repr_html_``/``_repr_pretty_`` methods that import this module on first
display, so nothing here is loaded by ``import dispatchcore``. Each function returns one
self-contained HTML fragment: its styles inline in a ``<style>`` scoped by the ``dc-`` class
prefix, no script, nothing fetched. A trace, whose page has its own script, is shown in an
``iframe`` (``srcdoc``) so that its script and styles stay inside it. Invariant: every picture is
drawn from the same data the text forms print (``repr``, ``dump_table``, ``str(explain(...))``).
"""

from __future__ import annotations

import html
from typing import Any

from .keys import DispatchKey
from .keyset import DispatchKeySet
from .trace_render import _strip, key_names

__all__ = ["explanation_html", "keyset_html", "table_html", "trace_html"]

_STRIP_CSS = (
    ".dc-pic { font: 13px/1.4 system-ui, sans-serif; }"
    ".dc-pic code, .dc-pic .dc-mono { font-family: ui-monospace, Menlo, monospace; }"
    ".dc-pic .strip { display: inline-flex; align-items: center; }"
    ".dc-pic .bit { display: inline-block; width: 8px; height: 13px; margin-right: 1px;"
    " border: 1px solid #cbd5e0; background: #fff; }"
    ".dc-pic .bit.nibble { margin-left: 3px; }"
    ".dc-pic .bit.on { background: #2b6cb0; border-color: #2b6cb0; }"
    ".dc-pic .bit.chosen { outline: 2px solid #dd6b20; }"
    ".dc-pic .sep { display: inline-block; width: 2px; height: 17px; background: #1a202c; margin: 0 4px; }"
    ".dc-pic table { border-collapse: collapse; }"
    ".dc-pic th, .dc-pic td { text-align: left; padding: 1px 8px 1px 0; vertical-align: top; }"
    ".dc-pic tr.dc-kernel td.dc-label { background: #c6f6d5; }"
    ".dc-pic tr.dc-default-backend td.dc-label { background: #b2f5ea; }"
    ".dc-pic tr.dc-math td.dc-label { background: #bee3f8; }"
    ".dc-pic tr.dc-autograd td.dc-label { background: #e9d8fd; }"
    ".dc-pic tr.dc-fallback td.dc-label { background: #edf2f7; }"
    ".dc-pic tr.dc-fallthrough td.dc-label { background: #fefcbf; }"
    ".dc-pic tr.dc-missing td.dc-label { background: #fed7d7; }"
    ".dc-pic .dc-error { color: #c53030; }"
)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fragment(kind: str, body: str) -> str:
    return f'<div class="dc-pic dc-{kind}"><style>{_STRIP_CSS}</style>{body}</div>'


def keyset_html(ks: DispatchKeySet | int, chosen: int = 0) -> str:
    """A key set as its bit strip (62 cells): functionality bits | backend bits, highest priority first.

    Example:
        >>> import dispatchcore as dc
        >>> picture = keyset_html(dc.tensor_keyset("CPU"))
        >>> picture.count('class="bit on'), 'data-raw="0x9400010001"' in picture
        (5, True)
    """
    bits = ks if type(ks) is int else int(ks)  # type: ignore[call-overload]
    names = ", ".join(key_names(bits)) or "(empty)"
    return _fragment("keyset", f'{_strip(bits, {}, chosen)} <code>{bits:#x}</code> <span>{_e(names)}</span>')


# the label torch's dump prints -> the class (and legend word) of its row
_LABEL_CLASSES = {
    "kernel": "dc-kernel", "default backend kernel": "dc-default-backend", "math kernel": "dc-math",
    "nested kernel": "dc-math", "autograd kernel": "dc-autograd", "backend fallback": "dc-fallback",
}


def table_html(op: Any) -> str:
    """An operator's computed dispatch table, a coloured row per runtime key in ``dump_table``'s order.

    A row is green for a kernel at its key, teal for a default backend kernel, blue for a math
    (CompositeImplicitAutograd) kernel, purple for an autograd kernel, grey for a backend
    fallback, yellow for a fallthrough and red for a backend key with no kernel at all (a call
    there raises). ``data-key`` and ``data-label`` carry the dump's words.

    Example:
        >>> import dispatchcore as dc
        >>> picture = table_html(dc.ops.aten.mm.default)
        >>> 'data-key="CPU"' in picture and 'data-key="AutogradCPU"' in picture
        True
    """
    from .dispatcher import DUMP_ORDER

    rows: list[tuple[DispatchKey, str, str, str]] = []
    for key in DUMP_ORDER:
        reg, label = op.table_entry(key)
        if reg is None:
            if key in (DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta):
                rows.append((key, "missing", "dc-missing", "no kernel: a call here raises"))
            continue
        cls = "dc-fallthrough" if getattr(reg, "fallthrough", False) else _LABEL_CLASSES.get(label, "dc-kernel")
        word = "fallthrough" if cls == "dc-fallthrough" else label
        rows.append((key, word, cls, getattr(reg, "debug", repr(reg))))
    body = "".join(
        f'<tr class="{cls}" data-key="{_e(key.name)}" data-label="{_e(word)}"><th>{_e(key.name)}</th>'
        f'<td class="dc-label">{_e(word)}</td><td class="dc-mono">{_e(debug)}</td></tr>'
        for key, word, cls, debug in rows)
    return _fragment("table", f"<div><code>{_e(op.qualname)}</code></div><table>{body}</table>")


def explanation_html(explanation: Any) -> str:
    """``explain(...)``'s answer: the call, the key-set strips it went through, and the path.

    Example:
        >>> import dispatchcore as dc
        >>> picture = explanation_html(dc.explain(dc.ops.aten.add.Tensor, dc.ones(2), dc.ones(2)))
        >>> 'data-step="0" data-key="AutogradCPU"' in picture
        True
    """
    ex = explanation
    chosen = int(DispatchKeySet(ex.key)) if ex.ok else 0
    rows = [("arguments", ex.contributed, 0), ("after TLS", ex.after_tls, 0), ("effective", ex.effective, chosen)]
    strips = "".join(f'<tr data-set="{_e(name)}"><th>{_e(name)}</th><td>{_strip(bits, {}, mark)}</td>'
                     f'<td class="dc-mono">{bits:#x}</td></tr>' for name, bits, mark in rows)
    steps = "".join(f'<li data-step="{i}" data-key="{_e(s.key.name)}"><code>{_e(s.key.name)}</code>: '
                    f"{_e(s.label)}</li>" for i, s in enumerate(ex.steps))
    error = f'<p class="dc-error">{_e(ex.error)}</p>' if ex.error else ""
    fix = f"<p>fix: {_e(ex.fix)}</p>" if ex.fix else ""
    return _fragment("explain", f"<div><code>{_e(ex.call)}</code></div><table>{strips}</table>"
                                f"<ol>{steps}</ol><p>{_e(ex.rule)}</p>{error}{fix}")


def trace_html(trace: Any, height: int = 480) -> str:
    """A recorded trace as its interactive page (the hop tree and strips), in an ``iframe``.

    Example:
        >>> import dispatchcore as dc
        >>> with dc.trace() as t:
        ...     _ = dc.ones(2) * 2
        >>> picture = trace_html(t)
        >>> picture.startswith("<iframe") and "srcdoc=" in picture
        True
    """
    page = trace.html()
    return (f'<iframe class="dc-trace" style="width: 100%; height: {int(height)}px; border: 1px solid #cbd5e0" '
            f'srcdoc="{_e(page)}"></iframe>')


def pretty(obj: Any, printer: Any, cycle: bool) -> None:
    """IPython's ``_repr_pretty_``: the object's text form (``str``), or its ``repr`` in a cycle."""
    printer.text(repr(obj) if cycle else str(obj))
