"""``python -m dispatchcore_backends.cuda.compile_check [ARCH]``: build every kernel, print ptxas's verdict.

Runs each kernel family, all dtypes in one translation unit, through nvcc to PTX and ``ptxas -v``
for ``ARCH`` (default ``sm_90``, the H100/H200) and prints registers, spill bytes, shared memory
and stack per kernel; exits 1 on a compile error or a spill. Needs nvcc and ptxas, no GPU.
"""

from __future__ import annotations

import sys

from .sources import FAMILIES, PTXAS_LINE, ptxas_report


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    arch = argv[0] if argv else "sm_90"
    print(PTXAS_LINE.format("kernel", "regs", "spill-s", "spill-l", "smem", "stack"))
    spills = 0
    for family, codes in FAMILIES.items():
        try:
            reports, _ = ptxas_report(family, codes, arch)
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 1
        for r in reports:
            spills += r.spill_stores + r.spill_loads
            print(PTXAS_LINE.format(r.kernel, r.registers, r.spill_stores, r.spill_loads, r.smem, r.stack))
    return 1 if spills else 0


if __name__ == "__main__":
    sys.exit(main())
