"""Markdown daily notes as turns (core/notes.py)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.notes import NotesError, note_turns

TEXT = """# 2024-05-01
Moved the warehouse to DuckDB.

## Atlas
- ship the beta on Friday
- Deploy steps:
```
$ make deploy
```
## 14:30 standup
- 16:05 call with Ana
"""


def test_notes_become_dated_turns_in_order() -> None:
    rows = note_turns(TEXT, name="ideas.md", namespace="acme", speaker="Maya")
    assert [(line, r["text"], r["occurred_at"][11:16]) for line, r in rows] == [
        (2, "Moved the warehouse to DuckDB.", "09:00"),
        (5, "Atlas: ship the beta on Friday", "09:01"),
        (6, "Atlas: Deploy steps:\n$ make deploy", "09:02"),
        (11, "standup: call with Ana", "16:05"),
    ]
    assert {r["session_id"] for _, r in rows} == {"notes-2024-05-01"}
    assert all(r["speaker"] == "Maya" and r["role"] == "user" for _, r in rows)


def test_the_day_comes_from_the_name_then_the_option_then_a_heading() -> None:
    named = note_turns("- a", name="notes/2023-01-02.md", namespace="n")
    assert named[0][1]["occurred_at"].startswith("2023-01-02")
    given_day = note_turns("- a", name="x.md", namespace="n", day=date(2022, 3, 4))
    assert given_day[0][1]["occurred_at"].startswith("2022-03-04")
    with pytest.raises(NotesError, match="--date"):
        note_turns("- a", name="x.md", namespace="n")


def test_ids_follow_the_note_not_its_line() -> None:
    before = note_turns("- ship it", name="2024-05-01.md", namespace="n")
    after = note_turns("- new first\n- ship it", name="2024-05-01.md", namespace="n")
    assert before[0][1]["turn_id"] == after[1][1]["turn_id"]


@given(st.text(max_size=300))
def test_any_text_with_a_dated_name_gives_turns_and_never_raises(text: str) -> None:
    rows = note_turns(text, name="2024-05-01.md", namespace="n")
    assert all(r["text"].strip() for _, r in rows)
    assert len({r["turn_id"] for _, r in rows}) <= len(rows)
