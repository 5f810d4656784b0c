"""Benchmarks that measure the executor itself: split_profile.py's per-step labels, handoff.py's timings."""

from __future__ import annotations

import sys
from pathlib import Path

from xdsl.parser import Parser

from tests.test_runtime_plan import conv_nhwc_hwcf
from xrelay.dialects import make_context
from xrelay.runtime.linalg_exec import LinalgProgram


def test_step_label_names_a_convolution_by_kernel_stride_channels_and_output():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from split_profile import step_label

    text = conv_nhwc_hwcf((1, 17, 13, 3), (5, 3, 3, 7), 2, 0.0)  # output 7x6
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    labels = [step_label(step) for step in program.steps]
    assert [label for label in labels if label] == ["conv 5x3/2 3->7 out 7x6"]


def test_handoff_benchmark_times_the_worker_start_and_the_wait_of_every_split():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from handoff import measure

    for prelude in (0, None):
        delays, waits = measure(prelude, splits=3, gap_us=0)
        assert len(delays) == len(waits) == 3
        assert all(d >= 0 for d in delays) and all(w >= 0 for w in waits)
