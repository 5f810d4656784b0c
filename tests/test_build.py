"""xrelay.build and kernel formation (passes/kernels, dialects/kernel.py, runtime/executor/linalg_exec.py):
which ops form each kernel, the algorithm the executor then runs, and the answers against numpy."""

import subprocess
import sys

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.linalg import ops as linalg
from xdsl.parser import Parser

import xrelay
from xrelay import lowering, transform
from xrelay.dialects import make_context
from xrelay.dialects.kernel import ARENA_BYTES, IN_PLACE, OFFSET, DispatchOp
from xrelay.instrument import PassTimingInstrument
from xrelay.passes.kernels.form_kernels import FormKernels
from xrelay.runtime.kernels.conv_epilogue import ConvStep, TailIntoPad
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.kernels.contraction_plan import PlannedContraction
from xrelay.runtime.native.conv_kernels import available as native_available

RNG = np.random.default_rng(7)
W1 = (RNG.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
B1 = RNG.standard_normal(16).astype(np.float32)
W2 = (RNG.standard_normal((16, 16, 1, 1)) * 0.2).astype(np.float32)
WD = (RNG.standard_normal((10, 16)) * 0.1).astype(np.float32)
BD = RNG.standard_normal(10).astype(np.float32)


def dense(array: np.ndarray) -> str:
    return "dense<" + np.array2string(array, separator=", ", threshold=10**9, floatmode="unique").replace("\n", "") + ">"


def shape_type(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


# conv 3x3 + bias + relu; an unrelated negate of the input in between the conv and its bias; a 1x1
# conv + residual add + relu; a 2x2 max pool; global average pool, dense, bias, softmax.
MODEL = f"""
func.func @main(%data: tensor<1x8x16x16xf32>) -> tensor<1x10xf32> {{
  %w1 = nn.constant {dense(W1)} : {shape_type(W1.shape)}
  %b1 = nn.constant {dense(B1)} : {shape_type(B1.shape)}
  %w2 = nn.constant {dense(W2)} : {shape_type(W2.shape)}
  %wd = nn.constant {dense(WD)} : {shape_type(WD.shape)}
  %bd = nn.constant {dense(BD)} : {shape_type(BD.shape)}
  %c1 = nn.conv2d(%data, %w1) {{padding = array<i64: 1, 1, 1, 1>, channels = 16, kernel_size = array<i64: 3, 3>}} : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x16x16xf32>
  %n = nn.negative(%data) : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %a1 = nn.bias_add(%c1, %b1) : (tensor<1x16x16x16xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  %r1 = nn.relu(%a1) : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %c2 = nn.conv2d(%r1, %w2) {{channels = 16, kernel_size = array<i64: 1, 1>}} : (tensor<1x16x16x16xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x16xf32>
  %s = nn.add(%c2, %r1) : (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %r2 = nn.relu(%s) : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %p = nn.max_pool2d(%r2) {{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : (tensor<1x16x16x16xf32>) -> tensor<1x16x8x8xf32>
  %g = nn.global_avg_pool2d(%p) : (tensor<1x16x8x8xf32>) -> tensor<1x16x1x1xf32>
  %f = nn.batch_flatten(%g) : (tensor<1x16x1x1xf32>) -> tensor<1x16xf32>
  %d = nn.dense(%f, %wd) {{units = 10}} : (tensor<1x16xf32>, tensor<10x16xf32>) -> tensor<1x10xf32>
  %db = nn.bias_add(%d, %bd) {{axis = 1 : i64}} : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %o = nn.softmax(%db) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return %o : tensor<1x10xf32>
}}
"""


def reference(x: np.ndarray) -> np.ndarray:
    """MODEL in numpy (NCHW)."""
    def conv(data, weight, pad):
        padded = np.pad(data, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        windows = sliding_window_view(padded, weight.shape[2:], axis=(2, 3))  # N, C, H, W, KH, KW
        return np.einsum("nchwij,fcij->nfhw", windows, weight)

    r1 = np.maximum(conv(x, W1, 1) + B1[None, :, None, None], 0)
    r2 = np.maximum(conv(r1, W2, 0) + r1, 0)
    pooled = r2.reshape(1, 16, 8, 2, 8, 2).max(axis=(3, 5))
    flat = pooled.mean(axis=(2, 3))
    logits = flat @ WD.T + BD
    e = np.exp(logits - logits.max())
    return e / e.sum()


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def kernels_of(module) -> list[DispatchOp]:
    return [op for op in module.walk() if isinstance(op, DispatchOp)]


def members(dispatch: DispatchOp) -> list[str]:
    """The names of the ops a kernel computes with (not the allocations and scalar constants)."""
    return [op.name for op in dispatch.body.block.ops
            if op.name not in ("tensor.empty", "arith.constant", "kernel.yield")]


X = RNG.standard_normal((1, 8, 16, 16)).astype(np.float32)


def test_kernels_follow_dataflow_not_adjacency():
    formed = FormKernels()(lowering.lower(parse(MODEL)))
    found = [(k.root.data, members(k)) for k in kernels_of(formed)]
    generic = "linalg.generic"
    assert found[:3] == [
        # the 3x3 conv, its fill, bias and ReLU, though the negate of the input sits in between
        ("conv", ["linalg.fill", "linalg.conv_2d_nchw_fchw", generic, generic]),
        # the 1x1 conv, its residual add and ReLU
        ("conv", ["linalg.fill", "linalg.conv_2d_nchw_fchw", generic, generic]),
        ("pool", ["linalg.fill", "linalg.pooling_nchw_max"]),
    ]
    assert ("matmul", ["linalg.fill", "linalg.matmul", generic]) in found  # dense + bias
    negate = [op for op in formed.walk() if isinstance(op, linalg.GenericOp)
              and any(inner.name == "arith.negf" for inner in op.body.block.ops)]
    assert len(negate) == 1 and not isinstance(negate[0].parent_op(), DispatchOp)


@pytest.mark.parametrize("opt_level", [2, 3])
def test_built_model_equals_numpy(opt_level):
    with transform.PassContext(opt_level=opt_level):
        executable = xrelay.build(parse(MODEL))
    np.testing.assert_allclose(executable(X), reference(X), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(executable({"data": X}), reference(X), rtol=1e-4, atol=1e-6)
    for _ in range(3):  # new data every call
        x = RNG.standard_normal(X.shape).astype(np.float32)
        np.testing.assert_allclose(executable(x), reference(x), rtol=1e-4, atol=1e-6)


def test_kernel_passes_skipped_run_op_by_op():
    with transform.PassContext(opt_level=3, disabled_pass=["FormKernels"]):
        executable = xrelay.build(parse(MODEL))
    assert not kernels_of(executable.module)
    program = executable.program
    assert not any(isinstance(step, ConvStep | TailIntoPad) for step in program.steps)
    np.testing.assert_allclose(executable(X), reference(X), rtol=1e-4, atol=1e-6)


def assert_executor_follows_ir(program: LinalgProgram) -> None:
    """Every fused step of `program` is a kernel's, each kernel ran as its ops and attributes say, and
    its memory is where the IR's placement puts it (`plan-memory`)."""
    assert_memory_follows_ir(program)
    hosts = {index for _, index, _ in program.kernels}
    for index, step in enumerate(program.steps):
        if isinstance(step, ConvStep | TailIntoPad):
            assert index in hosts, f"step {index} ({type(step).__name__}) fused outside any kernel"
    for dispatch, index, steps in program.kernels:
        step = program.steps[index]
        names = members(dispatch)
        epilogue = sum(1 for op in dispatch.body.block.ops if isinstance(op, linalg.GenericOp)
                       and all(str(it.data) == "parallel" for it in op.get_iterator_types()))
        padded = "tensor.pad" in names
        algorithm = dispatch.algorithm.data if dispatch.algorithm else None
        if dispatch.root.data == "conv" and algorithm not in (None, "generic"):
            assert isinstance(step, ConvStep), f"{names}: {type(step).__name__}"
            assert (step.tail is not None) == bool(epilogue)
            assert (step.pad is not None) == padded
        else:
            assert not isinstance(step, ConvStep)
            if epilogue and padded:
                assert isinstance(step, TailIntoPad)
            elif epilogue > 1 and dispatch.root.data == "elementwise":
                assert isinstance(step, FusedTail)
        split = dispatch.split_parts()
        parts = 1 if split is None else split[1]
        decided = step.tail.split if isinstance(step, TailIntoPad) else getattr(step, "split", parts)
        assert decided == parts, f"{names}: the step splits over {decided}, the IR says {parts}"
        for member in (program.steps[i] for i in steps if split is not None and parts > 1):  # 1 part: no cut
            cut = cut_axis(member)
            if cut == "one thread":
                assert parts == 1, f"{names}: the IR splits a product the executor runs on one thread"
                continue
            axes = cut if isinstance(cut, frozenset) else {cut}
            assert cut == "whole" or split[0] in axes, f"{names}: {type(member).__name__} cuts axis {cut}, the IR {split[0]}"
    in_kernels = {index for _, _, steps in program.kernels for index in steps}
    for index, step in enumerate(program.steps):  # outside kernels nothing splits
        if index not in in_kernels and getattr(step, "split", None) is not None:
            assert step.split == 1, f"step {index} ({type(step).__name__}) splits outside any kernel"


def cut_axis(step) -> int | frozenset | str | None:
    """The result axis a kernel's step cuts its work along, read from the step: a convolution's (as
    its kernel's split gave it), the planned matmul's side (the axes of its loops, cut as one) or the
    fused tail's loop; "whole" for a
    step that cuts nothing (a tail whose kernel names a loop it cannot cut runs whole, as a binder or a
    view does); None for a step that would choose for itself."""
    if isinstance(step, ConvStep):
        return step.split_axis
    if isinstance(step, TailIntoPad):
        step = step.tail
    if isinstance(step, FusedTail):
        chunked = step.members[0][0]
        if not chunked.cuttable:
            assert step.split == 1
            return "whole"
        results = [m.data for m in chunked.op.get_indexing_maps()][len(chunked.op.inputs)].results
        return next(a for a, e in enumerate(results) if getattr(e, "position", None) == chunked.loop)
    if isinstance(step, PadStep):  # (a "transpose" kernel's): its copy's rows
        return step.axis
    planned = getattr(step, "planned", None)  # the structured op step's fast path
    if isinstance(planned, PlannedContraction):
        if planned.along is None:
            return None
        # the side's loops are one axis of the matmul (cut at once)
        return frozenset(a for a, loop in enumerate(planned.out_loops) if loop in planned.groups[planned.along])
    if planned is not None:  # the taps of a product with a side of one element
        return "one thread"
    return "whole"


def assert_memory_follows_ir(program: LinalgProgram) -> None:
    """Each buffer of a placed function is the arena's bytes at its op's `kernel.offset`, each
    `kernel.in_place` insert's source is its slice of the destination and nothing else is; a function
    the pass did not place runs on fresh arrays."""
    arena_bytes = program.func.attributes.get(ARENA_BYTES)
    if arena_bytes is None:
        assert program.plan is None
        return
    plan = program.plan
    assert plan.peak_bytes == arena_bytes.value.data == plan.arena.nbytes
    base = plan.arena.ctypes.data
    offsets = 0
    for k, buffer in enumerate(plan.buffers):
        offset = buffer.op.attributes.get(OFFSET)
        if offset is not None and k not in plan.unused:
            assert plan.arrays[k].ctypes.data - base == offset.value.data, buffer.op
            offsets += 1
        else:
            assert k in plan.unused or k in plan.parent, f"{buffer.op} has memory but no offset"
    assert offsets == sum(1 for op in program.func.walk() if OFFSET in op.attributes)
    marked = [op for op in program.func.walk() if IN_PLACE in op.attributes]
    placed = [op for (source, dest, index, _), op in zip(program.memory.placements, program.memory.placement_ops)
              if plan.parent.get(source) == (dest, index)]
    assert marked == placed
    for child, (parent, index) in plan.parent.items():
        view = plan.arrays[parent][index]
        assert plan.arrays[child].ctypes.data == view.ctypes.data and plan.arrays[child].strides == view.strides


def test_executor_runs_the_algorithm_the_ir_names():
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(parse(MODEL))
    module = executable.module
    algorithms = [k.algorithm.data for k in kernels_of(module) if k.root.data == "conv"]
    # 16x16 output: F(4x4, 3x3) would leave 16 tiles (too few to beat im2col), F(2x2) 64; a 1x1 conv's
    # data is its patch matrix. Winograd only where its native kernel runs (not with XRELAY_NATIVE=0).
    assert algorithms == ["winograd-f2" if native_available() else "im2col", "im2col"]
    assert_executor_follows_ir(executable.program)
    for name in ("im2col", "generic", "winograd-f4") if native_available() else ("im2col", "generic"):
        edited = module.clone()
        first = next(k for k in kernels_of(edited) if k.root.data == "conv")
        first.algorithm = type(first.algorithm)(name)
        program = LinalgProgram(edited)
        assert_executor_follows_ir(program)
        np.testing.assert_allclose(program(X)[0], reference(X), rtol=1e-4, atol=1e-6)


def test_build_shows_every_phase_to_instruments():
    timing = PassTimingInstrument()
    with transform.PassContext(opt_level=3, instruments=[timing]):
        xrelay.build(parse(MODEL))
        lines = timing.render().splitlines()
    names = [(len(line) - len(line.lstrip("\t")), line.strip().split(":")[0]) for line in lines]
    assert names[0] == (0, "Build")
    assert (1, "optimize") in names and (1, "lower-to-linalg") in names
    assert names[-14:] == [(1, "kernels"), (2, "CanonicalizeInits"), (2, "ChannelsLast"), (2, "MatmulWeightsKMajor"),
                           (2, "SelectToMinMax"),
                           (2, "MaxPoolBeforeMonotonic"), (2, "WholeWindowAsReduction"), (2, "DropUnitDims"),
                           (2, "ExpandThroughCollapseShape"), (2, "SplitElementwiseBodies"), (2, "FormKernels"), (2, "ChooseConvAlgorithm"),
                           (2, "SplitKernels"), (2, "PlanMemory")]


def test_saved_build_runs_in_xrelay_run(tmp_path):
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(parse(MODEL))
    executable.save(tmp_path / "built.mlir")
    np.testing.assert_allclose(xrelay.Executable.load(tmp_path / "built.mlir")(X), reference(X), rtol=1e-4, atol=1e-6)
    np.save(tmp_path / "x.npy", X)
    done = subprocess.run([sys.executable, "-m", "xrelay.tools.xrelay_run", str(tmp_path / "built.mlir"),
                           "--input", f"data={tmp_path / 'x.npy'}", "-o", str(tmp_path / "out.npy")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), reference(X), rtol=1e-4, atol=1e-6)


def test_unknown_target_is_refused():
    with pytest.raises(ValueError, match="unknown target 'gpu'"):
        xrelay.build(parse(MODEL), target="gpu")


W3 = (RNG.standard_normal((4, 8, 1, 1)) * 0.3).astype(np.float32)
W4 = (RNG.standard_normal((4, 8, 1, 1)) * 0.3).astype(np.float32)
W5 = (RNG.standard_normal((4, 8, 3, 3)) * 0.3).astype(np.float32)

# SqueezeNet's fire module: the squeeze's ReLU is read by a 1x1 conv, then padded for a 3x3 conv.
FIRE = f"""
func.func @main(%data: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {{
  %w3 = nn.constant {dense(W3)} : tensor<4x8x1x1xf32>
  %w4 = nn.constant {dense(W4.reshape(8, 4, 1, 1))} : tensor<8x4x1x1xf32>
  %w5 = nn.constant {dense(W5.reshape(8, 4, 3, 3) / 3)} : tensor<8x4x3x3xf32>
  %s = nn.conv2d(%data, %w3) {{channels = 4, kernel_size = array<i64: 1, 1>}} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = nn.relu(%s) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %e1 = nn.conv2d(%r, %w4) {{channels = 8, kernel_size = array<i64: 1, 1>}} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  %e3 = nn.conv2d(%r, %w5) {{padding = array<i64: 1, 1, 1, 1>, channels = 8, kernel_size = array<i64: 3, 3>}} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  %o = nn.add(%e1, %e3) : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  func.return %o : tensor<1x8x6x6xf32>
}}
"""


def test_a_reader_before_the_pad_keeps_the_pad_out_of_the_kernel():
    from xrelay.dialects.dominance import verify_dominance

    formed = FormKernels()(lowering.lower(parse(FIRE)))
    verify_dominance(formed)
    squeeze = next(k for k in kernels_of(formed) if k.root.data == "conv")
    assert "tensor.pad" not in members(squeeze)  # the 1x1 conv reads the ReLU before the pad
    x = RNG.standard_normal((1, 8, 6, 6)).astype(np.float32)
    r = np.maximum(np.einsum("nchw,fc->nfhw", x, W3[:, :, 0, 0]), 0)
    padded = np.pad(r, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(padded, (3, 3), axis=(2, 3))
    expected = (np.einsum("nchw,fc->nfhw", r, W4.reshape(8, 4))
                + np.einsum("nchwij,fcij->nfhw", windows, W5.reshape(8, 4, 3, 3) / 3))
    np.testing.assert_allclose(LinalgProgram(formed)(x)[0], expected, rtol=1e-4, atol=1e-5)


def test_build_for_iree_lets_iree_form_its_dispatches():
    pytest.importorskip("iree.compiler")
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(parse(MODEL), target="iree")
    assert not kernels_of(executable.module)
    assert any(op.name == "linalg.matmul" for op in executable.module.walk())  # conv-to-matmul ran
    np.testing.assert_allclose(executable(X), reference(X), rtol=1e-4, atol=1e-6)


def test_op_count_diff_shows_kernel_formation():
    from xrelay.instrument import OpCountDiff

    differ = OpCountDiff()
    with transform.PassContext(opt_level=3, instruments=[differ]):
        xrelay.build(parse(MODEL))
        diff = {name: delta for _, name, delta in differ.get_pass_to_op_diff()}
    # the argument's transpose to NHWC copied into the first convolution's pad, two convolutions, the
    # max pool, the global average pool's sum, the dense, softmax's max and sum, and softmax's
    # subtraction of the max with its exp (one elementwise chain)
    assert diff["FormKernels"] == {"kernel.dispatch": 9}


@pytest.mark.parametrize("parts", [1, 2])
def test_executor_splits_as_the_split_attribute_says(parts, blas_workers, monkeypatch):
    """split-kernels with every threshold 0 writes `split = [axis, parts]` on every kernel; the executor
    then hands work to other threads (the Python workers, or the compiled kernels' C threads) exactly
    when parts > 1, and the answer is numpy's."""
    from xrelay.passes.kernels.split_kernels import SplitKernels
    from xrelay.runtime.native import conv_kernels, window_kernels
    from xrelay.runtime.parallel import threads

    with transform.PassContext(opt_level=3):
        module = xrelay.build(parse(MODEL)).module
    module = SplitKernels(threads=parts, min_conv_macs=0, min_matmul_macs=0, min_points=0)(module)
    # every kernel but softmax's two reductions to one value (no loop to cut); the first is the
    # argument's transpose into a pad, the dense layer's (one row) is cut along its columns
    assert [k.split_parts()[1] for k in kernels_of(module)] == [parts] * 6 + [1, parts, 1]
    handed = []
    original = threads._worker_pool  # every hand-off to Python worker threads goes through it
    monkeypatch.setattr(threads, "_worker_pool", lambda n: handed.append(n) or original(n))
    for kernels in (conv_kernels, window_kernels):  # every compiled call's thread count goes through it
        usable = kernels.usable_threads
        monkeypatch.setattr(kernels, "usable_threads", lambda n, usable=usable: (n > 1 and handed.append(n)) or usable(n))
    blas_workers(2)
    program = LinalgProgram(module)
    assert_executor_follows_ir(program)
    x = RNG.standard_normal(X.shape).astype(np.float32)
    np.testing.assert_allclose(program(x)[0], reference(x), rtol=1e-4, atol=1e-6)
    if conv_kernels.available():  # (the numpy fallback of pools, tails and convolutions runs whole)
        assert bool(handed) == (parts > 1)


def test_matmuls_are_cut_along_the_side_the_ir_names(blas_workers):
    """A product with more rows than columns is cut by rows, one with more columns by columns: the
    pass writes the side as the result axis and the executor cuts that side of the matmul it plans."""
    w1 = (RNG.standard_normal((24, 32)) * 0.2).astype(np.float32)
    w2 = (RNG.standard_normal((200, 24)) * 0.2).astype(np.float32)
    text = f"""
func.func @main(%x: tensor<96x32xf32>) -> tensor<96x200xf32> {{
  %w1 = nn.constant {dense(w1)} : tensor<24x32xf32>
  %w2 = nn.constant {dense(w2)} : tensor<200x24xf32>
  %d1 = nn.dense(%x, %w1) {{units = 24}} : (tensor<96x32xf32>, tensor<24x32xf32>) -> tensor<96x24xf32>
  %r = nn.relu(%d1) : (tensor<96x24xf32>) -> tensor<96x24xf32>
  %d2 = nn.dense(%r, %w2) {{units = 200}} : (tensor<96x24xf32>, tensor<200x24xf32>) -> tensor<96x200xf32>
  func.return %d2 : tensor<96x200xf32>
}}
"""
    from xrelay.passes.kernels.split_kernels import SplitKernels

    with transform.PassContext(opt_level=3):
        module = xrelay.build(parse(text)).module
    module = SplitKernels(threads=2, min_matmul_macs=0)(module)
    assert [k.split_parts() for k in kernels_of(module) if k.root.data == "matmul"] == [(0, 2), (1, 2)]
    blas_workers(2)
    program = LinalgProgram(module)
    assert_executor_follows_ir(program)
    planned = [getattr(program.steps[i], "planned", None) for _, _, steps in program.kernels for i in steps]
    assert [p.along for p in planned if isinstance(p, PlannedContraction)] == [1, 2]  # (B, M, N): M, then N
    x = RNG.standard_normal((96, 32)).astype(np.float32)
    np.testing.assert_allclose(program(x)[0], np.maximum(x @ w1.T, 0) @ w2.T, rtol=1e-4, atol=1e-5)


def test_squeeze_excitation_dense_runs_as_one_matmul():
    """A 1x1 convolution of a globally pooled image (a squeeze-excitation's dense layer: its output
    map indexes the 1x1 image's axes by 0) overwrites its output: its zero fill is dropped and it runs
    as one planned matmul (here over 100 channels, more than the taps kernel takes), equal to numpy."""
    from xrelay.dialects import nn
    from xrelay.frontend.builder import GraphBuilder
    b = GraphBuilder((1, 100, 5, 5))
    pooled = b.op(nn.GlobalAvgPool2DOp, b.input)
    dense = b.op(nn.BiasAddOp, b.conv2d(pooled, "reduce", 20, (1, 1)), b.param("reduce_bias", [20]))
    module = b.finish(b.op(nn.SigmoidOp, dense))
    params = {"reduce_weight": RNG.standard_normal((20, 100, 1, 1)).astype(np.float32),
              "reduce_bias": RNG.standard_normal(20).astype(np.float32)}
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    steps = executable.program.steps
    assert any(isinstance(getattr(step, "planned", None), PlannedContraction) for step in steps)
    x = RNG.standard_normal((1, 100, 5, 5)).astype(np.float32)
    v = x.astype(np.float64).mean(axis=(2, 3)) @ params["reduce_weight"][:, :, 0, 0].T + params["reduce_bias"]
    np.testing.assert_allclose(executable(x).reshape(1, 20), 1 / (1 + np.exp(-v)), rtol=1e-5, atol=1e-6)
