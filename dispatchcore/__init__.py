"""dispatchcore: PyTorch's dispatcher, modelled faithfully in pure Python.

Curated re-exports. Importing dispatchcore registers what PyTorch's core library registers:
the built-in backend fallbacks, the ``aten`` schemas and the backend-independent kernels
(ADInplaceOrView, BackendSelect, composites). Backends are discovered lazily
(``dispatchcore.load_backends``, or the first call that needs one).
"""

from types import FunctionType as _FunctionType

from . import (
    _tensor_methods,  # noqa: F401 - attaches Tensor methods and operators
    autograd,
    cuda,  # is_available, device_count; imports no pycuda
    fx,  # make_fx: graphs of aten calls; imported here only as a module (no call path change)
    library,  # torch.library: Library, define, impl, custom_op, opcheck, ...
    nn,
    notebook,  # Jupyter pictures: registers the rich displays of key sets, operators, traces
    ops,
    overrides,  # __torch_function__ and TorchFunctionMode (torch.overrides)
)
from . import aten as _aten_definitions  # noqa: F401 - defines the aten operators
from ._core_kernels import register_core_kernels as _register_core_kernels
from ._library import Library, RegistrationHandle, fallthrough_kernel
from ._library import Library as _Library
from .autocast import (
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .autograd import derivatives as _derivatives
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .dispatcher import (
    Dispatcher,
    dump_state,
    dump_table,
    find_op,
    get_autograd_fallback_mode,
    get_dispatcher,
    set_autograd_fallback_mode,
)
from .dtypes import (
    bool_,
    complex64,
    complex128,
    device,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from .errors import DispatchError, RegistrationError, SchemaError
from .explain import CommuteReport, Explanation, WhatIf, check_commutes, explain, what_if
from .factories import (
    arange,
    empty,
    empty_like,
    empty_strided,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    register_seed_hook,
    tensor,
    zeros,
    zeros_like,
)
from .functions import (  # torch.add, torch.cat, ...: the operators as functions
    abs,  # noqa: A004 - torch.abs
    abs_,
    add,
    amax,
    argmax,
    as_strided,
    bmm,
    cat,
    clamp,
    clamp_,
    clamp_max,
    clamp_max_,
    clamp_min,
    clamp_min_,
    clip,
    clip_,
    clone,
    cos,
    cos_,
    detach,
    detach_,
    div,
    divide,
    eq,
    exp,
    exp_,
    fill_,
    ge,
    greater,
    greater_equal,
    gt,
    le,
    less,
    less_equal,
    log,
    log_,
    log_softmax,
    lt,
    matmul,
    max,  # noqa: A004 - torch.max
    maximum,
    mean,
    min,  # noqa: A004 - torch.min
    minimum,
    mm,
    mul,
    multiply,
    ne,
    neg,
    neg_,
    not_equal,
    permute,
    pow,  # noqa: A004 - torch.pow
    reciprocal,
    relu,
    relu_,
    reshape,
    rsub,
    select,
    sigmoid,
    sigmoid_,
    sin,
    sin_,
    softmax,
    sqrt,
    sqrt_,
    square,
    square_,
    squeeze,
    stack,
    sub,
    subtract,
    sum,  # noqa: A004 - torch.sum
    t,
    tanh,
    tanh_,
    transpose,
    true_divide,
    unsqueeze,
    where,
    zero_,
)
from .keys import BackendComponent, DispatchKey, alias_expansion, parse_dispatch_key
from .keyset import DispatchKeySet, tensor_keyset
from .layouts import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from .modes import DispatchMode, LoggingMode, current_dispatch_mode, disable_current_modes, dispatch_mode_stack
from .operator import KernelRegistration, OperatorHandle, SourceLocation, is_leaf_kernel, leaf_kernel
from .plugins import load_backends
from .schema import FunctionSchema, OperatorName, parse_schema
from .shapes import compute_stride
from .subclass import is_traceable_wrapper_subclass, return_and_correct_aliasing, transform_subclass, tree_map
from .tensor import Size, Tensor, register_device, rename_privateuse1_backend, wrap
from .tls import (
    AutoDispatchBelowADInplaceOrView,
    AutoDispatchBelowAutograd,
    AutoDispatchSkipFunctionalize,
    AutoNonVariableTypeMode,
    DisableTorchDispatch,
    ExcludeDispatchKeyGuard,
    ForceDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    tls_is_dispatch_key_excluded,
    tls_is_dispatch_key_included,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
    tls_set_dispatch_key_included,
)
from .trace import show_dispatch_trace, trace

_register_core_kernels()
_autograd_library = _Library("aten", "IMPL")
_derivatives.register(_autograd_library)


def _renamed(fn: _FunctionType, name: str) -> _FunctionType:
    """A copy of ``fn`` that calls itself ``name`` (the same code: no extra call)."""
    copy = _FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__, copy.__doc__, copy.__qualname__ = fn.__kwdefaults__, fn.__doc__, name
    copy.__dict__.update(fn.__dict__)
    return copy


def _install_families() -> None:
    """The families' derivatives, ``torch.*`` functions and Tensor methods (``dispatchcore.native``)."""
    from .native import families

    for family in families():
        family.register_autograd(_autograd_library)
        short = family.__name__.rpartition(".")[2]
        for name, fn in list(family.FUNCTIONS.items()):
            if isinstance(fn, _FunctionType) and fn.__name__ != name:  # an alias or a private helper's name
                fn = family.FUNCTIONS[name] = _renamed(fn, name)
            if not getattr(fn, "__doc__", None):  # a generated binding: say where it comes from
                fn.__doc__ = (f"``torch.{name}``: torch's binding of ``aten::{name}`` (its overloads and argument "
                              f"names), from ``dispatchcore.native.{short}``.")
            fn = family.FUNCTIONS[name] = overrides.route_binding(fn, name)  # __torch_function__
            globals()[name] = fn
            if name not in __all__:
                __all__.append(name)
        for name, fn in family.METHODS.items():
            setattr(Tensor, name, fn)


bool = bool_  # noqa: A001 - torch.bool
float = float32  # noqa: A001 - torch.float
double = float64
long = int64
int = int32  # noqa: A001 - torch.int
half = float16


def dispatch_keys(t: Tensor) -> DispatchKeySet:
    """A tensor's key set (``torch._C._dispatch_keys``).

    Example:
        >>> dispatch_keys(zeros(2))
        DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)
    """
    return DispatchKeySet._from_bits(t._key_bits)


__version__ = "0.1.0"

__all__ = [
    "compute_stride",
    "DispatchMode",
    "LoggingMode",
    "autocast",
    "clear_autocast_cache",
    "current_dispatch_mode",
    "disable_current_modes",
    "dispatch_mode_stack",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "CommuteReport",
    "Explanation",
    "WhatIf",
    "check_commutes",
    "explain",
    "what_if",
    "show_dispatch_trace",
    "trace",
    "autograd",
    "cuda",
    "fx",
    "library",
    "notebook",
    "overrides",
    "nn",
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
    "Size",
    "Tensor",
    "arange",
    "bool",
    "bool_",
    "channels_last",
    "channels_last_3d",
    "complex64",
    "complex128",
    "contiguous_format",
    "device",
    "dispatch_keys",
    "double",
    "dtype",
    "empty",
    "empty_like",
    "empty_strided",
    "eye",
    "float",
    "float16",
    "float32",
    "float64",
    "full",
    "from_numpy",
    "full_like",
    "get_default_dtype",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "layout",
    "linspace",
    "logspace",
    "load_backends",
    "long",
    "manual_seed",
    "memory_format",
    "ones",
    "ones_like",
    "preserve_format",
    "promote_types",
    "rand",
    "rand_like",
    "randn",
    "randn_like",
    "register_device",
    "register_seed_hook",
    "rename_privateuse1_backend",
    "result_type",
    "set_default_dtype",
    "sparse_bsc",
    "sparse_bsr",
    "sparse_coo",
    "sparse_csc",
    "sparse_csr",
    "strided",
    "tensor",
    "uint8",
    "wrap",
    "zeros",
    "zeros_like",
    "AutoDispatchBelowADInplaceOrView",
    "AutoDispatchBelowAutograd",
    "AutoDispatchSkipFunctionalize",
    "AutoNonVariableTypeMode",
    "BackendComponent",
    "DisableTorchDispatch",
    "DispatchError",
    "DispatchKey",
    "DispatchKeySet",
    "Dispatcher",
    "ExcludeDispatchKeyGuard",
    "ForceDispatchKeyGuard",
    "FunctionSchema",
    "IncludeDispatchKeyGuard",
    "KernelRegistration",
    "Library",
    "OperatorHandle",
    "OperatorName",
    "RegistrationError",
    "RegistrationHandle",
    "SchemaError",
    "SourceLocation",
    "alias_expansion",
    "dump_state",
    "dump_table",
    "fallthrough_kernel",
    "find_op",
    "get_autograd_fallback_mode",
    "get_dispatcher",
    "is_leaf_kernel",
    "is_traceable_wrapper_subclass",
    "return_and_correct_aliasing",
    "transform_subclass",
    "tree_map",
    "leaf_kernel",
    "ops",
    "parse_dispatch_key",
    "parse_schema",
    "set_autograd_fallback_mode",
    "tensor_keyset",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_local_exclude_set",
    "tls_local_include_set",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
    # the operators as functions (functions.py)
    "abs",
    "abs_",
    "add",
    "amax",
    "argmax",
    "as_strided",
    "bmm",
    "cat",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_max_",
    "clamp_min",
    "clamp_min_",
    "clip",
    "clip_",
    "clone",
    "cos",
    "cos_",
    "detach",
    "detach_",
    "div",
    "divide",
    "eq",
    "exp",
    "exp_",
    "fill_",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "le",
    "less",
    "less_equal",
    "log",
    "log_",
    "log_softmax",
    "lt",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mm",
    "mul",
    "multiply",
    "ne",
    "neg",
    "neg_",
    "not_equal",
    "permute",
    "pow",
    "reciprocal",
    "relu",
    "relu_",
    "reshape",
    "rsub",
    "select",
    "sigmoid",
    "sigmoid_",
    "sin",
    "sin_",
    "softmax",
    "sqrt",
    "square",
    "square_",
    "sqrt_",
    "squeeze",
    "stack",
    "sub",
    "subtract",
    "sum",
    "t",
    "tanh",
    "tanh_",
    "transpose",
    "true_divide",
    "unsqueeze",
    "where",
    "zero_",
]

_install_families()
overrides.register_tensor_methods()  # every Tensor method, native/* ones too, public from import on
# the factories reach __torch_function__ handlers too (a mode sees torch.zeros, as torch's; from_numpy it does not)
for _name in ("tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn",
              "empty_strided",
              "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"):
    if globals()[_name] not in overrides._FUNC_NAMES:  # the native/* ones are routed already
        globals()[_name] = overrides.route_binding(globals()[_name], _name)
del _name

# torch.Generator, torch.optim, torch.utils, save/load: after the operators exist
from . import optim as optim  # noqa: E402
from . import utils as utils  # noqa: E402
from .native.random import Generator as Generator  # noqa: E402
from .native.random import default_generator as default_generator  # noqa: E402
from .serialization import load as load  # noqa: E402
from .serialization import save as save  # noqa: E402

__all__ += ["Generator", "default_generator", "optim", "utils", "load", "save"]
