"""A ``QuantizedTensor``: int8 data plus one float scale, dequantised for each operator.

A wrapper subclass (``Tensor._make_wrapper_subclass``) whose own storage is never allocated: it
holds ``qdata`` (an int8 tensor) and ``scale`` (a Python float), with ``value ~= qdata * scale``
(symmetric per-tensor quantisation). Its ``__torch_dispatch__`` runs below autograd for every
aten operator that has a QuantizedTensor among its arguments: it dequantises those arguments to
float32, runs the operator on plain tensors, and requantises every floating-point result (the
scale is ``max|x| / 127``); integer and boolean results come back plain. The ``__tensor_flatten__``/
``__tensor_unflatten__`` pair names the inner tensor and the metadata, as torch's utilities expect.

Run it: ``python docs/examples/quantized_tensor.py``; it compares a small linear layer computed
on quantised weights with the float32 reference.
"""

from __future__ import annotations

from typing import Any

import dispatchcore as dc
from dispatchcore.subclass import transform_subclass, tree_map


class QuantizedTensor(dc.Tensor):
    """``qdata * scale``: int8 elements, one float32 scale."""

    @staticmethod
    def __new__(cls, qdata: dc.Tensor, scale: float) -> QuantizedTensor:
        return dc.Tensor._make_wrapper_subclass(cls, qdata.shape, strides=qdata.stride(), dtype=dc.float32,
                                                device=qdata.device)

    def __init__(self, qdata: dc.Tensor, scale: float) -> None:
        self.qdata = qdata
        self.scale = scale

    @classmethod
    def quantize(cls, x: dc.Tensor) -> QuantizedTensor:
        """Symmetric int8 quantisation of a float tensor."""
        scale = max(float(x.abs().max()), 1e-12) / 127.0
        return cls(dc.round(x / scale).clamp(-127, 127).to(dc.int8), scale)

    def dequantize(self) -> dc.Tensor:
        return self.qdata.to(dc.float32) * self.scale

    def __repr__(self) -> str:
        return f"QuantizedTensor(scale={self.scale:.5f}, qdata={self.qdata.tolist()})"

    def __tensor_flatten__(self) -> tuple[list[str], dict[str, float]]:
        return ["qdata"], {"scale": self.scale}

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, dc.Tensor], ctx: dict[str, float], outer_size: Any,
                             outer_stride: Any) -> QuantizedTensor:
        return QuantizedTensor(inner["qdata"], ctx["scale"])

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: tuple[type, ...], args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        cls.ops_seen.append(str(func))
        plain = tree_map(lambda t: t.dequantize() if isinstance(t, QuantizedTensor) else t, (args, kwargs or {}))
        out = func(*plain[0], **plain[1])
        return tree_map(lambda t: cls.quantize(t) if type(t) is dc.Tensor and t.is_floating_point() else t, out)

    ops_seen: list[str] = []


def main() -> None:
    dc.manual_seed(0)
    w = dc.randn(4, 3)
    x = dc.randn(2, 3)
    qw = QuantizedTensor.quantize(w)
    print("weight, quantised:", qw)
    print("key set:", dc.dispatch_keys(qw))
    reference = x @ w.t()
    approx = x @ qw.t()            # t() and mm each reach __torch_dispatch__; results are requantised
    print("ops seen by QuantizedTensor:", QuantizedTensor.ops_seen)
    print("type of x @ qw.t():", type(approx).__name__)
    error = (approx.dequantize() - reference).abs().max().item()
    print(f"max |quantised - float32| = {error:.4f} (scale {approx.scale:.4f})")
    print("int results come back plain:", type(qw > 0).__name__)
    # __tensor_flatten__ / __tensor_unflatten__: rebuild with a transformed inner tensor
    rebuilt = transform_subclass(qw, lambda name, inner: inner.clone())
    print("rebuilt from its flattened parts:", type(rebuilt).__name__, rebuilt.qdata.tolist() == qw.qdata.tolist())
    assert error <= 2 * approx.scale + 3 * qw.scale * float(x.abs().sum(1).max())


if __name__ == "__main__":
    main()
