"""Hot memory: the small block an agent always has in its prompt, without a query.

A pure function of a namespace's active memories (rows of the memory projection, so it is
rebuilt from the log like everything else) and the namespace's event-time "now":

- identity: who the owner is (name, age, birthday, origin, e-mail, phone slots);
- profile: where they live and work, diet, relationships, and their strongest preferences;
- lessons: corrections, principles and decisions (at most 20; the least important drop);
- references: the newest memories that carry a URL, command, path, version or id (at most
  10); wherever a memory is shown, metadata its text does not say is added in brackets;
- recent: the last 10 events by event time;
- tasks: open commitments (at most 10); one a later memory reports as done leaves;
- hot: memories that proved useful (Q >= 0.8, used >= 10 times, younger than 30 days);
- session (when a session is named): its working set, at most 9 memories of that session,
  ranked by importance x recency x use.

Rendered as Markdown under a hard byte cap (5 KB by default): when over, the lowest-ranked
item of the least essential section goes first (hot, recent, references, lessons, session,
tasks, profile, identity), so identity is the last thing ever cut.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import chain
from typing import Any

from memstream.core import metadata
from memstream.core.calendar_words import MONTH_NUMBERS, WEEKDAYS

IDENTITY_SLOTS = ("name", "age", "birthday", "origin", "email", "phone")
PROFILE_SLOTS = ("location", "employer", "job_title", "diet", "relationship_status")
LESSON_CATEGORIES = ("correction", "principle", "decision")

#: sections in render order; CUT_ORDER says which loses items first when over the cap
SECTIONS = ("identity", "profile", "session", "tasks", "lessons", "references", "recent", "hot")
TITLES = {
    "identity": "Identity",
    "profile": "Profile",
    "session": "This session",
    "tasks": "Pending tasks",
    "lessons": "Lessons",
    "references": "References (links, commands, paths, versions, ids)",
    "recent": "Recent events",
    "hot": "Often useful",
}
CUT_ORDER = ("hot", "recent", "references", "lessons", "session", "tasks", "profile", "identity")

_DONE = re.compile(
    r"\b(?:finished|completed|done with|did|submitted|sent|fixed|resolved|shipped|"
    r"cancel(?:l)?ed|paid|returned|delivered|handed in|wrapped up)\b",
    re.I,
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*[a-z0-9]|[a-z0-9]")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "and",
        "or",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "my",
        "our",
        "your",
        "his",
        "her",
        "their",
        "its",
        "i",
        "we",
        "you",
        "he",
        "she",
        "they",
        "it",
        "is",
        "was",
        "be",
        "will",
        "would",
        "should",
        "must",
        "need",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "this",
        "that",
        "these",
        "those",
        "next",
        "week",
        "tomorrow",
        "today",
        "tonight",
        "soon",
        "later",
        "going",
        "gonna",
        "want",
        "plan",
        "promise",
        "promised",
        "remind",
        "me",
        "up",
    ]
)


@dataclass(frozen=True, slots=True)
class HotConfig:
    max_bytes: int = 5 * 1024
    max_lessons: int = 20
    max_recent: int = 10
    max_tasks: int = 10
    max_preferences: int = 8
    max_hot: int = 15
    max_session: int = 9
    max_references: int = 10
    hot_min_q: float = 0.8
    hot_min_access: int = 10
    hot_max_age: timedelta = timedelta(days=30)
    #: a session whose newest memory is this much older than the namespace's newest event
    #: has ended: its working set is cleared
    session_ends_after: timedelta = timedelta(hours=6)
    #: a working-set item used this often, or this important, is a candidate for promotion
    promote_min_access: int = 2
    promote_min_importance: float = 0.6


@dataclass(frozen=True, slots=True)
class HotItem:
    memory_id: str
    text: str
    section: str
    category: str
    at: datetime | None = None
    promote: bool = False  # a working-set item worth keeping beyond its session


@dataclass
class HotBlock:
    namespace: str
    now: datetime | None
    sections: dict[str, list[HotItem]] = field(default_factory=dict)
    completed: dict[str, str] = field(default_factory=dict)  # task id -> the memory saying done
    dropped: int = 0  # items cut to stay under the byte cap
    session_ended: bool = False  # the asked-for session ended: its working set is cleared

    @property
    def ids(self) -> list[str]:
        return [item.memory_id for name in SECTIONS for item in self.sections.get(name, [])]

    def markdown(self) -> str:
        return render(self)

    def as_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "now": self.now.isoformat() if self.now else None,
            "sections": {
                name: [
                    {
                        "memory_id": i.memory_id,
                        "text": i.text,
                        "category": i.category,
                        **({"promotion_candidate": True} if i.promote else {}),
                    }
                    for i in self.sections.get(name, [])
                ]
                for name in SECTIONS
            },
            "completed_tasks": self.completed,
            "dropped": self.dropped,
            "session_ended": self.session_ended,
            "bytes": len(render(self).encode()),
        }


# dates say nothing about which task a report is about
_MONTHS = frozenset(
    [*MONTH_NUMBERS, *WEEKDAYS, "morning", "evening", "afternoon", "night", "week", "month"]
)


@lru_cache(maxsize=1 << 16)
def _text_words(text: str) -> frozenset[str]:
    # cached: the same memories' texts are read on every block of their namespace
    return frozenset(
        w
        for w in _WORD.findall(text.casefold())
        if w not in _STOP and w not in _MONTHS and len(w) > 2 and not w.isdigit()
    )


@lru_cache(maxsize=1 << 16)  # ``common`` changes rarely: the same pairs recur block to block
def _words(text: str, common: frozenset[str] = frozenset()) -> frozenset[str]:
    # dates and the owner's name say nothing about which task a report is about
    words = _text_words(text)
    return words - common if common else words


@lru_cache(maxsize=1 << 16)
def _says_done(text: str) -> bool:
    return _DONE.search(text) is not None


@lru_cache(maxsize=1 << 14)
def _metadata_kinds(encoded: str) -> frozenset[str]:
    return frozenset(metadata.decode(encoded))


def common_words(texts: Sequence[str], share: float = 0.3) -> frozenset[str]:
    """Words in more than ``share`` of the texts (the owner's name, say), from 5 texts on."""
    if len(texts) < 5:
        return frozenset()
    counts = Counter(chain.from_iterable(map(_text_words, texts)))  # counted in C
    return frozenset(w for w, n in counts.items() if n > share * len(texts))


@lru_cache(maxsize=1 << 16)
def _stamp(value: Any) -> str:
    """``str(value or "")``, the sort key of a time, once per value: the rows' timestamps
    repeat from call to call and formatting a zoned one is most of a block's sorting."""
    return str(value or "")


def _when(row: Mapping[str, Any]) -> datetime | None:
    value = row.get("valid_from") or row.get("created_at")
    return value if isinstance(value, datetime) else None


def _item(row: Mapping[str, Any], section: str) -> HotItem:
    return HotItem(
        str(row["memory_id"]), _with_metadata(row), section, str(row.get("category")), _when(row)
    )


def _with_metadata(row: Mapping[str, Any]) -> str:
    """The memory's text, and what its metadata holds that the text does not say (a
    paraphrase drops "https://..."): the agent gets the link, not only its mention."""
    return _shown(str(row["text"]), row.get("metadata") or "")


@lru_cache(maxsize=1 << 14)
def _shown(text: str, encoded: str) -> str:
    found = metadata.decode(encoded)
    extra = [
        f"{kind}: {value}"
        for kind in metadata.KINDS
        for value in found.get(kind, [])[:3]
        if value not in text
    ]
    return f"{text} [{'; '.join(extra[:4])}]" if extra else text


def completed_tasks(
    tasks: Sequence[Mapping[str, Any]], others: Sequence[Mapping[str, Any]]
) -> dict[str, str]:
    """Task id -> id of a later memory that reports it done: a completion verb and at least
    two of the task's content words (one when the task has only one), not counting words
    common to most memories, dates and numbers."""
    out: dict[str, str] = {}
    common = common_words([str(r["text"]) for r in others])
    # each report's words and time once, not once per task
    reports = [
        (r["memory_id"], _when(r), _words(str(r["text"]), common))
        for r in others
        if _says_done(str(r["text"]))
    ]
    # word -> the reports saying it, so a task counts its shared words with each report
    # without intersecting every pair
    by_word: dict[str, list[int]] = {}
    for i, (_id, _at, report_words) in enumerate(reports):
        for w in report_words:
            by_word.setdefault(w, []).append(i)
    for task in tasks:
        words = _words(str(task["text"]), common)
        if not words:
            continue
        need = min(1 if len(words) == 1 else 2, len(words))
        started = _when(task)
        shared: dict[int, int] = {}
        for w in words:
            for i in by_word.get(w, ()):
                shared[i] = shared.get(i, 0) + 1
        # the first report in order that shares enough words and is not older
        for i in sorted(i for i, n in shared.items() if n >= need):
            report_id, at, _report_words = reports[i]
            if started is not None and at is not None and at < started:
                continue
            if report_id != task["memory_id"]:
                out[str(task["memory_id"])] = str(report_id)
                break
    return out


def build_hot(
    namespace: str,
    rows: Iterable[Mapping[str, Any]],
    now: datetime | None,
    config: HotConfig = HotConfig(),
    session_id: str | None = None,
) -> HotBlock:
    """The hot block of ``namespace`` from its active memory rows (any order, any number;
    each row: memory_id, text, category, kind, slot, subject, importance, q_value,
    access_count, valid_from, valid_until, created_at, updated_at)."""
    # each row's sort key computed once (str of a zoned timestamp is not free)
    by_update = sorted(
        ((_stamp(r.get("updated_at")), str(r["memory_id"])), i, r)
        for i, r in enumerate(rows)
        if r.get("status", "active") == "active"
    )
    active = [r for _key, _i, r in by_update]
    block = HotBlock(namespace, now)

    # identity and profile: the newest memory per (subject, slot) -- older values were
    # superseded already when the gate saw the update; this guards against leftovers
    by_slot: dict[tuple[str, str], Mapping[str, Any]] = {}
    for r in active:
        if r.get("slot"):
            by_slot[(str(r.get("subject") or ""), str(r["slot"]))] = r
    slots = sorted(by_slot.items())  # once, not once per slot name
    block.sections["identity"] = [
        _item(r, "identity") for slot in IDENTITY_SLOTS for (_s, sl), r in slots if sl == slot
    ]
    prefs = sorted(
        (r for r in active if r.get("category") == "preference"),
        key=lambda r: (-_rank(r), str(r["memory_id"])),
    )[: config.max_preferences]
    block.sections["profile"] = [
        _item(r, "profile") for slot in PROFILE_SLOTS for (_s, sl), r in slots if sl == slot
    ] + [_item(r, "profile") for r in prefs]

    # a commitment's validity end is its due date: an overdue task is still pending (the
    # lifecycle archives resolved or stale ones; then it is no longer active here)
    tasks = [r for r in active if r.get("category") == "commitment"]
    block.completed = completed_tasks(tasks, active)
    open_tasks = sorted(
        (t for t in tasks if str(t["memory_id"]) not in block.completed),
        key=lambda r: (_stamp(_when(r)), str(r["memory_id"])),
    )
    block.sections["tasks"] = [_item(r, "tasks") for r in open_tasks[-config.max_tasks :]]

    # memories that carry a link, a command, a path, a version or an id: newest first
    refs = sorted(
        (r for r in active if _metadata_kinds(r.get("metadata") or "") - {"turn"}),
        key=lambda r: (_stamp(r.get("updated_at")), str(r["memory_id"])),
        reverse=True,
    )
    block.sections["references"] = [_item(r, "references") for r in refs[: config.max_references]]

    lessons = sorted(
        (r for r in active if r.get("category") in LESSON_CATEGORIES),
        key=lambda r: (-float(r.get("importance") or 0), str(r["memory_id"])),
    )
    block.sections["lessons"] = [_item(r, "lessons") for r in lessons[: config.max_lessons]]

    recent = sorted(
        ((_stamp(at), str(r["memory_id"])), i, r)
        for i, r in enumerate(active)
        if r.get("category") not in ("summary",) and (at := _when(r)) is not None
    )
    block.sections["recent"] = [_item(r, "recent") for *_k, r in recent[-config.max_recent :]][::-1]

    hot = [
        r
        for r in active
        if float(r.get("q_value") or 0) >= config.hot_min_q
        and int(r.get("access_count") or 0) >= config.hot_min_access
        and (now is None or _when(r) is None or now - _when(r) <= config.hot_max_age)  # type: ignore[operator]
    ]
    hot.sort(key=lambda r: (-float(r.get("q_value") or 0), str(r["memory_id"])))
    block.sections["hot"] = [_item(r, "hot") for r in hot[: config.max_hot]]

    if session_id is not None:
        mine = [r for r in active if r.get("session_id") == session_id]
        latest = max(
            (a for r in mine if isinstance(a := r.get("updated_at"), datetime)), default=None
        )
        if now is not None and latest is not None and now - latest > config.session_ends_after:
            block.session_ended = True  # the working set is cleared with its session
            mine = []
        mine.sort(key=lambda r: (-_working_score(r, now), str(r["memory_id"])))
        block.sections["session"] = [
            replace(_item(r, "session"), promote=_promotable(r, config))
            for r in mine[: config.max_session]
        ]

    _dedupe(block)
    _fit(block, config.max_bytes)
    return block


def _promotable(row: Mapping[str, Any], config: HotConfig) -> bool:
    """Used at least twice, or important: worth keeping past the session."""
    return (
        int(row.get("access_count") or 0) >= config.promote_min_access
        or float(row.get("importance") or 0.0) >= config.promote_min_importance
    )


def _working_score(row: Mapping[str, Any], now: datetime | None) -> float:
    """importance x recency x use: recency halves every 6 hours of event time."""
    importance = float(row.get("importance") or 0.5)
    at = row.get("updated_at") or _when(row)
    hours = (now - at).total_seconds() / 3600 if now and isinstance(at, datetime) else 0.0
    recency = 0.5 ** (max(0.0, hours) / 6)
    use = 1.0 + min(int(row.get("access_count") or 0), 10) / 10
    return float(importance * recency * use)


def _rank(row: Mapping[str, Any]) -> float:
    return float(row.get("importance") or 0.5) + float(row.get("q_value") or 0.5)


def _dedupe(block: HotBlock) -> None:
    """A memory appears once, in the first section (render order) that holds it."""
    seen: set[str] = set()
    for name in SECTIONS:
        kept = []
        for item in block.sections.get(name, []):
            if item.memory_id not in seen:
                seen.add(item.memory_id)
                kept.append(item)
        block.sections[name] = kept


def _fit(block: HotBlock, max_bytes: int) -> None:
    while len(render(block).encode()) > max_bytes:
        for name in CUT_ORDER:
            if block.sections.get(name):
                block.sections[name].pop()
                block.dropped += 1
                break
        else:
            return  # nothing left to cut (the header alone fits any sane cap)


@lru_cache(maxsize=1 << 16)  # a block renders several times while it is cut to its cap
def _line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(block: HotBlock) -> str:
    out = [f"# Memory of {block.namespace}"]
    for name in SECTIONS:
        items = block.sections.get(name, [])
        if not items:
            continue
        out.append(f"\n## {TITLES[name]}")
        for item in items:
            when = f" ({item.at:%Y-%m-%d})" if name in ("recent", "tasks") and item.at else ""
            out.append(f"- {_line(item.text)}{when}")
    return "\n".join(out) + "\n"
