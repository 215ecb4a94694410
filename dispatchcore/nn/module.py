"""``Module``: the base class of layers, with parameters, buffers, submodules, hooks and state dicts.

Mirrors ``torch/nn/modules/module.py``. Invariant: a name lives in at most one of ``_parameters``,
``_buffers``, ``_modules`` and the instance ``__dict__``; registration order is iteration order,
and every traversal (``named_parameters``, ``state_dict``, ``repr``) walks that order as torch does.
"""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..autograd import no_grad
from ..dtypes import dtype as _dtype
from ..tensor import Tensor, retire_accumulator
from ..utils.hooks import BackwardHook, RemovableHandle
from .parameter import Buffer, Parameter, plain_detached

__all__ = ["Module", "RemovableHandle"]

_TENSOR_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


def typename(obj: Any) -> str:
    """``torch.typename``: ``'dispatchcore.FloatTensor'`` for a tensor, the qualified type name otherwise."""
    if isinstance(obj, Tensor):
        return "dispatchcore." + _TENSOR_TYPE_NAMES.get(str(obj.dtype).split(".")[-1], "Tensor")
    module = type(obj).__module__
    qualname = type(obj).__qualname__
    return qualname if module in ("builtins", None) else f"{module}.{qualname}"


def _set_data(t: Tensor, value: Tensor) -> None:
    """``t.data = value`` (``Tensor::set_data``): ``t`` keeps its identity and autograd state, takes ``value``'s data.

    ``Module.to`` converts parameters this way, as torch does, so references held elsewhere (an
    optimizer's) see the converted values.
    """
    retire_accumulator(t, value)  # a converted parameter's gradients follow its new dtype
    t._data = value._data
    t._device = value._device
    t._key_bits = value._key_bits


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not expect."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _WrappedHook:
    """A hook called with its module first, held by weak reference (``torch.nn.modules.module._WrappedHook``)."""

    def __init__(self, hook: Callable[..., Any], module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)


class _HookedCall:
    """One hooked module call's arguments and result, as ``_call_impl``'s closure keeps them.

    The hooks may replace the arguments; ``always_call`` forward hooks still run, with what the
    call had reached, when the forward raises (``called``: those that ran already).
    """

    __slots__ = ("args", "kwargs", "result", "called")

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.args = args
        self.kwargs = kwargs
        self.result: Any = None
        self.called: set[int] = set()


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class of every layer (``torch.nn.Module``).

    Subclasses call ``super().__init__()`` and assign parameters, buffers and submodules as
    attributes; ``forward`` holds the computation and calling the module runs the hooks around it.

    Example:
        >>> import dispatchcore as dc
        >>> class Scale(Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = Parameter(dc.ones(2))
        ...     def forward(self, x):
        ...         return x * self.w
        >>> m = Scale()
        >>> [name for name, _ in m.named_parameters()]
        ['w']
        >>> m(dc.tensor([1.0, 2.0]))
        tensor([1., 2.], grad_fn=<MulBackward0>)
    """

    _version: int = 1
    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]
    _is_full_backward_hook: bool | None  # None: no backward hook yet; then full (True) or the legacy kind

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__qualname__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__qualname__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})

    def forward(self, *input: Any) -> Any:
        """The computation; every subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # --- registration ------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (e.g. BatchNorm's ``running_mean``).

        ``persistent=False`` keeps it out of ``state_dict``.

        Raises:
            AttributeError: before ``Module.__init__``. KeyError: for a bad or taken name.
            TypeError: for a value that is neither a tensor nor ``None``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = plain_detached(tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or ``None``, a declared but absent one) under ``name``.

        Raises:
            AttributeError: before ``Module.__init__``. KeyError: for a bad or taken name.
            TypeError: for a value that is not a ``Parameter``, or a non-leaf one.
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method.".replace("'{name}'", f"'{name}'"))
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (``None`` declares an absent one).

        Raises:
            TypeError: for a non-Module or a non-string name. KeyError: for a bad or taken name.
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path (``"net.0"``); ``""`` is ``self``.

        Raises:
            AttributeError: naming the first missing part, as torch does.
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path (``"0.weight"``)."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    # --- attribute protocol --------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: the registries are searched in torch's order.
        d = self.__dict__
        try:  # a parameter (``self.weight`` in every forward): one lookup instead of the loop's two
            return d["_parameters"][name]
        except KeyError:
            pass
        for registry in ("_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets: Any) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            remove_from(self.__dict__, self._parameters, self._modules, self._non_persistent_buffers_set)
            self.register_buffer(name, value, persistent)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__()) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(key for key in set(keys) if not key[0].isdigit())

    # --- traversal -----------------------------------------------------------------------------
    def _named_members(self, get_members: Callable[[Module], Any], prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse
                   else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs, each shared parameter once (unless ``remove_duplicate=False``).

        Example:
            >>> from dispatchcore import nn
            >>> [n for n, _ in nn.Sequential(nn.Linear(2, 2)).named_parameters()]
            ['0.weight', '0.bias']
        """
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module and (with ``recurse``) its descendants."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs, persistent or not."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module and (with ``recurse``) its descendants."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for each direct child, each module object once."""
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for ``self`` (name ``prefix``) and every descendant, pre-order."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """``self`` and every descendant, each once."""
        for _, module in self.named_modules():
            yield module

    # --- modes, grads, conversion ----------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and its descendants; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter; returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to ``None`` (the default) or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                grad = p.grad
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every descendant (children first, recursively) and then on ``self``."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        for module in self.children():
            module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                _set_data(param, fn(param))
                if param.grad is not None:
                    _set_data(param.grad, fn(param.grad))
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Convert floating-point parameters and buffers to a dtype (``module.to(dispatchcore.float64)``).

        Only CPU exists here, so a device argument must name ``cpu``; integer buffers keep their dtype.
        """
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, _dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
            else:
                device = arg
        if device is not None and str(device).split(":")[0] != "cpu":
            raise RuntimeError(f"dispatchcore.nn.Module.to: only the cpu device exists here, got {device}")
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            if dtype is not None and t.is_floating_point():
                return t.to(dtype)
            return t

        return self._apply(convert)

    def float(self) -> Module:
        """Floating-point parameters and buffers to ``float32``."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Floating-point parameters and buffers to ``float64``."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def cpu(self) -> Module:
        """Everything lives on the CPU already; returns ``self``."""
        return self

    # --- hooks and call ----------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Run ``hook(module, args)`` (or ``hook(module, args, kwargs)``) before ``forward``.

        A non-``None`` result replaces the arguments (a lone value is wrapped in a tuple).
        """
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Run ``hook(module, args, output)`` after ``forward``; a non-``None`` result replaces the output."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Run ``hook(module, grad_output)`` when the gradients of the outputs are computed.

        A non-``None`` result (a tuple as long as ``grad_output``) replaces them for the rest of
        the backward pass. As in torch, the module's Tensor inputs and outputs then pass through
        ``BackwardHookFunction``, an identity whose node is ``BackwardHookFunctionBackward``
        (``dispatchcore.utils.hooks``).

        Example:
            >>> import dispatchcore as dc
            >>> lin = dc.nn.Linear(2, 1)
            >>> _ = lin.register_full_backward_pre_hook(lambda m, g: print("grad_output", list(g[0].shape)))
            >>> lin(dc.ones(3, 2, requires_grad=True)).sum().backward()
            grad_output [3, 1]
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Run ``hook(module, grad_input, grad_output)`` when the gradients of the inputs are computed.

        ``grad_input`` has one entry per positional argument (``None`` for a non-Tensor and for
        an input that does not require grad); a non-``None`` result replaces it.

        Example:
            >>> import dispatchcore as dc
            >>> lin = dc.nn.Linear(2, 1)
            >>> _ = lin.register_full_backward_hook(lambda m, gi, go: print(list(gi[0].shape), list(go[0].shape)))
            >>> lin(dc.ones(3, 2, requires_grad=True)).sum().backward()
            [3, 2] [3, 1]
        """
        return self._add_backward_hook(hook, full=True, prepend=prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The deprecated module backward hook, on the output's ``grad_fn`` (prefer the full one).

        ``hook(module, grad_input, grad_output)`` sees the gradients of that one node, which are
        the module's only when its forward is a single autograd node; torch warns otherwise, and
        so does this.
        """
        return self._add_backward_hook(hook, full=False)

    def _add_backward_hook(self, hook: Callable[..., Any], *, full: bool, prepend: bool = False) -> RemovableHandle:
        """Register a backward hook of one kind; a module holds hooks of one kind only, as in torch."""
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a "
                               "single Module. Please use only one of them.")
        self._is_full_backward_hook = full
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        call = _HookedCall(args, kwargs)
        try:
            return self._call_with_hooks(call)
        except Exception:
            for hook_id, hook in self._forward_hooks.items():  # always_call hooks that did not run
                if hook_id in self._forward_hooks_always_called and hook_id not in call.called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, call.args, call.kwargs, call.result)
                        else:
                            hook(self, call.args, call.result)
                    except Exception as e:
                        warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                      f"silenced as another error was raised in forward: {e}", stacklevel=2)
            raise

    def _call_with_hooks(self, call: _HookedCall) -> Any:
        """``_call_impl``'s ``inner``: pre-hooks, backward-hook wrapping, forward, forward hooks."""
        full_backward_hooks: list[Any] = []
        non_full_backward_hooks: list[Any] = []
        if self._backward_hooks:
            hooks = list(self._backward_hooks.values())
            if self._is_full_backward_hook:
                full_backward_hooks = hooks
            else:
                non_full_backward_hooks = hooks
        backward_pre_hooks = list(self._backward_pre_hooks.values())
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, call.args, call.kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    call.args, call.kwargs = result
            else:
                result = hook(self, call.args)
                if result is not None:
                    call.args = result if isinstance(result, tuple) else (result,)
        bw_hook = None
        if full_backward_hooks or backward_pre_hooks:
            bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
            call.args = bw_hook.setup_input_hook(call.args)
        call.result = self.forward(*call.args, **call.kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called:
                call.called.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, call.args, call.kwargs, call.result)
            else:
                result = hook(self, call.args, call.result)
            if result is not None:
                call.result = result
        if bw_hook is not None:
            if not isinstance(call.result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(call.result)}", stacklevel=2)
            call.result = bw_hook.setup_output_hook(call.result)
        if non_full_backward_hooks:
            var = call.result
            while not isinstance(var, Tensor):
                var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
            grad_fn = var.grad_fn
            if grad_fn is not None:
                for hook in non_full_backward_hooks:
                    grad_fn.register_hook(_WrappedHook(hook, self))
                self._maybe_warn_non_full_backward_hook(call.args, call.result, grad_fn)
        return call.result

    def _maybe_warn_non_full_backward_hook(self, inputs: Any, result: Any, grad_fn: Any) -> None:
        """Warn (FutureWarning, torch's texts) where a non-full backward hook would miss gradients."""
        if not isinstance(result, Tensor):
            if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
                warnings.warn(
                    "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                    "Tensors is deprecated and will be removed in future versions. This hook will be missing some "
                    "of the grad_output. Please use register_full_backward_hook to get the documented behavior.",
                    FutureWarning, stacklevel=2)
                return
        else:
            result = (result,)
        if not isinstance(inputs, Tensor):
            if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
                warnings.warn(
                    "Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                    "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                    "missing some of the grad_input. Please use register_full_backward_hook to get the documented "
                    "behavior.", FutureWarning, stacklevel=2)
                return
        else:
            inputs = (inputs,)
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warnings.warn(
                "Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                "and will be removed in future versions. This hook will be missing some grad_output.",
                FutureWarning, stacklevel=2)
        elif len(out_grad_fn) > 1:
            warnings.warn(
                "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                "Please use register_full_backward_hook to get the documented behavior.",
                FutureWarning, stacklevel=2)
        else:
            inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
            next_functions = {n[0] for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warnings.warn(
                    "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                    "deprecated and will be removed in future versions. This hook will be missing some "
                    "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                    FutureWarning, stacklevel=2)

    # --- state dict ----------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else plain_detached(param)
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else plain_detached(buf)
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """State beyond parameters and buffers, saved as ``<prefix>_extra_state``; override with ``set_extra_state``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Restore what ``get_extra_state`` saved (called by ``load_state_dict``)."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to report this bug.")

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name, detached, in registration order.

        The result carries ``_metadata`` (each submodule's ``version``), as torch's does.

        Example:
            >>> from dispatchcore import nn
            >>> list(nn.BatchNorm1d(2).state_dict())
            ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
        """
        if args:  # torch's deprecated positional (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:  # the private API's hooks may return a new dict
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(module, state_dict, prefix, local_metadata)`` after this module and its children are saved.

        The hook edits ``state_dict`` in place and returns ``None``.

        Example:
            >>> import dispatchcore as dc
            >>> lin = dc.nn.Linear(2, 1)
            >>> def drop_bias(module, state_dict, prefix, local_metadata):
            ...     del state_dict[prefix + "bias"]
            >>> _ = lin.register_state_dict_post_hook(drop_bias)
            >>> list(lin.state_dict())
            ['weight']
        """
        hook._from_public_api = True  # type: ignore[attr-defined]
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The private post-hook: on the root module, a returned dict replaces the state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was "
                               "previously registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run a hook before this module loads its entries; it may edit ``state_dict``.

        The call is ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)``.
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                           with_module: bool = False) -> RemovableHandle:
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(hook, self if with_module else None)
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(module, incompatible_keys)`` after this module and its children are loaded.

        The hook may edit ``incompatible_keys.missing_keys``/``unexpected_keys`` in place (for
        instance to forgive a key); it must return ``None``.
        """
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: dict[str, Any],
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Load this module's own entries (not its children's), as ``load_state_dict`` calls it per module.

        ``local_metadata["assign_to_params_buffers"]`` (``assign=True``) assigns the checkpoint's
        tensors instead of copying into the existing ones; problems go to the three lists.
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            if param.dim() == 0 and input_param.dim() == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]  # torch's compatibility with 0.3's 1-element scalars
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            if param.is_meta and not input_param.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                              "parameter in the current model, which is a no-op. (Did you mean to "
                              "pass `assign=True` to assign items in the state dictionary to their "
                              "corresponding key in the module instead of copying them in place?)", stacklevel=2)
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are "
                                  f"{input_param.size()}, an exception occurred : {ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:  # a dotted name belongs to a submodule
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module (in place, without grad).

        Args:
            state_dict: dotted name -> tensor, as ``state_dict()`` makes (or torch's, converted).
            strict: raise on missing or unexpected keys (size mismatches always raise).
            assign: keep the checkpoint's tensors themselves instead of copying into the module's
                (a checkpoint tensor for a ``Parameter`` becomes a ``Parameter`` with the old one's
                ``requires_grad``), as torch does for ``assign=True``.

        Returns:
            ``(missing_keys, unexpected_keys)``, printing ``<All keys matched successfully>`` when both are empty.

        Raises:
            RuntimeError: ``Error(s) in loading state_dict for <Module>:`` with torch's lines.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        def load(module: Module, local_state_dict: Mapping[str, Any], prefix: str = "") -> None:
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)  # hooks may edit the lists
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return "
                        "new values, if incompatible_keys need to be modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # --- repr ------------------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr``; layers override it."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

