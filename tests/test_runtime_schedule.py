"""Branchy programs of the linalg executor run on 1 and 2 threads against numpy written here, including
programs whose memory plan reuses a block across branches."""

from __future__ import annotations

import numpy as np

import pytest
from module_builder import formed, make_module

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import LinalgProgram


# --- branchy programs on 1 and 2 threads -----------------------------------------------------


def relu(x):
    return np.maximum(x, 0)


def conv1x1(x, w):
    return np.einsum("nchw,oc->nohw", x, w[:, :, 0, 0])


def inception_like(c: int, h: int):
    """x -> four branches (1x1 conv + relu; 1x1 conv, relu, 3x3 max pool; exp of a scaled x; x + 1,
    then times 2) -> concatenate along the channels."""

    def body(a, emit):
        x = a["x"]
        b1 = emit(nn.make("nn.relu", [emit(nn.make("nn.conv2d", [x, a["w1"]]))]))
        b2 = emit(nn.make("nn.relu", [emit(nn.make("nn.conv2d", [x, a["w2"]]))]))
        b2 = emit(nn.make("nn.max_pool2d", [b2], pool_size=(3, 3), padding=(1, 1, 1, 1)))
        b3 = emit(nn.make("nn.exp", [emit(nn.make("nn.multiply", [x, a["s"]]))]))
        b4 = emit(nn.make("nn.multiply", [emit(nn.make("nn.add", [x, a["s"]])), a["s"]]))
        return [emit(nn.make("nn.concatenate", [b1, b2, b3, b4], axis=1))]

    shapes = {"x": (1, c, h, h), "w1": (c, c, 1, 1), "w2": (c, c, 1, 1), "s": (1, c, 1, 1)}
    return make_module(shapes, body), shapes


def inception_reference(x, w1, w2, s):
    b1 = relu(conv1x1(x, w1))
    b2 = relu(conv1x1(x, w2))
    padded = np.pad(b2, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    h, w = b2.shape[2:]
    b2 = np.max([padded[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)], axis=0)
    return np.concatenate([b1, b2, np.exp(x * s), (x + s) * s], axis=1)


def reuse_across_branches(c: int, h: int):
    """Two branches from x: a = exp(max_pool(conv(x, w1))), b = relu(conv(x, w2)), then a + b. The
    memory plan gives b's conv the block of a's conv result once a's pool has read it: on two lanes
    b's conv must wait for a's pool (a write after a read of one block)."""

    def body(a, emit):
        x = a["x"]
        a1 = emit(nn.make("nn.conv2d", [x, a["w1"]]))
        a2 = emit(nn.make("nn.exp", [emit(nn.make("nn.max_pool2d", [a1], pool_size=(3, 3), padding=(1, 1, 1, 1)))]))
        b = emit(nn.make("nn.relu", [emit(nn.make("nn.conv2d", [x, a["w2"]]))]))
        return [emit(nn.make("nn.add", [a2, b])), emit(nn.make("nn.subtract", [a2, b]))]

    return make_module({"x": (1, c, h, h), "w1": (c, c, 1, 1), "w2": (c, c, 1, 1)}, body), \
        {"x": (1, c, h, h), "w1": (c, c, 1, 1), "w2": (c, c, 1, 1)}


def reuse_reference(x, w1, w2):
    a1 = conv1x1(x, w1)
    padded = np.pad(a1, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    h, w = a1.shape[2:]
    a2 = np.exp(np.max([padded[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)], axis=0))
    b = relu(conv1x1(x, w2))
    return [a2 + b, a2 - b]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", ["inception", "reuse"])
@pytest.mark.parametrize("kernels", [True, False])
def test_branchy_programs_match_numpy_on_one_and_two_threads(case, threads, kernels, blas_workers):
    rng = np.random.default_rng(7)
    module, shapes = inception_like(6, 9) if case == "inception" else reuse_across_branches(5, 8)
    inputs = {name: rng.uniform(-1, 1, shape).astype(np.float32) for name, shape in shapes.items()}
    expected = inception_reference(**inputs) if case == "inception" else reuse_reference(**inputs)
    expected = expected if isinstance(expected, list) else [expected]
    lowered = lower(module, to="linalg")
    program = LinalgProgram(formed(lowered) if kernels else lowered)
    assert (program.runs is not None and program.plan is not None) == kernels  # unbuilt: unplanned
    blas_workers(threads)
    for _ in range(2):
        for got, want in zip(program(*inputs.values()), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
