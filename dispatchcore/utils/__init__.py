"""``dispatchcore.utils``: ``data`` (datasets, samplers, ``DataLoader``) and ``hooks``, as ``torch.utils``.

Example:
    >>> import dispatchcore as dc
    >>> from dispatchcore.utils.data import DataLoader, TensorDataset
    >>> [x.tolist() for (x,) in DataLoader(TensorDataset(dc.arange(4)), batch_size=3)]
    [[0, 1, 2], [3]]
"""

from __future__ import annotations

from . import data, hooks

__all__ = ["data", "hooks"]
