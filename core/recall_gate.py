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
does not mention the entity and is stale lands near 0.45 (skipped). Rank fusion alone
cannot tell an off-topic recall from a good one; an absolute signal (the dense cosine)
would have to enter the score for that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from core.scoring import Scored
from core.signal_patterns import SLASH_COMMAND_RE
from core.signals import scan

Confidence = Literal["full", "abbreviated", "skipped"]
RUNNERS_UP: Final = 4


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
    gap = top - math.fsum(x / len(rest) for x in rest)  # divided first: no overflow
    if top >= thresholds.full_at or gap >= thresholds.clear_gap:
        return "full"
    return "abbreviated"
