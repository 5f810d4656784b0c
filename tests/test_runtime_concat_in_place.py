"""Concatenation without copies (`plan-memory`, `place_in_slices`): a DenseNet-like network
computes what numpy written here computes, in NCHW and NHWC, on 1 and 2 threads, with the inserted
buffers living in their slice of the concatenation wherever that is safe (convolutions writing
strided channel slices by Winograd and by im2col), and a buffer read after its concatenation is
overwritten keeps its own memory."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from module_builder import formed, make_module
from xrelay.dialects import make_context, nn
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.passes.kernels.plan_memory import PlanMemory
from xrelay.runtime.executor.memory_plan import place_in_slices

H, C0, GROWTH, INNER = 16, 8, 8, 8  # 3x3 convs by Winograd F(2x2, 3x3), 1x1 ones by im2col
RNG = np.random.default_rng(12)
W_STEM = RNG.standard_normal((C0, 3, 1, 1)).astype(np.float32) / 2  # OIHW
B1 = RNG.standard_normal(C0).astype(np.float32)
W1 = RNG.standard_normal((INNER, C0, 1, 1)).astype(np.float32) / 3
W2 = RNG.standard_normal((GROWTH, INNER, 3, 3)).astype(np.float32) / 6
B2 = RNG.standard_normal(C0 + GROWTH).astype(np.float32)
W3 = RNG.standard_normal((INNER, C0 + GROWTH, 1, 1)).astype(np.float32) / 3
W4 = RNG.standard_normal((GROWTH, INNER, 3, 3)).astype(np.float32) / 6
X = RNG.standard_normal((1, 3, H, H)).astype(np.float32)


def conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW convolution, stride 1, padding (k - 1) / 2, in float64."""
    k = w.shape[2]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    return sum(np.einsum("nchw,fc->nfhw", xp[:, :, i:i + x.shape[2], j:j + x.shape[3]], w[:, :, i, j])
               for i in range(k) for j in range(k))


def expected() -> list[np.ndarray]:
    """stem = relu(conv(x)); two dense layers (BN-as-add, ReLU, 1x1 conv, ReLU, 3x3 conv, concat);
    the new features of both layers concatenated again; the stem read once more at the end."""
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    stem = relu(conv(X, W_STEM))
    n1 = conv(relu(conv(relu(stem + B1.reshape(-1, 1, 1)), W1)), W2)
    cat1 = np.concatenate([stem, n1], axis=1)
    n2 = conv(relu(conv(relu(cat1 + B2.reshape(-1, 1, 1)), W3)), W4)
    cat2 = np.concatenate([cat1, n2], axis=1)
    return [cat2, np.concatenate([n1, n2], axis=1), stem * 2]


def dense_module(layout: str):
    """The network of `expected` with its convolutions in `layout` (NHWC: HWIO kernels)."""
    order = ["NCHW".index(c) for c in layout]
    axis = layout.index("C")
    kernel_layout = "OIHW" if layout == "NCHW" else "HWIO"

    def const(array):
        return nn.ConstantOp(np.ascontiguousarray(array))

    def body(values, emit):
        def conv2d(x, w):
            k = w.shape[2]
            weight = emit(const(w if layout == "NCHW" else w.transpose(2, 3, 1, 0)))
            return emit(nn.make("nn.conv2d", [x, weight], padding=(k // 2,) * 4, channels=w.shape[0],
                                kernel_size=(k, k), data_layout=layout, kernel_layout=kernel_layout))

        def shift(x, b):
            shape = [1, 1, 1, 1]
            shape[axis] = b.size
            return emit(nn.make("nn.add", [x, emit(const(b.reshape(shape)))]))

        relu = lambda v: emit(nn.make("nn.relu", [v]))  # noqa: E731
        stem = relu(conv2d(values["x"], W_STEM))
        n1 = conv2d(relu(conv2d(relu(shift(stem, B1)), W1)), W2)
        cat1 = emit(nn.make("nn.concatenate", [stem, n1], axis=axis))
        n2 = conv2d(relu(conv2d(relu(shift(cat1, B2)), W3)), W4)
        cat2 = emit(nn.make("nn.concatenate", [cat1, n2], axis=axis))
        news = emit(nn.make("nn.concatenate", [n1, n2], axis=axis))
        two = [1, 1, 1, 1]
        return [cat2, news, emit(nn.make("nn.multiply", [stem, emit(const(np.full(two, 2, np.float32)))]))]

    return make_module({"x": X.transpose(order).shape}, body), order


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("threads", [1, 2])
def test_dense_blocks_concatenate_in_place(layout, threads, blas_workers):
    blas_workers(threads)
    module, order = dense_module(layout)
    program = LinalgProgram(formed(lower(module, to="linalg"), min_conv_macs=1))  # small convolutions split too
    back = [order.index(a) for a in range(4)]  # the layout's axes back to NCHW
    for _ in range(2):  # the second run reuses the planned buffers and views
        got = [r.transpose(back) for r in program(X.transpose(order))]
        for g, e in zip(got, expected(), strict=True):
            np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5)
    # Inserted: stem, n1 (cat1); cat1, n2 (cat2); n1, n2 (news). n1 and n2 are placed in the first
    # concatenation taking them; `news` copies both.
    assert len(program.memory.placements) == 6
    placed_in = place_in_slices(program.memory, program.plan.last_use)
    assert len(placed_in) == 4
    for child, (parent, _) in placed_in.items():  # a view of its concatenation's memory
        assert np.shares_memory(program.plan.arrays[child], program.plan.arrays[parent])


T = "tensor<1x4xf32>"
CAT = "tensor<1x8xf32>"
ID2 = "affine_map<(d0, d1) -> (d0, d1)>"


def generic(result: str, ins: str, in_type: str, outs: str, body: str) -> str:
    return f"""
  %{result} = linalg.generic {{indexing_maps = [{ID2}, {ID2}], iterator_types = ["parallel", "parallel"]}}
      ins({ins} : {in_type}) outs({outs} : {in_type}) {{
  ^bb0(%i: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    {body}
    linalg.yield %r : f32
  }} -> {in_type}"""


def test_an_input_read_after_its_concatenation_is_overwritten_in_place_keeps_its_own_buffer():
    """%cat = [2x, 2y] is then doubled in place (a generic whose out is the concatenation), while
    %a = 2x is read afterwards: placed in the slice, %a would read 4x. The plan must copy it instead,
    and may still place %b, which nothing reads after."""
    text = f"""
func.func @main(%x: {T}, %y: {T}, %z: {CAT}) -> ({CAT}, {T}) {{
  %ea = tensor.empty() : {T}
  {generic("a", "%x", T, "%ea", "%r = arith.mulf %i, %two : f32")}
  %eb = tensor.empty() : {T}
  {generic("b", "%y", T, "%eb", "%r = arith.mulf %i, %two : f32")}
  %e = tensor.empty() : {CAT}
  %c0 = tensor.insert_slice %a into %e[0, 0] [1, 4] [1, 1] : {T} into {CAT}
  %cat = tensor.insert_slice %b into %c0[0, 4] [1, 4] [1, 1] : {T} into {CAT}
  {generic("doubled", "%z", CAT, "%cat", "%r = arith.mulf %o, %two : f32")}
  %ec = tensor.empty() : {T}
  {generic("later", "%a", T, "%ec", "%r = arith.addf %i, %two : f32")}
  func.return %doubled, %later : {CAT}, {T}
}}"""
    program = LinalgProgram(PlanMemory()(Parser(make_context(), text).parse_module()))
    x, y = np.arange(4, dtype=np.float32).reshape(1, 4), np.arange(4, 8, dtype=np.float32).reshape(1, 4)
    for _ in range(2):
        doubled, later = program(x, y, np.zeros((1, 8), np.float32))
        np.testing.assert_array_equal(doubled, 4 * np.concatenate([x, y], axis=1))
        np.testing.assert_array_equal(later, 2 * x + 2)
    placed = place_in_slices(program.memory, program.plan.last_use)
    b = program.memory.storage[program.slots[next(v for v in program.slots if v.name_hint == "b")]]
    assert list(placed) == [b]
