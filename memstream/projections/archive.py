"""The Parquet archive: every record of every topic, so audits outlive Kafka retention.

Files are laid out as ``topic=<name>/date=<YYYY-MM-DD>/part-<partition>-<first>-<last>.parquet``
(hive partitioning, so DuckDB, pyarrow or Spark query them directly). Records are
buffered and written in chunks; the positions file is rewritten atomically *after* the
files it covers, and on start any file beyond the recorded positions is removed (it will
be written again), so the archive never holds a record twice.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from memstream.projections.port import ApplyStats, LogRecord, Projection

SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("log_partition", pa.int32()),
        ("log_offset", pa.int64()),
        ("timestamp_ms", pa.int64()),
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("event_id", pa.string()),
        ("type", pa.string()),
        ("namespace", pa.string()),
        ("occurred_at", pa.timestamp("us", tz="UTC")),
    ]
)


def _header(value: bytes) -> tuple[str | None, str | None, str | None, datetime | None]:
    """Cheap look at the envelope for query columns; the raw bytes stay authoritative."""
    try:
        obj = orjson.loads(value)
    except Exception:  # dead letters, malformed records: archived as bytes all the same
        return None, None, None, None
    if not isinstance(obj, dict):
        return None, None, None, None

    def text(name: str) -> str | None:
        # Bad input reaches the archive too ('"event_id": 7'): a query column holds text or
        # nothing, never whatever a producer wrote, or the whole chunk fails to write.
        v = obj.get(name)
        return v if isinstance(v, str) else None

    when: datetime | None = None
    try:
        when = datetime.fromisoformat(obj["occurred_at"]).astimezone(UTC)
    except Exception:
        when = None
    return text("event_id"), text("type"), text("namespace"), when


class ParquetArchive(Projection):
    name = "archive"

    def __init__(
        self,
        root: str | Path,
        *,
        flush_records: int = 20_000,
        flush_idle_seconds: float = 5.0,
        flush_max_seconds: float = 60.0,
    ) -> None:
        """Buffered records are written out at ``flush_records``, when the log has been
        quiet with records buffered for ``flush_idle_seconds``, and at the latest
        ``flush_max_seconds`` after the first: the archive is the copy ``memstream
        recover`` restores a lost log from, so it must not trail the log for long."""
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.flush_records = flush_records
        self.flush_idle_seconds = flush_idle_seconds
        self.flush_max_seconds = flush_max_seconds
        self._buffered_at = 0.0  # time.monotonic() of the first buffered record
        self._buffer: list[LogRecord] = []
        self._positions = self._load_positions()
        self._remove_unrecorded()

    @property
    def _positions_path(self) -> Path:
        return self.root / "_positions.json"

    def _load_positions(self) -> dict[tuple[str, int], int]:
        if not self._positions_path.exists():
            return {}
        raw = orjson.loads(self._positions_path.read_bytes())
        return {(t, int(p)): int(o) for t, parts in raw.items() for p, o in parts.items()}

    def _remove_unrecorded(self) -> None:
        for path in self.root.glob("topic=*/date=*/part-*.parquet"):
            topic = path.parent.parent.name.removeprefix("topic=")
            _part, partition, first, _last = path.stem.split("-")
            if int(first) >= self._positions.get((topic, int(partition)), 0):
                path.unlink()

    def positions(self) -> dict[tuple[str, int], int]:
        return dict(self._positions)

    def apply(self, records: Sequence[LogRecord]) -> ApplyStats:
        if records and not self._buffer:
            self._buffered_at = time.monotonic()
        self._buffer.extend(records)
        held = time.monotonic() - self._buffered_at
        if len(self._buffer) >= self.flush_records or (
            self._buffer and held >= self.flush_max_seconds
        ):
            self.flush()
        return ApplyStats(records=len(records), applied=len(records))

    def idle(self) -> bool:
        if self._buffer and time.monotonic() - self._buffered_at >= self.flush_idle_seconds:
            self.flush()
        return bool(self._buffer)

    def skip(self, record: LogRecord, reason: str) -> None:
        self.apply([record])  # the archive keeps bytes as they are: nothing it cannot hold

    def flush(self) -> None:
        if not self._buffer:
            return
        groups: dict[tuple[str, str, int], list[LogRecord]] = defaultdict(list)
        headers = {}
        for r in self._buffer:
            header = _header(r.value)
            headers[(r.topic, r.partition, r.offset)] = header
            stamp = header[3] or datetime.fromtimestamp(r.timestamp_ms / 1000, UTC)
            groups[(r.topic, stamp.strftime("%Y-%m-%d"), r.partition)].append(r)
        for (topic, day, partition), recs in groups.items():
            recs.sort(key=lambda r: r.offset)
            directory = self.root / f"topic={topic}" / f"date={day}"
            directory.mkdir(parents=True, exist_ok=True)
            path = (
                directory / f"part-{partition}-{recs[0].offset:012d}-{recs[-1].offset:012d}.parquet"
            )
            cols: dict[str, list[Any]] = defaultdict(list)
            for r in recs:
                event_id, etype, ns, when = headers[(r.topic, r.partition, r.offset)]
                for name, value in (
                    ("topic", r.topic),
                    ("log_partition", r.partition),
                    ("log_offset", r.offset),
                    ("timestamp_ms", r.timestamp_ms),
                    ("key", r.key),
                    ("value", r.value),
                    ("event_id", event_id),
                    ("type", etype),
                    ("namespace", ns),
                    ("occurred_at", when),
                ):
                    cols[name].append(value)
            tmp = path.with_suffix(".tmp")
            pq.write_table(pa.table(cols, schema=SCHEMA), tmp, compression="zstd")
            os.replace(tmp, path)
        for r in self._buffer:
            key = (r.topic, r.partition)
            self._positions[key] = max(self._positions.get(key, 0), r.offset + 1)
        self._buffer.clear()
        nested: dict[str, dict[str, int]] = defaultdict(dict)
        for (topic, partition), offset in self._positions.items():
            nested[topic][str(partition)] = offset
        tmp = self._positions_path.with_suffix(".tmp")
        tmp.write_bytes(orjson.dumps(nested, option=orjson.OPT_SORT_KEYS))
        os.replace(tmp, self._positions_path)

    def close(self) -> None:
        self.flush()


def read_archive(root: str | Path, topics: Sequence[str] | None = None) -> Iterator[LogRecord]:
    """Every archived record, per topic and partition in offset order."""
    root = Path(root)
    files = sorted(root.glob("topic=*/date=*/part-*.parquet"))
    by_tp: dict[tuple[str, int], list[tuple[int, Path]]] = defaultdict(list)
    for path in files:
        topic = path.parent.parent.name.removeprefix("topic=")
        if topics is not None and topic not in topics:
            continue
        _part, partition, first, _last = path.stem.split("-")
        by_tp[(topic, int(partition))].append((int(first), path))
    for (_topic, _partition), parts in sorted(by_tp.items()):
        rows: list[dict[str, Any]] = []
        for _first, path in sorted(parts):
            rows.extend(pq.read_table(path).to_pylist())
        rows.sort(key=lambda r: r["log_offset"])
        for row in rows:
            yield LogRecord(
                row["topic"],
                row["log_partition"],
                row["log_offset"],
                row["key"],
                row["value"],
                row["timestamp_ms"],
            )
