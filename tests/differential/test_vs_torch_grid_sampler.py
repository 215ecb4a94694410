"""The grid sampler family against torch: values, layouts, errors, node names, gradients and double backward."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dispatchcore as dc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential

A, TA = dc.ops.aten, torch.ops.aten
RNG = np.random.default_rng(0)
MODES = list(itertools.product((0, 1, 2), (0, 1, 2), (False, True)))  # interpolation x padding x align_corners


def _pair(a):
    return dc.tensor(a), torch.tensor(a)


def _same(mine, theirs, atol=1e-5):
    mine = mine if isinstance(mine, (tuple, list)) else (mine,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert (m is None) == (t is None)
        if m is None:
            continue
        assert tuple(m.shape) == tuple(t.shape)
        assert m.stride() == t.stride()
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), atol=atol, rtol=atol)


def _operands(dtype, input_shape=(2, 3, 4, 5), grid_shape=(2, 6, 7, 2), spread=1.6):
    x = RNG.standard_normal(input_shape).astype(dtype)
    g = RNG.uniform(-spread, spread, grid_shape).astype(dtype)
    return x, g


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("interpolation, padding, align_corners", MODES)
def test_forward_and_backward_match_torch_in_every_mode(dtype, interpolation, padding, align_corners):
    x, g = _operands(dtype)
    (dx, tx), (dg, tg) = _pair(x), _pair(g)
    args = (interpolation, padding, align_corners)
    _same(A.grid_sampler_2d(dx, dg, *args), TA.grid_sampler_2d(tx, tg, *args), atol=1e-4)
    dgo, tgo = _pair(RNG.standard_normal((2, 3, 6, 7)).astype(dtype))
    _same(A.grid_sampler_2d_backward(dgo, dx, dg, *args, [True, True]),
          TA.grid_sampler_2d_backward(tgo, tx, tg, *args, [True, True]), atol=1e-4)


@pytest.mark.parametrize("interpolation", [0, 1, 2])
def test_reflection_far_outside_the_image_folds_back_like_torch(interpolation):
    x, g = _operands("float64", (1, 2, 3, 4), (1, 5, 5, 2), spread=12.0)
    (dx, tx), (dg, tg) = _pair(x), _pair(g)
    for align_corners in (False, True):
        _same(A.grid_sampler_2d(dx, dg, interpolation, 2, align_corners),
              TA.grid_sampler_2d(tx, tg, interpolation, 2, align_corners))


def test_nearest_rounds_halves_to_even():
    x = np.arange(5.0, dtype="float32").reshape(1, 1, 1, 5)
    # with align_corners, x = -0.75, -0.25, 0.25, 0.75 land on pixels 0.5, 1.5, 2.5, 3.5
    g = np.array([[[[-0.75, 0.0], [-0.25, 0.0], [0.25, 0.0], [0.75, 0.0]]]], dtype="float32")
    out = A.grid_sampler_2d(dc.tensor(x), dc.tensor(g), 1, 0, True)
    assert out.numpy().ravel().tolist() == [0.0, 2.0, 2.0, 4.0]
    _same(out, TA.grid_sampler_2d(torch.tensor(x), torch.tensor(g), 1, 0, True))


def test_strided_and_channels_last_operands_give_contiguous_results():
    x, g = _operands("float32")
    tx = torch.tensor(x).to(memory_format=torch.channels_last)
    dx = dc.tensor(x).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    tg, dg = torch.tensor(g).transpose(1, 2).contiguous().transpose(1, 2), \
        dc.tensor(g).transpose(1, 2).contiguous().transpose(1, 2)
    _same(A.grid_sampler_2d(dx, dg, 2, 1, False), TA.grid_sampler_2d(tx, tg, 2, 1, False), atol=1e-4)
    go = RNG.standard_normal((2, 3, 6, 7)).astype("float32")
    _same(A.grid_sampler_2d_backward(dc.tensor(go), dx, dg, 0, 2, False, [True, True]),
          TA.grid_sampler_2d_backward(torch.tensor(go), tx, tg, 0, 2, False, [True, True]), atol=1e-4)


def test_float16_samples_close_to_torch():
    x, g = _operands("float16")
    (dx, tx), (dg, tg) = _pair(x), _pair(g)
    _same(A.grid_sampler_2d(dx, dg, 0, 0, False), TA.grid_sampler_2d(tx, tg, 0, 0, False), atol=1e-2)


def test_backward_output_mask_leaves_grad_input_undefined():
    x, g = _operands("float64")
    (dx, tx), (dg, tg) = _pair(x), _pair(g)
    dgo, tgo = _pair(RNG.standard_normal((2, 3, 6, 7)))
    mine = A.grid_sampler_2d_backward(dgo, dx, dg, 2, 0, True, [False, True])
    assert mine[0] is None
    _same(mine, TA.grid_sampler_2d_backward(tgo, tx, tg, 2, 0, True, [False, True]))


def _z(lib, shape, dtype="float32", device="cpu"):
    return lib.zeros(*shape, dtype=getattr(lib, dtype), device=device)


BAD_CALLS = {
    "batch": lambda lib, dev: lib.ops.aten.grid_sampler_2d(_z(lib, (1, 3, 4, 5), device=dev),
                                                           _z(lib, (2, 6, 7, 2), device=dev), 0, 0, False),
    "grid-last-size": lambda lib, dev: lib.ops.aten.grid_sampler_2d(_z(lib, (2, 3, 4, 5), device=dev),
                                                                    _z(lib, (2, 6, 7, 3), device=dev), 0, 0, False),
    "3d": lambda lib, dev: lib.ops.aten.grid_sampler_2d(_z(lib, (3, 4, 5), device=dev),
                                                        _z(lib, (3, 7, 1), device=dev), 0, 0, False),
    "empty-spatial": lambda lib, dev: lib.ops.aten.grid_sampler_2d(_z(lib, (2, 3, 0, 5), device=dev),
                                                                   _z(lib, (2, 6, 7, 2), device=dev), 0, 0, False),
}
CPU_BAD_CALLS = {
    "grid-dtype": lambda lib: lib.ops.aten.grid_sampler_2d(_z(lib, (2, 3, 4, 5)), _z(lib, (2, 6, 7, 2), "float64"),
                                                           0, 0, False),
    "integer-input": lambda lib: lib.ops.aten.grid_sampler_2d(_z(lib, (2, 3, 4, 5), "int32"), _z(lib, (2, 6, 7, 2)),
                                                              0, 0, False),
    "backward-integer": lambda lib: lib.ops.aten.grid_sampler_2d_backward(
        _z(lib, (2, 3, 6, 7), "int32"), _z(lib, (2, 3, 4, 5), "int32"), _z(lib, (2, 6, 7, 2), "int32"), 0, 0, False,
        [True, True]),
    "backward-grid-before-grad-output": lambda lib: lib.ops.aten.grid_sampler_2d_backward(
        _z(lib, (2, 3, 6, 7), "float64"), _z(lib, (2, 3, 4, 5)), _z(lib, (2, 6, 7, 2), "int32"), 0, 0, False,
        [True, True]),
    "composite-3d": lambda lib: lib.grid_sampler(_z(lib, (2, 3, 4)), _z(lib, (2, 6, 1)), 0, 0, False),
    "composite-5d-bicubic": lambda lib: lib.grid_sampler(_z(lib, (2, 3, 4, 5, 6)), _z(lib, (2, 6, 7, 5, 3)), 2, 0,
                                                         False),
    "binding-missing-argument": lambda lib: lib.grid_sampler(_z(lib, (2, 3, 4, 5)), _z(lib, (2, 6, 7, 2)), 0, 0),
    "binding-int-for-bool": lambda lib: lib.grid_sampler_2d(_z(lib, (2, 3, 4, 5)), _z(lib, (2, 6, 7, 2)), 0, 0, 1),
}


@pytest.mark.parametrize("name", sorted(CPU_BAD_CALLS))
def test_bad_calls_raise_torchs_errors(name, raises_alike):
    raises_alike(lambda: CPU_BAD_CALLS[name](dc), lambda: CPU_BAD_CALLS[name](torch))


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_shapes_raise_torchs_errors_on_cpu_and_meta_alike(name, raises_alike):
    raises_alike(lambda: BAD_CALLS[name](dc, "cpu"), lambda: BAD_CALLS[name](torch, "cpu"))
    raises_alike(lambda: BAD_CALLS[name](dc, "meta"), lambda: BAD_CALLS[name](torch, "cpu"))


def test_meta_results_have_cpus_geometry():
    for lib_args in ((2, 0, True), (1, 2, False)):
        mine = A.grid_sampler_2d(_z(dc, (2, 3, 4, 5), device="meta"), _z(dc, (2, 6, 7, 2), device="meta"), *lib_args)
        theirs = TA.grid_sampler_2d(_z(torch, (2, 3, 4, 5), device="meta"), _z(torch, (2, 6, 7, 2), device="meta"),
                                    *lib_args)
        assert (tuple(mine.shape), mine.stride()) == (tuple(theirs.shape), theirs.stride())
    mine = A.grid_sampler_2d_backward(_z(dc, (2, 3, 6, 7), device="meta"), _z(dc, (2, 3, 4, 5), device="meta"),
                                      _z(dc, (2, 6, 7, 2), device="meta"), 0, 0, False, [False, True])
    assert mine[0] is None and tuple(mine[1].shape) == (2, 6, 7, 2) and mine[1].device.type == "meta"


def test_five_dimensional_input_needs_grid_sampler_3d_which_is_not_built():
    x, g = _z(dc, (1, 2, 3, 4, 5)), _z(dc, (1, 2, 2, 2, 3))
    with pytest.raises(NotImplementedError, match="grid_sampler_3d"):
        dc.grid_sampler(x, g, 0, 0, False)


@pytest.mark.parametrize("interpolation, padding, align_corners", MODES)
def test_node_names_and_double_backward_match_torch(interpolation, padding, align_corners):
    x, g = _operands("float64", (1, 2, 3, 4), (1, 3, 2, 2))
    go, ggi, ggg = RNG.standard_normal((1, 2, 3, 2)), RNG.standard_normal(x.shape), RNG.standard_normal(g.shape)
    results = []
    for lib in (dc, torch):
        xt, gt, got = (lib.tensor(a).requires_grad_() for a in (x, g, go))
        y = lib.grid_sampler(xt, gt, interpolation, padding, align_corners)
        gx, gg = lib.autograd.grad(y, (xt, gt), got, create_graph=True)
        second = lib.autograd.grad((gx * lib.tensor(ggi)).sum() + (gg * lib.tensor(ggg)).sum(), (got, xt, gt),
                                   allow_unused=True)
        results.append((y.grad_fn.name(), gx.grad_fn.name(), (gx, gg), second))
    (my_node, my_node2, my_first, my_second), (node, node2, first, second) = results
    assert (my_node, my_node2) == (node, node2) == ("GridSampler2DBackward0", "GridSampler2DBackwardBackward0")
    _same(my_first, first, atol=1e-10)
    _same(my_second, second, atol=1e-10)


def test_autocast_samples_float16_in_float32():
    x, g = _operands("float16")
    with dc.autocast("cpu"):
        mine = dc.grid_sampler(dc.tensor(x), dc.tensor(g), 0, 0, False)
    with torch.autocast("cpu", dtype=torch.float16):
        theirs = torch.grid_sampler(torch.tensor(x), torch.tensor(g), 0, 0, False)
    _same(mine, theirs, atol=1e-4)
