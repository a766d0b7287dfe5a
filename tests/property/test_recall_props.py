"""Property tests for the recall rules: bounded, monotone, total, order-independent."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.activation import activation, pair
from memstream.core.decompose import decompose, rrf_merge
from memstream.core.intent import INTENT_KINDS, PROFILES, classify
from memstream.core.mmr import mmr
from memstream.core.query_time import parse_time
from memstream.core.recall_gate import confidence, should_retrieve
from memstream.core.retention import RETENTION_MODELS, retention
from memstream.core.scoring import (
    COMPONENTS,
    Candidate,
    Scored,
    ScoringContext,
    score,
    score_all,
    with_utility,
)

_DATES = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
_DAYS = st.floats(min_value=0.0, max_value=1e7, allow_nan=False)
_STABILITY = st.floats(min_value=1e-3, max_value=1e4)
_ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
_IDS = st.sampled_from([f"m{i}" for i in range(8)])
_WORDS = st.sampled_from(
    ["when", "why", "and", "what", "does", "she", "her", "Ana", "live", "in", "March", "May",
     "2023", "last", "week", "ago", "3", "days", "before", "?", ",", "/help", "ok", "tell",
     "me", "about", "2023-05-02", "used to", "prefer"]
)  # fmt: skip
_QUERIES = st.one_of(st.text(), st.lists(_WORDS, max_size=16).map(" ".join))


@settings(max_examples=150, deadline=None)
@given(_DAYS, _DAYS, _STABILITY, st.sampled_from(RETENTION_MODELS))
def test_retention_bounded_and_monotone(t1: float, t2: float, s: float, model: str) -> None:
    early, late = sorted((t1, t2))
    r_early = retention(early, stability=s, model=model)  # type: ignore[arg-type]
    r_late = retention(late, stability=s, model=model)  # type: ignore[arg-type]
    assert 0.0 <= r_late <= r_early <= 1.0


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10_000), _DAYS, _DAYS, _DAYS)
def test_activation_bounded_and_fades(n: int, age: float, t1: float, t2: float) -> None:
    early, late = sorted((t1, t2))
    a_recent, a_old = activation(n, age, early), activation(n, age, late)
    assert 0.0 <= a_old <= 1.0 and 0.0 <= a_recent <= 1.0
    if late <= age:  # within the lifetime, a later last use can only help
        assert a_old <= a_recent + 1e-12


@st.composite
def candidates(draw: st.DrawFn) -> Candidate:
    return Candidate(
        memory_id=draw(_IDS),
        text=draw(st.text(max_size=40)),
        relevance=draw(_ANY_FLOAT),
        created_at=draw(_DATES),
        last_access=draw(st.none() | _DATES),
        access_count=draw(st.integers(-5, 10_000)),
        stability=draw(_ANY_FLOAT),
        q_value=draw(_ANY_FLOAT),
        importance=draw(_ANY_FLOAT),
        tier=draw(st.sampled_from(["core", "working", "peripheral", "odd"])),
        entities=tuple(draw(st.lists(st.sampled_from(["Ana", "Bob", "ana", ""]), max_size=3))),
        session_id=draw(st.none() | st.sampled_from(["s1", "s2"])),
        pinned=draw(st.booleans()),
        status=draw(st.sampled_from(["active", "superseded", "archived", "deprecated"])),
        valid_from=draw(st.none() | _DATES),
        valid_until=draw(st.none() | _DATES),
    )


@st.composite
def contexts(draw: st.DrawFn) -> ScoringContext:
    return ScoringContext(
        now=draw(_DATES),
        query_entities=frozenset(draw(st.lists(st.sampled_from(["Ana", "Bob", "Lisbon"])))),
        session_id=draw(st.none() | st.sampled_from(["s1", "s2"])),
        coactivation=draw(
            st.dictionaries(st.tuples(_IDS, _IDS).map(lambda p: pair(*p)), st.integers(0, 9))
        ),
        retention_model=draw(st.sampled_from(RETENTION_MODELS)),
        at=draw(st.none() | _DATES),
        include_superseded=draw(st.booleans()),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(candidates(), max_size=6), contexts(), st.sampled_from(INTENT_KINDS))
def test_scores_finite_bounded_and_explained(
    cands: list[Candidate], ctx: ScoringContext, kind: str
) -> None:
    profile = PROFILES[kind]  # type: ignore[index]
    out = score_all(cands, ctx, profile)
    assert len(out) == len(cands)
    assert [s.score for s in out] == sorted((s.score for s in out), reverse=True)
    for s in out:
        assert math.isfinite(s.score) and 0.0 <= s.score <= 1.0 + 1e-12
        values = [s.explain[c] for c in COMPONENTS]
        assert all(0.0 <= v <= 1.0 for v in values)
        # the documented relation: the exact-rounded sum of value x weight, scaled by the
        # learned utility (explained when it changed anything)
        total = math.fsum(s.explain[c] * s.explain[c + ".w"] for c in COMPONENTS)
        assert s.explain.get("score.before_utility", total) == total
        assert s.score == with_utility(total, s.explain["q_value"], ctx.utility_gain)
    for c in cands:
        assert math.isfinite(score(c, ctx, profile).score)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(_IDS, st.floats(0.0, 1.0)), max_size=10),
    st.dictionaries(
        _IDS,
        st.lists(st.floats(-10, 10, allow_nan=False), min_size=3, max_size=3).map(np.array),
    ),
    st.floats(0.0, 1.0),
    st.integers(0, 12),
    st.randoms(use_true_random=False),
)
def test_mmr_picks_distinct_members_deterministically(
    pairs: list[tuple[str, float]],
    vectors: dict[str, np.ndarray],  # type: ignore[type-arg]
    lambda_: float,
    k: int,
    rnd: object,
) -> None:
    scored = [Scored(m, v, {}) for m, v in pairs]
    out = mmr(scored, vectors, lambda_=lambda_, k=k)
    ids = [s.memory_id for s in out]
    assert len(ids) == len(set(ids)) == min(k, len({m for m, _ in pairs}))
    assert all(s in scored for s in out)
    shuffled = list(scored)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert [s.memory_id for s in mmr(shuffled, vectors, lambda_=lambda_, k=k)] == ids


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(_IDS, max_size=8), max_size=6),
    st.integers(0, 100),
    st.randoms(use_true_random=False),
)
def test_rrf_merge_deterministic_and_ranking_order_free(
    rankings: list[list[str]], k: int, rnd: object
) -> None:
    merged = rrf_merge(rankings, k=k)
    assert merged == rrf_merge(rankings, k=k)
    shuffled = list(rankings)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert rrf_merge(shuffled, k=k) == merged
    ids = [m for m, _ in merged]
    assert len(ids) == len(set(ids)) and set(ids) == {m for r in rankings for m in r}
    assert [v for _, v in merged] == sorted((v for _, v in merged), reverse=True)


@settings(max_examples=150, deadline=None)
@given(_QUERIES, st.none() | _DATES)
def test_query_rules_never_raise(query: str, now: datetime | None) -> None:
    gate = should_retrieve(query)
    assert isinstance(gate.retrieve, bool) and gate.reason
    if not query.strip():
        assert not gate.retrieve
    intent = classify(query, now)
    assert intent.kind in INTENT_KINDS
    if intent.at is not None and now is not None:
        assert intent.at <= now
    ref = parse_time(query, now)
    assert ref is None or ref.start < ref.end
    parts = decompose(query)
    assert len(parts) <= 4 and all(p.strip() for p in parts)
    assert (parts == []) == (not query.strip())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=8))
def test_confidence_is_total(values: list[float]) -> None:
    level = confidence([Scored(f"m{i}", v, {}) for i, v in enumerate(values)])
    assert level in ("full", "abbreviated", "skipped")


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_learned_utility_keeps_scores_in_range_and_order(
    total: float, q: float, other_q: float, gain: float
) -> None:
    scaled = with_utility(total, q, gain)
    assert 0.0 <= scaled <= 1.0
    assert with_utility(total, 0.5, gain) == total  # no feedback, no change
    if q <= other_q:  # more useful never ranks lower at the same relevance
        assert scaled <= with_utility(total, other_q, gain) + 1e-12


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.lists(_ANY_FLOAT, min_size=3, max_size=3),
            st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=2),  # another dimension
        ),
        min_size=1,
        max_size=8,
    )
)
def test_mmr_unit_rows_match_the_norm_of_each_vector(raw: list[list[float] | None]) -> None:
    """The rows MMR compares: each usable vector at unit length (as its own norm gives),
    zeros for a missing, zero, non-finite or other-dimension one."""
    from memstream.core.mmr import _unit_rows

    ids = [f"m{i}" for i in range(len(raw))]
    vectors = {i: np.array(v) for i, v in zip(ids, raw, strict=True) if v is not None}
    rows = _unit_rows(ids, vectors)
    dim = next((vectors[i].size for i in ids if i in vectors), 0)
    assert rows.shape == (len(ids), dim)
    for i, row in zip(ids, rows, strict=True):
        v = vectors.get(i)
        with np.errstate(over="ignore", invalid="ignore"):
            norm = float(np.linalg.norm(v)) if v is not None and v.size == dim else 0.0
        if norm > 0.0 and math.isfinite(norm):
            assert np.allclose(row, v / norm, rtol=1e-12, atol=1e-300)
        else:
            assert not row.any()
