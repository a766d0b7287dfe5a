"""`memstream ingest --wait`: return when what was published is recallable.

Done means two things, checked against the running worker:
1. every published turn appears in a ``TurnsExtracted`` event on the memory log (the write
   path read it: extracted, or skipped by the signal scan, each turn exactly once), as the
   worker's DuckDB projection shows it;
2. every projection of the memory log (DuckDB, Qdrant, archive) has applied the log up to
   its end as it was once (1) held, so the memories those extractions caused are in the
   stores recall and SQL read.
Turns wait in a session buffer until a flush trigger (buffer full, an event-time gap, an
idle session, a session change), so (1) can take as long as the idle timeout after the
last turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from aiokafka import AIOKafkaConsumer, TopicPartition

from memstream.consumers.worker_api import auth_headers, refusal
from memstream.infra.kafka_auth import client_options
from memstream.infra.settings import Settings
from memstream.schemas.topics import BY_ROLE
from memstream.streams.status import running_worker

#: event ids per coverage query (DuckDB gets them as one list parameter)
_CHUNK = 20_000

_COVERED_SQL = (
    "SELECT count(DISTINCT e) AS n FROM (SELECT unnest(json_extract_string(payload, "
    "'$.turns[*].event_id')) AS e FROM memory_log WHERE type = 'TurnsExtracted' AND "
    "namespace = ANY(?::VARCHAR[])) WHERE e IN (SELECT unnest(?::VARCHAR[]))"
)


class WaitError(RuntimeError):
    pass


@dataclass
class WaitReport:
    turns: int
    extracted: int
    seconds: float
    projections: dict[str, bool]

    @property
    def done(self) -> bool:
        return self.extracted >= self.turns and all(self.projections.values())


class _Worker:
    def __init__(self, settings: Settings, api_key: str | None) -> None:
        worker = running_worker(settings.data_dir)
        if worker is None:
            raise WaitError(
                "--wait needs a running worker for this data directory (`memstream worker`); "
                "without one nothing is extracted"
            )
        self.key = api_key
        self.http = httpx.Client(
            base_url=worker["api_url"], timeout=30, headers=auth_headers(api_key)
        )

    def covered(self, ids_by_ns: Mapping[str, Sequence[str]]) -> int:
        total = 0
        for ns, ids in ids_by_ns.items():
            for start in range(0, len(ids), _CHUNK):
                response = self.http.post(
                    "/sql",
                    json={"sql": _COVERED_SQL, "params": [[ns], list(ids[start : start + _CHUNK])]},
                )
                if (refused := refusal(response, self.key)) is not None:
                    raise WaitError(str(refused))
                body = response.json()
                if response.status_code != 200:
                    message = body.get("error", {}).get("message", response.text)
                    raise WaitError(f"the worker refused the progress query: {message}")
                total += int(body["rows"][0][0])
        return total

    def positions(self) -> dict[str, dict[str, int]]:
        body: dict[str, Any] = self.http.get("/health").json()
        positions: dict[str, dict[str, int]] = body.get("positions", {})
        return positions

    def close(self) -> None:
        self.http.close()


async def _log_ends(settings: Settings) -> dict[str, int]:
    topic = BY_ROLE["memory_log"].name(settings.topic_prefix)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.bootstrap(),
        enable_auto_commit=False,
        **client_options(settings),
    )
    await consumer.start()
    try:
        parts = consumer.partitions_for_topic(topic) or set()
        if not parts:
            await consumer.force_metadata_update()
            parts = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        ends = await consumer.end_offsets(tps) if tps else {}
        return {f"{tp.topic}/{tp.partition}": offset for tp, offset in ends.items()}
    finally:
        await consumer.stop()


def wait_until_recallable(
    settings: Settings,
    ids_by_ns: Mapping[str, Sequence[str]],
    *,
    timeout: float = 600.0,
    api_key: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    poll: float = 1.0,
) -> WaitReport:
    """Block until every published turn is extracted and every memory-log projection has
    caught up (see the module doc); a report with ``done`` False after ``timeout``."""
    started = time.monotonic()
    deadline = started + timeout
    turns = sum(len(ids) for ids in ids_by_ns.values())
    worker = _Worker(settings, api_key)
    try:
        extracted = 0
        while True:
            extracted = worker.covered(ids_by_ns)
            if on_progress:
                on_progress(extracted, turns)
            if extracted >= turns or time.monotonic() > deadline:
                break
            time.sleep(poll)
        caught: dict[str, bool] = {}
        if extracted >= turns:
            ends = asyncio.run(_log_ends(settings))
            while True:
                applied = worker.positions()
                caught = {
                    kind: all(at.get(tp, 0) >= end for tp, end in ends.items())
                    for kind, at in applied.items()
                }
                if all(caught.values()) or time.monotonic() > deadline:
                    break
                time.sleep(poll / 4)
        return WaitReport(turns, extracted, time.monotonic() - started, caught)
    finally:
        worker.close()
