"""``dispatchcore.nn``: what ``torch.nn`` offers that dispatchcore models (``functional`` only)."""

from . import functional

__all__ = ["functional"]
