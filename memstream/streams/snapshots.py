"""Snapshots of a partition's state, so a restart folds only the log's tail.

A snapshot is the fold of one memory-log partition up to a position (and of its access
partition up to another), written by the worker into its data directory. It is only a
cache of the log: loading checks that it was made from the same log (the log identity's
epoch, ``infra/log_identity.py``), the same partition, the same gate embedder and this
format's version, and its checksum; anything else — a missing, corrupt, foreign or older
snapshot, or a position past the log's end — is ignored with a log line and the fold starts
from offset 0, exactly as without snapshots.

Only positions the log holds are ever snapshotted: a snapshot is taken right after a load
folded the partition to its end, and by the snapshotter (``Snapshotter``), which folds the
log's new records into a copy of the last snapshot — never from the live state, whose
latest events may not have reached the log yet.

Written aside and renamed (a reader never sees half a file); the body is a pickle, read
only from the worker's own data directory and after the checksum in its header matched.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import pickle
import struct
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from memstream.core.embedding import Embedder
from memstream.core.namespace_memory import NamespaceMemory

log = logging.getLogger("memstream.snapshots")

MAGIC = b"MEMSTREAM-SNAPSHOT\n"
# 2: the gate vectors kept sparse (core/sparse_rows.py); 3: each namespace a pickle of its
# own, unpacked when first asked for (streams/lazy_namespaces.py)
VERSION = 3
_HEADER = struct.Struct(">I32sQ")  # version, sha256 of the body, body length

#: PartitionState fields a snapshot keeps: what the log's fold builds. Buffers, parked
#: feedback, locks and loop times are about the live process, never in a snapshot.
STATE_FIELDS = (
    "seen_turns",
    "watermarks",
    "events_applied",
    "processed",
    "accesses",
    "recalls",
    "recall_keys",
    "access_next",
    "q_high_since",
    "last_cycle",
    "evolution_since",
    "q_updates_since",
    "q_history",
)
_MEMORY_SKIP = {"embedder"}


@dataclass(frozen=True, slots=True)
class SnapshotKey:
    """What a snapshot must have been made from to be used."""

    topic: str
    partition: int
    epoch: str | None
    embedder: str  # name, version and dimension of the gate embedder
    shape: str = ""  # the state's field names: a snapshot of another code version is not used

    @staticmethod
    def of(topic: str, partition: int, epoch: str | None, embedder: Embedder) -> SnapshotKey:
        return SnapshotKey(
            topic,
            partition,
            epoch,
            f"{embedder.name}:{embedder.version}:{embedder.dim}",
            _shape(),
        )


def _shape() -> str:
    from memstream.core.memory_state import MemoryState
    from memstream.core.recent_ids import RecentIds
    from memstream.core.seen_turns import SeenTurns

    names = [
        *STATE_FIELDS,
        *(f.name for f in fields(SeenTurns)),
        *(f.name for f in fields(RecentIds)),
        *(f.name for f in fields(NamespaceMemory)),
        *(f.name for f in fields(MemoryState)),
    ]
    return hashlib.sha256(",".join(names).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Snapshot:
    key: SnapshotKey
    memory_position: int  # next offset of the memory-log partition to fold
    access_position: int  # next offset of the access partition to fold
    # STATE_FIELDS plus "namespaces": ns -> a pickle of its NamespaceMemory fields (or, in a
    # body not yet written, the fields themselves)
    state: dict[str, Any]


def path_for(data_dir: str | Path, key: SnapshotKey) -> Path:
    return Path(data_dir) / "snapshots" / f"{key.topic}-{key.partition}.snapshot"


def capture(state: Any) -> dict[str, Any]:
    """The snapshot body of a PartitionState (shares its objects: write it at once). A
    namespace still packed is kept as it was read; the others are pickled by ``write``."""
    state.unpack_pending()  # a namespace with tail events waiting: applied first
    out = {name: getattr(state, name) for name in STATE_FIELDS}
    namespaces: dict[str, Any] = state.namespaces.packed()
    for ns, memory in state.namespaces.loaded().items():
        namespaces[ns] = {
            f.name: getattr(memory, f.name) for f in fields(memory) if f.name not in _MEMORY_SKIP
        }
    out["namespaces"] = namespaces
    return out


def restore(state: Any, body: dict[str, Any]) -> None:
    """Fill a fresh PartitionState from a snapshot body; its namespaces stay packed."""
    for name in STATE_FIELDS:
        setattr(state, name, body[name])
    state.namespaces.pack(body["namespaces"])


def unpack_namespace(namespace: str, blob: bytes, embedder: Embedder) -> NamespaceMemory:
    """One namespace's memory from its pickle in a snapshot."""
    memory = NamespaceMemory(namespace, embedder)
    for name, value in _unpickled(memoryview(blob)).items():
        setattr(memory, name, value)
    return memory


def write(path: Path, snapshot: Snapshot) -> int:
    """Write ``snapshot`` to ``path`` atomically; its size in bytes."""
    state = dict(snapshot.state)
    state["namespaces"] = {
        ns: value
        if isinstance(value, bytes)
        else pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        for ns, value in snapshot.state["namespaces"].items()
    }
    body = pickle.dumps(
        {
            "key": snapshot.key,
            "memory_position": snapshot.memory_position,
            "access_position": snapshot.access_position,
            "state": state,
        },
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_suffix(f".{os.getpid()}.tmp")
    with aside.open("wb") as f:
        f.write(MAGIC + _HEADER.pack(VERSION, hashlib.sha256(body).digest(), len(body)))
        f.write(body)
        f.flush()
        os.fsync(f.fileno())
    os.replace(aside, path)
    return len(MAGIC) + _HEADER.size + len(body)


def read(path: Path, key: SnapshotKey) -> Snapshot | None:
    """The snapshot at ``path`` if it is whole, this version and made from ``key``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("snapshot %s unreadable (%s): folding from the start", path, e)
        return None
    why = _invalid(raw)
    if why is None:
        try:
            data = _unpickled(memoryview(raw)[len(MAGIC) + _HEADER.size :])
        except Exception as e:  # a body that passed the checksum but not the loader
            why = f"body not loadable ({type(e).__name__})"
        else:
            if data.get("key") != key:
                why = f"made from another log, partition or embedder ({data.get('key')})"
            else:
                return Snapshot(
                    key, data["memory_position"], data["access_position"], data["state"]
                )
    log.warning("snapshot %s ignored: %s; folding from the start", path, why)
    return None


def _unpickled(body: memoryview) -> Any:
    """``pickle.loads`` with the cyclic collector paused: a million new objects would make it
    walk the growing heap again and again though none of them is garbage (1.5-1.9x faster
    at 500k memory states). Then every object so far is frozen (``gc.freeze``): the loaded
    state lives as long as the partition, and unfrozen, the collections deferred by the
    pause walked it right after (+2.2-2.5 s of the next 300k allocations at 1M memories)
    and every full collection after that. Frozen objects are still freed when nothing
    refers to them; only a cycle among them would wait for the process to end."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        loaded = pickle.loads(body)
        gc.freeze()
        return loaded
    finally:
        if enabled:
            gc.enable()


def _invalid(raw: bytes) -> str | None:
    if not raw.startswith(MAGIC) or len(raw) < len(MAGIC) + _HEADER.size:
        return "not a snapshot"
    version, digest, length = _HEADER.unpack_from(raw, len(MAGIC))
    if version != VERSION:
        return f"format version {version}, this worker reads {VERSION}"
    body = memoryview(raw)[len(MAGIC) + _HEADER.size :]  # no copy of a large file
    if len(body) != length or hashlib.sha256(body).digest() != digest:
        return "checksum mismatch (a partial or damaged file)"
    return None
