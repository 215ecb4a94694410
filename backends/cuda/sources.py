"""The CUDA C sources: which kernels exist, their signatures, and how a module is rendered and built.

Pure Python (no pycuda): the runtime, the compile checks and the tests' fake device all read the
same ``KernelSpec`` table. A module is one translation unit per (family, dtype): ``common.cuh``,
the family's ``.cu`` file and ``extern "C"`` wrappers instantiating its templates for that dtype;
it is built with nvcc to a cubin, cached on disk by the hash of its text, the arch and nvcc's
version. Every kernel parameter is 8 bytes (pointer, ``long long``, ``double``) after an optional
geometry struct passed first, so ``arg_format`` packs them without padding questions.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
from typing import NamedTuple

import numpy as np

__all__ = ["BLOCK", "CODES", "FAMILIES", "KERNEL_DIR", "KernelSpec", "PTXAS_LINE", "PtxasReport", "arg_format",
           "code_of", "compile_cubin", "kernel_name", "module_source", "nvcc_path", "ptxas_report", "specs"]

KERNEL_DIR = pathlib.Path(__file__).resolve().parent / "kernels"
BLOCK = 256  # threads per block of every kernel (DC_THREADS; __launch_bounds__)
MAX_DIMS = 8  # DC_MAX_DIMS
PWGEOM_BYTES = 8 * (2 + MAX_DIMS + 4 * MAX_DIMS)
REDGEOM_BYTES = 8 * (4 + 6 * MAX_DIMS)

# dtype codes, as the kernels' C typedefs name them
CODES: dict[str, np.dtype] = {
    "b8": np.dtype(np.bool_), "u8": np.dtype(np.uint8), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
}
_CODE_OF = {dt: code for code, dt in CODES.items()}
FLOAT = ("f16", "f32", "f64")
INTEGRAL = ("u8", "i8", "i16", "i32", "i64")
NUMERIC = INTEGRAL + FLOAT
ALL = ("b8",) + NUMERIC


def code_of(dtype: np.dtype) -> str | None:
    """The kernel dtype code of a numpy dtype, or None (complex: no CUDA kernels)."""
    return _CODE_OF.get(np.dtype(dtype))


class KernelSpec(NamedTuple):
    """One ``extern "C"`` kernel: its name, C parameters ``(type, name)`` and wrapper body."""

    name: str
    params: tuple[tuple[str, str], ...]
    body: str


_UNARY = {"neg": ("Neg", NUMERIC), "abs": ("Abs", NUMERIC), "relu": ("Relu", NUMERIC),
          "exp": ("Exp", FLOAT), "log": ("Log", FLOAT), "sqrt": ("Sqrt", FLOAT), "sin": ("Sin", FLOAT),
          "cos": ("Cos", FLOAT), "tanh": ("Tanh", FLOAT), "sigmoid": ("Sigmoid", FLOAT)}
_SCALAR = {"add_s": ("AddS", ALL), "mul_s": ("MulS", ALL), "div_s": ("DivS", FLOAT), "pow_s": ("PowS", NUMERIC),
           "rpow_s": ("RPowS", NUMERIC)}
_COMPARE = {"eq": "Eq", "ne": "Ne", "lt": "Lt", "le": "Le", "gt": "Gt", "ge": "Ge"}
_BINARY = {"mul": ("Mul", ALL), "div": ("Div", FLOAT), "pow": ("Pow", NUMERIC), "sqdiff": ("SqDiff", FLOAT),
           "xlogy": ("Xlogy", FLOAT), "bitand": ("BitAnd", ("b8",) + INTEGRAL)}
FAMILIES: dict[str, tuple[str, ...]] = {  # family -> dtype codes it has kernels for
    "pointwise": ALL, "reduce": NUMERIC, "softmax": FLOAT, "matmul": FLOAT, "loss": FLOAT,
}


def kernel_name(op: str, code: str) -> str:
    return f"dc_{op}_{code}"


def _pointwise(code: str) -> list[KernelSpec]:
    t = code
    acc = f"Acc<{t}>::type"
    geom = ("PwGeom", "g")
    out, a, b = (f"{t}*", "out"), (f"const {t}*", "a"), (f"const {t}*", "b")
    sd, si = ("double", "sd"), ("i64", "si")
    ks = [KernelSpec(kernel_name("fill", t), (geom, out, sd, si), f"dc_fill<{t}>(g, out, sd, si);")]
    for src in ALL:  # casts into this dtype (same dtype: the strided copy)
        ks.append(KernelSpec(kernel_name(f"cast_{src}", t), (geom, out, (f"const {src}*", "a")),
                             f"dc_cast<{t}, {src}>(g, out, a);"))
    for op, (functor, codes) in _UNARY.items():
        if t in codes:
            ks.append(KernelSpec(kernel_name(op, t), (geom, out, a), f"dc_unary<{t}, {functor}<{acc}> >(g, out, a);"))
    if t in NUMERIC:
        ks.append(KernelSpec(kernel_name("clamp", t),
                             (geom, out, a, ("double", "lod"), ("i64", "loi"), ("double", "hid"), ("i64", "hii"),
                              ("i64", "flags")),
                             f"dc_clamp<{t}>(g, out, a, lod, loi, hid, hii, flags);"))
    for op, (functor, codes) in _SCALAR.items():
        if t in codes:
            ks.append(KernelSpec(kernel_name(op, t), (geom, out, a, sd, si),
                                 f"dc_scalar_op<{t}, {t}, {functor}>(g, out, a, sd, si);"))
    bout = ("b8*", "out")
    for op, functor in _COMPARE.items():
        ks.append(KernelSpec(kernel_name(f"{op}_s", t), (geom, bout, a, sd, si),
                             f"dc_scalar_op<b8, {t}, {functor}S>(g, out, a, sd, si);"))
        ks.append(KernelSpec(kernel_name(op, t), (geom, bout, a, b), f"dc_binary(g, out, a, b, {functor}<{acc}>());"))
    ks.append(KernelSpec(kernel_name("add", t), (geom, out, a, b, sd, si),
                         f"Add<{acc}> f; f.alpha = dc_scalar<{acc}>(sd, si); dc_binary(g, out, a, b, f);"))
    for op, (functor, codes) in _BINARY.items():
        if t in codes:
            body = f"dc_binary(g, out, a, b, {functor}<{acc}>());"
            ks.append(KernelSpec(kernel_name(op, t), (geom, out, a, b), body))
    if t in FLOAT:  # logit and its backward: eps (negative when none) read in the compute type
        ks.append(KernelSpec(kernel_name("logit", t), (geom, out, a, sd, si),
                             f"Logit<{acc}> f; f.eps = dc_scalar<{acc}>(sd, si); dc_unary_loop(g, out, a, f);"))
        ks.append(KernelSpec(kernel_name("logit_backward", t), (geom, out, a, b, sd, si),
                             f"LogitBackward<{acc}> f; f.eps = dc_scalar<{acc}>(sd, si); dc_binary(g, out, a, b, f);"))
    ks.append(KernelSpec(kernel_name("where", t), (geom, out, ("const b8*", "c"), a, b),
                         f"dc_where<{t}>(g, out, c, a, b);"))
    return ks


def _reduce(code: str) -> list[KernelSpec]:
    t = code
    geom = ("RedGeom", "g")
    common = (geom, (f"{t}*", "out"), (f"const {t}*", "in"), ("i64", "chunk"), ("double", "scale"))
    ks = []
    if t in ("f32", "f64", "i64"):  # other dtypes are cast first: sum(int) is int64, half sums in float
        ks.append(KernelSpec(kernel_name("sum", t), common,
                             f"dc_reduce<{t}>(g, out, in, chunk, scale, RedAcc<{t}>::type(0), DcSum());"))
    ks.append(KernelSpec(kernel_name("amax", t), common,
                         f"dc_reduce<{t}>(g, out, in, chunk, scale, dc_lowest<RedAcc<{t}>::type>(), DcMax());"))
    ks.append(KernelSpec(kernel_name("argmax", t), (geom, ("i64*", "out_idx"), (f"{t}*", "out_val"),
                                                     (f"const {t}*", "in")),
                         f"dc_argmax<{t}>(g, out_idx, out_val, in);"))
    return ks


def _softmax(code: str) -> list[KernelSpec]:
    t = code
    return [KernelSpec(kernel_name("softmax", t), (("RedGeom", "g"), (f"{t}*", "out"), (f"const {t}*", "in"),
                                                   ("i64", "log")),
                       f"dc_softmax<{t}>(g, out, in, log);")]


_MATMUL_INTS = ("m", "n", "k", "batch", "sa_b", "sa_m", "sa_k", "sb_b", "sb_k", "sb_n", "sc_b", "sc_m", "sc_n")
_NLL_INTS = ("n", "classes", "in_s0", "in_s1", "t_s0", "w_s0", "out_s0", "reduction", "ignore_index")


def _matmul(code: str) -> list[KernelSpec]:
    t = code
    params = ((f"{t}*", "c"), (f"const {t}*", "a"), (f"const {t}*", "b"), *(("i64", n) for n in _MATMUL_INTS))
    return [KernelSpec(kernel_name("matmul", t), params, f"dc_matmul<{t}>(c, a, b, {', '.join(_MATMUL_INTS)});")]


def _loss(code: str) -> list[KernelSpec]:
    t = code
    params = ((f"{t}*", "out"), (f"{t}*", "total_weight"), (f"const {t}*", "in"), ("const i64*", "target"),
              (f"const {t}*", "weight"), ("i64*", "bad"), *(("i64", n) for n in _NLL_INTS))
    return [KernelSpec(kernel_name("nll_loss", t), params,
                       f"dc_nll_loss<{t}>(out, total_weight, in, target, weight, bad, {', '.join(_NLL_INTS)});")]


_SPECS = {"pointwise": _pointwise, "reduce": _reduce, "softmax": _softmax, "matmul": _matmul, "loss": _loss}


@functools.cache
def specs(family: str, code: str) -> tuple[KernelSpec, ...]:
    """The kernels of one module (family, dtype code)."""
    if code not in FAMILIES[family]:
        return ()
    return tuple(_SPECS[family](code))


def arg_format(spec: KernelSpec) -> str:
    """The ``struct`` format of a kernel's parameters (pycuda's ``Function.prepare``)."""
    parts = []
    for ctype, _ in spec.params:
        if ctype == "PwGeom":
            parts.append(f"{PWGEOM_BYTES}s")
        elif ctype == "RedGeom":
            parts.append(f"{REDGEOM_BYTES}s")
        elif ctype.endswith("*"):
            parts.append("P")
        elif ctype == "double":
            parts.append("d")
        elif ctype == "i64":
            parts.append("q")
        else:  # pragma: no cover - the table above uses nothing else
            raise TypeError(f"kernel parameter type {ctype!r} is not 8 bytes")
    return "".join(parts)


def _wrapper(spec: KernelSpec) -> str:
    params = ", ".join(f"{ctype} {name}" for ctype, name in spec.params)
    return f'extern "C" __global__ void __launch_bounds__({BLOCK}) {spec.name}({params}) {{ {spec.body} }}'


def _read(name: str) -> str:
    return (KERNEL_DIR / name).read_text()


def module_source(family: str, codes: tuple[str, ...] | str) -> str:
    """One translation unit: the shared header, the family's file, wrappers for ``codes``."""
    if isinstance(codes, str):
        codes = (codes,)
    header = _read("common.cuh").replace("#pragma once\n", "")
    wrappers = [_wrapper(s) for code in codes for s in specs(family, code)]
    return "\n".join([header, f'// ---- {family}.cu', _read(f"{family}.cu"), "// ---- instantiations", *wrappers, ""])


# --- building ------------------------------------------------------------------------------------
def nvcc_path() -> str | None:
    """Nvcc from ``$CUDA_HOME``/``$CUDA_ROOT``, PATH, or /usr/local/cuda."""
    for var in ("CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (pathlib.Path(root) / "bin" / "nvcc").exists():
            return str(pathlib.Path(root) / "bin" / "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    default = pathlib.Path("/usr/local/cuda/bin/nvcc")
    return str(default) if default.exists() else None


@functools.cache
def _nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def _cache_dir() -> pathlib.Path:
    root = os.environ.get("DISPATCHCORE_CUDA_CACHE")
    if root:
        return pathlib.Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(pathlib.Path.home() / ".cache")
    return pathlib.Path(xdg) / "dispatchcore" / "cuda"


NVCC_FLAGS = ("-O3", "-std=c++17")


def compile_cubin(source: str, arch: str, nvcc: str | None = None) -> bytes:
    """Build ``source`` for ``arch`` (``"sm_90"``) to a cubin with nvcc; cached on disk.

    Raises:
        RuntimeError: no nvcc was found, or it failed (the message has its output).
    """
    nvcc = nvcc or nvcc_path()
    if nvcc is None:
        raise RuntimeError("dispatchcore's CUDA backend builds its kernels with nvcc, and none was found: "
                           "install the CUDA toolkit, or set CUDA_HOME (nvcc is looked for in $CUDA_HOME/bin, "
                           "on PATH and in /usr/local/cuda/bin)")
    key = hashlib.sha256("\0".join([source, arch, _nvcc_version(nvcc), *NVCC_FLAGS]).encode()).hexdigest()[:32]
    cache = _cache_dir()
    cached = cache / f"{key}.cubin"
    if cached.exists():
        return cached.read_bytes()
    with tempfile.TemporaryDirectory(prefix="dc-nvcc-") as tmp:
        src = pathlib.Path(tmp) / "module.cu"
        out = pathlib.Path(tmp) / "module.cubin"
        src.write_text(source)
        proc = subprocess.run([nvcc, "-cubin", f"-arch={arch}", *NVCC_FLAGS, "-o", str(out), str(src)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"nvcc failed to build a dispatchcore CUDA module for {arch}:\n"
                               f"{proc.stdout}{proc.stderr}")
        data = out.read_bytes()
    try:  # the cache is an optimisation: a read-only home still works
        cache.mkdir(parents=True, exist_ok=True)
        tmp_path = cache / f".{key}.{os.getpid()}.tmp"
        tmp_path.write_bytes(data)
        tmp_path.replace(cached)
    except OSError:
        pass
    return data


# --- compile checks: nvcc to PTX, ptxas -v --------------------------------------------------------
class PtxasReport(NamedTuple):
    """What ``ptxas -v`` says of one kernel."""

    kernel: str
    registers: int
    spill_stores: int
    spill_loads: int
    smem: int
    stack: int


PTXAS_LINE = "{:<28} {:>5} {:>7} {:>7} {:>6} {:>6}"


def ptxas_report(family: str, codes: tuple[str, ...], arch: str = "sm_90",
                 nvcc: str | None = None) -> tuple[list[PtxasReport], str]:
    """Compile a family's kernels for ``codes`` to PTX (nvcc), then assemble them with ``ptxas -v``.

    Returns the per-kernel reports and ptxas's raw output.

    Raises:
        RuntimeError: nvcc or ptxas failed; the message has the compiler's output.
    """
    nvcc = nvcc or nvcc_path()
    if nvcc is None:
        raise RuntimeError("nvcc not found")
    ptxas = str(pathlib.Path(nvcc).with_name("ptxas"))
    if not pathlib.Path(ptxas).exists():
        ptxas = shutil.which("ptxas") or "ptxas"
    compute = arch.replace("sm_", "compute_")
    with tempfile.TemporaryDirectory(prefix="dc-ptx-") as tmp:
        src = pathlib.Path(tmp) / f"{family}.cu"
        ptx = pathlib.Path(tmp) / f"{family}.ptx"
        src.write_text(module_source(family, codes))
        proc = subprocess.run([nvcc, "-ptx", f"-arch={compute}", *NVCC_FLAGS, "-o", str(ptx), str(src)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"nvcc -ptx failed for {family}:\n{proc.stdout}{proc.stderr}")
        proc = subprocess.run([ptxas, "-v", f"-arch={arch}", "-o", os.devnull, str(ptx)],
                              capture_output=True, text=True, check=False)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise RuntimeError(f"ptxas failed for {family}:\n{log}")
    return _parse_ptxas(log), log


def _parse_ptxas(log: str) -> list[PtxasReport]:
    reports = []
    current: dict[str, int | str] = {}
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = {"kernel": m.group(1)}
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            smem = re.search(r"(\d+) bytes smem", line)
            reports.append(PtxasReport(str(current["kernel"]), int(m.group(1)), int(current.get("spill_stores", 0)),
                                       int(current.get("spill_loads", 0)), int(smem.group(1)) if smem else 0,
                                       int(current.get("stack", 0))))
            current = {}
    return reports

