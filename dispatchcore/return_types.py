"""``torch.return_types``: the named tuples that multi-output operators return (``max``, ``sort``, ...).

Mirrors torch's structseq types (``torch/csrc/utils/structseq.cpp``, generated per operator in
``torch/csrc/autograd/generated/python_return_types.cpp``): a tuple subclass whose items are also
attributes (``values``, ``indices``), which unpacks like a tuple and prints one field a line::

    dispatchcore.return_types.max(
    values=tensor([3.]),
    indices=tensor([1]))

Invariant: a return type is a plain tuple of its fields, in schema order (``r[0] is r.values``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["aminmax", "aminmax_out", "cummax", "cummax_out", "cummin", "cummin_out", "frexp", "frexp_out",
           "kthvalue", "kthvalue_out", "max", "max_out", "median", "median_out", "min", "min_out", "mode",
           "mode_out", "nanmedian", "nanmedian_out", "sort", "sort_out", "topk", "topk_out"]


class _StructSeq(tuple):  # type: ignore[type-arg]
    """The base of the return types: a tuple with named fields (``PyStructSequence``)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    n_fields = n_sequence_fields = 0
    n_unnamed_fields = 0

    def __new__(cls, values: Any = (), *args: Any) -> _StructSeq:
        """From one iterable of the fields (as torch's), or from the fields themselves."""
        items = tuple(values) if not args else (values, *args)
        if len(items) != len(cls._fields):
            raise TypeError(f"{cls.__module__}.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                            f"({len(items)}-sequence given)")
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        body = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"{type(self).__module__}.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (tuple(self),)


def _item_getter(i: int) -> Callable[[tuple[Any, ...]], Any]:
    def get(self: tuple[Any, ...]) -> Any:
        return tuple.__getitem__(self, i)

    return get


def _return_type(name: str, fields: tuple[str, ...]) -> type[_StructSeq]:
    namespace: dict[str, Any] = {
        "__slots__": (), "_fields": fields, "__match_args__": fields,  # ``case max(values, indices):``
        "n_fields": len(fields), "n_sequence_fields": len(fields),
        "__module__": __name__, "__qualname__": name,
        "__doc__": f"The result of ``{name}``: a tuple ({', '.join(fields)}).",
    }
    for i, field in enumerate(fields):
        namespace[field] = property(_item_getter(i), doc=f"Item {i} of the tuple.")
    return type(name, (_StructSeq,), namespace)


max = _return_type("max", ("values", "indices"))  # noqa: A001 - torch.return_types.max
min = _return_type("min", ("values", "indices"))  # noqa: A001 - torch.return_types.min
sort = _return_type("sort", ("values", "indices"))
topk = _return_type("topk", ("values", "indices"))
aminmax = _return_type("aminmax", ("min", "max"))
aminmax_out = _return_type("aminmax_out", ("min", "max"))
cummax = _return_type("cummax", ("values", "indices"))
cummin = _return_type("cummin", ("values", "indices"))
frexp = _return_type("frexp", ("mantissa", "exponent"))
median = _return_type("median", ("values", "indices"))
kthvalue = _return_type("kthvalue", ("values", "indices"))
mode = _return_type("mode", ("values", "indices"))
nanmedian = _return_type("nanmedian", ("values", "indices"))
# what the out= forms return (``torch.max(x, 0, out=(v, i))`` is a ``max_out``)
max_out = _return_type("max_out", ("values", "indices"))
min_out = _return_type("min_out", ("values", "indices"))
sort_out = _return_type("sort_out", ("values", "indices"))
topk_out = _return_type("topk_out", ("values", "indices"))
cummax_out = _return_type("cummax_out", ("values", "indices"))
cummin_out = _return_type("cummin_out", ("values", "indices"))
frexp_out = _return_type("frexp_out", ("mantissa", "exponent"))
median_out = _return_type("median_out", ("values", "indices"))
kthvalue_out = _return_type("kthvalue_out", ("values", "indices"))
mode_out = _return_type("mode_out", ("values", "indices"))
nanmedian_out = _return_type("nanmedian_out", ("values", "indices"))
