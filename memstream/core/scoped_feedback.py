"""Feedback scoped to the question it was given on.

Q (``core.qlearning``) is one number per memory: a memory marked unhelpful for one question
drops for every other question too. Pushed hard enough to move a distractor out of the
top five after three negatives, it lowered recall on held-out questions (the learning
bench: alpha 0.3 took 52 of 87 distractors out and held-out recall@10 from 0.745 to 0.718;
gain 1.0 with alpha 0.3, 86 of 87 and 0.578). So a negative also records *which question*
it answered badly: the memory keeps the content words of the last ``KEPT`` such questions
(``unhelpful_for``), and recall scales its score by ``STEP`` for each of them the current
question matches (Jaccard of content words >= ``MATCH``): the same question, or one worded
nearly the same, no longer gets it; other questions see only the small global Q step.
Positive feedback on a matching question takes those records away again.

All pure: the reducer applies ``after_feedback`` to ``QValueUpdated`` events whose evidence
carries the question (``EVIDENCE_KEY``), recall applies ``factor``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from memstream.core.tokens import tokenize

#: questions a memory remembers having been unhelpful for (the newest kept)
KEPT: Final = 8
#: Jaccard of two questions' content words from which they count as the same question.
#: Lower reaches other questions of the same conversation, for which the memory may be the
#: answer (own set, learning bench, held-out recall@10 with feedback: 0.6 -> 0.718,
#: 0.8 -> 0.729, 0.9 and 0.99 -> 0.741; with learning off 0.745).
MATCH: Final = 0.9
#: score factor per matching negative: three take a score to an eighth
STEP: Final = 0.5
#: the QValueUpdated evidence field holding the question's key
EVIDENCE_KEY: Final = "query_key"
#: a reward below this is a negative (``core.qlearning``: negative 0.0, positive 1.0)
NEGATIVE_BELOW: Final = 0.5


def query_key(query: str) -> str:
    """A question's content words, de-duplicated and sorted, space-joined ("" for none)."""
    return " ".join(sorted(set(tokenize(query, stem=True))))


def match(a: str, b: str) -> float:
    """Jaccard similarity of two keys' words (0 when either is empty)."""
    wa, wb = set(a.split()), set(b.split())
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def after_feedback(kept: Sequence[str], key: str, reward: float) -> tuple[str, ...]:
    """The records after one feedback on the question ``key``: a negative adds it (the
    newest ``KEPT`` stay), a positive removes every record matching it."""
    if not key:
        return tuple(kept)
    if reward < NEGATIVE_BELOW:
        return (*kept, key)[-KEPT:]
    return tuple(k for k in kept if match(k, key) < MATCH)


def matches(kept: Sequence[str], key: str) -> int:
    """How many records the question ``key`` matches."""
    return sum(1 for k in kept if match(k, key) >= MATCH) if key else 0


def factor(kept: Sequence[str], key: str) -> float:
    """The score factor for a memory with records ``kept`` asked with question ``key``."""
    n = matches(kept, key)
    return STEP**n if n else 1.0
