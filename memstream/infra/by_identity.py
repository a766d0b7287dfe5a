"""Values computed once per object, for objects that come back unchanged: the payloads a
store keeps between searches, the vectors recall caches by text.

Kept by the object's identity (hashing a payload or an array would cost what computing
does), with the object held beside its value so its id cannot be reused while kept.
Bounded: emptied when full. Used from several threads: a lost entry is computed again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ByIdentity(Generic[K, V]):
    def __init__(self, compute: Callable[[K], V], size: int) -> None:
        self.compute = compute
        self.size = size
        self._kept: dict[int, tuple[K, V]] = {}

    def __call__(self, obj: K) -> V:
        kept = self._kept.get(id(obj))
        if kept is not None and kept[0] is obj:
            return kept[1]
        value = self.compute(obj)
        if len(self._kept) >= self.size:
            self._kept.clear()
        self._kept[id(obj)] = (obj, value)
        return value

    def clear(self) -> None:
        self._kept.clear()
