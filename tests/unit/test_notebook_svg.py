"""The SVG pictures of notebook.py and trace_render.py: key sets, the key-set layout, traces, and the table legend.

Each picture is parsed as XML (it must be a standalone SVG document) and checked against the
data it draws: the key set's bits, ``keys.py``'s layout and alias expansions, the trace's hops.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

import dispatchcore as dc
from dispatchcore import notebook
from dispatchcore.keys import PER_BACKEND_FUNCTIONALITIES, BackendComponent, alias_expansion, runtime_key
from dispatchcore.trace import trace
from dispatchcore.trace_render import NUM_BITS, bit_name, render_svg

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def parse(picture: str) -> ET.Element:
    root = ET.fromstring(picture)
    assert root.tag == f"{SVG}svg"
    return root


def having(root: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    """Elements of ``tag`` whose class list holds ``cls``."""
    return [e for e in root.iter(f"{SVG}{tag}") if cls in (e.get("class") or "").split()]


def texts(root: ET.Element, cls: str) -> list[str]:
    return [e.text or "" for e in having(root, "text", cls)]


# --- keyset_svg and _repr_svg_ ---------------------------------------------------------------------------
def test_a_key_set_strip_highlights_exactly_its_set_bits_and_names_them():
    ks = dc.tensor_keyset("CPU")
    root = parse(notebook.keyset_svg(ks))
    cells = having(root, "rect", "bit")
    assert [int(c.get("data-bit")) for c in cells] == list(range(NUM_BITS - 1, -1, -1))
    on = [int(c.get("data-bit")) for c in having(root, "rect", "on")]
    assert sum(1 << b for b in on) == int(ks)
    assert texts(root, "bit-name") == [bit_name(b) for b in sorted(on, reverse=True)]
    assert all(c.find(f"{SVG}title").text.startswith(f"bit {c.get('data-bit')}: ") for c in cells)


def test_a_key_set_strip_shows_the_raw_value_and_the_printed_keys():
    ks = dc.tensor_keyset("CPU")
    root = parse(notebook.keyset_svg(ks))
    assert texts(root, "raw") == ["0x9400010001"]
    assert " ".join(texts(root, "keys")) == repr(ks)
    assert root.find(f"{SVG}title").text == f"{ks!r} = 0x9400010001"


def test_a_key_set_strip_takes_a_raw_int_and_shows_the_lossless_names():
    root = parse(notebook.keyset_svg(0x3800000000))  # AutoDispatchBelowAutograd's bits: no backend bit
    assert texts(root, "bit-name") == ["AutogradNestedTensor", "AutogradFunctionality", "AutogradOther"]
    assert not having(parse(notebook.keyset_svg(0)), "rect", "on")


def test_repr_svg_of_a_key_set_is_its_strip():
    ks = dc.DispatchKeySet(["CPU", "AutogradCPU"])
    assert ks._repr_svg_() == notebook.keyset_svg(ks)
    assert {int(c.get("data-bit")) for c in having(parse(ks._repr_svg_()), "rect", "on")} == {0, 16, 36}


def test_the_svg_pictures_carry_no_style_sheet_script_or_ids():
    """Inline in a page, a picture must not restyle the page or clash with another picture's ids."""
    with trace() as t:
        dc.ones(2) * 2
    for picture in (notebook.keyset_svg(1), notebook.keyset_layout_svg(), notebook.trace_svg(t)):
        root = parse(picture)
        assert not [e for e in root.iter() if e.tag in (f"{SVG}style", f"{SVG}script")]
        assert not [e for e in root.iter() if "id" in e.attrib]


# --- keyset_layout_svg --------------------------------------------------------------------------------
def test_the_layout_names_every_bit_once():
    root = parse(notebook.keyset_layout_svg())
    assert sorted(texts(root, "bit-name")) == sorted(bit_name(b) for b in range(NUM_BITS))
    assert len(having(root, "rect", "bit")) == NUM_BITS


def test_the_layout_matrix_makes_each_runtime_key_from_a_functionality_and_a_backend_bit():
    root = parse(notebook.keyset_layout_svg())
    cells = having(root, "g", "runtime-key")
    assert len(cells) == len(PER_BACKEND_FUNCTIONALITIES) * 16
    for cell in cells:
        functionality = dc.DispatchKey[cell.get("data-functionality")]
        backend = BackendComponent[cell.get("data-backend")]
        assert cell.get("data-key") == runtime_key(functionality, backend).name
        assert cell.find(f"{SVG}text").text == cell.get("data-key")


def test_the_layout_shows_each_alias_covering_exactly_its_expansion():
    root = parse(notebook.keyset_layout_svg())
    aliases = having(root, "g", "alias")
    assert [a.get("data-alias") for a in aliases] == [
        "Autograd", "CompositeImplicitAutograd", "FuncTorchBatchedDecomposition",
        "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"]
    for group in aliases:
        covered = {e.get("data-key") for e in group.iter() if (e.get("class") or "") == "covered"}
        assert covered == {k.name for k in alias_expansion(group.get("data-alias"))}, group.get("data-alias")


def test_the_layout_works_autograd_cpu_out_as_two_bits():
    root = parse(notebook.keyset_layout_svg())
    (example,) = texts(root, "example")
    assert example.startswith("AutogradCPU = AutogradFunctionality (bit 36) + CPUBit (bit 0)")
    assert example.endswith(hex(int(dc.DispatchKeySet("AutogradCPU"))))


# --- trace_svg ----------------------------------------------------------------------------------------
def messages(root: ET.Element) -> list[tuple[str, str, str, str]]:
    return [(g.get("class").split()[1], g.get("data-op"), g.get("data-from"), g.get("data-to"))
            for g in having(root, "g", "message")]


def mermaid_messages(t) -> list[tuple[str, str, str, str]]:
    found = re.findall(r"^    (\w+)(-->>|->>)(\w+): \[(\w+)\] (\S+)$", t.mermaid(), re.MULTILINE)
    return [(kind, op, source, target) for source, _, target, kind, op in found]


def test_a_trace_diagram_has_mermaids_participants_and_arrows_in_order():
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        x * 2
        dc.zeros(2)
    root = parse(notebook.trace_svg(t))
    lanes = [g.get("data-key") for g in having(root, "g", "participant")]
    assert lanes == re.findall(r"^    participant (\w+)", t.mermaid(), re.MULTILINE)
    assert messages(root) == mermaid_messages(t)
    assert [int(g.get("data-hop")) for g in having(root, "g", "message")] == list(range(len(t.hops())))
    assert [g.find(f"{SVG}text").text for g in having(root, "g", "message")] == [
        f"[{h.kind}] {h.op}" for h in t.hops()]


def test_a_redispatch_is_dashed_and_a_call_is_solid():
    with trace() as t:
        dc.ones(2, requires_grad=True) * 2
    root = parse(render_svg(t))
    for g in having(root, "g", "message"):
        line = g.find(f"{SVG}line")
        assert ("stroke-dasharray" in line.attrib) == ("redispatch" in g.get("class"))


def test_a_trace_diagram_notes_guards_and_nodes_over_the_hop_that_made_them():
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        x * 2
    root = parse(render_svg(t))
    notes = [(g.get("class"), g.get("data-over")) for g in having(root, "g", "note")]
    assert notes == [("note guard_enter", "AutogradCPU"), ("note guard_exit", "AutogradCPU"),
                     ("note node_created", "AutogradCPU")]
    words = [" ".join(e.text for e in g.iter(f"{SVG}text")) for g in having(root, "g", "note")]
    assert words[2] == "autograd node created: MulBackward0 (node #0)"
    assert len(having(root, "rect", "activation")) == len(t.hops())


def test_backward_frames_are_boxes_around_the_calls_they_ran():
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        (x * 2).sum().backward()
    root = parse(render_svg(t))
    frames = {g.get("data-op"): g.find(f"{SVG}rect") for g in having(root, "g", "frame")}
    assert set(frames) == {h.op for h in t.hops() if h.kind == "backward"}
    outer = frames["backward()"]
    top, bottom = float(outer.get("y")), float(outer.get("y")) + float(outer.get("height"))
    inside = [g for g in having(root, "g", "message") if g.get("data-op") == "aten::expand"]
    assert inside and all(top < float(g.find(f"{SVG}line").get("y1")) < bottom for g in inside)
    before = [g for g in having(root, "g", "message") if g.get("data-op") == "aten::sum"]
    assert all(float(g.find(f"{SVG}line").get("y1")) < top for g in before)


def test_a_kernel_calling_its_own_key_is_drawn_as_a_loop():
    with trace() as t:
        dc.ones_like(dc.ones(2))
    root = parse(render_svg(t))
    loops = [g for g in having(root, "g", "message") if g.get("data-from") == g.get("data-to")]
    assert loops and all(g.find(f"{SVG}polyline") is not None for g in loops)


def test_an_empty_trace_draws_user_code_alone():
    with trace() as t:
        pass
    root = parse(render_svg(t))
    assert [g.get("data-key") for g in having(root, "g", "participant")] == ["caller"]
    assert not having(root, "g", "message")


# --- table_html: chosen rows and the legend -------------------------------------------------------------
def test_a_table_with_chosen_keys_shows_those_rows_in_order_and_a_legend_of_every_colour():
    picture = notebook.table_html(dc.ops.aten.mm.default, keys=["AutogradCPU", "XLA", "CPU"])
    rows = re.findall(r'<tr class="([\w-]+)" data-key="(\w+)" data-label="([^"]+)"', picture)
    assert rows == [("dc-autograd", "AutogradCPU", "autograd kernel"), ("dc-missing", "XLA", "missing"),
                    ("dc-kernel", "CPU", "kernel")]
    legend = re.findall(r'<span class="dc-swatch ([\w-]+)"', picture)
    assert legend == ["dc-kernel", "dc-default-backend", "dc-math", "dc-autograd", "dc-fallback", "dc-fallthrough",
                      "dc-missing"]
    assert all(f".dc-swatch.{cls} {{ background:" in picture for cls in legend)


def test_repr_svg_of_a_trace_is_its_sequence_diagram():
    x = dc.ones(2, requires_grad=True)
    with trace() as t:
        dc.ops.aten.mul.Tensor(x, x)
    assert t._repr_svg_() == notebook.trace_svg(t)
    assert parse(t._repr_svg_()).tag == f"{SVG}svg"
