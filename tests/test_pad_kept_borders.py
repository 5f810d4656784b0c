"""Pads whose planned buffer already holds its border skip the fill (runtime/pad_step.keep_borders):
chains of padded depthwise convolutions of two shapes, against numpy written here, with every planned
buffer filled with NaN before each run (a border the program neither filled nor kept shows up), and
shown to need the fills it keeps (all pads marked kept: NaN)."""

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


def test_kept_borders_are_the_fills_of_the_pad_before():
    channels = 6
    x = RNG.standard_normal((1, 10, 9, channels)).astype(np.float32)
    weights = [RNG.standard_normal((3, 3, 1, channels)).astype(np.float32) for _ in STRIDES]
    program = LinalgProgram(formed(lower(chain(x.shape, weights), to="linalg")))
    kept = [p.border_kept for p in pads(program)]
    assert len(kept) == len(STRIDES)
    # The first pad of each shape fills; the later ones of a shape keep what the one before filled
    # where the memory plan hands them the same block.
    assert not kept[0] and not kept[4]
    assert any(kept)
    for _ in range(3):
        poison(program)
        x = RNG.standard_normal(x.shape).astype(np.float32)
        np.testing.assert_allclose(program(x)[0], reference(x, weights), rtol=1e-4, atol=1e-4)


def test_a_pad_marked_kept_without_the_fill_before_reads_garbage():
    channels = 6
    x = RNG.standard_normal((1, 10, 9, channels)).astype(np.float32)
    weights = [RNG.standard_normal((3, 3, 1, channels)).astype(np.float32) for _ in STRIDES]
    program = LinalgProgram(formed(lower(chain(x.shape, weights), to="linalg")))
    for p in pads(program):
        p.border_kept = True
    poison(program)
    assert np.isnan(program(x)[0]).any()
