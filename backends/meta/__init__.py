"""Meta backend: tensors with shapes, strides and dtypes but no data (``device("meta")``).

Every core operator that has no CompositeImplicitAutograd decomposition gets a Meta kernel that
computes the output geometry exactly as a CPU call would (see ``kernels.py``), so whole programs
can be shape-checked without touching memory. Registered through the public ``Library`` API,
like any third-party backend; the shape rules live in ``shapes.py`` for other backends to reuse.
"""

from __future__ import annotations

from types import ModuleType

from dispatchcore import DispatchKey, Library, native

from .kernels import MetaData, kernel_table, meta_tensor

__all__ = ["MetaData", "meta_tensor", "register"]


def _families() -> list[ModuleType]:
    return native.families(__name__)


def register(lib: Library | None = None) -> Library:
    """Register every Meta kernel; returns the owning Library (destroy it to unregister).

    Args:
        lib: an ``aten`` IMPL library to register into; a new one keyed to ``Meta`` if omitted.

    Example:
        >>> import dispatchcore as dc
        >>> lib = register()
        >>> x = meta_tensor((2, 3), dc.float32)
        >>> dc.ops.aten.sum.dim_IntList(x, [0]).shape
        dispatchcore.Size([3])
        >>> lib.destroy()
    """
    lib = lib if lib is not None else Library("aten", "IMPL", dispatch_key=DispatchKey.Meta)
    for op_name, kernel in kernel_table().items():
        lib.impl(op_name, kernel, DispatchKey.Meta)
    for family in _families():
        for op_name, kernel in family.KERNELS.items():
            lib.impl(op_name, kernel, DispatchKey.Meta, _builtin=True)
    return lib
