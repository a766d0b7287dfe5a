"""Filler: greetings, thanks, acknowledgements and words that say nothing on their own."""

from __future__ import annotations

import re

from memstream.core.extract.gates import wordset

# --- filler ------------------------------------------------------------------------

FILLER_WORDS = wordset("""hi hello hey heya yo hiya there catch thanks thank you so much a lot lots very ok okay k kk
    sure yes yeah yep yup no nope nah cool great nice awesome perfect wow lol haha hahaha
    bye goodbye see ya later good morning night evening afternoon day got it sounds
    welcome problem of course right exactly agreed indeed alright fine glad happy hear
    that to this is was it's that's totally absolutely definitely oh ah um uh hmm well
    amazing wonderful fantastic lovely interesting true same here too me again cheers np
    ty thx pls please appreciate appreciated really love will do done noted understood
    makes sense fair enough all the best take care congrats congratulations for and wish
    luck hope doing how are what's up sup nothing much not bad pretty sounds fun""")
# Verbs/adjectives that say nothing on their own: "I agree", "I'm fine", "I see".
_EMPTY_WORDS = wordset("""i i'm im me my we us our am is are was were be been being do does did have has had
    the a an and or but so to of in on at it this that these those there here just really
    very too also quite pretty much so such well fine good great okay ok sure glad happy
    excited thrilled sorry agree see know think guess understand hope mean feel suppose
    believe bet wonder sure right yes no not doing going gonna wanna get got thanks thank
    totally absolutely definitely now again still yet can could would should will shall
    might may must bit lot kind sort like what how then all ready back""")
_WORD_RE = re.compile(r"[\w'+#.-]+")


_NOT_IN_WORD = bytes(c for c in range(128) if _WORD_RE.fullmatch(chr(c)) is None)
_BLANK_NOT_IN_WORD = bytes.maketrans(_NOT_IN_WORD, b" " * len(_NOT_IN_WORD))


def claim_words(text: str) -> list[str]:
    if text.isascii():  # the same words, quicker: lowercase, then split on bytes
        plain = text.lower().encode().translate(_BLANK_NOT_IN_WORD)
        found = plain.decode().split()
        if b"." not in plain and b"'" not in plain and b"-" not in plain:
            return found  # nothing to strip
        return [w for w in (w.strip(".'-") for w in found) if w]
    return [w.strip(".'-").lower() for w in _WORD_RE.findall(text) if w.strip(".'-")]


def is_filler(claim: str) -> bool:
    """Greetings, thanks, acknowledgements and contentless reactions."""
    return is_filler_words(claim_words(claim))


def is_filler_words(words: list[str]) -> bool:
    if not words:
        return True
    if all(w in FILLER_WORDS for w in words):
        return True
    # a vocative name after a greeting ("thanks Mel") is still filler
    return (
        len(words) <= 3
        and sum(w not in FILLER_WORDS for w in words) <= 1
        and words[0] in FILLER_WORDS
    )


def has_content(words: list[str]) -> bool:
    return any(w not in _EMPTY_WORDS and w not in FILLER_WORDS for w in words)


_SUBSTANTIVE_WORDS = 3


def substantive(text: str) -> bool:
    """At least three distinct words that are neither filler nor empty."""
    return (
        len({w for w in claim_words(text) if w not in _EMPTY_WORDS and w not in FILLER_WORDS})
        >= _SUBSTANTIVE_WORDS
    )
