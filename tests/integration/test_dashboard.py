"""The web dashboard in a real headless browser (Debian's Chromium over the DevTools
protocol, tests/browser.py), against a worker with API keys seeded through the broker:
turns, recalls, feedback and workflow observations in two namespaces.

Each page loads with no console error and draws its plots with data; a memory's timeline
shows its decisions with their causes; a key scoped to one namespace is offered only that
namespace and is refused another's (403, said on the page). The worker prints the
dashboard's address."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstream.infra.settings import Settings
from tests.browser import Browser, chromium
from tests.dashboard_seed import seed

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        chromium() is None, reason="no Chromium on PATH: `make browser` installs it"
    ),
]


@pytest.fixture(scope="module")
def seeded(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """(the dashboard's URL, a memory id of dash-a)"""
    tmp = tmp_path_factory.mktemp("dash")
    worker, url, target = seed(settings, tmp)
    try:
        yield url, target
    finally:
        worker.stop()


PAGES = {  # page -> charts it must draw with data
    "overview": 1,
    "memories": 3,
    "learning": 2,
    "gaps": 0,
    "workflows": 0,
    "evolution": 0,
}


async def test_every_page_draws_without_console_errors(
    seeded: tuple[str, str], tmp_path: Path
) -> None:
    url, target = seeded
    async with Browser(tmp_path / "profile") as browser:
        page = await browser.page()
        for name, charts in PAGES.items():
            state = await page.goto(f"{url}?key=root&namespace=dash-a#{name}")
            text = await page.eval("document.getElementById('page').innerText")
            assert state == "1", (name, text, page.errors())
            assert page.errors() == [], (name, page.errors())
            drawn = int(await page.eval("document.body.dataset.plots") or 0)
            canvases = await page.eval("document.querySelectorAll('canvas').length")
            assert drawn >= charts and canvases >= charts, (name, drawn, canvases)
        # the overview counts this namespace's events
        await page.goto(f"{url}?key=root&namespace=dash-a#overview")
        assert "turns events" in await page.eval("document.body.innerText")
        # workflow health shows the failures as evidence
        await page.goto(f"{url}?key=root&namespace=dash-a#workflows")
        assert "flaky check" in await page.eval("document.body.innerText")
        # one memory's timeline: created, then each Q move, with what caused it
        state = await page.goto(f"{url}?key=root&namespace=dash-a#memory/{target}")
        body = await page.eval("document.body.innerText")
        assert state == "1" and page.errors() == [], (body, page.errors())
        assert "MemoryCreated" in body and body.count("QValueUpdated") >= 3, body
        assert int(await page.eval("document.body.dataset.plots")) == 1


async def test_a_scoped_key_sees_only_its_namespace(
    seeded: tuple[str, str], tmp_path: Path
) -> None:
    url, _ = seeded
    async with Browser(tmp_path / "profile") as browser:
        page = await browser.page()
        assert await page.goto(f"{url}?key=ka#memories") == "1", page.errors()
        offered = await page.eval(
            "[...document.querySelectorAll('#namespace option')].map(o => o.value)"
        )
        assert offered == ["dash-a"], offered
        body = await page.eval("document.body.innerText")
        assert "Helix" in body and "Bluefin" not in body
        # naming the other namespace is refused, and the page says so
        assert await page.goto(f"{url}?key=ka&namespace=dash-b#memories") == "error"
        body = await page.eval("document.body.innerText")
        assert "403 forbidden" in body and "Bluefin" not in body, body
        # without a key nothing is shown at all
        assert await page.goto(f"{url}#overview") == "error"
        assert "401" in await page.eval("document.body.innerText")
