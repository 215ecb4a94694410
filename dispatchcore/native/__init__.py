"""The aten operator families, one module per family, as ``aten/src/ATen/native`` groups them.

Each family module (``pointwise``, ``reductions``, ``shape``, ``indexing``, ``nn``, ``norms``,
``embedding_bag``, ``grid_sampler``, ``random``, ``activation``, ``loss``, ``linalg``, ``special``;
last ``structured``: the ``out=`` overloads of the core structured ops, and the kernels torch
builds from every family's ``out=``) is one declaration of its operators, data first (style guide 3.8):

* ``SCHEMAS``: the schemas, verbatim from torch's ``native_functions.yaml``; ``dispatchcore.aten``
  defines them with the core set.
* ``register(lib)``: the backend-independent kernels torch registers for them
  (``CompositeExplicitAutograd``, ``CompositeImplicitAutograd``, ``ADInplaceOrView``,
  ``BackendSelect``), written with dispatched operators only.
* ``register_autograd(lib)``: the derivatives (``autograd.kernels.register_derivative``), with
  torch's node names; formulas call dispatched operators, so double backward works.
* ``FUNCTIONS`` and ``METHODS``: the ``torch.*`` functions and ``Tensor`` methods (dunders
  included) that call them.

Backend kernels live beside the backends' other kernels, in a module of the same name:
``dispatchcore_backends.cpu.<family>.KERNELS`` and ``dispatchcore_backends.meta.<family>.KERNELS``
(``{"name.overload": kernel}``). Invariant: a family registers an operator at exactly the keys
torch 2.13 registers it (``torch._C._dispatch_dump``), so tables and dumps match torch's.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["FAMILIES", "families"]

FAMILIES = ("pointwise", "reductions", "shape", "indexing", "nn", "norms", "embedding_bag", "grid_sampler",
            "random", "activation", "loss", "linalg", "special", "structured")


def families(package: str = __name__) -> list[ModuleType]:
    """The family modules of ``package`` (this one, or a backend's), in ``FAMILIES`` order.

    A backend need not have every family: a module it lacks is skipped.

    Example:
        >>> [m.__name__ for m in families()][-1]
        'dispatchcore.native.structured'
    """
    found = []
    for name in FAMILIES:
        try:
            found.append(importlib.import_module(f"{package}.{name}"))
        except ModuleNotFoundError as e:
            if e.name != f"{package}.{name}":
                raise
    return found
