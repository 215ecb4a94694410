"""``searchsorted`` and ``bucketize`` against torch 2.13: positions, dtypes, errors, out=, meta, modes.

Each case runs on both libraries and compares the result (values, dtype, shape, strides) or the
error (type and text). Random cases include duplicates, NaN and unsorted boundaries: torch's
binary search has definite answers there, and the CPU kernels must give the same ones.
"""

from __future__ import annotations

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from tests.differential._observers import mode_calls, outcome  # noqa: E402

pytestmark = pytest.mark.differential


def _run(lib, fn):
    return outcome(lib, fn)


SS = [1.0, 3.0, 5.0, 7.0, 9.0]
CASES = {
    # searchsorted: 1-d boundaries, any values
    "left": lambda t: t.searchsorted(t.tensor(SS), t.tensor([[3.0, 6.0, 9.0], [0.0, 10.0, 5.0]])),
    "right": lambda t: t.searchsorted(t.tensor(SS), t.tensor([3.0, 6.0, 9.0]), right=True),
    "side-right-int32": lambda t: t.searchsorted(t.tensor(SS), t.tensor([3.0, 9.0]), side="right", out_int32=True),
    "side-left": lambda t: t.searchsorted(t.tensor(SS), t.tensor([3.0, 9.0]), side="left"),
    "number": lambda t: t.searchsorted(t.tensor(SS), 5),
    "number-right": lambda t: t.searchsorted(t.tensor(SS), 5.0, right=True),
    "zero-dim-values": lambda t: t.searchsorted(t.tensor(SS), t.tensor(4.0)),
    "transposed-values-give-a-contiguous-result": lambda t: t.searchsorted(t.tensor(SS), t.ones(3, 2).t() * 4),
    "empty-values": lambda t: t.searchsorted(t.tensor(SS), t.zeros(0)),
    "empty-boundaries": lambda t: t.searchsorted(t.zeros(0), t.tensor([1.0, 2.0])),
    "nan-boundary": lambda t: t.searchsorted(t.tensor([1.0, float("nan")]), t.tensor([float("nan"), 2.0, 0.5])),
    "nan-boundary-right": lambda t: t.searchsorted(t.tensor([float("nan"), 1.0, 2.0]), t.tensor([1.5, 3.0]),
                                                   right=True),
    "duplicates": lambda t: t.searchsorted(t.tensor([1, 2, 2, 2, 3]), t.tensor([2, 2]), right=False),
    "duplicates-right": lambda t: t.searchsorted(t.tensor([1, 2, 2, 2, 3]), t.tensor([2]), right=True),
    "sorter": lambda t: t.searchsorted(t.tensor([5.0, 1.0, 3.0]), t.tensor([2.0, 4.0]), sorter=t.tensor([1, 2, 0])),
    "sorter-2d": lambda t: t.searchsorted(t.tensor([[5.0, 1.0, 3.0], [0.0, 9.0, 4.0]]), t.tensor([[2.0], [5.0]]),
                                          sorter=t.tensor([[1, 2, 0], [0, 2, 1]])),
    "batched-boundaries": lambda t: t.searchsorted(t.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]),
                                                   t.tensor([[2.0, 6.0], [5.0, 1.0]])),
    # promotion: values and boundaries compare in result_type (a number is a wrapped number)
    "int-values-float-boundaries": lambda t: t.searchsorted(t.tensor(SS), t.tensor([3, 4])),
    "float-values-int-boundaries": lambda t: t.searchsorted(t.tensor([1, 5, 9]), t.tensor([5.5])),
    "wrapped-float-number": lambda t: t.searchsorted(t.tensor([1, 5, 9]), 5.000000001),
    "zero-dim-double": lambda t: t.searchsorted(t.tensor([1, 5, 9]), t.tensor(5.000000001, dtype=t.float64)),
    "uint8-number-wraps": lambda t: t.searchsorted(t.tensor([1, 2, 3], dtype=t.uint8), 300),
    "float16": lambda t: t.searchsorted(t.tensor([0.1, 0.2, 0.3], dtype=t.float16), t.tensor([0.3])),
    "bool-boundaries-int-number": lambda t: t.searchsorted(t.tensor([True, True]), 1),
    # errors, in torch's order
    "bool-refused": lambda t: t.searchsorted(t.tensor([True, False]), t.tensor([True])),
    "complex-refused": lambda t: t.searchsorted(t.ones(5), t.ones(2, dtype=t.complex64)),
    "bad-side": lambda t: t.searchsorted(t.tensor(SS), t.tensor([1.0]), side="middle"),
    "opposite-side-and-right": lambda t: t.searchsorted(t.tensor(SS), t.tensor([1.0]), side="left", right=True),
    "zero-dim-boundaries": lambda t: t.searchsorted(t.tensor(1.0), t.tensor([2.0, 4.0])),
    "scalar-values-need-1d-boundaries": lambda t: t.searchsorted(t.ones(1, 5), t.tensor(2.0)),
    "leading-dims-differ": lambda t: t.searchsorted(t.ones(2, 3), t.ones(3, 1)),
    "leading-dims-missing": lambda t: t.searchsorted(t.ones(2, 3), t.ones(2)),
    "sorter-size": lambda t: t.searchsorted(t.ones(3), t.ones(2), sorter=t.tensor([1, 2])),
    "sorter-dtype": lambda t: t.searchsorted(t.ones(3), t.ones(2), sorter=t.tensor([1, 2, 0], dtype=t.int32)),
    "sorter-range": lambda t: t.searchsorted(t.ones(3), t.ones(2), sorter=t.tensor([1, 2, 5])),
    "sorter-negative": lambda t: t.searchsorted(t.ones(3), t.ones(2), sorter=t.tensor([0, 1, -1])),
    "right-must-be-bool": lambda t: t.searchsorted(t.ones(3), t.ones(2), right=1),
    "side-must-be-str": lambda t: t.searchsorted(t.ones(3), t.ones(2), side=1),
    "values-must-be-tensor-or-number": lambda t: t.searchsorted(t.ones(3), "a"),
    # out=
    "out-int64": lambda t: t.searchsorted(t.tensor(SS), t.tensor([2.0, 8.0]), out=t.empty(0, dtype=t.int64)),
    "out-int32-needs-out_int32": lambda t: t.searchsorted(t.ones(5), t.ones(2), out=t.empty(0, dtype=t.int32)),
    "out-int32": lambda t: t.searchsorted(t.ones(5), t.ones(2), out_int32=True, out=t.empty(0, dtype=t.int32)),
    "out-float-refused": lambda t: t.searchsorted(t.ones(5), t.ones(2), out=t.empty(0)),
    "out-resized-warns": lambda t: t.searchsorted(t.tensor(SS), 2, out=t.empty(3, dtype=t.int64)),
    "out-keeps-its-strides": lambda t: t.searchsorted(t.tensor(SS), t.ones(2, 3) * 4,
                                                      out=t.empty(3, 2, dtype=t.int64).t()),
    "out-number": lambda t: t.searchsorted(t.tensor(SS), 2.5, out=t.empty(0, dtype=t.int64)),
    # bucketize: values first, 1-d boundaries
    "bucketize": lambda t: t.bucketize(t.tensor([[3.0, 6.0, 9.0], [0.0, 10.0, 5.0]]), t.tensor(SS)),
    "bucketize-right-int32": lambda t: t.bucketize(t.tensor([3.0, 6.0]), t.tensor(SS), right=True, out_int32=True),
    "bucketize-number": lambda t: t.bucketize(3, t.tensor(SS)),
    "bucketize-int-values": lambda t: t.bucketize(t.tensor([1, 5, 9]), t.tensor([2.5, 7.5])),
    "bucketize-2d-boundaries": lambda t: t.bucketize(t.ones(2), t.ones(1, 2)),
    "bucketize-0d-boundaries": lambda t: t.bucketize(t.ones(2), t.tensor(1.0)),
    "bucketize-bool-refused": lambda t: t.bucketize(t.tensor([True]), t.tensor([False, True])),
    "bucketize-out": lambda t: t.bucketize(t.tensor([3.0, 6.0]), t.tensor(SS), out=t.empty(0, dtype=t.int64)),
    "bucketize-out-bool-refused": lambda t: t.bucketize(t.ones(2), t.ones(5), out=t.empty(0, dtype=t.bool)),
    "bucketize-number-takes-no-out": lambda t: t.bucketize(2, t.ones(5), out=t.empty(0, dtype=t.int64)),
    "bucketize-boundaries-must-be-tensor": lambda t: t.bucketize(t.ones(2), 3),
    "bucketize-Scalar_out": lambda t: t.ops.aten.bucketize.Scalar_out(2, t.tensor(SS), out=t.empty(0, dtype=t.int64)),
    "bucketize-Scalar_out-dtype-exact": lambda t: t.ops.aten.bucketize.Scalar_out(
        2, t.tensor(SS), out_int32=True, out=t.empty(0, dtype=t.int64)),
    # no Tensor methods in torch
    "no-method": lambda t: hasattr(t.ones(1), "searchsorted") or hasattr(t.ones(1), "bucketize"),
    # never differentiable
    "values-requiring-grad": lambda t: t.searchsorted(t.tensor(SS), t.ones(2, requires_grad=True)).requires_grad,
    "boundaries-requiring-grad": lambda t: t.searchsorted(t.tensor(SS, requires_grad=True), t.ones(2)).grad_fn,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_searchsorted_and_bucketize_match_torch(name):
    ours, theirs = _run(dc, CASES[name]), _run(torch, CASES[name])
    assert ours == theirs


def _random_case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 9))
    boundaries = np.sort(rng.integers(-3, 4, n)).astype(np.float32)
    if seed % 3 == 0 and n:  # NaN, anywhere
        boundaries[rng.integers(0, n)] = np.nan
    if seed % 5 == 0:  # unsorted: torch's probes decide
        rng.shuffle(boundaries)
    values = rng.integers(-4, 5, (2, 3)).astype(np.float32)
    if seed % 4 == 0:
        values[0, 0] = np.nan
    return boundaries.tolist(), values.tolist(), bool(seed % 2)


@pytest.mark.parametrize("seed", range(40))
def test_positions_are_torchs_binary_search_on_any_input(seed):
    boundaries, values, right = _random_case(seed)

    def call(t):
        return t.searchsorted(t.tensor(boundaries), t.tensor(values), right=right).tolist()

    assert call(dc) == call(torch)


META = {
    "searchsorted": lambda t: t.searchsorted(t.empty(5, device="meta"), t.empty(2, 3, device="meta").t()),
    "searchsorted-number": lambda t: t.searchsorted(t.empty(5, device="meta"), 3),
    "searchsorted-int32": lambda t: t.searchsorted(t.empty(5, device="meta"), t.empty(2, device="meta"),
                                                   out_int32=True),
    "searchsorted-leading-dims": lambda t: t.searchsorted(t.empty(2, 3, device="meta"), t.empty(3, 1, device="meta")),
    "searchsorted-sorter-size": lambda t: t.searchsorted(t.empty(5, device="meta"), t.empty(2, device="meta"),
                                                         sorter=t.empty(4, dtype=t.int64, device="meta")),
    "searchsorted-opposites": lambda t: t.searchsorted(t.empty(5, device="meta"), t.empty(2, device="meta"),
                                                       side="left", right=True),
    # meta checks less than CPU: a 0-d boundaries tensor, a bad side and bool pass
    "searchsorted-zero-dim-boundaries": lambda t: t.searchsorted(t.empty((), device="meta"), t.empty(2, device="meta")),
    "searchsorted-bad-side": lambda t: t.searchsorted(t.empty(5, device="meta"), t.empty(2, device="meta"),
                                                      side="middle"),
    "searchsorted-bool": lambda t: t.searchsorted(t.empty(5, dtype=t.bool, device="meta"),
                                                  t.empty(2, dtype=t.bool, device="meta")),
    "searchsorted-out-int32": lambda t: t.searchsorted(t.empty(5, device="meta"), t.empty(2, device="meta"),
                                                       out=t.empty(0, dtype=t.int32, device="meta")),
    "searchsorted-out-float": lambda t: t.searchsorted(t.empty(5, device="meta"), t.empty(2, device="meta"),
                                                       out=t.empty(0, device="meta")),
    "bucketize": lambda t: t.bucketize(t.empty(2, 3, device="meta").t(), t.empty(5, device="meta"), out_int32=True),
    "bucketize-2d-boundaries-pass": lambda t: t.bucketize(t.empty(2, device="meta"), t.empty(2, 2, device="meta")),
    "bucketize-number": lambda t: t.bucketize(3, t.empty(5, device="meta")),
    "bucketize-out-resized": lambda t: t.bucketize(t.empty(2, 3, device="meta"), t.empty(5, device="meta"),
                                                   out=t.empty(4, 2, dtype=t.int64, device="meta")),
    "bucketize-out-keeps-strides": lambda t: t.bucketize(t.empty(2, 3, device="meta"), t.empty(5, device="meta"),
                                                         out=t.empty(3, 2, dtype=t.int64, device="meta").t()),
    "bucketize-out-bool-refused": lambda t: t.bucketize(t.empty(2, 3, device="meta"), t.empty(5, device="meta"),
                                                        out=t.empty(0, dtype=t.bool, device="meta")),
}


@pytest.mark.parametrize("name", sorted(META))
def test_meta_kernels_match_torchs_python_meta_kernels(name):
    assert _run(dc, META[name]) == _run(torch, META[name])


def test_meta_bucketize_scalar_out_works_where_torchs_meta_kernel_takes_no_out():
    """torch registers meta_bucketize_scalar at bucketize.Scalar_out too, and it refuses ``out=``."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        torch.ops.aten.bucketize.Scalar_out(2, torch.empty(5, device="meta"),
                                            out=torch.empty(0, dtype=torch.int64, device="meta"))
    out = dc.empty(0, dtype=dc.int64, device="meta")
    assert dc.ops.aten.bucketize.Scalar_out(2, dc.empty(5, device="meta"), out=out) is out
    assert tuple(out.shape) == ()


def _calls(lib, fn):
    """The operators a dispatch mode sees while ``fn(lib, boundaries, values, out, sorter)`` runs."""
    a, b, out, sorter = lib.tensor(SS), lib.tensor([2.0, 8.0]), lib.empty(0, dtype=lib.int64), lib.arange(5)
    return mode_calls(lib, lambda: fn(lib, a, b, out, sorter))


@pytest.mark.parametrize("call", [
    lambda t, a, b, o, s: t.searchsorted(a, b),
    lambda t, a, b, o, s: t.searchsorted(a, b, right=True, out_int32=False, side="right"),
    lambda t, a, b, o, s: t.searchsorted(a, 3),
    lambda t, a, b, o, s: t.searchsorted(a, b, sorter=s),
    lambda t, a, b, o, s: t.searchsorted(a, b, out=o),
    lambda t, a, b, o, s: t.searchsorted(a, 2.5, out=o),
    lambda t, a, b, o, s: t.bucketize(b, a),
    lambda t, a, b, o, s: t.bucketize(2, a, right=True),
    lambda t, a, b, o, s: t.bucketize(b, a, out_int32=True),
    lambda t, a, b, o, s: t.bucketize(b, a, out=o),
])
def test_the_bindings_call_torchs_overloads_with_torchs_keywords(call):
    assert _calls(dc, call) == _calls(torch, call)


_ONCE = """
import sys, warnings
lib = __import__(sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        lib.searchsorted(lib.ones(5, 2).t(), lib.ones(2, 3).t()[:2], sorter=lib.zeros(5, 2, dtype=lib.int64).t())
        lib.bucketize(lib.ones(3, 2).t(), lib.ones(5))
print([str(w.message).split(" (Triggered internally")[0] for w in caught])
"""


def test_non_contiguous_inputs_warn_once_per_program():
    """TORCH_WARN_ONCE: the input, boundary and sorter warnings, each once per interpreter (so a fresh one)."""
    import subprocess
    import sys

    def warned(name):
        return subprocess.run([sys.executable, "-c", _ONCE, name], capture_output=True, text=True, check=True).stdout

    assert warned("dispatchcore") == warned("torch")
