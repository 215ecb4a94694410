"""``dispatchcore.ops``: operators by name, as ``torch.ops`` exposes them.

``ops.<ns>.<name>`` is an ``OpOverloadPacket``; ``ops.<ns>.<name>.<overload>`` (``.default``
for the unnamed overload) is the ``OperatorHandle`` itself, so calling it is one dispatch with no
wrapper in between. Mirrors ``torch/_ops.py`` (``_OpNamespace``, ``OpOverloadPacket``).
Attributes are cached on first access; handles live for the process, so the cache never goes
stale (an undefined operator's handle raises when called).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dispatcher import get_dispatcher
from .operator import OperatorHandle, is_dispatch_arg

__all__ = ["OpNamespace", "OpOverloadPacket"]


class OpNamespace:
    """``ops.<ns>``: operators of one namespace (``torch._ops._OpNamespace``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        if not get_dispatcher().overloads(self.name, op_name):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        packet = OpOverloadPacket(self.name, op_name)
        setattr(self, op_name, packet)
        return packet

    def __repr__(self) -> str:
        return f"<OpNamespace {self.name}>"


class OpOverloadPacket:
    """``ops.<ns>.<name>``: every overload of one operator (``torch._ops.OpOverloadPacket``).

    Calling the packet picks the first overload (in definition order) whose schema accepts the
    arguments; calling an overload directly skips that search.
    """

    def __init__(self, namespace: str, name: str) -> None:
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"

    def __getattr__(self, overload: str) -> OperatorHandle:
        if overload.startswith("__"):
            raise AttributeError(overload)
        qualname = self._qualname if overload == "default" else f"{self._qualname}.{overload}"
        op = get_dispatcher()._ops.get(qualname)
        if op is None or op.schema is None:
            raise AttributeError(
                f"The underlying op of '{self._namespace}.{self._name}' has no overload name '{overload}'")
        setattr(self, overload, op)
        return op

    def overloads(self) -> list[str]:
        """Names of the defined overloads (``'default'`` for the unnamed one)."""
        return [op.overload_name or "default" for op in get_dispatcher().overloads(self._namespace, self._name)]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        candidates = get_dispatcher().overloads(self._namespace, self._name)
        if len(candidates) == 1:
            return candidates[0](*args, **kwargs)
        for op in candidates:
            assert op.schema is not None  # overloads() returns defined operators only
            try:
                op.schema.bind(args, kwargs, is_tensor=is_dispatch_arg)
            except RuntimeError:
                continue
            return op(*args, **kwargs)
        schemas = "\n".join(f"  {op.schema}" for op in candidates)
        raise RuntimeError(
            f"{self._qualname}() received an invalid combination of arguments. No overload "
            f"accepts them; the schemas are:\n{schemas}"
        )

    def __repr__(self) -> str:
        return f"{self._namespace}.{self._name}"


_namespaces: dict[str, OpNamespace] = {}

if TYPE_CHECKING:
    # For type checkers only; at runtime ``aten`` comes from __getattr__ like any namespace.
    # dispatchcore's own modules import it inside an import cycle, where mypy would take
    # __getattr__'s return type unanalyzed ("OpNamespace?"; python/mypy#5345).
    aten: OpNamespace


def __getattr__(ns: str) -> OpNamespace:
    if ns.startswith("__"):
        raise AttributeError(ns)
    namespace = _namespaces.get(ns)
    if namespace is None:
        namespace = _namespaces[ns] = OpNamespace(ns)
        globals()[ns] = namespace  # later lookups are plain module attribute reads
    return namespace
