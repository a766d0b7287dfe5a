"""What a projection keeps in memory per namespace (the hot block's rows, the tree's
groups), for the namespaces asked about lately: the least recently used is dropped past a
bound, and is read back from the tables if asked about again."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class KeptSpaces(Generic[T]):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._spaces: OrderedDict[str, T] = OrderedDict()

    def __contains__(self, namespace: object) -> bool:
        return namespace in self._spaces

    def get(self, namespace: str) -> T | None:
        """The namespace's kept state, if kept (not counted as a use)."""
        return self._spaces.get(namespace)

    def loaded(self, namespace: str, build: Callable[[], T]) -> T:
        """The namespace's kept state, built (read from the tables) when not kept."""
        space = self._spaces.get(namespace)
        if space is not None:
            self._spaces.move_to_end(namespace)
            return space
        space = build()
        if len(self._spaces) >= self.limit:
            self._spaces.popitem(last=False)
        self._spaces[namespace] = space
        return space
