"""dispatchcore.compat: the ``torch`` import hook, its errors, install/uninstall, and the run observers.

No real torch needed: a fake ``torch`` module stands in where a test needs one already imported.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings

import pytest

import dispatchcore as dc
import dispatchcore.nn.functional as dc_F
from dispatchcore import compat


def _torch_entries() -> dict[str, object]:
    return {name: module for name, module in sys.modules.items() if name == "torch" or name.startswith("torch.")}


# A real torch imported by other tests of the session is hidden while installed (and restored).
pytestmark = pytest.mark.filterwarnings("ignore::dispatchcore.compat.RealTorchShadowedWarning")


@pytest.fixture
def hooked():
    """The hook installed for one test; afterwards sys.modules' torch entries are as before."""
    before = _torch_entries()
    with compat.install():
        yield
    assert _torch_entries() == before


def _run(source: str, filename: str = "script.py") -> dict[str, object]:
    """Run ``source`` as a program file would (its frames carry ``filename``); its globals."""
    namespace: dict[str, object] = {"__name__": "__program__"}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the test's own program text
    return namespace


# --- resolution -------------------------------------------------------------------------------------
def test_import_torch_gives_a_view_whose_attributes_are_dispatchcores(hooked):
    ns = _run("import torch\nx = torch.ones(2) + 1\n")
    torch = ns["torch"]
    assert torch.__name__ == "torch" and sys.modules["torch"] is torch
    assert torch.Tensor is dc.Tensor and torch.float32 is dc.float32 and torch.add is dc.add
    assert isinstance(ns["x"], dc.Tensor) and ns["x"].tolist() == [2.0, 2.0]


def test_every_import_form_of_a_submodule_resolves_to_the_dispatchcore_module_of_that_name(hooked):
    ns = _run("import torch\n"
              "import torch.nn.functional as F\n"
              "from torch import nn\n"
              "from torch.nn import functional\n"
              "import torch.autograd\n"
              "from torch.autograd import Function\n"
              "from torch.library import Library\n")
    torch, F = ns["torch"], ns["F"]
    assert F is ns["functional"] is ns["nn"].functional is torch.nn.functional is sys.modules["torch.nn.functional"]
    assert F.__name__ == "torch.nn.functional" and F.relu is dc_F.relu
    assert ns["nn"] is sys.modules["torch.nn"] is torch.nn
    assert ns["Function"] is dc.autograd.Function and ns["Library"] is dc.Library


def test_the_mapping_is_by_name_and_imports_a_submodule_on_first_use(hooked, tmp_path, monkeypatch):
    (tmp_path / "zz_compat_probe.py").write_text("VALUE = 42\n")
    monkeypatch.setattr(dc, "__path__", [*dc.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "dispatchcore.zz_compat_probe", raising=False)
    try:
        ns = _run("import torch\nvalue = torch.zz_compat_probe.VALUE\nimport torch.zz_compat_probe as probe\n")
        assert ns["value"] == 42
        assert ns["probe"] is sys.modules["torch.zz_compat_probe"]
        assert ns["probe"].__name__ == "torch.zz_compat_probe"
        assert sys.modules["dispatchcore.zz_compat_probe"].VALUE == 42
    finally:
        sys.modules.pop("dispatchcore.zz_compat_probe", None)
        if hasattr(dc, "zz_compat_probe"):
            delattr(dc, "zz_compat_probe")


def test_attributes_the_program_sets_stay_on_the_view(hooked):
    ns = _run("import torch\ntorch.program_flag = 1\ntorch.nn.functional.relu = None\n")
    assert ns["torch"].program_flag == 1
    assert not hasattr(dc, "program_flag")
    assert dc.nn.functional.relu is dc_F.relu and dc_F.relu is not None


# --- errors naming the missing API -----------------------------------------------------------------
def test_importing_a_module_dispatchcore_lacks_names_it_and_the_line():
    with compat.install(), pytest.raises(compat.UnmodelledModuleError) as info:
        _run("import torch\nimport torch.fft\n")
    assert str(info.value) == "dispatchcore does not model torch.fft (imported by script.py line 2)"
    assert info.value.api == "torch.fft" and info.value.where == "script.py line 2"
    assert isinstance(info.value, ImportError)


@pytest.mark.parametrize("statement", ["from torch import fft", "from torch import Generator_not_modelled"])
def test_from_import_of_a_missing_name_is_not_turned_into_cannot_import_name(hooked, statement):
    with pytest.raises(compat.UnmodelledModuleError, match=r"^dispatchcore does not model torch\.\w+ \(imported by "
                                                           r"prog\.py line 1\)$"):
        _run(statement + "\n", "prog.py")


def test_a_missing_attribute_names_the_torch_api_and_the_line(hooked):
    with pytest.raises(compat.UnmodelledAttributeError) as info:
        _run("import torch\n\ny = torch.nn.functional.not_an_api_anywhere(1)\n")
    assert str(info.value) == ("dispatchcore does not model torch.nn.functional.not_an_api_anywhere "
                               "(used by script.py line 3)")
    assert isinstance(info.value, AttributeError) and info.value.name == "not_an_api_anywhere"


def test_hasattr_and_getattr_defaults_still_work_on_missing_apis(hooked):
    torch = importlib.import_module("torch")
    assert not hasattr(torch, "compile_not_modelled")
    assert getattr(torch.nn, "not_there", "default") == "default"


def test_protocol_probes_get_a_plain_attribute_error(hooked):
    torch = importlib.import_module("torch")
    with pytest.raises(AttributeError) as info:
        torch.__wrapped__  # noqa: B018 - the probe under test
    assert not isinstance(info.value, compat.UnmodelledAPIError)


def test_a_dispatchcore_name_with_another_meaning_in_torch_is_refused(hooked):
    with pytest.raises(compat.UnmodelledAttributeError, match="matrix trace"):
        _run("import torch\ntorch.trace(torch.ones(2, 2))\n")
    with pytest.raises(compat.UnmodelledModuleError, match="matrix trace"):
        _run("from torch import trace\n")


# --- install / uninstall ---------------------------------------------------------------------------
def test_install_is_idempotent_and_uninstall_restores_meta_path_and_modules(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    for name in [n for n in sys.modules if n.startswith("torch.")]:
        monkeypatch.delitem(sys.modules, name)
    meta_path = list(sys.meta_path)
    outer = compat.install()
    try:
        inner = compat.install()
        assert outer.owner and not inner.owner
        assert len(sys.meta_path) == len(meta_path) + 1 and compat.is_installed()
        with inner:
            importlib.import_module("torch.nn.functional")
        assert compat.is_installed() and "torch.nn.functional" in sys.modules  # the nested exit kept it
    finally:
        compat.uninstall()
    compat.uninstall()  # a second uninstall changes nothing
    assert sys.meta_path == meta_path and not compat.is_installed()
    assert _torch_entries() == {}


def test_install_hides_an_imported_torch_and_uninstall_restores_it(monkeypatch):
    real, real_nn = types.ModuleType("torch"), types.ModuleType("torch.nn")
    for name in [n for n in sys.modules if n.startswith("torch.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "torch", real)
    monkeypatch.setitem(sys.modules, "torch.nn", real_nn)
    with pytest.warns(compat.RealTorchShadowedWarning, match="real torch was already imported"):
        installation = compat.install()
    with installation:
        torch = importlib.import_module("torch")
        assert torch is not real and torch.Tensor is dc.Tensor
        assert importlib.import_module("torch.nn") is not real_nn
    assert sys.modules["torch"] is real and sys.modules["torch.nn"] is real_nn
    assert _torch_entries() == {"torch": real, "torch.nn": real_nn}


def test_an_install_stopped_by_its_warning_as_an_error_leaves_no_hook(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    meta_path = list(sys.meta_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", compat.RealTorchShadowedWarning)
        with pytest.raises(compat.RealTorchShadowedWarning):
            compat.install()
    assert not compat.is_installed() and sys.meta_path == meta_path


def test_views_a_program_kept_still_work_after_uninstall():
    with compat.install():
        torch = importlib.import_module("torch")
    assert torch.ones(1).tolist() == [1.0]


# --- observers -------------------------------------------------------------------------------------
def test_op_counter_counts_calls_and_the_key_each_kernel_ran_at():
    dc.load_backends()
    x = dc.ones(2, requires_grad=True)
    with compat.OpCounter() as counts:
        (x * x).sum()
        x + 1
    assert counts.calls["aten::mul.Tensor"] == 1 and counts.calls["aten::sum"] == 1
    assert counts.kernels[("aten::mul.Tensor", "AutogradCPU")] == 1
    assert counts.kernels[("aten::mul.Tensor", "CPU")] == 1
    table = counts.table().splitlines()
    header = table[1].split()
    assert header[:2] == ["operator", "calls"]
    assert header.index("AutogradCPU") < header.index("CPU")  # higher priority first
    mul = next(line.split() for line in table if line.startswith("aten::mul.Tensor"))
    assert mul[1] == "1" and mul[header.index("AutogradCPU")] == "1"


def test_op_counter_with_nothing_run_says_so():
    with compat.OpCounter() as counts:
        pass
    assert counts.table() == "no operator ran"


def test_call_window_records_only_the_top_level_calls_in_the_window():
    dc.load_backends()
    x = dc.ones(2, requires_grad=True)
    with compat.CallWindow(calls=2, skip=1) as window:
        x + 1
        x * 2
        x.sum()
        x - 1
    assert [h.op for h in window.trace.roots] == ["aten::mul.Tensor", "aten::sum"]
    assert [h.key.name for h in window.trace.roots[0].walk()] == ["AutogradCPU", "CPU"]
    assert all(e.hop is None or e.hop in set(window.trace.hops()) for e in window.trace.events)


def test_a_call_window_never_reached_is_an_empty_trace():
    x = dc.ones(2)
    with compat.CallWindow(calls=3, skip=5) as window:
        x + 1
    assert window.trace.roots == [] and window.trace.events == []


def test_a_call_window_needs_a_positive_size():
    with pytest.raises(ValueError, match="calls >= 1"):
        compat.CallWindow(calls=0)
