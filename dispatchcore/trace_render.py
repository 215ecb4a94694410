"""Renderers for a recorded dispatch trace: indented text, versioned JSON, Mermaid, SVG and HTML.

Every renderer walks the same *timeline*: root hops and the events that happened between them,
and, inside a hop, its nested hops and its own events in the order they happened (see
``_timeline``). Output is deterministic: no object ids or addresses, kernel locations relative to
the directory that holds the ``dispatchcore`` package, tensors and autograd nodes numbered by
first appearance (``tensor #0``, ``node #0``).

Key sets are printed losslessly (``key_names``): a per-backend functionality with backend bits
names its runtime keys (``AutogradCPU``), as ``DispatchKeySet``'s repr does; one without any
backend bit, which c10's iterator would silently skip, is named by its functionality
(``AutogradFunctionality``: how the exclude set of ``AutoDispatchBelowAutograd`` looks); backend
bits with no per-backend functionality are named by component (``CPUBit``).

The JSON layout is documented in ``docs/trace-json-schema.md`` (schema ``dispatchcore.trace/1``).
"""

from __future__ import annotations

import html
import json
import os
import textwrap
from collections.abc import Iterable
from typing import Any

from .keys import (
    END_OF_FUNCTIONALITY,
    NUM_BACKENDS,
    BackendComponent,
    DispatchKey,
    is_per_backend_functionality,
    runtime_key,
    to_backend_component,
    to_functionality_key,
)
from .keyset import BACKEND_MASK, key_bits

__all__ = [
    "SCHEMA",
    "NUM_BITS",
    "bit_name",
    "key_names",
    "format_keyset",
    "render_text",
    "render_json",
    "render_mermaid",
    "render_svg",
    "render_html",
]

SCHEMA = "dispatchcore.trace/1"
NUM_BITS = NUM_BACKENDS + END_OF_FUNCTIONALITY - 1  # 62: bits 0..15 backends, 16..61 functionalities

# Kernel locations print relative to the directory holding the package (the repository root in a
# checkout, site-packages when installed), so a trace renders the same on every machine.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# --- key sets ---------------------------------------------------------------------------------------
def bit_name(bit: int) -> str:
    """The name of one raw key-set bit: ``CPUBit`` for bits 0..15, the functionality key above."""
    if not 0 <= bit < NUM_BITS:
        raise ValueError(f"key-set bit {bit} is outside 0..{NUM_BITS - 1}")
    if bit < NUM_BACKENDS:
        return BackendComponent(bit + 1).name
    return DispatchKey(bit - NUM_BACKENDS + 1).name


def key_names(bits: int) -> list[str]:
    """Names of a raw key set, lowest priority first, losslessly (see the module docstring).

    Example:
        >>> key_names(0x9400010001)
        ['CPU', 'ADInplaceOrView', 'AutogradCPU', 'AutocastCPU']
        >>> key_names(0x3800000000)   # AutoDispatchBelowAutograd's bits: no backend bit
        ['AutogradOther', 'AutogradFunctionality', 'AutogradNestedTensor']
    """
    backends = [c for c in range(1, NUM_BACKENDS + 1) if bits >> (c - 1) & 1]
    names: list[str] = []
    per_backend = False
    for f in range(1, END_OF_FUNCTIONALITY):
        if not bits >> (NUM_BACKENDS + f - 1) & 1:
            continue
        if is_per_backend_functionality(f):
            per_backend = True
            if backends:
                names.extend(runtime_key(f, c).name for c in backends)
                continue
        names.append(DispatchKey(f).name)
    if not per_backend:
        names[:0] = [BackendComponent(c).name for c in backends]
    return names


def format_keyset(bits: int) -> str:
    """``DispatchKeySet(CPU, AutogradCPU) = 0x1000010001``: the printed set and its raw value."""
    return f"DispatchKeySet({', '.join(key_names(bits))}) = {bits:#x}"


def _keyset_json(bits: int) -> dict[str, Any]:
    return {"raw": f"{bits:#x}", "keys": key_names(bits)}


def _delta(before: int, after: int) -> str:
    """``+ADInplaceOrView -AutocastCPU``: names of the bits gained and lost, or ``unchanged``."""
    gained, lost = after & ~before, before & ~after
    parts = [f"+{n}" for n in key_names(gained)] + [f"-{n}" for n in key_names(lost)]
    return " ".join(parts) if parts else "unchanged"


def _priority(name: str) -> tuple[int, int]:
    key = DispatchKey[name]
    return int(to_functionality_key(key)), int(to_backend_component(key))


def _short(text: str) -> str:
    return text.replace(_ROOT, "")


# --- the timeline -----------------------------------------------------------------------------------
def _seq(item: Any) -> int | None:
    seq = getattr(item, "seq", None)
    return seq if isinstance(seq, int) else None


def _root_of(hop: Any) -> Any:
    while hop.parent is not None:
        hop = hop.parent
    return hop


def _merge(hops: list[Any], events: list[Any], positions: list[int]) -> list[tuple[str, Any]]:
    """Hops in order with each event inserted before the hop at its position."""
    out: list[tuple[str, Any]] = []
    slots: dict[int, list[Any]] = {}
    for event, pos in zip(events, positions):
        slots.setdefault(pos, []).append(event)
    for i, hop in enumerate(hops):
        out.extend(("event", e) for e in slots.get(i, ()))
        out.append(("hop", hop))
    out.extend(("event", e) for e in slots.get(len(hops), ()))
    return out


def _timeline(trace: Any, hop: Any = None) -> list[tuple[str, Any]]:
    """The root level (``hop is None``) or one hop's content: nested hops and events, in order.

    Exact when hops and events carry a ``seq`` ordinal. Otherwise it is reconstructed from the
    global event order: an event comes after every hop one of whose (nested) events precedes it;
    inside a hop, version bumps and nodes (recorded when the kernel returned) and guard exits come
    after the nested hops, guard entries before them unless the event order says otherwise.
    """
    hops = list(trace.roots if hop is None else hop.children)
    own = [e for e in trace.events if e.hop is hop] if hop is None else list(hop.events)
    if not own:
        return [("hop", h) for h in hops]
    seqs = [_seq(x) for x in [*hops, *own]]
    if all(s is not None for s in seqs):
        items = [("hop", h) for h in hops] + [("event", e) for e in own]
        return sorted(items, key=lambda item: _seq(item[1]) or 0)
    index = {id(h): i for i, h in enumerate(hops)}
    own_ids = {id(e) for e in own}
    positions: list[int] = []
    anchor = 0
    for event in trace.events:
        if id(event) in own_ids:
            late = hop is not None and event.kind != "guard_enter"
            positions.append(len(hops) if late else anchor)
        elif event.hop is not None:
            h = event.hop
            while h is not None and id(h) not in index:
                h = h.parent
            if h is not None:
                anchor = max(anchor, index[id(h)] + 1)
    return _merge(hops, own, positions)


class _Labels:
    """Stable per-render numbering of tensors and autograd nodes (no ids in the output)."""

    def __init__(self) -> None:
        self.tensors: dict[int, int] = {}
        self.nodes: dict[int, int] = {}
        self._keep: list[Any] = []  # keep the objects alive so their ids stay unique

    def tensor(self, obj: Any) -> int | None:
        return None if obj is None else self._number(self.tensors, obj)

    def node(self, obj: Any) -> int | None:
        return None if obj is None else self._number(self.nodes, obj)

    def _number(self, table: dict[int, int], obj: Any) -> int:
        if id(obj) not in table:
            table[id(obj)] = len(table)
            self._keep.append(obj)
        return table[id(obj)]


def _labels(trace: Any) -> _Labels:
    labels = _Labels()
    for event in trace.events:
        labels.tensor(event.data.get("tensor"))
        labels.node(event.data.get("node"))
    return labels


def _hop_index(trace: Any) -> dict[int, int]:
    return {id(h): i for i, h in enumerate(trace.hops())}


def _unmasked(hop: Any) -> int:
    """What the arguments and TLS include contribute after the TLS exclude (backend bits survive)."""
    bits = hop.included
    for _, b in hop.arg_keys:
        bits |= b
    return bits & ~(hop.excluded & ~BACKEND_MASK)


def _event_text(event: Any, labels: _Labels) -> str:
    data = event.data
    kind = event.kind
    if kind in ("guard_enter", "guard_exit"):
        verb = "entered" if kind == "guard_enter" else "left"
        guard = data.get("guard", event.detail)
        if "excluded_before" in data:
            change = f"exclude {_delta(data['excluded_before'], data['excluded_after'])}"
            if data.get("included_before") != data.get("included_after"):
                change += f", include {_delta(data['included_before'], data['included_after'])}"
        else:
            change = "TLS change not recorded"
        return f"guard {verb}: {guard} ({change})"
    if kind == "version_bump":
        text = f"version bump: {event.detail}"
        number = labels.tensor(data.get("tensor"))
        return text + (f" (tensor #{number})" if number is not None else "")
    if kind == "node_created":
        node = data.get("node")
        name = type(node).__name__ if node is not None else event.detail
        number = labels.node(node)
        return f"autograd node created: {name}" + (f" (node #{number})" if number is not None else "")
    return f"{kind}: {event.detail}"


# --- text ---------------------------------------------------------------------------------------------
def render_text(trace: Any) -> str:
    """Indented text: PyTorch's ``[call] op=[...], key=[...]`` line per hop, with detail lines.

    Hop lines are indented one space per nesting level exactly as ``TORCH_SHOW_DISPATCH_TRACE``
    prints them (keeping only the lines whose first non-blank is ``[`` recovers PyTorch's trace,
    plus the ``[backward]`` lines of the autograd engine's frames, which PyTorch's lacks); detail
    lines and events are indented four spaces further than their hop.
    """
    labels = _labels(trace)
    lines: list[str] = []

    def detail(depth: int, text: str) -> None:
        lines.append(" " * (depth + 5) + text)

    def emit(items: list[tuple[str, Any]], depth: int) -> None:
        for kind, item in items:
            if kind == "event":
                indent = " " * (depth + 4 if depth else 1)  # a hop's detail column; root level: 1
                lines.append(indent + "* " + _event_text(item, labels))
            else:
                emit_hop(item)

    def emit_hop(hop: Any) -> None:
        d = hop.depth
        if hop.kind == "backward":  # a frame of the autograd engine: no dispatch, no details
            lines.append(" " * (d + 1) + f"[backward] {hop.op}")
            emit(_timeline(trace, hop), d + 1)
            return
        lines.append(" " * (d + 1) + f"[{hop.kind}] op=[{hop.op}], key=[{hop.key.name}]")
        if hop.arg_keys:
            for name, bits in hop.arg_keys:
                detail(d, f"arg {name}: {format_keyset(bits)}")
        else:
            detail(d, "args: no tensor arguments")
        included, excluded = f"included: {format_keyset(hop.included)}", f"excluded: {format_keyset(hop.excluded)}"
        if hop.parent is not None:
            if hop.parent.included != hop.included:
                included += f" (vs caller: {_delta(hop.parent.included, hop.included)})"
            if hop.parent.excluded != hop.excluded:
                excluded += f" (vs caller: {_delta(hop.parent.excluded, hop.excluded)})"
        detail(d, "tls " + included)
        detail(d, "tls " + excluded)
        detail(d, f"effective: {format_keyset(hop.keyset)}")
        detail(d, f"kernel: {hop.label}, {_short(hop.kernel)}")
        detail(d, f"reason: {hop.reason}")
        if hop.kind == "call" and hop.skipped:
            detail(d, f"fallthrough skipped: {', '.join(key_names(hop.skipped))}")
        emit(_timeline(trace, hop), d + 1)

    emit(_timeline(trace), 0)
    return "\n".join(lines) + ("\n" if lines else "")


# --- JSON ---------------------------------------------------------------------------------------------
def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return type(value).__name__  # never a repr: it could carry an address


def _event_json(event: Any, index: int, hops: dict[int, int], labels: _Labels) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, value in event.data.items():
        if name == "tensor":
            data["tensor"] = labels.tensor(value)
        elif name == "node":
            data["node"] = type(value).__name__
            data["node_index"] = labels.node(value)
        elif name.startswith(("included_", "excluded_")) and isinstance(value, int):
            data[name] = _keyset_json(value)
        else:
            data[name] = _jsonable(value)
    hop = event.hop
    out = {
        "index": index,
        "kind": event.kind,
        "detail": _short(event.detail),
        "hop": hops.get(id(hop)) if hop is not None else None,
        "op": hop.op if hop is not None else None,
        "data": data,
    }
    if _seq(event) is not None:
        out["seq"] = _seq(event)
    return out


def render_json(trace: Any) -> dict[str, Any]:
    """The trace as JSON-ready data, schema ``dispatchcore.trace/1`` (docs/trace-json-schema.md)."""
    labels = _labels(trace)
    hops = _hop_index(trace)
    event_index = {id(e): i for i, e in enumerate(trace.events)}

    def hop_json(hop: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": hops[id(hop)],
            "kind": hop.kind,
            "op": hop.op,
            "key": None if hop.kind == "backward" else hop.key.name,  # a frame dispatches nowhere
            "depth": hop.depth,
            "parent": hops[id(hop.parent)] if hop.parent is not None else None,
            "label": hop.label,
            "kernel": _short(hop.kernel),
            "reason": hop.reason,
            "args": [{"name": name, "keyset": _keyset_json(bits)} for name, bits in hop.arg_keys],
            "included": _keyset_json(hop.included),
            "excluded": _keyset_json(hop.excluded),
            "effective": _keyset_json(hop.keyset),
            "skipped": _keyset_json(hop.skipped),
            "events": [event_index[id(e)] for e in hop.events if id(e) in event_index],
            "children": [hop_json(c) for c in hop.children],
        }
        if _seq(hop) is not None:
            out["seq"] = _seq(hop)
        return out

    return {
        "schema": SCHEMA,
        "layout": {"bits": NUM_BITS, "backend_bits": NUM_BACKENDS, "functionality_offset": NUM_BACKENDS - 1},
        "hop_count": len(hops),
        "hops": [hop_json(root) for root in trace.roots],
        "events": [_event_json(e, i, hops, labels) for i, e in enumerate(trace.events)],
    }


# --- Mermaid ------------------------------------------------------------------------------------------
_MERMAID_ESCAPES = {ord(c): f"#{ord(c)};" for c in "#;<>"}


def _mermaid_text(text: str) -> str:
    """Text safe after ``:`` in a Mermaid message or note (entity codes for the syntax characters)."""
    return " ".join(text.translate(_MERMAID_ESCAPES).split())


def _event_note(event: Any, labels: _Labels) -> str | None:
    """The note an event gets in the diagram, or None (guards that changed nothing inside a hop)."""
    if event.kind == "version_bump":
        d = event.data
        if {"argument", "before", "after"} <= d.keys():
            return (f"version bump: {event.hop.op if event.hop else ''} bumped {d['argument']}'s version "
                    f"{d['before']} → {d['after']}")
        return f"version bump: {event.detail}"
    if event.kind in ("guard_enter", "guard_exit"):
        d = event.data
        changed = d.get("excluded_before") != d.get("excluded_after") or d.get("included_before") != d.get(
            "included_after")
        if event.hop is not None and not changed:
            return None
        return _event_text(event, labels)
    return _event_text(event, labels)


def render_mermaid(trace: Any) -> str:
    """A ``sequenceDiagram``: one participant per dispatch key, highest priority first.

    A call is a solid arrow (``->>``) from the caller (user code, or the kernel that made the
    call), a redispatch a dotted one (``-->>``) from the redispatching kernel's key; each hop is
    activated while its kernel runs. Version bumps, autograd nodes and guards that changed the TLS
    (or were entered by user code) are notes over the key of the hop they happened in.
    """
    labels = _labels(trace)
    names = sorted({h.key.name for h in trace.hops() if h.kind != "backward"}, key=_priority, reverse=True)
    lines = ["sequenceDiagram", "    participant caller as user code"]
    lines += [f"    participant {name}" for name in names]

    def emit(items: list[tuple[str, Any]], source: str) -> None:
        for kind, item in items:
            if kind == "event":
                note = _event_note(item, labels)
                if note is not None:
                    lines.append(f"    Note over {source}: {_mermaid_text(note)}")
                continue
            hop = item
            if hop.kind == "backward":  # a frame: a note, then its calls from the same caller
                lines.append(f"    Note over {source}: {_mermaid_text(f'[backward] {hop.op}')}")
                emit(_timeline(trace, hop), source)
                continue
            arrow = "->>" if hop.kind == "call" else "-->>"
            target = hop.key.name
            lines.append(f"    {source}{arrow}{target}: {_mermaid_text(f'[{hop.kind}] {hop.op}')}")
            lines.append(f"    activate {target}")
            emit(_timeline(trace, hop), target)
            lines.append(f"    deactivate {target}")

    emit(_timeline(trace), "caller")
    return "\n".join(lines) + "\n"


# --- HTML ---------------------------------------------------------------------------------------------
_CSS = """
:root { --on: #2b6cb0; --inc: #2f855a; --exc: #c53030; --skip: #dd6b20; --ink: #1a202c; --muted: #718096; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 1.2em 2em; }
h1 { font-size: 1.35em; margin: 0 0 .2em; }
code, .mono, summary, .raw, .names { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
header p { margin: .2em 0; color: var(--muted); }
.controls button { font: inherit; margin-right: .4em; }
.legend { display: flex; flex-wrap: wrap; gap: 1.2em; margin: .6em 0 1em; color: var(--muted); }
.legend .bit { vertical-align: middle; }
ol.hops { list-style: none; margin: 0; padding-left: 1.4em; border-left: 1px dotted #cbd5e0; }
#hop-tree { padding-left: 0; border-left: 0; }
li.hop { margin: .25em 0; }
summary { cursor: pointer; white-space: nowrap; }
summary .kind { font-weight: bold; }
li.hop.redispatch > details > summary .kind { color: var(--muted); }
summary .key { color: var(--on); font-weight: bold; }
summary .why { color: var(--muted); font-family: system-ui, sans-serif; font-size: .9em; margin-left: .8em; }
.detail { margin: .3em 0 .5em 1.2em; }
table.strips { border-collapse: collapse; }
table.strips th { text-align: right; font-weight: normal; color: var(--muted); padding: 1px .6em 1px 0;
                  white-space: nowrap; }
table.strips td { padding: 1px .5em 1px 0; white-space: nowrap; }
.strip { display: inline-flex; align-items: center; }
.bit { display: inline-block; width: 9px; height: 14px; margin-right: 1px; border: 1px solid #cbd5e0;
       background: #fff; border-radius: 1px; }
.bit.nibble { margin-left: 3px; }
.sep { display: inline-block; width: 2px; height: 18px; margin: 0 6px 0 5px; background: var(--ink); }
.bit.on { background: var(--on); border-color: var(--on); }
tr[data-set="included"] .bit.on { background: var(--inc); border-color: var(--inc); }
tr[data-set="excluded"] .bit.on { background: var(--exc); border-color: var(--exc); }
.bit.masked { border-color: var(--exc);
              background: repeating-linear-gradient(135deg, var(--exc) 0 2px, #fff 2px 4px); }
.bit.skipped { border-color: var(--skip); background: #fbd38d; }
.bit.chosen { outline: 2px solid #000; outline-offset: 0; }
.bit.hover { box-shadow: 0 0 0 2px #ecc94b; }
.raw { color: var(--muted); }
.names { font-size: .9em; max-width: 34em; overflow: hidden; text-overflow: ellipsis; }
.kernel { margin: .3em 0; }
.kernel .label { font-weight: bold; }
ul.events { list-style: none; padding-left: 0; margin: .2em 0; }
li.event { margin: .15em 0; padding: .1em .5em; border-left: 3px solid var(--muted); background: #f7fafc; }
li.event.version_bump { border-color: var(--exc); background: #fff5f5; }
li.event.node_created { border-color: var(--inc); background: #f0fff4; }
li.event.guard_enter, li.event.guard_exit { border-color: #805ad5; background: #faf5ff; }
li.event.linked, li.hop.linked > details > summary { background: #fefcbf; }
#hop-tree > li.event { margin-left: 0; }
a.hop-link { color: inherit; }
.flash > details > summary { animation: flash 1.2s; }
@keyframes flash { from { background: #f6e05e; } to { background: transparent; } }
pre.source { background: #f7fafc; padding: .6em; overflow: auto; font-size: .85em; }
"""

_JS = """
(function () {
  "use strict";
  var doc = document;
  function all(sel, root) { return Array.prototype.slice.call((root || doc).querySelectorAll(sel)); }
  function setAll(open) { all("li.hop > details").forEach(function (d) { d.open = open; }); }
  doc.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
  doc.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });
  // hovering a bit marks that bit in every strip of the hop, to compare args / TLS / effective
  all("table.strips").forEach(function (table) {
    table.addEventListener("mouseover", function (ev) {
      var bit = ev.target.getAttribute && ev.target.getAttribute("data-bit");
      all(".bit.hover", table).forEach(function (b) { b.classList.remove("hover"); });
      if (bit !== null) {
        all('.bit[data-bit="' + bit + '"]', table).forEach(function (b) { b.classList.add("hover"); });
      }
    });
  });
  // linked views: a tensor or node label lights up everything that mentions it
  function link(attr) {
    all("[" + attr + "]").forEach(function (el) {
      var sel = "[" + attr + '="' + el.getAttribute(attr) + '"]';
      function mark(on) { all(sel).forEach(function (o) { o.classList.toggle("linked", on); }); }
      el.addEventListener("mouseenter", function () { mark(true); });
      el.addEventListener("mouseleave", function () { mark(false); });
    });
  }
  link("data-tensor"); link("data-node");
  // following a link to a hop opens its ancestors and flashes it
  all("a.hop-link").forEach(function (a) {
    a.addEventListener("click", function () {
      var target = doc.getElementById(a.getAttribute("href").slice(1));
      for (var el = target; el; el = el.parentElement) { if (el.tagName === "DETAILS") { el.open = true; } }
      if (target) { target.classList.remove("flash"); void target.offsetWidth; target.classList.add("flash"); }
    });
  });
  doc.documentElement.setAttribute("data-js", "ready");
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _bit_title(bit: int, bits: int, state: str) -> str:
    name = bit_name(bit)
    if bit >= NUM_BACKENDS and is_per_backend_functionality(bit - NUM_BACKENDS + 1) and bits & BACKEND_MASK:
        f = bit - NUM_BACKENDS + 1
        concrete = [runtime_key(f, c).name for c in range(1, NUM_BACKENDS + 1) if bits >> (c - 1) & 1]
        name += f" ({', '.join(concrete)})"
    return f"bit {bit}: {name} [{state}]"


_STATE_WORDS = {"on": "set", "off": "not set", "masked": "masked by the TLS exclude set",
                "skipped": "dropped: fallthrough or below the redispatch mask"}


def _strip(bits: int, states: dict[int, str], chosen: int = 0) -> str:
    """62 bit cells, bit 61 (highest priority) first; a bar separates functionality from backend bits."""
    cells = []
    for bit in range(NUM_BITS - 1, -1, -1):
        state = states.get(bit, "on" if bits >> bit & 1 else "off")
        classes = ["bit", state]
        if chosen >> bit & 1:
            classes.append("chosen")
        if bit % 4 == 3 and bit not in (NUM_BITS - 1, NUM_BACKENDS - 1):
            classes.append("nibble")
        title = _bit_title(bit, bits, _STATE_WORDS[state] + (", the chosen key" if chosen >> bit & 1 else ""))
        cells.append(f'<span class="{" ".join(classes)}" data-bit="{bit}" title="{_e(title)}"></span>')
        if bit == NUM_BACKENDS:
            cells.append('<span class="sep" title="functionality bits | backend bits"></span>')
    return f'<span class="strip" data-raw="{bits:#x}">{"".join(cells)}</span>'


def _strip_row(label: str, kind: str, bits: int, states: dict[int, str], chosen: int = 0,
               extra: str = "") -> str:
    names = ", ".join(key_names(bits)) or "(empty)"
    return (f'<tr class="set" data-set="{kind}"{extra} data-raw="{bits:#x}"><th>{_e(label)}</th>'
            f"<td>{_strip(bits, states, chosen)}</td><td class=\"raw\">{bits:#x}</td>"
            f'<td class="names" title="{_e(names)}">{_e(names)}</td></tr>')


def _masked_states(bits: int, excluded: int) -> dict[int, str]:
    masked = bits & excluded & ~BACKEND_MASK
    return {b: "masked" for b in range(NUM_BITS) if masked >> b & 1}


def _hop_strips(hop: Any) -> str:
    rows = []
    for name, bits in hop.arg_keys:
        rows.append(_strip_row(f"arg {name}", "arg", bits, _masked_states(bits, hop.excluded),
                               extra=f' data-arg="{_e(name)}"'))
    rows.append(_strip_row("included", "included", hop.included, _masked_states(hop.included, hop.excluded)))
    rows.append(_strip_row("excluded", "excluded", hop.excluded, {}))
    states: dict[int, str] = {}
    contributed = hop.included
    for _, b in hop.arg_keys:
        contributed |= b
    for bit in range(NUM_BITS):
        if hop.keyset >> bit & 1 or not contributed >> bit & 1:
            continue
        states[bit] = "masked" if (hop.excluded & ~BACKEND_MASK) >> bit & 1 else "skipped"
    rows.append(_strip_row("effective", "effective", hop.keyset, states, chosen=key_bits(hop.key) & hop.keyset))
    return f'<table class="strips">{"".join(rows)}</table>'


def _event_html(event: Any, index: int, hops: dict[int, int], labels: _Labels) -> str:
    attrs = [f'id="event-{index}"', f'class="event {_e(event.kind)}"', f'data-event="{index}"',
             f'data-kind="{_e(event.kind)}"']
    hop = event.hop
    link = ""
    if hop is not None:
        attrs.append(f'data-hop="{hops[id(hop)]}"')
        link = (f' <a class="hop-link" href="#hop-{hops[id(hop)]}">at hop {hops[id(hop)]}: '
                f"{_e(hop.op)} @ {_e(hop.key.name)}</a>")
    tensor = labels.tensor(event.data.get("tensor"))
    node = labels.node(event.data.get("node"))
    if tensor is not None:
        attrs.append(f'data-tensor="{tensor}"')
    if node is not None:
        attrs.append(f'data-node="{node}"')
    return f'<li {" ".join(attrs)}>{_e(_event_text(event, labels))}{link}</li>'


def render_html(trace: Any) -> str:
    """One self-contained page (inline CSS and JS, nothing fetched): the collapsible hop tree.

    Per hop (``li.hop`` with ``id="hop-N"``, ``data-op``, ``data-key``, ``data-kind``) a table of
    62-bit strips for each argument's key set, the TLS include and exclude sets and the effective
    set (``tr[data-set]``); each cell is ``span.bit`` with class ``on``, ``off``, ``masked`` (set
    but removed by the TLS exclude set) or ``skipped`` (dropped by the fallthrough or redispatch
    mask), ``chosen`` on the chosen key's bits, and a ``title`` naming the bit. Events
    (``li.event``, ``id="event-N"``) sit where they happened and link to their hop. The JSON
    rendering is embedded as ``script#trace-json``.
    """
    labels = _labels(trace)
    hops = _hop_index(trace)
    event_index = {id(e): i for i, e in enumerate(trace.events)}

    def items_html(items: Iterable[tuple[str, Any]]) -> str:
        out = []
        for kind, item in items:
            if kind == "event":
                out.append(_event_html(item, event_index[id(item)], hops, labels))
            else:
                out.append(hop_html(item))
        return "".join(out)

    def hop_html(hop: Any) -> str:
        i = hops[id(hop)]
        parent = f' data-parent="{hops[id(hop.parent)]}"' if hop.parent is not None else ""
        if hop.kind == "backward":  # a frame of the autograd engine: a summary and its nested hops
            content = _timeline(trace, hop)
            nested = f'<ol class="hops">{items_html(content)}</ol>' if content else ""
            return (f'<li class="hop backward" id="hop-{i}" data-index="{i}" data-kind="backward" '
                    f'data-op="{_e(hop.op)}" data-depth="{hop.depth}"{parent}><details open><summary>'
                    f'<span class="kind">[backward]</span> <span class="op">{_e(hop.op)}</span>'
                    f'<span class="why">{_e(hop.reason)}</span></summary>{nested}</details></li>')
        skipped = ""
        if hop.kind == "call" and hop.skipped:
            skipped = (f'<div class="fallthrough">fallthrough skipped: <span class="mono">'
                       f'{_e(", ".join(key_names(hop.skipped)))}</span></div>')
        content = _timeline(trace, hop)
        nested = f'<ol class="hops">{items_html(content)}</ol>' if content else ""
        return (
            f'<li class="hop {_e(hop.kind)}" id="hop-{i}" data-index="{i}" data-kind="{_e(hop.kind)}" '
            f'data-op="{_e(hop.op)}" data-key="{_e(hop.key.name)}" data-depth="{hop.depth}"{parent} '
            f'data-label="{_e(hop.label)}"><details open><summary>'
            f'<span class="kind">[{_e(hop.kind)}]</span> op=[<span class="op">{_e(hop.op)}</span>], '
            f'key=[<span class="key">{_e(hop.key.name)}</span>]'
            f'<span class="why">{_e(hop.reason)}</span></summary>'
            f'<div class="detail">{_hop_strips(hop)}'
            f'<div class="kernel"><span class="label">{_e(hop.label)}</span>, '
            f'<span class="mono">{_e(_short(hop.kernel))}</span></div>{skipped}</div>'
            f"{nested}</details></li>"
        )

    data = json.dumps(render_json(trace), indent=1)
    data = data.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")  # inert in <script>
    legend_cells = "".join(
        f'<span><span class="bit {state}"></span> {_e(word)}</span>' for state, word in (
            ("on", "set"), ("off", "not set"), ("masked", "masked by TLS exclude"),
            ("skipped", "dropped (fallthrough / redispatch mask)"), ("on chosen", "chosen key")))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>dispatchcore dispatch trace</title>"
        f"<style>{_CSS}</style></head><body>"
        '<header><h1>dispatchcore dispatch trace</h1>'
        f'<p id="summary" data-hops="{len(hops)}" data-events="{len(trace.events)}">'
        f"{len(hops)} hops, {len(trace.events)} events. Strips show the 62 key-set bits, highest "
        "priority first: functionality bits 61..16 | backend bits 15..0; hover a bit for its key.</p>"
        '<p class="controls"><button type="button" id="expand-all">expand all</button>'
        '<button type="button" id="collapse-all">collapse all</button></p>'
        f'<div class="legend">{legend_cells}</div></header>'
        f'<main><ol class="hops" id="hop-tree">{items_html(_timeline(trace))}</ol>'
        '<details class="mermaid"><summary>Mermaid source</summary>'
        f'<pre class="source">{_e(render_mermaid(trace))}</pre></details></main>'
        f'<script type="application/json" id="trace-json">{data}</script>'
        f"<script>{_JS}</script></body></html>\n"
    )


# --- SVG ----------------------------------------------------------------------------------------------
# Every SVG picture is plain XML with presentation attributes: no <style>, no <script>, no ids, so
# that inline in a page it can neither restyle the page nor collide with another picture. Text is
# monospace, so its drawn width is known without a font: len(text) * size * _CHAR_WIDTH.
SVG_FONT = "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace"
_CHAR_WIDTH = 0.6
_INK, _MUTED, _ON = "#1a202c", "#718096", "#2b6cb0"
# the fill and stroke of a note per event kind, the HTML page's colours
_NOTE_COLOURS = {"guard_enter": ("#faf5ff", "#805ad5"), "guard_exit": ("#faf5ff", "#805ad5"),
                 "node_created": ("#f0fff4", "#2f855a"), "version_bump": ("#fff5f5", "#c53030")}


def _text_width(text: str, size: float) -> float:
    return len(text) * size * _CHAR_WIDTH


def _svg_text(x: float, y: float, text: str, size: float = 11, anchor: str = "start", fill: str = _INK,
              extra: str = "") -> str:
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size:g}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f"{_e(text)}</text>")


def _svg_document(kind: str, width: float, height: float, title: str, body: str) -> str:
    """An ``<svg>`` root: white background, a ``<title>``, scaled down (never up) to its container."""
    w, h = int(width + 0.5), int(height + 0.5)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="dc-svg dc-{kind}" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" role="img" font-family="{SVG_FONT}" style="max-width: 100%; height: auto">'
            f'<title>{_e(title)}</title><rect class="background" width="{w}" height="{h}" fill="#ffffff"/>'
            f"{body}</svg>")


def _arrowhead(x: float, y: float, pointing_right: bool, colour: str) -> str:
    back = x - 8 if pointing_right else x + 8
    return f'<polygon points="{x:g},{y:g} {back:g},{y - 4:g} {back:g},{y + 4:g}" fill="{colour}"/>'


def render_svg(trace: Any) -> str:
    """A sequence diagram in SVG, drawn from the same walk as ``render_mermaid``.

    Lifelines are user code and the dispatch keys visited, highest priority first. A call is a
    solid arrow from its caller (user code, or the key of the kernel that made it), a redispatch a
    dashed one from the redispatching kernel's key; an activation bar marks each kernel while it
    runs. Guards that changed the TLS (or were entered by user code), autograd nodes and version
    bumps are notes over the key of the hop they happened in; ``[backward]`` frames of the
    autograd engine are boxes around the hops they ran. Elements carry ``class`` and ``data-*``
    attributes (``g.message[data-hop][data-op][data-from][data-to]``, ``g.participant[data-key]``,
    ``g.note[data-over]``, ``g.frame[data-op]``) for tests and styling.

    Example:
        >>> import dispatchcore as dc
        >>> with dc.trace() as t:
        ...     _ = dc.ones(2, requires_grad=True) * 2
        >>> picture = render_svg(t)
        >>> 'data-to="AutogradCPU"' in picture and 'class="message redispatch"' in picture
        True
    """
    labels = _labels(trace)
    hop_numbers = _hop_index(trace)
    names = sorted({h.key.name for h in trace.hops() if h.kind != "backward"}, key=_priority, reverse=True)
    lanes = ["caller", *names]
    titles = {"caller": "user code", **{name: name for name in names}}

    # 1. the steps, in render_mermaid's order
    steps: list[tuple[str, Any, Any]] = []

    def emit(items: list[tuple[str, Any]], source: str) -> None:
        for kind, item in items:
            if kind == "event":
                note = _event_note(item, labels)
                if note is not None:
                    steps.append(("note", source, item))
                continue
            if item.kind == "backward":  # a frame: a box around its calls, made from the same caller
                steps.append(("frame", source, item))
                emit(_timeline(trace, item), source)
                steps.append(("end frame", source, item))
                continue
            steps.append(("message", source, item))
            emit(_timeline(trace, item), item.key.name)
            steps.append(("return", item.key.name, item))

    emit(_timeline(trace), "caller")

    # 2. the lane spacing: every title fits, and every message label fits between its lanes
    column = lanes.index
    spacing = max(130.0, *(_text_width(t, 12) + 24 for t in titles.values()))
    for kind, source, hop in steps:
        if kind == "message" and source != hop.key.name:
            needed = _text_width(f"[{hop.kind}] {hop.op}", 11) + 24
            spacing = max(spacing, needed / abs(column(source) - column(hop.key.name)))
    spacing = min(spacing, 320.0)
    x_of = {lane: 12 + spacing / 2 + i * spacing for i, lane in enumerate(lanes)}

    # 3. lay the steps out top to bottom
    header = 30
    y = 12 + header + 18
    right = 12 + len(lanes) * spacing
    active: dict[str, list[float]] = {lane: [] for lane in lanes}  # start y of each open activation
    bars: list[str] = []
    front: list[str] = []
    frames: list[tuple[Any, float, float, int]] = []
    open_frames: list[tuple[Any, float]] = []

    def bar_edge(lane: str, towards_right: bool) -> float:
        """Where an arrow meets a lane: the edge of its innermost activation bar, or the lifeline."""
        level = len(active[lane])
        if level == 0:
            return x_of[lane]
        centre = x_of[lane] + (level - 1) * 5
        return centre + 5 if towards_right else centre - 5

    for kind, source, item in steps:
        if kind == "message":
            hop, target = item, item.key.name
            dashed = ' stroke-dasharray="6 4"' if hop.kind == "redispatch" else ""
            text = f"[{hop.kind}] {hop.op}"
            attrs = (f'class="message {_e(hop.kind)}" data-hop="{hop_numbers[id(hop)]}" data-op="{_e(hop.op)}" '
                     f'data-from="{_e(source)}" data-to="{_e(target)}" data-label="{_e(hop.label)}"')
            tip = f"<title>{_e(f'{text} at {target}: {hop.label} ({hop.reason})')}</title>"
            if source != target:
                y += 16
                rightwards = x_of[target] > x_of[source]
                x1 = bar_edge(source, rightwards)
                x2 = x_of[target] - 5 * (1 if rightwards else -1) + len(active[target]) * 5 * (0 if rightwards else 1)
                middle = (x_of[source] + x_of[target]) / 2
                front.append(f"<g {attrs}>{tip}"
                             + _svg_text(middle, y - 6, text, 11, "middle")
                             + f'<line x1="{x1:g}" y1="{y:g}" x2="{x2:g}" y2="{y:g}" stroke="{_INK}" '
                               f'stroke-width="1.3"{dashed}/>'
                             + _arrowhead(x2, y, rightwards, _INK) + "</g>")
                active[target].append(y)
                y += 10
            else:  # a kernel calling into its own key: a loop to the right of the lane
                y += 16
                x1 = bar_edge(source, True)
                x2 = x1 + 5
                loop = x1 + 30
                right = max(right, loop + 8 + _text_width(text, 11) + 12)
                front.append(f"<g {attrs}>{tip}"
                             + _svg_text(loop + 8, y + 12, text, 11)
                             + f'<polyline points="{x1:g},{y:g} {loop:g},{y:g} {loop:g},{y + 18:g} {x2:g},{y + 18:g}" '
                               f'fill="none" stroke="{_INK}" stroke-width="1.3"{dashed}/>'
                             + _arrowhead(x2, y + 18, False, _INK) + "</g>")
                active[target].append(y + 18)
                y += 28
        elif kind == "return":
            start = active[source].pop()
            level = len(active[source])
            y += 6
            bars.append(f'<rect class="activation" data-key="{_e(source)}" x="{x_of[source] + level * 5 - 5:g}" '
                        f'y="{start:g}" width="10" height="{y - start:g}" fill="#ebf8ff" stroke="{_ON}"/>')
            y += 6
        elif kind == "note":
            event = item
            text = _event_note(event, labels) or ""
            fill, stroke = _NOTE_COLOURS.get(event.kind, ("#f7fafc", _MUTED))
            lines = textwrap.wrap(text, 76, break_on_hyphens=False) or [""]
            width = max(_text_width(line, 10.5) for line in lines) + 14
            height = len(lines) * 14 + 8
            x = x_of[source] - 12
            y += 6
            right = max(right, x + width + 12)
            body = "".join(_svg_text(x + 7, y + 15 + i * 14, line, 10.5) for i, line in enumerate(lines))
            front.append(f'<g class="note {_e(event.kind)}" data-over="{_e(source)}"><rect x="{x:g}" y="{y:g}" '
                         f'width="{width:g}" height="{height:g}" rx="2" fill="{fill}" stroke="{stroke}"/>{body}</g>')
            y += height + 6
        elif kind == "frame":
            y += 8
            open_frames.append((item, y))
            y += 26
        else:  # the end of a frame
            hop, start = open_frames.pop()
            y += 8
            frames.append((hop, start, y, len(open_frames)))
            y += 8

    height = y + 24
    width = right + 4
    # 4. draw: frames at the back, then lifelines and headers, activation bars, messages and notes
    back: list[str] = []
    for hop, top, bottom, depth in frames:
        inset = 4 + depth * 6
        label = f"[backward] {hop.op}"
        tab = _text_width(label, 11) + 16
        back.append(f'<g class="frame backward" data-op="{_e(hop.op)}"><title>{_e(hop.reason)}</title>'
                    f'<rect x="{inset:g}" y="{top:g}" width="{width - 2 * inset:g}" height="{bottom - top:g}" '
                    f'fill="none" stroke="{_MUTED}" stroke-width="1.2"/>'
                    f'<path d="M{inset:g},{top:g} h{tab:g} v14 l-6,6 H{inset:g} Z" fill="#edf2f7" stroke="{_MUTED}"/>'
                    + _svg_text(inset + 6, top + 14, label, 11, extra=' font-weight="bold"') + "</g>")
    for lane in lanes:
        x, title = x_of[lane], titles[lane]
        box = _text_width(title, 12) + 16
        back.append(f'<line class="lifeline" x1="{x:g}" y1="{12 + header:g}" x2="{x:g}" y2="{height - 8:g}" '
                    f'stroke="#a0aec0" stroke-dasharray="3 3"/>'
                    f'<g class="participant" data-key="{_e(lane)}"><rect x="{x - box / 2:g}" y="12" width="{box:g}" '
                    f'height="{header}" rx="3" fill="#edf2f7" stroke="#4a5568"/>'
                    + _svg_text(x, 12 + header / 2 + 4, title, 12, "middle") + "</g>")
    title = f"dispatch trace: {len(hop_numbers)} hops, {len(trace.events)} events"
    return _svg_document("trace", width, height, title, "".join(back + bars + front))
