"""Relative dates resolved against the event time ("yesterday" -> "on 7 May 2023") and the
validity bounds they give a claim."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from memstream.core.calendar_words import MONTH_NAMES, MONTH_NUMBERS, NUMBER_WORDS, WEEKDAYS
from memstream.core.extract.gates import (
    Caseless,
    Gate,
    Gates,
    fold,
    gate,
    verbless,
    words_of,
    wordset,
)
from memstream.core.extract.person import PAST_OR_FIXED

# --- dates ------------------------------------------------------------------------------

_MONTH_NUM = MONTH_NUMBERS
_NUMBERS = {**NUMBER_WORDS, "a couple of": 2, "a couple": 2, "couple of": 2}
_NUM = r"(?P<n>\d{1,4}|a couple of|a couple|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?P<unit>day|weekend|week|month|year)s?"
_WD = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MON = r"(?P<mon>january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
# "in" of a phrasal verb is no preposition of the date: "moved in last weekend" stays "moved
# in" ("moved on the weekend of ..." lost the verb's sense)
_PREP = (
    r"(?:\b(?P<prep>on|(?<!\bmoved )(?<!\bmove )(?<!\bmoving )(?<!\bstayed )(?<!\bsettled )"
    r"(?<!\bchecked )(?<!\bsigned )(?<!\bmoves )in|by|until|till|through|since|before|after|from|"
    r"during)\s+)?"
)
_FUTURE = re.compile(
    r"\b(?:will|shall|going to|gonna|plan(?:s|ning)? to|intends? to|next|tomorrow|upcoming|scheduled|about to|"
    r"(?:am|is|are) (?!\w+ing\s+to\b)\w+ing)\b|'ll\b",
    re.I,
)
_IRREGULAR_PAST = sorted(
    PAST_OR_FIXED - wordset("can will shall should may might must ought set let put cut hit read")
)
_PAST = re.compile(
    r"\b(?:" + "|".join(_IRREGULAR_PAST) + r"|did|ago|yesterday|last)\b"
    r"|(?<!\bis )(?<!\bam )(?<!\bare )(?<!'m )(?<!'re )(?<!\bbe )\b\w{2,}(?<!e)ed\b",
    re.I,
)
_FUTURE_GATES = (
    gate(
        "will|shall|going to|gonna|plan to|plans to|planning to|intend to|intends to|next|"
        "tomorrow|upcoming|scheduled|about to|'ll"
    ),
    gate("am|is|are", also=gate(parts="ing")),
)
# _PAST matches where a word is one of _PAST_WORDS, or else where _PAST_ED matches.
_PAST_WORDS = frozenset(_IRREGULAR_PAST) | {"did", "ago", "yesterday", "last"}
_PAST_ED = Caseless(
    re.compile(
        r"\b(?<!\bis )(?<!\bam )(?<!\bare )(?<!'m )(?<!'re )(?<!\bbe )\w{2,}(?<!e)ed\b", re.I
    )
)
_FUTURE_ANY = Caseless(_FUTURE)
# _FUTURE matches where one of these is a word (they are alternatives of it on their own).
_FUTURE_WORDS = wordset("will shall gonna next tomorrow upcoming scheduled")
_OPEN, _CLOSE = "\x02", "\x03"  # brackets around dates we wrote, so they are not parsed twice


def undated(text: str) -> str:
    """``text`` kept out of date resolution ("The Thursday Murder Club" is a title)."""
    return f"{_OPEN}{text}{_CLOSE}"


@dataclass(frozen=True, slots=True)
class Dated:
    """A claim with its dates resolved against the event time."""

    text: str
    valid_from: datetime | None
    valid_until: datetime | None
    # "by Friday": a deadline, not a bound on the claim's truth; a task's due date
    due: datetime | None = None

    @property
    def has_date(self) -> bool:
        return self.valid_from is not None or self.valid_until is not None or self.due is not None


@dataclass(frozen=True, slots=True)
class _Span:
    start: date
    end: date  # exclusive
    plain: str  # absolute wording, e.g. "7 May 2023" or "the week before 8 May 2023"
    prep: str  # the preposition the plain wording needs when the speaker gave none


def _fmt(d: date) -> str:
    return f"{d.day} {MONTH_NAMES[d.month - 1]} {d.year}"


def _month_start(d: date, delta: int) -> date:
    index = d.year * 12 + d.month - 1 + delta
    return date(index // 12, index % 12 + 1, 1)


def _day(d: date, prep: str = "on") -> _Span:
    return _Span(d, d + timedelta(days=1), _fmt(d), prep)


def _month(d: date, delta: int) -> _Span:
    start = _month_start(d, delta)
    return _Span(
        start, _month_start(start, 1), f"{MONTH_NAMES[start.month - 1]} {start.year}", "in"
    )


def _year(year: int) -> _Span:
    return _Span(date(year, 1, 1), date(year + 1, 1, 1), str(year), "in")


def _weekday_before(d: date, wd: int) -> date:
    return d - timedelta(days=(d.weekday() - wd - 1) % 7 + 1)


def _weekday_after(d: date, wd: int) -> date:
    return d + timedelta(days=(wd - d.weekday() - 1) % 7 + 1)


def _count(m: re.Match[str]) -> int:
    raw = m.group("n").lower()
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _shift(d: date, unit: str, n: int) -> _Span:
    if unit == "day":
        return _day(d + timedelta(days=n))
    if unit == "weekend":
        # the n-th weekend back (or ahead) from the one nearest before (after) d
        sat = _weekday_before(d, 5) if n < 0 else _weekday_after(d, 5)
        return _weekend(sat + timedelta(weeks=n + 1 if n < 0 else n - 1))
    if unit == "week":
        when = d + timedelta(weeks=n)
        return _Span(when, when + timedelta(days=7), f"the week of {_fmt(when)}", "in")
    if unit == "month":
        return _month(d, n)
    return _year(d.year + n)


def _weekend(sat: date) -> _Span:
    return _Span(sat, sat + timedelta(days=2), f"the weekend of {_fmt(sat)}", "on")


def _week(start: date, plain: str) -> _Span:
    return _Span(start, start + timedelta(days=7), plain, "in")


_Resolver = Callable[[re.Match[str], date, bool], _Span]


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


_RELATIVE: tuple[tuple[re.Pattern[str], _Resolver], ...] = tuple(
    (re.compile(_PREP + pattern + r"\b", re.I), resolver)
    for pattern, resolver in (
        (r"\bthe day before yesterday", lambda m, d, f: _day(d - timedelta(days=2))),
        (r"\bthe day after tomorrow", lambda m, d, f: _day(d + timedelta(days=2))),
        (
            r"\byesterday(?: (?:morning|afternoon|evening|night))?",
            lambda m, d, f: _day(d - timedelta(days=1)),
        ),
        (r"\blast night", lambda m, d, f: _day(d - timedelta(days=1))),
        (r"\b(?:tonight|today|this (?:morning|afternoon|evening))", lambda m, d, f: _day(d)),
        (
            r"\btomorrow(?: (?:morning|afternoon|evening|night))?",
            lambda m, d, f: _day(d + timedelta(days=1)),
        ),
        (
            r"\b" + _NUM + r" " + _UNIT + r" ago",
            lambda m, d, f: _shift(d, m.group("unit").lower(), -_count(m)),
        ),
        (
            r"\b" + _NUM + r" " + _UNIT + r" from now",
            lambda m, d, f: _shift(d, m.group("unit").lower(), _count(m)),
        ),
        (
            r"\b(?:last|this past|the past|past) weekend",
            lambda m, d, f: _weekend(
                _weekday_before(d, 5) - timedelta(days=7 if d.weekday() == 6 else 0)
            ),
        ),
        (
            r"\bthis weekend",
            lambda m, d, f: _weekend(
                d - timedelta(days=1) if d.weekday() == 6 else _monday(d) + timedelta(days=5)
            ),
        ),
        (r"\bnext weekend", lambda m, d, f: _weekend(_weekday_after(d, 5))),
        (
            r"\b(?:last|the previous|the past) week",
            lambda m, d, f: _week(_monday(d) - timedelta(days=7), f"the week before {_fmt(d)}"),
        ),
        (r"\bthis week", lambda m, d, f: _week(_monday(d), f"the week of {_fmt(_monday(d))}")),
        (
            r"\b(?:next|the following|the coming) week",
            lambda m, d, f: _week(_monday(d) + timedelta(days=7), f"the week after {_fmt(d)}"),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?month",
            lambda m, d, f: _Span(
                _month_start(d, 1) - timedelta(days=1),
                _month_start(d, 1),
                f"the end of {MONTH_NAMES[d.month - 1]} {d.year}",
                "at",
            ),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?year",
            lambda m, d, f: _Span(
                date(d.year, 12, 31), date(d.year + 1, 1, 1), f"the end of {d.year}", "at"
            ),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?week",
            lambda m, d, f: _Span(
                _monday(d) + timedelta(days=6),
                _monday(d) + timedelta(days=7),
                f"the end of the week of {_fmt(_monday(d))}",
                "at",
            ),
        ),
        (r"\b(?:last|the previous) month", lambda m, d, f: _month(d, -1)),
        (r"\bthis month", lambda m, d, f: _month(d, 0)),
        (r"\bnext month", lambda m, d, f: _month(d, 1)),
        (r"\b(?:last|the previous) year", lambda m, d, f: _year(d.year - 1)),
        (r"\bthis year", lambda m, d, f: _year(d.year)),
        (r"\bnext year", lambda m, d, f: _year(d.year + 1)),
        (
            r"\b(?:last|this past|past) " + _WD,
            lambda m, d, f: _day(_weekday_before(d, WEEKDAYS.index(m.group("wd").lower()))),
        ),
        (
            r"\bnext " + _WD,
            lambda m, d, f: _day(_weekday_after(d, WEEKDAYS.index(m.group("wd").lower()))),
        ),
        (
            r"\bthis " + _WD,
            lambda m, d, f: _day(
                _monday(d) + timedelta(days=WEEKDAYS.index(m.group("wd").lower()))
            ),
        ),
        (
            # not a title's word: "The Thursday Murder Club", "the Friday Night Lights"; nor
            # a day counted from another event: "the Saturday after her birthday"; nor a day
            # that comes back: "Thursday evenings for ten weeks", "Saturday mornings"
            r"(?<!\bevery )\b(?:(?<!\bthe )|(?!\w+\s+(?:(?-i:[A-Z][a-z])|after\b|before\b)))"
            + _WD
            + r"(?!s)(?!\s+(?:mornings|evenings|nights|afternoons)\b)",
            lambda m, d, f: _day(
                (_weekday_after if f else _weekday_before)(d, WEEKDAYS.index(m.group("wd").lower()))
            ),
        ),
        (
            # "the first time in 20 years" is a span looked back on, not a date ahead
            r"(?<!\btime )(?<!\bfirst )\bin " + _NUM + r" " + _UNIT,
            lambda m, d, f: _shift(d, m.group("unit").lower(), _count(m)),
        ),
    )
)


def _infer_year(d: date, month: int, day: int, future: bool) -> date:
    when = date(d.year, month, day)
    if future and when < d:
        return date(d.year + 1, month, day)
    if not future and when > d:
        return date(d.year - 1, month, day)
    return when


def _explicit_day(m: re.Match[str], d: date, f: bool) -> _Span:
    month = _MONTH_NUM[m.group("mon").lower().rstrip(".")]
    day = int(m.group("day"))
    year = m.group("year")
    return _day(date(int(year), month, day) if year else _infer_year(d, month, day, f))


def _numeric_day(m: re.Match[str], d: date, f: bool) -> _Span:
    year = int(m.group("year"))
    return _day(
        date(year + 2000 if year < 100 else year, int(m.group("month")), int(m.group("day")))
    )


def _bare_month(m: re.Match[str], d: date, f: bool) -> _Span:
    month = _MONTH_NUM[m.group("mon").lower().rstrip(".")]
    start = _infer_year(d.replace(day=1), month, 1, f)
    return _month(start, 0)


_EXPLICIT: tuple[tuple[re.Pattern[str], _Resolver], ...] = (
    (
        re.compile(_PREP + r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
        lambda m, d, f: _day(
            date(int(m.group("year")), int(m.group("month")), int(m.group("day")))
        ),
    ),
    (
        re.compile(
            _PREP + r"\b" + _MON + r" (?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?:,? (?P<year>\d{4})\b)?",
            re.I,
        ),
        _explicit_day,
    ),
    (
        re.compile(
            _PREP
            + r"\b(?:the )?(?P<day>\d{1,2})(?:st|nd|rd|th)? (?:of )?"
            + _MON
            + r"(?:,? (?P<year>\d{4})\b)?",
            re.I,
        ),
        _explicit_day,
    ),
    (
        re.compile(_PREP + r"\b" + _MON + r",? (?P<year>(?:19|20)\d{2})\b", re.I),
        lambda m, d, f: _month(
            date(int(m.group("year")), _MONTH_NUM[m.group("mon").lower().rstrip(".")], 1), 0
        ),
    ),
    (
        # a bare month needs its capital: "in May", never the verb "may"
        re.compile(
            r"\b(?P<prep>in|since|until|till|by|during|from|before|after) (?P<mon>(?-i:January|February|March|"
            r"April|May|June|July|August|September|October|November|December))\b",
            re.I,
        ),
        _bare_month,
    ),
    (
        re.compile(_PREP + r"\b(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4}|\d{2})\b"),
        _numeric_day,
    ),
    (
        re.compile(
            r"\b(?P<prep>in|since|until|till|by|during|from|before|after) (?P<year>(?:19|20)\d{2})\b",
            re.I,
        ),
        lambda m, d, f: _year(int(m.group("year"))),
    ),
)
_DURATION = re.compile(r"\bfor (?:the (?:past|last) )?" + _NUM + r" " + _UNIT + r"\b", re.I)
_PERFECT = re.compile(
    r"\b(?:has|have|had|'ve) been\b|\b(?:has|have|'ve) (?:\w+ed|known|had|lived|worked)\b", re.I
)


# Gates of the date patterns above, in the same order, asked about the whole claim. Patterns
# run on the pieces of the claim outside dates already written, which are pieces of the
# claim itself, and every pattern but one starts and ends at a word boundary, so the words
# of a piece are words of the claim. The one, "(the) 7(th) (of) May" without a year, can end
# inside a word ("5th of Mayhem"), leaving a piece that starts mid-word: the gates after it
# ask only for digits, parts, and words the pattern needs after a space ("in May").
_UNIT_WORDS = "day|days|weekend|weekends|week|weeks|month|months|year|years"
_UNITS = gate(_UNIT_WORDS)
_DIGITS = gate(digit=True)
_MONTH_WORDS = "|".join(MONTH_NAMES) + "|" + "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_MONTH_PARTS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_RELATIVE_GATES: tuple[Gate, ...] = (
    gate("the day before yesterday"),
    gate("the day after tomorrow"),
    gate("yesterday"),
    gate("last night"),
    gate("tonight|today|this morning|this afternoon|this evening"),
    gate("tomorrow"),
    gate("ago", also=_UNITS),
    gate("from now", also=_UNITS),
    gate("last weekend|past weekend"),
    gate("this weekend"),
    gate("next weekend"),
    gate("last week|the previous week|the past week"),
    gate("this week"),
    gate("next week|the following week|the coming week"),
    gate("end of month|end of the month|end of this month"),
    gate("end of year|end of the year|end of this year"),
    gate("end of week|end of the week|end of this week"),
    gate("last month|the previous month"),
    gate("this month"),
    gate("next month"),
    gate("last year|the previous year"),
    gate("this year"),
    gate("next year"),
    gate("|".join(f"last {day}|past {day}" for day in WEEKDAYS)),
    gate("|".join(f"next {day}" for day in WEEKDAYS)),
    gate("|".join(f"this {day}" for day in WEEKDAYS)),
    gate("|".join(WEEKDAYS)),
    gate(_UNIT_WORDS, also=gate("in")),
)
_EXPLICIT_GATES: tuple[Gate, ...] = (
    gate(digit=True, also=gate(parts="-")),  # 2023-05-07
    gate(_MONTH_WORDS, also=_DIGITS),  # May 7(th)(, 2023)
    gate(digit=True, also=gate(parts=_MONTH_PARTS)),  # (the) 7(th) (of) May(, 2023)
    gate(digit=True, also=gate(parts=_MONTH_PARTS)),  # May(,) 2023
    gate("|".join(MONTH_NAMES)),  # in May
    gate(digit=True, also=gate(parts="/")),  # 5/7/2023
    _DIGITS,  # in 2023
)
_DURATION_GATE = gate(_UNIT_WORDS, also=gate("for"))
assert len(_RELATIVE_GATES) == len(_RELATIVE) and len(_EXPLICIT_GATES) == len(_EXPLICIT)
_PLAIN_DATE_PATTERNS = (*_RELATIVE, *_EXPLICIT)
# Every date match starts at the start of a word: saying so first makes the scan quicker.
_DATE_PATTERNS = tuple(
    (re.compile(r"\b(?=\w)" + pattern.pattern, pattern.flags), resolver)
    for pattern, resolver in _PLAIN_DATE_PATTERNS
)
_DATE_GATES = Gates((*_RELATIVE_GATES, *_EXPLICIT_GATES, _DURATION_GATE))
_DURATION_AT = len(_DATE_PATTERNS)  # the index of the duration gate
_BRACKETED = re.compile(f"({_OPEN}[^{_CLOSE}]*{_CLOSE})")


def _turn_ahead(turn: str) -> bool:
    """Whether a turn speaks of what lies ahead: it says so, or it says nothing past."""
    return bool(_FUTURE.search(turn)) or not _PAST.search(turn)


def resolve_dates(text: str, occurred_at: datetime, *, gated: bool = True) -> Dated:
    """Rewrite relative dates to absolute ones and derive validity bounds.

    "yesterday" said on 8 May 2023 becomes "on 7 May 2023" with valid_from 2023-05-07;
    "until Friday" sets valid_until to the end of that Friday; "since 2019" sets
    valid_from. Explicit dates stay as written. Bounds carry the turn's timezone.

    ``gated=False`` tries every pattern on every claim instead of only those whose
    gate passes; the result is the same (benchmarks use it as the baseline).
    """
    return resolve_dates_worded(text, occurred_at, words_of(text) if gated else None)


def resolve_dates_worded(
    text: str, occurred_at: datetime, words: frozenset[str] | None, turn: str = ""
) -> Dated:
    """resolve_dates, gated on the ``words`` of ``text``, or not gated if None. ``turn``:
    the whole turn, whose tense dates a fragment of it that has none ("I finished! 2 hours
    41 minutes in Boulder on Sunday": the Sunday before, not the one ahead)."""
    gated = words is not None
    if words is None:
        words = frozenset()
        admitted = list(range(_DURATION_AT + 1))
    else:
        admitted = _DATE_GATES.admitting(words, text)
        if not admitted:  # no date here: the usual case
            return Dated(text.replace(_OPEN, "").replace(_CLOSE, ""), None, None)
    today = occurred_at.date()
    # an undated weekday or day of month lies ahead unless the claim is in the past tense;
    # worked out on the first date found (most claims that reach here have none)
    tense: list[bool] = []

    def future() -> bool:
        if tense:
            return tense[0]
        if not gated:
            ahead, past = bool(_FUTURE.search(text)), bool(_PAST.search(text))
            tense.append(
                _turn_ahead(turn)
                if not (ahead or past) and turn and verbless(words_of(text))
                else ahead or not past
            )
            return tense[0]
        ahead = not _FUTURE_WORDS.isdisjoint(words) or (
            any(g.admits(words, text) for g in _FUTURE_GATES) and _FUTURE_ANY.found(text)
        )
        # a past-tense word is a match of _PAST's first half; else only "-ed" can match
        past = not _PAST_WORDS.isdisjoint(words) or ("ed" in fold(text) and _PAST_ED.found(text))
        tense.append(
            _turn_ahead(turn)
            if not (ahead or past) and turn and verbless(words)
            else ahead or not past
        )
        return tense[0]

    starts: list[date] = []
    ends: list[date] = []
    dues: list[date] = []

    def note(span: _Span, prep: str | None) -> None:
        prep = (prep or "").lower()
        if prep in ("until", "till", "through", "by"):
            (dues if prep == "by" else ends).append(span.end)
        elif prep == "before":
            ends.append(span.start)
        elif prep == "after":
            starts.append(span.end)
        else:
            starts.append(span.start)

    def relative(resolver: _Resolver) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            prep = m.group("prep")
            bound = (prep or "").lower() in ("until", "till", "through", "by")
            ahead = bound or future()
            # "from Monday until Wednesday": the end is counted from the start
            anchor = starts[-1] if bound and starts and starts[-1] > today else today
            try:
                span = resolver(m, anchor, ahead)
            except (ValueError, OverflowError, KeyError):
                return m.group(0)
            note(span, prep)
            lead = prep if prep and prep.lower() not in ("on", "in", "during") else span.prep
            return f"{_OPEN}{lead} {span.plain}{_CLOSE}"

        return sub

    def explicit(resolver: _Resolver) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            bound = (m.group("prep") or "").lower() in ("until", "till", "through", "by")
            ahead = bound or future()
            try:
                span = resolver(m, today, ahead)
            except (ValueError, OverflowError, KeyError):
                return m.group(0)
            note(span, m.group("prep"))
            return f"{_OPEN}{m.group(0)}{_CLOSE}"

        return sub

    out = text
    for i in admitted:
        if i == _DURATION_AT:
            continue
        pattern, resolver = (_DATE_PATTERNS if gated else _PLAIN_DATE_PATTERNS)[i]
        sub = relative(resolver) if i < len(_RELATIVE) else explicit(resolver)
        if _OPEN not in out:
            out = pattern.sub(sub, out)
            continue
        # dates already written are bracketed and never parsed again
        out = "".join(
            piece if piece.startswith(_OPEN) else pattern.sub(sub, piece)
            for piece in _BRACKETED.split(out)
        )
    if not starts and admitted[-1] == _DURATION_AT and _PERFECT.search(text):
        duration = _DURATION.search(text)
        if duration:
            with contextlib.suppress(ValueError, OverflowError):
                starts.append(
                    _shift(today, duration.group("unit").lower(), -_count(duration)).start
                )
    out = out.replace(_OPEN, "").replace(_CLOSE, "")
    tz = occurred_at.tzinfo

    def at(d: date | None) -> datetime | None:
        return None if d is None else datetime.combine(d, time(0), tzinfo=tz)

    valid_from = starts[0] if starts else None
    valid_until = ends[0] if ends else None
    if valid_from is not None and valid_until is not None and valid_until < valid_from:
        valid_until = None
    return Dated(out, at(valid_from), at(valid_until), at(dues[0] if dues else None))
