"""A tiny multilayer perceptron trained with plain SGD; every operation dispatches.

Two linear layers with a ReLU between them, weights as leaf tensors with ``requires_grad``,
written with ``@``, ``+`` and ``relu``; the loss is ``aten::mse_loss``. Each forward op goes
AutogradCPU -> CPU and records a node; ``loss.backward()`` runs the derivative formulas, which
call dispatched operators again. The update runs under ``no_grad``: grad mode is a flag, not a
dispatch key, so the in-place ``-=`` still passes AutogradCPU (which records nothing) and
ADInplaceOrView (which bumps the weight's version counter), then CPU.

Run it with ``python docs/examples/tiny_mlp.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dispatchcore as dc

__all__ = ["init_params", "make_data", "main", "mse_loss", "predict", "train"]


def mse_loss(prediction: dc.Tensor, target: dc.Tensor) -> dc.Tensor:
    """Mean squared error, one call of ``aten::mse_loss`` (``torch.nn.functional.mse_loss``)."""
    return dc.ops.aten.mse_loss.default(prediction, target)


def make_data(n: int = 64, seed: int = 0) -> tuple[dc.Tensor, dc.Tensor]:
    """Synthetic regression data: ``y = sin(2 x0) + x1 * x2``, seeded."""
    dc.manual_seed(seed)
    x = dc.rand(n, 3) * 2.0 - 1.0
    x0, x1, x2 = (x[:, i:i + 1] for i in range(3))
    y = (x0 * 2.0).sin() + x1 * x2
    return x, y


def init_params(hidden: int = 16, seed: int = 1) -> list[dc.Tensor]:
    """``[W1, b1, W2, b2]`` for 3 -> hidden -> 1, scaled like ``nn.Linear``'s default; leaves."""
    dc.manual_seed(seed)
    params = [dc.randn(3, hidden) * (1 / 3) ** 0.5, dc.zeros(hidden),
              dc.randn(hidden, 1) * (1 / hidden) ** 0.5, dc.zeros(1)]
    return [p.requires_grad_() for p in params]


def predict(params: list[dc.Tensor], x: dc.Tensor) -> dc.Tensor:
    """The forward pass: ``relu(x @ W1 + b1) @ W2 + b2``."""
    w1, b1, w2, b2 = params
    return (x @ w1 + b1).relu() @ w2 + b2


def train(steps: int = 60, lr: float = 0.1, every: int = 10,
          out: Callable[[str], Any] | None = print) -> list[float]:
    """Train for ``steps`` steps of SGD; print the loss every ``every`` steps; return every loss."""
    x, y = make_data()
    params = init_params()
    losses: list[float] = []
    for step in range(steps):
        loss = mse_loss(predict(params, x), y)
        loss.backward()
        with dc.no_grad():
            for p in params:
                assert p.grad is not None  # backward() gave every parameter a gradient
                p -= lr * p.grad
                p.grad = None
        losses.append(loss.item())
        if out is not None and (step % every == 0 or step == steps - 1):
            out(f"   step {step:3d}  loss {losses[-1]:.4f}")
    return losses


def main(steps: int = 60) -> list[float]:
    """Train and print (``python docs/examples/tiny_mlp.py``); returns the losses."""
    print(f"Training a 3-16-1 MLP with SGD for {steps} steps:")
    losses = train(steps)
    print(f"loss fell from {losses[0]:.4f} to {losses[-1]:.4f}")
    return losses


if __name__ == "__main__":
    main()
