"""``Optimizer``: parameter groups, per-parameter state, ``state_dict`` and ``zero_grad``.

Mirrors ``torch/optim/optimizer.py`` (torch 2.13): an optimizer holds ``param_groups`` (dicts with
``params`` and the hyper-parameters, ``defaults`` filling what a group leaves out) and ``state``
(a ``defaultdict(dict)`` keyed by the parameter tensors). ``state_dict()`` uses torch's layout: the
state indexed by the parameters' positions across the groups (0, 1, ...) and each group's
``params`` as those integer ids, so a state dict saved by one optimizer loads into another built
over other tensors of the same shapes. Invariant: ``step`` runs under ``no_grad`` and updates the
parameters in place with dispatched aten operators only (the subclasses' ``_single_tensor_*``
arithmetic, in torch's order of operations).
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from .. import dtypes
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops import aten
from ..tensor import Tensor

__all__ = ["Optimizer", "ParamsT", "required"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class _RequiredParameter:
    """The marker of a hyper-parameter without a default (``torch.optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()


def _typename(value: Any) -> str:
    """``torch.typename``: the module-qualified class name (``torch.FloatTensor`` style is not modelled)."""
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", None) else f"{module}.{cls.__qualname__}"


def _use_no_grad(step: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``step`` under ``no_grad`` (torch's ``_use_grad_for_differentiable`` with ``differentiable=False``)."""
    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        with no_grad():
            return step(self, *args, **kwargs)

    return wrapper


class Optimizer:
    """The base class of all optimizers (``torch.optim.Optimizer``).

    ``params`` is an iterable of tensors or of dicts (parameter groups, each with a ``params``
    entry and optional per-group hyper-parameters); ``defaults`` are the hyper-parameters a group
    does not set.

    Example:
        >>> import dispatchcore as dc
        >>> w = dc.ones(2, requires_grad=True)
        >>> opt = dc.optim.SGD([w], lr=0.1)
        >>> w.grad = dc.ones(2)
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
        >>> opt.state_dict()["param_groups"][0]["params"]
        [0]
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups: list[Any] = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group.keys()):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``params``); missing hyper-parameters come from ``defaults``.

        Raises torch's errors: a non-dict group, parameters given as a set, a non-tensor or non-leaf
        parameter, a required hyper-parameter left out, a parameter already in another group.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if not seen.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to ``None`` (default), or zero them in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def state_dict(self) -> dict[str, Any]:
        """The state in torch's layout: ``{"state": {id: {...}}, "param_groups": [{..., "params": [ids]}]}``.

        Ids number the parameters in group order; the state's tensors are the optimizer's own
        (not copies), as in torch.
        """
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    @staticmethod
    def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
        """A loaded state value moved to the parameter's dtype (floating parameters) and device; ``step`` kept."""
        if isinstance(value, Tensor):
            if key == "step":
                return value
            if param.is_floating_point():
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (of this optimizer or one built over parameters of the same shapes).

        Raises torch's ``ValueError`` when the number of groups or of parameters per group differ.
        """
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [update_group(g, s) for g, s in zip(groups, saved_groups)]})

    def _closure_loss(self, closure: Callable[[], Any] | None) -> Any:
        """Evaluate ``closure`` with grad mode on (``step(closure)``), or None."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step (each optimizer defines it)."""
        raise NotImplementedError

    def _lazy_states(self, pairs: list[tuple[Tensor, Tensor]],
                     init: Callable[[Tensor, dict[str, Any]], None]) -> list[dict[str, Any]]:
        """The states of the pairs' parameters, an empty one (first step) filled first.

        An empty state gets a float32 0-d ``step``, then ``init(param, state)`` adds the optimizer's
        buffers, as torch's ``_init_group`` does.
        """
        for p, _ in pairs:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _zero_step(p)
                init(p, state)
        return [self.state[p] for p, _ in pairs]


def _group_step(name: str) -> Callable[..., Any]:
    """The ``step`` method every optimizer here shares, ``name`` being the optimizer's, for its docstring.

    Under ``no_grad``: ``closure()`` with grad mode on, then ``self._update_group(group, pairs)`` for
    each parameter group with its (parameter, gradient) pairs; returns the closure's loss (or None).
    """
    @_use_no_grad
    def step(self: Optimizer, closure: Callable[[], Any] | None = None) -> Any:
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            self._update_group(group, _grads(group))  # type: ignore[attr-defined]
        return loss

    step.__qualname__ = f"{name}.step"
    step.__doc__ = f"One {name} update of every parameter that has a gradient; returns ``closure()``'s loss if given."
    return step


def _grads(group: dict[str, Any]) -> list[tuple[Tensor, Tensor]]:
    """The (parameter, gradient) pairs of a group's parameters that have a gradient."""
    found = []
    for p in group["params"]:
        grad = p.grad  # a property: read once
        if grad is not None:
            found.append((p, grad))
    return found


def _zero_step(param: Tensor) -> Tensor:
    """A fresh step counter: a float32 0-d zero on the parameter's device (``capturable=False``, not fused)."""
    return aten.zeros.default([], dtype=dtypes.float32, device=param.device)


def _value(step: Tensor) -> float:
    """``_get_value``: a step counter tensor as a Python number."""
    return step.item()
