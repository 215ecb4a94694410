"""Python-level tensor factories: ``tensor``, ``zeros``, ``ones``, ``empty``, ``full``, ``arange``, ...

Mirrors ``torch/_torch_docs.py``'s factory signatures. Each factory except ``tensor`` is one call
of an ``aten`` factory operator, which has no tensor argument: its BackendSelect kernel turns
``device=`` into a key set (spec §6.4). ``tensor(data)`` builds a CPU ndarray with torch's dtype
inference and moves it with ``_to_copy`` when another device is asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import aten as _definitions  # noqa: F401 - defines the operators used here
from . import dtypes as _dt
from .ops import aten
from .tensor import Tensor, wrap_cpu

__all__ = ["arange", "empty", "empty_like", "full", "full_like", "linspace", "manual_seed", "ones",
           "ones_like", "rand", "rand_like", "randn", "randn_like", "tensor", "zeros", "zeros_like"]


def _size(size: tuple) -> list[int]:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        return list(size[0])
    return list(size)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data: Any) -> _dt.dtype:
    """torch.tensor's inference: bool < int64 < default float < complex, over nested lists."""
    kind = 0
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            kind = max(kind, 4 if x.dtype.is_complex else 3 if x.dtype.is_floating_point else 2)
        elif isinstance(x, bool):
            kind = max(kind, 1)
        elif isinstance(x, int):
            kind = max(kind, 2)
        elif isinstance(x, float):
            kind = max(kind, 3)
        elif isinstance(x, complex):
            kind = max(kind, 4)
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    default = _dt.get_default_dtype()
    return {0: default, 1: _dt.bool_, 2: _dt.int64, 3: default,
            4: _dt.complex128 if default is _dt.float64 else _dt.complex64}[kind]


def tensor(data: Any, *, dtype: _dt.dtype | None = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (``torch.tensor``).

    Example:
        >>> tensor([1.0, 2.0])
        tensor([1., 2.])
        >>> tensor([[1, 2], [3, 4]]).dtype
        dispatchcore.int64
    """
    if isinstance(data, np.ndarray):
        array = np.array(data, dtype=dtype.np if dtype is not None else None, copy=True)
        _dt.from_numpy_dtype(array.dtype)
    else:
        if isinstance(data, Tensor):
            data = data.tolist()
        if dtype is None:
            dtype = _infer_dtype(data)
        array = np.array(data, dtype=dtype.np)
    t = wrap_cpu(array)
    if device is not None and _dt.device(device).type != "cpu":
        t = aten._to_copy.default(t, device=_dt.device(device))
    return _finish(t, requires_grad)


def _factory_kwargs(dtype: Any, device: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if device is not None:
        kwargs["device"] = _dt.device(device)
    return kwargs


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (``torch.empty``)."""
    return _finish(aten.empty.memory_format(_size(size), **_factory_kwargs(dtype, device)), requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (``torch.zeros``).

    Example:
        >>> zeros(2, 3).shape
        dispatchcore.Size([2, 3])
    """
    return _finish(aten.zeros.default(_size(size), **_factory_kwargs(dtype, device)), requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (``torch.ones``)."""
    return _finish(aten.ones.default(_size(size), **_factory_kwargs(dtype, device)), requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (``torch.full``); the dtype follows the value."""
    return _finish(aten.full.default(list(size), fill_value, **_factory_kwargs(dtype, device)),
                   requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step`` (``torch.arange``)."""
    if end is None:
        start, end = 0, start
    return _finish(aten.arange.start_step(start, end, step, **_factory_kwargs(dtype, device)),
                   requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (``torch.linspace``)."""
    return _finish(aten.linspace.default(start, end, steps, **_factory_kwargs(dtype, device)),
                   requires_grad)


def rand(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) (``torch.rand``); reproducible after ``manual_seed``."""
    return _finish(aten.rand.default(_size(size), **_factory_kwargs(dtype, device)), requires_grad)


def randn(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples (``torch.randn``); reproducible after ``manual_seed``."""
    return _finish(aten.randn.default(_size(size), **_factory_kwargs(dtype, device)), requires_grad)


def _like(factory: Any) -> Any:
    def like(input: Tensor, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
        return factory(list(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                       requires_grad=requires_grad)

    like.__name__ = factory.__name__ + "_like"
    like.__doc__ = f"``{factory.__name__}`` with the shape, dtype and device of ``input``."
    return like


empty_like = _like(empty)
zeros_like = _like(zeros)
ones_like = _like(ones)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """``full`` with the shape, dtype and device of ``input``."""
    return full(list(input.shape), fill_value, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)


_seed_hooks: list[Any] = []


def manual_seed(seed: int) -> None:
    """Seed every backend's random generator (``torch.manual_seed``)."""
    from .plugins import load_backends

    load_backends()
    for hook in _seed_hooks:
        hook(seed)


def register_seed_hook(hook: Any) -> None:
    """Backends call this so that ``manual_seed`` reaches their generators."""
    _seed_hooks.append(hook)
