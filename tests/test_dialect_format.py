"""Assembly formats of the nn dialect: custom and generic round trips, verifier errors from text."""

import io

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from xrelay.dialects import make_context, nn


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def generic(op) -> str:
    out = io.StringIO()
    Printer(out, print_generic_format=True).print_op(op)
    return out.getvalue()


def small_model() -> ModuleOp:
    """conv -> bn -> relu -> pool -> dense -> softmax with named arguments and constants."""
    data_t, w_t = TensorType(f32, (1, 3, 224, 224)), TensorType(f32, (64, 3, 7, 7))
    block = Block(arg_types=[data_t, w_t])
    block.args[0].name_hint, block.args[1].name_hint = "data", "conv0_weight"
    rng = np.random.default_rng(0)
    gamma = nn.ConstantOp(rng.standard_normal(64).astype(np.float32))
    conv = nn.Conv2DOp(*block.args, strides=(2, 2), padding=(3, 3, 3, 3), channels=64, kernel_size=(7, 7))
    bn = nn.BatchNormOp(conv, gamma, gamma, gamma, gamma, epsilon=2e-5)
    relu = nn.ReluOp(bn.results[0])
    pool = nn.MaxPool2DOp(relu, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), layout="NCHW")
    gap = nn.GlobalAvgPool2DOp(pool)
    flat = nn.BatchFlattenOp(gap)
    weight = nn.ConstantOp(rng.standard_normal((10, 64)).astype(np.float32))
    dense = nn.DenseOp(flat, weight, units=10)
    bias = nn.ConstantOp(np.arange(10, dtype=np.float32))
    add = nn.BiasAddOp(dense, bias, axis=-1)
    soft = nn.SoftmaxOp(add)
    lt = nn.LayoutTransformOp(conv, src_layout="NCHW", dst_layout="NHWC")
    rs = nn.ReshapeOp(lt, newshape=(0, -1))
    ops = [gamma, conv, bn, relu, pool, gap, flat, weight, dense, bias, add, soft, lt, rs, func.ReturnOp(soft)]
    block.add_ops(ops)
    main = func.FuncOp("main", ([data_t, w_t], [soft.results[0].type]), Region(block))
    module = ModuleOp([main])
    module.verify()
    return module


def test_conv2d_prints_the_contract_line():
    text = str(small_model())
    assert (
        "%0 = nn.conv2d(%data, %conv0_weight) {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>, "
        "channels = 64 : i64, kernel_size = array<i64: 7, 7>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) "
        "-> tensor<1x64x112x112xf32>"
    ) in text.replace("%1 = nn.conv2d", "%0 = nn.conv2d")


def test_function_arguments_keep_their_names():
    text = str(small_model())
    assert "func.func @main(%data: tensor<1x3x224x224xf32>, %conv0_weight: tensor<64x3x7x7xf32>)" in text
    reparsed = parse(text)
    args = reparsed.body.block.ops.first.body.block.args
    assert [a.name_hint for a in args] == ["data", "conv0_weight"]


def test_batch_norm_prints_three_result_types():
    text = str(small_model())
    assert (
        "%2, %3, %4 = nn.batch_norm(%1, %0, %0, %0, %0) {epsilon = 2.000000e-05 : f64} : "
        "(tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> "
        "(tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>)"
    ) in text


def test_custom_form_round_trips():
    module = small_model()
    text = str(module)
    reparsed = parse(text)
    reparsed.verify()
    assert str(reparsed) == text
    assert reparsed.is_structurally_equivalent(module)


def test_generic_form_round_trips():
    module = small_model()
    text = generic(module)
    assert '"nn.conv2d"(%data, %conv0_weight)' in text
    reparsed = parse(text)
    reparsed.verify()
    assert reparsed.is_structurally_equivalent(module)
    assert str(reparsed) == str(module)


def test_parsed_ops_answer_attrs():
    module = parse(str(small_model()))
    ops = {op.name: op for op in module.walk()}
    assert ops["nn.max_pool2d"].attrs()["padding"] == (1, 1, 1, 1)
    assert ops["nn.bias_add"].attrs() == {"axis": -1}
    assert ops["nn.layout_transform"].attrs() == {"src_layout": "NCHW", "dst_layout": "NHWC"}
    assert ops["nn.reshape"].attrs() == {"newshape": (0, -1)}
    np.testing.assert_array_equal(
        [op for op in module.walk() if isinstance(op, nn.ConstantOp)][2].numpy(), np.arange(10)
    )


def test_hex_constant_parses_back_bit_exact():
    array = np.random.default_rng(1).standard_normal((3, 5, 7)).astype(np.float32)
    array[0, 0, 0] = np.nan
    array[0, 0, 1] = -0.0
    text = f"%c = {str(nn.ConstantOp(array)).split('= ', 1)[1]}"
    op = parse(f"func.func @f() {{\n  {text}\n  func.return\n}}").body.block.ops.first.body.block.ops.first
    assert op.numpy().tobytes() == array.tobytes()


MODULE_TEMPLATE = """
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {{
  %0 = {op}
  func.return
}}
"""


@pytest.mark.parametrize(
    "op, message",
    [
        (
            "nn.conv2d(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>",
            r"nn.conv2d: result types \(tensor<1x4x8x8xf32>\) differ from the inferred \(tensor<1x4x6x6xf32>\) "
            r"for operand types \(tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>\)",
        ),
        (
            "nn.conv2d(%x, %w) {groups = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>",
            r"nn.conv2d: groups=2 must divide input channels 3 of 'data' \[1, 3, 8, 8\]",
        ),
        (
            "nn.add(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>",
            r"nn.add: 'lhs' \[1, 3, 8, 8\] and 'rhs' \[4, 3, 3, 3\] do not broadcast",
        ),
        ("nn.relu(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf16>", "nn.relu: result types"),
    ],
)
def test_verifier_errors_from_text(op, message):
    module = parse(MODULE_TEMPLATE.format(op=op))
    with pytest.raises(VerifyException, match=message):
        module.verify()


def test_wrong_attribute_kind_is_a_parse_error_naming_the_attribute():
    text = MODULE_TEMPLATE.format(
        op="nn.conv2d(%x, %w) {strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>"
    )
    with pytest.raises(ParseError, match=r"nn.conv2d: attribute 'strides' must be array<i64: ...>"):
        parse(text)


def test_missing_required_attribute_is_a_parse_error():
    text = MODULE_TEMPLATE.format(op="nn.reshape(%x) : (tensor<1x3x8x8xf32>) -> tensor<192xf32>")
    with pytest.raises(ParseError, match="nn.reshape: required attribute 'newshape' is missing"):
        parse(text)


def test_operand_and_type_counts_must_agree():
    text = MODULE_TEMPLATE.format(op="nn.relu(%x) : (tensor<1x3x8x8xf32>, tensor<1xf32>) -> tensor<1x3x8x8xf32>")
    with pytest.raises(ParseError, match="nn.relu: expected 1 operand type"):
        parse(text)


def test_large_constants_round_trip_as_hex():
    """Bound ResNet-18 holds 11.7M floats: they print as hex and parse back bit for bit.

    (How fast is measured by benchmarks/instrument_overhead.py, not asserted here.)"""
    rng = np.random.default_rng(0)
    consts = [nn.ConstantOp(rng.standard_normal(n).astype(np.float32)) for n in (2_359_296,) * 4 + (2_300_000,)]
    block = Block()
    block.add_ops([*consts, func.ReturnOp()])
    module = ModuleOp([func.FuncOp("main", ([], []), Region(block))])
    text = str(module)
    assert 'dense<"0x' in text
    reparsed = parse(text)
    for const, back in zip(consts, reparsed.body.block.ops.first.body.block.ops):
        assert back.numpy().tobytes() == const.numpy().tobytes()


def test_short_padding_written_in_ir_reads_as_four_values():
    text = MODULE_TEMPLATE.format(
        op="nn.conv2d(%x, %w) {padding = array<i64: 1, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x10xf32>"
    )
    module = parse(text)
    module.verify()
    conv = next(op for op in module.walk() if isinstance(op, nn.Conv2DOp))
    assert conv.attrs()["padding"] == (1, 2, 1, 2)


def test_three_value_padding_in_ir_fails_verification():
    text = MODULE_TEMPLATE.format(
        op="nn.max_pool2d(%x) {padding = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>"
    )
    with pytest.raises(VerifyException, match="padding must have 1, 2 or 4 values"):
        parse(text).verify()


def _parse_constant(literal: str):
    module = parse(f"func.func @f() {{\n  %c = nn.constant {literal}\n  func.return\n}}")
    return module.body.block.ops.first.body.block.ops.first


def test_hex_splat_and_hex_with_other_element_types():
    # 0x0000C03F is 1.5 in little-endian f32; one element in hex is a splat, as in MLIR.
    np.testing.assert_array_equal(_parse_constant('dense<"0x0000C03F"> : tensor<2x3xf32>').numpy(), np.full((2, 3), 1.5))
    np.testing.assert_array_equal(
        _parse_constant('dense<"0x0100000000000000FEFFFFFFFFFFFFFF"> : tensor<2xi64>').numpy(), [1, -2]
    )


@pytest.mark.parametrize(
    "literal, message",
    [
        ('dense<"0x0000C03F0000"> : tensor<2xf32>', "hex payload holds 1 elements, tensor<2xf32> needs 2"),
        ('dense<"0xZZ00C03F"> : tensor<1xf32>', "malformed hex payload"),
        ('dense<"0x0000C03F"> : vector<1xf32>', "expects a tensor type"),
        ("dense<[1, 2]> : vector<2xi32>", "expects a dense tensor attribute"),
    ],
)
def test_bad_constant_literals_are_parse_errors(literal, message):
    with pytest.raises(ParseError, match=message):
        _parse_constant(literal)
