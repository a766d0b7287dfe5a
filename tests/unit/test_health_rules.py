"""The health verdicts (core/health.py): past the end, stalled, fine; and the tracker."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.health import Since, behind, past_end, reader_check, status, track

ENDS = {"t/0": 10, "t/1": 5}


def test_a_position_past_the_end_means_the_log_was_lost() -> None:
    check = reader_check("projection duckdb", {"t/0": 12, "t/1": 5}, ENDS, None, 0.0, 60.0)
    assert not check.ok
    assert "t/0 at 12, log end 10" in check.detail and "memstream recover" in check.detail


def test_waiting_records_and_no_progress_for_long_enough_is_stalled() -> None:
    pos = {"t/0": 4, "t/1": 5}
    tracked = track({}, {"r": ((4, 5), behind(pos, ENDS))}, now=100.0)
    assert reader_check("r", pos, ENDS, tracked["r"], 130.0, 60.0).ok
    later = track(tracked, {"r": ((4, 5), 6)}, now=150.0)
    assert later["r"].since == 100.0  # still there, still waiting: the clock runs on
    check = reader_check("r", pos, ENDS, later["r"], 160.0, 60.0)
    assert not check.ok and check.detail == "stalled: 6 record(s) waiting, no progress for 60 s"


def test_moving_or_having_nothing_to_do_restarts_the_clock() -> None:
    start = {"r": Since((4, 5), 0.0, waiting=True)}
    assert track(start, {"r": ((5, 5), 5)}, 50.0)["r"] == Since((5, 5), 50.0, True)
    assert track(start, {"r": ((4, 5), 0)}, 50.0)["r"] == Since((4, 5), 50.0, False)
    # records arriving for a reader that was idle: it is not stalled since it was idle
    idle = track({}, {"r": ((10, 5), 0)}, 0.0)
    woke = track(idle, {"r": ((10, 5), 3)}, 100.0)
    assert woke["r"].since == 100.0


def test_partitions_never_read_count_from_the_start() -> None:
    assert behind({}, ENDS) == 15
    assert reader_check("r", {}, ENDS, None, 0.0, 60.0).detail == "15 record(s) waiting"
    assert reader_check("r", {"t/0": 10, "t/1": 5}, ENDS, None, 0.0, 60.0).detail == (
        "at the log's end"
    )


@given(
    st.dictionaries(st.sampled_from(["a/0", "a/1", "b/0"]), st.integers(0, 10**6)),
    st.dictionaries(st.sampled_from(["a/0", "a/1", "b/0"]), st.integers(0, 10**6)),
)
def test_past_end_is_exactly_the_positions_beyond_their_end(
    positions: dict[str, int], ends: dict[str, int]
) -> None:
    flagged = past_end(positions, ends)
    assert len(flagged) == sum(1 for tp, at in positions.items() if tp in ends and at > ends[tp])
    ok = reader_check(
        "r", {tp: min(at, ends.get(tp, at)) for tp, at in positions.items()}, ends, None, 0.0, 1.0
    )
    assert ok.ok  # positions at or before the end are never "past the end" nor stalled
    assert status([ok]) == "ok"
