"""``dispatchcore.cuda``: is a GPU usable, how many, and the one clear error when it is not.

Mirrors the small part of ``torch/cuda/__init__.py`` a user meets first: ``is_available()`` and
``device_count()`` answer without raising; ``init()`` sets CUDA up lazily (pycuda, the driver,
device 0's primary context) and raises ``CudaUnavailableError`` naming which of the three is
missing and how to get it. Nothing here imports pycuda before a CUDA tensor is asked for:
``import dispatchcore`` stays pure Python. The kernels live in the ``dispatchcore_backends.cuda``
backend, which calls ``init()`` on its first allocation.
"""

from __future__ import annotations

import atexit
import threading
import warnings
from typing import Any

from .keys import DispatchKey
from .tensor import register_device

__all__ = ["CudaUnavailableError", "DEVICE_MISMATCH", "DEVICE_MISMATCH_ARGUMENT", "current_device",
           "device_count", "get_device_name", "init", "is_available", "is_initialized", "synchronize"]

# TensorIterator's check (aten/src/ATen/TensorIterator.cpp, compute_types): the first non-CPU
# operand sets the common device, a later operand on another device fails (0-dim CPU tensors pass
# as scalars). Formatted with (common device, other device): "... devices, cuda:0 and cpu!"
DEVICE_MISMATCH = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"
# The generated wrappers' check of non-TensorIterator ops (mm, bmm, cat, nll_loss_forward ...):
# aten/src/ATen/core/adaption.cpp, formatted with (argument, its device, common device, op name).
DEVICE_MISMATCH_ARGUMENT = ("Expected all tensors to be on the same device, but got {} is on {}, different from "
                            "other tensors on {} (when checking argument in method wrapper_CUDA_{})")

# torch knows the cuda device type even without a GPU; tensors on it carry the CUDA key set.
register_device("cuda", DispatchKey.CUDA)

_INSTALL = ("Install it with `pip install dispatchcore[cuda]`. pycuda ships no wheels, so that builds it "
            "from source: it needs the CUDA toolkit (nvcc, cuda.h; CUDA_ROOT or nvcc on PATH), a C++ "
            "compiler and numpy; see the README's 'CUDA backend' section for a machine without a driver.")


class CudaUnavailableError(RuntimeError):
    """CUDA was asked for (``device="cuda"``) but pycuda, the NVIDIA driver or a GPU is missing.

    ``missing`` says which: ``"pycuda"``, ``"driver"`` or ``"device"``.
    """

    def __init__(self, missing: str, message: str) -> None:
        super().__init__(message)
        self.missing = missing


class _State:
    """What ``init()`` found: pycuda's driver module and the pushed primary context, or the error."""

    __slots__ = ("driver", "device", "context", "error", "threads")

    def __init__(self) -> None:
        self.driver: Any = None
        self.device: Any = None
        self.context: Any = None
        self.error: CudaUnavailableError | None = None
        self.threads: set[int] = set()


_lock = threading.Lock()
_state: _State | None = None


def _probe() -> _State:
    """Import pycuda, load the driver, find device 0 and push its primary context (once).

    pycuda's own import-time warnings (deprecations in its dependencies) are not the user's
    concern, and must not turn into errors where warnings are errors (pytest's filterwarnings).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _probe_quietly()


def _probe_quietly() -> _State:
    state = _State()
    try:
        import pycuda  # noqa: F401 - the package alone needs no driver
    except ImportError as e:
        state.error = CudaUnavailableError(
            "pycuda", f"device='cuda' needs pycuda, which is not installed ({e}). {_INSTALL}")
        return state
    try:
        import pycuda.driver as drv
    except ImportError as e:  # pycuda's _driver.so links libcuda.so.1, the driver's library
        old = "undefined symbol" in str(e)
        why = ("the NVIDIA driver is older than the CUDA headers pycuda was built against (a CUDA 13 "
               "build needs driver >= 580); update the driver or rebuild pycuda against this CUDA"
               if old else "install the NVIDIA driver (libcuda.so.1, e.g. Debian's libcuda1 or NVIDIA's "
               "installer); a machine without a GPU cannot run CUDA tensors")
        state.error = CudaUnavailableError(
            "driver", f"device='cuda' needs the NVIDIA driver, which pycuda could not load ({e}): {why}.")
        return state
    try:
        drv.init()
        count = drv.Device.count()
    except drv.Error as e:  # pycuda's RuntimeError is not builtins.RuntimeError
        state.error = CudaUnavailableError(
            "device", f"device='cuda' needs a CUDA-capable GPU, and the NVIDIA driver found none ({e}). "
                      "Run on a machine with an NVIDIA GPU, or use device='cpu'.")
        return state
    if count == 0:
        state.error = CudaUnavailableError(
            "device", "device='cuda' needs a CUDA-capable GPU, and the NVIDIA driver found none "
                      "(Device.count() == 0). Run on a machine with an NVIDIA GPU, or use device='cpu'.")
        return state
    state.driver = drv
    state.device = drv.Device(0)
    # the primary context is the one torch, cupy and the runtime API share; never pycuda.autoinit
    state.context = state.device.retain_primary_context()
    state.context.push()
    state.threads.add(threading.get_ident())
    atexit.register(_shutdown, state)
    return state


def _shutdown(state: _State) -> None:
    # atexit runs last-in first-out: the backend's own exit hook (registered after this one)
    # has released its memory pool by now
    try:
        state.context.pop()
    except Exception:  # noqa: BLE001 - interpreter exit: nothing left to report to
        pass


def _get_state() -> _State:
    global _state
    state = _state
    if state is None:
        with _lock:
            if _state is None:
                _state = _probe()
            state = _state
    return state


def init() -> None:
    """Set CUDA up now (``torch.cuda.init``); idempotent.

    Raises:
        CudaUnavailableError: pycuda is not installed, the NVIDIA driver cannot be loaded, or it
            finds no GPU; the message says which, and how to get it.
    """
    state = _get_state()
    if state.error is not None:
        raise state.error
    ident = threading.get_ident()
    if ident not in state.threads:  # a CUDA context is current per thread
        state.context.push()
        state.threads.add(ident)


def driver() -> Any:
    """Pycuda's driver module, after ``init()``: for the CUDA backend."""
    init()
    return _state.driver  # type: ignore[union-attr]


def is_available() -> bool:
    """True when CUDA tensors can be made here (``torch.cuda.is_available``); never raises.

    Example:
        >>> isinstance(is_available(), bool)
        True
    """
    try:
        return _get_state().error is None
    except Exception:  # noqa: BLE001 - a question, not an operation: a broken install answers False
        return False


def is_initialized() -> bool:
    """True once ``init()`` has succeeded."""
    return _state is not None and _state.error is None


def device_count() -> int:
    """The number of CUDA devices (0 without pycuda, a driver or a GPU); never raises."""
    if not is_available():
        return 0
    try:
        return int(_state.driver.Device.count())  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001
        return 0


def current_device() -> int:
    """The device CUDA tensors are made on: dispatchcore uses device 0 only."""
    init()
    return 0


def get_device_name(device: int = 0) -> str:
    """The GPU's name (``torch.cuda.get_device_name``)."""
    init()
    return str(_state.driver.Device(device).name())  # type: ignore[union-attr]


def synchronize() -> None:
    """Wait for every kernel launched so far (``torch.cuda.synchronize``)."""
    init()
    _state.driver.Context.synchronize()  # type: ignore[union-attr]


def _reset(state: Any = None) -> Any:
    """Forget (or restore) what ``init()`` found; returns the old state. For tests only."""
    global _state
    with _lock:
        old, _state = _state, state
    return old
