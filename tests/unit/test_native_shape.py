"""The shape family without torch: values, views, registrations, derivatives and error texts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import gradcheck, gradgradcheck
from dispatchcore.dispatcher import get_dispatcher
from dispatchcore.native import shape


def _x(*shape_, dtype=dc.float64):
    n = int(np.prod(shape_))
    return dc.arange(n, dtype=dtype).reshape(*shape_).clone()


def _registered_keys(qualname):
    """The keys (among those torch's table shows) that hold a kernel of ``qualname``."""
    lines = get_dispatcher().find_op(qualname).dump_state().splitlines()
    return {line.partition(":")[0].removesuffix("[alias]") for line in lines if " :: " in line}


# --- values ---------------------------------------------------------------------------------------------
def test_flip_reverses_the_listed_dims():
    assert _x(2, 3).flip(1).tolist() == [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]
    assert dc.flip(_x(2, 3), [0, -1]).tolist() == [[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]]


def test_roll_shifts_along_dims_or_the_flattened_tensor():
    assert _x(2, 3).roll(1, 1).tolist() == [[2.0, 0.0, 1.0], [5.0, 3.0, 4.0]]
    assert _x(2, 3).roll(1).tolist() == [[5.0, 0.0, 1.0], [2.0, 3.0, 4.0]]


def test_repeat_tiles_with_leading_new_dims():
    r = _x(2).repeat(2, 2)
    assert r.tolist() == [[0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]]
    assert r.is_contiguous()


def test_constant_pad_nd_pads_from_the_last_dim_and_crops_with_negative_pads():
    assert dc.constant_pad_nd(_x(1, 2), [1, 0], 9).tolist() == [[9.0, 0.0, 1.0]]
    assert dc.constant_pad_nd(_x(2, 3), [-1, 0, 0, 1]).tolist() == [[1.0, 2.0], [4.0, 5.0], [0.0, 0.0]]


def test_tril_and_triu_keep_a_triangle_in_place_and_out_of_place():
    x = dc.ones(3, 3)
    assert x.tril(-1).tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    assert dc.triu(x, 1).sum().item() == 3.0
    x.triu_()
    assert x.tolist() == [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    out = dc.empty(0)
    assert dc.tril(dc.ones(2, 2), out=out) is out and out.tolist() == [[1.0, 0.0], [1.0, 1.0]]


def test_split_chunk_unbind_and_tensor_split_give_torchs_pieces():
    x = _x(5, 2)
    assert [p.shape[0] for p in x.split(2)] == [2, 2, 1]
    assert [p.shape[0] for p in dc.split(x, [1, 4])] == [1, 4]
    assert [p.shape[0] for p in x.chunk(3)] == [2, 2, 1]
    assert [p.shape[0] for p in x.tensor_split(3)] == [2, 2, 1]
    assert [p.shape[0] for p in x.tensor_split([1, 4])] == [1, 3, 1]
    assert [p.tolist() for p in x.unbind(1)] == [[0.0, 2.0, 4.0, 6.0, 8.0], [1.0, 3.0, 5.0, 7.0, 9.0]]
    assert isinstance(x.split(2), tuple) and isinstance(dc.unbind(x), tuple)


def test_empty_dimensions_split_into_empty_pieces():
    x = dc.zeros(0, 3)
    assert [tuple(p.shape) for p in x.split(2)] == [(0, 3)]
    assert [tuple(p.shape) for p in x.chunk(3)] == [(0, 3)] * 3
    assert len(x.unbind(0)) == 0


def test_diagonal_is_a_strided_view_with_an_offset():
    x = _x(3, 4)
    d = x.diagonal(1)
    assert d.tolist() == [1.0, 6.0, 11.0]
    assert d.stride() == (5,) and d.storage_offset() == 1
    assert x.diagonal(-1, 1, 0).tolist() == [1.0, 6.0, 11.0]
    assert x.diagonal(9).shape == (0,) and x.diagonal(9).storage_offset() == 0


def test_narrow_flatten_unflatten_and_movedim():
    x = _x(2, 3, 4)
    assert x.narrow(2, -2, 2).tolist() == x[:, :, 2:].tolist()
    assert x.flatten(1).shape == (2, 12) and x.flatten().shape == (24,)
    assert x.flatten(1, 1) is x
    assert x.unflatten(2, (2, -1)).shape == (2, 3, 2, 2)
    assert x.movedim(0, -1).shape == (3, 4, 2)
    assert dc.movedim(x, (0, 1), (2, 0)).shape == (3, 4, 2)
    assert dc.moveaxis(x, 2, 0).shape == (4, 2, 3)


def test_transpose_properties():
    x = _x(2, 3)
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2) and x.mH.shape == (3, 2) and x.H.shape == (3, 2)
    assert x.adjoint().tolist() == x.t().tolist()
    assert _x(2, 3, 4).mT.shape == (2, 4, 3)
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        assert _x(2, 3, 4).T.shape == (4, 3, 2)


def test_as_ops_and_type_as_follow_the_other_tensor():
    x = _x(6)
    assert x.view_as(dc.zeros(2, 3)).shape == (2, 3)
    assert x.reshape_as(dc.zeros(3, 2)).shape == (3, 2)
    assert dc.ones(3).expand_as(dc.zeros(2, 3)).stride() == (0, 1)
    assert x.type_as(dc.zeros(1, dtype=dc.int32)).dtype is dc.int32
    assert x.type_as(x) is x


def test_scatter_ops_write_src_into_a_copy():
    x = dc.zeros(2, 3)
    assert dc.select_scatter(x, dc.ones(3), 0, 1).tolist() == [[0.0] * 3, [1.0] * 3]
    assert dc.slice_scatter(x, dc.ones(2, 1), 1, 2).tolist() == [[0.0, 0.0, 1.0]] * 2
    assert dc.diagonal_scatter(x, dc.ones(2)).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert x.sum().item() == 0.0


def test_scatter_and_copy_keep_the_inputs_strides_and_offset():
    base = _x(4, 6)
    x = base[1:, ::2]
    for r in (dc.select_scatter(x, dc.zeros(3, dtype=dc.float64), 0, 0), dc.ops.aten.copy(x, x)):
        assert r.stride() == x.stride() and r.storage_offset() == x.storage_offset()
        assert r._base is None


def test_fill_and_like_factories():
    x = _x(2, 3).t()
    assert dc.fill(x, 2).tolist() == [[2.0, 2.0]] * 3 and dc.fill(x, 2).stride() == x.stride()
    assert dc.fill(x, dc.tensor(1.5)).sum().item() == 9.0
    assert dc.zeros_like(x).stride() == x.stride()
    assert dc.ones_like(x, dtype=dc.int32).dtype is dc.int32
    assert dc.full_like(x, 7).tolist() == [[7.0, 7.0]] * 3
    assert dc.empty_like(x, memory_format=dc.contiguous_format).stride() == (2, 1)
    r = dc.rand_like(x)
    values = np.array(r.tolist())
    assert r.shape == x.shape and r.stride() == x.stride() and ((0.0 <= values) & (values < 1.0)).all()


def test_new_factories_take_selfs_dtype_and_device():
    x = dc.zeros(1, dtype=dc.float64)
    assert x.new_zeros(2, 3).dtype is dc.float64 and x.new_zeros(2, 3).shape == (2, 3)
    assert x.new_ones((2,)).tolist() == [1.0, 1.0]
    assert x.new_full((2,), 3).dtype is dc.float64
    assert x.new_empty(4, dtype=dc.int32).dtype is dc.int32
    assert x.new_tensor([1, 2]).dtype is dc.float64
    assert x.new_zeros(2, requires_grad=True).requires_grad


def test_randperm_is_a_permutation_of_the_requested_dtype():
    p = dc.randperm(20)
    assert p.dtype is dc.int64 and sorted(p.tolist()) == list(range(20))
    assert dc.randperm(5, dtype=dc.float32).dtype is dc.float32
    assert dc.randperm(0).shape == (0,)
    assert dc.randperm(4, device="meta").device.type == "meta"


def test_randperm_is_reproducible_after_manual_seed():
    dc.manual_seed(3)
    a = dc.randperm(10).tolist()
    dc.manual_seed(3)
    assert dc.randperm(10).tolist() == a


def test_iteration_unbinds():
    x = _x(2, 3).requires_grad_()
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert rows[0].grad_fn.name() == "UnbindBackward0"
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(dc.tensor(1.0))


# --- views and autograd ------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda y: y.split(2), lambda y: y.split([1, 2]), lambda y: y.unbind(),
                                  lambda y: y.chunk(2), lambda y: (y.diagonal(),), lambda y: (y.narrow(1, 1, 2),)])
def test_views_share_memory_base_and_version_counter(make):
    y = _x(3, 4)
    views = make(y)
    for v in views:
        assert v._base is y
    y.add_(1)
    assert all(v._version == y._version == 1 for v in views)
    assert views[0].reshape(-1)[0].item() == y.flatten()[views[0].storage_offset()].item()


def test_in_place_on_a_multi_output_view_is_refused_under_autograd():
    y = _x(3, 4).requires_grad_() * 1
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and is being modified inplace. "
                                           "This view is the output of a function that returns multiple views."):
        y.split(2)[0].mul_(2)


@pytest.mark.parametrize("name, fn", [
    ("FlipBackward0", lambda x: x.flip(0, 1)), ("RollBackward0", lambda x: x.roll((1, 2), (0, 1))),
    ("RepeatBackward0", lambda x: x.repeat(2, 1, 2)),
    ("ConstantPadNdBackward0", lambda x: dc.constant_pad_nd(x, [1, -1])),
    ("DiagonalBackward0", lambda x: x.diagonal(-1)), ("SplitWithSizesBackward0", lambda x: x.split([1, 2])[1]),
    ("SplitBackward0", lambda x: x.split(2)[0]), ("UnbindBackward0", lambda x: x.unbind(1)[3]),
    ("TrilBackward0", lambda x: x.tril(1)), ("TriuBackward0", lambda x: x.triu()),
    ("SelectScatterBackward0", lambda x: dc.select_scatter(x, x[0] * 2, 0, 2)),
    ("SliceScatterBackward0", lambda x: dc.slice_scatter(x, x[:, 1:2] * 2, 1, 0, 1)),
    ("DiagonalScatterBackward0", lambda x: dc.diagonal_scatter(x, x[0, :3] * 2)),
    ("FillBackward1", lambda x: dc.fill(x, x[1, 1])),
])
def test_derivatives_have_torchs_node_names_and_pass_gradcheck(name, fn):
    x = dc.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert fn(x).grad_fn.name() == name
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_copy_records_a_not_implemented_node():
    x = _x(3).requires_grad_()
    y = dc.ops.aten.copy(x, x)
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::copy is not implemented"):
        y.sum().backward()


def test_factory_likes_never_require_grad():
    x = _x(2).requires_grad_()
    assert not dc.zeros_like(x).requires_grad and not x.new_ones(2).requires_grad


# --- resize_ ------------------------------------------------------------------------------------------------
def test_resize_shrinks_in_place_keeping_the_leading_elements():
    x = _x(3, 4)
    assert x.resize_(2, 3) is x
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x.stride() == (3, 1) and x.storage_offset() == 0


def test_resize_of_a_view_reads_its_storage_from_its_offset_and_still_aliases_the_base():
    base = _x(3, 4)
    v = base[:, ::2]  # elements 0, 2, 4, ...; its storage is base's
    v.resize_(5)
    assert v.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and v.stride() == (1,)
    w = base[1:, 1:]
    w.resize_(2, 2)
    assert w.storage_offset() == 5 and w.tolist() == [[5.0, 6.0], [7.0, 8.0]]
    w.fill_(-1.0)
    assert base.view(-1)[5:9].tolist() == [-1.0] * 4


def test_resize_grows_the_storage_keeping_its_old_bytes_and_reuses_a_kept_storage():
    x = _x(4)
    x.resize_(2, 3)
    assert x.shape == (2, 3) and x.view(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    tail = dc.arange(10.0)[4:]
    tail.resize_(0)
    assert tail.storage_offset() == 4
    assert tail.resize_(3).tolist() == [4.0, 5.0, 6.0]  # the storage kept its elements


def test_resize_to_the_same_sizes_keeps_strides_unless_a_memory_format_is_given():
    t = _x(3, 4).t()
    assert t.resize_(4, 3).stride() == (1, 4)
    assert t.resize_(4, 3, memory_format=dc.contiguous_format).stride() == (3, 1)
    assert _x(3).resize_(2, 3, 4, 5, memory_format=dc.channels_last).stride() == (60, 1, 15, 3)
    assert _x(3).resize_(2, 3, 4, 1, 5, memory_format=dc.channels_last_3d).stride() == (60, 1, 15, 15, 3)


def test_resize_of_a_meta_tensor_gives_the_cpu_geometry_and_grows_its_storage():
    m = dc.empty(2, 3, device="meta")[:, 1:]
    m.resize_(2, 5)
    assert (m.shape, m.stride(), m.storage_offset()) == ((2, 5), (5, 1), 1)
    m.as_strided([11], [1], 0)  # the storage now holds 11 elements
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 44"):
        m.as_strided([12], [1], 0)


def test_resize_refuses_tensors_requiring_grad_even_without_grad_mode():
    x = dc.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        x.resize_(3)
    with dc.no_grad(), pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        x.resize_(2)
    assert x.detach().resize_(1).shape == (1,)


def test_resize_counts_a_version_shared_with_views():
    x = _x(2, 3)
    v = x.view(6)
    x.resize_(3, 2)
    assert x._version == v._version == 1


@pytest.mark.parametrize("fn, text", [
    (lambda: _x(3).resize_(2, -1), "numel: integer multiplication overflow"),
    (lambda: _x(3).resize_(2**62, 4), "numel: integer multiplication overflow"),
    (lambda: _x(3).resize_(2, memory_format=dc.preserve_format), "Unsupported memory formatPreserve"),
    (lambda: _x(3).resize_(2, 3, memory_format=dc.channels_last), "required rank 4 tensor to use channels_last format"),
    (lambda: dc.empty(3, device="meta").resize_(2, memory_format=dc.channels_last_3d),
     "required rank 5 tensor to use channels_last_3d format"),
])
def test_resize_errors_use_torchs_words(fn, text):
    with pytest.raises(RuntimeError) as info:
        fn()
    assert str(info.value) == text


def test_resize_resizes_before_a_memory_format_error_as_torch_orders_it():
    x = _x(2, 3)
    with pytest.raises(RuntimeError):
        x.resize_(4, memory_format=dc.preserve_format)
    assert x.shape == (4,) and x._version == 0


# --- registrations ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("qualname, keys", [
    ("aten::flip", {"CPU", "Meta", "Autograd"}),
    ("aten::diagonal", {"CompositeExplicitAutograd", "ADInplaceOrView", "Autograd"}),
    ("aten::split_with_sizes", {"CompositeExplicitAutograd", "ADInplaceOrView", "Autograd"}),
    ("aten::chunk", {"CompositeImplicitAutograd", "ADInplaceOrView"}),
    ("aten::flatten.using_ints", {"CompositeImplicitAutograd"}),
    ("aten::select_scatter", {"CompositeExplicitAutogradNonFunctional", "Meta", "Autograd"}),
    ("aten::randperm", {"BackendSelect", "CompositeExplicitAutograd", "Meta", "Autograd"}),
    ("aten::resize_", {"CPU", "Meta", "ADInplaceOrView", "Autograd"}),
])
def test_operators_are_registered_at_torchs_keys(qualname, keys):
    assert _registered_keys(qualname) == keys


def test_schemas_are_defined_once_each():
    names = [s.partition("(")[0] for s in shape.SCHEMAS]
    assert len(names) == len(set(names))


# --- errors ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, exc, text", [
    (lambda: _x(3, 4).split([1, 1]), RuntimeError,
     "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension 0), "
     "but got split_sizes=[1, 1]"),
    (lambda: _x(3, 4).split([4, -1]), RuntimeError,
     "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[4, -1]"),
    (lambda: _x(3, 4).split(0), RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension "
                                              "size of 3"),
    (lambda: dc.tensor(1.0).split(1), RuntimeError, "split expects at least a 1-dimensional tensor"),
    (lambda: _x(3, 4).repeat(2), RuntimeError,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    (lambda: _x(3, 4).flip(0, -2), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: _x(3, 4).flip(2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: dc.constant_pad_nd(_x(3, 4), [1]), RuntimeError, "Length of pad must be even but instead it equals 1"),
    (lambda: _x(3, 4).diagonal(0, 1, -1), RuntimeError, "diagonal dimensions cannot be identical 1, -1"),
    (lambda: _x(3, 4).chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda: dc.tensor(1.0).unbind(), IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: _x(3, 4).narrow(0, 2, 2), RuntimeError, "start (2) + length (2) exceeds dimension size (3)."),
    (lambda: _x(3, 4).narrow(0, 5, 0), IndexError,
     "start out of range (expected to be in range of [-3, 3], but got 5)"),
    (lambda: _x(3, 4).flatten(1, 0), RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim"),
    (lambda: _x(3, 4).unflatten(1, (3, 2)), RuntimeError,
     "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 1 (4) in the input tensor"),
    (lambda: _x(3, 4).roll((1, 2), 0), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1"),
    (lambda: _x(3).tril(), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda: _x(3, 4).movedim((0, 0), (0, 1)), RuntimeError, "movedim: repeated dim in `source` ([0, 0])"),
    (lambda: _x(3).mT, RuntimeError, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."),
    (lambda: dc.select_scatter(_x(3, 4), dc.ones(3), 0, 0), RuntimeError,
     "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]"),
    (lambda: dc.randperm(3, dtype=dc.bool), NotImplementedError, "\"randperm\" not implemented for 'Bool'"),
    (lambda: dc.randperm(3000, dtype=dc.float16), RuntimeError, "n cannot be greater than 2049 for Half type."),
    (lambda: dc.tril(_x(2, 2), out=dc.empty(2, 2)), RuntimeError,
     "Expected out tensor to have dtype double, but got float instead"),
])
def test_errors_use_torchs_words(fn, exc, text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc) as info:
            fn()
    assert str(info.value) == text


@pytest.mark.parametrize("make", [
    lambda: dc.arange(32.0).reshape(4, 8), lambda: dc.arange(32.0).reshape(4, 8).t(),
    lambda: dc.arange(32.0).reshape(4, 8)[:, ::2], lambda: dc.zeros(5).expand(3, 5), lambda: dc.tensor(2.0),
    lambda: dc.zeros(2, 0, 3)])
def test_unsqueeze_gives_torchs_strides_at_every_position(make):
    # backends/cpu/kernels._unsqueeze builds the view straight over a contiguous buffer; the new
    # dim's stride is size * stride of the dim it goes before (the item size at the end)
    x = make()
    for d in range(-x.dim() - 1, x.dim() + 1):
        r = x.unsqueeze(d)
        pos = d % (x.dim() + 1)
        shape, strides = list(x.shape), list(x.stride())
        new = 1 if pos == x.dim() else shape[pos] * strides[pos]
        assert list(r.shape) == shape[:pos] + [1] + shape[pos:]
        assert list(r.stride()) == strides[:pos] + [new] + strides[pos:]
        assert r.tolist() == np.expand_dims(x.numpy(), pos).tolist() and r._base is not None


@pytest.mark.parametrize("shape", [(4, 8), (3,), (), (1, 5), (5, 1), (2, 0), (2, 3, 1)])
@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "float16", "bool", "complex64"])
def test_to_dtype_of_a_contiguous_tensor_matches_the_preserve_format_path(shape, dtype):
    # backends/cpu/kernels._to_copy_cpu casts a contiguous input with one astype; an explicit
    # memory_format=preserve_format takes the general path (empty_like, then copy): same tensor
    x = dc.tensor((np.random.default_rng(0).standard_normal(shape) * 300).astype(np.float32))
    fast = dc.ops.aten._to_copy.default(x, dtype=getattr(dc, dtype))
    general = dc.ops.aten._to_copy.default(x, dtype=getattr(dc, dtype), memory_format=dc.preserve_format)
    assert (fast.dtype, tuple(fast.shape), fast.stride()) == (general.dtype, tuple(general.shape), general.stride())
    assert np.array_equal(fast.numpy(), general.numpy()) and fast._base is None
