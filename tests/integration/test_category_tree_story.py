"""The category tree through the broker, defaults and the rule extractor, on a worker with
per-namespace keys: turns become memories placed by category and entity; `memstream tree
show` shows them; a node added from the CLI and one removed over HTTP are events on the
memory log with their cause; recall explains each result's tree path and the `tree` filter
narrows what it returns; the context block carries the tree; a key for another namespace
can neither see nor change the tree; `memstream verify` finds the rebuild identical."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from memstream.consumers.client import Memory, MemstreamError
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.harness import WorkerProcess
from tests.integration.test_cli_api_key import cli

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 3, 9, tzinfo=UTC)
TURNS = [
    "We decided to build the Budget Tracker with Postgres and FastAPI.",
    "The Budget Tracker launch is planned for the first week of July.",
    "I live in Valencia.",
    "My sister Lucia works as a nurse in Madrid.",
]


def eventually(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 45.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value):
            return value
        assert time.monotonic() < deadline, value
        time.sleep(0.3)


def test_category_tree_through_every_door(settings: Settings, tmp_path: Path) -> None:
    ns, other = f"tree-{random.randrange(10**8)}", f"other-{random.randrange(10**8)}"
    own = settings.with_(topic_prefix="mstree", data_dir=str(tmp_path / "data"))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    keys = f"ka={ns},kb={other},root=*"
    worker = WorkerProcess(own, tmp_path / "w", api_keys=keys).start()
    try:
        with Memory(settings=own, api_key="ka") as mem, Memory(settings=own, api_key="kb") as eve:
            mem.add(
                [{"role": "user", "content": t, "speaker": "Rosa"} for t in TURNS],
                user_id=ns,
                run_id="s1",
                occurred_at=T0,
            )
            texts = eventually(
                lambda: [r["memory"] for r in mem.get_all(user_id=ns)["results"]],
                lambda ts: (
                    sum("Budget Tracker" in t for t in ts) >= 2 and any("Valencia" in t for t in ts)
                ),
            )
            # every memory has a place: category at the root, entity beneath
            tree = eventually(lambda: mem.tree(namespace=ns), lambda t: t["placed"] >= len(texts))
            paths = {n["path"] for n in tree["nodes"]}
            assert any(p.endswith("/budget-tracker") for p in paths), tree["text"]
            shown = cli(own, "tree", "show", "--namespace", ns, key="ka")
            assert shown.returncode == 0, shown.stderr
            assert "budget-tracker" in shown.stdout and "memories placed" in shown.stdout

            # a node from the CLI: an event with its cause; the project's memories move there
            added = cli(
                own,
                "tree",
                "add",
                "Work/Projects/Budget Tracker",
                "--namespace",
                ns,
                "--at",
                (T0 + timedelta(hours=1)).isoformat(),
                key="ka",
            )
            assert added.returncode == 0, added.stderr
            assert "work/projects/budget-tracker" in added.stdout
            node = "work/projects/budget-tracker"
            tree = eventually(
                lambda: mem.tree(namespace=ns),
                lambda t: any(n["path"] == node and n["count"] >= 2 for n in t["nodes"]),
            )
            assert tree["text"].startswith("- work ("), tree["text"]

            # recall: the tree path explains each result, and the tree filter narrows them
            at = T0 + timedelta(hours=3)  # the evaluation time: the story's, not the clock's
            question = "the Budget Tracker launch and where Rosa lives"
            every = eventually(
                lambda: mem.recall(question, namespace=ns, k=10, filters={"at": at})["results"],
                lambda rs: len(rs) >= 3,
            )
            where = {r["memory_id"]: r["explain"]["tree_path"] for r in every}
            assert all(where.values()), where
            assert {p for p in where.values() if not p.startswith("work/projects")}, where
            narrowed = mem.recall(
                question, namespace=ns, k=10, filters={"tree": "Work/Projects", "at": at}
            )
            kept = {r["memory_id"]: r["explain"]["tree_path"] for r in narrowed["results"]}
            assert kept and all(p == node for p in kept.values()), kept
            assert narrowed["filters"] == {"tree": "work/projects"}
            with pytest.raises(MemstreamError) as unknown:
                mem.recall(question, namespace=ns, filters={"tree": "nowhere", "at": at})
            assert unknown.value.path == "filters.tree" and "nowhere" in unknown.value.message

            # the context call: the tree is part of what the agent always knows
            block = mem.context(namespace=ns, budget=1000)
            assert "## Category tree" in block["text"] and node.split("/")[-1] in block["tree"]
            assert block["tokens"] <= 1000
            # one removed over HTTP (SDK): an automatic node, its memories go to the parent
            valencia = next(p for p in paths if p.endswith("/valencia"))
            mem.tree_remove(valencia, namespace=ns, occurred_at=T0 + timedelta(hours=2))
            eventually(
                lambda: mem.tree(namespace=ns),
                lambda t: valencia not in {n["path"] for n in t["nodes"]},
            )

            # the 60-day rule on event time: a dry report of what it leaves out by then
            later = (T0 + timedelta(days=90)).isoformat()
            pruned = cli(own, "tree", "prune", "--namespace", ns, "--at", later, key="ka")
            assert pruned.returncode == 0, pruned.stderr
            assert "idle for over 60 days" in pruned.stdout and "relationship" in pruned.stdout
            assert mem.tree(namespace=ns)["pruned"] == []  # nothing written: now is unchanged

            # another namespace's key: refused at every door, nothing published
            for call in (
                lambda: eve.tree(namespace=ns),
                lambda: eve.tree_add("hacked", namespace=ns),
                lambda: eve.tree_remove("work", namespace=ns),
            ):
                with pytest.raises(MemstreamError) as info:
                    call()
                assert info.value.status == 403
            refused = cli(own, "tree", "show", "--namespace", ns, key="kb")
            assert refused.returncode == 1 and "Traceback" not in refused.stderr
            assert eve.tree(namespace=other)["nodes"] == []
            with pytest.raises(MemstreamError) as bad:
                mem.tree_add("a/b/c/d/e", namespace=ns)
            assert bad.value.path == "path"

        log = cli(
            own,
            "sql",
            "--format",
            "json",
            "SELECT type, causation_id, payload->>'path' AS path FROM memory_log "
            f"WHERE namespace = '{ns}' AND type LIKE 'TreeNode%' ORDER BY log_offset",
            key="root",
        )
        assert log.returncode == 0, log.stderr
        events = [orjson.loads(line) for line in log.stdout.splitlines() if line.strip()]
        assert [(e["type"], e["path"]) for e in events] == [
            ("TreeNodeAdded", node),
            ("TreeNodeRemoved", valencia),
        ], events
        assert all(e["causation_id"] for e in events)

        verified = cli(own, "verify", key="root")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "difference" not in verified.stdout, verified.stdout
    finally:
        worker.stop()
