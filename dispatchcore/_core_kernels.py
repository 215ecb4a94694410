"""Backend-independent kernels of the core library: the layers PyTorch generates above backends.

* ADInplaceOrView (``torch/csrc/autograd/generated/ADInplaceOrViewType*.cpp``): view ops record
  ``_base`` and share the version counter; in-place and ``out=`` ops bump it. Every other op
  falls through this key (the global fallthrough, BackendSelectFallbackKernel.cpp).
* BackendSelect (``aten/src/ATen/BackendSelectRegister.cpp``): factories have no tensor
  argument, so this kernel turns ``device=`` into a key set and redispatches.
* CompositeImplicitAutograd decompositions (``aten/src/ATen/native/*.cpp``): matmul, reshape,
  softmax.int, log_softmax.int, contiguous, to.*, nll_loss; and CompositeExplicitAutograd
  ``detach``/``alias``, which need no backend.
All of them are registered through ``Library`` like any other kernel.
"""

from __future__ import annotations

from typing import Any

from . import aten as _definitions  # noqa: F401 - defines the operators used here
from . import trace as _trace
from ._library import Library
from .autograd.kernels import (
    BUILTIN_AD_INPLACE_OR_VIEW,
    INFERENCE_INPLACE_ERROR,
    _below_cache,
    as_view,
    below_state,
)
from .dtypes import device as _device
from .keys import DispatchKey
from .keyset import AFTER_ADINPLACEORVIEW, full_after_bits, key_bits
from .ops import aten
from .tensor import _DEVICES, Tensor
from .tensor import BACKEND_BITS_BY_DEVICE as _BITS_BY_DEVICE
from .tls import AutoDispatchBelowADInplaceOrView, per_thread

__all__ = ["register_core_kernels"]

VIEW_OPS = ("view", "_reshape_alias", "t", "transpose.int", "permute", "expand", "squeeze",
            "squeeze.dim", "squeeze.dims", "unsqueeze", "select.int", "slice.Tensor", "as_strided", "alias")
_AFTER_BACKEND_SELECT = full_after_bits(DispatchKey.BackendSelect)


# --- ADInplaceOrView ------------------------------------------------------------------------
def _make_view_kernel(op: Any) -> Any:
    def ad_inplace_or_view_view(bits: int, self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        state = per_thread.state.keys
        below = _below_cache.get(state) or below_state(state)
        if below is state and not _trace._enabled and not kwargs:  # already below: the Autograd kernel set it
            try:  # op.redispatch's memo lookup, inlined (See Note [Dispatch memo])
                fn, first = op._dispatch[3][bits & AFTER_ADINPLACEORVIEW]
            except KeyError:
                fn, first = op.redispatch, bits & AFTER_ADINPLACEORVIEW
            out = fn(self, *args) if first is None else fn(first, self, *args)
        elif below is state and not _trace._enabled:
            out = op.redispatch(bits & AFTER_ADINPLACEORVIEW, self, *args, **kwargs)
        else:  # AutoDispatchBelowADInplaceOrView (the guard object while tracing, so traces show it)
            with AutoDispatchBelowADInplaceOrView():
                out = op.redispatch(bits & AFTER_ADINPLACEORVIEW, self, *args, **kwargs)
        # as_view: the view shares its base's version counter and remembers the root base
        out._base = self if self._base is None else self._base
        out._vc = self._vc
        if out._key_bits != self._key_bits:  # made inside inference_mode (wrap made an inference tensor)
            as_view(self, out)
        return out

    return ad_inplace_or_view_view


def _make_inplace_kernel(op: Any, mutated: str) -> Any:
    def ad_inplace_or_view_inplace(bits: int, *args: Any, **kwargs: Any) -> Any:
        target = kwargs[mutated] if mutated in kwargs else args[0]
        st = per_thread.state
        if target._vc is None and not st.autograd[1]:
            # ADInplaceOrView stays TLS-included outside inference mode precisely to catch this
            raise RuntimeError(INFERENCE_INPLACE_ERROR)
        state = st.keys
        below = _below_cache.get(state) or below_state(state)
        if below is state and not _trace._enabled and not kwargs:  # already below: the Autograd kernel set it
            try:  # op.redispatch's memo lookup, inlined (See Note [Dispatch memo])
                fn, first = op._dispatch[3][bits & AFTER_ADINPLACEORVIEW]
            except KeyError:
                fn, first = op.redispatch, bits & AFTER_ADINPLACEORVIEW
            result = fn(*args) if first is None else fn(first, *args)
        elif below is state and not _trace._enabled:
            result = op.redispatch(bits & AFTER_ADINPLACEORVIEW, *args, **kwargs)
        else:  # AutoDispatchBelowADInplaceOrView (the guard object while tracing, so traces show it)
            with AutoDispatchBelowADInplaceOrView():
                result = op.redispatch(bits & AFTER_ADINPLACEORVIEW, *args, **kwargs)
        if target._vc is not None:
            target._vc[0] += 1  # increment_version
        return result

    return ad_inplace_or_view_inplace


def _register_ad_inplace_or_view(lib: Library) -> None:
    for name in VIEW_OPS:
        op = _find(name)
        kernel = BUILTIN_AD_INPLACE_OR_VIEW[op] = _make_view_kernel(op)  # Note [Fused ADInplaceOrView]
        lib.impl(name, kernel, "ADInplaceOrView", with_keyset=True, _raw_keyset=True)
    detach = _find("detach")

    def ad_inplace_or_view_detach(bits: int, self: Tensor) -> Tensor:
        # torch's kernel makes a non-differentiable view: the same data and version counter, which
        # the CompositeExplicitAutograd kernel below already gives (``detached_alias``)
        return detach.redispatch(bits & AFTER_ADINPLACEORVIEW, self)

    lib.impl("detach", ad_inplace_or_view_detach, "ADInplaceOrView", with_keyset=True, _raw_keyset=True)


def _register_inplace_ad(lib: Library) -> None:
    """The in-place and ``out=`` kernels, for the ops whose family did not register its own (last)."""
    from .native.torch_keys import TORCH_KEYS

    for op in _all_aten_ops():
        schema = op.schema
        written = [a.name for a in schema.arguments if a.is_write]
        name = op.qualname.partition("::")[2]
        # torch has none for the CompositeImplicitAutograd ones, nor for ops that only write buffers
        if written and "V" in TORCH_KEYS.get(name, "V") and not op.has_kernel_for_dispatch_key("ADInplaceOrView"):
            kernel = BUILTIN_AD_INPLACE_OR_VIEW[op] = _make_inplace_kernel(op, written[0])
            lib.impl(name, kernel, "ADInplaceOrView", with_keyset=True, _raw_keyset=True)


# --- BackendSelect --------------------------------------------------------------------------
def _backend_bits(device: Any) -> int:
    try:  # the same few device arguments come again and again
        return _BITS_BY_DEVICE[device]
    except (KeyError, TypeError):  # TypeError: an unhashable argument, refused below
        pass
    bits = _backend_bits_uncached(device)
    if len(_BITS_BY_DEVICE) < 64:
        _BITS_BY_DEVICE[device] = bits
    return bits


def _backend_bits_uncached(device: Any) -> int:
    dev = _device(device) if device is not None else _device("cpu")
    info = _DEVICES.get(dev.type)
    if info is None:
        raise RuntimeError(f"Expected a device type that a backend registered, got {dev.type!r}; "
                           f"known: {sorted(_DEVICES)}")
    return info[1] & (0xFFFF | _dense_bit)  # the Dense runtime key of the device's backend


_dense_bit = key_bits(DispatchKey.Dense)


def _make_backend_select_kernel(op: Any) -> Any:
    def backend_select(*args: Any, **kwargs: Any) -> Tensor:
        # computeDispatchKeySet: (device key | included) - excluded, then everything below us
        included, _, keep = per_thread.state.keys
        bits = (_backend_bits(kwargs.get("device")) | included) & keep & _AFTER_BACKEND_SELECT
        try:  # redispatch's memo lookup inlined (every factory call passes here)
            fn, first = op._dispatch[3][bits]
        except KeyError:
            pass  # See Note [No chained errors]: the miss resolves outside the handler
        else:
            return fn(*args, **kwargs) if first is None else fn(first, *args, **kwargs)
        return op.redispatch(bits, *args, **kwargs)

    return backend_select


def _make_to_copy_backend_select_kernel(op: Any) -> Any:
    def backend_select(self: Tensor, **kwargs: Any) -> Tensor:
        # the target device's key joins self's keys (multi_dispatch_key_set): the higher backend wins,
        # so cpu.to("meta") and meta.to("cpu") both run on Meta, as in torch
        included, _, keep = per_thread.state.keys
        bits = (_backend_bits(kwargs.get("device")) | self._key_bits | included) & keep & _AFTER_BACKEND_SELECT
        try:  # redispatch's memo lookup inlined, as in the factories' kernel above
            fn, first = op._dispatch[3][bits]
        except KeyError:
            pass  # See Note [No chained errors]
        else:
            return fn(self, **kwargs) if first is None else fn(first, self, **kwargs)
        return op.redispatch(bits, self, **kwargs)

    return backend_select


FACTORIES = ("empty.memory_format", "empty_strided", "zeros", "ones", "full", "arange", "arange.start",
             "arange.start_step", "linspace", "logspace", "scalar_tensor", "eye", "eye.m")


def _register_backend_select(lib: Library) -> None:
    for name in (*FACTORIES, "_to_copy"):
        op = _find(name)
        if name == "_to_copy":
            kernel = _make_to_copy_backend_select_kernel(op)
        else:
            kernel = _make_backend_select_kernel(op)
        kernel.__dispatchcore_kernel_check__ = lambda *a: None  # forwards **kwargs untouched
        lib.impl(name, kernel, "BackendSelect")


# --- helpers ----------------------------------------------------------------------------------
def _find(name: str) -> Any:
    base, _, overload = name.partition(".")
    packet = getattr(aten, base)
    return getattr(packet, overload or "default")


def _all_aten_ops() -> list[Any]:
    from .dispatcher import get_dispatcher

    return [op for op in get_dispatcher().operators() if op.qualname.startswith("aten::") and op.schema]


_library: Library | None = None


def register_core_kernels() -> Library:
    """Register the ADInplaceOrView, BackendSelect and composite kernels (once per process)."""
    global _library
    if _library is None:
        from . import _composites

        lib = Library("aten", "IMPL")
        _register_ad_inplace_or_view(lib)
        _register_backend_select(lib)
        _composites.register(lib)
        from .native import explicit, families

        explicit.register(lib)
        for family in families():
            family.register(lib)
        _register_inplace_ad(lib)
        _library = lib
    return _library

