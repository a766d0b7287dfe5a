"""The question's frame is not searched (core/query_frame.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.query_frame import spans_conversations, strip_frame


def test_the_frame_of_an_ordering_question_is_stripped() -> None:
    q = (
        "Can you walk me through the order in which I brought up different aspects of my app "
        "development and deployment across our conversations? Mention ONLY and ONLY five items."
    )
    assert strip_frame(q) == "my app development and deployment ?"
    assert spans_conversations(q)


def test_summary_and_mention_frames() -> None:
    q = "Can you give me a comprehensive summary of how my sneaker preferences have developed over time?"
    assert strip_frame(q) == "how my sneaker preferences ?"
    assert spans_conversations(q)
    assert strip_frame("What profession did I mention I work in?") == "What profession I work in?"
    assert not spans_conversations("What profession did I mention I work in?")


def test_a_question_without_a_frame_is_unchanged() -> None:
    for q in ("Where does Ana live?", "When did Caroline go to the support group?", "order pizza"):
        assert strip_frame(q) == q
        assert not spans_conversations(q)


def test_too_little_left_keeps_the_question() -> None:
    q = "Can you summarize what we've discussed so far?"
    assert strip_frame(q) == q  # nothing but frame: searched as asked
    assert spans_conversations(q)
    # one content word is enough: the name is what is asked about
    assert strip_frame("Can you summarize what I told you about Melanie?") == "what Melanie?"


@given(st.text(max_size=200))
def test_strip_frame_is_total_and_idempotent(text: str) -> None:
    once = strip_frame(text)
    assert isinstance(once, str)
    assert strip_frame(once) == once or once == text


def test_content_that_looks_like_frame_stays() -> None:
    q = "How did I feel during the sessions with Dr. Lee?"
    assert strip_frame(q) == q  # not "our": the sessions are what is asked about
    assert not spans_conversations(q)
    q = "What did I cut back on in order to save money?"
    assert "in order" in strip_frame(q)
    assert not spans_conversations(q)
    assert strip_frame("What did I mention across my sessions about knitting?") == (
        "What about knitting?"
    )
