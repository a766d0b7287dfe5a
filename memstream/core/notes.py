"""Markdown daily notes as conversation turns (``memstream ingest notes/2024-05-01.md``).

``note_turns(text, name=..., namespace=..., speaker=..., day=None)`` -> ``[(line, row)]``:
one ingest row (the JSONL fields) per note, with the markdown line it starts on.

- The day: a ``YYYY-MM-DD`` in the file name (daily notes), else ``day``, else a heading
  that is a date; without one it is an error naming what to add.
- A note: a bullet or numbered item, or a paragraph; a fenced code block belongs to the
  note before it (a procedure and its commands stay one memory).
- Time: a heading or an item that starts with ``HH:MM`` sets it; otherwise notes follow at
  one-minute steps from 09:00, in file order.
- A heading that is not a time names the topic of the notes under it ("Atlas: moved to
  DuckDB"), so each turn stands alone.
- Ids come from the file name and the note's text: ingesting the file again (or after more
  notes were added) publishes the same ids for the same notes, and the pipeline skips them.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_TIME = re.compile(r"^(\d{1,2})[:.h](\d{2})\b\s*[-–:]?\s*(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


class NotesError(ValueError):
    """A notes file that cannot become turns: the message names what to add."""


def _day_of(name: str, day: date | None, text: str) -> date:
    if m := _DAY.search(name):
        return date(int(m[1]), int(m[2]), int(m[3]))
    if day is not None:
        return day
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading and (m := _DAY.fullmatch(heading[2].strip())):
            return date(int(m[1]), int(m[2]), int(m[3]))
    raise NotesError(
        f"{name}: no date: name the file YYYY-MM-DD.md, start it with a '# YYYY-MM-DD' "
        "heading, or pass --date"
    )


def _clock(value: str) -> tuple[time | None, str]:
    m = _TIME.match(value.strip())
    if m and int(m[1]) < 24 and int(m[2]) < 60:
        return time(int(m[1]), int(m[2])), m[3].strip()
    return None, value.strip()


def note_turns(
    text: str,
    *,
    name: str,
    namespace: str,
    speaker: str = "User",
    day: date | None = None,
) -> list[tuple[int, dict[str, Any]]]:
    on = _day_of(name, day, text)
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", name.rsplit("/", 1)[-1].removesuffix(".md"))
    notes: list[tuple[int, str, time | None, str]] = []  # line, text, its time, its topic
    topic, in_fence = "", False
    fence: list[str] = []
    current: list[Any] | None = None
    start_line = 0

    def close() -> None:
        nonlocal current
        if current is not None and current[1].strip():
            notes.append((current[0], current[1].strip(), current[2], current[3]))
        current = None

    for number, raw in enumerate(text.splitlines(), start=1):
        if _FENCE.match(raw):
            if in_fence:
                block = "\n".join(fence)
                if current is None:
                    current = [start_line, "", None, topic]
                current[1] += "\n" + block
                fence, in_fence = [], False
            else:
                in_fence, start_line = True, number
            continue
        if in_fence:
            fence.append(raw)
            continue
        line = raw.strip()
        if not line:
            close()
            continue
        if heading := _HEADING.match(line):
            close()
            at, rest = _clock(heading[2])
            if at is not None:
                notes.append((number, "", at, ""))  # a time mark for what follows
                topic = rest
            elif not _DAY.fullmatch(heading[2].strip()):
                topic = heading[2].strip()
            continue
        if item := _ITEM.match(raw):
            close()
            at, rest = _clock(item[1])
            current = [number, rest, at, topic]
            continue
        if current is None:
            at, rest = _clock(line)
            current = [number, rest, at, topic]
        else:
            current[1] += " " + line
    if in_fence and fence:  # an unclosed fence: kept with the note before it
        if current is None:
            current = [start_line, "", None, topic]
        current[1] += "\n" + "\n".join(fence)
    close()

    rows: list[tuple[int, dict[str, Any]]] = []
    clock = datetime.combine(on, time(9, 0), tzinfo=UTC) - timedelta(minutes=1)
    for number, body, at, topic in notes:
        if at is not None:
            clock = datetime.combine(on, at, tzinfo=UTC) - timedelta(minutes=1)
        if not body:
            continue
        clock += timedelta(minutes=1)
        said = f"{topic}: {body}" if topic and not body.lower().startswith(topic.lower()) else body
        digest = hashlib.sha1(said.encode()).hexdigest()[:12]
        rows.append(
            (
                number,
                {
                    "namespace": namespace,
                    "session_id": f"notes-{on.isoformat()}",
                    "turn_id": f"{stem}-{digest}",
                    "role": "user",
                    "speaker": speaker,
                    "text": said,
                    "occurred_at": clock.isoformat(),
                    "metadata": {"source": name, "line": number},
                },
            )
        )
    return rows
