"""NumericalBisect: run the model after every pass that changed the IR and name the first pass whose
outputs drift from those of the pipeline's input.

The reference is computed when a top-level pass receives a module that is not the result of the
previous top-level pass (the start of a pipeline; `mod = A(mod); mod = B(mod)` is one pipeline).
Inputs are the given arrays; every other `@main` argument gets seeded values, so an unbound model
needs nothing: by TVM's parameter-name suffixes, `*var` and `*gamma` (variances, scales) uniform in
[0.5, 1.5), `*weight` TVM's Xavier uniform (activations stay finite through deep models), other
floats standard normal, integers in [0, 10). The model runs with `xrelay.runtime.run` (the nn-level
numpy kernels). Reference outputs that are not finite are an error: NaN compares equal to NaN, so
no pass could be seen to drift.

A pass's outputs drift when, for some output, `|out - ref| <= atol + rtol * |ref|` fails anywhere
(numpy's `allclose`), when the outputs' number or shapes changed, or when the model no longer runs.
Each check reports `max abs` = max |out - ref| and `max rel` = max |out - ref| / |ref| over the
elements with ref != 0. Passes finish innermost first, so the first drifting pass is the culprit, not
the Sequential around it. Report lines go to `stream` (default stderr):

    numerical-bisect: FoldConstant (depth 1): max abs 1.19e-07, max rel 4.02e-06
    numerical-bisect: PerturbConstant (depth 1): max abs 2.50e-01, max rel 9.91e-01 DRIFT
    numerical-bisect: first drifting pass: PerturbConstant (depth 1): max abs 2.50e-01, max rel 9.91e-01 (rtol 1e-05, atol 1e-06)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from xrelay.instrument.nesting import NestingInstrument, PassFrame
from xrelay.instrument.print_ir import module_changed


class NumericalBisectError(RuntimeError):
    """The reference outputs cannot be computed (bad or missing inputs, a module that does not run)."""


@dataclass(frozen=True)
class DriftCheck:
    """The comparison after one pass: its name and depth, the error figures, and whether it drifted
    (`error` says why when the model did not run or its outputs changed shape)."""

    name: str
    depth: int
    max_abs: float
    max_rel: float
    drifted: bool
    error: str = ""

    def describe(self) -> str:
        """`NAME (depth D): max abs A, max rel R` (or the error)."""
        if self.error:
            return f"{self.name} (depth {self.depth}): {self.error}"
        return f"{self.name} (depth {self.depth}): max abs {self.max_abs:.2e}, max rel {self.max_rel:.2e}"


def seeded_inputs(mod: Any, given: Mapping[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """`given` plus seeded values for every other `@main` argument; a given name that is not an
    argument is a ValueError."""
    from xrelay.dialects.arguments import argument_names
    from xrelay.dialects.constant import dtype_of
    from xrelay.runtime.initializers import xavier_uniform
    from xrelay.runtime.reference.interpreter import find_main

    main = find_main(mod)
    names = argument_names(main)
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ValueError(f"@main has no argument(s) {unknown}; its arguments are {names}")

    rng = np.random.default_rng(seed)
    values = dict(given)
    for name, arg in zip(names, main.body.block.args):
        if name in values:
            continue
        shape = tuple(arg.type.get_shape())
        dtype = dtype_of(arg.type.get_element_type())
        if dtype.kind == "f" and name.endswith(("var", "gamma")):
            values[name] = rng.uniform(0.5, 1.5, shape).astype(dtype)  # sqrt(var) and scales stay real
        elif dtype.kind == "f" and name.endswith("weight") and len(shape) >= 2:
            values[name] = xavier_uniform(name, shape, rng).astype(dtype)
        elif dtype.kind == "f":
            values[name] = rng.standard_normal(shape).astype(dtype)
        else:
            values[name] = rng.integers(0, 10, shape).astype(dtype)
    return values


def _max_keeping_nan(a: float, b: float) -> float:
    # A NaN output must show in the figures, and Python's max() would drop it.
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def compare_outputs(outputs: list[np.ndarray], reference: list[np.ndarray], rtol: float, atol: float
                    ) -> tuple[float, float, bool, str]:
    """`(max abs, max rel, drifted, why)` of `outputs` against `reference` (see the module docstring)."""
    if len(outputs) != len(reference):
        return float("inf"), float("inf"), True, f"{len(outputs)} outputs instead of {len(reference)}"
    max_abs = max_rel = 0.0
    drifted = False
    for index, (out, ref) in enumerate(zip(outputs, reference)):
        if out.shape != ref.shape:
            return float("inf"), float("inf"), True, f"output {index} has shape {out.shape} instead of {ref.shape}"
        out64, ref64 = out.astype(np.float64), ref.astype(np.float64)
        diff = np.abs(out64 - ref64)
        if diff.size:
            max_abs = _max_keeping_nan(max_abs, float(diff.max()))
            nonzero = ref64 != 0
            if nonzero.any():
                max_rel = _max_keeping_nan(max_rel, float(np.max(diff[nonzero] / np.abs(ref64[nonzero]))))
        if not np.allclose(out64, ref64, rtol=rtol, atol=atol, equal_nan=True):
            drifted = True
    return max_abs, max_rel, drifted, ""


def _as_list(result: Any) -> list[np.ndarray]:
    return [np.asarray(r) for r in result] if isinstance(result, list) else [np.asarray(result)]


class NumericalBisect(NestingInstrument):
    """Checks the model's outputs after every pass that changed the IR (see the module docstring).

    `inputs` / `params`: arrays by `@main` argument name (the rest are seeded with `seed`);
    `rtol` / `atol`: the drift tolerance. `checks` lists every `DriftCheck` in the order passes
    finished; `first_drift` is the first that drifted (or None). Printing: every check as it happens
    (`verbose`), and a final summary on `exit_pass_ctx` (or `report()`).
    """

    def __init__(
        self,
        inputs: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        seed: int = 0,
        rtol: float = 1e-4,
        atol: float = 1e-5,
        stream: IO[str] | None = None,
        verbose: bool = True,
    ) -> None:
        super().__init__()
        self.given = {name: np.asarray(value) for name, value in {**(params or {}), **(inputs or {})}.items()}
        self.seed = seed
        self.rtol = rtol
        self.atol = atol
        self.stream = stream
        self.verbose = verbose
        self.checks: list[DriftCheck] = []
        self.reference: list[np.ndarray] | None = None
        self._values: dict[str, np.ndarray] = {}
        self._last_result: Any = None
        self._last_run: tuple[Any, list[np.ndarray]] | None = None

    @property
    def first_drift(self) -> DriftCheck | None:
        """The first check that drifted, or None."""
        return next((check for check in self.checks if check.drifted), None)

    def _write(self, line: str) -> None:
        stream = sys.stderr if self.stream is None else self.stream
        stream.write(f"numerical-bisect: {line}\n")
        stream.flush()

    def _run(self, mod: Any) -> list[np.ndarray]:
        from xrelay.dialects.arguments import argument_names
        from xrelay.runtime import run
        from xrelay.runtime.reference.interpreter import find_main

        if self._last_run is not None and self._last_run[0] is mod:
            return self._last_run[1]  # a Sequential returns its last child's module: already run
        names = set(argument_names(find_main(mod)))
        # A pass may drop arguments (parameters bound as constants): pass only those @main still has.
        # NaN/Inf are checked explicitly (reference) or are drift: numpy's warnings would only add noise.
        with np.errstate(all="ignore"):
            outputs = _as_list(run(mod, {name: value for name, value in self._values.items() if name in names}))
        self._last_run = (mod, outputs)
        return outputs

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.checks = []
        self.reference = None
        self._last_result = None
        self._last_run = None

    def entered(self, frame: PassFrame) -> None:
        mod = frame.received
        if frame.depth == 0 and (self.reference is None or mod is not self._last_result):
            try:
                self._values = seeded_inputs(mod, self.given, self.seed)
                reference = self._run(mod)
            except Exception as error:
                raise NumericalBisectError(
                    f"numerical-bisect: the model does not run on the pipeline's input: {error}") from error
            if all(np.isfinite(output).all() for output in reference if output.dtype.kind in "fc"):
                self.reference = reference
            else:
                self.reference = None
                raise NumericalBisectError(
                    "numerical-bisect: the model's outputs are not finite (NaN or Inf) on the pipeline's input, "
                    "so no drift could be seen; give other inputs (--numerical-bisect-input NAME=FILE.npy)")

    def left(self, frame: PassFrame, mod: Any) -> None:
        name, depth = frame.info.name, frame.depth
        if depth == 0:
            self._last_result = mod
        if self.reference is None or not module_changed(frame.received, mod):
            return
        try:
            outputs = self._run(mod)
        except Exception as error:  # noqa: BLE001 - the pass broke the model: that is drift too
            check = DriftCheck(name, depth, float("inf"), float("inf"), True,
                               f"the model no longer runs: {type(error).__name__}: {error}")
        else:
            max_abs, max_rel, drifted, why = compare_outputs(outputs, self.reference, self.rtol, self.atol)
            check = DriftCheck(name, depth, max_abs, max_rel, drifted, why)
        self.checks.append(check)
        if self.verbose:
            self._write(check.describe() + (" DRIFT" if check.drifted else ""))

    def report(self) -> str:
        """The summary line: the first drifting pass with its figures, or that none drifted."""
        tolerance = f"(rtol {self.rtol:g}, atol {self.atol:g})"
        drift = self.first_drift
        if drift is not None:
            return f"first drifting pass: {drift.describe()} {tolerance}"
        return f"no pass drifted {tolerance} in {len(self.checks)} checked pass run(s)"

    def exit_pass_ctx(self) -> None:
        if self.reference is not None:
            self._write(self.report())
        # Keep the figures, drop the modules and arrays held for the next pass.
        self.running, self._last_result, self._last_run, self._values = [], None, None, {}
