"""Upcasters: pure functions that lift an old payload one schema version up.

Events on the log are immutable, so old versions stay there forever; the decoder
runs the chain ``v -> v+1 -> ... -> current`` on every read. A version with no
registered step is rejected with ``no_upcaster`` (it goes to the dead-letter topic).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memstream.schemas.errors import EventValidationError

Payload = dict[str, Any]
Upcaster = Callable[[Payload], Payload]

#: (event type, from version) -> function returning the payload at from version + 1
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def upcaster(event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    def register(fn: Upcaster) -> Upcaster:
        UPCASTERS[(event_type, from_version)] = fn
        return fn

    return register


@upcaster("ConversationTurn", 1)
def _turn_v1_to_v2(payload: Payload) -> Payload:
    """v1 called the text ``content`` and had no speaker; v2 names the speaker.

    A v1 producer sometimes put the speaker in metadata; otherwise the role stands in.
    """
    out = dict(payload)
    if "content" in out:
        out["text"] = out.pop("content")
    if "speaker" not in out:
        meta = out.get("metadata")
        speaker = meta.get("speaker") if isinstance(meta, dict) else None
        out["speaker"] = (
            speaker if isinstance(speaker, str) and speaker else out.get("role", "unknown")
        )
    return out


def upcast(event_type: str, version: int, current: int, payload: Payload) -> Payload:
    while version < current:
        step = UPCASTERS.get((event_type, version))
        if step is None:
            raise EventValidationError(
                "no_upcaster",
                f"{event_type} v{version} cannot be read: no upcaster to v{version + 1}",
            )
        payload = step(payload)
        version += 1
    return payload
