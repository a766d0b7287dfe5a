"""The audit trail's one-line summaries say what happened, never "superseded by None"."""

from __future__ import annotations

from memstream.projections.audit import _summary


def test_supersede_names_its_successor() -> None:
    line = _summary(
        "MemorySuperseded", {"superseded_by": "m2", "valid_until": "2024-05-01", "reason": "update"}
    )
    assert line.startswith("superseded by m2")


def test_an_expiry_has_no_successor() -> None:
    line = _summary(
        "MemorySuperseded",
        {"superseded_by": None, "valid_until": "2024-05-01", "reason": "plan date passed"},
    )
    assert "None" not in line and line.startswith("expired (no successor)")
