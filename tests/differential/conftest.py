"""Fixtures shared by the differential tests (torch 2.13 is the oracle)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture(scope="module")
def quiet_fake_tensor_log() -> Any:
    """For a module's tests: the backends loaded, and torch's fake-tensor logger (it logs each failing
    meta call) silenced while they run."""
    import dispatchcore as dc

    dc.load_backends()
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


@pytest.fixture
def raises_alike() -> Callable[[Callable[[], Any], Callable[[], Any]], None]:
    """``raises_alike(mine, theirs)``: both calls raise, the same type, and dispatchcore's text is
    the first line of torch's (torch appends its C++ context below it)."""

    def check(mine: Callable[[], Any], theirs: Callable[[], Any]) -> None:
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(type(expected.value)) as got:
            mine()
        assert str(got.value) == str(expected.value).split("\n")[0]

    return check


@pytest.fixture
def torch_ops() -> Callable[[Callable[[], Any]], list[str]]:
    """``torch_ops(fn)``: the aten overloads real torch dispatches while ``fn()`` runs, as a dispatch mode sees them."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    def record(fn: Callable[[], Any]) -> list[str]:
        with Record() as rec:
            fn()
        return rec.names

    return record
