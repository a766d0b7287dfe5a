"""Merging the text of an UPDATE: keep what the old memory said and add the new detail."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def covers(new: str, old: str) -> bool:
    """``new`` says (nearly) everything ``old`` says: a refinement, not a contradiction."""
    old_w, new_w = _words(old), _words(new)
    # Only long texts may drop a word: in a short one a missing word is usually the changed value.
    return bool(old_w) and len(old_w - new_w) <= len(old_w) // 10 and len(new_w) > len(old_w)


#: words that turn a statement around ("don't" splits into "don" and "t")
NEGATIONS = frozenset({"not", "no", "never", "nor", "t", "without", "anymore", "stopped", "quit"})


def says_more(longer: str, shorter: str) -> bool:
    """``longer`` covers ``shorter`` and adds no negation: the same fact with more detail
    ("Sam's sister Clara lives in Lisbon with her two kids"), not its reversal ("Sam no
    longer likes tea" covers the words of "Sam likes tea")."""
    if not covers(longer, shorter):
        return False
    return not (_words(longer) - _words(shorter)) & NEGATIONS


def merge_texts(old: str, new: str) -> str:
    """The more detailed text when one covers the other; otherwise both, joined.

    Covering is measured on words: if ``new`` contains (nearly) every word of ``old`` it is
    the refined version; if ``old`` already contains ``new``'s words there is nothing to add.
    """
    old_w, new_w = _words(old), _words(new)
    if not old_w:
        return new
    if not new_w or new_w <= old_w:
        return old
    if covers(new, old):
        return new
    return f"{old.rstrip('. ')}; {new.strip()}"
