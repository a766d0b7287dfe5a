"""The phrase table: every accepted spelling of a phrase -> one prebuilt, immutable hit."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final, NamedTuple

from memstream.core.calendar_words import WEEKDAYS
from memstream.core.emotion import INTENSIFIERS, NEGATORS, Effect, effect
from memstream.core.emotion import LEXICON as EMOTION_LEXICON
from memstream.core.signal_tables.names import CASED_ENTITIES, ORGS, TECH
from memstream.core.signal_tables.phrases import (
    ATTENTION_PHRASES,
    COMMITMENT_PHRASES,
    CORRECTION_PHRASES,
    DECISION_PHRASES,
    FACT_PHRASES,
    INJECTION_TRIGGERS,
    NEUTRAL_PHRASES,
    PREFERENCE_PHRASES,
    STRONG_PREFERENCES,
)
from memstream.core.signal_tables.temporal import (
    AMBIGUOUS_MONTHS,
    DEADLINE_PREFIXES,
    DEADLINE_TARGETS,
    TEMPORAL_PHRASES,
    UNAMBIGUOUS_MONTHS,
)


class Evidence(NamedTuple):
    """One matched cue. NamedTuple (immutable) so hits can be prebuilt and shared."""

    kind: str  # correction | preference | decision | commitment | fact | attention | temporal
    #            | emotion | injection | system
    pattern: str  # which pattern matched: "should_be", "weekday", "negated.joy", ...
    text: str  # the matched span, verbatim from the input

    def to_dict(self) -> dict[str, str]:
        return {"pattern": self.pattern, "text": self.text}


class Entity(NamedTuple):
    name: str  # canonical ("PostgreSQL" for "postgres")
    label: str  # tech | org | name | acronym
    text: str  # verbatim from the input

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "label": self.label, "text": self.text}


# Bits of Hit.mask: which kinds a hit carries, OR-ed over a turn in one C-level reduce.
CORRECTION: Final = 1
DECISION: Final = 2
COMMITMENT: Final = 4
FACT: Final = 8
STRONG_PREFERENCE: Final = 16
WEAK_PREFERENCE: Final = 32
ATTENTION_CUE: Final = 64
TEMPORAL: Final = 128
EMOTION: Final = 256
ENTITY: Final = 512
INJECTION_TRIGGER: Final = 1024

_KIND_BIT: Final[Mapping[str, int]] = {
    "correction": CORRECTION,
    "decision": DECISION,
    "commitment": COMMITMENT,
    "fact": FACT,
    "attention": ATTENTION_CUE,
    "temporal": TEMPORAL,
    "emotion": EMOTION,
}


class Hit(NamedTuple):
    """Everything one matched phrase contributes, precomputed per exact spelling."""

    evidence: tuple[Evidence, ...] = ()
    entities: tuple[Entity, ...] = ()
    mask: int = 0
    emotion: tuple[Effect, ...] = ()  # zero or one effect (a tuple so hits chain)


NO_HIT: Final[Hit] = Hit()
Recipe = Callable[[str], Hit]  # the hit for one spelling of a phrase (its text is the spelling)

# Contractions people type without the apostrophe. Only unambiguous ones ("ill", "were" and
# "its" are real words).
_NO_APOSTROPHE: Final[tuple[tuple[str, str], ...]] = (
    ("i'm", "im"),
    ("let's", "lets"),
    ("don't", "dont"),
    ("can't", "cant"),
    ("i've", "ive"),
    ("that's", "thats"),
    ("i'd", "id"),
)
# Words written with a capital inside a phrase: calendar words and the pronoun "I".
_PROPER_WORDS: Final[frozenset[str]] = frozenset(
    {*WEEKDAYS, *UNAMBIGUOUS_MONTHS, *AMBIGUOUS_MONTHS, "i", "i'm", "i'd", "i'll", "i've"}
    - {"may", "march"}
)


def _spellings(phrase: str) -> set[str]:
    """The spellings matched verbatim: as listed, with calendar words and "I" capitalised, and
    each of those with a capital first letter (sentence start)."""
    bases = {phrase}
    for with_apostrophe, without in _NO_APOSTROPHE:
        if (
            phrase == with_apostrophe
            or phrase.startswith(with_apostrophe + " ")
            or f" {with_apostrophe} " in phrase
        ):
            bases.add(re.sub(rf"(?<![\w']){re.escape(with_apostrophe)}(?![\w'])", without, phrase))
    out: set[str] = set()
    for base in bases:
        proper = " ".join(w.capitalize() if w in _PROPER_WORDS else w for w in base.split(" "))
        for v in (base, proper):
            out.add(v)
            out.add(v[:1].upper() + v[1:])
    return out


def _tail(text: str, words: int) -> str:
    """The last ``words`` words of ``text``, verbatim."""
    return text.split(None, len(text.split()) - words)[-1]


def _signal(kind: str, name: str, phrase: str) -> Recipe:
    bit = _KIND_BIT.get(kind, 0)
    if kind == "preference":
        bit = STRONG_PREFERENCE if name in STRONG_PREFERENCES else WEAK_PREFERENCE
        words = phrase.split()
        if words[-1] in EMOTION_LEXICON:  # "I love", "I really hate": also an emotion
            word = words[-1]
            eff = effect(word, intensified=len(words) > 2 and words[-2] in INTENSIFIERS)
            cat = EMOTION_LEXICON[word][2]
            return lambda t: Hit(
                (Evidence(kind, name, t), Evidence("emotion", cat, _tail(t, 1))),
                (),
                bit | EMOTION,
                (eff,),
            )
    return lambda t: Hit((Evidence(kind, name, t),), (), bit)


def _emotion(word: str, prefix: str, negated: bool) -> Recipe:
    eff = effect(word, negated=negated, intensified=bool(prefix) and not negated)
    cat = EMOTION_LEXICON[word][2]
    pattern = ("negated." if negated else "intensified." if prefix else "") + cat
    return lambda t: Hit((Evidence("emotion", pattern, t),), (), EMOTION, (eff,))


def _deadline(prefix: str, name: str, target: str) -> Recipe:
    n = len(target.split())
    return lambda t: Hit(
        (Evidence("commitment", "deadline", t), Evidence("temporal", name, _tail(t, n))),
        (),
        COMMITMENT | TEMPORAL,
    )


def _entity(canonical: str, label: str, cased: bool) -> Recipe:
    # Cased entities ("React") are only names when capitalised; the lower-case spelling is in
    # the table too (so the case-folded slow path sees it) but yields nothing.
    def recipe(t: str) -> Hit:
        if cased and not t[:1].isupper():
            return NO_HIT
        return Hit((), (Entity(canonical, label, t),), ENTITY)

    return recipe


def _build_recipes() -> dict[str, tuple[Recipe, bool]]:
    """lower-case phrase -> (recipe, also match it capitalised). First claim wins, in priority
    order: signal cues before the emotion and entity tables."""
    out: dict[str, tuple[Recipe, bool]] = {}

    def claim(phrase: str, recipe: Recipe, capitalised: bool = True) -> None:
        out.setdefault(phrase, (recipe, capitalised))

    for phrase in NEUTRAL_PHRASES:
        claim(phrase, lambda t: NO_HIT)
    for kind, table in (
        ("correction", CORRECTION_PHRASES),
        ("decision", DECISION_PHRASES),
        ("preference", PREFERENCE_PHRASES),
        ("commitment", COMMITMENT_PHRASES),
        ("fact", FACT_PHRASES),
        ("temporal", TEMPORAL_PHRASES),
        ("attention", ATTENTION_PHRASES),
    ):
        for name, phrases in table.items():
            for p in phrases:
                claim(p, _signal(kind, name, p))
    for target, name in DEADLINE_TARGETS.items():
        for prefix in DEADLINE_PREFIXES:
            claim(f"{prefix} {target}", _deadline(prefix, name, target))
    for month in (*UNAMBIGUOUS_MONTHS, *AMBIGUOUS_MONTHS):
        for day in range(1, 32):
            suffix = (
                "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
            )
            for spelling in (f"{month} {day}", f"{month} {day}{suffix}"):
                claim(spelling, _signal("temporal", "month_day", spelling))
    for trigger in INJECTION_TRIGGERS:
        claim(trigger, lambda t: Hit(mask=INJECTION_TRIGGER))
    for word in EMOTION_LEXICON:
        if not word.isascii():
            continue  # emoji: matched on non-ASCII text only, see EMOJI_RE
        claim(word, _emotion(word, "", False))
        # Combos are most of the trie; only sentence-opening negators get a capitalised
        # spelling (an unmatched "Really happy" still counts as plain "happy").
        for neg in NEGATORS:
            claim(f"{neg} {word}", _emotion(word, neg, True), neg in ("not", "never", "no"))
        for inten in INTENSIFIERS:
            claim(f"{inten} {word}", _emotion(word, inten, False), False)
    for names, label in ((TECH, "tech"), (ORGS, "org")):
        for spelling, canonical in names.items():
            claim(spelling, _entity(canonical, label, spelling in CASED_ENTITIES))
    return out


def _build_hits() -> tuple[dict[str, Hit], dict[str, Recipe]]:
    """(exact spelling -> prebuilt hit, lower-case spelling -> recipe for the slow path)."""
    hits: dict[str, Hit] = {}
    recipes: dict[str, Recipe] = {}
    for phrase, (recipe, capitalised) in _build_recipes().items():
        for spelling in _spellings(phrase) if capitalised else (phrase,):
            hits.setdefault(spelling, recipe(spelling))
            recipes.setdefault(spelling.lower(), recipe)
    # canonical spellings of entities ("PostgreSQL", "GitHub", "macOS")
    for table in (TECH, ORGS):
        for spelling, canonical in table.items():
            hits.setdefault(canonical, recipes[spelling](canonical))
    return hits, recipes


_HITS, _RECIPES = _build_hits()
HITS: Final[Mapping[str, Hit]] = _HITS
SPELLING_RECIPES: Final[Mapping[str, Recipe]] = _RECIPES
# Emoji that carry an emotion (non-ASCII text only).
EMOJI_HITS: Final[Mapping[str, Hit]] = {
    w: _emotion(w, "", False)(w) for w in EMOTION_LEXICON if not w.isascii()
}
