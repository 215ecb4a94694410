"""Random numbers: ``Generator``, the seeding functions, and the random operators.

The family: the in-place samplers ``uniform_``, ``normal_``, ``random_`` (three overloads),
``exponential_`` and ``bernoulli_.Tensor`` (backend kernels: ``dispatchcore_backends.cpu.random``), and
the composites torch builds on them at CompositeExplicitAutograd: ``rand``/``randn`` (``empty`` then
``uniform_``/``normal_``), ``randint`` (``empty`` then ``random_``), ``normal.float_float``,
``bernoulli`` and ``bernoulli.p`` (``empty_like`` then ``bernoulli_``), with their BackendSelect kernels.

Mirrors ``aten/src/ATen/native/TensorFactories.cpp`` (rand, randn, randint), ``Distributions.cpp``
(bernoulli, normal) and ``torch/csrc/Generator.cpp`` (``torch.Generator``): a ``Generator`` is a handle on
a device's engine (torch's ``GeneratorImpl``); the CPU backend registers its engine class and default
engine here (``register_engine``), so ``Generator('cpu')`` and ``default_generator`` work once backends
load. Invariant: each operator is registered at exactly torch's keys; composites call dispatched
operators only; after ``manual_seed(s)`` every CPU draw equals torch's (see the CPU kernels' docstring
for the one documented exception).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from .._library import Library
from ..ops import aten as A
from ..tensor import Tensor
from ..tls import AutoDispatchBelowADInplaceOrView

__all__ = ["FUNCTIONS", "METHODS", "SCHEMAS", "Generator", "default_generator", "get_rng_state", "initial_seed",
           "register", "register_autograd", "register_engine", "seed", "set_rng_state"]

_FACTORY = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"
_LIKE = ("ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
         "MemoryFormat? memory_format=None) -> Tensor")
_INT_FACTORY = "ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"
SCHEMAS: tuple[str, ...] = (
    f"rand(SymInt[] size, *, {_FACTORY}",
    f"rand.generator(SymInt[] size, *, Generator? generator, {_FACTORY}",
    f"randn(SymInt[] size, *, {_FACTORY}",
    f"randn.generator(SymInt[] size, *, Generator? generator, {_FACTORY}",
    f"randint(SymInt high, SymInt[] size, *, {_INT_FACTORY}",
    f"randint.generator(SymInt high, SymInt[] size, *, Generator? generator, {_INT_FACTORY}",
    f"randint.low(SymInt low, SymInt high, SymInt[] size, *, {_INT_FACTORY}",
    f"randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, {_INT_FACTORY}",
    f"normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, {_FACTORY}",
    "uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> Tensor(a!)",
    "normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor(a!)",
    "random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)",
    "random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)",
    "random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)",
    "exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)",
    "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
    "bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
    "bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!)",
    f"randint_like(Tensor self, SymInt high, *, {_LIKE}",
    f"randint_like.Tensor(Tensor self, Tensor high, *, {_LIKE}",
    f"randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, {_LIKE}",
    f"randint_like.generator(Tensor self, SymInt high, *, Generator? generator, {_LIKE}",
    f"randint_like.Tensor_generator(Tensor self, Tensor high, *, Generator? generator, {_LIKE}",
    f"randint_like.low_generator_dtype(Tensor self, SymInt low, SymInt high, *, Generator? generator, {_LIKE}",
    "normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor",
    "normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
    "normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
    "multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor",
)


# --- Generator (torch/csrc/Generator.cpp) ------------------------------------------------------------------------
_ENGINES: dict[str, tuple[type, Any]] = {}  # device type -> (engine class, default engine)


def register_engine(device_type: str, engine_class: type, default_engine: Any) -> None:
    """A backend's random engine (torch's ``GeneratorImpl``) and its default instance."""
    _ENGINES[device_type] = (engine_class, default_engine)


def _engines(device_type: str) -> tuple[type, Any]:
    if device_type not in _ENGINES:
        from ..plugins import load_backends

        load_backends()
    if device_type not in _ENGINES:
        raise RuntimeError(f"{device_type.upper()} device type not an accelerator.")
    return _ENGINES[device_type]


class Generator:
    """A random generator (``torch.Generator``): a handle on its device's engine.

    Example:
        >>> g = Generator().manual_seed(0)
        >>> g.initial_seed(), g.device
        (0, device(type='cpu'))
    """

    __slots__ = ("_default", "_engine", "device")

    def __init__(self, device: Any = "cpu") -> None:
        dev = _dt.device(device) if not isinstance(device, _dt.device) else device
        self.device = dev
        self._engine: Any = None
        self._default = False
        if dev.type != "cpu":
            _engines(dev.type)  # torch's error for a device without generators

    @property
    def _impl(self) -> Any:
        if self._engine is None:
            cls, default = _engines(self.device.type)
            self._engine = default if self._default else cls()
        return self._engine

    def manual_seed(self, seed: int) -> Generator:
        """Seed this generator; returns it (``Generator.manual_seed``)."""
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        self._impl.manual_seed(seed)
        return self

    def seed(self) -> int:
        """Seed from OS entropy; returns the seed (``Generator.seed``)."""
        return self._impl.seed()

    def initial_seed(self) -> int:
        """The seed last set (``Generator.initial_seed``)."""
        return self._impl.initial_seed()

    def get_state(self) -> Tensor:
        """The engine state as torch's uint8 tensor (5056 bytes on CPU, the same bytes torch gives)."""
        import numpy as np

        from ..tensor import wrap_cpu

        return wrap_cpu(np.frombuffer(self._impl.get_state(), np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (or from torch's ``get_state``)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not _dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        self._impl.set_state(new_state.contiguous().numpy().tobytes())
        return self

    def __repr__(self) -> str:
        return f"<dispatchcore.Generator object at {id(self):#x}>"


def _default_generator() -> Generator:
    g = Generator("cpu")
    g._default = True
    return g


default_generator = _default_generator()


def seed() -> int:
    """Seed the default generator from OS entropy (``torch.seed``); returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed (``torch.initial_seed``)."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default CPU generator's state (``torch.get_rng_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default CPU generator's state (``torch.set_rng_state``)."""
    default_generator.set_state(new_state)


# --- composites (TensorFactories.cpp, Distributions.cpp) ---------------------------------------------------------
def _gen(generator: Any) -> dict[str, Any]:
    return {} if generator is None else {"generator": generator}


def rand_generator(size: Any, *, generator: Any, dtype: Any = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> Tensor:
    out = A.empty.memory_format(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return A.uniform_.default(out, 0.0, 1.0, **_gen(generator))


def rand(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return rand_generator(size, generator=None, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def randn_generator(size: Any, *, generator: Any, dtype: Any = None, layout: Any = None, device: Any = None,
                    pin_memory: Any = None) -> Tensor:
    out = A.empty.memory_format(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return A.normal_.default(out, 0.0, 1.0, **_gen(generator))


def randn(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return randn_generator(size, generator=None, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def randint_low_generator(low: int, high: int, size: Any, *, generator: Any, dtype: Any = 4, layout: Any = None,
                          device: Any = None, pin_memory: Any = None) -> Tensor:
    out = A.empty.memory_format(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return getattr(A.random_, "from")(out, low, high, **_gen(generator))


def randint_low(low: int, high: int, size: Any, *, dtype: Any = 4, layout: Any = None, device: Any = None,
                pin_memory: Any = None) -> Tensor:
    return randint_low_generator(low, high, size, generator=None, dtype=dtype, layout=layout, device=device,
                                 pin_memory=pin_memory)


def randint_generator(high: int, size: Any, *, generator: Any, dtype: Any = 4, layout: Any = None,
                      device: Any = None, pin_memory: Any = None) -> Tensor:
    return randint_low_generator(0, high, size, generator=generator, dtype=dtype, layout=layout, device=device,
                                 pin_memory=pin_memory)


def randint(high: int, size: Any, *, dtype: Any = 4, layout: Any = None, device: Any = None,
            pin_memory: Any = None) -> Tensor:
    return randint_low_generator(0, high, size, generator=None, dtype=dtype, layout=layout, device=device,
                                 pin_memory=pin_memory)


def normal_float_float(mean: float, std: float, size: Any, *, generator: Any = None, dtype: Any = None,
                       layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    out = A.empty.memory_format(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return A.normal_.default(out, mean, std, **_gen(generator))


def bernoulli(self: Tensor, *, generator: Any = None) -> Tensor:
    out = A.empty_like.default(self)
    return A.bernoulli_.Tensor(out, self, **_gen(generator))


def bernoulli_p(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    out = A.empty_like.default(self)
    return A.bernoulli_.float(out, p, **_gen(generator))


def randint_like_low_generator_dtype(self: Tensor, low: int, high: int, *, generator: Any, dtype: Any = None,
                                     layout: Any = None, device: Any = None, pin_memory: Any = None,
                                     memory_format: Any = None) -> Tensor:
    out = A.empty_like.default(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                               memory_format=memory_format)
    return getattr(A.random_, "from")(out, low, high, **_gen(generator))


def randint_like_low_dtype(self: Tensor, low: int, high: int, **options: Any) -> Tensor:
    return randint_like_low_generator_dtype(self, low, high, generator=None, **options)


def randint_like_generator(self: Tensor, high: int, *, generator: Any, **options: Any) -> Tensor:
    return randint_like_low_generator_dtype(self, 0, high, generator=generator, **options)


def randint_like_(self: Tensor, high: int, **options: Any) -> Tensor:
    return randint_like_low_generator_dtype(self, 0, high, generator=None, **options)


def _high_item(high: Tensor) -> int:
    if high.numel() != 1 or high.dim() != 0 or high.device.type != "cpu":
        raise RuntimeError("high must be a scalar tensor and on CPU")
    return int(A._local_scalar_dense.default(high))


def randint_like_tensor_generator(self: Tensor, high: Tensor, *, generator: Any, **options: Any) -> Tensor:
    return randint_like_low_generator_dtype(self, 0, _high_item(high), generator=generator, **options)


def randint_like_tensor(self: Tensor, high: Tensor, **options: Any) -> Tensor:
    return randint_like_low_generator_dtype(self, 0, _high_item(high), generator=None, **options)


EXPLICIT: dict[str, Callable[..., Any]] = {
    "randint_like": randint_like_, "randint_like.Tensor": randint_like_tensor,
    "randint_like.low_dtype": randint_like_low_dtype, "randint_like.generator": randint_like_generator,
    "randint_like.Tensor_generator": randint_like_tensor_generator,
    "randint_like.low_generator_dtype": randint_like_low_generator_dtype,
    "rand": rand, "rand.generator": rand_generator, "randn": randn, "randn.generator": randn_generator,
    "randint": randint, "randint.generator": randint_generator, "randint.low": randint_low,
    "randint.low_generator": randint_low_generator, "normal.float_float": normal_float_float,
    "bernoulli": bernoulli,
}
NONFUNCTIONAL: dict[str, Callable[..., Any]] = {"bernoulli.p": bernoulli_p}
BACKEND_SELECT = ("rand", "rand.generator", "randn", "randn.generator", "randint", "randint.generator", "randint.low",
                  "randint.low_generator", "normal.float_float")


def register(lib: Library) -> None:
    """The composite and BackendSelect kernels, at torch's keys."""
    from .._core_kernels import _make_backend_select_kernel

    for name, kernel in EXPLICIT.items():
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    for name, kernel in NONFUNCTIONAL.items():
        lib.impl(name, kernel, "CompositeExplicitAutogradNonFunctional")
    for name in BACKEND_SELECT:
        base, _, overload = name.partition(".")
        packet = getattr(A, base)
        op = getattr(packet, {"": "default", "from": "from_"}.get(overload, overload))
        kernel = _make_backend_select_kernel(op)
        kernel.__dispatchcore_kernel_check__ = lambda *a: None  # forwards **kwargs untouched
        lib.impl(name, kernel, "BackendSelect")


def register_autograd(lib: Library) -> None:
    """The samplers' derivatives (zero: torch's nodes), the factories' nondifferentiable kernels."""
    from ..autograd.kernels import register_derivative, register_nondifferentiable

    def zero(grad: Tensor, *args: Any) -> Tensor:
        return A.zeros_like.default(grad)

    for name, node in (("uniform_", "UniformBackward0"), ("normal_", "NormalBackward0"),
                       ("random_.from", "RandomBackward0"), ("random_.to", "RandomBackward1"),
                       ("random_", "RandomBackward2"), ("exponential_", "ExponentialBackward0")):
        register_derivative(lib, f"aten::{name}", node, ("self",), lambda grad: A.zeros_like.default(grad),
                            mutates="self")
    register_derivative(lib, "aten::bernoulli_.Tensor", "BernoulliBackward1", ("self", "p"),
                        (lambda grad: A.zeros_like.default(grad), lambda grad, p: A.zeros_like.default(p)),
                        mutates="self")
    register_derivative(lib, "aten::bernoulli", "BernoulliBackward0", ("self",),
                        lambda grad: A.zeros_like.default(grad))
    for name in ("rand.generator", "randn.generator", "randint", "randint.generator", "randint.low",
                 "randint.low_generator", "normal.float_float", "bernoulli.p", "randint_like", "randint_like.Tensor",
                 "randint_like.low_dtype", "randint_like.generator", "randint_like.Tensor_generator",
                 "randint_like.low_generator_dtype", "multinomial"):
        register_nondifferentiable(lib, f"aten::{name}")

    def zeros_of(t: Tensor, grad: Tensor) -> Tensor:  # at::zeros(t.sizes(), grad.options())
        return A.zeros.default(list(t.shape), dtype=grad.dtype, device=grad.device)

    register_derivative(lib, "aten::normal.Tensor_float", "NormalBackward1", ("mean",),
                        lambda grad, mean: zeros_of(mean, grad))
    register_derivative(lib, "aten::normal.float_Tensor", "NormalBackward2", ("std",),
                        lambda grad, std: zeros_of(std, grad))
    register_derivative(lib, "aten::normal.Tensor_Tensor", "NormalBackward3", ("mean", "std"),
                        (lambda grad, mean: zeros_of(mean, grad), lambda grad, std: zeros_of(std, grad)))


# --- normal with tensor mean/std: the shared checks and shapes of CPU's and Meta's kernels ----------------------
def normal_std_check(std: float) -> None:
    """``CHECK_NORMAL_STD``."""
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal_tensor_std_check(std: Tensor) -> None:
    """``CHECK_NORMAL_TENSOR_STD``: a real ``std``, all of it non-negative (not read on Meta)."""
    if std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if std.numel() and std.device.type != "meta" and not bool(A.ge.Scalar(A.min.default(std), 0).item()):
        raise RuntimeError("normal expects all elements of std >= 0.0")


def multinomial_check(self: Tensor, n_sample: int, replacement: bool) -> None:
    """``multinomial_out``'s argument checks, in its order and words."""
    if not 0 < self.dim() <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{_dt.SCALAR_TYPE_NAMES[self.dtype.name]}")
    if not n_sample > 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not (replacement or n_sample <= self.shape[-1]):
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if self.shape[-1] > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")


# --- torch.* functions and Tensor methods ------------------------------------------------------------------------
def _size(size: tuple[Any, ...]) -> list[int]:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    return [int(s) for s in size]


def _check_generator(generator: Any, name: str) -> None:
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{name}(): argument 'generator' must be torch.Generator, not {type(generator).__name__}")


def randint_function(*args: Any, generator: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
                     pin_memory: bool = False, requires_grad: bool = False, out: Tensor | None = None,
                     **kwargs: Any) -> Tensor:
    """``torch.randint([low,] high, size)``: integers in ``[low, high)`` (int64 unless ``dtype=``).

    Example:
        >>> _ = manual_seed(0); randint(10, (3,)).tolist()
        [4, 9, 3]
    """
    _check_generator(generator, "randint")
    for key in ("low", "high", "size"):
        if key in kwargs:
            args = (*args, kwargs.pop(key))
    if kwargs:
        raise TypeError(f"randint() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) == 2:
        low, high, size = 0, args[0], args[1]
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError("randint() received an invalid combination of arguments")
    options = {"dtype": _dt.int64 if dtype is None else dtype, "layout": layout, "device": device}
    with AutoDispatchBelowADInplaceOrView():  # torch::randint's guard: See Note [Factories start at version 0]
        t = A.randint.low_generator(int(low), int(high), _size((size,)), generator=generator, **options)
    if out is not None:
        A.resize_.default(out, list(t.shape))
        A.copy_.default(out, t)
        return out
    if requires_grad:
        t.requires_grad_(True)
    return t


def normal_function(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Any = None, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """``torch.normal``: normal draws around ``mean`` with spread ``std``.

    ``torch.normal``: a tensor ``mean`` and/or ``std`` (``normal.Tensor_float``, ``float_Tensor``,
    ``Tensor_Tensor``: the result takes their broadcast shape), or float ones with a ``size``
    (``normal.float_float``).

    Example:
        >>> normal(2.0, 0.5, (3,)).shape
        dispatchcore.Size([3])
        >>> normal(zeros(2, 3), 1.0).shape
        dispatchcore.Size([2, 3])
    """
    _check_generator(generator, "normal")
    gen = _gen(generator)
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        t = A.normal.Tensor_Tensor(mean, std, **gen)
    elif isinstance(mean, Tensor):
        t = A.normal.Tensor_float(mean, float(std), **gen)
    elif isinstance(std, Tensor):
        t = A.normal.float_Tensor(float(mean), std, **gen)
    else:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: float mean and std need a size")
        with AutoDispatchBelowADInplaceOrView():  # See Note [Factories start at version 0]
            t = A.normal.float_float(float(mean), float(std), _size((size,)), generator=generator, dtype=dtype,
                                     layout=layout, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def randint_like_function(input: Tensor, *args: Any, generator: Any = None, dtype: Any = None, layout: Any = None,
                          device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
                          memory_format: Any = None, **kwargs: Any) -> Tensor:
    """``torch.randint_like``: integers in ``[low, high)`` shaped like ``input``.

    ``torch.randint_like(input, [low,] high)``: integers in ``[low, high)`` shaped like ``input`` (its dtype
    unless ``dtype=``); ``high`` may be a 0-dim CPU tensor.

    Example:
        >>> randint_like(zeros(2, 2), 3, 10).shape
        dispatchcore.Size([2, 2])
    """
    _check_generator(generator, "randint_like")
    if "low" in kwargs:
        args = (kwargs.pop("low"), *args)
    if "high" in kwargs:
        args = (*args, kwargs.pop("high"))
    if kwargs:
        raise TypeError(f"randint_like() got an unexpected keyword argument '{next(iter(kwargs))}'")
    options = {"dtype": dtype, "layout": layout, "device": device, "memory_format": memory_format}
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = A.randint_like.Tensor_generator(input, args[0], generator=generator, **options)
    elif len(args) in (1, 2):
        low, high = (0, args[0]) if len(args) == 1 else args
        t = A.randint_like.low_generator_dtype(input, int(low), int(high), generator=generator, **options)
    else:
        raise TypeError("randint_like() received an invalid combination of arguments")
    if requires_grad:
        t.requires_grad_(True)
    return t


def bernoulli_function(input: Tensor, p: float | None = None, *, generator: Any = None, out: Any = None) -> Tensor:
    """``torch.bernoulli(input[, p])``: 0/1 draws with probabilities ``input`` (or ``p``).

    Example:
        >>> bernoulli(zeros(3)).tolist()
        [0.0, 0.0, 0.0]
    """
    _check_generator(generator, "bernoulli")
    if p is None:
        return A.bernoulli.default(input, **_gen(generator))
    return A.bernoulli.p(input, float(p), **_gen(generator))


def multinomial_function(input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None,
                         out: Any = None) -> Tensor:
    """``torch.multinomial``: ``num_samples`` category indices per row of the weights ``input``.

    Example:
        >>> multinomial(tensor([0.0, 1.0, 0.0]), 2, replacement=True).tolist()
        [1, 1]
    """
    _check_generator(generator, "multinomial")
    t = A.multinomial.default(input, int(num_samples), bool(replacement), **_gen(generator))
    if out is not None:
        A.resize_.default(out, list(t.shape))
        A.copy_.default(out, t)
        return out
    return t


def uniform__method(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Any = None,
                    **kwargs: Any) -> Tensor:
    """``Tensor.uniform_(from=0, to=1)``."""
    from_ = kwargs.pop("from", from_)
    _check_generator(generator, "uniform_")
    return A.uniform_.default(self, float(from_), float(to), **_gen(generator))


def normal__method(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """``Tensor.normal_(mean=0, std=1)``."""
    _check_generator(generator, "normal_")
    return A.normal_.default(self, float(mean), float(std), **_gen(generator))


def random__method(self: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """``Tensor.random_()``, ``random_(to)``, ``random_(from, to)``."""
    _check_generator(generator, "random_")
    if "from" in kwargs:
        args = (kwargs.pop("from"), *args)
    if "to" in kwargs:
        args = (*args, kwargs.pop("to"))
    if not args:
        return A.random_.default(self, **_gen(generator))
    if len(args) == 1:
        return A.random_.to(self, int(args[0]), **_gen(generator))
    return getattr(A.random_, "from")(self, int(args[0]), None if args[1] is None else int(args[1]), **_gen(generator))


def exponential__method(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """``Tensor.exponential_(lambd=1)``."""
    _check_generator(generator, "exponential_")
    return A.exponential_.default(self, float(lambd), **_gen(generator))


def bernoulli__method(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """``Tensor.bernoulli_(p=0.5)``: ``p`` a float or a tensor of probabilities."""
    _check_generator(generator, "bernoulli_")
    if isinstance(p, Tensor):
        return A.bernoulli_.Tensor(self, p, **_gen(generator))
    return A.bernoulli_.float(self, float(p), **_gen(generator))


def bernoulli_method(self: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """``Tensor.bernoulli([p])``."""
    return bernoulli_function(self, p, generator=generator)


for _fn, _name in ((randint_function, "randint"), (normal_function, "normal"), (bernoulli_function, "bernoulli"),
                   (randint_like_function, "randint_like"), (multinomial_function, "multinomial"),
                   (uniform__method, "uniform_"),
                   (normal__method, "normal_"), (random__method, "random_"), (exponential__method, "exponential_"),
                   (bernoulli__method, "bernoulli_"), (bernoulli_method, "bernoulli")):
    _fn.__name__ = _fn.__qualname__ = _name

FUNCTIONS: dict[str, Any] = {
    "seed": seed, "initial_seed": initial_seed,
    "get_rng_state": get_rng_state, "set_rng_state": set_rng_state, "randint": randint_function,
    "normal": normal_function, "bernoulli": bernoulli_function, "randint_like": randint_like_function,
    "multinomial": multinomial_function,
}
METHODS: dict[str, Callable[..., Any]] = {
    "uniform_": uniform__method, "normal_": normal__method, "random_": random__method,
    "exponential_": exponential__method, "bernoulli_": bernoulli__method, "bernoulli": bernoulli_method,
    "multinomial": multinomial_function,
}
