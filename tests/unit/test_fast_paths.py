"""The hot-path shortcuts behave exactly like the general paths they short-cut.

Covers Note [Fused ADInplaceOrView] (Autograd kernels running the built-in ADInplaceOrView
bookkeeping inline), Note [Bound kernels] (the call memo holds kernels bound to their key set,
with the built-in Autograd kernels' redispatch resolved up front), Note [Leaf kernels] (no guard
around kernels that cannot see it), Note [matmul shortcut], and the fixed-arity operator entries.
"""

from __future__ import annotations

import math
import warnings

import pytest

import dispatchcore as dc
from dispatchcore.ops import aten
from dispatchcore.tls import tls_get


def test_fused_view_path_records_base_and_version_like_the_adinplaceorview_kernel():
    x = dc.ones(2, 3, requires_grad=True)
    v = x.view(-1)
    s = x[1]
    assert v._base is x and s._base is x
    assert v._vc is x._vc and s._vc is x._vc
    assert v.grad_fn is not None and type(v.grad_fn).__name__ == "ViewBackward0"


def test_fused_inplace_path_bumps_the_version_once():
    x, y = dc.ones(3), dc.ones(3)
    x.add_(y)
    x.mul_(y)
    assert x._version == 2


def test_an_overriding_adinplaceorview_kernel_runs_instead_of_the_fused_bookkeeping(aten_impl):
    calls = []

    def my_view(ks, self, size):
        calls.append(int(ks))
        with dc.AutoDispatchBelowADInplaceOrView():
            return aten.view.default.redispatch(ks & dc.DispatchKeySet.full_after(dc.DispatchKey.ADInplaceOrView),
                                                self, size)

    aten_impl.impl("view", my_view, "ADInplaceOrView", with_keyset=True)
    x = dc.ones(2, 3)
    v = x.view(-1)
    assert calls, "the user's ADInplaceOrView kernel did not run"
    assert v._base is None  # the override did no as_view: nothing fused in behind its back


def test_an_overriding_inplace_adinplaceorview_kernel_runs_instead_of_the_fused_bump(aten_impl):
    def my_add_(ks, self, other, alpha=1):
        with dc.AutoDispatchBelowADInplaceOrView():
            return aten.add_.Tensor.redispatch(
                ks & dc.DispatchKeySet.full_after(dc.DispatchKey.ADInplaceOrView), self, other)

    aten_impl.impl("add_.Tensor", my_add_, "ADInplaceOrView", with_keyset=True)
    x = dc.ones(3)
    x.add_(dc.ones(3))
    assert x.tolist() == [2.0, 2.0, 2.0] and x._version == 0  # the override bumps nothing


def test_traces_still_show_the_adinplaceorview_hop_of_a_view():
    x = dc.ones(2, 3)
    with dc.trace() as t:
        x.view(-1)
        x.add_(1.0)
    keys = [(h.op, h.key.name) for h in t.hops()]
    assert ("aten::view", "ADInplaceOrView") in keys
    assert ("aten::add_.Tensor", "ADInplaceOrView") in keys  # a number operand is wrapped, as in torch


def test_inplace_on_an_inference_tensor_outside_inference_mode_raises_on_the_fused_path():
    with dc.inference_mode():
        x = dc.ones(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        x.add_(dc.ones(3))


def test_fixed_arity_autograd_kernels_fall_back_for_keywords_and_extra_arguments():
    a = dc.tensor([1.0, 2.0], requires_grad=True)
    b = dc.tensor([3.0, 4.0], requires_grad=True)
    assert aten.add.Tensor(a, b, alpha=2).tolist() == [7.0, 10.0]  # keyword: the generic kernel
    assert aten.add.Tensor(a, other=b).tolist() == [4.0, 6.0]
    out = aten.sum.dim_IntList(a, [0], True)  # extra positional arguments
    assert out.tolist() == [3.0] and out.grad_fn is not None
    ks = dc.DispatchKeySet(dc.DispatchKey.AutogradCPU).add(dc.DispatchKey.CPU)
    assert aten.mul.Tensor.redispatch(ks, a, other=b).tolist() == [3.0, 8.0]  # tensor by keyword
    (a * b).sum().backward()
    assert a.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [1.0, 2.0]


def test_fixed_arity_autograd_kernel_records_only_for_inputs_that_require_grad():
    a = dc.tensor([1.0, 2.0], requires_grad=True)
    b = dc.tensor([3.0, 4.0])
    r = a * b
    assert r.requires_grad and r.grad_fn.next_functions[1][0] is None
    with dc.no_grad():
        assert not (a * b).requires_grad
    assert not (b * b).requires_grad


def test_fixed_arity_entries_fall_back_to_the_general_call_for_non_tensors():
    x = dc.ones(2, 3)
    with pytest.raises(dc.SchemaError, match="Expected a value of type 'Tensor'"):
        dc.Tensor.relu(3.0)
    assert x.view([3, 2]).shape == (3, 2) and x.view((6,)).shape == (6,)


def test_inference_tensors_are_made_only_on_the_thread_in_inference_mode():
    import threading

    from dispatchcore.tls import inference_active

    made_elsewhere = []
    inside = threading.Event()
    done = threading.Event()

    def other_thread():
        inside.wait()
        made_elsewhere.append(dc.ones(2).is_inference())
        done.set()

    before = len(inference_active)  # other tests may have leaked a guard on purpose
    worker = threading.Thread(target=other_thread)
    worker.start()
    with dc.inference_mode():
        assert len(inference_active) == before + 1  # See Note [Inference mode anywhere]
        inside.set()
        done.wait()
        assert dc.ones(2).is_inference()
        with dc.inference_mode(False):
            assert not dc.ones(2).is_inference()
    worker.join()
    assert made_elsewhere == [False]
    assert len(inference_active) == before and not dc.ones(2).is_inference()


def test_inference_mode_entry_is_popped_even_when_an_exception_passes():
    from dispatchcore.tls import inference_active

    before = len(inference_active)
    with pytest.raises(ValueError), dc.inference_mode():
        raise ValueError
    assert len(inference_active) == before


def test_fixed_arity_view_kernel_leaves_views_of_views_and_grad_cases_to_the_general_kernel():
    x = dc.ones(4, 3, requires_grad=True)
    v = x.view(-1)  # requires grad: general kernel, records ViewBackward0
    w = v.view(3, 4)  # a view of a view: the root base is remembered
    assert w._base is x and w.grad_fn is not None
    y = dc.ones(4, 3)
    with dc.no_grad():
        n = y[0]  # grad mode off: general kernel, no_grad creation meta
    assert n._base is y and not n.requires_grad
    assert y.view(2, 6)._base is y


def test_fixed_arity_inplace_kernel_records_when_the_base_of_a_view_requires_grad():
    x = dc.ones(4, requires_grad=True).clone()
    v = x[1:]
    v.add_(dc.ones(3))
    assert v.grad_fn is not None and x.grad_fn is not None
    assert x._version == v._version == 1


def test_number_operands_are_wrapped_take_the_tensor_overload_and_still_record():
    a = dc.tensor([1.0, -2.0], requires_grad=True)
    assert (a * 2.0).tolist() == [2.0, -4.0] and (a + 1).tolist() == [2.0, -1.0]
    assert a.add(1, alpha=3).tolist() == [4.0, 1.0]  # alpha: the general call
    out = (a * 3.0).sum()
    out.backward()
    assert a.grad.tolist() == [3.0, 3.0]
    assert type((a * 2.0).grad_fn).__name__ == "MulBackward0"  # mul.Tensor with a wrapped number
    assert dc.ops.aten.sum.dim_IntList(a, [0]).item() == -1.0  # two positional arguments


def test_methods_keep_torchs_keyword_names():
    x, m = dc.ones(2, 2), dc.ones(2, 2)
    assert x.unsqueeze(dim=0).shape == (1, 2, 2)
    assert x.mm(mat2=m).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert x.matmul(other=m).shape == (2, 2)
    assert dc.ones(1, 2, 2).bmm(mat2=dc.ones(1, 2, 2)).shape == (1, 2, 2)
    assert x.clone().fill_(value=3.0).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert (x - 2).clamp_min(min=0).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert (x - 2).clamp_min_(min=0).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert x.add(other=m).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert x.softmax(dim=1).shape == (2, 2) and x.squeeze(dim=0).shape == (2, 2)


def test_the_call_memo_holds_the_autograd_kernel_bound_to_its_key_set():
    x = dc.ones(3)
    x.relu()
    included, _, keep = tls_get()
    # the entry of this call's key set (earlier tests may have left entries for other key sets)
    bound = aten.relu.default._dispatch[2][(x._key_bits | included) & keep]
    assert bound.__qualname__ == "autograd_kernel[aten::relu].bound"


def test_a_bound_autograd_kernel_calls_a_cpu_kernel_registered_after_it_was_bound(aten_impl):
    x = dc.tensor([-1.0, 2.0])
    assert x.relu().tolist() == [0.0, 2.0]  # the memo now holds a kernel bound below Autograd
    aten_impl.impl("relu", lambda t: dc.full_like(t, 7.0), "CPU")
    assert x.relu().tolist() == [7.0, 7.0]
    aten_impl._destroy()
    assert x.relu().tolist() == [0.0, 2.0]


def test_a_kernel_taking_its_key_set_is_bound_to_it():
    lib = dc.Library("bound_ks", "DEF")
    try:
        lib.define("whoami(Tensor x) -> str")
        seen = []

        def kernel(ks, x):
            seen.append(ks)
            return "cpu"

        lib.impl("whoami", kernel, "CPU", with_keyset=True)
        x = dc.ones(1)
        op = dc.ops.bound_ks.whoami.default
        assert op(x) == "cpu" and op(x) == "cpu"  # a miss, then the memo's bound kernel
        assert seen[0] == seen[1] and seen[0].has("CPU")
    finally:
        lib._destroy()


def test_a_bound_inplace_kernel_records_nothing_and_bumps_the_version_under_no_grad():
    x = dc.ones(2, requires_grad=True).clone()
    with dc.no_grad():
        x.add_(dc.ones(2))
        x.add_(dc.ones(2))
    assert x._version == 2 and x.grad_fn is not None and type(x.grad_fn).__name__ == "CloneBackward0"


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "eq"])
def test_empty_results_of_the_fast_paths_have_torchs_strides(op):
    x = dc.ones(0)
    assert getattr(x, op)(x).stride() == (1,)  # numpy's empty result has stride 0
    assert getattr(dc.ones(0, 3), op)(dc.ones(3)).stride() == (3, 1)


def test_the_tensor_class_cannot_be_called_but_kernels_still_make_tensors():
    with pytest.raises(TypeError, match="no public constructor"):
        dc.Tensor([1.0])
    with pytest.raises(TypeError, match="no public constructor"):
        dc.Tensor()
    t = dc.ones(2) + 1
    assert type(t) is dc.Tensor and t.tolist() == [2.0, 2.0] and t._version == 0 and t.grad is None


def test_calls_under_a_guard_and_in_the_default_state_use_their_own_memo_entries():
    x = dc.ones(2, requires_grad=True)
    assert x.relu().grad_fn is not None  # fills the default-state memo for x's key set
    with dc.ExcludeDispatchKeyGuard(dc.DispatchKeySet("AutogradCPU")):
        assert x.relu().grad_fn is None and aten.relu.default(x).grad_fn is None
        assert dc.add(x, x).grad_fn is None
    assert x.relu().grad_fn is not None and dc.add(x, x).grad_fn is not None


def test_a_guard_that_leaves_the_default_key_sets_gives_back_the_default_state_object():
    from dispatchcore import tls

    st = tls.per_thread.state
    with dc.IncludeDispatchKeyGuard("BackendSelect"):  # already included by default
        assert st.keys is tls._DEFAULT_STATE
    with dc.IncludeDispatchKeyGuard("Python"), dc.ExcludeDispatchKeyGuard(dc.DispatchKeySet("AutogradCPU")):
        assert st.keys is not tls._DEFAULT_STATE
    assert st.keys is tls._DEFAULT_STATE
    with dc.LoggingMode():
        assert st.keys is not tls._DEFAULT_STATE
    assert st.keys is tls._DEFAULT_STATE
    assert tls._state(*tls._DEFAULT_STATE[:2]) is tls._DEFAULT_STATE


@pytest.mark.parametrize("lo, hi", [(0, None), (-1.5, 2), (None, 0.5), (float("nan"), None), (1e40, None),
                                    (True, None)])
def test_clamp_fast_path_matches_the_checked_path(lo, hi):
    x = dc.tensor([-2.0, float("nan"), 0.25, 3.0])
    if lo == 1e40:  # a bound float32 cannot hold: torch's overflow error, from the checked path
        with pytest.raises(RuntimeError, match="without overflow"):
            x.clamp(lo, hi)
        return
    got = x.clamp(lo, hi).tolist()
    low = -float("inf") if lo is None else float(lo)
    high = float("inf") if hi is None else float(hi)
    want = [v if v != v else min(max(v, low), high) for v in x.tolist()]
    if lo is not None and lo != lo:
        want = [float("nan")] * 4
    assert str(got) == str(want)
    y = x.clone()
    assert y.clamp_(lo, hi) is y and str(y.tolist()) == str(want) and y._version == 1


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_clamp_min_int_zero_gives_the_bits_of_the_general_bound(dtype):
    # clamp(min=0) takes the dtype's 0-d zero; a float bound 0.0 takes numpy's scalar conversion
    x = dc.tensor([-2.0, -0.0, 0.0, float("nan"), float("inf"), -float("inf"), 0.25], dtype=getattr(dc, dtype))
    via_zero, via_float = x.clamp(min=0), x.clamp(min=0.0)
    assert via_zero.dtype == x.dtype
    assert via_zero._data.tobytes() == via_float._data.tobytes()
    assert dc.clamp_min(x, 0)._data.tobytes() == via_float._data.tobytes()


@pytest.mark.parametrize("values", [[0.1, -2.5, 3.0, 7.25], [float("inf"), -float("inf")], [3e38, 3e38],
                                    [1.0, float("nan")], [], 1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_full_mean_fast_path_matches_the_general_one_bit_for_bit(values, dtype):
    from dispatchcore_backends.cpu import kernels as K

    x = dc.tensor(values, dtype=getattr(dc, dtype))
    fast, general = x.mean()._data, K._mean(x._data, None, False, None)
    assert fast.shape == () and fast.dtype == general.dtype and fast.tobytes() == general.tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf, an overflow, 0/0: silent, as in torch
        x.mean()


@pytest.mark.parametrize("value", [1.0001, -3, 7, 2**40 + 1, 0.1, 1e-45, 1e-50, 3.4e38, 1e39, -float("inf")])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_a_cached_number_in_float32_gives_the_bits_of_the_python_number(op, value):
    # Note [Cached numbers in float32]: the converted operand against numpy's weak Python scalar
    import numpy as np

    from dispatchcore._composites import wrapped_number

    meta = wrapped_number(value)._meta  # cached: every later use of the number gets this one
    assert (meta.as_float32 is None) == (value == 1e39)  # float32 cannot hold 1e39: the number as is
    x = dc.tensor([1.5, -0.0, 3e38, -7.25, float("inf"), float("nan"), 1e-40, 2.0], dtype=dc.float32)
    ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}[op]
    with np.errstate(all="ignore"):
        want = ufunc(x._data, value)
    assert want.dtype == np.float32
    got = getattr(x, op)(value)
    assert got.dtype == dc.float32 and got._data.tobytes() == want.tobytes()
    y = x.clone()
    getattr(y, op + "_")(value)
    assert y._data.tobytes() == want.tobytes()


_HALF_VALUES = [1.5, -0.0, 0.0, 1000.0, 3e-3, 65504.0, float("inf"), float("nan")]


@pytest.mark.parametrize("value", [0.1, 1.0001, -3.7, 3, 1e5, 2**40 + 1, 1e-8, float("inf")])
@pytest.mark.parametrize("op", ["mul", "div"])
def test_float16_times_a_scalar_computes_in_float32_and_rounds_once(op, value):
    # Note [Half arithmetic in float]: every way of writing x * number, and x * 0-d tensor, gives
    # the float32 arithmetic rounded to half, the fast paths (mul.Tensor with a wrapped number,
    # mul.Scalar, mul_) as well as the general one
    import numpy as np

    x = dc.tensor(_HALF_VALUES, dtype=dc.float16)
    ufunc = {"mul": np.multiply, "div": np.true_divide}[op]
    with np.errstate(all="ignore"):
        want = ufunc(x._data.astype(np.float32), np.float32(value)).astype(np.float16)
    y = x.clone()
    getattr(y, op + "_")(value)
    results = {"wrapped": getattr(x, op)(value), "Scalar": getattr(aten, op).Scalar(x, value),
               "0-d float64": getattr(x, op)(dc.tensor(value, dtype=dc.float64)), "in place": y,
               "out=": getattr(dc, op)(x, value, out=dc.empty(8, dtype=dc.float16))}
    for how, got in results.items():
        assert got.dtype == dc.float16 and got._data.tobytes() == want.tobytes(), how


def test_float16_rounds_a_scalar_first_operand_and_adds_scalar_to_half_as_torch():
    import numpy as np

    x = dc.tensor(_HALF_VALUES, dtype=dc.float16)
    half_tenth = np.float32(np.float16(0.1))  # 0.0999755859375
    with np.errstate(all="ignore"):
        first = (half_tenth * x._data.astype(np.float32)).astype(np.float16)
        added = (x._data.astype(np.float32) + half_tenth).astype(np.float16)
    assert dc.mul(dc.tensor(0.1), x)._data.tobytes() == first.tobytes()
    assert (x + 0.1)._data.tobytes() == added.tobytes()
    assert (dc.zeros(2, dtype=dc.float16) * 1e5).tolist() == [0.0, 0.0]  # 1e5 is not rounded to inf


@pytest.mark.parametrize("dtype, alpha, op", [("float16", 65520, "add"), ("float16", 7e4, "sub"),
                                              ("float32", 1e39, "add"), ("int8", 128, "add"),
                                              ("int8", -128, "sub"), ("uint8", 256, "add")])
def test_an_alpha_the_dtype_cannot_hold_is_refused_as_torchs_checked_convert(dtype, alpha, op):
    x = dc.ones(2, dtype=getattr(dc, dtype))
    with pytest.raises(RuntimeError, match="value cannot be converted to type .* without overflow"):
        getattr(x, op)(x, alpha=alpha)
    with pytest.raises(RuntimeError, match="without overflow"):
        getattr(x.clone(), op + "_")(x, alpha=alpha)


@pytest.mark.parametrize("dtype, alpha, op", [("int8", 128, "sub"), ("int8", -128, "add"), ("uint8", -128, "add"),
                                              ("uint8", 255, "sub"), ("float16", 65504, "sub")])
def test_an_alpha_in_range_after_torchs_negation_for_sub_is_accepted(dtype, alpha, op):
    x = dc.ones(2, dtype=getattr(dc, dtype)) * 3
    want = {"int8": {("sub", 128): -125, ("add", -128): -125}, "uint8": {("add", -128): 131, ("sub", 255): 4},
            "float16": {("sub", 65504): -65504.0}}[dtype][(op, alpha)]
    assert getattr(x, op)(dc.ones(2, dtype=x.dtype), alpha=alpha).tolist() == [want, want]


@pytest.mark.parametrize("dtype, value", [("float16", 1e5), ("float32", 1e39), ("float32", -1e39)])
def test_an_inplace_number_the_dtype_cannot_hold_overflows_to_inf_as_torch(dtype, value):
    # numpy warns about the number's cast before it computes: the in-place write still happens
    x = dc.tensor([1.5, -2.0], dtype=getattr(dc, dtype))
    assert x.add_(value).tolist() == [math.copysign(math.inf, value)] * 2
    y = dc.tensor([1.5, -2.0], dtype=getattr(dc, dtype))
    assert y.mul_(value).tolist() == [math.copysign(math.inf, value), -math.copysign(math.inf, value)]


def test_ops_with_optional_positional_arguments_bind_any_count_and_still_record():
    x = dc.ones(2, 3, requires_grad=True)
    s = x.sum(1, True)  # sum.dim_IntList: 2 to 3 positional arguments
    assert s.shape == (2, 1) and type(s.grad_fn).__name__ == "SumBackward1"
    c = x.clamp(0.5, 2.0)
    assert type(c.grad_fn).__name__ == "ClampBackward1"
    (s.sum() + c.sum()).backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2


def test_views_made_under_no_grad_take_the_bound_path_and_keep_their_creation_meta():
    x = dc.ones(2, 3, requires_grad=True)
    with dc.no_grad():
        v = x.t()  # the bound view kernel, grad mode off
        w = dc.ones(2).view(-1)
    assert v._base is x and v.requires_grad and v.grad_fn is None and w._base is not None
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        v.mul_(2)
    assert dc.ones(2).view(-1)._meta is None  # grad mode on, nothing requires grad: no ViewMeta


def test_a_kernel_object_with_getattr_is_bound_with_partial_not_by_its_getattr():
    class Kernel:
        def __call__(self, ks, x):
            return "called"

        def __getattr__(self, name):  # answers every attribute, bind_keyset included
            return lambda *args: (lambda *more: "wrong")

    lib = dc.Library("bound_getattr", "DEF")
    try:
        lib.define("f(Tensor x) -> str")
        lib.impl("f", Kernel(), "CPU", with_keyset=True)
        op = dc.ops.bound_getattr.f.default
        assert op(dc.ones(1)) == "called" and op(dc.ones(1)) == "called"
    finally:
        lib._destroy()


def test_a_wrapper_of_a_builtin_autograd_kernel_is_not_bound_by_the_builtins_binder(aten_impl):
    import functools

    builtin = aten.neg.default.registrations[dc.DispatchKey.Autograd][0].kernel
    calls = []

    @functools.wraps(builtin)  # copies builtin.bind_keyset onto the wrapper
    def wrapper(ks, *args, **kwargs):
        calls.append(ks)
        return builtin(ks.raw_repr(), *args, **kwargs)

    aten_impl.impl("neg", wrapper, "AutogradCPU", with_keyset=True)
    x = dc.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        assert aten.neg.default(x).tolist() == [-1.0, -2.0] and (-x).tolist() == [-1.0, -2.0]
    assert len(calls) == 6


def test_a_call_with_keywords_binds_the_kernel_once_not_on_every_call(monkeypatch):
    builtin = aten.sum.dim_IntList.registrations[dc.DispatchKey.Autograd][0].kernel
    real = builtin.bind_keyset
    binds = []

    def counting(bits):
        binds.append(bits)
        return real(bits)

    counting.kernel = builtin
    monkeypatch.setattr(builtin, "bind_keyset", counting)
    x = dc.ones(2, 3, requires_grad=True)
    for _ in range(3):  # keywords: the general path, which also fills the positional memo
        assert aten.sum.dim_IntList(x, [0], keepdim=True).tolist() == [[2.0, 2.0, 2.0]]
    assert len(binds) <= 1


def test_traced_method_calls_are_recorded_as_calls_even_after_the_memo_was_warm():
    x, y = dc.tensor([1.0, 2.0], requires_grad=True), dc.tensor([3.0, 4.0])
    x.mul(y), x.neg(), dc.mul(x, y)  # warm the memos first
    with dc.trace() as t:
        x.mul(y)
        x.neg()
        x.neg()
        dc.mul(x, y)
    assert [(h.kind, h.op) for h in t.roots] == [
        ("call", "aten::mul.Tensor"), ("call", "aten::neg"), ("call", "aten::neg"), ("call", "aten::mul.Tensor")]


# --- Note [Leaf kernels] ------------------------------------------------------------------------
def test_leaf_kernel_marks_the_function_itself_and_not_a_wrapper_that_copies_the_mark():
    import functools

    def kernel(x):
        return x

    assert dc.leaf_kernel(kernel) is kernel and dc.is_leaf_kernel(kernel)

    @functools.wraps(kernel)  # copies kernel.__dict__, the mark included
    def wrapper(x):
        return kernel(x)

    assert not dc.is_leaf_kernel(wrapper)
    assert not dc.is_leaf_kernel(lambda x: x)


def test_a_marked_kernel_is_freed_without_the_cycle_collector():
    import gc
    import weakref

    def kernel(x):
        return x

    ref = weakref.ref(dc.leaf_kernel(kernel))
    gc.disable()
    try:
        del kernel
        assert ref() is None
    finally:
        gc.enable()


def test_leaf_kernel_refuses_an_object_that_takes_no_attributes():
    with pytest.raises(TypeError, match="does not take attributes; mark a Python function"):
        dc.leaf_kernel(len)


def test_the_cpu_backend_marks_every_kernel_but_the_resizing_factory_out_kernels_as_a_leaf():
    from dispatchcore_backends import cpu

    leaves = {name for name, kernel in cpu.KERNELS if dc.is_leaf_kernel(kernel)}
    resizing = {"arange.start_out", "linspace.out", "logspace.out", "eye.out", "eye.m_out"}  # they call resize_
    assert leaves == {name for name, _ in cpu.KERNELS} - resizing


def _exclude_seen_by(kernel_body, aten_impl, *, leaf):
    """The exclude sets a CPU relu kernel sees on a first (table) call and a second (memo) call."""
    seen = []

    def kernel(t):
        seen.append(dc.tls_local_exclude_set())
        return kernel_body(t)

    aten_impl.impl("relu", dc.leaf_kernel(kernel) if leaf else kernel, "CPU")
    x = dc.tensor([-1.0, 2.0])
    assert x.relu().tolist() == x.relu().tolist() == [0.0, 2.0]
    return seen


def test_a_cpu_kernel_not_marked_leaf_always_runs_below_adinplaceorview(aten_impl):
    seen = _exclude_seen_by(lambda t: dc.tensor([0.0, 2.0]), aten_impl, leaf=False)
    assert len(seen) == 2
    for exclude in seen:
        assert exclude.has("ADInplaceOrView") and exclude.has("AutogradOther")


def test_a_leaf_kernel_is_called_without_the_guard_once_memoised_so_it_must_not_read_it(aten_impl):
    seen = _exclude_seen_by(lambda t: dc.tensor([0.0, 2.0]), aten_impl, leaf=True)
    assert seen[0].has("ADInplaceOrView")  # the first call resolves the table: the full kernel
    assert not seen[1].has("ADInplaceOrView")  # the bound one: the promise is what makes this safe


def test_a_leaf_kernel_still_records_autograd_history():
    x = dc.tensor([-1.0, 2.0], requires_grad=True)
    for _ in range(2):  # a table call, then the memo's bound kernel
        y = (x * 3.0).relu()
        assert y.grad_fn is not None and type(y.grad_fn).__name__ == "ReluBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 3.0]


# --- Note [matmul shortcut] ---------------------------------------------------------------------
def test_matmul_of_two_matrices_gives_mms_result_and_records_mms_node():
    a = dc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = dc.tensor([[5.0, 6.0], [7.0, 8.0]])
    for _ in range(2):  # a table call, then the shortcut
        y = a @ b
        assert y.tolist() == [[19.0, 22.0], [43.0, 50.0]]
        assert type(y.grad_fn).__name__ == "MmBackward0"
    assert dc.matmul(a, b).tolist() == a.matmul(b).tolist() == y.tolist()


def test_an_override_of_matmul_wins_over_the_shortcut_and_leaves_with_its_library(aten_impl):
    a, b = dc.ones(2, 2), dc.ones(2, 2)
    a @ b  # memoised: the shortcut applies from now on
    aten_impl.impl("matmul", lambda x, y: dc.full((2, 2), 7.0), "CompositeImplicitAutograd")
    # a registration empties the memos: the first call fills them again, the next ones use them
    assert [(a @ b).tolist() for _ in range(3)] == [[[7.0, 7.0], [7.0, 7.0]]] * 3
    aten_impl._destroy()
    assert [(a @ b).tolist() for _ in range(3)] == [[[2.0, 2.0], [2.0, 2.0]]] * 3


def test_an_override_of_mm_is_what_the_shortcut_calls(aten_impl):
    a, b = dc.ones(2, 2), dc.ones(2, 2)
    a @ b
    aten_impl.impl("mm", lambda x, y: dc.full((2, 2), 5.0), "CPU")
    assert [(a @ b).tolist() for _ in range(3)] == [[[5.0, 5.0], [5.0, 5.0]]] * 3


def test_an_error_from_mm_reaches_the_caller_once_through_the_shortcut(aten_impl):
    calls = []

    def mm(x, y):
        calls.append(1)
        if len(calls) == 3:
            raise KeyError("from the kernel")
        return dc.full((2, 2), 1.0)

    a, b = dc.ones(2, 2), dc.ones(2, 2)
    aten_impl.impl("mm", mm, "CPU")
    a @ b, a @ b  # a table call, then the shortcut
    with pytest.raises(KeyError, match="from the kernel"):
        a @ b
    assert len(calls) == 3


def test_a_bound_autograd_kernel_names_the_leaf_it_calls_when_no_input_requires_grad():
    from dispatchcore_backends.cpu import kernels as cpu

    a = dc.ones(2, 2)
    aten.mm.default(a, a), aten._to_copy.default(a)  # memoised: bound kernels
    assert aten.mm.default._dispatch[4][a._key_bits].no_grad_kernel is cpu.mm_cpu
    # _to_copy's CPU kernel calls operators: it runs under the guard, so there is nothing to name
    assert aten._to_copy.default._dispatch[4][a._key_bits].no_grad_kernel is None


def test_the_shortcut_calls_a_user_autograd_kernel_for_mm_even_when_no_input_requires_grad(aten_impl):
    calls = []

    def autograd_mm(ks, x, y):
        calls.append(x.requires_grad or y.requires_grad)
        below = ks & dc.DispatchKeySet.full_after(dc.DispatchKey.AutogradCPU)
        return aten.mm.default.redispatch(below, x, y)

    aten_impl.impl("mm", autograd_mm, "AutogradCPU", with_keyset=True)
    a, b = dc.ones(2, 2), dc.ones(2, 2)
    assert [(a @ b).tolist() for _ in range(3)] == [[[2.0, 2.0], [2.0, 2.0]]] * 3
    assert calls == [False] * 3


def test_the_shortcut_memo_is_replaced_when_matmul_or_mm_is_rebuilt():
    from dispatchcore import _composites

    a = dc.ones(2, 2)
    for op in ("mm", "matmul"):
        lib = dc.Library("aten", "IMPL")
        a @ a, a @ a
        before = _composites._shortcut_memo
        assert a._key_bits in before
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            lib.impl(op, lambda x, y: dc.full((2, 2), 9.0), "CPU")
        assert _composites._shortcut_memo is not before and not _composites._shortcut_memo
        assert [(a @ a).tolist() for _ in range(3)] == [[[9.0, 9.0], [9.0, 9.0]]] * 3
        filled = _composites._shortcut_memo
        lib._destroy()  # the tables come back, and the memo must not keep the override
        assert _composites._shortcut_memo is not filled
        assert [(a @ a).tolist() for _ in range(3)] == [[[2.0, 2.0], [2.0, 2.0]]] * 3


def test_the_shortcut_ignores_a_no_grad_kernel_that_a_catch_all_getattr_makes_up(aten_impl):
    from unittest import mock

    kernel = mock.Mock(return_value=dc.full((2, 2), 7.0))
    aten_impl.impl("mm", kernel, "AutogradCPU")
    a = dc.ones(2, 2)
    assert [(a @ a).tolist() for _ in range(3)] == [[[7.0, 7.0], [7.0, 7.0]]] * 3
    assert kernel.call_count == 3


def test_the_shortcut_records_mms_node_when_only_the_right_operand_requires_grad():
    a, b = dc.ones(2, 2), dc.ones(2, 2, requires_grad=True)
    for _ in range(3):  # a table call, then the shortcut
        y = a @ b
        assert type(y.grad_fn).__name__ == "MmBackward0"
    y.sum().backward()
    assert b.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_matmul_in_a_trace_still_shows_the_mm_call_below_it():
    a, b = dc.ones(2, 3), dc.ones(3, 4)
    a @ b  # warm the memos first
    with dc.trace() as t:
        a @ b
    ops = [h.op for h in t.hops()]
    assert ops[0] == "aten::matmul" and "aten::mm" in ops


def test_matmul_takes_the_ordinary_path_under_autocast_a_mode_and_for_other_shapes():
    a, b, v = dc.ones(2, 3), dc.ones(3, 4), dc.ones(3)
    a @ b, a @ b  # memoised: the shortcut would apply
    with dc.autocast("cpu"):
        assert (a @ b).dtype == dc.float16  # autocast's matmul kernel ran
    with dc.LoggingMode() as log:
        a @ b
    assert [line.split(" = ")[1] for line in log.lines] == ["aten.mm.default($0, $1)"]
    with dc.inference_mode():
        r = a @ b
        assert r.tolist() == [[3.0] * 4] * 2 and r.is_inference()
    assert (a @ v).tolist() == [3.0, 3.0] and (v @ v).item() == 3.0
    with pytest.raises(TypeError, match="unsupported operand type"):  # as torch: __matmul__ returns NotImplemented
        a @ 3
    with pytest.raises(TypeError, match=r"matmul\(\): argument 'other' \(position 1\) must be Tensor, not int"):
        a.matmul(3)  # the binding's error (Note [Operand arguments])


def test_a_trace_opened_before_the_backends_load_still_records_every_hop():
    """Loading the backends inside a trace rebuilds only their slots: the rest are wrapped on first call.

    (A fresh interpreter: in this one the backends are loaded already.)
    """
    import subprocess
    import sys

    code = ("import dispatchcore as dc\n"
            "with dc.trace() as t:\n"
            "    x = dc.tensor([1.0, 2.0], requires_grad=True)\n"
            "    (x * x).sum()\n"
            "print([(h.op, h.key.name) for h in t.hops() if h.op in ('aten::mul.Tensor', 'aten::sum')])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str([("aten::mul.Tensor", "AutogradCPU"), ("aten::mul.Tensor", "CPU"),
                               ("aten::sum", "AutogradCPU"), ("aten::sum", "CPU")])


def test_the_first_factory_of_a_program_loads_the_backends_before_dispatching():
    """Else ``ones`` would find only the composite at CPU (empty + fill_) on its first call."""
    import subprocess
    import sys

    code = ("import dispatchcore as dc\n"
            "with dc.trace() as t:\n"
            "    dc.ones(4, dtype=dc.int64)\n"
            "print([(h.op, h.key.name) for h in t.hops()])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str([("aten::ones", "BackendSelect"), ("aten::ones", "CPU")])


@pytest.mark.parametrize("size", [(3, 4), (5,), (2, 1, 3), (0, 4), ()])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_expand_of_a_0d_tensor_gives_the_general_paths_view(size, dtype):
    import numpy as np
    from dispatchcore_backends.cpu import kernels as K

    x = dc.tensor(3, dtype=getattr(dc, dtype))
    fast = x.expand(*size)
    general = K._restride(x._data, size, (0,) * len(size))
    assert fast._data.shape == general.shape == size and fast.stride() == (0,) * len(size)
    assert fast._data.tobytes() == general.tobytes() and fast._data.dtype == general.dtype
    assert np.shares_memory(fast._data, x._data) or not fast._data.size
    assert fast._base is x and fast._version == x._version


def test_the_implicit_seed_is_the_tensor_ones_like_makes():
    from dispatchcore.autograd.graph import _ones_like

    for t in (dc.tensor(2.5), dc.ones(3, 2, dtype=dc.float64), dc.ones(4, dtype=dc.complex64)):
        fast, general = _ones_like(t), dc.ones_like(t)
        assert fast._data.tobytes() == general._data.tobytes() and fast.dtype == general.dtype
        assert fast.stride() == general.stride() and fast._version == general._version == 0


# --- Note [Bound kernels]: a recording view on the bound path ---------------------------------------------
VIEW_CALLS = [
    ("aten::t", lambda x: aten.t.default(x), ()),
    ("aten::view", lambda x: aten.view.default(x, [-1]), ([-1],)),
    ("aten::transpose.int", lambda x: aten.transpose.int(x, 0, 1), (0, 1)),
    ("aten::select.int", lambda x: aten.select.int(x, 0, 1), (0, 1)),
    ("aten::unsqueeze", lambda x: aten.unsqueeze.default(x, 0), (0,)),
]


def _sources():
    """Tensors that require grad, each a different way: a leaf, a non-leaf, views of both kinds."""
    leaf = dc.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
    nonleaf = leaf * 2.0
    with dc.no_grad():
        no_grad_view = leaf[:]  # a view made under no_grad: its creation meta carries over
    return {"leaf": leaf, "nonleaf": nonleaf, "view": nonleaf.view(2, 3), "no_grad view": no_grad_view}


def _graph_facts(out):
    node = out.grad_fn
    meta = out._meta
    return (out.tolist(), out.requires_grad, out._output_nr, out._base is not None, type(node).__name__,
            [(type(f).__name__ if f is not None else None, nr) for f, nr in node.next_functions], node._in_meta,
            dict(node._values), type(meta).__name__, meta.creation_meta, meta.attr_version)


@pytest.mark.parametrize("source", ["leaf", "nonleaf", "view", "no_grad view"])
@pytest.mark.parametrize("key, call, args", VIEW_CALLS, ids=[c[0] for c in VIEW_CALLS])
def test_a_view_that_records_on_the_bound_path_makes_the_general_kernels_graph(key, call, args, source):
    from dispatchcore.autograd import kernels as K

    general_kernel = K._make_view_kernel(K._derivatives[key])  # the general kernel, unbound
    sources = _sources()
    x, leaf = sources[source], sources["leaf"]
    fast = call(x)
    bound = K._derivatives[key].op._dispatch[4].get(x._key_bits)  # the memo of calls in the default state
    assert bound is not None and bound.__qualname__.endswith(".bound")  # the call took the bound kernel
    general = general_kernel(x._key_bits, x, *args)
    assert fast._vc is general._vc is x._vc and fast._base is general._base
    assert _graph_facts(fast) == _graph_facts(general)
    grads = []
    for out in (fast, general):
        (g,) = dc.autograd.grad(out.sum() * 1.0, [leaf], retain_graph=True, allow_unused=True)
        grads.append(None if g is None else g.tolist())  # None: a no_grad view has no edge to the leaf
    assert grads[0] == grads[1]
