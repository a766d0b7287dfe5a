"""`make screenshots`: every dashboard page of a seeded worker, as PNG files in
``screenshots/`` (not committed), taken by the same headless Chromium the tests drive.

    python -m tests.screenshots [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from memstream.infra.broker import EmbeddedBroker
from memstream.infra.settings import Settings
from tests.browser import Browser, chromium
from tests.dashboard_seed import seed

PAGES = ("overview", "memories", "learning", "gaps", "workflows", "evolution")


async def shoot(url: str, target: str, out: Path, profile: Path) -> list[Path]:
    written: list[Path] = []
    async with Browser(profile, width=1280, height=1100) as browser:
        page = await browser.page()
        for name in (*PAGES, f"memory/{target}"):
            state = await page.goto(f"{url}?key=root&namespace=dash-a#{name}")
            await asyncio.sleep(0.3)  # the charts' last paint
            path = out / f"{name.split('/')[0]}.png"
            await page.screenshot(path)
            written.append(path)
            errors = page.errors()
            print(f"{path}: {state}{' ' + str(errors) if errors else ''}")
        # what a key scoped to dash-a sees when it asks for dash-b
        await page.goto(f"{url}?key=ka&namespace=dash-b#memories")
        path = out / "scoped-key-refused.png"
        await page.screenshot(path)
        written.append(path)
        print(f"{path}: refused as expected")
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="screenshots")
    args = parser.parse_args()
    if chromium() is None:
        print("no Chromium on PATH: `make browser` installs Debian's chromium", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memstream-shots-") as tmp:
        root = Path(tmp)
        broker = EmbeddedBroker(log_path=root / "broker.log").start()
        worker = None
        try:
            settings = Settings(
                kafka_bootstrap=broker.bootstrap,
                data_dir=str(root / "data"),
                partitions=4,
                buffer_idle_seconds=1.0,
            )
            worker, url, target = seed(settings, root)
            asyncio.run(shoot(url, target, out, root / "profile"))
        finally:
            if worker is not None:
                worker.stop()
            broker.stop()
    print(f"screenshots in {out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
