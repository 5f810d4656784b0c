"""The data-movement nn ops (concatenate, split, strided_slice, take, pad, broadcast_to, squeeze,
batch_matmul, global_max_pool2d): kernels, the nn/linalg/memref/loops levels and FoldConstant all
give what numpy (written here) gives; shape errors name the op, operand and shapes; ConvertLayout
renumbers axes and pad widths instead of transforming back."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block
from xdsl.parser import Parser

from op_levels import single_op_module

from xrelay import passes
from xrelay.dialects import make_context, nn
from xrelay.instrument import PassContext
from xrelay.lowering import lower
from xrelay.passes.convert_layout import ConvertLayout
from xrelay.runtime import run
from xrelay.runtime.reference.nn_kernels import KERNELS

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
Y = RNG.standard_normal((2, 5, 4)).astype(np.float32)
Z = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)

# (id, op, operands, attributes, numpy reference of the results)
CASES = [
    ("concatenate_axis1", "nn.concatenate", [X, Y], {"axis": 1}, [np.concatenate([X, Y], axis=1)]),
    ("concatenate_three_last", "nn.concatenate", [X, X[..., :1], X], {"axis": -1},
     [np.concatenate([X, X[..., :1], X], axis=-1)]),
    ("concatenate_one", "nn.concatenate", [X], {}, [X]),
    ("concatenate_int", "nn.concatenate", [np.arange(6).reshape(2, 3), np.arange(3).reshape(1, 3)], {},
     [np.array([[0, 1, 2], [3, 4, 5], [0, 1, 2]])]),
    ("split_two_indices", "nn.split", [Y], {"indices_or_sections": (1, 3), "axis": 1}, [Y[:, :1], Y[:, 1:3], Y[:, 3:]]),
    ("split_axis0", "nn.split", [Y], {"indices_or_sections": (1,)}, [Y[:1], Y[1:]]),
    ("split_one_piece", "nn.split", [Y], {"indices_or_sections": (), "axis": 2}, [Y]),
    ("strided_slice_end", "nn.strided_slice", [Y], {"begin": (0, 1), "end": (2, 100), "strides": (1, 2)},
     [Y[0:2, 1::2]]),
    ("strided_slice_negative", "nn.strided_slice", [Y],
     {"begin": (-1, 3), "end": (-6, 0), "strides": (-1, -2), "axes": (1, 2)}, [Y[:, 4::-1, 3:0:-2]]),
    ("strided_slice_size_mode", "nn.strided_slice", [Y],
     {"begin": (1, -2), "end": (-1, 2), "slice_mode": "size", "axes": (2, 1)}, [Y[:, 3:5, 1:]]),
    ("take_axis1_clip", "nn.take", [Y, np.array([[4, 0], [-3, 9]])], {"axis": 1}, [Y[:, [[4, 0], [0, 4]]]]),
    ("take_wrap", "nn.take", [Y, np.array([4, -1, 7])], {"axis": 2, "mode": "wrap"}, [Y[:, :, [0, 3, 3]]]),
    ("take_flat_scalar", "nn.take", [Y, np.array(7, dtype=np.int32)], {}, [Y.reshape(-1)[7]]),
    ("take_fast", "nn.take", [Y, np.array([1, 0])], {"axis": 0, "mode": "fast"}, [Y[[1, 0]]]),
    ("pad_constant", "nn.pad", [X], {"pad_width": (0, 0, 1, 2, 3, 0), "pad_value": 1.5},
     [np.pad(X, ((0, 0), (1, 2), (3, 0)), constant_values=1.5)]),
    ("pad_reflect", "nn.pad", [X], {"pad_width": (0, 1, 2, 2, 3, 3), "pad_mode": "reflect"},
     [np.pad(X, ((0, 1), (2, 2), (3, 3)), mode="reflect")]),
    ("pad_edge", "nn.pad", [X], {"pad_width": (1, 0, 0, 4, 2, 5), "pad_mode": "edge"},
     [np.pad(X, ((1, 0), (0, 4), (2, 5)), mode="edge")]),
    ("broadcast_to", "nn.broadcast_to", [X[:, :1]], {"shape": (3, 2, 5, 4)}, [np.broadcast_to(X[:, :1], (3, 2, 5, 4))]),
    ("squeeze_all", "nn.squeeze", [X.reshape(1, 2, 1, 3, 4, 1)], {}, [X]),
    ("squeeze_axes", "nn.squeeze", [X.reshape(1, 2, 1, 3, 4, 1)], {"axis": (2, -1)}, [X.reshape(1, 2, 3, 4)]),
    ("squeeze_to_scalar", "nn.squeeze", [np.full((1, 1), 3.0, np.float32)], {}, [np.array(3.0)]),
    ("batch_matmul", "nn.batch_matmul", [X, Y], {}, [np.einsum("bmk,bnk->bmn", X, Y)]),
    ("batch_matmul_transposes_broadcast", "nn.batch_matmul",
     [X[:1].transpose(0, 2, 1).copy(), Y.transpose(0, 2, 1).copy()], {"transpose_a": True, "transpose_b": False},
     [np.einsum("mk,bnk->bmn", X[0], Y)]),
    ("global_max_pool2d", "nn.global_max_pool2d", [Z], {}, [Z.max(axis=(2, 3), keepdims=True)]),
    ("global_max_pool2d_nhwc", "nn.global_max_pool2d", [Z], {"layout": "NHWC"}, [Z.max(axis=(1, 2), keepdims=True)]),
]
IDS = [c[0] for c in CASES]


def as_list(result) -> list:
    return list(result) if isinstance(result, list) else [result]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kernel_matches_numpy(case):
    _, op_name, arrays, attrs, expected = case
    op = single_op_module(op_name, arrays, attrs).body.block.ops.first.body.block.ops.first
    out = KERNELS[type(op)](op.attrs(), *arrays)
    out = list(out) if isinstance(out, tuple) else [out]
    assert len(out) == len(expected)
    for actual, want, result in zip(out, expected, op.results):
        assert actual.shape == tuple(result.type.get_shape()) == np.shape(want)
        np.testing.assert_allclose(actual, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("level", ["nn", "linalg", "memref", "loops"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_level_matches_numpy(case, level):
    _, op_name, arrays, attrs, expected = case
    module = single_op_module(op_name, arrays, attrs)
    if level != "nn":
        module = lower(module, to=level)
        module.verify()
    out = as_list(run(module, {f"a{i}": a for i, a in enumerate(arrays)}))
    for actual, want in zip(out, expected, strict=True):
        np.testing.assert_allclose(actual, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fold_constant_folds_it(case):
    _, op_name, arrays, attrs, expected = case
    module = passes.FoldConstant()(single_op_module(op_name, arrays, attrs, constants=True))
    ops = list(module.body.block.ops.first.body.block.ops)
    assert [o.name for o in ops] == ["nn.constant"] * len(expected) + ["func.return"]
    for const, want in zip(ops, expected):
        np.testing.assert_allclose(const.numpy(), want, rtol=1e-6, atol=1e-6)


# Two NCHW convolutions feeding every data-movement op with a layout rule (and take, which has none).
LAYOUT_MODEL = """
func.func @main(%x: tensor<1x2x4x4xf32>, %w1: tensor<3x2x1x1xf32>, %w2: tensor<2x2x1x1xf32>, %i: tensor<2xi64>) -> (tensor<1x5x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x5x5x7xf32>, tensor<1x2x4x4xf32>, tensor<1x5x1x1xf32>, tensor<1x2x4x4xf32>) {
  %a = nn.conv2d(%x, %w1) : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %b = nn.conv2d(%x, %w2) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.concatenate(%a, %b) {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x5x4x4xf32>
  %s:2 = nn.split(%c) {indices_or_sections = array<i64: 2>, axis = -3 : i64} : (tensor<1x5x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>)
  %p = nn.pad(%c) {pad_width = array<i64: 0, 0, 0, 0, 1, 0, 1, 2>, pad_mode = "edge"} : (tensor<1x5x4x4xf32>) -> tensor<1x5x5x7xf32>
  %t = nn.strided_slice(%c) {begin = array<i64: 0, 3>, end = array<i64: 1, 0>, strides = array<i64: 1, -2>} : (tensor<1x5x4x4xf32>) -> tensor<1x2x4x4xf32>
  %g = nn.global_max_pool2d(%c) : (tensor<1x5x4x4xf32>) -> tensor<1x5x1x1xf32>
  %k = nn.take(%c, %i) {axis = 1 : i64} : (tensor<1x5x4x4xf32>, tensor<2xi64>) -> tensor<1x2x4x4xf32>
  func.return %c, %s#0, %s#1, %p, %t, %g, %k : tensor<1x5x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x5x5x7xf32>, tensor<1x2x4x4xf32>, tensor<1x5x1x1xf32>, tensor<1x2x4x4xf32>
}
"""


def test_convert_layout_renumbers_instead_of_transforming_back():
    module = Parser(make_context(), LAYOUT_MODEL).parse_module()
    inputs = {"x": RNG.standard_normal((1, 2, 4, 4)), "w1": RNG.standard_normal((3, 2, 1, 1)),
              "w2": RNG.standard_normal((2, 2, 1, 1)), "i": np.array([4, 1])}
    before = run(module, inputs)
    with PassContext(opt_level=3):
        converted = ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]})(module)
    ops = {op.name: op for op in converted.walk()}
    assert ops["nn.concatenate"].attrs()["axis"] == 3
    assert all(v.owner.name == "nn.conv2d" for v in ops["nn.concatenate"].operands)  # no transform between
    assert ops["nn.split"].attrs()["axis"] == 3
    assert ops["nn.pad"].attrs()["pad_width"] == (0, 0, 1, 0, 1, 2, 0, 0)
    assert ops["nn.strided_slice"].attrs()["axes"] == (0, 3)
    assert ops["nn.global_max_pool2d"].attrs()["layout"] == "NHWC"
    assert ops["nn.take"].operands[0].owner.name == "nn.layout_transform"  # layout-sensitive: back to NCHW
    for want, got in zip(before, run(converted, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # Converting back to NCHW leaves no transform between the data-movement ops and the convs.
    with PassContext(opt_level=3):
        back = ConvertLayout({"nn.conv2d": ["NCHW", "OIHW"]})(converted)
    assert not [op for op in back.walk() if op.name == "nn.layout_transform"]
    for want, got in zip(before, run(back, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_builders_check_operand_counts_and_kinds():
    x = Block(arg_types=[TensorType(f32, (2, 3)), TensorType(f32, (3,))]).args
    with pytest.raises(TypeError, match="nn.concatenate takes one or more 'data' operands, got none"):
        nn.ConcatenateOp(axis=0)
    with pytest.raises(TypeError, match="nn.take takes 2 operands"):
        nn.TakeOp(x[0])
    with pytest.raises(nn.ShapeError, match="nn.take: operand 'indices' must have an integer element type, got f32"):
        nn.TakeOp(x[0], x[1])
    op = nn.SplitOp(x[0], indices_or_sections=(1, 2), axis=1)
    assert [tuple(r.type.get_shape()) for r in op.results] == [(2, 1), (2, 1), (2, 1)]
    # strided_slice's strides are one per sliced axis, not Relay's 2-D window shorthand.
    assert nn.StridedSliceOp(x[0], begin=(0,), end=(3,), strides=(2,), axes=(1,)).attrs()["strides"] == (2,)
