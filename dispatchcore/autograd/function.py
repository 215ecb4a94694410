"""Custom autograd ``Function``: forward/backward (or setup_context), the ctx, output wrapping.

Mirrors ``torch/autograd/function.py`` and ``torch/csrc/autograd/custom_function.{h,cpp}``
(spec §9). As in torch, the ctx *is* the graph node: ``MyFn.apply`` creates a
``MyFnBackward`` node, runs ``forward`` with grad mode off, wraps the outputs (§9.3) and saves
tensors with version checks. The ctx speaks both dialects: Python's ``save_for_backward`` /
``saved_tensors`` and C++'s ``get_saved_variables()`` / ``saved_data``. A Function subclass can
also be registered as an operator's Autograd-key kernel (``lib.impl(op, MyFn, "Autograd")``).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from contextvars import ContextVar
from typing import Any

from .grad_mode import _AUTOGRAD_STATE, _autograd_state_set, no_grad
from .graph import Node, SavedTensor, gradient_edge

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]


def _is_tensor(x: Any) -> bool:
    from ..tensor import Tensor

    return isinstance(x, Tensor)


class FunctionCtx:
    """What ``forward``/``setup_context`` and ``backward`` share (``torch.autograd.function.FunctionCtx``).

    Example:
        >>> import dispatchcore as dc
        >>> class Square(dc.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         ctx.saved_data["power"] = 2          # the C++ AutogradContext spelling
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return grad * ctx.saved_data["power"] * x
        >>> x = dc.tensor(3.0, requires_grad=True)
        >>> Square.apply(x).backward()
        >>> x.grad
        tensor(6.)
    """

    def save_for_backward(self, *tensors: Any) -> None:
        """Save tensors (or None) for ``backward``; they are checked for in-place changes."""
        for i, t in enumerate(tensors):
            if t is not None and not _is_tensor(t):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Declare the inputs that ``forward`` modified in place (they must be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Declare outputs that get no gradient (e.g. argmax indices)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` receives None instead of zeros for unused outputs."""
        self.materialize_grads = value

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The tensors given to ``save_for_backward``, version-checked (``ctx.saved_tensors``)."""
        return tuple(s.unpack(self) for s in self._saved_variables)

    def get_saved_variables(self) -> tuple[Any, ...]:
        """C++ ``AutogradContext::get_saved_variables()``: the same as ``saved_tensors``."""
        return self.saved_tensors


class BackwardCFunction(Node, FunctionCtx):
    """Base of the ``<Name>Backward`` node classes that custom Functions create."""

    _function: type[Function]

    def __init__(self) -> None:
        Node.__init__(self, ())
        self.saved_data: dict[str, Any] = {}
        self.needs_input_grad: tuple[bool, ...] = ()
        self.materialize_grads = True
        self._to_save: tuple[Any, ...] = ()
        self._dirty: tuple[Any, ...] = ()
        self._non_differentiable: tuple[Any, ...] = ()
        self._saved_variables: tuple[SavedTensor, ...] = ()
        self._input_shapes: tuple[Any, ...] = ()
        self._output_meta: tuple[Any, ...] = ()

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        fn = self._function
        if self.materialize_grads:
            grads = tuple(_zeros_like_meta(m) if g is None and m is not None else g
                          for g, m in zip(grads, self._output_meta))
        result = fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._input_shapes)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]  # surplus trailing Nones are dropped, as in CppNode
        if len(result) != expected:
            raise RuntimeError(
                f"function {type(self).__name__} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})")
        out = []
        for i, (g, shape) in enumerate(zip(result, self._input_shapes)):
            if g is None:
                out.append(None)
                continue
            if shape is None:
                raise RuntimeError(
                    f"function {type(self).__name__} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable")
            if tuple(g.shape) != shape:
                g = _sum_to_or_raise(g, shape, type(self).__name__, i)
            out.append(g)
        return tuple(out)

    def _release_variables(self) -> None:
        super()._release_variables()
        for saved in self._saved_variables:
            saved.free()


def _zeros_like_meta(meta: tuple[Any, ...]) -> Any:
    from ..factories import zeros

    shape, dtype, device = meta
    return zeros(list(shape), dtype=dtype, device=device)


def _sum_to_or_raise(g: Any, shape: tuple[int, ...], name: str, index: int) -> Any:
    gshape = tuple(g.shape)
    lead = len(gshape) - len(shape)
    ok = lead >= 0 and all(s == 1 or s == gs for s, gs in zip(shape, gshape[lead:]))
    if not ok:
        raise RuntimeError(
            f"Function {name} returned an invalid gradient at index {index} - got {list(gshape)} "
            f"but expected shape compatible with {list(shape)}")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(list(shape))
    return g


class _FunctionMeta(type):
    """Gives every Function subclass its node class, named ``<Name>Backward`` as in torch."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        super().__init__(name, bases, attrs)
        user_class = any(isinstance(b, _FunctionMeta) for b in bases)
        if user_class and "backward" in attrs and "vjp" in attrs:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                "should only implement one of them.")
        if user_class and "vjp" in attrs:
            cls.backward = attrs["vjp"]  # type: ignore[method-assign]
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,), {"_function": cls})


_ACTIVE_FORWARDS: ContextVar[frozenset[Any]] = ContextVar("dispatchcore_active_forwards", default=frozenset())


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations (``torch.autograd.Function``).

    Define static ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` (or ``forward(*args)``
    plus ``setup_context(ctx, inputs, output)``) and call ``apply``. Register the class itself
    as an operator's Autograd kernel with ``lib.impl(name, MyFunction, "Autograd")``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.", DeprecationWarning,
            stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and, when any tensor input requires grad, record a ``<Name>Backward`` node."""
        if kwargs:
            args = tuple(_bind_forward(cls, args, kwargs))
        ctx = cls._backward_cls()
        is_tensor = [_is_tensor(a) for a in args]
        grad_mode = _AUTOGRAD_STATE.get()[0]
        executable = grad_mode and any(t and a._requires_grad for t, a in zip(is_tensor, args))
        ctx.needs_input_grad = tuple(t and a._requires_grad for t, a in zip(is_tensor, args))
        custom_setup = cls.setup_context is not Function.setup_context
        state = _AUTOGRAD_STATE.get()
        _autograd_state_set((False, state[1]))  # forward runs with grad mode off (dispatch TLS untouched)
        try:
            if custom_setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            _autograd_state_set(state)
        return _wrap_outputs(ctx, args, is_tensor, output, executable)

    @classmethod
    def __dispatchcore_kernel_check__(cls, op: Any, key: Any, with_keyset: bool) -> None:
        """Library.impl's registration check: Functions take the op's arguments in order."""

    @classmethod
    def __dispatchcore_as_kernel__(cls, op: Any) -> Any:
        """The Autograd-key kernel for ``op``: ``cls.apply``, guarded against endless re-entry."""

        def function_kernel(*args: Any, **kwargs: Any) -> Any:
            active = _ACTIVE_FORWARDS.get()
            if op in active:
                raise RuntimeError(
                    f"dispatchcore: {op.qualname}'s Autograd kernel {cls.__name__}.apply was "
                    f"re-entered from inside {cls.__name__}.forward. forward called the operator "
                    "again while the autograd keys were still in the thread-local sets, so the call "
                    "dispatched back to this kernel (in PyTorch this recurses until the stack "
                    "overflows). Call the operator inside `with dispatchcore."
                    "AutoDispatchBelowADInplaceOrView():` so that it goes straight to the backend "
                    "kernel.")
            token = _ACTIVE_FORWARDS.set(active | {op})
            try:
                return cls.apply(*args, **kwargs)
            finally:
                _ACTIVE_FORWARDS.reset(token)

        function_kernel.__qualname__ = f"{cls.__qualname__}.apply"
        return function_kernel


@functools.lru_cache(maxsize=256)
def _forward_signature(cls: type) -> inspect.Signature:
    sig = inspect.signature(cls.forward)
    params = list(sig.parameters.values())
    if cls.setup_context is Function.setup_context:
        params = params[1:]  # drop ctx
    return sig.replace(parameters=params)


def _bind_forward(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    bound = _forward_signature(cls).bind(*args, **kwargs)
    bound.apply_defaults()
    return list(bound.args) + list(bound.kwargs.values())


def _wrap_outputs(ctx: BackwardCFunction, inputs: tuple[Any, ...], is_tensor: list[bool],
                  output: Any, executable: bool) -> Any:
    """``_wrap_outputs`` (spec §9.3): attach the node, handle dirty, non-differentiable and aliases."""
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    dirty = ctx._dirty
    non_diff = ctx._non_differentiable
    input_ids = {id(a) for a, t in zip(inputs, is_tensor) if t}
    for d in dirty:
        if id(d) not in input_ids:
            warnings.warn(
                "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that "
                "have been mutated should be passed to ctx.mark_dirty().", UserWarning, stacklevel=3)
    if dirty and not all(any(d is o for o in outputs) for d in dirty):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as output. "
            "The inputs that are modified inplace must all be outputs of the Function.")
    results = []
    for i, out in enumerate(outputs):
        if not _is_tensor(out):
            results.append(out)
            continue
        is_dirty = any(out is d for d in dirty)
        if is_dirty:
            if out._grad_fn is None and out._requires_grad and executable:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            if out._vc is not None:
                out._vc[0] += 1  # get_and_bump_dirty
        differentiable = executable and not any(out is n for n in non_diff) and (
            out.dtype.is_floating_point or out.dtype.is_complex)
        if not differentiable:
            if out._requires_grad and not is_dirty:
                out = out.detach()
            results.append(out)
            continue
        if id(out) in input_ids and not is_dirty:
            out = _view_as(out)  # an input returned as is: a new alias gets the edge
        out._grad_fn = ctx
        out._requires_grad = True
        out._output_nr = i
        results.append(out)
    if executable:
        ctx.next_functions = tuple(gradient_edge(a) if t else (None, 0) for a, t in zip(inputs, is_tensor))
        ctx._input_shapes = tuple(tuple(a.shape) if t else None for a, t in zip(inputs, is_tensor))
        ctx._output_meta = tuple((tuple(o.shape), o.dtype, o.device) if _is_tensor(o) else None
                                 for o in results)
        ctx._num_outputs = len(results)  # type: ignore[attr-defined]
        ctx._saved_variables = tuple(
            SavedTensor(t, is_output=any(t is r for r in results), node=ctx) if t is not None
            else SavedTensor(None)
            for t in ctx._to_save)
    return results[0] if single else tuple(results)


def _view_as(t: Any) -> Any:
    from ..ops import aten

    with no_grad():
        out = aten.alias.default(t)
    return out


def once_differentiable(fn: Any) -> Any:
    """Mark a ``backward`` as not differentiable twice (``torch.autograd.function.once_differentiable``).

    It runs under ``no_grad``; when a double backward is attempted through its results, the
    error ``trying to differentiate twice a function that was marked with @once_differentiable``
    is raised then.
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not _AUTOGRAD_STATE.get()[0]:
            return outputs
        if not any(_is_tensor(a) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        err = _DelayedError("trying to differentiate twice a function that was marked with "
                            "@once_differentiable", tuple(gradient_edge(a) if _is_tensor(a) else (None, 0)
                                                          for a in args))
        wrapped = []
        for o in outs:
            if _is_tensor(o):
                o = o.detach()
                o._grad_fn = err
                o._requires_grad = True
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


class _DelayedError(Node):
    """A node that raises when backward reaches it (``torch::autograd::DelayedError``)."""

    __slots__ = ("_message",)

    def __init__(self, message: str, next_functions: tuple[Any, ...]) -> None:
        super().__init__(next_functions)
        self._message = message

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        raise RuntimeError(self._message)
