"""A ``LoggingTensor``: a wrapper subclass that logs every aten operator it meets, backward included.

The tensor subclass analogue of ``dc.LoggingMode`` (torch's ``testing/_internal/logging_tensor.py``).
``LoggingTensor`` is made with ``Tensor._make_wrapper_subclass``: it carries the ``Python`` key and
no data of its own; the real tensor lives in ``.elem``. Every operator that has a LoggingTensor
among its arguments reaches ``__torch_dispatch__`` *below* autograd: autograd has already
recorded its node, so the subclass sees the operators that really run, and during ``backward()``
the backward formulas' operators (their arguments are LoggingTensors too). The handler unwraps,
calls ``func`` on plain tensors (the keys above ``Python`` are excluded in there, so that goes
straight to the CPU kernels), logs one line, and wraps the results again.

Run it: ``python docs/examples/logging_tensor.py``.
"""

from __future__ import annotations

import itertools
from typing import Any

import dispatchcore as dc
from dispatchcore.subclass import return_and_correct_aliasing, tree_map


class LoggingTensor(dc.Tensor):
    """Wraps ``elem``; logs ``$n: dtype[shape] = aten.op(args)`` for each operator call."""

    log: list[str] = []
    _ids = itertools.count()

    @staticmethod
    def __new__(cls, elem: dc.Tensor) -> LoggingTensor:
        return dc.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                                device=elem.device, requires_grad=elem.requires_grad)

    def __init__(self, elem: dc.Tensor) -> None:
        self.elem = elem
        self.name = f"${next(LoggingTensor._ids)}"

    def __repr__(self) -> str:
        return super().__repr__(tensor_contents=f"{self.elem}")

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: tuple[type, ...], args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        plain = tree_map(lambda t: t.elem if isinstance(t, LoggingTensor) else t, (args, kwargs))
        out = func(*plain[0], **plain[1])
        wrapped = tree_map(lambda t: LoggingTensor(t) if type(t) is dc.Tensor else t, out)
        wrapped = return_and_correct_aliasing(func, args, kwargs, wrapped)
        cls.log.append(f"{_fmt(wrapped, True)} = {func}({', '.join(_fmt(a) for a in args)})")
        return wrapped


def _fmt(value: Any, with_type: bool = False) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v, with_type) for v in value) + "]"
    if not isinstance(value, LoggingTensor):
        return repr(value)
    if not with_type:
        return value.name
    abbr = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "b8"}.get(value.dtype.name, value.dtype.name)
    return f"{value.name}: {abbr}[{', '.join(map(str, value.shape))}]"


def main() -> None:
    w = LoggingTensor(dc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True))
    x = LoggingTensor(dc.tensor([[0.5, 1.0]]))
    print("key set of a LoggingTensor:", dc.dispatch_keys(w))
    print("forward:")
    loss = (x @ w).relu().sum()
    print("\n".join("  " + line for line in LoggingTensor.log))
    LoggingTensor.log.clear()
    print("backward:")
    loss.backward()
    print("\n".join("  " + line for line in LoggingTensor.log))
    print("loss =", loss)
    print("w.grad =", w.grad)


if __name__ == "__main__":
    main()
