"""``DataLoader`` and ``default_collate``: batches of a dataset, loaded in this process.

Mirrors ``torch/utils/data/dataloader.py`` and ``_utils/collate.py`` (torch 2.13), single-process:
the index sampler (``SequentialSampler``/``RandomSampler`` wrapped in a ``BatchSampler``) gives
index lists, the fetcher reads the samples (``__getitems__`` when the dataset has it) and the
collate function stacks them. Each new iterator draws its base seed with
``empty((), dtype=int64).random_(generator=loader.generator)`` *after* creating the sampler's
iterator and before its first index, as torch's ``_BaseDataLoaderIter`` does, so a seeded
``generator`` (or the default generator after ``manual_seed``) gives torch's batch order.
``num_workers > 0`` loads in this process too (same batches, in order; no worker processes).
Invariant: iterating a loader never changes the dataset.
"""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_CONVERT_ERROR = "default_convert: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _dc() -> Any:
    import dispatchcore

    return dispatchcore


def _numpy_tensor(array: np.ndarray, error: str) -> Tensor:
    if array.dtype.kind in "OSUV":  # numpy strings and objects have no tensor dtype
        raise TypeError(error.format(array.dtype))
    return _dc().tensor(array)


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch: tensors ``stack``, numbers become tensors, containers recurse.

    Tensors: ``stack(batch, 0)``; numpy arrays and numpy scalars: tensors, then stacked; ``float``:
    a float64 tensor; ``int`` (and ``bool``): ``tensor(batch)``; strings stay a list; a mapping
    collates per key; a namedtuple per field; a tuple becomes a list of collated fields; another
    sequence collates per position (all of one length, else torch's ``RuntimeError``).

    Example:
        >>> import dispatchcore as dc
        >>> default_collate([(dc.tensor([1.0]), 0), (dc.tensor([2.0]), 1)])
        [tensor([[1.],
                [2.]]), tensor([0, 1])]
    """
    dc = _dc()
    elem = batch[0]
    if isinstance(elem, Tensor):
        return dc.stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and not isinstance(elem, np.memmap):
        return default_collate([_numpy_tensor(b, _COLLATE_ERROR) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return dc.tensor(np.array(batch))
    if isinstance(elem, float):
        return dc.tensor(batch, dtype=dc.float64)
    if isinstance(elem, int):
        return dc.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(collated)
            return clone
        kind: Any = type(elem)  # a Mapping subclass: rebuilt from the collated dict when it can be
        try:
            return kind(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [list(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                sequence = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    sequence[i] = default_collate(samples)
                return sequence
            kind = type(elem)
            return kind([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Without batching: numpy arrays and scalars become tensors, containers recurse, the rest is unchanged.

    Example:
        >>> import numpy as np
        >>> default_convert({"x": np.array([1, 2])})
        {'x': tensor([1, 2])}
    """
    dc = _dc()
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and not isinstance(data, np.memmap):
        return data if data.dtype.kind in "OSUV" else dc.tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return dc.tensor(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update(converted)
            return clone
        return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return [default_convert(d) for d in data]
    return data


class _InfiniteConstantSampler(Sampler[None]):
    """The index sampler of an iterable dataset: ``None`` forever."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader:
    """Iterate over batches of a dataset (``torch.utils.data.DataLoader``), in this process.

    ``batch_size`` samples per batch (``None`` turns batching off), ``shuffle`` with a
    ``RandomSampler`` on ``generator`` (the default generator when None), ``drop_last`` drops a
    short last batch, ``sampler``/``batch_sampler`` replace the default index order,
    ``collate_fn`` builds a batch (``default_collate``).

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.utils.data import TensorDataset
        >>> ds = TensorDataset(dc.arange(5.0), dc.arange(5))
        >>> loader = DataLoader(ds, batch_size=2, shuffle=True, generator=dc.Generator().manual_seed(0))
        >>> [y.tolist() for _, y in loader]
        [[3, 1], [0, 4], [2]]
        >>> len(loader)
        3
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[Any], Any] | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> Iterator[Any]:
        dc = _dc()
        indices = iter(self._index_sampler)
        # torch's _BaseDataLoaderIter draws its base seed here, between creating and running the sampler
        base = dc.empty((), dtype=dc.int64)
        (base.random_(generator=self.generator) if self.generator is not None else base.random_()).item()
        return self._batches(indices)

    def _batches(self, indices: Iterator[Any]) -> Iterator[Any]:
        if self._iterable:
            source = iter(self.dataset)
            for index in indices:
                if self._auto_collation:
                    data = []
                    for _ in index:
                        try:
                            data.append(next(source))
                        except StopIteration:
                            break
                    if len(data) == 0 or (self.drop_last and len(data) < len(index)):
                        return
                else:
                    try:
                        data = next(source)
                    except StopIteration:
                        return
                yield self.collate_fn(data)
            return
        for index in indices:
            if self._auto_collation:
                getitems = getattr(self.dataset, "__getitems__", None)
                data = getitems(index) if getitems else [self.dataset[i] for i in index]
            else:
                data = self.dataset[index]
            yield self.collate_fn(data)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)
