"""explain / what_if / check_commutes: the decision without the call, and tables on a copy."""

from __future__ import annotations

import importlib
import warnings

import pytest

import dispatchcore as dc
from dispatchcore.dumps import DUMP_ORDER
from dispatchcore.explain import describe_rule
from dispatchcore.resolution import compute_table_entry

D = dc.DispatchKey
# the module, not the function ``dispatchcore.explain`` that shadows it as a package attribute
explain_module = importlib.import_module("dispatchcore.explain")


# --- helpers ----------------------------------------------------------------------------------
def recording_op(lib, calls, *keys):
    """Define ``foo(Tensor x)`` with kernels at ``keys`` that record their key; Autograd ones redispatch."""
    lib.define("foo(Tensor x) -> Tensor")
    op = dc.find_op(f"{lib.ns}::foo")
    for key in keys:
        if key.startswith("Autograd"):
            def autograd(ks, x, key=key):
                calls.append(key)
                return op.redispatch(ks & dc.DispatchKeySet.full_after(D.AutogradOther), x)

            lib.impl("foo", autograd, key, with_keyset=True)
        else:
            def kernel(x, key=key):
                calls.append(key)
                return key

            lib.impl("foo", kernel, key)
    return op


def registry_snapshot():
    """Every operator's registrations, computed entries and fallthrough masks, plus the fallbacks."""
    dispatcher = dc.get_dispatcher()
    ops = {}
    for name, op in dispatcher._ops.items():
        ops[name] = (
            {k: tuple(id(r) for r in v) for k, v in op._kernels.items()},
            {k: (id(r), label) for k, (r, label) in op._entries.items()},
            tuple(op._dispatch[0]),
            id(op._dispatch[1]),
            op.schema,
        )
    return ops, {k: id(r) for k, r in dispatcher._fallbacks.items()}


def real_entries(op):
    return {k: (op.table_entry(k)[0], op.table_entry(k)[1]) for k in DUMP_ORDER if op.table_entry(k)[0] is not None}


def same_table(predicted, real):
    """Equal by kernel function (what_if's registrations are copies) and label, key by key."""
    assert set(predicted) == set(real)
    for key, (reg, label) in predicted.items():
        real_reg, real_label = real[key]
        assert label == real_label, key
        assert getattr(reg, "kernel", reg) is getattr(real_reg, "kernel", real_reg), key


# --- explain: successful calls ----------------------------------------------------------------
def test_cpu_tensor_with_grad_goes_to_the_autograd_kernel_then_cpu():
    x = dc.ones(2, 3, requires_grad=True)
    e = dc.explain(dc.ops.aten.mul.Tensor, x, x)
    assert e.ok
    assert e.key == D.AutogradCPU
    assert e.entry[1] == "autograd kernel"
    assert e.path == [D.AutogradCPU, D.CPU]
    assert e.steps[1].kind == "redispatch" and e.steps[1].label == "kernel"
    assert e.arguments[0].bits == x._key_bits
    assert e.effective == int(dc.DispatchKeySet([D.CPU, D.AutogradCPU]))
    assert D.BackendSelect in e.fallthrough_skipped and D.ADInplaceOrView in e.fallthrough_skipped
    text = str(e)
    assert "highest priority key: AutogradCPU" in text
    assert "rule 2.4 (Autograd alias)" in text
    assert "ks & after_autograd_keyset = DispatchKeySet(CPU) -> CPU" in text
    assert "masks: AutocastCPU" in text
    assert "result: the call would run AutogradCPU -> CPU" in text


def test_under_auto_dispatch_below_autograd_the_cpu_kernel_is_chosen():
    x = dc.ones(2, requires_grad=True)
    with dc.AutoDispatchBelowAutograd():
        e = dc.explain(dc.ops.aten.mul.Tensor, x, x)
    assert e.key == D.CPU and e.path == [D.CPU]
    assert e.masked_by_exclude == [D.AutogradCPU, D.AutocastCPU]
    assert "AutoDispatchBelowAutograd is active" in str(e)
    assert "rule 1 (direct): a kernel is registered at CPU itself [kernel]" in str(e)


def test_inference_mode_and_no_grad_are_told_apart():
    x = dc.ones(2, requires_grad=True)
    with dc.inference_mode():
        e = dc.explain(dc.ops.aten.mul.Tensor, x, x)
    assert e.key == D.CPU and not e.grad_mode
    assert "inference_mode() is active" in str(e)
    with dc.no_grad():
        e = dc.explain(dc.ops.aten.mul.Tensor, x, x)
    assert e.key == D.AutogradCPU and not e.grad_mode  # grad mode is a flag, not a key
    assert "grad mode: off" in str(e)


def test_meta_tensor_goes_to_meta():
    m = dc.empty(3, device="meta")
    e = dc.explain(dc.ops.aten.add.Tensor, m, m)
    assert e.key == D.AutogradMeta
    assert e.final_key == D.Meta and e.ok


def test_mixed_cpu_and_meta_goes_to_meta_the_higher_backend_bit():
    x, m = dc.ones(3), dc.empty(3, device="meta")
    e = dc.explain(dc.ops.aten.add.Tensor, x, m)
    assert e.key == D.AutogradMeta
    assert e.path == [D.AutogradMeta, D.Meta]
    assert e.contributed == x._key_bits | m._key_bits


def test_factory_without_tensors_goes_to_backend_select():
    e = dc.explain(dc.ops.aten.empty.memory_format, [2, 3])
    assert e.arguments == ()
    assert e.key == D.BackendSelect and e.entry[1] == "kernel"
    assert e.path == [D.BackendSelect, D.CPU]
    assert "no Tensor argument" in str(e)
    e = dc.explain(dc.ops.aten.empty.memory_format, [2, 3], device=dc.device("meta"))
    assert e.path == [D.BackendSelect, D.Meta]


def test_packet_picks_the_overload_a_packet_call_would():
    x = dc.ones(2)
    assert dc.explain(dc.ops.aten.add, x, x).op is dc.ops.aten.add.Tensor
    assert dc.explain(dc.ops.aten.add, x, 2).op is dc.ops.aten.add.Tensor  # torch's packet: a number fits
    assert dc.explain("aten::add", x, 2).op is dc.ops.aten.add.Tensor  # add.Tensor's Tensor (wrapped)
    assert dc.explain(dc.ops.aten.add, x, 2, 3).op is dc.ops.aten.add.Scalar  # alpha by position
    assert dc.explain(dc.ops.aten.eq, x, 2).op is dc.ops.aten.eq.Scalar  # eq takes no number for a Tensor
    assert dc.explain("aten.add.Tensor", x, x).op is dc.ops.aten.add.Tensor


def test_custom_op_with_carriers_and_a_fallthrough(lib, carrier):
    calls: list[str] = []
    op = recording_op(lib, calls, "CPU")
    lib.impl("foo", dc.fallthrough_kernel, "AutogradCPU")
    e = dc.explain(op, carrier("CPU"))
    assert e.key == D.CPU
    assert D.AutogradCPU in e.fallthrough_skipped
    assert e.ok and e.path == [D.CPU]


def test_the_autograd_fallback_is_explained(lib, carrier):
    calls: list[str] = []
    op = recording_op(lib, calls, "CPU")
    e = dc.explain(op, carrier("CPU"))
    assert e.key == D.AutogradCPU and e.entry[1] == "backend fallback"
    assert e.path == [D.AutogradCPU, D.CPU]
    assert "basicAutogradNotImplementedFallback" in str(e)
    assert "rule 3 (backend fallback)" in e.rule


def test_explain_runs_no_kernel_and_predicts_the_real_path(lib, carrier):
    calls: list[str] = []
    op = recording_op(lib, calls, "CPU", "Meta", "Autograd")
    before = registry_snapshot()
    for keys in ("CPU", "Meta"):
        e = dc.explain(op, carrier(keys))
        assert calls == []  # nothing ran
        assert registry_snapshot() == before
        op(carrier(keys))  # now really call it: the kernels record the path explain predicted
        assert calls == [k.name.replace("Autograd" + keys, "Autograd") for k in e.path]
        calls.clear()
    with dc.AutoDispatchBelowAutograd():
        e = dc.explain(op, carrier("CPU"))
        assert calls == [] and e.path == [D.CPU]


def test_rule_words_agree_with_compute_table_entry_for_every_key():
    cases = {
        "cia": {D.CompositeImplicitAutograd: ["cia"]},
        "cia+cpu": {D.CompositeImplicitAutograd: ["cia"], D.CPU: ["cpu"]},
        "cea+autograd": {D.CompositeExplicitAutograd: ["cea"], D.Autograd: ["ag"]},
        "ceanf": {D.CompositeExplicitAutogradNonFunctional: ["nf"]},
        "cia+mkldnn": {D.CompositeImplicitAutograd: ["cia"], D.MkldnnCPU: ["mk"]},
        "nested": {D.CompositeImplicitAutogradNestedTensor: ["n"]},
        "none": {},
    }
    fallbacks = dc.get_dispatcher().fallbacks
    for kernels in cases.values():
        for key in DUMP_ORDER:
            _, label = compute_table_entry(kernels, fallbacks, key)
            words = describe_rule(kernels, fallbacks, key)
            if label == "missing":
                assert words.startswith("rule 4 (missing)")
            else:
                assert words.endswith(f"[{label}]"), (key, words)


def test_rule_words_explain_why_cia_defers_at_autogradcpu():
    kernels = {D.CompositeImplicitAutograd: ["cia"], D.CPU: ["cpu"]}
    words = describe_rule(kernels, dc.get_dispatcher().fallbacks, D.AutogradCPU)
    assert words.startswith("rule 3 (backend fallback)")
    assert ("CompositeImplicitAutograd defers because the backend below AutogradCPU has a kernel of its own "
            "(CPU)") in words


# --- explain: failing calls -------------------------------------------------------------------
def test_missing_cpu_kernel_names_the_registration_and_the_fix(lib, carrier, monkeypatch):
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False)
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "Meta")
    op = dc.find_op(f"{lib.ns}::foo")
    e = dc.explain(op, carrier("CPU"))
    assert not e.ok
    assert e.path == [D.AutogradCPU, D.CPU]  # the autograd fallback redispatches, then nothing
    assert e.steps[-1].label == "missing" and e.steps[-1].kind == "redispatch"
    assert e.error == f"DispatchError: Could not run '{lib.ns}::foo' with arguments from the 'CPU' backend."
    assert "has no kernel for CPU" in e.missing and "registered: Meta" in e.missing
    assert e.fix.startswith(f"Library('{lib.ns}', 'IMPL').impl('foo', kernel, 'CPU')")
    assert "smallest fix: Library(" in str(e)
    with pytest.raises(dc.DispatchError) as info:  # the real call agrees
        op(carrier("CPU"))
    assert str(info.value).startswith(e.error.removeprefix("DispatchError: "))
    lib.impl("foo", lambda x: x, "CPU")  # apply the fix: now explain says it runs
    assert dc.explain(op, carrier("CPU")).ok


def test_no_tensor_arguments_suggests_a_composite_or_backend_select(lib, monkeypatch):
    monkeypatch.setattr("dispatchcore.plugins.backends_pending", lambda: False)
    lib.define("make(int n, *, Device? device=None) -> Tensor")
    lib.impl("make", lambda n, *, device=None: n, "CPU")
    e = dc.explain(f"{lib.ns}::make", 3)
    assert not e.ok and e.key == D.Undefined
    assert e.error.startswith("DispatchError: There were no tensor arguments to this function")
    assert "'CompositeExplicitAutograd'" in e.fix and "BackendSelect" in e.fix


def test_meta_fallback_failure_suggests_a_meta_kernel(lib, carrier):
    calls: list[str] = []
    op = recording_op(lib, calls, "CPU")
    e = dc.explain(op, carrier("Meta"))
    assert not e.ok and e.final_key == D.Meta
    assert "attempted to run this operator with Meta tensors" in e.error
    assert e.fix == f"Library('{lib.ns}', 'IMPL').impl('foo', meta_kernel, 'Meta')"


def test_ambiguous_autogradother_is_a_failure_with_a_fix(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: "cia", "CompositeImplicitAutograd")
    lib.impl("foo", lambda x: "mkldnn", "MkldnnCPU")
    e = dc.explain(f"{lib.ns}::foo", carrier("MkldnnCPU"))
    assert e.key == D.AutogradOther and not e.ok
    assert e.entry[1] == "ambiguous autogradother"
    assert "'AutogradOther'" in e.fix


def test_bad_arguments_and_unknown_ops_raise_like_a_call(lib, carrier):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="missing value for argument 'x'"):
        dc.explain(f"{lib.ns}::foo")
    with pytest.raises(LookupError, match="nope::missing"):
        dc.explain("nope::missing", carrier("CPU"))
    with pytest.raises(LookupError, match="overloads"):
        explain_module.resolve_op("aten::add")


# --- what_if ----------------------------------------------------------------------------------
def k_cpu(x):
    return "CPU"


def k_cia(x):
    return "CIA"


def k_cea(x):
    return "CEA"


def k_autograd(x):
    return "Autograd"


@pytest.mark.parametrize(
    ("existing", "key", "kernel"),
    [
        ((), "CompositeImplicitAutograd", k_cia),
        ((("CPU", k_cpu),), "CompositeImplicitAutograd", k_cia),
        ((("CompositeImplicitAutograd", k_cia),), "CPU", k_cpu),
        ((("CompositeImplicitAutograd", k_cia),), "CompositeExplicitAutograd", k_cea),
        ((("CPU", k_cpu),), "Autograd", k_autograd),
        ((("CompositeExplicitAutograd", k_cea),), "Autograd", k_autograd),
        ((), "CPU", k_cpu),
    ],
)
def test_what_if_equals_the_table_a_real_registration_gives(lib, existing, key, kernel):
    lib.define("foo(Tensor x) -> Tensor")
    for k, fn in existing:
        lib.impl("foo", fn, k)
    op = dc.find_op(f"{lib.ns}::foo")
    real_before = real_entries(op)
    snapshot = registry_snapshot()
    diff = dc.what_if(op, add=[(key, kernel)])
    assert registry_snapshot() == snapshot  # computed on a copy
    same_table(diff.before, real_before)
    assert diff.before_table == op.dump_table()
    with dc.Library(lib.ns, "IMPL") as impl:
        impl.impl("foo", kernel, key)
        real_after = real_entries(op)
        same_table(diff.after, real_after)

    def entry(table, k):
        reg, label = table.get(k, (None, "missing"))
        return getattr(reg, "kernel", reg), label

    changed = [k for k in DUMP_ORDER if entry(real_before, k) != entry(real_after, k)]
    assert diff.changed_keys == changed and changed
    assert op.dump_table() == diff.before_table  # the IMPL library is gone again


def test_what_if_cpu_on_a_cia_op_moves_autogradcpu_to_the_fallback(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", k_cia, "CompositeImplicitAutograd")
    diff = dc.what_if(f"{lib.ns}::foo", add=[("CPU", k_cpu)])
    assert diff.added == []
    assert diff.removed == []
    changed = dict(diff.changed)
    cpu_line = [new for old, new in diff.changed if new.startswith("CPU:")][0]
    assert cpu_line == "CPU: what-if k_cpu [kernel]"
    autograd_cpu = [(old, new) for old, new in diff.changed if old.startswith("AutogradCPU:")][0]
    assert autograd_cpu[0].endswith("[math kernel]") and autograd_cpu[1].endswith("[backend fallback]")
    assert len(changed) == 2  # AutogradCUDA keeps the math kernel (test/test_dispatch.py)
    text = str(diff)
    assert "- AutogradCPU:" in text and "+ CPU: what-if k_cpu [kernel]" in text
    assert "nothing was registered" in text


def test_what_if_remove_reactivates_the_older_kernel(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", k_cpu, "CPU")
    op = dc.find_op(f"{lib.ns}::foo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the once-per-process override warning
        handle = lib.impl("foo", k_cia, "CPU")
    diff = dc.what_if(op, remove=["CPU"])
    assert diff.after[D.CPU][0].kernel is k_cpu
    handle.remove()
    same_table(diff.after, real_entries(op))


def test_what_if_adds_aliases_placeholders_and_fallthroughs(lib):
    lib.define("foo(Tensor x) -> Tensor")
    diff = dc.what_if(f"{lib.ns}::foo", add=[("Autograd", None), ("CPU", dc.fallthrough_kernel)])
    assert "CPU: fallthrough what-if fallthrough_kernel [kernel]" in diff.added
    assert "AutogradHIP: what-if placeholder [autograd kernel]" in diff.added  # had no fallback before
    assert bool(diff)
    assert not dc.what_if(f"{lib.ns}::foo")


def test_what_if_errors(lib):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="no kernel registered at CPU"):
        dc.what_if(f"{lib.ns}::foo", remove=["CPU"])
    with pytest.raises(dc.RegistrationError, match="could not parse dispatch key: NotAKey"):
        dc.what_if(f"{lib.ns}::foo", add=[("NotAKey", None)])
    with pytest.raises(LookupError):
        dc.what_if("nope::missing", add=[("CPU", None)])


# --- check_commutes ---------------------------------------------------------------------------
def test_distinct_keys_commute_in_every_order():
    snapshot = registry_snapshot()
    regs = [("CPU", k_cpu), ("Autograd", k_autograd), ("CompositeImplicitAutograd", k_cia),
            ("CompositeExplicitAutograd", k_cea), ("SparseCPU", None)]
    report = dc.check_commutes(regs)
    assert report.commutes and bool(report)
    assert report.orders_checked == report.total_orders == 120
    assert report.overridden_keys == ()
    assert "every order gives the same table" in str(report)
    assert registry_snapshot() == snapshot


def test_two_kernels_at_one_key_do_not_commute_by_design():
    report = dc.check_commutes([("CPU", k_cpu), ("CPU", k_cia)])
    assert not report.commutes
    assert report.overridden_keys == (D.CPU,)
    assert any("CPU: what-if k_cpu [kernel]" in d for d in report.differences)
    assert "newest registration wins" in str(report)


def test_an_operators_own_registrations_and_additions_on_top(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", k_cpu, "CPU")
    lib.impl("foo", k_cia, "CompositeImplicitAutograd")
    assert dc.check_commutes(f"{lib.ns}::foo").orders_checked == 2
    report = dc.check_commutes(f"{lib.ns}::foo", [("Autograd", k_autograd), ("Meta", None)])
    assert report.commutes and report.orders_checked == 2
    assert dc.check_commutes("aten::add.Tensor").commutes


def test_large_sets_are_sampled():
    keys = ["CPU", "Meta", "Autograd", "CompositeImplicitAutograd", "SparseCPU", "AutogradCPU", "XLA"]
    report = dc.check_commutes([(k, None) for k in keys], max_orders=30)
    assert report.total_orders == 5040 and report.orders_checked == 30
    assert report.commutes and "a sample of 5040" in str(report)


def test_the_checker_catches_an_incremental_rebuild_bug(monkeypatch):
    # Pretend registration recomputed only the registered key's own expansion (no Autograd<B>):
    # then CPU after CIA leaves AutogradCPU at the math kernel, CIA after CPU does not.
    monkeypatch.setattr(explain_module, "affected_keys", lambda key: dc.alias_expansion(key))
    report = dc.check_commutes([("CPU", k_cpu), ("CompositeImplicitAutograd", k_cia)])
    assert not report.commutes
    assert any(d.startswith("  - AutogradCPU:") or d.startswith("  + AutogradCPU:") for d in report.differences)
