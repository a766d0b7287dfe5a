from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from memstream.schemas import (
    ConversationTurn,
    EventValidationError,
    Feedback,
    Limits,
    decode,
    encode,
    make_event,
)
from memstream.schemas.ids import derived_id, id_time, new_event_id
from memstream.schemas.upcasters import upcast

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def turn(text: str = "hello") -> ConversationTurn:
    return ConversationTurn(turn_id="t1", role="user", speaker="Ann", text=text)


def test_make_event_fills_the_envelope() -> None:
    env = make_event(turn(), namespace="acme", occurred_at=T0, session_id="s1", producer="chat")
    assert env.type == "ConversationTurn" and env.schema_version == 2
    assert env.occurred_at == T0 and env.key == b"acme" and env.producer == "chat"
    assert decode(encode(env)) == env


def test_event_ids_are_time_ordered_and_unique() -> None:
    ids = [new_event_id() for _ in range(5000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_derived_ids_are_deterministic_and_carry_event_time() -> None:
    a = derived_id(T0, "turn", "acme", "t1")
    assert a == derived_id(T0, "turn", "acme", "t1") != derived_id(T0, "turn", "acme", "t2")
    assert id_time(a) == int(T0.timestamp() * 1000)


def test_limits_are_configurable() -> None:
    with pytest.raises(EventValidationError, match="text_too_long"):
        make_event(turn("x" * 11), namespace="acme", limits=Limits(max_text_chars=10))
    raw = encode(make_event(turn("x" * 100), namespace="acme"))
    with pytest.raises(EventValidationError, match="too_large"):
        decode(raw, limits=Limits(max_event_bytes=100))


@pytest.mark.parametrize(
    ("mutate", "code", "path"),
    [
        (lambda o: o.pop("namespace"), "missing_field", "namespace"),
        (lambda o: o.update(namespace=""), "bad_namespace", "namespace"),
        (lambda o: o.update(extra=1), "unknown_field", ""),
        (lambda o: o["payload"].update(role="robot"), "bad_value", "payload.role"),
        (lambda o: o["payload"].update(turn_id=7), "wrong_type", "payload.turn_id"),
        (lambda o: o["payload"].pop("text"), "missing_field", "payload.text"),
        (lambda o: o["payload"].update(mood="happy"), "unknown_field", "payload"),
        (lambda o: o.update(occurred_at="2024-05-01T09:00:00"), "bad_datetime", "occurred_at"),
        (lambda o: o.update(schema_version=3), "unsupported_version", "schema_version"),
        (lambda o: o.update(schema_version=True), "wrong_type", "schema_version"),
        (lambda o: o.update(type="Nope"), "unknown_type", "type"),
        (lambda o: o["payload"].update(text="bell\x07"), "control_characters", "payload.text"),
    ],
)
def test_validation_errors_name_the_field(mutate, code, path) -> None:  # type: ignore[no-untyped-def]
    obj = orjson.loads(encode(make_event(turn(), namespace="acme", occurred_at=T0)))
    mutate(obj)
    with pytest.raises(EventValidationError) as info:
        decode(orjson.dumps(obj))
    assert info.value.code == code
    assert info.value.path == path


def test_upcaster_v1_turn() -> None:
    v2 = upcast("ConversationTurn", 1, 2, {"turn_id": "t", "role": "assistant", "content": "hi"})
    assert v2 == {"turn_id": "t", "role": "assistant", "text": "hi", "speaker": "assistant"}


def test_missing_upcaster_is_a_validation_error() -> None:
    with pytest.raises(EventValidationError, match="no_upcaster"):
        upcast("Feedback", 0, 1, {})


def test_feedback_cross_field_rules() -> None:
    with pytest.raises(EventValidationError, match="missing_target"):
        Feedback(outcome="positive")
    Feedback(query_id="q1", reward=0.3)


def test_tabs_and_newlines_are_fine() -> None:
    env = make_event(turn("line one\n\tline two\r\n"), namespace="acme")
    assert env.payload.text.startswith("line one")
