"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset.

Mirrors ``torch/utils/data/sampler.py`` (torch 2.13): ``SequentialSampler``, ``RandomSampler``
(``randperm`` on the given generator, or on a fresh generator seeded from one ``random_()`` draw
of the default generator, exactly as torch), ``BatchSampler``. Invariant: with the same generator
state, the indices equal torch's (given dispatchcore's bit-exact ``randperm``/``random_``/``randint``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from typing import Any, Generic, TypeVar

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """The base class of samplers: an iterable of indices (or of lists of indices)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        if data_source is not None:
            import warnings

            warnings.warn("`data_source` argument is not used and will be removed in 2.2.0.You may still have "
                          "custom implementation that utilizes it.", stacklevel=2)

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``.

    Example:
        >>> list(SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Random indices: a permutation (or ``num_samples`` of them, with ``replacement`` drawn by ``randint``).

    Example:
        >>> import dispatchcore as dc
        >>> list(RandomSampler(range(5), generator=dc.Generator().manual_seed(0)))
        [4, 0, 1, 3, 2]
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        import dispatchcore as dc

        randint, randperm = dc.randint, dc.randperm  # type: ignore[attr-defined]  # installed from the families

        n = len(self.data_source)
        if self.generator is None:
            seed = int(dc.empty((), dtype=dc.int64).random_().item())
            generator = dc.Generator()
            generator.manual_seed(seed)
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=dc.int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=dc.int64, generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Group another sampler's indices into lists of ``batch_size`` (the last one shorter unless ``drop_last``).

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
