import sys

import torch

print(torch.ones(1).tolist())
sys.exit(int(sys.argv[1]))
