"""The two gates around retrieval: is a query worth a lookup, and is the result worth showing.

Before: ``should_retrieve`` skips blank text, greetings and acknowledgements ("hi", "ok",
"thanks", "sounds good"), slash commands ("/help") and texts under three characters,
reusing the signal scanner's trivial-message detection so the read and write sides agree
on what chit-chat is. Everything else retrieves, including texts the scanner would not
store (code, very long text, markup): a question about code can still need memories.

After: ``confidence`` reads the best score and its gap to the rest (the mean of the next
``RUNNERS_UP``; 0 when there is none)::

    no candidates or top < skip_below (0.50)         -> "skipped"     nothing to inject
    top >= full_at (0.62) or gap >= clear_gap (0.12) -> "full"        inject the recall
    otherwise                                        -> "abbreviated" inject the top few

A large gap means one memory clearly answers even when its absolute score is modest.
Calibration: relevance in ``core.scoring`` is relative to the candidate set, so the top
candidate always brings its full relevance weight (0.40 in the general profile) and the
memory itself decides the rest. Under the general profile with neutral Q and importance,
a warm memory (used yesterday) scores ~0.69 and a fresh unused one ~0.64 (full), a
400-day-old unused one ~0.55 (abbreviated); an entity-profile query whose best memory
does not mention the entity and is stale lands near 0.45 (skipped). Those scores are
relative to the candidate set (its best relevance is 1 whatever it matched), so they cannot
tell an off-topic recall from a good one.

"Nothing relevant" is therefore an absolute test on the top results (``nothing_relevant``),
before any of the above: the best dense cosine between the query and the top
``MATCH_DEPTH`` results, and the share of the query's content words (stemmed, stopwords
out) that any of them contains, in its text or its source turns. Both under their floor
means no memory speaks of what is asked: "skipped", reason "nothing relevant". Chosen on
the development data only (BEAM dev conversations and the own set, with each set's
questions also asked of the other set's namespaces as off-topic probes): with the hashing
embedder, cosine < 0.22 and coverage < 0.25 skipped 1% of the own set's questions and none
of BEAM dev's, and 54% / 32% of the questions asked of the other set's conversations (long
conversations share many words with any question: the floor stays low on purpose). Questions on the topic of a
conversation whose detail was never said (BEAM's abstention questions) share its words and
pass: telling those apart needs a reader, not a retrieval score. A question whose every name
(``asked_names``: people, places, things; months and weekdays are times) is held by no
candidate (``unknown_names``) is "nothing relevant" too: it asks about someone or something
never mentioned ("Where did Rui go hiking?" answered with the hikes of others). Not under a
filter, whose candidates are a subset of what is known.

What the label does to the answer (``shaped``), unless the caller asks for everything
(``include_low_confidence``, which a benchmark of the ranking always sets):

    "skipped", reason "nothing relevant" (the absolute test)
                  -> no results ("withheld": how many there were); the label and reason stay
    "abbreviated", or "skipped" on a low relative score alone (reason "low score": those
    scores cannot tell an off-topic recall from a good one, an archived memory asked for
    has its score halved)
                  -> the same results in the same order, with less detail: ``explain`` keeps
                     the ``ABBREVIATED_COMPONENTS`` (3) components that weighed most (value
                     and weight, ``abbreviated_explain``) and the ``archived`` marker; a text
                     longer than ``ABBREVIATED_CHARS`` (280) is cut at a word with "..."
    "full"        -> unchanged
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from memstream.core.calendar_words import MONTH_NAMES, WEEKDAYS
from memstream.core.scoring import Scored
from memstream.core.signal_patterns import SLASH_COMMAND_RE
from memstream.core.signals import scan
from memstream.core.tokens import STEMMING_TOKENIZER, Tokenizer

Confidence = Literal["full", "abbreviated", "skipped"]
RUNNERS_UP: Final = 4
MATCH_DEPTH: Final = 5  # top results the absolute relevance test looks at


@dataclass(frozen=True, slots=True)
class GateResult:
    retrieve: bool
    reason: str  # "query", or why not: "empty", "slash_command", "trivial", "too_short"


def should_retrieve(query: str) -> GateResult:
    """Whether ``query`` should trigger recall. Total over strings."""
    stripped = query.strip()
    if not stripped:
        return GateResult(False, "empty")
    if SLASH_COMMAND_RE.match(stripped.lower()):
        return GateResult(False, "slash_command")
    record = scan(query)
    for flag in ("trivial", "too_short"):
        if record.flagged(flag):
            return GateResult(False, flag)
    return GateResult(True, "query")


@dataclass(frozen=True, slots=True)
class ConfidenceThresholds:
    skip_below: float = 0.50
    full_at: float = 0.62
    clear_gap: float = 0.12


DEFAULT_THRESHOLDS: Final = ConfidenceThresholds()


def confidence(
    scored_list: Sequence[Scored], thresholds: ConfidenceThresholds = DEFAULT_THRESHOLDS
) -> Confidence:
    """How much of a recall to use, from its best score and that score's lead."""
    ranked = sorted((s.score for s in scored_list if math.isfinite(s.score)), reverse=True)
    if not ranked or ranked[0] < thresholds.skip_below:
        return "skipped"
    top, rest = ranked[0], ranked[1 : 1 + RUNNERS_UP]
    try:  # divided first, so the mean itself never overflows
        mean = math.fsum(x / len(rest) for x in rest)
    except OverflowError:  # fsum's partial sums can, near the largest float (property test)
        mean = sum(x / len(rest) for x in rest)  # an infinity of the right sign
    gap = top - mean
    if top >= thresholds.full_at or gap >= thresholds.clear_gap:
        return "full"
    return "abbreviated"


@dataclass(frozen=True, slots=True)
class Match:
    """How well the top results match the query, in absolute terms."""

    cosine: float  # best dense cosine between the query and a top result
    coverage: float  # share of the query's content words some top result contains


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    cosine: float = 0.22
    coverage: float = 0.25


DEFAULT_FLOOR: Final = RelevanceFloor()


def coverage(
    query: str, documents: Sequence[str], tokenizer: Tokenizer = STEMMING_TOKENIZER
) -> float:
    """Share of the query's distinct content words (stemmed) that begin a word of any of
    ``documents`` ("run" finds "running"); 1.0 for a query without content words (nothing
    to miss). A prefix test over the folded text: the documents are never tokenised, so a
    recall pays microseconds for it, not milliseconds."""
    wanted = set(tokenizer(query))
    if not wanted:
        return 1.0
    begins = _word_starts(documents)
    return sum(1 for w in wanted if begins(w)) / len(wanted)


def _word_starts(documents: Sequence[str]) -> Callable[[str], bool]:
    """Whether a (folded) prefix begins a word of any of ``documents``: one folded text,
    searched as is, never tokenised (``coverage`` and ``unknown_names`` share it)."""
    blob = "\n".join(dict.fromkeys(documents)).casefold()
    return lambda prefix: re.search(r"(?<!\w)" + re.escape(prefix), blob) is not None


def _name_stem(name: str) -> str:
    """A name as it begins the words that hold it: case folded, without a possessive or a
    plural "s" ("the Okafors" finds "Okafor", "Tuesdays" finds "Tuesday")."""
    n = name.casefold().strip()
    for tail in ("'s", "\u2019s"):
        n = n.removesuffix(tail)
    return n[:-1] if len(n) > 3 and n.endswith("s") and not n.endswith("ss") else n


_TIME_NAMES: Final = frozenset(m.casefold() for m in MONTH_NAMES) | frozenset(WEEKDAYS)


def asked_names(entities: Sequence[str]) -> tuple[str, ...]:
    """The people, places and things a question names (``core.intent``'s entities); month
    and weekday names are times, not names."""
    return tuple(e for e in entities if (stem := _name_stem(e)) and stem not in _TIME_NAMES)


def unknown_names(names: Sequence[str], documents: Sequence[str]) -> tuple[str, ...]:
    """The ``names`` some word of which begins no word of any of ``documents`` ("Mel" finds
    "Melanie"; a name of five letters or more by its start, all but its last three letters
    and at least four: "PostgreSQL" finds "Postgres"). Recall passes what every candidate
    the search found says, and the sparse channel brings up a memory naming a rare name
    whenever one exists: a name none of them holds is one nothing is known about."""
    if not names:
        return ()
    begins = _word_starts(documents)

    def said(word: str) -> bool:
        stem = _name_stem(word)
        return begins(stem if len(stem) <= 4 else stem[: max(4, len(stem) - 3)])

    # a name of several words ("Ana Porto" when the finder joined two names, "The Poppy
    # War") is known when each of its words is
    return tuple(n for n in names if not all(said(w) for w in n.split() if _name_stem(w)))


def nothing_relevant(match: Match, floor: RelevanceFloor = DEFAULT_FLOOR) -> bool:
    """No top result is close to the query in meaning, nor shares enough of its words."""
    return match.cosine < floor.cosine and match.coverage < floor.coverage


ABBREVIATED_COMPONENTS: Final = 3  # explain components an abbreviated result keeps
ABBREVIATED_CHARS: Final = 280  # an abbreviated result's text is cut past this


def abbreviated_explain(
    explain: Mapping[str, Any], top: int = ABBREVIATED_COMPONENTS
) -> dict[str, float]:
    """The ``top`` scoring components that weighed most (value x weight), value and weight;
    ties by name. Everything else (store ranks, graph paths, raw relevance) is dropped."""
    weighed = []
    for key, value in explain.items():
        weight = explain.get(key + ".w")
        if (
            isinstance(value, int | float)
            and isinstance(weight, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value * weight)
        ):
            weighed.append((-(value * weight), key, float(value), float(weight)))
    out: dict[str, float] = {}
    if isinstance(explain.get("archived"), int | float):
        out["archived"] = float(explain["archived"])  # a marker: why the score is low
    for _, key, value, weight in sorted(weighed)[:top]:
        out[key] = value
        out[key + ".w"] = weight
    return out


def abbreviated_text(text: str, limit: int = ABBREVIATED_CHARS) -> str:
    """``text`` if at most ``limit`` characters, else cut at the last word boundary before
    it, with "..." (never longer than ``limit`` + 3)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:  # a very long word: cut inside it rather than lose half
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "..."


NOTHING_RELEVANT: Final = "nothing relevant"


def withholds(label: Confidence, reason: str | None, include_low_confidence: bool) -> bool:
    """A "nothing relevant" answer's results are withheld unless the caller asked for them."""
    return label == "skipped" and reason == NOTHING_RELEVANT and not include_low_confidence


def abbreviates(label: Confidence, reason: str | None, include_low_confidence: bool) -> bool:
    return (
        label != "full"
        and not withholds(label, reason, include_low_confidence)
        and not include_low_confidence
    )
