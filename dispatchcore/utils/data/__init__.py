"""``dispatchcore.utils.data``: datasets, samplers and ``DataLoader`` (``torch.utils.data``).

Mirrors ``torch/utils/data/__init__.py`` (torch 2.13), single-process. Invariant: with a seeded
generator, the batch order and ``random_split`` equal torch's (they use ``randperm``/``random_`` on
the same generator states).
"""

from __future__ import annotations

from .dataloader import DataLoader, default_collate, default_convert
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "Subset", "TensorDataset", "default_collate", "default_convert", "random_split"]
