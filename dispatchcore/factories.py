"""Python-level tensor factories: ``tensor``, ``zeros``, ``ones``, ``empty``, ``full``, ``arange``, ...

Mirrors the Python bindings of torch's factories: the same signatures and keywords (``dtype``,
``layout``, ``device``, ``pin_memory``, ``requires_grad``, ``memory_format``, ``generator``,
``out``), checked with torch's TypeErrors (See Note [Factory arguments]). Each factory except
``tensor`` is one call of an ``aten`` factory operator, which has no tensor argument: its
BackendSelect kernel turns ``device=`` into a key set (torch's generated
``RegisterBackendSelect.cpp``). ``tensor(data)`` builds a CPU ndarray with torch's dtype inference
and moves it with ``_to_copy`` when another device is asked for; like ``from_numpy`` it hands the
fresh tensor to ``aten::lift_fresh`` where a dispatch mode can see it (See Note [Literals reach
the modes]), so that ``FakeTensorMode`` makes it fake and ``make_fx`` records it.
"""

from __future__ import annotations

import math
import re
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import aten as _definitions  # noqa: F401 - defines the operators used here
from . import dtypes as _dt
from . import layouts as _layouts
from . import operator as _operator
from . import plugins as _plugins
from .autograd.grad_mode import is_grad_enabled, no_grad
from .errors import SchemaError
from .keys import DispatchKey
from .keyset import DispatchKeySet
from .ops import aten
from .schema import PythonArgParser, _parse_device
from .shapes import check_storage_nbytes
from .tensor import _DEVICES, Tensor, wrap_cpu
from .tls import AutoDispatchBelowADInplaceOrView as _Below
from .tls import ExcludeDispatchKeyGuard
from .tls import per_thread as _pt

# Note [Factories start at version 0]: torch's Python factories call aten under
# AutoDispatchBelowADInplaceOrView (torch::arange and the others in variable_factories.h), so the
# writes inside their composites (arange.start_out, uniform_, random_) count no version and a new
# tensor starts at version 0. dispatchcore takes the guard where a composite writes into the new
# tensor on every backend (arange, linspace, the random factories); the others' CPU and Meta
# kernels write nothing through the dispatcher, and their traces stay as they were.
_WRITTEN_BY_COMPOSITE = frozenset({"rand", "randn"})

__all__ = ["arange", "empty", "empty_like", "empty_strided", "eye", "from_numpy", "full", "full_like", "linspace",
           "logspace", "manual_seed", "ones", "ones_like", "only_lift_cpu_tensors", "rand", "rand_like", "randn",
           "randn_like", "set_only_lift_cpu_tensors", "tensor", "zeros", "zeros_like"]


# Note [Factory arguments]: each factory checks its call the way torch's binding does
# (``PythonArgParser`` in schema.py, with torch's signature texts and TypeErrors) before any
# operator is called; then ``_options`` turns dtype/layout/device/pin_memory into the operator's
# keywords, refusing what is not modelled with torch's error or a NotImplementedError.
_FACTORY_TAIL = ("ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                 "bool? pin_memory=False, bool? requires_grad=False")
_OUT_TAIL = "Tensor out=None, " + _FACTORY_TAIL
_LIKE_TAIL = "MemoryFormat? memory_format=None, " + _FACTORY_TAIL
# python types torch accepts as dtypes (``torch.zeros(2, dtype=float)`` is float64)
_PY_DTYPES = {float: _dt.float64, int: _dt.int64, bool: _dt.bool_, complex: _dt.complex128}


def _is_dtype(value: Any) -> bool:
    return isinstance(value, _dt.dtype) or (isinstance(value, type) and value in _PY_DTYPES)


def _is_device(value: Any) -> bool:
    return isinstance(value, (_dt.device, str)) or (isinstance(value, int) and not isinstance(value, bool))


def _is_generator(value: Any) -> bool:
    """A random generator (``dispatchcore.Generator``)."""
    from .native.random import Generator

    return isinstance(value, Generator)


def _generator_overload(packet: Any) -> Callable[..., Tensor]:
    """``rand``/``randn``: the ``.generator`` overload when a generator is given, else the default one."""
    def call(size: list[int], **options: Any) -> Tensor:
        return (packet.generator if "generator" in options else packet.default)(size, **options)

    return call


_CHECKS: dict[str, Callable[[Any], bool]] = {
    "Tensor": lambda value: isinstance(value, Tensor), "ScalarType": _is_dtype,
    "Layout": lambda value: isinstance(value, _layouts.layout),
    "MemoryFormat": lambda value: isinstance(value, _layouts.memory_format),
    "Device": _is_device, "Generator": _is_generator,
}


def _parser(*signatures: str) -> PythonArgParser:
    return PythonArgParser(signatures, _CHECKS)


def _dtype(value: Any) -> _dt.dtype | None:
    return _PY_DTYPES[value] if isinstance(value, type) else value


_DEVICE_STRING = re.compile(r"[a-zA-Z_]+(?::(?:0|[1-9][0-9]*))?")


def _device(value: Any) -> _dt.device | None:
    """``device=``: a device, a string torch would parse, or an accelerator index."""
    if value is None or isinstance(value, _dt.device):
        return value
    if isinstance(value, str):
        # torch's RuntimeError for a malformed string or a type it does not know; a type that a
        # backend registered here (a renamed PrivateUse1 device too) is known
        if _DEVICE_STRING.fullmatch(value) is None or value.partition(":")[0] not in _DEVICES:
            message = None
            try:
                _parse_device(value)
            except SchemaError as exc:
                message = str(exc)
            if message is not None:  # raised here, so that no SchemaError is chained to it
                raise RuntimeError(message)
        return _dt.device(value)
    # an int is an index on the current accelerator, and there is none here
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _options(name: str, a: dict[str, Any]) -> dict[str, Any]:
    """The operator's keywords from bound ``dtype``/``layout``/``device``/``pin_memory``."""
    if _plugins._done is False:  # See tensor(): the first factory call of a program loads the backends
        _plugins.load_backends()
    kwargs: dict[str, Any] = {}
    dtype = _dtype(a["dtype"])
    if dtype is not None:
        kwargs["dtype"] = dtype
    device = _device(a["device"])
    if device is not None:
        kwargs["device"] = device
    layout = a["layout"]
    if layout is not None and layout is not _layouts.strided:
        raise NotImplementedError(f"{name}(): layout={layout} is not modelled: dispatchcore "
                                  "tensors are dense, with the strided layout only")
    if a["pin_memory"] and (device is None or device.type == "cpu"):
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")
    if (_pt.state.modes is not None or _operator.slot_wrapper is not None) and name != "tensor":
        # See Note [Binding keywords]
        if device is None and not (name.endswith("_like") or name.startswith("new_")):
            kwargs["device"] = _CPU
        kwargs["pin_memory"] = bool(a["pin_memory"])
    return kwargs


# Note [Binding keywords]: torch's Python bindings of the factories fill in TensorOptions: a mode
# sees ``aten.ones.default([3], device=device(type='cpu'), pin_memory=False)`` for ``torch.ones(3)``,
# and ``pin_memory=False`` on ``zeros_like``, ``new_zeros`` and kin. dispatchcore's bindings pass
# the same keywords whenever a mode or a trace can see the call, so handlers and make_fx graphs
# get torch's; otherwise they leave them out (the same tensor, and the positional call is faster).
_CPU = _dt.device("cpu")  # the default device: dispatchcore has no set_default_device


def _check_nbytes(size: list[int], dtype: _dt.dtype | None) -> None:
    """The storage-size overflow check of torch's ``empty``, once the sizes are non-negative."""
    # math.prod is one C call; only a product that could overflow (itemsize <= 16) is looked at
    if abs(math.prod(size)) >= 2**59 and all(s >= 0 for s in size):
        check_storage_nbytes(size, (dtype or _dt.get_default_dtype()).itemsize)


def _check_memory_format(fmt: Any, ndim: int) -> None:
    """``empty``'s checks on ``memory_format`` (``preserve_format`` needs a tensor to preserve)."""
    if fmt is _layouts.channels_last and ndim != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    if fmt is _layouts.channels_last_3d and ndim != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")


def _finish(name: str, t: Tensor, a: dict[str, Any]) -> Tensor:
    """Apply ``requires_grad=`` and ``out=`` to a new tensor ``t``."""
    out = a.get("out")
    if out is not None:
        t = _write_out(name, t, out, a)
    if a["requires_grad"]:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _write_out(name: str, t: Tensor, out: Tensor, a: dict[str, Any]) -> Tensor:
    """``out=``: check out as torch's ``.out`` kernels do, then copy ``t`` into it."""
    _check_out_options(name, out, a)
    if tuple(out.shape) != tuple(t.shape):
        raise NotImplementedError(f"{name}(out=...): an out tensor of another shape is not "
                                  "modelled (torch resizes it); pass one of the result's shape")
    with no_grad():
        out.copy_(t)
    return out


def _check_out_options(name: str, out: Tensor, a: dict[str, Any]) -> None:
    """A factory's ``out=``: no grad, and a ``dtype=``/``device=`` given must be out's (``check_out_type_matches``)."""
    if out.requires_grad and is_grad_enabled():
        raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    dtype = _dtype(a.get("dtype"))
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {_SCALAR_NAMES[dtype.name]} does not match dtype of out "
                           f"parameter ({_SCALAR_NAMES[out.dtype.name]})")
    device = _device(a.get("device"))
    if device is not None and device.type != out.device.type:
        raise RuntimeError(f"device type {device.type} does not match device type of out "
                           f"parameter ({out.device.type})")


_SCALAR_NAMES = _dt.SCALAR_TYPE_NAMES  # c10's ScalarType names, as dtype mismatch errors print them


def _out_dtype(a: dict[str, Any]) -> dict[str, Any]:
    """With ``out=`` and no ``dtype=``, the result takes out's dtype and device, as in torch."""
    out = a.get("out")
    if out is not None:
        if a["dtype"] is None:
            a["dtype"] = out.dtype
        if a["device"] is None:
            a["device"] = out.device
    return a


def _sizes(data: Any) -> list[int]:
    """``compute_sizes``: the lengths along the first element of each nesting level."""
    sizes = []
    while isinstance(data, (list, tuple)):
        sizes.append(len(data))
        if not data:
            break
        data = data[0]
    return sizes


def _check_nesting(data: Any, sizes: list[int], np_dtype: np.dtype, dim: int = 0) -> None:
    """``recursive_store``'s checks: every level as long as the first one, numbers at the bottom.

    A sequence where a number belongs fails as its unpacking into the dtype does (``THPUtils_
    unpackLong`` for bool and integers, ``THPUtils_unpackDouble`` for floating and complex).
    """
    if dim == len(sizes):
        if isinstance(data, (list, tuple)):
            name = type(data).__name__
            if np_dtype.kind in "fc":
                raise TypeError(f"must be real number, not {name}")
            raise TypeError(f"'{name}' object cannot be interpreted as an integer")
        return
    if not isinstance(data, (list, tuple)):
        raise TypeError("not a sequence")
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(data)})")
    for item in data:
        _check_nesting(item, sizes, np_dtype, dim + 1)


def _infer_dtype(data: Any) -> _dt.dtype:
    """torch.tensor's inference (``infer_scalar_type``): the promotion of every element's type.

    A Python bool, int, float or complex is bool, int64, the default dtype or its complex; a
    tensor, a numpy scalar or a numpy array brings its own dtype (``np.float64(1.0)`` is float64).
    Python numbers are folded by kind first (bool < int64 < default float < complex), which is
    their promotion, so the common all-Python list promotes nothing.
    """
    kind = 0
    own: _dt.dtype | None = None  # the promotion of the dtypes elements carry themselves
    stack = [data]
    while stack:
        x = stack.pop()
        cls = x.__class__
        if cls is float:
            kind = max(kind, 3)
        elif cls is int:
            kind = max(kind, 2)
        elif cls is list or cls is tuple:
            stack.extend(x)
        elif cls is bool:
            kind = max(kind, 1)
        elif isinstance(x, Tensor) or isinstance(x, (np.generic, np.ndarray)):
            dtype = x.dtype if isinstance(x, Tensor) else _dt.from_numpy_dtype(x.dtype)
            own = dtype if own is None else _dt.promote_types(own, dtype)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, bool):
            kind = max(kind, 1)
        elif isinstance(x, int):
            kind = max(kind, 2)
        elif isinstance(x, float):
            kind = max(kind, 3)
        elif isinstance(x, complex):
            kind = max(kind, 4)
        elif isinstance(x, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
    default = _dt.get_default_dtype()
    python = (None, _dt.bool_, _dt.int64, default, _dt.complex128 if default is _dt.float64 else _dt.complex64)[kind]
    if own is None:
        return python or default
    return own if python is None else _dt.promote_types(own, python)


# The common calls (int sizes, keywords of the expected classes) skip the parser: it would accept
# them unchanged, and it costs several microseconds. Anything else takes the parser's checks.
_INT64 = 2**63
_QUICK: dict[str, type | tuple[type, ...]] = {
    "dtype": _dt.dtype, "device": (_dt.device, str), "requires_grad": bool, "pin_memory": bool,
    "layout": _layouts.layout, "memory_format": _layouts.memory_format, "out": Tensor}


def _defaults(parser: PythonArgParser) -> dict[str, Any]:
    """The keyword-only defaults of the parser's last (most general) signature."""
    return {p.name: p.default for p in parser.signatures[-1].params if p.keyword_only}


def _quick(defaults: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The bound keywords when each is one the parser accepts as is, else None."""
    a = defaults.copy()
    for key, value in kwargs.items():
        kind = _QUICK.get(key)
        if kind is None or key not in a or not (value is None or isinstance(value, kind)):
            return None
        a[key] = value
    return a


def _int_sizes(size: tuple) -> list[int] | None:
    """``size`` (varargs or one list/tuple) when it is plain int64s, else None."""
    sizes: list | tuple = size[0] if len(size) == 1 and size[0].__class__ in (list, tuple) else size
    for s in sizes:
        if s.__class__ is not int or not -_INT64 <= s < _INT64:
            return None
    return list(sizes)


_NUMBER_CLASSES = (int, float, bool, complex)
_TENSOR = _parser("tensor(PyObject* data, *, ScalarType? dtype=None, Device? device=None, "
                  "bool pin_memory=False, bool requires_grad=False)")
_TENSOR_DEFAULTS = _defaults(_TENSOR)


# Note [Literals reach the modes]: torch's ``tensor(data)`` (``internal_new_from_data``,
# torch/csrc/utils/tensor_new.cpp) fills a CPU tensor with the Python and PythonTLSSnapshot keys
# excluded (under AutoDispatchBelowADInplaceOrView, so no mode sees the filling), moves it to the
# asked device the same way, then calls ``aten::lift_fresh`` on it, still below ADInplaceOrView:
# the one call a mode sees. ``FakeTensorMode`` answers it with a fake tensor (a constant it
# remembers when the literal has at most one element), ``make_fx`` records it as
# ``lift_fresh_copy(_tensor_constantN)``. ``device="meta"`` makes an empty meta tensor instead,
# and lifts nothing. Under ``FakeTensorMode`` (without an initialized accelerator) torch sets
# ``only_lift_cpu_tensors``: the CPU tensor is lifted first, and the move to the device is a
# ``_to_copy`` the modes see, so no device is touched. ``from_numpy`` lifts its tensor too
# (``tensor_from_numpy``), with no guard; ``tensor(ndarray)`` is ``from_numpy`` then a visible
# ``_to_copy(dtype=, device=)``; ``tensor(a_tensor)`` is ``detach`` then ``_to_copy``.
_PYTHON_KEYS = DispatchKeySet(DispatchKey.Python) | DispatchKeySet(DispatchKey.PythonTLSSnapshot)


class _LiftState(threading.local):
    only_cpu = False  # torch's kOnlyLiftCPUTensors: one flag per thread


_lift_state = _LiftState()


def only_lift_cpu_tensors() -> bool:
    """Whether ``tensor(data, device=...)`` lifts a CPU tensor and moves it after (``torch._C._only_lift_cpu_tensors``).

    ``FakeTensorMode`` turns it on while it is entered (per thread), so that a literal on an
    accelerator becomes a fake one through a ``_to_copy`` the modes see, with no device touched.

    Example:
        >>> only_lift_cpu_tensors()
        False
    """
    return _lift_state.only_cpu


def set_only_lift_cpu_tensors(value: bool) -> None:
    """Set this thread's ``only_lift_cpu_tensors`` flag (``torch._C._set_only_lift_cpu_tensors``).

    Example:
        >>> set_only_lift_cpu_tensors(True); only_lift_cpu_tensors()
        True
        >>> set_only_lift_cpu_tensors(False)
    """
    _lift_state.only_cpu = bool(value)


def _lift_literal(array: np.ndarray, device: _dt.device | None) -> Tensor:
    """``internal_new_from_data`` for list data: fill with the modes off, then ``lift_fresh`` (see the Note)."""
    only_cpu = _lift_state.only_cpu
    target = device if device is not None and device.type != "cpu" else None
    with ExcludeDispatchKeyGuard(_PYTHON_KEYS), _Below():
        if target is not None and target.type == "meta":  # the shortcut: no CPU tensor, nothing lifted
            return aten.empty.memory_format(list(array.shape), dtype=_dt.from_numpy_dtype(array.dtype),
                                            device=target)
        t = wrap_cpu(array)
        if target is not None and not only_cpu:
            t = aten._to_copy.default(t, device=target)
    with _Below():
        t = aten.lift_fresh.default(t)
    if target is not None and only_cpu:
        if target.index is None:  # torch infers index 0, to leave the device uninitialized
            target = _dt.device(target.type, 0)
        t = aten._to_copy.default(t, device=target)
    return t


def copy_of_tensor(data: Tensor, dtype: _dt.dtype | None, device: _dt.device | None) -> Tensor:
    """``tensor(a_tensor)``'s data: ``data.detach().to(device, dtype, copy=True)``, as torch makes it.

    Two operators a mode sees (``detach``, ``_to_copy``), so a fake tensor gives a fake copy.

    Example:
        >>> copy_of_tensor(tensor([1, 2]), _dt.float64, None)
        tensor([1., 2.], dtype=dispatchcore.float64)
    """
    source = aten.detach.default(data)
    return aten._to_copy.default(source, dtype=dtype or source.dtype, device=device or source.device)


_warned_not_writable = False


def from_numpy(ndarray: Any) -> Tensor:
    """A CPU tensor sharing ``ndarray``'s memory (``torch.from_numpy``): no copy.

    A dispatch mode sees one call, ``aten.lift_fresh`` of the new tensor (under
    ``FakeTensorMode`` the result is a fake tensor); without a mode nothing is dispatched.

    Example:
        >>> a = np.array([1.0, 2.0])
        >>> t = from_numpy(a)
        >>> a[0] = 5.0
        >>> t
        tensor([5., 2.], dtype=dispatchcore.float64)
    """
    global _warned_not_writable
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype not in _dt._by_np:
        raise TypeError(f"can't convert np.ndarray of type numpy.{ndarray.dtype.type.__name__}. The only supported "
                        "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                        "uint8, and bool.")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a copy "
                         "of your array  with array.copy().) ")
    if not ndarray.flags.writeable and not _warned_not_writable:
        _warned_not_writable = True  # torch warns once per program
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
                      "This means writing to this tensor will result in undefined behavior. You may want to copy "
                      "the array to protect its data or make it writable before converting it to a tensor. This "
                      "type of warning will be suppressed for the rest of this program.", UserWarning, stacklevel=2)
    if _plugins._done is False:
        _plugins.load_backends()
    if _pt.state.modes is None:  # See Note [Lifting costs nothing unobserved]
        return wrap_cpu(ndarray)
    return aten.lift_fresh.default(wrap_cpu(ndarray))  # See Note [Literals reach the modes]


def tensor(data: Any, *args: Any, **kwargs: Any) -> Tensor:
    """A new tensor holding a copy of ``data`` (``torch.tensor``).

    Takes torch's keywords ``dtype``, ``device``, ``pin_memory`` and ``requires_grad``. As in
    torch, a dispatch mode sees the new tensor once, as the argument of ``aten.lift_fresh``
    (See Note [Literals reach the modes]): ``FakeTensorMode`` makes it a fake tensor, ``make_fx``
    records it. ``data`` may be an ndarray (``from_numpy`` and a ``_to_copy``) or a tensor
    (``detach`` and a ``_to_copy``, with torch's warning).

    Example:
        >>> tensor([1.0, 2.0])
        tensor([1., 2.])
        >>> tensor([[1, 2], [3, 4]]).dtype
        dispatchcore.int64
        >>> from dispatchcore.modes import LoggingMode
        >>> with LoggingMode() as log:
        ...     _ = tensor(0.5)
        >>> log.ops
        ['aten.lift_fresh.default']
    """
    if _plugins._done is False:  # the first tensor of a program: its operators find the backends' kernels,
        _plugins.load_backends()  # not the composites that serve every backend (a miss would load them)
    a = None if args else _quick(_TENSOR_DEFAULTS, kwargs)
    if a is None:
        _, a = _TENSOR.parse((data, *args), kwargs)
    a["layout"] = None
    options = _options("tensor", a)
    dtype = options.get("dtype")
    device = options.get("device")
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=3)  # past the __torch_function__ binding
        return _finish("tensor", copy_of_tensor(data, dtype, device), a)
    if isinstance(data, np.ndarray):
        if _pt.state.modes is not None:  # See Note [Literals reach the modes]: from_numpy, then _to_copy
            source = np.array(data, copy=True)
            _dt.from_numpy_dtype(source.dtype)
            t = aten.lift_fresh.default(wrap_cpu(source))
            t = aten._to_copy.default(t, dtype=dtype or t.dtype, device=device or _dt.device("cpu"))
            return _finish("tensor", t, a)
        array = np.array(data, dtype=dtype.np if dtype is not None else None, copy=True)
        _dt.from_numpy_dtype(array.dtype)
    else:
        if dtype is None:
            dtype = _infer_dtype(data)
        sizes = _sizes(data)
        if 0 in sizes:  # torch stores nothing, so it reads no further than the first empty level
            array = np.empty(sizes, dtype=dtype.np)
        else:
            # numpy first: the Python walk of torch's checks runs only when numpy refuses the data
            # or reads another shape, after the except (Note [No chained errors], operator.py)
            refused = False
            try:
                array = np.array(data, dtype=dtype.np)
            except (ValueError, TypeError, OverflowError):
                refused = True
            if refused or array.shape != tuple(sizes) or array.dtype != dtype.np:
                _check_nesting(data, sizes, dtype.np)  # raises torch's error for ragged or non-number data
                array = np.array(data, dtype=dtype.np)  # else numpy's own error (or result), unchained
        # Note [Lifting costs nothing unobserved]: lift_fresh returns its argument, and only a
        # dispatch mode can tell it was called (the fresh tensor is plain: no subclass, no grad).
        # The dispatch costs a fifth of a small tensor(...) call, so it is made only while this
        # thread has a mode; without one the literal is built as torch builds it, minus the no-op.
        if _pt.state.modes is not None:
            return _finish("tensor", _lift_literal(array, device), a)
    t = wrap_cpu(array)
    if device is not None and device.type != "cpu":
        t = aten._to_copy.default(t, device=device)
    return _finish("tensor", t, a)


def _build(name: str, op: Any, a: dict[str, Any]) -> Tensor:
    """Call a size factory's operator with the bound arguments ``a``."""
    _out_dtype(a)
    options = _options(name, a)
    if a.get("generator") is not None:
        options["generator"] = a["generator"]
    fmt = a.get("memory_format")
    if fmt is not None:
        if fmt is _layouts.preserve_format:
            raise RuntimeError("unsupported memory format Preserve")
        _check_memory_format(fmt, len(a["size"]))
        options["memory_format"] = fmt
    size = a["size"]
    _check_nbytes(size, options.get("dtype"))
    if name in _WRITTEN_BY_COMPOSITE:
        with _Below():
            t = op(size, **options)
    else:
        t = op(size, **options)
    return _finish(name, t, a)


def _sized(name: str, op: Any, signatures: tuple[str, ...], doc: str) -> Any:
    """A factory taking a size (``zeros(2, 3)`` or ``zeros((2, 3))``) and torch's keywords."""
    parser = _parser(*signatures)
    defaults = _defaults(parser)

    def factory(*size: Any, **kwargs: Any) -> Tensor:
        sizes = _int_sizes(size) if size else None
        a = None if sizes is None else _quick(defaults, kwargs)
        if a is None:
            _, a = parser.parse(size, kwargs)
            a["size"] = [int(s) for s in a["size"]]  # numpy and 0-d tensor ints become ints
        else:
            a["size"] = sizes
        return _build(name, op, a)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = doc
    factory._op = op  # type: ignore[attr-defined]  # for the *_like factories
    return factory


_SIZE = "SymIntArrayRef size, *, "
empty = _sized("empty", aten.empty.memory_format,
               (f"empty({_SIZE}MemoryFormat? memory_format=None, {_OUT_TAIL})",),
               "An uninitialised tensor (``torch.empty``).")
zeros = _sized("zeros", aten.zeros.default, (f"zeros({_SIZE}{_OUT_TAIL})",),
               """A tensor of zeros (``torch.zeros``).

    Example:
        >>> zeros(2, 3).shape
        dispatchcore.Size([2, 3])
    """)
ones = _sized("ones", aten.ones.default, (f"ones({_SIZE}{_OUT_TAIL})",),
              "A tensor of ones (``torch.ones``).")
rand = _sized("rand", _generator_overload(aten.rand),
              (f"rand({_SIZE}Generator? generator, {_OUT_TAIL})", f"rand({_SIZE}{_OUT_TAIL})"),
              "Uniform samples in [0, 1) (``torch.rand``); reproducible after ``manual_seed``.")
randn = _sized("randn", _generator_overload(aten.randn),
               (f"randn({_SIZE}Generator? generator, {_OUT_TAIL})", f"randn({_SIZE}{_OUT_TAIL})"),
               "Standard normal samples (``torch.randn``); reproducible after ``manual_seed``.")

_FULL = _parser(f"full(SymIntArrayRef size, Scalar fill_value, *, {_OUT_TAIL})")
_FULL_DEFAULTS = _defaults(_FULL)


def full(*args: Any, **kwargs: Any) -> Tensor:
    """A tensor filled with ``fill_value`` (``torch.full``); the dtype follows the value."""
    a = None
    if len(args) == 2 and args[0].__class__ in (list, tuple) and args[1].__class__ in _NUMBER_CLASSES:
        sizes = _int_sizes(args[:1])
        a = None if sizes is None else _quick(_FULL_DEFAULTS, kwargs)
        if a is not None:
            a["size"], a["fill_value"] = sizes, args[1]
    if a is None:
        _, a = _FULL.parse(args, kwargs)
        a["size"] = [int(s) for s in a["size"]]
    return _build_full(a)


def _build_full(a: dict[str, Any]) -> Tensor:
    _out_dtype(a)
    options = _options("full", a)
    size = a["size"]
    _check_nbytes(size, options.get("dtype"))
    t = aten.full.default(size, a["fill_value"], **options)
    return _finish("full", t, a)


_EMPTY_STRIDED = _parser(f"empty_strided(SymIntArrayRef size, SymIntArrayRef stride, *, {_FACTORY_TAIL})")


def empty_strided(*args: Any, **kwargs: Any) -> Tensor:
    """An uninitialised tensor with the given strides (``torch.empty_strided``)."""
    _, a = _EMPTY_STRIDED.parse(args, kwargs)
    size, stride = [int(s) for s in a["size"]], [int(s) for s in a["stride"]]
    t = aten.empty_strided.default(size, stride, **_options("empty_strided", a))
    return _finish("empty_strided", t, a)


_ARANGE = _parser(f"arange(Scalar end, *, {_OUT_TAIL})",
                  f"arange(Scalar start, Scalar end, *, {_FACTORY_TAIL})",
                  f"arange(Scalar start, Scalar end, Scalar step=1, *, {_OUT_TAIL})")


_ARANGE_DEFAULTS = _defaults(_ARANGE)
_ARANGE_NAMES = ((), ("end",), ("start", "end"), ("start", "end", "step"))


def arange(*args: Any, **kwargs: Any) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step`` (``torch.arange``)."""
    a = None
    if 0 < len(args) <= 3 and all(v.__class__ in (int, float) for v in args):
        a = _quick(_ARANGE_DEFAULTS, kwargs)
        if a is not None:
            a.update(zip(_ARANGE_NAMES[len(args)], args))
    if a is None:
        _, a = _ARANGE.parse(args, kwargs)
    _out_dtype(a)
    out = a.get("out")
    if out is not None:  # the out= overloads size and fill out themselves
        _check_out_options("arange", out, a)
        if "start" in a:
            return aten.arange.start_out(a["start"], a["end"], a.get("step", 1), out=out)
        return aten.arange.out(a["end"], out=out)
    options = _options("arange", a)
    with _Below():
        if "start" not in a:  # the overload of the signature that matched, as torch's binding calls it
            t = aten.arange.default(a["end"], **options)
        elif "step" not in a:
            t = aten.arange.start(a["start"], a["end"], **options)
        else:
            t = aten.arange.start_step(a["start"], a["end"], a["step"], **options)
    return _finish("arange", t, a)


_EYE = _parser(f"eye(SymInt n, *, {_OUT_TAIL})", f"eye(SymInt n, SymInt m, *, {_OUT_TAIL})")


def eye(*args: Any, **kwargs: Any) -> Tensor:
    """A 2-d tensor with ones on the diagonal and zeros elsewhere (``torch.eye``): ``n`` rows, ``m`` columns.

    Example:
        >>> eye(2, 3)
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    index, a = _EYE.parse(args, kwargs)
    _out_dtype(a)
    out = a.get("out")
    if out is not None:
        _check_out_options("eye", out, a)
        return aten.eye.out(a["n"], out=out) if index == 0 else aten.eye.m_out(a["n"], a["m"], out=out)
    options = _options("eye", a)
    t = aten.eye.default(a["n"], **options) if index == 0 else aten.eye.m(a["n"], a["m"], **options)
    return _finish("eye", t, a)


_LINSPACE = _parser(*(f"linspace({s} start, {e} end, int64_t steps, *, {_OUT_TAIL})"
                      for s, e in (("Tensor", "Tensor"), ("Scalar", "Tensor"),
                                   ("Tensor", "Scalar"), ("Scalar", "Scalar"))))


def linspace(*args: Any, **kwargs: Any) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (``torch.linspace``)."""
    _, a = _LINSPACE.parse(args, kwargs)
    _out_dtype(a)
    out = a.get("out")
    if out is not None:
        _check_out_options("linspace", out, a)
        return aten.linspace.out(a["start"], a["end"], a["steps"], out=out)
    options = _options("linspace", a)
    with _Below():
        t = aten.linspace.default(a["start"], a["end"], a["steps"], **options)
    return _finish("linspace", t, a)


_LOGSPACE = _parser(*(f"logspace({s} start, {e} end, int64_t steps, double base=10.0, *, {_OUT_TAIL})"
                      for s, e in (("Tensor", "Tensor"), ("Scalar", "Tensor"),
                                   ("Tensor", "Scalar"), ("Scalar", "Scalar"))))


def logspace(*args: Any, **kwargs: Any) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in the exponent (``torch.logspace``).

    Example:
        >>> logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    _, a = _LOGSPACE.parse(args, kwargs)
    _out_dtype(a)
    base = a["base"]
    out = a.get("out")
    tail = (base,) if base != 10.0 else ()  # torch's binding passes base only when given another
    if out is not None:
        _check_out_options("logspace", out, a)
        return aten.logspace.out(a["start"], a["end"], a["steps"], *tail, out=out)
    options = _options("logspace", a)
    with _Below():
        t = aten.logspace.default(a["start"], a["end"], a["steps"], *tail, **options)
    return _finish("logspace", t, a)


def _like(name: str, factory: Any, extra: str = "", generator: bool = False) -> Any:
    """``<factory>_like(input, ...)``: the shape, dtype and device of ``input`` by default."""
    signatures = [f"{name}(Tensor input, {extra}*, {_LIKE_TAIL})"]
    if generator:
        signatures.insert(0, f"{name}(Tensor input, *, Generator? generator, {_LIKE_TAIL})")
    parser = _parser(*signatures)
    defaults = _defaults(parser)
    nargs = 2 if extra else 1

    def like(*args: Any, **kwargs: Any) -> Tensor:
        a = None
        if len(args) == nargs and args[0].__class__ is Tensor and (
                nargs == 1 or args[1].__class__ in _NUMBER_CLASSES):
            a = _quick(defaults, kwargs)
            if a is not None:
                a["input"] = args[0]
                if nargs == 2:
                    a["fill_value"] = args[1]
        if a is None:
            _, a = parser.parse(args, kwargs)
        input = a.pop("input")
        fmt = a["memory_format"]
        if fmt is not None and fmt is not _layouts.preserve_format:
            _check_memory_format(fmt, input.dim())
        if fmt is _layouts.preserve_format or factory is not empty:
            # only empty takes a memory format here (zeros_like & co. are contiguous)
            a["memory_format"] = None
        a["size"] = list(input.shape)
        if a["dtype"] is None:
            a["dtype"] = input.dtype
        if a["device"] is None:
            a["device"] = input.device
        a.setdefault("out", None)
        if "fill_value" in a:
            return _build_full(a)
        return _build(factory.__name__, factory._op, a)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"``{factory.__name__}`` with the shape, dtype and device of ``input``."
    return like


empty_like = _like("empty_like", empty)
zeros_like = _like("zeros_like", zeros)
ones_like = _like("ones_like", ones)
rand_like = _like("rand_like", rand, generator=True)
randn_like = _like("randn_like", randn, generator=True)
full_like = _like("full_like", full, extra="Scalar fill_value, ")


_seed_hooks: list[Any] = []


def manual_seed(seed: int) -> Any:
    """Seed every backend's random generator (``torch.manual_seed``); returns the default CPU generator.

    Example:
        >>> import dispatchcore as dc
        >>> dc.manual_seed(0) is dc.default_generator
        True
    """
    from .native.random import default_generator
    from .plugins import load_backends

    seed = int(seed)  # torch.manual_seed takes anything int() takes
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    load_backends()
    for hook in _seed_hooks:
        hook(seed)
    return default_generator


def register_seed_hook(hook: Any) -> None:
    """Backends call this so that ``manual_seed`` reaches their generators."""
    _seed_hooks.append(hook)
