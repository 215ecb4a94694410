"""A custom ``torch.autograd.Function`` (forward, backward, ``ctx.save_for_backward``) inside an ``nn.Module``.

The Function is a "scaled tanh" with a hand-written derivative; the module wraps it with a
learnable scale and is trained to fit a curve. Written as a PyTorch user writes it: run it with
real torch or on dispatchcore, unchanged (``python -m dispatchcore run
docs/examples/custom_function_module.py``): both print the same losses.
"""

import torch
import torch.nn as nn


class ScaledTanh(torch.autograd.Function):
    """y = a * tanh(x), with dy/dx = a * (1 - tanh(x)^2) and dy/da = tanh(x)."""

    @staticmethod
    def forward(ctx, x, a):
        t = torch.tanh(x)
        ctx.save_for_backward(t, a)
        return a * t

    @staticmethod
    def backward(ctx, grad_output):
        t, a = ctx.saved_tensors
        grad_x = grad_output * a * (1 - t * t)
        grad_a = (grad_output * t).sum(dim=0)  # a is broadcast over the batch
        return grad_x, grad_a


class ScaledTanhLayer(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(1, features)
        self.scale = nn.Parameter(torch.ones(features))
        self.out = nn.Linear(features, 1)

    def forward(self, x):
        return self.out(ScaledTanh.apply(self.linear(x), self.scale))


torch.manual_seed(0)
x = torch.linspace(-3, 3, 64).unsqueeze(1)
y = torch.sin(x) + 0.1 * torch.randn(64, 1)

model = ScaledTanhLayer(16)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.MSELoss()

# the hand-written backward agrees with autograd's own derivative of the same formula
check_x = torch.randn(4, 16, dtype=torch.float64, requires_grad=True)
check_a = torch.randn(16, dtype=torch.float64, requires_grad=True)
print("gradcheck", torch.autograd.gradcheck(ScaledTanh.apply, (check_x, check_a)))

for step in range(30):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 5 == 4:
        print(f"step {step} loss {loss.item():.8f}")
print(f"scale[:4] {[round(v, 6) for v in model.scale[:4].tolist()]}")
