"""``MyReLU``: the canonical custom autograd ``Function`` (PyTorch's "Defining new autograd functions").

``forward`` saves its input with ``ctx.save_for_backward`` and returns ``input.clamp_min(0)``;
``backward`` reads it back from ``ctx.saved_tensors`` and returns ``grad_output * (input > 0)``.
``MyReLU.apply(x)`` runs ``forward`` with grad mode off and, because ``x`` requires grad, gives the
output a ``MyReLUBackward`` node (named as ``python_function.cpp`` names it). The dispatch key sets
are untouched throughout:
``clamp_min`` inside ``forward`` still reaches the AutogradCPU kernel, which records nothing
because grad mode is off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dispatchcore as dc
from dispatchcore.autograd import Function

__all__ = ["MyReLU", "demo", "main"]


class MyReLU(Function):
    """ReLU with a hand-written backward.

    Example:
        >>> import dispatchcore as dc
        >>> x = dc.tensor([-1.0, 2.0], requires_grad=True)
        >>> y = MyReLU.apply(x)
        >>> y.grad_fn.name()
        'MyReLUBackward'
        >>> y.sum().backward()
        >>> x.grad
        tensor([0., 1.])
    """

    @staticmethod
    def forward(ctx: Any, input: dc.Tensor) -> dc.Tensor:  # noqa: A002 - PyTorch's tutorial name
        ctx.save_for_backward(input)
        return input.clamp_min(0)

    @staticmethod
    def backward(ctx: Any, grad_output: dc.Tensor) -> dc.Tensor:
        (input,) = ctx.saved_tensors  # noqa: A001
        return grad_output * (input > 0)


def demo(out: Callable[[str], Any] = print) -> dict[str, Any]:
    """Apply ``MyReLU`` to a small tensor, backpropagate, and compare with the built-in ``relu``.

    Returns the input, output and gradient, and the built-in's output and gradient.
    """
    values = [-2.0, -0.5, 0.5, 3.0]
    x = dc.tensor(values, requires_grad=True)
    y = MyReLU.apply(x)
    out(f"x                       = {x}")
    out(f"MyReLU.apply(x)         = {y}")
    out(f"its grad_fn             = {y.grad_fn.name()} (next: {_next_names(y.grad_fn)})")
    y.sum().backward()
    grad = x.grad
    assert grad is not None  # backward() reached x
    out(f"x.grad after backward   = {grad}")

    x2 = dc.tensor(values, requires_grad=True)
    ref = x2.relu()
    ref.sum().backward()
    assert x2.grad is not None
    same = ref.tolist() == y.tolist() and x2.grad.tolist() == grad.tolist()
    out(f"built-in x.relu()       = {ref}")
    out(f"its gradient            = {x2.grad}: " + ("the same as MyReLU's" if same else "DIFFERENT"))
    return {"x": x, "y": y, "grad": grad, "relu": ref, "relu_grad": x2.grad, "same": same}


def _next_names(node: Any) -> str:
    return ", ".join(n.name() if n is not None else "None" for n, _ in node.next_functions)


def main() -> None:
    """Run the demo (``python docs/examples/my_relu.py``)."""
    demo()


if __name__ == "__main__":
    main()
