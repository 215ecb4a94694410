"""Exception types raised by dispatchcore, with PyTorch's Python exception bases.

PyTorch raises dispatch failures as ``NotImplementedError`` and schema/registration problems as
``RuntimeError`` (c10::Error); the classes here subclass those so that ``except`` clauses written
for torch keep working. Mirrors the error texts of ``c10/core/dispatch/OperatorEntry.cpp``.
"""

from __future__ import annotations

__all__ = ["DispatchError", "RegistrationError", "SchemaError"]


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
