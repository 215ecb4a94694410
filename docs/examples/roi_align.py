"""torchvision's ``roi_align`` as a dispatched operator with a custom-Function Autograd kernel.

Defines ``torchvision::roi_align`` and ``torchvision::_roi_align_backward`` with torchvision's
schemas, numpy CPU kernels for both, and ``ROIAlignFunction`` registered at ``Autograd``; prints
the computed table, a gradient, a numerical gradient check, and two cautionary demos (inference
mode instead of the guard, and no guard at all). The code lives in
``dispatchcore/examples/roi_align.py``; run this script with ``python docs/examples/roi_align.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import dispatchcore  # noqa: F401
except ModuleNotFoundError:  # run from a source checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dispatchcore.examples.roi_align import (  # noqa: E402
    ROIAlignBackwardFunction,
    ROIAlignFunction,
    define,
    demo_inference_mode,
    demo_missing_guard,
    main,
    roi_align,
    roi_align_backward_cpu,
    roi_align_forward_cpu,
)

__all__ = ["ROIAlignBackwardFunction", "ROIAlignFunction", "define", "demo_inference_mode",
           "demo_missing_guard", "main", "roi_align", "roi_align_backward_cpu", "roi_align_forward_cpu"]

if __name__ == "__main__":
    main()
