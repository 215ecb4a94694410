"""The device runtime: allocation, host/device copies, module builds and kernel launches.

The only module of the backend that touches pycuda, and only inside ``Runtime.__init__`` (reached
through ``get_runtime()`` on the first CUDA tensor): importing it, or registering the backend,
needs no pycuda, driver or GPU. ``dispatchcore.cuda.init()`` does the setup (pycuda, driver, the
primary context of device 0) and raises its one clear ``CudaUnavailableError`` when something is
missing. Kernels are looked up per (op, dtype) and built lazily per module (family, dtype) with
nvcc (``sources.compile_cubin``, disk-cached), then loaded with ``module_from_buffer``.
"""

from __future__ import annotations

import atexit
import threading
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from dispatchcore import cuda as _cuda

from . import sources

__all__ = ["Runtime", "get_runtime", "set_runtime"]


class Runtime:
    """pycuda behind the few calls the backend makes; one per process (``get_runtime``)."""

    def __init__(self) -> None:
        drv = _cuda.driver()  # raises CudaUnavailableError naming what is missing
        self.drv = drv
        major, minor = drv.Device(0).compute_capability()
        self.arch = f"sm_{major}{minor}"
        try:  # pycuda's caching allocator: cuMemAlloc/cuMemFree synchronise, a pool does not
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its dependencies' import-time deprecations
                from pycuda.tools import DeviceMemoryPool

            self.pool: Any = DeviceMemoryPool()
        except ImportError:
            self.pool = None
        self._lock = threading.Lock()
        self._modules: dict[tuple[str, str], Any] = {}
        self._functions: dict[str, Any] = {}
        self._formats = {s.name: sources.arg_format(s) for fam, codes in sources.FAMILIES.items()
                         for code in codes for s in sources.specs(fam, code)}
        atexit.register(self.close)  # runs before dispatchcore.cuda pops the context (LIFO)

    # --- memory ---------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> Any:
        """A device allocation of at least ``nbytes`` (``int()`` of it is the address)."""
        nbytes = max(int(nbytes), 1)  # cuMemAlloc refuses 0 bytes; an empty tensor still has a storage
        if self.pool is not None:
            return self.pool.allocate(nbytes)
        return self.drv.mem_alloc(nbytes)

    def htod(self, ptr: int, host: np.ndarray) -> None:
        self.drv.memcpy_htod(ptr, host)

    def dtoh(self, host: np.ndarray, ptr: int) -> None:
        self.drv.memcpy_dtoh(host, ptr)

    def dtod(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self.drv.memcpy_dtod(dst, src, nbytes)

    def synchronize(self) -> None:
        self.drv.Context.synchronize()

    def close(self) -> None:
        """Give pooled memory back before the context goes (interpreter exit)."""
        if self.pool is not None:
            try:
                self.pool.stop_holding()
                self.pool.free_held()
            except Exception:  # noqa: BLE001 - interpreter exit
                pass

    # --- kernels --------------------------------------------------------------------------------
    def module(self, family: str, code: str) -> Any:
        """The loaded module of (family, dtype), built on first use."""
        key = (family, code)
        mod = self._modules.get(key)
        if mod is None:
            cubin = sources.compile_cubin(sources.module_source(family, code), self.arch)
            with self._lock:
                mod = self._modules.get(key)
                if mod is None:
                    mod = self._modules[key] = self.drv.module_from_buffer(cubin)
        return mod

    def function(self, family: str, op: str, code: str) -> Any:
        """The prepared kernel ``op`` for dtype ``code`` (cached per (op, dtype))."""
        name = sources.kernel_name(op, code)
        fn = self._functions.get(name)
        if fn is None:
            fmt = self._formats.get(name)
            if fmt is None:
                raise NotImplementedError(f"dispatchcore's CUDA backend has no kernel {name}")
            fn = self.module(family, code).get_function(name)
            fn.prepare(fmt)
            self._functions[name] = fn
        return fn

    def launch(self, family: str, op: str, code: str, grid: Sequence[int], args: Sequence[Any],
               shared: int = 0) -> None:
        """Launch ``op`` on ``grid`` blocks of ``sources.BLOCK`` threads (asynchronous)."""
        fn = self.function(family, op, code)
        fn.prepared_call(tuple(grid), (sources.BLOCK, 1, 1), *args, shared_size=shared)

    def prebuild(self, modules: Iterable[tuple[str, str]], workers: int = 8) -> None:
        """Build many modules at once (nvcc runs in parallel); then they load without delay."""
        todo = [(f, c) for f, c in modules if (f, c) not in self._modules and c in sources.FAMILIES[f]]
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            cubins = list(pool.map(lambda fc: sources.compile_cubin(sources.module_source(*fc), self.arch), todo))
        for key, cubin in zip(todo, cubins):
            if key not in self._modules:
                self._modules[key] = self.drv.module_from_buffer(cubin)


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def get_runtime() -> Runtime:
    """The process's runtime, made on first use (this is where pycuda is first imported)."""
    rt = _runtime
    if rt is None:
        return _make_runtime()
    _cuda.init()  # cheap once set up: makes the context current in a new thread
    return rt


def _make_runtime() -> Runtime:
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = Runtime()
        return _runtime


def set_runtime(rt: Runtime | None) -> Runtime | None:
    """Replace the runtime (None: make a new one on next use); returns the old one. For tests."""
    global _runtime
    with _runtime_lock:
        old, _runtime = _runtime, rt
    return old
