"""A state said again with a change: "my new email is maya@new.io" after "my email is
maya@old.com", "I left the chess club" after "I'm a member of the chess club", "turns out
I'm not allergic to penicillin after all".

No slot holds an email address, a club or an allergy, and the change names no replaced
value the way "instead of X" does (``core.replacement``), so both memories stayed active
and the old one, which matched the question's words as well, kept answering first. This
rule writes a ``supersedes`` edge (rule ``restatement``) from a memory that says a change
("now", "new", "no longer", "after all", "left", "finished" ...) to the latest earlier
memory of the same speaker (or about the thing the change names: "Standup moved to 10:15")
that states what it is about: a short statement (at most ``MAX_OLD_WORDS`` content words;
what it is about is its words but whose it is, so "Maya's cat's name is Mochi" is about the
cat) half of whose words (``SHARE``) the change says again, one of them in the clause saying
the change, or whose attribute the change names ("my gym is ..." after "my new gym", or
"joined a climbing gym ... instead"). The change is short too (``MAX_NEW_WORDS``): a long
memory tells a story, and on BEAM's chatty memories ("User is kinda worried about ... now
that ...") a looser rule wrote 57 edges on the development split, most of them wrong, and
cost 0.011 of its recall@10; as written it writes 12 there and 2 on the own set, and
neither set's recall moves. Tried as a new user would on wordings written for the purpose
(scripts kept out of the project), with the other rules of ``core.relation_plan``: 14 of
15 changes answer first on each of two sets (2 and 1 before these rules), 11 of 15 on a
fourth written after most of them (8 at its first run). The old memory stays active, the
history; recall puts the change right before it (``core.replacement.current_first``).

Pure: proposals from the new memory's text and the earlier memories' texts.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import Final

from memstream.core.calendar_words import MONTH_NAMES, WEEKDAYS
from memstream.core.relations import Known, NewMemory, Proposal, content_words, owner_of

RULE: Final = "restatement"
CONFIDENCE: Final = 0.6
#: the earlier memories one change supersedes (the latest)
TARGETS: Final = 1
#: an earlier memory of more content words than this says more than one state
MAX_OLD_WORDS: Final = 6
#: a change of more content words than this tells a story, not a new state
MAX_NEW_WORDS: Final = 8
#: of the earlier memory's words, the share the change must say again
SHARE: Final = 0.5

_CUES = re.compile(
    # "now that ..." gives a reason, not a change; "new" counts where it names the topic
    # (``_new_topic``)
    r"\b(?:now(?! that\b)|no longer|(?:not|n't)\b[^.;]*\banymore|any ?more|after all|turns? out|"
    r"these days|nowadays|instead|switched|changed|upgraded|resigned|quit|left|moved|"
    r"migrated|relocated|finished|closed(?: down)?|renamed|promoted|got a raise|"
    r"(?<!get )(?<!got )(?<!getting )started|stopped|ended|broke up)\b",
    re.IGNORECASE,
)
# words that say a state or a change of it, not what it is about
_NOT_TOPIC: Final = content_words(
    "now new no longer anymore after all turns out these days nowadays instead switched "
    "changed upgraded resigned quit left moved migrated relocated finished closed down renamed "
    "promoted got raise started stopped ended broke up is are was were be been has have had "
    "get gets got go goes went use uses used make makes made want wants need needs like likes "
    "work works worked working "
    "really actually just also still honestly since so others and asked said "
    # what a speaker says around anything: attitudes, not states
    "kinda sort worried worry stressed excited sure unsure not trying try tries thinking think "
    "thinks wondering wonder considering consider looking hoping hope planning plan decide "
    "deciding figure know knows learn learning help wants wanted needs needed would could "
    "should will able yes yeah ok okay "
    # when, not what: "moved into the house in June" is not about "move in June"
    "day days week weeks month months year years today tomorrow yesterday morning evening "
    "night weekend"
) | content_words(" ".join((*MONTH_NAMES, *WEEKDAYS)))
_CLAUSE = re.compile(
    r"(?<!\d),|,(?!\d{3}\b)|;|:(?=\s)|\b(?:which|that|and|but|so|because)\b", re.IGNORECASE
)
# "new" and the attribute it names, the word its value follows: "my new email is ...",
# "my new phone number, ..."
_NEW = re.compile(
    r"\bnew\s+(?:[\w'’-]+\s+){0,2}?(?P<what>[\w'’-]+)(?=\s+(?:is|are|was|were)\b|\s*[,.;:!?]|$)",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=1 << 14)  # every candidate is read again for each new memory
def says_change(text: str) -> str | None:
    """The change cue ``text`` says ("now", "left", "new" ...), or None."""
    m = _CUES.search(text)
    if m:
        return m.group(0).casefold()
    return "new" if _NEW.search(text) else None


def _new_topic(text: str) -> frozenset[str]:
    """The word "new" names ("email" in "my new email", "number" in "new phone number")."""
    return frozenset(w for m in _NEW.finditer(text) for w in content_words(m.group("what")))


def _states(text: str, stem: str, *, noun: bool = False) -> bool:
    """Whether ``text`` gives a value of the attribute ``stem`` ("email is ..."); ``noun``:
    the attribute is the stem as a noun ("gym is", "gyms are"), not a verb's "-ing"
    ("swimming is going better" gives no value)."""
    tail = r"(?:e|es|s|'s|’s)?" if noun else r"\w*"
    return re.search(rf"\b{re.escape(stem)}{tail}\s+(?:is|are|was|were)\b", text, re.I) is not None


@functools.lru_cache(maxsize=1 << 14)
def _topic(text: str, subject: str | None) -> frozenset[str]:
    """Content words of ``text`` that say what it is about: not the cue words, not numbers
    alone, not the speaker's name."""
    drop = _NOT_TOPIC | content_words(subject or "")
    return frozenset(w for w in content_words(text) if w not in drop and not w.isdigit())


def _clauses(text: str) -> list[str]:
    """The clauses of ``text``; a piece of two words or fewer is part of the next ("Alex
    and Maya broke up": "Alex" is the clause's subject, not a clause)."""
    out: list[str] = []
    carry = ""
    for piece in _CLAUSE.split(text):
        piece = f"{carry} {piece}" if carry else piece
        carry = piece if len(piece.split()) <= 2 else ""
        if not carry and piece.strip():
            out.append(piece)
    if carry.strip():
        out.append(carry)
    return out


def restates(new: NewMemory) -> bool:
    """Whether ``new`` may restate an earlier state: a short statement saying a change
    (the write plan reads its candidates only then)."""
    return (
        not new.asks
        and says_change(new.text) is not None
        and len(_topic(new.text, new.subject)) <= MAX_NEW_WORDS
    )


def restatement_proposals(new: NewMemory, earlier: Sequence[Known]) -> list[Proposal]:
    """``supersedes`` edges from ``new`` (a change) to the latest memories of ``earlier``
    (oldest first; the same speaker's, short statements, no change themselves) whose
    words it says again."""
    if not restates(new):
        return []
    cue = says_change(new.text)
    # the change's words with its subject's: a thing's name ("standup") is what it is about
    said = _topic(new.text, None)
    # the words of the clauses that say the change: "..., and now I teach at X"
    near = frozenset(
        w for clause in _clauses(new.text) if says_change(clause) for w in _topic(clause, None)
    )
    found: list[tuple[Known, list[str]]] = []
    for k in earlier:
        if k.memory_id == new.memory_id or says_change(k.text):
            continue
        # the same speaker's, or the thing the change is about ("Standup moved to 10:15"
        # after "my standup is at 9:30")
        if k.subject != new.subject and not (new.subject and new.subject in content_words(k.text)):
            continue
        # what the old memory is about: its words but whose it is ("cat" in "Maya's cat's
        # name is Mochi", whose subject is the cat)
        old = _topic(k.text, owner_of(k.subject))
        if not old or len(old) > MAX_OLD_WORDS:
            continue
        shared = old & said
        named = shared & _new_topic(new.text)
        if cue == "new" and not named:
            continue  # "a new beneficiary" changes no state the old memory says
        if not shared & near:
            continue  # the change is said about something else
        # "my new email is ..." or "joined a climbing gym ... instead" names what changed,
        # which the old memory gave a value ("my email is ...", "my gym is ..."): the old
        # value is not said again
        if (
            any(_states(k.text, w) for w in named)
            or any(_states(k.text, w, noun=True) for w in shared & near)
            or len(shared) >= math.ceil(SHARE * len(old))
        ):
            found.append((k, sorted(shared)))
    return [
        Proposal(
            new.memory_id, k.memory_id, "supersedes", CONFIDENCE, RULE, {"cue": cue, "said": s}
        )
        for k, s in found[-TARGETS:]
    ]
