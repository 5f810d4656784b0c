"""benchmarks/iree_profile.py: per-dispatch figures from IREE's per-call profile events."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))


def event(key: str, duration_ms: float, workers_ms: float, workgroups: list[int]) -> dict:
    """One call's record as `iree-profile dispatch --dispatch_events --format=jsonl` writes it (the fields read)."""
    return {"key": key, "duration_ns": int(duration_ms * 1e6), "tile_duration_sum_ns": int(workers_ms * 1e6),
            "workgroup_count": workgroups}


def test_dispatch_rows_give_time_per_run_percentiles_and_the_workers_inside_each_dispatch():
    from iree_profile import dispatch_rows

    # two runs; the conv is called twice per run, the copy once
    conv = [event("main_dispatch_5_conv_56x56x64x3x3x64_f32", d, 2 * d, [16, 1, 1]) for d in (1.0, 2.0, 3.0, 4.0)]
    copy = [event("main_dispatch_4_slow_memcpy", d, d, [14, 1, 1]) for d in (0.5, 0.7)]
    rows = {row[0]: row for row in dispatch_rows({conv[0]["key"]: conv, copy[0]["key"]: copy}, n_runs=2)}

    name, kind, low, median, p90, extra = rows["main_dispatch_5_conv_56x56x64x3x3x64_f32"]
    assert kind == "conv"
    # per run: each call's time times 2 calls per run -> 2, 4, 6, 8 ms
    assert (low, median, p90) == pytest.approx((2.0, 5.0, 7.4))
    assert extra.split() == ["x2", "busy", "2.00", "16", "wg"]
    _, kind, low, median, p90, extra = rows["main_dispatch_4_slow_memcpy"]
    assert kind == "copy (pad)"
    assert (low, median, p90) == pytest.approx((0.5, 0.6, 0.68))
    assert extra.split() == ["x1", "busy", "1.00", "14", "wg"]


def test_threads_must_be_a_list_of_positive_integers(capsys):
    from iree_profile import main

    for bad in ("1,x", "0,2"):
        with pytest.raises(SystemExit) as exit_info:
            main(["--threads", bad])
        assert exit_info.value.code == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert ": error: --threads" in error
