"""Which log is this: an identity record written when the topics are created.

The first record of ``<prefix>.meta`` (one partition, kept forever) names the log's
*epoch*, a random id. A worker records the epoch it built its data directory from
(``<data_dir>/log.json``, per topic prefix); a broker that lost its data, or topics deleted
and created again, come back with another epoch (or none), so the worker's read positions
no longer mean anything there. The worker then refuses to start, /health says so, and
``memstream recover`` (README: Recovery) restores the log from the archive and records the
new epoch. Read positions past a partition's end are the other sign (``core/health.py``);
the epoch also catches a recreated log that has grown past the old positions.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

META_CONFIG = {"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}


def meta_topic(prefix: str) -> str:
    return f"{prefix}.meta" if prefix else "meta"


def epoch_of(value: bytes | None) -> str | None:
    """The epoch in an identity record's value (None for anything else)."""
    if not value:
        return None
    with contextlib.suppress(orjson.JSONDecodeError, AttributeError):
        epoch = orjson.loads(value).get("epoch")
        return epoch if isinstance(epoch, str) and epoch else None
    return None


async def read_identity(
    bootstrap: str, prefix: str, *, auth: Mapping[str, Any] | None = None, timeout: float = 10.0
) -> str | None:
    """The epoch of the log at ``bootstrap`` (None: no identity record, or no meta topic)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        **(auth or {}),
    )
    await consumer.start()
    try:
        topic = meta_topic(prefix)
        if not consumer.partitions_for_topic(topic):
            await consumer.force_metadata_update()
            if not consumer.partitions_for_topic(topic):
                return None
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        if (await consumer.end_offsets([tp]))[tp] == 0:
            return None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            batch = await consumer.getmany(tp, timeout_ms=500, max_records=1)
            for record in batch.get(tp, []):
                return epoch_of(record.value) or ""
        raise TimeoutError(f"the identity record of {topic} did not arrive within {timeout:g}s")
    finally:
        await consumer.stop()


async def ensure_identity(
    bootstrap: str, prefix: str, *, auth: Mapping[str, Any] | None = None
) -> str | None:
    """The log's epoch, after writing an identity record if the meta topic has none (when
    two processes race, the first record on the partition is the identity)."""
    found = await read_identity(bootstrap, prefix, auth=auth)
    if found is not None:
        return found
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", **(auth or {}))
    await producer.start()
    try:
        record = {
            "epoch": uuid.uuid4().hex,
            "created_at": datetime.now(UTC).isoformat(),
            "prefix": prefix,
        }
        await producer.send_and_wait(meta_topic(prefix), orjson.dumps(record), partition=0)
    finally:
        await producer.stop()
    return await read_identity(bootstrap, prefix, auth=auth)


def _path(data_dir: str | Path) -> Path:
    return Path(data_dir) / "log.json"


def recorded_epoch(data_dir: str | Path, prefix: str) -> str | None:
    """The epoch this data directory was built from (None: never recorded)."""
    try:
        entry = orjson.loads(_path(data_dir).read_bytes()).get(prefix) or {}
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None
    epoch = entry.get("epoch") if isinstance(entry, dict) else None
    return epoch if isinstance(epoch, str) else None


def record_epoch(data_dir: str | Path, prefix: str, epoch: str, bootstrap: str) -> None:
    path = _path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        current = orjson.loads(path.read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        current = {}
    current[prefix] = {"epoch": epoch, "bootstrap": bootstrap, "recorded_at": time.time()}
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(current, option=orjson.OPT_SORT_KEYS))
    os.replace(tmp, path)
