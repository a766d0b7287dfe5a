"""Snapshot files (streams/snapshots.py): a snapshot restores exactly the state it was taken
from; a damaged, foreign, older-format or missing file is never used."""

from __future__ import annotations

import dataclasses
import struct
from datetime import UTC, datetime
from pathlib import Path

from memstream.core.embedding import HashingEmbedder
from memstream.streams import snapshots
from memstream.streams.partition_state import PartitionState
from memstream.streams.snapshots import Snapshot, SnapshotKey, capture, read, restore, write
from tests.planning import planned

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
TEXTS = [
    "I started training for the Berlin marathon in March.",
    "My knee hurts because of the marathon training.",
    "My sister Lena moved to Toronto.",
    "I had coffee with Lena in Toronto.",
]


def _state() -> PartitionState:
    state = PartitionState(0, HashingEmbedder())
    _memory, log = planned(TEXTS, memory=state.memory("ns"))
    for env in log:
        if env.type == "TurnsExtracted":
            state.apply(env)  # the plan applied the rest to the namespace already
        else:
            state.processed.add(env.causation_id or "")
            state.events_applied += 1
    return state


KEY = SnapshotKey.of("mst.memory.log", 0, "epoch-1", HashingEmbedder())


def _written(tmp_path: Path, state: PartitionState) -> Path:
    path = tmp_path / "p0.snapshot"
    write(path, Snapshot(KEY, 42, 7, capture(state)))
    return path


def test_a_snapshot_restores_the_state_it_was_taken_from(tmp_path: Path) -> None:
    state = _state()
    loaded = read(_written(tmp_path, state), KEY)
    assert loaded is not None and (loaded.memory_position, loaded.access_position) == (42, 7)
    again = PartitionState(0, HashingEmbedder())
    restore(again, loaded.state)
    mine, theirs = state.memory("ns"), again.memory("ns")
    assert theirs.states == mine.states and theirs.edges == mine.edges
    assert theirs.by_entity == mine.by_entity and theirs.by_hash == mine.by_hash
    assert again.seen_turns == state.seen_turns and again.processed == state.processed
    # the restored index answers like the original
    vector = mine.embed("marathon training knee")
    assert theirs.nearest(vector, 3) == mine.nearest(vector, 3)


def test_damaged_foreign_or_older_snapshots_are_ignored(tmp_path: Path) -> None:
    path = _written(tmp_path, _state())
    good = path.read_bytes()
    assert read(tmp_path / "missing.snapshot", KEY) is None
    other = SnapshotKey.of("mst.memory.log", 0, "epoch-2", HashingEmbedder())  # a recovered log
    assert read(path, other) is None
    assert read(path, SnapshotKey.of("mst.memory.log", 0, "epoch-1", HashingEmbedder(64))) is None
    damaged = bytearray(good)
    damaged[-5] ^= 0xFF
    path.write_bytes(bytes(damaged))
    assert read(path, KEY) is None
    path.write_bytes(good[: len(good) // 2])  # cut short
    assert read(path, KEY) is None
    header = len(snapshots.MAGIC)
    older = good[:header] + struct.pack(">I", snapshots.VERSION + 1) + good[header + 4 :]
    path.write_bytes(older)
    assert read(path, KEY) is None
    path.write_bytes(b"not a snapshot at all")
    assert read(path, KEY) is None
    path.write_bytes(good)
    assert read(path, KEY) is not None


def test_a_restored_partition_unpacks_a_namespace_when_asked_with_its_tail(
    tmp_path: Path,
) -> None:
    """streams/lazy_namespaces.py: after a restore every namespace stays packed; the tail's
    events wait with it, and asking for one namespace unpacks it alone and applies them in
    log order. The result equals the fold of the whole log, and so does a snapshot taken
    while the other namespace is still packed."""
    _a, log_a = planned(TEXTS)
    _b, log_b = planned(TEXTS[::-1])
    log_b = [dataclasses.replace(e, namespace="other") for e in log_b]
    cut_a, cut_b = len(log_a) // 2, len(log_b) // 2
    before, tail = log_a[:cut_a] + log_b[:cut_b], log_a[cut_a:] + log_b[cut_b:]
    whole = PartitionState(0, HashingEmbedder())
    for env in before + tail:
        whole.apply(env)
    first = PartitionState(0, HashingEmbedder())
    for env in before:
        first.apply(env)
    loaded = read(_written(tmp_path, first), KEY)
    assert loaded is not None
    again = PartitionState(0, HashingEmbedder())
    restore(again, loaded.state)
    assert again.namespaces.is_packed("ns") and again.namespaces.is_packed("other")
    assert set(again.namespaces) == {"ns", "other"} and len(again.namespaces) == 2
    for env in tail:
        again.apply(env)
    assert set(again.deferred) == {"ns", "other"}  # nothing unpacked by the tail
    assert again.memory("ns").states == whole.memory("ns").states
    assert again.namespaces.is_packed("other") and "ns" not in again.deferred
    # a snapshot now: the packed namespace's tail is applied first, then it is written
    path = tmp_path / "p0-again.snapshot"
    write(path, Snapshot(KEY, 43, 7, capture(again)))
    later = read(path, KEY)
    assert later is not None and not again.deferred
    restored = PartitionState(0, HashingEmbedder())
    restore(restored, later.state)
    for state in (again, restored):
        for ns in ("ns", "other"):
            mine, theirs = state.memory(ns), whole.memory(ns)
            assert mine.states == theirs.states and mine.by_hash == theirs.by_hash, ns
        assert state.processed == whole.processed
        assert state.watermarks == whole.watermarks
    assert again.events_applied == whole.events_applied
