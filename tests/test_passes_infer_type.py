"""InferType: re-typing nn ops from their operands, function signatures, and its errors."""

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import FunctionType, TensorType, f32
from xdsl.rewriter import Rewriter

from tool_passes import PassNames

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.frontend import tiny
from xrelay.passes.infer_type import TypeInferenceError, infer_types
from module_builder import make_module


def t(*shape):
    return TensorType(f32, shape)




def test_pass_info_and_unchanged_module():
    mod, _ = tiny.get_workload()
    assert passes.InferType().info == transform.PassInfo("InferType", 0, ())
    names = PassNames()
    with transform.PassContext(instruments=[names]):
        out = passes.InferType()(mod)
    assert names.events == ["InferType"]
    assert str(out) == str(mod)


def test_stale_result_types_are_recomputed_in_order():
    def body(args, emit):
        pool = emit(nn.MaxPool2DOp(args[0], pool_size=(2, 2), strides=(2, 2)))
        return [emit(nn.ReluOp(pool))]

    mod = make_module([(1, 2, 4, 4)], body)
    pool_op, relu_op, _ = list(mod.body.block.ops)[0].body.block.ops
    # Make both stored types stale (what a careless rewrite would leave behind).
    Rewriter.replace_value_with_new_type(pool_op.results[0], t(1, 2, 4, 4))
    Rewriter.replace_value_with_new_type(relu_op.results[0], t(1, 2, 9, 9))
    infer_types(mod)
    assert pool_op.results[0].type == t(1, 2, 2, 2)
    assert relu_op.results[0].type == t(1, 2, 2, 2)
    mod.verify()


def test_function_inputs_follow_block_arguments():
    mod = make_module([(2, 3)], lambda args, emit: [emit(nn.ReluOp(args[0]))])
    main = list(mod.body.block.ops)[0]
    arg = main.body.block.args[0]
    relu = main.body.block.first_op
    Rewriter.replace_value_with_new_type(arg, t(3, 2))
    with pytest.raises(TypeInferenceError) as err:
        infer_types(mod)
    # The input is re-typed from the block argument; the body then returns 3x2 where 2x3 is declared.
    assert list(main.function_type.inputs.data) == [t(3, 2)]
    assert relu.results[0].type == t(3, 2)
    message = str(err.value)
    assert "func.return in @main" in message
    assert "tensor<3x2xf32>" in message and "tensor<2x3xf32>" in message


def test_shape_error_names_the_op():
    def body(args, emit):
        return [emit(nn.DenseOp(args[0], args[1]))]

    mod = make_module([(1, 4), (3, 4)], body)
    main = list(mod.body.block.ops)[0]
    Rewriter.replace_value_with_new_type(main.body.block.args[1], t(3, 5))
    with pytest.raises(TypeInferenceError, match=r"InferType: nn.dense: .*'data'.*'weight'"):
        infer_types(mod)


def test_foreign_op_that_rejects_new_operand_types_is_reported():
    def body(args, emit):
        flat = emit(nn.ReshapeOp(args[0], newshape=(4, 1)))
        return [emit(arith.AddfOp(flat, flat))]

    mod = make_module([(1, 4)], body)
    reshape = list(mod.body.block.ops)[0].body.block.first_op
    reshape.attributes["newshape"] = nn.ReshapeOp(reshape.operands[0], newshape=(2, 2)).attributes["newshape"]
    with pytest.raises(TypeInferenceError, match=r"arith.addf does not accept its re-inferred operand types"):
        infer_types(mod)


def test_batch_norm_three_results_retyped():
    def body(args, emit):
        out, mean, var = emit(nn.BatchNormOp(*args))
        return [out, var]

    mod = make_module([(1, 3, 2, 2), (3,), (3,), (3,), (3,)], body)
    bn = list(mod.body.block.ops)[0].body.block.first_op
    for r in bn.results:
        Rewriter.replace_value_with_new_type(r, t(7))
    infer_types(mod)
    assert [r.type for r in bn.results] == [t(1, 3, 2, 2), t(3), t(3)]


def test_pass_copies_only_when_something_changes():
    mod = make_module([(1, 2, 4, 4)], lambda args, emit: [emit(nn.ReluOp(args[0]))])
    with transform.PassContext():
        assert passes.InferType()(mod) is mod  # nothing to re-type: no copy
    relu = list(mod.body.block.ops)[0].body.block.first_op
    Rewriter.replace_value_with_new_type(relu.results[0], t(1, 2, 9, 9))
    main = list(mod.body.block.ops)[0]
    main.function_type = FunctionType.from_lists([t(1, 2, 4, 4)], [t(1, 2, 9, 9)])
    with pytest.raises(TypeInferenceError):  # the body now returns 1x2x4x4 where 1x2x9x9 is declared
        passes.InferType()(mod)
    assert relu.results[0].type == t(1, 2, 9, 9)  # the module InferType received is unchanged
