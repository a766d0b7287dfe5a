"""Word gates: run a pattern only on text that has the wording it cannot match without.

A claim meets about a hundred patterns, and most can only match where some literal wording
occurs ("ago", "is called", "favorite"). Each such pattern has a gate listing that wording,
and runs only when its gate admits the text. A gate may admit text its pattern then does
not match, never the other way round, so results are those of running every pattern.

Gates compare words: the \\w runs of the text, lowercased, which are exactly the spans
that \b delimits. Gate wording must therefore be whole words wherever its pattern matches
(\b or a non-word character on both sides); wording inside a word is a ``part``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


def wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


def alternatives(text: str) -> tuple[str, ...]:
    return tuple(text.split("|"))


WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
_NON_WORD = bytes(c for c in range(128) if not (chr(c).isalnum() or chr(c) == "_"))
_BLANK_NON_WORD = bytes.maketrans(_NON_WORD, b" " * len(_NON_WORD))
# Characters other than A-Z that match an ASCII letter under re.I (İ ı ſ; the Kelvin sign
# lowercases to k), folded so that gates see every case-insensitive match.
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def fold(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_ASCII_FOLD).lower()


# words that make a clause a statement with a tense: a text with none of them and no "-ing"
# ("2 hours 41 minutes in Boulder on Sunday", "Laziest athlete alive") is a fragment
_TENSED = wordset("""i we you he she they it is are am was were be been being will shall
    would should could can may might must have has had do does did going gonna wanna don doesn
    didn isn aren wasn weren won wouldn couldn shouldn cannot""")


def verbless(words: frozenset[str]) -> bool:
    """Whether text of these ``words_of`` words says no subject, auxiliary or "-ing"."""
    return _TENSED.isdisjoint(words) and not any(w.endswith("ing") for w in words)


HAS_DIGIT = "\\d"  # among the words of a text with a digit (no word can be this)
_WORD_LETTERS = b" _abcdefghijklmnopqrstuvwxyz"


def any_in(parts: tuple[str, ...], text: str) -> bool:
    for part in parts:  # noqa: SIM110 -- a plain loop is quicker than any() over a generator
        if part in text:
            return True
    return False


def words_of(text: str) -> frozenset[str]:
    """The folded words of ``text`` (see above), and HAS_DIGIT if it has a digit."""
    if text.isascii():  # the usual case; on bytes this is several times quicker than a regex
        plain = text.lower().encode().translate(_BLANK_NON_WORD)
        words = plain.decode().split()
        if plain.translate(None, _WORD_LETTERS):  # digits are all that is left
            words.append(HAS_DIGIT)
        return frozenset(words)
    found = [fold(word) for word in WORD.findall(text)]
    if _DIGIT.search(text):
        found.append(HAS_DIGIT)
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Gate:
    """Admits text having one of ``words``, all the words of one of ``phrases``, one of
    ``parts`` anywhere or a start in ``starts``; and then ``also``."""

    words: frozenset[str]
    phrases: tuple[frozenset[str], ...] = ()
    parts: tuple[str, ...] = ()
    starts: tuple[str, ...] = ()
    also: Gate | None = None

    def admits(self, words: frozenset[str], text: str) -> bool:
        if self.words.isdisjoint(words) and (
            not (self.phrases or self.parts or self.starts)
            or not self._admits_otherwise(words, text)
        ):
            return False
        return self.also is None or self.also.admits(words, text)

    def _admits_otherwise(self, words: frozenset[str], text: str) -> bool:
        for phrase in self.phrases:
            if phrase <= words:
                return True
        if self.parts or self.starts:
            folded = fold(text)
            return any_in(self.parts, folded) or folded.startswith(self.starts)
        return False


def gate(
    wording: str = "",
    *,
    parts: str = "",
    starts: str = "",
    digit: bool = False,
    also: Gate | None = None,
) -> Gate:
    """A gate from "|"-separated ``wording`` (whole words in the pattern), ``parts`` and
    ``starts``; ``digit`` admits text with a digit."""
    words: set[str] = {HAS_DIGIT} if digit else set()
    phrases: list[frozenset[str]] = []
    for alternative in wording.split("|"):
        found = frozenset(WORD.findall(alternative.lower()))
        if len(found) == 1:
            words |= found
        elif found:
            phrases.append(found)
    return Gate(
        frozenset(words),
        tuple(phrases),
        tuple(p for p in parts.split("|") if p),
        tuple(s for s in starts.split("|") if s),
        also,
    )


class Caseless:
    """A case-insensitive pattern asked only whether it matches. On ASCII text it runs
    without re.I on the lowercased text: the same matches, found several times quicker."""

    __slots__ = ("_any_case", "_lower")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        if not pattern.flags & re.I or re.search("[A-Z]", re.sub(r"\\.", "", pattern.pattern)):
            raise ValueError(f"not a lowercase re.I pattern: {pattern.pattern}")
        self._any_case = pattern
        self._lower = re.compile(pattern.pattern, pattern.flags & ~re.I)

    def found(self, text: str) -> bool:
        if text.isascii():
            return self._lower.search(text.lower()) is not None
        return self._any_case.search(text) is not None


# Words too common to index a phrase by (any one word of a phrase will do).
_COMMON = wordset("a an the of in on at to for by from with and i you we my is was this last next")


class Gates:
    """The gates of a sequence of patterns, indexed by word so that text is put only to the
    few gates that may admit it rather than to each in turn."""

    __slots__ = ("_also", "_by_word", "_gates", "_keys", "_open")

    def __init__(self, gates: Sequence[Gate]) -> None:
        # word -> (gate, the other words it needs with it, if any); a phrase is indexed by
        # one of its words (any will do: the gate needs them all)
        by_word: dict[str, list[tuple[int, frozenset[str] | None]]] = {}
        for i, g in enumerate(gates):
            for word in g.words:
                by_word.setdefault(word, []).append((i, None))
            for phrase in g.phrases:
                word = min(phrase, key=lambda w: (w in _COMMON, -len(w), w))
                by_word.setdefault(word, []).append((i, phrase))
        self._gates = tuple(gates)
        self._by_word = {word: tuple(found) for word, found in by_word.items()}
        self._keys = frozenset(by_word)
        # gates admitting on parts or starts too, and gates with more to ask once admitted
        self._open = tuple(i for i, g in enumerate(gates) if g.parts or g.starts)
        self._also = {i: g.also for i, g in enumerate(gates) if g.also is not None}

    def __len__(self) -> int:
        return len(self._gates)

    def admitting(self, words: frozenset[str], text: str) -> list[int]:
        """Indices of the gates that admit ``text`` (whose words are ``words``), in order."""
        if not self._open and self._keys.isdisjoint(words):
            return []
        found: set[int] = set()
        for word in self._keys.intersection(words):
            for i, phrase in self._by_word[word]:
                if phrase is None or phrase <= words:
                    found.add(i)
        gates = self._gates
        if self._open:
            folded = fold(text)
            for i in self._open:
                g = gates[i]
                if i not in found and (any_in(g.parts, folded) or folded.startswith(g.starts)):
                    found.add(i)
        if not found:
            return []
        also = self._also
        return [i for i in sorted(found) if (a := also.get(i)) is None or a.admits(words, text)]


# --- confidence and importance -----------------------------------------------------
