"""``utils.data`` against torch: batch order for seeded generators, samplers, random_split, collate."""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.utils import data as D

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

TD = torch.utils.data


def _labels(lib, loader_module, n, seed, **kwargs):
    generator = lib.Generator().manual_seed(seed) if seed is not None else None
    ds = loader_module.TensorDataset(lib.arange(float(n)).reshape(n, 1), lib.arange(n))
    loader = loader_module.DataLoader(ds, generator=generator, **kwargs)
    epochs = [[y.tolist() for _, y in loader] for _ in range(2)]  # two epochs: the generator advances
    return epochs, len(loader)


@pytest.mark.parametrize("seed", [0, 1, 1234])
@pytest.mark.parametrize(("n", "batch_size", "drop_last"), [(10, 3, False), (10, 3, True), (17, 4, False),
                                                             (8, 8, False), (5, 1, True)])
def test_shuffled_batch_order_equals_torchs_for_a_seeded_generator(seed, n, batch_size, drop_last):
    kwargs = {"batch_size": batch_size, "shuffle": True, "drop_last": drop_last}
    assert _labels(dc, D, n, seed, **kwargs) == _labels(torch, TD, n, seed, **kwargs)


@pytest.mark.parametrize("seed", [0, 5])
def test_shuffle_without_generator_follows_the_default_generator_like_torch(seed):
    dc.manual_seed(seed)
    torch.manual_seed(seed)
    mine = _labels(dc, D, 12, None, batch_size=5, shuffle=True)
    theirs = _labels(torch, TD, 12, None, batch_size=5, shuffle=True)
    assert mine == theirs
    assert dc.rand(3).tolist() == torch.rand(3).tolist()  # the same draws were consumed


def test_unshuffled_loader_and_samplers_match_torch():
    assert _labels(dc, D, 7, None, batch_size=3) == _labels(torch, TD, 7, None, batch_size=3)
    mine = list(D.BatchSampler(D.SequentialSampler(range(7)), 3, drop_last=True))
    assert mine == list(TD.BatchSampler(TD.SequentialSampler(range(7)), 3, drop_last=True))


@pytest.mark.parametrize("num_samples", [5, 40, 70])
def test_random_sampler_with_replacement_equals_torchs(num_samples):
    mine = list(D.RandomSampler(range(9), replacement=True, num_samples=num_samples,
                                generator=dc.Generator().manual_seed(3)))
    theirs = list(TD.RandomSampler(range(9), replacement=True, num_samples=num_samples,
                                   generator=torch.Generator().manual_seed(3)))
    assert mine == theirs


@pytest.mark.parametrize("num_samples", [4, 23])
def test_random_sampler_num_samples_without_replacement_equals_torchs(num_samples):
    mine = list(D.RandomSampler(range(9), num_samples=num_samples, generator=dc.Generator().manual_seed(8)))
    theirs = list(TD.RandomSampler(range(9), num_samples=num_samples, generator=torch.Generator().manual_seed(8)))
    assert mine == theirs


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [0.33, 0.33, 0.34], [10]])
@pytest.mark.parametrize("seed", [0, 42])
def test_random_split_equals_torchs(lengths, seed):
    mine = D.random_split(range(10), lengths, generator=dc.Generator().manual_seed(seed))
    theirs = TD.random_split(range(10), lengths, generator=torch.Generator().manual_seed(seed))
    assert [list(s) for s in mine] == [list(s) for s in theirs]


def test_random_split_errors_match_torch():
    for lengths in ([3, 3], [1.5, -0.5]):
        with pytest.raises(ValueError) as theirs:
            TD.random_split(range(10), lengths)
        with pytest.raises(ValueError) as mine:
            D.random_split(range(10), lengths)
        assert str(mine.value) == str(theirs.value)


def _as_python(x):
    if isinstance(x, (dc.Tensor, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return {k: _as_python(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_as_python(v) for v in x]
    return x


def test_default_collate_matches_torch():
    def batch(lib):
        return [{"x": lib.tensor([i, i + 1.0]), "y": i, "z": 0.5 * i, "tag": f"s{i}", "pair": (i, np.int32(i)),
                 "arr": np.arange(3) * i, "flag": i % 2 == 0} for i in range(3)]

    assert _as_python(D.default_collate(batch(dc))) == _as_python(TD.default_collate(batch(torch)))


def test_default_collate_errors_match_torch():
    for bad in ([[1, 2], [3]], [object(), object()]):
        with pytest.raises((RuntimeError, TypeError)) as theirs:
            TD.default_collate(bad)
        with pytest.raises((RuntimeError, TypeError)) as mine:
            D.default_collate(bad)
        assert type(mine.value) is type(theirs.value)
        assert str(mine.value).split("found")[0] == str(theirs.value).split("found")[0]


def test_dataloader_option_errors_match_torch():
    cases = [{"sampler": [0, 1], "shuffle": True}, {"batch_sampler": [[0]], "batch_size": 2},
             {"batch_size": None, "drop_last": True}, {"num_workers": -1}]
    for kwargs in cases:
        with pytest.raises(ValueError) as theirs:
            TD.DataLoader(list(range(4)), **kwargs)
        with pytest.raises(ValueError) as mine:
            D.DataLoader(list(range(4)), **kwargs)
        assert str(mine.value) == str(theirs.value)
