"""README's "Using it" command block, run as a new user would: in an empty directory, with no
MEMSTREAM_* settings, the embedded broker and a worker started by the commands themselves,
then every other line of the block in order (optional parts left out, ``a|b`` run as each,
placeholders such as MEMORY_ID filled in). Each must exit 0: a command the README shows
that fails, or a README that names a command or flag that does not exist, fails here.
(`memstream mcp` is a server: tests/integration/test_mcp.py drives it.)
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.harness import ROOT

pytestmark = pytest.mark.integration

MEMSTREAM = str(Path(sys.executable).parent / "memstream")
CONVERSATION = [
    ("u0", "user", "Maya", "Hi! I'm Maya, I lead the data platform team at Acme."),
    ("u1", "user", "Maya", "We upgraded the cluster to Kafka 3.7 last week."),
    ("u2", "assistant", "assistant", "Noted: the cluster runs Kafka 3.7 now."),
    ("u3", "user", "Maya", "I prefer Python for the ingestion scripts."),
]


def readme_commands() -> list[str]:
    """The command lines of README's "Using it" block, each as one shell-free line."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Using it") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "README's Using it section has a command block"
    lines: list[str] = []
    for raw in block.group(1).splitlines():
        line = raw.split("  #")[0].strip()  # the comments sit after two spaces
        if not line.startswith("memstream"):
            continue  # a comment's continuation
        for part in line.split(" ; "):
            part = re.sub(r"\s*\[[^\]]*\]", "", part).strip()  # optional parts left out
            m = re.match(r"memstream (\w+(?:\|\w+)+) (.*)", part)
            if m:  # pin|lock|unpin ID: each of them
                lines.extend(f"memstream {c} {m.group(2)}" for c in m.group(1).split("|"))
            else:
                lines.append(part)
    return lines


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTREAM_")}
    env["MEMSTREAM_BUFFER_IDLE_SECONDS"] = "1"  # only so that extraction follows quickly
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    yield tmp_path, env


def _run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        shlex.split(line), cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def test_every_command_of_the_using_it_block_runs(app: tuple[Path, dict[str, str]]) -> None:
    cwd, env = app
    commands = readme_commands()
    assert commands[:2] == ["memstream broker --create-topics", "memstream worker"], commands
    rows = [
        {
            "namespace": "acme",
            "session_id": "s1",
            "turn_id": tid,
            "role": role,
            "speaker": speaker,
            "text": text,
            "occurred_at": f"2024-05-0{i + 1}T09:00:00Z",
        }
        for i, (tid, role, speaker, text) in enumerate(CONVERSATION)
    ]
    (cwd / "conversations.jsonl").write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    logs = cwd / "logs"
    logs.mkdir()
    background: list[subprocess.Popen[bytes]] = []
    try:
        for line in commands[:2]:  # they run until stopped: in the background, as a user would
            with (logs / f"{line.split()[1]}.log").open("wb") as out:
                background.append(
                    subprocess.Popen(shlex.split(line), cwd=cwd, env=env, stdout=out, stderr=out)
                )
            # each says when it is ready, as a user sees it
            ready = "topics created" if "broker" in line else "memstream worker: ready"
            _await_log(logs / f"{line.split()[1]}.log", ready, background[-1])
        memory_id = ""
        for line in commands[2:]:
            if line.startswith("memstream mcp"):
                continue
            if line.startswith("memstream recall"):
                memory_id = _recall_until_found(line, cwd, env)
                continue
            if line.startswith("memstream replay"):
                line += " --no-switch"  # the worker runs (README: "or --no-switch")
            line = line.replace("MEMORY_ID", memory_id).replace("WORKFLOW", "deploy-review")
            line = line.replace(" NAME", "")
            out = _run(line, cwd, env)
            if line == "memstream recover":  # refused while the worker runs; again at the end
                assert out.returncode == 2 and "stop it first" in out.stderr, out.stderr
                continue
            assert out.returncode == 0, (
                f"`{line}`: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
            )
        assert any((cwd / "schemas" / "json").glob("*.json"))
        # the self-introduction is a memory about Maya, not "Maya is Maya"
        texts = _run('memstream sql "SELECT text FROM memories" --format csv', cwd, env).stdout
        assert "Maya leads the data platform team at Acme" in texts, texts
        assert "Maya is Maya" not in texts, texts
        worker = background.pop()
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(60) == 0
        out = _run("memstream recover", cwd, env)  # with the worker stopped: the log is intact
        assert out.returncode == 0 and "nothing to recover" in out.stdout, out.stdout + out.stderr
    finally:
        for proc in reversed(background):
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _await_log(path: Path, needle: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while needle not in path.read_text(errors="replace"):
        assert proc.poll() is None, path.read_text(errors="replace")
        assert time.monotonic() < deadline, path.read_text(errors="replace")
        time.sleep(0.2)


def _recall_until_found(line: str, cwd: Path, env: dict[str, str]) -> str:
    """The recall line until the ingested turns are extracted; the id of its first result."""
    deadline = time.monotonic() + 90
    while True:
        out = _run(line, cwd, env)
        assert out.returncode == 0, f"`{line}`: {out.stderr}"
        if "3.7" in out.stdout:
            break
        assert time.monotonic() < deadline, f"`{line}` never found the ingested turn: {out.stdout}"
        time.sleep(1.0)
    found = _run(line + " --json", cwd, env)
    assert found.returncode == 0, found.stderr
    return str(orjson.loads(found.stdout)["results"][0]["memory_id"])
