"""The one tokenizer every text encoder shares, so dense, sparse and any later lexical
feature agree on what a "word" is.

Pipeline: NFKC + casefold, unicode word tokens (letters and digits; ``_`` splits words,
inner apostrophes are dropped so "don't" -> "dont"), overlong tokens dropped, simple
English stopwords removed, optional light stemming (plural and -ing/-ed stripping).

Negations are deliberately *not* stopwords: "likes coffee" and "does not like coffee"
must not look identical to a memory store.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
# the same words in casefolded ASCII text, where plain ranges match faster than categories
_ASCII_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")
_APOSTROPHES = str.maketrans("", "", "'’")

_STOPWORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m re ve
"""
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_TEXT.split())

_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=1 << 16)  # words repeat far more than texts do
def light_stem(token: str) -> str:
    """A deliberately small English suffix stripper (S-stemmer plus -ing/-ed, final -e).

    Only ASCII alphabetic tokens longer than three characters are touched, so numbers,
    identifiers and other scripts pass through unchanged. It conflates "likes", "liked",
    "liking" and "like"; it is not Porter and does not try to be.
    """
    if len(token) <= 3 or not (token.isascii() and token.isalpha()):
        return token
    t = token
    if t.endswith("ies") and len(t) > 4:
        t = t[:-3] + "y"
    elif t.endswith(("sses", "xes", "zes", "ches", "shes")):
        t = t[:-2]
    elif t.endswith("s") and not t.endswith(("ss", "us", "is")):
        t = t[:-1]
    for suffix in ("ing", "ed"):
        stem = t[: -len(suffix)]
        if t.endswith(suffix) and len(stem) >= 3 and _VOWELS.intersection(stem):
            t = stem
            # "running" -> "runn" -> "run", but keep "fall", "miss", "buzz".
            if len(t) >= 4 and t[-1] == t[-2] and t[-1] not in _VOWELS and t[-1] not in "lsz":
                t = t[:-1]
            break
    if len(t) >= 4 and t.endswith("e") and not t.endswith("ee"):
        t = t[:-1]
    return t


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """Configured tokenizer; ``version`` names the configuration for index identities."""

    remove_stopwords: bool = True
    stem: bool = False
    max_len: int = 64

    @property
    def version(self) -> str:
        return f"tok1{'-sw' if self.remove_stopwords else ''}{'-st' if self.stem else ''}-{self.max_len}"

    def words(self, text: str) -> list[str]:
        """Normalised word tokens, before stopword removal and stemming."""
        folded = unicodedata.normalize("NFKC", text).casefold()
        limit = self.max_len
        # the pattern has no capturing group: findall gives the whole matches
        found: list[str] = (_ASCII_WORD_RE if folded.isascii() else _WORD_RE).findall(folded)
        if "'" in folded or "’" in folded:
            found = [w.translate(_APOSTROPHES) for w in found]
        return [w for w in found if len(w) <= limit]

    def __call__(self, text: str) -> list[str]:
        tokens = self.words(text)
        if self.remove_stopwords:
            tokens = [t for t in tokens if t not in ENGLISH_STOPWORDS]
        if self.stem:
            tokens = [light_stem(t) for t in tokens]
        return tokens


DEFAULT_TOKENIZER = Tokenizer()
STEMMING_TOKENIZER = Tokenizer(stem=True)


def tokenize(text: str, *, stem: bool = False) -> list[str]:
    """Tokens of ``text`` with the default configuration (stopwords removed)."""
    return (STEMMING_TOKENIZER if stem else DEFAULT_TOKENIZER)(text)
