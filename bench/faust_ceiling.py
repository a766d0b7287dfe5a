"""``python -m bench.faust_ceiling BOOTSTRAP TOPIC N OUT``: faust's consume-only ceiling.

A faust agent that only counts (batched with take_events, like the write path) and
writes the wall time of its first and N-th event to OUT.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time

import faust
import orjson
from faust.worker import Worker


def main() -> None:
    bootstrap, topic_name, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    app = faust.App(
        "bench-ceiling",
        broker=f"kafka://{bootstrap}",
        store="memory://",
        datadir=tempfile.mkdtemp(),
        web_enabled=False,
        topic_allow_declare=False,
        topic_disable_leader=True,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=6,
        broker_heartbeat_interval=1,
    )
    topic = app.topic(
        topic_name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw"
    )
    seen = {"n": 0, "first": 0.0}

    async def count(stream: object) -> None:
        async for events in stream.take_events(500, within=0.05):  # type: ignore[attr-defined]
            if seen["n"] == 0:
                seen["first"] = time.time()
            seen["n"] += len(events)
            if seen["n"] >= n:
                with open(out, "wb") as f:
                    f.write(
                        orjson.dumps({"first": seen["first"], "last": time.time(), "n": seen["n"]})
                    )

    app.agent(topic, name="count", concurrency=1)(count)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    Worker(app, loop=loop, loglevel="error", quiet=True).execute_from_commandline()


if __name__ == "__main__":
    main()
