"""Dead letters: a rejected record's original bytes, where it came from, and why.

The value is a JSON object (``original_b64`` holds the bytes exactly as they arrived,
so nothing is lost even when they are not valid UTF-8); headers repeat the reason so
tools can filter without decoding.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from schemas.errors import EventValidationError


@dataclass(frozen=True, slots=True)
class DeadLetter:
    reason: str
    message: str
    path: str
    source_topic: str
    partition: int
    offset: int
    agent: str
    failed_at: datetime
    original: bytes
    original_key: bytes | None

    @property
    def original_text(self) -> str:
        return self.original.decode("utf-8", errors="replace")


def dead_letter_from(
    error: EventValidationError | Exception,
    *,
    original: bytes,
    original_key: bytes | None,
    source_topic: str,
    partition: int,
    offset: int,
    agent: str,
    failed_at: datetime,
) -> DeadLetter:
    if isinstance(error, EventValidationError):
        reason, message, path = error.code, error.message, error.path
    else:  # a bug or an unexpected payload in an agent: still never dropped
        reason, message, path = "agent_error", f"{type(error).__name__}: {error}"[:2000], ""
    return DeadLetter(
        reason,
        message,
        path,
        source_topic,
        partition,
        offset,
        agent,
        failed_at,
        original,
        original_key,
    )


def encode_dead_letter(dl: DeadLetter) -> tuple[bytes, list[tuple[str, bytes]]]:
    value = orjson.dumps(
        {
            "reason": dl.reason,
            "message": dl.message,
            "path": dl.path,
            "source_topic": dl.source_topic,
            "partition": dl.partition,
            "offset": dl.offset,
            "agent": dl.agent,
            "failed_at": dl.failed_at,
            "original_b64": base64.b64encode(dl.original).decode(),
            "original_key_b64": None
            if dl.original_key is None
            else base64.b64encode(dl.original_key).decode(),
        }
    )
    headers = [
        ("memstream-dlq-reason", dl.reason.encode()),
        ("memstream-dlq-source", dl.source_topic.encode()),
        ("memstream-dlq-agent", dl.agent.encode()),
    ]
    return value, headers


def decode_dead_letter(raw: bytes) -> DeadLetter:
    obj: dict[str, Any] = orjson.loads(raw)
    key = obj.get("original_key_b64")
    return DeadLetter(
        reason=obj["reason"],
        message=obj["message"],
        path=obj.get("path", ""),
        source_topic=obj["source_topic"],
        partition=obj["partition"],
        offset=obj["offset"],
        agent=obj["agent"],
        failed_at=datetime.fromisoformat(obj["failed_at"]),
        original=base64.b64decode(obj["original_b64"]),
        original_key=None if key is None else base64.b64decode(key),
    )
