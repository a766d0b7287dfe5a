"""Whose fact a question asks for: "where do I live?" is about the speaker, "how old is my
mom?" about the speaker's mother, "what does Amara's partner do?" about Amara's partner.

Recall matched such questions by words, and a relative's memory says the same words:
"Maya's sister lives in Berlin" ranked above "Maya lives in Lisbon" for "where do I live?"
(both hold the location slot, both were lifted), the neighbour's dog above the speaker's
cat for "what pet do I have?". A memory whose text opens with someone's relative ("Maya's
sister ...") is about that relative; when the question asks about another person (the
speaker, or another relative), recall scales its score by ``FACTOR`` (unless the memory
says a name the question says: "... with Douglas" and "Maya's partner Douglas ...") and
does not lift it as the holder of the slot asked for. Memories about anyone else ("Tom
lives in Paris") are left as they are: whose they are is not known. The speaker's own
memories are not scaled down for a question about a relative: the speaker tells the
relative's story in their own words ("I'm worried about meeting my new mentor"), and
scaling those that do not name the relative cost the own set 0.006 of recall@10 and BEAM
dev 0.003. "How old is my mom?" is answered by the slot instead: "Maya's mom is 61 and
lives in Porto" holds the mother's age (``core.extract.slots``) and only the holder asked
about is lifted, so "Maya is 34 years old" comes after it. Own set @5 0.721 -> 0.727, own haystack @5 0.648 ->
0.654, BEAM dev unchanged (``FACTOR`` 0.5 to 0.9 alike).

Pure: patterns over the question and the memory's text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from memstream.core.relations import owner_of

FACTOR: Final = 0.75

# people one stands in a relation to, and the one name each is compared by
_KIN: Final[dict[str, str]] = {
    "wife": "partner",
    "husband": "partner",
    "spouse": "partner",
    "partner": "partner",
    "boyfriend": "partner",
    "girlfriend": "partner",
    "fiance": "partner",
    "fiancé": "partner",
    "fiancee": "partner",
    "fiancée": "partner",
    "sister": "sister",
    "brother": "brother",
    "mother": "mother",
    "mom": "mother",
    "mum": "mother",
    "father": "father",
    "dad": "father",
    "son": "child",
    "daughter": "child",
    "kid": "child",
    "kids": "child",
    "child": "child",
    "children": "child",
    "baby": "child",
    "parents": "parents",
    "grandma": "grandmother",
    "grandmother": "grandmother",
    "grandpa": "grandfather",
    "grandfather": "grandfather",
    "aunt": "aunt",
    "uncle": "uncle",
    "cousin": "cousin",
    "nephew": "nephew",
    "niece": "niece",
    "friend": "friend",
    "best friend": "friend",
    "colleague": "colleague",
    "coworker": "colleague",
    "boss": "boss",
    "manager": "boss",
    "mentor": "mentor",
    "roommate": "roommate",
    "neighbour": "neighbour",
    "neighbor": "neighbour",
}
_REL = "|".join(sorted(map(re.escape, _KIN), key=len, reverse=True))
_ADJ = r"(?:(?:older|younger|little|big|baby|best|new|old|late|ex-?|step-?)\s?)?"
# "Maya's sister ...", "Maya's friend Tom ..." at the start of a memory
_OPENS_WITH_KIN = re.compile(rf"^[A-Z][\w.-]*(?: [A-Z][\w.-]*)?'s {_ADJ}(?P<rel>{_REL})\b")
_MY_KIN = re.compile(rf"\b(?:my|our) {_ADJ}(?P<rel>{_REL})\b", re.IGNORECASE)
_NAMED_KIN = re.compile(rf"\b(?-i:[A-Z])[\w.-]*'s {_ADJ}(?P<rel>{_REL})\b", re.IGNORECASE)
_SELF = re.compile(r"\b(?:I|me|myself)\b|\b(?:my|mine)\b(?! (?:own )?(?:" + _REL + r")\b)")


@dataclass(frozen=True, slots=True)
class Asked:
    """The person a question asks about: a relative (``kin``, compared by its one name)
    or, with ``kin`` None, the speaker or the person it names."""

    kin: str | None


def asked_about(query: str) -> Asked | None:
    """Whose fact ``query`` asks for; None when it does not say (no "I", "my ...", "X's
    ...")."""
    m = _MY_KIN.search(query) or _NAMED_KIN.search(query)
    if m:
        return Asked(_KIN[m.group("rel").casefold()])
    if _SELF.search(query):
        return Asked(None)
    return None


@functools.lru_cache(maxsize=1 << 15)  # the same memories' texts, recall after recall
def about_kin(text: str) -> str | None:
    """The relative a memory is about, by how it opens ("Maya's sister lives ..." ->
    "sister"), or None."""
    m = _OPENS_WITH_KIN.match(text)
    return _KIN[m.group("rel").casefold()] if m else None


def holds_for(asked: Asked | None, text: str) -> bool:
    """Whether a memory with ``text`` can answer for the person ``asked`` about: a
    relative's memory for that relative, any other for the speaker (or anyone)."""
    if asked is None:
        return True
    return about_kin(text) == asked.kin


def about_named(text: str, subject: str | None, names: Collection[str]) -> bool:
    """Whether a memory can hold a slot for one of the people a question ``names`` (folded):
    it says the name, or its subject is theirs. No names: anyone's. "Does Ana like her
    job?" is not answered by "Noor got a job teaching music", though both hold a job."""
    if not names:
        return True
    folded = text.casefold()
    return owner_of(subject) in names or any(n in folded for n in names)


def factor(asked: Asked | None, text: str, names: Sequence[str] = ()) -> float:
    """The score factor for a memory with ``text`` when the question asks about
    ``asked``: ``FACTOR`` for a relative's memory when it asks about someone else, unless
    the memory says a name the question says ("... with Douglas" and "Maya's partner
    Douglas ...")."""
    if asked is None:
        return 1.0
    kin = about_kin(text)
    if kin == asked.kin or any(n in text for n in names):
        return 1.0
    # the speaker's own memories stay as they are for a question about a relative (above)
    return 1.0 if kin is None else FACTOR
