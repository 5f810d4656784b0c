"""The insert_slice step (runtime/executor/data_steps.py, `insert_step`): a source computed in its slice is not copied,
and a placed program's learnt body drops that step (runtime/executor/bound_steps.py, `kept_call`);
any other source is copied on every run; a copying insert leaves the destination alone."""

from __future__ import annotations

import numpy as np

from xrelay.runtime.executor import bound_steps
from xrelay.runtime.executor.data_steps import insert_step

INDEX = (slice(None), slice(2, 5))


def test_a_placed_source_is_bound_without_a_copy_and_dropped_once_learnt():
    dest = np.zeros((2, 7), np.float32)
    source = dest[INDEX]  # computed in place
    env = [dest, source, None]
    step = insert_step(1, 0, 2, INDEX, False, (2, 3))
    for value in (1.0, 2.0, 3.0):
        source[...] = value  # a run writes the source (the slice) ...
        step(env)
        assert env[2] is dest and np.all(dest[INDEX] == value) and np.all(dest[:, :2] == 0)
    assert bound_steps.kept_call(step, env) is bound_steps._nothing
    elsewhere = [dest, np.ones((2, 3), np.float32), None]  # a source elsewhere: the step stays
    assert bound_steps.kept_call(step, elsewhere) is None
    assert bound_steps.kept_call(insert_step(1, 0, 2, INDEX, True, (2, 3)), env) is None  # a copying one too


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
