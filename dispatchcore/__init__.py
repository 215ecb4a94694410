"""dispatchcore: PyTorch's dispatcher, modelled faithfully in pure Python.

Curated re-exports only: importing dispatchcore registers PyTorch's built-in backend fallbacks
and nothing else (backends are discovered lazily; see ``dispatchcore.load_backends``).
"""

from . import ops
from .dispatcher import (
    Dispatcher,
    dump_state,
    dump_table,
    find_op,
    get_autograd_fallback_mode,
    get_dispatcher,
    set_autograd_fallback_mode,
)
from .errors import DispatchError, RegistrationError, SchemaError
from .keys import BackendComponent, DispatchKey, alias_expansion, parse_dispatch_key
from .keyset import DispatchKeySet, tensor_keyset
from .library import Library, RegistrationHandle, fallthrough_kernel
from .operator import KernelRegistration, OperatorHandle, SourceLocation
from .schema import FunctionSchema, OperatorName, parse_schema
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

__version__ = "0.1.0"

__all__ = [
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
]
