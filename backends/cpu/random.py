"""CPU random numbers: the default generator behind ``rand``/``randn``, and ``manual_seed``.

Mirrors ``torch.default_generator`` and ``torch.manual_seed`` for the CPU device. The bits come
from numpy's ``PCG64``, not torch's mt19937, so a seed reproduces dispatchcore's own streams but
not torch's values. ``default_generator`` is re-seeded in place: references to it stay valid.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Generator", "default_generator", "initial_seed", "manual_seed", "seed"]

_DEFAULT_SEED = 67280421310721  # c10::default_rng_seed_val, torch's seed before manual_seed


class Generator:
    """A CPU random generator (``torch.Generator('cpu')``) over a numpy ``Generator``.

    Example:
        >>> g = Generator().manual_seed(0)
        >>> g.initial_seed()
        0
    """

    __slots__ = ("_rng", "_seed", "device")

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self._seed = _DEFAULT_SEED
        self._rng = np.random.Generator(np.random.PCG64(_DEFAULT_SEED))

    def manual_seed(self, seed: int) -> Generator:
        """Seed the generator (``Generator.manual_seed``); negative seeds wrap to uint64 as in torch."""
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise RuntimeError("Overflow when unpacking long long")
        self._seed = seed & ((1 << 64) - 1)
        self._rng.bit_generator.state = np.random.PCG64(self._seed).state
        return self

    def seed(self) -> int:
        """Seed from fresh OS entropy and return the seed used (``Generator.seed``)."""
        value = int(np.random.SeedSequence().entropy) & ((1 << 64) - 1)
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed last set (``Generator.initial_seed``)."""
        return self._seed

    def get_state(self) -> dict[str, Any]:
        """A snapshot of the generator state (numpy's bit-generator state dict)."""
        return dict(self._rng.bit_generator.state)

    def set_state(self, state: dict[str, Any]) -> Generator:
        """Restore a state from ``get_state``."""
        self._rng.bit_generator.state = state
        return self

    @property
    def numpy_generator(self) -> np.random.Generator:
        """The numpy ``Generator`` the CPU kernels draw from."""
        return self._rng

    def __repr__(self) -> str:
        return f"<dispatchcore_backends.cpu.random.Generator seed={self._seed}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default CPU generator (``torch.manual_seed``); returns it.

    Example:
        >>> manual_seed(0) is default_generator
        True
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default CPU generator non-deterministically (``torch.seed``)."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default CPU generator's seed (``torch.initial_seed``)."""
    return default_generator.initial_seed()
