"""Tensor layouts and memory formats: ``dispatchcore.strided``, ``dispatchcore.channels_last``, ...

Mirrors ``torch.layout`` (``c10/core/Layout.h``) and ``torch.memory_format``
(``c10/core/MemoryFormat.h``): one interned object per value, printed as torch prints its own
(``torch.strided`` is ``dispatchcore.strided`` here). Only ``strided`` tensors are modelled; the
other layouts exist so that a factory can refuse them with torch's error.
"""

from __future__ import annotations

__all__ = [
    "channels_last", "channels_last_3d", "contiguous_format", "layout", "memory_format",
    "preserve_format", "sparse_bsc", "sparse_bsr", "sparse_coo", "sparse_csc", "sparse_csr",
    "strided",
]


class _EnumValue:
    """One named value of a c10 enum, printed as torch prints it (``dispatchcore.strided``)."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: int) -> None:
        self.name = name  # torch's attribute name ("strided")
        self.value = value  # the c10 enum value, as schemas store it

    def __repr__(self) -> str:
        return f"dispatchcore.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the module attribute of that name


class layout(_EnumValue):  # noqa: N801 - torch.layout's name
    """A tensor layout (``torch.layout``, ``c10::Layout``)."""

    __slots__ = ()


class memory_format(_EnumValue):  # noqa: N801 - torch.memory_format's name
    """A memory format (``torch.memory_format``, ``c10::MemoryFormat``)."""

    __slots__ = ()


strided = layout("strided", 0)
sparse_coo = layout("sparse_coo", 1)
sparse_csr = layout("sparse_csr", 2)
sparse_csc = layout("sparse_csc", 4)
sparse_bsr = layout("sparse_bsr", 5)
sparse_bsc = layout("sparse_bsc", 6)

contiguous_format = memory_format("contiguous_format", 0)
preserve_format = memory_format("preserve_format", 1)
channels_last = memory_format("channels_last", 2)
channels_last_3d = memory_format("channels_last_3d", 3)
