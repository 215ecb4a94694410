"""trace_render.py: the text, JSON, Mermaid and HTML renderings of recorded dispatch traces."""

from __future__ import annotations

import json
import random
import re
import types
from html.parser import HTMLParser

import pytest

import dispatchcore as dc
from dispatchcore import trace_render as tr
from dispatchcore.keys import BackendComponent, DispatchKey
from dispatchcore.keyset import AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW, BACKEND_MASK, FULL, DispatchKeySet, key_bits
from dispatchcore.tls import AutoDispatchBelowAutograd
from dispatchcore.trace import show_dispatch_trace, trace

# The recordings call the .Scalar overloads by name: ``x * 2`` itself wraps the number and calls
# mul.Tensor (a second argument line per hop), which the live-printer test below shows as well.
_mul_scalar, _add__scalar = dc.ops.aten.mul.Scalar, dc.ops.aten.add_.Scalar

CPU_TENSOR = 0x9400010001
DEFAULT_INCLUDED = 0x404000000
DEFAULT_EXCLUDED = 0x1FF8000000000
AUTOCAST = ("AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, AutocastIPU, AutocastHPU, AutocastXLA, "
            "AutocastMPS, AutocastCUDA, AutocastPrivateUse1")


# --- programs -----------------------------------------------------------------------------------------
def record_mul_add():
    """The brief's example: an autograd op, then an in-place op that bumps the version."""
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        y = _mul_scalar(x, 2)
        _add__scalar(y, 1)
    return t


def record_factory():
    with trace() as t:
        dc.zeros(2)
    return t


def record_view_under_no_grad():
    x = dc.ones(2, requires_grad=True)
    y = _mul_scalar(x, 2)
    with trace() as t:
        _add__scalar(y, 1)  # a root hop with events, before the no_grad block
        with dc.no_grad():
            y.view(2)
    return t


def record_everything():
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        dc.zeros(2)
        y = _mul_scalar(x, 2)
        _add__scalar(y, 1)
        with dc.no_grad():
            y.view(2)
        with dc.inference_mode():
            dc.ones(2) * 3
    return t


ALL_PROGRAMS = [record_mul_add, record_factory, record_view_under_no_grad, record_everything]


@pytest.fixture
def myadd(lib):
    """``myops::myadd`` of the C++ tutorial: a CPU kernel and an Autograd kernel that redispatches."""
    lib.define("myadd(Tensor self, Tensor other) -> Tensor")
    op = dc.find_op(f"{lib.ns}::myadd")

    def myadd_cpu(self, other):
        return self

    def myadd_autograd(ks, self, other):
        with AutoDispatchBelowAutograd():
            return op.redispatch(ks & DispatchKeySet.full_after("AutogradCPU"), self, other)

    lib.impl("myadd", myadd_cpu, "CPU")
    lib.impl("myadd", myadd_autograd, "Autograd", with_keyset=True)
    return op


def normalize(text: str) -> str:
    """Kernel locations as ``file.py:N``, wherever the package is installed and whatever the line."""
    return re.sub(r"registered at (?:\S*/)?([\w.]+\.py):\d+", r"registered at \1:N", text)


# --- key-set helpers ----------------------------------------------------------------------------------
def decode_names(names: list[str]) -> int:
    """The raw bits of a ``key_names`` list (the inverse the JSON schema promises)."""
    bits = 0
    for name in names:
        if name in BackendComponent.__members__:
            bits |= 1 << (BackendComponent[name] - 1)
        else:  # a runtime key, or a functionality key alone (its functionality bit)
            bits |= key_bits(DispatchKey[name])
    return bits


def test_bit_names_follow_the_c10_layout():
    assert tr.NUM_BITS == 62
    assert tr.bit_name(0) == "CPUBit"
    assert tr.bit_name(15) == "MetaBit"
    assert tr.bit_name(16) == "Dense"
    assert tr.bit_name(15 + 19) == "ADInplaceOrView"
    assert tr.bit_name(61) == "PythonDispatcher"
    with pytest.raises(ValueError):
        tr.bit_name(62)


def test_key_names_of_sets_repr_would_print():
    assert tr.key_names(CPU_TENSOR) == ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"]
    assert tr.key_names(0) == []
    assert tr.format_keyset(0x1000010001) == "DispatchKeySet(CPU, AutogradCPU) = 0x1000010001"


def test_key_names_are_lossless_where_repr_is_not():
    below_autograd = AutoDispatchBelowAutograd._bits
    assert repr(DispatchKeySet.from_raw(below_autograd)) == "DispatchKeySet(AutogradOther, AutogradNestedTensor)"
    assert tr.key_names(below_autograd) == ["AutogradOther", "AutogradFunctionality", "AutogradNestedTensor"]
    assert tr.key_names(0b101) == ["CPUBit", "HIPBit"]  # backend bits alone
    assert tr.key_names(key_bits("CUDA") | 1) == ["CPU", "CUDA"]


def test_key_names_round_trip_on_random_sets():
    rng = random.Random(2013)
    for _ in range(500):
        bits = rng.getrandbits(62) & rng.getrandbits(62) & FULL
        if rng.random() < 0.3:
            bits &= ~BACKEND_MASK
        assert decode_names(tr.key_names(bits)) == bits, hex(bits)


# --- text ---------------------------------------------------------------------------------------------
def test_exact_text_of_the_tutorial_autograd_kernel(myadd):
    x, y = dc.ones(2), dc.ones(2)
    with trace() as t:
        myadd(x, y)
    ns = myadd.qualname.split("::")[0]
    expected = f"""\
 [call] op=[{ns}::myadd], key=[AutogradCPU]
     arg self: DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU) = 0x9400010001
     arg other: DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU) = 0x9400010001
     tls included: DispatchKeySet(BackendSelect, ADInplaceOrView) = 0x404000000
     tls excluded: DispatchKeySet({AUTOCAST}) = 0x1ff8000000000
     effective: DispatchKeySet(CPU, AutogradCPU) = 0x1000010001
     kernel: autograd kernel, registered at test_trace_render.py:N
     reason: autograd kernel via the Autograd alias
     fallthrough skipped: BackendSelect, ADInplaceOrView
     * guard entered: AutoDispatchBelowAutograd (exclude +AutogradOther +AutogradFunctionality +AutogradNestedTensor)
  [redispatch] op=[{ns}::myadd], key=[CPU]
      arg self: DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU) = 0x9400010001
      arg other: DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU) = 0x9400010001
      tls included: DispatchKeySet(BackendSelect, ADInplaceOrView) = 0x404000000
      tls excluded: DispatchKeySet(AutogradOther, AutogradFunctionality, AutogradNestedTensor, {AUTOCAST}) \
= 0x1ffb800000000 (vs caller: +AutogradOther +AutogradFunctionality +AutogradNestedTensor)
      effective: DispatchKeySet(CPU) = 0x10001
      kernel: kernel, registered at test_trace_render.py:N
      reason: direct kernel registered at this key
     * guard left: AutoDispatchBelowAutograd (exclude -AutogradOther -AutogradFunctionality -AutogradNestedTensor)
"""
    assert normalize(t.text()) == expected
    assert t.text() == tr.render_text(t)


def test_text_of_mul_then_add_():
    text = normalize(record_mul_add().text())
    hop_lines = [line for line in text.splitlines() if line.lstrip().startswith("[")]
    assert hop_lines == [
        " [call] op=[aten::mul.Scalar], key=[AutogradCPU]",
        "  [redispatch] op=[aten::mul.Scalar], key=[CPU]",
        " [call] op=[aten::add_.Scalar], key=[AutogradCPU]",
        "  [redispatch] op=[aten::add_.Scalar], key=[ADInplaceOrView]",
        "   [redispatch] op=[aten::add_.Scalar], key=[CPU]",
    ]
    lines = text.splitlines()
    # every hop carries its detail lines, four columns in from the hop line
    first = lines.index(" [call] op=[aten::mul.Scalar], key=[AutogradCPU]")
    assert lines[first + 1:first + 10] == [
        f"     arg self: DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU) = {CPU_TENSOR:#x}",
        f"     tls included: DispatchKeySet(BackendSelect, ADInplaceOrView) = {DEFAULT_INCLUDED:#x}",
        f"     tls excluded: DispatchKeySet({AUTOCAST}) = {DEFAULT_EXCLUDED:#x}",
        "     effective: DispatchKeySet(CPU, AutogradCPU) = 0x1000010001",
        "     kernel: autograd kernel, registered at derivatives.py:N",
        "     reason: autograd kernel via the Autograd alias",
        "     fallthrough skipped: BackendSelect, ADInplaceOrView",
        # the autograd kernel enters AutoDispatchBelowADInplaceOrView where its bits flip (Note
        # [Inline guards] in trace.py), as torch's VariableType kernel enters the guard object
        "     * guard entered: AutoDispatchBelowADInplaceOrView "
        "(exclude +ADInplaceOrView +AutogradOther +AutogradFunctionality +AutogradNestedTensor)",
        "  [redispatch] op=[aten::mul.Scalar], key=[CPU]",
    ]
    # the same TLS change shows as a delta on the hop below it
    assert ("(vs caller: +ADInplaceOrView +AutogradOther +AutogradFunctionality +AutogradNestedTensor)"
            in lines[first + 12])
    # events sit in the column of the hop they happened in, after the nested hops
    assert "     * autograd node created: MulBackward1 (node #0)" in lines
    assert "      * version bump: aten::add_.Scalar bumped self's version 0 -> 1 (tensor #0)" in lines
    assert "     * autograd node created: AddBackward1 (node #1)" in lines
    assert lines.index("     * autograd node created: AddBackward1 (node #1)") == len(lines) - 1
    # the guard's exit follows the nested hops, when the kernel has restored the TLS
    assert lines[-2] == ("     * guard left: AutoDispatchBelowADInplaceOrView "
                         "(exclude -ADInplaceOrView -AutogradOther -AutogradFunctionality -AutogradNestedTensor)")


def test_text_hop_lines_match_the_live_printer(capsys):
    x = dc.ones(2, requires_grad=True)
    show_dispatch_trace(True)
    try:
        with trace() as t:
            y = x * 2
            y.add_(1)
            dc.zeros(2)
    finally:
        show_dispatch_trace(False)
    live = capsys.readouterr().err.splitlines()
    rendered = [line for line in t.text().splitlines() if line.lstrip().startswith("[")]
    assert rendered == live


def test_text_of_a_factory_through_backend_select():
    text = normalize(record_factory().text())
    assert text.splitlines()[:9] == [
        " [call] op=[aten::zeros], key=[BackendSelect]",
        "     args: no tensor arguments",
        f"     tls included: DispatchKeySet(BackendSelect, ADInplaceOrView) = {DEFAULT_INCLUDED:#x}",
        f"     tls excluded: DispatchKeySet({AUTOCAST}) = {DEFAULT_EXCLUDED:#x}",
        "     effective: DispatchKeySet(BackendSelect) = 0x4000000",
        "     kernel: kernel, registered at _core_kernels.py:N",
        "     reason: direct kernel registered at this key",
        "     fallthrough skipped: ADInplaceOrView",
        "  [redispatch] op=[aten::zeros], key=[CPU]",
    ]
    assert "      effective: DispatchKeySet(CPU) = 0x10001" in text.splitlines()


def test_text_places_user_guards_between_root_hops():
    lines = record_view_under_no_grad().text().splitlines()
    enter = lines.index(" * guard entered: no_grad (exclude unchanged)")
    view = lines.index(" [call] op=[aten::view], key=[AutogradCPU]")  # no_grad is a flag, not a mask
    leave = lines.index(" * guard left: no_grad (exclude unchanged)")
    add = lines.index(" [call] op=[aten::add_.Scalar], key=[AutogradCPU]")
    assert add < enter < view < leave == len(lines) - 1
    assert not any("node created" in line for line in lines[view:])  # no graph under no_grad
    assert "  [redispatch] op=[aten::view], key=[ADInplaceOrView]" in lines


def test_text_shows_the_bits_inference_mode_flips():
    with trace() as t:
        with dc.inference_mode():
            dc.zeros(2)
    lines = t.text().splitlines()
    assert lines[0] == (" * guard entered: inference_mode (exclude +AutogradOther "
                        "+AutogradFunctionality +AutogradNestedTensor, include -ADInplaceOrView)")


def test_text_is_deterministic():
    assert record_everything().text() == record_everything().text()
    assert "0x7f" not in record_everything().text()  # no addresses
    assert " at 0x" not in record_everything().text()


def test_empty_trace_renders():
    with trace() as t:
        pass
    assert t.text() == ""
    assert t.to_json()["hops"] == [] and t.to_json()["events"] == []
    assert t.mermaid() == "sequenceDiagram\n    participant caller as user code\n"
    assert 'id="hop-tree"' in t.html()


# --- JSON ---------------------------------------------------------------------------------------------
KEYSET_FIELDS = ("included", "excluded", "effective", "skipped")
HOP_FIELDS = {"index", "kind", "op", "key", "depth", "parent", "label", "kernel", "reason", "args",
              *KEYSET_FIELDS, "events", "children"}
EVENT_FIELDS = {"index", "kind", "detail", "hop", "op", "data"}


def check_keyset(value, where):
    assert isinstance(value, dict) and {"raw", "keys"} <= value.keys(), where
    assert re.fullmatch(r"0x[0-9a-f]+", value["raw"]), where
    raw = int(value["raw"], 16)
    assert 0 <= raw <= FULL, where
    assert isinstance(value["keys"], list) and all(isinstance(k, str) for k in value["keys"]), where
    assert decode_names(value["keys"]) == raw, where
    assert value["keys"] == tr.key_names(raw), where


def check_scalar_json(value, where):
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str), where
            check_scalar_json(v, where)
    elif isinstance(value, list):
        for v in value:
            check_scalar_json(v, where)
    else:
        assert value is None or isinstance(value, (str, int, float, bool)), where


def validate_trace_json(doc):
    """Hand-written check of docs/trace-json-schema.md; returns the hops in index order."""
    assert isinstance(doc, dict)
    assert doc["schema"] == "dispatchcore.trace/1"
    assert doc["layout"] == {"bits": 62, "backend_bits": 16, "functionality_offset": 15}
    assert isinstance(doc["hops"], list) and isinstance(doc["events"], list)
    flat = []

    def walk(hop, parent, depth):
        where = f"hop {len(flat)}"
        assert isinstance(hop, dict) and HOP_FIELDS <= hop.keys(), where
        assert hop["index"] == len(flat), where  # pre-order, from 0
        flat.append(hop)
        assert hop["kind"] in ("call", "redispatch"), where
        assert isinstance(hop["op"], str) and "::" in hop["op"], where
        assert hop["key"] in DispatchKey.__members__, where
        assert hop["depth"] == depth and hop["parent"] == parent, where
        for field in ("label", "kernel", "reason"):
            assert isinstance(hop[field], str) and hop[field], where
        for arg in hop["args"]:
            assert set(arg) == {"name", "keyset"} and isinstance(arg["name"], str), where
            check_keyset(arg["keyset"], where)
        for field in KEYSET_FIELDS:
            check_keyset(hop[field], f"{where} {field}")
        effective = int(hop["effective"]["raw"], 16)
        assert DispatchKeySet.from_raw(effective).highest_priority_key().name == hop["key"], where
        if hop["kind"] == "redispatch":
            assert hop["skipped"]["raw"] == "0x0", where
        else:
            contributed = int(hop["included"]["raw"], 16)
            for arg in hop["args"]:
                contributed |= int(arg["keyset"]["raw"], 16)
            unmasked = contributed & ~(int(hop["excluded"]["raw"], 16) & ~BACKEND_MASK)
            assert effective | int(hop["skipped"]["raw"], 16) == unmasked, where
        assert all(isinstance(i, int) for i in hop["events"]), where
        assert "seq" not in hop or isinstance(hop["seq"], int), where
        for child in hop["children"]:
            walk(child, hop["index"], depth + 1)

    for root in doc["hops"]:
        walk(root, None, 0)
    assert doc["hop_count"] == len(flat)
    for i, event in enumerate(doc["events"]):
        where = f"event {i}"
        assert isinstance(event, dict) and EVENT_FIELDS <= event.keys(), where
        assert event["index"] == i and isinstance(event["kind"], str) and isinstance(event["detail"], str), where
        if event["hop"] is None:
            assert event["op"] is None, where
        else:
            hop = flat[event["hop"]]
            assert event["op"] == hop["op"] and i in hop["events"], where
        data = event["data"]
        assert isinstance(data, dict), where
        if event["kind"] in ("guard_enter", "guard_exit"):
            assert isinstance(data["guard"], str), where
            for field in ("included_before", "excluded_before", "included_after", "excluded_after"):
                check_keyset(data[field], f"{where} {field}")
        elif event["kind"] == "version_bump":
            assert isinstance(data["argument"], str), where
            assert isinstance(data["before"], int) and data["after"] > data["before"], where
            assert isinstance(data["tensor"], int), where
        elif event["kind"] == "node_created":
            assert isinstance(data["node"], str) and isinstance(data["node_index"], int), where
        check_scalar_json(data, where)
    for hop in flat:  # a hop lists exactly the events that point at it
        assert hop["events"] == [e["index"] for e in doc["events"] if e["hop"] == hop["index"]]
    assert json.loads(json.dumps(doc)) == doc
    return flat


@pytest.mark.parametrize("program", ALL_PROGRAMS, ids=lambda p: p.__name__)
def test_json_matches_the_documented_schema(program):
    t = program()
    flat = validate_trace_json(t.to_json())
    assert [(h["kind"], h["op"], h["key"]) for h in flat] == [(h.kind, h.op, h.key.name) for h in t.hops()]


def test_json_values_of_mul_then_add_():
    doc = record_mul_add().to_json()
    flat = validate_trace_json(doc)
    mul = flat[0]
    assert (mul["kind"], mul["op"], mul["key"], mul["label"]) == ("call", "aten::mul.Scalar", "AutogradCPU",
                                                                   "autograd kernel")
    assert mul["reason"] == "autograd kernel via the Autograd alias"
    assert mul["args"] == [{"name": "self", "keyset": {
        "raw": "0x9400010001", "keys": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"]}}]
    assert mul["effective"] == {"raw": "0x1000010001", "keys": ["CPU", "AutogradCPU"]}
    assert mul["skipped"]["keys"] == ["BackendSelect", "ADInplaceOrView"]
    assert re.fullmatch(r"registered at \S*derivatives\.py:\d+", mul["kernel"])
    assert not mul["kernel"].startswith("registered at /")  # relative to the package root
    assert [c["key"] for c in mul["children"]] == ["CPU"]
    cpu = mul["children"][0]
    assert cpu["excluded"]["keys"][:4] == ["ADInplaceOrView", "AutogradOther", "AutogradFunctionality",
                                           "AutogradNestedTensor"]
    kinds = [(e["kind"], e["hop"]) for e in doc["events"]]
    inplace_view = next(h for h in flat if h["op"] == "aten::add_.Scalar" and h["key"] == "ADInplaceOrView")
    assert ("version_bump", inplace_view["index"]) in kinds  # which op bumped the version
    bump = next(e for e in doc["events"] if e["kind"] == "version_bump")
    assert bump["op"] == "aten::add_.Scalar"
    assert bump["data"] == {"tensor": 0, "argument": "self", "before": 0, "after": 1}
    nodes = [e for e in doc["events"] if e["kind"] == "node_created"]
    assert [(n["data"]["node"], n["data"]["node_index"], flat[n["hop"]]["op"], flat[n["hop"]]["key"])
            for n in nodes] == [("MulBackward1", 0, "aten::mul.Scalar", "AutogradCPU"),
                                ("AddBackward1", 1, "aten::add_.Scalar", "AutogradCPU")]


def test_json_of_a_factory_and_of_user_guards():
    doc = record_factory().to_json()
    root = doc["hops"][0]
    assert (root["op"], root["key"], root["args"]) == ("aten::zeros", "BackendSelect", [])
    assert root["effective"]["keys"] == ["BackendSelect"]
    assert root["children"][0]["key"] == "CPU" and root["children"][0]["kind"] == "redispatch"
    doc = record_view_under_no_grad().to_json()
    guards = [e for e in doc["events"] if e["hop"] is None]
    assert [(e["kind"], e["data"]["guard"]) for e in guards] == [("guard_enter", "no_grad"),
                                                                  ("guard_exit", "no_grad")]
    assert guards[0]["data"]["excluded_before"] == guards[0]["data"]["excluded_after"]


def test_json_is_deterministic_and_serializable():
    first, second = record_everything().to_json(), record_everything().to_json()
    assert first == second
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


# --- Mermaid ------------------------------------------------------------------------------------------
def test_mermaid_participants_arrows_and_notes():
    t = record_mul_add()
    lines = t.mermaid().splitlines()
    assert lines[0] == "sequenceDiagram"
    participants = [line.split()[1] for line in lines if line.startswith("    participant ")]
    assert participants == ["caller", "AutogradCPU", "ADInplaceOrView", "CPU"]  # priority order
    arrows = [line.strip() for line in lines if ">>" in line]
    assert arrows == [
        "caller->>AutogradCPU: [call] aten::mul.Scalar",
        "AutogradCPU-->>CPU: [redispatch] aten::mul.Scalar",
        "caller->>AutogradCPU: [call] aten::add_.Scalar",
        "AutogradCPU-->>ADInplaceOrView: [redispatch] aten::add_.Scalar",
        "ADInplaceOrView-->>CPU: [redispatch] aten::add_.Scalar",
    ]
    notes = [line.strip() for line in lines if "Note over" in line]
    enter = ("Note over AutogradCPU: guard entered: AutoDispatchBelowADInplaceOrView "
             "(exclude +ADInplaceOrView +AutogradOther +AutogradFunctionality +AutogradNestedTensor)")
    leave = ("Note over AutogradCPU: guard left: AutoDispatchBelowADInplaceOrView "
             "(exclude -ADInplaceOrView -AutogradOther -AutogradFunctionality -AutogradNestedTensor)")
    assert notes == [
        enter, leave,
        "Note over AutogradCPU: autograd node created: MulBackward1 (node #35;0)",
        enter,
        "Note over ADInplaceOrView: version bump: aten::add_.Scalar bumped self's version 0 → 1",
        leave,
        "Note over AutogradCPU: autograd node created: AddBackward1 (node #35;1)",
    ]  # guards that changed nothing inside a hop (ADInplaceOrView's own) are left out
    activations = [line.strip().split()[0] for line in lines if "activate" in line]
    assert activations.count("activate") == activations.count("deactivate") == len(t.hops())


def test_mermaid_of_a_factory_and_user_guards():
    lines = record_factory().mermaid().splitlines()
    assert [line.split()[1] for line in lines if "participant" in line] == ["caller", "BackendSelect", "CPU"]
    assert "    caller->>BackendSelect: [call] aten::zeros" in lines
    lines = record_view_under_no_grad().mermaid().splitlines()
    assert "    Note over caller: guard entered: no_grad (exclude unchanged)" in lines
    assert lines.index("    Note over caller: guard entered: no_grad (exclude unchanged)") < lines.index(
        "    caller->>AutogradCPU: [call] aten::view")


def test_mermaid_escapes_its_syntax_characters():
    assert tr._mermaid_text("a;b #1 <x>\nnext") == "a#59;b #35;1 #60;x#62; next"


# --- HTML ---------------------------------------------------------------------------------------------
VOID = {"meta", "br", "hr", "img", "input", "link"}


class Dom(HTMLParser):
    """A minimal element tree: (tag, attrs, children, text)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = {"tag": "#root", "attrs": {}, "children": [], "text": ""}
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = {"tag": tag, "attrs": dict(attrs), "children": [], "text": ""}
        self.stack[-1]["children"].append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        assert self.stack[-1]["tag"] == tag, f"</{tag}> closes <{self.stack[-1]['tag']}>"
        self.stack.pop()

    def handle_data(self, data):
        for node in self.stack:
            node["text"] += data


def parse(page):
    dom = Dom()
    dom.feed(page)
    dom.close()
    assert dom.stack == [dom.root], "unclosed elements"
    return dom.root


def find_all(node, pred):
    out = []
    for child in node["children"]:
        if pred(child):
            out.append(child)
        out.extend(find_all(child, pred))
    return out


def has_class(name):
    return lambda n: name in n["attrs"].get("class", "").split()


def bits_of(strip):
    cells = find_all(strip, has_class("bit"))
    assert len(cells) == 62
    assert [int(c["attrs"]["data-bit"]) for c in cells] == list(range(61, -1, -1))
    return cells


@pytest.mark.parametrize("program", ALL_PROGRAMS, ids=lambda p: p.__name__)
def test_html_has_a_hop_element_with_strips_per_hop(program):
    t = program()
    root = parse(t.html())
    hops = find_all(root, has_class("hop"))
    assert [(h["attrs"]["data-kind"], h["attrs"]["data-op"], h["attrs"]["data-key"]) for h in hops] == [
        (h.kind, h.op, h.key.name) for h in t.hops()]
    assert [h["attrs"]["id"] for h in hops] == [f"hop-{i}" for i in range(len(hops))]
    for hop, element in zip(t.hops(), hops):
        table = find_all(element, lambda n: n["tag"] == "table")[0]  # this hop's own strips
        rows = {(r["attrs"]["data-set"], r["attrs"].get("data-arg")): r
                for r in find_all(table, lambda n: n["tag"] == "tr")}
        expected = {("arg", name): bits for name, bits in hop.arg_keys}
        expected |= {("included", None): hop.included, ("excluded", None): hop.excluded,
                     ("effective", None): hop.keyset}
        assert set(rows) == set(expected)
        for which, bits in expected.items():
            cells = bits_of(rows[which])
            assert rows[which]["attrs"]["data-raw"] == f"{bits:#x}"
            on = {int(c["attrs"]["data-bit"]) for c in cells if has_class("on")(c)}
            masked = {int(c["attrs"]["data-bit"]) for c in cells if has_class("masked")(c)}
            if which[0] == "effective":
                assert on == {b for b in range(62) if bits >> b & 1}
                chosen = {int(c["attrs"]["data-bit"]) for c in cells if has_class("chosen")(c)}
                assert chosen == {b for b in range(62) if key_bits(hop.key) >> b & 1}
            else:  # set bits show as on, or as masked where the TLS exclude set removes them
                assert on | masked == {b for b in range(62) if bits >> b & 1}
                if which[0] != "excluded":
                    assert masked == {b for b in range(62) if (bits & hop.excluded & ~BACKEND_MASK) >> b & 1}
            for c in cells:
                state = {"on", "off", "masked", "skipped"} & set(c["attrs"]["class"].split())
                assert len(state) == 1
                bit = int(c["attrs"]["data-bit"])
                assert c["attrs"]["title"].startswith(f"bit {bit}: {tr.bit_name(bit)}")


def test_html_marks_masked_and_skipped_bits_of_the_redispatch_below_autograd():
    t = record_mul_add()
    root = parse(t.html())
    cpu = next(h for h in find_all(root, has_class("hop")) if h["attrs"]["id"] == "hop-1")
    assert cpu["attrs"]["data-key"] == "CPU" and cpu["attrs"]["data-parent"] == "0"
    rows = {r["attrs"]["data-set"]: r for r in find_all(cpu, lambda n: n["tag"] == "tr")}
    effective = {int(c["attrs"]["data-bit"]): c for c in bits_of(rows["effective"])}
    autograd_bit, adinplace_bit, backend_select_bit = 15 + 21, 15 + 19, 15 + 11
    assert has_class("masked")(effective[autograd_bit])  # excluded by the autograd kernel's TLS
    assert has_class("masked")(effective[adinplace_bit])
    assert has_class("skipped")(effective[backend_select_bit])  # not excluded: below the redispatch mask
    assert "AutogradFunctionality (AutogradCPU)" in effective[autograd_bit]["attrs"]["title"]
    assert has_class("chosen")(effective[0]) and has_class("chosen")(effective[16])
    # the backend separator sits between bit 16 and bit 15
    strip = find_all(rows["effective"], has_class("strip"))[0]
    order = [("sep" if has_class("sep")(c) else c["attrs"]["data-bit"]) for c in strip["children"]]
    assert order[order.index("sep") - 1:order.index("sep") + 2] == ["16", "sep", "15"]


def test_html_links_events_to_hops():
    t = record_view_under_no_grad()
    page = t.html()
    root = parse(page)
    events = find_all(root, has_class("event"))
    assert len(events) == len(t.events)
    bump = next(e for e in events if e["attrs"]["data-kind"] == "version_bump")
    hop = t.hops()[int(bump["attrs"]["data-hop"])]
    assert (hop.op, hop.key.name) == ("aten::add_.Scalar", "ADInplaceOrView")
    link = find_all(bump, lambda n: n["tag"] == "a")[0]
    assert link["attrs"]["href"] == f"#hop-{bump['attrs']['data-hop']}"
    assert bump["attrs"]["data-tensor"] == "0"
    # the user's no_grad guard is a top-level item between root hops, not inside one
    tree = find_all(root, lambda n: n["attrs"].get("id") == "hop-tree")[0]
    top = [(c["attrs"].get("data-kind"), c["attrs"].get("data-op")) for c in tree["children"]]
    assert top == [("call", "aten::add_.Scalar"), ("guard_enter", None), ("call", "aten::view"),
                   ("guard_exit", None)]


def test_html_is_self_contained_and_embeds_the_json():
    t = record_everything()
    page = t.html()
    assert page.startswith("<!DOCTYPE html>")
    root = parse(page)
    assert not find_all(root, lambda n: n["tag"] in ("link", "img", "iframe") or "src" in n["attrs"])
    assert "http://" not in page and "https://" not in page and "@import" not in page
    hrefs = [n["attrs"]["href"] for n in find_all(root, lambda n: "href" in n["attrs"])]
    assert hrefs and all(h.startswith("#hop-") for h in hrefs)
    script = find_all(root, lambda n: n["attrs"].get("id") == "trace-json")[0]
    assert json.loads(script["text"]) == t.to_json()
    assert find_all(root, lambda n: n["tag"] == "details")  # collapsible without script
    ids = [n["attrs"]["id"] for n in find_all(root, lambda n: "id" in n["attrs"])]
    assert len(ids) == len(set(ids))


def test_html_escapes_all_text(lib):
    lib.define("weird(Tensor self) -> Tensor")
    source = "def k(self):\n    return self\nlib.impl('weird', k, 'CPU')\n"
    exec(compile(source, '<weird & "file">', "exec"), {"lib": lib})  # as from a REPL: <stdin>
    with trace() as t:
        dc.find_op(f"{lib.ns}::weird")(dc.ones(1))
    hop = t.hops()[-1]
    assert hop.kernel == 'registered at <weird & "file">:3'
    page = t.html()
    assert "<weird" not in page
    assert "registered at &lt;weird &amp; &quot;file&quot;&gt;:3" in page
    root = parse(page)
    kernel = find_all(root, has_class("kernel"))[-1]
    assert 'registered at <weird & "file">:3' in kernel["text"]
    flat = validate_trace_json(t.to_json())
    assert flat[-1]["kernel"] == 'registered at <weird & "file">:3'


def test_html_embedded_json_cannot_close_its_script():
    page = record_mul_add().html()
    assert page.count("</script>") == 2
    script = page[page.index('id="trace-json">'):]
    script = script[:script.index("</script>")]
    assert "<" not in script and ">" not in script.partition(">")[2] and "&" not in script


# --- the timeline -------------------------------------------------------------------------------------
def test_timeline_uses_seq_ordinals_when_the_trace_has_them():
    def hop(seq, events=(), children=()):
        return types.SimpleNamespace(seq=seq, events=list(events), children=list(children), parent=None)

    def event(seq, kind="guard_enter"):
        return types.SimpleNamespace(seq=seq, kind=kind, hop=None)

    inner_enter, inner_exit = event(2), event(4, "guard_exit")
    child = hop(3)
    parent = hop(1, [inner_enter, inner_exit], [child])
    for e in (inner_enter, inner_exit):
        e.hop = parent
    before, after = event(0), event(6, "guard_exit")
    later = hop(5)
    fake = types.SimpleNamespace(roots=[parent, later], events=[before, inner_enter, inner_exit, after])
    assert tr._timeline(fake) == [("event", before), ("hop", parent), ("hop", later), ("event", after)]
    assert tr._timeline(fake, parent) == [("event", inner_enter), ("hop", child), ("event", inner_exit)]


def test_trace_methods_call_the_renderers():
    t = record_factory()
    assert t.text() == tr.render_text(t)
    assert t.to_json() == tr.render_json(t)
    assert t.mermaid() == tr.render_mermaid(t)
    assert t.html() == tr.render_html(t)


# --- Note [Inline guards]: the trace shows each guard where its bits flip -----------------------------
def _guard_events(t):
    """(kind, guard, hop key, include/exclude before and after) of every guard event, in order."""
    return [(e.kind, e.data["guard"], e.hop.key.name, e.data["included_before"], e.data["excluded_before"],
             e.data["included_after"], e.data["excluded_after"])
            for e in t.events if e.kind in ("guard_enter", "guard_exit")]


@pytest.fixture
def unfused_ops(lib):
    """A view op and an in-place op whose Autograd and ADInplaceOrView kernels are written the unfused
    way, as torch's generated kernels are: each enters AutoDispatchBelowADInplaceOrView as a guard
    object and redispatches below its own key."""
    below_autograd = DispatchKeySet.full_after(DispatchKey.AutogradCPU)
    below_adiov = DispatchKeySet.full_after(DispatchKey.ADInplaceOrView)
    lib.define("myview(Tensor(a) self) -> Tensor(a)")
    lib.define("mymul_(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    for name, cpu in (("myview", lambda x: dc.ops.aten.alias.default(x)),
                      ("mymul_", lambda x, y: dc.ops.aten.mul_.Tensor(x, y))):
        op = getattr(getattr(dc.ops, lib.ns), name).default

        def autograd(ks, *args, op=op):
            with dc.AutoDispatchBelowADInplaceOrView():
                return op.redispatch(ks & below_autograd, *args)

        def ad_inplace_or_view(ks, *args, op=op):
            with dc.AutoDispatchBelowADInplaceOrView():
                return op.redispatch(ks & below_adiov, *args)

        lib.impl(name, cpu, "CPU")
        lib.impl(name, autograd, "Autograd", with_keyset=True)
        lib.impl(name, ad_inplace_or_view, "ADInplaceOrView", with_keyset=True)
    return getattr(dc.ops, lib.ns)


def test_a_view_and_an_inplace_op_show_the_guard_events_of_the_unfused_path(unfused_ops):
    x = dc.ones(3, requires_grad=True)
    y = x * 1.0
    with trace() as builtin:
        dc.ops.aten.view.default(y, [3])
        y.mul_(dc.ones(3))
    z = x * 1.0
    with trace() as unfused:
        unfused_ops.myview.default(z)
        unfused_ops.mymul_.default(z, dc.ones(3))
    # the mul_ calls' ones(3) factories record no guard; what remains is the two ops' guards
    assert _guard_events(builtin) == _guard_events(unfused)
    events = _guard_events(builtin)
    flip = (events[0][4] ^ events[0][6]) & ~BACKEND_MASK
    assert [e[:3] for e in events[:4]] == [
        ("guard_enter", "AutoDispatchBelowADInplaceOrView", "AutogradCPU"),  # the bits flip here ...
        ("guard_enter", "AutoDispatchBelowADInplaceOrView", "ADInplaceOrView"),  # ... not here
        ("guard_exit", "AutoDispatchBelowADInplaceOrView", "ADInplaceOrView"),
        ("guard_exit", "AutoDispatchBelowADInplaceOrView", "AutogradCPU"),
    ]
    assert flip == AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW & ~BACKEND_MASK  # Autograd* and ADInplaceOrView
    assert events[1][4] == events[1][6]  # ADInplaceOrView's own guard changes nothing


def test_an_inline_guard_is_recorded_before_the_hop_it_affects_and_left_after_it():
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        _mul_scalar(x, 2)
    call = t.hops()[0]
    enter, leave = [e for e in call.events if e.kind.startswith("guard")]
    assert enter.seq < call.children[0].seq < leave.seq
    node = next(e for e in call.events if e.kind == "node_created")
    assert leave.seq < node.seq  # the node is attached after the kernel left the guard


# --- the autograd engine's [backward] frames -------------------------------------------------------------
def record_forward_backward():
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    y = dc.tensor([3.0, 4.0], requires_grad=True)
    with trace() as t:
        (x * y).sum().backward()
    return t


def test_backward_ops_nest_under_the_node_that_ran_them_inside_a_backward_frame():
    t = record_forward_backward()
    roots = [(h.kind, h.op) for h in t.roots]
    assert roots[:2] == [("call", "aten::mul.Tensor"), ("call", "aten::sum")]
    assert roots[-1] == ("backward", "backward()")  # after the seed's ones_like, called from user code
    engine = t.roots[-1]
    nodes = [(f.kind, f.op) for f in engine.children]
    assert nodes == [("backward", "SumBackward0"), ("backward", "MulBackward0"),
                     ("backward", "torch::autograd::AccumulateGrad"), ("backward", "torch::autograd::AccumulateGrad")]
    calls = {f.op + str(i): [c.op for c in f.children] for i, f in enumerate(engine.children)}
    assert calls == {"SumBackward00": ["aten::expand"], "MulBackward01": ["aten::mul.Tensor", "aten::mul.Tensor"],
                     "torch::autograd::AccumulateGrad2": ["aten::detach"],
                     "torch::autograd::AccumulateGrad3": ["aten::detach"]}
    assert all(c.kind == "call" for f in engine.children for c in f.children)  # calls, made by the formula
    assert dc.autograd.graph.trace_frame is None  # the engine pays nothing once no trace is possible


def test_backward_frames_render_in_text_json_mermaid_and_html():
    t = record_forward_backward()
    text = t.text().splitlines()
    assert " [backward] backward()" in text and "  [backward] MulBackward0" in text
    assert text.index("  [backward] MulBackward0") < text.index("   [call] op=[aten::mul.Tensor], key=[AutogradCPU]",
                                                                 text.index("  [backward] MulBackward0"))
    def flat(hops):
        for h in hops:
            yield h
            yield from flat(h["children"])

    frames = [h for h in flat(t.to_json()["hops"]) if h["kind"] == "backward"]
    assert [f["op"] for f in frames][:3] == ["backward()", "SumBackward0", "MulBackward0"]
    assert all(f["key"] is None and f["args"] == [] for f in frames)
    mermaid = t.mermaid()
    assert "    Note over caller: [backward] MulBackward0" in mermaid
    assert "participant Undefined" not in mermaid
    html = t.html()
    assert '<li class="hop backward"' in html and 'data-op="MulBackward0"' in html


def test_the_live_printer_shows_the_backward_frames_as_the_rendering_does(capsys):
    x = dc.ones(2, requires_grad=True)
    show_dispatch_trace(True)
    try:
        with trace() as t:
            (x * 2).sum().backward()
    finally:
        show_dispatch_trace(False)
    live = capsys.readouterr().err.splitlines()
    assert [line for line in t.text().splitlines() if line.lstrip().startswith("[")] == live
    assert " [backward] backward()" in live
