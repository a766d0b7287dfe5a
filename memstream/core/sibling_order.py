"""Memories of one turn in the order their own words answer the question.

A memory is searched with the turn it came from (its dense vector and its lexical document
read the source turn too: a fact cut from a long turn keeps its context). So the memories
of one turn share most of their match: "Kim's name is Kim", cut from "Hi! I'm Kim. I just
started a new job at Helios Bank", ranked first for "when did Kim start the job?", above
the memory that says it. Tried as a new user would. Among the positions memories of the
same source turns hold in a ranked answer, this puts first the one whose own text shares
the most of the question's words (then the closest by its own text's vector). The turns
in the answer and their positions stay; only who stands for a turn where changes.

Pure: a ranked answer, each memory's source turns and its own match.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")


def own_match(
    query_words: Collection[str], text_words: Collection[str], cosine: float
) -> tuple[int, float]:
    """How well a memory's own text answers: the question's words it says, then the
    cosine of its own text's vector to the question's."""
    return len(set(query_words) & set(text_words)), cosine


def by_own_words(
    ranked: Sequence[T],
    ids: Sequence[str],
    sources: Mapping[str, Collection[str]],
    match: Mapping[str, tuple[int, float]],
) -> list[T]:
    """``ranked`` (with ``ids``, the memory id of each item) with the memories of the same
    source turns reordered among their own positions, best ``match`` first; a memory
    without source turns, or alone with its turns, keeps its place."""
    groups: dict[frozenset[str], list[int]] = {}
    for i, mid in enumerate(ids):
        turns = frozenset(sources.get(mid, ()))
        if turns:
            groups.setdefault(turns, []).append(i)
    out = list(ranked)
    for positions in groups.values():
        if len(positions) < 2:
            continue
        best = sorted(positions, key=lambda i: (-match[ids[i]][0], -match[ids[i]][1], i))
        for at, i in zip(positions, best, strict=True):
            out[at] = ranked[i]
    return out
