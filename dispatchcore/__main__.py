"""``python -m dispatchcore``: a short tour of the dispatcher, and small inspection commands.

``tour`` (the default) defines an operator, registers kernels at CPU and at the Autograd alias,
prints the computed table and follows one call through AutogradCPU to CPU. ``keys`` prints the
key layout; ``table OP`` and ``state OP`` print an operator's dumps.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .dispatcher import dump_state, dump_table, find_op
from .keys import DispatchKey, is_alias_key, is_per_backend_functionality
from .keyset import DispatchKeySet, key_bits, tensor_keyset
from .library import Library
from .tls import AutoDispatchBelowADInplaceOrView, tls_local_exclude_set, tls_local_include_set


class _DemoTensor:
    """A stand-in dispatch argument for the tour: just a key set (Note [Dispatch argument protocol])."""

    __slots__ = ("_key_bits", "value")

    def __init__(self, value: float, device: str = "CPU") -> None:
        self._key_bits = int(tensor_keyset(device))
        self.value = value


def tour(out=print) -> None:
    """Define ``demo::mysin``, register two kernels, show the table and one call's path."""
    import math

    with Library("demo", "DEF") as lib:
        lib.define("mysin(Tensor x) -> Tensor")

        def mysin_cpu(x):
            out(f"    [CPU]          kernel computes sin({x.value}); exclude set now {tls_local_exclude_set()}")
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

        out("1. An operator is a schema plus kernels, one per dispatch key:\n")
        out(dump_state(op))
        out("2. Registration precomputes a table: one kernel per runtime key, and the rule that chose it")
        out("   (only the interesting rows; `python -m dispatchcore table demo::mysin` shows all):\n")
        for line in dump_table(op).splitlines():
            if line.split(":")[0] in ("CPU", "Meta", "BackendSelect", "ADInplaceOrView", "AutogradCPU",
                                      "AutogradCUDA", "AutocastCPU"):
                out("   " + line)
        x = _DemoTensor(0.5)
        keys = DispatchKeySet.from_raw(x._key_bits)
        out(f"\n3. A CPU tensor carries {keys}.")
        out(f"   The thread-local include set adds {tls_local_include_set()},")
        out(f"   the exclude set removes {tls_local_exclude_set()},")
        out("   fallthrough keys (BackendSelect, ADInplaceOrView here) drop out, and the highest key wins:\n")
        result = op(x)
        out(f"\n   result: {result.value:.6f}")


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
