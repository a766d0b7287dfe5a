"""Where projections live on disk, and which version of each is current.

A rebuild writes a new version next to the live one and then moves the ``CURRENT``
pointer (an atomic rename), so readers never see a half-built projection.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Layout:
    data_dir: Path

    @property
    def root(self) -> Path:
        return self.data_dir / "projections"

    @property
    def archive(self) -> Path:
        return self.data_dir / "archive"

    def current(self, kind: str) -> str:
        pointer = self.root / kind / "CURRENT"
        return pointer.read_text().strip() if pointer.exists() else "v1"

    def next_version(self, kind: str) -> str:
        existing = (
            [p.name for p in (self.root / kind).glob("v*")] if (self.root / kind).exists() else []
        )
        numbers = [int(n[1:].split(".")[0]) for n in existing if n[1:].split(".")[0].isdigit()]
        return f"v{max([1, *numbers]) + 1}"

    def switch(self, kind: str, version: str) -> None:
        (self.root / kind).mkdir(parents=True, exist_ok=True)
        tmp = self.root / kind / "CURRENT.tmp"
        tmp.write_text(version + "\n")
        os.replace(tmp, self.root / kind / "CURRENT")

    def duckdb(self, version: str | None = None) -> Path:
        return self.root / "duckdb" / f"{version or self.current('duckdb')}.duckdb"

    def qdrant(self, version: str | None = None) -> Path:
        return self.root / "qdrant" / (version or self.current("qdrant"))
