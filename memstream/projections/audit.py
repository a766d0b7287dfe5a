"""Audit: the causal chain behind a memory, and what a namespace knew at a moment.

Everything comes from the analytics projection (itself a fold of the log): source turns,
the extraction record, each decision with its evidence, Q changes with the feedback
behind them. The full signal record of a source turn is recomputed from its text, since
the scanner is a pure function (its version is recorded with the extraction).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import orjson

from memstream.core.memory_state import MemoryState, fold
from memstream.core.signals import scan
from memstream.schemas.envelope import Envelope, from_dict


class SQL(Protocol):
    def sql(
        self, query: str, params: list[Any] | None = None, limit: int = 10_000
    ) -> tuple[list[str], list[tuple[Any, ...]]]: ...


def _rows(db: SQL, query: str, params: list[Any]) -> list[dict[str, Any]]:
    columns, rows = db.sql(query, params)
    return [dict(zip(columns, r, strict=True)) for r in rows]


def _payload(row: dict[str, Any]) -> dict[str, Any]:
    value = row["payload"]
    return orjson.loads(value) if isinstance(value, str | bytes) else dict(value)


@dataclass
class Step:
    at: str
    kind: str
    summary: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class AuditTrail:
    memory_id: str
    namespace: str | None
    steps: list[Step] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "namespace": self.namespace,
            "steps": [s.__dict__ for s in self.steps],
        }


MEMORY_COLUMNS = "event_id, type, occurred_at, namespace, session_id, causation_id, log_partition, log_offset, payload"


def audit_memory(db: SQL, memory_id: str, namespace: str | None = None) -> AuditTrail:
    # an edge is an event of its source memory; its target's trail shows it too
    where = (
        "(memory_id = ? OR (type IN ('RelationAdded', 'RelationRemoved') "
        "AND payload->>'target_id' = ?))" + (" AND namespace = ?" if namespace else "")
    )
    params: list[Any] = [memory_id, memory_id] + ([namespace] if namespace else [])
    events = _rows(
        db,
        f"SELECT {MEMORY_COLUMNS} FROM memory_log WHERE {where} ORDER BY log_partition, log_offset",
        params,
    )
    trail = AuditTrail(memory_id, namespace or (events[0]["namespace"] if events else None))
    if not events:
        return trail
    ns = trail.namespace
    for ev in events:
        p = _payload(ev)
        at = str(ev["occurred_at"])
        evidence = p.get("evidence", {})
        if ev["type"] == "MemoryCreated":
            _explain_creation(db, trail, ev, p, ns)
            trail.steps.append(
                Step(
                    at,
                    "created",
                    f'"{p["text"]}" ({p["category"]}, importance '
                    f"{p['importance']}, confidence {p['confidence']})",
                    {
                        "gate": evidence,
                        "extraction": p.get("extraction"),
                        "event_id": ev["event_id"],
                    },
                )
            )
        elif ev["type"] == "QValueUpdated":
            fb = _rows(
                db,
                "SELECT outcome, reward, reason, query_id FROM feedback WHERE event_id = ?",
                [p["feedback_event_id"]],
            )
            why = (
                f"by rule {evidence['rule']} ({evidence.get('decay_days')} days unused)"
                if evidence.get("rule") == "utility_decay"
                else f"(reward {p['reward']}, weight {p['weight']})"
            )
            trail.steps.append(
                Step(
                    at,
                    "q_value",
                    f"Q {p['old_q']:.3f} -> {p['new_q']:.3f} {why}",
                    {
                        "feedback": fb[0] if fb else None,
                        "event_id": ev["event_id"],
                        "causation_id": ev["causation_id"],
                    },
                )
            )
        else:
            trail.steps.append(
                Step(
                    at,
                    ev["type"],
                    _summary(ev["type"], p),
                    {"payload": p, "event_id": ev["event_id"], "causation_id": ev["causation_id"]},
                )
            )
    caused = _rows(
        db,
        f"SELECT {MEMORY_COLUMNS} FROM memory_log WHERE namespace = ? AND "
        "(payload->>'superseded_by' = ? OR payload->>'captured_by' = ?) "
        "ORDER BY log_partition, log_offset",
        [ns, memory_id, memory_id],
    )
    for ev in caused:
        p = _payload(ev)
        trail.steps.append(
            Step(
                str(ev["occurred_at"]),
                f"caused {ev['type']}",
                f"this memory caused {ev['type']} of {p['memory_id']}",
                {"payload": p},
            )
        )
    return trail


def _updated(p: dict[str, Any]) -> str:
    # a dream-cycle merge names its rule, and the members' turns the leader now cites
    rule = (p.get("evidence") or {}).get("rule")
    turns = p.get("source_turn_ids") or []
    return (
        f'text -> "{p.get("text")}"'
        + (f" by rule {rule}" if rule else "")
        + (f" (+{len(turns)} source turns)" if turns else "")
    )


def _superseded(p: dict[str, Any]) -> str:
    # an expiry (a plan's date passed, a validity ended) has no successor: say which it was
    by = p.get("superseded_by")
    what = f"superseded by {by}" if by else "expired (no successor)"
    return f"{what} from {p.get('valid_until')} ({p.get('reason')})"


def _summary(kind: str, p: dict[str, Any]) -> str:
    return {
        "MemoryUpdated": _updated(p),
        "MemoryReinforced": f"stability {p.get('stability_before')} -> {p.get('stability_after')} ({p.get('reason')})",
        "MemorySuperseded": _superseded(p),
        "DuplicateSkipped": f'a repeat was skipped: "{p.get("text")}"',
        "SynapticTagged": f"tagged until {p.get('expires_at')}",
        "TagCaptured": f"captured by {p.get('captured_by')}: stability -> {p.get('stability_after')}",
        "TagExpired": "tag expired",
        "TierChanged": f"tier {p.get('from_tier')} -> {p.get('to_tier')} by rule {p.get('rule')}",
        "MemoryArchived": f"archived by rule {p.get('rule')}",
        "MemoryRestored": f"restored: {p.get('reason')}",
        "RelationAdded": f"edge {p.get('memory_id')} -{p.get('relation')}-> {p.get('target_id')} "
        f"(confidence {p.get('confidence')}, rule {p.get('rule')})",
        "RelationRemoved": f"edge {p.get('memory_id')} -{p.get('relation')}-> {p.get('target_id')} "
        f"removed ({p.get('reason')})",
        "MemoryPinned": ("locked (pinned, immutable)" if p.get("immutable") else "pinned")
        if p.get("pinned")
        else "unpinned",
    }.get(kind, kind)


def _explain_creation(
    db: SQL, trail: AuditTrail, ev: dict[str, Any], p: dict[str, Any], ns: str | None
) -> None:
    head = _rows(
        db, f"SELECT {MEMORY_COLUMNS} FROM memory_log WHERE event_id = ?", [ev["causation_id"]]
    )
    turn_ids = p.get("source_turn_ids", [])
    turns = (
        _rows(
            db,
            "SELECT turn_id, event_id, occurred_at, role, speaker, text FROM turns "
            "WHERE namespace = ? AND turn_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY occurred_at",
            [ns, turn_ids],
        )
        if turn_ids
        else []
    )
    for t in turns:
        signal = scan(t["text"], role=t["role"])
        trail.steps.append(
            Step(
                str(t["occurred_at"]),
                "source_turn",
                f'{t["speaker"]} ({t["role"]}): "{t["text"]}"',
                {"turn_id": t["turn_id"], "event_id": t["event_id"], "signal": signal.to_dict()},
            )
        )
    if head:
        hp = _payload(head[0])
        ex = hp.get("extraction") or {}
        trail.steps.append(
            Step(
                str(head[0]["occurred_at"]),
                "extraction",
                f"{hp['trigger']} flush of {len(hp['turns'])} turn(s) by {ex.get('extractor', 'none')}"
                f" (model {ex.get('model')}, prompt {ex.get('prompt_version')}, "
                f"tokens {ex.get('tokens_in', 0)}+{ex.get('tokens_out', 0)}"
                f"{', fallback: ' + str(ex.get('fallback_reason')) if ex.get('fallback') else ''})",
                {
                    "event_id": head[0]["event_id"],
                    "turns": hp["turns"],
                    "llm_calls": hp["llm_calls"],
                },
            )
        )


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value).replace(" ", "T", 1)


def _envelope(row: dict[str, Any]) -> Envelope[Any]:
    return from_dict(
        {
            "event_id": row["event_id"],
            "type": row["type"],
            "schema_version": row["schema_version"],
            "occurred_at": _iso(row["occurred_at"]),
            "recorded_at": _iso(row["recorded_at"]),
            "namespace": row["namespace"],
            "session_id": row["session_id"],
            "causation_id": row["causation_id"],
            "correlation_id": row["correlation_id"],
            "producer": row["producer"],
            "payload": _payload(row),
        }
    )


def as_of(db: SQL, namespace: str, when: datetime) -> list[MemoryState]:
    """The namespace's memories as they stood at ``when`` (event time), valid at that moment."""
    rows = _rows(
        db,
        "SELECT * FROM memory_log WHERE namespace = ? AND occurred_at <= ? "
        "ORDER BY log_partition, log_offset",
        [namespace, when.isoformat()],
    )
    states = fold([_envelope(r) for r in rows])
    return sorted(
        (
            s
            for s in states.values()
            if s.status == "active"
            and (s.valid_from is None or s.valid_from <= when)
            and (s.valid_until is None or when < s.valid_until)
        ),
        key=lambda s: (s.created_at, s.memory_id),
    )
