"""Channel fusion, multi-part merging, same-turn redundancy in MMR, and the as_of cut."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstream.core.fusion import Part, convex_fusion, fuse_parts, ranked
from memstream.core.memory_state import MemoryState
from memstream.core.mmr import mmr
from memstream.core.rescoring import known_and_not_over
from memstream.core.scoring import Scored

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


def test_convex_fusion_normalises_each_channel_by_its_best() -> None:
    fused = convex_fusion(
        ["a", "b", "c", "d"],
        dense={"a": 0.5, "b": 0.25, "c": -0.2},
        sparse={"b": 8.0, "d": 2.0},
    )
    # a: 0.5 x 1 (best cosine); b: 0.5 x 0.5 + 0.5 x 1 (best BM25); c clipped; d: 0.5 x 2/8
    assert fused == pytest.approx({"a": 0.5, "b": 0.75, "c": 0.0, "d": 0.125})
    # the weight moves between the channels; 1 is dense only, 0 sparse only
    assert convex_fusion(["a", "b"], {"a": 1.0, "b": 0.5}, {"b": 3.0}, alpha=1.0) == {
        "a": 1.0,
        "b": 0.5,
    }
    assert convex_fusion(["a", "b"], {"a": 1.0, "b": 0.5}, {"b": 3.0}, alpha=0.0) == {
        "a": 0.0,
        "b": 1.0,
    }


def test_convex_fusion_is_bounded_and_total() -> None:
    fused = convex_fusion(
        ["a", "b", "c", "a"],
        dense={"a": math.nan, "b": math.inf, "x": 0.9},
        sparse={"c": -1.0},
    )
    assert list(fused) == ["a", "b", "c"]  # candidates once, in order; others ignored
    assert fused == {"a": 0.0, "b": 0.0, "c": 0.0}  # bad scores are no match
    assert convex_fusion([], {}, {}) == {}
    assert all(0.0 <= v <= 1.0 for v in convex_fusion(["a"], {"a": 0.3}, {"a": 1.0}).values())
    with pytest.raises(ValueError):
        convex_fusion(["a"], {}, {}, alpha=1.5)


def test_ranked_breaks_ties_by_id() -> None:
    assert ranked({"b": 0.5, "a": 0.5, "c": 0.9}) == [("c", 0.9), ("a", 0.5), ("b", 0.5)]


def test_fuse_parts_keeps_each_memorys_best_part_on_one_scale() -> None:
    # the real question matches well; a format instruction ("Mention only three items")
    # matches one memory weakly: that match must not tie with the real answer
    real = Part(["a", "b"], {"a": 0.6, "b": 0.3}, {"a": 8.0, "b": 2.0})
    junk = Part(["c", "b"], {"c": 0.1}, {"c": 1.0, "b": 4.0})
    fused = dict(fuse_parts([real, junk]))
    assert fused["a"] == 1.0
    assert fused["c"] < 0.2
    assert fused["b"] == 0.375  # its better part: 0.5 * 0.3 / 0.6 + 0.5 * 2 / 8
    assert fuse_parts([]) == []
    assert fuse_parts([real, junk]) == fuse_parts([junk, real])
    # one part: exactly the single-query fusion
    assert fuse_parts([real]) == ranked(convex_fusion(real.candidates, real.dense, real.sparse))


def _s(memory_id: str, value: float) -> Scored:
    return Scored(memory_id, value, {})


def test_mmr_counts_memories_of_one_turn_as_repeats() -> None:
    scored = [_s("a1", 0.9), _s("a2", 0.85), _s("b", 0.7)]
    vectors = {"a1": np.array([1.0, 0.0]), "a2": np.array([0.0, 1.0]), "b": np.array([0.6, 0.8])}
    plain = mmr(scored, vectors, k=2)
    assert [s.memory_id for s in plain] == ["a1", "a2"]  # unlike vectors: no penalty
    sources = {"a1": ("t1",), "a2": ("t1", "t2"), "b": ("t3",)}
    assert [s.memory_id for s in mmr(scored, vectors, k=2, sources=sources)] == ["a1", "b"]
    # still picked once the other turns are used up, and never twice
    assert [s.memory_id for s in mmr(scored, vectors, k=5, sources=sources)] == ["a1", "b", "a2"]
    # a sibling much more relevant than the alternatives still gets in
    strong = [_s("a1", 0.9), _s("a2", 0.9), _s("b", 0.3)]
    assert [s.memory_id for s in mmr(strong, vectors, k=2, sources=sources)] == ["a1", "a2"]
    # memories without sources, or with none in common, are as before
    assert mmr(scored, vectors, k=3, sources={"b": ("t1",)}) == mmr(scored, vectors, k=3)


def _state(**kw: object) -> MemoryState:
    base = MemoryState(
        memory_id="m1",
        namespace="ns",
        session_id="s1",
        text="Amara's defence is scheduled for June 20",
        category="fact",
        kind="episode",
        status="active",
        tier="working",
        importance=0.5,
        confidence=0.8,
        arousal=0.0,
        stability=1.0,
        q_value=0.5,
        entities=(),
        valid_from=None,
        valid_until=None,
        content_hash="h",
        source_turn_ids=("t1",),
        created_at=NOW,
        updated_at=NOW,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_as_of_keeps_what_was_known_and_not_over() -> None:
    day = timedelta(days=1)
    assert known_and_not_over(_state(), NOW)
    assert not known_and_not_over(_state(), NOW - day)  # not written yet
    # a plan for later was known all the same
    assert known_and_not_over(_state(valid_from=NOW + 20 * day), NOW + day)
    # superseded or ended by then: out; superseded only later: in
    over = _state(status="superseded", valid_until=NOW + 5 * day)
    assert known_and_not_over(over, NOW + 4 * day)
    assert not known_and_not_over(over, NOW + 5 * day)


def test_a_summary_is_folded_behind_its_members() -> None:
    from memstream.core.mmr import folded

    scored = [_s("summary", 0.9), _s("m1", 0.8), _s("m2", 0.7), _s("other", 0.6), _s("lone", 0.85)]
    sources = {
        "summary": ["t1", "t2", "t9"],
        "m1": ["t1"],
        "m2": ["t2"],
        "other": ["t3"],
        "lone": ["t7"],  # a summary whose members are not candidates
    }
    derived = {"summary", "lone"}
    top = mmr(scored, {}, k=3, sources=sources, derived=derived)
    assert [s.memory_id for s in top] == ["lone", "m1", "m2"]  # members not pushed out
    assert folded(sources, derived, sources) == ["summary"]
    assert mmr(scored, {}, k=5, sources=sources)[0].memory_id == "summary"  # unfolded: first


def test_mmr_spreads_picks_over_time_when_given_times() -> None:
    # a, b, c said the same day, d a month later, a little less relevant
    scored = [_s("a", 0.9), _s("b", 0.88), _s("c", 0.86), _s("d", 0.8)]
    vectors = {m: np.array([float(i), 1.0]) for i, m in enumerate("abcd")}
    day = 86_400.0
    times = {"a": 0.0, "b": 60.0, "c": 120.0, "d": 30 * day}
    assert [s.memory_id for s in mmr(scored, {}, k=2)] == ["a", "b"]
    assert [s.memory_id for s in mmr(scored, {}, k=2, times=times, time_scale=day)] == ["a", "d"]
    # without a scale, or for memories without a time, nothing changes
    assert mmr(scored, vectors, k=3, times=times) == mmr(scored, vectors, k=3)
    assert mmr(scored, {}, k=2, times={"a": 0.0}, time_scale=day) == mmr(scored, {}, k=2)


def test_spread_scale_is_a_share_of_the_candidates_time_range() -> None:
    from memstream.core.mmr import SPREAD, spread_scale

    assert spread_scale({}) == 0.0
    assert spread_scale({"a": 5.0, "b": 5.0}) == 0.0
    assert spread_scale({"a": 0.0, "b": 100.0, "c": 40.0}) == SPREAD * 100.0
