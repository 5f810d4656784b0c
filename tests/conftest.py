"""Fixtures shared by the test files. Builders shared by several files are in `module_builder.py`
(a plain module, importable where a fixture cannot reach, e.g. in parametrisation helpers)."""

from __future__ import annotations

import pytest

from xrelay.instrument import pass_context, timing
from xrelay.runtime.parallel.threads import blas_threads, set_blas_threads


@pytest.fixture
def fresh_pass_context():
    """No global PassContext before the test; afterwards none left entered and the global one reset."""
    pass_context._state.default = None
    yield
    assert not pass_context._state.stack, "a test left a PassContext entered"
    pass_context._state.default = None


@pytest.fixture
def native_cache(tmp_path_factory, monkeypatch):
    """The native executor's compiled libraries go to one cache for the session's tests (no user's
    cache): a file of native tests names it in `pytestmark = pytest.mark.usefixtures("native_cache")`."""
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "native-cache"))


@pytest.fixture
def clock(monkeypatch):
    """Replace the pass timer: each read returns the next queued microsecond value."""
    readings = []

    def fake_now_us():
        return readings.pop(0)

    monkeypatch.setattr(timing, "now_us", fake_now_us)
    return readings


@pytest.fixture
def blas_workers():
    """`blas_workers(n)`: numpy's OpenBLAS (and so the executor's worker split) uses n threads for the
    rest of the test, restored after it; the call skips the test where numpy's BLAS is not OpenBLAS."""
    before = blas_threads()

    def set_workers(count: int) -> None:
        if before is None:
            pytest.skip("numpy's BLAS is not OpenBLAS: the worker count cannot be set")
        set_blas_threads(count)

    yield set_workers
    if before is not None:
        set_blas_threads(before)
