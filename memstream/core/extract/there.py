""" "There" at a claim's end names the place said just before it: "We're driving to Halifax
on October 20. Noor got a job teaching music at a school there." is "... at a school in
Halifax".

Alone, "Noor got a job teaching music at a school there" answers no question about
Halifax (on the own set "where will Amara and Noor work after their move?" ranked it 47th).
Only a place said in the claim's turn or the two before it (the question between and the
speaker's turn before that: "We were going to drive to Tucson." - "Does that change your
plans?" - "Ruth's sister has a place there."), the nearest one; "over there", "get there",
"be there" and "there is" are left as said. Pure: the session's sentences, nothing else.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from memstream.core.extract.gates import wordset
from memstream.core.extract.mentions import mentions

if TYPE_CHECKING:
    from memstream.core.extract.coreference import Session, Where

#: sentences back a "there" may reach
SENTENCES_BACK: Final = 6
#: turns back: its own turn, the one it answers, the speaker's turn before that
TURNS_BACK: Final = 2

_THERE = re.compile(
    r"(?<=\w )(?P<prev>[\w'’]+) there(?P<tail>\s+(?:too|as well|now|soon|someday|again))?"
    r"\s*[.!]*$",
    re.I,
)
# "over there", "get there", "be there", "almost there": no place named by it
_NOT_AFTER = wordset("""over out in up down here get got gets getting be been being is are was
    were am 's almost still all right hi hey hello from went go going goes come came coming""")
# a move toward it: "to", else "in"
_TOWARD = wordset("""moved move moving drove drive driving flew fly flying travelled traveled
    travel travelling traveling headed heading relocated relocate walked walk""")


def there_named(body: str, session: Session, where: Where) -> str:
    """``body`` with a closing "there" turned into the place said before it, if any."""
    m = _THERE.search(body)
    if m is None or m.group("prev").lower() in _NOT_AFTER:
        return body
    place = _nearest_place(session, where)
    if place is None:
        return body
    prep = "to" if m.group("prev").lower() in _TOWARD else "in"
    return f"{body[: m.end('prev')]} {prep} {place}{m.group('tail') or ''}"


def _nearest_place(session: Session, where: Where) -> str | None:
    known, seen = session.known, session.seen_names()
    if where.before.strip():
        found = [x for x in mentions(where.before, known, seen) if x.kind == "place"]
        if found:
            return max(found, key=lambda x: x.start).text
    turn = session.said[where.index].turn
    for i in range(where.index - 1, max(-1, where.index - 1 - SENTENCES_BACK), -1):
        said = session.said[i]
        if turn - said.turn > TURNS_BACK:
            break
        found = [x for x in session.mentions_of(i) if x.kind == "place"]
        if found:
            return max(found, key=lambda x: x.start).text
    return None
