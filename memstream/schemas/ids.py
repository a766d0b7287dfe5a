"""Time-ordered event ids (UUIDv7 layout).

Producers get fresh ids from the wall clock; agents derive ids from what caused the
event (``derived_id``), so reprocessing a message after a crash emits the *same* ids
and idempotent consumers drop the repeat.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from datetime import datetime

_lock = threading.Lock()
_last_ms = 0
_seq = 0


def _uuid7(ms: int, rand_a: int, rand_b: int) -> str:
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= (rand_a & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand_b & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def new_event_id() -> str:
    """A fresh UUIDv7: sortable by creation time, monotonic within this process."""
    global _last_ms, _seq
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            ms = _last_ms
            _seq += 1
            if _seq > 0xFFF:  # more than 4096 ids in one millisecond: borrow the next one
                ms += 1
                _seq = 0
        else:
            _seq = int.from_bytes(os.urandom(2), "big") & 0x3FF
        _last_ms = ms
        seq = _seq
    return _uuid7(ms, seq, int.from_bytes(os.urandom(8), "big"))


def derived_id(at: datetime, *parts: str) -> str:
    """A deterministic UUIDv7 for an event derived from ``parts`` at event time ``at``."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    ms = int(at.timestamp() * 1000)
    return _uuid7(ms, int.from_bytes(digest[:2], "big"), int.from_bytes(digest[2:10], "big"))


def id_time(event_id: str) -> int:
    """Milliseconds since the epoch encoded in a UUIDv7."""
    return uuid.UUID(event_id).int >> 80
