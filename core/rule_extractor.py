"""Rule-based fact extraction: what users get offline, and the LLM extractor's fallback.

Pure and deterministic: the only notion of "now" is each turn's ``occurred_at``.
Pipeline per turn: clean -> sentences -> atomic claims -> drop filler -> rewrite into
the third person -> resolve dates -> classify, find entities and subject/slot.

Roles: user turns are the main source. Assistant turns contribute only when the
assistant restates something about the user in the second person ("You mentioned you
live in Boston"), at low confidence: assistant prose is mostly suggestions and
generated content, and treating it as memory would let the model write its own
guesses into the user's profile. System and tool turns contribute nothing.

Speed (this runs on a stream agent's hot path): each pattern is gated on the wording it
cannot match without (see "gates" below), so a claim meets only the few patterns that may
match it; the results are those of running every pattern on every claim.
"""

from __future__ import annotations

import contextlib
import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import NamedTuple

from core.calendar_words import MONTH_NAMES, MONTH_NUMBERS, NUMBER_WORDS, WEEKDAYS
from core.facts import Fact, TurnView
from core.hashing import normalize
from schemas.events import Category, Kind

RULES_VERSION = "rules-v1"


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _alternatives(text: str) -> tuple[str, ...]:
    return tuple(text.split("|"))


# --- gates -------------------------------------------------------------------------------
#
# A claim meets about a hundred patterns, and most can only match where some literal wording
# occurs ("ago", "is called", "favorite"). Each such pattern has a gate listing that wording,
# and runs only when its gate admits the text. A gate may admit text its pattern then does
# not match, never the other way round, so results are those of running every pattern.
#
# Gates compare words: the \w runs of the text, lowercased, which are exactly the spans
# that \b delimits. Gate wording must therefore be whole words wherever its pattern matches
# (\b or a non-word character on both sides); wording inside a word is a ``part``.

_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
_NON_WORD = bytes(c for c in range(128) if not (chr(c).isalnum() or chr(c) == "_"))
_BLANK_NON_WORD = bytes.maketrans(_NON_WORD, b" " * len(_NON_WORD))
# Characters other than A-Z that match an ASCII letter under re.I (İ ı ſ; the Kelvin sign
# lowercases to k), folded so that gates see every case-insensitive match.
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_ASCII_FOLD).lower()


_HAS_DIGIT = "\\d"  # among the words of a text with a digit (no word can be this)
_WORD_LETTERS = b" _abcdefghijklmnopqrstuvwxyz"


def _any_in(parts: tuple[str, ...], text: str) -> bool:
    for part in parts:  # noqa: SIM110 -- a plain loop is quicker than any() over a generator
        if part in text:
            return True
    return False


def _words_of(text: str) -> frozenset[str]:
    """The folded words of ``text`` (see above), and _HAS_DIGIT if it has a digit."""
    if text.isascii():  # the usual case; on bytes this is several times quicker than a regex
        plain = text.lower().encode().translate(_BLANK_NON_WORD)
        words = plain.decode().split()
        if plain.translate(None, _WORD_LETTERS):  # digits are all that is left
            words.append(_HAS_DIGIT)
        return frozenset(words)
    found = [_fold(word) for word in _WORD.findall(text)]
    if _DIGIT.search(text):
        found.append(_HAS_DIGIT)
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class _Gate:
    """Admits text having one of ``words``, all the words of one of ``phrases``, one of
    ``parts`` anywhere or a start in ``starts``; and then ``also``."""

    words: frozenset[str]
    phrases: tuple[frozenset[str], ...] = ()
    parts: tuple[str, ...] = ()
    starts: tuple[str, ...] = ()
    also: _Gate | None = None

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
            folded = _fold(text)
            return _any_in(self.parts, folded) or folded.startswith(self.starts)
        return False


def _gate(
    wording: str = "",
    *,
    parts: str = "",
    starts: str = "",
    digit: bool = False,
    also: _Gate | None = None,
) -> _Gate:
    """A gate from "|"-separated ``wording`` (whole words in the pattern), ``parts`` and
    ``starts``; ``digit`` admits text with a digit."""
    words: set[str] = {_HAS_DIGIT} if digit else set()
    phrases: list[frozenset[str]] = []
    for alternative in wording.split("|"):
        found = frozenset(_WORD.findall(alternative.lower()))
        if len(found) == 1:
            words |= found
        elif found:
            phrases.append(found)
    return _Gate(
        frozenset(words),
        tuple(phrases),
        tuple(p for p in parts.split("|") if p),
        tuple(s for s in starts.split("|") if s),
        also,
    )


class _Caseless:
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
_COMMON = _wordset("a an the of in on at to for by from with and i you we my is was this last next")


class _Gates:
    """The gates of a sequence of patterns, indexed by word so that text is put only to the
    few gates that may admit it rather than to each in turn."""

    __slots__ = ("_also", "_by_word", "_gates", "_keys", "_open")

    def __init__(self, gates: Sequence[_Gate]) -> None:
        # word -> (gate, the other words it needs with it, if any); a phrase is indexed by
        # one of its words (any will do: the gate needs them all)
        by_word: dict[str, list[tuple[int, frozenset[str] | None]]] = {}
        for i, gate in enumerate(gates):
            for word in gate.words:
                by_word.setdefault(word, []).append((i, None))
            for phrase in gate.phrases:
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
            folded = _fold(text)
            for i in self._open:
                gate = gates[i]
                if i not in found and (
                    _any_in(gate.parts, folded) or folded.startswith(gate.starts)
                ):
                    found.add(i)
        if not found:
            return []
        also = self._also
        return [i for i in sorted(found) if (a := also.get(i)) is None or a.admits(words, text)]


# --- confidence and importance -----------------------------------------------------

_CONF_FIRST_PERSON = 0.8
_CONF_CORRECTION = 0.85
# Hedged claims ("maybe", "I think", "might") are speculative: under the dream cycle's 0.40
# confirmation line, so they expire after 30 days unless something confirms them.
_CONF_HEDGED = 0.35
_CONF_THIRD_PARTY = 0.6
_CONF_FROM_QUESTION = 0.6
_CONF_ASSISTANT = 0.4

_IMPORTANCE: dict[str, float] = {
    "correction": 0.8,
    "commitment": 0.7,
    "decision": 0.7,
    "relationship": 0.7,
    "moment": 0.7,
    "principle": 0.7,
    "preference": 0.6,
    "skill": 0.6,
    "entity": 0.5,
    "fact": 0.5,
}

_MAX_CLAIM_CHARS = 400  # longer "claims" are pasted documents, not statements

# --- text cleaning and sentence splitting ------------------------------------------

_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"'})
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_URL = re.compile(r"https?://\S+")
_SPACES = re.compile(r"[ \t\f\v]+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_BOUNDARY = re.compile(r"([.!?…]+)([\"')\]]*)(?=\s|$)")
_ABBREVIATIONS = _wordset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie inc ltd co corp approx dept est fig no mt ft"
)


class _Blanks(dict[int, int | str]):
    """``str.translate`` table turning emoji (So) and control characters (C*) other than the
    newline into spaces. Filled in as characters turn up, so lookups mostly stay in C."""

    def __missing__(self, code: int) -> int | str:
        cat = unicodedata.category(chr(code))
        value: int | str = " " if code != 10 and (cat == "So" or cat.startswith("C")) else code
        if len(self) < 8192:  # bounded: text can hold any of ~1.1M code points
            self[code] = value
        return value


_BLANKS = _Blanks()
# Both at once: no quote is blanked and no blanked character is a quote.
_QUOTES_AND_BLANKS = _Blanks(_QUOTES)


def _clean(text: str) -> str:
    if "```" in text:
        text = _CODE_BLOCK.sub(" ", text)
    # emoji and control characters carry no claims; control chars are also our sentinels
    if text.isascii() and text.isprintable() and "`" not in text:
        return text  # nothing here to change
    if "://" not in text:
        return text.translate(_QUOTES_AND_BLANKS)
    return _URL.sub(" ", text.translate(_QUOTES)).translate(_BLANKS)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``; newlines always end one, abbreviations and initials do not."""
    out: list[str] = []
    for line in _clean(text).split("\n"):
        lead = line.lstrip()[:1]
        if lead in ("-", "*", "•") or lead.isdecimal():
            line = _BULLET.sub("", line)
        if "  " in line or "\t" in line or "\f" in line or "\v" in line:
            line = _SPACES.sub(" ", line)
        line = line.strip()
        start = 0
        for m in _BOUNDARY.finditer(line):
            if m.group(1) == ".":
                words = line[start : m.start()].rsplit(None, 1)
                token = words[-1].lower().strip("(\"'") if words else ""
                initials = "." in token and all(
                    len(p) <= 2 and p.isalpha() for p in token.split(".")
                )
                if (
                    token in _ABBREVIATIONS
                    or initials
                    or (len(token) == 1 and token.isalpha() and token != "i")
                ):
                    continue
            piece = line[start : m.end()].strip()
            if piece:
                out.append(piece)
            start = m.end()
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out


# A clause boundary only where the right side starts with its own pronoun subject and the
# left side already has one ("I love cats and I hate dogs", not "my sister and I went").
_CLAUSE_SPLIT = re.compile(
    # every alternative starts at a space, comma or semicolon: saying so first is much quicker
    r"(?=[\s,;])(?:"
    r"\s*;\s*|,?\s+(?:and|but|so|plus|and then|then|while|whereas)\s+(?=(?:I|i|[Ww]e)\b)|,\s*but\s+|,\s*and\s+(?=(?:[Mm]y|[Oo]ur)\b)"
    # a trailing verdict ("..., it was amazing") is its own (usually contentless) claim
    r"|,\s*(?=(?:[Ii]t|[Tt]hat|[Tt]his)(?:'s|\s+(?:is|was|has|had|felt|feels|looks|looked|sounds|sounded))\b)"
    # "my email is X and my phone is Y": the right side is plainly a clause of its own
    r"|(?P<free>,?\s+and\s+(?=(?:[Mm]y|[Oo]ur)(?:\s+[\w'-]+){1,3}\s+(?:is|are|was|were)\b))"
    r")"
)
# _CLAUSE_SPLIT cannot match without a semicolon, a comma or one of these words.
_CLAUSE_WORDS = _wordset("and but so plus then while whereas")
_HAS_SUBJECT = re.compile(r"\b(?:I|i|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[Ii]t|[Yy]ou)\b")


def split_claims(sentence: str) -> list[str]:
    """Atomic claims of one sentence (conjoined independent clauses become separate claims)."""
    if (
        ";" not in sentence
        and "," not in sentence
        and _CLAUSE_WORDS.isdisjoint(_words_of(sentence))
    ):
        return [sentence.strip()] if sentence.strip() else []
    claims: list[str] = []
    start = 0
    for m in _CLAUSE_SPLIT.finditer(sentence):
        left = sentence[start : m.start()]
        if m.group(0).strip() != ";" and m.group("free") is None and not _HAS_SUBJECT.search(left):
            continue
        claims.append(left)
        start = m.end()
    claims.append(sentence[start:])
    return [c.strip() for c in claims if c.strip()]


# --- filler ------------------------------------------------------------------------

_FILLER_WORDS = _wordset("""hi hello hey heya yo hiya there thanks thank you so much a lot lots very ok okay k kk
    sure yes yeah yep yup no nope nah cool great nice awesome perfect wow lol haha hahaha
    bye goodbye see ya later good morning night evening afternoon day got it sounds
    welcome problem of course right exactly agreed indeed alright fine glad happy hear
    that to this is was it's that's totally absolutely definitely oh ah um uh hmm well
    amazing wonderful fantastic lovely interesting true same here too me again cheers np
    ty thx pls please appreciate appreciated really love will do done noted understood
    makes sense fair enough all the best take care congrats congratulations for and wish
    luck hope doing how are what's up sup nothing much not bad pretty sounds fun""")
# Verbs/adjectives that say nothing on their own: "I agree", "I'm fine", "I see".
_EMPTY_WORDS = _wordset("""i i'm im me my we us our am is are was were be been being do does did have has had
    the a an and or but so to of in on at it this that these those there here just really
    very too also quite pretty much so such well fine good great okay ok sure glad happy
    excited thrilled sorry agree see know think guess understand hope mean feel suppose
    believe bet wonder sure right yes no not doing going gonna wanna get got thanks thank
    totally absolutely definitely now again still yet can could would should will shall
    might may must bit lot kind sort like what how then all ready back""")
_WORD_RE = re.compile(r"[\w'+#.-]+")


_NOT_IN_WORD = bytes(c for c in range(128) if _WORD_RE.fullmatch(chr(c)) is None)
_BLANK_NOT_IN_WORD = bytes.maketrans(_NOT_IN_WORD, b" " * len(_NOT_IN_WORD))


def _words(text: str) -> list[str]:
    if text.isascii():  # the same words, quicker: lowercase, then split on bytes
        plain = text.lower().encode().translate(_BLANK_NOT_IN_WORD)
        found = plain.decode().split()
        if b"." not in plain and b"'" not in plain and b"-" not in plain:
            return found  # nothing to strip
        return [w for w in (w.strip(".'-") for w in found) if w]
    return [w.strip(".'-").lower() for w in _WORD_RE.findall(text) if w.strip(".'-")]


def is_filler(claim: str) -> bool:
    """Greetings, thanks, acknowledgements and contentless reactions."""
    return _is_filler(_words(claim))


def _is_filler(words: list[str]) -> bool:
    if not words:
        return True
    if all(w in _FILLER_WORDS for w in words):
        return True
    # a vocative name after a greeting ("thanks Mel") is still filler
    return (
        len(words) <= 3
        and sum(w not in _FILLER_WORDS for w in words) <= 1
        and words[0] in _FILLER_WORDS
    )


def _has_content(words: list[str]) -> bool:
    return any(w not in _EMPTY_WORDS and w not in _FILLER_WORDS for w in words)


_SUBSTANTIVE_WORDS = 3


def _substantive(text: str) -> bool:
    """At least three distinct words that are neither filler nor empty."""
    return (
        len({w for w in _words(text) if w not in _EMPTY_WORDS and w not in _FILLER_WORDS})
        >= _SUBSTANTIVE_WORDS
    )


# --- cue patterns --------------------------------------------------------------------

_MARKERS = re.compile(
    r"^(?:(?:well|so|oh|ah|um+|uh+|hmm+|yeah|yes|yep|no(?! longer| one| more)|nope|ok|okay|anyway|anyways|also|btw|"
    r"by the way|actually|honestly|basically|fyi|fun fact|guess what|wow|haha|lol|hey|hi|hello|"
    r"sorry|wait|oops|plus|and|but|to be honest|tbh|oh and|oh well|then|now|correction|thank you so much|"
    r"thank you|thanks so much|thanks|nice to meet you|good to see you|"
    r"update|just so you know|for the record|quick update)\b[\s,!.:;-]*)+",
    re.I,
)
_HEDGE = re.compile(
    r"^(?:I think|I guess|I feel like|I suppose|I mean|I reckon|I'd say|I believe|probably|maybe|perhaps)(?: that)?,?\s+(?=(?:I|i|[Ww]e|[Mm]y|[Oo]ur)\b)"
)
_HEDGE_PARTS = ("maybe", "perhaps", "probably", "might", "not sure", "i think", "i guess")
_HEDGE_WORDS = re.compile(r"\b(?:maybe|perhaps|probably|might|not sure|i think|i guess)\b", re.I)
_HEDGE_ANY = _Caseless(_HEDGE_WORDS)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|is|are|am|was|were|have|has|what|why|how|when|where|who|whom|which|any|anything|shall|may|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|right)\b",
    re.I,
)
_REASON_CLAUSE = re.compile(
    r"\b(?:since|because|as|now that|given that|considering)\s+((?:I|i|[Ww]e|[Mm]y|[Oo]ur)\b.+)"
)
_WONDER = re.compile(
    r"^(?:I|i)(?:'m| am| was)? (?:wonder|wondering|curious|need help|want to know|would like to know|'d like to know)",
    re.I,
)
_FIRST_PERSON = re.compile(
    r"(?=[IiMmWwuOo])"  # what every match starts with: saying so first is much quicker
    r"(?<![\w.])(?:[Ii]|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|us|[Oo]ur|[Oo]urs|[Oo]urselves)(?![\w]|\.\w)"
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'll|you'd)\b", re.I)
# _SECOND_PERSON matches exactly where one of these is a word.
_SECOND_PERSON_WORDS = _wordset("you your yours yourself")

_STANDING_ORDER = re.compile(
    r"^(?:please\s+)?(?P<verb>always|never|don't|do not|avoid|stop|make sure(?: to)?|remember to|keep(?! up| going| it up)|use|prefer|stick to|stick with)\b\s*(?P<rest>.*)$",
    re.I,
)
_REMIND_ME = re.compile(
    r"^(?:please\s+)?(?:can you\s+|could you\s+)?remind me\s+(?:to\s+)?(?P<rest>.+)$", re.I
)
_CALL_ME = re.compile(r"^(?:please\s+)?(?:just\s+)?call me\s+(?P<rest>.+)$", re.I)
_LETS = re.compile(r"^(?:let's|let us)\s+(?P<rest>.+)$", re.I)
_IMPERATIVE = re.compile(
    r"^(?:please|can you|could you|would you|will you|write|help|tell|show|give|make|create|explain|summarize|summarise|translate|fix|find|list|generate|draft|check|send|book|search|look|let me know|go ahead|try|imagine|pretend|describe|compare|recommend|suggest|rewrite|refactor|add|remove|delete|update|run|open|read|calculate|convert|edit|review|plan)\b",
    re.I,
)

_ASSISTANT_LEAD_IN = re.compile(
    r"^(?:(?:got it|noted|understood|sure|great|okay|ok|perfect|thanks for sharing|good to know|of course|absolutely|right)\s*[,!.:;—–-]?\s*)*"
    r"(?:(?:so\s+)?(?:you (?:mentioned|said|told me|noted|shared|indicated|explained)|as you (?:mentioned|said)|"
    r"i (?:remember|recall|understand|noted|note|have noted|'ve noted|see)|i've noted|it sounds like|since)(?: that)?,?\s+)?",
    re.I,
)
_ADVICE = re.compile(
    r"\b(?:you (?:should|could|might|can|may|need to|must|have to|want to|'d|would|will want|ought)|if you|let me know|feel free|"
    r"would you|do you|did you|have you|are you|can you|could you|hope you|good luck)\b",
    re.I,
)

_CATEGORY_CUES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        "correction",
        re.compile(
            r"^(?:actually|correction|no,|nope|sorry,|wait,|oops|update:)|\b(?:i meant|i was wrong|scratch that|"
            r"that's wrong|that's not right|that is wrong|that's incorrect|no longer|not anymore|anymore|changed my mind|"
            r"to clarify|instead of|i misspoke|rather than what i said)\b",
            re.I,
        ),
    ),
    (
        "decision",
        re.compile(
            r"\b(?:decided|decide|decision|going with|go with|went with|chose|chosen|settled on|opted|picked|"
            r"switching to|switched to|switch to|migrating to|migrated to|we'll use|we will use|let's|let us|"
            r"agreed to|committed to using|finalized|final answer)\b",
            re.I,
        ),
    ),
    (
        "commitment",
        re.compile(
            r"(?:\b(?:will|shall|going to|gonna|plan to|plans to|planning to|intend to|promise|promised|need to|"
            r"needs to|have to|has to|got to|must|remind me|deadline|due (?:on|by|date|tomorrow|next|this)|scheduled|appointment|by (?:monday|tuesday|"
            r"wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next week|the end of))\b|'ll\b)",
            re.I,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(?:love|loves|loved|loving|enjoy|enjoys|enjoyed|prefer|prefers|preferred|favou?rite|hate|hates|hated|"
            r"dislike|dislikes|disliked|can't stand|cannot stand|fan of|fond of|adore|adores|rather|obsessed with|"
            r"passionate about|go-to|(?:'m|am|is|are|really|so|totally) into|allergic|(?<!feel )(?<!feels )(?<!look )(?<!looks )(?<!seem )(?<!sound )"
            r"(?<!sounds )(?<!something )(?<!just )(?<!more )(?<!less )likes?)\b",
            re.I,
        ),
    ),
    (
        "skill",
        re.compile(
            r"\b(?:know how to|knows how to|good at|great at|skilled|fluent|proficient|experienced (?:in|with)|expert|"
            r"years of experience|speak|speaks|learning|learned|learnt|studying|studied|certified|taught (?:me|myself)|"
            r"practic(?:e|ing)|practis(?:e|ing)|can (?:code|program|cook|play|speak|write|draw|paint|swim|drive|sing|dance))\b",
            re.I,
        ),
    ),
    (
        "principle",
        re.compile(
            r"\b(?:always|never|principle|rule of thumb|my rule|believe in|believe that|it's important to|"
            r"it is important to|make sure to|should always|should never|values?|priorit(?:y|ies|ize))\b",
            re.I,
        ),
    ),
    (
        "relationship",
        re.compile(
            r"\b(?:wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|sister|brother|siblings?|mother|mom|"
            r"mum|father|dad|parents?|son|daughter|kids?|children|child|baby|grandma|grandmother|grandpa|"
            r"grandfather|grandparents?|aunt|uncle|cousin|nephew|niece|friends?|best friend|colleague|coworker|"
            r"co-worker|boss|manager|mentor|roommate|neighbou?r|married|dating|divorced|engaged|in-laws?|family)\b",
            re.I,
        ),
    ),
    (
        "moment",
        re.compile(
            r"\b(?:birthday|anniversary|wedding|graduat(?:ed|ion)|got married|got engaged|passed away|died|was born|"
            r"gave birth|promoted|promotion|retired|first time|never forget|best day|worst day|proud|milestone|"
            r"celebrat\w*|accident|diagnosed|vacation|holiday|trip|concert|festival|ceremony|parade|race|marathon)\b",
            re.I,
        ),
    ),
    (
        "entity",
        re.compile(
            r"\b(?:is called|are called|named|'s name is|stands for|is an? (?:tool|library|framework|company|startup|"
            r"service|project|app|application|team|product|database|platform|band|restaurant|shop|store|book|movie|"
            r"show|game|podcast|dog|cat|pet|repo|repository|codebase|client|customer))\b",
            re.I,
        ),
    ),
)


# Gates of the families above, in the same order.
_CATEGORY_GATES: tuple[_Gate, ...] = (
    _gate(
        "i meant|i was wrong|scratch that|that's wrong|that's not right|that is wrong|"
        "that's incorrect|no longer|not anymore|anymore|changed my mind|to clarify|instead of|"
        "i misspoke|rather than what i said",
        starts="actually|correction|no,|nope|sorry,|wait,|oops|update:",
    ),
    _gate(
        "decided|decide|decision|going with|go with|went with|chose|chosen|settled on|opted|"
        "picked|switching to|switched to|switch to|migrating to|migrated to|we'll use|"
        "we will use|let's|let us|agreed to|committed to using|finalized|final answer"
    ),
    _gate(
        "will|shall|going to|gonna|plan to|plans to|planning to|intend to|promise|promised|"
        "need to|needs to|have to|has to|got to|must|remind me|deadline|due on|due by|due date|"
        "due tomorrow|due next|due this|scheduled|appointment|by monday|by tuesday|"
        "by wednesday|by thursday|by friday|by saturday|by sunday|by tomorrow|by tonight|"
        "by next week|by the end of|'ll"
    ),
    _gate(
        "love|loves|loved|loving|enjoy|enjoys|enjoyed|prefer|prefers|preferred|favorite|"
        "favourite|hate|hates|hated|dislike|dislikes|disliked|can't stand|cannot stand|fan of|"
        "fond of|adore|adores|rather|obsessed with|passionate about|go-to|into|allergic|like|likes"
    ),
    _gate(
        "know how to|knows how to|good at|great at|skilled|fluent|proficient|experienced in|"
        "experienced with|expert|years of experience|speak|speaks|learning|learned|learnt|"
        "studying|studied|certified|taught me|taught myself|practice|practicing|practise|"
        "practising|can code|can program|can cook|can play|can speak|can write|can draw|"
        "can paint|can swim|can drive|can sing|can dance"
    ),
    _gate(
        "always|never|principle|rule of thumb|my rule|believe in|believe that|"
        "it's important to|it is important to|make sure to|should always|should never|value|"
        "values|priority|priorities|prioritize"
    ),
    _gate(
        "wife|husband|partner|spouse|boyfriend|girlfriend|fiance|fiancé|fiancee|fiancée|"
        "sister|brother|sibling|siblings|mother|mom|mum|father|dad|parent|parents|son|daughter|"
        "kid|kids|children|child|baby|grandma|grandmother|grandpa|grandfather|grandparent|"
        "grandparents|aunt|uncle|cousin|nephew|niece|friend|friends|best friend|colleague|"
        "coworker|co-worker|boss|manager|mentor|roommate|neighbor|neighbour|married|dating|"
        "divorced|engaged|in-law|in-laws|family"
    ),
    _gate(
        "birthday|anniversary|wedding|graduated|graduation|got married|got engaged|passed away|"
        "died|was born|gave birth|promoted|promotion|retired|first time|never forget|best day|"
        "worst day|proud|milestone|accident|diagnosed|vacation|holiday|trip|concert|festival|"
        "ceremony|parade|race|marathon",
        parts="celebrat",
    ),
    _gate("is called|are called|named|'s name is|stands for|is a|is an"),
)
assert len(_CATEGORY_GATES) == len(_CATEGORY_CUES)
_CUE_GATES = _Gates(_CATEGORY_GATES)
_CUE_SEARCH = tuple(_Caseless(pattern) for _, pattern in _CATEGORY_CUES)
# A word of these gates is an alternative of its pattern on its own (\b on both sides, nothing
# else needed), so having the word is having a match; bar these, which need more around them.
_CUE_SURE = tuple(gate.words - {"like", "likes", "into", "ll"} for gate in _CATEGORY_GATES)


def classify(claim: str) -> Category:
    """Category of a claim from cue words; the first matching family wins, else "fact"."""
    return _classify(claim, _words_of(claim))


def _classify(claim: str, words: frozenset[str]) -> Category:
    for i in _CUE_GATES.admitting(words, claim):
        if not _CUE_SURE[i].isdisjoint(words) or _CUE_SEARCH[i].found(claim):
            return _CATEGORY_CUES[i][0]
    return "fact"


# --- first/second person to third person -------------------------------------------

_ADVERB = (
    r"(?:(?:really|also|just|usually|always|never|often|sometimes|recently|finally|still|actually|absolutely|"
    r"totally|definitely|mostly|only|even|already|generally|rarely|seldom|truly|honestly|personally|currently|"
    r"now|no longer|kind of|sort of|kinda|sorta|mainly|primarily|occasionally|normally|typically|frequently|"
    r"regularly|certainly|probably|basically|literally|seriously|officially|eventually|initially|originally|"
    r"once|then|first|too|both|all|absolutely|strongly|deeply|badly|simply|somehow|again|hardly|barely|"
    r"particularly|especially|genuinely)\s+)"
)
_PAST_OR_FIXED = _wordset("""was were went got had made took saw bought began ran met left felt found gave knew thought told became
    came wrote spent sold won lost built taught brought said heard kept held sat stood understood paid sent
    drove rode flew grew threw drew ate fell forgot chose broke spoke woke wore tore froze hid bit caught
    fought sought slept swam sang rang drank shook stole struck lent bent burnt learnt dreamt meant put cut
    hit set let quit read hurt cost shut spread upset led fled fed bred shed sped dealt dug hung lit slid spun
    stuck swung won wound can could will would shall should may might must ought used""")
# Words that can follow a subject pronoun without being its verb ("my sister and I too").
_NOT_VERB = _wordset("""and or but nor too alone here there to with in on at for of from myself yourself not who that which
    as than when if so because also really just usually always never often sometimes recently finally still
    actually only even already now then once both all personally""")
_THIRD_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_NEGATIONS = {
    "don't": "does not",
    "do not": "does not",
    "didn't": "did not",
    "can't": "cannot",
    "cannot": "cannot",
    "won't": "will not",
    "wouldn't": "would not",
    "couldn't": "could not",
    "shouldn't": "should not",
    "haven't": "has not",
    "have not": "has not",
    "hadn't": "had not",
    "wasn't": "was not",
    "weren't": "was not",
    "aren't": "is not",
    "ain't": "is not",
}


def third_person_verb(verb: str) -> str:
    """'love' -> 'loves', 'study' -> 'studies'; past tense and modals stay as they are."""
    low = verb.lower()
    if low in _THIRD_IRREGULAR:
        return _THIRD_IRREGULAR[low]
    if (
        not low.isalpha()
        or low in _PAST_OR_FIXED
        or low in _NOT_VERB
        or (low.endswith("ed") and not low.endswith("eed"))
    ):
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


@dataclass(frozen=True, slots=True)
class _Person:
    """The pronoun forms of one grammatical person, for rewriting to a name."""

    subject: str  # "I" or "you" as a regex alternative
    be: str  # contraction/long forms of the verb "be" in the present tense
    was: str
    have: str
    would: str
    will: str
    objects: str  # object and reflexive forms that become the name
    possessive: str


_FIRST = _Person(
    subject=r"(?<![\w.'/-])[Ii](?![\w/-]|\.\w)",
    be=r"(?<![\w.'/-])[Ii](?:\s*'m| am)\b",
    was=r"(?<![\w.'/-])[Ii] was\b",
    have=r"(?<![\w.'/-])[Ii](?:'ve| have)\b",
    would=r"(?<![\w.'/-])[Ii]'d\b",
    will=r"(?<![\w.'/-])[Ii](?:'ll)\b",
    objects=r"\b(?:[Mm]e)\b",
    possessive=r"\b(?:[Mm]y|[Mm]ine)\b",
)
_SECOND = _Person(
    subject=r"\b[Yy]ou\b",
    be=r"\b[Yy]ou(?:'re| are)\b",
    was=r"\b[Yy]ou were\b",
    have=r"\b[Yy]ou(?:'ve| have)\b",
    would=r"\b[Yy]ou'd\b",
    will=r"\b[Yy]ou'll\b",
    objects=r"\b(?:[Yy]ou)\b",
    possessive=r"\b(?:[Yy]our|[Yy]ours)\b",
)
_REFLEXIVE = {"first": re.compile(r"\b[Mm]yself\b"), "second": re.compile(r"\b[Yy]ourself\b")}
_NEG_ALT = "|".join(sorted((re.escape(k) for k in _NEGATIONS), key=len, reverse=True))
_Replacement = str | Callable[[re.Match[str]], str]
_NAME_SLOT = "\x01"


def _negated(m: re.Match[str]) -> str:
    return f"{_NAME_SLOT} {m.group(1)}{_NEGATIONS[m.group(2).lower()]}"


def _conjugated(m: re.Match[str]) -> str:
    return f"{_NAME_SLOT} {m.group(1)}{third_person_verb(m.group(2))}"


# The rewrites of one person, in order (pattern, replacement), and the wording of their
# gates. Gates see the words of the claim as given: the words the rewrites put in ("is",
# "does not", "themself", a verb plus "s") are never a pronoun a later gate waits for (bar
# "yours" from "your", which the same gate already admits).
_PERSON_WORDING = {
    "first": (
        *("i'm|i am", "i was", "i've|i have", "i'd", "i'd", "i'll"),
        "|".join(f"i {negation}" for negation in _NEGATIONS),
        *("i", "myself", "i", "my|mine", "me"),
    ),
    "second": (
        *("you're|you are", "you were", "you've|you have", "you'd", "you'd", "you'll"),
        "|".join(f"you {negation}" for negation in _NEGATIONS),
        *("you", "yourself", "you", "your|yours", "you"),
    ),
}
_PERSON_STEPS: dict[str, tuple[tuple[re.Pattern[str], _Replacement], ...]] = {}
_PERSON_GATES: dict[str, _Gates] = {}
for _key, _p in (("first", _FIRST), ("second", _SECOND)):
    # Matches of "I" start with it: saying so first spares the lookbehinds at every position.
    _i = "(?=[Ii])" if _key == "first" else ""
    _steps: tuple[tuple[re.Pattern[str], _Replacement], ...] = (
        (re.compile(_i + _p.be), f"{_NAME_SLOT} is"),
        (re.compile(_i + _p.was), f"{_NAME_SLOT} was"),
        (re.compile(_i + _p.have), f"{_NAME_SLOT} has"),
        (
            re.compile(
                _i + _p.would + r"(?=\s+(?:been|had|gone|done|already|never|just|seen|met)\b)"
            ),
            f"{_NAME_SLOT} had",
        ),
        (re.compile(_i + _p.would), f"{_NAME_SLOT} would"),
        (re.compile(_i + _p.will), f"{_NAME_SLOT} will"),
        (
            re.compile(_i + _p.subject + r"\s+(" + _ADVERB + r"*)(" + _NEG_ALT + r")\b", re.I),
            _negated,
        ),
        # "my sister and I love ..." keeps the plural verb
        (
            re.compile(_i + r"(?<!\band )" + _p.subject + r"\s+(" + _ADVERB + r"*)([A-Za-z]+)\b"),
            _conjugated,
        ),
        (_REFLEXIVE[_key], "themself"),
        (re.compile(_i + _p.subject), _NAME_SLOT),
        (re.compile(_p.possessive), f"{_NAME_SLOT}'s"),
        (re.compile(_p.objects), _NAME_SLOT),
    )
    _PERSON_STEPS[_key] = _steps
    _PERSON_GATES[_key] = _Gates([_gate(wording) for wording in _PERSON_WORDING[_key]])
    assert len(_PERSON_GATES[_key]) == len(_steps)
_WE_RULES = (
    (r"\b[Ww]e(?:'re| are)\b", "we're|we are", "{n} and others are"),
    (r"\b[Ww]e(?:'ve| have)\b", "we've|we have", "{n} and others have"),
    (r"\b[Ww]e'll\b", "we'll", "{n} and others will"),
    (r"\b[Ww]e'd\b", "we'd", "{n} and others would"),
    (r"\b[Ww]e\b", "we", "{n} and others"),
    (r"\bus\b", "us", "{n} and others"),
    (r"\b[Oo]urs?\b", "our|ours", "{n}'s"),
    (r"\b[Oo]urselves\b", "ourselves", "themselves"),
)
_WE = tuple(
    (re.compile(pattern), template.format(n=_NAME_SLOT)) for pattern, _, template in _WE_RULES
)
_WE_GATES = _Gates([_gate(wording) for _, wording, _ in _WE_RULES])
# The words a _WE pattern needs, and the words the verb rewrite turns into one of those
# ("I u" -> "us", "our" -> "ours", "ourselve" -> "ourselves"): a claim with none of these
# has no "we" to rewrite. (Other rewrites only put in "is", "has", "does not", "themself"...)
_WE_SOURCES = _wordset("we us our ours ourselves u ourselve")


def to_third_person(claim: str, name: str, person: str = "first") -> str:
    """Rewrite first-person (or, for assistant turns, second-person) references to ``name``."""
    return _third_person(claim, name, person, _words_of(claim))


def _third_person(claim: str, name: str, person: str, words: frozenset[str]) -> str:
    steps = _PERSON_STEPS[person]
    # A placeholder, not the name, goes in first: later patterns must not rewrite
    # pronoun-like words inside a name (a speaker called "Me" or "My Tran").
    out = claim.replace(_NAME_SLOT, " ")
    admitted = _PERSON_GATES[person].admitting(words, claim)
    for i in admitted:
        pattern, replacement = steps[i]
        out = pattern.sub(replacement, out)
    if person == "first" and not _WE_SOURCES.isdisjoint(words):
        # gated on the words of the rewritten claim: the verb rewrite can make an "us"
        for i in _WE_GATES.admitting(_words_of(out) if admitted else words, out):
            pattern, template = _WE[i]
            out = pattern.sub(template, out)
    return out.replace(_NAME_SLOT, name)


# --- dates ------------------------------------------------------------------------------

_MONTHS = MONTH_NAMES
_MONTH_NUM = MONTH_NUMBERS
_WEEKDAYS = WEEKDAYS
_NUMBERS = {**NUMBER_WORDS, "a couple of": 2, "a couple": 2, "couple of": 2}
_NUM = r"(?P<n>\d{1,4}|a couple of|a couple|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?P<unit>day|weekend|week|month|year)s?"
_WD = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MON = r"(?P<mon>january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_PREP = r"(?:\b(?P<prep>on|in|by|until|till|through|since|before|after|from|during)\s+)?"
_FUTURE = re.compile(
    r"\b(?:will|shall|going to|gonna|plan(?:s|ning)? to|intends? to|next|tomorrow|upcoming|scheduled|about to|"
    r"(?:am|is|are) (?!\w+ing\s+to\b)\w+ing)\b|'ll\b",
    re.I,
)
_IRREGULAR_PAST = sorted(
    _PAST_OR_FIXED - _wordset("can will shall should may might must ought set let put cut hit read")
)
_PAST = re.compile(
    r"\b(?:" + "|".join(_IRREGULAR_PAST) + r"|did|ago|yesterday|last)\b"
    r"|(?<!\bis )(?<!\bam )(?<!\bare )(?<!'m )(?<!'re )(?<!\bbe )\b\w{2,}(?<!e)ed\b",
    re.I,
)
_FUTURE_GATES = (
    _gate(
        "will|shall|going to|gonna|plan to|plans to|planning to|intend to|intends to|next|"
        "tomorrow|upcoming|scheduled|about to|'ll"
    ),
    _gate("am|is|are", also=_gate(parts="ing")),
)
# _PAST matches where a word is one of _PAST_WORDS, or else where _PAST_ED matches.
_PAST_WORDS = frozenset(_IRREGULAR_PAST) | {"did", "ago", "yesterday", "last"}
_PAST_ED = _Caseless(
    re.compile(
        r"\b(?<!\bis )(?<!\bam )(?<!\bare )(?<!'m )(?<!'re )(?<!\bbe )\w{2,}(?<!e)ed\b", re.I
    )
)
_FUTURE_ANY = _Caseless(_FUTURE)
# _FUTURE matches where one of these is a word (they are alternatives of it on their own).
_FUTURE_WORDS = _wordset("will shall gonna next tomorrow upcoming scheduled")
_OPEN, _CLOSE = "\x02", "\x03"  # brackets around dates we wrote, so they are not parsed twice


@dataclass(frozen=True, slots=True)
class Dated:
    """A claim with its dates resolved against the event time."""

    text: str
    valid_from: datetime | None
    valid_until: datetime | None

    @property
    def has_date(self) -> bool:
        return self.valid_from is not None or self.valid_until is not None


@dataclass(frozen=True, slots=True)
class _Span:
    start: date
    end: date  # exclusive
    plain: str  # absolute wording, e.g. "7 May 2023" or "the week before 8 May 2023"
    prep: str  # the preposition the plain wording needs when the speaker gave none


def _fmt(d: date) -> str:
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def _month_start(d: date, delta: int) -> date:
    index = d.year * 12 + d.month - 1 + delta
    return date(index // 12, index % 12 + 1, 1)


def _day(d: date, prep: str = "on") -> _Span:
    return _Span(d, d + timedelta(days=1), _fmt(d), prep)


def _month(d: date, delta: int) -> _Span:
    start = _month_start(d, delta)
    return _Span(start, _month_start(start, 1), f"{_MONTHS[start.month - 1]} {start.year}", "in")


def _year(year: int) -> _Span:
    return _Span(date(year, 1, 1), date(year + 1, 1, 1), str(year), "in")


def _weekday_before(d: date, wd: int) -> date:
    return d - timedelta(days=(d.weekday() - wd - 1) % 7 + 1)


def _weekday_after(d: date, wd: int) -> date:
    return d + timedelta(days=(wd - d.weekday() - 1) % 7 + 1)


def _count(m: re.Match[str]) -> int:
    raw = m.group("n").lower()
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _shift(d: date, unit: str, n: int) -> _Span:
    if unit == "day":
        return _day(d + timedelta(days=n))
    if unit == "weekend":
        # the n-th weekend back (or ahead) from the one nearest before (after) d
        sat = _weekday_before(d, 5) if n < 0 else _weekday_after(d, 5)
        return _weekend(sat + timedelta(weeks=n + 1 if n < 0 else n - 1))
    if unit == "week":
        when = d + timedelta(weeks=n)
        return _Span(when, when + timedelta(days=7), f"the week of {_fmt(when)}", "in")
    if unit == "month":
        return _month(d, n)
    return _year(d.year + n)


def _weekend(sat: date) -> _Span:
    return _Span(sat, sat + timedelta(days=2), f"the weekend of {_fmt(sat)}", "on")


def _week(start: date, plain: str) -> _Span:
    return _Span(start, start + timedelta(days=7), plain, "in")


_Resolver = Callable[[re.Match[str], date, bool], _Span]


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


_RELATIVE: tuple[tuple[re.Pattern[str], _Resolver], ...] = tuple(
    (re.compile(_PREP + pattern + r"\b", re.I), resolver)
    for pattern, resolver in (
        (r"\bthe day before yesterday", lambda m, d, f: _day(d - timedelta(days=2))),
        (r"\bthe day after tomorrow", lambda m, d, f: _day(d + timedelta(days=2))),
        (
            r"\byesterday(?: (?:morning|afternoon|evening|night))?",
            lambda m, d, f: _day(d - timedelta(days=1)),
        ),
        (r"\blast night", lambda m, d, f: _day(d - timedelta(days=1))),
        (r"\b(?:tonight|today|this (?:morning|afternoon|evening))", lambda m, d, f: _day(d)),
        (
            r"\btomorrow(?: (?:morning|afternoon|evening|night))?",
            lambda m, d, f: _day(d + timedelta(days=1)),
        ),
        (
            r"\b" + _NUM + r" " + _UNIT + r" ago",
            lambda m, d, f: _shift(d, m.group("unit").lower(), -_count(m)),
        ),
        (
            r"\b" + _NUM + r" " + _UNIT + r" from now",
            lambda m, d, f: _shift(d, m.group("unit").lower(), _count(m)),
        ),
        (
            r"\b(?:last|this past|the past|past) weekend",
            lambda m, d, f: _weekend(
                _weekday_before(d, 5) - timedelta(days=7 if d.weekday() == 6 else 0)
            ),
        ),
        (
            r"\bthis weekend",
            lambda m, d, f: _weekend(
                d - timedelta(days=1) if d.weekday() == 6 else _monday(d) + timedelta(days=5)
            ),
        ),
        (r"\bnext weekend", lambda m, d, f: _weekend(_weekday_after(d, 5))),
        (
            r"\b(?:last|the previous|the past) week",
            lambda m, d, f: _week(_monday(d) - timedelta(days=7), f"the week before {_fmt(d)}"),
        ),
        (r"\bthis week", lambda m, d, f: _week(_monday(d), f"the week of {_fmt(_monday(d))}")),
        (
            r"\b(?:next|the following|the coming) week",
            lambda m, d, f: _week(_monday(d) + timedelta(days=7), f"the week after {_fmt(d)}"),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?month",
            lambda m, d, f: _Span(
                _month_start(d, 1) - timedelta(days=1),
                _month_start(d, 1),
                f"the end of {_MONTHS[d.month - 1]} {d.year}",
                "at",
            ),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?year",
            lambda m, d, f: _Span(
                date(d.year, 12, 31), date(d.year + 1, 1, 1), f"the end of {d.year}", "at"
            ),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?week",
            lambda m, d, f: _Span(
                _monday(d) + timedelta(days=6),
                _monday(d) + timedelta(days=7),
                f"the end of the week of {_fmt(_monday(d))}",
                "at",
            ),
        ),
        (r"\b(?:last|the previous) month", lambda m, d, f: _month(d, -1)),
        (r"\bthis month", lambda m, d, f: _month(d, 0)),
        (r"\bnext month", lambda m, d, f: _month(d, 1)),
        (r"\b(?:last|the previous) year", lambda m, d, f: _year(d.year - 1)),
        (r"\bthis year", lambda m, d, f: _year(d.year)),
        (r"\bnext year", lambda m, d, f: _year(d.year + 1)),
        (
            r"\b(?:last|this past|past) " + _WD,
            lambda m, d, f: _day(_weekday_before(d, _WEEKDAYS.index(m.group("wd").lower()))),
        ),
        (
            r"\bnext " + _WD,
            lambda m, d, f: _day(_weekday_after(d, _WEEKDAYS.index(m.group("wd").lower()))),
        ),
        (
            r"\bthis " + _WD,
            lambda m, d, f: _day(
                _monday(d) + timedelta(days=_WEEKDAYS.index(m.group("wd").lower()))
            ),
        ),
        (
            r"(?<!\bevery )\b" + _WD + r"(?!s)",
            lambda m, d, f: _day(
                (_weekday_after if f else _weekday_before)(
                    d, _WEEKDAYS.index(m.group("wd").lower())
                )
            ),
        ),
        (
            r"\bin " + _NUM + r" " + _UNIT,
            lambda m, d, f: _shift(d, m.group("unit").lower(), _count(m)),
        ),
    )
)


def _infer_year(d: date, month: int, day: int, future: bool) -> date:
    when = date(d.year, month, day)
    if future and when < d:
        return date(d.year + 1, month, day)
    if not future and when > d:
        return date(d.year - 1, month, day)
    return when


def _explicit_day(m: re.Match[str], d: date, f: bool) -> _Span:
    month = _MONTH_NUM[m.group("mon").lower().rstrip(".")]
    day = int(m.group("day"))
    year = m.group("year")
    return _day(date(int(year), month, day) if year else _infer_year(d, month, day, f))


def _numeric_day(m: re.Match[str], d: date, f: bool) -> _Span:
    year = int(m.group("year"))
    return _day(
        date(year + 2000 if year < 100 else year, int(m.group("month")), int(m.group("day")))
    )


def _bare_month(m: re.Match[str], d: date, f: bool) -> _Span:
    month = _MONTH_NUM[m.group("mon").lower().rstrip(".")]
    start = _infer_year(d.replace(day=1), month, 1, f)
    return _month(start, 0)


_EXPLICIT: tuple[tuple[re.Pattern[str], _Resolver], ...] = (
    (
        re.compile(_PREP + r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
        lambda m, d, f: _day(
            date(int(m.group("year")), int(m.group("month")), int(m.group("day")))
        ),
    ),
    (
        re.compile(
            _PREP + r"\b" + _MON + r" (?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?:,? (?P<year>\d{4})\b)?",
            re.I,
        ),
        _explicit_day,
    ),
    (
        re.compile(
            _PREP
            + r"\b(?:the )?(?P<day>\d{1,2})(?:st|nd|rd|th)? (?:of )?"
            + _MON
            + r"(?:,? (?P<year>\d{4})\b)?",
            re.I,
        ),
        _explicit_day,
    ),
    (
        re.compile(_PREP + r"\b" + _MON + r",? (?P<year>(?:19|20)\d{2})\b", re.I),
        lambda m, d, f: _month(
            date(int(m.group("year")), _MONTH_NUM[m.group("mon").lower().rstrip(".")], 1), 0
        ),
    ),
    (
        # a bare month needs its capital: "in May", never the verb "may"
        re.compile(
            r"\b(?P<prep>in|since|until|till|by|during|from|before|after) (?P<mon>(?-i:January|February|March|"
            r"April|May|June|July|August|September|October|November|December))\b",
            re.I,
        ),
        _bare_month,
    ),
    (
        re.compile(_PREP + r"\b(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4}|\d{2})\b"),
        _numeric_day,
    ),
    (
        re.compile(
            r"\b(?P<prep>in|since|until|till|by|during|from|before|after) (?P<year>(?:19|20)\d{2})\b",
            re.I,
        ),
        lambda m, d, f: _year(int(m.group("year"))),
    ),
)
_DURATION = re.compile(r"\bfor (?:the (?:past|last) )?" + _NUM + r" " + _UNIT + r"\b", re.I)
_PERFECT = re.compile(
    r"\b(?:has|have|had|'ve) been\b|\b(?:has|have|'ve) (?:\w+ed|known|had|lived|worked)\b", re.I
)


# Gates of the date patterns above, in the same order, asked about the whole claim. Patterns
# run on the pieces of the claim outside dates already written, which are pieces of the
# claim itself, and every pattern but one starts and ends at a word boundary, so the words
# of a piece are words of the claim. The one, "(the) 7(th) (of) May" without a year, can end
# inside a word ("5th of Mayhem"), leaving a piece that starts mid-word: the gates after it
# ask only for digits, parts, and words the pattern needs after a space ("in May").
_UNIT_WORDS = "day|days|weekend|weekends|week|weeks|month|months|year|years"
_UNITS = _gate(_UNIT_WORDS)
_DIGITS = _gate(digit=True)
_MONTH_WORDS = "|".join(_MONTHS) + "|" + "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_MONTH_PARTS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_RELATIVE_GATES: tuple[_Gate, ...] = (
    _gate("the day before yesterday"),
    _gate("the day after tomorrow"),
    _gate("yesterday"),
    _gate("last night"),
    _gate("tonight|today|this morning|this afternoon|this evening"),
    _gate("tomorrow"),
    _gate("ago", also=_UNITS),
    _gate("from now", also=_UNITS),
    _gate("last weekend|past weekend"),
    _gate("this weekend"),
    _gate("next weekend"),
    _gate("last week|the previous week|the past week"),
    _gate("this week"),
    _gate("next week|the following week|the coming week"),
    _gate("end of month|end of the month|end of this month"),
    _gate("end of year|end of the year|end of this year"),
    _gate("end of week|end of the week|end of this week"),
    _gate("last month|the previous month"),
    _gate("this month"),
    _gate("next month"),
    _gate("last year|the previous year"),
    _gate("this year"),
    _gate("next year"),
    _gate("|".join(f"last {day}|past {day}" for day in _WEEKDAYS)),
    _gate("|".join(f"next {day}" for day in _WEEKDAYS)),
    _gate("|".join(f"this {day}" for day in _WEEKDAYS)),
    _gate("|".join(_WEEKDAYS)),
    _gate(_UNIT_WORDS, also=_gate("in")),
)
_EXPLICIT_GATES: tuple[_Gate, ...] = (
    _gate(digit=True, also=_gate(parts="-")),  # 2023-05-07
    _gate(_MONTH_WORDS, also=_DIGITS),  # May 7(th)(, 2023)
    _gate(digit=True, also=_gate(parts=_MONTH_PARTS)),  # (the) 7(th) (of) May(, 2023)
    _gate(digit=True, also=_gate(parts=_MONTH_PARTS)),  # May(,) 2023
    _gate("|".join(_MONTHS)),  # in May
    _gate(digit=True, also=_gate(parts="/")),  # 5/7/2023
    _DIGITS,  # in 2023
)
_DURATION_GATE = _gate(_UNIT_WORDS, also=_gate("for"))
assert len(_RELATIVE_GATES) == len(_RELATIVE) and len(_EXPLICIT_GATES) == len(_EXPLICIT)
_PLAIN_DATE_PATTERNS = (*_RELATIVE, *_EXPLICIT)
# Every date match starts at the start of a word: saying so first makes the scan quicker.
_DATE_PATTERNS = tuple(
    (re.compile(r"\b(?=\w)" + pattern.pattern, pattern.flags), resolver)
    for pattern, resolver in _PLAIN_DATE_PATTERNS
)
_DATE_GATES = _Gates((*_RELATIVE_GATES, *_EXPLICIT_GATES, _DURATION_GATE))
_DURATION_AT = len(_DATE_PATTERNS)  # the index of the duration gate
_BRACKETED = re.compile(f"({_OPEN}[^{_CLOSE}]*{_CLOSE})")


def resolve_dates(text: str, occurred_at: datetime, *, gated: bool = True) -> Dated:
    """Rewrite relative dates to absolute ones and derive validity bounds.

    "yesterday" said on 8 May 2023 becomes "on 7 May 2023" with valid_from 2023-05-07;
    "until Friday" sets valid_until to the end of that Friday; "since 2019" sets
    valid_from. Explicit dates stay as written. Bounds carry the turn's timezone.

    ``gated=False`` tries every pattern on every claim instead of only those whose
    gate passes; the result is the same (benchmarks use it as the baseline).
    """
    return _resolve_dates(text, occurred_at, _words_of(text) if gated else None)


def _resolve_dates(text: str, occurred_at: datetime, words: frozenset[str] | None) -> Dated:
    """resolve_dates, gated on the ``words`` of ``text``, or not gated if None."""
    gated = words is not None
    if words is None:
        words = frozenset()
        admitted = list(range(_DURATION_AT + 1))
    else:
        admitted = _DATE_GATES.admitting(words, text)
        if not admitted:  # no date here: the usual case
            return Dated(text.replace(_OPEN, "").replace(_CLOSE, ""), None, None)
    today = occurred_at.date()
    # an undated weekday or day of month lies ahead unless the claim is in the past tense;
    # worked out on the first date found (most claims that reach here have none)
    tense: list[bool] = []

    def future() -> bool:
        if tense:
            return tense[0]
        if not gated:
            tense.append(bool(_FUTURE.search(text)) or not _PAST.search(text))
            return tense[0]
        ahead = not _FUTURE_WORDS.isdisjoint(words) or (
            any(gate.admits(words, text) for gate in _FUTURE_GATES) and _FUTURE_ANY.found(text)
        )
        # a past-tense word is a match of _PAST's first half; else only "-ed" can match
        past = not _PAST_WORDS.isdisjoint(words) or ("ed" in _fold(text) and _PAST_ED.found(text))
        tense.append(ahead or not past)
        return tense[0]

    starts: list[date] = []
    ends: list[date] = []

    def note(span: _Span, prep: str | None) -> None:
        prep = (prep or "").lower()
        if prep in ("until", "till", "through", "by"):
            if prep != "by":
                ends.append(span.end)
        elif prep == "before":
            ends.append(span.start)
        elif prep == "after":
            starts.append(span.end)
        else:
            starts.append(span.start)

    def relative(resolver: _Resolver) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            prep = m.group("prep")
            bound = (prep or "").lower() in ("until", "till", "through", "by")
            ahead = bound or future()
            # "from Monday until Wednesday": the end is counted from the start
            anchor = starts[-1] if bound and starts and starts[-1] > today else today
            try:
                span = resolver(m, anchor, ahead)
            except (ValueError, OverflowError, KeyError):
                return m.group(0)
            note(span, prep)
            lead = prep if prep and prep.lower() not in ("on", "in", "during") else span.prep
            return f"{_OPEN}{lead} {span.plain}{_CLOSE}"

        return sub

    def explicit(resolver: _Resolver) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            bound = (m.group("prep") or "").lower() in ("until", "till", "through", "by")
            ahead = bound or future()
            try:
                span = resolver(m, today, ahead)
            except (ValueError, OverflowError, KeyError):
                return m.group(0)
            note(span, m.group("prep"))
            return f"{_OPEN}{m.group(0)}{_CLOSE}"

        return sub

    out = text
    for i in admitted:
        if i == _DURATION_AT:
            continue
        pattern, resolver = (_DATE_PATTERNS if gated else _PLAIN_DATE_PATTERNS)[i]
        sub = relative(resolver) if i < len(_RELATIVE) else explicit(resolver)
        if _OPEN not in out:
            out = pattern.sub(sub, out)
            continue
        # dates already written are bracketed and never parsed again
        out = "".join(
            piece if piece.startswith(_OPEN) else pattern.sub(sub, piece)
            for piece in _BRACKETED.split(out)
        )
    if not starts and admitted[-1] == _DURATION_AT and _PERFECT.search(text):
        duration = _DURATION.search(text)
        if duration:
            with contextlib.suppress(ValueError, OverflowError):
                starts.append(
                    _shift(today, duration.group("unit").lower(), -_count(duration)).start
                )
    out = out.replace(_OPEN, "").replace(_CLOSE, "")
    tz = occurred_at.tzinfo

    def at(d: date | None) -> datetime | None:
        return None if d is None else datetime.combine(d, time(0), tzinfo=tz)

    valid_from = starts[0] if starts else None
    valid_until = ends[0] if ends else None
    if valid_from is not None and valid_until is not None and valid_until < valid_from:
        valid_until = None
    return Dated(out, at(valid_from), at(valid_until))


# --- entities -----------------------------------------------------------------------------

_TECH = {
    "python": "Python",
    "rust": "Rust",
    "golang": "Go",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "react": "React",
    "django": "Django",
    "flask": "Flask",
    "fastapi": "FastAPI",
    "postgres": "Postgres",
    "postgresql": "PostgreSQL",
    "mysql": "MySQL",
    "sqlite": "SQLite",
    "redis": "Redis",
    "kafka": "Kafka",
    "docker": "Docker",
    "kubernetes": "Kubernetes",
    "k8s": "Kubernetes",
    "aws": "AWS",
    "gcp": "GCP",
    "azure": "Azure",
    "linux": "Linux",
    "macos": "macOS",
    "vim": "Vim",
    "neovim": "Neovim",
    "emacs": "Emacs",
    "vscode": "VS Code",
    "git": "Git",
    "github": "GitHub",
    "gitlab": "GitLab",
    "terraform": "Terraform",
    "node.js": "Node.js",
    "nodejs": "Node.js",
    "java": "Java",
    "kotlin": "Kotlin",
    "c++": "C++",
    "c#": "C#",
    "php": "PHP",
    "duckdb": "DuckDB",
    "qdrant": "Qdrant",
    "numpy": "NumPy",
    "pytorch": "PyTorch",
    "tensorflow": "TensorFlow",
    "openai": "OpenAI",
    "chatgpt": "ChatGPT",
    "mongodb": "MongoDB",
    "elasticsearch": "Elasticsearch",
    "graphql": "GraphQL",
    "next.js": "Next.js",
    "vue": "Vue",
    "svelte": "Svelte",
    "angular": "Angular",
    "bigquery": "BigQuery",
    "haskell": "Haskell",
    "scala": "Scala",
    "elixir": "Elixir",
    "jupyter": "Jupyter",
    "pytest": "pytest",
    "mypy": "mypy",
    "ubuntu": "Ubuntu",
    "debian": "Debian",
    "ios": "iOS",
    "android": "Android",
    "faust": "Faust",
    "airflow": "Airflow",
    "pandas": "pandas",
}
_TECH_RE = "|".join(sorted((re.escape(k) for k in _TECH), key=len, reverse=True))
_AMBIGUOUS_TECH = _wordset(
    "rust react java vue angular faust scala elixir airflow pandas git node swift go android"
)
_NOT_ENTITY = (
    _wordset("""the a an my our your his her their its this that these those it he she they we you i i'm i've i'll
    i'd user assistant and but or so if then when while after before because since also just yes no ok
    okay hi hello hey thanks thank well oh wow today yesterday tomorrow tonight last next this every
    what why how where who which there here some any all both each many much more most few other such
    mr mrs ms dr english""")
    | {w.lower() for w in _MONTHS}
    | set(_WEEKDAYS)
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w+#&.'-]*[\w+#]|[A-Za-z0-9]")
# A token is a tech name only if, lowercased, it is one of these (with or without "'s").
_TECH_FORMS = frozenset(_TECH) | {f"{name}'s" for name in _TECH}
_TECH_ENDS = frozenset(_WORD.findall(name)[-1] for name in _TECH)
_TOKEN_SPLIT = re.compile(f"({_TOKEN.pattern})")
_CONNECTORS = frozenset({"of", "de", "du", "van", "von", "da", "del", "la", "le", "y", "&"})


def _unpossessed(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word


def _tech(word: str) -> str | None:
    canonical = _TECH.get(word.lower())
    # "rust", "react" and friends are ordinary words unless capitalised
    if canonical is None or (word.lower() in _AMBIGUOUS_TECH and not word[:1].isupper()):
        return None
    return canonical


def find_entities(text: str, known: Sequence[str] = ()) -> tuple[str, ...]:
    """Capitalised names (multi-word runs like "New York"), known tech names and
    ``known`` names (speakers) in order of appearance, deduplicated case-insensitively."""
    return _find_entities(text, known, None)


@functools.lru_cache(maxsize=64)
def _known_fold(known: tuple[str, ...]) -> dict[str, str]:
    return {k.casefold(): k for k in known if k}


def _find_entities(
    text: str, known: Sequence[str], text_words: frozenset[str] | None
) -> tuple[str, ...]:
    """find_entities, told the words of ``text`` (_words_of) if they are known already."""
    # tokens and what lies between them: parts[2 * k] is the text before token k
    parts = _TOKEN_SPLIT.split(text)
    toks = parts[1::2]
    techs: list[str | None] = [None] * len(toks)
    # A token naming a tech ends in the last word of that name, a whole word when the text
    # is ASCII without "_" (the only word characters that can come right before a token).
    if (
        text_words is None
        or not text.isascii()
        or "_" in text
        or not _TECH_ENDS.isdisjoint(text_words)
    ):
        lows = [tok.lower() for tok in toks]
        if not _TECH_FORMS.isdisjoint(lows):
            techs = [
                _tech(_unpossessed(tok)) if low in _TECH_FORMS else None
                for tok, low in zip(toks, lows, strict=True)
            ]
    known_fold = _known_fold(known) if isinstance(known, tuple) else _known_fold(tuple(known))
    found: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        name = _unpossessed(name.strip(" .'-"))
        if not name or name.casefold() in _NOT_ENTITY:
            return
        canonical = _tech(name) or known_fold.get(name.casefold(), name)
        if canonical.casefold() not in seen:
            seen.add(canonical.casefold())
            found.append(canonical)

    i = 0
    # only a tech name or a capitalised token can start an entity
    for start in [k for k, tok in enumerate(toks) if tok[0].isupper() or techs[k]]:
        if start < i:
            continue  # taken into the run before
        i = start
        tok = toks[i]
        if techs[i]:
            add(tok)
            i += 1
            continue
        run = [i]
        j = i + 1
        while j < len(toks) and not toks[run[-1]].endswith("'s"):
            word = toks[j]
            if parts[2 * j] != " " or techs[j]:
                break
            if word[0].isupper():
                run.append(j)
                j += 1
            elif (
                word in _CONNECTORS
                and j + 1 < len(toks)
                and toks[j + 1][0].isupper()
                and parts[2 * j + 2] == " "
            ):
                run.extend((j, j + 1))
                j += 2
            else:
                break
        words = [toks[k] for k in run]
        while words and _unpossessed(words[0]).lower() in _NOT_ENTITY:
            words.pop(0)
        while words and _unpossessed(words[-1]).lower() in _NOT_ENTITY:
            words.pop()
        if words:
            phrase = _unpossessed(" ".join(words))
            # a lone capitalised first word is usually just a sentence start ("Painting is ...")
            lone = (
                len(words) == 1
                and words[0] == tok
                and not any(c.isupper() for c in phrase[1:])
                and phrase.casefold() not in known_fold
            )
            if lone:
                # at the start of a sentence? (text before a token ends in one of [\w+#])
                gap = parts[2 * i].rstrip()
                lone = gap.endswith((".", "!", "?")) if gap else i == 0
            if not lone:
                add(phrase)
        i = j
    return tuple(found)


# --- subject and slot ---------------------------------------------------------------

_RELATIONS = (
    r"wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|sister|brother|mother|mom|mum|father|dad|"
    r"son|daughter|kids?|child|baby|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|nephew|niece|"
    r"best friend|friend|colleague|coworker|boss|manager|mentor|roommate|neighbou?r|dog|cat|pet|puppy|kitten|"
    r"horse|team|company|startup|project|family|parents|children"
)
_SUBJ = (
    r"^(?!(?-i:He|She|They|It|This|That|There|These|Those|Here|What|Who)\b)"
    r"(?P<subj>(?-i:[A-Z])[\w.-]*(?: (?-i:[A-Z])[\w.-]*){0,2}?)(?:'s (?:(?:older|younger|little|big|best|new|old) )?"
    r"(?P<rel>" + _RELATIONS + r"))?(?P<group> and others)?\s+" + _ADVERB + r"*"
)
_JOBS = (
    r"engineer|developer|programmer|designer|manager|teacher|nurse|doctor|physician|lawyer|attorney|scientist|"
    r"analyst|student|consultant|writer|author|artist|painter|musician|counselor|counsellor|therapist|architect|"
    r"accountant|researcher|professor|chef|cook|pilot|driver|firefighter|officer|journalist|editor|photographer|"
    r"founder|ceo|cto|cfo|director|intern|freelancer|entrepreneur|pharmacist|dentist|veterinarian|vet|"
    r"mechanic|electrician|plumber|carpenter|salesperson|recruiter|librarian|administrator|admin|sre|"
    r"devops|technician|assistant|barista|waiter|waitress|cashier|soldier|homemaker|retiree|lead|"
    r"specialist|coordinator|strategist|owner|marketer|producer|actor|actress|singer|dancer|coach|tutor|"
    r"instructor|psychologist|surgeon|paramedic|clerk|secretary|banker|trader|investor|economist|"
    r"statistician|mathematician|physicist|chemist|biologist|data scientist|scientist"
)
_HEAD_SKIP = _wordset("a an the my your our their his her its some more less very really much")
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern, re.I))
    for slot, pattern in (
        (
            "name",
            _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s (?:full |first |last |nick)?name is\b",
        ),
        ("name", _SUBJ + r"(?:is called|goes by|is named|wants to be called)\b"),
        ("email", _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s (?:e-?mail|email address) is\b"),
        (
            "phone",
            _SUBJ.replace(r"\s+" + _ADVERB + "*", "")
            + r"'s (?:phone|cell|mobile)(?: number)? is\b",
        ),
        ("birthday", _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s birthday is\b"),
        ("birthday", _SUBJ + r"(?:was|were) born on\b"),
        (
            "age",
            _SUBJ
            + r"(?:is|turned|just turned|will turn|turns) \d{1,3}(?: years old| years of age)?$",
        ),
        ("age", _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s age is\b"),
        (
            "job_title",
            _SUBJ
            + r"(?:is|was|works as|is working as|has been|became|is now|started as|got promoted to|was promoted to) "
            r"(?:an? |the |a senior |a junior |a lead )?(?:[\w-]+ ){0,3}(?:" + _JOBS + r")s?\b",
        ),
        (
            "job_title",
            _SUBJ.replace(r"\s+" + _ADVERB + "*", "")
            + r"'s (?:job|role|title|position|occupation|profession|job title) is\b",
        ),
        (
            "employer",
            _SUBJ
            + r"(?:(?:works?|worked|is working|has been working|has worked|started working|is employed|"
            r"was employed|was hired|got hired|got a job|got a new job|started a (?:new )?job|landed a job|"
            r"is interning|interns|is an intern|does not work|did not work|is not working)(?: \w+){0,2}? (?:at|for|by|with)\s+"
            r"|(?:joined|now works for|quit|left|was laid off from|got laid off from) (?=(?-i:[A-Z])))",
        ),
        (
            "location",
            _SUBJ
            + r"(?:lives?|lived|is living|has lived|has been living|moved|has moved|relocated|has relocated|"
            r"is based|is located|resides?|resided|is staying|is moving|will move|will be moving|is relocating|"
            r"settled|is settling|does not live|no longer lives)(?: back)? (?:in|to|at|into)\b",
        ),
        (
            "origin",
            _SUBJ + r"(?:is|was|comes|came|is originally|was originally) (?:originally )?from\b",
        ),
        ("origin", _SUBJ + r"grew up in\b"),
        (
            "relationship_status",
            _SUBJ + r"(?:is|got|just got|recently got|has been|was) (?:now |happily )?"
            r"(?:married|single|divorced|engaged|widowed|separated)\b",
        ),
        (
            "diet",
            _SUBJ
            + r"(?:is|has been|became|went) (?:a |now |strictly |fully )?(?:vegetarian|vegan|pescatarian|"
            r"keto|paleo|gluten-free|lactose intolerant|kosher|halal)\b",
        ),
        ("diet", _SUBJ + r"does not eat (?:meat|fish|dairy|gluten|pork|beef)\b"),
    )
)
_FAVORITE = re.compile(
    r"^(?P<subj>(?-i:[A-Z])[\w.-]*(?: (?-i:[A-Z])[\w.-]*){0,2}?)'s (?:all-time |absolute |current |new |personal )?"
    r"favou?rite (?P<what>[a-z][a-z -]{0,40}?) (?:is|are|was|has become|will always be)\b",
    re.I,
)
_FAVORITE_REVERSED = re.compile(
    r"^.+? (?:is|are|was|has become) (?P<subj>(?-i:[A-Z])[\w.-]*(?: (?-i:[A-Z])[\w.-]*){0,2}?)'s (?:all-time |absolute |"
    r"current |new |personal )?favou?rite (?P<what>[a-z][a-z -]{0,40}?)$",
    re.I,
)
_PREFER = re.compile(
    _SUBJ
    + r"(?:prefers|would rather|likes|loves) (?P<a>.+?)(?: (?:over|to|rather than|instead of|vs\.?|versus|"
    r"more than|better than|than) (?P<b>.+?)| for (?P<topic>.+?))?$",
    re.I,
)
_PREFER_VERB = re.compile(
    r"\bprefers\b|\bwould rather\b|\b(?:likes|loves) .+ (?:better|more) than\b", re.I
)
_USES_FOR = re.compile(
    _SUBJ + r"(?:uses|is using|relies on) (?P<a>.+?) (?:for|as) (?P<topic>.+?)$", re.I
)
_VERSION = re.compile(
    r"(?<![\w.])(?P<tech>" + _TECH_RE + r")(?: version)? v?(?P<ver>\d+(?:\.\d+){0,3})(?![\w.])"
    r"|\bversion (?P<ver2>\d+(?:\.\d+){0,3}) of (?P<tech2>" + _TECH_RE + r")(?![\w])",
    re.I,
)


# Gates of _SLOTS, in the same order.
_SLOT_GATES = _Gates(
    (
        _gate("name is|nickname is"),
        _gate("is called|goes by|is named|wants to be called"),
        _gate("e-mail is|email is|email address is"),
        _gate("phone|cell|mobile"),
        _gate("birthday is"),
        _gate("born on"),
        _gate(digit=True),
        _gate("age is"),
        _gate("|".join(f"{job}|{job}s" for job in _JOBS.split("|"))),
        _gate("job is|role is|title is|position is|occupation is|profession is|job title is"),
        _gate(
            "work|works|worked|working|employed|hired|job|interning|interns|intern|joined|quit|"
            "left|laid"
        ),
        _gate(
            "live|lives|lived|living|moved|relocated|based|located|reside|resides|resided|"
            "staying|moving|move|relocating|settled|settling"
        ),
        _gate("from"),
        _gate("grew up in"),
        _gate("married|single|divorced|engaged|widowed|separated"),
        _gate(
            "vegetarian|vegan|pescatarian|keto|paleo|gluten-free|lactose intolerant|kosher|halal"
        ),
        _gate("does not eat"),
    )
)
assert len(_SLOT_GATES) == len(_SLOTS)
_FAVORITE_GATE = _gate("favorite|favourite")
_PREFER_GATE = _gate("prefers|would rather|likes|loves")
_USES_FOR_GATE = _gate("uses|is using|relies on")


def _head(phrase: str) -> str:
    words: list[str] = [w for w in re.findall(r"[\w+#.-]+", phrase.lower()) if w not in _HEAD_SKIP]
    if not words:
        return ""
    if words[0] == "to" and len(words) > 1:
        return words[1]
    return words[-1].strip(".")


def _subject_key(match: re.Match[str], name: str, speaker_key: str) -> str:
    subj = match.group("subj")
    base = speaker_key if subj.casefold() == name.casefold() else subj.casefold()
    rel = match.groupdict().get("rel")
    return f"{base}'s {rel.lower()}" if rel else base


def detect_slot(text: str, name: str, speaker_key: str) -> tuple[str, str] | None:
    """(subject, slot) of a third-person claim, e.g. ("user", "employer"), or None.

    Slots name the question the claim answers, so "User works at Acme" and
    "User works at Initech" share ("user", "employer") and can contradict.
    """
    return _detect_slot(text, name, speaker_key, _words_of(text))


def _detect_slot(
    text: str, name: str, speaker_key: str, words: frozenset[str]
) -> tuple[str, str] | None:
    m = _FAVORITE_GATE.admits(words, text) and (
        _FAVORITE.match(text) or _FAVORITE_REVERSED.match(text)
    )
    if m:
        what = re.sub(r"[\s-]+", "_", m.group("what").strip().lower())
        return _subject_key(m, name, speaker_key), f"favorite_{what}"
    for i in _SLOT_GATES.admitting(words, text):
        slot, pattern = _SLOTS[i]
        m = pattern.match(text)
        if m:
            return _subject_key(m, name, speaker_key), slot
    m = _PREFER_GATE.admits(words, text) and _PREFER.match(text)
    if m and _PREFER_VERB.search(text):
        if m.group("b"):
            pair = sorted(h for h in (_head(m.group("a")), _head(m.group("b"))) if h)
            return _subject_key(m, name, speaker_key), "preference:" + "|".join(pair)
        topic = _head(m.group("topic") or m.group("a"))
        if topic:
            return _subject_key(m, name, speaker_key), f"preference:{topic}"
    m = _USES_FOR_GATE.admits(words, text) and _USES_FOR.match(text)
    if m and _head(m.group("topic")):
        return _subject_key(m, name, speaker_key), f"tool:{_head(m.group('topic'))}"
    v = _HAS_DIGIT in words and _VERSION.search(text)
    if v:
        tech = v.group("tech") or v.group("tech2")
        return speaker_key, f"version:{_TECH.get(tech.lower(), tech).lower()}"
    return None


# --- the pipeline -------------------------------------------------------------------

_GENERIC_USER = frozenset(
    {"", "user", "human", "me", "you", "customer", "client", "u", "person", "anonymous"}
)


def display_name(turn: TurnView) -> str:
    """Name first-person claims are rewritten to: the speaker, or "User" if unnamed."""
    return _display_name(turn.speaker, turn.role)


@functools.lru_cache(maxsize=1024)
def _display_name(speaker: str, role: str) -> str:
    speaker = " ".join(speaker.split())
    if speaker.casefold() in _GENERIC_USER or role != "user":
        return "User"
    return speaker.title() if speaker.islower() else speaker


@functools.lru_cache(maxsize=1024)
def _speaker_key(name: str) -> str:
    return "user" if name == "User" else (normalize(name) or "user")


class _Claim(NamedTuple):
    text: str  # original wording, markers included (for cue words)
    body: str  # what gets rewritten
    confidence: float
    forced: Category | None = None  # set when the rewrite already decided it
    words: list[str] | None = None  # _words(body), when known already


_EMOTICON_TAIL = re.compile(r"(?:\s*(?:[:;]-?[)(DPp/\\|]|<3)|\s+(?:xd|xo+))+\s*$", re.I)
_VOCATIVE_HEAD = re.compile(
    r"^(?:(?:hey|hi|hello|thanks|thank you|oh|so|well|ok|okay|wow|yes|yeah|no)[, ]+)?(?P<name>[A-Z][\w-]*)\s*,\s*"
)
_TRAILING_MARKERS = re.compile(
    r"[,\s]+(?:btw|lol|haha|tbh|fyi|though|anyway|anyways|lmao|imo)[.!?]*$", re.I
)
_VOCATIVE_TAIL = re.compile(r",\s*(?P<name>[A-Z][\w-]*)\s*$")
_GREETING = re.compile(r"^(?:hi|hello|hey|greetings)\b", re.I)
_INTRO = re.compile(r"^(?:I'm|I am|i'm|i am) (?P<n>(?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)$")
# What the anchored patterns here can match at the start of a claim (folded, where re.I).
_REQUEST_STARTS = ("please", "can", "could", "remind", "just", "call", "let")
_ORDER_STARTS = _alternatives(
    "please|always|never|do|avoid|stop|make|remember|keep|use|prefer|stick"
)
_IMPERATIVE_STARTS = _alternatives(
    "please|can you|could you|would you|will you|write|help|tell|show|give|make|create|explain|"
    "summarize|summarise|translate|fix|find|list|generate|draft|check|send|book|search|look|"
    "let me know|go ahead|try|imagine|pretend|describe|compare|recommend|suggest|rewrite|"
    "refactor|add|remove|delete|update|run|open|read|calculate|convert|edit|review|plan"
)
_HEDGE_STARTS = ("I ", "I'", "probably", "maybe", "perhaps")
_REWRITES: tuple[tuple[re.Pattern[str], str, Category | None], ...] = (
    (_REMIND_ME, "I need to {rest}", "commitment"),
    (_CALL_ME, "I want to be called {rest}", None),
    (_LETS, "I proposed to {rest}", "decision"),
)


# What _EMOTICON_TAIL and _TRAILING_MARKERS can end in (case-insensitively).
_EMOTICON_MOUTHS = frozenset(")(dDpP/\\|")
_TRAILING_WORDS = ("btw", "lol", "haha", "tbh", "fyi", "though", "anyway", "lmao", "imo", "anyways")
# What text _MARKERS matches starts with, folded.
_MARKER_STARTS = _alternatives(
    "well|so|oh|ah|um|uh|hmm|yeah|yes|yep|no|ok|anyway|also|btw|by the way|actually|honestly|"
    "basically|fyi|fun fact|guess what|wow|haha|lol|hey|hi|hello|sorry|wait|oops|plus|and|but|"
    "to be honest|tbh|then|now|correction|thank|nice to meet you|good to see you|update|"
    "just so you know|for the record|quick update"
)


def _may_end_in_emoticon(text: str) -> bool:
    """False when _EMOTICON_TAIL cannot match: it ends in ":)", ":-p", "<3", "xd" or "xoo"."""
    text = text.rstrip()
    end = text[-1:]
    if end in _EMOTICON_MOUTHS:
        eyes = text[-3:-2] if text[-2:-1] == "-" else text[-2:-1]
        if eyes in (":", ";"):
            return True
    if end in ("o", "O"):
        return text.rstrip("oO")[-1:] in ("x", "X")
    return text[-2:] == "<3" or text[-2:].lower() == "xd"


def _strip_tail(text: str) -> str:
    if _may_end_in_emoticon(text):
        text = _EMOTICON_TAIL.sub("", text)
    text = text.strip().rstrip(".!?…,;: ").strip().strip("\"'").strip()
    if _fold(text.rstrip(".!?")[-7:]).endswith(_TRAILING_WORDS):
        text = _TRAILING_MARKERS.sub("", text)
    return text


def _strip_vocatives(text: str, names: frozenset[str]) -> str:
    if "," not in text:  # both patterns need one
        return text
    m = _VOCATIVE_HEAD.match(text)
    if m and m.group("name").casefold() in names:
        text = text[m.end() :]
    m = _VOCATIVE_TAIL.search(text)
    if m and m.group("name").casefold() in names:
        text = text[: m.start()]
    return text


def _body(raw: str, names: frozenset[str]) -> str:
    # markers and vocatives interleave ("Wow, Mel, that's ..."): peel both twice
    body = raw
    for _ in range(2):
        peeled = _strip_vocatives(body, names)
        if _fold(peeled[:24]).startswith(_MARKER_STARTS):
            peeled = _MARKERS.sub("", peeled)
        peeled = peeled.strip()
        if peeled == body:
            break  # the second peel would find nothing either
        body = peeled
    return body


def _standing_order(body: str, raw: str, confidence: float, head: str) -> _Claim | None:
    """ "Always use type hints" is a rule the user sets for the assistant: keep it.

    ``head`` is the start of ``body`` folded (_fold(body[:12])).
    """
    m = _STANDING_ORDER.match(body) if head.startswith(_ORDER_STARTS) else None
    if not m or _FIRST_PERSON.match(body) or not m.group("rest").strip():
        return None
    verb = m.group("verb").lower()
    verb = "not" if verb in ("don't", "do not") else verb
    category: Category = (
        "preference" if verb in ("use", "prefer", "stick to", "stick with") else "principle"
    )
    return _Claim(
        raw, f"I want the assistant to {verb} {m.group('rest').strip()}", confidence, category
    )


def _rewrite_request(body: str, raw: str, confidence: float, head: str) -> _Claim | None:
    """Requests that still state something: "remind me to X", "call me X", "let's X"."""
    if not head.startswith(_REQUEST_STARTS):
        return None
    for pattern, template, forced in _REWRITES:
        m = pattern.match(body)
        if m:
            return _Claim(raw, template.format(rest=m.group("rest")), confidence, forced)
    return None


def _question_content(body: str) -> str | None:
    """The statement inside a question ("..., since I moved to Boston?"), if any."""
    reason = _REASON_CLAUSE.search(body)
    if reason:
        return reason.group(1)
    for piece in (p.strip() for p in body.split(",")):
        if (
            _FIRST_PERSON.match(piece)
            and not _WONDER.match(piece)
            and not _QUESTION_START.match(piece)
        ):
            return piece
    return None


def _user_claims(sentence: str, names: frozenset[str]) -> list[_Claim]:
    question = sentence.rstrip().rstrip("\"')").endswith("?")
    raw_claims = split_claims(sentence)
    out: list[_Claim] = []
    for index, raw_claim in enumerate(raw_claims):
        raw = _strip_tail(raw_claim)
        if raw.isupper() and sum(ch.isalpha() for ch in raw) > 3:
            raw = raw.lower()  # shouting: case carries no names here, and "I'M" breaks the rules
        body = _body(raw, names)
        words, worded = _words(body), body
        if not body or _is_filler(words):
            continue
        confidence = _CONF_FIRST_PERSON
        if question and index == len(raw_claims) - 1:
            content = _question_content(body)
            if content is None:
                continue
            body, confidence = content, _CONF_FROM_QUESTION
        intro = _INTRO.match(body) if body[:1] in ("I", "i") else None
        if intro and _GREETING.match(raw):
            out.append(_Claim(raw, f"my name is {intro.group('n')}", confidence))
            continue
        head = _fold(body[:12])  # for the anchored patterns below
        rewritten = _rewrite_request(body, raw, confidence, head)
        if rewritten is not None:
            out.append(rewritten)
            continue
        standing = _standing_order(body, raw, confidence, head)
        if standing is not None:
            out.append(standing)
            continue
        if (head.startswith(_IMPERATIVE_STARTS) and _IMPERATIVE.match(body)) or (
            question and _QUESTION_START.match(body)
        ):
            continue
        hedge = _HEDGE.match(body) if body.startswith(_HEDGE_STARTS) else None
        if hedge:
            body, confidence = body[hedge.end() :], _CONF_HEDGED
        elif _any_in(_HEDGE_PARTS, _fold(body)) and _HEDGE_ANY.found(body):
            confidence = _CONF_HEDGED
        out.append(_Claim(raw, body, confidence, words=words if body is worded else None))
    return out


def _assistant_claims(sentence: str) -> list[_Claim]:
    if sentence.rstrip().endswith("?"):
        return []
    out: list[_Claim] = []
    for raw in split_claims(sentence):
        raw = _strip_tail(raw)
        body = _ASSISTANT_LEAD_IN.sub("", raw).strip()
        if not re.match(r"^(?:you|your)\b", body, re.I) or _ADVICE.search(body):
            continue
        out.append(_Claim(raw, body, _CONF_ASSISTANT))
    return out


_ABOUT_ASSISTANT = frozenset({"preference", "principle", "correction"})
_RECURRING_SLOTS = frozenset({"birthday"})
_PRONOUN_OBJECT = re.compile(r"\b(?:it|that|this|them|those|these|one)\s*$", re.I)
# _EMPHASIS matches where one of these is a word, and maybe where "so" and "much" are.
_EMPHASIS_WORDS = _wordset("really very important must always never")
_SO_MUCH = _wordset("so much")
_EMPHASIS = re.compile(
    r"\b(?:really|very|so much|important|never forget|must|always|never)\b", re.I
)
_EMPHASIS_ANY = _Caseless(_EMPHASIS)


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _facts_of_turn(
    turn: TurnView,
    user_name: str,
    names: frozenset[str],
    known: tuple[str, ...],
    date_gates: bool = True,
) -> list[Fact]:
    if turn.role == "user":
        name, person = display_name(turn), "first"
    elif turn.role == "assistant":
        name, person = user_name, "second"
    else:
        return []
    speaker_key = _speaker_key(name)
    facts: list[Fact] = []
    for sentence in split_sentences(turn.text):
        claims = _user_claims(sentence, names) if person == "first" else _assistant_claims(sentence)
        for claim in claims:
            fact = _fact_of_claim(claim, turn, name, person, speaker_key, known, date_gates)
            if fact is not None:
                facts.append(fact)
    return facts


def _fact_of_claim(
    claim: _Claim,
    turn: TurnView,
    name: str,
    person: str,
    speaker_key: str,
    known: tuple[str, ...],
    date_gates: bool = True,
) -> Fact | None:
    if len(claim.body) > _MAX_CLAIM_CHARS or not any(ch.isalnum() for ch in claim.body):
        return None
    first_person = person == "first" and bool(_FIRST_PERSON.search(claim.body))
    body = claim.body
    body_words = _words_of(body)
    said_words = body_words if claim.text == body else _words_of(claim.text)
    if person == "first" and not _SECOND_PERSON_WORDS.isdisjoint(body_words):
        # "you" is the assistant when an unnamed user talks to one; a rule about how it
        # should behave is worth keeping ("I don't like it when you use bullet points").
        # Otherwise it is the other person, or small talk ("I'm so proud of you").
        category = claim.forced or _classify(claim.text, said_words)
        if name != "User" or category not in _ABOUT_ASSISTANT:
            return None
        body = _third_person(body, "the assistant", "second", body_words)
        body_words = _words_of(body)
    if first_person and not _has_content(
        claim.words if body is claim.body and claim.words is not None else _words(body)
    ):
        return None
    if len(body.split()) <= 5 and _PRONOUN_OBJECT.search(body):
        return None  # "I really enjoy it": the "it" lives in another turn
    rewritten = _third_person(body, name, person, body_words)
    rewritten_words = body_words if rewritten == body else _words_of(rewritten)
    dated = _resolve_dates(rewritten, turn.occurred_at, rewritten_words if date_gates else None)
    pieces = dated.text.split()  # capitalising the first letter splits it no differently
    text = _capitalize(" ".join(pieces))
    if len(pieces) < 3 or not any(ch.isalnum() for ch in text):
        return None  # fragments like "User's sister" are not claims
    category = claim.forced or _classify(claim.text, said_words)
    # no date written and an ASCII first letter: the words are those of ``rewritten``
    same = dated.text == rewritten and text[:1].isascii()
    text_words = rewritten_words if same else _words_of(text)
    entities = _find_entities(text, known, text_words)
    if name != "User" and name not in entities and name in text:
        entities = (name, *entities)
    slot = _detect_slot(text, name, speaker_key, text_words)
    confidence = claim.confidence
    if not first_person and person == "first":
        # a statement not about the speaker is kept only with something concrete in it: a
        # name, a date, a slot, or enough words that say something ("Leo ate eleven
        # pierogi", "the judges loved the tacos"; not "the meeting was long")
        if not (entities or dated.has_date or slot or _substantive(body)):
            return None
        confidence = min(confidence, _CONF_THIRD_PARTY)
    if person == "second" and slot is None and category == "fact" and not dated.has_date:
        return None
    if category == "correction" and person == "first":
        confidence = max(confidence, _CONF_CORRECTION)
    valid_from, valid_until = dated.valid_from, dated.valid_until
    if slot is not None and slot[1] in _RECURRING_SLOTS:
        # the date of a birthday is the slot's value, not a bound on when the fact holds
        category, valid_from, valid_until = "fact", None, None
    kind: Kind = "episode" if category == "moment" or valid_from or valid_until else "note"
    return Fact(
        category=category,
        text=text,
        confidence=round(confidence, 3),
        entities=entities,
        valid_from=valid_from,
        valid_until=valid_until,
        kind=kind,
        source_turn_ids=(turn.turn_id,),
        subject=slot[0] if slot else (speaker_key if first_person or person == "second" else None),
        slot=slot[1] if slot else None,
        importance=_importance(category, slot is not None, claim.text, said_words),
    )


def _importance(category: Category, has_slot: bool, said: str, words: frozenset[str]) -> float:
    """Category baseline, more for a known slot (it can be asked about) and emphasis."""
    importance = _IMPORTANCE.get(category, 0.5) + (0.1 if has_slot else 0.0)
    if not _EMPHASIS_WORDS.isdisjoint(words) or (words >= _SO_MUCH and _EMPHASIS_ANY.found(said)):
        importance += 0.1
    return round(min(importance, 1.0), 3)


@functools.lru_cache(maxsize=256)
def _roster(named: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The casefolded names of the speakers, and the names once each in order."""
    return frozenset(n.casefold() for n in named), tuple(dict.fromkeys(named))


def extract_rules(turns: Sequence[TurnView], *, date_gates: bool = True) -> list[Fact]:
    """Facts stated in ``turns``, in order; the same claim twice becomes one fact with
    both source turns.

    ``date_gates=False`` tries every date pattern on every claim, as before the gates
    (same facts, several times slower): the baseline of bench/bench_rule_extractor.py.
    """
    names, known = _roster(
        tuple(n for t in turns if t.role == "user" and (n := display_name(t)) != "User")
    )
    facts: list[Fact] = []
    user_name = "User"
    for turn in turns:
        if turn.role == "user":
            user_name = display_name(turn)
        facts.extend(_facts_of_turn(turn, user_name, names, known, date_gates))
    if len(facts) < 2:
        return facts
    merged: dict[str, Fact] = {}
    for fact in facts:
        key = normalize(fact.text)
        previous = merged.get(key)
        if previous is None:
            merged[key] = fact
        else:
            sources = tuple(dict.fromkeys(previous.source_turn_ids + fact.source_turn_ids))
            merged[key] = replace(
                previous,
                source_turn_ids=sources,
                confidence=max(previous.confidence, fact.confidence),
            )
    return list(merged.values())
