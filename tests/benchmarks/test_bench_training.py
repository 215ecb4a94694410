"""pytest-benchmark cases for training steps (issue 16) and long autograd graphs (issue 19).

The steps are ``bench/compare.py``'s ``I16`` rows (the same statements, built by its
``_training``): the MLP of docs/examples/mlp_classification.py (Linear-ReLU-Linear,
CrossEntropyLoss, Adam) and the CNN of docs/examples/small_cnn.py (two Conv2d + BatchNorm2d +
MaxPool2d, Dropout, SGD with momentum). ``bench/compare.py --only I16`` measures them against torch
eager; these cases track dispatchcore's own numbers over time. Each checks its first step's loss
(torch's, from the same seed) before timing.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import compare  # noqa: E402


@pytest.fixture(scope="module")
def steps():
    compare.dc_training.cache_clear()  # fresh, seeded models: the first step's loss is known
    return compare.dc_training()


@pytest.mark.benchmark(group="I16 training step")
@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_training_step(benchmark, steps, model):
    step = steps[f"{model}_step"]
    first = step().item()
    assert math.isclose(first, steps[f"{model}_loss0"], rel_tol=1e-5), first
    benchmark(step)
    assert step().item() < first  # the model learned while it was timed


@pytest.fixture(scope="module")
def graphs():
    return compare.dc_graphs()


@pytest.mark.benchmark(group="G21-G24 long graphs")
@pytest.mark.parametrize("name, steps", [("deep_chain", "deep"), ("inplace_chain", "inplace"),
                                         ("function_chain", "function")])
def test_long_graph_forward_and_backward(benchmark, graphs, name, steps):
    """``bench/compare.py``'s G21-G23 rows: 100,000 multiplications, 20,000 ``mul_``, 20,000 Function nodes."""
    grad = benchmark.pedantic(graphs[name], rounds=1, iterations=1)
    expected = 1.0001 ** compare.GRAPH_STEPS[steps]
    assert abs(grad[0].item() - expected) < 1e-2 * expected


@pytest.mark.benchmark(group="G21-G24 long graphs")
def test_larger_mlp_training_step(benchmark, graphs):
    first = graphs["big_mlp_step"]().item()
    benchmark(graphs["big_mlp_step"])
    assert graphs["big_mlp_step"]().item() < first
