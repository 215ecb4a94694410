"""Every aten operator is registered at the keys torch 2.13 registers it (``native.torch_keys``).

Runs without torch: ``TORCH_KEYS`` is torch's registration data, recorded by
``scripts/torch_registrations.py``; the label-by-label comparison with a live torch is
``tests/differential/test_vs_torch_table_labels.py``.
"""

from __future__ import annotations

import pytest
from dispatchcore_backends import cpu

import dispatchcore as dc
from dispatchcore.dispatcher import get_dispatcher
from dispatchcore.native.torch_keys import KEY_NAMES, TORCH_KEYS

# Deviations from torch's registrations, each for a reason written in docs/notes.md: CPU keeps a
# kernel for speed where torch has only the CompositeExplicitAutograd one (cpu.SPEED_KERNELS);
# rand and randn have no composite yet, so the CPU backend keeps kernels.
EXTRA = {name: "C" for name in cpu.SPEED_KERNELS}
MISSING: dict[str, str] = {}
SHORT = {v: k for k, v in KEY_NAMES.items()}


def registered_keys(op) -> str:
    """The short names of the keys at which ``op`` has a registration (as ``TORCH_KEYS`` writes them)."""
    return "".join(sorted(SHORT[k.name] for k in op.registrations if k.name in SHORT))


def expected_keys(name: str) -> str:
    keys = (set(TORCH_KEYS[name]) | set(EXTRA.get(name, ""))) - set(MISSING.get(name, ""))
    if "I" in keys and "C" not in keys:  # torch's Autograd kernel of a CompositeImplicitAutograd op serves
        keys.discard("A")  # nested tensors only, unless a backend kernel shadows the composite (silu_backward)
    return "".join(sorted(keys))


@pytest.fixture(scope="module")
def aten_ops():
    dc.load_backends()
    return {op.qualname[6:]: op for op in get_dispatcher().operators() if op.qualname.startswith("aten::")}


def test_every_aten_operator_has_torchs_registration_data(aten_ops):
    assert sorted(set(aten_ops) - set(TORCH_KEYS)) == []


def test_every_aten_operator_is_registered_at_torchs_keys(aten_ops):
    wrong = {name: (registered_keys(op), expected_keys(name)) for name, op in aten_ops.items()
             if registered_keys(op) != expected_keys(name)}
    assert wrong == {}


def test_the_documented_deviations_are_all_still_needed():
    for name in EXTRA:
        assert set(EXTRA[name]) - set(TORCH_KEYS[name]), name  # torch does not have it: a real deviation
    for name in MISSING:
        assert set(MISSING[name]) <= set(TORCH_KEYS[name]), name
