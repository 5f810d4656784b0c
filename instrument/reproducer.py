"""CrashReproducer: when a pass raises, write one `.mlir` file that replays the failure.

The file is the IR the failing pass received, preceded by comment lines (so it stays valid input for
`xrelay-opt`) holding the pipeline that fails on it and the PassContext settings, each value JSON:

    // xrelay-reproducer: failed-pass: "FoldConstant"
    // xrelay-reproducer: depth: 1
    // xrelay-reproducer: error: "ValueError: boom"
    // xrelay-reproducer: pipeline: "fold-constant"
    // xrelay-reproducer: opt-level: 3
    // xrelay-reproducer: required-pass: []
    // xrelay-reproducer: disabled-pass: []
    // xrelay-reproducer: config: {}
    // xrelay-reproducer: full-pipeline: "infer-type,fold-constant"
    builtin.module { ... }

`xrelay-opt --run-reproducer file.mlir` (or `run_reproducer(path)`) runs `pipeline` on the IR under
those settings and fails the same way.

How a failure is seen: TVM's instrument protocol has no exception hook, so xrelay's PassContext calls
`run_after_pass_failed(mod, info)` — with the module the pass received — on the instruments whose
`run_before_pass` ran, while the exception propagates (innermost pass first; `sys.exc_info()` is the
error). The first call for an exception writes the file; the calls for the enclosing passes of the
same exception are ignored, so the reproducer is the smallest: the innermost failing pass and its
input (MLIR's "local" reproducer). A failure that only an enclosing pass sees (e.g. xrelay-opt's
verifier rejecting a pass's output after the pass returned) is reported at that enclosing pass — for
xrelay-opt's pipeline that is `sequential`, the whole pipeline on its input (MLIR's default reproducer).
Nothing is kept but a reference to the received module: passes never mutate their input.

`pipeline` is the failing pass's pipeline text: `pass_specs[name]` when given (xrelay-opt maps
`sequential` to the whole pipeline), else the failing instance's own spec with its options when it is
an xDSL ModulePass (every xrelay pass, a wrapped xDSL pass: `boom{fail_in="apply"}`), else the
pipeline name of the pass registered under that PassInfo name, else the PassInfo name itself if it
is spelled like a pipeline name. A pass with none (a Python `module_pass` named `PythonOnly`) gets an
empty pipeline, which the replay rejects with a clear error.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from xrelay.instrument.pass_context import PassContext
from xrelay.instrument.nesting import NestingInstrument, PassFrame
from xrelay.output_file import open_output

PREFIX = "// xrelay-reproducer: "
_PIPELINE_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_KEYS = ("failed-pass", "depth", "error", "pipeline", "opt-level", "required-pass", "disabled-pass", "config",
         "full-pipeline")


def registered_pipeline_name(pass_name: str) -> str | None:
    """The pipeline name of the xrelay pass whose PassInfo name is `pass_name` (`FoldConstant` ->
    `fold-constant`), or `pass_name` itself if it is an xDSL pass's pipeline name; else None."""
    from xdsl.transforms import get_all_passes

    from xrelay.instrument.xdsl_pass import registered_pipeline_passes

    for pipeline_name, load in registered_pipeline_passes().items():
        if pass_name in (pipeline_name, getattr(load(), "tvm_name", None)):
            return pipeline_name
    return pass_name if pass_name in get_all_passes() else None


@dataclass(frozen=True)
class Reproducer:
    """A reproducer's header: what failed, and the pipeline and PassContext settings that replay it."""

    pipeline: str
    opt_level: int = 2
    required_pass: tuple[str, ...] = ()
    disabled_pass: tuple[str, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    failed_pass: str = ""
    depth: int = 0
    error: str = ""
    full_pipeline: str | None = None

    def header(self) -> str:
        """The comment lines that start a reproducer file."""
        values = {
            "failed-pass": self.failed_pass, "depth": self.depth, "error": self.error, "pipeline": self.pipeline,
            "opt-level": self.opt_level, "required-pass": list(self.required_pass),
            "disabled-pass": list(self.disabled_pass), "config": self.config,
        }
        if self.full_pipeline is not None:
            values["full-pipeline"] = self.full_pipeline
        return "".join(f"{PREFIX}{key}: {json.dumps(value, default=repr)}\n" for key, value in values.items())

    def pass_context(self, instruments: list[object] | tuple[object, ...] = ()) -> PassContext:
        """A PassContext with the recorded settings (and the given instruments)."""
        return PassContext(self.opt_level, self.required_pass, self.disabled_pass, instruments, self.config)


def parse_reproducer_header(text: str, path: str = "<reproducer>") -> Reproducer:
    """Read the `// xrelay-reproducer:` lines at the top of `text`; ValueError (naming `path:line`)
    when there are none, a line is malformed or `pipeline` is missing or empty."""
    values: dict[str, Any] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith(PREFIX):
            if not values and not line.strip():
                continue
            break
        key, sep, raw = line[len(PREFIX):].partition(": ")
        if not sep or key not in _KEYS:
            raise ValueError(f"{path}:{number}: malformed reproducer line (expected '{PREFIX}KEY: JSON', "
                             f"KEY one of {', '.join(_KEYS)})")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: bad value for '{key}': {error}") from None
        if key in ("required-pass", "disabled-pass") and not (
            isinstance(values[key], list) and all(isinstance(name, str) for name in values[key])
        ):
            raise ValueError(f"{path}:{number}: '{key}' must be a list of pass names, got {raw.strip()}")
    if not values:
        raise ValueError(f"{path}: not an xrelay reproducer (no '{PREFIX.strip()}' lines at the top)")
    pipeline = values.get("pipeline")
    if not isinstance(pipeline, str) or not pipeline:
        failed = values.get("failed-pass", "?")
        raise ValueError(f"{path}: the reproducer has no pipeline to replay (pass '{failed}' has no pipeline name)")
    try:
        return Reproducer(
            pipeline=pipeline,
            opt_level=int(values.get("opt-level", 2)),
            required_pass=tuple(values.get("required-pass", ())),
            disabled_pass=tuple(values.get("disabled-pass", ())),
            config=dict(values.get("config", {})),
            failed_pass=str(values.get("failed-pass", "")),
            depth=int(values.get("depth", 0)),
            error=str(values.get("error", "")),
            full_pipeline=values.get("full-pipeline"),
        )
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: bad reproducer settings: {error}") from None


def read_reproducer(path: str | os.PathLike[str]) -> Reproducer:
    """The header of the reproducer file at `path` (see `parse_reproducer_header`)."""
    with open(path) as f:
        head = []
        for line in f:  # the header is at the top; do not read megabytes of IR for it
            if line.strip() and not line.startswith(PREFIX):
                break
            head.append(line)
    return parse_reproducer_header("".join(head), os.fspath(path))


def run_reproducer(
    path: str | os.PathLike[str],
    extra_passes: Mapping[str, Callable[[], type]] | None = None,
    instruments: list[object] | tuple[object, ...] = (),
) -> Any:
    """Replay a reproducer in Python: parse its IR, run its pipeline in a PassContext with its settings.
    Returns the resulting module — or raises what the failing pass raised. `extra_passes` adds
    pipeline names (name -> loader of the xDSL ModulePass class) to xrelay's and xDSL's passes."""
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from xrelay.dialects import make_context
    from xrelay.instrument.pass_manager import Sequential
    from xrelay.instrument.xdsl_pass import registered_pipeline_passes
    from xrelay.plugins import multiverse

    reproducer = read_reproducer(path)
    with open(path) as f:
        module = Parser(make_context(), f.read(), os.fspath(path)).parse_module()
    available = {**get_all_passes(), **multiverse(plugins_only=True).all_passes, **registered_pipeline_passes(),
                 **(extra_passes or {})}
    passes = PassPipeline.parse_spec(available, reproducer.pipeline).passes
    with reproducer.pass_context(instruments):
        return Sequential(list(passes))(module)


class CrashReproducer(NestingInstrument):
    """Writes a reproducer to `path` when a pass raises (see the module docstring); `written` lists the
    reproducers written, as `Reproducer` headers.

    `pass_specs` maps PassInfo names to pipeline text; `full_pipeline` is recorded for information.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        pass_specs: Mapping[str, str] | None = None,
        full_pipeline: str | None = None,
    ) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self.pass_specs = dict(pass_specs or {})
        self.full_pipeline = full_pipeline
        self.written: list[Reproducer] = []
        self._reported: BaseException | None = None

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self._reported = None

    def entered(self, frame: PassFrame) -> None:
        running = PassContext.current().running_passes
        frame.state = running[-1] if running and running[-1].info is frame.info else None

    def failed(self, frame: PassFrame) -> None:
        error = sys.exc_info()[1]
        if error is not None and self._already_reported(error):
            return
        self._reported = error
        self.write(frame.received, frame.info, error, depth=frame.depth, pass_=frame.state)

    def _already_reported(self, error: BaseException) -> bool:
        seen: set[int] = set()
        cause: BaseException | None = error
        while cause is not None and id(cause) not in seen:
            if cause is self._reported:
                return True
            seen.add(id(cause))
            cause = cause.__cause__ or cause.__context__
        return False

    def pipeline_of(self, pass_name: str, pass_: Any = None) -> str:
        """The pipeline text that runs the pass named `pass_name` ("" when it has none); `pass_`, the
        running instance, gives its options."""
        spec = self.pass_specs.get(pass_name)
        if spec is None and pass_ is not None:
            spec = _instance_spec(pass_)
        if spec is None:
            spec = registered_pipeline_name(pass_name)
        if spec is None and _PIPELINE_NAME.fullmatch(pass_name):
            spec = pass_name  # `transform.wrap` names an xDSL pass by its pipeline name
        return spec or ""

    def write(self, mod: Any, info: Any, error: BaseException | None = None, *, depth: int | None = None,
              pass_: Any = None) -> Reproducer:
        """Write the reproducer for `info`'s pass (the instance `pass_` when known) failing on `mod` at
        `depth` (default: the number of passes running) (`open_output`: never a partial file)."""
        ctx = PassContext.current()
        reproducer = Reproducer(
            pipeline=self.pipeline_of(info.name, pass_),
            opt_level=ctx.opt_level,
            required_pass=tuple(ctx.required_pass),
            disabled_pass=tuple(ctx.disabled_pass),
            config=dict(ctx.config),
            failed_pass=info.name,
            depth=len(self.running) if depth is None else depth,
            error="" if error is None else f"{type(error).__name__}: {error}".splitlines()[0],
            full_pipeline=self.full_pipeline,
        )
        with open_output(self.path) as f:
            f.write(reproducer.header())
            f.write(str(mod).rstrip("\n") + "\n")
        self.written.append(reproducer)
        return reproducer


def _instance_spec(pass_: Any) -> str | None:
    """`pass_`'s pipeline text with its options (`boom{fail_in="apply"}`) when it is an xDSL
    ModulePass (an xrelay pass) or wraps one (`transform.wrap`), else None."""
    from xdsl.passes import ModulePass

    module_pass = getattr(pass_, "module_pass", pass_)
    if not isinstance(module_pass, ModulePass):
        return None
    return str(module_pass.pipeline_pass_spec())
