"""Data types, devices and PyTorch's type-promotion rules.

Mirrors ``c10/core/ScalarType.h`` (``promoteTypes``) and ``ATen/native/TypeProperties.cpp``
(``result_type``: tensors with dimensions outrank zero-dim tensors, which outrank Python
scalars, and a lower-priority operand only matters when it is of a higher category).
Every ``dtype`` wraps a numpy dtype; instances are unique, so compare them with ``is``.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import numpy as np

__all__ = [
    "bool_", "complex64", "complex128", "device", "dtype", "float16", "float32", "float64",
    "get_default_dtype", "int8", "int16", "int32", "int64", "is_wrapped_number", "promote_types",
    "result_type", "set_default_dtype", "uint8", "WrappedNumber", "checked_number",
]


class dtype:  # noqa: N801 - torch.dtype's name
    """A tensor element type (``torch.dtype``); prints as ``dispatchcore.float32``."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed", "_category")

    def __init__(self, name: str, np_dtype: str, category: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = category >= 2 or self.np.kind == "i"
        self._category = category  # 0 bool, 1 integral, 2 floating, 3 complex

    def __repr__(self) -> str:
        return f"dispatchcore.{self.name}"

    def __reduce__(self):
        return (_by_name.__getitem__, (self.name,))


bool_ = dtype("bool", "bool", 0)
uint8 = dtype("uint8", "uint8", 1)
int8 = dtype("int8", "int8", 1)
int16 = dtype("int16", "int16", 1)
int32 = dtype("int32", "int32", 1)
int64 = dtype("int64", "int64", 1)
float16 = dtype("float16", "float16", 2)
float32 = dtype("float32", "float32", 2)
float64 = dtype("float64", "float64", 2)
complex64 = dtype("complex64", "complex64", 3)
complex128 = dtype("complex128", "complex128", 3)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
_by_name = {d.name: d for d in ALL_DTYPES}
_by_np: dict[np.dtype, dtype] = {d.np: d for d in ALL_DTYPES}
# torch spells some of these differently too
ALIASES = {"bool": bool_, "half": float16, "float": float32, "double": float64, "short": int16,
           "int": int32, "long": int64, "cfloat": complex64, "cdouble": complex128}


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The dtype wrapping a numpy dtype; raises TypeError for types torch has no equivalent of."""
    try:
        return _by_np[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type {np_dtype}. The only supported types are: float64, "
            "float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        ) from None


_default_dtype = float32


def get_default_dtype() -> dtype:
    """The dtype of Python floats turned into tensors (``torch.get_default_dtype``)."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64, as torch allows)."""
    global _default_dtype
    if d not in (float32, float64, float16):
        # torch names what is not a dtype at all (a string, a Python type) "invalid dtype object"
        prefix = "" if isinstance(d, dtype) else "invalid dtype object: "
        raise TypeError(prefix + "only floating-point types are supported as the default type")
    _default_dtype = d


# promote_types: numpy's table matches torch's for these types except that torch never
# promotes across signedness to a wider float: int64 with float16 stays float16, etc.
def promote_types(a: dtype, b: dtype) -> dtype:
    """Mirror ``torch.promote_types``.

    Example:
        >>> promote_types(int64, float16)
        dispatchcore.float16
        >>> promote_types(uint8, int8)
        dispatchcore.int16
    """
    if a is b:
        return a
    ca, cb = a._category, b._category
    if ca != cb:  # the higher category wins as is: int64 + float16 -> float16
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi.is_complex and lo.is_floating_point and lo.itemsize * 2 > hi.itemsize:
            return complex128
        return hi
    return _by_np[np.promote_types(a.np, b.np)]


class _TensorLike(Protocol):
    """A ``result_type`` operand with a ``dtype`` attribute: a tensor, so it also has ``dim()``."""

    def dim(self) -> int: ...


class WrappedNumber:
    """The ``_meta`` of a wrapped number: a 0-d CPU tensor made from a Python number operand.

    torch's ``scalar_to_tensor`` + ``set_wrapped_number(true)``: ``x * 2`` calls ``mul.Tensor``
    with ``2`` as such a tensor, and type promotion counts it as the Python number it was (a
    group below the 0-d tensors). The flag rides on the ``_meta`` slot (AutogradMeta's place),
    which a wrapped number never needs otherwise: it never requires grad. ``value`` is the
    Python number, so kernels can use it without reading the tensor. Every reader of ``_meta``
    must therefore accept a ``WrappedNumber`` there: it answers the AutogradMeta attributes the
    engine reads (below); anything else reads with ``getattr(meta, name, default)``.
    """

    __slots__ = ("value", "as_float32")
    grad_accumulator = None  # read as an AutogradMeta would be; a wrapped number has none
    retains_grad = False

    def __init__(self, value: object) -> None:
        self.value = value
        # float32 kernels' operand for a cached wrapped number (Note [Cached numbers in float32],
        # _composites.py); None: the kernels take ``value``
        self.as_float32: Any = None

    def __repr__(self) -> str:
        return f"WrappedNumber({self.value!r})"


def is_wrapped_number(t: object) -> bool:
    """Whether ``t`` is a wrapped number (``TensorImpl::is_wrapped_number``)."""
    return getattr(t, "_meta", None).__class__ is WrappedNumber


def result_type(*operands: object) -> dtype:
    """Mirror ``torch.result_type`` over tensors and Python scalars (``ResultTypeState``).

    Operands fall in three groups: tensors with dimensions, zero-dim tensors, and Python numbers
    or wrapped numbers (which count as the default dtype of their kind). Each group is promoted
    on its own; a lower group only matters when it is of a higher category
    (``combine_categories``).

    Example:
        >>> result_type(3, 2.5)
        dispatchcore.float32
    """
    dims = zero = wrapped = None
    for x in operands:
        if x is None:
            continue
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            meta = getattr(x, "_meta", None)
            if meta.__class__ is WrappedNumber:  # a number operand, wrapped: it counts as the number
                d = _wrapped_dtype(meta.value)
                wrapped = d if wrapped is None else promote_types(wrapped, d)
            elif cast(_TensorLike, x).dim():
                dims = d if dims is None else promote_types(dims, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        else:
            d = _wrapped_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    result = _combine_categories(dims, _combine_categories(zero, wrapped))
    return result if result is not None else _default_dtype


def _wrapped_dtype(value: object) -> dtype:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default_dtype
    if isinstance(value, complex):
        return complex128 if _default_dtype is float64 else complex64
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


def _to_complex(d: dtype) -> dtype:
    return {float16: complex64, float32: complex64, float64: complex128}.get(d, complex64)


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """c10's combine_categories: the higher-priority group wins unless ``lower`` is of a higher kind."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:  # a floating higher keeps its precision: float64 + complex64 -> complex128
        return _to_complex(higher) if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


# The PrivateUse1 device type's name (c10::get_privateuse1_backend); set once by
# tensor.rename_privateuse1_backend, read by the registry (torch.library's device types).
_privateuse1_name = ["privateuseone"]


def privateuse1_backend_name() -> str:
    """The PrivateUse1 device's type name (``torch._C._get_privateuse1_backend_name``).

    Example:
        >>> privateuse1_backend_name()  # until dispatchcore.rename_privateuse1_backend names it
        'privateuseone'
    """
    return _privateuse1_name[0]


class device:  # noqa: N801 - torch.device's name
    """A device (``torch.device``): a type such as ``"cpu"`` or ``"meta"`` and an optional index.

    Example:
        >>> device("cpu")
        device(type='cpu')
        >>> device("cuda:1").index
        1
    """

    __slots__ = ("type", "index")
    type: str  # set once in __new__; instances are immutable and interned
    index: int | None

    def __new__(cls, type: str | device, index: int | None = None) -> device:  # noqa: A002 - torch's name
        if isinstance(type, device):
            return type
        if ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        key = (type, index)
        cached = _devices.get(key)
        if cached is not None:
            return cached
        self = object.__new__(cls)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)
        _devices[key] = self
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("device is immutable")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


_devices: dict[tuple[str, int | None], device] = {}


# --- c10's checked_convert: a Python number as an element of a dtype -----------------------------
# c10's names of each dtype: ScalarType's (``toString``), caffe2::TypeMeta's, and the C type that
# ``checked_convert`` names in its overflow error; keyed by dtype name.
SCALAR_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                     "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
                     "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
TYPEMETA_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
                  "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
                  "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
C_TYPE_NAMES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                "int64": "int64_t", "float16": "c10::Half", "float32": "float", "float64": "double",
                "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
_CONVERT_NAME = {np.dtype(t): n for t, n in C_TYPE_NAMES.items()}


def checked_number(v: Any, dt: np.dtype) -> np.ndarray:
    """Mirror c10's ``checked_convert``: the Python number ``v`` as a 0-d array of ``dt``.

    Raises torch's "value cannot be converted to type uint8_t without overflow" when ``v`` does not
    fit; negative ints wrap into unsigned types, as c10's ``overflows()`` allows. The CPU kernels'
    scalar arguments (``fill_``, ``full``, ``clamp``) and ``x[i] = number`` use this one rule.
    """
    kind = dt.kind
    if kind == "b":
        return np.array(bool(v))
    if isinstance(v, complex) and kind != "c":
        if v.imag != 0:
            raise _convert_error(dt)
        v = v.real
    if kind in "iu":
        lo, hi = _LIMITS[dt]
        if isinstance(v, float):
            if v != v or not lo <= v <= hi:
                raise _convert_error(dt)
        v = int(v)
        if kind == "u":  # negative values wrap, as two's complement arithmetic would (c10 overflows())
            ok = v <= hi and (v >= 0 or -v <= hi)
        else:
            ok = lo <= v <= hi
        if not ok:
            raise _convert_error(dt)
        return np.array(v if v >= 0 or kind == "i" else v + hi + 1, dt)
    if kind == "f":
        f = float(v)
        if f == f and f not in (_INF, -_INF) and abs(f) > _LIMITS[dt][1]:
            raise _convert_error(dt)
        return np.array(f, dt)
    return np.array(v, dt)


_INF = float("inf")
_LIMITS = {dt: ((int(np.iinfo(cast(Any, dt)).min), int(np.iinfo(cast(Any, dt)).max)) if dt.kind in "iu" else
                (-float(np.finfo(cast(Any, dt)).max), float(np.finfo(cast(Any, dt)).max)))
           for dt in _CONVERT_NAME if dt.kind in "iuf"}


def _convert_error(dt: np.dtype) -> RuntimeError:
    name = _CONVERT_NAME.get(dt, str(dt))
    return RuntimeError(f"value cannot be converted to type {name} without overflow")
