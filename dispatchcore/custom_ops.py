"""High-level custom operators: ``custom_op``, ``infer_schema``, ``CustomOpDef`` and ``opcheck``.

Mirrors ``torch/_library/custom_ops.py`` (``CustomOpDef`` and the kernels it registers),
``torch/_library/infer_schema.py``, ``torch/_library/autograd.py`` (``make_autograd_impl``),
``torch/_library/fake_impl.py`` (the Meta kernel and ``get_ctx``) and ``torch/library.py``'s
``opcheck``. Everything is built on the public ``Library`` API, so the tables come out as torch's:

* the kernel: ``CompositeExplicitAutograd`` (``[default backend kernel]`` on every backend) when no
  ``device_types`` is given, else one ``[kernel]`` per device type's backend key;
* ``Meta``: the fake implementation (``register_fake``), a trivial one for mutating ops that return
  nothing, or torch's error when there is none;
* ``Autograd``: a generated ``autograd.Function`` (``GeneratedBackwardFor_<ns>_<name>_<overload>``)
  whose backward is ``register_autograd``'s, or torch's error when there is none;
* ``ADInplaceOrView``, for ops that mutate an argument: bumps its version counter, then
  redispatches below, so ``x._version`` moves as in torch.

Invariant: a ``CustomOpDef`` owns one ``Library``; defining the same name again destroys the old
definition first (torch's ``get_library_allowing_overwrite``), so nothing of it stays registered.

Example:
    >>> import dispatchcore as dc
    >>> from dispatchcore import Tensor
    >>> @dc.library.custom_op("doc_co::twice", mutates_args=())
    ... def twice(x: Tensor) -> Tensor:
    ...     return x * 2
    >>> twice(dc.tensor([1.0, 2.0]))
    tensor([2., 4.])
    >>> print(twice._opoverload.schema)
    doc_co::twice(Tensor x) -> Tensor
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Sequence
from types import UnionType
from typing import Any

import numpy as np

from ._library import Library, _parse_namespace
from .dtypes import device as _device_cls
from .dtypes import dtype as _dtype_cls
from .keyset import AFTER_ADINPLACEORVIEW, AFTER_AUTOGRAD
from .tensor import Tensor
from .tls import AutoDispatchBelowAutograd
from .tls import per_thread as _pt

__all__ = ["CustomOpDef", "custom_op", "get_ctx", "infer_schema", "opcheck", "register_autograd",
           "register_fake", "register_kernel", "register_torch_dispatch"]

# --- infer_schema ------------------------------------------------------------------------------------
Number = int | float | bool  # torch.types.Number: the ``Scalar`` schema type

_SCALARS: dict[Any, str] = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str",
                            Number: "Scalar", _dtype_cls: "ScalarType", _device_cls: "Device"}
_LISTABLE = (Tensor, int, float, bool, Number)
_NO_OPTIONAL_LIST = (Tensor,)  # Tensor[]? is not a parameter type torch infers; Tensor?[] is


def _param_types() -> dict[Any, str]:
    """Annotation -> schema type, as torch's ``SUPPORTED_PARAM_TYPES`` (typing spellings included)."""
    out: dict[Any, str] = {}
    for py, name in _SCALARS.items():
        out[py] = name
        out[typing.Optional[py]] = name + "?"  # noqa: UP045 - the spelling users write is a key too
        if py in _LISTABLE:
            for seq in (typing.Sequence, typing.List, Sequence, list):  # noqa: UP006
                out[seq[py]] = name + "[]"  # type: ignore[index]
                if py not in _NO_OPTIONAL_LIST:
                    out[typing.Optional[seq[py]]] = name + "[]?"  # type: ignore[index]  # noqa: UP045
    for seq in (typing.Sequence, typing.List, Sequence, list):  # noqa: UP006
        out[seq[typing.Optional[Tensor]]] = "Tensor?[]"  # type: ignore[index]  # noqa: UP045
    return out


def _return_types() -> dict[Any, str]:
    out: dict[Any, str] = {py: name for py, name in _SCALARS.items() if py not in (str, _device_cls)}
    for seq in (typing.Sequence, typing.List, Sequence, list):  # noqa: UP006
        out[seq[Tensor]] = "Tensor[]"  # type: ignore[index]
    return out


SUPPORTED_PARAM_TYPES = _param_types()
# what a string annotation may name without importing it (torch: "assumed to be torch.*" / typing.*)
_ANNOTATION_NAMES = {"Tensor": Tensor, "dtype": _dtype_cls, "device": _device_cls, "Optional": typing.Optional,
                     "List": typing.List, "Sequence": typing.Sequence, "Union": typing.Union}  # noqa: UP006
SUPPORTED_RETURN_TYPES = _return_types()


def _normalize(annotation: Any) -> Any:
    """``X | None`` and ``Optional[X]`` as one key (the ``|`` spelling makes a ``UnionType``)."""
    if isinstance(annotation, UnionType):
        return typing.Union[annotation.__args__]  # noqa: UP007
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is not None and args and any(isinstance(a, UnionType) for a in args):
        return origin[tuple(_normalize(a) for a in args)]  # list[int | None] -> list[Optional[int]]
    return annotation


def _default_repr(value: Any) -> str | None:
    if value is None or isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, (str, _device_cls)):
        return f'"{value}"'
    if isinstance(value, _dtype_cls):
        return str(value).rpartition(".")[2]
    return None


def infer_schema(prototype_function: Callable[..., Any], /, *, mutates_args: str | Iterable[str],
                 op_name: str | None = None) -> str:
    """The schema of ``prototype_function`` read from its type hints (``torch.library.infer_schema``).

    ``int`` becomes ``SymInt``, ``X | None`` ``X?``, ``list[X]`` ``X[]``; the arguments named in
    ``mutates_args`` (or every Tensor, for ``"unknown"``) get a write annotation ``Tensor(a<i>!)``
    with ``i`` their position. Unsupported annotations raise torch's ``ValueError``.

    Example:
        >>> from dispatchcore import Tensor
        >>> def f(x: Tensor, n: int, scale: float = 1.0, out: Tensor | None = None) -> Tensor: ...
        >>> infer_schema(f, mutates_args=())
        '(Tensor x, SymInt n, float scale=1.0, Tensor? out=None) -> Tensor'
        >>> def g(x: Tensor, y: Tensor) -> None: ...
        >>> infer_schema(g, mutates_args={"y"}, op_name="g_")
        'g_(Tensor x, Tensor(a1!) y) -> ()'
    """
    sig = inspect.signature(prototype_function)

    def error(what: str) -> typing.NoReturn:
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(annotation: Any) -> Any:
        """A string annotation (``from __future__ import annotations``) evaluated in the function's globals."""
        if not isinstance(annotation, str):
            return annotation
        names = {**_ANNOTATION_NAMES, **getattr(prototype_function, "__globals__", {})}
        try:
            return eval(annotation, names)  # noqa: S307 - what typing.get_type_hints does too
        except Exception as e:
            error(f"Unsupported type annotation {annotation}. It is not a type. ({type(e).__name__}: {e}). If you "
                  "are using 'from __future__ import annotations', note that annotations are evaluated lazily as "
                  "strings; make sure all types referenced in annotations are importable at module scope, not "
                  "only inside a local function.")

    if isinstance(mutates_args, str):
        if mutates_args != "unknown":
            raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                             "mutated or the string 'unknown'. ")
        mutated: tuple[str, ...] | None = None
    else:
        mutated = tuple(mutates_args)
    params, seen, kwarg_only = [], set(), False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not kwarg_only:
            params.append("*")
            kwarg_only = True
        if param.annotation is param.empty:
            error(f"Parameter {name} must have a type annotation.")
        schema_type = SUPPORTED_PARAM_TYPES.get(_normalize(resolve(param.annotation)))
        if schema_type is None:
            error(f"Parameter {name} has unsupported type {param.annotation}. "
                  f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
        if mutated is None or name in mutated:
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
            elif mutated is not None:
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                      "mutated")
        seen.add(name)
        if param.default is param.empty:
            params.append(f"{schema_type} {name}")
        else:
            default = _default_repr(param.default)
            if default is None:
                error(f"Parameter {name} has an unsupported default value type {type(param.default)}. "
                      "Please file an issue on GitHub so we can prioritize this.")
            params.append(f"{schema_type} {name}={default}")
    if mutated is not None and set(mutated) - seen:
        error(f"{set(mutated) - seen} in mutates_args were not found in the custom op's signature. "
              "mutates_args should contain the names of all args that the custom op mutates, or just the "
              "string 'unknown' if you don't know.")
    returns = _returns(sig.return_annotation, resolve(sig.return_annotation), error)
    return f"{op_name or ''}({', '.join(params)}) -> {returns}"


def _returns(annotation: Any, hint: Any, error: Callable[[str], typing.NoReturn]) -> str:
    if annotation is inspect.Signature.empty:
        error("No return type annotation was provided. Please add one.")
    if hint is None or hint is type(None):
        return "()"
    hint = _normalize(hint)
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) == 0 or (len(args) == 2 and args[1] is Ellipsis):
            error(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
        names = []
        for arg in args:
            if arg not in SUPPORTED_RETURN_TYPES:
                error(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
            names.append(SUPPORTED_RETURN_TYPES[arg])
        return f"({', '.join(names)})"
    if hint not in SUPPORTED_RETURN_TYPES:
        error(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
    return SUPPORTED_RETURN_TYPES[hint]


# --- get_ctx: what a fake implementation may ask ---------------------------------------------------
class _MetaCtx:
    """The ctx a fake implementation gets when it runs as the op's Meta kernel (no FakeTensorMode)."""

    def __init__(self, op: CustomOpDef) -> None:
        self._op = op

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None) -> int:  # noqa: A002 - torch's names
        raise RuntimeError(
            f"{self._op._qualname} ({self._op._source}): You're trying to run this operator with meta Tensors "
            "(as opposed to FakeTensors), but this operator may return an output Tensor with data-dependent "
            "shape. Meta Tensors don't support operators with outputs that have data-dependent shapes but "
            "FakeTensors do. If your operator does not return an output with data-dependent shape, make sure "
            "the FakeTensor and/or meta kernel does not call torch.library.get_ctx(). Otherwise, please use "
            "FakeTensors.")


class FakeImplCtx:
    """The ctx a fake implementation gets under ``FakeTensorMode`` (``torch._library.fake_impl.FakeImplCtx``).

    ``new_dynamic_size()`` needs a ``ShapeEnv`` for its unbacked size; dispatchcore has none, so
    it raises ``DynamicOutputShapeException`` naming the operator, as torch does without one.
    """

    def __init__(self, _fake_mode: Any, _op: Any) -> None:
        self._fake_mode = _fake_mode
        self._shape_env = _fake_mode.shape_env
        self._op = _op

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None) -> int:  # noqa: A002 - torch's names
        from .fake_tensor import DynamicOutputShapeException

        raise DynamicOutputShapeException(self._op)


_CTX: list[Any] = [None]  # the ctx of the fake implementation running now; None outside one


def get_ctx() -> Any:
    """The ctx of the running fake implementation (``torch.library.get_ctx``); None outside one.

    Under ``FakeTensorMode`` it is a ``FakeImplCtx``; when the implementation runs as the Meta
    kernel on meta tensors, ``get_ctx().new_dynamic_size()`` raises torch's error instead: meta
    tensors cannot stand for an output whose shape depends on the data.
    """
    return _CTX[0]


# --- CustomOpDef ------------------------------------------------------------------------------------
_OPDEFS: dict[str, CustomOpDef] = {}


class _Metadata:
    """What the generated Function's forward needs besides the op's own arguments."""

    __slots__ = ("bits", "kwargs")

    def __init__(self, bits: int, kwargs: dict[str, Any]) -> None:
        self.bits = bits
        self.kwargs = kwargs


def _is_tensor_like(value: Any) -> bool:
    return isinstance(value, Tensor) or (isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value))


def _requires_grad(args: Sequence[Any]) -> bool:
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                return True
        elif isinstance(a, (list, tuple)) and any(isinstance(v, Tensor) and v._requires_grad for v in a):
            return True
    return False


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Tensor)]
    return []


def _storage(t: Tensor) -> Any:
    """The object that owns ``t``'s memory: the root of its ndarray's ``base`` chain (torch: its Storage)."""
    data = t._data
    base = getattr(data, "base", None)
    while base is not None:
        data, base = base, getattr(base, "base", None)
    return data


class CustomOpDef:
    """An operator made by ``custom_op``: call it like a function; extend it with the ``register_*`` methods.

    ``_opoverload`` is the ``OperatorHandle`` (``dispatchcore.ops.<ns>.<name>.default``).

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore import Tensor
        >>> @dc.library.custom_op("doc_co::mysin", mutates_args=(), device_types="cpu")
        ... def mysin(x: Tensor) -> Tensor:
        ...     return dc.tensor(x.numpy().copy()).sin()
        >>> mysin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(),
        ...                         setup_context=lambda ctx, inputs, output: ctx.save_for_backward(*inputs))
        >>> x = dc.tensor([0.0, 1.0], requires_grad=True)
        >>> y = mysin(x)
        >>> type(y.grad_fn).__name__
        'GeneratedBackwardFor_doc_co_mysin_defaultBackward'
        >>> y.sum().backward()
        >>> x.grad
        tensor([1.0000, 0.5403])
    """

    _lib: Library
    _opoverload: Any  # the OperatorHandle

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable[..., Any]) -> None:
        self._namespace, self._name = namespace, name
        self._qualname = f"{namespace}::{name}"
        self._schema = schema
        self._init_fn = fn
        code = getattr(fn, "__code__", None)
        self._source = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "unknown"
        self._backend_fns: dict[str | None, Callable[..., Any]] = {}
        self._disabled_kernel: set[str | None] = set()
        self._abstract_fn: Callable[..., Any] | None = None
        self._setup_context_fn: Callable[..., Any] | None = None
        self._backward_fn: Callable[..., Any] | None = None
        self._torch_dispatch_fns: dict[type, Callable[..., Any]] = {}
        old = _OPDEFS.pop(self._qualname, None)
        if old is not None:  # torch's get_library_allowing_overwrite: a new definition replaces the old
            old._lib.destroy()
        self._lib = Library(namespace, "FRAGMENT")
        try:
            self._register_to_dispatcher()
        except BaseException:
            self._lib.destroy()  # nothing of a failed definition stays registered
            raise
        _OPDEFS[self._qualname] = self
        if old is not None:  # as in torch, the replaced op's handle calls the new definition
            old._opoverload = self._opoverload

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def _destroy(self) -> None:
        """Unregister the operator (torch's ``CustomOpDef._destroy``): its Library goes, and every table with it."""
        if _OPDEFS.get(self._qualname) is self:
            del _OPDEFS[self._qualname]
        self._lib.destroy()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    # --- what the definition registers -----------------------------------------------------------
    def _register_to_dispatcher(self) -> None:
        self._lib.define(self._name + self._schema)
        from .dispatcher import find_op

        self._opoverload = op = find_op(self._qualname)
        schema = op.schema
        assert schema is not None
        if any(a.kwarg_only and a.dispatch_kind is not None for a in schema.arguments):
            raise NotImplementedError("custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {self._name}{self._schema}")
        self._lib.impl(self._name, self._fake_kernel, "Meta")
        self._lib.impl(self._name, _make_autograd_impl(op, self), "Autograd", with_keyset=True, _raw_keyset=True)
        if schema.is_mutable:
            self._lib.impl(self._name, self._inplace_or_view_kernel(), "ADInplaceOrView", with_keyset=True,
                           _raw_keyset=True)

    def _fake_kernel(self, *args: Any, **kwargs: Any) -> Any:
        fn = self._abstract_fn
        if fn is None:
            schema = self._opoverload.schema
            if schema is not None and schema.is_mutable and not schema.returns:
                return None  # torch's trivial fake impl: a mutating op that returns nothing
            raise RuntimeError(
                f"There was no fake impl registered for {self}. This is necessary for torch.compile/export/fx "
                f"tracing to work. Please use `{getattr(self._init_fn, '__name__', self._name)}.register_fake` "
                "to add an fake impl.")
        previous, _CTX[0] = _CTX[0], _MetaCtx(self)
        try:
            return fn(*args, **kwargs)
        finally:
            _CTX[0] = previous

    def _inplace_or_view_kernel(self) -> Callable[..., Any]:
        op = self._opoverload
        schema = op.schema
        assert schema is not None
        positions = tuple(i for i, a in enumerate(schema.arguments) if a.is_write and not a.kwarg_only)
        names = tuple(a.name for a in schema.arguments if a.is_write and a.kwarg_only)

        def adinplaceorview_impl(bits: int, *args: Any, **kwargs: Any) -> Any:
            for value in [args[i] for i in positions if i < len(args)] + [kwargs[n] for n in names if n in kwargs]:
                for t in _tensors(value):
                    if t._vc is not None:
                        t._vc[0] += 1  # increment_version
            return op.redispatch(bits & AFTER_ADINPLACEORVIEW, *args, **kwargs)

        return adinplaceorview_impl

    # --- the user's registrations -----------------------------------------------------------------
    def register_kernel(self, device_types: str | Sequence[str] | None,
                        fn: Callable[..., Any] | None = None) -> Any:
        """Register ``fn`` as the implementation for ``device_types`` (None: every device).

        ``None`` registers at CompositeExplicitAutograd, a device type at its backend key. Each
        call of the kernel checks torch's rule that no output aliases an input or another output.
        """
        def inner(fn: Callable[..., Any]) -> Callable[..., Any]:
            types = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)
            for device_type in types:
                if device_type not in self._backend_fns:
                    key = "CompositeExplicitAutograd" if device_type is None else device_type
                    self._lib.impl(self._name, self._backend_impl(device_type), key) if device_type is None \
                        else _impl_device(self._lib, self._name, self._backend_impl(device_type), key)
                self._backend_fns[device_type] = fn
            return fn

        return inner if fn is None else inner(fn)

    def _backend_impl(self, device_type: str | None) -> Callable[..., Any]:
        op = self._opoverload
        schema = op.schema
        assert schema is not None
        is_view = any(r.alias_info is not None for r in schema.returns)

        def backend_impl(*args: Any, **kwargs: Any) -> Any:
            fn = self._init_fn if device_type in self._disabled_kernel else self._backend_fns[device_type]
            result = fn(*args, **kwargs)
            if not is_view:
                _check_aliasing(self, fn, args, kwargs, result)
            return result

        backend_impl.__qualname__ = f"{self._name}[{device_type or 'default'}]"
        return backend_impl

    def register_fake(self, fn: Callable[..., Any], /) -> Callable[..., Any]:
        """Register the fake implementation: output metadata from input metadata (the ``Meta`` kernel)."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward: Callable[..., Any], /, *,
                          setup_context: Callable[..., Any] | None = None) -> None:
        """Make the op differentiable with ``backward(ctx, *grads)`` and ``setup_context(ctx, inputs, output)``.

        ``setup_context`` runs after the forward; ``backward`` returns one gradient per input (None
        for the non-Tensor ones).
        """
        schema = self._opoverload.schema
        if schema is not None and (schema.is_mutable or any(r.alias_info is not None for r in schema.returns)):
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self} with schema {schema}. "
                "Please create a functional operator and register an autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_torch_dispatch(self, torch_dispatch_class: type, fn: Callable[..., Any] | None = None, /) -> Any:
        """What a tensor subclass or a dispatch mode does with this op, without editing either.

        ``fn(cls_or_mode, func, types, args, kwargs)`` runs where the Python key would call the
        class's ``__torch_dispatch__`` (or the mode's); removed with the op (``_destroy``).
        """
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if torch_dispatch_class not in self._torch_dispatch_fns:
                def inner(*args: Any, **kwargs: Any) -> Any:
                    return self._torch_dispatch_fns[torch_dispatch_class](*args, **kwargs)

                _register_rule(self._lib, self._qualname, torch_dispatch_class, inner)
            self._torch_dispatch_fns[torch_dispatch_class] = fn
            return fn

        return register if fn is None else register(fn)

    def set_kernel_enabled(self, device_type: str, enabled: bool = True) -> Any:
        """A context manager that turns the ``device_type`` kernel off (the decorated function runs instead)."""
        import contextlib

        @contextlib.contextmanager
        def switch() -> Any:
            was_disabled = device_type in self._disabled_kernel
            if enabled:
                self._disabled_kernel.discard(device_type)
            else:
                self._disabled_kernel.add(device_type)
            try:
                yield
            finally:
                if was_disabled:
                    self._disabled_kernel.add(device_type)
                else:
                    self._disabled_kernel.discard(device_type)

        return switch()


def _impl_device(lib: Library, name: str, kernel: Callable[..., Any], device_type: str) -> None:
    from ._library import _device_type_to_key

    lib.impl(name, kernel, _device_type_to_key(device_type))


def _check_aliasing(opdef: CustomOpDef, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                    result: Any) -> None:
    """``_c_check_aliasing_constraint``: no output shares storage with an input or another output."""
    outputs = _tensors(result) if not isinstance(result, tuple) else [t for r in result for t in _tensors(r)]
    if not outputs:
        return
    seen = {id(_storage(t)) for a in (*args, *kwargs.values()) for t in _tensors(a)}
    for out in outputs:
        storage = id(_storage(out))
        if storage in seen:
            raise RuntimeError(
                f"{opdef._name} (with implementation in {inspect.getmodule(fn)}): The output of this custom "
                "operator (1) must not also be an input to this custom operator and (2) may not alias any inputs "
                "to this custom operator or other returns. The most common way to trigger this error is if we "
                "have y = custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
                "offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
                "return y.")
        seen.add(storage)


def _make_autograd_impl(op: Any, info: CustomOpDef) -> Callable[..., Any]:
    """The ``Autograd`` kernel: a generated Function when an input requires grad, else a plain redispatch."""
    from .autograd.function import Function

    schema = op.schema
    defaults = [(i, a.default) for i, a in enumerate(schema.arguments) if not a.kwarg_only and a.has_default]
    n_positional = len([a for a in schema.arguments if not a.kwarg_only])

    def run_below(args: tuple[Any, ...], meta: _Metadata) -> Any:
        with AutoDispatchBelowAutograd():
            return op.redispatch(meta.bits & AFTER_AUTOGRAD, *args, **meta.kwargs)

    def forward(ctx: Any, *args: Any) -> Any:
        meta = args[-1]
        args = args[:-1]
        result = run_below(args, meta)
        if info._setup_context_fn is not None:
            # the kernel got the positional arguments as called; setup_context sees them all, defaults filled
            inputs = list(args)
            for i, value in defaults:
                if i >= len(inputs):
                    inputs.extend([None] * (i + 1 - len(inputs)))
                    inputs[i] = value
            del inputs[n_positional:]
            if meta.kwargs:
                info._setup_context_fn(ctx=ctx, inputs=tuple(inputs), keyword_only_inputs=meta.kwargs, output=result)
            else:
                info._setup_context_fn(ctx=ctx, inputs=tuple(inputs), output=result)
        return result

    def backward(ctx: Any, *grads: Any) -> Any:
        if info._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula was registered. "
                               "Please use register_autograd to add one.")
        previous = ctx.needs_input_grad
        ctx.needs_input_grad = previous[:-1]
        try:
            result = info._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = previous
        return (*result, None) if isinstance(result, tuple) else (result, None)

    name = f"GeneratedBackwardFor_{info._namespace}_{info._name}_{schema.overload_name or 'default'}"
    generated: Any = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                         "__module__": __name__})

    def autograd_impl(bits: int, *args: Any, **kwargs: Any) -> Any:
        meta = _Metadata(bits, kwargs)
        if _pt.state.autograd[0] and _requires_grad(args):  # grad mode on, an input requires grad
            return generated.apply(*args, meta)
        return run_below(args, meta)

    autograd_impl.__qualname__ = f"{name}.apply"
    return autograd_impl


# --- the decorator and the module-level registrations ----------------------------------------------
def custom_op(name: str, fn: Callable[..., Any] | None = None, /, *, mutates_args: str | Iterable[str],
              device_types: str | Sequence[str] | None = None, schema: str | None = None) -> Any:
    """Turn a Python function into an operator (``torch.library.custom_op``).

    Args:
        name: ``"namespace::name"``.
        fn: the function; omit it to use ``custom_op`` as a decorator.
        mutates_args: the names of the arguments the function writes to (``()`` for none), or
            ``"unknown"`` (every Tensor argument).
        device_types: where the function is the kernel (``"cpu"``, ...); None: every device
            (CompositeExplicitAutograd).
        schema: the schema without the name, instead of the one inferred from the type hints.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore import Tensor
        >>> @dc.library.custom_op("doc_co::inc_", mutates_args={"x"})
        ... def inc_(x: Tensor) -> None:
        ...     x.add_(1)
        >>> x = dc.zeros(2)
        >>> inc_(x)
        >>> x, x._version           # the kernel's add_ and the op's ADInplaceOrView kernel
        (tensor([1., 1.]), 2)
    """
    def inner(fn: Callable[..., Any]) -> CustomOpDef:
        namespace, opname = _parse_namespace(name)
        schema_str = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        result = CustomOpDef(namespace, opname, schema_str, fn)
        if schema is not None:
            expected = set() if isinstance(mutates_args, str) else set(mutates_args)
            written = {a.name for a in result._opoverload.schema.arguments if a.is_write}
            if mutates_args != "unknown" and written != expected:
                result._lib.destroy()
                _OPDEFS.pop(result._qualname, None)
                raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                                 f"`schema={schema}. The schema suggests that the op mutates {written}which "
                                 f"is different from what was provided to us in `mutates_args` ({expected}). "
                                 "Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    return inner if fn is None else inner(fn)


def _opdef_or_op(op: Any, api: str) -> tuple[CustomOpDef | None, Any]:
    if isinstance(op, CustomOpDef):
        return op, op._opoverload
    from .dispatcher import find_op
    from .operator import OperatorHandle

    if isinstance(op, OperatorHandle):
        return _OPDEFS.get(op.qualname.partition(".")[0] if op.qualname.endswith(".default") else op.qualname), op
    if not isinstance(op, str):
        raise ValueError(f"{api}({op}): expected op to be a string, OpOverload or CustomOpDef")
    return _OPDEFS.get(op), find_op(op)


def register_fake(op: Any, fn: Callable[..., Any] | None = None, /, *, lib: Library | None = None) -> Any:
    """Register a fake implementation (``torch.library.register_fake``): the op's ``Meta`` kernel.

    For a ``custom_op`` it is the op's ``register_fake``; for an operator defined with ``Library``
    it registers ``fn`` at ``Meta``.
    """
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        opdef, handle = _opdef_or_op(op, "register_fake")
        if opdef is not None:
            return opdef.register_fake(fn)
        use = lib if lib is not None else _owned_fragment(handle)
        use.impl(handle, fn, "Meta")
        return fn

    return register if fn is None else register(fn)


def register_autograd(op: Any, backward: Callable[..., Any], /, *, setup_context: Callable[..., Any] | None = None,
                      lib: Library | None = None) -> None:
    """Register ``backward`` (and ``setup_context``) for ``op`` (``torch.library.register_autograd``).

    For an operator defined with ``Library`` this registers the generated Function at the
    ``Autograd`` key, exactly as a ``custom_op`` gets it.
    """
    opdef, handle = _opdef_or_op(op, "register_autograd")
    if opdef is not None:
        opdef.register_autograd(backward, setup_context=setup_context)
        return
    schema = handle.schema
    if schema.is_mutable:
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {handle} with schema "
                           f"{schema}. Please create a functional operator and register an autograd formula for that.")
    namespace, rest = _parse_namespace(handle.qualname)
    name, _, overload = rest.partition(".")
    info = CustomOpDef.__new__(CustomOpDef)  # the fields make_autograd_impl reads, for a plain operator
    info._namespace, info._name, info._qualname = namespace, name, handle.qualname
    info._backward_fn, info._setup_context_fn = backward, setup_context
    use = lib if lib is not None else _owned_fragment(handle)
    use.impl(handle, _make_autograd_impl(handle, info), "Autograd", with_keyset=True, _raw_keyset=True)


def _register_rule(lib: Library, qualname: str, cls: type, fn: Callable[..., Any]) -> None:
    """A torch_dispatch rule owned by ``lib``: destroying the Library removes it (torch's handles)."""
    from ._library import RegistrationHandle
    from .subclass import register_torch_dispatch_rule

    lib._handles.append(RegistrationHandle(register_torch_dispatch_rule(qualname, cls, fn),
                                           f"torch_dispatch rule for {qualname}"))


def register_torch_dispatch(op: Any, torch_dispatch_class: type, func: Callable[..., Any] | None = None, /, *,
                            lib: Library | None = None) -> Any:
    """Register what ``torch_dispatch_class`` (a subclass or a mode) does with ``op``.

    ``torch.library.register_torch_dispatch``: ``func(cls_or_mode, func, types, args, kwargs)``
    runs instead of the class's handler for this operator (Note [torch_dispatch rules]).

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore import Tensor
        >>> @dc.library.custom_op("doc_co::halve", mutates_args=())
        ... def halve(x: Tensor) -> Tensor:
        ...     return x / 2
        >>> class Shout(dc.DispatchMode):
        ...     pass
        >>> @dc.library.register_torch_dispatch("doc_co::halve", Shout)
        ... def _(mode, func, types, args, kwargs):
        ...     return func(*args, **kwargs) * 100
        >>> with Shout():
        ...     halve(dc.ones(1))
        tensor([50.])
    """
    opdef, handle = _opdef_or_op(op, "register_torch_dispatch")
    if opdef is not None:
        return opdef.register_torch_dispatch(torch_dispatch_class, func)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _register_rule(lib if lib is not None else _owned_fragment(handle), handle.qualname, torch_dispatch_class, fn)
        return fn

    return register if func is None else register(func)


def register_kernel(op: Any, device_types: str | Sequence[str] | None, func: Callable[..., Any] | None = None,
                    /, *, lib: Library | None = None) -> Any:
    """Register a kernel per device type (``torch.library.register_kernel``)."""
    opdef, handle = _opdef_or_op(op, "register_kernel")
    if opdef is not None:
        return opdef.register_kernel(device_types, func)
    from ._library import impl

    return impl(handle.qualname, "default" if device_types is None else device_types, func, lib=lib)


_FRAGMENTS: list[Library] = []


def _owned_fragment(handle: Any) -> Library:
    lib = Library(handle.qualname.partition("::")[0], "FRAGMENT")
    _FRAGMENTS.append(lib)  # kept for the life of the process, as torch's
    return lib


# --- opcheck ---------------------------------------------------------------------------------------------
DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static")
ALL_TEST_UTILS = DEFAULT_TEST_UTILS  # torch's test_aot_dispatch_dynamic needs symbolic shapes: not modelled


class OpCheckError(Exception):
    """A check of ``opcheck`` failed (``torch.testing._internal.optests.OpCheckError``); ``.failure`` is its error."""

    failure: BaseException


def _clone_tree(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone_tree(v) for v in value)
    return value


def _same(a: Tensor, b: Tensor) -> bool:
    if a.shape != b.shape or a.device.type != "cpu":
        return a.shape == b.shape  # data-less devices: only the metadata can be compared
    return bool(np.array_equal(a._data, b._data, equal_nan=a.dtype.is_floating_point))


def _check_schema(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """What torch's ``SchemaCheckMode`` checks for one call: undeclared mutation and aliasing."""
    schema = op.schema
    before = {a.name: _clone_tree(v) for a, v in _named(schema, args, kwargs)}
    result = op(*args, **kwargs)
    outputs = result if isinstance(result, tuple) else (result,)
    out_tensors = [t for r in outputs for t in _tensors(r)]
    for arg, value in _named(schema, args, kwargs):
        old = before[arg.name]
        for new_t, old_t in zip(_tensors(value), _tensors(old)):
            if not arg.is_write and not _same(new_t, old_t):
                raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was mutated")
            if arg.alias_info is None and any(_storage(o) is _storage(new_t) for o in out_tensors):
                raise RuntimeError(f"Argument {arg.name} is not defined to alias output but was aliasing")


def _named(schema: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
    positional = [a for a in schema.arguments if not a.kwarg_only]
    pairs = list(zip(positional, args))
    pairs += [(a, kwargs[a.name]) for a in schema.arguments if a.name in kwargs]
    return pairs


def _check_autograd_registration(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The ``autograd_registration_check`` of torch, skipped (as opcheck does) when no input requires grad."""
    flat = [t for v in (*args, *kwargs.values()) for t in _tensors(v)]
    if not any(t.requires_grad for t in flat):
        return
    devices = {t.device.type for t in flat}
    key = "AutogradCUDA" if "cuda" in devices else "AutogradCPU"
    if any(op.has_kernel_for_dispatch_key(k) for k in (key, "Autograd", "CompositeImplicitAutograd")):
        return
    from .dispatcher import get_autograd_fallback_mode, set_autograd_fallback_mode

    previous = get_autograd_fallback_mode()
    set_autograd_fallback_mode("nothing")
    try:
        result = op(*args, **kwargs)
    finally:
        set_autograd_fallback_mode(previous)
    ids = {id(t) for t in flat}
    outputs = result if isinstance(result, tuple) else (result,)
    if any(t.requires_grad and id(t) not in ids for r in outputs for t in _tensors(r)):
        raise AssertionError(
            f"{op.qualname.removesuffix('.default') if hasattr(op, 'qualname') else op}: at least one output of "
            "this operator has requires_grad=True but the operator does not have an autograd kernel defined at "
            "an autograd key (e.g. DispatchKey::Autograd). This could mean that you have incorrectly registered "
            "an autograd kernel to a non-Autograd DispatchKey, which may lead to silently incorrect results. If "
            "your operator consists of regular PyTorch operations, consider not using an operator at all or "
            "registering your operator as CompositeImplicitAutograd. If you have an autograd.Function registered "
            "to a backend (CPU/CUDA/XPU) key, the correct location for it is the Autograd key.")


def _check_fake(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The op under ``FakeTensorMode`` against the real kernel: same output shapes, dtypes, strides, devices.

    torch's ``test_faketensor`` (``CrossRefFakeMode``): the inputs become fake copies
    (``FakeTensorMode.from_tensor``), the op runs on them, and each output's metadata must match
    the real run's. torch's mode has a ``ShapeEnv``, whose unbacked sizes match any real size;
    dispatchcore has none, so an op whose fake implementation asks for a data-dependent size
    (``DynamicOutputShapeException``) has nothing to compare and passes.
    """
    from .fake_tensor import DynamicOutputShapeException, FakeTensorMode, MetadataMismatchError

    # torch compares inside a dispatch mode, below autograd: an output requires grad there only
    # when something other than an Autograd kernel recorded it (the requires_grad check below)
    with AutoDispatchBelowAutograd():
        real = op(*_clone_tree(args), **_clone_tree(kwargs))
        mode = FakeTensorMode()
        fake_args = tuple(_fake_tree(mode, a) for a in args)
        fake_kwargs = {k: _fake_tree(mode, v) for k, v in kwargs.items()}
        try:
            with mode:
                fake = op(*fake_args, **fake_kwargs)
        except DynamicOutputShapeException:
            return
    context = f"When comparing the output of {op} on FakeTensor and concrete Tensors, found"
    reals = [t for r in (real if isinstance(real, tuple) else (real,)) for t in _tensors(r)]
    fakes = [t for f in (fake if isinstance(fake, tuple) else (fake,)) for t in _tensors(f)]
    if len(fakes) != len(reals):
        raise AssertionError(f"{context} mismatch in number of returns {len(fakes)} != {len(reals)}")
    for i, (rt, ft) in enumerate(zip(reals, fakes)):
        problem = _metadata_mismatch(rt, ft)
        if problem is not None:  # torch's CrossRefFakeMode words it so
            where = "" if len(reals) == 1 else f" for output[{i}]"
            raise MetadataMismatchError(f"{context} mismatched tensor metadata{where}: {problem}")


def _metadata_mismatch(real: Tensor, fake: Tensor) -> str | None:
    """``_check_fake_real_tensors`` + ``compare_tensor_meta``'s message for the first difference, in their order."""
    if real.requires_grad != fake.requires_grad:
        return ("mismatched requires_grad-ness of outputs. This usually means that you have added autograd "
                "support for your operator at a dispatch key other than Autograd, which will lead to problems")
    if real.storage_offset() != fake.storage_offset():
        return "mismatched storage offset"
    if real.shape != fake.shape:
        return f"Shapes {real.shape} and {fake.shape} are not equal!"
    if real.dtype != fake.dtype:
        return f"Dtypes {real.dtype} and {fake.dtype} are not equal!"
    if real.device != fake.device:
        return f"Devices {real.device} and {fake.device} are not equal!"
    for idx, (n, rs, fs) in enumerate(zip(real.shape, real.stride(), fake.stride())):
        if n > 1 and rs != fs:  # check_significant_strides: dims of size 0 or 1 do not count
            return f"Stride mismatch! Strides are {real.stride()} and {fake.stride()} (mismatched at {idx})!"
    return None


def _fake_tree(mode: Any, value: Any) -> Any:
    if isinstance(value, Tensor):
        return mode.from_tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_fake_tree(mode, v) for v in value)
    return value


def _check_aot_static(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The op and its backward captured as one graph (``make_fx``, fake tracing) and run: eager's results.

    torch's ``test_aot_dispatch_static`` (``aot_autograd_check`` with static shapes): the forward,
    and the gradients of the outputs that require grad (``ones_like`` for each) with respect to
    the inputs that require grad, traced on fake copies of the inputs, must give on the real
    inputs what the op gives eagerly. It fails where the op cannot be traced (no fake impl, a
    backward that does not trace) or the graph computes something else.
    """
    from .autograd import grad as autograd_grad
    from .factories import ones_like
    from .fx import make_fx

    slots: list[tuple[str | None, int]] = [(None, i) for i, a in enumerate(args) if isinstance(a, Tensor)]
    slots += [(k, -1) for k, v in kwargs.items() if isinstance(v, Tensor)]
    leaves = [args[i] if k is None else kwargs[k] for k, i in slots]

    def forward_backward(*tensors: Any) -> tuple[Any, ...]:
        call_args, call_kwargs = list(args), dict(kwargs)
        for (k, i), t in zip(slots, tensors):
            if k is None:
                call_args[i] = t
            else:
                call_kwargs[k] = t
        result = op(*call_args, **call_kwargs)
        outs = [t for r in (result if isinstance(result, tuple) else (result,)) for t in _tensors(r)]
        wrt = [t for t in tensors if t.requires_grad]
        needs = [t for t in outs if t.requires_grad]
        grads = autograd_grad(needs, wrt, [ones_like(t) for t in needs], allow_unused=True) if wrt and needs else ()
        return (*outs, *[g for g in grads if g is not None])

    def fresh() -> list[Tensor]:  # the op may write to its inputs: each run gets its own copies
        return [t.detach().clone().requires_grad_(t.requires_grad) for t in leaves]

    expected = forward_backward(*fresh())
    graph = make_fx(forward_backward, tracing_mode="fake")(*fresh())
    got = graph(*[t.detach() for t in fresh()])
    if len(got) != len(expected):
        raise AssertionError(f"{op}: the captured graph returns {len(got)} tensors, eager {len(expected)}")
    for i, (g, e) in enumerate(zip(got, expected)):
        if tuple(g.shape) != tuple(e.shape) or g.dtype != e.dtype:
            raise AssertionError(f"{op}: result {i} of the captured graph is {g.dtype} {tuple(g.shape)}, "
                                 f"eager's {e.dtype} {tuple(e.shape)}")
        if e.device.type == "cpu" and not np.allclose(g.detach().numpy(), e.detach().numpy(), rtol=1.3e-6,
                                                      atol=1e-5, equal_nan=True):
            raise AssertionError(f"{op}: result {i} of the captured graph differs from eager's")


_CHECKS = {"test_schema": _check_schema, "test_autograd_registration": _check_autograd_registration,
           "test_faketensor": _check_fake, "test_aot_dispatch_static": _check_aot_static}


def opcheck(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
            test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS, raise_exception: bool = True) -> dict[str, Any]:
    """Check that ``op`` is registered correctly on these sample arguments (``torch.library.opcheck``).

    ``test_schema``: no argument changes or is returned unless its schema says so;
    ``test_autograd_registration``: an op whose outputs require grad has an autograd kernel;
    ``test_faketensor``: under ``FakeTensorMode``, on fake copies of the inputs, the op gives the real
    run's output shapes, dtypes, strides and devices.
    ``test_aot_dispatch_static``: the op and its backward, captured as one graph by ``make_fx`` on
    fake inputs, compute eager's results (torch's AOTAutograd check with static shapes; its
    ``test_aot_dispatch_dynamic`` needs symbolic shapes, which dispatchcore does not model).
    Returns ``{check: "SUCCESS" or the exception}``; with ``raise_exception`` the first failure
    raises ``OpCheckError``.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore import Tensor
        >>> @dc.library.custom_op("doc_co::cube", mutates_args=())
        ... def cube(x: Tensor) -> Tensor:
        ...     return x * x * x
        >>> cube.register_fake(lambda x: dc.empty_like(x))
        <function <lambda> at ...>
        >>> opcheck(cube, (dc.randn(3),))  # doctest: +NORMALIZE_WHITESPACE
        {'test_schema': 'SUCCESS', 'test_autograd_registration': 'SUCCESS', 'test_faketensor': 'SUCCESS',
         'test_aot_dispatch_static': 'SUCCESS'}
    """
    handle = op._opoverload if isinstance(op, CustomOpDef) else op
    kwargs = {} if kwargs is None else kwargs
    utils = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    if not set(utils) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{ALL_TEST_UTILS} but it was not")
    results: dict[str, Any] = {}
    for name in utils:
        try:
            _CHECKS[name](handle, args, kwargs)
        except Exception as e:
            results[name] = e
        else:
            results[name] = "SUCCESS"
        failure = results[name]
        if raise_exception and failure != "SUCCESS":  # raised here, so the check's error is not chained
            error = OpCheckError(f"opcheck(op, ...): {name} failed with {failure} (the check's exception, with "
                                 "its traceback, is this error's .failure)")
            error.failure = failure
            raise error
    return results

