"""Result-type inference of every nn op against hand-computed Relay shapes."""

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f16, f32
from xdsl.ir import Block

from xrelay.dialects import nn
from xrelay.dialects.nn import ShapeError


def args(*shapes, element=f32):
    """Block arguments of the given tensor shapes (stand-ins for SSA values)."""
    return Block(arg_types=[TensorType(element, s) for s in shapes]).args


def shape(op, index=0):
    return tuple(op.results[index].type.get_shape())


# --- conv2d ------------------------------------------------------------------------------


def test_conv2d_nchw_resnet_stem():
    x, w = args((1, 3, 224, 224), (64, 3, 7, 7))
    op = nn.Conv2DOp(x, w, strides=(2, 2), padding=(3, 3, 3, 3), channels=64, kernel_size=(7, 7))
    # (224 + 3 + 3 - 7) // 2 + 1 = 112
    assert shape(op) == (1, 64, 112, 112)


def test_conv2d_nhwc_hwio():
    x, w = args((1, 224, 224, 3), (7, 7, 3, 64))
    op = nn.Conv2DOp(x, w, strides=(2, 2), padding=(3, 3), data_layout="NHWC", kernel_layout="HWIO")
    assert shape(op) == (1, 112, 112, 64)


def test_conv2d_nhwc_ohwi():
    x, w = args((2, 16, 16, 8), (4, 3, 3, 8))
    op = nn.Conv2DOp(x, w, data_layout="NHWC", kernel_layout="OHWI")
    assert shape(op) == (2, 14, 14, 4)


def test_conv2d_out_layout_differs_from_data_layout():
    x, w = args((1, 3, 10, 10), (5, 3, 3, 3))
    op = nn.Conv2DOp(x, w, out_layout="NHWC")
    assert shape(op) == (1, 8, 8, 5)


def test_conv2d_depthwise_groups():
    x, w = args((1, 32, 10, 10), (32, 1, 3, 3))
    assert shape(nn.Conv2DOp(x, w, groups=32, padding=(1, 1))) == (1, 32, 10, 10)


def test_conv2d_grouped():
    x, w = args((1, 32, 10, 10), (16, 8, 3, 3))
    assert shape(nn.Conv2DOp(x, w, groups=4)) == (1, 16, 8, 8)


def test_conv2d_dilation():
    x, w = args((1, 1, 10, 10), (1, 1, 3, 3))
    # dilated extent 2 * (3 - 1) + 1 = 5 -> 10 - 5 + 1 = 6
    assert shape(nn.Conv2DOp(x, w, dilation=(2, 2))) == (1, 1, 6, 6)
    assert shape(nn.Conv2DOp(x, w, dilation=(1, 3))) == (1, 1, 8, 4)


def test_conv2d_asymmetric_padding_is_top_left_bottom_right():
    x, w = args((1, 1, 10, 10), (1, 1, 3, 3))
    op = nn.Conv2DOp(x, w, padding=(1, 2, 3, 4))
    # H: 10 + 1 + 3 - 3 + 1 = 12, W: 10 + 2 + 4 - 3 + 1 = 14
    assert shape(op) == (1, 1, 12, 14)


@pytest.mark.parametrize(
    "given, stored",
    [((1,), (1, 1, 1, 1)), (1, (1, 1, 1, 1)), ((1, 2), (1, 2, 1, 2)), ((1, 2, 3, 4), (1, 2, 3, 4))],
)
def test_conv2d_padding_forms_normalise_to_four(given, stored):
    x, w = args((1, 1, 10, 10), (1, 1, 3, 3))
    assert nn.Conv2DOp(x, w, padding=given).attrs()["padding"] == stored


def test_conv2d_strides():
    x, w = args((1, 64, 56, 56), (128, 64, 1, 1))
    assert shape(nn.Conv2DOp(x, w, strides=(2, 2))) == (1, 128, 28, 28)


def test_conv2d_f16_element_type_propagates():
    x, w = args((1, 3, 8, 8), (4, 3, 3, 3), element=f16)
    assert nn.Conv2DOp(x, w).results[0].type == TensorType(f16, (1, 4, 6, 6))


# --- pools -------------------------------------------------------------------------------


def test_max_pool2d_resnet():
    (x,) = args((1, 64, 112, 112))
    # (112 + 2 - 3) // 2 + 1 = 56
    assert shape(nn.MaxPool2DOp(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))) == (1, 64, 56, 56)


def test_max_pool2d_nhwc():
    (x,) = args((1, 112, 112, 64))
    op = nn.MaxPool2DOp(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), layout="NHWC")
    assert shape(op) == (1, 56, 56, 64)


def test_pool_ceil_mode():
    (x,) = args((1, 1, 6, 6))
    # floor((6 - 3) / 2) + 1 = 2, ceil((6 - 3) / 2) + 1 = 3
    assert shape(nn.MaxPool2DOp(x, pool_size=(3, 3), strides=(2, 2))) == (1, 1, 2, 2)
    assert shape(nn.MaxPool2DOp(x, pool_size=(3, 3), strides=(2, 2), ceil_mode=True)) == (1, 1, 3, 3)
    assert shape(nn.AvgPool2DOp(x, pool_size=(3, 3), strides=(2, 2), ceil_mode=True)) == (1, 1, 3, 3)


def test_pool_int_pool_size_and_dilation():
    (x,) = args((1, 2, 9, 9))
    op = nn.AvgPool2DOp(x, pool_size=2, dilation=(2, 2), count_include_pad=True)
    # extent 3 -> 9 - 3 + 1 = 7
    assert shape(op) == (1, 2, 7, 7)
    assert op.attrs()["pool_size"] == (2, 2)
    assert op.attrs()["count_include_pad"] is True


def test_global_avg_pool2d_both_layouts():
    (x, y) = args((1, 512, 7, 7), (1, 7, 7, 512))
    assert shape(nn.GlobalAvgPool2DOp(x)) == (1, 512, 1, 1)
    assert shape(nn.GlobalAvgPool2DOp(y, layout="NHWC")) == (1, 1, 1, 512)


# --- the rest ----------------------------------------------------------------------------


def test_batch_flatten():
    (x, y) = args((1, 512, 1, 1), (2, 3, 4, 5))
    assert shape(nn.BatchFlattenOp(x)) == (1, 512)
    assert shape(nn.BatchFlattenOp(y)) == (2, 60)


def test_dense():
    x, w, y = args((1, 512), (1000, 512), (2, 3, 8))
    assert shape(nn.DenseOp(x, w, units=1000)) == (1, 1000)
    (w2,) = args((4, 8))
    assert shape(nn.DenseOp(y, w2)) == (2, 3, 4)


def test_bias_add_axes():
    x, b, y = args((1, 64, 8, 8), (64,), (1, 8, 8, 64))
    assert shape(nn.BiasAddOp(x, b)) == (1, 64, 8, 8)
    assert shape(nn.BiasAddOp(y, b, axis=-1)) == (1, 8, 8, 64)
    assert shape(nn.BiasAddOp(y, b, axis=3)) == (1, 8, 8, 64)


def test_batch_norm_three_results():
    x, g = args((1, 64, 8, 8), (64,))
    op = nn.BatchNormOp(x, g, g, g, g, epsilon=2e-5, scale=False)
    assert [shape(op, i) for i in range(3)] == [(1, 64, 8, 8), (64,), (64,)]
    assert op.attrs() == {"axis": 1, "epsilon": 2e-5, "center": True, "scale": False}


def test_batch_norm_nhwc_axis():
    x, g = args((1, 8, 8, 64), (64,))
    op = nn.BatchNormOp(x, g, g, g, g, axis=3)
    assert [shape(op, i) for i in range(3)] == [(1, 8, 8, 64), (64,), (64,)]


@pytest.mark.parametrize("cls", [nn.ReluOp, nn.SqrtOp, nn.NegativeOp, nn.SoftmaxOp])
def test_unary_keeps_shape(cls):
    (x,) = args((2, 5, 3))
    assert shape(cls(x)) == (2, 5, 3)


@pytest.mark.parametrize("cls", [nn.AddOp, nn.SubtractOp, nn.MultiplyOp, nn.DivideOp])
@pytest.mark.parametrize(
    "lhs, rhs, out",
    [
        ((1, 64, 56, 56), (64, 1, 1), (1, 64, 56, 56)),
        ((3, 1), (1, 4), (3, 4)),
        ((5,), (2, 1, 5), (2, 1, 5)),
        ((), (2, 3), (2, 3)),
    ],
)
def test_binary_broadcasting(cls, lhs, rhs, out):
    a, b = args(lhs, rhs)
    assert shape(cls(a, b)) == out
    assert out == np.broadcast_shapes(lhs, rhs)


def test_expand_dims():
    x, y = args((64,), (2, 3))
    assert shape(nn.ExpandDimsOp(x, axis=1, num_newaxis=2)) == (64, 1, 1)
    assert shape(nn.ExpandDimsOp(y, axis=-1)) == (2, 3, 1)
    assert shape(nn.ExpandDimsOp(y, axis=0)) == (1, 2, 3)
    assert shape(nn.ExpandDimsOp(y, axis=-3)) == (1, 2, 3)


@pytest.mark.parametrize(
    "newshape, out",
    [((0, -1), (2, 12)), ((-1,), (24,)), ((4, 0, 2), (4, 3, 2)), ((2, -1, 2), (2, 6, 2)), ((24,), (24,))],
)
def test_reshape_codes(newshape, out):
    (x,) = args((2, 3, 4))
    assert shape(nn.ReshapeOp(x, newshape=newshape)) == out


def test_transpose():
    (x,) = args((1, 64, 56, 32))
    assert shape(nn.TransposeOp(x)) == (32, 56, 64, 1)
    assert shape(nn.TransposeOp(x, axes=(0, 2, 3, 1))) == (1, 56, 32, 64)
    assert shape(nn.TransposeOp(x, axes=(0, -2, -1, 1))) == (1, 56, 32, 64)
    assert nn.TransposeOp(x).attrs() == {"axes": None}


@pytest.mark.parametrize(
    "src, dst, in_shape, out",
    [
        ("NCHW", "NHWC", (1, 64, 56, 32), (1, 56, 32, 64)),
        ("NHWC", "NCHW", (1, 56, 32, 64), (1, 64, 56, 32)),
        ("OIHW", "HWIO", (64, 3, 7, 5), (7, 5, 3, 64)),
        ("OIHW", "OHWI", (64, 3, 7, 5), (64, 7, 5, 3)),
        ("HWIO", "OIHW", (7, 5, 3, 64), (64, 3, 7, 5)),
        ("C", "C", (8,), (8,)),
    ],
)
def test_layout_transform(src, dst, in_shape, out):
    (x,) = args(in_shape)
    assert shape(nn.LayoutTransformOp(x, src_layout=src, dst_layout=dst)) == out


# --- shared interface ----------------------------------------------------------------------


def test_defaults_filled_in_attrs_but_absent_from_ir():
    x, w = args((1, 3, 8, 8), (4, 3, 3, 3))
    op = nn.Conv2DOp(x, w, strides=(1, 1), channels=4)
    assert set(op.attributes) == {"channels"}
    assert op.attrs() == {
        "strides": (1, 1),
        "padding": (0, 0, 0, 0),
        "dilation": (1, 1),
        "groups": 1,
        "channels": 4,
        "kernel_size": None,
        "data_layout": "NCHW",
        "kernel_layout": "OIHW",
        "out_layout": "",
    }


def test_pool_and_softmax_defaults():
    (x,) = args((1, 2, 4, 4))
    assert nn.MaxPool2DOp(x).attrs() == {
        "pool_size": (1, 1),
        "strides": (1, 1),
        "dilation": (1, 1),
        "padding": (0, 0, 0, 0),
        "layout": "NCHW",
        "ceil_mode": False,
    }
    assert nn.SoftmaxOp(x).attrs() == {"axis": -1}
    assert nn.DenseOp(*args((2, 3), (4, 3))).attrs() == {"units": None}


def test_attribute_ir_kinds():
    (x, g) = args((1, 4, 2, 2), (4,))
    op = nn.BatchNormOp(x, g, g, g, g, epsilon=1, center=False, axis=1)
    assert str(op.attributes["epsilon"]) == "1.000000e+00 : f64"
    assert str(op.attributes["center"]) == "false"
    conv = nn.Conv2DOp(*args((1, 4, 5, 5), (4, 1, 3, 3)), groups=4, strides=(2, 2))
    assert str(conv.attributes["groups"]) == "4 : i64"
    assert str(conv.attributes["strides"]) == "array<i64: 2, 2>"


def test_infer_result_types_follows_operand_changes():
    x, w, x2 = args((1, 3, 8, 8), (4, 3, 3, 3), (1, 3, 16, 16))
    op = nn.Conv2DOp(x, w)
    op.operands[0] = x2
    assert op.infer_result_types() == [TensorType(f32, (1, 4, 14, 14))]


def test_make_builds_by_name():
    x, w = args((1, 3, 8, 8), (4, 3, 3, 3))
    op = nn.make("nn.conv2d", [x, w], strides=(2, 2))
    assert isinstance(op, nn.Conv2DOp)
    assert shape(op) == (1, 4, 3, 3)
    const = nn.make("nn.constant", [], value=np.zeros((2, 2), np.float32))
    assert isinstance(const, nn.ConstantOp)
    with pytest.raises(KeyError, match="nn.nonexistent"):
        nn.make("nn.nonexistent", [x])


def test_the_dialect_is_called_nn():
    assert nn.NN.name == "nn"
    assert {op.name for op in nn.NN.operations} == set(nn.OPS)


def test_operation_with_one_result_is_accepted_as_operand():
    (x,) = args((2, 3))
    relu = nn.ReluOp(x)
    assert nn.NegativeOp(relu).operands[0] is relu.results[0]


def test_wrong_operand_count_and_unknown_attribute():
    (x,) = args((2, 3))
    with pytest.raises(TypeError, match="nn.add takes 2 operands"):
        nn.AddOp(x)
    with pytest.raises(TypeError, match="nn.relu has no attribute 'axis'"):
        nn.ReluOp(x, axis=1)
    with pytest.raises(TypeError, match="required attribute 'newshape'"):
        nn.ReshapeOp(x)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: nn.Conv2DOp(*args((1, 3, 8, 8), (4, 2, 3, 3))), r"'weight' \[4, 2, 3, 3\].*'data' \[1, 3, 8, 8\]"),
        (lambda: nn.Conv2DOp(*args((1, 3, 8, 8), (4, 3, 3, 3)), channels=5), "channels=5"),
        (lambda: nn.Conv2DOp(*args((1, 3, 8, 8), (4, 3, 3, 3)), kernel_size=(5, 5)), "kernel_size"),
        (lambda: nn.Conv2DOp(*args((1, 3, 2, 2), (4, 3, 3, 3))), "empty output"),
        (lambda: nn.Conv2DOp(*args((1, 6, 8, 8), (4, 3, 3, 3)), groups=4), "groups=4"),
        (lambda: nn.Conv2DOp(*args((1, 3, 8, 8), (4, 3, 3, 3)), data_layout="NCHX"), "data_layout 'NCHX'"),
        (lambda: nn.Conv2DOp(*args((1, 3, 8), (4, 3, 3, 3))), r"'data' must have rank 4, got shape \[1, 3, 8\]"),
        (lambda: nn.DenseOp(*args((1, 512), (1000, 256))), r"'data' \[1, 512\].*'weight' \[1000, 256\]"),
        (lambda: nn.BiasAddOp(*args((1, 64, 8, 8), (32,))), r"'bias' \[32\]"),
        (lambda: nn.AddOp(*args((2, 3), (4, 3))), r"'lhs' \[2, 3\] and 'rhs' \[4, 3\] do not broadcast"),
        (lambda: nn.ReshapeOp(*args((2, 3)), newshape=(4, 2)), "cannot reshape"),
        (lambda: nn.ReshapeOp(*args((2, 3)), newshape=(-1, -1)), "more than one -1"),
        (lambda: nn.TransposeOp(*args((2, 3)), axes=(0, 0)), "not a permutation"),
        (lambda: nn.LayoutTransformOp(*args((2, 3, 4, 5)), src_layout="NCHW", dst_layout="NHWD"), "NHWD"),
        (lambda: nn.SoftmaxOp(*args((2, 3)), axis=2), "axis 2 out of range"),
        (lambda: nn.ExpandDimsOp(*args((2, 3)), axis=4), "axis 4 out of range"),
        (lambda: nn.BatchNormOp(*args((1, 4, 2, 2), (4,), (4,), (3,), (4,))), r"'moving_mean' \[3\]"),
        (lambda: nn.AddOp(*args((2,)), *args((2,), element=f16)), "element type f16 differs"),
    ],
)
def test_shape_errors_name_op_operand_and_shapes(build, message):
    with pytest.raises(ShapeError, match=message) as info:
        build()
    assert str(info.value).startswith("nn.")


def test_zero_stride_and_bad_padding_are_shape_errors():
    x, w = args((1, 1, 8, 8), (1, 1, 3, 3))
    with pytest.raises(ShapeError, match=r"nn.conv2d: strides \(0, 1\) must be 2 positive values"):
        nn.Conv2DOp(x, w, strides=(0, 1))
    with pytest.raises(ShapeError, match=r"nn.max_pool2d: pool_size \(0, 0\) must be 2 positive values"):
        nn.MaxPool2DOp(x, pool_size=0)
    with pytest.raises(ShapeError, match="nn.conv2d: padding must have 1, 2 or 4 values"):
        nn.Conv2DOp(x, w, padding=(1, 2, 3))


def test_attributes_are_stored_in_declaration_order():
    x, w = args((1, 3, 8, 8), (4, 3, 3, 3))
    op = nn.Conv2DOp(x, w, kernel_size=(3, 3), padding=1, strides=(2, 2))
    assert list(op.attributes) == ["strides", "padding", "kernel_size"]


def test_numpy_integer_attribute_values():
    x, w = args((1, 3, 8, 8), (4, 3, 3, 3))
    op = nn.Conv2DOp(x, w, padding=np.int64(1), strides=np.array([2, 2]), groups=np.int32(1), channels=np.int64(4))
    assert op.attrs()["padding"] == (1, 1, 1, 1)
    assert op.attrs()["strides"] == (2, 2)
    assert shape(op) == (1, 4, 4, 4)


@pytest.mark.parametrize(
    "op_name, operand_shapes",
    [
        ("nn.softmax", [(2, 4)]),
        ("nn.batch_norm", [(1, 3, 4, 4), (3,), (3,), (3,), (3,)]),
        ("nn.avg_pool2d", [(1, 3, 4, 4)]),
        ("nn.global_avg_pool2d", [(1, 3, 4, 4)]),
        ("nn.sigmoid", [(2, 3)]),
    ],
)
def test_float_only_ops_reject_integer_tensors(op_name, operand_shapes):
    from xdsl.dialects.builtin import i32

    types = [TensorType(i32, shape) for shape in operand_shapes]
    with pytest.raises(ShapeError, match=f"{op_name}: operand 'data' must have a float element type, got i32"):
        nn.OPS[op_name].infer_types(types, {})
    assert nn.OPS[op_name].infer_types([TensorType(f32, s) for s in operand_shapes], {})
