"""The transformations family (``dispatchcore/native/transformations.py``) without torch: what each
operator returns, which operators it is made of, and its errors."""

from __future__ import annotations

import warnings

import pytest

import dispatchcore as dc
from dispatchcore.native import transformations


def _calls(fn):
    """The operators a dispatch mode sees while ``fn`` runs."""
    with dc.LoggingMode() as log:
        fn()
    return [record.func for record in log.records]


def test_rot90_turns_a_quarter_per_k_counterclockwise_from_dims0_to_dims1():
    m = dc.tensor([[1, 2], [3, 4]])
    assert dc.rot90(m).tolist() == [[2, 4], [1, 3]]
    assert dc.rot90(m, 2).tolist() == [[4, 3], [2, 1]]
    assert dc.rot90(m, -1).tolist() == dc.rot90(m, 3).tolist() == [[3, 1], [4, 2]]
    assert dc.rot90(m, 1, [1, 0]).tolist() == dc.rot90(m, -1).tolist()


def test_rot90_k0_is_a_contiguous_copy_and_other_turns_are_flip_then_transpose():
    x = dc.arange(24.0).reshape(2, 3, 4).transpose(0, 2)
    same = dc.rot90(x, 4)
    assert same.is_contiguous() and same.tolist() == x.tolist() and same._base is None
    assert [str(f) for f in _calls(lambda: dc.rot90(x))] == ["aten.rot90.default"]  # CompositeExplicitAutograd
    assert dc.rot90(dc.ones(2, 3, 4)).stride() == (4, 12, 1)  # a transposed flip, as torch's


def test_rot90_records_rot90backward0_whose_gradient_turns_back():
    x = dc.arange(6.0).reshape(2, 3).requires_grad_()
    y = dc.rot90(x, 1)
    assert type(y.grad_fn).__name__ == "Rot90Backward0"
    g = dc.arange(6.0).reshape(3, 2)
    y.backward(g)
    assert x.grad.tolist() == dc.rot90(g, -1).tolist()


@pytest.mark.parametrize(("call", "error", "text"), [
    (lambda x: dc.rot90(x, 1, [0]), RuntimeError, "expected total rotation dims == 2, but got dims = 1"),
    (lambda x: dc.rot90(x[0, 0]), RuntimeError, "expected total dims >= 2, but got total dims = 1"),
    (lambda x: dc.rot90(x, 1, [0, -3]), RuntimeError,
     "expected rotation dims to be different, but got dim0 = 0 and dim1 = -3"),
    (lambda x: dc.rot90(x, 0, [0, 5]), IndexError,
     "Dimension out of range (expected to be in range of [-3, 2], but got 5)"),
])
def test_rot90_checks_in_torchs_order(call, error, text):
    with pytest.raises(error) as info:
        call(dc.ones(2, 3, 4))
    assert str(info.value) == text


def test_stacks_promote_ranks_as_numpy_does():
    v, m = dc.arange(3.0), dc.ones(3, 2)
    assert tuple(dc.hstack([v, v]).shape) == (6,)
    assert tuple(dc.hstack([m, m]).shape) == (3, 4)
    assert tuple(dc.vstack([v, v]).shape) == tuple(dc.row_stack([v, v]).shape) == (2, 3)
    assert tuple(dc.dstack([v, v]).shape) == (1, 3, 2)
    assert dc.column_stack([v, m, dc.tensor(5.0).expand(3)]).tolist() == [[0, 1, 1, 5], [1, 1, 1, 5], [2, 1, 1, 5]]
    assert dc.hstack([v, v.long()]).dtype is dc.float32


def test_a_stack_is_atleast_nd_then_cat_and_writes_out():
    v = dc.arange(3.0)
    assert [str(f) for f in _calls(lambda: dc.vstack([v, v]))] == [
        "aten.unsqueeze.default", "aten.unsqueeze.default", "aten.cat.default"]
    out = dc.empty(6)
    assert dc.hstack([v, v], out=out) is out and out.tolist() == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
def test_a_stack_of_nothing_is_refused_in_torchs_words(name):
    with pytest.raises(RuntimeError, match="^(h|v|d|column_)stack expects a non-empty TensorList$"):
        getattr(dc, name)([])


def test_splits_pick_their_dimension_and_check_divisibility():
    x = dc.ones(2, 4, 6)
    assert [tuple(t.shape) for t in dc.hsplit(x, 2)] == [(2, 2, 6)] * 2
    assert [tuple(t.shape) for t in dc.hsplit(dc.ones(6), [1, 4])] == [(1,), (3,), (2,)]
    assert [tuple(t.shape) for t in x.vsplit(2)] == [(1, 4, 6)] * 2
    assert [tuple(t.shape) for t in dc.dsplit(x, [1])] == [(2, 4, 1), (2, 4, 5)]
    assert isinstance(dc.hsplit(x, 2), tuple) and dc.hsplit(x, 2)[0]._base is x
    with pytest.raises(RuntimeError, match="^torch.hsplit attempted to split along dimension 1, but the size of the "
                                           "dimension 4 is not divisible by the split_size 3!$"):
        dc.hsplit(x, 3)
    with pytest.raises(RuntimeError, match="^torch.dsplit requires a tensor with at least 3 dimension, but got a "
                                           "tensor with 2 dimensions!$"):
        dc.dsplit(x[0], 2)


def test_tile_pads_dims_with_leading_ones_and_repeats():
    x = dc.arange(6.0).reshape(2, 3)
    assert tuple(dc.tile(x, (2,)).shape) == (2, 6)
    assert tuple(x.tile(2, 1, 1).shape) == (2, 2, 3)
    assert [str(f) for f in _calls(lambda: dc.tile(x, (2,)))] == ["aten.repeat.default"]


def test_ravel_views_a_contiguous_tensor_and_copies_another():
    x = dc.arange(6.0).reshape(2, 3)
    assert x.ravel()._base is x._base and x.ravel().tolist() == [0, 1, 2, 3, 4, 5]
    xt = x.t()
    assert [str(f) for f in _calls(lambda: xt.ravel())] == ["aten.clone.default", "aten.view.default"]
    assert dc.ravel(dc.tensor(2.0)).tolist() == [2.0]


def test_broadcasting_helpers():
    v, c = dc.arange(3.0), dc.ones(2, 1)
    assert dc.broadcast_to(v, (2, 3)).stride() == (0, 1)
    a, b = dc.broadcast_tensors(v, c)
    assert tuple(a.shape) == tuple(b.shape) == (2, 3)
    m = dc.ones(2, 3)
    assert dc.broadcast_tensors(m, v)[0] is m  # already of the broadcast shape: itself, not expanded
    assert dc.broadcast_shapes((2, 1), (3,), ()) == dc.Size([2, 3])
    with pytest.raises(RuntimeError, match=r"^Attempting to broadcast a dimension of length 4 at -1! Mismatching "
                                           r"argument at index 1 had \(4,\); but expected shape should be "
                                           r"broadcastable to \[2, 3\]$"):
        dc.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match="negative length"):
        dc.broadcast_shapes(-1)


def test_atleast_nd_gives_back_an_input_of_the_rank_and_a_tuple_for_several():
    x = dc.ones(2, 2, 2)
    assert dc.atleast_3d(x) is x and dc.atleast_1d(x) is x
    assert tuple(dc.atleast_3d(dc.ones(3)).shape) == (1, 3, 1)
    assert tuple(dc.atleast_2d(dc.tensor(1.0)).shape) == (1, 1)
    several = dc.atleast_1d(dc.tensor(1.0), dc.ones(2))
    assert isinstance(several, tuple) and [tuple(t.shape) for t in several] == [(1,), (2,)]
    assert dc.atleast_2d() == ()


def test_meshgrid_ij_and_xy():
    a, b = dc.arange(3), dc.arange(2)
    ii, jj = dc.meshgrid(a, b, indexing="ij")
    assert tuple(ii.shape) == (3, 2) and ii.tolist() == [[0, 0], [1, 1], [2, 2]] and jj.tolist() == [[0, 1]] * 3
    xs, ys = dc.meshgrid(a, b, indexing="xy")
    assert tuple(xs.shape) == (2, 3) and xs.tolist() == [[0, 1, 2]] * 2 and ys.tolist() == [[0, 0, 0], [1, 1, 1]]
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij", but received: foo'):
        dc.meshgrid(a, b, indexing="foo")
    with pytest.raises(RuntimeError, match="^meshgrid expects all tensors to have the same dtype$"):
        dc.meshgrid(a, b.float(), indexing="ij")


def test_meshgrid_without_indexing_is_ij_and_warns_once():
    transformations._WARNED_MESHGRID.clear()
    a = dc.arange(2)
    with pytest.warns(UserWarning, match="required to pass the indexing argument"):
        first = dc.meshgrid(a, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dc.meshgrid(a, a)
    assert [t.tolist() for t in first] == [t.tolist() for t in dc.meshgrid(a, a, indexing="ij")]


def test_a_tensor_list_element_of_another_type_is_named_as_torchs_parser_names_it():
    with pytest.raises(TypeError, match="^expected Tensor as element 1 in argument 0, but got int$"):
        dc.hstack([dc.ones(1), 2])
