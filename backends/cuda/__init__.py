"""CUDA backend: CUDA C kernels for the core aten operators, launched through pycuda.

Registers through the public ``Library`` API at the ``CUDA`` key, as the CPU backend does at
``CPU``; the autograd formulas (Autograd alias key) and the composites then work on CUDA tensors
unchanged. Registering is pure Python: pycuda is imported on the first CUDA tensor
(``runtime.get_runtime``), and ``dispatchcore.cuda`` raises its one clear error if pycuda, the
NVIDIA driver or a GPU is missing. The kernels' CUDA C lives in ``kernels/*.cu`` (package data),
is built per (family, dtype) with nvcc on first use and cached on disk. Invariant: one live
registration at a time (``register()`` returns it while it lives).
"""

from __future__ import annotations

from typing import Any

from dispatchcore import Library, RegistrationHandle, register_device
from dispatchcore import cuda as _cuda

from . import families, kernels

# the core operators' kernels, then the family operators' (families.py)
KERNELS: tuple[tuple[str, Any], ...] = (*kernels.KERNELS, *families.KERNELS.items())

__all__ = ["KERNELS", "device_count", "is_available", "register", "registered"]

_library: Library | None = None
_handles: list[RegistrationHandle] = []


def is_available() -> bool:
    """True when CUDA tensors can be made (pycuda, a driver and a GPU); never raises."""
    return _cuda.is_available()


def device_count() -> int:
    """The number of CUDA devices; 0 without pycuda, a driver or a GPU."""
    return _cuda.device_count()


def registered() -> Library | None:
    """The backend's own live Library (from an earlier ``register()``), or None."""
    if _library is not None and _handles and all(h.active for h in _handles):
        return _library
    return None


def register(lib: Library | None = None) -> Library:
    """Register every CUDA kernel; returns the owning Library (destroy it to unregister).

    Needs no pycuda, driver or GPU: kernels run (and CUDA is set up) only when a CUDA tensor is
    used.

    Args:
        lib: an ``IMPL`` library for ``aten`` at the ``CUDA`` key to register into. Without it,
            the backend's own library is created, or returned as is while it is alive.

    Returns:
        The Library holding the registrations.

    Example:
        >>> import dispatchcore_backends.cuda as cuda
        >>> lib = cuda.register()
        >>> cuda.register() is lib
        True
    """
    global _library
    register_device("cuda", "CUDA")
    if lib is None:
        live = registered()
        if live is not None:
            return live
        lib = Library("aten", "IMPL", dispatch_key="CUDA")
        own = True
    else:
        own = False
    handles = [lib.impl(name, kernel) for name, kernel in KERNELS]
    if own:
        _library = lib
        _handles[:] = handles
    return lib
