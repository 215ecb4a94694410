"""Backend discovery through the ``dispatchcore.backends`` entry-point group, done lazily.

``import dispatchcore`` never imports a backend (``importlib.metadata`` alone costs ~100 ms):
backends load on ``load_backends()`` or, transparently, the first time a call finds no kernel
(the dispatcher's slow path retries once after loading), so the call path pays nothing.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["load_backends", "loaded_backends"]

GROUP = "dispatchcore.backends"
_lock = threading.Lock()
_loaded: dict[str, Any] = {}
_done = False


def load_backends() -> dict[str, Any]:
    """Import and register every installed backend once; returns name -> its registration result.

    Example:
        >>> sorted(load_backends())  # doctest: +SKIP
        ['cpu', 'meta']
    """
    global _done
    if _done:
        return dict(_loaded)
    with _lock:
        if not _done:
            from importlib.metadata import entry_points

            for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
                if ep.name in _loaded:
                    continue
                register = ep.load()
                _loaded[ep.name] = register()
            _done = True
    return dict(_loaded)


def loaded_backends() -> list[str]:
    """Names of the backends loaded so far."""
    return sorted(_loaded)


def backends_pending() -> bool:
    """True until discovery has run (the dispatcher's slow path checks this before erroring)."""
    return not _done
