"""``dispatchcore.ops``: operators by name, as ``torch.ops`` exposes them.

``ops.<ns>.<name>`` is an ``OpOverloadPacket``; ``ops.<ns>.<name>.<overload>`` (``.default``
for the unnamed overload) is the ``OperatorHandle`` itself, so calling it is one dispatch with no
wrapper in between. Mirrors ``torch/_ops.py`` (``_OpNamespace``, ``OpOverloadPacket``).
Attributes are cached on first access, as in torch: ``ops.<ns>`` in this module's globals (so
``del dispatchcore.ops.<ns>`` drops it, and the next access makes a new one), packets on their
namespace. Destroying a ``define`` drops its packet (torch's ``_clear_torch_ops_cache``), so the
next access looks the operator up again; a handle kept elsewhere raises when called after its def
is gone.
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
        if op_name.startswith("__"):  # Python's protocols (copy, pickle) ask; aten's __and__ etc. are ops
            ns = self.__dict__.get("name")
            if ns is None or not get_dispatcher().overloads(ns, op_name):
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
    arguments; calling an overload directly skips that search. A Python number fits a ``Tensor``
    argument where torch lets it (``FunctionSchema.numbers_as_tensors``): ``ops.aten.add(x, 2)``
    calls ``add.Tensor`` with ``2`` wrapped, as torch's packet does.
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
        errors = []
        for op in candidates:
            assert op.schema is not None  # overloads() returns defined operators only
            try:
                op.schema.bind(args, kwargs, is_tensor=is_dispatch_arg)
            except RuntimeError as e:
                errors.append(f"{e}\n\n")
                continue
            return op(*args, **kwargs)
        # torch's text: every overload's binding error, each followed by a blank line
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n"
                           + "".join(errors))

    def __repr__(self) -> str:
        return f"{self._namespace}.{self._name}"


if TYPE_CHECKING:
    # For type checkers only; at runtime ``aten`` comes from __getattr__ like any namespace.
    # dispatchcore's own modules import it inside an import cycle, where mypy would take
    # __getattr__'s return type unanalyzed ("OpNamespace?"; python/mypy#5345).
    aten: OpNamespace


def __getattr__(ns: str) -> OpNamespace:
    """``ops.<ns>`` (``torch._ops._Ops.__getattr__``): a new namespace, cached as a module attribute.

    Called only when ``ns`` is not an attribute yet: on first use, or after ``del ops.<ns>``.
    """
    if ns.startswith("__"):
        raise AttributeError(ns)
    # setdefault: two threads asking at once get the same namespace object
    return globals().setdefault(ns, OpNamespace(ns))  # type: ignore[no-any-return]


def _forget(op: OperatorHandle) -> None:
    """Drop the cached packet of ``op``'s name, after its def is removed (``_clear_torch_ops_cache``).

    The next ``ops.<ns>.<name>`` looks the operator up again: gone if no overload is defined.
    """
    ns, _, rest = op.qualname.partition("::")
    namespace = globals().get(ns)
    if isinstance(namespace, OpNamespace):
        vars(namespace).pop(rest.partition(".")[0], None)
