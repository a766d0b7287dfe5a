"""A topic key for a search query, without an LLM: the query's most telling content words.

Used to cluster searches for gap reports: "how do I rotate the kafka keys?" and
"kafka key rotation" share the key ``kafka key``. Deterministic and cheap.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9+#.-]*[a-z0-9+#]|[a-z0-9]")
_STOP = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "know",
        "like",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "tell",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "remember",
        "recall",
        "anything",
        "something",
        "thing",
        "things",
        "get",
        "got",
        "use",
        "using",
        "used",
        "want",
        "need",
    ]
)


_SUFFIXES = (
    "ations",
    "ation",
    "ating",
    "ated",
    "ates",
    "ate",
    "ions",
    "ion",
    "ings",
    "ing",
    "ies",
    "ed",
    "es",
    "s",
    "e",
)


def _stem(word: str) -> str:
    # Fold word forms to a crude root so "rotate", "rotating", "rotation" and "rotations"
    # meet; the root is only a grouping key, queries are shown as asked.
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def topic_key(query: str, words: int = 2) -> str:
    """The ``words`` longest content words (stemmed), alphabetically: order-free, stable."""
    tokens = [_stem(t) for t in _WORD.findall(query.casefold()) if t not in _STOP]
    if not tokens:
        return "(none)"
    unique = sorted(set(tokens), key=lambda t: (-len(t), t))[:words]
    return " ".join(sorted(unique))


def topic_words(query: str) -> frozenset[str]:
    return frozenset(_stem(t) for t in _WORD.findall(query.casefold()) if t not in _STOP)


class TopicClusters:
    """Online clustering of a namespace's searches by shared content words.

    A search joins the topic whose words it overlaps most (overlap coefficient >= 0.6 and at
    least two shared words, or the same single word); otherwise it starts a topic labelled
    by its own ``topic_key``. Deterministic for a given order of searches, and the order is
    the log's (one namespace lives on one partition), so a rebuild labels alike.
    """

    def __init__(self) -> None:
        self._topics: dict[str, list[tuple[str, set[str]]]] = {}

    def assign(self, namespace: str, query: str) -> str:
        words = topic_words(query)
        if not words:
            return "(none)"
        topics = self._topics.setdefault(namespace, [])
        best: tuple[float, int] | None = None
        for i, (_label, tw) in enumerate(topics):
            if not tw:  # a topic without words (never created here; be safe) matches nothing
                continue
            shared = len(words & tw)
            score = shared / min(len(words), len(tw))
            if (
                (shared >= 2 or (shared == 1 and len(words) == len(tw) == 1))
                and score >= 0.6
                and (best is None or score > best[0])
            ):
                best = (score, i)
        if best is None:
            label = topic_key(query)
            topics.append((label, set(words)))
            return label
        label, tw = topics[best[1]]
        tw |= words
        return label

    def snapshot(self, namespace: str) -> list[tuple[str, set[str]]] | None:
        """A copy of one namespace's topics for ``restore`` (assign grows them in place)."""
        topics = self._topics.get(namespace)
        return None if topics is None else [(label, set(words)) for label, words in topics]

    def restore(self, namespace: str, snapshot: list[tuple[str, set[str]]] | None) -> None:
        if snapshot is None:
            self._topics.pop(namespace, None)
        else:
            self._topics[namespace] = snapshot

    def seed(self, namespace: str, label: str, query: str) -> None:
        """Restore a topic from the projection after a restart."""
        words = topic_words(query)
        if not words:
            # a stopword-only search ("where") is labelled "(none)" and never starts a
            # topic: seeding an empty one made every later assign divide by zero
            return
        topics = self._topics.setdefault(namespace, [])
        for existing, tw in topics:
            if existing == label:
                tw |= words
                return
        topics.append((label, set(words)))
