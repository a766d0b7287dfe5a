"""The one registry of topics: names, partitions, keys, retention and what flows on each.

Every topic is keyed by tenant namespace. Input topics and the memory log keep
everything (retention -1): the log is the source of truth that projections are
rebuilt from. ``memstream topics create`` reads this registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memstream.schemas.events import (
    MEMORY_TYPES,
    ConversationTurn,
    Feedback,
    MemoryAccessed,
    MemoryEdit,
    RecallAnswered,
    RecallRequested,
    TreeEdit,
    WorkflowObserved,
)

KEEP_FOREVER = {"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}


@dataclass(frozen=True, slots=True)
class TopicSpec:
    role: str
    suffix: str
    partitions: int
    event_types: tuple[str, ...]
    config: dict[str, str] = field(default_factory=dict)
    description: str = ""
    key: str = "namespace"

    def name(self, prefix: str) -> str:
        return f"{prefix}.{self.suffix}" if prefix else self.suffix


def _types(*classes: type) -> tuple[str, ...]:
    return tuple(c.TYPE for c in classes)  # type: ignore[attr-defined]


DEFAULT_PARTITIONS = 4

TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec(
        "turns",
        "turns",
        DEFAULT_PARTITIONS,
        _types(ConversationTurn),
        KEEP_FOREVER,
        "conversation turns from producers",
    ),
    TopicSpec(
        "access",
        "access",
        DEFAULT_PARTITIONS,
        _types(MemoryAccessed),
        KEEP_FOREVER,
        "which memories each recall returned",
    ),
    TopicSpec(
        "feedback",
        "feedback",
        DEFAULT_PARTITIONS,
        _types(Feedback, MemoryEdit, TreeEdit),
        KEEP_FOREVER,
        "how useful memories or recalls were, and direct edits",
    ),
    TopicSpec(
        "workflows",
        "workflows",
        DEFAULT_PARTITIONS,
        _types(WorkflowObserved),
        KEEP_FOREVER,
        "operational telemetry of workflows",
    ),
    TopicSpec(
        "recall_requests",
        "recall.requests",
        DEFAULT_PARTITIONS,
        _types(RecallRequested),
        {"retention.ms": str(7 * 24 * 3600 * 1000)},
        "recall asked on the bus",
    ),
    TopicSpec(
        "recall_replies",
        "recall.replies",
        DEFAULT_PARTITIONS,
        _types(RecallAnswered),
        {"retention.ms": str(7 * 24 * 3600 * 1000)},
        "recall answers, keyed by correlation id",
        key="correlation_id",
    ),
    TopicSpec(
        "memory_log",
        "memory.log",
        DEFAULT_PARTITIONS,
        _types(*MEMORY_TYPES),
        KEEP_FOREVER,
        "every memory decision: the source of truth for projections",
    ),
    TopicSpec(
        "dlq",
        "dlq",
        1,
        (),
        KEEP_FOREVER,
        "dead letters: original bytes plus the reason they were rejected",
        key="original key",
    ),
)

BY_ROLE: dict[str, TopicSpec] = {t.role: t for t in TOPICS}


def topic_for_type(event_type: str) -> TopicSpec:
    for spec in TOPICS:
        if event_type in spec.event_types:
            return spec
    raise KeyError(f"no topic carries {event_type}")
