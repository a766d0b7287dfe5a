"""Pytest fixtures for the fakes. A conftest makes them available with
``from tests.fakes.fixtures import fake_responses_server``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from .responses_server import FakeResponsesServer


@pytest_asyncio.fixture
async def fake_responses_server() -> AsyncIterator[FakeResponsesServer]:
    """A fresh fake Responses API per test; point the client at ``.base_url``."""
    async with FakeResponsesServer() as server:
        yield server
