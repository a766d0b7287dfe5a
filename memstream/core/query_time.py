"""The point in time a query names: "in March", "last week", "2023-05-02", "3 days ago".

``parse_time(query, now)`` returns the leftmost expression it understands as a
:class:`TimeRef`: a half-open span ``[start, end)`` plus how the query relates to it
("before March", "since 2022"). Relative expressions and months or days without a year
are resolved against ``now``, the event time of the query (never the wall clock), to the
most recent such span not in the future; without ``now`` only absolute dates and years
parse. Spans carry ``now``'s timezone (UTC without one).

Understood: ISO dates and months (``2023-05-02``, ``2023-05``), "March 5[th][, 2023]",
"5[th] [of] March [2023]", "March [2023]", "Mar 5" / "Sep 2023" (abbreviations need a
day or a year), years 1900-2099, today / tonight / this morning, yesterday / last night,
this or last week / month / year (weeks start on Monday), this or last weekend, "[on|last] Monday", "N
days / weeks / months / years ago" with N a number or a word up to twelve ("a", "an"), and
seasons: "last summer", "this spring", "[the] winter [of] 2023", "in the autumn" (northern
meteorological seasons: spring is March to May, winter December to February and belongs to
the year it starts in; "last summer" is the latest summer over by ``now``, a bare "in the
summer" the latest begun by then; "fall" and "spring" count only after "last", "this", "in"
or "during", or before a year, since both are also common words).
"May" counts as a month only capitalised after a preposition or before a day or year,
since "may" is mostly a verb. Numeric dates such as 3/5/2023 count for their year only:
day-first and month-first readings disagree on the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Final, Literal

from memstream.core.calendar_words import MONTH_NUMBERS, NUMBER_WORDS, WEEKDAYS

Relation = Literal["during", "before", "after", "since"]

_MICRO: Final = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class TimeRef:
    start: datetime
    end: datetime  # exclusive
    relation: Relation
    text: str  # the matched words, verbatim

    @property
    def at(self) -> datetime:
        """One representative instant for a ``valid_at`` lookup: the middle of the span;
        just before it for "before"/"until", its end for "after", its start for "since"."""
        if self.relation == "before":
            return self.start - _MICRO
        if self.relation == "after":
            return self.end
        if self.relation == "since":
            return self.start
        return self.start + (self.end - self.start) / 2

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        """The event times the question asks about, epoch seconds [from, until); None is
        open: before the span, from its end on ("after"), from its start on ("since")."""
        if self.relation == "before":
            return None, self.start.timestamp()
        if self.relation == "after":
            return self.end.timestamp(), None
        if self.relation == "since":
            return self.start.timestamp(), None
        return self.start.timestamp(), self.end.timestamp()


_MONTHS: Final[dict[str, int]] = MONTH_NUMBERS
_FULL_MONTHS: Final = frozenset(n for n in _MONTHS if len(n) > 4 or n in ("june", "july"))
_WEEKDAYS: Final[dict[str, int]] = {d: i for i, d in enumerate(WEEKDAYS)}
_NUMBER_WORDS: Final[dict[str, int]] = {**NUMBER_WORDS, "couple of": 2}

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")(?:\.|\b)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_PREPOSITIONS: Final = ("in", "during", "since", "before", "after", "until", "till", "of", "by")
_SEASONS: Final[dict[str, int]] = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"

# Relation words directly before an expression ("before", "until the", "since early").
_RELATION_RE: Final = re.compile(
    r"\b(?P<rel>before|after|since|until|till|prior to)\s+(?:(?:in|on|during|the|early|late)\s+)*$",
    re.IGNORECASE,
)
_RELATIONS: Final[dict[str, Relation]] = {
    "before": "before",
    "prior to": "before",
    "until": "before",
    "till": "before",
    "after": "after",
    "since": "since",
}

_Span = tuple[datetime, datetime]
_Handler = Callable[[re.Match[str], datetime | None, tzinfo], _Span | None]


def _day_span(d: date, tz: tzinfo) -> _Span:
    start = datetime.combine(d, time(), tz)
    return start, start + timedelta(days=1)


def _month_span(year: int, month: int, tz: tzinfo) -> _Span:
    nxt = (year + 1, 1) if month == 12 else (year, month + 1)
    return datetime(year, month, 1, tzinfo=tz), datetime(*nxt, 1, tzinfo=tz)


def _year_span(year: int, tz: tzinfo) -> _Span:
    return datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz)


def _week_span(d: date, tz: tzinfo) -> _Span:
    start = datetime.combine(d - timedelta(days=d.weekday()), time(), tz)
    return start, start + timedelta(days=7)


def _shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) - by
    return index // 12, index % 12 + 1


def _safe_day(year: int, month: int, day: int, tz: tzinfo) -> _Span | None:
    try:
        return _day_span(date(year, month, day), tz)
    except ValueError:  # February 30th, day 0
        return None


def _month_allowed(m: re.Match[str], has_detail: bool) -> bool:
    """Abbreviations need a day or year; "may" also needs a capital and a preposition."""
    word = m.group("month").rstrip(".")
    low = word.lower()
    if low == "may":
        if word != "May":
            return False
        if has_detail:
            return True
        before = m.string[: m.start("month")].split()
        return bool(before) and before[-1].lower() in _PREPOSITIONS
    return has_detail or low in _FULL_MONTHS


def _recent_year(month: int, day: int, now: datetime | None) -> int | None:
    """The year of the latest (month, day) not after ``now``."""
    if now is None:
        return None
    return now.year if (month, day) <= (now.month, now.day) else now.year - 1


def _iso_date(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    return _safe_day(int(m["y"]), int(m["mo"]), int(m["d"]), tz)


def _iso_month(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    month = int(m["mo"])
    return _month_span(int(m["y"]), month, tz) if 1 <= month <= 12 else None


def _month_day(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    if not _month_allowed(m, True):
        return None
    month, day = _MONTHS[m["month"].rstrip(".").lower()], int(m["day"])
    year = int(m["year"]) if m["year"] else _recent_year(month, day, now)
    return None if year is None else _safe_day(year, month, day, tz)


def _month_year(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    if not _month_allowed(m, m["year"] is not None):
        return None
    month = _MONTHS[m["month"].rstrip(".").lower()]
    year = int(m["year"]) if m["year"] else _recent_year(month, 1, now)
    return None if year is None else _month_span(year, month, tz)


def _year(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    return _year_span(int(m["year"]), tz)


def _relative_day(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    if now is None:
        return None
    back = 1 if m["word"].lower() in ("yesterday", "last night") else 0
    return _day_span(now.date() - timedelta(days=back), tz)


def _this_last(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    if now is None:
        return None
    back = 1 if m["which"].lower() == "last" else 0
    unit = m["unit"].lower()
    if unit == "week":
        return _week_span(now.date() - timedelta(weeks=back), tz)
    if unit == "month":
        return _month_span(*_shift_month(now.year, now.month, back), tz)
    return _year_span(now.year - back, tz)


def _weekend(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    """Saturday and Sunday of this week ("this weekend") or of the week before ("last
    weekend"); weeks start on Monday."""
    if now is None:
        return None
    back = 1 if m["which"].lower() == "last" else 0
    monday = now.date() - timedelta(days=now.weekday(), weeks=back)
    start = datetime.combine(monday + timedelta(days=5), time(), tz)
    return start, start + timedelta(days=2)


def _weekday(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    if now is None:
        return None
    # the latest such weekday strictly before today: "on Monday" asked on a Monday means last week's
    back = (now.weekday() - _WEEKDAYS[m["wd"].lower()] - 1) % 7 + 1
    return _day_span(now.date() - timedelta(days=back), tz)


def _ago(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    if now is None:
        return None
    raw = m["n"].lower()
    n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
    unit = m["unit"].lower()
    if unit == "day":
        return _day_span(now.date() - timedelta(days=n), tz)
    if unit == "week":
        return _week_span(now.date() - timedelta(weeks=n), tz)
    if unit == "month":
        return _month_span(*_shift_month(now.year, now.month, n), tz)
    return _year_span(now.year - n, tz) if now.year - n >= 1 else None


def _season_span(year: int, season: str, tz: tzinfo) -> _Span:
    first = _SEASONS[season]
    end_year, end_month = _shift_month(year, first, -3)
    return datetime(year, first, 1, tzinfo=tz), datetime(end_year, end_month, 1, tzinfo=tz)


def _season(m: re.Match[str], now: datetime | None, tz: tzinfo) -> _Span | None:
    season = m["season"].lower()
    which = (m["which"] or "").lower()
    if m["year"]:
        return _season_span(int(m["year"]), season, tz)
    if not which and season in ("fall", "spring"):
        before = m.string[: m.start()].split()
        if not before or before[-1].lower() not in ("in", "during", "the"):
            return None
    if now is None:
        return None
    # the latest such season begun by now (this / bare) or over by now (last)
    for year in (now.year, now.year - 1, now.year - 2):
        start, end = _season_span(year, season, tz)
        if (end <= now) if which == "last" else (start <= now):
            return start, end
    return None


# Most specific first: at equal start positions the earlier pattern wins.
_PATTERNS: Final[tuple[tuple[re.Pattern[str], _Handler], ...]] = tuple(
    (re.compile(rx, re.IGNORECASE), handler)
    for rx, handler in (
        (r"\b(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})\b", _iso_date),
        (r"\b(?P<y>\d{4})-(?P<mo>\d{1,2})\b(?!-)", _iso_month),
        (rf"\b{_MONTH}\s+{_DAY}\b(?:,?\s+{_YEAR}\b)?", _month_day),
        (rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR}\b)?", _month_day),
        (rf"\b{_MONTH}(?:\s+{_YEAR})?\b", _month_year),
        (rf"\b{_YEAR}\b", _year),
        (
            r"\b(?P<word>today|tonight|this (?:morning|afternoon|evening)|yesterday|last night)\b",
            _relative_day,
        ),
        (r"\b(?P<which>this|last)\s+weekend\b", _weekend),
        (r"\b(?P<which>this|last)\s+(?P<unit>week|month|year)\b", _this_last),
        (
            r"\b(?:on|last)\s+(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
            _weekday,
        ),
        (rf"\b{_NUM}\s+{_UNIT}\s+ago\b", _ago),
        (
            rf"\b(?:(?P<which>last|this)\s+)?(?:the\s+)?{_SEASON}\b(?:\s+(?:of\s+)?{_YEAR}\b)?",
            _season,
        ),
    )
)


def parse_time(query: str, now: datetime | None = None) -> TimeRef | None:
    """The leftmost time expression in ``query`` resolved against ``now``, or None."""
    tz = now.tzinfo if now is not None and now.tzinfo is not None else UTC
    found: list[tuple[int, int, re.Match[str], _Span]] = []
    for order, (pattern, handler) in enumerate(_PATTERNS):
        for m in pattern.finditer(query):
            try:
                span = handler(m, now, tz)
            except (ValueError, OverflowError):  # before year 1 or after 9999
                span = None
            if span is not None:
                found.append((m.start(), order, m, span))
                break  # the leftmost resolvable match of this pattern is enough
    if not found:
        return None
    _, _, m, (start, end) = min(found, key=lambda f: (f[0], f[1]))
    part = _PART.search(query, 0, m.start())
    if part is not None:
        start, end = _part_of(part["part"].lower(), start, end)
    rel = _RELATION_RE.search(query, 0, m.start())
    relation: Relation = _RELATIONS[rel["rel"].lower()] if rel else "during"
    return TimeRef(start, end, relation, m.group())


# "early April", "the end of March", "mid-2023": a part of the span
_PART = re.compile(
    r"\b(?P<part>early|late|mid|middle of|beginning of|start of|end of)[\s-]+(?:the\s+)?$", re.I
)
_EARLY: Final = frozenset({"early", "beginning of", "start of"})
_LATE: Final = frozenset({"late", "end of"})


def _part_of(part: str, start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """The part of ``[start, end)`` that ``part`` names, loosely as people say it: "early
    April" its first half, "late January" its second (the 16th on), "mid-2023" its middle
    half; a span shorter than a month stays whole. Whole days."""
    days = (end - start).days
    if days < 28:
        return start, end
    half, quarter = timedelta(days=days // 2), timedelta(days=days // 4)
    if part in _EARLY:
        return start, start + half
    if part in _LATE:
        return start + half, end
    return start + quarter, end - quarter
