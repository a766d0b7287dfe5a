"""memstream as a user installs it: a wheel built from this checkout, installed into a fresh
virtual environment, used from an application directory outside the checkout.

The wheel must hold one top-level package (``memstream``): an application's own ``schemas``
folder (the README's ``memstream schemas export --out schemas/json`` makes one) must not
shadow anything of ours. The README's Python snippet runs as written against a worker.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from memstream.infra.topics import ensure_topics
from tests.harness import ROOT, WorkerProcess, settings_env

pytestmark = pytest.mark.integration


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, (
        f"{' '.join(cmd)}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    )
    return out.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the wheel, the fresh environment's bin folder) -- no network: the wheel is built
    without isolation and its dependencies come from this environment's site-packages."""
    work = tmp_path_factory.mktemp("installed")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(work / "dist"),
            str(ROOT),
        ],
        cwd=work,
    )
    wheel = next((work / "dist").glob("memstream-*.whl"))
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=work)
    py = venv / "bin" / "python"
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work)
    # the dependencies: this environment's packages, after the fresh one's own
    Path(site.strip(), "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], work)
    yield wheel, venv / "bin"


def test_the_wheel_holds_one_top_level_package(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"memstream"}, tops
    assert "memstream/core/gate.py" in names and "memstream/py.typed" in names
    assert "memstream/consumers/static/dashboard/index.html" in names  # the dashboard
    assert "memstream/consumers/static/vendor/uplot/LICENSE.txt" in names
    entry = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith("entry_points.txt")))
        .decode()
    )
    assert "memstream = memstream.consumers.cli:main" in entry


def test_readme_snippet_and_cli_from_an_app_directory(
    installed: tuple[Path, Path], settings: Settings, tmp_path: Path
) -> None:
    _, bin_dir = installed
    # a worker of its own: the snippet writes to "acme", which other tests use too
    own = settings.with_(topic_prefix="msreadme", data_dir=str(tmp_path / "data"))
    asyncio.run(ensure_topics(own.bootstrap(), own.topic_prefix, own.partitions))
    worker = WorkerProcess(own, tmp_path / "w", dream_every_hours="0").start()
    try:
        _snippet_and_cli(bin_dir, own, tmp_path / "app")
    finally:
        worker.stop()


def _snippet_and_cli(bin_dir: Path, settings: Settings, app: Path) -> None:
    app.mkdir()
    env = settings_env(settings)
    env.pop("PYTHONPATH")  # nothing of the checkout: only what the wheel installed
    # the README's export makes ./schemas: it used to shadow memstream's own `schemas`
    _run([str(bin_dir / "memstream"), "schemas", "export", "--out", "schemas/json"], app, env)
    assert any((app / "schemas" / "json").glob("*.json"))
    (app / "core").mkdir()  # and an application folder named like another of ours
    (app / "core" / "__init__.py").write_text("raise ImportError('the app, not memstream')\n")

    readme = (ROOT / "README.md").read_text()
    snippet = re.search(r"From Python:\n\n```python\n(.*?)```", readme, re.S)
    assert snippet, "the README's Python snippet"
    (app / "snippet.py").write_text(
        snippet.group(1) + "\nimport memstream\nprint('FROM', memstream.__file__)\n"
    )
    out = _run([str(bin_dir / "python"), "snippet.py"], app, env)
    assert f"{bin_dir.parent}/lib" in out, out  # the installed copy, not the checkout

    # what the snippet wrote is extracted and recallable, through the installed CLI too
    deadline = time.monotonic() + 60
    with Memory(settings=settings) as mem:
        while not any("Lisbon" in r["memory"] for r in mem.get_all(user_id="acme")["results"]):
            assert time.monotonic() < deadline, "the snippet's memory never arrived"
            time.sleep(0.5)
    recall = _run(
        [str(bin_dir / "memstream"), "recall", "where do I live?", "--namespace", "acme"], app, env
    )
    assert "Lisbon" in recall, recall
