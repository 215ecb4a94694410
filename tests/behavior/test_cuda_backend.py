"""The CUDA backend without a GPU: registration, tables, the errors, data plumbing, compile checks.

What runs here, and what it proves:

* Registration and the computed tables of the CUDA keys: pure Python, as on a GPU machine.
* Import safety and the one clear error (pycuda / driver / device missing), with pycuda's
  failures reproduced by import hooks and a **FAKE** driver module.
* Data plumbing through a **FAKE pycuda** (``FakePycuda`` below): device memory is host memory,
  and each kernel launch is checked against the kernel's C signature (argument count and types,
  the geometry struct, grid limits) and then *emulated in numpy* from the same arguments the
  real kernel would read. This exercises transfers, views, offsets, version counters, dtype
  promotion, launch arithmetic and whole training steps on the dispatch path. It validates
  **no CUDA C numerics**: those are checked on a GPU only (``tests/gpu/test_cuda.py``).
* Compile checks: every kernel family, every dtype, through nvcc to PTX for sm_90 and ptxas -v
  (registers, spills), when nvcc is on this machine.
"""

from __future__ import annotations

import bisect
import importlib.abc
import importlib.machinery
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
from dispatchcore_backends import cuda as cuda_backend
from dispatchcore_backends.cuda import data as cuda_data
from dispatchcore_backends.cuda import runtime, sources

import dispatchcore as dc
from dispatchcore import resolution
from dispatchcore.ops import aten


@pytest.fixture(scope="module", autouse=True)
def backends_loaded():
    dc.load_backends()
    assert dc.find_op("aten::add.Tensor").has_kernel_for_dispatch_key("CUDA")


# ==================================================================================================
# FAKE pycuda: host memory standing in for device memory, numpy standing in for the kernels.
# ==================================================================================================
class FakeError(Exception):
    """pycuda.driver.Error (pycuda's RuntimeError derives from it, not from builtins')."""


class FakeMemory:
    """Allocations at made-up addresses; a pointer resolves to (buffer, byte offset)."""

    def __init__(self) -> None:
        self.bases: list[int] = []
        self.buffers: dict[int, np.ndarray] = {}
        self.live = 0

    def alloc(self, nbytes: int) -> int:
        # host memory at its real address (host-compiled kernels dereference it), NaN-poisoned so
        # that reading memory a kernel should have written shows up
        buf = np.full(nbytes + 256, 0xFF, np.uint8)
        base = buf.ctypes.data
        self.buffers[base] = buf[:nbytes]
        bisect.insort(self.bases, base)
        self.live += 1
        return base

    def free(self, base: int) -> None:
        del self.buffers[base]
        self.bases.remove(base)
        self.live -= 1

    def resolve(self, ptr: int) -> tuple[np.ndarray, int]:
        i = bisect.bisect_right(self.bases, ptr) - 1
        if i < 0:
            raise AssertionError(f"fake device: pointer 0x{ptr:x} is in no allocation")
        base = self.bases[i]
        buf = self.buffers[base]
        off = ptr - base
        if off > buf.size:
            raise AssertionError(f"fake device: pointer 0x{ptr:x} is past its allocation")
        return buf, off

    def view(self, ptr: int, dtype: np.dtype, shape, strides) -> np.ndarray:
        """An ndarray over device memory (element strides); numpy checks it stays in the allocation."""
        buf, off = self.resolve(ptr)
        dtype = np.dtype(dtype)
        shape = tuple(int(s) for s in shape)
        if 0 in shape:
            return np.empty(shape, dtype)
        return np.ndarray(shape, dtype, buf, off, tuple(int(s) * dtype.itemsize for s in strides))


class FakeAllocation:
    def __init__(self, memory: FakeMemory, nbytes: int) -> None:
        self.memory = memory
        self.base = memory.alloc(nbytes)

    def __int__(self) -> int:
        return self.base

    def __del__(self) -> None:
        self.memory.free(self.base)


_SIG = re.compile(r'extern "C" __global__ void __launch_bounds__\((\d+)\) (\w+)\(([^)]*)\)')


class FakeModule:
    """A 'cubin' that is the module's source text: kernels are looked up by their C signature."""

    def __init__(self, memory: FakeMemory, source: str, log: list, host: bool = False) -> None:
        self.memory = memory
        self.log = log
        self.lib = build_host_library(source) if host else None
        self.kernels = {}
        for bounds, name, params in _SIG.findall(source):
            ps = tuple(tuple(p.strip().rsplit(" ", 1)) for p in params.split(","))
            self.kernels[name] = (int(bounds), ps)

    def get_function(self, name: str) -> FakeFunction:
        if name not in self.kernels:
            raise FakeError(f"cuModuleGetFunction failed: named symbol not found ({name})")
        return FakeFunction(self.memory, name, *self.kernels[name], self.log, self.lib)


class FakeFunction:
    def __init__(self, memory, name, bounds, params, log, lib=None) -> None:
        self.memory, self.name, self.bounds, self.params, self.log = memory, name, bounds, params, log
        self.lib = lib
        self.fmt = None

    def prepare(self, fmt: str) -> FakeFunction:
        expected = "".join({"PwGeom": f"{sources.PWGEOM_BYTES}s", "RedGeom": f"{sources.REDGEOM_BYTES}s",
                            "double": "d", "i64": "q"}.get(t, "P" if t.endswith("*") else "?") for t, _ in self.params)
        assert fmt == expected, (self.name, fmt, expected)
        self.fmt = fmt
        return self

    def prepared_call(self, grid, block, *args, shared_size=0):
        assert self.fmt is not None, "launched before prepare()"
        assert block == (self.bounds, 1, 1), (self.name, block)
        assert 1 <= len(grid) <= 3 and all(isinstance(g, int) and g >= 1 for g in grid), (self.name, grid)
        assert grid[0] < 2**31 and all(g <= 65535 for g in grid[1:]), (self.name, grid)
        assert shared_size <= 48 * 1024
        assert len(args) == len(self.params), (self.name, len(args), len(self.params))
        values = {}
        for (ctype, pname), value in zip(self.params, args):
            if ctype in ("PwGeom", "RedGeom"):
                size = sources.PWGEOM_BYTES if ctype == "PwGeom" else sources.REDGEOM_BYTES
                assert isinstance(value, bytes) and len(value) == size, (self.name, pname)
                value = np.frombuffer(value, np.int64)
            elif ctype.endswith("*"):
                assert isinstance(value, int) and value >= 0, (self.name, pname, value)
                if value:
                    self.memory.resolve(value)  # a live allocation
            elif ctype == "double":
                assert isinstance(value, float), (self.name, pname, value)
            else:
                assert isinstance(value, int) and -(2**63) <= value < 2**63, (self.name, pname, value)
            values[pname] = value
        m = re.fullmatch(r"dc_(\w+)_(\w+?)", self.name)
        op, code = m.group(1), m.group(2)
        self.log.append(self.name)
        if self.lib is not None:  # the real CUDA C, compiled for the host
            _run_on_host(self.lib, self.name, self.params, grid, args)
        else:
            EMULATORS[_family_of(op)](self.memory, op, code, grid, values)


def _family_of(op: str) -> str:
    if op in ("sum", "amax", "argmax"):
        return "reduce"
    if op in ("softmax", "matmul", "nll_loss"):
        return op
    return "pointwise"


# --- the numpy emulation of each kernel family (reads the same arguments as the CUDA C) -----------
def _acc(code: str) -> np.dtype:
    return np.dtype(np.float32) if code == "f16" else sources.CODES[code]


def _red_acc(code: str) -> np.dtype:
    return np.dtype(np.int32) if code in ("u8", "i8", "i16") else _acc(code)


def _cvt(values, dt: np.dtype) -> np.ndarray:
    """Cvt<To>::from: != 0 for bool, floating -> uint8 through int64, otherwise a C cast."""
    values = np.asarray(values)
    with np.errstate(all="ignore"):
        if dt == np.bool_:
            return values != 0
        if dt == np.uint8 and values.dtype.kind == "f":
            return values.astype(np.int64).astype(np.uint8)
        return values.astype(dt)


def _scalar(sd: float, si: int, c: np.dtype, code: str = ""):
    if code == "f16":  # dc_scalar_as<f16>: rounded to half first
        return np.float32(np.float16(sd))
    if c == np.bool_:
        return np.bool_(si != 0)
    if c.kind == "f":
        return c.type(sd)
    return np.array(si, np.int64).astype(c)[()]


def _powi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    negative = b < 0
    with np.errstate(all="ignore"):
        positive = np.power(a, np.where(negative, 0, b).astype(a.dtype))
    odd = (b % 2) != 0
    at_negative = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return np.where(negative, at_negative, positive)


def _pow(a, b):
    return np.power(a, b) if a.dtype.kind == "f" else _powi(a, b)


_UNARY = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin,
          "cos": np.cos, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
          "relu": lambda x: np.where(np.isnan(x) | (x > 0), x, 0).astype(x.dtype) if x.dtype.kind == "f"
          else np.where(x > 0, x, 0).astype(x.dtype)}
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


def _pw_views(memory, g, ptrs, dtypes):
    ndim, numel = int(g[0]), int(g[1])
    sizes = g[2:2 + ndim]
    views = []
    for k, (ptr, dt) in enumerate(zip(ptrs, dtypes)):
        base = 2 + sources.MAX_DIMS + k * sources.MAX_DIMS
        views.append(memory.view(ptr, dt, sizes, g[base:base + ndim]))
    assert math.prod(int(s) for s in sizes) == numel
    return views


def _emulate_pointwise(memory, op, code, grid, v):
    t = sources.CODES[code]
    c = _acc(code)
    g = v["g"]
    with np.errstate(all="ignore"):
        if op == "fill":
            (out,) = _pw_views(memory, g, [v["out"]], [t])
            out[...] = _cvt(np.array(_scalar(v["sd"], v["si"], c)), t)
        elif op.startswith("cast_"):
            src = sources.CODES[op[5:]]
            out, a = _pw_views(memory, g, [v["out"], v["a"]], [t, src])
            out[...] = _cvt(a.astype(np.float32) if src == np.float16 else a, t)
        elif op == "where":
            out, cond, a, b = _pw_views(memory, g, [v["out"], v["c"], v["a"], v["b"]], [t, np.bool_, t, t])
            out[...] = np.where(cond, a, b)
        elif op == "clamp":
            out, a = _pw_views(memory, g, [v["out"], v["a"]], [t, t])
            x = a.astype(c)
            lo, hi = _scalar(v["lod"], v["loi"], c, code), _scalar(v["hid"], v["hii"], c, code)
            r = x.copy()
            if v["flags"] & 1:
                r = np.where(r < lo, lo, r)
            if v["flags"] & 2:
                r = np.where(r > hi, hi, r)
            out[...] = _cvt(np.where(np.isnan(x), x, r) if c.kind == "f" else r, t)
        elif op == "logit":
            out, a = _pw_views(memory, g, [v["out"], v["a"]], [t, t])
            x, eps = a.astype(c), c.type(v["sd"])
            if eps >= 0:
                hi = c.type(1) - eps
                x = np.where(x < eps, eps, np.where(x > hi, hi, x))
            out[...] = _cvt(np.where(x == 1, np.inf, np.log(x / (1 - x))), t)
        elif op == "logit_backward":
            out, a, b = _pw_views(memory, g, [v["out"], v["a"], v["b"]], [t, t, t])
            dy, x, eps = a.astype(c), b.astype(c), c.type(v["sd"])
            lo = c.type(0) if eps < 0 else eps
            inside = np.where((x == 0) | (x == 1), dy * np.inf, dy / (x * (1 - x)))
            out[...] = _cvt(np.where((x < lo) | (x > 1 - lo), np.nan if eps < 0 else 0, inside), t)
        elif op.endswith("_s"):
            name = op[:-2]
            out_t = np.dtype(np.bool_) if name in _CMP else t
            out, a = _pw_views(memory, g, [v["out"], v["a"]], [out_t, t])
            x, s = a.astype(c), _scalar(v["sd"], v["si"], c, code)
            s_arr = np.array(s, c)
            r = {"add": lambda: x + s_arr, "mul": lambda: x * s_arr, "div": lambda: x / s_arr,
                 "pow": lambda: _pow(x, np.broadcast_to(s_arr, x.shape)),
                 "rpow": lambda: _pow(np.broadcast_to(s_arr, x.shape).astype(c), x)}.get(
                     name, lambda: _CMP[name](x, s_arr) if name in _CMP else None)()
            out[...] = _cvt(r, out_t)
        elif op in _UNARY:
            out, a = _pw_views(memory, g, [v["out"], v["a"]], [t, t])
            out[...] = _cvt(_UNARY[op](a.astype(c)), t)
        else:
            out_t = np.dtype(np.bool_) if op in _CMP else t
            out, a, b = _pw_views(memory, g, [v["out"], v["a"], v["b"]], [out_t, t, t])
            x, y = a.astype(c), b.astype(c)
            if op in _CMP:
                r = _CMP[op](x, y)
            elif op == "add":
                alpha = _scalar(v["sd"], v["si"], c)
                r = (x | (alpha & y)) if c == np.bool_ else x + np.array(alpha, c) * y
            elif op == "mul":
                r = (x & y) if c == np.bool_ else x * y
            elif op == "div":
                r = x / y
            elif op == "pow":
                r = _pow(x, y)
            elif op == "sqdiff":
                r = (x - y) * (x - y)
            elif op == "bitand":
                r = x & y
            elif op == "xlogy":
                r = np.where(np.isnan(y), y, np.where(x == 0, 0, x * np.log(y)))
            else:
                raise AssertionError(f"fake device: no emulation of {op}")
            out[...] = _cvt(r, out_t)


def _red_views(memory, g, in_ptr, t):
    nk, nr, knumel, rnumel = (int(v) for v in g[:4])
    m = sources.MAX_DIMS
    ks, kin, kout = g[4:4 + nk], g[4 + m:4 + m + nk], g[4 + 2 * m:4 + 2 * m + nk]
    rs, rin, rout = g[4 + 3 * m:4 + 3 * m + nr], g[4 + 4 * m:4 + 4 * m + nr], g[4 + 5 * m:4 + 5 * m + nr]
    assert knumel == math.prod(int(s) for s in ks) and rnumel == math.prod(int(s) for s in rs), "fake device: RedGeom"
    assert all(int(s) > 1 for s in (*ks, *rs)), "fake device: size-1 dimensions should have been merged away"
    x = memory.view(in_ptr, t, [*ks, *rs], [*kin, *rin])
    return ks, rs, rout, kout, x


def _emulate_reduce(memory, op, code, grid, v):
    t = sources.CODES[code]
    g = v["g"]
    ks, rs, _, kout, x = _red_views(memory, g, v["in"], t)
    n_out, n_red = math.prod(int(s) for s in ks), math.prod(int(s) for s in rs)
    assert grid[0] == n_out, f"fake device: {op} launched {grid[0]} blocks for {n_out} outputs"
    flat = x.reshape(*[int(s) for s in ks], n_red).astype(_red_acc(code))
    if op == "argmax":
        assert len(grid) == 1
        idx = np.argmax(flat, axis=-1) if n_red else np.zeros(flat.shape[:-1], np.int64)
        memory.view(v["out_idx"], np.int64, ks, kout)[...] = idx
        if v["out_val"]:
            memory.view(v["out_val"], t, ks, kout)[...] = _cvt(np.take_along_axis(flat, idx[..., None], -1)[..., 0], t)
        return
    chunks, chunk = grid[1], v["chunk"]
    assert chunks * chunk >= n_red, "fake device: the chunks do not cover the reduction"
    out = memory.view(v["out"], t, [*ks, chunks], [*kout, 1])
    acc = _red_acc(code)
    for c in range(chunks):
        part = flat[..., c * chunk:min((c + 1) * chunk, n_red)]
        with np.errstate(all="ignore"):
            if op == "sum":
                r = part.sum(axis=-1, dtype=acc)
            else:
                lowest = -np.inf if acc.kind == "f" else np.iinfo(acc).min
                r = np.max(part, axis=-1, initial=lowest).astype(acc)
            if v["scale"] != 1.0:
                r = r * acc.type(v["scale"])
        out[..., c] = _cvt(r, t)


def _emulate_softmax(memory, op, code, grid, v):
    t = sources.CODES[code]
    g = v["g"]
    ks, rs, rout, kout, x = _red_views(memory, g, v["in"], t)
    assert len(rs) <= 1 and grid[0] == math.prod(int(s) for s in ks)
    out = memory.view(v["out"], t, [*ks, *rs], [*kout, *rout])
    if not len(rs):  # a softmax dimension of size 1 was merged away: the kernel reads rnumel == 1
        x, out = x[..., None], out[..., None]
    a = x.astype(_acc(code))
    with np.errstate(all="ignore"):
        m = np.max(a, axis=-1, keepdims=True)
        s = np.exp(a - m).sum(axis=-1, keepdims=True)
        out[...] = _cvt(a - (m + np.log(s)) if v["log"] else np.exp(a - m) / s, t)


def _emulate_matmul(memory, op, code, grid, v):
    t = sources.CODES[code]
    m, n, k, batch = v["m"], v["n"], v["k"], v["batch"]
    assert grid[0] * 64 >= n and grid[1] * 64 >= m and len(grid) == 3, "fake device: the grid misses tiles"
    a = memory.view(v["a"], t, (batch, m, k), (v["sa_b"], v["sa_m"], v["sa_k"])).astype(_acc(code))
    b = memory.view(v["b"], t, (batch, k, n), (v["sb_b"], v["sb_k"], v["sb_n"])).astype(_acc(code))
    memory.view(v["c"], t, (batch, m, n), (v["sc_b"], v["sc_m"], v["sc_n"]))[...] = _cvt(a @ b, t)


def _emulate_nll_loss(memory, op, code, grid, v):
    t = sources.CODES[code]
    acc = _acc(code)
    n, classes = v["n"], v["classes"]
    x = memory.view(v["in"], t, (n, classes), (v["in_s0"], v["in_s1"])).astype(acc)
    target = memory.view(v["target"], np.int64, (n,), (v["t_s0"],))
    w = (memory.view(v["weight"], t, (classes,), (v["w_s0"],)).astype(acc) if v["weight"]
         else np.ones(classes, acc))
    valid = target != v["ignore_index"]
    bad = valid & ((target < 0) | (target >= classes))
    if bad.any():
        memory.view(v["bad"], np.int64, (1,), (1,))[0] = target[np.argmax(bad)]
    ok = valid & ~bad
    safe = np.where(ok, target, 0)
    weights = np.where(ok, w[safe], 0).astype(acc)
    losses = np.where(ok, -x[np.arange(n), safe] * weights, 0).astype(acc)
    if v["reduction"] == 0:
        memory.view(v["out"], t, (n,), (v["out_s0"],))[...] = _cvt(losses, t)
        return
    assert grid == (1,), "fake device: the reducing nll_loss is one block"
    total = weights.sum(dtype=acc)
    with np.errstate(all="ignore"):
        loss = losses.sum(dtype=acc) / total if v["reduction"] == 1 else losses.sum(dtype=acc)
    memory.view(v["out"], t, (), ())[...] = _cvt(loss, t)
    memory.view(v["total_weight"], t, (), ())[...] = _cvt(total, t)


EMULATORS = {"pointwise": _emulate_pointwise, "reduce": _emulate_reduce, "softmax": _emulate_softmax,
             "matmul": _emulate_matmul, "nll_loss": _emulate_nll_loss}


# --- CUDA C executed on the host: the real kernel sources, compiled by g++ against a shim -----------
# The shim maps CUDA's execution model onto threads: a block is 256 std::threads, __syncthreads is a
# block barrier, __shfl_down_sync goes through a per-warp buffer with a warp barrier, __shared__ is a
# function-static (blocks run one after another), half is GCC's _Float16. It runs the kernels' own
# index arithmetic, tiling and reductions (slowly); it says nothing about GPU memory or timing.
HOST_SHIM = r"""
#include <barrier>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
struct dim3 { unsigned x = 1, y = 1, z = 1; };
thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
typedef _Float16 __half;
inline float __half2float(__half h) { return (float)h; }
inline __half __float2half(float f) { return (__half)f; }
inline __half __double2half(double d) { return (__half)d; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
namespace dc_emu {
struct Warp { std::barrier<> bar{32}; unsigned long long buf[32]; };
static std::barrier<>* block_barrier;
static Warp* warps;
}
inline void __syncthreads() { dc_emu::block_barrier->arrive_and_wait(); }
template <class T> T __shfl_down_sync(unsigned, T v, int off) {
  const unsigned lane = threadIdx.x & 31u;
  dc_emu::Warp& w = dc_emu::warps[threadIdx.x >> 5];
  std::memcpy(&w.buf[lane], &v, sizeof(T));
  w.bar.arrive_and_wait();
  const unsigned src = lane + off < 32 ? lane + off : lane;
  T r;
  std::memcpy(&r, &w.buf[src], sizeof(T));
  w.bar.arrive_and_wait();
  return r;
}
template <class F> void dc_launch(long long gx, long long gy, long long gz, F f) {
  blockDim = dim3{256, 1, 1};
  gridDim = dim3{(unsigned)gx, (unsigned)gy, (unsigned)gz};
  for (unsigned z = 0; z < gz; ++z) for (unsigned y = 0; y < gy; ++y) for (unsigned x = 0; x < gx; ++x) {
    std::barrier<> bar(256);
    dc_emu::Warp warps[8];
    dc_emu::block_barrier = &bar;
    dc_emu::warps = warps;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 256; ++t)
      threads.emplace_back([=] { threadIdx = dim3{t, 0, 0}; blockIdx = dim3{x, y, z}; f(); });
    for (auto& th : threads) th.join();
  }
}
"""
_GXX = shutil.which("g++")


def _host_launchers(source: str) -> str:
    out = []
    for _, name, params in _SIG.findall(source):
        ps = [p.strip().rsplit(" ", 1) for p in params.split(",")]
        decl = ", ".join(f"const {t}* {n}" if t in ("PwGeom", "RedGeom") else f"{t} {n}" for t, n in ps)
        call = ", ".join(f"*{n}" if t in ("PwGeom", "RedGeom") else n for t, n in ps)
        out.append(f'extern "C" void run_{name}(long long gx, long long gy, long long gz, {decl}) '
                   f"{{ dc_launch(gx, gy, gz, [=] {{ {name}({call}); }}); }}")
    return "\n".join(out)


def build_host_library(source: str):
    """The module's CUDA C compiled for the host (cached by source hash for the session)."""
    import ctypes
    import hashlib
    import tempfile

    key = hashlib.sha256((HOST_SHIM + source).encode()).hexdigest()[:24]
    cache = os.path.join(tempfile.gettempdir(), f"dc-host-cuda-{os.getuid()}")
    os.makedirs(cache, exist_ok=True)
    lib_path = os.path.join(cache, f"{key}.so")
    if not os.path.exists(lib_path):
        text = HOST_SHIM + source.replace("#include <cuda_fp16.h>", "") + "\n" + _host_launchers(source)
        src = os.path.join(cache, f"{key}.cpp")
        with open(src, "w") as f:
            f.write(text)
        tmp = f"{lib_path}.{os.getpid()}"
        subprocess.run([_GXX, "-std=c++20", "-O1", "-fPIC", "-shared", "-pthread", "-w", "-o", tmp, src], check=True)
        os.replace(tmp, lib_path)
    return ctypes.CDLL(lib_path)


def _run_on_host(lib, name, params, grid, args):
    import ctypes

    fn = getattr(lib, f"run_{name}")
    cargs = [ctypes.c_longlong(g) for g in (*grid, 1, 1)[:3]]
    keep = []
    for (ctype, _), value in zip(params, args):
        if ctype in ("PwGeom", "RedGeom"):
            buf = ctypes.create_string_buffer(value, len(value))
            keep.append(buf)
            cargs.append(ctypes.cast(buf, ctypes.c_void_p))
        elif ctype.endswith("*"):
            cargs.append(ctypes.c_void_p(value))
        elif ctype == "double":
            cargs.append(ctypes.c_double(value))
        else:
            cargs.append(ctypes.c_longlong(value))
    fn(*cargs)


class FakePycuda:
    """``pycuda`` and ``pycuda.driver`` modules over a FakeMemory (no ``pycuda.tools``: no pool)."""

    def __init__(self, *, init_error: str | None = None, count: int = 1, host: bool = False) -> None:
        self.memory = FakeMemory()
        self.launches: list[str] = []
        self.copies = {"htod": 0, "dtoh": 0, "dtod": 0}
        self.pycuda = types.ModuleType("pycuda")
        self.pycuda.__doc__ = "FAKE pycuda for tests: host memory, numpy-emulated kernels"
        drv = self.driver = types.ModuleType("pycuda.driver")
        self.pycuda.driver = drv
        memory, copies, launches = self.memory, self.copies, self.launches

        def init(flags=0):
            if init_error is not None:
                raise FakeError(init_error)

        class Context:
            @staticmethod
            def synchronize():
                pass

            def push(self):
                pass

            def pop(self):
                pass

        class Device:
            @staticmethod
            def count():
                return count

            def __init__(self, i):
                self.i = i

            def compute_capability(self):
                return (9, 0)

            def name(self):
                return f"FAKE H200 (host memory, {'CUDA C on CPU threads' if host else 'numpy kernels'})"

            def retain_primary_context(self):
                return Context()

        def memcpy_htod(ptr, host):
            host = np.ascontiguousarray(host)
            buf, off = memory.resolve(int(ptr))
            buf[off:off + host.nbytes] = host.view(np.uint8).reshape(-1)
            copies["htod"] += 1

        def memcpy_dtoh(host, ptr):
            buf, off = memory.resolve(int(ptr))
            assert host.flags.c_contiguous and host.flags.writeable
            host.reshape(-1).view(np.uint8)[...] = buf[off:off + host.nbytes]
            copies["dtoh"] += 1

        def memcpy_dtod(dst, src, nbytes):
            sbuf, soff = memory.resolve(int(src))
            dbuf, doff = memory.resolve(int(dst))
            dbuf[doff:doff + nbytes] = sbuf[soff:soff + nbytes].copy()
            copies["dtod"] += 1

        drv.Error = FakeError
        drv.init = init
        drv.get_driver_version = lambda: 13000
        drv.Device = Device
        drv.Context = Context
        drv.mem_alloc = lambda nbytes: FakeAllocation(memory, nbytes)
        drv.memcpy_htod, drv.memcpy_dtoh, drv.memcpy_dtod = memcpy_htod, memcpy_dtoh, memcpy_dtod
        drv.module_from_buffer = lambda buf: FakeModule(memory, bytes(buf).decode(), launches, host)


@pytest.fixture
def use_pycuda(monkeypatch):
    """Install a pycuda stand-in, with fresh CUDA state; the real state is restored after."""
    old_state = dc.cuda._reset(None)
    old_runtime = runtime.set_runtime(None)

    def install(fake: FakePycuda | None = None, *, modules: dict | None = None) -> FakePycuda | None:
        for name in [n for n in sys.modules if n == "pycuda" or n.startswith("pycuda.")]:
            monkeypatch.delitem(sys.modules, name)
        if fake is not None:
            monkeypatch.setitem(sys.modules, "pycuda", fake.pycuda)
            monkeypatch.setitem(sys.modules, "pycuda.driver", fake.driver)
        for name, module in (modules or {}).items():
            monkeypatch.setitem(sys.modules, name, module)
        # the fake 'cubin' is the source text: no nvcc in these tests (see the compile checks)
        monkeypatch.setattr(sources, "compile_cubin", lambda source, arch, nvcc=None: source.encode())
        return fake

    yield install
    runtime.set_runtime(old_runtime)
    dc.cuda._reset(old_state)


@pytest.fixture
def fake(use_pycuda):
    return use_pycuda(FakePycuda())


@pytest.fixture(params=["numpy-emulation", "cuda-c-on-host"])
def dev(request, use_pycuda):
    """The FAKE device twice: kernels emulated in numpy, then the CUDA C itself run on CPU threads."""
    if request.param == "cuda-c-on-host" and _GXX is None:
        pytest.skip("g++ is needed to run the CUDA C on the host")
    return use_pycuda(FakePycuda(host=request.param == "cuda-c-on-host"))


def cpu(t):
    return t.cpu().numpy()


# ==================================================================================================
# Registration and tables (pure Python)
# ==================================================================================================
def test_every_cuda_kernel_is_registered_at_the_cuda_key():
    for name, _ in cuda_backend.KERNELS:
        op = dc.find_op(f"aten::{name}")
        assert op.has_kernel_for_dispatch_key("CUDA"), name


# Operators with CPU and Meta kernels but no CUDA C kernel yet: on a CUDA tensor they raise the
# dispatcher's "Could not run ... with arguments from the 'CUDA' backend" error.
CPU_ONLY = {"div.Tensor_mode", "div_.Tensor_mode", "maximum", "minimum",
            "clamp.Tensor", "clamp_.Tensor", "clamp_min.Tensor", "clamp_min_.Tensor", "clamp_max.Tensor",
            "clamp_max_.Tensor",
            "rsub.Tensor", "fill_.Tensor",  # torch: per-backend kernels, none on CUDA here yet
            "arange.start_out", "linspace.out", "logspace.out", "eye.out", "eye.m_out"}  # CUDA: HOST_FILLED

# Computed on the host and uploaded: CUDA's own kernels where torch's CUDA runs the composite (an
# empty tensor filled by arange.start_out, linspace.out, uniform_, normal_)
HOST_FILLED = {"arange", "arange.start", "arange.start_step", "linspace", "logspace", "eye", "eye.m", "rand",
               "randn"}

# Family operators (not in cpu.KERNELS) with a CUDA kernel: the backward operators training calls
# (relu's, softmax's, mse_loss's, tanh's and sigmoid's), and those of backends/cuda/families.py
FAMILY_KERNELS = {"threshold_backward.grad_input", "_softmax_backward_data.out", "mse_loss_backward",
                  "mse_loss_backward.grad_input", "tanh_backward.grad_input", "sigmoid_backward.grad_input",
                  "dot", "vdot", "xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor", "logit", "logit_", "logit.out",
                  "logit_backward", "logit_backward.grad_input", "index_add", "index_add_", "index_add.out", "put_",
                  "bitwise_and.Tensor_out", "masked_fill_.Scalar", "masked_fill_.Tensor"}


# CPU keeps these for speed where torch has only a CompositeExplicitAutograd kernel; CUDA, like
# torch's CUDA, is served by the composite (the others in cpu.SPEED_KERNELS have no composite yet)
COMPOSITE_ON_CUDA = {"sum", "mean", "add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar", "mul.Scalar",
                     "mul_.Scalar", "div.Scalar", "div_.Scalar", "div.Scalar_mode", "div_.Scalar_mode", "clone",
                     "t", "transpose.int", "permute", "expand", "squeeze", "squeeze.dim", "unsqueeze", "select.int",
                     "slice.Tensor", "alias", "zeros", "ones", "full", "scalar_tensor", "_to_copy"}


def test_cuda_covers_the_cpu_backends_operators():
    from dispatchcore_backends import cpu

    assert COMPOSITE_ON_CUDA <= set(cpu.SPEED_KERNELS)
    assert ({n for n, _ in cpu.KERNELS} - CPU_ONLY - COMPOSITE_ON_CUDA) | HOST_FILLED | FAMILY_KERNELS == \
        {n for n, _ in cuda_backend.KERNELS}
    assert CPU_ONLY <= {n for n, _ in cpu.KERNELS}


def test_register_twice_returns_the_live_library():
    assert cuda_backend.register() is cuda_backend.register()


def test_computed_table_of_add_routes_cuda_keys():
    op = dc.find_op("aten::add.Tensor")
    table = op.dump_table()
    assert "\nCUDA: registered at " in "\n" + table and "[kernel]" in table.split("CUDA: ")[1].splitlines()[0]
    assert "AutogradCUDA: registered at" in table and "[autograd kernel]" in table.split("AutogradCUDA: ")[1]
    assert "AutocastCUDA: fallthrough" in table


@pytest.mark.parametrize("name", ["add.Tensor", "mm", "sum.dim_IntList", "_softmax", "cat", "view",
                                  "empty.memory_format", "nll_loss_forward"])
def test_cuda_table_entries_equal_the_slow_resolution(name):
    op = dc.find_op(f"aten::{name}")
    fallbacks = dc.get_dispatcher()._fallbacks
    for key in ("CUDA", "AutogradCUDA", "AutocastCUDA", "BackendSelect", "ADInplaceOrView"):
        k = dc.parse_dispatch_key(key)
        assert op.table_entry(k) == resolution.compute_table_entry(op._kernels, fallbacks, k), (name, key)
    assert op.table_entry(dc.DispatchKey.CUDA)[1] == "kernel"


def test_copy_and_to_copy_reach_the_device_through_the_composite_and_copy_stub(fake):
    from dispatchcore.native.stubs import copy_stub

    for name in ("copy_", "_to_copy"):
        assert dc.find_op(f"aten::{name}").table_entry(dc.DispatchKey.CUDA)[1] == "default backend kernel"
    assert "cuda" in repr(copy_stub)
    x = dc.tensor([[1.5, 2.5], [3.5, 4.5]])
    on_device = x.to("cuda").t().to(dc.float64)
    assert on_device.device.type == "cuda" and on_device.dtype == dc.float64
    assert on_device.to("cpu").tolist() == [[1.5, 3.5], [2.5, 4.5]]


def test_cuda_tensors_carry_torchs_key_set(fake):
    t = dc.zeros(2, device="cuda")
    assert repr(dc.dispatch_keys(t)) == "DispatchKeySet(CUDA, ADInplaceOrView, AutogradCUDA, AutocastCUDA)"
    assert t.device == dc.device("cuda", 0) and str(t.device) == "cuda:0"


# ==================================================================================================
# Import safety and the one clear error
# ==================================================================================================
def test_importing_and_registering_never_imports_pycuda():
    code = textwrap.dedent("""
        import sys
        import dispatchcore as dc
        import dispatchcore_backends.cuda as c
        dc.load_backends(); c.register()
        print(dc.cuda.is_available(), dc.cuda.device_count())
        x = dc.ones(3) + 1
        assert not any(m == "pycuda" or m.startswith("pycuda.") for m in sys.modules), sorted(sys.modules)
    """)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def _assert_unavailable(missing: str, *needles: str) -> None:
    assert dc.cuda.is_available() is False
    assert dc.cuda.device_count() == 0
    assert cuda_backend.is_available() is False and cuda_backend.device_count() == 0
    for make in (lambda: dc.zeros(2, device="cuda"), lambda: dc.tensor([1.0], device="cuda"),
                 lambda: dc.ones(2).to("cuda"), dc.cuda.init):
        with pytest.raises(dc.cuda.CudaUnavailableError) as info:
            make()
        assert info.value.missing == missing
        assert isinstance(info.value, RuntimeError)
        for needle in needles:
            assert needle in str(info.value)


def test_without_pycuda_the_error_says_install_pycuda(use_pycuda):
    use_pycuda(modules={"pycuda": None})  # `import pycuda` fails, as when it is not installed
    _assert_unavailable("pycuda", "pycuda", "not installed", "pip install dispatchcore[cuda]", "CUDA toolkit")


class _FailingDriverImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import pycuda.driver`` fails as pycuda's _driver.so does when libcuda.so.1 is missing."""

    def __init__(self, message: str) -> None:
        self.message = message

    def find_spec(self, name, path, target=None):
        if name == "pycuda.driver":
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        raise ImportError(self.message)


def test_without_a_driver_the_error_says_install_the_driver(use_pycuda, monkeypatch):
    package = types.ModuleType("pycuda")
    package.__path__ = []  # a package: submodules are looked up (and fail below)
    use_pycuda(modules={"pycuda": package})
    monkeypatch.setattr(sys, "meta_path", [_FailingDriverImport(
        "libcuda.so.1: cannot open shared object file: No such file or directory"), *sys.meta_path])
    _assert_unavailable("driver", "NVIDIA driver", "libcuda.so.1: cannot open shared object file")


def test_a_driver_older_than_pycudas_headers_is_named(use_pycuda, monkeypatch):
    package = types.ModuleType("pycuda")
    package.__path__ = []
    use_pycuda(modules={"pycuda": package})
    monkeypatch.setattr(sys, "meta_path", [_FailingDriverImport(
        "/x/pycuda/_driver.cpython-312-x86_64-linux-gnu.so: undefined symbol: cuCtxCreate_v4"), *sys.meta_path])
    _assert_unavailable("driver", "older than the CUDA headers", "cuCtxCreate_v4")


def test_without_a_gpu_the_error_says_no_device(use_pycuda):
    use_pycuda(FakePycuda(init_error="cuInit failed: no CUDA-capable device is detected"))
    _assert_unavailable("device", "CUDA-capable GPU", "cuInit failed: no CUDA-capable device is detected")


def test_a_driver_that_counts_no_device_is_no_device(use_pycuda):
    use_pycuda(FakePycuda(count=0))
    _assert_unavailable("device", "Device.count() == 0")


def test_cpu_work_is_unaffected_without_cuda(use_pycuda):
    use_pycuda(modules={"pycuda": None})
    assert (dc.ones(2) * 3).tolist() == [3.0, 3.0]


def test_a_fake_gpu_is_available(fake):
    assert dc.cuda.is_available() and dc.cuda.device_count() == 1
    assert dc.cuda.get_device_name().startswith("FAKE")
    dc.cuda.synchronize()


# ==================================================================================================
# Data plumbing on the FAKE device (no CUDA C numerics are checked here)
# ==================================================================================================
def test_to_cuda_and_back_round_trips(fake):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = dc.tensor(x).to("cuda")
    assert t.device.type == "cuda" and isinstance(t._data, cuda_data.CudaData)
    assert t.shape == (3, 4) and t.stride() == (4, 1) and t.dtype is dc.float32
    back = t.cpu()
    assert back.device.type == "cpu" and np.array_equal(back.numpy(), x)
    assert fake.copies["htod"] >= 1 and fake.copies["dtoh"] >= 1


def test_numpy_of_a_cuda_tensor_raises_torchs_error(fake):
    t = dc.ones(2, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda device type tensor to numpy. Use Tensor.cpu"):
        t.numpy()


def test_repr_item_and_tolist_copy_to_the_host(fake):
    t = dc.tensor([[1.5, 2.0], [3.0, 4.0]], device="cuda")
    assert repr(t) == "tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]], device='cuda:0')"
    assert t[1, 0].item() == 3.0 and t.tolist() == [[1.5, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("factory, expected", [
    (lambda: dc.zeros(2, 3, device="cuda"), np.zeros((2, 3), np.float32)),
    (lambda: dc.ones(4, dtype=dc.int64, device="cuda"), np.ones(4, np.int64)),
    (lambda: dc.full((2,), 7, device="cuda"), np.full(2, 7, np.int64)),
    (lambda: dc.full((2,), True, device="cuda"), np.full(2, True)),
    (lambda: dc.arange(5, device="cuda"), np.arange(5)),
    (lambda: dc.arange(0, 1, 0.25, device="cuda"), np.arange(0, 1, 0.25, dtype=np.float32)),
    (lambda: dc.linspace(0, 1, 5, device="cuda"), np.linspace(0, 1, 5, dtype=np.float32)),
    (lambda: dc.eye(2, 3, device="cuda"), np.eye(2, 3, dtype=np.float32)),
    (lambda: aten.scalar_tensor.default(2.5, device=dc.device("cuda")), np.array(2.5, np.float32)),
])
def test_factories_make_cuda_tensors(fake, factory, expected):
    t = factory()
    assert t.device == dc.device("cuda", 0)
    got = cpu(t)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_random_factories_use_the_seeded_cpu_generator(fake):
    dc.manual_seed(3)
    a = dc.randn(4, 5, device="cuda")
    dc.manual_seed(3)
    b = dc.randn(4, 5)
    assert np.array_equal(cpu(a), b.numpy())
    assert 0 <= cpu(dc.rand(100, device="cuda")).min()


def test_empty_strided_and_empty_like_keep_the_layout(fake):
    t = aten.empty_strided.default([2, 3], [1, 2], device=dc.device("cuda"))
    assert t.stride() == (1, 2) and t._data.storage.nbytes == 6 * 4
    assert dc.empty_like(t).device.type == "cuda"


def test_views_share_storage_offsets_and_version_counter(fake):
    base = dc.tensor(np.arange(24, dtype=np.float32).reshape(4, 6), device="cuda")
    v = base[1:3, 2:5]
    assert v._base is base and v._data.storage is base._data.storage
    assert v.storage_offset() == 8 and v.stride() == (6, 1) and v.shape == (2, 3)
    assert np.array_equal(cpu(v), np.arange(24, dtype=np.float32).reshape(4, 6)[1:3, 2:5])
    t = v.t()
    assert t.stride() == (1, 6) and t._vc is base._vc
    v.add_(100.0)  # in place through the view: the base sees it, every version bumps
    assert base._version == 1 and v._version == 1 and t._version == 1
    expected = np.arange(24, dtype=np.float32).reshape(4, 6)
    expected[1:3, 2:5] += 100
    assert np.array_equal(cpu(base), expected)
    base[0].fill_(-1.0)
    assert base._version == 2 and cpu(base)[0].tolist() == [-1.0] * 6


def test_view_ops_follow_meta_geometry(fake):
    x = dc.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), device="cuda")
    ref = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    cases = [
        (x.view(6, 4), ref.reshape(6, 4)), (x.permute(2, 0, 1), ref.transpose(2, 0, 1)),
        (x.transpose(0, 2), ref.swapaxes(0, 2)), (x.unsqueeze(1), ref[:, None]),
        (x[:, 1], ref[:, 1]), (x[..., ::2], ref[..., ::2]), (x[0].expand(2, 3, 4), np.broadcast_to(ref[0], (2, 3, 4))),
        (x.as_strided([2, 2], [1, 4], 3), np.lib.stride_tricks.as_strided(ref.reshape(-1)[3:], (2, 2), (4, 16))),
        (x.reshape(4, 6), ref.reshape(4, 6)), (x.permute(1, 0, 2).reshape(3, 8), ref.transpose(1, 0, 2).reshape(3, 8)),
        (x[:1].squeeze(0), ref[0]),
    ]
    for got, want in cases:
        assert np.array_equal(cpu(got), want)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.permute(1, 0, 2).view(24)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 96"):
        x.as_strided([5, 5], [5, 1], 0)


def test_to_cpu_keeps_a_dense_permuted_layout(fake):
    x = dc.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device="cuda").t()
    assert x.cpu().stride() == (1, 3)
    assert x.contiguous().stride() == (2, 1)


def test_copy_between_devices_and_dtypes(fake):
    d = dc.zeros(2, 3, device="cuda")
    d.copy_(dc.tensor([1, 2, 3]))  # host int64 -> device float32, broadcast
    assert cpu(d).tolist() == [[1, 2, 3], [1, 2, 3]]
    h = dc.zeros(2, 3, dtype=dc.int32)
    h.copy_(d)  # device -> host, cast
    assert h.numpy().dtype == np.int32 and h.tolist() == [[1, 2, 3], [1, 2, 3]]
    t = dc.zeros(3, 2, device="cuda").t()  # a strided destination
    t.copy_(dc.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    assert cpu(t).tolist() == [[1, 2, 3], [4, 5, 6]]
    assert cpu(d.to(dc.float64)).dtype == np.float64
    assert cpu(d.to(dc.bool)).all()
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        d.copy_(dc.ones(4, device="cuda"))
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        dc.ones(3, device="cuda").copy_(d)


def test_device_mismatch_raises_torchs_error(fake):
    c, h = dc.ones(2, device="cuda"), dc.ones(2)
    message = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    for f in (lambda: c + h, lambda: h + c, lambda: c * h, lambda: c.add_(h), lambda: dc.ops.aten.where.self(
            dc.ones(2, dtype=dc.bool, device="cuda"), c, h), lambda: c == h,
            lambda: dc.ops.aten.mse_loss.default(c, h)):
        with pytest.raises(RuntimeError) as info:
            f()
        assert str(info.value) == message
    with pytest.raises(RuntimeError) as info:
        dc.ones(2, 2, device="cuda") @ dc.ones(2, 2)
    assert str(info.value) == ("Expected all tensors to be on the same device, but got mat2 is on cpu, different "
                               "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_mm)")
    with pytest.raises(RuntimeError, match="but got mat2 is on cuda:0, different from other tensors on cpu"):
        dc.ones(2, 2) @ dc.ones(2, 2, device="cuda")


def test_a_zero_dim_cpu_tensor_is_a_scalar_for_cuda_ops(fake):
    c = dc.tensor([1.0, 2.0], device="cuda")
    assert cpu(c * dc.tensor(3.0)).tolist() == [3.0, 6.0]
    assert cpu(dc.tensor(3.0) - c).tolist() == [2.0, 1.0]


def test_meta_errors_come_through(fake):
    a, b = dc.ones(2, 3, device="cuda"), dc.ones(4, device="cuda")
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        a + b
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        a @ a
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dc.ones(2, dtype=dc.int64, device="cuda").add_(1.5)
    with pytest.raises(NotImplementedError, match="\"addmm_cuda\" not implemented for 'Long'"):
        dc.ones(2, 2, dtype=dc.int64, device="cuda") @ dc.ones(2, 2, dtype=dc.int64, device="cuda")
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        aten.nll_loss.default(dc.zeros(2, 3, device="cuda"), dc.tensor([0, 5], device="cuda"))


# --- every operator against the CPU backend, through the FAKE device's numpy emulation ----------
def _pair(data, dtype=None):
    h = dc.tensor(np.asarray(data), dtype=dtype)
    return h, h.to("cuda")


def _check(got, want, atol=1e-6):
    assert got.device.type == "cuda"
    assert got.shape == want.shape and got.dtype is want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    assert got.stride() == want.stride(), (got.stride(), want.stride())
    np.testing.assert_allclose(cpu(got).astype(np.float64), want.numpy().astype(np.float64), atol=atol, rtol=1e-5)


RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((4,)).astype(np.float32)
P = np.abs(A) + 0.5
INTS = RNG.integers(-5, 5, (3, 4))

BINARY_CASES = {
    "add": lambda x, y: x + y, "add_alpha": lambda x, y: x.add(y, alpha=2), "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y, "div": lambda x, y: x / y, "pow": lambda x, y: x.abs() ** y,
    "eq": lambda x, y: x == y, "lt": lambda x, y: x < y, "ge": lambda x, y: x >= y,
    "add_s": lambda x, y: x + 2.5, "rsub": lambda x, y: 1 - x, "mul_s": lambda x, y: x * -3,
    "div_s": lambda x, y: x / 4,
    "pow_s": lambda x, y: x ** 2, "pow_half": lambda x, y: x.abs() ** 0.5, "pow_3": lambda x, y: x ** 3,
    "rpow": lambda x, y: 2 ** x, "rdiv": lambda x, y: 1 / (x.abs() + 1), "gt_s": lambda x, y: x > 0,
    "where": lambda x, y: dc.ops.aten.where.self(x > 0, x, y),
    "clamp": lambda x, y: x.clamp(-0.5, 0.5), "clamp_min": lambda x, y: x.clamp_min(0.1),
}


@pytest.mark.parametrize("name", sorted(BINARY_CASES))
def test_binary_ops_match_cpu(dev, name):
    (ha, ca), (hb, cb) = _pair(A), _pair(B)
    _check(BINARY_CASES[name](ca, cb), BINARY_CASES[name](ha, hb), atol=1e-5)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "eq", "lt", "add_s", "mul_s", "pow_s", "gt_s", "where",
                                  "clamp", "pow_3"])
def test_binary_ops_on_integers_match_cpu(dev, name):
    (ha, ca), (hb, cb) = _pair(INTS), _pair(INTS[0])
    _check(BINARY_CASES[name](ca, cb), BINARY_CASES[name](ha, hb))


def test_mixed_dtypes_promote_like_cpu(dev):
    (hf, cf), (hi, ci) = _pair(A), _pair(INTS)
    (hb, cb) = _pair(A > 0)
    (hd, cd) = _pair(B.astype(np.float64))
    for f in (lambda x, y, z, w: x * z, lambda x, y, z, w: y + z, lambda x, y, z, w: y / 2,
              lambda x, y, z, w: x + w, lambda x, y, z, w: z * z, lambda x, y, z, w: z + z,
              lambda x, y, z, w: y * 0.5, lambda x, y, z, w: y.exp()):
        _check(f(cf, ci, cb, cd), f(hf, hi, hb, hd), atol=1e-5)


@pytest.mark.parametrize("expr", ["x * 2", "2 * x", "x + 1.5", "2 - x", "3 / x", "x / 2", "x.add_(1)",
                                  "x.mul_(2.5)", "n.__mul__(2.5)", "n * 2", "1 + n", "F.rsub(x, 2)"])
def test_number_operands_are_wrapped_like_cpu(dev, expr):
    """A number operand is a wrapped CPU number: the scalar kernel, with the number's promotion."""
    from dispatchcore import functions as F

    (hx, cx), (hn, cn) = _pair(P), _pair(INTS, dtype=dc.int32)
    got = eval(expr, {"x": cx.clone(), "n": cn, "F": F})  # noqa: S307 - the table above
    want = eval(expr, {"x": hx.clone(), "n": hn, "F": F})  # noqa: S307
    _check(got, want, atol=1e-5)


def test_cpu_only_operators_refuse_cuda_tensors(dev):
    (_, cx), (_, cy) = _pair(A), _pair(A)
    for call in (lambda: aten.maximum.default(cx, cy), lambda: aten.clamp.Tensor(cx, cy),
                 lambda: aten.div.Tensor_mode(cx, cy, rounding_mode="floor")):
        with pytest.raises(NotImplementedError, match="Could not run .* with arguments from the 'CUDA' backend"):
            call()


@pytest.mark.parametrize("name", ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"])
def test_unary_ops_match_cpu(dev, name):
    h, c = _pair(P if name in ("log", "sqrt") else A)
    _check(getattr(c, name)(), getattr(h, name)(), atol=1e-5)
    c2 = c.clone()
    getattr(c2, name + "_")()
    assert c2._version == 1
    np.testing.assert_allclose(cpu(c2), getattr(h, name)().numpy(), atol=1e-5)
    if name != "relu":
        out = dc.empty(1, device="cuda")
        with pytest.warns(UserWarning, match="was resized"):
            getattr(aten, name).out(c, out=out)
        np.testing.assert_allclose(cpu(out), getattr(h, name)().numpy(), atol=1e-5)


def test_half_scalars_round_to_half_first(dev):
    """TensorIterator casts a Python number to the tensor's dtype before the op (here: half)."""
    h = dc.tensor([1.1, 2.2, -0.3], dtype=dc.float16)
    c = h.to("cuda")
    for f in (lambda x: x == 1.1, lambda x: x >= 2.2, lambda x: x.clamp(-0.3, 1.1)):
        _check(f(c), f(h), atol=1e-3)
    # mul reads the cast scalar on CUDA (``scalar_value``), where torch's CPU kernel reads the
    # number itself at float32 precision (Note [Half arithmetic in float], backends/cpu/kernels.py)
    half_first = (h.numpy().astype(np.float32) * np.float32(np.float16(1.1))).astype(np.float16)
    np.testing.assert_array_equal(cpu(c * 1.1), half_first)


def test_out_variants_resize_and_cast(dev):
    (ha, ca), (hb, cb) = _pair(A), _pair(B)
    out = dc.empty(0, dtype=dc.float64, device="cuda")
    aten.add.out(ca, cb, out=out)
    assert out.shape == (3, 4) and out.dtype is dc.float64
    np.testing.assert_allclose(cpu(out), (ha + hb).numpy(), atol=1e-6)


def test_non_contiguous_and_broadcast_operands(dev):
    x = RNG.standard_normal((5, 1, 7)).astype(np.float32)
    y = RNG.standard_normal((3, 7, 5)).astype(np.float32)
    (hx, cx), (hy, cy) = _pair(x), _pair(y)
    _check(cx + cy.permute(2, 0, 1), hx + hy.permute(2, 0, 1))
    _check(cy[:, ::2, 1:] * 2.0, hy[:, ::2, 1:] * 2.0)
    _check(cy.transpose(0, 2).exp(), hy.transpose(0, 2).exp(), atol=1e-5)


REDUCTIONS = {
    "sum": lambda x: x.sum(), "sum0": lambda x: x.sum(0), "sum1k": lambda x: x.sum(1, keepdim=True),
    "sum_01": lambda x: x.sum((0, 1)), "mean": lambda x: x.mean(), "mean1": lambda x: x.mean(-1),
    "amax": lambda x: x.amax(1), "amax_all": lambda x: x.amax((0, 1, 2)), "max": lambda x: x.max(),
    "argmax": lambda x: x.argmax(), "argmax1": lambda x: x.argmax(1), "argmax_k": lambda x: x.argmax(2, keepdim=True),
    "max_dim": lambda x: x.max(1)[0], "max_dim_i": lambda x: x.max(1)[1], "sum_f64": lambda x: x.sum(dtype=dc.float64),
    "sum_t": lambda x: x.transpose(0, 2).sum(0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_match_cpu(dev, name):
    h, c = _pair(RNG.standard_normal((4, 5, 6)).astype(np.float32))
    _check(REDUCTIONS[name](c), REDUCTIONS[name](h), atol=1e-5)


def test_integer_and_bool_reductions_promote_like_cpu(dev):
    (hi, ci), (hb, cb) = _pair(INTS), _pair(INTS > 0)
    for f in (lambda x: x.sum(), lambda x: x.sum(1), lambda x: x.amax(0), lambda x: x.argmax(1)):
        _check(f(ci), f(hi))
    for f in (lambda x: x.sum(), lambda x: x.sum(0), lambda x: x.amax(1)):
        _check(f(cb), f(hb))


def test_long_reductions_take_two_launches(dev):
    h, c = _pair(RNG.standard_normal(100_003).astype(np.float32))
    before = len(dev.launches)
    _check(c.sum(), h.sum(), atol=1e-2)
    assert dev.launches[before:].count("dc_sum_f32") == 2
    _check(c.mean(), h.mean(), atol=1e-6)
    _check(c.amax(0), h.amax(0))


def test_empty_reductions(dev):
    h, c = _pair(np.zeros((0, 3), np.float32))
    _check(c.sum(), h.sum())
    _check(c.sum(0), h.sum(0))
    assert math.isnan(c.mean().item())


@pytest.mark.parametrize("shape, strided", [((2, 3), False), ((70, 33), True), ((64, 64), False)])
def test_mm_and_bmm_match_cpu(dev, shape, strided):
    m, k = shape
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, 45)).astype(np.float32)
    (ha, ca), (hb, cb) = _pair(a), _pair(b)
    if strided:
        ha, ca = ha.t().contiguous().t(), ca.t().contiguous().t()
    _check(ca @ cb, ha @ hb, atol=1e-4)
    x = RNG.standard_normal((3, m, k)).astype(np.float64)
    y = RNG.standard_normal((3, k, 5)).astype(np.float64)
    (hx, cx), (hy, cy) = _pair(x), _pair(y)
    _check(cx.bmm(cy), hx.bmm(hy))
    _check(cx @ cy.transpose(1, 2).transpose(1, 2), hx @ hy)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_match_cpu(dev, dim):
    h, c = _pair(RNG.standard_normal((4, 7)).astype(np.float32))
    _check(c.softmax(dim), h.softmax(dim), atol=1e-6)
    _check(c.log_softmax(dim), h.log_softmax(dim), atol=1e-5)
    _check(c.t().softmax(dim), h.t().softmax(dim), atol=1e-6)


def test_losses_match_cpu(dev):
    (hx, cx), (hy, cy) = _pair(A), _pair(RNG.standard_normal((3, 4)).astype(np.float32))
    for reduction in (0, 1, 2):
        _check(aten.mse_loss.default(cx, cy, reduction), aten.mse_loss.default(hx, hy, reduction), atol=1e-5)
    logits = RNG.standard_normal((5, 4)).astype(np.float32)
    (hl, cl), (ht, ct) = _pair(logits), _pair(np.array([0, 3, 1, -100, 2]))
    (hw, cw) = _pair(np.array([1.0, 2.0, 0.5, 1.5], np.float32))
    for reduction in (0, 1, 2):
        for w in ((None, None), (hw, cw)):
            got = aten.nll_loss_forward.default(cl.log_softmax(1), ct, w[1], reduction, -100)
            want = aten.nll_loss_forward.default(hl.log_softmax(1), ht, w[0], reduction, -100)
            _check(got[0], want[0], atol=1e-5)
            _check(got[1], want[1], atol=1e-5)


FAMILY_CASES = {
    "dot": lambda L, x, y: L.dot(x[0], y[:, 1]),
    "vdot-noncontig": lambda L, x, y: L.vdot(x[:, 0], x[:, 2]),
    "dot-empty": lambda L, x, y: L.dot(x[0, :0], y[:0, 0]),
    "mv": lambda L, x, y: L.mv(x, y[:, 0]),
    "matmul-vectors": lambda L, x, y: x[1] @ y[:, 1],
    "xlogy": lambda L, x, y: L.xlogy(x.abs(), y.abs() + 0.5),
    "xlogy-zeros-and-nan": lambda L, x, y: L.xlogy(L.tensor([0.0, 0.0, 2.0]).to(x.device),
                                                   L.tensor([0.0, float("nan"), 0.5]).to(x.device)),
    "xlogy-scalar-self": lambda L, x, y: L.xlogy(2, y.abs() + 0.5),
    "xlogy-scalar-other": lambda L, x, y: L.xlogy(x.abs(), 3.5),
    "xlogy_": lambda L, x, y: x.abs().xlogy_(y[:, :3].t().abs() + 0.5),
    "xlogy-out-double": lambda L, x, y: L.xlogy(x.abs(), y[:, 0].abs() + 0.5, out=L.empty(0, dtype=L.float64,
                                                                                            device=x.device)),
    "logit": lambda L, x, y: L.logit(x.sigmoid()),
    "logit-eps": lambda L, x, y: L.logit(x.sigmoid(), 0.3),
    "logit-edges": lambda L, x, y: L.logit(L.tensor([0.0, 1.0, 0.5, 1.5]).to(x.device)),
    "logit_": lambda L, x, y: x.sigmoid().logit_(0.2),
    "logit-out": lambda L, x, y: L.logit(x.sigmoid(), out=L.empty(0, device=x.device)),
    "logit_backward": lambda L, x, y: L.ops.aten.logit_backward.default(
        y.t(), L.tensor([0.0, 1.0, 1.5, 0.25]).to(x.device), 0.1),
    "logit_backward-no-eps": lambda L, x, y: L.ops.aten.logit_backward.default(
        y.t(), L.tensor([0.0, 1.0, -0.5, 0.25]).to(x.device)),
    "logit_backward.grad_input": lambda L, x, y: L.ops.aten.logit_backward.grad_input(
        x, x.sigmoid(), grad_input=L.empty(0, device=x.device)),
    "index_add": lambda L, x, y: x.index_add(1, L.tensor([0, 2, 2]).to(x.device), y[:3].t(), alpha=2),
    "index_add-rows": lambda L, x, y: x.t().index_add(0, L.tensor([3, 0, 3]).to(x.device), y[:, :3].t()),
    "index_add_-vector": lambda L, x, y: x[0].clone().index_add_(0, L.tensor([1, 1]).to(x.device), y[:2, 0]),
    "index_add-zero-d": lambda L, x, y: x[0, 0].index_add(0, L.tensor([0]).to(x.device), y[0, 0]),
    "index_add-out": lambda L, x, y: L.index_add(x, 0, L.tensor([2]).to(x.device), y[:1, :1].expand(1, 4) * 1,
                                                 out=L.empty(0, device=x.device)),
    "index_add-bound": lambda L, x, y: x.index_add(0, L.tensor([3]).to(x.device), y[:1, :1].expand(1, 4) * 1),
    "put": lambda L, x, y: x.put(L.tensor([0, -1, 5]).to(x.device), y[:, 0]),
    "put-noncontig-accumulate": lambda L, x, y: x.t().put(L.tensor([1, 1, 7]).to(x.device), y[:3, 1], True),
    "put_-zero-d": lambda L, x, y: x[1, 1].clone().put_(L.tensor(0).to(x.device), y[0, 0]),
    "put-bound": lambda L, x, y: x.put(L.tensor([12]).to(x.device), y[:1, 0]),
}


@pytest.mark.parametrize("name", sorted(FAMILY_CASES))
def test_family_ops_match_cpu(dev, name):
    """dot/vdot/mv, xlogy, logit and its backward, index_add and put_ on the device, values and errors as on CPU."""
    (hx, cx), (hy, cy) = _pair(A), _pair(RNG.standard_normal((4, 3)).astype(np.float32))
    try:
        want = FAMILY_CASES[name](dc, hx, hy)
    except Exception as e:  # the same error on the device
        with pytest.raises(type(e), match=re.escape(str(e))):
            FAMILY_CASES[name](dc, cx, cy)
        return
    _check(FAMILY_CASES[name](dc, cx, cy), want, atol=1e-5)


GRAD_CASES = {
    "kl_div": lambda L, x: L.nn.functional.kl_div(x, x.sigmoid(), reduction="sum"),
    "xlogy": lambda L, x: L.xlogy(x * x, x.sigmoid()) + L.xlogy(x.sigmoid(), -2.0),
    "logit": lambda L, x: L.logit(x.sigmoid(), 0.3),
    "matmul-vectors": lambda L, x: x[0] @ x[1],
    "matmul-matrix-vector": lambda L, x: x @ x[0],
    "as_strided-overlapping": lambda L, x: x.reshape(-1).as_strided((3, 3), (1, 1), 1),
    "as_strided-overlapping-input": lambda L, x: x[0].expand(2, 4).as_strided((3,), (1,), 1),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_the_new_backward_formulas_run_on_the_device(dev, name):
    """xlogy (kl_div's), logit, dot and mv, index_add (as_strided's overlaps): forward and backward on the device."""
    grads = []
    for device in ("cpu", "cuda"):
        x = dc.tensor(A, device=device, requires_grad=True)
        y = GRAD_CASES[name](dc, x)
        y.backward(dc.ones_like(y))
        assert x.grad.device.type == device
        grads.append(cpu(x.grad) if device == "cuda" else x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-5)


def test_family_ops_refuse_what_the_device_has_no_kernel_for(dev):
    (_, ci) = _pair(INTS[0])
    with pytest.raises(NotImplementedError, match="\"dot\" not implemented for 'Long'"):
        dc.dot(ci, ci)
    with pytest.raises(NotImplementedError, match="\"logit_backward_cuda\" not implemented for 'Long'"):
        dc.ops.aten.logit_backward.default(ci, ci)


def test_cat_stack_clone(dev):
    (ha, ca), (hb, cb) = _pair(A), _pair(INTS[:2])
    _check(aten.cat.default([ca, cb], 0), aten.cat.default([ha, hb], 0))
    _check(aten.cat.default([ca.t(), ca.t()], 1), aten.cat.default([ha.t(), ha.t()], 1))
    _check(aten.stack.default([ca, ca * 2], 1), aten.stack.default([ha, ha * 2], 1))
    _check(ca.t().clone(), ha.t().clone())
    _check(ca.zero_(), ha.zero_())


# --- autograd on the FAKE device ------------------------------------------------------------------
def test_backward_runs_on_the_device(dev):
    x = dc.tensor(A, device="cuda", requires_grad=True)
    w = dc.tensor(RNG.standard_normal((4, 2)).astype(np.float32), device="cuda", requires_grad=True)
    loss = ((x @ w).relu().softmax(1) * 3).sum()
    loss.backward()
    hx = dc.tensor(A, requires_grad=True)
    hw = dc.tensor(w.detach().cpu().numpy(), requires_grad=True)
    ((hx @ hw).relu().softmax(1) * 3).sum().backward()
    assert x.grad.device.type == "cuda" and w.grad.device.type == "cuda"
    np.testing.assert_allclose(cpu(x.grad), hx.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(cpu(w.grad), hw.grad.numpy(), atol=1e-5)


def _mlp_losses(device: str, steps: int = 5) -> list[float]:
    from dispatchcore.examples import tiny_mlp

    x, y = tiny_mlp.make_data()
    params = [p.detach().to(device).requires_grad_() for p in tiny_mlp.init_params()]
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(steps):
        loss = tiny_mlp.mse_loss(tiny_mlp.predict(params, x), y)
        loss.backward()
        with dc.no_grad():
            for p in params:
                assert p.grad.device.type == device
                p -= 0.1 * p.grad
                p.grad = None
        losses.append(loss.item())
    return losses


def test_the_tiny_mlp_trains_on_the_device_as_on_cpu(dev):
    """Every op of the training step (forward, backward, SGD update) dispatches to CUDA kernels."""
    before = len(dev.launches)
    gpu = _mlp_losses("cuda")
    assert gpu[-1] < gpu[0]
    np.testing.assert_allclose(gpu, _mlp_losses("cpu"), rtol=1e-5)
    kernels = set(dev.launches[before:])
    # le: relu's backward, threshold_backward, on the device
    assert {"dc_matmul_f32", "dc_add_f32", "dc_relu_f32", "dc_sqdiff_f32", "dc_sum_f32", "dc_le_s_f32"} <= kernels


# ==================================================================================================
# Compile checks: every kernel source through nvcc to PTX (sm_90), then ptxas -v
# ==================================================================================================
_NVCC = sources.nvcc_path()


@pytest.mark.skipif(_NVCC is None, reason="nvcc is not on this machine (the CUDA toolkit is not installed)")
@pytest.mark.parametrize("family", sorted(sources.FAMILIES))
def test_kernels_compile_for_sm90_without_spills(family, record_property, capsys):
    """nvcc -ptx for compute_90, ptxas -v for sm_90: no errors, no spills, smem and registers in budget."""
    codes = sources.FAMILIES[family]
    reports, _ = sources.ptxas_report(family, codes, "sm_90", _NVCC)
    expected = {s.name for code in codes for s in sources.specs(family, code)}
    assert {r.kernel for r in reports} == expected
    lines = [sources.PTXAS_LINE.format("kernel", "regs", "spill-s", "spill-l", "smem", "stack")]
    lines += [sources.PTXAS_LINE.format(r.kernel, r.registers, r.spill_stores, r.spill_loads, r.smem, r.stack)
              for r in reports]
    record_property("ptxas", "\n".join(lines))
    print(f"\n{family}: {len(reports)} kernels, max {max(r.registers for r in reports)} registers, "
          f"{sum(r.spill_stores + r.spill_loads for r in reports)} spill bytes")
    for r in reports:
        assert r.spill_stores == 0 and r.spill_loads == 0, r
        assert r.smem <= 48 * 1024, r
        assert r.registers <= 255, r  # 256 threads per block (__launch_bounds__): always launchable


@pytest.mark.skipif(_NVCC is None or shutil.which("ptxas") is None and _NVCC is None, reason="nvcc missing")
def test_a_compile_error_fails_with_the_compilers_message(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "_read", lambda name: "this is not C++" if name == "softmax.cu"
                        else (sources.KERNEL_DIR / name).read_text())
    with pytest.raises(RuntimeError, match="nvcc -ptx failed for softmax"):
        sources.ptxas_report("softmax", ("f32",), "sm_90", _NVCC)
