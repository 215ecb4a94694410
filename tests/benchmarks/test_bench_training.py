"""pytest-benchmark cases for one training step of the docs/examples programs (issue 16).

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
