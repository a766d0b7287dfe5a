"""Every ``RetrievalStore`` adapter runs the same contract suite.

The fixtures here hand out *factories*: ``open_store(spec)`` opens (or reopens, after
``close()``) the adapter's store for ``spec`` on the test's own directory, so tests can
check persistence by closing and opening again. The test module chooses the specs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memstream.projections.retrieval import (
    CollectionSpec,
    EdgeRetrievalStore,
    RetrievalStore,
    ServerRetrievalStore,
)

ADAPTERS = ("edge", "server-local")

OpenStore = Callable[[CollectionSpec], RetrievalStore]


def make_store(
    adapter: str, root: Path, spec: CollectionSpec, *, persistent: bool = True
) -> RetrievalStore:
    if adapter == "edge":
        return EdgeRetrievalStore(root / "edge", spec, max_search_threads=1)
    if adapter == "server-local":
        # Local mode is the stand-in for a server: same client API, same models.
        # On disk it pickles every point into SQLite; in memory skips that where
        # persistence is not under test.
        return ServerRetrievalStore(spec, path=root / "qdrant-local" if persistent else ":memory:")
    raise ValueError(adapter)


def _factory(
    adapter: str, root: Path, *, persistent: bool = True
) -> tuple[OpenStore, list[RetrievalStore]]:
    opened: list[RetrievalStore] = []

    def open_(spec: CollectionSpec) -> RetrievalStore:
        store = make_store(adapter, root, spec, persistent=persistent)
        store.ensure_collection()
        opened.append(store)
        return store

    return open_, opened


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(adapter: str, tmp_path: Path) -> Iterator[OpenStore]:
    open_, opened = _factory(adapter, tmp_path)
    yield open_
    for store in opened:
        store.close()


@pytest.fixture(scope="module", params=ADAPTERS)
def module_open_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OpenStore]:
    """Like ``open_store`` but shared by a module, for data sets worth loading once."""
    open_, opened = _factory(
        str(request.param), tmp_path_factory.mktemp("module-store"), persistent=False
    )
    yield open_
    for store in opened:
        store.close()


def sibling(store: RetrievalStore, spec: CollectionSpec) -> RetrievalStore:
    """Another collection on the same storage (same directory, same client)."""
    if isinstance(store, EdgeRetrievalStore):
        return EdgeRetrievalStore(store.path.parent, spec, max_search_threads=1)
    if isinstance(store, ServerRetrievalStore):
        # Local mode locks its directory: a second client could not open it.
        return ServerRetrievalStore(spec, client=store.client)
    raise TypeError(type(store))


@pytest.fixture
def open_sibling() -> Iterator[Callable[[RetrievalStore, CollectionSpec], RetrievalStore]]:
    opened: list[RetrievalStore] = []

    def open_(store: RetrievalStore, spec: CollectionSpec) -> RetrievalStore:
        other = sibling(store, spec)
        other.ensure_collection()
        opened.append(other)
        return other

    yield open_
    for other in opened:
        other.close()
