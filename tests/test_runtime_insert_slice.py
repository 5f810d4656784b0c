"""The insert_slice step (runtime/executor/view_steps.py, `insert_step`): a source computed in its slice is not copied,
and that is decided once per pair of arrays; any other source is copied on
every run; a copying insert leaves the destination alone."""

from __future__ import annotations

import numpy as np

from xrelay.runtime.executor import view_steps
from xrelay.runtime.executor.view_steps import insert_step

INDEX = (slice(None), slice(2, 5))


def test_a_placed_source_is_checked_once_then_bound_without_a_copy(monkeypatch):
    dest = np.zeros((2, 7), np.float32)
    source = dest[INDEX]  # computed in place
    env = [dest, source, None]
    step = insert_step(1, 0, 2, INDEX, False, (2, 3))
    checks = []
    monkeypatch.setattr(view_steps, "same_view", lambda a, b: checks.append(1) or a.ctypes.data == b.ctypes.data)
    for value in (1.0, 2.0, 3.0):
        source[...] = value  # a run writes the source (the slice) ...
        step(env)
        assert env[2] is dest and np.all(dest[INDEX] == value) and np.all(dest[:, :2] == 0)
    assert len(checks) == 1
    other = [np.zeros((2, 7), np.float32), None, None]  # another destination: checked again
    other[1] = other[0][INDEX]
    step(other)
    assert len(checks) == 2 and env[2] is dest


def test_a_source_elsewhere_is_copied_on_every_run_and_a_copying_insert_keeps_the_destination():
    dest = np.zeros((2, 7), np.float32)
    source = np.empty((2, 3), np.float32)
    env = [dest, source, None]
    step = insert_step(1, 0, 2, INDEX, False, (2, 3))
    for value in (4.0, 5.0):
        source[...] = value
        step(env)
        want = np.zeros((2, 7), np.float32)
        want[INDEX] = value
        np.testing.assert_array_equal(env[2], want)
    copying = insert_step(1, 0, 2, INDEX, True, (2, 3))
    dest[...] = 0
    copying(env)
    assert env[2] is not dest and np.all(dest == 0) and np.all(env[2][INDEX] == 5.0)
