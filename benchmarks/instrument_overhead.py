"""Cost of the pass infrastructure: a trivial pass (and a Sequential of N trivial passes) run
with 0, 1 and 3 instruments that define all five hooks; medians in microseconds and the
per-pass overhead of 3 instruments vs 0 (goal: <= 50 us per pass). Then the parse + print
time of bound ResNet-18 (`str(module)` and xDSL's Parser), when the frontend is available.

    .venv/bin/python benchmarks/instrument_overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from xrelay.instrument import PassInstrument, PassTimingInstrument

GOAL_US_PER_PASS = 50.0


class AllHooks(PassInstrument):
    """An instrument defining all five hooks, each doing nothing."""

    def enter_pass_ctx(self):
        pass

    def exit_pass_ctx(self):
        pass

    def should_run(self, mod, info):
        return True

    def run_before_pass(self, mod, info):
        pass

    def run_after_pass(self, mod, info):
        pass


@transform.module_pass(opt_level=0, name="Trivial")
def trivial(mod, ctx):
    return mod


def median_us_per_call(run: Callable[[], object], calls: int, repeats: int) -> float:
    """Median over `repeats` of the mean time of one call of `run`, in microseconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(calls):
            run()
        samples.append((time.perf_counter_ns() - start) / calls / 1000.0)
    return statistics.median(samples)


def bench_pass_overhead(calls: int, repeats: int, seq_len: int) -> dict[int, tuple[float, float]]:
    """{number of instruments: (us per direct trivial pass, us per pass inside a Sequential)}."""
    mod = ModuleOp([])
    seq = transform.Sequential([trivial] * seq_len)
    results = {}
    for n_instruments in (0, 1, 3):
        with transform.PassContext(instruments=[AllHooks() for _ in range(n_instruments)]):
            direct = median_us_per_call(lambda: trivial(mod), calls, repeats)
            in_seq = median_us_per_call(lambda: seq(mod), max(1, calls // seq_len), repeats) / seq_len
        results[n_instruments] = (direct, in_seq)
    return results


def bench_timing_instrument(calls: int, repeats: int) -> float:
    mod = ModuleOp([])
    timing = PassTimingInstrument()
    with transform.PassContext(instruments=[timing]):
        return median_us_per_call(lambda: trivial(mod), calls, repeats)


def bench_resnet18_parse_print(repeats: int) -> tuple[float, float, int] | None:
    """Median seconds to print and to parse bound ResNet-18, and the text size; None without a frontend.

    Builds `resnet.get_workload(num_layers=18)`, binds the parameters, prints the module with
    `str(module)` and parses the text back with `xdsl.parser.Parser(make_context(), text)`.
    """
    try:
        from xrelay.dialects import make_context
        from xrelay.frontend import bind_params_by_name, resnet
    except ImportError:
        return None
    from xdsl.parser import Parser

    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    bound = bind_params_by_name(mod, params)
    print_s, parse_s = [], []
    text = ""
    for _ in range(repeats):
        start = time.perf_counter()
        text = str(bound)
        print_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        parsed = Parser(make_context(), text).parse_module()
        parse_s.append(time.perf_counter() - start)
    assert len(list(parsed.walk())) == len(list(bound.walk())), "the parsed module differs from the printed one"
    return statistics.median(print_s), statistics.median(parse_s), len(text)


def main() -> None:
    arg_parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arg_parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    arg_parser.add_argument("--seq-len", type=int, default=10, help="children of the Sequential (default 10)")
    args = arg_parser.parse_args()
    calls, repeats = (2000, 3) if args.quick else (20000, 7)

    results = bench_pass_overhead(calls, repeats, args.seq_len)
    print(f"trivial pass, median of {repeats} x {calls} calls (us per pass)")
    print(f"{'instruments':>12} {'direct':>10} {'in Sequential(' + str(args.seq_len) + ')':>20}")
    for n_instruments, (direct, in_seq) in results.items():
        print(f"{n_instruments:>12} {direct:>10.2f} {in_seq:>20.2f}")
    overhead_direct = results[3][0] - results[0][0]
    overhead_seq = results[3][1] - results[0][1]
    verdict = "OK" if max(overhead_direct, overhead_seq) <= GOAL_US_PER_PASS else "OVER GOAL"
    print(
        f"overhead of 3 instruments vs 0: {overhead_direct:.2f} us per direct pass, "
        f"{overhead_seq:.2f} us per pass in a Sequential (goal <= {GOAL_US_PER_PASS:.0f} us): {verdict}"
    )
    print(f"PassTimingInstrument alone: {bench_timing_instrument(calls, repeats):.2f} us per trivial pass")

    resnet = bench_resnet18_parse_print(repeats=2 if args.quick else 3)
    if resnet is None:
        print("bound ResNet-18 parse/print: skipped (xrelay.frontend not available)")
    else:
        print_s, parse_s, size = resnet
        print(f"bound ResNet-18 ({size / 1e6:.1f} MB of text): print {print_s * 1e3:.0f} ms, parse {parse_s * 1e3:.0f} ms (median)")


if __name__ == "__main__":
    main()
