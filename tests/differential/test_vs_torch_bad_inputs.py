"""Bad input, torch against dispatchcore: the same program raises the same kind of error.

Each case of the corpus (``tests/_bad_inputs.py``) runs once with ``t = torch`` and once with
``t = dispatchcore``. Both must succeed, or both raise an exception of the same family
(NotImplementedError, IndexError, ValueError, TypeError, RuntimeError, ...) whose message holds
the case's key words; dispatchcore's exception must chain no internal one. Known differences,
whose fixes belong to files owned elsewhere, are strict xfails (``KNOWN_OPEN``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

_spec = importlib.util.spec_from_file_location("_bad_inputs", Path(__file__).parents[1] / "_bad_inputs.py")
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


def test_corpus_is_large_and_names_are_unique() -> None:
    names = [case[0] for case in corpus.CASES]
    assert len(names) >= 150 and len(set(names)) == len(names)


@pytest.mark.parametrize("case", corpus.params(pytest))
def test_bad_input_raises_as_torch_does(case: tuple[str, Any, Any, tuple[str, ...]]) -> None:
    torch_program, dc_program = corpus.programs(case)
    torch_exc = corpus.run(torch_program, torch, torch.library.Library)
    # the recorded expectation (which the behaviour test uses without torch) is still torch's
    corpus.check(case, case[2], torch_exc, "torch")
    corpus.cold_memos(dc)  # the first call of each operator: independent of the cases before
    dc_exc = corpus.run(dc_program, dc, dc.Library)
    corpus.check(case, corpus.family(torch_exc), dc_exc, "dispatchcore")


@pytest.mark.parametrize("case", ["meta+cpu", "cpu+meta", "out-cpu", "out-meta", "mul", "where", "cat",
                                  "cpu-scalar"])
def test_meta_and_cpu_operands_fail_naming_the_devices_in_torchs_order(case):
    """The first operand (outputs first) that is not a 0-dim CPU tensor sets the expected device."""
    calls = {
        "meta+cpu": lambda m: m.ones(2, device="meta") + m.ones(2),
        "cpu+meta": lambda m: m.ones(2) + m.ones(2, device="meta"),
        "out-cpu": lambda m: m.add(m.ones(2), m.ones(2, device="meta"), out=m.empty(2)),
        "out-meta": lambda m: m.add(m.ones(2, device="meta"), m.ones(2), out=m.empty(2, device="meta")),
        "mul": lambda m: m.mul(m.ones(2), m.ones(2, device="meta")),
        "where": lambda m: m.where(m.ones(2) > 0, m.ones(2), m.ones(2, device="meta")),
        "cat": lambda m: m.cat([m.ones(2), m.ones(2, device="meta")]),
        "cpu-scalar": lambda m: m.add(m.ones(()), m.ones(2, device="meta")),
    }

    def outcome(m):
        try:
            result = calls[case](m)
        except RuntimeError as e:
            return str(e)
        return (result.device.type, tuple(result.shape))

    assert outcome(dc) == outcome(torch)
