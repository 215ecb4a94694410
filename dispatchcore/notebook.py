"""Rich displays for Jupyter and IPython: key sets, dispatch tables, explanations and traces as pictures.

The classes keep thin ``_repr_html_``/``_repr_svg_``/``_repr_pretty_`` methods. Those of key sets,
operators and traces, which sit below this module in the import order, call the renderers this
module registers in ``dispatchcore.display`` when it is imported (``import dispatchcore`` does);
explanations, above it, import it. Each ``*_html``
function returns one self-contained HTML fragment: its styles inline in a ``<style>`` scoped by
the ``dc-`` class prefix, no script, nothing fetched. A trace, whose page has its own script, is
shown in an ``iframe`` (``srcdoc``) so that its script and styles stay inside it. Each ``*_svg``
function returns one ``<svg>`` element with presentation attributes only (no style sheet, script
or ids), valid inline in HTML and as a standalone ``.svg`` file; the documentation's figures are
these pictures (``docs/_ext/dispatchcore_figures.py``). Invariant: every picture is drawn from the
same data the text forms print (``repr``, ``dump_table``, ``str(explain(...))``), and the key-set
layout from ``keys.py`` itself, never by hand.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Iterable
from typing import Any

from .display import register_renderer
from .dumps import DUMP_ORDER
from .keys import (
    END_OF_FUNCTIONALITY,
    NUM_BACKENDS,
    PER_BACKEND_FUNCTIONALITIES,
    BackendComponent,
    DispatchKey,
    alias_expansion,
    is_alias_key,
    is_per_backend_functionality,
    runtime_key,
    to_backend_component,
    to_functionality_key,
)
from .keyset import DispatchKeySet, key_bits
from .trace_render import (
    NUM_BITS,
    _bit_title,
    _strip,
    _svg_document,
    _svg_text,
    _text_width,
    bit_name,
    key_names,
    render_svg,
)

__all__ = ["explanation_html", "keyset_html", "keyset_layout_svg", "keyset_svg", "table_html", "trace_html",
           "trace_svg"]

# the class of a dispatch-table row -> (its colour, its legend text); the order is the legend's
_TABLE_CLASSES = {
    "dc-kernel": ("#c6f6d5", "kernel: registered at the key itself"),
    "dc-default-backend": ("#b2f5ea", "default backend kernel: CompositeExplicitAutograd"),
    "dc-math": ("#bee3f8", "math kernel: CompositeImplicitAutograd"),
    "dc-autograd": ("#e9d8fd", "autograd kernel: the Autograd alias"),
    "dc-fallback": ("#edf2f7", "backend fallback"),
    "dc-fallthrough": ("#fefcbf", "fallthrough: the key is skipped"),
    "dc-missing": ("#fed7d7", "missing: a call here raises"),
}

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
    ".dc-pic .dc-legend { display: flex; flex-wrap: wrap; gap: 4px 10px; margin: 4px 0; }"
    ".dc-pic .dc-swatch { padding: 0 6px; border-radius: 2px; }"
    ".dc-pic .dc-error { color: #c53030; }"
    # a table row's label cell and its legend swatch share the colour of the row's rule
    + "".join(f".dc-pic tr.{cls} td.dc-label, .dc-pic .dc-swatch.{cls} {{ background: {colour}; }}"
              for cls, (colour, _) in _TABLE_CLASSES.items())
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


def table_html(op: Any, keys: Iterable[DispatchKey | str] | None = None) -> str:
    """An operator's computed dispatch table, a coloured row per runtime key in ``dump_table``'s order.

    A row is green for a kernel at its key, teal for a default backend kernel, blue for a math
    (CompositeImplicitAutograd) kernel, purple for an autograd kernel, grey for a backend
    fallback, yellow for a fallthrough and red for a key with no kernel at all (a call there
    raises); a legend under the table names the colours. ``data-key`` and ``data-label`` carry
    the dump's words.

    Args:
        op: the operator (an ``OperatorHandle`` or an overload packet's handle).
        keys: the rows to show, in this order; a key without an entry is shown as missing. By
            default every key ``dump_table`` prints, plus ``CPU``, ``CUDA`` and ``Meta`` when
            they have no kernel.

    Example:
        >>> import dispatchcore as dc
        >>> picture = table_html(dc.ops.aten.mm.default)
        >>> 'data-key="CPU"' in picture and 'data-key="AutogradCPU"' in picture
        True
        >>> picture = table_html(dc.ops.aten.mm.default, keys=["XLA", "CPU"])
        >>> picture.count("<tr "), 'data-key="XLA" data-label="missing"' in picture
        (2, True)
    """
    chosen = DUMP_ORDER if keys is None else [DispatchKey.parse(k) for k in keys]
    rows: list[tuple[DispatchKey, str, str, str]] = []
    for key in chosen:
        reg, label = op.table_entry(key)
        if reg is None:
            if keys is not None or key in (DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta):
                rows.append((key, "missing", "dc-missing", "no kernel: a call here raises"))
            continue
        cls = "dc-fallthrough" if getattr(reg, "fallthrough", False) else _LABEL_CLASSES.get(label, "dc-kernel")
        word = "fallthrough" if cls == "dc-fallthrough" else label
        rows.append((key, word, cls, getattr(reg, "debug", repr(reg))))
    body = "".join(
        f'<tr class="{cls}" data-key="{_e(key.name)}" data-label="{_e(word)}"><th>{_e(key.name)}</th>'
        f'<td class="dc-label">{_e(word)}</td><td class="dc-mono">{_e(debug)}</td></tr>'
        for key, word, cls, debug in rows)
    legend = "".join(f'<span class="dc-swatch {cls}" data-legend="{cls[3:]}">{_e(text)}</span>'
                     for cls, (_, text) in _TABLE_CLASSES.items())
    return _fragment("table", f"<div><code>{_e(op.qualname)}</code></div><table>{body}</table>"
                              f'<div class="dc-legend">{legend}</div>')


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


# --- SVG pictures: key sets and traces ----------------------------------------------------------------
_PITCH, _CELL, _SEP = 14, 12, 10  # a bit cell's pitch and width; the gap between the two halves
_ON, _OFF, _INK, _MUTED = "#2b6cb0", "#ffffff", "#1a202c", "#718096"
_EXAMPLE = "#dd6b20"  # the worked example of the layout figure (AutogradCPU)
_STRIP_WIDTH = NUM_BITS * _PITCH + _SEP


def _bit_x(bit: int, left: float) -> float:
    """The left edge of a bit's cell: bit 61 (highest priority) first, a gap before bit 15."""
    return left + (NUM_BITS - 1 - bit) * _PITCH + (_SEP if bit < NUM_BACKENDS else 0)


def _svg_strip(bits: int, left: float, top: float, fills: dict[int, str] | None = None) -> str:
    """62 ``rect.bit`` cells (class ``on``/``off``, ``data-bit``, a ``title`` naming the bit) and the bar."""
    out = []
    for bit in range(NUM_BITS - 1, -1, -1):
        on = bits >> bit & 1
        fill = (fills or {}).get(bit) or (_ON if on else _OFF)
        title = _bit_title(bit, bits, "set" if on else "not set")
        out.append(f'<rect class="bit {"on" if on else "off"}" data-bit="{bit}" x="{_bit_x(bit, left):g}" '
                   f'y="{top:g}" width="{_CELL}" height="16" fill="{fill}" stroke="#a0aec0">'
                   f"<title>{_e(title)}</title></rect>")
    bar = _bit_x(NUM_BACKENDS, left) + _CELL + (_PITCH - _CELL + _SEP) / 2 - 1
    out.append(f'<rect class="separator" x="{bar:g}" y="{top - 3:g}" width="2" height="22" fill="{_INK}">'
               "<title>functionality bits | backend bits</title></rect>")
    return "".join(out)


def _rotated(x: float, y: float, text: str, size: float, angle: int, cls: str, fill: str = _INK) -> str:
    return _svg_text(x, y, text, size, fill=fill,
                     extra=f' class="{cls}" transform="rotate({angle} {x:g} {y:g})"')


def keyset_svg(ks: DispatchKeySet | int) -> str:
    """A key set as an SVG bit strip: set bits highlighted and named, the raw value and the printed keys.

    The strip runs from bit 61 (highest priority) to bit 0, functionality bits, a bar, then backend
    bits. Each cell is a ``rect.bit`` with class ``on`` or ``off``, ``data-bit`` and a ``title``;
    each set bit is named under the strip (``text.bit-name``), and ``text.raw`` holds the raw value.

    Example:
        >>> import dispatchcore as dc
        >>> picture = keyset_svg(dc.tensor_keyset("CPU"))
        >>> picture.count('class="bit on"'), '>0x9400010001<' in picture
        (5, True)
    """
    bits = ks if type(ks) is int else int(ks)  # type: ignore[call-overload]
    left = 12.0
    set_bits = [b for b in range(NUM_BITS - 1, -1, -1) if bits >> b & 1]
    names = key_names(bits)
    printed = "DispatchKeySet(" + ", ".join(names) + ")"
    lines = textwrap.wrap(printed, 140, break_on_hyphens=False)
    label_height = max((_text_width(bit_name(b), 10) for b in set_bits), default=0) + 10
    strip_top = 44
    body = [_svg_text(left, 22, f"{bits:#x}", 15, extra=' class="raw" font-weight="bold"'),
            _svg_text(left + _text_width(f"{bits:#x}", 15) + 12, 22,
                      f"{len(set_bits)} of {NUM_BITS} bits set", 11, fill=_MUTED),
            _svg_text(_bit_x(NUM_BACKENDS, left) / 2 + left / 2, strip_top - 6,
                      f"functionality bits {NUM_BITS - 1}..{NUM_BACKENDS}", 10, "middle", _MUTED),
            _svg_text((_bit_x(NUM_BACKENDS - 1, left) + _bit_x(0, left) + _CELL) / 2, strip_top - 6,
                      f"backend bits {NUM_BACKENDS - 1}..0", 10, "middle", _MUTED),
            _svg_strip(bits, left, strip_top)]
    for bit in (NUM_BITS - 1, NUM_BACKENDS, NUM_BACKENDS - 1, 0):
        body.append(_svg_text(_bit_x(bit, left) + _CELL / 2, strip_top + 27, str(bit), 8, "middle", _MUTED))
    for bit in set_bits:
        body.append(_rotated(_bit_x(bit, left) + _CELL / 2 - 3, strip_top + 34, bit_name(bit), 10, 90,
                             "bit-name"))
    top = strip_top + 34 + label_height + 6
    body += [_svg_text(left, top + 14 * i, line, 10.5, extra=' class="keys"') for i, line in enumerate(lines)]
    height = top + 14 * len(lines)
    return _svg_document("keyset", left * 2 + _STRIP_WIDTH, height, f"{printed} = {bits:#x}", "".join(body))


def _initials(name: str) -> str:
    return "".join(c for c in name if c.isupper())


def keyset_layout_svg() -> str:
    """The 64-bit key-set layout, drawn from ``keys.py``: bits, runtime per-backend keys, alias keys.

    Three panels. The bit strip names every bit: functionality key ``k`` at bit ``15 + k`` over
    the strip, backend components (bits 0..15) under it, the bits of ``AutogradCPU`` marked as a
    worked example. The matrix of runtime per-backend keys: one column per per-backend
    functionality, one row per backend bit, each cell the runtime key that pair of bits makes
    (``g.runtime-key[data-key]``). The alias keys (``g.alias[data-alias]``): the runtime keys each
    one expands to (``alias_expansion``), as a coverage grid of the same matrix plus the other
    keys it covers.

    Example:
        >>> picture = keyset_layout_svg()
        >>> 'data-key="AutogradCPU" data-functionality="AutogradFunctionality" data-backend="CPUBit"' in picture
        True
        >>> picture.count('<g class="alias"')
        6
    """
    left = 14.0
    example = DispatchKey.AutogradCPU
    example_bits = key_bits(example)
    functionalities = sorted(PER_BACKEND_FUNCTIONALITIES)
    backends = [BackendComponent(c) for c in range(1, NUM_BACKENDS + 1)]
    body: list[str] = []

    # 1. the strip, every bit named
    y = 24.0
    body.append(_svg_text(left, y, "A key set is one 64-bit integer: functionality bits over backend bits", 13,
                          extra=' font-weight="bold"'))
    y += 18
    body.append(_svg_text(left, y, f"functionality key k is bit {NUM_BACKENDS - 1} + k (bits {NUM_BACKENDS}.."
                                   f"{NUM_BITS - 1}); backend component c is bit c - 1 (bits 0..{NUM_BACKENDS - 1}); "
                                   "bits 62, 63 are unused", 10.5, fill=_MUTED))
    names_top = y + 12
    tallest = max(_text_width(bit_name(b), 9.5) for b in range(NUM_BITS))
    strip_top = names_top + tallest + 8
    fills: dict[int, str] = {}
    for bit in range(NUM_BITS):
        if bit < NUM_BACKENDS:
            fills[bit] = "#c6f6d5"
        elif is_per_backend_functionality(bit - NUM_BACKENDS + 1):
            fills[bit] = "#bee3f8"
        if example_bits >> bit & 1:
            fills[bit] = _EXAMPLE
    body.append(_svg_strip(0, left, strip_top, fills))
    for bit in range(NUM_BITS):
        x = _bit_x(bit, left) + _CELL / 2
        body.append(_svg_text(x, strip_top + 26, str(bit), 7, "middle", _MUTED))
        if bit >= NUM_BACKENDS:
            body.append(_rotated(x + 3, strip_top - 4, bit_name(bit), 9.5, -90, "bit-name"))
        else:
            body.append(_rotated(x - 3, strip_top + 32, bit_name(bit), 9.5, 90, "bit-name"))
    y = strip_top + 32 + max(_text_width(bit_name(b), 9.5) for b in range(NUM_BACKENDS)) + 18
    f, c = to_functionality_key(example), to_backend_component(example)
    body.append(_svg_text(left, y, f"{example.name} = {f.name} (bit {int(f) + NUM_BACKENDS - 1}) + {c.name} "
                                   f"(bit {int(c) - 1}): DispatchKeySet({example.name}) = {example_bits:#x}",
                          11, fill=_EXAMPLE, extra=' class="example" font-weight="bold"'))
    y += 16
    legend = [("#bee3f8", "per-backend functionality"), ("#c6f6d5", "backend component"),
              (_EXAMPLE, f"the bits of {example.name}")]
    x = left
    for colour, text in legend:
        body.append(f'<rect x="{x:g}" y="{y - 9:g}" width="12" height="10" fill="{colour}" stroke="#a0aec0"/>')
        body.append(_svg_text(x + 16, y, text, 10, fill=_MUTED))
        x += 16 + _text_width(text, 10) + 18

    # 2. the runtime per-backend keys: functionality bit (column) + backend bit (row)
    y += 36
    body.append(_svg_text(left, y, "Runtime per-backend keys: a per-backend functionality bit (column) + "
                                   "a backend bit (row)", 13, extra=' font-weight="bold"'))
    longest = max(len(runtime_key(f, c).name) for f in functionalities for c in backends)
    column = longest * 9 * 0.6 + 10
    head = max(_text_width(f"{c.name} (bit {int(c) - 1})", 9) for c in backends) + 12
    y += 12
    for i, f in enumerate(functionalities):
        x = left + head + i * column + column / 2
        body.append(_svg_text(x, y + 11, f.name, 9.5, "middle", extra=' font-weight="bold"'))
        body.append(_svg_text(x, y + 23, f"bit {int(f) + NUM_BACKENDS - 1}", 9, "middle", _MUTED))
    y += 30
    for r, c in enumerate(backends):
        row_y = y + r * 16
        body.append(_svg_text(left, row_y + 11, f"{c.name} (bit {int(c) - 1})", 9, fill=_MUTED))
        for i, f in enumerate(functionalities):
            key = runtime_key(f, c)
            x = left + head + i * column
            fill = _EXAMPLE if key == example else ("#f7fafc" if r % 2 else "#ffffff")
            body.append(f'<g class="runtime-key" data-key="{key.name}" data-functionality="{f.name}" '
                        f'data-backend="{c.name}"><title>{key.name} = {f.name} + {c.name} = '
                        f'{key_bits(key):#x}</title><rect x="{x:g}" y="{row_y:g}" width="{column - 2:g}" '
                        f'height="15" fill="{fill}" stroke="#e2e8f0"/>'
                        + _svg_text(x + 4, row_y + 11, key.name, 9) + "</g>")
    y += len(backends) * 16 + 10
    width = max(left * 2 + _STRIP_WIDTH, left * 2 + head + len(functionalities) * column)

    # 3. alias keys and the runtime keys they expand to
    y += 26
    body.append(_svg_text(left, y, "Alias keys: registration only, each expands to the runtime keys it covers",
                          13, extra=' font-weight="bold"'))
    y += 8
    aliases = [k for k in DispatchKey if is_alias_key(k) and alias_expansion(k) != frozenset({k})]
    per_row = 3
    block_width = (width - left * 2) / per_row
    cell_x, cell_y = 13, 9
    block_height = 40 + 12 + len(backends) * cell_y + 8
    for n, alias in enumerate(aliases):
        covered = alias_expansion(alias)
        bx = left + (n % per_row) * block_width
        by = y + (n // per_row) * block_height
        parts = [_svg_text(bx, by + 16, alias.name, 10.5, extra=' font-weight="bold"'),
                 _svg_text(bx, by + 30, f"-> {len(covered)} runtime keys", 9.5, fill=_MUTED)]
        grid_left, grid_top = bx + 48, by + 48
        for i, f in enumerate(functionalities):
            parts.append(_svg_text(grid_left + i * cell_x + 6, grid_top - 3, _initials(f.name), 7, "middle", _MUTED))
        for r, c in enumerate(backends):
            parts.append(_svg_text(bx + 44, grid_top + r * cell_y + 7, c.name[:-3], 7, "end", _MUTED))
            for i, f in enumerate(functionalities):
                key = runtime_key(f, c)
                state = "covered" if key in covered else "not-covered"
                parts.append(f'<rect class="{state}" data-key="{key.name}" x="{grid_left + i * cell_x:g}" '
                             f'y="{grid_top + r * cell_y:g}" width="{cell_x - 1}" height="{cell_y - 1}" '
                             f'fill="{_ON if key in covered else _OFF}" stroke="#cbd5e0"><title>{key.name}: '
                             f'{"covered" if key in covered else "not covered"}</title></rect>')
        others = sorted((k for k in covered if int(k) < END_OF_FUNCTIONALITY), key=lambda k: k.name)
        list_x = grid_left + len(functionalities) * cell_x + 10
        if others:
            parts.append(_svg_text(list_x, grid_top + 7, "and:", 9, fill=_MUTED))
        parts += [_svg_text(list_x, grid_top + 20 + i * 12, k.name, 9, extra=f' class="covered" data-key="{k.name}"')
                  for i, k in enumerate(others)]
        body.append(f'<g class="alias" data-alias="{alias.name}">{"".join(parts)}</g>')
    rows = (len(aliases) + per_row - 1) // per_row
    y += rows * block_height
    body.append(_svg_text(left, y + 4, "columns: " + ", ".join(f"{_initials(f.name)} = {f.name}"
                                                                for f in functionalities), 9, fill=_MUTED))
    return _svg_document("keyset-layout", width, y + 16, "the 64-bit dispatch key set layout", "".join(body))


def trace_svg(trace: Any) -> str:
    """A recorded trace as an SVG sequence diagram (``trace_render.render_svg``, Mermaid's layout).

    Example:
        >>> import dispatchcore as dc
        >>> with dc.trace() as t:
        ...     _ = dc.ones(2) * 2
        >>> picture = trace_svg(t)
        >>> picture.startswith("<svg") and 'data-key="AutogradCPU"' in picture
        True
    """
    return render_svg(trace)


def pretty(obj: Any, printer: Any, cycle: bool) -> None:
    """IPython's ``_repr_pretty_``: the object's text form (``str``), or its ``repr`` in a cycle."""
    printer.text(repr(obj) if cycle else str(obj))


# the low layers' rich displays (dispatchcore/display.py): key sets, operators' tables, traces
for _name, _renderer in (("keyset_html", keyset_html), ("keyset_svg", keyset_svg), ("table_html", table_html),
                         ("trace_html", trace_html), ("trace_svg", trace_svg)):
    register_renderer(_name, _renderer)
