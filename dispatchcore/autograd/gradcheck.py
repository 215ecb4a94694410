"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central finite differences.

Mirrors the slow (full Jacobian) mode of ``torch/autograd/gradcheck.py``. For every input that
requires grad, every element is perturbed by ``±eps`` in place (in its data, without a version
bump, as torch perturbs ``x.data``) and the outputs' change gives one row of the numerical
Jacobian; the analytical Jacobian comes from one ``autograd.grad`` call per output element
(run twice, to check that backward is reentrant). Both are laid out as torch lays them out,
``(input.numel(), output.numel())``, and compared with ``allclose`` (``|a - n| <= atol + rtol * |n|``).
A mismatch raises ``GradcheckError`` (a ``RuntimeError``) with torch's message, or returns False
with ``raise_exception=False``. Use float64 inputs: finite differences in float32 are too coarse.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .grad_mode import no_grad
from .graph import grad as _grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when a check fails (``torch.autograd.gradcheck.GradcheckError``)."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "_key_bits")


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x: Any) -> tuple[Any, ...]:
    return tuple(o for o in _as_tuple(x) if _is_tensor(o) and o.requires_grad)


def _check_inputs(tupled_inputs: tuple[Any, ...]) -> None:
    any_input_requiring_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype.name not in ("float64", "complex128"):
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating point or "
                    "complex. This check will likely fail if all the inputs are not of double precision "
                    "floating point or complex. ", stacklevel=3)
            if inp.dtype.is_complex:
                raise NotImplementedError("dispatchcore's gradcheck supports real inputs only")
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that "
                    "are non-overlapping to be able to compute the numerical gradients correctly. You "
                    "should call .contiguous on the input before passing it to gradcheck.")
            any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of "
                         "them have requires_grad=True.")


def _host(t: Any) -> np.ndarray:
    return np.array(t.detach()._cpu_data(), dtype=np.float64, copy=True)


def _numerical_jacobian(func: Callable[..., Any], inputs: tuple[Any, ...], func_out: tuple[Any, ...],
                        out_indices: list[int], eps: float) -> list[list[np.ndarray]]:
    """``numerical[j][i]``: d(output i) / d(input j) as an ``(input.numel(), output.numel())`` array."""
    result = []
    for inp in inputs:
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        data = inp._data
        columns: list[list[np.ndarray]] = [[] for _ in out_indices]
        for index in np.ndindex(*data.shape):
            orig = data[index].copy()
            data[index] = orig - eps
            out = _as_tuple(func(*inputs))
            outa = [_host(out[k]) for k in out_indices]
            data[index] = orig + eps
            out = _as_tuple(func(*inputs))
            outb = [_host(out[k]) for k in out_indices]
            data[index] = orig
            for k, (a, b) in enumerate(zip(outa, outb)):
                columns[k].append(((b - a) / (2 * eps)).reshape(-1))
        result.append([np.stack(cols) if cols else np.zeros((0, func_out[k].numel()))
                       for cols, k in zip(columns, out_indices)])
    return result


def _analytical_jacobian(inputs: tuple[Any, ...], output: Any) -> tuple[list[np.ndarray], bool, bool]:
    """One ``autograd.grad`` per output element; returns the jacobians, sizes_ok, types_ok."""
    from ..factories import zeros

    diff_inputs = [x for x in inputs if _is_tensor(x) and x.requires_grad]
    n_out = output.numel()
    jacobians = [np.zeros((x.numel(), n_out)) for x in diff_inputs]
    sizes_ok = types_ok = True
    for j in range(n_out):
        grad_output = zeros(list(output.shape), dtype=output.dtype, device=output.device)
        grad_output._data.reshape(-1)[j] = 1  # a fresh contiguous buffer: reshape is a view
        grads = _grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)
        for i, (g, x) in enumerate(zip(grads, diff_inputs)):
            if g is None:
                continue
            if tuple(g.shape) != tuple(x.shape):
                sizes_ok = False
                continue
            if g.dtype is not x.dtype:
                types_ok = False
            jacobians[i][:, j] = _host(g).reshape(-1)
    return jacobians, sizes_ok, types_ok


def _jacobian_tensor(a: np.ndarray) -> Any:
    from ..factories import tensor

    return tensor(a)


def _notallclose_msg(analytical: np.ndarray, numerical: np.ndarray, output_idx: int, input_idx: int) -> str:
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{_jacobian_tensor(numerical)!r}\nanalytical:{_jacobian_tensor(analytical)!r}\n")


def _slow_gradcheck(func: Callable[..., Any], func_out: Any, tupled_inputs: tuple[Any, ...], eps: float,
                    atol: float, rtol: float, nondet_tol: float, check_grad_dtypes: bool) -> bool:
    func_out = _as_tuple(func_out)
    out_indices = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad]
    if not out_indices:
        float_outputs = [k for k, o in enumerate(func_out) if _is_tensor(o)]
        for per_input in _numerical_jacobian(func, tupled_inputs, func_out, float_outputs, eps):
            for jacobian in per_input:
                if np.any(jacobian != 0):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    numerical = _numerical_jacobian(func, tupled_inputs, func_out, out_indices, eps)
    for i, k in enumerate(out_indices):
        output = func_out[k]
        analytical, sizes_ok, types_ok = _analytical_jacobian(tupled_inputs, output)
        again, _, _ = _analytical_jacobian(tupled_inputs, output)
        if not types_ok and check_grad_dtypes:
            raise GradcheckError("Gradient has dtype mismatch")
        if not sizes_ok:
            raise GradcheckError("Analytical gradient has incorrect size")
        for a1, a2 in zip(analytical, again):
            if a1.size and np.abs(a1 - a2).max() > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and grad_output "
                    "multiple times gives different values, although analytical gradient matches "
                    f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
        for j, a in enumerate(analytical):
            n = numerical[j][i]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                raise GradcheckError(_notallclose_msg(a, n, i, j))
    return True


def _test_backward_mul_by_grad_output(outputs: tuple[Any, ...], inputs: tuple[Any, ...]) -> None:
    from ..factories import zeros_like

    diff_inputs = [x for x in inputs if _is_tensor(x) and x.requires_grad]
    grads = _grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], retain_graph=True,
                  allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if np.any(gi.detach()._cpu_data() != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype or gi.device != di.device:
            raise GradcheckError("grad is incorrect type")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")


def _test_undefined_backward_mode(outputs: tuple[Any, ...]) -> None:
    """Every node must accept undefined (None) output gradients and return undefined or zeros."""
    for o in outputs:
        fn = o.grad_fn
        if fn is None:
            continue
        try:
            with no_grad():
                results = fn.apply((None,) * max(getattr(fn, "_num_outputs", 1), o._output_nr + 1))
        except RuntimeError as e:
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at \"Notes "
                "about undefined output gradients\" in \"tools/autograd/derivatives.yaml\"") from e
        for gi in results:
            if gi is not None and np.any(gi.detach()._cpu_data() != 0):
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are undefined "
                    "or zero. Please look at \"Notes about undefined output gradients\" in "
                    "\"tools/autograd/derivatives.yaml\"")


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False) -> bool:
    """Check ``func``'s analytical gradients against central finite differences (``torch.autograd.gradcheck``).

    ``inputs`` is a tensor or a tuple of them (other values are passed through); every element
    of every input that requires grad is perturbed by ``eps``. Returns True, or raises
    ``GradcheckError`` (returns False when ``raise_exception`` is False).

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor([0.5, -1.5, 2.0], dtype=dc.float64, requires_grad=True)
        >>> dc.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
        True
    """
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                 check_grad_dtypes)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(func: Callable[..., Any], inputs: Any, eps: float, atol: float, rtol: float,
                      nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    _slow_gradcheck(func, func_out, tupled_inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs)
        if check_undefined_grad:
            _test_undefined_backward_mode(outputs)
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False) -> bool:
    """Check second derivatives: ``gradcheck`` of the gradients (``torch.autograd.gradgradcheck``).

    The function checked is ``(*inputs, *grad_outputs) -> autograd.grad(func(*inputs), inputs,
    grad_outputs, create_graph=True)``; ``grad_outputs`` default to random values in [-1, 1)
    that require grad, so the check also covers the derivative with respect to them.

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor([0.5, -1.5, 2.0], dtype=dc.float64, requires_grad=True)
        >>> dc.autograd.gradgradcheck(lambda t: (t * t).sin(), (x,))
        True
    """
    from ..factories import rand

    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            (rand(list(x.shape), dtype=x.dtype if x.dtype.is_floating_point else None, device=x.device) * 2 - 1)
            .requires_grad_() for x in outputs)
        if gen_non_contig_grad_outputs:
            tupled_grad_outputs = tuple(_non_contiguous(g) for g in tupled_grad_outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad}

    def new_func(*args: Any) -> tuple[Any, ...]:
        input_args = args[:-num_outputs] if num_outputs else args
        outputs = _differentiable_outputs(func(*input_args))
        grad_outs = args[-num_outputs:] if num_outputs else ()
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = _grad(outputs, diff_input_args, list(grad_outs), create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes)


def _non_contiguous(t: Any) -> Any:
    """The same values in a non-contiguous tensor (every other element of a bigger buffer)."""
    from ..ops import aten

    with no_grad():
        shape = list(t.shape)
        if not shape:
            return t
        big = aten.cat.default([t.detach(), t.detach()], -1)  # twice the last dimension
        out = aten.slice.Tensor(big, -1, 0, None, 2)  # every other element: the shape of t
        aten.copy_.default(out, t.detach())
    return out.detach().requires_grad_()
