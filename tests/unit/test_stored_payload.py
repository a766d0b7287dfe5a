"""The retrieval store's payload codec: ``extra`` is stored as one JSON string, and payloads
written before that (``extra`` a mapping) still read back."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.sparse import SparseVector
from memstream.projections.retrieval.port import (
    EXTRA_JSON,
    LogPosition,
    MemoryPayload,
    MemoryPoint,
    decode_payload,
    encode_payload,
    parsed_payload,
)

_json: Any = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


def _point(extra: dict[str, Any]) -> MemoryPoint:
    return MemoryPoint.build(
        memory_id="m1",
        namespace="tenant-a",
        dense=[1.0, 0.0],
        sparse=SparseVector((), ()),
        payload=MemoryPayload(text="Ana lives in Porto", source_turn_ids=("t1",), extra=extra),
        position=LogPosition(2, 17),
    )


def test_extra_is_stored_as_one_string() -> None:
    raw = encode_payload(_point({"state": {"text": "Ana lives in Porto", "tags": ["a"]}}))
    assert "extra" not in raw
    assert isinstance(raw[EXTRA_JSON], str)
    memory_id, namespace, payload, position = decode_payload(raw)
    assert (memory_id, namespace, position) == ("m1", "tenant-a", LogPosition(2, 17))
    assert payload.extra == {"state": {"text": "Ana lives in Porto", "tags": ["a"]}}


def test_a_payload_written_before_the_string_reads_back() -> None:
    raw = encode_payload(_point({}))
    del raw[EXTRA_JSON]
    raw["extra"] = {"state": {"text": "old"}, "source_text": "I live in Porto"}
    assert parsed_payload(raw) is raw
    assert decode_payload(raw)[2].extra == {
        "state": {"text": "old"},
        "source_text": "I live in Porto",
    }


@given(st.dictionaries(st.text(max_size=10), _json, max_size=5))
def test_extra_round_trips(extra: dict[str, Any]) -> None:
    raw = encode_payload(_point(extra))
    assert decode_payload(raw)[2].extra == extra
    assert decode_payload(parsed_payload(raw))[2].extra == extra
