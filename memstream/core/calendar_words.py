"""English calendar and number words, shared by the scanner, the rule extractor and the
query-time parser (each adds the few phrasings only it reads)."""

from __future__ import annotations

from typing import Final

MONTH_NAMES: Final[tuple[str, ...]] = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

#: lower-case full names and three-letter abbreviations (and "sept") -> month number
MONTH_NUMBERS: Final[dict[str, int]] = {
    **{m.lower(): i + 1 for i, m in enumerate(MONTH_NAMES)},
    **{m.lower()[:3]: i + 1 for i, m in enumerate(MONTH_NAMES)},
    "sept": 9,
}

WEEKDAYS: Final[tuple[str, ...]] = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)

NUMBER_WORDS: Final[dict[str, int]] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
