"""``nn.Module`` backward hooks, state-dict hooks, ``load_state_dict(assign=True)`` and extra state, against torch 2.13.

Each scenario runs the same program on both libraries (``m`` is ``dispatchcore`` or ``torch``)
and compares what the program records: the hooks' calls and the shapes and values they see, the
gradients that reach the inputs, the node names, the keys of state dicts, warnings and errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


@pytest.fixture(autouse=True, scope="module")
def _backends():
    dc.load_backends()


def _value(x):
    """What a record holds for a hook argument: None, a tuple's items, or a tensor's shape and values."""
    if x is None:
        return None
    if isinstance(x, tuple):
        return tuple(_value(v) for v in x)
    return (tuple(x.shape), np.round(x.detach().numpy().astype(np.float64), 5).tolist())


def _seeded_linear(m, n_in=3, n_out=2):
    m.manual_seed(0)
    return m.nn.Linear(n_in, n_out)


def _both(program):
    """``program(m)`` on torch and on dispatchcore: the two records, with the warnings each raised."""
    out = []
    for m in (torch, dc):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            record = program(m)
        out.append((record, [(w.category.__name__, str(w.message)) for w in caught]))
    return out


def _same(program):
    theirs, mine = _both(program)
    assert mine == theirs


# --- full backward hooks ------------------------------------------------------------------------------------
def test_full_backward_hooks_see_torchs_gradients_in_torchs_order():
    def program(m):
        calls = []
        lin = _seeded_linear(m)
        lin.register_full_backward_pre_hook(lambda mod, go: calls.append(("pre", _value(go))))
        lin.register_full_backward_hook(lambda mod, gi, go: calls.append(("full", _value(gi), _value(go))))
        x = m.arange(6.0).reshape(2, 3).requires_grad_()
        y = lin(x)
        calls.append(("grad_fn", type(y.grad_fn).__name__, y.grad_fn.name()))
        y.pow(2).sum().backward()
        calls.append(("x.grad", _value(x.grad)))
        return calls

    _same(program)


def test_a_full_backward_hook_replaces_grad_input_and_a_pre_hook_grad_output():
    def program(m):
        lin = _seeded_linear(m)
        lin.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        lin.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = m.ones(2, 3, requires_grad=True)
        lin(x).sum().backward()
        return _value(x.grad), _value(lin.weight.grad)

    _same(program)


def test_full_backward_hook_gets_none_for_non_tensor_and_non_grad_arguments():
    def program(m):
        class Scale(m.nn.Module):
            def forward(self, a, factor, b):
                return a * factor + b

        calls = []
        mod = Scale()
        mod.register_full_backward_hook(lambda mod, gi, go: calls.append((_value(gi), _value(go))))
        a, b = m.ones(2, requires_grad=True), m.full((2,), 3.0)
        mod(a, 2.0, b).sum().backward()
        return calls

    _same(program)


def test_full_backward_hook_on_a_module_whose_inputs_need_no_grad_warns_and_fires_at_the_outputs():
    def program(m):
        calls = []
        lin = _seeded_linear(m)
        lin.register_full_backward_hook(lambda mod, gi, go: calls.append((_value(gi), _value(go))))
        lin(m.ones(1, 3)).sum().backward()
        return calls

    theirs, mine = _both(program)
    assert mine[0] == theirs[0]
    assert [w[0] for w in mine[1]] == [w[0] for w in theirs[1]] == ["UserWarning"]
    assert mine[1][0][1].startswith("Full backward hook is firing when gradients are computed with respect to "
                                    "module outputs since no inputs require gradients.")


def test_full_backward_hooks_wrap_every_tensor_of_a_tuple_output():
    def program(m):
        class Split(m.nn.Module):
            def forward(self, x):
                return x * 2, x.sum(), 7

        calls = []
        mod = Split()
        mod.register_full_backward_hook(lambda mod, gi, go: calls.append((_value(gi), _value(go))))
        x = m.ones(3, requires_grad=True)
        a, s, seven = mod(x)
        (a.sum() + 3 * s).backward()
        return calls, seven, _value(x.grad)

    _same(program)


def test_removing_a_backward_hook_stops_it_and_mixing_the_two_kinds_is_refused():
    def program(m):
        calls = []
        lin = _seeded_linear(m)
        handle = lin.register_full_backward_hook(lambda *a: calls.append("full"))
        handle.remove()
        lin(m.ones(1, 3, requires_grad=True)).sum().backward()
        lin.register_full_backward_hook(lambda *a: None)
        try:
            lin.register_backward_hook(lambda *a: None)
        except RuntimeError as e:
            calls.append(str(e))
        return calls

    _same(program)


def test_the_legacy_backward_hook_sees_the_output_nodes_gradients_and_warns_like_torch():
    def program(m):
        calls = []
        relu = m.nn.ReLU()
        lin = _seeded_linear(m)
        relu.register_backward_hook(lambda mod, gi, go: calls.append(("relu", _value(gi), _value(go))))
        lin.register_backward_hook(lambda mod, gi, go: calls.append(("linear", len(gi), _value(go))))
        x = m.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
        relu(lin(x)).sum().backward()
        return calls

    _same(program)


# --- state-dict hooks ---------------------------------------------------------------------------------------
def test_state_dict_hooks_run_in_torchs_order_and_the_post_hook_edits_in_place():
    def program(m):
        calls = []
        net = m.nn.Sequential(_seeded_linear(m), m.nn.ReLU())
        net.register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(("pre", prefix, keep)))
        net[0].register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(("pre0", prefix, keep)))

        def post(mod, sd, prefix, meta):
            calls.append(("post0", prefix, list(sd), meta))
            sd.pop(prefix + "bias")

        net[0].register_state_dict_post_hook(post)
        calls.append(list(net.state_dict(keep_vars=True)))
        return calls

    _same(program)


def test_a_public_state_dict_post_hook_must_return_none_and_a_private_one_may_replace_the_root_dict():
    def program(m):
        out = []
        lin = _seeded_linear(m)
        handle = lin.register_state_dict_post_hook(lambda *a: {"x": 1})
        try:
            lin.state_dict()
        except RuntimeError as e:
            out.append(str(e))
        handle.remove()
        lin._register_state_dict_hook(lambda mod, sd, prefix, meta: {"replaced": len(sd)})
        out.append(dict(lin.state_dict()))
        return out

    _same(program)


def test_load_state_dict_hooks_can_rename_keys_and_forgive_missing_ones():
    def program(m):
        calls = []
        src, dst = _seeded_linear(m), m.nn.Linear(3, 2)
        old = {("old_" + k): v for k, v in src.state_dict().items()}

        def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            calls.append(("pre", type(mod).__name__, prefix, strict))
            for k in list(sd):
                if k.startswith(prefix + "old_"):
                    sd[prefix + k[len(prefix) + 4:]] = sd.pop(k)

        def forgive(mod, keys):
            calls.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.missing_keys.clear()

        dst.register_load_state_dict_pre_hook(rename)
        dst.register_load_state_dict_post_hook(forgive)
        calls.append(repr(dst.load_state_dict(old)))
        calls.append(_value(dst.weight))
        calls.append(repr(dst.load_state_dict({"old_weight": old["old_weight"]})))
        return calls

    _same(program)


# --- load_state_dict(assign=True), unexpected keys, extra state ------------------------------------------------
def test_assign_keeps_the_checkpoint_tensors_as_parameters_with_the_old_requires_grad():
    def program(m):
        lin = _seeded_linear(m)
        lin.bias.requires_grad_(False)
        bn = m.nn.BatchNorm1d(2)
        w, b = m.full((2, 3), 5.0), m.nn.Parameter(m.zeros(2))
        mean = m.full((2,), 0.5)
        lin.load_state_dict({"weight": w, "bias": b}, assign=True)
        bn.load_state_dict({**bn.state_dict(), "running_mean": mean}, assign=True)
        w.add_(1)  # assigned, not copied: the module sees the change
        mean.add_(1)
        return (type(lin.weight).__name__, lin.weight.requires_grad, _value(lin.weight),
                lin.bias is b, lin.bias.requires_grad, type(bn.running_mean).__name__, _value(bn.running_mean))

    _same(program)


def test_unexpected_keys_are_torchs_for_dotted_names_and_module_names():
    def program(m):
        net = m.nn.Sequential(_seeded_linear(m))
        sd = dict(net.state_dict())
        sd.update({"0": sd["0.weight"], "0.weight.x": sd["0.weight"], "1.bias": sd["0.bias"], "extra": sd["0.bias"]})
        try:
            net.load_state_dict(sd)
        except RuntimeError as e:
            return str(e)
        return None

    _same(program)


def test_extra_state_is_saved_and_restored_and_its_absence_is_a_missing_key():
    def program(m):
        class Counter(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.count = 0
                self.lin = m.nn.Linear(1, 1)

            def get_extra_state(self):
                return {"count": self.count}

            def set_extra_state(self, state):
                self.count = state["count"]

        a, b = Counter(), Counter()
        a.count = 7
        sd = a.state_dict()
        keys = list(sd)
        b.load_state_dict(sd)
        del sd["_extra_state"]
        try:
            b.load_state_dict(sd)
        except RuntimeError as e:
            return keys, b.count, str(e)
        return keys, b.count, None

    _same(program)


def test_a_scalar_parameter_loads_a_one_element_vector_as_torch_allows_for_old_checkpoints():
    def program(m):
        mod = m.nn.Module()
        mod.scale = m.nn.Parameter(m.tensor(1.0))
        mod.load_state_dict({"scale": m.tensor([4.0])})
        return _value(mod.scale)

    _same(program)
