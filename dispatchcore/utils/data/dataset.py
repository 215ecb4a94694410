"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``ConcatDataset``, ``Subset``, ``random_split``.

Mirrors ``torch/utils/data/dataset.py`` (torch 2.13). A map-style dataset answers ``__getitem__``
and ``__len__``; ``random_split`` permutes the indices with ``randperm(n, generator=...)`` as
torch does, so a seeded generator gives torch's split. Invariant: nothing here copies tensors;
items are indexing results of the underlying tensors.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...tensor import Tensor

__all__ = ["ConcatDataset", "Dataset", "IterableDataset", "Subset", "TensorDataset", "random_split"]

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    Example:
        >>> class Squares(Dataset):
        ...     def __getitem__(self, i): return i * i
        ...     def __len__(self): return 4
        >>> [Squares()[i] for i in range(4)]
        [0, 1, 4, 9]
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is an iterable of samples (subclasses define ``__iter__``).

    Example:
        >>> class Count(IterableDataset):
        ...     def __iter__(self): return iter(range(3))
        >>> list(Count())
        [0, 1, 2]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are the tensors' slices along their first dimension: ``tuple(t[i] for t in tensors)``.

    Example:
        >>> import dispatchcore as dc
        >>> ds = TensorDataset(dc.arange(3), dc.arange(3) * 10)
        >>> len(ds), ds[1]
        (3, (tensor(1), tensor(10)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not all(tensors[0].size(0) == tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets (``a + b``).

    Example:
        >>> ds = ConcatDataset([[1, 2], [3]])
        >>> len(ds), ds[2], ds[-1]
        (3, 3, 3)
    """

    @staticmethod
    def cumsum(sequence: Sequence[Any]) -> list[int]:
        found, total = [], 0
        for e in sequence:
            total += len(e)
            found.append(total)
        return found

    def __init__(self, datasets: Sequence[Any]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``.

    Example:
        >>> s = Subset([10, 20, 30, 40], [3, 0])
        >>> len(s), s[0], s[[0, 1]]
        (2, 40, [40, 10])
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            if isinstance(self.dataset, list):  # a plain list cannot take a list of indices
                return [self.dataset[self.indices[i]] for i in idx]
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[int | float], generator: Any = None) -> list[Subset[Any]]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (or fractions summing to 1).

    Fractions become lengths as torch computes them (floors, then the remainder one by one,
    round robin); the permutation is ``randperm(len, generator=generator)`` (the default
    generator when None), so a seeded generator gives torch's subsets.

    Example:
        >>> import dispatchcore as dc
        >>> a, b = random_split(range(10), [0.7, 0.3], generator=dc.Generator().manual_seed(42))
        >>> len(a), len(b)
        (7, 3)
    """
    from ... import randperm  # type: ignore[attr-defined]  # installed from the families

    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    total = int(sum(lengths))
    indices = (randperm(total, generator=generator) if generator is not None else randperm(total)).tolist()
    return [Subset(dataset, indices[offset - length: offset])
            for offset, length in zip(itertools.accumulate(int(n) for n in lengths), (int(n) for n in lengths))]
