"""Hook handles and the machinery of ``nn.Module`` backward hooks.

Mirrors ``torch/utils/hooks.py`` and ``BackwardHookFunction`` (``torch/nn/modules/_functions.py``).
A module with full backward hooks runs its Tensor inputs and outputs through
``BackwardHookFunction``, an identity ``autograd.Function``: the output side's node
(``BackwardHookFunctionBackward``) sees the gradients of the outputs first and hands them to the
pre-hooks; the input side's node runs last and calls the hooks with the gradients of the inputs
and the outputs. Invariant: the identity nodes add only edges, never arithmetic, so the
gradients that reach the inputs are the module's own (unless a hook replaces them).
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor

__all__ = ["BackwardHook", "RemovableHandle"]


class RemovableHandle:
    """A handle that removes a hook from its dict (``torch.utils.hooks.RemovableHandle``).

    The dicts are held by weak reference (so an ``OrderedDict``, as modules keep hooks in).

    Example:
        >>> from collections import OrderedDict
        >>> hooks = OrderedDict()
        >>> handle = RemovableHandle(hooks)
        >>> hooks[handle.id] = print
        >>> handle.remove(); len(hooks)
        0
    """

    _next_id = 0

    def __init__(self, hooks_dict: dict[int, Any], *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        extras = extra_dict if isinstance(extra_dict, list) else [] if extra_dict is None else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        hooks = self.hooks_dict_ref()
        if hooks is not None and self.id in hooks:
            del hooks[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *args: Any) -> None:
        self.remove()


class BackwardHookFunction(Function):
    """The identity a module's backward hooks hang on; its node is ``BackwardHookFunctionBackward``."""

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *args: Any) -> Any:
        return args


def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
    res: list[Any] = [None] * size
    for idx, val in zip(indices, values, strict=True):
        res[idx] = val
    return tuple(res)


class BackwardHook:
    """The backward hooks of one module call (``torch.utils.hooks.BackwardHook``).

    ``setup_input_hook`` wraps the call's Tensor arguments, ``setup_output_hook`` its result;
    non-Tensor arguments and outputs show as ``None`` in what the hooks receive.
    """

    def __init__(self, module: Any, user_hooks: list[Any], user_pre_hooks: list[Any]) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None

    def _set_user_hook(self, grad_fn: Any) -> None:
        def hook(grad_input: Any, _: Any) -> Any:
            if self.grad_outputs is None:
                # the gradient reached the inputs without passing through the outputs
                # (a double backward): torch calls no hook then
                return None
            assert self.input_tensors_index is not None
            res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn: Any, args: tuple[Any, ...]) -> tuple[Any, list[int] | None]:
        tensors_idx = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        grad_fns = [t.grad_fn for t in new_tensors
                    if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open "
                               "an issue with a code sample to reproduce this.")
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors, strict=True):
            arg_list[idx] = val
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Wrap the call's arguments; returns them with each Tensor replaced by its hooked alias."""
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args: Any) -> Any:
        """Wrap the module's result (a Tensor or a tuple); returns it with hooked Tensors."""
        def fn(grad_fn: Any) -> None:
            def hook(_: Any, grad_output: Any) -> Any:
                assert self.output_tensors_index is not None
                self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
                if self.user_pre_hooks:
                    expected_len = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                        if hook_grad_outputs is None:
                            continue
                        actual_len = len(hook_grad_outputs)
                        if actual_len != expected_len:
                            raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                               f"got {actual_len}, but expected {expected_len}")
                        self.grad_outputs = hook_grad_outputs
                local_grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:  # no input requires grad: the hooks run here
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect to module "
                        "outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.", stacklevel=5)
                    grad_inputs = _pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                            raise RuntimeError("Backward hook for Modules where no input requires "
                                               "gradient should always return None or None for all gradients.")
                    self.grad_outputs = None
                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
