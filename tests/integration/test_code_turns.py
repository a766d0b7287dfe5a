"""A turn that says something around a pasted code block becomes memories of what it says
(defaults, rule extractor, through the broker); a bare paste stays out, recorded as skipped
with its reason in the TurnsExtracted event."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess
from tests.integration.test_write_path import memory_log

pytestmark = pytest.mark.integration

T0 = datetime(2024, 4, 2, 9, tzinfo=UTC)
CODE = "```html\n" + '<div class="card"><img src="p.jpg" alt="project"></div>\n' * 25 + "```"


def test_prose_around_code_is_remembered_and_a_bare_paste_is_not(
    settings: Settings, worker: WorkerProcess
) -> None:
    ns = f"code-{uuid.uuid4().hex[:8]}"
    said = (
        "I'm building the project gallery with 8 cards using Bootstrap 5.3.0 card-deck, "
        "but the modals do not open on mobile. Here's my code:\n" + CODE
    )
    with Memory(settings=settings) as mem:
        mem.add([{"role": "user", "content": said}], user_id=ns, run_id="s1", occurred_at=T0)
        mem.add([{"role": "user", "content": CODE}], user_id=ns, run_id="s2", occurred_at=T0)
        deadline = time.monotonic() + 60
        while not mem.get_all(user_id=ns)["results"]:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        texts = [m["memory"] for m in mem.get_all(user_id=ns)["results"]]
        assert any("gallery with 8 cards" in t for t in texts), texts
        assert not any("<div" in t for t in texts), texts
    while True:  # both turns read (the paste may come in a later buffer)
        log = asyncio.run(memory_log(settings, ns))
        signals = [s for e in log if e.type == "TurnsExtracted" for s in e.payload.turns]
        if len(signals) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    levels = sorted(s.level for s in signals)
    assert len(signals) == 2 and levels[-1] == "SKIP", signals
    assert "code_heavy" in next(s for s in signals if s.level == "SKIP").reasons
