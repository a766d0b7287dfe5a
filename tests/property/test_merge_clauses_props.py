"""``merge_clauses`` (the text of summaries and merges) finds kept clauses through the words
they hold; it must give exactly what comparing every clause with every kept one gives: the
events a dream cycle writes depend on it, and a rebuild must write the same."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.core.hashing import normalize
from memstream.core.lifecycle import merge_clauses
from memstream.core.lifecycle._text import clauses


def _every_pair(texts: Sequence[str]) -> list[str]:
    """The rule as first written: each clause against each kept one."""
    kept: list[tuple[str, frozenset[str]]] = []
    for text in texts:
        for clause in clauses(text):
            words = frozenset(normalize(clause).split())
            if not words or any(words <= k for _, k in kept):
                continue
            covered = [i for i, (_, k) in enumerate(kept) if k < words]
            if covered:
                kept[covered[0]] = (clause, words)
                kept = [kv for i, kv in enumerate(kept) if i not in covered[1:]]
            else:
                kept.append((clause, words))
    return [c for c, _ in kept]


# few words, so clauses often cover one another
_clause = st.lists(
    st.sampled_from(["Mia", "likes", "tea", "hot", "green", "at", "noon"]), max_size=5
)
_text = st.lists(_clause, min_size=1, max_size=4).map(
    lambda cs: " ".join(" ".join(c) + st_end for c, st_end in zip(cs, ".;!?" * 2, strict=False))
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_text, max_size=12))
def test_merge_clauses_is_the_every_pair_rule(texts: list[str]) -> None:
    assert merge_clauses(texts) == _every_pair(texts)


def test_a_longer_clause_takes_the_first_covered_place() -> None:
    texts = ["Mia likes tea. Mia hot.", "Tea at noon.", "Mia likes hot tea at noon."]
    assert merge_clauses(texts) == _every_pair(texts) == ["Mia likes hot tea at noon"]
