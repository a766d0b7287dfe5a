"""Who "Rosa's husband" is: resolve a relation the question names to the person's name.

"What does Rosa's husband do for a living?" shares only "Rosa" with the answer, "Marcus
works night shifts in the ER as a doctor": the link is another memory, "Rosa's husband
Marcus". Recall finds that memory with the question itself (it matches "Rosa's husband"
word for word), reads the name from it (``aliases``), and searches once more with the
relation replaced by the name ("What does Marcus do for a living?"), keeping each memory's
best match of the two (``core.fusion.fuse_parts``). A relation the question names with a
pronoun ("her son", "my partner") resolves when the candidates name one person for it.

Pure: patterns over the question and the candidates' texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

_RELATIONS: Final = (
    "husband|wife|partner|spouse|fianc[eé]e?|boyfriend|girlfriend|ex"
    "|brother|sister|sibling|twin|mom|mum|mother|dad|father|parents?|son|daughter|kids?|child"
    "|baby|grand(?:ma|pa|mother|father|son|daughter)|aunt|uncle|cousin|niece|nephew"
    "|in-laws?|mother-in-law|father-in-law"
    "|friend|best friend|roommate|flatmate|neighbou?r|boss|manager|coworker|co-worker"
    "|colleague|mentor|advisor|adviser|supervisor|teacher|coach|tutor|therapist|doctor"
    "|dentist|landlord|dog|cat|puppy|kitten|pet|horse|bird|rabbit|hamster"
)
_OWNER = r"(?P<owner>[A-Z][\w-]*)(?:'s|’s)"
_MENTION = re.compile(
    rf"\b(?:{_OWNER}|(?P<pronoun>my|her|his|their|our))\s+(?P<relation>{_RELATIONS})\b"
)
# "Rosa's husband Marcus", "Lena's little sister Ines", "Jules's dog, Comet",
# "Rosa's son is called Eli"
_ALIAS = re.compile(
    rf"\b{_OWNER}\s+(?:[a-z]+\s+)?(?P<relation>{_RELATIONS})"
    r"(?:,\s*|\s+(?:is |was )?(?:named |called )?)(?P<name>[A-Z][a-z]+)\b"
)
# capitalised words that open a clause rather than name someone
_NOT_NAMES: Final = frozenset(
    [
        "The",
        "A",
        "An",
        "And",
        "But",
        "So",
        "Or",
        "If",
        "When",
        "While",
        "Because",
        "Then",
        "That",
        "This",
        "It",
        "He",
        "She",
        "They",
        "We",
        "I",
        "You",
        "Who",
        "What",
        "Where",
        "Why",
        "How",
        "Is",
        "Was",
        "Are",
        "Were",
        "Has",
        "Had",
        "Have",
        "Will",
        "Would",
        "Can",
        "Could",
        "Should",
        "Also",
        "Just",
        "Still",
        "Now",
        "Today",
        "Yesterday",
        "Tomorrow",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ]
)
MAX_REWRITES: Final = 2


@dataclass(frozen=True, slots=True)
class Alias:
    owner: str
    relation: str
    name: str


@dataclass(frozen=True, slots=True)
class Rewrite:
    mention: str  # the words of the question replaced ("Rosa's husband")
    name: str  # the person they name ("Marcus")
    query: str  # the question with the name in their place


def names_relation(query: str) -> bool:
    """The question names someone by relation ("Rosa's husband", "her son"): only then
    are the candidates' texts read for aliases (a regex over every hit is not free)."""
    return _MENTION.search(query) is not None


def aliases(texts: Iterable[str]) -> list[Alias]:
    """Every "<owner>'s <relation> <Name>" the texts state, in order, de-duplicated."""
    out: dict[tuple[str, str, str], Alias] = {}
    for text in texts:
        for m in _ALIAS.finditer(text):
            name = m.group("name")
            if name in _NOT_NAMES or name == m.group("owner"):
                continue
            alias = Alias(m.group("owner"), m.group("relation").lower(), name)
            out.setdefault((alias.owner.casefold(), alias.relation, name), alias)
    return list(out.values())


def rewrites(query: str, known: Iterable[Alias]) -> list[Rewrite]:
    """The question with each relation it names replaced by the one name ``known`` gives
    for it (an owner's relation: that owner's; a pronoun's: the only name for the
    relation). A name the question already holds needs no rewrite."""
    by_relation: dict[str, dict[str, set[str]]] = {}
    for a in known:
        by_relation.setdefault(a.relation, {}).setdefault(a.owner.casefold(), set()).add(a.name)
    out: list[Rewrite] = []
    for m in _MENTION.finditer(query):
        owners = by_relation.get(m.group("relation").lower(), {})
        if m.group("owner"):
            names = owners.get(m.group("owner").casefold(), set())
        else:
            names = set().union(*owners.values()) if owners else set()
        if len(names) != 1:
            continue  # unknown or ambiguous
        name = next(iter(names))
        if re.search(rf"\b{re.escape(name)}\b", query):
            continue
        rewritten = query[: m.start()] + name + query[m.end() :]
        out.append(Rewrite(m.group(0), name, rewritten))
        if len(out) == MAX_REWRITES:
            break
    return out
