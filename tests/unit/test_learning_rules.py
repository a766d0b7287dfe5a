"""The pure rules of the learning agents: Q-learning, co-activation, tagging, tiers, evolution."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memstream.core.coactivation import (
    CoactivationConfig,
    boost_partners,
    boosted_pairs,
    co_reinforced,
    pairs,
    plan_recall,
    spaced_uses,
)
from memstream.core.evolution import (
    EvolutionView,
    find_candidates,
    induction_candidates,
    memory_candidates,
    merge_candidates,
)
from memstream.core.qlearning import (
    SCOPED_NEGATIVE_SHARE,
    FeedbackView,
    QState,
    credit_weight,
    plan_q_updates,
    q_update,
    reward_of,
    utility_decay,
)
from memstream.core.tagging import Arrival, Tag, TagConfig, expire, on_memory, tags_after
from memstream.core.tiers import (
    SCHEME,
    TierView,
    entity_group_sizes,
    q_high_since,
    tier_change,
    topical_entities,
)
from memstream.schemas.events import Feedback

AT = datetime(2024, 6, 1, 12, tzinfo=UTC)


def ago(days: float = 0, hours: float = 0) -> datetime:
    return AT - timedelta(days=days, hours=hours)


# --- Q-learning ------------------------------------------------------------------------


def test_reward_mapping() -> None:
    assert reward_of("positive", None).value == 1.0
    assert reward_of("negative", None).value == 0.0
    very = reward_of("very_negative", None)
    assert (very.value, very.alpha_factor) == (0.0, 2.0)
    corr = reward_of("correction", None)
    assert (corr.value, corr.wants_correction_link) == (0.0, True)
    explicit = reward_of(None, 0.75)
    assert (explicit.value, explicit.source) == (0.75, "explicit")
    assert reward_of("very_negative", 0.2).alpha_factor == 2.0  # the outcome still sets the step
    with pytest.raises(ValueError):
        reward_of(None, None)
    with pytest.raises(ValueError):
        reward_of(None, 1.5)


def test_credit_weight_by_rank() -> None:
    assert credit_weight(1, 5) == 1.0
    assert credit_weight(3, 5) == 0.5
    assert credit_weight(2, 5) == pytest.approx(1 / math.log2(3))
    assert credit_weight(6, 5) == 0.0 and credit_weight(0, 5) == 0.0


def test_utility_decay_moves_toward_half_and_never_past_it() -> None:
    assert utility_decay(0.9, 10) == pytest.approx(0.9 + 0.1 * (0.5 - 0.9))
    assert utility_decay(0.1, 10) == pytest.approx(0.14)
    assert utility_decay(0.9, 1000) == 0.5
    assert utility_decay(0.3, 0) == 0.3
    assert utility_decay(0.3, -5) == 0.3  # a clock skew never reverses decay


def test_q_update_rule() -> None:
    assert q_update(0.5, 1.0) == pytest.approx(0.55)
    assert q_update(0.5, 0.0, alpha=0.2, weight=0.5) == pytest.approx(0.45)
    assert q_update(0.9, 1.0, alpha=5.0) == 1.0  # alpha * w capped at 1: never past the reward


def test_plan_for_named_memories_decays_first_and_carries_the_evidence() -> None:
    states = {"m1": QState(0.5, ago(days=0)), "m2": QState(0.9, ago(days=10))}
    fb = FeedbackView(("m2", "m1", "m2", "unknown"), None, "very_negative")
    changes = plan_q_updates(states, fb, None, AT)
    assert [c.memory_id for c in changes] == ["m2", "m1"]  # feedback order, repeats once
    m2 = changes[0]
    assert m2.decay_days == pytest.approx(10)
    assert m2.decayed_q == pytest.approx(0.86)
    assert m2.alpha == pytest.approx(0.2) and m2.weight == 1.0
    assert m2.new_q == pytest.approx(0.86 + 0.2 * (0.0 - 0.86))
    assert m2.evidence()["decayed_q"] == pytest.approx(0.86)


def test_plan_for_a_whole_recall_weights_by_rank() -> None:
    states = {k: QState(0.5) for k in ("a", "b", "c")}
    fb = FeedbackView.of(Feedback(query_id="q1", outcome="positive"))
    changes = plan_q_updates(states, fb, [("c", 3), ("a", 1), ("b", 2)], AT)
    assert [(c.memory_id, c.rank) for c in changes] == [("a", 1), ("b", 2), ("c", 3)]
    assert [c.weight for c in changes] == [1.0, pytest.approx(0.631, abs=1e-3), 0.5]
    assert changes[0].new_q > changes[1].new_q > changes[2].new_q > 0.5


def test_correction_flag_reaches_the_change() -> None:
    fb = FeedbackView(("a",), None, "correction")
    (change,) = plan_q_updates({"a": QState(0.7)}, fb, None, AT)
    assert change.wants_correction_link and change.new_q < 0.7


def test_a_negative_scoped_to_its_question_moves_the_shared_q_less() -> None:
    states = {"a": QState(0.6, AT)}

    def step(outcome: str, scoped: bool) -> float:
        fb = FeedbackView(("a",), None, outcome)  # type: ignore[arg-type]
        (change,) = plan_q_updates(states, fb, None, AT, scoped=scoped)
        return change.alpha

    assert step("negative", True) == pytest.approx(0.1 * SCOPED_NEGATIVE_SHARE)
    assert step("negative", False) == pytest.approx(0.1)
    # an answer, a harmful memory and a wrong one count for every question
    assert step("positive", True) == pytest.approx(0.1)
    assert step("very_negative", True) == pytest.approx(0.2)
    assert step("correction", True) == pytest.approx(0.1)


# --- co-activation ---------------------------------------------------------------------


def test_pairs_are_sorted_and_deduplicated() -> None:
    assert pairs(["b", "a", "c", "a"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert pairs(["a"]) == []
    assert len(pairs([f"m{i}" for i in range(100)], max_ids=20)) == 190


def test_recall_reinforces_memories_returned_together() -> None:
    plan = plan_recall(["a", "b", "ghost"], {"a": 1.0, "b": 99.9})
    assert plan.pairs == (("a", "b"), ("a", "ghost"), ("b", "ghost"))
    by_id = {c.memory_id: c for c in plan.reinforcements}
    assert by_id["a"].stability_after == pytest.approx(1.02)
    assert by_id["b"].stability_after == 100.0  # capped
    assert plan_recall(["a"], {"a": 1.0}).reinforcements == ()
    assert plan_recall(["a", "b"], {"a": 100.0, "b": 1.0}).reinforcements[0].memory_id == "b"
    assert co_reinforced(150.0, CoactivationConfig()) == 150.0  # never lowered


def test_a_use_strengthens_only_memories_not_used_within_the_spacing() -> None:
    at = datetime(2026, 3, 1, 12, tzinfo=UTC)
    hour = timedelta(hours=1)
    used = {
        "minutes_ago": [at - timedelta(days=3), at - timedelta(minutes=5)],
        "yesterday": [at - timedelta(days=1)],
        "an_hour_ago": [at - hour],
        "logged_later": [at + timedelta(minutes=10)],  # a replay out of order
    }
    fresh = spaced_uses([*used, "never"], used, at, hour)
    assert fresh == {"yesterday", "an_hour_ago", "never"}
    plan = plan_recall(
        ["minutes_ago", "yesterday"], {"minutes_ago": 1.0, "yesterday": 1.0}, spaced=fresh
    )
    assert [c.memory_id for c in plan.reinforcements] == ["yesterday"]
    assert plan.reinforcements[0].partners == 1  # the partner still counts
    assert plan.pairs == (("minutes_ago", "yesterday"),)  # co-retrieval is counted anyway


def test_boost_partners_after_three_co_occurrences() -> None:
    counts = {("a", "b"): 3, ("a", "c"): 2, ("c", "a"): 1, ("b", "d"): 5}
    assert boosted_pairs(counts) == [("a", "b"), ("a", "c"), ("b", "d")]
    assert boost_partners("a", counts) == ["b", "c"]
    assert boost_partners("b", counts) == ["a", "d"]
    assert boost_partners("z", counts) == []


# --- synaptic tagging ------------------------------------------------------------------


def test_weak_memory_is_tagged_for_the_ttl() -> None:
    d = on_memory((), Arrival("w", 0.3), AT)
    assert d.new_tag == Tag("w", AT, AT + timedelta(hours=4), 0.3, 1.0)
    assert not d.captures and not d.flashbulb
    assert on_memory((), Arrival("mid", 0.6), AT).new_tag is None
    again = on_memory([d.new_tag], Arrival("w", 0.3), AT + timedelta(minutes=1))
    assert again.new_tag is None  # a redelivered memory is not tagged twice


def test_strong_memory_captures_live_tags_and_expired_ones_are_dropped() -> None:
    live = Tag("w1", ago(hours=1), ago(hours=1) + timedelta(hours=4), 0.3, 2.0)
    dead = Tag("w2", ago(hours=5), ago(hours=1), 0.2, 1.0)
    d = on_memory([dead, live], Arrival("s", 0.8), AT, stability_of={"w1": 3.0})
    assert [(c.memory_id, c.captured_by) for c in d.captures] == [("w1", "s")]
    assert d.captures[0].stability_after == pytest.approx(3.9)
    assert d.expired == (dead,)
    assert tags_after([dead, live], d) == ()


def test_capture_is_refused_at_exactly_the_expiry() -> None:
    tag = Tag("w", ago(hours=4), AT, 0.3)
    d = on_memory([tag], Arrival("s", 0.9), AT)
    assert d.captures == () and d.expired == (tag,)


def test_flashbulb_pins_and_raises_importance_then_captures() -> None:
    tag = Tag("w", ago(hours=1), AT + timedelta(hours=3), 0.3)
    d = on_memory([tag], Arrival("shock", 0.1, arousal=0.85), AT, TagConfig())
    assert d.flashbulb and d.pinned and d.importance == 0.9
    assert [c.memory_id for c in d.captures] == ["w"] and d.new_tag is None


def test_expire_splits_live_from_expired() -> None:
    a = Tag("a", ago(hours=5), ago(hours=1), 0.2)
    b = Tag("b", ago(hours=1), AT + timedelta(hours=3), 0.2)
    assert expire([b, a], AT) == ((b,), (a,))


# --- tiers -----------------------------------------------------------------------------


def tier_view(**kw: Any) -> TierView:
    base: dict[str, Any] = {
        "memory_id": "m",
        "tier": "working",
        "q_value": 0.5,
        "created_at": ago(days=100),
        "last_access": ago(days=1),
    }
    base.update(kw)
    return TierView(**base)


def test_scheme_mapping() -> None:
    assert SCHEME == {"working": "episodic", "core": "semantic", "peripheral": "dormant"}


def test_promotion_by_access_frequency() -> None:
    accesses = tuple(ago(days=d) for d in (1, 2, 3, 4, 13))
    to, rule, ev = tier_change(tier_view(access_times=accesses), AT) or ("", "", {})
    assert (to, rule, ev["accesses_in_window"]) == ("core", "access_frequency", 5)
    old = (*accesses[:4], ago(days=15))
    assert tier_change(tier_view(access_times=old), AT) is None


def test_promotion_by_sustained_q_needs_seven_days() -> None:
    assert tier_change(tier_view(q_value=0.75, q_high_since=ago(days=6)), AT) is None
    change = tier_change(tier_view(q_value=0.75, q_high_since=ago(days=7)), AT)
    assert change is not None and change[:2] == ("core", "sustained_q")
    assert q_high_since(None, 0.72, AT) == AT
    assert q_high_since(ago(days=3), 0.8, AT) == ago(days=3)
    assert q_high_since(ago(days=3), 0.6, AT) is None


def test_promotion_by_shared_entity_and_one_step_at_a_time() -> None:
    sizes = entity_group_sizes([("a", ["Ana"]), ("b", ["ana", "Bob"]), ("c", ["ANA"]), ("d", [])])
    assert sizes == {"a": 3, "b": 3, "c": 3, "d": 1}
    change = tier_change(tier_view(tier="working", entity_group=3), AT)
    assert change is not None and change[:2] == ("core", "shared_entity")
    assert tier_change(tier_view(tier="core", entity_group=3), AT) is None
    # a dormant memory (the lifecycle's utility floor, a contradiction) comes back by use
    # only, not because its entity's other memories are still there
    assert tier_change(tier_view(tier="peripheral", entity_group=3), AT) is None
    accesses = tuple(ago(days=d) for d in range(5))
    back = tier_change(tier_view(tier="peripheral", entity_group=3, access_times=accesses), AT)
    assert back is not None and back[:2] == ("working", "access_frequency")


def test_the_subject_itself_is_not_a_shared_entity() -> None:
    # Every memory of Ana names Ana: that alone must not promote them all.
    mems = [("a", ["Ana", "Lisbon"]), ("b", ["Ana"]), ("c", ["ana", "Lisbon"]), ("d", ["Lisbon"])]
    sizes = entity_group_sizes((m, topical_entities(e, "ana")) for m, e in mems)
    assert sizes == {"a": 3, "b": 1, "c": 3, "d": 3}
    assert topical_entities(["Ana", "", "Bob"], None) == ["Ana", "Bob"]


def test_demotion_after_sixty_idle_days_with_low_q() -> None:
    idle = tier_view(tier="core", q_value=0.3, last_access=ago(days=60), entity_group=5)
    change = tier_change(idle, AT)
    assert change is not None and change[:2] == ("working", "idle_low_q")
    assert tier_change(tier_view(q_value=0.3, last_access=ago(days=59)), AT) is None
    assert tier_change(tier_view(q_value=0.4, last_access=ago(days=90)), AT) is None
    lowest = tier_view(tier="peripheral", q_value=0.1, last_access=None, entity_group=5)
    assert tier_change(lowest, AT) is None  # idle and low: never promoted


def test_a_memory_nobody_used_fades_by_time_alone() -> None:
    # never rated (Q 0.5, where every memory starts) and never recalled: its retention on
    # its tier's clock is what sends it down, one step at a time
    idle = {"last_access": None, "created_at": ago(days=60), "retention": 0.05}
    change = tier_change(tier_view(**idle), AT)
    assert change is not None and change[:2] == ("peripheral", "faded")
    assert change[2]["retention"] == 0.05 and change[2]["idle_days"] == 60
    assert change[2]["importance"] == 0.5 and change[2]["fade_below"] == 0.1
    core = tier_change(tier_view(tier="core", entity_group=5, **idle), AT)
    assert core is not None and core[:2] == ("working", "faded")
    # and not when something says it is worth keeping, or it has not faded, or is not idle
    assert tier_change(tier_view(**{**idle, "retention": 0.1}), AT) is None
    assert tier_change(tier_view(**{**idle, "created_at": ago(days=59)}), AT) is None
    assert tier_change(tier_view(q_value=0.55, **idle), AT) is None  # rated useful
    assert tier_change(tier_view(importance=0.6, **idle), AT) is None  # important
    assert tier_change(tier_view(**{**idle, "retention": None}), AT) is None  # unknown
    # dormant and faded: no lower step, and never promoted back by its entities
    assert tier_change(tier_view(tier="peripheral", entity_group=5, **idle), AT) is None


def test_exempt_memories_keep_their_tier() -> None:
    accesses = tuple(ago(days=d) for d in range(5))
    for flag in ("pinned", "immutable", "flashbulb"):
        assert tier_change(tier_view(access_times=accesses, **{flag: True}), AT) is None
    assert tier_change(tier_view(access_times=accesses, active=False), AT) is None


# --- evolution -------------------------------------------------------------------------


def evo(mid: str, **kw: Any) -> EvolutionView:
    base: dict[str, Any] = {
        "memory_id": mid,
        "namespace": "ns",
        "category": "fact",
        "q_value": 0.5,
        "created_at": ago(days=10),
        "last_access": ago(days=1),
    }
    base.update(kw)
    return EvolutionView(**base)


def test_per_memory_levels() -> None:
    history = ((ago(days=3), 0.4, 0.0, "negative"), (ago(days=1), 0.15, 0.0, "negative"))
    memories = [
        evo("crit", q_value=0.15, access_count=10, q_history=history),
        evo("high", q_value=0.25, access_count=5),
        evo("stale", created_at=ago(days=200), last_access=ago(days=90)),
        evo("never", created_at=ago(days=95), last_access=None),
        evo("fine", q_value=0.25, access_count=4),
        evo("pinned", q_value=0.1, access_count=50, pinned=True),
    ]
    found = {c.memory_ids[0]: c for c in memory_candidates(memories, AT)}
    assert {k: (c.level, c.action) for k, c in found.items()} == {
        "crit": ("critical", "deprecate"),
        "high": ("high", "refine"),
        "stale": ("stale", "archive"),
        "never": ("stale", "archive"),
    }
    usage = found["crit"].evidence["usage"]["crit"]
    assert usage["access_count"] == 10 and usage["q_history"][-1][1] == 0.15
    assert [f["outcome"] for f in usage["feedback"]] == ["negative", "negative"]


def _at(cos: float) -> Any:
    """A unit vector at cosine ``cos`` from (1, 0, 0)."""
    return np.array([cos, math.sqrt(1.0 - cos * cos), 0.0])


def test_a_fact_restated_with_more_detail_merges_into_the_restatement() -> None:
    short = "Sam's sister Clara lives in Lisbon"
    longer = "Sam's sister Clara lives in Lisbon with her two kids and a parrot named Kiwi"
    fact = {"category": "relationship", "subject": "sam"}
    ms = [
        evo("a", text=short, entities=("Clara", "Lisbon"), **fact),
        evo("b", text=longer, entities=("Clara", "Lisbon", "Kiwi"), **fact),
    ]
    v = {"a": _at(1.0), "b": _at(0.65)}
    (c,) = merge_candidates(ms, v)
    assert c.action == "merge" and c.memory_ids == ("a", "b")
    assert (c.evidence["match"], c.evidence["covered"], c.evidence["covered_by"]) == (
        "covered",
        "a",
        "b",
    )
    assert set(c.evidence["usage"]) == {"a", "b"}
    # not when: too far apart, the longer one turns it around, what happened twice (an
    # episode, a moment), about different things (another subject, names not nested)
    assert merge_candidates(ms, {"a": _at(1.0), "b": _at(0.59)}) == []
    negated = evo("b", text="Sam's sister Clara no longer lives in Lisbon", **fact)
    assert merge_candidates([ms[0], negated], v) == []
    assert merge_candidates([ms[0], evo("b", text=longer, kind="episode", **fact)], v) == []
    moments = [evo(m.memory_id, text=m.text, category="moment") for m in ms]
    assert merge_candidates(moments, v) == []
    other = evo("b", text=longer, category="relationship", subject="lena")
    assert merge_candidates([ms[0], other], v) == []
    elsewhere = evo("b", text=short + " and Ana in Porto", category="relationship", subject="sam")
    assert merge_candidates([evo("a", text=short + " not Ana", **fact), elsewhere], v) == []


def test_a_short_fact_inside_several_longer_ones_joins_only_the_closest() -> None:
    ms = [
        evo("a", text="Sam is using Flask", subject="sam"),
        evo("b", text="Sam is using Flask for the budget app backend", subject="sam"),
        evo("c", text="Sam is using Flask and SQLite for the database", subject="sam"),
    ]
    v = {"a": _at(1.0), "b": _at(0.7), "c": np.array([0.8, 0.0, 0.6])}
    (c,) = merge_candidates(ms, v)  # b and c: cosine 0.56, and neither covers the other
    assert c.memory_ids == ("a", "c") and c.evidence["covered_by"] == "c"


def test_merge_and_induction_candidates() -> None:
    v = {
        "a": np.array([1.0, 0.0, 0.0]),
        "b": np.array([0.99, 0.05, 0.0]),
        "c": np.array([0.98, 0.0, 0.1]),
        "d": np.array([0.0, 1.0, 0.0]),
    }
    same = [evo(k, category="preference") for k in "abd"] + [evo("c", category="fact")]
    merges = merge_candidates(same, v)
    assert [(c.action, c.memory_ids) for c in merges] == [("merge", ("a", "b"))]
    skills = [
        evo("a", category="skill"),
        evo("b", category="principle"),
        evo("c", category="skill"),
    ]
    (induce,) = induction_candidates([*skills, evo("d", category="skill")], v)
    assert induce.memory_ids == ("a", "b", "c") and induce.evidence["size"] == 3
    assert induction_candidates(skills[:2], v) == []
    assert {c.action for c in find_candidates(skills, v, AT)} == {"merge", "induce"}
