"""A two-layer MLP learns a synthetic 3-class problem: DataLoader, CrossEntropyLoss, Adam.

Written as a PyTorch user writes it. Run it with real torch (``python mlp_classification.py``)
or on dispatchcore, unchanged (``python -m dispatchcore run docs/examples/mlp_classification.py``):
both print the same losses.
"""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

# Synthetic data: 256 points in 8 dimensions, labelled by which of 3 random directions they favour.
n, d, classes = 256, 8, 3
x = torch.randn(n, d)
directions = torch.randn(d, classes)
y = (x @ directions).argmax(dim=1)

loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True,
                    generator=torch.Generator().manual_seed(1))

model = nn.Sequential(
    nn.Linear(d, 32),
    nn.ReLU(),
    nn.Linear(32, classes),
)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(5):
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * xb.shape[0]
    print(f"epoch {epoch} loss {total / n:.8f}")

with torch.no_grad():
    accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
print(f"accuracy {accuracy:.4f}")
