"""pytest-benchmark cases for the eager tensor goals G1-G9 of docs/performance.md.

Each case checks its result before timing. `bench/compare.py` measures the same statements side
by side with numpy and torch; these cases track dispatchcore's own numbers over time.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.ops import aten


@pytest.fixture(scope="module")
def t():
    dc.load_backends()
    r = np.random.default_rng(0)
    arrays = {n: r.standard_normal(s).astype(np.float32) for n, s in (
        ("s0", ()), ("s10", (10,)), ("s1k", (1000,)), ("s1m", (1_000_000,)), ("m64", (64, 64)),
        ("m512", (512, 512)), ("v", (32, 64)))}
    return {n: dc.tensor(a) for n, a in arrays.items()} | {"n" + n: a for n, a in arrays.items()}


@pytest.mark.benchmark(group="G1 add (10,)")
def test_g1_add_10(benchmark, t):
    out = benchmark(lambda: t["s10"] + t["s10"])
    np.testing.assert_array_equal(out.numpy(), t["ns10"] + t["ns10"])


@pytest.mark.benchmark(group="G2 add () and (1000,)")
@pytest.mark.parametrize("name", ["s0", "s1k"])
def test_g2_add(benchmark, t, name):
    out = benchmark(lambda: t[name] + t[name])
    np.testing.assert_array_equal(out.numpy(), t["n" + name] + t["n" + name])


@pytest.mark.benchmark(group="G3 dispatch overhead")
def test_g3_add_through_the_dispatcher(benchmark, t):
    out = benchmark(dc.add, t["s10"], t["s10"])
    assert out.shape == (10,)


@pytest.mark.benchmark(group="G3 dispatch overhead")
def test_g3_add_through_the_operator_handle(benchmark, t):
    out = benchmark(aten.add.Tensor, t["s10"], t["s10"])
    assert out.shape == (10,)


@pytest.mark.benchmark(group="G3 dispatch overhead")
def test_g3_raw_numpy_add(benchmark, t):
    assert benchmark(np.add, t["ns10"], t["ns10"]).shape == (10,)


@pytest.mark.benchmark(group="G4 large")
def test_g4_add_1m(benchmark, t):
    assert benchmark(aten.add.Tensor, t["s1m"], t["s1m"]).shape == (1_000_000,)


@pytest.mark.benchmark(group="G4 large")
def test_g4_matmul_512(benchmark, t):
    out = benchmark(lambda: t["m512"] @ t["m512"])
    np.testing.assert_allclose(out.numpy(), t["nm512"] @ t["nm512"], rtol=1e-4, atol=1e-3)


@pytest.mark.benchmark(group="G5 matmul 64")
def test_g5_matmul_64(benchmark, t):
    out = benchmark(lambda: t["m64"] @ t["m64"])
    np.testing.assert_allclose(out.numpy(), t["nm64"] @ t["nm64"], rtol=1e-4, atol=1e-4)


@pytest.mark.benchmark(group="G6 relu and sum (10,)")
def test_g6_relu_10(benchmark, t):
    out = benchmark(t["s10"].relu)
    np.testing.assert_array_equal(out.numpy(), np.maximum(t["ns10"], 0))


@pytest.mark.benchmark(group="G6 relu and sum (10,)")
def test_g6_relu_10_operator_handle(benchmark, t):
    out = benchmark(aten.relu.default, t["s10"])
    np.testing.assert_array_equal(out.numpy(), np.maximum(t["ns10"], 0))


@pytest.mark.benchmark(group="G6 relu and sum (10,)")
def test_g6_sum_10(benchmark, t):
    out = benchmark(t["s10"].sum)
    assert abs(out.item() - float(t["ns10"].sum())) < 1e-5


@pytest.mark.benchmark(group="G7 relu (1M)")
def test_g7_relu_1m(benchmark, t):
    out = benchmark(aten.relu.default, t["s1m"])
    np.testing.assert_array_equal(out.numpy(), np.maximum(t["ns1m"], 0))


@pytest.mark.benchmark(group="G8 views")
@pytest.mark.parametrize("view", ["view", "select", "t"])
def test_g8_views(benchmark, t, view):
    v = t["v"]
    fn = {"view": lambda: v.view(-1), "select": lambda: v[0], "t": lambda: v.t()}[view]
    out = benchmark(fn)
    assert out._base is v


@pytest.mark.benchmark(group="G9 in-place add_ (10,)")
def test_g9_inplace_add(benchmark, t):
    x, y = dc.zeros(10), dc.ones(10)
    before = x._version
    benchmark(x.add_, y)
    assert x._version > before and x[0].item() >= 1.0
