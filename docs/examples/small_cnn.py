"""A small CNN (Conv2d, BatchNorm2d, MaxPool2d, Dropout) learns to tell two kinds of 16x16 images apart.

Written as a PyTorch user writes it: train mode (batch statistics, dropout masks drawn from the
seeded generator), then eval mode (running statistics, no dropout). Run it with real torch or on
dispatchcore, unchanged (``python -m dispatchcore run docs/examples/small_cnn.py``): both print
the same losses.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_images(n):
    """Noisy 16x16 images: class 0 has a bright horizontal bar, class 1 a vertical one."""
    labels = torch.randint(0, 2, (n,))
    images = 0.5 * torch.randn(n, 1, 16, 16)
    rows = torch.randint(2, 14, (n,))
    for i in range(n):
        r = rows[i].item()
        if labels[i].item() == 0:
            images[i, 0, r, 2:14] += 2.0
        else:
            images[i, 0, 2:14, r] += 2.0
    return images, labels


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 4 * 4, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))  # 8 x 8 x 8
        x = self.pool(F.relu(self.bn2(self.conv2(x))))  # 16 x 4 x 4
        x = self.dropout(torch.flatten(x, 1))
        return self.fc(x)


train_x, train_y = make_images(64)
test_x, test_y = make_images(32)

model = SmallCNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)

model.train()
for step in range(8):
    batch = slice(16 * (step % 4), 16 * (step % 4) + 16)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(train_x[batch]), train_y[batch])
    loss.backward()
    optimizer.step()
    print(f"step {step} train loss {loss.item():.8f}")

model.eval()
with torch.no_grad():
    logits = model(test_x)
    test_loss = F.cross_entropy(logits, test_y).item()
    accuracy = (logits.argmax(dim=1) == test_y).float().mean().item()
print(f"eval loss {test_loss:.8f} accuracy {accuracy:.4f}")
print(f"running mean of bn1 {model.bn1.running_mean.sum().item():.8f}")
