"""Hot memory and the context block: bounds that hold for any memories, and determinism."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.context_block import assemble, estimate_tokens
from memstream.core.hot_memory import HotConfig, build_hot, completed_tasks, render

T0 = datetime(2024, 1, 1, tzinfo=UTC)
CATEGORIES = ["fact", "preference", "correction", "decision", "principle", "commitment", "moment"]
SLOTS = [None, None, None, "name", "location", "employer", "age", "diet"]


@st.composite
def memory_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(0, 60))
    rows = []
    for i in range(n):
        at = T0 + timedelta(hours=draw(st.integers(0, 24 * 400)))
        rows.append(
            {
                "memory_id": f"m{i}",
                "text": draw(st.text(min_size=1, max_size=400)),
                "category": draw(st.sampled_from(CATEGORIES)),
                "slot": draw(st.sampled_from(SLOTS)),
                "subject": "user",
                "status": draw(st.sampled_from(["active", "active", "archived"])),
                "importance": draw(st.floats(0, 1)),
                "q_value": draw(st.floats(0, 1)),
                "access_count": draw(st.integers(0, 30)),
                "valid_from": at,
                "valid_until": None,
                "created_at": at,
                "updated_at": at,
                "session_id": draw(st.sampled_from(["s1", "s2"])),
            }
        )
    return rows


@given(memory_rows(), st.integers(200, 8000), st.sampled_from([None, "s1"]))
@settings(max_examples=150, deadline=None)
def test_the_hot_block_never_exceeds_its_cap(
    rows: list[dict[str, Any]], cap: int, session: str | None
) -> None:
    block = build_hot("ns", rows, T0 + timedelta(days=400), HotConfig(max_bytes=cap), session)
    assert len(render(block).encode()) <= cap
    assert len(block.sections.get("session", [])) <= 9
    assert len(block.sections["lessons"]) <= 20 and len(block.sections["tasks"]) <= 10
    assert len(block.ids) == len(set(block.ids))  # a memory is shown once


@given(memory_rows(), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_the_hot_block_does_not_depend_on_row_order(
    rows: list[dict[str, Any]], rnd: random.Random
) -> None:
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    now = T0 + timedelta(days=400)
    assert render(build_hot("ns", rows, now)) == render(build_hot("ns", shuffled, now))


@given(memory_rows(), st.integers(30, 3000))
@settings(max_examples=100, deadline=None)
def test_the_context_block_stays_within_its_budget(rows: list[dict[str, Any]], budget: int) -> None:
    block = build_hot("ns", rows, T0 + timedelta(days=400))
    recalled = [{"memory_id": f"r{i}", "text": "x" * 120, "score": 1.0} for i in range(20)]
    ctx = assemble(block, recalled, budget)
    header = estimate_tokens(render(build_hot("ns", [], None)))
    assert estimate_tokens(ctx.text) <= max(budget, header)
    assert len(ctx.ids) == len(set(ctx.ids))


def test_a_task_reported_done_leaves_the_block() -> None:
    def row(i: str, text: str, category: str, day: int) -> dict[str, Any]:
        at = T0 + timedelta(days=day)
        return {"memory_id": i, "text": text, "category": category, "created_at": at}

    task = row("t", "User will send the quarterly report to Dana", "commitment", 1)
    other = row("o", "User will book the dentist appointment", "commitment", 2)
    done = row("d", "User sent the quarterly report on Friday", "moment", 5)
    assert completed_tasks([task, other], [task, other, done]) == {"t": "d"}
    block = build_hot("ns", [task, other, done], T0 + timedelta(days=6))
    assert [i.memory_id for i in block.sections["tasks"]] == ["o"]
    assert block.completed == {"t": "d"}


@given(memory_rows())
@settings(max_examples=60, deadline=None)
def test_working_memory_flags_promotion_candidates_and_clears_with_its_session(
    rows: list[dict[str, Any]],
) -> None:
    config = HotConfig()
    mine = [r for r in rows if r["session_id"] == "s1" and r["status"] == "active"]
    latest = max((r["updated_at"] for r in mine), default=T0)
    live = build_hot("ns", rows, latest + timedelta(hours=1), config, "s1")
    by_id = {r["memory_id"]: r for r in rows}
    for item in live.sections.get("session", []):
        row = by_id[item.memory_id]
        wanted = row["access_count"] >= 2 or row["importance"] >= 0.6
        assert item.promote == wanted
    assert not live.session_ended
    later = latest + config.session_ends_after + timedelta(minutes=1)
    ended = build_hot("ns", rows, later, config, "s1")
    assert ended.sections.get("session", []) == [] and ended.session_ended == bool(mine)
