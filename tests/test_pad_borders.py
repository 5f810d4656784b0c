"""Every run fills the border of each pad's planned buffer, which other buffers share the arena with:
chains of padded depthwise convolutions of two shapes, against numpy written here, with every planned
buffer filled with NaN before each run (a border the program did not fill shows up)."""

from __future__ import annotations

import numpy as np
from module_builder import formed, make_module

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.pad_step import PadStep

RNG = np.random.default_rng(5)
STRIDES = [1, 1, 1, 2, 1, 1]  # four pads of a 10x9 input, two of 5x5 (each conv pads its input by one)


def chain(x_shape, weights):
    """Depthwise 3x3 convs (padding 1, `STRIDES`) each followed by a ReLU."""

    def body(values, emit):
        y = values["x"]
        for stride, w in zip(STRIDES, weights):
            y = emit(nn.make("nn.conv2d", [y, emit(nn.ConstantOp(w))], groups=x_shape[3], strides=[stride, stride],
                             padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO"))
            y = emit(nn.make("nn.relu", [y]))
        return [y]

    return make_module({"x": x_shape}, body)


def reference(x, weights):
    y = x.astype(np.float64)
    for stride, w in zip(STRIDES, weights):
        p = np.pad(y, ((0, 0), (1, 1), (1, 1), (0, 0)))
        oh, ow = (y.shape[1] - 1) // stride + 1, (y.shape[2] - 1) // stride + 1
        y = sum(p[:, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride] * w[i, j, 0]
                for i in range(3) for j in range(3))
        y = np.maximum(y, 0)
    return y


def pads(program: LinalgProgram) -> list[PadStep]:
    found = [step if isinstance(step, PadStep) else getattr(step, "pad", None) for step in program.steps]
    return [p for p in found if isinstance(p, PadStep)]


def poison(program: LinalgProgram) -> None:
    for array in program._planned:
        if isinstance(array, np.ndarray) and array.flags.writeable:
            array[...] = np.nan


def test_borders_are_filled_on_every_run_of_a_poisoned_arena():
    channels = 6
    x = RNG.standard_normal((1, 10, 9, channels)).astype(np.float32)
    weights = [RNG.standard_normal((3, 3, 1, channels)).astype(np.float32) for _ in STRIDES]
    program = LinalgProgram(formed(lower(chain(x.shape, weights), to="linalg")))
    assert len(pads(program)) == len(STRIDES) and program.plan is not None
    for _ in range(4):
        poison(program)
        x = RNG.standard_normal(x.shape).astype(np.float32)
        np.testing.assert_allclose(program(x)[0], reference(x, weights), rtol=1e-4, atol=1e-4)
