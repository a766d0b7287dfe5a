"""Shared images: a turn that shares a photo gives a memory of what the photo shows and what
the speaker said with it, not the caption alone.

A caption arrives in the turn's metadata (``image_caption``, or ``blip_caption`` and
``caption`` as public chat datasets name it) or as a marker in the text ("[image: a
sunset over the lake]", "[shares a photo of a sunset]"), which is taken out of the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

CAPTION_KEYS = ("image_caption", "blip_caption", "caption")
MAX_CAPTION_CHARS = 200
# Filters that say nothing about a turn that carries a photo ("Look!" with a picture).
QUIET_FILTERS = frozenset({"trivial", "too_short", "emoji_heavy", "empty"})

_MARKER = re.compile(
    r"\[\s*(?:(?:image|photo|picture|img|pic)\s*(?::|of)\s*"
    r"|(?:shares?|shared|sends?|sent|posts?|posted)\s+(?:a|an)\s+"
    r"(?:photo|picture|image|pic|snapshot)\s+(?:of\s+)?)(?P<caption>[^\]]{1,300})\]",
    re.I,
)
_LEAD = re.compile(
    r"^(?:(?:a|an|the)\s+)?(?:photo|picture|image|pic|photograph|snapshot|close-up|closeup)"
    r"\s+(?:of|showing|with)\s+",
    re.I,
)


def caption_of(metadata: Mapping[str, Any] | None, text: str = "") -> str | None:
    """The caption of the image a turn shares, if it shares one: from the metadata, else
    from a marker in the text; cleaned and cut to ``MAX_CAPTION_CHARS``."""
    found: object = None
    if metadata:
        found = next((metadata[k] for k in CAPTION_KEYS if isinstance(metadata.get(k), str)), None)
    if not isinstance(found, str) or not found.strip():
        m = _MARKER.search(text)
        found = m.group("caption") if m else None
    if not isinstance(found, str):
        return None
    caption = " ".join(found.split())[:MAX_CAPTION_CHARS].strip(" .")
    return caption or None


def without_markers(text: str) -> str:
    """The text with image markers taken out (the caption is read separately)."""
    return _MARKER.sub(" ", text).strip() if "[" in text else text


def shown(caption: str) -> str:
    """What a photo shows, as a noun phrase: "a photo of a dog on a couch" -> "a dog on a
    couch"."""
    return _LEAD.sub("", caption.strip()) or caption.strip()


def with_caption(text: str, caption: str | None) -> str:
    """A turn's words and, when it shares a photo, what the photo shows: for the lexical
    index and the scanner."""
    return text if not caption else f"{text} (a photo of {shown(caption)})".strip()
