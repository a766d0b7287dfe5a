"""Values of any DuckDB type as JSON: what orjson cannot write is made into what it can.

HUGEINT and UHUGEINT past 64 bits and DECIMAL become strings (exact; a JSON reader's
float would round them), BLOB the text DuckDB prints for it (``\\xAA`` for bytes that are
not printable ASCII), INTERVAL its ``timedelta`` text; lists, structs and maps are walked.
UUIDs, dates and times orjson writes itself.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

_INT64 = (-(2**63), 2**63 - 1)


def blob_text(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in data)


def jsonable(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return value if _INT64[0] <= value <= _INT64[1] else str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return blob_text(bytes(value))
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {
            k if isinstance(k, str) else str(jsonable(k)): jsonable(v) for k, v in value.items()
        }
    return value
