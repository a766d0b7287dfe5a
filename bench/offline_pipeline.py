"""The write path run offline, in one process, with the same pure functions as the agent
(scan, buffer triggers, extraction, plan_flush), for benchmarks and the retrieval
evaluation. Buffers left at the end are flushed as ``idle``, as the worker's timer would."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memstream.core.buffer_policy import BufferConfig, due_on_clock, flush_order, trigger_on_append
from memstream.core.embedding import Embedder
from memstream.core.extract.images import caption_of
from memstream.core.gate import GateConfig
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn, plan_flush
from memstream.schemas.envelope import Envelope
from memstream.schemas.ids import derived_id
from memstream.streams.extraction import Extractor, RuleExtractor, extract_buffer, flush_of


@dataclass
class OfflineRun:
    events: list[Envelope[Any]] = field(default_factory=list)
    turns: int = 0
    flushes: int = 0
    extractor_calls: int = (
        0  # flushes that had something to extract (one LLM call each, up to its batch size)
    )
    llm_calls: int = 0


def run_offline(
    turns: Iterable[Mapping[str, Any]],
    *,
    extractor: Extractor | None = None,
    buffer: BufferConfig | None = None,
    gate: GateConfig | None = None,
) -> OfflineRun:
    """``turns``: dicts in the ingest format, in time order per namespace."""
    return asyncio.run(
        _run(
            list(turns),
            extractor or RuleExtractor(),
            buffer or BufferConfig(),
            gate or GateConfig(),
        )
    )


def configured_embedder() -> Embedder:
    """The retrieval embedder ``MEMSTREAM_EMBEDDER`` names, built once, so the evaluation
    retrieves the way a configured worker does."""
    from memstream.infra.settings import load
    from memstream.projections.factory import embedder

    return embedder(load())


def configured_gate_embedder() -> Embedder:
    """The write path's embedder (``MEMSTREAM_GATE_EMBEDDER``), as a worker's gate uses it."""
    from memstream.infra.settings import load
    from memstream.projections.factory import gate_embedder

    return gate_embedder(load())


async def _run(
    turns: list[Mapping[str, Any]], extractor: Extractor, config: BufferConfig, gate: GateConfig
) -> OfflineRun:
    out = OfflineRun()
    embedder = configured_gate_embedder()
    memories: dict[str, NamespaceMemory] = {}
    buffers: dict[tuple[str, str], list[BufferedTurn]] = {}
    watermark: dict[str, datetime] = {}

    async def flush(key: tuple[str, str], trigger: str) -> None:
        batch = buffers.pop(key)
        result = await extract_buffer(extractor, batch, key[1])
        if result is not None:
            out.extractor_calls += 1
            out.llm_calls += result.llm_calls
        ns = key[0]
        memory = memories.setdefault(ns, NamespaceMemory(ns, embedder))
        out.events.extend(
            plan_flush(
                memory,
                flush_of(
                    result,
                    namespace=ns,
                    session_id=key[1],
                    trigger=trigger,
                    turns=batch,
                    producer="write-path",
                ),
                gate,
            )
        )
        out.flushes += 1

    for row in turns:
        ns, session = row["namespace"], row["session_id"]
        at = datetime.fromisoformat(row["occurred_at"])
        watermark[ns] = max(watermark.get(ns, at), at)
        # The namespace's other sessions that its clock leaves behind, as the write path does.
        stale = {
            k: due
            for k, b in buffers.items()
            if k[0] == ns
            and k[1] != session
            and (
                due := due_on_clock(
                    first_at=b[0].occurred_at,
                    last_at=max(t.occurred_at for t in b),
                    watermark=watermark[ns],
                    config=config,
                )
            )
        }
        for key in flush_order((k, buffers[k][0].occurred_at) for k in stale):
            await flush(key, stale[key])
        signal = scan(row["text"], role=row["role"])
        turn = BufferedTurn(
            derived_id(at, "turn", ns, row["turn_id"]),
            row["turn_id"],
            row["role"],
            row["speaker"],
            row["text"],
            at,
            signal,
            caption_of(row.get("metadata"), row["text"]),
            dict(row.get("metadata") or {}) or None,
        )
        buffer = buffers.setdefault((ns, session), [])
        buffer.append(turn)
        out.turns += 1
        trigger = trigger_on_append(
            level=signal.level.value,
            size=len(buffer),
            first_at=buffer[0].occurred_at,
            last_at=max(t.occurred_at for t in buffer),
            config=config,
            reasons=signal.reasons,
        )
        if trigger is not None:
            await flush((ns, session), trigger)
    for key in list(buffers):
        await flush(key, "idle")
    close = getattr(extractor, "aclose", None)
    if close is not None:  # the LLM extractor's HTTP client belongs to this loop
        await close()
    return out
