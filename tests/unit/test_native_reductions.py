"""The reductions family without torch: values on small cases, dtypes, errors, return types, registrations."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import return_types
from dispatchcore.autograd import gradcheck, gradgradcheck
from dispatchcore.dispatcher import get_dispatcher

A = dc.ops.aten
NAN = float("nan")


def t(values, dtype=None):
    return dc.tensor(values, dtype=dtype)


def test_min_over_a_dim_returns_values_and_indices_as_a_named_tuple():
    r = dc.min(t([[3.0, 1.0, 2.0], [0.0, 5.0, 0.0]]), 1)
    assert isinstance(r, return_types.min) and isinstance(r, tuple)
    values, indices = r
    assert values.tolist() == [1.0, 0.0] and indices.tolist() == [1, 0]  # the first of tied minima
    assert r.values is r[0] and r.indices is r[1]


def test_return_types_print_one_field_a_line_and_pickle():
    r = return_types.max((t([1.0]), t([0])))
    assert repr(r) == "dispatchcore.return_types.max(\nvalues=tensor([1.]),\nindices=tensor([0]))"
    assert pickle.loads(pickle.dumps(r)).values.tolist() == [1.0]
    assert r.n_fields == 2
    with pytest.raises(TypeError):
        return_types.sort((t([1.0]),))


def test_max_and_min_take_the_full_other_and_dim_forms():
    x = t([[1.0, 4.0], [3.0, 2.0]])
    assert dc.max(x).item() == 4.0 and x.min().item() == 1.0
    assert dc.max(x, t([2.0, 2.0])).tolist() == [[2.0, 4.0], [3.0, 2.0]]
    assert x.min(t([2.0, 2.0])).tolist() == [[1.0, 2.0], [2.0, 2.0]]
    assert x.max(dim=0, keepdim=True).values.tolist() == [[3.0, 4.0]]
    assert dc.min(x, -1).indices.tolist() == [0, 1]


def test_nan_wins_min_and_sorts_last():
    x = t([2.0, NAN, 1.0])
    assert np.isnan(dc.min(x).item()) and dc.argmin(x).item() == 1
    assert dc.sort(x).indices.tolist() == [2, 0, 1]
    assert dc.sort(x, descending=True).indices.tolist() == [1, 0, 2]
    assert dc.topk(x, 1).indices.tolist() == [1]


def test_sort_is_stable_in_both_directions():
    x = t([1.0, 0.0, 1.0, 0.0])
    assert dc.sort(x, stable=True).indices.tolist() == [1, 3, 0, 2]
    assert dc.sort(x, stable=True, descending=True).indices.tolist() == [0, 2, 1, 3]


def test_integral_prod_and_cumsum_promote_to_int64_and_logical_reductions_to_bool():
    i = t([1, 2, 3], dc.int32)
    assert dc.prod(i).dtype == dc.int64 and dc.prod(i).item() == 6
    assert dc.cumsum(t([True, True]), 0).tolist() == [1, 2]
    assert dc.any(t([0.0, 1.0])).dtype == dc.bool
    assert dc.all(t([1, 1], dc.uint8)).dtype == dc.uint8  # uint8 stays uint8, as torch
    assert dc.prod(t(np.zeros((0, 2), np.float32))).item() == 1.0


def test_var_and_std_use_the_correction():
    x = t([1.0, 2.0, 3.0, 4.0])
    assert dc.var(x).item() == pytest.approx(5 / 3)
    assert dc.var(x, correction=0).item() == pytest.approx(1.25)
    assert dc.std(x, unbiased=False).item() == pytest.approx(1.25 ** 0.5)
    var, mean = dc.var_mean(x)
    assert (var.item(), mean.item()) == (pytest.approx(5 / 3), 2.5)


def test_var_without_degrees_of_freedom_warns_and_is_nan():
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        assert np.isnan(dc.var(t([1.0])).item())


def test_logsumexp_keeps_infinities():
    x = t([[float("inf"), 0.0], [-float("inf"), -float("inf")]])
    assert dc.logsumexp(x, 1).tolist() == [float("inf"), -float("inf")]
    assert dc.logsumexp(t([0.0, 0.0]), 0).item() == pytest.approx(np.log(2))


def test_norm_is_a_vector_norm():
    x = t([3.0, -4.0])
    assert dc.norm(x).item() == 5.0 and x.norm(1).item() == 7.0 and dc.norm(x, float("inf")).item() == 4.0
    with pytest.raises(NotImplementedError, match="nuc"):
        dc.norm(t([[1.0]]), "nuc")


@pytest.mark.parametrize(("call", "error", "text"), [
    (lambda: dc.amin(t(np.zeros((0, 2), np.float32))), RuntimeError, "amin(): Expected reduction dim to be specified"),
    (lambda: dc.min(t(np.zeros((0, 2), np.float32)), 0), IndexError, "min(): Expected reduction dim 0 to have"),
    (lambda: dc.argmin(t([True])), RuntimeError, "argmin(): does not support bool input"),
    (lambda: dc.var(t([1, 2])), RuntimeError, "std and var only support floating point and complex dtypes"),
    (lambda: dc.topk(t([1.0]), 2), RuntimeError, "selected index k out of range"),
    (lambda: dc.cumsum(t([1.0]), 0, dtype=dc.bool), NotImplementedError, '"cumsum_out_cpu" not implemented'),
    (lambda: dc.norm(t([1, 2])), RuntimeError, "linalg.vector_norm: Expected a floating point"),
    (lambda: dc.any(t([1.0]), 1, out=dc.empty(0)), RuntimeError, "any only supports bool tensor for result"),
])
def test_bad_calls_raise_torchs_errors(call, error, text):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(text)


def test_out_forms_write_into_the_given_tensors():
    values, indices = dc.empty(0), dc.empty(0, dtype=dc.int64)
    r = dc.sort(t([2.0, 1.0]), out=(values, indices))
    assert type(r) is return_types.sort_out and r.values is values and values.tolist() == [1.0, 2.0]
    out = dc.empty(0, dtype=dc.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dc.logsumexp(t([0.0, 0.0]), 0, out=out) is out and out.dtype == dc.float64


@pytest.mark.parametrize("fn", [
    lambda x: dc.prod(x, 1), lambda x: dc.amin(x, 0), lambda x: dc.var(x, 1), lambda x: dc.cumsum(x, 0),
    lambda x: dc.cumprod(x, 1), lambda x: dc.sort(x, 1).values, lambda x: dc.topk(x, 2, 0).values,
    lambda x: dc.logsumexp(x, 1), lambda x: dc.norm(x, 3, 1),
])
def test_gradients_and_second_derivatives_check_numerically(fn):
    x = dc.tensor(np.array([[1.5, -0.5, 2.0], [0.7, 1.1, -1.3], [0.2, 0.9, 1.7]]), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_prod_gradient_with_one_zero_is_the_product_of_the_others():
    x = dc.tensor([2.0, 0.0, 3.0], requires_grad=True)
    dc.prod(x).backward()
    assert x.grad.tolist() == [0.0, 6.0, 0.0]


def test_composite_overloads_are_registered_where_torch_registers_them():
    ops = {op.qualname: op for op in get_dispatcher().operators()}
    keys = {name: {k.name for k in ops[f"aten::{name}"].registrations} for name in
            ("var", "var.correction", "sort", "sort.stable", "logsumexp", "max.other", "any.dims")}
    assert "CompositeImplicitAutograd" in keys["var"] and "CPU" not in keys["var"]
    assert {"CPU", "Meta", "Autograd"} <= keys["var.correction"]
    assert "CompositeExplicitAutograd" in keys["sort"] and "CPU" not in keys["sort"]
    assert {"CPU", "Meta"} <= keys["sort.stable"]
    assert "CompositeExplicitAutograd" in keys["logsumexp"] and "CPU" not in keys["logsumexp"]
    assert keys["max.other"] == {"CompositeImplicitAutograd"}
    assert {"CompositeExplicitAutograd", "CPU", "Meta"} <= keys["any.dims"]


def test_meta_tensors_get_shapes_and_dtypes_without_data():
    x = dc.empty((2, 3), device="meta", dtype=dc.int32)
    assert dc.prod(x, 1).dtype == dc.int64 and tuple(dc.prod(x, 1).shape) == (2,)
    v, i = dc.topk(dc.empty((4, 5), device="meta"), 2)
    assert tuple(v.shape) == (4, 2) and i.dtype == dc.int64
    assert tuple(dc.logsumexp(dc.empty((4, 5), device="meta"), 1, True).shape) == (4, 1)
