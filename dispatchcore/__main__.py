"""``python -m dispatchcore``: a guided tour of the dispatcher, and small inspection commands.

``tour`` (the default) takes a newcomer through five steps: (1) an operator, its computed table
and one call's path through AutogradCPU to CPU; (2) ``MyReLU``, a custom autograd ``Function``;
(3) torchvision's ``roi_align`` with a ``Function`` registered as its Autograd kernel, its table
and the hops of one call; (4) what each guard does to the thread-local key sets; (5) a tiny MLP
trained with SGD. The examples live in ``dispatchcore.examples``. ``keys`` prints the key
layout; ``table OP`` and ``state OP`` print an operator's dumps.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .dispatcher import dump_state, dump_table, find_op
from .keys import DispatchKey, is_alias_key, is_per_backend_functionality
from .keyset import DEFAULT_EXCLUDED, DispatchKeySet, key_bits, tensor_keyset
from .library import Library
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
        out("(a few rows; `python -m dispatchcore table demo::mysin` shows all):\n")
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
        out(f"\n   x.grad has shape {list(x.grad.shape)} and sums to {x.grad.sum().item():.4f} "
            "(2 channels x 4 bins, each passing on its gradient of 1)")
        out("   python docs/examples/roi_align.py adds a numerical gradient check and shows what goes wrong")
        out("   without the guard.")
    finally:
        lib._destroy()


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
    out("     excluding it turns off every Autograd<Backend> key at once (spec §3.2).")
    out("Only the key-set guards skip the Autograd kernel; under no_grad it runs and records nothing.")


def tour_mlp(out: Callable[[str], Any] = print, steps: int = 60) -> list[float]:
    """Train the tiny MLP and show its falling loss."""
    from .examples import tiny_mlp

    _heading(out, 5, "A tiny MLP trained with SGD: every op dispatches")
    out("relu(x @ W1 + b1) @ W2 + b2, aten::mse_loss, loss.backward(), p -= lr * p.grad under no_grad:\n")
    losses = tiny_mlp.train(steps=steps, every=10, out=out)
    out(f"\n   the loss fell from {losses[0]:.4f} to {losses[-1]:.4f}")
    return losses


def print_keys(out=print) -> None:
    """The key layout: value, raw bit(s) and kind of every functionality and alias key."""
    out(f"{'value':>5}  {'key':<40} {'raw bits':>20}  kind")
    for key in DispatchKey:
        k = int(key)
        if k > 47 and not is_alias_key(key) and not key.name.startswith("StartOf"):
            continue
        if is_alias_key(key):
            kind = "alias (registration only)"
        elif is_per_backend_functionality(key):
            kind = "per-backend functionality: runtime keys " + key.name.replace("Functionality", "") + "<Backend>"
        elif k == 0:
            kind = "no bit; its own table slot"
        else:
            kind = "functionality"
        out(f"{k:>5}  {key.name:<40} {key_bits(key):#20x}  {kind}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dispatchcore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("tour", help="a guided tour (the default)")
    sub.add_parser("keys", help="the dispatch key layout with raw bits")
    for name, help_text in (("table", "an operator's computed dispatch table"),
                            ("state", "an operator's registrations")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("op", help="qualified name, e.g. aten::add.Tensor")
    args = parser.parse_args(argv)
    if args.command in (None, "tour"):
        tour()
    elif args.command == "keys":
        print_keys()
    else:
        try:
            text = dump_table(args.op) if args.command == "table" else dump_state(args.op)
        except LookupError as e:
            print(f"dispatchcore: {e}", file=sys.stderr)
            return 2
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
