from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memstream.schemas import EventValidationError
from memstream.streams.deadletter import dead_letter_from, decode_dead_letter, encode_dead_letter


@given(st.binary(max_size=200), st.none() | st.binary(max_size=20))
def test_dead_letters_keep_the_original_bytes(original: bytes, key: bytes | None) -> None:
    dl = dead_letter_from(
        EventValidationError("bad_json", "nope", "x"),
        original=original,
        original_key=key,
        source_topic="t",
        partition=1,
        offset=7,
        agent="a",
        failed_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    value, headers = encode_dead_letter(dl)
    assert decode_dead_letter(value) == dl
    assert ("memstream-dlq-reason", b"bad_json") in headers


def test_unexpected_errors_are_agent_errors() -> None:
    dl = dead_letter_from(
        KeyError("boom"),
        original=b"x",
        original_key=None,
        source_topic="t",
        partition=0,
        offset=0,
        agent="a",
        failed_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    assert dl.reason == "agent_error" and "KeyError" in dl.message
