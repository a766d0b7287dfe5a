"""``memstream recover``: after the broker lost the log, put it back and make the read
models match it again (with the worker stopped).

What happened is told by the log's identity (``infra/log_identity.py``) and by read
positions past the log's end. Recovery then

1. restores the log from the Parquet archive: every archived record of the topics kept
   forever (turns, access, feedback, workflows, memory log, dead letters) that is not on
   the log already (by event id; dead letters by their bytes) is published again to its
   partition, in offset order, with its key and timestamp. Into empty topics the records
   land at their old offsets. Recall requests and replies (kept 7 days, answers to callers
   long gone) are not restored.
2. rebuilds DuckDB and Qdrant from the restored log (new versions, then CURRENT moves),
   so their positions are positions on this log;
3. keeps the archive when every record got its old offset back (setting aside what it holds
   of the topics not restored), otherwise sets it aside whole: the worker writes it again
   from the restored log;
4. records the log's epoch in the data directory, so the worker starts again.

The agents' consumer group lost its offsets with the broker: a worker started afterwards
reads the restored inputs from the beginning, and the partition state folded from the
restored memory log tells it which turns were extracted already (they are skipped).
Records the archive never held (it writes records out within seconds, see
``projections/archive.py``) are gone with the broker; the report says how many it restored.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer

from memstream.consumers.kafka_read import read_topic
from memstream.core.health import past_end
from memstream.infra.kafka_auth import client_options
from memstream.infra.log_identity import ensure_identity, record_epoch, recorded_epoch
from memstream.infra.log_probe import LogProbe
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics, topic_names
from memstream.projections.archive import read_archive
from memstream.projections.layout import Layout
from memstream.projections.port import LogRecord
from memstream.schemas.topics import TOPICS

#: the topics a lost log is restored for: the ones kept forever
RESTORED_ROLES = tuple(spec.role for spec in TOPICS if spec.config.get("retention.ms") == "-1")


@dataclass
class Diagnosis:
    lost: bool
    reasons: list[str]
    epoch: str | None  # the log's now


@dataclass
class RecoverReport:
    diagnosis: Diagnosis
    restored: dict[str, int] = field(default_factory=dict)  # topic -> records published again
    already: dict[str, int] = field(default_factory=dict)  # topic -> archived, on the log already
    offsets_kept: bool = False
    rebuilt: dict[str, str] = field(default_factory=dict)  # kind -> version now CURRENT
    archive: str = ""
    seconds: float = 0.0
    # partitions the broker said hold records it then did not serve: read as far as it did
    unreadable: list[str] = field(default_factory=list)
    # records the broker refused after every retry: "topic[partition]@offset: error"
    failed: list[str] = field(default_factory=list)


def identity(value: bytes) -> str:
    """What makes two records the same event: the event id, else the bytes."""
    try:
        event_id = orjson.loads(value).get("event_id")
    except (orjson.JSONDecodeError, AttributeError):
        event_id = None
    return event_id if isinstance(event_id, str) else hashlib.sha256(value).hexdigest()


def headers_for(value: bytes) -> list[tuple[str, bytes]]:
    """The record headers the original producer set (the archive keeps values, not headers)."""
    try:
        obj = orjson.loads(value)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(obj, dict):
        return []
    if "type" in obj and "schema_version" in obj:
        return [
            ("memstream-type", str(obj["type"]).encode()),
            ("memstream-version", str(obj["schema_version"]).encode()),
        ]
    if {"reason", "source_topic", "agent"} <= obj.keys():
        return [
            ("memstream-dlq-reason", str(obj["reason"]).encode()),
            ("memstream-dlq-source", str(obj["source_topic"]).encode()),
            ("memstream-dlq-agent", str(obj["agent"]).encode()),
        ]
    return []


async def diagnose(settings: Settings) -> Diagnosis:
    """Was the log under this data directory lost? (creates topics and identity if missing)"""
    from memstream.consumers.health import stored_positions

    bootstrap, auth = settings.bootstrap(), client_options(settings)
    await ensure_topics(bootstrap, settings.topic_prefix, settings.partitions, auth=auth)
    found = await ensure_identity(bootstrap, settings.topic_prefix, auth=auth)
    recorded = recorded_epoch(settings.data_dir, settings.topic_prefix)
    reasons = []
    if recorded is not None and recorded != found:
        reasons.append(f"the log's epoch is {found}, the data directory was built from {recorded}")
    probe = LogProbe(bootstrap, list(topic_names(settings.topic_prefix).values()), auth=auth)
    try:
        obs = await probe.observe(10.0)
    finally:
        await probe.close()
    if not obs.reachable:
        raise ConnectionError(f"the broker at {bootstrap} does not answer: {obs.error}")
    for kind, positions in stored_positions(settings).items():
        ahead = past_end(positions, obs.ends)
        if ahead:
            reasons.append(f"{kind} read past the log's end: {'; '.join(ahead[:3])}")
    return Diagnosis(bool(reasons), reasons, found)


async def restore_log(
    settings: Settings, report: RecoverReport, say: Callable[[str], None]
) -> None:
    """Publish the archived records the log lacks (see the module's docstring)."""
    names = topic_names(settings.topic_prefix)
    topics = [names[role] for role in RESTORED_ROLES]
    bootstrap, auth = settings.bootstrap(), client_options(settings)
    on_log: dict[tuple[str, int], set[str]] = defaultdict(set)
    for topic in topics:
        async for record in read_topic(bootstrap, topic, auth=auth, stuck=report.unreadable):
            on_log[(topic, record.partition)].add(identity(record.value))
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, **auth)
    await producer.start()
    sent: list[tuple[LogRecord, asyncio.Future[Any]]] = []
    results: list[tuple[int, Any]] = []  # archived offset, where the broker put it
    try:
        for record in read_archive(Layout(settings.data_path).archive, topics):
            if identity(record.value) in on_log[(record.topic, record.partition)]:
                report.already[record.topic] = report.already.get(record.topic, 0) + 1
                continue
            sent.append((record, await _send(producer, record)))
            report.restored[record.topic] = report.restored.get(record.topic, 0) + 1
            if len(sent) % 10_000 == 0:
                say(f"restored {len(sent):,} records")
        outcomes = await asyncio.gather(*(d for _, d in sent), return_exceptions=True)
        retry: list[LogRecord] = []
        for (record, _), outcome in zip(sent, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                retry.append(record)
            else:
                results.append((record.offset, outcome))
        # a just-restarted broker may refuse a write for a moment (seen as UnknownError under
        # load): each refused record again, in order, a few times, before it counts as failed
        for record in retry:
            results.append((-1, None))  # its offset can no longer be the archived one
            error: BaseException | None = None
            for pause in (0.5, 1.0, 2.0, 4.0):
                try:
                    await (await _send(producer, record))
                    error = None
                    break
                except Exception as e:
                    error = e
                    await asyncio.sleep(pause)
            if error is not None:
                report.restored[record.topic] -= 1
                report.failed.append(
                    f"{record.topic}[{record.partition}]@{record.offset}: "
                    f"{type(error).__name__} {error}"
                )
    finally:
        await producer.stop()
    # one request in flight per broker keeps each partition's order: into an empty topic
    # every record gets its archived offset back
    report.offsets_kept = not any(on_log.values()) and all(
        meta is not None and meta.offset == offset for offset, meta in results
    )


async def _send(producer: AIOKafkaProducer, record: LogRecord) -> asyncio.Future[Any]:
    delivery: asyncio.Future[Any] = await producer.send(
        record.topic,
        record.value,
        key=record.key,
        partition=record.partition,
        timestamp_ms=record.timestamp_ms or None,
        headers=headers_for(record.value),
    )
    return delivery


def _set_aside(settings: Settings, paths: list[Path]) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = settings.data_path / "archive-before-recover" / stamp
    target.mkdir(parents=True, exist_ok=True)
    for path in paths:
        shutil.move(str(path), str(target / path.name))
    return target


def settle_archive(settings: Settings, report: RecoverReport) -> None:
    """Keep the archive where its offsets are the log's again; set aside what is not."""
    root = Layout(settings.data_path).archive
    if not root.exists() or not any(root.iterdir()):
        report.archive = "empty: the worker writes it from the log"
        return
    if not report.offsets_kept:
        target = _set_aside(settings, [root])
        report.archive = f"set aside to {target} (offsets moved): the worker writes it anew"
        return
    names = topic_names(settings.topic_prefix)
    restored = {names[role] for role in RESTORED_ROLES}
    others = [p for p in root.glob("topic=*") if p.name.removeprefix("topic=") not in restored]
    if others:
        target = _set_aside(settings, others)
    positions_path = root / "_positions.json"
    if positions_path.exists():
        positions = orjson.loads(positions_path.read_bytes())
        kept = {t: parts for t, parts in positions.items() if t in restored}
        tmp = positions_path.with_suffix(".tmp")
        tmp.write_bytes(orjson.dumps(kept, option=orjson.OPT_SORT_KEYS))
        tmp.replace(positions_path)
    report.archive = "kept (every record at its old offset)" + (
        f"; recall requests and replies set aside to {target}" if others else ""
    )


async def rebuild_read_models(
    settings: Settings, report: RecoverReport, say: Callable[[str], None]
) -> None:
    from memstream.projections.rebuild import rebuild

    layout = Layout(settings.data_path)
    kinds = [k.strip() for k in settings.projections.split(",")]
    for kind in (k for k in ("duckdb", "qdrant") if k in kinds):
        version = layout.next_version(kind)
        started = time.monotonic()
        projection = await rebuild(kind, settings, version)
        projection.close()
        layout.switch(kind, version)
        report.rebuilt[kind] = version
        say(f"{kind}: rebuilt from the log into {version} in {time.monotonic() - started:.1f}s")


async def recover(settings: Settings, say: Callable[[str], None] = print) -> RecoverReport:
    started = time.monotonic()
    diagnosis = await diagnose(settings)
    report = RecoverReport(diagnosis)
    if not diagnosis.lost:
        return report
    for reason in diagnosis.reasons:
        say(f"the log was lost: {reason}")
    await restore_log(settings, report, say)
    if report.failed:  # nothing recorded: a second run restores only what is still missing
        report.seconds = time.monotonic() - started
        return report
    settle_archive(settings, report)
    await rebuild_read_models(settings, report, say)
    if diagnosis.epoch:
        record_epoch(
            settings.data_dir, settings.topic_prefix, diagnosis.epoch, settings.bootstrap()
        )
    report.seconds = time.monotonic() - started
    return report
