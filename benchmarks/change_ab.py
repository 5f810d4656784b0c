"""A change measured A/B: the model built without it and with it, run alternately in one process.

    .venv/bin/python benchmarks/change_ab.py --model onnx:densenet121 [--threads 1,2] [--rounds 30]
        [--off xrelay.runtime.kernels.reduction_programs.MAX_STEPWISE_INNER=0 ...] [--without-pass PreActivationShift ...]

Builds the model as benchmarks/execution.py's `build` contender (`xrelay.build` at opt level 3)
twice: "without", with every `--off` flag (a module attribute, `module.NAME`) set to False
(`module.NAME=VALUE`: to that Python literal, e.g. a threshold's old value) and
every `--without-pass` graph pass (a class of `xrelay.passes`) doing nothing while it is built; and
"with", as the code stands. Then, per thread count, it runs the two programs `--rounds` times in
alternating order (each round one run of each, the order flipped every round, untimed runs first)
and prints both medians and the median of the per-round ratios with/without, which the VM's speed
changes over seconds move less than either median; and each program's error against the nn level
and planned memory. Both programs share this process: every run of "without" has its `--off` flags
set around it (outside the timing), so a flag read while running sees them too. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for the measured
process (the script re-executes itself without them), as in benchmarks/split_profile.py.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import os
import sys

from workers import UNSET_FOR_MEASUREMENT, in_turn, medians_line

from execution import Contender


@contextlib.contextmanager
def flags_off(off: list[str], without: list[str] = ()):
    """Within: the flags `off` False (or their VALUE) and the passes `without` doing nothing."""
    from xrelay import passes

    saved = []
    for flag in off:
        name, _, value = flag.partition("=")
        module_name, _, attr = name.rpartition(".")
        module = importlib.import_module(module_name)
        saved.append((module, attr, getattr(module, attr)))
        setattr(module, attr, ast.literal_eval(value) if value else False)
    for name in without:
        cls = getattr(passes, name)
        saved.append((cls, "apply", cls.apply))
        cls.apply = lambda self, ctx, op: None
    try:
        yield
    finally:
        for owner, attr, value in reversed(saved):
            setattr(owner, attr, value)


def build(model: str, off: list[str], without: list[str]):
    """The model's contender built with the flags `off` False and the passes `without` skipped (and
    first run, before they are restored)."""
    with flags_off(off, without):
        return Contender("build", model)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="onnx:densenet121", help="resnet18, resnet50 or onnx:<light model>")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--off", action="append", default=[], help="module.FLAG set to False (module.NAME=VALUE: to VALUE) without the change")
    parser.add_argument("--without-pass", action="append", default=[], help="xrelay.passes class skipped without it")
    args = parser.parse_args(argv)
    if not args.off and not args.without_pass:
        print("change_ab.py: give the change: --off module.FLAG or --without-pass PassName", file=sys.stderr)
        return 1
    from xrelay import passes

    for flag in args.off:
        name, _, value = flag.partition("=")
        module_name, _, attr = name.rpartition(".")
        try:
            getattr(importlib.import_module(module_name), attr)
            if value:
                ast.literal_eval(value)
        except (ImportError, AttributeError, ValueError, SyntaxError):
            print(f"change_ab.py: --off {flag}: no such module attribute, or VALUE is not a Python literal",
                  file=sys.stderr)
            return 1
    for name in args.without_pass:
        if not isinstance(getattr(passes, name, None), type):
            print(f"change_ab.py: --without-pass {name}: no such pass in xrelay.passes", file=sys.stderr)
            return 1
    if any(var in os.environ for var in UNSET_FOR_MEASUREMENT):
        env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
        env["OPENBLAS_NUM_THREADS"] = str(max(int(t) for t in args.threads.split(",")))
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)

    from xrelay.runtime.parallel.threads import set_blas_threads

    contenders = {"without": build(args.model, args.off, args.without_pass), "with": build(args.model, [], [])}
    change = " ".join([*(f"--off {f}" for f in args.off), *(f"--without-pass {p}" for p in args.without_pass)])
    print(f"{args.model}: the change is what `{change}` takes away")
    for name, contender in contenders.items():
        print(f"  {name:8s} max error vs nn level {contender.error:.2e}, planned {contender.program.peak_bytes / 2**20:.2f} MiB")
    def flags_of(name: str):
        # "without" runs with its flags off (set outside the timing): a flag read while running
        # (a step binding its calls on a later run, a part compiled on its first split) sees it
        return flags_off(args.off if name == "without" else [])

    for threads in (int(t) for t in args.threads.split(",")):
        set_blas_threads(threads)
        loads = [os.getloadavg()[0]]
        calls = {name: functools.partial(contender.fn, threads) for name, contender in contenders.items()}
        in_turn(calls, 1, around=flags_of)  # untimed
        times = in_turn(calls, args.rounds, around=flags_of)
        loads.append(os.getloadavg()[0])
        print(f"  {threads} thread(s), {args.rounds} rounds, 1-min load average {min(loads):.1f}-{max(loads):.1f}: "
              + medians_line(times, "without"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
