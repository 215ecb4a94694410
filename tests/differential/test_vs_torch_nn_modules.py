"""``dispatchcore.nn`` modules against ``torch.nn``: repr, seeded weights, forward, backward, state dicts, traces.

Forward/backward checks copy torch's weights in with ``load_state_dict`` (so they test the
modules, not the random numbers); ``test_seeded_construction_*`` checks that the same
``manual_seed`` gives torch's exact weights (it needs the CPU generator to equal torch's).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import nn
from dispatchcore.autograd.gradcheck import gradgradcheck

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

TNN = torch.nn
TA = torch.ops.aten
RNG = np.random.default_rng(0)

# name -> constructor taking the nn namespace; the input shapes each module is run on
MODULES = {
    "linear": (lambda n: n.Linear(3, 4), [(2, 3), (5, 2, 3)]),
    "linear_nobias": (lambda n: n.Linear(3, 4, bias=False), [(2, 3)]),
    "conv1d": (lambda n: n.Conv1d(2, 4, 3), [(2, 2, 8), (1, 2, 5)]),
    "conv1d_same": (lambda n: n.Conv1d(2, 4, 3, padding="same", bias=False), [(2, 2, 8)]),
    "conv1d_reflect": (lambda n: n.Conv1d(2, 4, 3, stride=2, padding=1, padding_mode="reflect"), [(2, 2, 8)]),
    "conv2d": (lambda n: n.Conv2d(3, 4, 3), [(2, 3, 7, 6), (1, 3, 3, 3)]),
    "conv2d_groups": (lambda n: n.Conv2d(2, 4, (3, 2), stride=2, padding=1, groups=2), [(2, 2, 7, 6)]),
    "conv2d_circular": (lambda n: n.Conv2d(3, 2, 3, padding=1, padding_mode="circular"), [(1, 3, 5, 5)]),
    "conv2d_dilated": (lambda n: n.Conv2d(3, 2, 3, dilation=2, padding="same"), [(1, 3, 6, 6)]),
    "maxpool": (lambda n: n.MaxPool2d(2), [(2, 3, 6, 6), (1, 1, 5, 4)]),
    "maxpool_pad": (lambda n: n.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), [(2, 3, 7, 6)]),
    "avgpool": (lambda n: n.AvgPool2d(2), [(2, 3, 6, 6)]),
    "avgpool_pad": (lambda n: n.AvgPool2d(3, 2, 1, count_include_pad=False), [(2, 3, 7, 6)]),
    "flatten": (lambda n: n.Flatten(), [(2, 3, 4), (2, 3, 4, 5)]),
    "flatten_dims": (lambda n: n.Flatten(0, 1), [(2, 3, 4)]),
    "layernorm": (lambda n: n.LayerNorm(4), [(2, 4), (2, 3, 4)]),
    "layernorm_2d_noaffine": (lambda n: n.LayerNorm([3, 4], elementwise_affine=False), [(2, 3, 4)]),
    "layernorm_nobias": (lambda n: n.LayerNorm(4, bias=False), [(3, 4)]),
    "batchnorm1d": (lambda n: n.BatchNorm1d(3), [(4, 3), (4, 3, 5)]),
    "batchnorm1d_cma": (lambda n: n.BatchNorm1d(3, momentum=None), [(4, 3)]),
    "batchnorm2d": (lambda n: n.BatchNorm2d(3), [(2, 3, 4, 4)]),
    "batchnorm2d_nostats": (lambda n: n.BatchNorm2d(3, affine=False, track_running_stats=False), [(2, 3, 4, 4)]),
    "relu": (lambda n: n.ReLU(), [(2, 5), (3,)]),
    "relu6": (lambda n: n.ReLU6(), [(2, 5)]),
    "gelu": (lambda n: n.GELU(), [(2, 5)]),
    "gelu_tanh": (lambda n: n.GELU("tanh"), [(2, 5)]),
    "silu": (lambda n: n.SiLU(), [(2, 5)]),
    "tanh": (lambda n: n.Tanh(), [(2, 5)]),
    "sigmoid": (lambda n: n.Sigmoid(), [(2, 5)]),
    "softmax": (lambda n: n.Softmax(dim=1), [(2, 5), (2, 3, 4)]),
    "logsoftmax": (lambda n: n.LogSoftmax(dim=-1), [(2, 5)]),
    "leakyrelu": (lambda n: n.LeakyReLU(0.2), [(2, 5)]),
    "elu": (lambda n: n.ELU(alpha=0.5), [(2, 5)]),
    "softplus": (lambda n: n.Softplus(beta=2.0, threshold=3.0), [(2, 5)]),
    "identity": (lambda n: n.Identity(7, key="ignored"), [(2, 5)]),
    "dropout_eval": (lambda n: n.Dropout(0.3).eval(), [(4, 5)]),
    "mlp": (lambda n: n.Sequential(n.Linear(4, 8), n.ReLU(), n.Linear(8, 3), n.LogSoftmax(dim=1)), [(5, 4)]),
    "cnn": (lambda n: n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(), n.MaxPool2d(2),
                                   n.Flatten(), n.Linear(4 * 4 * 4, 3)), [(2, 1, 8, 8)]),
}
EMBEDDINGS = {
    "embedding": lambda n: n.Embedding(10, 3),
    "embedding_pad": lambda n: n.Embedding(10, 3, padding_idx=2),
    "embedding_negpad": lambda n: n.Embedding(6, 4, padding_idx=-1),
}


def _to_dc(t):
    return dc.tensor(t.detach().numpy().copy())


def _close(mine, theirs, atol=1e-5):
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=atol, rtol=atol)


def _pair_module(make):
    theirs = make(TNN)
    mine = make(nn)
    mine.load_state_dict({k: _to_dc(v) for k, v in theirs.state_dict().items()})
    mine.train(theirs.training)
    return mine, theirs


def _check_states(mine, theirs):
    mine_sd, theirs_sd = mine.state_dict(), theirs.state_dict()
    assert list(mine_sd) == list(theirs_sd)
    for key, value in theirs_sd.items():
        _close(mine_sd[key], value)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_repr_matches_torch(name):
    make, _ = MODULES[name]
    assert repr(make(nn)) == repr(make(TNN))


@pytest.mark.parametrize("name", sorted(MODULES) + sorted(EMBEDDINGS))
def test_module_state_dict_keys_and_parameter_names_match_torch(name):
    make = MODULES[name][0] if name in MODULES else EMBEDDINGS[name]
    mine, theirs = make(nn), make(TNN)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    mine_sd = mine.state_dict()
    for key, value in theirs.state_dict().items():
        assert tuple(mine_sd[key].shape) == tuple(value.shape)
        assert str(mine_sd[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_forward_backward_and_buffers_match_torch(name):
    make, shapes = MODULES[name]
    mine, theirs = _pair_module(make)
    for shape in shapes:
        data = RNG.standard_normal(shape).astype("float32")
        x, tx = dc.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        out, tout = mine(x), theirs(tx)
        _close(out, tout)
        grad = RNG.standard_normal(tuple(tout.shape)).astype("float32")
        out.backward(dc.tensor(grad))
        tout.backward(torch.tensor(grad))
        _close(x.grad, tx.grad)
        for (n, p), (tn, tp) in zip(mine.named_parameters(), theirs.named_parameters()):
            assert n == tn
            _close(p.grad, tp.grad)
        _check_states(mine, theirs)
        mine.zero_grad()
        theirs.zero_grad()


@pytest.mark.parametrize("name", ["batchnorm1d", "batchnorm2d", "batchnorm1d_cma", "cnn"])
def test_batchnorm_eval_after_training_steps_matches_torch(name):
    make, shapes = MODULES[name]
    mine, theirs = _pair_module(make)
    for _ in range(3):
        data = RNG.standard_normal(shapes[0]).astype("float32")
        _close(mine(dc.tensor(data)), theirs(torch.tensor(data)))
    mine.eval()
    theirs.eval()
    data = RNG.standard_normal(shapes[0]).astype("float32")
    _close(mine(dc.tensor(data)), theirs(torch.tensor(data)))
    _check_states(mine, theirs)


@pytest.mark.parametrize("name", sorted(EMBEDDINGS))
def test_embedding_forward_backward_matches_torch(name):
    mine, theirs = _pair_module(EMBEDDINGS[name])
    assert repr(mine) == repr(theirs)
    n = theirs.num_embeddings
    for shape in [(4,), (2, 3)]:
        idx = RNG.integers(0, n, size=shape)
        out, tout = mine(dc.tensor(idx)), theirs(torch.tensor(idx))
        _close(out, tout)
        grad = RNG.standard_normal(tuple(tout.shape)).astype("float32")
        out.backward(dc.tensor(grad))
        tout.backward(torch.tensor(grad))
        _close(mine.weight.grad, theirs.weight.grad)
        mine.zero_grad()
        theirs.zero_grad()


# two-input modules: constructor, and the (input1, input2) shapes each is run on
BILINEARS = {
    "bilinear": (lambda n: n.Bilinear(3, 4, 2), [((5, 3), (5, 4)), ((2, 3, 3), (2, 3, 4)), ((3,), (4,))]),
    "bilinear_nobias": (lambda n: n.Bilinear(2, 2, 3, bias=False), [((4, 2), (4, 2))]),
}

SEEDED = {**{k: v[0] for k, v in MODULES.items()}, **EMBEDDINGS, **{k: v[0] for k, v in BILINEARS.items()},
          "bigger_linear": lambda n: n.Linear(64, 32), "bigger_conv": lambda n: n.Conv2d(8, 16, 5)}


@pytest.mark.parametrize("name", sorted(BILINEARS))
def test_bilinear_repr_state_dict_forward_and_backward_match_torch(name):
    make, shapes = BILINEARS[name]
    mine, theirs = _pair_module(make)
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for shape1, shape2 in shapes:
        a, b = RNG.standard_normal(shape1).astype("float32"), RNG.standard_normal(shape2).astype("float32")
        x1, x2 = dc.tensor(a, requires_grad=True), dc.tensor(b, requires_grad=True)
        t1, t2 = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        out, tout = mine(x1, x2), theirs(t1, t2)
        _close(out, tout)
        assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
        grad = RNG.standard_normal(tuple(tout.shape)).astype("float32")
        out.backward(dc.tensor(grad))
        tout.backward(torch.tensor(grad))
        for mine_grad, their_grad in [(x1.grad, t1.grad), (x2.grad, t2.grad), *(
                (p.grad, tp.grad) for p, tp in zip(mine.parameters(), theirs.parameters()))]:
            _close(mine_grad, their_grad)
        mine.zero_grad()
        theirs.zero_grad()


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_calls_torchs_aten_ops_forward_and_backward(bias, torch_ops):
    a, b, w = (RNG.standard_normal(s).astype("float32") for s in [(2, 3, 2), (2, 3, 4), (5, 2, 4)])

    def program(m):
        x1, x2, weight = (m.tensor(v, requires_grad=True) for v in (a, b, w))
        bias_t = m.ones(5, requires_grad=True) if bias else None

        def run():
            m.nn.functional.bilinear(x1, x2, weight, bias_t).sum().backward()
        return run

    # every call is torch's, AccumulateGrad's taking the leaves' gradients over included
    assert _dc_ops(program(dc)) == torch_ops(program(torch))


@pytest.mark.parametrize("expands", [
    ([1, 3], [0], [1, 2], [2, 3], 1),  # bilinear's own call
    ([0], [1], [2], [], 0),  # an outer product: nothing summed
    ([2], [0], [1], [2], 2),  # the unrolled dim summed
])
def test_trilinear_value_gradients_and_double_backward(expands):
    expand1, expand2, expand3, sumdim, unroll = expands
    total = 3 if len(expand1) == 1 else 4
    shapes = [tuple(s for i, s in enumerate((2, 3, 4, 5)[:total]) if i not in e) for e in (expand1, expand2, expand3)]
    data = [RNG.standard_normal(s) for s in shapes]
    mine = [dc.tensor(d, requires_grad=True) for d in data]
    theirs = [torch.tensor(d, requires_grad=True) for d in data]
    args = (expand1, expand2, expand3, sumdim, unroll)
    out, tout = dc.ops.aten._trilinear.default(*mine, *args), TA._trilinear.default(*theirs, *args)
    _close(out, tout, atol=1e-10)
    out.sum().backward()
    tout.sum().backward()
    for m, t in zip(mine, theirs):
        _close(m.grad, t.grad, atol=1e-10)
    assert gradgradcheck(lambda *ts: dc.ops.aten._trilinear.default(*ts, *args), tuple(dc.tensor(d, requires_grad=True)
                                                                                     for d in data))


@pytest.mark.parametrize("case", ["dims", "batch", "in1", "in2", "bias", "unroll"])
def test_bilinear_and_trilinear_errors_match_torch(case):
    calls = {
        "dims": lambda t: t.nn.functional.bilinear(t.ones(2, 3), t.ones(4), t.ones(1, 3, 4)),
        "batch": lambda t: t.nn.functional.bilinear(t.ones(2, 3), t.ones(5, 4), t.ones(1, 3, 4)),
        "in1": lambda t: t.nn.functional.bilinear(t.ones(2, 2), t.ones(2, 4), t.ones(1, 3, 4)),
        "in2": lambda t: t.nn.functional.bilinear(t.ones(2, 3), t.ones(2, 5), t.ones(1, 3, 4)),
        "bias": lambda t: t.nn.functional.bilinear(t.ones(2, 3), t.ones(2, 4), t.ones(1, 3, 4), t.ones(2)),
        "unroll": lambda t: t.ops.aten._trilinear.default(t.ones(2), t.ones(2), t.ones(2), [], [], [], [], 3),
    }
    _raises_alike(lambda: calls[case](dc), lambda: calls[case](torch))


def test_bilinear_runs_on_meta_tensors_with_torchs_output_shape():
    out = nn.functional.bilinear(dc.ones(2, 3, 3, device="meta"), dc.ones(2, 3, 4, device="meta"),
                                 dc.ones(5, 3, 4, device="meta"), dc.ones(5, device="meta"))
    tout = TNN.functional.bilinear(torch.ones(2, 3, 3, device="meta"), torch.ones(2, 3, 4, device="meta"),
                                   torch.ones(5, 3, 4, device="meta"), torch.ones(5, device="meta"))
    assert (tuple(out.shape), out.device.type) == (tuple(tout.shape), "meta")


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("name", sorted(SEEDED))
def test_seeded_construction_gives_torchs_exact_weights(name, seed):
    torch.manual_seed(seed)
    theirs = SEEDED[name](TNN)
    dc.manual_seed(seed)
    mine = SEEDED[name](nn)
    theirs_sd = theirs.state_dict()
    mine_sd = mine.state_dict()
    assert list(mine_sd) == list(theirs_sd)
    for key, value in theirs_sd.items():
        _same_draws(mine_sd[key].numpy(), value.numpy(), normal=name.startswith("embedding"))


def _same_draws(mine, theirs, normal):
    """Uniform draws equal torch's bit for bit; normal ones too, except that torch computes tensors of
    16 or more normals with vectorised log/cos (normal_fill_16), which numpy matches to within 1 ulp
    of the standard normal; ``mean + std * z`` then carries that ulp, scaled, into every value."""
    if normal:
        scale = float(np.abs(theirs).max()) if theirs.size else 0.0
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=4 * np.finfo(theirs.dtype).eps * scale)
    else:
        assert np.array_equal(mine, theirs)


@pytest.mark.parametrize("init_name, args", [
    ("uniform_", (-0.5, 2.0)), ("normal_", (1.0, 3.0)), ("xavier_uniform_", (2.0,)), ("xavier_normal_", ()),
    ("kaiming_uniform_", ()), ("kaiming_normal_", (0.1, "fan_out", "relu")), ("constant_", (0.25,)),
    ("ones_", ()), ("zeros_", ())])
def test_init_functions_draw_torchs_numbers(init_name, args):
    torch.manual_seed(3)
    theirs = getattr(TNN.init, init_name)(torch.empty(5, 4, 3), *args)
    dc.manual_seed(3)
    mine = getattr(nn.init, init_name)(dc.empty(5, 4, 3), *args)
    _same_draws(mine.numpy(), theirs.numpy(), normal="normal" in init_name)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("shape", ((7,), (33,), (40, 25)))
@pytest.mark.parametrize("kwargs", [
    {},  # p > 0.3: normal draws, the ones outside [a, b] redrawn
    {"std": 0.02, "a": -0.04, "b": 0.04},
    {"mean": 0.5, "std": 0.1, "a": 0.0, "b": 1.0},
    {"mean": 0.0, "std": 1.0, "a": 1.5, "b": 3.0},  # p <= 0.3: uniform proposals, accepted by the pdf ratio
    {"mean": 0.0, "std": 0.5, "a": 2.0, "b": 2.5},  # far in the tail: torch's warning too
])
def test_trunc_normal_draws_torchs_numbers_on_both_sampler_paths(kwargs, shape, dtype):
    def run(m, init):
        m.manual_seed(11)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = init.trunc_normal_(m.empty(*shape, dtype=getattr(m, dtype)), **kwargs)
        return out.numpy(), [str(w.message) for w in caught]

    (theirs, their_warnings), (mine, my_warnings) = run(torch, TNN.init), run(dc, nn.init)
    assert my_warnings == their_warnings
    lo, hi = kwargs.get("a", -2.0), kwargs.get("b", 2.0)
    assert ((mine >= lo) & (mine <= hi)).all()
    # the draws are torch's (normal ones to torch's ulp, see _same_draws); a rejection decided by
    # that last ulp would shift every later value, so equal values mean the same accept/reject path
    _same_draws(mine, theirs, normal=True)
    assert dc.get_rng_state().numpy().tobytes() == torch.get_rng_state().numpy().tobytes()


@pytest.mark.parametrize("nonlinearity, param", [("linear", None), ("conv2d", None), ("sigmoid", None),
                                                  ("tanh", None), ("relu", None), ("leaky_relu", None),
                                                  ("leaky_relu", 0.3), ("leaky_relu", 2), ("selu", None)])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert nn.init.calculate_gain(nonlinearity, param) == TNN.init.calculate_gain(nonlinearity, param)


@pytest.mark.parametrize("shape", [(3, 4), (5, 4, 3), (6, 2, 3, 3)])
def test_fan_in_and_fan_out_match_torch(shape):
    assert nn.init._calculate_fan_in_and_fan_out(dc.empty(*shape)) == \
        TNN.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


LOSSES = {
    "mse": (lambda n: n.MSELoss(), "float"),
    "mse_sum": (lambda n: n.MSELoss(reduction="sum"), "float"),
    "l1": (lambda n: n.L1Loss(), "float"),
    "l1_none": (lambda n: n.L1Loss(reduction="none"), "float"),
    "smooth_l1": (lambda n: n.SmoothL1Loss(beta=0.5), "float"),
    "smooth_l1_beta0": (lambda n: n.SmoothL1Loss(beta=0.0), "float"),
    "huber": (lambda n: n.HuberLoss(delta=0.7), "float"),
    "huber_sum": (lambda n: n.HuberLoss(reduction="sum"), "float"),
    "ce": (lambda n: n.CrossEntropyLoss(), "class"),
    "ce_weight": (lambda n: n.CrossEntropyLoss(weight=_weight(n)), "class"),
    "ce_ignore": (lambda n: n.CrossEntropyLoss(ignore_index=1), "class"),
    "ce_smooth": (lambda n: n.CrossEntropyLoss(label_smoothing=0.2), "class"),
    "ce_smooth_weight_sum": (lambda n: n.CrossEntropyLoss(weight=_weight(n), label_smoothing=0.1,
                                                          reduction="sum"), "class"),
    "ce_probs": (lambda n: n.CrossEntropyLoss(), "probs"),
    "nll": (lambda n: n.NLLLoss(), "logprob_class"),
    "nll_weight": (lambda n: n.NLLLoss(weight=_weight(n), reduction="none"), "logprob_class"),
    "bce": (lambda n: n.BCELoss(), "prob"),
    "bce_weight": (lambda n: n.BCELoss(weight=_weight(n)), "prob"),
    "bce_logits": (lambda n: n.BCEWithLogitsLoss(), "binary"),
    "bce_logits_pos": (lambda n: n.BCEWithLogitsLoss(pos_weight=_weight(n)), "binary"),
    "kldiv": (lambda n: n.KLDivLoss(reduction="batchmean"), "logprob_probs"),
}


def _weight(n):
    values = [0.5, 1.0, 2.0, 1.5]
    return torch.tensor(values) if n is TNN else dc.tensor(values)


def _loss_inputs(kind):
    x = RNG.standard_normal((3, 4)).astype("float32")
    if kind == "float":
        return x, RNG.standard_normal((3, 4)).astype("float32")
    if kind in ("class", "logprob_class"):
        if kind == "logprob_class":
            x = x - np.log(np.exp(x).sum(1, keepdims=True))
        return x, RNG.integers(0, 4, size=3)
    probs = RNG.random((3, 4)).astype("float32")
    probs /= probs.sum(1, keepdims=True)
    if kind == "probs":
        return x, probs
    if kind == "logprob_probs":
        return x - np.log(np.exp(x).sum(1, keepdims=True)), probs
    if kind == "prob":
        return RNG.uniform(0.05, 0.95, (3, 4)).astype("float32"), RNG.random((3, 4)).astype("float32")
    return x, (RNG.random((3, 4)) > 0.5).astype("float32")


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_value_and_grad_match_torch(name):
    make, kind = LOSSES[name]
    mine, theirs = make(nn), make(TNN)
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    x, target = _loss_inputs(kind)
    dx, tx = dc.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = mine(dx, dc.tensor(target)), theirs(tx, torch.tensor(target))
    _close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    _close(dx.grad, tx.grad)


class _Names(dc.DispatchMode):
    """Operator names only: like the torch side's mode it holds no tensor (a held gradient would be
    copied by AccumulateGrad, not taken over: Note [Stealing the gradient])."""

    def __init__(self):
        self.names = []

    def __dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def _dc_ops(fn):
    with _Names() as mode:
        fn()
    return mode.names


@pytest.mark.parametrize("name", ["linear", "mlp", "cnn", "conv2d", "conv1d_reflect", "layernorm", "batchnorm1d",
                                  "batchnorm2d_nostats", "maxpool", "avgpool", "relu", "gelu", "softmax", "flatten",
                                  "dropout_eval"])
def test_module_forward_calls_torchs_aten_ops(name, torch_ops):
    make, shapes = MODULES[name]
    mine, theirs = _pair_module(make)
    data = RNG.standard_normal(shapes[0]).astype("float32")
    x, tx = dc.tensor(data), torch.tensor(data)
    # saving an output for backward (relu, log_softmax) shows an aten.detach in both
    assert _dc_ops(lambda: mine(x)) == torch_ops(lambda: theirs(tx))


def _lib(n):
    return (dc, nn.functional) if n is TNN else (torch, TNN.functional)


FUNCTIONAL = {
    "linear": lambda F, t, x: F.linear(x, t.ones(3, 4) * 0.5, t.ones(3)),
    "conv1d": lambda F, t, x: F.conv1d(x.reshape(2, 3, 4), t.ones(2, 3, 2), None, 1, 1),
    "conv2d": lambda F, t, x: F.conv2d(x.reshape(1, 2, 2, 6), t.ones(3, 2, 3, 3), t.ones(3), padding="same"),
    "max_pool2d": lambda F, t, x: F.max_pool2d(x.reshape(1, 2, 3, 4), 2, ceil_mode=True),
    "max_pool2d_indices": lambda F, t, x: F.max_pool2d(x.reshape(1, 2, 3, 4), 2, return_indices=True)[0],
    "avg_pool2d": lambda F, t, x: F.avg_pool2d(x.reshape(1, 2, 3, 4), (2, 2), stride=1, padding=1),
    "dropout_eval": lambda F, t, x: F.dropout(x, 0.4, training=False),
    "layer_norm": lambda F, t, x: F.layer_norm(x, (4,), eps=1e-3),
    "batch_norm_train": lambda F, t, x: F.batch_norm(x, None, None, training=True),
    "gelu": lambda F, t, x: F.gelu(x),
    "gelu_tanh": lambda F, t, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, t, x: F.silu(x),
    "leaky_relu": lambda F, t, x: F.leaky_relu(x, 0.3),
    "elu": lambda F, t, x: F.elu(x, 0.7),
    "softplus": lambda F, t, x: F.softplus(x, beta=2.0, threshold=1.0),
    "logsigmoid": lambda F, t, x: F.logsigmoid(x * 10),
    "sigmoid": lambda F, t, x: F.sigmoid(x),
    "tanh": lambda F, t, x: F.tanh(x),
    "relu6": lambda F, t, x: F.relu6(x * 8),
    "hardtanh": lambda F, t, x: F.hardtanh(x, -0.5, 0.5),
    "pad_constant": lambda F, t, x: F.pad(x, (1, 2, 0, 1), value=3.0),
    "pad_reflect": lambda F, t, x: F.pad(x.reshape(1, 6, 4), (1, 2), mode="reflect"),
    "pad_replicate": lambda F, t, x: F.pad(x.reshape(1, 1, 6, 4), (1, 1, 2, 0), mode="replicate"),
    "pad_circular": lambda F, t, x: F.pad(x.reshape(1, 6, 4), (1, 1), mode="circular"),
    "normalize": lambda F, t, x: F.normalize(x),
    "normalize_p1": lambda F, t, x: F.normalize(x, p=1.0, dim=0),
    "cross_entropy": lambda F, t, x: F.cross_entropy(x, t.ones(6, dtype=t.int64), label_smoothing=0.1),
    "cross_entropy_weight": lambda F, t, x: F.cross_entropy(x, t.zeros(6).long(), weight=t.ones(4)),
    "cross_entropy_plain": lambda F, t, x: F.cross_entropy(x, t.zeros(6).long(), ignore_index=2),
    "bce": lambda F, t, x: F.binary_cross_entropy(t.sigmoid(x), t.sigmoid(x.detach() * 2), reduction="sum"),
    "bce_logits": lambda F, t, x: F.binary_cross_entropy_with_logits(x, t.sigmoid(x.detach() * 2),
                                                                     pos_weight=t.ones(4) * 3),
    "l1": lambda F, t, x: F.l1_loss(x, x.detach() * 0.5),
    "l1_weight": lambda F, t, x: F.l1_loss(x, t.ones(6, 4), weight=t.ones(6, 4) * 2),
    "smooth_l1": lambda F, t, x: F.smooth_l1_loss(x, t.zeros(6, 4), beta=0.3),
    "huber": lambda F, t, x: F.huber_loss(x, t.zeros(6, 4), delta=0.4),
    "huber_weight": lambda F, t, x: F.huber_loss(x, t.zeros(6, 4), weight=t.ones(6, 4) * 3, reduction="sum"),
    "kl_div": lambda F, t, x: F.kl_div(F.log_softmax(x, dim=1), t.softmax(x.detach() * 2, 1), reduction="batchmean"),
    "embedding_bag_2d": lambda F, t, x: F.embedding_bag(t.zeros(3, 2).long() + 1, x),
    "embedding_bag_offsets": lambda F, t, x: F.embedding_bag(t.ones(5).long(), x, t.zeros(2).long(), mode="max"),
    "embedding_bag_mean": lambda F, t, x: F.embedding_bag(t.ones(4).long() * 2, x, t.zeros(1).long()),
    "grid_sample": lambda F, t, x: F.grid_sample(x.reshape(1, 1, 6, 4), t.ones(1, 3, 2, 2) * 0.3, align_corners=True),
    "grid_sample_nearest": lambda F, t, x: F.grid_sample(x.reshape(1, 2, 3, 4), t.ones(1, 2, 2, 2) * -0.4,
                                                         mode="nearest", padding_mode="border", align_corners=False),
    "kl_div_log_target": lambda F, t, x: F.kl_div(x, x.detach() * 0.5, reduction="sum", log_target=True),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_value_and_grad_match_torch(name):
    data = RNG.standard_normal((6, 4)).astype("float32")
    x, tx = dc.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out = FUNCTIONAL[name](nn.functional, dc, x)
    tout = FUNCTIONAL[name](TNN.functional, torch, tx)
    _close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    _close(x.grad, tx.grad)


@pytest.mark.parametrize("num_classes", [-1, 5])
def test_one_hot_matches_torch(num_classes):
    idx = RNG.integers(0, 4, size=(2, 3))
    _close(nn.functional.one_hot(dc.tensor(idx), num_classes), TNN.functional.one_hot(torch.tensor(idx), num_classes))


@pytest.mark.parametrize("name", ["linear", "conv2d", "max_pool2d", "avg_pool2d", "layer_norm", "gelu", "elu",
                                  "leaky_relu", "hardtanh", "pad_constant", "pad_reflect", "normalize",
                                  "cross_entropy_plain", "bce_logits", "batch_norm_train"])
def test_functional_calls_torchs_aten_ops(name, torch_ops):
    data = RNG.standard_normal((6, 4)).astype("float32")
    x, tx = dc.tensor(data), torch.tensor(data)
    mine = _dc_ops(lambda: FUNCTIONAL[name](nn.functional, dc, x))
    theirs = torch_ops(lambda: FUNCTIONAL[name](TNN.functional, torch, tx))
    assert mine == theirs


def _message(text):
    # torch names sizes torch.Size, and prints Python sets, whose order varies between runs
    text = text.replace("torch.Size", "dispatchcore.Size")
    return re.sub(r"\{[^{}]*\}", lambda m: "{" + ", ".join(sorted(m.group(0)[1:-1].split(", "))) + "}", text)


def _raises_alike(mine, theirs):
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)) as got:
        mine()
    assert _message(str(got.value)) == _message(str(expected.value))


@pytest.mark.parametrize("case", ["dropout_p", "hardtanh_range", "bce_size", "bce_logits_size", "bn_one_value",
                                  "module_dropout_p", "conv_groups", "conv_padding", "conv_same_strided",
                                  "conv_mode", "bn1d_dim", "bn2d_dim", "embedding_pad", "reduction_name",
                                  "fan_1d", "gain_name", "fan_mode"])
def test_errors_match_torch(case):
    calls = {
        "dropout_p": lambda t, F, n: F.dropout(t.ones(2), 1.5),
        "hardtanh_range": lambda t, F, n: F.hardtanh(t.ones(2), 1.0, 0.0),
        "bce_size": lambda t, F, n: F.binary_cross_entropy(t.ones(2) / 2, t.ones(3)),
        "bce_logits_size": lambda t, F, n: F.binary_cross_entropy_with_logits(t.ones(2), t.ones(3)),
        "bn_one_value": lambda t, F, n: F.batch_norm(t.ones(1, 3), None, None, training=True),
        "module_dropout_p": lambda t, F, n: n.Dropout(-0.1),
        "conv_groups": lambda t, F, n: n.Conv2d(3, 4, 3, groups=2),
        "conv_padding": lambda t, F, n: n.Conv2d(3, 4, 3, padding="full"),
        "conv_same_strided": lambda t, F, n: n.Conv1d(3, 4, 3, stride=2, padding="same"),
        "conv_mode": lambda t, F, n: n.Conv1d(3, 4, 3, padding_mode="wrap"),
        "bn1d_dim": lambda t, F, n: n.BatchNorm1d(3)(t.ones(2, 3, 4, 5)),
        "bn2d_dim": lambda t, F, n: n.BatchNorm2d(3)(t.ones(2, 3)),
        "embedding_pad": lambda t, F, n: n.Embedding(3, 2, padding_idx=3),
        "reduction_name": lambda t, F, n: F.l1_loss(t.ones(2), t.ones(2), reduction="avg"),
        "fan_1d": lambda t, F, n: n.init.xavier_uniform_(t.ones(3)),
        "gain_name": lambda t, F, n: n.init.calculate_gain("swish"),
        "fan_mode": lambda t, F, n: n.init.kaiming_normal_(t.ones(3, 2), mode="fan_avg"),
    }
    _raises_alike(lambda: calls[case](dc, nn.functional, nn), lambda: calls[case](torch, TNN.functional, TNN))


def test_load_state_dict_errors_match_torch():
    def attempt(n, t):
        model = n.Sequential(n.Linear(2, 3), n.BatchNorm1d(3))
        state = dict(model.state_dict())
        del state["0.bias"]
        state["extra.weight"] = t.ones(1)
        state["1.weight"] = t.ones(4)
        return model.load_state_dict(state)

    _raises_alike(lambda: attempt(nn, dc), lambda: attempt(TNN, torch))
    model, tmodel = nn.Linear(2, 3), TNN.Linear(2, 3)
    result = model.load_state_dict({"weight": dc.ones(3, 2), "junk": dc.ones(1)}, strict=False)
    tresult = tmodel.load_state_dict({"weight": torch.ones(3, 2), "junk": torch.ones(1)}, strict=False)
    assert (result.missing_keys, result.unexpected_keys) == (tresult.missing_keys, tresult.unexpected_keys)
    assert repr(model.load_state_dict(model.state_dict())) == repr(tmodel.load_state_dict(tmodel.state_dict()))


def test_parameter_repr_matches_torch():
    assert repr(nn.Parameter(dc.tensor([1.0, 2.0]))) == repr(TNN.Parameter(torch.tensor([1.0, 2.0])))
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(2, 2)])) == \
        repr(TNN.ModuleList([TNN.ReLU(), TNN.ReLU(), TNN.Linear(2, 2)]))


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_seeded_dropout_in_training_draws_torchs_mask(p):
    data = RNG.standard_normal((8, 16)).astype("float32")
    torch.manual_seed(11)
    theirs = TNN.Dropout(p)(torch.tensor(data))
    dc.manual_seed(11)
    mine = nn.Dropout(p)(dc.tensor(data))
    assert np.array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["mlp", "cnn", "batchnorm1d", "layernorm"])
def test_module_to_float64_converts_like_torch(name):
    make, shapes = MODULES[name]
    mine, theirs = _pair_module(make)
    mine.to(dc.float64)
    theirs.to(torch.float64)
    data = RNG.standard_normal(shapes[0])
    _close(mine(dc.tensor(data)), theirs(torch.tensor(data)))
    _check_states(mine, theirs)
