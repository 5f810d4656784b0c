"""A placed program's later runs reuse the views its steps made of its own buffers (slices, the operand
views of one-ufunc elementwise ops: the slots it learnt, runtime/executor/bound_steps.py), and never a
reshape that had to copy; against numpy."""

from __future__ import annotations

import numpy as np
from module_builder import formed

from xrelay.runtime.kernels import affine_views
from xrelay.runtime.executor.linalg_exec import LinalgProgram

from test_lowering_executor import parse

SLICE_COLLAPSE_ADD = """
func.func @main(%x: tensor<4x6xf32>, %b: tensor<3xf32>) -> (tensor<6xf32>, tensor<2x3xf32>) {
  %e0 = tensor.empty() : tensor<4x6xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%e0 : tensor<4x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
      affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.addf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  func.return %c, %y : tensor<6xf32>, tensor<2x3xf32>
}
"""


def program_with_strided_slice(placed: bool = True) -> LinalgProgram:
    # The slice of -x takes rows 1 and 3, columns 0, 2, 4: collapsing it must copy.
    text = SLICE_COLLAPSE_ADD.replace(
        "  %e = tensor.empty()",
        "  %s = tensor.extract_slice %n[1, 0] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>\n  %e = tensor.empty()")
    return LinalgProgram(formed(parse(text), placed=placed))


def test_views_of_its_buffers_are_made_until_learnt_and_follow_the_arrays_contents(monkeypatch):
    program = program_with_strided_slice()
    assert program.plan is not None
    made = []
    original = affine_views.LoopView.__call__
    monkeypatch.setattr(affine_views.LoopView, "__call__", lambda self, *a, **k: made.append(1) or original(self, *a, **k))
    rng = np.random.default_rng(0)
    x, b = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    for run in range(4):
        collapsed, added = program(x, b)
        np.testing.assert_array_equal(collapsed, -x[1::2, 0::2].reshape(6))
        np.testing.assert_array_equal(added, -x[1::2, 0::2] + b)
        if run == 1:  # the two runs the bindings are learnt from make views
            learnt = len(made)
            assert learnt > 0
        elif run > 1:
            assert len(made) == learnt  # the same arrays: no new views
        x[...] = rng.standard_normal((4, 6))  # same array, new contents (the copying reshape must see them)
        b[...] = rng.standard_normal(3)
    x2 = rng.standard_normal((4, 6)).astype(np.float32)  # another argument: new views of it
    collapsed, added = program(x2, b)
    np.testing.assert_array_equal(collapsed, -x2[1::2, 0::2].reshape(6))
    np.testing.assert_array_equal(added, -x2[1::2, 0::2] + b)
    assert len(made) > learnt


def test_an_unplanned_program_follows_the_same_arrays_changed_in_place():
    program = program_with_strided_slice(placed=False)
    x, b = np.arange(24, dtype=np.float32).reshape(4, 6), np.ones(3, np.float32)
    for run in range(3):
        collapsed, added = program(x, b)
        np.testing.assert_array_equal(collapsed, -x[1::2, 0::2].reshape(6))
        np.testing.assert_array_equal(added, -x[1::2, 0::2] + b)
        x[...] = x * 2 - run
        b[...] = run


def test_a_depthwise_conv_keeps_its_einsum_views_across_runs(monkeypatch):
    """A channels-last 3x3 depthwise conv (its padded input a planned buffer): a convolution step
    (`linalg_conv.ConvGeometry.depthwise`), which makes no loop-space views on any run, sees the
    input's new contents on the second run with the same arrays; another input array is fine."""
    from op_levels import single_op_module

    from xrelay.lowering import lower

    rng = np.random.default_rng(3)
    channels = 20
    weight = rng.standard_normal((3, 3, 1, channels)).astype(np.float32)  # HWIO, one input channel per group
    x = rng.standard_normal((1, 6, 5, channels)).astype(np.float32)
    module = lower(single_op_module("nn.conv2d", [x, weight], dict(groups=channels, padding=(1, 1, 1, 1),
                                                                     data_layout="NHWC", kernel_layout="HWIO")),
                   to="linalg")
    program = LinalgProgram(formed(module))
    made = []
    original = affine_views.LoopView.__call__
    monkeypatch.setattr(affine_views.LoopView, "__call__", lambda self, *a, **k: made.append(1) or original(self, *a, **k))

    def expected(data):
        padded = np.pad(data, ((0, 0), (1, 1), (1, 1), (0, 0)))
        return sum(padded[:, i:i + 6, j:j + 5, :] * weight[i, j, 0] for i in range(3) for j in range(3))

    counts = []
    for run in range(3):
        if run == 2:
            x = x * 3  # another array
        elif run == 1:
            x[...] = rng.standard_normal(x.shape)
        before = len(made)
        (got,) = program(x, weight)
        counts.append(len(made) - before)
        np.testing.assert_allclose(got, expected(x), rtol=1e-5, atol=1e-5)
    assert counts == [0, 0, 0]
