"""Tensor literals and nested inputs against torch 2.13: what a mode sees, fake literals and constants, make_fx graphs.

* ``tensor(data)``, ``from_numpy``, ``new_tensor``: the aten calls a dispatch mode sees
  (``lift_fresh``, and the ``_to_copy``/``detach`` of the ndarray and tensor forms), plain and
  under ``FakeTensorMode``.
* ``FakeTensorMode``: a literal's fake tensor (device, dtype, shape, whether it is a constant),
  constant propagation (``item()`` of a constant, in-place writes, aliases forgotten) and the
  errors where the value is not known.
* ``make_fx``: a literal is ``lift_fresh_copy(_tensor_constantN)`` in both tracing modes, and
  nested (list, tuple, dict, named tuple) inputs are flattened into one placeholder per leaf
  with torch's names and torch's ``fx_pytree``/``pytree`` code.

Not compared: torch's ``prim.device`` calls (a Python-level device query dispatchcore does not
dispatch), and data-dependent reads under ``tracing_mode="fake"`` (torch's fake tracing has a
ShapeEnv and records ``_local_scalar_dense``; dispatchcore's fake mode raises).
"""

from __future__ import annotations

import collections
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import dispatchcore as dc  # noqa: E402
from dispatchcore.fake_tensor import FakeTensorMode  # noqa: E402
from dispatchcore.fx import make_fx as dc_make_fx  # noqa: E402

pytestmark = [pytest.mark.differential, pytest.mark.usefixtures("quiet_fake_tensor_log")]



class _TorchLog(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if not str(func).startswith("prim."):
            self.calls.append((str(func), dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


def _dc_calls(fn: Any) -> list[tuple[str, dict[str, Any]]]:
    with dc.LoggingMode() as log:
        fn()
    return [(r.name, dict(r.kwargs)) for r in log.records]


def _torch_calls(fn: Any) -> list[tuple[str, dict[str, Any]]]:
    with _TorchLog() as log:
        fn()
    return log.calls


def _plain(name: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """A call comparable across the libraries: dtypes and devices by name."""
    return name, {k: str(v).replace("torch.", "").replace("dispatchcore.", "") for k, v in kwargs.items()}


def _same_calls(mine: list[tuple[str, dict[str, Any]]], theirs: list[tuple[str, dict[str, Any]]]) -> None:
    assert [_plain(n, k) for n, k in mine] == [_plain(n, k) for n, k in theirs]


# --- what a mode sees ------------------------------------------------------------------------------------
LITERALS = {
    "list": lambda m: m.tensor([1.0, 2.0]),
    "scalar": lambda m: m.tensor(0.5),
    "int": lambda m: m.tensor([1, 2]),
    "bool": lambda m: m.tensor(True),
    "empty": lambda m: m.tensor([]),
    "dtype": lambda m: m.tensor([1, 2], dtype=m.float64),
    "requires_grad": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "nested": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "ndarray": lambda m: m.tensor(np.ones(2)),
    "ndarray_dtype": lambda m: m.tensor(np.ones(2), dtype=m.float32),
    "ndarray_0d": lambda m: m.tensor(np.array(2.0)),
    "from_numpy": lambda m: m.from_numpy(np.ones(2)),
    "from_numpy_0d": lambda m: m.from_numpy(np.array(2.0)),
    "new_tensor": lambda m: m.ones(2).new_tensor([1.0, 2.0]),
    "of_a_tensor": lambda m: m.tensor(m.ones(2), dtype=m.float64),
    "meta": lambda m: m.tensor([1.0, 2.0], device="meta"),
}


@pytest.mark.parametrize("name", sorted(LITERALS))
def test_a_mode_sees_the_calls_torchs_mode_sees(name):
    make = LITERALS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tensor(a_tensor)'s copy-construct advice, in both
        _same_calls(_dc_calls(lambda: make(dc)), _torch_calls(lambda: make(torch)))


@pytest.mark.parametrize("name", sorted(LITERALS))
def test_under_fake_mode_a_mode_sees_the_calls_torchs_sees(name):
    make = LITERALS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with FakeTensorMode():
            mine = _dc_calls(lambda: make(dc))
        with TorchFakeTensorMode():
            theirs = _torch_calls(lambda: make(torch))
    _same_calls(mine, theirs)


def test_tensor_of_a_tensor_warns_as_torch_does():
    with pytest.warns(UserWarning) as theirs:
        torch.tensor(torch.ones(2))
    with pytest.warns(UserWarning) as mine:
        dc.tensor(dc.ones(2))
    assert [str(w.message) for w in mine] == [str(w.message) for w in theirs]


# --- FakeTensorMode: fake literals and constants ----------------------------------------------------------
def _describe(value: Any, lib: Any) -> Any:
    """A result, comparable across libraries: a tensor's kind, device, dtype, shape and constant-ness."""
    if not isinstance(value, lib.Tensor):
        return value
    fake = type(value).__name__ == "FakeTensor"
    return (fake, str(value.device), str(value.dtype).split(".")[-1], tuple(value.shape),
            fake and value.constant is not None, value.requires_grad)


def _add_const(m):
    x = m.tensor(0.0)
    x.add_(1)
    return x.item()


def _add_unknown(m):
    x = m.tensor(0.0)
    x.add_(m.empty(()))
    return x.item()


def _alias_unknown(m):
    x = m.tensor(0.0)
    x.view(1).add_(m.empty(1))
    return x.item()


def _expanded(m):
    one = m.tensor(1.0)
    wide = one.expand(3)
    return _constant(one), _constant(wide)


def _constant(t):
    return t.constant is not None


FAKE_PROGRAMS = {
    **{name: make for name, make in LITERALS.items() if name != "of_a_tensor"},
    "list_of_one": lambda m: m.tensor([0.5]),
    "scalar_item": lambda m: m.tensor(0.5).item(),
    "scalar_plus_one": lambda m: m.tensor(0.5) + 1,
    "scalar_plus_one_item": lambda m: (m.tensor(0.5) + 1).item(),
    "scalar_times_list": lambda m: m.tensor(0.5) * m.tensor([1.0, 2.0]),
    "element_of_a_list_item": lambda m: m.tensor([1.0, 2.0])[0].item(),
    "sum_item": lambda m: m.tensor([1.0]).sum().item(),
    "eq_bool": lambda m: bool(m.tensor(1.0) == 1),
    "add_const": _add_const,
    "add_unknown": _add_unknown,
    "alias_unknown": _alias_unknown,
    "expanded": _expanded,
    "rand_like": lambda m: m.rand_like(m.tensor(1.0)),
    "nonzero_const": lambda m: m.tensor(1.0).nonzero(),
    "nonzero_unknown": lambda m: m.tensor([1.0, 0.0]).nonzero(),
    "cuda": lambda m: m.tensor([1.0, 2.0], device="cuda"),
    "cuda_scalar": lambda m: m.tensor(2.0, device="cuda"),
    "scalar_requires_grad": lambda m: m.tensor(1.0, requires_grad=True),
    "complex": lambda m: m.tensor(1j),
    "lift_fresh_of_a_fake": lambda m: m.ops.aten.lift_fresh.default(m.ones(2)),
    "lift_fresh_copy_of_a_fake": lambda m: m.ops.aten.lift_fresh_copy.default(m.ones(())),
}


def _run_fake(fn: Any, lib: Any, mode: Any) -> Any:
    try:
        with mode:
            out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__
    return tuple(_describe(v, lib) for v in out) if isinstance(out, tuple) else _describe(out, lib)


@pytest.mark.parametrize("name", sorted(FAKE_PROGRAMS))
def test_fake_literals_and_constants_are_torchs(name):
    fn = FAKE_PROGRAMS[name]
    assert _run_fake(fn, dc, FakeTensorMode()) == _run_fake(fn, torch, TorchFakeTensorMode())


# --- make_fx: literals --------------------------------------------------------------------------------------
def _two_literals(m):
    def f(x):
        return x + m.tensor([1.0, 2.0]) + m.tensor([3.0, 4.0])

    return f


def _add_then_item(m):
    def f(x):
        return x * m.tensor(1.0).add_(1).item()

    return f


TRACED = {
    "list": lambda m: (lambda x: x + m.tensor([1.0, 2.0])),
    "scalar": lambda m: (lambda x: x * m.tensor(0.5)),
    "returned": lambda m: (lambda x: m.tensor([1.0, 2.0])),
    "two_literals": _two_literals,
    "dtype": lambda m: (lambda x: x + m.tensor([1, 2], dtype=m.float64)),
    "item_of_a_constant": lambda m: (lambda x: x + m.tensor(3.0).item()),
    "add_then_item": _add_then_item,
    "from_numpy": lambda m: (lambda x: x + m.from_numpy(np.ones(2, dtype=np.float32))),
    "ndarray": lambda m: (lambda x: x + m.tensor(np.ones(2))),
    "of_a_tensor": lambda m: (lambda x: m.tensor(x) + 1),
}


def _code(gm: Any) -> str:
    return gm.code.replace("torch.", "dispatchcore.")


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(TRACED))
def test_make_fx_records_a_literal_as_torch_does(name, tracing_mode):
    build = TRACED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch_make_fx(build(torch), tracing_mode=tracing_mode)(torch.ones(2))
        mine = dc_make_fx(build(dc), tracing_mode=tracing_mode)(dc.ones(2))
    assert _code(mine) == _code(theirs)
    for node in theirs.graph.nodes:
        if node.op == "get_attr":
            assert getattr(mine, node.target).tolist() == getattr(theirs, node.target).tolist()


def test_a_cuda_literal_traced_fake_is_lifted_on_cpu_and_moved_as_in_torch():
    def build(m):
        return lambda x: x + m.tensor([1.0, 2.0], device="cuda")

    with TorchFakeTensorMode():
        x = torch.ones(2, device="cuda")
    with FakeTensorMode():
        y = dc.ones(2, device="cuda")
    theirs = torch_make_fx(build(torch), tracing_mode="fake")(x)
    mine = dc_make_fx(build(dc), tracing_mode="fake")(y)
    assert "_to_copy.default(lift_fresh_copy, device = device(type='cuda', index=0))" in _code(mine)
    assert _code(mine) == _code(theirs)


def test_a_meta_literal_is_a_plain_constant_in_both():
    def build(m):
        return lambda x: x + m.tensor([1.0, 2.0], device="meta")

    theirs = torch_make_fx(build(torch))(torch.ones(2, device="meta"))
    mine = dc_make_fx(build(dc))(dc.ones(2, device="meta"))
    assert _code(mine) == _code(theirs)


@pytest.mark.parametrize("name", ["list", "two_literals", "ndarray"])
def test_graphs_with_literals_compute_torchs_values(name):
    build = TRACED[name]
    theirs = torch_make_fx(build(torch))(torch.ones(2))
    mine = dc_make_fx(build(dc))(dc.ones(2))
    data = [0.5, -1.5]
    assert mine(dc.tensor(data)).tolist() == theirs(torch.tensor(data)).tolist()


# --- make_fx: nested inputs -----------------------------------------------------------------------------------
Pair = collections.namedtuple("Pair", "p q")


def _as(lib: Any, tree: Any) -> Any:
    """``tree`` with each ndarray leaf a tensor of ``lib``."""
    if isinstance(tree, np.ndarray):
        return lib.tensor(tree)
    if isinstance(tree, Pair):
        return Pair(*(_as(lib, v) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(_as(lib, v) for v in tree)
    if isinstance(tree, dict):
        return {k: _as(lib, v) for k, v in tree.items()}
    return tree


def _f_list(xs, y):
    return xs[0] * xs[1] + y


def _f_dict(d):
    return d["a"] - d["b"]


def _f_nested(t):
    return t[0] + t[1][0] + t[1][1]


def _f_with_numbers(xs, n):
    return xs[0] * n


def _f_empty(xs, e):
    return xs[0] + 1


def _f_varargs(*args):
    return args[0][0] + args[1]


def _f_namedtuple(nt):
    return nt.p + nt.q


def _f_returns_structure(xs, d):
    return {"sum": xs[0] + xs[1], "scaled": [d["w"] * 2, 3, None]}


def _f_returns_input(xs):
    return xs


def _f_names_collide(x_1, x):
    return x_1 + x[0]


def _f_none(xs, none):
    return xs[0]


def _f_literal(xs):
    return xs[0] + xs[1] * 2


A, B, C = np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32), np.array([0.5, 4.0], np.float32)
NESTED = {
    "list": (_f_list, ([A, B], C)),
    "dict": (_f_dict, ({"b": A, "a": B},)),
    "nested": (_f_nested, ((A, [B, C]),)),
    "with_numbers": (_f_with_numbers, ([A, 3], 2)),
    "empty": (_f_empty, ([A, []], [])),
    "varargs": (_f_varargs, ([A, B], C)),
    "namedtuple": (_f_namedtuple, (Pair(A, B),)),
    "returns_structure": (_f_returns_structure, ([A, B], {"w": C})),
    "tuple_then_dict": (_f_returns_structure, ((A, B), {"w": C})),
    "returns_input": (_f_returns_input, ([A, B],)),
    "names_collide": (_f_names_collide, (A, [B])),
    "none": (_f_none, ([A, None], None)),
}


def _trace_nested(name: str, tracing_mode: str = "real") -> tuple[Any, Any, Any]:
    f, example = NESTED[name]
    theirs = torch_make_fx(f, tracing_mode=tracing_mode)(*_as(torch, example))
    mine = dc_make_fx(f, tracing_mode=tracing_mode)(*_as(dc, example))
    return mine, theirs, example


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value.tolist() if hasattr(value, "tolist") else value]


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_inputs_give_torchs_placeholders_and_code(name, tracing_mode):
    mine, theirs, _ = _trace_nested(name, tracing_mode)
    assert [(n.op, n.name) for n in mine.graph.nodes] == [(n.op, n.name) for n in theirs.graph.nodes]
    assert _code(mine) == _code(theirs)
    assert str(mine.graph).replace("dispatchcore.", "") == str(theirs.graph).replace("torch.", "")


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_the_same_tensor_in_two_leaves_is_its_last_placeholder_as_in_torch(tracing_mode):
    a, t = torch.tensor(A), dc.tensor(A)
    theirs = torch_make_fx(_f_literal, tracing_mode=tracing_mode)([a, a])
    mine = dc_make_fx(_f_literal, tracing_mode=tracing_mode)([t, t])
    assert "add.Tensor(xs_2, mul)" in _code(mine)
    assert _code(mine) == _code(theirs)


def _outcome(gm: Any, args: Any) -> Any:
    try:
        return gm(*args)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", ["list", "dict", "nested", "with_numbers", "returns_structure"])
def test_the_input_and_output_structures_print_as_torchs(name):
    mine, theirs, _ = _trace_nested(name)
    assert repr(mine._in_spec) == repr(theirs._in_spec)
    assert repr(mine._out_spec) == repr(theirs._out_spec)


def _shape_of(value: Any) -> Any:
    """The containers of a result, each leaf by kind: comparable across the libraries."""
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [_shape_of(v) for v in value]
    if isinstance(value, dict):
        return {k: _shape_of(v) for k, v in value.items()}
    return "tensor" if hasattr(value, "tolist") else value


@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_graphs_take_and_return_torchs_structures(name):
    mine, theirs, example = _trace_nested(name)
    expected, got = _outcome(theirs, _as(torch, example)), _outcome(mine, _as(dc, example))
    assert _shape_of(got) == _shape_of(expected)
    assert _leaves(got) == _leaves(expected)


def test_a_tuple_then_a_dict_is_read_as_args_and_kwargs_as_torchs_code_reads_it():
    # torch's _PyTreeCodeGen takes two inputs, a tuple and a dict, for (args, kwargs): its code
    # flattens ([xs, d], {}), which misses the dict's key when the module is called
    mine, theirs, example = _trace_nested("tuple_then_dict")
    assert "fx_pytree.tree_flatten_spec(([xs, d], {}), self._in_spec)" in _code(mine)
    assert _outcome(mine, _as(dc, example)) == _outcome(theirs, _as(torch, example)) == ("KeyError", "'w'")


def _readable(text: str) -> list[str]:
    lines = text.replace("torch.", "dispatchcore.").splitlines()[1:]  # the class line names the base class
    return [line for line in lines if "No stacktrace found" not in line]


@pytest.mark.parametrize("name", ["list", "with_numbers", "returns_structure", "empty"])
def test_print_readable_annotates_nested_placeholders_as_torch(name):
    mine, theirs, _ = _trace_nested(name, "fake")
    assert _readable(mine.print_readable(print_output=False)) == _readable(theirs.print_readable(print_output=False))


# torch.tensor's dtype inference: each element's own type, promoted (infer_scalar_type)
INFERRED = {
    "numpy-float64": lambda m: np.float64(1.5), "numpy-float32": lambda m: np.float32(1.5),
    "numpy-float16": lambda m: np.float16(1.5), "numpy-int32": lambda m: np.int32(3),
    "numpy-uint8": lambda m: np.uint8(3),
    "numpy-bool": lambda m: np.bool_(True), "numpy-in-list": lambda m: [np.float64(1.0), 2],
    "numpy-float32-and-python-float": lambda m: [np.float32(1), 2.5],
    "numpy-int32-and-python-int": lambda m: [np.int32(1), 2],
    "numpy-float16-and-python-int": lambda m: [np.float16(1), 2],
    "numpy-float16-and-python-float": lambda m: [np.float16(1), 2.0],
    "bool-and-numpy-int8": lambda m: [True, np.int8(3)],
    "two-numpy-floats": lambda m: [[np.float64(1)], [np.float32(2)]],
    "python-only": lambda m: [[1, 2.5], [True, 4]], "tensor-elements": lambda m: [m.tensor(1.0, dtype=m.float64)],
    "int32-tensor-and-int": lambda m: [m.tensor(1, dtype=m.int32), 2],
    "arrays-in-list": lambda m: [np.array([1, 2], dtype=np.int16), np.array([3, 4], dtype=np.int16)],
}


@pytest.mark.parametrize("name", sorted(INFERRED))
def test_tensor_infers_torchs_dtype_from_numpy_scalars_arrays_and_tensors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.tensor(INFERRED[name](torch))
        got = dc.tensor(INFERRED[name](dc))
    assert str(got.dtype).rpartition(".")[2] == str(expected.dtype).rpartition(".")[2]
    assert got.tolist() == expected.tolist()
