"""Multi-query recall: split a compound question, then fuse the per-part rankings.

``decompose`` cuts at question marks followed by more text, at semicolons and line
breaks, and at "and" / "also" / "plus" / "as well as" when a new question starts right
after it ("Where does Ana live and what does she do?"), never inside a noun phrase
("What do Ana and Bob like?"). A cut that would leave a part of fewer than two words is
not made. When the first part names exactly one person, third-person pronouns in later
parts that name nobody are replaced by that name, so each part retrieves on its own:
"what does she do?" becomes "what does Ana do?", "her job" "Ana's job". "her" reads as
possessive when a content word follows it. At most ``MAX_PARTS`` parts are returned.

A question asked of two people at once ("Where are Lena and Tomas each travelling?", "What
do Ana and Bob both like?") is asked of each: one part per person, the pair and its
"each" / "both" / "respectively" replaced by the one name, so the memories about either
person compete on their own (together the pair's words favour memories naming both).

``rrf_merge`` fuses the parts' rankings with reciprocal rank fusion, the same
``1 / (k + rank)`` with ``k = 60`` the store uses for its channels.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Final

from memstream.core.signals import scan
from memstream.core.tokens import ENGLISH_STOPWORDS

MAX_PARTS: Final = 4
RRF_K: Final = 60

_QUESTION_START = (
    r"what|where|when|who|whom|whose|why|how|which|is|are|was|were|do|does|did|can|could"
    r"|will|would|has|have|had|should|tell|list|describe"
)
# sentence breaks: a "?" with more text after it, ";" or a line break
_BREAK_RE: Final = re.compile(r"(?<=\?)\s+(?=\S)|;|\n+")
_AND_RE: Final = re.compile(
    rf",?\s+(?:and(?:\s+also)?|also|plus|as\s+well\s+as)\s+(?=(?:{_QUESTION_START})\b)",
    re.IGNORECASE,
)
_PRONOUN_RE: Final = re.compile(
    r"\b(?P<p>she|he|they|him|them|his|their|her)\b(?P<rest>\W+(?P<next>[\w']+))?",
    re.IGNORECASE,
)
_POSSESSIVE: Final = frozenset({"his", "their"})
_TWO_WORDS_RE: Final = re.compile(r"\w+\W+\w")
_EACH_RE: Final = re.compile(r"\b(?:each|both|respectively)\b", re.IGNORECASE)


def _clean(part: str) -> str:
    return part.strip().strip(",;").strip()


def _enough(text: str, start: int = 0, end: int | None = None) -> bool:
    """At least two words in ``text[start:end]`` (found without scanning it all)."""
    return _TWO_WORDS_RE.search(text, start, len(text) if end is None else end) is not None


def _split_and(piece: str) -> list[str]:
    parts: list[str] = []
    last = 0
    for m in _AND_RE.finditer(piece):
        if _enough(piece, last, m.start()) and _enough(piece, m.end()):
            parts.append(_clean(piece[last : m.start()]))
            last = m.end()
    parts.append(_clean(piece[last:]))
    return parts


def _names(text: str) -> list[str]:
    return list(dict.fromkeys(e.name for e in scan(text).entities if e.label == "name"))


def _resolve(part: str, name: str) -> str:
    def replace(m: re.Match[str]) -> str:
        pronoun = m["p"].lower()
        nxt = (m["next"] or "").lower()
        possessive = pronoun in _POSSESSIVE or (
            pronoun == "her" and nxt != "" and nxt not in ENGLISH_STOPWORDS
        )
        return (f"{name}'s" if possessive else name) + (m["rest"] or "")

    return _PRONOUN_RE.sub(replace, part)


def decompose(query: str) -> list[str]:
    """Self-contained sub-queries of ``query`` (``[query]`` stripped when it is one
    question, ``[]`` when it is blank)."""
    text = query.strip()
    if not text:
        return []
    parts: list[str] = []
    for piece in _BREAK_RE.split(text):
        piece = _clean(piece)
        if not piece:
            continue
        if parts and not _enough(piece):
            parts[-1] = f"{parts[-1]} {piece}"  # a fragment belongs to what came before
            continue
        parts.extend(p for p in _split_and(piece) if p)
    parts = _distinct(parts)[:MAX_PARTS]
    if len(parts) == 1:
        parts = _per_person(parts[0]) or parts
    if len(parts) > 1:
        subjects = _names(parts[0])
        if len(subjects) == 1:
            rest = [p if _names(p) else _resolve(p, subjects[0]) for p in parts[1:]]
            parts = _distinct([parts[0], *rest])
    return parts or [text]


def _per_person(question: str) -> list[str]:
    """ "Where are Lena and Tomas each travelling?" -> one question per person, or []."""
    if not _EACH_RE.search(question):
        return []
    names = _names(question)
    if len(names) != 2:
        return []
    pair = re.compile(
        rf"\b{re.escape(names[0])}\s+and\s+{re.escape(names[1])}('s)?(?:\s+(?:each|both))?\b"
    )
    if not pair.search(question):
        return []
    out = []
    for name in names:
        asked = pair.sub(_one_of(name), question)
        out.append(re.sub(r"\s{2,}", " ", _EACH_RE.sub("", asked)).strip())
    return out


def _one_of(name: str) -> Callable[[re.Match[str]], str]:
    """The pair ("Lena and Tomas", "Lena and Tomas's") replaced by one of them."""
    return lambda m: name + (m[1] or "")


def _distinct(parts: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for part in parts:
        if part.casefold() not in seen:
            seen.add(part.casefold())
            out.append(part)
    return out


def rrf_merge(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: ``sum(1 / (k + rank))`` over the rankings an id is in,
    ranks 1-based, a repeat within one ranking counted at its best rank only.

    The result does not depend on the order of ``rankings``: sums are exact-rounded
    (``math.fsum``), and ties go to the better single rank, then to the id."""
    if k < 0:
        raise ValueError("k must be >= 0")
    contributions: dict[str, list[float]] = {}
    best: dict[str, int] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, memory_id in enumerate(ranking, start=1):
            if memory_id in seen:
                continue
            seen.add(memory_id)
            contributions.setdefault(memory_id, []).append(1.0 / (k + rank))
            best[memory_id] = min(best.get(memory_id, rank), rank)
    fused = {mid: math.fsum(c) for mid, c in contributions.items()}
    order = sorted(fused, key=lambda mid: (-fused[mid], best[mid], mid))
    return [(mid, fused[mid]) for mid in order]
