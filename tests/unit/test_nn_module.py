"""``dispatchcore.nn`` without torch: Module bookkeeping, state dicts, hooks, containers, init, layer arithmetic."""

from __future__ import annotations

import copy
import math
from collections import OrderedDict

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore import nn
from dispatchcore.nn import functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("steps", dc.zeros(1))
        self.register_buffer("scratch", dc.ones(1), persistent=False)

    def forward(self, x):
        return self.lin(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(dc.ones(2))
        self.first = Block()
        self.second = self.first  # shared: counted once
        self.head = nn.Linear(2, 1, bias=False)

    def forward(self, x):
        return self.head(self.second(self.first(x)) * self.scale)


def test_named_parameters_use_dotted_prefixes_and_skip_shared_modules():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "first.lin.weight", "first.lin.bias", "head.weight"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 6
    assert [n for n, _ in net.named_parameters(prefix="model", recurse=False)] == ["model.scale"]
    assert [n for n, _ in net.named_modules()] == ["", "first", "first.lin", "head"]
    assert [n for n, _ in net.named_children()] == ["first", "head"]
    assert [n for n, _ in net.named_buffers()] == ["first.steps", "first.scratch"]


def test_state_dict_holds_parameters_and_persistent_buffers_as_plain_detached_tensors():
    net = Net()
    state = net.state_dict()
    # own entries before children's; a shared child appears under each name, as in torch
    assert list(state) == ["scale", "first.steps", "first.lin.weight", "first.lin.bias", "second.steps",
                           "second.lin.weight", "second.lin.bias", "head.weight"]
    assert type(state["scale"]) is dc.Tensor and not state["scale"].requires_grad
    assert state._metadata[""] == {"version": 1}
    assert isinstance(net.state_dict(keep_vars=True)["scale"], nn.Parameter)


def test_load_state_dict_copies_values_in_place():
    source, target = nn.Linear(3, 2), nn.Linear(3, 2)
    weight = target.weight
    result = target.load_state_dict(source.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert target.weight is weight
    np.testing.assert_array_equal(target.weight.detach().numpy(), source.weight.detach().numpy())


def test_load_state_dict_reports_missing_unexpected_and_mismatched_keys_in_torchs_words():
    model = nn.Linear(2, 3)
    bad = {"weight": dc.ones(3, 3), "extra": dc.ones(1)}
    with pytest.raises(RuntimeError) as err:
        model.load_state_dict(bad)
    assert str(err.value) == (
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". '
        '\n\tUnexpected key(s) in state_dict: "extra". \n\tsize mismatch for weight: copying a param with '
        "shape dispatchcore.Size([3, 3]) from checkpoint, the shape in current model is dispatchcore.Size([3, 2]).")
    result = model.load_state_dict({"weight": dc.ones(3, 2), "extra": dc.ones(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert model.weight.detach().numpy().tolist() == [[1.0, 1.0]] * 3


def test_batchnorm_loads_an_old_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm1d(2)
    state = bn.state_dict()
    del state["num_batches_tracked"]
    state._metadata[""] = {"version": 1}
    assert repr(bn.load_state_dict(state)) == "<All keys matched successfully>"


def test_setattr_routes_parameters_modules_and_buffers_and_refuses_wrong_types():
    net = Net()
    net.extra = nn.Parameter(dc.zeros(1))
    assert "extra" in net._parameters and "extra" not in net.__dict__
    net.first.steps = dc.ones(1) * 5
    assert net.first._buffers["steps"].item() == 5
    with pytest.raises(TypeError, match=r"cannot assign 'dispatchcore.FloatTensor' as parameter 'scale' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        net.scale = dc.ones(2)
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module 'head'"):
        net.head = 3
    with pytest.raises(TypeError, match=r"cannot assign 'str' as buffer 'steps'"):
        net.first.steps = "x"
    net.scale = None
    assert "scale" not in [n for n, _ in net.named_parameters()]
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        _ = net.missing


def test_assigning_before_module_init_is_refused():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(dc.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_register_checks_names_like_torch():
    m = nn.Module()
    with pytest.raises(KeyError) as err:
        m.register_buffer("a.b", dc.ones(1))
    assert err.value.args[0] == 'buffer name can\'t contain "."'
    with pytest.raises(KeyError) as err:
        m.register_parameter("", None)
    assert err.value.args[0] == 'parameter name can\'t be empty string ""'
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("x", 3)
    m.x = 1
    with pytest.raises(KeyError) as err:
        m.register_buffer("x", dc.ones(1))
    assert err.value.args[0] == "attribute 'x' already exists"
    with pytest.raises(TypeError, match=r"cannot assign 'dispatchcore.FloatTensor' object to parameter 'p' "
                                        r"\(torch.nn.Parameter or None required\)"):
        m.register_parameter("p", dc.ones(1))


def test_delattr_removes_registered_names():
    net = Net()
    del net.head
    del net.first.steps
    del net.scale
    assert "head" not in net._modules and "steps" not in net.first._buffers and "scale" not in net._parameters


def test_train_eval_apply_and_requires_grad():
    net = Net()
    assert net.eval() is net and not net.first.lin.training
    net.train()
    assert net.head.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Block", "Linear", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad_sets_to_none_by_default_or_zeros_in_place():
    lin = nn.Linear(2, 1)
    lin(dc.ones(3, 2)).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.numpy().tolist() == [[0.0, 0.0]]
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_forward_hooks_can_replace_inputs_and_outputs_and_be_removed():
    lin = nn.Linear(2, 2)
    calls = []
    pre = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = lin(dc.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), lin.bias.detach().numpy()[None] + 1, rtol=1e-6)
    assert calls == [dc.Size([1, 2])]
    pre.remove()
    post.remove()
    assert not lin._forward_hooks and not lin._forward_pre_hooks
    with lin.register_forward_hook(lambda m, a, k, out: out * 0, with_kwargs=True):
        assert lin(dc.ones(1, 2)).detach().numpy().tolist() == [[0.0, 0.0]]
    assert not lin._forward_hooks


def test_forward_hooks_run_in_registration_order_unless_prepended():
    m = nn.Identity()
    order = []
    m.register_forward_hook(lambda *a: order.append("a"))
    m.register_forward_hook(lambda *a: order.append("b"), prepend=True)
    m(dc.ones(1))
    assert order == ["b", "a"]


def test_module_without_forward_says_so():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(dc.ones(1))


def test_to_converts_floating_parameters_and_keeps_integer_buffers():
    bn = nn.BatchNorm1d(2).to(dc.float64)
    assert bn.weight.dtype == dc.float64 and isinstance(bn.weight, nn.Parameter) and bn.weight.requires_grad
    assert bn.running_mean.dtype == dc.float64 and bn.num_batches_tracked.dtype == dc.int64
    assert nn.Linear(2, 2).double().weight.dtype == dc.float64


def test_repr_nests_children_with_indentation():
    net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Dropout(0.1)))
    assert repr(net) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): Sequential(\n"
                         "    (0): ReLU()\n    (1): Dropout(p=0.1, inplace=False)\n  )\n)")


def test_sequential_indexing_slicing_deletion_and_append():
    seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
    assert isinstance(seq[-1], nn.Sigmoid) and len(seq) == 3
    assert isinstance(seq[1:], nn.Sequential) and [type(m) for m in seq[1:]] == [nn.Tanh, nn.Sigmoid]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    del seq[0]
    assert list(seq._modules) == ["0", "1"]
    seq.append(nn.Identity())
    assert list(seq._modules) == ["0", "1", "2"]
    named = nn.Sequential(OrderedDict([("act", nn.ReLU())]))
    assert list(named._modules) == ["act"]
    assert seq(dc.tensor([0.0])).item() == 0.5


def test_module_list_and_dict_register_children():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
    layers.append(nn.ReLU())
    assert [n for n, _ in layers.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert repr(layers).startswith("ModuleList(\n  (0-1): 2 x Linear(")
    assert repr(nn.ModuleList()) == "ModuleList()"
    layers.insert(0, nn.Tanh())
    assert isinstance(layers[0], nn.Tanh) and len(layers) == 4
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        layers.extend(3)
    d = nn.ModuleDict({"a": nn.ReLU()})
    d["b"] = nn.Linear(1, 1)
    assert list(d.keys()) == ["a", "b"] and "b" in d and len(d) == 2
    assert [n for n, _ in d.named_parameters()] == ["b.weight", "b.bias"]
    assert isinstance(d.pop("a"), nn.ReLU) and list(d) == ["b"]


def test_parameter_shares_storage_and_prints_like_torch():
    data = dc.zeros(2)
    p = nn.Parameter(data)
    assert p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([0., 0.], requires_grad=True)"
    data.fill_(3.0)
    assert p.detach().numpy().tolist() == [3.0, 3.0]
    assert type(p * 2) is dc.Tensor
    assert not nn.Parameter(dc.ones(1), requires_grad=False).requires_grad
    assert tuple(nn.Parameter().shape) == (0,)


def test_buffer_marker_registers_persistence():
    m = nn.Module()
    m.kept = nn.Buffer(dc.ones(1))
    m.dropped = nn.Buffer(dc.ones(1), persistent=False)
    assert list(m.state_dict()) == ["kept"]
    assert type(m.kept) is dc.Tensor


def test_calculate_gain_and_fans():
    assert nn.init.calculate_gain("relu") == math.sqrt(2.0)
    assert nn.init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(2.0 / 6)
    assert nn.init.calculate_gain("tanh") == 5.0 / 3
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        nn.init.calculate_gain("leaky_relu", True)
    assert nn.init._calculate_fan_in_and_fan_out(dc.empty(4, 3, 2, 5)) == (30, 40)


def test_init_fillers_and_bounds():
    assert nn.init.constant_(dc.empty(2), 0.5).numpy().tolist() == [0.5, 0.5]
    assert nn.init.ones_(dc.empty(2)).numpy().tolist() == [1.0, 1.0]
    assert nn.init.zeros_(dc.ones(2)).numpy().tolist() == [0.0, 0.0]
    w = nn.init.kaiming_uniform_(dc.empty(50, 20), a=math.sqrt(5))
    bound = math.sqrt(3.0) * math.sqrt(2.0 / 6) / math.sqrt(20)
    assert np.abs(w.numpy()).max() <= bound
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        nn.init.kaiming_normal_(dc.empty(0, 3))


def test_linear_and_losses_compute_the_textbook_values():
    lin = nn.Linear(2, 1)
    nn.init.constant_(lin.weight, 2.0)
    nn.init.zeros_(lin.bias)
    assert lin(dc.tensor([[1.0, 3.0]])).item() == 8.0
    x, y = dc.tensor([1.0, -2.0]), dc.tensor([0.0, 0.0])
    assert nn.L1Loss()(x, y).item() == 1.5
    assert nn.MSELoss(reduction="sum")(x, y).item() == 5.0
    assert nn.SmoothL1Loss()(x, y).item() == pytest.approx((0.5 + 1.5) / 2)
    assert nn.HuberLoss(delta=0.5)(x, y).item() == pytest.approx((0.5 * 0.75 + 0.5 * 1.75) / 2)
    assert nn.CrossEntropyLoss()(dc.zeros(1, 4), dc.tensor([2])).item() == pytest.approx(math.log(4))
    assert F.one_hot(dc.tensor([1, 0])).numpy().tolist() == [[0, 1], [1, 0]]


def test_batchnorm_updates_running_statistics_in_training_only():
    bn = nn.BatchNorm1d(1, momentum=0.5)
    bn(dc.tensor([[1.0], [3.0]]))
    assert bn.running_mean.item() == 1.0 and bn.running_var.item() == pytest.approx(0.5 + 0.5 * 2.0)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    bn(dc.tensor([[10.0], [30.0]]))
    assert bn.running_mean.item() == 1.0 and bn.num_batches_tracked.item() == 1
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        bn(dc.ones(1, 1, 1, 1))


def test_dropout_is_identity_in_eval_and_zero_p():
    x = dc.ones(4, 4)
    assert nn.Dropout(0.5).eval()(x).numpy().tolist() == x.numpy().tolist()
    assert nn.Dropout(0.0)(x).numpy().tolist() == x.numpy().tolist()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_embedding_zeroes_the_padding_row():
    emb = nn.Embedding(5, 3, padding_idx=-1)
    assert emb.padding_idx == 4
    assert emb(dc.tensor([4])).detach().numpy().tolist() == [[0.0, 0.0, 0.0]]
    assert repr(emb) == "Embedding(5, 3, padding_idx=4)"


def test_parameter_detach_and_deepcopy_give_torchs_types():
    p = nn.Parameter(dc.ones(2))
    assert type(p.detach()) is dc.Tensor and not p.detach().requires_grad
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    clone = copy.deepcopy(model)
    assert isinstance(clone[0].weight, nn.Parameter) and clone[0].weight is not model[0].weight
    assert clone[0].weight.requires_grad
    assert list(clone.state_dict()) == list(model.state_dict())


def test_weighted_losses_register_their_weights_as_buffers():
    loss = nn.BCEWithLogitsLoss(pos_weight=dc.ones(3))
    assert list(loss.state_dict()) == ["pos_weight"]
    assert list(nn.CrossEntropyLoss(weight=dc.ones(2)).state_dict()) == ["weight"]
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        assert nn.NLLLoss(size_average=False).reduction == "sum"


def test_to_keeps_parameter_identity_like_torchs_set_data():
    lin = nn.Linear(2, 2)
    weight = lin.weight
    lin(dc.ones(1, 2)).sum().backward()
    lin.to(dc.float64)
    assert lin.weight is weight and weight.dtype == dc.float64 and weight.grad.dtype == dc.float64
    assert weight.requires_grad and weight.is_leaf
    lin(dc.ones(1, 2, dtype=dc.float64)).sum().backward()
    assert weight.grad.numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]


# --- backward hooks, state-dict hooks, assign, extra state (torch-free; tests/differential compares with torch) ---
@pytest.mark.parametrize("module_name", ["dispatchcore.nn.module", "dispatchcore.nn.init", "dispatchcore.utils.hooks"])
def test_docstring_examples_of_modules_hooks_and_init_run(module_name):
    import doctest
    import importlib

    failures, attempted = doctest.testmod(importlib.import_module(module_name), optionflags=doctest.ELLIPSIS)
    assert attempted and not failures


def test_full_backward_hook_output_goes_through_the_identity_node_and_gradients_are_unchanged():
    lin = nn.Linear(3, 2)
    x = dc.ones(4, 3, requires_grad=True)
    plain = lin(x).sum()
    plain.backward()
    expected = x.grad.clone()
    x.grad = None
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((m, len(gi), len(go))))
    y = lin(x)
    assert y.grad_fn.name() == "BackwardHookFunctionBackward"
    y.sum().backward()
    assert seen == [(lin, 1, 1)]
    assert x.grad.tolist() == expected.tolist()


def test_backward_pre_hook_may_replace_grad_output_but_not_with_the_wrong_count():
    lin = nn.Linear(3, 2)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output, got 2, "
                                           "but expected 1"):
        lin(dc.ones(1, 3, requires_grad=True)).sum().backward()


def test_full_and_legacy_backward_hooks_cannot_share_a_module():
    lin = nn.Linear(1, 1)
    lin.register_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        lin.register_full_backward_hook(lambda *a: None)


def test_hooks_of_a_forward_without_grad_are_not_wired():
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda *a: None)
    with dc.no_grad():
        y = lin(dc.ones(1, 2, requires_grad=True))
    assert y.grad_fn is None


def test_state_dict_pre_and_post_hooks_run_around_the_save_and_handles_remove_them():
    lin = nn.Linear(2, 1)
    calls = []
    pre = lin.register_state_dict_pre_hook(lambda m, prefix, keep: calls.append(("pre", prefix, keep)))

    def post(m, sd, prefix, meta):
        calls.append(("post", list(sd), meta["version"]))

    lin.register_state_dict_post_hook(post)
    lin.state_dict(prefix="p.", keep_vars=True)
    assert calls == [("pre", "p.", True), ("post", ["p.weight", "p.bias"], 1)]
    pre.remove()
    calls.clear()
    lin.state_dict()
    assert [c[0] for c in calls] == ["post"]


def test_load_post_hook_must_not_return_a_value():
    lin = nn.Linear(2, 1)
    lin.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(AssertionError, match="are not expected to return new values"):
        lin.load_state_dict(lin.state_dict())


def test_assign_replaces_parameters_and_buffers_by_the_checkpoint_tensors():
    bn = nn.BatchNorm1d(2)
    sd = {k: v.clone() for k, v in bn.state_dict().items()}
    bn.load_state_dict(sd, assign=True)
    assert bn.running_mean is sd["running_mean"]
    assert isinstance(bn.weight, nn.Parameter) and bn.weight.requires_grad
    sd["weight"].fill_(3.0)  # the Parameter aliases the checkpoint tensor
    assert bn.weight.tolist() == [3.0, 3.0]


def test_base_module_extra_state_methods_refuse_to_run():
    with pytest.raises(RuntimeError, match=r"Module.get_extra_state\(\) that should never be called"):
        nn.Module().get_extra_state()
