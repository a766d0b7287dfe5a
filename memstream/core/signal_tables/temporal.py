"""Temporal words: relative days and periods, weekdays, months, deadlines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from memstream.core.calendar_words import MONTH_NAMES, WEEKDAYS

# "may" and "march" are also verbs and abbreviations are too short to trust alone: these only
# appear in the table followed by a day number ("May 5", "mar 3rd").
AMBIGUOUS_MONTHS: Final[tuple[str, ...]] = (
    "may",
    "march",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
)
# month names that are never another word, lower case
UNAMBIGUOUS_MONTHS: Final[tuple[str, ...]] = tuple(
    m.lower() for m in MONTH_NAMES if m.lower() not in AMBIGUOUS_MONTHS
)
_NUMBER_WORDS = (
    "a",
    "an",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "a few",
    "a couple of",
    "a couple",
    "several",
    "twenty",
    "thirty",
)
_UNITS = (
    "minute",
    "minutes",
    "hour",
    "hours",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
)
_PERIODS = (
    "week",
    "month",
    "year",
    "weekend",
    "quarter",
    "sprint",
    "night",
    "morning",
    "evening",
    "season",
    "semester",
    *WEEKDAYS,
)


def _temporal() -> dict[str, tuple[str, ...]]:
    relative = tuple(
        f"{p} {u}" for p in ("next", "last", "this", "coming", "past") for u in _PERIODS
    )
    ahead = tuple(f"in {n} {u}" for n in _NUMBER_WORDS for u in _UNITS)
    ago = tuple(f"{n} {u} ago" for n in _NUMBER_WORDS if n not in ("a", "an") for u in _UNITS)
    return {
        "relative_day": (
            "yesterday",
            "today",
            "tonight",
            "tomorrow",
            "this morning",
            "this afternoon",
            "this evening",
            "last night",
            "the day after tomorrow",
            "the day before yesterday",
            "later today",
            "earlier today",
            "tomorrow morning",
            "tomorrow night",
            "yesterday morning",
        ),
        "relative_period": (
            *relative,
            "end of day",
            "end of the day",
            "end of the week",
            "end of the month",
            "end of the year",
            "end of the quarter",
            "eod",
            "eow",
            "the other day",
            "recently",
            "soon",
            "a week ago",
            "a month ago",
            "a year ago",
            "a day ago",
            "an hour ago",
        ),
        "in_n_units": ahead,
        "ago": ago,
        "weekday": WEEKDAYS,
        "month": UNAMBIGUOUS_MONTHS,
        "recurring": (
            *(
                f"every {u}"
                for u in ("day", "week", "month", "year", "morning", "night", *WEEKDAYS)
            ),
            "daily",
            "weekly",
            "monthly",
            "yearly",
            "annually",
        ),
    }


TEMPORAL_PHRASES: Final[Mapping[str, tuple[str, ...]]] = _temporal()

# "by Friday", "before the end of the week": a temporal marker that is also a deadline.
DEADLINE_PREFIXES: Final[tuple[str, ...]] = ("by", "before", "until", "due", "no later than")
DEADLINE_TARGETS: Final[Mapping[str, str]] = {
    **{d: "weekday" for d in WEEKDAYS},
    **{
        t: "relative_day"
        for t in (
            "today",
            "tonight",
            "tomorrow",
            "tomorrow morning",
            "tomorrow night",
            "end of day",
            "end of the day",
            "the end of the day",
            "noon",
            "midnight",
        )
    },
    **{f"{p} {u}": "relative_period" for p in ("next", "this") for u in _PERIODS},
    **{
        t: "relative_period"
        for t in (
            "the end of the week",
            "end of the week",
            "the end of the month",
            "end of the month",
            "the end of the year",
            "end of the year",
            "the end of the quarter",
            "end of the quarter",
            "eod",
            "eow",
        )
    },
}
