"""Feedback scoped to a question (core/scoped_feedback.py): bounded records, a factor in
(0, 1] that only a matching question feels, positives that take matching records away, and
the reducer keeping the records a QValueUpdated's evidence names."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memstream.core import scoped_feedback as sf
from memstream.core.memory_state import apply, created
from memstream.schemas.envelope import make_event
from memstream.schemas.events import MemoryCreated, QValueUpdated

WORDS = st.sampled_from(["tea", "coffee", "morning", "brother", "drink", "paris", "job", "sister"])
QUESTIONS = st.lists(WORDS, min_size=1, max_size=5).map(" ".join)
FEEDBACK = st.lists(st.tuples(QUESTIONS, st.sampled_from([0.0, 1.0])), max_size=30)


@given(FEEDBACK, QUESTIONS)
def test_records_stay_bounded_and_the_factor_only_lowers(
    feedback: list[tuple[str, float]], asked: str
) -> None:
    kept: tuple[str, ...] = ()
    for question, reward in feedback:
        kept = sf.after_feedback(kept, sf.query_key(question), reward)
        assert len(kept) <= sf.KEPT
    f = sf.factor(kept, sf.query_key(asked))
    assert 0.0 < f <= 1.0
    assert f == sf.STEP ** sf.matches(kept, sf.query_key(asked))


@given(st.lists(QUESTIONS, max_size=10), QUESTIONS)
def test_a_positive_on_the_question_clears_it(others: list[str], question: str) -> None:
    key = sf.query_key(question)
    kept: tuple[str, ...] = ()
    for q in [*others, question, question]:
        kept = sf.after_feedback(kept, sf.query_key(q), 0.0)
    assert sf.factor(kept, key) < 1.0
    cleared = sf.after_feedback(kept, key, 1.0)
    assert sf.factor(cleared, key) == 1.0


def test_three_negatives_sink_the_same_question_and_spare_another() -> None:
    kept: tuple[str, ...] = ()
    for _ in range(3):
        kept = sf.after_feedback(kept, sf.query_key("Who drinks green tea?"), 0.0)
    assert sf.factor(kept, sf.query_key("who drinks green tea")) == sf.STEP**3
    assert sf.factor(kept, sf.query_key("What does Tom drink at night?")) == 1.0
    assert sf.after_feedback(kept, "", 0.0) == kept  # a question without content words


def test_the_reducer_keeps_what_the_evidence_names() -> None:
    at = datetime(2024, 1, 1, tzinfo=UTC)
    state = created(
        make_event(
            MemoryCreated(
                memory_id="m1", text="Tom drinks green tea", category="fact", content_hash="0" * 64
            ),
            namespace="ns",
            occurred_at=at,
        )
    )
    key = sf.query_key("who drinks green tea?")

    def q_event(reward: float, evidence: dict[str, object]) -> object:
        return make_event(
            QValueUpdated(
                memory_id="m1",
                old_q=0.5,
                new_q=0.45,
                reward=reward,
                weight=1.0,
                alpha=0.1,
                feedback_event_id="f1",
                evidence=evidence,
            ),
            namespace="ns",
            occurred_at=at,
        )

    after = apply(state, q_event(0.0, {sf.EVIDENCE_KEY: key}))
    assert after is not None and after.unhelpful_for == (key,)
    unscoped = apply(after, q_event(0.0, {}))
    assert unscoped is not None and unscoped.unhelpful_for == (key,)
    cleared = apply(unscoped, q_event(1.0, {sf.EVIDENCE_KEY: key}))
    assert cleared is not None and cleared.unhelpful_for == ()
