"""Train, checkpoint with ``torch.save``, reload into fresh objects with ``torch.load``, continue.

The checkpoint holds the model's and the optimizer's ``state_dict`` (Adam's step counts and
moment estimates) and the random-number generator's state (the model has Dropout). A second,
uninterrupted run of the same 12 steps shows that the resumed losses continue exactly. Written as
a PyTorch user writes it: run it with real torch or on dispatchcore, unchanged (``python -m
dispatchcore run docs/examples/save_and_resume.py``): both print the same losses.
"""

import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(128, 10)
y = x[:, :3].sum(dim=1, keepdim=True) - x[:, 3:5].prod(dim=1, keepdim=True)


def make_model():
    return nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Dropout(0.1), nn.Linear(24, 1))


def train(model, optimizer, steps):
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


# Uninterrupted: 12 steps in one go.
torch.manual_seed(1)
model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
straight = train(model, optimizer, 12)

# Interrupted: 6 steps, save, rebuild everything from the checkpoint, 6 more steps.
torch.manual_seed(1)
model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
first = train(model, optimizer, 6)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "rng": torch.get_rng_state(), "step": 6}, path)
    del model, optimizer

    checkpoint = torch.load(path)
    model = make_model()  # fresh weights, overwritten by the checkpoint's
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    optimizer.load_state_dict(checkpoint["optimizer"])
    torch.set_rng_state(checkpoint["rng"])
    print(f"resumed at step {checkpoint['step']}, Adam step count "
          f"{optimizer.state_dict()['state'][0]['step'].item():.0f}")
resumed = first + train(model, optimizer, 6)

for step, (a, b) in enumerate(zip(straight, resumed)):
    print(f"step {step:2d} loss {a:.8f} resumed {b:.8f}")
print("resumed run continues exactly:", straight == resumed)
