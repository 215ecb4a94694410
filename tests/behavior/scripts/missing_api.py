import torch

x = torch.ones(2)
import torch.fft  # noqa: E402 - line 4: dispatchcore does not model torch.fft

print(torch.fft.fft(x))
