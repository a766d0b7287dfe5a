"""Properties of the reducer over random write-path runs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.core.memory_state import fold
from tests.unit.test_write_plan import run

PHRASES = [
    "I live in Boston.",
    "I live in Denver.",
    "My favorite color is blue.",
    "My favorite color is green.",
    "I work at Acme.",
    "I work at Globex as an engineer.",
    "We decided to use Kafka.",
    "ok",
    "I prefer tea.",
    "I prefer tea in the morning with honey.",
    "Remind me to call the bank tomorrow.",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PHRASES), min_size=1, max_size=12))
def test_live_equals_rebuild_and_adjacent_repeats_change_nothing(script: list[str]) -> None:
    memory, log = run(script)
    assert fold(log) == memory.states
    doubled = [e for env in log for e in (env, env)]  # every event delivered twice in a row
    assert fold(doubled) == memory.states
    # at most one active memory per (subject, slot): superseding keeps slots single-valued
    slots = [(s.subject, s.slot) for s in memory.states.values() if s.active and s.slot]
    assert len(slots) == len(set(slots))
