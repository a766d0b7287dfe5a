"""Text rules shared by forgetting, consolidation and evolution: clauses, names, compatibility."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from memstream.core.hashing import normalize
from memstream.core.lifecycle._model import (
    DEFAULT_CONFIG,
    LifecycleConfig,
)

_CLAUSE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")


_WORD = re.compile(r"\w+", re.UNICODE)


def clauses(text: str) -> list[str]:
    return [
        c.strip().rstrip(".;!? ").strip() for c in _CLAUSE_SPLIT.split(text) if c.strip(" .;!?\n")
    ]


def merge_clauses(texts: Sequence[str]) -> list[str]:
    """Clauses of ``texts`` in order, exact repeats and clauses another one covers dropped.

    A clause is covered by a kept one that has all its words; one that has all the words
    of kept ones takes the first one's place and the others go. Kept clauses are found
    through the words they hold (a category summary merges hundreds of memories each day:
    comparing every clause with every kept one was the largest single part of the dream
    cycle's planning)."""
    kept: list[tuple[str, frozenset[str]] | None] = []  # None: taken over by a longer one
    holding: dict[str, set[int]] = {}  # word -> indexes of the kept clauses that have it
    for text in texts:
        for clause in clauses(text):
            words = frozenset(normalize(clause).split())
            if not words or _covered(words, holding):
                continue
            near = set().union(*(holding.get(w, ()) for w in words))
            covered = sorted(i for i in near if (k := kept[i]) is not None and k[1] < words)
            if covered:  # the new clause says more than earlier ones: it takes the first's place
                for i in covered:
                    old = kept[i]
                    assert old is not None
                    for w in old[1]:
                        holding[w].discard(i)
                    kept[i] = None
                kept[covered[0]] = (clause, words)
                at = covered[0]
            else:
                kept.append((clause, words))
                at = len(kept) - 1
            for w in words:
                holding.setdefault(w, set()).add(at)
    return [k[0] for k in kept if k is not None]


def _covered(words: frozenset[str], holding: dict[str, set[int]]) -> bool:
    """A kept clause has every one of ``words``."""
    postings = sorted((holding.get(w, set()) for w in words), key=len)
    if not postings[0]:
        return False
    return bool(postings[0].intersection(*postings[1:]))


def merged_text(texts: Sequence[str]) -> str:
    return "; ".join(merge_clauses(texts)) + "."


def names(text: str) -> frozenset[str]:
    """Capitalised words not opening a sentence: product, brand and place names, roughly."""
    found: set[str] = set()
    for clause in clauses(text):
        for word in _WORD.findall(clause)[1:]:  # a clause's first word is capitalised anyway
            if word[:1].isupper() and word != "I":
                found.add(word.casefold())
    return frozenset(found)


def _nested(a: frozenset[str], b: frozenset[str]) -> bool:
    return a <= b or b <= a


def _words(text: str) -> frozenset[str]:
    return frozenset(normalize(text).split())


class Item(Protocol):
    """What the item rules read of a memory (a ``MemoryView``, an evolution view)."""

    @property
    def category(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def subject(self) -> str | None: ...
    @property
    def slot(self) -> str | None: ...
    @property
    def entities(self) -> tuple[str, ...]: ...


def _ents(m: Item) -> frozenset[str]:
    return frozenset(e.casefold() for e in m.entities if e)


def distinct_items(a: Item, b: Item) -> bool:
    """About different things: subjects or slots differ, or the entity sets or capitalised
    names are not nested ("Nike Air Max" and "Nike Pegasus": same brand, two items)."""
    for x, y in ((a.subject, b.subject), (a.slot, b.slot)):
        if x is not None and y is not None and x.casefold() != y.casefold():
            return True
    return not (_nested(_ents(a), _ents(b)) and _nested(names(a.text), names(b.text)))


def compatible(a: Item, b: Item, config: LifecycleConfig = DEFAULT_CONFIG) -> bool:
    """May ``a`` and ``b`` become one memory?"""
    if a.category in config.subject_bound_categories and (a.subject is None or b.subject is None):
        return False
    return not distinct_items(a, b)
