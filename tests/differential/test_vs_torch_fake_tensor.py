"""FakeTensorMode against torch 2.13's: key sets, reprs, output metadata, devices, refusals, modules, make_fx."""


import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402

import dispatchcore as dc  # noqa: E402
from dispatchcore.fake_tensor import FakeTensorMode  # noqa: E402
from dispatchcore.fx import make_fx  # noqa: E402

pytestmark = [pytest.mark.differential, pytest.mark.usefixtures("quiet_fake_tensor_log")]



def _modes(**kwargs):
    return ((dc, FakeTensorMode(**kwargs)), (torch, TorchFakeTensorMode(**kwargs)))


def _both(fn, **kwargs):
    """fn(m) under each library's fake mode: {dc: result, torch: result}."""
    out = {}
    for m, mode in _modes(**kwargs):
        with mode:
            out[m] = fn(m)
    return out


@pytest.mark.parametrize("device", ["cpu", "cuda", "meta"])
def test_a_fake_tensors_key_set_is_torchs_bit_for_bit(device):
    got = _both(lambda m: m.empty(2, 3, device=device))
    assert hex(int(dc.dispatch_keys(got[dc]))) == hex(torch._C._dispatch_keys(got[torch]).raw_repr())
    assert str(dc.dispatch_keys(got[dc])).removeprefix("DispatchKeySet") == \
        str(torch._C._dispatch_keys(got[torch])).removeprefix("DispatchKeySet")


def _repr(t):
    return repr(t).replace("torch.", "dispatchcore.")


@pytest.mark.parametrize("fn", [
    lambda m: m.empty(2, device="cuda"),
    lambda m: m.ones(2, 3),
    lambda m: m.ones(2, 3, dtype=m.float64, requires_grad=True),
    lambda m: m.ones(2, 3, dtype=m.float64, requires_grad=True) * 2,
    lambda m: m.ones((), dtype=m.int64),
    lambda m: m.zeros(0, 3),
    lambda m: m.empty(3, device="cuda:1"),
    lambda m: m.empty(2, device="meta"),
    lambda m: m.nn.Parameter(m.ones(2)),
])
def test_reprs_are_torchs(fn):
    got = _both(fn)
    assert repr(got[dc]) == _repr(got[torch])


_OPS = [
    lambda m, x: x @ x.t(),
    lambda m, x: x.t(),
    lambda m, x: x.narrow(1, 1, 2),
    lambda m, x: x.select(0, 1),
    lambda m, x: x.sum(0),
    lambda m, x: x.mean(1, keepdim=True),
    lambda m, x: x.softmax(1),
    lambda m, x: m.cat([x, x], 1),
    lambda m, x: x.unsqueeze(0).expand(2, 4, 3),
    lambda m, x: x.reshape(3, 4),
    lambda m, x: x.to(m.float64),
    lambda m, x: x > 0,
    lambda m, x: x.argmax(1),
    lambda m, x: x.cpu(),
    lambda m, x: x.new_zeros(5),
    lambda m, x: m.ones_like(x),
    lambda m, x: x + m.empty(()),
    lambda m, x: m.where(x > 0, x, 0.0),
    lambda m, x: x.max(1),
    lambda m, x: m.nn.functional.linear(x, m.empty(5, 3, device=x.device)),
]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("op", _OPS)
def test_output_metadata_is_torchs(op, device):
    def run(m):
        out = op(m, m.empty(4, 3, device=device))
        outs = out if isinstance(out, tuple) else (out,)
        return [(tuple(t.shape), t.stride(), t.storage_offset(), str(t.dtype).split(".")[-1], str(t.device),
                 type(t).__name__) for t in outs]

    got = _both(run)
    assert got[dc] == got[torch]


@pytest.mark.parametrize("fn", [
    lambda m: m.empty(2, device="cuda") + m.empty(2),
    lambda m: m.empty(2) * m.empty(2, device="cuda"),
    lambda m: m.empty(2, 2, device="cuda") @ m.empty(2, 2),
    lambda m: m.empty((), device="cuda") * m.empty(3),
])
def test_two_devices_raise_torchs_mismatch_error(fn):
    errors = {}
    for m, mode in _modes():
        with mode, pytest.raises(RuntimeError) as info:
            fn(m)
        errors[m] = (type(info.value).__name__, str(info.value))
    assert errors[dc] == errors[torch]


@pytest.mark.parametrize("fn", [
    lambda m: (m.empty(2, device="cuda") + m.empty(())).device,
    lambda m: (m.empty((), device="cuda") + m.empty(())).device,
    lambda m: (m.empty(()) + m.empty(2, device="cuda")).device,
])
def test_zero_dim_cpu_tensors_follow_the_other_device_as_torch(fn):
    got = _both(fn)
    assert str(got[dc]) == str(got[torch])


def test_a_real_tensor_mixed_in_raises_torchs_assertion(raises_alike):
    dc_mode, torch_mode = FakeTensorMode(), TorchFakeTensorMode()
    with dc_mode:
        dx = dc.ones(2, 3)
    with torch_mode:
        tx = torch.ones(2, 3)
    dr, tr = dc.ones(2), torch.ones(2)
    raises_alike(lambda: dr + dx, lambda: tr + tx)
    raises_alike(lambda: dx * dr, lambda: tx * tr)


def test_allow_non_fake_inputs_converts_as_torch():
    got = _both(lambda m: m.ones(2, 3) + TENSORS[m], allow_non_fake_inputs=True)
    assert repr(got[dc]) == _repr(got[torch])


TENSORS = {dc: dc.ones(3), torch: torch.ones(3)}


@pytest.mark.parametrize("fn", [
    lambda m, x: x.nonzero(),
    lambda m, x: x.masked_select(x > 0),
    lambda m, x: x[x > 0],
    lambda m, x: m.argwhere(x),
    lambda m, x: x.sum().item(),
    lambda m, x: x.tolist(),
    lambda m, x: bool(x.sum() > 0),
    lambda m, x: float(x[0, 0]),
])
def test_data_dependent_operators_raise_torchs_exceptions(fn):
    errors = {}
    for m, mode in _modes():
        with mode:
            x = m.ones(2, 3)
            with pytest.raises(RuntimeError) as info:
                fn(m, x)
        errors[m] = (type(info.value).__name__, str(info.value))
    assert errors[dc] == errors[torch]


def test_from_tensor_memoizes_and_keeps_views_as_torch():
    def run(m, mode):
        x = m.ones(4, 2, requires_grad=True)
        v = x.detach()[1:].t()
        fx, fv = mode.from_tensor(x), mode.from_tensor(v)
        return (mode.from_tensor(x) is fx, fv._base is mode.from_tensor(v._base), fv.stride(), fv.storage_offset(),
                fx.requires_grad, fx.is_leaf, _repr(fx) if m is torch else repr(fx))

    got = {m: run(m, mode) for m, mode in _modes()}
    assert got[dc] == got[torch]


def test_the_mlp_example_trains_one_step_on_fake_inputs_with_torchs_shapes():
    def run(m):
        nn = m.nn
        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
        loss = nn.CrossEntropyLoss()(model(m.randn(16, 8)), m.randint(0, 3, (16,)))
        loss.backward()
        return (_repr(loss), [(tuple(p.shape), tuple(p.grad.shape), type(p.grad).__name__, repr(p).split(",")[0])
                              for p in model.parameters()])

    got = _both(run)
    assert got[dc] == got[torch]


def test_a_real_module_under_allow_non_fake_inputs_gets_fake_grads_as_torch():
    def run(m):
        lin = m.nn.Linear(4, 2)
        mode = (FakeTensorMode if m is dc else TorchFakeTensorMode)(allow_non_fake_inputs=True)
        with mode:
            out = lin(m.randn(3, 4))
            out.sum().backward()
        return _repr(out), type(lin.weight.grad).__name__, tuple(lin.weight.grad.shape)

    assert run(dc) == run(torch)


def test_a_custom_ops_fake_impl_sees_fake_tensors_and_a_fake_ctx_as_torch():
    results = {}
    for m, mode in _modes():
        seen = []
        ns = f"fakediff_{m.__name__}"

        @m.library.custom_op(f"{ns}::twice", mutates_args=())
        def twice(x: m.Tensor) -> m.Tensor:
            return x * 2

        @twice.register_fake
        def _(x, m=m, seen=seen):
            seen.append((type(x).__name__, str(x.device), type(m.library.get_ctx()).__name__))
            return m.empty_like(x)

        @m.library.custom_op(f"{ns}::nz", mutates_args=())
        def nz(x: m.Tensor) -> m.Tensor:
            return x.nonzero()

        @nz.register_fake
        def _(x, m=m):
            return x.new_empty(m.library.get_ctx().new_dynamic_size(), x.dim(), dtype=m.int64)

        with mode:
            out = twice(m.empty(3, device="cuda"))
            with pytest.raises(RuntimeError) as info:
                nz(m.empty(3, device="cuda"))
        results[m] = (seen, str(out.device), type(info.value).__name__, str(info.value).split(".", 1)[1])
    assert results[dc] == results[torch]


def _fx_ops(gm):
    return [str(n.target).removeprefix("torch.ops.") for n in gm.graph.nodes if n.op == "call_function"]


@pytest.mark.parametrize("f", [
    lambda m, x, w: m.nn.functional.relu(x @ w).sum(0) + 1,
    lambda m, x, w: (x.t() @ x).softmax(1) * w,
    lambda m, x, w: m.cat([x.sin(), x.cos()]).mean(),
])
def test_make_fx_fake_records_torchs_operators_and_the_real_trace(f):
    dcx, dcw = dc.ones(3, 3), dc.ones(3, 3)
    tx, tw = torch.ones(3, 3), torch.ones(3, 3)
    fake = make_fx(lambda x, w: f(dc, x, w), tracing_mode="fake")(dcx, dcw)
    real = make_fx(lambda x, w: f(dc, x, w))(dcx, dcw)
    theirs = torch_make_fx(lambda x, w: f(torch, x, w), tracing_mode="fake")(tx, tw)
    assert _fx_ops(fake) == _fx_ops(theirs) == _fx_ops(real)
    vals = {m: [(tuple(n.meta["val"].shape), type(n.meta["val"]).__name__) for n in gm.graph.nodes
                if n.op != "output"] for m, gm in ((dc, fake), (torch, theirs))}
    assert vals[dc] == vals[torch]


def test_make_fx_fake_traces_a_backward_into_torchs_joint_graph():
    def f(m, x):
        y = x.sin().sum()
        y.backward()
        return x.grad

    fake = make_fx(lambda x: f(dc, x), tracing_mode="fake")(dc.ones(3, requires_grad=True))
    theirs = torch_make_fx(lambda x: f(torch, x), tracing_mode="fake")(torch.ones(3, requires_grad=True))
    forward = [op for op in _fx_ops(theirs) if op != "aten.detach.default"]
    assert [op for op in _fx_ops(fake) if op not in ("aten.new_empty_strided.default", "aten.copy_.default")][:5] \
        == forward[:5]
