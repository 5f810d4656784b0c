"""Every nn op, lowered to linalg, memref and loops, gives the nn level's outputs (≤ 1e-4 relative)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from op_levels import LEVELS, single_op_module

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.reference.interpreter import run as run_nn
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops



def run_level(module: ModuleOp, level: str, inputs: dict) -> list[np.ndarray]:
    lowered = lower(module, to=level)
    lowered.verify()
    return (run_loops if level == "loops" else run_linalg)(lowered, inputs)


def as_list(result) -> list[np.ndarray]:
    return list(result) if isinstance(result, list | tuple) else [result]


# (id, op name, operand shapes, attributes, positive inputs?)
CASES = [
    ("conv_nchw_pad", "nn.conv2d", [(1, 3, 6, 6), (4, 3, 3, 3)], {"padding": (1, 1, 1, 1)}, False),
    ("conv_nchw_stride_dil_asym", "nn.conv2d", [(2, 2, 9, 8), (3, 2, 3, 2)],
     {"strides": (2, 1), "dilation": (2, 1), "padding": (1, 2, 0, 1)}, False),
    ("conv_nhwc_hwio", "nn.conv2d", [(1, 6, 6, 3), (3, 3, 3, 4)],
     {"padding": (1, 1, 1, 1), "data_layout": "NHWC", "kernel_layout": "HWIO"}, False),
    ("conv_nhwc_ohwi_stride", "nn.conv2d", [(1, 7, 7, 2), (4, 3, 3, 2)],
     {"strides": (2, 2), "data_layout": "NHWC", "kernel_layout": "OHWI"}, False),
    ("conv_nchw_hwio_generic", "nn.conv2d", [(1, 3, 5, 5), (3, 3, 3, 2)],
     {"padding": (1, 1, 1, 1), "kernel_layout": "HWIO"}, False),
    ("conv_groups_nchw", "nn.conv2d", [(1, 4, 5, 5), (6, 2, 3, 3)], {"groups": 2, "padding": (1, 1, 1, 1)}, False),
    ("conv_depthwise_nhwc", "nn.conv2d", [(1, 5, 5, 3), (3, 3, 1, 3)],
     {"groups": 3, "data_layout": "NHWC", "kernel_layout": "HWIO"}, False),
    ("conv_out_layout", "nn.conv2d", [(1, 2, 4, 4), (3, 2, 1, 1)], {"out_layout": "NHWC"}, False),
    ("batch_norm_axis1", "nn.batch_norm", [(2, 3, 4, 4), (3,), (3,), (3,), (3,)], {"epsilon": 1e-3}, True),
    ("batch_norm_nhwc_noscale", "nn.batch_norm", [(1, 4, 4, 3), (3,), (3,), (3,), (3,)],
     {"axis": 3, "scale": False}, True),
    ("batch_norm_nocenter", "nn.batch_norm", [(1, 3, 2, 2), (3,), (3,), (3,), (3,)], {"center": False}, True),
    ("relu", "nn.relu", [(2, 3, 4)], {}, False),
    ("max_pool_nchw_pad", "nn.max_pool2d", [(1, 3, 7, 7)],
     {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)}, False),
    ("max_pool_nhwc_ceil", "nn.max_pool2d", [(1, 6, 6, 2)],
     {"pool_size": (2, 2), "strides": (2, 2), "padding": (0, 0, 1, 1), "layout": "NHWC", "ceil_mode": True}, False),
    ("avg_pool_exclude_pad", "nn.avg_pool2d", [(1, 2, 5, 5)],
     {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)}, False),
    ("avg_pool_include_pad_ceil", "nn.avg_pool2d", [(1, 2, 6, 6)],
     {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1), "count_include_pad": True,
      "ceil_mode": True}, False),
    ("avg_pool_nhwc", "nn.avg_pool2d", [(1, 4, 4, 3)], {"pool_size": (2, 2), "layout": "NHWC"}, False),
    ("global_avg_pool_nchw", "nn.global_avg_pool2d", [(2, 3, 4, 5)], {}, False),
    ("global_avg_pool_nhwc", "nn.global_avg_pool2d", [(1, 4, 5, 3)], {"layout": "NHWC"}, False),
    ("batch_flatten", "nn.batch_flatten", [(2, 3, 2, 2)], {}, False),
    ("dense", "nn.dense", [(2, 6), (5, 6)], {}, False),
    ("dense_3d", "nn.dense", [(2, 3, 4), (5, 4)], {"units": 5}, False),
    ("bias_add_axis1", "nn.bias_add", [(2, 3, 2, 2), (3,)], {}, False),
    ("bias_add_last", "nn.bias_add", [(2, 5), (5,)], {"axis": -1}, False),
    ("softmax_last", "nn.softmax", [(2, 7)], {}, False),
    ("softmax_axis1", "nn.softmax", [(2, 3, 4)], {"axis": 1}, False),
    ("add_broadcast", "nn.add", [(2, 3, 4, 4), (3, 1, 1)], {}, False),
    ("subtract_both_broadcast", "nn.subtract", [(2, 1, 4), (3, 1)], {}, False),
    ("multiply_scalar", "nn.multiply", [(2, 3), (1,)], {}, False),
    ("divide", "nn.divide", [(2, 3), (2, 3)], {}, True),
    ("sqrt", "nn.sqrt", [(3, 4)], {}, True),
    ("negative", "nn.negative", [(3, 4)], {}, False),
    ("sigmoid", "nn.sigmoid", [(3, 4)], {}, False),
    ("expand_dims", "nn.expand_dims", [(3,)], {"axis": 1, "num_newaxis": 2}, False),
    ("reshape_codes", "nn.reshape", [(2, 3, 4)], {"newshape": (0, -1)}, False),
    ("reshape_split", "nn.reshape", [(6, 4)], {"newshape": (2, 3, 2, 2)}, False),
    ("transpose_default", "nn.transpose", [(2, 3, 4)], {}, False),
    ("transpose_axes", "nn.transpose", [(2, 3, 4)], {"axes": (1, 0, 2)}, False),
    ("layout_nchw_nhwc", "nn.layout_transform", [(1, 2, 3, 4)], {"src_layout": "NCHW", "dst_layout": "NHWC"}, False),
    ("layout_oihw_hwio", "nn.layout_transform", [(4, 3, 2, 2)], {"src_layout": "OIHW", "dst_layout": "HWIO"}, False),
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("op_name", "shapes", "attrs", "positive"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_op_matches_nn_level(op_name, shapes, attrs, positive, level):
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(0.5, 2.0, s) if positive else rng.standard_normal(s) for s in shapes]
    inputs = {f"a{i}": a.astype(np.float32) for i, a in enumerate(arrays)}
    module = single_op_module(op_name, shapes, attrs)
    expected = as_list(run_nn(module, inputs))
    got = run_level(module, level, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def test_constant_operand_lowers_and_runs():
    shape = (2, 3)
    module = single_op_module("nn.add", [shape, shape], {})
    main = module.body.block.first_op
    block = main.body.block
    bias = np.arange(6, dtype=np.float32).reshape(shape)
    const = nn.ConstantOp(bias)
    block.insert_op_before(const, block.first_op)
    block.first_op.next_op.operands = [block.args[0], const.result]
    x = np.ones(shape, np.float32)
    for level in LEVELS:
        lowered = lower(module, to=level)
        names = {op.name for op in lowered.walk()}
        assert "nn.constant" not in names
        # Tensor level: an arith.constant; once bufferized: a constant memref.global.
        assert ("arith.constant" if level == "linalg" else "memref.global") in names
        out = run_level(module, level, {"a0": x, "a1": x})[0]
        np.testing.assert_allclose(out, x + bias)


def test_max_pool_takes_the_accumulator():
    """All-negative input: a body ignoring the accumulator (or a zero init) would not give the true max."""
    x = -np.arange(1, 33, dtype=np.float32).reshape(1, 2, 4, 4)
    module = single_op_module("nn.max_pool2d", [x.shape], {"pool_size": (2, 2), "strides": (2, 2)})
    expected = x.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5))
    for level in LEVELS:
        np.testing.assert_array_equal(run_level(module, level, {"a0": x})[0], expected)


def test_lower_leaves_the_input_module_unchanged():
    module = single_op_module("nn.relu", [(2, 2)], {})
    before = str(module)
    lower(module, to="loops")
    assert str(module) == before


@pytest.mark.parametrize("level", LEVELS)
def test_integer_ops_use_integer_arithmetic(level):

    a = np.array([[7, -7, 5], [-9, 4, 3]], np.int32)
    b = np.array([2, 3, -2], np.int32)
    # Relay's integer division truncates toward zero: -7 / 3 = -2, 5 / -2 = -2, -9 / 2 = -4.
    expected = {"nn.add": a + b, "nn.multiply": a * b,
                "nn.divide": np.array([[3, -2, -2], [-4, 1, -1]], np.int32)}
    for op_name, want in expected.items():
        module = single_op_module(op_name, [a.shape, b.shape], {}, dtype="int32")
        got = run_level(module, level, {"a0": a, "a1": b})[0]
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)
    pool = single_op_module("nn.max_pool2d", [(1, 1, 2, 4)], {"pool_size": (2, 2), "strides": (2, 2)}, dtype="int32")
    x = np.array([[[[-5, -9, -3, -4], [-7, -6, -8, -2]]]], np.int32)
    np.testing.assert_array_equal(run_level(pool, level, {"a0": x})[0], [[[[-5, -2]]]])


def test_bad_inputs_get_one_clear_error():
    from xrelay.runtime.executor.linalg_exec import ExecutionError

    module = single_op_module("nn.add", [(2, 2), (2, 2)], {})
    for level in LEVELS:
        lowered = lower(module, to=level)
        runner = run_loops if level == "loops" else run_linalg
        with pytest.raises(ExecutionError, match="missing input.*%a1"):
            runner(lowered, {"a0": np.zeros((2, 2), np.float32)})
        with pytest.raises(ExecutionError, match="argument %a1: expected shape \\(2, 2\\), got \\(3,\\)"):
            runner(lowered, {"a0": np.zeros((2, 2), np.float32), "a1": np.zeros(3, np.float32)})
    with pytest.raises(ValueError, match="unknown level 'llvm'"):
        lower(module, to="llvm")


def test_compiled_program_is_reused_until_the_module_changes():
    from xrelay.runtime.executor.linalg_exec import LinalgProgram
    from xrelay.runtime.executor.program_entry import cached_program

    module = lower(single_op_module("nn.subtract", [(2,), (2,)], {}), to="memref")
    x, y = np.array([5, 7], np.float32), np.array([1, 2], np.float32)
    program = cached_program(module, LinalgProgram)
    assert cached_program(module, LinalgProgram) is program
    np.testing.assert_array_equal(run_linalg(module, {"a0": x, "a1": y})[0], [4, 5])
    # Swap the generic's operands: the next run recompiles and computes y - x.
    generic = next(op for op in module.walk() if op.name == "linalg.generic")
    a, b, out = generic.operands
    generic.operands = [b, a, out]
    assert cached_program(module, LinalgProgram) is not program
    np.testing.assert_array_equal(run_linalg(module, {"a0": x, "a1": y})[0], [-4, -5])
    loops = lower(single_op_module("nn.subtract", [(2,), (2,)], {}), to="loops")
    np.testing.assert_array_equal(run_loops(loops, {"a0": x, "a1": y})[0], [4, 5])
    np.testing.assert_array_equal(run_loops(loops, {"a0": y, "a1": x})[0], [-4, -5])


def test_passes_out_of_order_name_the_problem():
    from xdsl.utils.exceptions import PassFailedException

    from xrelay.lowering import ConvertNNToLinalg, LinalgToLoops, LinalgBufferize
    from xrelay.lowering.bufferize import BufferizationError

    module = single_op_module("nn.relu", [(2, 2)], {})
    with pytest.raises(BufferizationError, match="linalg-bufferize: cannot bufferize nn.relu"):
        LinalgBufferize()(module)
    with pytest.raises(PassFailedException, match="linalg-to-loops: linalg.generic works on tensors; bufferize first"):
        LinalgToLoops()(ConvertNNToLinalg()(module))


def test_bufferize_is_idempotent():
    from xrelay.frontend import tiny
    from xrelay.lowering import LinalgBufferize

    module, _ = tiny.get_workload()
    once = lower(module, to="memref")
    assert str(LinalgBufferize()(once)) == str(once)


def test_sigmoid_at_every_level_against_numpy():
    x = np.linspace(-8, 8, 12, dtype=np.float32).reshape(3, 4)
    expected = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    module = single_op_module("nn.sigmoid", [(3, 4)], {})
    np.testing.assert_allclose(run_nn(module, {"a0": x}), expected, rtol=1e-6)
    for level in LEVELS:
        np.testing.assert_allclose(run_level(module, level, {"a0": x})[0], expected, rtol=1e-6, err_msg=level)
