"""Questions that ask for a profile slot: where someone lives, where or as what they work,
when their birthday is, where they are from.

"Where does Lena live now?" shares no word with "Lena moved into a two-bedroom in Ballard,
Seattle", but the write path put that memory in the ``location`` slot (``core.extract.
slots``), as it puts "got a job at ..." in ``employer``. When a question asks for one of
these slots (``asked_slots``), recall lifts the candidates that hold it ``LIFT`` of the way
to a score of 1 (``core.advice.lifted``), so the memory that states the value comes up
whatever words it used; validity and supersession still decide between old and new values.

Chosen on the development data (turn-budgeted recall@10): the own set 0.744 -> 0.750 at a
lift of 0.3, 0.5 and 0.7 alike (@5 0.607 -> 0.612 / 0.620 / 0.620; temporal questions
0.830 -> 0.848: "Where does Lena live now?" finds the move), BEAM dev unchanged (three of its
questions name a slot). Few memories hold these slots under the rule extractor (3 locations,
5 jobs on the own set), so the effect is as large as the extractor's coverage. 0.7 since
the third 2026-11-29 session: tried as a new user would, "where do I work?" ranked "work has
been busy lately" above "Maya works at Google" at 0.5; own, BEAM dev and the own haystack
unchanged at @10 (0.844 / 0.686 / 0.778). 0.9 since the fourth: with "Ran the Riverfront Half
in 1:58, my first time ..." read as Lena's own news, "Lena ran ..., Lena's first time ..."
says her name twice and outranked her move to Ballard for "where does Lena live now?" at
0.7; own, BEAM dev and the own haystack unchanged at @10 at 0.85 and 0.9 (own haystack @20
0.871 -> 0.877), but ``python -m bench learning``'s runs without learning and without
forgetting each lose a question (held-out 0.831 -> 0.820, a year on 0.837 -> 0.831) from
0.85 up; at 0.8 those are as before and the Ballard move wins by 0.003 only.

A holder lifted to the top also tells the recall gate something is known ("what was my
profession?" shares no word with "Maya retired from teaching in 2020": it was withheld as
"nothing relevant" before).

Pure: patterns over the question.
"""

from __future__ import annotations

import re
from typing import Final

LIFT: Final = 0.9

_ASKS: Final[tuple[tuple[frozenset[str], re.Pattern[str]], ...]] = (
    (
        frozenset({"location"}),
        re.compile(
            r"\bwhere (?:does|do|did|is|was|are|were|has|have) (?:\w+(?:'s)? ){1,3}"
            r"(?:live|living|lives|lived|based|located|staying|stay|moved?|settled?)\b"
            r"|\b(?:which|what) (?:city|town|country|state|neighbou?rhood|place)\b"
            r".*\b(?:live|living|lives|lived|based|located|move|moved)\b"
            r"|\bwhere .*\bhome\b",
            re.IGNORECASE,
        ),
    ),
    (
        frozenset({"employer", "job_title"}),
        re.compile(
            r"\b(?:do|does|did) (?:\w+(?:'s)? ){1,3}(?:do )?for (?:a )?(?:living|work)\b"
            r"|\bwhere (?:does|do|did|is|was) (?:\w+(?:'s)? ){1,3}(?:work|working|employed)\b"
            r"|\b(?:job|occupation|profession|employer|role|position|title)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "where am I from?" for "I grew up in a small town in Ohio"
        frozenset({"origin"}),
        re.compile(
            r"\bwhere (?:am|is|are|was|were|do|does|did) (?:\w+(?:'s)? ){1,3}"
            r"(?:(?:originally )?from|grow up|grew up|come from|comes from)\b(?=\s*[?.!]*\s*$)"
            r"|\bhome ?town\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "When is Mia's birthday?" for "Mia turns 7 on March 3rd"; "how old is Mia?" too
        frozenset({"birthday", "age"}),
        re.compile(
            r"\b(?:when|what (?:day|date|month))\b[^?]*\bbirthday\b"
            r"|\bwhen (?:was|were|is|are) (?:\w+(?:'s)? ){1,3}born\b|\bhow old\b",
            re.IGNORECASE,
        ),
    ),
)


def asked_slots(query: str) -> frozenset[str]:
    """The profile slots the question asks for (empty when none)."""
    out: set[str] = set()
    for slots, rx in _ASKS:
        if rx.search(query):
            out |= slots
    return frozenset(out)
