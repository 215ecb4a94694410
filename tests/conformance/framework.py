"""The conformance suite's framework: operator entries, sample inputs, and dispatchcore-vs-torch checks.

In the spirit of PyTorch's OpInfo database (``torch/testing/_internal/common_methods_invocations.py``
and ``opinfo/core.py``): one ``OpInfo`` per operator or function names how to call it in both
libraries, which dtypes it supports and a sample function; ``test_conformance.py`` runs every
sample in dispatchcore and compares it with torch 2.13, live (marker ``differential``) or with
expectations torch recorded earlier (``expected/<name>.json``, always). Invariant: a sample is a
pure function of (entry name, dtype), so both modes and the recorder see the same inputs.

Adding an entry (in ``tests/conformance/ops_<family>.py``, which must define ``OPS``)::

    from tests.conformance.framework import OpInfo, Sample, make

    def _samples_gather(rng, dtype):     # dtype: the numpy dtype under test
        x = make((3, 4), dtype, rng)     # ndarrays become tensors of their own dtype
        yield Sample(x, args=(1, np.array([[0, 1], [2, 3], [1, 1]])), name="dim1")
        yield Sample(make((3, 4), dtype, rng, noncontig=True), args=(-1, np.zeros((3, 1), np.int64)),
                     name="noncontig-negdim")
        yield Sample(x, args=(5, np.zeros((3, 1), np.int64)), name="error-dim")  # torch raises: so must dc

    OPS = [OpInfo("gather", call="gather", samples=_samples_gather, dtypes=("float32", "float64", "int64"),
                  aten=("gather",), grad=True, gradgrad=True, grad_args=(0,))]

``call`` is a dotted path resolved in both libraries (``"gather"``: ``dc.gather``/``torch.gather``;
``"Tensor.flip"``: a method of the sample's input; ``"nn.functional.gelu"``; ``"ops.aten.add.Tensor"``:
one aten overload), or a function ``f(lib, input, *args, **kwargs)`` that gets the module
(``dispatchcore`` or ``torch``). ``aten`` names the Core ATen overloads the entry covers
(``"gather"`` is ``gather.default``), for the opset coverage test. ``grad=True`` compares
gradients in float64 (a fixed random cotangent per output) and runs ``gradcheck`` on small
samples; ``gradgrad=True`` adds ``gradgradcheck``. ``grad_args`` picks the differentiated
arguments: ``0`` the input, ``k`` the positional ``args[k - 1]``, a string a keyword argument;
their floating arrays (all of them, for lists) require grad.

What is compared, per call: every output's dtype, shape, strides, storage offset and values
(``assert_close``'s default tolerances per dtype, or the entry's ``atol``/``rtol``; exact for
integral and bool; NaNs equal), named-tuple fields, Python numbers; or, when torch raises, the
exception's class name and first line. Gradients: values, dtypes and shapes (not layouts) and
the outputs' ``grad_fn`` names. Warnings are not compared. Entry names are unique across modules
(they name the expectation files); ``CONFORMANCE_MODULES=core,shape`` limits the modules loaded.

Known differences are declared, never hidden: ``xfails={"pattern": "reason"}`` and
``skips={...}`` (skip only what cannot run at all, e.g. a hang). A pattern is
``[dtype/]sample[@check]`` with ``fnmatch`` wildcards; checks are ``forward``, ``method``,
``inplace``, ``out`` (the variants' calls), ``grad`` (gradients and node names against torch),
``gradcheck`` and ``gradgradcheck``. Without ``@``, a pattern matches the call checks only
(not the gradient ones). An xfail whose checks all pass fails the test (strict, like the
project's ``xfail_strict``): remove it once the bug is fixed.

Recording expectations (needs torch; rerun after changing an entry's samples)::

    python -m tests.conformance.record                 # every entry, and core_aten.txt
    python -m tests.conformance.record gather 'add*'   # entries by name (fnmatch)
    python -m tests.conformance.record --core-aten     # only the Core ATen list
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import importlib
import json
import math
import os
import pathlib
import re
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

__all__ = [
    "CALL_CHECKS",
    "CHECKS",
    "CORE_ATEN_PATH",
    "EXPECTED_DIR",
    "GRADCHECK_MAX_NUMEL",
    "OUT_OF_SCOPE",
    "Backend",
    "Case",
    "OpInfo",
    "Outcome",
    "Sample",
    "TorchDtype",
    "all_ops",
    "cases",
    "checks_for",
    "compare_records",
    "dc_backend",
    "expectation_path",
    "load_expectations",
    "make",
    "normalize_aten",
    "run_check",
    "run_gradcheck",
    "torch_backend",
    "write_expectations",
]

HERE = pathlib.Path(__file__).resolve().parent
EXPECTED_DIR = HERE / "expected"
CORE_ATEN_PATH = HERE / "core_aten.txt"
GRADCHECK_MAX_NUMEL = 24  # gradcheck perturbs every element: larger samples only compare gradients with torch
CALL_CHECKS = ("forward", "method", "inplace", "out")
CHECKS = (*CALL_CHECKS, "grad", "gradcheck", "gradgradcheck")

# Core ATen overloads (core_aten.txt) that no entry covers on purpose; the coverage test reads this.
OUT_OF_SCOPE: dict[str, str] = {
    "_fft_c2r": "FFT: takes a complex input; dispatchcore models real, integral and bool dtypes only",
    "_fft_r2c": "FFT: returns a complex tensor; dispatchcore models real, integral and bool dtypes only",
    "sym_size.int": "a symbolic size query (SymInt tracing); eager tensors answer Tensor.size(dim)",
    "sym_stride.int": "a symbolic stride query (SymInt tracing); eager tensors answer Tensor.stride(dim)",
    "sym_numel": "a symbolic numel query (SymInt tracing); eager tensors answer Tensor.numel()",
    "sym_storage_offset": "a symbolic offset query (SymInt tracing); eager tensors answer Tensor.storage_offset()",
    "sym_is_contiguous": "a symbolic contiguity query (SymInt tracing): dispatchcore has no SymInt; eager tensors "
                         "answer Tensor.is_contiguous()",
}

# torch.testing.assert_close's default tolerances (rtol, atol); integral and bool compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7)}
# significant digits kept in expected/*.json: far below each dtype's tolerance
_DIGITS = {"float16": 5, "bfloat16": 4, "float32": 8, "float64": 13}
_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")


# --- the entry format -------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TorchDtype:
    """A dtype argument: becomes ``dc.<name>`` / ``torch.<name>`` (``TorchDtype("float64")``)."""

    name: str


@dataclasses.dataclass
class Sample:
    """One call: ``op(input, *args, **kwargs)``; every ndarray inside becomes a tensor of its dtype.

    ``input`` may be an ndarray, a list of them (TensorList ops) or any value. ``name`` identifies
    the sample in test output and expectations (unique per entry and dtype; defaulted if empty).
    """

    input: Any
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    name: str = ""


SampleFn = Callable[[np.random.Generator, np.dtype], Iterable[Sample]]


@dataclasses.dataclass(frozen=True, eq=False)
class OpInfo:
    """One operator or function under test (see the module docstring for every field)."""

    name: str
    call: str | Callable[..., Any]
    samples: SampleFn
    dtypes: tuple[str, ...] = ("float32", "float64")
    aten: tuple[str, ...] = ()
    grad: bool = False
    gradgrad: bool = False
    grad_args: tuple[int | str, ...] = (0,)
    atol: float | None = None
    rtol: float | None = None
    check_strides: bool = True
    # optional extensions
    method_variant: str | None = None   # e.g. "Tensor.add": the same samples through the method
    inplace_variant: str | None = None  # e.g. "Tensor.add_": also compares the mutated input
    supports_out: bool = False          # also calls ``call(..., out=<empty tensors>)``
    compare_values: bool = True         # False for random ops: dtype, shape and strides only
    xfails: Mapping[str, str] = dataclasses.field(default_factory=dict)
    skips: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", self.name):
            raise ValueError(f"OpInfo name {self.name!r}: letters, digits, '_', '.', '-' only (it names a file)")
        for field in ("dtypes", "aten", "grad_args"):
            value = getattr(self, field)
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise TypeError(f"OpInfo {self.name}: {field} must be a tuple, got {value!r}")
            object.__setattr__(self, field, tuple(value))
        unknown = [d for d in self.dtypes if d not in _DTYPES]
        if unknown:
            raise ValueError(f"OpInfo {self.name}: unknown dtypes {unknown} (known: {_DTYPES})")
        if self.gradgrad and not self.grad:
            raise ValueError(f"OpInfo {self.name}: gradgrad=True needs grad=True")
        if not (isinstance(self.call, str) or callable(self.call)):
            raise TypeError(f"OpInfo {self.name}: call must be a dotted path or a callable")


def make(shape: int | Iterable[int], dtype: Any, rng: np.random.Generator, low: float | None = None,
         high: float | None = None, noncontig: bool = False) -> np.ndarray:
    """A random array, uniform in ``[low, high)`` (torch's ``make_tensor`` ranges by default).

    Floats default to ``[-9, 9)``, signed integers to ``[-9, 10)``, unsigned to ``[0, 10)``;
    bools are fair coin flips. ``noncontig=True`` returns a strided view (every other element of
    the last dimension larger than 1, taken from a twice larger array); the suite rebuilds that
    layout in both libraries, so strides and storage offsets compare. Arrays of at most one
    element cannot be non-contiguous and come back contiguous.
    """
    dt = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if noncontig:
        wide = [d for d, n in enumerate(shape) if n > 1]
        if wide:
            dim = wide[-1]
            big = list(shape)
            big[dim] *= 2
            index = tuple(slice(None, None, 2) if d == dim else slice(None) for d in range(len(shape)))
            return _random(tuple(big), dt, rng, low, high)[index]
    return _random(shape, dt, rng, low, high)


def _random(shape: tuple[int, ...], dt: np.dtype, rng: np.random.Generator, low: float | None,
            high: float | None) -> np.ndarray:
    # np.asarray: for shape () numpy's generators return scalars, which are not arrays
    if dt == np.bool_:
        return np.asarray(rng.integers(0, 2, size=shape), dtype=np.bool_)
    if dt.kind in "iu":
        lo = (0 if dt.kind == "u" else -9) if low is None else math.ceil(low)
        hi = 10 if high is None else math.ceil(high)
        return np.asarray(rng.integers(lo, hi, size=shape), dtype=dt)
    lo_f = -9.0 if low is None else float(low)
    hi_f = 9.0 if high is None else float(high)
    return np.asarray(rng.uniform(lo_f, hi_f, size=shape), dtype=dt)


# --- collecting entries -----------------------------------------------------------------------
def all_ops() -> list[OpInfo]:
    """Every ``OPS`` entry of the ``ops_*.py`` modules beside this file, in file then list order.

    ``CONFORMANCE_MODULES=core,shape`` (environment) restricts the modules to ``ops_core.py`` and
    ``ops_shape.py``; the opset coverage test then reports what the others would cover.
    """
    found: list[OpInfo] = []
    seen: dict[str, str] = {}
    only = {f"ops_{m.strip()}" for m in os.environ.get("CONFORMANCE_MODULES", "").split(",") if m.strip()}
    for path in sorted(HERE.glob("ops_*.py")):
        if only and path.stem not in only:
            continue
        module = importlib.import_module(f"{__package__}.{path.stem}")
        for op in getattr(module, "OPS", ()):
            if op.name in seen:
                raise ValueError(f"OpInfo {op.name!r} is defined in {seen[op.name]} and {path.name}")
            seen[op.name] = path.name
            found.append(op)
    return found


def normalize_aten(name: str) -> str:
    """``"gather.default"`` and ``"gather"`` name the same overload; ``"add.Tensor"`` stays."""
    return name[: -len(".default")] if name.endswith(".default") else name


# --- cases: the samples of one entry and dtype -------------------------------------------------
@dataclasses.dataclass
class Case:
    """One sample of one entry in one dtype; ``key`` (``"float32/dim1"``) names it everywhere."""

    op: OpInfo
    dtype: str
    sample: Sample
    key: str

    def check_id(self, check: str) -> str:
        return f"{self.key}@{check}"


def seed(*parts: str) -> int:
    """A deterministic seed from names (zlib.crc32: stable across processes, unlike hash())."""
    return zlib.crc32("/".join(parts).encode())


def cases(op: OpInfo, dtype: str) -> list[Case]:
    """The entry's samples for ``dtype``, generated from an rng seeded by (name, dtype), uniquely named."""
    rng = np.random.default_rng(seed(op.name, dtype))
    out: list[Case] = []
    used: set[str] = set()
    for i, sample in enumerate(op.samples(rng, np.dtype(dtype))):
        base = re.sub(r"[/@\s]+", "_", sample.name) or f"sample{i}"
        name, k = base, 2
        while name in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name)
        out.append(Case(op, dtype, sample, f"{dtype}/{name}"))
    return out


def checks_for(case: Case) -> list[str]:
    """The comparisons a case gets (``gradcheck``/``gradgradcheck`` are run by their own test)."""
    op = case.op
    kinds = ["forward"]
    if op.method_variant:
        kinds.append("method")
    if op.inplace_variant:
        kinds.append("inplace")
    if op.supports_out:
        kinds.append("out")
    if op.grad and case.dtype == "float64":
        kinds.append("grad")
    return kinds


def _pattern_matches(pattern: str, check_id: str) -> bool:
    key, _, check = check_id.partition("@")
    dtype, _, sample = key.partition("/")
    pdtype, _, prest = pattern.rpartition("/") if "/" in pattern else ("*", "", pattern)
    psample, at, pcheck = prest.partition("@")
    if not (fnmatch.fnmatchcase(dtype, pdtype or "*") and fnmatch.fnmatchcase(sample, psample or "*")):
        return False
    return fnmatch.fnmatchcase(check, pcheck or "*") if at else check in CALL_CHECKS


class Outcome:
    """Collects one test's check results against the entry's ``skips`` and ``xfails``."""

    def __init__(self, op: OpInfo) -> None:
        self.op = op
        self.failures: list[str] = []
        self.xfailed: list[str] = []
        self._xfail_hits: dict[str, list[bool]] = {}

    def fail(self, text: str) -> None:
        """A failure no xfail can cover (missing or stale expectations)."""
        self.failures.append(text)

    def skipped(self, check_id: str) -> bool:
        return any(_pattern_matches(p, check_id) for p in self.op.skips)

    def add(self, check_id: str, problems: list[str]) -> None:
        """Record one check: ``problems`` empty means it passed."""
        reasons = [p for p in self.op.xfails if _pattern_matches(p, check_id)]
        for p in reasons:
            self._xfail_hits.setdefault(p, []).append(bool(problems))
        if not problems:
            return
        text = f"{check_id}:\n    " + "\n    ".join(problems)
        if reasons:
            self.xfailed.append(f"{text}\n    (xfail: {self.op.xfails[reasons[0]]})")
        else:
            self.failures.append(text)

    def xpassed(self) -> list[str]:
        """Xfail patterns that matched checks here, all of which passed."""
        return [f"{p!r} ({self.op.xfails[p]})" for p, hits in self._xfail_hits.items() if not any(hits)]


# --- the two libraries behind one interface ----------------------------------------------------
def _strided_layout(a: np.ndarray) -> tuple[np.ndarray, tuple[int, ...], int] | None:
    """For a non-contiguous view into a C-contiguous root array: (root, element strides, offset)."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    item = a.dtype.itemsize
    if root is a or not root.flags.c_contiguous or root.dtype != a.dtype:
        return None
    if any(s < 0 or s % item for s in a.strides):
        return None
    start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start < 0 or start % item:
        return None
    return root, tuple(s // item for s in a.strides), start // item


class Backend:
    """dispatchcore or torch, seen through the few operations the suite needs."""

    name = ""
    module: Any = None

    def tensor(self, a: np.ndarray, requires_grad: bool) -> Any:
        """A fresh tensor with ``a``'s values, dtype and (for non-contiguous views) layout."""
        raise NotImplementedError

    def is_tensor(self, x: Any) -> bool:
        raise NotImplementedError

    def is_dtype(self, x: Any) -> bool:
        raise NotImplementedError

    def dtype(self, name: str) -> Any:
        return getattr(self.module, name)

    def dtype_name(self, dtype: Any) -> str:
        raise NotImplementedError

    def values(self, t: Any) -> np.ndarray:
        raise NotImplementedError

    def empty(self, dtype: Any) -> Any:
        return self.module.empty(0, dtype=dtype)

    def grad(self, outputs: list[Any], inputs: list[Any], grad_outputs: list[Any]) -> tuple[Any, ...]:
        return tuple(self.module.autograd.grad(outputs, inputs, grad_outputs, allow_unused=True))

    def resolve(self, path: str, first: Any) -> Callable[..., Any]:
        """The callable a dotted ``call`` path names; ``"Tensor.x"`` binds method ``x`` of ``first``."""
        parts = path.removeprefix("torch.").split(".")
        if parts[0] == "Tensor":
            if not self.is_tensor(first):
                raise TypeError(f"call {path!r} needs a tensor input, got {type(first).__name__}")
            obj: Any = first
            parts = parts[1:]
        else:
            obj = self.module
        for part in parts:
            obj = getattr(obj, part)
        return obj  # type: ignore[no-any-return]


class _Dispatchcore(Backend):
    name = "dispatchcore"

    def __init__(self) -> None:
        import dispatchcore

        self.module = dispatchcore

    def tensor(self, a: np.ndarray, requires_grad: bool) -> Any:
        dc = self.module
        layout = None if a.flags.c_contiguous else _strided_layout(a)
        if layout is None:
            copy = np.array(a, copy=True, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
            # numpy gives empty arrays zero strides: start both libraries from a factory's empty tensor
            t = dc.tensor(copy) if copy.size else dc.empty(copy.shape, dtype=self.dtype(copy.dtype.name))
        else:
            root, strides, offset = layout
            buffer = root.copy()
            item = a.dtype.itemsize
            t = dc.wrap(np.ndarray(a.shape, a.dtype, buffer=buffer, offset=offset * item,
                                   strides=tuple(s * item for s in strides)))
        return t.requires_grad_() if requires_grad else t

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, self.module.Tensor)

    def is_dtype(self, x: Any) -> bool:
        return isinstance(x, self.module.dtype)

    def dtype_name(self, dtype: Any) -> str:
        return str(dtype.name)

    def values(self, t: Any) -> np.ndarray:
        return np.array(t.detach()._cpu_data(), copy=True)


class _Torch(Backend):
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.module = torch

    def tensor(self, a: np.ndarray, requires_grad: bool) -> Any:
        torch = self.module
        layout = None if a.flags.c_contiguous else _strided_layout(a)
        if layout is None:
            copy = np.array(a, copy=True, order="C")
            # numpy gives empty arrays zero strides: start both libraries from a factory's empty tensor
            t = torch.from_numpy(copy) if copy.size else torch.empty(copy.shape, dtype=self.dtype(copy.dtype.name))
        else:
            root, strides, offset = layout
            flat = torch.from_numpy(root.copy().reshape(-1))
            t = flat.as_strided(a.shape, strides, offset).detach()
        return t.requires_grad_() if requires_grad else t

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, self.module.Tensor)

    def is_dtype(self, x: Any) -> bool:
        return isinstance(x, self.module.dtype)

    def dtype_name(self, dtype: Any) -> str:
        return str(dtype).removeprefix("torch.")

    def values(self, t: Any) -> np.ndarray:
        return np.array(t.detach().numpy(), copy=True)


@functools.cache
def dc_backend() -> Backend:
    """dispatchcore, behind the ``Backend`` interface."""
    return _Dispatchcore()


@functools.cache
def torch_backend() -> Backend:
    """torch (imported on first use), behind the ``Backend`` interface."""
    return _Torch()


# --- materializing samples ---------------------------------------------------------------------
def _materialize(value: Any, lib: Backend, requires_grad: bool, leaves: list[Any]) -> Any:
    if isinstance(value, np.ndarray):
        wants = requires_grad and value.dtype.kind == "f"
        t = lib.tensor(value, wants)
        if wants:
            leaves.append(t)
        return t
    if isinstance(value, TorchDtype):
        return lib.dtype(value.name)
    if isinstance(value, list):
        return [_materialize(v, lib, requires_grad, leaves) for v in value]
    if isinstance(value, tuple):
        return tuple(_materialize(v, lib, requires_grad, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _materialize(v, lib, requires_grad, leaves) for k, v in value.items()}
    return value


def _call_inputs(case: Case, lib: Backend, grad: bool) -> tuple[Any, list[Any], dict[str, Any], list[Any]]:
    """(input, args, kwargs, leaves): the sample as ``lib`` tensors; ``leaves`` require grad."""
    s, wanted = case.sample, set(case.op.grad_args) if grad else set()
    leaves: list[Any] = []
    first = _materialize(s.input, lib, 0 in wanted, leaves)
    args = [_materialize(a, lib, i + 1 in wanted, leaves) for i, a in enumerate(s.args)]
    kwargs = {k: _materialize(v, lib, k in wanted, leaves) for k, v in s.kwargs.items()}
    return first, args, kwargs, leaves


def _invoke(case: Case, lib: Backend, path: str | Callable[..., Any], first: Any, args: list[Any],
            kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings():  # warnings are not compared; keep them from becoming errors
        warnings.simplefilter("ignore")
        if callable(path):
            return path(lib.module, first, *args, **kwargs)
        fn = lib.resolve(path, first)
        if path.removeprefix("torch.").startswith("Tensor."):
            return fn(*args, **kwargs)
        return fn(first, *args, **kwargs)


def fingerprint(sample: Sample) -> str:
    """A checksum of a sample's inputs (values, dtypes, layouts), stored with each expectation."""
    crc = 0

    def feed(v: Any) -> None:
        nonlocal crc
        if isinstance(v, np.ndarray):
            crc = zlib.crc32(f"a{v.dtype.str}{v.shape}{v.strides}".encode(), crc)
            crc = zlib.crc32(v.tobytes(), crc)
        elif isinstance(v, list | tuple):
            crc = zlib.crc32(f"{type(v).__name__}{len(v)}".encode(), crc)
            for x in v:
                feed(x)
        elif isinstance(v, dict):
            for k in sorted(v):
                crc = zlib.crc32(f"k{k}".encode(), crc)
                feed(v[k])
        else:
            crc = zlib.crc32(repr(v).encode(), crc)

    feed([sample.input, list(sample.args), sample.kwargs])
    return f"{crc:08x}"


# --- encoding results: one JSON-able form for both libraries and the recorded files -------------
def _encode_float(v: float, digits: int | None) -> float | str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v if digits is None else float(f"{v:.{digits}g}")


def _encode_values(a: np.ndarray, dtype: str, exact: bool) -> list[Any]:
    flat = a.reshape(-1).tolist()
    if a.dtype.kind == "f":
        digits = None if exact else _DIGITS.get(dtype, 17)
        return [_encode_float(v, digits) for v in flat]
    return flat


def _error(e: BaseException) -> dict[str, Any]:
    lines = str(e).strip().splitlines() or [""]
    return {"error": {"type": type(e).__name__, "message": lines[0]}}


def encode(value: Any, lib: Backend, exact: bool = True) -> Any:
    """A JSON-able description of a call's result: tensors, sequences, numbers, dtypes."""
    if lib.is_tensor(value):
        dtype = lib.dtype_name(value.dtype)
        return {"tensor": {"dtype": dtype, "shape": list(value.shape), "stride": list(value.stride()),
                           "offset": int(value.storage_offset()),
                           "values": _encode_values(lib.values(value), dtype, exact)}}
    if isinstance(value, tuple | list):
        fields = getattr(type(value), "__match_args__", None)
        return {"seq": [encode(v, lib, exact) for v in value], "type": "list" if isinstance(value, list) else "tuple",
                "fields": list(fields) if fields else None}
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int):
        return {"number": value, "type": type(value).__name__}
    if isinstance(value, float):
        return {"number": _encode_float(value, None if exact else 15), "type": "float"}
    if lib.is_dtype(value):
        return {"dtype": lib.dtype_name(value)}
    raise TypeError(f"the conformance suite cannot compare a {type(value).__name__} result: {value!r}")


def _encode_result(value: Any, lib: Backend, exact: bool) -> Any:
    """``encode``, reporting a result that cannot be read (a broken tensor) as a mismatch, not a crash."""
    try:
        return encode(value, lib, exact)
    except Exception as e:
        return {"error": {"type": "UnreadableResult", "message": f"{lib.name} returned a result that cannot be read: "
                                                                f"{type(e).__name__}: {e}"}}


def _tensors(value: Any) -> list[Any]:
    if isinstance(value, tuple | list):
        return [t for v in value for t in _tensors(v)]
    return [value] if hasattr(value, "requires_grad") and hasattr(value, "grad_fn") else []


# --- running one check in one library ----------------------------------------------------------
def run_check(lib: Backend, case: Case, check: str, exact: bool = True) -> dict[str, Any] | None:
    """Run one check of ``case`` in ``lib``; returns its record (None: nothing to compare).

    Records: ``forward``/``method`` ``{"inputs", "out"}``; ``inplace`` adds ``"self"`` (the mutated
    input) and ``"returns_self"``; ``out`` adds ``"out_arg"`` and ``"returns_out"``; ``grad``
    ``{"requires_grad", "grad_fn", "grads"}`` per tensor output.
    """
    if check == "grad":
        return _run_grad(lib, case, exact)
    op = case.op
    path = {"forward": op.call, "method": op.method_variant, "inplace": op.inplace_variant,
            "out": op.call}[check]
    assert path is not None
    first, args, kwargs, _ = _call_inputs(case, lib, grad=False)
    record: dict[str, Any] = {"inputs": fingerprint(case.sample)}
    if check == "out":
        try:
            reference = _invoke(case, lib, path, first, args, kwargs)
        except Exception:  # the forward check compares this error; out= has nothing to add
            return None
        outs = [lib.empty(t.dtype) for t in _tensors(reference)]
        if not outs:
            return None
        out_arg: Any = outs[0] if len(outs) == 1 and lib.is_tensor(reference) else tuple(outs)
        first, args, kwargs, _ = _call_inputs(case, lib, grad=False)
        try:
            result = _invoke(case, lib, path, first, args, {**kwargs, "out": out_arg})
        except Exception as e:
            record["out"] = _error(e)
            return record
        record["out"] = _encode_result(result, lib, exact)
        record["out_arg"] = _encode_result(out_arg, lib, exact)
        returned = _tensors(result)
        record["returns_out"] = len(returned) == len(outs) and all(a is b for a, b in zip(returned, outs))
        return record
    try:
        result = _invoke(case, lib, path, first, args, kwargs)
    except Exception as e:
        record["out"] = _error(e)
        return record
    record["out"] = _encode_result(result, lib, exact)
    if check == "inplace":
        record["self"] = _encode_result(first, lib, exact)
        record["returns_self"] = result is first
    return record


def _run_grad(lib: Backend, case: Case, exact: bool) -> dict[str, Any] | None:
    first, args, kwargs, leaves = _call_inputs(case, lib, grad=True)
    if not leaves:
        return None
    try:
        result = _invoke(case, lib, case.op.call, first, args, kwargs)
    except Exception:  # the forward check compares the error
        return None
    outs = _tensors(result)
    requires = [bool(t.requires_grad) for t in outs]
    record: dict[str, Any] = {
        "requires_grad": requires,
        "grad_fn": [t.grad_fn.name() if t.grad_fn is not None else None for t in outs],
    }
    diff = [t for t, r in zip(outs, requires) if r]
    if not diff:
        record["grads"] = None
        return record
    rng = np.random.default_rng(seed(case.op.name, case.key, "cotangent"))
    try:
        cotangents = [lib.tensor(rng.uniform(-1, 1, tuple(t.shape)).astype(lib.dtype_name(t.dtype)), False)
                      for t in diff]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grads = lib.grad(diff, leaves, cotangents)
    except Exception as e:
        record["grads"] = _error(e)
        return record
    record["grads"] = [None if g is None else _encode_result(g, lib, exact) for g in grads]
    return record


def run_gradcheck(case: Case, gradgrad: bool) -> tuple[bool, str | None]:
    """``gradcheck`` (or ``gradgradcheck``) of dispatchcore on ``case``: (ran, failure text or None).

    Runs when the sample has differentiable inputs totalling at most ``GRADCHECK_MAX_NUMEL``
    elements (none with stride 0) and dispatchcore's forward succeeds with an output requiring grad.
    """
    from dispatchcore.autograd import gradcheck, gradgradcheck

    lib = dc_backend()
    first, args, kwargs, leaves = _call_inputs(case, lib, grad=True)
    if not leaves or sum(t.numel() for t in leaves) > GRADCHECK_MAX_NUMEL:
        return False, None
    if any(st == 0 and n > 1 for t in leaves for st, n in zip(t.stride(), t.shape)):
        return False, None
    try:
        outs = [t for t in _tensors(_invoke(case, lib, case.op.call, first, args, kwargs)) if t.requires_grad]
        finite = all(np.isfinite(lib.values(t)).all() for t in [*leaves, *outs])
    except Exception:
        return False, None
    if not outs or not finite:  # finite differences need a smooth neighbourhood
        return False, None

    def func(*new_leaves: Any) -> tuple[Any, ...]:
        swap = {id(old): new for old, new in zip(leaves, new_leaves)}

        def sub(v: Any) -> Any:
            if isinstance(v, list):
                return [sub(x) for x in v]
            if isinstance(v, tuple):
                return tuple(sub(x) for x in v)
            if isinstance(v, dict):
                return {k: sub(x) for k, x in v.items()}
            return swap.get(id(v), v)

        result = _invoke(case, lib, case.op.call, sub(first), sub(args), sub(kwargs))
        return tuple(_tensors(result))

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if gradgrad:
                rng = np.random.default_rng(seed(case.op.name, case.key, "gradgrad"))
                grad_outputs = tuple(lib.tensor(rng.uniform(-1, 1, tuple(t.shape)), True) for t in outs)
                gradgradcheck(func, tuple(leaves), grad_outputs)
            else:
                gradcheck(func, tuple(leaves))
    except Exception as e:
        return True, f"{type(e).__name__}: {str(e).strip()}"
    return True, None


# --- comparing records ---------------------------------------------------------------------------
def _decode_values(values: list[Any], dtype: str) -> np.ndarray:
    if dtype == "bool":
        return np.array(values, dtype=np.bool_)
    if dtype in _TOLERANCES:
        return np.array([float(v) for v in values], dtype=np.float64)
    return np.array(values, dtype=np.int64 if not dtype.startswith("uint") else np.uint64)


def _compare(got: Any, want: Any, path: str, op: OpInfo, problems: list[str], strides: bool = True) -> None:
    if isinstance(want, dict) and "tensor" in want:
        if not (isinstance(got, dict) and "tensor" in got):
            problems.append(f"{path}: expected a tensor, got {_short(got)}")
            return
        g, w = got["tensor"], want["tensor"]
        if g["dtype"] != w["dtype"]:
            problems.append(f"{path}: dtype {g['dtype']}, expected {w['dtype']}")
        if g["shape"] != w["shape"]:
            problems.append(f"{path}: shape {g['shape']}, expected {w['shape']}")
            return
        if op.check_strides and strides:
            if g["stride"] != w["stride"]:
                problems.append(f"{path}: stride {g['stride']}, expected {w['stride']}")
            if g["offset"] != w["offset"]:
                problems.append(f"{path}: storage_offset {g['offset']}, expected {w['offset']}")
        if op.compare_values:
            _compare_values(g["values"], w["values"], w["dtype"], g["dtype"], path, op, problems)
        return
    if isinstance(want, dict) and "seq" in want:
        if not (isinstance(got, dict) and "seq" in got):
            problems.append(f"{path}: expected a {want['type']}, got {_short(got)}")
            return
        if want["fields"] and got["fields"] != want["fields"]:
            problems.append(f"{path}: expected a named tuple with fields {want['fields']}, got "
                            f"{'fields ' + str(got['fields']) if got['fields'] else 'a plain ' + got['type']}")
        elif got["type"] != want["type"]:
            problems.append(f"{path}: a {got['type']}, expected a {want['type']}")
        if len(got["seq"]) != len(want["seq"]):
            problems.append(f"{path}: {len(got['seq'])} elements, expected {len(want['seq'])}")
            return
        names = want["fields"] or [f"[{i}]" for i in range(len(want["seq"]))]
        for name, g, w in zip(names, got["seq"], want["seq"]):
            _compare(g, w, f"{path}.{name}" if want["fields"] else f"{path}{name}", op, problems, strides)
        return
    if isinstance(want, dict) and "error" in want:
        if not (isinstance(got, dict) and "error" in got):
            problems.append(f"{path}: expected {want['error']['type']}: {want['error']['message']!r}, "
                            f"got {_short(got)}")
        elif got["error"] != want["error"]:
            problems.append(f"{path}: raised {got['error']['type']}: {got['error']['message']!r}\n"
                            f"      expected {want['error']['type']}: {want['error']['message']!r}")
        return
    if isinstance(want, dict) and "number" in want:
        if not (isinstance(got, dict) and "number" in got):
            problems.append(f"{path}: expected the number {want['number']!r}, got {_short(got)}")
            return
        if got["type"] != want["type"]:
            problems.append(f"{path}: a Python {got['type']}, expected a {want['type']}")
        if want["type"] == "float":
            _compare_values([got["number"]], [want["number"]], "float64", "float64", path, op, problems)
        elif got["number"] != want["number"]:
            problems.append(f"{path}: {got['number']!r}, expected {want['number']!r}")
        return
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{path}[{i}]", op, problems, strides)
    elif isinstance(got, dict) and "error" in got:
        problems.append(f"{path}: expected {_short(want)}, got {_short(got)}")
    elif got != want:
        problems.append(f"{path}: {_short(got)}, expected {_short(want)}")


def _compare_values(got: list[Any], want: list[Any], dtype: str, got_dtype: str, path: str, op: OpInfo,
                    problems: list[str]) -> None:
    w = _decode_values(want, dtype)
    g = _decode_values(got, got_dtype if got_dtype in _TOLERANCES or got_dtype == dtype else dtype)
    if dtype in _TOLERANCES:
        rtol, atol = _TOLERANCES[dtype]
        rtol = op.rtol if op.rtol is not None else rtol
        atol = op.atol if op.atol is not None else atol
        try:
            np.testing.assert_allclose(g.astype(np.float64), w, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=path, verbose=True)
        except AssertionError as e:
            problems.append(f"{path}: values differ:" + "\n      ".join(str(e).splitlines()[:8]))
    elif not np.array_equal(g, w):
        problems.append(f"{path}: values {g.tolist()}, expected {w.tolist()}")


def _short(v: Any) -> str:
    if isinstance(v, dict) and "error" in v:
        return f"{v['error']['type']}: {v['error']['message']!r}"
    if isinstance(v, dict) and "tensor" in v:
        t = v["tensor"]
        return f"a {t['dtype']} tensor of shape {t['shape']}"
    text = json.dumps(v)
    return text if len(text) < 120 else text[:117] + "..."


def compare_records(got: dict[str, Any] | None, want: dict[str, Any] | None, op: OpInfo,
                    recorded: bool) -> list[str]:
    """What differs between dispatchcore's record ``got`` and the reference ``want`` (empty: none)."""
    if want is None or got is None:
        if got == want:
            return []
        return ["dispatchcore produced nothing to compare" if got is None
                else "the reference has nothing to compare (its call raised)"]
    problems: list[str] = []
    if recorded and want.get("inputs") not in (None, got.get("inputs")):
        return [f"the sample's inputs changed since recording: run `python -m tests.conformance.record {op.name}`"]
    for field in [k for k in want if k != "inputs"] + [k for k in got if k not in want and k != "inputs"]:
        # gradients' layouts are the backward formulas' business: values, dtypes and shapes compare
        _compare(got.get(field), want.get(field), field, op, problems, strides=field != "grads")
    return problems


# --- recorded expectations ---------------------------------------------------------------------
def expectation_path(op: OpInfo) -> pathlib.Path:
    return EXPECTED_DIR / f"{op.name}.json"


def load_expectations(op: OpInfo) -> dict[str, Any] | None:
    """The recorded cases of ``op`` (``{check_id: record}``), or None when never recorded."""
    path = expectation_path(op)
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    cases_: dict[str, Any] = data["cases"]
    for key, record in cases_.items():  # "=forward": the same record as the case's forward check
        if isinstance(record, str) and record.startswith("="):
            cases_[key] = cases_[f"{key.partition('@')[0]}@{record[1:]}"]
    return cases_


def write_expectations(op: OpInfo, records: dict[str, Any], torch_version: str) -> pathlib.Path:
    """Write ``records`` for ``op``: one case per line, so that diffs stay readable."""
    EXPECTED_DIR.mkdir(exist_ok=True)
    lines = []
    for key, record in sorted(records.items()):
        forward = records.get(f"{key.partition('@')[0]}@forward")
        same = not key.endswith("@forward") and record is not None and record == forward
        lines.append(json.dumps(key) + ": " + json.dumps("=forward" if same else record, separators=(",", ":")))
    text = ('{"op": ' + json.dumps(op.name) + ', "torch": ' + json.dumps(torch_version) + ', "cases": {\n'
            + ",\n".join(lines) + "\n}}\n")
    path = expectation_path(op)
    path.write_text(text)
    return path
