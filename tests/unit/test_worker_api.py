"""What the CLI says when the worker refuses a call: one line that says what to do."""

from __future__ import annotations

import httpx
import pytest

from memstream.consumers.worker_api import NEEDS_KEY, WorkerApiError, checked, refusal


def answer(status: int, message: str = "m") -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": "x", "message": message}})


def test_no_key_unknown_key_and_a_key_too_narrow() -> None:
    assert str(refusal(answer(401), None)) == NEEDS_KEY
    unknown = str(refusal(answer(401, "unknown API key"), "k"))
    assert "did not accept" in unknown and "unknown API key" in unknown
    narrow = str(refusal(answer(403, "admin routes need a key for every namespace (*)"), "k"))
    assert narrow.startswith("the API key may not do this") and "admin" in narrow
    assert refusal(answer(200), None) is None and refusal(answer(400), "k") is None
    for error in (refusal(answer(401), None), refusal(answer(403, "a\nb"), "k")):
        assert error is not None and "\n" not in str(error)


def test_checked_gives_the_body_or_one_line() -> None:
    assert checked(httpx.Response(200, json={"ok": 1}), None) == {"ok": 1}
    with pytest.raises(WorkerApiError, match="answered 503: busy"):
        checked(answer(503, "busy"), None)
    with pytest.raises(WorkerApiError, match="answered 500"):
        checked(httpx.Response(500, text="<html>oops</html>"), None)
