"""A fresh embedded broker per benchmark: its memory storage only grows, so never reuse one."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Iterator

from memstream.infra.broker import EmbeddedBroker
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics


@contextlib.contextmanager
def fresh_broker(partitions: int = 4) -> Iterator[Settings]:
    with EmbeddedBroker() as broker:
        settings = Settings(
            kafka_bootstrap=broker.bootstrap,
            topic_prefix="bench",
            partitions=partitions,
            data_dir=tempfile.mkdtemp(prefix="memstream-bench-"),
        )
        asyncio.run(ensure_topics(broker.bootstrap, settings.topic_prefix, partitions))
        yield settings
