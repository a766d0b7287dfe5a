"""What a speaker says they are in passing: "As a nurse, I work nights, what should I eat?",
"... crucial for my growth as a 44-year-old colour technologist from Port Michael".

The sentence's own claim keeps its words ("I often work night shifts"), and the role was
lost with the opening phrase or inside a question; here it becomes a claim of its own ("I
am a nurse"), which the rules turn into "Caroline is a nurse" as if said outright.

Two shapes, both about the speaker only:
- an opening "As a(n) <role>, I ..." (or "my", "me"): the role's last word must name a
  person by what they do or are (a job, an identity, a word ending like one: -er, -ist,
  -ian ...), never a circumstance ("As a result, I"), a time of life ("As a kid, I", the
  past) or a favour ("As a reminder, I");
- "as a(n) <N>-year-old <role> [from <Place>]" anywhere after the speaker spoke of
  themselves (I, my, me) in the sentence, the role's last word as above ("my phone as a
  10-year-old backup" is no role).
"""

from __future__ import annotations

import re
from typing import Final

from memstream.core.answer_types import JOBS
from memstream.core.extract.gates import wordset

_OPENING: Final = re.compile(r"^\s*as (?P<a>an?) (?P<rest>[^,]{2,60}),\s*(?P<next>\S+)", re.I)
_AGED: Final = re.compile(r"\bas (?P<a>an?) (?P<rest>\d{1,3}-year-old\b.*)", re.I)
_SPEAKER: Final = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|myself)\b")
_FIRST: Final = wordset("i i'm i've i'd i'll my me")

# where a role's words end ("a nurse who ...", "a designer from Lisbon and ...")
_STOP: Final = wordset(
    "from who whom that which with and or but so because in at to for of on while since "
    "when where living working looking trying hoping who's i i'm my"
)
# a role's last word that names a person by what they do or are
_PEOPLE: Final = wordset(
    JOBS + " mom mum dad mother father parent woman man person vegan vegetarian veteran "
    "immigrant freelancer introvert extrovert beginner newbie novice owner founder nomad lead "
    "intern resident native citizen grad graduate athlete runner dancer singer gamer reader "
    "fan lover"
)
_ENDINGS: Final = ("er", "or", "ist", "ian", "ant", "ent", "eer", "ster")
# words that end like a role and name none, and times of life (said of the past: "As a
# teenager, I ..."); other words ending unlike a role ("As a result, I") are none anyway
_NOT_PEOPLE: Final = wordset(
    "matter reminder favor number order answer letter center factor summer winter "
    "component element instrument document agent moment comment percent teenager youngster"
)


def _role(words: list[str], aged: bool) -> list[str]:
    """The role's words from the start of ``words``: up to a stop word or punctuation, at
    most six; none unless its last word names a person (after an age, one more than it)."""
    out: list[str] = []
    for word in words[:6]:
        bare = word.strip(".,;:!?\"'()")
        if not bare or bare.lower() in _STOP:
            break
        out.append(bare)
        if bare != word:  # punctuation ended it
            break
    if not out or (aged and len(out) < 2):
        return []
    last = out[-1].lower()
    if last in _NOT_PEOPLE or not last.isalpha():
        return []
    if last in _PEOPLE or last.endswith(_ENDINGS):
        return out
    return []


def _place(words: list[str]) -> str:
    """ "from Port Michael": the capitalised words after "from"."""
    if not words or words[0].lower() != "from":
        return ""
    place: list[str] = []
    for word in words[1:5]:
        bare = word.strip(".,;:!?\"'()")
        if not bare[:1].isupper():
            break
        place.append(bare)
        if bare != word:
            break
    return f" from {' '.join(place)}" if place else ""


def self_descriptions(sentence: str) -> list[str]:
    """First-person claims of what the speaker is ("I am a nurse"), said in passing."""
    out: list[str] = []
    opening = _OPENING.match(sentence)
    if opening and opening.group("next").lower().strip(".,;:!?") in _FIRST:
        words = opening.group("rest").split()
        lowered = [w.lower() for w in words]
        # "a mother of two": the person is named before "of"
        head = words[: lowered.index("of")] if "of" in lowered else words
        role = _role(head, aged=False)
        if role and len(role) == len(head) and len(words) <= 6:
            out.append(f"I am {opening.group('a').lower()} {' '.join(words)}")
    aged = _AGED.search(sentence)
    if aged and _SPEAKER.search(sentence[: aged.start()]):
        words = aged.group("rest").split()
        role = _role(words, aged=True)
        if role:
            out.append(
                f"I am {aged.group('a').lower()} {' '.join(role)}{_place(words[len(role) :])}"
            )
    return out
