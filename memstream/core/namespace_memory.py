"""What one namespace knows now: memory states plus the lookups the write path needs
(content hash, subject/slot, nearest neighbour). Built only by applying memory-log events,
so a fold of the log rebuilds exactly the live index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstream.core.embedding import Embedder
from memstream.core.gate import Neighbour
from memstream.core.memory_state import MemoryState, apply, memory_id_of
from memstream.schemas.envelope import Envelope


@dataclass
class NamespaceMemory:
    namespace: str
    embedder: Embedder
    states: dict[str, MemoryState] = field(default_factory=dict)
    by_hash: dict[str, str] = field(default_factory=dict)
    by_slot: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    tagged: set[str] = field(default_factory=set)  # memories with a live or unexpired synaptic tag
    _rows: dict[str, int] = field(default_factory=dict)
    _ids: list[str] = field(default_factory=list)
    _matrix: NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    _active: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        self._matrix = np.zeros((0, self.embedder.dim), dtype=np.float32)
        self._recent: dict[str, NDArray[np.float32]] = {}

    def embed(self, text: str) -> NDArray[np.float32]:
        """The text's vector; the gate and the apply of the resulting event share one call."""
        vector = self._recent.get(text)
        if vector is None:
            if len(self._recent) >= 256:
                self._recent.clear()
            vector = self._recent[text] = self.embedder.embed([text])[0]
        return vector

    def apply(self, env: Envelope[Any]) -> MemoryState | None:
        mid = memory_id_of(env)
        if mid is None:
            return None
        before = self.states.get(mid)
        after = apply(before, env)
        if after is None or after is before:
            return after
        self.states[mid] = after
        if before is not None and before.content_hash != after.content_hash:
            self.by_hash.pop(before.content_hash, None)
        self.by_hash[after.content_hash] = mid
        if after.tagged_until is not None:
            self.tagged.add(mid)
        else:
            self.tagged.discard(mid)
        if after.subject and after.slot:
            self.by_slot.setdefault((after.subject, after.slot), set()).add(mid)
        if before is None or before.text != after.text:
            self._set_vector(mid, self.embed(after.text))
        self._active[self._rows[mid]] = after.active
        return after

    def _set_vector(self, mid: str, vector: NDArray[np.float32]) -> None:
        row = self._rows.get(mid)
        if row is None:
            row = len(self._ids)
            if row >= self._matrix.shape[0]:  # grow geometrically: appends stay amortised O(1)
                grown = np.zeros((max(16, row * 2), vector.shape[0]), dtype=np.float32)
                grown[:row] = self._matrix[:row]
                self._matrix = grown
                active = np.zeros(grown.shape[0], dtype=bool)
                active[:row] = self._active[:row]
                self._active = active
            self._rows[mid] = row
            self._ids.append(mid)
        self._matrix[row] = vector

    def vector(self, memory_id: str) -> NDArray[np.float32]:
        """The stored vector of a memory's current text (no embedding call)."""
        row: NDArray[np.float32] = self._matrix[self._rows[memory_id]]
        return row

    def closest(self, vector: NDArray[np.float32]) -> Neighbour | None:
        n = len(self._ids)
        if n == 0:
            return None
        scores = self._matrix[:n] @ vector
        scores = np.where(self._active[:n], scores, -np.inf)
        best = int(np.argmax(scores))
        if not np.isfinite(scores[best]):
            return None
        mid = self._ids[best]
        return Neighbour(mid, float(scores[best]), self.states[mid].text)

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
                sim = float(self._matrix[self._rows[mid]] @ vector)
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
