"""Runnable seed examples, importable from an installed dispatchcore.

* ``my_relu``: the canonical custom ``autograd.Function`` (``MyReLU``) with ``save_for_backward``.
* ``roi_align``: torchvision's ``roi_align`` as a registered operator: schema, numpy CPU kernels
  and a ``Function`` registered as its Autograd kernel (the C++ custom-autograd tutorial's
  ``ROIAlignFunction`` pattern, torchvision/csrc/ops/autograd/roi_align_kernel.cpp), plus two cautionary demos.
* ``tiny_mlp``: a two-layer perceptron trained with plain SGD; every op dispatches.

``python -m dispatchcore`` tours them; ``docs/examples/*.py`` are thin scripts that run each one.
Importing this package registers nothing: the examples register when called and clean up after.
"""

__all__ = ["my_relu", "roi_align", "tiny_mlp"]
