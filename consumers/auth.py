"""Per-namespace API keys for the HTTP API.

``MEMSTREAM_API_KEYS="k1=acme|globex,k2=initech,admin=*"``: each key names the namespaces
it may read and write; ``*`` is every namespace (and the admin routes: SQL, digests).
With no keys configured the API is open, which suits the embedded single-user setup only.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

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
