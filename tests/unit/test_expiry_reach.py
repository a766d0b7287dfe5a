"""Which memories a recall reaches by status (core/expiry.py)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.expiry import expired_alone, reachable
from tests.unit.test_recall_fusion import _state

BASE = _state(category="commitment", text="User needs to renew the passport by 8 March")


def test_a_stale_plan_is_reached_in_the_present_a_replaced_fact_is_not() -> None:
    stale = replace(BASE, status="superseded")
    moved = replace(BASE, status="superseded", superseded_by="m2")
    assert expired_alone(stale) and reachable(stale, ("active",))
    assert not expired_alone(moved) and not reachable(moved, ("active",))
    assert reachable(moved, ("active", "superseded"))  # a history question
    assert not reachable(replace(BASE, status="archived"), ("active",))


@given(
    status=st.sampled_from(["active", "superseded", "archived"]),
    successor=st.sampled_from([None, "m2"]),
    asked=st.sets(st.sampled_from(["active", "superseded", "archived"]), min_size=1),
)
def test_reach_widens_only_by_memories_nothing_replaced(
    status: str, successor: str | None, asked: set[str]
) -> None:
    state = replace(BASE, status=status, superseded_by=successor)  # type: ignore[arg-type]
    if state.status in asked:
        assert reachable(state, asked)
    else:
        assert reachable(state, asked) == (status == "superseded" and successor is None)
