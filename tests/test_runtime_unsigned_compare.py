"""arith.cmpi's unsigned predicates compare their operands as unsigned integers (-1 is the largest
i32), at the linalg level (numpy) and the loops level (C), against numpy on uint32 views."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.dialects import parse_mlir
from xrelay.lowering import lower
from xrelay.runtime import run

MODULE = """
func.func @main(%a: tensor<6xi32>, %b: tensor<6xi32>) -> tensor<6xi1> {
  %e = tensor.empty() : tensor<6xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} ins(%a, %b : tensor<6xi32>, tensor<6xi32>) outs(%e : tensor<6xi1>) {
  ^bb0(%x: i32, %y: i32, %o: i1):
    %c = arith.cmpi PREDICATE, %x, %y : i32
    linalg.yield %c : i1
  } -> tensor<6xi1>
  func.return %r : tensor<6xi1>
}
"""
A = np.array([-1, 1, -5, 7, 0, -2147483648], np.int32)
B = np.array([1, -1, -3, 7, -1, 2147483647], np.int32)
UNSIGNED = {"ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal}


@pytest.mark.parametrize("predicate", sorted(UNSIGNED))
@pytest.mark.parametrize("level", ["linalg", "loops"])
def test_unsigned_predicates_compare_as_unsigned(predicate, level):
    module = parse_mlir(MODULE.replace("PREDICATE", predicate))
    if level == "loops":
        module = lower(module, to="loops")
    expected = UNSIGNED[predicate](A.view(np.uint32), B.view(np.uint32))
    np.testing.assert_array_equal(run(module, {"a": A, "b": B}), expected)
