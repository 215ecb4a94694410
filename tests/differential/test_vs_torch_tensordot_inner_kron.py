"""``tensordot``, ``inner`` and ``kron`` against torch 2.13: results, the operators a mode sees, errors, gradients.

All three are CompositeImplicitAutograd in torch: each call below runs on both libraries under a
recording dispatch mode, and must give the same result (dtype, shape, strides, values) after the same
operators with the same arguments, or raise the same error. ``torch.tensordot``'s ``dims`` forms (an
int, two lists, a tensor) are torch/functional.py's, checked through the same calls.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import recording_mode, results_or_same_error  # noqa: E402

pytestmark = pytest.mark.differential


def _inputs(m: Any) -> dict[str, Any]:
    rng = np.random.default_rng(0)

    def t(*shape: int) -> Any:
        return m.tensor(rng.standard_normal(shape).astype(np.float32))

    return {"m": m, "a": t(2, 3), "b": t(4, 3), "c": t(3, 4, 5), "s": t(), "v": t(3), "w": t(2, 5), "one": t(1, 3)}


CALLS = [
    "m.inner(a, b)", "m.inner(a[0], b[0])", "m.inner(s, a)", "m.inner(c, w)", "a.inner(b)",
    "m.inner(a, b, out=m.empty(0))", "m.inner(m.zeros(0, 3), b)",
    "m.tensordot(a, c, dims=1)", "m.tensordot(c, c, dims=([0, 1], [0, 1]))", "m.tensordot(a, b, dims=0)",
    "m.tensordot(v, b.t(), dims=1)", "m.tensordot(a, v, dims=1)", "m.tensordot(a.t(), b.t(), dims=([0], [0]))",
    "m.tensordot(a, b, dims=([1], [1]))", "m.tensordot(c, c.permute(1, 2, 0), dims=2)",
    "m.tensordot(m.zeros(0, 3), b, dims=([1], [1]))", "m.tensordot(a, one, dims=([0], [0]))",
    "m.tensordot(a, b, dims=m.tensor([[1], [1]]))", "m.tensordot(a, b, dims=[[1], [1]])",
    "m.tensordot(a, b, dims=([1], [1]), out=m.empty(0))", "m.tensordot(c[0], c[0])",
    "m.tensordot(one, v, dims=([1], [0]))", "m.tensordot(a, a, dims=([1, 0], [1, 0]))",
    "m.tensordot(a.t().contiguous().t(), a, dims=([1, 0], [1, 0]))",
    "m.tensordot(m.tensor([[1, 2], [3, 4]]).t(), m.tensor([[1, 2], [3, 4]]), dims=([1, 0], [1, 0]))",
    "m.tensordot(m.tensor([[1, 2], [3, 4]], dtype=m.int32), m.tensor([[1, 2], [3, 4]], dtype=m.int32), dims=2)",
    "m.kron(a, b)", "m.kron(a[0], b)", "a.kron(w.double())", "m.kron(a, b, out=m.empty(0))", "m.kron(s, a)",
    "m.kron(m.tensor([1, 2]), m.tensor([[3], [4]]))",
]
ERRORS = [
    "m.tensordot(a, b, dims=([1], [0]))", "m.tensordot(a, b, dims=-1)", "m.tensordot(a, b, dims=([0, 1], [1]))",
    "m.inner(a, w)", "m.tensordot(a, b.double(), dims=([1], [1]))", "m.tensordot(a, b, dims=([3], [1]))",
    "m.tensordot(a, b, 3)", "m.tensordot(a, b, dims=m.tensor(1))", "m.inner(a, b.double())",
    "m.tensordot(a, b, dims=(1, 1))", "m.tensordot(a, b, dims='a')",
    "m.tensordot(a, a, dims=([1], [1]), out=m.empty(0, dtype=m.float64))", "a.inner('x')", "m.inner(a)",
    "m.kron(a, 2)", "m.kron(a.t(), a)", "m.tensordot(a, a, dims=([1, 1], [1, 0]))",
]


def _run(m: Any, code: str) -> tuple[Any, list[tuple[str, list[Any], list[str]]]]:
    names = _inputs(m)
    calls: list[tuple[str, list[Any], list[str]]] = []

    def record(func: Any, types: Any, args: Any, kwargs: Any) -> None:
        shown = [tuple(a.shape) if isinstance(a, (torch.Tensor, dc.Tensor)) else a for a in args]
        calls.append((str(func), shown, sorted(kwargs)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with recording_mode(m, record):
            result = eval(code, names)
    return result, calls


def _same(theirs: Any, mine: Any) -> None:
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape) and mine.stride() == theirs.stride()
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("code", CALLS)
def test_the_call_computes_and_dispatches_what_torch_does(code: str) -> None:
    (theirs, their_calls), (mine, my_calls) = _run(torch, code), _run(dc, code)
    _same(theirs, mine)
    assert my_calls == their_calls


@pytest.mark.parametrize("code", ERRORS)
def test_the_call_is_refused_in_torchs_words(code: str) -> None:
    with pytest.raises(Exception) as expected:
        _run(torch, code)
    with pytest.raises(type(expected.value)) as got:
        _run(dc, code)
    text = str(expected.value)
    assert str(got.value) == (text if "expected one of" in text else text.split("\n")[0])


GRADIENTS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "tensordot": lambda m, x, y: m.tensordot(x, y.t(), dims=1),
    "tensordot-dot": lambda m, x, y: m.tensordot(x, y, dims=2),
    "inner": lambda m, x, y: m.inner(x, y),
    "kron": lambda m, x, y: m.kron(x, y),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_and_last_node_match_torch(name: str) -> None:
    def run(m: Any) -> Any:
        x = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=m.float64, requires_grad=True)
        y = m.tensor(np.linspace(0.5, 2, 6).reshape(2, 3), dtype=m.float64, requires_grad=True)
        out = GRADIENTS[name](m, x, y)
        (out * out).sum().backward()
        return type(out.grad_fn).__name__, x.grad.tolist(), y.grad.tolist()

    theirs, mine = run(torch), run(dc)
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1:], theirs[1:], rtol=1e-10)


@pytest.mark.parametrize("code", ["m.tensordot(a, c, dims=1)", "m.inner(c, w)", "m.kron(a, b)"])
def test_the_composites_run_on_meta_tensors_as_torchs(code: str) -> None:
    def run(m: Any) -> Any:
        names = {k: (v.to("meta") if isinstance(v, (torch.Tensor, dc.Tensor)) else v) for k, v in _inputs(m).items()}
        r = eval(code, names)
        return r.device.type, tuple(r.shape), r.stride()

    both = results_or_same_error(lambda: run(torch), lambda: run(dc))
    assert both is not None and both[0] == both[1]
