"""The CPU random engine: torch's ``CPUGeneratorImpl`` (mt19937), bit for bit, and its draws.

Mirrors ``aten/src/ATen/CPUGeneratorImpl.cpp`` and ``aten/src/ATen/core/MT19937RNGEngine.h``:

* seeding: ``manual_seed(s)`` keeps the 64-bit seed (``initial_seed``) and seeds mt19937 with its low
  32 bits by the reference ``init_genrand`` recurrence; numpy's ``MT19937`` with its legacy seeding
  runs the same recurrence and the same tempering, so ``random_raw`` is torch's 32-bit stream.
* ``random()`` is one 32-bit output; ``random64()`` joins two, the first as the high word
  (``make64BitsFrom32Bits``).
* the two cached Box-Muller samples (``next_float_normal_sample``, ``next_double_normal_sample``),
  reset by every seeding.
* ``get_state``/``set_state``: torch's 5056-byte ``CPUGeneratorImplState`` (the legacy
  ``THGeneratorState``: initial seed, ``left``, ``seeded``, ``next``, 624 words widened to uint64, the
  cached double sample in ``normal_y``/``normal_is_valid``; then the cached float sample), so a
  state taken from torch can be set here and the other way round (torch 2.13 refuses every other
  size, the legacy 5048-byte one included, and so does ``set_state``).

Invariant: after the same seed (or the same state bytes), every draw equals torch's.

Example:
    >>> g = CPUGenerator().manual_seed(0)
    >>> int(g.random(1)[0])
    2357136044
"""

from __future__ import annotations

import os
import struct
from typing import Any

import numpy as np

__all__ = ["DEFAULT_SEED", "STATE_SIZE", "CPUGenerator", "default_generator", "initial_seed", "manual_seed",
           "resolve", "seed"]

DEFAULT_SEED = 67280421310721  # c10::default_rng_seed_val
_N = 624  # MERSENNE_STATE_N
_U64 = (1 << 64) - 1
# THGeneratorState: uint64 seed, int left, int seeded, uint64 next, uint64 state[624], double normal_x,
# normal_y, normal_rho, int normal_is_valid (+4 bytes padding) = 5048; then float + bool (+3) = 5056
_LEGACY = struct.Struct(f"<QiiQ{_N}Qdddi4x")
_STATE = struct.Struct(f"<{_LEGACY.size}sf?3x")
STATE_SIZE = _STATE.size


class CPUGenerator:
    """Torch's ``CPUGeneratorImpl``: mt19937 seeded as c10 seeds it, with its two cached normals.

    Example:
        >>> g = CPUGenerator().manual_seed(1)
        >>> g.initial_seed()
        1
    """

    __slots__ = ("_bg", "_fresh", "_seed", "next_double_normal", "next_float_normal")

    def __init__(self, seed_value: int = DEFAULT_SEED) -> None:
        self._bg = np.random.MT19937(0)
        self.manual_seed(seed_value)

    device_type = "cpu"

    # --- seeding ------------------------------------------------------------------------------------------------
    def manual_seed(self, seed_value: int) -> CPUGenerator:
        """``set_current_seed``: the seed wraps to uint64; mt19937 takes its low 32 bits."""
        seed_value = int(seed_value)
        if not -(1 << 63) <= seed_value < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed_value & _U64
        self._bg._legacy_seeding(self._seed & 0xFFFFFFFF)
        self._fresh = True  # torch's engine says next=0, left=1 until the first draw
        self.next_double_normal: float | None = None
        self.next_float_normal: float | None = None
        return self

    def seed(self) -> int:
        """Seed from OS entropy (``Generator.seed``); returns the seed used."""
        value = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The 64-bit seed last set."""
        return self._seed

    # --- raw draws ----------------------------------------------------------------------------------------------
    def random(self, n: int) -> np.ndarray:
        """``n`` successive ``random()`` values (uint32 as uint64)."""
        if n <= 0:
            return np.zeros(0, np.uint64)
        self._fresh = False
        return self._bg.random_raw(int(n))

    def random64(self, n: int) -> np.ndarray:
        """``n`` successive ``random64()`` values: two 32-bit draws each, the first the high word."""
        r = self.random(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # --- torch's transforms (TransformationHelper.h) ------------------------------------------------------------
    def uniform_float32(self, n: int) -> np.ndarray:
        """``uniform_real_distribution<float>(0, 1)``: 24 bits of ``random()`` over 2**24 (exact in float32)."""
        return ((self.random(n) & np.uint64((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24))

    def uniform_float64(self, n: int) -> np.ndarray:
        """``uniform_real_distribution<double>(0, 1)``: 53 bits of ``random64()`` over 2**53."""
        return (self.random64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)

    def normal_scalar(self, n: int) -> np.ndarray:
        """Draw ``n`` standard normal doubles as torch's scalar path does.

        ``n`` draws of ``normal_distribution<double>(0, 1)``: Box-Muller on two doubles, cos first,
        the sin kept for the next call (``next_double_normal_sample``).
        """
        out = np.empty(n, np.float64)
        start = 0
        if n and self.next_double_normal is not None:
            out[0] = self.next_double_normal
            self.next_double_normal = None
            start = 1
        pairs = (n - start + 1) // 2
        if pairs:
            u = self.uniform_float64(2 * pairs)
            u1, u2 = u[0::2], u[1::2]
            r = np.sqrt(-2.0 * np.log1p(-u2))
            theta = 2.0 * np.pi * u1
            values = np.empty(2 * pairs)
            values[0::2], values[1::2] = r * np.cos(theta), r * np.sin(theta)
            out[start:] = values[: n - start]
            if (n - start) % 2:
                self.next_double_normal = float(values[-1])
        return out

    def permutation(self, n: int) -> np.ndarray:
        """Torch's CPU ``randperm`` of ``n``.

        torch's CPU ``randperm``: swaps with ``random() % (n - i)`` for ``n < 2**32 / 20``, else the
        inside-out Fisher-Yates with ``random64() % (i + 1)`` (``randperm_cpu`` in TensorFactories.cpp).
        """
        n = int(n)
        if n < 0xFFFFFFFF // 20:
            r = list(range(n))
            if n > 1:
                z = (self.random(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
                for i, zi in enumerate(z):
                    j = zi + i
                    r[i], r[j] = r[j], r[i]
            return np.array(r, np.int64)
        z = (self.random64(n) % np.arange(1, n + 1, dtype=np.uint64)).astype(np.int64)
        out = np.empty(n, np.int64)
        for i in range(n):
            out[i] = out[z[i]]
            out[z[i]] = i
        return out

    # --- state --------------------------------------------------------------------------------------------------
    def get_state(self) -> bytes:
        """Torch's ``CPUGeneratorImplState`` bytes (5056)."""
        st = self._bg.state["state"]
        pos = int(st["pos"])
        nxt, left = (0, 1) if self._fresh else (pos, _N + 1 - pos)
        dbl = self.next_double_normal
        legacy = _LEGACY.pack(self._seed, left, 1, nxt, *(int(k) for k in st["key"]), 0.0,
                              0.0 if dbl is None else dbl, 0.0, int(dbl is not None))
        flt = self.next_float_normal
        return _STATE.pack(legacy, 0.0 if flt is None else flt, flt is not None)

    def set_state(self, data: bytes) -> CPUGenerator:
        """Restore torch's state bytes (``CPUGeneratorImpl::set_state``)."""
        data = bytes(data)
        if len(data) != _STATE.size:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE.size} but found the input RNG "
                               f"state size to be {len(data)}")
        legacy, flt, flt_valid = _STATE.unpack(data)
        fields = _LEGACY.unpack(legacy)
        seed_value, left, _seeded, nxt = fields[:4]
        key = np.array(fields[4:4 + _N], np.uint64).astype(np.uint32)
        normal_y, normal_valid = fields[4 + _N + 1], fields[4 + _N + 3]
        if left < 1 or left > _N + 1 or nxt > _N:
            raise RuntimeError("The RNG state is invalid: mt19937's 'left' and 'next' are out of range")
        pos = _N if left == 1 else nxt
        self._bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._seed = seed_value
        self._fresh = left == 1 and nxt == 0
        self.next_double_normal = float(normal_y) if normal_valid else None
        self.next_float_normal = float(np.float32(flt)) if flt_valid else None
        return self

    def __repr__(self) -> str:
        return f"<CPUGenerator seed={self._seed}>"


default_generator = CPUGenerator()


def resolve(generator: Any) -> CPUGenerator:
    """Return the engine a kernel draws from.

    The engine a kernel draws from: the default one for ``None``, else the generator's own
    (a ``dispatchcore.Generator`` holds it as ``_impl``), refused with torch's error for another device.
    """
    if generator is None:
        return default_generator
    if isinstance(generator, CPUGenerator):
        return generator
    impl = getattr(generator, "_impl", None)
    if isinstance(impl, CPUGenerator):
        return impl
    device = getattr(generator, "device", None)
    kind = getattr(device, "type", device)
    raise RuntimeError(f"Expected a 'cpu' device type for generator but found '{kind}'")


def manual_seed(seed_value: int) -> CPUGenerator:
    """Seed the default CPU engine (``torch.manual_seed`` reaches it through a seed hook)."""
    return default_generator.manual_seed(seed_value)


def seed() -> int:
    """Seed the default CPU engine from OS entropy."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default CPU engine's seed."""
    return default_generator.initial_seed()
