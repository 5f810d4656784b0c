"""`xrelay-import-onnx`: an ONNX model file to an nn-level `.mlir` module.

    xrelay-import-onnx model.onnx -o model.mlir                          # weights as nn.constant ops
    xrelay-import-onnx model.onnx -o model.mlir --params-out params.npz  # weights stay @main parameters
    xrelay-import-onnx model.onnx --shape data=1,3,224,224 -o model.mlir # fix dynamic input dimensions

A model that cannot be imported (not ONNX, truncated, unsupported ops, dynamic dimensions) is one
diagnostic and exit status 1, and no output file is written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from xrelay.tools.diagnostics import ToolError, atomic_output, check_output_path, one_line_usage_errors, run_tool
from xrelay.tools.onnx_input import import_onnx, parse_shapes
from xrelay.tools.opt_cli import add_version_flag
from xrelay.tools.progress import Progress

PROG = "xrelay-import-onnx"


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Import an ONNX model as an nn-level .mlir module.")
    parser.add_argument("model", help="the .onnx model file")
    parser.add_argument("-o", "--output", metavar="OUT.mlir", help="write the module here (default: stdout)")
    parser.add_argument("--params-out", metavar="PARAMS.npz",
                        help="keep the weights as @main parameters and write their values here")
    parser.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                        help="the shape of input NAME (fixes dynamic dimensions; repeatable)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress on stderr (default: only when stderr is a terminal)")
    add_version_flag(parser, PROG)
    return one_line_usage_errors(parser)


def run(args: argparse.Namespace) -> int:
    shapes = parse_shapes(args.shape)
    for path in (args.output, args.params_out):
        if path is not None:
            check_output_path(path)
    if args.params_out is not None and not args.params_out.endswith(".npz"):
        raise ToolError(f"--params-out '{args.params_out}' must end in .npz")
    progress = Progress(sys.stderr, args.progress if args.progress is not None else sys.stderr.isatty(), PROG)
    try:
        progress.update(f"importing {args.model}")
        module, params = import_onnx(args.model, args.model, shapes, bind=args.params_out is None,
                                     progress=progress.update)
        progress.update("printing")
        text = str(module) + "\n"
    finally:
        progress.close()
    if args.params_out is not None:
        with atomic_output(args.params_out) as f:
            np.savez(f, **params)
    if args.output is None:
        sys.stdout.write(text)
    else:
        with atomic_output(args.output) as f:
            f.write(text.encode())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    return run_tool(PROG, lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
