"""The restart rule of `memstream worker --restarts N` (streams/supervise.py)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.streams.supervise import (
    MAX_DELAY,
    STEADY_SECONDS,
    child_command,
    exit_status,
    next_attempt,
    restart_delay,
)


def test_delays_double_from_one_second_up_to_the_cap() -> None:
    assert [restart_delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    with pytest.raises(ValueError):
        restart_delay(0)


@given(st.integers(min_value=1, max_value=10_000))
def test_a_delay_is_positive_never_over_the_cap_and_never_shrinks(n: int) -> None:
    assert 0 < restart_delay(n) <= restart_delay(n + 1) <= MAX_DELAY


def test_a_graceful_stop_is_never_restarted() -> None:
    assert next_attempt(0, 1.0, 0, 5) is None


def test_crashes_in_a_row_use_up_the_limit() -> None:
    assert next_attempt(1, 2.0, 0, 2) == 1
    assert next_attempt(1, 2.0, 1, 2) == 2
    assert next_attempt(1, 2.0, 2, 2) is None
    assert next_attempt(-9, 2.0, 0, 1) == 1  # killed by a signal: a crash too


def test_a_child_that_ran_steadily_starts_the_count_again() -> None:
    assert next_attempt(1, STEADY_SECONDS, 7, 2) == 1


@given(
    st.integers(min_value=-15, max_value=255),
    st.floats(min_value=0.0, max_value=1e6),
    st.integers(min_value=0, max_value=50),
    st.integers(min_value=0, max_value=50),
)
def test_never_more_restarts_in_a_row_than_the_limit(
    code: int, ran: float, attempts: int, limit: int
) -> None:
    n = next_attempt(code, ran, attempts, limit)
    assert n is None or 1 <= n <= limit
    if code == 0 or limit == 0:
        assert n is None


def test_the_child_runs_the_same_program_with_the_same_options() -> None:
    argv = ["worker", "--restarts", "3", "--role", "write"]
    command = child_command(argv)
    assert command[0] == sys.executable and command[-len(argv) :] == argv


def test_a_child_killed_by_a_signal_exits_as_a_shell_reports_it() -> None:
    assert exit_status(-9) == 137 and exit_status(1) == 1 and exit_status(0) == 0
