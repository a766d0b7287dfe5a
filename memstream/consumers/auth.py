"""Per-namespace API keys for the HTTP API and the Kafka recall responder.

``MEMSTREAM_API_KEYS="k1=acme|globex,k2=initech,admin=*"``: each key names the namespaces
it may read and write; ``*`` is every namespace (and the admin routes: SQL, digests).
With no keys configured the API is open, which suits the embedded single-user setup only.
Over Kafka a ``RecallRequested`` carries its key in the ``memstream-token`` record header.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ALL = "*"


class AuthError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True, slots=True)
class Grant:
    namespaces: frozenset[str]

    @property
    def admin(self) -> bool:
        return ALL in self.namespaces

    def allows(self, namespace: str) -> bool:
        return self.admin or namespace in self.namespaces


OPEN = Grant(frozenset({ALL}))


def parse_keys(spec: str | None) -> dict[str, Grant]:
    keys: dict[str, Grant] = {}
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, namespaces = item.partition("=")
        if not sep or not key or not namespaces:
            raise ValueError(f"API key entry {item!r} must look like KEY=ns1|ns2 (or KEY=*)")
        keys[key.strip()] = Grant(frozenset(n.strip() for n in namespaces.split("|") if n.strip()))
    return keys


def grant_for(keys: dict[str, Grant], presented: str | None) -> Grant:
    if not keys:
        return OPEN
    if not presented:
        raise AuthError(401, "unauthorized", "send an API key: Authorization: Bearer <key>")
    for key, grant in keys.items():
        if hmac.compare_digest(key.encode(), presented.encode()):  # constant time
            return grant
    raise AuthError(401, "unauthorized", "unknown API key")


def check(grant: Grant, namespace: str) -> None:
    if not grant.allows(namespace):
        raise AuthError(403, "forbidden", f"this key may not access namespace {namespace!r}")


#: the Kafka record header that carries a RecallRequested's key
TOKEN_HEADER = "memstream-token"


def header(headers: Any, name: str) -> str | None:
    """One header of a Kafka record (pairs of name and bytes, or a mapping), as text."""
    pairs = headers.items() if isinstance(headers, Mapping) else (headers or ())
    for key, value in pairs:
        if key == name and value is not None:
            raw = value if isinstance(value, bytes) else str(value).encode()
            return raw.decode("utf-8", errors="replace")
    return None


def bus_denial(keys: dict[str, Grant], token: str | None, namespace: str) -> str | None:
    """Why a request over the bus for ``namespace`` is refused (None: it is allowed)."""
    if not keys:
        return None
    if not token:
        return (
            f"unauthorized: this worker answers namespace {namespace!r} only to a request "
            f"with a key for it in the {TOKEN_HEADER} header"
        )
    try:
        check(grant_for(keys, token), namespace)
    except AuthError as e:
        return f"{e.code}: {e.message}"
    return None
