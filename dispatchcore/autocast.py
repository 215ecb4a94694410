"""Automatic mixed precision: ``autocast`` and the ``AutocastCPU`` kernels.

Mirrors ``torch/amp/autocast_mode.py`` and ``aten/src/ATen/autocast_mode.{h,cpp}``. Autocast is a
mode in the dispatcher's sense: every tensor carries ``AutocastCPU`` in its key set, and the key is
in the default thread-local *exclude* set, so normally nothing happens. ``autocast("cpu")`` only
removes ``AutocastCPU`` from the exclude set (``set_autocast_enabled``; it adds nothing anywhere)
and restores the previous state on exit. Then:

* the operators on PyTorch's CPU lists have a kernel at ``AutocastCPU`` (registered here, through
  ``Library("aten", "IMPL")``). It enters ``ExcludeDispatchKeyGuard(AutocastCPU)``, casts the
  eligible arguments (``cached_cast``) and calls the operator again, which now dispatches below
  autocast (Autograd, then the backend);
* every other operator falls through: the built-in ``AutocastCPU`` fallback is a fallthrough.

PyTorch 2.13's CPU lists, restricted to dispatchcore's operators (``autocast_mode.cpp``):

* lower precision (cast float32 inputs to the autocast dtype): ``mm``, ``bmm``, ``matmul``,
  ``addmm``, ``linear``, the convolutions (``LOWER_PRECISION_FP_OPS``);
* float32 (cast lower-precision inputs up): the losses, ``prod``, ``cdist``, the 3-d pools, the
  reflection and replication pads (``FP32_OPS``);
* promote (cast to the widest floating input type): ``cat``, ``stack``.

``softmax``/``log_softmax``/``sum`` are on CUDA's float32 list but not on CPU's: on CPU they fall
through and keep their input dtype, as in PyTorch.

Deviation: numpy has no bfloat16, so dispatchcore has none, and the CPU default autocast dtype is
``float16`` (PyTorch's is ``bfloat16``; ``torch.autocast("cpu", dtype=torch.float16)`` behaves
like dispatchcore's default). Kernels exist for ``AutocastCPU`` only; ``autocast("cuda")`` and
the other device types toggle their key exactly as PyTorch does, but every operator falls through.

Example:
    >>> import dispatchcore as dc
    >>> a = dc.ones(2, 2)
    >>> with dc.autocast("cpu"):
    ...     (a @ a).dtype, a.softmax(0).dtype
    (dispatchcore.float16, dispatchcore.float32)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from . import aten as _definitions  # noqa: F401 - defines the operators registered here
from ._library import Library
from .dtypes import dtype as _dtype
from .dtypes import float16, float32, float64
from .keys import DispatchKey
from .keyset import key_bits
from .ops import aten
from .tls import ExcludeDispatchKeyGuard, tls_get, tls_set_dispatch_key_excluded
from .tls import per_thread as _pt

__all__ = [
    "FP32_OPS",
    "LOWER_PRECISION_FP_OPS",
    "PROMOTE_OPS",
    "autocast",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

_D = DispatchKey
# get_autocast_dispatch_key_from_device_type (aten/src/ATen/autocast_mode.h)
AUTOCAST_KEYS: dict[str, DispatchKey] = {
    "cpu": _D.AutocastCPU, "cuda": _D.AutocastCUDA, "xpu": _D.AutocastXPU, "ipu": _D.AutocastIPU,
    "hpu": _D.AutocastHPU, "xla": _D.AutocastXLA, "mps": _D.AutocastMPS, "mtia": _D.AutocastMTIA,
    "maia": _D.AutocastMAIA, "privateuseone": _D.AutocastPrivateUse1,
}
# autocast_dtype's defaults (autocast_mode.cpp); CPU/XPU/HPU/IPU/XLA are bfloat16 in PyTorch,
# float16 here because dispatchcore has no bfloat16 (see the module docstring).
_DEFAULT_DTYPES: dict[str, _dtype] = dict.fromkeys(AUTOCAST_KEYS, float16)
_SUPPORTED_DTYPES = (float16,)  # PyTorch: (torch.bfloat16, torch.float16)

# PyTorch 2.13's CPU lists (autocast_mode.cpp, TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)),
# for the operators dispatchcore defines
LOWER_PRECISION_FP_OPS = ("mm", "bmm", "matmul", "addmm", "baddbmm", "addbmm", "linear", "conv1d", "conv1d.padding",
                          "conv2d", "conv2d.padding", "conv3d", "conv3d.padding", "conv_transpose1d",
                          "conv_transpose2d.input", "conv_transpose3d.input")
FP32_OPS = ("mse_loss", "nll_loss", "prod", "prod.dim_int", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
            "binary_cross_entropy", "binary_cross_entropy_with_logits", "cdist", "cross_entropy_loss",
            "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
            "grid_sampler", "grid_sampler_2d", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "trace")
PROMOTE_OPS = ("cat", "stack")


# --- per-thread state (thread-local in c10: autocast_dtype, cache_enabled, nesting, the cache) ---
class _State:
    __slots__ = ("dtypes", "cache_enabled", "nesting", "cache")

    def __init__(self) -> None:
        self.dtypes = dict(_DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        # id(leaf) -> (leaf, its cast): float32 leaves that require grad (model weights) are cast
        # once per autocast region (cached_casts in autocast_mode.cpp)
        self.cache: dict[int, tuple[Any, Any]] = {}


def _state() -> _State:
    """This thread's autocast state (``tls.per_thread.state.autocast``), made on first use."""
    state = _pt.state.autocast
    if state is None:
        state = _pt.state.autocast = _State()
    return state


def _key(device_type: str) -> DispatchKey:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    key = AUTOCAST_KEYS.get(device_type)
    if key is None:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return key


def is_autocast_available(device_type: str) -> bool:
    """True for the device types that have an autocast key (``torch.amp.is_autocast_available``)."""
    return device_type in AUTOCAST_KEYS


def is_autocast_enabled(device_type: str) -> bool:
    """Whether autocast is on for ``device_type`` in this thread: its key is not TLS-excluded.

    Example:
        >>> is_autocast_enabled("cpu")
        False
    """
    bits = key_bits(_key(device_type))
    return tls_get()[1] & bits != bits


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` (``torch.set_autocast_enabled``): a TLS exclude bit."""
    tls_set_dispatch_key_excluded(_key(device_type), not enabled)


def get_autocast_dtype(device_type: str) -> _dtype:
    """The dtype lower-precision ops run in (``torch.get_autocast_dtype``); float16 by default."""
    _key(device_type)
    return _state().dtypes[device_type]


def set_autocast_dtype(device_type: str, dtype: _dtype) -> None:
    """Set the dtype lower-precision ops run in for ``device_type`` in this thread."""
    _key(device_type)
    _state().dtypes[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether casts of float32 leaf tensors that require grad are cached (``torch.is_autocast_cache_enabled``)."""
    return _state().cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state().cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop this thread's cached casts (``torch.clear_autocast_cache``)."""
    _state().cache.clear()


class autocast:  # noqa: N801 - torch.autocast's name
    """Run eligible operators in lower precision (``torch.autocast``); a context manager or decorator.

    Args:
        device_type: ``"cpu"`` (the default here; PyTorch requires the argument). Other
            PyTorch device types toggle their autocast key, but dispatchcore registers kernels
            for ``AutocastCPU`` only.
        dtype: the lower-precision dtype; ``None`` means ``get_autocast_dtype(device_type)``,
            ``float16`` by default (PyTorch's CPU default is bfloat16, which dispatchcore lacks).
            An unsupported dtype warns and disables autocast, as in PyTorch.
        enabled: ``False`` makes the region run without autocast (also inside an enabled one).
        cache_enabled: cache the casts of float32 leaves that require grad within the region;
            ``None`` keeps the current setting (on by default).

    Entering saves the enabled flag, dtype and cache setting, then sets them; leaving restores
    them, and the outermost exit clears the cast cache. The only dispatch-key change is
    ``AutocastCPU`` leaving (or, with ``enabled=False``, joining) the exclude set.

    Example:
        >>> import dispatchcore as dc
        >>> @dc.autocast("cpu")
        ... def f(a, b):
        ...     return a @ b
        >>> f(dc.ones(2, 2), dc.ones(2, 2)).dtype
        dispatchcore.float16
    """

    def __init__(self, device_type: str = "cpu", dtype: _dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        _key(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        self._init_args = (device_type, dtype, enabled, cache_enabled)
        if enabled and self.fast_dtype not in _SUPPORTED_DTYPES:
            name = device_type.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"{name} Autocast only supports dtypes of "
                + ", ".join(map(str, _SUPPORTED_DTYPES))
                + " currently (PyTorch also allows bfloat16, which dispatchcore does not have).",
                stacklevel=2,
            )
            enabled = False
        self._enabled = enabled
        self._saved: list[tuple[bool, _dtype, bool]] = []

    def __enter__(self) -> autocast:
        state = _state()
        self._saved.append((is_autocast_enabled(self.device), state.dtypes[self.device],
                            state.cache_enabled))
        set_autocast_enabled(self.device, self._enabled)
        state.dtypes[self.device] = self.fast_dtype
        state.nesting += 1
        state.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        state = _state()
        prev_enabled, prev_dtype, prev_cache = self._saved.pop()
        state.nesting -= 1
        if state.nesting == 0:  # left the outermost autocast region
            state.cache.clear()
        set_autocast_enabled(self.device, prev_enabled)
        state.dtypes[self.device] = prev_dtype
        state.cache_enabled = prev_cache

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """Use as a decorator: each call of ``func`` runs in a fresh ``autocast`` with these arguments."""
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you mean "
                "to use autocast as a context manager? For example:\n"
                "    with dispatchcore.autocast(device_type=...):\n        output = model(input)")
        args = self._init_args

        @functools.wraps(func)
        def decorate_autocast(*a: Any, **kw: Any) -> Any:
            with warnings.catch_warnings():  # the constructor already warned once, if at all
                warnings.simplefilter("ignore")
                region = autocast(*args)
            with region:
                return func(*a, **kw)

        return decorate_autocast

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, "
                f"enabled={self._enabled}, cache_enabled={self._cache_enabled})")


# --- the kernels: cached_cast and the three policies (aten/src/ATen/autocast_mode.h) -----------
def _is_tensor(value: Any) -> bool:
    return hasattr(value, "_key_bits") and hasattr(value, "_data")


def _is_eligible(t: Any, device_type: str) -> bool:
    """``is_eligible``: a floating tensor on the autocast device, but never float64."""
    return t.device.type == device_type and t.is_floating_point() and t.dtype is not float64


def cached_cast(to_type: _dtype, arg: Any, device_type: str = "cpu") -> Any:
    """Cast an eligible tensor (or each tensor of a list) to ``to_type``; anything else as is.

    Casts of float32 leaves that require grad to the autocast dtype are cached for the rest of
    the autocast region (the "model weights" heuristic PyTorch took from Apex).
    """
    if type(arg) in (list, tuple):
        return type(arg)(cached_cast(to_type, a, device_type) for a in arg)
    if not _is_tensor(arg) or not _is_eligible(arg, device_type) or arg.dtype is to_type:
        return arg
    state = _state()
    if (to_type is state.dtypes[device_type] and arg.dtype is float32 and arg.requires_grad
            and arg.is_leaf and arg._base is None and state.cache_enabled):
        hit = state.cache.get(id(arg))
        if hit is not None and hit[0] is arg:
            return hit[1]
        casted = aten.to.dtype(arg, to_type)
        state.cache[id(arg)] = (arg, casted)
        return casted
    return aten.to.dtype(arg, to_type)


def _prioritize(current: _dtype, arg: Any, device_type: str) -> _dtype:
    if type(arg) in (list, tuple):
        for a in arg:
            current = _prioritize(current, a, device_type)
        return current
    if current is float64:
        raise RuntimeError("promote type is double in at::autocast::prioritize")
    if not _is_tensor(arg) or not (arg.device.type == device_type and arg.is_floating_point()):
        return current
    nxt = arg.dtype
    if nxt is float64:
        return current  # ignores double tensors
    if current is float32 or nxt is float32:
        return float32  # prioritizes float over the lower-precision type
    lower = get_autocast_dtype(device_type)
    if current is lower and nxt is lower:
        return lower
    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")


def _make_kernel(op: Any, policy: str, device_type: str) -> Callable[..., Any]:
    """The autocast wrapper of one operator: guard, cast, call the operator again."""
    key = AUTOCAST_KEYS[device_type]

    def autocast_kernel(*args: Any, **kwargs: Any) -> Any:
        with ExcludeDispatchKeyGuard(key):
            if policy == "lower_precision_fp":
                to_type = get_autocast_dtype(device_type)
            elif policy == "fp32":
                to_type = float32
            else:  # promote: the widest floating type among the eligible arguments
                to_type = get_autocast_dtype(device_type)
                for a in (*args, *kwargs.values()):
                    to_type = _prioritize(to_type, a, device_type)
            # c10 casts in a parameter-pack expansion, which GCC evaluates last argument first:
            # mm(x, w) casts w, then x. Same order here, so modes and traces see torch's sequence.
            if kwargs:
                kwargs = dict(reversed([(k, cached_cast(to_type, v, device_type))
                                        for k, v in reversed(kwargs.items())]))
            args = tuple(reversed([cached_cast(to_type, a, device_type) for a in reversed(args)]))
            return op(*args, **kwargs)

    autocast_kernel.__qualname__ = f"autocast_{policy}[{op.qualname}]"
    return autocast_kernel


_library: Library | None = None


def register_autocast_kernels() -> Library:
    """Register the ``AutocastCPU`` kernels of the three policies (once per process)."""
    global _library
    if _library is None:
        lib = Library("aten", "IMPL")
        for policy, names in (("lower_precision_fp", LOWER_PRECISION_FP_OPS), ("fp32", FP32_OPS),
                              ("promote", PROMOTE_OPS)):
            for name in names:
                base, _, overload = name.partition(".")
                op = getattr(getattr(aten, base), overload or "default")
                lib.impl(name, _make_kernel(op, policy, "cpu"), "AutocastCPU")
        _library = lib
    return _library


register_autocast_kernels()
