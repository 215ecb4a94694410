"""notebook.py: the pictures Jupyter shows for key sets, dispatch tables, explanations and traces."""

from __future__ import annotations

import doctest
import html
from html.parser import HTMLParser

import pytest

import dispatchcore as dc
from dispatchcore import notebook
from dispatchcore.trace_render import NUM_BITS


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


class Elements(HTMLParser):
    """Every start tag as (tag, attrs), in order; whether any <script> appeared."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def with_class(self, name: str) -> list[dict[str, str]]:
        return [a for _, a in self.tags if name in (a.get("class") or "").split()]


def test_a_key_set_shows_its_bits_one_cell_each_with_the_raw_value():
    ks = dc.tensor_keyset("CPU")
    page = Elements(ks._repr_html_())
    bits = page.with_class("bit")
    assert len(bits) == NUM_BITS
    on = {int(a["data-bit"]) for a in bits if "on" in a["class"].split()}
    assert sum(1 << b for b in on) == int(ks)
    assert page.with_class("strip")[0]["data-raw"] == hex(int(ks))
    assert not [t for t, _ in page.tags if t == "script"]  # a fragment: no script, styles scoped
    assert page.with_class("dc-pic")


def test_a_dispatch_table_colours_each_rows_rule_as_dump_table_names_it():
    op = dc.ops.aten.mm.default
    page = Elements(op._repr_html_())
    table = {a["data-key"]: (a["data-label"], a["class"]) for t, a in page.tags if t == "tr"}
    dump = dict(line.split(": ", 1) for line in dc.dump_table(op).splitlines())
    for key, text in dump.items():
        label = text.rsplit("[", 1)[1].rstrip("]")
        assert table[key][0] == ("fallthrough" if "fallthrough" in text else label), key
    assert table["CPU"] == ("kernel", "dc-kernel")
    assert table["AutogradCPU"] == ("autograd kernel", "dc-autograd")
    assert table["BackendSelect"][1] == "dc-fallthrough"


def test_a_table_marks_a_backend_without_kernel_as_missing(lib):
    lib.define("only_meta(Tensor x) -> Tensor")
    lib.impl("only_meta", lambda x: x, "Meta")
    page = Elements(dc.find_op(f"{lib.ns}::only_meta")._repr_html_())
    table = {a["data-key"]: a["data-label"] for t, a in page.tags if t == "tr"}
    assert table["CPU"] == "missing" and table["Meta"] == "kernel"


def test_an_explanation_shows_its_strips_and_its_path_and_the_error_of_a_failing_call(lib):
    ok = dc.explain(dc.ops.aten.add.Tensor, dc.ones(2), dc.ones(2))
    page = Elements(ok._repr_html_())
    assert [a["data-key"] for t, a in page.tags if t == "li"] == [k.name for k in ok.path]
    assert [a["data-set"] for t, a in page.tags if t == "tr"] == ["arguments", "after TLS", "effective"]
    # the chosen key's bits (AutogradCPU: its functionality bit and the CPU bit) on the effective strip
    chosen = sum(1 << int(a["data-bit"]) for a in page.with_class("chosen"))
    assert chosen == int(dc.DispatchKeySet(ok.key))
    lib.define("no_cpu(Tensor x) -> Tensor")
    failing = dc.explain(dc.find_op(f"{lib.ns}::no_cpu"), dc.ones(2))
    assert not failing.ok
    text = failing._repr_html_()
    assert 'class="dc-error"' in text and html.escape(failing.error) in text


def test_a_trace_is_its_interactive_page_inside_an_iframe():
    with dc.trace() as t:
        _ = dc.ones(2, requires_grad=True) * 2
    frame = Elements(t._repr_html_())
    assert [tag for tag, _ in frame.tags] == ["iframe"]
    inner = Elements(frame.tags[0][1]["srcdoc"])  # the attribute unescapes to the whole page
    hops = [a for t, a in inner.tags if t == "li" and "hop" in a.get("class", "").split()]
    assert [(a["data-op"], a["data-key"]) for a in hops] == [(h.op, h.key.name) for h in t.hops()]
    assert any(tag == "script" for tag, _ in inner.tags)  # its script lives inside the iframe


def test_ipython_pretty_printing_shows_the_text_forms():
    class Printer:
        def __init__(self):
            self.out = ""

        def text(self, s):
            self.out += s

    with dc.trace() as t:
        dc.ones(2)
    p = Printer()
    t._repr_pretty_(p, False)
    assert p.out == t.text()
    e = dc.explain(dc.ops.aten.add.Tensor, dc.ones(2), dc.ones(2))
    p = Printer()
    e._repr_pretty_(p, False)
    assert p.out == str(e)


def test_the_module_docstring_examples_run():
    failures, attempted = doctest.testmod(notebook, optionflags=doctest.ELLIPSIS)
    assert attempted and not failures
