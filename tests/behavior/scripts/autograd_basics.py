"""A small PyTorch program, unchanged: tensors, autograd, a custom Function, nn.functional.

Run by tests/behavior/test_cli_run.py with `python -m dispatchcore run` and, when torch is
installed, with real torch: the printed lines must be the same.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Function


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def fit(steps):
    w = torch.tensor([[0.5, -0.25], [0.125, 1.0]], requires_grad=True)
    x = torch.tensor([[1.0, 2.0], [3.0, -1.0], [-2.0, 0.5]])
    target = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    for step in range(steps):
        y = F.relu(x @ w)
        loss = ((y - target) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
        print(f"step {step}: loss {loss.item():.6f}")
    return w


print("args:", sys.argv[1:])
print("nn.functional is F:", nn.functional is F)
w = fit(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
print("w:", [[round(v, 5) for v in row] for row in w.tolist()])
a = torch.tensor([1.5, -2.0, 3.0], requires_grad=True)
Square.apply(a).sum().backward()
print("grad of sum(a^2):", a.grad.tolist())
print(torch.arange(6).reshape(2, 3).sum(dim=1).tolist())
print(torch.zeros(2, dtype=torch.float64).dtype == torch.float64)
print(a * 2)
print(torch.tensor([[1.0, 2.5], [-3.0, 4.0]]) / 3)
