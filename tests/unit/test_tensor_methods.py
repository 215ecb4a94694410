"""Tensor methods and operators on bad arguments: torch's errors, with nothing chained.

See Note [Method arguments] (dispatchcore/_tensor_methods.py) and Note [No chained errors]
(dispatchcore/operator.py). The differential side is the bad-input corpus (tests/_bad_inputs.py).
"""

from __future__ import annotations

import operator

import pytest

import dispatchcore as dc
from tests._bad_inputs import cold_memos


def _raised(fn):
    with pytest.raises(Exception) as info:
        fn()
    exc = info.value
    assert exc.__context__ is None and exc.__cause__ is None, repr(exc.__context__)
    return exc


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.pow, operator.matmul, operator.lt, operator.le,
                                operator.gt, operator.ge, operator.iadd, operator.isub,
                                operator.imul, operator.itruediv, operator.ipow])
@pytest.mark.parametrize("other", ["a", None, object()])
def test_operators_return_not_implemented_for_an_operand_that_is_neither_tensor_nor_number(op, other):
    with pytest.raises(TypeError, match="not supported|unsupported operand|single element"):
        op(dc.ones(2), other)


@pytest.mark.parametrize("other", ["a", None])
def test_eq_and_ne_with_a_non_number_fall_back_to_identity_as_torch(other):
    x = dc.ones(2)
    assert (x == other) is False and (x != other) is True


@pytest.mark.parametrize("op", [operator.sub, operator.truediv, operator.pow])
def test_reflected_operators_return_not_implemented_for_a_str(op):
    with pytest.raises(TypeError, match="unsupported operand"):
        op("a", dc.ones(2))


def test_operators_still_take_numbers_and_tensors():
    x = dc.ones(2)
    assert (x + 1).tolist() == [2.0, 2.0] and (2 - x).tolist() == [1.0, 1.0]
    assert (2 / x).tolist() == [2.0, 2.0] and (2 ** x).tolist() == [2.0, 2.0]
    assert (x < 2).tolist() == [True, True] and (x @ x).item() == 2.0


def test_named_methods_raise_for_a_str_operand_instead_of_returning_not_implemented():
    x = dc.ones(2)
    for method in (x.mul, x.div, x.true_divide, x.pow, x.lt, x.matmul, x.mul_):
        with pytest.raises((TypeError, RuntimeError)):
            method("a")


def test_first_inplace_call_with_a_number_chains_no_memo_key_error():
    cold_memos(dc)
    leaf = dc.ones(2, requires_grad=True)
    exc = _raised(lambda: leaf.add_(1))
    assert "a leaf Variable that requires grad" in str(exc)


def test_matmul_error_after_a_shortcut_miss_chains_nothing():
    cold_memos(dc)
    exc = _raised(lambda: dc.ones(2, 3) @ dc.ones(2, 3))
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in str(exc)


@pytest.mark.parametrize(("call", "text"), [
    (lambda x: x.view("a"), "view() received an invalid combination of arguments - got (str)"),
    (lambda x: x.view(2.5), "view() received an invalid combination of arguments - got (float)"),
    (lambda x: x.view(None), "got (NoneType)"),
    (lambda x: x.reshape(2.5), "reshape(): argument 'shape' (position 1) must be tuple of ints, not float"),
    (lambda x: x.sum(dtype="float32"), "sum() received an invalid combination of arguments - got (dtype=str, )"),
    (lambda x: x.sum(dim=1.5), "sum() received an invalid combination of arguments"),
    (lambda x: x.sum("a"), "got (str)"),
    (lambda x: x.mean(dim="a"), "mean() received an invalid combination of arguments"),
    (lambda x: x.to(dtype="float32"), "to() received an invalid combination of arguments - got (dtype=str, )"),
    (lambda x: x.to(dtype=str), "got (dtype=type, )"),
    (lambda x: dc.sum(x, dim="a"), "sum() received an invalid combination of arguments - got (Tensor, dim=str)"),
    (lambda x: dc.reshape(x, 2.5), "reshape(): argument 'shape' (position 2) must be tuple of ints, not float"),
    (lambda x: dc.where("a", x, x), "where() received an invalid combination of arguments - got (str, Tensor, Tensor)"),
    (lambda x: dc.where(x > 0, "a", x), "got (Tensor, str, Tensor)"),
])
def test_bad_method_and_function_arguments_raise_the_binding_type_error(call, text):
    exc = _raised(lambda: call(dc.ones(2, 3)))
    assert isinstance(exc, TypeError) and text in str(exc)


def test_well_typed_arguments_keep_the_kernel_error():
    exc = _raised(lambda: dc.ones(2, 3).view(4))
    assert isinstance(exc, RuntimeError) and "shape '[4]' is invalid for input of size 6" in str(exc)
    exc = _raised(lambda: dc.ones(2, 3).sum(2))
    assert isinstance(exc, IndexError) and "Dimension out of range" in str(exc)


def test_to_accepts_python_types_as_dtypes_and_checks_device_strings():
    x = dc.ones(2)
    assert x.to(dtype=float).dtype is dc.float64 and x.to("cpu").dtype is dc.float32
    for device, text in (("float64", "Invalid device string: 'float64'"), ("cpu:x", "Invalid device string"),
                         ("xyz", "device type at start of device string: xyz")):
        exc = _raised(lambda device=device: x.to(device))
        assert isinstance(exc, RuntimeError) and text in str(exc)


def test_cat_and_stack_of_an_empty_list_raise_before_dispatch():
    assert isinstance(_raised(lambda: dc.cat([])), ValueError)
    exc = _raised(lambda: dc.stack([]))
    assert isinstance(exc, RuntimeError) and "stack expects a non-empty TensorList" in str(exc)


@pytest.mark.parametrize(("index", "kind", "text"), [
    (5, IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
    (-3, IndexError, "index -3 is out of bounds for dimension 0 with size 2"),
    ((0, 7), IndexError, "index 7 is out of bounds for dimension 1 with size 3"),
    ((None, 5), IndexError, "index 5 is out of bounds for dimension 1 with size 2"),
    ((Ellipsis, -4), IndexError, "index -4 is out of bounds for dimension 1 with size 3"),
    ((0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
    ((0, slice(None), 0), IndexError, "too many indices for tensor of dimension 2"),
    (1.5, IndexError, "valid indices (got float)"),
    (object(), IndexError, "valid indices (got object)"),
    ("a", TypeError, "new(): invalid data type 'str'"),
    (slice(None, None, 0), ValueError, "slice step cannot be zero"),
    (slice(None, None, -1), ValueError, "step must be greater than zero"),
])
def test_basic_indexing_errors_are_torchs_indexing_errors(index, kind, text):
    exc = _raised(lambda: dc.ones(2, 3)[index])
    assert isinstance(exc, kind) and text in str(exc)


def test_indexing_a_0d_tensor_raises_torchs_errors():
    s = dc.tensor(1.0)
    assert "invalid index of a 0-dim tensor. Use `tensor.item()`" in str(_raised(lambda: s[0]))
    assert "slice() cannot be applied to a 0-dim tensor." in str(_raised(lambda: s[:]))
    assert "too many indices for tensor of dimension 0" in str(_raised(lambda: s[0, 0]))
    assert s[None].shape == (1,) and s[...].shape == ()


def test_select_keeps_its_own_error_text():
    exc = _raised(lambda: dc.ones(2, 3).select(0, 5))
    assert "select(): index 5 out of range for tensor of size [2, 3] at dimension 0" in str(exc)


def test_every_ellipsis_stands_for_the_unnamed_dims_as_in_torch():
    x = dc.arange(6).view(2, 3)
    assert x[..., ...].shape == (2, 3) and x[..., 0, ...].tolist() == [0, 3]
    assert dc.ones(2, 3)[dc.tensor(1).item()].shape == (3,)


def test_numpy_integers_index_like_ints():
    np = pytest.importorskip("numpy")
    x = dc.arange(6).view(2, 3)
    assert x[np.int64(1)].tolist() == [3, 4, 5] and x[0, np.int32(2)].item() == 2


@pytest.mark.parametrize(("value", "text"), [
    ("a", "can't assign a str to a torch.FloatTensor"),
    (None, "can't assign a NoneType to a torch.FloatTensor"),
    ([1, 2, 3], "can't assign a list to a torch.FloatTensor"),
])
def test_setitem_refuses_a_value_that_is_neither_tensor_nor_number(value, text):
    x = dc.ones(2, 3)
    exc = _raised(lambda: x.__setitem__(0, value))
    assert isinstance(exc, TypeError) and text in str(exc)


def test_setitem_expands_the_value_with_torchs_expand_errors():
    x = dc.ones(2, 3)
    assert "The expanded size of the tensor (3) must match the existing size (4)" in str(
        _raised(lambda: x.__setitem__(0, dc.ones(4))))
    assert "the number of sizes provided (1) must be greater or equal" in str(
        _raised(lambda: x.__setitem__(0, dc.ones(2, 3))))
    x[0] = dc.tensor([1.0, 2.0, 3.0])
    x[1] = dc.zeros(1)
    x[:, 0] = 7
    assert x.tolist() == [[7.0, 2.0, 3.0], [7.0, 0.0, 0.0]]


def test_setitem_on_a_leaf_view_still_records_the_copy_for_autograd():
    a = dc.ones(3, requires_grad=True)
    b = dc.zeros(2, 3)
    b[0] = a * 2
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


_PREFIX_ONES = [
    ("x[...] = ones(1, 3)", (3,), Ellipsis, (1, 3), [1.0, 2.0, 3.0]),
    ("x[0] = ones(1, 3)", (2, 3), 0, (1, 3), [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]),
    ("x[0, 1:] = ones(1, 1, 2)", (2, 3), (0, slice(1, None)), (1, 1, 2), [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]]),
    ("x[...] = ones(1, 1)", (3,), Ellipsis, (1, 1), [1.0, 1.0, 1.0]),
    ("x[:, 0] = ones(1, 2)", (2, 3), (slice(None), 0), (1, 2), [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]),
]


@pytest.mark.parametrize(("target", "index", "value", "expected"), [c[1:] for c in _PREFIX_ONES],
                         ids=[c[0] for c in _PREFIX_ONES])
def test_setitem_drops_the_values_leading_size_one_dims(target, index, value, expected):
    x = dc.zeros(*target)
    x[index] = dc.arange(1, 1 + _numel(value), dtype=dc.float32).reshape(value)
    assert x.tolist() == expected


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


@pytest.mark.differential
@pytest.mark.parametrize(("target", "index", "value"), [c[1:4] for c in _PREFIX_ONES],
                         ids=[c[0] for c in _PREFIX_ONES])
def test_setitem_with_leading_size_one_dims_matches_torch(target, index, value):
    torch = pytest.importorskip("torch")
    results = []
    for t in (torch, dc):
        x = t.zeros(*target)
        x[index] = t.arange(1, 1 + _numel(value), dtype=t.float32).reshape(value)
        results.append(x.tolist())
    assert results[0] == results[1]


def test_setitem_strips_leading_ones_before_the_expand_error():
    x = dc.zeros(3)
    with pytest.raises(RuntimeError, match=r"expand\(torch.FloatTensor\{\[2, 3\]\}, size=\[3\]\)"):
        x[...] = dc.ones(1, 2, 3)


def test_setitem_through_leading_ones_records_copy_and_view_for_autograd():
    v = dc.ones(1, 3, requires_grad=True)
    x = dc.zeros(2, 3) * 1
    x[0] = v * 3
    x.sum().backward()
    assert v.grad.tolist() == [[3.0, 3.0, 3.0]]
    assert type(x.grad_fn).__name__ == "CopySlices"


_NUMBERS = [
    ("uint8 300", "uint8", 300), ("uint8 -1", "uint8", -1), ("int8 200", "int8", 200),
    ("int32 1.5", "int32", 1.5), ("int32 nan", "int32", float("nan")), ("float32 1e300", "float32", 1e300),
    ("float32 1+2j", "float32", 1 + 2j), ("float32 2**70", "float32", 2**70), ("int64 2**63", "int64", 2**63),
    ("bool 5", "bool", 5), ("float16 inf", "float16", float("inf")), ("float32 True", "float32", True),
]


def _assign(t, dtype, number):
    x = t.zeros(3, dtype=getattr(t, dtype))
    try:
        x[0] = number
    except Exception as e:  # noqa: BLE001 - the outcome is compared
        return type(e).__name__, str(e)
    return x.tolist()


def test_setitem_number_that_overflows_the_dtype_raises_torchs_runtime_error():
    x = dc.zeros(3, dtype=dc.uint8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        x[0] = 300
    x[0] = -1  # negative ints wrap into unsigned types, as c10's overflows() allows
    assert x.tolist() == [255, 0, 0]


@pytest.mark.differential
@pytest.mark.parametrize(("dtype", "number"), [c[1:] for c in _NUMBERS], ids=[c[0] for c in _NUMBERS])
def test_setitem_number_conversion_matches_torch(dtype, number):
    torch = pytest.importorskip("torch")
    assert _assign(dc, dtype, number) == _assign(torch, dtype, number)


def test_setitem_number_fills_with_self_dtype_value():
    seen = []

    class Mode(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            if "fill_" in str(func):
                seen.append((str(func), args[1].dtype, dc.dtypes.is_wrapped_number(args[1])))
            return func(*args, **(kwargs or {}))

    x = dc.zeros(4, 4)
    with Mode():
        x[0] = 5.0
    assert seen == [("aten.fill_.Tensor", dc.float32, False)]
    assert x[0].tolist() == [5.0] * 4


@pytest.mark.parametrize("call, message", [
    (lambda x: x.mm(2), "mm(): argument 'mat2' (position 1) must be Tensor, not int"),
    (lambda x: dc.mm(x, None), "mm(): argument 'mat2' (position 2) must be Tensor, not NoneType"),
    (lambda x: x.maximum("a"), "maximum(): argument 'other' (position 1) must be Tensor, not str"),
    (lambda x: x.mul("a"), "mul(): argument 'other' (position 1) must be Tensor, not str"),
    (lambda x: x.eq(None), "eq() received an invalid combination of arguments - got (NoneType), but expected one of:\n"
                           " * (Tensor other)\n"),
    (lambda x: dc.lt(x, "a"), "lt() received an invalid combination of arguments - got (Tensor, str), but expected "
                              "one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n"),
])
def test_a_wrong_operand_gets_the_bindings_type_error_not_a_result_or_the_schemas(call, message):
    # Note [Operand arguments]: x.eq(None) used to compare with None; x.mm(2) raised a SchemaError
    with pytest.raises(TypeError) as info:
        call(dc.ones(2, 2))
    assert str(info.value).startswith(message)
