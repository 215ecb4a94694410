"""The aten operator families, one module per family, as ``aten/src/ATen/native`` groups them.

Each family module (``pointwise``, ``reductions``, ``shape``, ``indexing``, ``nn``, ``norms``,
``embedding_bag``, ``grid_sampler``, ``random``, ``activation``, ``loss``, ``linalg``, ``special``,
``transformations``, ``bucketization``, ``summary``;
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
  included) that call them; :class:`Bindings` parses their arguments as torch's bindings do.

Backend kernels live beside the backends' other kernels, in a module of the same name:
``dispatchcore_backends.cpu.<family>.KERNELS`` and ``dispatchcore_backends.meta.<family>.KERNELS``
(``{"name.overload": kernel}``). Invariant: a family registers an operator at exactly the keys
torch 2.13 registers it (``torch._C._dispatch_dump``), so tables and dumps match torch's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["FAMILIES", "Bindings", "families"]

FAMILIES = ("pointwise", "reductions", "shape", "indexing", "nn", "norms", "embedding_bag", "grid_sampler",
            "random", "activation", "loss", "linalg", "special", "transformations", "bucketization", "summary",
            "structured")


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


class Bindings:
    """A family's ``torch.*`` functions and ``Tensor`` methods, parsed as torch's generated bindings parse.

    ``signatures`` maps ``"name"`` (the function) and ``"Tensor.name"`` (the method) to torch's
    binding signatures (``python_torch_functions``' format); ``derive(key)`` gives those of a key
    the dict does not list (a family whose bindings share signatures under other names). Each
    ``PythonArgParser`` is built on first use. ``function``/``method`` make the callables: they
    parse, then ``call(index, arguments)`` with the signature's index and the arguments by name
    (the method's ``self`` as ``input``).

    Example:
        >>> import dispatchcore as dc
        >>> b = Bindings({"Tensor.twice": ("twice(int64_t n=2)",)})
        >>> twice = b.method("twice", lambda i, a: a["input"] * a["n"])
        >>> twice(dc.tensor([1.0]), 3)
        tensor([3.])
        >>> twice(dc.tensor([1.0]), "a")
        Traceback (most recent call last):
        ...
        TypeError: twice(): argument 'n' (position 1) must be int, not str
    """

    def __init__(self, signatures: dict[str, tuple[str, ...]],
                 derive: Callable[[str], tuple[str, ...]] | None = None) -> None:
        self.signatures = signatures
        self._derive = derive
        self._parsers: dict[str, Any] = {}

    def parse(self, key: str, args: tuple, kwargs: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Which of ``key``'s signatures the call fits, and its arguments by name; torch's TypeError if none."""
        parser = self._parsers.get(key)
        if parser is None:
            from ..factories import _CHECKS  # the dtype/device/... checks the factories' bindings use
            from ..schema import PythonArgParser

            signatures = self.signatures.get(key)
            if signatures is None and self._derive is not None:
                signatures = self._derive(key)
            if signatures is None:
                raise KeyError(key)
            parser = self._parsers[key] = PythonArgParser(signatures, _CHECKS)
        return parser.parse(args, kwargs)

    def function(self, name: str, call: Callable[[int, dict[str, Any]], Any]) -> Callable[..., Any]:
        def function(*args: Any, **kwargs: Any) -> Any:
            index, bound = self.parse(name, args, kwargs)
            return call(index, bound)

        function.__name__ = function.__qualname__ = name
        return function

    def method(self, name: str, call: Callable[[int, dict[str, Any]], Any]) -> Callable[..., Any]:
        key = f"Tensor.{name}"

        def method(this: Any, *args: Any, **kwargs: Any) -> Any:
            index, bound = self.parse(key, args, kwargs)
            return call(index, {"input": this, **bound})

        method.__name__ = method.__qualname__ = name
        return method
