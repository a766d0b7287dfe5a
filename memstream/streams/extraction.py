"""Fact extraction behind one interface: turns in, facts plus provenance out.

Two implementations: ``RuleExtractor`` (pure rules, offline, free) and
``LLMExtractor`` (``streams.llm_extractor``: the Responses API, falling back to the
rules batch by batch). Either way every input turn is covered by the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from memstream.core.episodes import EPISODES_VERSION, episodes_for
from memstream.core.facts import Fact, TurnView
from memstream.core.rule_extractor import RULES_VERSION, extract_rules
from memstream.core.write_plan import BufferedTurn, Flush
from memstream.schemas.events import Extraction

if TYPE_CHECKING:
    from memstream.streams.llm_extractor import LLMSettings

CallOutcome = Literal[
    "ok",
    "rate_limited",
    "server_error",
    "timeout",
    "connection_error",
    "invalid_output",
    "client_error",
    "error",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMCall:
    """One request to the model as the retry loop saw it: the audit trail of a result."""

    batch: int
    attempt: int
    outcome: CallOutcome
    status: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    retry_in_s: float | None = None  # wait before the next attempt; None when none follows
    detail: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractionResult:
    """Facts from a run of turns, how they were extracted and what it cost.

    ``covered_turn_ids`` is every input turn: each was read either by the model or,
    for turns in ``fallback_turn_ids``, by the rule extractor.
    """

    facts: tuple[Fact, ...]
    extraction: Extraction
    llm_calls: int = 0
    cost_usd: float = 0.0
    covered_turn_ids: tuple[str, ...] = ()
    fallback_turn_ids: tuple[str, ...] = ()
    calls: tuple[LLMCall, ...] = ()

    def extraction_for(self, fact: Fact) -> Extraction:
        """Provenance of one fact: facts from fallback batches came from the rules."""
        fallback = set(self.fallback_turn_ids)
        if (
            not self.extraction.fallback
            or not fact.source_turn_ids
            or not set(fact.source_turn_ids) <= fallback
        ):
            return self.extraction
        return Extraction(
            extractor=RuleExtractor.name,
            prompt_version=RULES_VERSION,
            fallback=True,
            fallback_reason=self.extraction.fallback_reason,
        )


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns conversation turns into facts."""

    @property
    def name(self) -> str: ...

    async def extract(self, turns: Sequence[TurnView]) -> ExtractionResult: ...


def rules_result(turns: Sequence[TurnView]) -> ExtractionResult:
    """The rule extractor's result for ``turns`` (pure)."""
    return ExtractionResult(
        facts=tuple(extract_rules(turns)),
        extraction=Extraction(extractor=RuleExtractor.name, prompt_version=RULES_VERSION),
        covered_turn_ids=tuple(t.turn_id for t in turns),
    )


class RuleExtractor:
    """The offline extractor: deterministic rules, no network, no cost."""

    name = "rules"

    async def extract(self, turns: Sequence[TurnView]) -> ExtractionResult:
        return rules_result(turns)


async def extract_buffer(
    extractor: Extractor, turns: Sequence[BufferedTurn], session_id: str | None
) -> ExtractionResult | None:
    """Extract a session buffer's turns (None when every turn was skipped by the scanner)."""
    live = [t.view(session_id) for t in turns if not t.skipped]
    return await extractor.extract(live) if live else None


#: provenance of an episode: the turn's own words, no extractor read them into a claim
EPISODES = Extraction(extractor="episodes", prompt_version=EPISODES_VERSION)


def flush_of(
    result: ExtractionResult | None,
    *,
    namespace: str,
    session_id: str | None,
    trigger: str,
    turns: Sequence[BufferedTurn],
    producer: str,
) -> Flush:
    """What the write plan needs of an extracted buffer: its facts, then an episode for
    each turn no fact covers (core/episodes.py)."""
    facts = tuple(result.facts) if result else ()
    episodes = tuple(episodes_for(turns, facts))
    extraction = result.extraction if result else None
    return Flush(
        namespace=namespace,
        session_id=session_id,
        trigger=trigger,
        turns=tuple(turns),
        facts=facts + episodes,
        extraction=extraction,
        fact_extractions=(tuple(result.extraction_for(f) for f in facts) if result else ())
        + (EPISODES,) * len(episodes),
        llm_calls=result.llm_calls if result else 0,
        cost_usd=result.cost_usd if result else 0.0,
        producer=producer,
    )


def make_extractor(kind: Literal["rules", "llm"], settings: LLMSettings | None = None) -> Extractor:
    """The extractor a deployment asked for; the LLM one is imported only when wanted."""
    if kind == "rules":
        return RuleExtractor()
    from memstream.streams.llm_extractor import LLMExtractor, LLMSettings

    return LLMExtractor(settings or LLMSettings())
