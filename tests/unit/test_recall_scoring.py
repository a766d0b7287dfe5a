"""Recall scoring rules: retention, activation, the weighted score, MMR and confidence."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstream.core.activation import activation, base_level, hebbian, pair, squash
from memstream.core.intent import BASE_PROFILES, INTENT_KINDS, PROFILES
from memstream.core.memory_state import MemoryState
from memstream.core.mmr import mmr
from memstream.core.recall_gate import ConfidenceThresholds, confidence
from memstream.core.retention import RetentionParams, power_law, retention, weibull
from memstream.core.scoring import (
    COMPONENTS,
    Candidate,
    Scored,
    ScoringContext,
    entity_overlap,
    score,
    score_all,
)

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


def _cand(memory_id: str = "m1", **kw: object) -> Candidate:
    base: dict[str, object] = {
        "memory_id": memory_id,
        "text": "Ana lives in Lisbon",
        "relevance": 0.03,
        "created_at": NOW - timedelta(days=10),
    }
    base.update(kw)
    return Candidate(**base)  # type: ignore[arg-type]


def _ctx(**kw: object) -> ScoringContext:
    return ScoringContext(now=NOW, **kw)  # type: ignore[arg-type]


# --- retention ---------------------------------------------------------------------------


def test_weibull_matches_formula_and_stability_stretches_time() -> None:
    assert weibull(0) == 1.0
    assert weibull(120) == pytest.approx(math.exp(-1))
    assert weibull(60) == pytest.approx(math.exp(-((60 / 120) ** 1.5)))
    assert weibull(240, stability=2.0) == pytest.approx(weibull(120))


def test_power_law_is_fsrs_shape() -> None:
    assert power_law(0, stability=5) == 1.0
    assert power_law(9 * 5, stability=5) == pytest.approx(0.5)
    assert power_law(5, stability=5) == pytest.approx(1 / (1 + 1 / 9))  # 0.9 at t = S


def test_retention_selects_model_and_scales_power_law_by_stability_days() -> None:
    assert retention(30, model="weibull") == weibull(30)
    assert retention(30, model="fsrs", stability=2.0) == power_law(30, stability=2.0)
    p = RetentionParams(fsrs_days=10.0)
    assert retention(30, model="fsrs", stability=2.0, params=p) == power_law(30, stability=20.0)
    assert retention(9, model="fsrs") == pytest.approx(0.5)  # the formula as written


def test_retention_edges() -> None:
    assert weibull(-5) == 1.0  # clock skew counts as "just now"
    assert weibull(math.inf) == 0.0 and power_law(math.inf) == 0.0
    assert weibull(1e300, stability=1e-300) == 0.0  # no overflow
    with pytest.raises(ValueError):
        weibull(math.nan)
    with pytest.raises(ValueError):
        retention(1.0, model="linear")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RetentionParams(lam=0)


# --- activation --------------------------------------------------------------------------


def test_base_level_single_use_is_minus_d_ln_age() -> None:
    assert base_level(1, 4.0, 4.0) == pytest.approx(-0.5 * math.log(4.0))


def test_activation_grows_with_use_and_fades_with_time() -> None:
    assert activation(0, 1.0, 1.0) == pytest.approx(0.5)
    assert activation(9, 30.0, 1.0) > activation(0, 30.0, 1.0)
    assert activation(3, 30.0, 1.0) > activation(3, 30.0, 20.0)
    assert activation(0, 365.0, 365.0) < 0.1
    assert 0.0 < activation(0, 0.0, 0.0) < 1.0  # floored at a minute, no ln(0)


def test_squash_is_overflow_safe() -> None:
    assert squash(1e6) == 1.0 and squash(-1e6) == 0.0 and squash(-math.inf) == 0.0


def test_hebbian_needs_three_coretrievals_with_a_top_peer() -> None:
    counts = {pair("b", "a"): 3, pair("a", "c"): 9}
    assert pair("b", "a") == ("a", "b")
    assert hebbian("a", ["b"], {pair("a", "b"): 2}) == 0.0
    assert hebbian("a", ["b"], counts) == pytest.approx(0.5)
    assert hebbian("a", ["b", "c"], counts) == pytest.approx(9 / 12)  # strongest link
    assert hebbian("a", ["a", "z"], {pair("a", "a"): 10}) == 0.0  # not with itself
    assert hebbian("b", ["a"], {("b", "a"): 2, ("a", "b"): 1}) == pytest.approx(0.5)


# --- scoring -----------------------------------------------------------------------------


def test_profiles_cover_every_intent_and_sum_to_one() -> None:
    assert set(PROFILES) == set(INTENT_KINDS)
    for profile in PROFILES.values():
        assert tuple(profile.weights()) == COMPONENTS
        assert math.fsum(profile.weights().values()) == pytest.approx(1.0)


def test_explain_has_every_value_and_weight_and_sums_to_score() -> None:
    s = score(_cand(), _ctx(relevance_max=0.03), PROFILES["general"])
    for name in COMPONENTS:
        assert 0.0 <= s.explain[name] <= 1.0
        assert s.explain[name + ".w"] == PROFILES["general"].weights()[name]
    assert s.explain["relevance.raw"] == 0.03
    assert s.score == pytest.approx(sum(s.contribution(n) for n in COMPONENTS))
    assert 0.0 <= s.score <= 1.0


def test_relevance_normalised_by_set_max_or_best_possible_rrf() -> None:
    assert score(_cand(), _ctx(relevance_max=0.06), PROFILES["general"]).explain[
        "relevance"
    ] == pytest.approx(0.5)
    alone = score(_cand(relevance=2 / 61), _ctx(), PROFILES["general"])
    assert alone.explain["relevance"] == pytest.approx(1.0)


def test_each_boost_moves_the_score_up() -> None:
    profile = PROFILES["general"]
    ctx = _ctx(relevance_max=0.03)
    plain = score(_cand(tier="peripheral"), ctx, profile).score
    assert score(_cand(tier="core"), ctx, profile).score > plain
    assert (
        score(_cand(tier="core"), ctx, profile).score
        > score(_cand(tier="working"), ctx, profile).score
    )
    assert score(_cand(tier="peripheral", pinned=True), ctx, profile).score > plain
    assert (
        score(
            _cand(tier="peripheral", session_id="s1"), replace(ctx, session_id="s1"), profile
        ).score
        > plain
    )
    with_entity = replace(ctx, query_entities=frozenset({"Ana"}))
    assert score(_cand(tier="peripheral"), with_entity, profile).score > plain
    linked = replace(ctx, peers=frozenset({"m2"}), coactivation={pair("m1", "m2"): 4})
    assert score(_cand(tier="peripheral"), linked, profile).score > plain
    assert score(_cand(tier="peripheral", q_value=0.9), ctx, profile).score > plain


def test_recent_frequent_use_beats_old_unused() -> None:
    ctx = _ctx(relevance_max=0.03)
    warm = _cand(last_access=NOW - timedelta(hours=2), access_count=12)
    cold = _cand(created_at=NOW - timedelta(days=400))
    warm_s, cold_s = (score(c, ctx, PROFILES["general"]) for c in (warm, cold))
    assert warm_s.explain["activation"] > cold_s.explain["activation"]
    assert warm_s.explain["retention"] > cold_s.explain["retention"]
    assert warm_s.score > cold_s.score


def test_retention_model_is_selectable_in_context() -> None:
    c = _cand(created_at=NOW - timedelta(days=60))
    w = score(c, _ctx(), PROFILES["general"]).explain["retention"]
    p = score(c, _ctx(retention_model="fsrs"), PROFILES["general"]).explain["retention"]
    assert w == pytest.approx(weibull(60)) and p == pytest.approx(power_law(60, stability=1))


def test_entity_overlap_reads_entities_and_text_case_insensitively() -> None:
    q = frozenset({"Ana", "New York"})
    assert entity_overlap(q, ("ana",), "moved to new york in May") == 1.0
    assert entity_overlap(q, (), "Ana moved") == 0.5
    assert entity_overlap(q, (), "Banana") == 0.0  # whole words only
    assert entity_overlap(frozenset(), ("Ana",), "Ana") == 0.0


def test_validity_follows_the_time_asked_about() -> None:
    profile = PROFILES["temporal"]
    old = _cand(
        "old",
        status="superseded",
        valid_from=datetime(2020, 1, 1, tzinfo=UTC),
        valid_until=datetime(2023, 1, 1, tzinfo=UTC),
    )
    new = _cand("new", valid_from=datetime(2023, 1, 1, tzinfo=UTC))
    in_2021 = _ctx(at=datetime(2021, 6, 1, tzinfo=UTC), include_superseded=True)
    assert score(old, in_2021, profile).explain["validity"] == 1.0
    assert score(new, in_2021, profile).explain["validity"] == 0.0
    now_ctx = _ctx()
    assert score(old, now_ctx, profile).explain["validity"] == 0.0
    assert score(new, now_ctx, profile).explain["validity"] == 1.0
    history = _ctx(include_superseded=True)
    assert score(old, history, profile).explain["validity"] == 1.0
    archived = _cand(status="archived")
    assert score(archived, history, profile).explain["validity"] == 0.0


def test_bad_numbers_are_clamped_not_propagated() -> None:
    c = _cand(relevance=math.nan, q_value=math.nan, importance=7.0, stability=-1.0)
    s = score(c, _ctx(), PROFILES["general"])
    assert math.isfinite(s.score)
    assert s.explain["relevance"] == 0.0 and s.explain["q_value"] == 0.0
    assert s.explain["importance"] == 1.0


def test_score_all_normalises_ranks_and_breaks_ties_by_id() -> None:
    cands = [_cand("b", relevance=0.01), _cand("a", relevance=0.01), _cand("c", relevance=0.03)]
    out = score_all(cands, _ctx(), PROFILES["factual"])
    assert [s.memory_id for s in out] == ["c", "a", "b"]
    assert out[0].explain["relevance"] == 1.0
    assert out[1].explain["relevance"] == pytest.approx(1 / 3)
    assert score_all([], _ctx(), PROFILES["factual"]) == []


def test_score_all_uses_top_candidates_as_hebbian_peers() -> None:
    cands = [_cand("top", relevance=0.03), _cand("low", relevance=0.001)]
    ctx = _ctx(coactivation={pair("top", "low"): 5})
    by_id = {s.memory_id: s for s in score_all(cands, ctx, PROFILES["causal"])}
    assert by_id["low"].explain["coactivation"] == pytest.approx(5 / 8)


def test_candidate_from_state() -> None:
    state = MemoryState(
        memory_id="m9",
        namespace="ns",
        session_id="s1",
        text="Ana prefers tea",
        category="preference",
        kind="note",
        status="active",
        tier="core",
        importance=0.8,
        confidence=0.9,
        arousal=0.1,
        stability=2.0,
        q_value=0.7,
        entities=("Ana",),
        valid_from=None,
        valid_until=None,
        content_hash="h",
        source_turn_ids=("t1",),
        created_at=NOW,
        updated_at=NOW,
        pinned=True,
    )
    c = Candidate.from_state(state, relevance=0.02, dense_rank=1, access_count=3)
    assert (c.memory_id, c.tier, c.stability, c.q_value, c.pinned) == ("m9", "core", 2.0, 0.7, True)
    assert (c.dense_rank, c.sparse_rank, c.access_count, c.entities) == (1, None, 3, ("Ana",))


# --- MMR ---------------------------------------------------------------------------------


def _s(memory_id: str, value: float) -> Scored:
    return Scored(memory_id, value, {})


def test_mmr_skips_a_near_duplicate_for_a_different_memory() -> None:
    scored = [_s("a", 0.9), _s("a2", 0.88), _s("b", 0.7)]
    vectors = {
        "a": np.array([1.0, 0.0]),
        "a2": np.array([0.99, 0.05]),
        "b": np.array([0.0, 1.0]),
    }
    assert [s.memory_id for s in mmr(scored, vectors, lambda_=0.5, k=2)] == ["a", "b"]
    assert [s.memory_id for s in mmr(scored, vectors, lambda_=1.0, k=2)] == ["a", "a2"]


def test_mmr_ties_and_inputs_are_deterministic() -> None:
    scored = [_s("z", 0.5), _s("y", 0.5), _s("y", 0.2)]
    same = {"z": np.ones(3), "y": np.ones(3)}
    out = mmr(scored, same, k=5)
    assert [s.memory_id for s in out] == ["y", "z"]  # ties: smaller id; repeats once
    assert out[0].score == 0.5
    assert mmr(list(reversed(scored)), same, k=5) == out
    assert mmr(scored, {}, k=0) == []
    # missing, zero and wrong-size vectors are similar to nothing
    odd = {"z": np.zeros(3), "y": np.ones(4)}
    assert [s.memory_id for s in mmr(scored, odd, k=5)] == ["y", "z"]
    with pytest.raises(ValueError):
        mmr(scored, same, lambda_=1.5)


# --- confidence --------------------------------------------------------------------------


def test_confidence_thresholds() -> None:
    assert confidence([]) == "skipped"
    assert confidence([_s("a", 0.45), _s("b", 0.1)]) == "skipped"
    assert confidence([_s("a", 0.7), _s("b", 0.69)]) == "full"
    assert confidence([_s("a", 0.55), _s("b", 0.4), _s("c", 0.4)]) == "full"  # clear lead
    assert confidence([_s("a", 0.55), _s("b", 0.5), _s("c", 0.49)]) == "abbreviated"
    assert confidence([_s("b", 0.5), _s("a", 0.55), _s("c", 0.49)]) == "abbreviated"
    assert confidence([_s("a", 0.55)]) == "full"  # alone: the gap is the score
    assert confidence([_s("a", 0.55)], ConfidenceThresholds(clear_gap=1.0)) == "abbreviated"


def test_confidence_on_scored_sets() -> None:
    profile = BASE_PROFILES["general"]
    ctx = _ctx()
    warm = _cand("warm", last_access=NOW - timedelta(days=1), access_count=5)
    close = _cand("close", relevance=0.0295, created_at=NOW - timedelta(days=400))
    assert confidence(score_all([warm, close], ctx, profile)) == "full"
    stale = _cand("stale", created_at=NOW - timedelta(days=400))
    assert confidence(score_all([stale, close], ctx, profile)) == "abbreviated"
    unrelated = score_all(
        [stale, close],
        replace(ctx, query_entities=frozenset({"Zed"})),
        BASE_PROFILES["entity_profile"],
    )
    assert confidence(unrelated) == "skipped"


def test_event_time_match_reads_the_memorys_event_time_against_the_named_span() -> None:
    from memstream.core.query_time import TimeRef
    from memstream.core.scoring import event_time_match

    may = TimeRef(
        datetime(2024, 5, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC), "during", "May"
    )
    said_in_may = _cand(created_at=datetime(2024, 5, 10, tzinfo=UTC))
    said_later_about_may = _cand(
        created_at=datetime(2024, 8, 1, tzinfo=UTC), valid_from=datetime(2024, 5, 3, tzinfo=UTC)
    )
    state_from_before = _cand(created_at=datetime(2024, 1, 2, tzinfo=UTC))
    ended_before = _cand(
        created_at=datetime(2024, 1, 2, tzinfo=UTC), valid_until=datetime(2024, 4, 1, tzinfo=UTC)
    )
    said_after = _cand(created_at=datetime(2024, 7, 1, tzinfo=UTC))
    assert event_time_match(said_in_may, may) == 1.0
    assert event_time_match(said_later_about_may, may) == 1.0  # the date its text names
    assert event_time_match(state_from_before, may) == 0.5  # held then, not said then
    assert event_time_match(ended_before, may) == 0.0
    assert event_time_match(said_after, may) == 0.0
    assert event_time_match(said_in_may, None) == 0.0
    before_may = replace(may, relation="before")
    assert event_time_match(state_from_before, before_may) == 1.0
    assert event_time_match(said_in_may, before_may) == 0.0
    assert event_time_match(said_after, replace(may, relation="after")) == 1.0
    assert event_time_match(said_in_may, replace(may, relation="since")) == 1.0


def test_a_named_month_puts_the_memory_of_that_month_first() -> None:
    from memstream.core.intent import classify

    now = datetime(2024, 9, 1, tzinfo=UTC)
    intent = classify("Where did Maya go hiking in May 2024?", now=now)
    may = _cand("may", created_at=datetime(2024, 5, 12, tzinfo=UTC), relevance=0.9)
    july = _cand("july", created_at=datetime(2024, 7, 12, tzinfo=UTC), relevance=1.0)
    ranked = score_all([may, july], ScoringContext(now=now, time=intent.time), intent.profile)
    assert [s.memory_id for s in ranked] == ["may", "july"]
    assert ranked[0].explain["event_time"] == 1.0 and ranked[0].explain["event_time.w"] > 0
