"""The one regex the scanner runs: the phrase trie plus names, all-caps words and numbers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from memstream.core.signal_tables.hits import HITS
from memstream.core.signal_tables.names import NOT_NAMES


def _trie_regex(phrases: Iterable[str], *, upper_extra: str = "") -> str:
    """One regex alternation shaped like a character trie, longest match first.

    A plain ``a|b|c`` alternation makes ``re`` try every branch at every position; the trie
    shares prefixes, so a position costs one first-character check per top-level branch (``re``
    checks a branch's leading literal inline) plus the walk down the matching branch. Branches
    for a non-lower-case first character sit behind one ``(?=[^a-z])`` guard: most words start
    lower-case and skip those ~30 checks for the price of one assertion (~17% faster here).
    ``upper_extra`` joins that guarded group.
    """
    root: dict[str, Any] = {}
    for phrase in phrases:
        node = root
        for ch in phrase:
            node = node.setdefault(ch, {})
        node[""] = {}
    escaped: dict[str, str] = {}

    def render(node: dict[str, Any], last: str) -> str:
        alts = []
        for ch in sorted(k for k in node if k):
            esc = escaped.get(ch)
            if esc is None:
                esc = escaped[ch] = re.escape(ch)
            alts.append(esc + render(node[ch], ch))
        if "" in node:
            # a phrase ending in a word character must end at a word boundary
            alts.append(r"(?![\w'])" if (last.isalnum() or last == "_") else "")
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    def branches(first: Iterable[str]) -> list[str]:
        return [escaped.setdefault(ch, re.escape(ch)) + render(root[ch], ch) for ch in first]

    lower = branches(k for k in sorted(root) if k and k.islower())
    other = branches(k for k in sorted(root) if k and not k.islower())
    if upper_extra:
        other.append(upper_extra)
    return "|".join(lower) + "|(?=[^a-z])(?:" + "|".join(other) + ")"


# Phrases start after a space: the scanner prepends one and puts one after each newline, tab,
# double quote and opening parenthesis. A literal first character lets ``re`` jump between
# candidate positions with its memchr-like prefix search, ~20% faster than a separator class;
# and since phrases only contain single plain spaces, no match can span a separator.
LEX_SEPARATORS: Final[tuple[str, ...]] = ("\n", '"', "(", "\t")
# After the trie, in the same pass (a word the trie did not claim): a capitalised word after a
# lower-case word or comma, so not a sentence start, possibly several ("Ada Lovelace"); or an
# all-caps word of 3+ characters (acronym or shouting, told apart with str.isupper). Their
# leading [A-Z] is checked inline by ``re`` like the trie's leading letters.
_NAME = r"[A-Z](?<=[a-z0-9,;:] [A-Z])[a-z][A-Za-z0-9]*(?:-[A-Za-z]+)?(?: [A-Z][a-z][A-Za-z0-9]*)*"
_CAPS = r"[A-Z][A-Z0-9]{2,}(?:'[A-Z]+)?(?![\w'])"
# ... or a number: read whole when it is a date, time or duration (inline (?i:) for the words),
# otherwise only its leading digit run (then str.isdigit says "plain number").
_MONTH_ALT = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])"
)
TIME_UNITS: Final[frozenset[str]] = frozenset(
    {
        "second",
        "seconds",
        "sec",
        "secs",
        "minute",
        "minutes",
        "min",
        "mins",
        "hour",
        "hours",
        "hr",
        "hrs",
        "day",
        "days",
        "week",
        "weeks",
        "wk",
        "wks",
        "month",
        "months",
        "year",
        "years",
        "yr",
        "yrs",
    }
)
_DIGITS = (
    r"[0-9](?:"
    r"[0-9]{3}-[0-9]{2}-[0-9]{2}(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?)?"  # 2024-06-12
    r"|[0-9]?/[0-9]{1,2}/(?:[0-9]{4}|[0-9]{2})(?![0-9])"  # 6/12/2024
    r"|[0-9]?(?::[0-9]{2})? ?(?i:[ap]\.?m\.?)(?![A-Za-z])"  # 5pm, 10:30 am
    r"|[0-9]?:[0-9]{2}(?![0-9])"  # 10:30
    # (possessive *+: a long digit run is not re-read digit by digit when no unit follows)
    r"|[0-9]*+ ?(?i:" + "|".join(sorted(TIME_UNITS, key=len, reverse=True)) + r")(?![A-Za-z])"
    r"(?: (?i:ago)(?![A-Za-z]))?"  # 3 days, 2 weeks ago
    r"|[0-9]?(?i:st|nd|rd|th)?(?: (?i:of))? (?i:" + _MONTH_ALT + ")"  # 5 May, 5th of may
    r"|[0-9]*+)"  # anything else: the leading digit run
)
LEX_RE: Final[re.Pattern[str]] = re.compile(
    " (" + _trie_regex(HITS, upper_extra=_NAME + "|" + _CAPS + "|" + _DIGITS) + ")"
)

NOT_NAMES_CAPITALISED: Final[frozenset[str]] = frozenset(w.capitalize() for w in NOT_NAMES)

# Run only after a trigger word: the precise prompt-injection phrasings. Deliberately narrow
