"""A change said in passing: "we decided to use Prefect instead of Dagster", "I switched
from Word to Scrivener", "replaced the gas stove with an induction one".

No slot holds the old value (a slot is a residence, a job, an employer: ``core.extract
.slots``), so nothing is superseded, and the earlier memory that named it ("Tomas wants me
to migrate to Dagster") kept ranking first for "which tool am I migrating to?" with the
change below it. This rule writes a ``supersedes`` edge (rule ``replacement``) from the new
memory to the latest earlier memories of the same speaker that name the replaced value and
not the new one; the old memory stays active (it may hold more than the value, and it is
the history). Recall places the newer memory right before one it supersedes this way
(``current_first``): the current value first, the history still there.

Pure: proposals from the new memory's text and the earlier memories' texts; the ordering
from a ranked answer and the memories' edges.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from memstream.core.graph_walk import Hop
from memstream.core.relations import Known, NewMemory, Proposal, content_words, edges_of

RULE: Final = "replacement"
CONFIDENCE: Final = 0.8
#: the latest earlier memories naming the replaced value that one change supersedes
TARGETS: Final = 2
#: a replaced value of more content words than this is a clause, not a value
MAX_VALUE_WORDS: Final = 4

# the replaced value, after its marker, up to the end of the clause; where the wording
# says it, the value that replaced it (``new``)
_CUT = r"(?P<old>[^,.;:!?()]{1,60}?)"
_END = r"(?=\s*(?:[,.;:!?()]|$|\s(?:because|since|as|so|for|due|after|when|which|but|and)\b))"
_NEW = r"(?P<new>[^\s,.;:!?()]+)"
_MARKERS: Final = (
    re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+" + _CUT + _END, re.I),
    re.compile(
        r"\b(?:switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|migrat(?:ed|ing)|"
        r"upgrad(?:ed|ing)|downgrad(?:ed|ing)|went|go(?:ing)?)\s+(?:\w+\s+){0,3}?from\s+"
        r"(?P<old>[^,.;:!?()]{1,60}?)\s+(?:to|over\s+to)\s+" + _NEW,
        re.I,
    ),
    re.compile(r"\breplac(?:ed|ing)\s+(?P<old>[^,.;:!?()]{1,60}?)\s+with\s+" + _NEW, re.I),
    re.compile(
        r"\b(?:no\s+longer\s+(?:use|uses|using|want|wants|like|likes|do|does|plan\s+to)|"
        r"dropped|ditched|quit|gave\s+up(?:\s+on)?|stopped\s+using)\s+"
        r"(?!(?:it|them|that|this)\b)" + _CUT + _END,
        re.I,
    ),
    # an activity ended: "no longer training for the half marathon", "stopped going to
    # the Tuesday choir"; the thing it was about is the value
    re.compile(
        r"\b(?:no\s+longer|stopped)\s+(?!using\b)[a-z]+ing(?:\s+(?:for|on|at|in|to|with))?\s+"
        + _CUT
        + _END,
        re.I,
    ),
    # taken off one thing and put on another: "got moved off billing onto the search team"
    re.compile(
        r"\b(?:mov|tak|pull|switch|transferr)(?:ed|en|ing)?\s+off\s+(?:of\s+)?"
        r"(?P<old>[^,.;:!?()]{1,60}?)\s+(?:onto|to)\s+" + _NEW,
        re.I,
    ),
    # a thing given up: "sold the Civic and bought a Tesla", "cancelled Planet Fitness",
    # "retired the Fitbit"
    re.compile(
        r"\b(?:sold|cancell?ed|got\s+rid\s+of|traded\s+in|retired(?=\s+(?:the|my|our|his|her)\s))"
        r"\s+(?!(?:it|them|that|this)\b)" + _CUT + _END,
        re.I,
    ),
)
# words that name no value alone: a time of day's "9 AM" is not named by every "AM"
_NOT_VALUE: Final = frozenset({"am", "pm", "a", "an", "the", "my", "our", "one"})


def replacements(text: str) -> list[tuple[str, str | None]]:
    """The values ``text`` says were replaced, as said, each with what replaced it where
    the wording says ("Word", "Scrivener" in "switched from Word to Scrivener"); none when
    it says no change."""
    out: list[tuple[str, str | None]] = []
    for marker in _MARKERS:
        for m in marker.finditer(text):
            old = m.group("old").strip()
            new = m.groupdict().get("new")
            if old and all(o != old for o, _n in out):
                out.append((old, new))
    return out


def replaced_values(text: str) -> list[str]:
    """The values ``text`` says were replaced ("Dagster" in "use Prefect instead of
    Dagster")."""
    return [old for old, _new in replacements(text)]


def _named(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _names_value(text: str, value: str, entities: Sequence[str]) -> bool:
    """Whether an earlier memory's ``text`` names the replaced ``value``: by the entities
    the value holds, else by all its content words (a number alone names nothing)."""
    named = [e for e in entities if e in value and e.casefold() not in _NOT_VALUE]
    if named:
        return any(_named(text, e) for e in named)
    words = content_words(value)
    telling = {w for w in words if not w.isdigit() and w not in _NOT_VALUE}
    return bool(telling) and len(words) <= MAX_VALUE_WORDS and words <= content_words(text)


def replacement_proposals(new: NewMemory, earlier: Sequence[Known]) -> list[Proposal]:
    """``supersedes`` edges from ``new`` to the latest memories of ``earlier`` (oldest
    first; the same speaker's, not a change themselves) that name a value ``new`` says was
    replaced, and not what replaced it."""
    if new.asks:
        return []
    said = replacements(new.text)
    if not said:
        return []
    # the same speaker's, and not a change themselves: read once for every value
    candidates = [
        k
        for k in earlier
        if k.memory_id != new.memory_id and k.subject == new.subject and not replacements(k.text)
    ]
    out: list[Proposal] = []
    seen: set[str] = set()
    for value, replacing in said:
        # what replaced it: the new memory's entities outside the value ("Prefect"), and
        # the word the wording names ("audiobooks" in "from print to audiobooks")
        others = [
            e
            for e in new.entities
            if e not in value and e.casefold() not in (new.subject or "", *_NOT_VALUE)
        ]
        instead = content_words(replacing) if replacing else frozenset()
        found = [
            k
            for k in candidates
            if _names_value(k.text, value, new.entities)
            and not any(_named(k.text, e) for e in others)
            and not (instead and instead <= content_words(k.text))
        ]
        for k in found[-TARGETS:]:
            if k.memory_id not in seen:
                seen.add(k.memory_id)
                out.append(
                    Proposal(
                        new.memory_id,
                        k.memory_id,
                        "supersedes",
                        CONFIDENCE,
                        RULE,
                        {"replaced": value},
                    )
                )
    return out


def newer_of(
    ids: Sequence[str], relations_of: Mapping[str, Sequence[str]]
) -> dict[str, list[tuple[str, float]]]:
    """For each of ``ids``, the memories that supersede it (id, edge confidence)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for mid in ids:
        for e in edges_of(relations_of.get(mid, ())):
            if e.relation == "supersedes" and e.direction == "in":
                out.setdefault(mid, []).append((e.other, e.confidence))
    return out


def current_first(
    ranked: Sequence[tuple[str, float]],
    newer: Mapping[str, Sequence[tuple[str, float]]],
    admit: Callable[[str], bool],
    first: Callable[[str, str], bool] = lambda _new, _old: True,
) -> list[tuple[str, float, Hop | None]]:
    """``ranked`` (memory id, score; best first) with each memory that supersedes a ranked
    one (``newer``: old -> [(new, confidence)]; a change of a change too) placed right
    before it, at its score: (id, score, the edge it was placed by, or None); right after
    it where ``first(new, old)`` says the question is about more than the change (a name
    only the old memory says). A memory ranked higher already keeps its place; one further
    down moves up."""
    out: list[tuple[str, float, Hop | None]] = []
    placed: set[str] = set()

    def put(mid: str, score: float, hop: Hop | None) -> None:
        placed.add(mid)  # before its changes: a cycle of edges ends here
        later: list[tuple[str, float, Hop]] = []
        for n, confidence in sorted(newer.get(mid, ())):
            if n not in placed and admit(n):
                edge = Hop(n, "supersedes", mid, confidence)
                if first(n, mid):
                    put(n, score, edge)
                else:
                    placed.add(n)
                    later.append((n, score, edge))
        out.append((mid, score, hop))
        out.extend(later)

    for mid, score in ranked:
        if mid not in placed:
            put(mid, score, None)
    return out
