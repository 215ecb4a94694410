#!/usr/bin/env python3
"""Validate dispatchcore's CUDA backend on a machine with an NVIDIA GPU, in one command (< 5 min).

    python scripts/validate_gpu.py [--wheels .whl] [--out DIR]

On the GPU machine it installs what is missing from the wheel folder (pycuda and its pure-Python
dependencies, attrs; ``pip --no-index --target``, the carry recipe of cuda-backend.md),
checks the driver, builds the kernels (nvcc, in parallel), runs the ``cuda``-marked tests, times
add, matmul 512/4096 and a tiny-MLP training step on the device (against torch, or cupy, on the
same device when one is importable) and prints a short report (also written to ``DIR/report.md``;
DIR defaults to ``$OUT``, else a folder under the system's temp directory).

    python scripts/validate_gpu.py prepare-wheels [--python python3.12] [--wheels .whl]

On a machine with PyPI and nvcc but no GPU: builds the pycuda wheel for the GPU machine's Python
against a generated stub ``libcuda.so.1`` (pycuda has no wheels) and downloads its dependencies,
so the GPU machine needs no network.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYCUDA = "pycuda==2026.1"
# pure-Python wheels the GPU machine may lack (pycuda's METADATA omits numpy, which is there)
DEPENDENCIES = ["pytools", "platformdirs", "siphash24", "mako", "markupsafe", "typing_extensions", "attrs"]
DEADLINE_S = 280  # the whole run must end within five minutes


# --- prepare-wheels: build pycuda on a machine without a GPU ------------------------------------
_STUB_HEADERS = ("cuda.h", "cudaProfiler.h")


def write_stub_libcuda(include: pathlib.Path, out_dir: pathlib.Path) -> pathlib.Path:
    """A symbol-complete fake ``libcuda.so.1``: every ``cuX`` returns CUDA_ERROR_NO_DEVICE (100).

    Only for linking pycuda (and, on a library path in tests, as "a driver without a GPU"); it
    must never be on the library path of a machine with a real driver.
    """
    names: set[str] = set()
    for header in _STUB_HEADERS:
        text = (include / header).read_text(errors="replace")
        names.update(re.findall(r"CUresult\s+CUDAAPI\s+(cu\w+)\s*\(", text))
        names.update(re.findall(r"#define\s+cu\w+\s+(cu\w+)", text))
    names.update(n + suffix for n in list(names) for suffix in ("_ptds", "_ptsz"))
    special = {"cuGetErrorString", "cuGetErrorName", "cuDriverGetVersion"}
    lines = ["typedef int CUresult;"]
    lines += [f"CUresult {n}(void) {{ return 100; }}" for n in sorted(names - special)]
    lines += [
        'CUresult cuGetErrorString(int e, const char **s) { *s = "no CUDA-capable device is detected"; return 0; }',
        'CUresult cuGetErrorName(int e, const char **s) { *s = "CUDA_ERROR_NO_DEVICE"; return 0; }',
        "CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }",
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    source = out_dir / "fake_libcuda.c"
    source.write_text("\n".join(lines) + "\n")
    lib = out_dir / "libcuda.so.1"
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(lib), str(source)],
                   check=True)
    link = out_dir / "libcuda.so"
    if not link.exists():
        link.symlink_to("libcuda.so.1")
    return lib


def prepare_wheels(python: str, wheels: pathlib.Path) -> None:
    """Build the pycuda wheel for ``python`` and download the dependency wheels into ``wheels``."""
    cuda_root = pathlib.Path(os.environ.get("CUDA_ROOT", "/usr/local/cuda")).resolve()
    wheels.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = pathlib.Path(scratch_name)
        stub_dir = scratch / "stub"
        write_stub_libcuda(cuda_root / "include", stub_dir)
        # pycuda reads its options from ~/.aksetup-defaults.py, not from the environment
        (scratch / ".aksetup-defaults.py").write_text(
            f"CUDA_ROOT = {str(cuda_root)!r}\nCUDA_ENABLE_CURAND = False\nCUDADRV_LIB_DIR = [{str(stub_dir)!r}]\n")
        env = dict(os.environ, HOME=str(scratch), PATH=f"{cuda_root / 'bin'}:{os.environ['PATH']}")
        t0 = time.time()
        subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), PYCUDA], env=env, check=True)
        print(f"built {PYCUDA} in {time.time() - t0:.0f} s")
    version = subprocess.run([python, "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"],
                             capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version", version,
                    "--no-deps", "-d", str(wheels), *DEPENDENCIES], check=True)
    for w in sorted(wheels.glob("*.whl")):
        print(f"  {w.name}  {w.stat().st_size / 1e6:.1f} MB")


# --- validate: on the GPU machine -----------------------------------------------------------------
class Report:
    """Lines of the final report, printed as they come and written to ``out/report.md``."""

    def __init__(self, out: pathlib.Path) -> None:
        self.out = out
        self.lines: list[str] = []
        self.failed = False

    def add(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)

    def fail(self, line: str) -> None:
        self.failed = True
        self.add(f"FAILED: {line}")

    def write(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "report.md").write_text("\n".join(self.lines) + "\n")


def _importable(name: str, env: dict[str, str]) -> bool:
    code = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({name!r}) else 1)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True).returncode == 0


def install_missing(wheels: pathlib.Path, site: pathlib.Path, env: dict[str, str], report: Report) -> None:
    """Install pycuda (its dependencies, attrs) from the wheel folder into ``site``; link dispatchcore."""
    missing = [m for m in ("pycuda", "pytools", "mako", "platformdirs", "attrs") if not _importable(m, env)]
    if missing:
        found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
        if not found:
            report.fail(f"missing {', '.join(missing)} and no wheels in {wheels}/ (make them on a machine with PyPI: "
                        "python scripts/validate_gpu.py prepare-wheels --python python3.12)")
            return
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                               "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, found)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            report.fail(f"pip install from {wheels}/: {proc.stderr.strip()[-800:]}")
            return
        report.add(f"- installed {len(found)} wheels from {wheels}/ into {site.name}/ in {time.time() - t0:.1f} s "
                   f"(were missing: {', '.join(missing)})")
    if not _importable("dispatchcore_backends", env):
        _link_dispatchcore(site)
        report.add(f"- dispatchcore used from the working tree (backends linked, entry points in {site.name}/)")


def _link_dispatchcore(site: pathlib.Path) -> None:
    """Make the working tree importable without building it: what an editable install provides."""
    import tomllib

    site.mkdir(parents=True, exist_ok=True)
    link = site / "dispatchcore_backends"
    if not link.exists():
        link.symlink_to(ROOT / "backends", target_is_directory=True)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    version = config["project"]["version"]
    info = site / f"dispatchcore-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: dispatchcore\nVersion: {version}\n")
    eps = config["project"]["entry-points"]["dispatchcore.backends"]
    lines = "".join(f"{k} = {v}\n" for k, v in eps.items())
    (info / "entry_points.txt").write_text("[dispatchcore.backends]\n" + lines)


_FAKE_BOOTSTRAP = """
import sys
sys.path.insert(0, {tests!r})
import test_cuda_backend as t
from dispatchcore_backends.cuda import sources
f = t.FakePycuda(host={host!r})
sys.modules["pycuda"], sys.modules["pycuda.driver"] = f.pycuda, f.driver
sources.compile_cubin = lambda source, arch, nvcc=None: source.encode()
"""


def _python(code: str, env: dict[str, str], fake: str | None, timeout: float) -> subprocess.CompletedProcess:
    prefix = ""
    if fake:
        prefix = _FAKE_BOOTSTRAP.format(tests=str(ROOT / "tests" / "behavior"), host=fake == "host")
    return subprocess.run([sys.executable, "-c", prefix + code], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


_PROBE = """
import json, time
import dispatchcore as dc
dc.load_backends()
ok = dc.cuda.is_available()
out = {"available": ok}
if not ok:
    try:
        dc.cuda.init()
    except dc.cuda.CudaUnavailableError as e:
        out["error"] = str(e)
else:
    from dispatchcore_backends.cuda import runtime, sources
    drv = dc.cuda.driver()
    out["device"] = dc.cuda.get_device_name()
    out["driver"] = drv.get_driver_version()
    rt = runtime.get_runtime()
    out["arch"] = rt.arch
    t0 = time.time()
    rt.prebuild([(f, c) for f, codes in sources.FAMILIES.items() for c in codes], workers=16)
    out["build_s"] = time.time() - t0
print("PROBE " + json.dumps(out))
"""

_BENCH = """
import json, time
import numpy as np
import dispatchcore as dc
from dispatchcore.examples import tiny_mlp
dc.load_backends()
rows = []
ref = None
try:
    import torch
    if torch.cuda.is_available():
        ref = "torch " + torch.__version__
except Exception:
    torch = None
if ref is None:
    try:
        import cupy
        if cupy.cuda.is_available():
            ref = "cupy " + cupy.__version__
    except Exception:
        cupy = None

def timed(fn, sync, reps, warmup=2):
    for _ in range(warmup):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t0) / reps

dsync = dc.cuda.synchronize
def rsync():
    if ref and ref.startswith("torch"):
        torch.cuda.synchronize()
    elif ref:
        cupy.cuda.Device().synchronize()

def row(name, ours, theirs, work, unit):
    rows.append({"name": name, "ours_ms": ours * 1e3, "ref_ms": None if theirs is None else theirs * 1e3,
                 "ours_rate": work / ours, "ref_rate": None if theirs is None else work / theirs, "unit": unit})

def ref_array(x):
    if ref.startswith("torch"):
        return torch.from_numpy(x).cuda()
    return cupy.asarray(x)

for n, reps in ((1 << 10, 200), (1 << 24, 20)):
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    a, b = dc.tensor(x, device="cuda"), dc.tensor(x, device="cuda")
    ours = timed(lambda: a + b, dsync, reps)
    theirs = None
    if ref:
        ra, rb = ref_array(x), ref_array(x)
        theirs = timed(lambda: ra + rb, rsync, reps)
    row(f"add float32 n={n}", ours, theirs, 3 * 4 * n / 1e9, "GB/s")

for n, reps in ((512, 50), (4096, 3)):
    x = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    a = dc.tensor(x, device="cuda")
    ours = timed(lambda: a @ a, dsync, reps, warmup=1)
    theirs = None
    if ref:
        ra = ref_array(x)
        if ref.startswith("torch"):
            torch.backends.cuda.matmul.allow_tf32 = False  # fp32 FMA, as our kernel
        theirs = timed(lambda: ra @ ra, rsync, reps, warmup=1)
    row(f"matmul float32 {n}x{n}", ours, theirs, 2 * n ** 3 / 1e12, "TFLOP/s")

def mlp_step(device):
    x, y = tiny_mlp.make_data()
    params = [p.detach().to(device).requires_grad_() for p in tiny_mlp.init_params()]
    x, y = x.to(device), y.to(device)
    def step():
        loss = tiny_mlp.mse_loss(tiny_mlp.predict(params, x), y)
        loss.backward()
        with dc.no_grad():
            for p in params:
                p -= 0.1 * p.grad
                p.grad = None
        return loss
    return step

ours = timed(mlp_step("cuda"), dsync, 20)
cpu = timed(mlp_step("cpu"), lambda: None, 20)
theirs = None
if ref and ref.startswith("torch"):
    g = torch.Generator().manual_seed(0)
    tx, ty = torch.rand(64, 3, generator=g).cuda() * 2 - 1, torch.rand(64, 1, generator=g).cuda()
    tp = [torch.randn(3, 16, device="cuda", requires_grad=True), torch.zeros(16, device="cuda", requires_grad=True),
          torch.randn(16, 1, device="cuda", requires_grad=True), torch.zeros(1, device="cuda", requires_grad=True)]
    def tstep():
        loss = torch.nn.functional.mse_loss(torch.relu(tx @ tp[0] + tp[1]) @ tp[2] + tp[3], ty)
        loss.backward()
        with torch.no_grad():
            for p in tp:
                p -= 0.1 * p.grad
                p.grad = None
    theirs = timed(tstep, rsync, 20)
row("tiny MLP SGD step (3-16-1, 64 rows)", ours, theirs, 1.0, "steps/s")
rows.append({"name": "tiny MLP step, dispatchcore CPU", "ours_ms": cpu * 1e3, "ref_ms": None, "ours_rate": 1 / cpu,
             "ref_rate": None, "unit": "steps/s"})
print("BENCH " + json.dumps({"ref": ref, "rows": rows}))
"""


def _tail(text: str, n: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def validate(args: argparse.Namespace) -> int:
    t_start = time.time()
    scratch = pathlib.Path(tempfile.gettempdir()) / "dispatchcore-gpu"  # keeps the working tree clean
    out = pathlib.Path(args.out or os.environ.get("OUT") or scratch / "report")
    report = Report(out)
    site = scratch / "site"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    if args.fake:
        env.pop("DISPATCHCORE_CUDA_CACHE", None)
    report.add("# dispatchcore CUDA backend: GPU validation")
    report.add(f"- python {sys.version.split()[0]}, repository {ROOT}")
    if args.fake:
        report.add(f"- **FAKE DEVICE ({args.fake})**: a dry run of this script; no GPU, no CUDA numerics validated")
    else:
        smi = shutil.which("nvidia-smi")
        if smi:
            gpus = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.strip()
            report.add(f"- nvidia-smi: {gpus or '(no GPU listed)'}")
        from_nvcc = shutil.which("nvcc")
        version = subprocess.run([from_nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
        report.add(f"- nvcc: {version[-1] if from_nvcc and version else 'NOT FOUND (kernels cannot be built)'}")
        install_missing(pathlib.Path(args.wheels), site, env, report)
    if not args.fake and not _importable("dispatchcore_backends", env):
        _link_dispatchcore(site)

    # 1. the driver, the device, and every kernel module built (in parallel)
    proc = _python(_PROBE, env, args.fake, timeout=150)
    probe = next((json.loads(line[6:]) for line in proc.stdout.splitlines() if line.startswith("PROBE ")), None)
    if probe is None:
        report.fail(f"probe crashed:\n{_tail(proc.stdout + proc.stderr)}")
        report.write()
        return 1
    if not probe["available"]:
        report.fail(f"CUDA unavailable: {probe.get('error')}")
        report.write()
        return 1
    report.add(f"- device: {probe['device']} ({probe['arch']}), driver {probe['driver']}; "
               f"every kernel module built in {probe['build_s']:.1f} s")

    # 2. the cuda-marked tests
    left = DEADLINE_S - (time.time() - t_start)
    code = ("import sys, pytest; sys.exit(pytest.main(['-m', 'cuda', '-o', 'addopts=', '-p', 'no:cacheprovider', "
            f"'-q', '--maxfail=20', {str(ROOT / 'tests' / 'gpu')!r}]))")
    if args.fake == "host":
        # 256 host threads per block are slow: a float32 subset, no large sizes
        code = code.replace("'--maxfail=20'", "'--maxfail=20', '-k', '(float32 or gradcheck or views or copy or cat) "
                                              "and not large and not long and not 2048 and not arange and not mlp'")
    t0 = time.time()
    try:
        proc = _python(code, env, args.fake, timeout=max(30.0, left - 60))
        log = proc.stdout + proc.stderr
        summary = next((line for line in reversed(log.splitlines()) if " passed" in line or " failed" in line
                        or " error" in line), "(no summary)")
        (out / "pytest.log").parent.mkdir(parents=True, exist_ok=True)
        (out / "pytest.log").write_text(log)
        passed = re.search(r"(\d+) passed", summary)
        if proc.returncode != 0 or passed is None or int(passed.group(1)) == 0:
            report.fail(f"cuda tests: {summary.strip()} ({time.time() - t0:.0f} s); see {out / 'pytest.log'}\n"
                        + _tail("\n".join(line for line in log.splitlines() if line.startswith(("FAILED", "ERROR"))),
                                20))
        else:
            report.add(f"- cuda tests: {summary.strip()} ({time.time() - t0:.0f} s)")
    except subprocess.TimeoutExpired:
        report.fail(f"cuda tests did not finish in {left - 60:.0f} s")

    # 3. benchmarks
    left = DEADLINE_S - (time.time() - t_start)
    if args.fake == "host":
        report.add("- benchmarks skipped: kernels on CPU threads time nothing of interest")
    elif left < 30:
        report.add("- benchmarks skipped: out of time")
    else:
        try:
            proc = _python(_BENCH, env, args.fake, timeout=left - 10)
            bench = next((json.loads(line[6:]) for line in proc.stdout.splitlines() if line.startswith("BENCH ")),
                         None)
            if bench is None:
                report.fail(f"benchmarks crashed:\n{_tail(proc.stdout + proc.stderr)}")
            else:
                ref = bench["ref"] or "none importable"
                report.add("")
                report.add(f"| benchmark | dispatchcore ms | rate | reference ({ref}) ms | rate |")
                report.add("|---|---:|---:|---:|---:|")
                for r in bench["rows"]:
                    theirs = "" if r["ref_ms"] is None else f"{r['ref_ms']:.3f}"
                    their_rate = "" if r["ref_rate"] is None else f"{r['ref_rate']:.2f} {r['unit']}"
                    report.add(f"| {r['name']} | {r['ours_ms']:.3f} | {r['ours_rate']:.2f} {r['unit']} | {theirs} | "
                               f"{their_rate} |")
        except subprocess.TimeoutExpired:
            report.fail("benchmarks did not finish in time")
    report.add("")
    report.add(f"total {time.time() - t_start:.0f} s; {'FAILED' if report.failed else 'OK'}; report in {out}")
    report.write()
    return 1 if report.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="validate", choices=["validate", "prepare-wheels"])
    parser.add_argument("--wheels", default=str(ROOT / ".whl"), help="folder of wheels to install from")
    parser.add_argument("--out", default=None, help="folder for report.md and pytest.log (default $OUT, else a "
                                                    "temp folder)")
    parser.add_argument("--python", default="python3.12", help="prepare-wheels: the GPU machine's Python")
    parser.add_argument("--fake", choices=["numpy", "host"], default=None,
                        help="dry run without a GPU on the tests' FAKE device (numpy emulation, or the CUDA C "
                             "compiled for the host); validates the script, not the kernels on a GPU")
    args = parser.parse_args(argv)
    if args.command == "prepare-wheels":
        prepare_wheels(args.python, pathlib.Path(args.wheels))
        return 0
    return validate(args)


if __name__ == "__main__":
    sys.exit(main())
