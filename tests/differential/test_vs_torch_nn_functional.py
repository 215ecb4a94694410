"""``dispatchcore.nn.functional`` against ``torch.nn.functional`` 2.13: values, grads, warnings, errors.

Each case is written once against ``(m, F)`` (the module and its ``nn.functional``) and runs on
both; results, the gradient of the input, and the warnings raised must match.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dispatchcore as dc  # noqa: E402
import dispatchcore.nn.functional as DF  # noqa: E402

pytestmark = pytest.mark.differential
TF = torch.nn.functional


def _x(m):
    return m.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], requires_grad=True)


CASES = {
    "relu": lambda m, F: F.relu(_x(m) * 1.0),
    "relu_inplace": lambda m, F: F.relu(_x(m) * 1.0, inplace=True),
    "softmax": lambda m, F: F.softmax(_x(m), dim=1),
    "softmax_implicit_dim": lambda m, F: F.softmax(_x(m)),
    "log_softmax_dtype": lambda m, F: F.log_softmax(_x(m), 0, dtype=m.float64),
    "log_softmax_implicit_dim_3d": lambda m, F: F.log_softmax(_x(m).reshape(1, 2, 3)),
    "mse_loss": lambda m, F: F.mse_loss(_x(m), m.ones(2, 3)),
    "mse_loss_sum": lambda m, F: F.mse_loss(_x(m), m.ones(2, 3), reduction="sum"),
    "mse_loss_none": lambda m, F: F.mse_loss(_x(m), m.ones(2, 3), reduction="none"),
    "mse_loss_broadcast_warns": lambda m, F: F.mse_loss(_x(m), m.ones(3)),
    "mse_loss_legacy_flags": lambda m, F: F.mse_loss(_x(m), m.ones(2, 3), size_average=False),
    "mse_loss_weight": lambda m, F: F.mse_loss(_x(m), m.ones(2, 3), weight=m.tensor([[1.0, 2, 3], [4, 5, 6]])),
    "nll_loss": lambda m, F: F.nll_loss(F.log_softmax(_x(m), 1), m.tensor([2, 0])),
    "nll_loss_weight_sum": lambda m, F: F.nll_loss(F.log_softmax(_x(m), 1), m.tensor([2, 0]),
                                                   weight=m.tensor([1.0, 2.0, 3.0]), reduction="sum"),
    "nll_loss_ignore_index": lambda m, F: F.nll_loss(F.log_softmax(_x(m), 1), m.tensor([2, 1]), ignore_index=1),
    "nll_loss_3d": lambda m, F: F.nll_loss(F.log_softmax(_x(m).reshape(1, 3, 2), 1), m.tensor([[2, 0]])),
    "nll_loss_4d_none": lambda m, F: F.nll_loss(F.log_softmax(_x(m).reshape(1, 2, 3, 1), 1),
                                                m.tensor([[[1], [0], [1]]]), reduction="none"),
    "nll_loss_3d_weight_ignore": lambda m, F: F.nll_loss(F.log_softmax(_x(m).reshape(2, 3, 1), 1),
                                                         m.tensor([[2], [1]]), weight=m.tensor([1.0, 2.0, 3.0]),
                                                         ignore_index=1),
}


def _run(case, m, F):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = case(m, F)
        if out.requires_grad:
            out.sum().backward()  # the recorded graph runs
    # the same text, up to the namespace of Size in it
    messages = sorted(str(w.message).replace("dispatchcore.Size", "torch.Size") for w in caught
                      if issubclass(w.category, UserWarning))
    return out.detach().numpy(), str(out.dtype).rpartition(".")[2], tuple(out.shape), messages


@pytest.mark.parametrize("name", CASES)
def test_functional_matches_torch(name):
    ours = _run(CASES[name], dc, DF)
    theirs = _run(CASES[name], torch, TF)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert ours[1:4] == theirs[1:4]


def test_the_input_gradient_matches_torch():
    grads = []
    for m, F in ((dc, DF), (torch, TF)):
        x = _x(m)
        loss = F.mse_loss(F.softmax(x, 1), m.ones(2, 3) / 3) + F.nll_loss(F.log_softmax(x, 1), m.tensor([2, 0]))
        loss.backward()
        grads.append(x.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("call", [
    lambda m, F: F.mse_loss(_x(m), m.ones(2, 3), reduction="avg"),
    lambda m, F: F.nll_loss(F.log_softmax(_x(m), 1), m.tensor([2, 0]), reduction="max"),
    lambda m, F: F.mse_loss(_x(m), m.ones(2, 3), weight=m.ones(3)),
    lambda m, F: F.nll_loss(F.log_softmax(_x(m).reshape(1, 3, 2), 1), m.tensor([[2, 0, 1]])),
])
def test_functional_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch, TF)
    with pytest.raises(type(theirs.value)) as ours:
        call(dc, DF)
    assert str(ours.value) == str(theirs.value)
