"""Compare dispatchcore's dispatch-table labels for aten operators with torch 2.13's.

Prints, per operator whose labels differ, the keys that differ as ``key: (dispatchcore, torch)``,
then the number of differing entries. The keys are the ones the table-label differential test
(``tests/differential/test_vs_torch_table_labels.py``) checks.

Usage: python scripts/table_labels.py [substring ...]   (only operators whose name contains one)
"""

from __future__ import annotations

import pathlib
import sys

import torch

import dispatchcore as dc
from dispatchcore.dispatcher import get_dispatcher

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tests.differential.test_vs_torch_table_labels import KEYS, labels  # noqa: E402 - one parser for both


def main(filters: list[str]) -> int:
    dc.load_backends()
    differing = 0
    for op in get_dispatcher().operators():
        name = op.qualname
        if not name.startswith("aten::") or (filters and not any(f in name for f in filters)):
            continue
        mine, theirs = labels(op.dump_table()), labels(torch._C._dispatch_dump_table(name))
        diff = {k: (mine[k], theirs[k]) for k in KEYS if mine[k] != theirs[k]}
        if diff:
            differing += len(diff)
            print(name, diff)
    print(f"{differing} differing entries")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
