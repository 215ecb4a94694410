"""The random family without torch: values recorded from torch 2.13, state round trips, the API and its errors.

The literals below were printed by torch 2.13 (CPU, AVX2) after ``torch.manual_seed(0)`` (or the generator
named); tests/differential/test_vs_torch_random.py checks the same properties against a live torch.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from dispatchcore_backends.cpu.generator import STATE_SIZE, CPUGenerator

import dispatchcore as dc


def _sha(state) -> str:
    return hashlib.sha256(bytes(state.numpy())).hexdigest()


def _seeded(seed=0):
    dc.manual_seed(seed)
    return dc


# --- values recorded from torch ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("draw", "expected"), [
    (lambda: dc.rand(5), [0.49625658988952637, 0.7682217955589294, 0.08847743272781372, 0.13203048706054688,
                          0.30742281675338745]),
    (lambda: dc.rand(3, dtype=dc.float64), [0.9700530018065531, 0.707819864399788, 0.45938294312745087]),
    (lambda: dc.randn(3, dtype=dc.float64), [1.5409961082440433, -0.2934289057609464, -2.1787893820745574]),
    (lambda: dc.randint(10, (8,)), [4, 9, 3, 0, 3, 9, 7, 3]),
    (lambda: dc.randperm(10), [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]),
    (lambda: dc.empty(3, dtype=dc.int64).random_(), [900450186894289455, 3969543146641149120, 1895649597198586619]),
    (lambda: dc.empty(3, dtype=dc.float64).exponential_(), [3.508326186707642, 1.2303847641796768,
                                                             0.6150440938940115]),
    (lambda: dc.empty(10).bernoulli_(0.5), [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
    (lambda: dc.empty(6, dtype=dc.float16).uniform_(-2, 3), [0.481201171875, 1.8408203125, -1.5576171875,
                                                             -1.33984375, -0.462890625, 1.169921875]),
    (lambda: dc.randint_like(dc.zeros(4), 3, 10), [7.0, 6.0, 3.0, 5.0]),
    (lambda: dc.normal(dc.arange(3.0, dtype=dc.float64) * 10, 0.5),
     [0.7704980541220217, 9.853285547119526, 18.910605308962722]),
    (lambda: dc.normal(1.0, dc.tensor([0.0, 1.0, 2.0], dtype=dc.float64)), [1.0, 0.7065710942390536,
                                                                              -3.357578764149115]),
    (lambda: dc.multinomial(dc.tensor([1.0, 2.0, 3.0, 4.0]), 6, True), [3, 3, 2, 3, 3, 3]),
    (lambda: dc.multinomial(dc.tensor([1.0, 2.0, 3.0, 4.0]), 3), [2, 1, 3]),
], ids=["rand", "rand-float64", "randn-float64", "randint", "randperm", "random_-int64", "exponential_",
        "bernoulli_-float", "uniform_-half", "randint_like", "normal-tensor-mean", "normal-tensor-std",
        "multinomial-with-replacement", "multinomial"])
def test_draws_after_manual_seed_0_are_torchs(draw, expected):
    _seeded(0)
    assert draw().tolist() == expected


def test_randn_of_16_or_more_floats_is_torchs_vectorised_box_muller():
    t = _seeded(0).randn(20)
    assert t[:4].tolist() == [-1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383]
    assert t[-2:].tolist() == [2.0049805641174316, 0.05373690277338028]


def test_the_checked_fma_flags_a_double_sum_that_breaks_a_false_tie():
    from dispatchcore_backends.cpu.random import _CheckedFma32, _fma32

    # 3 * (1 + 2**-23) lies halfway between two floats; minus 2**-60 the fma must round down,
    # while the double sum (the tie itself) rounds to even, up
    a, b, c = np.array([3.0, 1.5], np.float32), np.float32(1 + 2**-23), np.float32(-(2.0**-60))
    fast = _CheckedFma32()
    assert fast(a, b, c)[0] != _fma32(a, b, c)[0]
    assert not fast.all_exact()
    exact_tie = _CheckedFma32()  # the same tie with nothing lost: the double sum's rounding is right
    assert exact_tie(a, b, np.float32(0.0)).tolist() == _fma32(a, b, np.float32(0.0)).tolist()
    assert exact_tie.all_exact()
    tiny = _CheckedFma32()  # float's subnormal range has other halfway points: always recomputed
    tiny(np.array([2.0**-70], np.float32), np.float32(2.0**-70), np.float32(0.0))
    assert not tiny.all_exact()


def test_randn_blocks_with_a_flagged_fma_are_recomputed_exactly(monkeypatch):
    from dispatchcore_backends.cpu import random as cpu_random

    expected = _seeded(0).randn(40).tolist()
    monkeypatch.setattr(cpu_random._CheckedFma32, "all_exact", lambda self: False)  # every block recomputed
    assert _seeded(0).randn(40).tolist() == expected


def test_randn_of_17_halves_recomputes_the_last_block_as_torch_does():
    assert _seeded(0).randn(17, dtype=dc.float16).tolist() == [
        -1.1259765625, -1.3525390625, -1.6962890625, 0.56689453125, 0.79345703125, 0.5986328125, -1.5546875,
        -0.34130859375, 1.8525390625, 0.75, -0.58544921875, -0.17333984375, 0.1834716796875, 1.3896484375,
        1.5859375, 0.9462890625, -0.84375]


def test_a_seeded_generator_draws_torchs_values():
    g = dc.Generator().manual_seed(42)
    assert dc.rand(3, generator=g).tolist() == [0.8822692632675171, 0.9150039553642273, 0.38286375999450684]


def test_state_bytes_are_torchs():
    assert _sha(dc.Generator().get_state()) == "7dbca2abd059af5d8a23d078cc0f4d4c7b21e4543592cea803dc5037dfcd008e"
    assert _sha(_seeded(0).get_rng_state()) == "1ccf17250133dec5e96478acd63e13d728d0dbbabb30389415a302c6f872f81f"


# --- the engine ---------------------------------------------------------------------------------------------------
def test_the_engine_is_mt19937_with_its_reference_first_output():
    assert int(CPUGenerator().manual_seed(5489).random(1)[0]) == 3499211612  # mt19937's published first value
    assert int(CPUGenerator().manual_seed(0).random(1)[0]) == 2357136044


def test_random64_joins_two_draws_high_word_first():
    a, b = CPUGenerator().manual_seed(3).random(2)
    assert int(CPUGenerator().manual_seed(3).random64(1)[0]) == (int(a) << 32) | int(b)


def test_a_seed_keeps_64_bits_but_the_engine_takes_the_low_32():
    big = CPUGenerator().manual_seed(2**32 + 5)
    assert big.initial_seed() == 2**32 + 5
    assert big.random(4).tolist() == CPUGenerator().manual_seed(5).random(4).tolist()
    assert big.get_state() != CPUGenerator().manual_seed(5).get_state()  # the seed field differs


# --- state round trips --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("warmup", [lambda: None, lambda: dc.rand(7), lambda: dc.randn(3, dtype=dc.float64),
                                    lambda: dc.randn(1), lambda: dc.randperm(30)],
                         ids=["fresh", "rand", "cached-double-normal", "randn-1", "randperm"])
def test_get_then_set_rng_state_replays_every_later_draw(warmup):
    _seeded(13)
    warmup()
    saved = dc.get_rng_state()
    assert saved.dtype is dc.uint8 and tuple(saved.shape) == (STATE_SIZE,) == (5056,)
    first = [dc.randn(5, dtype=dc.float64).tolist(), dc.rand(17).tolist(), dc.randint(100, (4,)).tolist()]
    dc.set_rng_state(saved)
    assert [dc.randn(5, dtype=dc.float64).tolist(), dc.rand(17).tolist(), dc.randint(100, (4,)).tolist()] == first
    assert bytes(dc.get_rng_state().numpy()) != bytes(saved.numpy())


def test_a_generators_state_moves_to_another_generator():
    g = dc.Generator().manual_seed(8)
    dc.randn(3, generator=g, dtype=dc.float64)
    h = dc.Generator().set_state(g.get_state())
    assert h.initial_seed() == 8
    assert dc.randn(9, generator=h, dtype=dc.float64).tolist() == dc.randn(9, generator=g, dtype=dc.float64).tolist()


def test_generators_are_independent_of_the_default_and_of_each_other():
    _seeded(1)
    expected = dc.rand(6).tolist()
    _seeded(1)
    g = dc.Generator().manual_seed(1)
    assert dc.rand(6, generator=g).tolist() == expected
    assert dc.rand(6).tolist() == expected  # the default did not move


def test_manual_seed_returns_the_default_generator_and_sets_initial_seed():
    assert dc.manual_seed(77) is dc.default_generator
    assert dc.initial_seed() == dc.default_generator.initial_seed() == 77
    dc.manual_seed(-1)
    assert dc.initial_seed() == 2**64 - 1


def test_seed_draws_a_fresh_seed_and_reports_it():
    s = dc.seed()
    assert dc.initial_seed() == s and 0 <= s < 2**64
    g = dc.Generator()
    assert g.seed() == g.initial_seed()


# --- API and errors -----------------------------------------------------------------------------------------------
def test_random_ops_take_generator_keywords():
    g = dc.Generator().manual_seed(3)
    for call in (lambda: dc.rand(2, generator=g), lambda: dc.randn(2, generator=g),
                 lambda: dc.randint(0, 5, (2,), generator=g), lambda: dc.randperm(4, generator=g),
                 lambda: dc.normal(0.0, 1.0, (2,), generator=g), lambda: dc.bernoulli(dc.rand(2), generator=g),
                 lambda: dc.empty(2).uniform_(generator=g), lambda: dc.empty(2).normal_(generator=g),
                 lambda: dc.empty(2).random_(generator=g), lambda: dc.empty(2).exponential_(generator=g),
                 lambda: dc.empty(2).bernoulli_(0.5, generator=g)):
        before = bytes(g.get_state().numpy())
        call()
        assert bytes(g.get_state().numpy()) != before


@pytest.mark.parametrize(("call", "error", "text"), [
    (lambda: dc.rand(2, generator=3), TypeError, "generator"),
    (lambda: dc.Generator("meta"), RuntimeError, "META device type not an accelerator."),
    (lambda: dc.Generator().manual_seed(1.5), RuntimeError, "manual_seed expected a long, but got float"),
    (lambda: dc.Generator().manual_seed(True), RuntimeError, "manual_seed expected a long, but got bool"),
    (lambda: dc.manual_seed(2**64), ValueError, "Overflow when unpacking long long"),
    (lambda: dc.set_rng_state(dc.zeros(3, dtype=dc.uint8)), RuntimeError,
     "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 3"),
    (lambda: dc.set_rng_state(dc.zeros(5056)), TypeError, "RNG state must be a torch.ByteTensor"),
    (lambda: dc.set_rng_state(5), TypeError, "expected a torch.ByteTensor, but got int"),
    (lambda: dc.empty(3).uniform_(2.0, 1.0), RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    (lambda: dc.empty(3).normal_(0.0, -1.0), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    (lambda: dc.empty(3).exponential_(0.0), RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda: dc.empty(3).bernoulli_(1.5), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    (lambda: dc.empty(3).random_(5, 5), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    (lambda: dc.empty(3, dtype=dc.int8).random_(0, 300), RuntimeError, "to - 1 is out of bounds for signed char"),
    (lambda: dc.normal(1.0, dc.tensor([1.0, -1.0])), RuntimeError, "normal expects all elements of std >= 0.0"),
    (lambda: dc.randint_like(dc.zeros(2), dc.tensor([3, 4])), RuntimeError, "high must be a scalar tensor and on CPU"),
    (lambda: dc.multinomial(dc.ones(3), 4), RuntimeError,
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    (lambda: dc.multinomial(dc.zeros(2), 2, True), RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
])
def test_errors_use_torchs_words(call, error, text):
    with pytest.raises(error) as info:
        call()
    assert text in str(info.value)


def test_dropout_mask_is_drawn_from_the_seeded_generator():
    x = dc.ones(200)
    _seeded(4)
    out, mask = dc.ops.aten.native_dropout.default(x, 0.25, True)
    _seeded(4)
    out2, mask2 = dc.ops.aten.native_dropout.default(x, 0.25, True)
    assert mask.dtype is dc.bool and mask.tolist() == mask2.tolist()
    np.testing.assert_array_equal(out.numpy(), np.where(mask.numpy(), np.float32(1 / 0.75), 0).astype(np.float32))
    _seeded(4)
    assert (dc.empty(200, dtype=dc.bool).bernoulli_(0.75).tolist()) == mask.tolist()  # torch's recipe
