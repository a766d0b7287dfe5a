"""The signal scanner: one conversation turn in, one :class:`SignalRecord` out.

``scan`` is pure and deterministic (no clock, no I/O, no state between calls). It decides
whether a turn is worth remembering (``HIGH``), ordinary (``NORMAL``) or noise (``SKIP``) and
keeps the evidence for that decision (pattern name and verbatim matched text), so the record
can travel inside events.

Speed shapes the code: the target is a median under 25 µs for a ~300-character turn on an
interpreter where one bytecode costs ~60 ns, so Python work per turn must stay around a hundred
operations. Hence:

1. a length gate and a trivial-message prefilter that return early;
2. ONE regex pass (``LEX_RE.findall``) reads every cue phrase, emotion word (with its negation
   or intensifier), calendar word, entity name and injection trigger, plus capitalised names,
   all-caps words and numbers. Each table spelling maps to a prebuilt
   :class:`~core.signal_patterns.Hit` (evidence, entities, kind bits, emotion effect) and the
   hits are folded with C-level ``map``/``chain``/``reduce``; only the few words outside the
   table (names, numbers, acronyms) get a Python loop. Shouted or curly-apostrophe text takes
   a slower path over the case-folded text that still quotes the input verbatim;
3. filters from ``in``/``str.count`` gates, with their own passes (injection, tags, code and
   markdown lines, emoji) only when a gate opens;
4. density from one whitespace split and a precomputed word-weight table; importance and the
   level from lookup tables keyed by the kind bits.

Novelty is estimated from the text alone (the scanner has no memory to compare against): the
share of tokens outside a list of frequent English words, plus numbers, temporal markers and
entities, the specifics that make a turn new information rather than chit-chat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import reduce
from itertools import chain, compress, repeat
from operator import is_, itemgetter, or_
from typing import Any, Final, Literal, NamedTuple, TypeVar, cast, get_args

from memstream.core import signal_patterns as sp
from memstream.core.emotion import NEUTRAL, Effect, Emotion, score_emotion
from memstream.core.signal_patterns import Entity, Evidence, Hit

__all__ = [
    "DEFAULT_CONFIG",
    "FILTER_FLAGS",
    "MAX_DIGIT_MARKERS",
    "Density",
    "Emotion",
    "Entity",
    "Evidence",
    "FilterFlag",
    "Importance",
    "Level",
    "ScanConfig",
    "SignalRecord",
    "scan",
]


class Level(StrEnum):
    HIGH = "HIGH"
    NORMAL = "NORMAL"
    SKIP = "SKIP"


FilterFlag = Literal[
    "empty",
    "too_short",
    "too_long",
    "trivial",
    "system",
    "markup",
    "injection",
    "code_heavy",
    "markdown_heavy",
    "emoji_heavy",
]
FILTER_FLAGS: Final[tuple[FilterFlag, ...]] = get_args(FilterFlag)


# Density and Importance are NamedTuples (immutable like frozen dataclasses) because one of each
# is built per scan and a tuple is several times cheaper to construct.
class Density(NamedTuple):
    tokens: int = 0
    content_share: float = 0.0  # tokens that are not function words
    entity_share: float = 0.0
    number_share: float = 0.0
    score: float = 0.0  # 0.6 content + 0.25 entities + 0.15 numbers (shares saturating)

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))


class Importance(NamedTuple):
    """Four channels in [0, 1] and their noisy-OR combination."""

    novelty: float = 0.0  # rare tokens, numbers, dates, entities (text-only estimate)
    arousal: float = 0.0  # the emotion's arousal
    reward: float = 0.0  # goal value: decisions/commitments, preferences, |valence|
    attention: float = 0.0  # explicit salience: corrections, "remember"/"important", facts
    combined: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))


@dataclass(frozen=True, slots=True)
class ScanConfig:
    min_chars: int = 3  # stripped length below this: too_short
    max_chars: int = 8000  # above this: too_long, and the text is not scanned at all
    trivial_max_chars: int = 48  # only texts this short can be greetings/acks
    high_importance: float = 0.7  # combined importance at or above this makes a turn HIGH
    code_fence_share: float = 0.5  # share of characters inside ``` fences
    code_symbol_share: float = 0.12  # share of {}[]();=<>$\| among non-space characters
    code_min_symbols: int = 8
    code_line_share: float = 0.5  # share of lines that look like code (or are indented)
    markdown_line_share: float = 0.6  # share of lines that are headings/bullets/quotes/tables
    markdown_min_lines: int = 4
    emoji_share: float = 0.3  # emoji among non-space characters
    emoji_min: int = 3
    markup_max_tags: int = 4  # this many tags or more: mostly markup
    markup_share: float = 0.3  # or this share of characters inside tags
    # a turn whose prose outside its ``` fences has this many words is judged by that prose
    # (the extractor reads only the prose): "I'm building the gallery with 8 cards, here's my
    # code: ```...```" says something; a bare paste does not
    prose_min_words: int = 12


DEFAULT_CONFIG: Final[ScanConfig] = ScanConfig()
ZERO_DENSITY: Final[Density] = Density()
ZERO_IMPORTANCE: Final[Importance] = Importance()


# Not slots: on the target interpreter a frozen slots dataclass __init__ costs twice as much.
@dataclass(frozen=True)
class SignalRecord:
    level: Level
    reasons: tuple[str, ...]  # why: HIGH signal kinds, SKIP filters, NORMAL hints
    evidence: tuple[Evidence, ...]  # phrase hits in text order, then digit-based markers, filters
    entities: tuple[Entity, ...]
    emotion: Emotion
    density: Density
    importance: Importance
    filters: tuple[FilterFlag, ...]  # the filters that fired
    role: str
    length: int

    def evidence_of(self, kind: str) -> tuple[Evidence, ...]:
        return tuple(e for e in self.evidence if e.kind == kind)

    @property
    def temporal(self) -> tuple[Evidence, ...]:
        return self.evidence_of("temporal")

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(e.kind for e in self.evidence)

    def flagged(self, flag: FilterFlag) -> bool:
        return flag in self.filters

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly (orjson-ready) view; evidence grouped by kind."""
        grouped: dict[str, list[dict[str, str]]] = {}
        for e in self.evidence:
            grouped.setdefault(e.kind, []).append(e.to_dict())
        return {
            "level": self.level.value,
            "reasons": list(self.reasons),
            "evidence": grouped,
            "entities": [e.to_dict() for e in self.entities],
            "emotion": self.emotion.to_dict(),
            "density": self.density.to_dict(),
            "importance": self.importance.to_dict(),
            "filters": {f: f in self.filters for f in FILTER_FLAGS},
            "role": self.role,
            "length": self.length,
        }


# --- hot-path helpers ------------------------------------------------------------------------

_V = TypeVar("_V")
_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__
_flat = chain.from_iterable
_get_hit = sp.HITS.get  # None: a name or all-caps word from the same pass
_NONES = repeat(None)
_EVIDENCE = itemgetter(0)
_ENTITIES = itemgetter(1)
_MASK = itemgetter(2)
_EFFECTS = itemgetter(3)
_ZEROS = repeat(0)
_DEADLINE_PREFIXES: Final[tuple[str, ...]] = (
    "by ",
    "before ",
    "until ",
    "due ",
    "no later than ",
    "By ",
    "Before ",
    "Until ",
    "Due ",
)
MAX_DIGIT_MARKERS: Final = 16  # digit-based temporal markers examined per turn
_CODE_SYMBOLS: Final[tuple[str, ...]] = ("{", "}", ";", "=", "(", ")", "[", "]", "<", ">", "$")
# mask bits -> constant parts of reasons and channels, precomputed for every combination
_HIGH_KINDS: Final[tuple[tuple[int, str], ...]] = (
    (sp.CORRECTION, "correction"),
    (sp.DECISION, "decision"),
    (sp.COMMITMENT, "commitment"),
    (sp.STRONG_PREFERENCE, "strong_preference"),
    (sp.FACT, "fact"),
)
_HINT_KINDS: Final[tuple[tuple[int, str], ...]] = (
    (sp.COMMITMENT, "commitment"),
    (sp.WEAK_PREFERENCE, "preference"),
    (sp.FACT, "fact"),
    (sp.ATTENTION_CUE, "attention"),
    (sp.TEMPORAL, "temporal"),
    (sp.EMOTION, "emotion"),
    (sp.ENTITY, "entities"),
)
_HIGH_BITS: Final[int] = reduce(or_, (bit for bit, _ in _HIGH_KINDS))
_OTHER_HIGH_BITS: Final[int] = sp.CORRECTION | sp.DECISION
_HINT_BITS: Final[int] = reduce(or_, (bit for bit, _ in _HINT_KINDS))
_REWARD_BITS: Final[int] = sp.DECISION | sp.COMMITMENT | sp.STRONG_PREFERENCE | sp.WEAK_PREFERENCE
_ATTENTION_BITS: Final[int] = sp.CORRECTION | sp.ATTENTION_CUE | sp.FACT


def _by_subset(bits: int, value: Callable[[int], _V]) -> dict[int, _V]:
    """value(m) for every m that is a subset of ``bits``."""
    out: dict[int, _V] = {}
    m = bits
    while True:  # the standard submask walk
        out[m] = value(m)
        if m == 0:
            return out
        m = (m - 1) & bits


def _names_of(kinds: tuple[tuple[int, str], ...]) -> Callable[[int], tuple[str, ...]]:
    return lambda m: tuple(name for bit, name in kinds if m & bit)


_HIGH_REASONS: Final[dict[int, tuple[str, ...]]] = _by_subset(_HIGH_BITS, _names_of(_HIGH_KINDS))
_HINT_REASONS: Final[dict[int, tuple[str, ...]]] = {
    m: names or ("no_signal",)
    for m, names in _by_subset(_HINT_BITS, _names_of(_HINT_KINDS)).items()
}
# reward: goal-directed content (decision or commitment 0.5), preference (strong 0.3, weak 0.15);
# attention: correction 0.4, explicit cue ("remember", "important") 0.3, stated fact 0.2
_REWARD: Final[dict[int, float]] = _by_subset(
    _REWARD_BITS,
    lambda m: (
        (0.5 if m & (sp.DECISION | sp.COMMITMENT) else 0.0)
        + (0.3 if m & sp.STRONG_PREFERENCE else 0.15 if m & sp.WEAK_PREFERENCE else 0.0)
    ),
)
_ATTENTION: Final[dict[int, float]] = _by_subset(
    _ATTENTION_BITS,
    lambda m: (
        (0.4 if m & sp.CORRECTION else 0.0)
        + (0.3 if m & sp.ATTENTION_CUE else 0.0)
        + (0.2 if m & sp.FACT else 0.0)
    ),
)


def _record(
    level: Level,
    reasons: tuple[str, ...],
    evidence: tuple[Evidence, ...],
    entities: tuple[Entity, ...],
    emotion: Emotion,
    density: Density,
    importance: Importance,
    filters: tuple[FilterFlag, ...],
    role: str,
    length: int,
) -> SignalRecord:
    # Same result as SignalRecord(...) (the dataclass has no validation or __post_init__) at a
    # third of the cost: a frozen dataclass __init__ calls object.__setattr__ once per field,
    # here the instance dict is set in one step.
    record = object.__new__(SignalRecord)
    object.__setattr__(
        record,
        "__dict__",
        {
            "level": level,
            "reasons": reasons,
            "evidence": evidence,
            "entities": entities,
            "emotion": emotion,
            "density": density,
            "importance": importance,
            "filters": filters,
            "role": role,
            "length": length,
        },
    )
    return record


def _emoji_emotions(
    emoji: list[str], hits: list[Hit], mask: int, evidence: list[Evidence]
) -> tuple[int, Iterable[Effect]]:
    effects: Iterable[Effect] = _flat(map(_EFFECTS, hits)) if mask & sp.EMOTION else ()
    emoji_hits = [sp.EMOJI_HITS[e] for e in emoji if e in sp.EMOJI_HITS]
    if emoji_hits:
        evidence.extend(_flat(map(_EVIDENCE, emoji_hits)))
        effects = chain(effects, _flat(map(_EFFECTS, emoji_hits)))
        mask |= sp.EMOTION
    return mask, effects


def _fold(text: str) -> str:
    """Lower-case with straight apostrophes, same length as ``text`` (spans stay valid)."""
    low = text.lower()
    if len(low) != len(text):  # e.g. "İ" lowers to two code points
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low.replace("’", "'")


def _skip(
    filters: tuple[FilterFlag, ...], role: str, length: int, reasons: tuple[str, ...] = ()
) -> SignalRecord:
    return _record(
        Level.SKIP,
        reasons or filters,
        (),
        (),
        NEUTRAL,
        ZERO_DENSITY,
        ZERO_IMPORTANCE,
        filters,
        role,
        length,
    )


def _trivial(stripped_low: str, config: ScanConfig) -> bool:
    if stripped_low[:1] == "/" and sp.SLASH_COMMAND_RE.match(stripped_low):
        return True
    return len(stripped_low) <= config.trivial_max_chars and (
        sp.TRIVIAL_RE.fullmatch(stripped_low) is not None
    )


def _spaced(source: str) -> str:
    """A space after each separator: words behind it become match candidates, and since the
    inserted space follows the separator, no match can run across it (matches stay verbatim)."""
    for ch in sp.LEX_SEPARATORS:
        if ch in source:
            source = source.replace(ch, ch + " ")
    return source


def _same_length_spaced(source: str) -> str:
    # for the slow path, which slices the input by match position
    for ch in sp.LEX_SEPARATORS:
        if ch in source:
            source = source.replace(ch, " ")
    return source


def _exact_hits(text: str) -> list[Hit]:
    """Slow path for shouted or curly-apostrophe text: match the case-folded text, then rebuild
    each hit from the verbatim span so evidence still quotes the input exactly."""
    folded = _same_length_spaced(" " + _fold(text))
    hits = []
    for m in sp.LEX_RE.finditer(folded):
        recipe = sp.SPELLING_RECIPES.get(m.group(1))
        if recipe is not None:
            s, e = m.span(1)
            hits.append(recipe(text[s - 1 : e - 1]))
    return hits


def _digit_kind(number: str) -> str:
    """Which temporal marker a non-plain number from the phrase pass is (see LEX_RE)."""
    if "-" in number:
        return "iso_date"
    if "/" in number:
        return "numeric_date"
    if ":" in number or number[-1] in "mM.":
        return "clock"  # no month or unit ends in "m"
    words = number.lower().split()
    if words[-1] == "ago":
        return "ago"
    if words[-1] in sp.TIME_UNITS or words[-1].lstrip("0123456789") in sp.TIME_UNITS:
        return "duration"
    return "day_month"


def _unknown_words(
    others: list[str], text: str, evidence: list[Evidence]
) -> tuple[int, int, int, list[Entity], int]:
    """Classify what the phrase pass matched outside the table: numbers (and the dates, times
    and durations among them), all-caps words (shouting or acronyms) and capitalised names.
    Returns (numbers, temporal markers, shouted words, entities, kind bits)."""
    numbers = temporal = shouts = bits = 0
    entities: list[Entity] = []
    for word in others:
        if word[0] <= "9":  # digits sort before letters
            numbers += 1
            # the substring checks below scan the whole text: bound the work on long lists
            if temporal >= MAX_DIGIT_MARKERS:
                continue
            if word.isdigit():
                if len(word) != 4 or word[:2] not in ("19", "20"):
                    continue
                kind = "year"
            else:
                kind = _digit_kind(word)
            # what precedes it (its first occurrence: the pass keeps no positions)
            at = text.find(word)
            before = text[at - 14 if at > 14 else 0 : at]
            marker = word
            if kind == "duration" and before.endswith(("in ", "In ")):
                kind = "in_n_units"
                marker = text[at - 3 : at + len(word)]
            evidence.append(_new(Evidence, ("temporal", kind, marker)))
            temporal += 1
            bits |= sp.TEMPORAL
            if before.endswith(_DEADLINE_PREFIXES):  # "by 5pm", "due 2024-06-12"
                for prefix in _DEADLINE_PREFIXES:
                    if before.endswith(prefix):
                        deadline = text[at - len(prefix) : at + len(word)]
                        evidence.append(_new(Evidence, ("commitment", "deadline", deadline)))
                        bits |= sp.COMMITMENT
                        break
        elif word.isupper():
            # an ordinary word in capitals is shouting; a short unknown one an acronym ("TOML")
            if word in sp.SHOUTS:
                shouts += 1
            elif len(word) <= 5:
                entities.append(_new(Entity, (word, "acronym", word)))
        elif word not in sp.NOT_NAMES_CAPITALISED:
            entities.append(_new(Entity, (word, "name", word)))
    return numbers, temporal, shouts, entities, bits


def _injection(text: str, evidence: list[Evidence]) -> bool:
    folded = _fold(text)
    found = False
    for m in sp.INJECTION_RE.finditer(folded):
        s, e = m.span()
        evidence.append(_new(Evidence, ("injection", m.lastgroup or "injection", text[s:e])))
        found = True
    return found


def _markup(
    text: str, nonspace: int, config: ScanConfig, evidence: list[Evidence]
) -> tuple[bool, bool]:
    """(system tags present, mostly markup)."""
    tags = tag_chars = 0
    system = False
    for m in sp.TAG_RE.finditer(text):
        tag = m.group()
        tags += 1
        tag_chars += len(tag)
        name = sp.TAG_NAME_RE.search(tag.lower())
        if name is not None and name.group() in sp.SYSTEM_TAGS:
            system = True
            evidence.append(_new(Evidence, ("system", "tag", tag)))
    mostly = tags >= config.markup_max_tags or (
        tags > 0 and tag_chars >= config.markup_share * nonspace
    )
    return system, mostly


def _code_heavy(text: str, nonspace: int, newlines: int, config: ScanConfig) -> bool:
    if "```" in text:
        inside = 0
        pos = text.find("```")
        while pos != -1:
            close = text.find("```", pos + 3)
            if close == -1:
                inside += len(text) - pos  # an unclosed fence runs to the end
                break
            inside += close + 3 - pos
            pos = text.find("```", close + 3)
        if inside >= config.code_fence_share * len(text):
            return True
    symbols = sum(map(text.count, _CODE_SYMBOLS))
    if symbols >= config.code_min_symbols and symbols >= config.code_symbol_share * nonspace:
        return True
    if newlines >= 2:
        codeish = (
            len(sp.CODE_LINE_START_RE.findall(text))
            + len(sp.CODE_LINE_END_RE.findall(text))
            + text.count("\n    ")
            + text.count("\n\t")
        )
        if codeish >= config.code_line_share * (newlines + 1):
            return True
    return False


def _outside_fences(text: str) -> str:
    """``text`` without its ``` fenced blocks (an unclosed fence runs to the end)."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("```", pos)
        if start == -1:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        close = text.find("```", start + 3)
        if close == -1:
            break
        pos = close + 3
    return " ".join(out)


def _markdown_heavy(text: str, newlines: int, config: ScanConfig) -> bool:
    if newlines + 1 >= config.markdown_min_lines:
        md = len(sp.MARKDOWN_LINE_RE.findall(text))
        if md >= config.markdown_line_share * (newlines + 1):
            return True
    return text.count("**") + text.count("](") >= 8


# --- the scanner ---------------------------------------------------------------------------


def scan(text: str, *, role: str = "user", config: ScanConfig = DEFAULT_CONFIG) -> SignalRecord:
    """Read one turn and return its signal record. Never raises on any string."""
    length = len(text)
    stripped = text.strip()
    size = len(stripped)
    if not size:
        return _skip(("empty", "too_short"), role, length)
    if length > config.max_chars:
        return _skip(("too_long",), role, length)
    if role == "system":
        return _skip(("system",), role, length, ("system_role",))
    if (size <= config.trivial_max_chars or stripped[0] == "/") and _trivial(
        stripped.lower(), config
    ):
        return _skip(
            ("trivial", "too_short") if size < config.min_chars else ("trivial",), role, length
        )
    if size < config.min_chars:
        return _skip(("too_short",), role, length)

    # -- one regex pass: phrases (prebuilt hits), then numbers, all-caps words and names -----
    source = " " + text
    if "\n" in text or '"' in text or "(" in text or "\t" in text:
        source = _spaced(source)
    found = sp.LEX_RE.findall(source)
    looked_up: list[Hit | None] = list(map(_get_hit, found))
    numbers = temporal = shouts = bits = 0
    names: list[Entity] = []
    evidence: list[Evidence] = []
    if None in looked_up:  # words the phrase table does not know
        others = list(compress(found, map(is_, looked_up, _NONES)))
        hits: list[Hit] = list(filter(None, looked_up))
        numbers, temporal, shouts, names, bits = _unknown_words(others, text, evidence)
    else:
        hits = cast("list[Hit]", looked_up)  # None-free, just checked
    if shouts or "’" in text:
        hits = _exact_hits(text)
    mask: int = reduce(or_, map(_MASK, hits), bits)
    if evidence:  # digit-based markers go after the phrase evidence
        evidence[:0] = _flat(map(_EVIDENCE, hits))
    else:
        evidence = list(_flat(map(_EVIDENCE, hits)))
    entities: list[Entity] = list(_flat(map(_ENTITIES, hits))) if mask & sp.ENTITY else []
    if names:
        entities.extend(names)
        entities = list(dict.fromkeys(entities))
        mask |= sp.ENTITY
    if mask & sp.TEMPORAL and not temporal:
        temporal = 1  # phrase markers count as one specific (digit markers are counted each)

    # -- filters: cheap substring gates first -------------------------------------------------
    filters: list[FilterFlag] = []
    judged, j_stripped, j_size = text, stripped, size  # what the filters judge
    if "```" in text:
        prose = _outside_fences(text)
        if len(prose.split()) >= config.prose_min_words:
            judged, j_stripped = prose, prose.strip()
            j_size = len(j_stripped)
    if mask & sp.INJECTION_TRIGGER and _injection(text, evidence):
        filters.append("injection")
    if "<" in text or "[" in text:
        nonspace = j_size - j_stripped.count(" ")
        system, mostly_markup = _markup(judged, nonspace, config, evidence)
        if judged is not text and not system:  # a system tag counts inside a fence too
            system = _markup(text, size - stripped.count(" "), config, evidence)[0]
        if system:
            filters.append("system")
        if mostly_markup:
            filters.append("markup")
    newline = "\n" in judged
    if newline or "{" in judged or ";" in judged or "=" in judged or "`" in judged:
        newlines = judged.count("\n")
        if _code_heavy(judged, j_size - j_stripped.count(" "), newlines, config):
            filters.append("code_heavy")
        if (newline or "**" in judged) and _markdown_heavy(judged, newlines, config):
            filters.append("markdown_heavy")
    elif "**" in judged and _markdown_heavy(judged, 0, config):
        filters.append("markdown_heavy")
    emoji: list[str] = [] if text.isascii() else sp.EMOJI_RE.findall(text)
    if (
        emoji
        and len(emoji) >= config.emoji_min
        and len(emoji) >= config.emoji_share * (size - stripped.count(" "))
    ):
        filters.append("emoji_heavy")

    # -- emotion ----------------------------------------------------------------------------
    exclamations = text.count("!")
    if emoji:
        mask, effects = _emoji_emotions(emoji, hits, mask, evidence)
        emotion = score_emotion(effects, exclamations=exclamations, shouts=shouts)
    elif mask & sp.EMOTION:
        found_effects = list(_flat(map(_EFFECTS, hits)))
        if len(found_effects) == 1 and not exclamations and not shouts:
            valence, arousal, category = found_effects[0]  # the common case, without the fold
            emotion = _new(Emotion, (valence, arousal, category or "neutral"))
        else:
            emotion = score_emotion(found_effects, exclamations=exclamations, shouts=shouts)
    elif exclamations or shouts:
        emotion = score_emotion((), exclamations=exclamations, shouts=shouts)
    else:
        emotion = NEUTRAL

    # -- density: one whitespace split, word classes from a precomputed table -----------------
    tokens = text.split()
    n_tokens = len(tokens) or 1
    weights = sum(map(sp.WORD_WEIGHT.get, tokens, _ZEROS))
    n_stop = weights & (sp.COMMON_WEIGHT - 1)
    content_share = (n_tokens - n_stop) / n_tokens
    n_entities = len(entities)
    # (conditional expressions, not min(): a builtin call costs as much as the arithmetic)
    entity_share = n_entities / n_tokens if n_entities < n_tokens else 1.0
    number_share = numbers / n_tokens if numbers < n_tokens else 1.0
    density_score = (
        0.6 * content_share
        + (0.25 if entity_share >= 0.25 else entity_share)
        + (0.15 if number_share >= 0.125 else 1.2 * number_share)
    )
    density: Density = _new(
        Density, (len(tokens), content_share, entity_share, number_share, density_score)
    )

    # -- importance ---------------------------------------------------------------------------
    rare_share = content_share - (weights >> 16) / n_tokens
    specifics = numbers + temporal
    novelty = (
        0.5 * rare_share
        + (0.25 if specifics >= 4 else 0.0625 * specifics)
        + (0.25 if n_entities >= 4 else 0.0625 * n_entities)
    )
    arousal = emotion.arousal
    valence = emotion.valence
    reward = _REWARD[mask & _REWARD_BITS] + 0.2 * (valence if valence > 0.0 else -valence)
    attention = _ATTENTION[mask & _ATTENTION_BITS] + 0.1 * density_score
    # noisy-OR: one strong channel is enough and several compound; novelty weighs least because
    # the text-only estimate is the noisiest
    combined = 1.0 - (1.0 - 0.6 * novelty) * (1.0 - 0.7 * arousal) * (1.0 - 0.9 * reward) * (
        1.0 - 0.9 * attention
    )
    importance: Importance = _new(Importance, (novelty, arousal, reward, attention, combined))

    # -- level --------------------------------------------------------------------------------
    if filters:
        level = Level.SKIP
        reasons: tuple[str, ...] = tuple(filters)
    else:
        # Another speaker's first-person statements ("I will explain", "I prefer") describe
        # the assistant, not the user: only its corrections and decisions count.
        reasons = _HIGH_REASONS[mask & (_HIGH_BITS if role == "user" else _OTHER_HIGH_BITS)]
        if combined >= config.high_importance:
            reasons += ("high_importance",)
        if reasons:
            level = Level.HIGH
        else:
            level = Level.NORMAL
            reasons = _HINT_REASONS[mask & _HINT_BITS]

    return _record(
        level,
        reasons,
        tuple(evidence),
        tuple(entities) if entities else (),
        emotion,
        density,
        importance,
        tuple(filters) if filters else (),
        role,
        length,
    )
