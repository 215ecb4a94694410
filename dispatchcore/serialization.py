"""``save`` and ``load``: tensors and containers of them in torch's zip checkpoint format, loaded as data only.

Mirrors ``torch/serialization.py`` (torch 2.13) for CPU tensors. The file format is torch's own,
so ``torch.load`` reads what ``dispatchcore.save`` writes and ``dispatchcore.load`` reads what
``torch.save`` writes:

* a zip archive (entries stored, not compressed) whose entries sit under one folder
  (``archive/`` when dispatchcore writes): ``data.pkl``, ``byteorder`` (``little``), ``version``
  (``3``), ``.format_version`` (``1``), ``.storage_alignment`` (``64``) and ``data/<key>`` per storage;
* ``data.pkl`` is a pickle (protocol 2) of the object, where a tensor is
  ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  OrderedDict())`` and a storage is the persistent id ``("storage", torch.<Type>Storage, key,
  "cpu", numel)``, its bytes (little-endian) in ``data/<key>``.

Views that share storage are saved once: tensors over the same numpy buffer get the same
storage key (the whole buffer is written), and on load they are views of one array again, so
``x`` and ``x[1]`` saved together still alias after loading (torch does the same).

``load`` never executes code from the file: ``data.pkl`` is read by an unpickler that resolves
only an allow-list of globals (the tensor and parameter rebuild functions, the storage types,
dtypes, ``torch.Size``, ``torch.device``, ``collections.OrderedDict``/``Counter`` and a few
builtins), the spirit of ``torch.load(weights_only=True)``; anything else, a file that is not a
zip archive, a missing entry or a storage of the wrong size raises ``pickle.UnpicklingError`` or
``RuntimeError`` naming the problem. Invariant: ``load(save(obj))`` equals ``obj`` for tensors,
dicts (including ``OrderedDict``), lists, tuples, numbers, strings, bools and ``None``, with
dtypes, shapes, strides, storage sharing and ``requires_grad`` kept.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile
from typing import IO, Any

import numpy as np

from . import dtypes
from .tensor import Size, Tensor, wrap_cpu

__all__ = ["load", "save"]

_STORAGES = {  # dtype name -> torch's storage class name
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_STORAGE_DTYPES = {storage: name for name, storage in _STORAGES.items()}
_PREFIX = "archive"


class _Global:
    """A reference written as a pickle ``GLOBAL`` (``module name``) without importing that module."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle's save_reduce wants a callable; never called
        raise TypeError(f"{self.module}.{self.name} is a reference for the pickle writer only")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")
_STORAGE_GLOBALS = {name: _Global("torch", storage) for name, storage in _STORAGES.items()}


def _storage_root(a: np.ndarray) -> np.ndarray:
    """The ndarray that owns ``a``'s memory (its storage), following ``.base``."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


class _Pickler(pickle._Pickler):  # the Python pickler: its dispatch table can write GLOBALs by name
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[int, tuple[str, np.ndarray]] = {}  # id(root) -> (key, root)

    def save_marker(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())  # type: ignore[attr-defined]
        self.memoize(obj)  # type: ignore[attr-defined]  # pickle._Pickler's own helpers

    dispatch[_Global] = save_marker  # type: ignore[assignment]  # pickle._Pickler's dispatch table

    def _storage_of(self, t: Tensor) -> tuple[tuple[Any, ...], int]:
        """The persistent id of ``t``'s storage, and ``t``'s offset in it."""
        data = t._data
        if not isinstance(data, np.ndarray) or t.device.type != "cpu":
            raise RuntimeError(f"dispatchcore.save: only CPU tensors can be saved, got a tensor on {t.device}")
        root = _storage_root(data)
        if root.dtype != data.dtype or not root.flags.c_contiguous:
            root = np.ascontiguousarray(data)  # not a view of a plain buffer: saved as its own storage
            data = root
        entry = self.storages.get(id(root))
        if entry is None:
            entry = (str(len(self.storages)), root)
            self.storages[id(root)] = entry
        key = entry[0]
        offset = (data.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // data.dtype.itemsize
        storage_type = _STORAGE_GLOBALS[t.dtype.name]
        return ("storage", storage_type, key, "cpu", int(root.size)), offset

    def save_dtype(self, obj: Any) -> None:
        self.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode())  # type: ignore[attr-defined]
        self.memoize(obj)  # type: ignore[attr-defined]  # pickle._Pickler's own helpers

    dispatch[dtypes.dtype] = save_dtype  # type: ignore[assignment]

    def reducer_override(self, obj: Any) -> Any:
        from . import device
        from .nn.parameter import Parameter

        if isinstance(obj, Parameter):  # torch's Parameter.__reduce_ex__: the data as a plain tensor
            if obj.device.type != "cpu" or not isinstance(obj._data, np.ndarray):
                raise RuntimeError(f"dispatchcore.save: only CPU tensors can be saved, got a tensor on {obj.device}")
            plain = wrap_cpu(obj._data)  # a plain tensor over the same memory (same storage key)
            return _REBUILD_PARAMETER, (plain, obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Tensor):
            pid, offset = self._storage_of(obj)
            return _REBUILD_TENSOR, (_PersistentId(pid), offset, tuple(obj.shape), tuple(obj.stride()),
                                     obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Size):
            return _TORCH_SIZE, (tuple(obj),)
        if isinstance(obj, device):
            return _TORCH_DEVICE, (str(obj),)
        return NotImplemented

    def persistent_id(self, obj: Any) -> Any:
        return obj.pid if isinstance(obj, _PersistentId) else None


class _PersistentId:
    """A storage reference, pickled as a persistent id (``BINPERSID``)."""

    __slots__ = ("pid",)

    def __init__(self, pid: tuple[Any, ...]) -> None:
        self.pid = pid


def save(obj: Any, f: str | os.PathLike[str] | IO[bytes], pickle_module: Any = None,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (tensors, state dicts, containers of them) to ``f`` in torch's zip checkpoint format.

    ``f`` is a path or a writable binary file. ``torch.load`` can read the result.

    Example:
        >>> import io, dispatchcore as dc
        >>> buf = io.BytesIO()
        >>> x = dc.arange(6.0).reshape(2, 3)
        >>> dc.save({"x": x, "row": x[1], "step": 3}, buf)
        >>> back = dc.load(io.BytesIO(buf.getvalue()))
        >>> back["row"], back["row"].storage_offset(), back["step"]
        (tensor([3., 4., 5.]), 3, 3)
    """
    if pickle_module is not None or not _use_new_zipfile_serialization:
        raise NotImplementedError("dispatchcore.save writes torch's zip format with its own pickler only")
    body = io.BytesIO()
    pickler = _Pickler(body, pickle_protocol)
    pickler.dump(obj)
    records = [("data.pkl", body.getvalue()), (".format_version", b"1"), (".storage_alignment", b"64"),
               ("byteorder", b"little")]
    for key, root in pickler.storages.values():
        records.append((f"data/{key}", root.astype(root.dtype.newbyteorder("<"), copy=False).tobytes()))
    records.append(("version", b"3\n"))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:
            _write_zip(handle, records)
    else:
        _write_zip(f, records)


def _write_zip(handle: IO[bytes], records: list[tuple[str, bytes]]) -> None:
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, payload in records:
            info = zipfile.ZipInfo(f"{_PREFIX}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, payload)


# --- loading -----------------------------------------------------------------------------------------
def _dtype_named(name: str) -> Any:
    """``dispatchcore.<name>`` for a dtype name (``float32``, ``bool``, ...)."""
    import dispatchcore

    return getattr(dispatchcore, name)


class _StorageType:
    """What a ``torch.<Type>Storage`` global resolves to: the storage's dtype."""

    __slots__ = ("dtype",)

    def __init__(self, dtype_name: str) -> None:
        self.dtype = _dtype_named(dtype_name)


def _rebuild_tensor(storage: np.ndarray, storage_offset: int, size: tuple[int, ...], stride: tuple[int, ...],
                    requires_grad: bool = False, backward_hooks: Any = None, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: a view of the storage array (shared storage stays shared)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    needed = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if storage_offset < 0 or any(s < 0 for s in stride) or needed > storage.size:
        raise RuntimeError(f"dispatchcore.load: a tensor of size {list(size)} and stride {list(stride)} at offset "
                           f"{storage_offset} does not fit its storage of {storage.size} elements")
    itemsize = storage.dtype.itemsize
    view = np.ndarray(size, storage.dtype, buffer=storage, offset=storage_offset * itemsize,
                      strides=tuple(s * itemsize for s in stride)) if storage.size else np.empty(size, storage.dtype)
    t = wrap_cpu(view)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any = None) -> Any:
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any) -> Any:
    return _rebuild_parameter(data, requires_grad)


def _device(name: str, index: int | None = None) -> Any:
    from . import device

    return device(name) if index is None else device(name, index)


def _allowed(module: str, name: str) -> Any:
    """The object an allowed global resolves to, or None."""
    if module == "torch._utils":
        return {"_rebuild_tensor_v2": _rebuild_tensor, "_rebuild_parameter": _rebuild_parameter,
                "_rebuild_parameter_with_state": _rebuild_parameter_with_state}.get(name)
    if module == "torch":
        if name in _STORAGE_DTYPES:
            return _StorageType(_STORAGE_DTYPES[name])
        if name == "Size":
            return Size
        if name == "device":
            return _device
        if name in _STORAGES:
            return _dtype_named(name)
        return None
    if module == "collections" and name in ("OrderedDict", "Counter", "defaultdict"):
        return getattr(collections, name)
    if module in ("builtins", "__builtin__") and name in ("set", "frozenset", "complex", "slice", "bytearray"):
        return {"set": set, "frozenset": frozenset, "complex": complex, "slice": slice, "bytearray": bytearray}[name]
    return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes], storages: Any) -> None:
        super().__init__(file)
        self._storages = storages

    def find_class(self, module: str, name: str) -> Any:
        found = _allowed(module, name)
        if found is None:
            raise pickle.UnpicklingError(
                f"dispatchcore.load: refusing the global {module}.{name}: only tensors, parameters, dtypes, sizes, "
                "devices, OrderedDict/Counter and plain Python containers and values can be loaded (the file is "
                "read as data, never run, like torch.load(weights_only=True))")
        return found

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"dispatchcore.load: unsupported persistent id {pid!r}")
        _, storage_type, key, _location, numel = pid
        return self._storages(str(key), storage_type.dtype, int(numel))


def load(f: str | os.PathLike[str] | IO[bytes], map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read an object ``save`` (or ``torch.save``) wrote; tensors come back on the CPU.

    Loading is always data-only (see the module docstring): ``weights_only`` is accepted for
    torch's signature, and ``map_location`` may be None or the CPU.

    Example:
        >>> import io, dispatchcore as dc
        >>> buf = io.BytesIO()
        >>> dc.save([dc.tensor([1, 2]), "tag"], buf)
        >>> dc.load(io.BytesIO(buf.getvalue()))
        [tensor([1, 2]), 'tag']
    """
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise NotImplementedError(f"dispatchcore.load: map_location={map_location!r} is not supported (CPU only)")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as handle:
            return _load(handle.read())
    return _load(f.read())


def _load(payload: bytes) -> Any:
    try:
        archive = zipfile.ZipFile(io.BytesIO(payload))
    except zipfile.BadZipFile:
        if payload[:2] == b"\x80\x02" or payload[:1] == b"\x80":
            raise RuntimeError("dispatchcore.load: this is a legacy (pre-1.6, non-zip) torch file, which cannot be "
                               "read safely; re-save it with a recent torch.save") from None
        raise RuntimeError("dispatchcore.load: not a checkpoint (PytorchStreamReader failed reading zip archive: "
                           "failed finding central directory)") from None
    with archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pickles:
            raise RuntimeError("dispatchcore.load: the archive has no data.pkl record (not a torch/dispatchcore "
                               "checkpoint)")
        prefix = pickles[0][: -len("data.pkl")]
        byteorder = archive.read(prefix + "byteorder").decode() if prefix + "byteorder" in names else "little"
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"dispatchcore.load: unknown byteorder {byteorder!r}")
        cache: dict[str, np.ndarray] = {}

        def storage(key: str, dtype: Any, numel: int) -> np.ndarray:
            if key not in cache:
                record = f"{prefix}data/{key}"
                if record not in names:
                    raise RuntimeError(f"dispatchcore.load: the archive has no record {record}")
                raw = archive.read(record)
                np_dtype = dtype.np.newbyteorder("<" if byteorder == "little" else ">")
                if len(raw) < numel * np_dtype.itemsize:
                    raise RuntimeError(f"dispatchcore.load: record {record} has {len(raw)} bytes, expected "
                                       f"{numel * np_dtype.itemsize} for {numel} elements of {dtype}")
                cache[key] = np.frombuffer(raw, np_dtype, count=numel).astype(dtype.np)  # a writable native copy
            found = cache[key]
            if found.dtype != dtype.np:
                raise RuntimeError(f"dispatchcore.load: storage {key} is read both as {found.dtype} and {dtype}")
            return found

        try:
            return _Unpickler(io.BytesIO(archive.read(prefix + "data.pkl")), storage).load()
        except (pickle.UnpicklingError, RuntimeError) as error:
            if str(error).startswith("dispatchcore.load"):
                raise
            problem = str(error)
        except Exception as error:  # a truncated or corrupted pickle
            problem = f"{type(error).__name__}: {error}"
    # raised outside the handler: the pickle module's own exception is an internal detail
    raise pickle.UnpicklingError(f"dispatchcore.load: data.pkl is corrupted ({problem})")
