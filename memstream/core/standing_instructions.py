"""Standing instructions: rules the user gave the assistant for a kind of request ("always
include version numbers when I ask about libraries") and stated preferences ("I prefer
e-books for their portability"), and which of them a query falls under.

Such a rule rarely shares words with the request it governs ("which libraries does this
project use?" does not say "version"), so ranking by similarity to the memory's whole text
leaves it far down (BEAM dev: ranks 40 to 150). Recall matches the query against the rule's
*condition* instead (what follows "when <user> asks about") and, when one applies, places
the best such rule among the first results (``consumers.recall``), so the agent sees the
rule with the request it governs. A preference is matched by what it is about ("e-books for
their portability" for "suggest some books for my trip") and placed after the rule, with a
higher floor: it has no condition, so a looser match would push it into every request on
its topic.

A question about what was said or done ("what did I mention...", "how many times did I...")
is a lookup, not a request a rule governs: it gets no rule.

Pure functions: the shell embeds the query and the conditions and passes the cosines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memstream.core.extract.cues import RANKING_VERBS

#: the rule extractor writes "Sam wants the assistant to always ... when Sam asks about ..."
_RULE: Final = re.compile(r"\bwants the assistant to (?:always|never)\b", re.IGNORECASE)
_CONDITION: Final = re.compile(
    r"\bwhen \S+ (?:asks?|is asking|wants?|needs?|requests?)(?: (?:about|for))?\s+(?P<cond>\S.*?)[.!]?$",
    re.IGNORECASE,
)
_LOOKUP: Final = re.compile(
    r"\b(?:did|have|had) (?:i|we)\b|\b(?:i|we) (?:mentioned|said|told|asked|brought up)\b"
    r"|^\s*(?:how many|how much|how long|in what order|list the order)\b",
    re.IGNORECASE,
)
#: a rule applies when the query and its condition are this similar (cosine, the retrieval
#: embedder). 0.2 admitted the rule for 8 of 10 requests it governs on BEAM dev; a request
#: often names its domain in other words ("the chance of drawing a red card" under
#: "probability concepts"), and 0.1 reaches more (turn-budgeted recall@10, BEAM dev 0.682 ->
#: 0.686, instruction following 0.75 -> 0.80; BEAM 500K dev 0.543 -> 0.544; own, own and
#: BEAM dev as haystacks unchanged; 0.0 the same as 0.1 at @10, lower at @5)
MIN_MATCH: Final = 0.1
#: the floor for a preference, matched by what it is about (BEAM dev: 0.2 to 0.3 the same,
#: preference following +0.05 and no other ability moved; the higher one kept)
PREFERENCE_MATCH: Final = 0.3
#: where the rule goes in the answer (a preference goes after it): after the two best results, so it costs them nothing
POSITION: Final = 2


@dataclass(frozen=True, slots=True)
class Applicable:
    memory_id: str
    condition: str
    match: float  # cosine of the query and the condition


def condition_of(text: str) -> str | None:
    """The request a standing rule governs ("software dependencies or libraries used"), or
    None when the text is not such a rule or names no condition."""
    if not _RULE.search(text):
        return None
    m = _CONDITION.search(text)
    return m.group("cond").strip() if m else None


_PREFERENCE: Final = re.compile(
    r"^\S+(?: \S+)? (?:prefers (?P<what>\S.*?)"
    # one thing ranked above another: "User prioritized battery life over brand prestige"
    r"|(?:" + RANKING_VERBS + r") (?P<ranked>\S.*? over \S.*?))[.!]?$"
)


def preference_of(text: str) -> str | None:
    """What a stated preference is about ("sneakers with a sleek, modern look"), or None."""
    m = _PREFERENCE.match(text)
    return (m.group("what") or m.group("ranked")) if m else None


def is_lookup(query: str) -> bool:
    """A question about what was said or done, which no rule governs."""
    return bool(_LOOKUP.search(query))


def best_applicable(
    rules: Sequence[tuple[str, str, float]], min_match: float = MIN_MATCH
) -> Applicable | None:
    """Of ``(memory_id, condition, cosine)``, the best match at or above ``min_match``;
    ties go to the first given (the store's order), so the choice is deterministic."""
    best: Applicable | None = None
    for memory_id, condition, match in rules:
        if match >= min_match and (best is None or match > best.match):
            best = Applicable(memory_id, condition, match)
    return best
