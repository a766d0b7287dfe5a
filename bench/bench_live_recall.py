"""Evidence recall as users get it: the set's turns on the broker, one worker with the
defaults (the daily dream cycle, the projections), the questions over HTTP.

``bench/retrieval_eval.py`` runs the write path offline and asks the recall service in
process: it runs no dream cycle and records no access. A worker does both: the daily cycle
(event time) rehearses, archives, merges, summarises and moves tiers while the turns come
in, and each recall's ``MemoryAccessed`` feeds activation and co-activation before the next
question. This benchmark asks the same questions of a live worker, and of one with the
scheduled cycle off (``MEMSTREAM_DREAM_EVERY_HOURS=0``: tiers on their timer, the cycle on
demand only) in the same run, so what the cycle costs or gains in recall is a figure.

Each question is asked at its set's time (``at``: a day after the conversation's last turn,
or its ``as_of``), k=40, with low-confidence answers included (the offline evaluation's
settings); after each answer the worker is left to apply what the recall recorded (its
access and co-activation records: up to 20-90 memory-log events, none for memories used
within the hour before, the spacing effect) before the next question, so the order of the
questions is all that orders their effects (repeated runs agree within 0.003).

Figures: ``evidence recall@10 <set> through the worker`` (turn-budgeted, as the offline
evaluation's headline), baseline the same with the scheduled cycle off; ``... plain``
(memory-level). ``python -m bench.bench_live_recall [own|dev|test ...]`` prints each
ability's figures.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.bench_realistic_ingest import _current
from bench.broker import fresh_broker
from bench.figures import Figure
from bench.live_pipeline import collect, publish_raw, worker_process
from bench.retrieval_eval import (
    ABSTENTION,
    EvalSet,
    asked_at,
    budgeted,
    last_turns,
    load_set,
    plain,
)
from memstream.consumers.ingest_wait import _log_ends
from memstream.consumers.producer import turn_event
from memstream.infra.settings import Settings
from memstream.schemas.envelope import encode
from memstream.streams.status import running_worker

CYCLE_OFF = {"MEMSTREAM_DREAM_EVERY_HOURS": "0"}
DEPTH = 40


@dataclass
class LiveRun:
    """Recall@10 per question (turn-budgeted and memory-level), by ability."""

    budgeted: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    plain: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    archived: int = 0  # memories the worker archived while the turns came in
    created: int = 0

    @staticmethod
    def mean(by_kind: Mapping[str, list[float]], kind: str | None = None) -> float:
        values = by_kind[kind] if kind else [v for vs in by_kind.values() for v in vs]
        return sum(values) / len(values) if values else 0.0


def _turns(eval_set: EvalSet) -> list[tuple[bytes, bytes]]:
    envelopes = [
        turn_event(
            namespace=t["namespace"],
            session_id=t["session_id"],
            turn_id=t["turn_id"],
            role=t["role"],
            speaker=t["speaker"],
            text=t["text"][:32_000],
            occurred_at=datetime.fromisoformat(t["occurred_at"]),
            metadata=t.get("metadata") or None,
            producer="bench",
        )
        for t in eval_set.turns
    ]
    envelopes.sort(key=lambda e: e.occurred_at)
    return [(e.key, encode(e)) for e in envelopes]


#: how long a recall's co-activation records may take to reach the log (seen: 0.05-0.4 s)
GROWN_WITHIN = 0.6


def _log_size(settings: Settings) -> int:
    return sum(asyncio.run(_log_ends(settings)).values())


def _settle(
    api: httpx.Client, settings: Settings, before: int | None = None, timeout: float = 30.0
) -> None:
    """Until the memory log grew past ``before`` (a recall's co-activation records reach it
    through the learning agent 0.05-0.4 s after the answer; 0.6 s at most: a recall of
    memories used within the hour before writes none, the spacing effect), then until the
    projections applied it to its end and nothing new came for a moment."""
    deadline = time.monotonic() + timeout
    grown = time.monotonic() + GROWN_WITHIN
    while before is not None and time.monotonic() < grown and _log_size(settings) <= before:
        time.sleep(0.02)
    quiet = 0
    while time.monotonic() < deadline and quiet < 3:
        ends = asyncio.run(_log_ends(settings))
        quiet = quiet + 1 if _current(api, ends) else 0
        time.sleep(0.02)


def live_recall(eval_set: EvalSet, **env: str) -> LiveRun:
    """``eval_set`` through one worker with the defaults (``env``: settings changed)."""
    records = _turns(eval_set)
    last = last_turns(eval_set.turns)
    run = LiveRun()
    with fresh_broker() as settings:
        asyncio.run(publish_raw(settings.bootstrap(), f"{settings.topic_prefix}.turns", records))
        datadir = Path(tempfile.mkdtemp(prefix="bench-live-recall-"))
        projections = Settings().projections
        with worker_process(settings, projections=projections, datadir=datadir, **env):
            asyncio.run(
                collect(
                    settings,
                    frozenset({"TurnsExtracted"}),
                    lambda f: len(f["payload"]["turns"]),
                    len(records),
                    stall=120.0,
                )
            )
            info = running_worker(datadir / "data")
            assert info is not None, "the worker recorded no API"
            with httpx.Client(base_url=info["api_url"], timeout=60) as api:
                _settle(api, settings, timeout=600.0)
                for q in eval_set.questions:
                    evidence = set(q["evidence_turn_ids"])
                    if not evidence or q["kind"] == ABSTENTION:
                        continue
                    body: dict[str, Any] = {
                        "namespace": q["namespace"],
                        "query": q["query"],
                        "k": DEPTH,
                        "include_low_confidence": True,
                        "at": asked_at(q, last).isoformat(),
                    }
                    if q.get("as_of"):
                        body["as_of"] = q["as_of"]
                    before = _log_size(settings)
                    response = api.post("/v1/recall", json=body)
                    response.raise_for_status()
                    groups = [r["source_turn_ids"] for r in response.json()["results"]]
                    run.budgeted[q["kind"]].append(budgeted(evidence, groups)[10])
                    run.plain[q["kind"]].append(plain(evidence, groups)[10])
                    _settle(api, settings, before)
                counts = api.post(
                    "/sql", json={"sql": "SELECT status, count(*) FROM memories GROUP BY status"}
                )
                counts.raise_for_status()
                by_status = {status: n for status, n in counts.json()["rows"]}
                run.archived = int(by_status.get("archived", 0))
                run.created = int(sum(by_status.values()))
    return run


#: the sets this benchmark reports (BEAM's test part when the dataset is on this machine)
SETS: Sequence[str] = ("own", "test")


def run() -> list[Figure]:
    figures: list[Figure] = []
    for key in SETS:
        loaded = load_set(key)
        if loaded is None:
            continue
        with_cycle, without = live_recall(loaded), live_recall(loaded, **CYCLE_OFF)
        note = (
            f"{loaded.name}: {len(loaded.turns)} turns on the broker, one worker with the "
            "defaults, questions over HTTP at a day after the conversation (k=40, low "
            "confidence included), each after the worker applied what the last recorded; "
            f"{with_cycle.archived} of {with_cycle.created} memories archived by then"
        )
        for label, attr in (("", "budgeted"), (" plain", "plain")):
            figures.append(
                Figure(
                    f"evidence recall@10 {loaded.name} through the worker{label}",
                    LiveRun.mean(getattr(with_cycle, attr)),
                    "recall",
                    LiveRun.mean(getattr(without, attr)),
                    "the same worker with the scheduled dream cycle off",
                    notes=note,
                )
            )
    return figures


def main(argv: Sequence[str]) -> int:
    for key in argv or ("own",):
        loaded = load_set(key)
        if loaded is None:
            print(f"{key}: not on this machine")
            continue
        for name, env in (("defaults", {}), ("cycle off", CYCLE_OFF)):
            r = live_recall(loaded, **env)
            kinds = ", ".join(f"{k} {LiveRun.mean(r.budgeted, k):.3f}" for k in sorted(r.budgeted))
            print(
                f"{loaded.name} {name}: @10 {LiveRun.mean(r.budgeted):.4f} "
                f"(plain {LiveRun.mean(r.plain):.4f}; archived {r.archived} of {r.created}) "
                f"{kinds}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
