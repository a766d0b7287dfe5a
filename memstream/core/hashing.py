"""Content hashing for deduplication: the same claim, however it is cased or punctuated,
hashes the same within a namespace (and differently across namespaces)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_PUNCT_RE = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE_RE = re.compile(r"\s+", re.UNICODE)


def normalize(text: str) -> str:
    """Case-folded, NFKC, punctuation stripped, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    no_punct = _PUNCT_RE.sub(" ", folded).replace("_", " ")
    return _SPACE_RE.sub(" ", no_punct).strip()


def content_hash(namespace: str, text: str) -> str:
    """SHA-256 hex of the normalized text, salted with the namespace (tenant isolation)."""
    return hashlib.sha256(f"{namespace}\x1f{normalize(text)}".encode()).hexdigest()
