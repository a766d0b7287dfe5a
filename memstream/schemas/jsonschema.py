"""JSON Schema export, so producers in other languages validate exactly like the decoder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from memstream.schemas._fields import dataclass_schema
from memstream.schemas.envelope import NAMESPACE_RE
from memstream.schemas.events import EVENT_TYPES

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def event_schema(event_type: str) -> dict[str, Any]:
    cls = EVENT_TYPES[event_type]
    id_str = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,199}$"}
    opt_id = {"anyOf": [id_str, {"type": "null"}]}
    return {
        "$schema": DRAFT,
        "$id": f"memstream/{event_type}.v{cls.VERSION}.json",  # type: ignore[attr-defined]
        "title": f"{event_type} v{cls.VERSION}",  # type: ignore[attr-defined]
        "type": "object",
        "additionalProperties": False,
        "required": ["event_id", "type", "schema_version", "occurred_at", "namespace", "payload"],
        "properties": {
            "event_id": dict(id_str, description="time-ordered id (UUIDv7)"),
            "type": {"const": event_type},
            "schema_version": {"const": cls.VERSION},  # type: ignore[attr-defined]
            "occurred_at": {
                "type": "string",
                "format": "date-time",
                "description": "event time, set by the producer",
            },
            "recorded_at": {"type": "string", "format": "date-time"},
            "namespace": {
                "type": "string",
                "pattern": f"^{NAMESPACE_RE.pattern}$",
                "description": "tenant namespace: the partition key",
            },
            "session_id": opt_id,
            "causation_id": opt_id,
            "correlation_id": opt_id,
            "producer": {"type": "string", "minLength": 1, "maxLength": 200},
            "payload": dataclass_schema(cls),
        },
    }


def export(directory: Path) -> list[Path]:
    """Write one ``<Type>.v<N>.json`` per event type plus ``index.json``; returns the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    index: dict[str, str] = {}
    for event_type in sorted(EVENT_TYPES):
        schema = event_schema(event_type)
        path = directory / f"{event_type}.v{schema['properties']['schema_version']['const']}.json"
        path.write_bytes(
            orjson.dumps(schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
        index[event_type] = path.name
        written.append(path)
    idx = directory / "index.json"
    idx.write_bytes(orjson.dumps(index, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    written.append(idx)
    return written
