"""Helpers for op tests: a module holding one nn op, running it at every level, folding it; numpy
references of convolution and max pooling; the check that a loop pass kept what the loops compute."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from xrelay import passes
from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.codegen.program import NativeProgram
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import LoopsProgram, run_loops

LEVELS = ("linalg", "memref", "loops")


def single_op_module(op_name: str, arguments: Sequence[np.ndarray | Sequence[int]], attrs: dict,
                     dtype: str = "float32", constants: bool = False) -> ModuleOp:
    """`@main(%a0, %a1, ...)` returning the results of one nn op on its arguments, built with
    `frontend.GraphBuilder`: an argument given as an array has its shape and dtype, one given as a
    shape has `dtype`. With `constants`, the op reads nn.constants of the arrays and @main has no
    arguments."""
    b = GraphBuilder(None, dtype)
    if constants:
        values = [b.op(nn.ConstantOp, np.ascontiguousarray(a)) for a in arguments]
    else:
        values = [b.param(f"a{i}", np.shape(a), a.dtype) if isinstance(a, np.ndarray) else b.param(f"a{i}", a)
                  for i, a in enumerate(arguments)]
    return b.finish(*b.op(nn.OPS[op_name], *values, **attrs).results)


def conv_then(op_name: str, extra: Sequence[np.ndarray], attrs: dict, rng: np.random.Generator,
              data_shape: Sequence[int]) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """`@main(a0 = data, a1 = weight, a2... = extra)`: an NCHW conv2d (random data of `data_shape`, a
    4-channel 3x3 weight, padding 1) feeding `op_name`, which also takes `extra`; and the inputs by name."""
    weight_shape = (4, data_shape[1], 3, 3)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in (data_shape, weight_shape)] + list(extra)
    b = GraphBuilder(None)
    args = [b.param(f"a{i}", a.shape, a.dtype) for i, a in enumerate(arrays)]
    conv = b.op(nn.Conv2DOp, *args[:2], padding=(1, 1, 1, 1))
    return b.finish(b.op(nn.OPS[op_name], conv, *args[2:], **attrs)), inputs_of(arrays)


def conv_then_converted_to_nhwc(op_name: str, extra: Sequence[np.ndarray], attrs: dict, rng: np.random.Generator,
                                data_shape: Sequence[int]) -> Operation:
    """`conv_then`'s module through ConvertLayout (conv2d to NHWC/HWIO), checked to give the NCHW
    module's result and `op_name` to read the NHWC conv result directly (no transform back in between);
    returns that `op_name` op of the converted module."""
    module, inputs = conv_then(op_name, extra, attrs, rng, data_shape)
    expected = run(module, inputs)
    converted = passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]})(module)
    ops = [op for op in converted.walk() if op.name.startswith("nn.")]
    conv = next(op for op in ops if op.name == "nn.conv2d")
    follower = next(op for op in ops if op.name == op_name)
    assert conv.results[0] in follower.operands
    np.testing.assert_allclose(run(converted, inputs), expected, rtol=1e-5, atol=1e-5)
    return follower


def run_at_every_level(module: ModuleOp, inputs, params=None):
    """(level, `runtime.run`'s result) for `module` (nn) run on `inputs` at the nn level and lowered to
    each of `LEVELS`."""
    for level in ("nn",) + LEVELS:
        yield level, run(module if level == "nn" else lower(module, to=level), inputs, params)


def inputs_of(arrays: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    return {f"a{i}": a for i, a in enumerate(arrays)}


def run_nn(op_name: str, arrays: Sequence[np.ndarray], attrs: dict) -> np.ndarray:
    """The op's nn-level result (its numpy kernel, through the interpreter)."""
    return run(single_op_module(op_name, arrays, attrs), inputs_of(arrays))


def run_lowered(op_name: str, arrays: Sequence[np.ndarray], attrs: dict, level: str) -> np.ndarray:
    """The op's result lowered to `level` (linalg, memref or loops) and run there."""
    lowered = lower(single_op_module(op_name, arrays, attrs), to=level)
    lowered.verify()
    (result,) = (run_loops if level == "loops" else run_linalg)(lowered, inputs_of(arrays))
    return result


def fold(op_name: str, arrays: Sequence[np.ndarray], attrs: dict) -> tuple[list[str], np.ndarray]:
    """FoldConstant over `@main() { constants; op }`: the nn ops left and the returned constant's value."""
    folded = passes.FoldConstant()(single_op_module(op_name, arrays, attrs, constants=True))
    names = [o.name for o in folded.walk() if o.name.startswith("nn.")]
    value = next(o for o in folded.walk() if isinstance(o, nn.ConstantOp)).numpy()
    return names, value


def _windows(x: np.ndarray, size: tuple[int, int], stride: int):
    """((i, j), x's window-origin slice for tap (i, j)) over a `size` window stepped by `stride` (NCHW)."""
    out_h, out_w = (x.shape[2] - size[0]) // stride + 1, (x.shape[3] - size[1]) // stride + 1
    for i in range(size[0]):
        for j in range(size[1]):
            yield (i, j), x[:, :, i:i + stride * (out_h - 1) + 1:stride, j:j + stride * (out_w - 1) + 1:stride]


def conv2d_reference(x: np.ndarray, w: np.ndarray, padding: int = 0, stride: int = 1) -> np.ndarray:
    """nn.conv2d in numpy, float64: NCHW data, OIHW weight, zero `padding` on every side."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    return sum(np.einsum("nchw,oc->nohw", window, w[:, :, i, j]) for (i, j), window in _windows(x, w.shape[2:], stride))


def max_pool2d_reference(x: np.ndarray, size: int, stride: int) -> np.ndarray:
    """nn.max_pool2d in numpy (NCHW, a square window, no padding)."""
    return np.max([window for _, window in _windows(x, (size, size), stride)], axis=0)


def assert_loop_pass_kept_results(before: ModuleOp, after: ModuleOp, args: Sequence[np.ndarray],
                                  expected: np.ndarray, tolerance: float = 1e-5) -> NativeProgram:
    """`after`, a loop pass's output, computes natively what `before` did bit for bit (each output
    element's updates kept their order) and `expected` (numpy) within `tolerance`, and the numpy loops
    executor agrees; returns `after`'s native program."""
    program = NativeProgram(after)
    (result,) = program(*args)
    np.testing.assert_array_equal(result, NativeProgram(before)(*args)[0])
    np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(LoopsProgram(after)(*args)[0], result, rtol=1e-5, atol=1e-5)
    return program
