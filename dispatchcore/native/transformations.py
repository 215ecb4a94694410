"""numpy-style arrangement operators: stacking, splitting, rotating, tiling, broadcasting, grids.

Mirrors ``aten/src/ATen/native/TensorTransformations.cpp`` (``rot90``, ``fliplr``/``flipud``,
``atleast_{1,2,3}d``) and the numpy-named conveniences of ``TensorShape.cpp`` (``hstack``,
``vstack``, ``dstack``, ``column_stack``, ``row_stack``, ``hsplit``/``vsplit``/``dsplit``,
``tile``, ``ravel``, ``broadcast_to``, ``broadcast_tensors``, ``meshgrid``), with the Python-level
functions torch writes in ``torch/functional.py`` (``atleast_*``, ``broadcast_tensors``,
``broadcast_shapes``, ``meshgrid``).

All but ``rot90`` are ``CompositeImplicitAutograd`` in torch: written here, as there, with the
operators of ``shape.py`` and ``explicit.py`` (``cat``, ``flip``, ``repeat``, ``tensor_split``,
``view``, ``expand``), so a dispatch mode sees those, their gradients are those ops' nodes, and
every backend that has the building blocks has these. ``rot90`` is ``CompositeExplicitAutograd``
with its own derivative (``Rot90Backward0``).

Invariant: each kernel calls the dispatched operators torch's kernel calls, in its order, with
the arguments a torch dispatch mode sees (trailing defaults left out), so a ``LoggingMode`` log
matches torch's (``tests/differential/test_vs_torch_transformations.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._library import Library
from ..layouts import contiguous_format
from ..ops import aten as A
from ..shapes import broadcast_shapes as _broadcast_shapes
from ..shapes import wrap_dim
from ..tensor import Size, Tensor
from . import Bindings

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "register", "register_autograd"]

_STACKS = ("hstack", "vstack", "dstack", "column_stack", "row_stack")
# name -> (the fewest dimensions it splits, the dimension it splits along; hsplit splits a 1-d tensor along 0)
_SPLITS = {"hsplit": (1, 1), "vsplit": (2, 0), "dsplit": (3, 2)}

SCHEMAS: tuple[str, ...] = (
    "ravel(Tensor(a) self) -> Tensor(a)",
    "broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "broadcast_tensors(Tensor[] tensors) -> Tensor[]",
    "tile(Tensor self, SymInt[] dims) -> Tensor",
    *(schema for name in _STACKS for schema in (
        f"{name}(Tensor[] tensors) -> Tensor",
        f"{name}.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)")),
    *(schema for n in (1, 2, 3) for schema in (
        f"atleast_{n}d(Tensor self) -> Tensor",
        f"atleast_{n}d.Sequence(Tensor[] tensors) -> Tensor[]")),
    *(schema for name in _SPLITS for schema in (
        f"{name}.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",
        f"{name}.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]")),
    "fliplr(Tensor self) -> Tensor",
    "flipud(Tensor self) -> Tensor",
    "rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor",
    "meshgrid(Tensor[] tensors) -> Tensor[]",
    "meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]",
)


# --- kernels ------------------------------------------------------------------------------------
def ravel(self: Tensor) -> Tensor:
    return A.view.default(A.contiguous.default(self), [-1])


def broadcast_to(self: Tensor, size: Sequence[int]) -> Tensor:
    return A.expand.default(self, list(size))


def broadcast_tensors(tensors: Sequence[Tensor]) -> list[Tensor]:
    shape = _broadcast_shapes(*(tuple(t.shape) for t in tensors))
    # a tensor already of the broadcast shape is returned itself, not expanded (expand_outplace)
    return [t if tuple(t.shape) == shape else A.expand.default(t, list(shape)) for t in tensors]


def tile(self: Tensor, dims: Sequence[int]) -> Tensor:
    dims = list(dims)
    missing = self.dim() - len(dims)
    return A.repeat.default(self, [1] * missing + dims if missing > 0 else dims)


def atleast_1d(self: Tensor) -> Tensor:
    return A.reshape.default(self, [1]) if self.dim() == 0 else self


def atleast_2d(self: Tensor) -> Tensor:
    ndim = self.dim()
    if ndim == 0:
        return A.reshape.default(self, [1, 1])
    return A.unsqueeze.default(self, 0) if ndim == 1 else self


def atleast_3d(self: Tensor) -> Tensor:
    ndim = self.dim()
    if ndim == 0:
        return A.reshape.default(self, [1, 1, 1])
    if ndim == 1:
        return A.unsqueeze.default(A.unsqueeze.default(self, 0), -1)
    return A.unsqueeze.default(self, -1) if ndim == 2 else self


def _nonempty(name: str, tensors: Sequence[Tensor]) -> None:
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def _cat(tensors: list[Tensor], dim: int, out: Tensor | None) -> Tensor:
    args = (tensors,) if dim == 0 else (tensors, dim)  # a mode sees no trailing default, as torch's
    return A.cat.default(*args) if out is None else A.cat.out(*args, out=out)


def _hstack(tensors: Sequence[Tensor], out: Tensor | None = None) -> Tensor:
    _nonempty("hstack", tensors)
    rep = A.atleast_1d.Sequence(tensors)
    return _cat(rep, 0 if rep[0].dim() == 1 else 1, out)


def _vstack(tensors: Sequence[Tensor], out: Tensor | None = None) -> Tensor:
    _nonempty("vstack", tensors)
    return _cat(A.atleast_2d.Sequence(tensors), 0, out)


def _dstack(tensors: Sequence[Tensor], out: Tensor | None = None) -> Tensor:
    _nonempty("dstack", tensors)
    return _cat(A.atleast_3d.Sequence(tensors), 2, out)


def _column_stack(tensors: Sequence[Tensor], out: Tensor | None = None) -> Tensor:
    _nonempty("column_stack", tensors)
    # a 0-d or 1-d tensor becomes one column; the rest are stacked as hstack stacks them
    rep = [A.reshape.default(t, [t.numel(), 1]) if t.dim() <= 1 else t for t in tensors]
    return A.hstack.default(rep) if out is None else A.hstack.out(rep, out=out)


def _row_stack(tensors: Sequence[Tensor], out: Tensor | None = None) -> Tensor:
    return A.vstack.default(tensors) if out is None else A.vstack.out(tensors, out=out)


def _split_dim(name: str, self: Tensor) -> int:
    """The dimension ``torch.<name>`` splits along, after its dimension check."""
    least, dim = _SPLITS[name]
    ndim = self.dim()
    if ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor "
                           f"with {ndim} dimensions!")
    return 0 if ndim == 1 else dim


def _split_int(name: str) -> Callable[[Tensor, int], list[Tensor]]:
    def split(self: Tensor, sections: int) -> list[Tensor]:
        dim = _split_dim(name, self)
        size = self.shape[dim]
        if sections == 0 or size % sections != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {sections}!")
        return A.tensor_split.sections(self, sections, dim)
    return split


def _split_array(name: str) -> Callable[[Tensor, Sequence[int]], list[Tensor]]:
    def split(self: Tensor, indices: Sequence[int]) -> list[Tensor]:
        return A.tensor_split.indices(self, list(indices), _split_dim(name, self))
    return split


def fliplr(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return A.flip.default(self, [1])


def flipud(self: Tensor) -> Tensor:
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return A.flip.default(self, [0])


def rot90(self: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by ``k`` quarter turns from ``dims[0]`` towards ``dims[1]``: a flip and a transpose."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    ndim = self.dim()
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == ndim:  # the same dimension, one of them counted from the end
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    d0, d1 = wrap_dim(d0, ndim), wrap_dim(d1, ndim)
    k %= 4  # Python's modulo: k = -1 is three quarter turns
    if k == 1:
        return A.transpose.int(A.flip.default(self, [d1]), d0, d1)
    if k == 2:
        return A.flip.default(self, [d0, d1])
    if k == 3:
        return A.transpose.int(A.flip.default(self, [d0]), d0, d1)
    return A.clone.default(self, memory_format=contiguous_format)


def _meshgrid(tensors: Sequence[Tensor], *, indexing: str = "ij") -> list[Tensor]:
    _nonempty("meshgrid", tensors)
    first = tensors[0]
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t.dtype is not first.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != first.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    # "xy" is "ij" with the first two inputs swapped, and their grids swapped back
    swap = indexing == "xy" and len(tensors) >= 2
    refs = [tensors[1], tensors[0], *tensors[2:]] if swap else list(tensors)
    shape = [t.numel() for t in refs]
    grids = []
    for i, t in enumerate(refs):
        view = [1] * len(refs)
        view[i] = -1
        grids.append(A.expand.default(A.view.default(t, view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


_WARNED_MESHGRID: list[bool] = []


def meshgrid(tensors: Sequence[Tensor]) -> list[Tensor]:
    if not _WARNED_MESHGRID:  # TORCH_WARN_ONCE: once per process
        _WARNED_MESHGRID.append(True)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=4)
    return _meshgrid(tensors, indexing="ij")


def _each(one: Callable[[Tensor], Tensor]) -> Callable[[Sequence[Tensor]], list[Tensor]]:
    """The ``.Sequence`` overload of an ``atleast_*d``: the one-tensor kernel on each tensor."""
    return lambda tensors: [one(t) for t in tensors]


KERNELS_IMPLICIT: dict[str, Callable[..., Any]] = {
    "ravel": ravel, "broadcast_to": broadcast_to, "broadcast_tensors": broadcast_tensors, "tile": tile,
    "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d,
    **{f"atleast_{n}d.Sequence": _each(one) for n, one in ((1, atleast_1d), (2, atleast_2d), (3, atleast_3d))},
    **{name: f for stack, f in (("hstack", _hstack), ("vstack", _vstack), ("dstack", _dstack),
                                ("column_stack", _column_stack), ("row_stack", _row_stack))
       for name in (stack, f"{stack}.out")},
    **{key: f for name in _SPLITS for key, f in ((f"{name}.int", _split_int(name)),
                                                 (f"{name}.array", _split_array(name)))},
    "fliplr": fliplr, "flipud": flipud, "meshgrid": meshgrid, "meshgrid.indexing": _meshgrid,
}


def register(lib: Library) -> None:
    """``rot90`` at CompositeExplicitAutograd, the rest at CompositeImplicitAutograd (torch's keys)."""
    lib.impl("rot90", rot90, "CompositeExplicitAutograd")
    for name, kernel in KERNELS_IMPLICIT.items():
        lib.impl(name, kernel, "CompositeImplicitAutograd")


def register_autograd(lib: Library) -> None:
    """``rot90``'s derivative (derivatives.yaml: ``grad.rot90(-k, dims)``); the others have none of their own."""
    from ..autograd.kernels import register_derivative

    register_derivative(lib, "aten::rot90", "Rot90Backward0", ("self",),
                        lambda g, k, dims: A.rot90.default(g, -k, list(dims)))


# --- torch.* functions and Tensor methods -------------------------------------------------------
_BIND = Bindings({
    "ravel": ("ravel(Tensor input)",), "Tensor.ravel": ("ravel()",),
    "broadcast_to": ("broadcast_to(Tensor input, SymIntArrayRef size)",),
    "Tensor.broadcast_to": ("broadcast_to(SymIntArrayRef size)",),
    "tile": ("tile(Tensor input, SymIntArrayRef dims)",), "Tensor.tile": ("tile(SymIntArrayRef dims)",),
    **{name: (f"{name}(TensorList tensors, *, Tensor out=None)",) for name in _STACKS},
    **{key: sigs for name in _SPLITS for key, sigs in (
        (name, (f"{name}(Tensor input, int64_t sections)", f"{name}(Tensor input, IntArrayRef indices)")),
        (f"Tensor.{name}", (f"{name}(int64_t sections)", f"{name}(IntArrayRef indices)")))},
    "fliplr": ("fliplr(Tensor input)",), "Tensor.fliplr": ("fliplr()",),
    "flipud": ("flipud(Tensor input)",), "Tensor.flipud": ("flipud()",),
    "rot90": ("rot90(Tensor input, int64_t k=1, IntArrayRef dims={0,1})",),
    "Tensor.rot90": ("rot90(int64_t k=1, IntArrayRef dims={0,1})",),
    **{f"atleast_{n}d": (f"atleast_{n}d(Tensor input)", f"atleast_{n}d(TensorList tensors)") for n in (1, 2, 3)},
    "broadcast_tensors": ("broadcast_tensors(TensorList tensors)",),
    "meshgrid": ("meshgrid(TensorList tensors)", "meshgrid(TensorList tensors, *, c10::string_view indexing)"),
})


def _stack_call(name: str) -> Callable[[int, dict[str, Any]], Tensor]:
    def call(i: int, b: dict[str, Any]) -> Tensor:
        op = getattr(A, name)
        return op.default(b["tensors"]) if b["out"] is None else op.out(b["tensors"], out=b["out"])
    return call


def _split_call(name: str) -> Callable[[int, dict[str, Any]], tuple[Tensor, ...]]:
    def call(i: int, b: dict[str, Any]) -> tuple[Tensor, ...]:
        op = getattr(A, name)
        return tuple(op.int(b["input"], b["sections"]) if i == 0 else op.array(b["input"], list(b["indices"])))
    return call


_BOUND: dict[str, Callable[[int, dict[str, Any]], Any]] = {
    "ravel": lambda i, b: A.ravel.default(b["input"]),
    "broadcast_to": lambda i, b: A.broadcast_to.default(b["input"], list(b["size"])),
    "tile": lambda i, b: A.tile.default(b["input"], list(b["dims"])),
    **{name: _stack_call(name) for name in _STACKS},
    **{name: _split_call(name) for name in _SPLITS},
    "fliplr": lambda i, b: A.fliplr.default(b["input"]),
    "flipud": lambda i, b: A.flipud.default(b["input"]),
    "rot90": lambda i, b: A.rot90.default(b["input"], b["k"], list(b["dims"])),
}


def _atleast(n: int) -> Callable[..., Any]:
    """``torch.atleast_<n>d(*tensors)`` (torch/functional.py): one tensor in, one out; else a tuple."""
    key = f"atleast_{n}d"

    def atleast(*tensors: Any) -> Any:
        arg = tensors[0] if len(tensors) == 1 else tensors
        i, b = _BIND.parse(key, (arg,), {})
        op = getattr(A, key)  # looked up per call: this module is imported before aten defines it
        return op.default(b["input"]) if i == 0 else tuple(op.Sequence(b["tensors"]))

    atleast.__name__ = atleast.__qualname__ = key
    atleast.__doc__ = (f"``torch.{key}``: each tensor viewed with at least {n} dimension{'s' * (n > 1)} "
                       f"(``aten::{key}``); one tensor gives a tensor, several a tuple.")
    return atleast


def _broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """``torch.broadcast_tensors(*tensors)``: the tensors expanded to their common shape (``aten::broadcast_tensors``).

    Example:
        >>> import dispatchcore as dc
        >>> [tuple(t.shape) for t in dc.broadcast_tensors(dc.ones(3), dc.ones(2, 1))]
        [(2, 3), (2, 3)]
    """
    _, b = _BIND.parse("broadcast_tensors", (tensors,), {})
    return tuple(A.broadcast_tensors.default(b["tensors"]))


def _meshgrid_function(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """``torch.meshgrid(*tensors, indexing=None)``: coordinate grids (``aten::meshgrid``).

    ``indexing="ij"`` gives grids of shape ``(len(t0), len(t1), ...)``; ``"xy"`` swaps the first two.
    Leaving ``indexing`` out means ``"ij"`` and warns once, as torch does.

    Example:
        >>> import dispatchcore as dc
        >>> ys, xs = dc.meshgrid(dc.arange(2), dc.arange(3), indexing="xy")
        >>> tuple(xs.shape)
        (3, 2)
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    kwargs = {} if indexing is None else {"indexing": indexing}
    i, b = _BIND.parse("meshgrid", (tensors,), kwargs)
    if i == 0:
        return tuple(A.meshgrid.default(b["tensors"]))
    return tuple(A.meshgrid.indexing(b["tensors"], indexing=b["indexing"]))


def broadcast_shapes(*shapes: Any) -> Any:
    """``torch.broadcast_shapes``: the shape tensors of these shapes would broadcast to, without tensors.

    An int stands for a 1-d shape. Raises as torch does when two sizes cannot broadcast.

    Example:
        >>> import dispatchcore as dc
        >>> dc.broadcast_shapes((2, 1), (3,), ())
        dispatchcore.Size([2, 3])
    """
    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes)
    result = [1] * max((len(s) for s in shapes), default=0)
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            size = shape[i]
            if size == 1 or size == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {size} at {i}! Mismatching "
                                   f"argument at index {index} had {shape}; but expected shape should be "
                                   f"broadcastable to {result}")
            if size < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            result[i] = size
    for i, size in enumerate(result):
        if not isinstance(size, int):
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(size).__name__}')")
    return Size(result)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: _BIND.function(name, _BOUND[name]) for name in (
        "ravel", "broadcast_to", "tile", *_STACKS, *_SPLITS, "fliplr", "flipud", "rot90")},
    **{f"atleast_{n}d": _atleast(n) for n in (1, 2, 3)},
    "broadcast_tensors": _broadcast_tensors, "meshgrid": _meshgrid_function, "broadcast_shapes": broadcast_shapes,
}

METHODS: dict[str, Any] = {
    name: _BIND.method(name, _BOUND[name])
    for name in ("ravel", "broadcast_to", "tile", *_SPLITS, "fliplr", "flipud", "rot90")
}
