"""Custom autograd ``Function``: forward/backward (or setup_context), the ctx, output wrapping.

Mirrors ``torch/autograd/function.py`` and ``torch/csrc/autograd/custom_function.{h,cpp}``.
As in torch, the ctx *is* the graph node: ``MyFn.apply`` creates a
``MyFnBackward`` node, runs ``forward`` with grad mode off, wraps the outputs (``_wrap_outputs``) and saves
tensors with version checks. The ctx speaks both dialects: Python's ``save_for_backward`` /
``saved_tensors`` and C++'s ``get_saved_variables()`` / ``saved_data``. A Function subclass can
also be registered as an operator's Autograd-key kernel (``lib.impl(op, MyFn, "Autograd")``).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any

from ..tensor import Tensor, _tp_name
from ..tls import per_thread as _pt
from .grad_mode import no_grad
from .graph import AccumulateGrad, Node, SavedTensor, _sequence, grad_accumulator, gradient_edge, lone_edge, next_nodes

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]


# The metadata tuple of the last tensor a node described: consecutive nodes mostly describe
# tensors of one shape, dtype and device, and share it (Note [Shared input metadata], kernels.py)
_last_meta: tuple[Any, Any, Any] = ((), None, None)


def _shared_meta(t: Any) -> tuple[Any, Any, Any]:
    """``(shape, dtype, device)`` of ``t``: the last such tuple when it is equal, else a new one."""
    global _last_meta
    shape, dtype, device = t._data.shape, t.dtype, t._device
    meta = _last_meta
    if meta[1] is dtype and meta[2] is device and meta[0] == shape:
        return meta
    meta = _last_meta = (tuple(shape), dtype, device)
    return meta


# The one-element tuple of the last metadata a node of one input or one output stored as its
# _input_meta or _output_meta, with the backend dtype it was read from: consecutive such nodes
# allocate none (See Note [One-tensor metadata])
_last_one: tuple[Any, tuple[tuple[Any, Any, Any]], bool] = (None, (_last_meta,), False)


# Note [One-tensor metadata]
# ``_one_meta`` runs twice per one-tensor Function call (the input's and the output's metadata),
# and mostly answers with the tuple it made last. It tests that answer on the backend data's own
# dtype object, by identity, instead of ``t.dtype`` (a property and a dict lookup): the memo keeps
# that object beside the tuple, in one global replaced whole, so that a thread never pairs one
# call's dtype with another's tuple. The same backend dtype object always maps to the same
# dispatchcore dtype; a backend that makes a new dtype object per read only misses the memo.
# ``Function.apply`` runs this test inline (a call costs as much as the test), and reads the
# memo's third element, whether that dtype is floating or complex, instead of the output's
# ``dtype.kind``.
def _one_meta(t: Any) -> tuple[tuple[Any, Any, Any]]:
    """``(_shared_meta(t),)``: the last such tuple when its metadata is equal, else a new one."""
    global _last_one
    data = t._data
    last = _last_one
    one = last[1]
    meta = one[0]
    if data.dtype is last[0] and meta[2] is t._device and meta[0] == data.shape:
        return one
    one = (_shared_meta(t),)
    _last_one = (data.dtype, one, data.dtype.kind in "fc")
    return one


def _is_tensor(x: Any) -> bool:
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

    _saved_variables: tuple[SavedTensor, ...]  # set when apply records the node (a BackwardCFunction)

    def save_for_backward(self, *tensors: Any) -> None:
        """Save tensors (or None) for ``backward``; they are checked for in-place changes.

        As in torch, the arguments are checked when ``apply`` records the node (a non-tensor
        raises ``TypeError`` then), and nothing is saved when no node is recorded.
        """
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
        # a ctx is always a BackwardCFunction, i.e. also the Node that unpack reconnects outputs to
        saved = self._saved_variables
        if len(saved) == 1:  # one saved tensor, the common case: no generator
            return (saved[0].unpack(self),)  # type: ignore[arg-type]  # mixin of a Node
        return tuple(s.unpack(self) for s in saved)  # type: ignore[arg-type]

    def get_saved_variables(self) -> tuple[Any, ...]:
        """C++ ``AutogradContext::get_saved_variables()``: the same as ``saved_tensors``."""
        return self.saved_tensors


class BackwardCFunction(Node, FunctionCtx):
    """Base of the ``<Name>Backward`` node classes that custom Functions create."""

    _function: type[Function]
    # per-node state; class-level defaults, so a node only stores what its Function sets
    needs_input_grad: tuple[bool, ...] = ()
    materialize_grads = True
    _to_save: tuple[Any, ...] = ()
    _dirty: tuple[Any, ...] = ()
    _non_differentiable: tuple[Any, ...] = ()
    _saved_variables: tuple[SavedTensor, ...] = ()
    _is_tensor_input: tuple[bool, ...] = ()
    _input_meta: tuple[Any, ...] = ()  # (shape, dtype, device) per tensor input
    _output_meta: tuple[Any, ...] = ()  # (shape, dtype, device) per tensor output
    _num_outputs = 1  # the one-output fast path of apply leaves this default in place
    # the Function's backward (or vjp), decided once per class by _decide; None when both are
    # defined, so that the node raises torch's error when it runs (See Note [Function fast paths])
    _user_fn: Any = None

    def __init__(self) -> None:
        Node.__init__(self, ())

    @property
    def saved_data(self) -> dict[str, Any]:
        """C++ ``AutogradContext::saved_data``: a dict for non-tensor state, made on first use."""
        data = self.__dict__.get("_saved_data")
        if data is None:
            data = self.__dict__["_saved_data"] = {}
        return data

    @saved_data.setter
    def saved_data(self, value: dict[str, Any]) -> None:
        self.__dict__["_saved_data"] = value

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        """``PyNode::apply``: call the user's backward, then check and fit its gradients.

        The checks are the general path's (``_apply_general``), reordered so that a node whose
        backward returns one well-formed gradient per tensor input, as its inputs' metadata
        describes, pays for comparisons only (See Note [Function fast paths]).
        """
        user_fn = self._user_fn
        if user_fn is None:
            user_fn = _get_user_fn(self._function)  # both backward and vjp: raises torch's error
        if self.materialize_grads:
            for g in grads:  # `None in grads` would compare tensors with ==
                if g is None:
                    grads = tuple(_zeros_like_meta(m) if g is None and m is not None else g
                                  for g, m in zip(grads, self._output_meta))
                    break
        result = user_fn(self, *grads)
        is_tensor_input = self._is_tensor_input
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(is_tensor_input) or False in is_tensor_input:
            return self._apply_general(grads, result)  # surplus Nones, wrong count, non-tensor inputs
        next_fns, input_meta = next_nodes(self), self._input_meta
        for i, g in enumerate(result):
            if g is None or next_fns[i] is None:
                continue
            shape, dtype, device = input_meta[i]
            # anything to fix or report goes the general way, which keeps torch's order of checks
            # (a backend's shape is a tuple, Note [Backend data protocol]; dtypes and devices are interned)
            if (not isinstance(g, Tensor) or g._data.shape != shape or g.dtype is not dtype
                    or g._device is not device):
                return self._apply_general(grads, result)
        return result if type(result) is tuple else tuple(result)

    def _validate(self, i: int, g: Any, shape: tuple[int, ...], dtype: Any, device: Any) -> Any:
        """validate_outputs (engine.cpp) for one gradient: shape, dtype, then device."""
        if tuple(g._data.shape) != shape:
            g = _sum_to_or_raise(g, shape, self.name(), i)
        if not g.dtype.is_floating_point and g.dtype.is_complex != dtype.is_complex:
            raise RuntimeError(
                "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to "
                "be true, but got false.  (Could this error message be improved?  If so, please report an "
                "enhancement request to PyTorch.)")
        if g.dtype != dtype:
            g = g.to(dtype)
        if g._device is not device:  # devices are interned: identity is equality
            if g._data.ndim:
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {i} - expected "
                    f"device {device} but got {g._device}")
            g = g.to(device)  # a 0-d gradient moves (torch's quick hack for issue 65016)
        return g

    def _apply_general(self, grads: tuple[Any, ...], result: Any = None) -> tuple[Any, ...]:
        """``PyNode::apply`` step by step; ``apply`` hands over ``result`` when it has called backward."""
        if result is None:
            user_fn = _get_user_fn(self._function)
            if self.materialize_grads:
                grads = tuple(_zeros_like_meta(m) if g is None and m is not None else g
                              for g, m in zip(grads, self._output_meta))
            result = user_fn(self, *grads)
            if not isinstance(result, tuple):
                result = (result,)
        is_tensor_input = self._is_tensor_input
        expected = len(is_tensor_input)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]  # surplus trailing Nones are dropped, as in PyNode::apply
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})")
        out = []
        for i, (g, is_tensor) in enumerate(zip(result, is_tensor_input)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not _is_tensor(g):
                raise RuntimeError(f"expected Variable or None (got {_tp_name(type(g))})")
            out.append(g)
        # validate_outputs (engine.cpp): only edges that lead somewhere; shape, dtype, then device
        for i, (nxt, g) in enumerate(zip(next_nodes(self), out)):
            if g is None or nxt is None:
                continue
            shape, dtype, device = self._input_meta[i]
            out[i] = self._validate(i, g, shape, dtype, device)
        return tuple(out)

    def _release_variables(self) -> None:
        Node._release_variables(self)  # FunctionCtx has none: this is super()'s, without the lookup
        for saved in self._saved_variables:
            saved.free()


def _get_user_fn(cls: type[Function]) -> Any:
    """``BackwardCFunction._get_user_fn``: ``backward`` or ``vjp``, never both."""
    backward_fn = cls.backward
    vjp_fn = cls.vjp
    if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them.")
    return vjp_fn if vjp_fn is not Function.vjp else backward_fn


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


# Note [Function fast paths]
# ``Function.apply`` and ``BackwardCFunction.apply`` run once per call, so what torch looks up on
# every call but that depends only on the Function class is decided once per class, in
# ``_decide``: whether ``setup_context`` is overridden (``cls._custom_setup``), and which of
# ``backward`` / ``vjp`` the node calls (``<Name>Backward._user_fn``; None when both are defined, so
# the node still raises torch's error when it runs). The metaclass decides again when one of those
# attributes is assigned or deleted on a Function class (for it and its subclasses); assigning
# them on a plain mixin class after the fact is not seen.
# ``apply`` then takes the general path (``_apply_general`` / ``_wrap_outputs``) for keyword
# arguments and ``setup_context``, and otherwise skips what a call does not use: the per-input
# tuples of a one-tensor call are constants, and one new differentiable output with nothing marked
# dirty or non-differentiable gets its node without _wrap_outputs' general loop. The node's
# ``apply`` checks only identities and shapes when backward returns one gradient per tensor input
# matching its input's shape, dtype and device, and otherwise repeats the general checks.
# A call with one tensor input that records a node reads that input's edge itself: its grad_fn, or
# for a leaf the AccumulateGrad its autograd meta already holds (``grad_accumulator`` makes one
# when there is none); a view goes through ``gradient_edge``, which may regenerate its grad_fn.
_DECIDING = frozenset({"forward", "backward", "vjp", "setup_context"})

# Note [Bare Function nodes]
# ``cls._backward_cls()`` runs ``BackwardCFunction.__init__`` and ``Node.__init__`` only to write
# the node's four slots (``_next``/``_nrs`` empty, a new ``_seq``, ``_extras`` None). ``apply``
# makes the node with ``object.__new__`` and writes those slots itself, at the same moment (before
# the edges, so sequence numbers keep torch's order); the one-tensor path writes the edge's
# ``_next``/``_nrs`` at once instead of the empty ones. ``_apply_general`` still calls the class.
# ``test_function_fast_paths.py`` checks that such a node has every slot ``Node.__init__`` sets.

# Note [A Function's saved input]
# One tensor given to ``save_for_backward`` that is not the node's output is saved as
# ``save_input`` (graph.py) saves a built-in op's input: a SavedTensor of three slot writes, here
# inline (``_save_variables`` and ``SavedTensor(t, is_output=..., node=...)`` are two calls with
# keywords). Anything else (several tensors, None, a non-tensor, the output, an inference tensor,
# which raises) goes through ``_save_variables``.

# Note [One-argument forward call]
# ``cls.forward(ctx, *args)`` builds a new tuple for the call; with one argument ``apply`` calls
# ``cls.forward(ctx, arg)``, which forward receives in the same way. Whether forward returned
# that argument as is is then one identity test, not a loop over the tensor inputs.


def _decide(cls: _FunctionMeta) -> None:
    """Record the per-class decisions of Note [Function fast paths] on ``cls`` and its node class."""
    base = globals().get("Function", cls)  # Function itself is being made: it is the base
    type.__setattr__(cls, "_custom_setup", cls.setup_context is not base.setup_context)  # type: ignore[attr-defined]
    backward_fn, vjp_fn = cls.backward, cls.vjp  # type: ignore[attr-defined]
    if backward_fn is not base.backward and vjp_fn is not base.vjp:
        user_fn = None  # both: _get_user_fn raises when the node runs
    else:  # _get_user_fn's choice; a staticmethod, so that reading it from the node binds nothing
        user_fn = staticmethod(vjp_fn if vjp_fn is not base.vjp else backward_fn)
    cls._backward_cls._user_fn = user_fn  # type: ignore[attr-defined]


class _FunctionMeta(type):
    """Gives every Function subclass its node class, named ``<Name>Backward`` as in torch."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        super().__init__(name, bases, attrs)
        # defining both backward and vjp is an error when the node runs (_get_user_fn), as in torch
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_function": cls, "_forward_cls": cls})
        _decide(cls)

    def __setattr__(cls, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _DECIDING:
            _decide_again(cls)

    def __delattr__(cls, name: str) -> None:
        super().__delattr__(name)
        if name in _DECIDING:
            _decide_again(cls)


def _decide_again(cls: type) -> None:
    """``_decide`` for ``cls`` and every subclass, whose inherited methods may have changed."""
    todo = [cls]
    while todo:
        c = todo.pop()
        _decide(c)  # type: ignore[arg-type]
        todo.extend(c.__subclasses__())


_NO_GRAD = ((False, False), (False, True))  # the autograd state for forward, by inference-mode flag
_ONE_TENSOR = (True,)  # needs_input_grad and _is_tensor_input of one tensor input that requires grad
_NOT_NEEDED = (False,)  # needs_input_grad of one tensor input that does not
_FIRST_OF_ONE = lone_edge(0, 0, 1)  # _nrs of a node whose one input's edge has input_nr 0
_new = object.__new__


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations (``torch.autograd.Function``).

    Define static ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` (or ``forward(*args)``
    plus ``setup_context(ctx, inputs, output)``) and call ``apply``. Register the class itself
    as an operator's Autograd kernel with ``lib.impl(name, MyFunction, "Autograd")``.
    """

    _custom_setup: bool  # whether setup_context is overridden: See Note [Function fast paths]

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
        if kwargs or cls._custom_setup:  # decided per class by _decide
            return _apply_general(cls, args, kwargs)
        # made before the edges, as torch makes the PyNode first; Node.__init__'s writes, without
        # its calls (See Note [Bare Function nodes])
        ctx: BackwardCFunction = _new(cls._backward_cls)
        ctx._seq = next(_sequence)
        ctx._extras = None
        st = _pt.state
        state = st.autograd
        if len(args) == 1 and isinstance(args[0], Tensor):
            # one tensor input, the common call: its per-input tuples are constants, and its
            # edge and metadata go straight into the node
            tensor_inputs: Any = args
            ctx._is_tensor_input = _ONE_TENSOR
            a = single = args[0]
            if a._requires_grad:
                ctx.needs_input_grad = _ONE_TENSOR
                executable = state[0]
            else:
                ctx.needs_input_grad = _NOT_NEEDED
                executable = False
            if not executable:
                ctx._next = ctx._nrs = ()
            elif a._base is None:
                # gradient_edge's answer for a non-view, read directly and stored as a lone edge
                # (Note [Flat edges], graph.py): its grad_fn, else the leaf's accumulator (See
                # Note [Function fast paths])
                grad_fn = a._grad_fn
                if grad_fn is not None:
                    ctx._next, ctx._nrs = grad_fn, lone_edge(0, a._output_nr, 1)
                    # _one_meta's memo test, inline (Note [One-tensor metadata])
                    data, last = a._data, _last_one
                    one = last[1]
                    meta = one[0]
                    if data.dtype is last[0] and meta[2] is a._device and meta[0] == data.shape:
                        ctx._input_meta = one
                    else:
                        ctx._input_meta = _one_meta(a)
                else:  # a leaf: its accumulator keeps its metadata (Note [Leaf metadata], graph.py)
                    meta = a._meta
                    acc = None if meta is None else meta.grad_accumulator
                    if acc is None:
                        acc = grad_accumulator(a)
                    ctx._next, ctx._nrs, ctx._input_meta = acc, _FIRST_OF_ONE, acc.one_meta
            else:
                edge = gradient_edge(a)
                ctx.next_functions = (edge,)
                ctx._input_meta = edge[0].one_meta if edge[0].__class__ is AccumulateGrad else _one_meta(a)
        else:
            ctx._next = ctx._nrs = ()
            single = None
            tensor_inputs, executable = _record_inputs(ctx, args, state[0])
        st.autograd = _NO_GRAD[state[1]]  # forward runs with grad mode off (dispatch TLS untouched)
        try:
            # See Note [One-argument forward call]
            output = cls.forward(ctx, *args) if single is None else cls.forward(ctx, single)
        finally:
            st.autograd = state
        if executable and isinstance(output, Tensor) and not ctx._dirty and not ctx._non_differentiable:
            # the output's metadata, by _one_meta's memo test inline; the memo also keeps whether
            # its dtype is differentiable (floating or complex): See Note [One-tensor metadata]
            data, last = output._data, _last_one
            one = last[1]
            meta = one[0]
            if data.dtype is last[0] and meta[2] is output._device and meta[0] == data.shape:
                differentiable = last[2]
            else:
                one, differentiable = _one_meta(output), data.dtype.kind in "fc"
            if single is not None:  # See Note [One-argument forward call]
                if single is output:
                    differentiable = False  # an input returned as-is: _wrap_outputs makes its alias
            else:
                for a in tensor_inputs:
                    if a is output:
                        differentiable = False
            if differentiable:
                # one new differentiable output, nothing marked: _wrap_outputs' steps for it alone
                output._grad_fn = ctx
                output._requires_grad = True
                output._output_nr = 0
                ctx._output_meta = one
                to_save = ctx._to_save
                if to_save:
                    t = to_save[0]
                    if len(to_save) == 1 and isinstance(t, Tensor) and t._grad_fn is not ctx and t._vc is not None:
                        # one saved tensor, not the output: See Note [A Function's saved input]
                        saved = _new(SavedTensor)
                        saved._tensor = t
                        saved._version = t._vc[0]
                        saved._output = None
                        ctx._saved_variables = (saved,)
                    else:
                        ctx._saved_variables = _save_variables(ctx)
                return output
        return _wrap_outputs(ctx, tensor_inputs, output, executable, False)

    @classmethod
    def __dispatchcore_kernel_check__(cls, op: Any, key: Any, with_keyset: bool) -> None:
        """Library.impl's registration check: Functions take the op's arguments in order."""

    @classmethod
    def __dispatchcore_as_kernel__(cls, op: Any) -> Any:
        """The Autograd-key kernel for ``op``: ``cls.apply``, guarded against endless re-entry."""

        def function_kernel(*args: Any, **kwargs: Any) -> Any:
            st = _pt.state
            active = st.forwards  # the operators whose Function forward is running
            if op in active:
                raise RuntimeError(
                    f"dispatchcore: {op.qualname}'s Autograd kernel {cls.__name__}.apply was "
                    f"re-entered from inside {cls.__name__}.forward. forward called the operator "
                    "again while the autograd keys were still in the thread-local sets, so the call "
                    "dispatched back to this kernel (in PyTorch this recurses until the stack "
                    "overflows). Call the operator inside `with dispatchcore."
                    "AutoDispatchBelowADInplaceOrView():` so that it goes straight to the backend "
                    "kernel.")
            st.forwards = active | {op}
            try:
                return cls.apply(*args, **kwargs)
            finally:
                st.forwards = active

        function_kernel.__qualname__ = f"{cls.__qualname__}.apply"
        return function_kernel


def _record_inputs(ctx: BackwardCFunction, args: tuple[Any, ...], grad_mode: bool) -> tuple[list[Any], bool]:
    """Set the node's per-input tuples, and its edges when it will record; the tensor inputs, and whether it will."""
    is_tensor, needs, tensor_inputs = [], [], []  # one loop: a comprehension is a call each
    for a in args:
        if isinstance(a, Tensor):
            is_tensor.append(True)
            needs.append(a._requires_grad)
            tensor_inputs.append(a)
        else:
            is_tensor.append(False)
            needs.append(False)
    executable = grad_mode and True in needs
    ctx.needs_input_grad = tuple(needs)
    ctx._is_tensor_input = tuple(is_tensor)
    if executable:
        # edges are collected before forward runs: forward may rebase a dirty input's history
        edges, meta = [], []
        for a in tensor_inputs:
            edge = gradient_edge(a)
            edges.append(edge)
            meta.append(edge[0].one_meta[0] if edge[0].__class__ is AccumulateGrad else _shared_meta(a))
        ctx.next_functions, ctx._input_meta = tuple(edges), tuple(meta)
    return tensor_inputs, executable


def _apply_general(cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``Function.apply`` step by step: every call shape, kwargs and ``setup_context`` included."""
    custom_setup = cls.setup_context is not Function.setup_context
    if kwargs or custom_setup:
        args = _bind_forward(cls, args, kwargs, custom_setup)
    ctx = cls._backward_cls()
    st = _pt.state
    state = st.autograd
    tensor_inputs, executable = _record_inputs(ctx, args, state[0])
    st.autograd = _NO_GRAD[state[1]]  # forward runs with grad mode off (dispatch TLS untouched)
    try:
        if custom_setup:
            output = cls.forward(*args)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args)
    finally:
        st.autograd = state
    return _wrap_outputs(ctx, tensor_inputs, output, executable, custom_setup)


@functools.lru_cache(maxsize=256)
def _forward_signature(cls: type[Function], custom_setup: bool) -> tuple[inspect.Signature, tuple[str, ...], bool]:
    """The signature of forward without ctx, its positional parameter names, whether any has a default."""
    sig = inspect.signature(cls.forward)
    params = list(sig.parameters.values())
    if not custom_setup:
        params = params[1:]  # drop ctx
    P = inspect.Parameter
    names = tuple(p.name for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD))
    defaults = any(p.default is not P.empty for p in params)
    return sig.replace(parameters=params), names, defaults


def _bind_forward(cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any],
                  custom_setup: bool) -> tuple[Any, ...]:
    """The inputs ``apply`` sees, as torch builds them (``Function.apply`` / ``THPFunction_apply``).

    With ``setup_context``, torch binds the call to forward's signature and fills in defaults.
    Without it, the C++ binding appends keyword arguments at their parameter positions, fills
    no defaults, and refuses gaps, duplicates and unknown names.
    """
    sig, names, has_defaults = _forward_signature(cls, custom_setup)
    if custom_setup:
        if not kwargs and (not has_defaults or len(args) >= len(names)):
            return args
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.args) + tuple(bound.kwargs.values())
    positions = {}
    for name in kwargs:
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        i = names.index(name)
        if i < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        positions[i] = kwargs[name]
    out = list(args)
    for i in range(len(args), max(positions) + 1):
        if i not in positions:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
        out.append(positions[i])
    return tuple(out)


_AS_IS_SAVED = (
    "An input that has been returned as-is as output is being saved for backward. This is not "
    "supported if you override setup_context. You should return and save a view of the input "
    "instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself.")


def _wrap_outputs(ctx: BackwardCFunction, tensor_inputs: list[Any], output: Any, executable: bool,
                  custom_setup: bool) -> Any:
    """``_wrap_outputs`` (custom_function.cpp): attach the node; handle dirty, non-differentiable, aliased outputs."""
    single = not isinstance(output, tuple)
    raw = (output,) if single else output
    dirty = ctx._dirty
    non_diff = ctx._non_differentiable
    # torch 2.13's texts end after "argument " and "got ": the index and type are not printed
    if dirty and not all(_is_tensor(d) for d in dirty):
        raise RuntimeError("mark_dirty can only accept variables, but argument ")
    if non_diff and not all(_is_tensor(n) for n in non_diff):
        raise RuntimeError("mark_non_differentiable only accepts variable arguments, but got ")
    input_ids = {id(a) for a in tensor_inputs}
    for d in dirty:  # get_and_bump_dirty: forward's own in-place op bumped once, this bumps again
        if d._vc is not None:
            d._vc[0] += 1
    to_save = ctx._to_save
    saved_ids = {id(t) for t in to_save if t is not None} if custom_setup else ()
    results = []
    for i, out in enumerate(raw):
        if not _is_tensor(out):
            results.append(out)
            continue
        is_input = id(out) in input_ids
        is_modified = bool(dirty) and any(out is d for d in dirty)
        differentiable = executable and out._data.dtype.kind in "fc" and not (
            non_diff and any(out is n for n in non_diff))
        if not differentiable:
            if not out._requires_grad:
                if is_input and not is_modified:
                    if id(out) in saved_ids:
                        raise RuntimeError(_AS_IS_SAVED)
                    out = _view_as_self(out)
            elif is_input:
                out = _detach(out)  # a detached alias; the input keeps requiring grad
            elif out._base is None:
                out.detach_()
            # a view of an input keeps requiring grad, like a view made under no_grad
        elif is_modified:
            if out._grad_fn is None and out._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            if not is_input:  # checked for returned outputs only, as torch's set_history does
                if out._base is not None:  # the view-of-an-intermediate case
                    raise RuntimeError(_MARK_DIRTY_NOT_INPUT)
                warnings.warn(_MARK_DIRTY_NOT_INPUT, UserWarning, stacklevel=3)
            if out._base is not None and len(raw) > 1:
                raise RuntimeError(_DIRTY_VIEW_MULTI_OUTPUT)
            out._grad = None  # rebase_history: the tensor's old gradient state goes
            if out._meta is not None:
                out._meta.grad_accumulator = None
            out._grad_fn = ctx
            out._requires_grad = True
            out._output_nr = i
        else:
            if is_input:
                if id(out) in saved_ids:
                    raise RuntimeError(_AS_IS_SAVED)
                out = _view_as_self(out)  # an input returned as is: a new alias gets the edge
            out._grad_fn = ctx
            out._requires_grad = True
            out._output_nr = i
        results.append(out)
    if dirty and not all(any(d is o for o in raw) for d in dirty):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as output. "
            "The inputs that are modified inplace must all be outputs of the Function.")
    if executable:
        ctx._output_meta = tuple([_shared_meta(o) if _is_tensor(o) else None for o in results])
        ctx._num_outputs = len(results)
        if to_save:
            ctx._saved_variables = _save_variables(ctx)
    return results[0] if single else tuple(results)


def _save_variables(ctx: BackwardCFunction) -> tuple[SavedTensor, ...]:
    """The SavedTensors of ``ctx.save_for_backward``'s arguments, once the outputs have their node."""
    to_save = ctx._to_save
    if len(to_save) == 1 and isinstance(to_save[0], Tensor):  # one tensor: no loop
        t = to_save[0]
        return (SavedTensor(t, is_output=t._grad_fn is ctx, node=ctx),)
    saved = []
    for i, t in enumerate(to_save):
        if t is None:
            saved.append(SavedTensor(None))
        elif not _is_tensor(t):
            raise TypeError(
                f"save_for_backward can only save variables, but argument {i} is of type "
                f"{type(t).__name__}")
        else:
            saved.append(SavedTensor(t, is_output=t._grad_fn is ctx, node=ctx))
    return tuple(saved)


_MARK_DIRTY_NOT_INPUT = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
    "mutated should be passed to ctx.mark_dirty().")

_DIRTY_VIEW_MULTI_OUTPUT = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. You "
    "should either make sure the input is not a view (using .clone() for example) or make your "
    "Function only return one Tensor (potentially splitting it into two Functions: one doing the "
    "inplace that returns a single Tensor and a second one that does the other operations). You "
    "can ask on the forum https://discuss.pytorch.org/ if you need help to do this change.")


def _view_as_self(t: Any) -> Any:
    """``_view_as_self_with_no_grad``: a new alias of ``t`` (``t.view_as(t)`` under no_grad)."""
    from ..ops import aten

    with no_grad():
        return aten.alias.default(t)


def _detach(t: Any) -> Any:
    from ..ops import aten

    with no_grad():
        return aten.detach.default(t)


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
        if not _pt.state.autograd[0]:
            return outputs
        if not any(_is_tensor(a) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        err = DelayedError("trying to differentiate twice a function that was marked with "
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


class DelayedError(Node):
    """A node that raises when backward reaches it (``torch::autograd::DelayedError``).

    Its grad_fn prints as ``Error``, the name of the node torch's DelayedError attaches, and
    its ``name()`` is ``torch::autograd::Error``.
    """

    __slots__ = ("_message",)
    _qualified_name = "torch::autograd::Error"

    def __init__(self, message: str, next_functions: tuple[Any, ...]) -> None:
        super().__init__(next_functions)
        self._message = message

    def apply(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        raise RuntimeError(self._message)


DelayedError.__name__ = DelayedError.__qualname__ = "Error"
