"""The dream cycle's steps, one rule at a time, and the cycle as a whole."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memstream.core.lifecycle import (
    STEPS,
    Action,
    LifecycleConfig,
    MemoryView,
    Usage,
    apply_actions,
    compatible,
    merged_text,
    plan_consolidation,
    plan_cycle,
    plan_decay,
    plan_expiry,
    plan_forgetting,
    plan_rehearsal,
    plan_summaries,
    retention,
)
from memstream.core.memory_state import MemoryState
from memstream.core.qlearning import utility_decay

AT = datetime(2024, 6, 1, 12, tzinfo=UTC)
CFG = LifecycleConfig()


def ago(days: float) -> datetime:
    return AT - timedelta(days=days)


def mem(mid: str, text: str = "a fact", category: str = "fact", **kw: Any) -> MemoryView:
    fields: dict[str, Any] = {"created_at": ago(100), "last_access": ago(1)}
    fields.update(kw)
    return MemoryView(mid, "ns", text, category, **fields)


def rules(actions: Iterable[Action]) -> list[tuple[str, str, str]]:
    return [(a.memory_id, a.kind, a.rule) for a in actions]


def unit(deg: float) -> np.ndarray:
    return np.array([math.cos(math.radians(deg)), math.sin(math.radians(deg)), 0.0])


# --- views -----------------------------------------------------------------------------


def test_view_from_state_with_usage() -> None:
    state = MemoryState(
        memory_id="m1",
        namespace="ns",
        session_id="s",
        text="I prefer tea.",
        category="preference",
        kind="note",
        status="active",
        tier="working",
        importance=0.6,
        confidence=0.9,
        arousal=0.85,
        stability=2.0,
        q_value=0.7,
        entities=("tea",),
        valid_from=None,
        valid_until=None,
        content_hash="0" * 64,
        source_turn_ids=(),
        created_at=ago(3),
        updated_at=ago(2),
    )
    view = MemoryView.from_state(state, Usage(4, ago(1)), immutable=True)
    assert (view.access_count, view.last_access, view.q_value) == (4, ago(1), 0.7)
    assert view.flashbulb and view.immutable and view.exempt and not view.eligible


# --- 1. decay and retention ------------------------------------------------------------


def test_decay_and_retention_in_event_time() -> None:
    m = mem("m", q_value=0.9, last_access=ago(20), created_at=ago(30), stability=2.0, tier="core")
    (action,) = plan_decay([m], AT, CFG).actions
    assert action.q_after == pytest.approx(utility_decay(0.9, 20))
    assert action.retention_after == pytest.approx(math.exp(-((20 / 240) ** 1.5)))
    fsrs = LifecycleConfig(retention_model="fsrs")
    assert retention(m, AT, fsrs) == pytest.approx(1 / (1 + 20 / 18))
    after = apply_actions([m], [action], AT)
    assert plan_decay(after, AT, CFG).actions == ()  # decay counts from the last Q update


def test_each_tier_forgets_at_its_own_rate() -> None:
    base = {"last_access": ago(20), "created_at": ago(30), "stability": 2.0}
    semantic = mem("s", tier="core", **base)
    episodic = mem("e", tier="working", importance=0.5, **base)
    trivia = mem("w", tier="working", importance=0.1, **base)
    assert retention(semantic, AT, CFG) == pytest.approx(math.exp(-((20 / 240) ** 1.5)))
    assert retention(episodic, AT, CFG) == pytest.approx(math.exp(-((60 / 240) ** 1.5)))
    assert retention(trivia, AT, CFG) == pytest.approx(math.exp(-((200 / 240) ** 1.5)))
    (action,) = plan_decay([trivia], AT, CFG).actions
    assert action.evidence["tier_rate"] == 10.0 and action.evidence["tier"] == "working"


def test_dormant_memories_are_frozen() -> None:
    dormant = mem("d", tier="peripheral", q_value=0.9, last_access=ago(200), retention=0.4)
    assert retention(dormant, AT, CFG) == 0.4
    assert retention(dormant, AT + timedelta(days=300), CFG) == 0.4
    assert plan_decay([dormant], AT, CFG).actions == ()
    faded = mem("f", tier="peripheral", q_value=0.9, last_access=ago(400), retention=0.01)
    assert plan_rehearsal([faded], AT, CFG).actions == ()


def test_decay_counts_from_the_later_of_access_and_q_update() -> None:
    m = mem("m", q_value=0.9, last_access=ago(20), last_q_update=ago(5), retention=0.0)
    (action,) = plan_decay([m], AT, CFG).actions
    assert action.evidence["decay_days"] == pytest.approx(5)


# --- 2. rehearsal ----------------------------------------------------------------------


def test_rehearsal_boosts_faded_but_useful_memories_under_a_cap() -> None:
    faded: dict[str, Any] = {"last_access": ago(400), "created_at": ago(400), "stability": 1.0}
    useful = mem("useful", q_value=0.8, **faded)
    important = mem("important", q_value=0.2, importance=0.7, **faded)
    useless = mem("useless", q_value=0.2, importance=0.2, **faded)
    fresh = mem("fresh", q_value=0.9, last_access=ago(1))
    result = plan_rehearsal([useless, important, fresh, useful], AT, CFG)
    assert [a.memory_id for a in result.actions] == ["useful", "important"]
    boosted = result.actions[0]
    assert boosted.stability_after is not None and boosted.stability_after > 1.5
    assert boosted.retention_after == pytest.approx(CFG.rehearsal_target)
    capped = plan_rehearsal([useful, important], AT, LifecycleConfig(max_rehearsals=1))
    assert len(capped.actions) == 1 and capped.deferred == 1


def test_rehearsal_leaves_unrated_everyday_memories_to_fade() -> None:
    # Q 0.5 is where every memory starts and unrated ones drift back: it says nothing
    faded: dict[str, Any] = {"last_access": None, "created_at": ago(200), "stability": 1.0}
    unrated = mem("unrated", q_value=0.5, importance=0.5, **faded)
    rated = mem("rated", q_value=0.55, importance=0.5, **faded)
    important = mem("important", q_value=0.5, importance=0.6, **faded)
    chosen = plan_rehearsal([unrated, rated, important], AT, CFG).actions
    assert sorted(a.memory_id for a in chosen) == ["important", "rated"]


# --- 3. expiry -------------------------------------------------------------------------


def test_expiry_rules() -> None:
    memories = [
        mem("ended", valid_until=ago(1)),
        mem("future", valid_until=AT + timedelta(days=1)),
        mem("doubtful", confidence=0.3, created_at=ago(31)),
        mem("confirmed", confidence=0.3, created_at=ago(31), reinforcements=1),
        mem("young", confidence=0.3, created_at=ago(29)),
        mem("kept", "call mom", "commitment", resolved_at=ago(91)),
        mem("recent", "call dad", "commitment", resolved_at=ago(10)),
        mem("pinned", valid_until=ago(1), pinned=True),
        mem("overdue", "call the plumber", "commitment", valid_until=ago(24)),
        mem("stale", "fix the fence", "commitment", valid_until=ago(91)),
        # "by Friday": dated after it was said, no end: the date is the due date
        mem("dated", "send the report", "commitment", created_at=ago(100), valid_from=ago(95)),
        mem("dated-recent", "send it", "commitment", created_at=ago(30), valid_from=ago(25)),
    ]
    assert rules(plan_expiry(memories, AT, CFG).actions) == [
        ("dated", "supersede", "stale_commitment"),
        ("doubtful", "archive", "unconfirmed"),
        ("ended", "supersede", "valid_until_passed"),
        ("kept", "archive", "resolved_commitment"),
        ("stale", "supersede", "stale_commitment"),
    ]


# --- 4. strategic forgetting -----------------------------------------------------------


def test_contradiction_sends_the_older_side_dormant() -> None:
    old = mem("old", "Ana lives in Boston", subject="Ana", slot="home", created_at=ago(9))
    new = mem("new", "Ana lives in Denver", subject="Ana", slot="home", created_at=ago(2))
    finer = mem(
        "finer", "Ana lives in Denver downtown", subject="Ana", slot="home", created_at=ago(1)
    )
    linked = mem("linked", "tea is bad", created_at=ago(5), contradicts=("x",))
    x = mem("x", "tea is good", created_at=ago(8))
    result = plan_forgetting([old, new, finer, linked, x], None, AT, CFG)
    assert rules(result.actions) == [
        ("old", "dormant", "contradiction"),
        ("x", "dormant", "contradiction"),
    ]  # "finer" refines "new": not a contradiction


def test_utility_floor_needs_thirty_unused_days() -> None:
    low = mem("low", q_value=0.1, last_access=ago(31))
    recent = mem("recent", q_value=0.1, last_access=ago(29))
    assert rules(plan_forgetting([low, recent], None, AT, CFG).actions) == [
        ("low", "dormant", "utility_floor")
    ]


def test_redundancy_keeps_the_more_useful_side_and_distinct_items() -> None:
    a = mem("a", "I like green tea", "preference", q_value=0.8)
    b = mem("b", "I like green tea a lot", "preference", q_value=0.4)
    air = mem("air", "I like Nike Air Max", "preference", q_value=0.3)
    peg = mem("peg", "I like Nike Pegasus", "preference", q_value=0.2)
    moment = mem("m1", "we had tea", "moment", q_value=0.1)
    moment2 = mem("m2", "we had tea outside", "moment", q_value=0.9)
    vectors = {
        "a": unit(0),
        "b": unit(5),
        "air": unit(60),
        "peg": unit(61),
        "m1": unit(90),
        "m2": unit(91),
    }
    result = plan_forgetting([a, b, air, peg, moment, moment2], vectors, AT, CFG)
    assert rules(result.actions) == [("b", "dormant", "redundancy")]
    assert result.actions[0].evidence["kept"] == "a"


def test_capacity_trims_lowest_utility_and_skips_pinned() -> None:
    memories = [mem(f"m{i}", f"fact {i}", q_value=i / 10) for i in range(5)]
    memories.append(mem("pinned", "pinned fact", q_value=0.0, pinned=True))
    config = LifecycleConfig(capacity=(("ns", 3),))
    result = plan_forgetting(memories, None, AT, config)
    assert rules(result.actions) == [
        ("m0", "dormant", "capacity"),
        ("m1", "dormant", "capacity"),
        ("m2", "dormant", "capacity"),
    ]  # m0 has Q 0.0 but was used yesterday: the floor spares it, capacity takes it first
    assert plan_forgetting(memories, None, AT, LifecycleConfig(default_capacity=10)).actions == ()


# --- 5. consolidation ------------------------------------------------------------------


def test_merged_text_dedupes_clauses() -> None:
    text = merged_text(
        ["I prefer tea.", "I prefer tea in the morning. I like jazz", "i PREFER tea"]
    )
    assert text == "I prefer tea in the morning; I like jazz."


def test_preferences_merge_but_items_of_one_brand_stay_apart() -> None:
    tea = mem("tea", "I prefer tea.", "preference", q_value=0.9, entities=("tea",))
    tea2 = mem("tea2", "I prefer tea with honey.", "preference", q_value=0.5)
    air = mem("air", "I like Nike Air Max.", "preference", q_value=0.6)
    peg = mem("peg", "I like Nike Pegasus.", "preference", q_value=0.5)
    vectors = {"tea": unit(0), "tea2": unit(27), "air": unit(90), "peg": unit(117)}
    assert not compatible(air, peg)
    result = plan_consolidation([tea, tea2, air, peg], vectors, AT, CFG)
    assert rules(result.actions) == [
        ("tea", "rewrite", "merge_cluster"),
        ("tea2", "archive", "merge_cluster"),
    ]
    rewrite, archive = result.actions
    assert rewrite.text_after == "I prefer tea with honey." and archive.merged_into == "tea"


def test_facts_merge_only_about_the_same_subject() -> None:
    a = mem("a", "Ana works at Acme.", subject="Ana", q_value=0.9)
    b = mem("b", "Ana works at Acme in Lyon.", subject="Ana")
    c = mem("c", "Works at Acme.", q_value=0.2)
    vectors = {"a": unit(0), "b": unit(27), "c": unit(-27)}
    result = plan_consolidation([a, b, c], vectors, AT, CFG)
    assert [a.memory_id for a in result.actions] == ["a", "b"]


def test_append_categories_only_drop_exact_duplicates() -> None:
    first = mem("e1", "We met at the lake.", "moment", created_at=ago(5))
    repeat = mem("e2", "we met at the LAKE", "moment", created_at=ago(2))
    similar = mem("e3", "We met at the lake again.", "moment")
    vectors = {"e1": unit(0), "e2": unit(0), "e3": unit(1)}
    result = plan_consolidation([repeat, similar, first], vectors, AT, CFG)
    assert rules(result.actions) == [("e2", "archive", "exact_duplicate")]
    assert result.actions[0].merged_into == "e1"


# --- 6. summaries ----------------------------------------------------------------------


def test_summary_after_ten_members_and_debounced() -> None:
    prefs = [mem(f"p{i}", f"I like item {i}.", "preference", created_at=ago(i)) for i in range(11)]
    (action,) = plan_summaries(prefs, AT, CFG).actions
    assert action.kind == "create" and action.created is not None
    assert action.created.subject == "preference" and "11 memories" in action.created.text
    after = apply_actions(prefs, [action], AT)
    assert plan_summaries(after, AT, CFG).actions == ()  # newer than every member
    one = mem("p11", "I like item 11.", "preference", created_at=AT + timedelta(hours=1))
    later = AT + timedelta(days=1)
    # one new member of twelve: not yet (a fifth more is due, or a month later)
    assert plan_summaries([*after, one], later, CFG).actions == ()
    month = AT + CFG.summary_refresh_after
    newer = [
        *after,
        *(
            mem(f"p{i}", f"I like item {i}.", "preference", created_at=AT + timedelta(hours=i))
            for i in (11, 12, 13)
        ),
    ]
    for when, grown in ((later, newer), (month, [*after, one])):
        refresh = plan_summaries(grown, when, CFG).actions
        assert [(a.kind, a.memory_id == action.memory_id) for a in refresh] == [
            ("create", False),
            ("supersede", True),
        ]
    assert plan_summaries(prefs[:10], AT, CFG).actions == ()


def test_derived_memories_cite_their_members_turns() -> None:
    same = mem("tea", "I prefer tea.", "preference", q_value=0.9, source_turn_ids=("t1",))
    twin = mem("tea2", "I prefer tea.", "preference", q_value=0.5, source_turn_ids=("t2", "t1"))
    result = plan_consolidation([same, twin], {"tea": unit(0), "tea2": unit(1)}, AT, CFG)
    rewrite = next(a for a in result.actions if a.kind == "rewrite")  # text unchanged: turns
    assert rewrite.memory_id == "tea" and rewrite.sources_after == ("t1", "t2")
    prefs = [
        mem(
            f"p{i}",
            f"I like item {i}.",
            "preference",
            created_at=ago(i),
            source_turn_ids=(f"t{i}",),
        )
        for i in range(11)
    ]
    (summary,) = plan_summaries(prefs, AT, CFG).actions
    assert summary.created is not None
    assert sorted(summary.created.source_turn_ids) == sorted(f"t{i}" for i in range(11))


# --- 7. archival and the whole cycle ---------------------------------------------------


def test_archival_of_old_unimportant_unused_facts() -> None:
    old: dict[str, Any] = {
        "created_at": ago(91),
        "importance": 0.2,
        "access_count": 2,
        "q_value": 0.5,
    }
    memories = [
        mem("fact", **old),
        mem("pref", category="preference", **old),
        mem("corr", category="correction", **old),
        mem("used", **{**old, "access_count": 3}),
        mem("young", **{**old, "created_at": ago(89)}),
        # consolidated: captured by a strong memory that followed it (or said again)
        mem("captured", **{**old, "stability": 1.3}),
        # what the assistant answered: low importance ranks it below the user's words, it
        # is not trivia (a user's episode of the same importance is)
        mem(
            "reply",
            "The assistant replied: ...",
            "moment",
            kind="episode",
            subject="assistant",
            **old,
        ),
        mem("episode", "Sam said: ...", "moment", kind="episode", subject="Sam", **old),
    ]
    report = plan_cycle(memories, None, None, AT, CFG)
    assert rules(report.of_step("archival")) == [
        ("episode", "archive", "fact_archival"),
        ("fact", "archive", "fact_archival"),
    ]


def test_cycle_reports_every_step_and_honours_usage_and_exemptions() -> None:
    stale = mem("stale", q_value=0.05, last_access=ago(1), last_q_update=ago(1))
    pinned = mem("pin", q_value=0.05, last_access=ago(60), pinned=True)
    usage = {"stale": Usage(0, ago(40))}
    report = plan_cycle([stale, pinned], usage, None, AT, CFG)
    assert list(report.counts) == list(STEPS) and list(report.deferred) == list(STEPS)
    assert ("stale", "dormant", "utility_floor") in rules(report.actions)
    assert all(a.memory_id != "pin" for a in report.actions)


def test_a_merge_that_enables_an_earlier_rule_is_settled_in_the_same_cycle() -> None:
    # L and Y name different items, so Y is not redundant with L; merging M into L makes
    # L name Y's item too: the next pass sends Y dormant instead of the next cycle.
    lead = mem("L", "I like Nike Air.", subject="user", q_value=0.9)
    member = mem("M", "I like Nike Air Pegasus.", subject="user", q_value=0.6)
    other = mem("Y", "I like Nike Pegasus.", q_value=0.5)
    vectors = {"L": unit(0), "Y": unit(20), "M": unit(-math.degrees(math.acos(0.88)))}
    report = plan_cycle([lead, member, other], None, vectors, AT, CFG)
    assert report.passes == 2
    assert ("Y", "dormant", "redundancy") in rules(report.actions)
    after = apply_actions([lead, member, other], report.actions, AT)
    assert plan_cycle(after, None, vectors, AT, CFG).actions == ()
