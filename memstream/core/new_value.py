"""A quantity that changed: "I'm down to one cup of coffee a day" after "five cups a day";
"the response time has improved to 250ms" after "it was 800ms"; "accuracy is up to 92%".

The wording says a measure moved ("down to", "improved to", "now at", "up from", or a habit
as it has been lately: "I've been sleeping eight hours a night") and gives the new number,
not the old: the earlier memory is the same speaker's that gives a number
in the same unit about the same thing (two of its content words; a body's weight, "I'm down
to 82 kg", needs nothing named). The rule writes a
``supersedes`` edge (rule ``new_value``) to it; recall then puts the new value first, as
for a change said in passing (``core.replacement``). The old memory stays active: it is
the history ("what was the response time before the caching?").

Pure: proposals from the new memory's text and the earlier memories' texts.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import Final

from memstream.core.calendar_words import MONTH_NAMES, NUMBER_WORDS, WEEKDAYS
from memstream.core.relations import Known, NewMemory, Proposal, content_words
from memstream.core.tokens import tokenize

RULE: Final = "new_value"
CONFIDENCE: Final = 0.7
TARGETS: Final = 2
#: of the words that say what moved, an earlier memory must say this many, and this share
SHARED: Final = 2
SHARE: Final = 0.6

# "a" and "an" count one in a date ("a week ago"), but every noun phrase would be an amount
_WORDS = sorted((w for w in NUMBER_WORDS if w not in ("a", "an")), key=len, reverse=True)
_NUMBER = r"(?:[$€£]\s?)?(?:\d[\d,.]*\d|\d|\b(?:" + "|".join(_WORDS) + r")\b)"
# the number and its unit: "250ms", "250 ms", "92%", "one cup", "$2,000", "12 problems"
_AMOUNT = rf"(?P<num>{_NUMBER})\s?(?P<unit>%|[a-z]+)?"
_CHANGES: Final = (
    re.compile(
        # "up to 25%" alone is a limit: "went up to", "is down to" are moves
        r"\b(?:(?:is|are|was|were|'s|’s|'m|’m|am|be|been|got|get|gone|went|go|come|came)"
        r"\s+(?:\w+\s+)?(?:down|up)|dropped|fell|rose|grew|improved|increased|decreased|reduced|"
        r"cut(?:\s+back)?|climbed|jumped|slipped|raised|lowered|bumped(?:\s+up)?|boosted|"
        rf"doubled|halved)(?P<obj>(?:\s+[\w'’]+){{0,4}}?)\s+to\s+{_AMOUNT}",
        re.I,
    ),
    re.compile(rf"\bnow\s+(?:at\s+|rated\s+|is\s+|are\s+|(?:\w+\s+){{0,2}}?)?{_AMOUNT}", re.I),
    # a habit said as it has been lately: "I've been sleeping eight hours a night"
    re.compile(
        r"\b(?:have|has|'ve|’ve)\s+been\s+[a-z]+ing\s+(?:about\s+|around\s+|roughly\s+)?" + _AMOUNT,
        re.I,
    ),
)
# numbers and dates say when or how much, not what
_WORD_SET: Final = frozenset(w.casefold() for w in _WORDS) | content_words(
    " ".join((*MONTH_NAMES, *WEEKDAYS))
)
_CLAUSE = re.compile(
    r"[,;:]|\b(?:which|that|and|but|so|because|since|after|thanks to|due to)\b", re.I
)
# units that measure the speaker when nothing else is named ("I'm down to 82 kg")
_OWN_MEASURES: Final = frozenset({"kg", "kilo", "lb", "lbs", "pound", "stone"})
_ANY_AMOUNT = re.compile(rf"(?<![\w.]){_AMOUNT}", re.I)
# words of the wording, not of what it is about
_CHANGE_WORDS: Final = frozenset(
    content_words(
        "down up dropped fell rose grew improved increased decreased reduced cut back climbed "
        "jumped slipped raised lowered bumped boosted doubled halved now rated recently "
        # and what a speaker says around anything: "I'm trying to", "I was told"
        "trying try wants want needs need told saw says said kinda really just also managed"
    )
)


_NO_UNIT: Final = frozenset({"a", "an", "the", "per", "of", "by", "in", "on", "at", "for", "to"})


def _unit(num: str, unit: str | None) -> str:
    """A unit compared loosely: "cups" is "cup", "$2,000" is in "$"; none is ""."""
    u = (unit or "").casefold()
    if u in _NO_UNIT:
        u = ""
    if not u and num[:1] in "$€£":
        return num[:1]
    return u[:-1] if len(u) > 3 and u.endswith("s") else u


def _changes(text: str, subject: str | None = None) -> list[tuple[str, str, str, str]]:
    """(number, unit, what moved, its head word) for each new amount ``text`` states. What
    moved is said in the clause before the number ("User's grocery budget was increased
    to"; the sentence before it when that clause names nothing: "..., which has improved
    to") and after it ("down to one cup of coffee a day"); the head is the last word before
    the number that names something ("budget"), else the first after it ("coffee")."""
    out = []
    for rx in _CHANGES:
        for m in rx.finditer(text):
            num, unit = m.group("num"), _unit(m.group("num"), m.group("unit"))
            if not unit:
                continue  # a number without a unit is no measure ("it's now July 20")
            head = text[: m.start("num")]
            clause = _CLAUSE.split(head)[-1]
            before = clause if _ordered(clause, subject) else head
            # "the landlord raised my rent to $1,400": what moved is the verb's object,
            # not who moved it
            obj = m.groupdict().get("obj") or ""
            if _ordered(obj, subject):
                before = obj
            after = _CLAUSE.split(text[m.end() :])[0]
            said_before = _ordered(before, subject)
            named = said_before[-1:] or _ordered(after, subject)[:1]
            if named:
                out.append((num, unit, f"{before} {after}", named[0]))
            elif unit in _OWN_MEASURES:
                # "I'm down to 82 kg": a body's weight, though nothing names it
                out.append((num, unit, "", ""))
    return out


@functools.lru_cache(maxsize=256)
def _drop(subject: str | None) -> frozenset[str]:
    """Words that say nothing about what moved: the change wording, numbers and dates, and
    the speaker's name (every memory of theirs says it)."""
    return _CHANGE_WORDS | _WORD_SET | content_words(f"{subject or ''} others")


def _ordered(text: str, subject: str | None) -> list[str]:
    """The content words of ``text`` that say what a measure is about, in order."""
    drop = _drop(subject)
    return [
        w for w in tokenize(text, stem=True) if not any(c.isdigit() for c in w) and w not in drop
    ]


def new_amounts(text: str) -> list[tuple[str, str]]:
    """The new (number, unit) pairs ``text`` says a measure moved to; none when it says no
    change."""
    return [(num, unit) for num, unit, _what, _head in _changes(text)]


def _amounts(text: str) -> list[tuple[str, str]]:
    return [
        (m.group("num").casefold(), _unit(m.group("num"), m.group("unit")))
        for m in _ANY_AMOUNT.finditer(text)
    ]


def _words(text: str, subject: str | None) -> frozenset[str]:
    """Content words that say what a measure is about (``_ordered``'s, as a set)."""
    drop = _drop(subject)
    return frozenset(
        w for w in content_words(text) if not any(c.isdigit() for c in w) and w not in drop
    )


def new_value_proposals(new: NewMemory, earlier: Sequence[Known]) -> list[Proposal]:
    """``supersedes`` edges from ``new`` to the latest memories of ``earlier`` (oldest
    first; the same speaker's) that give another number in the unit of a new amount
    ``new`` states, about the same thing."""
    if new.asks:
        return []
    changes = _changes(new.text, new.subject)
    if not changes:
        return []
    # each earlier memory of the speaker read once: its amounts and its words
    read = [
        (k, _amounts(k.text), _words(k.text, new.subject))
        for k in earlier
        if k.memory_id != new.memory_id and k.subject == new.subject
    ]
    out: list[Proposal] = []
    for num, unit, what, head in changes:
        value = num.casefold()
        # the earlier memory says what moved: its head word, and most of its words (two at
        # least, or all)
        about = _words(what, new.subject)
        needed = max(min(SHARED, len(about)), math.ceil(SHARE * len(about)))
        found = [
            k
            for k, amounts, said in read
            if (needed > 0 or not head)
            and any(u == unit and n != value for n, u in amounts)
            and all(n != value for n, u in amounts if u == unit)
            and (not head or head in said)
            and len(about & said) >= needed
        ]
        for k in found[-TARGETS:]:
            if all(p.target != k.memory_id for p in out):
                # "$1,400" names its unit already
                said = num if unit and num.startswith(unit) else f"{num} {unit}".strip()
                evidence = {"value": said}
                out.append(
                    Proposal(new.memory_id, k.memory_id, "supersedes", CONFIDENCE, RULE, evidence)
                )
    return out
