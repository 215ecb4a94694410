"""Tensor: a ``__slots__`` handle over backend data whose every operation goes through the dispatcher.

Mirrors ``c10/core/TensorImpl.h`` for what dispatch needs: the key set (``_key_bits``, computed
once from the device as TensorImpl's constructor does, c10/core/TensorImpl.cpp), a version counter shared by a
base and its views (a one-element list), and ``_base`` for views. The data object is the
backend's: a numpy ``ndarray`` for CPU; any object with numpy's ``shape``, ``strides`` (bytes),
``dtype`` and ``ndim`` attributes for other devices (see Note [Backend data protocol]).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from numbers import Number
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import dtypes as _dtypes
from .dtypes import SCALAR_TYPE_NAMES, TYPEMETA_NAMES, _by_np, device, privateuse1_backend_name
from .errors import tp_name as _tp_name
from .keys import DispatchKey
from .keyset import key_bits, tensor_keyset
from .tls import inference_active as _inference_active
from .tls import per_thread as _pt

__all__ = ["Size", "Tensor", "register_device", "rename_privateuse1_backend", "wrap"]

# Note [Backend data protocol]: a tensor's ``_data`` has numpy's array attributes ``shape``,
# ``strides`` (in bytes), ``dtype`` (a numpy dtype) and ``ndim``; ``storage_offset`` (elements)
# where it is not an ndarray. CPU uses ndarrays directly, Meta a data-less stand-in.


class Size(tuple):
    """A tensor shape (``torch.Size``): a tuple that prints as ``dispatchcore.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"dispatchcore.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


# (numpy byte strides, itemsize) -> torch's element strides, for Tensor.stride()
_ELEMENT_STRIDES: dict[tuple[tuple[int, ...], int], tuple[int, ...]] = {}

# device type -> (device object, key bits of a normal tensor, key bits of an inference tensor)
_DEVICES: dict[str, tuple[device, int, int]] = {}
# a device argument as given (None, a device, a string) -> its backend's Dense runtime bits, for
# BackendSelect (_core_kernels._backend_bits); emptied whenever a device type is (re)declared
BACKEND_BITS_BY_DEVICE: dict[Any, int] = {}


def register_device(type_name: str, backend_key: DispatchKey | str) -> device:
    """Declare a device type and the backend key its tensors carry (``"cpu"`` -> ``CPU``).

    Backends call this once; the tensor key sets are precomputed here, not per tensor.

    Example:
        >>> register_device("cpu", "CPU")
        device(type='cpu')
    """
    dev = device(type_name)
    BACKEND_BITS_BY_DEVICE.clear()
    _DEVICES[type_name] = (
        dev,
        int(tensor_keyset(backend_key)),
        int(tensor_keyset(backend_key, inference=True)),
    )
    return dev


def rename_privateuse1_backend(name: str) -> device:
    """Name the PrivateUse1 device (``torch.utils.rename_privateuse1_backend``); returns it.

    Tensors on ``device(name)`` carry ``PrivateUse1, ADInplaceOrView, AutogradPrivateUse1, AutocastPrivateUse1``.
    As in torch, the name can be set once; a second, different name raises.
    """
    current = privateuse1_backend_name()
    if current not in ("privateuseone", name):
        raise RuntimeError(
            f"torch.register_privateuse1_backend() has already been set! Current backend: {current}")
    _dtypes._privateuse1_name[0] = name
    return register_device(name, DispatchKey.PrivateUse1)


register_device("cpu", DispatchKey.CPU)
register_device("meta", DispatchKey.Meta)


def _device_info(dev: device | str) -> tuple[device, int, int]:
    type_name = dev.type if isinstance(dev, device) else device(dev).type
    try:
        return _DEVICES[type_name]
    except KeyError:
        raise RuntimeError(
            f"Expected one of cpu, meta, ... device type at start of device string: {type_name}. "
            "dispatchcore knows the devices its backends registered: "
            f"{sorted(_DEVICES)}; register a new one with dispatchcore.register_device()."
        ) from None


_CPU, _CPU_BITS, _CPU_INFERENCE_BITS = _DEVICES["cpu"]
_new = object.__new__


def wrap(data: Any, dev: device | str = "cpu", *, _inference: bool = False) -> Tensor:
    """Make a tensor over backend data (an ndarray for CPU) on device ``dev``.

    This is what kernels use to return results; it copies nothing.

    Example:
        >>> wrap(np.arange(3.0))
        tensor([0., 1., 2.], dtype=dispatchcore.float64)
    """
    dev, bits, inference_bits = _device_info(dev)
    inference = _inference or (_inference_active and _pt.state.autograd[1])  # Note [Inference mode anywhere]
    return init_tensor(_make_tensor(), data, dev, inference_bits if inference else bits, None if inference else [0])


def wrap_cpu(data: np.ndarray) -> Tensor:
    """The CPU fast path of ``wrap``: a new tensor over ``data`` (no checks)."""
    if _inference_active and _pt.state.autograd[1]:  # in inference_mode: an inference tensor (TensorImpl's rule)
        bits, vc = _CPU_INFERENCE_BITS, None
    else:
        bits, vc = _CPU_BITS, [0]
    t = _make_tensor()
    t._data = data
    t._device = _CPU
    t._key_bits = bits
    t._vc = vc
    t._base = None
    t._requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._output_nr = 0
    t._meta = None
    return t


def init_tensor(t: Any, data: Any, dev: device, key_bits: int, vc: list[int] | None) -> Any:
    """Set every slot of a new (``object.__new__``) tensor ``t``: a leaf with no autograd history.

    For the constructors off the CPU hot path (``wrap``, subclass wrappers, fake tensors and their
    meta twins); ``wrap_cpu`` and ``detached_alias`` set the same slots inline, a call less per tensor.
    """
    t._data = data
    t._device = dev
    t._key_bits = key_bits
    t._vc = vc
    t._base = None
    t._requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._output_nr = 0
    t._meta = None
    return t


def detached_alias(t: Tensor, cls: type | None = None) -> Any:
    """A new tensor over ``t``'s data, key set and version counter, with no autograd history.

    ``detach()``'s CompositeExplicitAutograd kernel, and the engine's way to hold a saved output
    without a reference cycle. ``cls`` (default: ``t``'s class) is the new tensor's class:
    ``nn.Parameter`` wraps a tensor, ``Parameter.detach()`` gives a plain one.
    """
    out: Any = _new(type(t) if cls is None else cls)
    if cls is None and out.__class__ is not Tensor:  # a subclass keeps its own attributes (a wrapper's inner tensors)
        state = getattr(t, "__dict__", None)
        if state:
            out.__dict__.update(state)
    out._data = t._data
    out._device = t._device
    out._key_bits = t._key_bits
    out._vc = t._vc
    out._base = None
    out._requires_grad = False
    out._grad_fn = None
    out._grad = None
    out._output_nr = 0
    out._meta = None
    return out


_graph: Any = None  # dispatchcore.autograd.graph once imported (see _autograd_graph)


def _autograd_graph() -> Any:
    """The ``dispatchcore.autograd.graph`` module, imported on first use.

    It cannot be imported before this module; it is kept in ``_graph`` because an import
    statement in a method costs ~0.9 us on every call.
    """
    global _graph
    from .autograd import graph

    _graph = graph
    return graph


# See Note [Torch function costs nothing when unused] (dispatchcore/overrides.py): method name ->
# (the raw method instances find, the public one that checks for __torch_function__)
_PUBLIC: dict[str, tuple[Any, Any]] = {}
_subclass_hook: Any = None  # overrides._on_subclass, once the methods are attached


def _disabled_impl(func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
    """``torch._C._disabled_torch_function_impl``: a class opts out of ``__torch_function__`` with it."""
    return NotImplemented


_disabled_impl.__name__ = _disabled_impl.__qualname__ = "_disabled_torch_function_impl"
# typed Any: a class assigns it to ``__torch_function__``, which Tensor types as a classmethod
_disabled_torch_function_impl: Any = _disabled_impl


def _subclass_api() -> Any:
    """``dispatchcore.subclass``, a layer above this module, imported once.

    A ``from`` import statement in a function costs ~1 us a call, more than a wrapper subclass's
    construction.
    """
    if not _SUBCLASS:
        from . import subclass

        _SUBCLASS.append(subclass)
    return _SUBCLASS[0]


_SUBCLASS: list[Any] = []


class _TensorType(type):
    """Tensor's metaclass: calling ``Tensor`` is refused with a pointer to the factories.

    ``Tensor.add`` (a class attribute) is the public method that checks for torch function,
    while instances find the raw one: See Note [Torch function costs nothing when unused].
    """

    def __getattribute__(cls, name: str) -> Any:
        value = type.__getattribute__(cls, name)
        public = _PUBLIC.get(name)
        return public[1] if public is not None and value is public[0] else value

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not Tensor:  # a subclass constructs as it defines
            return super().__call__(*args, **kwargs)
        raise TypeError("Tensors are made by factories such as dispatchcore.tensor(data) or "
                        "dispatchcore.zeros(size); there is no public constructor.")


class Tensor(metaclass=_TensorType):
    """An n-dimensional array whose operations all dispatch (``torch.Tensor``).

    Create tensors with the factories (``dispatchcore.tensor``, ``zeros``, ``ones``, ...); the
    class itself cannot be called.
    """

    __slots__ = ("_data", "_device", "_key_bits", "_vc", "_base", "_requires_grad", "_grad_fn",
                 "_grad", "_output_nr", "_meta", "__weakref__")
    _data: Any  # backend data: see Note [Backend data protocol]
    _device: device
    _key_bits: int  # raw DispatchKeySet bits, fixed at creation (TensorImpl's key_set_)
    _vc: list[int] | None  # version counter shared with views; None for inference tensors
    _base: Tensor | None
    _requires_grad: bool
    _grad_fn: Any
    _grad: Tensor | None
    _output_nr: int  # which output of _grad_fn this tensor is
    _meta: Any  # AutogradMeta (hooks, grad accumulator, retains_grad), made on first need

    if TYPE_CHECKING:  # methods and operators are attached in _tensor_methods.py (aten calls)
        def __getattr__(self, name: str) -> Any: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __iadd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __isub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __imul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __itruediv__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __getitem__(self, index: Any) -> Tensor: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...

    # --- metadata (no dispatch, as in torch: sizes and strides live on the TensorImpl) -------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @overload
    def size(self) -> Size: ...
    @overload
    def size(self, dim: int) -> int: ...

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return _by_np[self._data.dtype]

    @property
    def device(self) -> device:
        return self._device

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @overload
    def stride(self) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        data = self._data
        key = (data.strides, data.dtype.itemsize)
        strides = _ELEMENT_STRIDES.get(key)
        if strides is None:  # byte strides -> element strides, memoised: layouts repeat
            strides = tuple(s // key[1] for s in key[0])
            if len(_ELEMENT_STRIDES) < 1024:
                _ELEMENT_STRIDES[key] = strides
        return strides if dim is None else strides[_wrap_dim(dim, data.ndim)]

    def storage_offset(self) -> int:
        data = self._data
        if not isinstance(data, np.ndarray):
            return data.storage_offset
        root = data
        while isinstance(root.base, np.ndarray):
            root = root.base
        start = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return start // data.dtype.itemsize

    def is_contiguous(self) -> bool:
        expected = 1
        for size, stride in zip(reversed(self._data.shape), reversed(self.stride())):
            if size != 1 and stride != expected:
                return 0 in self._data.shape  # an empty tensor is contiguous whatever its strides
            expected *= size
        return True

    def dim(self) -> int:
        return self._data.ndim

    ndim = property(dim)

    def numel(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    # --- data access ----------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The CPU data as an ndarray sharing memory (``torch.Tensor.numpy``)."""
        if self._key_bits & _PYTHON_KEYS:
            raise RuntimeError(".numpy() is not supported for tensor subclasses.")
        if self._device.type != "cpu":
            raise TypeError(
                f"can't convert {self._device.type} device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first.")
        if self._requires_grad and _pt.state.autograd[0]:  # torch: only while grad mode is on
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def item(self) -> Any:
        """The single element as a Python number (``aten::item``, then ``aten::_local_scalar_dense``).

        See Note [item dispatches when a handler can see it].
        """
        if self._key_bits & _PYTHON_KEYS or _pt.state.modes is not None:
            return _aten_item()(self)
        data = self._data
        if data.__class__ is _ndarray and data.size == 1:
            return data.item()
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        if self._device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._cpu_data().reshape(()).item()

    def tolist(self) -> Any:
        if self._key_bits & _PYTHON_KEYS:
            raise RuntimeError(f".tolist() is not supported for tensor subclasses, got {type(self).__name__}")
        if self._device.type == "meta":  # torch copies to the CPU first, and meta's copy_ refuses
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._cpu_data().tolist()

    def _cpu_data(self) -> np.ndarray:
        data = self._data
        if isinstance(data, np.ndarray):
            return data
        to_numpy = getattr(data, "to_numpy", None)
        if to_numpy is None:
            raise RuntimeError(f"Tensor on {self._device} has no host data; call .cpu() first.")
        return to_numpy()

    # --- version counter and views (ADInplaceOrView bookkeeping reads these) ----------------
    @property
    def _version(self) -> int:
        if self._vc is None:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    def is_inference(self) -> bool:
        return self._vc is None

    def _is_view(self) -> bool:
        return self._base is not None

    # --- autograd metadata (the engine lives in dispatchcore.autograd) ----------------------
    @property
    def data(self) -> Tensor:
        """This tensor's data, off the graph (``torch.Tensor.data``, ``variable_data``).

        A plain tensor over the same data, with no autograd history and a version counter of
        its own (changing it in place goes unseen by autograd). Assigning a tensor makes it this
        tensor's data (``set_data``): its size, dtype and device, this tensor's graph and version
        counter kept.
        """
        if self._key_bits & _PYTHON_KEYS:  # torch's shallow_copy_and_detach asks the subclass: aten::detach
            from .ops import aten

            out = aten.detach.default(self)
        else:
            out = detached_alias(self, Tensor)
        if isinstance(out, Tensor) and out._vc is not None:
            out._vc = [0]
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_tp_name(type(value))}")
        dense = ("cpu", "cuda", "mps", "hip", "xpu", "hpu")  # c10's dense backends (has_compatible_shallow_copy_type)
        if value._key_bits != self._key_bits and not (self._device.type in dense and value._device.type in dense):
            raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
                               "incompatible tensor type.")
        dtype = _by_np[value._data.dtype]  # read as torch's C++ does: no call a handler would see
        if self._requires_grad and not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        retire_accumulator(self, value)
        self._data = value._data
        self._device = value._device
        self._key_bits = (value._key_bits & ~_PYTHON_KEYS) | (self._key_bits & _PYTHON_KEYS)

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype can require gradients")

    @property
    def grad_fn(self) -> Any:
        if self._base is not None:  # a view's grad_fn is regenerated after in-place changes
            return (_graph or _autograd_graph()).current_grad_fn(self)
        return self._grad_fn

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        """Assign ``.grad``, with ``THPVariable_set_grad``'s checks, in its order and words."""
        if value is not None:
            _check_assigned_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def grad_dtype(self) -> Any:
        """The dtype a gradient assigned to or accumulated into this leaf must have (``Tensor.grad_dtype``).

        It defaults to the tensor's dtype; None allows any dtype. Leaves only, as in torch.
        """
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return _grad_dtype(self)

    @grad_dtype.setter
    def grad_dtype(self, value: Any) -> None:
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and type(value) is not type(self.dtype):
            raise RuntimeError(
                f"grad_dtype must be a dispatchcore.dtype or None, but got {_tp_name(type(value))}")
        self._autograd_meta().grad_dtype = value

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` on a leaf (``torch.Tensor.requires_grad_``)."""
        # torch's method names fewer dtypes than its attribute setter does
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")
        return self

    def _set_requires_grad(self, requires_grad: bool, dtype_error: str) -> None:
        if requires_grad and self._vc is None and not _pt.state.autograd[1]:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(dtype_error)
        if not requires_grad and self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        self._requires_grad = requires_grad

    # --- the autograd API (the engine is dispatchcore.autograd.graph) -------------------------
    def _autograd_meta(self) -> AutogradMeta:
        meta = self._meta
        if meta is None:
            meta = self._meta = AutogradMeta()
        return meta

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate this tensor's gradient into the graph's leaves (``torch.Tensor.backward``)."""
        (_graph or _autograd_graph()).backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._register_output_pre_hook(self._output_nr, hook)
        from .autograd.graph import grad_accumulator

        return grad_accumulator(self)._register_output_pre_hook(0, hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor too (``torch.Tensor.retain_grad``)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._autograd_meta().retains_grad:
            return
        self._autograd_meta().retains_grad = True
        ref = weakref.ref(self)

        def retain(grad: Tensor) -> None:
            t = ref()
            if t is not None:
                t._grad = grad.detach().clone() if t._grad is None else t._grad + grad.detach()

        self._grad_fn._register_retains_grad_hook(self._output_nr, retain)  # runs after tensor hooks

    @property
    def retains_grad(self) -> bool:
        return self._meta is not None and self._meta.retains_grad

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place (``torch.Tensor.detach_``)."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                "function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    # ``(*args, **kwargs)``, checked by _repr: overrides without ``tensor_contents`` stay type-correct
    def __repr__(self, *args: Any, **kwargs: Any) -> str:
        """``repr(t)``; ``tensor_contents=`` replaces the elements, for subclasses' own ``__repr__``."""
        return _repr(self, *args, **kwargs)

    # --- __torch_function__ (dispatchcore/overrides.py) ------------------------------------------
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if _subclass_hook is not None:
            _subclass_hook(cls)

    @classmethod
    def __torch_function__(cls, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        """The default handler (``torch.Tensor.__torch_function__``): run ``func``, keep the subclass.

        ``func`` runs with subclasses' torch function off; a Tensor result becomes an instance
        of ``cls`` (``as_subclass``), also inside a list or tuple; ``_base`` and ``grad`` stay
        as they are (torch's ``get_default_nowrap_functions``).
        """
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        from .overrides import DisableTorchFunctionSubclass

        with DisableTorchFunctionSubclass():
            ret = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", None) == "__get__" and getattr(func, "__self__", None) is Tensor.grad:
            return ret
        return _convert(ret, cls)

    def as_subclass(self, cls: type) -> Any:
        """An instance of ``cls`` over ``self``'s data, on its autograd graph (``aten::alias``).

        Example:
            >>> import dispatchcore as dc
            >>> class Marked(dc.Tensor):
            ...     pass
            >>> type(dc.ones(2).as_subclass(Marked)).__name__
            'Marked'
        """
        from .ops import aten
        from .subclass import PYTHON_KEYS, has_torch_dispatch

        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
        if _pt.state.modes is None:
            alias = aten.alias.default(self)
        else:  # torch's as_subclass stashes the dispatch modes (StashTorchDispatchStackGuard): none sees the alias
            from .modes import disable_current_modes

            with disable_current_modes():
                alias = aten.alias.default(self)
        out = _new(cls)
        for slot in Tensor.__slots__[:-1]:
            object.__setattr__(out, slot, getattr(alias, slot))
        out._key_bits = alias._key_bits | PYTHON_KEYS if has_torch_dispatch(cls) else alias._key_bits & ~PYTHON_KEYS
        return out

    # --- tensor subclasses (dispatchcore/subclass.py) ---------------------------------------------
    @classmethod
    def __torch_dispatch__(cls, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        """No handler (``torch._C._disabled_torch_dispatch_impl``): run ``func`` with torch dispatch off.

        A subclass that defines its own gets the ``Python`` key: see ``dispatchcore.subclass``.
        """
        from .tls import DisableTorchDispatch

        with DisableTorchDispatch():
            return func(*args, **(kwargs or {}))

    @staticmethod
    def _make_subclass(cls: type, data: Tensor, require_grad: bool = False) -> Any:
        """An instance of ``cls`` sharing ``data`` (``torch.Tensor._make_subclass``); see ``subclass.make_subclass``."""
        return _subclass_api().make_subclass(cls, data, require_grad)

    @staticmethod
    def _make_wrapper_subclass(cls: type, size: Any, strides: Any = None, storage_offset: Any = None,
                               **kwargs: Any) -> Any:
        """A data-less ``cls`` instance (``torch.Tensor._make_wrapper_subclass``).

        See ``dispatchcore.subclass.make_wrapper_subclass`` for the arguments.
        """
        return _subclass_api().make_wrapper_subclass(cls, size, strides, storage_offset, **kwargs)

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __iter__(self) -> Iterator[Tensor]:
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __format__(self, format_spec: str) -> str:
        """A 0-d plain tensor formats as its number (``f"{loss:.3f}"``); others as ``object`` does."""
        if self.dim() == 0 and not self.is_meta and type(self) is Tensor:
            return self.detach().item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __contains__(self, element: Any, /) -> bool:
        """``element in t``: whether any element equals it (a Tensor or a number)."""
        if isinstance(element, (Tensor, Number)):
            equal: Any = element == self  # a Tensor: Tensor.__eq__, reflected for a number
            return bool(equal.any().item())
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    def __reversed__(self) -> Tensor:
        """``reversed(t)``: ``t`` flipped along dim 0 (``t`` itself when 0-d)."""
        if self.dim() == 0:
            return self
        return self.flip(0)

    def __float__(self) -> float:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.item())

    def __complex__(self) -> complex:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    def __int__(self) -> int:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__


def _repr(t: Tensor, *, tensor_contents: str | None = None) -> str:
    """``Tensor.__repr__(*, tensor_contents=None)``, as torch's ``_tensor_str._str``."""
    if t.__class__ is not Tensor or tensor_contents is not None:
        from .subclass import subclass_repr

        return subclass_repr(t, tensor_contents)
    from ._tensor_str import tensor_repr

    return tensor_repr(t)


def _convert(ret: Any, cls: type) -> Any:
    """``torch._tensor._convert``: Tensor results (also in a list or tuple) as ``cls`` instances."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret)
    return ret


# c10's python_ks: the keys an instance of a class with __torch_dispatch__ carries.
_PYTHON_KEYS = key_bits(DispatchKey.Python) | key_bits(DispatchKey.PythonTLSSnapshot)


# Note [item dispatches when a handler can see it]: torch's ``Tensor.item()`` is ``at::item``, a
# CompositeImplicitAutograd kernel that checks the element count and calls
# ``at::_local_scalar_dense``: a dispatch mode, a ``__torch_dispatch__`` subclass (``FakeTensor``)
# and ``make_fx`` see ``_local_scalar_dense``. dispatchcore dispatches ``aten.item.default`` when
# one of them can see it (the tensor's class has the Python key, or a mode is on this thread's
# stack), and otherwise reads the number from the ndarray at once: one thread-local test on the
# plain path. ``float(t)``, ``int(t)``, ``bool(t)``, ``format(t, spec)`` and a 0-d index tensor go
# through ``item()``, as torch's do.
_ndarray = np.ndarray
_item_op: list[Any] = []


def _aten_item() -> Any:
    """``aten.item.default`` (resolved on first use: the operators load after this module)."""
    if not _item_op:
        from . import ops

        _item_op.append(ops.aten.item.default)
    return _item_op[0]


# A new Tensor with no slot set: type.__call__ bound to the class allocates it in C, past the
# metaclass's refusal, and runs only object.__init__ (~35 ns less than object.__new__(Tensor)).
_make_tensor = type.__call__.__get__(Tensor)


def retire_accumulator(t: Tensor, value: Tensor) -> None:
    """``set_data``'s rule for ``t``'s gradient accumulator, before ``value``'s data becomes ``t``'s.

    torch resets an accumulator whose dtype or device is out of date; one of another shape it keeps,
    weakly (Note [Leaf metadata], autograd/graph.py). ``.data =`` and ``Module.to`` both run it.
    """
    meta = t._meta
    acc = getattr(meta, "grad_accumulator", None)  # _meta may be None or a wrapped number's
    if acc is not None:
        if value._data.dtype != t._data.dtype or value._device != t._device:
            meta.grad_accumulator = None
        elif value._data.shape != acc.meta[0]:
            meta.grad_accumulator = None
            meta.outdated_accumulator = weakref.ref(acc)


class AutogradMeta:
    """Per-tensor autograd extras, allocated on first use (c10's ``AutogradMeta``).

    ``grad_dtype`` is ``TENSOR_DTYPE`` until set: the gradient's dtype is then the tensor's.
    ``outdated_accumulator`` stays unset (read with ``getattr``) until ``.data =`` gives the tensor
    another shape: then it is a weak reference to the accumulator (Note [Leaf metadata], graph.py).
    """

    __slots__ = ("grad_accumulator", "retains_grad", "grad_dtype", "outdated_accumulator")
    outdated_accumulator: Any  # a weakref.ref when set

    def __init__(self) -> None:
        self.grad_accumulator: Any = None
        self.retains_grad = False
        self.grad_dtype: Any = TENSOR_DTYPE


TENSOR_DTYPE: Any = object()  # AutogradMeta.grad_dtype's default: the tensor's own dtype


def _grad_dtype(t: Tensor) -> Any:
    """``t``'s grad_dtype: its dtype unless set (to a dtype, or None for any)."""
    value = getattr(t._meta, "grad_dtype", TENSOR_DTYPE)  # _meta may be None or a wrapped number's
    return _by_np[t._data.dtype] if value is TENSOR_DTYPE else value


# caffe2::TypeMeta's names (what torch prints for a gradient's dtype) and ScalarType's names
_CPP_TYPE_NAMES = TYPEMETA_NAMES
_SCALAR_TYPE_NAMES = SCALAR_TYPE_NAMES


def _check_assigned_grad(t: Tensor, grad: Any) -> None:
    """``THPVariable_set_grad``'s checks: a tensor, not ``t`` itself, grad_dtype, device, size."""
    if not isinstance(grad, Tensor):
        raise TypeError(
            f"assigned grad expected to be a Tensor or None but got grad of type {_tp_name(type(grad))}")
    if grad is t:
        raise RuntimeError("can't assign Variable as its own grad")
    want = _grad_dtype(t)
    dtype = _by_np[grad._data.dtype]  # not grad.dtype: a subclass's handler sees no call of torch's C++ checks
    if want is not None and dtype != want:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_CPP_TYPE_NAMES.get(dtype.name, dtype.name)}' "
            f"to a tensor with grad_dtype '{_SCALAR_TYPE_NAMES.get(want.name, want.name)}'. The gradient must "
            "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
            "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
            "caution. Diverging the dtypes of a tensor and its gradient may break downstream systems "
            "that assume they match.")
    if grad._device.type != t._device.type:
        raise RuntimeError(
            f"attempting to assign a gradient with device type '{grad._device.type}' to a tensor with "
            f"device type '{t._device.type}'. Please ensure that the gradient and the tensor are on the "
            "same device")
    if grad._data.shape != t._data.shape:
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(grad._data.shape)}' to a tensor of size "
            f"'{list(t._data.shape)}'. Please ensure that the gradient and the tensor are the same size")


def _wrap_dim(dim: int, ndim: int) -> int:
    """Mirror ``maybe_wrap_dim`` with torch's IndexError text."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim else 0
