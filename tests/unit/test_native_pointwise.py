"""The pointwise family without torch: values, dtype rules, in-place and out= checks, errors, gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import gradcheck, gradgradcheck
from dispatchcore.native import pointwise as P

A = dc.ops.aten


def _values(t) -> list:
    return t.numpy().tolist()


def test_every_schema_is_defined_once_and_every_unary_op_has_a_cpu_and_meta_kernel():
    from dispatchcore_backends.cpu import pointwise as cpu
    from dispatchcore_backends.meta import pointwise as meta

    names = [s.partition("(")[0] for s in P.SCHEMAS]
    assert len(names) == len(set(names))
    for name in P.UNARY:
        assert {name, f"{name}.out"} <= set(cpu.KERNELS) & set(meta.KERNELS)


def test_float_ops_of_integers_compute_in_the_default_dtype():
    x = dc.tensor([0, 1])
    assert dc.acos(x).dtype is dc.float32
    assert _values(dc.expm1(x)) == pytest.approx([0.0, math.e - 1])
    assert dc.erf(dc.tensor([True])).dtype is dc.float32


def test_rounding_ops_keep_integer_dtypes_and_refuse_bool():
    x = dc.tensor([-3, 4])
    for name in ("ceil", "floor", "round", "trunc"):
        assert getattr(dc, name)(x).dtype is dc.int64
    with pytest.raises(NotImplementedError, match="\"ceil_vml_cpu\" not implemented for 'Bool'"):
        dc.ceil(dc.tensor([True]))
    assert _values(dc.round(dc.tensor([0.5, 1.5, 2.5, -0.5]))) == [0.0, 2.0, 2.0, -0.0]
    assert _values(dc.round(dc.tensor([1.26, 14.0]), decimals=1)) == pytest.approx([1.3, 14.0])


def test_sign_of_nan_is_zero_and_frac_refuses_integers():
    assert _values(dc.sign(dc.tensor([math.nan, -2.0, 0.0, 3.0]))) == [0.0, -1.0, 0.0, 1.0]
    with pytest.raises(NotImplementedError, match="\"frac_cpu\" not implemented for 'Long'"):
        dc.frac(dc.tensor([1]))


def test_predicates_give_bool_and_integers_are_finite():
    x = dc.tensor([math.nan, math.inf, -math.inf, 1.0])
    assert _values(dc.isnan(x)) == [True, False, False, False]
    assert _values(dc.isinf(x)) == [False, True, True, False]
    assert _values(dc.isfinite(x)) == [False, False, False, True]
    assert _values(dc.isposinf(x)) == [False, True, False, False]
    assert _values(dc.isnan(dc.tensor([1, 2]))) == [False, False]
    assert _values(dc.isfinite(dc.tensor([1, 2]))) == [True, True]
    assert _values(dc.signbit(dc.tensor([-0.0, 0.0]))) == [True, False]


def test_nan_to_num_defaults_to_the_dtype_extremes():
    x = dc.tensor([math.nan, math.inf, -math.inf])
    big = float(np.finfo(np.float32).max)
    assert _values(dc.nan_to_num(x)) == [0.0, big, -big]
    assert _values(dc.nan_to_num(x, 1.0, 2.0, -3.0)) == [1.0, 2.0, -3.0]
    with pytest.raises(RuntimeError, match="nan_to_num: dtype of out: Double should be same as input: Float"):
        dc.nan_to_num(x, out=dc.empty(3, dtype=dc.float64))


def test_in_place_and_out_checks_use_torchs_words():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dc.ones(2, dtype=dc.int64).acos_()
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        dc.ceil(dc.ones(2), out=dc.empty(2, dtype=dc.float64))
    with pytest.raises(RuntimeError, match="signbit does not support non-boolean outputs."):
        dc.signbit(dc.ones(2), out=dc.empty(2))
    out = dc.empty(2, dtype=dc.int32)
    assert dc.logical_not(dc.tensor([0.0, 2.0]), out=out) is out and _values(out) == [1, 0]


def test_bitwise_ops_promote_and_refuse_floats():
    x = dc.tensor([5, -3], dtype=dc.int32)
    assert _values(x & 3) == [1, 1] and (x & 3).dtype is dc.int32
    assert (dc.tensor([True]) & 2).dtype is dc.int64
    assert _values(~dc.tensor([True, False])) == [False, True]
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        dc.ones(2) & dc.ones(2)
    with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
        ~dc.ones(2)


def test_shifts_out_of_range_give_zero_or_the_sign():
    x = dc.tensor([1, -8], dtype=dc.int8)
    assert _values(x << 8) == [0, 0] and _values(x >> 9) == [0, -1] and _values(x << -1) == [0, 0]
    assert _values(1 << dc.tensor([1, 3])) == [2, 8]


def test_integer_division_by_zero_raises():
    for op in (lambda x: x // 0, lambda x: x % 0, lambda x: dc.fmod(x, 0)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(dc.tensor([1]))


def test_mod_and_floor_divide_follow_python_signs():
    x = dc.tensor([-7, 7])
    assert _values(x // 2) == [-4, 3] and _values(x % 3) == [2, 1] and _values(dc.fmod(x, 3)) == [-1, 1]
    assert _values(7 % dc.tensor([-3])) == [-2]
    assert _values(dc.remainder(dc.tensor([-1.5]), 1.0)) == [0.5]


def test_logical_ops_give_bool_for_any_dtypes():
    r = dc.logical_xor(dc.tensor([0.0, 2.0]), dc.tensor([1, 1]))
    assert r.dtype is dc.bool and _values(r) == [True, False]
    with pytest.raises(TypeError, match="logical_and\\(\\): argument 'other' \\(position 2\\) must be Tensor, not int"):
        dc.logical_and(dc.ones(1), 2)


def test_activations_compute_torchs_formulas():
    x = dc.tensor([-1.0, 0.5])
    assert _values(A.elu.default(x)) == pytest.approx([math.expm1(-1.0), 0.5])
    assert _values(A.leaky_relu.default(x, 0.1)) == pytest.approx([-0.1, 0.5])
    assert _values(A.hardtanh.default(x, -0.5, 0.25)) == [-0.5, 0.25]
    gelu = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in (-1.0, 0.5)]
    assert _values(A.gelu.default(x)) == pytest.approx(gelu, rel=1e-6)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        A.gelu.default(x, approximate="erf")
    with pytest.raises(NotImplementedError, match="\"elu_cpu\" not implemented for 'Long'"):
        A.elu.default(dc.tensor([1]))


def test_zero_d_empty_noncontiguous_and_broadcast_inputs():
    assert dc.atan(dc.tensor(1.0)).shape == () and dc.tan(dc.ones(0, 3)).shape == (0, 3)
    x = dc.arange(12.0).reshape(3, 4).t()
    assert dc.floor(x).stride() == x.stride()
    r = dc.atan2(dc.ones(3, 1), dc.ones(4))
    assert r.shape == (3, 4)


def test_node_names_and_gradients_check():
    x = dc.tensor([0.3, -0.4], dtype=dc.float64, requires_grad=True)
    assert dc.asin(x).grad_fn.name() == "AsinBackward0"
    assert A.gelu.default(x).grad_fn.name() == "GeluBackward0"
    assert dc.floor_divide(x, 2.0).grad_fn.name() == "torch::autograd::NotImplemented"
    for fn in (dc.asinh, dc.erf, lambda t: A.gelu.default(t, approximate="tanh"), lambda t: A.elu.default(t, 0.5),
               lambda t: dc.atan2(t, t + 2)):
        assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


def test_meta_results_follow_the_dtype_rules():
    m = dc.empty(2, 3, dtype=dc.int64, device="meta")
    assert dc.acos(m).dtype is dc.float32 and dc.ceil(m).dtype is dc.int64 and dc.isnan(m).dtype is dc.bool
    assert (m & 1).dtype is dc.int64 and dc.logical_or(m, m).dtype is dc.bool
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dc.ops.aten.acos_.default(m)


# --- Scalar arguments go through checked_convert (c10's ``Scalar::to<T>``) ------------------------
_OVERFLOWING_SCALARS = {
    "addcmul value": lambda: dc.addcmul(dc.ones(2, dtype=dc.int8), dc.ones(2, dtype=dc.int8),
                                        dc.ones(2, dtype=dc.int8), value=300),
    "addcdiv value": lambda: dc.addcdiv(dc.ones(2), dc.ones(2), dc.ones(2), value=1e39),
    "addmm alpha": lambda: dc.addmm(dc.ones(2, 2, dtype=dc.int8), dc.ones(2, 2, dtype=dc.int8),
                                    dc.ones(2, 2, dtype=dc.int8), alpha=300),
    "addmm beta": lambda: dc.addmm(dc.ones(2, 2), dc.ones(2, 2), dc.ones(2, 2), beta=1e39),
    "hardtanh": lambda: dc.nn.functional.hardtanh(dc.ones(2, dtype=dc.float16), -7e4, 7e4),
    "pow exponent": lambda: dc.pow(dc.ones(2, dtype=dc.int32), 2**31),
    "where other": lambda: dc.where(dc.tensor([True, False]), dc.ones(2), 1e39),
    "lerp weight": lambda: dc.lerp(dc.ones(2), dc.ones(2), 1e39),
}


@pytest.mark.parametrize("call", list(_OVERFLOWING_SCALARS))
def test_a_scalar_argument_its_type_cannot_hold_raises_torchs_overflow_error(call):
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type \S+ without overflow"):
        _OVERFLOWING_SCALARS[call]()


def test_half_computes_with_float_scalars_where_torch_does():
    # addcmul's value, addmm's alpha and beta, lerp's weight and where's scalar are not checked
    # against half's range (opmath, or a 0-d fill); pow's exponent and hardtanh's limits are
    h = dc.ones(2, dtype=dc.float16)
    assert dc.addcmul(h, h, h, value=7e4).tolist() == [math.inf] * 2
    assert dc.addmm(dc.ones(2, 2, dtype=dc.float16), dc.ones(2, 2, dtype=dc.float16),
                    dc.ones(2, 2, dtype=dc.float16), beta=65519.0).tolist() == [[math.inf] * 2] * 2
    assert dc.where(dc.tensor([True, False]), h, 7e4).tolist() == [1.0, math.inf]
    with pytest.raises(RuntimeError, match="c10::Half without overflow"):
        dc.pow(h, 7e4)


def test_hardtanh_takes_integral_limits_as_int64_and_refuses_negative_ones_for_uint8():
    assert dc.nn.functional.hardtanh(dc.tensor([-5, 0, 5], dtype=dc.int8), -2.7, 2.7).tolist() == [-2, 0, 2]
    with pytest.raises(RuntimeError, match="cannot do hardtanh on an unsigned type with negative limits"):
        dc.nn.functional.hardtanh(dc.ones(2, dtype=dc.uint8), -1, 1)


def test_float64_fused_multiply_add_and_lerp_keep_infinities_and_huge_weights():
    x = dc.full((2,), 3.0, dtype=dc.float64)
    assert dc.addcmul(x, x, x, value=1.7e308).tolist() == [math.inf] * 2  # was nan: Dekker's split overflowed
    assert dc.lerp(x, x, 1.7e308).tolist() == [3.0, 3.0]  # end - (end - start) * (1 - w), w huge


def test_remainder_keeps_the_dividends_zero_sign_as_torchs_fmod_based_kernel():
    x = dc.tensor([-0.0, 0.0, -6.0, 6.0, 7.5])
    got = dc.remainder(x, dc.tensor([3.0, -3.0, 3.0, -3.0, -2.0]))
    assert [math.copysign(1, v) for v in got.tolist()] == [-1, 1, -1, 1, -1] and got.tolist()[-1] == -0.5


def test_complex_tensors_have_no_order_but_have_truth_and_a_sign():
    c = dc.tensor([1 + 2j, -3j, 0j])
    with pytest.raises(NotImplementedError, match='"lt_cpu" not implemented for \'ComplexFloat\''):
        c < c  # noqa: B015 - the comparison is the test
    with pytest.raises(NotImplementedError, match="clamp is not supported for complex types"):
        dc.relu(c)
    with pytest.raises(NotImplementedError, match="Please use torch.sgn instead"):
        dc.sign(c)
    assert dc.logical_not(c).tolist() == [False, False, True] and dc.isnan(c).tolist() == [False] * 3
    assert dc.sgn(c).tolist() == pytest.approx([(1 + 2j) / abs(1 + 2j), -1j, 0j])


def test_cumsum_starts_from_a_positive_zero_as_torchs_accumulator():
    assert [math.copysign(1, v) for v in dc.cumsum(dc.tensor([-0.0, -0.0]), 0).tolist()] == [1, 1]
    assert math.copysign(1, dc.cumsum(dc.tensor(-0.0), 0).item()) == -1  # a 0-d input is copied


def test_hypot_and_nextafter_take_floats_and_have_torchs_derivatives():
    x = dc.tensor([3.0, 1.0], requires_grad=True)
    other = dc.tensor([4.0, 1.0], requires_grad=True)
    h = dc.hypot(x, other)
    h.sum().backward()
    assert h.tolist() == [5.0, pytest.approx(math.sqrt(2))]
    assert x.grad.tolist() == pytest.approx([0.6, 1 / math.sqrt(2)])
    x.grad = other.grad = None
    step = dc.nextafter(x, other)  # one ulp towards other; no step where they are equal
    step.sum().backward()
    assert step.tolist() == [float(np.nextafter(np.float32(3), np.float32(4))), 1.0]
    assert x.grad.tolist() == [1.0, 0.0] and other.grad.tolist() == [0.0, 0.0]
    assert dc.nextafter(dc.ones(1, dtype=dc.float16), dc.ones(1, dtype=dc.float16) * 2).item() == 1.0009765625
    with pytest.raises(NotImplementedError, match='"hypot_cpu" not implemented for \'Long\''):
        dc.hypot(dc.ones(2, dtype=dc.int64), dc.ones(2, dtype=dc.int64))


def test_copysign_promotes_integers_to_float_and_differentiates_as_torch():
    x = dc.tensor([1.0, -2.0, 0.0], requires_grad=True)
    other = dc.tensor([-1.0, 3.0, -1.0], requires_grad=True)
    y = dc.copysign(x, other)
    y.sum().backward()
    assert y.tolist() == [-1.0, 2.0, -0.0] and type(y.grad_fn).__name__ == "CopysignBackward0"
    assert x.grad.tolist() == [-1.0, -1.0, 0.0] and other.grad.tolist() == [0.0] * 3  # 0 where self is 0
    assert type(dc.copysign(x, -2.0).grad_fn).__name__ == "CopysignBackward1"
    assert dc.copysign(dc.ones(2, dtype=dc.int64), -1).dtype == dc.float32
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dc.ones(2, dtype=dc.int64).copysign_(dc.ones(2, dtype=dc.int64))
