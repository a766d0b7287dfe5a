"""Stored payloads kept in memory after a read, for the store that holds them.

A recall reads the payloads of its candidates after the search (``fetch_payloads``); turning
a stored payload into Python objects is most of that, and the same memories come back
recall after recall. The cache must never answer with a payload older than the store's:
every write drops the points it touches when it starts and again when it ends, and a read
keeps what it fetched only if no write started or ended while it read (``epoch``). Bounded
(least recently kept dropped first). Thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

MAX_PAYLOADS = 10_000  # ~100 recalls of candidates; ~30 MB at ~3 KB a payload


def int_id(point_id: str) -> int:
    """A canonical UUID string's integer (``uuid.UUID(point_id).int``, without the object)."""
    return int(point_id.replace("-", ""), 16)


class PayloadCache:
    def __init__(self, size: int = MAX_PAYLOADS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Mapping[str, Any]] = OrderedDict()
        self._epoch = 0  # writes started or ended
        self._writing = 0  # writes under way

    def get(
        self, keys: Sequence[Hashable]
    ) -> tuple[dict[Any, Mapping[str, Any]], list[Any], int | None]:
        """(kept payloads, keys to read from the store, the epoch to ``keep`` them under;
        None while a write is under way: nothing read now may be kept)."""
        with self._lock:
            found = {k: p for k in keys if (p := self._kept.get(k)) is not None}
            epoch = None if self._writing else self._epoch
        return found, [k for k in keys if k not in found], epoch

    def keep(self, fetched: Mapping[Any, Mapping[str, Any]], epoch: int | None) -> None:
        """Payloads read from the store after ``get`` gave ``epoch``."""
        with self._lock:
            if epoch is None or epoch != self._epoch or self._writing:
                return  # a write may have changed them while they were read
            for key, payload in fetched.items():
                self._kept[key] = payload
                self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)

    @contextmanager
    def writing(self, keys: Iterable[int]) -> Iterator[None]:
        """Around a write of these points (integer ids)."""
        touched = list(keys)
        with self._lock:
            self._epoch += 1
            self._writing += 1
            self._drop(touched)
        try:
            yield
        finally:
            with self._lock:
                self._drop(touched)
                self._writing -= 1
                self._epoch += 1

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._epoch += 1

    def _drop(self, keys: Iterable[int]) -> None:
        for key in keys:
            self._kept.pop(key, None)
