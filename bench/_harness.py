"""Timing harness for ``bench/compare.py``: timeit-style, interleaved, min and median.

The method is the one of the performance anchors (``bench/anchors/_harness.py`` in the shared
tree, described in ``docs/performance.md``), re-implemented here so dispatchcore does not import
the anchors:

* every entry is a ``timeit.Timer`` over a statement string with explicit globals, so no lambda
  or helper call wraps the measured expression;
* each entry is warmed up once, then calibrated so that one sample runs for at least ``target``
  seconds (the loop count grows 4x at a time, then jumps close to the target);
* ``rounds`` rounds are taken; in each round every entry of the group is sampled once, in an
  order rotated by one per round, so load spikes on a shared machine hit every entry alike;
* per entry we keep the per-call time of every round and report min (primary, timeit's advice)
  and median, in nanoseconds;
* the garbage collector is off while sampling (timeit's default) unless a group asks for it;
* an entry may stand for ``per`` operations (an inner loop around a guard entered once);
  its times are divided by ``per``.

``pin_threads`` pins torch (when it is imported) and numpy's OpenBLAS to one thread, as the
anchors do: on a shared 2-core machine a 2-thread pool stalls whenever the other core is busy.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import sys
import timeit
from dataclasses import dataclass, field

__all__ = ["Entry", "Timing", "env_info", "fmt_ns", "measure", "pin_threads"]


@dataclass(frozen=True)
class Entry:
    """One statement to time: ``stmt`` runs in a copy of ``glb``; it performs ``per`` operations."""

    name: str
    stmt: str
    glb: dict = field(repr=False)
    per: int = 1


@dataclass(frozen=True)
class Timing:
    """Per-operation times of one entry over all rounds, in nanoseconds."""

    name: str
    min_ns: float
    median_ns: float
    loops: int
    samples: tuple[float, ...] = field(repr=False)


def fmt_ns(ns: float | None, sign: bool = False) -> str:
    """``ns`` as a short human string (``812.3 ns``, ``1.45 us``); ``sign`` forces ``+``/``-``."""
    if ns is None:
        return "-"
    prefix = ("+" if ns >= 0 else "-") if sign else ("-" if ns < 0 else "")
    a = abs(ns)
    if a < 1e3:
        return f"{prefix}{a:.1f} ns"
    if a < 1e6:
        return f"{prefix}{a / 1e3:.2f} us"
    return f"{prefix}{a / 1e6:.2f} ms"


def _calibrate(timer: timeit.Timer, target: float) -> int:
    number = 1
    while True:
        # the best of three: one load spike must not leave a case with a handful of loops per sample
        t = min(timer.timeit(number) for _ in range(3))
        if t >= target:
            return number
        if t > target / 50:  # a usable estimate: jump close to the target
            return max(number, int(number * target / t) + 1)
        number *= 4


def measure(entries: list[Entry], *, rounds: int = 21, target: float = 0.02,
            gc_enabled: bool = False) -> dict[str, Timing]:
    """Time ``entries`` side by side (interleaved, rotated rounds); returns ``{name: Timing}``."""
    setup = "gc.enable()" if gc_enabled else "pass"
    timers = []
    for e in entries:
        glb = dict(e.glb)
        glb.setdefault("gc", gc)
        timers.append((e, timeit.Timer(e.stmt, setup=setup, globals=glb)))
    numbers = {}
    for e, t in timers:
        t.timeit(1)  # warm-up: first-call caches, lazy attribute lookups
        numbers[e.name] = _calibrate(t, target)
    samples: dict[str, list[float]] = {e.name: [] for e, _ in timers}
    n = len(timers)
    for r in range(max(1, rounds)):
        for i in range(n):
            e, t = timers[(i + r) % n]
            num = numbers[e.name]
            samples[e.name].append(t.timeit(num) / (num * e.per) * 1e9)
    return {
        e.name: Timing(e.name, min(samples[e.name]), statistics.median(samples[e.name]),
                       numbers[e.name] * e.per, tuple(samples[e.name]))
        for e, _ in timers
    }


# --- threads and environment ------------------------------------------------------------------
def _openblas():
    import ctypes
    import glob

    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        return None
    libdir = os.path.dirname(np.__file__) + ".libs"
    for path in sorted(glob.glob(os.path.join(libdir, "*openblas*"))):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def _sym(lib, *names):
    for name in names:
        f = getattr(lib, name, None) if lib is not None else None
        if f is not None:
            return f
    return None


def openblas_threads() -> int:
    f = _sym(_openblas(), "scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
             "openblas_get_num_threads")
    return f() if f is not None else -1


def pin_threads(n: int | None = None) -> None:
    """Pin torch intra-op threads (if torch is imported) and OpenBLAS to ``n`` threads.

    ``n`` defaults to ``$BENCH_THREADS`` or 1; 0 leaves both libraries' defaults.
    """
    if n is None:
        n = int(os.environ.get("BENCH_THREADS", "1"))
    if n <= 0:
        return
    f = _sym(_openblas(), "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
             "openblas_set_num_threads")
    if f is not None:
        f(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def env_info() -> dict[str, object]:
    """Python, CPU, load and library versions and thread counts, for the report header."""
    info: dict[str, object] = {
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["loadavg_1_5_15"] = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        pass
    try:
        import numpy as np

        info["numpy"] = np.__version__
        info["openblas_threads"] = openblas_threads()
    except ImportError:  # pragma: no cover
        info["numpy"] = "unavailable"
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    else:
        info["torch"] = "not imported"
    return info
