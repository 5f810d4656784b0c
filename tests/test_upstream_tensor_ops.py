"""dialects/upstream_tensor_ops.py: `tensor.empty` keeps its attribute dictionary through print and parse,
and `tensor.pad` with a result type its padding does not give is refused, as upstream MLIR does."""

import pytest
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects import parse_mlir

EMPTY = """func.func @main(%n: index) -> tensor<4x4xf32> {
  %0 = tensor.empty() {kernel.offset = 64 : i64} : tensor<4x4xf32>
  %1 = tensor.empty(%n) : tensor<?x4xf32>
  func.return %0 : tensor<4x4xf32>
}"""


def test_empty_prints_and_parses_its_attributes():
    printed = str(parse_mlir(EMPTY))
    assert "%0 = tensor.empty() {kernel.offset = 64 : i64} : tensor<4x4xf32>" in printed
    assert "%1 = tensor.empty(%n) : tensor<?x4xf32>" in printed
    assert str(parse_mlir(printed)) == printed


def pad(low: int, rows: int) -> str:
    return f"""func.func @main(%x: tensor<4x4xf32>) -> tensor<{rows}x6xf32> {{
  %p = tensor.pad %x low[{low}, 1] high[1, 1] {{
  ^bb0(%i: index, %j: index):
    %c = arith.constant 0.0 : f32
    tensor.yield %c : f32
  }} : tensor<4x4xf32> to tensor<{rows}x6xf32>
  func.return %p : tensor<{rows}x6xf32>
}}"""


def test_pad_result_must_be_the_padded_shape():
    parse_mlir(pad(1, 6)).verify()
    with pytest.raises(VerifyException, match="result dimension 0 is 6, but the source's 4 padded by 99 and 1 is 104"):
        parse_mlir(pad(99, 6)).verify()
