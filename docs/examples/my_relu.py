"""MyReLU: a custom autograd ``Function`` with ``save_for_backward`` (PyTorch's canonical example).

The code lives in ``dispatchcore/examples/my_relu.py`` so that ``python -m dispatchcore`` can
tour it from an installed package; this script runs it: ``python docs/examples/my_relu.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import dispatchcore  # noqa: F401
except ModuleNotFoundError:  # run from a source checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dispatchcore.examples.my_relu import MyReLU, demo, main  # noqa: E402

__all__ = ["MyReLU", "demo", "main"]

if __name__ == "__main__":
    main()
