"""plan-buffers: a lowered residual block's buffers as views of one arena compute what the block's
numpy reference does, natively (bit for bit as before the pass) and on the numpy loops executor,
on successive calls with different inputs (the arena is reused, nothing leaks between calls);
functions whose memrefs the pass cannot follow are left alone (the IR: tests/filecheck/passes)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp

from module_builder import make_module
from op_levels import assert_loop_pass_kept_results, conv2d_reference
from xrelay.codegen.program import NativeProgram
from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.passes.plan_buffers import PlanBuffers
from xrelay.runtime.reference.loops_exec import LoopsProgram
from xrelay.dialects import parse_mlir

pytestmark = pytest.mark.usefixtures("native_cache")
RNG = np.random.default_rng(41)
W1 = RNG.standard_normal((4, 4, 3, 3), np.float32) / 4
W2 = RNG.standard_normal((4, 4, 3, 3), np.float32) / 4


def residual_block() -> ModuleOp:
    """relu(conv(relu(conv(x))) + x), both convolutions 3x3 with a one-pixel zero border."""
    def body(values, emit):
        first = emit(nn.make("nn.relu", [emit(nn.make("nn.conv2d", [values["x"], emit(nn.ConstantOp(W1))],
                                                    padding=(1, 1, 1, 1)))]))
        second = emit(nn.make("nn.conv2d", [first, emit(nn.ConstantOp(W2))], padding=(1, 1, 1, 1)))
        return [emit(nn.make("nn.relu", [emit(nn.make("nn.add", [second, values["x"]]))]))]

    return make_module({"x": (1, 4, 6, 6)}, body)


def reference(x: np.ndarray) -> np.ndarray:
    first = np.maximum(conv2d_reference(x, W1, padding=1), 0)
    return np.maximum(conv2d_reference(first, W2, padding=1) + x, 0)


def test_a_residual_block_runs_in_one_arena_on_every_call():
    loops = lower(residual_block(), to="loops")
    planned = PlanBuffers()(loops)
    allocated = [op for op in loops.walk() if isinstance(op, memref.AllocOp)]
    (arena,) = [op for op in planned.ops if isinstance(op, memref.GlobalOp) and op.sym_name.data == "__arena_main"]
    left = [op for op in planned.walk() if isinstance(op, memref.AllocOp)]
    assert len(left) == 1 and left[0].memref.type.get_shape() == (1, 4, 6, 6)  # the result, the caller's
    assert not any(isinstance(op, memref.DeallocOp) for op in planned.walk())
    views = [op for op in planned.walk() if isinstance(op, memref.ViewOp)]
    assert len(views) == len(allocated) - 1
    assert all(v.byte_shift.owner.value.value.data % 64 == 0 for v in views)
    total = sum(math.prod(op.memref.type.get_shape()) * 4 for op in allocated if op not in left)
    assert arena.type.get_shape()[0] < total  # blocks are shared by buffers that do not live together

    x = RNG.standard_normal((1, 4, 6, 6), np.float32)
    program = assert_loop_pass_kept_results(loops, planned, [x], reference(x))
    numpy_program = LoopsProgram(planned)
    for _ in range(2):  # later calls find the arena holding the last call's values
        x = RNG.standard_normal((1, 4, 6, 6), np.float32)
        np.testing.assert_allclose(program(x)[0], reference(x), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(numpy_program(x)[0], reference(x), rtol=1e-5, atol=1e-5)


def test_a_function_with_a_memref_the_pass_cannot_follow_is_left_alone():
    text = """
    func.func @main(%flag: i1) -> f32 {
      %c0 = arith.constant 0 : index
      %a = memref.alloc() : memref<4xf32>
      %b = memref.alloc() : memref<4xf32>
      %either = scf.if %flag -> (memref<4xf32>) {
        scf.yield %a : memref<4xf32>
      } else {
        scf.yield %b : memref<4xf32>
      }
      %v = memref.load %either[%c0] : memref<4xf32>
      memref.dealloc %a : memref<4xf32>
      memref.dealloc %b : memref<4xf32>
      func.return %v : f32
    }
    """
    module = parse_mlir(text)
    before = str(module)
    assert str(PlanBuffers()(module)) == before


def test_the_arena_is_aligned_for_vector_rows():
    loops = lower(residual_block(), to="loops")
    program = NativeProgram(PlanBuffers()(loops))
    assert all(array.ctypes.data % 64 == 0 for array in program._globals)
