"""`python -m dispatchcore`: the tour and the inspection commands."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dispatchcore.__main__ import main, print_keys, tour_guards, tour_operator, tour_roi_align


def test_tour_shows_table_and_call_path_through_autograd_to_cpu():
    lines: list[str] = []
    tour_operator(out=lines.append)
    text = "\n".join(lines)
    assert "CPU: registered at" in text and "[kernel]" in text
    assert "AutogradCPU: registered at" in text and "[autograd kernel]" in text
    assert "autograd kernel sees DispatchKeySet(CPU, AutogradCPU)" in text
    assert "redispatches with DispatchKeySet(CPU)" in text
    assert "result: 0.479426" in text


def test_tour_cleans_up_its_library():
    for _ in range(2):  # a second DEF of demo or torchvision would fail if the first leaked
        tour_operator(out=lambda *_: None)
        tour_roi_align(out=lambda *_: None)


def test_tour_guards_section_leaves_the_thread_local_sets_as_it_found_them():
    lines: list[str] = []
    tour_guards(out=lines.append)
    assert any(line.startswith("no_grad()") and "AutogradCPU" in line for line in lines)


def test_keys_lists_functionality_and_alias_keys_with_raw_bits():
    lines: list[str] = []
    print_keys(out=lines.append)
    text = "\n".join(lines)
    assert "ADInplaceOrView" in text and "0x400000000" in text
    assert "CompositeImplicitAutograd" in text and "alias" in text


def test_table_of_unknown_op_exits_2(capsys):
    assert main(["table", "nope::missing"]) == 2
    assert "nope::missing" in capsys.readouterr().err


def test_table_prints_dump_of_an_aten_op(capsys):
    assert main(["table", "aten::add.Tensor"]) == 0
    assert "ADInplaceOrView: fallthrough registered at" in capsys.readouterr().out


def test_module_runs_as_a_program():
    result = subprocess.run([sys.executable, "-m", "dispatchcore", "keys"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0
    assert "AutogradFunctionality" in result.stdout


@pytest.mark.parametrize("command", [[], ["run"], ["trace"], ["explain"], ["keys"], ["table"]])
def test_help_texts_carry_no_rst_or_markdown_markup(command):
    proc = subprocess.run([sys.executable, "-m", "dispatchcore", *command, "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "``" not in proc.stdout and "`torch" not in proc.stdout, proc.stdout


def test_keys_decodes_a_raw_key_set_value_into_its_keys(capsys):
    assert main(["keys", "0x9400010001"]) == 0
    out = capsys.readouterr().out
    assert "0x9400010001 = DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)" in out
    assert "backend bits: CPUBit" in out
    assert "functionality bits: AutocastCPU, AutogradFunctionality, ADInplaceOrView, Dense" in out
    assert "runtime keys, highest first: AutocastCPU, AutogradCPU, ADInplaceOrView, CPU" in out
    assert "where a call on this set starts: AutocastCPU" in out


def test_keys_mixes_names_and_values_and_refuses_a_value_outside_64_bits(capsys):
    assert main(["keys", "AutogradCPU", str(0x1000000001)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("AutogradCPU = 134") and "= DispatchKeySet(AutogradCPU)" in out
    assert main(["keys", hex(1 << 64)]) == 2
    assert "is not a 64-bit key-set value" in capsys.readouterr().err


def test_keys_format_svg_draws_the_layout_or_one_key_sets_strip(capsys):
    import xml.etree.ElementTree as ET

    assert main(["keys", "--format", "svg"]) == 0
    layout = ET.fromstring(capsys.readouterr().out)
    assert "dc-keyset-layout" in layout.get("class", "")
    assert main(["keys", "0x9400010001", "-f", "svg"]) == 0
    strip = ET.fromstring(capsys.readouterr().out)
    title = strip.find("{http://www.w3.org/2000/svg}title")
    assert title is not None and title.text.startswith("DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU")
    assert main(["keys", "AutogradCPU", "--format", "svg"]) == 2
    assert "one raw key-set value" in capsys.readouterr().err
    assert main(["keys", hex(1 << 64), "--format", "svg"]) == 2
    assert "is not a 64-bit key-set value" in capsys.readouterr().err
