"""The indexing family without torch: values, layouts, errors, version counters and node names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dispatchcore as dc
from dispatchcore.autograd import gradcheck, gradgradcheck
from dispatchcore.native import indexing as ix

A = dc.ops.aten


def _x():
    return dc.tensor(np.arange(12.0).reshape(3, 4))


def test_list_index_takes_rows_in_order():
    assert _x()[[2, 0]].tolist() == [[8.0, 9.0, 10.0, 11.0], [0.0, 1.0, 2.0, 3.0]]


def test_mask_index_selects_in_row_major_order():
    x = _x()
    assert x[x > 8].tolist() == [9.0, 10.0, 11.0]


def test_non_adjacent_advanced_indices_move_to_the_front():
    z = dc.zeros(2, 3, 4)
    assert tuple(z[[0, 1], :, [1, 2]].shape) == (2, 3)
    assert tuple(z[:, [0, 1], [1, 2]].shape) == (2, 2)
    assert tuple(z[0, :, [1, 2]].shape) == (3, 2)  # the int is a select first, as in torch


def test_index_result_follows_the_iterator_layout_of_a_permuted_input():
    z = dc.zeros(2, 3, 4).permute(2, 0, 1)
    assert z[:, [0, 1]].stride() == (1, 4, 8)


def test_bool_scalar_index_adds_a_dim():
    x = _x()
    assert tuple(x[True].shape) == (1, 3, 4)
    assert tuple(x[False].shape) == (0, 3, 4)


def test_zero_d_integer_tensor_index_is_a_select_view():
    x = _x()
    y = x[dc.tensor(1)]
    assert y._base is x and y.tolist() == [4.0, 5.0, 6.0, 7.0]


def test_nested_list_index_is_deprecated_multi_dim_indexing():
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        y = _x()[[[0, 1], [1, 2]]]
    assert y.tolist() == [1.0, 6.0]


@pytest.mark.parametrize("expr, error, text", [
    ("x[dc.tensor([5])]", IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ("x[:, dc.tensor([5])]", IndexError, "index 5 is out of bounds for dimension 0 with size 4"),
    ("x[dc.tensor([True, False])]", IndexError,
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0"),
    ("x[dc.tensor([0.0])]", IndexError, "tensors used as indices must be long, int, byte or bool tensors"),
    ("x[[0], [0], [0]]", IndexError, "too many indices for tensor of dimension 2"),
    ("x[dc.tensor([0, 1]), dc.tensor([0, 1, 2])]", IndexError,
     "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"),
    ("dc.zeros(0, 3)[dc.tensor([0])]", IndexError, "index is out of bounds for dimension with size 0"),
    ("x[1.5]", IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables"),
])
def test_getitem_errors_are_torchs(expr, error, text):
    with pytest.raises(error) as info:
        eval(expr, {"x": _x(), "dc": dc})  # noqa: S307
    assert text in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_setitem_writes_with_index_put_and_bumps_the_version_once():
    x = _x()
    before = x._version
    x[[0, 2]] = -1.0
    assert x._version == before + 1
    assert x[:, 0].tolist() == [-1.0, 4.0, -1.0]


def test_setitem_with_a_mask_and_a_number_fills():
    x = _x()
    x[x > 5] = 0
    assert x.sum().item() == 15.0


def test_setitem_broadcasts_values_after_dropping_leading_ones():
    x = dc.zeros(3, 4)
    x[[0, 1]] = dc.ones(1, 1, 4)
    assert x.sum().item() == 8.0


def test_setitem_refuses_a_value_of_another_dtype():
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match, got Float "
                                           "for the destination and Long for the source."):
        dc.zeros(3)[[0]] = dc.tensor([5])


def test_setitem_on_a_basic_view_then_advanced_writes_the_base():
    x = dc.zeros(3, 4)
    x[1:, [0, 3]] = 7.0
    assert x.sum().item() == 28.0


def test_index_and_index_put_gradients():
    x = dc.randn(3, 4, dtype=dc.float64, requires_grad=True)
    v = dc.randn(2, 4, dtype=dc.float64, requires_grad=True)
    assert x[[0, 0, 1]].grad_fn.name() == "IndexBackward0"
    assert gradcheck(lambda t: t[[0, 0, 2], 1:], (x,)) and gradgradcheck(lambda t: t[[0, 0, 2], 1:], (x,))

    def put(t, v):
        y = t * 1
        y[[0, 2]] = v
        return y * y

    assert gradcheck(put, (x, v)) and gradgradcheck(put, (x, v))


def test_gather_and_scatter_values():
    x = _x()
    idx = dc.tensor([[0, 1], [2, 3], [1, 1]])
    assert dc.gather(x, 1, idx).tolist() == [[0.0, 1.0], [6.0, 7.0], [9.0, 9.0]]
    assert dc.zeros(3).scatter_add(0, dc.tensor([0, 0, 2]), dc.ones(3)).tolist() == [2.0, 0.0, 1.0]
    assert dc.zeros(3).scatter(0, dc.tensor([2]), 5.0).tolist() == [0.0, 0.0, 5.0]


@pytest.mark.parametrize("reduce, include_self, expected", [
    ("sum", True, [9.0, 6.0, 3.0]), ("prod", True, [16.0, 8.0, 3.0]), ("mean", True, [3.0, 3.0, 3.0]),
    ("mean", False, [4.0, 4.0, 3.0]), ("amax", False, [4.0, 4.0, 3.0]), ("amin", True, [1.0, 2.0, 3.0]),
])
def test_scatter_reduce_reduces_with_or_without_self(reduce, include_self, expected):
    x = dc.tensor([1.0, 2.0, 3.0])
    y = x.scatter_reduce(0, dc.tensor([0, 0, 1]), dc.tensor([4.0, 4.0, 4.0]), reduce, include_self=include_self)
    assert y.tolist() == expected


def test_scatter_reduce_gradients_for_every_reduction():
    x = dc.randn(3, 4, dtype=dc.float64, requires_grad=True)
    src = dc.randn(3, 2, dtype=dc.float64, requires_grad=True)
    idx = dc.tensor([[0, 1], [2, 2], [1, 1]])
    for reduce in ix.SCATTER_REDUCES:
        for include_self in (True, False):
            def f(t, s, reduce=reduce, include_self=include_self):
                return t.scatter_reduce(1, idx, s, reduce, include_self=include_self)

            assert gradcheck(f, (x, src)), (reduce, include_self)


def test_scatter_with_reduce_warns_and_has_no_derivative():
    x = dc.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match="The reduce argument of torch.scatter with Tensor src is deprecated"):
        y = x.scatter(0, dc.tensor([0]), dc.ones(1), reduce="add")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


def test_index_select_masked_ops_take_nonzero():
    x = _x()
    assert x.index_select(1, dc.tensor([3, 0])).tolist() == [[3.0, 0.0], [7.0, 4.0], [11.0, 8.0]]
    assert x.masked_fill(x > 9, -1.0)[2].tolist() == [8.0, 9.0, -1.0, -1.0]
    assert dc.masked_select(x, x > 9).tolist() == [10.0, 11.0]
    assert dc.zeros(4).masked_scatter(dc.tensor([True, False, True, False]), dc.tensor([1.0, 2.0])).tolist() == [
        1.0, 0.0, 2.0, 0.0]
    assert x.take(dc.tensor([0, -1])).tolist() == [0.0, 11.0]
    nz = dc.nonzero(dc.tensor([[0, 1], [1, 0]]))
    assert nz.tolist() == [[0, 1], [1, 0]] and nz.stride() == (1, 2)
    assert [t.tolist() for t in dc.nonzero(dc.tensor([0, 3, 4]), as_tuple=True)] == [[1, 2]]
    assert dc.nonzero_static(dc.tensor([0, 1]), size=3).tolist() == [[1], [-1], [-1]]


def test_where_takes_numbers_and_broadcasts_all_three():
    cond = dc.tensor([True, False])
    assert dc.where(cond, 1, 2.5).dtype is dc.float32
    assert dc.where(cond, 1, 2).dtype is dc.int64
    y = dc.where(cond, dc.zeros(3, 1), dc.ones(1, 2, dtype=dc.float64))
    assert tuple(y.shape) == (3, 2) and y.dtype is dc.float64
    assert [t.tolist() for t in dc.where(dc.tensor([[True, False], [True, True]]))] == [[0, 1, 1], [0, 0, 1]]


def test_local_scalar_dense_and_item():
    assert A._local_scalar_dense.default(dc.tensor([[7]])) == 7
    assert A.item.default(dc.tensor(True)) is True
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        A.item.default(dc.tensor([1.0, 2.0]))


@pytest.mark.parametrize("expr, error, text", [
    ("dc.gather(x, 1, dc.full((3, 2), 7))", RuntimeError, "index 7 is out of bounds for dimension 1 with size 4"),
    ("dc.gather(x, 1, dc.zeros(3, 2))", RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    ("x.scatter(1, dc.zeros(3, 2, dtype=dc.int64), dc.ones(3, 2))", RuntimeError,
     "scatter(): Expected self.dtype to be equal to src.dtype"),
    ("x.scatter_reduce(1, dc.zeros(3, 2, dtype=dc.int64), x[:, :2], 'add')", RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got add"),
    ("x.index_select(0, dc.tensor([5]))", IndexError, "index out of range in self"),
    ("x.masked_fill(dc.ones(3, 4, dtype=dc.int64), 1.0)", RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    ("x.masked_scatter(x > 0, dc.ones(1, dtype=dc.float64))", RuntimeError,
     "Number of elements of source < number of ones in mask"),
    ("x.take(dc.tensor([12]))", IndexError, "out of range: tried to access index 12 on a tensor of 12 elements."),
    ("A.index.Tensor(x, [])", IndexError, "at least one index must be provided"),
])
def test_op_errors_are_torchs(expr, error, text):
    with pytest.raises(error) as info:
        eval(expr, {"x": _x(), "dc": dc, "A": A})  # noqa: S307
    assert text in str(info.value)


def test_meta_index_has_the_cpu_layout_and_refuses_masks():
    m = dc.empty(2, 3, 4, device="meta").permute(2, 0, 1)
    cpu = dc.zeros(2, 3, 4).permute(2, 0, 1)
    idx = dc.tensor([0, 1])
    assert m[:, idx.to("meta")].stride() == cpu[:, idx].stride()
    with pytest.raises(NotImplementedError, match="raises unimplemented by default"):
        dc.empty(3, device="meta")[dc.ones(3, dtype=dc.bool, device="meta")]


def test_geometry_helper_moves_non_adjacent_dims_first():
    shape, strides, order = ix.index_geometry((2, 3, 4), (12, 4, 1), [((2,), (1,)), None, ((2,), (1,))])
    assert shape == (2, 3) and strides == (3, 1) and order == [0, 2, 1]


def test_uint8_mask_warns_as_torch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = _x()[dc.tensor([1, 0, 1], dtype=dc.uint8)]
    assert tuple(y.shape) == (2, 4)
    assert any("indexing with dtype torch.uint8 is now deprecated" in str(w.message) for w in caught)


@pytest.mark.parametrize("shape", [(4,), (4, 8), (5, 3, 2), (1, 7), (6, 1), (3, 0), (2, 3, 4, 5)])
@pytest.mark.parametrize("index", [[2], [0, -1, 3, 0], [[1, 2], [0, -4]], [], [[3]]])
def test_one_int64_index_gives_the_general_paths_values_and_layout(shape, index):
    # backends/cpu/indexing.py takes x[i] on a contiguous x with numpy's take; the general path
    # (the same index spelt as x[i, ...] on a transposed-back copy) is the reference
    x = dc.arange(int(np.prod(shape)), dtype=dc.float32).reshape(shape)
    i = dc.tensor(index, dtype=dc.int64)
    if i.numel() and (i.max() >= shape[0] or i.min() < -shape[0]):
        with pytest.raises(IndexError, match=r"out of bounds for dimension 0 with size"):
            x[i]
        return
    got = x[i]
    general = ix.index_geometry(tuple(x.shape), x.stride(), [(tuple(i.shape), i.stride())])
    assert (tuple(got.shape), got.stride()) == general[:2]
    assert got.tolist() == np.take(x.numpy(), i.numpy(), axis=0).tolist()
    assert got._base is None and got._version == 0


def test_an_out_of_bounds_index_raises_torchs_error_on_every_path():
    x = dc.ones(4, 3)
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for dimension 0 with size 4") as info:
        x[dc.tensor([1, 4])]
    assert info.value.__context__ is None
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for dimension 0 with size 4"):
        x.t().contiguous().t()[dc.tensor([-5])]


@pytest.mark.parametrize(("shape", "mask_shape"), [((4, 8), (4, 8)), ((4, 8), (4,)), ((5, 3, 2), (5, 3)),
                                                   ((3,), (3,)), ((2, 3, 4), (2,))])
@pytest.mark.parametrize("fill", ["random", "none", "all"])
def test_one_bool_mask_gives_the_general_paths_values_and_layout(shape, mask_shape, fill):
    # backends/cpu/indexing.py selects x[mask] over x's leading dims with numpy's mask indexing;
    # the general path's positions (nonzero) and index_geometry are the reference
    x = dc.arange(int(np.prod(shape)), dtype=dc.float32).reshape(shape)
    bits = {"random": np.random.default_rng(0).random(mask_shape) > 0.5,
            "none": np.zeros(mask_shape, bool), "all": np.ones(mask_shape, bool)}[fill]
    got = x[dc.tensor(bits)]
    positions = [dc.tensor(p) for p in np.nonzero(bits)]
    general = ix.index_geometry(tuple(x.shape), x.stride(), [(tuple(p.shape), p.stride()) for p in positions])
    assert (tuple(got.shape), got.stride()) == general[:2]
    assert got.tolist() == x.numpy()[bits].tolist()
