"""LLM fact extraction over the OpenAI Responses API, with structured output.

The shell (``LLMExtractor``) owns the client, the concurrency limit and the retry
loop; everything it decides with is a pure function here: the request, the output
validation, the backoff delay and the cost estimate. The client's own retries are
off (``max_retries=0``) so every attempt is ours, visible in ``ExtractionResult.calls``.

A batch that still fails after its retries is handed to the rule extractor, so a
flaky or absent model degrades quality, never coverage.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from types import MappingProxyType
from typing import Any, cast

import openai
from openai import AsyncOpenAI

from memstream.core.facts import DECLARED_RELATIONS, EXTRACTABLE_CATEGORIES, KINDS, Fact, TurnView
from memstream.core.rule_extractor import extract_rules
from memstream.schemas.events import Category, Extraction, Kind
from memstream.streams.extraction import CallOutcome, ExtractionResult, LLMCall

PROMPT_VERSION = "facts-v3"  # v2: caused_by; v3: related
SCHEMA_NAME = "memory_facts"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float


#: List prices (USD per 1M tokens) at the time of writing; override per deployment.
DEFAULT_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "gpt-4.1": Price(2.00, 8.00),
        "gpt-4.1-mini": Price(0.40, 1.60),
        "gpt-4.1-nano": Price(0.10, 0.40),
        "gpt-4o": Price(2.50, 10.00),
        "gpt-4o-mini": Price(0.15, 0.60),
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMSettings:
    model: str = "gpt-4.1-mini"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # None: the client reads OPENAI_API_KEY
    timeout_s: float = 30.0
    max_retries: int = 3  # retries after the first attempt, per batch
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 60.0  # honour the server's retry-after up to this
    jitter: float = 0.1  # fraction of the delay taken off at random, so workers spread out
    max_concurrency: int = 4
    max_turns_per_call: int = 16
    max_output_tokens: int = 4096
    temperature: float | None = None  # some models reject the parameter: send only if set
    prices: Mapping[str, Price] = field(default_factory=lambda: DEFAULT_PRICES)

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.max_concurrency < 1 or self.max_turns_per_call < 1:
            raise ValueError(
                "max_retries >= 0, max_concurrency >= 1 and max_turns_per_call >= 1 required"
            )


# --- the prompt and the output contract ----------------------------------------------

INSTRUCTIONS = f"""You extract long-term memories from a conversation for an AI agent.

The input is JSON: {{"turns": [...]}}; each turn has turn_id, role, speaker, occurred_at (ISO 8601) and text.
Return {{"facts": [...]}} following the JSON schema. For each durable, useful piece of information write one fact:
- text: one atomic, standalone statement in the third person. Name people instead of using pronouns: use the
  speaker's name, or "User" for an unnamed user ("User prefers dark roast coffee", "Caroline moved to Boston
  on 7 May 2023"). One claim per fact.
- Resolve relative dates ("yesterday", "next week", "last Tuesday") against that turn's occurred_at and write
  the absolute date into the text.
- category, one of: {", ".join(EXTRACTABLE_CATEGORIES)}. preference = likes, dislikes, favourites;
  correction = the user corrects or retracts something said earlier; decision = a choice made;
  commitment = plans, promises, deadlines, to-dos; fact = biographical or situational information;
  relationship = people or pets and how they relate to the speaker; entity = a named thing (project, tool,
  organisation) and what it is; skill = abilities and things being learned; moment = an emotionally
  significant or milestone event; principle = a rule, value or standing instruction.
- confidence: 0 to 1, how certain the statement is given the wording (lower for hedged statements).
- importance: 0 to 1, how useful the fact is for future conversations.
- entities: proper names and named things in the fact, as written.
- valid_from, valid_until: ISO 8601 dates (YYYY-MM-DD) bounding when the fact holds, or null.
- kind: "episode" for an event bound to a time, "note" for a lasting fact, preference or rule.
- source_turn_ids: the turn_id of every turn the fact comes from; at least one, only ids from the input.
- subject: whom the fact is about, lowercase ("user", "caroline"), or null.
- slot: the attribute the fact sets when a later fact could replace it (name, location, employer, job_title,
  age, relationship_status, diet, favorite_<thing>, preference:<topic>, version:<software>), or null.
- caused_by: the 0-based index, in this answer's facts list, of the fact that caused this one when the turns
  say so ("because", "so", "that's why", "led to"), or null.
- related: other facts of this answer this one is linked to, as {{"fact": <0-based index>, "relation": r}} with r
  "elaborates" (this fact adds detail to that one), "contradicts" (both cannot hold) or "related_to" (about
  the same matter, e.g. a plan and its reason); [] when none.
Skip greetings, thanks, small talk, questions without information and the assistant's own suggestions; use
assistant turns only where they restate facts about the user. Never invent facts. If there is nothing worth
remembering, return {{"facts": []}}.
"""

_FACT_FIELDS = (
    "text",
    "category",
    "confidence",
    "importance",
    "entities",
    "valid_from",
    "valid_until",
    "kind",
    "source_turn_ids",
    "subject",
    "slot",
    "caused_by",
    "related",
)
#: fields an older answer (or a hand-written one) may leave out
_OPTIONAL = frozenset({"caused_by", "related"})

#: Strict structured output: every property required, nulls spelled out.
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts"],
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": list(_FACT_FIELDS),
                "properties": {
                    "text": {"type": "string"},
                    "category": {"type": "string", "enum": list(EXTRACTABLE_CATEGORIES)},
                    "confidence": {"type": "number"},
                    "importance": {"type": "number"},
                    "entities": {"type": "array", "items": {"type": "string"}},
                    "valid_from": {"type": ["string", "null"]},
                    "valid_until": {"type": ["string", "null"]},
                    "kind": {"type": "string", "enum": sorted(KINDS)},
                    "source_turn_ids": {"type": "array", "items": {"type": "string"}},
                    "subject": {"type": ["string", "null"]},
                    "slot": {"type": ["string", "null"]},
                    "caused_by": {"type": ["integer", "null"]},
                    "related": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["fact", "relation"],
                            "properties": {
                                "fact": {"type": "integer"},
                                "relation": {"type": "string", "enum": list(DECLARED_RELATIONS)},
                            },
                        },
                    },
                },
            },
        }
    },
}


def render_turns(turns: Sequence[TurnView]) -> str:
    """The turns as the model sees them: JSON, ids included so facts can cite them."""
    return json.dumps(
        {
            "turns": [
                {
                    "turn_id": t.turn_id,
                    "role": t.role,
                    "speaker": t.speaker,
                    "occurred_at": t.occurred_at.isoformat(),
                    "text": t.text,
                }
                for t in turns
            ]
        },
        ensure_ascii=False,
    )


def build_request(turns: Sequence[TurnView], settings: LLMSettings) -> dict[str, Any]:
    """Keyword arguments for ``client.responses.create`` (pure)."""
    request: dict[str, Any] = {
        "model": settings.model,
        "instructions": INSTRUCTIONS,
        "input": render_turns(turns),
        "text": {
            "format": {
                "type": "json_schema",
                "name": SCHEMA_NAME,
                "schema": OUTPUT_SCHEMA,
                "strict": True,
            }
        },
        "max_output_tokens": settings.max_output_tokens,
        "store": False,
    }
    if settings.temperature is not None:
        request["temperature"] = settings.temperature
    return request


class OutputInvalid(ValueError):
    """The model's answer is not what the schema promised."""


def _date(value: object, where: str, turn: TurnView) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise OutputInvalid(f"{where}: expected an ISO date or null")
    try:
        parsed = datetime.fromisoformat(value) if "T" in value or " " in value else None
        if parsed is None:
            parsed = datetime.combine(date.fromisoformat(value), time(0))
    except ValueError:
        raise OutputInvalid(f"{where}: not an ISO date: {value[:40]!r}") from None
    # a date without a zone is local to the turn it came from
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=turn.occurred_at.tzinfo)


def _unit(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise OutputInvalid(f"{where}: expected a number in [0, 1]")
    return float(value)


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OutputInvalid(f"{where}: expected a list of strings")
    return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))


def _optional_str(value: object, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise OutputInvalid(f"{where}: expected a string or null")
    return (value.strip() or None) if isinstance(value, str) else None


def _fact(item: object, where: str, by_id: Mapping[str, TurnView]) -> Fact:
    if not isinstance(item, dict):
        raise OutputInvalid(f"{where}: expected an object")
    keys = set(item)
    if not set(_FACT_FIELDS) - _OPTIONAL <= keys <= set(_FACT_FIELDS):
        missing, extra = sorted(set(_FACT_FIELDS) - keys), sorted(keys - set(_FACT_FIELDS))
        raise OutputInvalid(f"{where}: missing {missing} unexpected {extra}")
    text = item["text"]
    if not isinstance(text, str) or not text.strip():
        raise OutputInvalid(f"{where}.text: expected a non-empty string")
    if item["category"] not in EXTRACTABLE_CATEGORIES:
        raise OutputInvalid(f"{where}.category: unknown {str(item['category'])[:40]!r}")
    if item["kind"] not in KINDS:
        raise OutputInvalid(f"{where}.kind: unknown {str(item['kind'])[:40]!r}")
    sources = _strings(item["source_turn_ids"], f"{where}.source_turn_ids")
    unknown = [s for s in sources if s not in by_id]
    if not sources or unknown:
        raise OutputInvalid(
            f"{where}.source_turn_ids: need ids from the input, got unknown {unknown[:3]}"
        )
    first = by_id[sources[0]]
    try:
        return Fact(
            category=cast(Category, item["category"]),
            text=" ".join(text.split()),
            confidence=_unit(item["confidence"], f"{where}.confidence"),
            importance=_unit(item["importance"], f"{where}.importance"),
            entities=_strings(item["entities"], f"{where}.entities"),
            valid_from=_date(item["valid_from"], f"{where}.valid_from", first),
            valid_until=_date(item["valid_until"], f"{where}.valid_until", first),
            kind=cast(Kind, item["kind"]),
            source_turn_ids=sources,
            subject=_optional_str(item["subject"], f"{where}.subject"),
            slot=_optional_str(item["slot"], f"{where}.slot"),
        )
    except OutputInvalid:
        raise
    except (ValueError, TypeError) as exc:
        raise OutputInvalid(f"{where}: {exc}") from None


def parse_output(text: str, turns: Sequence[TurnView]) -> tuple[Fact, ...]:
    """Strictly validated facts from the model's JSON; any deviation raises OutputInvalid."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise OutputInvalid(f"not JSON: {text[:60]!r}") from None
    if not isinstance(data, dict) or set(data) != {"facts"} or not isinstance(data["facts"], list):
        raise OutputInvalid('expected {"facts": [...]}')
    by_id = {t.turn_id: t for t in turns}
    facts = [_fact(item, f"facts[{i}]", by_id) for i, item in enumerate(data["facts"])]
    for i, item in enumerate(data["facts"]):
        cause = item.get("caused_by")
        if cause is None:
            continue
        if isinstance(cause, bool) or not isinstance(cause, int) or not 0 <= cause < len(facts):
            raise OutputInvalid(f"facts[{i}].caused_by: not the index of a fact in this answer")
        if cause != i:  # a fact is not its own cause: ignored, not an error
            facts[i] = replace(facts[i], cause=facts[cause].text)
    for i, item in enumerate(data["facts"]):
        links = _links(item.get("related"), i, facts, f"facts[{i}].related")
        if links:
            facts[i] = replace(facts[i], links=links)
    return tuple(facts)


def _links(value: object, i: int, facts: Sequence[Fact], where: str) -> tuple[tuple[str, str], ...]:
    """A fact's declared links as (relation, other fact's text); a link to itself is ignored."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise OutputInvalid(f"{where}: expected a list")
    out: list[tuple[str, str]] = []
    for n, link in enumerate(value):
        other = link.get("fact") if isinstance(link, dict) else None
        relation = link.get("relation") if isinstance(link, dict) else None
        if (
            not isinstance(link, dict)
            or set(link) != {"fact", "relation"}
            or isinstance(other, bool)
            or not isinstance(other, int)
            or not 0 <= other < len(facts)
        ):
            raise OutputInvalid(f"{where}[{n}]: expected {{fact: index in this answer, relation}}")
        if relation not in DECLARED_RELATIONS:
            raise OutputInvalid(f"{where}[{n}].relation: one of {list(DECLARED_RELATIONS)}")
        if other != i and (relation, facts[other].text) not in out:
            out.append((str(relation), facts[other].text))
    return tuple(out)


# --- retry policy and cost -----------------------------------------------------------------


def backoff_delay(
    attempt: int, settings: LLMSettings, retry_after: float | None, draw: float
) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0-based).

    Exponential from ``backoff_base_s``, capped; ``draw`` in [0, 1) takes up to
    ``jitter`` of it off. A server's retry-after is a floor, itself capped.
    """
    delay = min(settings.backoff_max_s, settings.backoff_base_s * 2.0 ** min(attempt, 30))
    delay *= 1.0 - settings.jitter * draw
    if retry_after is not None:
        delay = max(delay, min(retry_after, settings.retry_after_max_s))
    return delay


def price_for(model: str, prices: Mapping[str, Price]) -> Price | None:
    """Exact model name, else the longest known prefix ("gpt-4.1-mini-2025-04-14")."""
    if model in prices:
        return prices[model]
    matches = [name for name in prices if model.startswith(name)]
    return prices[max(matches, key=len)] if matches else None


def estimate_cost(
    model: str, tokens_in: int, tokens_out: int, prices: Mapping[str, Price]
) -> float:
    """USD for the tokens; 0.0 for a model without a price (reported, not guessed)."""
    price = price_for(model, prices)
    if price is None:
        return 0.0
    return (tokens_in * price.input_per_mtok + tokens_out * price.output_per_mtok) / 1_000_000


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The server's requested wait from retry-after-ms / retry-after (seconds), if any."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except ValueError:
            continue  # an HTTP date: would need the wall clock, fall back to our backoff
        if math.isfinite(value) and value >= 0:
            return value
    return None


@dataclass(frozen=True, slots=True)
class _Failure:
    outcome: CallOutcome
    retryable: bool
    status: int | None = None
    retry_after: float | None = None
    detail: str = ""


def classify_failure(exc: BaseException) -> _Failure:
    """What an exception from one attempt means for the retry loop."""
    if isinstance(exc, OutputInvalid):
        return _Failure("invalid_output", True, detail=str(exc)[:200])
    if isinstance(exc, openai.APITimeoutError):
        return _Failure("timeout", True, detail="request timed out")
    if isinstance(exc, openai.APIConnectionError):
        return _Failure("connection_error", True, detail=str(exc)[:200])
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        after = retry_after_seconds(exc.response.headers)
        if status == 429:
            return _Failure("rate_limited", True, status, after, "rate limited")
        if status >= 500 or status in (408, 409):
            return _Failure("server_error", True, status, after, f"HTTP {status}")
        return _Failure("client_error", False, status, None, f"HTTP {status}: {str(exc)[:160]}")
    return _Failure("error", False, detail=f"{type(exc).__name__}: {str(exc)[:160]}")


def batches(turns: Sequence[TurnView], size: int) -> list[tuple[TurnView, ...]]:
    return [tuple(turns[i : i + size]) for i in range(0, len(turns), size)]


# --- the shell --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _BatchOutcome:
    facts: tuple[Fact, ...] | None  # None: the model never gave a valid answer
    calls: tuple[LLMCall, ...]
    reason: str | None = None


def _settle(result: _BatchOutcome | BaseException) -> _BatchOutcome:
    """A batch that crashed (a bug, not a model failure) still falls back, never vanishes."""
    if isinstance(result, asyncio.CancelledError):
        raise result
    if isinstance(result, BaseException):
        return _BatchOutcome(None, (), f"error: {type(result).__name__}: {str(result)[:160]}")
    return result


class LLMExtractor:
    """Extraction by a model behind the Responses API, with the rules as a safety net."""

    name = "llm"

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        client: AsyncOpenAI | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        seed: int = 0,
    ) -> None:
        self.settings = settings or LLMSettings()
        self._client = client
        self._owns_client = client is None
        self._client_error: str | None = None
        self._sleep = sleep
        self._rng = random.Random(seed)
        # one limit for the extractor, shared by concurrent extract() calls
        self._limit = asyncio.Semaphore(self.settings.max_concurrency)

    def _get_client(self) -> AsyncOpenAI | None:
        if self._client is None and self._client_error is None:
            try:
                self._client = AsyncOpenAI(
                    api_key=self.settings.api_key,
                    base_url=self.settings.base_url,
                    timeout=self.settings.timeout_s,
                    max_retries=0,
                )
            except openai.OpenAIError as exc:  # e.g. no API key configured
                self._client_error = f"client unavailable: {str(exc)[:160]}"
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._owns_client:
            await self._client.close()
            self._client = None

    async def __aenter__(self) -> LLMExtractor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def extract(self, turns: Sequence[TurnView]) -> ExtractionResult:
        turns = tuple(turns)
        chunks = batches(turns, self.settings.max_turns_per_call)
        client = self._get_client() if turns else None
        if client is None:
            outcomes = [_BatchOutcome(None, (), self._client_error) for _ in chunks]
        else:
            settled = await asyncio.gather(
                *(self._run_batch(client, i, chunk) for i, chunk in enumerate(chunks)),
                return_exceptions=True,
            )
            outcomes = [_settle(result) for result in settled]
        return self._assemble(turns, chunks, outcomes)

    async def _run_batch(
        self, client: AsyncOpenAI, index: int, turns: tuple[TurnView, ...]
    ) -> _BatchOutcome:
        request = build_request(turns, self.settings)
        calls: list[LLMCall] = []
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            tokens_in = tokens_out = 0
            try:
                async with self._limit:
                    response = await client.responses.create(**request)
                usage = response.usage
                if usage is not None:
                    tokens_in, tokens_out = usage.input_tokens, usage.output_tokens
                if response.status not in (None, "completed"):
                    details = response.incomplete_details
                    raise OutputInvalid(
                        f"response {response.status}: {details.reason if details else 'unknown'}"
                    )
                facts = parse_output(response.output_text, turns)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every failure is recorded; none may lose the batch
                failure = classify_failure(exc)
                last = attempt == attempts - 1 or not failure.retryable
                delay = (
                    None
                    if last
                    else backoff_delay(
                        attempt, self.settings, failure.retry_after, self._rng.random()
                    )
                )
                calls.append(
                    LLMCall(
                        batch=index,
                        attempt=attempt,
                        outcome=failure.outcome,
                        status=failure.status,
                        tokens_in=tokens_in,
                        tokens_out=tokens_out,
                        retry_in_s=delay,
                        detail=failure.detail,
                    )
                )
                if delay is None:
                    status = f" ({failure.status})" if failure.status else ""
                    reason = f"{failure.outcome}{status} after {attempt + 1} attempt(s): {failure.detail}"
                    return _BatchOutcome(None, tuple(calls), reason)
                await self._sleep(delay)
                continue
            calls.append(
                LLMCall(
                    batch=index,
                    attempt=attempt,
                    outcome="ok",
                    status=200,
                    tokens_in=tokens_in,
                    tokens_out=tokens_out,
                )
            )
            return _BatchOutcome(facts, tuple(calls))
        raise AssertionError("unreachable: the last attempt always returns")

    def _assemble(
        self,
        turns: tuple[TurnView, ...],
        chunks: list[tuple[TurnView, ...]],
        outcomes: list[_BatchOutcome],
    ) -> ExtractionResult:
        facts: list[Fact] = []
        fallback_ids: list[str] = []
        reasons: list[str] = []
        for index, (chunk, outcome) in enumerate(zip(chunks, outcomes, strict=True)):
            if outcome.facts is not None:
                facts.extend(outcome.facts)
                continue
            facts.extend(extract_rules(chunk))
            fallback_ids.extend(t.turn_id for t in chunk)
            reasons.append(f"batch {index + 1}/{len(chunks)}: {outcome.reason or 'no answer'}")
        calls = tuple(call for outcome in outcomes for call in outcome.calls)
        tokens_in = sum(c.tokens_in for c in calls)
        tokens_out = sum(c.tokens_out for c in calls)
        reason = "; ".join(reasons)
        return ExtractionResult(
            facts=tuple(facts),
            extraction=Extraction(
                extractor=self.name,
                model=self.settings.model,
                prompt_version=PROMPT_VERSION,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                fallback=bool(fallback_ids),
                fallback_reason=(reason[:997] + "...") if len(reason) > 1000 else (reason or None),
            ),
            llm_calls=len(calls),
            cost_usd=estimate_cost(
                self.settings.model, tokens_in, tokens_out, self.settings.prices
            ),
            covered_turn_ids=tuple(t.turn_id for t in turns),
            fallback_turn_ids=tuple(fallback_ids),
            calls=calls,
        )
