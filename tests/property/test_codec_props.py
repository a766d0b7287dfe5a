"""Property tests of the wire codec: round trips, and a decoder that only ever raises its own error."""

from __future__ import annotations

import contextlib
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.schemas import EVENT_TYPES, EventValidationError, decode, encode
from memstream.schemas.envelope import Envelope
from tests.strategies import all_envelopes, envelopes, json_values

FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize("event_type", sorted(EVENT_TYPES))
def test_round_trip_every_event_type(event_type: str) -> None:
    @FAST
    @given(envelopes(EVENT_TYPES[event_type]))
    def check(env: Envelope[Any]) -> None:
        assert decode(encode(env)) == env

    check()


def _decode_only_raises_validation_error(raw: bytes) -> None:
    with contextlib.suppress(EventValidationError):
        decode(raw)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes(raw: bytes) -> None:
    _decode_only_raises_validation_error(raw)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_arbitrary_json(value: Any) -> None:
    _decode_only_raises_validation_error(orjson.dumps(value))


@FAST
@given(all_envelopes, st.data())
def test_mutated_events(env: Envelope[Any], data: st.DataObject) -> None:
    """Take a valid event and break one field at a time: never a crash, only validation errors."""
    obj = orjson.loads(encode(env))
    target = obj if data.draw(st.booleans()) or not obj["payload"] else obj["payload"]
    key = data.draw(st.sampled_from(sorted(target)))
    mutation = data.draw(st.sampled_from(["delete", "replace", "rename"]))
    if mutation == "delete":
        del target[key]
    elif mutation == "replace":
        target[key] = data.draw(json_values)
    else:
        target[key + "_x"] = target.pop(key)
    _decode_only_raises_validation_error(orjson.dumps(obj))


@FAST
@given(all_envelopes, st.binary(min_size=1, max_size=8), st.integers(0, 10_000))
def test_corrupted_bytes(env: Envelope[Any], garbage: bytes, at: int) -> None:
    raw = encode(env)
    at %= len(raw)
    _decode_only_raises_validation_error(raw[:at] + garbage + raw[at:])


@pytest.mark.parametrize(
    "stamp",
    ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2024-13-01T00:00:00Z", "yesterday"],
)
def test_out_of_range_times_are_validation_errors(stamp: str) -> None:
    raw = orjson.dumps(
        {
            "event_id": "e1",
            "type": "WorkflowObserved",
            "schema_version": 1,
            "occurred_at": stamp,
            "namespace": "n",
            "payload": {"workflow": "w", "outcome": "success"},
        }
    )
    with pytest.raises(EventValidationError, match="occurred_at"):
        decode(raw)


@settings(max_examples=200, deadline=None)
@given(st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()) | st.text(max_size=40))
def test_any_timestamp_string(stamp: str) -> None:
    raw = orjson.dumps(
        {
            "event_id": "e1",
            "type": "WorkflowObserved",
            "schema_version": 1,
            "occurred_at": stamp,
            "namespace": "n",
            "payload": {"workflow": "w", "outcome": "success"},
        }
    )
    _decode_only_raises_validation_error(raw)
