"""Writing query results as CSV, JSON (one object per line) or Parquet."""

from __future__ import annotations

import csv
import sys
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq


def write_rows(columns: list[str], rows: list[tuple[Any, ...]], fmt: str, out: str | None) -> None:
    if fmt == "parquet":
        if not out:
            raise SystemExit("memstream: --format parquet needs --out FILE")
        table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})
        pq.write_table(table, out)
        return
    stream = open(out, "w", newline="") if out else sys.stdout  # noqa: SIM115
    try:
        if fmt == "csv":
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(rows)
        else:
            for r in rows:
                stream.write(
                    orjson.dumps(dict(zip(columns, r, strict=True)), default=str).decode() + "\n"
                )
    finally:
        if out:
            stream.close()
