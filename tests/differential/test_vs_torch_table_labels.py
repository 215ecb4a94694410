"""For every aten operator dispatchcore defines, each modeled key's table label equals torch 2.13's.

The labels are ``dump_table``'s: ``[kernel]``, ``[default backend kernel]``, ``[math kernel]``,
``[autograd kernel]``, ``[backend fallback]``, fallthrough, or no entry. The documented deviations
(``tests/unit/test_registrations.py``: CPU speed kernels, the few composites not written yet) are
expected exactly: a deviation that disappears fails the test too, so the list cannot go stale.
"""

from __future__ import annotations

import re

import pytest

import dispatchcore as dc
from dispatchcore.dispatcher import get_dispatcher

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

from tests.unit.test_registrations import EXTRA, MISSING  # noqa: E402

KEYS = ("Undefined", "CPU", "Meta", "PrivateUse1", "BackendSelect", "Python", "ADInplaceOrView",
        "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradPrivateUse1", "AutocastCPU")
_LINE = re.compile(r"^(\w+): (fallthrough )?(.*?) \[([a-z ]+)\]$")


def labels(text: str) -> dict[str, str]:
    found = {}
    for line in text.strip().splitlines():
        m = _LINE.match(line)
        if m:
            found[m.group(1)] = "fallthrough" if m.group(2) else m.group(4)
    return {k: found.get(k, "-") for k in KEYS}


def expected_differences(name: str) -> dict[str, tuple[str, str]]:
    """Per deviation, the (dispatchcore, torch) labels it gives."""
    diff = {}
    if "C" in EXTRA.get(name, ""):
        diff["CPU"] = ("kernel", "default backend kernel")
    if "M" in EXTRA.get(name, ""):
        diff["Meta"] = ("kernel", "default backend kernel")
    if "E" in MISSING.get(name, ""):
        diff["Undefined"] = ("-", "default backend kernel")
        diff["PrivateUse1"] = ("-", "default backend kernel")
    if "B" in MISSING.get(name, ""):
        diff["BackendSelect"] = ("fallthrough", "kernel")
    return diff


def _aten_names() -> list[str]:
    dc.load_backends()
    return sorted(op.qualname[6:] for op in get_dispatcher().operators() if op.qualname.startswith("aten::"))


@pytest.mark.parametrize("name", _aten_names())
def test_table_labels_equal_torchs(name):
    op = get_dispatcher().find_op(f"aten::{name}")
    mine, theirs = labels(op.dump_table()), labels(torch._C._dispatch_dump_table(f"aten::{name}"))
    diff = {k: (mine[k], theirs[k]) for k in KEYS if mine[k] != theirs[k]}
    assert diff == expected_differences(name)
