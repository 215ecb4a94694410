"""Exception types raised by dispatchcore, with PyTorch's Python exception bases.

PyTorch raises dispatch failures as ``NotImplementedError`` and schema/registration problems as
``RuntimeError`` (c10::Error); the classes here subclass those so that ``except`` clauses written
for torch keep working. Mirrors the error texts of ``c10/core/dispatch/OperatorEntry.cpp``.
"""

from __future__ import annotations

__all__ = ["DispatchError", "RegistrationError", "SchemaError", "tp_name"]


class DispatchError(NotImplementedError):
    """No kernel could be found for a call ("Could not run 'ns::op' with arguments from ...").

    The message starts with PyTorch's text, key for key, and continues with dispatchcore's
    explanation: the keys each argument contributed, what the thread-local sets added or masked,
    the registrations that exist, and the smallest registration that would make the call work.
    """


class RegistrationError(RuntimeError):
    """A registration was rejected; the registry is left exactly as it was before the call."""


class SchemaError(RuntimeError):
    """A function schema could not be parsed, or arguments do not fit a schema."""


def tp_name(cls: type) -> str:
    """A type's ``tp_name``, as torch's messages print a given value's type (``THPUtils_typename``).

    A class statement's type is its name (``list``, ``Tensor``, ``Foo``); a type defined in C
    outside the builtins also names its module (``numpy.float64``, ``numpy.ndarray``).

    Example:
        >>> import numpy as np
        >>> tp_name(int), tp_name(np.float64)
        ('int', 'numpy.float64')
    """
    if cls.__flags__ & (1 << 9) or cls.__module__ == "builtins":  # Py_TPFLAGS_HEAPTYPE: a class statement
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"
