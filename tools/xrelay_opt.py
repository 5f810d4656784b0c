"""`xrelay-opt`: xDSL's `xdsl-opt` driver that knows the nn dialect and runs passes through a PassContext.

    xrelay-opt model.mlir -p 'infer-type,fold-constant' --opt-level 3 --disabled-pass FoldConstant \\
        --pass-timing -o out.mlir

Everything `xdsl-opt` accepts keeps working (`-p`, `-o`, `--print-op-generic`, `--split-input-file`,
`--verify-diagnostics`, `--time-passes`, ...); the pipeline, though, runs as a `transform.Sequential`
of the parsed xDSL ModulePass instances inside one `transform.PassContext`, so

- `--opt-level N`, `--required-pass NAME`, `--disabled-pass NAME` filter the pipeline's passes with
  TVM's rules (a pass runs iff it is required, or not disabled and its opt level is <= N);
- every pass (nested ones too) goes through the context's instruments, which flags add
  (`--pass-timing` prints `PassTimingInstrument.render()` on stderr).

Decision: like TVM's `relay.build`, the Sequential itself is an instrumented pass, so the timing tree
has one top-level `sequential` line per input module with the pipeline's passes under it. Filtering
by opt level only exists for the children of a Sequential, and the extra line shows the pipeline's
total time. Its own ("self") time includes the IR verification xdsl-opt does after each pass.

Instrument flags (`--pass-timing` and the power tools) are declared in `tools/instrument_flags.py`
(`INSTRUMENT_FLAGS`, `register_instrument_flag`, re-exported here).

Input positions: ops parsed from a file carry their `file:line:col` as a `FileLineColLoc` (as in MLIR),
so verifier errors name the place; `--print-debuginfo` shows them.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from io import BytesIO, StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError, ShrinkException
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain

from xrelay import plugins, transform
from xrelay.instrument import PassInstrument
from xrelay.instrument.nesting import NestingInstrument, PassFrame
from xrelay.tools.diagnostics import (
    LocatingParser,
    ToolError,
    atomic_output,
    check_output_path,
    file_error,
    one_line_usage_errors,
    run_tool,
    verify_module,
)
from xrelay.tools.pipeline_spec import load_pass_class, parse_pipeline
from xrelay.tools.opt_cli import add_list_passes_flag, pipeline_failure, report_opt_level_skips, version_line
from xrelay.weights_file import load_weights

from xrelay.tools.instrument_flags import (  # noqa: F401 - register_instrument_flag is the extension point
    INSTRUMENT_FLAGS,
    InstrumentFlag,
    register_instrument_flag,
    split_names,
)

PROG = "xrelay-opt"


# --- the pipeline checks xdsl-opt does between passes -----------------------------------------


class PipelineChecks(NestingInstrument):
    """What `xdsl-opt` does between the pipeline's passes, as an instrument (installed last).

    After each direct child of the pipeline's Sequential (depth 1): verify the module (unless
    --disable-verify); before the next one print the IR (--print-between-passes). (`--time-passes`
    means `--pass-timing` here: tools/opt_cli.py.) It also remembers which pass failed first (the innermost), for the
    error message; a failed verification counts as its pass failing.
    """

    def __init__(self, verify: bool, print_between: bool):
        super().__init__()
        self.verify = verify
        self.print_between = print_between
        self.last_done: str | None = None
        self.failed_pass: str | None = None

    def entered(self, frame: PassFrame) -> None:
        if frame.depth == 1 and self.print_between and self.last_done is not None:
            print(f"IR after {self.last_done}:")
            Printer(stream=sys.stdout).print_op(frame.received)
            print("\n\n\n")

    def left(self, frame: PassFrame, mod: ModuleOp) -> None:
        if frame.depth != 1:
            return
        name = frame.info.name
        if self.verify:
            verify_module(mod, f"in the IR produced by pass '{name}'")
        self.last_done = name

    def failed(self, frame: PassFrame) -> None:
        if self.failed_pass is None:
            self.failed_pass = frame.info.name


# --- the driver ----------------------------------------------------------------------------------


class XRelayOptMain(xDSLOptMain):
    """xDSLOptMain with the nn dialect, xrelay's passes, a PassContext around the pipeline, instrument
    flags, MLIR-style diagnostics and an `-o` file written only on success."""

    version_format = version_line(PROG)
    pipeline_passes: list[ModulePass]

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="xrelay modular optimizer driver (xdsl-opt with the nn dialect)", args=args)

    # registration

    # xDSL's `Universe.get_multiverse()` raises on a name two plugins define, which would break every
    # run; `xrelay.plugins.multiverse()` fails only when such a name is used (docs/writing-a-pass.md).

    def register_all_dialects(self) -> None:
        # xrelay's dialects (nn; linalg, memref and bufferization as upstream writes them) first, then
        # every other dialect xdsl-opt knows.
        from xrelay.dialects import xrelay_dialects

        for name, factory in xrelay_dialects().items():
            self.ctx.register_dialect(name, factory)
        for name, factory in plugins.multiverse().all_dialects.items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        for name, factory in plugins.multiverse().all_frontends.items():
            self.available_frontends.setdefault(name, factory)
        # `.onnx` models are imported with their weights as nn.constant ops (see parse_chunk).
        self.available_frontends["onnx"] = lambda io: None

    def register_all_targets(self) -> None:
        for name, factory in plugins.multiverse().all_targets.items():
            self.available_targets.setdefault(name, factory)

    def register_all_passes(self) -> None:
        # Names only: a pass's module is imported when the pipeline (or --list-passes) uses it.
        from xrelay.pass_base import XRELAY_PASSES
        from xrelay.passes import ALL_PASSES

        for name, factory in plugins.multiverse().all_passes.items():
            self.register_pass(name, factory)
        for name, factory in ALL_PASSES.items():
            self.register_pass(name, factory)
        # A plugin's pass registered only by `@register_xrelay_pass` (its module imported by its entry point).
        for name, cls in XRELAY_PASSES.items():
            if name not in self.available_passes:
                self.register_pass(name, lambda cls=cls: cls)
        plugins.warn_problems(PROG)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        one_line_usage_errors(arg_parser)
        add_list_passes_flag(arg_parser, self.available_passes)
        group = arg_parser.add_argument_group("xrelay pass context")
        group.add_argument(
            "--opt-level", type=int, default=2, metavar="N",
            help="PassContext opt_level: a pipeline pass runs only if its opt level is <= N (default 2)",
        )
        group.add_argument(
            "--required-pass", action="append", metavar="NAME",
            help="always run this pass (TVM name or pipeline name; repeatable or comma-separated)",
        )
        group.add_argument(
            "--disabled-pass", action="append", metavar="NAME",
            help="never run this pass in the pipeline (repeatable or comma-separated)",
        )
        instruments = arg_parser.add_argument_group("pass instruments")
        for spec in INSTRUMENT_FLAGS:
            instruments.add_argument(spec.flag, help=spec.help, **spec.options)

    # pipeline

    def setup_pipeline(self) -> None:
        """Parse `-p` into pass instances; errors point into the pipeline text."""
        self.pipeline_passes = parse_pipeline(self.args.passes, self.available_passes)
        # Kept for code written against xDSLOptMain; passes run through `run_pipeline`.
        self.pipeline = PassPipeline(tuple(self.pipeline_passes))

    def make_pass_context(self) -> tuple[transform.PassContext, list[tuple[InstrumentFlag, PassInstrument]]]:
        """The PassContext of the run: opt level, required/disabled passes, flag instruments, checks.

        The pipeline's passes are imported (setup_pipeline); a pass name given in a flag, or one a pass
        runs nested, is found in the registry, which imports every pass when asked a name it lacks."""
        if self.pipeline_passes:
            # Build the shared xDSL context now, or the first pass's timing would include it.
            transform.xdsl_context()
        flagged = [(spec, inst) for spec in INSTRUMENT_FLAGS if (inst := spec.make(self.args, self)) is not None]
        instruments: list[PassInstrument] = [inst for _, inst in flagged]
        self.checks = PipelineChecks(
            verify=not self.args.disable_verify,
            print_between=self.args.print_between_passes,
        )
        instruments.append(self.checks)
        context = transform.PassContext(
            opt_level=self.args.opt_level,
            required_pass=self.pass_names(self.args.required_pass, "--required-pass"),
            disabled_pass=self.pass_names(self.args.disabled_pass, "--disabled-pass"),
            instruments=instruments,
        )
        return context, flagged

    def pass_names(self, values: Sequence[str] | None, flag: str) -> list[str]:
        """The names given (pipeline or TVM names; PassContext matches either). A name no pass has is
        an error here (a typo would be silent)."""
        from xrelay.instrument.pass_names import resolve_pass_names

        names: list[str] = []
        for name in split_names(values):
            names.append(name)
            if name in self.available_passes:  # also a pass only this tool has: its TVM name too
                info_name = getattr(load_pass_class(self.available_passes, name, flag), "tvm_name", name)
                if info_name != name:
                    names.append(info_name)
                continue
            try:
                resolve_pass_names([name], flag, strict=True)
            except ValueError as error:
                raise ToolError(str(error)) from None
        return names

    def run_pipeline(self, module: ModuleOp) -> ModuleOp:
        """Run the pipeline on `module` as a Sequential in the current PassContext."""
        if not self.pipeline_passes:
            return module
        pipeline = transform.Sequential(self.pipeline_passes)
        try:
            return pipeline(module)
        except ToolError:
            raise
        except Exception as error:
            from xrelay.instrument.numerical_bisect import NumericalBisectError
            from xrelay.instrument.reproducer import CrashReproducer

            if isinstance(error, NumericalBisectError):  # the instrument refused the input: no pass failed
                raise ToolError(str(error)) from error
            # Located at `failing_op` (set by xrelay's rewrite_module on any exception a pattern raised,
            # and by the lowering passes) or at the op xDSL's verifier blames; names the reproducer.
            written = [inst.path for inst in transform.PassContext.current().instruments or ()
                       if isinstance(inst, CrashReproducer) and inst.written]
            raise pipeline_failure(error, module, self.checks.failed_pass, written) from error

    # input and output

    def output_resulting_program(self, prog: ModuleOp) -> str:
        try:
            return super().output_resulting_program(prog)
        except Exception:
            # xDSL's printer fails on some malformed ops (a static index equal to its dynamic-index
            # marker); only unverified IR (--disable-verify) gets here: name the op as the verifier does.
            verify_module(prog, "so the output cannot be printed")
            raise

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        frontend = self.args.frontend or file_extension
        if frontend == "onnx":
            from xrelay.tools.onnx_input import import_onnx

            return import_onnx(chunk.read(), self.get_input_name())[0]
        if frontend != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        module = LocatingParser(self.ctx, chunk.read(), self.get_input_name(), start_offset).parse_module(
            not self.args.no_implicit_module)
        load_weights(module, self.get_input_name(), required=False)  # a saved build's: printed inline
        return module

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        # With -f, the file's extension does not matter (xDSL would still reject `.txt`).
        if self.args.input_file in (None, "-"):  # `-` is standard input, as for MLIR's tools
            stream, extension = BytesIO(sys.stdin.buffer.read()), "mlir"
        else:
            stream, extension = super().get_input_stream()
        return stream, parse_spec(self.args.frontend).name if self.args.frontend else extension

    def get_input_name(self) -> str:
        return "<stdin>" if self.args.input_file in (None, "-") else self.args.input_file

    def prepare_input(self):
        try:
            return super().prepare_input()
        except OSError as error:
            raise file_error(error, "input file") from None
        except ValueError as error:  # unrecognised extension
            raise ToolError(f"{error} (use -f mlir to read it as MLIR)", self.get_input_name()) from None

    def run(self) -> int:
        """Parse each input chunk, run the pipeline, print; `-o` is written only if everything succeeded."""
        if self.args.output_file is not None:
            check_output_path(self.args.output_file)
        chunks, file_extension = self.prepare_input()
        to_file = self.args.output_file is not None
        replaying = getattr(self.args, "run_reproducer", None) is not None
        output = StringIO() if to_file or replaying else sys.stdout
        context, flagged = self.make_pass_context()
        report_opt_level_skips(self.pipeline_passes, context)
        try:
            with context:
                try:
                    for index, (chunk, offset) in enumerate(chunks):
                        try:
                            if index > 0:
                                output.write("// -----\n")
                            self.process_chunk(chunk, file_extension, offset, output)
                        finally:
                            chunk.close()
                finally:
                    for spec, instrument in flagged:
                        if spec.finish is not None:
                            spec.finish(instrument, self)
        except ShrinkException:
            print("Success, can shrink")
            sys.exit(0)
        if self.args.shrink:
            print("Failure, can't shrink")
            sys.exit(1)
        if replaying:
            raise _not_reproduced(self.args.run_reproducer, self.args.passes)
        if to_file:
            with atomic_output(self.args.output_file) as f:
                f.write(output.getvalue().encode())
        # The output is the pipeline's (valid) result; a drift found is the run's answer, for scripts.
        return 1 if any(getattr(inst, "first_drift", None) is not None for _, inst in flagged) else 0

    def process_chunk(self, chunk: IO[bytes], file_extension: str, offset: int, output: IO[str]) -> None:
        """One input module: parse, verify, run the pipeline, print (xdsl-opt's diagnostics flags kept)."""
        try:
            try:
                module = self.parse_chunk(chunk, file_extension, offset)
            except ParseError as error:
                error.span = _with_line_offset(error.span, offset)
                raise
            except UnicodeDecodeError as error:
                raise ToolError(f"not a UTF-8 text file ({error.reason} at byte {error.start})",
                                self.get_input_name()) from None
            if module is None:
                return
            if not self.args.disable_verify:
                verify_module(module)
            module = self.run_pipeline(module)
            output.write(self.output_resulting_program(module))
            output.flush()
        except ParseError as error:
            if not self.args.parsing_diagnostics:
                raise
            print(error)
        except ToolError as error:
            if not (self.args.verify_diagnostics and isinstance(error.__cause__, DiagnosticException)):
                raise
            _print_like_xdsl(error.__cause__)
        except DiagnosticException as error:
            if not self.args.verify_diagnostics:
                raise
            _print_like_xdsl(error)


def _not_reproduced(path: str, pipeline: str) -> ToolError:
    """The error of a `--run-reproducer` whose pipeline ran without the failure it recorded."""
    from xrelay.instrument.reproducer import read_reproducer

    recorded = read_reproducer(path)
    what = f"pass '{recorded.failed_pass}' failing with {recorded.error}" if recorded.error else "a failure"
    return ToolError(f"the reproducer recorded {what}, but pipeline '{pipeline}' ran without error "
                     "(not reproduced)", path)


def _print_like_xdsl(error: DiagnosticException) -> None:
    """`--verify-diagnostics` output, exactly as xdsl-opt prints it (message, then notes), on stdout."""
    print(error)
    for note in getattr(error, "__notes__", ()):
        print(note)


def _with_line_offset(span: Span, offset: int) -> Span:
    return dataclasses.replace(span, line_offset=offset)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: returns the exit status (0 success, 1 error)."""
    return run_tool(PROG, lambda: XRelayOptMain(argv).run())


if __name__ == "__main__":
    sys.exit(main())
