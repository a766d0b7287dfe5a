"""Helpers the ``memstream`` commands share: settings, the worker's API client, tables."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any, TextIO

from memstream.consumers.worker_api import auth_headers, refusal
from memstream.infra.settings import Settings, load
from memstream.schemas._fields import parse_datetime
from memstream.schemas.errors import EventValidationError


def _settings(args: argparse.Namespace) -> Settings:
    settings = load(getattr(args, "config", None))
    key = getattr(args, "api_key", None)  # --api-key wins over MEMSTREAM_API_KEY
    return settings.with_(api_key=key) if key else settings


def _api_key(settings: Settings) -> str | None:
    """The key the CLI sends: its own (see consumers/worker_api.py), never the server's list."""
    return settings.api_key


def _parse_time(value: str, flag: str = "time") -> datetime:
    """An ISO 8601 time in UTC (no offset means UTC); EventValidationError naming ``flag``."""
    return parse_datetime(value, flag, naive_is_utc=True)


def iso_time(value: str) -> str:
    """An argparse type for the commands' time flags: ``value`` unchanged when it is a
    time, else argparse's one-line usage error naming the flag (it was a traceback)."""
    try:
        _parse_time(value)
    except EventValidationError as e:
        raise argparse.ArgumentTypeError(e.message) from None
    return value


def _print_table(columns: list[str], rows: list[tuple[Any, ...]], out: TextIO) -> None:
    cells = [[("" if v is None else str(v)) for v in r] for r in rows]
    widths = [min(60, max([len(c), *(len(r[i]) for r in cells)])) for i, c in enumerate(columns)]
    out.write("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip() + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for r in cells:
        out.write("  ".join(v[:w].ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() + "\n")
    out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")


def _running_worker(
    args: argparse.Namespace, command: str, why: str
) -> tuple[Settings, dict[str, Any]] | int:
    """The settings and the running worker's record, or exit code 2 after saying none runs."""
    from memstream.streams.status import running_worker

    settings = _settings(args)
    worker = running_worker(settings.data_dir)
    if worker is None:
        print(f"memstream {command}: no running worker{why}", file=sys.stderr)
        return 2
    return settings, worker


def _worker_client(args: argparse.Namespace, command: str) -> Any:
    """An httpx client for the running worker's API, or an exit code after saying why."""
    import httpx

    found = _running_worker(args, command, " (start `memstream worker`)")
    if isinstance(found, int):
        return found
    settings, worker = found
    key = _api_key(settings)
    # a refused key is one line for every command (see main), whatever the route
    return httpx.Client(
        base_url=worker["api_url"],
        timeout=60,
        headers=auth_headers(key),
        event_hooks={"response": [lambda r: _refused(r, key)]},
    )


def _refused(response: Any, key: str | None) -> None:
    if response.status_code in (401, 403):
        response.read()  # a hook sees the response before its body is read
    if (refused := refusal(response, key)) is not None:
        raise refused


def _said_no(command: str, answer: dict[str, Any], raw: str) -> int:
    """The worker's refusal in one line, naming the field it is about; exit 1."""
    error = answer.get("error", {})
    where = f" ({error['path']})" if error.get("path") else ""
    print(f"memstream {command}: {error.get('message', raw)}{where}", file=sys.stderr)
    return 1


def _rows(
    settings: Settings, sql: str, params: list[Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    from memstream.consumers.analytics import open_analytics

    db = open_analytics(settings)
    try:
        return db.sql(sql, params)
    finally:
        db.close()


def _worker_admin(
    args: argparse.Namespace, command: str, payload: dict[str, Any], why: str = ""
) -> dict[str, Any] | int:
    """POST an admin call to the running worker's /v1/<command>: its JSON body, or an exit
    code after printing what went wrong."""
    import httpx

    found = _running_worker(args, command, why)
    if isinstance(found, int):
        return found
    settings, worker = found
    key = _api_key(settings)
    response = httpx.post(
        f"{worker['api_url']}/v1/{command}", timeout=600, headers=auth_headers(key), json=payload
    )
    if (refused := refusal(response, key)) is not None:
        raise refused
    body: dict[str, Any] = response.json()
    if response.status_code != 200:
        print(f"memstream {command}: {body.get('error', {}).get('message')}", file=sys.stderr)
        return 1
    return body
