"""``dot``/``vdot``/``mv``/``outer``/``ger``, ``index_add``/``put``, ``xlogy``/``logit`` against torch 2.13.

Beyond the conformance grid.

Each case is one call written against a module (``dispatchcore`` or ``torch``) and its ``ops.aten``;
both run it and must agree on the result's dtype, shape, strides, device and values (exact for
integers), or raise the same exception type with the same first line. Covered: every overload
(``out=``, in place, the Scalar forms of xlogy, ``logit_backward.grad_input``), torch's checks in
torch's order, dtype promotion and wrapping, the layout of results on CPU and on meta, the
bindings' TypeErrors, and the node names of the new derivatives.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def _t(lib: Any, shape: tuple[int, ...], seed: int, dtype: str = "float32", low: float = -2.0, high: float = 2.0,
       device: str = "cpu") -> Any:
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    a = rng.uniform(low, high, shape) if kind == "f" else rng.integers(-3, 4, shape) if kind in "iu" else \
        rng.integers(0, 2, shape)
    return lib.tensor(np.asarray(a).astype(dtype), device=device)


def _i(lib: Any, values: Any, dtype: str = "int64", device: str = "cpu") -> Any:
    return lib.tensor(np.asarray(values, dtype), device=device)


def _perm(lib: Any, device: str = "cpu", dtype: str = "float32") -> Any:
    """A (3, 4) tensor laid out column-major: a transposed contiguous (4, 3)."""
    return _t(lib, (4, 3), 7, dtype, 0.1, 0.9, device).t()


_CASES: dict[str, Callable[[Any, Any], Any]] = {
    # --- dot, vdot, mv -------------------------------------------------------------------------------
    "dot-int64-wraps": lambda L, A: L.dot(_i(L, [2**62, 2**62]), _i(L, [2, 2])),
    "dot-uint8-wraps": lambda L, A: L.dot(_i(L, [200, 100], "uint8"), _i(L, [2, 2], "uint8")),
    "dot-int8": lambda L, A: L.dot(_i(L, [100, 100], "int8"), _i(L, [2, 2], "int8")),
    "dot-float16": lambda L, A: L.dot(_t(L, (5,), 1, "float16"), _t(L, (5,), 2, "float16")),
    "dot-noncontig": lambda L, A: L.dot(_t(L, (3, 2), 1)[:, 0], _t(L, (6,), 2)[::2]),
    "dot-zero-d": lambda L, A: L.dot(_t(L, (), 1), _t(L, (), 2)),
    "dot-dims-before-dtype": lambda L, A: L.dot(_t(L, (3, 1), 1), _t(L, (2,), 2, "float64")),
    "dot-dtype-before-size": lambda L, A: L.dot(_t(L, (3,), 1), _t(L, (2,), 2, "float64")),
    "dot-bool": lambda L, A: L.dot(_t(L, (3,), 1, "bool"), _t(L, (3,), 2, "bool")),
    "dot.out": lambda L, A: L.dot(_t(L, (3,), 1), _t(L, (3,), 2), out=L.empty(0)),
    "dot.out-resized": lambda L, A: L.dot(_t(L, (3,), 1), _t(L, (3,), 2), out=L.empty(2)),
    "dot.out-dtype": lambda L, A: L.dot(_t(L, (3,), 1), _t(L, (3,), 2), out=L.empty(0, dtype=L.int64)),
    "dot.out-dtype-before-size": lambda L, A: L.dot(_t(L, (3,), 1), _t(L, (2,), 2), out=L.empty(0, dtype=L.int64)),
    "dot-binding": lambda L, A: L.dot(_t(L, (3,), 1), 2),
    "dot-method-binding": lambda L, A: _t(L, (3,), 1).dot(2),
    "vdot": lambda L, A: L.vdot(_t(L, (4,), 1, "float64"), _t(L, (4,), 2, "float64")),
    "vdot-bool": lambda L, A: L.vdot(_t(L, (3,), 1, "bool"), _t(L, (3,), 2, "bool")),
    "vdot.out-dtype": lambda L, A: L.vdot(_t(L, (3,), 1), _t(L, (3,), 2), out=L.empty(0, dtype=L.float64)),
    "vdot-method": lambda L, A: _t(L, (3,), 1, "int64").vdot(_t(L, (3,), 2, "int64")),
    "mv-int64": lambda L, A: L.mv(_t(L, (2, 3), 1, "int64"), _t(L, (3,), 2, "int64")),
    "mv-uint8-wraps": lambda L, A: L.mv(_i(L, [[200, 100]], "uint8"), _i(L, [2, 2], "uint8")),
    "mv-float16": lambda L, A: L.mv(_t(L, (2, 3), 1, "float16"), _t(L, (3,), 2, "float16")),
    "mv-column-major": lambda L, A: L.mv(_perm(L), _t(L, (4,), 2)),
    "mv-noncontig-vector": lambda L, A: L.mv(_t(L, (2, 3), 1), _t(L, (3, 2), 2)[:, 1]),
    "mv-zero-d": lambda L, A: L.mv(_t(L, (), 1), _t(L, (3,), 2)),
    "mv-three-d": lambda L, A: L.mv(_t(L, (2, 3, 4), 1), _t(L, (4,), 2)),
    "mv-vector-zero-d": lambda L, A: L.mv(_t(L, (2, 3), 1), _t(L, (), 2)),
    "mv-dtypes": lambda L, A: L.mv(_t(L, (2, 3), 1, "float64"), _t(L, (3,), 2)),
    "mv-sizes-before-dtypes": lambda L, A: L.mv(_t(L, (2, 3), 1, "float64"), _t(L, (2,), 2)),
    "mv-bool": lambda L, A: L.mv(_t(L, (2, 3), 1, "bool"), _t(L, (3,), 2, "bool")),
    "mv-bool-empty": lambda L, A: L.mv(_t(L, (2, 0), 1, "bool"), _t(L, (0,), 2, "bool")),
    "mv-empty-inner": lambda L, A: L.mv(_t(L, (2, 0), 1), _t(L, (0,), 2)),
    "mv.out-dtype": lambda L, A: L.mv(_t(L, (2, 3), 1), _t(L, (3,), 2), out=L.empty(0, dtype=L.float64)),
    "mv.out-noncontig": lambda L, A: L.mv(_t(L, (2, 3), 1), _t(L, (3,), 2), out=L.empty(2, 2)[:, 0]),
    "mv.out-resized": lambda L, A: L.mv(_t(L, (2, 3), 1), _t(L, (3,), 2), out=L.empty(5)),
    "mv-binding": lambda L, A: L.mv(_t(L, (2, 3), 1), 2),
    "matmul-vectors-sizes": lambda L, A: L.matmul(_t(L, (3,), 1), _t(L, (2,), 2)),
    "matmul-matrix-vector-sizes": lambda L, A: L.matmul(_t(L, (2, 3), 1), _t(L, (2,), 2)),
    "matmul-folded-vector": lambda L, A: L.matmul(_t(L, (2, 3, 4), 1), _t(L, (4,), 2)),
    "matmul-vectors-int": lambda L, A: _t(L, (3,), 1, "int64") @ _t(L, (3,), 2, "int64"),
    # --- index_add ---------------------------------------------------------------------------------
    "index_add-noncontig-self": lambda L, A: _perm(L).index_add(1, _i(L, [0, 2, 2]), _t(L, (3, 3), 2)),
    "index_add-alpha-float-int": lambda L, A: L.zeros(3, dtype=L.int64).index_add(
        0, _i(L, [1]), L.ones(1, dtype=L.int64), alpha=1.5),
    "index_add-alpha-bool": lambda L, A: L.zeros(3, dtype=L.bool).index_add(
        0, _i(L, [1, 1]), L.ones(2, dtype=L.bool), alpha=2),
    "index_add-uint8-wraps": lambda L, A: L.zeros(3, dtype=L.uint8).index_add(0, _i(L, [1, 1]), _i(L, [200, 100],
                                                                                                   "uint8")),
    "index_add-float16": lambda L, A: L.zeros(3, dtype=L.float16).index_add(
        0, _i(L, [1, 1]), L.ones(2, dtype=L.float16), alpha=0.1),
    "index_add-nan-alpha": lambda L, A: L.zeros(3).index_add(0, _i(L, [1]), L.ones(1), alpha=math.nan),
    "index_add-zero-d-index": lambda L, A: L.zeros(2, 3).index_add(0, _i(L, 1), L.ones(1, 3)),
    "index_add-index-matrix": lambda L, A: L.zeros(3).index_add(0, _i(L, [[1]]), L.ones(1)),
    "index_add-index-float": lambda L, A: L.zeros(3).index_add(0, _i(L, [1.0], "float32"), L.ones(1)),
    "index_add-dtypes": lambda L, A: L.zeros(3).index_add(0, _i(L, [1]), L.ones(1, dtype=L.float64)),
    "index_add-index-before-dtypes": lambda L, A: L.zeros(3).index_add(0, _i(L, [1.0], "float32"),
                                                                       L.ones(1, dtype=L.float64)),
    "index_add-source-dims": lambda L, A: L.zeros(2, 3).index_add(1, _i(L, [0, 2]), L.ones(2)),
    "index_add-count": lambda L, A: L.zeros(3).index_add(0, _i(L, [1, 2]), L.ones(1)),
    "index_add-count-zero-d-source": lambda L, A: L.zeros(3).index_add(0, _i(L, [1, 2]), L.ones(())),
    "index_add-shape": lambda L, A: L.zeros(2, 3).index_add(1, _i(L, [0, 1, 2]), L.ones(3, 3)),
    "index_add-zero-d-source": lambda L, A: L.zeros(1).index_add(0, _i(L, [0]), L.ones(())),
    "index_add-dim-range": lambda L, A: L.zeros(3).index_add(1, _i(L, [1]), L.ones(1)),
    "index_add-bound-vector": lambda L, A: L.zeros(3).index_add(0, _i(L, [3]), L.ones(1)),
    "index_add-bound-negative": lambda L, A: L.zeros(3).index_add(0, _i(L, [-1]), L.ones(1)),
    "index_add-bound-matrix": lambda L, A: L.zeros(2, 3).index_add(1, _i(L, [0, 5]), L.ones(2, 2)),
    "index_add-bound-matrix-negative": lambda L, A: L.zeros(2, 3).index_add(0, _i(L, [-1]), L.ones(1, 3)),
    "index_add-empty-self": lambda L, A: L.zeros(0).index_add(0, _i(L, [0]), L.ones(1)),
    "index_add-empty-rows": lambda L, A: L.zeros(0, 3).index_add(1, _i(L, [0]), L.ones(0, 1)),
    "index_add_-expanded": lambda L, A: L.zeros(1).expand(3).index_add_(0, _i(L, [1, 1]), L.ones(2)),
    "index_add_-source-aliases-self": lambda L, A: (lambda x: x.index_add_(0, _i(L, [1, 1]), x[:2]))(L.zeros(3)),
    "index_add_-int-into-float": lambda L, A: L.zeros(3, dtype=L.int64).index_add_(0, _i(L, [1]), L.ones(1)),
    "index_add.out": lambda L, A: L.index_add(L.zeros(3), 0, _i(L, [1, 1]), L.ones(2), alpha=3, out=L.empty(0)),
    "index_add.out-dtype": lambda L, A: L.index_add(L.zeros(3), 0, _i(L, [1]), L.ones(1),
                                                     out=L.empty(0, dtype=L.float64)),
    "index_add.out-noncontig": lambda L, A: L.index_add(L.zeros(2, 2), 0, _i(L, [1, 1]), L.ones(2, 2),
                                                        out=L.empty(2, 2).t()),
    "index_add.out-resized": lambda L, A: L.index_add(_perm(L), 0, _i(L, [1]), L.ones(1, 4), out=L.empty(5)),
    "index_add-positional-alpha": lambda L, A: L.index_add(L.zeros(3), 0, _i(L, [1]), L.ones(1), 2),
    "index_add-method-positional-alpha": lambda L, A: L.zeros(3).index_add(0, _i(L, [1]), L.ones(1), 2),
    # --- put -----------------------------------------------------------------------------------------
    "put-noncontig-layout": lambda L, A: _perm(L).put(_i(L, [1, -1]), L.ones(2)),
    "put-duplicates": lambda L, A: L.zeros(2, 3).put(_i(L, [0, 0]), L.tensor([1.0, 2.0])),
    "put-index-matrix": lambda L, A: L.zeros(2, 3).put(_i(L, [[0, 1], [2, 3]]), L.arange(4.0)),
    "put-bool-accumulate": lambda L, A: L.zeros(3, dtype=L.bool).put(_i(L, [0, 0]), L.ones(2, dtype=L.bool), True),
    "put-uint8-accumulate": lambda L, A: L.zeros(3, dtype=L.uint8).put(_i(L, [0, 0]), _i(L, [200, 100], "uint8"),
                                                                        True),
    "put-bound": lambda L, A: L.zeros(2, 3).put(_i(L, [6]), L.ones(1)),
    "put-bound-negative": lambda L, A: L.zeros(2, 3).put(_i(L, [-7]), L.ones(1)),
    "put-count": lambda L, A: L.zeros(2, 3).put(_i(L, [0, 1]), L.ones(1)),
    "put-dtypes": lambda L, A: L.zeros(2, 3).put(_i(L, [0]), L.ones(1, dtype=L.float64)),
    "put-index-dtype": lambda L, A: L.zeros(2, 3).put(_i(L, [0], "int32"), L.ones(1)),
    "put-index-dtype-first": lambda L, A: L.zeros(2, 3).put(_i(L, [0, 1], "int32"), L.ones(1, dtype=L.float64)),
    "put-empty-self": lambda L, A: L.zeros(0).put(_i(L, [0]), L.ones(1)),
    "put-empty-index": lambda L, A: L.zeros(2).put(_i(L, np.zeros(0)), L.ones(0)),
    "put_-expanded": lambda L, A: L.zeros(1).expand(3).put_(_i(L, [0]), L.ones(1)),
    "put_-source-aliases-self": lambda L, A: (lambda x: x.put_(_i(L, [0, 1]), x[1:]))(L.zeros(3)),
    "put.out": lambda L, A: A.put.out(_perm(L), _i(L, [0, 5]), L.ones(2), True, out=L.empty(0)),
    "put-out-keyword": lambda L, A: L.put(L.zeros(3), _i(L, [0]), L.ones(1), out=L.empty(0)),
    "put-binding": lambda L, A: L.put(L.zeros(3), "a", L.ones(1)),
    # --- xlogy ---------------------------------------------------------------------------------------
    "xlogy-int-and-float-scalar": lambda L, A: L.xlogy(_t(L, (3,), 1, "int64"), 2.5),
    "xlogy-float-and-int-scalar": lambda L, A: L.xlogy(_t(L, (3,), 1, "float64", 0, 2), 2),
    "xlogy-int-scalar-self": lambda L, A: L.xlogy(2, _t(L, (3,), 1, "int64")),
    "xlogy-zero-d-promotes-less": lambda L, A: L.xlogy(_t(L, (3,), 1, "float32", 0, 2),
                                                       _t(L, (), 2, "float64", 0.1, 2)),
    "xlogy-float16": lambda L, A: L.xlogy(_t(L, (4,), 1, "float16", 0, 2), _t(L, (4,), 2, "float16", 0.1, 2)),
    "xlogy-bool": lambda L, A: L.xlogy(_t(L, (4,), 1, "bool"), _t(L, (4,), 2, "bool")),
    "xlogy-layout": lambda L, A: L.xlogy(_perm(L), _perm(L, dtype="float64")),
    "xlogy-numbers": lambda L, A: L.xlogy(2, 3),
    "xlogy-binding": lambda L, A: L.xlogy("a", _t(L, (3,), 1)),
    "xlogy-method-binding": lambda L, A: _t(L, (3,), 1).xlogy("a"),
    "xlogy_-binding": lambda L, A: L.xlogy_(_t(L, (3,), 1), "a"),
    "xlogy_-int-self": lambda L, A: _t(L, (3,), 1, "int64").xlogy_(_t(L, (3,), 2)),
    "xlogy_-scalar-int-self": lambda L, A: _t(L, (3,), 1, "int64").xlogy_(2.0),
    "xlogy_-broadcast-self": lambda L, A: _t(L, (3,), 1).xlogy_(_t(L, (2, 3), 2)),
    "xlogy_-function": lambda L, A: L.xlogy_(_t(L, (3,), 1, "float32", 0, 2), 3),
    "xlogy.OutTensor-cast": lambda L, A: L.xlogy(_t(L, (3,), 1, "float32", 0, 2), _t(L, (3,), 2, "float32", 0.1, 2),
                                                 out=L.empty(0, dtype=L.float64)),
    "xlogy.OutTensor-no-cast": lambda L, A: L.xlogy(_t(L, (3,), 1), _t(L, (3,), 2), out=L.empty(0, dtype=L.int64)),
    "xlogy.OutScalar_Self": lambda L, A: L.xlogy(1.5, _t(L, (2, 3), 2, "float32", 0.1, 2), out=L.empty(2, 3).t()),
    "xlogy.OutScalar_Other": lambda L, A: L.xlogy(_t(L, (3,), 1, "int64"), 2, out=L.empty(0, dtype=L.float64)),
    "xlogy.Scalar_Self-aten": lambda L, A: A.xlogy.Scalar_Self(0, _t(L, (3,), 1, "float32", -1, 1)),
    # --- logit, logit_backward -------------------------------------------------------------------------
    "logit-int": lambda L, A: L.logit(_i(L, [0, 1, 2, -1])),
    "logit-bool": lambda L, A: L.logit(_i(L, [True, False], "bool")),
    "logit-float16": lambda L, A: L.logit(_t(L, (5,), 1, "float16", 0.05, 0.95), 0.1),
    "logit-nan-eps": lambda L, A: L.logit(L.tensor([0.0, 0.3, 1.0]), math.nan),
    "logit-eps-above-half": lambda L, A: L.logit(L.tensor([0.1, 0.5, 0.9]), 0.7),
    "logit-layout": lambda L, A: L.logit(_perm(L)),
    "logit_-int": lambda L, A: _i(L, [0, 1]).logit_(),
    "logit_-function": lambda L, A: L.logit_(L.tensor([0.25, 0.5]), eps=0.3),
    "logit.out-cast": lambda L, A: L.logit(L.tensor([0.25, 0.5]), out=L.empty(0, dtype=L.float64)),
    "logit.out-int": lambda L, A: L.logit(L.tensor([0.25, 0.5]), out=L.empty(0, dtype=L.int64)),
    "logit-binding": lambda L, A: L.logit(_t(L, (3,), 1), "a"),
    "logit-method-binding": lambda L, A: _t(L, (3,), 1).logit("a"),
    "logit_backward-promotes": lambda L, A: A.logit_backward.default(_t(L, (3,), 1, "float64"),
                                                                     _t(L, (3,), 2, "float32", 0, 1)),
    "logit_backward-int": lambda L, A: A.logit_backward.default(_i(L, [1, 2]), _i(L, [0, 1])),
    "logit_backward-layout": lambda L, A: A.logit_backward.default(_perm(L), _perm(L), 0.2),
    "logit_backward.grad_input": lambda L, A: A.logit_backward.grad_input(
        _t(L, (3,), 1), L.tensor([0.0, 0.5, 1.5]), 0.1, grad_input=L.empty(0, dtype=L.float64)),
    "logit_backward.grad_input-no-cast": lambda L, A: A.logit_backward.grad_input(
        _t(L, (3,), 1), _t(L, (3,), 2, "float32", 0, 1), grad_input=L.empty(0, dtype=L.int64)),
    "logit_backward-float16": lambda L, A: A.logit_backward.default(
        _t(L, (5,), 1, "float16"), _t(L, (5,), 2, "float16", 0, 1)),
    # --- outer / ger (CompositeImplicitAutograd: a column view of self times vec2) ---------------------------
    "outer": lambda L, A: L.outer(_t(L, (3,), 1), _t(L, (2,), 2)),
    "outer-int-bool": lambda L, A: L.outer(_i(L, [1, 2]), _i(L, [True, False], "bool")),
    "outer-noncontig": lambda L, A: L.outer(_t(L, (6,), 1)[::2], _perm(L)[0]),
    "outer-self-dims": lambda L, A: L.outer(_perm(L), _t(L, (2,), 2)),
    "outer-vec2-zero-d": lambda L, A: L.outer(_t(L, (3,), 1), _t(L, (), 2)),
    "outer.out": lambda L, A: L.outer(_t(L, (3,), 1), _t(L, (2,), 2), out=L.empty(0, dtype=L.float64)),
    "outer.out-cast": lambda L, A: L.outer(_t(L, (3,), 1), _t(L, (2,), 2), out=L.empty(0, dtype=L.int64)),
    "ger-method": lambda L, A: _t(L, (3,), 1).ger(_t(L, (2,), 2, "float64")),
    "ger.out": lambda L, A: L.ger(_t(L, (3,), 1), _t(L, (2,), 2), out=L.empty(0)),
    "ger-binding": lambda L, A: L.ger(_t(L, (3,), 1), 2),
    # --- on meta: the CPU result's geometry ------------------------------------------------------------
    **{f"meta-{name}": (lambda L, A, _f=f: _f(L, A, "meta")) for name, f in {
        "dot": lambda L, A, d: L.dot(_t(L, (3,), 1, device=d), _t(L, (3,), 2, device=d)),
        "vdot.out": lambda L, A, d: L.vdot(_t(L, (3,), 1, device=d), _t(L, (3,), 2, device=d),
                                           out=L.empty(2, device=d)),
        "mv": lambda L, A, d: L.mv(_perm(L, d), _t(L, (4,), 2, device=d)),
        "outer": lambda L, A, d: L.outer(_t(L, (3,), 1, device=d), _t(L, (2,), 2, device=d)),
        "mv.out": lambda L, A, d: L.mv(_t(L, (2, 3), 1, device=d), _t(L, (3,), 2, device=d),
                                       out=L.empty(2, 2, device=d)[:, 0]),
        "matmul-vectors": lambda L, A, d: L.matmul(_t(L, (3,), 1, device=d), _t(L, (3,), 2, device=d)),
        "index_add": lambda L, A, d: _perm(L, d).index_add(0, _i(L, [1], device=d), _t(L, (1, 4), 2, device=d)),
        "index_add_": lambda L, A, d: _perm(L, d).index_add_(0, _i(L, [1], device=d), _t(L, (1, 4), 2, device=d)),
        "index_add.out": lambda L, A, d: L.index_add(_t(L, (3, 4), 1, device=d), 1, _i(L, [1], device=d),
                                                     _t(L, (3, 1), 2, device=d), out=L.empty(0, device=d)),
        "put": lambda L, A, d: _perm(L, d).put(_i(L, [1], device=d), _t(L, (1,), 2, device=d)),
        "put_": lambda L, A, d: _perm(L, d).put_(_i(L, [1], device=d), _t(L, (1,), 2, device=d)),
        "xlogy": lambda L, A, d: L.xlogy(_perm(L, d), _t(L, (4,), 2, "float64", device=d)),
        "xlogy-int-scalar": lambda L, A, d: L.xlogy(_t(L, (2, 3), 1, "int64", device=d), 2.0),
        "xlogy-scalar-self": lambda L, A, d: L.xlogy(2, _perm(L, d)),
        "xlogy_": lambda L, A, d: _perm(L, d).xlogy_(_t(L, (4,), 2, device=d)),
        # an out= of the right shape keeps its layout (torch's meta lays a resized one out contiguous, its CPU not)
        "xlogy.OutTensor": lambda L, A, d: L.xlogy(_perm(L, d), _perm(L, d), out=L.empty(3, 4, device=d,
                                                                                       dtype=L.float64)),
        "logit": lambda L, A, d: L.logit(_perm(L, d), 0.1),
        "logit-int": lambda L, A, d: L.logit(_t(L, (2, 3), 1, "int64", device=d)),
        "logit_": lambda L, A, d: _perm(L, d).logit_(),
        "logit_backward": lambda L, A, d: A.logit_backward.default(_perm(L, d), _t(L, (4,), 2, "float64", device=d)),
        "logit_backward.grad_input": lambda L, A, d: A.logit_backward.grad_input(
            _perm(L, d), _perm(L, d), grad_input=L.empty(0, device=d)),
    }.items()},
}


def _result(lib: Any, call: Callable[[Any, Any], Any]) -> tuple[Any, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call(lib, lib.ops.aten)
        except Exception as e:
            return ("error", type(e).__name__, str(e).split("\n")[0])
    values = None if r.device.type == "meta" else np.asarray(r.numpy())
    return ("tensor", str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.device.type, values)


@pytest.mark.parametrize("name", sorted(_CASES))
def test_the_call_matches_torch(name: str) -> None:
    mine, theirs = _result(dc, _CASES[name]), _result(torch, _CASES[name])
    assert mine[:5] == theirs[:5]
    if mine[0] == "tensor" and mine[5] is not None:
        if mine[5].dtype.kind in "biu":
            np.testing.assert_array_equal(mine[5], theirs[5])
        else:
            tol = 1e-3 if mine[5].dtype == np.float16 else 1e-6
            np.testing.assert_allclose(mine[5], theirs[5], rtol=tol, atol=tol)


def _grad_fn_name(lib: Any, make: Callable[[Any], Any]) -> str:
    x = lib.tensor(np.linspace(0.1, 0.9, 6).reshape(2, 3), dtype=lib.float64).requires_grad_()
    return make(lib, x).grad_fn.name()


_NODES: dict[str, Callable[[Any, Any], Any]] = {
    "dot": lambda L, x: L.dot(x[0], x[1]),
    "vdot": lambda L, x: L.vdot(x[0], x[1]),
    "mv": lambda L, x: L.mv(x, x[0]),
    "matmul-vectors": lambda L, x: x[0] @ x[1],
    "index_add": lambda L, x: x.index_add(0, L.tensor([1]), x[:1]),
    "index_add_": lambda L, x: x.clone().index_add_(0, L.tensor([1]), x[:1]),
    "put": lambda L, x: x.put(L.tensor([1]), x[0, :1]),
    "put_": lambda L, x: x.clone().put_(L.tensor([1]), x[0, :1]),
    "xlogy.Tensor": lambda L, x: L.xlogy(x, x),
    "xlogy.Scalar_Self": lambda L, x: L.xlogy(2, x),
    "xlogy.Scalar_Other": lambda L, x: L.xlogy(x, 2),
    "xlogy_.Tensor": lambda L, x: x.clone().xlogy_(x),
    "xlogy_.Scalar_Other": lambda L, x: x.clone().xlogy_(2),
    "logit": lambda L, x: L.logit(x, 0.1),
    "logit_": lambda L, x: x.clone().logit_(),
    "logit_backward": lambda L, x: L.ops.aten.logit_backward.default(x, x),
}


@pytest.mark.parametrize("name", sorted(_NODES))
def test_the_node_is_torchs(name: str) -> None:
    assert _grad_fn_name(dc, _NODES[name]) == _grad_fn_name(torch, _NODES[name])


@pytest.mark.parametrize("eps", [None, 0.2])
def test_logits_first_and_second_derivatives_match_torch(eps: float | None) -> None:
    """With ``create_graph`` the formula is ``infinitely_differentiable_logit_backward``, else ``logit_backward``."""
    def grads(lib: Any) -> list[np.ndarray]:
        x = lib.tensor([0.05, 0.15, 0.5, 0.85, 0.95], dtype=lib.float64).requires_grad_()
        (g,) = lib.autograd.grad(lib.logit(x, eps).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        (plain,) = lib.autograd.grad(lib.logit(x, eps).sum(), x)
        return [g.detach().numpy(), gg.numpy(), plain.numpy()]

    for mine, theirs in zip(grads(dc), grads(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=0)


@pytest.mark.parametrize("case", ["overlapping-output", "overlapping-input", "both"])
def test_as_strided_backward_through_index_add_matches_torch(case: str) -> None:
    """as_strided's gradient sums where the output overlaps itself and shares where the input does."""
    def grad(lib: Any) -> np.ndarray:
        x = lib.tensor(np.arange(1.0, 7.0), dtype=lib.float64).requires_grad_()
        if case == "overlapping-output":
            y = x.as_strided((3, 3), (1, 1), 1)
        elif case == "overlapping-input":
            y = x[:3].expand(2, 3).as_strided((4,), (1,), 1)
        else:
            y = x[:3].expand(2, 3).as_strided((2, 2), (1, 1))
        (g,) = lib.autograd.grad(y, x, lib.tensor(np.arange(1.0, y.numel() + 1).reshape(tuple(y.shape))))
        return g.numpy()

    np.testing.assert_array_equal(grad(dc), grad(torch))


OUTER_CALLS = {
    "outer": lambda L, x, y: L.outer(x, y),
    "ger": lambda L, x, y: x.ger(y),
    "outer.out": lambda L, x, y: L.outer(x, y, out=OUTER_OUT[L]),
    "ger.out": lambda L, x, y: L.ger(x, y, out=OUTER_OUT[L]),
}
OUTER_OUT = {torch: torch.empty(0), dc: dc.empty(0)}


@pytest.mark.parametrize("name", sorted(OUTER_CALLS))
def test_outer_and_ger_dispatch_torchs_calls_and_warnings(name, torch_ops):
    """A mode sees ``view`` then ``mul`` (or ``mul.out``); only ger's out= form warns, on every call."""
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0])
    a, b = dc.tensor([1.0, 2.0]), dc.tensor([3.0, 4.0, 5.0])
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = torch_ops(lambda: OUTER_CALLS[name](torch, x, y))
    with warnings.catch_warnings(record=True) as mine_warned, dc.LoggingMode() as log:
        warnings.simplefilter("always")
        OUTER_CALLS[name](dc, a, b)
    assert [str(r.func) for r in log.records] == theirs

    def texts(caught):
        return [str(w.message).split(" (Triggered")[0] for w in caught]

    assert texts(mine_warned) == texts(theirs_warned)
