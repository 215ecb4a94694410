"""Shared fixtures: a fresh namespace per test, a dispatch-argument carrier, TLS hygiene.

Also: every `pytest.raises` in the suite checks that the caught dispatchcore error chains no
exception dispatchcore raised and caught itself (no "During handling of the above exception").
"""

from __future__ import annotations

import itertools
import os
import sys
import warnings
from typing import Any

import dispatchcore_backends as _backends
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


def _doubling_function(library: Any) -> Any:
    class Twice(library.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Twice


@pytest.fixture
def twice():
    """The smallest custom Function (``x * 2``, its gradient ``g * 2``) of a library: ``twice(dc)``."""
    return _doubling_function


@pytest.fixture
def aten_impl():
    """An IMPL library on aten whose override warnings are silenced (they are expected here)."""
    lib = dc.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield lib
    lib._destroy()


@pytest.fixture(autouse=True)
def _tls_restored():
    """Every test must leave the thread-local key sets as it found them."""
    before = tls_get()
    yield
    assert tls_get() == before, "a test leaked thread-local dispatch state"


# --- no internal exception chained to a user-facing error ---------------------------------------
_PACKAGE_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (dc, _backends))
_raises = pytest.raises


def _internal(exc: BaseException | None) -> bool:
    """Whether ``exc`` was raised inside dispatchcore or its backends (its innermost frame is)."""
    tb = exc.__traceback__ if exc is not None else None
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIRS)


def assert_no_internal_chain(exc: BaseException, handled: BaseException | None = None) -> None:
    """A dispatchcore error chains no exception that dispatchcore raised and caught itself.

    ``handled`` is the exception the test itself was handling around the call, which Python
    chains to anything raised meanwhile.
    """
    for inner in (exc.__cause__, exc.__context__):
        assert inner is handled or not (_internal(exc) and _internal(inner)), (
            f"{type(exc).__name__}: {exc!s:.200}\nchains the internal {type(inner).__name__}: {inner!s:.200}")


class _Checked:
    """``pytest.raises`` as a context manager, checking the caught exception's chain on exit."""

    def __init__(self, context: Any) -> None:
        self._context = context

    def __enter__(self) -> Any:
        self._handled = sys.exc_info()[1]
        return self._context.__enter__()

    def __exit__(self, *exc_info: Any) -> bool:
        caught = self._context.__exit__(*exc_info)
        if caught:
            assert_no_internal_chain(exc_info[1], self._handled)
        return caught

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def _checked_raises(*args: Any, **kwargs: Any) -> Any:
    result = _raises(*args, **kwargs)
    if isinstance(result, pytest.ExceptionInfo):  # the callable form: already caught
        assert_no_internal_chain(result.value, sys.exc_info()[1])
        return result
    return _Checked(result)


# Every error any test provokes through pytest.raises is checked, not only the corpus's.
pytest.raises = _checked_raises
