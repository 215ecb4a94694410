"""Meta kernels: every core operator computed on shapes, strides and dtypes, never on data.

Mirrors what PyTorch runs for a tensor on ``device("meta")``: the structured kernels' *meta*
functions (``TORCH_META_FUNC`` in ``aten/src/ATen/native/*.cpp``) and TensorIterator's shape,
dtype and stride rules, so a meta result has exactly the geometry a CPU result would have, and
a bad call fails with CPU's message. Checks that only a CPU kernel makes when it meets a dtype it
was not compiled for (``"abs_cpu" not implemented for 'Bool'``) are not modelled: meta runs no kernel.
Kernels are plain functions ``<op>_meta``; ``register()`` in ``__init__.py`` binds them to ops.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dispatchcore import dtypes as _dt
from dispatchcore.native.explicit import linspace_dtype, resize_eye_out, resize_range_out
from dispatchcore.tensor import Tensor, wrap

from . import shapes

__all__ = ["MetaData", "meta_tensor"]

_META = "meta"


# --- the data of a meta tensor -----------------------------------------------------------------
class MetaData:
    """What a meta tensor holds instead of elements: geometry and dtype, nothing else.

    Follows Note [Backend data protocol] (``dispatchcore/tensor.py``): numpy's ``shape``,
    ``strides`` (bytes), ``dtype`` (a numpy dtype), ``ndim``, ``size`` and ``itemsize``, plus
    ``storage_offset`` (elements) and ``storage_nbytes``, the size of the storage it would view
    (``as_strided`` checks against it). Never mutated: a resized ``out=`` tensor gets a new one,
    so aliases made earlier (``detach``) keep their geometry, as TensorImpls do.

    Example:
        >>> d = MetaData((2, 3), (12, 4), np.dtype("float32"))
        >>> d.size, d.ndim, d.storage_nbytes
        (6, 2, 24)
    """

    __slots__ = ("shape", "strides", "dtype", "ndim", "size", "itemsize", "storage_offset",
                 "storage_nbytes")

    def __init__(self, shape: Sequence[int], strides: Sequence[int], dtype: Any,
                 storage_offset: int = 0, storage_nbytes: int | None = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.dtype = dtype.np if isinstance(dtype, _dt.dtype) else np.dtype(dtype)
        self.ndim = len(self.shape)
        self.size = shapes.numel(self.shape)
        self.itemsize = self.dtype.itemsize
        self.storage_offset = int(storage_offset)
        if storage_nbytes is None:
            storage_nbytes = shapes.storage_nbytes(
                self.shape, self.element_strides(), self.itemsize, self.storage_offset)
        self.storage_nbytes = storage_nbytes

    def element_strides(self) -> tuple[int, ...]:
        """Strides in elements, as ``Tensor.stride()`` reports them."""
        return tuple(s // self.itemsize for s in self.strides)

    def __repr__(self) -> str:
        return (f"MetaData(shape={self.shape}, strides={self.element_strides()}, "
                f"dtype={self.dtype}, storage_offset={self.storage_offset})")


def meta_tensor(shape: Sequence[int], dtype: Any, strides: Sequence[int] | None = None,
                storage_offset: int = 0, storage_nbytes: int | None = None) -> Tensor:
    """A new meta tensor; ``strides`` in elements (contiguous when omitted).

    Example:
        >>> meta_tensor((2, 3), _dt.float32, (1, 2)).stride()
        (1, 2)
    """
    d = _dt_of(dtype)
    shape = tuple(shape)
    strides = shapes.contiguous_strides(shape) if strides is None else tuple(strides)
    data = MetaData(shape, [s * d.itemsize for s in strides], d.np, storage_offset, storage_nbytes)
    return wrap(data, _META)


def _view(self: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int) -> Tensor:
    """A meta tensor over ``self``'s storage with another geometry."""
    return meta_tensor(shape, self.dtype, strides, offset, _storage_nbytes(self))


def _storage_nbytes(t: Tensor) -> int:
    nbytes = getattr(t._data, "storage_nbytes", None)
    if nbytes is None:  # another backend's tensor: the storage its own geometry needs
        nbytes = shapes.storage_nbytes(t.shape, t.stride(), t.element_size(), t.storage_offset())
    return nbytes


def _geometry(t: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, element strides, itemsize) of a tensor: what TensorIterator looks at."""
    data = t._data
    itemsize = data.dtype.itemsize
    return tuple(data.shape), tuple(s // itemsize for s in data.strides), itemsize


# --- dtypes, scalars, names ----------------------------------------------------------------------
# c10::toString(ScalarType), caffe2::TypeMeta names and the C type names checked_convert prints.
_SCALAR_NAME = _dt.SCALAR_TYPE_NAMES
_TYPEMETA_NAME = _dt.TYPEMETA_NAMES
_CTYPE_NAME = _dt.C_TYPE_NAMES
# ScalarType numbers, as schema defaults store them (``ScalarType? dtype=float`` is 6)
_SCALAR_TYPE_NUMBERS = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16",
                        6: "float32", 7: "float64", 9: "complex64", 10: "complex128", 11: "bool"}


def _dt_of(value: Any) -> _dt.dtype:
    """A dispatchcore dtype from a dtype, a numpy dtype, a name or a ScalarType number."""
    if isinstance(value, _dt.dtype):
        return value
    if isinstance(value, bool):
        raise TypeError(f"expected a dtype, got {value!r}")
    if isinstance(value, int):
        return _dt._by_name[_SCALAR_TYPE_NUMBERS[value]]
    if isinstance(value, str):
        name = value.removeprefix("torch.").removeprefix("dispatchcore.")
        found = _dt._by_name.get(name) or _dt.ALIASES.get(name)
        if found is None:
            raise TypeError(f"unknown dtype {value!r}")
        return found
    return _dt.from_numpy_dtype(np.dtype(value))


def _st(d: _dt.dtype) -> str:
    return _SCALAR_NAME[d.name]


def _tm(d: _dt.dtype) -> str:
    return _TYPEMETA_NAME[d.name]


def _is_integral(d: _dt.dtype, include_bool: bool) -> bool:
    return d._category == 1 or (include_bool and d is _dt.bool_)


def _is_float_or_complex(d: _dt.dtype) -> bool:
    return d.is_floating_point or d.is_complex


def _can_cast(src: _dt.dtype, dst: _dt.dtype) -> bool:
    """Mirror ``c10::canCast``: no complex -> real, no float -> integral, nothing else -> bool."""
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and _is_integral(dst, include_bool=False):
        return False
    return src is _dt.bool_ or dst is not _dt.bool_


def _scalar(value: Any) -> bool | int | float | complex:
    """A Scalar argument as a Python number (a tensor stands for a number of its dtype's kind)."""
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Tensor):
        d = value.dtype
        if value.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {value.numel()} elements cannot be converted to Scalar")
        return {0: False, 1: 0, 2: 0.0, 3: 0j}[d._category]
    raise TypeError(f"expected a number for a Scalar argument, got {type(value).__name__}")


def _scalar_dtype(value: bool | int | float | complex) -> _dt.dtype:
    """The dtype of ``wrapped_scalar_tensor(value)``: Bool, Long, Double or ComplexDouble."""
    if isinstance(value, bool):
        return _dt.bool_
    if isinstance(value, int):
        return _dt.int64
    if isinstance(value, float):
        return _dt.float64
    return _dt.complex128


def _check_fits(value: bool | int | float | complex, d: _dt.dtype) -> None:
    """Mirror ``checked_convert``: the value must fit ``d`` (``fill_``, ``full``, ``scalar_tensor``).

    Complex values need a zero imaginary part for real dtypes; bool and complex targets take any
    value; negative ints wrap into unsigned types down to ``-max``; inf and nan fit floats only.
    """
    if d is _dt.bool_ or d is _dt.complex128:
        return
    if d.is_complex:  # complex<float>: either part may overflow float
        v = complex(value)
        limit = float(np.finfo(np.float32).max)
        if any(math.isfinite(p) and abs(p) > limit for p in (v.real, v.imag)):
            raise RuntimeError(f"value cannot be converted to type {_CTYPE_NAME[d.name]} without overflow")
        return
    overflow = False
    if isinstance(value, complex):
        overflow = value.imag != 0
        value = value.real
    if isinstance(value, bool) or overflow:
        pass
    elif d._category == 1:
        info = np.iinfo(d.np)
        if isinstance(value, float) and not math.isfinite(value):
            overflow = True
        else:
            lowest = -int(info.max) if info.min == 0 and isinstance(value, int) else info.min
            overflow = not lowest <= value <= info.max
    elif not (isinstance(value, float) and not math.isfinite(value)):
        overflow = abs(value) > float(np.finfo(d.np).max)
    if overflow:
        raise RuntimeError(f"value cannot be converted to type {_CTYPE_NAME[d.name]} without overflow")


def _memory_format(value: Any) -> str | None:
    """``None``, ``"contiguous"``, ``"preserve"``, ``"channels_last"`` or ``"channels_last_3d"``."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return ("contiguous", "preserve", "channels_last", "channels_last_3d")[value]
    name = getattr(value, "name", None) if not isinstance(value, str) else value
    name = str(name if name is not None else value).rpartition(".")[2].lower()
    return name.removesuffix("_format")


def _strides_for(shape: tuple[int, ...], memory_format: str | None) -> tuple[int, ...]:
    """Strides ``at::empty`` gives ``shape`` in ``memory_format`` (``empty_tensor_restride``)."""
    if memory_format in (None, "contiguous"):
        return shapes.contiguous_strides(shape)
    if memory_format == "channels_last":
        return shapes.channels_last_strides(shape)
    if memory_format == "channels_last_3d":
        if len(shape) != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        n, c, d, h, w = shape
        s4 = c
        s3 = s4 * w
        s2 = s3 * h
        return (s2 * d, 1, s2, s3, s4)
    raise RuntimeError(f"unsupported memory format {memory_format.title().replace('_', '')}")


def _size_list(size: Any) -> tuple[int, ...]:
    """A ``SymInt[]`` argument (a sequence, or one int) as a tuple of ints."""
    if isinstance(size, int):
        return (size,)
    return tuple(int(s) for s in size)


def _check_sizes(shape: tuple[int, ...]) -> None:
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")


def _device_check(tensors: Sequence[Any]) -> None:
    """TensorIterator's device rule, its operands given outputs first, as TensorIterator orders them.

    The first operand that is not a 0-dim CPU tensor sets the expected device (``compute_types``'
    common device); another operand elsewhere is refused, naming the two as torch does. A call
    reaches the Meta kernel only when some operand is on meta.
    """
    expected = None
    for t in tensors:
        if isinstance(t, Tensor) and (t._device.type != "cpu" or t.dim() != 0):
            if expected is None:
                expected = t._device
            elif t._device != expected:
                raise RuntimeError(f"Tensor on device {t._device} is not on the expected device {expected}!")


# --- TensorIterator ----------------------------------------------------------------------------
def _promoted(x: Any, common: _dt.dtype) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """An input as TensorIterator sees it after promotion to the common dtype.

    On CPU, ``compute_types`` replaces every input of another dtype by ``input.to(common)``
    before any stride is looked at: a dense copy in the input's layout, with the new itemsize.
    A Python number is a 0-dim wrapped tensor.
    """
    if isinstance(x, Tensor):
        return _converted(x, common)
    return ((), (), common.itemsize)


def _converted(t: Tensor, d: _dt.dtype) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The operand ``t.to(d)`` would be: a dense copy in t's layout when the dtype changes."""
    shape, strides, itemsize = _geometry(t)
    if t.dtype is d:
        return shape, strides, itemsize
    return shape, shapes.dense_strides_like(shape, strides), d.itemsize


def _tensor_iterator(operands: Sequence[tuple[tuple[int, ...], tuple[int, ...], int]],
                     dtype: _dt.dtype, *, out: Tensor | None = None, inplace: Tensor | None = None,
                     same_dtype: bool = False) -> Tensor:
    """Build one TensorIterator output: shape, then output dtype checks, then strides.

    ``operands`` are the inputs as ``_promoted`` gives them; ``dtype`` is the output dtype
    (the common dtype, except for comparisons). ``inplace`` is an output that is also an input
    (its shape must already be the broadcast shape); ``out`` is an ``out=`` tensor that is
    resized (with PyTorch's warning when it had elements) if its shape differs.
    """
    shape, same = shapes.tensor_iterator_shape([op[0] for op in operands])
    if inplace is not None and tuple(inplace.shape) != shape:
        raise RuntimeError(
            f"output with shape {list(inplace.shape)} doesn't match the broadcast shape {list(shape)}")
    target = inplace if inplace is not None else out
    if target is not None:
        if same_dtype and target.dtype is not dtype:
            raise RuntimeError(f"Found dtype {_st(target.dtype)} but expected {_st(dtype)}")
        if not _can_cast(dtype, target.dtype):
            raise RuntimeError(
                f"result type {_st(dtype)} can't be cast to the desired output type {_st(target.dtype)}")
    if inplace is not None:
        return inplace
    if out is not None and tuple(out.shape) == shape:
        return out  # an out= tensor of the right shape keeps its strides
    strides = shapes.tensor_iterator_strides(shape, operands, same)
    if out is not None:
        return _resize_out(out, shape, strides)
    return meta_tensor(shape, dtype, strides)


def python_out_wrapper(functional: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The ``out_wrapper`` of torch's Python meta kernels around ``functional`` (one ``out``)."""
    def out_kernel(*args: Any, out: Tensor, **kwargs: Any) -> Tensor:
        return python_copy_out(functional(*args, **kwargs), out)

    out_kernel.__name__ = functional.__name__.replace("_meta", "_out_meta")
    return out_kernel


def python_copy_out(result: Tensor, out: Tensor) -> Tensor:
    """``out_wrapper``'s copy of ``result`` into one ``out`` of torch's Python meta kernels.

    ``out`` is resized (``_resize_output_check``'s warning), then ``_safe_copy_out`` checks that
    the result's dtype casts safely to out's (it need not be equal).
    """
    from dispatchcore.native.structured import can_cast

    _resize_out(out, tuple(result.shape), python_meta=True)
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"Attempting to cast from torch.{result.dtype.name} to out tensor with dtype "
                           f"torch.{out.dtype.name}, but this can't be cast because it is not safe!")
    return out


def _resize_out(out: Tensor, shape: tuple[int, ...], strides: tuple[int, ...] | None = None,
                python_meta: bool = False) -> Tensor:
    """Mirror ``resize_output`` + ``as_strided_``: give ``out`` a new geometry, warning as torch does.

    ``python_meta``: the kernel is one torch writes in Python with ``out_wrapper``, whose warning
    is ``_resize_output_check``'s (its second shape is printed as the literal ``{str(shape)}``).
    """
    if tuple(out.shape) == shape:
        return out
    if out.numel() != 0 and python_meta:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {out.shape} which does not "
            "match the required output shape {str(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
            "tensor t by resizing it, inplace, to zero elements with t.resize_(0).", UserWarning, stacklevel=4)
    elif out.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
            f"which does not match the required output shape {list(shape)}. This behavior is "
            "deprecated, and in a future PyTorch release outputs will not be resized unless they "
            "have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, "
            "to zero elements with t.resize_(0).", UserWarning, stacklevel=4)
    strides = shapes.contiguous_strides(shape) if strides is None else strides
    offset = out.storage_offset()
    needed = shapes.storage_nbytes(shape, strides, out.element_size(), offset)
    out._data = MetaData(shape, [s * out.element_size() for s in strides], out._data.dtype, offset,
                         max(needed, _storage_nbytes(out)))
    return out


# --- pointwise: binary arithmetic ---------------------------------------------------------------
def _alpha_check(d: _dt.dtype, alpha: Any) -> None:
    """Mirror ``alpha_check`` (BinaryOps.h), against the iterator's output dtype."""
    alpha = _scalar(alpha)
    if isinstance(alpha, bool) and d is not _dt.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not _is_float_or_complex(d) and not isinstance(alpha, int):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number.")
    if not d.is_complex and isinstance(alpha, complex):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number.")


def _sub_check(self_dtype: _dt.dtype, other_dtype: _dt.dtype) -> None:
    if self_dtype is _dt.bool_ and other_dtype is _dt.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead.")
    if self_dtype is _dt.bool_ or other_dtype is _dt.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _arith(name: str, self: Tensor, other: Any, alpha: Any = None, *, out: Tensor | None = None,
           inplace: bool = False) -> Tensor:
    """add/sub/mul/div on a tensor and a tensor or (wrapped) number."""
    if not isinstance(other, Tensor):
        other = _scalar(other)
    _device_check((out, self, other))
    other_dtype = other.dtype if isinstance(other, Tensor) else _scalar_dtype(other)
    if name == "sub":
        _sub_check(self.dtype, other_dtype)
    dtype = _dt.result_type(self, other)
    if name == "div" and not _is_float_or_complex(dtype):
        dtype = _dt.get_default_dtype()  # true division promotes integers to float
    result = _tensor_iterator([_promoted(self, dtype), _promoted(other, dtype)], dtype, out=out,
                              inplace=self if inplace else None)
    if alpha is not None:
        _alpha_check(result.dtype, alpha)
    return result


def _make_arith(name: str) -> dict[str, Any]:
    """The five overloads of one arithmetic op, with the schema's parameter names and defaults."""
    if name in ("add", "sub"):
        def tensor(self, other, *, alpha=1):
            return _arith(name, self, other, alpha)

        def scalar(self, other, alpha=1):
            return _arith(name, self, other, alpha)

        def tensor_(self, other, *, alpha=1):
            return _arith(name, self, other, alpha, inplace=True)

        def scalar_(self, other, alpha=1):
            return _arith(name, self, other, alpha, inplace=True)

        def out(self, other, *, alpha=1, out):
            return _arith(name, self, other, alpha, out=out)
    else:
        def tensor(self, other):
            return _arith(name, self, other)

        def scalar(self, other):
            return _arith(name, self, other)

        def tensor_(self, other):
            return _arith(name, self, other, inplace=True)

        def scalar_(self, other):
            return _arith(name, self, other, inplace=True)

        def out(self, other, *, out):
            return _arith(name, self, other, out=out)
    kernels = {f"{name}.Tensor": tensor, f"{name}.Scalar": scalar, f"{name}_.Tensor": tensor_,
               f"{name}_.Scalar": scalar_, f"{name}.out": out}
    for op_name, fn in kernels.items():
        fn.__name__ = fn.__qualname__ = op_name.replace(".", "_") + "_meta"
    return kernels


# --- pointwise: pow --------------------------------------------------------------------------
def _pow_scalar_check(base: Tensor, exponent: Any) -> None:
    if (_is_integral(base.dtype, include_bool=True) and isinstance(exponent, int)
            and exponent < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def pow_tensor_tensor_meta(self: Tensor, exponent: Tensor) -> Tensor:
    _device_check((self, exponent))
    common = _dt.result_type(self, exponent)
    return _tensor_iterator([_promoted(self, common), _promoted(exponent, common)], common)


def pow_tensor_scalar_meta(self: Tensor, exponent: Any) -> Tensor:
    exponent = _scalar(exponent)
    _pow_scalar_check(self, exponent)
    common = _dt.result_type(self, exponent)
    return _tensor_iterator([_converted(self, common)], common)


def pow_scalar_meta(self: Any, exponent: Tensor) -> Tensor:
    # pow.Scalar's meta sets a contiguous output of the exponent's shape
    return meta_tensor(tuple(exponent.shape), _dt.result_type(_scalar(self), exponent))


def pow__scalar_meta(self: Tensor, exponent: Any) -> Tensor:
    exponent = _scalar(exponent)
    _pow_scalar_check(self, exponent)
    common = _dt.result_type(self, exponent)
    return _tensor_iterator([_converted(self, common)], common, inplace=self)


def pow__tensor_meta(self: Tensor, exponent: Tensor) -> Tensor:
    _device_check((self, exponent))
    common = _dt.result_type(self, exponent)
    return _tensor_iterator([_promoted(self, common), _promoted(exponent, common)], common,
                            inplace=self)


# --- pointwise: unary ------------------------------------------------------------------------
_FLOAT_UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid")


def _unary_float(self: Tensor, *, out: Tensor | None = None, inplace: bool = False) -> Tensor:
    """Unary float ops promote integer (and bool) inputs to the default dtype."""
    dtype = self.dtype if _is_float_or_complex(self.dtype) else _dt.get_default_dtype()
    return _tensor_iterator([_promoted(self, dtype)], dtype, out=out, inplace=self if inplace else None)


def _neg_check(self: Tensor) -> None:
    if self.dtype is _dt.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")


def neg_meta(self: Tensor) -> Tensor:
    _neg_check(self)
    return _tensor_iterator([_geometry(self)], self.dtype)


def neg__meta(self: Tensor) -> Tensor:
    _neg_check(self)
    return _tensor_iterator([_geometry(self)], self.dtype, inplace=self, same_dtype=True)


def neg_out_meta(self: Tensor, *, out: Tensor) -> Tensor:
    _neg_check(self)
    return _tensor_iterator([_geometry(self)], self.dtype, out=out, same_dtype=True)


def _real_dtype(d: _dt.dtype) -> _dt.dtype:
    return {"complex64": _dt.float32, "complex128": _dt.float64}.get(d.name, d)


def abs_meta(self: Tensor) -> Tensor:
    if self.dtype.is_complex:  # empty_like(self, real dtype): self's layout, made dense
        shape, strides, _ = _geometry(self)
        return meta_tensor(shape, _real_dtype(self.dtype), shapes.dense_strides_like(shape, strides))
    return _tensor_iterator([_geometry(self)], self.dtype)


def abs__meta(self: Tensor) -> Tensor:
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _tensor_iterator([_geometry(self)], self.dtype, inplace=self, same_dtype=True)


def abs_out_meta(self: Tensor, *, out: Tensor) -> Tensor:
    if self.dtype.is_complex and not out.dtype.is_complex:
        real = _real_dtype(self.dtype)
        if not _can_cast(real, out.dtype):
            raise RuntimeError(
                f"result type {_st(real)} can't be cast to the desired output type {_st(out.dtype)}")
        return _resize_out(out, tuple(self.shape))
    return _tensor_iterator([_geometry(self)], self.dtype, out=out, same_dtype=True)


def _make_unary_float(name: str) -> dict[str, Any]:
    def functional(self):
        return _unary_float(self)

    def inplace(self):
        return _unary_float(self, inplace=True)

    def out(self, *, out):
        return _unary_float(self, out=out)

    kernels = {name: functional, f"{name}_": inplace, f"{name}.out": out}
    for op_name, fn in kernels.items():
        fn.__name__ = fn.__qualname__ = op_name.replace(".", "_") + "_meta"
    return kernels


# --- pointwise: clamp, relu, where, comparisons --------------------------------------------------
def _clamp_dtype(self: Tensor, bounds: Sequence[Any], inplace: bool) -> _dt.dtype:
    """Mirror clamp's meta: scalars take part in promotion unless self is floating."""
    if self.dtype.is_complex or any(isinstance(b, complex) for b in bounds):
        raise NotImplementedError("clamp is not supported for complex types")
    result = self.dtype
    if not self.dtype.is_floating_point:
        result = _dt.result_type(self, *bounds)
        if inplace and result is not self.dtype:
            raise RuntimeError(
                f"result type {_st(result)} can't be cast to the desired output type {_tm(self.dtype)}")
    if result.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return result


def _clamp(self: Tensor, min: Any, max: Any, inplace: bool) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [_scalar(b) for b in (min, max) if b is not None]
    result = _clamp_dtype(self, bounds, inplace)
    return _tensor_iterator([_converted(self, result)], result, inplace=self if inplace else None)


def clamp_meta(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _clamp(self, min, max, False)


def clamp__meta(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _clamp(self, min, max, True)


def clamp_min_meta(self: Tensor, min: Any) -> Tensor:
    result = _clamp_dtype(self, [_scalar(min)], False)
    return _tensor_iterator([_converted(self, result)], result)


def clamp_min__meta(self: Tensor, min: Any) -> Tensor:
    result = _clamp_dtype(self, [_scalar(min)], True)
    return _tensor_iterator([_converted(self, result)], result, inplace=self)


def clamp_max_meta(self: Tensor, max: Any) -> Tensor:  # noqa: A002
    return clamp_min_meta(self, max)  # one bound either way: the same checks and geometry


def clamp_max__meta(self: Tensor, max: Any) -> Tensor:  # noqa: A002
    return clamp_min__meta(self, max)


def _clamp_tensor(self: Tensor, min: Any, max: Any, inplace: bool) -> Tensor:
    """``clamp.Tensor``/``clamp_min.Tensor``: every operand promotes (TensorIterator)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    tensors = [t for t in (self, min, max) if t is not None]
    if any(t.dtype.is_complex for t in tensors):
        raise NotImplementedError("clamp is not supported for complex types")
    _device_check(tensors)
    result = _dt.result_type(*tensors)
    return _tensor_iterator([_promoted(t, result) for t in tensors], result, inplace=self if inplace else None)


def clamp_tensor_meta(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _clamp_tensor(self, min, max, False)


def clamp__tensor_meta(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _clamp_tensor(self, min, max, True)


def clamp_min_tensor_meta(self: Tensor, min: Tensor) -> Tensor:
    return _clamp_tensor(self, min, None, False)


def clamp_min__tensor_meta(self: Tensor, min: Tensor) -> Tensor:
    return _clamp_tensor(self, min, None, True)


def clamp_max_tensor_meta(self: Tensor, max: Tensor) -> Tensor:  # noqa: A002
    return _clamp_tensor(self, None, max, False)


def clamp_max__tensor_meta(self: Tensor, max: Tensor) -> Tensor:  # noqa: A002
    return _clamp_tensor(self, None, max, True)


def _extremum(name: str, self: Tensor, other: Tensor) -> Tensor:
    if self.dtype.is_complex or other.dtype.is_complex:
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    _device_check((self, other))
    common = _dt.result_type(self, other)
    return _tensor_iterator([_promoted(self, common), _promoted(other, common)], common)


def maximum_meta(self: Tensor, other: Tensor) -> Tensor:
    return _extremum("maximum", self, other)


def minimum_meta(self: Tensor, other: Tensor) -> Tensor:
    return _extremum("minimum", self, other)


def _div_mode(self: Tensor, other: Any, rounding_mode: Any, inplace: bool) -> Tensor:
    """``div`` with ``rounding_mode``: trunc and floor keep the common dtype (integers stay integers)."""
    if rounding_mode is None:
        return _arith("div", self, other, inplace=inplace)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if not isinstance(other, Tensor):
        other = _scalar(other)
    _device_check((self, other))
    dtype = _dt.result_type(self, other)
    return _tensor_iterator([_promoted(self, dtype), _promoted(other, dtype)], dtype,
                            inplace=self if inplace else None)


def div_tensor_mode_meta(self: Tensor, other: Tensor, *, rounding_mode: Any) -> Tensor:
    return _div_mode(self, other, rounding_mode, False)


def div_scalar_mode_meta(self: Tensor, other: Any, *, rounding_mode: Any) -> Tensor:
    return _div_mode(self, other, rounding_mode, False)


def div__tensor_mode_meta(self: Tensor, other: Tensor, *, rounding_mode: Any) -> Tensor:
    return _div_mode(self, other, rounding_mode, True)


def div__scalar_mode_meta(self: Tensor, other: Any, *, rounding_mode: Any) -> Tensor:
    return _div_mode(self, other, rounding_mode, True)


def _relu_check(self: Tensor) -> None:
    if self.dtype is _dt.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")


def relu_meta(self: Tensor) -> Tensor:
    _relu_check(self)  # relu is clamp_min(self, 0)
    return clamp_min_meta(self, 0)


def relu__meta(self: Tensor) -> Tensor:
    _relu_check(self)
    return clamp_min__meta(self, 0)


_warned_uint8_where = False


def where_self_meta(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
    global _warned_uint8_where
    _device_check((condition, self, other))
    result = _dt.result_type(self, other)
    if condition.dtype is _dt.uint8:
        if not _warned_uint8_where:  # TORCH_WARN_ONCE
            _warned_uint8_where = True
            warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                          "will be removed in a future version of PyTorch. Use a boolean condition "
                          "instead.", UserWarning, stacklevel=3)
    elif condition.dtype is not _dt.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with "
                           f"dtype {_st(condition.dtype)}")
    cond = _converted(condition, _dt.bool_)
    return _tensor_iterator([cond, _converted(self, result), _converted(other, result)], result)


def _make_comparison(name: str) -> dict[str, Any]:
    def tensor(self, other):
        _device_check((self, other))
        common = _dt.result_type(self, other)
        return _tensor_iterator([_promoted(self, common), _promoted(other, common)], _dt.bool_)

    def scalar(self, other):
        other = _scalar(other)
        common = _dt.result_type(self, other)
        return _tensor_iterator([_promoted(self, common), _promoted(other, common)], _dt.bool_)

    def tensor_(self, other):  # in place: self is the output, and must have the broadcast shape
        _device_check((self, other))
        common = _dt.result_type(self, other)
        return _tensor_iterator([_promoted(self, common), _promoted(other, common)], _dt.bool_, inplace=self)

    def scalar_(self, other):
        other = _scalar(other)
        common = _dt.result_type(self, other)
        return _tensor_iterator([_promoted(self, common), _promoted(other, common)], _dt.bool_, inplace=self)

    kernels = {f"{name}.Tensor": tensor, f"{name}.Scalar": scalar, f"{name}_.Tensor": tensor_,
               f"{name}_.Scalar": scalar_}
    for op_name, fn in kernels.items():
        fn.__name__ = fn.__qualname__ = op_name.replace(".", "_") + "_meta"
    return kernels


# --- reductions ---------------------------------------------------------------------------------
def _dtype_from_self(self: Tensor, dtype: Any) -> _dt.dtype:
    """Mirror ``get_dtype_from_self(self, dtype, promote_integers=true)``."""
    if dtype is not None:
        return _dt_of(dtype)
    return _dt.int64 if _is_integral(self.dtype, include_bool=True) else self.dtype


def _reduce(self: Tensor, dim: Any, keepdim: bool, dtype: _dt.dtype) -> Tensor:
    """Mirror ``resize_reduction``: a contiguous output of the reduced shape."""
    dims = shapes.reduction_dims(dim, self.dim())
    return meta_tensor(shapes.reduction_shape(tuple(self.shape), dims, keepdim), dtype)


def _zero_numel_check_dims(self: Tensor, dims: Sequence[int], fn: str) -> None:
    """Mirror ``zero_numel_check_dims`` (IndexError, dims printed as given)."""
    if not dims:
        raise IndexError(f"{fn}: Expected reduction dim to be specified for input.numel() == 0. "
                         "Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if self.dim() == 0:
            if d not in (0, -1):
                raise IndexError(f"{fn}: Expected reduction dim -1 or 0 for scalar but got {d}")
        elif self.shape[shapes.wrap_dim(d, self.dim())] == 0:
            raise IndexError(f"{fn}: Expected reduction dim {d} to have non-zero size.")


def sum_meta(self: Tensor, *, dtype: Any = None) -> Tensor:
    return _reduce(self, None, False, _dtype_from_self(self, dtype))


def sum_dim_intlist_meta(self: Tensor, dim: Any, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return _reduce(self, dim, keepdim, _dtype_from_self(self, dtype))


def _mean_dtype(self: Tensor, dtype: Any) -> _dt.dtype:
    result = _dtype_from_self(self, dtype)
    if not _is_float_or_complex(result):
        what, name = ("Optional", _st(result)) if dtype is not None else ("Input", _st(self.dtype))
        raise RuntimeError(f"mean(): could not infer output dtype. {what} dtype must be either a "
                           f"floating point or complex dtype. Got: {name}")
    return result


def mean_meta(self: Tensor, *, dtype: Any = None) -> Tensor:
    return _reduce(self, None, False, _mean_dtype(self, dtype))


def mean_dim_meta(self: Tensor, dim: Any, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return _reduce(self, dim, keepdim, _mean_dtype(self, dtype))


def amax_meta(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    dims = [dim] if isinstance(dim, int) else list(dim)
    if self.numel() == 0:
        _zero_numel_check_dims(self, dims, "amax()")
    return _reduce(self, dims, keepdim, self.dtype)


def max_meta(self: Tensor) -> Tensor:
    if self.numel() == 0:
        raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    return meta_tensor((), self.dtype)


def max_dim_meta(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    dim = shapes.wrap_dim(dim, self.dim())
    _zero_numel_check_dims(self, [dim], "max()")
    if self.dtype.is_complex:
        raise RuntimeError("max(): does not support complex input")
    shape = shapes.reduction_shape(tuple(self.shape), (dim,), keepdim)
    return meta_tensor(shape, self.dtype), meta_tensor(shape, _dt.int64)


def argmax_meta(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if self.dtype.is_complex:
        raise RuntimeError("argmax(): does not support complex input")
    if self.dtype is _dt.bool_:
        raise RuntimeError("argmax(): does not support bool input")
    if dim is not None:
        _zero_numel_check_dims(self, [shapes.wrap_dim(dim, self.dim())], "argmax()")
    elif self.numel() == 0:
        raise IndexError("argmax(): Expected reduction dim to be specified for input.numel() == 0.")
    return _reduce(self, None if dim is None else [dim], keepdim, _dt.int64)


# --- linear algebra, softmax, losses ---------------------------------------------------------------
def mm_meta(self: Tensor, mat2: Tensor) -> Tensor:
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, m) = self.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if self.dtype is not mat2.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_tm(self.dtype)} != {_tm(mat2.dtype)}")
    return meta_tensor((n, m), self.dtype)


def bmm_meta(self: Tensor, mat2: Tensor) -> Tensor:
    if self.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, rows, contraction = self.shape
    if mat2.shape[0] != bs or mat2.shape[1] != contraction:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {contraction}] "
            f"but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {_st(self.dtype)} but found {_st(mat2.dtype)}")
    return meta_tensor((bs, rows, mat2.shape[2]), mat2.dtype)


def _softmax_common(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
    dim = shapes.wrap_dim(dim, self.dim())
    if half_to_float:  # the CPU kernels refuse it (both say "softmax") after the meta function
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    return meta_tensor(tuple(self.shape), self.dtype)


def _softmax_meta(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
    return _softmax_common(self, dim, half_to_float)


def _log_softmax_meta(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
    return _softmax_common(self, dim, half_to_float)


def mse_loss_meta(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    _device_check((self, target))
    common = _dt.result_type(self, target)
    loss = _tensor_iterator([_promoted(self, common), _promoted(target, common)], common)
    if reduction == 0:
        return loss
    if reduction == 1:
        return mean_meta(loss)
    if reduction == 2:
        return sum_meta(loss)
    raise RuntimeError(
        "reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT FAILED at "
        '"aten/src/ATen/native/Loss.cpp":97, please report a bug to PyTorch. ')


def nll_loss_forward_meta(self: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                          ignore_index: int) -> tuple[Tensor, Tensor]:
    if not 0 < self.dim() <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if self.dim() == 1 and target.dim() == 1 and target.shape[0] != 1:
        raise ValueError(f"For unbatched input, target should have size 1 (got {target.shape[0]})")
    no_batch_dim = self.dim() == 1 and target.dim() == 0
    if not no_batch_dim and self.shape[0] != target.shape[0]:
        raise RuntimeError(
            f"size mismatch (got input: {list(self.shape)}, target: {list(target.shape)})")
    n_classes = self.shape[-1]
    if weight is not None and not (weight.dim() == 1 and weight.numel() == n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes but "
            f"got weight tensor of shape: {list(weight.shape)}")
    if target.dtype not in (_dt.int64, _dt.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_st(target.dtype)}")
    shape = (self.shape[0],) if reduction == 0 and self.dim() == 2 else ()
    return meta_tensor(shape, self.dtype), meta_tensor((), self.dtype)


# --- joining -------------------------------------------------------------------------------------
def _suggest_memory_format(t: Tensor) -> str:
    shape, strides, _ = _geometry(t)
    if shapes.is_channels_last_strides(shape, strides):
        return "channels_last" if len(shape) == 4 else "channels_last_3d"
    return "contiguous"


def cat_meta(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    _device_check(tensors)

    def skipped(t: Tensor) -> bool:  # legacy: 1-d empty tensors are ignored
        return t.dim() == 1 and t.numel() == 0

    for t in tensors:  # legacy_cat_wrap_dim
        if not skipped(t):
            dim = shapes.wrap_dim(dim, t.dim())
            break
    fmt = None
    for t in tensors:  # cat_compute_output_memory_format
        f = _suggest_memory_format(t)
        if f == "contiguous" or (fmt is not None and fmt != f):
            fmt = "contiguous"
            break
        fmt = f
    dtype = _dt.result_type(*tensors)  # every tensor counts, skipped empty ones included
    valid = next((t for t in tensors if not skipped(t)), None)
    if valid is None:
        return meta_tensor((0,), dtype)
    size_at_dim = 0
    for i, t in enumerate(tensors):
        if skipped(t):
            continue
        if t.dim() != valid.dim():
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {valid.dim()} and {t.dim()}")
        for d in range(valid.dim()):
            if d != dim and valid.shape[d] != t.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{valid.shape[d]} but got size {t.shape[d]} for tensor number {i} in the list.")
        size_at_dim += t.shape[dim]
    shape = list(valid.shape)
    shape[dim] = size_at_dim
    return meta_tensor(tuple(shape), dtype, _strides_for(tuple(shape), fmt))


def stack_meta(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]
    wrapped = shapes.wrap_dim(dim, first.dim() + 1)
    for i, t in enumerate(tensors[1:], start=1):
        if tuple(t.shape) != tuple(first.shape):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}")
    if wrapped < first.dim():  # cat, then view with the new dimension split out
        out = cat_meta(tensors, wrapped)
        sizes = list(first.shape)
        sizes.insert(wrapped, len(tensors))
        return view_meta(out, sizes)
    return cat_meta([view_meta(t, [*t.shape, 1]) for t in tensors], wrapped)


# --- copies ----------------------------------------------------------------------------------------


def fill__scalar_meta(self: Tensor, value: Any) -> Tensor:
    _check_fits(_scalar(value), self.dtype)
    return self


def zero__meta(self: Tensor) -> Tensor:
    return self


# --- views ---------------------------------------------------------------------------------------
def _type_string(t: Tensor) -> str:
    return f"Meta{_st(t.dtype)}Type"


def view_meta(self: Tensor, size: Any) -> Tensor:
    shape = shapes.infer_view_shape(_size_list(size), self.numel())
    strides = shapes.view_strides(tuple(self.shape), self.stride(), shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _view(self, shape, strides, self.storage_offset())


def _reshape_alias_meta(self: Tensor, size: Any, stride: Any) -> Tensor:
    return _view(self, _size_list(size), _size_list(stride), self.storage_offset())


















_INT64_MAX = 2**63 - 1




def as_strided_meta(self: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    size, stride = _size_list(size), _size_list(stride)
    offset = self.storage_offset() if storage_offset is None else storage_offset
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    itemsize = self.element_size()
    needed = shapes.storage_nbytes(size, stride, itemsize)
    available = _storage_nbytes(self)
    if needed and needed + offset * itemsize > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {itemsize} requiring a storage size of {needed + offset * itemsize} are out "
            f"of bounds for storage of size {available}")
    return _view(self, size, stride, offset)




# --- factories -------------------------------------------------------------------------------------
def _factory_dtype(dtype: Any) -> _dt.dtype:
    return _dt.get_default_dtype() if dtype is None else _dt_of(dtype)


def empty_memory_format_meta(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                             pin_memory: Any = None, memory_format: Any = None) -> Tensor:
    shape = _size_list(size)
    _check_sizes(shape)
    fmt = _memory_format(memory_format)
    if fmt == "preserve":
        raise RuntimeError("unsupported memory format Preserve")
    return meta_tensor(shape, _factory_dtype(dtype), _strides_for(shape, fmt))


def empty_strided_meta(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                       device: Any = None, pin_memory: Any = None) -> Tensor:
    shape, strides = _size_list(size), _size_list(stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of "
                           f"strides ({len(strides)})")
    _check_sizes(shape)
    if any(s < 0 for s in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(strides)}")
    return meta_tensor(shape, _factory_dtype(dtype), strides)


def _filled(size: Any, dtype: _dt.dtype) -> Tensor:
    shape = _size_list(size)
    _check_sizes(shape)
    return meta_tensor(shape, dtype)


def zeros_meta(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None) -> Tensor:
    if any(s < 0 for s in _size_list(size)):  # zeros checks before it allocates, in its own words
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(size, _factory_dtype(dtype))


def ones_meta(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None) -> Tensor:
    return _filled(size, _factory_dtype(dtype))


def full_meta(size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Tensor:
    value = _scalar(fill_value)
    if dtype is None:  # infer_full_options: the value's kind picks the dtype
        d = _scalar_dtype(value)
        d = d if d in (_dt.bool_, _dt.int64) else _factory_default_for(d)
    else:
        d = _dt_of(dtype)
    out = _filled(size, d)
    _check_fits(value, d)
    return out


def _factory_default_for(d: _dt.dtype) -> _dt.dtype:
    default = _dt.get_default_dtype()
    if d.is_complex:
        return _dt.complex128 if default is _dt.float64 else _dt.complex64
    return default


def arange_start_step_meta(start: Any, end: Any, step: Any = 1, *, dtype: Any = None,
                           layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    start, end, step = (_real(_scalar(v)) for v in (start, end, step))
    if dtype is None:  # bool counts as integral
        d = _dt.int64 if all(isinstance(v, int) for v in (start, end, step)) else _dt.get_default_dtype()
    else:
        d = _dt_of(dtype)
    # the range is checked in double precision first, whatever the dtype
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {float(start):g} -> {float(end):g}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if d is _dt.int64:  # int64 sizes are computed on the truncated values, in integer arithmetic
        xstart, xend, xstep = int(start), int(end), int(step)
        if xstep == 0:
            raise ValueError("step must be nonzero")
        sgn = (xstep > 0) - (xstep < 0)
        size: float = _trunc_div(xend - xstart + xstep - sgn, xstep)
    else:
        size = math.ceil((float(end) - float(start)) / float(step))
    if not 0 <= size <= _INT64_MAX:
        raise RuntimeError("invalid size, possible overflow?")
    return meta_tensor((int(size),), d)


def _real(value: bool | int | float | complex) -> bool | int | float:
    return value.real if isinstance(value, complex) else value


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def linspace_meta(start: Any, end: Any, steps: int, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, pin_memory: Any = None) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = linspace_dtype(_scalar(start), _scalar(end), None if dtype is None else _dt_of(dtype))
    _check_linspace_ends(start, end, steps, d)
    return meta_tensor((steps,), d)


def _check_linspace_ends(start: Any, end: Any, steps: int, d: _dt.dtype) -> None:
    for value in (_scalar(start), _scalar(end))[:min(steps, 2)]:  # the CPU kernel converts start (and end if steps > 1)
        _check_fits(value, d)


def arange_meta(end: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                pin_memory: Any = None) -> Tensor:
    return arange_start_step_meta(0, end, 1, dtype=dtype)


def arange_start_meta(start: Any, end: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                      pin_memory: Any = None) -> Tensor:
    return arange_start_step_meta(start, end, 1, dtype=dtype)


def arange_out_meta(end: Any, *, out: Tensor) -> Tensor:
    return arange_start_out_meta(0, end, 1, out=out)


def arange_start_out_meta(start: Any, end: Any, step: Any = 1, *, out: Tensor) -> Tensor:
    """``arange_out`` on meta: torch's size and checks in ``out``'s dtype, then ``resize_``."""
    size = arange_start_step_meta(start, end, step, dtype=out.dtype).shape[0]
    resize_range_out(out, size, True)
    return out


def linspace_out_meta(start: Any, end: Any, steps: int, *, out: Tensor) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _check_linspace_ends(start, end, steps, out.dtype)
    resize_range_out(out, steps, False)
    return out


def logspace_meta(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, pin_memory: Any = None) -> Tensor:
    """The meta kernel of torch's ref: ``linspace``'s checks and length, in the inferred dtype."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return meta_tensor((steps,), linspace_dtype(_scalar(start), _scalar(end), None if dtype is None else _dt_of(dtype)))


def logspace_out_meta(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Tensor) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    resize_range_out(out, steps, False)
    return out


def eye_m_meta(n: int, m: int, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None) -> Tensor:
    """The meta kernel of ``eye`` as torch's Python one: the checks of ``eye_out``, then an (n, m) tensor."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return meta_tensor((n, m), _factory_dtype(dtype))


def eye_meta(n: int, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return eye_m_meta(n, n, dtype=dtype)


def eye_m_out_meta(n: int, m: int, *, out: Tensor) -> Tensor:
    resize_eye_out(out, n, m)
    return out


def eye_out_meta(n: int, *, out: Tensor) -> Tensor:
    return eye_m_out_meta(n, n, out=out)


def rand_meta(size: Any, *, generator: Any = None, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Tensor:
    return _filled(size, _factory_dtype(dtype))


def randn_meta(size: Any, *, generator: Any = None, dtype: Any = None, layout: Any = None,
               device: Any = None, pin_memory: Any = None) -> Tensor:
    return _filled(size, _factory_dtype(dtype))


def scalar_tensor_meta(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                       pin_memory: Any = None) -> Tensor:
    d = _factory_dtype(dtype)  # the default dtype even for ints and bools, as in torch
    _check_fits(_scalar(s), _dt.float64 if d is _dt.float16 else d)  # Half is filled via double
    return meta_tensor((), d)


# --- the op -> kernel table --------------------------------------------------------------------
def reciprocal_meta(self: Tensor) -> Tensor:
    return _unary_float(self)


def rsub_tensor_meta(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
    return _arith("sub", other, self, alpha)


def rsub_scalar_meta(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return _arith("sub", self, other, alpha)


def fill__tensor_meta(self: Tensor, value: Tensor) -> Tensor:
    if value.dim() != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    return self


def kernel_table() -> dict[str, Any]:
    """Every Meta kernel, keyed by ``name.overload`` as ``Library.impl`` takes it."""
    table: dict[str, Any] = {}
    for name in ("add", "sub", "mul", "div"):
        table.update(_make_arith(name))
    table.update({
        "pow.Tensor_Tensor": pow_tensor_tensor_meta,
        "pow.Tensor_Scalar": pow_tensor_scalar_meta,
        "pow.Scalar": pow_scalar_meta,
        "pow_.Scalar": pow__scalar_meta,
        "pow_.Tensor": pow__tensor_meta,
        "neg": neg_meta, "neg_": neg__meta, "neg.out": neg_out_meta,
        "abs": abs_meta, "abs_": abs__meta, "abs.out": abs_out_meta,
        "relu": relu_meta, "relu_": relu__meta,
    })
    for name in _FLOAT_UNARY:
        table.update(_make_unary_float(name))
    table.update({
        "clamp": clamp_meta, "clamp_": clamp__meta,
        "clamp_min": clamp_min_meta, "clamp_min_": clamp_min__meta,
        "clamp.Tensor": clamp_tensor_meta, "clamp_.Tensor": clamp__tensor_meta,
        "clamp_min.Tensor": clamp_min_tensor_meta, "clamp_min_.Tensor": clamp_min__tensor_meta,
        "clamp_max": clamp_max_meta, "clamp_max_": clamp_max__meta,
        "clamp_max.Tensor": clamp_max_tensor_meta, "clamp_max_.Tensor": clamp_max__tensor_meta,
        "maximum": maximum_meta, "minimum": minimum_meta,
        "div.Tensor_mode": div_tensor_mode_meta, "div.Scalar_mode": div_scalar_mode_meta,
        "div_.Tensor_mode": div__tensor_mode_meta, "div_.Scalar_mode": div__scalar_mode_meta,
        "where.self": where_self_meta,
        "reciprocal": reciprocal_meta, "rsub.Tensor": rsub_tensor_meta, "rsub.Scalar": rsub_scalar_meta,
        "fill_.Tensor": fill__tensor_meta,
    })
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        table.update(_make_comparison(name))
    table.update({
        "sum": sum_meta, "sum.dim_IntList": sum_dim_intlist_meta,
        "mean": mean_meta, "mean.dim": mean_dim_meta,
        "amax": amax_meta, "max": max_meta, "max.dim": max_dim_meta, "argmax": argmax_meta,
        "mm": mm_meta, "bmm": bmm_meta,
        "_softmax": _softmax_meta, "_log_softmax": _log_softmax_meta,
        "mse_loss": mse_loss_meta, "nll_loss_forward": nll_loss_forward_meta,
        "cat": cat_meta, "stack": stack_meta,
        "fill_.Scalar": fill__scalar_meta, "zero_": zero__meta,
        "view": view_meta, "_unsafe_view": view_meta, "_reshape_alias": _reshape_alias_meta,
        "as_strided": as_strided_meta,
        "empty.memory_format": empty_memory_format_meta, "empty_strided": empty_strided_meta,
        "zeros": zeros_meta, "ones": ones_meta, "full": full_meta,
        "arange.start_step": arange_start_step_meta, "linspace": linspace_meta,
        "arange": arange_meta, "arange.start": arange_start_meta, "arange.out": arange_out_meta,
        "arange.start_out": arange_start_out_meta, "linspace.out": linspace_out_meta,
        "eye": eye_meta, "eye.m": eye_m_meta, "eye.out": eye_out_meta, "eye.m_out": eye_m_out_meta,
        "logspace": logspace_meta, "logspace.out": logspace_out_meta,
        "rand": rand_meta, "randn": randn_meta, "scalar_tensor": scalar_tensor_meta,
    })
    return table
