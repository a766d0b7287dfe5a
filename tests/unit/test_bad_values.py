"""Bad values at the edges: the SDK names the field instead of crashing, publishes nothing
invalid, and a dead letter always fits in a Kafka record."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest

from memstream.consumers.producer import AsyncProducer, turn_event
from memstream.infra.settings import Settings
from memstream.schemas import ConversationTurn, EventValidationError, decode
from memstream.schemas.envelope import Envelope, reject_non_finite, validated
from memstream.schemas.ids import derived_id
from memstream.streams.deadletter import (
    MAX_KEPT_KEY,
    MAX_KEPT_ORIGINAL,
    dead_letter_from,
    decode_dead_letter,
    encode_dead_letter,
)

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
TURN = {
    "namespace": "acme",
    "session_id": "s1",
    "turn_id": "t1",
    "role": "user",
    "speaker": "Ann",
    "text": "hello",
    "occurred_at": T0,
}


@pytest.mark.parametrize(
    ("change", "code", "path"),
    [
        ({"namespace": 5}, "bad_namespace", "namespace"),
        ({"turn_id": 7}, "wrong_type", "payload.turn_id"),
        ({"turn_id": None}, "wrong_type", "payload.turn_id"),
        ({"turn_id": "t\ud800"}, "invalid_utf8", "payload.turn_id"),
        ({"namespace": "a\udcff"}, "invalid_utf8", "namespace"),
        ({"text": "caf\udce9"}, "invalid_utf8", "payload.text"),
        ({"metadata": [1]}, "wrong_type", "payload.metadata"),
        ({"metadata": "abc"}, "wrong_type", "payload.metadata"),
        ({"metadata": {"k": float("nan")}}, "bad_number", "payload.metadata.k"),
        ({"metadata": {"k": [1, float("-inf")]}}, "bad_number", "payload.metadata.k[1]"),
        ({"metadata": {"k": {1, 2}}}, "wrong_type", "payload.metadata.k"),
        ({"metadata": {"k": b"x"}}, "wrong_type", "payload.metadata.k"),
        ({"metadata": {1: "x"}}, "wrong_type", "payload.metadata"),
        ({"metadata": {"k": 2**70}}, "bad_number", "payload.metadata.k"),
        ({"occurred_at": "2024-05-01"}, "bad_datetime", "occurred_at"),
        ({"occurred_at": 5}, "wrong_type", "occurred_at"),
    ],
)
def test_turn_event_names_the_bad_field(change: dict[str, Any], code: str, path: str) -> None:
    with pytest.raises(EventValidationError) as caught:
        turn_event(**(TURN | change))
    assert (caught.value.code, caught.value.path) == (code, path)
    str(caught.value).encode()  # printable, even when a key is the problem


def test_turn_ids_still_derive_from_namespace_turn_and_event_time() -> None:
    lisbon = T0.astimezone(timezone(timedelta(hours=1)))
    for at in (T0, lisbon):
        env = turn_event(**(TURN | {"occurred_at": at}))
        assert env.event_id == derived_id(T0, "turn", "acme", "t1")
        assert env.occurred_at == T0


def test_non_finite_numbers_are_found_by_path() -> None:
    reject_non_finite(ConversationTurn(turn_id="t", role="user", speaker="a", text="x"))
    with pytest.raises(EventValidationError, match=r"bad_number at payload\.metadata\.a\[0\]\.b"):
        reject_non_finite(
            ConversationTurn(
                turn_id="t",
                role="user",
                speaker="a",
                text="x",
                metadata={"a": [{"b": float("nan")}]},
            )
        )


def hand_built(**change: Any) -> Envelope[Any]:
    fields: dict[str, Any] = {
        "event_id": "01900000-0000-7000-8000-000000000001",
        "type": "ConversationTurn",
        "schema_version": 2,
        "occurred_at": T0,
        "recorded_at": T0,
        "namespace": "acme",
        "payload": ConversationTurn(turn_id="t1", role="user", speaker="Ann", text="hi"),
    }
    return Envelope(**(fields | change))


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"schema_version": 99}, "unsupported_version"),
        ({"schema_version": 0}, "wrong_type"),
        ({"event_id": "not an id"}, "bad_format"),
        ({"type": "Feedback", "schema_version": 1}, "unknown_field"),
    ],
)
def test_hand_built_envelopes_are_validated(change: dict[str, Any], code: str) -> None:
    with pytest.raises(EventValidationError, match=code):
        validated(hand_built(**change))


class FakeKafka:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    async def send(self, topic: str, value: bytes, **_kw: Any) -> asyncio.Future[Any]:
        self.sent.append(value)
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


async def test_the_producer_publishes_nothing_invalid() -> None:
    producer = AsyncProducer(Settings(), bootstrap="127.0.0.1:9")  # never connects
    kafka = FakeKafka()
    producer._producer = kafka  # type: ignore[assignment]
    good = hand_built()
    with pytest.raises(EventValidationError, match="unsupported_version"):
        await producer.publish_many([good, hand_built(schema_version=99)])
    with pytest.raises(EventValidationError, match=r"wrong_type at payload\.memory_ids"):
        await producer.feedback(namespace="acme", memory_ids="m1", outcome="positive")
    with pytest.raises(EventValidationError, match=r"bad_number at payload\.reward"):
        await producer.feedback(namespace="acme", memory_ids=["m1"], reward=float("nan"))
    with pytest.raises(EventValidationError, match=r"wrong_type at payload\.memories"):
        await producer.access(namespace="acme", query_id="q1", memories=[("m1",)])  # type: ignore[list-item]
    with pytest.raises(EventValidationError, match=r"wrong_type at payload\.memories\[1\]"):
        await producer.access(namespace="acme", query_id="q1", memories=[("a", 1.0), ("b", "x")])  # type: ignore[list-item]
    with pytest.raises(EventValidationError, match=r"wrong_type at payload\.evidence"):
        await producer.workflow(namespace="acme", workflow="w", outcome="success", evidence=[1])  # type: ignore[arg-type]
    assert kafka.sent == []
    await producer.publish_many([good])
    assert [decode(v).event_id for v in kafka.sent] == [good.event_id]


def test_decoding_a_record_with_no_value_is_a_validation_error() -> None:
    with pytest.raises(EventValidationError, match="bad_json: record has no value"):
        decode(None)  # type: ignore[arg-type]


def letter(original: bytes, key: bytes | None) -> Any:
    return dead_letter_from(
        EventValidationError("text_too_long", "too long", "payload.text"),
        original=original,
        original_key=key,
        source_topic="p.turns",
        partition=0,
        offset=3,
        agent="write-path",
        failed_at=T0,
    )


def test_a_huge_original_is_kept_as_its_first_bytes_with_size_and_hash() -> None:
    original = b'{"text": "' + b"y" * 2_000_000 + b'"}'
    dl = letter(original, b"k" * 5000)
    value, _headers = encode_dead_letter(dl)
    assert len(value) < 1_000_000  # fits in a Kafka record with the default limits
    back = decode_dead_letter(value)
    assert back == dl and back.truncated
    assert back.original == original[:MAX_KEPT_ORIGINAL] and back.original_size == len(original)
    assert back.original_sha256 == hashlib.sha256(original).hexdigest()
    assert back.original_key == b"k" * MAX_KEPT_KEY


def test_dead_letters_written_before_sizes_were_recorded_read_as_complete() -> None:
    value, _headers = encode_dead_letter(letter(b"\xff\xfe", b"acme"))
    old = {k: v for k, v in orjson.loads(value).items() if not k.startswith("original_s")}
    dl = decode_dead_letter(orjson.dumps(old))
    assert dl.original == b"\xff\xfe" and dl.original_size == 2 and not dl.truncated
    assert base64.b64decode(old["original_b64"]) == dl.original
    assert dl.original_sha256 == hashlib.sha256(b"\xff\xfe").hexdigest()
