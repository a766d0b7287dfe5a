"""Dead letters: a rejected record's original bytes, where it came from, and why.

The value is a JSON object (``original_b64`` holds the bytes exactly as they arrived,
so nothing is lost even when they are not valid UTF-8); headers repeat the reason so
tools can filter without decoding.

A dead letter must itself fit in a Kafka record, and base64 adds a third: an original
over ``MAX_KEPT_ORIGINAL`` bytes (keys over ``MAX_KEPT_KEY``) is kept as its first bytes,
with its full size and SHA-256. The whole record stays at its source position (the input
topics keep everything), and the hash proves it is the one.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from memstream.schemas.errors import EventValidationError

#: bytes of an original record kept in its dead letter (base64: ~683 KiB, under the
#: 1 MiB default record limit of Kafka clients and brokers)
MAX_KEPT_ORIGINAL = 512 * 1024
#: bytes of an original key kept (a namespace is at most 128 characters)
MAX_KEPT_KEY = 1024


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
    original: bytes  # the first MAX_KEPT_ORIGINAL bytes: all of them unless truncated
    original_key: bytes | None
    original_size: int = -1  # of the whole original (-1: the same as len(original))
    original_sha256: str = ""  # of the whole original ("": of original)

    def __post_init__(self) -> None:
        if self.original_size < 0:
            object.__setattr__(self, "original_size", len(self.original))
        if not self.original_sha256:
            object.__setattr__(self, "original_sha256", _sha256(self.original))

    @property
    def original_text(self) -> str:
        return self.original.decode("utf-8", errors="replace")

    @property
    def truncated(self) -> bool:
        """Only the first bytes are here: the record is at its source topic and offset."""
        return len(self.original) < self.original_size


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
        original[:MAX_KEPT_ORIGINAL],
        None if original_key is None else original_key[:MAX_KEPT_KEY],
        len(original),
        _sha256(original),
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
            "original_size": dl.original_size,
            "original_sha256": dl.original_sha256,
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
        original_size=obj.get("original_size", -1),  # dead letters from before: complete
        original_sha256=obj.get("original_sha256", ""),
    )
