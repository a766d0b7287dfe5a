"""The CLI's calls to the running worker's API: the key it sends, and one line when refused.

The key is the client's own (``--api-key`` or ``MEMSTREAM_API_KEY``, setting ``api_key``),
never one taken from the server's list (``MEMSTREAM_API_KEYS``): that list says what each key
may do, and its first key need not be allowed to do what the command asks.
"""

from __future__ import annotations

from typing import Any

import httpx

NEEDS_KEY = "the worker requires an API key: pass --api-key KEY or set MEMSTREAM_API_KEY"


class WorkerApiError(RuntimeError):
    """The worker refused a call; the message is one line for the user."""


def auth_headers(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _message(response: httpx.Response) -> str:
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    error = body.get("error", {}) if isinstance(body, dict) else {}
    text = str(error.get("message") or response.text[:300]) if isinstance(error, dict) else ""
    return " ".join(text.split())  # one line, whatever the server wrote


def refusal(response: httpx.Response, key: str | None) -> WorkerApiError | None:
    """The error for a 401 or 403 (a missing, unknown or too narrow key), else None."""
    if response.status_code == 401:
        if not key:
            return WorkerApiError(NEEDS_KEY)
        return WorkerApiError(
            "the worker did not accept the API key (--api-key / MEMSTREAM_API_KEY): "
            + _message(response)
        )
    if response.status_code == 403:
        return WorkerApiError(f"the API key may not do this: {_message(response)}")
    return None


def checked(response: httpx.Response, key: str | None) -> Any:
    """The JSON body of a 200, else WorkerApiError with the worker's reason in one line."""
    if (refused := refusal(response, key)) is not None:
        raise refused
    if response.status_code != 200:
        raise WorkerApiError(f"the worker answered {response.status_code}: {_message(response)}")
    return response.json()
