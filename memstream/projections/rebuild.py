"""Rebuilding projections from the log (or the Parquet archive), and verifying live ones.

A rebuild goes into a new version next to the live one; ``switch`` then moves the
CURRENT pointer. ``verify`` rebuilds side by side, up to exactly the positions the live
projection had applied when its digest was taken, and compares row by row.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memstream.infra.kafka_auth import client_options
from memstream.infra.settings import Settings
from memstream.projections import factory
from memstream.projections.archive import _header, read_archive
from memstream.projections.duckdb_projection import Digest, DuckDBProjection, diff_digests
from memstream.projections.layout import Layout
from memstream.projections.port import ApplyStats, LogRecord, Projection
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.projections.runner import ProjectionRunner


class Bounded(Projection):
    """Applies only records before ``stop_at`` positions and up to event time ``until``."""

    def __init__(
        self,
        inner: Projection,
        *,
        until: datetime | None = None,
        stop_at: dict[tuple[str, int], int] | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> None:
        self.inner, self.until, self.stop_at, self.on_batch = inner, until, stop_at, on_batch
        self.name = inner.name

    def _keep(self, r: LogRecord) -> bool:
        if self.stop_at is not None and r.offset >= self.stop_at.get((r.topic, r.partition), 0):
            return False
        if self.until is not None:
            occurred = _header(r.value)[3]
            if occurred is not None:
                return occurred <= self.until
            return r.timestamp_ms / 1000 <= self.until.timestamp()
        return True

    def positions(self) -> dict[tuple[str, int], int]:
        return self.inner.positions()

    def skip(self, record: LogRecord, reason: str) -> None:
        self.inner.skip(record, reason)

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        kept = [r for r in records if self._keep(r)]
        if self.on_batch:
            self.on_batch(len(records))
        return self.inner.apply(kept) if kept else ApplyStats(records=len(records))

    def close(self) -> None:
        self.inner.close()


async def rebuild(
    kind: str,
    settings: Settings,
    version: str,
    *,
    from_archive: bool = False,
    until: datetime | None = None,
    stop_at: dict[tuple[str, int], int] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> Projection:
    """Build ``kind`` into ``version`` from the log (or the archive); returns it open."""
    projection = factory.build(kind, settings, version)
    bounded = Bounded(projection, until=until, stop_at=stop_at, on_batch=on_batch)
    topics = factory.topics_of(kind, settings)
    # A record the live projection dead-lettered is stepped over here too (its dead letter
    # is on the log already, so no sink), and the rebuild equals the live projection.
    if from_archive:
        feeder = ProjectionRunner("", topics, bounded)
        try:
            batch: list[LogRecord] = []
            for record in read_archive(Layout(settings.data_path).archive, topics):
                batch.append(record)
                if len(batch) >= 5000:
                    await feeder.apply_records(batch)
                    batch = []
            if batch:
                await feeder.apply_records(batch)
        finally:
            feeder.executor.shutdown(wait=True)
    else:
        runner = ProjectionRunner(
            settings.bootstrap(), topics, bounded, auth=client_options(settings)
        )
        try:
            await runner.catch_up()
        finally:
            runner.executor.shutdown(wait=True)
    return projection


@dataclass
class VerifyReport:
    differences: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return not any(self.differences.values())


def _namespaces(duck: Digest) -> list[str]:
    return sorted({key.split("|", 1)[0] for key in duck.tables.get("memories", {})})


async def verify(
    settings: Settings,
    live_duckdb: Digest | None,
    live_qdrant: Callable[[list[str]], dict[str, str]] | None,
) -> VerifyReport:
    """Rebuild side by side (in a temporary directory) and compare with the live digests."""
    report = VerifyReport()
    scratch = Path(tempfile.mkdtemp(prefix="memstream-verify-"))
    side = settings.with_(
        data_dir=str(scratch), qdrant_url=None, kafka_bootstrap=settings.bootstrap()
    )
    try:
        namespaces: list[str] = []
        if live_duckdb is not None:
            rebuilt = await rebuild("duckdb", side, "verify", stop_at=live_duckdb.positions)
            assert isinstance(rebuilt, DuckDBProjection)
            digest = rebuilt.digest()
            rebuilt.close()
            report.differences["duckdb"] = diff_digests(live_duckdb, digest)
            report.counts["duckdb rows"] = sum(len(t) for t in digest.tables.values())
            namespaces = _namespaces(digest)
        if live_qdrant is not None:
            rebuilt_q = await rebuild("qdrant", side, "verify")
            assert isinstance(rebuilt_q, QdrantProjection)
            mine = rebuilt_q.digest(namespaces or _all_namespaces(rebuilt_q))
            rebuilt_q.close()
            theirs = live_qdrant(sorted({k.split("|", 1)[0] for k in mine}))
            diffs = [
                f"point {k}: {'only live' if k not in mine else 'only rebuilt' if k not in theirs else 'differs'}"
                for k in sorted(set(mine) | set(theirs))
                if mine.get(k) != theirs.get(k)
            ]
            report.differences["qdrant"] = diffs[:20] + (["..."] if len(diffs) > 20 else [])
            report.counts["qdrant points"] = len(mine)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def _all_namespaces(projection: QdrantProjection) -> list[str]:
    return sorted(projection.namespaces)
