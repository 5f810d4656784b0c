"""xrelay's mutation fuzzer for `xrelay-opt` and `xrelay-run`.

Seeds are valid programs: every `.mlir` lit test (split at `// -----`), the tiny network, and the nn
seeds lowered to the linalg, memref and loops levels. Each case mutates one seed (token mutations:
delete, duplicate, swap, replace with an interesting token, change a number (to xDSL's dynamic-index
marker among others), truncate, retype the whole program (every f32 an f80, i0, bf16, ...); structural:
delete, duplicate, swap or splice lines) and runs it through `xrelay-opt` with a random pipeline
and opt level (sometimes with --disable-verify), or through `xrelay-run` at a random level with
generated inputs, good or bad (wrong shape or dtype, NaN, pickled, truncated, an `.npz` with a member
that is not an array, ...).

Every case is classified:

- ok: exit status 0;
- error: exit status 1 with exactly one `error:` line and no traceback (the wanted answer to bad input);
- crash: "internal error", an exception escaping the tool, a malformed diagnostic, or an output
  file left behind by a failed run;
- misplaced: a located diagnostic naming a line/column outside the file, or naming an op that
  is not on the line it points at;
- hang: the case used more than the time limit of CPU time (or ten times it of wall time).

Cases run in a worker process (in-process calls of the tools' `main`, fast); the parent kills and
restarts the worker when a case passes the time limit. Each new crash signature is shrunk (lines,
then tokens) to a small reproducer written under `--out`.

    python tests/fuzz/fuzzer.py --seconds 60 --seed 1        # or: make fuzz FUZZ_SECONDS=60 FUZZ_SEED=1
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import random
import re
import shutil
import sys
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIT_DIR = REPO / "tests" / "filecheck"
UPSTREAM_DIR = REPO / "tests" / "data" / "upstream"
CLASSES = ("ok", "error", "crash", "misplaced", "hang")
MODEL = "in.mlir"
OUTPUT = "out.mlir"

INTERESTING_TOKENS = [
    '"', "{", "}", "(", ")", "<", ">", "[", "]", ",", ":", "=", "->", "%0", "%x", "^bb0", "@main", "#map",
    "0", "1", "-1", "2147483648", "18446744073709551616", "99999999999", "1e309", "nan", "0.0", "-0",
    "f32", "f16", "f64", "i1", "i8", "i64", "index", "complex<f32>", "none", "tensor<f32>", "tensor<*xf32>",
    "tensor<?xf32>", "tensor<0x2xf32>", "memref<*xi32>", "memref<2xf32>", "dense<1.0>", "dense<>",
    "array<i64: 1, 2>", "array<i64>", "affine_map<(d0) -> (d0)>", "scf.yield", "linalg.yield", "func.return",
    "nn.relu", "nn.add", "nn.conv2d", "nn.dense", "nn.reshape", "nn.expand_dims", "unit", "true",
    "\"NHWC\"", "\"HWIO\"", "\"parallel\"", "\"reduction\"", "loc(unknown)", "//", "\n",
    "i0", "i2", "f80", "bf16", "ui8", "-9223372036854775808", "9223372036854775807",
]
ELEMENT_TYPES = ("f32", "f16", "f64", "i32", "i64", "i1", "i8", "index")
"""Element types a retype mutation replaces, everywhere in the program at once."""
EXOTIC_ELEMENT_TYPES = ELEMENT_TYPES + ("i0", "i2", "i128", "ui8", "si32", "bf16", "f80", "f128", "tf32",
                                        "f8E4M3FN", "complex<f32>")
"""What they are replaced by: xrelay's element types and ones it does not support (issue 31)."""
DYNAMIC_INDEX = "-9223372036854775808"
"""xDSL's marker of a dynamic index (a `?`); as a static index it made lowered IR unprintable (issue 31)."""
DISABLE_VERIFY = 0.15
"""The share of xrelay-opt cases run with --disable-verify: passes and the printer see unverified IR."""
PASSES = [
    "infer-type", "fold-constant", "simplify-inference", "backward-fold-scale-axis", "forward-fold-scale-axis",
    "fold-scale-axis", "canonicalize-ops", "dead-code-elimination", 'convert-layout{desired-layouts="nn.conv2d=NHWC,HWIO"}',
    "max-pool-first", "pool-after-pointwise-conv", "concat-first", "shuffle-into-conv", "preactivation-shift", "scale-into-conv-weight",
    "winograd-conv", "winograd-conv{tile=4}", "winograd-conv{tile=4 min_tiles=4}", "convert-nn-to-linalg", "linalg-bufferize", "linalg-to-loops",
    "conv-to-matmul", "conv-space-to-depth", "pool-as-window-slices", "iree-conv-tiles", "canonicalize", "cse", "dce",
    "form-kernels", "choose-conv-algorithm", "choose-conv-algorithm{winograd=false}", "split-kernels", "select-to-minmax", "canonicalize-inits", "channels-last",
    "matmul-weights-k-major{min_rows=1}", "drop-unit-dims", "expand-through-collapse",
    "max-pool-before-monotonic", "whole-window-as-reduction", "split-elementwise-bodies",
    "split-kernels{threads=2 min_points=0}", "plan-memory", "build",
    "tile-loops", "tile-loops{tile=3}", "sink-reduction-loops", "sink-reduction-loops{max_trips=2}",
    "unroll-jam-loops", "unroll-jam-loops{factor=2}", "fuse-multiply-add", "plan-buffers",
]
LEVELS = ("nn", "linalg", "memref", "loops")
INPUT_PLANS = ("good", "good", "good", "nan", "wrong-shape", "wrong-dtype", "missing", "extra", "pickled",
               "truncated", "npz-bad-member", "not-numpy", "rank0", "empty")
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[%@^#!]?[\w.$-]+|->|\S')


# --- seeds ----------------------------------------------------------------------------------------


def lit_seeds() -> list[str]:
    seeds = []
    for path in sorted(LIT_DIR.rglob("*.mlir")):
        for chunk in path.read_text().split("// -----"):
            if chunk.strip():
                seeds.append(chunk)
    return seeds


def upstream_seeds() -> list[str]:
    """Upstream MLIR as IREE writes it (tests/data/upstream: linalg on tensors, its bufferization, loops)."""
    return [path.read_text() for path in sorted(UPSTREAM_DIR.glob("*.mlir"))]


def model_seeds(rng: random.Random, lowered: int) -> list[str]:
    """The tiny network and up to `lowered` nn-level seeds (the tiny net first) printed at each
    lowered level (so the fuzzer mutates linalg, memref and scf text as the lowering writes it)."""
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.frontend import tiny
    from xrelay.lowering import lower

    tiny_text = str(tiny.get_net(image_shape=(2, 4, 4), channels=2, num_classes=3))
    nn_seeds = [tiny_text] + [s for s in lit_seeds() if "nn." in s and "scf." not in s and "linalg." not in s]
    seeds = [tiny_text]
    for text in [tiny_text] + rng.sample(nn_seeds[1:], min(lowered, len(nn_seeds) - 1)):
        for level in LEVELS[1:]:
            try:
                module = Parser(make_context(), text).parse_module()
                module.verify()
                seeds.append(str(lower(module, to=level)))
            except Exception:  # noqa: BLE001 - a seed that does not lower (error tests) is skipped
                break
    return seeds


# --- mutations -------------------------------------------------------------------------------------


def _tokens(text: str) -> list[re.Match]:
    return list(TOKEN.finditer(text))


def _number_mutation(token: str, rng: random.Random) -> str:
    choices = ["0", "-1", "1", str(int(token) + 1) if token.isdigit() else "2", "2147483648", "4294967296",
               "99999999999", "-" + token, token * 3, DYNAMIC_INDEX, "9223372036854775807"]
    return rng.choice(choices)


def mutate(text: str, rng: random.Random, seeds: list[str]) -> str:
    """One to three token or structural mutations of `text`."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        text = (_token_mutation if rng.random() < 0.7 else _line_mutation)(text, rng, seeds)
    return text


def _retype(text: str, rng: random.Random) -> str:
    """Every use of one element type in `text` replaced by another (a consistent program of an element
    type xrelay may not support, which a single token replacement rarely gives: it breaks the types)."""
    present = [t for t in ELEMENT_TYPES if re.search(_element_type_pattern(t), text)]
    if not present:
        return text
    return re.sub(_element_type_pattern(rng.choice(present)), rng.choice(EXOTIC_ELEMENT_TYPES), text)


def _element_type_pattern(element_type: str) -> str:
    # After a shape's `x`, `<`, a space, `:`, `(` or `,`: `tensor<2x3xf32>`, `: f32`, `(f32, ...`.
    return rf"(?<=[x<\s:(,]){re.escape(element_type)}(?![\w.])"


def _token_mutation(text: str, rng: random.Random, seeds: list[str]) -> str:
    tokens = _tokens(text)
    if not tokens:
        return text + rng.choice(INTERESTING_TOKENS)
    if rng.random() < 0.05:
        return _retype(text, rng)
    t = rng.choice(tokens)
    a, b = t.span()
    kind = rng.randrange(7)
    if kind == 0:  # delete
        return text[:a] + text[b:]
    if kind == 1:  # duplicate
        return text[:b] + " " + t.group() + text[b:]
    if kind == 2:  # swap with another token
        u = rng.choice(tokens)
        (a, b), (c, d) = sorted([t.span(), u.span()])
        if b > c:
            return text
        return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    if kind == 3:  # replace with an interesting token
        return text[:a] + rng.choice(INTERESTING_TOKENS) + text[b:]
    if kind == 4:  # numbers
        numbers = [m for m in tokens if m.group().lstrip("-").isdigit()]
        if numbers:
            t = rng.choice(numbers)
            a, b = t.span()
            return text[:a] + _number_mutation(t.group(), rng) + text[b:]
        return text[:a] + "0" + text[b:]
    if kind == 5:  # truncate
        return text[:rng.randrange(len(text) + 1)]
    # replace with a token from another program
    other = _tokens(rng.choice(seeds))
    return text[:a] + (rng.choice(other).group() if other else "") + text[b:]


def _line_mutation(text: str, rng: random.Random, seeds: list[str]) -> str:
    lines = text.split("\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.randrange(5)
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(j, lines[i])
    elif kind == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 3:  # a line from another program
        other = rng.choice(seeds).split("\n")
        lines.insert(i, rng.choice(other))
    else:  # a long line (lexer and echo paths)
        lines[i] = lines[i] + " " * rng.choice((1, 100, 5000)) + rng.choice(INTERESTING_TOKENS) + "a" * 40
    return "\n".join(lines)


# --- cases -----------------------------------------------------------------------------------------


@dataclass
class Case:
    tool: str  # "opt" or "run"
    text: str
    argv: list[str]  # MODEL/OUTPUT stand for the worker's files
    input_plan: str = "good"
    input_seed: int = 0

    def command(self) -> str:
        prog = "xrelay-opt" if self.tool == "opt" else "xrelay-run"
        return " ".join([prog, *self.argv])


def make_case(rng: random.Random, seeds: list[str]) -> Case:
    text = mutate(rng.choice(seeds), rng, seeds)
    if rng.random() < 0.5:
        pipeline = ",".join(rng.sample(PASSES, rng.randrange(0, 4)))
        argv = [MODEL] + (["-p", pipeline] if pipeline else []) + ["--opt-level", str(rng.randrange(4))]
        if rng.random() < DISABLE_VERIFY:
            argv.append("--disable-verify")
        if rng.random() < 0.5:
            argv += ["-o", OUTPUT]
        return Case("opt", text, argv)
    argv = [MODEL, "--level", rng.choice(LEVELS)]
    if rng.random() < 0.5:
        argv += ["-o", "out.npy"]
    return Case("run", text, argv, rng.choice(INPUT_PLANS), rng.randrange(2**31))


# --- the worker ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    status: int
    stderr: str
    escaped: str | None = None  # "Type: message (file:line)" of an exception that escaped main
    left_output: bool = False


def _main_arguments(text: str):
    """@main's argument names and types, or None when the text does not parse."""
    from xdsl.dialects import func

    from xrelay.dialects import make_context
    from xrelay.dialects.arguments import argument_names
    from xrelay.tools.diagnostics import LocatingParser

    try:
        module = LocatingParser(make_context(), text, MODEL).parse_module()
        functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
        for op in functions:  # @main, or the only function (upstream names it after the model)
            if op.sym_name.data == "main" or len(functions) == 1:
                return list(zip(argument_names(op), [a.type for a in op.body.block.args]))
    except Exception:  # noqa: BLE001 - a mutated program (no @main body, several blocks): no inputs
        return None
    return None


def _write_inputs(case: Case, directory: Path) -> list[str]:
    """Input files for an `xrelay-run` case, following its plan; the extra command-line arguments."""
    import numpy as np

    from xrelay.runtime.reference.interpreter import dtype_of

    rng = np.random.default_rng(case.input_seed)
    arguments = _main_arguments(case.text) or []
    extra: list[str] = []
    params: dict[str, np.ndarray] = {}
    for index, (name, type_) in enumerate(arguments):
        try:
            shape = tuple(type_.get_shape())
            dtype = dtype_of(type_.get_element_type())
        except Exception:  # noqa: BLE001 - not a shaped type: give it something anyway
            shape, dtype = (2,), np.dtype(np.float32)
        if any(d < 0 for d in shape) or np.prod(shape, dtype=np.float64) > 1e6:
            shape = (2,)
        value = (rng.standard_normal(shape) * 3).astype(dtype) if dtype.kind in "fc" else \
            rng.integers(-5, 5, shape).astype(dtype)
        plan = case.input_plan if index == 0 else "good"
        if plan == "nan" and dtype.kind == "f":
            value = np.full(shape, np.nan, dtype)
        elif plan == "wrong-shape":
            value = np.zeros(shape + (2,), dtype)
        elif plan == "wrong-dtype":
            value = value.astype(np.int32 if dtype.kind == "f" else np.float32)
        elif plan == "rank0":
            value = np.array(1.5, dtype)
        elif plan == "empty":
            value = np.zeros((0,), dtype)
        elif plan == "missing":
            continue
        if index % 2 == 0:
            params[name] = value
            continue
        path = directory / f"arg{index}.npy"
        if plan == "pickled":
            np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        elif plan == "truncated":
            buffer = io.BytesIO()
            np.save(buffer, value)
            path.write_bytes(buffer.getvalue()[: max(1, len(buffer.getvalue()) // 2)])
        elif plan == "not-numpy":
            path.write_text("not an array\n")
        else:
            np.save(path, value)
        # By name, by position, or in order (the arguments before it are bound by name from params.npz).
        spelling = rng.integers(3)
        extra += ["--input", f"{name}={path.name}" if spelling == 0 else f"{index}={path.name}" if spelling == 1
                  else f"@{path.name}"]
    if case.input_plan == "extra":
        params["no_such_argument"] = np.zeros(2, np.float32)
    if params or case.input_plan == "npz-bad-member":
        np.savez(directory / "params.npz", **params)
        if case.input_plan == "npz-bad-member":
            with zipfile.ZipFile(directory / "params.npz", "a") as archive:
                archive.writestr(arguments[0][0] if arguments else "x", b"not .npy data")
        extra += ["--params", "params.npz"]
    return extra


def run_case(case: Case, directory: Path) -> Outcome:
    """Run one case in this process, in `directory` (emptied first)."""
    from xrelay.tools import xrelay_opt, xrelay_run

    for entry in directory.iterdir():
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (directory / MODEL).write_text(case.text)
    argv = list(case.argv)
    if case.tool == "run":
        argv += _write_inputs(case, directory)
    outputs = [a for a in argv if a in (OUTPUT, "out.npy")]
    stdout, stderr = io.StringIO(), io.StringIO()
    escaped = None
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                status = (xrelay_opt.main if case.tool == "opt" else xrelay_run.main)(argv)
            except SystemExit as exit_:
                status = exit_.code if isinstance(exit_.code, int) else 1
            except BaseException as error:  # noqa: BLE001 - that is what the fuzzer looks for
                status = -1
                tb = error.__traceback__
                while tb is not None and tb.tb_next is not None:
                    tb = tb.tb_next
                where = f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}" if tb else "?"
                escaped = f"{type(error).__name__}: {str(error)[:200]} ({where})"
    finally:
        os.chdir(cwd)
    left = status != 0 and any((directory / o).exists() for o in outputs)
    return Outcome(status, stderr.getvalue()[-20000:], escaped, left)


def _worker(connection, directory: str, memory_limit: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    except (ImportError, ValueError, OSError):
        pass
    while True:
        case = connection.recv()
        if case is None:
            return
        try:
            outcome = run_case(case, Path(directory))
        except Exception as error:  # noqa: BLE001 - the fuzzer's own input generation: say so, don't die
            outcome = Outcome(-3, "", escaped=f"fuzzer error, not the tool's: {type(error).__name__}: {error}")
        connection.send(outcome)


WALL_FACTOR = 10


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process `pid` (Linux /proc; None elsewhere: wall time is used)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class Runner:
    """Runs cases in a worker process, restarting it after a hang."""

    def __init__(self, time_limit: float, memory_limit: int = 8 << 30):
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.directory = tempfile.mkdtemp(prefix="xrelay-fuzz-")
        self.context = multiprocessing.get_context("fork")
        self.process = None

    def _start(self) -> None:
        self.connection, child = self.context.Pipe()
        self.process = self.context.Process(target=_worker, args=(child, self.directory, self.memory_limit),
                                            daemon=True)
        self.process.start()

    def run(self, case: Case) -> Outcome | None:
        """The case's outcome, or None for a hang (or a worker that died).

        The limit is on the CPU time the worker spends on the case (a shared, loaded machine can
        starve a niced fuzzer for longer than the limit); a case that sleeps instead (blocked on a
        FIFO) is a hang after WALL_FACTOR times the limit."""
        if self.process is None or not self.process.is_alive():
            self._start()
        start_cpu, start_wall = _cpu_seconds(self.process.pid), time.monotonic()
        self.connection.send(case)
        while True:
            if self.connection.poll(min(1.0, self.time_limit)):
                try:
                    return self.connection.recv()
                except EOFError:
                    break
            cpu = _cpu_seconds(self.process.pid) - start_cpu if start_cpu is not None else None
            wall = time.monotonic() - start_wall
            if not self.process.is_alive() or (cpu if cpu is not None else wall) > self.time_limit \
                    or wall > WALL_FACTOR * self.time_limit:
                break
        died = not self.process.is_alive()
        self.process.kill()
        self.process.join()
        code, self.process = self.process.exitcode, None
        if died:  # a segfault or an abort in the tool, or a bug of the fuzzer's own: not a hang
            return Outcome(-2, "", escaped=f"worker died (exit code {code})")
        return None

    def close(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.connection.send(None)
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


# --- classification --------------------------------------------------------------------------------

LOCATED = re.compile(rf"^{re.escape(MODEL)}:(\d+):(\d+): error: (.*)$")
OP_MESSAGE = re.compile(r"^'([\w.$-]+)' op ")


def classify(case: Case, outcome: Outcome | None) -> tuple[str, str]:
    """(class, signature): the signature groups crashes of one kind (numbers and names blanked)."""
    if outcome is None:
        return "hang", "hang"
    if outcome.escaped is not None:
        return "crash", _signature("escaped " + outcome.escaped)
    if outcome.left_output:
        return "crash", "output file left by a failed run"
    if outcome.status == 0:
        return "ok", ""
    lines = outcome.stderr.splitlines()
    errors = diagnostics(lines)
    internal = next((line for line in errors if ": error: internal error" in line), None)
    if internal is not None:  # not a source line echoed under a diagnostic (a lit test's comment)
        return "crash", _signature(internal)
    if outcome.status != 1 or len(errors) != 1 or TRACEBACK.search(outcome.stderr):
        return "crash", _signature(f"malformed diagnostic (status {outcome.status}): {outcome.stderr[:200]}")
    problem = misplacement(case.text, errors[0])
    if problem:
        return "misplaced", _signature(problem)
    return "error", ""


TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.M)  # not an echoed source line's word
DIAGNOSTIC = re.compile(r"^[^\s:]+(?::\d+:\d+)?: error: ")


def diagnostics(lines: list[str]) -> list[str]:
    """The `... error: ...` lines of stderr, not counting the source lines echoed under a located one
    (a lit test's `// CHECK: xrelay-opt: error: ...` line may be echoed)."""
    found, skip = [], 0
    for line in lines:
        if skip:
            skip -= 1
        elif DIAGNOSTIC.match(line):
            found.append(line)
            skip = 2 if LOCATED.match(line) or re.match(r"^[^\s:]+:\d+:\d+: ", line) else 0
    return found


def misplacement(text: str, error: str) -> str | None:
    """Why a located diagnostic is wrong (outside the file, or an op's name not on its line)."""
    located = LOCATED.match(error)
    if located is None:
        return None
    line, column, message = int(located.group(1)), int(located.group(2)), located.group(3)
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return f"line {line} outside the file ({len(lines)} lines): {message}"
    if not 1 <= column <= len(lines[line - 1]) + 1:
        return f"column {column} outside line {line}: {message}"
    op = OP_MESSAGE.match(message)
    if op and "pass '" not in message and not any(name in lines[line - 1] for name in spellings(op.group(1))):
        return f"'{op.group(1)}' is not on line {line}: {message}"
    return None


def spellings(op_name: str) -> tuple[str, ...]:
    """How an op's name can stand on its line: in full, or, for `func` and `builtin` ops, without the
    dialect (`return`, `module`), since upstream MLIR prints `func` ops that way inside a function
    body and `builtin` ops that way everywhere."""
    dialect, _, short = op_name.partition(".")
    return (op_name, short) if dialect in ("func", "builtin") and short else (op_name,)


def _signature(text: str) -> str:
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", text)
    text = re.sub(r"\d+", "N", text)
    return text[:120]


# --- shrinking -------------------------------------------------------------------------------------


def shrink(case: Case, runner: Runner, wanted: tuple[str, str], budget: int = 150) -> Case:
    """A smaller case with the same class and signature: chunks of lines, then single tokens."""
    tries = 0

    def same(text: str) -> bool:
        nonlocal tries
        tries += 1
        candidate = Case(case.tool, text, case.argv, case.input_plan, case.input_seed)
        return classify(candidate, runner.run(candidate)) == wanted

    text = case.text
    # Ops first: drop an op and feed its first operand to its users (keeps a valid program valid).
    progress = True
    while progress and tries < budget:
        progress = False
        for candidate in _bypasses(text):
            if tries >= budget:
                break
            if same(candidate):
                text, progress = candidate, True
                break
    for unit in ("lines", "tokens"):
        pieces = text.split("\n") if unit == "lines" else [m.group() for m in _tokens(text)]
        join = "\n".join if unit == "lines" else " ".join
        if unit == "tokens" and (len(pieces) > 400 or not same(join(pieces))):
            break  # rejoining tokens changes the error (or too many tokens to try): keep the lines
        chunk = max(1, len(pieces) // 2)
        while chunk >= 1 and tries < budget:
            start, removed = 0, False
            while start < len(pieces) and tries < budget:
                candidate = pieces[:start] + pieces[start + chunk:]
                if candidate and same(join(candidate)):
                    pieces, removed = candidate, True
                else:
                    start += chunk
            if not removed:
                chunk //= 2
        text = join(pieces)
    return Case(case.tool, text, case.argv, case.input_plan, case.input_seed)


BYPASSABLE = re.compile(r"^[ \t]*(%[\w.$-]+) = [^\n(]*\((%[\w.$-]+)[^\n]*\n", re.M)


def _bypasses(text: str):
    """`text` without one `%a = op(%b, ...)` line, later uses of %a reading %b (last ops first)."""
    for found in reversed(list(BYPASSABLE.finditer(text))):
        result, operand = found.group(1), found.group(2)
        rest = re.sub(re.escape(result) + r"(?![\w.$-])", operand, text[found.end():])
        yield text[:found.start()] + rest


# --- the campaign ----------------------------------------------------------------------------------


@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)
    found: dict[str, tuple[str, Case]] = field(default_factory=dict)  # signature -> (class, first case)

    def render(self) -> str:
        total = sum(self.counts.values())
        lines = [f"{total} cases: " + ", ".join(f"{name} {self.counts[name]}" for name in CLASSES)]
        for signature, (kind, case) in self.found.items():
            lines.append(f"  {kind}: {signature}\n    {case.command()}")
        return "\n".join(lines)


def fuzz(seed: int, cases: int | None = None, seconds: float | None = None, time_limit: float = 20.0,
         out: Path | None = None, lowered_seeds: int = 6, shrink_budget: int = 150, progress=None) -> Report:
    rng = random.Random(seed)
    seeds = lit_seeds() + upstream_seeds() + model_seeds(rng, lowered_seeds)
    runner = Runner(time_limit)
    report = Report()
    deadline = time.monotonic() + seconds if seconds is not None else None
    try:
        n = 0
        while (cases is None or n < cases) and (deadline is None or time.monotonic() < deadline):
            n += 1
            case = make_case(rng, seeds)
            kind, signature = classify(case, runner.run(case))
            report.counts[kind] += 1
            if kind == "hang" and out is not None and report.counts["hang"] <= 20:
                _save(out, report.counts["hang"], kind, signature, case)  # every hang, not only the first
            if kind in ("crash", "misplaced", "hang") and signature not in report.found:
                small = shrink(case, runner, (kind, signature), shrink_budget) if kind != "hang" else case
                report.found[signature] = (kind, small)
                if out is not None and kind != "hang":
                    _save(out, len(report.found), kind, signature, small)
            if progress is not None and n % 500 == 0:
                progress(f"{n} cases: " + ", ".join(f"{k} {report.counts[k]}" for k in CLASSES))
    finally:
        runner.close()
    return report


def _save(out: Path, number: int, kind: str, signature: str, case: Case) -> None:
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{kind}-{number:03d}"
    stem.with_suffix(".mlir").write_text(case.text)
    stem.with_suffix(".txt").write_text(
        f"{signature}\ncommand (run in a directory holding the model as {MODEL}): {case.command()}\n"
        f"input plan: {case.input_plan} (seed {case.input_seed})\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, help="run for this long")
    parser.add_argument("--cases", type=int, help="run this many cases")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per case before it is a hang")
    parser.add_argument("--out", type=Path, default=Path("fuzz-out"), help="where reproducers are written")
    args = parser.parse_args(argv)
    if args.seconds is None and args.cases is None:
        args.cases = 300
    started = time.monotonic()
    print(f"fuzzing with seed {args.seed}", flush=True)
    report = fuzz(args.seed, args.cases, args.seconds, args.time_limit, args.out,
                  progress=lambda line: print(line, flush=True))
    print(report.render())
    print(f"{time.monotonic() - started:.0f} s; reproducers in {args.out}/" if report.found else
          f"{time.monotonic() - started:.0f} s")
    bad = sum(report.counts[k] for k in ("crash", "misplaced", "hang"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
