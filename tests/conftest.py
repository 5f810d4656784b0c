"""Fixtures shared by the test files. Builders shared by several files are in `module_builder.py`
(a plain module, importable where a fixture cannot reach, e.g. in parametrisation helpers)."""

from __future__ import annotations

import pytest

from xrelay.instrument import pass_context, timing


@pytest.fixture
def fresh_pass_context():
    """No global PassContext before the test; afterwards none left entered and the global one reset."""
    pass_context._state.default = None
    yield
    assert not pass_context._state.stack, "a test left a PassContext entered"
    pass_context._state.default = None


@pytest.fixture
def clock(monkeypatch):
    """Replace the pass timer: each read returns the next queued microsecond value."""
    readings = []

    def fake_now_us():
        return readings.pop(0)

    monkeypatch.setattr(timing, "now_us", fake_now_us)
    return readings
