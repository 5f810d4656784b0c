"""QA: the Python API rejects bad arguments with an exception naming the problem (found by
hostile-user testing)."""

from __future__ import annotations

import pytest

from xrelay import passes, transform
from xrelay.instrument import PassInstrument, PassTimingInstrument


@pytest.mark.parametrize("bad, words", [
    (42, "got 42"),
    (PassTimingInstrument, "the class PassTimingInstrument; pass an instance: PassTimingInstrument()"),
    ("timing", "got 'timing'"),
])
def test_pass_context_rejects_an_instrument_that_is_not_one(bad, words):
    # Such an item used to be accepted and then silently ignored (42) or failed at the first pass (a class).
    with pytest.raises(TypeError, match="PassContext: instruments\\[1\\] is not a PassInstrument") as caught:
        transform.PassContext(instruments=[PassTimingInstrument(), bad])
    assert words in str(caught.value)
    ctx = transform.PassContext()
    with pytest.raises(TypeError, match="instruments\\[0\\] is not a PassInstrument"):
        ctx.override_instruments([bad])


def test_pass_context_keeps_accepting_duck_typed_instruments():
    class OnlyBefore:  # TVM-style: any object with hook methods
        def __init__(self):
            self.seen = []

        def run_before_pass(self, mod, info):
            self.seen.append(info.name)

    duck, base = OnlyBefore(), PassInstrument()
    with transform.PassContext(instruments=[duck, base]):
        transform.module_pass(lambda mod, ctx: mod, opt_level=0, name="Noop")(object())
    assert duck.seen == ["Noop"]
