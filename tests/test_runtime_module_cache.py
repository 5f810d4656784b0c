"""`runtime.run` on an unchanged module does not walk it again (runtime/program_entry.py, dialects/
ir_generation.py), and a module changed in place, by hand or by xDSL's Rewriter, runs its new IR."""

import gc
import weakref

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32
from xdsl.ir import Block, Operation, Region
from xdsl.parser import Parser
from xdsl.rewriter import Rewriter

from xrelay import lowering
from xrelay.dialects import make_context
from xrelay.dialects.ir_generation import WatchedDict, generation, watch
from xrelay.runtime import run
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.program_entry import cached_program

C = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
X = np.array([0.5, -1.0, 2.0, 8.0], np.float32)

MODEL = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = nn.add(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = nn.relu(%s) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def lowered(level: str = "linalg"):
    return lowering.lower(Parser(make_context(), MODEL).parse_module(), to=level)


@pytest.fixture
def walks(monkeypatch):
    """How many times any op, block or region is walked (xDSL's `walk` methods, counted)."""
    count = [0]
    for owner in (Operation, Block, Region):
        original = owner.walk

        def counting(self, *args, _original=original, **kwargs):
            count[0] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(owner, "walk", counting)
    return count


@pytest.mark.parametrize("level", ["linalg", "memref", "loops"])
def test_second_run_of_an_unchanged_module_walks_nothing(walks, level):
    module = lowered(level)
    np.testing.assert_allclose(run(module, {"x": X}), np.maximum(X + C, 0))
    assert walks[0] > 0
    walks[0] = 0
    for _ in range(3):
        np.testing.assert_allclose(run(module, {"x": X}), np.maximum(X + C, 0))
    assert walks[0] == 0


def test_a_change_elsewhere_costs_one_comparison_and_keeps_the_program(walks):
    module = lowered()
    run(module, {"x": X})
    program = cached_program(module, LinalgProgram)
    lowered()  # parsing and lowering another module changes IR, not this module
    walks[0] = 0
    run(module, {"x": X})
    assert walks[0] > 0  # the comparison with the state the program was compiled from
    walks[0] = 0
    run(module, {"x": X})
    assert walks[0] == 0
    assert cached_program(module, LinalgProgram) is program


def constant_op(module) -> arith.ConstantOp:
    return next(op for op in module.walk() if isinstance(op, arith.ConstantOp)
                and isinstance(op.value, DenseIntOrFPElementsAttr) and op.value.get_shape() == (4,))


def test_a_property_set_by_hand_recompiles():
    module = lowered()
    run(module, {"x": X})
    op = constant_op(module)
    op.properties["value"] = DenseIntOrFPElementsAttr.from_list(TensorType(f32, [4]), [-10.0, 0.0, 10.0, 20.0])
    np.testing.assert_allclose(run(module, {"x": X}), np.maximum(X + [-10, 0, 10, 20], 0))


def test_an_operand_replaced_by_hand_recompiles():
    module = lowered()
    run(module, {"x": X})
    ret = next(op for op in module.walk() if op.name == "func.return")
    ret.operands[0] = constant_op(module).result  # return the constant itself
    np.testing.assert_allclose(run(module, {"x": X}), C)


def test_an_op_replaced_by_the_rewriter_recompiles():
    module = lowered()
    run(module, {"x": X})
    old = constant_op(module)
    new = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, [4]), [4.0, 3.0, 2.0, 1.0]))
    Rewriter.replace_op(old, new)
    np.testing.assert_allclose(run(module, {"x": X}), np.maximum(X + [4, 3, 2, 1], 0))


def test_watched_dicts_count_their_changes():
    op = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, [1]), [1.0]))
    watch(op)
    assert type(op.properties) is WatchedDict and type(op.attributes) is WatchedDict
    before = generation()
    assert op.properties["value"] is not None and dict(op.attributes) == {}  # reading changes nothing
    assert generation() == before
    op.attributes["tag"] = op.properties["value"]
    op.attributes.pop("tag")
    op.attributes.update({"a": op.properties["value"]})
    del op.attributes["a"]
    assert generation() == before + 4


def test_a_module_run_once_is_freed_with_its_program():
    module = lowered()
    run(module, {"x": X})
    ref = weakref.ref(module)
    del module
    gc.collect()
    assert ref() is None
