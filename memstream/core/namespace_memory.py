"""What one namespace knows now: memory states plus the lookups the write path needs
(content hash, subject/slot, nearest neighbour). Built only by applying memory-log events,
so a fold of the log rebuilds exactly the live index.

The gate's vectors are kept sparse (core/sparse_rows.py): a hashing-embedder vector has a
few dozen non-zero buckets of 384, so its exact float32 values and their columns take a
sixth of the dense row. A dense matrix is rebuilt from them only for the namespaces the
gate is using (a bounded cache), bit for bit the dense rows of before: the scores, and so
the decisions and their evidence, are unchanged."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstream.core.embedding import Embedder, HashingEmbedder
from memstream.core.gate import Neighbour
from memstream.core.memory_state import MemoryState, apply, memory_ids_of
from memstream.core.replies import is_reply
from memstream.core.sparse_rows import DenseCache, DenseRows, SparseRows
from memstream.schemas.envelope import Envelope
from memstream.schemas.events import RelationAdded, RelationRemoved

#: texts whose vectors a namespace keeps at hand: a flush's facts between the gate and the
#: apply of the events it decided (per namespace, so small: tenants are many)
RECENT_TEXTS = 32
#: the dense matrices the gate scores against, rebuilt from the sparse rows, for the
#: namespaces used last (per process; at least the one in use is always kept)
DENSE = DenseCache(64 * 2**20)


@dataclass
class NamespaceMemory:
    namespace: str
    embedder: Embedder
    states: dict[str, MemoryState] = field(default_factory=dict)
    by_hash: dict[str, str] = field(default_factory=dict)
    by_slot: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    tagged: set[str] = field(default_factory=set)  # memories with a live or unexpired synaptic tag
    # entity -> memories that name it, in the order they first did (core/relations.py)
    by_entity: dict[str, list[str]] = field(default_factory=dict)
    # live edges: (source, target, relation) -> (confidence, order added), for the bound
    edges: dict[tuple[str, str, str], tuple[float, int]] = field(default_factory=dict)
    edge_rules: dict[tuple[str, str, str], str] = field(default_factory=dict)  # who found it
    # when each edge was last found or used, and its confidence then (fading starts there)
    edge_used: dict[tuple[str, str, str], tuple[datetime, float]] = field(default_factory=dict)
    # session -> (turn id, memories) of its latest turn that yielded memories, not counting
    # the assistant's replies: what a reply in a later flush answers (core/replies.py)
    session_tail: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    _edge_seq: int = 0
    _rows: dict[str, int] = field(default_factory=dict)
    _ids: list[str] = field(default_factory=list)
    _vectors: SparseRows | DenseRows = field(default_factory=lambda: DenseRows(0))
    _active: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        if self._vectors.dim != self.embedder.dim:
            # a hashing vector is mostly zeros; a model's vectors are dense
            sparse = isinstance(self.embedder, HashingEmbedder)
            self._vectors = (SparseRows if sparse else DenseRows)(self.embedder.dim)
        self._recent: dict[str, NDArray[np.float32]] = {}
        # session -> its memories in ``tagged``, built from ``tagged`` on first use (so a
        # state restored from a snapshot, which sets ``tagged``, needs nothing more)
        self._tagged_by_session: dict[str | None, set[str]] | None = None

    def embed(self, text: str) -> NDArray[np.float32]:
        """The text's vector; the gate and the apply of the resulting event share one call."""
        vector = self._recent.get(text)
        if vector is None:
            if len(self._recent) >= RECENT_TEXTS:
                self._recent.clear()
            vector = self._recent[text] = self.embedder.embed([text])[0]
        return vector

    def apply(self, env: Envelope[Any]) -> MemoryState | None:
        """Applies ``env`` to every memory it changes; returns the state of its ``memory_id``."""
        ids = memory_ids_of(env)
        if not ids:
            return None
        p = env.payload
        if isinstance(p, RelationAdded | RelationRemoved) and all(i in self.states for i in ids):
            key = (p.memory_id, p.target_id, p.relation)
            if isinstance(p, RelationRemoved):
                self.edges.pop(key, None)
                self.edge_rules.pop(key, None)
                self.edge_used.pop(key, None)
            else:
                self.edge_rules[key] = p.rule
                if "faded_from" not in p.evidence:  # fading is not a use
                    self.edge_used[key] = (env.occurred_at, p.confidence)
                order = self.edges[key][1] if key in self.edges else self._edge_seq
                self._edge_seq += key not in self.edges
                self.edges[key] = (p.confidence, order)
        first = self._apply_one(ids[0], env)
        for other in ids[1:]:
            self._apply_one(other, env)
        return first

    def _apply_one(self, mid: str, env: Envelope[Any]) -> MemoryState | None:
        before = self.states.get(mid)
        after = apply(before, env)
        if after is None or after is before:
            return after
        self.states[mid] = after
        if before is not None and before.content_hash != after.content_hash:
            self.by_hash.pop(before.content_hash, None)
        self.by_hash[after.content_hash] = mid
        index = self._tagged_by_session
        if after.tagged_until is not None:
            self.tagged.add(mid)
            if index is not None:
                index.setdefault(after.session_id, set()).add(mid)
        else:
            self.tagged.discard(mid)
            if index is not None and after.session_id in index:
                index[after.session_id].discard(mid)
        if after.subject and after.slot:
            self.by_slot.setdefault((after.subject, after.slot), set()).add(mid)
        if before is None or before.entities != after.entities:
            for entity in after.entities:
                named = self.by_entity.setdefault(entity, [])
                if mid not in named:
                    named.append(mid)
        if before is None and after.session_id and after.source_turn_ids:
            self._extend_tail(after)
        if before is None or before.text != after.text:
            self._set_vector(mid, self.embed(after.text))
        self._active[self._rows[mid]] = after.active
        return after

    def _extend_tail(self, state: MemoryState) -> None:
        if is_reply(state.kind, state.subject) or state.session_id is None:
            return
        turn = state.source_turn_ids[-1]
        known = self.session_tail.get(state.session_id)
        if known is not None and known[0] == turn:
            known[1].append(state.memory_id)
        else:
            self.session_tail[state.session_id] = (turn, [state.memory_id])

    def _set_vector(self, mid: str, vector: NDArray[np.float32]) -> None:
        row = self._rows.get(mid)
        if row is None:
            row = len(self._ids)
            if row >= self._active.shape[0]:  # grow geometrically: appends stay amortised O(1)
                active = np.zeros(max(16, row * 2), dtype=bool)
                active[:row] = self._active[:row]
                self._active = active
            self._rows[mid] = row
            self._ids.append(mid)
        self._vectors.set(row, vector)
        if isinstance(self._vectors, SparseRows):
            DENSE.changed(self, row, vector)

    def _matrix(self) -> NDArray[np.float32]:
        """The dense vectors of every row, in row order (from the cache when it has them)."""
        if isinstance(self._vectors, DenseRows):
            return self._vectors.matrix
        return DENSE.matrix(self, self._vectors)

    def vector(self, memory_id: str) -> NDArray[np.float32]:
        """The stored vector of a memory's current text (no embedding call)."""
        return self._vectors.row(self._rows[memory_id])

    def vectors(self, memory_ids: Iterable[str]) -> dict[str, NDArray[np.float32]]:
        """``vector`` of each of ``memory_ids``, as rows of the namespace's dense matrix
        (views, valid until the next change): a dream cycle reads every active memory's,
        and making each one dense on its own was a fifth of the cycle's planning."""
        matrix = self._matrix()
        return {mid: matrix[self._rows[mid]] for mid in memory_ids}

    def closest(self, vector: NDArray[np.float32]) -> Neighbour | None:
        n = len(self._ids)
        if n == 0:
            return None
        scores = self._matrix()[:n] @ vector
        scores = np.where(self._active[:n], scores, -np.inf)
        best = int(np.argmax(scores))
        if not np.isfinite(scores[best]):
            return None
        mid = self._ids[best]
        return Neighbour(mid, float(scores[best]), self.states[mid].text)

    def nearest(self, vector: NDArray[np.float32], n: int) -> list[str]:
        """The ``n`` active memories closest to ``vector``, closest first."""
        count = len(self._ids)
        if count == 0 or n <= 0:
            return []
        scores = np.where(self._active[:count], self._matrix()[:count] @ vector, -np.inf)
        top = np.argsort(-scores, kind="stable")[:n]
        return [self._ids[int(i)] for i in top if np.isfinite(scores[int(i)])]

    def tagged_in(self, session_id: str | None) -> list[str]:
        """The memories of ``tagged`` from session ``session_id``, sorted: the write plan
        asks for each new memory, so not a scan of every tag the namespace holds."""
        index = self._tagged_by_session
        if index is None:
            index = self._tagged_by_session = {}
            for mid in self.tagged:
                index.setdefault(self.states[mid].session_id, set()).add(mid)
        return sorted(index.get(session_id, ()))

    def naming(self, entity: str) -> list[str]:
        """Active memories that name ``entity``, in the order they first did."""
        return [m for m in self.by_entity.get(entity, ()) if self.states[m].active]

    def slot_holder(
        self, subject: str | None, slot: str | None, vector: NDArray[np.float32]
    ) -> Neighbour | None:
        """The active memory that answers the same (subject, slot), if any."""
        if not subject or not slot:
            return None
        best: Neighbour | None = None
        for mid in sorted(self.by_slot.get((subject, slot), ())):
            if self.states[mid].active:
                state = self.states[mid]
                sim = float(self._vectors.row(self._rows[mid]) @ vector)
                if best is None or sim > best.similarity:
                    best = Neighbour(mid, sim, state.text)
        return best

    def slot_holders(self, subject: str, prefixes: tuple[str, ...]) -> list[str]:
        """Active memories of ``subject`` whose slot starts with one of ``prefixes``."""
        return sorted(
            mid
            for (subj, slot), ids in self.by_slot.items()
            if subj == subject and slot.startswith(prefixes)
            for mid in ids
            if self.states[mid].active
        )

    def active_hash(self, content_hash: str) -> str | None:
        mid = self.by_hash.get(content_hash)
        return mid if mid is not None and self.states[mid].active else None
