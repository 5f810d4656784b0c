"""Static memory planning (`plan-memory`, as built programs bind it): buffers are reused once every user (through any view) has run, never before.

Each program below is built so that reusing a buffer one step too early changes the answer (checked
against numpy written here), and the planned memory is checked against the blocks counted by hand.
"""

from __future__ import annotations

import numpy as np
from module_builder import formed
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.passes.kernels.plan_memory import assign_blocks
from xrelay.runtime.executor.memory_plan import StorageTracker

T = "tensor<4x8xf32>"
BYTES = 4 * 8 * 4  # one 4x8 f32 buffer


def elementwise(result: str, ins: list[str], body: str, out_type: str = T, in_types: list[str] | None = None) -> str:
    """`result = linalg.generic` over 2-D operands (identity maps) with `body` computing %r from %a0, %a1..."""
    in_types = in_types or [T] * len(ins)
    rank = len(out_type.split("x")) - 1  # tensor<4x8xf32>: 2
    dims = ", ".join(f"d{i}" for i in range(rank))
    identity = f"affine_map<({dims}) -> ({dims})>"
    maps = ", ".join([identity] * (len(ins) + 1))
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    return f"""
  %e_{result} = tensor.empty() : {out_type}
  %{result} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{", ".join(['"parallel"'] * rank)}]}}
      ins({", ".join("%" + i for i in ins)} : {", ".join(in_types)}) outs(%e_{result} : {out_type}) {{
  ^bb0({args}, %o: f32):
    %c1 = arith.constant 1.0 : f32
    %c2 = arith.constant 2.0 : f32
    {body}
    linalg.yield %r : f32
  }} -> {out_type}"""


def program(body: str, results: list[str], result_types: list[str] | None = None, plan: bool = True):
    result_types = result_types or [T] * len(results)
    source = f"""
func.func @main(%x: {T}) -> ({", ".join(result_types)}) {{{body}
  func.return {", ".join("%" + r for r in results)} : {", ".join(result_types)}
}}"""
    return LinalgProgram(formed(Parser(make_context(), source).parse_module(), placed=plan))


X = np.arange(32, dtype=np.float32).reshape(4, 8) / 8 - 1

# a = 2x lives to the end; t1..t3 are each used twice (no op writes over them), so each dies one step
# after the next is made: at most a, t_k and t_{k+1} live at once.
LONG_LIVED = (
    elementwise("a", ["x"], "%r = arith.mulf %a0, %c2 : f32")
    + elementwise("t1", ["a"], "%r = arith.addf %a0, %c1 : f32")
    + elementwise("t2", ["t1", "t1"], "%r = arith.mulf %a0, %a1 : f32")
    + elementwise("t3", ["t2", "t2"], "%r = arith.addf %a0, %a1 : f32")
    + elementwise("r", ["t3", "a"], "%r = arith.subf %a0, %a1 : f32")
)


def test_a_long_lived_buffer_is_not_reused_while_the_chain_around_it_reuses_memory():
    planned, unplanned = program(LONG_LIVED, ["r"]), program(LONG_LIVED, ["r"], plan=False)
    a = 2 * X
    expected = 2 * (a + 1) ** 2 - a
    for run in range(2):  # the second run reuses the first run's blocks
        np.testing.assert_allclose(planned(X)[0], expected, rtol=1e-6)
    np.testing.assert_allclose(unplanned(X)[0], expected, rtol=1e-6)
    # a, t1, t2, t3 own a buffer each (r writes over t3); a + two of the chain are ever live together.
    plan = planned.plan
    assert sum(b.nbytes for k, b in enumerate(plan.buffers) if k not in plan.unused) == 4 * BYTES
    assert planned.peak_bytes == 3 * BYTES
    assert unplanned.peak_bytes is None


def test_a_view_keeps_its_buffer_alive_after_the_last_use_of_the_value_it_views():
    body = (
        elementwise("a", ["x"], "%r = arith.mulf %a0, %c2 : f32")
        + "\n  %v = tensor.collapse_shape %a [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>"
        + elementwise("t1", ["x", "x"], "%r = arith.addf %a0, %a1 : f32")
        + elementwise("t2", ["t1", "t1"], "%r = arith.mulf %a0, %a1 : f32")
        + elementwise("t3", ["t2", "t2"], "%r = arith.addf %a0, %a1 : f32")
        + "\n  %w = tensor.expand_shape %v [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>"
        + elementwise("r", ["w", "t3"], "%r = arith.subf %a0, %a1 : f32")
    )
    planned = program(body, ["r"])
    expected = 2 * X - 2 * (2 * X) ** 2
    np.testing.assert_allclose(planned(X)[0], expected, rtol=1e-6)
    assert planned.peak_bytes == 3 * BYTES  # a (through v, w), and two of t1..t3


def test_a_slice_keeps_its_buffer_alive_and_results_are_never_reused():
    body = (
        elementwise("a", ["x"], "%r = arith.mulf %a0, %c2 : f32")
        + "\n  %s = tensor.extract_slice %a[1, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>"
        + elementwise("first", ["x"], "%r = arith.addf %a0, %c1 : f32")
        + elementwise("t1", ["x", "x"], "%r = arith.addf %a0, %a1 : f32")
        + elementwise("t2", ["t1", "t1"], "%r = arith.mulf %a0, %a1 : f32")
        + elementwise("t3", ["t2", "t2"], "%r = arith.addf %a0, %a1 : f32")
        + elementwise("r", ["s", "s"], "%r = arith.addf %a0, %a1 : f32", "tensor<2x8xf32>",
                      ["tensor<2x8xf32>", "tensor<2x8xf32>"])
    )
    planned = program(body, ["first", "t3", "r"], [T, T, "tensor<2x8xf32>"])
    first, t3, r = planned(X)
    np.testing.assert_allclose(first, X + 1, rtol=1e-6)  # returned early: its buffer stays its own
    np.testing.assert_allclose(t3, 2 * (2 * X) ** 2, rtol=1e-6)
    np.testing.assert_allclose(r, 2 * (2 * X)[1:3], rtol=1e-6)
    # Blocks: a (alive through s until r), first (returned), t1's (t3 takes it once t2 is made, and
    # keeps it: returned) and t2's (free after t3, r's smaller buffer fits in it).
    assert planned.peak_bytes == 4 * BYTES



def hot_block_plan(later: bool):
    """Blocks 0, 1 (64 bytes) and 2 (256 bytes), all allocated at step 0, freed after steps 1, 2 and 3;
    buffer 3 (64 bytes) allocated at step 4; `later`: buffer 4 (256 bytes) allocated at step 5 while
    buffer 3 is alive."""
    t = StorageTracker()
    f32 = np.dtype(np.float32)
    for slot, shape in ((0, (4, 4)), (1, (4, 4)), (2, (8, 8))):
        t.fresh(slot, 0, shape, f32)
    t.fresh(3, 4, (4, 4), f32)
    touches = [(1, 0), (2, 1), (3, 2), (6, 3)]
    if later:
        t.fresh(4, 5, (8, 8), f32)
        touches.append((6, 4))
    for step, slot in touches:
        t.touch(step, (slot,))
    return assign_blocks(t, 7, [3, 4] if later else [3])


def test_an_allocation_takes_the_block_freed_last_when_the_peak_stays():
    """Buffer 3 takes the block freed last (block 2, at step 3: still in cache), bigger than it
    needs, since the peak stays."""
    hot = hot_block_plan(later=False)
    assert hot.block_of == [0, 1, 2, 2] and hot.peak_bytes == 64 + 64 + 256


def test_hot_blocks_fall_back_to_the_best_fit_when_the_peak_would_grow():
    """Buffer 4 needs the 256-byte block at step 5: had buffer 3 taken it, a new block would be needed,
    so the plan keeps the best fit (buffer 3 in block 0) and the peak of three blocks."""
    plan = hot_block_plan(later=True)
    assert plan.block_of == [0, 1, 2, 0, 2] and plan.peak_bytes == 64 + 64 + 256
