"""A real headless browser for the dashboard tests and `make screenshots`: Debian's
Chromium driven through the Chrome DevTools Protocol over a websocket (aiohttp), with no
driver package in between. It records what a person would see in the console: uncaught
exceptions, console.error calls and the browser's own error log (failed loads)."""

from __future__ import annotations

import asyncio
import base64
import itertools
import shutil
import time
from pathlib import Path
from typing import Any

import aiohttp

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium() -> str | None:
    return next((p for name in CANDIDATES if (p := shutil.which(name))), None)


class Browser:
    def __init__(self, profile: Path, width: int = 1280, height: int = 1000) -> None:
        self.profile, self.size = profile, (width, height)
        self.proc: asyncio.subprocess.Process | None = None
        self.http: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Browser:
        exe = chromium()
        if exe is None:
            raise RuntimeError("no Chromium on PATH: `make browser` installs Debian's chromium")
        self.proc = await asyncio.create_subprocess_exec(
            exe,
            "--headless=new",
            "--no-sandbox",  # root in a container
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--remote-debugging-port=0",
            f"--user-data-dir={self.profile}",
            f"--window-size={self.size[0]},{self.size[1]}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        url = await self._devtools_url()
        self.http = aiohttp.ClientSession()
        self.ws = await self.http.ws_connect(url, max_msg_size=0)
        self.reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.reader:
            self.reader.cancel()
        if self.ws:
            await self.ws.close()
        if self.http:
            await self.http.close()
        if self.proc and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()

    async def _devtools_url(self) -> str:
        assert self.proc and self.proc.stderr
        seen: list[str] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = await asyncio.wait_for(self.proc.stderr.readline(), 30)
            if not line:
                break
            text = line.decode(errors="replace").strip()
            seen.append(text)
            if text.startswith("DevTools listening on "):
                return text.removeprefix("DevTools listening on ")
        raise RuntimeError("Chromium did not start: " + " | ".join(seen[-5:]))

    async def _read(self) -> None:
        assert self.ws
        async for msg in self.ws:
            data = msg.json()
            if "id" in data and data["id"] in self.waiting:
                self.waiting.pop(data["id"]).set_result(data)
            elif "method" in data:
                self.events.append(data)

    async def send(self, method: str, session: str | None = None, **params: Any) -> Any:
        assert self.ws
        call_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[call_id] = future
        message: dict[str, Any] = {"id": call_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        await self.ws.send_json(message)
        answer = await asyncio.wait_for(future, 60)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    async def page(self) -> Page:
        target = await self.send("Target.createTarget", url="about:blank")
        attached = await self.send(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        page = Page(self, attached["sessionId"])
        for domain in ("Page", "Runtime", "Log"):
            await page.send(f"{domain}.enable")
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            width=self.size[0],
            height=self.size[1],
            deviceScaleFactor=1,
            mobile=False,
        )
        return page


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session
        self.mark = 0  # events before this index belong to an earlier load

    async def send(self, method: str, **params: Any) -> Any:
        return await self.browser.send(method, self.session, **params)

    async def goto(self, url: str, timeout: float = 30) -> str:
        """Load ``url`` and wait until the dashboard says the page is drawn ("1") or failed
        ("error"); returns that state."""
        # a change of the #fragment alone is no new document: forget the last page's state
        await self.eval("document.body && (document.body.dataset.ready = 'loading')")
        self.mark = len(self.browser.events)
        await self.send("Page.navigate", url=url)
        return await self.ready(timeout)

    async def ready(self, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            state = await self.eval("document.body ? document.body.dataset.ready || '' : ''")
            if state in ("1", "error"):
                return str(state)
            if time.monotonic() > deadline:
                raise TimeoutError(f"page not drawn in {timeout:.0f}s: {self.errors()}")
            await asyncio.sleep(0.1)

    async def eval(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """What the console showed as errors since the last load."""
        out: list[str] = []
        for event in self.browser.events[self.mark :]:
            if event.get("sessionId") != self.session:
                continue
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                out.append(str(details.get("exception", {}).get("description") or details))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                out.append(
                    " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                )
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                out.append(f"{entry.get('text')} {entry.get('url', '')}".strip())
        return out

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))
