"""Dispatch stubs: the per-device-type functions a composite kernel calls past the dispatcher.

Mirrors ``aten/src/ATen/native/DispatchStub.h``. Some CompositeExplicitAutograd kernels do the
device-independent part of an operator (argument checks, broadcasting, the meta shortcut) and hand
the element work to a function picked by *device type*, not by dispatch key. ``copy_`` is the one
dispatchcore models: its composite (``native/explicit.py``) calls ``copy_stub`` for the devices
``Copy.cpp`` supports directly (CPU and CUDA) and redispatches ``aten::_copy_from`` for any other
device, which is how an out-of-tree PrivateUse1 device makes ``copy_`` and ``.to()`` reach its
memory. Backends fill a stub as torch's ``REGISTER_DISPATCH`` does: ``stub.register("cpu", fn)``.

Invariant: a stub holds at most one function per device type; calling it for a device type with
none raises torch's error. A stub is not a dispatch table: ``dump_table`` does not show it, and
no key, guard or mode sees the call (as in torch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["COPY_STUB_DEVICES", "DispatchStub", "copy_stub"]


class DispatchStub:
    """A function per device type (``DispatchStub``), registered by backends.

    Example:
        >>> stub = DispatchStub("demo_stub")
        >>> stub.register("cpu", lambda x: x + 1)
        >>> stub("cpu", 1)
        2
        >>> stub("xla", 1)
        Traceback (most recent call last):
        ...
        RuntimeError: DispatchStub: unsupported device type xla (demo_stub has a function for: cpu)
    """

    __slots__ = ("_impls", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._impls: dict[str, Callable[..., Any]] = {}

    def register(self, device_type: str, fn: Callable[..., Any]) -> None:
        """Make ``fn`` the stub's function for ``device_type`` (a later registration replaces it)."""
        self._impls[device_type] = fn

    def __call__(self, device_type: str, *args: Any) -> Any:
        fn = self._impls.get(device_type)
        if fn is None:
            raise RuntimeError(f"DispatchStub: unsupported device type {device_type} "
                               f"({self.name} has a function for: {', '.join(sorted(self._impls)) or 'none'})")
        return fn(*args)

    def __repr__(self) -> str:
        return f"DispatchStub({self.name!r}, devices={sorted(self._impls)})"


# Copy.cpp's is_supported_device (among the devices dispatchcore has): copy_ calls copy_stub for
# these and aten::_copy_from for any other.
COPY_STUB_DEVICES = frozenset({"cpu", "cuda"})

copy_stub = DispatchStub("copy_stub")
"""``copy_stub(device_type, self, src, non_blocking)``: write ``src`` into ``self`` (broadcast, cast)."""
