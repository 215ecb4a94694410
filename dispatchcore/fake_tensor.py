"""Fake tensors: ``FakeTensorMode`` runs whole programs on metadata only, on any device, CUDA included.

Mirrors ``torch/_subclasses/fake_tensor.py`` (``FakeTensor``, ``FakeTensorMode``,
``FakeTensorConverter``, ``_find_common_device``) and the data-dependent refusals of
``torch/_subclasses/fake_impls.py``. Invariant: a ``FakeTensor`` holds a Meta backend data object
(shape, strides, dtype, no elements) and carries the key set of its *fake* device plus
``Python``/``PythonTLSSnapshot``, so autograd and ADInplaceOrView run above it as for a real
tensor of that device; below the ``Python`` key every operator runs as its Meta kernel (or a
custom op's fake implementation) on meta twins that share the fake tensors' data objects, and the
results are wrapped again on the device torch's rules pick. No GPU and no pycuda are needed.

Literals become fake too: ``tensor(data)`` hands its fresh CPU tensor to ``aten::lift_fresh``,
which the mode answers with a fake tensor (See Note [Literals reach the modes], factories.py).
One with at most one element is a *constant*: the fake keeps a real copy (``.constant``), and an
operator whose fake arguments are all constants runs for real on the copies, so
``dc.tensor(0.5).item()`` gives ``0.5`` (torch's constant propagation, ``CONSTANT_NUMEL_LIMIT``).

Example:
    >>> import dispatchcore as dc
    >>> with FakeTensorMode():
    ...     x = dc.empty(2, 3, device="cuda")
    ...     y = (x @ x.t()).relu()
    >>> y
    FakeTensor(..., device='cuda:0', size=(2, 2))
    >>> dc.dispatch_keys(y)
    DispatchKeySet(CUDA, Python, ADInplaceOrView, AutogradCUDA, AutocastCUDA, PythonTLSSnapshot)
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import factories as _factories
from . import modes as _modes
from ._tensor_str import _format_data
from .dtypes import bool_, get_default_dtype, int64
from .dtypes import device as _device
from .modes import DispatchMode, disable_current_modes
from .subclass import PYTHON_KEYS, repr_suffixes, tree_leaves
from .tensor import Tensor, _device_info, _make_tensor, init_tensor
from .tls import per_thread as _pt

__all__ = [
    "DataDependentOutputException",
    "DynamicOutputShapeException",
    "FakeTensor",
    "FakeTensorConverter",
    "FakeTensorDeviceMismatchError",
    "FakeTensorMode",
    "MetadataMismatchError",
    "UnsupportedFakeTensorException",
    "render_call",
]


# --- errors (torch/_subclasses/fake_tensor.py) ----------------------------------------------------
class MetadataMismatchError(RuntimeError):
    """A fake result's metadata differs from the real one's (``opcheck``'s ``test_faketensor``)."""


class DynamicOutputShapeException(RuntimeError):
    """The output's shape depends on the input's data (``nonzero``, ``masked_select``, ...).

    ``str(e)`` is the operator, as torch's dataclass exception prints it.
    """

    def __init__(self, func: Any) -> None:
        super().__init__(func)
        self.func = func

    def __str__(self) -> str:
        return str(self.func)


class DataDependentOutputException(RuntimeError):
    """The output is the input's data (``item``/``_local_scalar_dense``): a fake tensor has none."""

    def __init__(self, func: Any) -> None:
        super().__init__(func)
        self.func = func

    def __str__(self) -> str:
        return str(self.func)


class UnsupportedFakeTensorException(RuntimeError):
    """A tensor cannot be made fake (torch: sparse layouts, functorch wrappers, ...)."""


class FakeTensorDeviceMismatchError(RuntimeError):
    """Two non-scalar tensors of one call are on different devices (torch's text)."""

    def __init__(self, func: Any, common_device: Any, device: Any) -> None:
        super().__init__("Expected all tensors to be on the same device, but found "
                         f"at least two devices, {common_device} and {device}!")
        self.func = func
        self.common_device = common_device
        self.device = device


# Operators whose output is the input's data (torch's Tag.data_dependent_output and the item /
# _local_scalar_dense fake impls), and those whose output shape is (Tag.dynamic_output_shape,
# for the operators dispatchcore defines; index.Tensor only with a mask, see _dynamic_index).
_DATA_DEPENDENT = frozenset({"aten._local_scalar_dense.default", "aten.item.default"})
_DYNAMIC_OUTPUT_SHAPE = frozenset({"aten.nonzero.default", "aten.nonzero.out", "aten.masked_select.default",
                                   "aten.masked_select.out", "aten.argwhere.default"})
# _find_common_device's exceptions: mixed devices allowed (one of them cpu), a meta right-hand side
# allowed, and the op that skips the 0-dim CPU rule
_MIXED_DEVICE_FNS = frozenset({"aten._foreach_copy.default"})
_META_RHS_MIXED_DEVICE_FNS = frozenset({"aten.add_.Tensor"})
_BYPASS_ZERO_DIM_CPU_FNS = frozenset({"aten.nextafter.default"})
# what tensor(data) calls on its fresh tensor, and make_fx records instead (FakeTensorMode.lift_fns)
_LIFT_FNS = frozenset({"aten.lift_fresh.default", "aten.lift_fresh_copy.default"})
# A fake tensor with at most this many elements keeps a real copy of its value (a constant)
CONSTANT_NUMEL_LIMIT = 1
# Operators that never constant-propagate: Tag.nondeterministic_seeded (their values are random)
# and Tag.inplace_view (the constant would take new geometry the fake tensor does not), for the
# operators dispatchcore defines
_NONDETERMINISTIC_SEEDED = frozenset(
    f"aten.{name}" if "." in name else f"aten.{name}.default" for name in (
        "rand_like", "rand_like.generator", "randperm", "randperm.generator", "randperm.generator_out",
        "native_dropout", "dropout", "bernoulli_.float", "rand", "rand.generator", "randn", "randn.generator",
        "randint", "randint.generator", "randint.low", "randint.low_generator", "normal.float_float", "uniform_",
        "normal_", "random_", "random_.from", "random_.to", "exponential_", "bernoulli", "bernoulli.p",
        "bernoulli_.Tensor", "randint_like", "randint_like.Tensor", "randint_like.low_dtype",
        "randint_like.generator", "randint_like.Tensor_generator", "randint_like.low_generator_dtype",
        "normal.Tensor_float", "normal.float_Tensor", "normal.Tensor_Tensor", "multinomial"))
_INPLACE_VIEW = frozenset({"aten.resize_.default"})


# --- FakeTensor ---------------------------------------------------------------------------------
class FakeTensor(Tensor):
    """A tensor with metadata and no data, on a device it only pretends to be on (``torch FakeTensor``).

    ``fake_device`` is the device it reports (``cuda:0`` needs no GPU), ``fake_mode`` the
    ``FakeTensorMode`` that made it, ``constant`` a real tensor holding its value when the mode
    knows it (a literal of at most one element, and what is computed from such constants only),
    else None. Its key set is a real tensor's on that device plus ``Python``
    and ``PythonTLSSnapshot``, so outside its mode an operator on it reaches
    ``__torch_dispatch__``, which re-enters the mode, as torch does. Elements are never there:
    ``item()`` and ``tolist()`` raise ``DataDependentOutputException``.

    Example:
        >>> import dispatchcore as dc
        >>> mode = FakeTensorMode()
        >>> x = mode.from_tensor(dc.ones(2, 3))
        >>> x, x.fake_mode is mode, x.fake_device
        (FakeTensor(..., size=(2, 3)), True, device(type='cpu'))
        >>> x.sum(0)   # no mode entered: the tensor finds its own
        FakeTensor(..., size=(3,))
    """

    fake_device: _device
    fake_mode: FakeTensorMode
    constant: Tensor | None

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        """Run ``func`` under the fake mode of the first ``FakeTensor`` among the arguments.

        ``NotImplemented`` for other subclasses among ``types``, and while a fake mode is
        already active (it handles the call itself), as torch's ``FakeTensor.__torch_dispatch__``.
        """
        if any(not issubclass(t, FakeTensor) and t is not Tensor for t in types):
            return NotImplemented
        fake_mode = next((t.fake_mode for t in _tensors_in((args, kwargs)) if isinstance(t, FakeTensor)), None)
        if fake_mode is None:
            raise AssertionError("Could not find a FakeTensor in the arguments")
        if _active_fake_mode() is not None:
            return NotImplemented
        with fake_mode:
            return func(*args, **(kwargs or {}))

    def __repr__(self, *args: Any, **kwargs: Any) -> str:
        text = _summary(self, "FakeTensor(", "...", size=True)
        return f"Parameter({text})" if getattr(self, "_is_param", False) else text

    def tolist(self) -> Any:
        """Refused as torch refuses it: the elements are data (``aten._local_scalar_dense``)."""
        from .ops import aten

        return aten._local_scalar_dense.default(self)


def _summary(t: Tensor, prefix: str, body: str, *, size: bool) -> str:
    """``prefix + body`` and the suffixes ``torch._tensor_str._str`` adds (device, size, dtype, grad)."""
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if size:
        suffixes.append(f"size={tuple(t.shape)}")
    dtype = t.dtype
    if size and body == "...":  # no elements printed: only the default float dtype goes unnamed
        default = get_default_dtype()
    else:
        default = bool_ if dtype is bool_ else int64 if dtype._category == 1 else get_default_dtype()
    return prefix + ", ".join([body, *suffixes, *repr_suffixes(t, default)]) + ")"


def _render_arg(value: Any) -> str:
    """An argument as ``torch._utils.render_call`` prints it (``printoptions(threshold=0, edgeitems=0)``)."""
    if not isinstance(value, Tensor) or isinstance(value, FakeTensor):
        return repr(value)
    if type(value) is not Tensor or value.device.type == "meta":
        return repr(value)
    if value.numel() == 0:
        return _summary(value, "tensor(", "[]", size=tuple(value.shape) != (0,))
    if value.dim() == 0:
        return _summary(value, "tensor(", _format_data(value._cpu_data(), len("tensor(")), size=True)
    return _summary(value, "tensor(", "[...]", size=True)


def render_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """``aten.add.Tensor(FakeTensor(..., size=(2,)), tensor([...], size=(2,)))``: a call, as torch names it."""
    parts = [_render_arg(a) for a in args] + [f"{k}={_render_arg(v)}" for k, v in kwargs.items()]
    return f"{func}({', '.join(parts)})"


# --- FakeTensorConverter ------------------------------------------------------------------------
class FakeTensorConverter:
    """Real tensors to fake ones, memoized: the same real tensor always maps to the same fake.

    Mirrors ``torch._subclasses.fake_tensor.FakeTensorConverter``. The memo holds a weak
    reference to the real tensor and forgets it when the tensor dies. A view's base is converted
    first and the fake view made over the fake base's data (``_base``, shared version counter),
    so views keep their relationships.
    """

    def __init__(self) -> None:
        self.tensor_memo: dict[int, tuple[weakref.ref[Tensor], FakeTensor]] = {}
        # the storage of a constant -> (that storage, the fakes whose constant lives in it)
        self.constant_storage_mapping: dict[int, tuple[Any, list[weakref.ref[FakeTensor]]]] = {}

    def from_real_tensor(self, fake_mode: FakeTensorMode, t: Tensor, make_constant: bool = False) -> FakeTensor:
        """The fake tensor of ``t`` under ``fake_mode``: metadata, device and ``requires_grad`` kept.

        With ``make_constant`` the new fake keeps ``t`` itself as its ``constant`` (torch's
        ``make_constant=True``); a tensor converted before gives its memoized fake unchanged.
        """
        entry = self.tensor_memo.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        if not isinstance(t, Tensor):
            raise UnsupportedFakeTensorException(f"cannot make a FakeTensor of {type(t).__name__}")
        if make_constant and _is_parameter(t):
            raise AssertionError("make_constant must be False for nn.Parameter")
        base = t._base
        with disable_current_modes():
            if base is not None:
                fake_base = self.from_real_tensor(fake_mode, base)
                meta_base = _meta_twin(fake_base)
            else:
                fake_base = None
                meta_base = _storage_twin(t)
            from .ops import aten

            meta = aten.as_strided.default(meta_base, list(t.shape), list(t.stride()), t.storage_offset())
        out = _wrap_fake(fake_mode, meta, _normalize_device(t.device))
        if fake_base is not None:
            out._base = fake_base
            out._vc = fake_base._vc
        if t.requires_grad:
            out._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
        if getattr(t, "_is_param", False) or _is_parameter(t):
            out._is_param = True  # type: ignore[attr-defined]
        key, memo = id(t), self.tensor_memo

        def forget(_: weakref.ref[Tensor], key: int = key) -> None:
            memo.pop(key, None)

        memo[key] = (weakref.ref(t, forget), out)
        if make_constant:
            out.constant = t
            self.add_constant_storage_mapping(out)
        return out

    def add_constant_storage_mapping(self, fake: FakeTensor) -> None:
        """Remember that ``fake.constant`` lives in its storage, to forget it when the storage is written."""
        if not isinstance(fake, FakeTensor) or fake.constant is None:
            raise AssertionError("fake_tensor must be a FakeTensor with a constant")
        key, storage = _storage_of(fake.constant)
        self.constant_storage_mapping.setdefault(key, (storage, []))[1].append(weakref.ref(fake))

    def invalidate_constant_aliases(self, tensor: Tensor) -> None:
        """Forget the constant of every fake whose constant shares ``tensor``'s storage (a real tensor)."""
        if isinstance(tensor, FakeTensor):
            raise AssertionError("Expected a real tensor, not a FakeTensor")
        entry = self.constant_storage_mapping.pop(_storage_of(tensor)[0], None)
        for ref in entry[1] if entry is not None else ():
            fake = ref()
            if fake is not None:
                fake.constant = None


def _storage_of(t: Tensor) -> tuple[int, Any]:
    """A real tensor's storage, and its identity: the ndarray at the root of its data (or its base's data)."""
    data = t._data
    if isinstance(data, np.ndarray):
        while isinstance(data.base, np.ndarray):
            data = data.base
        return id(data), data
    root = t._base if t._base is not None else t
    return id(root._data), root._data


def _is_parameter(t: Tensor) -> bool:
    from .nn.parameter import Parameter

    return type(t) is Parameter


def _storage_twin(t: Tensor) -> Tensor:
    """A contiguous meta tensor with as many elements as ``t``'s geometry reaches (its storage)."""
    from .ops import aten

    needed = t.storage_offset() + 1 + sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride()))
    if t.numel() == 0:
        needed = t.storage_offset()
    return aten.empty.memory_format([needed], dtype=t.dtype, device="meta")


_META, _META_BITS, _META_INFERENCE_BITS = _device_info("meta")


def _meta_twin(fake: Tensor) -> Tensor:
    """A plain meta tensor over ``fake``'s data object and version counter (the kernels' view of it)."""
    return init_tensor(_make_tensor(), fake._data, _META, _META_INFERENCE_BITS if fake._vc is None else _META_BITS,
                       fake._vc)


def _wrap_fake(mode: FakeTensorMode, meta: Tensor, device: _device) -> FakeTensor:
    """A new ``FakeTensor`` over ``meta``'s data, reporting ``device`` (``FakeTensor.__new__``)."""
    _, bits, inference_bits = _device_info(device)
    t: Any = init_tensor(object.__new__(FakeTensor), meta._data, device,
                         (inference_bits if meta._vc is None else bits) | PYTHON_KEYS, meta._vc)
    t.fake_device = device
    t.fake_mode = mode
    t.constant = None
    return t  # type: ignore[no-any-return]


def _normalize_device(dev: Any) -> _device:
    """``FakeTensor._normalize_fake_device``: an accelerator without an index is its device 0."""
    dev = dev if isinstance(dev, _device) else _device(dev)
    if dev.index is None and dev.type not in ("cpu", "meta"):
        return _device(dev.type, 0)
    return dev


# --- FakeTensorMode -----------------------------------------------------------------------------
def _active_fake_mode() -> FakeTensorMode | None:
    """The fake mode on this thread's mode stack (torch's ``_get_dispatch_mode(FAKE)``), or None."""
    stack = _pt.state.modes
    while stack is not None:
        if isinstance(stack[0], FakeTensorMode):
            return stack[0]
        stack = stack[1]
    return None


def _restack(modes: list[DispatchMode]) -> None:
    """Make ``modes`` (outermost first) this thread's stack, switching the Python keys as push/pop do."""
    while _pt.state.modes is not None:
        _modes._pop_mode(_pt.state.modes[0])
    for mode in modes:
        _modes._push_mode(mode)


class FakeTensorMode(DispatchMode):
    """Run operators on fake tensors: metadata through the Meta kernels, no data, any device.

    Mirrors ``torch._subclasses.fake_tensor.FakeTensorMode`` without a ``ShapeEnv`` (static
    shapes only). Inside it, factories make ``FakeTensor``s (``dc.empty(2, device="cuda")``
    needs no GPU) and every operator on fake tensors runs its Meta kernel, or a custom op's fake
    implementation with ``get_ctx()`` a ``FakeImplCtx``; the output's device follows torch's
    ``_find_common_device`` (0-dim CPU tensors mix with others, two other devices raise
    ``FakeTensorDeviceMismatchError``). Real tensors among the arguments raise torch's
    AssertionError unless ``allow_non_fake_inputs``, which converts them (memoized). Operators
    whose result is data raise ``DataDependentOutputException``; those whose result shape
    depends on data, ``DynamicOutputShapeException``.

    Tensor literals become fake tensors: ``tensor(data)`` calls ``aten::lift_fresh`` on the
    real tensor it filled, and the mode converts it (``device="cuda"`` gives a CPU fake moved by
    a ``_to_copy``: while the mode is entered, ``only_lift_cpu_tensors`` is on). A literal of at
    most one element is a constant (``FakeTensor.constant``): an operator whose fake arguments
    are all constants runs for real on them, and its results stay constants while they have at
    most one element, so ``item()`` of one is its value; writing a constant with a value that is
    not one forgets it, in every fake that shares its storage.

    Like torch's (an "infra" mode), it sits beneath every other mode however it is entered, so
    a ``LoggingMode`` or ``make_fx``'s proxy mode sees each call first, with fake tensors; entering
    it while it is active does nothing. Autograd sits above the ``Python`` key, so ``backward()``
    inside the mode runs the backward formulas on fake tensors too.

    Args:
        allow_non_fake_inputs: convert real tensor arguments instead of refusing them.
        allow_meta: accepted for torch's signature (meta fake tensors are always allowed here).
        shape_env: must be None: dispatchcore has no symbolic shapes.

    Example:
        >>> import dispatchcore as dc
        >>> with FakeTensorMode():
        ...     x = dc.ones(4, 3, device="cuda")
        ...     x.sum().item()
        Traceback (most recent call last):
          ...
        dispatchcore.fake_tensor.DataDependentOutputException: aten._local_scalar_dense.default
    """

    def __init__(self, *, allow_non_fake_inputs: bool = False, allow_meta: bool = True,
                 shape_env: Any = None) -> None:
        if shape_env is not None:
            raise NotImplementedError("FakeTensorMode(shape_env=...): dispatchcore has no ShapeEnv "
                                      "(symbolic shapes); fake tensors have static shapes only")
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.allow_meta = allow_meta
        self.shape_env = None
        self.fake_tensor_converter = FakeTensorConverter()
        self.enter_stack: list[tuple[bool, FakeTensorMode | None, bool | None]] = []
        self.lift_fns = _LIFT_FNS

    def __repr__(self) -> str:
        return object.__repr__(self)

    @property
    def avoid_device_init(self) -> bool:
        """Whether to keep accelerators untouched: literals are lifted on CPU, constants stay off them.

        torch asks ``torch.cuda.is_available()``; dispatchcore asks whether CUDA is initialized
        already, as asking whether it is available would load the driver.
        """
        from . import cuda

        return not cuda.is_initialized()

    # --- entering: beneath every other mode (torch keeps it in the FAKE infra-mode slot) -----------
    def __enter__(self) -> FakeTensorMode:
        previous_only_cpu = None
        if self.avoid_device_init:  # See Note [Literals reach the modes] (factories.py)
            previous_only_cpu = _factories.only_lift_cpu_tensors()
            _factories.set_only_lift_cpu_tensors(True)
        previous = _active_fake_mode()
        if previous is self:
            self.enter_stack.append((False, None, previous_only_cpu))
            return self
        others = [m for m in _modes.dispatch_mode_stack() if m is not previous]
        _restack([self, *others])
        self.enter_stack.append((True, previous, previous_only_cpu))
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        live, previous, previous_only_cpu = self.enter_stack.pop()
        if not live:
            return
        others = [m for m in _modes.dispatch_mode_stack() if m is not self]
        _restack(([previous] if previous is not None else []) + others)
        if previous_only_cpu is not None:
            _factories.set_only_lift_cpu_tensors(previous_only_cpu)

    def may_turn_const(self, t: Tensor) -> bool:
        """Whether a real result may become a constant: small, not fake, not on meta."""
        return t.numel() <= CONSTANT_NUMEL_LIMIT and not self.is_our_fake(t) and t.device.type != "meta"

    def is_our_fake(self, t: Any) -> bool:
        """Whether ``t`` is a ``FakeTensor`` of this mode."""
        return isinstance(t, FakeTensor) and t.fake_mode is self

    def from_tensor(self, tensor: Tensor, *, static_shapes: bool | None = None) -> FakeTensor:
        """The fake tensor standing for ``tensor`` (memoized: the same tensor gives the same fake).

        Example:
            >>> import dispatchcore as dc
            >>> mode = FakeTensorMode()
            >>> x = dc.ones(4, 2)
            >>> v = x[1:]
            >>> fx, fv = mode.from_tensor(x), mode.from_tensor(v)
            >>> mode.from_tensor(x) is fx, fv._base is fx, fv.storage_offset()
            (True, True, 2)
        """
        if self.is_our_fake(tensor):
            return tensor  # type: ignore[return-value]
        return self.fake_tensor_converter.from_real_tensor(self, tensor)

    # --- the call -------------------------------------------------------------------------------
    def __dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                     kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        # other subclasses get their turn (_check_for_subclass); Parameter is a plain tensor here
        if any(not issubclass(t, FakeTensor) and t is not Tensor and not _is_parameter_type(t) for t in types):
            return NotImplemented
        name = str(func)
        converter = self.fake_tensor_converter
        has_fakes = any(self.is_our_fake(t) for t in _tensors_in((args, kwargs)))
        is_lift = name in _LIFT_FNS
        # no constant may move to an accelerator that is to stay untouched
        avoiding_device_init = (name == "aten._to_copy.default" and kwargs.get("device") is not None
                                and _as_device(kwargs["device"]).type != "cpu" and self.avoid_device_init)
        skip_const = avoiding_device_init or (name == "aten._to_copy.default" and bool(args)
                                              and isinstance(args[0], Tensor) and args[0].device.type == "meta")
        schema = func.schema
        if not has_fakes and (is_lift or (schema is not None and schema.numbers_as_tensors and not skip_const)):
            # a literal being lifted (or real tensors only, for the ops numbers may stand in for):
            # its value is known, and small enough to keep
            out = func(*args, **kwargs)
            if out.__class__ is Tensor and self.may_turn_const(out):
                with disable_current_modes():
                    out = _clone(out)
                return converter.from_real_tensor(self, out, make_constant=True)
        if is_lift and len(args) == 1 and not kwargs and args[0].__class__ is Tensor:
            return converter.from_real_tensor(self, args[0])
        args, kwargs = self._validate(func, args, kwargs)
        fakes: list[FakeTensor] = [t for t in _tensors_in((args, kwargs)) if isinstance(t, FakeTensor)]
        if (fakes and all(t.constant is not None for t in fakes) and name not in _NONDETERMINISTIC_SEEDED
                and name not in _INPLACE_VIEW and not avoiding_device_init):
            out = self._run_on_constants(func, args, kwargs)
            out_tensors = list(_tensors_in(out))
            if all(self.may_turn_const(t) for t in out_tensors):
                return _map_tensors(lambda t: converter.from_real_tensor(self, t, make_constant=True), out)
            for t in out_tensors:  # not kept: forget the constants the results may alias
                converter.invalidate_constant_aliases(t)
        self._invalidate_written_to_constants(func, fakes, args, kwargs)
        if name in _DATA_DEPENDENT:
            raise DataDependentOutputException(func)
        if name in _DYNAMIC_OUTPUT_SHAPE or _dynamic_index(name, args):
            raise DynamicOutputShapeException(aten_nonzero() if name == "aten.index.Tensor" else func)
        fake_impl = _custom_fake_impl(func)
        if fake_impl is not None:
            from .custom_ops import _CTX, FakeImplCtx

            previous, _CTX[0] = _CTX[0], FakeImplCtx(self, func)
            try:
                with self:
                    return fake_impl(*args, **kwargs)
            finally:
                _CTX[0] = previous
        return self._run_meta_kernel(func, args, kwargs)

    def _run_on_constants(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``func`` computed for real on the constants of its fake arguments (no mode sees it)."""
        def constant(t: Any) -> Any:
            return t.constant if self.is_our_fake(t) else t

        with disable_current_modes():
            return func(*_map_tensors(constant, args), **{k: _map_tensors(constant, v) for k, v in kwargs.items()})

    def _invalidate_written_to_constants(self, func: Any, fakes: list[FakeTensor], args: tuple[Any, ...],
                                         kwargs: dict[str, Any]) -> None:
        """An operator that writes a constant with values not all constant: forget it, and its aliases."""
        schema = func.schema
        if schema is None or not schema.is_mutable or all(t.constant is None for t in fakes):
            return
        positional = [a for a in schema.arguments if not a.kwarg_only]
        bound = {a.name: v for a, v in zip(positional, args)}
        bound.update(kwargs)
        for argument in schema.arguments:
            value = bound.get(argument.name)
            if argument.is_write and isinstance(value, FakeTensor) and value.constant is not None:
                self.fake_tensor_converter.invalidate_constant_aliases(value.constant)

    def _validate(self, func: Any, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Refuse or convert the tensors that are not this mode's fakes (``validate_and_convert_non_fake_tensors``)."""
        def check(t: Any) -> Any:
            if not isinstance(t, Tensor) or self.is_our_fake(t):
                return t
            if not self.allow_non_fake_inputs:
                if isinstance(t, FakeTensor):
                    raise AssertionError(f"Mixing fake modes NYI x.fake_mode={t.fake_mode} vs self={self}")
                raise AssertionError(
                    "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with "
                    f"'allow_non_fake_inputs'. Found in {render_call(func, args, kwargs)}")
            return self.from_tensor(t)

        if all(not isinstance(t, Tensor) or self.is_our_fake(t) for t in _tensors_in((args, kwargs))):
            return args, kwargs
        return _map_tensors(check, args), {k: _map_tensors(check, v) for k, v in kwargs.items()}

    def _run_meta_kernel(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``in_kernel_invocation_manager`` + ``wrap_meta_outputs_with_default_device_logic``."""
        twins: dict[int, tuple[Tensor, FakeTensor]] = {}  # id(meta twin) -> (twin, its fake)

        def to_meta(t: Any) -> Any:
            if not isinstance(t, FakeTensor):
                return t
            m = _meta_twin(t)
            twins[id(m)] = (m, t)
            return m

        device, meta_args, meta_kwargs = _meta_device_call(func, _map_tensors(to_meta, args),
                                                           {k: _map_tensors(to_meta, v) for k, v in kwargs.items()})
        out = func(*meta_args, **meta_kwargs)
        for m, fake in twins.values():  # in-place and out= kernels may give their output new geometry
            if m._data is not fake._data:
                fake._data = m._data
        flat_fakes = [t for t in _tensors_in((args, kwargs)) if isinstance(t, FakeTensor)]
        common: list[_device] = []

        def wrap(e: Any) -> Any:
            if not isinstance(e, Tensor):
                return e
            if not common:
                common.append(_find_common_device(func, flat_fakes))
            twin = twins.get(id(e))
            if twin is not None and twin[0] is e:
                return twin[1]
            return _wrap_fake(self, e, device if device is not None else common[0])

        return _map_tensors(wrap, out)


def _clone(t: Tensor) -> Tensor:
    from .ops import aten

    return aten.clone.default(t)


def _as_device(value: Any) -> _device:
    return value if isinstance(value, _device) else _device(value)


def _is_parameter_type(cls: type) -> bool:
    from .nn.parameter import Parameter

    return cls is Parameter


def aten_nonzero() -> Any:
    """``aten.nonzero.default``: what a boolean mask in ``index.Tensor`` needs (torch's meta_index calls it)."""
    from .ops import aten

    return aten.nonzero.default


def _dynamic_index(name: str, args: tuple[Any, ...]) -> bool:
    """``index.Tensor`` with a boolean or byte mask among the indices: its shape is data."""
    if name != "aten.index.Tensor" or len(args) < 2:
        return False
    return any(isinstance(i, Tensor) and i.dtype.name in ("bool", "uint8") for i in args[1] or ())


def _custom_fake_impl(func: Any) -> Any:
    """The ``register_fake`` implementation of a ``custom_op``, which torch runs on the fake tensors."""
    from .custom_ops import _OPDEFS

    qualname = func.qualname
    opdef = _OPDEFS.get(qualname.removesuffix(".default") if qualname.endswith(".default") else qualname)
    if opdef is None or opdef._opoverload is not func:
        return None
    return opdef._abstract_fn


def _meta_device_call(func: Any, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The ``device`` argument (normalized, or None) and the call with it replaced by ``meta``."""
    schema = func.schema
    if schema is None:
        return None, args, kwargs
    positional = [a for a in schema.arguments if not a.kwarg_only]
    for i, arg in enumerate(positional):
        if arg.name == "device" and i < len(args) and args[i] is not None:
            return _normalize_device(args[i]), (*args[:i], "meta", *args[i + 1:]), kwargs
    if kwargs.get("device") is not None and any(a.name == "device" for a in schema.arguments):
        return _normalize_device(kwargs["device"]), args, {**kwargs, "device": "meta"}
    return None, args, kwargs


def _find_common_device(func: Any, fakes: list[FakeTensor]) -> _device:
    """``FakeTensor._find_common_device``: the device of a call's outputs, or torch's mismatch error.

    The first fake tensor sets it; a 0-dim CPU tensor defers to any other device, and is
    overridden by one; any other disagreement raises ``FakeTensorDeviceMismatchError``. No fake
    tensor at all (a factory): ``cpu``.
    """
    name = str(func)
    common: _device | None = None
    is_cpu_zero_dim = False
    bypass = name in _BYPASS_ZERO_DIM_CPU_FNS
    for t in fakes:
        t_cpu_zero_dim = t.device.type == "cpu" and t.dim() == 0
        if common is None:
            common, is_cpu_zero_dim = t.device, t_cpu_zero_dim
            continue
        if t.device == common:
            if is_cpu_zero_dim:
                is_cpu_zero_dim = t_cpu_zero_dim
            continue
        if t_cpu_zero_dim and not bypass:
            continue
        if is_cpu_zero_dim and not bypass:
            common, is_cpu_zero_dim = t.device, t_cpu_zero_dim
            continue
        if name in _MIXED_DEVICE_FNS and "cpu" in (common.type, t.device.type):
            continue
        if name in _META_RHS_MIXED_DEVICE_FNS and "meta" in (common.type, t.device.type):
            continue
        raise FakeTensorDeviceMismatchError(func, common, t.device)
    return common if common is not None else _device("cpu")


# --- pytree helpers -----------------------------------------------------------------------------
def _tensors_in(value: Any) -> Iterator[Tensor]:
    return tree_leaves(value, Tensor)


def _map_tensors(fn: Any, value: Any) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if type(value) in (tuple, list):
        return type(value)(_map_tensors(fn, v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a return_types named tuple
        return type(value)(*(_map_tensors(fn, v) for v in value))
    return value

