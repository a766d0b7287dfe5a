"""Markdown daily notes through the broker (defaults, rule extractor): `memstream ingest
notes/2024-05-01.md` turns each note into a turn of that day, the memories carry the
note's commands and its source line, ingesting the file again adds nothing, and a file
that cannot be read as notes is refused with what to add."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memstream

NOTES = """# Tuesday

Moved the analytics warehouse to DuckDB today, it took two days.

## Atlas
- I decided to ship the Atlas beta on Friday.
- To deploy Atlas:
```
$ make deploy ENV=prod
```

## 14:30
- Tomas owns the Qdrant cluster in Berlin now.
"""


def test_daily_notes_become_dated_memories_once(
    settings: Settings, worker: WorkerProcess, tmp_path: Path
) -> None:
    ns = f"notes-{uuid.uuid4().hex[:8]}"
    notes = tmp_path / "notes" / "2024-05-01.md"
    notes.parent.mkdir()
    notes.write_text(NOTES)
    out = memstream(settings, "ingest", str(notes), "--namespace", ns, "--speaker", "Maya")
    assert out.returncode == 0, out.stderr
    assert "4 notes as turns" in out.stderr and f"from {notes}" in out.stdout
    with Memory(settings=settings) as mem:
        deadline = time.monotonic() + 90
        while True:
            rows = mem.get_all(user_id=ns)["results"]
            texts = " | ".join(r["memory"] for r in rows)
            if all(w in texts for w in ("DuckDB", "Atlas beta", "Qdrant", "deploy")):
                break
            assert time.monotonic() < deadline, texts
            time.sleep(0.5)
        assert all(str(r["created_at"]).startswith("2024-05-01") for r in rows), rows
        qdrant = next(r for r in rows if "Qdrant" in r["memory"])
        assert "14:3" in str(qdrant["created_at"])  # the time its heading named
        deploy = next(r for r in rows if "deploy" in r["memory"].lower() and "Atlas" in r["memory"])
        assert deploy["metadata"]["command"] == ["make deploy ENV=prod"], deploy
        assert deploy["metadata"]["turn"]["source"] == str(notes)
        count = len(rows)
    again = memstream(settings, "ingest", str(notes), "--namespace", ns, "--wait")
    assert again.returncode == 0, again.stderr
    with Memory(settings=settings) as mem:
        assert len(mem.get_all(user_id=ns)["results"]) == count  # the same notes, the same ids


def test_notes_that_cannot_be_placed_are_refused(settings: Settings, tmp_path: Path) -> None:
    undated = tmp_path / "ideas.md"
    undated.write_text("- try DuckDB for the reports\n")
    out = memstream(settings, "ingest", str(undated), "--namespace", "n1")
    assert out.returncode == 2 and "no date" in out.stderr and "--date" in out.stderr
    out = memstream(settings, "ingest", str(undated))
    assert out.returncode == 2 and "--namespace" in out.stderr
