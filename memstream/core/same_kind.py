"""A change to another thing of the same kind: "I upgraded to a Pixel 8" after "I use an
iPhone 12", "after the breach I migrated everything to Bitwarden" after "my password
manager is LastPass".

The change shares no word with the old state and names no replaced value, so neither the
replacement rule (``core.replacement``) nor the restatement rule (``core.restatement``)
sees it, and "what phone do I use?" kept answering the iPhone. A person keeps one phone,
one editor, one password manager at a time (``core.answer_types.ONE_AT_A_TIME``): a memory
that says a change ("upgraded", "switched", "now", "these days" ...) and names one of a
kind supersedes (rule ``same_kind``) the speaker's latest earlier memory that named
another of that kind and not this one. The old memory stays active, the history; recall
puts the change right before it (``core.replacement.current_first``).

Pure: proposals from the new memory's text and the earlier memories' texts.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from typing import Final

from memstream.core.answer_types import ONE_AT_A_TIME
from memstream.core.relations import Known, NewMemory, Proposal
from memstream.core.restatement import says_change

RULE: Final = "same_kind"
CONFIDENCE: Final = 0.6


def _names(table: str) -> tuple[str, ...]:
    words = table.split()
    # "VS Code", "Apple Watch": a name of two words is a capitalised pair in the table
    out = [f"{a} {b}" for a, b in itertools.pairwise(words) if a[:1].isupper() and b[:1].isupper()]
    return (*out, *words)


_KINDS: Final = {kind: _names(table) for kind, table in ONE_AT_A_TIME.items()}


def _pattern(name: str) -> str:
    """A name as a pattern: a capitalised word matches as written ("Go" is not "go", "Edge"
    not "edge"); a lowercase word or a brand with a capital inside ("iPhone", "LastPass")
    in any case."""
    plain = re.escape(name)
    if name[:1].isupper() and not any(c.isupper() for c in name[1:].replace(" ", "")):
        return plain
    return f"(?i:{plain})"


_FIND: Final = {
    kind: re.compile(
        r"(?<![\w-])("
        + "|".join(_pattern(n) for n in sorted(names, key=len, reverse=True))
        + r")(?![\w-])"
    )
    for kind, names in _KINDS.items()
}


@functools.lru_cache(maxsize=1 << 14)  # each candidate is read again for every new memory
def kinds_named(text: str) -> dict[str, frozenset[str]]:
    """The one-at-a-time kinds ``text`` names, each with the names it says (folded)."""
    out = {}
    for kind, rx in _FIND.items():
        found = frozenset(m.group(1).casefold() for m in rx.finditer(text))
        if found:
            out[kind] = found
    return out


def others_of(text: str) -> list[str]:
    """Names of the kinds ``text`` names other than those it says, as the table spells
    them: the entities under which an earlier memory of the same kind is indexed."""
    named = kinds_named(text)
    return [n for kind, said in named.items() for n in _KINDS[kind] if n.casefold() not in said]


def same_kind_proposals(new: NewMemory, earlier: Sequence[Known]) -> list[Proposal]:
    """``supersedes`` edges from ``new`` (a change naming one of a kind) to the latest
    memory of ``earlier`` (oldest first; the same speaker's, no change itself) naming
    another of that kind and not this one, per kind."""
    if new.asks:
        return []
    cue = says_change(new.text)
    if cue is None:
        return []
    named = kinds_named(new.text)
    out: list[Proposal] = []
    for kind, now in named.items():
        for k in reversed(earlier):
            if k.memory_id == new.memory_id or k.subject != new.subject or says_change(k.text):
                continue
            was = kinds_named(k.text).get(kind)
            if was and not was & now:
                if all(p.target != k.memory_id for p in out):
                    evidence = {"kind": kind, "was": sorted(was)[0], "now": sorted(now)[0]}
                    out.append(
                        Proposal(
                            new.memory_id, k.memory_id, "supersedes", CONFIDENCE, RULE, evidence
                        )
                    )
                break
    return out
