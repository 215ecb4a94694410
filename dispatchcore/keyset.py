"""DispatchKeySet: an immutable set of dispatch keys held in c10's real 64-bit layout.

Mirrors ``c10/core/DispatchKeySet.h``. Bits 0..15 are backend components (``CPUBit`` is bit 0),
bits 16..61 are functionality keys (key ``k`` is bit ``15 + k``), so ``int(ks)`` equals PyTorch's
raw value: a CPU tensor's set is ``0x9400010001``. A runtime key such as ``AutogradCPU`` is stored
as its functionality bit plus its backend bit, which is why ``-`` and ``remove`` only ever clear
functionality bits. Inside the dispatcher key sets are plain ints; this class wraps them at the
API boundary.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .display import rich_display
from .keys import (
    _PB_START,
    END_OF_FUNCTIONALITY,
    NUM_BACKENDS,
    BackendComponent,
    DispatchKey,
    is_alias_key,
    parse_dispatch_key,
    to_backend_component,
    to_functionality_key,
)

__all__ = [
    "DispatchKeySet",
    "key_bits",
    "BACKEND_MASK",
    "FULL",
]

BACKEND_MASK = (1 << NUM_BACKENDS) - 1
FUNCTIONALITY_MASK = ((1 << (NUM_BACKENDS + END_OF_FUNCTIONALITY - 1)) - 1) & ~BACKEND_MASK
FULL = (1 << (NUM_BACKENDS + END_OF_FUNCTIONALITY - 1)) - 1  # 0x3fffffffffffffff


def _compute_key_bits(k: int) -> int:
    if k in (0, END_OF_FUNCTIONALITY) or is_alias_key(k):
        return 0
    functionality = int(to_functionality_key(k))
    bits = 1 << (NUM_BACKENDS + functionality - 1)
    backend = int(to_backend_component(k))
    if backend:
        bits |= 1 << (backend - 1)
    return bits


# Precomputed raw bits of every key value 0..155 (alias keys and Undefined map to 0).
_KEY_BITS: list[int] = [_compute_key_bits(k) for k in range(int(DispatchKey.EndOfAliasKeys) + 1)]

# Table-index arithmetic, shared with the dispatcher's hot path. For highest functionality f:
# a non-per-backend key indexes slot f; a per-backend one indexes StartOf<F>Backends + backend.
FUNCTIONALITY_BASE: list[int] = [_PB_START.get(f, f) for f in range(END_OF_FUNCTIONALITY)]
BACKEND_SELECT: list[int] = [0xFF if f in _PB_START else 0 for f in range(END_OF_FUNCTIONALITY)]


def key_bits(key: DispatchKey | BackendComponent | str | int) -> int:
    """Raw bits of one key as a key set (``DispatchKeySet(k).raw_repr()``)."""
    if type(key) is DispatchKey:  # the common case first: isinstance checks cost ~70 ns each
        return _KEY_BITS[key]
    if isinstance(key, BackendComponent):
        return 1 << (int(key) - 1) if key else 0
    if isinstance(key, str):
        key = parse_dispatch_key(key)
    return _KEY_BITS[int(key)]


def highest_priority_index(bits: int) -> int:
    """Mirror ``highestPriorityTypeId`` on raw bits; returns a ``DispatchKey`` value.

    The highest functionality bit picks the key; for per-backend functionalities the highest
    backend bit picks the runtime key (none gives ``StartOf<F>Backends``, as in c10).
    """
    f = (bits >> NUM_BACKENDS).bit_length()
    return FUNCTIONALITY_BASE[f] + ((bits & BACKEND_MASK).bit_length() & BACKEND_SELECT[f])


_INTERNED: dict[int, DispatchKeySet] = {}


class DispatchKeySet:
    """An immutable set of dispatch keys with PyTorch's layout, order, names and raw values.

    Construct from nothing (empty), a key or key name, a ``BackendComponent``, or an iterable of
    those; ``DispatchKeySet.from_raw(int)`` takes PyTorch's raw value.

    Example:
        >>> ks = DispatchKeySet(["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"])
        >>> ks
        DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)
        >>> hex(int(ks))
        '0x9400010001'
        >>> ks.highest_priority_key()
        <DispatchKey.AutocastCPU: 24>
        >>> ks.remove(DispatchKey.AutogradCUDA)   # removes the Autograd functionality bit
        DispatchKeySet(CPU, ADInplaceOrView, AutocastCPU)
    """

    __slots__ = ("_bits",)
    _bits: int

    def __init__(self, keys: DispatchKey | BackendComponent | str | Iterable | None = None) -> None:
        bits = 0
        if keys is None:
            pass
        elif isinstance(keys, (DispatchKey, BackendComponent, str)):
            bits = key_bits(keys)
        elif isinstance(keys, DispatchKeySet):
            bits = keys._bits
        else:
            for k in keys:
                bits |= key_bits(k)
        self._bits = bits

    @classmethod
    def from_raw(cls, bits: int) -> DispatchKeySet:
        """The set whose raw 64-bit value is ``bits`` (``DispatchKeySet(RAW, bits)``)."""
        if not 0 <= bits <= FULL:
            raise ValueError(f"raw key-set value {bits:#x} is outside 0..{FULL:#x}")
        return cls._from_bits(bits)

    @classmethod
    def _from_bits(cls, bits: int) -> DispatchKeySet:
        """Wrap raw bits without validation; interned, since hot-path callers rewrap few values."""
        ks = _INTERNED.get(bits)
        if ks is None:
            ks = object.__new__(cls)
            ks._bits = bits
            if len(_INTERNED) < 4096:
                _INTERNED[bits] = ks
        return ks

    @classmethod
    def full(cls) -> DispatchKeySet:
        """Every backend and functionality bit (``DispatchKeySet::FULL``)."""
        return cls._from_bits(FULL)

    @classmethod
    def full_after(cls, key: DispatchKey | str) -> DispatchKeySet:
        """Mirror ``DispatchKeySet(FULL_AFTER, key)``.

        All backend bits and every functionality strictly below ``key``'s functionality, plus
        ``PythonDispatcher``, which c10 always adds back.

        Example:
            >>> hex(int(DispatchKeySet.full_after(DispatchKey.ADInplaceOrView)))
            '0x20000003ffffffff'
        """
        return cls._from_bits(full_after_bits(key))

    # --- set algebra (plain bit operations, except '-' which spares backend bits) ---------
    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet._from_bits(self._bits | _as_bits(other))

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet._from_bits(self._bits & _as_bits(other))

    def __xor__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet._from_bits(self._bits ^ _as_bits(other))

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        """Remove ``other``'s functionality bits; backend bits of ``self`` survive (as in c10)."""
        return DispatchKeySet._from_bits(self._bits & (BACKEND_MASK | ~_as_bits(other)) & FULL)

    __ror__ = __or__
    __rand__ = __and__

    def add(self, key: DispatchKey | BackendComponent | str) -> DispatchKeySet:
        """Return the set with ``key`` added (``DispatchKeySet::add``)."""
        return DispatchKeySet._from_bits(self._bits | key_bits(key))

    def remove(self, key: DispatchKey | str) -> DispatchKeySet:
        """Return the set without ``key``'s *functionality* bit (``DispatchKeySet::remove``).

        Backend bits are shared between keys, so they stay: ``{CPU, AutogradCPU}.remove(CPU)`` keeps
        ``CPUBit``. Use ``remove_backend`` to clear one.
        """
        return DispatchKeySet._from_bits(self._bits & ~(key_bits(key) & ~BACKEND_MASK))

    def remove_backend(self, backend: BackendComponent | int) -> DispatchKeySet:
        """Return the set without one backend bit (``DispatchKeySet::remove_backend``)."""
        return DispatchKeySet._from_bits(self._bits & ~key_bits(BackendComponent(backend)))

    def has(self, key: DispatchKey | BackendComponent | str) -> bool:
        """True when every bit of ``DispatchKeySet(key)`` is present (``DispatchKeySet::has``).

        Bits are shared, so ``{CPU, CUDA, AutogradCUDA}.has(AutogradCPU)`` is True, as in c10.
        A key with no bits (``Undefined``, alias keys) is therefore in every set, as in PyTorch.
        """
        bits = key_bits(key)
        return self._bits & bits == bits

    def has_any(self, other: DispatchKeySet) -> bool:
        """True when the sets share any bit (``DispatchKeySet::has_any``)."""
        return bool(self._bits & _as_bits(other))

    def has_all(self, other: DispatchKeySet) -> bool:
        """True when every bit of ``other`` is present (``DispatchKeySet::has_all``)."""
        bits = _as_bits(other)
        return self._bits & bits == bits

    def has_backend(self, backend: BackendComponent | int) -> bool:
        """True when the backend bit is present (``DispatchKeySet::has_backend``)."""
        return bool(self._bits & key_bits(BackendComponent(backend)))

    def is_empty(self) -> bool:
        """True when no bit is set."""
        return self._bits == 0

    # --- priority ---------------------------------------------------------------------------
    def highest_functionality_key(self) -> DispatchKey:
        """Mirror ``highestFunctionalityKey``: the highest functionality bit as a key."""
        return DispatchKey((self._bits >> NUM_BACKENDS).bit_length())

    def highest_backend(self) -> BackendComponent:
        """Mirror ``highestBackendKey``: the highest backend bit (``InvalidBit`` if none)."""
        return BackendComponent((self._bits & BACKEND_MASK).bit_length())

    def highest_priority_key(self) -> DispatchKey:
        """Mirror ``highestPriorityTypeId``: the key a dispatch on this set would pick.

        Example:
            >>> DispatchKeySet(["Python", "CPU", "AutogradCPU"]).highest_priority_key()
            <DispatchKey.AutogradCPU: 134>
        """
        return DispatchKey(highest_priority_index(self._bits))

    # --- conversions and protocols ----------------------------------------------------------
    def raw_repr(self) -> int:
        """The raw 64-bit value, as ``torch._C.DispatchKeySet.raw_repr()``."""
        return self._bits

    def __int__(self) -> int:
        return self._bits

    __index__ = __int__

    def __bool__(self) -> bool:
        return self._bits != 0

    def __iter__(self) -> Iterator[DispatchKey]:
        """Keys from lowest to highest priority, as c10 iterates them.

        A per-backend functionality yields one runtime key per backend bit, and nothing when no
        backend bit is set.
        """
        backends = [b for b in range(1, NUM_BACKENDS + 1) if self._bits >> (b - 1) & 1]
        for f in range(1, END_OF_FUNCTIONALITY):
            if not self._bits >> (NUM_BACKENDS + f - 1) & 1:
                continue
            start = _PB_START.get(f)
            if start is None:
                yield DispatchKey(f)
            else:
                for b in backends:
                    yield DispatchKey(start + b)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, (DispatchKey, BackendComponent, str)) and self.has(key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DispatchKeySet):
            return self._bits == other._bits
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("DispatchKeySet", self._bits))

    def _repr_html_(self) -> str | None:
        """Jupyter: the key set as its bit strip (``dispatchcore.notebook.keyset_html``)."""
        return rich_display("keyset_html", self)

    def _repr_svg_(self) -> str | None:
        """Jupyter: the key set as an SVG bit strip with its raw value (``dispatchcore.notebook.keyset_svg``)."""
        return rich_display("keyset_svg", self)

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join(k.name for k in self) + ")"

    __str__ = __repr__

    def __reduce__(self):
        return (DispatchKeySet.from_raw, (self._bits,))


def _as_bits(value: DispatchKeySet | DispatchKey | str | int) -> int:
    if type(value) is DispatchKey:  # exact-type tests first: isinstance costs more
        return _KEY_BITS[value]
    if isinstance(value, DispatchKeySet):
        return value._bits
    if isinstance(value, (DispatchKey, BackendComponent, str)):
        return key_bits(value)
    raise TypeError(f"expected a DispatchKeySet or DispatchKey, got {type(value).__name__}")


def full_after_bits(key: DispatchKey | str) -> int:
    """Raw bits of ``DispatchKeySet(FULL_AFTER, key)``; see ``DispatchKeySet.full_after``."""
    f = int(to_functionality_key(parse_dispatch_key(key)))
    return ((1 << (NUM_BACKENDS + f - 1)) - 1) | key_bits(DispatchKey.PythonDispatcher)


def _bits_of(*keys: DispatchKey) -> int:
    bits = 0
    for k in keys:
        bits |= key_bits(k)
    return bits


_D = DispatchKey
# Named sets from c10/core/DispatchKeySet.h, as raw ints (the dispatcher's currency).
AUTOGRAD_KEYSET = _bits_of(_D.AutogradFunctionality, _D.AutogradOther, _D.AutogradNestedTensor)
AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW = AUTOGRAD_KEYSET | key_bits(_D.ADInplaceOrView)
AFTER_AUTOGRAD = full_after_bits(_D.AutogradOther)
AFTER_ADINPLACEORVIEW = full_after_bits(_D.ADInplaceOrView)
AFTER_FUNCTIONALIZE = full_after_bits(_D.Functionalize) & ~key_bits(_D.ADInplaceOrView)
AUTOCAST_KEYSET = _bits_of(*(k for k in DispatchKey if k.name.startswith("Autocast")))
PYTHON_KEYSET = _bits_of(_D.Python, _D.PythonTLSSnapshot)
DEFAULT_INCLUDED = _bits_of(_D.BackendSelect, _D.ADInplaceOrView)
DEFAULT_EXCLUDED = AUTOCAST_KEYSET
BACKEND_FUNCTIONALITY_KEYS = _bits_of(_D.Dense, _D.Quantized, _D.Sparse, _D.SparseCsr) | BACKEND_MASK

_AUTOGRAD_FOR_BACKEND = {
    b: DispatchKey[f"Autograd{b.name[:-3]}"]
    for b in BackendComponent
    if b.name[:-3] in {"CPU", "CUDA", "XLA", "Lazy", "Meta", "MPS", "HPU", "IPU", "XPU", "MTIA",
                       "MAIA", "PrivateUse1", "PrivateUse2", "PrivateUse3"}
}
_AUTOCAST_FOR_BACKEND = {
    b: DispatchKey[f"Autocast{b.name[:-3]}"]
    for b in BackendComponent
    if b.name[:-3] in {"CPU", "MTIA", "MAIA", "XPU", "IPU", "HPU", "CUDA", "XLA", "PrivateUse1", "MPS"}
}


def autograd_keyset_for_backend(backend: BackendComponent) -> int:
    """Mirror ``getAutogradRelatedKeySetFromBackend``: ``Autograd<B>`` (or AutogradOther) + ADInplaceOrView."""
    return _bits_of(_AUTOGRAD_FOR_BACKEND.get(backend, _D.AutogradOther), _D.ADInplaceOrView)


def autocast_keyset_for_backend(backend: BackendComponent) -> int:
    """Mirror ``getAutocastRelatedKeySetFromBackend``: ``Autocast<B>``, or nothing (e.g. for Meta)."""
    key = _AUTOCAST_FOR_BACKEND.get(backend)
    return key_bits(key) if key is not None else 0


def tensor_keyset(backend_key: DispatchKey | str, *, inference: bool = False) -> DispatchKeySet:
    """The key set a tensor of ``backend_key`` gets (TensorImpl's constructor, c10/core/TensorImpl.cpp).

    Example:
        >>> tensor_keyset("CPU")
        DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)
        >>> tensor_keyset("Meta")
        DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)
        >>> tensor_keyset("CPU", inference=True)
        DispatchKeySet(CPU, AutocastCPU)
    """
    bits = key_bits(backend_key)
    backend = BackendComponent((bits & BACKEND_MASK).bit_length())
    bits |= autocast_keyset_for_backend(backend)
    bits &= ~PYTHON_KEYSET
    if inference:
        bits &= BACKEND_MASK | ~AUTOGRAD_KEYSET_WITH_ADINPLACEORVIEW
    else:
        bits |= autograd_keyset_for_backend(backend)
    return DispatchKeySet._from_bits(bits)
