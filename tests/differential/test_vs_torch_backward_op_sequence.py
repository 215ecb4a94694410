"""The aten operators every backward formula dispatches, in order, against torch's (a dispatch mode's view).

A teacher logging ``backward()`` with a dispatch mode (``TorchDispatchMode`` / ``dc.DispatchMode``)
or a ``__torch_dispatch__`` subclass sees the operators the derivative formulas call: torch's
``tanh`` backward is one ``tanh_backward``, its ``clamp`` backward makes the zero before comparing.
For each case: the forward runs outside the mode, then ``autograd.grad`` runs inside it in both
libraries, and the ``str(func)`` of every call must agree, in order.

Cases: every conformance entry with ``grad=True`` (each of its float64 samples), and ``EXTRA``
below: in-place forms, the backward operators themselves (double backward), and the operators
no entry differentiates. ``test_every_derivative_is_exercised`` keeps it so: a derivative
registered with ``register_derivative`` must be reached by some case, or be listed in
``UNEXERCISED`` with the reason. Known differences are declared in ``KNOWN`` (entry or case
name -> reason) and must still differ (strict), so a fix shows up.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402 - after importorskip

from tests.conformance import framework as F  # noqa: E402


# --- recording -------------------------------------------------------------------------------------
def _recorder(base: type) -> type:
    class Record(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            self.names.append(str(func).removeprefix("aten."))
            return func(*args, **(kwargs or {}))

    return Record


_MODES = {"dc": _recorder(dc.DispatchMode), "torch": _recorder(TorchDispatchMode)}


def _lib(name: str) -> Any:
    return dc if name == "dc" else torch


def _backward_ops(lib_name: str, outputs: list[Any], inputs: list[Any], seed: int) -> tuple[list[str], list[str]]:
    """(ops of the backward, ops of the forward that made ``outputs``): ``autograd.grad`` under a mode."""
    lib = _lib(lib_name)
    outs = [t for t in outputs if t.requires_grad]
    rng = np.random.default_rng(seed)
    cotangents = [lib.tensor(rng.uniform(-1, 1, tuple(t.shape)), dtype=t.dtype) for t in outs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _MODES[lib_name]() as mode:
            try:
                lib.autograd.grad(outs, inputs, cotangents, allow_unused=True)
            except Exception as e:  # the same error in both libraries is compared like an op
                mode.names.append(f"raised {type(e).__name__}")
    return mode.names


# --- the conformance entries --------------------------------------------------------------------------
def _entry_runs(op: F.OpInfo, lib_name: str) -> list[tuple[str, list[str], list[str]] | None]:
    """Per float64 sample: (key, forward ops, backward ops), None where nothing is differentiated."""
    backend = F.dc_backend() if lib_name == "dc" else F.torch_backend()
    runs: list[tuple[str, list[str], list[str]] | None] = []
    for case in F.cases(op, "float64"):
        first, args, kwargs, leaves = F._call_inputs(case, backend, grad=True)
        if not leaves:
            runs.append(None)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with _MODES[lib_name]() as forward:
                try:
                    result = F._invoke(case, backend, op.call, first, args, kwargs)
                except Exception:
                    runs.append(None)
                    continue
        outs = [t for t in F._tensors(result) if t.requires_grad]
        if not outs:
            runs.append(None)
            continue
        runs.append((case.key, forward.names, _backward_ops(lib_name, outs, leaves, F.seed(op.name, case.key))))
    return runs


GRAD_ENTRIES = [op for op in F.all_ops() if op.grad]


# --- the extra cases: lib -> (outputs, inputs) -----------------------------------------------------------
def _t(lib: Any, shape: tuple[int, ...], seed: int, low: float = -2.0, high: float = 2.0, grad: bool = True) -> Any:
    a = np.random.default_rng(seed).uniform(low, high, shape)
    t = lib.tensor(a, dtype=lib.float64)
    return t.requires_grad_() if grad else t


def _inplace_unary(name: str, low: float = -0.9, high: float = 0.9, *args: Any) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x = _t(lib, (2, 3), 1, low, high)
        method = getattr(x.clone(), name, None)
        y = method(*args) if method is not None else getattr(lib.ops.aten, name).default(x.clone(), *args)
        return [y], [x]
    return case


def _inplace_binary(name: str, other: Any = None, low: float = 0.5, high: float = 2.0) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x = _t(lib, (2, 3), 1, low, high)
        o = _t(lib, (2, 3), 2, low, high) if other is None else other
        y = getattr(x.clone(), name)(o)
        return [y], [x] + ([o] if other is None else [])
    return case


def _aten(name: str, make: Callable[[Any], tuple[list[Any], list[Any], dict[str, Any]]]) -> Callable[[Any], Any]:
    """Call ``ops.aten.<name>`` on ``make(lib)``'s (args, differentiated inputs, kwargs)."""
    base, _, overload = name.partition(".")

    def case(lib: Any) -> Any:
        args, inputs, kwargs = make(lib)
        out = getattr(getattr(lib.ops.aten, base), overload or "default")(*args, **kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return [o for o in outs if o.requires_grad], inputs
    return case


def _double(forward: Callable[[Any], tuple[Any, list[Any]]]) -> Callable[[Any], Any]:
    """The first backward with ``create_graph=True`` outside the mode: its gradients are differentiated."""
    def case(lib: Any) -> Any:
        out, inputs = forward(lib)
        rng = np.random.default_rng(5)
        go = lib.tensor(rng.uniform(-1, 1, tuple(out.shape)), dtype=out.dtype).requires_grad_()
        grads = lib.autograd.grad(out, inputs, go, create_graph=True)
        return [g for g in grads if g is not None and g.requires_grad], [*inputs, go]
    return case


def _unary_then_double(fn: Callable[[Any, Any], Any], low: float = -2.0, high: float = 2.0) -> Callable[[Any], Any]:
    def forward(lib: Any) -> tuple[Any, list[Any]]:
        x = _t(lib, (2, 3), 3, low, high)
        return fn(lib, x), [x]
    return _double(forward)


def _softmax_data(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
    g, x = _t(lib, (2, 3), 1), _t(lib, (2, 3), 2, grad=False)
    out = lib.ops.aten._softmax.default(x, 1, False).requires_grad_()
    return [g, out, 1, lib.float64], [g, out], {}


def _log_softmax_data(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
    g, x = _t(lib, (2, 3), 1), _t(lib, (2, 3), 2, grad=False)
    out = lib.ops.aten._log_softmax.default(x, 1, False).requires_grad_()
    return [g, out, 1, lib.float64], [g, out], {}


def _grad_and(shape: tuple[int, ...], *rest: Any) -> Callable[[Any], tuple[list[Any], list[Any], dict[str, Any]]]:
    def make(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
        g = _t(lib, shape, 1)
        return [g, *rest], [g], {}
    return make


def _two(shape: tuple[int, ...], *rest: Any, low: float = -2.0, high: float = 2.0,
         ) -> Callable[[Any], tuple[list[Any], list[Any], dict[str, Any]]]:
    def make(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
        g, x = _t(lib, shape, 1), _t(lib, shape, 2, low, high)
        return [g, x, *rest], [g, x], {}
    return make


def _masked_scatter_backward(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
    g = _t(lib, (2, 3), 1)
    mask = lib.tensor([[True, False, True], [False, True, False]])
    return [g, mask, [5]], [g], {}


def _nll_backward(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
    go, x = _t(lib, (), 1), _t(lib, (3, 4), 2)
    target = lib.tensor([0, 3, 1])
    return [go, x, target, None, 1, -100, lib.tensor(3.0, dtype=lib.float64)], [go, x], {}


def _batch_norm_backward_args(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
    g, x, w = _t(lib, (2, 3, 4), 1), _t(lib, (2, 3, 4), 2), _t(lib, (3,), 3)
    x_ = x.detach()
    mean = x_.mean([0, 2])
    invstd = 1 / (x_.var([0, 2], unbiased=False) + 1e-5).sqrt()
    return [g, x, w, None, None, mean, invstd, True, 1e-5, [True, True, True]], [g, x, w], {}


def _group_norm_backward_args(lib: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
    g, x, w = _t(lib, (2, 3, 4), 1), _t(lib, (2, 3, 4), 2), _t(lib, (3,), 3)
    _, mean, rstd = lib.ops.aten.native_group_norm.default(x.detach(), None, None, 2, 3, 4, 1, 1e-5)
    return [g, x, mean, rstd, w, 2, 3, 4, 1, [True, True, True]], [g, x, w], {}


def _clamp_tensor(name: str) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x, lo, hi = _t(lib, (2, 3), 1), _t(lib, (2, 3), 2, -1, 0), _t(lib, (3,), 3, 0, 1)
        y = getattr(x.clone(), name)(lo, hi)
        return [y], [x, lo, hi]
    return case


def _masked(name: str, value: Any) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x = _t(lib, (2, 3), 1)
        mask = lib.tensor([[True, False, True], [False, True, False]])
        v = value(lib) if callable(value) else value
        y = getattr(x.clone(), name)(mask, v)
        return [y], [x] + ([v] if callable(value) else [])
    return case


def _scatter_inplace(name: str, *args: Any) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x, src = _t(lib, (3, 4), 1), _t(lib, (2, 4), 2)
        index = lib.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])
        call_args = [src if a == "src" else a for a in args]
        y = getattr(x.clone(), name)(0, index, *call_args)
        return [y], [x] + ([src] if "src" in args else [])
    return case


def _cumulative_inplace(name: str) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x = _t(lib, (2, 3), 1, 0.5, 2)
        return [getattr(x.clone(), name)(1)], [x]
    return case


def _norm(p: Any, *, dim: Any = None, keepdim: bool = False) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x = _t(lib, (3, 4), 1)
        a = lib.ops.aten
        if dim is None:
            return [a.norm.Scalar(x, p)], [x]
        return [a.norm.ScalarOpt_dim(x, p, dim, keepdim)], [x]
    return case


def _vector_norm(ord: Any, dim: Any = None, keepdim: bool = False) -> Callable[[Any], Any]:  # noqa: A002
    def case(lib: Any) -> Any:
        x = _t(lib, (3, 4), 1)
        return [lib.ops.aten.linalg_vector_norm.default(x, ord, dim, keepdim)], [x]
    return case


def _view_then_inplace(lib: Any) -> Any:
    """An in-place op on a view: the base's CopySlices node (new_empty_strided, copy_, fn, copy_)."""
    x = _t(lib, (3, 4), 1)
    base = x.clone()
    base[1].mul_(_t(lib, (4,), 2))
    return [base], [x]


def _prod_with_zero(dim: Any) -> Callable[[Any], Any]:
    def case(lib: Any) -> Any:
        x = lib.tensor([[1.5, 0.0, 2.0], [0.5, 3.0, -1.0]], dtype=lib.float64).requires_grad_()
        return [x.prod() if dim is None else x.prod(dim)], [x]
    return case


def _cumprod_with_zero(lib: Any) -> Any:
    x = lib.tensor([[1.5, 0.0, 2.0, 0.0], [0.5, 3.0, -1.0, 2.0]], dtype=lib.float64).requires_grad_()
    return [x.cumprod(1)], [x]


EXTRA: dict[str, Callable[[Any], Any]] = {
    # in-place unary ops (their formula reads the saved input or result)
    **{f"{n}_": _inplace_unary(f"{n}_") for n in (
        "abs", "neg", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "acos", "asin", "atan", "erf",
        "expm1", "log1p", "tan", "sinh", "cosh", "sgn", "sign", "ceil", "floor", "round", "trunc", "frac",
        "nan_to_num", "asinh", "atanh", "erfc", "exp2", "sinc", "deg2rad", "rad2deg")},
    "deg2rad": _aten("deg2rad", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "rad2deg": _aten("rad2deg", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    **{f"{n}_": _inplace_unary(f"{n}_", 0.5, 2.0) for n in ("log", "log2", "log10", "sqrt", "rsqrt", "acosh")},
    "round_.decimals": _inplace_unary("round_", -2, 2),
    "round.decimals-grad": lambda lib: ([_t(lib, (2, 3), 1).round(decimals=1)], []),
    "ceil": _aten("ceil", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "floor": _aten("floor", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "round": _aten("round", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "trunc": _aten("trunc", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "frac": _aten("frac", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "sgn": _aten("sgn", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "sign": _aten("sign", lambda lib: ([x := _t(lib, (2, 3), 1)], [x], {})),
    "rot90": _aten("rot90", lambda lib: ([x := _t(lib, (2, 3, 4), 1), 1, [0, 2]], [x], {})),
    "rot90-k3": _aten("rot90", lambda lib: ([x := _t(lib, (2, 3), 1), -1], [x], {})),
    "diag_embed": _aten("diag_embed", lambda lib: ([x := _t(lib, (2, 3), 1), 1, 0, 2], [x], {})),
    **{name: _aten(name, lambda lib, _n=name: (lambda x: (
        [x.clone() if "_." in _n else x, 1, lib.tensor([0, 2, 0]), 1.5], [x], {}))(_t(lib, (3, 4), 1)))
       for name in ("index_fill.int_Scalar", "index_fill_.int_Scalar")},
    **{name: _aten(name, lambda lib, _n=name: (lambda x, v: (
        [x.clone() if "_." in _n else x, 0, lib.tensor([2, 0, 2]), v], [x, v], {}))(_t(lib, (3, 4), 1), _t(lib, (), 2)))
       for name in ("index_fill.int_Tensor", "index_fill_.int_Tensor")},
    "_unique": _aten("_unique", lambda lib: ([x := _t(lib, (5,), 1), False], [x], {})),
    "_unique2": _aten("_unique2", lambda lib: ([x := _t(lib, (5,), 1)], [x], {})),
    "unique_consecutive": _aten("unique_consecutive", lambda lib: ([x := _t(lib, (5,), 1)], [x], {})),
    "unique_dim": _aten("unique_dim", lambda lib: ([x := _t(lib, (3, 2), 1), 0], [x], {})),
    "unique_dim_consecutive": _aten("unique_dim_consecutive", lambda lib: ([x := _t(lib, (3, 2), 1), 1], [x], {})),
    "trace": _aten("trace", lambda lib: ([x := _t(lib, (3, 4), 1)], [x], {})),
    "cummax": _aten("cummax", lambda lib: ([x := _t(lib, (3, 4), 1), 1], [x], {})),
    "cummin": _aten("cummin", lambda lib: ([x := _t(lib, (3, 4), 1), 0], [x], {})),
    "logcumsumexp": _aten("logcumsumexp", lambda lib: ([x := _t(lib, (3, 4), 1), 1], [x], {})),
    "frexp": _aten("frexp.Tensor", lambda lib: ([x := _t(lib, (3, 4), 1)], [x], {})),
    "aminmax": _aten("aminmax", lambda lib: ([x := _t(lib, (3, 4), 1)], [x], {"dim": 1})),
    **{f"{name}{suffix}": _aten(f"{name}{suffix}", lambda lib, _s=suffix: (
        [x := _t(lib, (3, 4), 1), *([1] if _s else [])], [x], {})) for name in ("median", "nanmedian")
       for suffix in ("", ".dim")},
    **{name: _aten(name, lambda lib, _n=name: (lambda s, b1, b2: (
        [s.clone() if _n.endswith("_") else s, b1, b2], [s, b1, b2], {"beta": 0.5, "alpha": 2}))(
        _t(lib, (2, 3, 5) if "bad" in _n else (3, 5), 1), _t(lib, (2, 3, 4), 2), _t(lib, (2, 4, 5), 3)))
       for name in ("baddbmm", "baddbmm_", "addbmm", "addbmm_")},
    "bincount": _aten("bincount", lambda lib: ([lib.tensor([0, 2, 2]), w := _t(lib, (3,), 1)], [w], {})),
    "linalg_cross": _aten("linalg_cross", lambda lib: ([x := _t(lib, (2, 3), 1), y := _t(lib, (1, 3), 2)], [x, y],
                                                       {"dim": 1})),
    "mode": _aten("mode", lambda lib: ([x := _t(lib, (3, 4), 1), 0], [x], {})),
    "kthvalue": _aten("kthvalue", lambda lib: ([x := _t(lib, (3, 4), 1), 2, 0], [x], {})),
    "nansum": _aten("nansum", lambda lib: ([x := _t(lib, (3, 4), 1), [1]], [x], {})),
    "aminmax-all": _aten("aminmax", lambda lib: ([x := _t(lib, (3, 4), 1)], [x], {"keepdim": True})),
    "_logcumsumexp": _aten("_logcumsumexp", lambda lib: ([x := _t(lib, (3, 4), 1), 0], [x], {})),
    "trace-tall": _aten("trace", lambda lib: ([x := _t(lib, (4, 2), 1)], [x], {})),
    "diagonal_copy": _aten("diagonal_copy", lambda lib: ([x := _t(lib, (3, 4), 1), -1], [x], {})),
    "lgamma_": _inplace_unary("lgamma_", 0.5, 3.0), "digamma_": _inplace_unary("digamma_", 0.5, 3.0),
    "erfinv_": _inplace_unary("erfinv_"), "polygamma_": _inplace_unary("polygamma_", 0.5, 3.0, 2),
    "polygamma": _aten("polygamma", lambda lib: ([2, x := _t(lib, (2, 3), 1, 0.5, 3.0)], [x], {})),
    "gelu_": _inplace_unary("gelu_"), "elu_": _inplace_unary("elu_"), "silu_": _inplace_unary("silu_"),
    "hardtanh_": _inplace_unary("hardtanh_"), "leaky_relu_": _inplace_unary("leaky_relu_"),
    "clamp_": _inplace_unary("clamp_", -2, 2, -0.5, 0.5), "clamp_min_": _inplace_unary("clamp_min_", -2, 2, 0.1),
    "clamp_.Tensor": _clamp_tensor("clamp_"), "clamp.Tensor-both": _clamp_tensor("clamp"),
    "clamp_max_": _inplace_unary("clamp_max_", -2, 2, 0.1),
    "clamp_max_.Tensor": lambda lib: (lambda x, m: ([x.clone().clamp_max_(m)], [x, m]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2)),
    "clamp_min_.Tensor": lambda lib: (lambda x, m: ([x.clone().clamp_min_(m)], [x, m]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2)),
    "pow_.Scalar": _inplace_unary("pow_", 0.5, 2, 2.5),
    "pow_.Tensor": _inplace_binary("pow_"),
    "pow.Tensor_Scalar-zero": lambda lib: ([(x := _t(lib, (2, 3), 1)) ** 0], [x]),
    "pow.Scalar-zero-base": lambda lib: ([lib.pow(0.0, x := _t(lib, (2, 3), 1))], [x]),
    "pow.Tensor_Tensor-float32-base": lambda lib: (lambda x, e: ([lib.pow(x, e)], [x, e]))(
        lib.tensor([[0.0, 2.0], [1.5, 3.0]], dtype=lib.float32).requires_grad_(), _t(lib, (2, 2), 2, 0.5, 2)),
    # in-place binary and ternary ops
    **{f"{n}_.Tensor": _inplace_binary(f"{n}_") for n in ("add", "sub", "mul", "div", "fmod", "remainder", "atan2")},
    **{f"{n}_": _inplace_binary(f"{n}_") for n in ("hypot", "nextafter")},
    **{n: (lambda lib, _n=n: (lambda x, o: ([getattr(lib, _n)(x, o)], [x, o]))(_t(lib, (2, 3), 1), _t(lib, (2, 3), 2)))
       for n in ("hypot", "nextafter", "copysign", "logaddexp", "logaddexp2", "fmax", "fmin")},
    "fmax-nan-and-broadcast": lambda lib: (lambda x, o: ([lib.fmax(x, o)], [x, o]))(
        lib.tensor([[1.0, float("nan")], [3.0, -1.0]]).requires_grad_(),
        lib.tensor([float("nan"), 0.5]).requires_grad_()),
    "copysign_.Tensor": _inplace_binary("copysign_", low=-2.0),
    "copysign_.Scalar": _inplace_binary("copysign_", -1.5, low=-2.0),
    "copysign.Scalar": lambda lib: ([lib.copysign(x := _t(lib, (2, 3), 1), -1.5)], [x]),
    **{f"{n}_.Scalar": _inplace_binary(f"{n}_", 1.5) for n in ("add", "sub", "mul", "div", "fmod", "remainder")},
    "div_.Tensor_mode": lambda lib: (lambda x, o: ([x.clone().div_(o, rounding_mode="floor")], [x, o]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2, 0.5, 2)),
    "div_.Scalar_mode": lambda lib: (lambda x: ([x.clone().div_(1.5, rounding_mode="trunc")], [x]))(_t(lib, (2, 3), 1)),
    "sub_.Tensor-alpha": lambda lib: (lambda x, o: ([x.clone().sub_(o, alpha=2)], [x, o]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2)),
    "addcmul_": lambda lib: (lambda x, a, b: ([x.clone().addcmul_(a, b, value=0.5)], [x, a, b]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2), _t(lib, (2, 3), 3)),
    "addcdiv_": lambda lib: (lambda x, a, b: ([x.clone().addcdiv_(a, b, value=0.5)], [x, a, b]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2), _t(lib, (2, 3), 3, 0.5, 2)),
    "lerp_.Scalar": lambda lib: (lambda x, e: ([x.clone().lerp_(e, 0.3)], [x, e]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2)),
    "lerp_.Tensor": lambda lib: (lambda x, e, w: ([x.clone().lerp_(e, w)], [x, e, w]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2), _t(lib, (2, 3), 3, 0, 1)),
    "addmm_": lambda lib: (lambda x, a, b: ([x.clone().addmm_(a, b)], [x, a, b]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 4), 2), _t(lib, (4, 3), 3)),
    **{f"{c}_.Scalar": lambda lib, c=c: ([getattr((x := _t(lib, (2, 3), 1)).clone(), f"{c}_")(0.25) * x], [x])
       for c in ("eq", "ne", "lt", "le", "gt", "ge")},
    **{f"{c}_.Tensor": lambda lib, c=c: (lambda x, o: ([getattr(x.clone(), f"{c}_")(o) * x], [x, o]))(
        _t(lib, (2, 3), 1), _t(lib, (3,), 2)) for c in ("eq", "ne", "lt", "le", "gt", "ge")},
    "fill_.Scalar": lambda lib: ([(x := _t(lib, (2, 3), 1)).clone().fill_(2.0) * x], [x]),
    "fill_.Tensor": lambda lib: (lambda x, v: ([x.clone().fill_(v) * x], [x, v]))(_t(lib, (2, 3), 1), _t(lib, (), 2)),
    "zero_": lambda lib: ([(x := _t(lib, (2, 3), 1)).clone().zero_() + x], [x]),
    "copy_": lambda lib: (lambda x, s: ([x.clone().copy_(s)], [x, s]))(_t(lib, (2, 3), 1), _t(lib, (3,), 2)),
    "cumsum_": _cumulative_inplace("cumsum_"), "cumprod_": _cumulative_inplace("cumprod_"),
    "cumprod-zeros": _cumprod_with_zero,
    "cumprod-zeros-double": _double(lambda lib: (lambda x: (x.cumprod(1), [x]))(
        lib.tensor([[1.5, 0.0, 2.0], [0.5, 3.0, -1.0]], dtype=lib.float64).requires_grad_())),
    "prod-zero": _prod_with_zero(None), "prod.dim_int-zero": _prod_with_zero(1),
    "tril_": lambda lib: ([(x := _t(lib, (3, 3), 1)).clone().tril_()], [x]),
    "triu_": lambda lib: ([(x := _t(lib, (3, 3), 1)).clone().triu_(1)], [x]),
    "masked_fill_.Scalar": _masked("masked_fill_", 0.5),
    "masked_fill_.Tensor": _masked("masked_fill_", lambda lib: _t(lib, (), 9)),
    "masked_fill.Tensor": _masked("masked_fill", lambda lib: _t(lib, (), 9)),
    "masked_scatter_": _masked("masked_scatter_", lambda lib: _t(lib, (6,), 9)),
    "masked_select": lambda lib: ([(x := _t(lib, (2, 3), 1)).masked_select(lib.tensor([True, False, True]))], [x]),
    "scatter_.src": _scatter_inplace("scatter_", "src"), "scatter_.value": _scatter_inplace("scatter_", 1.5),
    "scatter_add_": _scatter_inplace("scatter_add_", "src"),
    "scatter_reduce_.two": _scatter_inplace("scatter_reduce_", "src", "amax"),
    "scatter.value_reduce": lambda lib: (
        [(x := _t(lib, (3, 4), 1)).scatter(0, lib.tensor([[0, 1, 2, 0]]), 2.0, reduce="multiply")], [x]),
    "index_put_": lambda lib: (lambda x, v: ([x.clone().index_put_((lib.tensor([0, 2]),), v)], [x, v]))(
        _t(lib, (3, 4), 1), _t(lib, (2, 4), 2)),
    "index_put-accumulate": lambda lib: (lambda x, v: ([x.index_put((lib.tensor([0, 0]),), v, True)], [x, v]))(
        _t(lib, (3, 4), 1), _t(lib, (2, 4), 2)),
    "view-then-inplace": _view_then_inplace,
    "as_strided-overlapping-output": lambda lib: ([(x := _t(lib, (6,), 1)).as_strided((2, 2), (1, 1), 1)], [x]),
    "as_strided-overlapping-input": lambda lib: ([(x := _t(lib, (3,), 1)).expand(3, 3).as_strided((2,), (1,), 1)], [x]),
    "reshape-noncontig": lambda lib: ([(x := _t(lib, (3, 4), 1)).t().reshape(2, 6)], [x]),
    # the vector products, index_add/put and xlogy/logit: in-place forms, double backward, logit_backward
    "index_add_": lambda lib: (lambda x, s: ([x.clone().index_add_(1, lib.tensor([0, 2, 2]), s, alpha=2)], [x, s]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2)),
    "put_": lambda lib: (lambda x, s: ([x.clone().put_(lib.tensor([0, 5, 1]), s)], [x, s]))(
        _t(lib, (2, 3), 1), _t(lib, (3,), 2)),
    "put_-accumulate": lambda lib: (lambda x, s: ([x.clone().put_(lib.tensor([0, 5, 0]), s, True)], [x, s]))(
        _t(lib, (2, 3), 1), _t(lib, (3,), 2)),
    "xlogy_.Tensor": _inplace_binary("xlogy_"),
    "xlogy_.Scalar_Other": _inplace_binary("xlogy_", 1.5),
    "xlogy_.Scalar_Other-negative": _inplace_binary("xlogy_", -1.5),
    "xlogy-double": _double(lambda lib: (lambda x, y: (lib.xlogy(x, y), [x, y]))(
        _t(lib, (2, 3), 1, 0, 2), _t(lib, (2, 3), 2, 0.5, 2))),
    "logit_": _inplace_unary("logit_", 0.1, 0.9),
    "logit_.eps": _inplace_unary("logit_", 0.1, 0.9, 0.2),
    "logit-double": _unary_then_double(lambda lib, x: lib.logit(x), 0.1, 0.9),
    "logit-eps-double": _unary_then_double(lambda lib, x: lib.logit(x, 0.2), 0.1, 0.9),
    "logit_backward": _aten("logit_backward", _two((2, 3), low=0.1, high=0.9)),
    "dot-double": _double(lambda lib: (lambda a, b: (lib.dot(a, b), [a, b]))(_t(lib, (3,), 1), _t(lib, (3,), 2))),
    "mv-double": _double(lambda lib: (lambda a, b: (lib.mv(a, b), [a, b]))(_t(lib, (2, 3), 1), _t(lib, (3,), 2))),
    "index_add-double": _double(lambda lib: (lambda x, s: (x.index_add(0, lib.tensor([1, 1]), s, alpha=3), [x, s]))(
        _t(lib, (3,), 1), _t(lib, (2,), 2))),
    "std_mean.correction": lambda lib: (lambda x: (list(lib.std_mean(x, 1)), [x]))(_t(lib, (3, 4), 1)),
    "var.correction-dim": lambda lib: ([(x := _t(lib, (3, 4), 1)).var(1)], [x]),
    "var.correction-small": lambda lib: ([(x := _t(lib, (1,), 1)).var()], [x]),
    "norm.Scalar-p1": _norm(1), "norm.Scalar-p3": _norm(3), "norm.Scalar-p1.5": _norm(1.5),
    "norm.Scalar-p0.5": _norm(0.5),
    "norm.Scalar-inf": _norm(float("inf")), "norm.ScalarOpt_dim": _norm(2, dim=[1]),
    "norm.ScalarOpt_dim-keepdim": _norm(3, dim=[0, 1], keepdim=True),
    "linalg_vector_norm-dim": _vector_norm(2, [1]), "linalg_vector_norm-dims": _vector_norm(2, [0, 1]),
    "logsumexp-dims": lambda lib: ([lib.logsumexp(x := _t(lib, (3, 4), 1), [0, 1])], [x]),
    "amax-negative-dim": lambda lib: ([lib.amax(x := _t(lib, (3, 4), 1), -1)], [x]),
    "mse_loss-target": lambda lib: (lambda x, y: ([lib.nn.functional.mse_loss(x, y)], [x, y]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2)),
    "cross_entropy": lambda lib: (lambda x: ([lib.nn.functional.cross_entropy(x, lib.tensor([0, 2]))], [x]))(
        _t(lib, (2, 3), 1)),
    "binary_cross_entropy_with_logits": lambda lib: (lambda x, y: (
        [lib.nn.functional.binary_cross_entropy_with_logits(x, y)], [x, y]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2, 0, 1)),
    "binary_cross_entropy_with_logits-weights": lambda lib: (lambda x, y, w, pw: (
        [lib.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw)], [x, y]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2, 0, 1), _t(lib, (3,), 3, 0, 1, grad=False),
        _t(lib, (3,), 4, 0, 1, grad=False)),
    "binary_cross_entropy-target": lambda lib: (lambda x, y, w: (
        [lib.nn.functional.binary_cross_entropy(x, y, weight=w)], [x, y]))(
        _t(lib, (2, 3), 1, 0.1, 0.9), _t(lib, (2, 3), 2, 0, 1), _t(lib, (3,), 3, 0, 1, grad=False)),
    "binary_cross_entropy-double": _double(lambda lib: (lambda x, y: (
        lib.nn.functional.binary_cross_entropy(x, y), [x]))(_t(lib, (2, 3), 1, 0.1, 0.9), _t(lib, (2, 3), 2, 0, 1))),
    # the backward operators, differentiated (double backward)
    "tanh_backward": _aten("tanh_backward", _two((2, 3), low=-0.9, high=0.9)),
    "sigmoid_backward": _aten("sigmoid_backward", _two((2, 3), low=0.1, high=0.9)),
    "threshold_backward": _aten("threshold_backward", _two((2, 3), 0.0)),
    "silu_backward": _aten("silu_backward", _two((2, 3))),
    "_softmax_backward_data": _aten("_softmax_backward_data", _softmax_data),
    "_log_softmax_backward_data": _aten("_log_softmax_backward_data", _log_softmax_data),
    "mse_loss_backward": _aten("mse_loss_backward", lambda lib: (
        lambda go, x, y: ([go, x, y, 1], [go, x, y], {}))(_t(lib, (), 1), _t(lib, (2, 3), 2), _t(lib, (2, 3), 3))),
    "nll_loss_backward": _aten("nll_loss_backward", _nll_backward),
    "select_backward": _aten("select_backward", _grad_and((4,), [3, 4], 0, 1)),
    "slice_backward": _aten("slice_backward", _grad_and((3, 2), [3, 4], 1, 0, 4, 2)),
    "diagonal_backward": _aten("diagonal_backward", _grad_and((3,), [3, 4], 0, 0, 1)),
    "masked_scatter_backward": _aten("masked_scatter_backward", _masked_scatter_backward),
    "tanh-double": _unary_then_double(lambda lib, x: lib.tanh(x)),
    "sigmoid-double": _unary_then_double(lambda lib, x: lib.sigmoid(x)),
    "softmax-double": _unary_then_double(lambda lib, x: lib.softmax(x, 1)),
    "log_softmax-double": _unary_then_double(lambda lib, x: lib.log_softmax(x, 1)),
    "relu-double": _unary_then_double(lambda lib, x: lib.relu(x) * x),
    "silu-double": _unary_then_double(lambda lib, x: lib.nn.functional.silu(x)),
    "mse_loss-double": _double(lambda lib: (lambda x, y: (lib.nn.functional.mse_loss(x, y), [x, y]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2))),
    "select-double": _unary_then_double(lambda lib, x: x[1] * x[1]),
    "slice-double": _unary_then_double(lambda lib, x: x[:, 1:] * x[:, 1:]),
    "diagonal-double": _unary_then_double(lambda lib, x: x.diagonal() * x.diagonal()),
    "masked_scatter-double": _double(lambda lib: (lambda x, s: (
        x.masked_scatter(lib.tensor([[True, False, True], [False, True, False]]), s) ** 2, [x, s]))(
        _t(lib, (2, 3), 1), _t(lib, (6,), 2))),
    "softplus-double": _unary_then_double(lambda lib, x: lib.nn.functional.softplus(x, beta=2.0)),
    "logsigmoid-double": _unary_then_double(lambda lib, x: lib.nn.functional.logsigmoid(x)),
    "hardtanh-double": _unary_then_double(lambda lib, x: lib.nn.functional.hardtanh(x) * x),
    "leaky_relu-double": _unary_then_double(lambda lib, x: lib.nn.functional.leaky_relu(x) * x),
    "elu-double": _unary_then_double(lambda lib, x: lib.nn.functional.elu(x)),
    "gelu-double": _unary_then_double(lambda lib, x: lib.nn.functional.gelu(x)),
    "smooth_l1-double": _double(lambda lib: (lambda x, y: (lib.nn.functional.smooth_l1_loss(x, y, beta=0.5), [x, y]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2))),
    "huber-double": _double(lambda lib: (lambda x, y: (lib.nn.functional.huber_loss(x, y, delta=0.5), [x, y]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2))),
    "cross_entropy-double": _double(lambda lib: (lambda x: (
        lib.nn.functional.cross_entropy(x * x, lib.tensor([0, 2])), [x]))(_t(lib, (2, 3), 1))),
    "atan2-double": _double(lambda lib: (lambda x, y: (lib.atan2(x, y), [x, y]))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2))),
    "max-double": _unary_then_double(lambda lib, x: x.max() * x.sum()),
    "clamp-double": _unary_then_double(lambda lib, x: x.clamp(-0.5, 0.5) * x),
    # operators no entry above differentiates: called as aten overloads
    **{f"{n}_.Scalar-aten": _aten(f"{n}_.Scalar", lambda lib: (lambda x: ([x.clone(), 1.5], [x], {}))(
        _t(lib, (2, 3), 1))) for n in ("add", "sub", "mul", "div")},
    "div_.Scalar_mode-aten": _aten("div_.Scalar_mode", lambda lib: (lambda x: ([x.clone(), 1.5], [x], {
        "rounding_mode": "floor"}))(_t(lib, (2, 3), 1))),
    "round_.decimals-aten": _aten("round_.decimals", lambda lib: (lambda x: ([x.clone()], [x], {"decimals": 1}))(
        _t(lib, (2, 3), 1))),
    "_reshape_alias": _aten("_reshape_alias", lambda lib: (lambda x: ([x, [4, 3], [3, 1]], [x], {}))(
        _t(lib, (3, 4), 1))),
    "_index_put_impl": _aten("_index_put_impl", lambda lib: (lambda x, v: ([x, [lib.tensor([0, 2])], v], [x, v], {}))(
        _t(lib, (3, 4), 1), _t(lib, (2, 4), 2))),
    "_index_put_impl_": _aten("_index_put_impl_", lambda lib: (lambda x, v: (
        [x.clone(), [lib.tensor([0, 2])], v], [x, v], {}))(_t(lib, (3, 4), 1), _t(lib, (2, 4), 2))),
    "_euclidean_dist": _aten("_euclidean_dist", lambda lib: (lambda a, b: ([a, b], [a, b], {}))(
        _t(lib, (3, 4), 1), _t(lib, (2, 4), 2))),
    "_trilinear": _aten("_trilinear", lambda lib: (lambda a, b, c: ([a, b, c, [], [], [], []], [a, b, c], {}))(
        _t(lib, (2, 3), 1), _t(lib, (2, 3), 2), _t(lib, (2, 3), 3))),
    "_convolution": _aten("_convolution", lambda lib: (lambda x, w, b: (
        [x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, False, False, False, False], [x, w, b], {}))(
        _t(lib, (1, 2, 4, 4), 1), _t(lib, (3, 2, 3, 3), 2), _t(lib, (3,), 3))),
    "_native_batch_norm_legit": _aten("_native_batch_norm_legit", lambda lib: (lambda x, w, b: (
        [x, w, b, lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64), True, 0.1, 1e-5], [x, w, b], {}))(
        _t(lib, (2, 3, 4), 1), _t(lib, (3,), 2), _t(lib, (3,), 3))),
    "_native_batch_norm_legit.no_stats": _aten("_native_batch_norm_legit.no_stats", lambda lib: (lambda x, w, b: (
        [x, w, b, True, 0.1, 1e-5], [x, w, b], {}))(_t(lib, (2, 3, 4), 1), _t(lib, (3,), 2), _t(lib, (3,), 3))),
    "_native_batch_norm_legit_no_training": _aten("_native_batch_norm_legit_no_training", lambda lib: (
        lambda x, w, b: ([x, w, b, lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64), 0.1, 1e-5],
                         [x, w, b], {}))(_t(lib, (2, 3, 4), 1), _t(lib, (3,), 2), _t(lib, (3,), 3))),
    "norm.ScalarOpt_dtype": _aten("norm.ScalarOpt_dtype", lambda lib: (lambda x: ([x, 2], [x], {"dtype": lib.float64}))(
        _t(lib, (3, 4), 1))),
    "norm.ScalarOpt_dim_dtype": _aten("norm.ScalarOpt_dim_dtype", lambda lib: (lambda x: (
        [x, 2, [1], False], [x], {"dtype": lib.float64}))(_t(lib, (3, 4), 1))),
    "copy": _aten("copy", lambda lib: (lambda x, s: ([x, s], [x, s], {}))(_t(lib, (2, 3), 1), _t(lib, (2, 3), 2))),
    "lift_fresh_copy": _aten("lift_fresh_copy", lambda lib: (lambda x: ([x], [x], {}))(_t(lib, (2, 3), 1))),
    **{name: _aten(name, lambda lib, _n=name: (lambda x, o: (
        [x.clone() if _n.partition(".")[0].endswith("_") else x, o], [x], {}))(_t(lib, (2, 3), 1, 1, 3), 2))
       for name in ("floor_divide.Scalar", "floor_divide_.Scalar")},
    **{name: _aten(name, lambda lib, _n=name: (lambda x, o: (
        [x.clone() if _n.partition(".")[0].endswith("_") else x, o], [x, o], {}))(
        _t(lib, (2, 3), 1, 1, 3), _t(lib, (2, 3), 2, 1, 3))) for name in ("floor_divide", "floor_divide_.Tensor")},
    **{name: _aten(name, lambda lib, _n=name: (lambda x, v: (
        [x.clone() if _n.endswith("_") else x, v], [x, v], {}))(_t(lib, (2, 3), 1), _t(lib, (3,), 2)))
       for name in ("heaviside", "heaviside_")},
    "remainder.Scalar_Tensor": _aten("remainder.Scalar_Tensor", lambda lib: (lambda o: ([2.5, o], [o], {}))(
        _t(lib, (2, 3), 1, 1, 3))),
    **{name: _aten(name, lambda lib, _n=name: (lambda x, s: (
        [x.clone() if "_." in _n else x, 0, lib.tensor([[0, 1, 2, 0]]), s], [x, s], {"reduce": "add"}))(
        _t(lib, (3, 4), 1), _t(lib, (1, 4), 2))) for name in ("scatter.reduce", "scatter_.reduce")},
    "scatter_.value_reduce": _aten("scatter_.value_reduce", lambda lib: (lambda x: (
        [x.clone(), 0, lib.tensor([[0, 1, 2, 0]]), 2.0], [x], {"reduce": "multiply"}))(_t(lib, (3, 4), 1))),
    "_cdist_backward": _double(lambda lib: (lambda a, b: (lib.cdist(a, b), [a, b]))(
        _t(lib, (3, 4), 1), _t(lib, (2, 4), 2))),
    "_pdist_backward": _double(lambda lib: (lambda a: (lib.pdist(a), [a]))(_t(lib, (3, 4), 1))),
    # double backward of the nn operators (their backward operators' derivatives)
    "adaptive_avg_pool2d-double": _unary_then_double(
        lambda lib, x: lib.ops.aten._adaptive_avg_pool2d.default(x.reshape(1, 1, 2, 3), [1, 2])),
    "adaptive_avg_pool3d-double": _unary_then_double(
        lambda lib, x: lib.ops.aten._adaptive_avg_pool3d.default(x.reshape(1, 1, 1, 2, 3), [1, 1, 2])),
    "avg_pool2d-double": _unary_then_double(lambda lib, x: lib.nn.functional.avg_pool2d(x.reshape(1, 1, 2, 3), 2, 1)),
    "avg_pool3d-double": _unary_then_double(
        lambda lib, x: lib.ops.aten.avg_pool3d.default(x.reshape(1, 1, 1, 2, 3), [1, 2, 2], [1, 1, 1])),
    "max_pool2d-double": _unary_then_double(lambda lib, x: lib.nn.functional.max_pool2d(x.reshape(1, 1, 2, 3), 2, 1)),
    "max_pool3d-double": _unary_then_double(
        lambda lib, x: lib.ops.aten.max_pool3d_with_indices.default(x.reshape(1, 1, 1, 2, 3), [1, 2, 2], [1, 1, 1])[0]),
    **{f"{kind}_pad{n}d-double": _unary_then_double(
        lambda lib, x, _k=kind, _n=n: lib.nn.functional.pad(x.reshape((1,) * _n + (2, 3)), (1, 1, 1, 1, 0, 0)[:2 * _n],
                                                            mode=_k))
       for kind in ("reflect", "replicate") for n in (1, 2, 3)},
    "upsample_nearest2d-double": _unary_then_double(
        lambda lib, x: lib.ops.aten.upsample_nearest2d.default(x.reshape(1, 1, 2, 3), [4, 6])),
    "upsample_bilinear2d-double": _unary_then_double(
        lambda lib, x: lib.ops.aten.upsample_bilinear2d.default(x.reshape(1, 1, 2, 3), [4, 6], False)),
    "embedding-double": _double(lambda lib: (lambda w: (lib.nn.functional.embedding(lib.tensor([[0, 2], [1, 0]]), w),
                                                         [w]))(_t(lib, (3, 4), 1))),
    "embedding_bag-double": _double(lambda lib: (lambda w, psw: (lib.nn.functional.embedding_bag(
        lib.tensor([0, 2, 1, 0]), w, lib.tensor([0, 2]), mode="sum", per_sample_weights=psw), [w, psw]))(
        _t(lib, (3, 4), 1), _t(lib, (4,), 2))),
    "embedding_bag-mean-double": _double(lambda lib: (lambda w: (lib.nn.functional.embedding_bag(
        lib.tensor([0, 2, 1, 0]), w, lib.tensor([0, 2]), mode="mean"), [w]))(_t(lib, (3, 4), 1))),
    "batch_norm-double": _double(lambda lib: (lambda x, w, b: (lib.nn.functional.batch_norm(
        x, None, None, w, b, training=True), [x, w, b]))(_t(lib, (2, 3, 4), 1), _t(lib, (3,), 2), _t(lib, (3,), 3))),
    "group_norm-double": _double(lambda lib: (lambda x, w, b: (
        lib.ops.aten.native_group_norm.default(x, w, b, 2, 3, 4, 1, 1e-5)[0], [x, w, b]))(
        _t(lib, (2, 3, 4), 1), _t(lib, (3,), 2), _t(lib, (3,), 3))),
    "native_dropout-double": _double(lambda lib: (lambda x: (lib.native_dropout(x, 0.0, True)[0] * x, [x]))(
        _t(lib, (2, 3), 1))),
    "native_dropout_backward": _aten("native_dropout_backward", lambda lib: (lambda g: (
        [g, lib.tensor([[True, False, True], [True, True, False]]), 2.0], [g], {}))(_t(lib, (2, 3), 1))),
    "native_batch_norm_backward": _aten("native_batch_norm_backward", _batch_norm_backward_args),
    "native_group_norm_backward": _aten("native_group_norm_backward", _group_norm_backward_args),
    "_embedding_bag_dense_backward": _aten("_embedding_bag_dense_backward", lambda lib: (lambda g: (
        [g, lib.tensor([0, 2, 1, 0]), lib.tensor([0, 0, 1, 1]), lib.tensor([2, 2]), lib.tensor([0, 0]), 3, False, 0,
         None], [g], {}))(_t(lib, (2, 4), 1))),
}


def _extra_runs(name: str, lib_name: str) -> tuple[list[str], list[str]] | None:
    lib = _lib(lib_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _MODES[lib_name]() as forward:
            outputs, inputs = EXTRA[name](lib)
    outs = [t for t in outputs if t.requires_grad]
    if not outs:
        return None
    return forward.names, _backward_ops(lib_name, outs, inputs or _leaves(outs), F.seed(name))


def _leaves(outs: list[Any]) -> list[Any]:
    """The leaves behind ``outs`` (cases whose inputs are made inside the call)."""
    found, seen, todo = [], set(), [t.grad_fn for t in outs]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            found.append(node.variable)
        todo.extend(n for n, _ in node.next_functions)
    return found


# --- known differences: the name of an entry or extra case -> why it differs ------------------------------
KNOWN: dict[str, str] = {
    "grid_sampler_2d_backward": "grid_sampler_2d_double_backward is not ported: dispatchcore differentiates "
                                "its own decomposition",
    "convolution_backward": "_convolution_double_backward (Convolution.cpp) is not ported: dispatchcore's "
                            "double backward calls convolution_backward",
    "_slow_conv2d_backward": "see convolution_backward",
    "native_layer_norm_backward": "layer_norm_double_backward is not ported: dispatchcore differentiates "
                                  "its decomposition of native_layer_norm_backward",
    "native_dropout": "torch's CPU native_dropout returns its empty input itself, so autograd.grad skips the "
                      "node; dispatchcore's output is a new tensor",
    "sgn": "sgn_backward of a real tensor is _efficientzerotensor in torch: a tensor with the ZeroTensor dispatch key, "
           "whose fallback and per-op ZeroTensor kernels (and Tensor._is_zerotensor) dispatchcore does not model",
    "sgn_": "see sgn",
    "batch_norm-double": "batchnorm_double_backward is not ported: dispatchcore differentiates its decomposition "
                         "of native_batch_norm_backward",
    "group_norm-double": "infinitely_differentiable_native_group_norm_backward is not ported: dispatchcore's "
                         "native_group_norm backward differentiates its decomposition",
    "native_batch_norm_backward": "see batch_norm-double",
    "embedding_bag-double": "both raise (no derivative of _embedding_bag_backward nor of its per_sample_weights "
                            "backward), from a different node first: the engine's order of ready nodes",
}


# --- the tests -----------------------------------------------------------------------------------------
def _differences(runs_dc: list[Any], runs_torch: list[Any]) -> list[str]:
    found = []
    for mine, theirs in zip(runs_dc, runs_torch):
        if mine is None or theirs is None:
            continue
        key, _, ops_dc = mine
        _, _, ops_torch = theirs
        if ops_dc != ops_torch:
            found.append(f"{key}:\n  dispatchcore: {ops_dc}\n  torch:        {ops_torch}")
    return found


def _check(name: str, differences: list[str]) -> None:
    if name in KNOWN:
        assert differences, f"{name} now matches torch: remove it from KNOWN ({KNOWN[name]})"
        return
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("op", GRAD_ENTRIES, ids=[op.name for op in GRAD_ENTRIES])
def test_backward_calls_torchs_operators_in_torchs_order(op: F.OpInfo) -> None:
    _check(op.name, _differences(_entry_runs(op, "dc"), _entry_runs(op, "torch")))


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_backward_of_extra_cases_calls_torchs_operators_in_torchs_order(name: str) -> None:
    mine, theirs = _extra_runs(name, "dc"), _extra_runs(name, "torch")
    assert (mine is None) == (theirs is None)
    differences = [] if mine is None or mine[1] == theirs[1] else [
        f"{name}:\n  dispatchcore: {mine[1]}\n  torch:        {theirs[1]}"]
    _check(name, differences)


# Derivatives no case reaches, with the reason (random ops: their backward is a zeros_like or a mul)
UNEXERCISED: dict[str, str] = {
    **{f"aten::{name}": "a random op: compared by the random family's own tests" for name in (
        "bernoulli", "bernoulli_.Tensor", "bernoulli_.float", "exponential_", "normal.Tensor_Tensor",
        "normal.Tensor_float", "normal.float_Tensor", "normal_", "random_", "random_.from", "random_.to",
        "uniform_")},
}


@functools.cache
def _exercised() -> frozenset[str]:
    """The aten overloads whose Autograd kernel some case's forward (or first backward) ran."""
    seen: set[str] = set()
    for op in GRAD_ENTRIES:
        for run in _entry_runs(op, "dc"):
            if run is not None:
                seen.update(run[1])
    for name in EXTRA:
        run = _extra_runs(name, "dc")
        if run is not None:
            seen.update(run[0])
    return frozenset(f"aten::{n.removesuffix('.default')}" for n in seen)


def test_every_derivative_is_exercised() -> None:
    from dispatchcore.autograd.kernels import _derivatives

    missing = sorted(set(_derivatives) - _exercised() - set(UNEXERCISED))
    assert not missing, f"derivatives no case reaches (add an EXTRA case or an UNEXERCISED reason): {missing}"


# --- the backward operators added for this: values, dtypes, layouts, errors and meta geometry ------------
def _arg(lib: Any, shape: tuple[int, ...], seed: int, dtype: str = "float64", device: str = "cpu") -> Any:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape) if dtype.startswith("float") else rng.integers(-3, 3, shape)
    return lib.tensor(a.astype(dtype), device=device)


_MASK = [[True, False, True], [False, True, True]]
_BACKWARD_OP_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    **{f"{name}-{a}-{b}": lambda lib, ops, _n=name, _a=a, _b=b: getattr(ops, _n).default(
        _arg(lib, (3, 4), 1, _a), _arg(lib, (3, 4), 2, _b))
       for name in ("tanh_backward", "sigmoid_backward")
       for a, b in (("float64", "float64"), ("float32", "float32"), ("float32", "float64"), ("float32", "int64"),
                    ("int64", "int64"), ("bool", "bool"))},
    **{f"{name}-{case}": lambda lib, ops, _n=name, _f=f: _f(lib, getattr(ops, _n))
       for name in ("tanh_backward", "sigmoid_backward") for case, f in {
           "broadcast": lambda lib, op: op.default(_arg(lib, (2, 1), 1), _arg(lib, (3,), 2)),
           "noncontig": lambda lib, op: op.default(_arg(lib, (4, 3), 1).t(), _arg(lib, (3, 4), 2)),
           "zero-d": lambda lib, op: op.default(_arg(lib, (), 1), _arg(lib, (), 2)),
           "grad_input": lambda lib, op: op.grad_input(_arg(lib, (3,), 1, "float32"), _arg(lib, (3,), 2, "float32"),
                                                       grad_input=lib.empty(0, dtype=lib.float64)),
           "grad_input-long": lambda lib, op: op.grad_input(_arg(lib, (3,), 1), _arg(lib, (3,), 2),
                                                            grad_input=lib.empty(0, dtype=lib.int64)),
           "meta": lambda lib, op: op.default(_arg(lib, (4, 3), 1, device="meta").t(),
                                              _arg(lib, (3, 4), 2, "float32", device="meta")),
       }.items()},
    **{f"_softmax_backward_data-dim{d}": lambda lib, ops, _d=d: ops._softmax_backward_data.default(
        _arg(lib, (3, 4), 1), ops._softmax.default(_arg(lib, (3, 4), 2), _d, False), _d, lib.float64)
       for d in (0, 1, -1)},
    "_softmax_backward_data-zero-d": lambda lib, ops: ops._softmax_backward_data.default(
        _arg(lib, (), 1), _arg(lib, (), 2), 0, lib.float64),
    "_softmax_backward_data-noncontig": lambda lib, ops: ops._softmax_backward_data.default(
        _arg(lib, (4, 3), 1).t(), _arg(lib, (4, 3), 2).t(), 1, lib.float64),
    "_softmax_backward_data-size": lambda lib, ops: ops._softmax_backward_data.default(
        _arg(lib, (3, 4), 1), _arg(lib, (4, 4), 2), 1, lib.float64),
    "_softmax_backward_data-dim": lambda lib, ops: ops._softmax_backward_data.default(
        _arg(lib, (3, 4), 1), _arg(lib, (3, 4), 2), 5, lib.float64),
    "_softmax_backward_data-dtypes": lambda lib, ops: ops._softmax_backward_data.default(
        _arg(lib, (3, 4), 1, "float32"), _arg(lib, (3, 4), 2), 1, lib.float32),
    "_softmax_backward_data-half-to-float": lambda lib, ops: ops._softmax_backward_data.default(
        _arg(lib, (3, 4), 1, "float32"), _arg(lib, (3, 4), 2, "float32"), 1, lib.float16),
    **{f"_softmax_backward_data-long-dim{d}": lambda lib, ops, _d=d: ops._softmax_backward_data.default(
        _arg(lib, (3, 4), 1, "int64"), _arg(lib, (3, 4), 2, "int64"), _d, lib.int64) for d in (0, 1)},
    "_softmax_backward_data.out": lambda lib, ops: ops._softmax_backward_data.out(
        _arg(lib, (3, 4), 1), _arg(lib, (3, 4), 2), 1, lib.float64, grad_input=lib.empty(0, dtype=lib.float64)),
    "_softmax_backward_data-meta": lambda lib, ops: ops._softmax_backward_data.default(
        _arg(lib, (3, 4), 1, "float32", "meta"), _arg(lib, (3, 4), 2, "float32", "meta"), 1, lib.float16),
    "_log_softmax_backward_data-zero-d": lambda lib, ops: ops._log_softmax_backward_data.default(
        _arg(lib, (), 1), _arg(lib, (), 2), 0, lib.float64),
    **{f"mse_loss_backward-reduction{r}": lambda lib, ops, _r=r: ops.mse_loss_backward.default(
        _arg(lib, (3, 4) if _r == 0 else (), 1), _arg(lib, (3, 4), 2), _arg(lib, (3, 4), 3), _r) for r in (0, 1, 2)},
    "mse_loss_backward-float32": lambda lib, ops: ops.mse_loss_backward.default(
        _arg(lib, (), 1, "float32"), _arg(lib, (3, 4), 2, "float32"), _arg(lib, (3, 4), 3, "float32"), 1),
    "mse_loss_backward-mixed": lambda lib, ops: ops.mse_loss_backward.default(
        _arg(lib, (), 1, "float32"), _arg(lib, (3, 4), 2, "float32"), _arg(lib, (3, 4), 3), 1),
    "mse_loss_backward-broadcast": lambda lib, ops: ops.mse_loss_backward.default(
        _arg(lib, (), 1), _arg(lib, (3,), 2), _arg(lib, (4, 3), 3), 1),
    "mse_loss_backward-long": lambda lib, ops: ops.mse_loss_backward.default(
        _arg(lib, (), 1), _arg(lib, (3,), 2, "int64"), _arg(lib, (3,), 3, "int64"), 1),
    "mse_loss_backward-zero-d": lambda lib, ops: ops.mse_loss_backward.default(
        _arg(lib, (), 1), _arg(lib, (), 2), _arg(lib, (), 3), 1),
    "mse_loss_backward-noncontig": lambda lib, ops: ops.mse_loss_backward.default(
        _arg(lib, (), 1), _arg(lib, (4, 3), 2).t(), _arg(lib, (4, 3), 3).t(), 1),
    "mse_loss_backward.grad_input": lambda lib, ops: ops.mse_loss_backward.grad_input(
        _arg(lib, (), 1), _arg(lib, (3,), 2, "float32"), _arg(lib, (3,), 3, "float32"), 1,
        grad_input=lib.empty(0, dtype=lib.float64)),
    "mse_loss_backward-meta": lambda lib, ops: ops.mse_loss_backward.default(
        _arg(lib, (), 1, device="meta"), _arg(lib, (4, 3), 2, "float32", "meta").t(),
        _arg(lib, (3, 4), 3, device="meta"), 1),
    "select_backward": lambda lib, ops: ops.select_backward.default(_arg(lib, (2, 4), 1), [2, 3, 4], 1, -1),
    "slice_backward": lambda lib, ops: ops.slice_backward.default(_arg(lib, (3, 2), 1), [3, 4], 1, 1, 2**63 - 1, 2),
    "diagonal_backward": lambda lib, ops: ops.diagonal_backward.default(_arg(lib, (2,), 1), [3, 4], 1, 1, 0),
    "select_backward.out": lambda lib, ops: ops.select_backward.out(
        _arg(lib, (4,), 1), [3, 4], 0, 1, out=lib.empty(0, dtype=lib.float64)),
    "slice_backward.out": lambda lib, ops: ops.slice_backward.out(
        _arg(lib, (3, 2), 1), [3, 4], 1, 0, 4, 2, out=lib.empty(0, dtype=lib.float64)),
    "diagonal_backward.out": lambda lib, ops: ops.diagonal_backward.out(
        _arg(lib, (3,), 1), [3, 4], 0, 0, 1, out=lib.empty(0, dtype=lib.float64)),
    "select_backward-meta": lambda lib, ops: ops.select_backward.default(
        _arg(lib, (2, 4), 1, device="meta"), [2, 3, 4], 1, -1),
    "slice_backward-meta": lambda lib, ops: ops.slice_backward.default(_arg(lib, (3, 2), 1, device="meta"),
                                                                       [3, 4], 1, 1, 4, 2),
    "diagonal_backward-meta": lambda lib, ops: ops.diagonal_backward.default(
        _arg(lib, (2,), 1, device="meta"), [3, 4], 1, 1, 0),
    "masked_scatter_backward": lambda lib, ops: ops.masked_scatter_backward.default(
        _arg(lib, (2, 3), 1), lib.tensor(_MASK), [2, 3]),
    "masked_scatter_backward-padded": lambda lib, ops: ops.masked_scatter_backward.default(
        _arg(lib, (2, 3), 1), lib.tensor(_MASK), [7]),
    "masked_scatter_backward-meta": lambda lib, ops: ops.masked_scatter_backward.default(
        _arg(lib, (2, 3), 1, device="meta"), lib.empty(2, 3, dtype=lib.bool, device="meta"), [5, 2]),
}


def _result(lib: Any, ops: Any, call: Callable[[Any, Any], Any]) -> tuple[Any, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call(lib, ops)
        except Exception as e:
            return ("error", type(e).__name__, str(e).split("\n")[0])
    values = None if r.device.type == "meta" else np.asarray(r.numpy())
    return ("tensor", str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.device.type, values)


@pytest.mark.parametrize("name", sorted(_BACKWARD_OP_CALLS))
def test_the_added_backward_operators_match_torch(name: str) -> None:
    mine = _result(dc, dc.ops.aten, _BACKWARD_OP_CALLS[name])
    theirs = _result(torch, torch.ops.aten, _BACKWARD_OP_CALLS[name])
    assert mine[:5] == theirs[:5]
    if mine[0] == "tensor" and mine[5] is not None:
        np.testing.assert_allclose(mine[5], theirs[5], rtol=1e-6, atol=1e-7)


def test_tanh_backward_and_sigmoid_backward_are_torchs_cpu_kernels_bit_for_bit() -> None:
    """``a * ((1 - b) * (1 + b))`` and ``a * (1 - b) * b``, in that order (float64, torch's vectorized loop)."""
    rng = np.random.default_rng(3)
    g, y = rng.standard_normal(64), rng.uniform(-1, 1, 64)
    for name in ("tanh_backward", "sigmoid_backward"):
        mine = getattr(dc.ops.aten, name).default(dc.tensor(g), dc.tensor(y)).numpy()
        theirs = getattr(torch.ops.aten, name).default(torch.tensor(g), torch.tensor(y)).numpy()
        np.testing.assert_array_equal(mine, theirs)
