"""Rows of float32 vectors kept by their non-zero entries, and the dense matrices rebuilt
from them for the few owners in use.

A hashing-embedder vector (core/embedding.py) has a few dozen non-zero buckets of 384:
its exact values and their columns take 6 bytes an entry, a sixth of the dense row. The
values are kept bit for bit (a -0.0 counts as an entry), so a rebuilt row or matrix is the
dense one exactly and a product with it gives the same float32 scores.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

import numpy as np
from numpy.typing import NDArray

GROWTH = 1.25  # spare room a growing array takes: amortised O(1) appends, little slack


def _grown(array: NDArray[Any], need: int) -> NDArray[Any]:
    if need <= array.shape[0]:
        return array
    out = np.zeros(max(need, int(array.shape[0] * GROWTH) + 16), dtype=array.dtype)
    out[: array.shape[0]] = array
    return out


class SparseRows:
    """Row ``i`` is the entries ``cols/vals[start[i] : start[i] + length[i]]``. A row set
    again takes new room when it has more entries than before; the room it leaves is
    reclaimed when it is half of what is held (memories rarely change their text)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.count = 0  # rows set so far (rows are numbered from 0 without gaps)
        self.used = 0  # entries held, the rows' and the abandoned ones'
        self.live = 0  # entries the rows hold
        self.start = np.zeros(0, dtype=np.int64)
        self.length = np.zeros(0, dtype=np.int32)
        self.cols = np.zeros(0, dtype=np.uint16 if dim <= 1 << 16 else np.uint32)
        self.vals = np.zeros(0, dtype=np.float32)

    def set(self, row: int, vector: NDArray[np.float32]) -> None:
        # by bit pattern: a -0.0 is kept, so the rebuilt row is the same bytes
        if vector.dtype != np.float32 or not vector.flags.c_contiguous:
            vector = np.ascontiguousarray(vector, dtype=np.float32)
        cols = np.flatnonzero(vector.view(np.uint32))
        vals = vector[cols]
        n = cols.shape[0]
        if row >= self.count:
            if row != self.count:
                raise IndexError(f"row {row} set before row {self.count}")
            if row >= self.start.shape[0]:
                self.start = _grown(self.start, row + 1)
                self.length = _grown(self.length, row + 1)
            self.count = row + 1
        else:
            old = int(self.length[row])
            self.live -= old
            if n <= old:  # fits where the old entries were
                at = int(self.start[row])
                self.cols[at : at + n] = cols
                self.vals[at : at + n] = vals
                self.length[row] = n
                self.live += n
                return
        at = self.used
        if at + n > self.cols.shape[0]:
            self.cols = _grown(self.cols, at + n)
            self.vals = _grown(self.vals, at + n)
        self.cols[at : at + n] = cols
        self.vals[at : at + n] = vals
        self.start[row], self.length[row] = at, n
        self.used = at + n
        self.live += n
        if self.used > 2 * self.live + 1024:
            self._compact()

    def _compact(self) -> None:
        take = self._positions()
        self.cols, self.vals = self.cols[take], self.vals[take]
        lengths = self.length[: self.count].astype(np.int64)
        self.start[: self.count] = np.cumsum(lengths) - lengths
        self.used = int(take.shape[0])

    def _positions(self) -> NDArray[np.int64]:
        """Where each row's entries are held, rows in order."""
        lengths = self.length[: self.count].astype(np.int64)
        total = int(lengths.sum())
        offsets = np.cumsum(lengths) - lengths
        return np.repeat(self.start[: self.count] - offsets, lengths) + np.arange(total)

    def row(self, row: int) -> NDArray[np.float32]:
        if not 0 <= row < self.count:
            raise IndexError(row)
        out = np.zeros(self.dim, dtype=np.float32)
        at, n = int(self.start[row]), int(self.length[row])
        out[self.cols[at : at + n]] = self.vals[at : at + n]
        return out

    def dense(self, rows: int) -> NDArray[np.float32]:
        """A ``(rows, dim)`` matrix (``rows`` >= ``count``), the set rows filled in."""
        out = np.zeros((max(rows, self.count), self.dim), dtype=np.float32)
        take = self._positions()
        owner = np.repeat(np.arange(self.count), self.length[: self.count])
        out[owner, self.cols[take]] = self.vals[take]
        return out

    def __getstate__(self) -> dict[str, Any]:
        # compact and without spare room: what a snapshot holds
        take = self._positions()
        return {
            "dim": self.dim,
            "length": self.length[: self.count].copy(),
            "cols": self.cols[take],
            "vals": self.vals[take],
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.dim = state["dim"]
        self.length = state["length"]
        self.count = int(self.length.shape[0])
        lengths = self.length.astype(np.int64)
        self.start = np.cumsum(lengths) - lengths
        self.cols, self.vals = state["cols"], state["vals"]
        self.used = self.live = int(self.cols.shape[0])


class DenseCache:
    """The dense matrices of the owners used last, within ``budget`` bytes (the one in use
    is kept whatever its size). An owner's matrix follows its row changes while cached."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._held: OrderedDict[int, tuple[weakref.ref[Any], NDArray[np.float32]]] = OrderedDict()

    def _entry(self, owner: object) -> NDArray[np.float32] | None:
        held = self._held.get(id(owner))
        if held is None:
            return None
        if held[0]() is not owner:  # another object that had the same id
            del self._held[id(owner)]
            return None
        return held[1]

    def matrix(self, owner: object, rows: SparseRows) -> NDArray[np.float32]:
        matrix = self._entry(owner)
        if matrix is not None:
            self._held.move_to_end(id(owner))
            return matrix
        matrix = rows.dense(rows.count)
        self._held[id(owner)] = (weakref.ref(owner), matrix)
        self._evict()
        return matrix

    def changed(self, owner: object, row: int, vector: NDArray[np.float32]) -> None:
        matrix = self._entry(owner)
        if matrix is None:
            return
        if row >= matrix.shape[0]:  # grow geometrically, as the rows do
            grown = np.zeros((max(16, row * 2), matrix.shape[1]), dtype=np.float32)
            grown[: matrix.shape[0]] = matrix
            matrix = grown
            self._held[id(owner)] = (self._held[id(owner)][0], matrix)
            self._evict()
        matrix[row] = vector

    def _evict(self) -> None:
        total = sum(m.nbytes for _r, m in self._held.values())
        while total > self.budget and len(self._held) > 1:
            _id, (_ref, dropped) = self._held.popitem(last=False)
            total -= dropped.nbytes

    def clear(self) -> None:
        self._held.clear()


class DenseRows:
    """The same rows as one float32 matrix grown by doubling: for a model embedder's
    vectors, which have no zeros to drop (by entries they would take 1.5x the room)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.count = 0
        self.matrix = np.zeros((0, dim), dtype=np.float32)

    def set(self, row: int, vector: NDArray[np.float32]) -> None:
        if row >= self.count:
            if row != self.count:
                raise IndexError(f"row {row} set before row {self.count}")
            if row >= self.matrix.shape[0]:  # grow geometrically: appends stay amortised O(1)
                grown = np.zeros((max(16, row * 2), self.dim), dtype=np.float32)
                grown[:row] = self.matrix[:row]
                self.matrix = grown
            self.count = row + 1
        self.matrix[row] = vector

    def row(self, row: int) -> NDArray[np.float32]:
        if not 0 <= row < self.count:
            raise IndexError(row)
        out: NDArray[np.float32] = self.matrix[row]
        return out

    def dense(self, rows: int) -> NDArray[np.float32]:
        """The matrix itself (no copy), at least ``rows`` rows."""
        if rows > self.matrix.shape[0]:
            grown = np.zeros((rows, self.dim), dtype=np.float32)
            grown[: self.count] = self.matrix[: self.count]
            self.matrix = grown
        return self.matrix

    def __getstate__(self) -> dict[str, Any]:
        return {"dim": self.dim, "matrix": self.matrix[: self.count].copy()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.dim, self.matrix = state["dim"], state["matrix"]
        self.count = int(self.matrix.shape[0])
