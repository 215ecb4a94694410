"""dispatchcore.autograd: the engine, custom Functions, grad and inference modes, gradcheck.

Autograd lives at the Autograd dispatch keys: built-in derivatives and user ``Function``
subclasses are Autograd-key kernels, and guards mask keys in the thread-local sets.
"""

from .function import BackwardCFunction, Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import AccumulateGrad, Node, backward, grad

__all__ = [
    "AccumulateGrad",
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
]
