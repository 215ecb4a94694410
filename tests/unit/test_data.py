"""``dispatchcore.utils.data``: datasets, samplers, DataLoader batching and collate (without torch)."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


def _dataset(n=10):
    return TensorDataset(dc.arange(float(n)).reshape(n, 1), dc.arange(n))


def test_tensor_dataset_items_are_first_dimension_slices():
    ds = _dataset(4)
    x, y = ds[2]
    assert len(ds) == 4 and x.tolist() == [2.0] and y.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(dc.ones(2), dc.ones(3))


def test_loader_batches_in_order_with_a_short_last_batch():
    batches = [y.tolist() for _, y in DataLoader(_dataset(7), batch_size=3)]
    assert batches == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(DataLoader(_dataset(7), batch_size=3)) == 3


def test_drop_last_drops_the_short_batch():
    loader = DataLoader(_dataset(7), batch_size=3, drop_last=True)
    assert [y.tolist() for _, y in loader] == [[0, 1, 2], [3, 4, 5]] and len(loader) == 2


def test_shuffle_is_a_permutation_and_reproducible_with_a_seeded_generator():
    def order(seed):
        loader = DataLoader(_dataset(10), batch_size=4, shuffle=True, generator=dc.Generator().manual_seed(seed))
        return [i for _, y in loader for i in y.tolist()]

    assert sorted(order(0)) == list(range(10))
    assert order(0) == order(0)
    assert order(0) != order(1)


def test_batches_are_stacked_with_a_batch_dimension():
    x, y = next(iter(DataLoader(_dataset(5), batch_size=2)))
    assert tuple(x.shape) == (2, 1) and tuple(y.shape) == (2,) and y.dtype is dc.int64


def test_default_collate_of_numbers_strings_dicts_and_tuples():
    batch = [{"a": 1, "b": 0.5, "s": "x", "t": (dc.tensor(1.0), 2)}, {"a": 2, "b": 1.5, "s": "y",
                                                                       "t": (dc.tensor(3.0), 4)}]
    out = default_collate(batch)
    assert out["a"].tolist() == [1, 2] and out["a"].dtype is dc.int64
    assert out["b"].dtype is dc.float64 and out["s"] == ["x", "y"]
    assert isinstance(out["t"], list) and out["t"][0].tolist() == [1.0, 3.0] and out["t"][1].tolist() == [2, 4]
    pair = collections.namedtuple("pair", "p q")
    named = default_collate([pair(1, np.array([1, 2])), pair(2, np.array([3, 4]))])
    assert isinstance(named, pair) and named.q.tolist() == [[1, 2], [3, 4]]


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors"):
        default_collate([object()])


def test_batch_size_none_loads_single_samples_unbatched():
    assert [v.item() for _, v in DataLoader(_dataset(3), batch_size=None)] == [0, 1, 2]


def test_custom_dataset_sampler_and_collate_fn():
    class Squares(Dataset):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 5

    loader = DataLoader(Squares(), batch_size=2, sampler=[4, 0, 3], collate_fn=list)
    assert list(loader) == [[16, 0], [9]]


def test_iterable_dataset_batches_until_exhausted():
    class Count(IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in DataLoader(Count(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Count(), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Count(), shuffle=True)


def test_loader_option_errors():
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(_dataset(), sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(_dataset(), batch_sampler=[[0]], batch_size=4)


def test_samplers():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, drop_last=False)) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(5), 0, drop_last=False)
    drawn = list(RandomSampler(range(6), replacement=True, num_samples=40, generator=dc.Generator().manual_seed(1)))
    assert len(drawn) == 40 and set(drawn) <= set(range(6))
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)


def test_subset_and_random_split():
    sub = Subset([10, 20, 30, 40], [3, 1])
    assert len(sub) == 2 and sub[0] == 40 and sub.__getitems__([1, 0]) == [20, 40]
    parts = random_split(range(10), [3, 7], generator=dc.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    fractions = random_split(range(10), [0.33, 0.33, 0.34], generator=dc.Generator().manual_seed(0))
    assert [len(p) for p in fractions] == [4, 3, 3]  # floors 3, 3, 3, the remainder round robin
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        random_split(range(1), [0.5, 0.5])  # floors 0, 0; the remainder goes to split 0
    assert any("Length of split at index 1 is 0" in str(w.message) for w in caught)
