"""A tiny MLP (3-16-1, ReLU) trained with plain SGD on synthetic data; the loss falls.

The code lives in ``dispatchcore/examples/tiny_mlp.py``; run this script with
``python docs/examples/tiny_mlp.py [steps]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import dispatchcore  # noqa: F401
except ModuleNotFoundError:  # run from a source checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dispatchcore.examples.tiny_mlp import main, predict, train  # noqa: E402

__all__ = ["main", "predict", "train"]

if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
