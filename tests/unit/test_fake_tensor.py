"""dispatchcore.fake_tensor: FakeTensorMode, FakeTensor, the converter, device rules, refusals, custom ops.

(The same behaviours are compared with torch 2.13's FakeTensorMode in
tests/differential/test_vs_torch_fake_tensor.py; these need no oracle.)
"""

import itertools

import pytest

import dispatchcore as dc
from dispatchcore import Tensor
from dispatchcore.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorDeviceMismatchError,
    FakeTensorMode,
)
from dispatchcore.fx import make_fx


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


_names = itertools.count()


def test_a_factory_under_the_mode_makes_a_fake_cuda_tensor_without_a_gpu():
    with FakeTensorMode() as mode:
        x = dc.empty(2, 3, device="cuda")
    assert type(x) is FakeTensor and x.fake_mode is mode
    assert str(x.device) == "cuda:0" and x.fake_device == x.device
    assert hex(int(dc.dispatch_keys(x))) == "0x100801410010002"
    assert repr(x) == "FakeTensor(..., device='cuda:0', size=(2, 3))"


def test_operators_run_their_meta_kernels_and_keep_the_fake_device():
    with FakeTensorMode():
        x = dc.empty(4, 3, device="cuda")
        y = (x @ x.t()).softmax(1)
    assert type(y) is FakeTensor and str(y.device) == "cuda:0"
    assert tuple(y.shape) == (4, 4) and y.stride() == (4, 1)


def test_the_same_real_tensor_always_gives_the_same_fake():
    mode = FakeTensorMode()
    x = dc.ones(2, 3)
    assert mode.from_tensor(x) is mode.from_tensor(x)
    assert mode.from_tensor(mode.from_tensor(x)) is mode.from_tensor(x)


def test_a_converted_view_is_a_view_of_the_converted_base():
    mode = FakeTensorMode()
    x = dc.ones(4, 2)
    fv = mode.from_tensor(x[1:].t())
    assert fv._base is mode.from_tensor(x)
    assert fv.stride() == (1, 2) and fv.storage_offset() == 2
    assert fv._version == mode.from_tensor(x)._version


def test_views_made_under_the_mode_share_the_base_and_its_version_counter():
    with FakeTensorMode():
        x = dc.zeros(3, 4)
        v = x[1]
        v.add_(1)
    assert v._base is x and x._version == 1


def test_an_in_place_op_returns_the_same_fake_tensor():
    with FakeTensorMode():
        x = dc.zeros(3)
        assert x.mul_(2) is x


def test_a_real_tensor_mixed_in_raises_torchs_assertion():
    r = dc.ones(2)
    with FakeTensorMode():
        x = dc.ones(2, 3)
        with pytest.raises(AssertionError, match=r"^Please convert all Tensors to FakeTensors first .* Found in "
                                                 r"aten\.add\.Tensor\(tensor\(\[\.\.\.\], size=\(2,\)\), "
                                                 r"FakeTensor\(\.\.\., size=\(2, 3\)\)\)$"):
            r + x


def test_allow_non_fake_inputs_converts_real_tensors():
    with FakeTensorMode(allow_non_fake_inputs=True):
        out = dc.ones(2, 3) + dc.ones(3)
    assert type(out) is FakeTensor and tuple(out.shape) == (2, 3)


def test_fake_tensors_of_two_modes_do_not_mix():
    a = FakeTensorMode().from_tensor(dc.ones(2))
    b = FakeTensorMode().from_tensor(dc.ones(2))
    with pytest.raises(AssertionError, match="^Mixing fake modes NYI"):
        a + b


def test_outside_the_mode_a_fake_tensor_finds_its_own_mode():
    mode = FakeTensorMode()
    x = mode.from_tensor(dc.ones(2, 3))
    y = x.cos().sum(0)
    assert type(y) is FakeTensor and y.fake_mode is mode and tuple(y.shape) == (3,)


def test_a_zero_dim_cpu_tensor_mixes_with_cuda_and_two_devices_do_not():
    with FakeTensorMode():
        c = dc.empty(2, device="cuda")
        assert str((c + dc.empty(())).device) == "cuda:0"
        assert str((dc.empty(()) * c).device) == "cuda:0"
        with pytest.raises(FakeTensorDeviceMismatchError, match=r"^Expected all tensors to be on the same device, "
                                                                r"but found at least two devices, cuda:0 and cpu!$"):
            c + dc.empty(2)


def test_explicit_device_arguments_pick_the_output_device():
    with FakeTensorMode():
        c = dc.empty(2, 3, device="cuda")
        assert c.cpu().device.type == "cpu" and str(c.new_zeros(2).device) == "cuda:0"
        assert str(dc.ones_like(c).device) == "cuda:0"


@pytest.mark.parametrize(("fn", "error", "op"), [
    (lambda x: x.nonzero(), DynamicOutputShapeException, "aten.nonzero.default"),
    (lambda x: x.masked_select(x > 0), DynamicOutputShapeException, "aten.masked_select.default"),
    (lambda x: x[x > 0], DynamicOutputShapeException, "aten.nonzero.default"),
    (lambda x: x.sum().item(), DataDependentOutputException, "aten._local_scalar_dense.default"),
    (lambda x: x.tolist(), DataDependentOutputException, "aten._local_scalar_dense.default"),
    (lambda x: bool(x.sum() > 0), DataDependentOutputException, "aten._local_scalar_dense.default"),
])
def test_data_dependent_operators_raise_naming_the_operator(fn, error, op):
    with FakeTensorMode():
        x = dc.ones(2, 3)
        with pytest.raises(error) as info:
            fn(x)
    assert str(info.value) == op


def test_an_mlp_forward_and_backward_give_fake_outputs_and_grads_of_the_right_shapes():
    nn = dc.nn
    with FakeTensorMode():
        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
        loss = nn.CrossEntropyLoss()(model(dc.randn(16, 8)), dc.randint(0, 3, (16,)))
        loss.backward()
    assert repr(loss) == "FakeTensor(..., size=(), grad_fn=<NllLossBackward0>)"
    assert [tuple(p.grad.shape) for p in model.parameters()] == [(32, 8), (32,), (3, 32), (3,)]
    assert all(type(p) is FakeTensor and isinstance(p, nn.Parameter) for p in model.parameters())


def test_a_parameter_of_a_fake_tensor_is_that_fake_tensor_flagged_as_a_parameter():
    with FakeTensorMode():
        p = dc.nn.Parameter(dc.ones(2))
    assert type(p) is FakeTensor and isinstance(p, dc.nn.Parameter)
    assert repr(p) == "Parameter(FakeTensor(..., size=(2,), requires_grad=True))"


def test_a_custom_ops_fake_impl_runs_on_the_fake_tensors_with_a_fake_ctx():
    ns = f"unit_fake{next(_names)}"
    seen = []

    @dc.library.custom_op(f"{ns}::twice", mutates_args=())
    def twice(x: Tensor) -> Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        seen.append((type(x).__name__, str(x.device), type(dc.library.get_ctx()).__name__))
        return dc.empty_like(x)

    with FakeTensorMode():
        out = twice(dc.empty(3, device="cuda"))
    assert seen == [("FakeTensor", "cuda:0", "FakeImplCtx")] and str(out.device) == "cuda:0"


def test_new_dynamic_size_without_a_shape_env_raises_naming_the_custom_op():
    ns = f"unit_fake{next(_names)}"

    @dc.library.custom_op(f"{ns}::nz", mutates_args=())
    def nz(x: Tensor) -> Tensor:
        return x.nonzero()

    @nz.register_fake
    def _(x):
        return x.new_empty(dc.library.get_ctx().new_dynamic_size(), x.dim(), dtype=dc.int64)

    with FakeTensorMode(), pytest.raises(DynamicOutputShapeException) as info:
        nz(dc.ones(3))
    assert str(info.value) == f"{ns}.nz.default"


def test_opcheck_runs_the_op_under_the_fake_mode_and_compares_devices_too():
    ns = f"unit_fake{next(_names)}"

    @dc.library.custom_op(f"{ns}::flat", mutates_args=())
    def flat(x: Tensor) -> Tensor:
        return x.reshape(-1).clone()

    flat.register_fake(lambda x: dc.empty(x.numel(), device="meta"))  # wrong device
    result = dc.library.opcheck(flat, (dc.ones(2, 3),), test_utils="test_faketensor", raise_exception=False)
    assert str(result["test_faketensor"]).endswith(
        "found mismatched tensor metadata: Devices cpu and meta are not equal!")


def test_entering_the_mode_puts_it_beneath_other_modes():
    with dc.LoggingMode() as log, FakeTensorMode():
        x = dc.ones(2)
        _ = x + x
    assert log.ops == ["aten.ones.default", "aten.add.Tensor"]
    assert "f32[2]" in log.lines[-1]


def test_make_fx_fake_records_the_real_graph_with_fake_values():
    def f(x, w):
        return dc.nn.functional.relu(x @ w).sum(0) + 1

    real = make_fx(f)(dc.ones(2, 3), dc.ones(3, 3))
    fake = make_fx(f, tracing_mode="fake")(dc.ones(2, 3), dc.ones(3, 3))
    assert fake.code == real.code
    vals = [n.meta["val"] for n in fake.graph.nodes if n.op != "output"]
    assert all(type(v) is FakeTensor for v in vals)
    assert fake(dc.ones(2, 3), dc.ones(3, 3)).tolist() == [7.0, 7.0, 7.0]


def test_make_fx_fake_takes_fake_cuda_inputs_and_keeps_their_mode():
    with FakeTensorMode() as mode:
        x = dc.empty(2, 3, device="cuda")
    gm = make_fx(lambda x: x.sin(), tracing_mode="fake")(x)
    val = gm.graph.nodes[1].meta["val"]
    assert val.fake_mode is mode and str(val.device) == "cuda:0"


def test_make_fx_fake_refuses_a_real_constant_as_torch_does():
    g = dc.ones(3)
    with pytest.raises(AssertionError, match="Please convert all Tensors to FakeTensors first"):
        make_fx(lambda x: x + g, tracing_mode="fake")(dc.ones(3))
