"""What a confidence label does to an answer (core.recall_gate): skipped withheld, abbreviated
shortened, unless the caller asks for the whole answer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.recall_gate import (
    ABBREVIATED_CHARS,
    abbreviated_explain,
    abbreviated_text,
    abbreviates,
    withholds,
)


def test_nothing_relevant_is_withheld_unless_asked() -> None:
    assert withholds("skipped", "nothing relevant", False)
    assert not withholds("skipped", "nothing relevant", True)
    assert not withholds("skipped", "low score", False)
    assert not withholds("full", None, False) and not withholds("abbreviated", None, False)


def test_abbreviated_and_low_score_are_shortened_unless_asked() -> None:
    assert abbreviates("abbreviated", None, False)
    assert abbreviates("skipped", "low score", False)
    assert not abbreviates("abbreviated", None, True)
    assert not abbreviates("full", None, False)
    assert not abbreviates("skipped", "nothing relevant", False)


def test_explain_keeps_the_three_heaviest_components() -> None:
    explain = {
        "relevance": 0.9,
        "relevance.w": 0.7,  # 0.63
        "q": 0.5,
        "q.w": 0.1,  # 0.05
        "importance": 0.8,
        "importance.w": 0.1,  # 0.08
        "recency": 1.0,
        "recency.w": 0.02,  # 0.02
        "relevance.raw": 0.4,
        "store.dense_rank": 3,
        "graph": {"anchor": "m1"},
    }
    assert abbreviated_explain(explain) == {
        "relevance": 0.9,
        "relevance.w": 0.7,
        "importance": 0.8,
        "importance.w": 0.1,
        "q": 0.5,
        "q.w": 0.1,
    }


def test_long_text_is_cut_at_a_word() -> None:
    text = "word " * 100
    cut = abbreviated_text(text)
    assert cut.endswith("...") and len(cut) <= ABBREVIATED_CHARS + 3
    assert cut[:-3].split() == ["word"] * len(cut[:-3].split())
    assert abbreviated_text("short text") == "short text"


@given(st.text(max_size=800), st.integers(10, 400))
def test_abbreviated_text_is_bounded_and_a_prefix(text: str, limit: int) -> None:
    cut = abbreviated_text(text, limit)
    assert len(cut) <= limit + 3
    if len(text) <= limit:
        assert cut == text
    else:
        assert text.startswith(cut[:-3]) and cut.endswith("...")


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.one_of(st.floats(allow_nan=True), st.integers(-5, 5), st.text(max_size=3)),
        max_size=12,
    )
)
def test_abbreviated_explain_is_a_small_subset(explain: dict[str, object]) -> None:
    out = abbreviated_explain(explain)
    assert len(out) <= 7
    assert all(explain[k] == v for k, v in out.items())
