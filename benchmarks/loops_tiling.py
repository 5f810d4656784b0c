"""What the loop passes buy at the loops level: a model's loops as lowered against the same loops after
`tile-loops`, and after `tile-loops`, `sink-reduction-loops`, `unroll-jam-loops` and
`fuse-multiply-add`, and the model with its convolutions in NHWC (`convert-layout`, `fold-constant`)
whose loops are tiled along the width alone (`tile-loops{tile=W inner_tile=1024}`: the output
channels run whole and innermost), unrolled and jammed by W (`unroll-jam-loops{factor=W
remainder=true}`) and fused, the same after `winograd-conv{tile=M min_tiles=40}` (its 3x3 convolutions
as Winograd F(M x M, 3 x 3), F(2x2, 3x3) where F(M) leaves fewer than 40 tiles: batched matmuls),
and that after `plan-buffers` (its buffers views of one
arena), all run by the native loops executor (codegen/); optionally the linalg level too.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/loops_tiling.py \\
        [--model matmul|conv|resnet18] [--size 64] [--tile 32] [--jam 4] [--width-tile 4] [--winograd 4] \\
        [--linalg] \\
        [--rounds 5] [--block 3] [--threads 2]

`matmul` is nn.dense of 256x512 by 512x512; `conv` a 3x3 convolution, 64 to 64 channels over 56x56
(padding 1); `resnet18` ResNet-18 on a 1x3xSIZExSIZE image with its weights bound. `--linalg` adds
the model at the linalg level as `xrelay.build` makes it (xrelay's linalg executor, its default
threading) as a seventh contender.
Each contender runs in a process of its own (workers.py: no OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE),
compiles its module once before the timed turns (the compilation time is printed, 0 when the
library came from the cache), checks its result against the nn level, and takes `--block` timed
runs per turn; the turns alternate over `--rounds` rounds. Prints each contender's median and the
ratios of the medians, with the 1-minute load average seen during the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

from workers import Worker, alternate, close_all, serve, timed_runs


def model(name: str, size: int):
    """(nn-level module, its inputs by name) of a benchmark model (`size`: ResNet-18's image side)."""
    from xrelay.dialects import nn
    from xrelay.frontend import GraphBuilder, bind_params_by_name, resnet

    rng = np.random.default_rng(0)
    if name == "resnet18":
        module, params = resnet.get_workload(num_layers=18, image_shape=(3, size, size))
        return bind_params_by_name(module, params), {"data": rng.standard_normal((1, 3, size, size), np.float32)}
    b = GraphBuilder(None, "float32")
    if name == "matmul":
        shapes = {"x": (256, 512), "w": (512, 512)}
        x, w = (b.param(n, s) for n, s in shapes.items())
        module = b.finish(b.op(nn.DenseOp, x, w))
    else:
        shapes = {"x": (1, 64, 56, 56), "w": (64, 64, 3, 3)}
        x, w = (b.param(n, s) for n, s in shapes.items())
        module = b.finish(b.op(nn.Conv2DOp, x, w, padding=(1, 1, 1, 1)))
    return module, {n: rng.standard_normal(s, np.float32) for n, s in shapes.items()}


def nhwc_loops(module, width_tile: int, winograd: int = 0, plan: bool = False):
    """The loops of `module` with its convolutions in NHWC/HWIO (3x3 ones as Winograd F(winograd x
    winograd, 3 x 3) when `winograd` is set, F(2x2, 3x3) where that leaves fewer than 40 tiles),
    tiled along the width by `width_tile` (the channels whole, below the reductions), unrolled and
    jammed by `width_tile` (a partial tile's last points unjammed) and fused; with `plan`, its buffers
    placed in one arena."""
    from xrelay.lowering import lower
    from xrelay.passes import ConvertLayout, FoldConstant
    from xrelay.passes.fuse_multiply_add import FuseMultiplyAdd
    from xrelay.passes.plan_buffers import PlanBuffers
    from xrelay.passes.tile_loops import TileLoops
    from xrelay.passes.unroll_jam_loops import UnrollJamLoops
    from xrelay.passes.winograd_conv import WinogradConv

    module = FoldConstant()(ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]})(module))
    if winograd:
        module = WinogradConv(tile=winograd, min_tiles=40)(module)
    loops = TileLoops(tile=width_tile, inner_tile=1024)(lower(module, to="loops"))
    loops = FuseMultiplyAdd()(UnrollJamLoops(factor=width_tile, remainder=True)(loops))
    return PlanBuffers()(loops) if plan else loops


def worker(name: str, size: int, kind: str) -> None:
    """One contender: the model's loops natively (`kind` "0"), after tile-loops{tile=T} ("T"), after
    that, sink-reduction-loops, unroll-jam-loops{factor=F} and fuse-multiply-add ("TxF"), in NHWC
    tiled along the width by W ("nhwcW", `nhwc_loops`), the same after winograd-conv{tile=M min_tiles=40}
    ("nhwcWwM"), that after plan-buffers ("nhwcWwMp"), or at the linalg level (`kind` "linalg")."""
    import xrelay
    from xrelay.lowering import lower
    from xrelay.passes.fuse_multiply_add import FuseMultiplyAdd
    from xrelay.passes.sink_reduction_loops import SinkReductionLoops
    from xrelay.passes.tile_loops import TileLoops
    from xrelay.passes.unroll_jam_loops import UnrollJamLoops
    from xrelay.runtime import run
    from xrelay.codegen.program import NativeProgram

    module, inputs = model(name, size)
    started = time.perf_counter()
    if kind == "linalg":  # (a module no kernel pass has seen would run op by op, unplanned)
        program = xrelay.build(module).program
        info = {"compile_s": time.perf_counter() - started, "parallel_loops": 0}
    else:
        if kind.startswith("nhwc"):
            width_tile, _, winograd = kind[4:].partition("w")
            plan = winograd.endswith("p")
            loops = nhwc_loops(module, int(width_tile), int(winograd.rstrip("p") or 0), plan)
            kind = "0"
        else:
            loops = lower(module, to="loops")
        tile, _, factor = kind.partition("x")
        if int(tile):
            loops = TileLoops(tile=int(tile))(loops)
        if factor:
            loops = FuseMultiplyAdd()(UnrollJamLoops(factor=int(factor))(SinkReductionLoops()(loops)))
        program = NativeProgram(loops)
        info = {"compile_s": program.compile_seconds or 0.0, "parallel_loops": program.parallel_loops}
    args = [inputs[n] for n in program.arg_names]
    result = np.asarray(program(*args)[0], np.float64)
    expected = np.asarray(run(module, inputs), np.float64)
    info["error"] = float(np.abs(result - expected).max() / max(np.abs(expected).max(), 1e-30))

    def turn(command: dict) -> dict:
        call = (lambda: program(*args)) if kind == "linalg" else (lambda: program(*args, threads=command["threads"]))
        return {"times": timed_runs(call, command["block"])}

    serve(info, turn)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["matmul", "conv", "resnet18"], default="conv")
    parser.add_argument("--size", type=int, default=64, help="ResNet-18's image side (default 64)")
    parser.add_argument("--tile", type=int, default=32)
    parser.add_argument("--jam", type=int, default=4, help="unroll-jam-loops' factor in the third contender (default 4)")
    parser.add_argument("--width-tile", type=int, default=4,
                        help="the NHWC contender's tile along the width and unroll-jam factor (default 4)")
    parser.add_argument("--winograd", type=int, default=4, choices=[2, 4],
                        help="the Winograd contender's output tile, winograd-conv{tile=M} (default 4)")
    parser.add_argument("--linalg", action="store_true", help="also time the model at the linalg level")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    contenders = {"as lowered": "0", f"tile-loops{{tile={args.tile}}}": str(args.tile),
                  f"+ sink, jam{{{args.jam}}}, fma": f"{args.tile}x{args.jam}",
                  f"NHWC, width tile {args.width_tile}": f"nhwc{args.width_tile}",
                  f"+ winograd-conv{{tile={args.winograd} min_tiles=40}}": f"nhwc{args.width_tile}w{args.winograd}",
                  "+ plan-buffers": f"nhwc{args.width_tile}w{args.winograd}p"}
    if args.linalg:
        contenders["linalg level"] = "linalg"
    workers = {}
    try:
        for label, kind in contenders.items():
            workers[label] = Worker(__file__, [args.model, str(args.size), kind], args.threads)
        results, loads = alternate(workers, args.rounds, threads=args.threads, block=args.block)
    finally:
        close_all(workers)
    medians = {}
    for label, (times, *_rest) in results.items():
        info = workers[label].info
        medians[label] = statistics.median(times) * 1e3
        print(f"{args.model} {label:>37}: median {medians[label]:9.2f} ms over {len(times)} runs "
              f"(compiled in {info['compile_s']:.2f} s, {info['parallel_loops']} parallel loops, "
              f"max error {info['error']:.1e} of the largest |value|)")
    before, after, jammed, nhwc, winograd, planned, *linalg = medians.values()
    against = (f"; as lowered / linalg: {before / linalg[0]:.2f}x, tiled / linalg: {after / linalg[0]:.2f}x, "
               f"jammed / linalg: {jammed / linalg[0]:.2f}x, NHWC / linalg: {nhwc / linalg[0]:.2f}x, "
               f"Winograd / linalg: {winograd / linalg[0]:.2f}x, planned / linalg: {planned / linalg[0]:.2f}x"
               ) if linalg else ""
    print(f"as lowered / tiled: {before / after:.2f}x, tiled / jammed: {after / jammed:.2f}x, "
          f"jammed / NHWC: {jammed / nhwc:.2f}x, NHWC / Winograd: {nhwc / winograd:.2f}x, "
          f"Winograd / planned: {winograd / planned:.2f}x{against}; "
          f"{args.threads} threads; 1-min load average "
          f"{min(loads):.1f}-{max(loads):.1f}; {time.strftime('%H:%M:%S')}")
    print(json.dumps({"medians_ms": medians, "loads": loads}))


if __name__ == "__main__":
    main()
