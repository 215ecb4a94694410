"""Shared fixtures: a fresh namespace per test, a dispatch-argument carrier, TLS hygiene."""

from __future__ import annotations

import itertools

import pytest

import dispatchcore as dc
from dispatchcore.tls import tls_get

_counter = itertools.count()


class Carrier:
    """A test-only dispatch argument: anything with ``_key_bits`` is dispatched on."""

    __slots__ = ("_key_bits", "name")

    def __init__(self, keys: object = "CPU", name: str = "") -> None:
        if isinstance(keys, str):
            keys = dc.tensor_keyset(keys)
        self._key_bits = int(keys)
        self.name = name

    def __repr__(self) -> str:
        return f"Carrier({dc.DispatchKeySet.from_raw(self._key_bits)})"


@pytest.fixture
def carrier():
    return Carrier


@pytest.fixture
def ns():
    """A namespace no other test uses."""
    return f"t{next(_counter)}_{id(object()) % 10000}"


@pytest.fixture
def lib(ns):
    """A DEF Library in a fresh namespace, destroyed after the test."""
    library = dc.Library(ns, "DEF")
    yield library
    library._destroy()


@pytest.fixture(autouse=True)
def _tls_restored():
    """Every test must leave the thread-local key sets as it found them."""
    before = tls_get()
    yield
    assert tls_get() == before, "a test leaked thread-local dispatch state"
