"""Winograd convolutions whose input transform the two processes share (runtime/winograd_shared.py):
the two-phase kernel against numpy written here (tile ranges across tile rows and images, NCHW
input, accumulation, an epilogue), which shapes take it, and whole programs in two processes, where
the convolution's step runs on both, takes the path and needs the second process's parts."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.lowering import lower
from xrelay.runtime import conv, spmd, spmd_fallback, threads, winograd_shared
from xrelay.runtime.conv_epilogue import ConvStep
from xrelay.runtime.linalg_exec import LinalgProgram

RNG = np.random.default_rng(21)


class AllHere:
    """A stand-in for `spmd.Rank` in a step both processes run that runs every part itself (what the
    two processes do together), so that the kernel's phases can be checked in one process."""

    step_spmd = True
    in_phase = False

    def __init__(self):
        self.phases = 0

    def split(self, calls) -> bool:
        self.phases += 1
        for call in calls:
            call()
        return True

    def alone(self, call) -> None:
        call()


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Unpadded stride-1 3x3 convolution of (N, C, H, W) `x` by (F, C, 3, 3) `w` in float64, tap by tap."""
    oh, ow = x.shape[2] - 2, x.shape[3] - 2
    return sum(np.einsum("nchw,fc->nfhw", x[:, :, i:i + oh, j:j + ow].astype(np.float64), w[:, :, i, j])
               for i in range(3) for j in range(3))


@pytest.mark.parametrize(("n", "hw", "c", "f", "m", "parts", "nchw", "accumulate"), [
    (1, (14, 14), 8, 200, 2, 2, False, False),  # split by channels: 49 tiles, 200 filters
    (1, (28, 28), 8, 16, 4, 2, False, False),  # 7 tile rows of 7: parts end inside a tile row
    (2, (14, 10), 5, 12, 2, 2, False, True),  # tile ranges across images, accumulating
    (1, (28, 28), 8, 16, 4, 3, True, False),  # NCHW input (an NHWC copy), three parts
    (1, (12, 20), 3, 7, 4, 2, False, False),  # odd filter and channel counts, 3 x 5 tiles
])
def test_two_phases_equal_numpy(n, hw, c, f, m, parts, nchw, accumulate, monkeypatch):
    h, w = hw
    padded = RNG.standard_normal((n, h + 2, w + 2, c)).astype(np.float32)
    x = np.ascontiguousarray(padded.transpose(0, 3, 1, 2)) if nchw else padded.transpose(0, 3, 1, 2)
    weight = RNG.standard_normal((f, c, 3, 3)).astype(np.float32)
    u = conv.winograd_weights(weight, m)
    init = RNG.standard_normal((n, h, w, f)).astype(np.float32)
    out = init.copy().transpose(0, 3, 1, 2)
    monkeypatch.setattr(winograd_shared, "shares_transform", lambda shape, m, threads: True)  # any split
    monkeypatch.setattr(threads, "_split_threads", [parts])
    shared, rows = winograd_shared.SharedTransform(), []
    assert not shared.run(x, u, m, out, accumulate)  # the thread mode: makes the scratch, computes nothing
    assert np.array_equal(out, init.transpose(0, 3, 1, 2))
    assert isinstance(shared.scratch.base.base.obj, mmap.mmap)  # a shared mapping (inherited by the fork)
    rank = AllHere()
    monkeypatch.setattr(threads.spmd, "rank", rank)
    assert shared.run(x, u, m, out, accumulate, epilogue=lambda r0, r1: rows.append((r0, r1)))
    expected = reference(x, weight) + (init.transpose(0, 3, 1, 2) if accumulate else 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert rank.phases >= 2  # the transform, then the products
    covered = sorted(rows)
    assert covered[0][0] == 0 and covered[-1][1] == h and all(a[1] == b[0] for a, b in zip(covered, covered[1:]))


def test_no_scratch_no_two_phases(monkeypatch):
    """In the two-process mode without a scratch made before the fork, it leaves the conv to
    `conv.winograd_conv3x3_threaded` (both processes decide alike: they have the same scratch)."""
    x = RNG.standard_normal((1, 8, 16, 16)).astype(np.float32)
    u = conv.winograd_weights(RNG.standard_normal((200, 8, 3, 3)).astype(np.float32), 2)
    out = np.zeros((1, 200, 14, 14), np.float32)
    monkeypatch.setattr(threads.spmd, "rank", AllHere())
    assert not winograd_shared.SharedTransform().run(x, u, 2, out, False)
    assert not out.any()


def test_which_shapes_share_the_transform():
    """ResNet's stages on two processes: 14x14x256 (split by channels) does; 28x28x128 and 56x56x64
    (split by tile rows) do not, nor anything on one thread."""
    assert winograd_shared.shares_transform((1, 256, 14, 14), 2, 2)
    assert not winograd_shared.shares_transform((1, 128, 28, 28), 4, 2)
    assert not winograd_shared.shares_transform((1, 64, 56, 56), 4, 2)
    assert not winograd_shared.shares_transform((1, 256, 14, 14), 2, 1)


def skipping_rank_1_parts(monkeypatch):
    """Make the second process meet every phase without running its parts."""
    original = spmd.Rank.split

    def split(self, calls):
        if self.rank == 1 and self.step_spmd and not self.in_phase and len(calls) >= 2:
            self.barrier()
            self.barrier()
            return True
        return original(self, calls)

    monkeypatch.setattr(spmd.Rank, "split", split)


@pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")
@pytest.mark.parametrize(("hw", "c", "f"), [((14, 14), 8, 200), ((10, 20), 9, 201)])
def test_convolution_in_two_processes(hw, c, f, blas_workers, monkeypatch):
    """A padded 3x3 convolution with a constant weight, bias and ReLU (its epilogue), NHWC: in two
    processes its step runs on both, in two phases, and equals numpy for new inputs; with the second
    process skipping its parts, it does not."""
    blas_workers(2)
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)
    monkeypatch.setattr(spmd_fallback, "ADAPTIVE", False)  # every call in two processes, however short
    monkeypatch.setattr(threads, "PROCESSES_MIN_SPLIT_EPILOGUE", 0)
    taken = []  # calls rank 0 ran in two phases
    run = winograd_shared.SharedTransform.run
    monkeypatch.setattr(winograd_shared.SharedTransform, "run",
                        lambda self, *args, **kw: taken.append(run(self, *args, **kw)) or taken[-1])
    x = RNG.standard_normal((1, *hw, c)).astype(np.float32)
    w = RNG.standard_normal((3, 3, c, f)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    b = GraphBuilder(None)
    out = b.op(nn.Conv2DOp, b.param("x", x.shape, x.dtype), b.op(nn.ConstantOp, w), padding=(1, 1, 1, 1),
               data_layout="NHWC", kernel_layout="HWIO")
    out = b.op(nn.OPS["nn.relu"], b.op(nn.OPS["nn.bias_add"], out, b.op(nn.ConstantOp, bias), axis=3))
    linalg = lower(b.finish(*out.results), to="linalg")

    def expected(x):
        padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))).transpose(0, 3, 1, 2)
        return np.maximum(reference(padded, w.transpose(3, 2, 0, 1)) + bias[:, None, None], 0).transpose(0, 2, 3, 1)

    for skip in (False, True):
        if skip:
            skipping_rank_1_parts(monkeypatch)
        program = LinalgProgram(linalg)
        program.threading = "processes"
        try:
            (index,) = [i for i, step in enumerate(program.steps) if isinstance(step, ConvStep)]
            program(x)  # the first call runs on threads (making the scratch), then forks
            assert index in program._processes.spmd_steps
            taken.clear()
            for seed in range(2):
                data = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
                close = np.allclose(program(data)[0], expected(data), rtol=1e-4, atol=1e-4)
                assert close != skip
            assert taken == [True, True]
        finally:
            program.close()
