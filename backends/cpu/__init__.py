"""CPU backend: numpy kernels for the aten operators, registered through the public Library API.

Mirrors the CPU entries of ``native_functions.yaml``: every ``dispatchcore.aten`` operator
that has no CompositeImplicitAutograd decomposition gets a kernel at the ``CPU`` key. The kernels
live in ``kernels.py``; the random engine (torch's mt19937 ``CPUGeneratorImpl``) and ``manual_seed``
in ``generator.py``.
Invariant: one live registration at a time (``register()`` returns it while it lives).
"""

from __future__ import annotations

import warnings
from types import ModuleType

from dispatchcore import Library, RegistrationHandle, leaf_kernel, native, register_seed_hook
from dispatchcore.native.random import register_engine
from dispatchcore.native.stubs import copy_stub

from . import kernels
from .generator import CPUGenerator as Generator
from .generator import default_generator, initial_seed, manual_seed, seed

__all__ = ["KERNELS", "SPEED_KERNELS", "Generator", "default_generator", "initial_seed", "manual_seed", "register",
           "registered", "seed"]

# Operators torch registers at CompositeExplicitAutograd (so the CPU entry of their table is the
# composite, ``dispatchcore/native/explicit.py``) for which this backend keeps a kernel of its own:
# views, sum, mean, the .Scalar arithmetic (derivative formulas, optimizers), clone and the factories
# sit on the hot path, where the composite would cost another dispatch (``as_strided``,
# ``sum.dim_IntList``, ``mul.Tensor`` of a wrapped number, ``empty`` + ``fill_``). Each computes what the
# composite computes (tests/behavior/test_registrations.py). _to_copy converts in one numpy call where
# the composite allocates and dispatches copy_.
SPEED_KERNELS = ("sum", "mean", "add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar", "mul.Scalar",
                 "mul_.Scalar", "div.Scalar", "div_.Scalar", "div.Scalar_mode", "div_.Scalar_mode", "clone",
                 "t", "transpose.int", "permute", "expand", "squeeze", "squeeze.dim", "unsqueeze", "select.int",
                 "slice.Tensor", "alias", "zeros", "ones", "full", "scalar_tensor", "_to_copy")

_k = kernels
KERNELS: tuple[tuple[str, object], ...] = (
    # elementwise binary
    ("add.Tensor", _k.add_tensor_cpu), ("add.Scalar", _k.add_scalar_cpu), ("add_.Scalar", _k.add__scalar_cpu),
    ("sub.Scalar", _k.sub_scalar_cpu), ("sub_.Scalar", _k.sub__scalar_cpu),
    ("mul.Scalar", _k.mul_scalar_cpu), ("mul_.Scalar", _k.mul__scalar_cpu),
    ("div.Scalar", _k.div_scalar_cpu), ("div_.Scalar", _k.div__scalar_cpu),
    ("div.Scalar_mode", _k.div_scalar_mode_cpu), ("div_.Scalar_mode", _k.div__scalar_mode_cpu),
    ("mean", _k.mean_cpu),
    ("add_.Tensor", _k.add__tensor_cpu), ("add.out", _k.add_out_cpu),
    ("sub.Tensor", _k.sub_tensor_cpu),
    ("sub_.Tensor", _k.sub__tensor_cpu), ("sub.out", _k.sub_out_cpu),
    ("mul.Tensor", _k.mul_tensor_cpu),
    ("mul_.Tensor", _k.mul__tensor_cpu), ("mul.out", _k.mul_out_cpu),
    ("div.Tensor", _k.div_tensor_cpu),
    ("div_.Tensor", _k.div__tensor_cpu), ("div.out", _k.div_out_cpu),
    ("div.Tensor_mode", _k.div_tensor_mode_cpu),
    ("div_.Tensor_mode", _k.div__tensor_mode_cpu),
    ("maximum", _k.maximum_cpu), ("minimum", _k.minimum_cpu),
    ("pow.Tensor_Tensor", _k.pow_tensor_tensor_cpu), ("pow.Tensor_Scalar", _k.pow_tensor_scalar_cpu),
    ("pow.Scalar", _k.pow_scalar_cpu), ("pow_.Scalar", _k.pow__scalar_cpu), ("pow_.Tensor", _k.pow__tensor_cpu),
    # elementwise unary: functional, in-place, out=
    ("neg", _k.neg_cpu), ("neg_", _k.neg__cpu), ("neg.out", _k.neg_out_cpu),
    ("abs.out", _k.abs_out_cpu),
    ("exp", _k.exp_cpu), ("exp_", _k.exp__cpu), ("exp.out", _k.exp_out_cpu),
    ("log", _k.log_cpu), ("log_", _k.log__cpu), ("log.out", _k.log_out_cpu),
    ("sqrt", _k.sqrt_cpu), ("sqrt_", _k.sqrt__cpu), ("sqrt.out", _k.sqrt_out_cpu),
    ("sin", _k.sin_cpu), ("sin_", _k.sin__cpu), ("sin.out", _k.sin_out_cpu),
    ("cos", _k.cos_cpu), ("cos_", _k.cos__cpu), ("cos.out", _k.cos_out_cpu),
    ("tanh", _k.tanh_cpu), ("tanh_", _k.tanh__cpu), ("tanh.out", _k.tanh_out_cpu),
    ("sigmoid", _k.sigmoid_cpu), ("sigmoid_", _k.sigmoid__cpu), ("sigmoid.out", _k.sigmoid_out_cpu),
    ("relu", _k.relu_cpu), ("relu_", _k.relu__cpu),
    # clamp, where, comparisons
    ("clamp", _k.clamp_cpu), ("clamp_", _k.clamp__cpu),
    ("clamp_min", _k.clamp_min_cpu), ("clamp_min_", _k.clamp_min__cpu),
    ("clamp.Tensor", _k.clamp_tensor_cpu), ("clamp_.Tensor", _k.clamp__tensor_cpu),
    ("clamp_min.Tensor", _k.clamp_min_tensor_cpu), ("clamp_min_.Tensor", _k.clamp_min__tensor_cpu),
    ("clamp_max", _k.clamp_max_cpu), ("clamp_max_", _k.clamp_max__cpu),
    ("clamp_max.Tensor", _k.clamp_max_tensor_cpu), ("clamp_max_.Tensor", _k.clamp_max__tensor_cpu),
    ("where.self", _k.where_self_cpu),
    ("eq.Tensor", _k.eq_tensor_cpu), ("eq.Scalar", _k.eq_scalar_cpu),
    ("eq_.Tensor", _k.eq__tensor_cpu), ("eq_.Scalar", _k.eq__scalar_cpu),
    ("ne.Tensor", _k.ne_tensor_cpu), ("ne.Scalar", _k.ne_scalar_cpu),
    ("ne_.Tensor", _k.ne__tensor_cpu), ("ne_.Scalar", _k.ne__scalar_cpu),
    ("lt.Tensor", _k.lt_tensor_cpu), ("lt.Scalar", _k.lt_scalar_cpu),
    ("lt_.Tensor", _k.lt__tensor_cpu), ("lt_.Scalar", _k.lt__scalar_cpu),
    ("le.Tensor", _k.le_tensor_cpu), ("le.Scalar", _k.le_scalar_cpu),
    ("le_.Tensor", _k.le__tensor_cpu), ("le_.Scalar", _k.le__scalar_cpu),
    ("gt.Tensor", _k.gt_tensor_cpu), ("gt.Scalar", _k.gt_scalar_cpu),
    ("gt_.Tensor", _k.gt__tensor_cpu), ("gt_.Scalar", _k.gt__scalar_cpu),
    ("ge.Tensor", _k.ge_tensor_cpu), ("ge.Scalar", _k.ge_scalar_cpu),
    ("ge_.Tensor", _k.ge__tensor_cpu), ("ge_.Scalar", _k.ge__scalar_cpu),
    # reductions
    ("sum", _k.sum_cpu), ("sum.dim_IntList", _k.sum_dim_intlist_cpu),
    ("mean.dim", _k.mean_dim_cpu),
    ("amax", _k.amax_cpu), ("max", _k.max_cpu), ("max.dim", _k.max_dim_cpu), ("argmax", _k.argmax_cpu),
    # matrix products, softmax, losses
    ("mm", _k.mm_cpu), ("bmm", _k.bmm_cpu),
    ("_softmax", _k._softmax_cpu), ("_log_softmax", _k._log_softmax_cpu),
    ("mse_loss", _k.mse_loss_cpu), ("nll_loss_forward", _k.nll_loss_forward_cpu),
    # joining, copies, fills
    ("cat", _k.cat_cpu), ("clone", _k.clone_cpu),
    ("fill_.Scalar", _k.fill__scalar_cpu), ("fill_.Tensor", _k.fill__tensor_cpu), ("zero_", _k.zero__cpu),
    ("reciprocal", _k.reciprocal_cpu), ("rsub.Tensor", _k.rsub_tensor_cpu),
    ("_to_copy", _k._to_copy_cpu),
    # views
    ("view", _k.view_cpu), ("_reshape_alias", _k._reshape_alias_cpu),
    ("t", _k.t_cpu),
    ("transpose.int", _k.transpose_int_cpu), ("permute", _k.permute_cpu), ("expand", _k.expand_cpu),
    ("squeeze", _k.squeeze_cpu), ("squeeze.dim", _k.squeeze_dim_cpu), ("unsqueeze", _k.unsqueeze_cpu),
    ("select.int", _k.select_int_cpu), ("slice.Tensor", _k.slice_tensor_cpu),
    ("as_strided", _k.as_strided_cpu), ("alias", _k.alias_cpu),
    # factories
    ("empty.memory_format", _k.empty_memory_format_cpu), ("empty_strided", _k.empty_strided_cpu),
    ("zeros", _k.zeros_cpu), ("ones", _k.ones_cpu), ("full", _k.full_cpu),
    ("arange.start_out", _k.arange_start_out_cpu), ("linspace.out", _k.linspace_out_cpu),
    ("logspace.out", _k.logspace_out_cpu),
    ("scalar_tensor", _k.scalar_tensor_cpu), ("eye.out", _k.eye_out_cpu), ("eye.m_out", _k.eye_m_out_cpu),
)
del _k
# Every kernel but the range and eye out= kernels (which call resize_) is numpy in, tensor out: a leaf,
# which the Autograd kernels call without a guard (Note [Leaf kernels]).
NOT_LEAF = ("arange.start_out", "linspace.out", "logspace.out", "eye.out", "eye.m_out")
for _name, _kernel in KERNELS:
    if _name not in NOT_LEAF:
        leaf_kernel(_kernel)
del _name, _kernel

# REGISTER_DISPATCH(copy_stub, ...), at import as torch's static initializer: copy_'s composite calls it
copy_stub.register("cpu", kernels.copy__cpu)



def all_kernels() -> list[tuple[str, object]]:
    """``KERNELS`` and every family module's (``cpu/<family>.py``, See ``dispatchcore.native``)."""
    found = list(KERNELS)
    for family in _families():
        for name, kernel in family.KERNELS.items():
            if name not in getattr(family, "NOT_LEAF", ()):
                leaf_kernel(kernel)
            found.append((name, kernel))
    return found


def _families() -> list[ModuleType]:
    return native.families(__name__)


_library: Library | None = None
_handles: list[RegistrationHandle] = []


_seed_hooks_registered: list[object] = []


def registered() -> Library | None:
    """The backend's own live Library (from an earlier ``register()``), or None."""
    if _library is not None and _handles and all(h.active for h in _handles):
        return _library
    return None


def register(lib: Library | None = None) -> Library:
    """Register every CPU kernel; returns the owning Library (destroy it to unregister).

    Args:
        lib: an ``IMPL`` library for ``aten`` at the ``CPU`` key to register into. Without it,
            the backend's own library is created, or returned as is while it is alive, so that
            calling ``register()`` twice registers nothing twice.

    Returns:
        The Library holding the registrations.

    Example:
        >>> import dispatchcore_backends.cpu as cpu
        >>> lib = cpu.register()
        >>> cpu.register() is lib
        True
        >>> lib.destroy()
    """
    global _library
    if lib is None:
        live = registered()
        if live is not None:
            return live
        lib = Library("aten", "IMPL", dispatch_key="CPU")
        own = True
    else:
        own = False
    # See Note [Quiet floating-point errors] in kernels.py
    warnings.filterwarnings(**kernels.QUIET_FILTER)
    if manual_seed not in _seed_hooks_registered:  # dispatchcore.manual_seed reaches our generator
        register_seed_hook(manual_seed)
        _seed_hooks_registered.append(manual_seed)
        register_engine("cpu", Generator, default_generator)  # dispatchcore.Generator('cpu') is this engine
    handles = [lib.impl(name, kernel) for name, kernel in all_kernels()]
    if own:
        _library = lib
        _handles[:] = handles
    return lib
