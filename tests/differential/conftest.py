"""Fixtures shared by the differential tests (torch 2.13 is the oracle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


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
