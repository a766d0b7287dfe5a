"""Idempotent topic creation from the registry in ``schemas.topics``.

Run before any worker starts: faust would otherwise auto-create topics with broker
defaults (wrong partition counts, no retention settings).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from memstream.infra.log_identity import META_CONFIG, ensure_identity, meta_topic
from memstream.schemas.topics import TOPICS, TopicSpec


@dataclass(frozen=True, slots=True)
class TopicStatus:
    name: str
    partitions: int
    created: bool
    note: str = ""


def topic_names(prefix: str) -> dict[str, str]:
    """role -> full topic name."""
    return {spec.role: spec.name(prefix) for spec in TOPICS}


def _partitions(spec: TopicSpec, default_partitions: int) -> int:
    # The DLQ stays single-partition so dead letters read back in arrival order.
    return spec.partitions if spec.role == "dlq" else default_partitions


async def ensure_topics(
    bootstrap: str, prefix: str, partitions: int, *, auth: Mapping[str, Any] | None = None
) -> list[TopicStatus]:
    """``auth``: the client options of ``infra.kafka_auth.client_options``. Also creates
    ``<prefix>.meta`` with the log's identity record (``infra/log_identity.py``)."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=15000, **(auth or {})
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [
            (spec.config, spec.name(prefix), _partitions(spec, partitions)) for spec in TOPICS
        ] + [(META_CONFIG, meta_topic(prefix), 1)]
        missing = [
            NewTopic(name, n, 1, topic_configs=dict(config))
            for config, name, n in wanted
            if name not in existing
        ]
        if missing:
            # Another process may win the race: fine, creation is idempotent.
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics(missing)
        described = {}
        for info in await admin.describe_topics([name for _s, name, _n in wanted]):
            described[info["topic"]] = len(info["partitions"])
        statuses = []
        missing_names = {t.name for t in missing}
        for _spec, name, n in wanted:
            actual = described.get(name, 0)
            note = "" if actual == n else f"has {actual} partitions, registry says {n}"
            statuses.append(TopicStatus(name, actual, name in missing_names, note))
    finally:
        await admin.close()
    await ensure_identity(bootstrap, prefix, auth=auth)
    return statuses
