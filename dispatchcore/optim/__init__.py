"""``dispatchcore.optim``: optimizers and learning-rate schedulers (``torch.optim``).

Mirrors ``torch/optim/__init__.py`` (torch 2.13): ``Optimizer`` and ``SGD``, ``Adam``, ``AdamW``,
``RMSprop``, ``Adagrad`` with torch's single-tensor update arithmetic (``foreach=False``), and
``lr_scheduler``. Invariant: an update is a sequence of dispatched aten calls (``add_``, ``mul_``,
``lerp_``, ``addcmul_``, ``addcdiv_``, ``sqrt``, ...) in torch's order, so a trace of ``step()``
shows torch's operators and the parameters equal torch's to float rounding.

Example:
    >>> import dispatchcore as dc
    >>> w = dc.tensor([3.0], requires_grad=True)
    >>> opt = dc.optim.SGD([w], lr=0.25)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([0.7500], requires_grad=True)
"""

from __future__ import annotations

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
