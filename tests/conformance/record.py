"""Record torch's results for the conformance entries, and torch's Core ATen opset.

Usage, from the repository root (needs torch 2.13)::

    python -m tests.conformance.record                 # every entry, then core_aten.txt
    python -m tests.conformance.record gather 'add*'   # the entries whose names match (fnmatch)
    python -m tests.conformance.record --core-aten     # only core_aten.txt

Each entry's file, ``expected/<name>.json``, maps every check id (``"float32/dim1@forward"``) to
torch's record for it (``framework.run_check``): values rounded to a few digits beyond the
dtype's tolerance, dtype, shape, strides, storage offset, or the error's type and first line.
``test_conformance.py`` compares dispatchcore with these files when torch is not installed.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time

from tests.conformance import framework as F


def record(op: F.OpInfo) -> tuple[int, list[str]]:
    """Write ``op``'s expectations; returns (number of checks, warnings about its samples)."""
    torch = F.torch_backend()
    records = {}
    notes = []
    for dtype in op.dtypes:
        for case in F.cases(op, dtype):
            for check in F.checks_for(case):
                rec = F.run_check(torch, case, check, exact=False)
                records[case.check_id(check)] = rec
                raised = rec is not None and isinstance(rec.get("out"), dict) and "error" in rec["out"]
                if check == "forward" and case.key.split("/", 1)[1].startswith("error") and not raised:
                    notes.append(f"{case.key}: named as an error sample, but torch does not raise")
    F.write_expectations(op, records, str(torch.module.__version__))
    return len(records), notes


def core_aten() -> list[str]:
    """torch's Core ATen opset: the aten overloads tagged ``torch.Tag.core`` (``"add.Tensor"``, ``"gather"``)."""
    import torch

    names = set()
    for qualname in torch._C._dispatch_get_all_op_names():
        if not qualname.startswith("aten::"):
            continue
        base, _, overload = qualname.removeprefix("aten::").partition(".")
        op = getattr(getattr(torch.ops.aten, base), overload or "default")
        if torch.Tag.core in op.tags:
            names.add(f"{base}.{overload}" if overload else base)
    return sorted(names)


def write_core_aten() -> int:
    import torch

    names = core_aten()
    header = (f"# torch {torch.__version__}: the Core ATen opset (aten overloads tagged torch.Tag.core), one a line.\n"
              "# Written by `python -m tests.conformance.record --core-aten`; read by test_conformance.py.\n")
    F.CORE_ATEN_PATH.write_text(header + "\n".join(names) + "\n")
    return len(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.record", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="entries to record (fnmatch patterns); default: all")
    parser.add_argument("--core-aten", action="store_true", help="write core_aten.txt only")
    args = parser.parse_args(argv)
    if args.core_aten:
        print(f"core_aten.txt: {write_core_aten()} overloads")
        return 0
    ops = F.all_ops()
    chosen = [op for op in ops if not args.names or any(fnmatch.fnmatchcase(op.name, p) for p in args.names)]
    if not chosen:
        print(f"no entry matches {args.names}", file=sys.stderr)
        return 1
    for op in chosen:
        start = time.perf_counter()
        count, notes = record(op)
        print(f"{F.expectation_path(op).relative_to(F.HERE.parents[1])}: {count} checks "
              f"({time.perf_counter() - start:.2f} s)")
        for note in notes:
            print(f"  warning: {note}")
    if not args.names:
        print(f"core_aten.txt: {write_core_aten()} overloads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
