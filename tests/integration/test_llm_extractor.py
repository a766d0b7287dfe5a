"""The LLM extractor with the real openai client against the fake Responses server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import openai
import pytest

from memstream.core.facts import TurnView
from memstream.core.rule_extractor import RULES_VERSION, extract_rules
from memstream.streams.extraction import (
    Extractor,
    LLMCall,
    RuleExtractor,
    make_extractor,
    rules_result,
)
from memstream.streams.llm_extractor import (
    OUTPUT_SCHEMA,
    PROMPT_VERSION,
    LLMExtractor,
    LLMSettings,
    OutputInvalid,
    Price,
    backoff_delay,
    build_request,
    estimate_cost,
    parse_output,
    price_for,
    retry_after_seconds,
)
from tests.fakes import (
    Behaviour,
    CannedFacts,
    Delay,
    Derive,
    FakeResponsesServer,
    Malformed,
    RateLimited,
    Reply,
    ServerError,
    serve_in_thread,
)
from tests.fakes import fixtures as fake_fixtures

# The shared fixture, registered in this module the way a conftest would.
fake_responses_server = fake_fixtures.fake_responses_server

pytestmark = pytest.mark.integration

T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
PRICES = {"test-model": Price(input_per_mtok=1.0, output_per_mtok=4.0)}


def make_turns(n: int, speaker: str = "Caroline") -> list[TurnView]:
    return [
        TurnView(
            turn_id=f"s1:{i}",
            role="user" if i % 3 != 2 else "assistant",
            speaker=speaker if i % 3 != 2 else "assistant",
            text=f"I moved to Boston yesterday. I love tea number {i}.",
            occurred_at=T0 + timedelta(minutes=i),
            session_id="s1",
        )
        for i in range(n)
    ]


class Sleeps:
    """Records backoff waits instead of sleeping them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def extractor(
    server: FakeResponsesServer, sleeps: Sleeps | None = None, **overrides: Any
) -> LLMExtractor:
    options: dict[str, Any] = {
        "model": "test-model",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "timeout_s": 5.0,
        "max_retries": 3,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.1,
        "jitter": 0.0,
        "prices": PRICES,
    } | overrides
    return LLMExtractor(LLMSettings(**options), sleep=sleeps or Sleeps())


def fact_dict(turn_id: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "text": "Caroline moved to Boston on 7 May 2023",
        "category": "fact",
        "confidence": 0.9,
        "importance": 0.6,
        "entities": ["Caroline", "Boston"],
        "valid_from": "2023-05-07",
        "valid_until": None,
        "kind": "episode",
        "source_turn_ids": [turn_id],
        "subject": "caroline",
        "slot": "location",
    }
    return base | changes


def outcomes(calls: tuple[LLMCall, ...]) -> list[str]:
    return [c.outcome for c in calls]


# --- success -------------------------------------------------------------------------


async def test_success_with_token_accounting(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    turns = make_turns(3)
    async with extractor(server) as ex:
        result = await ex.extract(turns)

    assert outcomes(result.calls) == ["ok"]
    assert result.llm_calls == 1
    # the fake derives one fact per user sentence; the assistant turn gives none
    assert [f.text for f in result.facts] == [
        "Caroline said: I moved to Boston yesterday",
        "Caroline said: I love tea number 0",
        "Caroline said: I moved to Boston yesterday",
        "Caroline said: I love tea number 1",
    ]
    assert [f.source_turn_ids for f in result.facts] == [("s1:0",), ("s1:0",), ("s1:1",), ("s1:1",)]
    e = result.extraction
    assert (e.extractor, e.model, e.prompt_version, e.fallback, e.fallback_reason) == (
        "llm",
        "test-model",
        PROMPT_VERSION,
        False,
        None,
    )
    assert (e.tokens_in, e.tokens_out) == (server.tokens_in, server.tokens_out)
    assert e.tokens_in > 0 and e.tokens_out > 0
    assert result.cost_usd == pytest.approx((e.tokens_in * 1.0 + e.tokens_out * 4.0) / 1e6)
    assert result.covered_turn_ids == tuple(t.turn_id for t in turns)
    assert result.fallback_turn_ids == ()


async def test_request_uses_structured_output_and_cites_turn_ids(
    fake_responses_server: FakeResponsesServer,
) -> None:
    server = fake_responses_server
    turns = make_turns(2)
    async with extractor(server) as ex:
        await ex.extract(turns)

    (request,) = server.requests
    body = request.body
    assert body["model"] == "test-model"
    assert body["text"]["format"] == {
        "type": "json_schema",
        "name": "memory_facts",
        "schema": OUTPUT_SCHEMA,
        "strict": True,
    }
    assert "third person" in body["instructions"]
    sent = json.loads(body["input"])
    assert [t["turn_id"] for t in sent["turns"]] == ["s1:0", "s1:1"]
    assert sent["turns"][0]["occurred_at"] == T0.isoformat()
    assert request.headers["Authorization"] == "Bearer sk-test"


async def test_canned_facts_are_validated_into_facts(
    fake_responses_server: FakeResponsesServer,
) -> None:
    server = fake_responses_server
    server.script(
        CannedFacts(
            (fact_dict("s1:0"), fact_dict("s1:1", text="Caroline loves tea", valid_from=None))
        )
    )
    async with extractor(server) as ex:
        result = await ex.extract(make_turns(2))

    first, second = result.facts
    assert first.valid_from == datetime(2023, 5, 7, tzinfo=UTC)  # date-only: the turn's zone
    assert (first.subject, first.slot, first.kind) == ("caroline", "location", "episode")
    assert first.entities == ("Caroline", "Boston")
    assert second.text == "Caroline loves tea"
    assert result.extraction_for(first) == result.extraction


# --- retries -----------------------------------------------------------------------------


async def test_429_then_success_honours_retry_after(
    fake_responses_server: FakeResponsesServer,
) -> None:
    server = fake_responses_server
    server.script(RateLimited(retry_after=0.05))
    sleeps = Sleeps()
    async with extractor(server, sleeps) as ex:
        result = await ex.extract(make_turns(2))

    assert outcomes(result.calls) == ["rate_limited", "ok"]
    assert result.calls[0].status == 429
    assert sleeps.delays == [0.05]  # the server asked for more than our 0.01 backoff
    assert result.calls[0].retry_in_s == 0.05
    assert not result.extraction.fallback
    assert len(server.requests) == 2


async def test_500s_until_fallback_to_rules(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    server.script(*[ServerError(500)] * 4)
    sleeps = Sleeps()
    turns = make_turns(3)
    async with extractor(server, sleeps, max_retries=3) as ex:
        result = await ex.extract(turns)

    assert outcomes(result.calls) == ["server_error"] * 4
    assert sleeps.delays == [0.01, 0.02, 0.04]  # exponential, no wait after the last
    assert result.llm_calls == 4
    e = result.extraction
    assert e.fallback is True
    assert (
        e.fallback_reason is not None
        and "server_error (500) after 4 attempt(s)" in e.fallback_reason
    )
    assert (e.tokens_in, e.tokens_out, result.cost_usd) == (0, 0, 0.0)
    assert list(result.facts) == extract_rules(turns)
    assert result.fallback_turn_ids == result.covered_turn_ids == tuple(t.turn_id for t in turns)
    provenance = result.extraction_for(result.facts[0])
    assert (provenance.extractor, provenance.prompt_version, provenance.fallback) == (
        "rules",
        RULES_VERSION,
        True,
    )


async def test_backoff_is_capped(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    server.script(*[ServerError(503)] * 6)
    sleeps = Sleeps()
    async with extractor(server, sleeps, max_retries=5, backoff_max_s=0.05) as ex:
        result = await ex.extract(make_turns(1))
    assert sleeps.delays == [0.01, 0.02, 0.04, 0.05, 0.05]
    assert result.extraction.fallback


async def test_client_errors_are_not_retried(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    server.script(ServerError(401))
    async with extractor(server) as ex:
        result = await ex.extract(make_turns(2))
    assert outcomes(result.calls) == ["client_error"]
    assert result.extraction.fallback
    assert len(server.requests) == 1


async def test_timeout_then_success(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    server.script(Delay(5.0))
    async with extractor(server, timeout_s=0.3) as ex:
        result = await ex.extract(make_turns(2))
    assert outcomes(result.calls) == ["timeout", "ok"]
    assert not result.extraction.fallback
    assert len(result.facts) == 4


async def test_timeouts_until_fallback(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    server.script(Delay(5.0), Delay(5.0))
    turns = make_turns(2)
    async with extractor(server, timeout_s=0.3, max_retries=1) as ex:
        result = await ex.extract(turns)
    assert outcomes(result.calls) == ["timeout", "timeout"]
    assert result.extraction.fallback_reason is not None
    assert "timeout after 2 attempt(s)" in result.extraction.fallback_reason
    assert list(result.facts) == extract_rules(turns)


async def test_malformed_json_then_success_counts_all_tokens(
    fake_responses_server: FakeResponsesServer,
) -> None:
    server = fake_responses_server
    server.script(Malformed())
    async with extractor(server) as ex:
        result = await ex.extract(make_turns(2))
    assert outcomes(result.calls) == ["invalid_output", "ok"]
    assert result.calls[0].tokens_out > 0  # a bad answer is still billed
    assert (result.extraction.tokens_in, result.extraction.tokens_out) == (
        server.tokens_in,
        server.tokens_out,
    )
    assert not result.extraction.fallback


async def test_malformed_json_until_fallback(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    server.script(Malformed(), Malformed("not json at all"))
    turns = make_turns(2)
    async with extractor(server, max_retries=1) as ex:
        result = await ex.extract(turns)
    assert outcomes(result.calls) == ["invalid_output", "invalid_output"]
    assert result.extraction.fallback
    assert list(result.facts) == extract_rules(turns)


@pytest.mark.parametrize(
    ("behaviour", "complaint"),
    [
        (CannedFacts((fact_dict("s1:0", category="opinion"),)), "category"),
        (CannedFacts((fact_dict("s1:0", kind="memory"),)), "kind"),
        (CannedFacts((fact_dict("s1:0", source_turn_ids=["s9:9"]),)), "source_turn_ids"),
        (CannedFacts((fact_dict("s1:0", source_turn_ids=[]),)), "source_turn_ids"),
        (CannedFacts((fact_dict("s1:0", confidence=1.5),)), "confidence"),
        (CannedFacts((fact_dict("s1:0", confidence=True),)), "confidence"),
        (CannedFacts((fact_dict("s1:0", valid_from="last week"),)), "valid_from"),
        (CannedFacts(({k: v for k, v in fact_dict("s1:0").items() if k != "slot"},)), "missing"),
        (CannedFacts((fact_dict("s1:0", mood="happy"),)), "unexpected"),
        (CannedFacts((fact_dict("s1:0", text="  "),)), "text"),
        (Reply('{"facts": [], "notes": "extra"}'), "expected"),
        (Reply('["not", "an", "object"]'), "expected"),
        (Reply('{"facts": []}', status="incomplete"), "incomplete"),
    ],
)
async def test_schema_violations_are_failures(
    fake_responses_server: FakeResponsesServer, behaviour: Behaviour, complaint: str
) -> None:
    server = fake_responses_server
    server.script(behaviour)
    async with extractor(server, max_retries=0) as ex:
        result = await ex.extract(make_turns(2))
    assert outcomes(result.calls) == ["invalid_output"]
    assert result.extraction.fallback
    assert complaint in (result.calls[0].detail or "")


# --- concurrency and coverage -------------------------------------------------------


async def test_concurrency_limit_is_respected(fake_responses_server: FakeResponsesServer) -> None:
    server = fake_responses_server
    server.pause()
    turns = make_turns(6)
    async with extractor(server, max_concurrency=2, max_turns_per_call=1) as ex:
        task = asyncio.create_task(ex.extract(turns))
        for _ in range(500):  # wait (boundedly) until the limit is reached
            if server.in_flight >= 2:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # a broken limit would let more in meanwhile
        server.resume()
        result = await task

    assert server.max_in_flight == 2
    assert len(server.requests) == 6
    assert outcomes(result.calls) == ["ok"] * 6
    assert not result.extraction.fallback


async def test_every_turn_is_covered_when_one_batch_fails() -> None:
    def fail_batch_with_turn_4(body: dict[str, Any]) -> Behaviour:
        return ServerError(502) if '"s1:4"' in body["input"] else Derive()

    turns = make_turns(7)
    async with (
        FakeResponsesServer(default=fail_batch_with_turn_4) as server,
        extractor(server, max_turns_per_call=3, max_retries=1) as ex,
    ):
        result = await ex.extract(turns)

    ids = [t.turn_id for t in turns]
    assert result.covered_turn_ids == tuple(ids)
    assert result.fallback_turn_ids == ("s1:3", "s1:4", "s1:5")
    assert result.extraction.fallback_reason is not None
    assert result.extraction.fallback_reason.startswith("batch 2/3: server_error (502)")
    llm_batches = {c.batch for c in result.calls if c.outcome == "ok"}
    assert llm_batches == {0, 2}
    # the failed batch's facts are exactly the rules' facts for those turns
    fallback_facts = [f for f in result.facts if result.extraction_for(f).extractor == "rules"]
    assert fallback_facts == extract_rules(turns[3:6])
    cited = {i for f in result.facts for i in f.source_turn_ids}
    user_turns = {t.turn_id for t in turns if t.role == "user"}
    assert cited == user_turns  # every user turn said something, and each one is in a fact


async def test_missing_credentials_fall_back_without_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    turns = make_turns(2)
    result = await LLMExtractor(LLMSettings(base_url="http://127.0.0.1:9/v1")).extract(turns)
    assert result.llm_calls == 0
    assert result.extraction.fallback
    assert result.extraction.fallback_reason is not None
    assert "client unavailable" in result.extraction.fallback_reason
    assert result.covered_turn_ids == result.fallback_turn_ids == ("s1:0", "s1:1")


async def test_connection_refused_falls_back() -> None:
    turns = make_turns(1)
    settings = LLMSettings(
        base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=1, backoff_base_s=0.0
    )
    async with LLMExtractor(settings, sleep=Sleeps()) as ex:
        result = await ex.extract(turns)
    assert outcomes(result.calls) == ["connection_error", "connection_error"]
    assert list(result.facts) == extract_rules(turns)


async def test_no_turns_no_calls(fake_responses_server: FakeResponsesServer) -> None:
    async with extractor(fake_responses_server) as ex:
        result = await ex.extract([])
    assert (result.facts, result.llm_calls, result.covered_turn_ids) == ((), 0, ())
    assert not fake_responses_server.requests


# --- the interface ------------------------------------------------------------------


async def test_rule_extractor_behind_the_interface() -> None:
    turns = make_turns(3)
    rules = make_extractor("rules")
    assert isinstance(rules, RuleExtractor) and isinstance(rules, Extractor)
    result = await rules.extract(turns)
    assert result == rules_result(turns)
    assert result.facts and list(result.facts) == extract_rules(turns)
    assert (result.extraction.extractor, result.extraction.prompt_version) == (
        "rules",
        RULES_VERSION,
    )
    assert result.llm_calls == 0 and result.cost_usd == 0.0
    assert result.covered_turn_ids == tuple(t.turn_id for t in turns)
    llm = make_extractor("llm", LLMSettings(api_key="k"))
    assert isinstance(llm, LLMExtractor) and isinstance(llm, Extractor)


def test_threaded_server_speaks_the_real_response_shape() -> None:
    with serve_in_thread() as server:
        server.script(CannedFacts((fact_dict("t1"),)))
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        turns = [
            TurnView(turn_id="t1", role="user", speaker="Caroline", text="I moved.", occurred_at=T0)
        ]
        response = client.responses.create(**build_request(turns, LLMSettings(model="m")))
        client.close()
    assert response.object == "response"
    assert response.status == "completed"
    assert response.usage is not None
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    assert [f.text for f in parse_output(response.output_text, turns)] == [
        "Caroline moved to Boston on 7 May 2023"
    ]


# --- the pure parts -------------------------------------------------------------------


def test_backoff_delay() -> None:
    s = LLMSettings(backoff_base_s=0.5, backoff_max_s=8.0, jitter=0.0, retry_after_max_s=20.0)
    assert [backoff_delay(a, s, None, 0.0) for a in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert backoff_delay(0, s, 3.0, 0.0) == 3.0  # retry-after is a floor
    assert backoff_delay(0, s, 300.0, 0.0) == 20.0  # ...within reason
    jittery = LLMSettings(backoff_base_s=1.0, jitter=0.5)
    assert backoff_delay(0, jittery, None, 0.999) == pytest.approx(0.5005)
    assert backoff_delay(10_000, s, None, 0.0) == 8.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None),
        ({"retry-after": "-1"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds(headers: Mapping[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected


def test_prices_match_by_longest_prefix() -> None:
    prices = {"gpt-4.1": Price(2.0, 8.0), "gpt-4.1-mini": Price(0.4, 1.6)}
    assert price_for("gpt-4.1-mini-2025-04-14", prices) == Price(0.4, 1.6)
    assert price_for("gpt-4.1-2025-04-14", prices) == Price(2.0, 8.0)
    assert price_for("other", prices) is None
    assert estimate_cost("gpt-4.1-mini", 1_000_000, 500_000, prices) == pytest.approx(1.2)
    assert estimate_cost("other", 10, 10, prices) == 0.0


def test_parse_output_accepts_datetimes_and_keeps_zones() -> None:
    turns = make_turns(1)
    text = json.dumps(
        {
            "facts": [
                fact_dict("s1:0", valid_from="2023-05-07T10:00:00+02:00", valid_until="2023-06-01")
            ]
        }
    )
    (fact,) = parse_output(text, turns)
    assert fact.valid_from is not None and fact.valid_from.utcoffset() == timedelta(hours=2)
    assert fact.valid_until == datetime(2023, 6, 1, tzinfo=UTC)


def test_parse_output_rejects_inverted_validity() -> None:
    text = json.dumps(
        {"facts": [fact_dict("s1:0", valid_from="2023-06-01", valid_until="2023-05-01")]}
    )
    with pytest.raises(OutputInvalid, match="valid_until precedes"):
        parse_output(text, make_turns(1))


def test_parse_output_carries_a_declared_cause_as_the_cause_text() -> None:
    knee = fact_dict("s1:0", text="Caroline's knee hurts", slot=None, caused_by=1)
    run = fact_dict("s1:0", text="Caroline ran a marathon", slot=None, caused_by=None)
    effect, cause = parse_output(json.dumps({"facts": [knee, run]}), make_turns(1))
    assert effect.cause == "Caroline ran a marathon" and cause.cause is None
    older = fact_dict("s1:0")  # an answer without the field still parses
    assert parse_output(json.dumps({"facts": [older]}), make_turns(1))[0].cause is None
    for bad in (5, -1, "0", True):
        with pytest.raises(OutputInvalid, match="caused_by"):
            parse_output(json.dumps({"facts": [fact_dict("s1:0", caused_by=bad)]}), make_turns(1))


def test_parse_output_carries_declared_links_as_relation_and_text() -> None:
    plan = fact_dict("s1:0", text="Caroline plans a trip to Lisbon", slot=None)
    why = fact_dict(
        "s1:0",
        text="Caroline wants to see her sister",
        slot=None,
        related=[{"fact": 0, "relation": "related_to"}, {"fact": 1, "relation": "elaborates"}],
    )
    first, second = parse_output(json.dumps({"facts": [plan, why]}), make_turns(1))
    assert first.links == () and second.links == (
        ("related_to", "Caroline plans a trip to Lisbon"),
    )
    for bad in ([{"fact": 9, "relation": "elaborates"}], [{"fact": 0, "relation": "causes"}], "x"):
        with pytest.raises(OutputInvalid, match="related"):
            parse_output(json.dumps({"facts": [fact_dict("s1:0", related=bad)]}), make_turns(1))


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        LLMSettings(max_concurrency=0)


class _BrokenResponses:
    async def create(self, **_: Any) -> Any:
        raise RuntimeError("bug in a client plugin")


class _BrokenClient:
    responses = _BrokenResponses()


async def test_unexpected_errors_fall_back_without_retry() -> None:
    turns = make_turns(2)
    ex = LLMExtractor(
        LLMSettings(api_key="k"), client=cast(openai.AsyncOpenAI, _BrokenClient()), sleep=Sleeps()
    )
    result = await ex.extract(turns)
    assert outcomes(result.calls) == ["error"]
    assert result.extraction.fallback_reason is not None
    assert "RuntimeError: bug in a client plugin" in result.extraction.fallback_reason
    assert list(result.facts) == extract_rules(turns)


def test_api_key_stays_out_of_reprs() -> None:
    assert "sk-secret" not in repr(LLMSettings(api_key="sk-secret"))
