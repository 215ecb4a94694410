"""Tensor subclasses with ``__torch_dispatch__``: construction, the handler call, helpers.

Mirrors ``Tensor._make_subclass``/``_make_wrapper_subclass`` (``torch/csrc/autograd/python_variable.cpp``),
the subclass half of ``handle_torch_function_no_python_arg_parser``
(``torch/csrc/utils/python_arg_parser.cpp``) and ``torch/utils/_python_dispatch.py``'s helpers.
Invariant: an instance carries ``Python`` and ``PythonTLSSnapshot`` in its key set exactly when
its class defines ``__torch_dispatch__`` (``check_has_torch_dispatch``); plain tensors never do,
so only the ``Python`` key's fallback (``modes.bind_python_fallback``) ever looks for handlers.

Example:
    >>> import dispatchcore as dc
    >>> class Seen(dc.Tensor):
    ...     ops = []
    ...     @classmethod
    ...     def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
    ...         cls.ops.append(str(func))
    ...         plain = tree_map(lambda t: t.elem if isinstance(t, Seen) else t, args)
    ...         return func(*plain, **(kwargs or {}))
    >>> s = Tensor._make_wrapper_subclass(Seen, (2,))
    >>> s.elem = dc.ones(2)
    >>> (s * 3).tolist(), Seen.ops
    ([3.0, 3.0], ['aten.mul.Tensor'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from math import prod as _prod
from typing import Any
from weakref import WeakSet

import numpy as np

from .dtypes import device as _device_type
from .dtypes import dtype as _dtype_type
from .dtypes import get_default_dtype
from .keys import DispatchKey
from .keyset import key_bits
from .tensor import Tensor, _device_info, _make_tensor, _tp_name, detached_alias, init_tensor
from .tls import inference_active as _inference_active
from .tls import per_thread as _pt

__all__ = [
    "PYTHON_KEYS",
    "WrapperData",
    "dispatch_to_subclasses",
    "has_torch_dispatch",
    "is_traceable_wrapper_subclass",
    "make_subclass",
    "make_wrapper_subclass",
    "return_and_correct_aliasing",
    "transform_subclass",
    "tree_map",
]

# c10's python_ks: what an instance of a class with __torch_dispatch__ adds to its key set.
PYTHON_KEYS = key_bits(DispatchKey.Python) | key_bits(DispatchKey.PythonTLSSnapshot)


def has_torch_dispatch(cls: type) -> bool:
    """Whether ``cls`` overrides ``Tensor.__torch_dispatch__`` (``check_has_torch_dispatch``).

    Example:
        >>> has_torch_dispatch(Tensor)
        False
    """
    impl = getattr(cls, "__torch_dispatch__", None)
    return impl is not None and getattr(impl, "__func__", impl) is not _DISABLED


_DISABLED = Tensor.__dict__["__torch_dispatch__"].__func__  # torch._C._disabled_torch_dispatch_impl


# --- construction --------------------------------------------------------------------------------
def _check_subclass(cls: Any) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is "
                        "not possible. Make sure your class inherits from Tensor.")


def make_subclass(cls: type, data: Any, require_grad: bool = False) -> Any:
    """``Tensor._make_subclass``: an instance of ``cls`` sharing ``data``'s storage and version counter.

    The new tensor is a leaf (``data`` is detached first) and requires grad as told; its key
    set is ``data``'s, plus ``Python``/``PythonTLSSnapshot`` when ``cls`` defines
    ``__torch_dispatch__``. ``__init__`` is not called, as in torch.

    Example:
        >>> import dispatchcore as dc
        >>> class Marked(dc.Tensor):
        ...     pass
        >>> base = dc.ones(2)
        >>> m = Tensor._make_subclass(Marked, base)
        >>> type(m).__name__, m._version == base._version, dc.dispatch_keys(m) == dc.dispatch_keys(base)
        ('Marked', True, True)
    """
    _check_subclass(cls)
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not {_tp_name(type(data))}")
    out = detached_alias(data, cls)
    if has_torch_dispatch(cls):
        out._key_bits = data._key_bits | PYTHON_KEYS
    else:
        out._key_bits = data._key_bits & ~PYTHON_KEYS
    if require_grad:
        out._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return out


class WrapperData:
    """The data of a wrapper subclass instance: geometry and dtype, no elements.

    Follows Note [Backend data protocol] (``dispatchcore/tensor.py``), as the Meta backend's
    ``MetaData`` does: the real data lives in the subclass's own attributes, so anything that
    reaches for elements here raises torch's "data is not allocated" error.

    Example:
        >>> d = WrapperData((2, 3), (3, 1), np.dtype("float32"))
        >>> d.strides, d.size
        ((12, 4), 6)
    """

    __slots__ = ("shape", "strides", "dtype", "ndim", "size", "itemsize", "storage_offset")

    def __init__(self, shape: Sequence[int], strides: Sequence[int], dtype: np.dtype,
                 storage_offset: int = 0) -> None:
        self.shape = shape = tuple(map(int, shape))
        self.dtype = dtype = dtype if dtype.__class__ is not str and isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.itemsize = itemsize = dtype.itemsize
        self.strides = tuple([int(s) * itemsize for s in strides])
        self.ndim = len(shape)
        self.size = _prod(shape)
        self.storage_offset = int(storage_offset)

    def to_numpy(self) -> np.ndarray:
        """Refused: a wrapper's own storage is never allocated (``TensorImpl::data``)."""
        raise RuntimeError(
            "The tensor has a non-zero number of elements, but its data is not allocated yet.\n"
            "If you're using torch.compile/export/fx, it is likely that we are erroneously tracing into a "
            "custom kernel. To fix this, please wrap the custom kernel into an opaque custom op. Please see "
            "the following for details: https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")

    def __repr__(self) -> str:
        return f"WrapperData(shape={self.shape}, dtype={self.dtype})"


def make_wrapper_subclass(cls: type, size: Sequence[int], strides: Sequence[int] | None = None,
                          storage_offset: int | None = None, memory_format: Any = None,
                          dtype: Any = None, layout: Any = None, device: Any = None,
                          pin_memory: bool = False, requires_grad: bool = False,
                          dispatch_sizes_strides_policy: Any = None, dispatch_device: bool = False,
                          dispatch_layout: bool = False, _extra_dispatch_keys: Any = None,
                          storage_size: Any = None) -> Any:
    """``Tensor._make_wrapper_subclass``: a ``cls`` instance with the given metadata and no data.

    ``cls`` must define ``__torch_dispatch__``; the instance's key set is that of a tensor on
    ``device`` plus ``Python``/``PythonTLSSnapshot``, its ``_data`` a ``WrapperData``. The
    subclass keeps its real tensors in attributes of its own (usually set in ``__init__``).
    The remaining keywords are accepted for torch's signature and ignored.

    Example:
        >>> import dispatchcore as dc
        >>> class W(dc.Tensor):
        ...     @classmethod
        ...     def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        ...         return NotImplemented
        >>> w = Tensor._make_wrapper_subclass(W, (2, 3), dtype=dc.float64, requires_grad=True)
        >>> w.shape, w.stride(), w.dtype, w.requires_grad
        (dispatchcore.Size([2, 3]), (3, 1), dispatchcore.float64, True)
        >>> dc.dispatch_keys(w)
        DispatchKeySet(CPU, Python, ADInplaceOrView, AutogradCPU, AutocastCPU, PythonTLSSnapshot)
    """
    if cls not in _WRAPPER_CLASSES:  # checked once per class (a class's handler is set when it is made)
        _check_subclass(cls)
        if not has_torch_dispatch(cls):
            raise TypeError(f"{cls.__name__} must define __torch_dispatch__")
        _WRAPPER_CLASSES.add(cls)
    shape = tuple(map(int, size))
    if strides is None:
        strides, step = [], 1
        for s in reversed(shape):
            strides.append(step)
            step *= max(s, 1)
        strides.reverse()
    dt = get_default_dtype() if dtype is None else dtype
    if not isinstance(dt, _dtype_type):
        raise TypeError(f"_make_wrapper_subclass(): argument 'dtype' must be dtype, not {_tp_name(type(dt))}")
    dev, bits, inference_bits = _device_info(device if device is not None else "cpu")
    inference = _inference_active and _pt.state.autograd[1]  # an inference tensor, as wrap() makes
    t = init_tensor(_make_tensor_of(cls), WrapperData(shape, strides, dt.np, storage_offset or 0),
                    dev if isinstance(dev, _device_type) else _device_type(dev),
                    (inference_bits if inference else bits) | PYTHON_KEYS, None if inference else [0])
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


# the classes make_wrapper_subclass has accepted; weak, so that a class defined in a test goes away
_WRAPPER_CLASSES: WeakSet[type] = WeakSet()


def _make_tensor_of(cls: type) -> Any:
    """A new ``cls`` instance with no slot set and ``__init__`` not run."""
    return _make_tensor() if cls is Tensor else object.__new__(cls)


# --- the handler call ------------------------------------------------------------------------------
def overloaded_args(args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> list[Any]:
    """The arguments whose handlers run, torch's order (``append_overloaded_arg``).

    Tensors carrying the ``Python`` key, in argument order (items of list arguments included),
    one per class; a subclass goes before a superclass already listed.
    """
    found: list[Any] = []
    for a in args:
        _collect(a, found)
    if kwargs:
        for a in kwargs.values():
            _collect(a, found)
    return found


_PYTHON_BIT = key_bits(DispatchKey.Python)


def _collect(value: Any, found: list[Any]) -> None:
    if value.__class__ is Tensor:  # plain tensors never carry the Python key
        return
    if type(value) in (list, tuple):
        for item in value:
            if item.__class__ is not Tensor and item is not None:
                _collect(item, found)
        return
    if not getattr(value, "_key_bits", 0) & _PYTHON_BIT or not isinstance(value, Tensor):
        return
    append_overloaded(found, value)


def append_overloaded(found: list[Any], value: Any) -> None:
    """Add ``value`` as torch's ``append_overloaded_arg`` does: one per class, a subclass before its superclasses."""
    cls = type(value)
    for seen in found:
        if type(seen) is cls:
            return
    for i, seen in enumerate(found):
        if issubclass(cls, type(seen)):
            found.insert(i, value)
            return
    found.append(value)


# Note [torch_dispatch rules]: ``library.register_torch_dispatch(op, cls, fn)`` (torch's
# simple_registry) lets an operator's author say what a subclass or a mode does with that operator
# without editing either: where the Python key would call ``cls.__torch_dispatch__`` (or the mode's
# ``__dispatch__``), it calls ``fn(cls_or_mode, func, types, args, kwargs)`` instead. Looked up by
# operator name and exact class, as torch's GenericTorchDispatchRuleHolder.find does.
TORCH_DISPATCH_RULES: dict[str, dict[type, Callable[..., Any]]] = {}


def register_torch_dispatch_rule(qualname: str, cls: type, fn: Callable[..., Any]) -> Callable[[], None]:
    """Record ``fn`` as ``cls``'s rule for operator ``qualname``; returns the function that removes it."""
    rules = TORCH_DISPATCH_RULES.setdefault(qualname, {})
    if cls in rules:
        raise RuntimeError(f"{cls} already has a `__torch_dispatch__` rule registered for {qualname}")
    rules[cls] = fn

    def remove() -> None:
        if rules.get(cls) is fn:
            del rules[cls]
            if not rules and TORCH_DISPATCH_RULES.get(qualname) is rules:
                del TORCH_DISPATCH_RULES[qualname]

    return remove


def find_torch_dispatch_rule(func: Any, cls: type) -> Callable[..., Any] | None:
    """``cls``'s rule for operator ``func`` (Note [torch_dispatch rules]), or None."""
    rules = TORCH_DISPATCH_RULES.get(func.qualname) if TORCH_DISPATCH_RULES else None
    return None if rules is None else rules.get(cls)


def dispatch_to_subclasses(func: Any, overloaded: list[Any], types: tuple[type, ...],
                           args: tuple[Any, ...], kwargs: dict[str, Any], mode: Any = None) -> Any:
    """Call the overloaded arguments' ``__torch_dispatch__`` in turn (``dispatch_on_subclass``).

    The first result other than ``NotImplemented`` is the call's; if none, torch's TypeError.
    ``mode``: the mode that returned ``NotImplemented`` first, named in the error. A registered
    rule for an argument's class runs instead of its handler (Note [torch_dispatch rules]).
    """
    for arg in overloaded:
        rule = find_torch_dispatch_rule(func, type(arg)) if TORCH_DISPATCH_RULES else None
        if rule is not None:
            ret = rule(type(arg), func, types, args, kwargs)
        else:
            ret = arg.__torch_dispatch__(func, types, args, kwargs)
        if ret is not NotImplemented:
            return ret
    raise multiple_dispatch_failed(func, overloaded, mode)


def multiple_dispatch_failed(func: Any, overloaded: list[Any], mode: Any = None) -> TypeError:
    """The TypeError torch raises when every handler (mode, then subclasses) returned ``NotImplemented``."""
    # torch names the OpOverload by its __module__ (torch._ops.<namespace>) and __name__
    lines = [f"Multiple dispatch failed for 'torch._ops.{func}'; all __torch_dispatch__ handlers "
             "returned NotImplemented:\n"]
    if mode is not None:
        lines.append(f"  - mode object {mode!r}")
    lines.extend(f"  - tensor subclass {type(arg)!r}" for arg in overloaded)
    lines.append("\nFor more information, try re-running with TORCH_LOGS=not_implemented")
    return TypeError("\n".join(lines))


# --- helpers for handlers (torch.utils._pytree, torch.utils._python_dispatch) ---------------------
def tree_leaves(tree: Any, cls: type | tuple[type, ...]) -> Iterator[Any]:
    """The leaves of nested lists, tuples and dicts that are ``cls`` instances, in order.

    Example:
        >>> list(tree_leaves((1, ["a", {"k": 2}]), int))
        [1, 2]
    """
    if isinstance(tree, cls):
        yield tree
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from tree_leaves(v, cls)
    elif isinstance(tree, dict):
        for v in tree.values():
            yield from tree_leaves(v, cls)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """Apply ``fn`` to every leaf of nested lists, tuples and dicts (``torch.utils._pytree.tree_map``).

    Example:
        >>> tree_map(lambda v: v * 10, (1, [2, {"a": 3}]))
        (10, [20, {'a': 30}])
    """
    kind = type(tree)
    if kind is tuple or kind is list:  # leaves mapped in place: one frame per container, not per leaf
        out = [tree_map(fn, v) if type(v) in _CONTAINERS else fn(v) for v in tree]
        return tuple(out) if kind is tuple else out
    if kind is dict:
        return {k: tree_map(fn, v) if type(v) in _CONTAINERS else fn(v) for k, v in tree.items()}
    return fn(tree)


_CONTAINERS = frozenset({tuple, list, dict})


def is_traceable_wrapper_subclass(t: Any) -> bool:
    """Whether ``t`` is a tensor subclass instance with ``__tensor_flatten__``/``__tensor_unflatten__``.

    Example:
        >>> import dispatchcore as dc
        >>> is_traceable_wrapper_subclass(dc.ones(1))
        False
    """
    cls = type(t)
    return (isinstance(t, Tensor) and cls is not Tensor and hasattr(cls, "__tensor_flatten__")
            and hasattr(cls, "__tensor_unflatten__"))


def transform_subclass(t: Any, callback: Callable[[str, Any], Any]) -> Any:
    """Rebuild a traceable wrapper with ``callback(attr, inner)`` applied to each inner tensor.

    ``torch.utils._python_dispatch.transform_subclass``: ``__tensor_flatten__`` gives the inner
    attribute names and a context, ``__tensor_unflatten__(inner, ctx, outer_size, outer_stride)``
    builds the new instance.
    """
    attrs, ctx = t.__tensor_flatten__()
    inner = {name: callback(name, getattr(t, name)) for name in attrs}
    return type(t).__tensor_unflatten__(inner, ctx, t.size(), t.stride())


def return_and_correct_aliasing(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None,
                                out: Any) -> Any:
    """Make a wrapper's result alias what the schema says (``_python_dispatch.return_and_correct_aliasing``).

    A return annotated ``Tensor(a!)`` (in-place and ``out=`` overloads) *is* the argument with
    the same annotation: the handler's fresh wrapper is replaced by that argument, so ``x.add_(1)``
    returns ``x``. A view's return (``Tensor(a)``) keeps the handler's wrapper: the
    ``ADInplaceOrView`` kernel above the ``Python`` key makes it a view of its base.

    Example:
        >>> import dispatchcore as dc
        >>> x, y = dc.ones(1), dc.ones(1)
        >>> return_and_correct_aliasing(dc.ops.aten.add_.Tensor, (x, 1), {}, y) is x
        True
    """
    schema = func.schema
    kwargs = kwargs or {}
    written: dict[tuple[str, ...], Any] = {}
    for i, arg in enumerate(schema.arguments):
        if arg.alias_info is not None and arg.alias_info.is_write:
            value = kwargs.get(arg.name) if arg.kwarg_only or i >= len(args) else args[i]
            written[arg.alias_info.before] = value
    if not written:
        return out
    returns = schema.returns

    def pick(ret: Any, value: Any) -> Any:
        info = ret.alias_info
        if info is not None and info.is_write and info.before in written:
            return written[info.before]
        return value

    if len(returns) == 1:
        return pick(returns[0], out)
    return type(out)(pick(r, v) for r, v in zip(returns, out))


# --- repr ----------------------------------------------------------------------------------------
def subclass_repr(t: Any, tensor_contents: str | None = None) -> str:
    """``Tensor.__repr__`` of a subclass instance, or with ``tensor_contents`` (``torch._tensor_str._str``).

    The prefix is the class name (``Marked([1., 1.])``), except for plain tensors and exact
    ``Parameter``s (``tensor(``); a wrapper's elements are read through its handler
    (``select``, then ``_local_scalar_dense``), under ``no_grad`` with the modes off, as torch
    prints; ``tensor_contents`` replaces the elements (``LoggingTensor(tensor([1.]))``).

    Example:
        >>> import dispatchcore as dc
        >>> class Marked(dc.Tensor):
        ...     pass
        >>> Tensor._make_subclass(Marked, dc.ones(2))
        Marked([1., 1.])
    """
    from ._tensor_str import _format_data
    from .autograd.grad_mode import no_grad
    from .dtypes import bool_, int64
    from .modes import disable_current_modes
    from .nn.parameter import Parameter

    cls = type(t)
    prefix = "tensor(" if cls is Tensor or cls is Parameter else f"{cls.__name__}("
    dtype = t.dtype
    default = bool_ if dtype is bool_ else int64 if dtype._category == 1 else get_default_dtype()
    if dtype._category == 3:  # complex: the default is the complex twin of the default float
        default = dtype if (dtype.itemsize == 2 * get_default_dtype().itemsize) else None
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.device.type == "meta":
        body = "..." if tensor_contents is None else tensor_contents
        suffixes.append(f"size={tuple(t.shape)}")
    else:
        if tensor_contents is None:
            with no_grad(), disable_current_modes():
                body = _format_data(_host_values(t), len(prefix))
        else:
            body = tensor_contents
        if t.numel() == 0 and tuple(t.shape) != (0,):
            suffixes.append(f"size={tuple(t.shape)}")
    return prefix + ", ".join([body, *suffixes, *repr_suffixes(t, default)]) + ")"


def repr_suffixes(t: Any, default: Any) -> list[str]:
    """The last suffixes of ``torch._tensor_str._str``: the dtype unless ``default``, then grad_fn or requires_grad."""
    out = [] if t.dtype is default else [f"dtype={t.dtype!r}"]
    if t.grad_fn is not None:
        out.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        out.append("requires_grad=True")
    return out


def _host_values(t: Any) -> np.ndarray:
    """``t``'s elements: its own data, or, for a wrapper, what its handler answers for each one."""
    if not isinstance(t._data, WrapperData):
        return t._cpu_data()
    from . import ops

    select, scalar = ops.aten.select.int, ops.aten._local_scalar_dense.default

    def values(x: Any, ndim: int) -> Any:
        if ndim == 0:
            return scalar(x)
        return [values(select(x, 0, i), ndim - 1) for i in range(x.shape[0])]

    return np.array(values(t, t.dim()), dtype=t._data.dtype).reshape(t.shape)
