"""What an evolution candidate changes, rule-based (no model): pure functions of the members.

``evolution_due(since, q_updates, at, trigger)``: when the worker runs evolution on its own,
in event time only: 6 hours of event time since the namespace's last evolution (or its
first memory), or 100+ Q updates learned from use (feedback; the dream cycle's drift
toward 0.5 is not learning) since then, whichever comes first. Returns the reason
("q_updates" or "period") or None.

``merge_content(members)``: the memory a merge keeps says everything its members said:
their clauses in order, exact repeats and clauses another one covers dropped
(``lifecycle.merge_clauses``), the union of their entities, source turns and metadata.

``refined_text(text, subject, created_at)``: a rewrite or None (then no refine is
emitted): filler openers dropped ("Well, ", "Basically, "), an opening he/she/they
replaced by the memory's subject (unless the text names the subject later: then the
pronoun is someone else), and relative days ("yesterday", "today", "tomorrow",
"tonight", "last night", "this morning") given their date from the memory's creation.

``induced(members, existing)``: a principle from repeated evidence, or None. Applied when
the group (3+ procedural memories linked by cosine >= 0.85, ``evolution.
induction_candidates``) cites at least 3 distinct source turns (said more than once, not
one statement split up), none of its members was itself induced, and no induced memory
already cites all of the group's turns (nothing new since the last induction). Its text:
"Seen N times: " and the members' merged clauses; it cites every member's turns, and the
members stay (they are the cases it generalises).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memstream.core.lifecycle import merge_clauses

INDUCED_SLOT = "induced"  # an induced principle's slot: never a member of a later induction
INDUCE_MIN_TURNS = 3


@dataclass(frozen=True, slots=True)
class EvolutionTrigger:
    every: timedelta | None = timedelta(hours=6)  # None: no period trigger
    q_updates: int | None = 100  # None: no count trigger


def evolution_due(
    since: datetime | None, q_updates: int, at: datetime, trigger: EvolutionTrigger
) -> str | None:
    """Why evolution runs before an event at ``at``, or None. ``since``: the namespace's
    last evolution, else its first memory (None: nothing remembered yet)."""
    if since is None:
        return None
    if trigger.q_updates is not None and q_updates >= trigger.q_updates:
        return "q_updates"
    if trigger.every is not None and at - since >= trigger.every:
        return "period"
    return None


@dataclass(frozen=True, slots=True)
class Content:
    """A memory's content as a merge or induction reads and writes it."""

    memory_id: str
    text: str
    entities: tuple[str, ...] = ()
    source_turn_ids: tuple[str, ...] = ()
    metadata: str = ""  # canonical JSON, as MemoryState keeps it
    slot: str | None = None


def _metadata(raw: str) -> dict[str, object]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def merged_metadata(members: Iterable[Content]) -> dict[str, object]:
    """Every member's metadata: lists joined without repeats, the first value otherwise."""
    out: dict[str, object] = {}
    for m in members:
        for key, value in _metadata(m.metadata).items():
            if key not in out:
                out[key] = value
            elif isinstance(out[key], list) and isinstance(value, list):
                old = out[key]
                assert isinstance(old, list)
                out[key] = old + [v for v in value if v not in old]
    return out


@dataclass(frozen=True, slots=True)
class Merged:
    text: str
    entities: tuple[str, ...]
    source_turn_ids: tuple[str, ...]
    metadata: dict[str, object]


def merge_content(members: Sequence[Content]) -> Merged:
    """The kept memory (``members[0]``) with everything every member said."""
    parts = merge_clauses([m.text for m in members])
    first = members[0].text
    text = first if parts == merge_clauses([first]) else "; ".join(parts) + "."
    return Merged(
        text=text,
        entities=tuple(dict.fromkeys(e for m in members for e in m.entities)),
        source_turn_ids=tuple(dict.fromkeys(t for m in members for t in m.source_turn_ids)),
        metadata=merged_metadata(members),
    )


_FILLER = re.compile(
    r"^(?:(?:well|so|ok(?:ay)?|um+|uh+|basically|actually|honestly|like|you know|anyway)"
    r"\s*,\s*)+",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"^(he|she|they)\b", re.IGNORECASE)
_RELATIVE = (
    (re.compile(r"\blast night\b", re.IGNORECASE), -1),
    (re.compile(r"\byesterday\b", re.IGNORECASE), -1),
    (re.compile(r"\btomorrow\b", re.IGNORECASE), 1),
    (re.compile(r"\btonight\b", re.IGNORECASE), 0),
    (re.compile(r"\bthis morning\b", re.IGNORECASE), 0),
    (re.compile(r"\btoday\b", re.IGNORECASE), 0),
)


def _date(at: datetime) -> str:
    return f"on {at.day} {at.strftime('%B')} {at.year}"


def _names(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE) is not None


def refined_text(text: str, subject: str | None, created_at: datetime) -> str | None:
    """A clearer wording of ``text`` by the rules above, or None if they change nothing."""
    out = _FILLER.sub("", text.strip())
    if out and out[0].islower():
        out = out[0].upper() + out[1:]
    name = (subject or "").strip()
    if name and _PRONOUN.match(out) and not _names(out, name):
        # the subject named later in the text: the pronoun is someone else ("They asked
        # Tomas to lead the department"); subjects are kept lower-case, names are not
        named = name[:1].upper() + name[1:]
        out = _PRONOUN.sub(lambda _m: named, out, count=1)  # a name is text, not a template
    for pattern, days in _RELATIVE:
        if pattern.search(out):
            out = pattern.sub(_date(created_at + timedelta(days=days)), out, count=1)
            break  # one day per memory: a second relative word is about the same day
    return out if out and out != text else None


@dataclass(frozen=True, slots=True)
class Induced:
    text: str
    entities: tuple[str, ...]
    source_turn_ids: tuple[str, ...]


def induced(members: Sequence[Content], existing: Iterable[Content]) -> Induced | None:
    """The principle the members generalise, when their evidence holds (module doc)."""
    if any(m.slot == INDUCED_SLOT for m in members):
        return None
    turns = tuple(dict.fromkeys(t for m in members for t in m.source_turn_ids))
    if len(turns) < INDUCE_MIN_TURNS:
        return None
    wanted = set(turns)
    if any(e.slot == INDUCED_SLOT and wanted <= set(e.source_turn_ids) for e in existing):
        return None
    parts = merge_clauses([m.text for m in members])
    return Induced(
        text=f"Seen {len(members)} times: " + "; ".join(parts) + ".",
        entities=tuple(dict.fromkeys(e for m in members for e in m.entities)),
        source_turn_ids=turns,
    )


def merge_groups(pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Pairs to merge joined into groups (a pair sharing a memory with another is one
    merge, never two that archive into each other), each sorted, groups sorted."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for x in parent:
        groups.setdefault(find(x), []).append(x)
    return sorted(sorted(g) for g in groups.values())
