"""A question about a group asks about its members: "Kim's family" is her sister, her
parents, her husband; "Leo's kids" his daughter and his son.

Memories name the member ("Kim's sister Ana is visiting from Porto"), so "tell me about
Kim's family" shared no word with them but "Kim", and a memory that said "Kim" twice ranked
first (tried as a new user would). Recall searches once more with the group word replaced
by its members' words, keeping each memory's best match of the searches
(``core.fusion.fuse_parts``), as it does for a relation named by a name
(``core.relation_alias``).

Pure: a pattern over the question.
"""

from __future__ import annotations

import re
from typing import Final

_FAMILY: Final = (
    "husband wife partner mother mom father dad parents sister brother son daughter kids children"
)
_MEMBERS: Final[dict[str, str]] = {
    "family": _FAMILY,
    "families": _FAMILY,
    "relatives": "mother father sister brother aunt uncle cousin grandmother grandfather "
    "niece nephew",
    "kids": "son daughter kid child baby",
    "children": "son daughter kid child baby",
    "parents": "mother mom father dad",
    "siblings": "sister brother",
    "grandparents": "grandmother grandma grandfather grandpa",
    "in-laws": "mother-in-law father-in-law sister-in-law brother-in-law",
    "pets": "dog cat puppy kitten bird rabbit hamster fish tortoise turtle horse",
}
_GROUP: Final = re.compile(r"\b(" + "|".join(map(re.escape, _MEMBERS)) + r")\b", re.I)


def members_query(query: str) -> str | None:
    """``query`` with each group word replaced by its members' words, or None when it
    names no group."""
    if _GROUP.search(query) is None:
        return None
    return _GROUP.sub(lambda m: _MEMBERS[m.group(1).casefold()], query)
