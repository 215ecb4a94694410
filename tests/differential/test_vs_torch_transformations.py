"""The transformations family against torch 2.13: rot90, fliplr/flipud, the stacks and splits, tile,
ravel, broadcasting, atleast_*d and meshgrid.

Per case: the same values, shapes, strides, offsets and dtypes (or the same error, type and first
line), the same identity where torch hands an input back, the same operators a dispatch mode sees
in the same order with the same arguments, and the same gradients and node names.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from tests.differential._observers import results_or_same_error  # noqa: E402

pytestmark = pytest.mark.differential


def _inputs(m):
    """Float64 tensors of several ranks and layouts, the same in both libraries."""
    def t(*shape):
        a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 0.5 - 1.0
        return torch.tensor(a) if m is torch else dc.tensor(a)

    x3 = t(2, 3, 4)
    return {"s": t(), "v": t(3), "w": t(4), "m": t(3, 4), "mt": t(4, 3).t(), "x": x3, "xt": x3.transpose(0, 2),
            "e": t(0, 3), "u": t(1, 3)}


CASES = {
    # rot90: every quarter turn, negative k and dims, and its errors in torch's order
    **{f"rot90-k{k}": lambda m, i, k=k: m.rot90(i["x"], k) for k in (-5, -1, 0, 1, 2, 3, 4)},
    "rot90-dims": lambda m, i: m.rot90(i["x"], 1, [2, 0]),
    "rot90-negative-dims": lambda m, i: i["x"].rot90(3, [-1, -2]),
    "rot90-method": lambda m, i: i["xt"].rot90(), "rot90-noncontiguous": lambda m, i: m.rot90(i["mt"], 2),
    "rot90-one-dim": lambda m, i: m.rot90(i["x"], 1, [0]), "rot90-1d": lambda m, i: m.rot90(i["v"]),
    "rot90-same-dims": lambda m, i: m.rot90(i["x"], 1, [1, 1]),
    "rot90-same-dim-wrapped": lambda m, i: m.rot90(i["x"], 1, [0, -3]),
    "rot90-out-of-range": lambda m, i: m.rot90(i["x"], 0, [0, 5]), "rot90-str": lambda m, i: m.rot90(i["x"], "a"),
    "fliplr": lambda m, i: m.fliplr(i["x"]), "fliplr-method": lambda m, i: i["mt"].fliplr(),
    "fliplr-1d": lambda m, i: m.fliplr(i["v"]), "flipud": lambda m, i: m.flipud(i["v"]),
    "flipud-0d": lambda m, i: i["s"].flipud(),
    # stacks: ranks 0, 1, 2 and 3 mixed, dtype promotion, out=, empty lists and bad elements
    "hstack-1d": lambda m, i: m.hstack([i["v"], i["w"]]), "hstack-0d": lambda m, i: m.hstack((i["s"], i["v"])),
    "hstack-2d": lambda m, i: m.hstack([i["m"], i["mt"]]),
    "hstack-promotes": lambda m, i: m.hstack([i["v"], i["v"].long()]),
    "hstack-out": lambda m, i: m.hstack([i["v"], i["v"]], out=m.empty(6)), "hstack-empty": lambda m, i: m.hstack([]),
    "hstack-bad-element": lambda m, i: m.hstack([i["v"], 2]), "hstack-tensor": lambda m, i: m.hstack(i["m"]),
    "vstack": lambda m, i: m.vstack([i["m"], i["w"]]), "vstack-0d": lambda m, i: m.vstack([i["s"], i["s"]]),
    "vstack-out": lambda m, i: m.vstack([i["v"], i["v"]], out=m.empty(2, 3)), "vstack-empty": lambda m, i: m.vstack([]),
    "row_stack": lambda m, i: m.row_stack([i["v"], i["v"]]), "row_stack-empty": lambda m, i: m.row_stack([]),
    "dstack": lambda m, i: m.dstack([i["v"], i["v"]]), "dstack-2d": lambda m, i: m.dstack([i["m"], i["mt"]]),
    "dstack-3d": lambda m, i: m.dstack([i["x"], i["x"]]), "dstack-empty": lambda m, i: m.dstack([]),
    "column_stack": lambda m, i: m.column_stack([i["v"], i["m"], i["s"].expand(3)]),
    "column_stack-0d": lambda m, i: m.column_stack([i["s"], i["s"]]),
    "column_stack-out": lambda m, i: m.column_stack([i["v"], i["v"]], out=m.empty(3, 2)),
    "column_stack-empty": lambda m, i: m.column_stack([]),
    "column_stack-mismatch": lambda m, i: m.column_stack([i["v"], i["w"]]),
    # splits: sections, indices, the 1-d hsplit, and each check
    "hsplit": lambda m, i: m.hsplit(i["x"], 3), "hsplit-1d": lambda m, i: m.hsplit(i["w"], 2),
    "hsplit-indices": lambda m, i: i["m"].hsplit([1, 3]), "hsplit-0d": lambda m, i: m.hsplit(i["s"], 1),
    "hsplit-indivisible": lambda m, i: m.hsplit(i["x"], 2), "hsplit-zero": lambda m, i: m.hsplit(i["x"], 0),
    "vsplit": lambda m, i: m.vsplit(i["x"], 2), "vsplit-indices": lambda m, i: i["xt"].vsplit([1]),
    "vsplit-1d": lambda m, i: m.vsplit(i["v"], 1), "vsplit-indivisible": lambda m, i: m.vsplit(i["x"], 3),
    "dsplit": lambda m, i: m.dsplit(i["x"], 2), "dsplit-indices": lambda m, i: m.dsplit(i["xt"], [1, 5]),
    "dsplit-2d": lambda m, i: m.dsplit(i["m"], 1), "dsplit-indivisible": lambda m, i: i["x"].dsplit(3),
    "hsplit-bad": lambda m, i: m.hsplit(i["x"], "a"),
    # tile, ravel, broadcast_to
    "tile-fewer-dims": lambda m, i: m.tile(i["x"], (2,)), "tile-more-dims": lambda m, i: m.tile(i["v"], (2, 2)),
    "tile-method-varargs": lambda m, i: i["mt"].tile(1, 2), "tile-empty": lambda m, i: m.tile(i["m"], ()),
    "tile-int": lambda m, i: m.tile(i["v"], 2), "tile-negative": lambda m, i: m.tile(i["m"], (-1,)),
    "ravel": lambda m, i: m.ravel(i["x"]), "ravel-noncontiguous": lambda m, i: i["xt"].ravel(),
    "ravel-0d": lambda m, i: m.ravel(i["s"]), "ravel-empty": lambda m, i: i["e"].ravel(),
    "broadcast_to": lambda m, i: m.broadcast_to(i["v"], (2, 3)),
    "broadcast_to-method": lambda m, i: i["u"].broadcast_to(2, 4, 3),
    "broadcast_to-bad": lambda m, i: m.broadcast_to(i["v"], (2, 2)),
    # broadcast_tensors, broadcast_shapes
    "broadcast_tensors": lambda m, i: m.broadcast_tensors(i["v"], i["u"].t()),
    "broadcast_tensors-one": lambda m, i: m.broadcast_tensors(i["m"]),
    "broadcast_tensors-none": lambda m, i: m.broadcast_tensors(),
    "broadcast_tensors-bad": lambda m, i: m.broadcast_tensors(i["v"], i["w"]),
    "broadcast_tensors-not-tensor": lambda m, i: m.broadcast_tensors(i["v"], 2),
    "broadcast_shapes": lambda m, i: tuple(m.broadcast_shapes((2, 1), (3,), ())),
    "broadcast_shapes-int": lambda m, i: tuple(m.broadcast_shapes(2, [3, 1], m.Size([1, 1]))),
    "broadcast_shapes-none": lambda m, i: tuple(m.broadcast_shapes()),
    "broadcast_shapes-zero": lambda m, i: tuple(m.broadcast_shapes((0,), (1,))),
    **{f"broadcast_shapes-bad-{n}": lambda m, i, a=a: m.broadcast_shapes(*a) for n, a in (
        ("mismatch", ((2, 3), (4,))), ("rank", ((5, 2, 3), [1, 4, 3])), ("negative", ((-1,), (3,))),
        ("negative-late", ((3,), -2)), ("float", ((2.0,),)), ("str", ("a",)), ("zero", ((0,), (2,))))},
    # atleast_*d: one tensor (the input itself when it has the rank), several, a list, none
    **{f"atleast_{n}d-{name}": lambda m, i, n=n, k=k: getattr(m, f"atleast_{n}d")(i[k])
       for n in (1, 2, 3) for name, k in (("0d", "s"), ("1d", "v"), ("2d", "m"), ("3d", "x"))},
    **{f"atleast_{n}d-several": lambda m, i, n=n: getattr(m, f"atleast_{n}d")(i["s"], i["v"], i["m"])
       for n in (1, 2, 3)},
    "atleast_1d-list": lambda m, i: m.atleast_1d([i["s"], i["v"]]), "atleast_2d-none": lambda m, i: m.atleast_2d(),
    "atleast_1d-bad": lambda m, i: m.atleast_1d(object()),
    "atleast_3d-bad-element": lambda m, i: m.atleast_3d(i["v"], 1),
    # meshgrid
    "meshgrid-ij": lambda m, i: m.meshgrid(i["v"], i["w"], indexing="ij"),
    "meshgrid-xy": lambda m, i: m.meshgrid(i["v"], i["w"], i["s"], indexing="xy"),
    "meshgrid-list": lambda m, i: m.meshgrid([i["v"], i["w"]], indexing="xy"),
    "meshgrid-one-xy": lambda m, i: m.meshgrid(i["v"], indexing="xy"),
    "meshgrid-default": lambda m, i: m.meshgrid(i["s"], i["v"]),
    "meshgrid-bad-indexing": lambda m, i: m.meshgrid(i["v"], i["v"], indexing="foo"),
    "meshgrid-int-indexing": lambda m, i: m.meshgrid(i["v"], i["v"], indexing=1),
    "meshgrid-dtypes": lambda m, i: m.meshgrid(i["v"], i["v"].long(), indexing="ij"),
    "meshgrid-empty": lambda m, i: m.meshgrid(indexing="ij"),
    "meshgrid-not-tensor": lambda m, i: m.meshgrid(i["v"], 2, indexing="ij"),
}


def _run(case, m, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CASES[case](m, inputs)


def _same(t, d, t_inputs, d_inputs):
    if isinstance(t, (tuple, list)):
        assert type(d) is type(t) and len(d) == len(t)
        for a, b in zip(t, d):
            _same(a, b, t_inputs, d_inputs)
        return
    if not isinstance(t, torch.Tensor):
        assert d == t
        return
    assert d.tolist() == t.tolist()
    assert (tuple(d.shape), d.stride(), d.storage_offset()) == (tuple(t.shape), t.stride(), t.storage_offset())
    assert str(d.dtype).rpartition(".")[2] == str(t.dtype).rpartition(".")[2]
    handed_back = [k for k, v in t_inputs.items() if v is t]
    assert [k for k, v in d_inputs.items() if v is d] == handed_back  # an input given back is the input itself


@pytest.mark.parametrize("case", sorted(CASES))
def test_results_and_errors_match_torch(case):
    t_inputs, d_inputs = _inputs(torch), _inputs(dc)
    both = results_or_same_error(lambda: _run(case, torch, t_inputs), lambda: _run(case, dc, d_inputs))
    if both is not None:
        _same(*both, t_inputs, d_inputs)


def _describe(value, lib):
    tensor = torch.Tensor if lib is torch else dc.Tensor
    if isinstance(value, tensor):
        return ("T", tuple(value.shape), value.stride())
    if isinstance(value, (list, tuple)):
        return [_describe(v, lib) for v in value]
    if type(value).__name__ in ("memory_format", "dtype"):
        return str(value).rpartition(".")[2]
    return value


def _log(lib, case):
    """The operators a dispatch mode sees while the case runs: names, then arguments described."""
    seen = []
    inputs = _inputs(lib)

    def record(func, args, kwargs):
        seen.append((str(func), _describe(list(args), lib), {k: _describe(v, lib) for k, v in (kwargs or {}).items()}))

    class TorchLog(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            record(func, args, kwargs)
            return func(*args, **(kwargs or {}))

    class DcLog(dc.DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):
            record(func, args, kwargs)
            return func(*args, **(kwargs or {}))

    with TorchLog() if lib is torch else DcLog():
        try:
            _run(case, lib, inputs)
        except Exception:  # noqa: BLE001 - the calls made before the error compare too
            pass
    return [entry for entry in seen if not entry[0].startswith("aten.empty.")]  # out= cases make their out first


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_dispatch_mode_sees_torchs_operators_and_arguments(case):
    assert _log(dc, case) == _log(torch, case)


GRAD_CASES = {
    "rot90": lambda m, x, y: m.rot90(x, 1, [0, 2]), "rot90-k0": lambda m, x, y: x.rot90(0),
    "rot90-k3": lambda m, x, y: m.rot90(x, -1, [-1, 0]), "fliplr": lambda m, x, y: m.fliplr(x),
    "flipud": lambda m, x, y: x.flipud(), "hstack": lambda m, x, y: m.hstack([x, y]),
    "vstack": lambda m, x, y: m.vstack([x[0], y[1]]), "dstack": lambda m, x, y: m.dstack([x, y]),
    "column_stack": lambda m, x, y: m.column_stack([x[0, 0], y[0].t()]),
    "hsplit": lambda m, x, y: m.hsplit(x, [1])[1], "vsplit": lambda m, x, y: x.vsplit(2)[0],
    "dsplit": lambda m, x, y: m.dsplit(y, 2)[1], "tile": lambda m, x, y: m.tile(x, (2, 1, 1, 2)),
    "ravel": lambda m, x, y: m.ravel(x.transpose(0, 1)),
    "broadcast_to": lambda m, x, y: m.broadcast_to(x[0, 0], (2, 4)),
    "broadcast_tensors": lambda m, x, y: m.broadcast_tensors(x, y[0, :1])[1],
    "atleast_3d": lambda m, x, y: m.atleast_3d(x[0]),
    "meshgrid": lambda m, x, y: m.meshgrid(x[0, 0], y[1, 2], indexing="xy")[0],
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradients_and_node_names_match_torch(case):
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7 - 1
    b = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 5
    results = []
    for m in (torch, dc):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        out = GRAD_CASES[case](m, x, y)
        g = m.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        out.backward(g)
        results.append((type(out.grad_fn).__name__, *(None if t.grad is None else t.grad.tolist() for t in (x, y))))
    (t_node, *t_grads), (d_node, *d_grads) = results
    assert d_node == t_node
    for t_grad, d_grad in zip(t_grads, d_grads):
        assert (d_grad is None) == (t_grad is None)
        if t_grad is not None:  # a broadcast gradient is a sum: the last bit may differ with the order
            np.testing.assert_allclose(d_grad, t_grad, rtol=1e-12, atol=1e-15)


def test_meshgrid_without_indexing_warns_once_per_process_as_torch():
    from dispatchcore.native import transformations

    transformations._WARNED_MESHGRID.clear()
    v = dc.ones(2)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument") as caught:
        dc.meshgrid(v, v)
        dc.meshgrid(v, v)
    assert len([w for w in caught if "indexing argument" in str(w.message)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dc.meshgrid(v, v)  # warned already: silent, as TORCH_WARN_ONCE
        dc.meshgrid(v, v, indexing="ij")


def test_the_registration_keys_and_node_name_are_torchs():
    for name in ("hstack", "meshgrid.indexing", "atleast_1d.Sequence", "tile", "ravel", "fliplr"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}", "CompositeImplicitAutograd")
        assert dc.get_dispatcher().find_op(f"aten::{name}").table_entry("AutogradCPU")[1] == "math kernel"
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::rot90", "CompositeExplicitAutograd")
    assert dc.get_dispatcher().find_op("aten::rot90").table_entry("CPU")[1] == "default backend kernel"
