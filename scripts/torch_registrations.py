"""Write ``dispatchcore/native/torch_keys.py``: where torch 2.13 registers each aten operator.

For every aten operator dispatchcore defines, the keys among ``MODELED`` at which
``torch._C._dispatch_dump`` shows a registration (a Python meta kernel, ``Meta: (none)``,
counts as a Meta kernel). This is the ``dispatch:`` field of ``native_functions.yaml`` as the
live dispatcher sees it; dispatchcore registers at exactly these keys, which
``tests/unit/test_registrations.py`` checks without torch and
``tests/differential/test_vs_torch_table_labels.py`` checks label by label against torch.

Usage: python scripts/torch_registrations.py   (after adding operators; needs torch==2.13.0)
"""

from __future__ import annotations

import pathlib
import re
import sys

import torch

import dispatchcore as dc
from dispatchcore.dispatcher import get_dispatcher

MODELED = ("CPU", "Meta", "BackendSelect", "ADInplaceOrView", "AutocastCPU", "Autograd",
           "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")
_LINE = re.compile(r"^(\w+)(?:\[alias\])?(?: \(inactive\))?: ")
OUT = pathlib.Path(__file__).resolve().parents[1] / "dispatchcore" / "native" / "torch_keys.py"
HEADER = '''"""Where torch 2.13 registers each aten operator dispatchcore defines (generated data).

Written by ``scripts/torch_registrations.py`` from ``torch._C._dispatch_dump``: per operator, the
keys among those dispatchcore models at which torch has a kernel (the ``dispatch:`` entries of
``native_functions.yaml``, plus the Autograd, ADInplaceOrView, BackendSelect and autocast kernels
torch generates). Invariant: dispatchcore's own registrations for an operator are exactly these
(``tests/unit/test_registrations.py``); regenerate after adding operators, never edit by hand.
"""

from __future__ import annotations

# short names: E = CompositeExplicitAutograd, N = CompositeExplicitAutogradNonFunctional,
# I = CompositeImplicitAutograd, A = Autograd, V = ADInplaceOrView, B = BackendSelect, C = CPU,
# M = Meta, X = AutocastCPU
'''
SHORT = {"CPU": "C", "Meta": "M", "BackendSelect": "B", "ADInplaceOrView": "V", "AutocastCPU": "X",
         "Autograd": "A", "CompositeExplicitAutograd": "E", "CompositeExplicitAutogradNonFunctional": "N",
         "CompositeImplicitAutograd": "I"}


def torch_keys(qualname: str) -> str:
    keys = set()
    for line in torch._C._dispatch_dump(qualname).splitlines():
        m = _LINE.match(line)
        if m and m.group(1) in SHORT:
            keys.add(SHORT[m.group(1)])
    return "".join(sorted(keys))


def main() -> None:
    dc.load_backends()
    only = set(sys.argv[1:])  # a file listing the operators to write (default: all defined)
    names = set(pathlib.Path(sys.argv[1]).read_text().split()) if only else None
    rows = sorted(op.qualname.partition("::")[2] for op in get_dispatcher().operators()
                  if op.qualname.startswith("aten::") and (names is None or op.qualname[6:] in names))
    lines = [HEADER, "TORCH_KEYS: dict[str, str] = {"]
    lines += [f'    "{name}": "{torch_keys("aten::" + name)}",' for name in rows]
    lines += ["}", "", "KEY_NAMES = {"]
    lines += [f'    "{v}": "{k}",' for k, v in SHORT.items()]
    lines += ["}", ""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {len(rows)} operators to {OUT}")


if __name__ == "__main__":
    main()
