"""A partition's namespaces, each unpacked from its snapshot the first time it is asked for.

A snapshot keeps every namespace's memory as a pickle of its own (``streams/snapshots.py``),
so a restart reads the file and checks it, but unpickles no namespace: the one a new turn
belongs to is unpacked when the write path asks for it (a namespace of 10,000 memories in
~0.05 s), the others when something needs them, or never. A snapshot written again keeps the
packed ones as they were. The log's tail after the snapshot waits with the partition state
(``PartitionState``) for the namespace it belongs to, and is applied in log order when that
namespace is unpacked, before anything reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping

from memstream.core.embedding import Embedder
from memstream.core.namespace_memory import NamespaceMemory
from memstream.streams.snapshots import unpack_namespace


class Namespaces(MutableMapping[str, NamespaceMemory]):
    """namespace -> its memory; ``in`` and iteration see the packed ones too."""

    __slots__ = ("_embedder", "_loaded", "_on_load", "_packed")

    def __init__(self) -> None:
        self._loaded: dict[str, NamespaceMemory] = {}
        self._packed: dict[str, bytes] = {}
        self._embedder: Embedder | None = None
        self._on_load: Callable[[str], None] | None = None

    def bind(self, embedder: Embedder, on_load: Callable[[str], None]) -> None:
        """``on_load(ns)`` runs right after a packed namespace is unpacked (its tail)."""
        self._embedder, self._on_load = embedder, on_load

    def pack(self, packed: dict[str, bytes]) -> None:
        """Namespaces from a snapshot, left packed."""
        for ns, blob in packed.items():
            self._loaded.pop(ns, None)
            self._packed[ns] = blob

    def is_packed(self, namespace: str) -> bool:
        return namespace in self._packed

    def packed(self) -> dict[str, bytes]:
        return dict(self._packed)

    def loaded(self) -> dict[str, NamespaceMemory]:
        return dict(self._loaded)

    def __getitem__(self, namespace: str) -> NamespaceMemory:
        memory = self._loaded.get(namespace)
        if memory is not None:
            return memory
        blob = self._packed[namespace]  # KeyError: a namespace never seen
        if self._embedder is None:
            raise RuntimeError("Namespaces.bind was not called")
        memory = unpack_namespace(namespace, blob, self._embedder)
        del self._packed[namespace]
        self._loaded[namespace] = memory
        if self._on_load is not None:
            self._on_load(namespace)
        return memory

    def __setitem__(self, namespace: str, memory: NamespaceMemory) -> None:
        self._packed.pop(namespace, None)
        self._loaded[namespace] = memory

    def __delitem__(self, namespace: str) -> None:
        if self._packed.pop(namespace, None) is None:
            del self._loaded[namespace]
        else:
            self._loaded.pop(namespace, None)

    def __contains__(self, namespace: object) -> bool:
        return namespace in self._loaded or namespace in self._packed

    def __iter__(self) -> Iterator[str]:
        # a copy: reading a packed namespace while iterating unpacks it
        return iter([*self._loaded, *self._packed])

    def __len__(self) -> int:
        return len(self._loaded) + len(self._packed)

    def __repr__(self) -> str:
        return f"Namespaces({len(self._loaded)} loaded, {len(self._packed)} packed)"
