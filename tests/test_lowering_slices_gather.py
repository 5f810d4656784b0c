"""Slices (`tensor.extract_slice` / `insert_slice`) and gathers (`tensor.extract` inside a
`linalg.generic` body) on hand-written linalg IR: the tensor level, after linalg-bufferize and after
linalg-to-loops all agree with numpy slicing and fancy indexing written here."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.lowering import LinalgToLoops, LinalgBufferize
from xrelay.runtime.executor.linalg_exec import ExecutionError
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops


def run_all_levels(text: str, inputs: dict) -> list[list[np.ndarray]]:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    memref = LinalgBufferize()(module)
    memref.verify()
    loops = LinalgToLoops()(memref)
    return [run_linalg(module, inputs), run_linalg(memref, inputs), run_loops(loops, inputs)]


def gather_rows(index_shape: tuple[int, ...], index_elem: str) -> str:
    """`@main(%data: tensor<4x5xf32>, %idx)`: the rows of %data that %idx (of `index_shape`, any rank)
    names, as a linalg.generic over %idx's dims and the row's column whose body reads the captured
    %data with `tensor.extract`."""
    rank = len(index_shape)
    dims = ", ".join(f"d{i}" for i in range(rank + 1))
    index_dims = ", ".join(f"d{i}" for i in range(rank))
    index_type = f"tensor<{''.join(f'{n}x' for n in index_shape)}{index_elem}>"
    out_type = f"tensor<{''.join(f'{n}x' for n in index_shape)}5xf32>"
    parallel = ", ".join(['"parallel"'] * (rank + 1))
    return f"""
func.func @main(%data: tensor<4x5xf32>, %idx: {index_type}) -> {out_type} {{
  %e = tensor.empty() : {out_type}
  %g = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({index_dims})>, affine_map<({dims}) -> ({dims})>],
      iterator_types = [{parallel}]}} ins(%idx : {index_type}) outs(%e : {out_type}) {{
  ^bb0(%i: {index_elem}, %o: f32):
    %j = linalg.index {rank} : index
    %ii = arith.index_cast %i : {index_elem} to index
    %v = tensor.extract %data[%ii, %j] : tensor<4x5xf32>
    linalg.yield %v : f32
  }} -> {out_type}
  func.return %g : {out_type}
}}
"""


GATHER = gather_rows((3,), "i64")


def test_gather_reads_a_captured_tensor_at_every_level():
    data = np.arange(20, dtype=np.float32).reshape(4, 5)
    idx = np.array([3, 0, 3])
    for (out,) in run_all_levels(GATHER, {"data": data, "idx": idx}):
        np.testing.assert_array_equal(out, data[[3, 0, 3]])


def test_gather_out_of_bounds_is_an_execution_error():
    module = Parser(make_context(), GATHER).parse_module()
    with pytest.raises(ExecutionError, match="out of bounds"):
        run_linalg(module, {"data": np.zeros((4, 5), np.float32), "idx": np.array([0, 4, 1])})
    with pytest.raises(ExecutionError, match="out of bounds"):  # negative indices do not wrap
        run_linalg(module, {"data": np.zeros((4, 5), np.float32), "idx": np.array([0, -1, 1])})


def test_strided_extract_slice_and_insert_slice_chain():
    text = """
    func.func @main(%a: tensor<4x5xf32>, %b: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<6x5xf32>, tensor<4x5xf32>) {
      %s = tensor.extract_slice %a[1, 0] [2, 3] [2, 2] : tensor<4x5xf32> to tensor<2x3xf32>
      %e = tensor.empty() : tensor<6x5xf32>
      %c1 = tensor.insert_slice %a into %e[0, 0] [4, 5] [1, 1] : tensor<4x5xf32> into tensor<6x5xf32>
      %c2 = tensor.insert_slice %b into %c1[4, 0] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<6x5xf32>
      %r = tensor.extract_slice %a[0, 0] [1, 5] [1, 1] : tensor<4x5xf32> to tensor<5xf32>
      %d = tensor.insert_slice %r into %a[3, 0] [1, 5] [1, 1] : tensor<5xf32> into tensor<4x5xf32>
      func.return %s, %c2, %d : tensor<2x3xf32>, tensor<6x5xf32>, tensor<4x5xf32>
    }
    """
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    b = -np.arange(10, dtype=np.float32).reshape(2, 5)
    written = a.copy()
    written[3] = a[0]
    for sliced, joined, overwritten in run_all_levels(text, {"a": a, "b": b}):
        np.testing.assert_array_equal(sliced, [[5, 7, 9], [15, 17, 19]])
        np.testing.assert_array_equal(joined, np.concatenate([a, b]))
        np.testing.assert_array_equal(overwritten, written)
    np.testing.assert_array_equal(a, np.arange(20).reshape(4, 5))  # the argument itself is untouched


def test_rank0_index_argument_selects_one_row():
    text = gather_rows((), "i32")
    data = np.arange(20, dtype=np.float32).reshape(4, 5)
    for (out,) in run_all_levels(text, {"data": data, "idx": np.array(2, dtype=np.int32)}):
        np.testing.assert_array_equal(out, data[2])


def test_rank2_index_argument_gathers_a_grid_of_rows():
    data = np.arange(20, dtype=np.float32).reshape(4, 5)
    idx = np.array([[3, 1], [0, 3]])
    for (out,) in run_all_levels(gather_rows((2, 2), "i64"), {"data": data, "idx": idx}):
        np.testing.assert_array_equal(out, data[[[3, 1], [0, 3]]])
