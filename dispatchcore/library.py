"""``torch.library`` for dispatchcore: registering kernels, and defining operators the modern way.

The public face of two layers. ``Library``, ``define``, ``impl`` and ``fallthrough_kernel`` come
from ``dispatchcore/_library.py``, just above the registry (TORCH_LIBRARY and friends);
``custom_op``, ``register_fake``, ``register_autograd``, ``opcheck`` and the rest from
``dispatchcore/custom_ops.py``, which builds on tensors, autograd and the Python key. Mirrors
``torch/library.py``. Invariant: nothing is defined here, so nothing below imports this module;
dispatchcore's own modules import ``_library`` or ``custom_ops`` directly.

Example:
    >>> import dispatchcore as dc
    >>> from dispatchcore.library import Library, custom_op
    >>> Library.__module__, custom_op.__module__
    ('dispatchcore._library', 'dispatchcore.custom_ops')
"""

from __future__ import annotations

from ._library import Library, RegistrationHandle, define, fallthrough_kernel, impl
from ._library import _keep_alive as _keep_alive  # torch.library._keep_alive: define/impl's FRAGMENT libraries
from .custom_ops import (
    CustomOpDef,
    custom_op,
    get_ctx,
    infer_schema,
    opcheck,
    register_autograd,
    register_fake,
    register_kernel,
    register_torch_dispatch,
)

__all__ = ["CustomOpDef", "Library", "RegistrationHandle", "custom_op", "define", "fallthrough_kernel", "get_ctx",
           "impl", "infer_schema", "opcheck", "register_autograd", "register_fake", "register_kernel",
           "register_torch_dispatch"]
