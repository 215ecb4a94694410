"""The ``torch.*`` functions of functions.py: each is one operator call through the dispatcher."""

from __future__ import annotations

import pytest

import dispatchcore as dc
from dispatchcore import functions, native

# a family of dispatchcore.native that defines a function replaces functions.py's (max, min, where, ...)
_FAMILY_FUNCTIONS = {name: fn for family in native.families() for name, fn in family.FUNCTIONS.items()}


@pytest.mark.parametrize("name", sorted({*functions.__all__, *_FAMILY_FUNCTIONS}))
def test_each_function_is_exported_named_and_documented(name):
    fn = getattr(dc, name)
    assert name in dc.__all__ and fn is _FAMILY_FUNCTIONS.get(name, getattr(functions, name, None))
    assert fn.__name__ == name and fn.__doc__


@pytest.mark.parametrize("call, logged", [
    (lambda x, y: dc.add(x, y), "aten.add.Tensor"),
    (lambda x, y: dc.add(x, 2.0), "aten.add.Tensor"),  # a number is wrapped, as in torch
    (lambda x, y: dc.add(x, y, alpha=2), "aten.add.Tensor"),
    (lambda x, y: dc.mul(x, y, out=dc.empty(2)), "aten.mul.out"),
    (lambda x, y: dc.exp(x, out=dc.empty(2)), "aten.exp.out"),
    (lambda x, y: dc.relu(x), "aten.relu.default"),
    (lambda x, y: dc.where(x > 0, x, 0.0), "aten.where.self"),
    (lambda x, y: dc.cat((x, y)), "aten.cat.default"),
])
def test_a_function_dispatches_the_overload_the_method_would(call, logged):
    x, y = dc.ones(2), dc.ones(2)
    with dc.LoggingMode() as log:
        call(x, y)
    assert any(line.split(" = ")[1].startswith(logged + "(") for line in log.lines), log.lines


def test_the_inline_fast_path_of_add_resolves_new_key_sets_and_records_autograd():
    m = dc.add(dc.ones(2, device="meta"), dc.ones(2, device="meta"))  # a key set not seen before
    assert m.device.type == "meta" and m.shape == (2,)
    x = dc.ones(2, requires_grad=True)
    y = dc.add(x, dc.ones(2))
    assert type(y.grad_fn).__name__ == "AddBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_out_returns_the_out_tensor_and_bumps_its_version():
    out = dc.zeros(2)
    assert dc.sub(dc.ones(2), dc.ones(2), alpha=2, out=out) is out
    assert out.tolist() == [-1.0, -1.0] and out._version == 1


def test_a_number_operand_is_wrapped_on_the_other_operands_device():
    assert dc.mul(3, dc.ones(2, device="meta")).device.type == "meta"
    assert dc.add(2, 3).item() == 5 and dc.add(2, 3).dtype == dc.int64


def test_pow_of_a_number_base_needs_a_tensor_exponent():
    assert dc.pow(2, dc.tensor([3.0])).tolist() == [8.0]
    with pytest.raises(TypeError, match=r"pow\(\): argument 'input' \(position 1\) must be Tensor, not int"):
        dc.pow(2, 3)


def test_module_docstring_examples_run():
    import doctest

    failures, attempted = doctest.testmod(functions, optionflags=doctest.ELLIPSIS)
    assert attempted and not failures


def test_nn_functional_docstring_examples_run_and_losses_record():
    import doctest

    import dispatchcore.nn.functional as F

    failures, attempted = doctest.testmod(F, optionflags=doctest.ELLIPSIS)
    assert attempted and not failures
    x = dc.ones(2, 3, requires_grad=True)
    assert type(F.mse_loss(x, dc.zeros(2, 3)).grad_fn).__name__ == "MseLossBackward0"
    assert dc.nn.functional is F and "nn" in dc.__all__
