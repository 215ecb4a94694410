"""``python -m dispatchcore``: a guided tour of the dispatcher, and small inspection commands.

``tour`` (the default) takes a newcomer through five steps: (1) an operator, its computed table
and one call's path through AutogradCPU to CPU; (2) ``MyReLU``, a custom autograd ``Function``;
(3) torchvision's ``roi_align`` with a ``Function`` registered as its Autograd kernel, its table
and the hops of one call; (4) what each guard does to the thread-local key sets; (5) a tiny MLP
trained with SGD. The examples live in ``dispatchcore.examples``.

The other commands inspect the dispatcher: ``keys [KEY]`` (the key layout: bits, priorities,
aliases), ``table OP`` and ``state OP`` (an operator's dumps), ``explain OP --arg ...`` (why a call
dispatches where it does, or fails, without running it), ``what-if OP --add KEY`` and ``commutes
OP`` (table diffs and order checks on a copy of the registry), ``trace SCRIPT.py`` (run a script
and render its dispatch hops), ``run SCRIPT.py`` (an unchanged PyTorch script with ``torch``
resolved to dispatchcore: ``dispatchcore.compat``) and ``guards`` (the bits each guard and mode
flips). Exit status: 0 on success, 1 on failure, 2 for usage errors (unknown operator, key or
argument).
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ._library import Library, fallthrough_kernel
from .cuda import CudaUnavailableError
from .dispatcher import dump_state, dump_table, find_op
from .explain import bit_names, check_commutes, explain, resolve_op, what_if
from .keys import (
    BackendComponent,
    DispatchKey,
    alias_expansion,
    is_alias_key,
    is_per_backend_functionality,
    to_backend_component,
    to_functionality_key,
)
from .keyset import DEFAULT_EXCLUDED, DEFAULT_INCLUDED, DispatchKeySet, key_bits, tensor_keyset
from .tls import AutoDispatchBelowADInplaceOrView, tls_local_exclude_set, tls_local_include_set

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _short(text: str) -> str:
    """Registration locations relative to the directory that holds the package."""
    return text.replace(_ROOT, "")


def _table_rows(op: Any, keys: tuple[str, ...]) -> list[str]:
    return ["   " + _short(line) for line in dump_table(op).splitlines() if line.split(":")[0] in keys]


class _DemoTensor:
    """A stand-in dispatch argument for the tour: just a key set (Note [Dispatch argument protocol])."""

    __slots__ = ("_key_bits", "value")

    def __init__(self, value: float, device: str = "CPU") -> None:
        self._key_bits = int(tensor_keyset(device))
        self.value = value


def _heading(out: Callable[[str], Any], number: int, title: str) -> None:
    out(f"\n== {number}/5  {title} " + "=" * max(0, 72 - len(title)))


def tour(out: Callable[[str], Any] = print) -> None:
    """The guided tour: an operator and its table, MyReLU, roi_align, guards, a tiny MLP."""
    tour_operator(out)
    tour_my_relu(out)
    tour_roi_align(out)
    tour_guards(out)
    tour_mlp(out)
    out("\nNext: docs/lessons/seed-examples.md; `python -m dispatchcore table aten::add.Tensor`.")


def tour_operator(out: Callable[[str], Any] = print) -> None:
    """Define ``demo::mysin``, register two kernels, show the table and one call's path."""
    import math

    _heading(out, 1, "An operator, its computed table, and one call")
    with Library("demo", "DEF") as lib:
        lib.define("mysin(Tensor x) -> Tensor")

        def mysin_cpu(x):
            out(f"    [CPU]          kernel computes sin({x.value}); exclude set now "
                f"{hex(int(tls_local_exclude_set()))} (+ADInplaceOrView and the Autograd keys)")
            return _DemoTensor(math.sin(x.value))

        def mysin_autograd(keyset, x):
            out(f"    [AutogradCPU]  autograd kernel sees {keyset}")
            below = keyset & DispatchKeySet.full_after(DispatchKey.AutogradCPU)
            with AutoDispatchBelowADInplaceOrView():
                out(f"    [AutogradCPU]  masks itself off and redispatches with {below}")
                return op.redispatch(below, x)

        lib.impl("mysin", mysin_cpu, "CPU")
        lib.impl("mysin", mysin_autograd, "Autograd", with_keyset=True)
        op = find_op("demo::mysin")

        out("An operator is a schema plus kernels, one per dispatch key (`dump_state`):\n")
        out("   " + _short(dump_state(op)).rstrip("\n").replace("\n", "\n   "))
        out("\nRegistration precomputes a table: one kernel per runtime key, and the rule that chose it")
        out("(a few rows; demo::mysin lives only in this tour: `python -m dispatchcore table aten::sin` shows a")
        out("whole table, and `--import yourmodule` or `--file yourscript.py` loads your own operators first):\n")
        for line in _table_rows(op, ("CPU", "Meta", "BackendSelect", "ADInplaceOrView", "AutogradCPU",
                                     "AutogradCUDA", "AutocastCPU")):
            out(line)
        x = _DemoTensor(0.5)
        keys = DispatchKeySet.from_raw(x._key_bits)
        out(f"\nA CPU tensor carries {keys}.")
        out(f"The thread-local include set adds {tls_local_include_set()},")
        out(f"the exclude set ({hex(int(tls_local_exclude_set()))}) removes the 10 Autocast keys,")
        out("fallthrough keys (BackendSelect, ADInplaceOrView here) drop out, and the highest key wins:\n")
        result = op(x)
        out(f"\n   result: {result.value:.6f}")


def tour_my_relu(out: Callable[[str], Any] = print) -> None:
    """MyReLU: a custom autograd Function, applied and differentiated."""
    from .examples import my_relu

    _heading(out, 2, "MyReLU: a custom autograd Function")
    out("forward saves its input (ctx.save_for_backward) and returns input.clamp_min(0);")
    out("backward returns grad_output * (input > 0). MyReLU.apply(x) records a MyReLUBackward node:\n")
    my_relu.demo(lambda line: out("   " + line))


def tour_roi_align(out: Callable[[str], Any] = print) -> None:
    """torchvision::roi_align: its table and the hops of one forward and backward call."""
    from . import dispatch_keys, manual_seed, ops, rand, tensor
    from .examples import roi_align as ra

    _heading(out, 3, "roi_align: a Function registered as an operator's Autograd kernel")
    lib = ra.define()
    try:
        op = ops.torchvision.roi_align.default
        out("torchvision::roi_align has a numpy kernel at CPU and ROIAlignFunction at the Autograd alias:\n")
        for line in _table_rows(op, ("CPU", "BackendSelect", "ADInplaceOrView", "AutogradCPU", "AutocastCPU")):
            out(line)
        manual_seed(0)
        x = rand(1, 2, 4, 4, requires_grad=True)
        rois = tensor([[0.0, 0.5, 0.5, 2.5, 3.0]])
        ks = ra.dispatch_keyset(op, x, rois)
        out(f"\nx and rois carry {dispatch_keys(x)}. BackendSelect and")
        out("ADInplaceOrView are fallthroughs for roi_align (not a factory, view or in-place op) and")
        out(f"Autocast is excluded, so roi_align(x, rois, ...) dispatches on {ks}:\n")
        with ra.traced(lambda text: out("    " + text.replace("\n", "\n    "))):
            y = ra.roi_align(x, rois, output_size=2, sampling_ratio=2, aligned=True)
            out(f"    [AutogradCPU]  the guard exits (exclude {hex(int(tls_local_exclude_set()))} again); "
                f"y.grad_fn = {y.grad_fn.name()}")
            out("\n   y.sum().backward():\n")
            y.sum().backward()
        assert x.grad is not None  # backward() reached x
        out(f"\n   x.grad has shape {list(x.grad.shape)} and sums to {x.grad.sum().item():.4f} "
            "(2 channels x 4 bins, each passing on its gradient of 1)")
        out("   python docs/examples/roi_align.py adds a numerical gradient check and shows what goes wrong")
        out("   without the guard.")
    finally:
        lib.destroy()


def tour_guards(out: Callable[[str], Any] = print) -> None:
    """The effect of no_grad, inference_mode and the two below-autograd guards on the TLS sets."""
    from . import AutoDispatchBelowAutograd, inference_mode, is_grad_enabled, no_grad, ops, tensor
    from .examples.roi_align import dispatch_keyset

    _heading(out, 4, "Guards are bit flips in the thread-local key sets")
    mul = ops.aten.mul.Tensor
    x = tensor([1.0, 2.0], requires_grad=True)
    hidden = key_bits(DispatchKey.AutogradFunctionality)
    out(f"{'guard':<36}{'grad':<6}{'include':<13}{'exclude':<17}{'x * x runs':<13}records")
    rows: list[tuple[str, Any]] = [
        ("(none)", contextlib.nullcontext()), ("no_grad()", no_grad()), ("inference_mode()", inference_mode()),
        ("AutoDispatchBelowAutograd()", AutoDispatchBelowAutograd()),
        ("AutoDispatchBelowADInplaceOrView()", AutoDispatchBelowADInplaceOrView()),
    ]
    notes = []
    for name, guard in rows:
        with guard:
            include, exclude = tls_local_include_set(), tls_local_exclude_set()
            key = mul.key_for(dispatch_keyset(mul, x, x)).name
            records = (x * x).grad_fn is not None
            out(f"{name:<36}{'on' if is_grad_enabled() else 'off':<6}{hex(int(include)):<13}"
                f"{hex(int(exclude)):<17}{key:<13}{'yes' if records else 'no'}")
        added = int(exclude) & ~DEFAULT_EXCLUDED
        if name != "(none)":
            change = []
            if not include.has(DispatchKey.ADInplaceOrView):
                change.append(f"include  {include}")
            if added:
                star = " + AutogradFunctionality*" if added & hidden else ""
                change.append(f"exclude += {DispatchKeySet.from_raw(added)}{star}")
            if not change:
                change.append("key sets unchanged: grad mode is a flag, not a key")
            notes.append(f"   {name + ':':<36}" + f"\n   {'':<36}".join(change))
    out("")
    for note in notes:
        out(note)
    out(f"   * AutogradFunctionality ({hidden:#x}) has no backend bit, so printing a key set hides it;")
    out("     excluding it turns off every Autograd<Backend> key at once (c10/core/impl/LocalDispatchKeySet.h).")
    out("Only the key-set guards skip the Autograd kernel; under no_grad it runs and records nothing.")


def tour_mlp(out: Callable[[str], Any] = print, steps: int = 60) -> list[float]:
    """Train the tiny MLP and show its falling loss."""
    from .examples import tiny_mlp

    _heading(out, 5, "A tiny MLP trained with SGD: every op dispatches")
    out("relu(x @ W1 + b1) @ W2 + b2, aten::mse_loss, loss.backward(), p -= lr * p.grad under no_grad:\n")
    losses = tiny_mlp.train(steps=steps, every=10, out=out)
    out(f"\n   the loss fell from {losses[0]:.4f} to {losses[-1]:.4f}")
    return losses


# --- keys -------------------------------------------------------------------------------------
def print_keys(out: Callable[[str], Any] = print) -> None:
    """The key layout: backend bits, then every functionality and alias key with bit and priority."""
    out("Backend components: raw bits 0..15. Among per-backend keys the highest backend bit wins")
    out("(Meta above PrivateUse1 ... above CPU).\n")
    out(f"{'bit':>5}  {'component':<20} {'raw bits':>20}")
    for component in BackendComponent:
        if component:
            out(f"{int(component) - 1:>5}  {component.name:<20} {key_bits(component):#20x}")
    out("\nFunctionality keys: value k has raw bit 15 + k; a higher value is a higher priority (prio 1 is")
    out("the highest). Alias keys have no bits: they are registration-only.\n")
    functionality = [k for k in DispatchKey if 0 < int(k) < 47]
    rank = {k: len(functionality) - i for i, k in enumerate(functionality)}
    out(f"{'value':>5}  {'bit':>3}  {'prio':>4}  {'key':<40} {'raw bits':>20}  kind")
    for key in DispatchKey:
        k = int(key)
        if k > 47 and not is_alias_key(key) and not key.name.startswith("StartOf"):
            continue
        bits = key_bits(key)
        bit = str(bits.bit_length() - 1) if bits else "-"
        prio = str(rank[key]) if key in rank else "-"
        if is_alias_key(key):
            kind = f"alias (registration only): {len(alias_expansion(key))} runtime keys"
        elif is_per_backend_functionality(key):
            kind = "per-backend functionality: runtime keys " + key.name.replace("Functionality", "") + "<Backend>"
        elif k == 0:
            kind = "no bit; its own table slot"
        elif key.name.startswith("StartOf"):
            kind = "marker: the runtime keys of this block follow, one per backend"
        else:
            kind = "functionality"
        out(f"{k:>5}  {bit:>3}  {prio:>4}  {key.name:<40} {bits:#20x}  {kind}")
    out("\n`dispatchcore keys AutogradCPU` describes one key (runtime keys included).")


def _keys_svg(names: list[str]) -> int:
    """``keys --format svg``: the key-set layout, or the bit strip of one raw key-set value."""
    from .notebook import keyset_layout_svg, keyset_svg

    if not names:
        print(keyset_layout_svg())
        return 0
    raw = _raw_value(names[0]) if len(names) == 1 else None
    if raw is None:
        raise CliError("--format svg draws the layout (no KEY) or one raw key-set value",
                       "e.g. `dispatchcore keys 0x9400010001 --format svg`")
    if raw < 0 or raw >= 1 << 64:
        raise CliError(f"{raw:#x} is not a 64-bit key-set value",
                       "a raw value is what hex(int(keyset)) prints, e.g. 0x9400010001")
    print(keyset_svg(raw))
    return 0


def describe_raw(value: int, out: Callable[[str], Any] = print) -> None:
    """A raw key-set value (``0x9400010001``, what ``hex(int(ks))`` prints): its keys, highest first.

    Each set bit is named, the backend bits (0-15) apart from the functionality bits above them,
    then the runtime keys the set stands for, as ``DispatchKeySet`` iterates them.
    """
    if value < 0 or value >= 1 << 64:
        raise CliError(f"{value:#x} is not a 64-bit key-set value",
                       "a raw value is what hex(int(keyset)) prints, e.g. 0x9400010001")
    ks = DispatchKeySet._from_bits(value)
    out(f"{value:#x} = {ks!r}")
    backends = [c.name for c in BackendComponent if c and value & key_bits(c)]
    out(f"  backend bits: {', '.join(backends) or 'none'}")
    functionality = [k.name for k in DispatchKey if 0 < int(k) < 47 and value & key_bits(k)]
    out(f"  functionality bits: {', '.join(reversed(functionality)) or 'none'}")
    unknown = value & ~int(DispatchKeySet._from_bits(value))
    if unknown:
        out(f"  bits no key names: {unknown:#x}")
    keys = list(ks)[::-1]  # a key set iterates from its lowest key up, as torch's does
    if keys:
        out(f"  runtime keys, highest first: {', '.join(k.name for k in keys)}")
        out(f"  the highest, where a call on this set starts: {ks.highest_priority_key().name} "
            "(then below it, past fallthroughs)")


def _raw_value(text: str) -> int | None:
    """``text`` as a raw key-set value (hex or decimal), or None when it is a key name."""
    try:
        return int(text, 0)
    except ValueError:
        return None


def describe_key(name: str, out: Callable[[str], Any] = print) -> None:
    """One key: its value, raw bits, functionality and backend, priority, and the aliases covering it."""
    try:
        key = DispatchKey.parse(name)
    except ValueError:
        raise CliError(f"could not parse dispatch key: {name}",
                       "`dispatchcore keys` lists the key names; they are case-sensitive (e.g. AutogradCPU)."
                       ) from None
    bits = key_bits(key)
    out(f"{key.name} = {int(key)}")
    if is_alias_key(key):
        expansion = sorted(alias_expansion(key), key=int)
        out(f"  alias key: registration only, never in a key set; covers {len(expansion)} runtime keys:")
        out("  " + ", ".join(k.name for k in expansion))
        return
    functionality, backend = to_functionality_key(key), to_backend_component(key)
    positions = [str(b) for b in range(bits.bit_length()) if bits >> b & 1]
    plural = "s" if len(positions) > 1 else ""
    out(f"  raw bits: {bits:#x} (bit{plural} {', '.join(positions) or 'none'})")
    if backend:
        out(f"  runtime key: functionality {functionality.name} (value {int(functionality)}) + backend "
            f"{backend.name}; it ranks by its functionality, then by the highest backend bit")
    elif is_per_backend_functionality(key):
        out("  per-backend functionality: in a key set it stands for one runtime key per backend bit present")
    else:
        out(f"  functionality key: priority by value ({int(key)}; higher wins)")
    aliases = [a.name for a in DispatchKey if is_alias_key(a) and key in alias_expansion(a)
               and a.name == DispatchKey(int(a)).name]
    out(f"  covered by the aliases: {', '.join(aliases) or 'none'}")


# --- user code: registrations to load before a command --------------------------------------------
def _user_code_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="import MODULE first, so that its registrations are in place (repeatable)")
    p.add_argument("--file", dest="files", action="append", default=[], metavar="SCRIPT",
                   help="run SCRIPT first (not as __main__), so that its registrations are in place (repeatable)")


_USER_CODE: list[Any] = []  # the namespaces of --file scripts: their Library objects stay alive


def _load_user_code(imports: Sequence[str], files: Sequence[str]) -> None:
    """Import the ``--import`` modules, then run the ``--file`` scripts, keeping what they registered."""
    import importlib
    import runpy

    for name in imports:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            raise CliError(f"--import {name}: {e}", "give a module importable from here (the current "
                                                    "directory is on the path), e.g. --import myops") from None
    for path in files:
        if not os.path.isfile(path):
            raise CliError(f"--file {path}: no such file", "give the path of a Python script")
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its neighbours, as for ``python SCRIPT``
        _USER_CODE.append(runpy.run_path(path, run_name="__dispatchcore_file__"))


# --- table / state ------------------------------------------------------------------------------
class CliError(Exception):
    """A failure the command line reports as ``dispatchcore: error: ...`` plus a hint, with an exit code."""

    def __init__(self, message: str, hint: str = "", code: int = 2) -> None:
        super().__init__(message)
        self.hint = hint
        self.code = code


def _resolve(name: str, args: tuple | None = None, kwargs: dict | None = None) -> Any:
    try:
        return resolve_op(name, args, kwargs)
    except LookupError as e:
        raise CliError(str(e), "operator names are ns::name.overload, e.g. aten::add.Tensor (or aten.add.Tensor); "
                               "the overload may be left out when there is only one.") from None


def _dump(kind: str, name: str, fmt: str = "text") -> int:
    op = _resolve(name)
    if kind == "table" and fmt != "text":
        print(_table_html(op) if fmt == "html" else json.dumps(_table_json(op), indent=2))
        return 0
    print(dump_table(op) if kind == "table" else dump_state(op), end="")
    return 0


def _page(title: str, fragment: str) -> str:
    """A notebook picture (``dispatchcore.notebook``) as a standalone page."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"</head><body>{fragment}</body></html>")


def _table_html(op: Any) -> str:
    from .notebook import table_html

    return _page(f"{op.qualname}: dispatch table", table_html(op))


def _table_json(op: Any) -> dict[str, Any]:
    """The computed table as data: one entry per runtime key with a kernel, in the dump's order."""
    from .dumps import DUMP_ORDER
    from .plugins import load_backends

    load_backends()
    rows = []
    for key in DUMP_ORDER:
        reg, label = op.table_entry(key)
        if reg is not None:
            rows.append({"key": key.name, "label": label, "fallthrough": bool(getattr(reg, "fallthrough", False)),
                         "kernel": _short(reg.debug)})
    return {"op": op.qualname, "schema": str(op.schema) if op.schema is not None else None, "table": rows}


# --- explain ------------------------------------------------------------------------------------
VALUE_HELP = """\
argument values (--arg VALUE, --kwarg NAME=VALUE, or --args "VALUE ... NAME=VALUE"):
  DEVICE:SHAPE[:DTYPE][:grad][:inference]   a tensor, e.g. cpu:2x3:float32  meta:3  cpu:2x3:grad
                                            (SHAPE 2x3 or 2,3; empty or 'scalar' for 0-dim; DTYPE float32,
                                            int64, ...; grad: requires_grad; inference: made in inference_mode)
  3   2.5   true   false   none             int, float, bool, None
  [V, V, ...]                               a list (e.g. [2,3] for a size, [cpu:2, cpu:3] for a Tensor[])
  'text'  or  str:text                      a string
  dtype:float64   device:meta               a dtype or a device object"""
GUARD_HELP = """\
guards (--guard NAME, repeatable, entered in order before explaining):
  no_grad  enable_grad  inference_mode  inference_mode(False)  below_autograd (AutoDispatchBelowAutograd)
  below_adinplaceorview (AutoDispatchBelowADInplaceOrView)  skip_functionalize  disable_torch_dispatch
  exclude:KEY[,KEY]  include:KEY[,KEY]  autocast[:DEVICE] (when dispatchcore.autocast exists)"""
ARG_GRAMMAR = (VALUE_HELP + "\n" + GUARD_HELP + "\nexit status: 0 when the call would run, 1 when it would fail, "
               "2 for a bad operator, key, guard or argument.")


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets and quotes."""
    items: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    items.append("".join(current).strip())
    return items


def _dtype(name: str) -> Any:
    import dispatchcore

    from .dtypes import dtype

    value = getattr(dispatchcore, name.strip(), None)
    if not isinstance(value, dtype):
        raise CliError(f"unknown dtype {name!r}", "use a dispatchcore dtype name: float32, float64, int64, bool, ...")
    return value


def parse_value(text: str) -> Any:
    """One argument of the ``explain`` mini-language (see ``ARG_GRAMMAR``); tensors are created."""
    t = text.strip()
    low = t.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return [parse_value(item) for item in _split_top(inner)] if inner else []
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    for convert in (int, float):
        try:
            return convert(t)
        except ValueError:
            pass
    head, sep, rest = t.partition(":")
    if sep and head == "str":
        return rest
    if sep and head == "dtype":
        return _dtype(rest)
    if sep and head == "device":
        from .dtypes import device

        return device(rest)
    if sep and head.isidentifier():
        return _make_tensor(head, rest, text)
    raise CliError(f"cannot parse the argument {text!r}", VALUE_HELP)


def _make_tensor(device_type: str, spec: str, text: str) -> Any:
    from . import empty, inference_mode

    parts = spec.split(":")
    shape_text = parts[0].strip()
    dtype, grad, inference = None, False, False
    for part in parts[1:]:
        flag = part.strip()
        if flag in ("grad", "requires_grad"):
            grad = True
        elif flag == "inference":
            inference = True
        else:
            dtype = _dtype(flag)
    if shape_text in ("", "scalar", "()"):
        shape: list[int] = []
    else:
        try:
            shape = [int(s) for s in shape_text.replace(",", "x").split("x")]
        except ValueError:
            raise CliError(f"bad tensor shape {shape_text!r} in {text!r}",
                           "write shapes as 2x3 (or 2,3); an empty shape or 'scalar' is a 0-dim tensor") from None
    try:
        with inference_mode() if inference else contextlib.nullcontext():
            return empty(tuple(shape), dtype=dtype, device=device_type, requires_grad=grad)
    except CudaUnavailableError:  # explain runs nothing: a stand-in with CUDA's keys will do
        return _cuda_stand_in(tuple(shape), dtype, grad, inference)
    except RuntimeError as e:
        from .tensor import _DEVICES

        raise CliError(f"cannot make the tensor {text!r}: {e}",
                       f"devices with a backend: {', '.join(sorted(_DEVICES))}; requires_grad needs a floating "
                       "dtype") from None


def _cuda_stand_in(shape: tuple[int, ...], dtype: Any, grad: bool, inference: bool) -> Any:
    """A CUDA tensor without pycuda, for ``explain``: meta-like data under CUDA's device and key set.

    The data has shape, strides and dtype but no elements, so the explanation is the one a GPU
    would get while nothing can run.
    """
    from . import empty
    from .dtypes import get_default_dtype
    from .tensor import wrap

    dt = dtype if dtype is not None else get_default_dtype()
    meta = empty(shape, dtype=dt, device="meta")  # the Meta backend makes the element-free data
    t = wrap(meta._data, "cuda:0", _inference=inference)
    if grad:
        if not dt.is_floating_point and not dt.is_complex:
            raise CliError(f"cannot make a tensor of {dt} require grad", "requires_grad needs a floating dtype")
        t._requires_grad = True
    _CUDA_STAND_INS.append(t)
    return t


_CUDA_STAND_INS: list[Any] = []  # the stand-ins this run made: the explanation notes them


def _guard(name: str) -> Any:
    from . import (
        AutoDispatchBelowAutograd,
        AutoDispatchSkipFunctionalize,
        DisableTorchDispatch,
        ExcludeDispatchKeyGuard,
        IncludeDispatchKeyGuard,
        enable_grad,
        inference_mode,
        no_grad,
    )

    simple: dict[str, Callable[[], Any]] = {
        "no_grad": no_grad, "enable_grad": enable_grad, "inference_mode": inference_mode,
        "inference_mode(False)": lambda: inference_mode(False),
        "below_autograd": AutoDispatchBelowAutograd, "AutoDispatchBelowAutograd": AutoDispatchBelowAutograd,
        "below_adinplaceorview": AutoDispatchBelowADInplaceOrView,
        "AutoDispatchBelowADInplaceOrView": AutoDispatchBelowADInplaceOrView,
        "skip_functionalize": AutoDispatchSkipFunctionalize, "disable_torch_dispatch": DisableTorchDispatch,
    }
    if name in simple:
        return simple[name]()
    kind, _, keys = name.partition(":")
    if kind in ("exclude", "include") and keys:
        try:
            keyset = DispatchKeySet([DispatchKey.parse(k.strip()) for k in keys.split(",")])
        except ValueError as e:
            raise CliError(str(e), "`dispatchcore keys` lists the key names; they are case-sensitive") from None
        return (ExcludeDispatchKeyGuard if kind == "exclude" else IncludeDispatchKeyGuard)(keyset)
    if kind == "autocast":
        factory = _autocast_factory()
        if factory is None:
            raise CliError("autocast is not available: dispatchcore.autocast does not exist in this build")
        return factory(keys or "cpu")
    raise CliError(f"unknown guard {name!r}", GUARD_HELP)


def _explanation_json(ex: Any) -> dict[str, Any]:
    """``explain``'s answer as data: the key sets as raw values and key names, the path, the verdict."""
    from .trace_render import key_names

    def keyset(bits: int) -> dict[str, Any]:
        return {"raw": f"{bits:#x}", "keys": key_names(bits)}

    return {"call": ex.call, "ok": ex.ok, "key": ex.key.name, "rule": ex.rule,
            "arguments": keyset(ex.contributed), "included": keyset(ex.included), "excluded": keyset(ex.excluded),
            "effective": keyset(ex.effective), "path": [k.name for k in ex.path],
            "steps": [{"key": st.key.name, "label": st.label} for st in ex.steps],
            "error": ex.error, "missing": ex.missing, "fix": ex.fix,
            "stand_ins": bool(_CUDA_STAND_INS)}


def _explain_command(args: argparse.Namespace) -> int:
    import shlex

    values = [parse_value(v) for v in args.arg]
    kwargs: dict[str, Any] = {}
    for token in shlex.split(args.args_text or ""):
        name, eq, value = token.partition("=")
        if eq and name.isidentifier():
            kwargs[name] = parse_value(value)
        else:
            values.append(parse_value(token))
    for item in args.kwarg:
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier():
            raise CliError(f"--kwarg expects NAME=VALUE, got {item!r}",
                           "e.g. --kwarg alpha=2 --kwarg device=device:meta")
        kwargs[name] = parse_value(value)
    with contextlib.ExitStack() as stack:
        for name in args.guard:
            stack.enter_context(_guard(name))
        op = _resolve(args.op, tuple(values), kwargs)
        try:
            explanation = explain(op, *values, **kwargs)
        except RuntimeError as e:
            raise CliError(f"the arguments do not fit {op.qualname}: {e}".splitlines()[0],
                           f"its schema: {op.schema}") from None
    fmt = getattr(args, "format", "text")
    if fmt == "html":
        from .notebook import explanation_html

        print(_page(f"explain {explanation.call}", explanation_html(explanation)))
        return 0 if explanation.ok else 1
    if fmt == "json":
        print(json.dumps(_explanation_json(explanation), indent=2))
        return 0 if explanation.ok else 1
    print(_short(str(explanation)))
    if _CUDA_STAND_INS:
        print("note: pycuda is not installed, so the cuda arguments are stand-ins (shape, dtype and CUDA's key "
              "set, no memory): the dispatch is a GPU's, and explain runs no kernel anyway.")
    return 0 if explanation.ok else 1


# --- what-if / commutes ---------------------------------------------------------------------------
def _what_if_command(args: argparse.Namespace) -> int:
    from .errors import RegistrationError

    add = []
    for item in args.add:
        key, _, kernel = item.partition("=")
        if kernel not in ("", "fallthrough"):
            raise CliError(f"--add expects KEY or KEY=fallthrough, got {item!r}")
        add.append((key, fallthrough_kernel if kernel else None))
    op = _resolve(args.op)
    try:
        if args.command == "commutes":
            report = check_commutes(op, add or None)
            print(_short(str(report)))
            return 0 if report.commutes else 1
        print(_short(str(what_if(op, add=add, remove=args.remove))))
    except (RegistrationError, ValueError) as e:
        raise CliError(str(e), "`dispatchcore state OP` shows what is registered; `dispatchcore keys` the "
                               "key names") from None
    return 0


# --- trace --------------------------------------------------------------------------------------
def _render(recorded: Any, fmt: str) -> str:
    """Render with ``dispatchcore.trace_render``; minimal built-in text/json while it lacks one."""
    try:
        from . import trace_render

        renderer = getattr(trace_render, f"render_{fmt}", None)
    except ImportError:
        renderer = None
    if renderer is not None:
        result = renderer(recorded)
        return result if isinstance(result, str) else json.dumps(result, indent=2, default=str)
    if fmt == "text":
        lines = []
        for hop in recorded.hops():
            pad = " " * (hop.depth + 1)
            lines.append(f"{pad}[{hop.kind}] op=[{hop.op}], key=[{hop.key.name}]")
            lines.append(f"{pad}    {_short(hop.kernel)} [{hop.label}]")
            lines.extend(f"{pad}    {event.kind}: {event.detail}" for event in hop.events)
        return "\n".join(lines)
    if fmt == "json":
        hops = [{"kind": h.kind, "op": h.op, "key": h.key.name, "label": h.label, "kernel": _short(h.kernel),
                 "keyset": h.keyset, "depth": h.depth} for h in recorded.hops()]
        return json.dumps({"hops": hops}, indent=2)
    raise CliError(f"the {fmt} renderer is not available in this build (dispatchcore.trace_render.render_{fmt})",
                   "use --format text or json", code=1)


def _trace_command(args: argparse.Namespace) -> int:
    import runpy
    import traceback

    from .trace import trace

    path = os.path.abspath(args.script)
    if not os.path.isfile(path):
        raise CliError(f"no such script: {args.script}", "give the path of a Python file, e.g. "
                       "`dispatchcore trace examples/demo.py --format text`")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [args.script, *args.script_args]
    sys.path.insert(0, os.path.dirname(path))
    status = 0
    try:
        with trace() as recorded:
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as e:
                if e.code not in (None, 0):
                    status = e.code if isinstance(e.code, int) else 1
                    if not isinstance(e.code, int):
                        print(e.code, file=sys.stderr)
            except Exception:
                traceback.print_exc()
                print("dispatchcore: the script raised; the trace below stops where it did", file=sys.stderr)
                status = 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    text = _render(recorded, args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        print(f"dispatchcore: wrote the {args.format} trace of {len(recorded.hops())} hops to {args.output}",
              file=sys.stderr)
    else:
        print(text)
    return status


# --- run ----------------------------------------------------------------------------------------
_TRACE_FORMATS = {".html": "html", ".htm": "html", ".json": "json", ".md": "mermaid", ".mmd": "mermaid",
                  ".svg": "svg"}


def _run_command(args: argparse.Namespace) -> int:
    """``dispatchcore run``: the script under ``dispatchcore.compat``, with the optional observers."""
    from . import compat

    if not os.path.isfile(args.script):
        raise CliError(f"no such script: {args.script}", "give the path of a Python file, e.g. "
                       "`dispatchcore run examples/train.py`")
    if args.trace_calls < 1 or args.trace_skip < 0:
        raise CliError("--trace-calls must be at least 1 and --trace-skip at least 0")
    if args.log_ops or args.trace_file:
        from .plugins import load_backends

        load_backends()  # before the observers: registrations made during a trace escape its wrapping
    with contextlib.ExitStack() as stack:
        counter = stack.enter_context(compat.OpCounter()) if args.log_ops else None
        window = stack.enter_context(compat.CallWindow(args.trace_calls, args.trace_skip)) if args.trace_file else None
        status = compat.run_path(args.script, args.script_args)
    if counter is not None:
        print("\ndispatchcore: " + counter.table(), file=sys.stderr)
    if window is not None:
        fmt = _TRACE_FORMATS.get(os.path.splitext(args.trace_file)[1].lower(), "text")
        text = _render(window.trace, fmt)
        with open(args.trace_file, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        first, count = args.trace_skip, len(window.trace.roots)
        span = f"top-level calls {first}..{first + count - 1}" if count else "no call (the window was never reached)"
        print(f"dispatchcore: wrote the {fmt} trace of {span} ({len(window.trace.hops())} hops) to {args.trace_file}",
              file=sys.stderr)
    return status


# --- guards -------------------------------------------------------------------------------------
def _autocast_factory() -> Callable[[str], Any] | None:
    """``dispatchcore.autocast`` as a callable ``f(device_type)``, or None where it does not exist."""
    import importlib

    import dispatchcore

    candidate = getattr(dispatchcore, "autocast", None)
    if candidate is None:
        try:
            candidate = importlib.import_module("dispatchcore.autocast")
        except ImportError:
            return None
    if not callable(candidate):  # the module: its class of the same name
        candidate = getattr(candidate, "autocast", None)
        if not callable(candidate):
            return None
    return candidate


def guard_rows() -> list[dict[str, Any]]:
    """What each guard and mode flips: TLS include/exclude bits before and after, grad/inference flags.

    Each row also has the path ``aten::mul(x, x)`` would take for a CPU tensor that requires grad
    (from ``explain``, no kernel runs). Every guard is entered and left again; the state is restored.
    """
    from . import (
        AutoDispatchBelowAutograd,
        AutoDispatchSkipFunctionalize,
        DisableTorchDispatch,
        ExcludeDispatchKeyGuard,
        IncludeDispatchKeyGuard,
        enable_grad,
        inference_mode,
        is_grad_enabled,
        is_inference_mode_enabled,
        no_grad,
        ones,
        ops,
        set_grad_enabled,
    )
    from .tls import tls_get

    none: Callable[[], Any] = contextlib.nullcontext
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("no_grad()", none, no_grad),
        ("enable_grad()  [inside no_grad]", no_grad, enable_grad),
        ("set_grad_enabled(False)", none, lambda: set_grad_enabled(False)),
        ("inference_mode()", none, inference_mode),
        ("inference_mode(False)", none, lambda: inference_mode(False)),
        ("inference_mode(False)  [inside inference_mode]", inference_mode, lambda: inference_mode(False)),
        ("AutoDispatchBelowAutograd()", none, AutoDispatchBelowAutograd),
        ("AutoDispatchBelowADInplaceOrView()", none, AutoDispatchBelowADInplaceOrView),
        ("AutoDispatchSkipFunctionalize()", none, AutoDispatchSkipFunctionalize),
        ("DisableTorchDispatch()", none, DisableTorchDispatch),
        ("ExcludeDispatchKeyGuard(AutogradCPU)", none,
         lambda: ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutogradCPU))),
        ("ExcludeDispatchKeyGuard(ADInplaceOrView)", none,
         lambda: ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.ADInplaceOrView))),
        ("IncludeDispatchKeyGuard(Python)", none, lambda: IncludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Python))),
    ]
    autocast = _autocast_factory()
    if autocast is not None:
        cases.append(("autocast('cpu')", none, lambda: autocast("cpu")))
    mul = ops.aten.mul.Tensor
    x = ones(2, requires_grad=True)

    def state() -> tuple[int, int, bool, bool]:
        included, excluded, _ = tls_get()
        return included, excluded, is_grad_enabled(), is_inference_mode_enabled()

    rows: list[dict[str, Any]] = []
    for name, outer, make in cases:
        try:
            with outer():
                before = state()
                with make():
                    after = state()
                    path = " -> ".join(k.name for k in explain(mul, x, x).path)
        except Exception as e:  # noqa: BLE001 - an optional mode (autocast) that cannot be entered
            rows.append({"guard": name, "error": f"{type(e).__name__}: {e}"})
            continue
        rows.append({
            "guard": name,
            "include_before": before[0], "include_after": after[0],
            "exclude_before": before[1], "exclude_after": after[1],
            "include_added": bit_names(after[0] & ~before[0]), "include_removed": bit_names(before[0] & ~after[0]),
            "exclude_added": bit_names(after[1] & ~before[1]), "exclude_removed": bit_names(before[1] & ~after[1]),
            "grad_before": before[2], "grad_after": after[2],
            "inference_before": before[3], "inference_after": after[3],
            "mul_path": path,
        })
    if autocast is None:
        rows.append({"guard": "autocast", "error": "not available: dispatchcore.autocast does not exist in this build"})
    return rows


def print_guards(out: Callable[[str], Any] = print, as_json: bool = False) -> None:
    """The guard visualizer: which bits each guard and mode flips (``dispatchcore guards``)."""
    rows = guard_rows()
    if as_json:
        out(json.dumps(rows, indent=2))
        return
    out("Guards and modes are bit flips in the thread-local include/exclude key sets (raw hex before -> after),")
    out("or flags (grad mode, inference mode) that change no key set. Default: include "
        f"{DEFAULT_INCLUDED:#x} = BackendSelect, ADInplaceOrView;")
    out(f"exclude {DEFAULT_EXCLUDED:#x} = the 10 Autocast keys. Last column: where aten::mul(x, x) goes for a CPU")
    out("tensor x that requires grad (from explain; no kernel runs).\n")
    out(f"{'guard / mode':<47}{'grad':<8}{'include':<27}{'exclude':<40}aten::mul(x, x)")
    for row in rows:
        if "error" in row:
            out(f"{row['guard']:<47}({row['error']})")
            continue

        def flag(before: bool, after: bool) -> str:
            return ("on" if before else "off") + ("" if before == after else "->" + ("on" if after else "off"))

        include = f"{row['include_before']:#x} -> {row['include_after']:#x}"
        exclude = f"{row['exclude_before']:#x} -> {row['exclude_after']:#x}"
        out(f"{row['guard']:<47}{flag(row['grad_before'], row['grad_after']):<8}{include:<27}{exclude:<40}"
            f"{row['mul_path']}")
        changes = [f"include +{n}" for n in row["include_added"]] + [f"include -{n}" for n in row["include_removed"]]
        changes += [f"exclude +{n}" for n in row["exclude_added"]] + [f"exclude -{n}" for n in row["exclude_removed"]]
        if row["inference_before"] != row["inference_after"]:
            changes.append("inference mode " + ("on" if row["inference_after"] else "off"))
        if not changes:
            changes.append("no key bit changes" + (": grad mode is a flag, not a key" if row["grad_before"] !=
                                                   row["grad_after"] else ""))
        out(f"{'':<5}{', '.join(changes)}")
    out("\nAutogradFunctionality is the functionality bit of every Autograd<Backend> key: excluding it (with")
    out("AutogradOther and AutogradNestedTensor) turns them all off, though printing a key set hides it.")


# --- the command line -----------------------------------------------------------------------------
_EPILOG = """\
examples:
  dispatchcore                                   the guided tour
  dispatchcore keys AutogradCPU                  one key: value, raw bits, priority, aliases
  dispatchcore keys 0x9400010001                 the keys of a raw key-set value (hex(int(ks)))
  dispatchcore table aten::add.Tensor            the computed dispatch table
  dispatchcore explain aten::add --arg cpu:2x3:float32:grad --arg cpu:2x3
  dispatchcore explain aten::add --arg cpu:3 --arg meta:3 --guard below_autograd
  dispatchcore what-if aten::matmul --add CPU     the table diff, computed on a copy
  dispatchcore trace script.py --format mermaid -o trace.md
  dispatchcore run train.py --epochs 2           an unchanged PyTorch script, with torch being dispatchcore
  dispatchcore run --log-ops train.py            ... and a table of its operator calls by op and key
  dispatchcore guards                            the bits each guard and mode flips
exit status: 0 success; 1 failure (a call that would fail, a script that raised, ...); 2 usage errors
(unknown operator, key, guard or argument)."""


def build_parser() -> argparse.ArgumentParser:
    """The ``dispatchcore`` argument parser (one subcommand per tool)."""
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(prog="dispatchcore", description=__doc__.splitlines()[0].replace("``", ""),
                                     epilog=_EPILOG, formatter_class=formatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("tour", help="a guided tour of the dispatcher (the default)",
                   description="Five steps: an operator and its table, MyReLU, roi_align, guards, a tiny MLP.")
    p = sub.add_parser("keys", help="the dispatch key layout: bits, priorities, aliases",
                       description="Without KEY: every backend bit and functionality/alias key with its raw bit, "
                                   "priority and kind. With KEY: one key in detail (runtime keys such as "
                                   "AutogradCPU too). A number (0x9400010001, as hex(int(keyset)) prints) is "
                                   "decoded into the keys of that key set.")
    p.add_argument("key", nargs="*", help="key names to describe, e.g. AutogradCPU CompositeImplicitAutograd, "
                                          "or raw key-set values, e.g. 0x9400010001")
    p.add_argument("--format", "-f", choices=("text", "svg"), default="text",
                   help="text, or svg: the 64-bit layout without KEY, a key set's bit strip for a raw value "
                        "(default: text)")
    for name, help_text in (("table", "an operator's computed dispatch table (torch._C._dispatch_dump_table)"),
                            ("state", "an operator's registrations (torch._C._dispatch_dump)")):
        p = sub.add_parser(name, help=help_text, description=help_text + ".")
        p.add_argument("op", help="qualified name, e.g. aten::add.Tensor (aten.add.Tensor works too)")
        if name == "table":
            p.add_argument("--format", "-f", choices=("text", "html", "json"), default="text",
                           help="text (torch's dump), html (a coloured table) or json (default: text)")
        _user_code_options(p)
    p = sub.add_parser("explain", help="why a call dispatches where it does (or fails), without running it",
                       description="Show the dispatcher's decision for one call: each argument's key set, the TLS "
                                   "include/exclude sets, fallthrough keys, the effective key set, the chosen key, "
                                   "its table entry and rule, and the hops that follow. No kernel runs.",
                       epilog=ARG_GRAMMAR, formatter_class=formatter)
    p.add_argument("op", help="operator: aten::add.Tensor, or aten::add to pick the overload as a call would")
    p.add_argument("--arg", "-a", action="append", default=[], metavar="VALUE", help="a positional argument")
    p.add_argument("--kwarg", "-k", action="append", default=[], metavar="NAME=VALUE", help="a keyword argument")
    p.add_argument("--args", dest="args_text", metavar="'V ... NAME=V'",
                   help="positional and keyword arguments in one string, after any --arg")
    p.add_argument("--guard", "-g", action="append", default=[], metavar="GUARD",
                   help="enter a guard or mode first (repeatable); see below")
    p.add_argument("--format", "-f", choices=("text", "html", "json"), default="text",
                   help="text, html (the key-set strips and the path) or json (default: text)")
    _user_code_options(p)
    for name, help_text in (("what-if", "diff an operator's table against one with kernels added/removed"),
                            ("commutes", "check that registering an operator's kernels in any order gives one table")):
        p = sub.add_parser(name, help=help_text,
                           description=help_text + ". Computed on a copy: nothing is registered. Added kernels "
                                                   "are placeholders (KEY) or fallthroughs (KEY=fallthrough).")
        p.add_argument("op", help="qualified name, e.g. aten::matmul")
        p.add_argument("--add", action="append", default=[], metavar="KEY[=fallthrough]",
                       help="add a kernel at KEY (runtime or alias key); repeatable")
        if name == "what-if":
            p.add_argument("--remove", action="append", default=[], metavar="KEY",
                           help="remove the active kernel at KEY; repeatable")
        _user_code_options(p)
    p = sub.add_parser("trace", help="run a Python script and render every dispatch hop",
                       description="Run SCRIPT under dispatchcore.trace.trace() (as __main__, via runpy) and render "
                                   "the recorded hops. Arguments after -- go to the script.",
                       formatter_class=formatter,
                       epilog="example: dispatchcore trace train.py --format html -o trace.html -- --steps 3")
    p.add_argument("script", help="path of the Python script to run")
    p.add_argument("script_args", nargs="*", help="arguments for the script (after --)")
    p.add_argument("--format", "-f", choices=("text", "json", "mermaid", "html", "svg"), default="text",
                   help="output format; svg is the sequence diagram as a picture (default: text)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the rendering to FILE instead of stdout")
    p = sub.add_parser("run", help="run an unchanged PyTorch script with torch resolved to dispatchcore",
                       description="Run SCRIPT as __main__ (via runpy) with an import hook under which torch and\n"
                                   "every torch.* module resolve to dispatchcore (dispatchcore.compat); the first\n"
                                   "torch API dispatchcore lacks stops the script with an error naming it.\n"
                                   "Options go before SCRIPT; everything after it goes to the script. The exit status\n"
                                   "is the script's. docs/run-unchanged.md has the details.",
                       formatter_class=formatter,
                       epilog="examples:\n  dispatchcore run train.py --epochs 2\n"
                              "  dispatchcore run --log-ops train.py\n"
                              "  dispatchcore run --trace step.html --trace-skip 40 --trace-calls 30 train.py")
    p.add_argument("script", help="path of the Python script to run")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.add_argument("--log-ops", action="store_true",
                   help="after the run, print to stderr a table of operator calls by op and by the key whose "
                        "kernel ran")
    p.add_argument("--trace", metavar="FILE", dest="trace_file",
                   help="write the dispatch trace of a window of top-level calls to FILE (format by extension: "
                        ".html, .json, .md/.mmd for mermaid, .svg, else text)")
    p.add_argument("--trace-calls", type=int, default=100, metavar="N",
                   help="how many top-level operator calls the --trace window holds (default: 100)")
    p.add_argument("--trace-skip", type=int, default=0, metavar="K",
                   help="top-level operator calls to let pass before the --trace window opens (default: 0)")
    p = sub.add_parser("guards", help="which TLS bits each guard and mode flips",
                       description="For no_grad, enable_grad, inference_mode, the AutoDispatchBelow* guards, "
                                   "Exclude/IncludeDispatchKeyGuard examples and autocast (if present): the raw "
                                   "include/exclude sets before and after, the key bits added and removed, and "
                                   "where aten::mul on a CPU tensor goes.")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 failure, 2 usage error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2), already printed by argparse
        return e.code if isinstance(e.code, int) else 2
    try:
        command = args.command or "tour"
        if command == "tour":
            tour()
            return 0
        if command == "keys":
            if args.format == "svg":
                return _keys_svg(args.key)
            if args.key:
                for name in args.key:
                    raw = _raw_value(name)
                    if raw is None:
                        describe_key(name)
                    else:
                        describe_raw(raw)
            else:
                print_keys()
            return 0
        _load_user_code(getattr(args, "imports", None) or (), getattr(args, "files", None) or ())
        if command in ("table", "state"):
            return _dump(command, args.op, getattr(args, "format", "text"))
        if command == "explain":
            return _explain_command(args)
        if command in ("what-if", "commutes"):
            return _what_if_command(args)
        if command == "trace":
            return _trace_command(args)
        if command == "run":
            return _run_command(args)
        print_guards(as_json=args.json)
        return 0
    except CliError as e:
        print(f"dispatchcore: error: {e}", file=sys.stderr)
        if e.hint:
            print(f"hint: {e.hint}", file=sys.stderr)
        return e.code
    except BrokenPipeError:  # `dispatchcore ... | head`: the reader left; stop quietly
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
