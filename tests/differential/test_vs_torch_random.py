"""The random family against torch: every draw bit for bit, and the generator state after it, byte for byte.

Each case seeds both libraries alike, draws, and compares values exactly (not within a tolerance), dtypes,
and the 5056 state bytes of ``get_rng_state``. The float and Half ``normal_`` of 16 or more contiguous elements
follow torch's AVX2 kernel, so those cases run only where torch uses it (``get_cpu_capability() == "AVX2"``);
``bernoulli_(float p)`` follows torch's default kernel, which an Intel CPU with MKL replaces (skipped there).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

SEEDS = (0, 7, 2**32 + 5)
SIZES = (0, 1, 15, 16, 17, 100, 1003)
FLOATS = ("float16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")


def _is_intel() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return "GenuineIntel" in f.read(4096)
    except OSError:
        return False


AVX2 = pytest.mark.skipif(torch.backends.cpu.get_cpu_capability() != "AVX2",
                          reason="torch's float normal_fill is its AVX2 kernel only on an AVX2 build")
NOT_MKL_BERNOULLI = pytest.mark.skipif(_is_intel() and torch.backends.mkl.is_available(),
                                       reason="torch draws bernoulli_(float) from MKL's stream on Intel CPUs")


def _state(m) -> bytes:
    return bytes(m.get_rng_state().numpy().tobytes())


def _values(t) -> np.ndarray:
    return t.detach().numpy()


def _numpy_float64_math_is_libms() -> bool:
    """Whether numpy's float64 log, log1p, cos and sin give the C library's results here.

    torch computes the float64 transforms of ``randn`` and ``exponential_`` with libm (scalar
    ``std::log`` and friends); numpy uses its own SIMD versions where the CPU has them (AVX-512),
    and those differ from libm by at most 1 ulp on some inputs.
    """
    u = np.random.default_rng(0).random(4096)
    return all(np.array_equal(f(u), np.array([g(x) for x in u]))
               for f, g in ((np.log, math.log), (np.log1p, math.log1p), (np.cos, math.cos), (np.sin, math.sin)))


# docs/notes.md: a float64 draw that goes through log/cos/sin is torch's to the bit where numpy's
# float64 math is libm's, and within 1 ulp where numpy uses its own SIMD functions
# (log then sqrt then cos: the errors of two libm calls add up to 2 ulp)
LIBM_ULPS = 0 if _numpy_float64_math_is_libms() else 2
_NORMAL_Y = slice(5024, 5032)  # CPUGeneratorImplState's normal_y: the cached float64 normal


def _ulps_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.view(np.int64) - b.view(np.int64))


def _same_draws(draw, seed=0, state=True, ulps=0):
    """``draw(m)`` under the same seed in both libraries: equal values (bit for bit), dtype and state.

    ``ulps``: float64 values may differ by that many units in the last place (``LIBM_ULPS``).
    """
    torch.manual_seed(seed)
    theirs = draw(torch)
    dc.manual_seed(seed)
    mine = draw(dc)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    mine = mine if isinstance(mine, tuple) else (mine,)
    for m, t in zip(mine, theirs, strict=True):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(m.shape) == tuple(t.shape) and m.stride() == t.stride()
        a, b = _values(m), _values(t)
        if ulps and a.dtype == np.float64 and a.tobytes() != b.tobytes():
            apart = _ulps_apart(a, b)
            assert apart.max() <= ulps, f"{(apart > ulps).sum()} of {a.size} values are over {ulps} ulp apart"
            continue
        assert a.tobytes() == b.tobytes(), f"{(a != b).sum()} of {a.size} values differ"
    if state:
        mine_state, their_state = _state(dc), _state(torch)
        if ulps:  # the cached normal is one of those float64 values
            cached = [np.frombuffer(x[_NORMAL_Y], np.float64) for x in (mine_state, their_state)]
            assert _ulps_apart(*cached).max() <= ulps
            mine_state, their_state = (x[:_NORMAL_Y.start] + x[_NORMAL_Y.stop:] for x in (mine_state, their_state))
        assert mine_state == their_state


# --- the engine and its state ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", (0, 1, 7, 2**31, 2**32 + 5, 2**63 + 11, 2**64 - 1))
def test_manual_seed_gives_torchs_state_bytes_and_initial_seed(seed):
    torch.manual_seed(seed)
    dc.manual_seed(seed)
    assert _state(dc) == _state(torch)
    assert dc.initial_seed() == torch.initial_seed()
    assert len(dc.get_rng_state().numpy()) == 5056 and dc.get_rng_state().dtype is dc.uint8


def test_manual_seed_returns_the_default_generator_with_torchs_seed_semantics():
    g = dc.manual_seed(3)
    assert g.initial_seed() == 3 and g.device.type == "cpu"
    dc.manual_seed(-1)  # negative seeds wrap to uint64, as torch's do
    torch.manual_seed(-1)
    assert dc.initial_seed() == torch.initial_seed() == 2**64 - 1
    assert _state(dc) == _state(torch)


def test_a_fresh_generator_has_torchs_default_state():
    assert bytes(dc.Generator().get_state().numpy()) == bytes(torch.Generator().get_state().numpy())
    assert dc.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721


@pytest.mark.parametrize("n", (1, 3, 17, 1003))
def test_state_bytes_match_after_every_kind_of_draw_including_a_cached_normal(n):
    def draw(m):
        a = m.randn(n, dtype=m.float64)  # odd n: one Box-Muller sample cached (scalar path for n < 16)
        b = m.rand(n)
        c = m.empty(n, dtype=m.int64).random_()
        return a, b, c

    _same_draws(draw, seed=11, ulps=LIBM_ULPS)


def test_a_state_taken_from_torch_can_be_set_here_and_the_other_way_round():
    torch.manual_seed(5)
    torch.randn(3, dtype=torch.float64)  # leaves a cached normal in the state
    torch.rand(101)
    theirs = torch.get_rng_state()
    dc.set_rng_state(dc.tensor(theirs.numpy()))
    assert _state(dc) == bytes(theirs.numpy())
    assert _values(dc.randn(5, dtype=dc.float64)).tobytes() == _values(torch.randn(5, dtype=torch.float64)).tobytes()
    dc.manual_seed(9)
    dc.rand(33)
    torch.set_rng_state(torch.tensor(dc.get_rng_state().numpy()))
    assert _values(torch.rand(40)).tobytes() == _values(dc.rand(40)).tobytes()


def test_generator_get_set_state_round_trip_replays_the_draws():
    g, tg = dc.Generator().manual_seed(21), torch.Generator().manual_seed(21)
    dc.rand(7, generator=g)
    torch.rand(7, generator=tg)
    saved = g.get_state()
    assert bytes(saved.numpy()) == bytes(tg.get_state().numpy())
    first = _values(dc.randn(20, generator=g))
    g.set_state(saved)
    assert _values(dc.randn(20, generator=g)).tobytes() == first.tobytes()
    assert first.tobytes() == _values(torch.randn(20, generator=tg)).tobytes()


def test_a_generator_draws_its_own_stream_and_leaves_the_default_alone():
    dc.manual_seed(1)
    torch.manual_seed(1)
    g, tg = dc.Generator().manual_seed(99), torch.Generator().manual_seed(99)
    for size in (5, 16, 40):
        assert _values(dc.rand(size, generator=g)).tobytes() == _values(torch.rand(size, generator=tg)).tobytes()
        assert _values(dc.randn(size, generator=g)).tobytes() == _values(torch.randn(size, generator=tg)).tobytes()
    assert _state(dc) == _state(torch)
    assert _values(dc.rand(4)).tobytes() == _values(torch.rand(4)).tobytes()


def test_set_state_refuses_what_torch_refuses(raises_alike):
    raises_alike(lambda: dc.set_rng_state(dc.zeros(10, dtype=dc.uint8)),
                 lambda: torch.set_rng_state(torch.zeros(10, dtype=torch.uint8)))
    with pytest.raises(TypeError):
        dc.set_rng_state(dc.zeros(5056))


# --- uniform ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_matches_torch_bit_for_bit(seed, dtype):
    for n in SIZES:
        _same_draws(lambda m, n=n: m.rand(n, dtype=getattr(m, dtype)), seed)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bounds", ((0.0, 1.0), (-3.0, 5.0), (2.5, 2.75), (-1e-3, 1e-3), (4.0, 4.0)))
def test_uniform_matches_torch_bit_for_bit_on_any_bounds(dtype, bounds):
    for n in (1, 17, 1003):
        _same_draws(lambda m, n=n: m.empty(n, dtype=getattr(m, dtype)).uniform_(*bounds), seed=3)


def test_uniform_draws_in_memory_order_on_a_strided_tensor():
    _same_draws(lambda m: m.empty(6, 5).t().uniform_())
    _same_draws(lambda m: m.empty(4, 6, dtype=m.float64)[:, ::2].uniform_(-1, 1))


def test_rand_like_matches_torch():
    _same_draws(lambda m: m.rand_like(m.empty(3, 7, dtype=m.float64).t()), seed=4)
    _same_draws(lambda m: m.randn_like(m.empty(40)), seed=4)


# --- normal -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_randn_float64_matches_torch_bit_for_bit(seed):
    for n in SIZES:
        _same_draws(lambda m, n=n: m.randn(n, dtype=m.float64), seed, ulps=LIBM_ULPS)


@AVX2
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ("float16", "float32"))
def test_randn_float_and_half_match_torchs_avx2_kernel_bit_for_bit(seed, dtype):
    for n in SIZES:
        _same_draws(lambda m, n=n: m.randn(n, dtype=getattr(m, dtype)), seed)


@AVX2
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mean_std", ((0.0, 1.0), (-2.5, 0.3), (100.0, 7.0), (1.0, 0.0)))
def test_normal_matches_torch_bit_for_bit_for_any_mean_and_std(dtype, mean_std):
    for n in (3, 16, 33, 1003):
        _same_draws(lambda m, n=n: m.empty(n, dtype=getattr(m, dtype)).normal_(*mean_std), seed=8)
        _same_draws(lambda m, n=n: m.normal(*mean_std, (n,), dtype=getattr(m, dtype)), seed=8)


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_on_a_non_contiguous_tensor_takes_the_scalar_path_as_torch_does(dtype):
    _same_draws(lambda m: m.empty(8, 5, dtype=getattr(m, dtype)).t().normal_(1.0, 2.0), seed=2)


def test_the_cached_box_muller_sample_carries_across_calls_as_in_torch():
    def draw(m):
        return tuple(m.randn(k, dtype=m.float64) for k in (1, 2, 3, 5, 15))

    _same_draws(draw, seed=6)


# --- integers -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", (*INTS, "bool", *FLOATS))
def test_random_without_bounds_matches_torch(dtype):
    for n in SIZES:
        _same_draws(lambda m, n=n: m.empty(n, dtype=getattr(m, dtype)).random_(), seed=1)


@pytest.mark.parametrize(("dtype", "bounds"), [(d, b) for d in (*INTS, *FLOATS)
                                               for b in ((0, 10), (-5, 5), (3, 4), (0, 100))
                                               if d != "uint8" or b[0] >= 0])  # uint8 from < 0: an error
def test_random_from_to_matches_torch(dtype, bounds):
    _same_draws(lambda m: m.empty(1003, dtype=getattr(m, dtype)).random_(*bounds), seed=2)
    _same_draws(lambda m: m.empty(17, dtype=getattr(m, dtype)).random_(bounds[1]), seed=2)


@pytest.mark.parametrize("bounds", ((0, 2**40), (-(2**62), 2**62), (-(2**63), None), (5, None)))
def test_random_over_wide_ranges_uses_64_bit_draws_and_warns_as_torch_does(bounds):
    for dtype in ("int64", "float64", "float32"):
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            _same_draws(lambda m, dtype=dtype: m.empty(100, dtype=getattr(m, dtype)).random_(*bounds), seed=3)
        texts = [str(w.message).split(" (Triggered internally")[0] for w in theirs]
        assert texts[: len(texts) // 2] == texts[len(texts) // 2:]  # torch's warnings, then the same ones here
        if dtype == "float32" and bounds[1] is not None:
            assert texts and "Due to precision limitations float" in texts[0]


@pytest.mark.parametrize("dtype", ("int64", "int32", "int16", "uint8", "float32", "float64"))
def test_randint_matches_torch(dtype):
    for n in SIZES:
        _same_draws(lambda m, n=n: m.randint(3, 20, (n,), dtype=getattr(m, dtype)), seed=4)
        _same_draws(lambda m, n=n: m.randint(7, (n,), dtype=getattr(m, dtype)), seed=4)
    _same_draws(lambda m: m.randint(-(2**40), 2**40, (50,)), seed=4)


@pytest.mark.parametrize("n", (0, 1, 2, 15, 16, 17, 100, 1003))
def test_randperm_matches_torch(n):
    _same_draws(lambda m: m.randperm(n), seed=5)
    _same_draws(lambda m: m.randperm(n, dtype=m.int32), seed=6)


@pytest.mark.parametrize("call", [
    lambda m: m.randint_like(m.zeros(2, 3), 10),
    lambda m: m.randint_like(m.zeros(2, 3), 3, 10, dtype=m.int64),
    lambda m: m.randint_like(m.zeros(17, dtype=m.int32), high=10),
    lambda m: m.randint_like(m.zeros(5), m.tensor(7)),
    lambda m: m.randint_like(m.zeros(1003, dtype=m.float64), 0, 50, generator=m.Generator().manual_seed(1)),
    lambda m: m.randint_like(m.zeros(3, 4).t(), 100),
], ids=["high", "low-high-dtype", "keyword-high", "tensor-high", "generator", "transposed"])
def test_randint_like_matches_torch(call):
    _same_draws(call, seed=3)


# --- normal with tensor mean and std ------------------------------------------------------------------------------
@AVX2
@pytest.mark.parametrize("call", [
    lambda m: m.normal(m.arange(20.0).reshape(4, 5), 2.0),
    lambda m: m.normal(m.arange(20.0).reshape(4, 5).to(m.float16), 2.0),
    lambda m: m.normal(m.arange(20, dtype=m.float64), 0.5),
    lambda m: m.normal(m.arange(20.0).reshape(4, 5).t(), 1.0),
    lambda m: m.normal(1.5, m.arange(20.0)),
    lambda m: m.normal(1.5, m.arange(5.0)),
    lambda m: m.normal(m.arange(20.0), m.arange(20.0) / 7),
    lambda m: m.normal(m.arange(3.0).reshape(3, 1), m.ones(4)),
    lambda m: m.normal(m.arange(20.0), m.arange(20, dtype=m.float64) / 7),
    lambda m: m.normal(m.arange(20, dtype=m.float64), m.arange(20.0) / 7),
], ids=["tensor-float", "tensor-float-half", "tensor-float-double", "tensor-float-transposed", "float-tensor",
        "float-tensor-scalar-path", "tensor-tensor", "tensor-tensor-broadcast", "tensor-tensor-float-double",
        "tensor-tensor-double-float"])
def test_normal_with_tensor_mean_or_std_matches_torch(call):
    _same_draws(call, seed=3)


@pytest.mark.parametrize("call", [
    lambda m: m.normal(1.0, m.tensor([1.0, -1.0])),
    lambda m: m.normal(m.ones(2), -1.0),
    lambda m: m.normal(1.0, m.ones(2, dtype=m.complex64)),
    lambda m: m.normal(m.ones(3), m.ones(4)),
    lambda m: m.normal(m.ones(3, dtype=m.int64), 1.0),
    lambda m: m.randint_like(m.zeros(5), m.tensor([7, 8])),
], ids=["negative-std-element", "negative-std", "complex-std", "shapes-mismatch", "integer-mean",
        "randint_like-vector-high"])
def test_tensor_overload_errors_match_torch(call, raises_alike):
    raises_alike(lambda: call(dc), lambda: call(torch))


def test_normal_with_tensor_arguments_has_torchs_nodes_and_zero_gradients():
    for make in (lambda m, x: m.normal(x, 1.0), lambda m, x: m.normal(1.0, x), lambda m, x: m.normal(x, x + 1)):
        x, tx = dc.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
        y, ty = make(dc, x), make(torch, tx)
        assert y.grad_fn.name() == ty.grad_fn.name()
        y.sum().backward()
        ty.sum().backward()
        assert x.grad.tolist() == tx.grad.tolist() == [0.0, 0.0, 0.0]


# --- multinomial --------------------------------------------------------------------------------------------------
WEIGHTS = np.random.default_rng(0).random((4, 30))


@pytest.mark.parametrize("call", [
    lambda m: m.multinomial(m.tensor(WEIGHTS[0]), 10),
    lambda m: m.multinomial(m.tensor(WEIGHTS[0]), 1),
    lambda m: m.multinomial(m.tensor(WEIGHTS[0]), 1, True),
    lambda m: m.multinomial(m.tensor(WEIGHTS[0]), 100, True),
    lambda m: m.multinomial(m.tensor(WEIGHTS), 50, True),
    lambda m: m.multinomial(m.tensor(WEIGHTS), 30),
    lambda m: m.multinomial(m.tensor(WEIGHTS).to(m.float64), 50, True),
    lambda m: m.multinomial(m.tensor(WEIGHTS).to(m.float16), 50, True),
    lambda m: m.multinomial(m.tensor(WEIGHTS).to(m.float16), 5),
    lambda m: m.multinomial(m.tensor([0.0, 1.0, 0.0, 2.0]), 20, True),
    lambda m: m.multinomial(m.tensor(WEIGHTS).t(), 3, True),
    lambda m: m.multinomial(m.zeros(0, 3), 2, True),
    lambda m: m.tensor(WEIGHTS[1]).multinomial(4, generator=m.Generator().manual_seed(2)),
], ids=["without-replacement", "one", "one-with-replacement", "with-replacement", "rows-with-replacement",
        "rows-all-without-replacement", "double", "half", "half-without-replacement", "zero-weights",
        "transposed", "no-rows", "method-generator"])
@pytest.mark.parametrize("seed", (0, 3, 11))
def test_multinomial_matches_torch(call, seed):
    _same_draws(call, seed=seed)


@pytest.mark.parametrize("call", [
    lambda m: m.multinomial(m.ones(3, 3, 3), 2),
    lambda m: m.multinomial(m.ones(3, dtype=m.int64), 2),
    lambda m: m.multinomial(m.ones(3), 0),
    lambda m: m.multinomial(m.ones(3), 4),
    lambda m: m.multinomial(m.tensor([1.0, -1.0]), 1),
    lambda m: m.multinomial(m.tensor([1.0, -1.0]), 2, True),
    lambda m: m.multinomial(m.zeros(2), 2, True),
    lambda m: m.multinomial(m.zeros(2), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 2, True),
    lambda m: m.multinomial(m.tensor([float("inf"), -1.0]), 2, True),
    lambda m: m.multinomial(m.zeros(2, 0), 2, True),
], ids=["three-dims", "integer", "no-samples", "too-many-without-replacement", "negative", "negative-replacement",
        "zero-sum-replacement", "zero-sum", "nan", "inf-first", "empty-rows"])
def test_multinomial_errors_match_torch(call, raises_alike):
    raises_alike(lambda: call(dc), lambda: call(torch))


# --- exponential, bernoulli, dropout ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lambd", (1.0, 0.25, 7.5))
def test_exponential_matches_torch(dtype, lambd):
    for n in SIZES:
        _same_draws(lambda m, n=n: m.empty(n, dtype=getattr(m, dtype)).exponential_(lambd), seed=7, ulps=LIBM_ULPS)


@pytest.mark.parametrize("p_dtype", ("float32", "float64", "float16"))
def test_bernoulli_with_tensor_probabilities_matches_torch(p_dtype):
    probs = np.linspace(0, 1, 1003)

    def draw(m):
        p = m.tensor(probs).to(getattr(m, p_dtype))
        return m.bernoulli(p), m.empty(1003, dtype=m.int64).bernoulli_(p), p.bernoulli()

    _same_draws(draw, seed=8)


@NOT_MKL_BERNOULLI
@pytest.mark.parametrize("dtype", ("float32", "float64", "float16", "int64", "uint8", "bool"))
def test_bernoulli_with_a_float_probability_matches_torch(dtype):
    for n in SIZES:
        _same_draws(lambda m, n=n: m.empty(n, dtype=getattr(m, dtype)).bernoulli_(0.3), seed=9)
        _same_draws(lambda m, n=n: m.bernoulli(m.zeros(n, dtype=getattr(m, dtype)), 0.7), seed=9)
    _same_draws(lambda m: m.empty(4, 6).t().bernoulli_(0.5), seed=9)


@NOT_MKL_BERNOULLI
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", (0.0, 0.2, 0.5, 1.0))
def test_native_dropout_draws_torchs_mask_and_output(dtype, p):
    x = np.random.default_rng(0).standard_normal((7, 9))

    def draw(m):
        t = m.tensor(x).to(getattr(m, dtype))
        return tuple(m.ops.aten.native_dropout.default(t, p, True))

    _same_draws(draw, seed=10)


@NOT_MKL_BERNOULLI
def test_dropout_keeps_a_channels_last_layout_and_torchs_mask():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)

    def draw(m):
        t = m.tensor(x.transpose(0, 2, 3, 1).copy()).permute(0, 3, 1, 2)
        return tuple(m.ops.aten.native_dropout.default(t, 0.4, True))

    _same_draws(draw, seed=12)
    _same_draws(lambda m: m.nn.functional.dropout(m.tensor(x), 0.5, training=True), seed=12)


# --- errors -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m: m.empty(3).uniform_(2.0, 1.0),
    lambda m: m.empty(3, dtype=m.int64).uniform_(),
    lambda m: m.empty(3).normal_(0.0, -1.0),
    lambda m: m.empty(3, dtype=m.int32).normal_(),
    lambda m: m.empty(3).exponential_(0.0),
    lambda m: m.empty(3).exponential_(-1.0),
    lambda m: m.empty(3, dtype=m.int64).exponential_(),
    lambda m: m.empty(3).random_(5, 5),
    lambda m: m.empty(3, dtype=m.int8).random_(0, 300),
    lambda m: m.empty(3, dtype=m.uint8).random_(-1, 3),
    lambda m: m.empty(3).bernoulli_(1.5),
    lambda m: m.empty(3).bernoulli_(-0.5),
    lambda m: m.randint(5, 5, (3,)),
], ids=["uniform-from-gt-to", "uniform-int", "normal-negative-std", "normal-int", "exponential-zero",
        "exponential-negative", "exponential-int", "random-empty-range", "random-int8-out-of-bounds",
        "random-uint8-negative", "bernoulli-p-above-1", "bernoulli-p-below-0", "randint-empty-range"])
def test_errors_match_torch(call, raises_alike):
    raises_alike(lambda: call(dc), lambda: call(torch))


def test_a_generator_argument_that_is_no_generator_is_refused_with_torchs_type_error():
    for call in (lambda m: m.rand(3, generator=5), lambda m: m.randn(3, generator="x"),
                 lambda m: m.randint(3, (2,), generator=1.5)):
        with pytest.raises(TypeError, match="generator"):
            call(dc)
        with pytest.raises(TypeError, match="generator"):
            call(torch)


# --- empty tensors, complex tensors, and the order of torch's checks ----------------------------------------------
EDGE_CASES = {
    "random_-empty-int8-out-of-range": lambda m: m.empty(0, dtype=m.int8).random_(0, 300),
    "random_-empty-complex": lambda m: m.empty(0, dtype=m.complex64).random_(),
    "random_-complex": lambda m: m.empty(3, dtype=m.complex64).random_(),
    "random_-complex-from-to": lambda m: m.empty(3, dtype=m.complex64).random_(0, 5),
    "random_-complex-to": lambda m: m.empty(3, dtype=m.complex64).random_(5),
    "random_-complex-full-range": lambda m: m.empty(3, dtype=m.complex64).random_(-(2**63), None),
    "random_-half-full-range": lambda m: m.empty(3, dtype=m.float16).random_(-(2**63), None),
    "random_-int32-full-range": lambda m: m.empty(3, dtype=m.int32).random_(-(2**63), None),
    "random_-bool-full-range": lambda m: m.empty(3, dtype=m.bool).random_(-(2**63), None),
    "bernoulli_-empty-complex": lambda m: m.empty(0, dtype=m.complex64).bernoulli_(0.5),
    "bernoulli_-empty-int-p": lambda m: m.empty(0, dtype=m.int64).bernoulli_(m.empty(0, dtype=m.int64)),
    "bernoulli_-int-p": lambda m: m.empty(3).bernoulli_(m.ones(3, dtype=m.int64)),
    "bernoulli_-p-too-long": lambda m: m.empty(3).bernoulli_(m.rand(4)),
    "bernoulli_-p-too-many-dims": lambda m: m.empty(3).bernoulli_(m.rand(2, 3)),
    "bernoulli_-p-broadcast": lambda m: m.empty(2, 3).bernoulli_(m.rand(3)),
    "uniform_-from-beyond-float": lambda m: m.empty(3).uniform_(-1e39, 1),
    "uniform_-to-beyond-half": lambda m: m.empty(3, dtype=m.float16).uniform_(0, 70000),
    "uniform_-range-beyond-half": lambda m: m.empty(3, dtype=m.float16).uniform_(-60000, 60000),
    "uniform_-range-beyond-double": lambda m: m.empty(3, dtype=m.float64).uniform_(-1.7e308, 1.7e308),
    "uniform_-empty-int": lambda m: m.empty(0, dtype=m.int64).uniform_(),
    "uniform_-complex": lambda m: m.empty(5, dtype=m.complex64).uniform_(-1, 2),
    "uniform_-complex128": lambda m: m.empty(9, dtype=m.complex128).uniform_(),
    "normal_-complex-scalar-path": lambda m: m.empty(5, dtype=m.complex64).normal_(),
    "normal_-complex": lambda m: m.empty(9, dtype=m.complex64).normal_(1, 2),
    "normal_-complex128": lambda m: m.empty(9, dtype=m.complex128).normal_(1, 2),
    "normal_-complex-transposed": lambda m: m.empty(4, 5, dtype=m.complex64).t().normal_(1, 2),
    "normal_-empty-int": lambda m: m.empty(0, dtype=m.int64).normal_(),
    "randn-complex": lambda m: m.randn(20, dtype=m.complex64),
    "rand-complex": lambda m: m.rand(20, dtype=m.complex128),
    "exponential_-empty-int": lambda m: m.empty(0, dtype=m.int64).exponential_(),
}


def _outcome(m, call):
    m.manual_seed(1)
    try:
        return "ok", call(m).numpy().tobytes()
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception itself
        return type(e).__name__, str(e).split("\n")[0]


@AVX2
@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases_draw_or_fail_as_torch_does(name):
    assert _outcome(dc, EDGE_CASES[name]) == _outcome(torch, EDGE_CASES[name])
