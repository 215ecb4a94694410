"""Side-by-side comparison of dispatchcore with its performance anchors (docs/performance.md).

Run:  python bench/compare.py [--only G15,G18] [--rounds N] [--quick] [--no-torch] [--json PATH]

Every row of ``CASES`` is measured in this one process: the dispatchcore statements and the
anchor (torch) statements of a row are sampled interleaved, in rotated rounds, with
``bench/_harness.py`` (timeit-style, min and median, torch and OpenBLAS pinned to one thread).
Without torch (or with ``--no-torch``) the anchor column shows the number recorded in
docs/performance.md, marked ``(rec)``; ratios against recorded numbers come from another machine
and are only indicative.

Kinds of rows:

* ``ratio``: ``dispatchcore / anchor`` of the min times; ``must``/``target`` are ratios;
* ``delta``: a "+us" goal: each side is ``stmt - base`` (e.g. an op call minus calling its kernel
  directly); ``must``/``target`` bound the dispatchcore overhead in ns, and the "vs anchor"
  column shows ``dispatchcore - anchor``;
* ``info``: no goal, printed for reference.

Adding a row: append a ``Case`` to ``CASES``. A ``Side`` names a setup function (called once,
cached; it returns the statement's globals), the statement, for ``delta`` rows the base
statement, ``per`` when the statement loops (use ``inner()``), and a ``check`` statement that
is executed once before timing and must not raise (so a broken path is never benchmarked).
A torch setup calls ``_torch()``, which raises ``Unavailable`` when torch is missing.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import asdict, dataclass

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(1, os.path.dirname(_HERE))  # the repository root, for an uninstalled dispatchcore

from _harness import Entry, env_info, fmt_ns, measure, pin_threads  # noqa: E402

INNER = 100  # calls per guard entry in inner-loop statements


class Unavailable(Exception):
    """A side cannot be measured here (torch missing or disabled)."""


# --- rows -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """How to measure one side (dispatchcore or anchor) of a row."""

    setup: Callable[[], dict]
    stmt: str
    base: str | None = None  # delta rows: subtract this statement's time (same globals)
    per: int = 1  # stmt and base each perform `per` operations (inner loop)
    check: str | None = None  # executed once in the globals before timing; must not raise
    label: str = ""  # what the statement is, for the details block


@dataclass(frozen=True)
class Case:
    """One row of the comparison table."""

    goal: str
    metric: str
    kind: str  # "ratio" | "delta" | "info"
    dc: Side | None  # None: dispatchcore cannot do this yet (see na)
    anchor: Side | None
    must: float | None = None  # ratio, or ns for delta rows
    target: float | None = None
    recorded: float | None = None  # the anchor's value in docs/performance.md (ns)
    recorded_note: str = ""
    na: str = ""  # why dispatchcore has no number yet
    gc_enabled: bool = False


def inner(stmt: str, guard: str | None = None) -> str:
    """``stmt`` run INNER times, inside ``with guard:`` entered once when given (pair with per=INNER).

    Use the same form without a guard for the base statement so the loop cost cancels.
    """
    body = f"for _ in _R:\n    {stmt}"
    if guard is None:
        return body
    return f"with {guard}:\n" + textwrap.indent(body, "    ")


# --- setups (cached: one Library per process) -----------------------------------------------
_NO_TORCH = False


def _torch():
    if _NO_TORCH:
        raise Unavailable("--no-torch")
    try:
        import torch
    except ImportError as e:
        raise Unavailable(f"torch not importable: {e}") from None
    return torch


@functools.cache
def dc_ops() -> dict:
    """No-op Python kernels registered at CPU for 1-arg, 2-arg and with_keyset ops."""
    import dispatchcore as dc
    from dispatchcore.tls import tls_get

    lib = dc.Library("dc_compare", "DEF")
    lib.define("nop1(Tensor a) -> Tensor")
    lib.define("nop2(Tensor a, Tensor b) -> Tensor")
    lib.define("nopks(Tensor a) -> Tensor")
    lib.define("reg(Tensor a) -> Tensor")  # no kernel: the registration row adds and removes one
    R = object()

    def nop1(a):
        return R

    def nop2(a, b):
        return R

    def nopks(ks, a):
        return ks

    def regk(a):
        return R

    lib.impl("nop1", nop1, "CPU")
    lib.impl("nop2", nop2, "CPU")
    lib.impl("nopks", nopks, "CPU", with_keyset=True)

    class Carrier:
        __slots__ = ("_key_bits",)

        def __init__(self, bits: int) -> None:
            self._key_bits = bits

    def route(op, *args):
        """Name of the key a call with ``args`` dispatches to first, under the current TLS."""
        included, _, keep = tls_get()
        bits = included
        for a in args:
            bits |= a._key_bits
        return op.key_for(bits & keep).name

    ops = dc.ops.dc_compare
    return {
        "dc": dc, "lib": lib, "R": R, "route": route,
        "c": Carrier(int(dc.tensor_keyset("CPU"))), "e": Carrier(0),
        "op1": ops.nop1.default, "op2": ops.nop2.default, "opks": ops.nopks.default,
        "reg": ops.reg.default, "nop1": nop1, "nop2": nop2, "nopks": nopks, "regk": regk,
        "KS_CPU": dc.DispatchKeySet(dc.DispatchKey.CPU),
        "B": dc.AutoDispatchBelowAutograd, "BA": dc.AutoDispatchBelowADInplaceOrView,
        "E": dc.ExcludeDispatchKeyGuard, "I": dc.IncludeDispatchKeyGuard, "F": dc.ForceDispatchKeyGuard,
        "ks": dc.DispatchKeySet(dc.DispatchKey.AutogradCPU), "K": dc.DispatchKey.CPU,
        "inc": dc.tls_local_include_set(),
        "exc": dc.tls_local_exclude_set() | dc.DispatchKeySet(dc.DispatchKey.AutogradCPU),
    }


@functools.cache
def torch_ops() -> dict:
    """The same no-op kernels registered through torch.library (the G15 anchor)."""
    torch = _torch()
    C = torch._C
    lib = torch.library.Library("dc_compare", "DEF")
    lib.define("nop1(Tensor a) -> Tensor")
    lib.define("nop2(Tensor a, Tensor b) -> Tensor")
    lib.define("nopks(Tensor a) -> Tensor")
    OUT = torch.zeros(10)

    def t_nop1(a):
        return OUT

    def t_nop2(a, b):
        return OUT

    def t_nopks(ks, a):
        return OUT

    lib.impl("nop1", t_nop1, "CPU")
    lib.impl("nop2", t_nop2, "CPU")
    lib.impl("nopks", t_nopks, "CPU", with_keyset=True)
    a = torch.randn(10)
    ops = torch.ops.dc_compare
    return {
        "torch": torch, "C": C, "lib": lib, "OUT": OUT, "a": a, "b": torch.randn(10),
        "op1": ops.nop1.default, "op2": ops.nop2.default, "opks": ops.nopks.default,
        "t_nop1": t_nop1, "t_nop2": t_nop2, "t_nopks": t_nopks,
        "TKS_CPU": C.DispatchKeySet(C.DispatchKey.CPU),
        "has_kernel": C._dispatch_has_kernel_for_dispatch_key,
    }


@functools.cache
def torch_guards() -> dict:
    """The grad-mode and dispatch-key guards of torch (the G17 and G18 anchors)."""
    torch = _torch()
    C = torch._C
    ks = C.DispatchKeySet(C.DispatchKey.AutogradCPU)
    return {
        "torch": torch, "C": C, "tks": ks, "tK": C.DispatchKey.CPU,
        "tinc": C._dispatch_tls_local_include_set(),
        "texc": C._dispatch_tls_local_exclude_set() | ks,
        "excluded": C._dispatch_tls_is_dispatch_key_excluded,
        "included": C._dispatch_tls_is_dispatch_key_included,
    }


# --- the table of cases ---------------------------------------------------------------------
_DEFAULT_ROUTE = (
    'assert route(op1, c) == "AutogradCPU" and op1.table_entry("AutogradCPU")[1] == "backend fallback"\n'
)
_TORCH_ROUTE = 'assert not has_kernel("dc_compare::nop1", "AutogradCPU")\n'
_US = 1000.0

G15 = dict(kind="delta", must=1.0 * _US, target=0.5 * _US)
G17 = dict(kind="ratio", must=0.5, target=0.3)
G18 = dict(kind="ratio", must=1.0, target=0.65)

CASES: list[Case] = [
    # G15: a user Python kernel registered for a key, called through the dispatcher, minus
    # calling the same function directly. Default path: the op has no autograd kernel, so the
    # call goes AutogradCPU (built-in fallback) -> redispatch -> CPU, as torch.library ops do.
    Case("G15", "1-arg kernel overhead, default (AutogradCPU fallback -> CPU)", **G15,
         dc=Side(dc_ops, "op1(c)", base="nop1(c)", label="ops.nop1.default(c) - nop1(c)",
                 check=_DEFAULT_ROUTE + "assert op1(c) is R and nop1(c) is R"),
         anchor=Side(torch_ops, "op1(a)", base="t_nop1(a)",
                     label="torch.ops.nop1.default(a) - t_nop1(a)",
                     check=_TORCH_ROUTE + "assert op1(a) is OUT"),
         recorded=1150.0, recorded_note="nop.default 1.18 us - nop_impl 27.8 ns"),
    Case("G15", "2-arg kernel overhead, default (AutogradCPU fallback -> CPU)", **G15,
         dc=Side(dc_ops, "op2(c, c)", base="nop2(c, c)", label="ops.nop2.default(c, c) - nop2(c, c)",
                 check='assert route(op2, c, c) == "AutogradCPU" and op2(c, c) is R'),
         anchor=Side(torch_ops, "op2(a, b)", base="t_nop2(a, b)",
                     label="torch.ops.nop2.default(a, b) - t_nop2(a, b)",
                     check="assert op2(a, b) is OUT"),
         recorded=1820.0, recorded_note="myadd.default 3.01 us - myadd_impl 1.19 us (a torch.add kernel)"),
    Case("G15", "1-arg kernel overhead, below autograd (guard once/100)", **G15,
         dc=Side(dc_ops, inner("op1(c)", "B()"), base=inner("nop1(c)"), per=INNER,
                 label="ops.nop1.default(c) - nop1(c) in AutoDispatchBelowAutograd",
                 check='with B():\n    assert route(op1, c) == "CPU" and op1(c) is R'),
         anchor=Side(torch_ops, inner("op1(a)", "C._AutoDispatchBelowAutograd()"),
                     base=inner("t_nop1(a)"), per=INNER,
                     label="torch nop1.default(a) - t_nop1(a) in _AutoDispatchBelowAutograd",
                     check="with C._AutoDispatchBelowAutograd():\n    assert op1(a) is OUT")),
    Case("G15", "2-arg kernel overhead, below autograd (guard once/100)", **G15,
         dc=Side(dc_ops, inner("op2(c, c)", "B()"), base=inner("nop2(c, c)"), per=INNER,
                 label="ops.nop2.default(c, c) - nop2(c, c) in AutoDispatchBelowAutograd",
                 check='with B():\n    assert route(op2, c, c) == "CPU" and op2(c, c) is R'),
         anchor=Side(torch_ops, inner("op2(a, b)", "C._AutoDispatchBelowAutograd()"),
                     base=inner("t_nop2(a, b)"), per=INNER,
                     label="torch nop2.default(a, b) - t_nop2(a, b) in _AutoDispatchBelowAutograd",
                     check="with C._AutoDispatchBelowAutograd():\n    assert op2(a, b) is OUT")),
    Case("G15", "with_keyset kernel overhead, default (fallback -> CPU)", **G15,
         dc=Side(dc_ops, "opks(c)", base="nopks(KS_CPU, c)",
                 label="ops.nopks.default(c) - nopks(ks, c)",
                 check='assert route(opks, c) == "AutogradCPU" and opks(c) == KS_CPU'),
         anchor=Side(torch_ops, "opks(a)", base="t_nopks(TKS_CPU, a)",
                     label="torch nopks.default(a) - t_nopks(ks, a)",
                     check="assert opks(a) is OUT")),
    Case("G15", "with_keyset kernel overhead, below autograd (guard once/100)", **G15,
         dc=Side(dc_ops, inner("opks(c)", "B()"), base=inner("nopks(KS_CPU, c)"), per=INNER,
                 label="ops.nopks.default(c) - nopks(ks, c) in AutoDispatchBelowAutograd",
                 check='with B():\n    assert route(opks, c) == "CPU" and opks(c) == KS_CPU'),
         anchor=Side(torch_ops, inner("opks(a)", "C._AutoDispatchBelowAutograd()"),
                     base=inner("t_nopks(TKS_CPU, a)"), per=INNER,
                     label="torch nopks.default(a) - t_nopks(ks, a) in _AutoDispatchBelowAutograd",
                     check="with C._AutoDispatchBelowAutograd():\n    assert opks(a) is OUT")),
    # G17: grad-mode guards. dispatchcore has no grad mode until the autograd issue.
    Case("G17", "no_grad() enter+exit, built each time", **G17, dc=None,
         anchor=Side(torch_guards, "with torch.no_grad(): pass", label="with torch.no_grad(): pass",
                     check="with torch.no_grad():\n    assert not torch.is_grad_enabled()"),
         recorded=1450.0, na="n/a until the autograd issue"),
    Case("G17", "inference_mode() enter+exit, built each time", **G17, dc=None,
         anchor=Side(torch_guards, "with torch.inference_mode(): pass",
                     label="with torch.inference_mode(): pass",
                     check="with torch.inference_mode():\n    assert torch.is_inference_mode_enabled()"),
         recorded=1410.0, na="n/a until the autograd issue"),
    # G18: dispatch-key guards, constructed each time, enter+exit.
    Case("G18", "ExcludeDispatchKeyGuard(ks) enter+exit, ks pre-built", **G18,
         dc=Side(dc_ops, "with E(ks): pass", label="with ExcludeDispatchKeyGuard(ks): pass",
                 check='with E(ks):\n    assert route(op1, c) == "CPU"\n' + _DEFAULT_ROUTE),
         anchor=Side(torch_guards, "with C._ExcludeDispatchKeyGuard(tks): pass",
                     label="with C._ExcludeDispatchKeyGuard(ks): pass",
                     check="with C._ExcludeDispatchKeyGuard(tks):\n"
                           "    assert excluded(C.DispatchKey.AutogradCPU)"),
         recorded=682.2),
    Case("G18", "AutoDispatchBelowAutograd() enter+exit", **G18,
         dc=Side(dc_ops, "with B(): pass", label="with AutoDispatchBelowAutograd(): pass",
                 check='with B():\n    assert route(op1, c) == "CPU"'),
         anchor=Side(torch_guards, "with C._AutoDispatchBelowAutograd(): pass",
                     label="with C._AutoDispatchBelowAutograd(): pass",
                     check='with C._AutoDispatchBelowAutograd():\n'
                           '    assert excluded(C.DispatchKey.AutogradFunctionality)'),
         recorded=446.1),
    Case("G18", "AutoDispatchBelowADInplaceOrView() enter+exit", **G18,
         dc=Side(dc_ops, "with BA(): pass", label="with AutoDispatchBelowADInplaceOrView(): pass",
                 check='with BA():\n    assert route(op1, c) == "CPU"\n'
                       '    assert dc.tls_is_dispatch_key_excluded("ADInplaceOrView")'),
         anchor=Side(torch_guards, "with C._AutoDispatchBelowADInplaceOrView(): pass",
                     label="with C._AutoDispatchBelowADInplaceOrView(): pass",
                     check='with C._AutoDispatchBelowADInplaceOrView():\n'
                           '    assert excluded(C.DispatchKey.ADInplaceOrView)'),
         recorded_note="recorded only pre-built (260.5 ns)"),
    Case("G18", "IncludeDispatchKeyGuard(CPU) enter+exit", **G18,
         dc=Side(dc_ops, "with I(K): pass", label="with IncludeDispatchKeyGuard(DispatchKey.CPU): pass",
                 check='with I(K):\n    assert route(op1, e) == "CPU"\nassert route(op1, e) == "Undefined"'),
         anchor=Side(torch_guards, "with C._IncludeDispatchKeyGuard(tK): pass",
                     label="with C._IncludeDispatchKeyGuard(DispatchKey.CPU): pass",
                     check="with C._IncludeDispatchKeyGuard(tK):\n    assert included(tK)"),
         recorded=618.9),
    Case("G18", "ForceDispatchKeyGuard(inc, exc) enter+exit", **G18,
         dc=Side(dc_ops, "with F(inc, exc): pass", label="with ForceDispatchKeyGuard(inc, exc): pass",
                 check='with F(inc, exc):\n    assert route(op1, c) == "CPU"\n' + _DEFAULT_ROUTE),
         anchor=Side(torch_guards, "with C._ForceDispatchKeyGuard(tinc, texc): pass",
                     label="with C._ForceDispatchKeyGuard(inc, exc): pass",
                     check='with C._ForceDispatchKeyGuard(tinc, texc):\n'
                           '    assert excluded(C.DispatchKey.AutogradCPU)'),
         ),
    # No goal: what one registration costs (validate, rebuild the affected table slots, undo).
    Case("info", "registration: impl at CPU + handle.remove() (2 table rebuilds)", kind="info",
         dc=Side(dc_ops, "lib.impl('reg', regk, 'CPU').remove()",
                 label="lib.impl('reg', k, 'CPU').remove()",
                 check="h = lib.impl('reg', regk, 'CPU')\nassert reg(c) is R\nh.remove()\n"
                       "assert reg.table_entry('CPU')[1] == 'missing'"),
         anchor=None),
]


# --- running --------------------------------------------------------------------------------
@dataclass
class Row:
    """A measured row: values in ns (delta rows: overheads) or None."""

    goal: str
    metric: str
    kind: str
    dc: float | None
    anchor: float | None
    anchor_source: str  # "measured" | "recorded" | "none"
    value: float | None  # ratio dc/anchor (ratio rows) or dc - anchor in ns (delta rows)
    must: float | None
    target: float | None
    must_ok: bool | None
    target_ok: bool | None
    notes: str
    details: list


def _globals(side: Side) -> dict:
    glb = dict(side.setup())
    glb["_R"] = range(INNER)
    return glb


def _run_case(case: Case, rounds: int, target: float) -> Row:
    entries: list[Entry] = []
    notes: list[str] = []
    sides: dict[str, Side] = {}
    for tag, side in (("dispatchcore", case.dc), ("anchor", case.anchor)):
        if side is None:
            continue
        try:
            glb = _globals(side)
        except Unavailable:
            continue
        if side.check:
            check_glb = dict(glb)
            exec(side.check, check_glb)  # our own statements; raises on a broken path
        sides[tag] = side
        entries.append(Entry(f"{tag}:stmt", side.stmt, glb, side.per))
        if side.base is not None:
            entries.append(Entry(f"{tag}:base", side.base, glb, side.per))
    timings = measure(entries, rounds=rounds, target=target, gc_enabled=case.gc_enabled) if entries else {}

    def value_of(tag: str) -> float | None:
        if tag not in sides:
            return None
        t = timings[f"{tag}:stmt"].min_ns
        if sides[tag].base is not None and case.kind == "delta":
            t -= timings[f"{tag}:base"].min_ns
        return t

    details = []
    for tag, side in sides.items():
        for part in ("stmt", "base"):
            tm = timings.get(f"{tag}:{part}")
            if tm is not None:
                what = side.label or side.stmt
                if part == "base":
                    what = f"  base: {side.base.splitlines()[-1].strip()}"
                details.append({"side": tag, "part": part, "what": what, "min_ns": tm.min_ns,
                                "median_ns": tm.median_ns, "loops": tm.loops})
    dc_v = value_of("dispatchcore")
    anchor_v = value_of("anchor")
    source = "measured" if anchor_v is not None else "none"
    if anchor_v is None and case.recorded is not None:
        anchor_v, source = case.recorded, "recorded"
        notes.append("anchor recorded" + (f": {case.recorded_note}" if case.recorded_note else ""))
    elif anchor_v is None and case.anchor is not None:
        notes.append(f"anchor {case.recorded_note or 'not recorded'}")
    if case.dc is None and case.na:
        notes.insert(0, case.na)
    value = None
    if dc_v is not None and anchor_v is not None:
        value = dc_v - anchor_v if case.kind == "delta" else dc_v / anchor_v
    gated = dc_v if case.kind == "delta" else value
    must_ok = None if gated is None or case.must is None else gated <= case.must
    target_ok = None if gated is None or case.target is None else gated <= case.target
    return Row(case.goal, case.metric, case.kind, dc_v, anchor_v, source, value, case.must,
               case.target, must_ok, target_ok, "; ".join(notes), details)


def _fmt_value(kind: str, v: float | None) -> str:
    if v is None:
        return "-"
    if kind == "ratio":
        return f"{v:.2f}x"
    if kind == "delta":
        return fmt_ns(v, sign=True)
    return fmt_ns(v)


def _verdict(ok: bool | None, row: Row) -> str:
    if row.dc is None:
        return "n/a"
    if ok is None:
        return "-" if row.must is None else "?"
    return "PASS" if ok else "MISS"


def _print_details(row: Row) -> None:
    print(f"\n== {row.goal}  {row.metric}")
    for d in row.details:
        print(f"   {d['side']:<13} {d['what']:<66} min {fmt_ns(d['min_ns']):>10}  "
              f"median {fmt_ns(d['median_ns']):>10}  ({d['loops']} loops)")
    if not row.details:
        print("   (nothing measured here)")
    sys.stdout.flush()


HEADER = ("goal", "metric", "dispatchcore", "anchor", "vs anchor", "must", "target", "must?", "target?",
          "notes")


def _table(rows: list[Row]) -> str:
    lines = []
    for r in rows:
        dc = "n/a" if r.dc is None else fmt_ns(r.dc, sign=r.kind == "delta")
        anchor = "-" if r.anchor is None else fmt_ns(r.anchor, sign=r.kind == "delta")
        if r.anchor_source == "recorded":
            anchor += " (rec)"
        vs = "n/a" if r.dc is None else _fmt_value(r.kind, r.value)
        lines.append((r.goal, r.metric, dc, anchor, vs, _fmt_value(r.kind, r.must),
                      _fmt_value(r.kind, r.target), _verdict(r.must_ok, r), _verdict(r.target_ok, r),
                      r.notes))
    widths = [max(len(HEADER[i]), *(len(line[i]) for line in lines)) if lines else len(HEADER[i])
              for i in range(len(HEADER))]
    right = {2, 3, 4, 5, 6}

    def fmt(cells) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [fmt(HEADER), fmt(["-" * w for w in widths])]
    out += [fmt(line) for line in lines]
    return "\n".join(out)


LEGEND = """\
ratio rows: dispatchcore and anchor are min times per call; vs anchor = dispatchcore / anchor; must and
  target bound that ratio.
delta rows (+us goals): dispatchcore and anchor are overheads = min(op call) - min(direct call); vs anchor
  = dispatchcore - anchor; must and target bound the dispatchcore overhead.
(rec) = number recorded in docs/performance.md on the anchor machine, not measured here."""


def main(argv: list[str] | None = None) -> int:
    global _NO_TORCH
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="comma-separated goal ids, e.g. G15,G18 (default: all)")
    p.add_argument("--rounds", type=int, default=21, help="interleaved rounds per row (default 21)")
    p.add_argument("--target", type=float, default=None, help="seconds per sample (default 0.02)")
    p.add_argument("--quick", action="store_true", help="tiny calibration target (CI smoke run)")
    p.add_argument("--no-torch", action="store_true", help="do not import torch; use recorded anchors")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    p.add_argument("--strict", action="store_true", help="exit 1 when a row misses its must threshold")
    args = p.parse_args(argv)
    _NO_TORCH = args.no_torch
    target = args.target if args.target is not None else (0.0005 if args.quick else 0.02)
    only = {g.strip().upper() for g in args.only.split(",") if g.strip()}
    cases = [c for c in CASES if not only or c.goal.upper() in only]
    if not cases:
        print(f"no case matches --only {args.only!r}; goals: {sorted({c.goal for c in CASES})}")
        return 2
    if not _NO_TORCH:
        try:
            _torch()
        except Unavailable:
            pass
    pin_threads()
    print("# dispatchcore vs anchors (docs/performance.md), same process, interleaved rounds")
    for k, v in env_info().items():
        print(f"#   {k}: {v}")
    print(f"#   rounds: {args.rounds}, target per sample: {target * 1e3:g} ms")
    rows = []
    for case in cases:
        row = _run_case(case, args.rounds, target)
        _print_details(row)
        rows.append(row)
    print(f"\n# end loadavg_1_5_15: {env_info().get('loadavg_1_5_15')}\n")
    print(_table(rows))
    print()
    print(LEGEND)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": env_info(), "rounds": args.rounds, "target_s": target,
                       "rows": [asdict(r) for r in rows]}, f, indent=1, default=str)
    if args.strict and any(r.must_ok is False for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
